//! The bench proxy's behaviour: a pass-through proxy-chains proxy. Editor-side messages go
//! to the successor wrapped in `proxy/successor` under its own ids; wrapped messages from the
//! successor go to the editor side unwrapped; responses go back under the ids they answer.
//! Must not know about stdio or about what the messages mean.

use acp_wire::encode::{self, Call};
use acp_wire::error_code::INVALID_PARAMS;
use acp_wire::successor::{self, Dialect, EnvelopeMeta};
use acp_wire::{Envelope, OutgoingRequests, RawValue};

#[derive(Debug, Default)]
pub struct PassThroughProxy {
    /// Spelling of the proxy methods, taken from the initialize request it was sent.
    dialect: Dialect,
    /// Requests passed on under our own ids: the id each had when it reached us, as JSON text.
    pending: OutgoingRequests<Box<str>>,
}

impl PassThroughProxy {
    /// Appends what one frame from the conductor turns into to `out`.
    pub fn handle(&mut self, frame: &[u8], out: &mut Vec<u8>) {
        match acp_wire::parse(frame) {
            Ok(Envelope::Request { id, method, params }) => {
                if let Some(dialect) = Dialect::of_initialize(method) {
                    self.dialect = dialect;
                    self.forward_request(id, self.toward_successor("initialize", params), out);
                } else if Dialect::of_successor(method).is_some() {
                    match successor::unwrap(params) {
                        Ok(inner) => {
                            self.forward_request(id, plain(inner.method, inner.params), out)
                        }
                        Err(reason) => {
                            encode::error_response(out, id.get(), INVALID_PARAMS, reason, None);
                            out.push(b'\n');
                        }
                    }
                } else {
                    self.forward_request(id, self.toward_successor(method, params), out);
                }
            }
            Ok(Envelope::Notification { method, params }) => {
                let call = if Dialect::of_successor(method).is_some() {
                    match successor::unwrap(params) {
                        Ok(inner) => plain(inner.method, inner.params),
                        Err(reason) => {
                            eprintln!("bench-proxy: dropping a malformed notification: {reason}");
                            return;
                        }
                    }
                } else {
                    self.toward_successor(method, params)
                };
                encode::call(out, None, call);
                out.push(b'\n');
            }
            Ok(Envelope::Response { id, outcome }) => match self.pending.complete_raw(id) {
                Some(origin) => {
                    encode::response(out, &origin, outcome);
                    out.push(b'\n');
                }
                None => eprintln!(
                    "bench-proxy: dropping a response to unknown id {}",
                    id.get()
                ),
            },
            Err(invalid) => {
                eprintln!("bench-proxy: {invalid}");
                encode::error_response(
                    out,
                    invalid.reply_id(),
                    invalid.code(),
                    &invalid.to_string(),
                    None,
                );
                out.push(b'\n');
            }
        }
    }

    fn toward_successor<'a>(&self, method: &'a str, params: Option<&'a RawValue>) -> Call<'a> {
        Call::Wrapped {
            via: self.dialect.successor_method(),
            method,
            params,
            meta: EnvelopeMeta::default(),
        }
    }

    fn forward_request(&mut self, origin: &RawValue, call: Call<'_>, out: &mut Vec<u8>) {
        let own = self.pending.register(origin.get().into());
        encode::call(out, Some(&own.to_string()), call);
        out.push(b'\n');
    }
}

fn plain<'a>(method: &'a str, params: Option<&'a RawValue>) -> Call<'a> {
    Call::Plain { method, params }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(proxy: &mut PassThroughProxy, frame: &str) -> String {
        let mut out = Vec::new();
        proxy.handle(frame.as_bytes(), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn initialize_goes_to_the_successor_and_its_answer_comes_back() {
        let mut proxy = PassThroughProxy::default();
        assert_eq!(
            step(
                &mut proxy,
                r#"{"jsonrpc":"2.0","id":"c1","method":"proxy/initialize","params":{"protocolVersion":1}}"#
            ),
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"proxy/successor\",\"params\":{\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}}\n"
        );
        assert_eq!(
            step(
                &mut proxy,
                r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}"#
            ),
            "{\"jsonrpc\":\"2.0\",\"id\":\"c1\",\"result\":{\"protocolVersion\":1}}\n"
        );
    }

    #[test]
    fn speaks_the_dialect_it_was_initialized_with() {
        let mut proxy = PassThroughProxy::default();
        step(
            &mut proxy,
            r#"{"jsonrpc":"2.0","id":0,"method":"_proxy/initialize","params":{}}"#,
        );
        assert_eq!(
            step(
                &mut proxy,
                r#"{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"p":[]}}"#
            ),
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"_proxy/successor\",\"params\":{\"method\":\"session/prompt\",\"params\":{\"p\":[]}}}\n"
        );
    }

    #[test]
    fn successor_messages_are_unwrapped_toward_the_editor() {
        let mut proxy = PassThroughProxy::default();
        assert_eq!(
            step(
                &mut proxy,
                r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/update","params":{"u":1}}}"#
            ),
            "{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"u\":1}}\n"
        );
        assert_eq!(
            step(
                &mut proxy,
                r#"{"jsonrpc":"2.0","id":9,"method":"proxy/successor","params":{"method":"fs/read_text_file","params":{"path":"/a"}}}"#
            ),
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"fs/read_text_file\",\"params\":{\"path\":\"/a\"}}\n"
        );
        assert_eq!(
            step(
                &mut proxy,
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"no"}}"#
            ),
            "{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":{\"code\":-1,\"message\":\"no\"}}\n"
        );
    }

    #[test]
    fn editor_notifications_are_wrapped_and_unknown_responses_dropped() {
        let mut proxy = PassThroughProxy::default();
        assert_eq!(
            step(
                &mut proxy,
                r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#
            ),
            "{\"jsonrpc\":\"2.0\",\"method\":\"proxy/successor\",\"params\":{\"method\":\"session/cancel\",\"params\":{\"sessionId\":\"s\"}}}\n"
        );
        assert_eq!(
            step(&mut proxy, r#"{"jsonrpc":"2.0","id":44,"result":{}}"#),
            ""
        );
        assert!(
            step(
                &mut proxy,
                r#"{"jsonrpc":"2.0","id":3,"method":"proxy/successor","params":{"params":{}}}"#
            )
            .starts_with("{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32602")
        );
    }
}
