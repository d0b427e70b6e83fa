//! Whole-file tests of `conductor.toml` validation: values, defaults and error locations.
//! Must not know the validator's internals: everything goes through `parse_str`/`load_with`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::test_support::TempDir;
use super::*;

/// A config directory, a directory standing for the conductor's own, and one on `PATH`.
struct Machine {
    temp: TempDir,
    vars: HashMap<String, String>,
}

impl Machine {
    fn new(label: &str) -> Self {
        let temp = TempDir::new(label);
        temp.dir("conf");
        temp.file("exe/context-proxy", 0o755);
        temp.demo_agent("exe");
        temp.file("bin/npx", 0o755);
        temp.file("bin/guard", 0o755);
        let mut vars = HashMap::new();
        vars.insert(
            "PATH".to_owned(),
            temp.path().join("bin").display().to_string(),
        );
        vars.insert("API_KEY".to_owned(), "secret".to_owned());
        vars.insert("EMPTY".to_owned(), String::new());
        Self { temp, vars }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.temp.path().join(relative)
    }

    fn config_file(&self) -> PathBuf {
        self.path("conf/conductor.toml")
    }

    fn exe_dir(&self) -> PathBuf {
        self.path("exe")
    }

    fn parse(&self, text: &str) -> Result<Config, ConfigErrors> {
        let lookup = |name: &str| self.vars.get(name).cloned();
        parse_str(text, &self.config_file(), &lookup, Some(&self.exe_dir()))
    }

    fn valid(&self, text: &str) -> Config {
        match self.parse(text) {
            Ok(config) => config,
            Err(errors) => panic!("expected a valid config, got:\n{errors}"),
        }
    }

    /// The errors as `line:column: message`, without the file name.
    fn errors(&self, text: &str) -> Vec<String> {
        match self.parse(text) {
            Ok(config) => panic!("expected errors, got {config:#?}"),
            Err(ConfigErrors(errors)) => errors
                .iter()
                .map(|error| {
                    assert_eq!(error.file, self.config_file());
                    format!("{}:{}: {}", error.line, error.column, error.message)
                })
                .collect(),
        }
    }
}

const DEMO_AGENT: &str = "[agent]\nbuiltin = \"demo\"\n";

/// The child process of a `command` proxy.
fn native(proxy: &ProxySpec) -> &CommandSpec {
    match &proxy.launch {
        ProxyLaunch::Native(command) => command,
        other => panic!("expected a command proxy, got {other:?}"),
    }
}

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
fn sizes_accept_units_and_integers() {
    let machine = Machine::new("sizes");
    let settings = |max_line: &str, queue_limit: &str| {
        machine
            .valid(&format!(
                "[conductor]\nmax_line = {max_line}\nqueue_limit = {queue_limit}\n{DEMO_AGENT}"
            ))
            .conductor
    };
    let parsed = settings("\"512KiB\"", "1048576");
    assert_eq!((parsed.max_line, parsed.queue_limit), (512 << 10, 1 << 20));
    let parsed = settings("\"64MiB\"", "1_024");
    assert_eq!((parsed.max_line, parsed.queue_limit), (64 << 20, 1024));
    let parsed = settings("0x400", "\"7\"");
    assert_eq!((parsed.max_line, parsed.queue_limit), (1024, 7));
}

#[test]
fn bad_sizes_are_located_at_their_values() {
    let machine = Machine::new("bad-sizes");
    let errors = machine.errors(&format!(
        "[conductor]\nmax_line = \"64MB\"\nqueue_limit = 0\n{DEMO_AGENT}"
    ));
    assert_eq!(
        errors,
        [
            "2:12: `max_line`: invalid size \"64MB\": write a whole number of bytes, or a whole \
             number followed by KiB, MiB or GiB, such as \"64MiB\"; did you mean \"64MiB\"?",
            "3:15: `queue_limit`: size must be greater than zero",
        ]
    );
    assert_eq!(
        machine.errors(&format!("[conductor]\nmax_line = -5\n{DEMO_AGENT}")),
        ["2:12: `max_line`: size -5 is negative"]
    );
    assert_eq!(
        machine.errors(&format!("[conductor]\nmax_line = 1.5\n{DEMO_AGENT}")),
        ["2:12: `max_line` must be a size such as \"64MiB\" or a number of bytes, found float"]
    );
}

