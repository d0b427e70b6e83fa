//! Who may send what, and when: the checks every request and notification of the chain passes
//! before it is routed. A call that fails one is answered with an error or dropped, and counted.
//!
//! `on_call` asks here first, once it knows the chain is up: after a component failed, every
//! editor request gets that failure instead, as before.
//!
//! `proxy/successor` (either spelling) is how a proxy talks to its successor: only proxies send
//! it, and in proxy mode the parent conductor, delivering what our successor sent. From the
//! editor it would reach proxy 1 unwrapped as a message from its successor, so the editor could
//! pose as the agent (and get past a policy proxy); the agent has no successor. So both are
//! refused. `proxy/initialize` opens a nested chain: only a parent conductor sends it.
//!
//! The editor's first `initialize` request opens the chain (in proxy mode the parent's
//! `proxy/initialize`). Before it, requests from anyone are answered with an error and
//! notifications are dropped: the components were never initialized. An `initialize` after it
//! is answered with an error, even while the first is still unanswered, whatever that answer
//! turns out to be: an editor whose `initialize` failed starts its agent again.

use acp_wire::successor::Dialect;
use acp_wire::{RawValue, error_code};

use super::skipped::Skip;
use super::topology::{ChainMode, Position};
use super::{Components, Router};
use crate::link::LinkId;

/// Whether the chain's `initialize` has arrived.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) enum Opening {
    #[default]
    Awaiting,
    Received,
}

/// Why a call is not routed.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Refusal {
    skip: Skip,
    code: i64,
    message: String,
}

impl Refusal {
    fn new(skip: Skip, code: i64, message: impl Into<String>) -> Refusal {
        Refusal {
            skip,
            code,
            message: message.into(),
        }
    }
}

impl<C: Components> Router<C> {
    /// Whether the request (`id: Some`) or notification `method` arriving on `link`, at chain
    /// position `from`, may be routed. One that may not has been answered with an error (a
    /// request) or dropped (a notification), logged and counted.
    pub(super) fn admit(
        &mut self,
        link: LinkId,
        from: Position,
        id: Option<&RawValue>,
        method: &str,
    ) -> bool {
        let Err(refusal) = self.admission(from, id.is_some(), method) else {
            return true;
        };
        let name = &self.links[link].name;
        let what = if id.is_some() {
            "request"
        } else {
            "notification"
        };
        tracing::warn!(component = %name, method, reason = %refusal.message, "{what} refused");
        self.skipped.count(refusal.skip);
        if let Some(id) = id {
            self.reply_error(link, id.get(), refusal.code, &refusal.message, None);
        }
        false
    }

    fn admission(&mut self, from: Position, request: bool, method: &str) -> Result<(), Refusal> {
        let proxy_mode = self.topology.mode == ChainMode::Proxy;
        let successor = Dialect::of_successor(method).is_some();
        let nested_initialize = Dialect::of_initialize(method).is_some();
        if from == 0 && !proxy_mode {
            if successor {
                return Err(Refusal::new(
                    Skip::WrongSender,
                    error_code::METHOD_NOT_FOUND,
                    format!(
                        "`{method}` is how a proxy talks to its successor; the editor cannot send it"
                    ),
                ));
            }
            if nested_initialize {
                return Err(Refusal::new(
                    Skip::WrongSender,
                    error_code::INVALID_REQUEST,
                    "this conductor runs as an agent and expects `initialize`; run it with `run --proxy` to nest it in another conductor",
                ));
            }
        }
        if Some(from) == self.topology.agent_position() && (successor || nested_initialize) {
            let message = if successor {
                format!("`{method}` is how a proxy talks to its successor; the agent has none")
            } else {
                format!("`{method}` is sent by a conductor to a proxy; the agent cannot send it")
            };
            return Err(Refusal::new(
                Skip::WrongSender,
                error_code::METHOD_NOT_FOUND,
                message,
            ));
        }
        let opens =
            from == 0 && request && (method == "initialize" || (proxy_mode && nested_initialize));
        match (self.opening, opens) {
            (Opening::Awaiting, true) => {
                self.opening = Opening::Received;
                Ok(())
            }
            (Opening::Awaiting, false) => {
                let first = if proxy_mode {
                    "`proxy/initialize`"
                } else {
                    "`initialize`"
                };
                Err(Refusal::new(
                    Skip::BeforeInitialize,
                    error_code::INVALID_REQUEST,
                    format!("{first} must come first; `{method}` arrived before it"),
                ))
            }
            (Opening::Received, true) => Err(Refusal::new(
                Skip::SecondInitialize,
                error_code::INVALID_REQUEST,
                format!("`{method}` was already received; the chain is initialized once"),
            )),
            (Opening::Received, false) => Ok(()),
        }
    }

    /// A router whose chain was initialized already: for tests of what comes after.
    #[doc(hidden)]
    pub fn assume_initialized(&mut self) {
        self.opening = Opening::Received;
    }
}
