//! The plans of a session as the transcript shows them (`plan_update`, `plan_removed`), kept by id
//! so that each update says what it replaced. Knows how plans read, not where updates come from.
//!
//! Every line starts with `[plan ID]`, so plans interleaved with other output can be told apart:
//!
//! ```text
//! [plan steps] checklist (new)
//! [plan steps] - [~] Read the code (high)
//! [plan notes] markdown (new)
//! [plan notes] | # Approach
//! [plan notes] file /work/plan.md: the same text
//! [plan design] file (new): /work/design.md
//! [plan design] | # Design
//! [plan design] | ... 12 more lines
//! [plan notes] removed (a markdown plan); still shown: steps, design
//! ```
//!
//! Both spellings of the protocol are read: the plan's id as `planId` (schema 1.20) or `id` (the
//! RFD's text), and the RFD's `file` type (a `path`, or a `uri` such as `file:///work/plan.md`)
//! next to `items` and `markdown`. A plan's file is read only when it is a regular file at a local
//! absolute path, and only its first MiB.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde_json::Value;

/// How many lines of a plan's file the transcript shows.
const FILE_PREVIEW_LINES: usize = 10;
/// How much of a plan's file is read at most: enough for any plan, bounded for anything else.
const FILE_READ_LIMIT: u64 = 1024 * 1024;

/// What kind of plan an id currently names.
#[derive(Clone, Debug, PartialEq, Eq)]
enum PlanKind {
    Items,
    Markdown,
    File,
    /// A `type` this client does not know (or none): tracked by id, not shown.
    Unknown(Option<String>),
}

impl PlanKind {
    fn of(plan: &Value) -> PlanKind {
        match plan["type"].as_str() {
            Some("items") => PlanKind::Items,
            Some("markdown") => PlanKind::Markdown,
            Some("file") => PlanKind::File,
            Some(other) => PlanKind::Unknown(Some(other.to_owned())),
            None => PlanKind::Unknown(None),
        }
    }

    /// The kind with an article, as in "replaces a checklist".
    fn described(&self) -> String {
        match self {
            PlanKind::Items => "a checklist".to_owned(),
            PlanKind::Markdown => "a markdown plan".to_owned(),
            PlanKind::File => "a file plan".to_owned(),
            PlanKind::Unknown(Some(kind)) => format!("a plan of type {kind:?}"),
            PlanKind::Unknown(None) => "a plan without a type".to_owned(),
        }
    }
}

/// The plans shown so far, by id, in the order they first appeared.
#[derive(Default)]
pub(super) struct Plans {
    shown: Vec<(String, PlanKind)>,
}

impl Plans {
    /// The lines showing a `plan_update`'s `plan`, which replaces the plan with its id.
    pub(super) fn update(&mut self, plan: &Value) -> Vec<String> {
        if !plan.is_object() {
            return vec!["[plan ?] plan_update without a plan (ignored)".to_owned()];
        }
        let kind = PlanKind::of(plan);
        let Some(id) = plan_id(plan) else {
            return vec![format!(
                "[plan ?] {}, with no plan id (not shown)",
                kind.described()
            )];
        };
        let change = match self.replace(id, kind.clone()) {
            None => "new".to_owned(),
            Some(previous) if previous == kind => "updated".to_owned(),
            Some(previous) => format!("replaces {}", previous.described()),
        };
        let label = format!("[plan {id}]");
        let mut lines = Vec::new();
        match kind {
            PlanKind::Items => {
                let entries = plan["entries"]
                    .as_array()
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                if entries.is_empty() {
                    lines.push(format!("{label} checklist ({change}), empty"));
                } else {
                    lines.push(format!("{label} checklist ({change})"));
                    lines.extend(
                        entries
                            .iter()
                            .map(|entry| format!("{label} {}", checklist_entry(entry))),
                    );
                }
            }
            PlanKind::Markdown => {
                let content = plan["content"].as_str().unwrap_or_default();
                if content.trim().is_empty() {
                    lines.push(format!("{label} markdown ({change}), empty"));
                } else {
                    lines.push(format!("{label} markdown ({change})"));
                    lines.extend(quoted(&label, content.lines()));
                }
                if let Some(path) = plan["path"].as_str() {
                    lines.extend(markdown_file(&label, path, content));
                }
            }
            PlanKind::File => {
                let location = plan["path"].as_str().or_else(|| plan["uri"].as_str());
                match location {
                    Some(location) => {
                        let head = format!("{label} file ({change}): {location}");
                        lines.extend(file_preview(&label, head, location));
                    }
                    None => lines.push(format!("{label} file ({change}), with no path or uri")),
                }
            }
            PlanKind::Unknown(_) => {
                lines.push(format!(
                    "{label} {} ({change}), not shown",
                    kind.described()
                ));
            }
        }
        lines
    }

