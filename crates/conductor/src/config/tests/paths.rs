//! Whole-file tests of paths and programs: relative to the file, next to the conductor, on `PATH`.
//! Must not know the validator's internals: everything goes through `parse_str`/`load_with`.

use std::path::Path;

use super::*;

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
