//! Tests of the WASM keys: `wasm` in `[[proxy]]`, `[proxy.sandbox]` and `cache_dir`: values,
//! defaults and error locations. Goes through `parse_str` only, like the other config tests.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::test_support::TempDir;
use super::*;

const MODULE: &[u8] = b"\0asm\x01\0\0\0";
const COMPONENT: &[u8] = b"\0asm\x0d\0\x01\0";

/// A config directory holding `p1.wasm`, `p2.wasm`, `text.wasm` and `ctx/`.
fn machine(label: &str) -> TempDir {
    let temp = TempDir::new(label);
    temp.write("conf/p1.wasm", MODULE);
    temp.write("conf/p2.wasm", COMPONENT);
    temp.write("conf/text.wasm", "not wasm");
    temp.dir("conf/ctx");
    temp.demo_agent("exe");
    temp
}

fn parse(temp: &TempDir, text: &str, vars: &[(&str, &str)]) -> Result<Config, ConfigErrors> {
    let lookup = |name: &str| {
        vars.iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value.to_string())
    };
    parse_str(
        &format!("[agent]\nbuiltin = \"demo\"\n{text}"),
        &temp.path().join("conf/conductor.toml"),
        &lookup,
        Some(&temp.path().join("exe")),
    )
}

/// `line:column: message`, lines counted from the `[[proxy]]` after the two agent lines.
fn errors(temp: &TempDir, text: &str) -> Vec<String> {
    match parse(temp, text, &[]) {
        Ok(config) => panic!("expected errors, got {config:#?}"),
        Err(ConfigErrors(errors)) => errors
            .iter()
            .map(|e| format!("{}:{}: {}", e.line - 2, e.column, e.message))
            .collect(),
    }
}

fn wasm(config: &Config) -> &WasmSpec {
    match &config.proxies[0].launch {
        ProxyLaunch::Wasm(spec) => spec,
        other => panic!("expected a WASM proxy, got {other:?}"),
    }
}

fn conf(temp: &TempDir, relative: &str) -> PathBuf {
    temp.path().join("conf").join(relative)
}

#[test]
fn a_wasm_proxy_with_no_sandbox_table_is_granted_nothing() {
    let temp = machine("wasm-defaults");
    let config = parse(&temp, "[[proxy]]\nname = \"g\"\nwasm = \"p1.wasm\"\n", &[]).unwrap();
    assert_eq!(
        wasm(&config),
        &WasmSpec {
            name: "g".to_owned(),
            module: conf(&temp, "p1.wasm"),
            download: None,
            args: Vec::new(),
            env: Vec::new(),
            sandbox: Sandbox {
                dirs: Vec::new(),
                pass_env: Vec::new(),
                memory: 64 << 20,
                message_timeout: Duration::from_secs(5),
            },
        }
    );
}

#[test]
fn every_sandbox_key_is_read() {
    let temp = machine("wasm-every-key");
    let config = parse(
        &temp,
        r#"
[[proxy]]
name = "guard"
wasm = "./p2.wasm"
args = ["--deny-write", "/etc"]
env = { LOG = "debug" }
[proxy.sandbox]
memory = "32MiB"
message_timeout = "500ms"
env = ["LANG", "UNSET_ONE"]
dirs = [{ host = "ctx", guest = "/ctx/", mode = "rw" }, { host = ".", guest = "/conf" }]
"#,
        &[("LANG", "C.UTF-8"), ("OTHER", "x")],
    )
    .unwrap();
    assert_eq!(
        wasm(&config),
        &WasmSpec {
            name: "guard".to_owned(),
            module: conf(&temp, "p2.wasm"),
            download: None,
            args: vec!["--deny-write".to_owned(), "/etc".to_owned()],
            env: vec![
                ("LOG".to_owned(), "debug".to_owned()),
                ("LANG".to_owned(), "C.UTF-8".to_owned()),
            ],
            sandbox: Sandbox {
                dirs: vec![
                    DirGrant {
                        host: conf(&temp, "ctx"),
                        guest: "/ctx".to_owned(),
                        mode: DirMode::ReadWrite,
                    },
                    DirGrant {
                        host: temp.path().join("conf"),
                        guest: "/conf".to_owned(),
                        mode: DirMode::ReadOnly,
                    },
                ],
                pass_env: vec!["LANG".to_owned(), "UNSET_ONE".to_owned()],
                memory: 32 << 20,
                message_timeout: Duration::from_millis(500),
            },
        }
    );
}

