//! The streaming verifier: reads an export line by line with O(log n) state and names the first
//! thing that does not verify.

use crate::cosign::{cosigned_by, CosignerVerifier, WitnessedBy};
use crate::entry::{check_canonical, MAX_ENTRY_BYTES};
use crate::export::{
    CheckpointLine, ExportHeader, CHECKPOINT_LINE_PREFIX, ENTRY_LINE_PREFIX, EXPORT_FORMAT,
};
use crate::hash::{leaf_hash, Hash};
use crate::keys::{KeySchedule, KeyValidity, SignatureError};
use crate::merkle::Frontier;
use crate::note::{name_ok, NoteVerifier, SignedCheckpoint};
use crate::scan::scan_entry;
use ed25519_dalek::VerifyingKey;
use std::fmt;
use std::io::{BufRead, Read};

/// Longest line accepted (an entry, the header or a checkpoint line).
pub const MAX_LINE_BYTES: usize = MAX_ENTRY_BYTES + 1024;

/// The class of a verification failure. Each has its own process exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    /// A line is not what the format allows there.
    Malformed,
    /// An entry's `prev` is not the hash of the entry before it (or that entry was altered).
    BrokenLink,
    /// Sequence numbers skip: entries are missing.
    Gap,
    /// The same entry appears twice in a row.
    Duplicate,
    /// Two different entries claim the same sequence number.
    Inserted,
    /// An entry appears after a later one.
    OutOfOrder,
    /// The entries do not hash to a checkpoint's signed root.
    RootMismatch,
    /// A signature by a known key does not verify.
    BadSignature,
    /// A checkpoint carries no signature by any known key.
    UnknownKey,
    /// A checkpoint is signed only by known keys that may not sign it (retired, or not yet
    /// authorised).
    KeyNotValid,
    /// The export ends early: a cut line, entries no checkpoint covers, or fewer entries than
    /// the trusted checkpoint.
    Truncated,
    /// The export's tree at the trusted checkpoint's size has a different root.
    NotExtension,
    /// A checkpoint (or the trusted checkpoint) names another log.
    OriginMismatch,
    /// A `key_rotated` entry is malformed or not authorised.
    BadRotation,
    /// The header's key list disagrees with what the log proves.
    HeaderMismatch,
    /// The checkpoint the auditor relies on lacks the required witness cosignatures.
    NotWitnessed,
    /// The export could not be read.
    Io,
}

impl Reason {
    pub const ALL: [Reason; 17] = [
        Reason::Io,
        Reason::Malformed,
        Reason::BrokenLink,
        Reason::Gap,
        Reason::Duplicate,
        Reason::Inserted,
        Reason::OutOfOrder,
        Reason::RootMismatch,
        Reason::BadSignature,
        Reason::UnknownKey,
        Reason::KeyNotValid,
        Reason::Truncated,
        Reason::NotExtension,
        Reason::OriginMismatch,
        Reason::BadRotation,
        Reason::HeaderMismatch,
        Reason::NotWitnessed,
    ];

    /// Process exit code of `pitboss-audit verify` for this reason.
    pub fn exit_code(self) -> u8 {
        match self {
            Reason::Io => 3,
            Reason::Malformed => 4,
            Reason::BrokenLink => 10,
            Reason::Gap => 11,
            Reason::Duplicate => 12,
            Reason::Inserted => 13,
            Reason::OutOfOrder => 14,
            Reason::RootMismatch => 15,
            Reason::BadSignature => 16,
            Reason::UnknownKey => 17,
            Reason::KeyNotValid => 18,
            Reason::Truncated => 19,
            Reason::NotExtension => 20,
            Reason::OriginMismatch => 21,
            Reason::BadRotation => 22,
            Reason::HeaderMismatch => 23,
            Reason::NotWitnessed => 24,
        }
    }

    /// Short label, as printed after the sequence number.
    pub fn label(self) -> &'static str {
        match self {
            Reason::Io => "cannot read export",
            Reason::Malformed => "malformed",
            Reason::BrokenLink => "broken link",
            Reason::Gap => "gap",
            Reason::Duplicate => "duplicate entry",
            Reason::Inserted => "inserted entry",
            Reason::OutOfOrder => "out of order",
            Reason::RootMismatch => "root mismatch",
            Reason::BadSignature => "bad signature",
            Reason::UnknownKey => "unknown key",
            Reason::KeyNotValid => "key not valid",
            Reason::Truncated => "truncated",
            Reason::NotExtension => "does not extend trusted checkpoint",
            Reason::OriginMismatch => "origin mismatch",
            Reason::BadRotation => "bad key rotation",
            Reason::HeaderMismatch => "header mismatch",
            Reason::NotWitnessed => "not witnessed",
        }
    }
}

