//! Whole-file tests of how errors are found and shown: keys, types, syntax, unreadable files.
//! Must not know the validator's internals: everything goes through `parse_str`/`load_with`.

use std::path::Path;

use super::*;

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
