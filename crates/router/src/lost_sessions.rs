//! The sessions a restarted agent no longer has. The router tells this table what passes to
//! and from the agent; after a restart it answers requests for the old sessions itself. Pure.
//!
//! Only kept when the agent's policy is `restart`: otherwise an agent's failure ends the
//! chain and nothing needs to be remembered.

use std::collections::HashSet;

use acp_wire::RawValue;
use acp_wire::envelope::decode_str;
use acp_wire::splice::Members;

#[derive(Debug, Default)]
pub(super) struct LostSessions {
    tracking: bool,
    /// Sessions the agent's current instance has.
    held: HashSet<Box<str>>,
    /// Sessions of earlier instances that were not loaded again since.
    lost: HashSet<Box<str>>,
}

/// Methods that bring a session into the agent by its id, the way to recover a lost one.
const RESTORE: &[&str] = &["session/load", "session/resume"];
/// Methods whose result names a session the agent now has.
const CREATE: &[&str] = &["session/new", "session/fork"];

impl LostSessions {
    pub(super) fn track(&mut self, tracking: bool) {
        self.tracking = tracking;
    }

    /// The agent is restarted on purpose (a reload): `sessions` are lost, and from now on
    /// the sessions it opens are kept track of.
    pub(super) fn lose(&mut self, sessions: Vec<Box<str>>) {
        self.tracking = true;
        self.lost.extend(sessions);
        self.lost.extend(self.held.drain());
    }

    /// A request on its way into the agent. A session it loads is held again; otherwise the
    /// lost session it names, if any, is returned (the request must not reach the agent).
    pub(super) fn request(&mut self, method: &str, params: Option<&RawValue>) -> Option<Box<str>> {
        if !self.tracking {
            return None;
        }
        let restores = RESTORE.contains(&method);
        if !restores && self.lost.is_empty() {
            return None;
        }
        let session = session_id(params?, "sessionId")?;
        if restores {
            self.lost.remove(session.as_ref());
            self.held.insert(session);
            return None;
        }
        self.lost.contains(session.as_ref()).then_some(session)
    }

    /// The agent's successful result to `method`.
    pub(super) fn result(&mut self, method: &str, result: &RawValue) {
        if self.tracking
            && CREATE.contains(&method)
            && let Some(session) = session_id(result, "sessionId")
        {
            self.lost.remove(session.as_ref());
            self.held.insert(session);
        }
    }

    /// The agent was started again: every session it had is gone.
    pub(super) fn agent_restarted(&mut self) {
        let held = std::mem::take(&mut self.held);
        self.lost.extend(held);
    }
}

fn session_id(object: &RawValue, key: &str) -> Option<Box<str>> {
    let value = Members::of(object)?.get(key)?;
    decode_str(value).map(|s| s.into_owned().into_boxed_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_string()).unwrap()
    }

    fn tracking() -> LostSessions {
        let mut sessions = LostSessions::default();
        sessions.track(true);
        sessions
    }

    fn prompt(sessions: &mut LostSessions, id: &str) -> Option<Box<str>> {
        let params = raw(&format!(r#"{{"sessionId":"{id}","prompt":[]}}"#));
        sessions.request("session/prompt", Some(&params))
    }

    #[test]
    fn sessions_of_the_agent_are_lost_when_it_restarts() {
        let mut s = tracking();
        s.result("session/new", &raw(r#"{"sessionId":"a","modes":null}"#));
        s.result("session/fork", &raw(r#"{"sessionId":"b"}"#));
        assert_eq!(prompt(&mut s, "a"), None);
        s.agent_restarted();
        assert_eq!(prompt(&mut s, "a").as_deref(), Some("a"));
        assert_eq!(prompt(&mut s, "b").as_deref(), Some("b"));
        assert_eq!(
            prompt(&mut s, "c"),
            None,
            "a session it never had is its own business"
        );
        s.result("session/new", &raw(r#"{"sessionId":"c"}"#));
        assert_eq!(
            prompt(&mut s, "c"),
            None,
            "a session made after the restart is held"
        );
    }

    #[test]
    fn loading_a_lost_session_brings_it_back() {
        let mut s = tracking();
        s.result("session/new", &raw(r#"{"sessionId":"a"}"#));
        s.agent_restarted();
        let load = raw(r#"{"sessionId":"a","cwd":"/","mcpServers":[]}"#);
        assert_eq!(s.request("session/load", Some(&load)), None);
        assert_eq!(prompt(&mut s, "a"), None);
        s.agent_restarted();
        assert_eq!(prompt(&mut s, "a").as_deref(), Some("a"), "lost again");
    }

    #[test]
    fn session_ids_are_compared_decoded_and_other_methods_pass() {
        let mut s = tracking();
        s.result("session/new", &raw(r#"{"sessionId":"s\u0031"}"#));
        s.result("session/prompt", &raw(r#"{"sessionId":"x"}"#));
        s.agent_restarted();
        assert_eq!(prompt(&mut s, "s1").as_deref(), Some("s1"));
        assert_eq!(prompt(&mut s, "x"), None);
        assert_eq!(s.request("session/prompt", None), None);
        assert_eq!(s.request("session/prompt", Some(&raw("[1]"))), None);
    }

    #[test]
    fn nothing_is_kept_unless_tracking() {
        let mut s = LostSessions::default();
        s.result("session/new", &raw(r#"{"sessionId":"a"}"#));
        s.agent_restarted();
        assert_eq!(prompt(&mut s, "a"), None);
    }
}
