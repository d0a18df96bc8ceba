//! A log per operator (issue 17, `serve --log-per-operator`).
//!
//! Each operator's tables, rounds, bets, player register and payouts are written to a log of
//! their own: its own chain, tree, checkpoints and origin (the service's origin followed by
//! `/operator/<operator>`), in a store namespace of its own (a PostgreSQL schema of the same
//! database, or a SQLite file under `logs/` beside the service's), written by a writer of its
//! own ([`Service`]: its own thread, committer, lease and snapshots). So operators never wait
//! for one another's commits, and an operator's auditor gets exactly that operator's log.
//! The service's log keeps what belongs to no operator: plans loaded, API keys, approvals of
//! plan versions, signing-key rotations.
//!
//! A log is made when its operator first sends a command, and recorded in the service's store
//! (`operator_logs`), so every start opens each of them (snapshot and tail, as the service's
//! log). Every store of the deployment holds the same migrations; an operator's store leaves
//! the service-wide tables (keys, sessions, `operator_logs`) empty.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use diesel::prelude::*;

use super::{Service, StartError, StartOptions};
use crate::plan::PlanSet;
use crate::store::{self, schema::operator_logs, DatabaseUrl, ReadPool, StoreError};

/// The origin of an operator's log: the service's, then `/operator/<operator>`.
pub fn origin_of(service_origin: &str, operator: &str) -> String {
    format!("{service_origin}/operator/{operator}")
}

/// The operators' logs of one deployment, opened at start and made on first use.
pub struct OperatorLogs {
    url: DatabaseUrl,
    plans: PlanSet,
    key_path: PathBuf,
    origin: String,
    options: StartOptions,
    open: RwLock<BTreeMap<String, Arc<Service>>>,
    /// One log is made at a time (its store is migrated, its writer started).
    making: Mutex<()>,
    /// Read pools on the logs another node writes (several nodes), made on first use and kept
    /// (one per operator's log, holding no idle connection).
    elsewhere: Mutex<BTreeMap<String, ReadPool>>,
}

/// A log recorded in the service's store.
#[derive(Debug, Clone, PartialEq, Eq, Queryable)]
pub struct Recorded {
    pub operator: String,
    pub namespace: String,
    pub origin: String,
    pub created_at: String,
}

/// The operators' logs recorded in the service's store.
pub fn recorded(conn: &mut store::DbConnection) -> Result<Vec<Recorded>, StoreError> {
    Ok(operator_logs::table
        .order(operator_logs::operator)
        .load::<Recorded>(conn)?)
}

impl OperatorLogs {
    /// Opens every recorded operator's log (each replays from its latest snapshot).
    /// `options` are the service log's; `origin` is the service log's origin.
    pub fn open_all(
        url: &DatabaseUrl,
        plans: PlanSet,
        key_path: &Path,
        origin: &str,
        options: StartOptions,
    ) -> Result<OperatorLogs, StartError> {
        let logs = OperatorLogs::lazy(url, plans, key_path, origin, options);
        let mut conn = store::connect(url)?;
        for r in recorded(&mut conn)? {
            let service = logs.start(&r.operator)?;
            logs.open
                .write()
                .expect("logs lock")
                .insert(r.operator, Arc::new(service));
        }
        Ok(logs)
    }

    /// No log opened yet: each is opened by the first request for it on this node
    /// ([`OperatorLogs::open_recorded`], [`OperatorLogs::get_or_make`]). Several nodes
    /// (`--node-url`) share the logs this way: each writes those it opened.
    pub fn lazy(
        url: &DatabaseUrl,
        plans: PlanSet,
        key_path: &Path,
        origin: &str,
        options: StartOptions,
    ) -> OperatorLogs {
        OperatorLogs {
            url: url.clone(),
            plans,
            key_path: key_path.to_path_buf(),
            origin: origin.to_owned(),
            options,
            open: RwLock::new(BTreeMap::new()),
            making: Mutex::new(()),
            elsewhere: Mutex::new(BTreeMap::new()),
        }
    }

    /// The operator's log, opened here (its lease taken, its state read from the store) if it
    /// was made and is not open yet; `None` when it was never made. Blocks: call it off the
    /// async workers.
    pub fn open_recorded(&self, operator: &str) -> Result<Option<Arc<Service>>, StartError> {
        if let Some(s) = self.get(operator) {
            return Ok(Some(s));
        }
        let _making = self.making.lock().expect("logs lock");
        if let Some(s) = self.get(operator) {
            return Ok(Some(s));
        }
        let mut conn = store::connect(&self.url)?;
        let made = operator_logs::table
            .filter(operator_logs::operator.eq(operator))
            .count()
            .get_result::<i64>(&mut conn)
            .map_err(StoreError::from)?
            > 0;
        if !made {
            return Ok(None);
        }
        Ok(Some(self.started(operator)?))
    }

    /// The operator's log, if it has been made.
    pub fn get(&self, operator: &str) -> Option<Arc<Service>> {
        self.open.read().expect("logs lock").get(operator).cloned()
    }

