//! The words of the `test-agent` fixture: the answers and updates it sends, as values the
//! tests compare with. Knows what the agent says, not how it reads or writes.

use serde_json::{Value, json};

/// Prompt words that select a behaviour.
pub const HANG: &str = "hang";
pub const PERMISSION: &str = "permission";
pub const ID_ZERO: &str = "id-zero";

/// Sent as a chunk when a "hang" prompt starts waiting for its cancellation.
pub const HANGING: &str = "hanging";
/// The file the "id-zero" prompt asks the client to read, with request id `0`.
pub const ID_ZERO_PATH: &str = "/id-zero.txt";
/// How many chunks a `--burst` agent writes before and after the prompt's response.
pub const BURST_BEFORE: usize = 2;
pub const BURST_AFTER: usize = 3;

/// The agent's whole `InitializeResponse`, including fields no schema knows, which must
/// reach the editor unchanged. `echo` is the `_meta` the request carried (or null).
pub fn initialize_result(echo: &Value) -> Value {
    json!({
        "protocolVersion": 1,
        "agentCapabilities": {
            "loadSession": false,
            "promptCapabilities": { "image": false, "audio": false, "embeddedContext": true },
            "mcpCapabilities": { "http": false, "sse": false },
            "x-extra": { "keep": true }
        },
        "authMethods": [],
        "agentInfo": { "name": "test-agent", "version": "1.0.0" },
        "x-extra": { "keep": true },
        "_meta": { "agent": "test-agent", "echo": echo }
    })
}

/// `_meta` of every other result: what the request's params carried under `_meta`.
pub fn result_meta(echo: &Value) -> Value {
    json!({ "agent": "test-agent", "echo": echo })
}

/// The `session/update` params of one agent message chunk.
pub fn chunk(session_id: &str, text: &str) -> Value {
    json!({
        "sessionId": session_id,
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": { "type": "text", "text": text }
        }
    })
}

/// The text of a chunk, if `params` are those of an agent message chunk.
pub fn chunk_text(params: &Value) -> Option<&str> {
    let update = params.get("update")?;
    if update.get("sessionUpdate")? != "agent_message_chunk" {
        return None;
    }
    update.get("content")?.get("text")?.as_str()
}

/// The i-th (from 1) of the `--updates K` chunks streamed for a prompt.
pub fn update_text(prompt: &str, i: usize, k: usize) -> String {
    format!("update {i}/{k} for {prompt}")
}

pub fn burst_before_text(prompt: &str, i: usize) -> String {
    format!("{prompt} before {i}")
}

pub fn burst_after_text(prompt: &str, i: usize) -> String {
    format!("{prompt} after {i}")
}

/// The permission options the agent offers.
pub fn permission_options() -> Value {
    json!([
        { "optionId": "allow-once", "name": "Allow", "kind": "allow_once" },
        { "optionId": "reject-once", "name": "Reject", "kind": "reject_once" }
    ])
}

/// What the agent reports after the client answered its permission request.
pub fn permission_outcome_text(response: &Value) -> String {
    if let Some(error) = response.get("error") {
        return format!("permission error {}", error["code"]);
    }
    let outcome = &response["result"]["outcome"];
    match (outcome["outcome"].as_str(), outcome["optionId"].as_str()) {
        (Some("selected"), Some(option)) => format!("permission selected {option}"),
        (Some(other), _) => format!("permission {other}"),
        (None, _) => format!("permission answer without outcome: {response}"),
    }
}

/// What the agent reports after the client answered its `fs/read_text_file` request.
pub fn read_outcome_text(response: &Value) -> String {
    if let Some(error) = response.get("error") {
        return format!("read error {}", error["code"]);
    }
    match response["result"]["content"].as_str() {
        Some(content) => format!("read {content}"),
        None => format!("read answer without content: {response}"),
    }
}

/// Prompt words that make the agent send one request to the client and report the answer.
/// Each must be the first word of a text block; the rest of that block says what to ask:
/// `fs-read PATH`, `fs-write PATH CONTENT...`, `terminal COMMAND ARGS...`,
/// `terminal-output TERMINAL_ID` (`terminal/output`), and
/// `permission-for {JSON}` (the JSON object's members go into the permission request's
/// `toolCall`, after a `toolCallId` of `call-N`).
pub const FS_READ: &str = "fs-read";
pub const FS_WRITE: &str = "fs-write";
pub const TERMINAL: &str = "terminal";
pub const TERMINAL_OUTPUT: &str = "terminal-output";
pub const PERMISSION_FOR: &str = "permission-for";

