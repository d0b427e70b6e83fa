//! Request ids: opaque JSON text that must come back byte-for-byte, plus a normalized
//! key for matching an id written two ways (`$/cancel_request` naming `"\u0061"` vs `"a"`).

use serde_json::value::RawValue;

/// A comparison key for a JSON-RPC id. Strings compare by their decoded contents,
/// numbers by their literal text (`1` and `1.0` are different ids on the wire).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum IdKey {
    Str(Box<str>),
    Num(Box<str>),
    Null,
}

impl IdKey {
    pub fn of(raw: &RawValue) -> IdKey {
        let text = raw.get();
        if text.starts_with('"') {
            match crate::envelope::decode_str(raw) {
                Some(s) => IdKey::Str(s.into()),
                None => IdKey::Num(text.into()),
            }
        } else if text == "null" {
            IdKey::Null
        } else {
            IdKey::Num(text.into())
        }
    }
}

/// Reads back an id the conductor itself chose on a link (always a plain `u64`).
pub fn own_id(raw: &RawValue) -> Option<u64> {
    raw.get().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_string()).unwrap()
    }

    #[test]
    fn strings_compare_decoded_numbers_literally() {
        assert_eq!(IdKey::of(&raw(r#""a""#)), IdKey::of(&raw(r#""\u0061""#)));
        assert_ne!(IdKey::of(&raw("0")), IdKey::of(&raw(r#""0""#)));
        assert_ne!(IdKey::of(&raw("1")), IdKey::of(&raw("1.0")));
        assert_eq!(IdKey::of(&raw("null")), IdKey::Null);
        assert_eq!(
            IdKey::of(&raw("9007199254740993")),
            IdKey::Num("9007199254740993".into())
        );
    }

    #[test]
    fn own_ids_round_trip() {
        assert_eq!(own_id(&raw("0")), Some(0));
        assert_eq!(own_id(&raw("18446744073709551615")), Some(u64::MAX));
        assert_eq!(own_id(&raw(r#""1""#)), None);
        assert_eq!(own_id(&raw("-1")), None);
    }
}
