//! Consistency proofs as files: that the tree of one signed checkpoint is a prefix of the tree of
//! a later one (RFC 6962 §2.1.2 PROOF, checked as RFC 9162 §2.1.4.2 says), made from an export
//! in one streaming pass and checked with the public key alone.

use crate::cosign::{cosigned_by, CosignError, CosignerVerifier, WitnessedBy};
use crate::export::{CheckpointLine, CHECKPOINT_LINE_PREFIX, ENTRY_LINE_PREFIX};
use crate::hash::{leaf_hash, Hash};
use crate::merkle::{
    consistency_proof_ranges, verify_consistency, Frontier, ProofError, RangeHasher,
};
use crate::note::SignedCheckpoint;
use crate::scan::scan_entry;
use crate::verify::MAX_LINE_BYTES;
use ed25519_dalek::VerifyingKey;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Read, Seek};

/// Value of a consistency proof file's `format` member.
pub const CONSISTENCY_FORMAT: &str = "pitboss-audit-consistency-proof/1";

/// A consistency proof file (JSON): the proof that the tree of `old_size` leaves is a prefix of
/// the tree of `new_size` leaves. The roots come from the two checkpoints it is checked against.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConsistencyProofFile {
    pub format: String,
    pub old_size: u64,
    pub new_size: u64,
    /// RFC 6962 PROOF(old_size, D[new_size]), each hash in hex; empty when `old_size` is 0 or
    /// equals `new_size`.
    pub proof: Vec<Hash>,
}

impl ConsistencyProofFile {
    pub fn new(old_size: u64, new_size: u64, proof: Vec<Hash>) -> ConsistencyProofFile {
        ConsistencyProofFile {
            format: CONSISTENCY_FORMAT.to_owned(),
            old_size,
            new_size,
            proof,
        }
    }
}

/// Why two checkpoints are not shown consistent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConsistencyError {
    #[error("not a proof file of format {CONSISTENCY_FORMAT}")]
    Format,
    #[error("the checkpoints name different logs ({old:?} and {new:?})")]
    Origin { old: String, new: String },
    #[error("the {which} checkpoint has no valid signature by the given key(s)")]
    Signature { which: &'static str },
    #[error(
        "the proof is for sizes {proof_old} → {proof_new}, the checkpoints have {old} → {new}"
    )]
    Sizes {
        proof_old: u64,
        proof_new: u64,
        old: u64,
        new: u64,
    },
    #[error("the newer checkpoint: {0}")]
    Cosignature(CosignError),
    #[error("the newer checkpoint carries cosignatures by {found} of the given witnesses, {needed} required")]
    NotWitnessed { found: usize, needed: usize },
    #[error("the proof does not show the older tree inside the newer one: {0}")]
    Proof(#[from] ProofError),
}

/// What a checked consistency proof establishes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckedConsistency {
    pub origin: String,
    pub old_size: u64,
    pub new_size: u64,
    pub new_root: Hash,
    pub witnessed_by: Vec<WitnessedBy>,
}

/// Checks that `new` extends `old`: both signed by one of `keys` (under the origin as key
/// name), of one origin, and `proof` connects their roots. With `witness_quorum` > 0, the newer
/// checkpoint must also carry that many cosignatures by distinct `witnesses`.
pub fn check_consistency(
    old: &SignedCheckpoint,
    new: &SignedCheckpoint,
    proof: &ConsistencyProofFile,
    keys: &[VerifyingKey],
    witnesses: &[CosignerVerifier],
    witness_quorum: usize,
) -> Result<CheckedConsistency, ConsistencyError> {
    if proof.format != CONSISTENCY_FORMAT {
        return Err(ConsistencyError::Format);
    }
    if old.checkpoint.origin != new.checkpoint.origin {
        return Err(ConsistencyError::Origin {
            old: old.checkpoint.origin.clone(),
            new: new.checkpoint.origin.clone(),
        });
    }
    for (which, cp) in [("older", old), ("newer", new)] {
        if !keys.iter().any(|k| cp.signed_by(k)) {
            return Err(ConsistencyError::Signature { which });
        }
    }
    if proof.old_size != old.checkpoint.size || proof.new_size != new.checkpoint.size {
        return Err(ConsistencyError::Sizes {
            proof_old: proof.old_size,
            proof_new: proof.new_size,
            old: old.checkpoint.size,
            new: new.checkpoint.size,
        });
    }
    let witnessed_by = cosigned_by(new, witnesses).map_err(ConsistencyError::Cosignature)?;
    if witnessed_by.len() < witness_quorum {
        return Err(ConsistencyError::NotWitnessed {
            found: witnessed_by.len(),
            needed: witness_quorum,
        });
    }
    verify_consistency(
        old.checkpoint.size,
        new.checkpoint.size,
        &old.checkpoint.root,
        &new.checkpoint.root,
        &proof.proof,
    )?;
    Ok(CheckedConsistency {
        origin: new.checkpoint.origin.clone(),
        old_size: old.checkpoint.size,
        new_size: new.checkpoint.size,
        new_root: new.checkpoint.root,
        witnessed_by,
    })
}