/// The request a prompt text block asks the agent to send, as `(method, params)`; `None`
/// when the block starts with none of the request words. `request_id` is the id the agent
/// will send it with, which names the tool call of a permission request.
pub fn client_request(
    session_id: &str,
    block_text: &str,
    request_id: u64,
) -> Option<(&'static str, Value)> {
    let text = block_text.trim_start();
    let (word, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    let rest = rest.trim_start();
    match word {
        FS_READ => Some((
            "fs/read_text_file",
            json!({ "sessionId": session_id, "path": rest.trim_end() }),
        )),
        FS_WRITE => {
            let (path, content) = rest.split_once(' ').unwrap_or((rest, ""));
            Some((
                "fs/write_text_file",
                json!({ "sessionId": session_id, "path": path, "content": content }),
            ))
        }
        TERMINAL => {
            let mut words = rest.split_whitespace().map(str::to_string);
            let command = words.next().unwrap_or_default();
            let args: Vec<String> = words.collect();
            Some((
                "terminal/create",
                json!({ "sessionId": session_id, "command": command, "args": args }),
            ))
        }
        TERMINAL_OUTPUT => Some((
            "terminal/output",
            json!({ "sessionId": session_id, "terminalId": rest.trim_end() }),
        )),
        PERMISSION_FOR => {
            let mut tool_call = json!({ "toolCallId": format!("call-{request_id}") });
            let fields: Value = serde_json::from_str(rest)
                .unwrap_or_else(|e| panic!("permission-for needs a JSON object ({e}): {rest}"));
            if let (Some(call), Some(fields)) = (tool_call.as_object_mut(), fields.as_object()) {
                call.extend(fields.clone());
            }
            Some((
                "session/request_permission",
                json!({
                    "sessionId": session_id,
                    "toolCall": tool_call,
                    "options": permission_options(),
                }),
            ))
        }
        _ => None,
    }
}

/// What the agent reports after the client answered a request sent for one of the request
/// words: the method and the whole answer, `{"result":...}` or `{"error":...}`.
pub fn answer_text(method: &str, answer: &Value) -> String {
    format!("{method} answered {answer}")
}

/// The answer an [`answer_text`] reports for `method`, parsed; `None` for any other text.
/// Compare answers this way rather than as text: member order in the text follows the bytes
/// the agent received and the serde_json features of the build.
pub fn reported_answer(method: &str, text: &str) -> Option<Value> {
    let json = text.strip_prefix(method)?.strip_prefix(" answered ")?;
    serde_json::from_str(json).ok()
}

/// One line of a `--replies` file: requests for `method` get `outcome` as their `kind`
/// (`"result"` or `"error"`), its text written into the response exactly as given here.
pub fn reply_line(method: &str, kind: &str, outcome: &str) -> String {
    assert!(
        kind == "result" || kind == "error",
        "a reply is a result or an error, not {kind}"
    );
    format!(r#"{{"method":{},"{kind}":{outcome}}}"#, Value::from(method))
}

/// Prompt words that make the agent write bytes of the test's choosing, hostile input for
/// the conductor. Each must be the first word of a text block, followed by a [`Recipe`]:
/// `emit RECIPE` writes the bytes and then ends the turn as usual; `answer RECIPE` writes
/// them instead of the turn's response (which the recipe may spell out, badly). `flood N`
/// streams agent message chunks, N bytes of lines in all, then ends the turn.
pub const EMIT: &str = "emit";
pub const ANSWER: &str = "answer";
pub const FLOOD: &str = "flood";

/// The text of each chunk a `flood` streams is this many bytes long.
pub const FLOOD_CHUNK: usize = 16 * 1024;

/// Bytes spelled as prompt words: `hex:<digits>` (those bytes), `pad:<n>` (`n` bytes of `x`)
/// and `id` (the prompt's request id, as the agent received it). Any bytes at all, invalid
/// UTF-8 and NUL included, travel inside an ordinary prompt.
#[derive(Debug, Clone, Default)]
pub struct Recipe(Vec<String>);

impl Recipe {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn bytes(mut self, bytes: &[u8]) -> Self {
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        self.0.push(format!("hex:{hex}"));
        self
    }

    pub fn text(self, text: &str) -> Self {
        self.bytes(text.as_bytes())
    }

    /// `text` and a newline: one whole line.
    pub fn line(self, text: &str) -> Self {
        self.text(text).bytes(b"\n")
    }

    pub fn pad(mut self, count: usize) -> Self {
        self.0.push(format!("pad:{count}"));
        self
    }

    pub fn id(mut self) -> Self {
        self.0.push("id".to_string());
        self
    }

    /// The recipe's words, as [`recipe_bytes`] reads them (and `--on-start` takes them).
    pub fn words(&self) -> String {
        self.0.join(" ")
    }

    /// The prompt text that has the agent `word` (`emit` or `answer`) these bytes.
    pub fn prompt(&self, word: &str) -> String {
        format!("{word} {}", self.words())
    }
}

/// The bytes a recipe's words spell, `id` standing for `request_id`.
pub fn recipe_bytes(words: &str, request_id: &str) -> Vec<u8> {
    let mut bytes = Vec::new();
    for word in words.split_whitespace() {
        if let Some(hex) = word.strip_prefix("hex:") {
            let digits = hex.as_bytes();
            assert!(digits.len() % 2 == 0, "odd hex in recipe: {word}");
            for pair in digits.chunks(2) {
                let pair = std::str::from_utf8(pair).expect("hex digits");
                bytes.push(u8::from_str_radix(pair, 16).expect("hex digits"));
            }
        } else if let Some(count) = word.strip_prefix("pad:") {
            let count: usize = count.parse().expect("pad:<count>");
            bytes.resize(bytes.len() + count, b'x');
        } else if word == "id" {
            bytes.extend_from_slice(request_id.as_bytes());
        } else {
            panic!("unknown recipe word `{word}`");
        }
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recipe_spells_any_bytes() {
        let recipe = Recipe::new()
            .bytes(b"\xef\xbb\xbf\x00\xff")
            .text("{\"id\":")
            .id()
            .pad(3)
            .line("}");
        assert_eq!(
            recipe_bytes(&recipe.words(), "42"),
            b"\xef\xbb\xbf\x00\xff{\"id\":42xxx}\n"
        );
        assert!(recipe.prompt(EMIT).starts_with("emit hex:efbbbf00ff "));
    }
}
