//! The audit log as auditors and regulators read it: entries, checkpoints, inclusion proofs and
//! the JSONL export that `pitboss-audit verify` checks offline.

use actix_web::{get, post, web, HttpResponse};
use pitboss_audit::export::{ExportHeader, ExportWriter};
use serde::Deserialize;
use utoipa::IntoParams;

use super::auth::{Caller, Role};
use super::dto::{
    AuditEntries, CheckpointSigned, ConsistencyProofDocument, InclusionProofDocument, LoggedEntry,
    ProblemDocument,
};
use super::problem::{unavailable, Problem};
use super::startup::AppState;
use crate::service::read;
use crate::store::ReadPool;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

const READERS: &[Role] = &[Role::Auditor, Role::Regulator, Role::Admin];

/// Most entries one page returns.
pub const MAX_PAGE: i64 = crate::service::feed::MAX_PAGE;

/// The largest sequence number of the log format (audit/FORMAT.md §1.1).
const MAX_SEQ: u64 = (1 << 53) - 1;

/// Where a node reads the audit log from for the read routes (entries, the daily summary,
/// checkpoints, proofs): the store it reads (the primary, or a PostgreSQL read replica with
/// `serve --read-database-url`) and how many entries that store holds committed.
///
/// The count bounds what a listing promises (its `next` cursor) and what a consistency proof
/// may cover, so it must come from the store the read is made on: the writer's own count on
/// the primary, or a count read from the replica (or, on a standby, from the store) every
/// [`SIZE_POLL`], which never exceeds what a later query there sees.
pub struct LogReads {
    pub pool: ReadPool,
    size: LogSize,
    pub witnesses: crate::service::witnessing::Witnesses,
}

enum LogSize {
    /// The writer's count of committed entries (its reads are on the store it writes).
    Writer(std::sync::Arc<crate::service::Metrics>),
    /// Read from the store every [`SIZE_POLL`] by a thread that ends with the `LogReads`.
    Polled(std::sync::Arc<Polled>),
}

#[derive(Default)]
struct Polled {
    size: AtomicU64,
    /// Whether the store could be read at the last poll.
    read: AtomicBool,
    stop: AtomicBool,
}

impl Polled {
    fn poll(&self, pool: &ReadPool, log: &str) -> bool {
        match read::log_size(pool) {
            Ok(n) => {
                self.size.fetch_max(n, Ordering::AcqRel);
                self.read.store(true, Ordering::Release);
                true
            }
            Err(e) => {
                if self.read.swap(false, Ordering::AcqRel) {
                    tracing::warn!(log, error = %e, "cannot read the log's size");
                }
                false
            }
        }
    }
}

/// How often a node whose reads are not on the store it writes reads the log's size.
pub const SIZE_POLL: Duration = Duration::from_millis(200);

impl LogReads {
    /// The writer's reads, on the store it writes.
    pub fn of_writer(service: &crate::service::Service) -> LogReads {
        LogReads {
            pool: service.pool.clone(),
            size: LogSize::Writer(service.metrics.clone()),
            witnesses: service.witnesses.clone(),
        }
    }

    /// A node's reads of the log `service` holds (written or followed here): from the read
    /// replica when one is configured, else `service`'s own.
    pub fn of_node(
        service: &crate::service::Service,
        replica: Option<&crate::store::DatabaseUrl>,
    ) -> Result<LogReads, String> {
        match replica {
            None => Ok(LogReads::of_writer(service)),
            Some(r) => LogReads::polled(
                crate::store::lazy_read_pool(r, 4),
                service.witnesses.clone(),
            ),
        }
    }

    /// Reads on `pool`, which another process writes (a standby's store, or a replica).
    pub fn polled(
        pool: ReadPool,
        witnesses: crate::service::witnessing::Witnesses,
    ) -> Result<LogReads, String> {
        let polled = std::sync::Arc::new(Polled::default());
        {
            let (polled, pool) = (polled.clone(), pool.clone());
            std::thread::Builder::new()
                .name("pitboss-log-size".into())
                .spawn(move || {
                    while !polled.stop.load(Ordering::Acquire) {
                        polled.poll(&pool, "");
                        std::thread::sleep(SIZE_POLL);
                    }
                })
                .map_err(|e| e.to_string())?;
        }
        Ok(LogReads {
            pool,
            size: LogSize::Polled(polled),
            witnesses,
        })
    }

