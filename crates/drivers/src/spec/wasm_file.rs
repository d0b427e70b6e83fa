//! Recognises a `.wasm` file as a WebAssembly core module or component from its header.
//! Must not know how either is compiled or run: it reads eight bytes and nothing more.

use std::io::Read;
use std::path::Path;

/// The two kinds of binary a WASM proxy may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WasmKind {
    /// A core module, as `wasm32-wasip1` produces: run with the WASI preview 1 imports.
    Module,
    /// A component, as `wasm32-wasip2` produces: run with the WASI 0.2 interfaces.
    Component,
}

const MAGIC: &[u8; 4] = b"\0asm";
/// Version 1, layer 0 (little-endian u16 pairs).
const MODULE_VERSION: [u8; 4] = [1, 0, 0, 0];
/// Version 0x0d, layer 1: the component binary format.
const COMPONENT_VERSION: [u8; 4] = [0x0d, 0, 1, 0];

impl WasmKind {
    /// The kind announced by the first eight bytes of `bytes`, if they are a WebAssembly header.
    pub fn detect(bytes: &[u8]) -> Option<WasmKind> {
        let header = bytes.get(..8)?;
        if &header[..4] != MAGIC {
            return None;
        }
        match [header[4], header[5], header[6], header[7]] {
            MODULE_VERSION => Some(WasmKind::Module),
            COMPONENT_VERSION => Some(WasmKind::Component),
            _ => None,
        }
    }

    /// Reads the header of the file at `path`; the error says what is wrong with the file.
    pub fn of_file(path: &Path) -> Result<WasmKind, WasmFileError> {
        let unreadable = |error| WasmFileError::Unreadable {
            path: path.to_path_buf(),
            source: error,
        };
        let mut file = std::fs::File::open(path).map_err(unreadable)?;
        let metadata = file.metadata().map_err(unreadable)?;
        if !metadata.is_file() {
            return Err(WasmFileError::NotAFile(path.to_path_buf()));
        }
        let mut header = [0u8; 8];
        let mut filled = 0;
        while filled < header.len() {
            match file.read(&mut header[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) => return Err(unreadable(error)),
            }
        }
        WasmKind::detect(&header[..filled])
            .ok_or_else(|| WasmFileError::NotWasm(path.to_path_buf()))
    }

    /// How the kind is named in summaries and logs.
    pub fn describe(self) -> &'static str {
        match self {
            WasmKind::Module => "WASI preview 1 module",
            WasmKind::Component => "WASI 0.2 component",
        }
    }
}

/// Why a `.wasm` file is not a proxy that can be run.
#[derive(Debug, thiserror::Error)]
pub enum WasmFileError {
    #[error("cannot read {}: {source}", path.display())]
    Unreadable {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not a file", .0.display())]
    NotAFile(std::path::PathBuf),
    #[error(
        "{} is not a WebAssembly module or component (build the proxy for wasm32-wasip1 or \
         wasm32-wasip2)",
        .0.display()
    )]
    NotWasm(std::path::PathBuf),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_told_apart() {
        assert_eq!(
            WasmKind::detect(b"\0asm\x01\0\0\0rest"),
            Some(WasmKind::Module)
        );
        assert_eq!(
            WasmKind::detect(b"\0asm\x0d\0\x01\0"),
            Some(WasmKind::Component)
        );
        assert_eq!(WasmKind::detect(b"\0asm\x02\0\0\0"), None);
        assert_eq!(WasmKind::detect(b"\x7fELF\x02\x01\x01\0"), None);
        assert_eq!(WasmKind::detect(b"\0asm"), None);
    }
}
