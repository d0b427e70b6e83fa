//! The compile cache of WASM proxies: a second start loads compiled code instead of compiling;
//! a corrupt entry, an entry from another cache and an unsafe directory are never trusted,
//! never fatal: the proxy is compiled and runs. The proxy is the smallest fixture, which
//! tries a socket at start-up and exits 3, so that cold compiles stay short.

use std::path::{Path, PathBuf};

use acp_conductor_tests::binaries;
use acp_conductor_tests::test_chain::{TestChain, toml_string};
use acp_conductor_tests::wasm::{self, SOCKET, WasmChain, WasmTarget};

const COMPILED: &str = "compiled the WASI preview 1 module";
const FROM_CACHE: &str = "loaded the WASI preview 1 module from the compile cache";

/// A chain of `wasm-socket` using `cache` as `cache_dir`.
fn chain_with_cache(label: &str, cache: &Path) -> WasmChain {
    let binaries = binaries!();
    let socket = wasm::artifact(&binaries, SOCKET, WasmTarget::P1);
    let mut chain = TestChain::new(&binaries, label);
    chain.conductor_setting("cache_dir", &toml_string(&cache.display().to_string()));
    let mut chain = WasmChain::new(chain);
    chain.add_wasm("socket", &socket);
    chain
}

/// Starts the chain, waits until the proxy has run to its end, and returns the
/// conductor's stderr.
fn run_once(chain: &WasmChain) -> String {
    let mut editor = chain.launch();
    editor.wait_for_stderr("stopped component=socket reason=exited with status 3");
    editor.close_stdin();
    editor.wait_exit();
    editor.stderr()
}

/// The one compiled entry of `cache`.
fn entry(cache: &Path) -> PathBuf {
    let entries: Vec<PathBuf> = std::fs::read_dir(cache.join("wasm"))
        .expect("the cache has a wasm directory")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "cwasm"))
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    entries[0].clone()
}

#[test]
fn a_second_start_loads_compiled_code_instead_of_compiling() {
    let scratch = TestChain::new(&binaries!(), "cache-warm");
    let cache = scratch.dir.join("cache");
    let chain = chain_with_cache("cache-warm-run", &cache);

    let cold = run_once(&chain);
    assert!(
        cold.contains(COMPILED) && !cold.contains(FROM_CACHE),
        "{cold}"
    );
    let warm = run_once(&chain);
    assert!(
        warm.contains(FROM_CACHE) && !warm.contains(COMPILED),
        "{warm}"
    );

    use std::os::unix::fs::PermissionsExt;
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(
        mode(&cache.join("wasm")),
        0o700,
        "only the conductor's user may write the cache"
    );
    assert_eq!(mode(&entry(&cache)), 0o600);
    assert_eq!(mode(&cache.join("wasm/key")), 0o600);
}

#[test]
fn a_corrupt_entry_is_recompiled_and_replaced() {
    let scratch = TestChain::new(&binaries!(), "cache-corrupt");
    let cache = scratch.dir.join("cache");
    let chain = chain_with_cache("cache-corrupt-run", &cache);
    run_once(&chain);
    let entry = entry(&cache);
    let mut bytes = std::fs::read(&entry).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x55;
    std::fs::write(&entry, &bytes).unwrap();

    let after = run_once(&chain);
    assert!(after.contains("fails its integrity check"), "{after}");
    assert!(after.contains(COMPILED), "{after}");
    let healed = run_once(&chain);
    assert!(
        healed.contains(FROM_CACHE),
        "the entry was rewritten: {healed}"
    );

    std::fs::write(&entry, b"short").unwrap();
    let truncated = run_once(&chain);
    assert!(
        truncated.contains("is not a cache entry") && truncated.contains(COMPILED),
        "{truncated}"
    );
}

#[test]
fn an_entry_from_another_cache_is_never_loaded() {
    let scratch = TestChain::new(&binaries!(), "cache-foreign");
    let ours = scratch.dir.join("ours");
    let theirs = scratch.dir.join("theirs");
    run_once(&chain_with_cache("cache-foreign-ours", &ours));
    run_once(&chain_with_cache("cache-foreign-theirs", &theirs));
    // Same module, same engine, same name: only the key that signed it differs.
    let foreign = entry(&theirs);
    let name = foreign.file_name().unwrap();
    std::fs::copy(&foreign, ours.join("wasm").join(name)).unwrap();

    let after = run_once(&chain_with_cache("cache-foreign-run", &ours));
    assert!(after.contains("fails its integrity check"), "{after}");
    assert!(after.contains(COMPILED), "{after}");
}

#[test]
fn a_cache_directory_others_can_write_is_not_used() {
    use std::os::unix::fs::PermissionsExt;
    let scratch = TestChain::new(&binaries!(), "cache-open");
    let cache = scratch.dir.join("cache");
    std::fs::create_dir_all(cache.join("wasm")).unwrap();
    std::fs::set_permissions(cache.join("wasm"), std::fs::Permissions::from_mode(0o777)).unwrap();
    let chain = chain_with_cache("cache-open-run", &cache);
    for _ in 0..2 {
        let stderr = run_once(&chain);
        assert!(stderr.contains("is writable by other users"), "{stderr}");
        assert!(stderr.contains(COMPILED), "{stderr}");
    }
}

#[test]
fn proxies_running_the_same_file_share_one_compilation() {
    let binaries = binaries!();
    let socket = wasm::artifact(&binaries, SOCKET, WasmTarget::P1);
    let mut chain = TestChain::new(&binaries, "cache-shared");
    let cache = chain.dir.join("cache");
    chain.conductor_setting("cache_dir", &toml_string(&cache.display().to_string()));
    let mut chain = WasmChain::new(chain);
    chain.add_wasm("first", &socket);
    chain.add_wasm("second", &socket);
    let mut editor = chain.launch();
    editor.wait_for_stderr("shares the code of the WASI preview 1 module another proxy loaded");
    editor.close_stdin();
    editor.wait_exit();
    let stderr = editor.stderr();
    assert_eq!(stderr.matches(COMPILED).count(), 1, "{stderr}");
}