    /// Reads on `pool` whose size is read by [`LogReads::poll`], called by its owner
    /// ([`super::stored::StoredReads`] polls all of its logs' with one thread).
    pub(super) fn polled_elsewhere(
        pool: ReadPool,
        witnesses: crate::service::witnessing::Witnesses,
    ) -> LogReads {
        LogReads {
            pool,
            size: LogSize::Polled(std::sync::Arc::new(Polled::default())),
            witnesses,
        }
    }

    /// Reads the log's size from its store now (`log` names it in a warning); answers whether
    /// it could be read. Does nothing for the writer's reads.
    pub(super) fn poll(&self, log: &str) -> bool {
        match &self.size {
            LogSize::Writer(_) => true,
            LogSize::Polled(p) => p.poll(&self.pool, log),
        }
    }

    /// Entries committed and visible to a query made on [`LogReads::pool`] from now on.
    pub fn committed(&self) -> u64 {
        match &self.size {
            LogSize::Writer(m) => m.log_entries.load(Ordering::Acquire),
            LogSize::Polled(p) => p.size.load(Ordering::Acquire),
        }
    }
}

impl Drop for LogReads {
    fn drop(&mut self) {
        if let LogSize::Polled(p) = &self.size {
            p.stop.store(true, Ordering::Release);
        }
    }
}

/// The audit-entry listing's query: a cursor, a page size, filters and the follow mode.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct Since {
    /// The cursor: the first sequence number wanted (default 0). Each reply's `next` is the
    /// `since` of the page after it; sequence numbers stop at 2^53 − 1 (audit/FORMAT.md §1.1).
    #[serde(default)]
    #[param(maximum = 9_007_199_254_740_991_u64)]
    pub since: u64,
    /// At most this many entries, 1–10 000 (default 10 000).
    #[param(minimum = 1, maximum = 10000)]
    pub limit: Option<i64>,
    /// Only entries of these kinds, comma-separated (`round_voided,bet_refunded`).
    pub kind: Option<String>,
    /// Only entries of this table (`ids.table`; an operator key may name its own table by
    /// its name alone).
    pub table: Option<String>,
    /// Only entries of this round (`ids.round`; an operator key: by its table's name too).
    pub round: Option<String>,
    /// Only entries of this bet (`ids.bet`; an operator key: by its table's name too).
    pub bet: Option<String>,
    /// Only entries whose payload names this player (`payload.player`: bets, refusals,
    /// refunds, decisions, connections).
    pub player: Option<String>,
    /// Only refusals with this code (`max_win_exceeded`, `above_max_bet`, …).
    pub code: Option<String>,
    /// `true`: only the significant events a supervisor watches (exceptions, voids and
    /// refunds, malfunctions, plan, approval, key and configuration changes,
    /// `max_win_exceeded` refusals; the list is in audit/FORMAT.md). At most one of `player`,
    /// `code` and `significant`.
    pub significant: Option<bool>,
    /// Only entries logged at or after this time (RFC 3339).
    pub from: Option<String>,
    /// Only entries logged before this time (RFC 3339).
    pub to: Option<String>,
    /// Follow mode (auditor and regulator keys): when no entry matches yet, wait up to this
    /// many seconds (1–60) for one to be logged before answering (long poll).
    #[param(minimum = 1, maximum = 60)]
    pub wait: Option<u64>,
    /// With a log per operator: the log read (`service`, or an operator's id; an operator
    /// reads its own by default and only its own, the other roles the service's by default).
    pub log: Option<String>,
}

/// Longest follow-mode wait, in seconds.
pub const MAX_WAIT_S: u64 = 60;

fn malformed(detail: String) -> Problem {
    Problem::bad_request("malformed_query", detail)
}

/// A time of the query as the log writes timestamps (`2026-11-26T13:46:10.000000Z`).
fn log_time(what: &str, v: &Option<String>) -> Result<Option<String>, Problem> {
    v.as_ref()
        .map(|t| {
            chrono::DateTime::parse_from_rfc3339(t)
                .map(|d| {
                    pitboss_audit::entry::Timestamp::from_datetime(d.with_timezone(&chrono::Utc))
                        .to_string()
                })
                .map_err(|e| malformed(format!("{what}: {t:?} is not an RFC 3339 time ({e})")))
        })
        .transpose()
}

