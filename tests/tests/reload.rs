//! Configuration reload with the real binary and real child processes: the file is edited
//! while a session is open (one proxy's args changed, one proxy added, one removed) and
//! SIGHUP applies it; the session goes on through the new chain, the agent and unchanged
//! proxies keep their processes; an invalid edit changes nothing and the editor is told; an
//! unchanged file changes nothing. `check --diff` says what a reload would do.

use std::process::Command;
use std::time::{Duration, Instant};

use acp_conductor_tests::binaries::CONTEXT_PROXY;
use acp_conductor_tests::editor::{Editor, patience, refuse};
use acp_conductor_tests::test_chain::{AGENT, fresh_dir};
use acp_conductor_tests::{TestChain, binaries};
use serde_json::{Value, json};

const RELOADED: &str = "_acp-conductor/config_reloaded";
const REJECTED: &str = "_acp-conductor/config_rejected";

fn is_notification(method: &'static str) -> impl Fn(&Value) -> bool {
    move |message| message["method"] == method
}

fn alive(pid: u32) -> bool {
    // SAFETY: kill(2) with signal 0 only checks that the process exists.
    unsafe { libc::kill(pid as libc::pid_t, 0) == 0 }
}

/// Waits until `done` holds, for at most the tests' patience.
fn eventually(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + patience();
    while !done() {
        assert!(Instant::now() < deadline, "{what} did not happen in time");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// How many `session/new` requests component `name` received.
fn session_news(chain: &TestChain, name: &str) -> usize {
    chain
        .received(name)
        .iter()
        .filter(|m| m["method"] == "session/new")
        .count()
}

/// Two test-proxies `p1`, `p2` before the test-agent, initialized, with a session open.
fn open_chain(label: &str) -> (TestChain, Editor, String) {
    let binaries = binaries!();
    let chain = TestChain::with_test_proxies(&binaries, label, 2);
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();
    let first = editor.prompt(&session, "before the reload");
    assert!(
        first.response.get("result").is_some(),
        "{:?}",
        first.response
    );
    (chain, editor, session)
}

#[test]
fn sighup_replaces_adds_and_removes_proxies_and_the_session_goes_on() {
    let (mut chain, mut editor, session) = open_chain("reload-sighup");
    let (p1, p2, agent) = (chain.pid("p1"), chain.pid("p2"), chain.pid(AGENT));

    // p1 gets another argument, p2 goes, p3 comes after p1.
    chain.proxies[0].args(&["--envelope-meta", "{\"reloaded\":true}"]);
    chain.proxies.remove(1);
    chain.add_test_proxy("p3");
    chain.write_config();
    editor.signal(libc::SIGHUP);
    let reloaded = editor.wait_for(is_notification(RELOADED));
    assert_eq!(
        reloaded["params"]["changes"],
        json!([
            "replaced `p1` (args)",
            "added `p3` at 1",
            "removed `p2`",
            "kept the agent"
        ])
    );
    let stderr = editor.wait_for_stderr("configuration reloaded");
    assert!(
        stderr.contains(
            "configuration reloaded: replaced `p1` (args); added `p3` at 1; removed `p2`; kept the agent"
        ),
        "{stderr}"
    );

    // The same session, through the new chain.
    let after = editor.prompt(&session, "after the reload");
    assert!(
        after.response.get("result").is_some(),
        "{:?}",
        after.response
    );
    assert!(chain.saw_prompt("p3", "after the reload"));
    assert!(!chain.saw_prompt("p2", "after the reload"));
    assert!(chain.saw_prompt(AGENT, "after the reload"));
    // The agent kept its process and saw one session/new; p1 is a new process, p2 is gone.
    assert_eq!(chain.pid(AGENT), agent);
    assert_eq!(session_news(&chain, AGENT), 1);
    eventually("p1's new instance writes its pid", || chain.pid("p1") != p1);
    eventually("the old p1 stops", || !alive(p1));
    eventually("the removed p2 stops", || !alive(p2));
    assert!(alive(chain.pid("p1")) && alive(chain.pid("p3")) && alive(agent));
    editor.close_stdin();
    editor.wait_exit();
}

#[test]
fn a_replaced_context_proxy_learns_the_open_session_without_the_agent_seeing_it_again() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "reload-context");
    let context = chain.binaries.workspace_program(&CONTEXT_PROXY);
    chain.add_proxy("context", &context, &["--rule", "Rule before the reload"]);
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();
    let first = editor.prompt(&session, "first question");
    assert!(
        first.response.get("result").is_some(),
        "{:?}",
        first.response
    );
    assert!(chain.saw_prompt(AGENT, "Rule before the reload"));

    chain.proxies[0].args = vec!["--rule".into(), "Rule after the reload".into()];
    chain.write_config();
    editor.signal(libc::SIGHUP);
    let reloaded = editor.wait_for(is_notification(RELOADED));
    assert_eq!(
        reloaded["params"]["changes"][0],
        "replaced `context` (args)"
    );
    // The new instance treats the open session as its own: the next prompt is the first it
    // sees there, so its context goes in once; the agent saw the session begin once.
    let second = editor.prompt(&session, "second question");
    assert!(
        second.response.get("result").is_some(),
        "{:?}",
        second.response
    );
    assert!(chain.saw_prompt(AGENT, "Rule after the reload"));
    assert_eq!(session_news(&chain, AGENT), 1);
    let third = editor.prompt(&session, "third question");
    assert!(
        third.response.get("result").is_some(),
        "{:?}",
        third.response
    );
    let injected = chain
        .received(AGENT)
        .iter()
        .filter(|m| {
            m["params"]["prompt"]
                .to_string()
                .contains("Rule after the reload")
        })
        .count();
    assert_eq!(
        injected, 1,
        "injected once, into the first prompt after the reload"
    );
    editor.close_stdin();
    editor.wait_exit();
}

