//! Witness cosignatures, C2SP `tlog-cosignature` (the Ed25519 type, `cosignature/v1`).
//!
//! A cosignature is one more signature line on a checkpoint:
//!
//! ```text
//! — <witness name> base64(key id (4 bytes) ‖ timestamp (8 bytes, big-endian) ‖ Ed25519 signature (64 bytes))
//! ```
//!
//! where key id = SHA-256(name ‖ 0x0A ‖ 0x04 ‖ public key)[..4] and the signature covers
//!
//! ```text
//! cosignature/v1\n
//! time <timestamp, decimal>\n
//! <the checkpoint's note text, every line with its newline>
//! ```
//!
//! It states that, at that time, this was the largest tree of the origin the witness had seen
//! consistent with everything it saw before. The 0x04 type byte keeps a cosignature from ever
//! being read as the log's own (0x01) signature, even under one key.

use crate::hash::sha256;
use crate::note::{name_ok, parse_vkey, Checkpoint, NoteError, NoteSignature, SignedCheckpoint};
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use std::fmt;

/// Signature type byte of timestamped Ed25519 cosignatures.
pub const ALG_COSIGNATURE_V1: u8 = 0x04;
/// Largest timestamp a cosignature may carry (the spec's 2^63 − 1).
pub const MAX_TIMESTAMP: u64 = (1 << 63) - 1;
/// Bytes of a cosignature after the key id: timestamp and Ed25519 signature.
pub const COSIGNATURE_BYTES: usize = 8 + 64;

/// Key id of a witness's Ed25519 key under `name` for `cosignature/v1`.
pub fn cosigner_key_id(name: &str, key: &VerifyingKey) -> [u8; 4] {
    let mut buf = Vec::with_capacity(name.len() + 2 + 32);
    buf.extend_from_slice(name.as_bytes());
    buf.push(b'\n');
    buf.push(ALG_COSIGNATURE_V1);
    buf.extend_from_slice(key.as_bytes());
    let h = sha256(&buf);
    [h.0[0], h.0[1], h.0[2], h.0[3]]
}

/// The bytes a `cosignature/v1` signs for `checkpoint` at `timestamp`.
pub fn cosigned_message(checkpoint: &Checkpoint, timestamp: u64) -> Vec<u8> {
    let text = checkpoint.text();
    let mut m = Vec::with_capacity(40 + text.len());
    m.extend_from_slice(b"cosignature/v1\ntime ");
    m.extend_from_slice(timestamp.to_string().as_bytes());
    m.push(b'\n');
    m.extend_from_slice(text.as_bytes());
    m
}

/// Why a cosignature or a witness key is not acceptable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CosignError {
    #[error("witness key: {0}")]
    Key(#[from] NoteError),
    #[error(
        "cosignature by {name}+{id} is not {COSIGNATURE_BYTES} bytes of timestamp and signature"
    )]
    Length { name: String, id: String },
    #[error("cosignature by {name}+{id} has a timestamp above 2^63 − 1")]
    Timestamp { name: String, id: String },
    #[error("cosignature by {name}+{id} does not verify")]
    Bad { name: String, id: String },
}

/// A witness's public key with its name: what a log or an auditor is configured with.
#[derive(Clone, PartialEq, Eq)]
pub struct CosignerVerifier {
    name: String,
    key: VerifyingKey,
    id: [u8; 4],
}

