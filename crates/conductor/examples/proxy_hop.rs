//! `proxy_hop`: the time one proxy adds to a request and its response, without the router:
//! the conductor's own link to the proxy (outbox, write loop, the proxy, read loop) driven
//! directly, for a native child and for the same proxy as WASM.
//!
//! `cargo run --release -p acp-conductor --example proxy_hop -- NATIVE_PROXY WASM_PROXY...`
//! where the proxies pass everything through (e.g. `wasm-pass` of `tests/wasm-fixtures`).
//! Prints one markdown row per proxy; see docs/performance.md.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use acp_conductor::config::{
    CommandSpec, ConductorSettings, Config, FailurePolicy, ProxyLaunch, ProxyProtocol, ProxySpec,
    Sandbox, WasmSpec,
};
use acp_drivers::component::shared::SharedProxies;
use acp_drivers::runtime::{self, MainThread, RuntimeKind};
use acp_drivers::supervisor::Supervisor;
use acp_link::Event;
use acp_link::{LinkEvent, LinkLimits, Links};
use acp_router::topology::{ChainMode, Topology};
use bytes::Bytes;
use tokio::sync::mpsc;

const WARMUP: usize = 2_000;
const ROUND_TRIPS: usize = 20_000;

fn main() {
    let paths: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    if paths.is_empty() {
        eprintln!("usage: proxy_hop PROXY...  (a native executable or a .wasm file each)");
        std::process::exit(2);
    }
    // `HOP_CURRENT_THREAD=1` runs everything on one thread: the cost of the proxy itself,
    // without the wake-ups between threads that the conductor's runtime adds.
    let kind = if std::env::var_os("HOP_CURRENT_THREAD").is_some() {
        RuntimeKind::OneThread
    } else {
        RuntimeKind::Workers
    };
    println!("| proxy | request and response through it, p50 | p99 |");
    println!("|---|---|---|");
    runtime::run_on_main_thread(kind, |main| async move {
        for path in paths {
            let (p50, p99) = measure(main, path.clone()).await;
            println!(
                "| {} | {:.1} µs | {:.1} µs |",
                path.file_name().unwrap().to_string_lossy(),
                p50.as_secs_f64() * 1e6,
                p99.as_secs_f64() * 1e6
            );
        }
    })
    .expect("tokio runtime");
}

async fn measure(main: MainThread, path: PathBuf) -> (Duration, Duration) {
    let (events, mut received) = mpsc::channel(1024);
    let limits = LinkLimits {
        max_line: 64 << 20,
        queue_limit: 16 << 20,
        write_timeout: Duration::from_secs(30),
    };
    let links = Links::new(events.clone(), limits);
    let launch = if path.extension().is_some_and(|e| e == "wasm") {
        ProxyLaunch::Wasm(WasmSpec {
            name: "proxy".to_owned(),
            module: path,
            download: None,
            args: Vec::new(),
            env: Vec::new(),
            sandbox: Sandbox::default(),
        })
    } else {
        ProxyLaunch::Native(CommandSpec {
            name: "proxy".to_owned(),
            program: path,
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
        })
    };
    // One proxy and no agent: the chain of a conductor nested in another.
    let config = Config {
        file: "proxy_hop.toml".into(),
        conductor: ConductorSettings {
            cache_dir: Some(std::env::temp_dir().join("acp-proxy-hop-cache")),
            ..ConductorSettings::default()
        },
        agent: None,
        proxies: vec![ProxySpec {
            name: "proxy".to_owned(),
            launch,
            protocol: ProxyProtocol::Rfd,
            failure: FailurePolicy::default(),
            shared: false,
        }],
        agent_failure: FailurePolicy::default(),
        agent_on_reload: Default::default(),
    };
    let topology = Topology {
        proxies: 1,
        mode: ChainMode::Proxy,
    };
    let mut supervisor = Supervisor::new(
        main,
        &config,
        topology,
        links,
        events,
        &SharedProxies::none(),
    );
    let link = supervisor.start_chain().remove(0).link;
    let mut next_frame = async || match received.recv().await.expect("the proxy is running") {
        Event::Link {
            event: LinkEvent::Frames(mut frames),
            ..
        } => {
            assert_eq!(frames.len(), 1, "one message at a time");
            frames.pop().expect("one frame")
        }
        other => panic!("unexpected {other:?}"),
    };
    let send = |text: String| {
        link.outbox.send(Bytes::from(text));
    };
    // The proxy forwards `initialize` to its successor (us) and our answer back.
    send(
        r#"{"jsonrpc":"2.0","id":1,"method":"proxy/initialize","params":{"protocolVersion":1}}"#
            .to_owned(),
    );
    let forwarded = next_frame().await;
    let own_id = id_of(&forwarded);
    send(format!(
        r#"{{"jsonrpc":"2.0","id":{own_id},"result":{{"protocolVersion":1}}}}"#
    ));
    next_frame().await;

    let mut samples = Vec::with_capacity(ROUND_TRIPS);
    for i in 0..WARMUP + ROUND_TRIPS {
        let start = Instant::now();
        send(format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"session/prompt","params":{{"sessionId":"s","prompt":[{{"type":"text","text":"hello"}}]}}}}"#,
            i + 2
        ));
        let forwarded = next_frame().await;
        let own_id = id_of(&forwarded);
        send(format!(
            r#"{{"jsonrpc":"2.0","id":{own_id},"result":{{"stopReason":"end_turn"}}}}"#
        ));
        next_frame().await;
        if i >= WARMUP {
            samples.push(start.elapsed());
        }
    }
    drop(link);
    supervisor.stop_all().await;
    samples.sort_unstable();
    (
        samples[samples.len() / 2],
        samples[samples.len() * 99 / 100],
    )
}

/// The `id` of a request the proxy sent (its own numbering).
fn id_of(frame: &[u8]) -> String {
    let text = std::str::from_utf8(frame).expect("UTF-8");
    let start = text.find("\"id\":").expect("an id") + 5;
    text[start..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect()
}
