//! Checkpoints in the C2SP `tlog-checkpoint` format, signed as C2SP `signed-note`s with Ed25519.
//!
//! ```text
//! <origin>\n
//! <tree size, decimal>\n
//! <root hash, base64 std>\n
//! [<extension line>\n ...]
//! \n
//! — <key name> <base64(key id (4 bytes) || Ed25519 signature (64 bytes))>\n
//! ```
//!
//! The signature covers the note text: every byte up to and including the newline that ends
//! the last line before the blank line. Key id = SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key)[0..4].

use crate::hash::{sha256, Hash};
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use ed25519_dalek::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey};
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use std::fmt;

/// Signed-note algorithm byte for Ed25519.
pub const ALG_ED25519: u8 = 0x01;
/// Most signature lines a note may carry (as Go's `note` package).
pub const MAX_SIGNATURES: usize = 100;
/// Longest note accepted, in bytes.
pub const MAX_NOTE_BYTES: usize = 64 * 1024;
/// Em dash, then a space: how every signature line starts.
pub const SIG_PREFIX: &str = "\u{2014} ";

/// Why a note or key could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoteError {
    #[error("note is malformed: {0}")]
    Malformed(&'static str),
    #[error("checkpoint is malformed: {0}")]
    Checkpoint(&'static str),
    #[error("key name {0:?} is empty, or has a space, control character or '+'")]
    BadKeyName(String),
    #[error("verifier key string is malformed: {0}")]
    BadVkey(&'static str),
    #[error("key: {0}")]
    Key(String),
}

/// Whether `name` can name a signed-note key (and an origin): printable, no space, no '+'.
pub fn name_ok(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 256
        && name
            .chars()
            .all(|c| !c.is_whitespace() && !c.is_control() && c != '+')
}

/// Signed-note key id of an Ed25519 key under `name`.
pub fn key_id(name: &str, key: &VerifyingKey) -> [u8; 4] {
    let mut buf = Vec::with_capacity(name.len() + 2 + 32);
    buf.extend_from_slice(name.as_bytes());
    buf.push(b'\n');
    buf.push(ALG_ED25519);
    buf.extend_from_slice(key.as_bytes());
    let h = sha256(&buf);
    [h.0[0], h.0[1], h.0[2], h.0[3]]
}

/// A public key with its signed-note name.
#[derive(Clone, PartialEq, Eq)]
pub struct NoteVerifier {
    name: String,
    key: VerifyingKey,
    id: [u8; 4],
}

impl NoteVerifier {
    pub fn new(name: &str, key: VerifyingKey) -> Result<NoteVerifier, NoteError> {
        if !name_ok(name) {
            return Err(NoteError::BadKeyName(name.to_owned()));
        }
        Ok(NoteVerifier {
            name: name.to_owned(),
            id: key_id(name, &key),
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

    /// The Go `note` verifier key string: `<name>+<key id, 8 hex>+<base64(0x01 ‖ public key)>`.
    pub fn to_vkey(&self) -> String {
        let mut data = Vec::with_capacity(33);
        data.push(ALG_ED25519);
        data.extend_from_slice(self.key.as_bytes());
        format!(
            "{}+{:02x}{:02x}{:02x}{:02x}+{}",
            self.name,
            self.id[0],
            self.id[1],
            self.id[2],
            self.id[3],
            B64.encode(data)
        )
    }

    /// Parses a verifier key string and checks that its id matches its name and key.
    pub fn from_vkey(s: &str) -> Result<NoteVerifier, NoteError> {
        let v = parse_vkey(s)?;
        if v.alg != ALG_ED25519 {
            return Err(NoteError::BadVkey("key is not 0x01 followed by 32 bytes"));
        }
        let key = VerifyingKey::from_bytes(&v.key)
            .map_err(|_| NoteError::BadVkey("not an Ed25519 public key"))?;
        let verifier = NoteVerifier::new(v.name, key)?;
        if verifier.id != v.id {
            return Err(NoteError::BadVkey("key id does not match name and key"));
        }
        Ok(verifier)
    }

    /// Whether a signature line claims to be by this key: same name and same key id (the
    /// signed-note rule; a line sharing only one of the two is another key's).
    pub fn is_named_by(&self, sig: &NoteSignature) -> bool {
        sig.name == self.name && sig.key_id == self.id
    }
}

/// The parts of a verifier key string `<name>+<8 hex>+<base64(type byte ‖ key)>`.
///
/// The string splits at its first two `+`: a name never holds a `+`, while the standard
/// base64 alphabet does, so any further `+` belongs to the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VkeyParts<'a> {
    pub name: &'a str,
    pub id: [u8; 4],
    /// The signature type byte (0x01 Ed25519 note signatures, 0x04 cosignature/v1).
    pub alg: u8,
    /// The 32-byte Ed25519 public key.
    pub key: [u8; 32],
}

/// Splits and decodes a verifier key string for an Ed25519 key (of any signature type). The id
/// must be 8 lowercase hex digits and the base64 canonical; the caller checks the type byte and
/// that the id matches.
pub fn parse_vkey(s: &str) -> Result<VkeyParts<'_>, NoteError> {
    let mut parts = s.splitn(3, '+');
    let (name, id_hex, data) = match (parts.next(), parts.next(), parts.next()) {
        (Some(n), Some(i), Some(d)) => (n, i, d),
        _ => return Err(NoteError::BadVkey("expected name+id+key")),
    };
    if !name_ok(name) {
        return Err(NoteError::BadKeyName(name.to_owned()));
    }
    if id_hex.len() != 8
        || !id_hex
            .bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
    {
        return Err(NoteError::BadVkey("key id is not 8 lowercase hex digits"));
    }
    let mut id = [0u8; 4];
    for (i, b) in id.iter_mut().enumerate() {
        *b = u8::from_str_radix(&id_hex[2 * i..2 * i + 2], 16)
            .map_err(|_| NoteError::BadVkey("key id is not hex"))?;
    }
    let data = B64
        .decode(data)
        .map_err(|_| NoteError::BadVkey("key is not canonical base64"))?;
    if data.len() != 33 {
        return Err(NoteError::BadVkey(
            "key is not a type byte followed by 32 bytes",
        ));
    }
    let key: [u8; 32] = data[1..].try_into().expect("length checked above");
    Ok(VkeyParts {
        name,
        id,
        alg: data[0],
        key,
    })
}

impl fmt::Debug for NoteVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NoteVerifier({})", self.to_vkey())
    }
}

/// A private key with its signed-note name.
#[derive(Clone)]
pub struct NoteSigner {
    key: SigningKey,
    verifier: NoteVerifier,
}

impl NoteSigner {
    pub fn new(name: &str, key: SigningKey) -> Result<NoteSigner, NoteError> {
        let verifier = NoteVerifier::new(name, key.verifying_key())?;
        Ok(NoteSigner { key, verifier })
    }
    /// From a PKCS#8 PEM private key (`-----BEGIN PRIVATE KEY-----`).
    pub fn from_pkcs8_pem(name: &str, pem: &str) -> Result<NoteSigner, NoteError> {
        NoteSigner::new(name, private_key_from_pem(pem)?)
    }
    pub fn verifier(&self) -> &NoteVerifier {
        &self.verifier
    }
    /// A signature over `text`.
    pub fn sign(&self, text: &[u8]) -> NoteSignature {
        NoteSignature {
            name: self.verifier.name.clone(),
            key_id: self.verifier.id,
            signature: self.key.sign(text).to_bytes().to_vec(),
        }
    }
    /// The private key as PKCS#8 PEM.
    pub fn to_pkcs8_pem(&self) -> Result<String, NoteError> {
        private_key_to_pem(&self.key)
    }
}

impl fmt::Debug for NoteSigner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NoteSigner({:?})", self.verifier)
    }
}

