//! pitboss-audit: the tamper-evident audit log of pitboss.
//!
//! Entries are RFC 8785 canonical JSON, chained by hash and leaves of an RFC 6962 Merkle tree;
//! checkpoints are C2SP signed notes signed with Ed25519; exports are JSONL; the verifier streams.
//! The byte-level format is in `FORMAT.md`; this crate does no I/O beyond the readers and
//! writers it is handed, and has no clock or randomness inside.
//!
//! For the service: [`Appender`] (seal batches, sign checkpoints, [`LogState`] to persist and
//! restore), [`inclusion_proof`] / [`consistency_proof`] over a [`LeafSource`], [`ExportWriter`].
//! For auditors: [`verify_export`], [`check_proof`], [`check_consistency`].
//! For witnesses (C2SP tlog-witness, tlog-cosignature): [`Cosigner`], [`CosignerVerifier`],
//! [`witness`] (the `add-checkpoint` wire format).

pub mod consistency;
pub mod cosign;
pub mod entry;
pub mod export;
pub mod hash;
pub mod keys;
pub mod log;
pub mod merkle;
pub mod note;
pub mod proof;
pub mod scan;
pub mod verify;
pub mod witness;

pub use consistency::{
    check_consistency, prove_consistency_from_export, ConsistencyProofFile, CONSISTENCY_FORMAT,
};
pub use cosign::{cosigned_by, Cosigner, CosignerVerifier, WitnessedBy};
pub use entry::{EntryError, EntryKind, Ids, Kind, NewEntry, SealedEntry, Timestamp, WireEntry};
pub use export::{write_export, ExportHeader, ExportWriter, EXPORT_FORMAT};
pub use hash::{leaf_hash, node_hash, Hash};
pub use keys::{
    rotation_begin_entry, rotation_end_entry, KeySchedule, KeyValidity, RotationPayload,
    RotationStage,
};
pub use log::{
    Appender, BatchBuilder, CheckpointError, LogState, Mark, SealError, SealedBatch, StateError,
};
pub use merkle::{
    consistency_proof, consistency_proof_ranges, inclusion_proof, root_of, verify_consistency,
    verify_inclusion, Frontier, LeafSource, ProofError, ProveError,
};
pub use note::{
    public_key_from_pem, public_key_to_pem, Checkpoint, NoteSigner, NoteVerifier, SignedCheckpoint,
};
pub use proof::{check_proof, make_proof, prove_from_export, InclusionProofFile};
pub use verify::{verify_export, Failure, Reason, Summary, Verifier, VerifyOptions};

/// Re-exported so callers name the same key types.
pub use ed25519_dalek::{SigningKey, VerifyingKey};
