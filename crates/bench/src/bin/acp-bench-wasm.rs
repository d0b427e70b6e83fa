//! `acp-bench-wasm`: what running a proxy as WASM costs. Per-hop latency and streaming
//! throughput through 1 and 3 pass-through proxies, native and as wasip1/wasip2 WASM (one
//! source, `wasm-pass` of `tests/wasm-fixtures`), and cold and warm start of 3 WASM proxies.
//!
//! Expects release builds: `acp-conductor`, `bench-agent` and `wasm-pass` in `target/release`,
//! and `wasm-pass.wasm` for both targets under `target/wasm-fixtures` (see docs/performance.md).
//! Prints markdown to stdout, progress to stderr. `--quick` uses tiny counts; `--conductor PATH`
//! measures another build of the conductor with the same proxies and agent.
//!
//! `--kits` adds the kit-probe proxies of the TypeScript and Python kits (`tests/kit-proxies`),
//! natively (`node`, `python3` on `PATH`) and as WASM components, as `.ci/setup-wasm-kits`
//! builds them into `target/wasm-kits`, and their start times.
//!
//! `--rounds N` measures every chain N times, one round of all chains after the other, and
//! reports each figure's median over the rounds: a machine whose speed drifts (this one has
//! two modes) then moves a native chain and its WASM twin alike, where one long run of each
//! can catch them in different modes. A hop's added cost is taken against the same round's
//! chain without proxies.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use acp_bench::chain_config::toml_string;
use acp_bench::peer::{BenchError, Launch, Result};
use acp_bench::session_run::{SessionCounts, measure_session, micros, millis, time_to_initialize};
use acp_bench::stats::{LatencySummary, Throughput, median, median_rate};

/// How each proxy of a chain runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Build {
    Native,
    WasiP1,
    WasiP2,
    PythonNative,
    PythonWasm,
    TypeScriptNative,
    TypeScriptWasm,
}

impl Build {
    fn label(self) -> &'static str {
        match self {
            Build::Native => "native",
            Build::WasiP1 => "WASM (wasip1 module)",
            Build::WasiP2 => "WASM (wasip2 component)",
            Build::PythonNative => "Python kit, native (`python3`)",
            Build::PythonWasm => "Python kit, WASM (componentize-py)",
            Build::TypeScriptNative => "TypeScript kit, native (`node`)",
            Build::TypeScriptWasm => "TypeScript kit, WASM (componentize-js)",
        }
    }

    fn is_wasm(self) -> bool {
        matches!(
            self,
            Build::WasiP1 | Build::WasiP2 | Build::PythonWasm | Build::TypeScriptWasm
        )
    }
}

struct Counts {
    session: SessionCounts,
    warm_starts: usize,
    cold_starts: usize,
}

const FULL: Counts = Counts {
    session: SessionCounts::FULL,
    warm_starts: 20,
    cold_starts: 3,
};

const QUICK: Counts = Counts {
    session: SessionCounts::QUICK,
    warm_starts: 2,
    cold_starts: 1,
};

struct Programs {
    conductor: PathBuf,
    agent: PathBuf,
    native_proxy: PathBuf,
    wasip1_proxy: PathBuf,
    wasip2_proxy: PathBuf,
    kits: KitPrograms,
    scratch: PathBuf,
}

/// The kit-probe proxies, each as a source run natively and as a component.
struct KitPrograms {
    python_script: PathBuf,
    python_kit: PathBuf,
    python_component: PathBuf,
    typescript_script: PathBuf,
    typescript_component: PathBuf,
}

