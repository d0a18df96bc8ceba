//! SQLite's WAL checkpoints, off the writer's path.
//!
//! By default SQLite copies the write-ahead log back into the database file inside the
//! `COMMIT` that makes the log pass 1,000 pages: the batch whose commit triggers it waits for
//! that copy (and its fsync of the database file) before its commands are answered. The
//! connections that commit the log's batches turn that off ([`for_writing`]), and
//! this thread runs a `PASSIVE` checkpoint on a connection of its own every
//! [`CHECKPOINT_EVERY`]: it copies what no reader still needs, never takes the write lock,
//! and never makes a commit wait. SQLite starts the WAL over only after a checkpoint that
//! copied all of it, which a passive checkpoint under steady load never is; past
//! [`TRUNCATE_PAST_FRAMES`] the thread therefore runs a `RESTART` checkpoint, which makes one
//! commit wait for the copy of what is left, so the WAL stays bounded. The next commit then
//! writes the WAL from its start again, over blocks the file already has; the writing
//! connections' `journal_size_limit` cuts the file back to the bound when that happens.
//! (A `TRUNCATE` checkpoint emptied the file instead, and every commit after it paid the
//! file system for new blocks and new page-cache pages: ≈ 15 % fewer bets per second.)

use std::sync::Weak;
use std::time::{Duration, Instant};

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::Integer;

use super::Metrics;
use crate::store::{self, DatabaseUrl, DbConnection};

/// How often the checkpointer runs.
pub const CHECKPOINT_EVERY: Duration = Duration::from_millis(100);

/// How often the checkpointer runs: `PITBOSS_WAL_CHECKPOINT_MS` or [`CHECKPOINT_EVERY`]
/// (a measuring knob). A longer interval copies a page changed by many transactions once:
/// at 1,000 ms the checkpointer's CPU a bet was ≈ 25 % lower than at 100 (6.8–7.0 against
/// 4.9–5.3 µs, `bench/RESULTS.md`, "twenty-second session"), each checkpoint longer, and the
/// p99 at 6,500 requests a second moved within the noise; the default stays.
pub fn checkpoint_every() -> Duration {
    Duration::from_millis(super::tuning(
        "PITBOSS_WAL_CHECKPOINT_MS",
        CHECKPOINT_EVERY.as_millis() as u64,
        |&n| n > 0,
    ))
}

/// WAL frames past which the checkpointer starts the WAL over: 64 MiB of 2 KiB pages, 128 MiB
/// in a store made with 4 KiB pages (`PITBOSS_WAL_TRUNCATE_FRAMES` sets another bound, read
/// by [`truncate_past`]).
/// A passive checkpoint copies frames but does not start the WAL over while batches keep
/// coming (traced under load: it copied the whole WAL nearly every time, and the next commit
/// still appended to it), so under steady load the WAL grew without end: 4.3 GB after 60 s,
/// and a restart spent 2 s reading it. A `RESTART` checkpoint takes the write lock for as long
/// as it copies what is left and syncs the database file, and makes the next commit write
/// from the WAL's start: traced at 3,500 bets/s, the commit it held waited 9–20 ms, and it
/// came every 100–200 ms with a bound of 4,096 frames (a bet writes ≈ 10 frames at that rate),
/// which set the requests' p99. At 32,768 frames it comes about every 1.5 s: in seven
/// interleaved pairs the p99 at 3,500 bets/s was lower in six (`bench/RESULTS.md`, "HTTP load,
/// nineteenth session"), and a start after `SIGKILL` with a full WAL took no longer (0.22 s).
pub const TRUNCATE_PAST_FRAMES: i32 = 32768;

/// The bound on the WAL in frames: `PITBOSS_WAL_TRUNCATE_FRAMES` or [`TRUNCATE_PAST_FRAMES`].
pub fn truncate_past() -> i32 {
    super::tuning("PITBOSS_WAL_TRUNCATE_FRAMES", TRUNCATE_PAST_FRAMES, |&n| {
        n > 0
    })
}

/// The WAL file's size at the bound: frames of at most 4 KiB and their 24-byte headers.
fn size_limit() -> i64 {
    i64::from(truncate_past()) * (4096 + 24)
}

