//! `acp-bench-capacity`: how many connections one `acp-conductor serve` holds, and what runs
//! out first. Opens Streamable HTTP connections to `serve` (an `initialize` POST each, then
//! left idle) running the demo agent behind N context proxies, until one fails; samples
//! memory (PSS of `serve` and every descendant), processes and `serve`'s open files on the
//! way; then closes every connection and checks that `serve` takes a new one.
//!
//! Expects builds of `acp-conductor`, `acp-demo-agent` and `acp-context-proxy` in
//! `--bin-dir` (default `target/release`). Prints markdown to stdout, progress to stderr.
//! Resource limits are the caller's (`ulimit -n`, a pids cgroup): see docs/operations.md.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use acp_bench::chain_config::toml_string;
use acp_bench::peer::{BenchError, Result};
use acp_bench::proc_status::descendants_of;

const USAGE: &str =
    "usage: acp-bench-capacity [--proxies N] [--max N] [--sample-every N] [--bin-dir DIR]";
/// How long one `initialize` may take before the connection counts as failed.
const OPEN_TIMEOUT: Duration = Duration::from_secs(60);

struct Options {
    proxies: usize,
    max: usize,
    sample_every: usize,
    bin_dir: PathBuf,
}

impl Options {
    fn parse(args: &[String]) -> Option<Options> {
        let mut options = Options {
            proxies: 1,
            max: 100_000,
            sample_every: 250,
            bin_dir: Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/release"),
        };
        let mut args = args.iter();
        while let Some(flag) = args.next() {
            let value = args.next()?;
            match flag.as_str() {
                "--proxies" => options.proxies = value.parse().ok()?,
                "--max" => options.max = value.parse().ok()?,
                "--sample-every" => options.sample_every = value.parse().ok().filter(|n| *n > 0)?,
                "--bin-dir" => options.bin_dir = std::path::absolute(value).ok()?,
                _ => return None,
            }
        }
        Some(options)
    }
}

/// One look at `serve` with `connections` open.
struct Sample {
    connections: usize,
    processes: usize,
    /// PSS of `serve` and its descendants, KiB.
    pss_kib: u64,
    serve_rss_kib: u64,
    serve_files: usize,
}

impl Sample {
    fn take(serve: u32, connections: usize) -> Sample {
        let descendants = descendants_of(serve);
        let pss_kib = std::iter::once(serve)
            .chain(descendants.iter().copied())
            .filter_map(|pid| rollup_kib(pid, "Pss:"))
            .sum();
        Sample {
            connections,
            processes: descendants.len(),
            pss_kib,
            serve_rss_kib: rollup_kib(serve, "Rss:").unwrap_or(0),
            serve_files: std::fs::read_dir(format!("/proc/{serve}/fd"))
                .map(|dir| dir.count())
                .unwrap_or(0),
        }
    }
}

/// A `NAME: N kB` line of `/proc/PID/smaps_rollup`.
fn rollup_kib(pid: u32, name: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    text.lines()
        .find_map(|line| line.strip_prefix(name))
        .and_then(|rest| rest.trim().strip_suffix("kB"))
        .and_then(|kib| kib.trim().parse().ok())
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

/// One HTTP/1.1 exchange on a new TCP connection: the status and the whole answer.
fn exchange(server: SocketAddr, request: &str) -> std::io::Result<(u16, String)> {
    let mut stream = TcpStream::connect(server)?;
    stream.set_read_timeout(Some(OPEN_TIMEOUT))?;
    stream.write_all(request.as_bytes())?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    Ok((status, answer))
}

/// Why a connection was not opened.
#[derive(Debug, thiserror::Error)]
enum NotOpened {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("HTTP {status}: {body}")]
    Refused { status: u16, body: String },
    #[error("serve exited")]
    Exited,
}

/// Opens a connection with `initialize`: its `Acp-Connection-Id`, or why it failed.
fn open(server: SocketAddr) -> std::result::Result<String, NotOpened> {
    let body = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#;
    let request = format!(
        "POST /acp HTTP/1.1\r\nHost: {server}\r\nContent-Type: application/json\r\nAccept: \
         application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let (status, answer) = exchange(server, &request)?;
    let id = answer.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("acp-connection-id")
            .then(|| value.trim().to_owned())
    });
    match id {
        Some(id) if status == 200 && answer.contains("\"result\"") => Ok(id),
        _ => Err(NotOpened::Refused {
            status,
            body: answer
                .split("\r\n\r\n")
                .nth(1)
                .unwrap_or("")
                .trim()
                .to_owned(),
        }),
    }
}

fn close(server: SocketAddr, id: &str) {
    let request = format!(
        "DELETE /acp HTTP/1.1\r\nHost: {server}\r\nAcp-Connection-Id: {id}\r\nConnection: \
         close\r\n\r\n"
    );
    let _ = exchange(server, &request);
}

