//! The WASM sandbox seen from inside: a probe proxy, built for wasip1 and wasip2, tries to read
//! `/etc/passwd`, list `/`, read variables, write files and open sockets. Nothing works unless
//! granted; a read-only grant reads but never writes, a read-write grant writes inside only.

use std::path::Path;

use acp_conductor_tests::binaries;
use acp_conductor_tests::editor::Editor;
use acp_conductor_tests::test_chain::{TestChain, toml_string};
use acp_conductor_tests::wasm::{self, PROBE, SOCKET, WasmChain, WasmTarget};
use serde_json::{Value, json};

/// A chain with one probe named `probe` in front of the test-agent, set up by `grant`.
fn probe_chain(
    label: &str,
    target: WasmTarget,
    grant: impl FnOnce(&mut wasm::ProxyEntry),
) -> WasmChain {
    let binaries = binaries!();
    let probe = wasm::artifact(&binaries, PROBE, target);
    let mut chain = WasmChain::new(TestChain::new(
        &binaries,
        &format!("{label}-{}", target.triple()),
    ));
    grant(chain.add_wasm("probe", &probe).args(&["--name", "probe"]));
    chain
}

/// Runs probe `what` with `params` and returns its result.
fn probe(editor: &mut Editor, what: &str, params: Value) -> Value {
    let mut params = params;
    params["target"] = json!("probe");
    editor
        .request(&format!("probe/{what}"), params)
        .result()
        .clone()
}

fn assert_failed(outcome: &Value, context: &str) {
    assert_eq!(outcome["ok"], false, "{context} must fail: {outcome}");
}

fn nothing_granted(target: WasmTarget) {
    let chain = probe_chain("sandbox-none", target, |_| {});
    let secret_file = chain.chain.dir.join("secret.txt");
    std::fs::write(&secret_file, "secret").expect("write a host file");
    let mut editor = chain.launch_with_env(&[("ACP_SANDBOX_SECRET", "hunter2")]);
    editor.initialize();

    assert_failed(
        &probe(&mut editor, "read", json!({ "path": "/etc/passwd" })),
        "reading /etc/passwd",
    );
    assert_failed(
        &probe(&mut editor, "read", json!({ "path": secret_file })),
        "reading a file of the conductor's user",
    );
    assert_failed(
        &probe(&mut editor, "list", json!({ "path": "/" })),
        "listing /",
    );
    assert_failed(
        &probe(&mut editor, "list", json!({ "path": "." })),
        "listing the working directory",
    );
    let escape = chain.chain.dir.join("written-by-guest.txt");
    assert_failed(
        &probe(&mut editor, "write", json!({ "path": escape, "text": "x" })),
        "writing a host file",
    );
    assert!(!escape.exists(), "the guest wrote {}", escape.display());
    assert_eq!(
        probe(&mut editor, "environment", json!({})),
        json!({ "names": [] }),
        "no variable reaches the guest, not even the conductor's own"
    );
    assert_eq!(
        probe(&mut editor, "env", json!({ "name": "ACP_SANDBOX_SECRET" })),
        json!({ "value": null })
    );
    assert_eq!(
        probe(&mut editor, "args", json!({})),
        json!({ "args": ["probe", "--name", "probe"] }),
        "argv is the proxy's name then `args`, nothing of the conductor's"
    );
}

#[test]
fn a_wasip1_proxy_with_no_grants_reaches_no_file_variable_or_argument() {
    nothing_granted(WasmTarget::P1);
}

#[test]
fn a_wasip2_proxy_with_no_grants_reaches_no_file_variable_or_argument() {
    nothing_granted(WasmTarget::P2);
}

/// Host directory `granted` with `inside.txt`, next to `outside.txt`.
fn granted_dir(chain: &WasmChain) -> (std::path::PathBuf, std::path::PathBuf) {
    let granted = chain.chain.dir.join("granted");
    std::fs::create_dir_all(&granted).expect("create the granted directory");
    std::fs::write(granted.join("inside.txt"), "inside").expect("write inside.txt");
    let outside = chain.chain.dir.join("outside.txt");
    std::fs::write(&outside, "outside").expect("write outside.txt");
    (granted, outside)
}

