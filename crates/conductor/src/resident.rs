//! Once the chain is started, the pages of the conductor's own executable that start-up
//! touched (argument parsing, the configuration, spawning) leave its resident set: they stay
//! in the page cache, and a page used again comes back on a minor fault. Only mappings that
//! are not writable and hold no private copy of a page are dropped, so nothing is lost.

/// Drops the clean, read-only mappings of the running executable from the resident set.
/// Returns how many bytes of mappings were dropped (0 where this cannot be done).
pub fn drop_startup_pages() -> usize {
    #[cfg(target_os = "linux")]
    {
        let Ok(exe) = std::env::current_exe() else {
            return 0;
        };
        let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else {
            return 0;
        };
        let mut dropped = 0;
        for mapping in clean_mappings_of(&smaps, &exe.to_string_lossy()) {
            // SAFETY: the range is a whole mapping of our own executable that is not
            // writable and holds no copy-on-write page, so MADV_DONTNEED only unmaps file
            // pages, which the next access maps again from the page cache unchanged.
            let done = unsafe {
                libc::madvise(
                    mapping.start as *mut libc::c_void,
                    mapping.len,
                    libc::MADV_DONTNEED,
                )
            };
            if done == 0 {
                dropped += mapping.len;
            }
        }
        dropped
    }
    #[cfg(not(target_os = "linux"))]
    0
}

/// One mapping of `/proc/self/smaps`: where it starts, and its length in bytes.
#[derive(Debug, PartialEq, Eq)]
struct Mapping {
    start: usize,
    len: usize,
}

/// The mappings of `path` in `smaps` that are not writable and have no anonymous (private,
/// copied) page: their pages are all the file's, as it is on disk.
fn clean_mappings_of(smaps: &str, path: &str) -> Vec<Mapping> {
    let mut found = Vec::new();
    let mut current: Option<Mapping> = None;
    let mut flush = |current: &mut Option<Mapping>, clean: bool| {
        if let Some(mapping) = current.take()
            && clean
        {
            found.push(mapping);
        }
    };
    let mut clean = false;
    for line in smaps.lines() {
        if let Some((range, rest)) = line.split_once(' ')
            && let Some((start, end)) = range.split_once('-')
            && let (Ok(start), Ok(end)) = (
                usize::from_str_radix(start, 16),
                usize::from_str_radix(end, 16),
            )
        {
            flush(&mut current, clean);
            let mut fields = rest.split_whitespace();
            let perms = fields.next().unwrap_or("");
            let mapped = fields.nth(3).unwrap_or("");
            let read_only = perms.len() == 4 && !perms.contains('w');
            if read_only && mapped == path && end > start {
                current = Some(Mapping {
                    start,
                    len: end - start,
                });
                // Clean once its `Anonymous:` line says so.
                clean = false;
            }
            continue;
        }
        if current.is_some()
            && let Some(kib) = line.strip_prefix("Anonymous:")
        {
            clean = kib.trim().strip_suffix("kB").map(str::trim) == Some("0");
        }
    }
    flush(&mut current, clean);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMAPS: &str = "\
55d0a0000000-55d0a0200000 r--p 00000000 fd:01 123 /usr/bin/acp-conductor
Size:               2048 kB
Rss:                 900 kB
Anonymous:             0 kB
55d0a0200000-55d0a1000000 r-xp 00200000 fd:01 123 /usr/bin/acp-conductor
Size:              14336 kB
Anonymous:             0 kB
55d0a1000000-55d0a1100000 r--p 01000000 fd:01 123 /usr/bin/acp-conductor
Size:               1024 kB
Anonymous:           512 kB
55d0a1100000-55d0a1110000 rw-p 01100000 fd:01 123 /usr/bin/acp-conductor
Anonymous:            64 kB
7f0000000000-7f0000100000 r-xp 00000000 fd:01 9 /usr/lib/x86_64-linux-gnu/libc.so.6
Anonymous:             0 kB
7f0000200000-7f0000300000 rw-p 00000000 00:00 0 [heap]
Anonymous:          1024 kB
";

    #[test]
    fn only_the_executables_clean_read_only_mappings_are_dropped() {
        let found = clean_mappings_of(SMAPS, "/usr/bin/acp-conductor");
        assert_eq!(
            found,
            vec![
                Mapping {
                    start: 0x55d0a0000000,
                    len: 0x200000
                },
                Mapping {
                    start: 0x55d0a0200000,
                    len: 0xe00000
                },
            ],
            "the relocated read-only data (copied pages) and the writable data stay"
        );
        assert!(clean_mappings_of(SMAPS, "/usr/bin/other").is_empty());
    }

    #[test]
    fn a_mapping_whose_pages_are_not_known_to_be_the_files_stays() {
        let smaps = "1000-3000 r-xp 00000000 fd:01 1 /bin/x\nSize: 8 kB\n";
        assert!(clean_mappings_of(smaps, "/bin/x").is_empty());
        let smaps = "1000-3000 r-xp 00000000 fd:01 1 /bin/x\nAnonymous: 0 kB\n";
        assert_eq!(
            clean_mappings_of(smaps, "/bin/x"),
            vec![Mapping {
                start: 0x1000,
                len: 0x2000
            }]
        );
    }

    #[test]
    fn dropping_the_pages_keeps_the_program_running() {
        // This test binary's own code and read-only data go; the test goes on, and reads
        // a constant from its read-only data again.
        assert!(
            drop_startup_pages() > 0,
            "the test binary's text is dropped"
        );
        assert_eq!(SMAPS.lines().count(), 16);
        assert!(drop_startup_pages() > 0, "and again");
    }
}
