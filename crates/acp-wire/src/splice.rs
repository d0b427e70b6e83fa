//! Lossless edits of one member deep inside a JSON object: every other member keeps its
//! bytes and order. For the few messages the conductor must rewrite (initialize, session setup).

use std::fmt;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// The members of one JSON object in document order, values kept raw.
pub struct Members<'a>(pub Vec<(String, &'a RawValue)>);

impl<'de> serde::Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut members = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, &'de RawValue>()? {
                    members.push((k, v));
                }
                Ok(Members(members))
            }
        }
        d.deserialize_map(V)
    }
}

impl<'a> Members<'a> {
    /// Reads an object's members; `None` if `raw` is not an object.
    pub fn of(raw: &'a RawValue) -> Option<Members<'a>> {
        serde_json::from_str(raw.get()).ok()
    }

    pub fn get(&self, key: &str) -> Option<&'a RawValue> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }
}

/// Returns `object` with the member at `path` set to the JSON text `value`, creating
/// intermediate objects where missing (or where a non-object stands in the way).
///
/// ```
/// use acp_wire::{RawValue, splice::set_path};
/// let raw = RawValue::from_string(r#"{"b":1, "a":{"x" : 2}}"#.into()).unwrap();
/// assert_eq!(set_path(&raw, &["a", "y"], "true"), r#"{"b":1,"a":{"x":2,"y":true}}"#);
/// ```
pub fn set_path(object: &RawValue, path: &[&str], value: &str) -> String {
    let mut out = String::with_capacity(object.get().len() + value.len() + 16);
    match Members::of(object) {
        Some(members) => write_with(&mut out, &members, path, value),
        None => write_fresh(&mut out, path, value),
    }
    out
}

fn write_with(out: &mut String, members: &Members<'_>, path: &[&str], value: &str) {
    let (key, rest) = path.split_first().expect("non-empty path");
    out.push('{');
    let mut replaced = false;
    for (i, (k, v)) in members.0.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_key(out, k);
        if k == key && !replaced {
            replaced = true;
            write_value(out, Some(v), rest, value);
        } else {
            out.push_str(v.get());
        }
    }
    if !replaced {
        if !members.0.is_empty() {
            out.push(',');
        }
        push_key(out, key);
        write_value(out, None, rest, value);
    }
    out.push('}');
}

fn write_value(out: &mut String, current: Option<&RawValue>, rest: &[&str], value: &str) {
    if rest.is_empty() {
        out.push_str(value);
        return;
    }
    match current.and_then(Members::of) {
        Some(members) => write_with(out, &members, rest, value),
        None => write_fresh(out, rest, value),
    }
}

fn write_fresh(out: &mut String, path: &[&str], value: &str) {
    match path.split_first() {
        None => out.push_str(value),
        Some((key, rest)) => {
            out.push('{');
            push_key(out, key);
            write_fresh(out, rest, value);
            out.push('}');
        }
    }
}

fn push_key(out: &mut String, key: &str) {
    out.push_str(&serde_json::to_string(key).expect("string serializes"));
    out.push(':');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_string()).unwrap()
    }

    #[test]
    fn replaces_existing_member_keeping_everything_else() {
        let r = raw(
            r#"{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"mcpCapabilities":{"http":false,"acp":false,"x":[1, 2]}},"x-extra":{"big":9007199254740993,"f":1e400}}"#,
        );
        assert_eq!(
            set_path(&r, &["agentCapabilities", "mcpCapabilities", "acp"], "true"),
            r#"{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"mcpCapabilities":{"http":false,"acp":true,"x":[1, 2]}},"x-extra":{"big":9007199254740993,"f":1e400}}"#
        );
    }

    #[test]
    fn creates_missing_levels() {
        let r = raw(r#"{"protocolVersion":1}"#);
        assert_eq!(
            set_path(&r, &["agentCapabilities", "mcpCapabilities", "acp"], "true"),
            r#"{"protocolVersion":1,"agentCapabilities":{"mcpCapabilities":{"acp":true}}}"#
        );
        let r = raw(r#"{"agentCapabilities":null}"#);
        assert_eq!(
            set_path(&r, &["agentCapabilities", "mcpCapabilities", "acp"], "true"),
            r#"{"agentCapabilities":{"mcpCapabilities":{"acp":true}}}"#
        );
        assert_eq!(set_path(&raw("{}"), &["a"], "1"), r#"{"a":1}"#);
        assert_eq!(set_path(&raw("[1]"), &["a"], "1"), r#"{"a":1}"#);
    }

    #[test]
    fn keys_with_escapes_survive_semantically() {
        let r = raw(r#"{"q\"k":1,"a":{}}"#);
        let out = set_path(&r, &["a", "b"], "2");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["q\"k"], 1);
        assert_eq!(v["a"]["b"], 2);
    }
}
