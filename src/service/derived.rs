//! What the writer stores beside the log, derived from it: finished rounds, closed tables and
//! snapshots of the live state. None of it is a source: the log is, and a full replay
//! rebuilds all of it. It is what keeps the service's memory and its start-up bounded by
//! what is live rather than by the length of the log.

use diesel::prelude::*;

use crate::plan::PlanSet;
use crate::round::{RoundState, State, TableState};
use crate::store::schema::{closed_tables, finished_rounds, state_snapshots};
use crate::store::{DbConnection, StoreError};

/// A finished round as stored: `(round, table, operator, the JSON GET answers)`.
pub type FinishedRow = (String, String, String, String);

/// A closed table as stored: `(table, operator, plan, the JSON GET answers)`.
pub type ClosedRow = (String, String, String, String);

/// A snapshot of the live state: `(covers, sha256, bytes)`.
pub type SnapshotRow = (u64, String, Vec<u8>);

/// What one batch stores beside its entries, in the same transaction.
#[derive(Default)]
pub struct Derived {
    pub finished: Vec<FinishedRow>,
    pub closed: Vec<ClosedRow>,
    pub snapshot: Option<SnapshotRow>,
    /// API key changes (`api_key_*` events) applied to `api_keys`.
    pub keys: Vec<crate::round::Event>,
    /// API keys created.
    pub key_rows: Vec<NewKeyRow>,
    /// Amounts this batch's settlements owe (002 § 9(1)), and payments confirmed in it.
    pub payouts_due: Vec<super::payouts::DueRow>,
    pub payouts_confirmed: Vec<super::payouts::Confirmed>,
    /// The player register's changes and counts (002 § 6).
    pub register: super::register::Writes,
}

/// A new API key's row: the secret only as its SHA-256.
#[derive(Debug, Clone)]
pub struct NewKeyRow {
    pub key_id: String,
    pub secret_hash: String,
    pub role: String,
    pub operator: Option<String>,
    pub expires_at: Option<chrono::DateTime<chrono::Utc>>,
}

pub fn finished_rows(state: &State, rounds: &[String]) -> Vec<FinishedRow> {
    rounds
        .iter()
        .filter_map(|r| state.rounds.get(r))
        .filter(|r| r.is_finished())
        .map(|r| {
            (
                r.round.clone(),
                r.table.clone(),
                state
                    .tables
                    .get(&r.table)
                    .map(|t| t.operator.clone())
                    .unwrap_or_default(),
                serde_json::to_string(r).expect("rounds serialise"),
            )
        })
        .collect()
}

pub fn closed_rows(state: &State, tables: &[String]) -> Vec<ClosedRow> {
    tables
        .iter()
        .filter_map(|t| state.tables.get(t))
        .filter(|t| !t.open)
        .map(|t| {
            (
                t.table.clone(),
                t.operator.clone(),
                t.plan.clone(),
                serde_json::to_string(t).expect("tables serialise"),
            )
        })
        .collect()
}

/// Writes a batch's derived rows (inside its transaction).
pub fn write(c: &mut DbConnection, d: &Derived) -> Result<(), diesel::result::Error> {
    write_all(c, &[d])
}

/// The derived rows of several batches, in order, in the caller's transaction; their player
/// register changes merged into one write (`register::Writes::merge`).
pub fn write_all(c: &mut DbConnection, ds: &[&Derived]) -> Result<(), diesel::result::Error> {
    for d in ds {
        write_but_register(c, d)?;
    }
    super::register::write(c, &merged_register(ds))
}

/// The player register's changes of several batches as one write (`register::Writes::merge`).
pub fn merged_register<'a>(ds: &[&'a Derived]) -> std::borrow::Cow<'a, super::register::Writes> {
    use std::borrow::Cow;
    match ds {
        [] => Cow::Owned(Default::default()),
        [one] => Cow::Borrowed(&one.register),
        [first, rest @ ..] => {
            let mut merged = first.register.clone();
            for d in rest {
                merged.merge(&d.register);
            }
            Cow::Owned(merged)
        }
    }
}

