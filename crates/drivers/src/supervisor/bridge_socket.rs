//! The private channel bridge shims dial back on: a Unix socket in a fresh per-run directory
//! only our user can enter (mode 0700), removed when the run ends. Never a network port.
//! Each connection becomes a link; what the shim says is the router's business.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use tokio::net::UnixListener;
use tokio::sync::mpsc;

use acp_link::event::Event;
use acp_link::{LinkDone, Links};

/// The listening socket and its directory; both go away on drop.
#[derive(Debug)]
pub struct BridgeSocket {
    dir: PathBuf,
    path: PathBuf,
    accept: tokio::task::JoinHandle<()>,
    /// The links of the shims that connected, to let their last writes finish at the end.
    shims: Arc<Mutex<Vec<LinkDone>>>,
}

impl BridgeSocket {
    /// Creates the directory and starts accepting; each shim that connects gets a link,
    /// announced as [`Event::ShimConnected`]. Must be called inside the runtime.
    pub fn open(links: Links, events: mpsc::Sender<Event>) -> std::io::Result<BridgeSocket> {
        let dir = private_dir(&std::env::temp_dir())?;
        let path = dir.join("bridge.sock");
        let listener = match UnixListener::bind(&path) {
            Ok(l) => l,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        let links = links.held();
        let shims = Arc::new(Mutex::new(Vec::new()));
        let connected = shims.clone();
        let accept = acp_link::transport::spawn(async move {
            loop {
                match listener.accept().await {
                    Ok((stream, _)) => {
                        let (from_shim, to_shim) = stream.into_split();
                        let (link, done) = links.streams(from_shim, to_shim);
                        remember(&connected, done);
                        if events.send(Event::ShimConnected(link)).await.is_err() {
                            return;
                        }
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "MCP bridge socket: accept failed");
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    }
                }
            }
        });
        tracing::debug!(path = %path.display(), "MCP bridge socket listening");
        Ok(BridgeSocket {
            dir,
            path,
            accept,
            shims,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Waits until every shim link's writer has delivered what was queued and closed.
    pub async fn shims_written(&self) {
        let shims: Vec<LinkDone> = lock(&self.shims).clone();
        for done in shims {
            done.writer_finished().await;
        }
    }
}

/// Keeps a new shim link's `done`, forgetting those whose writers have finished.
fn remember(shims: &Mutex<Vec<LinkDone>>, done: LinkDone) {
    let mut shims = lock(shims);
    shims.retain(|shim| !shim.writer_has_finished());
    shims.push(done);
}

fn lock(shims: &Mutex<Vec<LinkDone>>) -> std::sync::MutexGuard<'_, Vec<LinkDone>> {
    shims
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Drop for BridgeSocket {
    fn drop(&mut self) {
        self.accept.abort();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A new directory under `parent` with mode 0700. Creation fails rather than reuse a name
/// someone else made, so another user cannot plant the socket's directory.
fn private_dir(parent: &Path) -> std::io::Result<PathBuf> {
    let pid = std::process::id();
    let mut last = None;
    for attempt in 0..16u32 {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = parent.join(format!("acp-conductor-{pid}-{nanos:08x}{attempt}"));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.expect("the loop ran"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[tokio::test]
    async fn directory_is_private_and_removed_on_drop() {
        let (tx, mut rx) = mpsc::channel(4);
        let limits = acp_link::LinkLimits {
            max_line: 1 << 20,
            queue_limit: 1 << 20,
            write_timeout: std::time::Duration::from_secs(5),
        };
        let socket = BridgeSocket::open(Links::new(tx.clone(), limits), tx).unwrap();
        let dir = socket.path().parent().unwrap().to_path_buf();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let _client = tokio::net::UnixStream::connect(socket.path())
            .await
            .unwrap();
        assert!(matches!(rx.recv().await, Some(Event::ShimConnected(_))));
        drop(socket);
        assert!(!dir.exists());
    }

    #[test]
    fn private_dirs_are_distinct() {
        let parent = std::env::temp_dir();
        let a = private_dir(&parent).unwrap();
        let b = private_dir(&parent).unwrap();
        assert_ne!(a, b);
        std::fs::remove_dir(a).unwrap();
        std::fs::remove_dir(b).unwrap();
    }
}
