//! The audit-entry listing and the supervisor's feed (`GET /v1/audit/entries`): entries by
//! kind, table, round, bet, player, refusal code, time range and significance, in sequence
//! order from a cursor, read from the store a page at a time.
//!
//! The entries' own columns hold the kind and the ids; what they do not hold (the player an
//! entry names, a refusal's code, whether it is a significant event) is kept as tags in
//! `audit_entry_tags`, written in the transaction of the entry's batch ([`write_tags`]) and
//! derived once from the stored log for a database written before tags existed ([`backfill`]).
//! Nothing of the log is held in memory: a page is at most [`MAX_PAGE`] rows.

use diesel::prelude::*;
use pitboss_audit::entry::SealedEntry;
use serde_json::Value;

use crate::store::schema::{audit_entries, audit_entry_tags, audit_entry_tags_state};
use crate::store::{DbConnection, ReadPool, StoreError};

/// Most entries one page returns.
pub const MAX_PAGE: i64 = 10_000;

/// Entries read per step while deriving the tags of an existing log.
const BACKFILL_PAGE: i64 = 1_000;

/// The kinds a supervisor watches: the exception events (a round paused, resumed or voided,
/// a stake refunded before settlement, a table closed or disabled, misdeals, invalid spins
/// and refused dealer events: the malfunctions the dealer system reports), plan loads,
/// approvals and their withdrawal, key and configuration changes. With them, every refusal
/// whose code is `max_win_exceeded`. `significant=true` selects exactly these.
pub const SIGNIFICANT_KINDS: &[&str] = &[
    "plan_loaded",
    "plan_approved",
    "plan_approval_withdrawn",
    "round_paused",
    "round_resumed",
    "round_voided",
    "bet_refunded",
    "table_closed",
    "table_disabled",
    "misdeal",
    "spin_invalid",
    "event_refused",
    "key_created",
    "key_revoked",
    "key_rotated",
    "config_changed",
    // The player register (002 § 6(2), (3)).
    "player_excluded",
    "player_exclusion_lifted",
    "player_limits_set",
];

/// Kinds whose payload carries a refusal with its code.
pub const REFUSAL_KINDS: &[&str] = &["bet_refused", "event_refused", "command_refused"];

/// The tags of one entry: `("player", id)` for the player its payload names, `("code", c)`
/// for a refusal's code, `("significant", "")` for a significant event.
pub fn tags_of(kind: &str, payload: &Value) -> Vec<(&'static str, String)> {
    let mut tags = Vec::new();
    if let Some(p) = payload.get("player").and_then(Value::as_str) {
        tags.push(("player", p.to_string()));
    }
    let code = REFUSAL_KINDS
        .contains(&kind)
        .then(|| payload.pointer("/refusal/code").and_then(Value::as_str))
        .flatten();
    if let Some(c) = code {
        tags.push(("code", c.to_string()));
    }
    if SIGNIFICANT_KINDS.contains(&kind) || code == Some(crate::games::code::MAX_WIN_EXCEEDED) {
        tags.push(("significant", String::new()));
    }
    tags
}

fn insert_tags(
    c: &mut DbConnection,
    seq: u64,
    kind: &str,
    payload: &Value,
) -> Result<(), diesel::result::Error> {
    for (tag, value) in tags_of(kind, payload) {
        diesel::insert_into(audit_entry_tags::table)
            .values((
                audit_entry_tags::tag.eq(tag),
                audit_entry_tags::value.eq(value),
                audit_entry_tags::seq.eq(seq as i64),
            ))
            .execute(c)?;
    }
    Ok(())
}

/// The tag rows `(seq, tag, value)` of a batch's entries.
pub fn tag_rows(entries: &[&SealedEntry]) -> Vec<(i64, &'static str, String)> {
    entries
        .iter()
        .flat_map(|e| {
            tags_of(e.kind.as_str(), &e.payload)
                .into_iter()
                .map(move |(tag, value)| (e.seq as i64, tag, value))
        })
        .collect()
}

