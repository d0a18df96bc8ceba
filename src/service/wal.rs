//! SQLite's WAL checkpoints, off the writer's path.
//!
//! By default SQLite copies the write-ahead log back into the database file inside the
//! `COMMIT` that makes the log pass 1,000 pages: the batch whose commit triggers it waits for
//! that copy (and its fsync of the database file) before its commands are answered. The
//! connections that commit the log's batches turn that off ([`for_writing`]), and
//! this thread runs a `PASSIVE` checkpoint on a connection of its own every
//! [`CHECKPOINT_EVERY`]: it copies what no reader still needs, never takes the write lock,
//! and never makes a commit wait. The WAL file is reused from its start once a checkpoint has
//! copied all of it (SQLite does that on the next write), so it stays bounded by what is
//! written between two checkpoints.

use std::sync::Weak;
use std::time::{Duration, Instant};

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::Integer;

use super::Metrics;
use crate::store::{self, DatabaseUrl, DbConnection};

/// How often the checkpointer runs.
pub const CHECKPOINT_EVERY: Duration = Duration::from_millis(100);

/// Page cache of a connection that writes the log's batches, in KiB. SQLite's default (2 MiB)
/// holds little of the indexes a batch's inserts and idempotency lookups descend (keys chosen
/// by operators land anywhere in them), so most of a batch's page reads went to the OS.
pub const WRITER_CACHE_KIB: u32 = 32 * 1024;

/// Settings of a connection that commits the log's batches (SQLite; nothing to do on
/// PostgreSQL): no automatic checkpoint (the checkpointer thread runs them), a page cache of
/// [`WRITER_CACHE_KIB`], and temporary files in memory: a multi-row `INSERT` inside the
/// batch's transaction keeps a statement journal (the pages it changed, to undo it alone),
/// which SQLite spills to a temporary file past 64 KiB, so every batch wrote its pages twice,
/// once to that file (a `pwrite` per page) and once to the WAL.
pub fn for_writing(conn: &mut DbConnection) -> QueryResult<()> {
    if let DbConnection::Sqlite(c) = conn {
        c.batch_execute(&format!(
            "PRAGMA wal_autocheckpoint = 0; PRAGMA cache_size = -{WRITER_CACHE_KIB}; \
             PRAGMA temp_store = MEMORY"
        ))?;
    }
    Ok(())
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
    std::thread::Builder::new()
        .name("pitboss-wal-checkpointer".into())
        .spawn(move || {
            let mut conn: Option<DbConnection> = None;
            loop {
                std::thread::sleep(CHECKPOINT_EVERY);
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
                match diesel::sql_query("PRAGMA wal_checkpoint(PASSIVE)")
                    .get_result::<Checkpointed>(c)
                {
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
