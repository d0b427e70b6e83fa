//! Who may reach the chain: the bearer token (read from a file, compared in constant time)
//! and the browser origins allowed. Runs before any handler, so a refused request starts nothing.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;

use acp_metrics::labels::Refusal;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::error::ServeError;
use super::ids::random_bytes;

type HmacSha256 = Hmac<Sha256>;

/// The bearer token clients must present. Kept only as a keyed hash: the comparison is of
/// two HMAC tags (constant time, `subtle`), so neither the token's bytes nor its length
/// shape the time a wrong guess takes.
pub(super) struct Token {
    key: [u8; 32],
    tag: Vec<u8>,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(..)")
    }
}

impl Token {
    /// The token in `path`: its contents without surrounding whitespace. A file others can
    /// read is used, with a warning.
    pub(super) fn read(path: &Path) -> Result<Token, ServeError> {
        let text = std::fs::read_to_string(path).map_err(|source| ServeError::TokenUnreadable {
            path: path.to_path_buf(),
            source,
        })?;
        let token = text.trim();
        if token.is_empty() {
            return Err(ServeError::TokenEmpty(path.to_path_buf()));
        }
        if token.bytes().any(|b| !(0x21..=0x7e).contains(&b)) {
            return Err(ServeError::TokenNotPrintable(path.to_path_buf()));
        }
        if let Ok(meta) = std::fs::metadata(path)
            && meta.permissions().mode() & 0o077 != 0
        {
            tracing::warn!(
                "the token file {} can be read by other users (chmod 600 it)",
                path.display()
            );
        }
        Ok(Token::new(token.as_bytes()))
    }

    fn new(token: &[u8]) -> Token {
        let mut key = [0u8; 32];
        random_bytes(&mut key);
        let tag = Self::mac(&key, token).finalize().into_bytes().to_vec();
        Token { key, tag }
    }

    fn mac(key: &[u8; 32], token: &[u8]) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(key).expect("HMAC takes a key of any length");
        mac.update(token);
        mac
    }

    /// Whether `headers` carry `Authorization: Bearer <the token>`.
    pub(super) fn accepts(&self, headers: &HeaderMap) -> bool {
        let Some(presented) = headers
            .get(header::AUTHORIZATION)
            .and_then(|value| bearer(value.as_bytes()))
        else {
            return false;
        };
        Self::mac(&self.key, presented)
            .verify_slice(&self.tag)
            .is_ok()
    }
}

/// The credentials of `Bearer <credentials>` (the scheme is case-insensitive).
fn bearer(value: &[u8]) -> Option<&[u8]> {
    let (scheme, rest) = value.split_at_checked(7)?;
    scheme
        .eq_ignore_ascii_case(b"bearer ")
        .then_some(rest.trim_ascii())
}

/// What every request must pass.
#[derive(Debug)]
pub(super) struct Gate {
    pub(super) token: Option<Token>,
    /// Browser origins allowed, exactly as browsers send them (`https://app.example`).
    pub(super) origins: Vec<HeaderValue>,
}

impl Gate {
    /// A request without `Origin` is not from a browser page and passes; one with an
    /// `Origin` must name an allowed one, so that a page the user happens to visit cannot
    /// drive a chain on their machine (a WebSocket is not subject to CORS).
    fn origin_allowed(&self, headers: &HeaderMap) -> bool {
        headers
            .get(header::ORIGIN)
            .is_none_or(|origin| self.origins.iter().any(|allowed| allowed == origin))
    }
}

/// The middleware: 403 for an origin not allowed, 401 without the right token, otherwise on
/// to the handlers.
pub(super) async fn admit(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
    if !gate.origin_allowed(request.headers()) {
        tracing::warn!(
            origin = ?request.headers().get(header::ORIGIN),
            "refused a request from a browser origin that is not allowed (--allow-origin)"
        );
        if let Some(metrics) = acp_metrics::get() {
            metrics.refused(Refusal::Origin);
        }
        return (StatusCode::FORBIDDEN, "origin not allowed\n").into_response();
    }
    if let Some(token) = &gate.token
        && !token.accepts(request.headers())
    {
        tracing::warn!("refused a request without the right bearer token");
        if let Some(metrics) = acp_metrics::get() {
            metrics.refused(Refusal::Unauthorized);
        }
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "a bearer token is required\n",
        )
            .into_response();
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(name.clone(), HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn only_the_token_itself_is_accepted() {
        let token = Token::new(b"s3cret-token");
        assert!(token.accepts(&headers(&[(header::AUTHORIZATION, "Bearer s3cret-token")])));
        assert!(token.accepts(&headers(&[(header::AUTHORIZATION, "bearer s3cret-token")])));
        for wrong in [
            "Bearer s3cret-toke",
            "Bearer s3cret-token2",
            "Bearer ",
            "Basic s3cret-token",
            "s3cret-token",
        ] {
            assert!(
                !token.accepts(&headers(&[(header::AUTHORIZATION, wrong)])),
                "{wrong}"
            );
        }
        assert!(!token.accepts(&HeaderMap::new()));
    }

    #[test]
    fn origins_are_matched_exactly_and_absent_ones_pass() {
        let gate = Gate {
            token: None,
            origins: vec![HeaderValue::from_static("https://app.example")],
        };
        assert!(gate.origin_allowed(&HeaderMap::new()));
        assert!(gate.origin_allowed(&headers(&[(header::ORIGIN, "https://app.example")])));
        assert!(!gate.origin_allowed(&headers(&[(header::ORIGIN, "https://evil.example")])));
        assert!(!gate.origin_allowed(&headers(&[(header::ORIGIN, "null")])));
    }
}