#[test]
fn durations_accept_units() {
    let machine = Machine::new("durations");
    let settings = machine
        .valid(&format!(
            "[conductor]\nwrite_timeout = \"2m\"\nshutdown_grace = \"0s\"\n{DEMO_AGENT}"
        ))
        .conductor;
    assert_eq!(settings.write_timeout, Duration::from_secs(120));
    assert_eq!(settings.shutdown_grace, Duration::ZERO);
}

#[test]
fn bad_durations_are_located_at_their_values() {
    let machine = Machine::new("bad-durations");
    let errors = machine.errors(&format!(
        "[conductor]\nwrite_timeout = 30\nshutdown_grace = \"2 days\"\n{DEMO_AGENT}"
    ));
    assert_eq!(
        errors,
        [
            "2:17: `write_timeout` must be a duration such as \"30s\" or \"500ms\", found integer",
            "3:18: `shutdown_grace`: invalid duration \"2 days\": write a whole number followed \
             by ms, s, m or h, such as \"30s\"",
        ]
    );
    assert_eq!(
        machine.errors(&format!(
            "[conductor]\nwrite_timeout = \"0ms\"\n{DEMO_AGENT}"
        )),
        ["2:17: `write_timeout` must be longer than zero"]
    );
}

#[test]
fn enumerations_list_their_values_and_suggest_one() {
    let machine = Machine::new("enums");
    let errors = machine.errors(
        "[conductor]\nmode = \"agnet\"\n[agent]\nbuiltin = \"dmeo\"\n\
         [[proxy]]\nname = \"p\"\ncommand = \"guard\"\nprotocol = \"RFD\"\n",
    );
    assert_eq!(
        errors,
        [
            "2:8: `mode` must be \"agent\" or \"proxy\", found \"agnet\"; did you mean \"agent\"?",
            "4:11: `builtin` must be \"demo\", found \"dmeo\"; did you mean \"demo\"?",
            "8:12: `protocol` must be \"auto\", \"rfd\" or \"underscore\", found \"RFD\"; did you \
             mean \"rfd\"?",
        ]
    );
}

#[test]
fn interpolation_reaches_every_string_value() {
    let mut machine = Machine::new("interpolation");
    machine.vars.insert("TOOL".to_owned(), "guard".to_owned());
    machine.vars.insert("DIR".to_owned(), "work".to_owned());
    machine.vars.insert("MODE".to_owned(), "proxy".to_owned());
    let work = machine.temp.dir("conf/work");
    let config = machine.valid(
        r#"
[conductor]
mode = "${MODE}"
max_line = "${LINE:-2KiB}"
[agent]
command = "${TOOL}"
name = "${NAME:-fallback}"
args = ["--key=${API_KEY}", "$${literal}", "${EMPTY:-empty}", "[${EMPTY}]"]
env = { KEY = "${API_KEY}", DEFAULTED = "${UNSET:-d}", LITERAL = "$${HOME}" }
cwd = "${DIR}"
"#,
    );
    assert_eq!(config.conductor.mode, Mode::Proxy);
    assert_eq!(config.conductor.max_line, 2048);
    assert_eq!(
        config.agent.unwrap(),
        AgentSpec::Command(CommandSpec {
            name: "fallback".to_owned(),
            program: machine.path("bin/guard"),
            args: vec![
                "--key=secret".to_owned(),
                "${literal}".to_owned(),
                "empty".to_owned(),
                "[]".to_owned(),
            ],
            env: vec![
                ("KEY".to_owned(), "secret".to_owned()),
                ("DEFAULTED".to_owned(), "d".to_owned()),
                ("LITERAL".to_owned(), "${HOME}".to_owned()),
            ],
            cwd: Some(work),
        })
    );
}