fn read_only_grant(target: WasmTarget) {
    let mut chain = probe_chain("sandbox-ro", target, |_| {});
    let (granted, outside) = granted_dir(&chain);
    chain.proxies[0].grant_dir(&granted, "/ctx", "ro");
    let mut editor = chain.launch();
    editor.initialize();

    assert_eq!(
        probe(&mut editor, "read", json!({ "path": "/ctx/inside.txt" })),
        json!({ "ok": true, "value": "inside" })
    );
    assert_eq!(
        probe(&mut editor, "list", json!({ "path": "/ctx" })),
        json!({ "ok": true, "value": ["inside.txt"] })
    );
    assert_failed(
        &probe(
            &mut editor,
            "write",
            json!({ "path": "/ctx/new.txt", "text": "x" }),
        ),
        "writing into a read-only grant",
    );
    assert_failed(
        &probe(
            &mut editor,
            "write",
            json!({ "path": "/ctx/inside.txt", "text": "x" }),
        ),
        "overwriting a file of a read-only grant",
    );
    assert!(!granted.join("new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(granted.join("inside.txt")).unwrap(),
        "inside"
    );
    assert_failed(
        &probe(
            &mut editor,
            "read",
            json!({ "path": "/ctx/../outside.txt" }),
        ),
        "climbing out of the grant",
    );
    assert_failed(
        &probe(&mut editor, "read", json!({ "path": outside })),
        "reading beside the grant by its host path",
    );
}

#[test]
fn a_wasip1_proxy_reads_but_never_writes_a_read_only_grant() {
    read_only_grant(WasmTarget::P1);
}

#[test]
fn a_wasip2_proxy_reads_but_never_writes_a_read_only_grant() {
    read_only_grant(WasmTarget::P2);
}

fn read_write_grant(target: WasmTarget) {
    let mut chain = probe_chain("sandbox-rw", target, |_| {});
    let (granted, _outside) = granted_dir(&chain);
    chain.proxies[0].grant_dir(&granted, "/work", "rw");
    let mut editor = chain.launch();
    editor.initialize();

    assert_eq!(
        probe(
            &mut editor,
            "write",
            json!({ "path": "/work/new.txt", "text": "written" })
        ),
        json!({ "ok": true, "value": true })
    );
    assert_eq!(
        std::fs::read_to_string(granted.join("new.txt")).unwrap(),
        "written"
    );
    assert_failed(
        &probe(
            &mut editor,
            "write",
            json!({ "path": "/work/../escaped.txt", "text": "x" }),
        ),
        "writing above the grant",
    );
    assert_failed(
        &probe(
            &mut editor,
            "write",
            json!({ "path": "/tmp/escaped.txt", "text": "x" }),
        ),
        "writing outside any grant",
    );
    assert!(!chain.chain.dir.join("escaped.txt").exists());
}

#[test]
fn a_wasip1_proxy_writes_inside_a_read_write_grant_only() {
    read_write_grant(WasmTarget::P1);
}

#[test]
fn a_wasip2_proxy_writes_inside_a_read_write_grant_only() {
    read_write_grant(WasmTarget::P2);
}

fn granted_variables(target: WasmTarget) {
    let chain = probe_chain("sandbox-env", target, |probe| {
        probe
            .sandbox("env", "[\"ACP_SANDBOX_GRANTED\", \"ACP_SANDBOX_UNSET\"]")
            .env
            .push(("EXPLICIT".to_string(), "set in the config".to_string()));
    });
    let mut editor = chain.launch_with_env(&[
        ("ACP_SANDBOX_GRANTED", "passed"),
        ("ACP_SANDBOX_SECRET", "hunter2"),
    ]);
    editor.initialize();
    assert_eq!(
        probe(&mut editor, "environment", json!({})),
        json!({ "names": ["EXPLICIT", "ACP_SANDBOX_GRANTED"] }),
        "explicit values, then the named variables that are set; nothing else"
    );
    assert_eq!(
        probe(&mut editor, "env", json!({ "name": "ACP_SANDBOX_GRANTED" })),
        json!({ "value": "passed" })
    );
}

#[test]
fn a_wasip1_proxy_sees_exactly_the_granted_variables() {
    granted_variables(WasmTarget::P1);
}

#[test]
fn a_wasip2_proxy_sees_exactly_the_granted_variables() {
    granted_variables(WasmTarget::P2);
}

/// Starts `wasm-socket` (which connects at start-up) as the only proxy and returns the
/// error the editor's `initialize` gets.
fn socket_attempt(target: WasmTarget, listener: &Path) -> Value {
    let binaries = binaries!();
    let socket = wasm::artifact(&binaries, SOCKET, target);
    let mut chain = WasmChain::new(TestChain::new(
        &binaries,
        &format!("sandbox-socket-{}", target.triple()),
    ));
    chain
        .add_wasm("socket", &socket)
        .args(&[&listener.display().to_string()]);
    let mut editor = chain.launch();
    let exchange = editor.request(
        "initialize",
        acp_conductor_tests::editor::initialize_params(),
    );
    if target == WasmTarget::P1 {
        // The guest's stderr is logged line by line under the proxy's name.
        let log = editor.wait_for_stderr("wasm-socket: connect to");
        let line = log
            .lines()
            .find(|line| line.contains("wasm-socket: connect to"))
            .expect("the line is there");
        assert!(line.contains("component=socket"), "{line}");
    }
    exchange.error().clone()
}

#[test]
fn a_wasip1_proxy_cannot_open_a_socket() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listen on loopback");
    let address = listener.local_addr().unwrap().to_string();
    let error = socket_attempt(WasmTarget::P1, Path::new(&address));
    assert_eq!(error["data"]["component"], "socket");
    assert_eq!(error["data"]["reason"], "exited with status 3", "{error}");
    let stderr = error["data"]["stderr"].to_string();
    assert!(
        stderr.contains(&format!("connect to {address} failed")),
        "{error}"
    );
    listener.set_nonblocking(true).unwrap();
    assert!(
        listener.accept().is_err(),
        "nothing connected to the listener"
    );
}

