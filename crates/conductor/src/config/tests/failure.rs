//! Whole-file tests of `on_failure` and the timeouts.
//! Must not know the validator's internals: everything goes through `parse_str`/`load_with`.

use std::time::Duration;

use super::*;

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
