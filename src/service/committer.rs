//! The second stage of the writer's pipeline: the committer writes a sealed batch in one
//! transaction on a connection of its own, and only then answers the batch's commands.
//!
//! The writer thread decides and seals batches N+1, N+2… while the committer writes and
//! syncs batch N: the two stages overlap, so the writer's CPU work (deciding, canonical JSON,
//! hashing) is not added to the store's latency, and the writer does not wait for a commit
//! before it sends the next batch. Up to `PITBOSS_WRITER_PIPELINE` batches are in flight; the
//! committer writes every batch waiting for it in one transaction (one `COMMIT`, one sync for
//! all of them), each batch's rows in order. The writer has folded each batch into its
//! in-memory state and log head when it decides the next (it builds on the last hash).
//!
//! A failure: the transaction's batches are all reported failed, and the committer refuses,
//! without writing them, the batches that follow of the same *generation* (they were built on
//! a batch that is not in the store). The writer takes every outcome in flight, rebuilds its
//! state from the store (which starts a new generation), and answers each failed batch's
//! commands as the store says: `503` when its entries are not there (nothing of them was
//! written), their answers when a commit whose outcome was unknown did happen.
//!
//! Invariants kept:
//! - a command is answered only after the transaction holding its entries has committed
//!   (the committer sends the answers after `COMMIT` returns);
//! - batches commit in the order they were sealed (one committer, a FIFO queue, whole batches
//!   in each transaction), and none commits after one before it failed;
//! - an idempotent retry of a command whose batch is still in flight is answered with that
//!   batch's answer, and only after that batch has committed (it rides in a later batch
//!   whose commit follows).

use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Arc, RwLock};
use std::time::Instant;

use diesel::prelude::*;
use pitboss_audit::entry::SealedEntry;
use pitboss_audit::log::SealedBatch;

use super::derived::{self, Derived};
use super::{feed, Faulted, Metrics, Pending};
use crate::round::{RoundState, State};
use crate::store::schema::{audit_entries, idempotency, rng_seeds};
use crate::store::tiles::{write_tiles, TileRow};
use crate::store::{self, entry_index, fixed_insert, DatabaseUrl, DbConnection, ROWS_PER_INSERT};
use diesel::query_builder::AstPass;
use diesel::sql_types::{BigInt, Binary, Integer, Nullable, Text};
use diesel::sqlite::Sqlite;

/// An idempotency record: operator, key, request hash, status, body, when it was made.
pub(super) type IdempotencyRow<'a> = (&'a str, &'a str, &'a str, i32, &'a str, &'a str);

/// Everything one transaction writes: the rows of one batch, or of several batches in order
/// (merged, so that a transaction costs a few statements however many batches it holds).
pub(super) struct BatchRows<'a> {
    pub entries: Vec<&'a SealedEntry>,
    /// The log state after the last batch (JSON), stored with it.
    pub log_state: &'a str,
    pub tile_rows: Vec<&'a TileRow>,
    /// Each batch's derived rows, in order.
    pub derived: Vec<&'a Derived>,
    pub idempotency: Vec<IdempotencyRow<'a>>,
    /// Sealed (encrypted) seeds of rounds the batches opened.
    pub seeds: Vec<&'a (String, Vec<u8>)>,
    /// Rounds whose seeds the batches revealed.
    pub revealed: Vec<&'a String>,
    /// Entries `[from, to)` to add to the round and table indexes with this batch
    /// (`store::entry_index`).
    pub index: Option<(i64, i64)>,
}

impl<'a> BatchRows<'a> {
    /// The idempotency records of a batch's commands (those with a key, answered by it).
    /// The body is the text the writer serialised once when it sealed the batch.
    pub fn idempotency_of(
        pending: &'a [Pending],
        created: &'a str,
    ) -> impl Iterator<Item = IdempotencyRow<'a>> + 'a {
        pending.iter().filter(|p| p.record).filter_map(move |p| {
            let text = p.reply.text.as_deref()?;
            p.job.idem.as_ref().map(|idem| {
                (
                    p.job.operator.as_str(),
                    idem.key.as_str(),
                    idem.request_hash.as_str(),
                    i32::from(p.reply.status),
                    text,
                    created,
                )
            })
        })
    }
}

