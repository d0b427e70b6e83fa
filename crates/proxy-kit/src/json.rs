//! Small lossless JSON edits for hooks that change a message: replace one member or build an
//! array from raw items, keeping every other byte. Knows JSON only, not ACP.

use acp_wire::RawValue;
use serde::Serialize;

pub use acp_wire::splice::Members;

/// Serializes `value` to raw JSON text.
///
/// # Panics
/// If `value` cannot be represented as JSON (a map with non-string keys, or a `Serialize`
/// impl that fails): a programming error, as with `serde_json::json!`.
pub fn to_raw(value: &impl Serialize) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).expect("value must serialize to JSON")
}

/// `object` with the member at `path` set to `value`; every other member keeps its bytes and
/// order. Missing intermediate objects are created.
///
/// ```
/// use proxy_kit::{RawValue, json::set_member};
/// let params = RawValue::from_string(r#"{"sessionId":"s1","n":1.50}"#.into()).unwrap();
/// let text = RawValue::from_string(r#""hi""#.into()).unwrap();
/// assert_eq!(set_member(&params, &["text"], &text).get(), r#"{"sessionId":"s1","n":1.50,"text":"hi"}"#);
/// ```
pub fn set_member(object: &RawValue, path: &[&str], value: &RawValue) -> Box<RawValue> {
    let text = acp_wire::splice::set_path(object, path, value.get());
    RawValue::from_string(text).expect("splicing valid JSON yields valid JSON")
}

/// The items of a JSON array, each kept raw; `None` if `array` is not an array.
pub fn array_items(array: &RawValue) -> Option<Vec<&RawValue>> {
    serde_json::from_str(array.get()).ok()
}

/// A JSON array made of raw items, in order.
pub fn array_of<'a>(items: impl IntoIterator<Item = &'a RawValue>) -> Box<RawValue> {
    let mut text = String::from("[");
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        text.push_str(item.get());
    }
    text.push(']');
    RawValue::from_string(text).expect("an array of JSON values is JSON")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_string()).unwrap()
    }

    #[test]
    fn array_round_trip_keeps_item_bytes() {
        let a = raw(r#"[ {"b":1, "a":2.50}, "x\u0041", 1e400 ]"#);
        let items = array_items(&a).unwrap();
        assert_eq!(items.len(), 3);
        assert_eq!(
            array_of(items).get(),
            r#"[{"b":1, "a":2.50},"x\u0041",1e400]"#
        );
        assert_eq!(array_of([]).get(), "[]");
        assert!(array_items(&raw("{}")).is_none());
    }

    #[test]
    fn set_member_replaces_in_place() {
        let o = raw(r#"{"sessionId":"s","prompt":[1],"z":9007199254740993}"#);
        assert_eq!(
            set_member(&o, &["prompt"], &raw("[0,1]")).get(),
            r#"{"sessionId":"s","prompt":[0,1],"z":9007199254740993}"#
        );
    }
}
