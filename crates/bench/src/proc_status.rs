//! Memory and CPU figures of a running process from `/proc/<pid>/...` (Linux).
//! Must not know which process it is or why it is asked.

use std::time::Duration;

/// Resident set sizes in KiB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Memory {
    /// `VmRSS`: resident now.
    pub rss_kib: u64,
    /// `VmHWM`: the most it has ever been resident.
    pub peak_kib: u64,
}

/// Reads the memory figures of `pid`; `None` if the process is gone or this is not Linux.
pub fn memory_of(pid: u32) -> Option<Memory> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    parse_memory(&status)
}

/// Extracts `VmRSS` and `VmHWM` from the text of a status file.
pub fn parse_memory(status: &str) -> Option<Memory> {
    let field = |name: &str| {
        status.lines().find_map(|line| {
            let value = line.strip_prefix(name)?.strip_prefix(':')?;
            value.trim().strip_suffix("kB")?.trim().parse::<u64>().ok()
        })
    };
    Some(Memory {
        rss_kib: field("VmRSS")?,
        peak_kib: field("VmHWM")?,
    })
}

/// CPU time and context switches summed over a process's live threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuUse {
    pub cpu: Duration,
    pub switches: u64,
}

impl CpuUse {
    /// What was used between `self` and the later reading `then`.
    pub fn until(&self, then: CpuUse) -> CpuUse {
        CpuUse {
            cpu: then.cpu.saturating_sub(self.cpu),
            switches: then.switches.saturating_sub(self.switches),
        }
    }
}

/// Reads every thread's `schedstat` (time on CPU) and context-switch counts. Threads that
/// already exited are not counted.
pub fn cpu_use_of(pid: u32) -> Option<CpuUse> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut total = CpuUse::default();
    for task in tasks.flatten() {
        let dir = task.path();
        let (Ok(schedstat), Ok(status)) = (
            std::fs::read_to_string(dir.join("schedstat")),
            std::fs::read_to_string(dir.join("status")),
        ) else {
            continue;
        };
        total.cpu += Duration::from_nanos(parse_schedstat(&schedstat).unwrap_or(0));
        total.switches += parse_switches(&status).unwrap_or(0);
    }
    Some(total)
}

/// Every process started by `pid` or by one of its descendants (from the `children`
/// files of each thread, Linux 3.5+).
pub fn descendants_of(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let mut queue = vec![pid];
    while let Some(parent) = queue.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{parent}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let children =
                std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            for child in children
                .split_whitespace()
                .filter_map(|c| c.parse::<u32>().ok())
            {
                found.push(child);
                queue.push(child);
            }
        }
    }
    found
}

/// The CPU use of `pid` and, separately, of all its descendants together.
pub fn tree_cpu_use_of(pid: u32) -> Option<(CpuUse, CpuUse)> {
    let own = cpu_use_of(pid)?;
    let mut others = CpuUse::default();
    for child in descendants_of(pid) {
        if let Some(used) = cpu_use_of(child) {
            others.cpu += used.cpu;
            others.switches += used.switches;
        }
    }
    Some((own, others))
}

/// The first field of `schedstat`: nanoseconds spent on a CPU.
pub fn parse_schedstat(text: &str) -> Option<u64> {
    text.split_whitespace().next()?.parse().ok()
}

/// Voluntary plus involuntary context switches from a `status` file.
pub fn parse_switches(status: &str) -> Option<u64> {
    let field = |name: &str| {
        status.lines().find_map(|line| {
            line.strip_prefix(name)?
                .strip_prefix(':')?
                .trim()
                .parse::<u64>()
                .ok()
        })
    };
    Some(field("voluntary_ctxt_switches")? + field("nonvoluntary_ctxt_switches")?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_cpu_time_and_switches() {
        assert_eq!(parse_schedstat("139938 1326076 2\n"), Some(139_938));
        let status = "Name:\tx\nvoluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t3\n";
        assert_eq!(parse_switches(status), Some(15));
        assert_eq!(parse_switches("Name:\tx\n"), None);
        let before = CpuUse {
            cpu: Duration::from_micros(10),
            switches: 4,
        };
        let after = CpuUse {
            cpu: Duration::from_micros(25),
            switches: 9,
        };
        assert_eq!(
            before.until(after),
            CpuUse {
                cpu: Duration::from_micros(15),
                switches: 5
            }
        );
        let me = cpu_use_of(std::process::id()).expect("/proc is mounted");
        assert!(me.cpu > Duration::ZERO);
    }

    #[test]
    fn finds_child_processes() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let found = descendants_of(std::process::id());
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(
            found.contains(&child.id()),
            "{found:?} lacks {}",
            child.id()
        );
    }

    #[test]
    fn reads_rss_and_high_water_mark() {
        let status = "Name:\tacp-conductor\nVmPeak:\t   12000 kB\nVmHWM:\t    3012 kB\nVmRSS:\t    2900 kB\nThreads:\t3\n";
        assert_eq!(
            parse_memory(status),
            Some(Memory {
                rss_kib: 2900,
                peak_kib: 3012
            })
        );
        assert_eq!(parse_memory("Name:\tx\nVmRSS:\t1 kB\n"), None);
    }

    #[test]
    fn reads_this_process() {
        let me = memory_of(std::process::id()).expect("/proc is mounted");
        assert!(me.peak_kib >= me.rss_kib && me.rss_kib > 0);
    }
}
