//! The trace keys of `[conductor]`: `trace` (the file), `trace_payloads`, `redact` (regular
//! expressions), `otlp` (where spans go). Must not know how a trace is written or exported.

use std::path::PathBuf;

use toml::de::DeTable;

use super::super::TraceSettings;
use super::super::resolve::relative_to;
use super::{Scope, Validator, Value};
use acp_trace::redact::check_pattern;

impl Validator<'_, '_, '_> {
    /// `trace`, `trace_payloads` and `redact`; each is checked even when another is wrong.
    pub(super) fn trace_settings(
        &mut self,
        table: &DeTable<'_>,
        settings: &mut TraceSettings,
        scope: Scope,
    ) {
        if let Some(value) = table.get("trace") {
            settings.file = self.trace_file(value, scope);
        }
        if let Some(payloads) = table
            .get("trace_payloads")
            .and_then(|value| self.boolean("trace_payloads", value))
        {
            settings.payloads = payloads;
        }
        if let Some(value) = table.get("redact") {
            settings.redact = self.redact_patterns(value, scope).unwrap_or_default();
        }
    }

    /// The trace file, relative to the configuration's directory; its directory must exist
    /// (the file is created, or replaced, when a run starts).
    fn trace_file(&mut self, value: &Value<'_>, scope: Scope) -> Option<PathBuf> {
        let text = self.string("trace", value, scope)?;
        if text.is_empty() {
            self.error(value.span(), "`trace` must not be empty");
            return None;
        }
        let path = relative_to(self.surroundings.config_dir, &text);
        if path.is_dir() {
            self.error(
                value.span(),
                format!(
                    "`trace` {} is a directory; name the file to write",
                    path.display()
                ),
            );
            return None;
        }
        if let Some(parent) = path.parent()
            && !parent.is_dir()
        {
            self.error(
                value.span(),
                format!(
                    "`trace`: directory {} does not exist (the conductor creates the file, \
                     not its directory)",
                    parent.display()
                ),
            );
            return None;
        }
        Some(path)
    }

    /// `otlp`: an OTLP/HTTP base URL (`http://collector:4318`).
    pub(super) fn otlp_endpoint(&mut self, value: &Value<'_>, scope: Scope) -> Option<String> {
        let text = self.string("otlp", value, scope)?;
        match acp_otel::traces_url(&text) {
            Ok(_) => Some(text),
            Err(error) => {
                self.error(value.span(), error.to_string());
                None
            }
        }
    }

    /// `redact`: an array of regular expressions, each reported where it is written.
    fn redact_patterns(&mut self, value: &Value<'_>, scope: Scope) -> Option<Vec<String>> {
        let Some(items) = value.get_ref().as_array() else {
            self.error(
                value.span(),
                format!(
                    "`redact` must be an array of regular expressions, found {}",
                    value.get_ref().type_str()
                ),
            );
            return None;
        };
        let mut patterns = Some(Vec::with_capacity(items.len()));
        for item in items.iter() {
            let pattern = self.string("redact", item, scope).and_then(|pattern| {
                check_pattern(&pattern)
                    .map_err(|error| self.error(item.span(), format!("`redact`: {error}")))
                    .ok()
                    .map(|()| pattern)
            });
            match (pattern, patterns.as_mut()) {
                (Some(pattern), Some(patterns)) => patterns.push(pattern),
                _ => patterns = None,
            }
        }
        patterns
    }
}
