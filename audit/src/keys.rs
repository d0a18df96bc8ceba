//! Which keys may sign which checkpoints, learned from the log itself.
//!
//! The verifier starts from keys it trusts (its anchors). A `key_rotated` entry with stage
//! `begin` announces a new key; the new key is *authorised* once a checkpoint covering that entry
//! is accepted on the signature of a key that was already authorised, and from then on it may
//! sign checkpoints of size > the entry's seq. A `key_rotated` entry with stage `end` retires the
//! old key: it may then sign only checkpoints of size ≤ that entry's seq. Between the two,
//! checkpoints carry both signatures. See FORMAT.md, "Key rotation".

use crate::entry::{EntryKind, Ids, NewEntry, Timestamp};
use crate::note::{NoteError, NoteSignature, NoteVerifier, SignedCheckpoint};
use ed25519_dalek::VerifyingKey;
use serde::{Deserialize, Serialize};

/// A key's place in the schedule, as written in export headers and in [`crate::LogState`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyValidity {
    /// Verifier key string, `<name>+<id>+<base64(0x01 ‖ key)>`.
    pub vkey: String,
    /// Smallest checkpoint size the key may sign: 0 for an initial key, else the seq of its
    /// rotation `begin` entry + 1.
    pub from_size: u64,
    /// Largest checkpoint size the key may sign, once retired by a rotation `end` entry.
    pub until_size: Option<u64>,
    /// Seq of the `begin` entry that announced the key; absent for initial keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub announced_seq: Option<u64>,
    /// Whether an accepted checkpoint covering the announcement was signed by an older key.
    pub authorised: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct KeyState {
    key: VerifyingKey,
    /// The key's signed-note name. Anchors read from PEM take the log's origin once it is known
    /// (the export header); until then they have none.
    verifier: Option<NoteVerifier>,
    from_size: u64,
    until_size: Option<u64>,
    announced_seq: Option<u64>,
    authorised: bool,
    /// Given by the verifier from outside the log.
    anchor: bool,
    /// Made an accepted checkpoint acceptable.
    relied_on: bool,
}

impl KeyState {
    fn valid_at(&self, size: u64) -> bool {
        self.authorised && size >= self.from_size && self.until_size.is_none_or(|u| size <= u)
    }

    /// Whether a signature line claims to be by this key: its name and key id are this key's
    /// (the signed-note rule). A key without a name yet is matched under the line's own name.
    fn claims(&self, sig: &NoteSignature) -> bool {
        match &self.verifier {
            Some(v) => v.is_named_by(sig),
            None => sig.is_by(&self.key),
        }
    }

    fn anchor(key: VerifyingKey, verifier: Option<NoteVerifier>) -> KeyState {
        KeyState {
            key,
            verifier,
            from_size: 0,
            until_size: None,
            announced_seq: None,
            authorised: true,
            anchor: true,
            relied_on: false,
        }
    }
}

/// A rotation begun and not yet ended: the log's signers sign with both keys meanwhile.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenRotation {
    /// Seq of the `begin` entry.
    pub begin_seq: u64,
    /// Verifier key strings of the key being replaced and of its replacement.
    pub old_key: String,
    pub new_key: String,
}

/// The payload of a `key_rotated` entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RotationPayload {
    pub stage: RotationStage,
    /// Verifier key string of the key being replaced.
    pub old_key: String,
    /// Verifier key string of the replacement.
    pub new_key: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RotationStage {
    /// The new key is announced; checkpoints are signed by both from now on.
    Begin,
    /// The old key is retired.
    End,
}

/// Builds the `key_rotated` entry announcing `new` as the successor of `old`.
pub fn rotation_begin_entry(ts: Timestamp, old: &NoteVerifier, new: &NoteVerifier) -> NewEntry {
    rotation_entry(ts, RotationStage::Begin, old, new)
}

/// Builds the `key_rotated` entry retiring `old` in favour of `new`.
pub fn rotation_end_entry(ts: Timestamp, old: &NoteVerifier, new: &NoteVerifier) -> NewEntry {
    rotation_entry(ts, RotationStage::End, old, new)
}

