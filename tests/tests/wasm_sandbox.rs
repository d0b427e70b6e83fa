//! The WASM sandbox seen from inside: proxies built for wasip1 and wasip2 try to read
//! `/etc/passwd`, list `/`, read variables, write files and use the network. Nothing works unless
//! granted; a read-only grant reads but never writes, a read-write grant writes inside only;
//! the network is never granted, and a proxy importing what no host provides does not load.

use std::io::ErrorKind;
use std::net::TcpListener;

use acp_conductor_tests::agent_script::update_text;
use acp_conductor_tests::binaries;
use acp_conductor_tests::editor::Editor;
use acp_conductor_tests::test_chain::{TestChain, toml_string};
use acp_conductor_tests::wasm::{self, NET, PROBE, UNPROVIDED, WasmChain, WasmTarget};
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

/// A chain with `wasm-net`, named `net`, in front of the test-agent, started, with a
/// session open: the proxy answers prompts such as `connect ADDRESS` itself.
fn net_chain(target: WasmTarget) -> (Editor, String) {
    let binaries = binaries!();
    let net = wasm::artifact(&binaries, NET, target);
    let mut chain = WasmChain::new(TestChain::new(
        &binaries,
        &format!("sandbox-net-{}", target.triple()),
    ));
    chain.add_wasm("net", &net);
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();
    (editor, session)
}

/// A prompt through the proxy to the test-agent and back.
fn assert_round_trip(editor: &mut Editor, session: &str, text: &str) {
    let exchange = editor.prompt(session, text);
    assert_eq!(exchange.result()["stopReason"], "end_turn");
    assert_eq!(exchange.chunk_texts(), [update_text(text, 1, 1)]);
}

/// Asks the proxy to use the network with `prompt` and returns what it reports.
fn network_report(editor: &mut Editor, session: &str, prompt: &str) -> String {
    let exchange = editor.prompt(session, prompt);
    assert_eq!(exchange.result()["stopReason"], "end_turn");
    let texts = exchange.chunk_texts();
    assert_eq!(texts.len(), 1, "one report: {texts:?}");
    texts[0].clone()
}

/// Loads `wasm-net`, which links `std::net`, and has it connect to a listener of ours:
/// the connection fails inside the proxy, nothing reaches the listener, the chain stays up.
/// Returns the editor and the listener's address.
fn connect_is_denied(target: WasmTarget) -> (Editor, String) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("listen on loopback");
    let address = listener.local_addr().unwrap().to_string();
    let (mut editor, session) = net_chain(target);
    assert_round_trip(&mut editor, &session, "before");

    let report = network_report(&mut editor, &session, &format!("connect {address}"));
    assert!(
        report.starts_with(&format!("connect to {address} failed: ")),
        "{report}"
    );
    listener.set_nonblocking(true).unwrap();
    assert_eq!(
        listener.accept().map(|(_, peer)| peer).unwrap_err().kind(),
        ErrorKind::WouldBlock,
        "nothing connected to the listener"
    );

    assert_round_trip(&mut editor, &session, "after");
    (editor, address)
}

#[test]
fn a_wasip2_proxy_linking_std_net_loads_and_its_connect_is_denied_and_logged() {
    let (mut editor, address) = connect_is_denied(WasmTarget::P2);
    let stderr = editor.wait_for_stderr("denied a network attempt");
    let line = stderr
        .lines()
        .find(|line| line.contains("denied a network attempt"))
        .expect("the line is there");
    assert!(line.contains("component=net"), "{line}");
    assert!(
        line.contains(&format!("tried to connect to {address} over TCP")),
        "{line}"
    );

    editor.close_stdin();
    assert_eq!(editor.wait_exit().code(), Some(0), "{}", editor.stderr());
    editor.wait_for_stderr("proxy `net` tried the network once; denied");
}

