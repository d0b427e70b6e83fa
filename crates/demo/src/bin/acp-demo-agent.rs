//! `acp-demo-agent`: the demo agent speaking ACP on its own stdin and stdout, which is how
//! `[agent] builtin = "demo"` runs it. Logs go to stderr (`ACP_DEMO_LOG`, then `RUST_LOG`,
//! default `warn`).

use std::process::ExitCode;

const LOG_VARIABLES: [&str; 2] = ["ACP_DEMO_LOG", "RUST_LOG"];

fn main() -> ExitCode {
    let spec = acp_demo::logging::filter_spec(None, &LOG_VARIABLES, "warn");
    acp_demo::logging::init("acp-demo-agent", &spec, "warn");
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
