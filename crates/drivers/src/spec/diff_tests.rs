//! The diff of two configs, case by case: each kind of change to a proxy, order changes, the
//! agent and the settings a reload does not apply.

use std::path::PathBuf;
use std::time::Duration;

use super::*;
use crate::spec::{
    BuiltinAgent, ConductorSettings, DirGrant, DirMode, FailurePolicy, Mode, OnFailure,
    ProxyProtocol, Sandbox, WasmDownload,
};

fn command(name: &str) -> CommandSpec {
    CommandSpec {
        name: name.to_owned(),
        program: PathBuf::from(format!("/bin/{name}")),
        args: Vec::new(),
        env: Vec::new(),
        cwd: None,
    }
}

fn native(name: &str) -> ProxySpec {
    ProxySpec {
        name: name.to_owned(),
        launch: ProxyLaunch::Native(command(name)),
        protocol: ProxyProtocol::Auto,
        failure: FailurePolicy::default(),
        shared: false,
    }
}

fn wasm(name: &str) -> ProxySpec {
    ProxySpec {
        launch: ProxyLaunch::Wasm(WasmSpec {
            name: name.to_owned(),
            module: PathBuf::from(format!("/w/{name}.wasm")),
            download: None,
            args: Vec::new(),
            env: Vec::new(),
            sandbox: Sandbox::default(),
        }),
        ..native(name)
    }
}

fn remote(name: &str) -> ProxySpec {
    ProxySpec {
        launch: ProxyLaunch::Remote(RemoteSpec {
            name: name.to_owned(),
            url: "wss://example.test/acp".parse().unwrap(),
            headers: vec![("Authorization".to_owned(), "Bearer a".to_owned())],
        }),
        ..native(name)
    }
}

fn config(proxies: Vec<ProxySpec>) -> Config {
    Config {
        file: PathBuf::from("/c/conductor.toml"),
        conductor: ConductorSettings::default(),
        agent: Some(AgentSpec::Command(command("agent"))),
        proxies,
        agent_failure: FailurePolicy::default(),
        agent_on_reload: Default::default(),
    }
}

fn diff_of(old: &Config, new: &Config) -> ChainDiff {
    let none = FileDigests::default();
    diff(
        Side {
            config: old,
            digests: &none,
        },
        Side {
            config: new,
            digests: &none,
        },
    )
}

fn kept(name: &str, position: usize) -> ProxyChange {
    ProxyChange::Kept {
        name: name.to_owned(),
        position,
    }
}

fn replaced(name: &str, from: usize, to: usize, what: Vec<Difference>) -> ProxyChange {
    ProxyChange::Replaced {
        name: name.to_owned(),
        from,
        to,
        what,
        moved: false,
    }
}

fn launch_mut(proxy: &mut ProxySpec) -> &mut CommandSpec {
    match &mut proxy.launch {
        ProxyLaunch::Native(command) => command,
        _ => panic!("not native"),
    }
}

fn wasm_mut(proxy: &mut ProxySpec) -> &mut WasmSpec {
    match &mut proxy.launch {
        ProxyLaunch::Wasm(wasm) => wasm,
        _ => panic!("not wasm"),
    }
}

#[test]
fn the_same_config_changes_nothing() {
    let old = config(vec![native("a"), wasm("b"), remote("c")]);
    let mut new = old.clone();
    new.file = PathBuf::from("/elsewhere/conductor.toml");
    let diff = diff_of(&old, &new);
    assert!(diff.is_empty(), "{diff:?}");
    assert_eq!(diff.proxies, vec![kept("a", 0), kept("b", 1), kept("c", 2)]);
    assert_eq!(
        diff.to_string(),
        "kept `a`\nkept `b`\nkept `c`\nkept the agent\n"
    );
}

