//! The one place that builds the tokio runtimes of the conductor's commands, and the
//! [`MainThread`] token that proves code runs on the thread that owns the children. Knows
//! runtimes and threads, never chains, components or messages.
//!
//! Which command runs on which runtime, and why:
//!
//! | command | [`RuntimeKind`] | why |
//! |---|---|---|
//! | `run` | [`OneThread`](RuntimeKind::OneThread) | the router and every link that can be polled (child pipes, WASM guests, sockets, the editor's pipes) on one thread: a message is read, routed and written without a hand-over between threads, each of which costs a futex wake-up (docs/performance.md). Compiling WASM and reading files go to the blocking pool. |
//! | `serve` | [`WorkersAndLocalSet`](RuntimeKind::WorkersAndLocalSet) | the HTTP and WebSocket handlers run on the workers; every chain (and every shared proxy's hub) runs on the main thread, inside the `LocalSet`, because it starts children. |
//! | `doctor --probe` | [`Workers`](RuntimeKind::Workers) | the probe's editor plays on a worker while the chain it probes runs on the main thread, as `run` runs it. |
//! | `mcp-bridge` | [`OneThreadShutDownInBackground`](RuntimeKind::OneThreadShutDownInBackground) | a small process of its own that copies bytes both ways; tokio reads stdin on a blocking thread whose read cannot be cancelled: waiting for it would keep the shim alive until the agent writes or closes stdin. |
//!
//! Children are started with `PR_SET_PDEATHSIG` (`component/native.rs`), which ties a child
//! to the *thread* that spawned it: started from a worker or a blocking-pool thread, a child
//! would be killed when tokio retires that thread. So whatever starts a child takes a
//! [`MainThread`], and only [`run_on_main_thread`] hands one out, to the future it drives on
//! the calling thread.
//!
//! The registry fetch (`registry/fetch.rs`) builds a runtime of its own on purpose: it is a
//! blocking helper that `agents` and `check` call from plain code and the config loader may
//! call from inside a runtime (where it moves to a thread of its own); it starts no child
//! and needs no [`MainThread`].

use std::future::Future;
use std::marker::PhantomData;

/// The worker threads of the runtimes that have any: `serve`'s HTTP handlers and the
/// probe's editor are light, and the machine's cores belong to the chains' components.
const WORKER_THREADS: usize = 2;

/// What a command needs of its runtime; see the module's table for which command uses
/// which. The future given to [`run_on_main_thread`] always runs on the calling thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuntimeKind {
    /// One thread, the calling one: every task runs on it.
    OneThread,
    /// Worker threads for the tasks given to `tokio::spawn`, and a `LocalSet` on the calling
    /// thread for those given to `tokio::task::spawn_local`.
    WorkersAndLocalSet,
    /// Worker threads for the tasks given to `tokio::spawn`.
    Workers,
    /// As [`OneThread`](RuntimeKind::OneThread), and once the future is done, the runtime is
    /// shut down without waiting for the blocking pool's threads.
    OneThreadShutDownInBackground,
}

/// Proof that the code holding it runs on the thread that drives the runtime (the "main
/// thread"), which lives as long as the run: children started from it are not killed before
/// their time (see the module's comment).
///
/// Zero-sized, `Copy`, and neither `Send` nor `Sync`: it cannot be moved to, nor shared
/// with, another thread, so a future that holds one cannot be given to `tokio::spawn` (it
/// can to `tokio::task::spawn_local`, which stays on this thread). Only
/// [`run_on_main_thread`] makes one.
#[derive(Debug, Clone, Copy)]
pub struct MainThread {
    not_send: PhantomData<*const ()>,
}

impl MainThread {
    fn here() -> MainThread {
        MainThread {
            not_send: PhantomData,
        }
    }
}

