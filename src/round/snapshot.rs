//! Snapshots of the live state: what a start reads instead of the whole log.
//!
//! A snapshot holds exactly what is live after the first `covers` entries: the open tables
//! (with their shoes' counts and the player-versus-player games), the rounds not yet settled
//! or voided, and the plan versions the log has admitted. Finished rounds and closed tables
//! are not in it (they live in the store, see `finished_rounds` and `closed_tables`), so its
//! size follows what is live, never the length of the log.
//!
//! The bytes are deterministic: the same state gives the same bytes, whichever way it was
//! reached (a full replay, or an earlier snapshot and the log's tail). That is what makes
//! the `state_snapshot` entry checkable: its SHA-256 is logged, and an auditor's replay
//! recomputes the snapshot at that entry and compares (`pitboss replay`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{PvpState, RoundState, ShoeState, State, TableState};
use crate::cards::{Card, Shoe};
use crate::plan::model::Mode;
use crate::plan::rules::Family;
use crate::plan::PlanSet;

/// The snapshot format's version: a start refuses a snapshot of another version and replays
/// the whole log instead.
pub const FORMAT: u32 = 1;

/// `R` is how a round is held: read as a [`Value`]; written by `crate::sorted_json` after the
/// rest (`State::snapshot`), or as [`AsValue`] (one round's JSON value at a time), the
/// reference the first is held to (`State::snapshot_through_values`).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Snapshot<R> {
    format: u32,
    /// The number of log entries the state covers (entries `0..covers`).
    covers: u64,
    plans_logged: BTreeMap<String, String>,
    /// Approvals of plan versions, by reference (withdrawn ones included).
    approvals: BTreeMap<String, super::regulator::Approval>,
    /// Rounds paused by a reported error, by round.
    paused: BTreeMap<String, super::regulator::Pause>,
    /// The open tables' registration numbers and dealing devices, by table.
    registrations: BTreeMap<String, super::regulator::Registration>,
    /// Open tables, by id.
    tables: Vec<TableSnapshot>,
    /// Rounds in progress, by id: each as `GET /v1/rounds/{round}` answers it.
    rounds: Vec<R>,
}

/// Serialises as `serde_json` writes the JSON value of `T` (its objects' members in key
/// order), without the values of all rounds existing at once: a snapshot of 64 rounds of 200
/// bets built them all first, ≈ 20 MB of short-lived allocations every 10,000 entries.
struct AsValue<'a, T>(&'a T);

impl<T: Serialize> Serialize for AsValue<'_, T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serde_json::to_value(self.0)
            .map_err(serde::ser::Error::custom)?
            .serialize(serializer)
    }
}

/// A live round as a snapshot writes it (through `crate::sorted_json`): the members of
/// [`RoundState`] (as `GET /v1/rounds/{round}` answers them), each bet its text made when it
/// was placed ([`super::BetRecord::snapshot_text`]) instead of written again.
#[derive(Serialize)]
struct RoundView<'a> {
    round: &'a String,
    table: &'a String,
    number: &'a u64,
    phase: &'a super::Phase,
    opened_at: &'a DateTime<Utc>,
    betting_deadline: &'a DateTime<Utc>,
    rng_commitment: &'a Option<String>,
    bets: BetTexts<'a>,
    result: &'a Option<u8>,
    invalid_spins: &'a u32,
    cards: &'a Vec<super::CardRecord>,
    outcome: &'a Option<Value>,
    misdeals: &'a u32,
    decisions: &'a Vec<super::DecisionRecord>,
    decisions_pending: &'a Vec<String>,
    decision_deadline: &'a Option<DateTime<Utc>>,
    decisions_closed: &'a bool,
    settlements: &'a Option<Vec<super::BetSettlement>>,
    refunds: &'a Option<Vec<super::Refund>>,
    blackjack: &'a Option<super::BlackjackRound>,
}

