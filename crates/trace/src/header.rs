//! The first line of a trace: the format, when the run started, which conductor, and the
//! chain's components in order, as the records that follow name them.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

/// One component of the chain, at the position of its index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Component {
    pub name: String,
    /// `editor`, `parent` (proxy mode), `proxy` or `agent`.
    pub role: &'static str,
    /// For proxies: `native`, `wasm` or `remote`.
    pub kind: Option<&'static str>,
}

pub const FORMAT: &str = "acp-conductor-trace";
pub const VERSION: u64 = 1;

/// The header line (without its newline).
pub fn header(started: SystemTime, components: &[Component], payloads: bool) -> Vec<u8> {
    let components: Vec<Value> = components
        .iter()
        .enumerate()
        .map(|(position, c)| {
            let mut entry = json!({ "name": c.name, "role": c.role, "position": position });
            if let Some(kind) = c.kind {
                entry["kind"] = json!(kind);
            }
            entry
        })
        .collect();
    let header = json!({
        "type": "header",
        "format": FORMAT,
        "version": VERSION,
        "startedAt": rfc3339(started),
        "conductor": concat!("acp-conductor ", env!("CARGO_PKG_VERSION")),
        "components": components,
        "payloads": payloads,
        "pid": std::process::id(),
    });
    serde_json::to_vec(&header).expect("a JSON value serializes")
}

/// `2026-11-25T10:10:00.123Z`.
fn rfc3339(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, day_secs) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        day_secs / 3600,
        day_secs / 60 % 60,
        day_secs % 60,
        since.subsec_millis()
    )
}

/// The Gregorian date `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn times_are_rfc3339_utc_with_milliseconds() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let leap_day = UNIX_EPOCH + Duration::from_millis(951_782_400_000 + 3_723_456);
        assert_eq!(rfc3339(leap_day), "2000-02-29T01:02:03.456Z");
        let later = UNIX_EPOCH + Duration::from_secs(1_795_604_400);
        assert_eq!(rfc3339(later), "2026-11-25T11:00:00.000Z");
    }

    #[test]
    fn the_header_lists_the_chain_in_order() {
        let components = [
            Component {
                name: "editor".into(),
                role: "editor",
                kind: None,
            },
            Component {
                name: "guard".into(),
                role: "proxy",
                kind: Some("wasm"),
            },
            Component {
                name: "claude".into(),
                role: "agent",
                kind: None,
            },
        ];
        let line = header(UNIX_EPOCH, &components, false);
        let value: Value = serde_json::from_slice(&line).unwrap();
        assert!(line.starts_with(b"{\"type\":\"header\",\"format\":\"acp-conductor-trace\","));
        assert_eq!(value["version"], 1);
        assert_eq!(value["payloads"], false);
        assert_eq!(
            value["components"],
            json!([
                {"name": "editor", "role": "editor", "position": 0},
                {"name": "guard", "role": "proxy", "position": 1, "kind": "wasm"},
                {"name": "claude", "role": "agent", "position": 2},
            ])
        );
    }
}
