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

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use acp_bench::chain_config::toml_string;
use acp_bench::peer::{BenchError, Launch, Result};
use acp_bench::session_run::{SessionCounts, measure_session, micros, millis, time_to_initialize};
use acp_bench::stats::{LatencySummary, Throughput};

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

/// Round-trip latency of a one-word prompt and streaming throughput through one chain.
struct ChainFigures {
    build: Build,
    proxies: usize,
    small: LatencySummary,
    streaming: Throughput,
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

fn main() -> ExitCode {
    let mut counts = &FULL;
    let mut conductor = None;
    let mut kits = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => counts = &QUICK,
            "--kits" => kits = true,
            // Another build of the conductor, measured with this build's proxies and agent.
            "--conductor" if conductor.is_none() => match args.next() {
                Some(path) => conductor = Some(PathBuf::from(path)),
                None => return usage(),
            },
            _ => return usage(),
        }
    }
    match run(counts, conductor, kits) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("acp-bench-wasm: {}", e.0);
            ExitCode::FAILURE
        }
    }
}

fn usage() -> ExitCode {
    eprintln!("usage: acp-bench-wasm [--quick] [--kits] [--conductor PATH]");
    ExitCode::from(2)
}

fn run(counts: &Counts, conductor: Option<PathBuf>, kits: bool) -> Result<()> {
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

    let mut chains = Vec::new();
    let mut plan = vec![(Build::Native, 0)];
    for &build in &builds {
        plan.extend([(build, 1), (build, 3)]);
    }
    for (build, proxies) in plan {
        eprint!("acp-bench-wasm: {} x{proxies} ... ", build.label());
        let label = format!("{build:?}-{proxies}");
        let launch = programs.launch(build, proxies, &cache, &label)?;
        let (small, streaming) = measure_session(&launch, &counts.session, &scratch)?;
        eprintln!("p50 {}", micros(small.p50));
        chains.push(ChainFigures {
            build,
            proxies,
            small,
            streaming,
        });
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

    let baseline = chains[0].small.p50;
    println!(
        "| proxies | round trip p50 | p99 | added per proxy hop (p50) | streaming, messages/s |"
    );
    println!("|---|---|---|---|---|");
    for chain in &chains {
        let per_hop = if chain.proxies == 0 {
            "".to_owned()
        } else {
            micros(chain.small.p50.saturating_sub(baseline) / chain.proxies as u32)
        };
        let who = if chain.proxies == 0 {
            "none".to_owned()
        } else {
            format!("{} × {}", chain.proxies, chain.build.label())
        };
        println!(
            "| {who} | {} | {} | {per_hop} | {:.0} |",
            micros(chain.small.p50),
            micros(chain.small.p99),
            chain.streaming.per_second()
        );
    }
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
