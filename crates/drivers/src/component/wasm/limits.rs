//! The limits of one WASM instance: a cap on its memories and tables together, and the
//! clock that tells how long it has computed without reading input. Must not know WASI.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use wasmtime::{ResourceLimiter, UpdateDeadline};

use super::engine::EPOCH_TICK;

/// What one table element costs the host (a pointer).
const TABLE_ELEMENT_BYTES: usize = std::mem::size_of::<usize>();

/// Caps the sum of every linear memory and table of a store. wasmtime's own `StoreLimits`
/// caps each memory separately, which would let a component with several memories use a
/// multiple of the cap.
#[derive(Debug)]
pub struct MemoryCap {
    limit: usize,
    used: usize,
    /// The most `used` has been, for the log when the instance ends.
    peak: usize,
    /// Set once a growth was refused: the guest's failure is then explained by the cap.
    refused: bool,
}

impl MemoryCap {
    pub fn new(limit: usize) -> Self {
        Self {
            limit,
            used: 0,
            peak: 0,
            refused: false,
        }
    }

    /// The most the guest's memories and tables took together at any time.
    pub fn peak(&self) -> usize {
        self.peak
    }

    /// Whether the guest ever asked for more than the cap.
    pub fn was_exceeded(&self) -> bool {
        self.refused
    }

    fn grow(&mut self, current: usize, desired: usize) -> bool {
        let total = self.used.saturating_sub(current).saturating_add(desired);
        if total > self.limit {
            self.refused = true;
            return false;
        }
        self.used = total;
        self.peak = self.peak.max(total);
        true
    }
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        // Refusing (rather than trapping) is what the spec asks: `memory.grow` returns -1
        // and the guest decides; a Rust guest aborts with "memory allocation failed".
        Ok(self.grow(current, desired))
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(self.grow(
            current.saturating_mul(TABLE_ELEMENT_BYTES),
            desired.saturating_mul(TABLE_ELEMENT_BYTES),
        ))
    }
}

/// When the guest last read input or waited for the host; the time since is the time it
/// has spent computing on its own.
#[derive(Debug)]
pub struct ComputeClock {
    origin: Instant,
    /// Microseconds after `origin`.
    rested_at: AtomicU64,
}

impl Default for ComputeClock {
    fn default() -> Self {
        Self::new()
    }
}

impl ComputeClock {
    pub fn new() -> Self {
        Self {
            origin: Instant::now(),
            rested_at: AtomicU64::new(0),
        }
    }

    /// The guest consumed input or waited on the host: restart the count.
    pub fn rest(&self) {
        let now = u64::try_from(self.origin.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.rested_at.store(now, Ordering::Relaxed);
    }

    pub fn computing_for(&self) -> Duration {
        let rested = Duration::from_micros(self.rested_at.load(Ordering::Relaxed));
        self.origin.elapsed().saturating_sub(rested)
    }

    /// What to do when the guest reaches an epoch deadline: keep going without a task
    /// switch when it has just rested (the common case right after a message arrives),
    /// yield to the runtime while it computes, interrupt it past `limit`.
    ///
    /// The yield is tokio's `yield_now`, which puts the guest back only after the runtime
    /// has polled for I/O: the guest shares the conductor's one thread, and a task that
    /// woke itself (wasmtime's plain `Yield`) would keep the run queue busy, so that pipes
    /// were polled only every 61st task run, 5 ms of computing each.
    pub fn on_deadline(&self, limit: Duration) -> UpdateDeadline {
        let computing = self.computing_for();
        if computing >= limit {
            UpdateDeadline::Interrupt
        } else if computing < EPOCH_TICK {
            UpdateDeadline::Continue(1)
        } else {
            UpdateDeadline::YieldCustom(1, Box::pin(tokio::task::yield_now()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_covers_all_memories_and_tables_together() {
        let mut cap = MemoryCap::new(100);
        assert!(cap.grow(0, 60), "first memory");
        assert!(cap.grow(0, 32), "second memory, 92 in all");
        assert!(!cap.grow(32, 48), "growing the second to 48 would make 108");
        assert!(cap.was_exceeded());
        assert!(
            cap.grow(60, 68),
            "growing the first to 68 makes exactly 100"
        );
        assert_eq!(cap.peak(), 100);
        let mut tables = MemoryCap::new(10 * TABLE_ELEMENT_BYTES);
        assert!(tables.table_growing(0, 10, None).unwrap());
        assert!(!tables.table_growing(10, 11, None).unwrap());
    }

    #[test]
    fn resting_restarts_the_compute_clock() {
        let clock = ComputeClock::new();
        std::thread::sleep(Duration::from_millis(20));
        assert!(clock.computing_for() >= Duration::from_millis(20));
        assert!(matches!(
            clock.on_deadline(Duration::from_millis(10)),
            UpdateDeadline::Interrupt
        ));
        assert!(matches!(
            clock.on_deadline(Duration::from_secs(10)),
            UpdateDeadline::YieldCustom(1, _)
        ));
        clock.rest();
        assert!(clock.computing_for() < Duration::from_millis(20));
        assert!(matches!(
            clock.on_deadline(Duration::from_secs(10)),
            UpdateDeadline::Continue(1)
        ));
    }
}
