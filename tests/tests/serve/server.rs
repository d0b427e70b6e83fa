//! A `acp-conductor serve` process for one test: started on 127.0.0.1 with a port the kernel
//! picks, its address read from its log, its stderr kept, stopped with SIGTERM when dropped.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use acp_conductor_tests::TestChain;
use acp_conductor_tests::editor::patience;

/// The line `serve` logs once it listens: `... on http://127.0.0.1:PORT/acp`.
const LISTENING: &str = "serving the chain of ";

pub struct Server {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    stderr: Arc<Mutex<String>>,
}

impl Server {
    /// `serve --config <the chain's config> --listen 127.0.0.1:0 <extra>`.
    pub fn start(chain: &TestChain, extra: &[&str]) -> Server {
        let config = chain.write_config();
        Server::start_config(&chain.binaries.conductor, &config, extra)
    }

    /// `serve --config CONFIG --listen 127.0.0.1:0 <extra>`, for a config written elsewhere.
    pub fn start_config(conductor: &Path, config: &Path, extra: &[&str]) -> Server {
        let mut args = vec![
            "serve".to_string(),
            "--config".to_string(),
            config.display().to_string(),
            "--listen".to_string(),
            "127.0.0.1:0".to_string(),
        ];
        args.extend(extra.iter().map(|a| a.to_string()));
        Server::start_with(conductor, &args)
    }

    fn start_with(conductor: &Path, args: &[String]) -> Server {
        let mut command = Command::new(conductor);
        command.args(args);
        Server::start_command(command)
    }

    /// `serve` as `command` says (its arguments, and whatever else the test sets on it).
    pub fn start_command(mut command: Command) -> Server {
        let mut child = command
            .env("ACP_CONDUCTOR_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start acp-conductor serve");
        let stderr = Arc::new(Mutex::new(String::new()));
        let (found, address) = mpsc::channel();
        let pipe = child.stderr.take().expect("piped stderr");
        let kept = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                // Kept before the address is handed over: a test that got it may read the
                // line at once.
                {
                    let mut text = kept.lock().unwrap();
                    text.push_str(&line);
                    text.push('\n');
                }
                if let Some(rest) = line.split_once(LISTENING).map(|(_, rest)| rest)
                    && let Some(url) = rest.split(" on ").last()
                {
                    let _ = found.send(url.to_string());
                }
            }
        });
        let url = match address.recv_timeout(patience()) {
            Ok(url) => url,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "serve did not start listening; its stderr:\n{}",
                    stderr.lock().unwrap()
                );
            }
        };
        let addr = url
            .split("://")
            .nth(1)
            .and_then(|rest| rest.strip_suffix("/acp"))
            .unwrap_or_else(|| panic!("unexpected address line: {url}"))
            .to_string();
        Server {
            child,
            addr,
            stderr,
        }
    }

    pub fn ws_url(&self) -> String {
        format!("ws://{}/acp", self.addr)
    }

    pub fn http_url(&self) -> String {
        format!("http://{}/acp", self.addr)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// The resident set now (`VmRSS`), in KiB.
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .expect("serve's /proc status");
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|rest| rest.trim().strip_suffix("kB"))
            .and_then(|kib| kib.trim().parse().ok())
            .expect("VmRSS in /proc status")
    }

    /// The admin listener's `HOST:PORT`, once `serve --admin-listen` has logged it.
    pub fn admin_addr(&self) -> String {
        let marker = "admin endpoints on http://";
        let stderr = self.stderr();
        let rest = stderr
            .split_once(marker)
            .unwrap_or_else(|| panic!("no admin listener in serve's log:\n{stderr}"))
            .1;
        rest.split_whitespace().next().unwrap().to_string()
    }

    /// Sends SIGTERM.
    pub fn signal_term(&self) {
        // SAFETY: kill(2) on the child we started and have not reaped.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
    }

    /// Its exit status, once it has exited within `wait`.
    pub fn exited_within(&mut self, wait: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + wait;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return Some(status);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends SIGTERM (which drains: connections without a turn in flight close at once) and
    /// waits for the exit.
    pub fn stop(&mut self) -> ExitStatus {
        self.signal_term();
        match self.exited_within(patience() * 2) {
            Some(status) => status,
            None => {
                let _ = self.child.kill();
                panic!(
                    "serve did not exit after SIGTERM; stderr:\n{}",
                    self.stderr()
                );
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            // A second SIGTERM stops a drain that waits for a turn in flight.
            self.signal_term();
            if self.exited_within(Duration::from_millis(500)).is_none() {
                self.signal_term();
            }
            if self.exited_within(patience() * 2).is_none() {
                let _ = self.child.kill();
                let _ = self.child.wait();
            }
        }
        if std::thread::panicking() {
            eprintln!("--- serve stderr ---\n{}", self.stderr());
        }
    }
}

/// Runs `acp-conductor serve ARGS` expecting it to refuse to start: its exit status and stderr.
pub fn refused(conductor: &Path, args: &[String]) -> (ExitStatus, String) {
    let output = Command::new(conductor)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run acp-conductor serve");
    (
        output.status,
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The pid the test-agent of `chain` wrote when it started, once it has.
pub fn agent_pid(file: &PathBuf) -> u32 {
    let deadline = Instant::now() + patience();
    loop {
        if let Ok(text) = std::fs::read_to_string(file)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        assert!(
            Instant::now() < deadline,
            "{} was never written",
            file.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}