impl<'a> RoundView<'a> {
    fn of(r: &'a RoundState) -> RoundView<'a> {
        // Every field of the round is named here: a field added to `RoundState` and not to
        // the view is a compile error, not a snapshot that silently forgets it.
        let RoundState {
            round,
            table,
            number,
            phase,
            opened_at,
            betting_deadline,
            rng_commitment,
            bets,
            result,
            invalid_spins,
            cards,
            outcome,
            misdeals,
            decisions,
            decisions_pending,
            decision_deadline,
            decisions_closed,
            settlements,
            refunds,
            blackjack,
            by_player: _,
        } = r;
        RoundView {
            round,
            table,
            number,
            phase,
            opened_at,
            betting_deadline,
            rng_commitment,
            bets: BetTexts(bets),
            result,
            invalid_spins,
            cards,
            outcome,
            misdeals,
            decisions,
            decisions_pending,
            decision_deadline,
            decisions_closed,
            settlements,
            refunds,
            blackjack,
        }
    }
}

/// A round's bets, each as its snapshot text.
struct BetTexts<'a>(&'a [super::BetRecord]);

impl Serialize for BetTexts<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for b in self.0 {
            seq.serialize_element(&crate::sorted_json::Presorted(&b.snapshot_text()))?;
        }
        seq.end()
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TableSnapshot {
    /// The content hash of the table's plan: a start on other plan content refuses the
    /// snapshot (as a replay refuses the log).
    plan_sha256: String,
    /// The table as `GET /v1/tables/{table}` answers it.
    table: Value,
    /// Live card games: how many of each card the shoe has given since its shuffle (which
    /// the reader's view counts only in total), by card.
    seen: Vec<(Card, u16)>,
}

/// SHA-256 of `bytes`, lower-case hex (as the `state_snapshot` entry logs it).
pub fn sha256_hex(bytes: &[u8]) -> String {
    crate::plan::canonical::hex(&Sha256::digest(bytes))
}

impl State {
    /// The live state as of `covers` entries, as bytes (deterministic).
    pub fn snapshot(&self, covers: u64) -> Vec<u8> {
        self.snapshot_written(covers, true)
    }

    /// The same bytes with each round written through its `Value` (how they were first
    /// written, and what audit/FORMAT.md §10.1 describes): the reference the faster writing
    /// is held to.
    pub fn snapshot_through_values(&self, covers: u64) -> Vec<u8> {
        self.snapshot_written(covers, false)
    }

