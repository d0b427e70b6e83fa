//! The one wasmtime engine of the process: how guest code is compiled and the epoch clock
//! that lets a spinning guest be paused or interrupted. Must not know any proxy or its limits.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use wasmtime::{Config, Engine};

/// How often the epoch advances. A guest that computes yields to the runtime at least this
/// often, which bounds how long it can hold up its neighbours on the same worker thread.
pub const EPOCH_TICK: Duration = Duration::from_millis(5);

/// Why the process-wide engine could not be set up; every WASM proxy of the run fails with
/// the same error (hence shared, and cheap to clone).
#[derive(Debug, Clone, thiserror::Error)]
pub enum EngineError {
    #[error("could not set up the WebAssembly engine: {0}")]
    Engine(Arc<wasmtime::Error>),
    #[error("could not start the WebAssembly epoch thread: {0}")]
    EpochThread(Arc<std::io::Error>),
}

/// The process-wide engine; created, with its epoch thread, by the first WASM proxy.
pub fn shared() -> Result<&'static Engine, EngineError> {
    static ENGINE: OnceLock<Result<Engine, EngineError>> = OnceLock::new();
    ENGINE
        .get_or_init(|| {
            let engine = Engine::new(&config()).map_err(|e| EngineError::Engine(Arc::new(e)))?;
            let ticking = engine.clone();
            std::thread::Builder::new()
                .name("wasm-epoch".to_owned())
                .spawn(move || {
                    loop {
                        std::thread::sleep(EPOCH_TICK);
                        ticking.increment_epoch();
                    }
                })
                .map_err(|e| EngineError::EpochThread(Arc::new(e)))?;
            Ok(engine)
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Everything not set here is wasmtime's default for the enabled features.
fn config() -> Config {
    let mut config = Config::new();
    // Guests run as tasks and call async host functions (stdin, stdout) that await channels.
    // Epoch checks let such a task yield while it computes and be stopped when it spins.
    config.epoch_interruption(true);
    // Only the component model's synchronous ABI is used; skipping the bookkeeping for
    // concurrent calls saves about a microsecond per host call.
    config.concurrency_support(false);
    config
}
