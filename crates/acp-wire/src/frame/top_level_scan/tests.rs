//! The top-level scan against hand-written cases, under every way of cutting a line into
//! pieces, and against serde_json on generated objects.

use std::collections::BTreeMap;

use serde_json::value::RawValue;

use super::*;

fn found(id: Option<&str>, method: bool, outcome: bool) -> TopLevel {
    TopLevel {
        id: id.map(str::to_string),
        method,
        outcome,
    }
}

/// The scan of `line` fed in the pieces that `cuts` (ascending offsets) make.
fn scan_cut(line: &[u8], cuts: &[usize]) -> TopLevel {
    let mut scan = TopLevelScan::new();
    let mut from = 0;
    for &cut in cuts {
        scan.feed(&line[from..cut]);
        from = cut;
    }
    scan.feed(&line[from..]);
    scan.finish()
}

/// Every single cut, every pair of cuts for short lines, and one byte at a time, all agree
/// with `expected`.
fn every_split(line: &[u8], expected: &TopLevel) {
    let show = String::from_utf8_lossy(line);
    assert_eq!(&TopLevel::of(line), expected, "whole: {show}");
    for cut in 0..=line.len() {
        assert_eq!(&scan_cut(line, &[cut]), expected, "cut at {cut}: {show}");
    }
    if line.len() <= 96 {
        for first in 0..=line.len() {
            for second in first..=line.len() {
                let got = scan_cut(line, &[first, second]);
                assert_eq!(&got, expected, "cuts at {first} and {second}: {show}");
            }
        }
    }
    let bytes: Vec<usize> = (1..line.len()).collect();
    assert_eq!(&scan_cut(line, &bytes), expected, "byte by byte: {show}");
}

