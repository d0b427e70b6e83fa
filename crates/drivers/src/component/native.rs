//! Native components: a child process in its own process group, JSON-RPC on stdin/stdout,
//! stderr relayed line by line under the component's name. Knows processes, not messages.

use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{ChildStderr, Command};
use tokio::sync::{mpsc, watch};

use super::stderr_relay;
use super::stderr_tail::StderrTail;
use super::{Instance, StartError, Started, StopSignal, report_exit, trace_started};
use crate::runtime::MainThread;
use crate::spec::CommandSpec;
use acp_link::Links;
use acp_link::event::{Event, ExitStatus as ComponentExit};

/// How long to wait, after the process is reaped, for its last stderr lines and for what it
/// wrote to stdout to be read (a grandchild may hold either open).
const OUTPUT_DRAIN: Duration = Duration::from_millis(500);

/// How much more the kernel's out-of-memory killer should prefer a component over the
/// conductor (`/proc/PID/oom_score_adj`, -1000 to 1000). Without it, when `serve` runs out of
/// memory the largest process is killed, which is `serve` itself with every connection's
/// session; with it one component goes (the largest of them), and only its chain fails.
const OOM_SCORE_ADJ: &[u8] = b"300\n";

/// In the child, before exec: raise its `oom_score_adj`. Raising needs no privilege; a
/// failure (no /proc) leaves the default.
///
/// # Safety
/// Only async-signal-safe calls: it runs between fork and exec.
#[cfg(target_os = "linux")]
unsafe fn prefer_as_oom_victim() {
    // SAFETY: a NUL-terminated path; the buffer outlives the write; the fd is closed.
    unsafe {
        let fd = libc::open(c"/proc/self/oom_score_adj".as_ptr(), libc::O_WRONLY);
        if fd >= 0 {
            libc::write(fd, OOM_SCORE_ADJ.as_ptr().cast(), OOM_SCORE_ADJ.len());
            libc::close(fd);
        }
    }
}

/// Starts `spec` with its stdin and stdout as a link; its end is reported on `events`.
/// The child is told to die with the thread that spawned it, so it cannot outlive a
/// conductor that is killed: hence `main` (see `runtime.rs`).
pub(crate) fn spawn(
    _main: MainThread,
    spec: &CommandSpec,
    links: &Links,
    events: &mpsc::Sender<Event>,
) -> Result<Started, StartError> {
    let mut cmd = Command::new(&spec.program);
    cmd.args(&spec.args)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(cwd) = &spec.cwd {
        cmd.current_dir(cwd);
    }
    // SAFETY: prctl, open, write and close are async-signal-safe and touch only the child.
    #[cfg(target_os = "linux")]
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            prefer_as_oom_victim();
            Ok(())
        });
    }
    let launched_at = tokio::time::Instant::now();
    let mut child = cmd.spawn().map_err(|source| StartError::Spawn {
        program: spec.program.clone(),
        source,
    })?;
    let pid = child.id().map(|p| p as i32);
    let stdin = child.stdin.take().expect("piped stdin");
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");
    let name = spec.name.clone();
    tracing::debug!(component = %name, pid, program = %spec.program.display(), "started");

    let (link, done) = links.pipes(stdout, stdin);
    let id = link.id;
    let detail = match pid {
        Some(pid) => format!("pid {pid}: {}", spec.program.display()),
        None => spec.program.display().to_string(),
    };
    trace_started(links, &name, detail);
    let trace = links.trace().cloned();
    let tail = StderrTail::default();
    let stderr_task = tokio::spawn(log_stderr(stderr, name.clone(), tail.clone()));
    let (stopped_tx, stopped) = watch::channel(false);
    let events = events.clone();
    tokio::spawn(async move {
        let _stopped = StopSignal(stopped_tx);
        let (reason, status) = match child.wait().await {
            Ok(status) => (describe_exit(status), exit_status(status)),
            Err(e) => (format!("could not be waited for: {e}"), None),
        };
        // Its last messages and stderr lines reach the router before the news that it is gone.
        let drained = async {
            let _ = stderr_task.await;
            done.reader_finished().await;
        };
        let _ = tokio::time::timeout(OUTPUT_DRAIN, drained).await;
        report_exit(
            &events,
            trace.as_ref(),
            id,
            &name,
            reason,
            status,
            tail.lines(),
        )
        .await;
    });
    Ok(Started {
        link,
        instance: Instance {
            link: id,
            stopped,
            process_group: pid,
            task: None,
            launched_at,
        },
    })
}

async fn log_stderr(stderr: ChildStderr, component: String, tail: StderrTail) {
    let mut lines = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        match lines.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => stderr_relay::relay(&component, &line, &tail),
        }
    }
}

fn describe_exit(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(sig)) => format!("was killed by signal {sig}"),
        (None, None) => format!("exited ({status})"),
    }
}

fn exit_status(status: ExitStatus) -> Option<ComponentExit> {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => Some(ComponentExit::Code(code)),
        (None, Some(signal)) => Some(ComponentExit::Signal(signal)),
        (None, None) => None,
    }
}

/// Whether any process of the group is left.
pub fn group_exists(pgid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    unsafe { libc::kill(-pgid, 0) == 0 }
}

/// Sends `signal` to a whole process group; errors (already gone) are ignored.
pub fn signal_group(pgid: i32, signal: i32) {
    // SAFETY: plain syscall; a negative pid addresses the group.
    unsafe {
        libc::kill(-pgid, signal);
    }
}
