//! The demo agent's session ids: `demo-session-<token>-<n>`, readable and unique across
//! processes. Must not know what a session holds.
//!
//! Clients keep sessions by id (acpx does, across every conductor it talks to), so two demo
//! agents must never hand out the same one, as real agents do not. The token is 8 hex digits
//! drawn once per connection from a randomly keyed hasher mixed with the process id and the
//! clock; `n` counts the connection's sessions from 1.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::{SystemTime, UNIX_EPOCH};

/// What every id starts with.
pub(super) const PREFIX: &str = "demo-session-";

/// The ids of one connection's sessions.
#[derive(Debug)]
pub(super) struct SessionIds {
    token: String,
    created: u64,
}

impl SessionIds {
    pub(super) fn new() -> Self {
        SessionIds {
            token: fresh_token(),
            created: 0,
        }
    }

    /// The next session's id.
    pub(super) fn next(&mut self) -> String {
        self.created += 1;
        format!("{PREFIX}{}-{}", self.token, self.created)
    }
}

/// 8 hex digits that differ between processes and connections: `RandomState` is keyed from the
/// OS's randomness (once per thread, then stepped per instance), and the pid and the time are
/// mixed in as well.
fn fresh_token() -> String {
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    hasher.write_u128(nanos);
    format!("{:08x}", hasher.finish() as u32)
}

/// The number `n` of `id` if it has the shape [`SessionIds::next`] gives, else `None`.
#[cfg(test)]
pub(super) fn number_of(id: &str) -> Option<u64> {
    let (token, n) = id.strip_prefix(PREFIX)?.split_once('-')?;
    let hex = token.len() == 8
        && token
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    hex.then(|| n.parse().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_numbered_under_one_token_per_connection() {
        let mut ids = SessionIds::new();
        let (first, second) = (ids.next(), ids.next());
        assert_eq!(number_of(&first), Some(1), "{first}");
        assert_eq!(number_of(&second), Some(2), "{second}");
        assert_eq!(first[..first.len() - 2], second[..second.len() - 2]);
    }

    #[test]
    fn two_connections_do_not_share_ids() {
        let tokens: std::collections::HashSet<String> =
            (0..64).map(|_| SessionIds::new().next()).collect();
        assert_eq!(tokens.len(), 64);
    }

    #[test]
    fn other_shapes_are_not_session_ids() {
        for id in [
            "demo-session-1",
            "demo-session-1234567-1",
            "demo-session-1234567G-1",
            "demo-session-12345678-",
            "other-12345678-1",
        ] {
            assert_eq!(number_of(id), None, "{id}");
        }
    }
}