/// Writes the tags of a batch's entries (inside the batch's transaction).
pub fn write_tags(
    c: &mut DbConnection,
    entries: &[&SealedEntry],
) -> Result<(), diesel::result::Error> {
    let tags = tag_rows(entries);
    let pg = match c {
        // Statements of fixed shapes, prepared once (`store::fixed_insert`).
        DbConnection::Sqlite(s) => return crate::store::fixed_insert::insert(s, &tags),
        DbConnection::Pg(pg) => pg,
    };
    // One multi-row INSERT per 1,000 tags (a bet's entry has one: its player).
    for chunk in tags.chunks(crate::store::ROWS_PER_INSERT) {
        let values: Vec<_> = chunk
            .iter()
            .map(|(seq, tag, value)| {
                (
                    audit_entry_tags::tag.eq(*tag),
                    audit_entry_tags::value.eq(value.as_str()),
                    audit_entry_tags::seq.eq(*seq),
                )
            })
            .collect();
        diesel::insert_into(audit_entry_tags::table)
            .values(values)
            .execute(pg)?;
    }
    Ok(())
}

/// A tag's row (seq, tag, value), as the fixed-shape insert writes it on SQLite.
impl crate::store::fixed_insert::Row for (i64, &'static str, String) {
    type Id = audit_entry_tags::table;
    const INSERT: &'static str = "INSERT OR FAIL INTO audit_entry_tags (tag, value, seq) VALUES ";
    fn bind<'b>(
        &'b self,
        pass: &mut diesel::query_builder::AstPass<'_, 'b, diesel::sqlite::Sqlite>,
    ) -> diesel::QueryResult<()> {
        use diesel::sql_types::{BigInt, Text};
        crate::store::fixed_insert::bind_all!(
            pass,
            (Text, self.1),
            (Text, &self.2),
            (BigInt, &self.0)
        )
    }
}

/// Derives the tags of every stored entry once, for a log written before tags existed (or
/// whose derivation was interrupted): reads the log a page at a time, in one transaction.
pub fn backfill(conn: &mut DbConnection) -> Result<(), StoreError> {
    let done: Option<i32> = audit_entry_tags_state::table
        .filter(audit_entry_tags_state::id.eq(1))
        .select(audit_entry_tags_state::complete)
        .first(conn)
        .optional()?;
    if done == Some(1) {
        return Ok(());
    }
    conn.transaction::<_, diesel::result::Error, _>(|c| {
        diesel::delete(audit_entry_tags::table).execute(c)?;
        let mut next = 0i64;
        loop {
            let rows: Vec<(i64, String, Vec<u8>)> = audit_entries::table
                .filter(audit_entries::seq.ge(next))
                .order(audit_entries::seq.asc())
                .limit(BACKFILL_PAGE)
                .select((
                    audit_entries::seq,
                    audit_entries::kind,
                    audit_entries::canonical,
                ))
                .load(c)?;
            let Some(last) = rows.last().map(|r| r.0) else {
                break;
            };
            for (seq, kind, canonical) in rows {
                let entry: Value = serde_json::from_slice(&canonical).unwrap_or(Value::Null);
                insert_tags(c, seq as u64, &kind, &entry["payload"])?;
            }
            next = last + 1;
        }
        diesel::insert_into(audit_entry_tags_state::table)
            .values((
                audit_entry_tags_state::id.eq(1),
                audit_entry_tags_state::complete.eq(1),
            ))
            .execute(c)?;
        Ok(())
    })?;
    Ok(())
}

/// What a listing selects; every field given must match.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Any of these kinds.
    pub kinds: Option<Vec<String>>,
    /// The entry's `ids.table`: any of these (an operator's bare name stands for its scoped
    /// table and for its own table logged bare before ids were scoped).
    pub table: Option<Vec<String>>,
    /// The entry's `ids.round`: any of these.
    pub round: Option<Vec<String>>,
    /// The entry's `ids.bet`: any of these.
    pub bet: Option<Vec<String>>,
    /// The player the entry's payload names (`payload.player`).
    pub player: Option<String>,
    /// A refusal's code.
    pub code: Option<String>,
    /// Only significant events ([`SIGNIFICANT_KINDS`] and `max_win_exceeded` refusals).
    pub significant: bool,
    /// Only entries of this operator (an operator key sees its own).
    pub operator: Option<String>,
    /// `ts ≥ from`, in the log's timestamp form.
    pub from_ts: Option<String>,
    /// `ts < to`.
    pub to_ts: Option<String>,
}

