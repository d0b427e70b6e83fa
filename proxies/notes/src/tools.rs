//! The notes of one ACP session and the MCP tools that read and change them: pure logic that
//! answers with the text the agent sees. Knows nothing of MCP framing, sessions or the wire.

use serde_json::{Map, Value, json};

/// The most notes one session may hold.
pub const MAX_NOTES: usize = 1000;
/// The longest note, in bytes of UTF-8 (after trimming surrounding whitespace).
pub const MAX_NOTE_BYTES: usize = 4096;

/// The notes of one session, in the order they were remembered; numbered from 1.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Notebook {
    notes: Vec<String>,
}

impl Notebook {
    pub fn new() -> Self {
        Notebook::default()
    }

    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    pub fn len(&self) -> usize {
        self.notes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.notes.is_empty()
    }

    /// Stores `note` (trimmed) and returns its number, or says why it cannot be stored.
    pub fn remember(&mut self, note: &str) -> Result<usize, ToolError> {
        let note = note.trim();
        if note.is_empty() {
            return Err(ToolError::EmptyNote);
        }
        if note.len() > MAX_NOTE_BYTES {
            return Err(ToolError::NoteTooLong(note.len()));
        }
        if self.notes.len() >= MAX_NOTES {
            return Err(ToolError::Full);
        }
        self.notes.push(note.to_string());
        Ok(self.notes.len())
    }

    /// Removes note `number` (from 1) and returns it; later notes move up by one.
    pub fn forget(&mut self, number: u64) -> Result<String, ToolError> {
        let count = self.notes.len();
        match usize::try_from(number) {
            Ok(n) if (1..=count).contains(&n) => Ok(self.notes.remove(n - 1)),
            _ => Err(ToolError::NoSuchNote { number, count }),
        }
    }

    /// Appends `other`'s notes after this one's, as many as the cap allows; returns how many
    /// did not fit.
    pub fn absorb(&mut self, other: Notebook) -> usize {
        let room = MAX_NOTES.saturating_sub(self.notes.len());
        let dropped = other.notes.len().saturating_sub(room);
        self.notes.extend(other.notes.into_iter().take(room));
        dropped
    }
}

/// Why a tool call failed; the text is for the agent, which can correct itself.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    #[error("The note is empty: give the text to remember in `note`.")]
    EmptyNote,
    #[error(
        "The note is {0} bytes long; a note may have at most {MAX_NOTE_BYTES} bytes (4 KiB). \
         Shorten it or split it into several notes."
    )]
    NoteTooLong(usize),
    #[error(
        "This session already has {MAX_NOTES} notes, the most it may hold. Forget one before \
         remembering another."
    )]
    Full,
    #[error("There is no note {number}: this session has {}.", held(*count))]
    NoSuchNote { number: u64, count: usize },
    #[error("Missing argument `{argument}`: {meaning}.")]
    Missing {
        argument: &'static str,
        meaning: &'static str,
    },
    /// `found` says what was given instead: a JSON kind ("a string"), or the number itself.
    #[error("`{argument}` must be {expected}, not {found}.")]
    WrongType {
        argument: &'static str,
        expected: &'static str,
        found: String,
    },
    #[error("`number` must be 1 or more: notes are numbered from 1.")]
    NumberBelowOne,
    #[error("The arguments of `{tool}` must be a JSON object, not {found}.")]
    ArgumentsNotAnObject { tool: String, found: &'static str },
    #[error("Unexpected argument `{argument}`: `{tool}` takes {takes}.")]
    UnexpectedArgument {
        argument: String,
        tool: String,
        takes: String,
    },
}

/// "no notes", "2 notes (numbered 1 to 2)".
fn held(count: usize) -> String {
    match count {
        0 => "no notes".to_owned(),
        n => format!("{} (numbered 1 to {n})", plural(n, "note")),
    }
}

/// What a tool call answers: text for the agent, and whether the call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    pub text: String,
    pub is_error: bool,
}

impl ToolOutput {
    fn ok(text: String) -> Self {
        ToolOutput {
            text,
            is_error: false,
        }
    }

    fn error(text: String) -> Self {
        ToolOutput {
            text,
            is_error: true,
        }
    }

    /// The MCP `tools/call` result: one text content block, `isError` only when set.
    pub fn to_result(&self) -> Value {
        let mut result = json!({"content": [{"type": "text", "text": self.text}]});
        if self.is_error {
            result["isError"] = Value::Bool(true);
        }
        result
    }
}

