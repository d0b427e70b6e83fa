//! `bench-agent`: a minimal, fast ACP agent for benchmarks. Answers `initialize`,
//! `session/new` and `session/prompt`; a prompt whose text is `stream K B` first gets K
//! `agent_message_chunk` updates of B bytes of text each.
//!
//! Options: `--stream K B` streams that for every other prompt too. Exits at end of input.

use std::process::ExitCode;

use acp_bench::agent::BenchAgent;
use acp_bench::messages::StreamSpec;
use acp_bench::stdio_loop;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let default_stream = match args.as_slice() {
        [] => None,
        [flag, updates, bytes] if flag == "--stream" => match (updates.parse(), bytes.parse()) {
            (Ok(updates), Ok(bytes)) => Some(StreamSpec { updates, bytes }),
            _ => return usage(),
        },
        _ => return usage(),
    };
    let mut agent = BenchAgent::new(default_stream);
    match stdio_loop::serve(|frame, out| agent.handle(frame, out)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench-agent: {e}");
            ExitCode::FAILURE
        }
    }
}

fn usage() -> ExitCode {
    eprintln!("usage: bench-agent [--stream UPDATES BYTES]");
    ExitCode::from(2)
}
