//! The published registry: fetched over HTTPS and kept in the conductor's cache directory,
//! so that starting an agent does not wait on the network each time. Must not know what is
//! in the registry beyond parsing it.
//!
//! A cached copy younger than [`CACHE_MAX_AGE`] is used as it is. An older one is fetched
//! again; when that fails (offline), the old copy is used all the same, with a warning. No
//! copy and no network is an error that says to use `registry_file`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use acp_remote::bounded_get::{self, Bounds, GetError};
use sha2::{Digest, Sha256};

use super::{Origin, Registry, RegistryError, SetupError};

/// Where the ACP project publishes the registry.
pub const DEFAULT_URL: &str =
    "https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json";
/// The variable that points the conductor at another copy (a mirror, a test server).
pub const URL_VARIABLE: &str = "ACP_CONDUCTOR_REGISTRY_URL";
/// How long a fetched registry is used before it is fetched again.
pub const CACHE_MAX_AGE: Duration = Duration::from_secs(24 * 60 * 60);
/// The whole request, connecting and reading the body included.
const FETCH_TIMEOUT: Duration = Duration::from_secs(20);
/// The published file is a few tens of KiB; anything this large is not it.
const MAX_SIZE: u64 = 16 << 20;

/// The published registry (or the one at `$ACP_CONDUCTOR_REGISTRY_URL`), from the cache in
/// `cache_dir` when fresh, else fetched and cached.
pub fn published(
    cache_dir: Option<&Path>,
    vars: &dyn Fn(&str) -> Option<String>,
) -> Result<Registry, RegistryError> {
    let url = vars(URL_VARIABLE)
        .filter(|url| !url.is_empty())
        .unwrap_or_else(|| DEFAULT_URL.to_owned());
    let cache = cache_dir.map(|dir| cache_file(dir, &url));
    let cached = cache.as_deref().and_then(|file| read_cached(file, &url));
    if let Some((registry, age)) = &cached
        && *age < CACHE_MAX_AGE
    {
        tracing::debug!(url = %url, age_s = age.as_secs(), "registry from the cache");
        return Ok(registry.clone());
    }
    let fetched = fetch(&url).and_then(|text| {
        let origin = Origin::Fetched {
            url: url.clone(),
            cache: cache.clone(),
        };
        Registry::parse(&text, origin)
            .map(|registry| (registry, text))
            .map_err(|error| RegistryError::NotSent {
                url: url.clone(),
                source: Box::new(error),
            })
    });
    match (fetched, cached) {
        (Ok((registry, text)), _) => {
            if let Some(file) = &cache
                && let Err(error) = write_atomically(file, text.as_bytes())
            {
                tracing::warn!(file = %file.display(), %error, "could not cache the registry");
            }
            Ok(registry)
        }
        (Err(why), Some((mut registry, _))) => {
            let Origin::Cached { stale, .. } = &mut registry.origin else {
                unreachable!("read_cached makes a Cached origin");
            };
            *stale = Some(why.to_string());
            tracing::warn!("{}", registry.origin.warning().unwrap_or_default());
            Ok(registry)
        }
        (Err(why), None) => Err(RegistryError::Unavailable {
            why: Box::new(why),
            cache,
        }),
    }
}

/// The cache file for `url`: one per URL, so that a mirror's copy never stands in for
/// another's.
fn cache_file(dir: &Path, url: &str) -> PathBuf {
    let digest = Sha256::digest(url.as_bytes());
    let short: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    dir.join("registry").join(format!("registry-{short}.json"))
}

/// The cached registry and its age, if there is a readable one.
fn read_cached(file: &Path, url: &str) -> Option<(Registry, Duration)> {
    let modified = std::fs::metadata(file).ok()?.modified().ok()?;
    let age = SystemTime::now()
        .duration_since(modified)
        .unwrap_or(Duration::ZERO);
    let text = std::fs::read_to_string(file).ok()?;
    let origin = Origin::Cached {
        url: url.to_owned(),
        cache: file.to_path_buf(),
        age,
        stale: None,
    };
    match Registry::parse(&text, origin) {
        Ok(registry) => Some((registry, age)),
        Err(error) => {
            tracing::warn!(file = %file.display(), %error, "ignoring the cached registry");
            None
        }
    }
}

