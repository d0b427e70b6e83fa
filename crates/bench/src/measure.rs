//! The benchmark scenarios: each target (the agent alone, acp-conductor or the official
//! conductor with N proxies) is started, driven as an editor and timed. Must not know how
//! figures are presented.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::chain_config;
use crate::messages::{self, StreamSpec};
use crate::peer::{BenchError, Launch, Peer, Result};
use crate::proc_status::{self, CpuUse, Memory};
use crate::stats::{LatencySummary, Throughput};

/// What the editor talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The bench agent itself, no conductor.
    Direct,
    /// acp-conductor with this many bench proxies.
    Conductor { proxies: usize },
    /// The official conductor (`agent-client-protocol-conductor`) with this many proxies.
    Official { proxies: usize },
}

impl Target {
    pub fn label(&self) -> String {
        fn proxies(n: usize) -> String {
            if n == 1 {
                "1 proxy".to_owned()
            } else {
                format!("{n} proxies")
            }
        }
        match self {
            Target::Direct => "agent direct".to_owned(),
            Target::Conductor { proxies: n } => format!("acp-conductor, {}", proxies(*n)),
            Target::Official { proxies: n } => format!("official, {}", proxies(*n)),
        }
    }

    /// Processes between the editor and the agent beyond a direct connection: the
    /// conductor, and each proxy (which also costs the conductor a second pass).
    pub fn hops(&self) -> usize {
        match self {
            Target::Direct => 0,
            Target::Conductor { proxies } | Target::Official { proxies } => proxies + 1,
        }
    }
}

/// The programs a run uses, and a scratch directory for configs and logs.
#[derive(Debug, Clone)]
pub struct Programs {
    pub agent: PathBuf,
    pub proxy: PathBuf,
    pub conductor: PathBuf,
    pub official: Option<PathBuf>,
    pub scratch: PathBuf,
    /// When set, acp-conductor runs with `--trace <dir>/<target>.jsonl`.
    pub trace_dir: Option<PathBuf>,
}

impl Programs {
    /// Where acp-conductor traces `target` when `--trace-dir` is given.
    pub fn trace_file(&self, target: Target) -> Option<PathBuf> {
        match target {
            Target::Conductor { proxies } => self
                .trace_dir
                .as_ref()
                .map(|dir| dir.join(format!("conductor-{proxies}.jsonl"))),
            Target::Direct | Target::Official { .. } => None,
        }
    }

    /// How to start `target`, writing its config file if it needs one.
    pub fn launch(&self, target: Target) -> Result<Launch> {
        let name = match target {
            Target::Direct => "direct".to_owned(),
            Target::Conductor { proxies } => format!("conductor-{proxies}"),
            Target::Official { proxies } => format!("official-{proxies}"),
        };
        let stderr_log = self.scratch.join(format!("{name}.stderr"));
        let (program, args) = match target {
            Target::Direct => (self.agent.clone(), Vec::new()),
            Target::Conductor { proxies } => {
                let config = self.scratch.join(format!("{name}.toml"));
                let text = chain_config::conductor_toml(&self.agent, &self.proxy, proxies);
                std::fs::write(&config, text)?;
                let mut args = vec![
                    "run".to_owned(),
                    "--config".to_owned(),
                    config.to_string_lossy().into_owned(),
                ];
                if let Some(trace) = self.trace_file(target) {
                    args.push("--trace".to_owned());
                    args.push(trace.to_string_lossy().into_owned());
                }
                (self.conductor.clone(), args)
            }
            Target::Official { proxies } => {
                let official = self
                    .official
                    .clone()
                    .ok_or_else(|| BenchError("no official conductor".to_owned()))?;
                (
                    official,
                    chain_config::official_args(&self.agent, &self.proxy, proxies),
                )
            }
        };
        Ok(Launch {
            program,
            args,
            stderr_log,
        })
    }
}

/// Iteration counts and limits.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub starts: usize,
    pub small: usize,
    pub small_warmup: usize,
    pub stream_prompts: usize,
    pub stream_warmup: usize,
    pub stream: StreamSpec,
    pub big: usize,
    pub big_warmup: usize,
    pub big_bytes: usize,
    /// No single measurement loop runs longer than this; it reports the samples it got.
    pub time_limit: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            starts: 20,
            small: 20_000,
            small_warmup: 2_000,
            stream_prompts: 2_000,
            stream_warmup: 100,
            stream: StreamSpec {
                updates: 100,
                bytes: 100,
            },
            big: 50,
            big_warmup: 5,
            big_bytes: 1 << 20,
            time_limit: Duration::from_secs(8),
        }
    }
}