#[test]
fn a_wasip2_proxy_importing_sockets_is_refused_at_load_time() {
    let error = socket_attempt(WasmTarget::P2, Path::new("127.0.0.1:9"));
    assert_eq!(error["data"]["component"], "socket");
    let reason = error["data"]["reason"].as_str().expect("a reason");
    assert!(
        reason.starts_with("could not be loaded: imports `wasi:sockets/")
            && reason.ends_with("a WASM proxy is never granted network access (it talks only through stdin and stdout)"),
        "{reason}"
    );
    assert_eq!(
        error["message"],
        format!("proxy `socket` {reason}"),
        "the message names the proxy and what it lacks"
    );
}

#[test]
fn check_describes_the_sandbox_and_refuses_nonsense() {
    let binaries = binaries!();
    let probe = wasm::artifact(&binaries, PROBE, WasmTarget::P2);
    let mut chain = WasmChain::new(TestChain::new(&binaries, "sandbox-check"));
    let granted = chain.chain.dir.join("granted");
    std::fs::create_dir_all(&granted).unwrap();
    chain
        .add_wasm("probe", &probe)
        .sandbox("memory", "\"32MiB\"")
        .sandbox("message_timeout", "\"2s\"")
        .grant_dir(&granted, "/ctx", "ro");
    let config = chain.write_config();
    let output = std::process::Command::new(&binaries.conductor)
        .args(["check", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains(&format!(
            "WASM proxy `probe` ({}, WASI 0.2 component; memory 32 MiB, computing 2s per message; {} as /ctx read-only; no network)",
            probe.display(),
            granted.display()
        )),
        "{stdout}"
    );

    let not_wasm = chain.chain.dir.join("not.wasm");
    std::fs::write(&not_wasm, "#!/bin/sh\n").unwrap();
    let text = format!(
        "[agent]\nbuiltin = \"demo\"\n\
         [[proxy]]\nname = \"a\"\nwasm = {}\n\
         [[proxy]]\nname = \"b\"\nwasm = {}\n[proxy.sandbox]\n\
         dirs = [{{ host = \"nowhere\", guest = \"ctx\", mode = \"rx\" }}]\nmemory = \"4KiB\"\n\
         [[proxy]]\nname = \"c\"\ncommand = \"/bin/sh\"\n[proxy.sandbox]\nmemory = \"1MiB\"\n",
        toml_string(&not_wasm.display().to_string()),
        toml_string(&probe.display().to_string()),
    );
    let file = chain.chain.dir.join("bad.toml");
    std::fs::write(&file, text).unwrap();
    let output = std::process::Command::new(&binaries.conductor)
        .args(["check", "--config"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(78));
    let stderr = String::from_utf8_lossy(&output.stderr);
    for expected in [
        "is not a WebAssembly module or component",
        "`host` ",
        "does not exist",
        "`guest` must be absolute",
        "`mode` must be \"ro\" or \"rw\", found \"rx\"",
        "`memory` must be at least 1MiB",
        "[proxy.sandbox] applies only to a WASM proxy",
    ] {
        assert!(
            stderr.contains(expected),
            "missing {expected:?} in:\n{stderr}"
        );
    }
}
