//! Whole-file tests of single values: sizes, durations, enumerations, empty and NUL strings.
//! Must not know the validator's internals: everything goes through `parse_str`/`load_with`.

use std::time::Duration;

use super::*;

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
fn mcp_bridge_is_one_of_three_forms() {
    let machine = Machine::new("mcp-bridge");
    for (text, form) in [
        ("auto", BridgeForm::Auto),
        ("http", BridgeForm::Http),
        ("stdio", BridgeForm::Stdio),
    ] {
        let settings = machine
            .valid(&format!(
                "[conductor]\nmcp_bridge = \"{text}\"\n{DEMO_AGENT}"
            ))
            .conductor;
        assert_eq!(settings.mcp_bridge, form, "{text}");
    }
    assert_eq!(
        machine.valid(DEMO_AGENT).conductor.mcp_bridge,
        BridgeForm::Auto
    );
    assert_eq!(
        machine.errors(&format!("[conductor]\nmcp_bridge = \"htp\"\n{DEMO_AGENT}")),
        [
            "2:14: `mcp_bridge` must be \"auto\", \"http\" or \"stdio\", found \"htp\"; did you mean \"http\"?"
        ]
    );
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