fn write_but_register(c: &mut DbConnection, d: &Derived) -> Result<(), diesel::result::Error> {
    for (round, table, operator, body) in &d.finished {
        diesel::insert_into(finished_rounds::table)
            .values((
                finished_rounds::round_id.eq(round),
                finished_rounds::table_id.eq(table),
                finished_rounds::operator_id.eq(operator),
                finished_rounds::body.eq(body),
            ))
            .execute(c)?;
    }
    for (table, operator, plan, body) in &d.closed {
        diesel::insert_into(closed_tables::table)
            .values((
                closed_tables::table_id.eq(table),
                closed_tables::operator_id.eq(operator),
                closed_tables::plan.eq(plan),
                closed_tables::body.eq(body),
            ))
            .execute(c)?;
    }
    super::payouts::write(c, &d.payouts_due, &d.payouts_confirmed)?;
    for k in &d.key_rows {
        use crate::store::schema::api_keys;
        diesel::insert_into(api_keys::table)
            .values((
                api_keys::key_id.eq(&k.key_id),
                api_keys::secret_hash.eq(&k.secret_hash),
                api_keys::role.eq(&k.role),
                api_keys::operator_id.eq(k.operator.as_deref()),
                api_keys::created_at.eq(chrono::Utc::now().to_rfc3339()),
                api_keys::expires_at.eq(k
                    .expires_at
                    .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true))),
            ))
            .execute(c)?;
    }
    for e in &d.keys {
        write_key_change(c, e)?;
    }
    if let Some((covers, sha256, body)) = &d.snapshot {
        let covers = *covers as i64;
        let created = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
        diesel::insert_into(state_snapshots::table)
            .values((
                state_snapshots::covers.eq(covers),
                state_snapshots::sha256.eq(sha256),
                state_snapshots::body.eq(body),
                state_snapshots::created_at.eq(&created),
            ))
            .execute(c)?;
        // Only the latest is read; older ones are derivable from the log.
        diesel::delete(state_snapshots::table.filter(state_snapshots::covers.lt(covers)))
            .execute(c)?;
    }
    Ok(())
}

fn write_key_change(
    c: &mut DbConnection,
    e: &crate::round::Event,
) -> Result<(), diesel::result::Error> {
    use crate::round::Event;
    use crate::store::schema::api_keys;
    let time =
        |t: &chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    match e {
        // The row itself (with the secret's hash) is inserted above, from the command's
        // `rows`; a rotation marks the key it replaces.
        Event::ApiKeyCreated {
            key_id,
            replaces: Some(old),
            ..
        } => {
            diesel::update(api_keys::table.filter(api_keys::key_id.eq(old)))
                .set(api_keys::replaced_by.eq(key_id))
                .execute(c)?;
        }
        Event::ApiKeyCreated { .. } => {}
        Event::ApiKeyRevoked { key_id, .. } => {
            diesel::update(api_keys::table.filter(api_keys::key_id.eq(key_id)))
                .set(api_keys::revoked_at.eq(time(&chrono::Utc::now())))
                .execute(c)?;
        }
        Event::ApiKeyExpirySet {
            key_id, expires_at, ..
        } => {
            diesel::update(api_keys::table.filter(api_keys::key_id.eq(key_id)))
                .set(api_keys::expires_at.eq(time(expires_at)))
                .execute(c)?;
        }
        _ => {}
    }
    Ok(())
}

/// A finished round's stored JSON: `(table, operator, body)`.
pub fn stored_round(
    conn: &mut DbConnection,
    round: &str,
) -> Result<Option<(String, String, String)>, StoreError> {
    Ok(finished_rounds::table
        .filter(finished_rounds::round_id.eq(round))
        .select((
            finished_rounds::table_id,
            finished_rounds::operator_id,
            finished_rounds::body,
        ))
        .first(conn)
        .optional()?)
}

/// A closed table's stored JSON: `(operator, plan, body)`.
pub fn stored_table(
    conn: &mut DbConnection,
    table: &str,
) -> Result<Option<(String, String, String)>, StoreError> {
    Ok(closed_tables::table
        .filter(closed_tables::table_id.eq(table))
        .select((
            closed_tables::operator_id,
            closed_tables::plan,
            closed_tables::body,
        ))
        .first(conn)
        .optional()?)
}

