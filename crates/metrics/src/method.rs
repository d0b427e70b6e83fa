//! A request's method as a label value: one of the methods ACP (and the conductor's proxy
//! and MCP-over-ACP extensions) defines, else `other`. Knows no envelope: a name in, a label out.

/// The methods a client may ask a served chain, and the ones the chain asks it.
const KNOWN: &[&str] = &[
    "initialize",
    "authenticate",
    "logout",
    "session/new",
    "session/load",
    "session/list",
    "session/prompt",
    "session/cancel",
    "session/close",
    "session/delete",
    "session/fork",
    "session/resume",
    "session/set_mode",
    "session/set_model",
    "session/set_config_option",
    "session/update",
    "session/request_permission",
    "fs/read_text_file",
    "fs/write_text_file",
    "terminal/create",
    "terminal/output",
    "terminal/release",
    "terminal/wait_for_exit",
    "terminal/kill",
    "proxy/initialize",
    "proxy/successor",
    "mcp/connect",
    "mcp/message",
    "mcp/disconnect",
    "$/cancel_request",
];

/// The label for `method`: itself when ACP defines it, `other` for anything else (an
/// extension's `_vendor/...`, a typo, a client's free text), so the series stay bounded.
pub fn method_label(method: &str) -> &'static str {
    KNOWN
        .iter()
        .find(|known| **known == method)
        .copied()
        .unwrap_or("other")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_methods_are_kept_and_the_rest_is_other() {
        assert_eq!(method_label("session/prompt"), "session/prompt");
        assert_eq!(method_label("initialize"), "initialize");
        assert_eq!(method_label("_acme/secret"), "other");
        assert_eq!(method_label("session/prompt "), "other");
        assert_eq!(method_label(""), "other");
    }
}
