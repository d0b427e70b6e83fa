//! A trace file (`run --trace`, docs/trace.md) read back for the tests: its records by link
//! and direction, and the walks that follow a request's ids hop to hop through `mapsTo`.
//! Knows the trace format and the proxies' pass-through behaviour; not how the conductor routes.

use std::collections::HashSet;
use std::path::Path;

use serde_json::Value;

/// Every record of one trace, in file order.
pub struct TraceFile {
    pub records: Vec<Value>,
    /// The chain as the header lists it: names, position 0 first.
    pub chain: Vec<String>,
}

/// One hop of a request: the link it arrived on with its id there, and the link and id it
/// was forwarded under (`mapsTo`).
#[derive(Debug, Clone, PartialEq)]
pub struct Hop {
    pub from: String,
    pub id: Value,
    pub to: String,
    pub to_id: Value,
}

impl TraceFile {
    /// Reads and parses `path`; every line must be a JSON object.
    pub fn read(path: &Path) -> TraceFile {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("no trace at {}: {e}", path.display()));
        let records: Vec<Value> = text
            .lines()
            .map(|line| {
                serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("a trace line that is not JSON ({e}): {line}"))
            })
            .collect();
        let header = records.first().expect("a header line");
        assert_eq!(header["type"], "header", "{header}");
        let chain = header["components"]
            .as_array()
            .expect("components")
            .iter()
            .map(|c| c["name"].as_str().expect("a name").to_string())
            .collect();
        TraceFile { records, chain }
    }

    /// The message records of `link` in direction `dir` (`in`, `out`), in file order, with
    /// their index in the file.
    pub fn on(&self, link: &str, dir: &str) -> Vec<(usize, &Value)> {
        self.records
            .iter()
            .enumerate()
            .filter(|(_, r)| r["type"] == "message" && r["link"] == link && r["dir"] == dir)
            .collect()
    }

    /// The payloads of [`on`](Self::on).
    pub fn payloads(&self, link: &str, dir: &str) -> Vec<Value> {
        self.on(link, dir)
            .into_iter()
            .map(|(_, r)| r["payload"].clone())
            .collect()
    }

    /// The one record of `link`, `dir`, a kind among `kinds`, with this id.
    pub fn find(&self, link: &str, dir: &str, kinds: &[&str], id: &Value) -> (usize, &Value) {
        let found: Vec<(usize, &Value)> = self
            .on(link, dir)
            .into_iter()
            .filter(|(_, r)| kinds.iter().any(|k| r["kind"] == *k) && r["id"] == *id)
            .collect();
        assert_eq!(
            found.len(),
            1,
            "expected one {dir} {kinds:?} with id {id} on {link}, found {found:#?}"
        );
        found[0]
    }

    fn is_end(&self, link: &str) -> bool {
        self.chain.first().map(String::as_str) == Some(link)
            || self.chain.last().map(String::as_str) == Some(link)
    }

    /// Follows the request read from `link` with id `id` to the end of the chain it travels
    /// toward, through `mapsTo`: on each link the conductor wrote it to, the record of it
    /// written there, and for a proxy, the request the proxy sent on in turn (the first of
    /// the same method it sent after receiving it, not taken by an earlier walk). Panics when
    /// a hop does not map. Returns the hops in order.
    pub fn follow_request(&self, link: &str, id: &Value, taken: &mut HashSet<usize>) -> Vec<Hop> {
        let mut hops = Vec::new();
        let (mut at, mut record) = self.find(link, "in", &["request"], id);
        let mut link = link.to_string();
        loop {
            let maps_to = &record["mapsTo"];
            let to = maps_to["link"]
                .as_str()
                .unwrap_or_else(|| panic!("request without mapsTo: {record}"))
                .to_string();
            let to_id = maps_to["id"].clone();
            let (out_at, out) = self.find(&to, "out", &["request"], &to_id);
            assert!(out_at > at, "{out} was written before {record} was read");
            assert_eq!(
                same_method(&out["method"]),
                same_method(&record["method"]),
                "{record} became {out}"
            );
            hops.push(Hop {
                from: link.clone(),
                id: record["id"].clone(),
                to: to.clone(),
                to_id,
            });
            if self.is_end(&to) {
                return hops;
            }
            let (next_at, next) = self
                .on(&to, "in")
                .into_iter()
                .find(|(i, r)| {
                    *i > out_at
                        && !taken.contains(i)
                        && r["kind"] == "request"
                        && same_method(&r["method"]) == same_method(&out["method"])
                })
                .unwrap_or_else(|| panic!("{to} never passed on {out}"));
            taken.insert(next_at);
            (at, record, link) = (next_at, next, to);
        }
    }

    /// The first hop of the request read from `link` with id `id`: where it was forwarded
    /// (`mapsTo`), checked to be written there after it was read.
    pub fn hop(&self, link: &str, id: &Value) -> Hop {
        let (at, record) = self.find(link, "in", &["request"], id);
        let to = record["mapsTo"]["link"]
            .as_str()
            .unwrap_or_else(|| panic!("request without mapsTo: {record}"));
        let to_id = record["mapsTo"]["id"].clone();
        let (out_at, out) = self.find(to, "out", &["request"], &to_id);
        assert!(out_at > at, "{out} was written before {record} was read");
        Hop {
            from: link.to_string(),
            id: id.clone(),
            to: to.to_string(),
            to_id,
        }
    }

    /// Checks that the answer to the request `hops` describe comes back hop by hop: each
    /// response read names (`mapsTo`) the link and id of the request it answers, and is
    /// written there. Returns the record written at the start of the walk.
    pub fn follow_answer(&self, hops: &[Hop]) -> &Value {
        let mut written = None;
        for hop in hops.iter().rev() {
            let (read_at, read) = self.find(&hop.to, "in", &["response", "error"], &hop.to_id);
            assert_eq!(
                read["mapsTo"],
                serde_json::json!({ "link": hop.from, "id": hop.id }),
                "the answer read from {} with id {}",
                hop.to,
                hop.to_id
            );
            let (out_at, out) = self.find(&hop.from, "out", &["response", "error"], &hop.id);
            assert!(out_at > read_at, "{out} was written before {read} was read");
            written = Some(out);
        }
        written.expect("at least one hop")
    }

    /// Every string in every record, member names included.
    pub fn strings(&self) -> Vec<String> {
        let mut all = Vec::new();
        for record in &self.records {
            collect_strings(record, &mut all);
        }
        all
    }
}

/// `proxy/initialize` is how the conductor hands `initialize` to a proxy.
fn same_method(method: &Value) -> &str {
    match method.as_str() {
        Some("proxy/initialize") => "initialize",
        Some(method) => method,
        None => "",
    }
}

fn collect_strings(value: &Value, into: &mut Vec<String>) {
    match value {
        Value::String(s) => into.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, into)),
        Value::Object(members) => {
            for (name, v) in members {
                into.push(name.clone());
                collect_strings(v, into);
            }
        }
        _ => {}
    }
}

/// `value` with `secrets` replaced by `"[redacted]"` in every string (member names
/// included), as the trace writes what it redacts.
pub fn redacted(value: &Value, secrets: &[&str]) -> Value {
    let text = |s: &str| {
        secrets
            .iter()
            .fold(s.to_string(), |s, secret| s.replace(secret, "[redacted]"))
    };
    match value {
        Value::String(s) => Value::String(text(s)),
        Value::Array(items) => Value::Array(items.iter().map(|v| redacted(v, secrets)).collect()),
        Value::Object(members) => Value::Object(
            members
                .iter()
                .map(|(name, v)| (text(name), redacted(v, secrets)))
                .collect(),
        ),
        other => other.clone(),
    }
}