#[test]
fn each_change_to_a_command_is_named() {
    let old = config(vec![native("a")]);
    let mut new = old.clone();
    let launch = launch_mut(&mut new.proxies[0]);
    launch.program = PathBuf::from("/opt/a");
    launch.args = vec!["--v2".to_owned()];
    launch.env = vec![("KEY".to_owned(), "secret".to_owned())];
    launch.cwd = Some(PathBuf::from("/tmp"));
    let diff = diff_of(&old, &new);
    assert_eq!(
        diff.proxies,
        vec![replaced(
            "a",
            0,
            0,
            vec![
                Difference::Program {
                    from: PathBuf::from("/bin/a"),
                    to: PathBuf::from("/opt/a"),
                },
                Difference::Args,
                Difference::Env(vec!["KEY".to_owned()]),
                Difference::Cwd,
            ]
        )]
    );
    assert!(!diff.is_empty());
    assert_eq!(
        diff.proxies[0].to_string(),
        "replaced `a` (command /bin/a -> /opt/a, args, env (KEY), cwd)"
    );
    assert!(!diff.to_string().contains("secret"));
}

#[test]
fn env_names_changed_removed_and_added_in_first_seen_order() {
    let old = config(vec![native("a")]);
    let mut new = old.clone();
    launch_mut(&mut new.proxies[0]).env = vec![("B".to_owned(), "1".to_owned())];
    let mut old = old;
    launch_mut(&mut old.proxies[0]).env = vec![
        ("A".to_owned(), "1".to_owned()),
        ("B".to_owned(), "2".to_owned()),
        ("C".to_owned(), "3".to_owned()),
    ];
    launch_mut(&mut new.proxies[0])
        .env
        .push(("D".to_owned(), "4".to_owned()));
    assert_eq!(
        diff_of(&old, &new).proxies,
        vec![replaced(
            "a",
            0,
            0,
            vec![Difference::Env(vec![
                "A".to_owned(),
                "B".to_owned(),
                "C".to_owned(),
                "D".to_owned()
            ])]
        )]
    );
}

#[test]
fn reordered_variables_count_as_changed() {
    let mut old = config(vec![native("a")]);
    launch_mut(&mut old.proxies[0]).env = vec![
        ("A".to_owned(), "1".to_owned()),
        ("B".to_owned(), "2".to_owned()),
    ];
    let mut new = old.clone();
    launch_mut(&mut new.proxies[0]).env.reverse();
    assert_eq!(
        diff_of(&old, &new).proxies,
        vec![replaced(
            "a",
            0,
            0,
            vec![Difference::Env(vec!["B".to_owned(), "A".to_owned()])]
        )]
    );
}

#[test]
fn each_change_to_a_wasm_proxy_is_named() {
    let old = config(vec![wasm("w")]);
    let mut new = old.clone();
    let spec = wasm_mut(&mut new.proxies[0]);
    spec.module = PathBuf::from("/w/w2.wasm");
    spec.args = vec!["x".to_owned()];
    spec.env = vec![("E".to_owned(), "1".to_owned())];
    spec.sandbox.dirs.push(DirGrant {
        host: PathBuf::from("/data"),
        guest: "/data".to_owned(),
        mode: DirMode::ReadOnly,
    });
    spec.sandbox.memory = 1 << 20;
    assert_eq!(
        diff_of(&old, &new).proxies,
        vec![replaced(
            "w",
            0,
            0,
            vec![
                Difference::WasmFile {
                    from: "/w/w.wasm".to_owned(),
                    to: "/w/w2.wasm".to_owned(),
                },
                Difference::Args,
                Difference::Env(vec!["E".to_owned()]),
                Difference::Grants,
                Difference::Limits,
            ]
        )]
    );
}

#[test]
fn passed_variables_are_grants_and_the_message_timeout_a_limit() {
    let old = config(vec![wasm("w")]);
    let mut new = old.clone();
    wasm_mut(&mut new.proxies[0])
        .sandbox
        .pass_env
        .push("HOME".to_owned());
    assert_eq!(
        diff_of(&old, &new).proxies,
        vec![replaced("w", 0, 0, vec![Difference::Grants])]
    );
    let mut new = old.clone();
    wasm_mut(&mut new.proxies[0]).sandbox.message_timeout = Duration::from_secs(1);
    assert_eq!(
        diff_of(&old, &new).proxies,
        vec![replaced("w", 0, 0, vec![Difference::Limits])]
    );
}

