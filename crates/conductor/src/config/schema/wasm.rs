//! The WASM keys of the schema: `wasm` in `[[proxy]]`, its `[proxy.sandbox]` table and
//! `cache_dir` in `[conductor]`. Must not know how a sandbox is enforced, only what it grants.

use std::ops::Range;
use std::path::PathBuf;

use toml::de::DeTable;

use super::super::resolve::relative_to;
use super::super::{DirGrant, DirMode, NO_WASM, Sandbox, WasmDownload, WasmKind, WasmSpec};
use super::{Scope, Validator, Value, entries};
use crate::suggest::did_you_mean;

const SANDBOX_KEYS: &[&str] = &["dirs", "env", "memory", "message_timeout"];
const DIR_KEYS: &[&str] = &["host", "guest", "mode"];
const DIR_MODES: &[(&str, DirMode)] = &[("ro", DirMode::ReadOnly), ("rw", DirMode::ReadWrite)];
/// Below this a Rust proxy cannot even start; a smaller cap is a typo, not a policy.
const MIN_MEMORY: usize = 1 << 20;

impl Validator<'_, '_, '_> {
    /// `[proxy.sandbox]` only means something for a proxy the conductor hosts itself.
    pub(super) fn refuse_sandbox_for_native(&mut self, table: &DeTable<'_>) {
        if let Some((key, _)) = table.get_key_value("sandbox") {
            self.error(
                key.span(),
                "[proxy.sandbox] applies only to a WASM proxy (`wasm = \"...\"`); a `command` \
                 proxy runs with the conductor's own rights",
            );
        }
    }

    /// `wasm`, `args`, `env` and `[proxy.sandbox]` of a `[[proxy]]` table; all are checked
    /// even when the name is missing, so that their mistakes are reported in the same pass.
    pub(super) fn wasm_launch(
        &mut self,
        table: &DeTable<'_>,
        name: Option<String>,
        scope: Scope,
    ) -> Option<WasmSpec> {
        let refused = !cfg!(feature = "wasm");
        if refused && let Some((key, _)) = table.get_key_value("wasm") {
            self.error(key.span(), NO_WASM);
        }
        if let Some((key, _)) = table.get_key_value("cwd") {
            self.error(
                key.span(),
                "`cwd` applies only to a `command` proxy; a WASM proxy sees no directory but \
                 those granted in [proxy.sandbox] `dirs`",
            );
        }
        let source = table.get("wasm").and_then(|value| {
            let text = self.string("wasm", value, scope)?;
            if is_url(&text) {
                self.download(table, &text, value.span(), scope)
                    .map(|(path, download)| (path, Some(download)))
            } else {
                self.refuse_sha256_without_wasm_url(table);
                self.module_file(&text, value.span(), scope)
                    .map(|path| (path, None))
            }
        });
        let args = match table.get("args") {
            Some(value) => self.string_array("args", value, scope),
            None => Some(Vec::new()),
        };
        let env = match table.get("env") {
            Some(value) => self.string_table("env", value, scope),
            None => Some(Vec::new()),
        };
        let sandbox = match table.get("sandbox") {
            Some(value) => self.sandbox(value, scope),
            None => Some(Sandbox::default()),
        };
        let (mut env, sandbox) = (env?, sandbox?);
        for pass in &sandbox.pass_env {
            if let Some(value) = (self.surroundings.vars)(pass) {
                env.push((pass.clone(), value));
            }
        }
        if refused {
            return None;
        }
        let (module, download) = source?;
        Some(WasmSpec {
            name: name?,
            module,
            download,
            args: args?,
            env,
            sandbox,
        })
    }

    /// `sha256` only means something next to a `wasm` URL.
    pub(super) fn refuse_sha256_without_wasm_url(&mut self, table: &DeTable<'_>) {
        if let Some((key, _)) = table.get_key_value("sha256") {
            self.error(
                key.span(),
                "`sha256` applies only to a `wasm` URL: it is the hash the downloaded file \
                 must have",
            );
        }
    }

    /// A `wasm` URL: its required `sha256`, and where the cache keeps the file. In `check`
    /// and `doctor`, a file already fetched is read for what it needs, as a local one is.
    fn download(
        &mut self,
        table: &DeTable<'_>,
        url: &str,
        span: Range<usize>,
        scope: Scope,
    ) -> Option<(PathBuf, WasmDownload)> {
        if let Err(error) = url::Url::parse(url) {
            self.error(span, format!("`wasm` is not a valid URL: {error}"));
            return None;
        }
        let Some(value) = table.get("sha256") else {
            self.error(
                span,
                "`wasm` is a URL, so `sha256` is required: the SHA-256 of the file (64 \
                 hexadecimal digits, as `sha256sum` prints it), which the download must match",
            );
            return None;
        };
        let text = self.string("sha256", value, scope)?;
        let Some(sha256) = parse_sha256(&text) else {
            self.error(
                value.span(),
                format!("`sha256` must be 64 hexadecimal digits, found {text:?}"),
            );
            return None;
        };
        let Some(cache_dir) = self.cache_dir.clone() else {
            self.error(
                span,
                "a `wasm` URL is fetched into the cache directory, and there is none: set \
                 `cache_dir` in [conductor] (or XDG_CACHE_HOME or HOME)",
            );
            return None;
        };
        let download = WasmDownload {
            url: url.to_owned(),
            sha256,
        };
        let path = cache_dir
            .join("wasm-downloads")
            .join(format!("{}.wasm", download.sha256_hex()));
        if scope == Scope::FileAndMachine
            && let Ok(kind) = WasmKind::of_file(&path)
            && let Err(need) = needs_of_file(&path, kind)
        {
            self.error(span, format!("`wasm`: {url} {need}"));
            return None;
        }
        Some((path, download))
    }

    fn module_file(&mut self, text: &str, span: Range<usize>, scope: Scope) -> Option<PathBuf> {
        if text.is_empty() {
            self.error(span, "`wasm` must not be empty");
            return None;
        }
        let path = relative_to(self.surroundings.config_dir, text);
        if scope == Scope::FileAndMachine {
            let kind = match WasmKind::of_file(&path) {
                Ok(kind) => kind,
                Err(message) => {
                    self.error(span, format!("`wasm`: {message}"));
                    return None;
                }
            };
            if let Err(need) = needs_of_file(&path, kind) {
                self.error(span, format!("`wasm`: {} {need}", path.display()));
                return None;
            }
        }
        Some(path)
    }

    fn sandbox(&mut self, value: &Value<'_>, scope: Scope) -> Option<Sandbox> {
        let table = self.table("sandbox", value)?;
        for (key, _) in entries(table) {
            let name: &str = key.get_ref();
            if name == "args" {
                self.error(
                    key.span(),
                    "`args` goes in [[proxy]] itself, as for a `command` proxy; the guest \
                     gets exactly those arguments",
                );
            } else if !SANDBOX_KEYS.contains(&name) {
                let suggestion = did_you_mean(name, SANDBOX_KEYS, '`');
                self.error(
                    key.span(),
                    format!("unknown key `{name}` in [proxy.sandbox]{suggestion}"),
                );
            }
        }
        let defaults = Sandbox::default();
        let dirs = match table.get("dirs") {
            Some(value) => self.dir_grants(value, scope),
            None => Some(Vec::new()),
        };
        let pass_env = match table.get("env") {
            Some(value) => self.variable_names(value),
            None => Some(Vec::new()),
        };
        let memory = match table.get("memory") {
            Some(value) => self.size("memory", value, scope).and_then(|bytes| {
                if bytes < MIN_MEMORY {
                    self.error(
                        value.span(),
                        "`memory` must be at least 1MiB: no proxy starts in less",
                    );
                    return None;
                }
                Some(bytes)
            }),
            None => Some(defaults.memory),
        };
        let message_timeout = match table.get("message_timeout") {
            Some(value) => self
                .duration("message_timeout", value, scope)
                .and_then(|timeout| {
                    if timeout.is_zero() {
                        self.error(value.span(), "`message_timeout` must be longer than zero");
                        return None;
                    }
                    Some(timeout)
                }),
            None => Some(defaults.message_timeout),
        };
        Some(Sandbox {
            dirs: dirs?,
            pass_env: pass_env?,
            memory: memory?,
            message_timeout: message_timeout?,
        })
    }

    fn dir_grants(&mut self, value: &Value<'_>, scope: Scope) -> Option<Vec<DirGrant>> {
        let Some(items) = value.get_ref().as_array() else {
            self.error(
                value.span(),
                format!(
                    "`dirs` must be an array of tables such as {{ host = \".\", guest = \
                     \"/workspace\", mode = \"ro\" }}, found {}",
                    value.get_ref().type_str()
                ),
            );
            return None;
        };
        let mut grants = Some(Vec::with_capacity(items.len()));
        let mut guests: Vec<String> = Vec::new();
        for item in items.iter() {
            let grant = self.dir_grant(item, scope);
            if let Some(grant) = &grant {
                if guests.contains(&grant.guest) {
                    self.error(
                        item.span(),
                        format!(
                            "guest path `{}` is granted twice; each directory needs its own \
                             guest path",
                            grant.guest
                        ),
                    );
                    grants = None;
                    continue;
                }
                guests.push(grant.guest.clone());
            }
            match (grant, grants.as_mut()) {
                (Some(grant), Some(grants)) => grants.push(grant),
                _ => grants = None,
            }
        }
        grants
    }

    fn dir_grant(&mut self, value: &Value<'_>, scope: Scope) -> Option<DirGrant> {
        let Some(table) = value.get_ref().as_table() else {
            self.error(
                value.span(),
                format!(
                    "`dirs` items must be tables such as {{ host = \".\", guest = \"/workspace\", \
                     mode = \"ro\" }}, found {}",
                    value.get_ref().type_str()
                ),
            );
            return None;
        };
        self.unknown_keys(table, "in a `dirs` item", DIR_KEYS);
        let host = match table.get("host") {
            Some(host) => self
                .string("host", host, scope)
                .and_then(|text| self.granted_dir(&text, host.span(), scope)),
            None => {
                self.error(value.span(), "a `dirs` item needs `host` (a directory)");
                None
            }
        };
        let guest = match table.get("guest") {
            Some(guest) => self
                .string("guest", guest, scope)
                .and_then(|text| self.guest_path(text, guest.span())),
            None => {
                self.error(
                    value.span(),
                    "a `dirs` item needs `guest` (where the proxy sees it, such as \"/workspace\")",
                );
                None
            }
        };
        let mode = match table.get("mode") {
            Some(mode) => self.choice("mode", mode, DIR_MODES, scope),
            None => Some(DirMode::default()),
        };
        Some(DirGrant {
            host: host?,
            guest: guest?,
            mode: mode?,
        })
    }

    fn granted_dir(&mut self, text: &str, span: Range<usize>, scope: Scope) -> Option<PathBuf> {
        if text.is_empty() {
            self.error(
                span,
                "`host` must not be empty (use \".\" for the config file's directory)",
            );
            return None;
        }
        let path = relative_to(self.surroundings.config_dir, text);
        if scope == Scope::FileOnly {
            return Some(path);
        }
        match std::fs::metadata(&path) {
            Ok(metadata) if metadata.is_dir() => Some(path),
            Ok(_) => {
                self.error(
                    span,
                    format!("`host` {} is not a directory", path.display()),
                );
                None
            }
            Err(_) => {
                self.error(span, format!("`host` {} does not exist", path.display()));
                None
            }
        }
    }

    fn guest_path(&mut self, text: String, span: Range<usize>) -> Option<String> {
        let problem = if !text.starts_with('/') {
            "must be absolute, such as \"/workspace\""
        } else if text == "/" {
            "must name a directory below `/`, such as \"/workspace\""
        } else if text.split('/').any(|segment| segment == "..") {
            "must not contain `..`"
        } else {
            return Some(text.trim_end_matches('/').to_owned());
        };
        self.error(span, format!("`guest` {problem}"));
        None
    }

    fn variable_names(&mut self, value: &Value<'_>) -> Option<Vec<String>> {
        let Some(items) = value.get_ref().as_array() else {
            self.error(
                value.span(),
                format!(
                    "`env` in [proxy.sandbox] must be an array of variable names such as \
                     [\"LANG\"], found {}",
                    value.get_ref().type_str()
                ),
            );
            return None;
        };
        let mut names = Some(Vec::with_capacity(items.len()));
        for item in items.iter() {
            let name = match item.get_ref().as_str() {
                Some(name) if self.environment_name(name, item.span()) => Some(name.to_owned()),
                Some(_) => None,
                None => {
                    self.error(
                        item.span(),
                        format!(
                            "`env` items must be variable names, found {}",
                            item.get_ref().type_str()
                        ),
                    );
                    None
                }
            };
            match (name, names.as_mut()) {
                (Some(name), Some(names)) => names.push(name),
                _ => names = None,
            }
        }
        names
    }

    pub(super) fn cache_dir(&mut self, value: &Value<'_>, scope: Scope) -> Option<PathBuf> {
        let text = self.string("cache_dir", value, scope)?;
        if text.is_empty() {
            self.error(value.span(), "`cache_dir` must not be empty");
            return None;
        }
        let path = relative_to(self.surroundings.config_dir, &text);
        // It need not exist yet: the conductor creates it on first use.
        if std::fs::metadata(&path).is_ok_and(|metadata| !metadata.is_dir()) {
            self.error(
                value.span(),
                format!("`cache_dir` {} is not a directory", path.display()),
            );
            return None;
        }
        Some(path)
    }
}

