//! What a WASM guest can reach: its WASI context (stdio, arguments, variables, granted
//! directories) and the host interfaces linked for it. Must not know how the guest is run.
//!
//! A guest importing an interface the host does not provide fails to load, with a message
//! naming the import. What the standard library imports whether or not a proxy uses it is
//! linked and refused at first use instead: the filesystem, with no directory unless `dirs`
//! grants one, and (for a component) `wasi:sockets` and `wasi:http`, with every operation
//! that would reach the network denied (`sockets.rs`, `http.rs`). A preview 1 module has no
//! call that reaches the network: preview 1 can only use sockets it was handed at start, and
//! it is handed none.

use wasmtime::component::{Component, Linker as ComponentLinker, ResourceTable};
use wasmtime::{Engine, Linker as ModuleLinker, Module};
use wasmtime_wasi::cli::{WasiCli, WasiCliView};
use wasmtime_wasi::clocks::{WasiClocks, WasiClocksView};
use wasmtime_wasi::filesystem::{WasiFilesystem, WasiFilesystemView};
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::p2::bindings;
use wasmtime_wasi::random::WasiRandom;
use wasmtime_wasi::sockets::{WasiSockets, WasiSocketsView};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};
use wasmtime_wasi_http::WasiHttpCtx;
use wasmtime_wasi_io::IoView;

use super::error::WasmError;
use super::http;
use super::limits::MemoryCap;
use super::needs::{PROVIDED_PACKAGES, UnmetNeed};
use super::network::NetworkAttempts;
use super::sockets::{self, DeniedSockets};
use super::streams::{GuestStderr, GuestStdin, GuestStdout};
use crate::spec::{DirMode, WasmSpec};

/// The most resources (streams, files, pollables) one component may hold at once; each
/// costs host memory that the memory cap does not see.
const MAX_RESOURCES: usize = 4096;

/// What a guest sees of the conductor instead of a terminal.
pub struct GuestIo {
    pub stdin: GuestStdin,
    pub stdout: GuestStdout,
    pub stderr: GuestStderr,
}

/// The store data of one instance: its WASI state and its memory cap.
pub struct GuestState<W> {
    pub wasi: W,
    pub memory: MemoryCap,
}

/// WASI 0.2 state: the context, the table of resources handed to the guest, `wasi:http`'s
/// settings, and its attempts to use the network.
pub struct ComponentWasi {
    ctx: WasiCtx,
    pub(super) table: ResourceTable,
    pub(super) http: WasiHttpCtx,
    pub(super) network: NetworkAttempts,
}

impl WasiView for GuestState<ComponentWasi> {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi.ctx,
            table: &mut self.wasi.table,
        }
    }
}

impl IoView for GuestState<ComponentWasi> {
    fn table(&mut self) -> &mut ResourceTable {
        &mut self.wasi.table
    }
}

/// The WASI context granted by `spec`: stdio, `argv` = the proxy's name then `args`, the
/// environment `spec.env`, the directories of `dirs`, and no network. wasmtime's own
/// sockets, which these settings govern, are not linked (`sockets.rs` is); they are off
/// all the same.
fn context(spec: &WasmSpec, io: &GuestIo) -> Result<WasiCtxBuilder, WasmError> {
    let mut builder = WasiCtxBuilder::new();
    builder
        .stdin(io.stdin.clone())
        .stdout(io.stdout.clone())
        .stderr(io.stderr.clone())
        .arg(&spec.name)
        .args(&spec.args)
        .envs(&spec.env)
        .allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false);
    for dir in &spec.sandbox.dirs {
        let perms = match dir.mode {
            DirMode::ReadOnly => FsPerms::ReadOnly,
            DirMode::ReadWrite => FsPerms::ReadWrite,
        };
        builder
            .preopened_dir(&dir.host, &dir.guest, perms)
            .map_err(|error| WasmError::Preopen {
                dir: dir.host.clone(),
                error,
            })?;
    }
    Ok(builder)
}

/// Store data and linker for a WASI preview 1 module.
pub fn for_module(
    engine: &Engine,
    module: &Module,
    spec: &WasmSpec,
    io: &GuestIo,
) -> Result<(GuestState<WasiP1Ctx>, ModuleLinker<GuestState<WasiP1Ctx>>), WasmError> {
    for import in module.imports() {
        if import.module() != "wasi_snapshot_preview1" {
            return Err(UnmetNeed::ModuleImport {
                module: import.module().to_owned(),
                name: import.name().to_owned(),
            }
            .into());
        }
    }
    let state = GuestState {
        wasi: context(spec, io)?.build_p1(),
        memory: MemoryCap::new(spec.sandbox.memory),
    };
    let mut linker = ModuleLinker::new(engine);
    wasmtime_wasi::p1::add_to_linker_async(&mut linker, |state: &mut GuestState<WasiP1Ctx>| {
        &mut state.wasi
    })
    .map_err(WasmError::LinkPreview1)?;
    // A function preview 1 does not have (e.g. `sock_open`, which some runtimes add).
    linker
        .instantiate_pre(module)
        .map_err(WasmError::NotPreview1)?;
    Ok((state, linker))
}

