//! `acp-notes-proxy`: an ACP proxy giving the agent per-session notes tools through an MCP
//! server over ACP, declared into every session it forwards. Argument parsing only here.
//!
//! Run it as a `[[proxy]]` of a conductor:
//!
//! ```text
//! acp-notes-proxy [--name NAME] [--log-level LEVEL]
//! ```
//!
//! To every `session/new`, `session/load`, `session/resume` and `session/fork` it forwards, it
//! adds `{"type":"acp","name":"notes","serverId":"notes-<n>"}` to `mcpServers`, then answers
//! the connectionless `mcp/message {serverId, requestId, method, params}` of ACP schema 1.20 for
//! that id itself, with `{"result": ...}` or `{"error": ...}` (an inner MCP error is not an ACP
//! error). `mcp/connect` and `mcp/disconnect`, gone from the schema, are answered with -32601,
//! which sends the conductor's bridge connectionless too. The MCP server speaks the stateless
//! revision 2026-07-28 (`server/discover`) as well as the `initialize` handshake, and offers
//! three tools on the notes of the ACP session it was declared in:
//!
//! - `remember {"note": string}`: stores a note (at most 4096 bytes, 1000 notes per session);
//! - `recall {}`: lists the session's notes, numbered from 1;
//! - `forget {"number": integer}`: removes one note.
//!
//! A forked session starts with a copy of its parent's notes; a loaded or resumed session finds
//! the notes it had in this process. Notes live in memory only: the proxy needs no file system,
//! clock or network, and runs the same as `wasm32-wasip1` / `wasm32-wasip2` with nothing granted.

mod mcp;
mod proxy;
mod tools;

use std::process::ExitCode;

use clap::Parser;
use proxy_kit::log::Level;

use crate::proxy::NotesProxy;

/// Gives an ACP agent per-session notes tools (remember, recall, forget) through an MCP server
/// over ACP. Run it as a `[[proxy]]` of a conductor.
#[derive(Parser, Debug)]
#[command(name = "acp-notes-proxy", version)]
struct Args {
    /// The MCP server's name as the agent sees it; server ids are `<NAME>-<n>`.
    #[arg(long, value_name = "NAME", default_value = "notes", value_parser = server_name)]
    name: String,
    /// Log level on stderr (off, error, warn, info, debug, trace); default: $ACP_PROXY_LOG or info.
    #[arg(long, value_name = "LEVEL")]
    log_level: Option<Level>,
}

/// Agents build tool names from server names (`mcp__notes__remember`), so keep them plain.
fn server_name(text: &str) -> Result<String, NotAServerName> {
    let plain = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    if text.is_empty() || text.len() > 64 || !text.chars().all(plain) {
        return Err(NotAServerName);
    }
    Ok(text.to_string())
}

/// A `--name` agents could not build tool names from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("use 1 to 64 ASCII letters, digits, `-` or `_`")]
struct NotAServerName;

fn main() -> ExitCode {
    let args = Args::parse();
    proxy_kit::log::init("notes", args.log_level);
    proxy_kit::info!(
        "serving notes tools as MCP server `{}` in every session",
        args.name
    );
    proxy_kit::run(NotesProxy::new(args.name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_names_are_plain() {
        assert_eq!(server_name("notes").as_deref(), Ok("notes"));
        assert_eq!(server_name("my_notes-2").as_deref(), Ok("my_notes-2"));
        assert_eq!(server_name(&"a".repeat(64)).map(|s| s.len()), Ok(64));
        for bad in ["", "my notes", "n\"x", "nötes", "a/b", &"a".repeat(65)] {
            assert!(server_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn arguments_parse() {
        let args = Args::try_parse_from(["acp-notes-proxy"]).unwrap();
        assert_eq!(args.name, "notes");
        assert_eq!(args.log_level, None);
        let args =
            Args::try_parse_from(["acp-notes-proxy", "--name", "memo", "--log-level", "debug"])
                .unwrap();
        assert_eq!(args.name, "memo");
        assert_eq!(args.log_level, Some(Level::Debug));
        assert!(Args::try_parse_from(["acp-notes-proxy", "--name", "a b"]).is_err());
    }
}