    /// The operator's log, made (its store migrated, recorded, its writer started) if it does
    /// not exist yet. Blocks: call it off the async workers.
    pub fn get_or_make(&self, operator: &str) -> Result<Arc<Service>, StartError> {
        if let Some(s) = self.get(operator) {
            return Ok(s);
        }
        let _making = self.making.lock().expect("logs lock");
        if let Some(s) = self.get(operator) {
            return Ok(s);
        }
        // Recorded first: a log that started is always one every later start opens (a
        // recorded log whose start failed is started by the next command, or at the next
        // start, its store made then).
        self.record(operator)?;
        self.started(operator)
    }

    /// Starts the operator's writer here and keeps it among the open logs.
    fn started(&self, operator: &str) -> Result<Arc<Service>, StartError> {
        let service = Arc::new(self.start(operator)?);
        self.open
            .write()
            .expect("logs lock")
            .insert(operator.to_owned(), service.clone());
        tracing::info!(operator, origin = %service.origin, "writes the operator's log");
        Ok(service)
    }

    /// A read pool on every operator's log recorded in the service's store (read on `conn`):
    /// an open log's own, and for a log another node writes (several nodes), one made here.
    /// Blocks: call it off the async workers.
    pub fn every_pool(
        &self,
        conn: &mut store::DbConnection,
    ) -> Result<Vec<(String, ReadPool)>, StoreError> {
        let mut elsewhere = self.elsewhere.lock().expect("logs lock");
        Ok(recorded(conn)?
            .into_iter()
            .map(|r| {
                let pool = match self.get(&r.operator) {
                    Some(s) => s.pool.clone(),
                    None => elsewhere
                        .entry(r.operator.clone())
                        .or_insert_with(|| {
                            store::lazy_read_pool(&self.url.for_log(&r.namespace), 2)
                        })
                        .clone(),
                };
                (r.operator, pool)
            })
            .collect())
    }

    /// Every open operator's log, by operator.
    pub fn all(&self) -> Vec<(String, Arc<Service>)> {
        self.open
            .read()
            .expect("logs lock")
            .iter()
            .map(|(o, s)| (o.clone(), s.clone()))
            .collect()
    }

    fn start(&self, operator: &str) -> Result<Service, StartError> {
        let url = self.url.for_log(&store::log_namespace(operator));
        let origin = origin_of(&self.origin, operator);
        let mut options = self.options.clone();
        // An operator's log holds no idle read connections of its own.
        options.lazy_reads = true;
        Service::start(
            url,
            self.plans.clone(),
            &self.key_path,
            Some(&origin),
            options,
        )
    }

    /// Records the operator's log in the service's store (once; recording it again does
    /// nothing).
    fn record(&self, operator: &str) -> Result<(), StoreError> {
        let mut conn = store::connect(&self.url)?;
        let row = (
            operator_logs::operator.eq(operator),
            operator_logs::namespace.eq(store::log_namespace(operator)),
            operator_logs::origin.eq(origin_of(&self.origin, operator)),
            operator_logs::created_at.eq(chrono::Utc::now().to_rfc3339()),
        );
        store::per_backend!(&mut conn, c => diesel::insert_into(operator_logs::table)
            .values(row)
            .on_conflict_do_nothing()
            .execute(c))?;
        Ok(())
    }

    /// Stops every operator's writer (each stores a snapshot and signs what is unsigned).
    pub async fn shutdown(&self) {
        for (_, s) in self.all() {
            s.shutdown().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operators_log_has_its_own_origin_and_namespace() {
        assert_eq!(
            origin_of("casino.example/pitboss", "opA"),
            "casino.example/pitboss/operator/opA"
        );
        let (a, b) = (store::log_namespace("opA"), store::log_namespace("opa"));
        assert_ne!(a, b, "operator ids are case-sensitive");
        assert!(a.starts_with("op_") && a.len() == 23, "{a}");
        assert!(a[3..].bytes().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(a, store::log_namespace("opA"));
        let long = store::log_namespace(&"x".repeat(64));
        assert!(long.len() <= 63, "a PostgreSQL name holds 63 bytes");
    }

    #[test]
    fn an_operators_store_is_beside_the_services() {
        let sqlite = DatabaseUrl::Sqlite("/d/pitboss.sqlite".into());
        assert_eq!(
            sqlite.for_log("op_00"),
            DatabaseUrl::Sqlite("/d/logs/op_00.sqlite".into())
        );
        let pg = DatabaseUrl::Postgres("postgres://h/db?sslmode=require".into());
        let op = pg.for_log("op_00");
        assert_eq!(
            op.as_str(),
            "postgres://h/db?sslmode=require#pitboss-log=op_00"
        );
        // A namespace of a namespace replaces it.
        assert_eq!(
            op.for_log("op_11").as_str(),
            "postgres://h/db?sslmode=require#pitboss-log=op_11"
        );
    }
}
