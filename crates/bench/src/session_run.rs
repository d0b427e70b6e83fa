//! One chain driven as an editor drives it, for the binaries that compare ways of running a
//! component (`acp-bench-wasm`, `acp-bench-remote`): initialize, a session, timed round trips
//! of a one-word prompt, then streaming prompts whose update count is checked.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::messages::{self, StreamSpec};
use crate::peer::{BenchError, Launch, Peer, Result};
use crate::stats::{LatencySummary, Throughput};

/// How much of each to run.
#[derive(Debug, Clone, Copy)]
pub struct SessionCounts {
    pub round_trips: usize,
    /// Untimed round trips first (and a hundredth as many streaming prompts).
    pub warmup: usize,
    pub stream_prompts: usize,
    /// Each timed loop stops early once it has run this long.
    pub time_limit: Duration,
    pub stream: StreamSpec,
}

impl SessionCounts {
    /// What `acp-bench-wasm` and `acp-bench-remote` run by default.
    pub const FULL: SessionCounts = SessionCounts {
        round_trips: 20_000,
        warmup: 2_000,
        stream_prompts: 1_000,
        time_limit: Duration::from_secs(6),
        stream: STREAM,
    };

    /// `--quick`: enough to see that everything runs.
    pub const QUICK: SessionCounts = SessionCounts {
        round_trips: 200,
        warmup: 20,
        stream_prompts: 10,
        time_limit: Duration::from_secs(2),
        stream: STREAM,
    };
}

/// Updates per streamed prompt and bytes of text in each.
const STREAM: StreamSpec = StreamSpec {
    updates: 100,
    bytes: 100,
};

/// Round-trip latency of a one-word prompt and streaming throughput through the chain
/// `launch` starts; the conductor must exit cleanly at the end.
pub fn measure_session(
    launch: &Launch,
    counts: &SessionCounts,
    cwd: &Path,
) -> Result<(LatencySummary, Throughput)> {
    let mut peer = Peer::spawn(launch)?;
    peer.call(
        messages::INITIALIZE_METHOD,
        messages::INITIALIZE_PARAMS.as_bytes(),
    )?;
    let reply = peer.call_for_result(
        "session/new",
        &messages::new_session_params(&cwd.to_string_lossy()),
    )?;
    let result = reply.result.unwrap_or_default();
    let session = messages::session_id_of(&result)
        .ok_or_else(|| BenchError(format!("session/new answered {result}")))?;

    let small = messages::prompt_params(&session, "hello");
    for _ in 0..counts.warmup {
        peer.call("session/prompt", &small)?;
    }
    let mut samples = Vec::with_capacity(counts.round_trips);
    let began = Instant::now();
    for _ in 0..counts.round_trips {
        let start = Instant::now();
        peer.call("session/prompt", &small)?;
        samples.push(start.elapsed());
        if began.elapsed() > counts.time_limit {
            break;
        }
    }
    let small = LatencySummary::of(samples).expect("at least one round trip");

    let stream = messages::prompt_params(&session, &messages::stream_command(counts.stream));
    for _ in 0..counts.warmup / 100 {
        peer.call("session/prompt", &stream)?;
    }
    let mut received = 0;
    let began = Instant::now();
    for _ in 0..counts.stream_prompts {
        let reply = peer.call("session/prompt", &stream)?;
        if reply.updates != u64::from(counts.stream.updates) {
            return Err(BenchError(format!(
                "a prompt brought {} updates",
                reply.updates
            )));
        }
        received += reply.updates + 1;
        if began.elapsed() > counts.time_limit {
            break;
        }
    }
    let streaming = Throughput {
        messages: received,
        elapsed: began.elapsed(),
    };
    let status = peer.close()?;
    if !status.success() {
        return Err(BenchError(format!("the conductor exited with {status}")));
    }
    Ok((small, streaming))
}

/// From spawning `launch` to its `InitializeResponse`, once.
pub fn time_to_initialize(launch: &Launch) -> Result<Duration> {
    let began = Instant::now();
    let mut peer = Peer::spawn(launch)?;
    peer.call(
        messages::INITIALIZE_METHOD,
        messages::INITIALIZE_PARAMS.as_bytes(),
    )?;
    let took = began.elapsed();
    peer.close()?;
    Ok(took)
}

/// `12.3 µs`.
pub fn micros(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

/// `12.3 ms`.
pub fn millis(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}