/// The first thing that did not verify.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The first bad sequence number, when the failure has one.
    pub seq: Option<u64>,
    pub reason: Reason,
    pub detail: String,
    /// 1-based line of the export where it was found.
    pub line: u64,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.seq {
            Some(s) => write!(f, "FAIL seq {s}: {} ({})", self.reason.label(), self.detail),
            None => write!(
                f,
                "FAIL line {}: {} ({})",
                self.line,
                self.reason.label(),
                self.detail
            ),
        }
    }
}

impl std::error::Error for Failure {}

/// What a verifier trusts and how thorough it is.
#[derive(Clone, Debug, Default)]
pub struct VerifyOptions {
    /// Keys trusted from outside the log (valid from size 0 until the log retires them).
    pub anchors: Vec<VerifyingKey>,
    /// A checkpoint the auditor already holds: the export must extend it.
    pub trusted: Option<SignedCheckpoint>,
    /// Also check that every entry is byte-for-byte in RFC 8785 form (slower).
    pub check_canonical: bool,
    /// Witnesses whose cosignatures count (C2SP tlog-cosignature). Every cosignature line by
    /// one of them, on any checkpoint, must verify.
    pub witnesses: Vec<CosignerVerifier>,
    /// How many distinct witnesses must have cosigned the checkpoints the result rests on: the
    /// export's last checkpoint (it covers every entry) and the trusted checkpoint, if given.
    /// 0 requires none.
    pub witness_quorum: usize,
}

/// What a successful verification established.
#[derive(Clone, Debug)]
pub struct Summary {
    pub origin: String,
    pub entries: u64,
    pub checkpoints: u64,
    pub root: Hash,
    /// The last checkpoint, which covers every entry.
    pub last_checkpoint: SignedCheckpoint,
    /// Keys as learned from the log (named ones).
    pub keys: Vec<KeyValidity>,
    /// Whether a trusted checkpoint was given and the export extends it.
    pub extends_trusted: bool,
    /// The given witnesses that cosigned the last checkpoint.
    pub witnessed_by: Vec<WitnessedBy>,
}

#[derive(Clone, Debug)]
enum Suspect {
    /// Entry `seq`'s prev did not match; the next entry tells which one was altered.
    LinkBreak { seq: u64 },
    /// Entry `found` came where `expected` was due; the next entry tells gap from reorder.
    SeqAhead { expected: u64, found: u64 },
    /// A checkpoint of `size` signs another root than its entries hash to. If the next entry
    /// does not link to entry `size − 1` either, that entry was altered; otherwise the failure
    /// names `first_unproven`, the first entry no earlier checkpoint covers.
    RootMismatch {
        size: u64,
        first_unproven: u64,
        detail: String,
    },
}

/// The verifier state machine. Feed it lines (without their newline) in order, then `finish`.
pub struct Verifier {
    opts: VerifyOptions,
    header: Option<ExportHeader>,
    keys: KeySchedule,
    frontier: Frontier,
    head: Hash,
    line: u64,
    last_cp: Option<SignedCheckpoint>,
    checkpoints: u64,
    suspect: Option<Suspect>,
    trusted_checked: bool,
}

impl Verifier {
    pub fn new(opts: VerifyOptions) -> Verifier {
        Verifier {
            keys: KeySchedule::with_anchors(opts.anchors.iter().copied()),
            opts,
            header: None,
            frontier: Frontier::new(),
            head: Hash::ZERO,
            line: 0,
            last_cp: None,
            checkpoints: 0,
            suspect: None,
            trusted_checked: false,
        }
    }

    /// Entries read so far.
    pub fn entries(&self) -> u64 {
        self.frontier.size()
    }

    fn fail(&self, seq: Option<u64>, reason: Reason, detail: impl Into<String>) -> Failure {
        Failure {
            seq,
            reason,
            detail: detail.into(),
            line: self.line,
        }
    }

