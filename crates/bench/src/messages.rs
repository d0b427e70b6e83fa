//! The JSON texts the bench peers exchange: requests the runner sends, the agent's fixed
//! answers and its `session/update` chunks. Must not know about processes or timing.

use serde::Deserialize;
use serde_json::value::RawValue;

/// The one session the bench agent has.
pub const SESSION_ID: &str = "bench-session";

pub const INITIALIZE_METHOD: &str = "initialize";

pub const INITIALIZE_PARAMS: &str = r#"{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false},"clientInfo":{"name":"acp-bench","version":"0.1.0"}}"#;

pub const INITIALIZE_RESULT: &str = r#"{"protocolVersion":1,"agentCapabilities":{"loadSession":false,"promptCapabilities":{"image":false,"audio":false,"embeddedContext":false},"mcpCapabilities":{"http":false,"sse":false}},"agentInfo":{"name":"bench-agent","version":"0.1.0"},"authMethods":[]}"#;

pub const NEW_SESSION_RESULT: &str = r#"{"sessionId":"bench-session"}"#;

pub const END_TURN_RESULT: &str = r#"{"stopReason":"end_turn"}"#;

/// How every `session/update` the bench agent writes begins; the runner counts lines with
/// this prefix without parsing them.
pub const UPDATE_PREFIX: &[u8] = br#"{"jsonrpc":"2.0","method":"session/update","#;

/// `session/new` params for a session in `cwd`.
pub fn new_session_params(cwd: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + cwd.len());
    out.extend_from_slice(br#"{"cwd":"#);
    acp_wire::encode::json_string(&mut out, cwd);
    out.extend_from_slice(br#","mcpServers":[]}"#);
    out
}

/// The `sessionId` of a `session/new` result.
pub fn session_id_of(result: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct NewSession {
        #[serde(rename = "sessionId")]
        session_id: String,
    }
    serde_json::from_str::<NewSession>(result)
        .ok()
        .map(|r| r.session_id)
}

/// `session/prompt` params with one text block.
pub fn prompt_params(session_id: &str, text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(96 + text.len());
    out.extend_from_slice(br#"{"sessionId":"#);
    acp_wire::encode::json_string(&mut out, session_id);
    out.extend_from_slice(br#","prompt":[{"type":"text","text":"#);
    acp_wire::encode::json_string(&mut out, text);
    out.extend_from_slice(b"}]}");
    out
}

/// How many `session/update` chunks a prompt asks for, and how many bytes of text each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamSpec {
    pub updates: u32,
    pub bytes: usize,
}

/// The prompt text that makes the bench agent stream: `stream K B`.
pub fn stream_command(spec: StreamSpec) -> String {
    format!("stream {} {}", spec.updates, spec.bytes)
}

/// Reads `stream K B` back; anything else is an ordinary prompt.
pub fn parse_stream_command(text: &str) -> Option<StreamSpec> {
    let mut words = text.strip_prefix("stream ")?.split_ascii_whitespace();
    let updates = words.next()?.parse().ok()?;
    let bytes = words.next()?.parse().ok()?;
    words
        .next()
        .is_none()
        .then_some(StreamSpec { updates, bytes })
}

/// The first text block of `session/prompt` params, as raw JSON text, without decoding
/// (or copying) the rest of the prompt.
#[derive(Deserialize)]
struct PromptParams<'a> {
    #[serde(borrow)]
    prompt: Vec<PromptBlock<'a>>,
}

#[derive(Deserialize)]
struct PromptBlock<'a> {
    #[serde(default, borrow)]
    text: Option<&'a RawValue>,
}

/// Params longer than this are not a command prompt and are not looked into, so that a
/// big prompt costs the agent no second pass over its bytes.
const COMMAND_PARAMS_MAX: usize = 4096;

/// The `stream K B` command in a prompt's last block, if that is what it says: the editor's
/// own text, after whatever a proxy put before it (the kit-probe proxies add a note first).
pub fn prompt_stream_command(params: Option<&RawValue>) -> Option<StreamSpec> {
    let params = params?.get();
    if params.len() > COMMAND_PARAMS_MAX {
        return None;
    }
    let params: PromptParams<'_> = serde_json::from_str(params).ok()?;
    let text: String = serde_json::from_str(params.prompt.last()?.text?.get()).ok()?;
    parse_stream_command(&text)
}

