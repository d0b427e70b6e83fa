// What a hook may decide about the message it was shown: pass it on (changed or not), answer it,
// fail it, drop it or answer it later. Decisions only; carrying them out is the router's.

export type Json = unknown;

/** Answer the request here with `result`; the other side never sees it. */
export class Respond {
  constructor(readonly result: Json) {}
}

/** Answer the request here with this JSON-RPC error; the other side never sees it. */
export class Fail {
  constructor(
    readonly code: number,
    readonly message: string,
    readonly data?: Json,
  ) {}

  errorObject(): Record<string, Json> {
    const error: Record<string, Json> = { code: this.code, message: this.message };
    if (this.data !== undefined) error.data = this.data;
    return error;
  }
}

/** Runs on the result of a forwarded request before the requester sees it: a new result,
 *  undefined (unchanged) or a Fail. */
export type ResultHook = (result: Json) => Json | Fail | undefined;

/** Send the request on, with `params` if given, and run `then` on its result. */
export class Forward {
  constructor(
    readonly params?: Json,
    readonly then?: ResultHook,
  ) {}
}

/** Do not pass the notification on. */
export const DROP: unique symbol = Symbol("drop");

/** A request the hook answers later (from `peers.defer()`, returned by the hook). */
export class Deferred {
  answered = false;
  constructor(
    readonly side: Side,
    readonly id: Json,
    readonly method: string,
  ) {}
}

export type Side = "editor" | "agent";

/** What a request hook returns: undefined (pass on unchanged), an object (pass on with these
 *  params), or one of the decisions. */
export type RequestDecision = undefined | Record<string, Json> | Forward | Respond | Fail | Deferred;

/** What a notification hook returns: undefined (unchanged), new params, or DROP. */
export type NotificationDecision = undefined | Record<string, Json> | typeof DROP;
