//! The supervisor with real processes (`cat` echoes what it is sent): starting the chain,
//! starting a component again with a new link and what it was initialized with, stopping
//! one, a component that cannot start, and the bridge socket.

use std::path::PathBuf;
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::mpsc;

use super::*;
use crate::spec::{CommandSpec, ConductorSettings, FailurePolicy, ProxySpec};
use acp_link::{LinkEvent, LinkLimits};
use acp_router::topology::ChainMode;

fn cat(name: &str) -> CommandSpec {
    CommandSpec {
        name: name.to_string(),
        program: PathBuf::from("/bin/cat"),
        args: Vec::new(),
        env: Vec::new(),
        cwd: None,
    }
}

/// A chain of one `cat` proxy and a `cat` agent (or `agent` when given).
fn supervisor(main: MainThread, agent: Option<AgentSpec>) -> (Supervisor, mpsc::Receiver<Event>) {
    let config = Config {
        file: PathBuf::from("/nowhere/conductor.toml"),
        conductor: ConductorSettings::default(),
        agent,
        proxies: vec![ProxySpec {
            name: "echo".to_string(),
            launch: ProxyLaunch::Native(cat("echo")),
            protocol: ProxyProtocol::Auto,
            failure: FailurePolicy::default(),
            shared: false,
        }],
        agent_failure: FailurePolicy::default(),
        agent_on_reload: Default::default(),
    };
    let topology = Topology {
        proxies: 1,
        mode: ChainMode::Agent,
    };
    let (events, received) = mpsc::channel(64);
    let limits = LinkLimits {
        max_line: 1 << 20,
        queue_limit: 1 << 20,
        write_timeout: Duration::from_secs(5),
    };
    let links = Links::new(events.clone(), limits);
    (
        Supervisor::new(
            main,
            &config,
            topology,
            links,
            events,
            &SharedProxies::none(),
        ),
        received,
    )
}

/// Runs `test` as `run` runs a chain: on this thread, which starts the children.
fn on_main_thread<Fut: Future<Output = ()>>(test: impl FnOnce(MainThread) -> Fut) {
    crate::runtime::run_on_main_thread(crate::runtime::RuntimeKind::OneThread, test)
        .expect("tokio runtime");
}

async fn next_event(received: &mut mpsc::Receiver<Event>) -> Event {
    tokio::time::timeout(Duration::from_secs(10), received.recv())
        .await
        .expect("an event in time")
        .expect("the channel is open")
}

/// Sends a line on `link` and waits for `cat` to echo it back.
async fn echoes(link: &Link, received: &mut mpsc::Receiver<Event>, line: &'static str) {
    link.outbox.send(Bytes::from_static(line.as_bytes()));
    loop {
        match next_event(received).await {
            Event::Link {
                link: from,
                event: LinkEvent::Frames(frames),
            } if from == link.id => {
                assert_eq!(frames, [Bytes::from_static(line.as_bytes())]);
                return;
            }
            Event::Link { .. } => {}
            other => panic!("unexpected {other:?}"),
        }
    }
}

/// Waits for the exit of the instance behind `link`.
async fn exit_of(link: LinkId, received: &mut mpsc::Receiver<Event>) -> String {
    loop {
        match next_event(received).await {
            Event::Exited {
                link: l, reason, ..
            } if l == link => return reason,
            Event::Link { .. } | Event::Exited { .. } => {}
            other => panic!("unexpected {other:?}"),
        }
    }
}

#[test]
fn the_chain_starts_in_order_with_names_roles_and_dialects() {
    on_main_thread(|main| async move {
        let (mut supervisor, mut received) =
            supervisor(main, Some(AgentSpec::Command(cat("agent"))));
        let chain = supervisor.start_chain();
        let described: Vec<_> = chain
            .iter()
            .map(|c| (c.name.as_str(), c.role, c.dialect))
            .collect();
        assert_eq!(
            described,
            [
                ("echo", Role::Proxy, DialectChoice::Detect),
                ("agent", Role::Agent, DialectChoice::Pinned(Dialect::Rfd)),
            ]
        );
        echoes(&chain[0].link, &mut received, "{\"to\":\"proxy\"}").await;
        echoes(&chain[1].link, &mut received, "{\"to\":\"agent\"}").await;
        assert_eq!(supervisor.current_link(1), Some(chain[0].link.id));
        supervisor.stop_all().await;
    });
}

