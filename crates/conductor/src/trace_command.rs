//! `acp-conductor trace view`: the command line of the trace viewer (`acp_trace_view`), which
//! draws a trace file as one page, written to a file or served live.

use std::net::SocketAddr;
use std::path::PathBuf;

pub use acp_trace_view::ViewError;
use acp_trace_view::{self as view, ServeAddrError};

use acp_drivers::runtime::{self, RuntimeKind};
use clap::{Args, Subcommand};

#[derive(Debug, Args)]
pub struct TraceArgs {
    #[command(subcommand)]
    command: TraceCommand,
}

#[derive(Debug, Subcommand)]
enum TraceCommand {
    /// Draw a trace as a sequence diagram: one HTML page, no network, or served live.
    View {
        /// The trace file (JSON lines, as written by `run --trace FILE`).
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Where to write the page (default: FILE with the extension `.html`).
        #[arg(short, long, value_name = "HTML", conflicts_with = "serve")]
        output: Option<PathBuf>,
        /// Serve the page over HTTP and follow FILE as it grows, until Ctrl-C. ADDR is
        /// `host:port` or a port on 127.0.0.1; binds only that address.
        #[arg(
            long,
            value_name = "ADDR",
            num_args = 0..=1,
            default_missing_value = DEFAULT_SERVE,
            value_parser = parse_serve_addr
        )]
        serve: Option<SocketAddr>,
    },
}

/// Where `--serve` without a value listens.
const DEFAULT_SERVE: &str = "127.0.0.1:8917";

fn parse_serve_addr(text: &str) -> Result<SocketAddr, ServeAddrError> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.parse().map_err(|_| ServeAddrError(text.to_owned()))
}

/// Runs `trace view`; what it did goes to stderr, and why it failed is returned.
pub fn main(args: TraceArgs, log: Option<&str>) -> Result<(), ViewError> {
    crate::logging::init(log, "info");
    match args.command {
        TraceCommand::View {
            file,
            output: _,
            serve: Some(addr),
        } => runtime::run_on_main_thread(RuntimeKind::OneThread, |_| async move {
            view::serve(&file, addr).await
        })
        .map_err(ViewError::Runtime)?,
        TraceCommand::View {
            file,
            output,
            serve: None,
        } => {
            let output = output.unwrap_or_else(|| file.with_extension("html"));
            if output == file {
                return Err(ViewError::WouldReplaceTrace(file));
            }
            let records = view::write_page(&file, &output)?;
            eprintln!(
                "trace view: {records} records from {} drawn in {}",
                file.display(),
                output.display()
            );
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serve_accepts_a_port_alone_or_host_and_port() {
        assert_eq!(
            parse_serve_addr("9000").unwrap(),
            "127.0.0.1:9000".parse::<SocketAddr>().unwrap()
        );
        assert_eq!(
            parse_serve_addr("[::1]:9000").unwrap(),
            "[::1]:9000".parse::<SocketAddr>().unwrap()
        );
        assert!(parse_serve_addr("localhost").is_err());
    }
}