#[test]
fn unset_variables_are_located_at_each_string() {
    let machine = Machine::new("unset");
    let errors = machine.errors(
        "[agent]\ncommand = \"npx\"\nargs = [\"ok\", \"${NOPE}\"]\n\
         env = { A = \"${ALSO_NOPE}\" }\n",
    );
    assert_eq!(
        errors,
        [
            "3:15: environment variable `NOPE` is not set (write `${NOPE:-default}` to give a \
             default)",
            "4:13: environment variable `ALSO_NOPE` is not set (write `${ALSO_NOPE:-default}` to \
             give a default)",
        ]
    );
}

#[test]
fn malformed_references_are_errors() {
    let machine = Machine::new("malformed");
    let errors = machine.errors("[agent]\ncommand = \"npx\"\nargs = [\"${oops\"]\n");
    assert_eq!(
        errors,
        ["3:9: unterminated `${` in \"${oops\" (write `$${` for a literal `${`)"]
    );
}

#[test]
fn disabled_proxies_are_checked_against_the_file_but_not_the_machine() {
    let machine = Machine::new("disabled");
    let config = machine.valid(&format!(
        "{DEMO_AGENT}[[proxy]]\nname = \"off\"\ncommand = \"not-installed\"\n\
         args = [\"${{NOT_SET}}\"]\ncwd = \"missing-dir\"\nenabled = false\n"
    ));
    assert!(config.proxies.is_empty());

    let errors = machine.errors(&format!(
        "{DEMO_AGENT}[[proxy]]\nname = \"off\"\ncommand = \"x\"\nenabled = false\n\
         args = 1\ncomand = \"y\"\nenv = {{ A = \"${{bad\" }}\n"
    ));
    assert_eq!(
        errors,
        [
            "7:8: `args` must be an array of strings, found integer",
            "8:1: unknown key `comand` in [[proxy]] \"off\"; did you mean `command`?",
            "9:13: unterminated `${` in \"${bad\" (write `$${` for a literal `${`)",
        ]
    );
}

#[test]
fn relative_paths_resolve_against_the_config_directory() {
    let machine = Machine::new("relative");
    let tool = machine.temp.file("conf/tools/proxy", 0o755);
    let sibling = machine.temp.file("other/agent", 0o755);
    let work = machine.temp.dir("other/work");
    let config = machine.valid(
        "[agent]\ncommand = \"../other/agent\"\ncwd = \"../other/work\"\n\
         [[proxy]]\nname = \"p\"\ncommand = \"./tools/proxy\"\n\
         [[proxy]]\nname = \"q\"\ncommand = \"tools/proxy\"\ncwd = \".\"\n",
    );
    let Some(AgentSpec::Command(agent)) = &config.agent else {
        panic!("expected a command agent");
    };
    assert_eq!(agent.program, machine.path("conf/../other/agent"));
    assert_eq!(
        std::fs::canonicalize(&agent.program).unwrap(),
        std::fs::canonicalize(sibling).unwrap()
    );
    assert_eq!(agent.cwd, Some(machine.path("conf/../other/work")));
    assert!(agent.cwd.as_ref().unwrap().is_dir() && work.is_dir());
    assert_eq!(native(&config.proxies[0]).program, tool);
    assert_eq!(native(&config.proxies[1]).program, tool);
    assert_eq!(native(&config.proxies[1]).cwd, Some(machine.path("conf")));
}

#[test]
fn absolute_paths_stay_as_written() {
    let machine = Machine::new("absolute");
    let tool = machine.temp.file("elsewhere/tool", 0o755);
    let dir = machine.temp.dir("elsewhere/dir");
    let config = machine.valid(&format!(
        "[agent]\ncommand = \"{}\"\ncwd = \"{}\"\n",
        tool.display(),
        dir.display()
    ));
    let Some(AgentSpec::Command(agent)) = config.agent else {
        panic!("expected a command agent");
    };
    assert_eq!((agent.program, agent.cwd), (tool, Some(dir)));
}

