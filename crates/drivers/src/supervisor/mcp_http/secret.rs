//! The HTTP bridge's unguessable names: URL tokens, session ids and per-session secrets from
//! the kernel's random source, and the secret's comparison in constant time.

use std::io::Read;

use sha2::{Digest, Sha256};

/// `bytes` random bytes from the kernel, as lowercase hex.
pub(super) fn random_hex(bytes: usize) -> std::io::Result<String> {
    let mut buffer = vec![0u8; bytes];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut buffer)?;
    Ok(buffer.iter().map(|b| format!("{b:02x}")).collect())
}

/// A session's secret, kept as its SHA-256 so that comparing two is of fixed length and
/// time, whatever the guess.
#[derive(Debug)]
pub(super) struct Secret([u8; 32]);

impl Secret {
    pub(super) fn new(secret: &str) -> Secret {
        Secret(Sha256::digest(secret.as_bytes()).into())
    }

    pub(super) fn accepts(&self, presented: &str) -> bool {
        let presented: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        presented
            .iter()
            .zip(&self.0)
            .fold(0u8, |differ, (a, b)| differ | (a ^ b))
            == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_names_are_hex_and_differ() {
        let a = random_hex(16).unwrap();
        let b = random_hex(16).unwrap();
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn only_the_secret_itself_is_accepted() {
        let secret = Secret::new("s3cret");
        assert!(secret.accepts("s3cret"));
        assert!(!secret.accepts("s3cre"));
        assert!(!secret.accepts(""));
        assert!(!secret.accepts("s3cret "));
    }
}
