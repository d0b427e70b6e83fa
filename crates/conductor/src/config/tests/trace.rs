//! Whole-file tests of `trace`, `trace_payloads` and `redact`.
//! Must not know the validator's internals: everything goes through `parse_str`/`load_with`.

use super::*;

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

#[test]
fn otlp_names_an_http_endpoint_and_anything_else_is_refused_where_written() {
    let machine = Machine::new("otlp-key");
    let config = machine
        .valid("[conductor]\notlp = \"http://collector:4318\"\n[agent]\nbuiltin = \"demo\"\n");
    assert_eq!(
        config.conductor.otlp.as_deref(),
        Some("http://collector:4318")
    );
    assert_eq!(machine.valid(DEMO_AGENT).conductor.otlp, None);
    let errors =
        machine.errors("[conductor]\notlp = \"collector:4318\"\n[agent]\nbuiltin = \"demo\"\n");
    assert_eq!(
        errors,
        ["2:8: `otlp` \"collector:4318\" is not an http:// or https:// URL with a host"]
    );
    let errors = machine.errors("[conductor]\notlp = 4318\n[agent]\nbuiltin = \"demo\"\n");
    assert_eq!(errors, ["2:8: `otlp` must be a string, found integer"]);
}