#[test]
fn a_prompt_in_flight_during_a_reload_completes() {
    let (mut chain, mut editor, session) = open_chain("reload-in-flight");
    let old_p1 = chain.pid("p1");
    // The agent holds this turn until it is cancelled.
    let id = editor.start_request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "hang"}]}),
    );
    eventually("the agent has the turn", || chain.saw_prompt(AGENT, "hang"));
    chain.proxies[0].args(&["--envelope-meta", "{\"reloaded\":true}"]);
    chain.write_config();
    editor.signal(libc::SIGHUP);
    editor.wait_for(is_notification(RELOADED));
    // The old p1 still has the turn: it stays until it is answered.
    assert!(alive(old_p1));
    editor.notify("session/cancel", json!({"sessionId": session}));
    let answered = editor.finish_request(&id, refuse);
    assert_eq!(
        answered.response["result"]["stopReason"], "cancelled",
        "{:?}",
        answered.response
    );
    eventually("the old p1 stops once it answered", || !alive(old_p1));
    let after = editor.prompt(&session, "after the reload");
    assert!(
        after.response.get("result").is_some(),
        "{:?}",
        after.response
    );
    editor.close_stdin();
    editor.wait_exit();
}

#[test]
fn the_editor_asks_for_a_reload_and_hears_what_changed() {
    let (mut chain, mut editor, session) = open_chain("reload-request");
    let agent = chain.pid(AGENT);
    chain.proxies.remove(0);
    chain.write_config();
    let asked = editor.request("_acp-conductor/reload", json!({}));
    assert_eq!(
        asked.response["result"],
        json!({"changes": ["kept `p2`", "removed `p1`", "kept the agent"]})
    );
    let after = editor.prompt(&session, "after the reload");
    assert!(
        after.response.get("result").is_some(),
        "{:?}",
        after.response
    );
    assert!(!chain.saw_prompt("p1", "after the reload"));
    assert!(chain.saw_prompt("p2", "after the reload"));
    // Unchanged: answered with no change.
    let again = editor.request("_acp-conductor/reload", json!({}));
    assert_eq!(again.response["result"], json!({"changes": []}));
    // Invalid: answered with the error, and the chain goes on.
    std::fs::write(chain.config_path(), "[agent]\ncomand = 1\n").unwrap();
    let refused = editor.request("_acp-conductor/reload", json!({}));
    let message = refused.response["error"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.contains(&format!("{}:2:1:", chain.config_path().display())),
        "{message}"
    );
    assert_eq!(chain.pid(AGENT), agent);
    let last = editor.prompt(&session, "still going");
    assert!(last.response.get("result").is_some(), "{:?}", last.response);
    editor.close_stdin();
    editor.wait_exit();
}

