//! Everything the console reads about tables, rounds and the audit log, in one place.
//!
//! The pages never touch the service's state, its Merkle leaves or the database directly:
//! they call these functions, which today read the writer's shared state (`Service::state`,
//! `Service::leaves`, `Service::key_validity`) and the stored log through the read pool.
//! When finished rounds and closed tables leave memory and the tree's hashes are read from
//! stored tiles (issue 13), only the bodies below change:
//!
//! | function | reads today | reads after issue 13 |
//! |---|---|---|
//! | [`open_tables`], [`table`] | `state.tables` | unchanged for open tables; a closed one from the store |
//! | [`round`] | `state.rounds` | the store for a finished round |
//! | [`inclusion_proof`] | `Service::leaves` | stored tree tiles |
//! | [`round_recall`], [`entries`], [`entry`], [`significant`], [`plan_loads`], [`table_rounds`], [`log_growth`] | `audit_entries` | unchanged |
//! | [`checkpoints`], [`latest_checkpoint`] | `checkpoints` | unchanged |
//! | [`log_size`], [`key_validity`] | the writer's counters | unchanged |
//!
//! Every function that lists is paginated by a `seq` (or tree-size) cursor with a bounded
//! page, so no page grows with the log's history.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use pitboss_audit::keys::KeyValidity;
use pitboss_audit::note::SignedCheckpoint;
use pitboss_audit::proof::InclusionProofFile;
use serde_json::Value;

use crate::plan::model::Mode;
use crate::service::Service;
use crate::store::schema::{audit_entries, checkpoints};
use crate::store::StoreError;

/// Most entries, checkpoints or rounds one page shows.
pub const PAGE: i64 = 100;
/// Most rows [`significant`] reads to fill one page.
pub const SIGNIFICANT_SCAN: i64 = 20_000;
/// Points of the log's growth.
pub const GROWTH_POINTS: u64 = 120;

/// A table as the console lists it.
#[derive(Debug, Clone)]
pub struct TableView {
    pub table: String,
    pub operator: String,
    /// `id@version`.
    pub plan: String,
    pub mode: Mode,
    pub open: bool,
    pub rounds: u64,
    pub current_round: Option<String>,
    /// The current round's phase (`betting`, `decisions`, …).
    pub current_phase: Option<String>,
}

/// A round's summary.
#[derive(Debug, Clone)]
pub struct RoundView {
    pub round: String,
    pub table: String,
    /// `id@version` of the table's plan.
    pub plan: String,
    pub number: u64,
    pub phase: String,
    pub opened_at: DateTime<Utc>,
    pub bets: usize,
    pub rng_commitment: Option<String>,
}

/// One logged entry, read back.
#[derive(Debug, Clone)]
pub struct LogEntry {
    pub seq: u64,
    pub ts: String,
    pub kind: String,
    pub operator: Option<String>,
    pub table: Option<String>,
    pub round: Option<String>,
    pub bet: Option<String>,
    pub payload: Value,
    /// The canonical bytes as stored (JSON text).
    pub canonical: String,
}

impl LogEntry {
    fn of(seq: i64, canonical: Vec<u8>) -> LogEntry {
        let v: Value = serde_json::from_slice(&canonical).unwrap_or(Value::Null);
        let id = |k: &str| v["ids"][k].as_str().map(str::to_string);
        LogEntry {
            seq: u64::try_from(seq).unwrap_or(0),
            ts: v["ts"].as_str().unwrap_or("").to_string(),
            kind: v["kind"].as_str().unwrap_or("").to_string(),
            operator: id("operator"),
            table: id("table"),
            round: id("round"),
            bet: id("bet"),
            payload: v["payload"].clone(),
            canonical: String::from_utf8_lossy(&canonical).into_owned(),
        }
    }

    /// The refusal code of a refusal entry.
    pub fn code(&self) -> Option<&str> {
        self.payload["code"]
            .as_str()
            .or_else(|| self.payload["refusal"]["code"].as_str())
    }
}

/// One page of a list, newest first; `older` is the cursor of the next page.
#[derive(Debug, Clone)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub older: Option<u64>,
}

