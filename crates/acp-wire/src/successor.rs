//! The `proxy/successor` envelope and the proxy dialects that name it.
//! Reads and describes the wrapper only; the wrapped payload stays raw.

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

/// The members of a frame's `params` that a `proxy/successor` wrapper has, as the frame's
/// one validating pass found them ([`crate::parse_frame`]). The default is "not found":
/// [`unwrap_found`] then reads the params itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct WrapperMembers<'a>(Option<Slots<'a>>);

#[derive(Debug, Clone, Copy, Default)]
struct Slots<'a> {
    method: Option<&'a RawValue>,
    params: Option<&'a RawValue>,
    meta: Option<&'a RawValue>,
    underscore_meta: Option<&'a RawValue>,
    /// One of the names came twice.
    repeated: bool,
}

impl<'a> WrapperMembers<'a> {
    /// Whether the found `method` is a string written with escapes: a wrapper whose inner method
    /// must be decoded first ([`crate::escaped_method`]). Looks at that one member only.
    pub fn method_has_escapes(&self) -> bool {
        self.0
            .and_then(|slots| slots.method)
            .is_some_and(|method| method.get().contains('\\'))
    }

    pub(crate) fn found(
        method: Option<&'a RawValue>,
        params: Option<&'a RawValue>,
        meta: Option<&'a RawValue>,
        underscore_meta: Option<&'a RawValue>,
        repeated: bool,
    ) -> Self {
        WrapperMembers(Some(Slots {
            method,
            params,
            meta,
            underscore_meta,
            repeated,
        }))
    }
}

const NOT_AN_OBJECT: &str = "`proxy/successor` params must be an object with a string `method`";

/// Reads the params of a `proxy/successor` message. The params were validated with the
/// frame they came in, so their members are found by structure only ([`crate::members`]):
/// a wrapped payload is not scanned a second time.
pub fn unwrap(params: Option<&RawValue>) -> Result<Wrapped<'_>, &'static str> {
    unwrap_found(params, WrapperMembers::default())
}

/// [`unwrap`], with the members the frame's pass already found (`found`, from
/// [`crate::parse_frame`] of the same frame): then the params are not read at all.
pub fn unwrap_found<'a>(
    params: Option<&'a RawValue>,
    found: WrapperMembers<'a>,
) -> Result<Wrapped<'a>, &'static str> {
    let params = params.ok_or("`proxy/successor` needs params")?;
    let slots = match found.0 {
        Some(slots) => slots,
        None => read_slots(params)?,
    };
    if slots.repeated {
        return Err(NOT_AN_OBJECT);
    }
    let Slots {
        method,
        params: inner,
        meta,
        underscore_meta,
        ..
    } = slots;
    let method = method
        .ok_or(NOT_AN_OBJECT)?
        .get()
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .filter(|s| !s.contains('\\'))
        .ok_or("`proxy/successor` inner `method` must be a plain string")?;
    let inner = present(inner);
    if let Some(p) = inner
        && !matches!(p.get().as_bytes().first(), Some(b'{' | b'['))
    {
        return Err("`proxy/successor` inner `params` must be an object or an array");
    }
    Ok(Wrapped {
        method,
        params: inner,
        meta: EnvelopeMeta {
            meta: present(meta),
            underscore_meta: present(underscore_meta),
        },
    })
}

/// The wrapper's members, found by structure in params known to be valid JSON.
fn read_slots(params: &RawValue) -> Result<Slots<'_>, &'static str> {
    let members = crate::members::of(params).ok_or(NOT_AN_OBJECT)?;
    let mut slots = Slots::default();
    for (name, value) in members {
        let slot = match &*name {
            "method" => &mut slots.method,
            "params" => &mut slots.params,
            "meta" => &mut slots.meta,
            "_meta" => &mut slots.underscore_meta,
            _ => continue,
        };
        if slot.replace(value).is_some() {
            return Err(NOT_AN_OBJECT);
        }
    }
    Ok(slots)
}

/// `null` is no value, as for an optional member read with serde.
fn present(value: Option<&RawValue>) -> Option<&RawValue> {
    value.filter(|v| v.get() != "null")
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
        assert!(unwrap(Some(&raw(r#"["m"]"#))).is_err());
        assert!(unwrap(Some(&raw(r#"{"method":"a","method":"b"}"#))).is_err());
        assert!(unwrap(Some(&raw(r#"{"method":null}"#))).is_err());
        assert!(unwrap(Some(&raw(r#"{"method":"a\"b"}"#))).is_err());
    }

    #[test]
    fn null_members_are_absent_and_escaped_names_are_read() {
        let p =
            raw(r#"{ "\u006dethod" : "m", "params" : null, "_meta": null, "x": {"method": 1} }"#);
        let w = unwrap(Some(&p)).unwrap();
        assert_eq!(w.method, "m");
        assert!(w.params.is_none());
        assert!(w.meta.is_empty());
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
