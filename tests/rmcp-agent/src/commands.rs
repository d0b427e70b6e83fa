//! The agent's prompt language: one command per line of prompt text, parsed into
//! [`Command`]s. Pure parsing; running them is the connections' business.

use serde_json::Value;

/// One line of a prompt. A LABEL names one MCP client connection (global to the agent);
/// a SERVER is the `name` of an entry of the session's `mcpServers`. `list` and `call` open
/// a LABEL not open yet, as if by `open LABEL LABEL`.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// `open LABEL SERVER`
    Open { label: String, server: String },
    /// `open-id LABEL ID`: `mcp/connect` to an id, declared or not (`--acp` only).
    OpenId { label: String, id: String },
    /// `list LABEL`
    List { label: String },
    /// `call LABEL TOOL [JSON]`, or `call-progress ...` to ask for progress notifications.
    Call {
        label: String,
        tool: String,
        arguments: Value,
        progress: bool,
    },
    /// `open-wrong-secret LABEL SERVER`: an `http` server with the secret in its headers
    /// replaced (`--http` only).
    OpenWrongSecret { label: String, server: String },
    /// `call-cancel LABEL TOOL MS`: calls TOOL and cancels it (`notifications/cancelled`)
    /// after MS milliseconds; what became of it.
    CallCancelled {
        label: String,
        tool: String,
        ms: u64,
    },
    /// `bench LABEL TOOL N`: calls TOOL (no arguments) N times, one after the other; the
    /// median and 90th percentile round trip.
    Bench {
        label: String,
        tool: String,
        n: usize,
    },
    /// `pid LABEL`
    Pid { label: String },
    /// `close LABEL`
    Close { label: String },
    /// `events LABEL`
    Events { label: String },
    /// `sleep MS`
    Sleep { ms: u64 },
    /// `python SERVER MODE TOOL [JSON]`: a fresh client on the official MCP Python SDK
    /// (`--python`) with the SDK's `mode=` lists SERVER's tools and calls TOOL; what it said.
    Python {
        server: String,
        mode: String,
        tool: String,
        arguments: Value,
    },
}

/// A tool call's JSON object of arguments (`{}` when absent).
fn arguments(text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    let value: Value =
        serde_json::from_str(text.trim()).map_err(|e| format!("arguments are not JSON: {e}"))?;
    if !value.is_object() {
        return Err("arguments must be a JSON object".to_string());
    }
    Ok(value)
}

/// One line of prompt text as a command; `Err` says what is wrong with it.
pub fn parse(line: &str) -> Result<Command, String> {
    let line = line.trim();
    let (verb, rest) = split_word(line);
    let (first, rest) = split_word(rest);
    let (second, rest) = split_word(rest);
    let need = |word: &str, what: &str| -> Result<String, String> {
        if word.is_empty() {
            Err(format!("`{verb}` needs {what}"))
        } else {
            Ok(word.to_string())
        }
    };
    let only = |words: usize| -> Result<(), String> {
        let extra = match words {
            1 => [second, rest].concat(),
            _ => rest.to_string(),
        };
        if extra.trim().is_empty() {
            Ok(())
        } else {
            Err(format!(
                "`{verb}` takes {words} argument(s), got `{}`",
                extra.trim()
            ))
        }
    };
    match verb {
        "open" => {
            only(2)?;
            Ok(Command::Open {
                label: need(first, "a label")?,
                server: need(second, "a server name")?,
            })
        }
        "open-wrong-secret" => {
            only(2)?;
            Ok(Command::OpenWrongSecret {
                label: need(first, "a label")?,
                server: need(second, "a server name")?,
            })
        }
        "call-cancel" => {
            let ms = rest
                .trim()
                .parse()
                .map_err(|_| format!("`call-cancel` needs milliseconds, got `{}`", rest.trim()))?;
            Ok(Command::CallCancelled {
                label: need(first, "a label")?,
                tool: need(second, "a tool name")?,
                ms,
            })
        }
        "bench" => {
            let n = rest
                .trim()
                .parse()
                .map_err(|_| format!("`bench` needs a count, got `{}`", rest.trim()))?;
            Ok(Command::Bench {
                label: need(first, "a label")?,
                tool: need(second, "a tool name")?,
                n,
            })
        }
        "open-id" => {
            only(2)?;
            Ok(Command::OpenId {
                label: need(first, "a label")?,
                id: need(second, "a server id")?,
            })
        }
        "python" => {
            let (tool, rest) = split_word(rest);
            Ok(Command::Python {
                server: need(first, "a server name")?,
                mode: need(second, "a mode")?,
                tool: need(tool, "a tool name")?,
                arguments: arguments(rest)?,
            })
        }
        "call" | "call-progress" => {
            let tool = second;
            let arguments = arguments(rest)?;
            Ok(Command::Call {
                label: need(first, "a label")?,
                tool: need(tool, "a tool name")?,
                arguments,
                progress: verb == "call-progress",
            })
        }
        "list" | "pid" | "close" | "events" => {
            only(1)?;
            let label = need(first, "a label")?;
            Ok(match verb {
                "list" => Command::List { label },
                "pid" => Command::Pid { label },
                "close" => Command::Close { label },
                _ => Command::Events { label },
            })
        }
        "sleep" => {
            only(1)?;
            let ms = first
                .parse()
                .map_err(|_| format!("`sleep` needs milliseconds, got `{first}`"))?;
            Ok(Command::Sleep { ms })
        }
        "" => Err("empty command".to_string()),
        other => Err(format!("unknown command `{other}`")),
    }
}

