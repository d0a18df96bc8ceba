//! Operators' logs read from the store (issue 17, item 3): the audit routes' reads of an
//! operator's log on a node that does not write it (several nodes, `--node-url`), and on every
//! node from a PostgreSQL read replica when one is configured (`--read-database-url`).
//!
//! The audit reads need nothing of the writer: entries, the daily summary, checkpoints and
//! proofs against a stored checkpoint are rows of the log's own schema, and what a listing may
//! promise (its `next` cursor) is bounded by the log's size as read there ([`LogReads`]). So
//! any node answers them for every log, from the primary or from a replica, and a replica
//! answers them while the primary is down.
//!
//! Bounded: one [`LogReads`] per operator's log read in the last [`KEPT_IDLE`] (or in use by a
//! request now), at most [`KEPT_MAX`] of them (the least recently read one not in use is
//! dropped first). Each has a pool of at most two connections, closed after [`CONN_IDLE`]
//! unused; the size poller keeps one of them open while the log is kept, so a node holds about
//! one connection per log read lately, at most `2 × KEPT_MAX` in a burst. One thread reads the
//! size of every kept log every [`SIZE_POLL`]; the pools' timers are the process's
//! ([`store::lazy_read_pool`]).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use diesel::prelude::*;

use super::audit::{LogReads, SIZE_POLL};
use crate::service::witnessing::Witnesses;
use crate::store::{self, schema::operator_logs, DatabaseUrl, ReadPool, StoreError};

/// Most operators' logs whose reads are kept at once (those a request uses now aside).
pub const KEPT_MAX: usize = 16;

/// A read connection unused for this long is closed (within r2d2's 30 s reaping interval).
pub const CONN_IDLE: Duration = Duration::from_secs(10);

/// A log not read for this long is no longer kept (nor its size read).
pub const KEPT_IDLE: Duration = Duration::from_secs(60);

/// The reads of operators' logs from one store (the primary, or a read replica).
pub struct StoredReads {
    /// The store read, at the service's schema (each log's is [`DatabaseUrl::for_log`]).
    url: DatabaseUrl,
    /// Whether `url` is a read replica (else the primary, read where a log is written
    /// elsewhere).
    pub replica: bool,
    /// Where the operators' logs are recorded (`operator_logs`), on the store read.
    recorded: ReadPool,
    witnesses: Witnesses,
    kept: Mutex<BTreeMap<String, Kept>>,
    /// Most logs kept ([`KEPT_MAX`]).
    max: usize,
}

struct Kept {
    reads: Arc<LogReads>,
    used: Instant,
}

impl StoredReads {
    /// Reads on `url` (the service's schema of the primary or of a replica); one thread,
    /// ending with the last reference, reads the kept logs' sizes.
    pub fn start(
        url: &DatabaseUrl,
        replica: bool,
        witnesses: Witnesses,
    ) -> Result<Arc<StoredReads>, String> {
        let stored = StoredReads::keeping(url, replica, witnesses, KEPT_MAX);
        let weak: Weak<StoredReads> = Arc::downgrade(&stored);
        std::thread::Builder::new()
            .name("pitboss-log-sizes".into())
            .spawn(move || loop {
                std::thread::sleep(SIZE_POLL);
                let Some(stored) = weak.upgrade() else { return };
                let kept = stored.kept_now();
                drop(stored);
                // Each log's reads held only while its size is read.
                for (operator, reads) in kept {
                    if let Some(reads) = reads.upgrade() {
                        reads.poll(&operator);
                    }
                }
            })
            .map_err(|e| e.to_string())?;
        Ok(stored)
    }

    /// The reads, their sizes not polled ([`StoredReads::start`] adds the poller).
    fn keeping(
        url: &DatabaseUrl,
        replica: bool,
        witnesses: Witnesses,
        max: usize,
    ) -> Arc<StoredReads> {
        Arc::new(StoredReads {
            url: url.clone(),
            replica,
            recorded: store::lazy_read_pool_idle(url, 2, CONN_IDLE),
            witnesses,
            kept: Mutex::new(BTreeMap::new()),
            max,
        })
    }

    /// The logs kept now, the idle ones dropped first (one a request holds is not idle: a
    /// listing that follows the log waits on its size).
    fn kept_now(&self) -> Vec<(String, Weak<LogReads>)> {
        let mut kept = self.kept.lock().expect("kept lock");
        kept.retain(|_, k| k.used.elapsed() < KEPT_IDLE || Arc::strong_count(&k.reads) > 1);
        kept.iter()
            .map(|(o, k)| (o.clone(), Arc::downgrade(&k.reads)))
            .collect()
    }

