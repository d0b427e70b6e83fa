//! `wasm-unprovided`: a pass-through proxy that also imports what an HTTP client needs from
//! a runtime the conductor is not: `wasi:http/outgoing-handler` as a WASI 0.2 component, and
//! WasmEdge's `sock_open` (a function preview 1 does not have) as a preview 1 module.
//!
//! The conductor provides neither, so as WASM it must be refused before any of it runs. The
//! import is used only when the proxy is started with `--send`, which no test does; natively
//! there is no such import and the proxy only passes messages through.

use std::process::ExitCode;

use proxy_kit::Proxy;

struct PassThrough;

impl Proxy for PassThrough {}

#[cfg(all(target_family = "wasm", target_env = "p2"))]
mod unprovided {
    #[link(wasm_import_module = "wasi:http/outgoing-handler@0.2.0")]
    unsafe extern "C" {
        /// `handle(request, options) -> result<future-incoming-response, error-code>`,
        /// lowered: the request's handle, the option's tag and handle, where to write the result.
        #[link_name = "handle"]
        fn handle(request: i32, has_options: i32, options: i32, result: *mut u8);
    }

    /// Sends request handle 0, which the guest never got: the host would refuse it.
    pub fn send() {
        let mut result = [0u8; 64];
        // SAFETY: the import writes at most its result record into `result`.
        unsafe { handle(0, 0, 0, result.as_mut_ptr()) }
    }
}

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

#[cfg(not(target_family = "wasm"))]
mod unprovided {
    /// Natively there is nothing the conductor could fail to provide.
    pub fn send() {}
}

fn main() -> ExitCode {
    proxy_kit::log::init("wasm-unprovided", None);
    if std::env::args().any(|arg| arg == "--send") {
        unprovided::send();
    }
    proxy_kit::run(PassThrough)
}
