//! `acp-demo-agent`: the demo agent speaking ACP on its own stdin and stdout, which is how
//! `[agent] builtin = "demo"` runs it. Logs go to stderr, filtered by `ACP_DEMO_LOG`, then
//! `RUST_LOG`, else [`DEFAULT_LOG`].

use std::process::ExitCode;

use acp_demo::logging::{self, LogStyle};

const LOG_VARIABLES: [&str; 2] = ["ACP_DEMO_LOG", "RUST_LOG"];
/// The agent's own `info` lines (MCP servers started and ready), which a conductor shows at
/// its `--log info` like any component's; rmcp's chatter about each connection only on request.
const DEFAULT_LOG: &str = "info,rmcp=warn";

fn main() -> ExitCode {
    let spec = logging::filter_spec(None, &LOG_VARIABLES, DEFAULT_LOG);
    let _in_use = logging::init("acp-demo-agent", &spec, DEFAULT_LOG, LogStyle::Component);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("acp-demo-agent: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let served = runtime.block_on(acp_demo::agent::serve(
        tokio::io::stdin(),
        tokio::io::stdout(),
    ));
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("acp-demo-agent: the connection failed: {e}");
            ExitCode::FAILURE
        }
    }
}