fn filter_of(q: &Since, caller: &Caller) -> Result<crate::service::feed::Filter, Problem> {
    let kinds = match &q.kind {
        None => None,
        Some(k) => {
            let kinds: Vec<String> = k.split(',').map(str::to_string).collect();
            if kinds.len() > 64
                || kinds.iter().any(|k| {
                    k.is_empty()
                        || k.len() > 64
                        || !k.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
                })
            {
                return Err(malformed(format!(
                    "kind: {k:?} is not a comma-separated list of entry kinds"
                )));
            }
            Some(kinds)
        }
    };
    for (what, v) in [
        ("table", &q.table),
        ("round", &q.round),
        ("bet", &q.bet),
        ("player", &q.player),
        ("code", &q.code),
    ] {
        if v.as_ref().is_some_and(|v| v.is_empty() || v.len() > 200) {
            return Err(malformed(format!("{what}: must be 1–200 characters")));
        }
    }
    // An operator's bare name (`t1`, `t1.3`, `t1.3.2`) stands for its scoped id and for its
    // own table logged bare before ids were scoped: the operator filter below keeps another
    // operator's bare table out.
    let ids = |v: &Option<String>| v.as_deref().map(|v| super::tables::named(caller, v));
    let f = crate::service::feed::Filter {
        kinds,
        table: ids(&q.table),
        round: ids(&q.round),
        bet: ids(&q.bet),
        player: q.player.clone(),
        code: q.code.clone(),
        significant: q.significant.unwrap_or(false),
        // An operator key lists its own entries only.
        operator: match caller.role {
            Role::Operator => caller.operator.clone(),
            _ => None,
        },
        from_ts: log_time("from", &q.from)?,
        to_ts: log_time("to", &q.to)?,
    };
    let tag_filters = [f.player.is_some(), f.code.is_some(), f.significant]
        .iter()
        .filter(|x| **x)
        .count();
    if tag_filters > 1 {
        return Err(malformed(
            "give at most one of player, code and significant".into(),
        ));
    }
    Ok(f)
}

/// Which log: `?log=` of the routes that take no other query.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct LogQuery {
    /// With a log per operator: the log read (`service`, or an operator's id; an operator
    /// reads its own by default and only its own, the other roles the service's by default).
    pub log: Option<String>,
}

/// The reads of the log a request names (`?log=`, [`AppState::log_named`]): the node's own
/// reads for the service's log (on a replica, when one is configured); for an operator's log,
/// its writer's reads where this node writes it, else (or with a replica) its reads from the
/// store ([`super::stored::StoredReads`]). A standby (no writer's state) serves the service's
/// log only.
pub struct Chosen {
    reads: ChosenReads,
    /// The log's writer, where this node writes it.
    writer: Option<std::sync::Arc<crate::service::Service>>,
}

enum ChosenReads {
    Node(web::Data<LogReads>),
    Writer(LogReads),
    Stored(std::sync::Arc<LogReads>),
}

impl std::ops::Deref for Chosen {
    type Target = LogReads;

    fn deref(&self) -> &LogReads {
        match &self.reads {
            ChosenReads::Node(r) => r,
            ChosenReads::Writer(r) => r,
            ChosenReads::Stored(r) => r,
        }
    }
}

impl Chosen {
    /// The reads of the log `svc` writes on this node, with its writer.
    fn of_writer(svc: std::sync::Arc<crate::service::Service>) -> Chosen {
        Chosen {
            reads: ChosenReads::Writer(LogReads::of_writer(&svc)),
            writer: Some(svc),
        }
    }
}