/// Everything measured for one target. A measurement that failed is `None` and the
/// reason is in `error`.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioFigures {
    pub target: Target,
    pub initialize: Option<LatencySummary>,
    pub small: Option<LatencySummary>,
    pub streaming: Option<Throughput>,
    pub big: Option<LatencySummary>,
    /// The measured process (the conductor, or the agent when direct) after `initialize`
    /// and `session/new`, before any prompt.
    pub idle_memory: Option<Memory>,
    pub peak_after_streaming_kib: Option<u64>,
    pub peak_after_big_kib: Option<u64>,
    /// What the measured process itself spent per small prompt, and per streamed message.
    pub small_cost: Option<Cost>,
    pub streaming_cost: Option<Cost>,
    pub big_cost: Option<Cost>,
    pub error: Option<String>,
}

/// What the measured process (and, apart, its child processes) spent per unit of work.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cost {
    pub cpu: Duration,
    pub switches: f64,
    /// CPU of the processes it started (agent and proxies), together.
    pub children_cpu: Duration,
}

/// CPU readings of the measured process and of its children.
type TreeCpu = (CpuUse, CpuUse);

/// Reads the CPU use around a measurement and divides it by the units done.
fn cost_of(pid: u32, before: Option<TreeCpu>, units: u64) -> Option<Cost> {
    let (own_before, children_before) = before?;
    let (own_after, children_after) = proc_status::tree_cpu_use_of(pid)?;
    let own = own_before.until(own_after);
    let children = children_before.until(children_after);
    let units_u32 = u32::try_from(units).ok().filter(|&n| n > 0)?;
    Some(Cost {
        cpu: own.cpu / units_u32,
        switches: own.switches as f64 / units as f64,
        children_cpu: children.cpu / units_u32,
    })
}

impl ScenarioFigures {
    fn empty(target: Target) -> Self {
        ScenarioFigures {
            target,
            initialize: None,
            small: None,
            streaming: None,
            big: None,
            idle_memory: None,
            peak_after_streaming_kib: None,
            peak_after_big_kib: None,
            small_cost: None,
            streaming_cost: None,
            big_cost: None,
            error: None,
        }
    }
}

/// Runs every measurement against one target; stops at the first failure and keeps what
/// was measured before it.
pub fn run_scenario(
    programs: &Programs,
    target: Target,
    settings: &Settings,
    cwd: &Path,
) -> ScenarioFigures {
    let mut figures = ScenarioFigures::empty(target);
    if let Err(e) = measure_into(&mut figures, programs, settings, cwd) {
        figures.error = Some(e.0);
    }
    figures
}

fn measure_into(
    figures: &mut ScenarioFigures,
    programs: &Programs,
    settings: &Settings,
    cwd: &Path,
) -> Result<()> {
    let launch = programs.launch(figures.target)?;
    figures.initialize = LatencySummary::of(initialize_times(&launch, settings)?);

    let mut peer = Peer::spawn(&launch)?;
    peer.call(
        messages::INITIALIZE_METHOD,
        messages::INITIALIZE_PARAMS.as_bytes(),
    )?;
    let session = new_session(&mut peer, cwd)?;
    figures.idle_memory = proc_status::memory_of(peer.pid());

    let small = messages::prompt_params(&session, "hello");
    let samples = round_trips(
        &mut peer,
        &small,
        settings.small_warmup,
        settings.small,
        settings,
    )?;
    figures.small_cost = cost_of(
        peer.pid(),
        samples.cpu_before,
        samples.durations.len() as u64,
    );
    figures.small = LatencySummary::of(samples.durations);

    let (throughput, cpu_before) = streaming(&mut peer, &session, settings)?;
    figures.streaming_cost = cost_of(peer.pid(), cpu_before, throughput.messages);
    figures.streaming = Some(throughput);
    figures.peak_after_streaming_kib = proc_status::memory_of(peer.pid()).map(|m| m.peak_kib);

    let big = messages::prompt_params(&session, &"x".repeat(settings.big_bytes));
    let samples = round_trips(&mut peer, &big, settings.big_warmup, settings.big, settings)?;
    figures.big_cost = cost_of(
        peer.pid(),
        samples.cpu_before,
        samples.durations.len() as u64,
    );
    figures.big = LatencySummary::of(samples.durations);
    figures.peak_after_big_kib = proc_status::memory_of(peer.pid()).map(|m| m.peak_kib);

    let status = peer.close()?;
    if !status.success() {
        return Err(BenchError(format!(
            "it exited with {status} after its input closed"
        )));
    }
    Ok(())
}

/// From spawning the process to having its `InitializeResponse`, once per start.
fn initialize_times(launch: &Launch, settings: &Settings) -> Result<Vec<Duration>> {
    let mut times = Vec::with_capacity(settings.starts);
    for _ in 0..settings.starts {
        let start = Instant::now();
        let mut peer = Peer::spawn(launch)?;
        peer.call(
            messages::INITIALIZE_METHOD,
            messages::INITIALIZE_PARAMS.as_bytes(),
        )?;
        times.push(start.elapsed());
        peer.close()?;
    }
    Ok(times)
}

