//! The failure keys of `[[proxy]]` and `[agent]`: `on_failure`, `restart_then`,
//! `startup_timeout`, `request_timeout`. Must not know how a policy is carried out.

use std::time::Duration;

use toml::de::DeTable;

use super::super::{AfterRestarts, FailurePolicy, OnFailure};
use super::{Scope, Validator, Value};

/// The policies `on_failure` names, before `restart_then` is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Named {
    Fail,
    Bypass,
    Restart,
}

const PROXY_POLICIES: &[(&str, Named)] = &[
    ("fail", Named::Fail),
    ("bypass", Named::Bypass),
    ("restart", Named::Restart),
];
/// The agent cannot be bypassed: there is nothing behind it to flow to.
const AGENT_POLICIES: &[(&str, Named)] = &[("fail", Named::Fail), ("restart", Named::Restart)];
const AFTER_RESTARTS: &[(&str, AfterRestarts)] = &[
    ("fail", AfterRestarts::Fail),
    ("bypass", AfterRestarts::Bypass),
];

/// Which component a table describes: the keys mean the same, the choices differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Component {
    Proxy,
    Agent,
}

impl Validator<'_, '_, '_> {
    /// The failure keys of one component's table; every key is checked even when another
    /// is wrong, so that all mistakes are reported in the same pass.
    pub(super) fn failure_policy(
        &mut self,
        table: &DeTable<'_>,
        component: Component,
        scope: Scope,
    ) -> Option<FailurePolicy> {
        let defaults = FailurePolicy::default();
        let policies = match component {
            Component::Proxy => PROXY_POLICIES,
            Component::Agent => AGENT_POLICIES,
        };
        let named = match table.get("on_failure") {
            Some(value) => self.on_failure(value, policies, component, scope),
            None => Some(Named::Fail),
        };
        let then = match table.get_key_value("restart_then") {
            None => Some(AfterRestarts::Fail),
            Some((key, value)) => {
                let then = self.choice("restart_then", value, AFTER_RESTARTS, scope);
                if named.is_some_and(|n| n != Named::Restart) {
                    self.error(
                        key.span(),
                        "`restart_then` applies only with `on_failure = \"restart\"`: it says \
                         what a component that keeps failing gets once restarts stop",
                    );
                    return None;
                }
                if component == Component::Agent && then == Some(AfterRestarts::Bypass) {
                    self.error(
                        value.span(),
                        "the agent cannot be bypassed: there is nothing behind it for traffic \
                         to flow to (leave `restart_then` out; an agent that keeps failing \
                         takes the chain down)",
                    );
                    return None;
                }
                then
            }
        };
        let startup_timeout = match table.get("startup_timeout") {
            Some(value) => self.positive_duration("startup_timeout", value, scope),
            None => Some(defaults.startup_timeout),
        };
        let request_timeout = match table.get("request_timeout") {
            Some(value) => self
                .positive_duration("request_timeout", value, scope)
                .map(Some),
            None => Some(None),
        };
        let on_failure = match named? {
            Named::Fail => OnFailure::Fail,
            Named::Bypass => OnFailure::Bypass,
            Named::Restart => OnFailure::Restart { then: then? },
        };
        Some(FailurePolicy {
            on_failure,
            startup_timeout: startup_timeout?,
            request_timeout: request_timeout?,
        })
    }

    fn on_failure(
        &mut self,
        value: &Value<'_>,
        policies: &[(&str, Named)],
        component: Component,
        scope: Scope,
    ) -> Option<Named> {
        if component == Component::Agent && value.get_ref().as_str() == Some("bypass") {
            self.error(
                value.span(),
                "the agent cannot be bypassed: there is nothing behind it for traffic to flow \
                 to; `on_failure` of [agent] must be \"fail\" or \"restart\"",
            );
            return None;
        }
        self.choice("on_failure", value, policies, scope)
    }

    /// A duration that must be longer than zero: a zero timeout would fail every component
    /// at once.
    fn positive_duration(
        &mut self,
        key: &str,
        value: &Value<'_>,
        scope: Scope,
    ) -> Option<Duration> {
        let duration = self.duration(key, value, scope)?;
        if duration.is_zero() {
            self.error(value.span(), format!("`{key}` must be longer than zero"));
            return None;
        }
        Some(duration)
    }
}
