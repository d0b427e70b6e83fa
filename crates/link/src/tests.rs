//! Links of every kind carry frames both ways, report what the router needs (frames, framing
//! errors, the end, progress, stalls) and keep frames from a held link until it is opened.

use std::io::{Read, Write};
use std::time::Duration;

use bytes::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

use super::*;

fn limits() -> LinkLimits {
    LinkLimits {
        max_line: 64,
        queue_limit: 1 << 20,
        write_timeout: Duration::from_secs(5),
    }
}

fn links() -> (Links, mpsc::Receiver<Event>) {
    let (events, received) = mpsc::channel(64);
    (Links::new(events, limits()), received)
}

/// The next event of `link`, skipping progress reports.
async fn next(received: &mut mpsc::Receiver<Event>, link: LinkId) -> LinkEvent {
    loop {
        let event = tokio::time::timeout(Duration::from_secs(10), received.recv())
            .await
            .expect("an event in time")
            .expect("the channel is open");
        match event {
            Event::Link { link: l, event } if l == link => match event {
                LinkEvent::Drained => continue,
                event => return event,
            },
            other => panic!("unexpected event {other:?}"),
        }
    }
}

/// Every frame `link` reads until its end, with framing errors as `Err(len)`.
async fn read_all(
    received: &mut mpsc::Receiver<Event>,
    link: LinkId,
) -> Vec<Result<String, usize>> {
    let mut out = Vec::new();
    loop {
        match next(received, link).await {
            LinkEvent::Frames(frames) => out.extend(
                frames
                    .into_iter()
                    .map(|f| Ok(String::from_utf8(f.to_vec()).unwrap())),
            ),
            LinkEvent::TooLong(acp_wire::FrameError::TooLong { len, .. }) => out.push(Err(len)),
            LinkEvent::Closed(None) => return out,
            other => panic!("unexpected {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_byte_stream_link_splits_lines_however_the_bytes_arrive() {
    let (links, mut received) = links();
    let (ours, mut theirs) = tokio::io::duplex(1024);
    let (from_peer, to_peer) = tokio::io::split(ours);
    let (link, _done) = links.streams(from_peer, to_peer);
    let input = format!(
        "{{\"a\":1}}\r\n\n{{\"b\":2}}\n{}\n{{\"c\":3}}",
        "x".repeat(100)
    );
    for piece in input.as_bytes().chunks(7) {
        theirs.write_all(piece).await.unwrap();
        tokio::task::yield_now().await;
    }
    theirs.shutdown().await.unwrap();
    assert_eq!(
        read_all(&mut received, link.id).await,
        [
            Ok("{\"a\":1}".to_string()),
            Ok("{\"b\":2}".to_string()),
            Err(100),
            Ok("{\"c\":3}".to_string()),
        ],
        "an unterminated last line counts at the end"
    );
}

#[tokio::test]
async fn a_byte_stream_link_writes_each_frame_as_a_line_and_closes_when_dropped() {
    let (links, _received) = links();
    let (ours, mut theirs) = tokio::io::duplex(1 << 20);
    let (from_peer, to_peer) = tokio::io::split(ours);
    let (link, done) = links.streams(from_peer, to_peer);
    let big = "y".repeat(100 * 1024);
    for frame in ["{\"a\":1}", big.as_str(), "{\"b\":2}"] {
        link.outbox.send(Bytes::copy_from_slice(frame.as_bytes()));
    }
    drop(link);
    let mut written = String::new();
    theirs.read_to_string(&mut written).await.unwrap();
    assert_eq!(written, format!("{{\"a\":1}}\n{big}\n{{\"b\":2}}\n"));
    done.writer_finished().await;
}

#[tokio::test]
async fn a_congested_outbox_reports_when_it_drained() {
    let (events, mut received) = mpsc::channel(64);
    let links = Links::new(
        events,
        LinkLimits {
            queue_limit: 100,
            ..limits()
        },
    );
    let (ours, mut theirs) = tokio::io::duplex(16);
    let (from_peer, to_peer) = tokio::io::split(ours);
    let (link, _done) = links.streams(from_peer, to_peer);
    let mut congested = false;
    for _ in 0..10 {
        congested |= link.outbox.send(Bytes::from(vec![b'z'; 40])) == Queued::Congested;
    }
    assert!(
        congested,
        "400 bytes queued toward a peer that reads 16 at a time"
    );
    let mut sink = vec![0; 41 * 10];
    theirs.read_exact(&mut sink).await.unwrap();
    loop {
        match tokio::time::timeout(Duration::from_secs(10), received.recv()).await {
            Ok(Some(Event::Link {
                event: LinkEvent::Drained,
                link: l,
            })) if l == link.id => break,
            Ok(Some(_)) => continue,
            other => panic!("no Drained event: {other:?}"),
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_peer_that_stops_reading_fails_the_write_after_the_timeout() {
    let (links, mut received) = links();
    let (ours, _theirs) = tokio::io::duplex(8);
    let (from_peer, to_peer) = tokio::io::split(ours);
    let (link, _done) = links.streams(from_peer, to_peer);
    link.outbox.send(Bytes::from(vec![b'w'; 1000]));
    match next(&mut received, link.id).await {
        LinkEvent::WriteFailed { reason, stalled } => {
            assert!(stalled);
            assert_eq!(reason, "stopped reading its input for more than 5s");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocking_link_runs_its_loops_on_threads_of_its_own() {
    let (links, mut received) = links();
    let (ours_in, mut theirs_out) = std::os::unix::net::UnixStream::pair().unwrap();
    let (ours_out, mut theirs_in) = std::os::unix::net::UnixStream::pair().unwrap();
    let (link, done) = links.blocking(ours_in, ours_out);
    theirs_out.write_all(b"{\"from\":\"editor\"}\n").unwrap();
    drop(theirs_out);
    assert_eq!(
        read_all(&mut received, link.id).await,
        [Ok("{\"from\":\"editor\"}".to_string())]
    );
    link.outbox.send(Bytes::from_static(b"{\"to\":\"editor\"}"));
    drop(link);
    done.writer_finished().await;
    let mut written = String::new();
    theirs_in.read_to_string(&mut written).unwrap();
    assert_eq!(written, "{\"to\":\"editor\"}\n");
}

#[tokio::test]
async fn a_message_link_takes_each_message_as_one_frame() {
    let (links, mut received) = links();
    let (to_link, from_peer) = mpsc::unbounded_channel();
    let (to_peer, mut from_link) = mpsc::channel(8);
    let (link, _done) = links.messages(from_peer, to_peer);
    to_link
        .send(Bytes::from_static(b"{\n \"a\": 1\n}\n"))
        .unwrap();
    to_link.send(Bytes::from_static(b"  \r\n")).unwrap();
    to_link.send(Bytes::from(vec![b'm'; 65])).unwrap();
    to_link.send(Bytes::from_static(b"{\"b\":2}")).unwrap();
    drop(to_link);
    assert_eq!(
        read_all(&mut received, link.id).await,
        [
            Ok("{  \"a\": 1 }".to_string()),
            Err(65),
            Ok("{\"b\":2}".to_string())
        ],
        "line breaks become spaces, blank messages are skipped, the limit holds"
    );
    link.outbox.send(Bytes::from_static(b"{\"c\":3}"));
    assert_eq!(from_link.recv().await.unwrap(), &b"{\"c\":3}"[..]);
    drop(link);
    assert!(from_link.recv().await.is_none(), "the peer sees the end");
}

#[tokio::test]
async fn a_held_link_delivers_nothing_until_its_gate_opens() {
    let (links, mut received) = links();
    let (link, peer) = links.held().memory(8);
    peer.send(Bytes::from_static(b"{\"early\":true}"));
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(received.try_recv().is_err(), "held at the gate");
    link.gate.resume();
    match next(&mut received, link.id).await {
        LinkEvent::Frames(frames) => assert_eq!(frames, [Bytes::from_static(b"{\"early\":true}")]),
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn every_link_of_a_run_has_its_own_id() {
    let (links, _received) = links();
    let (a, _) = links.memory(1);
    let b = links.unconnected();
    let (c, _) = links.held().memory(1);
    assert_eq!([a.id, b.id, c.id], [LinkId(0), LinkId(1), LinkId(2)]);
    assert_eq!(b.outbox.send(Bytes::from_static(b"{}")), Queued::Closed);
}

#[tokio::test]
async fn a_peer_stuck_in_the_middle_of_a_line_fails_its_output_after_the_write_timeout() {
    let (events, mut received) = mpsc::channel(64);
    let limits = LinkLimits {
        write_timeout: Duration::from_millis(200),
        ..limits()
    };
    let links = Links::new(events, limits);
    let (mut peer_out, from_peer) = tokio::io::duplex(1024);
    let (to_peer, _peer_in) = tokio::io::duplex(1024);
    let (link, _done) = links.streams(from_peer, to_peer);
    peer_out.write_all(b"{\"a\":1}\n{\"b\":").await.unwrap();
    match next(&mut received, link.id).await {
        LinkEvent::Frames(frames) => assert_eq!(frames, [Bytes::from_static(b"{\"a\":1}")]),
        other => panic!("unexpected {other:?}"),
    }
    let started = std::time::Instant::now();
    match next(&mut received, link.id).await {
        LinkEvent::Closed(Some(reason)) => {
            assert_eq!(reason, "wrote 5 bytes of a line and nothing more for 200ms")
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(started.elapsed() >= Duration::from_millis(150));
    // The peer's stream is still open: it was the half line, not an end, that failed it.
    drop(peer_out);
}

#[tokio::test]
async fn a_quiet_peer_between_lines_is_never_timed_out() {
    let (events, mut received) = mpsc::channel(64);
    let limits = LinkLimits {
        write_timeout: Duration::from_millis(50),
        ..limits()
    };
    let links = Links::new(events, limits);
    let (mut peer_out, from_peer) = tokio::io::duplex(1024);
    let (to_peer, _peer_in) = tokio::io::duplex(1024);
    let (link, _done) = links.streams(from_peer, to_peer);
    peer_out.write_all(b"{\"a\":1}\n").await.unwrap();
    assert!(matches!(
        next(&mut received, link.id).await,
        LinkEvent::Frames(_)
    ));
    tokio::time::sleep(Duration::from_millis(300)).await;
    peer_out.write_all(b"{\"b\":2}\n").await.unwrap();
    assert!(matches!(
        next(&mut received, link.id).await,
        LinkEvent::Frames(_)
    ));
}
