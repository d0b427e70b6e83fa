//! The content blocks the context proxy adds to a prompt, and what the prompt already carries so
//! nothing is injected twice. Pure: files arrive already read.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use proxy_kit::RawValue;
use proxy_kit::json::to_raw;
use serde::{Deserialize, Serialize};

/// The label of the inline rules block.
pub const RULES_SOURCE: &str = "rules";

/// One context file, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextFile {
    /// The path as the user wrote it, shown as the block's label.
    pub source: String,
    /// Absolute and normalized: the `file://` URI and the identity for de-duplication.
    pub path: PathBuf,
    pub text: String,
}

/// How the agent can take context: embedded `resource` blocks need the agent's
/// `promptCapabilities.embeddedContext`; plain text works with every agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Resource,
    Text,
}

/// What a prompt already carries that we might otherwise add again.
#[derive(Debug, Default)]
pub struct PromptContents {
    uris: HashSet<String>,
    texts: Vec<String>,
}

#[derive(Deserialize)]
struct Block {
    #[serde(rename = "type")]
    kind: Option<String>,
    uri: Option<String>,
    text: Option<String>,
    resource: Option<Resource>,
}

#[derive(Deserialize)]
struct Resource {
    uri: Option<String>,
}

impl PromptContents {
    /// Reads the URIs of `resource` and `resource_link` blocks and the text of `text` blocks;
    /// items it cannot read are simply not counted.
    pub fn of(items: &[&RawValue]) -> Self {
        let mut contents = PromptContents::default();
        for item in items {
            let Ok(block) = serde_json::from_str::<Block>(item.get()) else {
                continue;
            };
            match block.kind.as_deref() {
                Some("resource") => {
                    if let Some(uri) = block.resource.and_then(|r| r.uri) {
                        contents.uris.insert(uri);
                    }
                }
                Some("resource_link") => {
                    if let Some(uri) = block.uri {
                        contents.uris.insert(uri);
                    }
                }
                Some("text") => contents.texts.extend(block.text),
                _ => {}
            }
        }
        contents
    }

    fn has_uri(&self, uri: &str) -> bool {
        self.uris.contains(uri)
    }

    fn has_source(&self, source: &str) -> bool {
        let tag = opening_tag(source);
        self.texts.iter().any(|t| t.contains(&tag))
    }
}

/// The blocks to add to the prompt: one `resource` per file and one text block of
/// rules ([`Style::Resource`]), or a single text block holding everything ([`Style::Text`]).
/// A file already in the prompt (by URI, or by its delimiter in a text block) is left out,
/// as is the rules block when its delimiter is already there.
pub fn context_blocks(
    files: &[ContextFile],
    rules: &[String],
    style: Style,
    present: &PromptContents,
) -> Vec<Box<RawValue>> {
    let files: Vec<&ContextFile> = files
        .iter()
        .filter(|f| !present.has_uri(&file_uri(&f.path)) && !present.has_source(&f.source))
        .collect();
    let rules = (!rules.is_empty() && !present.has_source(RULES_SOURCE)).then(|| rules_text(rules));
    match style {
        Style::Resource => {
            let mut blocks: Vec<Box<RawValue>> = files.iter().map(|f| resource_block(f)).collect();
            blocks.extend(rules.map(|r| text_block(&r)));
            blocks
        }
        Style::Text => {
            let mut sections: Vec<String> = files
                .iter()
                .map(|f| delimited(&f.source, &f.text))
                .collect();
            sections.extend(rules);
            if sections.is_empty() {
                Vec::new()
            } else {
                vec![text_block(&sections.join("\n\n"))]
            }
        }
    }
}

/// `<context source="...">`, the opening delimiter of one source.
pub fn opening_tag(source: &str) -> String {
    format!("<context source=\"{}\">", attribute(source))
}

fn delimited(source: &str, text: &str) -> String {
    let newline = if text.ends_with('\n') { "" } else { "\n" };
    format!("{}\n{text}{newline}</context>", opening_tag(source))
}

fn rules_text(rules: &[String]) -> String {
    let list: String = rules.iter().map(|r| format!("- {r}\n")).collect();
    delimited(RULES_SOURCE, &list)
}

/// A content block we write, members in the order the ACP docs show them.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum OutBlock<'a> {
    Text { text: &'a str },
    Resource { resource: EmbeddedText<'a> },
}

#[derive(Serialize)]
struct EmbeddedText<'a> {
    uri: String,
    #[serde(rename = "mimeType")]
    mime_type: &'static str,
    text: &'a str,
}

fn text_block(text: &str) -> Box<RawValue> {
    to_raw(&OutBlock::Text { text })
}

fn resource_block(file: &ContextFile) -> Box<RawValue> {
    to_raw(&OutBlock::Resource {
        resource: EmbeddedText {
            uri: file_uri(&file.path),
            mime_type: mime_type(&file.path),
            text: &file.text,
        },
    })
}

fn mime_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some(ext) if ext.eq_ignore_ascii_case("md") || ext.eq_ignore_ascii_case("markdown") => {
            "text/markdown"
        }
        _ => "text/plain",
    }
}