/// Writes an Ed25519 private key as a PKCS#8 **v1** PEM (`-----BEGIN PRIVATE KEY-----`):
/// RFC 5208 `PrivateKeyInfo` (RFC 5958 `OneAsymmetricKey` version 0) holding only the 32-byte
/// seed, as RFC 8410 §7 shows it. Version 2, which adds the public key, is what the key types'
/// own encoder writes, and OpenSSL 3.0 and Python's `cryptography` refuse it.
pub fn private_key_to_pem(key: &SigningKey) -> Result<String, NoteError> {
    let bytes = ed25519_dalek::pkcs8::KeypairBytes {
        secret_key: key.to_bytes(),
        public_key: None,
    };
    bytes
        .to_pkcs8_pem(ed25519_dalek::pkcs8::spki::der::pem::LineEnding::LF)
        .map(|s| s.to_string())
        .map_err(|e| NoteError::Key(e.to_string()))
}

/// Reads an Ed25519 private key from PKCS#8 PEM, version 1 (seed only) or version 2 (seed and
/// public key, which must then match the seed).
pub fn private_key_from_pem(pem: &str) -> Result<SigningKey, NoteError> {
    SigningKey::from_pkcs8_pem(pem).map_err(|e| NoteError::Key(e.to_string()))
}

/// Reads a public key from SubjectPublicKeyInfo PEM (`-----BEGIN PUBLIC KEY-----`).
pub fn public_key_from_pem(pem: &str) -> Result<VerifyingKey, NoteError> {
    VerifyingKey::from_public_key_pem(pem).map_err(|e| NoteError::Key(e.to_string()))
}