impl Filter {
    /// The round the entries must name: the one given, or else the bet's (a bet's id is its
    /// round's and a number), so that the round's index finds a bet's entries.
    fn round_or_bets(&self) -> Option<Vec<String>> {
        self.round.clone().or_else(|| {
            self.bet.as_ref().map(|bets| {
                bets.iter()
                    .filter_map(|b| b.rsplit_once('.').map(|(r, _)| r.to_string()))
                    .collect()
            })
        })
    }

    /// The tag that drives the query, if any: at most one of player, code, significant.
    fn tag(&self) -> Result<Option<(&'static str, String)>, String> {
        let mut tags = Vec::new();
        if let Some(p) = &self.player {
            tags.push(("player", p.clone()));
        }
        if let Some(c) = &self.code {
            tags.push(("code", c.clone()));
        }
        if self.significant {
            tags.push(("significant", String::new()));
        }
        if tags.len() > 1 {
            return Err("give at most one of player, code and significant".into());
        }
        Ok(tags.pop())
    }
}

/// One page: entries `(seq, canonical bytes)` in sequence order, and the cursor that
/// continues after them.
#[derive(Debug, Clone)]
pub struct Page {
    pub rows: Vec<(u64, Vec<u8>)>,
    /// The `since` of the next page: every matching entry below it has been returned (now or
    /// on an earlier page); entries logged later have larger sequence numbers, so following
    /// this cursor never skips or repeats one.
    pub next: u64,
}

