//! Newer and unknown ACP methods and session updates cross a chain of 2 test proxies untouched,
//! both ways: params, results and errors byte for byte, each under the id its sender chose.

// Each table row is one message in the shape of schema 1.20 (or of an RFD, or made up); the
// test-agent answers the editor's requests from a `--replies` file and writes its own calls
// with the `emit` prompt word. Every row is checked on its own, at the far end and at each
// proxy (editor-side messages plain, agent-side ones wrapped in `proxy/successor`), and
// nothing may come back to the side that sent it.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use acp_conductor_tests::agent_script::{self, Recipe};
use acp_conductor_tests::editor::{Direction, Editor, patience, prompt_params};
use acp_conductor_tests::jsonrpc::{self, RawMessage};
use acp_conductor_tests::test_chain::AGENT;
use acp_conductor_tests::{TestChain, binaries};
use serde_json::Value;

const PROXIES: [&str; 2] = ["p1", "p2"];

/// Stands for the id of the session the test opened, in params texts.
const SESSION: &str = "$SESSION";

/// The answer to a request: `"result"` or `"error"`, and its exact text.
#[derive(Debug, Clone, Copy)]
struct Answer {
    kind: &'static str,
    text: &'static str,
}

const fn result(text: &'static str) -> Answer {
    Answer {
        kind: "result",
        text,
    }
}

const fn error(text: &'static str) -> Answer {
    Answer {
        kind: "error",
        text,
    }
}

/// One request or notification as its sender writes it.
#[derive(Debug, Clone, Copy)]
struct Call {
    /// The id's exact text; `None` for a notification.
    id: Option<&'static str>,
    method: &'static str,
    /// The params' exact text (`$SESSION` replaced); `None`: no `params` member at all.
    params: Option<&'static str>,
    /// What the other end answers to a request.
    answer: Option<Answer>,
}

const fn request(id: &'static str, method: &'static str, params: &'static str, a: Answer) -> Call {
    Call {
        id: Some(id),
        method,
        params: Some(params),
        answer: Some(a),
    }
}

const fn request_without_params(id: &'static str, method: &'static str, a: Answer) -> Call {
    Call {
        id: Some(id),
        method,
        params: None,
        answer: Some(a),
    }
}

const fn notification(method: &'static str, params: &'static str) -> Call {
    Call {
        id: None,
        method,
        params: Some(params),
        answer: None,
    }
}

impl Call {
    fn params_text(&self, session: &str) -> Option<String> {
        self.params.map(|p| p.replace(SESSION, session))
    }

    /// Names the row in failures: the method, and the kind of update of a `session/update`
    /// or the id of a request (a method may have several rows).
    fn name(&self) -> String {
        let kind = self
            .params
            .filter(|_| self.method == "session/update")
            .and_then(|p| serde_json::from_str::<Value>(p).ok())
            .and_then(|p| p["update"]["sessionUpdate"].as_str().map(str::to_string));
        match (kind, self.id) {
            (Some(kind), _) => format!("{} ({kind})", self.method),
            (None, Some(id)) => format!("{} (request {id})", self.method),
            (None, None) => format!("{} (notification)", self.method),
        }
    }

    /// The whole line, its members in one of three orders and spacings (`style`): only the
    /// payload and the id have to survive, not the envelope's layout.
    fn line(&self, session: &str, style: usize) -> String {
        let method = Value::from(self.method).to_string();
        let params = self.params_text(session);
        let mut members: Vec<(&str, String)> = vec![("jsonrpc", "\"2.0\"".to_string())];
        if let Some(id) = self.id {
            members.push(("id", id.to_string()));
        }
        members.push(("method", method));
        if let Some(params) = params {
            members.push(("params", params));
        }
        let (separator, colon) = match style % 3 {
            0 => (",", ":"),
            1 => {
                members.reverse();
                (" , ", " : ")
            }
            _ => {
                members.rotate_left(1);
                (",\t", ":")
            }
        };
        let members: Vec<String> = members
            .iter()
            .map(|(name, value)| format!("\"{name}\"{colon}{value}"))
            .collect();
        match style % 3 {
            1 => format!("{{ {} }}", members.join(separator)),
            _ => format!("{{{}}}", members.join(separator)),
        }
    }
}