fn new_session(peer: &mut Peer, cwd: &Path) -> Result<String> {
    let params = messages::new_session_params(&cwd.to_string_lossy());
    let reply = peer.call_for_result("session/new", &params)?;
    let result = reply.result.unwrap_or_default();
    messages::session_id_of(&result)
        .ok_or_else(|| BenchError(format!("session/new answered {result}")))
}

/// Timed round trips, and the measured process's CPU use when the timing began.
struct RoundTrips {
    durations: Vec<Duration>,
    cpu_before: Option<TreeCpu>,
}

/// Prompt round trips, after `warmup` untimed ones; stops early at the time limit.
fn round_trips(
    peer: &mut Peer,
    params: &[u8],
    warmup: usize,
    iterations: usize,
    settings: &Settings,
) -> Result<RoundTrips> {
    for _ in 0..warmup {
        peer.call("session/prompt", params)?;
    }
    let mut durations = Vec::with_capacity(iterations);
    let cpu_before = proc_status::tree_cpu_use_of(peer.pid());
    let began = Instant::now();
    for _ in 0..iterations {
        let start = Instant::now();
        peer.call("session/prompt", params)?;
        durations.push(start.elapsed());
        if began.elapsed() > settings.time_limit {
            break;
        }
    }
    Ok(RoundTrips {
        durations,
        cpu_before,
    })
}

/// Messages (updates and responses) received per second over back-to-back streaming
/// prompts, and the measured process's CPU use when the timing began.
fn streaming(
    peer: &mut Peer,
    session: &str,
    settings: &Settings,
) -> Result<(Throughput, Option<TreeCpu>)> {
    let params = messages::prompt_params(session, &messages::stream_command(settings.stream));
    let expected = u64::from(settings.stream.updates);
    let prompt = |peer: &mut Peer| -> Result<u64> {
        let reply = peer.call("session/prompt", &params)?;
        if reply.updates != expected {
            return Err(BenchError(format!(
                "a prompt brought {} updates, not {expected}",
                reply.updates
            )));
        }
        Ok(reply.updates + 1)
    };
    for _ in 0..settings.stream_warmup {
        prompt(peer)?;
    }
    let mut messages = 0;
    let cpu_before = proc_status::tree_cpu_use_of(peer.pid());
    let start = Instant::now();
    for _ in 0..settings.stream_prompts {
        messages += prompt(peer)?;
        if start.elapsed() > settings.time_limit {
            break;
        }
    }
    let throughput = Throughput {
        messages,
        elapsed: start.elapsed(),
    };
    Ok((throughput, cpu_before))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_hops() {
        assert_eq!(Target::Direct.label(), "agent direct");
        assert_eq!(
            Target::Conductor { proxies: 1 }.label(),
            "acp-conductor, 1 proxy"
        );
        assert_eq!(
            Target::Official { proxies: 3 }.label(),
            "official, 3 proxies"
        );
        assert_eq!(Target::Direct.hops(), 0);
        assert_eq!(Target::Conductor { proxies: 0 }.hops(), 1);
        assert_eq!(Target::Official { proxies: 3 }.hops(), 4);
    }

    #[test]
    fn launches_name_their_programs_and_configs() {
        let scratch = std::env::temp_dir().join(format!("acp-bench-unit-{}", std::process::id()));
        std::fs::create_dir_all(&scratch).unwrap();
        let programs = Programs {
            agent: "/b/bench-agent".into(),
            proxy: "/b/bench-proxy".into(),
            conductor: "/b/acp-conductor".into(),
            official: None,
            scratch: scratch.clone(),
            trace_dir: None,
        };
        let direct = programs.launch(Target::Direct).unwrap();
        assert_eq!(direct.program, PathBuf::from("/b/bench-agent"));
        assert!(direct.args.is_empty());
        let chain = programs.launch(Target::Conductor { proxies: 3 }).unwrap();
        assert_eq!(chain.program, PathBuf::from("/b/acp-conductor"));
        assert_eq!(chain.args[..2], ["run", "--config"]);
        let config = std::fs::read_to_string(&chain.args[2]).unwrap();
        assert_eq!(config.matches("[[proxy]]").count(), 3);
        assert!(programs.launch(Target::Official { proxies: 0 }).is_err());
        let traced = Programs {
            trace_dir: Some("/t".into()),
            ..programs
        };
        let chain = traced.launch(Target::Conductor { proxies: 1 }).unwrap();
        assert_eq!(chain.args[3..], ["--trace", "/t/conductor-1.jsonl"]);
        assert!(traced.launch(Target::Direct).unwrap().args.is_empty());
        std::fs::remove_dir_all(scratch).unwrap();
    }
}