#[test]
fn a_wasip2_proxy_importing_wasi_http_loads_and_its_request_is_denied_and_counted() {
    // What a default componentize-js build imports: the proxy loads, its request gets
    // `HTTP-request-denied` (error-code case 15), nothing reaches our listener.
    let listener = TcpListener::bind("127.0.0.1:0").expect("listen on loopback");
    let address = listener.local_addr().unwrap().to_string();
    let (mut editor, session) = net_chain(WasmTarget::P2);
    assert_round_trip(&mut editor, &session, "before");

    let report = network_report(&mut editor, &session, &format!("http {address}"));
    assert_eq!(
        report,
        format!("send GET http://{address}/ failed: error-code case 15")
    );
    listener.set_nonblocking(true).unwrap();
    assert_eq!(
        listener.accept().map(|(_, peer)| peer).unwrap_err().kind(),
        ErrorKind::WouldBlock,
        "nothing connected to the listener"
    );
    let logged = format!("tried to send an HTTP request: GET http://{address}/");
    let stderr = editor.wait_for_stderr(&logged);
    let line = stderr.lines().find(|line| line.contains(&logged)).unwrap();
    assert!(line.contains("component=net"), "{line}");
    assert_round_trip(&mut editor, &session, "after");

    editor.close_stdin();
    assert_eq!(editor.wait_exit().code(), Some(0), "{}", editor.stderr());
    editor.wait_for_stderr("proxy `net` tried the network once; denied");
}

#[test]
fn a_wasip1_proxy_cannot_open_a_socket() {
    // Preview 1 has no call that names an address: the standard library fails the connect
    // itself, so the host has nothing to deny or log. A denial would be logged before the
    // proxy's own line about the failure.
    let (mut editor, address) = connect_is_denied(WasmTarget::P1);
    let stderr = editor.wait_for_stderr(&format!("connect to {address} failed"));
    assert!(!stderr.contains("denied a network attempt"), "{stderr}");
    editor.close_stdin();
    assert_eq!(editor.wait_exit().code(), Some(0), "{}", editor.stderr());
}

#[test]
fn a_wasip2_proxy_is_denied_binding_datagrams_and_name_lookups() {
    let (mut editor, session) = net_chain(WasmTarget::P2);
    for (prompt, report, logged) in [
        (
            "listen 127.0.0.1:0",
            "listen on 127.0.0.1:0 failed: ",
            "tried to bind a TCP socket to 127.0.0.1:0",
        ),
        (
            "udp 127.0.0.1:9",
            "send a datagram to 127.0.0.1:9 failed: ",
            "tried to bind a UDP socket to 0.0.0.0:0",
        ),
        (
            "resolve example.com",
            "resolve example.com failed: ",
            "tried to resolve the name \"example.com\"",
        ),
    ] {
        let got = network_report(&mut editor, &session, prompt);
        assert!(got.starts_with(report), "{prompt}: {got}");
        let stderr = editor.wait_for_stderr(logged);
        let line = stderr.lines().find(|line| line.contains(logged)).unwrap();
        assert!(line.contains("component=net"), "{line}");
    }
    assert_round_trip(&mut editor, &session, "still here");

    editor.close_stdin();
    assert_eq!(editor.wait_exit().code(), Some(0), "{}", editor.stderr());
    editor.wait_for_stderr("proxy `net` tried the network 3 times; denied");
}

const KEYVALUE: &str = "wasi:keyvalue/store@0.2.0-draft";

