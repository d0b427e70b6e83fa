//! `trace view FILE --serve ADDR`: the page over HTTP, with FILE followed as it grows.
//!
//! Protocol (long-poll, plain JSON; no streaming body for a client to parse):
//! - `GET /` is the page with the records read so far and `{"live":{generation, next}}`.
//! - `GET /records?from=N&generation=G` answers as soon as there is a record past the first N
//!   (or after 25 s, or at shutdown) with
//!   `{"generation":G,"from":N,"next":M,"records":[...]}`, at most [`BATCH`] records; when
//!   the file was truncated or replaced since generation G it answers `{"generation":G2,
//!   "reset":true}` and the page starts again from `/`.
//!
//! The file is polled (every [`POLL`]) by a thread of its own: a trace grows by lines, a
//! line becomes a record when its newline is written, and a stat per poll costs nothing.
//! axum because issue 17's HTTP transport brings it anyway; HTTP/1 on tokio only.

use std::io::{Read, Seek, SeekFrom};
use std::net::SocketAddr;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio::sync::watch;

use super::ViewError;
use super::page::{LiveConfig, page};
use super::split_records_from;

/// How often the file is looked at.
const POLL: Duration = Duration::from_millis(200);
/// How long a `/records` request waits for something new before answering with nothing.
const LONG_POLL: Duration = Duration::from_secs(25);
/// The most records one `/records` answer carries.
const BATCH: usize = 20_000;

/// What has been read of the file.
#[derive(Default)]
struct Followed {
    generation: u64,
    records: Vec<String>,
}

struct Shared {
    title: String,
    followed: Mutex<Followed>,
    /// `(generation, records)` after each change.
    changes: watch::Sender<(u64, usize)>,
    /// Becomes true when the server stops: pending long polls answer at once.
    stopping: watch::Receiver<bool>,
}

/// Serves the page of `file` on `addr`, following the file as it grows, until Ctrl-C.
pub async fn serve(file: &Path, addr: SocketAddr) -> Result<(), ViewError> {
    let (stop_tx, stop_rx) = watch::channel(false);
    let (changes, _) = watch::channel((0, 0));
    let shared = Arc::new(Shared {
        title: file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        followed: Mutex::new(Followed::default()),
        changes,
        stopping: stop_rx.clone(),
    });
    let stop_rx_follower = stop_rx;
    let mut follower = Follower::new(file);
    // The first reading is done before the first page is served.
    follower.poll(&shared)?;
    {
        let shared = shared.clone();
        let stopping = stop_rx_follower;
        std::thread::Builder::new()
            .name("trace-follow".into())
            .spawn(move || {
                while !*stopping.borrow() {
                    std::thread::sleep(POLL);
                    if let Err(e) = follower.poll(&shared) {
                        tracing::warn!("{e}");
                    }
                }
            })
            .map_err(ViewError::Follower)?;
    }

    let cannot_listen = |source| ViewError::Listen { addr, source };
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(cannot_listen)?;
    let bound = listener.local_addr().map_err(cannot_listen)?;
    if !bound.ip().is_loopback() {
        eprintln!(
            "trace view: {bound} is not a loopback address: whoever reaches it can read the trace"
        );
    }
    // One line a script can read the address from (the port when 0 was asked).
    eprintln!(
        "trace view: serving {} on http://{bound}/ (Ctrl-C stops)",
        file.display()
    );

    let app = Router::new()
        .route("/", get(index))
        .route("/records", get(records))
        .fallback(|| async { (StatusCode::NOT_FOUND, "not found\n") })
        .with_state(shared);
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            wait_for_stop_signal().await;
            // Pending long polls answer now, and the follower stops.
            let _ = stop_tx.send(true);
        })
        .await
        .map_err(|source| ViewError::Serve {
            addr: bound,
            source,
        })?;
    eprintln!("trace view: stopped");
    Ok(())
}

/// Ctrl-C (SIGINT) or SIGTERM.
async fn wait_for_stop_signal() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = async {
            match term.as_mut() {
                Some(term) => { term.recv().await; }
                None => std::future::pending().await,
            }
        } => {}
    }
}

async fn index(State(shared): State<Arc<Shared>>) -> Response {
    let html = {
        let followed = shared.followed.lock().expect("follower lock");
        page(
            &followed.records,
            &shared.title,
            Some(LiveConfig {
                generation: followed.generation,
                next: followed.records.len(),
            }),
        )
    };
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        html,
    )
        .into_response()
}