/// One GET of `url`; the body as text.
///
/// Loading a configuration is synchronous, and a caller may be on a thread that runs (or
/// blocks for) a tokio runtime, where another cannot be started: the GET then gets a thread
/// of its own. Either way it runs on a current-thread runtime made for it, with the HTTP
/// client remote components use.
fn fetch(url: &str) -> Result<String, RegistryError> {
    tracing::debug!(url, "fetching the agent registry");
    if tokio::runtime::Handle::try_current().is_err() {
        return fetch_on_this_thread(url);
    }
    std::thread::scope(|scope| {
        scope
            .spawn(|| fetch_on_this_thread(url))
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

fn fetch_on_this_thread(url: &str) -> Result<String, RegistryError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| RegistryError::Setup {
            url: url.to_owned(),
            cause: SetupError::Runtime(error),
        })?;
    runtime.block_on(get(url))
}

async fn get(url: &str) -> Result<String, RegistryError> {
    let bounds = Bounds {
        timeout: FETCH_TIMEOUT,
        max_size: MAX_SIZE,
    };
    let url_owned = || url.to_owned();
    let body = bounded_get::get(url, bounds)
        .await
        .map_err(|error| match error {
            GetError::Tls(error) => RegistryError::Setup {
                url: url_owned(),
                cause: SetupError::Tls(error),
            },
            GetError::Request(source) => RegistryError::Request {
                url: url_owned(),
                source,
            },
            GetError::Body(source) => RegistryError::Body {
                url: url_owned(),
                source,
            },
            GetError::TooLarge { limit } => RegistryError::TooLarge {
                url: url_owned(),
                limit,
            },
        })?;
    String::from_utf8(body).map_err(|error| RegistryError::NotUtf8 {
        url: url_owned(),
        source: error,
    })
}

/// Writes `file` through a temporary file beside it, so that a reader never sees half.
fn write_atomically(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = file.parent().expect("a cache file has a directory");
    std::fs::create_dir_all(dir)?;
    let temporary = dir.join(format!(
        ".{}.{}",
        file.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("registry"),
        std::process::id()
    ));
    let mut out = std::fs::File::create(&temporary)?;
    out.write_all(bytes)?;
    out.sync_all()?;
    drop(out);
    std::fs::rename(&temporary, file).inspect_err(|_| {
        let _ = std::fs::remove_file(&temporary);
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::test_support::TempDir;

    #[test]
    fn each_url_has_its_own_cache_file() {
        let dir = Path::new("/cache");
        let a = cache_file(dir, DEFAULT_URL);
        let b = cache_file(dir, "http://127.0.0.1:9/registry.json");
        assert_ne!(a, b);
        assert!(a.starts_with("/cache/registry"), "{}", a.display());
        assert_eq!(a, cache_file(dir, DEFAULT_URL));
    }

    #[test]
    fn a_fresh_cache_is_used_without_fetching() {
        let temp = TempDir::new("registry-fresh-cache");
        // Nothing listens on port 9 of this machine: a fetch would fail.
        let url = "http://127.0.0.1:9/registry.json";
        let file = cache_file(temp.path(), url);
        write_atomically(&file, br#"{"version":"1.0.0","agents":[]}"#).unwrap();
        let vars = |name: &str| (name == URL_VARIABLE).then(|| url.to_owned());
        let registry = published(Some(temp.path()), &vars).unwrap();
        assert!(
            matches!(registry.origin, Origin::Cached { stale: None, .. }),
            "{:?}",
            registry.origin
        );
    }

    #[test]
    fn a_stale_cache_is_used_with_a_warning_when_fetching_fails() {
        let temp = TempDir::new("registry-stale-cache");
        let url = "http://127.0.0.1:9/registry.json";
        let file = cache_file(temp.path(), url);
        write_atomically(&file, br#"{"version":"1.0.0","agents":[]}"#).unwrap();
        let old = SystemTime::now() - CACHE_MAX_AGE - Duration::from_secs(60);
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let vars = |name: &str| (name == URL_VARIABLE).then(|| url.to_owned());
        let registry = published(Some(temp.path()), &vars).unwrap();
        let warning = registry.origin.warning().expect("a stale copy warns");
        assert!(
            warning.contains("could not be fetched again") && warning.contains(url),
            "{warning}"
        );
    }

    #[test]
    fn no_cache_and_no_network_is_an_error_naming_registry_file() {
        let temp = TempDir::new("registry-no-cache");
        let vars = |name: &str| {
            (name == URL_VARIABLE).then(|| "http://127.0.0.1:9/registry.json".to_owned())
        };
        let error = published(Some(temp.path()), &vars).unwrap_err().to_string();
        assert!(
            error.starts_with("cannot get the agent registry: fetching http://127.0.0.1:9/"),
            "{error}"
        );
        assert!(error.contains("registry_file"), "{error}");
    }
}
