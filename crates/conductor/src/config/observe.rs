//! What reading a configuration looked up on this machine, for `doctor` and `check`: each
//! program name searched for, each `${VAR}` used, the registry agent chosen. Recorded whether
//! or not the file turns out valid, so that `doctor` can say more about a broken file than
//! its errors. Must not judge anything: it only records.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use super::diagnostics::Diagnostics;
use super::{Config, ConfigErrors};

/// Everything recorded while reading one file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Observations {
    /// Each `command` (and `builtin` program, and registry runner) that was a bare name,
    /// looked up next to the conductor and on `PATH`, in file order.
    pub programs: Vec<ProgramLookup>,
    /// Each `${NAME}` or `${NAME:-default}` of an enabled component or `[conductor]`.
    pub variables: Vec<VariableUse>,
    /// The agent taken from the registry, when `[agent]` has `registry`.
    pub registry: Option<RegistryUse>,
}

/// A program name looked up on `PATH`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramLookup {
    /// The component it is the program of, when it has a valid name.
    pub component: Option<String>,
    /// The name as written (after `${}` substitution): no `/` in it.
    pub command: String,
    pub line: usize,
    pub column: usize,
    /// Where it was found with the `PATH` the file was read with.
    pub found: Option<PathBuf>,
}

/// One variable reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VariableUse {
    pub name: String,
    pub has_default: bool,
    /// Whether the environment the file was read with has it.
    pub set: bool,
    pub line: usize,
    pub column: usize,
}

/// The registry entry `[agent] registry = "<id>"` resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryUse {
    pub id: String,
    /// The registry's display name and version: "Gemini CLI", "0.27.3".
    pub name: String,
    pub version: String,
    /// `npx`, `uvx` or `binary`.
    pub kind: &'static str,
    /// "registry file /x/registry.json", "the registry at https://..., fetched now".
    pub source: String,
    /// Set when the registry used may be out of date.
    pub warning: Option<String>,
    /// Where `registry = "<id>"` is in the file.
    pub line: usize,
    pub column: usize,
}

/// Collects observations during validation; a no-op when nobody asked for them.
#[derive(Clone, Copy)]
pub(crate) struct Recorder<'a>(pub(crate) Option<&'a RefCell<Observations>>);

impl Recorder<'_> {
    pub(crate) fn record(&self, note: impl FnOnce(&mut Observations)) {
        if let Some(cell) = self.0 {
            note(&mut cell.borrow_mut());
        }
    }
}

/// Reads `path` as [`super::load_with`] does, and also returns what was looked up on the
/// way.
pub fn inspect(
    path: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    exe_dir: Option<&Path>,
) -> (Result<Config, ConfigErrors>, Observations) {
    let cell = RefCell::new(Observations::default());
    let loaded = super::read_and_parse(path, env, exe_dir, None, Recorder(Some(&cell)));
    (loaded, cell.into_inner())
}

impl Diagnostics<'_> {
    /// 1-based line and column of a byte offset, as errors give them.
    pub(crate) fn line_and_column(&self, offset: usize) -> (usize, usize) {
        self.location(offset)
    }
}