/// Runs a chain whose only proxy imports what the host does not provide: `wasm-unprovided` as
/// a preview 1 module, and as a component one that imports `wasi:keyvalue` (no toolchain of
/// ours links that, so the test writes the component's few bytes itself: an import of an
/// empty instance is all it needs). Nothing starts: the conductor exits 78 with its refusal at
/// the `wasm` key, which names the file and what it lacks, and is returned.
fn unprovided_import(target: WasmTarget) -> String {
    let binaries = binaries!();
    let chain = WasmChain::new(TestChain::new(
        &binaries,
        &format!("sandbox-unprovided-{}", target.triple()),
    ));
    let unprovided = match target {
        WasmTarget::P1 => wasm::artifact(&binaries, UNPROVIDED, target),
        WasmTarget::P2 => {
            let path = chain.chain.dir.join("keyvalue.wasm");
            std::fs::write(&path, wasm::component_importing(KEYVALUE)).unwrap();
            path
        }
    };
    let mut chain = chain;
    chain.add_wasm("http", &unprovided);
    let config = chain.write_config();
    let output = std::process::Command::new(&binaries.conductor)
        .args(["run", "--config"])
        .arg(&config)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(78), "{stderr}");
    let prefix = format!("`wasm`: {} ", unprovided.display());
    let refusal = stderr
        .lines()
        .find_map(|line| {
            line.split_once(&prefix)
                .map(|(_, reason)| reason.to_owned())
        })
        .unwrap_or_else(|| panic!("no refusal of the file: {stderr}"));
    assert!(
        !stderr.contains("compiled the"),
        "refused before compiling: {stderr}"
    );
    refusal
}

#[test]
fn a_wasip2_proxy_importing_an_interface_nobody_provides_is_refused_before_it_starts() {
    assert_eq!(
        unprovided_import(WasmTarget::P2),
        wasm::unprovided_component_import(KEYVALUE)
    );
}

#[test]
fn a_wasip1_proxy_importing_a_function_preview_1_lacks_is_refused_before_it_starts() {
    let reason = unprovided_import(WasmTarget::P1);
    assert!(
        reason.contains("`wasi_snapshot_preview1::sock_open`")
            && reason.ends_with("a WASM proxy is given only WASI preview 1"),
        "{reason}"
    );
}

#[test]
fn check_and_doctor_refuse_an_unprovided_import_up_front_with_the_loaders_words() {
    let binaries = binaries!();
    let chain = TestChain::new(&binaries, "sandbox-unprovided-check");
    let dir = &chain.dir;
    let component = dir.join("keyvalue.wasm");
    std::fs::write(&component, wasm::component_importing(KEYVALUE)).unwrap();
    let unprovided = wasm::artifact(&binaries, UNPROVIDED, WasmTarget::P1);
    // A component with one canonical function, `task.cancel`: what a QuickJS build made
    // without `--sync` uses.
    let async_abi = dir.join("async.wasm");
    std::fs::write(&async_abi, b"\0asm\x0d\0\x01\0\x08\x02\x01\x05").unwrap();
    for (file, refusal) in [
        (
            async_abi,
            "uses the component model's async ABI (`task.cancel`), which the conductor does \
             not enable (wasmtime calls its support incomplete, and a sandbox runs only what \
             is finished): build the proxy for the synchronous ABI (`componentize-qjs \
             --sync`; componentize-js's SpiderMonkey build, componentize-py and cargo's \
             wasm32-wasip2 are)"
                .to_owned(),
        ),
        (component, wasm::unprovided_component_import(KEYVALUE)),
        (
            unprovided,
            "imports `wasi_snapshot_preview1::sock_open`, a function WASI preview 1 does not \
             have (some runtimes add it): a WASM proxy is given only WASI preview 1"
                .to_owned(),
        ),
    ] {
        let config = dir.join("unprovided.toml");
        std::fs::write(
            &config,
            format!(
                "[agent]\nbuiltin = \"demo\"\n[[proxy]]\nname = \"p\"\nwasm = {}\n",
                toml_string(&file.display().to_string())
            ),
        )
        .unwrap();
        // `check` exits 78 (the config cannot be used), `doctor` 1 (it found problems).
        for (command, status) in [("check", 78), ("doctor", 1)] {
            let output = std::process::Command::new(&binaries.conductor)
                .args([command, "--config"])
                .arg(&config)
                .output()
                .unwrap();
            let said = format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
            assert_eq!(output.status.code(), Some(status), "{command}: {said}");
            assert!(
                said.contains(&format!("`wasm`: {} {refusal}", file.display())),
                "{command}: {said}"
            );
        }
    }
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
