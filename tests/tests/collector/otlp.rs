//! An OTLP/HTTP receiver for the tests: a loopback HTTP/1.1 server that takes `POST
//! /v1/traces` bodies, decodes each as an `ExportTraceServiceRequest` (the
//! opentelemetry-proto crate's prost types), keeps the raw bodies and the spans, and answers
//! 200. Or a black hole that accepts connections and never answers.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use acp_conductor_tests::editor::patience;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;

/// What the receiver got.
#[derive(Default)]
pub struct Received {
    /// Every body as it came, to look for secrets in the bytes.
    pub bodies: Vec<Vec<u8>>,
    pub spans: Vec<Span>,
    /// `service.name` of each resource seen.
    pub services: Vec<String>,
    /// Requests that were not a `POST /v1/traces` with a protobuf body.
    pub refused: Vec<String>,
}

pub struct Collector {
    /// `http://127.0.0.1:PORT`, the base endpoint (the conductor adds `/v1/traces`).
    pub url: String,
    received: Arc<Mutex<Received>>,
}

impl Collector {
    pub fn start() -> Collector {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let received = Arc::new(Mutex::new(Received::default()));
        let kept = received.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let kept = kept.clone();
                std::thread::spawn(move || serve_connection(stream, &kept));
            }
        });
        Collector { url, received }
    }

    /// Waits until `done` holds of what was received (failing after the tests' patience).
    pub fn wait_until(&self, what: &str, done: impl Fn(&Received) -> bool) {
        let until = Instant::now() + patience();
        loop {
            if done(&self.received.lock().unwrap()) {
                return;
            }
            assert!(
                Instant::now() < until,
                "the collector never received {what}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn with<T>(&self, look: impl FnOnce(&Received) -> T) -> T {
        look(&self.received.lock().unwrap())
    }
}

/// A listener that accepts connections and never reads nor answers: a collector that hangs.
pub fn black_hole() -> (String, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let url = format!("http://{}", listener.local_addr().unwrap());
    let held = std::thread::spawn(move || {
        let mut open = Vec::new();
        for stream in listener.incoming().map_while(Result::ok) {
            open.push(stream);
        }
    });
    (url, held)
}

/// A loopback address nothing listens on.
pub fn unreachable() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    url
}

fn serve_connection(stream: TcpStream, received: &Mutex<Received>) {
    let mut writer = stream.try_clone().expect("clone the stream");
    let mut reader = BufReader::new(stream);
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0;
        let mut content_type = String::new();
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            let (name, value) = header.split_once(':').unwrap_or((header, ""));
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.trim().parse().unwrap_or(0),
                "content-type" => content_type = value.trim().to_string(),
                _ => {}
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let wanted = request_line.starts_with("POST /v1/traces ")
            && content_type == "application/x-protobuf";
        {
            let mut received = received.lock().unwrap();
            match ExportTraceServiceRequest::decode(body.as_slice()) {
                Ok(export) if wanted => {
                    for resource in export.resource_spans {
                        if let Some(resource_attrs) = &resource.resource {
                            for kv in &resource_attrs.attributes {
                                if kv.key == "service.name" {
                                    received.services.push(format!("{:?}", kv.value));
                                }
                            }
                        }
                        for scope in resource.scope_spans {
                            received.spans.extend(scope.spans);
                        }
                    }
                    received.bodies.push(body);
                }
                _ => received
                    .refused
                    .push(format!("{} {content_type}", request_line.trim_end())),
            }
        }
        let answer =
            "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
        if writer.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}
