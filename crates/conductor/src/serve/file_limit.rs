//! `serve`'s open-file limit: every connection's chain holds pipes to its processes (about 16
//! files at 3 proxies), so the soft limit a service manager gives (often 1,024) would stop
//! `serve` near 60 connections. It is raised to the hard limit at start, as Go's runtime
//! does, and the log says how many connections it fits. Knows rlimits, nothing of chains.

/// Open files one connection's chain holds in `serve` per process it runs (its pipes and
/// what watches its exit): 16 for 3 proxies and an agent, measured with
/// `acp-bench-capacity` (docs/operations.md).
const FILES_PER_PROCESS: u64 = 4;

/// Raises the soft open-file limit to the hard one; returns the limit now in force.
pub(super) fn raise() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return None;
    }
    if limit.rlim_cur < limit.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: limit.rlim_max,
            rlim_max: limit.rlim_max,
        };
        // SAFETY: setrlimit reads the struct we own; raising the soft limit up to the hard
        // one needs no privilege.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            tracing::debug!(
                "raised the open-file limit from {} to {}",
                limit.rlim_cur,
                limit.rlim_max
            );
            return Some(limit.rlim_max);
        }
        tracing::warn!(
            "could not raise the open-file limit from {} to {}",
            limit.rlim_cur,
            limit.rlim_max
        );
    }
    Some(limit.rlim_cur)
}

/// About how many connections `files` open files hold, each running `processes` processes.
pub(super) fn connections_within(files: u64, processes: u64) -> u64 {
    files / (FILES_PER_PROCESS * processes.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_divides_by_the_files_each_chain_holds() {
        assert_eq!(connections_within(20_000, 4), 1_250);
        assert_eq!(connections_within(1_024, 2), 128);
        assert_eq!(connections_within(1_024, 0), 256);
    }
}
