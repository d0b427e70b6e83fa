//! The demo programs shipped with acp-conductor: an offline ACP agent (`acp-demo-agent`, what
//! `[agent] builtin = "demo"` runs) and a one-shot editor (`acp-prompt`, behind
//! `acp-conductor prompt`). Must not know the conductor's internals: they talk to it over ACP only.
#![deny(clippy::print_stdout)]

pub mod agent;
pub mod logging;
pub mod mcp_servers;
pub mod program_search;
pub mod prompt;
