//! The guard's policy: the TOML file's shape, its validation, and every decision it makes
//! (permission, file access, commands, redaction). Pure: no messages, no I/O.

use std::borrow::Cow;
use std::fmt;
use std::path::Path;

use regex::Regex;
use serde::Deserialize;

use crate::glob::{Glob, GlobError, escape};

/// The only variable a path pattern may use: the session's working directory.
const CWD_VARIABLE: &str = "${cwd}";
pub const DEFAULT_REPLACEMENT: &str = "[REDACTED]";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    #[serde(default)]
    permission: Vec<PermissionRuleFile>,
    #[serde(default)]
    fs: FsFile,
    #[serde(default)]
    terminal: TerminalFile,
    #[serde(default)]
    redact: RedactFile,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PermissionRuleFile {
    name: Option<String>,
    kind: Option<Vec<ToolKind>>,
    title: Option<String>,
    paths: Option<Vec<String>>,
    decision: Decision,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FsFile {
    read: Option<Vec<String>>,
    write: Option<Vec<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct TerminalFile {
    allow: Option<Vec<String>>,
    #[serde(default)]
    deny: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RedactFile {
    #[serde(default)]
    patterns: Vec<String>,
    replacement: Option<String>,
}

/// ACP's tool kinds. Unknown names in a policy are errors, so a typo cannot silently make a
/// rule match nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolKind {
    Read,
    Edit,
    Delete,
    Move,
    Search,
    Execute,
    Think,
    Fetch,
    Other,
}

impl ToolKind {
    /// The kind a tool call reports; absent or unknown kinds count as `other`, as ACP says.
    pub fn of(kind: Option<&str>) -> ToolKind {
        match kind {
            Some("read") => ToolKind::Read,
            Some("edit") => ToolKind::Edit,
            Some("delete") => ToolKind::Delete,
            Some("move") => ToolKind::Move,
            Some("search") => ToolKind::Search,
            Some("execute") => ToolKind::Execute,
            Some("think") => ToolKind::Think,
            Some("fetch") => ToolKind::Fetch,
            _ => ToolKind::Other,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Answer the agent with an allow option; the user is not asked.
    Allow,
    /// Answer the agent with a reject option; the user is not asked.
    Deny,
    /// Let the editor ask the user (stops the search, so a later broader rule cannot apply).
    Ask,
}

/// A policy that could not be loaded, with the place it went wrong.
#[derive(Debug)]
pub struct PolicyError(String);

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PolicyError {}

/// Path patterns under one name (`fs.write`, `permission #2 paths`): a path is inside when it
/// matches an include pattern and no `!`-prefixed exclude pattern.
#[derive(Debug, Clone)]
pub struct PathSet {
    rule: String,
    patterns: Vec<PathPattern>,
}

#[derive(Debug, Clone)]
struct PathPattern {
    /// As written, `${cwd}` unexpanded.
    text: String,
    exclude: bool,
}

/// Why a path is or is not in a [`PathSet`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathVerdict {
    Inside { pattern: String },
    Excluded { pattern: String },
    NotListed,
}

impl PathSet {
    fn new(rule: String, patterns: &[String]) -> Result<PathSet, PolicyError> {
        let patterns = patterns
            .iter()
            .map(|p| {
                let (exclude, text) = match p.strip_prefix('!') {
                    Some(rest) => (true, rest),
                    None => (false, p.as_str()),
                };
                let pattern = PathPattern {
                    text: text.to_string(),
                    exclude,
                };
                // Checks the syntax now, with a stand-in cwd, so a bad pattern fails at start.
                pattern
                    .compile(Some(Path::new("/cwd")))
                    .map_err(|e| PolicyError(format!("{rule}: {e}")))?;
                Ok(pattern)
            })
            .collect::<Result<Vec<_>, PolicyError>>()?;
        Ok(PathSet { rule, patterns })
    }

    pub fn rule(&self) -> &str {
        &self.rule
    }

    /// `path` must be absolute and normalized. Patterns using `${cwd}` are skipped when the
    /// session's cwd is unknown.
    pub fn check(&self, path: &Path, cwd: Option<&Path>) -> PathVerdict {
        let subject = path.to_string_lossy();
        let mut inside = None;
        for pattern in &self.patterns {
            let Ok(Some(glob)) = pattern.compile(cwd) else {
                continue;
            };
            if !glob.matches(&subject) {
                continue;
            }
            let shown = pattern.shown();
            if pattern.exclude {
                return PathVerdict::Excluded { pattern: shown };
            }
            inside.get_or_insert(shown);
        }
        match inside {
            Some(pattern) => PathVerdict::Inside { pattern },
            None => PathVerdict::NotListed,
        }
    }
}

impl PathPattern {
    /// The glob for this pattern in a session; `Ok(None)` when it needs an unknown cwd.
    fn compile(&self, cwd: Option<&Path>) -> Result<Option<Glob>, PolicyError> {
        let expanded: Cow<'_, str> = if self.text.contains(CWD_VARIABLE) {
            let Some(cwd) = cwd else {
                return Ok(None);
            };
            let cwd = proxy_kit::path::normalize(cwd);
            let cwd = cwd.to_string_lossy();
            let cwd = cwd.trim_end_matches('/');
            Cow::Owned(self.text.replace(CWD_VARIABLE, &escape(cwd)))
        } else {
            Cow::Borrowed(&self.text)
        };
        if let Some(start) = expanded.find("${") {
            let end = expanded[start..]
                .find('}')
                .map_or(expanded.len(), |e| start + e + 1);
            return Err(PolicyError(format!(
                "unknown variable `{}` in {:?} (only ${{cwd}} is defined)",
                &expanded[start..end],
                self.text
            )));
        }
        if !expanded.starts_with('/') && !expanded.starts_with("**") {
            return Err(PolicyError(format!(
                "path pattern {:?} must be absolute (start with `/`, `${{cwd}}` or `**`)",
                self.text
            )));
        }
        Glob::path(&expanded).map(Some).map_err(|GlobError { .. }| {
            PolicyError(format!(
                "path pattern {:?} ends with a lone `\\`",
                self.text
            ))
        })
    }

    fn shown(&self) -> String {
        if self.exclude {
            format!("!{}", self.text)
        } else {
            self.text.clone()
        }
    }
}

#[derive(Debug)]
pub struct PermissionRule {
    /// `permission #N` (1-based, file order), with the rule's `name` when it has one.
    pub label: String,
    kinds: Option<Vec<ToolKind>>,
    title: Option<Glob>,
    paths: Option<PathSet>,
    pub decision: Decision,
}

/// What is known about the tool call a permission request is for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolCallFacts {
    pub kind: Option<String>,
    pub title: Option<String>,
    /// Absolute, normalized paths of the tool call's `locations`.
    pub locations: Vec<std::path::PathBuf>,
    /// Some locations were relative with no cwd to resolve them: no `paths` rule can vouch
    /// for (or against) them.
    pub unresolved_locations: bool,
}

impl PermissionRule {
    fn matches(&self, call: &ToolCallFacts, cwd: Option<&Path>) -> bool {
        if let Some(kinds) = &self.kinds
            && !kinds.contains(&ToolKind::of(call.kind.as_deref()))
        {
            return false;
        }
        if let Some(title) = &self.title
            && !title.matches(call.title.as_deref().unwrap_or(""))
        {
            return false;
        }
        match &self.paths {
            None => true,
            // A rule about paths says nothing about a call that names none (or names some
            // that cannot be placed).
            Some(_) if call.locations.is_empty() || call.unresolved_locations => false,
            Some(paths) => call
                .locations
                .iter()
                .all(|l| matches!(paths.check(l, cwd), PathVerdict::Inside { .. })),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// A decision about an fs or terminal request, with the rule that made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow { rule: String },
    Deny { rule: String },
}

#[derive(Debug)]
pub struct Redaction {
    pub label: String,
    regex: Regex,
}

#[derive(Debug)]
pub struct Policy {
    pub permissions: Vec<PermissionRule>,
    fs_read: Option<PathSet>,
    fs_write: Option<PathSet>,
    terminal_allow: Option<Vec<Glob>>,
    terminal_deny: Vec<Glob>,
    pub redactions: Vec<Redaction>,
    pub replacement: String,
}

impl Policy {
    /// Parses and validates a policy; every pattern is checked here, not on first use.
    pub fn from_toml(text: &str) -> Result<Policy, PolicyError> {
        let file: PolicyFile = toml::from_str(text).map_err(|e| PolicyError(e.to_string()))?;
        let permissions = file
            .permission
            .into_iter()
            .enumerate()
            .map(|(i, rule)| {
                let label = match &rule.name {
                    Some(name) => format!("permission #{} ({name})", i + 1),
                    None => format!("permission #{}", i + 1),
                };
                let title = rule
                    .title
                    .as_deref()
                    .map(Glob::text)
                    .transpose()
                    .map_err(|e| PolicyError(format!("{label}: title {e}")))?;
                let paths = rule
                    .paths
                    .as_deref()
                    .map(|p| PathSet::new(format!("{label} paths"), p))
                    .transpose()?;
                Ok(PermissionRule {
                    label,
                    kinds: rule.kind,
                    title,
                    paths,
                    decision: rule.decision,
                })
            })
            .collect::<Result<Vec<_>, PolicyError>>()?;
        let fs_read = file
            .fs
            .read
            .as_deref()
            .map(|p| PathSet::new("fs.read".into(), p))
            .transpose()?;
        let fs_write = file
            .fs
            .write
            .as_deref()
            .map(|p| PathSet::new("fs.write".into(), p))
            .transpose()?;
        let text_globs = |rule: &str, patterns: &[String]| {
            patterns
                .iter()
                .map(|p| Glob::text(p).map_err(|e| PolicyError(format!("{rule}: {e}"))))
                .collect::<Result<Vec<_>, PolicyError>>()
        };
        let terminal_allow = file
            .terminal
            .allow
            .as_deref()
            .map(|p| text_globs("terminal.allow", p))
            .transpose()?;
        let terminal_deny = text_globs("terminal.deny", &file.terminal.deny)?;
        let redactions = file
            .redact
            .patterns
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let label = format!("redact.patterns[{i}]");
                Regex::new(p)
                    .map(|regex| Redaction {
                        label: label.clone(),
                        regex,
                    })
                    .map_err(|e| PolicyError(format!("{label}: {e}")))
            })
            .collect::<Result<Vec<_>, PolicyError>>()?;
        Ok(Policy {
            permissions,
            fs_read,
            fs_write,
            terminal_allow,
            terminal_deny,
            redactions,
            replacement: file
                .redact
                .replacement
                .unwrap_or_else(|| DEFAULT_REPLACEMENT.to_string()),
        })
    }

    /// The first permission rule matching `call`; `None` leaves the choice to the user.
    pub fn permission(&self, call: &ToolCallFacts, cwd: Option<&Path>) -> Option<&PermissionRule> {
        self.permissions.iter().find(|rule| rule.matches(call, cwd))
    }

    /// Whether the agent may read or write `path` (absolute, normalized) through the editor.
    pub fn file_access(&self, access: Access, path: &Path, cwd: Option<&Path>) -> Verdict {
        let (set, name) = match access {
            Access::Read => (&self.fs_read, "fs.read"),
            Access::Write => (&self.fs_write, "fs.write"),
        };
        let Some(set) = set else {
            return Verdict::Allow {
                rule: format!("no {name} rule"),
            };
        };
        match set.check(path, cwd) {
            PathVerdict::Inside { pattern } => Verdict::Allow {
                rule: format!("{} {pattern:?}", set.rule()),
            },
            PathVerdict::Excluded { pattern } => Verdict::Deny {
                rule: format!("{} {pattern:?}", set.rule()),
            },
            PathVerdict::NotListed => Verdict::Deny {
                rule: format!("{} (matches no allowed pattern)", set.rule()),
            },
        }
    }

    /// Whether the agent may start `command_line` (command and arguments joined by spaces).
    pub fn command(&self, command_line: &str) -> Verdict {
        if let Some(glob) = self.terminal_deny.iter().find(|g| g.matches(command_line)) {
            return Verdict::Deny {
                rule: format!("terminal.deny {:?}", glob.as_str()),
            };
        }
        match &self.terminal_allow {
            None => Verdict::Allow {
                rule: "no terminal.deny pattern matches".into(),
            },
            Some(allow) => match allow.iter().find(|g| g.matches(command_line)) {
                Some(glob) => Verdict::Allow {
                    rule: format!("terminal.allow {:?}", glob.as_str()),
                },
                None => Verdict::Deny {
                    rule: "terminal.allow (matches no allowed pattern)".into(),
                },
            },
        }
    }

    /// `text` with every match of every redaction pattern replaced, and the labels of the
    /// patterns that matched; `None` when nothing matched.
    pub fn redact(&self, text: &str) -> Option<(String, Vec<&str>)> {
        let mut current = Cow::Borrowed(text);
        let mut hits = Vec::new();
        for redaction in &self.redactions {
            if let Cow::Owned(replaced) = redaction
                .regex
                .replace_all(&current, regex::NoExpand(&self.replacement))
            {
                current = Cow::Owned(replaced);
                hits.push(redaction.label.as_str());
            }
        }
        match current {
            Cow::Owned(text) => Some((text, hits)),
            Cow::Borrowed(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    const POLICY: &str = r#"
        [[permission]]
        name = "git internals"
        paths = ["${cwd}/.git/**"]
        decision = "deny"

        [[permission]]
        name = "read in project"
        kind = ["read", "search"]
        paths = ["${cwd}/**"]
        decision = "allow"

        [[permission]]
        title = "Run tests*"
        kind = ["execute"]
        decision = "allow"

        [[permission]]
        kind = ["delete"]
        decision = "ask"

        [[permission]]
        title = "*"
        decision = "deny"

        [fs]
        read = ["${cwd}/**", "/usr/share/**"]
        write = ["${cwd}/**", "!${cwd}/.git/**", "!**/.env"]

        [terminal]
        deny = ["rm -rf *", "*git push*"]

        [redact]
        patterns = ["sk-[A-Za-z0-9]{20,}", "AKIA[0-9A-Z]{16}"]
    "#;

    fn policy() -> Policy {
        Policy::from_toml(POLICY).unwrap()
    }

    fn call(kind: Option<&str>, title: Option<&str>, locations: &[&str]) -> ToolCallFacts {
        ToolCallFacts {
            kind: kind.map(Into::into),
            title: title.map(Into::into),
            locations: locations.iter().map(PathBuf::from).collect(),
            unresolved_locations: false,
        }
    }

    fn decide(call: &ToolCallFacts, cwd: Option<&str>) -> Option<(String, Decision)> {
        let p = policy();
        p.permission(call, cwd.map(Path::new))
            .map(|r| (r.label.clone(), r.decision))
    }

    const CWD: Option<&str> = Some("/work/proj");

    #[test]
    fn first_matching_permission_rule_wins() {
        assert_eq!(
            decide(
                &call(
                    Some("read"),
                    Some("Read .git/config"),
                    &["/work/proj/.git/config"]
                ),
                CWD
            ),
            Some(("permission #1 (git internals)".into(), Decision::Deny))
        );
        assert_eq!(
            decide(
                &call(
                    Some("read"),
                    Some("Read main.rs"),
                    &["/work/proj/src/main.rs"]
                ),
                CWD
            ),
            Some(("permission #2 (read in project)".into(), Decision::Allow))
        );
        assert_eq!(
            decide(&call(Some("execute"), Some("Run tests in crate"), &[]), CWD),
            Some(("permission #3".into(), Decision::Allow))
        );
        assert_eq!(
            decide(
                &call(Some("delete"), Some("Delete x"), &["/work/proj/x"]),
                CWD
            ),
            Some(("permission #4".into(), Decision::Ask))
        );
    }

    #[test]
    fn every_location_must_be_inside_a_paths_rule() {
        let mixed = call(Some("read"), Some("Read"), &["/work/proj/a", "/etc/passwd"]);
        assert_eq!(decide(&mixed, CWD).unwrap().0, "permission #5");
        let none = call(Some("search"), Some("Search"), &[]);
        assert_eq!(decide(&none, CWD).unwrap().0, "permission #5");
        let mut unplaced = call(Some("read"), Some("Read"), &["/work/proj/a"]);
        unplaced.unresolved_locations = true;
        assert_eq!(decide(&unplaced, CWD).unwrap().0, "permission #5");
    }

    #[test]
    fn cwd_patterns_do_not_match_in_an_unknown_session() {
        let read = call(
            Some("read"),
            Some("Read main.rs"),
            &["/work/proj/src/main.rs"],
        );
        assert_eq!(decide(&read, None).unwrap().0, "permission #5");
    }

    #[test]
    fn missing_kind_counts_as_other_and_missing_title_as_empty() {
        let p = Policy::from_toml(
            r#"
            [[permission]]
            kind = ["other"]
            title = ""
            decision = "allow"
        "#,
        )
        .unwrap();
        assert!(p.permission(&call(None, None, &[]), None).is_some());
        assert!(
            p.permission(&call(Some("made-up"), None, &[]), None)
                .is_some()
        );
        assert!(p.permission(&call(Some("read"), None, &[]), None).is_none());
        assert!(p.permission(&call(None, Some("x"), &[]), None).is_none());
    }

    #[test]
    fn no_rules_means_the_user_decides() {
        let p = Policy::from_toml("").unwrap();
        assert!(
            p.permission(&call(Some("edit"), Some("Edit"), &["/a"]), None)
                .is_none()
        );
        assert_eq!(
            p.file_access(Access::Write, Path::new("/etc/passwd"), None),
            Verdict::Allow {
                rule: "no fs.write rule".into()
            }
        );
        assert_eq!(
            p.command("rm -rf /"),
            Verdict::Allow {
                rule: "no terminal.deny pattern matches".into()
            }
        );
        assert!(p.redact("sk-aaaaaaaaaaaaaaaaaaaaaaaa").is_none());
    }

    #[test]
    fn file_access_follows_include_and_exclude_patterns() {
        let p = policy();
        let cwd = Some(Path::new("/work/proj"));
        let check = |access, path: &str| p.file_access(access, Path::new(path), cwd);
        assert_eq!(
            check(Access::Write, "/work/proj/src/lib.rs"),
            Verdict::Allow {
                rule: r#"fs.write "${cwd}/**""#.into()
            }
        );
        assert_eq!(
            check(Access::Write, "/work/proj/.git/config"),
            Verdict::Deny {
                rule: r#"fs.write "!${cwd}/.git/**""#.into()
            }
        );
        assert_eq!(
            check(Access::Write, "/work/proj/app/.env"),
            Verdict::Deny {
                rule: r#"fs.write "!**/.env""#.into()
            }
        );
        assert_eq!(
            check(Access::Write, "/etc/passwd"),
            Verdict::Deny {
                rule: "fs.write (matches no allowed pattern)".into()
            }
        );
        assert_eq!(
            check(Access::Read, "/usr/share/dict/words"),
            Verdict::Allow {
                rule: r#"fs.read "/usr/share/**""#.into()
            }
        );
        assert_eq!(
            check(Access::Read, "/work/projector/x"),
            Verdict::Deny {
                rule: "fs.read (matches no allowed pattern)".into()
            }
        );
    }

    #[test]
    fn cwd_with_wildcard_characters_is_taken_literally() {
        let p = policy();
        let cwd = Some(Path::new("/home/*/p"));
        assert!(matches!(
            p.file_access(Access::Read, Path::new("/home/*/p/a"), cwd),
            Verdict::Allow { .. }
        ));
        assert!(matches!(
            p.file_access(Access::Read, Path::new("/home/x/p/a"), cwd),
            Verdict::Deny { .. }
        ));
        let trailing = Some(Path::new("/work/proj/"));
        assert!(matches!(
            p.file_access(Access::Read, Path::new("/work/proj/a"), trailing),
            Verdict::Allow { .. }
        ));
    }

    #[test]
    fn commands_are_checked_against_deny_then_allow() {
        let p = policy();
        assert_eq!(
            p.command("rm -rf /"),
            Verdict::Deny {
                rule: r#"terminal.deny "rm -rf *""#.into()
            }
        );
        assert_eq!(
            p.command("bash -c git push --force"),
            Verdict::Deny {
                rule: r#"terminal.deny "*git push*""#.into()
            }
        );
        assert!(matches!(p.command("cargo test"), Verdict::Allow { .. }));
        let strict = Policy::from_toml(
            r#"
            [terminal]
            allow = ["cargo *", "git status"]
            deny = ["cargo publish*"]
        "#,
        )
        .unwrap();
        assert_eq!(
            strict.command("cargo test"),
            Verdict::Allow {
                rule: r#"terminal.allow "cargo *""#.into()
            }
        );
        assert_eq!(
            strict.command("cargo publish"),
            Verdict::Deny {
                rule: r#"terminal.deny "cargo publish*""#.into()
            }
        );
        assert_eq!(
            strict.command("curl example.com"),
            Verdict::Deny {
                rule: "terminal.allow (matches no allowed pattern)".into()
            }
        );
    }

    #[test]
    fn redaction_replaces_every_match_and_names_the_patterns() {
        let p = policy();
        let (text, hits) = p
            .redact("key sk-abcdefghijklmnopqrstuvwx and AKIAABCDEFGHIJKLMNOP, again sk-abcdefghijklmnopqrstuvwx")
            .unwrap();
        assert_eq!(text, "key [REDACTED] and [REDACTED], again [REDACTED]");
        assert_eq!(hits, ["redact.patterns[0]", "redact.patterns[1]"]);
        assert!(p.redact("sk-short").is_none());
        let custom = Policy::from_toml(
            r#"
            [redact]
            patterns = ["secret"]
            replacement = "$0-gone"
        "#,
        )
        .unwrap();
        assert_eq!(custom.redact("a secret").unwrap().0, "a $0-gone");
    }

    #[test]
    fn mistakes_in_the_policy_are_reported_at_load() {
        let cases = [
            (
                "[[permission]]\ndecision = \"maybe\"",
                "unknown variant `maybe`",
            ),
            (
                "[[permission]]\nkind = [\"raed\"]\ndecision = \"allow\"",
                "unknown variant `raed`",
            ),
            (
                "[[permission]]\ndecision = \"allow\"\nttle = \"x\"",
                "unknown field `ttle`",
            ),
            (
                "[fs]\nread = [\"${home}/**\"]",
                "unknown variable `${home}`",
            ),
            ("[fs]\nwrite = [\"src/**\"]", "must be absolute"),
            ("[fs]\nwrite = [\"/a\\\\\"]", "lone `\\`"),
            ("[terminal]\ndeny = [\"x\\\\\"]", "terminal.deny"),
            ("[redact]\npatterns = [\"(\"]", "redact.patterns[0]"),
            (
                "[[permission]]\npaths = [\"rel\"]\ndecision = \"deny\"",
                "permission #1 paths",
            ),
            ("[network]\nallow = true", "unknown field `network`"),
        ];
        for (text, expected) in cases {
            let err = Policy::from_toml(text).expect_err(text).to_string();
            assert!(err.contains(expected), "{text:?}: {err}");
        }
    }
}