#[test]
fn bare_commands_are_found_next_to_the_conductor_before_path() {
    let machine = Machine::new("lookup");
    let beside = machine.temp.file("exe/npx", 0o755);
    let config = machine.valid("[agent]\ncommand = \"npx\"\n");
    let Some(AgentSpec::Command(agent)) = config.agent else {
        panic!("expected a command agent");
    };
    assert_eq!(agent.program, beside);

    let lookup = |name: &str| machine.vars.get(name).cloned();
    let without_exe_dir = parse_str(
        "[agent]\ncommand = \"npx\"\n",
        &machine.config_file(),
        &lookup,
        None,
    )
    .unwrap();
    let Some(AgentSpec::Command(agent)) = without_exe_dir.agent else {
        panic!("expected a command agent");
    };
    assert_eq!(agent.program, machine.path("bin/npx"));
}

#[test]
fn missing_programs_and_directories_are_located_at_their_values() {
    let machine = Machine::new("missing-program");
    machine.temp.file("conf/plain", 0o644);
    let errors = machine.errors(
        "[agent]\ncommand = \"foo\"\ncwd = \"nowhere\"\n\
         [[proxy]]\nname = \"p\"\ncommand = \"./plain\"\n",
    );
    assert_eq!(
        errors,
        [
            "2:11: command `foo` not found next to acp-conductor or on PATH".to_owned(),
            format!(
                "3:7: `cwd` {} does not exist",
                machine.path("conf/nowhere").display()
            ),
            format!(
                "6:11: command `./plain` is not executable ({})",
                machine.path("conf/plain").display()
            ),
        ]
    );
}

#[test]
fn unknown_keys_suggest_the_intended_one() {
    let machine = Machine::new("unknown");
    let errors = machine.errors(
        "agnt = 1\n[conductor]\nmax_lines = 5\n[agent]\ncomand = \"npx\"\ncommand = \"npx\"\n\
         [[proxy]]\nnmae = \"x\"\nname = \"p\"\ncommand = \"guard\"\nimage = \"p.wasm\"\n\
         [proxy.jail]\nmemory = \"1MiB\"\n",
    );
    assert_eq!(
        errors,
        [
            "1:1: unknown key `agnt` at the top level; did you mean `agent`?",
            "3:1: unknown key `max_lines` in [conductor]; did you mean `max_line`?",
            "5:1: unknown key `comand` in [agent]; did you mean `command`?",
            "8:1: unknown key `nmae` in [[proxy]] \"p\"; did you mean `name`?",
            "11:1: unknown key `image` in [[proxy]] \"p\"",
            "12:8: unknown key `jail` in [[proxy]] \"p\"",
        ]
    );
}

#[test]
fn wrong_types_say_what_was_expected() {
    let machine = Machine::new("types");
    let errors = machine.errors(
        "[agent]\ncommand = 5\nargs = 5\nenv = [\"A=1\"]\nname = true\ncwd = 1.0\n\
         [[proxy]]\nname = \"p\"\ncommand = \"guard\"\nargs = [\"a\", 2, [\"b\"]]\n\
         env = { A = 1, B.C = \"x\" }\nenabled = \"yes\"\nprotocol = 1\n",
    );
    assert_eq!(
        errors,
        [
            "2:11: `command` must be a string, found integer",
            "3:8: `args` must be an array of strings, found integer",
            "4:7: `env` must be a table of strings, found array",
            "5:8: `name` must be a string, found boolean",
            "6:7: `cwd` must be a string, found float",
            "10:14: `args` items must be strings, found integer",
            "10:17: `args` items must be strings, found array",
            "11:13: `env.A` must be a string, found integer",
            "11:16: `env.B` must be a string, found table",
            "12:11: `enabled` must be true or false, found string",
            "13:12: `protocol` must be a string, found integer",
        ]
    );
}

#[test]
fn misshapen_tables_say_what_was_expected() {
    let machine = Machine::new("shapes");
    assert_eq!(
        machine.errors("conductor = \"x\"\nagent = 5\n"),
        [
            "1:13: `conductor` must be a table, found string",
            "2:9: `agent` must be a table, found integer",
        ]
    );
    assert_eq!(
        machine.errors(&format!("{DEMO_AGENT}[proxy]\nname = \"p\"\n")),
        ["3:1: `proxy` must be an array of tables (write [[proxy]]), found table"]
    );
    assert_eq!(
        machine.errors(&format!("proxy = [1]\n{DEMO_AGENT}")),
        ["1:10: [[proxy]] entries must be tables, found integer"]
    );
}

