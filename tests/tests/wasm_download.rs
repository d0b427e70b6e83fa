//! A WASM proxy distributed at a URL: `wasm = "http://…/x.wasm"` with its `sha256` is fetched
//! once into the cache, verified and run; another file at the URL is refused with both hashes
//! and kept nowhere; a URL without its hash is refused before anything starts; `doctor` shows
//! the source and the hash. The file is served by a small HTTP server of the test, on
//! loopback; the proxy is the smallest fixture, which exits 3 at start-up.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use acp_conductor_tests::binaries;
use acp_conductor_tests::test_chain::{TestChain, toml_string};
use acp_conductor_tests::wasm::{self, SOCKET, WasmChain, WasmTarget};

/// Serves `body` at every path over HTTP/1.1 on loopback; counts the requests.
struct FileServer {
    url: String,
    requests: Arc<AtomicUsize>,
}

impl FileServer {
    fn serve(body: Vec<u8>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("listen on loopback");
        let url = format!("http://{}/proxy.wasm", listener.local_addr().unwrap());
        let requests = Arc::new(AtomicUsize::new(0));
        let counted = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                // The request line and headers, up to the blank line.
                while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                    line.clear();
                }
                counted.fetch_add(1, Ordering::SeqCst);
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/wasm\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(head.as_bytes());
                let _ = stream.write_all(&body);
            }
        });
        Self { url, requests }
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

/// The SHA-256 of `file` as `sha256sum` prints it.
fn sha256_of(file: &Path) -> String {
    let output = Command::new("sha256sum").arg(file).output().unwrap();
    assert!(output.status.success());
    String::from_utf8(output.stdout).unwrap()[..64].to_owned()
}

/// A chain of one proxy fetched from `url` (with `sha256`, when given) into `cache`.
fn chain_from_url(label: &str, cache: &Path, url: &str, sha256: Option<&str>) -> WasmChain {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, label);
    chain.conductor_setting("cache_dir", &toml_string(&cache.display().to_string()));
    let mut chain = WasmChain::new(chain);
    let proxy = chain.add_wasm("socket", Path::new(url));
    if let Some(sha256) = sha256 {
        proxy.setting("sha256", &toml_string(sha256));
    }
    chain
}

/// Starts the chain and returns the conductor's stderr once the proxy has ended.
fn run_until_stopped(chain: &WasmChain) -> String {
    let mut editor = chain.launch();
    editor.wait_for_stderr("stopped component=socket reason=");
    editor.close_stdin();
    editor.wait_exit();
    editor.stderr()
}

fn socket_artifact() -> PathBuf {
    wasm::artifact(&binaries!(), SOCKET, WasmTarget::P1)
}

#[test]
fn a_wasm_url_is_fetched_once_verified_and_then_run_from_the_cache() {
    let artifact = socket_artifact();
    let sha256 = sha256_of(&artifact);
    let server = FileServer::serve(std::fs::read(&artifact).unwrap());
    let scratch = TestChain::new(&binaries!(), "download-once");
    let cache = scratch.dir.join("cache");
    let chain = chain_from_url("download-once-run", &cache, &server.url, Some(&sha256));

    let first = run_until_stopped(&chain);
    assert!(
        first.contains(&format!("fetched {} (SHA-256 verified)", server.url)),
        "{first}"
    );
    assert!(
        first.contains("stopped component=socket reason=exited with status 3"),
        "the fetched proxy ran: {first}"
    );
    let kept = cache.join("wasm-downloads").join(format!("{sha256}.wasm"));
    assert_eq!(
        std::fs::read(&kept).unwrap(),
        std::fs::read(&artifact).unwrap()
    );

    let second = run_until_stopped(&chain);
    assert!(!second.contains("fetched "), "{second}");
    assert!(
        second.contains("stopped component=socket reason=exited with status 3"),
        "{second}"
    );
    assert_eq!(
        server.requests(),
        1,
        "fetched once, then read from the cache"
    );

    let output = Command::new(&binaries!().conductor)
        .args(["doctor", "--config"])
        .arg(chain.write_config())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(&format!(
            "source: {}, SHA-256 {sha256}; fetched and kept in the cache",
            server.url
        )),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn a_wasm_url_serving_another_file_is_refused_with_both_hashes_and_kept_nowhere() {
    let artifact = socket_artifact();
    let served = std::fs::read(&artifact).unwrap();
    let actual = sha256_of(&artifact);
    let expected = "0".repeat(64);
    let server = FileServer::serve(served);
    let scratch = TestChain::new(&binaries!(), "download-mismatch");
    let cache = scratch.dir.join("cache");
    let chain = chain_from_url(
        "download-mismatch-run",
        &cache,
        &server.url,
        Some(&expected),
    );

    let stderr = run_until_stopped(&chain);
    assert!(
        stderr.contains(&format!(
            "reason=could not be loaded: {} has SHA-256 {actual}, not the {expected} the \
             config requires",
            server.url
        )),
        "{stderr}"
    );
    let downloads = cache.join("wasm-downloads");
    let kept: Vec<_> = std::fs::read_dir(&downloads)
        .map(|dir| dir.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(kept.is_empty(), "nothing kept: {kept:?}");
}

#[test]
fn a_wasm_url_without_its_sha256_is_refused_before_anything_starts() {
    // Nothing listens at this address: a fetch would fail with another error.
    let url = "http://127.0.0.1:9/proxy.wasm";
    let scratch = TestChain::new(&binaries!(), "download-no-hash");
    let chain = chain_from_url(
        "download-no-hash-run",
        &scratch.dir.join("cache"),
        url,
        None,
    );
    let config = chain.write_config();
    // `check` and `run` exit 78 (the config cannot be used), `doctor` 1 (it found problems).
    for (command, status) in [("check", 78), ("run", 78), ("doctor", 1)] {
        let output = Command::new(&binaries!().conductor)
            .args([command, "--config"])
            .arg(&config)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let stderr = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(output.status.code(), Some(status), "{command}: {stderr}");
        assert!(
            stderr.contains(
                "`wasm` is a URL, so `sha256` is required: the SHA-256 of the file (64 \
                 hexadecimal digits, as `sha256sum` prints it), which the download must match"
            ),
            "{command}: {stderr}"
        );
    }
}
