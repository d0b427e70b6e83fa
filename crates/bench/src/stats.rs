//! Latency percentiles and throughput from raw samples.
//! Must not know what was measured or how: it only summarizes numbers.

use std::time::Duration;

/// Latency samples reduced to the figures the report shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LatencySummary {
    pub samples: usize,
    pub p50: Duration,
    pub p99: Duration,
}

impl LatencySummary {
    /// `None` when there are no samples.
    pub fn of(mut samples: Vec<Duration>) -> Option<LatencySummary> {
        if samples.is_empty() {
            return None;
        }
        samples.sort_unstable();
        Some(LatencySummary {
            samples: samples.len(),
            p50: percentile(&samples, 50.0),
            p99: percentile(&samples, 99.0),
        })
    }
}

/// The nearest-rank percentile of sorted samples: the smallest sample with at least `pct`
/// percent of all samples at or below it. Panics on an empty slice.
pub fn percentile(sorted: &[Duration], pct: f64) -> Duration {
    assert!(!sorted.is_empty(), "percentile of no samples");
    let n = sorted.len();
    let rank = ((pct / 100.0) * n as f64).ceil() as usize;
    sorted[rank.clamp(1, n) - 1]
}

/// The median of some durations, such as one figure from several runs: the lower middle one of
/// an even count; `None` when there are none.
pub fn median(mut values: Vec<Duration>) -> Option<Duration> {
    values.sort_unstable();
    values.get(values.len().saturating_sub(1) / 2).copied()
}

/// The median of some rates, as [`median`]; `0.0` when there are none.
pub fn median_rate(mut values: Vec<f64>) -> f64 {
    values.sort_unstable_by(f64::total_cmp);
    values
        .get(values.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or(0.0)
}

/// Messages received over a measured interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Throughput {
    pub messages: u64,
    pub elapsed: Duration,
}

impl Throughput {
    pub fn per_second(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs == 0.0 {
            return 0.0;
        }
        self.messages as f64 / secs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(v: u64) -> Duration {
        Duration::from_micros(v)
    }

    #[test]
    fn median_takes_the_lower_middle() {
        assert_eq!(median(vec![]), None);
        assert_eq!(median(vec![us(5)]), Some(us(5)));
        assert_eq!(median(vec![us(9), us(1), us(5)]), Some(us(5)));
        assert_eq!(median(vec![us(9), us(1), us(5), us(7)]), Some(us(5)));
        assert_eq!(median_rate(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median_rate(vec![2.5, f64::NAN, 1.0]), 2.5);
        assert_eq!(median_rate(vec![]), 0.0);
    }

    #[test]
    fn nearest_rank_percentiles() {
        let sorted: Vec<Duration> = (1..=100).map(us).collect();
        assert_eq!(percentile(&sorted, 50.0), us(50));
        assert_eq!(percentile(&sorted, 99.0), us(99));
        assert_eq!(percentile(&sorted, 100.0), us(100));
        assert_eq!(percentile(&sorted, 0.0), us(1));
        let odd: Vec<Duration> = [3, 1, 2].into_iter().map(us).collect::<Vec<_>>();
        let mut odd_sorted = odd.clone();
        odd_sorted.sort();
        assert_eq!(percentile(&odd_sorted, 50.0), us(2));
        assert_eq!(percentile(&[us(7)], 99.0), us(7));
    }

    #[test]
    fn summary_sorts_its_samples() {
        let mut samples: Vec<Duration> = (1..=1000).rev().map(us).collect();
        samples.push(us(1_000_000));
        let s = LatencySummary::of(samples).unwrap();
        assert_eq!(s.samples, 1001);
        assert_eq!(s.p50, us(501));
        assert_eq!(s.p99, us(991));
        assert_eq!(LatencySummary::of(Vec::new()), None);
    }

    #[test]
    fn throughput_per_second() {
        let t = Throughput {
            messages: 300_000,
            elapsed: Duration::from_millis(500),
        };
        assert_eq!(t.per_second(), 600_000.0);
        let none = Throughput {
            messages: 5,
            elapsed: Duration::ZERO,
        };
        assert_eq!(none.per_second(), 0.0);
    }
}
