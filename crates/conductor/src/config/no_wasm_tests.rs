//! The native-only build (`--no-default-features`): a `wasm` proxy is refused where it is
//! written, so `check` and `run` say why before anything starts.

use super::test_support::TempDir;
use super::*;

#[test]
fn a_wasm_proxy_is_refused_at_its_key() {
    let temp = TempDir::new("no-wasm");
    temp.write("conf/p1.wasm", b"\0asm\x01\0\0\0");
    temp.demo_agent("exe");
    let text = "[agent]\nbuiltin = \"demo\"\n[[proxy]]\nname = \"p\"\nwasm = \"p1.wasm\"\n";
    let result = parse_str(
        text,
        &temp.path().join("conf/conductor.toml"),
        &|_: &str| None,
        Some(&temp.path().join("exe")),
    );
    let Err(ConfigErrors(errors)) = result else {
        panic!("a wasm proxy must be refused by a native-only build");
    };
    let found: Vec<String> = errors
        .iter()
        .map(|e| format!("{}:{}: {}", e.line, e.column, e.message))
        .collect();
    assert_eq!(found, vec![format!("5:1: {NO_WASM}")]);
}
