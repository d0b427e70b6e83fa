//! Unguessable values from the kernel's random source: connection ids (which bind an HTTP
//! client's later requests to its chain) and the key the token is compared under.

use std::fmt;

/// Fills `buf` from getrandom(2); the kernel's pool is ready long before anyone serves.
pub(super) fn random_bytes(buf: &mut [u8]) {
    let mut filled = 0;
    while filled < buf.len() {
        let rest = &mut buf[filled..];
        // SAFETY: writes at most `rest.len()` bytes into `rest`.
        let got = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        if got < 0 {
            let error = std::io::Error::last_os_error();
            assert!(
                error.kind() == std::io::ErrorKind::Interrupted,
                "getrandom failed: {error}"
            );
            continue;
        }
        filled += got as usize;
    }
}

/// One served connection's id: 128 random bits, as 32 hex digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConnectionId(String);

impl ConnectionId {
    pub fn random() -> ConnectionId {
        let mut bytes = [0u8; 16];
        random_bytes(&mut bytes);
        ConnectionId(bytes.iter().map(|b| format!("{b:02x}")).collect())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ConnectionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_ids_are_hex_and_differ() {
        let (a, b) = (ConnectionId::random(), ConnectionId::random());
        assert_eq!(a.as_str().len(), 32);
        assert!(a.as_str().bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