#[test]
fn a_wasm_file_rebuilt_in_place_is_a_changed_hash() {
    let config = config(vec![wasm("w")]);
    let mut before = FileDigests::default();
    before.insert(PathBuf::from("/w/w.wasm"), [1; 32]);
    let mut after = FileDigests::default();
    after.insert(PathBuf::from("/w/w.wasm"), [2; 32]);
    let side = |digests| Side {
        config: &config,
        digests,
    };
    assert_eq!(
        diff(side(&before), side(&after)).proxies,
        vec![replaced("w", 0, 0, vec![Difference::WasmHash])]
    );
    let same = before.clone();
    assert!(diff(side(&before), side(&same)).is_empty());
    // A file that could not be read before and can now is a change too.
    let unread = FileDigests::default();
    assert_eq!(
        diff(side(&unread), side(&after)).proxies,
        vec![replaced("w", 0, 0, vec![Difference::WasmHash])]
    );
}

#[test]
fn a_download_is_named_by_its_url_and_hash() {
    let mut old = config(vec![wasm("w")]);
    wasm_mut(&mut old.proxies[0]).download = Some(WasmDownload {
        url: "https://example.test/w.wasm".to_owned(),
        sha256: [0xab; 32],
    });
    let mut new = old.clone();
    wasm_mut(&mut new.proxies[0])
        .download
        .as_mut()
        .unwrap()
        .sha256 = [0xcd; 32];
    let changes = diff_of(&old, &new).proxies;
    assert_eq!(
        changes,
        vec![replaced(
            "w",
            0,
            0,
            vec![Difference::WasmFile {
                from: format!("https://example.test/w.wasm (SHA-256 {})", "ab".repeat(32)),
                to: format!("https://example.test/w.wasm (SHA-256 {})", "cd".repeat(32)),
            }]
        )]
    );
}

#[test]
fn a_remote_proxy_changes_by_url_and_header_names_never_values() {
    let old = config(vec![remote("r")]);
    let mut new = old.clone();
    let ProxyLaunch::Remote(spec) = &mut new.proxies[0].launch else {
        unreachable!()
    };
    spec.url = "wss://other.test/acp".parse().unwrap();
    spec.headers[0].1 = "Bearer b".to_owned();
    let diff = diff_of(&old, &new);
    assert_eq!(
        diff.proxies,
        vec![replaced(
            "r",
            0,
            0,
            vec![
                Difference::Url,
                Difference::Headers(vec!["Authorization".to_owned()])
            ]
        )]
    );
    assert!(!diff.to_string().contains("Bearer"));
}

#[test]
fn another_kind_of_launch_is_a_kind_change() {
    let old = config(vec![native("a"), wasm("b")]);
    let new = config(vec![wasm("a"), remote("b")]);
    assert_eq!(
        diff_of(&old, &new).proxies,
        vec![
            replaced(
                "a",
                0,
                0,
                vec![Difference::Kind {
                    from: "command",
                    to: "wasm"
                }]
            ),
            replaced(
                "b",
                1,
                1,
                vec![Difference::Kind {
                    from: "wasm",
                    to: "url"
                }]
            ),
        ]
    );
}

#[test]
fn protocol_failure_policy_and_sharing_are_changes() {
    let old = config(vec![native("a")]);
    let mut new = old.clone();
    new.proxies[0].protocol = ProxyProtocol::Rfd;
    new.proxies[0].failure.on_failure = OnFailure::Bypass;
    new.proxies[0].shared = true;
    assert_eq!(
        diff_of(&old, &new).proxies,
        vec![replaced(
            "a",
            0,
            0,
            vec![
                Difference::Protocol,
                Difference::FailurePolicy,
                Difference::Shared
            ]
        )]
    );
    let mut new = old.clone();
    new.proxies[0].failure.request_timeout = Some(Duration::from_secs(9));
    assert_eq!(
        diff_of(&old, &new).proxies,
        vec![replaced("a", 0, 0, vec![Difference::FailurePolicy])]
    );
}