impl Programs {
    fn locate(scratch: PathBuf) -> Result<Programs> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let release = root.join("target/release");
        let wasm = |triple: &str| {
            root.join("target/wasm-fixtures")
                .join(triple)
                .join("release/wasm-pass.wasm")
        };
        let programs = Programs {
            conductor: release.join("acp-conductor"),
            agent: release.join("bench-agent"),
            native_proxy: release.join("wasm-pass"),
            wasip1_proxy: wasm("wasm32-wasip1"),
            wasip2_proxy: wasm("wasm32-wasip2"),
            kits: KitPrograms {
                python_script: root.join("tests/kit-proxies/kit_probe.py"),
                python_kit: root.join("kits/python"),
                python_component: root.join("target/wasm-kits/components/kit-probe-py.wasm"),
                typescript_script: root.join("target/wasm-kits/native/kit-probe-ts.mjs"),
                typescript_component: root.join("target/wasm-kits/components/kit-probe-ts.wasm"),
            },
            scratch,
        };
        for path in [
            &programs.conductor,
            &programs.agent,
            &programs.native_proxy,
            &programs.wasip1_proxy,
            &programs.wasip2_proxy,
        ] {
            if !path.is_file() {
                return Err(BenchError(format!(
                    "{} is missing: see docs/performance.md for the build commands",
                    path.display()
                )));
            }
        }
        Ok(programs)
    }

    /// Whether the kit-probe proxies are built (`.ci/setup-wasm-kits`).
    fn check_kits(&self) -> Result<()> {
        let kits = &self.kits;
        for path in [
            &kits.python_script,
            &kits.python_component,
            &kits.typescript_script,
            &kits.typescript_component,
        ] {
            if !path.is_file() {
                return Err(BenchError(format!(
                    "{} is missing: run .ci/setup-wasm-kits",
                    path.display()
                )));
            }
        }
        Ok(())
    }

    /// The keys of one `[[proxy]]` table of `build`, after its name.
    fn proxy_keys(&self, build: Build) -> String {
        let path = |path: &Path| toml_string(&path.to_string_lossy());
        let kits = &self.kits;
        match build {
            Build::Native => format!("command = {}\n", path(&self.native_proxy)),
            Build::WasiP1 => format!("wasm = {}\n", path(&self.wasip1_proxy)),
            Build::WasiP2 => format!("wasm = {}\n", path(&self.wasip2_proxy)),
            Build::PythonNative => format!(
                "command = \"python3\"\nargs = [{}]\nenv = {{ PYTHONPATH = {} }}\n",
                path(&kits.python_script),
                path(&kits.python_kit)
            ),
            Build::PythonWasm => format!("wasm = {}\n", path(&kits.python_component)),
            Build::TypeScriptNative => format!(
                "command = \"node\"\nargs = [{}]\n",
                path(&kits.typescript_script)
            ),
            // A componentize-js guest's heap grows by about 1.7 KiB per message under this
            // load and does not shrink (docs/proxies.md): past the default 64 MiB cap it is
            // stopped, so the bench gives it room for its runs.
            Build::TypeScriptWasm => format!(
                "wasm = {}\n[proxy.sandbox]\nmemory = \"512MiB\"\n",
                path(&kits.typescript_component)
            ),
        }
    }

    /// A chain of `proxies` pass-through proxies built as `build`, compiled code cached in
    /// `cache`.
    fn launch(&self, build: Build, proxies: usize, cache: &Path, label: &str) -> Result<Launch> {
        let mut text = format!(
            "[conductor]\ncache_dir = {}\n[agent]\nname = \"bench-agent\"\ncommand = {}\n",
            toml_string(&cache.to_string_lossy()),
            toml_string(&self.agent.to_string_lossy())
        );
        for index in 1..=proxies {
            text.push_str(&format!(
                "[[proxy]]\nname = \"pass-{index}\"\n{}",
                self.proxy_keys(build)
            ));
        }
        let config = self.scratch.join(format!("{label}.toml"));
        std::fs::write(&config, text)?;
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
}

/// One measurement of one chain: round-trip latency of a one-word prompt and streaming
/// throughput.
struct RoundFigures {
    small: LatencySummary,
    streaming: Throughput,
}

/// Every round's figures for one chain.
struct ChainFigures {
    build: Build,
    proxies: usize,
    rounds: Vec<RoundFigures>,
}