/// The names of the tools, in `tools/list` order.
pub const TOOL_NAMES: [&str; 3] = ["remember", "recall", "forget"];

/// The `tools` array of a `tools/list` result.
pub fn descriptors() -> Value {
    json!([
        {
            "name": "remember",
            "title": "Remember a note",
            "description": "Store a note the user asked you to remember during this session, \
                such as a preference, a decision or a fact to keep in mind. Notes belong to the \
                current session only and are kept in memory while the session's proxy runs. \
                A note may have at most 4096 bytes; a session may hold at most 1000 notes.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "note": {
                        "type": "string",
                        "minLength": 1,
                        "description": "The text to remember, stated so that it makes sense on its own later."
                    }
                },
                "required": ["note"],
                "additionalProperties": false
            },
            "annotations": {"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false}
        },
        {
            "name": "recall",
            "title": "Recall notes",
            "description": "List the notes remembered in this session, numbered from 1. \
                Call it before relying on what the user asked you to remember.",
            "inputSchema": {
                "type": "object",
                "properties": {},
                "additionalProperties": false
            },
            "annotations": {"readOnlyHint": true, "openWorldHint": false}
        },
        {
            "name": "forget",
            "title": "Forget a note",
            "description": "Remove one note of this session by its number as `recall` lists it. \
                Later notes move up by one, so call `recall` again before forgetting another.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "number": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "The number of the note to remove, as `recall` lists it."
                    }
                },
                "required": ["number"],
                "additionalProperties": false
            },
            "annotations": {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false}
        }
    ])
}

/// Runs tool `name` on `notebook`; `None` when there is no such tool. `arguments` is the
/// `arguments` member of the call (absent and `null` mean no arguments). Bad arguments are a
/// tool-level failure, answered with `is_error` so the agent can correct itself.
pub fn call(notebook: &mut Notebook, name: &str, arguments: Option<&Value>) -> Option<ToolOutput> {
    let output = match name {
        "remember" => remember(notebook, arguments),
        "recall" => recall(notebook, arguments),
        "forget" => forget(notebook, arguments),
        _ => return None,
    };
    Some(output.unwrap_or_else(|error| ToolOutput::error(error.to_string())))
}

fn remember(notebook: &mut Notebook, arguments: Option<&Value>) -> Result<ToolOutput, ToolError> {
    let arguments = arguments_of("remember", arguments, &["note"])?;
    let note = match arguments.get("note") {
        Some(Value::String(note)) => note,
        Some(other) => {
            return Err(ToolError::WrongType {
                argument: "note",
                expected: "a string",
                found: json_kind(other).to_owned(),
            });
        }
        None => {
            return Err(ToolError::Missing {
                argument: "note",
                meaning: "the text to remember",
            });
        }
    };
    let number = notebook.remember(note)?;
    let stored = &notebook.notes()[number - 1];
    Ok(ToolOutput::ok(format!(
        "Remembered note {number} for this session: {stored}"
    )))
}

fn recall(notebook: &mut Notebook, arguments: Option<&Value>) -> Result<ToolOutput, ToolError> {
    arguments_of("recall", arguments, &[])?;
    if notebook.is_empty() {
        return Ok(ToolOutput::ok(
            "No notes are stored for this session.".into(),
        ));
    }
    let mut text = format!("{} for this session:", plural(notebook.len(), "note"));
    for (i, note) in notebook.notes().iter().enumerate() {
        text.push_str(&format!("\n{}. {note}", i + 1));
    }
    Ok(ToolOutput::ok(text))
}

fn forget(notebook: &mut Notebook, arguments: Option<&Value>) -> Result<ToolOutput, ToolError> {
    let arguments = arguments_of("forget", arguments, &["number"])?;
    let number = match arguments.get("number") {
        Some(Value::Number(n)) => whole_number(n)?,
        Some(other) => return Err(not_an_integer(json_kind(other))),
        None => {
            return Err(ToolError::Missing {
                argument: "number",
                meaning: "the note's number as `recall` lists it",
            });
        }
    };
    let note = notebook.forget(number)?;
    let remaining = notebook.len();
    let left = match remaining {
        0 => "No notes remain.".to_string(),
        1 => "1 note remains.".to_string(),
        n => format!("{n} notes remain."),
    };
    let after = if usize::try_from(number).is_ok_and(|n| n <= remaining) {
        format!("Later notes moved up by one; {left}")
    } else {
        left
    };
    Ok(ToolOutput::ok(format!(
        "Forgot note {number}: {note}\n{after}"
    )))
}

