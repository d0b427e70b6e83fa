//! A scenario's verdicts: the failures, each with its link, line and serde error; the count of
//! lines judged per link kind; and the check that the scenario reached every path it claims.

use std::collections::BTreeMap;
use std::process::ExitStatus;

use super::judge::{self, Judged};
use super::links::{LinkKind, LinkRecord};

pub struct Report {
    pub judged: Vec<Judged>,
    /// The judge's exit status: success only when the schema refused no line.
    judge_status: ExitStatus,
    /// What the judge told on its standard error: the counts and every refused line.
    judge_told: String,
}

impl Report {
    /// Has the judge judge every line of every link.
    pub fn of(links: &[LinkRecord]) -> Self {
        let verdicts = judge::run(links);
        Self {
            judged: verdicts.judged,
            judge_status: verdicts.status,
            judge_told: verdicts.told,
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

    /// Lines let through by each legacy allow-list entry, by the entry's name.
    pub fn legacy_counts(&self) -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        for legacy in self.judged.iter().filter_map(|j| j.legacy.clone()) {
            *counts.entry(legacy).or_insert(0) += 1;
        }
        counts
    }

    /// Prints the judge's counts (shown with `--nocapture`), then panics listing every line
    /// the schema rejected if the judge failed the run.
    pub fn assert_conformant(&self, scenario: &str) {
        let summary = self
            .judge_told
            .lines()
            .next()
            .unwrap_or("the judge told nothing");
        println!("conformance {scenario}: {summary}");
        let failures = self.failures();
        if failures.is_empty() && self.judge_status.success() {
            return;
        }
        // The judge's standard error lists every refused line: its link, its place there,
        // what it is, the line and the serde error.
        panic!(
            "{scenario}: the schema rejected {} of {} lines the conductor wrote (the judge: {}):\n{}",
            failures.len(),
            self.judged.len(),
            self.judge_status,
            self.judge_told
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