/// What the editor sends toward the agent, in this order: the methods added to ACP lately
/// (schema 1.20 shapes), ones the conductor cannot know (RFD drafts, removed, made up) and
/// extensions, with odd but valid JSON in params and ids. Every answer text is different,
/// so that each can be found at each hop.
const EDITOR_CALLS: &[Call] = &[
    request(
        r#""a\u0031""#,
        "session/close",
        r#"{"sessionId":"$SESSION","_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","z":true,"a":false}}"#,
        result(r#"{"_meta":{"closedBy":"test-agent"}}"#),
    ),
    notification(
        "document/didOpen",
        r#"{"sessionId":"$SESSION","uri":"file:///path/to/file.rs","languageId":"rust","version":1,"text":"fn main() {\n    println!(\"h\u00e9llo \ud83c\udf0d\");\n}\n"}"#,
    ),
    request(
        "0",
        "session/list",
        r#"{"cwd":"/home/us\u00e9r/proj\u00e9t","cursor":"eyJwYWdlIjoyfQ==","_meta":{"z":{"y":[1,2.50,-0,1E+2]}}}"#,
        result(
            r#"{"sessions":[{"sessionId":"sess_abc123","cwd":"/home/user/project","title":"Fix \u2603 bug","updatedAt":"2026-11-02T09:00:00Z","_meta":{"big":9007199254740993}}],"nextCursor":"eyJwYWdlIjozfQ=="}"#,
        ),
    ),
    request(
        "9007199254740993",
        "session/delete",
        r#"{"sessionId":"sess_gone"}"#,
        error(
            r#"{"code":-32002,"message":"Resource not found: sess_gone","data":{"sessionId":"sess_gone"}}"#,
        ),
    ),
    request(
        r#""set config option""#,
        "session/set_config_option",
        r#"{"sessionId":"$SESSION","configId":"model","value":"model-2","_meta":{"ui":{"source":"picker"}}}"#,
        result(
            r#"{"configOptions":[{"id":"model","name":"Model","category":"model","type":"select","currentValue":"model-2","options":[{"value":"model-1","name":"Fast"},{"value":"model-2","name":"Accurate \ud83d\ude80"}]}]}"#,
        ),
    ),
    request(
        "-1",
        "session/set_model",
        r#"{"sessionId":"$SESSION","modelId":"acme/m\u00f6del-2"}"#,
        error(
            r#"{"code":-32601,"message":"Method not found","data":{"method":"session/set_model"}}"#,
        ),
    ),
    request(r#""0""#, "logout", "{}", result("{}")),
    request(
        "18446744073709551615",
        "providers/list",
        r#"{"_meta":{"client":"e2e"}}"#,
        result(
            r#"{"providers":[{"providerId":"main","supported":["anthropic","openai","_acme"],"required":true,"current":{"apiType":"anthropic","baseUrl":"https://llm.example.com/v1"}}]}"#,
        ),
    ),
    request(
        r#""\u00e9\ud83d\ude00""#,
        "nes/suggest",
        r#"{"sessionId":"nes_abc123","uri":"file:///path/to/file.rs","version":2,"position":{"line":5,"character":12},"selection":{"start":{"line":5,"character":4},"end":{"line":5,"character":12}},"triggerKind":"automatic","context":{"editHistory":[{"uri":"file:///path/to/file.rs","diff":"--- a/file.rs\n+++ b/file.rs\n@@ -3,0 +3,1 @@\n+    let x = 42;"}]}}"#,
        result(
            r#"{"suggestions":[{"id":"sugg_001","kind":"edit","uri":"file:///path/to/other_file.rs","edits":[{"range":{"start":{"line":5,"character":0},"end":{"line":5,"character":10}},"newText":"let result = helper();"}],"cursorPosition":{"line":5,"character":22}}]}"#,
        ),
    ),
    notification(
        "document/didChange",
        r#"{"sessionId":"$SESSION","uri":"file:///path/to/file.rs","version":2,"contentChanges":[{"range":{"start":{"line":1,"character":4},"end":{"line":1,"character":4}},"text":"let x = 42;\n    "}]}"#,
    ),
    request(
        r#""a\"b\\c""#,
        "session/archive",
        r#"{"sessionId":"$SESSION"}"#,
        result(r#"{"_meta":{"archived":true}}"#),
    ),
    request(
        "1",
        "session/status",
        r#"{"sessionId":"$SESSION"}"#,
        result(r#"{"status":"open","_meta":{"activeTurns":0}}"#),
    ),
    request_without_params(
        r#""""#,
        "auth/status",
        result(
            r#"{"state":"authenticated","accounts":[{"label":"Work","active":true,"email":"dev@example.com","organization":"Acme \u00c9"}]}"#,
        ),
    ),
    request(
        "42",
        "session/future_thing",
        r#"{"sessionId":"$SESSION","when":"later","n":-12345678901234567890,"f":6.02214076e23}"#,
        result(r#"{"future":"here","n":18446744073709551616}"#),
    ),
    notification(
        "_vendor/x/changed",
        r#"{"items":[{"id":1},{"id":2}],"_meta":{"seq":9007199254740993}}"#,
    ),
    request(
        r#""id with spaces""#,
        "_vendor/x",
        r#"{"q":"\u0000\u001f\"\\\/","arr":[[[]]],"obj":{"":""}}"#,
        error(r#"{"code":-32000,"message":"vendor says no","data":{"retryAfterMs":1500}}"#),
    ),
    request(
        r#""mcp""#,
        "mcp/list_servers",
        r#"{"sessionId":"$SESSION","_meta":{"why":"a made-up method in a namespace the conductor routes itself"}}"#,
        result(r#"{"servers":[{"serverId":"notes","transport":"acp"}]}"#),
    ),
    request(
        "7",
        "_vendor/sum",
        "[1, 2, 9007199254740993]",
        result("9007199254740996"),
    ),
    request(
        r#""\/slashed""#,
        "session/set_title",
        r#"{"sessionId":"$SESSION","title":"Investigate OAuth timeout"}"#,
        result(r#"{"title":"Investigate OAuth timeout"}"#),
    ),
    request(
        "-9007199254740993",
        "session/resume",
        r#"{"sessionId":"sess_abc123","cwd":"/home/user/project","mcpServers":[{"name":"fs","command":"/usr/local/bin/mcp-fs","args":["--root","/home/user/project"],"env":[{"name":"LOG","value":"debug"}]}]}"#,
        result(r#"{"configOptions":[],"_meta":{"resumed":"sess_abc123"}}"#),
    ),
    request(
        r#""9007199254740993""#,
        "session/fork",
        r#"{"sessionId":"sess_abc123","cwd":"/home/user/project","mcpServers":[]}"#,
        result(r#"{"sessionId":"sess_fork_1"}"#),
    ),
];

/// What the agent writes toward the editor during one prompt turn, in this order, with the
/// editor's answers to its requests.
const AGENT_CALLS: &[Call] = &[
    notification(
        "session/update",
        r#"{"sessionId":"$SESSION","update":{"sessionUpdate":"session_info_update","title":"Fix the \u00e9l\u00e8ve \"login\" bug","updatedAt":"2026-11-02T10:15:00Z","_meta":{"source":"auto-title","z":1,"a":2}}}"#,
    ),
    request(
        r#""elic-\u0031""#,
        "elicitation/create",
        r#"{"sessionId":"$SESSION","mode":"form","message":"Which account should I use?","requestedSchema":{"type":"object","properties":{"account":{"type":"string","title":"Account","enum":["work","personal"]},"remember":{"type":"boolean","title":"Remember \u2713","default":false}},"required":["account"]},"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}"#,
        result(
            r#"{"action":"accept","content":{"account":"work","remember":true},"_meta":{"answeredBy":"e2e-editor"}}"#,
        ),
    ),
    notification(
        "session/update",
        r#"{"sessionId":"$SESSION","update":{"sessionUpdate":"usage_update","used":53000,"size":200000,"cost":{"amount":0.045,"currency":"USD"}},"_meta":{"n":9007199254740993}}"#,
    ),
    request(
        "0",
        "elicitation/create",
        r#"{"sessionId":"$SESSION","mode":"url","elicitationId":"elic_2","url":"https://auth.example.com/device?code=AB-12&lang=fr","message":"Sign in to continue"}"#,
        result(r#"{"action":"decline","_meta":{"reason":"the user closed the dialog"}}"#),
    ),
    notification(
        "elicitation/complete",
        r#"{"elicitationId":"elic_2","_meta":{"completedAt":"2026-11-02T10:16:00Z"}}"#,
    ),
    notification(
        "session/update",
        r#"{"sessionId":"$SESSION","update":{"sessionUpdate":"config_option_update","configOptions":[{"id":"model","name":"Model","category":"model","type":"select","currentValue":"model-2","options":[{"value":"model-1","name":"Fast"},{"value":"model-2","name":"Accurate \ud83d\ude80","description":null}]},{"id":"brave","name":"Brave mode","type":"boolean","currentValue":true}]}}"#,
    ),
    notification(
        "session/update",
        r#"{"sessionId":"$SESSION","update":{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"web","description":"Search the web","input":{"hint":"query to search for"}},{"name":"test","description":"Run \"cargo test\"\t\u2014 all of it"}]}}"#,
    ),
    request(
        "9007199254740993",
        "elicitation/future",
        r#"{"sessionId":"$SESSION","mode":"_hologram","message":"Pick a colour","palette":[1.5e3,-0.0,1E-7]}"#,
        error(
            r#"{"code":-32601,"message":"Method not found","data":{"method":"elicitation/future"}}"#,
        ),
    ),
    notification(
        "session/update",
        r#"{"sessionId":"$SESSION","update":{"sessionUpdate":"mood_update","mood":"curious","intensity":0.75,"_meta":{"x-future":[null,true,{}]}}}"#,
    ),
    notification(
        "_vendor/tick",
        r#"{"tick":18446744073709551616,"emoji":"\ud83d\ude00","nested":{"_meta":{"deep":{"deeper":[]}}}}"#,
    ),
    request(
        r#""ask:\"1\"""#,
        "_vendor/ask",
        r#"{"question":"proceed?","choices":["yes","no"],"_meta":{"vendor":"acme"}}"#,
        result(r#"{"answer":"yes","_meta":{"z":0,"a":1}}"#),
    ),
    request_without_params(r#""ping""#, "_vendor/ping", result("null")),
    notification(
        "mcp/server_status",
        r#"{"serverId":"notes","status":"ready","tools":3}"#,
    ),
    notification("_vendor/log", r#"["warn","disk \u00bd full",{"at":1.0}]"#),
    request(
        "-7",
        "_vendor/choose",
        r#"[["a","b"],{"multi":false}]"#,
        result(r#""b""#),
    ),
    notification(
        "session/update",
        r#"{"sessionId":"$SESSION","update":{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"plan-1","entries":[{"content":"Step 1","priority":"high","status":"pending"}]}}}"#,
    ),
    notification(
        "session/update",
        r#"{"sessionId":"$SESSION","update":{"sessionUpdate":"plan_removed","planId":"plan-1"}}"#,
    ),
];

/// The chain of 2 test proxies, the test-agent answering `calls` from its replies file,
/// initialized with a session open; returns the session id.
fn start(label: &str, calls: &[Call]) -> (TestChain, Editor, String) {
    let answers: Vec<&str> = EDITOR_CALLS
        .iter()
        .chain(AGENT_CALLS)
        .filter_map(|call| call.answer.map(|a| a.text))
        .collect();
    assert_eq!(
        answers.iter().collect::<HashSet<_>>().len(),
        answers.len(),
        "the tables' answers must all differ, for each hop's answers to be told apart"
    );
    let binaries = binaries!();
    let mut chain = TestChain::with_test_proxies(&binaries, label, PROXIES.len());
    let replies: Vec<String> = calls
        .iter()
        .filter_map(|call| {
            let answer = call.answer?;
            Some(agent_script::reply_line(call.method, answer.kind, answer.text) + "\n")
        })
        .collect();
    let replies_file = chain.file(AGENT, "replies");
    std::fs::write(&replies_file, replies.concat()).expect("write the agent's replies");
    chain.agent_args(&[
        "--updates",
        "0",
        "--replies",
        &replies_file.display().to_string(),
    ]);
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();
    (chain, editor, session)
}

fn parse(line: &str) -> RawMessage {
    RawMessage::parse(line).unwrap_or_else(|e| panic!("not a JSON object ({e}): {line}"))
}

fn params_text(message: &RawMessage) -> Option<&str> {
    message.params().map(|p| p.get())
}

/// Whether `message` is `call` as its sender wrote it: the method, the params' very bytes,
/// and a request exactly when the call is one (with whatever id this hop uses).
fn carries(message: &RawMessage, call: &Call, session: &str) -> bool {
    message.method().as_deref() == Some(call.method)
        && message.is_request() == call.id.is_some()
        && params_text(message) == call.params_text(session).as_deref()
}

/// Whether `message` is a `proxy/successor` (either spelling) carrying `call`: the inner
/// method and params as the sender wrote them, and the envelope a request exactly when the
/// call is one (the inner message has no id: the envelope's stands for it on this hop).
fn carries_wrapped(message: &RawMessage, call: &Call, session: &str) -> bool {
    unwrapped(message).is_some_and(|inner| {
        inner.method().as_deref() == Some(call.method)
            && message.is_request() == call.id.is_some()
            && params_text(&inner) == call.params_text(session).as_deref()
    })
}

/// The message inside a `proxy/successor` (either spelling), if `message` is one.
fn unwrapped(message: &RawMessage) -> Option<RawMessage> {
    let method = message.method()?;
    if method != "proxy/successor" && method != "_proxy/successor" {
        return None;
    }
    RawMessage::parse(message.params()?.get()).ok()
}

/// The recorded lines of `name` that are (plain) or carry (wrapped) a message for `method`.
fn lines_about<'a>(lines: &'a [String], method: &str) -> Vec<&'a str> {
    lines
        .iter()
        .filter(|line| {
            let message = parse(line);
            let inner = unwrapped(&message);
            message.method().as_deref() == Some(method)
                || inner.is_some_and(|inner| inner.method().as_deref() == Some(method))
        })
        .map(String::as_str)
        .collect()
}

/// `name`'s recording once `done` holds, or as it is after [`patience`]: notifications are not
/// answered, so their arrival can only be waited for.
fn recording_when(chain: &TestChain, name: &str, done: impl Fn(&[String]) -> bool) -> Vec<String> {
    let deadline = Instant::now() + patience();
    loop {
        let lines = chain.recording(name);
        if done(&lines) || Instant::now() >= deadline {
            return lines;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A response's id text and its outcome (kind and exact text).
fn response_parts(message: &RawMessage) -> (Option<&str>, Option<(&'static str, &str)>) {
    (
        message.id().map(|id| id.get()),
        message.outcome().map(|(kind, text)| (kind, text.get())),
    )
}

/// Checks that `response_line` answers `call` with the id the sender wrote and the answer's
/// bytes; `who` says where it was read.
fn assert_answered(response_line: &str, call: &Call, who: &str) {
    let answer = call.answer.expect("a request");
    let response = parse(response_line);
    let (id, outcome) = response_parts(&response);
    assert_eq!(
        id,
        call.id,
        "{}: the id of the answer {who} got is not the one it wrote: {response_line}",
        call.name()
    );
    assert_eq!(
        outcome,
        Some((answer.kind, answer.text)),
        "{}: the answer {who} got is not the {} the other end wrote, byte for byte: {response_line}",
        call.name(),
        answer.kind
    );
}

/// Each proxy got every call of `calls` once, the editor's plain (from its predecessor) and
/// the agent's wrapped in `proxy/successor` (from its successor), params byte for byte, and
/// never the other way; and each answer once, as the answering end wrote it.
fn assert_proxies_saw(chain: &TestChain, calls: &[Call], session: &str, toward_agent: bool) {
    for proxy in PROXIES {
        let lines = chain.recording(proxy);
        let messages: Vec<RawMessage> = lines.iter().map(|line| parse(line)).collect();
        for call in calls {
            let of_method = |m: &RawMessage| m.method().as_deref() == Some(call.method);
            let wrapping_method = |m: &RawMessage| unwrapped(m).is_some_and(|i| of_method(&i));
            let (right_way, wrong_way, how, other) = if toward_agent {
                (
                    messages
                        .iter()
                        .filter(|m| carries(m, call, session))
                        .count(),
                    messages.iter().filter(|m| wrapping_method(m)).count(),
                    "plain (from its predecessor)",
                    "wrapped, as if from its successor",
                )
            } else {
                (
                    messages
                        .iter()
                        .filter(|m| carries_wrapped(m, call, session))
                        .count(),
                    messages.iter().filter(|m| of_method(m)).count(),
                    "wrapped in proxy/successor (from its successor)",
                    "plain, as if from its predecessor",
                )
            };
            assert_eq!(
                right_way,
                1,
                "{}: {proxy} should have got it once {how}, params byte for byte; its lines \
                 about {}: {:#?}",
                call.name(),
                call.method,
                lines_about(&lines, call.method)
            );
            // Every message of the method comes from one side: none may arrive the other way.
            assert_eq!(
                wrong_way,
                0,
                "{}: {proxy} got {} messages {other}; its lines about {}: {:#?}",
                call.name(),
                call.method,
                call.method,
                lines_about(&lines, call.method)
            );
            if let Some(answer) = call.answer {
                let answers = messages
                    .iter()
                    .filter(|m| m.is_response())
                    .filter(|m| response_parts(m).1 == Some((answer.kind, answer.text)))
                    .count();
                assert_eq!(
                    answers,
                    1,
                    "{}: {proxy} should have got the {} {} once (to pass it on), byte for byte",
                    call.name(),
                    answer.kind,
                    answer.text
                );
            }
        }
    }
}

/// The messages the editor sent (`Direction::Sent`) or received, parsed; one write may have
/// held several lines.
fn editor_transcript(editor: &Editor, direction: Direction) -> Vec<RawMessage> {
    editor
        .transcript
        .iter()
        .filter(|(way, _)| *way == direction)
        .flat_map(|(_, text)| text.lines())
        .map(parse)
        .collect()
}

fn editor_received(editor: &Editor) -> Vec<RawMessage> {
    editor_transcript(editor, Direction::Received)
}

/// Every response the editor received answers one of its own requests, once: none of its own
/// answers (to the agent's requests) was delivered back to it.
fn assert_editor_got_only_answers_to_its_requests(editor: &Editor) {
    // Ids may be used again once answered (`0` by `initialize` and a later request): a
    // response takes one use of its id.
    let mut unanswered: Vec<Value> = editor_transcript(editor, Direction::Sent)
        .into_iter()
        .filter(RawMessage::is_request)
        .filter_map(|m| m.id_value())
        .collect();
    for message in editor_received(editor).iter().filter(|m| m.is_response()) {
        let id = message.id_value().unwrap_or(Value::Null);
        let Some(at) = unanswered.iter().position(|asked| *asked == id) else {
            panic!(
                "the editor got a response with id {id} that answers none of its requests, or \
                 answers one twice: {:?}",
                message.outcome().map(|(kind, text)| (kind, text.get()))
            );
        };
        unanswered.remove(at);
    }
}

/// The agent got every call once, as the editor wrote its params, in the order sent, and no
/// response (it asked nothing).
fn assert_agent_got_each_once(agent_saw: &[String], calls: &[Call], session: &str) {
    let messages: Vec<RawMessage> = agent_saw.iter().map(|line| parse(line)).collect();
    let mut last = None;
    for call in calls {
        let at: Vec<usize> = messages
            .iter()
            .enumerate()
            .filter(|(_, m)| carries(m, call, session))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(
            at.len(),
            1,
            "{}: the agent should have got it once as the editor wrote it, a {}; its lines \
             about {}: {:#?}",
            call.name(),
            if call.id.is_some() {
                "request"
            } else {
                "notification"
            },
            call.method,
            lines_about(agent_saw, call.method)
        );
        assert!(
            last < Some(at[0]),
            "{}: the agent got it before what the editor sent earlier",
            call.name()
        );
        last = Some(at[0]);
        let unwrapped_copies = messages
            .iter()
            .filter_map(unwrapped)
            .filter(|inner| inner.method().as_deref() == Some(call.method))
            .count();
        assert_eq!(
            unwrapped_copies,
            0,
            "{}: the agent got it wrapped",
            call.name()
        );
    }
    let responses: Vec<&String> = agent_saw
        .iter()
        .filter(|line| parse(line).is_response())
        .collect();
    assert!(
        responses.is_empty(),
        "the agent asked nothing, yet got responses: {responses:#?}"
    );
}

/// The editor got nothing but responses to its own requests: none of what it sent came back.
fn assert_nothing_came_back_to_the_editor(editor: &Editor) {
    let calls: Vec<String> = editor_received(editor)
        .iter()
        .filter(|m| m.method().is_some())
        .map(|m| format!("{:?} {:?}", m.method(), params_text(m)))
        .collect();
    assert!(
        calls.is_empty(),
        "the editor was sent calls though the agent sent none: {calls:#?}"
    );
    assert_editor_got_only_answers_to_its_requests(editor);
}

#[test]
fn editor_calls_of_newer_and_unknown_methods_reach_the_agent_untouched_and_come_back_answered() {
    let (chain, mut editor, session) = start("newer-editor", EDITOR_CALLS);
    for (i, call) in EDITOR_CALLS.iter().enumerate() {
        editor.send_line(&call.line(&session, i));
        if call.id.is_some() {
            let line = editor.recv_line();
            assert_answered(&line, call, "the editor");
        }
    }
    let agent_saw = recording_when(&chain, AGENT, |lines| {
        EDITOR_CALLS.iter().all(|call| {
            lines
                .iter()
                .any(|line| carries(&parse(line), call, &session))
        })
    });
    assert_agent_got_each_once(&agent_saw, EDITOR_CALLS, &session);
    assert_proxies_saw(&chain, EDITOR_CALLS, &session, true);
    assert_nothing_came_back_to_the_editor(&editor);
}

#[test]
fn editor_calls_sent_in_one_write_are_each_answered_under_their_own_id() {
    let (chain, mut editor, session) = start("newer-editor-burst", EDITOR_CALLS);
    let lines: String = EDITOR_CALLS
        .iter()
        .enumerate()
        .map(|(i, call)| call.line(&session, i + 1) + "\n")
        .collect();
    editor.send_bytes(lines.as_bytes());
    let requests: Vec<&Call> = EDITOR_CALLS.iter().filter(|c| c.id.is_some()).collect();
    let mut responses = Vec::new();
    while responses.len() < requests.len() {
        responses.push(editor.recv_line());
    }
    for call in &requests {
        let id: Value = serde_json::from_str(call.id.expect("a request")).expect("JSON id");
        let answers: Vec<&String> = responses
            .iter()
            .filter(|line| parse(line).id_value() == Some(id.clone()))
            .collect();
        assert_eq!(
            answers.len(),
            1,
            "{}: one answer with id {id} expected among {responses:#?}",
            call.name()
        );
        assert_answered(answers[0], call, "the editor");
    }
    let agent_saw = recording_when(&chain, AGENT, |lines| {
        EDITOR_CALLS.iter().all(|call| {
            lines
                .iter()
                .any(|line| carries(&parse(line), call, &session))
        })
    });
    assert_agent_got_each_once(&agent_saw, EDITOR_CALLS, &session);
    assert_proxies_saw(&chain, EDITOR_CALLS, &session, true);
    assert_nothing_came_back_to_the_editor(&editor);
}

#[test]
fn agent_calls_of_newer_and_unknown_methods_and_updates_reach_the_editor_untouched_in_order() {
    let (chain, mut editor, session) = start("newer-agent", &[]);
    let recipe = AGENT_CALLS
        .iter()
        .enumerate()
        .fold(Recipe::new(), |recipe, (i, call)| {
            recipe.line(&call.line(&session, i))
        });
    let prompt_id = editor.start_request_with_id(
        r#""turn-\u0031""#,
        "session/prompt",
        prompt_params(&session, &recipe.prompt(agent_script::EMIT)),
    );

    // Everything the agent wrote before the turn's response, as the editor got it.
    let mut received = Vec::new();
    let turn_end = loop {
        let line = editor.recv_line();
        let message = parse(&line);
        if message.is_response() && message.id_value().as_ref() == Some(&prompt_id) {
            break message;
        }
        received.push(line);
    };
    assert_eq!(
        turn_end
            .member("result")
            .map(|r| jsonrpc::to_value(r)["stopReason"].clone()),
        Some(Value::from("end_turn")),
        "the emitting turn ends as usual"
    );
    let messages: Vec<RawMessage> = received.iter().map(|line| parse(line)).collect();
    let mut last = None;
    for call in AGENT_CALLS {
        let at: Vec<usize> = messages
            .iter()
            .enumerate()
            .filter(|(_, m)| carries(m, call, &session))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(
            at.len(),
            1,
            "{}: the editor should have got it once, as the agent wrote it, before the turn \
             ended; its lines about {}: {:#?}",
            call.name(),
            call.method,
            lines_about(&received, call.method)
        );
        assert!(
            last < Some(at[0]),
            "{}: the editor got it before what the agent wrote earlier: {received:#?}",
            call.name()
        );
        last = Some(at[0]);
    }

    // The editor answers, last request first, with the conductor's ids and the table's bytes.
    for call in AGENT_CALLS.iter().rev().filter(|c| c.id.is_some()) {
        let request = messages
            .iter()
            .find(|m| carries(m, call, &session))
            .expect("found above");
        let answer = call.answer.expect("a request");
        let id = request.id().expect("a request").get();
        editor.send_line(&jsonrpc::response_line(id, answer.kind, answer.text));
    }

    let requests: Vec<&Call> = AGENT_CALLS.iter().filter(|c| c.id.is_some()).collect();
    let agent_ids: Vec<Value> = requests
        .iter()
        .map(|call| serde_json::from_str(call.id.expect("a request")).expect("JSON id"))
        .collect();
    let agent_saw = recording_when(&chain, AGENT, |lines| {
        agent_ids.iter().all(|id| {
            lines.iter().any(|line| {
                let m = parse(line);
                m.is_response() && m.id_value().as_ref() == Some(id)
            })
        })
    });
    let agent_messages: Vec<RawMessage> = agent_saw.iter().map(|line| parse(line)).collect();
    for (call, id) in requests.iter().zip(&agent_ids) {
        let answers: Vec<&String> = agent_saw
            .iter()
            .zip(&agent_messages)
            .filter(|(_, m)| m.is_response() && m.id_value().as_ref() == Some(id))
            .map(|(line, _)| line)
            .collect();
        assert_eq!(
            answers.len(),
            1,
            "{}: the agent should have got one answer under its id {id}: {agent_saw:#?}",
            call.name()
        );
        assert_answered(answers[0], call, "the agent");
    }
    for message in &agent_messages {
        let method = message.method();
        let inner = unwrapped(message).and_then(|inner| inner.method());
        for call in AGENT_CALLS {
            assert!(
                method.as_deref() != Some(call.method) && inner.as_deref() != Some(call.method),
                "{}: what the agent wrote came back to it: {:?} {:?}",
                call.name(),
                method,
                params_text(message)
            );
        }
    }
    let strays: Vec<&String> = agent_saw
        .iter()
        .zip(&agent_messages)
        .filter(|(_, m)| m.is_response() && !agent_ids.contains(&m.id_value().unwrap_or_default()))
        .map(|(line, _)| line)
        .collect();
    assert!(
        strays.is_empty(),
        "the agent got responses to requests it never sent: {strays:#?}"
    );

    assert_proxies_saw(&chain, AGENT_CALLS, &session, false);
    assert_editor_got_only_answers_to_its_requests(&editor);
}
