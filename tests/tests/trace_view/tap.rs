//! A trace of a real chain without the conductor's `--trace`: `trace-tap` around the
//! conductor (the editor's link) and around every component logs each line with the time
//! it passed, and [`trace_from_taps`] turns the logs into trace records (format version 1,
//! docs/trace.md), ids and `mapsTo` as the conductor's routing rules make them
//! (docs/architecture.md, "Routing, as built"). Used until `run --trace` is on this branch.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use acp_conductor_tests::{Editor, TestChain};
use serde_json::{Value, json};

/// The tap program of this test build.
pub fn tap_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_trace-tap"))
}

/// The components of a tapped chain in chain order: `editor`, the proxies, `agent`.
pub fn lane_names(chain: &TestChain) -> Vec<String> {
    let mut names = vec!["editor".to_string()];
    names.extend(chain.proxies.iter().map(|p| p.name.clone()));
    names.push("agent".to_string());
    names
}

fn tap_log(chain: &TestChain, name: &str) -> PathBuf {
    chain.file(name, "tap")
}

/// Puts every proxy and the agent of `chain` behind `trace-tap`.
pub fn tap_components(chain: &mut TestChain) {
    let tap = tap_binary();
    let wrap = |log: PathBuf, command: &Path, args: &[String]| {
        let mut wrapped = vec![
            "--log".to_string(),
            log.display().to_string(),
            "--stdin-dir".to_string(),
            "out".to_string(),
            "--".to_string(),
            command.display().to_string(),
        ];
        wrapped.extend(args.iter().cloned());
        wrapped
    };
    let logs: Vec<PathBuf> = chain
        .proxies
        .iter()
        .map(|p| tap_log(chain, &p.name))
        .collect();
    for (proxy, log) in chain.proxies.iter_mut().zip(logs) {
        proxy.args = wrap(log, &proxy.command, &proxy.args);
        proxy.command = tap.clone();
    }
    let log = tap_log(chain, "agent");
    let agent = chain.agent.as_mut().expect("a chain with a command agent");
    agent.args = wrap(log, &agent.command, &agent.args);
    agent.command = tap;
}

/// Starts the conductor behind `trace-tap`, as the editor would start it.
pub fn launch_tapped(chain: &TestChain) -> Editor {
    let config = chain.write_config();
    let args = vec![
        "--log".to_string(),
        tap_log(chain, "editor").display().to_string(),
        "--stdin-dir".to_string(),
        "in".to_string(),
        "--".to_string(),
        chain.binaries.conductor.display().to_string(),
        "run".to_string(),
        "--config".to_string(),
        config.display().to_string(),
    ];
    Editor::launch(&tap_binary(), &args, &[("ACP_CONDUCTOR_LOG", "debug")])
}

/// One logged line or event.
struct Entry {
    us: u64,
    lane: usize,
    dir_in: bool,
    line: Option<String>,
    event: Option<(String, String)>,
}

/// What a message record is, beyond its JSON.
#[derive(Default, Clone)]
struct Facts {
    lane: usize,
    dir_in: bool,
    kind: &'static str,
    id: Value,
    /// The method, the inner one for a wrapped message.
    method: Option<String>,
    inner_params: Value,
    wrapped: Option<String>,
}