    /// Takes one line, without its trailing newline.
    pub fn push_line(&mut self, line: &[u8]) -> Result<(), Failure> {
        self.line += 1;
        if self.header.is_none() {
            return self.on_header(line);
        }
        if line.starts_with(ENTRY_LINE_PREFIX) {
            self.on_entry(line)
        } else if line.starts_with(CHECKPOINT_LINE_PREFIX) {
            self.on_checkpoint(line)
        } else {
            let seq = Some(self.frontier.size());
            Err(self.fail(
                seq,
                Reason::Malformed,
                "line is neither an entry nor a checkpoint",
            ))
        }
    }

    fn on_header(&mut self, line: &[u8]) -> Result<(), Failure> {
        let h: ExportHeader = serde_json::from_slice(line)
            .map_err(|e| self.fail(None, Reason::Malformed, format!("header: {e}")))?;
        // One spelling: the header is the RFC 8785 form of its members (`until_size` written
        // as null when absent, `announced_seq` left out when absent).
        if serde_json_canonicalizer::to_vec(&h).ok().as_deref() != Some(line) {
            return Err(self.fail(
                None,
                Reason::Malformed,
                "header is not in RFC 8785 canonical form",
            ));
        }
        if h.format != EXPORT_FORMAT {
            return Err(self.fail(
                None,
                Reason::Malformed,
                format!("header: unsupported format {:?}", h.format),
            ));
        }
        if !name_ok(&h.origin) {
            return Err(self.fail(None, Reason::Malformed, "header: bad origin"));
        }
        if let Some(t) = &self.opts.trusted {
            if t.checkpoint.origin != h.origin {
                return Err(self.fail(
                    None,
                    Reason::OriginMismatch,
                    format!(
                        "trusted checkpoint is for {:?}, export is of {:?}",
                        t.checkpoint.origin, h.origin
                    ),
                ));
            }
        }
        self.keys
            .set_origin(&h.origin)
            .map_err(|e| self.fail(None, Reason::Malformed, format!("header: {e}")))?;
        if let Some(t) = &self.opts.trusted {
            let t = t.clone();
            self.require_quorum(&t, None, "trusted checkpoint")?;
        }
        self.header = Some(h);
        self.check_trusted()
    }

    /// Every cosignature by a given witness on `cp` must verify; with `quorum_needed`, at least
    /// `witness_quorum` distinct given witnesses must have cosigned it.
    fn check_witnessed(
        &self,
        cp: &SignedCheckpoint,
        here: Option<u64>,
        what: &str,
    ) -> Result<Vec<WitnessedBy>, Failure> {
        let size = cp.checkpoint.size;
        let by = cosigned_by(cp, &self.opts.witnesses).map_err(|e| {
            self.fail(
                here,
                Reason::BadSignature,
                format!("{what} of size {size}: {e}"),
            )
        })?;
        Ok(by)
    }

    fn require_quorum(
        &self,
        cp: &SignedCheckpoint,
        here: Option<u64>,
        what: &str,
    ) -> Result<Vec<WitnessedBy>, Failure> {
        let by = self.check_witnessed(cp, here, what)?;
        let need = self.opts.witness_quorum;
        if by.len() < need {
            return Err(self.fail(
                here,
                Reason::NotWitnessed,
                format!(
                    "{what} of size {} carries valid cosignatures by {} of the given witnesses ({}), {need} required",
                    cp.checkpoint.size,
                    by.len(),
                    if by.is_empty() {
                        "none".to_owned()
                    } else {
                        by.iter().map(|w| w.witness.as_str()).collect::<Vec<_>>().join(", ")
                    }
                ),
            ));
        }
        Ok(by)
    }