#[test]
fn added_and_removed_proxies_with_their_positions() {
    let old = config(vec![native("a"), native("b"), native("c")]);
    let new = config(vec![native("b"), native("d"), native("c")]);
    let diff = diff_of(&old, &new);
    assert_eq!(
        diff.proxies,
        vec![
            kept("b", 0),
            ProxyChange::Added {
                name: "d".to_owned(),
                position: 1
            },
            kept("c", 2),
            ProxyChange::Removed {
                name: "a".to_owned(),
                position: 0
            },
        ]
    );
    assert_eq!(
        diff.to_string(),
        "kept `b`\nadded `d` at 1\nkept `c`\nremoved `a`\nkept the agent\n"
    );
    assert!(diff.proxies[1].starts_instance());
    assert!(!diff.proxies[0].starts_instance());
}

#[test]
fn removing_a_proxy_does_not_move_the_ones_after_it() {
    let old = config(vec![native("a"), native("b"), native("c")]);
    let new = config(vec![native("b"), native("c")]);
    assert_eq!(
        diff_of(&old, &new).proxies[..2],
        [kept("b", 0), kept("c", 1)]
    );
}

#[test]
fn a_swap_moves_one_proxy() {
    let old = config(vec![native("a"), native("b")]);
    let new = config(vec![native("b"), native("a")]);
    let diff = diff_of(&old, &new);
    assert_eq!(
        diff.proxies,
        vec![
            ProxyChange::Moved {
                name: "b".to_owned(),
                from: 1,
                to: 0
            },
            kept("a", 1),
        ]
    );
    assert!(!diff.is_empty());
    assert_eq!(diff.proxies[0].to_string(), "moved `b` (1 -> 0)");
}

#[test]
fn moving_the_last_proxy_first_moves_only_it() {
    let old = config(vec![native("a"), native("b"), native("c"), native("d")]);
    let new = config(vec![native("d"), native("a"), native("b"), native("c")]);
    let diff = diff_of(&old, &new);
    let moved: Vec<&str> = diff
        .proxies
        .iter()
        .filter(|change| matches!(change, ProxyChange::Moved { .. }))
        .map(ProxyChange::name)
        .collect();
    assert_eq!(moved, vec!["d"]);
}

#[test]
fn a_replaced_proxy_that_also_moved_is_replaced_at_its_new_position() {
    let old = config(vec![native("a"), native("b")]);
    let mut new = config(vec![native("b"), native("a")]);
    launch_mut(&mut new.proxies[0]).args = vec!["x".to_owned()];
    let diff = diff_of(&old, &new);
    assert_eq!(
        diff.proxies,
        vec![
            ProxyChange::Replaced {
                name: "b".to_owned(),
                from: 1,
                to: 0,
                what: vec![Difference::Args],
                moved: true,
            },
            kept("a", 1)
        ]
    );
    assert_eq!(
        diff.proxies[0].to_string(),
        "replaced `b` (args) and moved (1 -> 0)"
    );
}

#[test]
fn longest_increasing_runs() {
    assert_eq!(longest_increasing(&[]), Vec::<usize>::new());
    assert_eq!(longest_increasing(&[0, 1, 2]), vec![0, 1, 2]);
    assert_eq!(longest_increasing(&[2, 1, 0]), vec![2]);
    assert_eq!(longest_increasing(&[3, 0, 1, 2]), vec![1, 2, 3]);
    assert_eq!(longest_increasing(&[1, 0, 3, 2, 4]), vec![1, 3, 4]);
}

#[test]
fn the_agent_changes_by_command_kind_name_and_failure_policy() {
    let old = config(Vec::new());
    let mut new = old.clone();
    let Some(AgentSpec::Command(agent)) = &mut new.agent else {
        unreachable!()
    };
    agent.args = vec!["--model".to_owned(), "x".to_owned()];
    agent.name = "claude".to_owned();
    new.agent_failure.on_failure = OnFailure::Bypass;
    let diff = diff_of(&old, &new);
    assert_eq!(
        diff.agent,
        AgentChange::Changed(vec![
            Difference::Args,
            Difference::Name,
            Difference::FailurePolicy
        ])
    );
    assert!(!diff.is_empty());
    assert_eq!(
        diff.to_string(),
        "agent changed (args, name, failure policy)\n"
    );

    let mut builtin = old.clone();
    builtin.agent = Some(AgentSpec::Builtin {
        agent: BuiltinAgent::Demo,
        command: command("acp-demo-agent"),
    });
    assert_eq!(
        diff_of(&old, &builtin).agent,
        AgentChange::Changed(vec![Difference::Kind {
            from: "command",
            to: "builtin"
        }])
    );
    let mut none = old.clone();
    none.agent = None;
    assert_eq!(
        diff_of(&none, &none).agent,
        AgentChange::Kept,
        "proxy mode has no agent to change"
    );
}