#[test]
fn required_keys_are_reported_at_their_table() {
    let machine = Machine::new("required");
    assert_eq!(
        machine.errors(""),
        [
            "1:1: missing [agent] table: it needs `command` (a program to run) or `builtin = \"demo\"` (a conductor nested in another one sets `mode = \"proxy\"` in [conductor] instead)"
        ]
    );
    let nested = machine.valid("[conductor]\nmode = \"proxy\"\n");
    assert_eq!(
        nested.agent, None,
        "proxy mode needs no [agent]: the parent is the successor"
    );
    assert_eq!(
        machine.errors("\n[conductor]\n\n  [agent]\nname = \"a\"\n"),
        [
            "4:3: [agent] needs `command` (a program to run), `registry = \"<id>\"` (an agent from the ACP registry), `url` (an agent served elsewhere) or `builtin = \"demo\"`"
        ]
    );
    assert_eq!(
        machine.errors(&format!(
            "{DEMO_AGENT}[[proxy]]\ncommand = \"guard\"\n[[proxy]]\nname = \"p\"\n"
        )),
        [
            "3:1: [[proxy]] #1 needs a `name`",
            "5:1: [[proxy]] \"p\" needs a `command` (a program to run), `wasm` (a WebAssembly proxy) or `url` (a proxy served elsewhere)",
        ]
    );
}

#[test]
fn empty_values_are_rejected() {
    let machine = Machine::new("empty");
    assert_eq!(
        machine.errors("[agent]\ncommand = \"\"\nname = \"\"\ncwd = \"\"\nenv = { \"\" = \"x\", \"A=B\" = \"y\" }\n"),
        [
            "2:11: `command` must not be empty",
            "3:8: `name` must not be empty",
            "4:7: `cwd` must not be empty (use \".\" for the config file's directory)",
            "5:9: environment variable names must not be empty",
            "5:19: environment variable names must not contain `=`",
        ]
    );
}