/// Store data and linker for a WASI 0.2 component: `wasi:io`, `wasi:cli`, `wasi:clocks`,
/// `wasi:random`, `wasi:filesystem` (with only the granted directories), `wasi:sockets`
/// (with every operation denied) and `wasi:http` (with every request denied); a component
/// importing anything else is refused.
pub fn for_component(
    engine: &Engine,
    component: &Component,
    spec: &WasmSpec,
    io: &GuestIo,
) -> Result<
    (
        GuestState<ComponentWasi>,
        ComponentLinker<GuestState<ComponentWasi>>,
    ),
    WasmError,
> {
    let mut linker = ComponentLinker::new(engine);
    link_component_interfaces(&mut linker).map_err(WasmError::LinkWasi02)?;
    refuse_unprovided_imports(engine, component, &linker)?;
    let mut table = ResourceTable::new();
    table.set_max_capacity(MAX_RESOURCES);
    let state = GuestState {
        wasi: ComponentWasi {
            ctx: context(spec, io)?.build(),
            table,
            http: WasiHttpCtx::new(),
            network: NetworkAttempts::new(&spec.name),
        },
        memory: MemoryCap::new(spec.sandbox.memory),
    };
    Ok((state, linker))
}

/// Refuses a component whose imports `linker` cannot satisfy, naming the first import of a
/// package the host does not link at all ([`PROVIDED_PACKAGES`] is what
/// [`link_component_interfaces`] links; the loader's first check, before compiling, finds
/// these already); any other mismatch (an interface or version the host lacks) in
/// wasmtime's words.
fn refuse_unprovided_imports(
    engine: &Engine,
    component: &Component,
    linker: &ComponentLinker<GuestState<ComponentWasi>>,
) -> Result<(), WasmError> {
    let Err(error) = linker.instantiate_pre(component) else {
        return Ok(());
    };
    let imports = component.component_type();
    let unknown = imports.imports(engine).map(|(name, _)| name).find(|name| {
        !PROVIDED_PACKAGES.iter().any(|p| {
            name.strip_prefix(p)
                .is_some_and(|rest| rest.starts_with('/'))
        })
    });
    Err(match unknown {
        Some(name) => UnmetNeed::ComponentImport(name.to_owned()).into(),
        None => WasmError::Instantiate(error),
    })
}

fn link_component_interfaces(
    linker: &mut ComponentLinker<GuestState<ComponentWasi>>,
) -> wasmtime::Result<()> {
    type T = GuestState<ComponentWasi>;
    wasmtime_wasi_io::add_to_linker_async(linker)?;
    let l = linker;
    bindings::clocks::wall_clock::add_to_linker::<T, WasiClocks>(l, T::clocks)?;
    bindings::clocks::monotonic_clock::add_to_linker::<T, WasiClocks>(l, T::clocks)?;
    bindings::random::random::add_to_linker::<T, WasiRandom>(l, |t| t.wasi.ctx.random())?;
    bindings::random::insecure::add_to_linker::<T, WasiRandom>(l, |t| t.wasi.ctx.random())?;
    bindings::random::insecure_seed::add_to_linker::<T, WasiRandom>(l, |t| t.wasi.ctx.random())?;
    bindings::cli::exit::add_to_linker::<T, WasiCli>(l, T::cli)?;
    bindings::cli::environment::add_to_linker::<T, WasiCli>(l, T::cli)?;
    bindings::cli::stdin::add_to_linker::<T, WasiCli>(l, T::cli)?;
    bindings::cli::stdout::add_to_linker::<T, WasiCli>(l, T::cli)?;
    bindings::cli::stderr::add_to_linker::<T, WasiCli>(l, T::cli)?;
    bindings::cli::terminal_input::add_to_linker::<T, WasiCli>(l, T::cli)?;
    bindings::cli::terminal_output::add_to_linker::<T, WasiCli>(l, T::cli)?;
    bindings::cli::terminal_stdin::add_to_linker::<T, WasiCli>(l, T::cli)?;
    bindings::cli::terminal_stdout::add_to_linker::<T, WasiCli>(l, T::cli)?;
    bindings::cli::terminal_stderr::add_to_linker::<T, WasiCli>(l, T::cli)?;
    bindings::filesystem::preopens::add_to_linker::<T, WasiFilesystem>(l, T::filesystem)?;
    bindings::filesystem::types::add_to_linker::<T, WasiFilesystem>(l, T::filesystem)?;
    bindings::sockets::instance_network::add_to_linker::<T, WasiSockets>(l, T::sockets)?;
    sockets::add_to_linker(l, denied_sockets)?;
    http::add_to_linker(l)?;
    Ok(())
}

fn denied_sockets(state: &mut GuestState<ComponentWasi>) -> DeniedSockets<'_> {
    DeniedSockets {
        table: &mut state.wasi.table,
        attempts: &mut state.wasi.network,
    }
}