/// The trace (JSON lines) of the tapped chain's logs.
pub fn trace_from_taps(chain: &TestChain) -> String {
    let names = lane_names(chain);
    let agent = names.len() - 1;
    let mut entries = Vec::new();
    for (lane, name) in names.iter().enumerate() {
        let path = tap_log(chain, name);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("no tap log {}: {e}", path.display()));
        for line in text.lines() {
            let v: Value = serde_json::from_str(line).expect("a tap log line is JSON");
            entries.push(Entry {
                us: v["us"].as_u64().expect("us"),
                lane,
                dir_in: v["dir"] == "in",
                line: v["line"].as_str().map(str::to_string),
                event: v["event"].as_str().map(|e| {
                    (
                        e.to_string(),
                        v["detail"].as_str().unwrap_or_default().to_string(),
                    )
                }),
            });
        }
    }
    entries.sort_by_key(|e| e.us);
    let start = entries.first().map(|e| e.us).unwrap_or_default();
    let t = |us: u64| (us - start) as f64 / 1000.0;

    let mut header_components = vec![json!({"name": "editor", "role": "editor", "position": 0})];
    for (k, proxy) in chain.proxies.iter().enumerate() {
        header_components.push(
            json!({"name": proxy.name, "role": "proxy", "position": k + 1, "kind": "native"}),
        );
    }
    header_components.push(json!({"name": "agent", "role": "agent", "position": agent}));
    let mut records: Vec<Value> = vec![json!({
        "type": "header",
        "format": "acp-conductor-trace",
        "version": 1,
        "startedAt": rfc3339(start),
        "conductor": "acp-conductor (trace made by trace-tap)",
        "components": header_components,
    })];

    // Pass 1: the records, without mapsTo.
    let mut facts: Vec<Option<Facts>> = vec![None];
    for entry in &entries {
        if let Some((event, detail)) = &entry.event {
            if entry.lane == 0 {
                if event == "exited" {
                    records.push(json!({"type": "end", "t": t(entry.us), "reason": format!("conductor {detail}")}));
                    facts.push(None);
                }
                continue;
            }
            records.push(json!({"type": "component", "t": t(entry.us), "link": names[entry.lane], "event": event, "detail": detail}));
            facts.push(None);
            continue;
        }
        let line = entry.line.as_deref().expect("a line");
        let (record, fact) = message_record(line, entry, &names, t(entry.us));
        records.push(record);
        facts.push(Some(fact));
    }

    // Pass 2: responses get their request's method and session; an "in" request gets the
    // request it was forwarded as; an "in" response the request it answers there.
    let mut open: HashMap<(usize, bool, String), usize> = HashMap::new();
    let mut claimed: HashSet<usize> = HashSet::new();
    let mut origin: HashMap<usize, usize> = HashMap::new();
    for i in 0..records.len() {
        let Some(fact) = facts[i].clone() else {
            continue;
        };
        let key = (fact.lane, fact.dir_in, fact.id.to_string());
        match fact.kind {
            "request" => {
                open.insert(key, i);
                if fact.dir_in {
                    let next = next_hop(fact.lane, agent, fact.wrapped.is_some());
                    let forwarded = (i + 1..records.len()).find(|&j| {
                        facts[j].as_ref().is_some_and(|f| {
                            f.kind == "request"
                                && !f.dir_in
                                && f.lane == next
                                && !claimed.contains(&j)
                                && same_call(f, &fact)
                        })
                    });
                    if let Some(j) = forwarded {
                        claimed.insert(j);
                        origin.insert(j, i);
                        let to = facts[j].as_ref().expect("a message");
                        records[i]["mapsTo"] = json!({"link": names[next], "id": to.id});
                    }
                }
            }
            "response" | "error" => {
                let request_key = (fact.lane, !fact.dir_in, fact.id.to_string());
                if let Some(q) = open.remove(&request_key) {
                    let method = records[q]["method"].clone();
                    records[i]["method"] = method;
                    if records[i]["session"].is_null() {
                        records[i]["session"] = records[q]["session"].clone();
                    }
                    if fact.dir_in
                        && let Some(&o) = origin.get(&q)
                    {
                        let from = facts[o].as_ref().expect("a message");
                        records[i]["mapsTo"] = json!({"link": names[from.lane], "id": from.id});
                    }
                }
            }
            _ => {}
        }
    }

    let mut text = String::new();
    for record in &records {
        text.push_str(&record.to_string());
        text.push('\n');
    }
    text
}

/// Where the conductor sends a request read from `lane` (docs/architecture.md).
fn next_hop(lane: usize, agent: usize, wrapped: bool) -> usize {
    if lane == 0 {
        1
    } else if lane == agent {
        agent - 1
    } else if wrapped {
        lane + 1
    } else {
        lane - 1
    }
}

/// Whether two requests are one call on two hops: the same (inner) method, `initialize`
/// and the proxies' initialize counting as one, with the same params.
fn same_call(a: &Facts, b: &Facts) -> bool {
    let norm = |m: &Option<String>| {
        m.as_deref()
            .map(|m| m.trim_start_matches("_proxy/").trim_start_matches("proxy/"))
            .map(str::to_string)
    };
    norm(&a.method) == norm(&b.method) && a.inner_params == b.inner_params
}

fn message_record(line: &str, entry: &Entry, names: &[String], t: f64) -> (Value, Facts) {
    let mut record = json!({
        "type": "message",
        "t": t,
        "link": names[entry.lane],
        "position": entry.lane,
        "dir": if entry.dir_in { "in" } else { "out" },
        "kind": "invalid",
        "method": null,
        "wrapped": null,
        "id": null,
        "mapsTo": null,
        "session": null,
        "bytes": line.len(),
    });
    let mut fact = Facts {
        lane: entry.lane,
        dir_in: entry.dir_in,
        kind: "invalid",
        ..Facts::default()
    };
    let Ok(message) = serde_json::from_str::<Value>(line) else {
        return (record, fact);
    };
    let method = message["method"].as_str();
    let has_id = message.get("id").is_some();
    fact.kind = match (method, has_id) {
        (Some(_), true) => "request",
        (Some(_), false) => "notification",
        (None, true) if message.get("error").is_some() => "error",
        (None, true) if message.get("result").is_some() => "response",
        _ => "invalid",
    };
    fact.id = message.get("id").cloned().unwrap_or(Value::Null);
    let mut params = message.get("params").cloned().unwrap_or(Value::Null);
    let mut inner_method = method.map(str::to_string);
    if let Some(m) = method
        && (m == "proxy/successor" || m == "_proxy/successor")
    {
        fact.wrapped = Some(m.to_string());
        inner_method = params["method"].as_str().map(str::to_string);
        params = params.get("params").cloned().unwrap_or(Value::Null);
    }
    fact.method = inner_method;
    fact.inner_params = params.clone();
    let session = params
        .get("sessionId")
        .or_else(|| message.get("result").and_then(|r| r.get("sessionId")))
        .cloned()
        .unwrap_or(Value::Null);
    record["kind"] = json!(fact.kind);
    record["method"] = json!(fact.method);
    record["wrapped"] = json!(fact.wrapped);
    record["id"] = fact.id.clone();
    record["session"] = session;
    record["payload"] = message;
    (record, fact)
}

/// `us` since the epoch as RFC 3339 UTC.
fn rfc3339(us: u64) -> String {
    let secs = us / 1_000_000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:06}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        us % 1_000_000
    )
}