async fn records(State(shared): State<Arc<Shared>>, RawQuery(query): RawQuery) -> Response {
    let query = query.unwrap_or_default();
    let param = |name: &str| {
        query
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .find(|(key, _)| *key == name)
            .and_then(|(_, value)| value.parse::<u64>().ok())
    };
    let (Some(from), Some(generation)) = (param("from"), param("generation")) else {
        return (
            StatusCode::BAD_REQUEST,
            "expected /records?from=N&generation=G\n",
        )
            .into_response();
    };
    let from = usize::try_from(from).unwrap_or(usize::MAX);

    let mut changes = shared.changes.subscribe();
    let mut stopping = shared.stopping.clone();
    let deadline = tokio::time::sleep(LONG_POLL);
    tokio::pin!(deadline);
    loop {
        let (current, len) = *changes.borrow_and_update();
        if current != generation || len != from || *stopping.borrow() {
            break;
        }
        tokio::select! {
            changed = changes.changed() => if changed.is_err() { break },
            _ = stopping.changed() => break,
            _ = &mut deadline => break,
        }
    }

    let body = {
        let followed = shared.followed.lock().expect("follower lock");
        if followed.generation != generation || from > followed.records.len() {
            format!(r#"{{"generation":{},"reset":true}}"#, followed.generation)
        } else {
            let end = followed.records.len().min(from + BATCH);
            let batch = &followed.records[from..end];
            let mut body =
                String::with_capacity(64 + batch.iter().map(|r| r.len() + 1).sum::<usize>());
            body.push_str(&format!(
                r#"{{"generation":{},"from":{from},"next":{end},"records":["#,
                followed.generation
            ));
            for (i, record) in batch.iter().enumerate() {
                if i > 0 {
                    body.push(',');
                }
                body.push_str(record);
            }
            body.push_str("]}");
            body
        }
    };
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        body,
    )
        .into_response()
}

/// Reads the file from where it left off; starts again from the top when the file was
/// truncated or replaced (a new run writing the same path).
struct Follower {
    path: PathBuf,
    /// Bytes consumed, up to the last whole line.
    offset: u64,
    /// Lines consumed, for reports.
    lines: usize,
    inode: Option<u64>,
    missing_reported: bool,
}

impl Follower {
    fn new(path: &Path) -> Self {
        Self {
            path: path.to_path_buf(),
            offset: 0,
            lines: 0,
            inode: None,
            missing_reported: false,
        }
    }

    fn poll(&mut self, shared: &Shared) -> Result<(), ViewError> {
        let unreadable = |source| ViewError::Read {
            path: self.path.clone(),
            source,
        };
        let mut file = match std::fs::File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if !self.missing_reported {
                    eprintln!(
                        "trace view: {} does not exist yet; waiting for it",
                        self.path.display()
                    );
                    self.missing_reported = true;
                }
                return Ok(());
            }
            Err(e) => return Err(unreadable(e)),
        };
        self.missing_reported = false;
        let meta = file.metadata().map_err(unreadable)?;
        let replaced = self.inode.is_some_and(|inode| inode != meta.ino());
        if replaced || meta.len() < self.offset {
            eprintln!(
                "trace view: {} was {}; reading it again from the start",
                self.path.display(),
                if replaced { "replaced" } else { "truncated" }
            );
            self.offset = 0;
            self.lines = 0;
            let mut followed = shared.followed.lock().expect("follower lock");
            followed.generation += 1;
            followed.records.clear();
            shared.changes.send_replace((followed.generation, 0));
        }
        self.inode = Some(meta.ino());
        if meta.len() == self.offset {
            return Ok(());
        }
        let mut bytes = Vec::new();
        file.seek(SeekFrom::Start(self.offset))
            .and_then(|_| file.read_to_end(&mut bytes))
            .map_err(unreadable)?;
        let split = split_records_from(&bytes, false, self.lines);
        if split.consumed == 0 {
            return Ok(());
        }
        if let Some(first) = split.first_skipped {
            eprintln!(
                "trace view: {} line(s) of {} are not JSON records and are left out (the first is line {first})",
                split.skipped,
                self.path.display()
            );
        }
        self.offset += split.consumed as u64;
        self.lines += bytes[..split.consumed]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        if !split.records.is_empty() {
            let mut followed = shared.followed.lock().expect("follower lock");
            followed.records.extend(split.records);
            shared
                .changes
                .send_replace((followed.generation, followed.records.len()));
        }
        Ok(())
    }
}
