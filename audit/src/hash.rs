//! SHA-256 hashes with the RFC 6962 domain separation prefixes.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};
use std::fmt;

/// Prefix of a leaf hash input (RFC 6962 §2.1): it keeps a leaf from ever hashing like a node.
pub const LEAF_PREFIX: u8 = 0x00;
/// Prefix of an interior node hash input (RFC 6962 §2.1).
pub const NODE_PREFIX: u8 = 0x01;

/// A SHA-256 digest. Serialised as 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Hash(pub [u8; 32]);

/// Any bytes as lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
    s
}

/// A hash given as text that is not 64 hex digits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a SHA-256 hash in hex (64 hex digits expected)")]
pub struct HashParseError;

impl Hash {
    /// All zero bytes: the `prev` of entry 0.
    pub const ZERO: Hash = Hash([0; 32]);

    /// Hex, lowercase.
    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }

    /// Writes the lowercase hex form into `out` (64 bytes).
    pub fn write_hex(&self, out: &mut [u8; 64]) {
        for (i, b) in self.0.iter().enumerate() {
            out[2 * i] = HEX[(b >> 4) as usize];
            out[2 * i + 1] = HEX[(b & 15) as usize];
        }
    }

    /// Parses 64 hex digits. Only lowercase is accepted, so each hash has one spelling.
    pub fn from_hex(s: &str) -> Result<Hash, HashParseError> {
        Self::from_hex_bytes(s.as_bytes())
    }

    /// As [`Hash::from_hex`], over bytes.
    pub fn from_hex_bytes(s: &[u8]) -> Result<Hash, HashParseError> {
        if s.len() != 64 {
            return Err(HashParseError);
        }
        let mut out = [0u8; 32];
        for (i, pair) in s.chunks_exact(2).enumerate() {
            out[i] = (hex_val(pair[0])? << 4) | hex_val(pair[1])?;
        }
        Ok(Hash(out))
    }

    /// Compares with a lowercase hex spelling without allocating.
    pub fn eq_hex(&self, hex: &[u8]) -> bool {
        let mut mine = [0u8; 64];
        self.write_hex(&mut mine);
        hex == mine
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

fn hex_val(c: u8) -> Result<u8, HashParseError> {
    match c {
        b'0'..=b'9' => Ok(c - b'0'),
        b'a'..=b'f' => Ok(c - b'a' + 10),
        _ => Err(HashParseError),
    }
}

impl fmt::Debug for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Hash({})", self.to_hex())
    }
}

impl fmt::Display for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl Serialize for Hash {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_hex())
    }
}

impl<'de> Deserialize<'de> for Hash {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Hash, D::Error> {
        let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
        Hash::from_hex(&s).map_err(serde::de::Error::custom)
    }
}

/// RFC 6962 leaf hash: SHA-256(0x00 || data). For an entry, `data` is its canonical bytes, and
/// the same hash is the entry's link in the hash chain.
pub fn leaf_hash(data: &[u8]) -> Hash {
    let mut h = Sha256::new();
    h.update([LEAF_PREFIX]);
    h.update(data);
    Hash(h.finalize().into())
}

/// RFC 6962 interior node hash: SHA-256(0x01 || left || right).
pub fn node_hash(left: &Hash, right: &Hash) -> Hash {
    let mut buf = [0u8; 65];
    buf[0] = NODE_PREFIX;
    buf[1..33].copy_from_slice(&left.0);
    buf[33..].copy_from_slice(&right.0);
    Hash(Sha256::digest(buf).into())
}

/// Plain SHA-256 (no prefix): the root of the empty tree, key ids.
pub fn sha256(data: &[u8]) -> Hash {
    Hash(Sha256::digest(data).into())
}

#[cfg(test)]
mod tests {
    use super::{hex, Hash};

    #[test]
    fn hex_is_lowercase_two_digits_a_byte() {
        assert_eq!(hex(&[]), "");
        assert_eq!(hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        let h = Hash([0xab; 32]);
        assert_eq!(h.to_hex(), "ab".repeat(32));
        assert_eq!(Hash::from_hex(&h.to_hex()), Ok(h));
    }
}