/// Builds the runtime `kind` names and drives `main`'s future on the calling thread, which
/// becomes the main thread: `main` gets the [`MainThread`] token. Returns the future's
/// output, or why the runtime could not be built.
pub fn run_on_main_thread<F, Fut>(kind: RuntimeKind, main: F) -> std::io::Result<Fut::Output>
where
    F: FnOnce(MainThread) -> Fut,
    Fut: Future,
{
    let token = MainThread::here();
    match kind {
        RuntimeKind::OneThread => Ok(current_thread().build()?.block_on(main(token))),
        RuntimeKind::WorkersAndLocalSet => {
            let runtime = workers().build()?;
            let local = tokio::task::LocalSet::new();
            Ok(local.block_on(&runtime, main(token)))
        }
        RuntimeKind::Workers => Ok(workers().build()?.block_on(main(token))),
        RuntimeKind::OneThreadShutDownInBackground => {
            let runtime = current_thread().build()?;
            let output = runtime.block_on(main(token));
            runtime.shutdown_background();
            Ok(output)
        }
    }
}

fn current_thread() -> tokio::runtime::Builder {
    let mut builder = tokio::runtime::Builder::new_current_thread();
    builder.enable_all();
    builder
}

fn workers() -> tokio::runtime::Builder {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.worker_threads(WORKER_THREADS).enable_all();
    builder
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::thread::ThreadId;

    const KINDS: [RuntimeKind; 4] = [
        RuntimeKind::OneThread,
        RuntimeKind::WorkersAndLocalSet,
        RuntimeKind::Workers,
        RuntimeKind::OneThreadShutDownInBackground,
    ];

    /// The thread `kind` drives its future on, before and after it has waited once (a
    /// future moved to a worker would come back elsewhere), and the caller's.
    fn threads_of(kind: RuntimeKind) -> (ThreadId, ThreadId, ThreadId) {
        let caller = std::thread::current().id();
        let (before, after) = run_on_main_thread(kind, |_main| async {
            let before = std::thread::current().id();
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
            tokio::task::yield_now().await;
            (before, std::thread::current().id())
        })
        .expect("runtime");
        (caller, before, after)
    }

    #[test]
    fn every_kind_drives_its_future_on_the_calling_thread() {
        for kind in KINDS {
            let (caller, before, after) = threads_of(kind);
            assert_eq!(before, caller, "{kind:?}");
            assert_eq!(after, caller, "{kind:?}");
        }
    }

    /// Also from a thread that is not the process's first, as the tests' threads are not.
    #[test]
    fn the_main_thread_is_whichever_thread_calls() {
        for kind in KINDS {
            let (caller, before, after) = std::thread::spawn(move || threads_of(kind))
                .join()
                .expect("thread");
            assert_eq!(before, caller, "{kind:?}");
            assert_eq!(after, caller, "{kind:?}");
        }
    }

    #[test]
    fn serve_runs_local_tasks_on_the_main_thread_and_spawned_ones_on_workers() {
        let caller = std::thread::current().id();
        let (local, spawned) =
            run_on_main_thread(RuntimeKind::WorkersAndLocalSet, |main| async move {
                let local = tokio::task::spawn_local(async move {
                    // A task that holds the token, as a chain does.
                    let _main = main;
                    tokio::task::yield_now().await;
                    std::thread::current().id()
                });
                let spawned = tokio::spawn(async { std::thread::current().id() });
                (
                    local.await.expect("local task"),
                    spawned.await.expect("task"),
                )
            })
            .expect("runtime");
        assert_eq!(local, caller);
        assert_ne!(spawned, caller);
    }

    #[test]
    fn run_keeps_spawned_tasks_on_its_one_thread() {
        let caller = std::thread::current().id();
        let spawned = run_on_main_thread(RuntimeKind::OneThread, |_main| async {
            tokio::spawn(async { std::thread::current().id() })
                .await
                .expect("task")
        })
        .expect("runtime");
        assert_eq!(spawned, caller);
    }
}