/// Writes a public key as SubjectPublicKeyInfo PEM.
pub fn public_key_to_pem(key: &VerifyingKey) -> Result<String, NoteError> {
    key.to_public_key_pem(ed25519_dalek::pkcs8::spki::der::pem::LineEnding::LF)
        .map_err(|e| NoteError::Key(e.to_string()))
}

/// One signature line of a note.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoteSignature {
    pub name: String,
    pub key_id: [u8; 4],
    /// 64 bytes for Ed25519; other lengths are kept so foreign signatures (e.g. witness
    /// cosignatures) can be carried and ignored.
    pub signature: Vec<u8>,
}

impl NoteSignature {
    /// Whether this is a valid signature of `text` by `key` (strict Ed25519: canonical `S`,
    /// no small-order keys or `R`). The key id is computed under this line's name.
    pub fn verify(&self, text: &[u8], key: &VerifyingKey) -> bool {
        if key_id(&self.name, key) != self.key_id {
            return false;
        }
        let Ok(bytes) = <[u8; 64]>::try_from(self.signature.as_slice()) else {
            return false;
        };
        key.verify_strict(text, &Signature::from_bytes(&bytes))
            .is_ok()
    }

    /// Whether this line claims to be by `key` (its key id matches under its name).
    pub fn is_by(&self, key: &VerifyingKey) -> bool {
        key_id(&self.name, key) == self.key_id
    }

    /// The signature line, `— <name> <base64(key id ‖ signature)>` and a newline.
    pub fn line(&self) -> String {
        let mut data = Vec::with_capacity(4 + self.signature.len());
        data.extend_from_slice(&self.key_id);
        data.extend_from_slice(&self.signature);
        format!("{SIG_PREFIX}{} {}\n", self.name, B64.encode(data))
    }
}

/// Splits a C2SP signed note into its text (what signatures cover, ending in a newline) and its
/// signature lines. At least one signature line is required.
pub fn parse_note(note: &str) -> Result<(&str, Vec<NoteSignature>), NoteError> {
    if note.len() > MAX_NOTE_BYTES {
        return Err(NoteError::Malformed("note too large"));
    }
    if note.chars().any(|c| c.is_control() && c != '\n') {
        return Err(NoteError::Malformed("control character in note"));
    }
    let split = note
        .rfind("\n\n")
        .ok_or(NoteError::Malformed("no blank line before signatures"))?;
    let text = &note[..split + 1];
    let sigs = note[split + 2..]
        .strip_suffix('\n')
        .ok_or(NoteError::Malformed(
            "signature block must end with a newline",
        ))?;
    let mut signatures = Vec::new();
    for line in sigs.split('\n') {
        signatures.push(NoteSignature::parse_line(line)?);
        if signatures.len() > MAX_SIGNATURES {
            return Err(NoteError::Malformed("too many signatures"));
        }
    }
    Ok((text, signatures))
}

impl NoteSignature {
    /// Parses one signature line, without its newline. The base64 must be canonical (padded,
    /// no stray bits), so that a signature has one spelling.
    pub fn parse_line(line: &str) -> Result<NoteSignature, NoteError> {
        let rest = line.strip_prefix(SIG_PREFIX).ok_or(NoteError::Malformed(
            "signature line must start with an em dash and a space",
        ))?;
        let (name, b64) = rest.split_once(' ').ok_or(NoteError::Malformed(
            "signature line needs a name and a signature",
        ))?;
        if !name_ok(name) {
            return Err(NoteError::Malformed("bad key name in signature line"));
        }
        let data = B64
            .decode(b64)
            .map_err(|_| NoteError::Malformed("signature is not canonical base64"))?;
        if data.len() < 5 {
            return Err(NoteError::Malformed("signature too short"));
        }
        Ok(NoteSignature {
            name: name.to_owned(),
            key_id: data[..4].try_into().expect("length checked above"),
            signature: data[4..].to_vec(),
        })
    }
}

