//! `bench-proxy`: a pass-through ACP proxy (proxy-chains RFD) for benchmarks: forwards
//! everything, changes nothing. Speaks `proxy/*` or `_proxy/*`, whichever it is initialized
//! with. No options. Exits at end of input.

use std::process::ExitCode;

use acp_bench::proxy::PassThroughProxy;
use acp_bench::stdio_loop;

fn main() -> ExitCode {
    if std::env::args().len() > 1 {
        eprintln!("usage: bench-proxy");
        return ExitCode::from(2);
    }
    let mut proxy = PassThroughProxy::default();
    match stdio_loop::serve(|frame, out| proxy.handle(frame, out)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench-proxy: {e}");
            ExitCode::FAILURE
        }
    }
}
