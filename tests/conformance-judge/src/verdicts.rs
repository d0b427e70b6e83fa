//! What the judge tells: one JSON line per verdict, for the suite to check what a scenario
//! reached, and for people the counts and every refused line with its context. Judges nothing.
//!
//! A verdict line: `{"link", "kind", "number", "what", "legacy", "line", "error"}`, where
//! `kind` is a [`LinkKind::token`], `number` counts the lines the conductor wrote on the link
//! from 1, `legacy` is the [`Legacy::name`] of the excused form the line is (or `null`), and
//! `error` why the schema refused the line (`null` when it did not).

use std::collections::BTreeMap;

use serde_json::json;

use crate::judge::Judged;
use crate::legacy::Legacy;
use crate::links::LinkKind;

/// `judged` as one line of JSON.
pub fn verdict_line(judged: &Judged) -> String {
    let verdict = json!({
        "link": judged.link,
        "kind": judged.kind.token(),
        "number": judged.number,
        "what": judged.what,
        "legacy": judged.legacy.map(Legacy::name),
        "line": judged.line,
        "error": judged.verdict.as_ref().err(),
    });
    verdict.to_string()
}

/// The lines judged per kind of link and per excused legacy form, on one line.
pub fn summary(judged: &[Judged]) -> String {
    let mut kinds: BTreeMap<LinkKind, usize> = BTreeMap::new();
    let mut forms: BTreeMap<Legacy, usize> = BTreeMap::new();
    for j in judged {
        *kinds.entry(j.kind).or_default() += 1;
        if let Some(form) = j.legacy {
            *forms.entry(form).or_default() += 1;
        }
    }
    let kinds: Vec<String> = kinds
        .iter()
        .map(|(kind, n)| format!("{kind}: {n}"))
        .collect();
    let forms: Vec<String> = forms
        .iter()
        .map(|(form, n)| format!("{}: {n}", form.name()))
        .collect();
    format!(
        "{} lines judged ({}); legacy forms: {}; refused: {}",
        judged.len(),
        kinds.join(", "),
        if forms.is_empty() {
            "none".to_string()
        } else {
            forms.join(", ")
        },
        judged.iter().filter(|j| j.verdict.is_err()).count()
    )
}

/// Every refused line: its link, its place there, what it is, the line and the serde error.
pub fn refusals(judged: &[Judged]) -> String {
    judged
        .iter()
        .filter_map(|j| {
            let error = j.verdict.as_ref().err()?;
            Some(format!(
                "  link: {} ({}), line {} the conductor wrote there\n  what: {}\n  line: {}\n  error: {}\n",
                j.link, j.kind, j.number, j.what, j.line, error
            ))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::judge::judge_link;
    use crate::links::LinkRecord;

    #[test]
    fn a_verdict_line_carries_the_refusal() {
        let record = LinkRecord::new(
            "editor",
            LinkKind::Editor,
            vec![
                r#"{"jsonrpc":"2.0","method":"_x/y","params":{}}"#.to_string(),
                r#"{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"plan","entries":[]}}}"#.to_string(),
            ],
            Vec::new(),
        );
        let judged = judge_link(&record);
        let lines: Vec<Value> = judged
            .iter()
            .map(|j| serde_json::from_str(&verdict_line(j)).expect("JSON"))
            .collect();
        assert_eq!(lines[0]["error"], Value::Null, "{}", lines[0]);
        assert_eq!(lines[0]["number"], 1);
        assert_eq!(lines[1]["number"], 2);
        assert_eq!(lines[1]["kind"], "editor");
        assert_eq!(lines[1]["what"], "notification session/update plan");
        let error = lines[1]["error"].as_str().expect("an error");
        assert!(error.contains("sessionId"), "{error}");
        let refusals = refusals(&judged);
        assert!(
            refusals.contains("link: editor (editor), line 2"),
            "{refusals}"
        );
        assert!(
            summary(&judged).ends_with("refused: 1"),
            "{}",
            summary(&judged)
        );
    }
}
