//! Compiled WASM proxies kept on disk between runs, keyed by module hash and engine
//! compatibility. Must not know proxies or sandboxes: it turns bytes into compiled code.
//!
//! Loading compiled code runs it without validation, so an entry is used only when it
//! carries a MAC made with this cache's own secret key: an entry written by anything but a
//! conductor using this directory, copied from elsewhere, truncated or bit-flipped is
//! recompiled and overwritten. The directory and the key must belong to the conductor's
//! user and be closed to everyone else, or the cache is not used at all.
//!
//! The cache is bounded: each entry used is touched (its modification time is its last use),
//! and after each write the entries unused for [`MAX_AGE`] go, then the least recently used
//! until the rest fit in [`MAX_BYTES`]. A Python or JavaScript proxy's entry is 34-38 MB, one
//! per build of it and per conductor version.
//!
//! An entry is wasmtime's compiled artifact followed by its tag and [`MAGIC`], so that wasmtime
//! can map it from the file: its code and its initial memory images are then pages of the page
//! cache that a proxy touches, shared by every conductor using the entry, instead of a private
//! copy of the whole artifact in each conductor (tens of MB for a Python or JavaScript proxy).

use std::collections::HashMap;
use std::fs::{self, File};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, FileExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use wasmtime::component::Component;
use wasmtime::{Engine, Module};

use super::error::{CacheError, CompileError};
use crate::spec::WasmKind;

type Tag = Hmac<Sha256>;

/// Last bytes of every entry; bump the version when the layout changes (version 1 put it and
/// the tag first, so its entries are rejected as not entries and recompiled).
const MAGIC: &[u8; 16] = b"acp-wasm-cache\x00\x02";
/// The tag and the magic after the payload.
const TRAILER_BYTES: usize = TAG_BYTES + MAGIC.len();
/// How much of an entry is read at a time while its tag is checked.
const CHECK_CHUNK: usize = 64 * 1024;
const TAG_BYTES: usize = 32;
const KEY_BYTES: usize = 32;
const KEY_FILE: &str = "key";

/// What the cache's entries may take on disk together.
pub const MAX_BYTES: u64 = 1 << 30;
/// How long an entry is kept without being used.
pub const MAX_AGE: Duration = Duration::from_secs(30 * 24 * 60 * 60);
/// A temporary file this old was left by a writer that died.
const STALE_TEMPORARY: Duration = Duration::from_secs(60 * 60);

/// Makes temporary names unique among this process's concurrent writers.
static WRITES: AtomicUsize = AtomicUsize::new(0);

/// Compiled code for one `.wasm` file.
#[derive(Clone)]
pub enum Compiled {
    Module(Module),
    Component(Component),
}

/// Where compiled code came from, for the log.
#[derive(Debug)]
pub enum Provenance {
    /// Another proxy of this run uses the same file: its code is shared, not loaded again.
    Shared,
    /// Loaded from a valid cache entry: no compilation.
    Cached,
    /// Compiled now. `rejected` says why an existing entry was not used; `not_stored` why
    /// the result could not be kept (no cache, unwritable directory).
    Compiled {
        rejected: Option<CacheError>,
        not_stored: Option<CacheError>,
    },
}

/// Code already loaded in this run, by SHA-256 of the `.wasm` file. A cell is filled by the
/// first proxy to need it while the others with the same file wait for it.
type Loaded = HashMap<[u8; 32], Arc<OnceLock<Result<Compiled, CompileError>>>>;

/// The on-disk cache, and the code this run has loaded; `None` directory means compile
/// every time the run needs a module it has not loaded yet.
#[derive(Clone)]
pub struct CompileCache {
    dir: Option<PathBuf>,
    loaded: Arc<Mutex<Loaded>>,
}

impl std::fmt::Debug for CompileCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompileCache")
            .field("dir", &self.dir)
            .finish()
    }
}

impl CompileCache {
    /// Entries live in `<root>/wasm`.
    pub fn new(root: Option<PathBuf>) -> Self {
        Self {
            dir: root.map(|root| root.join("wasm")),
            loaded: Arc::default(),
        }
    }

    /// Compiled code for `bytes`: shared with another proxy of this run using the same file,
    /// else from the disk cache when a valid entry exists, else compiled (and stored for next
    /// time). Blocks for the length of a compilation: call it from a blocking thread.
    pub fn load(
        &self,
        engine: &Engine,
        bytes: &[u8],
        kind: WasmKind,
    ) -> Result<(Compiled, Provenance), CompileError> {
        let source: [u8; 32] = Sha256::digest(bytes).into();
        let cell = self
            .loaded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(source)
            .or_default()
            .clone();
        let mut provenance = Provenance::Shared;
        let compiled = cell.get_or_init(|| {
            let (compiled, how) = self.load_from_disk(engine, source, bytes, kind)?;
            provenance = how;
            Ok(compiled)
        });
        compiled.clone().map(|compiled| (compiled, provenance))
    }