#[test]
fn wasm_files_must_exist_and_be_modules_or_components() {
    let temp = machine("wasm-files");
    let text_file = conf(&temp, "text.wasm");
    let missing = conf(&temp, "missing.wasm");
    assert_eq!(
        errors(
            &temp,
            "[[proxy]]\nname = \"a\"\nwasm = \"text.wasm\"\n\
             [[proxy]]\nname = \"b\"\nwasm = \"missing.wasm\"\n\
             [[proxy]]\nname = \"c\"\nwasm = \"ctx\"\n\
             [[proxy]]\nname = \"d\"\nwasm = \"\"\n"
        ),
        [
            format!(
                "3:8: `wasm`: {} is not a WebAssembly module or component (build the proxy for \
                 wasm32-wasip1 or wasm32-wasip2)",
                text_file.display()
            ),
            format!(
                "6:8: `wasm`: cannot read {}: No such file or directory (os error 2)",
                missing.display()
            ),
            format!(
                "9:8: `wasm`: {} is not a file",
                conf(&temp, "ctx").display()
            ),
            "12:8: `wasm` must not be empty".to_owned(),
        ]
    );
}

#[test]
fn command_and_wasm_exclude_each_other_and_their_own_keys() {
    let temp = machine("wasm-exclusive");
    assert_eq!(
        errors(
            &temp,
            "[[proxy]]\nname = \"a\"\ncommand = \"/bin/sh\"\nwasm = \"p1.wasm\"\n\
             [[proxy]]\nname = \"b\"\nwasm = \"p1.wasm\"\ncwd = \".\"\n\
             [[proxy]]\nname = \"c\"\ncommand = \"/bin/sh\"\n[proxy.sandbox]\nmemory = \"2MiB\"\n"
        ),
        [
            "4:1: [[proxy]] \"a\" sets both `command` and `wasm`; keep one of them",
            "8:1: `cwd` applies only to a `command` proxy; a WASM proxy sees no directory but \
             those granted in [proxy.sandbox] `dirs`",
            "12:8: [proxy.sandbox] applies only to a WASM proxy (`wasm = \"...\"`); a `command` \
             proxy runs with the conductor's own rights",
        ]
    );
}

#[test]
fn sandbox_mistakes_are_located_at_their_values() {
    let temp = machine("wasm-sandbox-errors");
    let nowhere = conf(&temp, "nowhere");
    let file = conf(&temp, "p1.wasm");
    assert_eq!(
        errors(
            &temp,
            r#"[[proxy]]
name = "a"
wasm = "p1.wasm"
[proxy.sandbox]
memory = "512KiB"
message_timeout = "0s"
env = ["OK", "A=B", 3]
args = ["--x"]
dirs = [
  { host = "nowhere", guest = "/n" },
  { host = "p1.wasm", guest = "/f", mode = "rx" },
  { host = "ctx", guest = "relative" },
  { host = "ctx", guest = "/" },
  { host = "ctx", guest = "/a/../b" },
  { host = "ctx", guest = "/x" },
  { host = "ctx", guest = "/x/", size = 1 },
  { guest = "/y" },
  "ctx",
]
memroy = "1MiB"
"#
        ),
        [
            "5:10: `memory` must be at least 1MiB: no proxy starts in less".to_owned(),
            "6:19: `message_timeout` must be longer than zero".to_owned(),
            "7:14: environment variable names must not contain `=`".to_owned(),
            "7:21: `env` items must be variable names, found integer".to_owned(),
            "8:1: `args` goes in [[proxy]] itself, as for a `command` proxy; the guest gets \
             exactly those arguments"
                .to_owned(),
            format!("10:12: `host` {} does not exist", nowhere.display()),
            format!("11:12: `host` {} is not a directory", file.display()),
            "11:44: `mode` must be \"ro\" or \"rw\", found \"rx\"; did you mean \"ro\"?".to_owned(),
            "12:27: `guest` must be absolute, such as \"/workspace\"".to_owned(),
            "13:27: `guest` must name a directory below `/`, such as \"/workspace\"".to_owned(),
            "14:27: `guest` must not contain `..`".to_owned(),
            "16:3: guest path `/x` is granted twice; each directory needs its own guest path"
                .to_owned(),
            "16:34: unknown key `size` in a `dirs` item".to_owned(),
            "17:3: a `dirs` item needs `host` (a directory)".to_owned(),
            "18:3: `dirs` items must be tables such as { host = \".\", guest = \"/workspace\", \
             mode = \"ro\" }, found string"
                .to_owned(),
            "20:1: unknown key `memroy` in [proxy.sandbox]; did you mean `memory`?".to_owned(),
        ]
    );
}

