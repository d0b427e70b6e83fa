//! A WASM proxy published at a URL: fetched once into the cache directory with the
//! conductor's one HTTP client (reqwest) and used only when its SHA-256 is the one the config
//! names. Must not know what the bytes are; the loader reads them as it reads a local file.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use acp_remote::bounded_get::{self, Bounds, GetError};
use sha2::{Digest, Sha256};

use super::file_bytes::FileBytes;
use crate::spec::WasmDownload;

/// How long one download may take; a Python component is about 18 MB.
const FETCH_TIMEOUT: Duration = Duration::from_secs(300);
/// The largest file fetched: far above any proxy's runtime, far below the disk.
const MAX_SIZE: u64 = 256 << 20;

/// Why a `wasm` URL gave no usable file.
#[derive(Debug, thiserror::Error)]
pub enum DownloadError {
    #[error("cannot set up TLS to fetch {url}: {source}")]
    Tls {
        url: String,
        #[source]
        source: rustls::Error,
    },
    #[error("cannot fetch {url}: {source}")]
    Fetch {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("{url} is larger than {limit} bytes")]
    TooLarge { url: String, limit: u64 },
    #[error(
        "{url} has SHA-256 {actual}, not the {expected} the config requires: the file is not \
         the one the config was written for (changed, or replaced), so it is not run"
    )]
    Mismatch {
        url: String,
        expected: String,
        actual: String,
    },
    #[error("cannot keep {url} in {}: {source}", path.display())]
    Store {
        url: String,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("reading the cached download failed: {0}")]
    Task(#[source] tokio::task::JoinError),
}

/// The bytes of `download`: the copy at `path` when it has the required hash, else fetched,
/// checked and kept at `path` for the next start.
pub async fn bytes(path: &Path, download: &WasmDownload) -> Result<FileBytes, DownloadError> {
    let cached = path.to_path_buf();
    let kept = tokio::task::spawn_blocking(move || FileBytes::read(&cached))
        .await
        .map_err(DownloadError::Task)?;
    if let Ok(bytes) = kept {
        if Sha256::digest(&bytes[..]).as_slice() == download.sha256 {
            return Ok(bytes);
        }
        tracing::warn!(
            path = %path.display(),
            "the cached copy of {} does not have its SHA-256; fetching it again",
            download.url
        );
    }
    let started = std::time::Instant::now();
    let bytes = fetch(&download.url).await?;
    let actual = hex(&Sha256::digest(&bytes));
    if actual != download.sha256_hex() {
        return Err(DownloadError::Mismatch {
            url: download.url.clone(),
            expected: download.sha256_hex(),
            actual,
        });
    }
    tracing::info!(
        elapsed = ?started.elapsed(),
        bytes = bytes.len(),
        "fetched {} (SHA-256 verified)",
        download.url
    );
    let (file, url) = (path.to_path_buf(), download.url.clone());
    // Kept, then read back from the file like every later start, so that the download's own
    // buffer goes now (FileBytes says why).
    tokio::task::spawn_blocking(move || {
        keep(&file, &bytes)
            .and_then(|()| {
                drop(bytes);
                FileBytes::read(&file)
            })
            .map_err(|source| DownloadError::Store {
                url,
                path: file,
                source,
            })
    })
    .await
    .map_err(DownloadError::Task)?
}

async fn fetch(url: &str) -> Result<Vec<u8>, DownloadError> {
    let bounds = Bounds {
        timeout: FETCH_TIMEOUT,
        max_size: MAX_SIZE,
    };
    let url_owned = || url.to_owned();
    bounded_get::get(url, bounds)
        .await
        .map_err(|error| match error {
            GetError::Tls(source) => DownloadError::Tls {
                url: url_owned(),
                source,
            },
            GetError::Request(source) | GetError::Body(source) => DownloadError::Fetch {
                url: url_owned(),
                source,
            },
            GetError::TooLarge { limit } => DownloadError::TooLarge {
                url: url_owned(),
                limit,
            },
        })
}

/// Writes `bytes` to `file` (mode 0600, in a 0700 directory) through a temporary name, so
/// that a reader never sees half a file.
fn keep(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = file.parent().expect("a cache file has a directory");
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let temporary = file.with_extension(format!("{}.tmp", std::process::id()));
    let written = (|| {
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temporary)?;
        out.write_all(bytes)?;
        out.sync_all()?;
        std::fs::rename(&temporary, file)
    })();
    written.inspect_err(|_| {
        let _ = std::fs::remove_file(&temporary);
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
