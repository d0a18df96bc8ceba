//! Self-contained inclusion proof files: one entry, its audit path and a signed checkpoint,
//! checkable with the public key alone.

use crate::entry::WireEntry;
use crate::export::{CheckpointLine, CHECKPOINT_LINE_PREFIX, ENTRY_LINE_PREFIX};
use crate::hash::{leaf_hash, Hash};
use crate::merkle::{inclusion_proof, verify_inclusion, LeafSource, ProofError, ProveError};
use crate::note::SignedCheckpoint;
use crate::verify::MAX_LINE_BYTES;
use ed25519_dalek::VerifyingKey;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Read};

/// Value of a proof file's `format` member.
pub const PROOF_FORMAT: &str = "pitboss-audit-inclusion-proof/1";

/// An inclusion proof file (JSON).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InclusionProofFile {
    pub format: String,
    /// The entry's canonical bytes, as a JSON string (so byte-exact).
    pub entry: String,
    pub leaf_index: u64,
    pub tree_size: u64,
    /// Audit path, leaf's sibling first, each hash in hex.
    pub path: Vec<Hash>,
    /// The signed checkpoint of `tree_size`, as note text.
    pub checkpoint: String,
}

/// Builds a proof file from stored leaf hashes and a checkpoint.
pub fn make_proof<S: LeafSource + ?Sized>(
    leaves: &S,
    entry_canonical: &[u8],
    seq: u64,
    checkpoint: &SignedCheckpoint,
) -> Result<InclusionProofFile, ProveError<S::Error>> {
    let path = inclusion_proof(leaves, seq, checkpoint.checkpoint.size)?;
    Ok(InclusionProofFile {
        format: PROOF_FORMAT.to_owned(),
        entry: String::from_utf8_lossy(entry_canonical).into_owned(),
        leaf_index: seq,
        tree_size: checkpoint.checkpoint.size,
        path,
        checkpoint: checkpoint.to_text(),
    })
}

/// Why a proof could not be made from an export.
#[derive(Debug, thiserror::Error)]
pub enum ProveExportError {
    #[error("reading export: {0}")]
    Io(#[from] std::io::Error),
    #[error("export line {line}: {detail}")]
    Malformed { line: u64, detail: String },
    #[error("entry {0} is not in the export")]
    NoSuchEntry(u64),
    #[error("no checkpoint in the export covers entry {0}")]
    NotCovered(u64),
    #[error("the export's entries do not hash to its last checkpoint's root; run verify")]
    RootMismatch,
}

/// Reads an export and proves entry `seq` against its last checkpoint. It checks the tree
/// against that checkpoint's root but not signatures: `verify` and `check-proof` do that.
pub fn prove_from_export<R: BufRead>(
    mut r: R,
    seq: u64,
) -> Result<InclusionProofFile, ProveExportError> {
    let mut leaves: Vec<Hash> = Vec::new();
    let mut entry: Option<Vec<u8>> = None;
    let mut last_cp: Option<SignedCheckpoint> = None;
    let mut buf = Vec::new();
    let mut line = 0u64;
    loop {
        buf.clear();
        let n = (&mut r)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut buf)?;
        if n == 0 {
            break;
        }
        line += 1;
        let malformed = |detail: String| ProveExportError::Malformed { line, detail };
        if buf.pop() != Some(b'\n') {
            return Err(malformed("line cut or too long".to_owned()));
        }
        if line == 1 {
            continue;
        }
        if buf.starts_with(ENTRY_LINE_PREFIX) {
            let e = WireEntry::parse(&buf).map_err(|e| malformed(e.to_string()))?;
            if e.seq != leaves.len() as u64 {
                return Err(malformed(format!(
                    "expected seq {}, found {}",
                    leaves.len(),
                    e.seq
                )));
            }
            if e.seq == seq {
                entry = Some(buf.clone());
            }
            leaves.push(leaf_hash(&buf));
        } else if buf.starts_with(CHECKPOINT_LINE_PREFIX) {
            let cl: CheckpointLine =
                serde_json::from_slice(&buf).map_err(|e| malformed(e.to_string()))?;
            let cp =
                SignedCheckpoint::parse(&cl.checkpoint).map_err(|e| malformed(e.to_string()))?;
            last_cp = Some(cp);
        } else {
            return Err(malformed("neither an entry nor a checkpoint".to_owned()));
        }
    }
    let entry = entry.ok_or(ProveExportError::NoSuchEntry(seq))?;
    let cp = last_cp
        .filter(|c| c.checkpoint.size > seq && c.checkpoint.size <= leaves.len() as u64)
        .ok_or(ProveExportError::NotCovered(seq))?;
    let size = cp.checkpoint.size as usize;
    if crate::merkle::root_of(&leaves[..size]) != cp.checkpoint.root {
        return Err(ProveExportError::RootMismatch);
    }
    match make_proof(&leaves, &entry, seq, &cp) {
        Ok(p) => Ok(p),
        Err(ProveError::Source(never)) => match never {},
        Err(_) => Err(ProveExportError::NotCovered(seq)),
    }
}

/// Why a proof file does not check.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckProofError {
    #[error("not a proof file of format {PROOF_FORMAT}")]
    Format,
    #[error("checkpoint: {0}")]
    Checkpoint(String),
    #[error("checkpoint has no valid signature by the given key(s)")]
    Signature,
    #[error("tree_size {proof} differs from the checkpoint's size {checkpoint}")]
    SizeMismatch { proof: u64, checkpoint: u64 },
    #[error("entry: {0}")]
    Entry(String),
    #[error("entry has seq {seq} but the proof is for leaf {index}")]
    IndexMismatch { seq: u64, index: u64 },
    #[error("inclusion proof does not verify: {0}")]
    Proof(#[from] ProofError),
}

/// What a checked proof establishes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckedProof {
    pub origin: String,
    pub seq: u64,
    pub tree_size: u64,
    pub leaf_hash: Hash,
    pub kind: String,
}

/// Checks a proof file: the checkpoint is signed by one of `keys`, and the entry is at
/// `leaf_index` in the tree it signs.
pub fn check_proof(
    p: &InclusionProofFile,
    keys: &[VerifyingKey],
) -> Result<CheckedProof, CheckProofError> {
    if p.format != PROOF_FORMAT {
        return Err(CheckProofError::Format);
    }
    let cp = SignedCheckpoint::parse(&p.checkpoint)
        .map_err(|e| CheckProofError::Checkpoint(e.to_string()))?;
    if !keys.iter().any(|k| cp.signed_by(k)) {
        return Err(CheckProofError::Signature);
    }
    if p.tree_size != cp.checkpoint.size {
        return Err(CheckProofError::SizeMismatch {
            proof: p.tree_size,
            checkpoint: cp.checkpoint.size,
        });
    }
    let e =
        WireEntry::parse(p.entry.as_bytes()).map_err(|e| CheckProofError::Entry(e.to_string()))?;
    if e.seq != p.leaf_index {
        return Err(CheckProofError::IndexMismatch {
            seq: e.seq,
            index: p.leaf_index,
        });
    }
    let leaf = leaf_hash(p.entry.as_bytes());
    verify_inclusion(
        &leaf,
        p.leaf_index,
        p.tree_size,
        &p.path,
        &cp.checkpoint.root,
    )?;
    Ok(CheckedProof {
        origin: cp.checkpoint.origin,
        seq: e.seq,
        tree_size: p.tree_size,
        leaf_hash: leaf,
        kind: e.kind.into_owned(),
    })
}