    fn on_entry(&mut self, line: &[u8]) -> Result<(), Failure> {
        let expected = self.frontier.size();
        if let Some(Suspect::RootMismatch {
            size,
            first_unproven,
            detail,
        }) = &self.suspect
        {
            let altered =
                scan_entry(line).is_ok_and(|e| e.seq == *size && !self.head.eq_hex(e.prev));
            return Err(if altered {
                self.fail(
                    Some(size - 1),
                    Reason::RootMismatch,
                    format!(
                        "{detail}; entry {size} does not link to entry {} either: entry {} was altered",
                        size - 1,
                        size - 1
                    ),
                )
            } else {
                self.fail(Some(*first_unproven), Reason::RootMismatch, detail.clone())
            });
        }
        let e = match scan_entry(line) {
            Ok(e) => e,
            Err(err) => {
                if let Some(Suspect::SeqAhead { expected, found }) = self.suspect {
                    return Err(self.gap(expected, found));
                }
                return Err(self.fail(Some(expected), Reason::Malformed, err.to_string()));
            }
        };
        match self.suspect {
            Some(Suspect::SeqAhead { expected, found }) => {
                return Err(if e.seq == expected {
                    self.fail(
                        Some(expected),
                        Reason::OutOfOrder,
                        format!("entry {expected} comes after entry {found}"),
                    )
                } else {
                    self.gap(expected, found)
                });
            }
            Some(Suspect::LinkBreak { .. } | Suspect::RootMismatch { .. }) | None => {}
        }
        if e.seq != expected {
            if e.seq > expected {
                self.suspect = Some(Suspect::SeqAhead {
                    expected,
                    found: e.seq,
                });
                return Ok(());
            }
            let h = leaf_hash(line);
            return Err(if e.seq + 1 == expected && h == self.head {
                self.fail(
                    Some(e.seq),
                    Reason::Duplicate,
                    format!("entry {} appears twice", e.seq),
                )
            } else if e.seq + 1 == expected {
                self.fail(
                    Some(e.seq),
                    Reason::Inserted,
                    format!("two different entries claim seq {}", e.seq),
                )
            } else {
                self.fail(
                    Some(e.seq),
                    Reason::OutOfOrder,
                    format!("entry {} appears after entry {}", e.seq, expected - 1),
                )
            });
        }
        if self.opts.check_canonical {
            check_canonical(line)
                .map_err(|err| self.fail(Some(expected), Reason::Malformed, err.to_string()))?;
        }
        let h = leaf_hash(line);
        let link_ok = self.head.eq_hex(e.prev);
        if let Some(Suspect::LinkBreak { seq: m }) = self.suspect {
            // Entry m did not link to m−1. If this entry links to m, entry m is intact as stored
            // and it is m−1 whose bytes changed; otherwise m's own prev was changed.
            return Err(if link_ok {
                self.fail(
                    Some(m - 1),
                    Reason::BrokenLink,
                    format!(
                        "hash of entry {} does not match prev_hash of entry {m}: entry {} was altered",
                        m - 1,
                        m - 1
                    ),
                )
            } else {
                self.broken_link(m)
            });
        }
        if !link_ok {
            if expected == 0 {
                return Err(self.fail(
                    Some(0),
                    Reason::BrokenLink,
                    "prev_hash of entry 0 must be 64 zeros",
                ));
            }
            self.suspect = Some(Suspect::LinkBreak { seq: expected });
        } else if e.kind == "key_rotated" {
            self.keys
                .on_rotation_entry(expected, e.payload)
                .map_err(|err| self.fail(Some(expected), Reason::BadRotation, err.to_string()))?;
        }
        self.frontier.push(h);
        self.head = h;
        if self.suspect.is_none() {
            self.check_trusted()?;
        }
        Ok(())
    }

    fn gap(&self, expected: u64, found: u64) -> Failure {
        self.fail(
            Some(expected),
            Reason::Gap,
            if found == expected + 1 {
                format!("entry {expected} is missing (next is {found})")
            } else {
                format!("entries {expected}..{} are missing", found - 1)
            },
        )
    }

    fn broken_link(&self, m: u64) -> Failure {
        self.fail(
            Some(m),
            Reason::BrokenLink,
            format!("prev_hash does not match hash of entry {}", m - 1),
        )
    }

