//! MCP server declarations in session setup requests: finding the `"type":"acp"` ones and
//! rewriting them into stdio servers that run the bridge shim, or http servers on the
//! conductor's listener. Pure; every other byte is kept.

use acp_wire::RawValue;
use acp_wire::splice::{Members, set_path};

/// The requests whose `params.mcpServers` declare the session's MCP servers.
pub fn is_session_setup(method: &str) -> bool {
    matches!(
        method,
        "session/new" | "session/load" | "session/resume" | "session/fork"
    )
}

/// Which member names the server's id: the RFD's `id`, or `serverId` (the SDK generations
/// that address servers by `serverId`, with or without `mcp/connect`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdField {
    Id,
    ServerId,
}

impl IdField {
    /// The member of `mcp/connect` params that names the server in this generation.
    pub fn connect_member(self) -> &'static str {
        match self {
            IdField::Id => "acpId",
            IdField::ServerId => "serverId",
        }
    }
}

/// One `{"type":"acp","name":...,"id"|"serverId":...}` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcpDeclaration {
    pub id: String,
    pub name: String,
    pub field: IdField,
}

/// The acp declarations in a session setup request's params, in order. Entries of other
/// types, and malformed ones, are not ours and are skipped.
pub fn acp_declarations(params: Option<&RawValue>) -> Vec<AcpDeclaration> {
    servers(params)
        .iter()
        .filter_map(|entry| read_acp(entry))
        .collect()
}

/// One entry of a session's `mcpServers`, as far as a name collision needs to know it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Declared {
    Acp(AcpDeclaration),
    /// A server of another transport: its `type`, or `stdio` when it has none.
    Other {
        name: String,
        kind: String,
    },
}

impl Declared {
    pub fn name(&self) -> &str {
        match self {
            Declared::Acp(d) => &d.name,
            Declared::Other { name, .. } => name,
        }
    }
}

/// The first server name declared more than once in a session setup where one of those
/// declarations is an acp one, with every entry that declares it. Two servers of one name
/// are ambiguous to the agent, which addresses tools by server name; when a proxy's server is
/// one of them the conductor refuses the setup (as the official conductor does) rather than
/// let the agent pick one. Collisions among the editor's own non-acp servers are the
/// editor's to sort out and pass unchanged.
pub fn name_collision(params: Option<&RawValue>) -> Option<(String, Vec<Declared>)> {
    let entries: Vec<Declared> = servers(params)
        .iter()
        .filter_map(|entry| match read_acp(entry) {
            Some(d) => Some(Declared::Acp(d)),
            None => {
                let members = Members::of(entry)?;
                let string = |key: &str| {
                    members
                        .get(key)
                        .and_then(|v| serde_json::from_str::<String>(v.get()).ok())
                };
                Some(Declared::Other {
                    name: string("name")?,
                    kind: string("type").unwrap_or_else(|| "stdio".into()),
                })
            }
        })
        .collect();
    entries.iter().enumerate().find_map(|(i, first)| {
        let same: Vec<Declared> = entries[i..]
            .iter()
            .filter(|e| e.name() == first.name())
            .cloned()
            .collect();
        let involves_acp = same.iter().any(|e| matches!(e, Declared::Acp(_)));
        (same.len() > 1 && involves_acp).then(|| (first.name().to_string(), same))
    })
}

/// `params` with every acp declaration replaced by the JSON text `to_stdio` returns for it;
/// `None` when there is nothing to replace. Other entries and members keep their bytes.
pub fn rewrite(
    params: &RawValue,
    mut to_stdio: impl FnMut(&AcpDeclaration) -> String,
) -> Option<String> {
    let entries = servers(Some(params));
    let mut replaced = false;
    let mut array = String::from("[");
    for (i, entry) in entries.iter().enumerate() {
        if i > 0 {
            array.push(',');
        }
        match read_acp(entry) {
            Some(declaration) => {
                replaced = true;
                array.push_str(&to_stdio(&declaration));
            }
            None => array.push_str(entry.get()),
        }
    }
    array.push(']');
    replaced.then(|| set_path(params, &["mcpServers"], &array))
}