/// What [`entries`] lists.
#[derive(Debug, Clone, Default)]
pub struct EntryFilter {
    pub kind: Option<String>,
    pub table: Option<String>,
    pub round: Option<String>,
}

type Conn = diesel::r2d2::PooledConnection<crate::store::Manager>;

fn conn(svc: &Service) -> Result<Conn, StoreError> {
    svc.pool.get().map_err(|e| StoreError::Pool(e.to_string()))
}

fn view(
    t: &crate::round::TableState,
    rounds: &std::collections::BTreeMap<String, crate::round::RoundState>,
) -> TableView {
    let phase = |r: &str| {
        rounds
            .get(r)
            .and_then(|r| serde_json::to_value(r.phase).ok())
            .and_then(|v| v.as_str().map(str::to_string))
    };
    TableView {
        table: t.table.clone(),
        operator: t.operator.clone(),
        plan: t.plan.clone(),
        mode: t.mode,
        open: t.open,
        rounds: t.rounds,
        current_phase: t.current_round.as_deref().and_then(phase),
        current_round: t.current_round.clone(),
    }
}

/// Every open table, by id.
pub fn open_tables(svc: &Service) -> Vec<TableView> {
    let s = svc.state.read().expect("state lock");
    s.tables
        .values()
        .filter(|t| t.open)
        .map(|t| view(t, &s.rounds))
        .collect()
}

/// One table, open (from memory) or closed (from the store).
pub fn table(svc: &Service, id: &str) -> Option<TableView> {
    {
        let s = svc.state.read().expect("state lock");
        if let Some(t) = s.tables.get(id) {
            return Some(view(t, &s.rounds));
        }
    }
    let mut c = conn(svc).ok()?;
    let (_, _, body) = crate::service::stored_table(&mut c, id).ok()??;
    let v: serde_json::Value = serde_json::from_str(&body).ok()?;
    let t = crate::round::TableState::from_stored(&svc.plans, v).ok()?;
    Some(view(&t, &Default::default()))
}

/// One round's summary: from memory while it is live, from the store once finished.
pub fn round(svc: &Service, id: &str) -> Option<RoundView> {
    let live = {
        let s = svc.state.read().expect("state lock");
        s.rounds
            .get(id)
            .map(|r| (r.clone(), s.tables.get(&r.table).map(|t| t.plan.clone())))
    };
    let (r, plan) = match live {
        Some((r, plan)) => (r, plan?),
        None => {
            let mut c = conn(svc).ok()?;
            let v =
                crate::service::derived::read_finished_round(&svc.state, &svc.plans, &mut c, id)
                    .ok()??;
            (v.round, v.plan)
        }
    };
    let r = &r;
    Some(RoundView {
        round: r.round.clone(),
        table: r.table.clone(),
        plan,
        number: r.number,
        phase: serde_json::to_value(r.phase)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        opened_at: r.opened_at,
        bets: r.bets.len(),
        rng_commitment: r.rng_commitment.clone(),
    })
}

/// A round's logged entries in order, `limit` from the first with `seq > after`.
pub fn round_recall(
    svc: &Service,
    id: &str,
    after: Option<u64>,
    limit: i64,
) -> Result<Vec<LogEntry>, StoreError> {
    use crate::store::schema::audit_round_entries as by_round;
    let mut c = conn(svc)?;
    let from = after.map_or(-1, |a| i64::try_from(a).unwrap_or(i64::MAX));
    // Below `indexed_to` through the round index, above it in the un-indexed tail.
    let split = crate::store::entry_index::indexed_to(&mut c)?;
    let mut rows: Vec<(i64, Vec<u8>)> = by_round::table
        .inner_join(audit_entries::table.on(audit_entries::seq.eq(by_round::seq)))
        .filter(by_round::round_id.eq(id))
        .filter(by_round::seq.gt(from))
        .filter(by_round::seq.lt(split))
        .order(by_round::seq.asc())
        .limit(limit)
        .select((audit_entries::seq, audit_entries::canonical))
        .load(&mut c)?;
    let left = limit - rows.len() as i64;
    if left > 0 {
        rows.extend(
            audit_entries::table
                .filter(audit_entries::round_id.eq(id))
                // One lower bound (SQLite's planner uses only one of two).
                .filter(audit_entries::seq.gt(from.max(split - 1)))
                .order(audit_entries::seq.asc())
                .limit(left)
                .select((audit_entries::seq, audit_entries::canonical))
                .load::<(i64, Vec<u8>)>(&mut c)?,
        );
    }
    Ok(rows.into_iter().map(|(s, b)| LogEntry::of(s, b)).collect())
}

