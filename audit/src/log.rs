//! The producer side: a log's state (chain head, Merkle frontier, key schedule), sealing batches
//! of entries, and signing checkpoints. No I/O: the service persists what this returns.

use crate::entry::{encode_canonical, EntryError, EntryKind, NewEntry, SealedEntry};
use crate::hash::{leaf_hash, Hash};
use crate::keys::{KeySchedule, KeyValidity, OpenRotation, RotationError, SignatureError};
use crate::merkle::Frontier;
use crate::note::{name_ok, Checkpoint, NoteError, NoteSigner, NoteVerifier, SignedCheckpoint};
use serde::{Deserialize, Serialize};

/// Most entries sealed in one batch (one storage transaction).
pub const MAX_BATCH_ENTRIES: usize = 65_536;

/// Everything needed to continue a log after a restart, in a form the service stores (for
/// example as one JSON row updated in the same transaction as each batch).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogState {
    /// The checkpoint origin line, e.g. `pitboss.example/audit/operator-7`.
    pub origin: String,
    /// Compact Merkle frontier; its size is the number of entries.
    pub frontier: Frontier,
    /// Leaf hash of the last entry ([`Hash::ZERO`] when empty): the next entry's `prev`.
    pub head: Hash,
    /// Keys and their validity.
    pub keys: Vec<KeyValidity>,
    /// Size of the last signed checkpoint, if any.
    pub last_checkpoint_size: Option<u64>,
    /// A key rotation begun and not yet ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_rotation: Option<OpenRotation>,
}

/// Why a log cannot be created or restored.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("origin {0:?} must be printable with no spaces or '+' (it is also the key name)")]
    BadOrigin(String),
    #[error("at least one signing key is needed")]
    NoKeys,
    #[error("stored key schedule: {0}")]
    Keys(#[from] NoteError),
    #[error("stored head does not match the frontier (empty log with a non-zero head)")]
    Inconsistent,
    #[error("key {name:?} must be named by the log's origin {origin:?}")]
    KeyName { name: String, origin: String },
}

/// Why a batch cannot be sealed. Nothing of the batch is sealed then.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SealError {
    #[error("entry {index} of the batch: {source}")]
    Entry {
        index: usize,
        #[source]
        source: EntryError,
    },
    #[error("entry {index} of the batch: {source}")]
    Rotation {
        index: usize,
        #[source]
        source: RotationError,
    },
    #[error("batch has {0} entries, more than {MAX_BATCH_ENTRIES}")]
    TooLarge(usize),
    #[error(
        "batch was prepared at size {prepared_at}, but the log has changed since (now size {now})"
    )]
    Stale { prepared_at: u64, now: u64 },
}

/// Why a checkpoint cannot be signed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckpointError {
    #[error("the signers' keys would not make this checkpoint acceptable: {0}")]
    NotAcceptable(#[from] SignatureError),
}

/// A sealed batch: the entries to persist in one transaction, and the state after them.
#[derive(Clone, Debug, PartialEq)]
pub struct SealedBatch {
    pub entries: Vec<SealedEntry>,
    prepared_at: u64,
    checkpoint_at_prepare: Option<u64>,
    state_after: LogState,
    schedule_after: KeySchedule,
    frontier_after: Frontier,
}

impl SealedBatch {
    /// The log state once this batch is committed: persist it with the entries.
    pub fn state_after(&self) -> &LogState {
        &self.state_after
    }
    /// Seq of the first entry.
    pub fn first_seq(&self) -> u64 {
        self.prepared_at
    }
}

/// A place in a [`BatchBuilder`] to roll back to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mark(usize);

/// A batch being sealed entry by entry (see [`Appender::builder`]).
#[derive(Clone, Debug)]
pub struct BatchBuilder {
    entries: Vec<SealedEntry>,
    prepared_at: u64,
    checkpoint_at_prepare: Option<u64>,
    origin: String,
    last_checkpoint_size: Option<u64>,
    frontier: Frontier,
    schedule: KeySchedule,
    head: Hash,
    buf: Vec<u8>,
    /// The state at each open mark: entries, frontier, head, and the key schedule when it
    /// changed after the mark (a rotation entry), so that a rollback restores it.
    marks: Vec<(usize, Frontier, Hash, Option<KeySchedule>)>,
}

impl BatchBuilder {
    /// Entries sealed so far.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The seq the next entry gets.
    pub fn next_seq(&self) -> u64 {
        self.frontier.size()
    }

    /// The entries sealed so far.
    pub fn entries(&self) -> &[SealedEntry] {
        &self.entries
    }