    /// The line saying which plan a `plan_removed` update removed.
    pub(super) fn remove(&mut self, update: &Value) -> String {
        let Some(id) = plan_id(update) else {
            return "[plan ?] plan_removed without a plan id (ignored)".to_owned();
        };
        let Some(index) = self.shown.iter().position(|(shown, _)| shown == id) else {
            return format!("[plan {id}] removed, but no plan has that id (ignored)");
        };
        let (_, kind) = self.shown.remove(index);
        let left: Vec<&str> = self.shown.iter().map(|(id, _)| id.as_str()).collect();
        let left = if left.is_empty() {
            "no plan left".to_owned()
        } else {
            format!("still shown: {}", left.join(", "))
        };
        format!("[plan {id}] removed ({}); {left}", kind.described())
    }

    /// Records `kind` under `id`; the kind it had before, if it was shown.
    fn replace(&mut self, id: &str, kind: PlanKind) -> Option<PlanKind> {
        match self.shown.iter_mut().find(|(shown, _)| shown == id) {
            Some((_, previous)) => Some(std::mem::replace(previous, kind)),
            None => {
                self.shown.push((id.to_owned(), kind));
                None
            }
        }
    }
}

/// `planId`, or the RFD text's `id`.
fn plan_id(value: &Value) -> Option<&str> {
    value["planId"].as_str().or_else(|| value["id"].as_str())
}

/// One entry of a checklist, marked as the plain `plan` update's entries are.
pub(super) fn checklist_entry(entry: &Value) -> String {
    let mark = match entry["status"].as_str() {
        Some("completed") => "[x]",
        Some("in_progress") => "[~]",
        _ => "[ ]",
    };
    format!(
        "- {mark} {} ({})",
        entry["content"].as_str().unwrap_or_default(),
        entry["priority"].as_str().unwrap_or("?"),
    )
}

/// Text lines as one block under `label`: `| ` before each line, a bare `|` for an empty one.
fn quoted<'t>(label: &str, lines: impl Iterator<Item = &'t str>) -> Vec<String> {
    lines
        .map(|line| {
            if line.is_empty() {
                format!("{label} |")
            } else {
                format!("{label} | {line}")
            }
        })
        .collect()
}

/// The file a markdown plan names: whether it holds the text shown, else what it holds.
fn markdown_file(label: &str, path: &str, content: &str) -> Vec<String> {
    let head = format!("{label} file {path}");
    match read_plan_file(path) {
        Ok(text) if text.trim_end() == content.trim_end() => vec![format!("{head}: the same text")],
        Ok(text) if text.trim().is_empty() => vec![format!("{head}: empty")],
        Ok(text) => {
            let mut lines = vec![format!("{head} reads:")];
            lines.extend(preview(label, &text));
            lines
        }
        Err(why) => vec![format!("{head}: {why}")],
    }
}

