//! Why a WASM proxy could not be loaded, and why a compile-cache entry was not used or not
//! written. Worded for a person; must not know the chain.
//!
//! wasmtime's errors are kept as they are and shown in wasmtime's words (`{:#}`: with their
//! causes where the message alone says little).

use std::io;
use std::path::PathBuf;

use super::download::DownloadError;
use super::needs::UnmetNeed;

/// Why a WASM proxy could not be loaded (read, compiled, linked or instantiated); its exit
/// reason is "could not be loaded: " and this.
#[derive(Debug, thiserror::Error)]
pub enum WasmError {
    #[error("reading failed: {0}")]
    ReadTask(#[source] tokio::task::JoinError),
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(transparent)]
    Download(#[from] DownloadError),
    #[error("{} is not a WebAssembly module or component", .0.display())]
    NotWasm(PathBuf),
    #[error("compilation failed: {0}")]
    CompileTask(#[source] tokio::task::JoinError),
    #[error(transparent)]
    Compile(#[from] CompileError),
    #[error("exports no `_start`: build the proxy as a WASI command (a binary)")]
    NoStart,
    #[error("cannot open {} for the guest: {error}", dir.display())]
    Preopen {
        dir: PathBuf,
        error: wasmtime::Error,
    },
    /// An import or a feature the host does not provide, found before compiling (the same
    /// words as `check`'s and `doctor`'s).
    #[error(transparent)]
    Needs(#[from] UnmetNeed),
    #[error("cannot link WASI preview 1: {0}")]
    LinkPreview1(wasmtime::Error),
    /// A module importing a function preview 1 does not have.
    #[error("{0:#}: a WASM proxy is given only WASI preview 1")]
    NotPreview1(wasmtime::Error),
    #[error("cannot link WASI 0.2: {0}")]
    LinkWasi02(wasmtime::Error),
    /// A component the linker cannot instantiate, in wasmtime's words.
    #[error("{0:#}")]
    Instantiate(wasmtime::Error),
}

/// Why a `.wasm` file's bytes do not compile. Shared by every proxy of the run using the
/// same file, hence cheap to clone.
#[derive(Debug, Clone, thiserror::Error)]
#[error("is not a valid {kind}: {detail}")]
pub struct CompileError {
    /// "WebAssembly module" or "WebAssembly component".
    pub kind: &'static str,
    /// wasmtime's error with its causes.
    pub detail: String,
}

/// Why the compile cache was not used for an entry, or could not keep one; logged, never a
/// failure of the proxy.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("no cache directory is configured")]
    NoDirectory,
    #[error("cannot create the cache directory {}: {source}", dir.display())]
    CreateDirectory {
        dir: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("the cache directory {} belongs to another user", .0.display())]
    DirectoryOfAnotherUser(PathBuf),
    #[error("the cache directory {} is writable by other users", .0.display())]
    DirectoryWritableByOthers(PathBuf),
    /// The metadata of a file or directory the cache checks could not be read.
    #[error("{0}")]
    Metadata(#[source] io::Error),
    #[error("{} is not a private file of this user", .0.display())]
    NotPrivate(PathBuf),
    #[error("{} is readable by other users", .0.display())]
    KeyReadableByOthers(PathBuf),
    #[error("cannot open the cache key {}: {source}", path.display())]
    OpenKey {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot read the cache key {}: {source}", path.display())]
    ReadKey {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot read /dev/urandom: {0}")]
    Random(#[source] io::Error),
    #[error("cannot create the cache key {}: {source}", path.display())]
    CreateKey {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot open {}: {source}", path.display())]
    OpenEntry {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot read {}: {source}", path.display())]
    ReadEntry {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{} is not a cache entry", .0.display())]
    NotAnEntry(PathBuf),
    #[error("{} fails its integrity check (corrupt, or not written by this conductor)", .0.display())]
    Integrity(PathBuf),
    #[error("{} cannot be loaded: {error}", path.display())]
    Deserialize {
        path: PathBuf,
        error: wasmtime::Error,
    },
    #[error("cannot serialize the compiled code: {0}")]
    Serialize(wasmtime::Error),
    #[error("cannot write {}: {source}", path.display())]
    WriteEntry {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}