impl CosignerVerifier {
    pub fn new(name: &str, key: VerifyingKey) -> Result<CosignerVerifier, NoteError> {
        if !name_ok(name) {
            return Err(NoteError::BadKeyName(name.to_owned()));
        }
        Ok(CosignerVerifier {
            name: name.to_owned(),
            id: cosigner_key_id(name, &key),
            key,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn key(&self) -> &VerifyingKey {
        &self.key
    }
    pub fn id(&self) -> [u8; 4] {
        self.id
    }

    /// The verifier key string `<name>+<8 hex>+<base64(0x04 ‖ public key)>`.
    pub fn to_vkey(&self) -> String {
        let mut data = Vec::with_capacity(33);
        data.push(ALG_COSIGNATURE_V1);
        data.extend_from_slice(self.key.as_bytes());
        format!(
            "{}+{}+{}",
            self.name,
            crate::keys::hex4(self.id),
            B64.encode(data)
        )
    }

    /// Parses a witness verifier key string (type byte 0x04) and checks its key id.
    pub fn from_vkey(s: &str) -> Result<CosignerVerifier, NoteError> {
        let v = parse_vkey(s)?;
        if v.alg != ALG_COSIGNATURE_V1 {
            return Err(NoteError::BadVkey(
                "not a cosignature/v1 witness key (type byte 0x04)",
            ));
        }
        let key = VerifyingKey::from_bytes(&v.key)
            .map_err(|_| NoteError::BadVkey("not an Ed25519 public key"))?;
        let c = CosignerVerifier::new(v.name, key)?;
        if c.id != v.id {
            return Err(NoteError::BadVkey("key id does not match name and key"));
        }
        Ok(c)
    }

    /// Whether a signature line claims to be this witness's (same name and key id).
    pub fn is_named_by(&self, sig: &NoteSignature) -> bool {
        sig.name == self.name && sig.key_id == self.id
    }

    /// Checks a line that [`CosignerVerifier::is_named_by`] this witness, with strict Ed25519;
    /// returns its timestamp.
    pub fn verify(&self, checkpoint: &Checkpoint, sig: &NoteSignature) -> Result<u64, CosignError> {
        let who = || (self.name.clone(), crate::keys::hex4(self.id));
        if !self.is_named_by(sig) {
            let (name, id) = who();
            return Err(CosignError::Bad { name, id });
        }
        if sig.signature.len() != COSIGNATURE_BYTES {
            let (name, id) = who();
            return Err(CosignError::Length { name, id });
        }
        let ts = u64::from_be_bytes(sig.signature[..8].try_into().expect("length checked"));
        if ts > MAX_TIMESTAMP {
            let (name, id) = who();
            return Err(CosignError::Timestamp { name, id });
        }
        let bytes: [u8; 64] = sig.signature[8..].try_into().expect("length checked");
        self.key
            .verify_strict(
                &cosigned_message(checkpoint, ts),
                &Signature::from_bytes(&bytes),
            )
            .map_err(|_| {
                let (name, id) = who();
                CosignError::Bad { name, id }
            })?;
        Ok(ts)
    }
}

impl fmt::Debug for CosignerVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CosignerVerifier({})", self.to_vkey())
    }
}

/// A witness's private key with its name.
#[derive(Clone)]
pub struct Cosigner {
    key: SigningKey,
    verifier: CosignerVerifier,
}

impl Cosigner {
    pub fn new(name: &str, key: SigningKey) -> Result<Cosigner, NoteError> {
        Ok(Cosigner {
            verifier: CosignerVerifier::new(name, key.verifying_key())?,
            key,
        })
    }

    pub fn verifier(&self) -> &CosignerVerifier {
        &self.verifier
    }

    /// The cosignature line for `checkpoint` at `timestamp` (seconds since the epoch; the
    /// caller reads the clock).
    pub fn cosign(&self, checkpoint: &Checkpoint, timestamp: u64) -> NoteSignature {
        let sig = self.key.sign(&cosigned_message(checkpoint, timestamp));
        let mut data = Vec::with_capacity(COSIGNATURE_BYTES);
        data.extend_from_slice(&timestamp.to_be_bytes());
        data.extend_from_slice(&sig.to_bytes());
        NoteSignature {
            name: self.verifier.name.clone(),
            key_id: self.verifier.id,
            signature: data,
        }
    }
}

impl fmt::Debug for Cosigner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Cosigner({:?})", self.verifier)
    }
}

/// One valid cosignature found on a checkpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WitnessedBy {
    /// The witness's name.
    pub witness: String,
    /// The time it cosigned, seconds since the epoch.
    pub timestamp: u64,
}