/// Writes a batch's rows inside the caller's transaction: multi-row `INSERT`s, so a batch
/// costs a few statements, not a few per command (on PostgreSQL, a few round trips). On SQLite
/// the entries, tags and idempotency records go by statements of fixed shapes, prepared once
/// per connection (`store::fixed_insert`: the parse and compile of each statement at every
/// transaction was ≈ 10 % of the committer's CPU); on PostgreSQL one statement per table per
/// 1,000 rows.
pub(super) fn write_rows(c: &mut DbConnection, rows: &BatchRows<'_>) -> QueryResult<()> {
    match c {
        // Statements of fixed shapes, prepared once (`store::fixed_insert`).
        DbConnection::Sqlite(s) => {
            let entries: Vec<EntryRow> = rows.entries.iter().map(|e| EntryRow::of(e)).collect();
            fixed_insert::insert(s, &entries)?;
        }
        DbConnection::Pg(pg) => {
            for chunk in rows.entries.chunks(ROWS_PER_INSERT) {
                let values: Vec<_> = chunk
                    .iter()
                    .map(|e| {
                        (
                            audit_entries::seq.eq(e.seq as i64),
                            audit_entries::ts.eq(e.ts.to_string()),
                            audit_entries::kind.eq(e.kind.as_str()),
                            audit_entries::operator_id.eq(e.ids.operator.as_deref()),
                            audit_entries::table_id.eq(e.ids.table.as_deref()),
                            audit_entries::round_id.eq(e.ids.round.as_deref()),
                            audit_entries::bet_id.eq(e.ids.bet.as_deref()),
                            audit_entries::canonical.eq(&e.canonical[..]),
                            audit_entries::leaf_hash.eq(&e.leaf_hash.0[..]),
                        )
                    })
                    .collect();
                diesel::insert_into(audit_entries::table)
                    .values(values)
                    .execute(pg)?;
            }
        }
    }
    super::upsert_log_state(c, rows.log_state)?;
    feed::write_tags(c, &rows.entries)?;
    write_tiles(c, rows.tile_rows.iter().copied())?;
    derived::write_all(c, &rows.derived)?;
    match c {
        DbConnection::Sqlite(s) => fixed_insert::insert(s, &rows.idempotency)?,
        DbConnection::Pg(pg) => {
            for chunk in rows.idempotency.chunks(ROWS_PER_INSERT) {
                let values: Vec<_> = chunk
                    .iter()
                    .map(|(operator, key, hash, status, body, created)| {
                        (
                            idempotency::operator_id.eq(*operator),
                            idempotency::idem_key.eq(*key),
                            idempotency::request_hash.eq(*hash),
                            idempotency::status.eq(*status),
                            idempotency::body.eq(*body),
                            idempotency::created_at.eq(*created),
                        )
                    })
                    .collect();
                diesel::insert_into(idempotency::table)
                    .values(values)
                    .execute(pg)?;
            }
        }
    }
    for (round, sealed) in rows.seeds.iter().copied() {
        diesel::insert_into(rng_seeds::table)
            .values((rng_seeds::round_id.eq(round), rng_seeds::seed.eq(sealed)))
            .execute(c)?;
    }
    if !rows.revealed.is_empty() {
        diesel::delete(rng_seeds::table.filter(rng_seeds::round_id.eq_any(&rows.revealed)))
            .execute(c)?;
    }
    if let Some((from, to)) = rows.index {
        entry_index::index(c, from, to)?;
    }
    Ok(())
}