    fn on_checkpoint(&mut self, line: &[u8]) -> Result<(), Failure> {
        if self.suspect.is_some() {
            // A failure is already certain; the next entry or the end names it.
            return Ok(());
        }
        let count = self.frontier.size();
        let here = count.checked_sub(1);
        let cl: CheckpointLine = serde_json::from_slice(line)
            .map_err(|e| self.fail(here, Reason::Malformed, format!("checkpoint line: {e}")))?;
        if serde_json_canonicalizer::to_vec(&cl).ok().as_deref() != Some(line) {
            return Err(self.fail(
                here,
                Reason::Malformed,
                "checkpoint line is not in RFC 8785 canonical form",
            ));
        }
        let cp = SignedCheckpoint::parse(&cl.checkpoint)
            .map_err(|e| self.fail(here, Reason::Malformed, e.to_string()))?;
        let size = cp.checkpoint.size;
        let origin = &self.header.as_ref().expect("header read first").origin;
        if &cp.checkpoint.origin != origin {
            return Err(self.fail(
                here,
                Reason::OriginMismatch,
                format!(
                    "checkpoint of size {size} is for {:?}, export is of {origin:?}",
                    cp.checkpoint.origin
                ),
            ));
        }
        // Signatures before the size: a size altered in place breaks the signature, and the
        // checkpoint, not the entries, is then what was forged.
        self.keys
            .on_checkpoint(&cp)
            .map_err(|e| self.signature_failure(here, size, "checkpoint", e))?;
        self.check_witnessed(&cp, here, "checkpoint")?;
        if size > count {
            return Err(self.fail(
                Some(count),
                Reason::Gap,
                format!(
                    "checkpoint of size {size} follows only {count} entries: entries {count}..{} are missing",
                    size - 1
                ),
            ));
        }
        if size < count {
            return Err(self.fail(
                here,
                Reason::OutOfOrder,
                format!("checkpoint of size {size} placed after {count} entries"),
            ));
        }
        let root = self.frontier.root();
        if root != cp.checkpoint.root {
            let first_unproven = self
                .last_cp
                .as_ref()
                .map_or(0, |c| c.checkpoint.size)
                .min(size.saturating_sub(1));
            self.suspect = Some(Suspect::RootMismatch {
                size,
                first_unproven,
                detail: format!(
                    "checkpoint of size {size} signs root {}, entries 0..{} hash to {root}; entries from seq {first_unproven} on are not proven",
                    cp.checkpoint.root,
                    size.saturating_sub(1),
                ),
            });
            return Ok(());
        }
        self.checkpoints += 1;
        self.last_cp = Some(cp);
        Ok(())
    }

    fn signature_failure(
        &self,
        seq: Option<u64>,
        size: u64,
        what: &str,
        e: SignatureError,
    ) -> Failure {
        let reason = match e {
            SignatureError::BadSignature { .. } => Reason::BadSignature,
            SignatureError::UnknownKey { .. } => Reason::UnknownKey,
            SignatureError::KeyNotValid { .. } => Reason::KeyNotValid,
        };
        self.fail(seq, reason, format!("{what} of size {size}: {e}"))
    }

    /// Once the tree reaches the trusted checkpoint's size, its root must be the trusted root.
    fn check_trusted(&mut self) -> Result<(), Failure> {
        let Some(t) = &self.opts.trusted else {
            return Ok(());
        };
        let size = t.checkpoint.size;
        if self.trusted_checked || self.frontier.size() != size {
            return Ok(());
        }
        let here = size.checked_sub(1);
        self.keys
            .check_checkpoint(t)
            .map_err(|e| self.signature_failure(here, size, "trusted checkpoint", e))?;
        let root = self.frontier.root();
        if root != t.checkpoint.root {
            return Err(self.fail(
                here,
                Reason::NotExtension,
                format!(
                    "trusted checkpoint of size {size} has root {}, this export's first {size} entries hash to {root}",
                    t.checkpoint.root
                ),
            ));
        }
        self.trusted_checked = true;
        Ok(())
    }

