//! The router's own schedule: what it must do at a given time without an event (a grace
//! running out, a restart's backoff, a request's deadline), in time order.

use std::collections::BTreeMap;

use std::time::Instant;

use super::Timer;

/// Timers by when they are due; timers due at the same instant keep the order they were set.
#[derive(Debug, Default)]
pub(super) struct Timers {
    due: BTreeMap<(Instant, u64), Timer>,
    set: u64,
}

impl Timers {
    pub(super) fn at(&mut self, at: Instant, timer: Timer) {
        self.set += 1;
        self.due.insert((at, self.set), timer);
    }

    /// When the first timer is due.
    pub(super) fn next(&self) -> Option<Instant> {
        self.due.first_key_value().map(|((at, _), _)| *at)
    }

    /// Removes and returns the first timer due at or before `now`.
    pub(super) fn pop_due(&mut self, now: Instant) -> Option<Timer> {
        if self.next()? > now {
            return None;
        }
        self.due.pop_first().map(|(_, timer)| timer)
    }

    /// Lets `change` edit every timer in place (their times stay).
    pub(super) fn for_each_mut(&mut self, change: impl FnMut(&mut Timer)) {
        self.due.values_mut().for_each(change);
    }

    /// Removes every timer `which` selects.
    pub(super) fn cancel(&mut self, mut which: impl FnMut(&Timer) -> bool) {
        self.due.retain(|_, timer| !which(timer));
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::link::LinkId;
    use crate::topology::Position;

    fn restart(position: Position) -> Timer {
        Timer::Restart { position }
    }

    fn position(timer: Option<Timer>) -> Option<Position> {
        match timer? {
            Timer::Restart { position } => Some(position),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn timers_come_due_in_time_order_then_in_the_order_set() {
        let now = Instant::now();
        let mut timers = Timers::default();
        timers.at(now + Duration::from_secs(2), restart(3));
        timers.at(now + Duration::from_secs(1), restart(1));
        timers.at(now + Duration::from_secs(1), restart(2));
        assert_eq!(timers.next(), Some(now + Duration::from_secs(1)));
        assert_eq!(position(timers.pop_due(now)), None, "nothing is due yet");
        let later = now + Duration::from_secs(1);
        assert_eq!(position(timers.pop_due(later)), Some(1));
        assert_eq!(position(timers.pop_due(later)), Some(2));
        assert_eq!(position(timers.pop_due(later)), None);
        assert_eq!(
            position(timers.pop_due(now + Duration::from_secs(5))),
            Some(3)
        );
        assert_eq!(timers.next(), None);
    }

    #[test]
    fn cancelled_timers_never_come_due() {
        let now = Instant::now();
        let mut timers = Timers::default();
        timers.at(now, restart(1));
        timers.at(
            now,
            Timer::ExpectExit {
                link: LinkId(4),
                reason: "closed".into(),
            },
        );
        timers.cancel(|t| matches!(t, Timer::Restart { .. }));
        assert!(matches!(
            timers.pop_due(now),
            Some(Timer::ExpectExit { .. })
        ));
        assert!(timers.pop_due(now).is_none());
    }
}