/// An entry's row, as the fixed-shape insert writes it on SQLite.
struct EntryRow<'a> {
    e: &'a SealedEntry,
    seq: i64,
    ts: String,
}

impl<'a> EntryRow<'a> {
    fn of(e: &'a SealedEntry) -> Self {
        EntryRow {
            e,
            seq: e.seq as i64,
            ts: e.ts.to_string(),
        }
    }
}

impl fixed_insert::Row for EntryRow<'_> {
    type Id = audit_entries::table;
    const INSERT: &'static str = "INSERT OR FAIL INTO audit_entries (seq, ts, kind, operator_id, \
        table_id, round_id, bet_id, canonical, leaf_hash) VALUES ";
    fn bind<'b>(&'b self, pass: &mut AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
        let ids = &self.e.ids;
        fixed_insert::bind_all!(
            pass,
            (BigInt, &self.seq),
            (Text, &self.ts),
            (Text, self.e.kind.as_str()),
            (Nullable<Text>, &ids.operator),
            (Nullable<Text>, &ids.table),
            (Nullable<Text>, &ids.round),
            (Nullable<Text>, &ids.bet),
            (Binary, &self.e.canonical[..]),
            (Binary, &self.e.leaf_hash.0[..]),
        )
    }
}

impl fixed_insert::Row for IdempotencyRow<'_> {
    type Id = idempotency::table;
    const INSERT: &'static str = "INSERT OR FAIL INTO idempotency (operator_id, idem_key, \
        request_hash, status, body, created_at) VALUES ";
    fn bind<'b>(&'b self, pass: &mut AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
        let (operator, key, hash, status, body, created) = self;
        fixed_insert::bind_all!(
            pass,
            (Text, *operator),
            (Text, *key),
            (Text, *hash),
            (Integer, status),
            (Text, *body),
            (Text, *created),
        )
    }
}

/// Writes a transaction's rows in one transaction that first checks the lease's fencing
/// token (only the log's writer commits); also returns when the rows were written, before the
/// commit (`None` when the write and the commit were one statement, or it failed before).
/// On PostgreSQL the rows of bets and settlements are one statement ([`super::commit_pg`]).
pub(super) fn write_fenced(
    conn: &mut DbConnection,
    fence: Option<i64>,
    rows: &BatchRows<'_>,
) -> (QueryResult<()>, Option<Instant>) {
    if let DbConnection::Pg(pg) = conn {
        if super::commit_pg::fits(rows) {
            return (super::commit_pg::write(pg, fence, rows), None);
        }
    }
    let mut written = None;
    let result = conn.transaction(|t| {
        store::lease::renew_token(fence, t)?;
        write_rows(t, rows)?;
        written = Some(Instant::now());
        Ok(())
    });
    (result, written)
}

/// A sealed batch on its way to the store.
pub(super) struct Commit {
    pub batch: SealedBatch,
    pub tile_rows: Vec<TileRow>,
    pub derived: Derived,
    pub pending: Vec<Pending>,
    pub seeds: Vec<(String, Vec<u8>)>,
    pub revealed: Vec<String>,
    pub created: String,
    /// Rounds and tables that leave memory once the batch is durable.
    pub evict: Faulted,
    /// The writer's generation when it sealed the batch (see the module's documentation).
    pub generation: u64,
    /// When the writer handed the batch over (made just before it is handed over).
    pub handed_at: Instant,
}

impl Commit {
    /// Seq of the batch's last entry.
    fn last_seq(&self) -> Option<u64> {
        self.batch.entries.last().map(|e| e.seq)
    }
}

/// What became of a batch sent to the committer.
pub(super) enum Outcome {
    /// Committed; its commands are answered. What the batch finished, for the writer to drop
    /// from its state (the writer does it: it holds the state while it decides the next
    /// batch, so the committer never waits for the state's lock).
    Written(Faulted),
    /// Not committed, or its commit's outcome is unknown (a connection lost during `COMMIT`):
    /// the writer finds out from the store which, and answers the commands.
    Failed {
        detail: String,
        pending: Vec<Pending>,
        /// Seq of the batch's last entry.
        last_seq: Option<u64>,
    },
}