#[test]
fn nul_characters_cannot_reach_a_command_line() {
    let machine = Machine::new("nul");
    assert_eq!(
        machine.errors("[agent]\ncommand = \"npx\"\nargs = [\"a\\u0000b\"]\n"),
        ["3:9: `args` must not contain a NUL character"]
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
fn all_errors_are_reported_in_one_pass_in_file_order() {
    let machine = Machine::new("many");
    let errors = machine.errors(
        r#"[[proxy]]
name = "ctx"
command = "missing-proxy"
protocol = "auto"

[conductor]
max_line = "lots"
mode = "agent"

[agent]
comand = "npx"
args = [1]
env = { KEY = "${UNSET_KEY}" }

[[proxy]]
name = "ctx"
"#,
    );
    assert_eq!(
        errors,
        [
            "3:11: command `missing-proxy` not found next to acp-conductor or on PATH",
            "7:12: `max_line`: invalid size \"lots\": write a whole number of bytes, or a whole \
             number followed by KiB, MiB or GiB, such as \"64MiB\"",
            "10:1: [agent] needs `command` (a program to run), `registry = \"<id>\"` (an agent from the ACP registry), `url` (an agent served elsewhere) or `builtin = \"demo\"`",
            "11:1: unknown key `comand` in [agent]; did you mean `command`?",
            "12:9: `args` items must be strings, found integer",
            "13:15: environment variable `UNSET_KEY` is not set (write `${UNSET_KEY:-default}` \
             to give a default)",
            "15:1: [[proxy]] \"ctx\" needs a `command` (a program to run), `wasm` (a WebAssembly proxy) or `url` (a proxy served elsewhere)",
            "16:8: duplicate proxy name `ctx` (first used on line 2)",
        ]
    );
}

#[test]
fn syntax_errors_are_all_located_and_stop_validation() {
    let machine = Machine::new("syntax");
    let errors = machine
        .errors("[agent]\ncommand = \"npx\"\ncommand = \"x\"\nargs = [\"a\" \"b\"]\nbad =\n");
    assert_eq!(
        errors,
        [
            "3:1: invalid TOML: duplicate key",
            "4:13: invalid TOML: missing comma between array elements, expected `,`",
            "5:6: invalid TOML: string values must be quoted, expected literal string",
        ]
    );
}

#[test]
fn errors_display_with_the_file_as_given() {
    let machine = Machine::new("display");
    let lookup = |_: &str| None;
    let errors = parse_str(
        "[agent]\ncomand = 1\n",
        Path::new("conf/conductor.toml"),
        &lookup,
        Some(&machine.exe_dir()),
    )
    .unwrap_err();
    assert_eq!(
        errors.to_string(),
        "conf/conductor.toml:1:1: [agent] needs `command` (a program to run), `registry = \
         \"<id>\"` (an agent from the ACP registry), `url` (an agent served elsewhere) or `builtin = \"demo\"`\n\
         conf/conductor.toml:2:1: unknown key `comand` in [agent]; did you mean `command`?"
    );
}

#[test]
fn relative_file_names_become_absolute_in_the_config() {
    let machine = Machine::new("relative-file");
    let lookup = |_: &str| None;
    let exe_dir = machine.exe_dir();
    let config = parse_str(
        DEMO_AGENT,
        Path::new("conductor.toml"),
        &lookup,
        Some(&exe_dir),
    )
    .unwrap();
    assert!(config.file.is_absolute());
    assert!(config.file.ends_with("conductor.toml"));
}

#[test]
fn load_reads_the_file_and_resolves_against_its_directory() {
    let machine = Machine::new("load");
    let file = machine.temp.write(
        "conf/conductor.toml",
        "[agent]\ncommand = \"npx\"\ncwd = \".\"\n",
    );
    let lookup = |name: &str| machine.vars.get(name).cloned();
    let config = load_with(&file, &lookup, Some(&machine.exe_dir())).unwrap();
    assert_eq!(config.file, file);
    let Some(AgentSpec::Command(agent)) = config.agent else {
        panic!("expected a command agent");
    };
    assert_eq!(agent.cwd, Some(machine.path("conf")));
}

#[test]
fn unreadable_files_are_one_error_without_a_location() {
    let machine = Machine::new("unreadable");
    let missing = machine.path("conf/absent.toml");
    let errors = load_with(&missing, &|_| None, None).unwrap_err();
    assert_eq!(errors.0.len(), 1);
    assert_eq!((errors.0[0].line, errors.0[0].column), (0, 0));
    assert!(
        errors.to_string().starts_with(&format!(
            "{}: cannot read the configuration: ",
            missing.display()
        )),
        "{errors}"
    );
}

#[test]
fn invalid_utf8_is_located_at_the_first_bad_byte() {
    let machine = Machine::new("utf8");
    let file = machine
        .temp
        .write("conf/conductor.toml", b"[agent]\nname = \"a\xffb\"\n");
    let errors = load_with(&file, &|_| None, None).unwrap_err();
    assert_eq!(
        errors.to_string(),
        format!("{}:2:10: the file is not valid UTF-8", file.display())
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

#[test]
fn failure_keys_default_to_failing_the_chain_after_a_minute_without_initialize() {
    let machine = Machine::new("failure-defaults");
    let config =
        machine.valid("[agent]\ncommand = \"npx\"\n[[proxy]]\nname = \"p\"\ncommand = \"guard\"\n");
    let expected = FailurePolicy {
        on_failure: OnFailure::Fail,
        startup_timeout: Duration::from_secs(60),
        request_timeout: None,
    };
    assert_eq!(config.agent_failure, expected);
    assert_eq!(config.proxies[0].failure, expected);
}

#[test]
fn failure_keys_are_checked_where_they_are_written() {
    let machine = Machine::new("failure-errors");
    let errors = machine.errors(
        "[agent]\nbuiltin = \"demo\"\non_failure = \"bypass\"\nrestart_then = \"bypass\"\n\
         [[proxy]]\nname = \"p\"\ncommand = \"guard\"\non_failure = \"restrat\"\n\
         startup_timeout = \"0s\"\nrequest_timeout = 30\n\
         [[proxy]]\nname = \"q\"\ncommand = \"guard\"\non_failure = \"bypass\"\nrestart_then = \"fail\"\n\
         [[proxy]]\nname = \"r\"\ncommand = \"guard\"\non_failure = \"restart\"\nrestart_then = \"stop\"\n",
    );
    assert_eq!(
        errors,
        [
            "3:14: the agent cannot be bypassed: there is nothing behind it for traffic to flow \
             to; `on_failure` of [agent] must be \"fail\" or \"restart\"",
            "4:16: the agent cannot be bypassed: there is nothing behind it for traffic to flow \
             to (leave `restart_then` out; an agent that keeps failing takes the chain down)",
            "8:14: `on_failure` must be \"fail\", \"bypass\" or \"restart\", found \"restrat\"; \
             did you mean \"restart\"?",
            "9:19: `startup_timeout` must be longer than zero",
            "10:19: `request_timeout` must be a duration such as \"30s\" or \"500ms\", found integer",
            "15:1: `restart_then` applies only with `on_failure = \"restart\"`: it says what a \
             component that keeps failing gets once restarts stop",
            "20:16: `restart_then` must be \"fail\" or \"bypass\", found \"stop\"",
        ]
    );
}

#[test]
fn the_agent_cannot_fall_back_to_bypass() {
    let machine = Machine::new("agent-restart-then");
    let errors = machine.errors(
        "[agent]\nbuiltin = \"demo\"\non_failure = \"restart\"\nrestart_then = \"bypass\"\n",
    );
    assert_eq!(
        errors,
        [
            "4:16: the agent cannot be bypassed: there is nothing behind it for traffic to flow \
             to (leave `restart_then` out; an agent that keeps failing takes the chain down)",
        ]
    );
}

#[test]
fn trace_keys_name_a_file_beside_the_config_and_what_to_leave_out() {
    let machine = Machine::new("trace-keys");
    let config = machine.valid(
        "[conductor]\ntrace = \"./trace.jsonl\"\ntrace_payloads = false\n\
         redact = [\"sk-[A-Za-z0-9]{8,}\", \"${API_KEY}\"]\n[agent]\nbuiltin = \"demo\"\n",
    );
    assert_eq!(
        config.conductor.trace,
        TraceSettings {
            file: Some(machine.path("conf/trace.jsonl")),
            payloads: false,
            redact: vec!["sk-[A-Za-z0-9]{8,}".to_owned(), "secret".to_owned()],
        }
    );
    assert_eq!(
        machine.valid(DEMO_AGENT).conductor.trace,
        TraceSettings {
            file: None,
            payloads: true,
            redact: Vec::new(),
        }
    );
}

#[test]
fn trace_keys_are_checked_where_they_are_written() {
    let machine = Machine::new("trace-errors");
    let errors = machine.errors(
        "[conductor]\ntrace = \"missing/trace.jsonl\"\ntrace_payloads = \"no\"\n\
         redact = [\"ok\", \"(unclosed\", \"a*\", 3]\n[agent]\nbuiltin = \"demo\"\n",
    );
    let missing = machine.path("conf/missing");
    assert_eq!(
        errors,
        [
            format!(
                "2:9: `trace`: directory {} does not exist (the conductor creates the file, \
                 not its directory)",
                missing.display()
            ),
            "3:18: `trace_payloads` must be true or false, found string".to_owned(),
            "4:17: `redact`: invalid regular expression `(unclosed`: unclosed group".to_owned(),
            "4:30: `redact`: `a*` can match the empty string, so it would redact everything"
                .to_owned(),
            "4:36: `redact` must be a string, found integer".to_owned(),
        ]
    );
    let errors = machine.errors(
        "[conductor]\ntrace = \".\"\nredact = [\"ok\", \"(unclosed\", \"a*\"]\n\
         [agent]\nbuiltin = \"demo\"\n",
    );
    assert_eq!(
        errors,
        [
            format!(
                "2:9: `trace` {} is a directory; name the file to write",
                machine.path("conf").display()
            ),
            "3:17: `redact`: invalid regular expression `(unclosed`: unclosed group".to_owned(),
            "3:30: `redact`: `a*` can match the empty string, so it would redact everything"
                .to_owned(),
        ]
    );
}