pub async fn chosen(
    reads: &web::Data<LogReads>,
    state: Option<&web::Data<AppState>>,
    caller: &Caller,
    log: Option<&str>,
) -> Result<Chosen, Problem> {
    let Some(st) = state else {
        return match log {
            None | Some(super::logs::SERVICE_LOG) => Ok(Chosen {
                reads: ChosenReads::Node(reads.clone()),
                writer: None,
            }),
            Some(l) => Err(Problem::not_found(
                "no_such_log",
                format!(
                    "no log {l:?} here: this node serves `{}`",
                    super::logs::SERVICE_LOG
                ),
            )),
        };
    };
    let node = || Chosen {
        reads: ChosenReads::Node(reads.clone()),
        writer: Some(st.service.clone()),
    };
    let Some(stored) = st.stored_reads.clone() else {
        let svc = st.log_named(caller, log)?;
        return Ok(if std::sync::Arc::ptr_eq(&svc, &st.service) {
            node()
        } else {
            Chosen::of_writer(svc)
        });
    };
    let Some((operator, named)) = st.operator_log_named(caller, log)? else {
        return Ok(node());
    };
    let writer = st.logs.as_ref().and_then(|l| l.get(&operator));
    if let (Some(w), false) = (&writer, stored.replica) {
        return Ok(Chosen::of_writer(w.clone()));
    }
    let op = operator.clone();
    match blocking(move || stored.of(&op)).await? {
        Some(r) => Ok(Chosen {
            reads: ChosenReads::Stored(r),
            writer,
        }),
        // Made a moment ago, not on the replica yet: its writer's reads, here.
        None => match writer {
            Some(w) => Ok(Chosen::of_writer(w)),
            None if named => Err(super::logs::no_such_log(&operator, false)),
            // An operator without a log of its own: its entries are in the service's.
            None => Ok(node()),
        },
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, crate::store::StoreError> + Send + 'static,
) -> Result<T, Problem> {
    web::block(f)
        .await
        .map_err(|e| unavailable(&e.to_string()))?
        .map_err(|e| unavailable(&e.to_string()))
}

/// Audit entries from a cursor, filtered: the listing of the log and the supervisor's feed.
///
/// Entries come in sequence order from `since`, at most `limit`, filtered by kind, table,
/// round, bet, player, refusal code, time range or significance. The reply's `next` is the
/// cursor of the page after this one: a sequence number, so it is stable (the log only
/// grows) and following it never skips or repeats an entry, even while entries are logged.
/// With `wait` (auditor and regulator keys) an empty page is held until a matching entry is
/// logged or the wait is over (long poll): `since=next&wait=30` in a loop follows the log.
///
/// Roles: **auditor**, **regulator**, **admin**; an **operator** key lists the entries of its
/// own operator only, and cannot follow.
#[utoipa::path(
    tag = "audit",
    operation_id = "audit_entries",
    security(("api_key" = [])),
    params(Since),
    responses(
        (status = 200, description = "A page of entries, in order, and the cursor of the next page.", body = AuditEntries),
        (status = 400, description = "`malformed_query`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: following (`wait`) needs the role auditor or regulator.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`no_such_log`: `log` names no log here.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: the log could not be read or signed now; retry.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[get("/v1/audit/entries")]
pub async fn entries(
    reads: web::Data<LogReads>,
    writer: Option<web::Data<AppState>>,
    caller: Caller,
    q: web::Query<Since>,
) -> Result<HttpResponse, Problem> {
    caller.require(&[Role::Auditor, Role::Regulator, Role::Admin, Role::Operator])?;
    let reads = chosen(&reads, writer.as_ref(), &caller, q.log.as_deref()).await?;
    let limit = q.limit.unwrap_or(MAX_PAGE);
    if !(1..=MAX_PAGE).contains(&limit) {
        return Err(malformed(format!("limit: {limit} is not 1–{MAX_PAGE}")));
    }
    let since = q.since;
    // The store reads sequence numbers as i64: a larger `since` would wrap to the log's start.
    if since > MAX_SEQ {
        return Err(malformed(format!(
            "since: {since} is beyond the largest sequence number, {MAX_SEQ}"
        )));
    }
    let wait = match q.wait {
        None => None,
        Some(w) if !(1..=MAX_WAIT_S).contains(&w) => {
            return Err(malformed(format!(
                "wait: {w} is not 1–{MAX_WAIT_S} seconds"
            )))
        }
        Some(w) => {
            caller.require(&[Role::Auditor, Role::Regulator])?;
            Some(std::time::Duration::from_secs(w))
        }
    };
    let filter = filter_of(&q, &caller)?;
    let deadline = wait.map(|w| tokio::time::Instant::now() + w);
    let log_size = || reads.committed();
    loop {
        let committed = log_size();
        let pool = reads.pool.clone();
        let f = filter.clone();
        let page =
            web::block(move || crate::service::feed::list(&pool, &f, since, limit, committed))
                .await
                .map_err(|e| unavailable(&e.to_string()))?
                .map_err(|e| match e {
                    crate::service::feed::ListError::Query(m) => malformed(m),
                    crate::service::feed::ListError::Store(e) => unavailable(&e.to_string()),
                })?;
        let done = match deadline {
            None => true,
            Some(d) => !page.rows.is_empty() || tokio::time::Instant::now() >= d,
        };
        if done {
            let entries: Vec<LoggedEntry> = page.rows.iter().map(LoggedEntry::from_row).collect();
            return Ok(HttpResponse::Ok().json(AuditEntries {
                since,
                next: page.next,
                entries,
            }));
        }
        // Nothing yet: wait until the log grows (or the wait is over), then look again.
        let d = deadline.expect("following");
        while log_size() == committed && tokio::time::Instant::now() < d {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct SummaryQuery {
    /// The UTC day, `YYYY-MM-DD`.
    pub date: String,
    /// Only this table.
    pub table: Option<String>,
    /// With a log per operator: the log read (`service`, or an operator's id; an operator
    /// reads its own by default and only its own, the other roles the service's by default).
    pub log: Option<String>,
}

/// The daily summary per table: rounds, bets and stakes, what settlements paid, refunds,
/// voids and refusals by code, for one UTC day, computed from the log.
///
/// Read from the store a page at a time; `pitboss replay EXPORT --daily-summary DATE` computes
/// the same from an export. Roles: **auditor**, **regulator**, **admin**.
#[utoipa::path(
    tag = "audit",
    operation_id = "daily_summary",
    security(("api_key" = [])),
    params(SummaryQuery),
    responses(
        (status = 200, description = "The day's summary, one line per table.", body = crate::service::summary::DailySummary),
        (status = 400, description = "`malformed_query`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: needs the role auditor, regulator or admin.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`no_such_log`: `log` names no log here.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: the log could not be read now; retry.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[get("/v1/audit/daily-summary")]
pub async fn daily_summary(
    reads: web::Data<LogReads>,
    writer: Option<web::Data<AppState>>,
    caller: Caller,
    q: web::Query<SummaryQuery>,
) -> Result<HttpResponse, Problem> {
    caller.require(READERS)?;
    let reads = chosen(&reads, writer.as_ref(), &caller, q.log.as_deref()).await?;
    let date = chrono::NaiveDate::parse_from_str(&q.date, "%Y-%m-%d")
        .map_err(|e| malformed(format!("date: {:?} is not YYYY-MM-DD ({e})", q.date)))?;
    let pool = reads.pool.clone();
    let table = q.table.clone();
    let s = blocking(move || crate::service::summary::from_store(&pool, date, table.as_deref()))
        .await?;
    Ok(HttpResponse::Ok().json(s))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct CheckpointQuery {
    /// `true`: the latest checkpoint that carries cosignatures by the configured quorum of
    /// witnesses (`serve --witness-quorum`), rather than the latest signed.
    pub witnessed: Option<bool>,
    /// With a log per operator: the log read (`service`, or an operator's id; an operator
    /// reads its own by default and only its own, the other roles the service's by default).
    pub log: Option<String>,
}

/// The latest signed checkpoint, as note text (`text/plain`), with the cosignatures of the
/// witnesses that have cosigned it so far.
///
/// A C2SP signed note: origin, tree size, root hash, then the Ed25519 signature lines
/// (`audit/FORMAT.md`): the log's own, then each configured witness's cosignature line
/// (C2SP tlog-cosignature) once that witness has cosigned this size. With `witnessed=true`,
/// the latest checkpoint carrying the quorum of cosignatures: what an auditor or a player
/// checks an inclusion proof against (`GET /v1/audit/proof/{seq}?size=…`). Roles: **auditor**,
/// **regulator**, **admin**.
#[utoipa::path(
    tag = "audit",
    operation_id = "latest_checkpoint",
    security(("api_key" = [])),
    params(CheckpointQuery),
    responses(
        (status = 200, description = "The signed checkpoint note, with the witnesses' cosignature lines it has.", body = String, content_type = "text/plain; charset=utf-8"),
        (status = 400, description = "`malformed_query`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: needs the role auditor, regulator or admin.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`no_such_log`: `log` names no log here. Or `no_checkpoint`: none signed yet; `not_witnessed`: with `witnessed=true`, no checkpoint carries the quorum of cosignatures yet (or no witness is configured).", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: the log could not be read or signed now; retry.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[get("/v1/audit/checkpoint")]
pub async fn checkpoint(
    reads: web::Data<LogReads>,
    writer: Option<web::Data<AppState>>,
    caller: Caller,
    q: web::Query<CheckpointQuery>,
) -> Result<HttpResponse, Problem> {
    caller.require(READERS)?;
    let reads = chosen(&reads, writer.as_ref(), &caller, q.log.as_deref()).await?;
    let pool = reads.pool.clone();
    if q.witnessed == Some(true) {
        let witnesses = reads.witnesses.clone();
        let (n, quorum) = (witnesses.specs.len(), witnesses.quorum);
        return match blocking(move || read::latest_witnessed_checkpoint(&pool, &witnesses))
            .await?
        {
            Some(cp) => Ok(HttpResponse::Ok()
                .content_type("text/plain; charset=utf-8")
                .body(cp.to_text())),
            None if n == 0 => Err(Problem::not_found(
                "not_witnessed",
                "no witness is configured (serve --witness-url, --witness-key)",
            )),
            None => Err(Problem::not_found(
                "not_witnessed",
                format!("no checkpoint carries cosignatures by {quorum} of the {n} configured witnesses yet"),
            )),
        };
    }
    match blocking(move || read::latest_checkpoint(&pool)).await? {
        Some(cp) => Ok(HttpResponse::Ok()
            .content_type("text/plain; charset=utf-8")
            .body(cp.to_text())),
        None => Err(Problem::not_found(
            "no_checkpoint",
            "no checkpoint has been signed yet",
        )),
    }
}

/// Signs a checkpoint of everything logged so far, now.
///
/// Safe to repeat: nothing is signed when nothing new was logged; it takes no body and no
/// `Idempotency-Key`. Roles: **auditor**, **regulator**, **admin**.
#[utoipa::path(
    tag = "audit",
    security(("api_key" = [])),
    params(LogQuery),
    responses(
        (status = 200, description = "The size of the tree the latest checkpoint covers.", body = CheckpointSigned),
        (status = 400, description = "`malformed_query`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: needs the role auditor, regulator or admin.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`no_such_log`: `log` names no log here.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: the log could not be read or signed now; retry.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[post("/v1/audit/checkpoint")]
pub async fn checkpoint_now(
    state: web::Data<AppState>,
    caller: Caller,
    q: web::Query<LogQuery>,
) -> Result<HttpResponse, Problem> {
    caller.require(READERS)?;
    let size = state
        .log_named(&caller, q.log.as_deref())?
        .checkpoint_now()
        .await
        .map_err(|e| unavailable(&e))?;
    Ok(HttpResponse::Ok().json(CheckpointSigned { tree_size: size }))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ProofQuery {
    /// Prove against the stored checkpoint of this size (e.g. the latest witnessed one,
    /// `GET /v1/audit/checkpoint?witnessed=true`) instead of the latest.
    pub size: Option<u64>,
    /// With a log per operator: the log read (`service`, or an operator's id; an operator
    /// reads its own by default and only its own, the other roles the service's by default).
    pub log: Option<String>,
}

/// A self-contained inclusion proof of entry `seq` against the latest checkpoint (or the
/// checkpoint of `size`), in the format `pitboss-audit check-proof` reads.
///
/// Without `size`, signs a checkpoint first if entries are pending. The proof's checkpoint
/// carries the witnesses' cosignatures stored for it. With a bet's receipt (its `seq` and
/// `leaf_hash`) it settles a dispute: the proof's entry hashes to the receipt's leaf hash, and
/// its path leads to the root of a checkpoint witnesses cosigned (README, "Receipts").
/// Roles: **auditor**, **regulator**, **admin**.
#[utoipa::path(
    tag = "audit",
    operation_id = "inclusion_proof",
    security(("api_key" = [])),
    params(("seq" = u64, Path, description = "The entry's sequence number (its leaf index)."), ProofQuery),
    responses(
        (status = 200, description = "The proof file.", body = InclusionProofDocument),
        (status = 400, description = "`malformed_path`: `seq` is not a number; `malformed_query`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: needs the role auditor, regulator or admin.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`no_such_log`: `log` names no log here. Or `entry_not_found`, `no_checkpoint` or `entry_not_covered`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: the log could not be read or signed now; retry.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[get("/v1/audit/proof/{seq}")]
pub async fn proof(
    reads: web::Data<LogReads>,
    writer: Option<web::Data<AppState>>,
    caller: Caller,
    path: web::Path<u64>,
    q: web::Query<ProofQuery>,
) -> Result<HttpResponse, Problem> {
    let q = q.into_inner();
    proof_of(reads, writer, caller, path.into_inner(), q.size, q.log).await
}

/// An inclusion proof; without `size`, the writer first signs a checkpoint of everything
/// logged (a standby passes such a request on to the writer, and serves those with a size).
pub async fn proof_of(
    reads: web::Data<LogReads>,
    writer: Option<web::Data<AppState>>,
    caller: Caller,
    seq: u64,
    size: Option<u64>,
    log: Option<String>,
) -> Result<HttpResponse, Problem> {
    caller.require(READERS)?;
    let reads = chosen(&reads, writer.as_ref(), &caller, log.as_deref()).await?;
    // Without a size, the log's writer signs a checkpoint first (the router passes such a
    // request to it), and the proof is read where that checkpoint was written (a replica may
    // not hold it yet); a node that does not write the log proves against the latest stored.
    let pool = match (size, &reads.writer) {
        (None, Some(w)) => {
            w.checkpoint_now().await.map_err(|e| unavailable(&e))?;
            w.pool.clone()
        }
        _ => reads.pool.clone(),
    };
    // The proof is made from the stored tree's tiles: O(log n) rows, nothing held in memory.
    let file = blocking(move || {
        let Some(entry) = read::entry(&pool, seq)? else {
            return Ok(Err("entry_not_found"));
        };
        let cp = match size {
            None => read::latest_checkpoint(&pool)?,
            Some(n) => read::checkpoint_of_size(&pool, n)?,
        };
        let Some(cp) = cp else {
            return Ok(Err("no_checkpoint"));
        };
        if seq >= cp.checkpoint.size {
            return Ok(Ok(None));
        }
        let mut conn = pool
            .get()
            .map_err(|e| crate::store::StoreError::Pool(e.to_string()))?;
        let src = crate::store::tiles::TileSource::over(&mut conn);
        pitboss_audit::proof::make_proof(&src, &entry, seq, &cp)
            .map(|f| Ok(Some(f)))
            .map_err(|e| crate::store::StoreError::Corrupt(e.to_string()))
    })
    .await?;
    match file {
        Ok(Some(file)) => Ok(HttpResponse::Ok().json(file)),
        Ok(None) => Err(Problem::not_found(
            "entry_not_covered",
            format!("entry {seq} is not yet covered by a checkpoint"),
        )),
        Err("entry_not_found") => Err(Problem::not_found(
            "entry_not_found",
            format!("no entry {seq}"),
        )),
        Err(_) => Err(Problem::not_found(
            "no_checkpoint",
            match size {
                None => "no checkpoint has been signed yet".to_owned(),
                Some(n) => format!("no checkpoint of size {n} was signed"),
            },
        )),
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ConsistencyRange {
    /// The older tree size (of a checkpoint you hold).
    pub from: u64,
    /// The newer tree size (of a later checkpoint, e.g. `GET /v1/audit/checkpoint`'s).
    pub to: u64,
    /// With a log per operator: the log read (`service`, or an operator's id; an operator
    /// reads its own by default and only its own, the other roles the service's by default).
    pub log: Option<String>,
}

/// An RFC 6962 consistency proof that the log's tree of `from` entries is a prefix of its tree
/// of `to` entries, in the format `pitboss-audit consistency --proof` reads.
///
/// Check it against the two signed checkpoints of those sizes (audit/FORMAT.md section 8): it
/// shows the newer checkpoint extends the older one, so nothing the older one covers was
/// changed or dropped. Roles: **auditor**, **regulator**, **admin**.
#[utoipa::path(
    tag = "audit",
    operation_id = "consistency_proof",
    security(("api_key" = [])),
    params(ConsistencyRange),
    responses(
        (status = 200, description = "The proof file.", body = ConsistencyProofDocument),
        (status = 400, description = "`malformed_query`, or `bad_range`: `from` is above `to`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: needs the role auditor, regulator or admin.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`no_such_log`: `log` names no log here. Or `beyond_log`: `to` is above the number of entries logged.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: the log could not be read now; retry.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[get("/v1/audit/consistency")]
pub async fn consistency(
    reads: web::Data<LogReads>,
    writer: Option<web::Data<AppState>>,
    caller: Caller,
    q: web::Query<ConsistencyRange>,
) -> Result<HttpResponse, Problem> {
    caller.require(READERS)?;
    let reads = chosen(&reads, writer.as_ref(), &caller, q.log.as_deref()).await?;
    let (from, to) = (q.from, q.to);
    if from > to {
        return Err(Problem::bad_request(
            "bad_range",
            format!("from ({from}) is above to ({to})"),
        ));
    }
    // Entries are counted once committed, and their tiles are committed with them.
    let size = reads.committed();
    if to > size {
        return Err(Problem::not_found(
            "beyond_log",
            format!("the log has {size} entries; no tree of size {to} yet"),
        ));
    }
    let pool = reads.pool.clone();
    // Read from the stored tree's tiles: O(log n) rows.
    let hashes = blocking(move || {
        let mut conn = pool
            .get()
            .map_err(|e| crate::store::StoreError::Pool(e.to_string()))?;
        let src = crate::store::tiles::TileSource::over(&mut conn);
        pitboss_audit::merkle::consistency_proof(&src, from, to)
            .map_err(|e| crate::store::StoreError::Corrupt(e.to_string()))
    })
    .await?;
    Ok(HttpResponse::Ok().json(ConsistencyProofDocument {
        format: pitboss_audit::consistency::CONSISTENCY_FORMAT.to_owned(),
        old_size: from,
        new_size: to,
        proof: hashes.iter().map(|h| h.to_hex()).collect(),
    }))
}

/// The whole log as JSONL: header, entries, and the signed checkpoints in place, ending with
/// a checkpoint of the full size (signed for the export).
///
/// One JSON document per line (`audit/FORMAT.md`); `pitboss-audit verify` checks it offline
/// with the public key alone. Roles: **auditor**, **regulator**, **admin**.
#[utoipa::path(
    tag = "audit",
    operation_id = "export_log",
    security(("api_key" = [])),
    params(LogQuery),
    responses(
        (status = 200, description = "The export, JSONL.", body = String, content_type = "application/jsonl"),
        (status = 400, description = "`malformed_query`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: needs the role auditor, regulator or admin.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`no_such_log`: `log` names no log here.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: the log could not be read or signed now; retry.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[get("/v1/audit/export")]
pub async fn export(
    state: web::Data<AppState>,
    caller: Caller,
    q: web::Query<LogQuery>,
) -> Result<HttpResponse, Problem> {
    caller.require(READERS)?;
    let log = state.log_named(&caller, q.log.as_deref())?;
    log.checkpoint_now().await.map_err(|e| unavailable(&e))?;
    let pool = log.pool.clone();
    let header = ExportHeader::new(
        &log.origin,
        log.key_validity.read().expect("keys lock").clone(),
    );
    let bytes = blocking(move || {
        let cps = read::checkpoints(&pool)?;
        let size = cps.last().map_or(0, |c| c.checkpoint.size);
        let mut w = ExportWriter::new(Vec::new(), &header)
            .map_err(|e| crate::store::StoreError::Corrupt(e.to_string()))?;
        let mut cps = cps.into_iter().peekable();
        let io = |e: std::io::Error| crate::store::StoreError::Corrupt(e.to_string());
        while let Some(cp) = cps.next_if(|c| c.checkpoint.size == 0) {
            w.checkpoint(&cp).map_err(io)?;
        }
        let mut next = 0u64;
        while next < size {
            let page = read::entries_since(&pool, next, MAX_PAGE)?;
            if page.is_empty() {
                break;
            }
            for (seq, canonical) in page.into_iter().take_while(|(s, _)| *s < size) {
                w.entry(&canonical).map_err(io)?;
                next = seq + 1;
                while let Some(cp) = cps.next_if(|c| c.checkpoint.size == next) {
                    w.checkpoint(&cp).map_err(io)?;
                }
            }
        }
        w.finish().map_err(io)
    })
    .await?;
    Ok(HttpResponse::Ok()
        .content_type("application/jsonl")
        .body(bytes))
}

/// The log's current signing key: the Ed25519 public key as SubjectPublicKeyInfo PEM
/// (`-----BEGIN PUBLIC KEY-----`, RFC 8410), the file `pitboss-audit verify --public-key` takes.
///
/// Only the key, nothing else: no private key, no validity. Its signed-note name is the log's
/// origin (the first line of `GET /v1/audit/checkpoint`). Which sizes each key may sign, across
/// rotations, is in the export's header and proved by the log's `key_rotated` entries; an auditor
/// holding this key from before a rotation learns the later keys from the log itself. No
/// authentication: anyone may verify the log.
#[utoipa::path(
    tag = "audit",
    responses(
        (status = 200, description = "The log's current Ed25519 signing key as a SubjectPublicKeyInfo PEM block (RFC 8410), and nothing else.", body = String, content_type = "application/x-pem-file"),
    ),
)]
#[get("/v1/audit/public-key")]
pub async fn public_key(state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/x-pem-file")
        .body(
            state
                .service
                .public_key_pem
                .read()
                .expect("pem lock")
                .clone(),
        )
}
