//! The daily summary per table (issue 20): rounds, bets and stakes, what was paid, refunds,
//! voids and refusals by code, for one UTC day, computed from the log's entries. The service
//! reads them from the store a page at a time (`GET /v1/audit/daily-summary`); `pitboss replay
//! EXPORT --daily-summary DATE` folds the same entries of an export with the same code, so an
//! auditor reproduces the figures from the export alone. Memory holds one line per table that
//! played that day, never the log.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use diesel::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::store::schema::audit_entries;
use crate::store::{ReadPool, StoreError};

/// Entries read per page.
const PAGE: i64 = 1_000;

/// One table's day.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TableDay {
    pub table: String,
    /// Rounds opened.
    pub rounds: u64,
    /// Bets accepted (a Call placed by a decision included).
    pub bets: u64,
    /// Their stakes, minor units.
    pub stakes_minor: i64,
    /// What settlements paid (returned stakes and winnings), minor units.
    pub paid_minor: i64,
    /// Stakes returned by voids and refunds, minor units.
    pub refunds_minor: i64,
    /// Rounds voided.
    pub voids: u64,
    /// Refused requests by refusal code.
    pub refusals: BTreeMap<String, u64>,
}

/// `GET /v1/audit/daily-summary`, and `pitboss replay --daily-summary`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DailySummary {
    /// The UTC day, `YYYY-MM-DD`.
    pub date: String,
    /// Entries of that day read.
    pub entries: u64,
    /// Each table with an entry that day, by id.
    pub tables: Vec<TableDay>,
}

/// Folds the entries of one day.
#[derive(Debug, Clone)]
pub struct Summer {
    date: String,
    entries: u64,
    tables: BTreeMap<String, TableDay>,
}

impl Summer {
    pub fn new(date: NaiveDate) -> Summer {
        Summer {
            date: date.format("%Y-%m-%d").to_string(),
            entries: 0,
            tables: BTreeMap::new(),
        }
    }

    /// The day's bounds in the log's timestamp form: `[start, end)`.
    pub fn bounds(date: NaiveDate) -> (String, String) {
        let next = date.succ_opt().unwrap_or(date);
        (
            format!("{}T00:00:00.000000Z", date.format("%Y-%m-%d")),
            format!("{}T00:00:00.000000Z", next.format("%Y-%m-%d")),
        )
    }

    /// Adds one entry (the whole entry as JSON); entries of other days are ignored.
    pub fn add(&mut self, entry: &Value) {
        let ts = entry["ts"].as_str().unwrap_or("");
        if !ts.starts_with(&self.date) || ts.as_bytes().get(10) != Some(&b'T') {
            return;
        }
        self.entries += 1;
        let Some(table) = entry["ids"]["table"].as_str() else {
            return;
        };
        // With the ids put back: a `decision_taken` names its bet in `ids` (FORMAT.md 1.4).
        let p = &crate::round::payload_of_entry(entry);
        let int = |k: &str| p[k].as_i64().unwrap_or(0);
        let t = self
            .tables
            .entry(table.to_string())
            .or_insert_with(|| TableDay {
                table: table.to_string(),
                ..TableDay::default()
            });
        match entry["kind"].as_str().unwrap_or("") {
            "round_opened" => t.rounds += 1,
            "bet_accepted" => {
                t.bets += 1;
                t.stakes_minor += int("stake_minor");
            }
            "decision_taken" if p["bet"].is_string() => {
                t.bets += 1;
                t.stakes_minor += int("stake_minor");
            }
            "round_settled" => t.paid_minor += int("paid_minor"),
            "round_voided" => {
                t.voids += 1;
                t.refunds_minor += int("refund_minor");
            }
            "bet_refunded" => t.refunds_minor += int("refund_minor"),
            "bet_refused" | "event_refused" | "command_refused" => {
                let code = p
                    .pointer("/refusal/code")
                    .and_then(Value::as_str)
                    .unwrap_or("refused");
                *t.refusals.entry(code.to_string()).or_default() += 1;
            }
            _ => {}
        }
    }

    pub fn finish(self, table: Option<&str>) -> DailySummary {
        DailySummary {
            date: self.date,
            entries: self.entries,
            tables: self
                .tables
                .into_values()
                .filter(|t| table.is_none_or(|x| x == t.table))
                .collect(),
        }
    }
}

/// The day's summary read from the store, a page at a time (the log's `ts` index finds the
/// day's first entry).
pub fn from_store(
    pool: &ReadPool,
    date: NaiveDate,
    table: Option<&str>,
) -> Result<DailySummary, StoreError> {
    let (start, end) = Summer::bounds(date);
    let mut conn = pool.get().map_err(|e| StoreError::Pool(e.to_string()))?;
    let mut s = Summer::new(date);
    let first: Option<i64> = audit_entries::table
        .filter(audit_entries::ts.ge(&start))
        .select(diesel::dsl::min(audit_entries::seq))
        .first(&mut conn)?;
    let Some(mut next) = first else {
        return Ok(s.finish(table));
    };
    loop {
        let rows: Vec<(i64, Vec<u8>)> = audit_entries::table
            .filter(audit_entries::seq.ge(next))
            .filter(audit_entries::ts.ge(&start))
            .filter(audit_entries::ts.lt(&end))
            .order(audit_entries::seq.asc())
            .limit(PAGE)
            .select((audit_entries::seq, audit_entries::canonical))
            .load(&mut conn)?;
        let Some(last) = rows.last().map(|r| r.0) else {
            break;
        };
        for (_, c) in rows {
            let v: Value = serde_json::from_slice(&c)
                .map_err(|e| StoreError::Corrupt(format!("entry: {e}")))?;
            s.add(&v);
        }
        next = last + 1;
    }
    Ok(s.finish(table))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_day_sums_its_tables_and_ignores_other_days() {
        let d = NaiveDate::from_ymd_opt(2026, 11, 26).unwrap();
        let mut s = Summer::new(d);
        let e = |ts: &str, kind: &str, payload: Value| json!({"ts": ts, "kind": kind, "ids": {"table": "t1"}, "payload": payload});
        s.add(&e("2026-11-26T10:00:00.000000Z", "round_opened", json!({})));
        s.add(&e(
            "2026-11-26T10:00:01.000000Z",
            "bet_accepted",
            json!({"stake_minor": 500}),
        ));
        s.add(&e(
            "2026-11-26T10:00:02.000000Z",
            "round_settled",
            json!({"paid_minor": 1000}),
        ));
        s.add(&e(
            "2026-11-26T10:00:03.000000Z",
            "bet_refused",
            json!({"refusal": {"code": "above_max_bet"}}),
        ));
        s.add(&e("2026-11-27T00:00:00.000000Z", "round_opened", json!({})));
        let out = s.finish(None);
        assert_eq!(out.entries, 4);
        let t = &out.tables[0];
        assert_eq!(
            (t.rounds, t.bets, t.stakes_minor, t.paid_minor),
            (1, 1, 500, 1000)
        );
        assert_eq!(t.refusals["above_max_bet"], 1);
    }
}
