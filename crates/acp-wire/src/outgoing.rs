//! Requests a peer sent and is waiting to hear back about: the id it chose for each, mapped to
//! whatever the caller needs when the response comes. Knows ids, not what the entries mean.
//!
//! Every party that sends requests over a JSON-RPC link (the conductor on each of its links,
//! a proxy, a client) needs the same two things: a fresh id per request, and the way back from
//! a response's id to what was asked. [`OutgoingRequests`] is that table.

use std::collections::HashMap;

use serde_json::value::RawValue;

/// The requests sent on one link and not yet answered, by the id they were sent with.
///
/// Ids are `1, 2, 3, ...` in sending order, never reused: some peers in the wild treat `0` as
/// "no id", and a late answer to a forgotten request must not match a newer one.
///
/// ```
/// use acp_wire::OutgoingRequests;
/// use acp_wire::RawValue;
/// let mut waiting = OutgoingRequests::new();
/// let id = waiting.register("session/prompt");
/// assert_eq!(id, 1);
/// let response_id = RawValue::from_string("1".to_string()).unwrap();
/// assert_eq!(waiting.complete_raw(&response_id), Some("session/prompt"));
/// assert_eq!(waiting.complete(id), None); // answered once
/// ```
#[derive(Debug)]
pub struct OutgoingRequests<T> {
    last_id: u64,
    waiting: HashMap<u64, T>,
}

impl<T> Default for OutgoingRequests<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> OutgoingRequests<T> {
    pub fn new() -> Self {
        OutgoingRequests {
            last_id: 0,
            waiting: HashMap::new(),
        }
    }

    /// Records a request about to be sent and returns the id to send it with.
    pub fn register(&mut self, entry: T) -> u64 {
        self.last_id += 1;
        self.waiting.insert(self.last_id, entry);
        self.last_id
    }

    /// The entry of the request sent with `id`, removed: each request is answered once.
    pub fn complete(&mut self, id: u64) -> Option<T> {
        self.waiting.remove(&id)
    }

    /// Like [`complete`](Self::complete), for an id as it arrived in a response. An id this
    /// table cannot have chosen (a string, a negative or fractional number) matches nothing.
    pub fn complete_raw(&mut self, id: &RawValue) -> Option<T> {
        self.complete(crate::id::own_id(id)?)
    }

    /// Whether this table handed out `id`, answered since or not: a response to an id it
    /// handed out and no longer waits on answers a request a second time.
    pub fn issued(&self, id: u64) -> bool {
        (1..=self.last_id).contains(&id)
    }

    /// The entry of a request still waiting, without removing it.
    pub fn get(&self, id: u64) -> Option<&T> {
        self.waiting.get(&id)
    }

    /// The entry of the request sent with `id`, still waiting, to change what it carries.
    pub fn get_mut(&mut self, id: u64) -> Option<&mut T> {
        self.waiting.get_mut(&id)
    }

    /// The id of a waiting request whose entry `which` selects, if any.
    pub fn find(&self, mut which: impl FnMut(&T) -> bool) -> Option<u64> {
        self.waiting
            .iter()
            .find_map(|(id, entry)| which(entry).then_some(*id))
    }

    /// Removes and returns every waiting entry that `which` selects, oldest first.
    pub fn take_where(&mut self, mut which: impl FnMut(&T) -> bool) -> Vec<T> {
        let mut ids: Vec<u64> = self
            .waiting
            .iter()
            .filter(|(_, entry)| which(entry))
            .map(|(id, _)| *id)
            .collect();
        ids.sort_unstable();
        ids.into_iter()
            .filter_map(|id| self.waiting.remove(&id))
            .collect()
    }

    /// Removes and returns every waiting entry, oldest first.
    pub fn take_all(&mut self) -> Vec<T> {
        self.take_where(|_| true)
    }

    /// How many waiting entries `which` selects.
    pub fn count_where(&self, mut which: impl FnMut(&T) -> bool) -> usize {
        self.waiting.values().filter(|entry| which(entry)).count()
    }

    /// Every waiting request, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &T)> {
        self.waiting.iter().map(|(id, entry)| (*id, entry))
    }

    pub fn len(&self) -> usize {
        self.waiting.len()
    }

    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_string()).unwrap()
    }

    #[test]
    fn ids_count_from_one_and_are_never_reused() {
        let mut table = OutgoingRequests::new();
        assert_eq!(table.register('a'), 1);
        assert_eq!(table.register('b'), 2);
        assert_eq!(table.complete(2), Some('b'));
        assert_eq!(table.register('c'), 3, "a freed id is not handed out again");
        assert_eq!(table.len(), 2);
    }

    #[test]
    fn a_request_is_completed_once() {
        let mut table = OutgoingRequests::new();
        let id = table.register("x");
        assert_eq!(table.get(id), Some(&"x"));
        assert_eq!(table.complete(id), Some("x"));
        assert_eq!(table.complete(id), None);
        assert_eq!(table.get(id), None);
        assert!(table.is_empty());
        assert!(table.issued(id), "answered, but handed out");
        assert!(!table.issued(0) && !table.issued(id + 1));
    }

    #[test]
    fn raw_ids_match_only_what_the_table_could_have_chosen() {
        let mut table = OutgoingRequests::new();
        table.register("first");
        table.register("second");
        for foreign in [r#""1""#, "-1", "1.0", "null", "{}", "99"] {
            assert_eq!(table.complete_raw(&raw(foreign)), None, "{foreign}");
        }
        assert_eq!(table.complete_raw(&raw("2")), Some("second"));
        assert_eq!(table.len(), 1);
    }

    #[test]
    fn find_take_and_count_select_by_entry() {
        let mut table = OutgoingRequests::new();
        for origin in [0, 3, 0, 2, 0] {
            table.register(origin);
        }
        assert_eq!(table.find(|o| *o == 3), Some(2));
        assert_eq!(table.find(|o| *o == 7), None);
        assert_eq!(table.count_where(|o| *o == 0), 3);
        assert_eq!(table.take_where(|o| *o == 0), [0, 0, 0]);
        assert_eq!(table.count_where(|o| *o == 0), 0);
        let mut left: Vec<(u64, i32)> = table.iter().map(|(id, o)| (id, *o)).collect();
        left.sort_unstable();
        assert_eq!(left, [(2, 3), (4, 2)]);
        assert_eq!(table.take_all(), [3, 2], "oldest first");
        assert!(table.is_empty());
    }

    #[test]
    fn every_request_gets_exactly_one_completion_under_any_interleaving() {
        // Registers and completes in a scrambled order, including duplicate and unknown
        // completions: each registered request is handed back exactly once.
        let mut table = OutgoingRequests::new();
        let mut handed_back = Vec::new();
        let mut sent = Vec::new();
        let mut state: u64 = 7;
        for step in 0..2000u64 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            if state >> 62 == 0 || sent.is_empty() {
                sent.push(table.register(step));
            } else {
                let pick = (state >> 33) as usize % (sent.len() + 2);
                let id = sent.get(pick).copied().unwrap_or(u64::MAX - pick as u64);
                if let Some(step) = table.complete(id) {
                    handed_back.push(step);
                }
            }
        }
        handed_back.extend(table.take_all());
        handed_back.sort_unstable();
        assert_eq!(handed_back.len(), sent.len());
        handed_back.dedup();
        assert_eq!(handed_back.len(), sent.len(), "no request completed twice");
    }
}
