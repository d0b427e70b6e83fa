//! MCP calls through the HTTP bridge to a provider being restarted, end to end: a call held
//! longer than the provider's `request_timeout` ends with an MCP error naming the provider,
//! and once the provider runs again the agent's same MCP session goes on, in every wire form
//! (a connection that died with the old instance is made again).

use std::time::{Duration, Instant};

use acp_conductor_tests::mcp_chain::{
    RMCP, Variant, of_kind, provider_events_until, provider_program, run_script, said,
    use_rmcp_agent,
};
use acp_conductor_tests::{TestChain, binaries};

const RESTARTED: &str = "_acp-conductor/component_restarted";

/// A chain of `test-mcp-provider` (server `tools`, under `restart` with a 1 s
/// `request_timeout`, slow to come back while its `slow` file exists) and the rmcp agent
/// offering `http`.
fn restarting_provider_chain(variant: Variant) -> TestChain {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, &format!("mcp-restart-{}", variant.arg()));
    let program = provider_program(&chain);
    let args = [
        "--variant".to_string(),
        variant.arg().to_string(),
        "--name".to_string(),
        "tools".to_string(),
        "--record".to_string(),
        chain.file("provider", "record").display().to_string(),
        "--slow-start-if".to_string(),
        chain.file("provider", "slow").display().to_string(),
    ];
    chain
        .add_proxy("provider", &program, &args)
        .setting("on_failure", "\"restart\"")
        .setting("request_timeout", "\"1s\"");
    use_rmcp_agent(&mut chain, &["--http"]);
    chain
}

#[test]
fn a_call_held_past_request_timeout_fails_naming_the_provider_and_the_session_goes_on() {
    for variant in Variant::ALL {
        let chain = restarting_provider_chain(variant);
        let mut editor = chain.launch();
        editor.initialize();
        let session = editor.new_session();
        let lines = run_script(
            &mut editor,
            &session,
            &["open t tools", r#"call t echo {"text":"before"}"#],
        );
        assert_eq!(lines[1], "result t echo: before", "{variant:?}: {lines:#?}");

        // The next instance takes 1.5 s to start: longer than the request_timeout. The
        // provider is a proxy, so the prompt itself fails with it; the agent's script goes on,
        // and what it says is read from its record.
        std::fs::write(chain.file("provider", "slow"), "1500").expect("write the slow file");
        let dying = editor.prompt(
            &session,
            &["call t die", r#"call t echo {"text":"late"}"#].join("\n"),
        );
        let agent_said = agent_said_until(&chain, |line| line.starts_with("error t echo: "));
        let late = agent_said.last().expect("the late call's line");
        assert!(
            late.contains(
                "MCP server `tools`: proxy `provider` is being restarted and did not run \
                 again within its request_timeout (1 s)"
            ),
            "{variant:?}: {agent_said:#?}"
        );
        assert!(
            agent_said
                .iter()
                .any(|line| line.starts_with("error t die: ")),
            "{variant:?}: {agent_said:#?}"
        );
        std::fs::remove_file(chain.file("provider", "slow")).expect("remove the slow file");
        if !dying.notifications.iter().any(|n| n["method"] == RESTARTED) {
            editor.wait_for(|m| m["method"] == RESTARTED);
        }

        // The agent's MCP session is the one it opened before the restart. (What the agent
        // said during the failed prompt may still arrive first.)
        let exchange = editor.prompt(&session, r#"call t echo {"text":"after"}"#);
        assert_eq!(exchange.result()["stopReason"], "end_turn", "{variant:?}");
        let lines = said(&exchange);
        assert_eq!(
            lines.last().map(String::as_str),
            Some("result t echo: after"),
            "{variant:?}: {lines:#?}"
        );
        let events = provider_events_until(&chain, "provider", |events| {
            events
                .iter()
                .filter(|e| e["method"] == "tools/call")
                .count()
                >= 3
        });
        let calls = of_kind(&events, "request")
            .into_iter()
            .filter(|e| e["method"] == "tools/call")
            .count();
        assert_eq!(
            calls, 3,
            "{variant:?}: the held call never reached it: {events:#?}"
        );
        if variant != Variant::Connectionless {
            let count = |kind: &str, method: &str| {
                events
                    .iter()
                    .filter(|e| e["event"] == kind && e["method"] == method)
                    .count()
            };
            assert_eq!(
                of_kind(&events, "connect").len(),
                2,
                "{variant:?}: {events:#?}"
            );
            // The client's handshake, once from the agent, then made again by the bridge
            // on the new instance's connection.
            assert_eq!(
                count("request", "initialize"),
                2,
                "{variant:?}: {events:#?}"
            );
            assert_eq!(
                count("notification", "notifications/initialized"),
                2,
                "{variant:?}: {events:#?}"
            );
        }
        editor.close_stdin();
        assert!(editor.wait_exit().success(), "{}", editor.stderr());
    }
}

/// The lines the agent said (from its record), once one of them satisfies `done`.
fn agent_said_until(chain: &TestChain, done: impl Fn(&str) -> bool) -> Vec<String> {
    let deadline = Instant::now() + acp_conductor_tests::editor::patience();
    loop {
        let said: Vec<String> = chain
            .received(RMCP)
            .into_iter()
            .filter(|e| e["event"] == "said")
            .filter_map(|e| e["line"].as_str().map(str::to_string))
            .collect();
        if said.iter().any(|line| done(line)) {
            return said;
        }
        assert!(
            Instant::now() < deadline,
            "the agent never said it: {said:#?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
