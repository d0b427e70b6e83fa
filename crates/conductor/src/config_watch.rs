//! `[conductor] watch = true` (or `run --watch`): the configuration file, and the files it
//! names (`wasm` files, and `--policy` files of components), watched on disk; a burst of changes asks for one reload once the files are quiet.
//!
//! Must not know what a reload does, nor read a configuration itself: it says when.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::mpsc;

use crate::config::{AgentSpec, Config, ProxyLaunch};

/// How long the watched files must stay unchanged before a burst of changes counts as over:
/// an editor's save (write, rename, chmod) or a build writing a `.wasm` file is one reload.
const QUIET: Duration = Duration::from_millis(300);

pub(crate) struct ConfigWatch {
    watcher: RecommendedWatcher,
    /// The files whose changes count (the watcher sees their whole directories).
    files: Arc<Mutex<HashSet<PathBuf>>>,
    /// The directories being watched.
    dirs: HashSet<PathBuf>,
    changes: mpsc::UnboundedReceiver<()>,
}

impl ConfigWatch {
    /// Watches the files `config` names; `None`, with a warning, when the system refuses.
    pub(crate) fn start(config: &Config) -> Option<ConfigWatch> {
        let files = Arc::new(Mutex::new(HashSet::new()));
        let (tx, changes) = mpsc::unbounded_channel();
        let seen = files.clone();
        let handler = move |event: notify::Result<notify::Event>| {
            // Reading the file (as each reload does) is an access, not a change.
            let Ok(event) = event else {
                return;
            };
            if !matches!(
                event.kind,
                EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_)
            ) {
                return;
            }
            let watched = seen.lock().expect("the watch's file set");
            if event.paths.iter().any(|path| watched.contains(path)) {
                let _ = tx.send(());
            }
        };
        let watcher = match notify::recommended_watcher(handler) {
            Ok(watcher) => watcher,
            Err(error) => {
                tracing::warn!("cannot watch the configuration: {error}");
                return None;
            }
        };
        let mut watch = ConfigWatch {
            watcher,
            files,
            dirs: HashSet::new(),
            changes,
        };
        watch.follow(config);
        Some(watch)
    }

    /// Watches the files `config` names from now on (after a reload, the new ones).
    pub(crate) fn follow(&mut self, config: &Config) {
        let files = named_files(config);
        for dir in files.iter().filter_map(|file| file.parent()) {
            if self.dirs.contains(dir) {
                continue;
            }
            match self.watcher.watch(dir, RecursiveMode::NonRecursive) {
                Ok(()) => {
                    self.dirs.insert(dir.to_path_buf());
                }
                Err(error) => tracing::warn!(dir = %dir.display(), "cannot watch: {error}"),
            }
        }
        tracing::debug!(files = ?files, "watching the configuration");
        *self.files.lock().expect("the watch's file set") = files;
    }

    /// Returns once a burst of changes to the watched files is over.
    pub(crate) async fn next_burst(&mut self) {
        if self.changes.recv().await.is_none() {
            return std::future::pending().await;
        }
        while let Ok(Some(())) = tokio::time::timeout(QUIET, self.changes.recv()).await {}
    }
}

/// The configuration file, every local `wasm` file, and every policy file a component is
/// given (`--policy FILE`).
fn named_files(config: &Config) -> HashSet<PathBuf> {
    let mut files = HashSet::from([config.file.clone()]);
    for proxy in &config.proxies {
        match &proxy.launch {
            ProxyLaunch::Native(command) => files.extend(command.policy_files()),
            ProxyLaunch::Wasm(wasm) => {
                files.insert(wasm.module.clone());
            }
            ProxyLaunch::Remote(_) => {}
        }
    }
    if let Some(AgentSpec::Command(command) | AgentSpec::Builtin { command, .. }) = &config.agent {
        files.extend(command.policy_files());
    }
    files
}
