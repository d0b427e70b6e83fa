//! The top-level members of a JSON object that is already known to be valid (the text of a
//! `RawValue`), found by its structure alone: nothing is validated or decoded a second time.
//!
//! A frame's envelope parse validates the whole line once; reading the object inside its
//! `params` again with serde_json would validate the payload again (the costly part of a
//! 1 MiB prompt). Here strings are skipped with `memchr` and nesting is counted on the
//! brackets of one kind, which valid JSON makes enough.

use std::borrow::Cow;

use memchr::{memchr2, memchr3};
use serde_json::value::RawValue;

/// Each member of `object` as (its name, decoded; its value), in order; `None` when the
/// text is not an object. `object` must be valid JSON.
pub(crate) fn of(object: &RawValue) -> Option<Vec<(Cow<'_, str>, &RawValue)>> {
    let text = object.get();
    let bytes = text.as_bytes();
    let mut at = skip_space(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    at += 1;
    let mut members = Vec::new();
    loop {
        at = skip_space(bytes, at);
        match bytes.get(at)? {
            b'}' => return Some(members),
            b',' => {
                at += 1;
                continue;
            }
            b'"' => {}
            _ => return None,
        }
        let key_end = skip_string(bytes, at);
        let name = name(&text[at..key_end])?;
        at = skip_space(bytes, key_end);
        if bytes.get(at) != Some(&b':') {
            return None;
        }
        let start = skip_space(bytes, at + 1);
        let end = skip_value(bytes, start);
        members.push((name, raw(&text[start..end])));
        at = end;
    }
}

/// A member name (with its quotes) as the string it means.
fn name(quoted: &str) -> Option<Cow<'_, str>> {
    let inner = &quoted[1..quoted.len() - 1];
    if !inner.contains('\\') {
        return Some(Cow::Borrowed(inner));
    }
    serde_json::from_str::<String>(quoted).ok().map(Cow::Owned)
}

/// The slice as a `RawValue`, without copying or validating it again. `json` must be one
/// whole JSON value, already validated (here: inside a `RawValue`; in [`crate::scan`]: a
/// value of a line the pass accepted).
pub(crate) fn raw(json: &str) -> &RawValue {
    // SAFETY: `RawValue` is `#[repr(transparent)]` over `str` (serde_json does this very
    // cast in its private `from_borrowed`), and `json` is one whole valid JSON value, as
    // every `RawValue` must be.
    unsafe { std::mem::transmute::<&str, &RawValue>(json) }
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(at) {
        at += 1;
    }
    at
}

/// The index after the string opening at `at`.
fn skip_string(bytes: &[u8], at: usize) -> usize {
    let mut at = at + 1;
    while let Some(found) = memchr2(b'"', b'\\', &bytes[at..]) {
        let j = at + found;
        if bytes[j] == b'\\' {
            at = j + 2;
        } else {
            return j + 1;
        }
    }
    bytes.len()
}

/// The index after the value starting at `at`.
fn skip_value(bytes: &[u8], at: usize) -> usize {
    match bytes.get(at) {
        Some(b'"') => skip_string(bytes, at),
        Some(b'{') => skip_nested(bytes, at, b'{', b'}'),
        Some(b'[') => skip_nested(bytes, at, b'[', b']'),
        _ => {
            let mut end = at;
            while let Some(b) = bytes.get(end) {
                if matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                    break;
                }
                end += 1;
            }
            end
        }
    }
}

/// The index after the object or array opening at `at`. In valid JSON brackets of the other
/// kind nest properly inside, so only this kind (outside strings) needs counting.
fn skip_nested(bytes: &[u8], at: usize, open: u8, close: u8) -> usize {
    let mut depth = 0usize;
    let mut at = at;
    while let Some(found) = memchr3(b'"', open, close, &bytes[at..]) {
        let j = at + found;
        match bytes[j] {
            b'"' => at = skip_string(bytes, j),
            b if b == open => {
                depth += 1;
                at = j + 1;
            }
            _ => {
                depth -= 1;
                at = j + 1;
                if depth == 0 {
                    return at;
                }
            }
        }
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn members(text: &str) -> Option<Vec<(String, String)>> {
        let raw = RawValue::from_string(text.to_string()).unwrap();
        of(&raw).map(|m| {
            m.into_iter()
                .map(|(k, v)| (k.into_owned(), v.get().to_string()))
                .collect()
        })
    }

    #[test]
    fn members_in_order_with_their_exact_text() {
        let text = r#" { "method" : "a" , "params":{"x":[1,{"]":"}"}],"y":"\"{"} ,"\u005fmeta":null,"n":-1.5e3,"t":true}"#;
        assert_eq!(
            members(text).unwrap(),
            vec![
                ("method".into(), r#""a""#.into()),
                ("params".into(), r#"{"x":[1,{"]":"}"}],"y":"\"{"}"#.into()),
                ("_meta".into(), "null".into()),
                ("n".into(), "-1.5e3".into()),
                ("t".into(), "true".into()),
            ]
        );
        assert_eq!(members("{}").unwrap(), vec![]);
        assert_eq!(members(" { } ").unwrap(), vec![]);
        assert_eq!(members("[1]"), None);
        assert_eq!(members(r#""s""#), None);
    }

    proptest! {
        /// Every object serde_json reads gets the same members here, byte for byte.
        #[test]
        fn the_same_members_as_serde_json(value in json_value(3)) {
            let object = serde_json::json!({ "a": value, "b\n": [value.clone()], "c": 1 });
            let text = serde_json::to_string_pretty(&object).unwrap();
            let names: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(&text).unwrap();
            let raw: std::collections::BTreeMap<String, Box<RawValue>> =
                serde_json::from_str(&text).unwrap();
            let expected: Vec<(String, String)> = names
                .keys()
                .map(|k| (k.clone(), raw[k].get().to_string()))
                .collect();
            prop_assert_eq!(members(&text).unwrap(), expected);
        }
    }

    fn json_value(depth: u32) -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            "[ -~\\n\"\\\\{}\\[\\]é]{0,12}".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(depth, 32, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
                prop::collection::btree_map("[a-z\"{]{0,3}", inner, 0..4)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        })
    }
}