#[test]
fn finds_the_id_wherever_it_is_at_the_top_level() {
    let cases: &[(&[u8], TopLevel)] = &[
        (
            br#"{"jsonrpc":"2.0","id":7,"method":"m","params":{}}"#,
            found(Some("7"), true, false),
        ),
        (
            br#"{"jsonrpc":"2.0","method":"m","params":{"id":5,"x":["}",{"id":6}]},"id":7}"#,
            found(Some("7"), true, false),
        ),
        (
            br#"{"params":[{"a":"\"}]{["}],"id":"a\"}b","method":"m"}"#,
            found(Some(r#""a\"}b""#), true, false),
        ),
        (
            br#"{ "id" : -12 , "result" : null }"#,
            found(Some("-12"), false, true),
        ),
        (
            b"{\n\t\"error\":{\"code\":1},\r\n\"id\":9007199254740993}",
            found(Some("9007199254740993"), false, true),
        ),
        (br#"{"id":1.5e3}"#, found(Some("1.5e3"), false, false)),
        (
            br#"{"id":"","method":"m"}"#,
            found(Some(r#""""#), true, false),
        ),
    ];
    for (line, expected) in cases {
        every_split(line, expected);
    }
}

#[test]
fn member_names_are_compared_decoded() {
    let cases: &[(&[u8], TopLevel)] = &[
        (
            br#"{"\u0069d":3,"method":"m"}"#,
            found(Some("3"), true, false),
        ),
        (
            br#"{"\u0069\u0064":"x"}"#,
            found(Some(r#""x""#), false, false),
        ),
        (br#"{"i\u0044":1}"#, found(None, false, false)),
        (br#"{"m\u0065thod":"m"}"#, found(None, true, false)),
        (
            br#"{"\u0072esult":1,"id":2}"#,
            found(Some("2"), false, true),
        ),
        (br#"{"\/id":1}"#, found(None, false, false)),
        (
            br#"{"i\"d":1,"methods":1,"errors":1}"#,
            found(None, false, false),
        ),
        ("{\"ïd\":1}".as_bytes(), found(None, false, false)),
        (br#"{"\u00efd":1}"#, found(None, false, false)),
        (
            br#"{"\ud83d\ude00":1,"id":4}"#,
            found(Some("4"), false, false),
        ),
        (br#"{"ID":1,"Id":2}"#, found(None, false, false)),
    ];
    for (line, expected) in cases {
        every_split(line, expected);
    }
}

#[test]
fn an_id_is_trusted_only_whole_single_and_a_string_or_number() {
    let cases: &[(&[u8], TopLevel)] = &[
        (br#"{"id":1,"id":2,"method":"m"}"#, found(None, true, false)),
        (br#"{"id":1,"\u0069d":1}"#, found(None, false, false)),
        (br#"{"id":{"a":1},"method":"m"}"#, found(None, true, false)),
        (br#"{"id":[1],"method":"m"}"#, found(None, true, false)),
        (br#"{"id":true}"#, found(None, false, false)),
        (br#"{"id":null,"result":1}"#, found(None, false, true)),
        (br#"{"id":1x}"#, found(None, false, false)),
        (br#"{"id":01}"#, found(None, false, false)),
        (br#"{"id":12"#, found(None, false, false)),
        (br#"{"id":"ab"#, found(None, false, false)),
        (br#"{"id":"a\"#, found(None, false, false)),
        (b"{\"id\":\"\xff\"}", found(None, false, false)),
    ];
    for (line, expected) in cases {
        every_split(line, expected);
    }
}

#[test]
fn an_id_longer_than_the_cap_is_no_id() {
    let at_cap = format!(r#""{}""#, "a".repeat(MAX_ID_BYTES - 2));
    let line = format!(r#"{{"id":{at_cap},"method":"m"}}"#);
    assert_eq!(
        TopLevel::of(line.as_bytes()),
        found(Some(&at_cap), true, false)
    );
    let over = format!(r#""{}""#, "a".repeat(MAX_ID_BYTES - 1));
    let line = format!(r#"{{"id":{over},"method":"m"}}"#);
    assert_eq!(TopLevel::of(line.as_bytes()), found(None, true, false));
    let digits = "7".repeat(MAX_ID_BYTES + 1);
    let line = format!(r#"{{"id":{digits}}}"#);
    assert_eq!(TopLevel::of(line.as_bytes()), found(None, false, false));
}

#[test]
fn what_came_before_a_broken_byte_is_kept() {
    let cases: &[(&[u8], TopLevel)] = &[
        (
            br#"{"id":1,"method":"m","params":@@@"#,
            found(Some("1"), true, false),
        ),
        (
            br#"{"id":1,"params":{"x":"unterminated"#,
            found(Some("1"), false, false),
        ),
        (br#"{"a":@,"id":1}"#, found(None, false, false)),
        (br#"{"id" 1}"#, found(None, false, false)),
        (br#"{"id":1 "method":"m"}"#, found(Some("1"), false, false)),
        (br#"{"\x":1,"id":1}"#, found(None, false, false)),
        (br#"{"\u00zz":1,"id":1}"#, found(None, false, false)),
        (
            br#"{"id":2}{"id":3,"method":"m"}"#,
            found(Some("2"), false, false),
        ),
        (
            b"{\"id\":2,\"method\":\"m\"}\x00",
            found(Some("2"), true, false),
        ),
        (
            b"{\"id\":3,\"params\":{\"t\":\"caf\xe9 \xff\"},\"method\":\"m\"}",
            found(Some("3"), true, false),
        ),
    ];
    for (line, expected) in cases {
        every_split(line, expected);
    }
}

#[test]
fn only_an_object_has_a_top_level() {
    for line in [
        &b""[..],
        b"   ",
        b"garbage",
        b"42",
        br#""id""#,
        br#"[{"id":1,"method":"m"}]"#,
        b"\x00{\"id\":1}",
        b"\xef{\"id\":1}",
        b"\xef\xbb{\"id\":1}",
        b" \xef\xbb\xbf{\"id\":1}",
    ] {
        every_split(line, &TopLevel::default());
    }
}

#[test]
fn a_leading_byte_order_mark_is_skipped() {
    every_split(
        b"\xef\xbb\xbf {\"id\":1,\"method\":\"m\"}",
        &found(Some("1"), true, false),
    );
}

#[test]
fn shapes() {
    assert_eq!(found(Some("1"), true, true).shape(), Shape::Call);
    assert_eq!(found(Some("1"), false, true).shape(), Shape::Response);
    assert_eq!(found(Some("1"), false, false).shape(), Shape::Unknown);
}

/// A small deterministic generator (xorshift), so that failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

fn ws(rng: &mut Rng) -> &'static str {
    rng.pick(&["", "", "", " ", "\t", "\r\n ", "  "])
}

fn string(rng: &mut Rng) -> String {
    let parts = [
        "a",
        "id",
        "method",
        "\\\"",
        "\\\\",
        "}",
        "]",
        "{",
        "[",
        ",",
        ":",
        "\\u0069d",
        "\\n",
        "é",
        "\\ud83d\\ude00",
        "\\/",
    ];
    let mut s = String::from("\"");
    for _ in 0..rng.below(5) {
        s.push_str(rng.pick(&parts));
    }
    s.push('"');
    s
}

fn value(rng: &mut Rng, depth: usize) -> String {
    let pick = if depth > 3 {
        rng.below(4)
    } else {
        rng.below(6)
    };
    match pick {
        0 => string(rng),
        1 => rng
            .pick(&[
                "0",
                "-1",
                "42",
                "1.5",
                "2e10",
                "-0.25E-3",
                "9007199254740993",
            ])
            .to_string(),
        2 => rng.pick(&["true", "false", "null"]).to_string(),
        3 => string(rng),
        4 => {
            let items: Vec<String> = (0..rng.below(4))
                .map(|_| format!("{}{}{}", ws(rng), value(rng, depth + 1), ws(rng)))
                .collect();
            format!("[{}]", items.join(","))
        }
        _ => {
            let members: Vec<String> = (0..rng.below(4))
                .map(|_| {
                    let key = string(rng);
                    format!(
                        "{}{key}{}:{}{}",
                        ws(rng),
                        ws(rng),
                        ws(rng),
                        value(rng, depth + 1)
                    )
                })
                .collect();
            format!("{{{}}}", members.join(","))
        }
    }
}

/// A top-level object whose member names decode to distinct names.
fn object(rng: &mut Rng) -> String {
    let names = [
        "\"id\"",
        "\"\\u0069d\"",
        "\"i\\u0064\"",
        "\"method\"",
        "\"m\\u0065thod\"",
        "\"result\"",
        "\"error\"",
        "\"params\"",
        "\"jsonrpc\"",
        "\"idx\"",
        "\"ID\"",
        "\"\\u00efd\"",
        "\"_meta\"",
    ];
    let mut used = Vec::new();
    let mut members = Vec::new();
    for _ in 0..rng.below(6) {
        let name = rng.pick(&names);
        let decoded: String = serde_json::from_str(name).unwrap();
        if used.contains(&decoded) {
            continue;
        }
        used.push(decoded);
        let value = if name.contains('i') && name.contains('d') && rng.below(2) == 0 {
            // Ids of every kind, often.
            match rng.below(4) {
                0 => string(rng),
                1 => rng.pick(&["7", "-3", "0", "1.5"]).to_string(),
                _ => value(rng, 1),
            }
        } else {
            value(rng, 1)
        };
        members.push(format!(
            "{}{name}{}:{}{value}{}",
            ws(rng),
            ws(rng),
            ws(rng),
            ws(rng)
        ));
    }
    format!("{}{{{}}}{}", ws(rng), members.join(","), ws(rng))
}

/// What serde_json says the scan should find.
fn expected(line: &str) -> TopLevel {
    let members: BTreeMap<String, Box<RawValue>> =
        serde_json::from_str(line).unwrap_or_else(|e| panic!("generated bad JSON ({e}): {line}"));
    let id = members
        .get("id")
        .map(|raw| raw.get().to_string())
        .filter(|text| matches!(text.as_bytes()[0], b'"' | b'-' | b'0'..=b'9'))
        .filter(|text| text.len() <= MAX_ID_BYTES);
    TopLevel {
        id,
        method: members.contains_key("method"),
        outcome: members.contains_key("result") || members.contains_key("error"),
    }
}

#[test]
fn agrees_with_serde_json_on_generated_objects_cut_anywhere() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut with_id, mut escaped_id, mut calls, mut responses) = (0, 0, 0, 0);
    for _ in 0..3000 {
        let line = object(&mut rng);
        let want = expected(&line);
        with_id += usize::from(want.id.is_some());
        escaped_id += usize::from(want.id.is_some() && line.contains(r#"\u0069d":"#));
        calls += usize::from(want.method);
        responses += usize::from(want.outcome && !want.method);
        assert_eq!(TopLevel::of(line.as_bytes()), want, "{line}");
        let bytes = line.as_bytes();
        for _ in 0..8 {
            let mut cuts: Vec<usize> = (0..rng.below(6))
                .map(|_| rng.below(bytes.len() + 1))
                .collect();
            cuts.sort_unstable();
            assert_eq!(scan_cut(bytes, &cuts), want, "cuts {cuts:?}: {line}");
        }
    }
    // The generator covers what it is for.
    assert!(
        with_id > 300 && escaped_id > 30,
        "{with_id} ids, {escaped_id} escaped"
    );
    assert!(
        calls > 300 && responses > 300,
        "{calls} calls, {responses} responses"
    );
}