fn rotation_entry(
    ts: Timestamp,
    stage: RotationStage,
    old: &NoteVerifier,
    new: &NoteVerifier,
) -> NewEntry {
    let payload = RotationPayload {
        stage,
        old_key: old.to_vkey(),
        new_key: new.to_vkey(),
    };
    NewEntry {
        ts,
        kind: EntryKind::KeyRotated.into(),
        ids: Ids::default(),
        payload: serde_json::to_value(payload).expect("a struct of strings always serialises"),
    }
}

/// Why a rotation entry is not acceptable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RotationError {
    #[error("key_rotated payload is malformed: {0}")]
    Payload(String),
    #[error("key_rotated payload names a bad key: {0}")]
    Key(NoteError),
    #[error("key_rotated names a key called {name:?}; every key of this log is named by its origin {origin:?}")]
    KeyName { name: String, origin: String },
    #[error("old key of the rotation is not a currently authorised, unretired key")]
    OldKeyNotActive,
    #[error("new key of the rotation is already known")]
    NewKeyKnown,
    #[error("the new key signed a checkpoint before the log announced it")]
    NewKeyUsedEarly,
    #[error("a rotation begun at seq {begin_seq} is still open: end it before beginning another")]
    RotationOpen { begin_seq: u64 },
    #[error("rotation end without a rotation begun")]
    NoOpenRotation,
    #[error("rotation end names other keys than the rotation begun at seq {begin_seq}")]
    EndMismatch { begin_seq: u64 },
    #[error("rotation end names a new key that was not announced and authorised by a checkpoint")]
    NewKeyNotAuthorised,
}

/// Why a checkpoint's signatures do not make it acceptable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("bad signature by key {name}+{id}")]
    BadSignature { name: String, id: String },
    #[error("no signature by a known key (key ids: {ids})")]
    UnknownKey { ids: String },
    #[error("signed only by keys not valid for a checkpoint of size {size} ({why})")]
    KeyNotValid { size: u64, why: String },
}

/// The set of keys and their validity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeySchedule {
    keys: Vec<KeyState>,
    /// The log's origin: every key is named by it. Unknown to a verifier until the header.
    origin: Option<String>,
    open: Option<OpenRotation>,
}

impl KeySchedule {
    /// Starts from trusted keys, valid from size 0, without names until [`KeySchedule::set_origin`].
    pub fn with_anchors(anchors: impl IntoIterator<Item = VerifyingKey>) -> KeySchedule {
        let mut keys: Vec<KeyState> = Vec::new();
        for key in anchors {
            if keys.iter().all(|k| k.key != key) {
                keys.push(KeyState::anchor(key, None));
            }
        }
        KeySchedule {
            keys,
            origin: None,
            open: None,
        }
    }