/// What the loader would refuse the file at `path` for, before compiling it: an import or a
/// feature the host does not provide, in the loader's words. A file that cannot be read
/// now is left to the loader, which says so when it starts.
#[cfg(feature = "wasm")]
fn needs_of_file(path: &std::path::Path, kind: WasmKind) -> Result<(), super::super::UnmetNeed> {
    super::super::unmet_need_in_file(path, kind).unwrap_or(Ok(()))
}

/// A native-only build refuses every `wasm` proxy already.
#[cfg(not(feature = "wasm"))]
fn needs_of_file(_path: &std::path::Path, _kind: WasmKind) -> Result<(), std::convert::Infallible> {
    Ok(())
}

/// Whether `wasm` names a URL rather than a file.
fn is_url(text: &str) -> bool {
    text.starts_with("https://") || text.starts_with("http://")
}

/// 64 hexadecimal digits (either case) as 32 bytes.
fn parse_sha256(text: &str) -> Option<[u8; 32]> {
    let digits = text.as_bytes();
    if digits.len() != 64 || !digits.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    let mut hash = [0u8; 32];
    for (byte, pair) in hash.iter_mut().zip(digits.chunks(2)) {
        let pair = std::str::from_utf8(pair).ok()?;
        *byte = u8::from_str_radix(pair, 16).ok()?;
    }
    Some(hash)
}