fn start_serve(options: &Options, scratch: &Path) -> Result<(Child, SocketAddr)> {
    let program = |name: &str| {
        let path = options.bin_dir.join(name);
        if path.is_file() {
            Ok(path)
        } else {
            Err(BenchError(format!(
                "{} is missing: build it (docs/performance.md)",
                path.display()
            )))
        }
    };
    let (conductor, agent, proxy) = (
        program("acp-conductor")?,
        program("acp-demo-agent")?,
        program("acp-context-proxy")?,
    );
    let mut config = format!(
        "[agent]\ncommand = {}\n",
        toml_string(&agent.to_string_lossy())
    );
    for index in 0..options.proxies {
        config.push_str(&format!(
            "\n[[proxy]]\nname = \"context-{index}\"\ncommand = {}\nargs = [\"--rule\", \"Be brief\"]\n",
            toml_string(&proxy.to_string_lossy())
        ));
    }
    let file = scratch.join("conductor.toml");
    std::fs::write(&file, config)?;
    let address = TcpListener::bind("127.0.0.1:0")?.local_addr()?;
    let log = std::fs::File::create(scratch.join("serve.stderr"))?;
    let child = Command::new(conductor)
        .args(["serve", "--config"])
        .arg(&file)
        .args(["--listen", &address.to_string()])
        .args(["--max-connections", "65535", "--idle-timeout", "1h"])
        .env("ACP_CONDUCTOR_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()?;
    let mut child = child;
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(address).is_err() {
        if Instant::now() > deadline || !matches!(child.try_wait(), Ok(None)) {
            let _ = child.kill();
            let log = std::fs::read_to_string(scratch.join("serve.stderr")).unwrap_or_default();
            return Err(BenchError(format!(
                "`serve` never listened on {address}: {log}"
            )));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok((child, address))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(options) = Options::parse(&args) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    match run(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("acp-bench-capacity: {}", e.0);
            ExitCode::FAILURE
        }
    }
}

fn run(options: &Options) -> Result<()> {
    let scratch = std::env::temp_dir().join(format!("acp-bench-capacity-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let (mut serve, server) = start_serve(options, &scratch)?;
    let pid = serve.id();
    let idle = Sample::take(pid, 0);
    let mut samples = vec![];
    let mut open_ids = Vec::new();
    let mut failure = None;
    let started = Instant::now();
    while open_ids.len() < options.max {
        match open(server) {
            Ok(id) => open_ids.push(id),
            Err(why) => {
                failure = Some(why.to_string());
                break;
            }
        }
        if open_ids.len() % options.sample_every == 0 {
            let sample = Sample::take(pid, open_ids.len());
            eprintln!(
                "acp-bench-capacity: {} connections, {} processes, {} PSS, serve {} files ({:.0?})",
                sample.connections,
                sample.processes,
                mib(sample.pss_kib),
                sample.serve_files,
                started.elapsed()
            );
            samples.push(sample);
        }
    }
    let at_end = Sample::take(pid, open_ids.len());
    eprintln!(
        "acp-bench-capacity: stopped at {} connections ({}); closing them",
        open_ids.len(),
        failure.as_deref().unwrap_or("--max reached")
    );
    for id in &open_ids {
        close(server, id);
    }
    let deadline = Instant::now() + Duration::from_secs(300);
    while !descendants_of(pid).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    let left = descendants_of(pid).len();
    let survived = matches!(serve.try_wait(), Ok(None));
    let again = if survived {
        open(server)
    } else {
        Err(NotOpened::Exited)
    };
    let after = Sample::take(pid, usize::from(again.is_ok()));
    let _ = serve.kill();
    let _ = serve.wait();

    println!(
        "`serve` with {} context prox{} and the demo agent (binaries from {}):\n",
        options.proxies,
        if options.proxies == 1 { "y" } else { "ies" },
        options.bin_dir.display()
    );
    println!(
        "| connections | processes | PSS, serve and descendants | per connection | serve's RSS | serve's open files |"
    );
    println!("|---:|---:|---:|---:|---:|---:|");
    let last = samples.last().map(|s| s.connections);
    let end = (last != Some(at_end.connections)).then_some(&at_end);
    for sample in std::iter::once(&idle).chain(&samples).chain(end) {
        let per = sample
            .pss_kib
            .saturating_sub(idle.pss_kib)
            .checked_div(sample.connections as u64)
            .map(mib)
            .unwrap_or_default();
        println!(
            "| {} | {} | {} | {per} | {} | {} |",
            sample.connections,
            sample.processes,
            mib(sample.pss_kib),
            mib(sample.serve_rss_kib),
            sample.serve_files
        );
    }
    println!();
    println!(
        "Stopped at {} connections: {}. `serve` {} running; after closing every connection {} \
         of its processes were left, and a new connection {} (`serve`'s RSS then {}).",
        open_ids.len(),
        failure.as_deref().unwrap_or("--max reached"),
        if survived { "kept" } else { "did not keep" },
        left,
        match &again {
            Ok(_) => "was served".to_owned(),
            Err(why) => format!("failed ({why})"),
        },
        mib(after.serve_rss_kib)
    );
    eprintln!(
        "acp-bench-capacity: serve's log is in {}",
        scratch.display()
    );
    Ok(())
}
