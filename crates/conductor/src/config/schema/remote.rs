//! The remote keys of the schema: `url` and `headers` in `[agent]` and `[[proxy]]`, for a
//! component reached over ACP's Streamable HTTP or WebSocket transport. Never connects.

use std::ops::Range;

use toml::de::DeTable;

use super::super::RemoteSpec;
use super::{Scope, Validator, Value, entries};
use acp_remote::protocol::{SCHEMES, Transport};

/// Keys that only mean something for a component the conductor starts itself.
const LAUNCH_ONLY_KEYS: &[&str] = &["args", "env", "cwd", "sandbox"];

/// Headers the transport sets itself: a configured one would break the connection or let a
/// configuration pose as the protocol.
const TRANSPORT_HEADERS: &[&str] = &[
    "host",
    "connection",
    "upgrade",
    "content-type",
    "content-length",
    "transfer-encoding",
    "accept",
    "acp-connection-id",
    "acp-session-id",
];

impl Validator<'_, '_, '_> {
    /// `url` and `headers` of a table (`place` names it in errors, e.g. `[agent]`); every
    /// key that only a started component has is refused. All are checked even when the name
    /// is missing, so that their mistakes are reported in the same pass.
    pub(super) fn remote_launch(
        &mut self,
        table: &DeTable<'_>,
        place: &str,
        name: Option<String>,
        scope: Scope,
    ) -> Option<RemoteSpec> {
        for (key, _) in entries(table) {
            let key_name: &str = key.get_ref();
            if LAUNCH_ONLY_KEYS.contains(&key_name) {
                self.error(
                    key.span(),
                    format!(
                        "`{key_name}` in {place} applies only to a component the conductor \
                         starts itself, not to one reached at `url`"
                    ),
                );
            }
        }
        let url = table.get("url").and_then(|value| self.url(value, scope));
        let headers = match table.get("headers") {
            Some(value) => self.headers(value, scope),
            None => Some(Vec::new()),
        };
        Some(RemoteSpec {
            name: name?,
            url: url?,
            headers: headers?,
        })
    }

    /// `headers` without `url` has nothing to be sent with.
    pub(super) fn refuse_headers_without_url(&mut self, table: &DeTable<'_>, place: &str) {
        if table.get("url").is_none()
            && let Some((key, _)) = table.get_key_value("headers")
        {
            self.error(
                key.span(),
                format!(
                    "`headers` in {place} applies only to a component reached at `url`; set \
                     `url` too, or remove it"
                ),
            );
        }
    }

    fn url(&mut self, value: &Value<'_>, scope: Scope) -> Option<url::Url> {
        let text = self.string("url", value, scope)?;
        let span = value.span();
        let url = match url::Url::parse(&text) {
            Ok(url) => url,
            Err(error) => {
                self.error(
                    span,
                    format!(
                        "`url` is not a URL ({error}): write it as `wss://host/acp`, \
                         `ws://...`, `https://...` or `http://...`"
                    ),
                );
                return None;
            }
        };
        self.check_url(&url, span).then_some(url)
    }

    fn check_url(&mut self, url: &url::Url, span: Range<usize>) -> bool {
        let schemes: Vec<String> = SCHEMES.iter().map(|s| format!("{s}://")).collect();
        let problem = if Transport::of_scheme(url.scheme()).is_none() {
            format!(
                "`url` must start with {}, found `{}:`",
                super::alternatives(&schemes.iter().map(String::as_str).collect::<Vec<_>>()),
                url.scheme()
            )
        } else if url.host_str().is_none_or(str::is_empty) {
            "`url` must name a host".to_owned()
        } else if !url.username().is_empty() || url.password().is_some() {
            "`url` must not carry a user name or password: send credentials in `headers` \
             (for example `headers = { Authorization = \"Bearer ${TOKEN}\" }`)"
                .to_owned()
        } else if url.fragment().is_some() {
            "`url` must not have a fragment (`#...`): it is never sent to the server".to_owned()
        } else {
            return true;
        };
        self.error(span, problem);
        false
    }

    /// `headers`: a table of header names to values, in file order.
    fn headers(&mut self, value: &Value<'_>, scope: Scope) -> Option<Vec<(String, String)>> {
        let Some(table) = value.get_ref().as_table() else {
            self.error(
                value.span(),
                format!(
                    "`headers` must be a table of strings (`headers = {{ Authorization = \
                     \"Bearer ${{TOKEN}}\" }}`), found {}",
                    value.get_ref().type_str()
                ),
            );
            return None;
        };
        let mut pairs = Some(Vec::with_capacity(table.len()));
        for (name, item) in entries(table) {
            let valid_name = self.header_name(name.get_ref(), name.span());
            let name: &str = name.get_ref();
            let text = match item.get_ref().as_str() {
                Some(text) => {
                    let key = format!("headers.{name}");
                    self.interpolated(&key, text, item.span(), scope)
                        .filter(|text| self.header_value(&key, text, item.span()))
                }
                None => {
                    self.error(
                        item.span(),
                        format!(
                            "`headers.{name}` must be a string, found {}",
                            item.get_ref().type_str()
                        ),
                    );
                    None
                }
            };
            match (valid_name, text, pairs.as_mut()) {
                (true, Some(text), Some(pairs)) => pairs.push((name.to_owned(), text)),
                _ => pairs = None,
            }
        }
        pairs
    }

    fn header_name(&mut self, name: &str, span: Range<usize>) -> bool {
        let problem = if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
            format!("`{name}` is not a valid HTTP header name")
        } else if TRANSPORT_HEADERS.contains(&name.to_ascii_lowercase().as_str())
            || name.to_ascii_lowercase().starts_with("sec-websocket-")
        {
            format!("header `{name}` is set by the transport itself and cannot be configured")
        } else {
            return true;
        };
        self.error(span, problem);
        false
    }

    /// A value the HTTP libraries accept; the message never shows the value, a secret.
    fn header_value(&mut self, key: &str, text: &str, span: Range<usize>) -> bool {
        if http::HeaderValue::from_str(text).is_ok() {
            return true;
        }
        self.error(
            span,
            format!(
                "`{key}` is not a valid HTTP header value (line breaks and other control \
                 characters are not allowed)"
            ),
        );
        false
    }
}
