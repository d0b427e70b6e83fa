//! `acp-bench-remote`: what reaching the agent over ACP's remote transport costs. Round trip
//! and streaming through acp-conductor to the bench agent run locally (stdio), and to the
//! same agent behind `acp-conductor serve` on loopback, over WebSocket and Streamable HTTP.
//!
//! Expects release builds of `acp-conductor` and `bench-agent` in `target/release` (see
//! docs/performance.md). Prints markdown to stdout, progress to stderr. `--quick` uses tiny
//! counts.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use acp_bench::chain_config::toml_string;
use acp_bench::peer::{BenchError, Launch, Result};
use acp_bench::session_run::{SessionCounts, measure_session, micros, millis, time_to_initialize};
use acp_bench::stats::{LatencySummary, Throughput};

/// How the conductor reaches the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    /// `command`: the agent is the conductor's child, over stdio.
    Local,
    /// `url = "ws://..."` to `acp-conductor serve`.
    WebSocket,
    /// `url = "http://..."` to `acp-conductor serve`.
    StreamableHttp,
}

impl Reach {
    fn label(self) -> &'static str {
        match self {
            Reach::Local => "local: the agent over stdio",
            Reach::WebSocket => "remote: WebSocket to `serve`, agent over stdio there",
            Reach::StreamableHttp => "remote: Streamable HTTP to `serve`, agent over stdio there",
        }
    }
}

struct Counts {
    session: SessionCounts,
    starts: usize,
}

const FULL: Counts = Counts {
    session: SessionCounts::FULL,
    starts: 20,
};

const QUICK: Counts = Counts {
    session: SessionCounts::QUICK,
    starts: 2,
};

struct Programs {
    conductor: PathBuf,
    agent: PathBuf,
    scratch: PathBuf,
}

impl Programs {
    fn locate(scratch: PathBuf) -> Result<Programs> {
        let release = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/release");
        let programs = Programs {
            conductor: release.join("acp-conductor"),
            agent: release.join("bench-agent"),
            scratch,
        };
        for path in [&programs.conductor, &programs.agent] {
            if !path.is_file() {
                return Err(BenchError(format!(
                    "{} is missing: see docs/performance.md for the build commands",
                    path.display()
                )));
            }
        }
        Ok(programs)
    }

    /// The `[agent]` table running the bench agent as a child.
    fn local_agent(&self) -> String {
        format!(
            "[agent]\nname = \"bench-agent\"\ncommand = {}\n",
            toml_string(&self.agent.to_string_lossy())
        )
    }

    /// The conductor the editor talks to, reaching the agent as `reach` says.
    fn launch(&self, reach: Reach, server: SocketAddr) -> Result<Launch> {
        let agent = match reach {
            Reach::Local => self.local_agent(),
            Reach::WebSocket => format!("[agent]\nname = \"far\"\nurl = \"ws://{server}/acp\"\n"),
            Reach::StreamableHttp => {
                format!("[agent]\nname = \"far\"\nurl = \"http://{server}/acp\"\n")
            }
        };
        let label = format!("{reach:?}");
        let config = self.scratch.join(format!("{label}.toml"));
        std::fs::write(&config, agent)?;
        Ok(Launch {
            program: self.conductor.clone(),
            args: vec![
                "run".to_owned(),
                "--config".to_owned(),
                config.to_string_lossy().into_owned(),
            ],
            stderr_log: self.scratch.join(format!("{label}.stderr")),
        })
    }

    /// `acp-conductor serve` of the bench agent on a free loopback port, accepting
    /// connections when this returns.
    fn serve(&self) -> Result<(Child, SocketAddr)> {
        let address = TcpListener::bind("127.0.0.1:0")?.local_addr()?;
        let config = self.scratch.join("serve.toml");
        std::fs::write(&config, self.local_agent())?;
        let log = std::fs::File::create(self.scratch.join("serve.stderr"))?;
        let child = Command::new(&self.conductor)
            .args(["serve", "--config"])
            .arg(&config)
            .args(["--listen", &address.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()?;
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(address).is_err() {
            if Instant::now() > deadline {
                return Err(BenchError(format!("`serve` never listened on {address}")));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok((child, address))
    }
}

struct Figures {
    reach: Reach,
    start: LatencySummary,
    small: LatencySummary,
    streaming: Throughput,
}

/// From spawning the conductor to its `InitializeResponse` (for a remote agent: connecting,
/// and `serve` starting the agent for the new connection).
fn start_times(launch: &Launch, starts: usize) -> Result<LatencySummary> {
    let times = (0..starts)
        .map(|_| time_to_initialize(launch))
        .collect::<Result<Vec<_>>>()?;
    Ok(LatencySummary::of(times).expect("at least one start"))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let counts = match args.as_slice() {
        [] => &FULL,
        [quick] if quick == "--quick" => &QUICK,
        _ => {
            eprintln!("usage: acp-bench-remote [--quick]");
            return ExitCode::from(2);
        }
    };
    match run(counts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("acp-bench-remote: {}", e.0);
            ExitCode::FAILURE
        }
    }
}

fn run(counts: &Counts) -> Result<()> {
    let scratch = std::env::temp_dir().join(format!("acp-bench-remote-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let programs = Programs::locate(scratch.clone())?;
    let (mut server, address) = programs.serve()?;
    let mut rows = Vec::new();
    let mut failure = None;
    for reach in [Reach::Local, Reach::WebSocket, Reach::StreamableHttp] {
        eprint!("acp-bench-remote: {} ... ", reach.label());
        let measured = programs.launch(reach, address).and_then(|launch| {
            let start = start_times(&launch, counts.starts)?;
            let (small, streaming) = measure_session(&launch, &counts.session, &scratch)?;
            Ok(Figures {
                reach,
                start,
                small,
                streaming,
            })
        });
        match measured {
            Ok(figures) => {
                eprintln!("p50 {}", micros(figures.small.p50));
                rows.push(figures);
            }
            Err(e) => {
                eprintln!("failed");
                failure = Some(e);
                break;
            }
        }
    }
    let _ = server.kill();
    let _ = server.wait();
    if let Some(e) = failure {
        eprintln!("acp-bench-remote: logs kept in {}", scratch.display());
        return Err(e);
    }
    println!(
        "| the agent, reached by acp-conductor | start to `initialize` response, p50 | round \
         trip p50 | p99 | streaming, messages/s |"
    );
    println!("|---|---|---|---|---|");
    for row in &rows {
        println!(
            "| {} | {} | {} | {} | {:.0} |",
            row.reach.label(),
            millis(row.start.p50),
            micros(row.small.p50),
            micros(row.small.p99),
            row.streaming.per_second()
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}
