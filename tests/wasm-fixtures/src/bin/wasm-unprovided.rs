//! `wasm-unprovided`: a pass-through proxy that also imports what a socket library needs from
//! a runtime the conductor is not: WasmEdge's `sock_open` (a function preview 1 does not
//! have) as a preview 1 module. (`wasi:http`, which it imported as a component, is provided
//! now, with every request denied: `wasm-net` uses it.)
//!
//! The conductor does not provide it, so as WASM it must be refused before any of it runs.
//! The import is used only when the proxy is started with `--send`, which no test does;
//! natively, and as a component, there is no such import and the proxy only passes messages
//! through.

use std::process::ExitCode;

use proxy_kit::Proxy;

struct PassThrough;

impl Proxy for PassThrough {}

#[cfg(all(target_family = "wasm", not(target_env = "p2")))]
mod unprovided {
    #[link(wasm_import_module = "wasi_snapshot_preview1")]
    unsafe extern "C" {
        /// WasmEdge's `sock_open(address_family, socket_type, *fd) -> errno`.
        fn sock_open(address_family: i32, socket_type: i32, fd: *mut u32) -> i32;
    }

    /// Opens an IPv4 stream socket.
    pub fn send() {
        let mut fd = 0u32;
        // SAFETY: the import writes one u32 through `fd`.
        let errno = unsafe { sock_open(0, 1, &mut fd) };
        proxy_kit::info!("sock_open: errno {errno}, fd {fd}");
    }
}

#[cfg(not(all(target_family = "wasm", not(target_env = "p2"))))]
mod unprovided {
    /// Natively, and as a component, there is nothing the conductor fails to provide.
    pub fn send() {}
}

fn main() -> ExitCode {
    proxy_kit::log::init("wasm-unprovided", None);
    if std::env::args().any(|arg| arg == "--send") {
        unprovided::send();
    }
    proxy_kit::run(PassThrough)
}
