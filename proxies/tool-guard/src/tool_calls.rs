//! What the agent has said about each open tool call (kind, title, locations), so a permission
//! request naming only a `toolCallId` is judged on the full picture. Knows `session/update` only.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::policy::ToolCallFacts;

/// The tool-call fields of a `tool_call` / `tool_call_update`, or of a permission request's
/// `toolCall`. Absent fields leave what is known unchanged.
#[derive(Debug, Default, Deserialize)]
pub struct ToolCallFields {
    #[serde(rename = "toolCallId")]
    pub tool_call_id: Option<String>,
    pub kind: Option<String>,
    pub title: Option<String>,
    pub locations: Option<Vec<Location>>,
    pub status: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct Location {
    pub path: PathBuf,
}

#[derive(Deserialize)]
struct SessionUpdate {
    #[serde(rename = "sessionId")]
    session_id: String,
    update: Update,
}

#[derive(Deserialize)]
struct Update {
    #[serde(rename = "sessionUpdate")]
    kind: String,
    #[serde(flatten)]
    fields: ToolCallFields,
}

/// Open tool calls by (session id, tool call id).
#[derive(Debug, Default)]
pub struct ToolCalls {
    open: HashMap<(String, String), ToolCallFacts>,
}

impl ToolCalls {
    /// Learns from a `session/update`'s params; other updates are ignored. A call that
    /// reaches `completed` or `failed` is forgotten.
    pub fn observe(&mut self, params: &str) {
        let Ok(SessionUpdate { session_id, update }) =
            serde_json::from_str::<SessionUpdate>(params)
        else {
            return;
        };
        if !matches!(update.kind.as_str(), "tool_call" | "tool_call_update") {
            return;
        }
        let Some(id) = update.fields.tool_call_id.clone() else {
            return;
        };
        let key = (session_id, id);
        if matches!(
            update.fields.status.as_deref(),
            Some("completed" | "failed")
        ) {
            self.open.remove(&key);
            return;
        }
        let facts = self.open.entry(key).or_default();
        merge(facts, update.fields);
    }

    /// The facts for a permission request: what the request says, over what was reported
    /// before. Relative locations are resolved against `cwd`; without one they cannot be
    /// judged, and the facts say so.
    pub fn facts(
        &self,
        session_id: &str,
        request: ToolCallFields,
        cwd: Option<&Path>,
    ) -> ToolCallFacts {
        let known = request
            .tool_call_id
            .as_ref()
            .and_then(|id| self.open.get(&(session_id.to_string(), id.clone())));
        let mut facts = known.cloned().unwrap_or_default();
        merge(&mut facts, request);
        let resolved: Vec<PathBuf> = facts
            .locations
            .iter()
            .filter_map(|p| absolute(p, cwd))
            .collect();
        facts.unresolved_locations = resolved.len() < facts.locations.len();
        facts.locations = resolved;
        facts
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.open.len()
    }
}

fn merge(facts: &mut ToolCallFacts, fields: ToolCallFields) {
    if let Some(kind) = fields.kind {
        facts.kind = Some(kind);
    }
    if let Some(title) = fields.title {
        facts.title = Some(title);
    }
    if let Some(locations) = fields.locations {
        facts.locations = locations.into_iter().map(|l| l.path).collect();
    }
}

/// `path` absolute and normalized, if that can be known.
pub fn absolute(path: &Path, cwd: Option<&Path>) -> Option<PathBuf> {
    if path.is_absolute() {
        Some(proxy_kit::path::normalize(path))
    } else {
        cwd.map(|cwd| proxy_kit::path::resolve(cwd, path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(json: &str) -> ToolCallFields {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn permission_facts_combine_earlier_updates_with_the_request() {
        let mut calls = ToolCalls::default();
        calls.observe(r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Edit main.rs","kind":"edit","status":"pending","locations":[{"path":"/p/src/main.rs","line":3}]}}"#);
        calls.observe(r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"Edit main.rs and lib.rs","locations":[{"path":"/p/src/main.rs"},{"path":"/p/src/../src/lib.rs"}]}}"#);
        calls.observe(r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}"#);
        let facts = calls.facts("s", fields(r#"{"toolCallId":"c1"}"#), None);
        assert_eq!(
            facts,
            ToolCallFacts {
                kind: Some("edit".into()),
                title: Some("Edit main.rs and lib.rs".into()),
                locations: vec!["/p/src/main.rs".into(), "/p/src/lib.rs".into()],
                unresolved_locations: false,
            }
        );
        let overridden = calls.facts(
            "s",
            fields(r#"{"toolCallId":"c1","kind":"delete","locations":[]}"#),
            None,
        );
        assert_eq!(overridden.kind.as_deref(), Some("delete"));
        assert!(overridden.locations.is_empty());
        assert_eq!(
            calls.facts("other-session", fields(r#"{"toolCallId":"c1"}"#), None),
            ToolCallFacts::default()
        );
    }

    #[test]
    fn finished_calls_are_forgotten() {
        let mut calls = ToolCalls::default();
        calls.observe(r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"a","title":"A"}}"#);
        calls.observe(r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"b","title":"B"}}"#);
        assert_eq!(calls.len(), 2);
        calls.observe(r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"a","status":"completed"}}"#);
        calls.observe(r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"b","status":"failed"}}"#);
        assert_eq!(calls.len(), 0);
    }

    #[test]
    fn relative_locations_need_a_cwd() {
        let calls = ToolCalls::default();
        let request = || {
            fields(r#"{"toolCallId":"x","locations":[{"path":"src/a.rs"},{"path":"/abs/b.rs"}]}"#)
        };
        assert_eq!(
            calls.facts("s", request(), Some(Path::new("/p"))).locations,
            [PathBuf::from("/p/src/a.rs"), PathBuf::from("/abs/b.rs")]
        );
        let without_cwd = calls.facts("s", request(), None);
        assert_eq!(without_cwd.locations, [PathBuf::from("/abs/b.rs")]);
        assert!(without_cwd.unresolved_locations);
    }

    #[test]
    fn unreadable_updates_are_ignored() {
        let mut calls = ToolCalls::default();
        calls.observe("not json");
        calls.observe(r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call"}}"#);
        calls.observe(r#"{"update":{"sessionUpdate":"tool_call","toolCallId":"a"}}"#);
        assert_eq!(calls.len(), 0);
    }
}
