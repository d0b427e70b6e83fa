//! The two log lines of a run: the chain-up line once the editor has its `initialize`
//! answer, and what the end-of-run line is made of (why, requests answered with errors).

use std::io::Write;
use std::sync::{Arc, Mutex};

use tracing_subscriber::util::SubscriberInitExt;

use super::harness::Spec;
use crate::Finish;
use crate::Input;

/// Log output of the current thread (the router runs on it).
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

#[test]
fn the_chain_is_said_to_be_up_once_the_editor_has_its_initialize_answer() {
    let captured = Captured::default();
    let writer = captured.clone();
    let _log = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO)
        .set_default();
    let mut chain = Spec::new(1).awaiting_initialize().start();
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#);
    chain.proxy(1).recv();
    chain.proxy(1).send(
        r#"{"jsonrpc":"2.0","id":"i","method":"proxy/successor","params":{"method":"initialize","params":{"protocolVersion":1}}}"#,
    );
    chain.agent().recv();
    assert!(
        !captured.text().contains("chain up"),
        "not before the editor is answered: {}",
        captured.text()
    );
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}"#);
    chain.proxy(1).recv();
    chain
        .proxy(1)
        .send(r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}"#);
    chain.editor.recv();

    let log = captured.text();
    let up: Vec<&str> = log.lines().filter(|l| l.contains("chain up")).collect();
    assert_eq!(up.len(), 1, "{log}");
    // The fake components were launched as native pids 1001 and 1002 (see the harness).
    let line = up[0];
    for part in [
        "chain up after ",
        ": p1 (proxy, native pid 1001, dialect proxy/*, started in ",
        " → agent (agent, native pid 1002, started in ",
    ] {
        assert!(line.contains(part), "{part:?} in {line}");
    }

    // A second initialize is refused; the chain is not said to be up again.
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#);
    chain.editor.recv();
    chain.editor.close();
    let (_, end) = chain.finish_ending();
    assert_eq!(captured.text().matches("chain up").count(), 1);
    assert_eq!(end.answers.editor, 2);
    assert_eq!(end.answers.editor_errors, 1, "the second initialize");
    // The proxy's successor initialize was answered too.
    assert_eq!(
        (end.answers.components, end.answers.component_errors),
        (1, 0)
    );
}

#[test]
fn the_end_of_the_run_counts_requests_answered_with_errors_by_who_asked() {
    let mut chain = Spec::new(0).start();
    // The editor's: one answered, one refused by the agent, one refused by the conductor.
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}"#);
    chain.agent().recv();
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}"#);
    chain.editor.recv();
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":2,"method":"session/load","params":{}}"#);
    chain.agent().recv();
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}}"#);
    assert_eq!(chain.editor.recv()["error"]["code"], -32601);
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":3,"method":"proxy/successor","params":{"method":"x"}}"#);
    assert!(chain.editor.recv()["error"].is_object());
    // The agent's: one the editor refuses, one it answers.
    for (id, answer) in [
        (7, r#""error":{"code":-32603,"message":"no"}"#),
        (8, r#""result":{"content":""}"#),
    ] {
        chain.agent().send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"fs/read_text_file","params":{{"path":"/a"}}}}"#
        ));
        let asked = chain.editor.recv();
        chain.editor.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{},{answer}}}"#,
            asked["id"]
        ));
        assert_eq!(chain.agent().recv()["id"], id);
    }
    chain.editor.close();
    let (finish, end) = chain.finish_ending();
    assert_eq!(finish, Finish::Stopped);
    assert_eq!(end.why, "the editor closed the conductor's stdin");
    let a = end.answers;
    assert_eq!((a.editor, a.editor_errors), (3, 2));
    assert_eq!((a.components, a.component_errors), (2, 1));
}

#[test]
fn a_signal_is_why_the_run_ended() {
    let chain = Spec::new(1).start();
    chain.report(Input::Signal("SIGTERM"));
    let (_, end) = chain.finish_ending();
    assert_eq!(end.why, "the conductor received SIGTERM");
}

#[test]
fn a_failure_stays_why_the_run_ended_when_the_editor_leaves_after_it() {
    let mut chain = Spec::new(1).start();
    let agent = chain.agent().id;
    chain.exited(agent, "exited with status 3", &[]);
    chain.editor.close();
    let (finish, end) = chain.finish_ending();
    assert_eq!(finish, Finish::Failed);
    assert!(
        end.why.starts_with("agent `agent` exited with status 3"),
        "{}",
        end.why
    );
}