    fn load_from_disk(
        &self,
        engine: &Engine,
        source: [u8; 32],
        bytes: &[u8],
        kind: WasmKind,
    ) -> Result<(Compiled, Provenance), CompileError> {
        let store = self
            .dir
            .as_deref()
            .map(|dir| Store::open(dir, engine, source));
        let mut rejected = None;
        if let Some(Ok(store)) = &store {
            match store.read(engine, kind) {
                Ok(Some(compiled)) => return Ok((compiled, Provenance::Cached)),
                Ok(None) => {}
                Err(reason) => rejected = Some(reason),
            }
        }
        let compiled = compile(engine, bytes, kind)?;
        let (stored, not_stored) = match store {
            None => (None, Some(CacheError::NoDirectory)),
            Some(Err(reason)) => (None, Some(reason)),
            Some(Ok(store)) => match store.write(&compiled) {
                Ok(()) => {
                    if let Some(dir) = store.entry.parent() {
                        prune(dir, &store.entry, MAX_BYTES, MAX_AGE);
                    }
                    (Some(store), None)
                }
                Err(reason) => (None, Some(reason)),
            },
        };
        // Stored: run it from the entry, mapped from the file like every later start, and let
        // the private copy the compilation made go.
        let compiled = match stored.map(|store| store.read(engine, kind)) {
            Some(Ok(Some(mapped))) => mapped,
            _ => compiled,
        };
        Ok((
            compiled,
            Provenance::Compiled {
                rejected,
                not_stored,
            },
        ))
    }
}

fn compile(engine: &Engine, bytes: &[u8], kind: WasmKind) -> Result<Compiled, CompileError> {
    match kind {
        WasmKind::Module => Module::from_binary(engine, bytes).map(Compiled::Module),
        WasmKind::Component => Component::from_binary(engine, bytes).map(Compiled::Component),
    }
    .map_err(|e| CompileError {
        kind: kind.describe(),
        detail: format!("{e:#}"),
    })
}

/// One entry's place in a usable cache directory.
struct Store {
    key: [u8; KEY_BYTES],
    entry: PathBuf,
    /// What the tag covers besides the payload: the source digest and the engine id.
    context: Vec<u8>,
}

impl Store {
    fn open(dir: &Path, engine: &Engine, source: [u8; 32]) -> Result<Store, CacheError> {
        private_dir(dir)?;
        let key = secret_key(&dir.join(KEY_FILE))?;
        let mut engine_hasher = DefaultHasher::new();
        engine
            .precompile_compatibility_hash()
            .hash(&mut engine_hasher);
        let engine_id = engine_hasher.finish();
        let name = format!("{}-{engine_id:016x}.cwasm", hex(&source));
        let mut context = source.to_vec();
        context.extend_from_slice(&engine_id.to_le_bytes());
        Ok(Store {
            key,
            entry: dir.join(name),
            context,
        })
    }

    /// The MAC over the context, before the payload is added to it.
    fn mac(&self) -> Tag {
        let mut tag = Tag::new_from_slice(&self.key).expect("HMAC takes keys of any length");
        tag.update(&self.context);
        tag
    }

