//! What a prompt asks the demo agent to do (MCP tools, or ticks, a write, a read) and whether it
//! mentions a plan: pure functions over the prompt's text. Must not know how any of it is done.
//!
//! Only what the user wrote counts: context a proxy added, as resources or as text blocks of
//! `<context source="...">...</context>` sections (the context proxy's delimiters, which it puts
//! after the user's blocks), does not trigger anything; its rules ("Always write tests") are not
//! a request to write.
//!
//! A text block asks for a tool when it starts (after an optional "please") with,
//! case-insensitively, the first that matches of:
//!
//! 1. `remember <text>` / `remember that <text>`: tool `remember`, `{"note": text}`;
//! 2. `what do you recall` / `what do you remember` / `recall`: tool `recall`, `{}`;
//! 3. `forget note <n>` / `forget <n>` (`n` a whole number, `#` allowed): tool `forget`,
//!    `{"number": n}`;
//! 4. `use tool <name> [json]` / `call <name> [json]`: tool `name` with that JSON object as
//!    arguments (none means `{}`; anything else is refused with a message, nothing is called);
//! 5. `list tools` / `what tools`: every server's `tools/list`.

use serde_json::{Value, json};

/// What a prompt asks for beyond showing it back.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Asked {
    /// A tool request; the rest of the text is the tool's input, not more requests.
    Tool(ToolIntent),
    /// The demo's other actions, carried out in this order: "slow" ticks, "write" or
    /// "permission" asks permission for a write it never does, "read <path>" reads a line
    /// through the client. All `false` and `None`: nothing beyond the echo.
    Actions {
        slow: bool,
        write: bool,
        read: Option<String>,
    },
}

impl Asked {
    pub(super) fn of(prompt: &[Value]) -> Asked {
        if let Some(intent) = prompt_tool_intent(prompt) {
            return Asked::Tool(intent);
        }
        let text = prompt_text(prompt);
        let lowered = text.to_lowercase();
        Asked::Actions {
            slow: lowered.contains("slow"),
            write: lowered.contains("write") || lowered.contains("permission"),
            read: read_target(&text),
        }
    }
}

/// Whether the prompt's text mentions a plan ("plan", "planning", "Plans", ...).
pub(super) fn mentions_plan(prompt: &[Value]) -> bool {
    prompt_text(prompt).to_lowercase().contains("plan")
}

/// What the user typed: their text blocks, one per line.
fn prompt_text(prompt: &[Value]) -> String {
    user_texts(prompt).collect::<Vec<_>>().join("\n")
}

/// The text of each text block the user wrote, in order: not those of injected context.
fn user_texts(prompt: &[Value]) -> impl Iterator<Item = &str> {
    prompt
        .iter()
        .filter(|block| block["type"] == "text")
        .filter_map(|block| block["text"].as_str())
        .filter(|text| !is_injected_context(text))
}

/// Whether a text block is context a proxy added: nothing but `<context source="...">` ...
/// `</context>` sections (one block may hold several).
fn is_injected_context(text: &str) -> bool {
    let text = text.trim();
    text.starts_with("<context source=\"") && text.ends_with("</context>")
}

/// A request to use the session's MCP tools (the rules are in the module doc).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum ToolIntent {
    Call {
        tool: String,
        arguments: Value,
    },
    List,
    /// `use tool` / `call` with arguments that are not a JSON object: nothing is called.
    BadArguments {
        tool: String,
        problem: String,
    },
}

/// The tool request of the first text block that makes one.
fn prompt_tool_intent(prompt: &[Value]) -> Option<ToolIntent> {
    user_texts(prompt).find_map(tool_intent)
}

