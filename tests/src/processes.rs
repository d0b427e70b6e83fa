//! Whether processes still run, read from /proc: for the "no process of the chain
//! remains" checks. Knows pids only, not which component a pid belongs to.

use std::time::{Duration, Instant};

/// True while `pid` exists and has not terminated; a zombie has terminated (its parent,
/// or whoever inherits it, only has to reap it).
pub fn is_running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !matches!(state(&stat), Some('Z' | 'X')),
        Err(_) => false,
    }
}

/// Every process whose parent chain leads to `pid`, found by scanning /proc.
pub fn descendants(pid: u32) -> Vec<u32> {
    let parents: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
                .filter_map(|child| {
                    let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).ok()?;
                    Some((child, parent(&stat)?))
                })
                .collect()
        })
        .unwrap_or_default();
    let mut found = Vec::new();
    let mut frontier = vec![pid];
    while let Some(ancestor) = frontier.pop() {
        for &(child, _) in parents.iter().filter(|(_, p)| *p == ancestor) {
            if !found.contains(&child) {
                found.push(child);
                frontier.push(child);
            }
        }
    }
    found
}

/// Waits up to `limit` for every pid in `pids` to stop running; returns those still
/// running then (empty when all are gone).
pub fn wait_until_gone(pids: &[u32], limit: Duration) -> Vec<u32> {
    let deadline = Instant::now() + limit;
    loop {
        let running: Vec<u32> = pids
            .iter()
            .copied()
            .filter(|&pid| is_running(pid))
            .collect();
        if running.is_empty() || Instant::now() >= deadline {
            return running;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The most memory `pid` has had resident so far (`VmHWM`), in KiB.
pub fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_else(|e| panic!("no /proc/{pid}/status: {e}"));
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().strip_suffix("kB"))
        .and_then(|kib| kib.trim().parse().ok())
        .unwrap_or_else(|| panic!("no VmHWM in /proc/{pid}/status"))
}

/// Name and state of a process, for messages about processes that remain.
pub fn describe(pid: u32) -> String {
    match std::fs::read_to_string(format!("/proc/{pid}/cmdline")) {
        Ok(cmdline) => format!("{pid} ({})", cmdline.replace('\0', " ").trim_end()),
        Err(_) => format!("{pid} (gone)"),
    }
}

/// The fields after the command name, which is in parentheses and may contain anything.
fn after_command(stat: &str) -> Option<&str> {
    Some(&stat[stat.rfind(')')? + 1..])
}

fn state(stat: &str) -> Option<char> {
    after_command(stat)?
        .split_whitespace()
        .next()?
        .chars()
        .next()
}

fn parent(stat: &str) -> Option<u32> {
    after_command(stat)?.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_runs_and_its_children_are_found() {
        assert!(is_running(std::process::id()));
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        assert!(descendants(std::process::id()).contains(&child.id()));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!is_running(child.id()));
    }

    #[test]
    fn this_process_has_a_peak_rss() {
        assert!(peak_rss_kib(std::process::id()) > 0);
    }

    #[test]
    fn stat_fields_survive_odd_command_names() {
        let stat = "42 (a) b (c) S 7 42 42 0";
        assert_eq!(state(stat), Some('S'));
        assert_eq!(parent(stat), Some(7));
    }
}