/// The arguments object, with every member checked against `allowed`.
fn arguments_of(
    tool: &str,
    arguments: Option<&Value>,
    allowed: &[&str],
) -> Result<Map<String, Value>, ToolError> {
    let members = match arguments {
        None | Some(Value::Null) => return Ok(Map::new()),
        Some(Value::Object(members)) => members,
        Some(other) => {
            return Err(ToolError::ArgumentsNotAnObject {
                tool: tool.to_owned(),
                found: json_kind(other),
            });
        }
    };
    if let Some(unexpected) = members.keys().find(|k| !allowed.contains(&k.as_str())) {
        let takes = if allowed.is_empty() {
            "no arguments".to_string()
        } else {
            allowed
                .iter()
                .map(|a| format!("`{a}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(ToolError::UnexpectedArgument {
            argument: unexpected.clone(),
            tool: tool.to_owned(),
            takes,
        });
    }
    Ok(members.clone())
}

/// A JSON number that is a whole number of at least 1 (`2` and `2.0` alike).
fn whole_number(n: &serde_json::Number) -> Result<u64, ToolError> {
    if let Some(n) = n.as_u64() {
        return if n >= 1 {
            Ok(n)
        } else {
            Err(ToolError::NumberBelowOne)
        };
    }
    match n.as_f64() {
        Some(f) if f.fract() != 0.0 => Err(not_an_integer(&n.to_string())),
        Some(f) if f < 1.0 => Err(ToolError::NumberBelowOne),
        // Past u64::MAX there is no such note either; the cast saturates.
        Some(f) => Ok(f as u64),
        None => Err(not_an_integer(&n.to_string())),
    }
}

fn not_an_integer(found: &str) -> ToolError {
    ToolError::WrongType {
        argument: "number",
        expected: "an integer",
        found: found.to_owned(),
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(notebook: &mut Notebook, name: &str, arguments: Value) -> ToolOutput {
        call(notebook, name, Some(&arguments)).expect("a known tool")
    }

    fn ok(text: &str) -> ToolOutput {
        ToolOutput::ok(text.into())
    }

    fn err(text: &str) -> ToolOutput {
        ToolOutput::error(text.into())
    }

    #[test]
    fn remember_recall_forget_round_trip() {
        let mut book = Notebook::new();
        assert_eq!(
            run(&mut book, "recall", json!({})),
            ok("No notes are stored for this session.")
        );
        assert_eq!(
            run(&mut book, "remember", json!({"note": "  Use tabs\n"})),
            ok("Remembered note 1 for this session: Use tabs")
        );
        assert_eq!(
            run(
                &mut book,
                "remember",
                json!({"note": "Prefer small commits"})
            ),
            ok("Remembered note 2 for this session: Prefer small commits")
        );
        assert_eq!(
            call(
                &mut book,
                "remember",
                Some(&json!({"note": "Ship on Friday"}))
            ),
            Some(ok("Remembered note 3 for this session: Ship on Friday"))
        );
        assert_eq!(
            run(&mut book, "recall", json!({})),
            ok(
                "3 notes for this session:\n1. Use tabs\n2. Prefer small commits\n3. Ship on Friday"
            )
        );
        assert_eq!(
            run(&mut book, "forget", json!({"number": 1})),
            ok("Forgot note 1: Use tabs\nLater notes moved up by one; 2 notes remain.")
        );
        assert_eq!(
            run(&mut book, "forget", json!({"number": 2})),
            ok("Forgot note 2: Ship on Friday\n1 note remains.")
        );
        assert_eq!(
            run(&mut book, "recall", Value::Null),
            ok("1 note for this session:\n1. Prefer small commits")
        );
        assert_eq!(
            run(&mut book, "forget", json!({"number": 1.0})),
            ok("Forgot note 1: Prefer small commits\nNo notes remain.")
        );
        assert!(book.is_empty());
    }

    #[test]
    fn forget_says_when_later_notes_move_up() {
        let mut book = Notebook::new();
        book.remember("a").unwrap();
        book.remember("b").unwrap();
        assert_eq!(
            run(&mut book, "forget", json!({"number": 1})),
            ok("Forgot note 1: a\nLater notes moved up by one; 1 note remains.")
        );
        assert_eq!(book.notes(), ["b"]);
    }

    #[test]
    fn recall_takes_absent_or_null_arguments() {
        let mut book = Notebook::new();
        book.remember("x").unwrap();
        let expected = ok("1 note for this session:\n1. x");
        assert_eq!(call(&mut book, "recall", None), Some(expected.clone()));
        assert_eq!(
            call(&mut book, "recall", Some(&Value::Null)),
            Some(expected)
        );
    }

    #[test]
    fn notes_keep_inner_text_verbatim() {
        let mut book = Notebook::new();
        let note = "line one\n  line \"two\" é 🎉";
        assert_eq!(book.remember(note), Ok(1));
        assert_eq!(book.notes(), [note]);
    }

    #[test]
    fn unknown_tool_is_none() {
        let mut book = Notebook::new();
        assert_eq!(call(&mut book, "erase", Some(&json!({}))), None);
        assert_eq!(call(&mut book, "Remember", None), None);
        assert_eq!(call(&mut book, "", None), None);
    }

    #[test]
    fn bad_remember_arguments_are_tool_errors() {
        let mut book = Notebook::new();
        let cases = [
            (json!({}), "Missing argument `note`: the text to remember."),
            (
                Value::Null,
                "Missing argument `note`: the text to remember.",
            ),
            (json!({"note": 5}), "`note` must be a string, not a number."),
            (json!({"note": null}), "`note` must be a string, not null."),
            (
                json!({"note": ["a"]}),
                "`note` must be a string, not an array.",
            ),
            (
                json!({"note": "   \n\t"}),
                "The note is empty: give the text to remember in `note`.",
            ),
            (
                json!({"note": ""}),
                "The note is empty: give the text to remember in `note`.",
            ),
            (
                json!({"note": "x", "tag": "y"}),
                "Unexpected argument `tag`: `remember` takes `note`.",
            ),
            (
                json!({"text": "x"}),
                "Unexpected argument `text`: `remember` takes `note`.",
            ),
            (
                json!("x"),
                "The arguments of `remember` must be a JSON object, not a string.",
            ),
            (
                json!([1]),
                "The arguments of `remember` must be a JSON object, not an array.",
            ),
            (
                json!(true),
                "The arguments of `remember` must be a JSON object, not a boolean.",
            ),
        ];
        for (arguments, message) in cases {
            assert_eq!(
                run(&mut book, "remember", arguments.clone()),
                err(message),
                "{arguments}"
            );
        }
        assert!(book.is_empty());
    }

    #[test]
    fn bad_recall_arguments_are_tool_errors() {
        let mut book = Notebook::new();
        assert_eq!(
            run(&mut book, "recall", json!({"all": true})),
            err("Unexpected argument `all`: `recall` takes no arguments.")
        );
        assert_eq!(
            run(&mut book, "recall", json!(3)),
            err("The arguments of `recall` must be a JSON object, not a number.")
        );
    }

    #[test]
    fn bad_forget_arguments_are_tool_errors() {
        let mut book = Notebook::new();
        book.remember("a").unwrap();
        book.remember("b").unwrap();
        let cases = [
            (
                json!({}),
                "Missing argument `number`: the note's number as `recall` lists it.",
            ),
            (
                json!({"number": "1"}),
                "`number` must be an integer, not a string.",
            ),
            (
                json!({"number": true}),
                "`number` must be an integer, not a boolean.",
            ),
            (
                json!({"number": 1.5}),
                "`number` must be an integer, not 1.5.",
            ),
            (
                json!({"number": 0}),
                "`number` must be 1 or more: notes are numbered from 1.",
            ),
            (
                json!({"number": -3}),
                "`number` must be 1 or more: notes are numbered from 1.",
            ),
            (
                json!({"number": -1.0}),
                "`number` must be 1 or more: notes are numbered from 1.",
            ),
            (
                json!({"number": 3}),
                "There is no note 3: this session has 2 notes (numbered 1 to 2).",
            ),
            (
                json!({"number": 1e30}),
                "There is no note 18446744073709551615: this session has 2 notes (numbered 1 to 2).",
            ),
            (
                json!({"number": 1, "all": true}),
                "Unexpected argument `all`: `forget` takes `number`.",
            ),
        ];
        for (arguments, message) in cases {
            assert_eq!(
                run(&mut book, "forget", arguments.clone()),
                err(message),
                "{arguments}"
            );
        }
        assert_eq!(book.notes(), ["a", "b"]);
        let mut empty = Notebook::new();
        assert_eq!(
            run(&mut empty, "forget", json!({"number": 1})),
            err("There is no note 1: this session has no notes.")
        );
        let mut one = Notebook::new();
        one.remember("a").unwrap();
        assert_eq!(
            one.forget(u64::MAX).map_err(|e| e.to_string()),
            Err(format!(
                "There is no note {}: this session has 1 note (numbered 1 to 1).",
                u64::MAX
            ))
        );
    }

    #[test]
    fn note_size_cap_counts_bytes_after_trimming() {
        let mut book = Notebook::new();
        let exact = "a".repeat(MAX_NOTE_BYTES);
        assert_eq!(book.remember(&format!("  {exact}  ")), Ok(1));
        let over = "é".repeat(MAX_NOTE_BYTES / 2) + "a";
        assert_eq!(
            run(&mut book, "remember", json!({"note": over})),
            err(
                "The note is 4097 bytes long; a note may have at most 4096 bytes (4 KiB). Shorten it or split it into several notes."
            )
        );
        assert_eq!(book.len(), 1);
    }

    #[test]
    fn note_count_cap() {
        let mut book = Notebook::new();
        for i in 1..=MAX_NOTES {
            assert_eq!(book.remember(&format!("n{i}")), Ok(i));
        }
        assert_eq!(
            run(&mut book, "remember", json!({"note": "one more"})),
            err(
                "This session already has 1000 notes, the most it may hold. Forget one before remembering another."
            )
        );
        assert_eq!(book.len(), MAX_NOTES);
        assert_eq!(book.forget(1000), Ok("n1000".to_string()));
        assert_eq!(book.remember("one more"), Ok(1000));
    }

    #[test]
    fn absorb_appends_up_to_the_cap() {
        let mut a = Notebook::new();
        a.remember("a1").unwrap();
        let mut b = Notebook::new();
        b.remember("b1").unwrap();
        b.remember("b2").unwrap();
        assert_eq!(a.absorb(b.clone()), 0);
        assert_eq!(a.notes(), ["a1", "b1", "b2"]);
        let mut full = Notebook::new();
        for i in 0..MAX_NOTES - 1 {
            full.remember(&i.to_string()).unwrap();
        }
        assert_eq!(full.absorb(b), 1);
        assert_eq!(full.len(), MAX_NOTES);
        assert_eq!(full.notes()[MAX_NOTES - 1], "b1");
        assert_eq!(full.absorb(Notebook::new()), 0);
    }

    #[test]
    fn result_shape() {
        assert_eq!(
            ok("hi").to_result(),
            json!({"content": [{"type": "text", "text": "hi"}]})
        );
        assert_eq!(
            err("no").to_result(),
            json!({"content": [{"type": "text", "text": "no"}], "isError": true})
        );
    }

    #[test]
    fn descriptors_match_the_tools() {
        let tools = descriptors();
        let tools = tools.as_array().unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, TOOL_NAMES);
        let mut book = Notebook::new();
        for tool in tools {
            let name = tool["name"].as_str().unwrap();
            assert!(!tool["description"].as_str().unwrap().is_empty());
            let schema = &tool["inputSchema"];
            assert_eq!(schema["type"], "object");
            assert_eq!(schema["additionalProperties"], false);
            let properties = schema["properties"].as_object().unwrap();
            let required: Vec<&str> = schema
                .get("required")
                .map(|r| {
                    r.as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_str().unwrap())
                        .collect()
                })
                .unwrap_or_default();
            assert!(
                required.iter().all(|r| properties.contains_key(*r)),
                "{name}"
            );
            // Every declared property is accepted; a call without the required ones is refused.
            for property in properties.keys() {
                let output = run(&mut book, name, json!({property.as_str(): Value::Null}));
                assert!(
                    !output.text.starts_with("Unexpected argument"),
                    "{name}: {}",
                    output.text
                );
            }
            if !required.is_empty() {
                assert!(run(&mut book, name, json!({})).is_error, "{name}");
            }
            assert!(call(&mut book, name, None).is_some());
        }
        assert_eq!(
            tools[0]["inputSchema"]["properties"]["note"]["type"],
            "string"
        );
        assert_eq!(
            tools[2]["inputSchema"]["properties"]["number"]["type"],
            "integer"
        );
    }
}
