//! The bench agent's behaviour: answers `initialize`, `session/new` and `session/prompt`
//! with fixed texts, streaming `stream K B` chunks first. Must not know about stdio.

use acp_wire::encode;
use acp_wire::error_code::METHOD_NOT_FOUND;
use acp_wire::{Envelope, RawValue};

use crate::messages::{self, StreamSpec};

/// A minimal ACP agent, cheap enough that it is never what a benchmark measures.
#[derive(Debug, Default)]
pub struct BenchAgent {
    /// What every prompt that is not itself a `stream K B` command streams.
    default_stream: Option<StreamSpec>,
    /// The last update line written and the text size it was built for.
    update_line: Option<(usize, Vec<u8>)>,
}

impl BenchAgent {
    pub fn new(default_stream: Option<StreamSpec>) -> Self {
        BenchAgent {
            default_stream,
            update_line: None,
        }
    }

    /// Appends the answer to one frame (zero or more newline-terminated lines) to `out`.
    pub fn handle(&mut self, frame: &[u8], out: &mut Vec<u8>) {
        match acp_wire::parse(frame) {
            Ok(Envelope::Request { id, method, params }) => {
                self.request(id.get(), method, params, out)
            }
            // `session/cancel` and stray responses need no answer: prompts end at once anyway.
            Ok(Envelope::Notification { .. } | Envelope::Response { .. }) => {}
            Err(invalid) => {
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

    fn request(&mut self, id: &str, method: &str, params: Option<&RawValue>, out: &mut Vec<u8>) {
        let result = match method {
            "initialize" => messages::INITIALIZE_RESULT,
            "session/new" => messages::NEW_SESSION_RESULT,
            "authenticate" => "{}",
            "session/prompt" => {
                let stream = messages::prompt_stream_command(params).or(self.default_stream);
                if let Some(spec) = stream {
                    self.stream(spec, out);
                }
                messages::END_TURN_RESULT
            }
            other => {
                let message = format!("bench-agent does not implement `{other}`");
                encode::error_response(out, id, METHOD_NOT_FOUND, &message, None);
                out.push(b'\n');
                return;
            }
        };
        // Same bytes as `encode::response`, without first making the fixed text a RawValue.
        out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
        out.extend_from_slice(id.as_bytes());
        out.extend_from_slice(b",\"result\":");
        out.extend_from_slice(result.as_bytes());
        out.extend_from_slice(b"}\n");
    }

    fn stream(&mut self, spec: StreamSpec, out: &mut Vec<u8>) {
        let line = match &self.update_line {
            Some((bytes, line)) if *bytes == spec.bytes => line,
            _ => {
                let line = messages::update_line(messages::SESSION_ID, spec.bytes);
                &self.update_line.insert((spec.bytes, line)).1
            }
        };
        out.reserve(line.len() * spec.updates as usize);
        for _ in 0..spec.updates {
            out.extend_from_slice(line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(agent: &mut BenchAgent, frame: &str) -> Vec<String> {
        let mut out = Vec::new();
        agent.handle(frame.as_bytes(), &mut out);
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn answers_the_session_lifecycle() {
        let mut agent = BenchAgent::default();
        assert_eq!(
            answer(
                &mut agent,
                r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#
            ),
            [format!(
                r#"{{"jsonrpc":"2.0","id":0,"result":{}}}"#,
                messages::INITIALIZE_RESULT
            )]
        );
        assert_eq!(
            answer(
                &mut agent,
                r#"{"jsonrpc":"2.0","id":"n","method":"session/new","params":{}}"#
            ),
            [r#"{"jsonrpc":"2.0","id":"n","result":{"sessionId":"bench-session"}}"#]
        );
        let prompt = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{}}}"#,
            String::from_utf8(messages::prompt_params(messages::SESSION_ID, "hi")).unwrap()
        );
        assert_eq!(
            answer(&mut agent, &prompt),
            [r#"{"jsonrpc":"2.0","id":7,"result":{"stopReason":"end_turn"}}"#]
        );
        assert!(
            answer(
                &mut agent,
                r#"{"jsonrpc":"2.0","method":"session/cancel","params":{}}"#
            )
            .is_empty()
        );
    }

    #[test]
    fn streams_the_updates_a_prompt_asks_for_before_answering() {
        let mut agent = BenchAgent::default();
        for _ in 0..2 {
            let prompt = format!(
                r#"{{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{}}}"#,
                String::from_utf8(messages::prompt_params(messages::SESSION_ID, "stream 4 7"))
                    .unwrap()
            );
            let lines = answer(&mut agent, &prompt);
            assert_eq!(lines.len(), 5);
            for update in &lines[..4] {
                assert_eq!(
                    update.as_bytes(),
                    &messages::update_line(messages::SESSION_ID, 7)[..update.len()]
                );
            }
            assert_eq!(
                lines[4],
                r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#
            );
        }
    }

    #[test]
    fn default_stream_applies_to_ordinary_prompts() {
        let mut agent = BenchAgent::new(Some(StreamSpec {
            updates: 2,
            bytes: 1,
        }));
        let prompt = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{}}}"#,
            String::from_utf8(messages::prompt_params(messages::SESSION_ID, "hello")).unwrap()
        );
        assert_eq!(answer(&mut agent, &prompt).len(), 3);
    }

    #[test]
    fn unknown_methods_and_garbage_get_errors() {
        let mut agent = BenchAgent::default();
        assert_eq!(
            answer(
                &mut agent,
                r#"{"jsonrpc":"2.0","id":2,"method":"fs/nothing"}"#
            ),
            [
                r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"bench-agent does not implement `fs/nothing`"}}"#
            ]
        );
        let lines = answer(&mut agent, "not json");
        assert_eq!(lines.len(), 1);
        assert!(lines[0].starts_with(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700"#));
    }
}
