//! SQLite's WAL checkpoints, off the writer's path.
//!
//! By default SQLite copies the write-ahead log back into the database file inside the
//! `COMMIT` that makes the log pass 1,000 pages: the batch whose commit triggers it waits for
//! that copy (and its fsync of the database file) before its commands are answered. The
//! connections that commit the log's batches turn that off ([`for_writing`]), and
//! this thread runs a `PASSIVE` checkpoint on a connection of its own every
//! [`CHECKPOINT_EVERY`]: it copies what no reader still needs, never takes the write lock,
//! and never makes a commit wait. SQLite starts the WAL over only after a checkpoint that
//! copied all of it, which a passive checkpoint under steady load never is (commits keep
//! coming while it copies). Past [`TRUNCATE_PAST_FRAMES`] the thread therefore asks the
//! committer ([`Restart`]) to run one more passive checkpoint itself, between two of its
//! transactions, right after the thread's own: it copies only what was committed meanwhile,
//! no commit comes while it runs (the committer is the log's writer), so it copies all of it,
//! and the committer's next transaction starts the WAL over (SQLite does that when a write
//! begins on a WAL copied whole that no reader is reading). The next commit then writes the WAL
//! from its start again, over blocks the file already has; the writing connections'
//! `journal_size_limit` cuts the file back to the bound when that happens. If the WAL still
//! grows past twice the bound (a reader in every one of those moments, a committer that does
//! not take the request), the thread runs a `RESTART` checkpoint itself, which takes the write
//! lock until it is done and makes a commit wait for it.
//!
//! SQLite syncs the database file only at the end of a checkpoint that copied the whole WAL:
//! under load, the committer's. That sync wrote out every page the thread had copied since the
//! last one (≈ 15 ms a time on the committer's thread, traced); the thread therefore syncs the
//! file itself after each checkpoint that copied frames, and the committer's finds ≈ 3 ms of
//! work left.
//!
//! The committer's way replaced the `RESTART` checkpoint as the usual way (twenty-fourth
//! session): traced at 6,000 bets a second, a `RESTART` came every 0.76 s and held the write
//! lock 10–40 ms, and the commit that met it waited ≈ 19 ms each time (SQLite's busy handler
//! sleeps 1, 2, 5, 10 ms… between tries), which made most of the requests' p99: in three
//! interleaved pairs at 6,000 requests a second the client's p99 fell from 18–30 ms to 12–15
//! and the service's part of it from 16–18 to 10–11 (`bench/RESULTS.md`, "twenty-fourth
//! session").
//! (A `TRUNCATE` checkpoint emptied the file instead, and every commit after it paid the
//! file system for new blocks and new page-cache pages: ≈ 15 % fewer bets per second.)

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
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

/// What `wal_checkpoint` reports that the checkpointer uses (it also reports `busy`).
#[derive(QueryableByName)]
struct Checkpointed {
    /// Frames in the WAL.
    #[diesel(sql_type = Integer)]
    log: i32,
    /// Frames copied into the database file (by this checkpoint and earlier ones).
    #[diesel(sql_type = Integer)]
    checkpointed: i32,
}

/// The checkpointer's request to the committer of the same store: one passive checkpoint on
/// the committer's connection between two of its transactions, so that its next transaction
/// starts the WAL over (see the module's documentation).
#[derive(Debug, Default)]
pub struct Restart {
    due: AtomicBool,
}

impl Restart {
    /// Asked by the checkpointer.
    fn ask(&self) {
        self.due.store(true, Ordering::Release);
    }

    /// Whether a checkpoint was asked for since the last call (which takes the request).
    pub fn take(&self) -> bool {
        self.due.swap(false, Ordering::AcqRel)
    }

    /// The committer's checkpoint, on its own connection between two transactions. An error
    /// is logged and costs nothing but the WAL's restart (the checkpointer asks again, and past
    /// twice the bound restarts it itself).
    pub fn checkpoint(conn: &mut DbConnection, metrics: &Metrics) {
        if !matches!(conn, DbConnection::Sqlite(_)) {
            return;
        }
        let start = Instant::now();
        match diesel::sql_query("PRAGMA wal_checkpoint(PASSIVE)").get_result::<Checkpointed>(conn) {
            Ok(r) => {
                metrics
                    .writer
                    .wal_restart
                    .observe(crate::observe::since(start));
                metrics.writer.wal_frames.set(i64::from(r.log.max(0)));
            }
            Err(e) => {
                tracing::warn!(error = %e, "SQLite WAL checkpoint on the committer's connection")
            }
        }
    }
}

