//! `conductor.toml`: the chain of proxies and the agent, and the conductor's own limits.
//! Must not know how the chain is run: it reads, checks and resolves, and never spawns.
//!
//! Every problem in a file is reported in one pass, each at the line and column of the
//! key or value it concerns, so that a user can fix a configuration in one edit.

mod check;
mod diagnostics;
mod interpolate;
#[cfg(all(test, not(feature = "wasm")))]
mod no_wasm_tests;
mod observe;
#[cfg(test)]
mod registry_tests;
#[cfg(test)]
mod remote_tests;
mod resolve;
mod schema;
#[cfg(test)]
pub(crate) mod test_support;
#[cfg(test)]
mod tests;
#[cfg(all(test, feature = "wasm"))]
mod wasm_tests;

use std::path::{Path, PathBuf};

use toml::de::DeTable;

#[cfg(feature = "wasm")]
pub use acp_drivers::component::wasm::needs::{
    PROVIDED_PACKAGES, UnmetNeed, unmet_need, unmet_need_in_file,
};
pub use acp_drivers::spec::*;
pub use check::{check, check_diff};
pub use diagnostics::{ConfigError, ConfigErrorKind, ConfigErrors};
pub use observe::{Observations, ProgramLookup, RegistryUse, VariableUse, inspect};

pub use resolve::ResolveError;
pub(crate) use resolve::{ProgramSearch, resolve_program};

use diagnostics::Diagnostics;
use observe::Recorder;
use schema::Surroundings;

/// Reads `path` with the real environment, looking up bare command names next to the
/// running executable first.
pub fn load(path: &Path) -> Result<Config, ConfigErrors> {
    load_in_mode(path, None)
}

/// Like [`load`], with the mode forced (as `run --proxy` does) before validation, so a
/// nested conductor's file needs no `[agent]` even without `mode = "proxy"`.
pub fn load_in_mode(path: &Path, mode: Option<Mode>) -> Result<Config, ConfigErrors> {
    let exe_dir = conductor_exe_dir();
    read_and_parse(
        path,
        &|name| std::env::var(name).ok(),
        exe_dir.as_deref(),
        mode,
        Recorder(None),
    )
}

/// Reads `path`, taking variables (including `PATH`) from `env` and treating `exe_dir`
/// as the conductor's own directory.
pub fn load_with(
    path: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    exe_dir: Option<&Path>,
) -> Result<Config, ConfigErrors> {
    read_and_parse(path, env, exe_dir, None, Recorder(None))
}

fn read_and_parse(
    path: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    exe_dir: Option<&Path>,
    mode: Option<Mode>,
    recorder: Recorder<'_>,
) -> Result<Config, ConfigErrors> {
    let bytes = std::fs::read(path).map_err(|error| {
        ConfigErrors::whole_file(path, format!("cannot read the configuration: {error}"))
    })?;
    match String::from_utf8(bytes) {
        Ok(text) => parse_in_mode(&text, path, env, exe_dir, mode, recorder),
        Err(error) => {
            let valid =
                String::from_utf8_lossy(&error.as_bytes()[..error.utf8_error().valid_up_to()]);
            let mut diagnostics = Diagnostics::new(path, &valid);
            diagnostics.error_at(valid.len(), "the file is not valid UTF-8");
            Err(diagnostics.into_errors())
        }
    }
}

/// Validates `text` as if read from `file`: errors name `file` as given, relative paths
/// resolve against its directory.
pub fn parse_str(
    text: &str,
    file: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    exe_dir: Option<&Path>,
) -> Result<Config, ConfigErrors> {
    parse_in_mode(text, file, env, exe_dir, None, Recorder(None))
}

fn parse_in_mode(
    text: &str,
    file: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    exe_dir: Option<&Path>,
    mode: Option<Mode>,
    recorder: Recorder<'_>,
) -> Result<Config, ConfigErrors> {
    let absolute_file = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
    let config_dir = absolute_file
        .parent()
        .map_or_else(|| absolute_file.clone(), Path::to_path_buf);
    let mut diagnostics = Diagnostics::new(file, text);
    let (document, syntax_errors) = DeTable::parse_recoverable(text);
    if !syntax_errors.is_empty() {
        // The recovered document may lack tables the file does have, so schema errors
        // found in it would send the user after problems that are not there.
        for error in syntax_errors {
            let offset = error.span().map_or(0, |span| span.start);
            let message = error.message().trim().replace('\n', "; ");
            diagnostics.error_at(offset, format!("invalid TOML: {message}"));
        }
        return Err(diagnostics.into_errors());
    }
    let surroundings = Surroundings {
        vars: env,
        exe_dir,
        config_dir: &config_dir,
        mode,
        recorder,
    };
    schema::validate(
        document.get_ref(),
        absolute_file,
        &surroundings,
        &mut diagnostics,
    )
    .ok_or_else(|| diagnostics.into_errors())
}

/// The absolute path of `name`, a program shipped with the conductor, looked up as bare
/// command names are: next to the running executable, then on `PATH`.
pub fn find_shipped_program(name: &str) -> Result<PathBuf, ResolveError> {
    let exe_dir = conductor_exe_dir();
    let search = resolve::ProgramSearch {
        exe_dir: exe_dir.as_deref(),
        path_var: std::env::var("PATH").ok(),
    };
    // A bare name is never resolved against a directory, so any will do.
    resolve::resolve_program(name, Path::new("/"), &search)
}

/// The directory of the running executable, where bundled proxies are installed.
fn conductor_exe_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    exe.parent().map(Path::to_path_buf)
}
