"""What a hook may decide about the message it was shown: pass it on (changed or not), answer
it, fail it, drop it or answer it later. Decisions only; carrying them out is the router's."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional


@dataclass
class Respond:
    """Answer the request here with `result`; the other side never sees it."""

    result: Any


@dataclass
class Fail:
    """Answer the request here with this JSON-RPC error; the other side never sees it."""

    code: int
    message: str
    data: Any = None

    def error_object(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


# A hook run on the result of a forwarded request before the requester sees it: returns the
# result to pass back (None: unchanged), or a Fail.
ResultHook = Callable[[Any], Any]


@dataclass
class Forward:
    """Send the request on, with `params` if given, and run `then` on its result."""

    params: Any = None
    then: Optional[ResultHook] = None


class Drop:
    """Do not pass the notification on."""


DROP = Drop()


@dataclass
class Deferred:
    """A request the hook answers later: returned by `Peers.defer()`, returned by the hook, and
    answered once with `Peers.respond` / `Peers.fail`."""

    side: str
    id: Any
    method: str
    answered: bool = field(default=False)
