//! The `mcp-bridge` shim on its own: started without a conductor to dial, or naming a server
//! nobody declared, it exits non-zero with a message on stderr and nothing on stdout.

use acp_conductor_tests::binaries;
use std::io::Write;
use std::process::{Command, Stdio};

#[test]
fn a_shim_that_cannot_reach_its_conductor_exits_2_and_says_why() {
    let binaries = binaries!();
    let dir = std::env::temp_dir().join(format!("acp-e2e-shim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let socket = dir.join("bridge.sock");
    let mut shim = Command::new(&binaries.conductor)
        .args(["mcp-bridge", "--socket"])
        .arg(&socket)
        .args(["--server", "notes-1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // An agent would start with its MCP initialize; the shim must not hang on it.
    let _ = shim
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#);
    let output = shim.wait_with_output().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(output.stdout.is_empty(), "stdout is MCP only: {output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot reach the conductor") && stderr.contains("bridge.sock"),
        "{stderr}"
    );
}
