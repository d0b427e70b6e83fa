//! The prompt client in an editor's seat: starts a conductor (`<conductor> --log <filter> run
//! --config FILE`) as a child process and plays the editor over its stdin and stdout. Must not
//! know the configuration or the chain: the conductor checks and runs those, and reports on stderr.

use std::io::Write;
use std::path::PathBuf;
use std::process::Stdio;

use anyhow::anyhow;
use tokio::process::Command;
use tokio::signal::unix::{Signal, SignalKind, signal};

use super::PromptOptions;

/// Exit status of a conductor whose configuration cannot be used (sysexits `EX_CONFIG`).
pub const EX_CONFIG: u8 = 78;

/// How to start the conductor.
#[derive(Clone, Debug)]
pub struct ConductorCommand {
    pub program: PathBuf,
    /// The conductor's `--log` filter.
    pub log: String,
    pub config: PathBuf,
}

/// How a prompt run ended.
#[derive(Debug)]
pub enum Ending {
    /// Every prompt was answered: the first stop reason other than `end_turn`, else `end_turn`.
    Answered(String),
    /// The conductor refused its configuration, and said why on stderr.
    BadConfig,
    /// The conversation failed; `chain_failed` when the conductor exited with a failure too.
    Failed {
        error: anyhow::Error,
        chain_failed: bool,
    },
}

impl Ending {
    /// The exit status `acp-prompt` ends with: 0 for a finished turn, a distinct code for each
    /// other stop reason so scripts can tell them apart, 78 for a bad configuration, 1 on failure.
    pub fn exit_code(&self) -> u8 {
        match self {
            Ending::Answered(stop_reason) => match stop_reason.as_str() {
                "end_turn" => 0,
                "max_tokens" => 2,
                "max_turn_requests" => 3,
                "refusal" => 4,
                "cancelled" => 5,
                _ => 6,
            },
            Ending::BadConfig => EX_CONFIG,
            Ending::Failed { .. } => 1,
        }
    }
}

/// Starts the conductor, sends `options.prompts` through it and writes the transcript to `out`;
/// returns once the conductor has exited.
///
/// SIGINT, SIGTERM and SIGHUP (as SIGTERM) are passed on to the conductor rather than ending
/// this process: the conductor answers the requests still waiting and stops its chain, and the
/// client prints what it got. (A Ctrl-C in a terminal reaches both processes; a second signal is harmless.)
pub async fn prompt_through<O: Write>(
    conductor: &ConductorCommand,
    options: &PromptOptions,
    out: &mut O,
) -> Ending {
    // Before the child exists, so that no signal meant for it can end this process first.
    let signals = match PassedOnSignals::install() {
        Ok(signals) => signals,
        Err(e) => return failed(anyhow!("cannot install signal handlers: {e}"), false),
    };
    let mut child = match Command::new(&conductor.program)
        .arg("--log")
        .arg(&conductor.log)
        .args(["run", "--config"])
        .arg(&conductor.config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            let program = conductor.program.display();
            return failed(anyhow!("cannot start the conductor {program}: {e}"), false);
        }
    };
    let to_conductor = child.stdin.take().expect("piped stdin");
    let mut from_conductor = child.stdout.take().expect("piped stdout");
    let passing_on = child.id().map(|pid| tokio::spawn(signals.pass_on_to(pid)));

    // The client's end of stdin is dropped when it returns: the conductor sees the editor leave.
    let outcome = super::run(&mut from_conductor, to_conductor, options, out).await;
    // Whatever the conductor still writes is read, so that it never fails on a closed pipe.
    let mut discarded = tokio::io::sink();
    let drain = tokio::io::copy(&mut from_conductor, &mut discarded);
    let (_, status) = tokio::join!(drain, child.wait());
    if let Some(task) = passing_on {
        task.abort();
    }
    match (outcome, status) {
        (Ok(stop_reason), _) => Ending::Answered(stop_reason),
        (Err(_), Ok(status)) if status.code() == Some(i32::from(EX_CONFIG)) => Ending::BadConfig,
        (Err(error), Ok(status)) => failed(error, !status.success()),
        (Err(error), Err(e)) => {
            tracing::warn!("could not wait for the conductor: {e}");
            failed(error, true)
        }
    }
}

fn failed(error: anyhow::Error, chain_failed: bool) -> Ending {
    Ending::Failed {
        error,
        chain_failed,
    }
}

/// The signals that would end a conductor's editor, caught so they can be passed on.
struct PassedOnSignals {
    interrupt: Signal,
    terminate: Signal,
    hangup: Signal,
}

impl PassedOnSignals {
    fn install() -> std::io::Result<Self> {
        Ok(PassedOnSignals {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
        })
    }

    /// Sends every caught signal on to process `pid`; runs until aborted.
    async fn pass_on_to(mut self, pid: u32) {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return;
        };
        loop {
            let caught = tokio::select! {
                _ = self.interrupt.recv() => libc::SIGINT,
                _ = self.terminate.recv() => libc::SIGTERM,
                // A hangup ends this client, so the conductor stops: to `run`, SIGHUP means
                // "reload the configuration", and SIGTERM means stop.
                _ = self.hangup.recv() => libc::SIGTERM,
            };
            tracing::debug!(signal = caught, pid, "passing a signal on to the conductor");
            // SAFETY: plain syscall on a child this process has not reaped yet (the task is
            // aborted once it has been waited for).
            unsafe {
                libc::kill(pid, caught);
            }
        }
    }
}