/// Why a listing was refused.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    #[error("{0}")]
    Query(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

macro_rules! filtered {
    ($q:ident, $f:expr) => {{
        let f = $f;
        if let Some(k) = &f.kinds {
            $q = $q.filter(audit_entries::kind.eq_any(k.clone()));
        }
        if let Some(t) = &f.table {
            $q = $q.filter(audit_entries::table_id.eq_any(t.clone()));
        }
        if let Some(r) = f.round_or_bets() {
            $q = $q.filter(audit_entries::round_id.eq_any(r));
        }
        if let Some(b) = &f.bet {
            $q = $q.filter(audit_entries::bet_id.eq_any(b.clone()));
        }
        if let Some(o) = &f.operator {
            $q = $q.filter(audit_entries::operator_id.eq(o.clone()));
        }
        if let Some(t) = &f.from_ts {
            $q = $q.filter(audit_entries::ts.ge(t.clone()));
        }
        if let Some(t) = &f.to_ts {
            $q = $q.filter(audit_entries::ts.lt(t.clone()));
        }
    }};
}

/// Entries matching `filter` with `seq ≥ since`, at most `limit`. `committed` is the number
/// of entries known committed before this call (read before the query): every entry below it
/// is visible to the query.
pub fn list(
    pool: &ReadPool,
    filter: &Filter,
    since: u64,
    limit: i64,
    committed: u64,
) -> Result<Page, ListError> {
    let tag = filter.tag().map_err(ListError::Query)?;
    let mut conn = pool.get().map_err(|e| StoreError::Pool(e.to_string()))?;
    let mut from = since;
    if let Some(ts) = &filter.from_ts {
        // The first entry at or after the time: no entry before it matches.
        let first: Option<i64> = audit_entries::table
            .filter(audit_entries::ts.ge(ts.clone()))
            .select(diesel::dsl::min(audit_entries::seq))
            .first(&mut conn)
            .map_err(StoreError::from)?;
        match first {
            Some(s) => from = from.max(s as u64),
            None => {
                return Ok(Page {
                    rows: Vec::new(),
                    next: since.max(committed),
                })
            }
        }
    }
    let start = i64::try_from(from).unwrap_or(i64::MAX);
    // A round (named, or the bet's) or a table without a tag: below `indexed_to` through the
    // round's or table's index, then the un-indexed tail by seq (`store::entry_index`).
    let round = filter.round_or_bets();
    let keyed = tag.is_none() && (round.is_some() || filter.table.is_some());
    let rows: Vec<(i64, Vec<u8>)> = match tag {
        None if keyed => {
            use crate::store::schema::{
                audit_round_entries as by_round, audit_table_entries as by_table,
            };
            let split =
                crate::store::entry_index::indexed_to(&mut conn).map_err(StoreError::from)?;
            let mut rows: Vec<(i64, Vec<u8>)> = Vec::new();
            if start < split {
                rows = if let Some(r) = &round {
                    let mut q = by_round::table
                        .inner_join(audit_entries::table.on(audit_entries::seq.eq(by_round::seq)))
                        .filter(by_round::round_id.eq_any(r.clone()))
                        .filter(by_round::seq.ge(start))
                        .filter(by_round::seq.lt(split))
                        .order(by_round::seq.asc())
                        .limit(limit)
                        .select((audit_entries::seq, audit_entries::canonical))
                        .into_boxed();
                    filtered!(q, filter);
                    q.load(&mut conn).map_err(StoreError::from)?
                } else {
                    let t = filter.table.clone().unwrap_or_default();
                    let mut q = by_table::table
                        .inner_join(audit_entries::table.on(audit_entries::seq.eq(by_table::seq)))
                        .filter(by_table::table_id.eq_any(t))
                        .filter(by_table::seq.ge(start))
                        .filter(by_table::seq.lt(split))
                        .order(by_table::seq.asc())
                        .limit(limit)
                        .select((audit_entries::seq, audit_entries::canonical))
                        .into_boxed();
                    filtered!(q, filter);
                    q.load(&mut conn).map_err(StoreError::from)?
                };
            }
            let left = limit - rows.len() as i64;
            if left > 0 {
                let mut q = audit_entries::table
                    .filter(audit_entries::seq.ge(start.max(split)))
                    .order(audit_entries::seq.asc())
                    .limit(left)
                    .select((audit_entries::seq, audit_entries::canonical))
                    .into_boxed();
                filtered!(q, filter);
                rows.extend(
                    q.load::<(i64, Vec<u8>)>(&mut conn)
                        .map_err(StoreError::from)?,
                );
            }
            rows
        }
        None => {
            let mut q = audit_entries::table
                .filter(audit_entries::seq.ge(start))
                .order(audit_entries::seq.asc())
                .limit(limit)
                .select((audit_entries::seq, audit_entries::canonical))
                .into_boxed();
            filtered!(q, filter);
            q.load(&mut conn).map_err(StoreError::from)?
        }
        Some((tag, value)) => {
            let mut q = audit_entry_tags::table
                .inner_join(audit_entries::table.on(audit_entries::seq.eq(audit_entry_tags::seq)))
                .filter(audit_entry_tags::tag.eq(tag))
                .filter(audit_entry_tags::value.eq(value))
                .filter(audit_entry_tags::seq.ge(start))
                .order(audit_entry_tags::seq.asc())
                .limit(limit)
                .select((audit_entries::seq, audit_entries::canonical))
                .into_boxed();
            filtered!(q, filter);
            q.load(&mut conn).map_err(StoreError::from)?
        }
    };
    let full = rows.len() as i64 >= limit;
    let after_last = rows.last().map_or(0, |(s, _)| *s as u64 + 1);
    let next = if full {
        after_last
    } else {
        since.max(committed).max(after_last)
    };
    Ok(Page {
        rows: rows.into_iter().map(|(s, c)| (s as u64, c)).collect(),
        next,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_bet_names_its_player() {
        assert_eq!(
            tags_of("bet_accepted", &json!({"player": "p1", "stake_minor": 5})),
            vec![("player", "p1".to_string())]
        );
    }

    #[test]
    fn a_max_win_refusal_is_significant_and_others_are_not() {
        let refused = |code: &str| {
            tags_of(
                "bet_refused",
                &json!({"player": "p1", "refusal": {"code": code, "message": "m"}}),
            )
        };
        assert!(refused("max_win_exceeded").contains(&("significant", String::new())));
        assert!(refused("max_win_exceeded").contains(&("code", "max_win_exceeded".into())));
        assert!(!refused("above_max_bet").contains(&("significant", String::new())));
        assert!(refused("above_max_bet").contains(&("code", "above_max_bet".into())));
    }

    #[test]
    fn exception_kinds_are_significant() {
        for k in [
            "round_voided",
            "round_paused",
            "round_resumed",
            "plan_approved",
        ] {
            assert_eq!(
                tags_of(k, &json!({"round": "t1.1"})),
                vec![("significant", String::new())],
                "{k}"
            );
        }
        assert!(tags_of("round_settled", &json!({"round": "t1.1"})).is_empty());
    }

    #[test]
    fn one_tag_filter_at_a_time() {
        let f = Filter {
            player: Some("p1".into()),
            significant: true,
            ..Filter::default()
        };
        assert!(f.tag().is_err());
    }
}