    /// Ends the stream: checks coverage, the trusted checkpoint and the header's claims.
    pub fn finish(self) -> Result<Summary, Failure> {
        match &self.suspect {
            Some(Suspect::LinkBreak { seq }) => return Err(self.broken_link(*seq)),
            Some(Suspect::SeqAhead { expected, found }) => return Err(self.gap(*expected, *found)),
            Some(Suspect::RootMismatch {
                first_unproven,
                detail,
                ..
            }) => {
                return Err(self.fail(Some(*first_unproven), Reason::RootMismatch, detail.clone()))
            }
            None => {}
        }
        let Some(header) = &self.header else {
            return Err(self.fail(None, Reason::Truncated, "export is empty"));
        };
        let count = self.frontier.size();
        if let Some(t) = &self.opts.trusted {
            if count < t.checkpoint.size {
                return Err(self.fail(
                    Some(count),
                    Reason::Truncated,
                    format!(
                        "export has {count} entries, the trusted checkpoint covers {}",
                        t.checkpoint.size
                    ),
                ));
            }
        }
        let covered = self.last_cp.as_ref().map(|c| c.checkpoint.size);
        if covered != Some(count) {
            let from = covered.unwrap_or(0);
            return Err(self.fail(
                Some(from),
                Reason::Truncated,
                if count == 0 {
                    "no checkpoint".to_owned()
                } else {
                    format!(
                        "entries {from}..{} are not covered by a signed checkpoint",
                        count - 1
                    )
                },
            ));
        }
        let mut listed: Vec<VerifyingKey> = Vec::with_capacity(header.keys.len());
        for claimed in &header.keys {
            let v = NoteVerifier::from_vkey(&claimed.vkey)
                .map_err(|e| self.fail(None, Reason::HeaderMismatch, format!("header key: {e}")))?;
            if v.name() != header.origin {
                return Err(self.fail(
                    None,
                    Reason::HeaderMismatch,
                    format!("header key {} is not named by the origin", claimed.vkey),
                ));
            }
            if listed.contains(v.key()) {
                return Err(self.fail(
                    None,
                    Reason::HeaderMismatch,
                    format!("header lists key {} twice", claimed.vkey),
                ));
            }
            listed.push(*v.key());
            let learned = self.keys.validity_of(v.key());
            let claim = (claimed.from_size, claimed.until_size, claimed.authorised);
            if learned != Some(claim) {
                return Err(self.fail(
                    None,
                    Reason::HeaderMismatch,
                    format!(
                        "header claims key {} valid for sizes {}..{} (authorised: {}), the log shows {}",
                        claimed.vkey,
                        claim.0,
                        claim.1.map_or("".to_owned(), |u| u.to_string()),
                        claim.2,
                        match learned {
                            None => "no such key".to_owned(),
                            Some((f, u, a)) => format!(
                                "sizes {f}..{} (authorised: {a})",
                                u.map_or("".to_owned(), |u| u.to_string())
                            ),
                        }
                    ),
                ));
            }
        }
        if let Some(k) = self.keys.scheduled_keys().find(|k| !listed.contains(k)) {
            let name = NoteVerifier::new(&header.origin, *k)
                .map(|v| v.to_vkey())
                .unwrap_or_default();
            return Err(self.fail(
                None,
                Reason::HeaderMismatch,
                format!("header omits key {name}, which the log schedules"),
            ));
        }
        let last = self.last_cp.clone().expect("coverage checked above");
        let witnessed_by = self.require_quorum(&last, count.checked_sub(1), "last checkpoint")?;
        Ok(Summary {
            origin: header.origin.clone(),
            entries: count,
            checkpoints: self.checkpoints,
            root: last.checkpoint.root,
            last_checkpoint: last,
            keys: self.keys.validity(),
            extends_trusted: self.opts.trusted.is_some(),
            witnessed_by,
        })
    }
}

/// Verifies a whole export from a reader, calling `progress` with the bytes read so far every
/// few thousand lines.
pub fn verify_export<R: BufRead>(
    mut r: R,
    opts: VerifyOptions,
    mut progress: impl FnMut(u64),
) -> Result<Summary, Failure> {
    let mut v = Verifier::new(opts);
    let mut buf = Vec::with_capacity(4096);
    let mut bytes = 0u64;
    loop {
        buf.clear();
        let n = (&mut r)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|e| Failure {
                seq: None,
                reason: Reason::Io,
                detail: e.to_string(),
                line: v.line + 1,
            })?;
        if n == 0 {
            break;
        }
        bytes += n as u64;
        if buf.last() != Some(&b'\n') {
            let seq = Some(v.entries());
            return Err(Failure {
                seq,
                reason: if n > MAX_LINE_BYTES {
                    Reason::Malformed
                } else {
                    Reason::Truncated
                },
                detail: if n > MAX_LINE_BYTES {
                    format!("line longer than {MAX_LINE_BYTES} bytes")
                } else {
                    "last line is cut (no final newline)".to_owned()
                },
                line: v.line + 1,
            });
        }
        buf.pop();
        v.push_line(&buf)?;
        if v.line.is_multiple_of(8192) {
            progress(bytes);
        }
    }
    progress(bytes);
    v.finish()
}
