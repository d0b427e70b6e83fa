//! `acp-bench`: runs every benchmark scenario and prints the figures as markdown
//! (`--write FILE` also updates the generated section of FILE). See `docs/performance.md`.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use acp_bench::chain_config::shell_quote;
use acp_bench::measure::{self, Programs, Target};
use acp_bench::options::{self, Official, Options};
use acp_bench::report::{self, RunContext};

/// Names the official conductor's binary has had, newest first.
const OFFICIAL_NAMES: &[&str] = &["agent-client-protocol-conductor", "sacp-conductor"];

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().collect();
    let options = match options::parse(argv.iter().skip(1).cloned()) {
        Ok(options) if options.help => {
            print!("{}", options::USAGE);
            return ExitCode::SUCCESS;
        }
        Ok(options) => options,
        Err(e) => {
            eprintln!("acp-bench: {e}\n\n{}", options::USAGE);
            return ExitCode::from(2);
        }
    };
    match run(&options, &argv) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("acp-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Why the benchmarks could not be run (a scenario's own failure is in its figures instead).
#[derive(Debug, thiserror::Error)]
enum BenchError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot locate acp-bench itself: {0}")]
    OwnExecutable(std::io::Error),
    #[error("{} not found; {hint}", path.display())]
    Missing { path: PathBuf, hint: &'static str },
}

/// `BenchError::Io` for `path`.
fn at(path: &Path) -> impl FnOnce(std::io::Error) -> BenchError + '_ {
    move |source| BenchError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn run(options: &Options, argv: &[String]) -> Result<ExitCode, BenchError> {
    let scratch = std::env::temp_dir().join(format!("acp-bench-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(at(&scratch))?;
    let programs = programs(options, scratch.clone())?;

    let mut targets = vec![Target::Direct];
    targets.extend(
        options
            .proxies
            .iter()
            .map(|&proxies| Target::Conductor { proxies }),
    );
    if programs.official.is_some() {
        targets.extend(
            options
                .proxies
                .iter()
                .map(|&proxies| Target::Official { proxies }),
        );
    }

    let load_at_start = report::load_average();
    eprintln!(
        "acp-bench: load average {load_at_start} (figures are only comparable on an otherwise idle machine)"
    );
    let began = Instant::now();
    let mut figures = Vec::new();
    for target in targets {
        eprint!("acp-bench: {} ... ", target.label());
        let start = Instant::now();
        let result = measure::run_scenario(&programs, target, &options.settings, &scratch);
        match &result.error {
            None => eprintln!("{:.1} s", start.elapsed().as_secs_f64()),
            Some(e) => eprintln!("failed after {:.1} s: {e}", start.elapsed().as_secs_f64()),
        }
        if let Some(trace) = programs.trace_file(target) {
            eprintln!("acp-bench:   {}", trace_summary(&trace));
        }
        figures.push(result);
    }
    eprintln!("acp-bench: done in {:.1} s", began.elapsed().as_secs_f64());

    let context = RunContext {
        command: command_line(argv),
        machine: report::machine_description(),
        load_at_start,
        date: report::today(),
        conductor_version: version_of(&programs.conductor),
        official_version: programs
            .official
            .as_deref()
            .map(|p| format!("{} ({})", version_of(p), p.display())),
    };
    let section = report::section(&context, &figures, &options.settings);
    print!("{section}");

    if let Some(path) = &options.write {
        let existing = std::fs::read_to_string(path).ok();
        let document = report::splice_section(existing.as_deref(), &section);
        std::fs::write(path, document).map_err(at(path))?;
        eprintln!("acp-bench: wrote the figures section of {}", path.display());
    }

    let ours_failed = figures
        .iter()
        .any(|f| f.error.is_some() && !matches!(f.target, Target::Official { .. }));
    if ours_failed {
        eprintln!("acp-bench: logs kept in {}", scratch.display());
        return Ok(ExitCode::FAILURE);
    }
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(ExitCode::SUCCESS)
}

fn programs(options: &Options, scratch: PathBuf) -> Result<Programs, BenchError> {
    let exe = std::env::current_exe().map_err(BenchError::OwnExecutable)?;
    let beside = |name: &str| {
        exe.parent()
            .map(|dir| dir.join(name))
            .unwrap_or_else(|| name.into())
    };
    let existing = |path: PathBuf, hint: &'static str| {
        if path.is_file() {
            Ok(path)
        } else {
            Err(BenchError::Missing { path, hint })
        }
    };
    let build_hint = "build it with `cargo build --release -p acp-conductor -p acp-bench`";
    Ok(Programs {
        agent: existing(
            options
                .agent
                .clone()
                .unwrap_or_else(|| beside("bench-agent")),
            build_hint,
        )?,
        proxy: existing(
            options
                .proxy
                .clone()
                .unwrap_or_else(|| beside("bench-proxy")),
            build_hint,
        )?,
        conductor: existing(
            options
                .conductor
                .clone()
                .unwrap_or_else(|| beside("acp-conductor")),
            build_hint,
        )?,
        official: match &options.official {
            Official::Skip => None,
            Official::At(path) => Some(existing(path.clone(), "check --official")?),
            Official::Search => OFFICIAL_NAMES.iter().find_map(|name| on_path(name)),
        },
        scratch,
        trace_dir: match &options.trace_dir {
            Some(dir) => {
                std::fs::create_dir_all(dir).map_err(at(dir))?;
                Some(std::path::absolute(dir).map_err(at(dir))?)
            }
            None => None,
        },
    })
}

/// "trace FILE: N records, M messages dropped" for the last run's trace.
fn trace_summary(trace: &Path) -> String {
    let Ok(text) = std::fs::read_to_string(trace) else {
        return format!("no trace at {}", trace.display());
    };
    let records = text.lines().count();
    let dropped = text
        .lines()
        .last()
        .and_then(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|end| end["type"] == "end")
        .and_then(|end| end["dropped"].as_u64());
    match dropped {
        Some(dropped) => format!(
            "trace {}: {records} records, {dropped} messages dropped",
            trace.display()
        ),
        None => format!(
            "trace {}: {records} records, no end record",
            trace.display()
        ),
    }
}

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// `program --version`, or what went wrong asking.
fn version_of(program: &Path) -> String {
    match Command::new(program).arg("--version").output() {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).trim().to_owned(),
        Ok(out) => format!(
            "{} (--version exited with {})",
            program.display(),
            out.status
        ),
        Err(e) => format!("{} (--version: {e})", program.display()),
    }
}

/// This run's command line, with the program relative to the working directory when it is
/// under it (so the documented command reads `target/release/acp-bench ...`).
fn command_line(argv: &[String]) -> String {
    let program = argv.first().map(String::as_str).unwrap_or("acp-bench");
    let program = std::env::current_dir()
        .ok()
        .and_then(|cwd| {
            Path::new(program)
                .strip_prefix(cwd)
                .ok()
                .map(|p| p.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| program.to_owned());
    let mut words = vec![program];
    words.extend(argv.iter().skip(1).map(|a| shell_quote(a)));
    words.join(" ")
}
