//! `acp-conductor trace view`: the page of a real chain's trace opened in headless Chromium
//! (lifelines, arrows, pairings and hops read back from the page's `#render-report`, its
//! clicks and filters driven inside the page, a screenshot saved), a 100,000-message trace
//! timed, a damaged trace still drawn, and `--serve` following a growing file.
//!
//! Chromium is required (`chromium` or `chromium-browser` on the PATH, or `CHROMIUM`): a
//! machine without it fails these tests; .ci/run installs it.

mod trace_view {
    pub mod browser;
    pub mod cdp;
    pub mod http;
    pub mod synthetic;
}

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use acp_conductor_tests::{Editor, TestChain, binaries, scenario};
use serde_json::{Value, json};
use trace_view::{browser, cdp, http, synthetic};

/// Pictures and pages the tests leave for people to look at.
fn output_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("trace-view");
    std::fs::create_dir_all(&dir).expect("create the output directory");
    dir
}

/// A chain of two test-proxies and the test-agent carrying the standard session and a
/// refused call, traced by the conductor's own `--trace`; returns the chain (its directory) and the trace file.
fn real_chain_trace(label: &str) -> (TestChain, PathBuf) {
    let binaries = binaries!();
    let mut chain = TestChain::with_test_proxies(&binaries, label, 2);
    chain.agent_args(&["--updates", &scenario::UPDATES.to_string()]);
    let trace = chain.dir.join("trace.jsonl");
    let mut editor: Editor = chain.launch_with(&["--trace", trace.to_str().expect("UTF-8")]);
    scenario::standard_session(&mut editor);
    // Refused by the conductor itself: an error no component saw.
    let refused = editor.request(
        "proxy/successor",
        json!({"method": "session/list", "params": {}}),
    );
    assert_eq!(refused.error()["code"], -32601, "{}", refused.response);
    editor.close_stdin();
    let status = editor.wait_exit();
    assert!(status.success(), "the conductor exited with {status}");
    (chain, trace)
}

/// Runs `acp-conductor trace view FILE -o HTML`; returns its stderr.
fn render(trace: &Path, html: &Path) -> String {
    let conductor = binaries!().conductor;
    let out = Command::new(&conductor)
        .args(["trace", "view"])
        .arg(trace)
        .arg("-o")
        .arg(html)
        .output()
        .expect("run acp-conductor trace view");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "trace view failed ({}): {stderr}",
        out.status
    );
    assert!(
        out.stdout.is_empty(),
        "trace view wrote to stdout: {:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    stderr
}