/// One entry.
pub fn entry(svc: &Service, seq: u64) -> Result<Option<LogEntry>, StoreError> {
    let mut c = conn(svc)?;
    let row: Option<(i64, Vec<u8>)> = audit_entries::table
        .filter(audit_entries::seq.eq(i64::try_from(seq).unwrap_or(i64::MAX)))
        .select((audit_entries::seq, audit_entries::canonical))
        .first(&mut c)
        .optional()?;
    Ok(row.map(|(s, b)| LogEntry::of(s, b)))
}

fn before_of(before: Option<u64>) -> i64 {
    before.map_or(i64::MAX, |b| i64::try_from(b).unwrap_or(i64::MAX))
}

/// Entries matching `filter`, newest first, [`PAGE`] from the first with `seq < before`.
pub fn entries(
    svc: &Service,
    filter: &EntryFilter,
    before: Option<u64>,
) -> Result<Page<LogEntry>, StoreError> {
    use crate::store::schema::{audit_round_entries as by_round, audit_table_entries as by_table};
    let mut c = conn(svc)?;
    let before = before_of(before);
    // With a round or a table: newest first, the un-indexed tail (at and above
    // `indexed_to`, scanned by seq), then below it through the round's or table's index.
    let split = if filter.round.is_some() || filter.table.is_some() {
        crate::store::entry_index::indexed_to(&mut c)?
    } else {
        0
    };
    let mut q = audit_entries::table
        .filter(audit_entries::seq.lt(before))
        .filter(audit_entries::seq.ge(split))
        .select((audit_entries::seq, audit_entries::canonical))
        .order(audit_entries::seq.desc())
        .limit(PAGE + 1)
        .into_boxed();
    macro_rules! filtered {
        ($q:ident) => {
            if let Some(k) = &filter.kind {
                $q = $q.filter(audit_entries::kind.eq(k.clone()));
            }
            if let Some(t) = &filter.table {
                $q = $q.filter(audit_entries::table_id.eq(t.clone()));
            }
            if let Some(r) = &filter.round {
                $q = $q.filter(audit_entries::round_id.eq(r.clone()));
            }
        };
    }
    filtered!(q);
    let mut rows: Vec<(i64, Vec<u8>)> = q.load(&mut c)?;
    let left = PAGE + 1 - rows.len() as i64;
    if left > 0 && split > 0 {
        let below = before.min(split);
        let older: Vec<(i64, Vec<u8>)> = if let Some(r) = &filter.round {
            let mut q = by_round::table
                .inner_join(audit_entries::table.on(audit_entries::seq.eq(by_round::seq)))
                .filter(by_round::round_id.eq(r.clone()))
                .filter(by_round::seq.lt(below))
                .select((audit_entries::seq, audit_entries::canonical))
                .order(by_round::seq.desc())
                .limit(left)
                .into_boxed();
            filtered!(q);
            q.load(&mut c)?
        } else if let Some(t) = &filter.table {
            let mut q = by_table::table
                .inner_join(audit_entries::table.on(audit_entries::seq.eq(by_table::seq)))
                .filter(by_table::table_id.eq(t.clone()))
                .filter(by_table::seq.lt(below))
                .select((audit_entries::seq, audit_entries::canonical))
                .order(by_table::seq.desc())
                .limit(left)
                .into_boxed();
            filtered!(q);
            q.load(&mut c)?
        } else {
            Vec::new()
        };
        rows.extend(older);
    }
    Ok(page_of(rows))
}

fn page_of(mut rows: Vec<(i64, Vec<u8>)>) -> Page<LogEntry> {
    let more = rows.len() as i64 > PAGE;
    rows.truncate(PAGE as usize);
    let items: Vec<LogEntry> = rows.into_iter().map(|(s, b)| LogEntry::of(s, b)).collect();
    Page {
        older: if more {
            items.last().map(|e| e.seq)
        } else {
            None
        },
        items,
    }
}