/// Why a consistency proof could not be made from an export.
#[derive(Debug, thiserror::Error)]
pub enum ProveConsistencyError {
    #[error("reading export: {0}")]
    Io(#[from] std::io::Error),
    #[error("export line {line}: {detail}")]
    Malformed { line: u64, detail: String },
    #[error("old size {old} is larger than new size {new}")]
    SizesOutOfOrder { old: u64, new: u64 },
    #[error("the export has {entries} entries, fewer than {new}")]
    TooShort { entries: u64, new: u64 },
    #[error("the export has no checkpoint")]
    NoCheckpoint,
    #[error("the export's entries 0..{size} hash to {computed}, its checkpoint of that size signs {signed}; run verify")]
    RootMismatch {
        size: u64,
        computed: Hash,
        signed: Hash,
    },
}

/// A proof made from an export, with what the export says at both sizes.
#[derive(Clone, Debug)]
pub struct ExportConsistency {
    pub file: ConsistencyProofFile,
    pub old_root: Hash,
    pub new_root: Hash,
    /// The export's checkpoints at the two sizes, when it has them.
    pub old_checkpoint: Option<SignedCheckpoint>,
    pub new_checkpoint: Option<SignedCheckpoint>,
}

/// Reads an export once (twice when `new` is not given: the first pass finds its last
/// checkpoint's size) and proves that its tree of `old` entries is a prefix of its tree of `new`.
/// Memory stays O(log n). Where the export carries a checkpoint of either size, the computed
/// root must be the signed one; signatures are not checked (`verify` and `consistency` do that).
pub fn prove_consistency_from_export<R: BufRead + Seek>(
    mut r: R,
    old: u64,
    new: Option<u64>,
) -> Result<ExportConsistency, ProveConsistencyError> {
    let new = match new {
        Some(n) => n,
        None => {
            let mut last = None;
            for_each_line(&mut r, |_, line| {
                if line.starts_with(CHECKPOINT_LINE_PREFIX) {
                    last = Some(parse_checkpoint_line(line)?.checkpoint.size);
                }
                Ok(())
            })?;
            r.rewind()?;
            last.ok_or(ProveConsistencyError::NoCheckpoint)?
        }
    };
    if old > new {
        return Err(ProveConsistencyError::SizesOutOfOrder { old, new });
    }
    let ranges = consistency_proof_ranges(old, new)
        .map_err(|_| ProveConsistencyError::SizesOutOfOrder { old, new })?;
    let mut hasher = RangeHasher::new(ranges);
    let mut frontier = Frontier::new();
    let mut old_root = (old == 0).then(|| frontier.root());
    let mut new_root = (new == 0).then(|| frontier.root());
    let (mut old_cp, mut new_cp) = (None, None);
    let mut entries = 0u64;
    for_each_line(&mut r, |n, line| {
        if line.starts_with(ENTRY_LINE_PREFIX) {
            let e = scan_entry(line).map_err(|e| ProveConsistencyError::Malformed {
                line: n,
                detail: e.to_string(),
            })?;
            if e.seq != entries {
                return Err(ProveConsistencyError::Malformed {
                    line: n,
                    detail: format!("expected seq {entries}, found {}", e.seq),
                });
            }
            entries += 1;
            if frontier.size() < new {
                let leaf = leaf_hash(line);
                hasher.push(frontier.size(), leaf);
                frontier.push(leaf);
                if frontier.size() == old {
                    old_root = Some(frontier.root());
                }
                if frontier.size() == new {
                    new_root = Some(frontier.root());
                }
            }
        } else if line.starts_with(CHECKPOINT_LINE_PREFIX) {
            let cp = parse_checkpoint_line(line)?;
            for (size, root, slot) in [(old, &old_root, &mut old_cp), (new, &new_root, &mut new_cp)]
            {
                if cp.checkpoint.size == size {
                    if let Some(root) = root {
                        if *root != cp.checkpoint.root {
                            return Err(ProveConsistencyError::RootMismatch {
                                size,
                                computed: *root,
                                signed: cp.checkpoint.root,
                            });
                        }
                    }
                    *slot = Some(cp.clone());
                }
            }
        } else if n > 1 {
            return Err(ProveConsistencyError::Malformed {
                line: n,
                detail: "neither an entry nor a checkpoint".to_owned(),
            });
        }
        Ok(())
    })?;
    let (Some(old_root), Some(new_root)) = (old_root, new_root) else {
        return Err(ProveConsistencyError::TooShort { entries, new });
    };
    let proof = hasher
        .finish()
        .ok_or(ProveConsistencyError::TooShort { entries, new })?;
    Ok(ExportConsistency {
        file: ConsistencyProofFile::new(old, new, proof),
        old_root,
        new_root,
        old_checkpoint: old_cp,
        new_checkpoint: new_cp,
    })
}

fn parse_checkpoint_line(line: &[u8]) -> Result<SignedCheckpoint, ProveConsistencyError> {
    let malformed = |detail: String| ProveConsistencyError::Malformed { line: 0, detail };
    let cl: CheckpointLine = serde_json::from_slice(line).map_err(|e| malformed(e.to_string()))?;
    SignedCheckpoint::parse(&cl.checkpoint).map_err(|e| malformed(e.to_string()))
}

/// Calls `f` with each line (1-based number, bytes without the newline); a cut or over-long
/// line is malformed.
fn for_each_line<R: BufRead>(
    r: &mut R,
    mut f: impl FnMut(u64, &[u8]) -> Result<(), ProveConsistencyError>,
) -> Result<(), ProveConsistencyError> {
    let mut buf = Vec::with_capacity(4096);
    let mut n = 0u64;
    loop {
        buf.clear();
        let got = r
            .by_ref()
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut buf)?;
        if got == 0 {
            return Ok(());
        }
        n += 1;
        if buf.pop() != Some(b'\n') {
            return Err(ProveConsistencyError::Malformed {
                line: n,
                detail: "line cut or too long".to_owned(),
            });
        }
        f(n, &buf).map_err(|e| match e {
            ProveConsistencyError::Malformed { line: 0, detail } => {
                ProveConsistencyError::Malformed { line: n, detail }
            }
            other => other,
        })?;
    }
}
