//! The two lines that open a bridge shim's connection: the shim's hello naming its server
//! (and, for an HTTP bridge session, the session setup it was opened under), and the
//! conductor's welcome or refusal. Pure; both sides use it.

/// What a shim's first line says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hello {
    /// The declared server it stands for.
    pub server: String,
    /// The HTTP bridge's key of the session setup whose URL it came in by; `None` for a
    /// stdio shim.
    pub setup: Option<String>,
}

/// The first line a stdio shim sends: which declared server it stands for.
pub fn hello_line(server: &str) -> String {
    format!(
        "{}\n",
        serde_json::json!({ "mcpBridge": 1, "server": server })
    )
}

/// The first line of an HTTP bridge session: its server and the setup key of its URL.
pub fn http_hello_line(server: &str, setup: &str) -> String {
    format!(
        "{}\n",
        serde_json::json!({ "mcpBridge": 1, "server": server, "setup": setup })
    )
}

/// Reads a shim's first line.
pub fn read_hello(line: &[u8]) -> Option<Hello> {
    let v: serde_json::Value = serde_json::from_slice(line).ok()?;
    if v.get("mcpBridge")? != 1 {
        return None;
    }
    Some(Hello {
        server: v.get("server")?.as_str()?.to_string(),
        setup: v.get("setup").and_then(|s| s.as_str()).map(str::to_string),
    })
}

/// The conductor's answer to a hello: accepted, or why not.
pub fn welcome_line(refusal: Option<&str>) -> String {
    match refusal {
        None => format!("{}\n", serde_json::json!({ "mcpBridge": "ok" })),
        Some(why) => format!(
            "{}\n",
            serde_json::json!({ "mcpBridge": "refused", "reason": why })
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_round_trips() {
        let line = hello_line("notes-1");
        assert!(line.ends_with('\n'));
        let hello = read_hello(line.trim_end().as_bytes()).expect("a hello");
        assert_eq!(hello.server, "notes-1");
        assert_eq!(hello.setup, None);
        let http = read_hello(http_hello_line("notes-1", "k7").trim_end().as_bytes());
        assert_eq!(
            http,
            Some(Hello {
                server: "notes-1".into(),
                setup: Some("k7".into())
            })
        );
        assert_eq!(read_hello(br#"{"jsonrpc":"2.0","method":"x"}"#), None);
        assert_eq!(read_hello(br#"{"mcpBridge":2,"server":"x"}"#), None);
        assert_eq!(read_hello(b"not json"), None);
    }

    #[test]
    fn welcome_lines() {
        let ok: serde_json::Value = serde_json::from_str(&welcome_line(None)).unwrap();
        assert_eq!(ok["mcpBridge"], "ok");
        let no: serde_json::Value =
            serde_json::from_str(&welcome_line(Some("no such server"))).unwrap();
        assert_eq!(no["mcpBridge"], "refused");
        assert_eq!(no["reason"], "no such server");
    }
}