/// The body of a checkpoint (what is signed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    pub origin: String,
    pub size: u64,
    pub root: Hash,
    /// Optional extension lines, each without its newline. We write none; we keep and sign
    /// over any we read.
    pub extensions: Vec<String>,
}

impl Checkpoint {
    pub fn new(origin: &str, size: u64, root: Hash) -> Checkpoint {
        Checkpoint {
            origin: origin.to_owned(),
            size,
            root,
            extensions: Vec::new(),
        }
    }

    /// The note text: the bytes signatures cover.
    pub fn text(&self) -> String {
        let mut s = format!(
            "{}\n{}\n{}\n",
            self.origin,
            self.size,
            B64.encode(self.root.0)
        );
        for e in &self.extensions {
            s.push_str(e);
            s.push('\n');
        }
        s
    }

    /// Parses note text (ending in a newline) as a checkpoint body.
    pub fn parse_text(text: &str) -> Result<Checkpoint, NoteError> {
        let body = text
            .strip_suffix('\n')
            .ok_or(NoteError::Checkpoint("text must end with a newline"))?;
        let mut lines = body.split('\n');
        let origin = lines.next().unwrap_or_default();
        if origin.is_empty() {
            return Err(NoteError::Checkpoint("empty origin line"));
        }
        let size_line = lines
            .next()
            .ok_or(NoteError::Checkpoint("missing size line"))?;
        let size_ok = !size_line.is_empty()
            && size_line.bytes().all(|c| c.is_ascii_digit())
            && (size_line == "0" || !size_line.starts_with('0'));
        let size: u64 = if size_ok {
            size_line
                .parse()
                .map_err(|_| NoteError::Checkpoint("tree size out of range"))?
        } else {
            return Err(NoteError::Checkpoint("tree size is not a decimal number"));
        };
        let root_line = lines
            .next()
            .ok_or(NoteError::Checkpoint("missing root hash line"))?;
        let root = B64
            .decode(root_line)
            .map_err(|_| NoteError::Checkpoint("root hash is not base64"))?;
        let root: [u8; 32] = root
            .try_into()
            .map_err(|_| NoteError::Checkpoint("root hash is not 32 bytes"))?;
        // Reject non-canonical base64 so that the text has one spelling.
        if B64.encode(root) != root_line {
            return Err(NoteError::Checkpoint("root hash base64 is not canonical"));
        }
        let mut extensions = Vec::new();
        for l in lines {
            if l.is_empty() {
                return Err(NoteError::Checkpoint("empty extension line"));
            }
            extensions.push(l.to_owned());
        }
        Ok(Checkpoint {
            origin: origin.to_owned(),
            size,
            root: Hash(root),
            extensions,
        })
    }
}

/// A checkpoint with its signature lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignedCheckpoint {
    pub checkpoint: Checkpoint,
    pub signatures: Vec<NoteSignature>,
}

impl SignedCheckpoint {
    /// Signs `cp` with each signer, in order.
    pub fn sign(cp: Checkpoint, signers: &[NoteSigner]) -> SignedCheckpoint {
        let text = cp.text();
        let signatures = signers.iter().map(|s| s.sign(text.as_bytes())).collect();
        SignedCheckpoint {
            checkpoint: cp,
            signatures,
        }
    }

    /// The whole signed note, as written to files and exports.
    pub fn to_text(&self) -> String {
        let mut s = self.checkpoint.text();
        s.push('\n');
        for sig in &self.signatures {
            s.push_str(&sig.line());
        }
        s
    }

    /// Parses a signed note whose text is a checkpoint.
    pub fn parse(note: &str) -> Result<SignedCheckpoint, NoteError> {
        let (text, signatures) = parse_note(note)?;
        Ok(SignedCheckpoint {
            checkpoint: Checkpoint::parse_text(text)?,
            signatures,
        })
    }

