//! Idempotency records live in the store only and are kept for a retention period (default
//! 24 hours, the convention of payment APIs), then pruned in the background in small batches.
//! The audit log is never pruned: only these records are.
//!
//! A retry inside the retention returns the first answer (from the store, whatever the
//! service did in between: evictions, restarts). A retry after it is a new request: it is
//! decided again and may be executed (README says so).

use std::time::Duration;

use chrono::{SecondsFormat, Utc};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};

use crate::store::{self, DatabaseUrl, StoreError};

/// Default retention of idempotency records.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(24 * 3600);
/// Records deleted per statement: small, so the writer is never held up for long.
pub const PRUNE_BATCH: i64 = 1_000;
/// How often the pruner looks for expired records.
pub const PRUNE_INTERVAL: Duration = Duration::from_secs(60);

/// Deletes up to `limit` records created before `cutoff`; returns how many it deleted.
pub fn prune_once(
    conn: &mut store::DbConnection,
    cutoff: chrono::DateTime<Utc>,
    limit: i64,
) -> Result<usize, StoreError> {
    let cutoff = cutoff.to_rfc3339_opts(SecondsFormat::Micros, true);
    // Row values in IN work on SQLite (3.15+) and PostgreSQL alike; `created_at` is written in
    // one fixed RFC 3339 form, so text order is time order.
    let n = diesel::sql_query(
        "DELETE FROM idempotency WHERE (operator_id, idem_key) IN \
         (SELECT operator_id, idem_key FROM idempotency WHERE created_at < $1 LIMIT $2)",
    )
    .bind::<Text, _>(cutoff)
    .bind::<BigInt, _>(limit)
    .execute(conn)?;
    Ok(n)
}

/// Deletes every record older than `retention`, batch by batch, pausing between batches.
pub fn prune_expired(url: &DatabaseUrl, retention: Duration) -> Result<usize, StoreError> {
    let mut conn = store::connect(url)?;
    let cutoff = Utc::now()
        - chrono::Duration::from_std(retention).unwrap_or_else(|_| chrono::Duration::days(1));
    let mut total = 0;
    loop {
        let n = prune_once(&mut conn, cutoff, PRUNE_BATCH)?;
        total += n;
        if n < PRUNE_BATCH as usize {
            return Ok(total);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts the pruner thread.
pub fn spawn_pruner(url: DatabaseUrl, retention: Duration) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("pitboss-idempotency-pruner".into())
        .spawn(move || loop {
            if let Err(e) = prune_expired(&url, retention) {
                tracing::warn!(error = %e, "pruning idempotency records");
            }
            std::thread::sleep(PRUNE_INTERVAL.min(retention.max(Duration::from_secs(1))));
        })
        .map(|_| ())
}
