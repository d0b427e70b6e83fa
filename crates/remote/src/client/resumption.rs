//! What the client needs to resume a dropped connection (RFD "Durable & Resumable HTTP/WS
//! Transport"): the server's `Acp-Resumable` advertisement, the jittered backoff between
//! attempts, and, over WebSocket, the messages sent and not yet known to be taken. Pure: no
//! I/O, no clock (callers sleep the delays).

use std::collections::VecDeque;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use bytes::Bytes;

/// The server keeps a dropped connection this long (`seconds=` of `Acp-Resumable`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resumable {
    pub window: Duration,
}

impl Resumable {
    /// Reads `bytes=N, seconds=S` (in any order, other keys ignored); `None` when there is
    /// no usable window.
    pub fn parse(header: &[u8]) -> Option<Resumable> {
        let text = std::str::from_utf8(header).ok()?;
        let seconds = text.split(',').find_map(|part| {
            let (key, value) = part.split_once('=')?;
            (key.trim() == "seconds").then(|| value.trim().parse::<u64>().ok())?
        })?;
        (seconds > 0).then(|| Resumable {
            window: Duration::from_secs(seconds),
        })
    }
}

/// The first wait before an attempt to resume, doubled after each failed one.
const FIRST_DELAY: Duration = Duration::from_millis(100);
/// The longest wait between attempts: a network back after a cut is found within this.
const LONGEST_DELAY: Duration = Duration::from_secs(1);

/// The waits between attempts: doubling from 100 ms to at most 1 s, each shortened by up to
/// a fifth at random, so that clients cut together do not come back together.
#[derive(Debug)]
pub struct Backoff {
    next: Duration,
    random: std::collections::hash_map::DefaultHasher,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            next: FIRST_DELAY,
            random: std::collections::hash_map::RandomState::new().build_hasher(),
        }
    }
}

impl Iterator for Backoff {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        let full = self.next;
        self.next = (self.next * 2).min(LONGEST_DELAY);
        self.random.write_u8(0);
        let fifths = self.random.finish() % 1000;
        Some(full - full / 5 * u32::try_from(fifths).expect("under 1000") / 1000)
    }
}

/// Messages sent on a WebSocket connection, kept until the server says it has taken them
/// (the `Acp-Received` count of a resume), bounded in bytes.
#[derive(Debug)]
pub struct SentMessages {
    budget: usize,
    used: usize,
    /// The number of the first message in `kept` (messages are numbered from 1).
    first: u64,
    kept: VecDeque<Bytes>,
}

/// The server asked for messages no longer kept.
#[derive(Debug, PartialEq, Eq)]
pub struct Forgotten;

impl SentMessages {
    pub fn new(budget: usize) -> SentMessages {
        SentMessages {
            budget,
            used: 0,
            first: 1,
            kept: VecDeque::new(),
        }
    }

    /// Keeps the next message sent.
    pub fn sent(&mut self, message: Bytes) {
        self.used += message.len();
        self.kept.push_back(message);
        while self.used > self.budget {
            let Some(oldest) = self.kept.pop_front() else {
                break;
            };
            self.used -= oldest.len();
            self.first += 1;
        }
    }

    /// The server has taken the first `taken` messages: the rest, to send again, in order.
    pub fn after(&mut self, taken: u64) -> Result<Vec<Bytes>, Forgotten> {
        let next = self.first + self.kept.len() as u64;
        if taken >= next || taken + 1 < self.first {
            return Err(Forgotten);
        }
        while self.first <= taken {
            let oldest = self.kept.pop_front().expect("taken is below next");
            self.used -= oldest.len();
            self.first += 1;
        }
        Ok(self.kept.iter().cloned().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_is_read_from_the_advertisement() {
        let window = |text: &str| Resumable::parse(text.as_bytes()).map(|r| r.window.as_secs());
        assert_eq!(window("bytes=1048576, seconds=60"), Some(60));
        assert_eq!(window("seconds=5,bytes=1"), Some(5));
        assert_eq!(window(" seconds = 7 "), Some(7));
        for unusable in [
            "",
            "bytes=1",
            "seconds=",
            "seconds=x",
            "seconds=0",
            "seconds=-1",
        ] {
            assert_eq!(window(unusable), None, "{unusable:?}");
        }
        assert_eq!(Resumable::parse(b"seconds=\xff"), None);
    }

    #[test]
    fn the_backoff_doubles_to_a_second_with_jitter_below_each_step() {
        let delays: Vec<Duration> = Backoff::default().take(8).collect();
        let steps = [100, 200, 400, 800, 1000, 1000, 1000, 1000];
        for (delay, step) in delays.iter().zip(steps) {
            let step = Duration::from_millis(step);
            assert!(
                *delay <= step && *delay >= step * 4 / 5,
                "{delay:?} for {step:?}"
            );
        }
    }

    fn messages(sent: &mut SentMessages, count: usize) {
        for i in 0..count {
            sent.sent(Bytes::from(format!("m{}", i + 1)));
        }
    }

    #[test]
    fn what_the_server_has_not_taken_is_sent_again_in_order() {
        let mut sent = SentMessages::new(1000);
        messages(&mut sent, 4);
        assert_eq!(sent.after(2).unwrap(), ["m3", "m4"]);
        // Taken later, a second resume converges.
        assert_eq!(sent.after(3).unwrap(), ["m4"]);
        assert_eq!(sent.after(4).unwrap(), Vec::<Bytes>::new());
        sent.sent(Bytes::from_static(b"m5"));
        assert_eq!(sent.after(4).unwrap(), ["m5"]);
    }

    #[test]
    fn counts_the_server_cannot_have_or_the_client_no_longer_keeps_are_refused() {
        let mut sent = SentMessages::new(4);
        messages(&mut sent, 3);
        // Two bytes each: m1 was dropped to keep within four bytes.
        assert_eq!(sent.after(0), Err(Forgotten));
        assert_eq!(sent.after(4), Err(Forgotten));
        assert_eq!(sent.after(1).unwrap(), ["m2", "m3"]);
    }
}