    /// Whether a line under the checkpoint's origin as key name is a valid signature by
    /// `key` (a key read from PEM has no name of its own: in pitboss's logs the key name is the
    /// origin). Other lines are not looked at.
    pub fn signed_by(&self, key: &VerifyingKey) -> bool {
        match NoteVerifier::new(&self.checkpoint.origin, *key) {
            Ok(v) => self.signed_by_verifier(&v),
            Err(_) => false,
        }
    }

    /// Whether some line by `v` (same name and key id) is a valid signature, and no line by it
    /// is a bad one.
    pub fn signed_by_verifier(&self, v: &NoteVerifier) -> bool {
        let text = self.checkpoint.text();
        let mut any = false;
        for s in self.signatures.iter().filter(|s| v.is_named_by(s)) {
            if !s.verify(text.as_bytes(), v.key()) {
                return false;
            }
            any = true;
        }
        any
    }

    /// Appends signature lines (a witness's cosignatures, say) that the note does not carry
    /// yet; identical lines are not repeated.
    pub fn add_signatures(&mut self, lines: impl IntoIterator<Item = NoteSignature>) {
        for l in lines {
            if !self.signatures.contains(&l) {
                self.signatures.push(l);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of the Go `golang.org/x/mod/sumdb/note` documentation: an independent
    /// implementation's key id, verifier key string and signature.
    const GO_VKEY: &str = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";
    const GO_NOTE: &str = "If you think cryptography is the answer to your problem,\n\
        then you don't know what your problem is.\n\
        \n\
        \u{2014} PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n";

    #[test]
    fn key_id_and_signature_match_the_go_note_package_example() {
        let v = NoteVerifier::from_vkey(GO_VKEY).expect("published vkey parses, id matches");
        assert_eq!(v.to_vkey(), GO_VKEY);
        let (text, sigs) = parse_note(GO_NOTE).expect("published note parses");
        assert_eq!(sigs.len(), 1);
        assert_eq!(sigs[0].key_id, v.id());
        assert!(sigs[0].verify(text.as_bytes(), v.key()));
        let altered = text.replace("answer", "Answer");
        assert!(!sigs[0].verify(altered.as_bytes(), v.key()));
    }

    fn signer(seed: u8, name: &str) -> NoteSigner {
        NoteSigner::new(name, SigningKey::from_bytes(&[seed; 32])).expect("valid name")
    }

    #[test]
    fn checkpoint_text_round_trips_and_signature_verifies() {
        let s = signer(7, "example.com/log");
        let cp = Checkpoint::new("example.com/log", 42, crate::hash::sha256(b"x"));
        let signed = SignedCheckpoint::sign(cp.clone(), std::slice::from_ref(&s));
        let text = signed.to_text();
        assert!(text.starts_with("example.com/log\n42\n"));
        assert!(text.contains("\n\n\u{2014} example.com/log "));
        let back = SignedCheckpoint::parse(&text).expect("own checkpoint parses");
        assert_eq!(back, signed);
        assert!(back.signed_by(s.verifier().key()));
        assert!(!back.signed_by(signer(8, "example.com/log").verifier().key()));
    }

    #[test]
    fn checkpoint_parse_refuses_leading_zero_sizes_and_bad_roots() {
        let root = B64.encode([0u8; 32]);
        for body in [
            format!("o\n042\n{root}\n"),
            format!("o\n\n{root}\n"),
            "o\n1\nAAAA\n".to_owned(),
            format!("\n1\n{root}\n"),
            format!("o\n1\n{root}"),
        ] {
            assert!(Checkpoint::parse_text(&body).is_err(), "{body:?}");
        }
        assert!(Checkpoint::parse_text(&format!("o\n0\n{root}\next\n")).is_ok());
    }

    #[test]
    fn note_without_signature_or_with_plain_hyphen_is_refused() {
        let root = B64.encode([0u8; 32]);
        assert!(SignedCheckpoint::parse(&format!("o\n1\n{root}\n\n")).is_err());
        let s = signer(1, "o");
        let signed = SignedCheckpoint::sign(Checkpoint::new("o", 1, Hash([0; 32])), &[s]);
        let hyphen = signed.to_text().replace('\u{2014}', "-");
        assert!(SignedCheckpoint::parse(&hyphen).is_err());
    }
}
