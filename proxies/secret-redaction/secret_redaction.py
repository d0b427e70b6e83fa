"""secret-redaction: an ACP proxy that removes configured secrets from everything that reaches
the agent (prompt text and resources, files read through the editor, terminal output) and says
in a `_meta` note what it removed, never the secret itself.

Options: `--pattern REGEX` (Python `re` syntax), `--value TEXT` (a literal secret) and
`--values-file PATH` (one literal secret a line; under the sandbox, grant its directory
read-only), each repeatable. Every module is imported here at the top: inside a component an
import run later, inside a function, fails."""

from __future__ import annotations

import re
import sys
from typing import Any

from acp_proxy_kit import Peers, PromptRequest, Proxy, log, run

# The `_meta` key of the note; its value lists what was removed where, by rule.
META_KEY = "secretRedaction"
REPLACEMENT = "[REDACTED]"


class Rules:
    """The secrets to remove: patterns and literal values, each named in notes by its rule."""

    def __init__(self, patterns: list[str], values: list[str]) -> None:
        self.rules: list[tuple[str, re.Pattern[str]]] = []
        for pattern in patterns:
            self.rules.append((f"pattern {pattern}", re.compile(pattern)))
        for number, value in enumerate(v for v in values if v):
            self.rules.append((f"value {number + 1}", re.compile(re.escape(value))))

    def redact(self, text: str, where: str, notes: list[dict[str, Any]]) -> str:
        for rule, regex in self.rules:
            text, count = regex.subn(REPLACEMENT, text)
            if count:
                notes.append({"where": where, "rule": rule, "count": count})
        return text


def with_note(obj: dict[str, Any], notes: list[dict[str, Any]]) -> dict[str, Any]:
    meta = dict(obj.get("_meta") or {})
    meta[META_KEY] = {"redacted": notes}
    return {**obj, "_meta": meta}


class SecretRedaction(Proxy):
    name = "secret-redaction"

    def __init__(self, rules: Rules) -> None:
        self.rules = rules

    def on_prompt(self, peers: Peers, params: PromptRequest) -> Any:
        notes: list[dict[str, Any]] = []
        blocks = []
        for index, block in enumerate(params.get("prompt") or []):
            block = dict(block)
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                block["text"] = self.rules.redact(block["text"], f"prompt[{index}].text", notes)
            resource = block.get("resource")
            if block.get("type") == "resource" and isinstance(resource, dict) and isinstance(resource.get("text"), str):
                where = f"prompt[{index}].resource.text"
                block["resource"] = {**resource, "text": self.rules.redact(resource["text"], where, notes)}
            blocks.append(block)
        if not notes:
            return None
        log.info(f"session {params.get('sessionId')}: {sum(n['count'] for n in notes)} secret(s) removed from a prompt")
        return with_note({**params, "prompt": blocks}, notes)

    def on_client_result(self, peers: Peers, method: str, params: Any, result: Any) -> Any:
        field = {"fs/read_text_file": "content", "terminal/output": "output"}.get(method)
        if field is None or not isinstance(result, dict) or not isinstance(result.get(field), str):
            return None
        notes: list[dict[str, Any]] = []
        text = self.rules.redact(result[field], f"{method}.{field}", notes)
        if not notes:
            return None
        log.info(f"{sum(n['count'] for n in notes)} secret(s) removed from a {method} result")
        return with_note({**result, field: text}, notes)


def parse_args(argv: list[str]) -> Rules:
    patterns: list[str] = []
    values: list[str] = []
    words = iter(argv)
    for word in words:
        value = next(words, None)
        if value is None:
            raise SystemExit(f"{word} needs a value")
        if word == "--pattern":
            patterns.append(value)
        elif word == "--value":
            values.append(value)
        elif word == "--values-file":
            with open(value, encoding="utf-8") as file:
                values.extend(line.rstrip("\n") for line in file)
        else:
            raise SystemExit(f"unknown option {word} (--pattern, --value, --values-file)")
    return Rules(patterns, values)


def main() -> None:
    run(SecretRedaction(parse_args(sys.argv[1:])))


if __name__ == "__main__":
    main()
