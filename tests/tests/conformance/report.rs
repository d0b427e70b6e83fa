//! A scenario's verdicts: the failures, each with its link, line and serde error; the count of
//! lines judged per link kind; and the check that the scenario reached every path it claims.

use std::collections::BTreeMap;

use super::judge::{Judged, judge_link};
use super::legacy::Legacy;
use super::links::{LinkKind, LinkRecord};

pub struct Report {
    pub judged: Vec<Judged>,
}

impl Report {
    /// Judges every line of every link.
    pub fn of(links: &[LinkRecord]) -> Self {
        Self {
            judged: links.iter().flat_map(judge_link).collect(),
        }
    }

    pub fn failures(&self) -> Vec<&Judged> {
        self.judged.iter().filter(|j| j.verdict.is_err()).collect()
    }

    /// Lines judged per link kind.
    pub fn counts(&self) -> BTreeMap<LinkKind, usize> {
        let mut counts = BTreeMap::new();
        for judged in &self.judged {
            *counts.entry(judged.kind).or_insert(0) += 1;
        }
        counts
    }

    /// Lines let through by each legacy allow-list entry.
    pub fn legacy_counts(&self) -> BTreeMap<Legacy, usize> {
        let mut counts = BTreeMap::new();
        for legacy in self.judged.iter().filter_map(|j| j.legacy) {
            *counts.entry(legacy).or_insert(0) += 1;
        }
        counts
    }

    /// Prints the counts (shown with `--nocapture`), then panics listing every line the
    /// schema rejected.
    pub fn assert_conformant(&self, scenario: &str) {
        let counts: Vec<String> = self
            .counts()
            .iter()
            .map(|(kind, n)| format!("{kind}: {n}"))
            .collect();
        let legacy: Vec<String> = self
            .legacy_counts()
            .iter()
            .map(|(form, n)| format!("{}: {n}", form.name()))
            .collect();
        println!(
            "conformance {scenario}: {} lines judged ({}); legacy forms: {}",
            self.judged.len(),
            counts.join(", "),
            if legacy.is_empty() {
                "none".to_string()
            } else {
                legacy.join(", ")
            }
        );
        let failures = self.failures();
        if failures.is_empty() {
            return;
        }
        let listed: Vec<String> = failures
            .iter()
            .map(|f| {
                format!(
                    "  link: {} ({})\n  what: {}\n  line: {}\n  error: {}\n",
                    f.link,
                    f.kind,
                    f.what,
                    f.line,
                    f.verdict.as_ref().err().map_or("", String::as_str)
                )
            })
            .collect();
        panic!(
            "{scenario}: the schema rejected {} of {} lines the conductor wrote:\n{}",
            failures.len(),
            self.judged.len(),
            listed.join("\n")
        );
    }

    /// Whether some line judged on a link of `kind` is described by text containing `what`.
    pub fn judged_any(&self, kind: LinkKind, what: &str) -> bool {
        self.judged
            .iter()
            .any(|j| j.kind == kind && j.what.contains(what))
    }

    /// Panics if any judged line, on any link, is described by text containing one of `what`.
    pub fn assert_never(&self, what: &[&str]) {
        let found: Vec<String> = self
            .judged
            .iter()
            .filter(|j| what.iter().any(|w| j.what.contains(w)))
            .map(|j| format!("{}: {}", j.kind, j.what))
            .collect();
        assert!(
            found.is_empty(),
            "the conductor wrote:\n  {}",
            found.join("\n  ")
        );
    }

    /// Panics unless, for each `(kind, what)`, some line judged on a link of that kind is
    /// described by text containing `what`: the scenario reached that path.
    pub fn assert_covers<S: AsRef<str>>(&self, expected: &[(LinkKind, S)]) {
        let missing: Vec<String> = expected
            .iter()
            .filter(|(kind, what)| {
                !self
                    .judged
                    .iter()
                    .any(|j| j.kind == *kind && j.what.contains(what.as_ref()))
            })
            .map(|(kind, what)| format!("{kind}: {}", what.as_ref()))
            .collect();
        if !missing.is_empty() {
            let mut seen: Vec<String> = self
                .judged
                .iter()
                .map(|j| format!("{}: {}", j.kind, j.what))
                .collect();
            seen.sort();
            seen.dedup();
            panic!(
                "the scenario never reached:\n  {}\nwhat it judged:\n  {}",
                missing.join("\n  "),
                seen.join("\n  ")
            );
        }
    }
}