    /// Seals one entry after the ones pushed so far. On error nothing changes.
    pub fn push(&mut self, entry: NewEntry) -> Result<&SealedEntry, SealError> {
        if self.entries.len() >= MAX_BATCH_ENTRIES {
            return Err(SealError::TooLarge(self.entries.len() + 1));
        }
        let index = self.entries.len();
        let seq = self.frontier.size();
        encode_canonical(&mut self.buf, seq, &self.head, &entry)
            .map_err(|source| SealError::Entry { index, source })?;
        if entry.kind.as_str() == EntryKind::KeyRotated.as_str() {
            let payload = entry.payload.to_string();
            let mut schedule = self.schedule.clone();
            schedule
                .on_rotation_entry(seq, &payload)
                .map_err(|source| SealError::Rotation { index, source })?;
            // Keep the schedule before the change for every open mark that has none yet.
            let before = std::mem::replace(&mut self.schedule, schedule);
            for m in self.marks.iter_mut().filter(|m| m.3.is_none()) {
                m.3 = Some(before.clone());
            }
        }
        let leaf = leaf_hash(&self.buf);
        self.frontier.push(leaf);
        self.entries.push(SealedEntry {
            seq,
            ts: entry.ts,
            kind: entry.kind,
            ids: entry.ids,
            payload: entry.payload,
            prev: self.head,
            leaf_hash: leaf,
            canonical: self.buf.clone(),
        });
        self.head = leaf;
        Ok(self.entries.last().expect("just pushed"))
    }

    /// Remembers the current end of the batch.
    pub fn mark(&mut self) -> Mark {
        self.marks
            .push((self.entries.len(), self.frontier.clone(), self.head, None));
        Mark(self.marks.len() - 1)
    }

    /// Drops every entry pushed since `mark` (and every later mark).
    pub fn rollback(&mut self, mark: Mark) {
        if mark.0 >= self.marks.len() {
            return;
        }
        let mut later = self.marks.split_off(mark.0);
        let (len, frontier, head, schedule) = later.swap_remove(0);
        self.entries.truncate(len);
        self.frontier = frontier;
        self.head = head;
        if let Some(s) = schedule {
            self.schedule = s;
        }
    }

    /// Ends the batch.
    pub fn finish(self) -> SealedBatch {
        let state_after = LogState {
            origin: self.origin,
            frontier: self.frontier.clone(),
            head: self.head,
            keys: self.schedule.validity(),
            last_checkpoint_size: self.last_checkpoint_size,
            open_rotation: self.schedule.open_rotation().cloned(),
        };
        SealedBatch {
            entries: self.entries,
            prepared_at: self.prepared_at,
            checkpoint_at_prepare: self.checkpoint_at_prepare,
            state_after,
            schedule_after: self.schedule,
            frontier_after: self.frontier,
        }
    }
}

impl SealError {
    /// The same error, naming the entry's index in a batch.
    fn at(self, index: usize) -> SealError {
        match self {
            SealError::Entry { source, .. } => SealError::Entry { index, source },
            SealError::Rotation { source, .. } => SealError::Rotation { index, source },
            other => other,
        }
    }
}

/// The append side of one log. Holds no secrets: checkpoint signing takes the signers.
#[derive(Clone, Debug)]
pub struct Appender {
    origin: String,
    frontier: Frontier,
    head: Hash,
    schedule: KeySchedule,
    last_checkpoint_size: Option<u64>,
}

impl Appender {
    /// A new, empty log whose checkpoints `initial_keys` may sign.
    pub fn new(origin: &str, initial_keys: &[NoteVerifier]) -> Result<Appender, StateError> {
        if !name_ok(origin) {
            return Err(StateError::BadOrigin(origin.to_owned()));
        }
        if initial_keys.is_empty() {
            return Err(StateError::NoKeys);
        }
        if let Some(k) = initial_keys.iter().find(|k| k.name() != origin) {
            return Err(StateError::KeyName {
                name: k.name().to_owned(),
                origin: origin.to_owned(),
            });
        }
        let mut schedule = KeySchedule::with_named_anchors(initial_keys);
        schedule.set_origin(origin)?;
        Ok(Appender {
            origin: origin.to_owned(),
            frontier: Frontier::new(),
            head: Hash::ZERO,
            schedule,
            last_checkpoint_size: None,
        })
    }

    /// Continues from a stored state.
    pub fn from_state(state: LogState) -> Result<Appender, StateError> {
        if !name_ok(&state.origin) {
            return Err(StateError::BadOrigin(state.origin));
        }
        if state.frontier.size() == 0 && state.head != Hash::ZERO {
            return Err(StateError::Inconsistent);
        }
        Ok(Appender {
            schedule: KeySchedule::from_validity(
                &state.keys,
                &state.origin,
                state.open_rotation.clone(),
            )?,
            origin: state.origin,
            frontier: state.frontier,
            head: state.head,
            last_checkpoint_size: state.last_checkpoint_size,
        })
    }