/// The tool request `text` makes, if any: the first rule of the module doc that matches.
fn tool_intent(text: &str) -> Option<ToolIntent> {
    let text = text.trim_start();
    let text = match after_words(text, &["please"]) {
        Some(rest) => rest.trim_start().trim_start_matches(','),
        None => text,
    };
    let call = |tool: &str, arguments: Value| ToolIntent::Call {
        tool: tool.to_owned(),
        arguments,
    };
    if let Some(rest) = after_words(text, &["remember"]) {
        let rest = rest.trim();
        let note = match after_words(rest, &["that"]).map(str::trim) {
            Some(after_that) if !after_that.is_empty() => after_that,
            _ => rest,
        };
        let note = note.trim_start_matches([':', ',']).trim_start();
        if note.chars().any(char::is_alphanumeric) {
            return Some(call("remember", json!({ "note": note })));
        }
    }
    let recall = [
        &["what", "do", "you", "recall"][..],
        &["what", "do", "you", "remember"],
        &["recall"],
    ];
    if recall
        .iter()
        .any(|words| after_words(text, words).is_some())
    {
        return Some(call("recall", json!({})));
    }
    let number = [&["forget", "note"][..], &["forget"]]
        .iter()
        .filter_map(|words| after_words(text, words))
        .find_map(note_number);
    if let Some(number) = number {
        return Some(call("forget", json!({ "number": number })));
    }
    if let Some(rest) = [&["use", "tool"][..], &["call"]]
        .iter()
        .find_map(|words| after_words(text, words))
    {
        let rest = rest.trim_start();
        let name_end = rest
            .find(|c: char| c.is_whitespace() || c == '{')
            .unwrap_or(rest.len());
        let tool = rest[..name_end].trim_matches(['`', '"', '\'']);
        if !tool.is_empty() {
            return Some(tool_call_intent(tool, rest[name_end..].trim()));
        }
    }
    let list = [&["list", "tools"][..], &["what", "tools"]];
    if list.iter().any(|words| after_words(text, words).is_some()) {
        return Some(ToolIntent::List);
    }
    None
}

/// The note number at the start of `rest` ("2", "#2", "2."), if that is all its first word is.
fn note_number(rest: &str) -> Option<u64> {
    let word = rest.split_whitespace().next()?;
    word.trim_start_matches('#')
        .trim_end_matches(['.', ',', ';', ':', '!', '?'])
        .parse()
        .ok()
}

/// `use tool <tool> <arguments>`: the arguments, if any, must be a JSON object.
fn tool_call_intent(tool: &str, arguments: &str) -> ToolIntent {
    let arguments = arguments.trim_matches('`').trim();
    let parsed = if arguments.is_empty() {
        Ok(json!({}))
    } else {
        serde_json::from_str::<Value>(arguments).map_err(|e| e.to_string())
    };
    match parsed {
        Ok(arguments) if arguments.is_object() => ToolIntent::Call {
            tool: tool.to_owned(),
            arguments,
        },
        Ok(other) => ToolIntent::BadArguments {
            tool: tool.to_owned(),
            problem: format!("got {other}"),
        },
        Err(problem) => ToolIntent::BadArguments {
            tool: tool.to_owned(),
            problem,
        },
    }
}

/// What follows `words` at the start of `text`, matched ASCII case-insensitively with any
/// whitespace between them; each must be a whole word.
fn after_words<'t>(text: &'t str, words: &[&str]) -> Option<&'t str> {
    let mut rest = text;
    for word in words {
        rest = rest.trim_start();
        if !rest.get(..word.len())?.eq_ignore_ascii_case(word) {
            return None;
        }
        rest = &rest[word.len()..];
        if rest
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
        {
            return None;
        }
    }
    Some(rest)
}

