//! Listings: the caller's tables, and a table's rounds, with stable cursors.
//!
//! Both are read from the log's own index (the `table_opened` and `round_opened` entries, by
//! `kind`/`table_id` and `seq`), so a cursor is a sequence number: it never shifts when tables
//! or rounds are added, and a page costs O(page) rows, whatever the history holds. Each item's
//! current state comes from memory while it is live, from the store once finished.

use actix_web::{get, web, HttpResponse};
use diesel::prelude::*;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::auth::Caller;
use super::dto::ProblemDocument;
use super::problem::{unavailable, Problem};
use super::startup::AppState;
use crate::service::Service;
use crate::store::schema::audit_entries;
use crate::store::schema::audit_table_entries as by_table;
use crate::store::StoreError;

/// Most items a page holds.
pub const MAX_LIMIT: u32 = 1000;
/// Rows read at most for one page of a filtered listing: a page may come back short, with
/// its cursor where the reading stopped.
const SCAN: i64 = 5_000;

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct TablesQuery {
    /// The `next` of the previous page (a sequence number of the log).
    #[param(maximum = 9_007_199_254_740_991_u64)]
    pub after: Option<u64>,
    /// Items per page, 1–1000 (default 100).
    pub limit: Option<u32>,
    /// Only open (`true`) or only closed (`false`) tables.
    pub open: Option<bool>,
    /// With a log per operator: the log listed (`service`, or an operator's id; an operator
    /// lists its own by default, the other roles the service's). Cursors are its sequence
    /// numbers.
    pub log: Option<String>,
}

/// One table as listed.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TableItem {
    pub table: String,
    pub operator: String,
    pub plan: String,
    pub mode: crate::plan::model::Mode,
    pub open: bool,
    /// Rounds opened so far.
    pub rounds: u64,
    #[schema(required = true)]
    pub current_round: Option<String>,
    /// When it was opened (the `table_opened` entry's time).
    pub opened_at: String,
}

/// A page of tables, in the order they were opened.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TableList {
    pub tables: Vec<TableItem>,
    /// Pass as `after` for the next page; `null` when nothing follows.
    #[schema(required = true)]
    pub next: Option<u64>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct RoundsQuery {
    /// The `next` of the previous page (a sequence number of the log).
    #[param(maximum = 9_007_199_254_740_991_u64)]
    pub after: Option<u64>,
    /// Items per page, 1–1000 (default 100).
    pub limit: Option<u32>,
    /// Only rounds in this phase (`betting`, `betting_closed`, `decisions`, `settled`,
    /// `voided`).
    pub phase: Option<crate::round::Phase>,
    /// Only rounds opened at or after this time (RFC 3339, UTC).
    pub from: Option<chrono::DateTime<chrono::Utc>>,
    /// Only rounds opened before this time (RFC 3339, UTC).
    pub until: Option<chrono::DateTime<chrono::Utc>>,
}

/// One round as listed.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RoundItem {
    pub round: String,
    pub number: u64,
    pub phase: crate::round::Phase,
    pub opened_at: chrono::DateTime<chrono::Utc>,
    pub bets: usize,
}

/// A page of a table's rounds, in the order they were opened.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RoundList {
    pub table: String,
    pub rounds: Vec<RoundItem>,
    /// Pass as `after` for the next page; `null` when nothing follows. A filtered page may
    /// hold fewer than `limit` rounds and still have a `next`.
    #[schema(required = true)]
    pub next: Option<u64>,
}

fn limit_of(limit: Option<u32>) -> Result<u32, Problem> {
    let limit = limit.unwrap_or(100);
    if (1..=MAX_LIMIT).contains(&limit) {
        Ok(limit)
    } else {
        Err(Problem::bad_request(
            "bad_limit",
            format!("limit {limit} is outside 1–{MAX_LIMIT}"),
        ))
    }
}

/// The largest sequence number of the log format (audit/FORMAT.md §1.1).
const MAX_SEQ: u64 = (1 << 53) - 1;

fn cursor(after: Option<u64>) -> Result<i64, Problem> {
    match after {
        None => Ok(-1),
        Some(a) if a <= MAX_SEQ => Ok(a as i64),
        Some(a) => Err(Problem::bad_request(
            "malformed_query",
            format!("after: {a} is beyond the largest sequence number, {MAX_SEQ}"),
        )),
    }
}

