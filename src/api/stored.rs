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
//! Bounded: one [`LogReads`] per operator's log read in the last [`KEPT_IDLE`], at most
//! [`KEPT_MAX`] of them (the least recently read is dropped first), each with a pool that
//! holds no idle connection of its own; one thread reads the size of every kept log every
//! [`SIZE_POLL`].

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use diesel::prelude::*;

use super::audit::{LogReads, SIZE_POLL};
use crate::service::witnessing::Witnesses;
use crate::store::{self, schema::operator_logs, DatabaseUrl, ReadPool, StoreError};

/// Most operators' logs whose reads are kept at once.
pub const KEPT_MAX: usize = 64;

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
        StoredReads::keeping(url, replica, witnesses, KEPT_MAX)
    }

    fn keeping(
        url: &DatabaseUrl,
        replica: bool,
        witnesses: Witnesses,
        max: usize,
    ) -> Result<Arc<StoredReads>, String> {
        let stored = Arc::new(StoredReads {
            url: url.clone(),
            replica,
            recorded: store::lazy_read_pool(url, 2),
            witnesses,
            kept: Mutex::new(BTreeMap::new()),
            max,
        });
        let weak: Weak<StoredReads> = Arc::downgrade(&stored);
        std::thread::Builder::new()
            .name("pitboss-log-sizes".into())
            .spawn(move || loop {
                std::thread::sleep(SIZE_POLL);
                let Some(stored) = weak.upgrade() else { return };
                for (operator, reads) in stored.kept_now() {
                    reads.poll(&operator);
                }
            })
            .map_err(|e| e.to_string())?;
        Ok(stored)
    }

    /// The logs kept now, the idle ones dropped first.
    fn kept_now(&self) -> Vec<(String, Arc<LogReads>)> {
        let mut kept = self.kept.lock().expect("kept lock");
        kept.retain(|_, k| k.used.elapsed() < KEPT_IDLE);
        kept.iter()
            .map(|(o, k)| (o.clone(), k.reads.clone()))
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
            store::lazy_read_pool(&self.url.for_log(&namespace), 2),
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
            let oldest = kept
                .iter()
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
        let stored = StoredReads::keeping(&url, false, witnesses, 3).expect("start");
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
        for op in &ops[1..] {
            assert!(stored.of(op).expect("read").is_some());
            assert!(stored.kept() <= 3, "{} kept", stored.kept());
        }
        assert_eq!(stored.kept(), 3);
        // The least recently read went first: op1 is made again, a new one.
        let again = stored.of("op1").expect("read").expect("recorded");
        assert!(!Arc::ptr_eq(&first, &again));
    }
}