#[test]
fn a_restarted_component_has_a_new_link_and_its_initialize_params() {
    on_main_thread(|main| async move {
        let (mut supervisor, mut received) =
            supervisor(main, Some(AgentSpec::Command(cat("agent"))));
        let mut chain = supervisor.start_chain();
        let first = chain.remove(0).link;
        supervisor.initialized(1, Bytes::from_static(b"{\"protocolVersion\":1}"));
        echoes(&first, &mut received, "{\"n\":1}").await;

        // As the router would: it lets go of the old link, then asks for a new instance.
        let old = first.id;
        drop(first);
        let restarted = supervisor.restart(1);
        assert_ne!(restarted.link.id, old);
        assert_eq!(
            restarted.initialize_params.as_deref(),
            Some(&b"{\"protocolVersion\":1}"[..])
        );
        assert_eq!(supervisor.current_link(1), Some(restarted.link.id));
        assert_eq!(exit_of(old, &mut received).await, "exited with status 0");
        echoes(&restarted.link, &mut received, "{\"n\":2}").await;
        supervisor.stop_all().await;
    });
}

#[test]
fn a_stopped_component_ends_even_while_its_input_is_open() {
    on_main_thread(|main| async move {
        let (mut supervisor, mut received) =
            supervisor(main, Some(AgentSpec::Command(cat("agent"))));
        let chain = supervisor.start_chain();
        // The router still holds the agent's link: `cat` would wait forever on its input.
        supervisor.stop(2);
        let reason = exit_of(chain[1].link.id, &mut received).await;
        assert_eq!(reason, "was killed by signal 15");
        assert_eq!(supervisor.current_link(2), None);
        supervisor.stop_all().await;
    });
}

#[test]
fn a_component_that_cannot_start_gets_an_unconnected_link_and_reports_why() {
    on_main_thread(|main| async move {
        let (mut supervisor, mut received) = supervisor(main, None);
        let chain = supervisor.start_chain();
        let agent = &chain[1].link;
        assert_eq!(chain[1].name, "agent");
        match next_event(&mut received).await {
            Event::Exited { link, reason, .. } => {
                assert_eq!(link, agent.id);
                assert_eq!(reason, "is not configured: add an [agent] table");
            }
            other => panic!("the failure comes first, got {other:?}"),
        }
        assert_eq!(
            agent.outbox.send(Bytes::from_static(b"{}")),
            acp_link::Queued::Closed
        );
        supervisor.stop_all().await;
    });
}

#[test]
fn the_bridge_socket_opens_once_and_holds_each_shim_link_until_the_router_has_it() {
    on_main_thread(|main| async move {
        let (mut supervisor, mut received) =
            supervisor(main, Some(AgentSpec::Command(cat("agent"))));
        let first = supervisor.bridge().unwrap();
        let second = supervisor.bridge().unwrap();
        assert_eq!(first, second);
        assert_eq!(first.program, std::env::current_exe().unwrap());
        let mut shim = tokio::net::UnixStream::connect(&first.socket)
            .await
            .unwrap();
        tokio::io::AsyncWriteExt::write_all(&mut shim, b"{\"mcpBridge\":1}\n")
            .await
            .unwrap();
        let link = match next_event(&mut received).await {
            Event::ShimConnected(link) => link,
            other => panic!("unexpected {other:?}"),
        };
        assert!(link.gate.is_paused(), "held until the router opens it");
        link.gate.resume();
        match next_event(&mut received).await {
            Event::Link {
                link: l,
                event: LinkEvent::Frames(frames),
            } if l == link.id => assert_eq!(frames, [Bytes::from_static(b"{\"mcpBridge\":1}")]),
            other => panic!("unexpected {other:?}"),
        }
        let socket = first.socket.clone();
        drop(supervisor);
        assert!(!socket.exists(), "the socket goes with the supervisor");
    });
}