/// From spawning the conductor to its `InitializeResponse`, `starts` times; with `fresh_cache`
/// each start gets an empty cache directory (so every proxy is compiled).
fn start_times(
    programs: &Programs,
    build: Build,
    starts: usize,
    fresh_cache: bool,
) -> Result<LatencySummary> {
    let shared = programs.scratch.join("start-cache");
    let mut times = Vec::with_capacity(starts);
    for start in 0..starts {
        let cache = if fresh_cache {
            programs.scratch.join(format!("cold-cache-{start}"))
        } else {
            shared.clone()
        };
        let launch = programs.launch(build, 3, &cache, "start")?;
        if !fresh_cache && start == 0 {
            // Fill the cache once, untimed.
            time_to_initialize(&launch)?;
        }
        times.push(time_to_initialize(&launch)?);
    }
    Ok(LatencySummary::of(times).expect("at least one start"))
}

/// The latency and streaming table: per chain, the median over the rounds of its round-trip
/// p50 and p99, of what each proxy hop added to the same round's chain without proxies (the
/// first), and of its streaming rate; with more than one round, the range of the p50s too.
fn latency_table(chains: &[ChainFigures]) -> String {
    let baselines: Vec<Duration> = chains[0].rounds.iter().map(|r| r.small.p50).collect();
    let several = baselines.len() > 1;
    let mut table = String::from(
        "| proxies | round trip p50 | p99 | added per proxy hop (p50) | streaming, messages/s |",
    );
    if several {
        table.push_str(" round trip p50, range over rounds |");
    }
    table.push_str("\n|---|---|---|---|---|");
    if several {
        table.push_str("---|");
    }
    for chain in chains {
        let p50s: Vec<Duration> = chain.rounds.iter().map(|r| r.small.p50).collect();
        let p99s = chain.rounds.iter().map(|r| r.small.p99).collect();
        let rates = chain
            .rounds
            .iter()
            .map(|r| r.streaming.per_second())
            .collect();
        let (who, per_hop) = if chain.proxies == 0 {
            ("none".to_owned(), String::new())
        } else {
            let hops = p50s
                .iter()
                .zip(&baselines)
                .map(|(p50, base)| p50.saturating_sub(*base) / chain.proxies as u32)
                .collect();
            (
                format!("{} × {}", chain.proxies, chain.build.label()),
                micros(median(hops).expect("a round")),
            )
        };
        let low = p50s.iter().min().copied();
        let high = p50s.iter().max().copied();
        table.push_str(&format!(
            "\n| {who} | {} | {} | {per_hop} | {:.0} |",
            micros(median(p50s).expect("a round")),
            micros(median(p99s).expect("a round")),
            median_rate(rates)
        ));
        if let (true, Some(low), Some(high)) = (several, low, high) {
            table.push_str(&format!(" {}–{} |", micros(low), micros(high)));
        }
    }
    table
}

fn main() -> ExitCode {
    let mut counts = &FULL;
    let mut conductor = None;
    let mut kits = false;
    let mut rounds = 1;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => counts = &QUICK,
            "--kits" => kits = true,
            "--rounds" => match args.next().and_then(|n| n.parse().ok()) {
                Some(n) if n > 0 => rounds = n,
                _ => return usage(),
            },
            // Another build of the conductor, measured with this build's proxies and agent.
            "--conductor" if conductor.is_none() => match args.next() {
                Some(path) => conductor = Some(PathBuf::from(path)),
                None => return usage(),
            },
            _ => return usage(),
        }
    }
    match run(counts, conductor, kits, rounds) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("acp-bench-wasm: {}", e.0);
            ExitCode::FAILURE
        }
    }
}

fn usage() -> ExitCode {
    eprintln!("usage: acp-bench-wasm [--quick] [--kits] [--rounds N] [--conductor PATH]");
    ExitCode::from(2)
}

