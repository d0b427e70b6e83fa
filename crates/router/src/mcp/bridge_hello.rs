//! The two lines that open a bridge shim's connection: the shim's hello naming its server,
//! and the conductor's welcome or refusal. Pure; both sides use it.

/// The first line a shim sends: which declared server it stands for.
pub fn hello_line(server: &str) -> String {
    format!(
        "{}\n",
        serde_json::json!({ "mcpBridge": 1, "server": server })
    )
}

/// Reads the server id out of a shim's first line.
pub fn read_hello(line: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(line).ok()?;
    (v.get("mcpBridge")? == 1)
        .then(|| v.get("server")?.as_str().map(str::to_string))
        .flatten()
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
        assert_eq!(
            read_hello(line.trim_end().as_bytes()).as_deref(),
            Some("notes-1")
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