/// The committer thread's own things.
pub(super) struct Committer {
    pub url: DatabaseUrl,
    /// Opened on first use and after a failure (a connection the database dropped is not
    /// reused).
    pub conn: Option<DbConnection>,
    /// The PostgreSQL lease's fencing token, checked in every batch's transaction.
    pub fence: Option<i64>,
    pub metrics: Arc<Metrics>,
    /// Every entry below it is in the round and table indexes (`store::entry_index`); read
    /// from the store when unknown (at start, after a failure).
    pub indexed_to: Option<i64>,
    /// When the tail was last indexed.
    pub indexed_at: Instant,
    /// `entry_index::every()`, read once.
    pub index_every: u64,
    /// Batches of a generation below it are refused: one of theirs was not written.
    pub refuse_below: u64,
    /// The WAL checkpointer's request for a checkpoint between two transactions (SQLite).
    pub wal_restart: Arc<super::wal::Restart>,
}

impl Committer {
    pub fn run(mut self, rx: Receiver<Commit>, done: SyncSender<Outcome>) {
        while let Ok(first) = rx.recv() {
            // Every batch waiting goes into this transaction (the queue holds at most the
            // pipeline's depth).
            let mut group = vec![first];
            group.extend(rx.try_iter());
            for outcome in self.commit(group) {
                if done.send(outcome).is_err() {
                    return;
                }
            }
            // After the answers: the batches that came meanwhile wait for it.
            if self.wal_restart.take() {
                if let Some(conn) = self.conn.as_mut() {
                    super::wal::Restart::checkpoint(conn, &self.metrics);
                }
            }
        }
    }

    /// Writes the batches in one transaction and answers their commands; their outcomes, in
    /// order.
    fn commit(&mut self, group: Vec<Commit>) -> Vec<Outcome> {
        for c in &group {
            self.metrics
                .writer
                .commit_wait
                .observe(crate::observe::since(c.handed_at));
        }
        let mut outcomes = Vec::with_capacity(group.len());
        // Generations only grow along the queue: the refused ones come first.
        let (refused, group): (Vec<_>, Vec<_>) = group
            .into_iter()
            .partition(|c| c.generation < self.refuse_below);
        for c in refused {
            outcomes.push(Outcome::Failed {
                detail: "an earlier batch was not written".into(),
                last_seq: c.last_seq(),
                pending: c.pending,
            });
        }
        let Some(generation) = group.last().map(|c| c.generation) else {
            return outcomes;
        };
        match self.write(&group) {
            Ok(()) => {
                for c in group {
                    self.after_commit(&c);
                    super::finish(c.pending);
                    outcomes.push(Outcome::Written(c.evict));
                }
            }
            Err(detail) => {
                self.conn = None;
                self.refuse_below = generation + 1;
                for c in group {
                    outcomes.push(Outcome::Failed {
                        detail: detail.clone(),
                        last_seq: c.last_seq(),
                        pending: c.pending,
                    });
                }
            }
        }
        outcomes
    }