/// The caller's tables (an operator's own; every table for the roles that read everything),
/// open and closed, in the order they were opened.
///
/// Roles: any.
#[utoipa::path(
    tag = "tables",
    security(("api_key" = [])),
    params(TablesQuery),
    responses(
        (status = 200, description = "A page of tables.", body = TableList),
        (status = 400, description = "`malformed_query` or `bad_limit`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed, unknown, revoked or expired API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: an operator named another operator's log.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`no_such_log`: `log` names no log.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: the store could not be read; retry.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[get("/v1/tables")]
pub async fn list_tables(
    state: web::Data<AppState>,
    caller: Caller,
    q: web::Query<TablesQuery>,
) -> Result<HttpResponse, Problem> {
    let limit = limit_of(q.limit)?;
    let operator = (!caller.reads_all()).then(|| caller.operator.clone().unwrap_or_default());
    let after = cursor(q.after)?;
    let open_filter = q.open;
    let log = state.log_named(&caller, q.log.as_deref())?;
    let page = web::block(move || -> Result<TableList, StoreError> {
        let mut c = log
            .pool
            .get()
            .map_err(|e| StoreError::Pool(e.to_string()))?;
        let mut at = after;
        let mut tables = Vec::new();
        let mut scanned = 0i64;
        loop {
            let mut query = audit_entries::table
                .filter(audit_entries::kind.eq("table_opened"))
                .filter(audit_entries::seq.gt(at))
                .order(audit_entries::seq.asc())
                .select((
                    audit_entries::seq,
                    audit_entries::table_id,
                    audit_entries::ts,
                ))
                .limit(i64::from(limit) + 1)
                .into_boxed();
            if let Some(op) = &operator {
                query = query.filter(audit_entries::operator_id.eq(op.clone()));
            }
            let rows: Vec<(i64, Option<String>, String)> = query.load(&mut *c)?;
            let exhausted = rows.len() <= limit as usize;
            for (seq, table, ts) in rows {
                scanned += 1;
                let Some(id) = table else { continue };
                let item = table_item(&log, &mut c, &id, ts)?;
                if let Some(item) = item.filter(|t| open_filter.is_none_or(|o| t.open == o)) {
                    if tables.len() == limit as usize {
                        return Ok(TableList {
                            tables,
                            next: Some(at as u64),
                        });
                    }
                    tables.push(item);
                }
                at = seq;
            }
            if exhausted {
                return Ok(TableList { tables, next: None });
            }
            if scanned >= SCAN {
                return Ok(TableList {
                    tables,
                    next: Some(at as u64),
                });
            }
        }
    })
    .await
    .map_err(|e| unavailable(&e.to_string()))?
    .map_err(|e| unavailable(&e.to_string()))?;
    Ok(HttpResponse::Ok().json(page))
}

fn table_item(
    log: &Service,
    c: &mut crate::store::DbConnection,
    id: &str,
    opened_at: String,
) -> Result<Option<TableItem>, StoreError> {
    {
        let s = log.state.read().expect("state lock");
        if let Some(t) = s.tables.get(id) {
            return Ok(Some(table_item_of(t, opened_at)));
        }
    }
    let Some((_, _, body)) = crate::service::stored_table(c, id)? else {
        return Ok(None);
    };
    let v: serde_json::Value =
        serde_json::from_str(&body).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let t = crate::round::TableState::from_stored(&log.plans, v).map_err(StoreError::Corrupt)?;
    Ok(Some(table_item_of(&t, opened_at)))
}

fn table_item_of(t: &crate::round::TableState, opened_at: String) -> TableItem {
    TableItem {
        table: t.table.clone(),
        operator: t.operator.clone(),
        plan: t.plan.clone(),
        mode: t.mode,
        open: t.open,
        rounds: t.rounds,
        current_round: t.current_round.clone(),
        opened_at,
    }
}

/// A table's rounds, in the order they were opened, optionally by phase and time.
///
/// Roles: any; an **operator** sees only its own tables' rounds.
#[utoipa::path(
    tag = "tables",
    security(("api_key" = [])),
    params(("table" = String, Path, description = "The table id as answered, `<operator>:<name>`; an operator may name its own table by its name alone."), RoundsQuery),
    responses(
        (status = 200, description = "A page of rounds.", body = RoundList),
        (status = 400, description = "`malformed_query` or `bad_limit`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed, unknown, revoked or expired API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`table_not_found`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: the store could not be read; retry.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[get("/v1/tables/{table}/rounds")]
pub async fn list_rounds(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    q: web::Query<RoundsQuery>,
) -> Result<HttpResponse, Problem> {
    let limit = limit_of(q.limit)?;
    let names = super::tables::named(&caller, &path);
    let q = q.into_inner();
    let first = cursor(q.after)?;
    let svc = state.clone();
    let absent = || Problem::not_found("table_not_found", "no such table");
    let page = web::block(move || -> Result<Option<RoundList>, StoreError> {
        // The first of the names' tables the caller may read (an operator's bare name: its
        // scoped table, else its own table from before ids were scoped), in its log (or in the
        // service's, for a table closed before the deployment wrote a log per operator).
        let mut found = None;
        'names: for id in names {
            for log in svc.logs_holding(&id) {
                let mut c = log
                    .pool
                    .get()
                    .map_err(|e| StoreError::Pool(e.to_string()))?;
                let owner = table_item(&log, &mut c, &id, String::new())?.map(|t| t.operator);
                if owner
                    .is_some_and(|o| caller.reads_all() || caller.operator.as_deref() == Some(&o))
                {
                    found = Some((id, log, c));
                    break 'names;
                }
            }
        }
        let Some((table, log, mut c)) = found else {
            return Ok(None);
        };
        let ts = |t: chrono::DateTime<chrono::Utc>| {
            t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
        };
        let mut at = first;
        let mut rounds = Vec::new();
        let mut scanned = 0i64;
        // Below `indexed_to` through the table's index, then the un-indexed tail by seq.
        let split = crate::store::entry_index::indexed_to(&mut c)?;
        let want = i64::from(limit) + 1;
        macro_rules! dated {
            ($query:ident) => {
                if let Some(f) = q.from {
                    $query = $query.filter(audit_entries::ts.ge(ts(f)));
                }
                if let Some(u) = q.until {
                    $query = $query.filter(audit_entries::ts.lt(ts(u)));
                }
            };
        }
        loop {
            let mut rows: Vec<(i64, Option<String>)> = Vec::new();
            if at < split {
                let mut query = by_table::table
                    .inner_join(audit_entries::table.on(audit_entries::seq.eq(by_table::seq)))
                    .filter(by_table::table_id.eq(table.clone()))
                    .filter(by_table::seq.gt(at))
                    .filter(by_table::seq.lt(split))
                    .filter(audit_entries::kind.eq("round_opened"))
                    .order(by_table::seq.asc())
                    .select((audit_entries::seq, audit_entries::round_id))
                    .limit(want)
                    .into_boxed();
                dated!(query);
                rows = query.load(&mut *c)?;
            }
            if (rows.len() as i64) < want {
                let mut query = audit_entries::table
                    .filter(audit_entries::table_id.eq(table.clone()))
                    .filter(audit_entries::kind.eq("round_opened"))
                    // One lower bound (SQLite's planner uses only one of two).
                    .filter(audit_entries::seq.gt(at.max(split - 1)))
                    .order(audit_entries::seq.asc())
                    .select((audit_entries::seq, audit_entries::round_id))
                    .limit(want - rows.len() as i64)
                    .into_boxed();
                dated!(query);
                rows.extend(query.load::<(i64, Option<String>)>(&mut *c)?);
            }
            let exhausted = rows.len() <= limit as usize;
            for (seq, round) in rows {
                scanned += 1;
                let Some(round) = round else { continue };
                let item = round_item(&log, &mut c, &round)?;
                if let Some(item) = item.filter(|r| q.phase.is_none_or(|p| r.phase == p)) {
                    if rounds.len() == limit as usize {
                        return Ok(Some(RoundList {
                            table,
                            rounds,
                            next: Some(at as u64),
                        }));
                    }
                    rounds.push(item);
                }
                at = seq;
            }
            if exhausted {
                return Ok(Some(RoundList {
                    table,
                    rounds,
                    next: None,
                }));
            }
            if scanned >= SCAN {
                return Ok(Some(RoundList {
                    table,
                    rounds,
                    next: Some(at as u64),
                }));
            }
        }
    })
    .await
    .map_err(|e| unavailable(&e.to_string()))?
    .map_err(|e| unavailable(&e.to_string()))?;
    match page {
        Some(p) => Ok(HttpResponse::Ok().json(p)),
        None => Err(absent()),
    }
}

fn round_item(
    log: &Service,
    c: &mut crate::store::DbConnection,
    id: &str,
) -> Result<Option<RoundItem>, StoreError> {
    let item = |r: &crate::round::RoundState| RoundItem {
        round: r.round.clone(),
        number: r.number,
        phase: r.phase,
        opened_at: r.opened_at,
        bets: r.bets.len(),
    };
    {
        let s = log.state.read().expect("state lock");
        if let Some(r) = s.rounds.get(id) {
            return Ok(Some(item(r)));
        }
    }
    Ok(
        crate::service::derived::read_finished_round(&log.state, &log.plans, c, id)?
            .map(|v| item(&v.round)),
    )
}
