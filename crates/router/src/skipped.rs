//! What the router received and did not route, counted by kind: each is logged as it happens
//! and the counts are summarized once when the run ends. Counts only; deciding is elsewhere.

/// One kind of input the router did not route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// A line that is not a JSON-RPC 2.0 message (answered when a request could be made out).
    InvalidLine,
    /// A line over `max_line`, dropped unread (answered when its id could be found).
    TooLongLine,
    /// A response to an id the conductor never used on that link.
    UnknownResponse,
    /// A response to a request already answered: a second response, or one arriving after
    /// the conductor answered in its place (the component had failed, the run was ending).
    DuplicateResponse,
    /// A request (answered with an error) or notification (dropped) before `initialize`.
    BeforeInitialize,
    /// An `initialize` after the first one (answered with an error).
    SecondInitialize,
    /// A chain method from a peer that may not send it: `proxy/successor` or
    /// `proxy/initialize` from the editor or the agent (answered with an error when a
    /// request).
    WrongSender,
    /// A `$/cancel_request` for a request no longer waiting.
    StaleCancel,
}

/// How many of each kind of input were not routed during the run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Skipped {
    pub invalid_lines: u64,
    pub too_long_lines: u64,
    pub unknown_responses: u64,
    pub duplicate_responses: u64,
    pub before_initialize: u64,
    pub second_initialize: u64,
    pub wrong_sender: u64,
    pub stale_cancels: u64,
}

impl Skipped {
    pub fn count(&mut self, skip: Skip) {
        let counter = match skip {
            Skip::InvalidLine => &mut self.invalid_lines,
            Skip::TooLongLine => &mut self.too_long_lines,
            Skip::UnknownResponse => &mut self.unknown_responses,
            Skip::DuplicateResponse => &mut self.duplicate_responses,
            Skip::BeforeInitialize => &mut self.before_initialize,
            Skip::SecondInitialize => &mut self.second_initialize,
            Skip::WrongSender => &mut self.wrong_sender,
            Skip::StaleCancel => &mut self.stale_cancels,
        };
        *counter += 1;
    }

    pub fn total(&self) -> u64 {
        self.invalid_lines
            + self.too_long_lines
            + self.unknown_responses
            + self.duplicate_responses
            + self.before_initialize
            + self.second_initialize
            + self.wrong_sender
            + self.stale_cancels
    }

    /// Logs the counts once, at the end of the run: at info when anything was skipped.
    pub fn summarize(&self) {
        if self.total() == 0 {
            tracing::debug!("every message received was routed");
            return;
        }
        tracing::info!(
            invalid_lines = self.invalid_lines,
            too_long_lines = self.too_long_lines,
            unknown_responses = self.unknown_responses,
            duplicate_responses = self.duplicate_responses,
            before_initialize = self.before_initialize,
            second_initialize = self.second_initialize,
            wrong_sender = self.wrong_sender,
            stale_cancels = self.stale_cancels,
            "messages not routed during the run"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_has_its_own_count() {
        let mut skipped = Skipped::default();
        let kinds = [
            Skip::InvalidLine,
            Skip::TooLongLine,
            Skip::UnknownResponse,
            Skip::DuplicateResponse,
            Skip::BeforeInitialize,
            Skip::SecondInitialize,
            Skip::WrongSender,
            Skip::StaleCancel,
        ];
        for (n, kind) in kinds.iter().enumerate() {
            for _ in 0..=n {
                skipped.count(*kind);
            }
        }
        assert_eq!(
            skipped,
            Skipped {
                invalid_lines: 1,
                too_long_lines: 2,
                unknown_responses: 3,
                duplicate_responses: 4,
                before_initialize: 5,
                second_initialize: 6,
                wrong_sender: 7,
                stale_cancels: 8,
            }
        );
        assert_eq!(skipped.total(), 36);
    }
}
