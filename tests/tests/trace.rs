//! The per-hop trace of a real run (`run --trace`, `trace = "..."`): every line each component
//! received and sent is a record on its link, requests map hop to hop to the agent and their
//! answers back, cancels name the request on each hop, the MCP bridge's link is traced, and
//! secrets never reach the file; `trace_payloads = false` leaves payloads out.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use acp_conductor_tests::editor::{Direction, Reply, initialize_params, prompt_params, refuse};
use acp_conductor_tests::scenario::chunk_of;
use acp_conductor_tests::test_chain::{AGENT, AgentEntry, TestChain, toml_string};
use acp_conductor_tests::trace_file::{TraceFile, redacted};
use acp_conductor_tests::{Editor, binaries};
use serde_json::{Value, json};

const CONFORMANCE_AGENT: &str = env!("CARGO_BIN_EXE_conformance-agent");
const MCP_PROVIDER: &str = env!("CARGO_BIN_EXE_test-mcp-provider");

/// The value of an `env` entry of the first proxy: a secret.
const ENV_SECRET: &str = "s3cr3t-env-4711xyz";
/// Matched by the `redact` pattern of the configuration.
const TOKEN: &str = "tok-deadbeef";
const REDACT: &str = "tok-[0-9a-f]{8}";
/// The MCP server the provider declares.
const SERVER: &str = "tools";

/// `--record`, `--record-sent`, `--pid-file` for fixture `name`.
fn recorded_args(chain: &TestChain, name: &str) -> Vec<String> {
    [
        ("--record", "record"),
        ("--record-sent", "sent"),
        ("--pid-file", "pid"),
    ]
    .into_iter()
    .flat_map(|(option, kind)| {
        [
            option.to_string(),
            chain.file(name, kind).display().to_string(),
        ]
    })
    .collect()
}

/// Editor, test proxies `p1` (with a secret in its `env`) and `p2`, an MCP provider, and the
/// conformance agent, each recording what it received and sent, traced to `trace.jsonl`.
fn recorded_chain() -> TestChain {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "trace");
    for name in ["p1", "p2"] {
        let mut args = recorded_args(&chain, name);
        args.extend(["--tag".to_string(), name.to_string()]);
        let proxy = chain.binaries.proxy.clone();
        chain.add_proxy(name, &proxy, &args);
    }
    chain.proxies[0].setting(
        "env",
        &format!("{{ API_TOKEN = {} }}", toml_string(ENV_SECRET)),
    );
    let file = |kind: &str| chain.file("provider", kind).display().to_string();
    let provider_args = [
        "--variant",
        "connectionless",
        "--name",
        SERVER,
        "--record",
        &file("events"),
        "--record-received",
        &file("record"),
        "--record-sent",
        &file("sent"),
        "--pid-file",
        &file("pid"),
    ];
    chain.add_proxy("provider", Path::new(MCP_PROVIDER), &provider_args);
    let mut agent_args = recorded_args(&chain, AGENT);
    agent_args.extend([
        "--record-shim".to_string(),
        chain.file(AGENT, "shim").display().to_string(),
    ]);
    chain.agent = Some(AgentEntry {
        command: PathBuf::from(CONFORMANCE_AGENT),
        args: agent_args,
        settings: Vec::new(),
    });
    chain.conductor_setting("trace", &toml_string("trace.jsonl"));
    chain.conductor_setting("redact", &format!("[{}]", toml_string(REDACT)));
    chain
}

/// What the editor answers the agent's requests with.
fn answer(request: &Value) -> Reply {
    match request["method"].as_str() {
        Some("session/request_permission") => {
            Ok(json!({ "outcome": { "outcome": "selected", "optionId": "allow-once" } }))
        }
        Some("fs/read_text_file") => Ok(json!({ "content": format!("the file says {TOKEN}") })),
        _ => refuse(request),
    }
}

/// The lines of a fixture's recording, parsed.
fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("no recording {}: {e}", path.display()))
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect()
}