/// The kinds the significant-event view shows whole.
pub const SIGNIFICANT_KINDS: &[&str] = &[
    "plan_loaded",
    "round_voided",
    "event_refused",
    "misdeal",
    "spin_invalid",
    "key_rotated",
    "table_closed",
];
/// Refusals shown only when a settlement would have exceeded a maximum win.
pub const REFUSAL_KINDS: &[&str] = &["bet_refused", "command_refused"];
pub const MAX_WIN_EXCEEDED: &str = crate::games::code::MAX_WIN_EXCEEDED;

/// Significant events, newest first: plans loaded, voids, refused dealer events, misdeals and
/// invalid spins, key rotations, tables closed, and refusals for `max_win_exceeded`. Reads at
/// most [`SIGNIFICANT_SCAN`] candidate rows per page; `older` continues after the last read.
pub fn significant(svc: &Service, before: Option<u64>) -> Result<Page<LogEntry>, StoreError> {
    let mut c = conn(svc)?;
    let kinds: Vec<&str> = SIGNIFICANT_KINDS
        .iter()
        .chain(REFUSAL_KINDS)
        .copied()
        .collect();
    let mut cursor = before_of(before);
    let mut items = Vec::new();
    let mut scanned = 0i64;
    let batch = 500i64;
    loop {
        let rows: Vec<(i64, Vec<u8>)> = audit_entries::table
            .filter(audit_entries::seq.lt(cursor))
            .filter(audit_entries::kind.eq_any(&kinds))
            .order(audit_entries::seq.desc())
            .limit(batch)
            .select((audit_entries::seq, audit_entries::canonical))
            .load(&mut c)?;
        let exhausted = (rows.len() as i64) < batch;
        scanned += rows.len() as i64;
        for (s, b) in rows {
            cursor = s;
            let e = LogEntry::of(s, b);
            let keep =
                !REFUSAL_KINDS.contains(&e.kind.as_str()) || e.code() == Some(MAX_WIN_EXCEEDED);
            if keep {
                items.push(e);
                if items.len() as i64 == PAGE {
                    return Ok(Page {
                        items,
                        older: Some(u64::try_from(cursor).unwrap_or(0)),
                    });
                }
            }
        }
        if exhausted {
            return Ok(Page { items, older: None });
        }
        if scanned >= SIGNIFICANT_SCAN {
            return Ok(Page {
                items,
                older: Some(u64::try_from(cursor).unwrap_or(0)),
            });
        }
    }
}

/// When each plan version was first logged as loaded (`plan_loaded`): plan, SHA-256, seq, ts.
#[derive(Debug, Clone)]
pub struct PlanLoad {
    pub plan: String,
    pub sha256: String,
    pub seq: u64,
    pub ts: String,
}

/// Every `plan_loaded` entry (one per plan version and content ever loaded).
pub fn plan_loads(svc: &Service) -> Result<Vec<PlanLoad>, StoreError> {
    let mut c = conn(svc)?;
    let rows: Vec<(i64, Vec<u8>)> = audit_entries::table
        .filter(audit_entries::kind.eq("plan_loaded"))
        .order(audit_entries::seq.asc())
        .select((audit_entries::seq, audit_entries::canonical))
        .load(&mut c)?;
    Ok(rows
        .into_iter()
        .map(|(s, b)| {
            let e = LogEntry::of(s, b);
            PlanLoad {
                plan: e.payload["plan"].as_str().unwrap_or("").to_string(),
                sha256: e.payload["sha256"].as_str().unwrap_or("").to_string(),
                seq: e.seq,
                ts: e.ts,
            }
        })
        .collect())
}

/// A table's rounds (their `round_opened` entries), newest first.
pub fn table_rounds(
    svc: &Service,
    table: &str,
    before: Option<u64>,
) -> Result<Page<LogEntry>, StoreError> {
    entries(
        svc,
        &EntryFilter {
            kind: Some("round_opened".into()),
            table: Some(table.into()),
            round: None,
        },
        before,
    )
}

/// Entries in the log.
pub fn log_size(svc: &Service) -> u64 {
    svc.metrics
        .log_entries
        .load(std::sync::atomic::Ordering::Relaxed)
}

