//! `[agent] registry = "<id>"` and `registry_file`: the agent's command taken from the ACP
//! agent registry. Must not know how the registry is fetched or how a distribution becomes
//! a command line (`crate::registry` does); it places what that says in the `Config`.

use std::ops::Range;

use toml::de::DeTable;

use super::super::observe::RegistryUse;
use super::super::resolve::relative_to;
use super::super::{AgentSpec, CommandSpec};
use super::{AgentName, Scope, Validator, Value};
use crate::registry::{Kind, Registry, install_root, platform, published};

impl Validator<'_, '_, '_> {
    /// The agent `registry` names: its command from the registry, with the file's `args`
    /// added after the registry's, its `env` after the registry's, and its `cwd`.
    pub(super) fn registry_agent(
        &mut self,
        table: &DeTable<'_>,
        value: &Value<'_>,
        scope: Scope,
    ) -> (Option<AgentSpec>, Option<AgentName>) {
        let id = self.string("registry", value, scope);
        let id = id.filter(|id| {
            let empty = id.is_empty();
            if empty {
                self.error(value.span(), "`registry` must not be empty");
            }
            !empty
        });
        let default_name = id
            .clone()
            .unwrap_or_else(|| super::DEFAULT_AGENT_NAME.to_owned());
        let name = self.agent_name(table, &default_name, scope);
        // The file's own launch keys, checked whatever the registry says.
        let extra = self.launch_extras(table, scope);
        let registry = self.registry(table, value.span(), scope);
        let (Some(id), Some(registry), Some(agent_name)) = (id, registry, name.as_ref()) else {
            return (None, name);
        };
        let Some(agent) = registry.agent(&id) else {
            self.error(value.span(), registry.unknown_id_message(&id));
            return (None, name);
        };
        let launch =
            match agent.launch(&platform(), install_root(self.surroundings.vars).as_deref()) {
                Ok(launch) => launch,
                Err(error) => {
                    self.error(value.span(), error.to_string());
                    return (None, name);
                }
            };
        let program = match self.look_up(&launch.program, value.span(), Some(&agent_name.name)) {
            Ok(program) => program,
            Err(message) => {
                let runner = match launch.kind {
                    Kind::Npx => " (npx comes with Node.js)",
                    Kind::Uvx => " (uvx comes with uv, the Python package manager)",
                    Kind::Binary => "",
                };
                self.error(
                    value.span(),
                    format!(
                        "{message}: registry agent `{id}` runs with `{}`{runner}",
                        launch.program
                    ),
                );
                return (None, name);
            }
        };
        let warning = registry.origin.warning();
        let (line, column) = self.diagnostics.line_and_column(value.span().start);
        self.surroundings.recorder.record(|notes| {
            notes.registry = Some(RegistryUse {
                id: agent.id.clone(),
                name: agent.name.clone(),
                version: agent.version.clone(),
                kind: launch.kind.name(),
                source: registry.origin.describe(),
                warning,
                line,
                column,
            })
        });
        let Some((args, env, cwd)) = extra else {
            return (None, name);
        };
        let mut all_args = launch.args;
        all_args.extend(args);
        let mut all_env = launch.env;
        all_env.extend(env);
        let spec = CommandSpec {
            name: agent_name.name.clone(),
            program,
            args: all_args,
            env: all_env,
            cwd: cwd.or(launch.cwd),
        };
        (Some(AgentSpec::Command(spec)), name)
    }

    /// `args`, `env` and `cwd` of a table, as `launch` reads them.
    #[allow(clippy::type_complexity)]
    fn launch_extras(
        &mut self,
        table: &DeTable<'_>,
        scope: Scope,
    ) -> Option<(
        Vec<String>,
        Vec<(String, String)>,
        Option<std::path::PathBuf>,
    )> {
        let args = match table.get("args") {
            Some(value) => self.string_array("args", value, scope),
            None => Some(Vec::new()),
        };
        let env = match table.get("env") {
            Some(value) => self.string_table("env", value, scope),
            None => Some(Vec::new()),
        };
        let cwd = match table.get("cwd") {
            Some(value) => self
                .string("cwd", value, scope)
                .and_then(|text| self.working_dir(&text, value.span(), scope))
                .map(Some),
            None => Some(None),
        };
        Some((args?, env?, cwd?))
    }

    /// The registry to look the agent up in: `registry_file`, else the published one.
    fn registry(
        &mut self,
        table: &DeTable<'_>,
        registry_span: Range<usize>,
        scope: Scope,
    ) -> Option<Registry> {
        if let Some(file) = table.get("registry_file") {
            let text = self.string("registry_file", file, scope)?;
            if text.is_empty() {
                self.error(file.span(), "`registry_file` must not be empty");
                return None;
            }
            let path = relative_to(self.surroundings.config_dir, &text);
            return Registry::from_file(&path)
                .map_err(|error| self.error(file.span(), error.to_string()))
                .ok();
        }
        published(self.cache_dir.as_deref(), self.surroundings.vars)
            .map_err(|error| self.error(registry_span, error.to_string()))
            .ok()
    }
}