    fn snapshot_written(&self, covers: u64, sorted: bool) -> Vec<u8> {
        // Every field of the state is named here: a field added to `State` and not to the
        // snapshot is a compile error, not a snapshot that silently forgets it.
        let State {
            tables: _,
            rounds: _,
            plans_logged: _,
            approvals: _,
            paused: _,
            registrations: _,
        } = self;
        let tables = self
            .tables
            .values()
            .filter(|t| t.open)
            .map(|t| {
                let mut seen: Vec<(Card, u16)> = t
                    .shoe
                    .as_ref()
                    .map(|s| s.seen.iter().map(|(c, n)| (*c, *n)).collect())
                    .unwrap_or_default();
                seen.sort();
                TableSnapshot {
                    plan_sha256: t.loaded.hash.clone(),
                    table: serde_json::to_value(t).expect("tables serialise"),
                    seen,
                }
            })
            .collect();
        let live = self.rounds.values().filter(|r| !r.is_finished());
        // Written in key order: after the rest, between the brackets (no `RawValue` made of
        // each round's text, which parses it again to check it).
        let rounds = if sorted {
            Vec::new()
        } else {
            live.clone().map(AsValue).collect()
        };
        let s = Snapshot {
            format: FORMAT,
            covers,
            plans_logged: self.plans_logged.clone(),
            approvals: self.approvals.clone(),
            paused: self
                .paused
                .iter()
                .filter(|(r, _)| self.rounds.get(*r).is_some_and(|r| !r.is_finished()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            registrations: self
                .registrations
                .iter()
                .filter(|(t, _)| self.tables.get(*t).is_some_and(|t| t.open))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            tables,
            rounds,
        };
        let mut bytes = serde_json::to_vec(&s).expect("snapshots serialise");
        if sorted {
            // `"rounds":[]}` ends the bytes (the last member): the rounds go between `[` and `]`.
            let end = b"\"rounds\":[]}";
            assert!(bytes.ends_with(end), "a snapshot ends with its rounds");
            bytes.truncate(bytes.len() - 2);
            for (i, r) in live.enumerate() {
                if i > 0 {
                    bytes.push(b',');
                }
                crate::sorted_json::write(&mut bytes, &RoundView::of(r)).expect("rounds serialise");
            }
            bytes.extend_from_slice(b"]}");
        }
        bytes
    }

    /// Reads a snapshot back: the state and the number of entries it covers.
    pub fn from_snapshot(plans: &PlanSet, bytes: &[u8]) -> Result<(State, u64), String> {
        let s: Snapshot<Value> =
            serde_json::from_slice(bytes).map_err(|e| format!("state snapshot: {e}"))?;
        if s.format != FORMAT {
            return Err(format!(
                "state snapshot of format {}, this build reads {FORMAT}",
                s.format
            ));
        }
        let mut state = State {
            plans_logged: s.plans_logged,
            approvals: s.approvals,
            paused: s.paused,
            registrations: s.registrations,
            ..State::default()
        };
        for t in s.tables {
            let mut table = TableState::from_stored(plans, t.table)?;
            if table.loaded.hash != t.plan_sha256 {
                return Err(format!(
                    "table {}: the snapshot's plan {} has content {}, the loaded one {}",
                    table.table, table.plan, t.plan_sha256, table.loaded.hash
                ));
            }
            if let Some(shoe) = table.shoe.as_mut() {
                shoe.seen = t.seen.into_iter().collect();
            }
            state.tables.insert(table.table.clone(), table);
        }
        for v in s.rounds {
            let table = v
                .get("table")
                .and_then(Value::as_str)
                .ok_or("state snapshot: a round without its table")?;
            let family = state
                .tables
                .get(table)
                .ok_or_else(|| format!("state snapshot: a round of table {table}, not open"))?
                .loaded
                .plan
                .plan
                .family;
            let r = RoundState::from_stored_value(family, v)?;
            state.rounds.insert(r.round.clone(), r);
        }
        Ok((state, s.covers))
    }
}

/// A table as stored: the JSON it serialises to, read back.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredTable {
    table: String,
    operator: String,
    plan: String,
    mode: Mode,
    open: bool,
    rounds: u64,
    current_round: Option<String>,
    disconnected: BTreeSet<String>,
    shoe: Option<StoredShoe>,
    game: Option<Value>,
    expected: Option<Value>,
    actions: u64,
    last_action_at: Option<DateTime<Utc>>,
    seated: BTreeMap<String, u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredShoe {
    shoe: Shoe,
    cards_seen: u32,
    cards_left: u32,
    persists: bool,
}

impl TableState {
    /// Reads back a table from the JSON it serialises to (a snapshot's table, or a closed
    /// table kept in the store). The shoe's per-card counts are not in that JSON: a
    /// snapshot carries them beside it, a closed table needs none.
    pub fn from_stored(plans: &PlanSet, v: Value) -> Result<TableState, String> {
        let t: StoredTable = serde_json::from_value(v).map_err(|e| format!("stored table: {e}"))?;
        let r: crate::plan::PlanRef = t.plan.parse().map_err(|e| format!("{e}"))?;
        let loaded = plans
            .get(&r)
            .ok_or_else(|| format!("table {}: plan {} is not loaded", t.table, t.plan))?;
        let game = match t.game {
            None => None,
            Some(g) => Some(match loaded.plan.plan.family {
                Family::OkoBere => PvpState::OkoBere(
                    serde_json::from_value(g).map_err(|e| format!("table {}: {e}", t.table))?,
                ),
                Family::PokerCash => PvpState::Poker(
                    serde_json::from_value(g).map_err(|e| format!("table {}: {e}", t.table))?,
                ),
                f => return Err(format!("table {}: a game state at a {f} table", t.table)),
            }),
        };
        Ok(TableState {
            table: t.table,
            operator: t.operator,
            plan: t.plan,
            mode: t.mode,
            open: t.open,
            rounds: t.rounds,
            current_round: t.current_round,
            disconnected: t.disconnected,
            shoe: t.shoe.map(|s| ShoeState {
                shoe: s.shoe,
                cards_seen: s.cards_seen,
                cards_left: s.cards_left,
                persists: s.persists,
                seen: Default::default(),
            }),
            game,
            expected: t.expected,
            actions: t.actions,
            last_action_at: t.last_action_at,
            seated: t.seated,
            loaded: Arc::new(loaded.clone()),
        })
    }
}

impl State {
    /// Folds one event as the service's replay does: applies it, then lets a finished round
    /// or a closed table leave memory (their state is in the store). A `state_snapshot`
    /// event is checked against the state it covers first.
    pub fn fold(&mut self, plans: &PlanSet, event: &super::Event) -> Result<(), String> {
        use super::Event;
        if let Event::StateSnapshot { covers, sha256 } = event {
            let actual = sha256_hex(&self.snapshot(*covers));
            if &actual != sha256 {
                return Err(format!(
                    "the state snapshot at {covers} hashes to {sha256}, the replay's state to {actual}"
                ));
            }
        }
        self.apply(plans, event)?;
        self.forget_finished(event);
        Ok(())
    }

    /// After `event`: the round it finished or the table it closed leaves memory.
    pub fn forget_finished(&mut self, event: &super::Event) {
        use super::Event;
        match event {
            Event::RoundSettled { round, .. } | Event::RoundVoided { round, .. } => {
                self.rounds.remove(round);
            }
            Event::TableClosed { table, .. } => {
                self.tables.remove(table);
                // Read from the table's `table_opened` entry once it is closed.
                self.registrations.remove(table);
            }
            _ => {}
        }
    }
}

/// Proves that a snapshot and the log's tail give exactly the state of a full replay: for
/// `cuts` points spread over the log (its start and end included), the state there is
/// written as a snapshot, read back (the bytes must read back to themselves), and the rest
/// of the log folded onto it; the result must be the full replay's, byte for byte. `events`
/// are the log's entries in order (`None`: an entry that is no game event). Returns the
/// number of cuts checked.
pub fn check_equivalence(
    plans: &PlanSet,
    events: &[Option<super::Event>],
    cuts: usize,
) -> Result<usize, String> {
    let n = events.len();
    let fold_from = |mut state: State, from: usize| -> Result<State, String> {
        for (i, e) in events.iter().enumerate().skip(from) {
            if let Some(e) = e {
                state
                    .fold(plans, e)
                    .map_err(|m| format!("entry {i}: {m}"))?;
            }
        }
        Ok(state)
    };
    let full = fold_from(State::default(), 0)?.snapshot(n as u64);
    let cuts = cuts.max(2).min(n + 1);
    let mut points: Vec<usize> = (0..cuts).map(|i| i * n / (cuts - 1).max(1)).collect();
    points.dedup();
    let mut state = State::default();
    let mut at = 0usize;
    for &k in &points {
        for (i, e) in events.iter().enumerate().take(k).skip(at) {
            if let Some(e) = e {
                state
                    .fold(plans, e)
                    .map_err(|m| format!("entry {i}: {m}"))?;
            }
        }
        at = k;
        let bytes = state.snapshot(k as u64);
        if bytes != state.snapshot_through_values(k as u64) {
            return Err(format!(
                "the snapshot at {k} is not the bytes its rounds' JSON values give"
            ));
        }
        let (restored, covers) = State::from_snapshot(plans, &bytes)?;
        if covers != k as u64 || restored.snapshot(k as u64) != bytes {
            return Err(format!("the snapshot at {k} does not read back to itself"));
        }
        let end = fold_from(restored, k)?.snapshot(n as u64);
        if end != full {
            return Err(format!(
                "the snapshot at {k} and the log after it give another state than a full replay:\n  snapshot + tail: {}\n  full replay:     {}",
                String::from_utf8_lossy(&end),
                String::from_utf8_lossy(&full)
            ));
        }
    }
    Ok(points.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use serde_json::value::RawValue;

    /// The plans, and a state with a live roulette table of operator `op1` for each of
    /// `tables`, each with a round open and, on it, a red/black bet of player `p{i}` on each
    /// `fields[i]`.
    fn roulette_bets(tables: &[&str], fields: &[&str]) -> (PlanSet, State) {
        let (plans, report) = PlanSet::load_dir(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("game_plans")
                .as_path(),
        );
        assert_eq!(report.errors().count(), 0);
        let mut state = State::default();
        let now = Utc::now();
        let apply = |state: &mut State, events: Vec<super::super::Event>| {
            for e in events {
                state.apply(&plans, &e).expect("applies");
            }
        };
        for t in tables {
            let events = state
                .decide_open_table(&plans, "op1", t, "evolution-roulette@1", Mode::Live)
                .expect("table");
            apply(&mut state, events);
            let t = &super::super::scoped_table("op1", t);
            let events = state.decide_open_round("op1", t, now, None).expect("round");
            apply(&mut state, events);
            let round = state.tables[t].current_round.clone().expect("a round");
            for (i, field) in fields.iter().enumerate() {
                let bet = json!({"bet": "red_black", "field": field, "stake_minor": 100});
                let events = state
                    .decide_bets("op1", &round, now, &[(format!("p{i}"), bet)])
                    .expect("bets");
                apply(&mut state, events);
            }
        }
        (plans, state)
    }

    /// Each round in a snapshot is written as the bytes of its JSON value, as snapshots (and
    /// the SHA-256 logged for each) were written when all rounds' values were built first: an
    /// older log's `state_snapshot` entries still check against a replay.
    #[test]
    fn each_round_is_written_as_its_json_value() {
        let (_, state) = roulette_bets(&["s1", "s2"], &["red", "black", "red"]);
        let bytes = state.snapshot(7);
        let read: Snapshot<Box<RawValue>> = serde_json::from_slice(&bytes).expect("reads");
        assert_eq!(read.rounds.len(), 2);
        for raw in &read.rounds {
            let v: Value = serde_json::from_str(raw.get()).expect("a round");
            let round = &state.rounds[v["round"].as_str().expect("round id")];
            assert_eq!(round.bets.len(), 3);
            let as_value =
                serde_json::to_string(&serde_json::to_value(round).expect("value")).expect("text");
            assert_eq!(raw.get(), as_value);
        }
    }

    /// A bet's snapshot text is made when it is placed; a refund after it changes the bet, and
    /// the snapshot still writes the bet as its value is now (as does a clone of the state,
    /// whose bets make their texts again).
    #[test]
    fn a_bet_refunded_after_its_text_was_made_is_written_as_it_is_now() {
        let (plans, mut state) = roulette_bets(&["s1"], &["red"]);
        let round = state.rounds.keys().next().expect("a round").clone();
        let before = state.snapshot(5);
        assert_eq!(before, state.snapshot_through_values(5));
        let placed = state.rounds[&round].bets[0].clone();
        let refund = super::super::Event::BetRefunded {
            round: round.clone(),
            bet: placed.bet.clone(),
            player: placed.player.clone(),
            refund_minor: placed.stake_minor,
            reason: "disconnected".into(),
            clause: "policies.disconnect".into(),
        };
        state.apply(&plans, &refund).expect("applies");
        let after = state.snapshot(6);
        assert_eq!(after, state.snapshot_through_values(6));
        assert!(String::from_utf8_lossy(&after).contains("\"refunded\":true"));
        // A bet whose kept text was made before its refund is written anew.
        let mut stale = placed.clone();
        let _ = stale.snapshot_text();
        stale.refunded = true;
        assert_eq!(
            stale.snapshot_text().as_bytes(),
            crate::sorted_json::to_vec(&stale).expect("bet").as_slice()
        );
        // The request's text is copied, not sorted again: `raw` writes objects' members in key
        // order (`serde_json` built without `preserve_order`).
        let unsorted = json!({"zeta": 1, "alpha": {"y": 2, "b": 3}});
        assert_eq!(
            super::super::raw(&unsorted).get(),
            r#"{"alpha":{"b":3,"y":2},"zeta":1}"#
        );
        // A clone of the state writes the same bytes.
        let copy = State {
            rounds: state.rounds.clone(),
            ..State::default()
        };
        assert_eq!(
            copy.rounds[&round].bets[0].snapshot_text(),
            state.rounds[&round].bets[0].snapshot_text()
        );
    }
}