/// Starts the checkpointer for a SQLite store. It ends once the service that owns `metrics`
/// is gone. Past the WAL's bound it asks the committer, through `restart`, to start the WAL
/// over.
pub fn spawn(
    url: &DatabaseUrl,
    metrics: Weak<Metrics>,
    restart: Arc<Restart>,
) -> std::io::Result<()> {
    if !url.is_sqlite() {
        return Ok(());
    }
    let url = url.clone();
    let truncate_past = truncate_past();
    let every = checkpoint_every();
    // The database file, to sync what each checkpoint copied into it (see below).
    let db_path = match &url {
        DatabaseUrl::Sqlite(path) => std::path::PathBuf::from(path),
        DatabaseUrl::Postgres(_) => return Ok(()),
    };
    std::thread::Builder::new()
        .name("pitboss-wal-checkpointer".into())
        .spawn(move || {
            let mut conn: Option<DbConnection> = None;
            let mut db_file: Option<std::fs::File> = None;
            let mut copied = 0;
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
                    // The committer's checkpoint did not start the WAL over in time.
                    Ok(r) if r.log > truncate_past.saturating_mul(2) => {
                        diesel::sql_query("PRAGMA wal_checkpoint(RESTART)")
                            .get_result::<Checkpointed>(c)
                    }
                    other => other,
                };
                match result {
                    Ok(r) => {
                        // SQLite syncs the database file only after a checkpoint that copied
                        // the whole WAL, which under load is the committer's (above the
                        // bound): that sync then wrote out every page copied since the last,
                        // ≈ 20 ms on the committer's thread. Synced here after each copy, it
                        // finds little left. (Best effort: any descriptor of the file syncs
                        // it; SQLite still syncs before the WAL starts over.) Only after a
                        // checkpoint that copied frames: an idle store syncs nothing.
                        if r.checkpointed > 0 && r.checkpointed != copied {
                            if db_file.is_none() {
                                db_file = std::fs::File::open(&db_path).ok();
                            }
                            if let Some(f) = &db_file {
                                let _ = f.sync_data();
                            }
                        }
                        copied = r.checkpointed;
                        if r.log > truncate_past {
                            restart.ask();
                        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use diesel::sql_types::BigInt;

    #[derive(QueryableByName)]
    struct Count {
        #[diesel(sql_type = BigInt)]
        n: i64,
    }

    /// Frames in the WAL (`mxFrame` of the wal-index header, at byte 16 of the `-shm` file in
    /// native byte order: sqlite.org/walformat.html), read without a connection, so that the
    /// reading checkpoints nothing.
    fn frames(db: &std::path::Path) -> u32 {
        let shm = std::fs::read(format!("{}-shm", db.display())).expect("wal-index");
        u32::from_ne_bytes(shm[16..20].try_into().expect("four bytes"))
    }

    fn insert(conn: &mut DbConnection, from: i64, n: i64) {
        conn.transaction::<_, diesel::result::Error, _>(|c| {
            for i in from..from + n {
                diesel::sql_query(format!("INSERT INTO t VALUES ({i}, randomblob(300))"))
                    .execute(c)?;
            }
            Ok(())
        })
        .expect("insert");
    }

    /// The committer's checkpoint between two transactions makes its next transaction write
    /// the WAL from its start; without it the WAL only grows (the connections that commit run
    /// no checkpoint of their own), and nothing committed is lost either way.
    #[test]
    fn the_committers_checkpoint_starts_the_wal_over() {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = dir.path().join("w.sqlite");
        let url = DatabaseUrl::Sqlite(db.display().to_string());
        let mut committer = store::connect(&url).expect("connect");
        for_writing(&mut committer).expect("settings");
        diesel::sql_query("CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB)")
            .execute(&mut committer)
            .expect("table");
        let metrics = Metrics::default();
        let mut next = 0;
        let mut last = frames(&db);
        for _ in 0..20 {
            insert(&mut committer, next, 30);
            next += 30;
            let now = frames(&db);
            assert!(now > last, "the WAL grew from {last} frames to {now}");
            last = now;
        }
        // The committer's checkpoint, then one more transaction: the WAL starts over.
        let restart = Restart::default();
        restart.ask();
        assert!(restart.take() && !restart.take(), "a request is taken once");
        Restart::checkpoint(&mut committer, &metrics);
        assert_eq!(
            frames(&db),
            last,
            "a checkpoint alone leaves the WAL as it is"
        );
        assert!(
            i64::from(last) <= metrics.writer.wal_frames.get(),
            "the frames copied are shown"
        );
        insert(&mut committer, next, 30);
        next += 30;
        let after = frames(&db);
        assert!(
            after < last / 5,
            "the WAL holds {after} frames after the restart, {last} before"
        );
        let mut reader = store::connect(&url).expect("connect");
        let count = diesel::sql_query("SELECT count(*) AS n FROM t")
            .get_result::<Count>(&mut reader)
            .expect("count");
        assert_eq!(count.n, next, "every committed row is there");
    }
}
