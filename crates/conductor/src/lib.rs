//! acp-conductor: runs a chain of ACP proxies and an agent and presents it to the editor
//! as one ACP agent. Must not know what proxies do with the messages it routes.
#![deny(clippy::print_stdout)]

pub mod cache_dir;
pub mod cli;
pub mod config;
mod config_watch;
pub mod doctor;
pub mod logging;
pub mod mcp;
mod otlp;
pub mod prompt_command;
pub mod registry;
mod resident;
pub mod run;
pub mod serve;
mod signals;
pub mod suggest;
pub mod trace_command;