fn records(trace: &Path) -> Vec<Value> {
    std::fs::read_to_string(trace)
        .expect("read the trace")
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// What the page should find in a trace, worked out here independently.
struct Expected {
    messages: usize,
    pairs: usize,
    hops: usize,
    per_link: HashMap<String, usize>,
    kinds: HashMap<String, usize>,
}

fn expected(records: &[Value]) -> Expected {
    let messages: Vec<&Value> = records.iter().filter(|r| r["type"] == "message").collect();
    let mut open: HashSet<(String, String, String)> = HashSet::new();
    let mut pairs = 0;
    let mut per_link = HashMap::new();
    let mut kinds = HashMap::new();
    let mut outs: HashSet<(String, String, String)> = HashSet::new();
    for m in &messages {
        let link = m["link"].as_str().expect("link").to_string();
        let kind = m["kind"].as_str().expect("kind").to_string();
        *per_link.entry(link.clone()).or_insert(0) += 1;
        *kinds.entry(kind.clone()).or_insert(0) += 1;
        let dir = m["dir"].as_str().expect("dir").to_string();
        let id = m["id"].to_string();
        let class = if kind == "request" { "q" } else { "r" };
        if dir == "out" && m["id"] != Value::Null {
            outs.insert((class.to_string(), link.clone(), id.clone()));
        }
        if kind == "request" {
            open.insert((link, dir, id));
        } else if kind == "response" || kind == "error" {
            let other = if dir == "in" { "out" } else { "in" };
            if open.remove(&(link, other.to_string(), id)) {
                pairs += 1;
            }
        }
    }
    let hops = messages
        .iter()
        .filter(|m| m["dir"] == "in" && m["mapsTo"].is_object())
        .filter(|m| {
            let class = if m["kind"] == "request" { "q" } else { "r" };
            outs.contains(&(
                class.to_string(),
                m["mapsTo"]["link"].as_str().unwrap_or_default().to_string(),
                m["mapsTo"]["id"].to_string(),
            ))
        })
        .count();
    Expected {
        messages: messages.len(),
        pairs,
        hops,
        per_link,
        kinds,
    }
}

fn lifeline_names(report: &Value) -> Vec<String> {
    report["lifelines"]
        .as_array()
        .expect("lifelines")
        .iter()
        .map(|l| l["name"].as_str().expect("name").to_string())
        .collect()
}

#[test]
fn a_real_chains_trace_is_drawn_with_lifelines_arrows_and_pairings_in_chromium() {
    let (chain, trace) = real_chain_trace("trace-view-real");
    let html = chain.dir.join("trace.html");
    render(&trace, &html);
    let records = records(&trace);
    let want = expected(&records);
    assert!(
        want.pairs >= 10 && want.hops >= 10,
        "a thin trace: {}",
        want.messages
    );

    let profile = chain.dir.join("chromium-profile");
    let dom = browser::dump_dom(&browser::file_url(&html, "selftest"), &profile);
    let report = browser::render_report(&dom);
    eprintln!("render report: {report:#}");

    // Lifelines: one per component, in chain order, in the DOM too.
    assert_eq!(
        lifeline_names(&report),
        ["editor", "p1", "p2", "agent"],
        "{report}"
    );
    assert_eq!(report["lifelineElements"], 4);
    assert_eq!(
        dom.matches("class=\"lifeline ").count(),
        4,
        "lifeline elements in the DOM"
    );
    assert_eq!(report["header"], true);
    assert_eq!(report["messages"], want.messages);
    assert_eq!(report["records"], records.len());

    // Arrows: one per visible message row, the first the editor's initialize read by the
    // conductor and headed for p1, the next the conductor writing p1's proxy/initialize.
    let drawn = report["drawn"].as_array().expect("drawn");
    let arrows = report["arrowsDrawn"].as_u64().expect("arrows");
    assert!(arrows >= 20, "{arrows} arrows drawn");
    assert!(arrows <= report["visibleRows"].as_u64().unwrap());
    let first = &drawn[0];
    assert_eq!(
        (
            &first["link"],
            &first["dir"],
            &first["kind"],
            &first["method"],
            &first["from"],
            &first["via"]
        ),
        (
            &json!("editor"),
            &json!("in"),
            &json!("request"),
            &json!("initialize"),
            &json!("editor"),
            &json!("p1")
        ),
        "{first}"
    );
    let second = &drawn[1];
    assert_eq!(
        (
            &second["link"],
            &second["dir"],
            &second["method"],
            &second["to"],
            &second["via"]
        ),
        (
            &json!("p1"),
            &json!("out"),
            &json!("proxy/initialize"),
            &json!("p1"),
            &json!("editor")
        ),
        "{second}"
    );
    // Every drawn arrow is a message of the trace, in trace order.
    let mut last = 0;
    for d in drawn {
        let record = d["record"].as_u64().expect("record") as usize;
        assert!(record > last || last == 0, "arrows out of order: {drawn:?}");
        last = record;
        assert_eq!(records[record]["type"], "message");
        assert_eq!(records[record]["link"], d["link"]);
        assert_eq!(records[record]["dir"], d["dir"]);
    }
    // Pairings and hops, all of them.
    assert_eq!(report["pairs"], want.pairs, "{report}");
    assert_eq!(report["hops"], want.hops, "{report}");
    for kind in ["request", "response", "notification", "error"] {
        assert!(
            want.kinds.get(kind).copied().unwrap_or(0) > 0,
            "the trace has no {kind}"
        );
    }
    assert!(report["arrowsByKind"]["request"].as_u64().unwrap() > 0);
    assert!(report["arrowsByKind"]["response"].as_u64().unwrap() > 0);

    // The summary per link.
    for link in report["links"].as_array().expect("links") {
        let name = link["link"].as_str().unwrap();
        assert_eq!(
            link["messages"].as_u64().unwrap() as usize,
            want.per_link[name],
            "{link}"
        );
        assert!(link["bytes"].as_u64().unwrap() > 0, "{link}");
        assert!(
            link["p50Ms"].as_f64().is_some_and(|ms| ms >= 0.0),
            "no p50 for {link}"
        );
    }

    // Clicks and filters, driven inside the page.
    let st = &report["selftest"];
    assert_eq!(
        st["selectedAfterClick"], st["clicked"],
        "a click selects: {st}"
    );
    assert_eq!(st["payloadShown"], true, "the payload is shown: {st}");
    assert_eq!(
        st["selectedAfterSecondClick"], st["pair"],
        "a second click jumps to the response: {st}"
    );
    assert_eq!(st["pairVisible"], true, "{st}");
    assert_eq!(
        st["selectedAfterButton"], st["clicked"],
        "the response's button leads back to its request: {st}"
    );
    assert_eq!(
        records[st["clicked"].as_u64().unwrap() as usize]["id"],
        records[st["pair"].as_u64().unwrap() as usize]["id"]
    );
    for filter in ["methodFilter", "sessionFilter"] {
        let f = &st[filter];
        assert!(f["rows"].as_u64().unwrap() > 0, "{filter}: {f}");
        assert_eq!(f["rows"], f["expected"], "{filter}: {f}");
        assert_eq!(f["allMatch"], true, "{filter}: {f}");
        assert_eq!(f["drawnMatch"], true, "{filter}: {f}");
        assert_eq!(f["restored"], true, "{filter}: {f}");
    }

    // The agent's permission request, selected: it travels back toward the editor,
    // wrapped to p2, unwrapped from p2 to p1, plain to the editor.
    let select = records
        .iter()
        .position(|r| {
            r["method"] == "session/request_permission" && r["link"] == "agent" && r["dir"] == "in"
        })
        .expect("the agent asked for permission");
    let fragment = format!("select={select}");
    let selected = browser::render_report(&browser::dump_dom(
        &browser::file_url(&html, &fragment),
        &profile,
    ));
    assert_eq!(selected["selected"]["record"], select, "{selected}");
    let hops: Vec<(String, String, String)> = selected["selected"]["path"]
        .as_array()
        .expect("the selection's path")
        .iter()
        .filter(|d| d["kind"] == "request")
        .map(|d| {
            let s = |k: &str| d[k].as_str().unwrap_or_default().to_string();
            (s("link"), s("dir"), s("via"))
        })
        .collect();
    let hop =
        |link: &str, dir: &str, via: &str| (link.to_string(), dir.to_string(), via.to_string());
    assert_eq!(
        hops,
        [
            hop("agent", "in", "p2"),
            hop("p2", "out", "agent"),
            hop("p2", "in", "p1"),
            hop("p1", "out", "p2"),
            hop("p1", "in", "editor"),
            hop("editor", "out", "p1"),
        ],
        "{selected}"
    );

    // The picture of that.
    let png = output_dir().join("real-chain.png");
    browser::screenshot(&browser::file_url(&html, &fragment), &png, &profile);
    std::fs::copy(&html, output_dir().join("real-chain.html")).expect("keep the page");
    std::fs::copy(&trace, output_dir().join("real-chain.jsonl")).expect("keep the trace");
    println!("screenshot: {}", png.display());
}

#[test]
fn a_hundred_thousand_message_trace_opens_and_scrolls_within_budget() {
    const MESSAGES: usize = 100_000;
    let dir = output_dir();
    let trace = dir.join("100k.jsonl");
    std::fs::write(&trace, synthetic::trace(MESSAGES)).expect("write the trace");
    let html = dir.join("100k.html");
    let started = Instant::now();
    render(&trace, &html);
    let render_time = started.elapsed();
    let size = std::fs::metadata(&html).expect("the page").len();

    let profile = scratch_dir("100k");
    let started = Instant::now();
    let dom = browser::dump_dom(&browser::file_url(&html, "bench"), &profile);
    let browser_time = started.elapsed();
    let report = browser::render_report(&dom);
    let timings = &report["timings"];
    let bench = &report["bench"];
    println!(
        "100k messages: page {:.1} MB written in {render_time:?}; in Chromium: JSON.parse {:.0} ms, \
         indexing {:.0} ms, first frame {:.1} ms, loaded (navigation start to first frame) {:.0} ms; \
         scroll frames ({} frames over {} rows): p50 {:.2} ms, p95 {:.2} ms, max {:.2} ms; \
         the whole Chromium run {browser_time:?}",
        size as f64 / 1e6,
        timings["parseMs"].as_f64().unwrap(),
        timings["indexMs"].as_f64().unwrap(),
        timings["firstDrawMs"].as_f64().unwrap(),
        timings["loadMs"].as_f64().unwrap(),
        bench["frames"],
        bench["rows"],
        bench["p50Ms"].as_f64().unwrap(),
        bench["p95Ms"].as_f64().unwrap(),
        bench["maxMs"].as_f64().unwrap(),
    );
    assert_eq!(report["messages"], MESSAGES);
    assert_eq!(report["rows"], MESSAGES);
    // Drawn: only what is in view.
    let visible = report["visibleRows"].as_u64().unwrap();
    assert!(
        visible > 10 && visible < 100,
        "{visible} rows drawn in a 900 px window"
    );
    assert!(report["arrowsDrawn"].as_u64().unwrap() <= visible);
    assert_eq!(bench["frames"], 400);
    // Budgets with room for a busy 2-core machine: opening in seconds, scrolling at a
    // frame rate a person calls smooth.
    assert!(
        timings["loadMs"].as_f64().unwrap() < 15_000.0,
        "opening took too long: {timings}"
    );
    assert!(
        bench["p95Ms"].as_f64().unwrap() < 16.0,
        "scroll frames too slow: {bench}"
    );
    let _ = std::fs::remove_dir_all(&profile);
}

fn scratch_dir(label: &str) -> PathBuf {
    acp_conductor_tests::test_chain::fresh_dir(&format!("trace-view-{label}"))
}

#[test]
fn a_trace_without_header_with_unknown_records_and_a_truncated_tail_is_still_drawn() {
    let dir = acp_conductor_tests::test_chain::fresh_dir("trace-view-damaged");
    let trace = dir.join("damaged.jsonl");
    // session/new through p1 to the agent, failing there and the error relayed back; members
    // and a record type this reader does not know; no header.
    let message = |t: f64, link: &str, position: Value, dir: &str, kind: &str, id: Value| {
        json!({"type": "message", "t": t, "link": link, "position": position, "dir": dir,
               "kind": kind, "method": "session/new", "wrapped": null, "id": id, "mapsTo": null,
               "session": null, "bytes": 40, "payload": {"jsonrpc": "2.0", "id": id}, "future": [1, 2]})
    };
    let with = |mut record: Value, key: &str, value: Value| {
        record[key] = value;
        record
    };
    let records = [
        with(
            message(0.1, "editor", json!(0), "in", "request", json!(0)),
            "mapsTo",
            json!({"link": "p1", "id": 1}),
        ),
        json!({"type": "checkpoint", "t": 0.2, "whatever": true}),
        message(0.3, "p1", json!(1), "out", "request", json!(1)),
        with(
            with(
                message(0.35, "p1", json!(1), "in", "request", json!(0)),
                "wrapped",
                json!("proxy/successor"),
            ),
            "mapsTo",
            json!({"link": "agent", "id": 5}),
        ),
        message(0.4, "agent", json!(2), "out", "request", json!(5)),
        json!({"type": "message", "t": 0.45, "link": "shim:notes#1", "position": null, "dir": "in",
               "kind": "notification", "method": "notifications/initialized", "bytes": 50}),
        json!({"type": "component", "t": 0.5, "link": "p1", "event": "restarted", "detail": "exit status 1"}),
        with(
            message(0.6, "agent", json!(2), "in", "error", json!(5)),
            "mapsTo",
            json!({"link": "p1", "id": 0}),
        ),
        with(
            message(0.62, "p1", json!(1), "out", "error", json!(0)),
            "wrapped",
            json!("proxy/successor"),
        ),
        with(
            message(0.7, "p1", json!(1), "in", "error", json!(1)),
            "mapsTo",
            json!({"link": "editor", "id": 0}),
        ),
        message(0.72, "editor", json!(0), "out", "error", json!(0)),
        json!({"type": "dropped", "t": 0.8, "count": 3, "total": 3}),
        json!({"type": "end", "t": 0.9, "reason": "the editor closed its input", "dropped": 3}),
    ];
    let mut text = String::new();
    for record in &records {
        text.push_str(&record.to_string());
        text.push('\n');
    }
    text.push_str("not a record\n");
    text.push_str(r#"{"type":"message","t":0.95,"link":"editor","posi"#);
    std::fs::write(&trace, &text).expect("write");
    let html = dir.join("damaged.html");
    let stderr = render(&trace, &html);
    assert!(
        stderr.contains("1 line(s)") && stderr.contains("line 14"),
        "the stray line is reported: {stderr}"
    );

    // The agent's error selected: its whole exchange is found without a header.
    let agent_error = 7;
    assert_eq!(records[agent_error]["kind"], "error");
    let dom = browser::dump_dom(
        &browser::file_url(&html, &format!("select={agent_error}")),
        &dir.join("profile"),
    );
    let report = browser::render_report(&dom);
    assert_eq!(report["header"], false);
    // The truncated tail is dropped; the unknown record type is read and ignored.
    assert_eq!(report["records"], records.len(), "{report}");
    assert_eq!(report["messages"], 9, "{report}");
    assert_eq!(report["componentEvents"], 1, "{report}");
    assert_eq!(report["ended"], "the editor closed its input");
    assert_eq!(
        report["dropped"], 3,
        "the writer's drops are told: {report}"
    );
    // Components inferred from the links: by position, the bridge connection after them.
    assert_eq!(
        lifeline_names(&report),
        ["editor", "p1", "agent", "shim:notes#1"]
    );
    let roles: Vec<&str> = report["lifelines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["role"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(roles, ["editor", "proxy", "agent", "mcp bridge"]);
    assert_eq!(report["pairs"], 4, "{report}");
    assert_eq!(report["hops"], 4, "{report}");
    assert_eq!(report["passedOn"], 1, "p1 passed the request on: {report}");
    assert_eq!(report["arrowsDrawn"], 9, "{report}");
    assert_eq!(report["arrowsByKind"]["error"], 4, "{report}");
    let path: Vec<u64> = report["selected"]["path"]
        .as_array()
        .expect("a path")
        .iter()
        .map(|p| p["record"].as_u64().unwrap())
        .collect();
    assert_eq!(
        path,
        [0, 2, 3, 4, 7, 8, 9, 10],
        "every hop of the call and of its error: {report}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn trace_view_of_a_missing_file_fails_and_says_why() {
    let dir = acp_conductor_tests::test_chain::fresh_dir("trace-view-missing");
    let out = Command::new(binaries!().conductor)
        .args(["trace", "view"])
        .arg(dir.join("nope.jsonl"))
        .output()
        .expect("run");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot read") && stderr.contains("nope.jsonl"),
        "{stderr}"
    );
    assert!(!dir.join("nope.html").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `trace view --serve` running, its stderr lines coming through a channel.
struct Server {
    child: Child,
    addr: SocketAddr,
    stderr: mpsc::Receiver<String>,
}

impl Server {
    fn start(trace: &Path) -> Self {
        let mut child = Command::new(binaries!().conductor)
            .args(["trace", "view"])
            .arg(trace)
            .args(["--serve", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start trace view --serve");
        let (tx, rx) = mpsc::channel();
        let stderr = child.stderr.take().expect("piped");
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(20);
        let addr = loop {
            let line = rx
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .expect("the server says where it listens");
            if let Some(rest) = line.split("http://").nth(1) {
                break rest
                    .split('/')
                    .next()
                    .expect("host:port")
                    .parse::<SocketAddr>()
                    .expect("an address");
            }
        };
        Self {
            child,
            addr,
            stderr: rx,
        }
    }

    fn get(&self, path: &str) -> http::Response {
        http::get(self.addr, path, Duration::from_secs(40))
    }

    fn records(&self, from: usize, generation: u64) -> Value {
        let response = self.get(&format!("/records?from={from}&generation={generation}"));
        assert_eq!(response.status, 200, "{}", response.body);
        assert!(
            response
                .header("content-type")
                .is_some_and(|v| v.starts_with("application/json"))
        );
        serde_json::from_str(&response.body).expect("JSON")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn append(path: &Path, text: &str) {
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .expect("open");
    file.write_all(text.as_bytes()).expect("append");
}

#[test]
fn serve_follows_the_trace_as_it_grows_and_stops_on_ctrl_c() {
    let dir = acp_conductor_tests::test_chain::fresh_dir("trace-view-serve");
    let trace = dir.join("live.jsonl");
    let all: Vec<String> = synthetic::trace(40).lines().map(str::to_string).collect();
    let first: String = all[..4].iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&trace, &first).expect("write");
    let server = Server::start(&trace);
    assert!(server.addr.ip().is_loopback());

    // The page, with what the file held and where to ask for more.
    let page = server.get("/");
    assert_eq!(page.status, 200);
    assert!(
        page.header("content-type")
            .is_some_and(|v| v.starts_with("text/html"))
    );
    assert!(
        page.body
            .contains(r#"{"live":{"records":"records","generation":0,"next":4}}"#)
    );
    assert!(page.body.contains(r#""method":"session/prompt""#));

    // Nothing new yet: a long poll waits; two records and half a third appended meanwhile
    // come back as two records.
    let addr = server.addr;
    let waiting = std::thread::spawn(move || {
        http::get(
            addr,
            "/records?from=4&generation=0",
            Duration::from_secs(40),
        )
    });
    std::thread::sleep(Duration::from_millis(600));
    assert!(
        !waiting.is_finished(),
        "the long poll answered with nothing new"
    );
    let half = all[6].len() / 2;
    append(
        &trace,
        &format!("{}\n{}\n{}", all[4], all[5], &all[6][..half]),
    );
    let answer: Value = serde_json::from_str(&waiting.join().expect("poller").body).expect("JSON");
    assert_eq!(answer["from"], 4);
    assert_eq!(answer["next"], 6, "{answer}");
    let got: Vec<Value> = answer["records"].as_array().unwrap().clone();
    let want: Vec<Value> = all[4..6]
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(got, want);

    // The line completed: it is the next record.
    append(&trace, &format!("{}\n", &all[6][half..]));
    let answer = server.records(6, 0);
    assert_eq!(answer["next"], 7, "{answer}");
    assert_eq!(
        answer["records"][0],
        serde_json::from_str::<Value>(&all[6]).unwrap()
    );
    // From the start, at once.
    let answer = server.records(0, 0);
    assert_eq!(answer["records"].as_array().unwrap().len(), 7);

    // The page served now holds everything, and Chromium draws it as a live page.
    let dom = browser::dump_dom(&format!("http://{addr}/"), &dir.join("profile"));
    let report = browser::render_report(&dom);
    assert_eq!(report["records"], 7, "{report}");
    assert_eq!(report["live"]["next"], 7, "{report}");
    assert_eq!(
        lifeline_names(&report),
        synthetic::LANES.map(str::to_string)
    );

    // A new run truncates the file: the page is told to start again.
    std::fs::write(&trace, format!("{}\n", all[0])).expect("truncate");
    let deadline = Instant::now() + Duration::from_secs(10);
    let reset = loop {
        let answer = server.records(7, 0);
        if answer["reset"] == true {
            break answer;
        }
        assert!(Instant::now() < deadline, "no reset: {answer}");
    };
    assert_eq!(reset["generation"], 1);
    assert_eq!(server.records(0, 1)["next"], 1);

    assert_eq!(server.get("/elsewhere").status, 404);
    assert_eq!(server.get("/records").status, 400);

    // Ctrl-C stops it, a pending long poll answered rather than waited out.
    let poll = std::thread::spawn(move || {
        http::get(
            addr,
            "/records?from=1&generation=1",
            Duration::from_secs(40),
        )
    });
    std::thread::sleep(Duration::from_millis(300));
    let mut server = server;
    let pid = libc::pid_t::try_from(server.child.id()).expect("pid");
    // SAFETY: kill(2) on the child this test started and has not reaped.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let stopped_at = Instant::now();
    let status = loop {
        if let Some(status) = server.child.try_wait().expect("try_wait") {
            break status;
        }
        assert!(
            stopped_at.elapsed() < Duration::from_secs(10),
            "still serving 10 s after Ctrl-C"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
    let answered = poll.join().expect("poller");
    assert_eq!(answered.status, 200);
    let said: Vec<String> = server.stderr.try_iter().collect();
    assert!(said.iter().any(|l| l.contains("stopped")), "{said:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_served_page_in_chromium_appends_records_as_the_file_grows() {
    let dir = acp_conductor_tests::test_chain::fresh_dir("trace-view-live");
    let trace = dir.join("live.jsonl");
    let all: Vec<String> = synthetic::trace(90).lines().map(str::to_string).collect();
    let head: String = all[..7].iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&trace, &head).expect("write");
    let server = Server::start(&trace);
    let mut page = cdp::Page::open(&format!("http://{}/", server.addr), &dir.join("profile"));
    let patience = Duration::from_secs(30);
    page.report_when(patience, |r| r["records"] == 7 && r["live"]["next"] == 7);

    // A real click on the first row (the editor's prompt) selects it.
    let canvas = page.eval(
        "(() => { const r = document.getElementById('canvas').getBoundingClientRect(); \
         return {left: r.left, top: r.top}; })()",
    );
    let (x, y) = (
        canvas["left"].as_f64().unwrap() + 300.0,
        canvas["top"].as_f64().unwrap() + 11.0,
    );
    page.click(x, y);
    let report = page.report_when(patience, |r| r["selected"].is_object());
    assert_eq!(report["selected"]["record"], 1, "{report}");
    assert_eq!(report["selected"]["pair"], Value::Null, "no response yet");

    // The rest of the file arrives: the page appends it, follows the end, and pairs the
    // prompt with its response, which came in the appended part.
    let rest: String = all[7..].iter().map(|l| format!("{l}\n")).collect();
    append(&trace, &rest);
    let report = page.report_when(patience, |r| r["records"] == all.len());
    assert_eq!(report["messages"], 90);
    assert_eq!(report["rows"], 90);
    assert!(
        report["firstVisibleRow"].as_u64().unwrap() > 0,
        "the view followed the end: {report}"
    );
    let response = all
        .iter()
        .position(|l| {
            let r: Value = serde_json::from_str(l).unwrap();
            r["link"] == "editor" && r["dir"] == "out" && r["kind"] == "response" && r["id"] == 1
        })
        .expect("the prompt's response");
    let report = page.report_when(patience, |r| r["pairs"].as_u64().unwrap_or(0) > 0);
    assert!(report["hops"].as_u64().unwrap() > 0, "{report}");
    // Enter jumps from the selected request to its response.
    page.command(
        "Input.dispatchKeyEvent",
        json!({"type": "keyDown", "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13}),
    );
    let report = page.report_when(patience, |r| r["selected"]["record"] != 1);
    assert_eq!(report["selected"]["record"], response, "{report}");
    assert_eq!(report["selected"]["pair"], 1, "{report}");

    // A new run rewrites the file: the page starts again from it.
    std::fs::write(&trace, format!("{}\n{}\n", all[0], all[1])).expect("rewrite");
    let report = page.report_when(patience, |r| {
        r["live"]["generation"] == 1 && r["records"] == 2
    });
    assert_eq!(report["messages"], 1);
    drop(page);
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
