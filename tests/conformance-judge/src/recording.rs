//! A recording as the conformance suite hands it over: JSON lines, each a line the conductor or
//! its peer wrote on a named link, read back into one [`LinkRecord`] per link. Knows no schema.
//!
//! One line of a recording:
//! `{"link": "proxy p1", "kind": "proxy", "by": "conductor", "line": "<the raw line>"}`, where
//! `kind` is a [`LinkKind::token`] and `by` is `conductor` (a line the conductor wrote, to be
//! judged) or `peer` (a line the peer sent it: the requests the conductor's responses answer).

use std::fmt;

use serde_json::Value;

use crate::links::{LinkKind, LinkRecord};

/// Why a recording could not be read, at which of its lines (from 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordingError {
    pub line_number: usize,
    pub problem: String,
}

impl fmt::Display for RecordingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "recording line {}: {}", self.line_number, self.problem)
    }
}

impl std::error::Error for RecordingError {}

/// Every link of `text`, in the order each first appears, each with its lines in order.
/// Empty lines are skipped.
pub fn read(text: &str) -> Result<Vec<LinkRecord>, RecordingError> {
    let mut links: Vec<LinkRecord> = Vec::new();
    for (index, entry) in text.lines().enumerate() {
        if entry.trim().is_empty() {
            continue;
        }
        let fail = |problem: String| RecordingError {
            line_number: index + 1,
            problem,
        };
        let entry: Value =
            serde_json::from_str(entry).map_err(|e| fail(format!("not JSON: {e}")))?;
        let field = |name: &str| {
            entry[name]
                .as_str()
                .ok_or_else(|| fail(format!("no string `{name}`")))
        };
        let (name, kind, by, line) = (field("link")?, field("kind")?, field("by")?, field("line")?);
        let kind = LinkKind::from_token(kind).ok_or_else(|| {
            let known: Vec<&str> = LinkKind::ALL.iter().map(|k| k.token()).collect();
            fail(format!("kind {kind:?} is none of {}", known.join(", ")))
        })?;
        let position = match links.iter().position(|link| link.name == name) {
            Some(position) if links[position].kind != kind => {
                return Err(fail(format!(
                    "link {name:?} had kind {} before, now {}",
                    links[position].kind.token(),
                    kind.token()
                )));
            }
            Some(position) => position,
            None => {
                links.push(LinkRecord::new(name, kind, Vec::new(), Vec::new()));
                links.len() - 1
            }
        };
        let link = &mut links[position];
        match by {
            "conductor" => link.written.push(line.to_string()),
            "peer" => link.peer_sent.push(line.to_string()),
            other => {
                return Err(fail(format!(
                    "`by` is {other:?}, not \"conductor\" or \"peer\""
                )));
            }
        }
    }
    Ok(links)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_lines_by_link_in_order() {
        let text = concat!(
            r#"{"link":"editor","kind":"editor","by":"peer","line":"a"}"#,
            "\n",
            r#"{"link":"proxy p","kind":"proxy","by":"conductor","line":"b"}"#,
            "\n\n",
            r#"{"link":"editor","kind":"editor","by":"conductor","line":"c"}"#,
            "\n",
            r#"{"link":"editor","kind":"editor","by":"conductor","line":"d"}"#,
            "\n",
        );
        let links = read(text).expect("a readable recording");
        let summary: Vec<_> = links
            .iter()
            .map(|l| {
                (
                    l.name.as_str(),
                    l.kind,
                    l.written.clone(),
                    l.peer_sent.clone(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                (
                    "editor",
                    LinkKind::Editor,
                    vec!["c".to_string(), "d".to_string()],
                    vec!["a".to_string()]
                ),
                ("proxy p", LinkKind::Proxy, vec!["b".to_string()], vec![]),
            ]
        );
    }

    #[test]
    fn refuses_what_is_not_a_recording() {
        let error = |text: &str| read(text).expect_err(text);
        assert_eq!(error("{").line_number, 1);
        let second = concat!(
            r#"{"link":"a","kind":"agent","by":"peer","line":"x"}"#,
            "\n",
            r#"{"link":"a","kind":"agent","by":"editor","line":"x"}"#
        );
        assert_eq!(error(second).line_number, 2);
        assert!(
            error(r#"{"link":"a","kind":"client","by":"peer","line":"x"}"#)
                .problem
                .contains("client")
        );
        assert!(
            error(r#"{"link":"a","kind":"agent","by":"peer"}"#)
                .problem
                .contains("`line`")
        );
        let changed = concat!(
            r#"{"link":"a","kind":"agent","by":"peer","line":"x"}"#,
            "\n",
            r#"{"link":"a","kind":"proxy","by":"peer","line":"x"}"#
        );
        assert!(error(changed).problem.contains("had kind agent"));
    }
}
