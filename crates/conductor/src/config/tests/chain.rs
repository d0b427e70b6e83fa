//! Whole-file tests of the chain: the agent, the proxies in order, defaults and names.
//! Must not know the validator's internals: everything goes through `parse_str`/`load_with`.

use std::time::Duration;

use super::*;

#[test]
fn defaults_are_the_documented_ones() {
    let settings = ConductorSettings::default();
    assert_eq!(settings.mode, Mode::Agent);
    assert_eq!(settings.max_line, 64 * 1024 * 1024);
    assert_eq!(settings.write_timeout, Duration::from_secs(30));
    assert_eq!(settings.shutdown_grace, Duration::from_secs(2));
    assert_eq!(settings.queue_limit, 16 * 1024 * 1024);
    assert_eq!(ProxyProtocol::default(), ProxyProtocol::Auto);
}

#[test]
fn builtin_demo_agent_alone_is_a_complete_config() {
    let machine = Machine::new("minimal");
    let config = machine.valid(DEMO_AGENT);
    assert_eq!(
        config,
        Config {
            file: machine.config_file(),
            conductor: ConductorSettings::default(),
            agent: Some(AgentSpec::Builtin {
                agent: BuiltinAgent::Demo,
                command: CommandSpec {
                    name: "demo".to_owned(),
                    program: machine.path("exe/acp-demo-agent"),
                    args: Vec::new(),
                    env: Vec::new(),
                    cwd: None,
                },
            }),
            proxies: Vec::new(),
            agent_failure: FailurePolicy::default(),
            agent_on_reload: Default::default(),
        }
    );
}

#[test]
fn builtin_demo_agent_is_found_like_a_bare_command_name() {
    let machine = Machine::new("demo-on-path");
    std::fs::remove_file(machine.path("exe/acp-demo-agent")).unwrap();
    assert_eq!(
        machine.errors(DEMO_AGENT),
        [
            "2:11: command `acp-demo-agent` not found next to acp-conductor or on PATH: \
             `builtin = \"demo\"` runs it as the agent (build it with `cargo build -p acp-demo`, \
             or install it next to acp-conductor)"
        ]
    );
    let on_path = machine.temp.demo_agent("bin");
    let Some(AgentSpec::Builtin { command, .. }) = machine.valid(DEMO_AGENT).agent else {
        panic!("expected the built-in agent");
    };
    assert_eq!(command.program, on_path);
}

#[test]
fn every_key_is_read() {
    let machine = Machine::new("every-key");
    let work = machine.temp.dir("conf/work");
    let config = machine.valid(
        r#"
[conductor]
mode = "proxy"
max_line = "1GiB"
write_timeout = "500ms"
shutdown_grace = "2m"
queue_limit = "512KiB"
reload_open = true

[agent]
command = "npx"
args = ["-y", "@agentclientprotocol/claude-agent-acp"]
env = { ANTHROPIC_API_KEY = "${API_KEY}", ZED = "1", A = "2" }
cwd = "work"
name = "claude"
on_failure = "restart"
startup_timeout = "2m"
request_timeout = "30m"

[[proxy]]
name = "context"
command = "context-proxy"
args = ["--file", "AGENTS.md"]
env = { K = "v" }
cwd = "."
enabled = true
protocol = "rfd"
on_failure = "restart"
restart_then = "bypass"
startup_timeout = "5s"

[[proxy]]
name = "guard"
command = "guard"
protocol = "underscore"
on_failure = "bypass"
request_timeout = "90s"
shared = true
"#,
    );
    assert_eq!(
        config,
        Config {
            file: machine.config_file(),
            conductor: ConductorSettings {
                mode: Mode::Proxy,
                max_line: 1 << 30,
                write_timeout: Duration::from_millis(500),
                shutdown_grace: Duration::from_secs(120),
                queue_limit: 512 << 10,
                cache_dir: None,
                trace: TraceSettings::default(),
                mcp_bridge: BridgeForm::Auto,
                watch: false,
                reload_open: true,
                otlp: None,
            },
            agent: Some(AgentSpec::Command(CommandSpec {
                name: "claude".to_owned(),
                program: machine.path("bin/npx"),
                args: vec![
                    "-y".to_owned(),
                    "@agentclientprotocol/claude-agent-acp".to_owned()
                ],
                env: vec![
                    ("ANTHROPIC_API_KEY".to_owned(), "secret".to_owned()),
                    ("ZED".to_owned(), "1".to_owned()),
                    ("A".to_owned(), "2".to_owned()),
                ],
                cwd: Some(work),
            })),
            proxies: vec![
                ProxySpec {
                    name: "context".to_owned(),
                    launch: ProxyLaunch::Native(CommandSpec {
                        name: "context".to_owned(),
                        program: machine.path("exe/context-proxy"),
                        args: vec!["--file".to_owned(), "AGENTS.md".to_owned()],
                        env: vec![("K".to_owned(), "v".to_owned())],
                        cwd: Some(machine.path("conf")),
                    }),
                    protocol: ProxyProtocol::Rfd,
                    failure: FailurePolicy {
                        on_failure: OnFailure::Restart {
                            then: AfterRestarts::Bypass,
                        },
                        startup_timeout: Duration::from_secs(5),
                        request_timeout: None,
                    },
                    shared: false,
                },
                ProxySpec {
                    name: "guard".to_owned(),
                    launch: ProxyLaunch::Native(CommandSpec {
                        name: "guard".to_owned(),
                        program: machine.path("bin/guard"),
                        args: Vec::new(),
                        env: Vec::new(),
                        cwd: None,
                    }),
                    protocol: ProxyProtocol::Underscore,
                    failure: FailurePolicy {
                        on_failure: OnFailure::Bypass,
                        startup_timeout: Duration::from_secs(60),
                        request_timeout: Some(Duration::from_secs(90)),
                    },
                    shared: true,
                },
            ],
            agent_failure: FailurePolicy {
                on_failure: OnFailure::Restart {
                    then: AfterRestarts::Fail,
                },
                startup_timeout: Duration::from_secs(120),
                request_timeout: Some(Duration::from_secs(1800)),
            },
            agent_on_reload: Default::default(),
        }
    );
}