/// `head`, then the first lines of the plan file at `location`, or why they are not shown.
fn file_preview(label: &str, head: String, location: &str) -> Vec<String> {
    match read_plan_file(location) {
        Ok(text) if text.trim().is_empty() => vec![format!("{head}, empty")],
        Ok(text) => {
            let mut lines = vec![head];
            lines.extend(preview(label, &text));
            lines
        }
        Err(why) => vec![format!("{head}, {why}")],
    }
}

/// The first [`FILE_PREVIEW_LINES`] lines of `text` as a quoted block, and how many more there are.
fn preview(label: &str, text: &str) -> Vec<String> {
    let total = text.lines().count();
    let mut lines = quoted(label, text.lines().take(FILE_PREVIEW_LINES));
    match total.saturating_sub(FILE_PREVIEW_LINES) {
        0 => {}
        1 => lines.push(format!("{label} | ... 1 more line")),
        more => lines.push(format!("{label} | ... {more} more lines")),
    }
    lines
}

/// The text of a plan's file (its first [`FILE_READ_LIMIT`] bytes), or why it cannot be shown.
/// Only a regular file is opened: a FIFO or a terminal named by the agent would block the client.
fn read_plan_file(location: &str) -> Result<String, Unshown> {
    let path = local_path(location)?;
    let metadata = std::fs::metadata(&path).map_err(Unshown::Unreadable)?;
    if !metadata.is_file() {
        return Err(Unshown::NotARegularFile);
    }
    let mut bytes = Vec::new();
    File::open(&path)
        .and_then(|file| file.take(FILE_READ_LIMIT).read_to_end(&mut bytes))
        .map_err(Unshown::Unreadable)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Why a plan's file is not shown; the text follows the file's name in the transcript.
#[derive(Debug, thiserror::Error)]
enum Unshown {
    #[error("not a local file")]
    NotLocal,
    #[error("not an absolute path")]
    NotAbsolute,
    #[error("not a regular file")]
    NotARegularFile,
    #[error("cannot read it: {}", io_reason(.0))]
    Unreadable(io::Error),
}

/// The local path a plan names: an absolute path, or a `file:` URI of one.
fn local_path(location: &str) -> Result<PathBuf, Unshown> {
    let path = match location.strip_prefix("file://") {
        Some(rest) => {
            let rest = rest.strip_prefix("localhost").unwrap_or(rest);
            if !rest.starts_with('/') {
                return Err(Unshown::NotLocal);
            }
            PathBuf::from(percent_decoded(rest))
        }
        None if location.contains("://") => return Err(Unshown::NotLocal),
        None => PathBuf::from(location),
    };
    if Path::is_absolute(&path) {
        Ok(path)
    } else {
        Err(Unshown::NotAbsolute)
    }
}

/// A URI path with its `%XX` escapes decoded (anything else left as it is).
fn percent_decoded(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .filter(|hex| hex.iter().all(u8::is_ascii_hexdigit))
            .and_then(|hex| u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok());
        match escaped {
            Some(byte) => {
                decoded.push(byte);
                i += 3;
            }
            None => {
                decoded.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

/// An I/O error as a reader wants it: "No such file or directory", without "(os error 2)".
fn io_reason(error: &io::Error) -> String {
    let text = error.to_string();
    match text.rfind(" (os error ") {
        Some(end) => text[..end].to_owned(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A directory under the system temp dir, removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(name: &str) -> Self {
            let dir = std::env::temp_dir()
                .join(format!("acp-prompt-plans-{}-{name}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }

        /// Writes `text` to `name` in the directory; its absolute path.
        fn file(&self, name: &str, text: &str) -> String {
            let path = self.0.join(name);
            std::fs::write(&path, text).unwrap();
            path.display().to_string()
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn shown(lines: Vec<String>) -> String {
        lines.iter().map(|line| format!("{line}\n")).collect()
    }

    fn entry(content: &str, priority: &str, status: &str) -> Value {
        json!({"content": content, "priority": priority, "status": status})
    }

    #[test]
    fn items_show_as_a_checklist_marked_like_the_plain_plan() {
        let mut plans = Plans::default();
        let plan = json!({"type": "items", "planId": "p1", "entries": [
            entry("Read the code", "high", "completed"),
            entry("Change it", "medium", "in_progress"),
            entry("Test it", "low", "pending"),
        ]});
        assert_eq!(
            shown(plans.update(&plan)),
            "[plan p1] checklist (new)\n\
             [plan p1] - [x] Read the code (high)\n\
             [plan p1] - [~] Change it (medium)\n\
             [plan p1] - [ ] Test it (low)\n"
        );
        let plan = json!({"type": "items", "planId": "p1", "entries": []});
        assert_eq!(
            shown(plans.update(&plan)),
            "[plan p1] checklist (updated), empty\n"
        );
    }

    #[test]
    fn markdown_shows_its_text_as_one_block() {
        let mut plans = Plans::default();
        let plan = json!({"type": "markdown", "planId": "notes", "content": "# Approach\n\n- read\n- change\n"});
        assert_eq!(
            shown(plans.update(&plan)),
            "[plan notes] markdown (new)\n\
             [plan notes] | # Approach\n\
             [plan notes] |\n\
             [plan notes] | - read\n\
             [plan notes] | - change\n"
        );
        let plan = json!({"type": "markdown", "planId": "notes", "content": "  \n"});
        assert_eq!(
            shown(plans.update(&plan)),
            "[plan notes] markdown (updated), empty\n"
        );
    }

    #[test]
    fn markdown_with_a_local_path_says_what_the_file_holds() {
        let dir = TempDir::new("markdown");
        let content = "# Steps\n- [ ] Refactor module\n- [ ] Add tests";
        let same = dir.file("same.md", &format!("{content}\n"));
        let mut plans = Plans::default();
        let plan = json!({"type": "markdown", "planId": "p1", "content": content, "path": same});
        assert_eq!(
            shown(plans.update(&plan)),
            format!(
                "[plan p1] markdown (new)\n\
                 [plan p1] | # Steps\n\
                 [plan p1] | - [ ] Refactor module\n\
                 [plan p1] | - [ ] Add tests\n\
                 [plan p1] file {same}: the same text\n"
            )
        );
        // A file that says something else is shown, as a file plan's is.
        let other = dir.file("other.md", "# Older steps\n- [x] Refactor module\n");
        let plan = json!({"type": "markdown", "planId": "p1", "content": content, "path": other});
        assert_eq!(
            shown(plans.update(&plan)),
            format!(
                "[plan p1] markdown (updated)\n\
                 [plan p1] | # Steps\n\
                 [plan p1] | - [ ] Refactor module\n\
                 [plan p1] | - [ ] Add tests\n\
                 [plan p1] file {other} reads:\n\
                 [plan p1] | # Older steps\n\
                 [plan p1] | - [x] Refactor module\n"
            )
        );
        let missing = dir.0.join("missing.md").display().to_string();
        let plan = json!({"type": "markdown", "planId": "p1", "content": "x", "path": missing});
        assert_eq!(
            shown(plans.update(&plan)),
            format!(
                "[plan p1] markdown (updated)\n\
                 [plan p1] | x\n\
                 [plan p1] file {missing}: cannot read it: No such file or directory\n"
            )
        );
    }

    #[test]
    fn a_file_plan_shows_its_first_lines_and_how_many_more() {
        let dir = TempDir::new("file");
        let text: String = (1..=13).map(|n| format!("line {n}\n")).collect();
        let path = dir.file("design plan.md", &text);
        let mut plans = Plans::default();
        let plan = json!({"type": "file", "planId": "design", "path": path});
        let mut expected = format!("[plan design] file (new): {path}\n");
        for n in 1..=10 {
            expected.push_str(&format!("[plan design] | line {n}\n"));
        }
        expected.push_str("[plan design] | ... 3 more lines\n");
        assert_eq!(shown(plans.update(&plan)), expected);

        // The RFD's spelling: `id` and a `file:` URI, escapes decoded.
        let short = dir.file("short.md", "# Design\n\nOne more line\n");
        let uri = format!("file://{}", short.replace(' ', "%20"));
        let plan = json!({"type": "file", "id": "design", "uri": uri});
        assert_eq!(
            shown(plans.update(&plan)),
            format!(
                "[plan design] file (updated): {uri}\n\
                 [plan design] | # Design\n\
                 [plan design] |\n\
                 [plan design] | One more line\n"
            )
        );
        let eleven = dir.file("eleven.md", &"x\n".repeat(11));
        let plan = json!({"type": "file", "planId": "design", "path": eleven});
        let lines = plans.update(&plan);
        assert_eq!(lines.last().unwrap(), "[plan design] | ... 1 more line");
        assert_eq!(lines.len(), 12);
    }

    #[test]
    fn a_file_plan_that_cannot_be_read_says_why() {
        let dir = TempDir::new("unreadable");
        let missing = dir.0.join("missing.md").display().to_string();
        let empty = dir.file("empty.md", "");
        let dir_path = dir.0.display().to_string();
        let mut plans = Plans::default();
        let cases = [
            (
                json!({"type": "file", "planId": "f", "path": missing}),
                format!(
                    "[plan f] file (new): {missing}, cannot read it: No such file or directory\n"
                ),
            ),
            (
                json!({"type": "file", "planId": "f", "path": empty}),
                format!("[plan f] file (updated): {empty}, empty\n"),
            ),
            (
                json!({"type": "file", "planId": "f", "path": dir_path}),
                format!("[plan f] file (updated): {dir_path}, not a regular file\n"),
            ),
            (
                json!({"type": "file", "planId": "f", "path": "/dev/null"}),
                "[plan f] file (updated): /dev/null, not a regular file\n".to_owned(),
            ),
            (
                json!({"type": "file", "planId": "f", "uri": "https://example.com/plan.md"}),
                "[plan f] file (updated): https://example.com/plan.md, not a local file\n"
                    .to_owned(),
            ),
            (
                json!({"type": "file", "planId": "f", "uri": "file://host/plan.md"}),
                "[plan f] file (updated): file://host/plan.md, not a local file\n".to_owned(),
            ),
            (
                json!({"type": "file", "planId": "f", "path": "plan.md"}),
                "[plan f] file (updated): plan.md, not an absolute path\n".to_owned(),
            ),
            (
                json!({"type": "file", "planId": "f"}),
                "[plan f] file (updated), with no path or uri\n".to_owned(),
            ),
        ];
        for (plan, expected) in cases {
            assert_eq!(shown(plans.update(&plan)), expected, "{plan}");
        }
        // Opening a FIFO would wait for a writer that never comes.
        let fifo = dir.0.join("fifo");
        let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo(3) with a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let plan = json!({"type": "file", "planId": "f", "path": fifo});
        assert_eq!(
            shown(plans.update(&plan)),
            format!(
                "[plan f] file (updated): {}, not a regular file\n",
                fifo.display()
            )
        );
    }

    #[test]
    fn plan_id_and_the_older_id_name_the_same_plan() {
        let mut plans = Plans::default();
        let by_id =
            json!({"type": "items", "id": "p1", "entries": [entry("a", "high", "pending")]});
        assert_eq!(
            shown(plans.update(&by_id)),
            "[plan p1] checklist (new)\n[plan p1] - [ ] a (high)\n"
        );
        let by_plan_id =
            json!({"type": "items", "planId": "p1", "entries": [entry("a", "high", "completed")]});
        assert_eq!(
            shown(plans.update(&by_plan_id)),
            "[plan p1] checklist (updated)\n[plan p1] - [x] a (high)\n"
        );
        assert_eq!(
            plans.remove(&json!({"sessionUpdate": "plan_removed", "id": "p1"})),
            "[plan p1] removed (a checklist); no plan left"
        );
        let neither = json!({"type": "markdown", "content": "x"});
        assert_eq!(
            shown(plans.update(&neither)),
            "[plan ?] a markdown plan, with no plan id (not shown)\n"
        );
        assert_eq!(
            plans.remove(&json!({"sessionUpdate": "plan_removed"})),
            "[plan ?] plan_removed without a plan id (ignored)"
        );
    }

    #[test]
    fn several_plans_are_kept_by_id_and_removed_one_at_a_time() {
        let mut plans = Plans::default();
        let steps =
            json!({"type": "items", "planId": "steps", "entries": [entry("a", "high", "pending")]});
        let notes = json!({"type": "markdown", "planId": "notes", "content": "# Notes"});
        let design = json!({"type": "file", "planId": "design", "uri": "https://example.com/d.md"});
        plans.update(&steps);
        plans.update(&notes);
        plans.update(&design);
        // Each update replaces only the plan with its id, whatever its type was.
        let notes_as_items = json!({"type": "items", "planId": "notes", "entries": [entry("b", "low", "in_progress")]});
        assert_eq!(
            shown(plans.update(&notes_as_items)),
            "[plan notes] checklist (replaces a markdown plan)\n[plan notes] - [~] b (low)\n"
        );
        assert_eq!(
            shown(plans.update(&notes)),
            "[plan notes] markdown (replaces a checklist)\n[plan notes] | # Notes\n"
        );
        let removed = |id: &str| json!({"sessionUpdate": "plan_removed", "planId": id});
        assert_eq!(
            plans.remove(&removed("notes")),
            "[plan notes] removed (a markdown plan); still shown: steps, design"
        );
        assert_eq!(
            plans.remove(&removed("notes")),
            "[plan notes] removed, but no plan has that id (ignored)"
        );
        assert_eq!(
            plans.remove(&removed("steps")),
            "[plan steps] removed (a checklist); still shown: design"
        );
        assert_eq!(
            plans.remove(&removed("design")),
            "[plan design] removed (a file plan); no plan left"
        );
        // A removed id is new again.
        assert_eq!(
            shown(plans.update(&steps)),
            "[plan steps] checklist (new)\n[plan steps] - [ ] a (high)\n"
        );
    }

    #[test]
    fn an_unknown_plan_type_is_one_line_and_still_tracked() {
        let mut plans = Plans::default();
        let diagram = json!({"type": "diagram", "planId": "d", "nodes": [1, 2]});
        assert_eq!(
            shown(plans.update(&diagram)),
            "[plan d] a plan of type \"diagram\" (new), not shown\n"
        );
        let untyped = json!({"planId": "d", "entries": []});
        assert_eq!(
            shown(plans.update(&untyped)),
            "[plan d] a plan without a type (replaces a plan of type \"diagram\"), not shown\n"
        );
        let untyped_without_id = json!({"content": "x"});
        assert_eq!(
            shown(plans.update(&untyped_without_id)),
            "[plan ?] a plan without a type, with no plan id (not shown)\n"
        );
        let not_an_object = json!("items");
        assert_eq!(
            shown(plans.update(&not_an_object)),
            "[plan ?] plan_update without a plan (ignored)\n"
        );
        assert_eq!(
            plans.remove(&json!({"planId": "d"})),
            "[plan d] removed (a plan without a type); no plan left"
        );
    }

    #[test]
    fn percent_escapes_are_decoded_and_broken_ones_kept() {
        assert_eq!(percent_decoded("/a%20b/%C3%A9"), "/a b/é");
        assert_eq!(percent_decoded("/100%/%zz/%+1/%4"), "/100%/%zz/%+1/%4");
    }
}