/// A stdio server declaration: `{"name","command","args","env":[]}`.
pub fn stdio_server(name: &str, command: &str, args: &[String]) -> String {
    let text = |s: &str| serde_json::to_string(s).expect("a string serializes");
    let args: Vec<String> = args.iter().map(|a| text(a)).collect();
    format!(
        "{{\"name\":{},\"command\":{},\"args\":[{}],\"env\":[]}}",
        text(name),
        text(command),
        args.join(",")
    )
}

/// An http server declaration: `{"type":"http","name","url","headers":[{"name","value"}]}`.
pub fn http_server(name: &str, url: &str, headers: &[(String, String)]) -> String {
    let headers: Vec<serde_json::Value> = headers
        .iter()
        .map(|(name, value)| serde_json::json!({ "name": name, "value": value }))
        .collect();
    let text = |s: &str| serde_json::to_string(s).expect("a string serializes");
    format!(
        "{{\"type\":\"http\",\"name\":{},\"url\":{},\"headers\":{}}}",
        text(name),
        text(url),
        serde_json::Value::Array(headers)
    )
}

fn servers(params: Option<&RawValue>) -> Vec<&RawValue> {
    params
        .and_then(Members::of)
        .and_then(|m| m.get("mcpServers"))
        .and_then(|s| serde_json::from_str::<Vec<&RawValue>>(s.get()).ok())
        .unwrap_or_default()
}

