//! Why `trace view` could not draw or serve a trace; `Display` is the text after "trace view: ".
//! Must not know how the command line reports it.

use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    #[error("the page would replace the trace {}: name another with -o", .0.display())]
    WouldReplaceTrace(PathBuf),
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot start the runtime: {0}")]
    Runtime(std::io::Error),
    #[error("cannot start the file follower: {0}")]
    Follower(std::io::Error),
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("serving on {addr}: {source}")]
    Serve {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// A `--serve` value that is not an address.
#[derive(Debug, thiserror::Error)]
#[error("`{0}` is neither host:port (e.g. 127.0.0.1:8917) nor a port")]
pub struct ServeAddrError(pub String);
