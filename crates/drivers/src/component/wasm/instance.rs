//! One WASM proxy's life: load its code, instantiate it with its sandbox and limits, run it
//! until it ends, and say why it ended. Must not know the chain or the messages it carries.

use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::component::Component;
use wasmtime::{Engine, Module, Store, Trap};
use wasmtime_wasi::I32Exit;
use wasmtime_wasi::p2::bindings::Command;

use super::cache::{CompileCache, Compiled, Provenance};
use super::download;
use super::error::WasmError;
use super::file_bytes::FileBytes;
use super::limits::{ComputeClock, MemoryCap};
use super::needs::unmet_need;
use super::sandbox::{self, GuestIo, GuestState};
use crate::spec::{WasmKind, WasmSpec};
use crate::spec::{format_duration, format_size};

/// Runs the guest of `spec` to its end and returns the reason it ended, worded like a
/// native child's ("exited with status 0", "trapped: ...").
pub async fn run(
    spec: &WasmSpec,
    engine: &'static Engine,
    cache: CompileCache,
    io: GuestIo,
    clock: Arc<ComputeClock>,
) -> String {
    let compiled = match load(spec, engine, cache).await {
        Ok(compiled) => compiled,
        Err(reason) => return format!("could not be loaded: {reason}"),
    };
    let limit = spec.sandbox.message_timeout;
    let outcome = match compiled {
        Compiled::Module(module) => run_module(spec, engine, &module, &io, clock).await,
        Compiled::Component(component) => run_component(spec, engine, &component, &io, clock).await,
    };
    match outcome {
        Ok(ended) => ended.describe(spec, limit),
        Err(reason) => format!("could not be loaded: {reason}"),
    }
}

/// Reads and compiles (or fetches from the cache) the guest's code, logging which it was.
async fn load(
    spec: &WasmSpec,
    engine: &'static Engine,
    cache: CompileCache,
) -> Result<Compiled, WasmError> {
    let started = Instant::now();
    let bytes = match &spec.download {
        Some(download) => download::bytes(&spec.module, download).await?,
        None => {
            let module = spec.module.clone();
            tokio::task::spawn_blocking(move || FileBytes::read(&module))
                .await
                .map_err(WasmError::ReadTask)?
                .map_err(|source| WasmError::Read {
                    path: spec.module.clone(),
                    source,
                })?
        }
    };
    let kind = WasmKind::detect(&bytes).ok_or_else(|| WasmError::NotWasm(spec.module.clone()))?;
    // Before compiling, which takes seconds for a Python or JavaScript component.
    unmet_need(&bytes, kind)?;
    let (compiled, provenance) =
        tokio::task::spawn_blocking(move || cache.load(engine, &bytes, kind))
            .await
            .map_err(WasmError::CompileTask)??;
    let elapsed = started.elapsed();
    let component = spec.name.as_str();
    match provenance {
        Provenance::Shared => tracing::info!(
            component,
            ?elapsed,
            "shares the code of the {} another proxy loaded",
            kind.describe()
        ),
        Provenance::Cached => tracing::info!(
            component,
            ?elapsed,
            "loaded the {} from the compile cache",
            kind.describe()
        ),
        Provenance::Compiled {
            rejected,
            not_stored,
        } => {
            if let Some(rejected) = rejected {
                tracing::warn!(component, "not using a cache entry: {rejected}");
            }
            tracing::info!(component, ?elapsed, "compiled the {}", kind.describe());
            if let Some(not_stored) = not_stored {
                tracing::warn!(component, "the compiled code is not cached: {not_stored}");
            }
        }
    }
    Ok(compiled)
}

/// How a started guest ended.
struct Ended {
    result: wasmtime::Result<()>,
    memory_exceeded: bool,
}

impl Ended {
    fn new<W>(result: wasmtime::Result<()>, store: &Store<GuestState<W>>) -> Self {
        let memory = &store.data().memory;
        // What a cap must leave room for: a Python or JavaScript runtime's heap is most of it.
        tracing::debug!(
            peak_bytes = memory.peak(),
            "the guest's memories and tables took at most {:.1} MiB together",
            memory.peak() as f64 / f64::from(1u32 << 20)
        );
        Self {
            result,
            memory_exceeded: memory.was_exceeded(),
        }
    }

    fn describe(self, spec: &WasmSpec, limit: Duration) -> String {
        let error = match self.result {
            Ok(()) => return "exited with status 0".to_owned(),
            Err(error) => error,
        };
        if let Some(exit) = error.downcast_ref::<I32Exit>() {
            return format!("exited with status {}", exit.0);
        }
        if matches!(error.downcast_ref::<Trap>(), Some(Trap::Interrupt)) {
            return format!(
                "was interrupted after computing for {} without reading input",
                format_duration(limit)
            );
        }
        // A guest refused memory usually aborts right away, with a trap that says less.
        if self.memory_exceeded {
            return format!(
                "exceeded its memory limit of {}",
                format_size(spec.sandbox.memory)
            );
        }
        match error.downcast_ref::<Trap>() {
            Some(trap) => format!("trapped: {trap}"),
            None => format!("trapped: {error:#}"),
        }
    }
}

/// The limits every store gets, before anything of the guest runs: the memory cap, and an
/// epoch deadline whose callback lets the guest yield while it computes and interrupts it
/// once it has computed for `message_timeout` without reading input.
fn limit<W: Send + 'static>(
    store: &mut Store<GuestState<W>>,
    spec: &WasmSpec,
    clock: Arc<ComputeClock>,
) {
    store.limiter(|state| &mut state.memory as &mut MemoryCap);
    // The default deadline is the current epoch, which would stop the guest at once.
    store.set_epoch_deadline(1);
    let limit = spec.sandbox.message_timeout;
    store.epoch_deadline_callback(move |_| Ok(clock.on_deadline(limit)));
}

async fn run_module(
    spec: &WasmSpec,
    engine: &Engine,
    module: &Module,
    io: &GuestIo,
    clock: Arc<ComputeClock>,
) -> Result<Ended, WasmError> {
    let (state, linker) = sandbox::for_module(engine, module, spec, io)?;
    let mut store = Store::new(engine, state);
    clock.rest();
    limit(&mut store, spec, clock);
    let instance = match linker.instantiate_async(&mut store, module).await {
        Ok(instance) => instance,
        Err(error) => return Ok(Ended::new(Err(error), &store)),
    };
    let start = instance
        .get_typed_func::<(), ()>(&mut store, "_start")
        .map_err(|_| WasmError::NoStart)?;
    let result = start.call_async(&mut store, ()).await;
    Ok(Ended::new(result, &store))
}

async fn run_component(
    spec: &WasmSpec,
    engine: &Engine,
    component: &Component,
    io: &GuestIo,
    clock: Arc<ComputeClock>,
) -> Result<Ended, WasmError> {
    let (state, linker) = sandbox::for_component(engine, component, spec, io)?;
    let mut store = Store::new(engine, state);
    clock.rest();
    limit(&mut store, spec, clock);
    let command = match Command::instantiate_async(&mut store, component, &linker).await {
        Ok(command) => command,
        Err(error) if store.data().memory.was_exceeded() => {
            return Ok(Ended::new(Err(error), &store));
        }
        Err(error) => return Err(WasmError::Instantiate(error)),
    };
    let result = match command.wasi_cli_run().call_run(&mut store).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(())) => Err(I32Exit(1).into()),
        Err(error) => Err(error),
    };
    Ok(Ended::new(result, &store))
}
