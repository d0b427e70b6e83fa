//! A page kept open in headless Chromium and driven over the DevTools protocol on
//! `--remote-debugging-pipe` (commands on fd 3, answers on fd 4, each a JSON text ended by
//! NUL): for what a one-shot `--dump-dom` cannot see, a page that changes after it loaded
//! (the live view appending records) and real mouse clicks.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{FromRawFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub struct Page {
    child: Child,
    commands: File,
    answers: mpsc::Receiver<Value>,
    session: String,
    next_id: u64,
}

fn pipe() -> (RawFd, RawFd) {
    let mut fds = [0; 2];
    // SAFETY: pipe2(2) fills the two descriptors; both are ours from here on.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(rc, 0, "pipe2: {}", std::io::Error::last_os_error());
    (fds[0], fds[1])
}

impl Page {
    /// Starts Chromium and opens `url` in a 1400×900 page.
    pub fn open(url: &str, profile: &Path) -> Self {
        let (to_chromium_read, to_chromium_write) = pipe();
        let (from_chromium_read, from_chromium_write) = pipe();
        let mut command = Command::new(super::browser::chromium());
        command
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-dev-shm-usage",
                "--remote-debugging-pipe",
                "--window-size=1400,900",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: fcntl(2) and dup2(2) only, between fork and exec. The ends are first copied
        // above 9, so that neither can be one of 3 and 4 when those are overwritten; the
        // copies on 3 and 4 are not close-on-exec.
        unsafe {
            command.pre_exec(move || {
                let read = libc::fcntl(to_chromium_read, libc::F_DUPFD_CLOEXEC, 10);
                let write = libc::fcntl(from_chromium_write, libc::F_DUPFD_CLOEXEC, 10);
                if read < 0 || write < 0 || libc::dup2(read, 3) < 0 || libc::dup2(write, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().expect("start Chromium");
        // SAFETY: each descriptor is owned once: the child has its copies, these close ours.
        let (commands, answers_file) = unsafe {
            drop(File::from_raw_fd(to_chromium_read));
            drop(File::from_raw_fd(from_chromium_write));
            (
                File::from_raw_fd(to_chromium_write),
                File::from_raw_fd(from_chromium_read),
            )
        };
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(answers_file);
            let mut message = Vec::new();
            loop {
                message.clear();
                match reader.read_until(0, &mut message) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
                if message.last() == Some(&0) {
                    message.pop();
                }
                let Ok(value) = serde_json::from_slice::<Value>(&message) else {
                    continue;
                };
                if tx.send(value).is_err() {
                    return;
                }
            }
        });
        let mut page = Self {
            child,
            commands,
            answers: rx,
            session: String::new(),
            next_id: 0,
        };
        let target = page.call(None, "Target.createTarget", json!({"url": "about:blank"}));
        let target_id = target["targetId"].as_str().expect("targetId").to_string();
        let attached = page.call(
            None,
            "Target.attachToTarget",
            json!({"targetId": target_id, "flatten": true}),
        );
        page.session = attached["sessionId"]
            .as_str()
            .expect("sessionId")
            .to_string();
        page.command(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": 1400, "height": 900, "deviceScaleFactor": 1, "mobile": false}),
        );
        page.command("Page.navigate", json!({"url": url}));
        page
    }

    fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        let mut bytes = message.to_string().into_bytes();
        bytes.push(0);
        self.commands
            .write_all(&bytes)
            .and_then(|()| self.commands.flush())
            .expect("send to Chromium");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let answer = self
                .answers
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .unwrap_or_else(|_| panic!("Chromium did not answer {method}"));
            if answer["id"] == id {
                if let Some(error) = answer.get("error") {
                    panic!("{method} failed: {error}");
                }
                return answer["result"].clone();
            }
        }
    }

    /// A command to the page.
    pub fn command(&mut self, method: &str, params: Value) -> Value {
        let session = self.session.clone();
        self.call(Some(&session), method, params)
    }

    /// The value of a JavaScript expression in the page.
    pub fn eval(&mut self, expression: &str) -> Value {
        let result = self.command(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        );
        result["result"]["value"].clone()
    }

    /// The page's `#render-report` once `ready` holds for it (polled), or a panic after
    /// `patience`.
    pub fn report_when(&mut self, patience: Duration, ready: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + patience;
        let mut last = Value::Null;
        while Instant::now() < deadline {
            let text =
                self.eval("(document.getElementById('render-report') || {}).textContent || ''");
            if let Some(report) = text
                .as_str()
                .and_then(|t| serde_json::from_str::<Value>(t).ok())
            {
                if ready(&report) {
                    return report;
                }
                last = report;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("the page never got there within {patience:?}; its last report: {last}");
    }

    /// A real left click at (x, y) in CSS pixels of the viewport.
    pub fn click(&mut self, x: f64, y: f64) {
        for kind in ["mousePressed", "mouseReleased"] {
            self.command(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            );
        }
    }
}

impl Drop for Page {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