/// Settings of a connection that commits the log's batches (SQLite; nothing to do on
/// PostgreSQL): no automatic checkpoint (the checkpointer thread runs them) and temporary
/// files in memory: a multi-row `INSERT` inside the batch's transaction keeps a statement
/// journal (the pages it changed, to undo it alone), which SQLite spills to a temporary file
/// past 64 KiB, so every batch wrote its pages twice, once to that file (a `pwrite` per page)
/// and once to the WAL. (A larger page cache than SQLite's 2 MiB was tried: no gain measured,
/// and memory that grows with the database.) When such a connection starts the WAL over after
/// the checkpointer's `RESTART`, it cuts the file back to the bound (`journal_size_limit`).
///
/// On PostgreSQL: a transaction left idle for longer than the writer's lease is ended by the
/// server (`idle_in_transaction_session_timeout`), so a writer frozen inside a batch's
/// transaction (a stopped process, a paused VM) does not hold the lease's row, and with it
/// the standby that takes its log over, for longer than that. Statements are planned once per
/// connection (`plan_cache_mode = force_generic_plan`): the writer's statements are the same
/// few, keyed lookups and inserts, and the committer's one statement of a transaction
/// (`commit_pg`) cost ≈ 0.7 ms a transaction to plan again with its parameters (PostgreSQL's
/// default re-plans a statement whose generic plan it estimates dearer, which with arrays of
/// rows it does).
pub fn for_writing(conn: &mut DbConnection) -> QueryResult<()> {
    match conn {
        DbConnection::Sqlite(c) => c.batch_execute(&format!(
            "PRAGMA wal_autocheckpoint = 0; PRAGMA temp_store = MEMORY; \
             PRAGMA journal_size_limit = {}",
            size_limit()
        )),
        DbConnection::Pg(c) => {
            c.batch_execute(&format!(
                "SET idle_in_transaction_session_timeout = {}",
                store::lease::duration().as_millis()
            ))?;
            // Best effort too: a server older than 12 has no such setting (and plans again).
            let _ = c.batch_execute("SET plan_cache_mode = force_generic_plan");
            // Large values (a settlement's entry, its finished round, its answer: 40–90 KB
            // of JSON each with 50 bets) compressed with LZ4 rather than PostgreSQL's own
            // pglz, ≈ 9 % of the server's time in the bench. A server built without LZ4
            // (or older than 14) refuses the setting and keeps pglz; both read either.
            let _ = c.batch_execute("SET default_toast_compression = lz4");
            Ok(())
        }
    }
}

/// What `wal_checkpoint` reports that the metrics show (it also reports `busy` and
/// `checkpointed`).
#[derive(QueryableByName)]
struct Checkpointed {
    /// Frames in the WAL.
    #[diesel(sql_type = Integer)]
    log: i32,
}

/// Starts the checkpointer for a SQLite store. It ends once the service that owns `metrics`
/// is gone.
pub fn spawn(url: &DatabaseUrl, metrics: Weak<Metrics>) -> std::io::Result<()> {
    if !url.is_sqlite() {
        return Ok(());
    }
    let url = url.clone();
    let truncate_past = truncate_past();
    let every = checkpoint_every();
    std::thread::Builder::new()
        .name("pitboss-wal-checkpointer".into())
        .spawn(move || {
            let mut conn: Option<DbConnection> = None;
            loop {
                std::thread::sleep(every);
                let Some(m) = metrics.upgrade() else {
                    return;
                };
                if conn.is_none() {
                    conn = store::connect(&url).ok();
                }
                let Some(c) = conn.as_mut() else {
                    continue;
                };
                let start = Instant::now();
                let passive = diesel::sql_query("PRAGMA wal_checkpoint(PASSIVE)")
                    .get_result::<Checkpointed>(c);
                let result = match passive {
                    Ok(r) if r.log > truncate_past => {
                        diesel::sql_query("PRAGMA wal_checkpoint(RESTART)")
                            .get_result::<Checkpointed>(c)
                    }
                    other => other,
                };
                match result {
                    Ok(r) => {
                        m.writer
                            .wal_checkpoint
                            .observe(crate::observe::since(start));
                        m.writer.wal_frames.set(i64::from(r.log.max(0)));
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "SQLite WAL checkpoint");
                        conn = None;
                    }
                }
            }
        })
        .map(|_| ())
}