/// Escapes what would end or confuse an XML-style attribute value.
fn attribute(source: &str) -> String {
    source
        .replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// `file://` URI of an absolute path, percent-encoding every byte outside RFC 3986's
/// unreserved set and `/`.
pub fn file_uri(path: &Path) -> String {
    let mut uri = String::from("file://");
    for &byte in path.to_string_lossy().as_bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'/') {
            uri.push(byte as char);
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_string()).unwrap()
    }

    fn file(source: &str, path: &str, text: &str) -> ContextFile {
        ContextFile {
            source: source.into(),
            path: path.into(),
            text: text.into(),
        }
    }

    fn texts(blocks: &[Box<RawValue>]) -> Vec<&str> {
        blocks.iter().map(|b| b.get()).collect()
    }

    fn contents(items: &[&str]) -> PromptContents {
        let items: Vec<Box<RawValue>> = items.iter().map(|s| raw(s)).collect();
        let refs: Vec<&RawValue> = items.iter().map(|b| &**b).collect();
        PromptContents::of(&refs)
    }

    #[test]
    fn resource_style_gives_one_resource_per_file_then_the_rules() {
        let files = [
            file("AGENTS.md", "/p/AGENTS.md", "Be kind.\n"),
            file("notes.txt", "/p/notes.txt", "n"),
        ];
        let rules = [
            "Always write tests".to_string(),
            "No \"force\" pushes".to_string(),
        ];
        let blocks = context_blocks(&files, &rules, Style::Resource, &PromptContents::default());
        assert_eq!(
            texts(&blocks),
            [
                r#"{"type":"resource","resource":{"uri":"file:///p/AGENTS.md","mimeType":"text/markdown","text":"Be kind.\n"}}"#,
                r#"{"type":"resource","resource":{"uri":"file:///p/notes.txt","mimeType":"text/plain","text":"n"}}"#,
                r#"{"type":"text","text":"<context source=\"rules\">\n- Always write tests\n- No \"force\" pushes\n</context>"}"#,
            ]
        );
    }

    #[test]
    fn text_style_gives_one_delimited_block() {
        let files = [
            file("AGENTS.md", "/p/AGENTS.md", "Be kind.\n"),
            file("docs/rules.md", "/p/docs/rules.md", "Short"),
        ];
        let blocks = context_blocks(
            &files,
            &["R1".into()],
            Style::Text,
            &PromptContents::default(),
        );
        assert_eq!(
            texts(&blocks),
            [
                r#"{"type":"text","text":"<context source=\"AGENTS.md\">\nBe kind.\n</context>\n\n<context source=\"docs/rules.md\">\nShort\n</context>\n\n<context source=\"rules\">\n- R1\n</context>"}"#
            ]
        );
    }

    #[test]
    fn nothing_to_add_gives_no_blocks() {
        for style in [Style::Resource, Style::Text] {
            assert!(context_blocks(&[], &[], style, &PromptContents::default()).is_empty());
        }
    }

    #[test]
    fn files_already_in_the_prompt_are_not_added_again() {
        let files = [
            file("AGENTS.md", "/p/AGENTS.md", "a"),
            file("b.md", "/p/b.md", "b"),
            file("c.md", "/p/c.md", "c"),
        ];
        let present = contents(&[
            r#"{"type":"resource","resource":{"uri":"file:///p/AGENTS.md","text":"old"}}"#,
            r#"{"type":"resource_link","uri":"file:///p/b.md","name":"b.md"}"#,
            r#"{"type":"text","text":"hello"}"#,
        ]);
        let blocks = context_blocks(&files, &[], Style::Resource, &present);
        assert_eq!(
            texts(&blocks),
            [
                r#"{"type":"resource","resource":{"uri":"file:///p/c.md","mimeType":"text/markdown","text":"c"}}"#
            ]
        );
    }

    #[test]
    fn delimited_sources_already_in_text_are_not_added_again() {
        let files = [
            file("AGENTS.md", "/p/AGENTS.md", "a"),
            file("b.md", "/p/b.md", "b"),
        ];
        let present = contents(&[
            r#"{"type":"text","text":"<context source=\"AGENTS.md\">\na\n</context>\n\n<context source=\"rules\">\n- R\n</context>"}"#,
        ]);
        for style in [Style::Resource, Style::Text] {
            let blocks = context_blocks(&files, &["R".into()], style, &present);
            assert_eq!(blocks.len(), 1, "{style:?}");
            assert!(
                blocks[0].get().contains("file:///p/b.md")
                    || blocks[0].get().contains(r#"source=\"b.md\""#)
            );
            assert!(!blocks[0].get().contains("rules"));
        }
    }

    #[test]
    fn unreadable_prompt_items_do_not_count_as_present() {
        let present = contents(&[
            "1",
            r#"{"type":"image","data":"AA=="}"#,
            r#"{"type":"resource"}"#,
        ]);
        let blocks = context_blocks(
            &[file("a.md", "/a.md", "x")],
            &[],
            Style::Resource,
            &present,
        );
        assert_eq!(blocks.len(), 1);
    }

    #[test]
    fn uris_are_percent_encoded() {
        assert_eq!(
            file_uri(Path::new("/p/My Docs/ü#1.md")),
            "file:///p/My%20Docs/%C3%BC%231.md"
        );
        assert_eq!(file_uri(Path::new("/a-b_c.d~e")), "file:///a-b_c.d~e");
    }

    #[test]
    fn labels_are_escaped_in_delimiters() {
        assert_eq!(
            opening_tag(r#"a"<b>&"#),
            r#"<context source="a&quot;&lt;b&gt;&amp;">"#
        );
    }
}