fn run(counts: &Counts, conductor: Option<PathBuf>, kits: bool, rounds: usize) -> Result<()> {
    let scratch = std::env::temp_dir().join(format!("acp-bench-wasm-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let mut programs = Programs::locate(scratch.clone())?;
    if let Some(conductor) = conductor {
        programs.conductor = conductor;
    }
    let cache = scratch.join("cache");
    let mut builds = vec![Build::Native, Build::WasiP1, Build::WasiP2];
    if kits {
        programs.check_kits()?;
        builds.extend([
            Build::PythonNative,
            Build::PythonWasm,
            Build::TypeScriptNative,
            Build::TypeScriptWasm,
        ]);
    }

    let mut plan = vec![(Build::Native, 0)];
    for &build in &builds {
        plan.extend([(build, 1), (build, 3)]);
    }
    let mut chains: Vec<ChainFigures> = plan
        .iter()
        .map(|&(build, proxies)| ChainFigures {
            build,
            proxies,
            rounds: Vec::with_capacity(rounds),
        })
        .collect();
    for round in 1..=rounds {
        for chain in &mut chains {
            let (build, proxies) = (chain.build, chain.proxies);
            eprint!(
                "acp-bench-wasm: round {round}/{rounds}: {} x{proxies} ... ",
                build.label()
            );
            let label = format!("{build:?}-{proxies}");
            let launch = programs.launch(build, proxies, &cache, &label)?;
            let (small, streaming) = measure_session(&launch, &counts.session, &scratch)?;
            eprintln!("p50 {}", micros(small.p50));
            chain.rounds.push(RoundFigures { small, streaming });
        }
    }
    eprint!("acp-bench-wasm: start times ... ");
    let mut starts = Vec::new();
    let mut native_starts = Vec::new();
    for &build in &builds {
        if build.is_wasm() {
            let cold = start_times(&programs, build, counts.cold_starts, true)?;
            let warm = start_times(&programs, build, counts.warm_starts, false)?;
            starts.push((build, cold, warm));
        } else {
            let start = start_times(&programs, build, counts.warm_starts, false)?;
            native_starts.push((build, start));
        }
    }
    eprintln!("done");

    println!("{}", latency_table(&chains));
    println!();
    println!("| 3 proxies | start to `initialize` response, p50 | samples |");
    println!("|---|---|---|");
    for (build, start) in &native_starts {
        println!(
            "| {} (processes) | {} | {} |",
            build.label(),
            millis(start.p50),
            start.samples
        );
    }
    for (build, cold, warm) in &starts {
        println!(
            "| {}, cold (compiling) | {} | {} |",
            build.label(),
            millis(cold.p50),
            cold.samples
        );
        println!(
            "| {}, warm (compile cache) | {} | {} |",
            build.label(),
            millis(warm.p50),
            warm.samples
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(v: u64) -> Duration {
        Duration::from_micros(v)
    }

    fn round(p50: u64, p99: u64, messages: u64) -> RoundFigures {
        RoundFigures {
            small: LatencySummary {
                samples: 100,
                p50: us(p50),
                p99: us(p99),
            },
            streaming: Throughput {
                messages,
                elapsed: Duration::from_secs(1),
            },
        }
    }

    #[test]
    fn a_hop_is_measured_against_its_own_rounds_baseline() {
        // Round 1 ran slow for everything, round 2 fast: paired with its own round's chain
        // without proxies, the proxy adds 30 µs per hop in both (and 20 in the third).
        let chains = [
            ChainFigures {
                build: Build::Native,
                proxies: 0,
                rounds: vec![
                    round(200, 400, 10),
                    round(100, 300, 30),
                    round(110, 310, 20),
                ],
            },
            ChainFigures {
                build: Build::PythonWasm,
                proxies: 3,
                rounds: vec![round(290, 500, 1), round(190, 350, 3), round(170, 330, 2)],
            },
        ];
        let table = latency_table(&chains);
        let rows: Vec<&str> = table.lines().collect();
        assert_eq!(rows.len(), 4, "{table}");
        assert_eq!(
            rows[2],
            "| none | 110.0 µs | 310.0 µs |  | 20 | 100.0 µs–200.0 µs |"
        );
        assert_eq!(
            rows[3],
            "| 3 × Python kit, WASM (componentize-py) | 190.0 µs | 350.0 µs | 30.0 µs | 2 | 170.0 µs–290.0 µs |"
        );
    }

    #[test]
    fn one_round_keeps_the_plain_table() {
        let chains = [ChainFigures {
            build: Build::Native,
            proxies: 0,
            rounds: vec![round(80, 90, 5)],
        }];
        assert_eq!(
            latency_table(&chains),
            "| proxies | round trip p50 | p99 | added per proxy hop (p50) | streaming, messages/s |\n\
             |---|---|---|---|---|\n\
             | none | 80.0 µs | 90.0 µs |  | 5 |"
        );
    }
}