/// The log's signing keys and the tree sizes each may sign.
pub fn key_validity(svc: &Service) -> Vec<KeyValidity> {
    svc.key_validity.read().expect("keys lock").clone()
}

pub fn latest_checkpoint(svc: &Service) -> Result<Option<SignedCheckpoint>, StoreError> {
    crate::service::read::latest_checkpoint(&svc.pool)
}

/// A signed checkpoint with when it was stored.
#[derive(Debug, Clone)]
pub struct CheckpointRow {
    pub size: u64,
    pub created_at: String,
    pub note: String,
}

/// Checkpoints, largest first, [`PAGE`] from the first of a size below `before`.
pub fn checkpoints(svc: &Service, before: Option<u64>) -> Result<Page<CheckpointRow>, StoreError> {
    let mut c = conn(svc)?;
    let mut rows: Vec<(i64, String, String)> = checkpoints::table
        .filter(checkpoints::tree_size.lt(before_of(before)))
        .order(checkpoints::tree_size.desc())
        .limit(PAGE + 1)
        .select((
            checkpoints::tree_size,
            checkpoints::created_at,
            checkpoints::note,
        ))
        .load(&mut c)?;
    let more = rows.len() as i64 > PAGE;
    rows.truncate(PAGE as usize);
    let items: Vec<CheckpointRow> = rows
        .into_iter()
        .map(|(s, created_at, note)| CheckpointRow {
            size: u64::try_from(s).unwrap_or(0),
            created_at,
            note,
        })
        .collect();
    Ok(Page {
        older: if more {
            items.last().map(|r| r.size)
        } else {
            None
        },
        items,
    })
}

/// The log's size over time: (time of entry `seq`, `seq + 1`) for at most [`GROWTH_POINTS`]
/// entries spread evenly over the log, the last one included.
pub fn log_growth(svc: &Service) -> Result<Vec<(DateTime<Utc>, u64)>, StoreError> {
    let size = log_size(svc);
    if size == 0 {
        return Ok(Vec::new());
    }
    let n = GROWTH_POINTS.min(size);
    let seqs: Vec<i64> = (0..n)
        .map(|k| i64::try_from(k * (size - 1) / (n - 1).max(1)).unwrap_or(i64::MAX))
        .collect();
    let mut c = conn(svc)?;
    let rows: Vec<(i64, String)> = audit_entries::table
        .filter(audit_entries::seq.eq_any(&seqs))
        .order(audit_entries::seq.asc())
        .select((audit_entries::seq, audit_entries::ts))
        .load(&mut c)?;
    Ok(rows
        .into_iter()
        .filter_map(|(s, ts)| {
            let t = DateTime::parse_from_rfc3339(&ts).ok()?.with_timezone(&Utc);
            Some((t, u64::try_from(s).ok()? + 1))
        })
        .collect())
}

/// Signs a checkpoint of whatever is logged and not yet covered, so proofs can be made now.
pub async fn sign_pending(svc: &Service) -> Result<u64, String> {
    svc.checkpoint_now().await
}

/// Why no proof could be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoProof {
    NoEntry,
    NoCheckpoint,
    /// The latest checkpoint is of this size, not covering the entry yet.
    NotCovered(u64),
    Failed(String),
}

/// The inclusion proof of entry `seq` against the latest checkpoint (the format
/// `pitboss-audit check-proof` reads).
pub fn inclusion_proof(
    svc: &Service,
    seq: u64,
) -> Result<Result<InclusionProofFile, NoProof>, StoreError> {
    let Some(e) = entry(svc, seq)? else {
        return Ok(Err(NoProof::NoEntry));
    };
    let Some(cp) = latest_checkpoint(svc)? else {
        return Ok(Err(NoProof::NoCheckpoint));
    };
    if seq >= cp.checkpoint.size {
        return Ok(Err(NoProof::NotCovered(cp.checkpoint.size)));
    }
    // From the stored tree's tiles: O(log n) rows.
    let mut c = conn(svc)?;
    let src = crate::store::tiles::TileSource::over(&mut c);
    Ok(
        pitboss_audit::proof::make_proof(&src, e.canonical.as_bytes(), seq, &cp)
            .map_err(|e| NoProof::Failed(e.to_string())),
    )
}
