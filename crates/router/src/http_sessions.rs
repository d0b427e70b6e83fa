//! Which ACP session each HTTP bridge setup serves, so that its MCP servers end with the
//! session (`session/close`, or a setup the agent refused) and its calls can name the session
//! to their provider. Bookkeeping of bridge keys and session ids only; must not know how the
//! bridge serves them.

use std::collections::HashMap;

use acp_wire::RawValue;
use acp_wire::envelope::decode_str;
use acp_wire::splice::Members;

use crate::link::LinkId;

/// A session setup bridged over HTTP: its bridge key and, for `session/load` and
/// `session/resume`, the session its params name.
#[derive(Debug)]
struct Setup {
    key: String,
    session: Option<String>,
}

#[derive(Debug, Default)]
pub(crate) struct HttpSessions {
    /// The setup being routed, from its rewrite until it is sent to the agent.
    routing: Option<Setup>,
    /// Setups sent to the agent, by (its link, our id there).
    sent: HashMap<(LinkId, u64), Setup>,
    /// `session/close` requests sent to the agent, by (its link, our id there): the session.
    closing: HashMap<(LinkId, u64), String>,
    /// The bridge keys of each ACP session's setups.
    by_session: HashMap<String, Vec<String>>,
    /// The ACP session of each setup the agent accepted, by bridge key.
    by_key: HashMap<String, String>,
}

impl HttpSessions {
    /// The session setup being routed was bridged under `key`.
    pub(crate) fn routing(&mut self, key: String, params: Option<&RawValue>) {
        self.routing = Some(Setup {
            key,
            session: session_id(params),
        });
    }

    /// The setup being routed did not reach the agent: its key is to be closed.
    pub(crate) fn not_sent(&mut self) -> Option<String> {
        self.routing.take().map(|setup| setup.key)
    }

    /// A request went to the agent on `link` as our request `own`.
    pub(crate) fn sent(&mut self, link: LinkId, own: u64, method: &str, params: Option<&RawValue>) {
        if let Some(setup) = self.routing.take() {
            self.sent.insert((link, own), setup);
        } else if method == "session/close"
            && !self.by_session.is_empty()
            && let Some(session) = session_id(params)
        {
            self.closing.insert((link, own), session);
        }
    }

    /// Whether anything waits for an answer from the agent.
    pub(crate) fn awaits_answers(&self) -> bool {
        !self.sent.is_empty() || !self.closing.is_empty()
    }

    /// The agent answered our request `own` on `link` (`result` is `None` for an error): the
    /// bridge keys whose servers end now.
    pub(crate) fn answered(
        &mut self,
        link: LinkId,
        own: u64,
        result: Option<&RawValue>,
    ) -> Vec<String> {
        if let Some(setup) = self.sent.remove(&(link, own)) {
            let Some(result) = result else {
                return vec![setup.key];
            };
            if let Some(session) = session_id(Some(result)).or(setup.session) {
                self.by_key.insert(setup.key.clone(), session.clone());
                self.by_session.entry(session).or_default().push(setup.key);
            }
            return Vec::new();
        }
        match (self.closing.remove(&(link, own)), result) {
            (Some(session), Some(_)) => {
                let keys = self.by_session.remove(&session).unwrap_or_default();
                for key in &keys {
                    self.by_key.remove(key);
                }
                keys
            }
            _ => Vec::new(),
        }
    }

    /// The ACP session the setup under bridge key `key` serves, once the agent has accepted
    /// the setup.
    pub(crate) fn session_of(&self, key: &str) -> Option<&str> {
        self.by_key.get(key).map(String::as_str)
    }
}

/// The `sessionId` member of `object`, decoded.
fn session_id(object: Option<&RawValue>) -> Option<String> {
    let raw = Members::of(object?)?.get("sessionId")?;
    decode_str(raw).map(|s| s.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_string()).unwrap()
    }

    const AGENT: LinkId = LinkId(3);

    #[test]
    fn a_sessions_servers_end_when_the_agent_answers_its_close() {
        let mut s = HttpSessions::default();
        s.routing("k1".into(), Some(&raw(r#"{"cwd":"/"}"#)));
        s.sent(AGENT, 1, "session/new", None);
        assert!(
            s.answered(AGENT, 1, Some(&raw(r#"{"sessionId":"a"}"#)))
                .is_empty()
        );
        // session/load names its session in the params.
        s.routing("k2".into(), Some(&raw(r#"{"sessionId":"b","cwd":"/"}"#)));
        s.sent(AGENT, 2, "session/load", None);
        assert!(s.answered(AGENT, 2, Some(&raw("null"))).is_empty());
        s.routing("k3".into(), Some(&raw(r#"{"sessionId":"a"}"#)));
        s.sent(AGENT, 3, "session/resume", None);
        assert!(s.answered(AGENT, 3, Some(&raw("{}"))).is_empty());

        // A close the agent refuses ends nothing; one it answers ends that session's servers.
        s.sent(
            AGENT,
            4,
            "session/close",
            Some(&raw(r#"{"sessionId":"a"}"#)),
        );
        assert!(s.answered(AGENT, 4, None).is_empty());
        s.sent(
            AGENT,
            5,
            "session/close",
            Some(&raw(r#"{"sessionId":"a"}"#)),
        );
        assert_eq!(s.session_of("k1"), Some("a"));
        assert_eq!(s.session_of("k2"), Some("b"));
        assert_eq!(s.session_of("k3"), Some("a"));
        assert_eq!(s.answered(AGENT, 5, Some(&raw("{}"))), ["k1", "k3"]);
        assert_eq!(s.session_of("k1"), None);
        s.sent(
            AGENT,
            6,
            "session/close",
            Some(&raw(r#"{"sessionId":"b"}"#)),
        );
        assert_eq!(s.answered(AGENT, 6, Some(&raw("{}"))), ["k2"]);
        assert!(!s.awaits_answers());
    }

    #[test]
    fn a_refused_setup_ends_its_servers_at_once() {
        let mut s = HttpSessions::default();
        s.routing("k".into(), None);
        s.sent(AGENT, 9, "session/new", None);
        assert_eq!(s.session_of("k"), None, "not yet answered");
        assert_eq!(s.answered(AGENT, 9, None), ["k"]);
        assert_eq!(s.session_of("k"), None);
    }

    #[test]
    fn a_setup_that_was_not_sent_is_handed_back() {
        let mut s = HttpSessions::default();
        s.routing("k".into(), None);
        assert_eq!(s.not_sent().as_deref(), Some("k"));
        assert_eq!(s.not_sent(), None);
        // Nothing left to pin on the next request.
        s.sent(AGENT, 1, "session/prompt", None);
        assert!(!s.awaits_answers());
    }

    #[test]
    fn other_answers_end_nothing() {
        let mut s = HttpSessions::default();
        s.sent(
            AGENT,
            1,
            "session/close",
            Some(&raw(r#"{"sessionId":"a"}"#)),
        );
        assert!(
            !s.awaits_answers(),
            "no bridged session: a close is not even noted"
        );
        assert!(s.answered(AGENT, 1, Some(&raw("{}"))).is_empty());
    }
}