fn secrets_out(values: Vec<Value>) -> Vec<Value> {
    values
        .iter()
        .map(|v| redacted(v, &[ENV_SECRET, TOKEN]))
        .collect()
}

/// Every line `link`'s peer received is an `out` record of the link, and every line it sent
/// an `in` record, in the same order, secrets redacted.
fn assert_link_complete(trace: &TraceFile, link: &str, received: Vec<Value>, sent: Vec<Value>) {
    assert!(!received.is_empty() && !sent.is_empty(), "{link} took part");
    assert_eq!(
        trace.payloads(link, "out"),
        secrets_out(received),
        "what {link} received"
    );
    assert_eq!(
        trace.payloads(link, "in"),
        secrets_out(sent),
        "what {link} sent"
    );
}

/// The editor's own lines, as its transcript has them.
fn editor_lines(editor: &Editor, direction: Direction) -> Vec<Value> {
    editor
        .transcript
        .iter()
        .filter(|(d, _)| *d == direction)
        .map(|(_, line)| serde_json::from_str(line).expect("the editor's lines are JSON"))
        .collect()
}

#[test]
fn a_traced_run_records_every_hop_maps_every_id_and_keeps_secrets_out() {
    let chain = recorded_chain();
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();
    // The agent asks the editor twice (through every proxy), uses the provider's MCP server
    // through a bridge shim, and says the words it does not know back, secrets included.
    let words = format!("permission read mcp {ENV_SECRET} {TOKEN}");
    let turn = editor.request_answering("session/prompt", prompt_params(&session, &words), answer);
    assert_eq!(turn.result()["stopReason"], "end_turn", "{}", turn.response);
    assert_eq!(
        turn.requests.len(),
        2,
        "permission and read reached the editor"
    );
    assert!(
        turn.chunk_texts()
            .iter()
            .any(|t| t.starts_with(&format!("mcp {SERVER}: "))),
        "the agent used the MCP server: {:?}",
        turn.chunk_texts()
    );
    // The secret again, spelled with JSON escapes: redacted all the same.
    let escaped: String = ENV_SECRET
        .chars()
        .map(|c| format!("\\u{:04x}", u32::from(c)))
        .collect();
    editor.send_line(&format!(
        r#"{{"jsonrpc":"2.0","method":"_trace/note","params":{{"text":"{escaped}"}}}}"#
    ));
    // A turn cancelled with `$/cancel_request`.
    let hanging = editor.start_request("session/prompt", prompt_params(&session, "hang"));
    editor.wait_for(|message| chunk_of(message) == Some("hanging"));
    editor.notify("$/cancel_request", json!({ "requestId": hanging }));
    let cancelled = editor.finish_request(&hanging, refuse);
    assert_eq!(cancelled.error()["code"], -32800, "{}", cancelled.response);
    editor.close_stdin();
    assert!(editor.wait_exit().success(), "{}", editor.stderr());

    let path = chain.dir.join("trace.jsonl");
    let raw = std::fs::read(&path).expect("the trace file");
    let trace = TraceFile::read(&path);

    // The header lists the chain as its records name it; the run ended normally, complete.
    assert_eq!(trace.chain, ["editor", "p1", "p2", "provider", AGENT]);
    let header = &trace.records[0];
    assert_eq!(header["format"], "acp-conductor-trace");
    assert_eq!(header["version"], 1);
    assert_eq!(header["components"][1]["kind"], "native");
    assert_eq!(header["components"][4]["role"], "agent");
    let end = trace.records.last().expect("records");
    assert_eq!(end["type"], "end", "{end}");
    assert_eq!(end["reason"], "the editor closed the conductor's stdin");
    assert_eq!(end["dropped"], 0);
    assert!(!trace.records.iter().any(|r| r["type"] == "dropped"));
    assert!(
        trace.records[1..]
            .iter()
            .all(|r| r["t"].as_f64().is_some_and(|t| t >= 0.0)),
        "every record has its time"
    );

    // Secrets: not in the file's bytes, not in any string once decoded; redacted where
    // they were.
    for secret in [ENV_SECRET, TOKEN] {
        assert!(
            !raw.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "{secret} is in the trace file"
        );
        assert!(
            !trace.strings().iter().any(|s| s.contains(secret)),
            "{secret} is in a string of the trace"
        );
    }
    assert!(raw.windows(10).any(|w| w == b"[redacted]"));
    let note = trace
        .on("agent", "out")
        .into_iter()
        .find(|(_, r)| r["method"] == "_trace/note")
        .expect("the note reached the agent");
    assert_eq!(note.1["payload"]["params"]["text"], "[redacted]");

    // Every line each component received and sent is a record on its link, in order.
    let editor_in = editor_lines(&editor, Direction::Sent);
    let editor_out = editor_lines(&editor, Direction::Received);
    assert_link_complete(&trace, "editor", editor_out, editor_in);
    for name in ["p1", "p2", "provider", AGENT] {
        assert_link_complete(
            &trace,
            name,
            lines(&chain.file(name, "record")),
            lines(&chain.file(name, "sent")),
        );
    }

    // The bridge shim's link: its hello, then what the agent's MCP client read from it.
    let shim = format!("shim:{SERVER}#1");
    let shim_out = trace.payloads(&shim, "out");
    assert_eq!(shim_out.first(), Some(&json!({ "mcpBridge": "ok" })));
    assert_eq!(
        shim_out[1..],
        secrets_out(lines(&chain.file(AGENT, "shim")))[..]
    );
    let shim_in = trace.on(&shim, "in");
    assert_eq!(shim_in[0].1["payload"]["mcpBridge"], 1);
    assert!(shim_in.iter().all(|(_, r)| r["position"].is_null()));

    // Every request maps hop to hop to the end of the chain, and its answer all the way back:
    // the editor's to the agent, the agent's to the editor, the shim's MCP calls to the
    // provider.
    let mut taken = HashSet::new();
    let mut walked = 0;
    for (_, request) in trace.on("editor", "in") {
        if request["kind"] != "request" {
            continue;
        }
        let hops = trace.follow_request("editor", &request["id"], &mut taken);
        assert_eq!(
            hops.iter().map(|h| h.to.as_str()).collect::<Vec<_>>(),
            ["p1", "p2", "provider", AGENT],
            "{request}"
        );
        if request["id"] != hanging {
            trace.follow_answer(&hops);
        }
        walked += 1;
    }
    assert_eq!(walked, 4, "initialize, session/new and two prompts");
    let mut asked_editor = 0;
    for (_, request) in trace.on(AGENT, "in") {
        if request["kind"] != "request" {
            continue;
        }
        let hops = trace.follow_request(AGENT, &request["id"], &mut taken);
        assert_eq!(hops.last().unwrap().to, "editor", "{request}");
        assert_eq!(hops.len(), 4);
        trace.follow_answer(&hops);
        asked_editor += 1;
    }
    assert_eq!(asked_editor, 2);
    let mut mcp_calls = Vec::new();
    for (_, request) in trace.on(&shim, "in") {
        if request["kind"] != "request" {
            continue;
        }
        let method = request["method"].as_str().unwrap_or_default().to_string();
        if request["mapsTo"].is_null() {
            // The bridge answers what a connectionless server has no form for itself.
            assert_eq!(method, "ping", "{request}");
            continue;
        }
        // Relayed to the server's owner as `mcp/message`, answered back on the shim.
        let hop = trace.hop(&shim, &request["id"]);
        assert_eq!(hop.to, "provider");
        trace.follow_answer(&[hop]);
        mcp_calls.push(method);
    }
    assert!(
        mcp_calls.contains(&"tools/call".to_string()),
        "{mcp_calls:?}"
    );

    // The cancel names, on each hop, the id the hanging prompt has there.
    let hops = trace.follow_request("editor", &hanging, &mut HashSet::new());
    for hop in &hops {
        let (_, cancel) = trace
            .on(&hop.from, "in")
            .into_iter()
            .find(|(_, r)| {
                r["method"] == "$/cancel_request" && r["payload"]["params"]["requestId"] == hop.id
            })
            .unwrap_or_else(|| panic!("no cancel for {} on {}", hop.id, hop.from));
        assert_eq!(
            cancel["cancels"],
            json!({ "link": hop.to, "id": hop.to_id }),
            "{cancel}"
        );
        assert!(
            trace.on(&hop.to, "out").iter().any(|(_, r)| {
                r["method"] == "$/cancel_request"
                    && r["payload"]["params"]["requestId"] == hop.to_id
            }),
            "the cancel reached {} naming {}",
            hop.to,
            hop.to_id
        );
    }
    let error = trace.follow_answer(&hops);
    assert_eq!(error["kind"], "error");
    assert_eq!(error["method"], "session/prompt");

    // Component events: each started with its pid, each exited at the end.
    let events = |event: &str| -> Vec<String> {
        trace
            .records
            .iter()
            .filter(|r| r["type"] == "component" && r["event"] == event)
            .map(|r| r["link"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(events("started"), ["p1", "p2", "provider", AGENT]);
    let mut exited = events("exited");
    exited.sort();
    assert_eq!(exited, [AGENT, "p1", "p2", "provider"]);
}

#[test]
fn without_payloads_records_keep_their_shape_and_the_flag_wins_over_the_file() {
    let binaries = binaries!();
    let mut chain = TestChain::with_test_proxies(&binaries, "trace-no-payloads", 1);
    chain.conductor_setting("trace", &toml_string("from-config.jsonl"));
    chain.conductor_setting("trace_payloads", "false");
    let flag_file = chain.dir.join("from-flag.jsonl");
    let mut editor = chain.launch_with(&["--trace", &flag_file.display().to_string()]);
    editor.request("initialize", initialize_params());
    let session = editor.new_session();
    let prompt = editor.start_request("session/prompt", prompt_params(&session, "hang"));
    editor.wait_for(|message| chunk_of(message) == Some("hanging"));
    // A signal ends the run: the trace still ends with its reason, and the error the
    // waiting prompt got.
    editor.signal(libc::SIGTERM);
    let answer = editor.finish_request(&prompt, refuse);
    assert_eq!(answer.error()["code"], -32002);
    assert!(editor.wait_exit().success());

    assert!(
        !chain.dir.join("from-config.jsonl").exists(),
        "--trace replaces the file's trace"
    );
    let trace = TraceFile::read(&flag_file);
    assert_eq!(trace.records[0]["payloads"], false);
    assert_eq!(trace.chain, ["editor", "p1", AGENT]);
    let messages: Vec<&Value> = trace
        .records
        .iter()
        .filter(|r| r["type"] == "message")
        .collect();
    assert!(messages.len() >= 12, "{messages:#?}");
    assert!(messages.iter().all(|r| r.get("payload").is_none()));
    let (_, asked) = trace.find("editor", "in", &["request"], &prompt);
    assert_eq!(asked["method"], "session/prompt");
    assert_eq!(asked["session"], session.as_str());
    assert!(asked["bytes"].as_u64().unwrap() > 50);
    trace.follow_request("editor", &prompt, &mut HashSet::new());
    let (_, refused) = trace.find("editor", "out", &["error"], &prompt);
    assert_eq!(refused["method"], "session/prompt");
    let end = trace.records.last().unwrap();
    assert_eq!(end["type"], "end");
    assert_eq!(end["reason"], "the conductor received SIGTERM");
}

#[test]
fn a_trace_file_that_cannot_be_written_stops_the_run_before_anything_starts() {
    let binaries = binaries!();
    let chain = TestChain::new(&binaries, "trace-unwritable");
    let nowhere = chain.dir.join("no-such-dir/trace.jsonl");
    let mut editor = chain.launch_with(&["--trace", &nowhere.display().to_string()]);
    let status = editor.wait_exit();
    assert_eq!(status.code(), Some(1));
    let stderr = editor.stderr();
    assert!(
        stderr.contains(&format!("cannot write the trace to {}", nowhere.display())),
        "{stderr}"
    );
    assert!(
        !chain.file(AGENT, "pid").exists(),
        "the agent was not started"
    );
}
