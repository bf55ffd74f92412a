//! The memory node's shared secret and its comparison in constant time.
//!
//! A comparison that returns early on a length mismatch tells a stranger how long the token
//! is. Both sides are copied into fixed buffers of [`MAX_TOKEN`] bytes (zero padded) and the
//! whole buffers and the lengths are compared with `subtle`, so the time taken depends neither
//! on where the tokens differ nor on either length.

use subtle::ConstantTimeEq;

use super::protocol::MAX_TOKEN;

/// A token padded to a fixed size, compared in constant time.
pub struct SecretToken {
    padded: Box<[u8; MAX_TOKEN]>,
    len: u64,
}

impl SecretToken {
    /// `None` when the token is empty or longer than [`MAX_TOKEN`] bytes.
    pub fn new(token: &str) -> Option<SecretToken> {
        let b = token.as_bytes();
        if b.is_empty() || b.len() > MAX_TOKEN {
            return None;
        }
        let mut padded = Box::new([0u8; MAX_TOKEN]);
        padded[..b.len()].copy_from_slice(b);
        Some(SecretToken {
            padded,
            len: b.len() as u64,
        })
    }

    /// Whether `presented` is this token. Only the presented token's own length (no secret)
    /// changes the work done; a longer one than [`MAX_TOKEN`] fails on its length.
    pub fn matches(&self, presented: &[u8]) -> bool {
        let mut other = [0u8; MAX_TOKEN];
        let n = presented.len().min(MAX_TOKEN);
        other[..n].copy_from_slice(&presented[..n]);
        let same = self.padded.as_slice().ct_eq(other.as_slice())
            & self.len.ct_eq(&(presented.len() as u64));
        same.into()
    }
}

impl std::fmt::Debug for SecretToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretToken(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_tokens_match() {
        let t = SecretToken::new("s3cret-token").unwrap();
        assert!(t.matches(b"s3cret-token"));
        let long = "x".repeat(MAX_TOKEN);
        assert!(SecretToken::new(&long).unwrap().matches(long.as_bytes()));
    }

    #[test]
    fn unequal_tokens_of_the_same_length_do_not_match() {
        let t = SecretToken::new("s3cret-token").unwrap();
        assert!(!t.matches(b"s3cret-tokeN"));
        assert!(!t.matches(b"S3cret-token"));
    }

    #[test]
    fn tokens_of_another_length_do_not_match() {
        let t = SecretToken::new("abc").unwrap();
        assert!(!t.matches(b""));
        assert!(!t.matches(b"ab"));
        assert!(!t.matches(b"abcd"));
        // Zero padding must not make a prefix plus NULs equal.
        assert!(!t.matches(b"abc\0"));
        assert!(!t.matches("abc".repeat(MAX_TOKEN).as_bytes()));
        assert!(SecretToken::new("").is_none());
        assert!(SecretToken::new(&"y".repeat(MAX_TOKEN + 1)).is_none());
    }
}
