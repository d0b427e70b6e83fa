//! The `proxy/successor` envelope and the proxy dialects that name it.
//! Reads and describes the wrapper only; the wrapped payload stays raw.

use serde::Deserialize;
use serde_json::value::RawValue;

/// How a proxy names the chain methods. The RFD says `proxy/*`; proxies built on older
/// SDKs say `_proxy/*`. Both kinds can sit in one chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    #[default]
    Rfd,
    Underscore,
}

impl Dialect {
    pub fn initialize_method(self) -> &'static str {
        match self {
            Dialect::Rfd => "proxy/initialize",
            Dialect::Underscore => "_proxy/initialize",
        }
    }

    pub fn successor_method(self) -> &'static str {
        match self {
            Dialect::Rfd => "proxy/successor",
            Dialect::Underscore => "_proxy/successor",
        }
    }

    /// The dialect a `proxy/initialize`-like method name is in, if it is one.
    pub fn of_initialize(method: &str) -> Option<Dialect> {
        match method {
            "proxy/initialize" => Some(Dialect::Rfd),
            "_proxy/initialize" => Some(Dialect::Underscore),
            _ => None,
        }
    }

    /// The dialect a `proxy/successor`-like method name is in, if it is one.
    pub fn of_successor(method: &str) -> Option<Dialect> {
        match method {
            "proxy/successor" => Some(Dialect::Rfd),
            "_proxy/successor" => Some(Dialect::Underscore),
            _ => None,
        }
    }
}

/// Metadata on the envelope itself (not inside the wrapped params). Proxies use either
/// spelling; both are carried along and written back under the name they came with.
#[derive(Debug, Clone, Copy, Default)]
pub struct EnvelopeMeta<'a> {
    pub meta: Option<&'a RawValue>,
    pub underscore_meta: Option<&'a RawValue>,
}

impl EnvelopeMeta<'_> {
    pub fn is_empty(&self) -> bool {
        self.meta.is_none() && self.underscore_meta.is_none()
    }
}

/// The wrapped message inside a `proxy/successor`.
#[derive(Debug, Clone, Copy)]
pub struct Wrapped<'a> {
    pub method: &'a str,
    pub params: Option<&'a RawValue>,
    pub meta: EnvelopeMeta<'a>,
}

#[derive(Deserialize)]
struct Members<'a> {
    #[serde(borrow)]
    method: &'a RawValue,
    #[serde(default, borrow)]
    params: Option<&'a RawValue>,
    #[serde(default, borrow)]
    meta: Option<&'a RawValue>,
    #[serde(default, borrow, rename = "_meta")]
    underscore_meta: Option<&'a RawValue>,
}

/// Reads the params of a `proxy/successor` message.
pub fn unwrap(params: Option<&RawValue>) -> Result<Wrapped<'_>, &'static str> {
    let params = params.ok_or("`proxy/successor` needs params")?;
    let m: Members<'_> = serde_json::from_str(params.get())
        .map_err(|_| "`proxy/successor` params must be an object with a string `method`")?;
    let method = m
        .method
        .get()
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .filter(|s| !s.contains('\\'))
        .ok_or("`proxy/successor` inner `method` must be a plain string")?;
    if let Some(p) = m.params
        && !matches!(p.get().as_bytes().first(), Some(b'{' | b'['))
    {
        return Err("`proxy/successor` inner `params` must be an object or an array");
    }
    Ok(Wrapped {
        method,
        params: m.params,
        meta: EnvelopeMeta {
            meta: m.meta,
            underscore_meta: m.underscore_meta,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_string()).unwrap()
    }

    #[test]
    fn unwraps_method_params_and_both_meta_spellings() {
        let p =
            raw(r#"{"method":"session/prompt","params":{"x":[1]},"_meta":{"t":1},"meta":{"u":2}}"#);
        let w = unwrap(Some(&p)).unwrap();
        assert_eq!(w.method, "session/prompt");
        assert_eq!(w.params.unwrap().get(), r#"{"x":[1]}"#);
        assert_eq!(w.meta.underscore_meta.unwrap().get(), r#"{"t":1}"#);
        assert_eq!(w.meta.meta.unwrap().get(), r#"{"u":2}"#);
    }

    #[test]
    fn params_are_optional() {
        let p = raw(r#"{"method":"ping"}"#);
        let w = unwrap(Some(&p)).unwrap();
        assert!(w.params.is_none());
        assert!(w.meta.is_empty());
    }

    #[test]
    fn rejects_malformed_envelopes() {
        assert!(unwrap(None).is_err());
        assert!(unwrap(Some(&raw(r#"{"params":{}}"#))).is_err());
        assert!(unwrap(Some(&raw(r#"{"method":7}"#))).is_err());
        assert!(unwrap(Some(&raw(r#"{"method":"m","params":1}"#))).is_err());
        assert!(unwrap(Some(&raw(r#"[1]"#))).is_err());
    }

    #[test]
    fn dialect_names() {
        assert_eq!(
            Dialect::of_initialize("_proxy/initialize"),
            Some(Dialect::Underscore)
        );
        assert_eq!(Dialect::of_successor("proxy/successor"), Some(Dialect::Rfd));
        assert_eq!(Dialect::of_successor("initialize"), None);
        assert_eq!(Dialect::Underscore.successor_method(), "_proxy/successor");
    }
}