    /// Starts from named trusted keys (a producer knows its key names).
    pub fn with_named_anchors<'a>(anchors: impl IntoIterator<Item = &'a NoteVerifier>) -> Self {
        let mut s = KeySchedule {
            keys: Vec::new(),
            origin: None,
            open: None,
        };
        for v in anchors {
            if s.keys.iter().all(|k| k.key != *v.key()) {
                s.keys.push(KeyState::anchor(*v.key(), Some(v.clone())));
            }
        }
        s
    }

    /// Names the log: every key is named by its origin, so anchors without a name take it.
    pub fn set_origin(&mut self, origin: &str) -> Result<(), NoteError> {
        for k in &mut self.keys {
            if k.verifier.is_none() {
                k.verifier = Some(NoteVerifier::new(origin, k.key)?);
            }
        }
        self.origin = Some(origin.to_owned());
        Ok(())
    }

    /// Rebuilds a schedule from its stored form.
    pub fn from_validity(
        list: &[KeyValidity],
        origin: &str,
        open: Option<OpenRotation>,
    ) -> Result<KeySchedule, NoteError> {
        let mut keys = Vec::with_capacity(list.len());
        for k in list {
            let v = NoteVerifier::from_vkey(&k.vkey)?;
            keys.push(KeyState {
                key: *v.key(),
                verifier: Some(v),
                from_size: k.from_size,
                until_size: k.until_size,
                announced_seq: k.announced_seq,
                authorised: k.authorised,
                anchor: k.announced_seq.is_none(),
                relied_on: k.authorised,
            });
        }
        Ok(KeySchedule {
            keys,
            origin: Some(origin.to_owned()),
            open,
        })
    }

    /// The stored form. Anchors without a name (read from PEM, before the origin is known) are
    /// left out: a verifier key string needs a name.
    pub fn validity(&self) -> Vec<KeyValidity> {
        self.keys
            .iter()
            .filter_map(|k| {
                k.verifier.as_ref().map(|v| KeyValidity {
                    vkey: v.to_vkey(),
                    from_size: k.from_size,
                    until_size: k.until_size,
                    announced_seq: k.announced_seq,
                    authorised: k.authorised,
                })
            })
            .collect()
    }

    /// The rotation begun and not yet ended, if any.
    pub fn open_rotation(&self) -> Option<&OpenRotation> {
        self.open.as_ref()
    }

    /// Validity of one key, if known.
    pub fn validity_of(&self, key: &VerifyingKey) -> Option<(u64, Option<u64>, bool)> {
        self.keys
            .iter()
            .find(|k| k.key == *key)
            .map(|k| (k.from_size, k.until_size, k.authorised))
    }

    /// The keys an export header must list: every key the log announced, and every trusted key
    /// that made a checkpoint acceptable. (A trusted key that neither happened is the
    /// auditor's business, not the log's.)
    pub fn scheduled_keys(&self) -> impl Iterator<Item = &VerifyingKey> {
        self.keys
            .iter()
            .filter(|k| k.announced_seq.is_some() || k.relied_on)
            .map(|k| &k.key)
    }

    /// Keys that may sign a checkpoint of `size`.
    pub fn valid_keys_at(&self, size: u64) -> impl Iterator<Item = &VerifyingKey> {
        self.keys
            .iter()
            .filter(move |k| k.valid_at(size))
            .map(|k| &k.key)
    }

    /// Takes note of a `key_rotated` entry at `seq`.
    pub fn on_rotation_entry(&mut self, seq: u64, payload: &str) -> Result<(), RotationError> {
        let p: RotationPayload =
            serde_json::from_str(payload).map_err(|e| RotationError::Payload(e.to_string()))?;
        let old = NoteVerifier::from_vkey(&p.old_key).map_err(RotationError::Key)?;
        let new = NoteVerifier::from_vkey(&p.new_key).map_err(RotationError::Key)?;
        if let Some(origin) = &self.origin {
            for v in [&old, &new] {
                if v.name() != origin {
                    return Err(RotationError::KeyName {
                        name: v.name().to_owned(),
                        origin: origin.clone(),
                    });
                }
            }
        }
        // The old key must be able to sign the checkpoint that will cover this entry.
        let old_idx = self
            .keys
            .iter()
            .position(|k| k.key == *old.key() && k.valid_at(seq + 1))
            .ok_or(RotationError::OldKeyNotActive)?;
        match p.stage {
            RotationStage::Begin => {
                if old.key() == new.key() {
                    return Err(RotationError::NewKeyKnown);
                }
                if let Some(open) = &self.open {
                    return Err(RotationError::RotationOpen {
                        begin_seq: open.begin_seq,
                    });
                }
                if self.keys[old_idx].verifier.is_none() {
                    self.keys[old_idx].verifier = Some(old);
                }
                let announced = KeyState {
                    key: *new.key(),
                    verifier: Some(new),
                    from_size: seq + 1,
                    until_size: None,
                    announced_seq: Some(seq),
                    authorised: false,
                    anchor: false,
                    relied_on: false,
                };
                match self.keys.iter().position(|k| k.key == announced.key) {
                    None => self.keys.push(announced),
                    // An auditor may pass every key the log ever published: a trusted key that
                    // the log announces now takes the log's schedule, as long as it has not
                    // already signed on its own.
                    Some(i)
                        if self.keys[i].anchor
                            && self.keys[i].announced_seq.is_none()
                            && self.keys[i].until_size.is_none() =>
                    {
                        if self.keys[i].relied_on {
                            return Err(RotationError::NewKeyUsedEarly);
                        }
                        self.keys[i] = KeyState {
                            anchor: true,
                            ..announced
                        };
                    }
                    Some(_) => return Err(RotationError::NewKeyKnown),
                }
                self.open = Some(OpenRotation {
                    begin_seq: seq,
                    old_key: p.old_key,
                    new_key: p.new_key,
                });
            }
            RotationStage::End => {
                let open = self.open.as_ref().ok_or(RotationError::NoOpenRotation)?;
                let same = |a: &str, b: &NoteVerifier| {
                    NoteVerifier::from_vkey(a).is_ok_and(|v| v.key() == b.key())
                };
                if !same(&open.old_key, &old) || !same(&open.new_key, &new) {
                    return Err(RotationError::EndMismatch {
                        begin_seq: open.begin_seq,
                    });
                }
                let new_ok = self
                    .keys
                    .iter()
                    .any(|k| k.key == *new.key() && k.valid_at(seq + 1));
                if !new_ok {
                    return Err(RotationError::NewKeyNotAuthorised);
                }
                self.keys[old_idx].until_size = Some(seq);
                self.open = None;
            }
        }
        Ok(())
    }

    /// Checks a checkpoint's signatures and, when it is accepted, authorises the keys whose
    /// announcement it covers. Every signature line by a known key must verify; lines by
    /// unknown keys are ignored (they may be witnesses' cosignatures). Returns the keys whose
    /// signatures made it acceptable.
    pub fn on_checkpoint(
        &mut self,
        cp: &SignedCheckpoint,
    ) -> Result<Vec<VerifyingKey>, SignatureError> {
        let accepted = self.check_checkpoint(cp)?;
        let size = cp.checkpoint.size;
        for k in &mut self.keys {
            if accepted.contains(&k.key) {
                k.relied_on = true;
            }
            if !k.authorised && k.announced_seq.is_some_and(|s| s < size) {
                k.authorised = true;
            }
        }
        Ok(accepted)
    }

    /// As [`KeySchedule::on_checkpoint`] without authorising anything.
    pub fn check_checkpoint(
        &self,
        cp: &SignedCheckpoint,
    ) -> Result<Vec<VerifyingKey>, SignatureError> {
        let text = cp.checkpoint.text();
        let size = cp.checkpoint.size;
        let mut accepted: Vec<VerifyingKey> = Vec::new();
        let mut known_but_invalid = Vec::new();
        // Every line by a known key is checked, repeats included; a key counts once.
        for sig in &cp.signatures {
            for k in self.keys.iter().filter(|k| k.claims(sig)) {
                if !sig.verify(text.as_bytes(), &k.key) {
                    return Err(SignatureError::BadSignature {
                        name: sig.name.clone(),
                        id: hex4(sig.key_id),
                    });
                }
                if k.valid_at(size) {
                    if !accepted.contains(&k.key) {
                        accepted.push(k.key);
                    }
                } else {
                    known_but_invalid.push(describe_invalid(k, size));
                }
            }
        }
        if !accepted.is_empty() {
            return Ok(accepted);
        }
        if !known_but_invalid.is_empty() {
            known_but_invalid.dedup();
            return Err(SignatureError::KeyNotValid {
                size,
                why: known_but_invalid.join("; "),
            });
        }
        Err(SignatureError::UnknownKey {
            ids: cp
                .signatures
                .iter()
                .map(|s| format!("{}+{}", s.name, hex4(s.key_id)))
                .collect::<Vec<_>>()
                .join(", "),
        })
    }
}

fn describe_invalid(k: &KeyState, size: u64) -> String {
    let name = k
        .verifier
        .as_ref()
        .map(|v| v.to_vkey())
        .unwrap_or_else(|| "anchor key".to_owned());
    if !k.authorised {
        format!("{name} is announced but not yet authorised by a checkpoint signed by an older key")
    } else if size < k.from_size {
        format!("{name} is valid only from size {}", k.from_size)
    } else {
        format!(
            "{name} was retired after size {}",
            k.until_size.unwrap_or_default()
        )
    }
}

/// Four bytes as 8 hex digits.
pub fn hex4(b: [u8; 4]) -> String {
    format!("{:02x}{:02x}{:02x}{:02x}", b[0], b[1], b[2], b[3])
}