/// One `agent_message_chunk` update carrying `bytes` bytes of text, newline-terminated.
pub fn update_line(session_id: &str, bytes: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(192 + bytes);
    out.extend_from_slice(UPDATE_PREFIX);
    out.extend_from_slice(br#""params":{"sessionId":"#);
    acp_wire::encode::json_string(&mut out, session_id);
    out.extend_from_slice(
        br#","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":""#,
    );
    out.extend(std::iter::repeat_n(b'x', bytes));
    out.extend_from_slice(b"\"}}}}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use acp_wire::{Envelope, parse};

    fn raw(s: &[u8]) -> Box<RawValue> {
        RawValue::from_string(String::from_utf8(s.to_vec()).unwrap()).unwrap()
    }

    #[test]
    fn stream_commands_round_trip() {
        let spec = StreamSpec {
            updates: 100,
            bytes: 100,
        };
        assert_eq!(stream_command(spec), "stream 100 100");
        assert_eq!(parse_stream_command("stream 100 100"), Some(spec));
        assert_eq!(parse_stream_command("stream 1"), None);
        assert_eq!(parse_stream_command("stream 1 2 3"), None);
        assert_eq!(parse_stream_command("hello"), None);
        assert_eq!(parse_stream_command("stream -1 2"), None);
    }

    #[test]
    fn prompt_params_carry_the_command() {
        let params = raw(&prompt_params(SESSION_ID, "stream 3 10"));
        assert_eq!(
            prompt_stream_command(Some(&params)),
            Some(StreamSpec {
                updates: 3,
                bytes: 10
            })
        );
        let quoted = raw(&prompt_params(SESSION_ID, "say \"hi\"\n"));
        assert_eq!(prompt_stream_command(Some(&quoted)), None);
        let big = raw(&prompt_params(SESSION_ID, &"x".repeat(1 << 20)));
        assert_eq!(prompt_stream_command(Some(&big)), None);
        assert_eq!(prompt_stream_command(None), None);
    }

    #[test]
    fn a_note_a_proxy_put_first_leaves_the_command_last() {
        let noted = raw(format!(
            r#"{{"sessionId":"{SESSION_ID}","prompt":[{{"type":"text","text":"a note"}},{{"type":"text","text":"stream 2 5"}}]}}"#
        ).as_bytes());
        assert_eq!(
            prompt_stream_command(Some(&noted)),
            Some(StreamSpec {
                updates: 2,
                bytes: 5
            })
        );
        let after = raw(format!(
            r#"{{"sessionId":"{SESSION_ID}","prompt":[{{"type":"text","text":"stream 2 5"}},{{"type":"text","text":"a note"}}]}}"#
        ).as_bytes());
        assert_eq!(prompt_stream_command(Some(&after)), None);
    }

    #[test]
    fn update_lines_are_session_update_notifications() {
        let line = update_line(SESSION_ID, 5);
        assert!(line.starts_with(UPDATE_PREFIX));
        assert_eq!(line.last(), Some(&b'\n'));
        let value: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(value["params"]["update"]["content"]["text"], "xxxxx");
        assert_eq!(value["params"]["sessionId"], SESSION_ID);
        assert!(matches!(
            parse(&line[..line.len() - 1]).unwrap(),
            Envelope::Notification {
                method: "session/update",
                ..
            }
        ));
    }

    #[test]
    fn reads_the_session_id() {
        assert_eq!(
            session_id_of(NEW_SESSION_RESULT).as_deref(),
            Some(SESSION_ID)
        );
        assert_eq!(session_id_of("{}"), None);
    }

    #[test]
    fn fixed_texts_are_json() {
        for text in [
            INITIALIZE_PARAMS,
            INITIALIZE_RESULT,
            NEW_SESSION_RESULT,
            END_TURN_RESULT,
        ] {
            serde_json::from_str::<serde_json::Value>(text).unwrap();
        }
        let params: serde_json::Value =
            serde_json::from_slice(&new_session_params("/tmp/a \"b\"")).unwrap();
        assert_eq!(params["cwd"], "/tmp/a \"b\"");
    }
}