    /// `Ok(None)`: no entry. `Err`: an entry that must not be used, and why.
    fn read(&self, engine: &Engine, kind: WasmKind) -> Result<Option<Compiled>, CacheError> {
        let file = match File::open(&self.entry) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(CacheError::OpenEntry {
                    path: self.entry.clone(),
                    source,
                });
            }
        };
        let metadata = file.metadata().map_err(CacheError::Metadata)?;
        private_file(&self.entry, &metadata)?;
        // Its last use, for pruning; an entry that cannot be touched is merely pruned sooner.
        let _ = file.set_modified(SystemTime::now());
        let unreadable = |source| CacheError::ReadEntry {
            path: self.entry.clone(),
            source,
        };
        let Some(payload_len) = metadata.len().checked_sub(TRAILER_BYTES as u64) else {
            return Err(CacheError::NotAnEntry(self.entry.clone()));
        };
        let mut trailer = [0u8; TRAILER_BYTES];
        file.read_exact_at(&mut trailer, payload_len)
            .map_err(unreadable)?;
        let (tag, magic) = trailer.split_at(TAG_BYTES);
        if magic != MAGIC {
            return Err(CacheError::NotAnEntry(self.entry.clone()));
        }
        // The payload is checked a chunk at a time, so that it is never copied whole: the
        // pages read stay in the page cache, where wasmtime maps them from below.
        let mut mac = self.mac();
        let mut chunk = vec![0u8; CHECK_CHUNK];
        let mut payload = (&file).take(payload_len);
        loop {
            let read = payload.read(&mut chunk).map_err(unreadable)?;
            if read == 0 {
                break;
            }
            mac.update(&chunk[..read]);
        }
        mac.verify_slice(tag)
            .map_err(|_| CacheError::Integrity(self.entry.clone()))?;
        // The file just checked, by its descriptor: a name could be renamed over meanwhile.
        let checked = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
        // SAFETY: the payload is bytes that `Module::serialize`/`Component::serialize` produced
        // in a conductor holding this cache's secret key (the MAC proves it), for exactly
        // this source and a compatible engine (both covered by the MAC); wasmtime checks
        // the engine settings again while deserializing. Entries are never changed in place
        // (a writer renames a new file over the name, pruning removes it), so the mapping
        // keeps the bytes checked; the trailer after the artifact is outside its sections.
        let compiled = unsafe {
            match kind {
                WasmKind::Module => {
                    Module::deserialize_file(engine, &checked).map(Compiled::Module)
                }
                WasmKind::Component => {
                    Component::deserialize_file(engine, &checked).map(Compiled::Component)
                }
            }
        };
        compiled.map(Some).map_err(|error| CacheError::Deserialize {
            path: self.entry.clone(),
            error,
        })
    }

    /// Writes the entry under a temporary name and renames it into place, so that a reader
    /// never sees half an entry and concurrent writers of the same entry are harmless.
    fn write(&self, compiled: &Compiled) -> Result<(), CacheError> {
        let payload = match compiled {
            Compiled::Module(module) => module.serialize(),
            Compiled::Component(component) => component.serialize(),
        }
        .map_err(CacheError::Serialize)?;
        let mut mac = self.mac();
        mac.update(&payload);
        let tag = mac.finalize().into_bytes();
        let temporary = self.entry.with_extension(format!(
            "{}.{}.tmp",
            std::process::id(),
            WRITES.fetch_add(1, Ordering::Relaxed)
        ));
        let written = (|| {
            let mut file = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&temporary)?;
            file.write_all(&payload)?;
            file.write_all(&tag)?;
            file.write_all(MAGIC)?;
            file.sync_data()?;
            fs::rename(&temporary, &self.entry)
        })();
        written.map_err(|source| {
            let _ = fs::remove_file(&temporary);
            CacheError::WriteEntry {
                path: self.entry.clone(),
                source,
            }
        })
    }
}

/// Removes, from the cache directory `dir`, entries unused for `max_age`, then the least
/// recently used ones until the rest take at most `max_bytes`; `keep` (the entry just written)
/// stays whatever its size. Temporary files left by a writer that died go too. Files that
/// vanish meanwhile (another conductor pruning) are skipped; nothing here fails the load.
fn prune(dir: &Path, keep: &Path, max_bytes: u64, max_age: Duration) {
    let Ok(listing) = fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    let age = |metadata: &fs::Metadata| {
        metadata
            .modified()
            .ok()
            .and_then(|at| now.duration_since(at).ok())
            .unwrap_or_default()
    };
    let mut entries = Vec::new();
    for item in listing.flatten() {
        let path = item.path();
        let Ok(metadata) = item.metadata() else {
            continue;
        };
        let name = item.file_name();
        let name = name.to_string_lossy();
        if name.ends_with(".tmp") && age(&metadata) > STALE_TEMPORARY {
            let _ = fs::remove_file(&path);
        } else if name.ends_with(".cwasm") && metadata.is_file() && path != keep {
            entries.push((age(&metadata), metadata.len(), path));
        }
    }
    let kept_bytes = fs::metadata(keep).map_or(0, |m| m.len());
    // Oldest first.
    entries.sort_by_key(|&(age, _, _)| std::cmp::Reverse(age));
    let mut total = kept_bytes + entries.iter().map(|(_, len, _)| len).sum::<u64>();
    for (age, len, path) in entries {
        if age <= max_age && total <= max_bytes {
            break;
        }
        if fs::remove_file(&path).is_ok() {
            tracing::info!(entry = %path.display(), "pruned from the WASM compile cache");
        }
        total -= len;
    }
}