/// The witnesses among `witnesses` whose cosignature `cp` carries, each once. Every line by a
/// listed witness must verify (a bad one is an error, as for the log's own key); lines by
/// others are ignored. A witness listed twice counts once.
pub fn cosigned_by(
    cp: &SignedCheckpoint,
    witnesses: &[CosignerVerifier],
) -> Result<Vec<WitnessedBy>, CosignError> {
    let mut out: Vec<WitnessedBy> = Vec::new();
    let mut seen: Vec<(&str, [u8; 4])> = Vec::new();
    for w in witnesses {
        if seen.contains(&(w.name.as_str(), w.id)) {
            continue;
        }
        seen.push((&w.name, w.id));
        let mut first: Option<u64> = None;
        for sig in cp.signatures.iter().filter(|s| w.is_named_by(s)) {
            let ts = w.verify(&cp.checkpoint, sig)?;
            first.get_or_insert(ts);
        }
        if let Some(timestamp) = first {
            out.push(WitnessedBy {
                witness: w.name.clone(),
                timestamp,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::Hash;
    use crate::note::NoteSigner;

    fn witness(seed: u8, name: &str) -> Cosigner {
        Cosigner::new(name, SigningKey::from_bytes(&[seed; 32])).expect("valid name")
    }

    #[test]
    fn cosignature_signs_the_header_time_line_and_note_text() {
        let cp = Checkpoint::new("example.com/log", 5, Hash([3; 32]));
        let w = witness(9, "witness.example/w1");
        let sig = w.cosign(&cp, 1_679_315_147);
        assert_eq!(sig.signature.len(), COSIGNATURE_BYTES);
        assert_eq!(&sig.signature[..8], &1_679_315_147u64.to_be_bytes());
        let msg = cosigned_message(&cp, 1_679_315_147);
        assert!(msg.starts_with(b"cosignature/v1\ntime 1679315147\nexample.com/log\n5\n"));
        let sig_bytes: [u8; 64] = sig.signature[8..].try_into().expect("64");
        w.verifier()
            .key()
            .verify_strict(&msg, &Signature::from_bytes(&sig_bytes))
            .expect("signs exactly the documented message");
        assert_eq!(w.verifier().verify(&cp, &sig), Ok(1_679_315_147));
        // Another time, another checkpoint: refused.
        let mut later = sig.clone();
        later.signature[..8].copy_from_slice(&1_679_315_148u64.to_be_bytes());
        assert!(w.verifier().verify(&cp, &later).is_err());
        let other = Checkpoint::new("example.com/log", 6, Hash([3; 32]));
        assert!(w.verifier().verify(&other, &sig).is_err());
    }

    #[test]
    fn key_id_uses_type_byte_4_so_a_cosignature_is_never_a_log_signature() {
        let key = SigningKey::from_bytes(&[1; 32]);
        let log = NoteSigner::new("same.name", key.clone()).expect("name");
        let w = Cosigner::new("same.name", key).expect("name");
        assert_ne!(log.verifier().id(), w.verifier().id());
        let vkey = w.verifier().to_vkey();
        assert_eq!(
            CosignerVerifier::from_vkey(&vkey).expect("round trip"),
            *w.verifier()
        );
        // A 0x01 note key is not a witness key, and the reverse.
        assert!(CosignerVerifier::from_vkey(&log.verifier().to_vkey()).is_err());
        assert!(crate::note::NoteVerifier::from_vkey(&vkey).is_err());
    }

    #[test]
    fn cosigned_by_counts_each_listed_witness_once_and_fails_on_a_bad_line() {
        let cp = Checkpoint::new("o", 1, Hash([0; 32]));
        let (w1, w2) = (witness(1, "w1"), witness(2, "w2"));
        let mut signed = SignedCheckpoint {
            checkpoint: cp.clone(),
            signatures: vec![w1.cosign(&cp, 10), w1.cosign(&cp, 10), w2.cosign(&cp, 11)],
        };
        let list = [
            w1.verifier().clone(),
            w2.verifier().clone(),
            w1.verifier().clone(),
        ];
        let got = cosigned_by(&signed, &list).expect("all verify");
        assert_eq!(got.len(), 2);
        // A line by w1 whose signature is wrong fails the whole note.
        let mut bad = w1.cosign(&cp, 12);
        bad.signature[20] ^= 1;
        signed.signatures.push(bad);
        assert!(cosigned_by(&signed, &list).is_err());
    }
}