/// The path in "read <path>", if the prompt asks for one.
fn read_target(text: &str) -> Option<String> {
    let mut words = text.split_whitespace();
    while let Some(word) = words.next() {
        let word = word.trim_matches(|c: char| !c.is_alphanumeric());
        if !word.eq_ignore_ascii_case("read") {
            continue;
        }
        let target = words
            .next()?
            .trim_matches(['"', '\'', '`'])
            .trim_end_matches(['.', ',', ';', ':', '!', '?', ')']);
        return (!target.is_empty()).then(|| target.to_owned());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(tool: &str, arguments: Value) -> Option<ToolIntent> {
        Some(ToolIntent::Call {
            tool: tool.to_owned(),
            arguments,
        })
    }

    fn remember(note: &str) -> Option<ToolIntent> {
        call("remember", json!({ "note": note }))
    }

    #[test]
    fn tool_intent_rules() {
        // remember <text> / remember that <text>
        assert_eq!(tool_intent("remember the milk"), remember("the milk"));
        assert_eq!(
            tool_intent("Remember that the build uses nextest."),
            remember("the build uses nextest.")
        );
        assert_eq!(tool_intent("REMEMBER THAT x"), remember("x"));
        assert_eq!(tool_intent("remember thatcher"), remember("thatcher"));
        assert_eq!(tool_intent("remember that"), remember("that"));
        assert_eq!(
            tool_intent("  please remember: buy milk  "),
            remember("buy milk")
        );
        assert_eq!(tool_intent("Please, remember it\nall"), remember("it\nall"));
        assert_eq!(tool_intent("please\nremember\tthat  x"), remember("x"));
        assert_eq!(tool_intent("remember"), None);
        assert_eq!(tool_intent("remember?"), None);
        assert_eq!(tool_intent("remembering things"), None);
        assert_eq!(tool_intent("I remember it"), None);

        // recall
        let recall = call("recall", json!({}));
        for text in [
            "what do you recall",
            "What do you recall?",
            "what   do you\nremember",
            "What do you remember about me",
            "recall",
            "RECALL everything",
            "please recall",
        ] {
            assert_eq!(tool_intent(text), recall, "{text:?}");
        }
        assert_eq!(tool_intent("recalled"), None);
        assert_eq!(tool_intent("what do you think"), None);
        assert_eq!(tool_intent("what do you remembers"), None);

        // forget <n> / forget note <n>
        let forget = |n: u64| call("forget", json!({ "number": n }));
        assert_eq!(tool_intent("forget 2"), forget(2));
        assert_eq!(tool_intent("Forget note 3"), forget(3));
        assert_eq!(tool_intent("forget note #4."), forget(4));
        assert_eq!(tool_intent("forget #1 please"), forget(1));
        assert_eq!(tool_intent("forget it"), None);
        assert_eq!(tool_intent("forget note"), None);
        assert_eq!(tool_intent("forget -1"), None);
        assert_eq!(tool_intent("forgetting 2"), None);

        // use tool <name> [json] / call <name> [json]
        assert_eq!(
            tool_intent(r#"use tool remember {"note": "x"}"#),
            remember("x")
        );
        assert_eq!(tool_intent("call recall"), recall);
        assert_eq!(tool_intent("CALL `recall`"), recall);
        assert_eq!(tool_intent(r#"call remember{"note":"y"}"#), remember("y"));
        assert_eq!(
            tool_intent("use tool t `{\"a\": 1}`"),
            call("t", json!({"a": 1}))
        );
        assert_eq!(
            tool_intent("use tool my-tool.v2 {}"),
            call("my-tool.v2", json!({}))
        );
        assert_eq!(
            tool_intent("call t [1]"),
            Some(ToolIntent::BadArguments {
                tool: "t".into(),
                problem: "got [1]".into()
            })
        );
        let Some(ToolIntent::BadArguments { tool, problem }) = tool_intent("call t {oops") else {
            panic!("not refused")
        };
        assert_eq!(tool, "t");
        assert!(problem.contains("line 1"), "{problem}");
        assert_eq!(tool_intent("call"), None);
        assert_eq!(tool_intent("call  "), None);
        assert_eq!(tool_intent("use tools x"), None);
        assert_eq!(tool_intent("caller t"), None);

        // list tools / what tools
        for text in ["list tools", "List Tools please", "What tools do you have?"] {
            assert_eq!(tool_intent(text), Some(ToolIntent::List), "{text:?}");
        }
        assert_eq!(tool_intent("list the tools"), None);
        assert_eq!(tool_intent("listing tools"), None);

        // The first rule that matches wins.
        assert_eq!(
            tool_intent("remember to call recall"),
            remember("to call recall")
        );
        assert_eq!(tool_intent("recall what tools"), recall);
        assert_eq!(
            tool_intent("call forget 2"),
            Some(ToolIntent::BadArguments {
                tool: "forget".into(),
                problem: "got 2".into()
            })
        );

        // What the demo did before stays as it was.
        for text in [
            "",
            "  ",
            "hello",
            "please write it",
            "read notes.md",
            "go slow",
            "Permission?",
        ] {
            assert_eq!(tool_intent(text), None, "{text:?}");
        }
    }

    #[test]
    fn tool_intent_comes_from_the_first_text_block_that_asks() {
        let text = |t: &str| json!({"type": "text", "text": t});
        let resource =
            json!({"type": "resource", "resource": {"uri": "file:///r", "text": "recall"}});
        assert_eq!(
            prompt_tool_intent(&[text("some context"), text("list tools"), text("recall")]),
            Some(ToolIntent::List)
        );
        assert_eq!(prompt_tool_intent(std::slice::from_ref(&resource)), None);
        assert_eq!(
            prompt_tool_intent(&[resource, text("forget 1")]),
            call("forget", json!({"number": 1}))
        );
        assert_eq!(prompt_tool_intent(&[]), None);
    }

    #[test]
    fn asked_is_a_tool_request_or_else_the_other_actions() {
        let text = |t: &str| json!({"type": "text", "text": t});
        assert_eq!(
            Asked::of(&[text("recall, slowly")]),
            Asked::Tool(ToolIntent::Call {
                tool: "recall".into(),
                arguments: json!({}),
            })
        );
        assert_eq!(
            Asked::of(&[text("Go SLOW"), text("then read a.txt and ask permission")]),
            Asked::Actions {
                slow: true,
                write: true,
                read: Some("a.txt".into()),
            }
        );
        let embedded = json!({"type": "resource", "resource": {"uri": "file:///r", "text": "write slow plan"}});
        assert_eq!(
            Asked::of(&[embedded.clone(), text("hello")]),
            Asked::Actions {
                slow: false,
                write: false,
                read: None,
            }
        );
        assert!(mentions_plan(&[text("hello"), text("What's the PLAN?")]));
        assert!(mentions_plan(&[text("planning")]));
        assert!(!mentions_plan(&[embedded, text("explain it")]));
        assert!(!mentions_plan(&[]));
    }

    #[test]
    fn injected_context_is_not_what_the_user_asked() {
        let text = |t: &str| json!({"type": "text", "text": t});
        let rules = text(
            "<context source=\"rules\">\n- Always write tests\n- Read the plan slowly\n</context>",
        );
        let files_and_rules = text(
            "<context source=\"AGENTS.md\">\nrecall everything\n</context>\n\n<context source=\"rules\">\n- Always write tests\n</context>\n",
        );
        let nothing = Asked::Actions {
            slow: false,
            write: false,
            read: None,
        };
        for context in [&rules, &files_and_rules] {
            // After the user's blocks (where the context proxy puts it) or before them.
            assert_eq!(Asked::of(&[text("Hello"), context.clone()]), nothing);
            assert_eq!(Asked::of(&[context.clone(), text("Hello")]), nothing);
            assert!(!mentions_plan(&[text("Hello"), context.clone()]));
        }
        assert_eq!(
            Asked::of(&[text("please write it"), rules.clone()]),
            Asked::Actions {
                slow: false,
                write: true,
                read: None,
            }
        );
        assert_eq!(
            Asked::of(&[text("list tools"), files_and_rules]),
            Asked::Tool(ToolIntent::List)
        );
        // A block of the user's own that merely mentions a context tag still counts.
        assert_eq!(
            Asked::of(&[text("write a <context source=\"x\"> parser")]),
            Asked::Actions {
                slow: false,
                write: true,
                read: None,
            }
        );
    }

    #[test]
    fn read_target_finds_the_word_after_read() {
        assert_eq!(read_target("please READ ./a.txt."), Some("./a.txt".into()));
        assert_eq!(read_target("read `/x y`"), Some("/x".into()));
        assert_eq!(read_target("already done, I've read"), None);
        assert_eq!(read_target("nothing here"), None);
    }
}