    /// The reads of `operator`'s log, `None` when the store read records no such log (never
    /// made, or made a moment ago and not yet on the replica). Blocks: call it off the async
    /// workers.
    pub fn of(&self, operator: &str) -> Result<Option<Arc<LogReads>>, StoreError> {
        if let Some(k) = self.kept.lock().expect("kept lock").get_mut(operator) {
            k.used = Instant::now();
            return Ok(Some(k.reads.clone()));
        }
        let mut conn = self
            .recorded
            .get()
            .map_err(|e| StoreError::Pool(e.to_string()))?;
        let namespace: Option<String> = operator_logs::table
            .filter(operator_logs::operator.eq(operator))
            .select(operator_logs::namespace)
            .first(&mut conn)
            .optional()?;
        drop(conn);
        let Some(namespace) = namespace else {
            return Ok(None);
        };
        let reads = Arc::new(LogReads::polled_elsewhere(
            store::lazy_read_pool_idle(&self.url.for_log(&namespace), 2, CONN_IDLE),
            self.witnesses.clone(),
        ));
        // Its size read before its first answer: a listing never promises less than is there.
        if !reads.poll(operator) {
            return Err(StoreError::Pool(format!(
                "the log of {operator:?} cannot be read now"
            )));
        }
        let mut kept = self.kept.lock().expect("kept lock");
        if let Some(k) = kept.get_mut(operator) {
            // Made by another request meanwhile: one kept.
            k.used = Instant::now();
            return Ok(Some(k.reads.clone()));
        }
        if kept.len() >= self.max {
            // The least recently read that no request holds now.
            let oldest = kept
                .iter()
                .filter(|(_, k)| Arc::strong_count(&k.reads) == 1)
                .min_by_key(|(_, k)| k.used)
                .map(|(o, _)| o.clone());
            if let Some(o) = oldest {
                kept.remove(&o);
            }
        }
        kept.insert(
            operator.to_owned(),
            Kept {
                reads: reads.clone(),
                used: Instant::now(),
            },
        );
        Ok(Some(reads))
    }

    /// How many logs' reads are kept now.
    pub fn kept(&self) -> usize {
        self.kept.lock().expect("kept lock").len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A service's store recording `operators`' logs, each log's store made (SQLite files).
    fn stores(dir: &std::path::Path, operators: &[&str]) -> DatabaseUrl {
        let url = DatabaseUrl::Sqlite(dir.join("pitboss.sqlite").display().to_string());
        store::migrate(&url).expect("migrate");
        let mut conn = store::connect(&url).expect("connect");
        for op in operators {
            let ns = store::log_namespace(op);
            std::fs::create_dir_all(dir.join("logs")).expect("logs dir");
            store::migrate(&url.for_log(&ns)).expect("migrate the log's store");
            store::per_backend!(&mut conn, c => diesel::insert_into(operator_logs::table)
                .values((
                    operator_logs::operator.eq(*op),
                    operator_logs::namespace.eq(&ns),
                    operator_logs::origin.eq(format!("o/operator/{op}")),
                    operator_logs::created_at.eq("2026-11-29T00:00:00Z"),
                ))
                .execute(c))
            .expect("record");
        }
        url
    }

    #[test]
    fn a_log_not_recorded_is_none_and_the_kept_logs_are_bounded() {
        let dir = tempfile::tempdir().expect("dir");
        let ops = ["op1", "op2", "op3", "op4", "op5"];
        let url = stores(dir.path(), &ops);
        let witnesses = Witnesses::parse(&Default::default()).expect("no witnesses");
        let stored = StoredReads::keeping(&url, false, witnesses, 3);
        assert!(stored.of("nobody").expect("read").is_none());
        assert_eq!(stored.kept(), 0, "a log that is not recorded is not kept");
        let first = stored.of("op1").expect("read").expect("recorded");
        assert_eq!(
            first.committed(),
            0,
            "an empty log, its size read before its first use"
        );
        assert!(Arc::ptr_eq(
            &first,
            &stored.of("op1").expect("read").expect("kept")
        ));
        let weak = Arc::downgrade(&first);
        drop(first);
        for op in &ops[1..] {
            assert!(stored.of(op).expect("read").is_some());
            assert!(stored.kept() <= 3, "{} kept", stored.kept());
        }
        assert_eq!(stored.kept(), 3);
        // The least recently read went first (its reads dropped, its poll with them).
        assert!(weak.upgrade().is_none(), "op1's reads were dropped");
        // A log a request holds (a listing waiting on its size) is not dropped for another.
        let held = stored.of("op2").expect("read").expect("recorded");
        for op in ["op3", "op4", "op5", "op1"] {
            stored.of(op).expect("read");
        }
        assert!(Arc::ptr_eq(
            &held,
            &stored.of("op2").expect("read").expect("kept")
        ));
    }
}
