//! The service's log followed, not written (issue 17: several nodes with a log per operator).
//!
//! With `--log-per-operator` and `--node-url`, one node holds the service log's lease and
//! writes it (plans loaded, API keys, approvals); every node writes the operators' logs whose
//! leases it holds. A node that does not write the service's log still needs what it decides:
//! an operator's writer refuses a table or a round on a plan version the regulator has not
//! approved, or has withdrawn, by the service log's state. [`Service::follow`] builds that
//! state from the store as a start does (the latest snapshot, then the entries after it) and
//! keeps it current: a thread reads the entries the writer commits, every [`POLL`], and applies
//! them. An approval or a withdrawal is seen on every node within that.
//!
//! A followed service writes nothing: its commands are answered `503` (the HTTP layer sends
//! every request for the service's log to the node that writes it before it gets here).

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc, Mutex, RwLock, Weak};
use std::time::Duration;

use diesel::prelude::*;
use pitboss_audit::log::Appender;

use super::{
    apply_logged, open_with_key, restore_snapshot, stored_log_state, Metrics, Service, StartError,
    StartOptions, SUBMIT_DEADLINE,
};
use crate::plan::PlanSet;
use crate::round::State;
use crate::store::schema::audit_entries;
use crate::store::{self, DatabaseUrl, DbConnection, StoreError};

/// How often a followed log reads what was committed since.
pub const POLL: Duration = Duration::from_millis(200);

/// Entries read per query.
const PAGE: i64 = 10_000;

impl Service {
    /// The log at `url` as its writer last committed it, followed (see the module's comment);
    /// `None` until a node has written the log once (it has no state to follow yet). Refused
    /// when this node's signing key did not sign it (a node of another deployment).
    pub fn follow(
        url: DatabaseUrl,
        plans: PlanSet,
        key_path: &Path,
        options: &StartOptions,
    ) -> Result<Option<Service>, StartError> {
        let (key, mut conn) = open_with_key(&url, key_path)?;
        let Some(st) = stored_log_state(&mut conn)? else {
            return Ok(None);
        };
        let origin = st.origin.clone();
        let appender = Appender::from_state(st).map_err(|e| StartError::Replay(e.to_string()))?;
        let (state, covers) =
            restore_snapshot(&mut conn, &plans, appender.size())?.unwrap_or((State::default(), 0));
        let metrics = Arc::new(Metrics {
            throttled: options.throttled.clone(),
            ..Metrics::default()
        });
        // What the log's state row counts is committed (the audit reads' size on this node;
        // the cursor raises it as it applies what follows).
        metrics
            .log_entries
            .store(appender.size(), std::sync::atomic::Ordering::Relaxed);
        let state = Arc::new(RwLock::new(state));
        let plans = Arc::new(plans);
        let cursor = Arc::new(Cursor {
            url: url.clone(),
            plans: plans.clone(),
            state: Arc::downgrade(&state),
            metrics: Arc::downgrade(&metrics),
            at: Mutex::new((covers as i64 - 1, Some(conn))),
        });
        // The entries after the snapshot, a page at a time.
        while cursor.catch_up().map_err(StartError::Replay)? > 0 {}
        let public_key_pem =
            pitboss_audit::note::public_key_to_pem(&key.verifying_key()).map_err(|e| {
                StartError::Key {
                    path: key_path.to_path_buf(),
                    detail: e.to_string(),
                }
            })?;
        let witnesses =
            super::witnessing::Witnesses::parse(&options.witnesses).map_err(StartError::Origin)?;
        {
            let cursor = Arc::downgrade(&cursor);
            std::thread::Builder::new()
                .name("pitboss-follower".into())
                .spawn(move || loop {
                    std::thread::sleep(POLL);
                    let Some(c) = cursor.upgrade() else { return };
                    if let Err(e) = c.catch_up() {
                        tracing::warn!(error = %e, "following the service's log");
                    }
                })?;
        }
        // No writer: a command sent here is answered `503` at once.
        let (tx, _) = mpsc::sync_channel(1);
        Ok(Some(Service {
            tx,
            state,
            pool: store::lazy_read_pool(&url, 2),
            plans,
            metrics,
            origin,
            public_key_pem: Arc::new(RwLock::new(public_key_pem)),
            key_validity: Arc::new(RwLock::new(appender.keys().validity())),
            database: url,
            submit_deadline: options.submit_deadline.unwrap_or(SUBMIT_DEADLINE),
            require_approval: options.regulator.require_approval,
            witnesses,
            followed: Some(cursor),
        }))
    }
}

