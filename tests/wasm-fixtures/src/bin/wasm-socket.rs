//! `wasm-socket`: a proxy that tries to open a TCP connection as soon as it starts. It must
//! never succeed in the sandbox; it says what happened on stderr and exits 3 when refused.

use std::net::TcpStream;
use std::process::ExitCode;

fn main() -> ExitCode {
    let target = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:9".to_owned());
    match TcpStream::connect(&target) {
        Ok(_) => {
            eprintln!("wasm-socket: connected to {target}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("wasm-socket: connect to {target} failed: {error}");
            ExitCode::from(3)
        }
    }
}