/// The first space-separated word and the rest (leading spaces removed).
fn split_word(text: &str) -> (&str, &str) {
    let text = text.trim_start();
    match text.find(char::is_whitespace) {
        Some(at) => (&text[..at], text[at..].trim_start()),
        None => (text, ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_command() {
        assert_eq!(
            parse("open t tools"),
            Ok(Command::Open {
                label: "t".into(),
                server: "tools".into()
            })
        );
        assert_eq!(
            parse("open-id x nobody-1"),
            Ok(Command::OpenId {
                label: "x".into(),
                id: "nobody-1".into()
            })
        );
        assert_eq!(parse(" list  t "), Ok(Command::List { label: "t".into() }));
        assert_eq!(
            parse(r#"call t echo {"text": "a b"}"#),
            Ok(Command::Call {
                label: "t".into(),
                tool: "echo".into(),
                arguments: json!({ "text": "a b" }),
                progress: false
            })
        );
        assert_eq!(
            parse("call-progress t progress"),
            Ok(Command::Call {
                label: "t".into(),
                tool: "progress".into(),
                arguments: json!({}),
                progress: true
            })
        );
        assert_eq!(parse("pid a"), Ok(Command::Pid { label: "a".into() }));
        assert_eq!(parse("close a"), Ok(Command::Close { label: "a".into() }));
        assert_eq!(parse("events a"), Ok(Command::Events { label: "a".into() }));
        assert_eq!(parse("sleep 300"), Ok(Command::Sleep { ms: 300 }));
        assert_eq!(
            parse("bench t recall 100"),
            Ok(Command::Bench {
                label: "t".into(),
                tool: "recall".into(),
                n: 100
            })
        );
        assert_eq!(
            parse("open-wrong-secret w notes"),
            Ok(Command::OpenWrongSecret {
                label: "w".into(),
                server: "notes".into()
            })
        );
        assert_eq!(
            parse("call-cancel t hang 200"),
            Ok(Command::CallCancelled {
                label: "t".into(),
                tool: "hang".into(),
                ms: 200
            })
        );
    }

    #[test]
    fn mistakes_are_explained() {
        assert!(parse("open t").unwrap_err().contains("server name"));
        assert!(parse("open t a b").unwrap_err().contains("takes 2"));
        assert!(parse("list").unwrap_err().contains("label"));
        assert!(parse("list a b").unwrap_err().contains("takes 1"));
        assert!(parse("call t").unwrap_err().contains("tool name"));
        assert!(parse("call t echo {").unwrap_err().contains("not JSON"));
        assert!(parse("call t echo [1]").unwrap_err().contains("object"));
        assert!(parse("sleep soon").unwrap_err().contains("milliseconds"));
        assert!(
            parse("dance")
                .unwrap_err()
                .contains("unknown command `dance`")
        );
        assert_eq!(parse("   "), Err("empty command".to_string()));
    }
}