/// Where a followed log's state stands in the log, and the connection it reads on.
pub struct Cursor {
    url: DatabaseUrl,
    plans: Arc<PlanSet>,
    state: Weak<RwLock<State>>,
    metrics: Weak<Metrics>,
    /// The last entry applied, and the connection (none after a failed read).
    at: Mutex<(i64, Option<DbConnection>)>,
}

impl Cursor {
    /// Applies what the writer committed since the last call (one read; at most [`PAGE`]
    /// entries, the rest at the next); answers how many. An entry that does not apply is an
    /// error every later call repeats: the state stays at the entry before it.
    pub fn catch_up(&self) -> Result<usize, String> {
        let Some(state) = self.state.upgrade() else {
            return Ok(0);
        };
        let mut at = self.at.lock().expect("cursor lock");
        let (last, conn) = &mut *at;
        let c = store::connected(&self.url, conn).map_err(|e| e.to_string())?;
        let rows = match committed_after(c, *last) {
            Ok(rows) => rows,
            Err(e) => {
                *conn = None;
                return Err(e.to_string());
            }
        };
        if rows.is_empty() {
            return Ok(0);
        }
        let applied = rows.len();
        let mut s = state.write().expect("state lock");
        for (seq, canonical) in rows {
            apply_logged(&mut s, &self.plans, seq, &canonical, |_, _| {})
                .map_err(|e| e.to_string())?;
            *last = seq;
        }
        drop(s);
        if let Some(m) = self.metrics.upgrade() {
            m.log_entries
                .store(u64::try_from(*last + 1).unwrap_or(0), Ordering::Relaxed);
        }
        Ok(applied)
    }
}

/// Where an operator's writer reads approvals of plan versions: the service log's state, in
/// this process (the node writes the service's log), or followed from the store (another node
/// writes it), then brought up to what was committed before each decision that needs it, so an
/// approval or a withdrawal acknowledged on any node is seen by the next table or round
/// opened on every node.
#[derive(Clone)]
pub struct Approvals {
    pub state: Arc<RwLock<State>>,
    pub cursor: Option<Arc<Cursor>>,
}

impl Approvals {
    /// The service's log's state, current as of now.
    pub fn current(&self) -> std::sync::RwLockReadGuard<'_, State> {
        if let Some(c) = &self.cursor {
            if let Err(e) = c.catch_up() {
                // Decided on the state as last followed (≤ [`POLL`] old while the store
                // answers; the operator's own writer cannot commit while it does not).
                tracing::warn!(error = %e, "approvals: following the service's log");
            }
        }
        self.state.read().expect("state lock")
    }

    /// The approvals of a service whose log this process writes or follows.
    pub fn of(service: &Service) -> Approvals {
        Approvals {
            state: service.state.clone(),
            cursor: service.followed.clone(),
        }
    }
}

impl std::fmt::Debug for Approvals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Approvals")
            .field("followed", &self.cursor.is_some())
            .finish()
    }
}

/// Up to [`PAGE`] committed entries after `last`, in order.
fn committed_after(conn: &mut DbConnection, last: i64) -> Result<Vec<(i64, Vec<u8>)>, StoreError> {
    let rows: Vec<(i64, Vec<u8>)> = audit_entries::table
        .filter(audit_entries::seq.gt(last))
        .order(audit_entries::seq.asc())
        .select((audit_entries::seq, audit_entries::canonical))
        .limit(PAGE)
        .load(conn)?;
    // The committer commits in order, so what is visible is a prefix of the log; stop at a
    // gap all the same (the next read starts there again).
    let mut next = last + 1;
    Ok(rows
        .into_iter()
        .take_while(|(seq, _)| {
            let ok = *seq == next;
            next += 1;
            ok
        })
        .collect())
}