    fn write(&mut self, group: &[Commit]) -> Result<(), String> {
        if self.conn.is_none() {
            let mut conn = store::connect(&self.url).map_err(|e| e.to_string())?;
            super::wal::for_writing(&mut conn).map_err(|e| e.to_string())?;
            self.conn = Some(conn);
        }
        let conn = self.conn.as_mut().expect("connected above");
        let from = match self.indexed_to {
            Some(i) => i,
            None => {
                let i = entry_index::indexed_to(conn).map_err(|e| format!("storage: {e}"))?;
                self.indexed_to = Some(i);
                i
            }
        };
        let index = group
            .iter()
            .rev()
            .find_map(|c| c.last_seq())
            .and_then(|last| {
                let last = last as i64;
                entry_index::due(from, last, self.indexed_at.elapsed(), self.index_every)
                    .then_some((from, last + 1))
            });
        // The log's state after the last batch is the one stored.
        let log_state = group
            .last()
            .map(|c| serde_json::to_string(c.batch.state_after()).expect("log state serialises"))
            .unwrap_or_default();
        let rows = BatchRows {
            entries: group.iter().flat_map(|c| &c.batch.entries).collect(),
            log_state: &log_state,
            tile_rows: group.iter().flat_map(|c| &c.tile_rows).collect(),
            derived: group.iter().map(|c| &c.derived).collect(),
            idempotency: group
                .iter()
                .flat_map(|c| BatchRows::idempotency_of(&c.pending, &c.created))
                .collect(),
            seeds: group.iter().flat_map(|c| &c.seeds).collect(),
            revealed: group.iter().flat_map(|c| &c.revealed).collect(),
            index,
        };
        self.metrics
            .writer
            .transaction_batches
            .observe(group.len() as f64);
        let write = Instant::now();
        let (result, written) = write_fenced(conn, self.fence, &rows);
        let m = &self.metrics.writer;
        match written {
            Some(w) => {
                m.write.observe(w.duration_since(write).as_secs_f64());
                if result.is_ok() {
                    m.commit.observe(crate::observe::since(w));
                }
            }
            // One statement, its commit included (PostgreSQL): observed as the write.
            None if result.is_ok() => m.write.observe(crate::observe::since(write)),
            None => {}
        }
        match (&result, index) {
            (Ok(()), Some((_, to))) => {
                self.indexed_to = Some(to);
                self.indexed_at = Instant::now();
            }
            (Ok(()), None) => {}
            (Err(_), _) => self.indexed_to = None,
        }
        result.map_err(|e| format!("storage: {e}"))
    }

    /// What a durable batch changes before its answers go out: the counters a client may
    /// read right after its answer, and the rounds and tables that leave memory.
    fn after_commit(&self, c: &Commit) {
        let m = &self.metrics;
        if super::room_to_write(&self.url).is_ok() {
            m.health.store_ok();
        }
        m.batches.fetch_add(1, Ordering::Relaxed);
        m.batch_commands
            .fetch_add(c.pending.len() as u64, Ordering::Relaxed);
        if let Some((_, _, bytes)) = &c.derived.snapshot {
            // Counted next to the log's size, so that a reader can discount snapshot entries
            // (the two are separate counters: a scrape may fall between the two stores).
            m.snapshots.fetch_add(1, Ordering::SeqCst);
            m.snapshot_bytes
                .store(bytes.len() as u64, Ordering::Relaxed);
        }
        if let Some(last) = c.batch.entries.last() {
            m.log_entries.store(last.seq + 1, Ordering::SeqCst);
        }
        for e in &c.batch.entries {
            let counter = match e.kind.as_str() {
                "bet_accepted" => &m.bets_accepted,
                "bet_refused" => &m.bets_refused,
                "round_settled" => &m.rounds_settled,
                "round_voided" => &m.rounds_voided,
                _ => continue,
            };
            counter.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Drops finished rounds and closed tables from memory (their state is in the store).
pub(super) fn evict(state: &RwLock<State>, metrics: &Metrics, which: &Faulted) {
    let mut state = state.write().expect("state lock");
    for r in &which.rounds {
        if state.rounds.get(r).is_some_and(RoundState::is_finished) {
            state.rounds.remove(r);
        }
    }
    for t in &which.tables {
        if state.tables.get(t).is_some_and(|t| !t.open) {
            state.tables.remove(t);
            state.registrations.remove(t);
        }
    }
    metrics
        .rounds_in_memory
        .store(state.rounds.len() as u64, Ordering::Relaxed);
    metrics
        .tables_in_memory
        .store(state.tables.len() as u64, Ordering::Relaxed);
}
