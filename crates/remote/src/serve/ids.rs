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

/// One served connection's id: 128 random bits, as 32 hex digits, after `--replica`'s name
/// and a `-` when one is given (so a load balancer can send a connection's requests to the
/// replica that holds it).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConnectionId(String);

impl ConnectionId {
    pub fn random() -> ConnectionId {
        ConnectionId::random_after(None)
    }

    /// A random id, after `replica` and a `-` if given.
    pub fn random_after(replica: Option<&str>) -> ConnectionId {
        let mut bytes = [0u8; 16];
        random_bytes(&mut bytes);
        let mut id = replica.map(|r| format!("{r}-")).unwrap_or_default();
        id.extend(bytes.iter().map(|b| format!("{b:02x}")));
        ConnectionId(id)
    }

    /// Whether `name` can start connection ids: 1 to 32 ASCII letters, digits, `_`, `.`.
    pub fn valid_replica(name: &str) -> bool {
        (1..=32).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
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

    #[test]
    fn a_replica_name_starts_the_id() {
        let id = ConnectionId::random_after(Some("r1"));
        let (replica, random) = id.as_str().split_once('-').unwrap();
        assert_eq!(replica, "r1");
        assert_eq!(random.len(), 32);
        assert!(ConnectionId::valid_replica(
            "pod-7".replace('-', "_").as_str()
        ));
        for bad in ["", "a-b", "a b", "é", &"x".repeat(33)] {
            assert!(!ConnectionId::valid_replica(bad), "{bad:?}");
        }
    }
}
