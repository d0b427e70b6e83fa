//! Deadlines for components' answers: `startup_timeout` for `initialize`, `request_timeout`
//! for every other request. A component that misses one has failed, under its policy.
//!
//! Each waiting request carries its deadline; a link has at most one timer, set for the
//! earliest deadline among its requests and set again for the next one when it fires.

use std::time::Duration;

use std::time::Instant;

use super::failure::Ending;
use super::{Components, Router, Timer};
use crate::link::LinkId;

impl<C: Components> Router<C> {
    /// The request `id` was just sent on `link`: gives it the deadline its component's
    /// policy sets, if any (`initializes` for `initialize`, whose limit is the startup one).
    pub(super) fn arm_deadline(&mut self, link: LinkId, id: u64, initializes: bool) {
        let Some(position) = self.links[link].position.filter(|p| *p != 0) else {
            return;
        };
        let policy = self.positions[position].policy;
        let limit = match initializes {
            true => Some(policy.startup_timeout),
            false => policy.request_timeout,
        };
        let Some(limit) = limit else {
            return;
        };
        let deadline = self.now + limit;
        let l = &mut self.links[link];
        if let Some(pending) = l.pending.get_mut(id) {
            pending.deadline = Some((deadline, limit));
        }
        if l.deadline_timer.is_none_or(|armed| deadline < armed) {
            l.deadline_timer = Some(deadline);
            self.timers.at(deadline, Timer::Deadline { link });
        }
    }

    /// A deadline timer of `link` fired: a request past its deadline fails the component;
    /// otherwise the timer is set again for the earliest deadline left.
    pub(super) fn on_deadline(&mut self, link: LinkId, now: Instant) {
        let l = &mut self.links[link];
        if !l.alive || l.deadline_timer.is_none_or(|armed| armed > now) {
            return;
        }
        l.deadline_timer = None;
        let overdue = l
            .pending
            .iter()
            .filter_map(|(_, p)| Some((p.deadline?, &p.method)))
            .find(|((at, _), _)| *at <= now)
            .map(|((_, limit), method)| (limit, method.to_string()));
        if let Some((limit, method)) = overdue {
            let reason = format!("did not answer `{method}` within {}", seconds(limit));
            return self.component_gone(link, Ending::because(reason));
        }
        let next = l.pending.iter().filter_map(|(_, p)| p.deadline).min();
        if let Some((at, _)) = next {
            l.deadline_timer = Some(at);
            self.timers.at(at, Timer::Deadline { link });
        }
    }
}

pub(crate) fn seconds(limit: Duration) -> String {
    let ms = limit.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{ms} ms")
    }
}