    /// The current state, to persist.
    pub fn state(&self) -> LogState {
        LogState {
            origin: self.origin.clone(),
            frontier: self.frontier.clone(),
            head: self.head,
            keys: self.schedule.validity(),
            last_checkpoint_size: self.last_checkpoint_size,
            open_rotation: self.schedule.open_rotation().cloned(),
        }
    }

    pub fn origin(&self) -> &str {
        &self.origin
    }
    /// Number of entries.
    pub fn size(&self) -> u64 {
        self.frontier.size()
    }
    /// Merkle root of all entries.
    pub fn root(&self) -> Hash {
        self.frontier.root()
    }
    /// Leaf hash of the last entry.
    pub fn head(&self) -> Hash {
        self.head
    }
    pub fn keys(&self) -> &KeySchedule {
        &self.schedule
    }
    pub fn last_checkpoint_size(&self) -> Option<u64> {
        self.last_checkpoint_size
    }

    /// Whether entries were appended since the last checkpoint (or none was ever made). The
    /// service calls [`Appender::checkpoint`] at least once a second while this is true.
    pub fn needs_checkpoint(&self) -> bool {
        self.last_checkpoint_size != Some(self.size())
    }

    /// Seals a batch without changing the log: assigns consecutive seqs, writes canonical
    /// bytes, chains and hashes them. Persist `entries` and `state_after()` in one transaction,
    /// then call [`Appender::commit`]; if the transaction fails, drop the batch.
    pub fn prepare(&self, batch: Vec<NewEntry>) -> Result<SealedBatch, SealError> {
        if batch.len() > MAX_BATCH_ENTRIES {
            return Err(SealError::TooLarge(batch.len()));
        }
        let mut b = self.builder();
        for (index, entry) in batch.into_iter().enumerate() {
            b.push(entry).map_err(|e| e.at(index))?;
        }
        Ok(b.finish())
    }

    /// Starts a batch sealed entry by entry: an entry that cannot be sealed is refused alone
    /// and leaves the batch as it was, and [`BatchBuilder::rollback`] drops every entry pushed
    /// after a [`BatchBuilder::mark`]. A producer seals one command's entries, and when one of
    /// them does not fit the format, drops that command only: what one client sends can never
    /// fail the entries of another.
    pub fn builder(&self) -> BatchBuilder {
        BatchBuilder {
            entries: Vec::new(),
            prepared_at: self.size(),
            checkpoint_at_prepare: self.last_checkpoint_size,
            origin: self.origin.clone(),
            last_checkpoint_size: self.last_checkpoint_size,
            frontier: self.frontier.clone(),
            schedule: self.schedule.clone(),
            head: self.head,
            buf: Vec::with_capacity(512),
            marks: Vec::new(),
        }
    }

    /// Applies a prepared batch once it is durable.
    pub fn commit(&mut self, batch: &SealedBatch) -> Result<(), SealError> {
        // A checkpoint signed between prepare and commit may have authorised a key that the
        // batch's state does not know of: the batch must be prepared again.
        if batch.prepared_at != self.size()
            || batch.checkpoint_at_prepare != self.last_checkpoint_size
        {
            return Err(SealError::Stale {
                prepared_at: batch.prepared_at,
                now: self.size(),
            });
        }
        self.frontier = batch.frontier_after.clone();
        self.schedule = batch.schedule_after.clone();
        self.head = batch.state_after.head;
        Ok(())
    }

    /// [`Appender::prepare`] then [`Appender::commit`], for callers that persist afterwards
    /// (or not at all, as in tests and benchmarks).
    pub fn seal(&mut self, batch: Vec<NewEntry>) -> Result<Vec<SealedEntry>, SealError> {
        let b = self.prepare(batch)?;
        self.commit(&b)?;
        Ok(b.entries)
    }

    /// Signs a checkpoint of the current size with every signer given, and checks it is
    /// acceptable under the key schedule exactly as a verifier will (so a retired or
    /// unauthorised key alone is refused). Persist the checkpoint and the new [`LogState`].
    pub fn checkpoint(
        &mut self,
        signers: &[NoteSigner],
    ) -> Result<SignedCheckpoint, CheckpointError> {
        let cp = Checkpoint::new(&self.origin, self.size(), self.root());
        let signed = SignedCheckpoint::sign(cp, signers);
        let mut schedule = self.schedule.clone();
        schedule.on_checkpoint(&signed)?;
        self.schedule = schedule;
        self.last_checkpoint_size = Some(self.size());
        Ok(signed)
    }
}