fn read_acp(entry: &RawValue) -> Option<AcpDeclaration> {
    let members = Members::of(entry)?;
    let string = |key: &str| -> Option<String> {
        members
            .get(key)
            .and_then(|v| serde_json::from_str::<String>(v.get()).ok())
    };
    if string("type").as_deref() != Some("acp") {
        return None;
    }
    let name = string("name")?;
    let (id, field) = match (string("id"), string("serverId")) {
        (Some(id), _) => (id, IdField::Id),
        (None, Some(id)) => (id, IdField::ServerId),
        (None, None) => return None,
    };
    Some(AcpDeclaration { id, name, field })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_string()).unwrap()
    }

    #[test]
    fn a_name_declared_twice_with_an_acp_server_among_them_collides() {
        let p = raw(r#"{"mcpServers":[
                {"name":"files","command":"x","args":[],"env":[]},
                {"type":"http","name":"notes","url":"http://h","headers":[]},
                {"type":"acp","name":"notes","serverId":"n-1"},
                {"type":"acp","name":"files2","serverId":"f-2"}]}"#);
        let (name, entries) = name_collision(Some(&p)).expect("a collision");
        assert_eq!(name, "notes");
        assert_eq!(
            entries,
            vec![
                Declared::Other {
                    name: "notes".into(),
                    kind: "http".into()
                },
                Declared::Acp(AcpDeclaration {
                    id: "n-1".into(),
                    name: "notes".into(),
                    field: IdField::ServerId
                }),
            ]
        );
        let two_acp = raw(r#"{"mcpServers":[
                {"type":"acp","name":"t","id":"1"},{"type":"acp","name":"t","serverId":"2"}]}"#);
        assert_eq!(name_collision(Some(&two_acp)).unwrap().1.len(), 2);
    }

    #[test]
    fn distinct_names_and_the_editors_own_duplicates_do_not_collide() {
        for params in [
            r#"{"mcpServers":[{"type":"acp","name":"a","serverId":"1"},{"type":"acp","name":"b","serverId":"2"}]}"#,
            r#"{"mcpServers":[{"name":"s","command":"x","args":[],"env":[]},{"type":"http","name":"s","url":"u","headers":[]}]}"#,
            r#"{"mcpServers":[]}"#,
            r#"{"cwd":"/"}"#,
        ] {
            assert_eq!(name_collision(Some(&raw(params))), None, "{params}");
        }
        assert_eq!(name_collision(None), None);
    }

    #[test]
    fn setup_methods() {
        for m in [
            "session/new",
            "session/load",
            "session/resume",
            "session/fork",
        ] {
            assert!(is_session_setup(m), "{m}");
        }
        assert!(!is_session_setup("session/prompt"));
        assert!(!is_session_setup("session/list"));
    }

    #[test]
    fn finds_both_id_fields_and_skips_others() {
        let p = raw(r#"{"cwd":"/","mcpServers":[
                {"type":"acp","name":"a","id":"1"},
                {"name":"stdio","command":"x","args":[],"env":[]},
                {"type":"http","name":"h","url":"http://x","headers":[]},
                {"type":"acp","name":"b","serverId":"2"},
                {"type":"acp","name":"no-id"},
                {"type":"acp","id":"no-name"},
                {"type":"acp","name":"num","id":7}
            ]}"#);
        assert_eq!(
            acp_declarations(Some(&p)),
            vec![
                AcpDeclaration {
                    id: "1".into(),
                    name: "a".into(),
                    field: IdField::Id
                },
                AcpDeclaration {
                    id: "2".into(),
                    name: "b".into(),
                    field: IdField::ServerId
                },
            ]
        );
    }

    #[test]
    fn id_wins_over_server_id_when_both_are_present() {
        let p = raw(r#"{"mcpServers":[{"type":"acp","name":"a","id":"x","serverId":"y"}]}"#);
        let d = acp_declarations(Some(&p));
        assert_eq!(d[0].id, "x");
        assert_eq!(d[0].field, IdField::Id);
    }

    #[test]
    fn no_servers_is_empty() {
        assert!(acp_declarations(None).is_empty());
        assert!(acp_declarations(Some(&raw(r#"{"cwd":"/"}"#))).is_empty());
        assert!(acp_declarations(Some(&raw(r#"{"mcpServers":{}}"#))).is_empty());
        assert!(acp_declarations(Some(&raw("[]"))).is_empty());
    }

    #[test]
    fn rewrite_replaces_only_acp_entries_and_keeps_bytes() {
        let p = raw(
            r#"{"cwd":"/w","mcpServers":[{"name":"s","command":"c","args":["1"],"env":[]},{"type":"acp","name":"notes","id":"n-1"}],"_meta":{"big":9007199254740993}}"#,
        );
        let out = rewrite(&p, |d| {
            stdio_server(&d.name, "/bin/shim", &["mcp-bridge".into(), d.id.clone()])
        })
        .unwrap();
        assert_eq!(
            out,
            r#"{"cwd":"/w","mcpServers":[{"name":"s","command":"c","args":["1"],"env":[]},{"name":"notes","command":"/bin/shim","args":["mcp-bridge","n-1"],"env":[]}],"_meta":{"big":9007199254740993}}"#
        );
        let parsed: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(parsed["mcpServers"][1]["name"], "notes");
    }

    #[test]
    fn http_server_declaration() {
        let out = http_server(
            "notes",
            "http://127.0.0.1:4000/mcp/t/0",
            &[("Authorization".into(), "Bearer s".into())],
        );
        assert_eq!(
            out,
            r#"{"type":"http","name":"notes","url":"http://127.0.0.1:4000/mcp/t/0","headers":[{"name":"Authorization","value":"Bearer s"}]}"#
        );
    }

    #[test]
    fn rewrite_without_acp_entries_is_none() {
        let p = raw(r#"{"mcpServers":[{"name":"s","command":"c","args":[],"env":[]}]}"#);
        assert!(rewrite(&p, |_| unreachable!()).is_none());
        assert!(rewrite(&raw(r#"{"cwd":"/"}"#), |_| unreachable!()).is_none());
    }
}
