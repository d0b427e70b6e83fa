//! Where the conductor keeps what it caches (compiled WASM proxies, the agent registry) when
//! the configuration does not say: the XDG cache directory. Knows no configuration format.

use std::path::PathBuf;

/// `$XDG_CACHE_HOME/acp-conductor`, else `$HOME/.cache/acp-conductor`; relative values are
/// ignored, as the XDG specification asks.
pub fn default_cache_dir(vars: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let absolute = |name: &str| {
        vars(name)
            .map(PathBuf::from)
            .filter(|path| path.is_absolute())
    };
    absolute("XDG_CACHE_HOME")
        .or_else(|| absolute("HOME").map(|home| home.join(".cache")))
        .map(|base| base.join("acp-conductor"))
}
