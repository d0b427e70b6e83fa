//! Plan operations (`plan_update`, `plan_removed`) end to end: they cross a chain of proxies
//! untouched, in every spelling peers use; `acp-conductor prompt` advertises `plan` and shows the
//! demo agent's checklist, outline and removal.

use std::process::Command;

use acp_conductor_tests::agent_script::{EMIT, Recipe};
use acp_conductor_tests::editor::{initialize_params, prompt_params};
use acp_conductor_tests::jsonrpc::RawMessage;
use acp_conductor_tests::{TestChain, binaries};
use serde_json::{Value, json};

/// The params of each `session/update` the agent writes, spelled the way a peer might: members
/// in any order, spaces, escapes, a number re-encoding would change. `SESSION` stands for the
/// session id.
const PLAN_OPERATIONS: [&str; 5] = [
    // Schema 1.20: items under `planId`.
    r#"{ "update" : {"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p1","entries":[{"content":"Caf\u00e9 \/ step 1","priority":"high","status":"pending"},{"content":"Step 2","priority":"low","status":"in_progress"}]}}, "sessionId":"SESSION" }"#,
    // Markdown with its file, the discriminators last.
    r##"{"sessionId":"SESSION","update":{"plan":{"path":"/work/plan.md","content":"# Steps\n- [ ] one\t\u2713","planId":"p2","type":"markdown"},"sessionUpdate":"plan_update"}}"##,
    // The RFD's older spelling: a `file` plan under `id`.
    r#"{"sessionId":"SESSION","update":{"sessionUpdate":"plan_update","plan":{"type":"file","id":"design-doc","uri":"file:///tmp/plan.md"},"_meta":{"n":1.50}}}"#,
    r#"{"sessionId":"SESSION","update":{"sessionUpdate":"plan_removed","planId":"p1","_meta":{"why":"done","at":1e3}}}"#,
    r#"{"sessionId":"SESSION","update":{"sessionUpdate":"plan_removed","id":"design-doc"}}"#,
];

#[test]
fn plan_operations_cross_three_proxies_byte_for_byte_in_order() {
    let binaries = binaries!();
    let chain = TestChain::with_test_proxies(&binaries, "plan-operations", 3);
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();
    let written: Vec<String> = PLAN_OPERATIONS
        .iter()
        .map(|params| params.replace("SESSION", &session))
        .collect();
    let mut recipe = Recipe::new();
    for params in &written {
        recipe = recipe.line(&format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{params}}}"#
        ));
    }
    let id = editor.start_request(
        "session/prompt",
        prompt_params(&session, &recipe.prompt(EMIT)),
    );

    let mut received = Vec::new();
    loop {
        let line = editor.recv_line();
        let message = RawMessage::parse(&line).expect("a JSON object");
        if message.is_response() {
            assert_eq!(message.id_value(), Some(id.clone()), "{line}");
            let response: Value = serde_json::from_str(&line).expect("JSON");
            assert_eq!(response["result"]["stopReason"], "end_turn", "{line}");
            break;
        }
        assert_eq!(
            message.method().as_deref(),
            Some("session/update"),
            "{line}"
        );
        received.push(message.params().expect("params").get().to_owned());
    }
    assert_eq!(received, written);

    // Each proxy carried each of them, in order, inside the conductor's `proxy/successor`.
    for proxy in ["p1", "p2", "p3"] {
        let recording = chain.recording(proxy);
        let mut from = 0;
        for params in &written {
            let wrapped = format!(r#""method":"session/update","params":{params}"#);
            let at = recording[from..]
                .iter()
                .position(|line| line.contains(&wrapped))
                .unwrap_or_else(|| panic!("{proxy} never carried {params} (after line {from})"));
            from += at + 1;
        }
    }
}