#[test]
fn command_agent_defaults() {
    let machine = Machine::new("agent-defaults");
    let config = machine.valid("[agent]\ncommand = \"npx\"\n");
    assert_eq!(
        config.agent.unwrap(),
        AgentSpec::Command(CommandSpec {
            name: "agent".to_owned(),
            program: machine.path("bin/npx"),
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
        })
    );
}

#[test]
fn inline_and_dotted_tables_are_the_same_as_headers() {
    let machine = Machine::new("inline");
    let config = machine.valid(
        "agent = { command = \"npx\" }\nconductor.mode = \"proxy\"\n\
         proxy = [{ name = \"g\", command = \"guard\" }]\n",
    );
    assert_eq!(config.conductor.mode, Mode::Proxy);
    assert_eq!(
        native(&config.proxies[0]).program,
        machine.path("bin/guard")
    );
}

#[test]
fn chain_order_is_file_order_and_disabled_proxies_are_left_out() {
    let machine = Machine::new("order");
    let config = machine.valid(&format!(
        "{DEMO_AGENT}\
         [[proxy]]\nname = \"z\"\ncommand = \"guard\"\n\
         [[proxy]]\nname = \"off\"\ncommand = \"guard\"\nenabled = false\n\
         [[proxy]]\nname = \"a\"\ncommand = \"guard\"\nenabled = true\n\
         [[proxy]]\nname = \"m\"\ncommand = \"context-proxy\"\n"
    ));
    let names: Vec<&str> = config
        .proxies
        .iter()
        .map(|proxy| proxy.name.as_str())
        .collect();
    assert_eq!(names, ["z", "a", "m"]);
    assert!(
        config
            .proxies
            .iter()
            .all(|proxy| proxy.protocol == ProxyProtocol::Auto)
    );
}

#[test]
fn builtin_agents_take_no_launch_keys_and_exclude_command() {
    let machine = Machine::new("builtin");
    assert_eq!(
        machine.errors("[agent]\nbuiltin = \"demo\"\nargs = []\nname = \"d\"\n"),
        [
            "3:1: `args` applies only to an agent started with `command` or `registry`, not to `builtin`",
            "4:1: `name` applies only to an agent started with `command` or `registry`, not to `builtin`",
        ]
    );
    assert_eq!(
        machine.errors("[agent]\ncommand = \"npx\"\nbuiltin = \"other\"\n"),
        [
            "3:1: [agent] sets both `command` and `builtin`; keep one of them",
            "3:11: `builtin` must be \"demo\", found \"other\"",
        ]
    );
}

#[test]
fn proxy_names_are_unique_across_the_chain() {
    let machine = Machine::new("duplicates");
    let errors = machine.errors(
        "[agent]\ncommand = \"npx\"\n\
         [[proxy]]\nname = \"p\"\ncommand = \"guard\"\n\
         [[proxy]]\nname = \"p\"\ncommand = \"guard\"\nenabled = false\n\
         [[proxy]]\nname = \"agent\"\ncommand = \"guard\"\n",
    );
    assert_eq!(
        errors,
        [
            "7:8: duplicate proxy name `p` (first used on line 4)",
            "11:8: proxy name `agent` is also the agent's name (the agent is named `agent` unless \
             [agent] sets `name`); every component needs its own name for logs and errors",
        ]
    );
    assert_eq!(
        machine.errors(
            "[agent]\ncommand = \"npx\"\nname = \"claude\"\n\
             [[proxy]]\nname = \"claude\"\ncommand = \"guard\"\n"
        ),
        [
            "5:8: proxy name `claude` is also the agent's name; every component needs its own \
             name for logs and errors"
        ]
    );
}

#[test]
fn name_clash_with_the_agent_is_found_even_when_the_agent_is_invalid() {
    let machine = Machine::new("clash-invalid-agent");
    assert_eq!(
        machine.errors(
            "[agent]\ncommand = \"not-installed\"\nname = \"a\"\n\
             [[proxy]]\nname = \"a\"\ncommand = \"guard\"\n"
        ),
        [
            "2:11: command `not-installed` not found next to acp-conductor or on PATH",
            "5:8: proxy name `a` is also the agent's name; every component needs its own name \
             for logs and errors",
        ]
    );
}
