//! Whole-file tests of `${VAR}` in string values: where it applies and where its errors are.
//! Must not know the validator's internals: everything goes through `parse_str`/`load_with`.

use super::*;

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