#[test]
fn conductor_settings_are_listed_as_not_applied() {
    let old = config(vec![native("a")]);
    let mut new = old.clone();
    new.conductor.mode = Mode::Proxy;
    new.conductor.max_line = 1;
    new.conductor.write_timeout = Duration::from_secs(1);
    new.conductor.shutdown_grace = Duration::from_secs(1);
    new.conductor.queue_limit = 1;
    new.conductor.cache_dir = Some(PathBuf::from("/c"));
    new.conductor.trace.file = Some(PathBuf::from("/t"));
    new.conductor.mcp_bridge = crate::spec::BridgeForm::Http;
    let diff = diff_of(&old, &new);
    assert_eq!(
        diff.conductor,
        vec![
            "mode",
            "max_line",
            "write_timeout",
            "shutdown_grace",
            "queue_limit",
            "cache_dir",
            "trace",
            "mcp_bridge"
        ]
    );
    assert!(!diff.is_empty());
    assert!(
        diff.to_string()
            .ends_with("[conductor] mcp_bridge changed (applied on restart only)\n")
    );
}

#[test]
fn digests_are_read_from_the_files_a_config_names() {
    let dir = std::env::temp_dir().join(format!("acp-diff-digests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("p.wasm");
    std::fs::write(&file, b"\0asm\x01\0\0\0").unwrap();
    let mut config = config(vec![wasm("p"), wasm("absent")]);
    wasm_mut(&mut config.proxies[0]).module = file.clone();
    let first = FileDigests::of(&config);
    let mut expected = FileDigests::default();
    expected.insert(file.clone(), Sha256::digest(b"\0asm\x01\0\0\0").into());
    assert_eq!(first, expected);
    std::fs::write(&file, b"\0asm\x01\0\0\0\x00").unwrap();
    assert_ne!(FileDigests::of(&config), first);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_edited_policy_file_is_a_change_and_other_argument_files_are_not() {
    let dir = std::env::temp_dir().join(format!("acp-diff-policy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let policy = dir.join("policy.toml");
    std::fs::write(&policy, "deny = []\n").unwrap();
    let mut config = config(vec![native("guard")]);
    let log = dir.join("written-by-the-proxy.log");
    std::fs::write(&log, "one\n").unwrap();
    launch_mut(&mut config.proxies[0]).args = vec![
        "--policy".to_owned(),
        policy.display().to_string(),
        "--log".to_owned(),
        log.display().to_string(),
    ];
    let before = FileDigests::of(&config);
    std::fs::write(&log, "two\n").unwrap();
    assert!(
        diff(
            side_of(&config, &before),
            side_of(&config, &FileDigests::of(&config))
        )
        .is_empty()
    );
    std::fs::write(&policy, "deny = [\"rm\"]\n").unwrap();
    let after = FileDigests::of(&config);
    let side = |digests| Side {
        config: &config,
        digests,
    };
    assert_eq!(
        diff(side(&before), side(&after)).proxies,
        vec![replaced(
            "guard",
            0,
            0,
            vec![Difference::PolicyFile(policy.clone())]
        )]
    );
    assert!(diff(side(&after), side(&after)).is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

fn side_of<'a>(config: &'a Config, digests: &'a FileDigests) -> Side<'a> {
    Side { config, digests }
}

#[test]
fn a_policy_file_may_be_joined_to_its_option() {
    let dir = std::env::temp_dir().join(format!("acp-diff-joined-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("p.toml"), "").unwrap();
    let mut command = command("guard");
    command.cwd = Some(dir.clone());
    command.args = vec!["--policy=p.toml".to_owned(), "--policy".to_owned()];
    assert_eq!(command.policy_files(), vec![dir.join("p.toml")]);
    std::fs::remove_dir_all(&dir).unwrap();
}
