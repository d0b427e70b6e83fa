//! Processes found by an environment variable that a test sets on the program it starts and
//! that every descendant inherits, however it was started (a client's own spawn, a detached
//! helper, a grandchild whose parent died): for "no process is left" checks of programs this
//! suite did not write. Knows /proc only, not which program a process is.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::processes::{describe, is_running};

/// The variable that marks a test's processes.
pub const MARK_VARIABLE: &str = "ACP_INTEROP_MARK";

/// How often the watcher looks at /proc.
const POLL: Duration = Duration::from_millis(25);
/// One look in this many reads every process's environment (and every look, until the first
/// marked process is found); the others only follow the children of the marked processes
/// already seen, which takes a few reads, so that a process living a few hundred milliseconds
/// is not missed while a busy machine slows the full scan. (A run of the Python example client
/// with the demo agent, a few hundred ms, was once over before the first full look after the
/// empty one at the start found the client.)
const FULL_SCAN_EVERY: usize = 8;

/// A unique mark for one run's processes (`<label>-<pid of the test run>-<count>`).
pub fn mark(label: &str) -> String {
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    let count = COUNT.fetch_add(1, Ordering::SeqCst);
    format!("{label}-{}-{count}", std::process::id())
}

/// Every running process whose environment holds `MARK_VARIABLE=mark`, with its command line.
pub fn marked(mark: &str) -> BTreeMap<u32, String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return BTreeMap::new();
    };
    let pids = entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok());
    marked_among(mark, pids)
}

/// The processes of `pids` whose environment holds `MARK_VARIABLE=mark`, with their command
/// lines.
fn marked_among(mark: &str, pids: impl Iterator<Item = u32>) -> BTreeMap<u32, String> {
    let wanted = format!("{MARK_VARIABLE}={mark}");
    pids.filter(|&pid| {
        std::fs::read(format!("/proc/{pid}/environ"))
            .is_ok_and(|environ| environ.split(|&b| b == 0).any(|v| v == wanted.as_bytes()))
    })
    .filter(|&pid| is_running(pid))
    .map(|pid| (pid, describe(pid)))
    .collect()
}

/// The children of `pid`, from each of its threads' `children` file.
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .filter_map(Result::ok)
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|list| {
            list.split_ascii_whitespace()
                .filter_map(|child| child.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// Watches /proc in the background and keeps every marked process it saw.
pub struct MarkedProcesses {
    mark: String,
    /// Every command line each process had while watched (a child has its parent's until it
    /// executes its own program, and none once it is exiting).
    seen: Arc<Mutex<BTreeMap<u32, BTreeSet<String>>>>,
    stop: Arc<AtomicBool>,
    watcher: Option<JoinHandle<()>>,
}

impl MarkedProcesses {
    pub fn watch(mark: &str) -> Self {
        let seen = Arc::new(Mutex::new(BTreeMap::<u32, BTreeSet<String>>::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let watcher = {
            let (mark, seen, stop) = (mark.to_owned(), seen.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut round = 0;
                while !stop.load(Ordering::SeqCst) {
                    let known: Vec<u32> = seen.lock().expect("seen lock").keys().copied().collect();
                    // Until the first marked process is found there are no children to follow:
                    // every look is a full one, so that the program the test starts is found
                    // within one look, and its children from the look after.
                    let found = if known.is_empty() || round % FULL_SCAN_EVERY == 0 {
                        marked(&mark)
                    } else {
                        let pids = known
                            .iter()
                            .flat_map(|&pid| std::iter::once(pid).chain(children(pid)));
                        marked_among(&mark, pids)
                    };
                    round += 1;
                    let mut seen = seen.lock().expect("seen lock");
                    for (pid, command_line) in found {
                        seen.entry(pid).or_default().insert(command_line);
                    }
                    drop(seen);
                    std::thread::sleep(POLL);
                }
            })
        };
        Self {
            mark: mark.to_owned(),
            seen,
            stop,
            watcher: Some(watcher),
        }
    }

    /// Stops watching, then waits up to `limit` for every marked process to end. Returns every
    /// command line seen, and panics naming the processes still running.
    pub fn assert_all_gone(mut self, limit: Duration) -> Vec<String> {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(watcher) = self.watcher.take() {
            watcher.join().expect("the process watcher panicked");
        }
        let seen = self.seen.lock().expect("seen lock").clone();
        // A pid seen earlier may belong to another process by now: only the mark counts.
        let deadline = Instant::now() + limit;
        let mut left = marked(&self.mark);
        while !left.is_empty() && Instant::now() < deadline {
            std::thread::sleep(POLL);
            left = marked(&self.mark);
        }
        assert!(
            left.is_empty(),
            "processes left running: {:?}",
            left.values().collect::<Vec<_>>()
        );
        seen.into_values().flatten().collect()
    }
}

impl Drop for MarkedProcesses {
    /// A test that fails part way leaves its processes to this: they carry its mark, so they
    /// are its own, and ending them keeps a failure from leaving programs running.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if std::thread::panicking() {
            for pid in marked(&self.mark).into_keys() {
                let Ok(pid) = libc::pid_t::try_from(pid) else {
                    continue;
                };
                // SAFETY: kill(2) on a process that carries this watcher's mark.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    }
}