#[test]
fn a_disabled_wasm_proxy_is_not_checked_against_the_machine() {
    let temp = machine("wasm-disabled");
    let config = parse(
        &temp,
        "[[proxy]]\nname = \"off\"\nwasm = \"missing.wasm\"\nenabled = false\n\
         [proxy.sandbox]\ndirs = [{ host = \"nowhere\", guest = \"/n\" }]\n",
        &[],
    )
    .unwrap();
    assert!(config.proxies.is_empty());
}

#[test]
fn the_cache_directory_defaults_to_the_xdg_cache() {
    let temp = machine("wasm-cache-dir");
    let cache = |vars: &[(&str, &str)]| parse(&temp, "", vars).unwrap().conductor.cache_dir;
    assert_eq!(
        cache(&[("XDG_CACHE_HOME", "/x/cache"), ("HOME", "/home/me")]),
        Some(PathBuf::from("/x/cache/acp-conductor"))
    );
    assert_eq!(
        cache(&[("XDG_CACHE_HOME", "relative"), ("HOME", "/home/me")]),
        Some(PathBuf::from("/home/me/.cache/acp-conductor"))
    );
    assert_eq!(cache(&[]), None);
    let set = parse(&temp, "", &[("HOME", "/home/me")]).unwrap();
    assert_eq!(
        set.conductor.cache_dir,
        Some(PathBuf::from("/home/me/.cache/acp-conductor"))
    );
    let explicit = parse_str(
        "[conductor]\ncache_dir = \"cache\"\n[agent]\nbuiltin = \"demo\"\n",
        &temp.path().join("conf/conductor.toml"),
        &|_| Some("/home/me".to_owned()),
        Some(&temp.path().join("exe")),
    )
    .unwrap();
    assert_eq!(explicit.conductor.cache_dir, Some(conf(&temp, "cache")));
    let not_a_dir = parse_str(
        "[conductor]\ncache_dir = \"p1.wasm\"\n[agent]\nbuiltin = \"demo\"\n",
        &temp.path().join("conf/conductor.toml"),
        &|_| None,
        Some(&temp.path().join("exe")),
    )
    .unwrap_err();
    assert_eq!(
        not_a_dir.0[0].message,
        format!(
            "`cache_dir` {} is not a directory",
            conf(&temp, "p1.wasm").display()
        )
    );
}

#[test]
fn wasm_kinds_are_read_from_the_file_header() {
    let temp = machine("wasm-kinds");
    assert_eq!(
        WasmKind::of_file(&conf(&temp, "p1.wasm")).ok(),
        Some(WasmKind::Module)
    );
    assert_eq!(
        WasmKind::of_file(&conf(&temp, "p2.wasm")).ok(),
        Some(WasmKind::Component)
    );
    assert!(WasmKind::of_file(Path::new("/nonexistent.wasm")).is_err());
}

const HASH: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

#[test]
fn a_wasm_url_is_kept_in_the_cache_under_its_hash() {
    let temp = machine("wasm-url");
    let config = parse(
        &temp,
        &format!(
            "[conductor]\ncache_dir = \"cache\"\n[[proxy]]\nname = \"r\"\n\
             wasm = \"https://example.com/r.wasm\"\nsha256 = \"{}\"\n",
            HASH.to_uppercase()
        ),
        &[],
    )
    .unwrap();
    let spec = wasm(&config);
    let download = spec.download.as_ref().expect("a download");
    assert_eq!(download.url, "https://example.com/r.wasm");
    assert_eq!(download.sha256_hex(), HASH);
    assert_eq!(
        spec.module,
        conf(&temp, "cache")
            .join("wasm-downloads")
            .join(format!("{HASH}.wasm"))
    );
}

#[test]
fn a_wasm_url_needs_a_well_formed_sha256_and_sha256_needs_a_url() {
    let temp = machine("wasm-url-errors");
    assert_eq!(
        errors(
            &temp,
            "[[proxy]]\nname = \"r\"\nwasm = \"https://example.com/r.wasm\"\n"
        ),
        [
            "3:8: `wasm` is a URL, so `sha256` is required: the SHA-256 of the file (64 \
          hexadecimal digits, as `sha256sum` prints it), which the download must match"
        ]
    );
    assert_eq!(
        errors(
            &temp,
            "[[proxy]]\nname = \"r\"\nwasm = \"https://example.com/r.wasm\"\nsha256 = \"+f\"\n"
        ),
        ["4:10: `sha256` must be 64 hexadecimal digits, found \"+f\""]
    );
    assert_eq!(
        errors(
            &temp,
            &format!("[[proxy]]\nname = \"r\"\nwasm = \"p1.wasm\"\nsha256 = \"{HASH}\"\n")
        ),
        [
            "4:1: `sha256` applies only to a `wasm` URL: it is the hash the downloaded file must \
          have"
        ]
    );
}