#[test]
fn watch_reloads_once_after_a_storm_of_writes() {
    let binaries = binaries!();
    let mut chain = TestChain::with_test_proxies(&binaries, "reload-watch-storm", 2);
    let mut editor = chain.launch_with(&["--watch"]);
    editor.initialize();
    let session = editor.new_session();
    let p1 = chain.pid("p1");
    // 50 writes in a second, the last one with p1's args changed.
    chain.proxies[0].args(&["--tag", "p1-new"]);
    let changed = chain.config_text();
    let start = Instant::now();
    for write in 0..50 {
        let text = format!("# write {write}\n{changed}");
        std::fs::write(chain.config_path(), text).unwrap();
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(start.elapsed() < Duration::from_millis(1500));
    let reloaded = editor.wait_for(is_notification(RELOADED));
    assert_eq!(reloaded["params"]["changes"][0], "replaced `p1` (args)");
    eventually("the old p1 stops", || !alive(p1));
    std::thread::sleep(Duration::from_millis(700));
    let after = editor.prompt(&session, "after the storm");
    assert!(
        after.response.get("result").is_some(),
        "{:?}",
        after.response
    );
    assert!(
        !after.notifications.iter().any(|n| n["method"] == RELOADED),
        "{:?}",
        after.notifications
    );
    let stderr = editor.stderr();
    assert_eq!(
        stderr.matches("reloading the configuration").count(),
        1,
        "{stderr}"
    );
    editor.close_stdin();
    editor.wait_exit();
}

#[test]
fn watch_replaces_a_proxy_whose_policy_file_changed() {
    let binaries = binaries!();
    let mut chain = TestChain::with_test_proxies(&binaries, "reload-watch-file", 1);
    chain.conductor_setting("watch", "true");
    let policy = chain.dir.join("policy.txt");
    std::fs::write(&policy, "first\n").unwrap();
    // The test-proxy takes no policy; it ignores the option (as it reads only its own).
    chain.proxies[0].args(&["--policy", &policy.display().to_string()]);
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();
    let p1 = chain.pid("p1");
    std::fs::write(&policy, "second\n").unwrap();
    let reloaded = editor.wait_for(is_notification(RELOADED));
    assert_eq!(
        reloaded["params"]["changes"][0],
        format!("replaced `p1` (contents of {})", policy.display())
    );
    eventually("the old p1 stops", || !alive(p1));
    let after = editor.prompt(&session, "after the edit");
    assert!(
        after.response.get("result").is_some(),
        "{:?}",
        after.response
    );
    editor.close_stdin();
    editor.wait_exit();
}

#[test]
fn a_changed_agent_is_kept_unless_on_reload_says_restart() {
    let (mut chain, mut editor, session) = open_chain("reload-agent-kept");
    let agent = chain.pid(AGENT);
    chain.agent_args(&["--updates", "2"]);
    chain.write_config();
    editor.signal(libc::SIGHUP);
    let reloaded = editor.wait_for(is_notification(RELOADED));
    assert_eq!(
        reloaded["params"]["changes"][2],
        "agent changed (args): not applied, the agent keeps running with its sessions (restart \
         the conductor, or set on_reload = \"restart\", to apply it)"
    );
    assert_eq!(chain.pid(AGENT), agent);
    let after = editor.prompt(&session, "same agent");
    assert!(
        after.response.get("result").is_some(),
        "{:?}",
        after.response
    );
    editor.close_stdin();
    editor.wait_exit();

    let binaries = binaries!();
    let mut chain = TestChain::with_test_proxies(&binaries, "reload-agent-restart", 1);
    chain.agent_setting("on_reload", "\"restart\"");
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();
    let agent = chain.pid(AGENT);
    chain.agent_args(&["--updates", "2"]);
    chain.write_config();
    editor.signal(libc::SIGHUP);
    let reloaded = editor.wait_for(is_notification(RELOADED));
    assert_eq!(
        reloaded["params"]["changes"][1],
        "agent changed (args): restarted (on_reload = \"restart\"); its sessions are lost (load \
         them again if the agent supports it)"
    );
    editor.wait_for(is_notification("_acp-conductor/component_restarted"));
    eventually("the new agent writes its pid", || chain.pid(AGENT) != agent);
    assert!(!alive(agent));
    // The old session is gone with the old agent; a new one streams two updates now.
    let lost = editor.prompt(&session, "old session");
    assert!(
        lost.response["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("no longer has session")),
        "{:?}",
        lost.response
    );
    let fresh = editor.new_session();
    let answer = editor.prompt(&fresh, "new agent");
    assert!(
        answer.response.get("result").is_some(),
        "{:?}",
        answer.response
    );
    assert_eq!(answer.chunk_texts().len(), 2, "{:?}", answer.notifications);
    editor.close_stdin();
    editor.wait_exit();
}

#[test]
fn an_invalid_edit_changes_nothing_and_the_editor_is_told_where() {
    let (chain, mut editor, session) = open_chain("reload-invalid");
    let pids = chain.fixture_pids();
    let path = chain.config_path();
    std::fs::write(&path, chain.config_text().replace("[[proxy]]", "[[proxi]]")).unwrap();
    editor.signal(libc::SIGHUP);
    let rejected = editor.wait_for(is_notification(REJECTED));
    let message = rejected["params"]["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("{}:", path.display())) && message.contains("proxi"),
        "{message}"
    );
    // `file:line:column: ...`
    let location = message.trim_start_matches(&format!("{}:", path.display()));
    let mut parts = location.splitn(3, ':');
    assert!(parts.next().unwrap().parse::<u32>().is_ok(), "{message}");
    assert!(parts.next().unwrap().parse::<u32>().is_ok(), "{message}");
    let after = editor.prompt(&session, "still here");
    assert!(
        after.response.get("result").is_some(),
        "{:?}",
        after.response
    );
    assert_eq!(chain.fixture_pids(), pids);
    editor.close_stdin();
    editor.wait_exit();
}

#[test]
fn an_unchanged_file_reloads_nothing() {
    let (chain, mut editor, session) = open_chain("reload-unchanged");
    let pids = chain.fixture_pids();
    // Written again, with a comment: the same chain.
    let text = format!("# saved again\n{}", chain.config_text());
    std::fs::write(chain.config_path(), text).unwrap();
    editor.signal(libc::SIGHUP);
    editor.wait_for_stderr("the configuration is unchanged: nothing to reload");
    let after = editor.prompt(&session, "same file again");
    assert!(
        after.response.get("result").is_some(),
        "{:?}",
        after.response
    );
    assert!(
        !after.notifications.iter().any(|n| n["method"] == RELOADED),
        "{:?}",
        after.notifications
    );
    assert_eq!(chain.fixture_pids(), pids);
    editor.close_stdin();
    editor.wait_exit();
}

#[test]
fn check_diff_prints_what_a_reload_would_do() {
    let binaries = binaries!();
    let dir = fresh_dir("reload-check-diff");
    let mut chain = TestChain::with_test_proxies(&binaries, "reload-check-diff-files", 2);
    let old = dir.join("old.toml");
    std::fs::write(&old, chain.config_text()).unwrap();
    chain.proxies[1].args(&["--tag", "other"]);
    let new = dir.join("new.toml");
    std::fs::write(&new, chain.config_text()).unwrap();
    let output = Command::new(&binaries.conductor)
        .args(["check", "--diff"])
        .arg(&old)
        .arg(&new)
        .env_remove("ACP_CONDUCTOR_CONFIG")
        .output()
        .expect("run acp-conductor check --diff");
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        format!(
            "A reload from {} to {} would:\n  kept `p1`\n  replaced `p2` (args)\n  kept the agent\n",
            old.display(),
            new.display()
        )
    );
}
