//! `wasm-pass`: a proxy that passes everything through unchanged, built on `proxy-kit` with no
//! hook. The same source runs natively and as WASM, which is what the WASM benchmark compares.

use std::process::ExitCode;

use proxy_kit::Proxy;

struct PassThrough;

impl Proxy for PassThrough {}

fn main() -> ExitCode {
    proxy_kit::log::init("wasm-pass", None);
    proxy_kit::run(PassThrough)
}
