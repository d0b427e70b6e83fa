//! Headless Chromium from the command line: the DOM after the page's script ran
//! (`--dump-dom`), a screenshot, and the page's `#render-report` out of the DOM.
//! Chromium is required: its absence fails the test (CI installs Debian's `chromium`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long one Chromium run may take.
const CHROMIUM_PATIENCE: Duration = Duration::from_secs(180);

/// The Chromium on the PATH (`chromium`, `chromium-browser`), or `CHROMIUM` when set.
pub fn chromium() -> PathBuf {
    if let Some(path) = std::env::var_os("CHROMIUM") {
        return PathBuf::from(path);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in ["chromium", "chromium-browser"] {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    panic!(
        "no Chromium on the PATH (looked for `chromium` and `chromium-browser`): the trace \
         viewer's tests need it; on Debian `apt-get install chromium` (.ci/run does), or set CHROMIUM"
    );
}

/// `file://` URL of `path` with `#fragment`.
pub fn file_url(path: &Path, fragment: &str) -> String {
    let path = path.canonicalize().expect("the page exists");
    let mut url = String::from("file://");
    for byte in path.to_str().expect("a UTF-8 path").bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                url.push(byte as char)
            }
            _ => url.push_str(&format!("%{byte:02X}")),
        }
    }
    if !fragment.is_empty() {
        url.push('#');
        url.push_str(fragment);
    }
    url
}

/// Runs headless Chromium on `url` with `extra` flags; returns its stdout.
fn run(url: &str, extra: &[String], profile: &Path) -> String {
    let mut command = Command::new(chromium());
    command
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-dev-shm-usage",
            "--window-size=1400,900",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", chromium().display()));
    let stdout = child.stdout.take().expect("piped");
    let stderr = child.stderr.take().expect("piped");
    let out = std::thread::spawn(move || read_all(stdout));
    let err = std::thread::spawn(move || read_all(stderr));
    let deadline = Instant::now() + CHROMIUM_PATIENCE;
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "Chromium did not finish with {url} within {CHROMIUM_PATIENCE:?}; its stderr:\n{}",
                err.join().unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = out.join().expect("stdout reader");
    let stderr = err.join().expect("stderr reader");
    assert!(
        status.success(),
        "Chromium failed ({status}) on {url}; its stderr:\n{stderr}"
    );
    stdout
}

fn read_all(mut from: impl std::io::Read) -> String {
    let mut bytes = Vec::new();
    let _ = from.read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The DOM of `url` once its script has run.
pub fn dump_dom(url: &str, profile: &Path) -> String {
    run(url, &["--dump-dom".to_string()], profile)
}

/// A 1400×900 screenshot of `url` into `png`.
pub fn screenshot(url: &str, png: &Path, profile: &Path) {
    let _ = std::fs::remove_file(png);
    run(url, &[format!("--screenshot={}", png.display())], profile);
    let bytes = std::fs::read(png)
        .unwrap_or_else(|e| panic!("Chromium wrote no screenshot at {}: {e}", png.display()));
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000,
        "{} is not a picture of a page ({} bytes)",
        png.display(),
        bytes.len()
    );
}

/// The page's machine-readable summary, from `<pre id="render-report">`.
pub fn render_report(dom: &str) -> Value {
    let start_tag = dom
        .find("<pre id=\"render-report\"")
        .unwrap_or_else(|| panic!("no #render-report in the DOM:\n{}", head(dom)));
    let open_end = start_tag + dom[start_tag..].find('>').expect("tag closes") + 1;
    let close = open_end + dom[open_end..].find("</pre>").expect("pre closes");
    let text = dom[open_end..close]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&");
    assert!(
        !text.trim().is_empty(),
        "the page published no report: its script did not finish.\n{}",
        head(dom)
    );
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("the report is not JSON ({e}): {text}"))
}

fn head(text: &str) -> &str {
    &text[..text.len().min(3000)]
}