/// Creates `dir` (mode 0700) if needed and checks that only this user can write to it.
fn private_dir(dir: &Path) -> Result<(), CacheError> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|source| CacheError::CreateDirectory {
            dir: dir.to_path_buf(),
            source,
        })?;
    let metadata = fs::metadata(dir).map_err(CacheError::Metadata)?;
    // SAFETY: geteuid cannot fail and has no preconditions.
    let me = unsafe { libc::geteuid() };
    if metadata.uid() != me {
        return Err(CacheError::DirectoryOfAnotherUser(dir.to_path_buf()));
    }
    if metadata.permissions().mode() & 0o022 != 0 {
        return Err(CacheError::DirectoryWritableByOthers(dir.to_path_buf()));
    }
    Ok(())
}

/// A file this user owns that nobody else can write.
fn private_file(path: &Path, metadata: &fs::Metadata) -> Result<(), CacheError> {
    // SAFETY: geteuid cannot fail and has no preconditions.
    let me = unsafe { libc::geteuid() };
    if !metadata.is_file() || metadata.uid() != me || metadata.permissions().mode() & 0o022 != 0 {
        return Err(CacheError::NotPrivate(path.to_path_buf()));
    }
    Ok(())
}

/// The cache's secret, created on first use from the system's random source.
fn secret_key(path: &Path) -> Result<[u8; KEY_BYTES], CacheError> {
    let mut key = [0u8; KEY_BYTES];
    match File::open(path) {
        Ok(mut file) => {
            let metadata = file.metadata().map_err(CacheError::Metadata)?;
            private_file(path, &metadata)?;
            if metadata.permissions().mode() & 0o044 != 0 {
                return Err(CacheError::KeyReadableByOthers(path.to_path_buf()));
            }
            file.read_exact(&mut key)
                .map_err(|source| CacheError::ReadKey {
                    path: path.to_path_buf(),
                    source,
                })?;
            Ok(key)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            File::open("/dev/urandom")
                .and_then(|mut random| random.read_exact(&mut key))
                .map_err(CacheError::Random)?;
            let created = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(path)
                .and_then(|mut file| file.write_all(&key).and_then(|()| file.sync_data()));
            match created {
                Ok(()) => Ok(key),
                // Another conductor created it first: use theirs.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => secret_key(path),
                Err(source) => Err(CacheError::CreateKey {
                    path: path.to_path_buf(),
                    source,
                }),
            }
        }
        Err(source) => Err(CacheError::OpenKey {
            path: path.to_path_buf(),
            source,
        }),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory under the target's temporary space.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("acp-cache-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// An entry of `len` bytes last used `days_ago` days ago.
    fn entry(dir: &Path, name: &str, len: usize, days_ago: u64) -> PathBuf {
        let path = dir.join(name);
        fs::write(&path, vec![0u8; len]).unwrap();
        let used = SystemTime::now() - Duration::from_secs(days_ago * 24 * 60 * 60);
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(used)
            .unwrap();
        path
    }

    #[test]
    fn pruning_removes_the_least_recently_used_until_the_rest_fit() {
        let dir = scratch("lru");
        let oldest = entry(&dir, "a.cwasm", 400, 3);
        let older = entry(&dir, "b.cwasm", 400, 2);
        let recent = entry(&dir, "c.cwasm", 400, 1);
        let written = entry(&dir, "d.cwasm", 400, 0);
        let key = entry(&dir, KEY_FILE, 32, 9);
        prune(&dir, &written, 1000, MAX_AGE);
        assert!(
            !oldest.exists() && !older.exists(),
            "the two least recently used go"
        );
        assert!(recent.exists() && written.exists(), "800 bytes fit in 1000");
        assert!(key.exists(), "only entries are pruned");
        // The entry just written stays even when it alone is over the limit.
        prune(&dir, &written, 100, MAX_AGE);
        assert!(!recent.exists() && written.exists());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn pruning_removes_entries_unused_for_too_long_and_dead_writers_files() {
        let dir = scratch("age");
        let stale = entry(&dir, "a.cwasm", 10, 40);
        let used = entry(&dir, "b.cwasm", 10, 2);
        let written = entry(&dir, "c.cwasm", 10, 0);
        let abandoned = entry(&dir, "d.cwasm.1.0.tmp", 10, 1);
        let in_progress = entry(&dir, "e.cwasm.2.0.tmp", 10, 0);
        prune(&dir, &written, MAX_BYTES, MAX_AGE);
        assert!(!stale.exists() && !abandoned.exists());
        assert!(used.exists() && written.exists() && in_progress.exists());
        fs::remove_dir_all(&dir).unwrap();
    }
}