#[test]
fn prompt_command_advertises_plan_and_shows_the_demo_agents_plans() {
    let binaries = binaries!();
    let mut chain = TestChain::with_demo_agent(&binaries, "plan-prompt");
    // A recording proxy in front of the demo agent shows what the prompt client sent.
    chain.add_test_proxy("p1");
    let config = chain.write_config();
    let output = Command::new(&chain.binaries.conductor)
        .args(["prompt", "--config"])
        .arg(&config)
        .arg("--cwd")
        .arg(&chain.dir)
        .args([
            "--permissions",
            "deny",
            "What is the plan? Then write it down.",
        ])
        .output()
        .expect("run acp-conductor prompt");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(0),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let demo_file = chain.dir.join("demo.txt");
    let checklist = |change: &str, shown: &str, acted: &str| {
        format!(
            "[plan demo-checklist] checklist ({change})\n\
             [plan demo-checklist] - {shown} Show what the prompt contained (high)\n\
             [plan demo-checklist] - {acted} Carry out a requested write or read (medium)\n"
        )
    };
    let expected = format!(
        "{}\
         [plan demo-outline] markdown (new)\n\
         [plan demo-outline] | # Plan for turn 1\n\
         [plan demo-outline] |\n\
         [plan demo-outline] | 1. Show back the 1 content block(s) received\n\
         [plan demo-outline] | 2. Ask permission to write demo.txt (never written)\n\
         [plan demo-outline] | 3. End the turn\n\
         Demo agent here. I received 1 content block(s):\n\
         > What is the plan? Then write it down.\n\
         [tool] Write demo.txt (edit) pending\n\
         [permission] Write demo.txt: denied (reject_once)\n\
         [tool] demo-write-1 -> failed\n\
         Permission denied: demo.txt was not written.\n\
         {}\
         [plan demo-outline] removed (a markdown plan); still shown: demo-checklist\n\
         [stop] end_turn\n",
        checklist("new", "[~]", "[ ]"),
        checklist("updated", "[x]", "[x]"),
    );
    assert_eq!(stdout, expected, "stderr:\n{stderr}");
    assert!(!demo_file.exists());

    // The client's initialize, as the proxy in front of the agent got it: `plan: {}` advertised.
    let initialize = chain
        .received("p1")
        .into_iter()
        .find(|message| message["method"] == "proxy/initialize")
        .expect("p1 was initialized");
    let capabilities = &initialize["params"]["clientCapabilities"];
    assert_eq!(capabilities["plan"], json!({}), "{initialize}");
    assert_eq!(
        initialize["params"]["clientInfo"]["name"],
        Value::from("acp-conductor prompt")
    );
}

/// A client that does not advertise plan operations (acpx, Toad, the Python SDK's) gets the
/// demo agent's checklist as the baseline `plan` update, and again, every entry done, before the
/// turn ends: the spec's way to update a plan. It used to keep showing the plan in progress.
#[test]
fn a_client_without_plan_operations_sees_the_demo_agents_plan_finished_before_the_turn_ends() {
    let binaries = binaries!();
    let chain = TestChain::with_demo_agent(&binaries, "plan-baseline");
    let mut editor = chain.launch();
    let initialize = editor.initialize();
    assert!(
        initialize_params()["clientCapabilities"]
            .get("plan")
            .is_none(),
        "the test editor takes no plan operations"
    );
    assert_eq!(initialize["protocolVersion"], 1, "{initialize}");
    let session = editor.new_session();
    let exchange = editor.prompt(&session, "hello");
    let plan = |shown: &str, acted: &str| {
        json!({
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": { "sessionId": session, "update": { "sessionUpdate": "plan", "entries": [
                { "content": "Show what the prompt contained", "priority": "high", "status": shown },
                { "content": "Carry out a requested write or read", "priority": "medium", "status": acted },
            ] } },
        })
    };
    let plans: Vec<&Value> = exchange
        .notifications
        .iter()
        .filter(|message| {
            let kind = &message["params"]["update"]["sessionUpdate"];
            kind == "plan" || kind == "plan_update" || kind == "plan_removed"
        })
        .collect();
    assert_eq!(
        plans,
        [
            &plan("in_progress", "pending"),
            &plan("completed", "completed")
        ]
    );
    assert_eq!(
        exchange.notifications.last(),
        Some(&plan("completed", "completed")),
        "the finished plan is the turn's last update"
    );
    assert_eq!(exchange.result()["stopReason"], "end_turn");
}