/// The latest stored snapshot: `(covers, sha256, bytes)`.
pub fn latest_snapshot(conn: &mut DbConnection) -> Result<Option<SnapshotRow>, StoreError> {
    let row: Option<(i64, String, Vec<u8>)> = state_snapshots::table
        .order(state_snapshots::covers.desc())
        .select((
            state_snapshots::covers,
            state_snapshots::sha256,
            state_snapshots::body,
        ))
        .first(conn)
        .optional()?;
    Ok(row.map(|(c, s, b)| (c as u64, s, b)))
}

/// Whether any finished round, or any closed table, is stored (a database written before
/// they were stored has neither, and is backfilled by a full replay once).
pub fn any_finished_round(conn: &mut DbConnection) -> Result<bool, StoreError> {
    Ok(finished_rounds::table
        .select(finished_rounds::round_id)
        .first::<String>(conn)
        .optional()?
        .is_some())
}

pub fn any_closed_table(conn: &mut DbConnection) -> Result<bool, StoreError> {
    Ok(closed_tables::table
        .select(closed_tables::table_id)
        .first::<String>(conn)
        .optional()?
        .is_some())
}

/// A table the state does not hold (closed and stored) read back, for a command about it or
/// one of its rounds; `None` if no such table was ever opened.
pub fn fault_in_table(
    conn: &mut DbConnection,
    plans: &PlanSet,
    state: &mut State,
    table: &str,
) -> Result<bool, StoreError> {
    if state.tables.contains_key(table) {
        return Ok(false);
    }
    let Some((_, _, body)) = stored_table(conn, table)? else {
        return Ok(false);
    };
    let v: serde_json::Value =
        serde_json::from_str(&body).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let t = TableState::from_stored(plans, v).map_err(StoreError::Corrupt)?;
    state.tables.insert(table.to_string(), t);
    Ok(true)
}

/// A finished round read back into the state (its table must be there).
pub fn fault_in_round(
    conn: &mut DbConnection,
    state: &mut State,
    round: &str,
) -> Result<bool, StoreError> {
    if state.rounds.contains_key(round) {
        return Ok(false);
    }
    let Some((table, _, body)) = stored_round(conn, round)? else {
        return Ok(false);
    };
    let Some(t) = state.tables.get(&table) else {
        return Ok(false);
    };
    let r =
        RoundState::from_stored(t.loaded.plan.plan.family, &body).map_err(StoreError::Corrupt)?;
    state.rounds.insert(round.to_string(), r);
    Ok(true)
}

/// The plan (`id@version`) of a table, open (in memory) or closed (in the store).
pub fn table_plan(
    state: &std::sync::RwLock<State>,
    conn: &mut DbConnection,
    table: &str,
) -> Result<Option<String>, StoreError> {
    if let Some(t) = state.read().expect("state lock").tables.get(table) {
        return Ok(Some(t.plan.clone()));
    }
    Ok(stored_table(conn, table)?.map(|(_, plan, _)| plan))
}

/// A finished round read back for a reader: the round, its JSON as stored (what `GET`
/// answers, byte for byte), its operator and its table's plan.
pub struct StoredRoundView {
    pub round: RoundState,
    pub json: String,
    pub operator: String,
    pub plan: String,
}

pub fn read_finished_round(
    state: &std::sync::RwLock<State>,
    plans: &PlanSet,
    conn: &mut DbConnection,
    round: &str,
) -> Result<Option<StoredRoundView>, StoreError> {
    let Some((table, operator, body)) = stored_round(conn, round)? else {
        return Ok(None);
    };
    let plan = table_plan(state, conn, &table)?
        .ok_or_else(|| StoreError::Corrupt(format!("round {round}: no table {table}")))?;
    let family = plan
        .parse::<crate::plan::PlanRef>()
        .ok()
        .and_then(|r| plans.get(&r))
        .map(|p| p.plan.plan.family)
        .ok_or_else(|| StoreError::Corrupt(format!("round {round}: plan {plan} is not loaded")))?;
    let r = RoundState::from_stored(family, &body).map_err(StoreError::Corrupt)?;
    Ok(Some(StoredRoundView {
        round: r,
        json: body,
        operator,
        plan,
    }))
}
