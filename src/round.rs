//! The round lifecycle, general for every game, as an event-sourced state machine.
//!
//! `decide_*` functions take the state and a command (with the server's time and any random
//! draw as inputs) and return the events that happen, or a [`Refusal`]. [`State::apply`] folds
//! one event into the state. The service writes each event as an audit-log entry before it
//! acknowledges anything, and rebuilds the state after a restart by applying the logged events
//! in order: the log is the event source. Applying a `round_settled` event re-derives the
//! settlement from the round's bets and result with the plan, and refuses a log whose recorded
//! settlement differs, so a replay proves every settlement.
//!
//! Nothing here does I/O, reads a clock or draws randomness.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::games::roulette::{Placement, RouletteBetRequest, RouletteEngine, SpinValidity};
use crate::games::{Payout, Refusal};
use crate::plan::model::Mode;
use crate::plan::rules::Family;
use crate::plan::{LoadedPlan, PlanSet};

/// Upper bounds on everything a request can grow (TigerBeetle style: a limit on everything).
pub const MAX_BETS_PER_REQUEST: usize = 500;
pub const MAX_BETS_PER_ROUND: usize = 100_000;
pub const MAX_ID_LEN: usize = 64;

/// An id chosen by the operator (table, player): 1–64 of `a-z A-Z 0-9 _ -`.
pub fn check_id(what: &str, id: &str) -> Result<(), Refusal> {
    let ok = !id.is_empty()
        && id.len() <= MAX_ID_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(Refusal::new(
            "bad_id",
            format!(
                "{what} id {id:?} must be 1–{MAX_ID_LEN} characters of a-z, A-Z, 0-9, '_' and '-'"
            ),
        ))
    }
}

/// Everything that can happen, as logged. The entry's `kind` is the variant name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Event {
    /// A plan version admitted into the service (logged once per content hash).
    PlanLoaded {
        plan: String,
        sha256: String,
    },
    TableOpened {
        table: String,
        operator: String,
        plan: String,
        plan_sha256: String,
        mode: Mode,
    },
    TableClosed {
        table: String,
        reason: String,
    },
    RoundOpened {
        round: String,
        table: String,
        number: u64,
        opened_at: DateTime<Utc>,
        betting_deadline: DateTime<Utc>,
        /// SHA-256 of the RNG seed, hex (RNG mode): committed before any bet is taken.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rng_commitment: Option<String>,
    },
    BetAccepted {
        bet: String,
        round: String,
        player: String,
        request: Value,
        placements: Vec<Placement>,
        stake_minor: i64,
    },
    BetRefused {
        round: String,
        player: String,
        request: Value,
        refusal: Refusal,
    },
    BettingClosed {
        round: String,
        at: DateTime<Utc>,
        /// `dealer` (announced) or `deadline` (the window ran out).
        reason: String,
    },
    /// A result that the plan's valid-round rule rejects: the dealer spins again.
    SpinInvalid {
        round: String,
        ball_against_rotation: bool,
        ball_revolutions: u8,
        reason: String,
    },
    /// A dealer event refused (out of order, illegal value), with the reason.
    EventRefused {
        round: String,
        event: Value,
        refusal: Refusal,
    },
    ResultRecorded {
        round: String,
        number: u8,
        /// `live` (reported by the dealer system) or `rng` (drawn by pitboss).
        source: Mode,
    },
    RoundSettled {
        round: String,
        settlements: Vec<BetSettlement>,
        stake_minor: i64,
        paid_minor: i64,
        /// The RNG seed, hex, revealed now that the round is settled (RNG mode).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rng_seed: Option<String>,
    },
    RoundVoided {
        round: String,
        reason: String,
        refunds: Vec<Refund>,
        refund_minor: i64,
    },
    PlayerDisconnected {
        table: String,
        player: String,
    },
    PlayerReconnected {
        table: String,
        player: String,
    },
    /// Any other operator command refused (opening a table or round, a void, …): what was
    /// asked, of which table or round, and why not.
    CommandRefused {
        command: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        table: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        round: Option<String>,
        refusal: Refusal,
    },
}

impl Event {
    /// Every kind an event is logged as (see [`Event::kind`]).
    pub const KINDS: &'static [&'static str] = &[
        "plan_loaded",
        "table_opened",
        "table_closed",
        "round_opened",
        "bet_accepted",
        "bet_refused",
        "betting_closed",
        "spin_invalid",
        "event_refused",
        "result_recorded",
        "round_settled",
        "round_voided",
        "player_disconnected",
        "player_reconnected",
        "command_refused",
    ];

    /// The audit entry kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::PlanLoaded { .. } => "plan_loaded",
            Event::TableOpened { .. } => "table_opened",
            Event::TableClosed { .. } => "table_closed",
            Event::RoundOpened { .. } => "round_opened",
            Event::BetAccepted { .. } => "bet_accepted",
            Event::BetRefused { .. } => "bet_refused",
            Event::BettingClosed { .. } => "betting_closed",
            Event::SpinInvalid { .. } => "spin_invalid",
            Event::EventRefused { .. } => "event_refused",
            Event::ResultRecorded { .. } => "result_recorded",
            Event::RoundSettled { .. } => "round_settled",
            Event::RoundVoided { .. } => "round_voided",
            Event::PlayerDisconnected { .. } => "player_disconnected",
            Event::PlayerReconnected { .. } => "player_reconnected",
            Event::CommandRefused { .. } => "command_refused",
        }
    }

    /// The payload as logged: the event's fields without `kind` (which the entry carries).
    pub fn payload(&self) -> Value {
        let mut v = serde_json::to_value(self).expect("events serialise");
        if let Value::Object(m) = &mut v {
            m.remove("kind");
        }
        v
    }

    /// Reads an event back from an entry's kind and payload.
    pub fn from_entry(kind: &str, payload: &Value) -> Result<Event, String> {
        let mut v = payload.clone();
        match &mut v {
            Value::Object(m) => {
                m.insert("kind".into(), Value::String(kind.to_string()));
            }
            _ => return Err(format!("{kind}: payload is not an object")),
        }
        serde_json::from_value(v).map_err(|e| format!("{kind}: {e}"))
    }
}

/// One bet's settlement as logged and as returned to the operator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct BetSettlement {
    pub bet: String,
    pub player: String,
    pub stake_minor: i64,
    pub returned_minor: i64,
    pub win_minor: i64,
    /// What the player's wallet is credited: returned stake plus winnings.
    pub total_minor: i64,
    pub components: Vec<Payout>,
}

/// One bet's stake returned by a void.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Refund {
    pub bet: String,
    pub player: String,
    pub refund_minor: i64,
}

/// Where a round is in its lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Betting,
    BettingClosed,
    Settled,
    Voided,
}

/// An accepted bet: the request as sent (without `player`) and where it lies.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct BetRecord {
    pub bet: String,
    pub player: String,
    #[schema(value_type = Object)]
    pub request: Value,
    pub placements: Vec<Placement>,
    pub stake_minor: i64,
}

/// A round as readers see it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct RoundState {
    pub round: String,
    pub table: String,
    pub number: u64,
    pub phase: Phase,
    pub opened_at: DateTime<Utc>,
    pub betting_deadline: DateTime<Utc>,
    /// RNG mode: SHA-256 (hex) of the committed seed; `null` in live mode.
    #[schema(required = true)]
    pub rng_commitment: Option<String>,
    pub bets: Vec<BetRecord>,
    /// The winning number once the round is settled.
    #[schema(required = true)]
    pub result: Option<u8>,
    pub invalid_spins: u32,
    #[schema(required = true)]
    pub settlements: Option<Vec<BetSettlement>>,
    #[schema(required = true)]
    pub refunds: Option<Vec<Refund>>,
}

/// A table as readers see it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct TableState {
    pub table: String,
    pub operator: String,
    pub plan: String,
    pub mode: Mode,
    pub open: bool,
    pub rounds: u64,
    /// The round in progress, if any (at most one per table).
    #[schema(required = true)]
    pub current_round: Option<String>,
    pub disconnected: BTreeSet<String>,
    #[serde(skip)]
    pub loaded: Arc<LoadedPlan>,
}

/// The whole domain state: rebuilt from the log at start.
#[derive(Debug, Clone, Default)]
pub struct State {
    pub tables: BTreeMap<String, TableState>,
    pub rounds: BTreeMap<String, RoundState>,
    /// Plan hashes already logged as `plan_loaded`.
    pub plans_logged: BTreeMap<String, String>,
}

fn refuse(code: &str, message: impl Into<String>) -> Refusal {
    Refusal::new(code, message)
}

/// The engine of a plan's family. Only roulette has one so far; the others are refused when a
/// table is opened, never half-played.
fn engine(plan: &LoadedPlan) -> Result<RouletteEngine<'_>, Refusal> {
    match plan.plan.plan.family {
        Family::Roulette => RouletteEngine::new(&plan.plan),
        other => Err(refuse(
            "family_not_supported",
            format!("tables of the {other} family cannot be opened yet: its engine is not built"),
        )),
    }
}

/// A spin as reported (live) or drawn (RNG).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpinReport {
    pub number: u8,
    pub ball_against_rotation: bool,
    pub ball_revolutions: u8,
    pub source: Mode,
    /// The seed, hex, revealed with the settlement of an RNG round.
    pub rng_seed: Option<String>,
}

/// Deterministic ids: a replay assigns the same ones.
pub fn round_id(table: &str, number: u64) -> String {
    format!("{table}.{number}")
}

pub fn bet_id(round: &str, index: usize) -> String {
    format!("{round}.{}", index + 1)
}

impl State {
    pub fn table_of_operator(&self, operator: &str, table: &str) -> Result<&TableState, Refusal> {
        match self.tables.get(table) {
            Some(t) if t.operator == operator => Ok(t),
            // Another operator's table is reported as absent: its existence is not theirs to know.
            _ => Err(refuse("table_not_found", format!("no table {table}"))),
        }
    }

    pub fn round_of_operator(&self, operator: &str, round: &str) -> Result<&RoundState, Refusal> {
        let r = self
            .rounds
            .get(round)
            .ok_or_else(|| refuse("round_not_found", format!("no round {round}")))?;
        self.table_of_operator(operator, &r.table)
            .map_err(|_| refuse("round_not_found", format!("no round {round}")))?;
        Ok(r)
    }

    fn plan_of_round(&self, round: &RoundState) -> Arc<LoadedPlan> {
        self.tables[&round.table].loaded.clone()
    }

    // ----- decisions -------------------------------------------------------------------

    pub fn decide_open_table(
        &self,
        plans: &PlanSet,
        operator: &str,
        table: &str,
        plan_ref: &str,
        mode: Mode,
    ) -> Result<Vec<Event>, Refusal> {
        check_id("table", table)?;
        let r: crate::plan::PlanRef = plan_ref
            .parse()
            .map_err(|e: crate::plan::model::PlanRefError| refuse("bad_plan_ref", e.to_string()))?;
        let loaded = plans
            .get(&r)
            .ok_or_else(|| refuse("plan_not_found", format!("no plan {r} is loaded")))?;
        engine(loaded)?;
        if !loaded.plan.plan.modes.contains(&mode) {
            return Err(refuse(
                "mode_not_allowed",
                format!("{} does not allow {mode:?} mode", loaded.key()),
            )
            .clause("plan.modes"));
        }
        if self.tables.contains_key(table) {
            return Err(refuse(
                "table_exists",
                format!("table {table} already exists"),
            ));
        }
        // Every admitted plan was logged (`plan_loaded`) when the service started.
        Ok(vec![Event::TableOpened {
            table: table.to_string(),
            operator: operator.to_string(),
            plan: loaded.key(),
            plan_sha256: loaded.hash.clone(),
            mode,
        }])
    }

    pub fn decide_open_round(
        &self,
        operator: &str,
        table: &str,
        now: DateTime<Utc>,
        rng_commitment: Option<String>,
    ) -> Result<Vec<Event>, Refusal> {
        let t = self.table_of_operator(operator, table)?;
        if !t.open {
            return Err(refuse("table_closed", format!("table {table} is closed")));
        }
        if let Some(current) = &t.current_round {
            return Err(refuse(
                "round_in_progress",
                format!(
                    "round {current} of table {table} is not finished: settle or void it first"
                ),
            ));
        }
        if t.mode == Mode::Rng && rng_commitment.is_none() {
            return Err(refuse(
                "rng_commitment_missing",
                "an RNG round needs a committed seed",
            ));
        }
        let window =
            i64::try_from(t.loaded.plan.policies.timing.betting_window_ms).unwrap_or(i64::MAX);
        let number = t.rounds + 1;
        Ok(vec![Event::RoundOpened {
            round: round_id(table, number),
            table: table.to_string(),
            number,
            opened_at: now,
            betting_deadline: now + chrono::Duration::milliseconds(window),
            rng_commitment: if t.mode == Mode::Rng {
                rng_commitment
            } else {
                None
            },
        }])
    }

    /// Bets on a round: each accepted or refused on its own, in request order.
    pub fn decide_bets(
        &self,
        operator: &str,
        round: &str,
        now: DateTime<Utc>,
        bets: &[(String, Value)],
    ) -> Result<Vec<Event>, Refusal> {
        let r = self.round_of_operator(operator, round)?;
        if bets.is_empty() || bets.len() > MAX_BETS_PER_REQUEST {
            return Err(refuse(
                "bad_bet_count",
                format!(
                    "a request carries 1–{MAX_BETS_PER_REQUEST} bets, not {}",
                    bets.len()
                ),
            ));
        }
        let plan = self.plan_of_round(r);
        let eng = engine(&plan)?;
        let table = &self.tables[&r.table];
        let mut events = Vec::new();
        let mut phase = r.phase;
        if phase == Phase::Betting && now > r.betting_deadline {
            events.push(Event::BettingClosed {
                round: round.to_string(),
                at: r.betting_deadline,
                reason: "deadline".into(),
            });
            phase = Phase::BettingClosed;
        }
        // Bets accepted earlier in this request; with the round's bets, they count towards the
        // cumulative limits of a player on one spot. Only the betting player's placements are
        // gathered: copying every placement of the round for every bet made a request cost
        // grow with the size of the round (quadratic over a round).
        let mut accepted: Vec<(&str, Vec<Placement>)> = Vec::new();
        let mut next_index = r.bets.len();
        for (player, request) in bets {
            let refused = |refusal: Refusal| Event::BetRefused {
                round: round.to_string(),
                player: player.clone(),
                request: request.clone(),
                refusal,
            };
            if let Err(e) = check_id("player", player) {
                events.push(refused(e));
                continue;
            }
            if phase != Phase::Betting {
                events.push(refused(
                    refuse(
                        "betting_closed",
                        format!("betting on round {round} is closed"),
                    )
                    .clause("betting window"),
                ));
                continue;
            }
            if table.disconnected.contains(player) {
                events.push(refused(refuse(
                    "player_disconnected",
                    format!("player {player} is disconnected from table {}", r.table),
                )));
                continue;
            }
            if next_index >= MAX_BETS_PER_ROUND {
                events.push(refused(refuse(
                    "round_full",
                    "the round holds no more bets",
                )));
                continue;
            }
            let req: RouletteBetRequest = match serde_json::from_value(request.clone()) {
                Ok(req) => req,
                Err(e) => {
                    events.push(refused(refuse("malformed_bet", e.to_string())));
                    continue;
                }
            };
            let placements = match eng.place(&req) {
                Ok(p) => p,
                Err(e) => {
                    events.push(refused(e.with_plan(&plan.key())));
                    continue;
                }
            };
            let existing: Vec<Placement> = r
                .bets
                .iter()
                .map(|b| (b.player.as_str(), &b.placements))
                .chain(accepted.iter().map(|(p, ps)| (*p, ps)))
                .filter(|(p, _)| p == player)
                .flat_map(|(_, ps)| ps.iter().cloned())
                .collect();
            if let Err(e) = eng.check_cumulative(&existing, &placements) {
                events.push(refused(e.with_plan(&plan.key())));
                continue;
            }
            let stake_minor = placements.iter().map(|p| p.stake_minor).sum();
            let bet = bet_id(round, next_index);
            next_index += 1;
            accepted.push((player, placements.clone()));
            events.push(Event::BetAccepted {
                bet,
                round: round.to_string(),
                player: player.clone(),
                request: request.clone(),
                placements,
                stake_minor,
            });
        }
        Ok(events)
    }

    pub fn decide_close_betting(
        &self,
        operator: &str,
        round: &str,
        now: DateTime<Utc>,
    ) -> Result<Vec<Event>, Refusal> {
        let r = self.round_of_operator(operator, round)?;
        match r.phase {
            Phase::Betting => Ok(vec![Event::BettingClosed {
                round: round.to_string(),
                at: now.min(r.betting_deadline),
                reason: if now > r.betting_deadline {
                    "deadline"
                } else {
                    "dealer"
                }
                .into(),
            }]),
            other => Err(refuse(
                "out_of_order",
                format!("round {round} is {other:?}: betting is not open"),
            )),
        }
    }

    /// A spin's result, reported by the dealer system (live) or drawn by pitboss (RNG).
    pub fn decide_spin(
        &self,
        operator: &str,
        round: &str,
        spin: &SpinReport,
    ) -> Result<Vec<Event>, Refusal> {
        let SpinReport {
            number,
            ball_against_rotation,
            ball_revolutions,
            source,
            ref rng_seed,
        } = *spin;
        let rng_seed = rng_seed.clone();
        let r = self.round_of_operator(operator, round)?;
        let table = &self.tables[&r.table];
        if table.mode != source {
            return Err(refuse(
                "wrong_mode",
                format!(
                    "table {} is in {:?} mode: results come from {}",
                    r.table,
                    table.mode,
                    match table.mode {
                        Mode::Live => "the dealer system",
                        Mode::Rng => "pitboss's draw",
                    }
                ),
            ));
        }
        match r.phase {
            Phase::BettingClosed => {}
            Phase::Betting => {
                return Err(refuse(
                    "betting_open",
                    format!("round {round} is still taking bets: close betting before the result"),
                ))
            }
            other => {
                return Err(refuse(
                    "out_of_order",
                    format!("round {round} is already {other:?}"),
                ))
            }
        }
        let plan = self.plan_of_round(r);
        let eng = engine(&plan)?;
        eng.validate_result(number)
            .map_err(|e| e.with_plan(&plan.key()))?;
        if let SpinValidity::Respin { reason, .. } =
            eng.spin_validity(ball_against_rotation, ball_revolutions)
        {
            return Ok(vec![Event::SpinInvalid {
                round: round.to_string(),
                ball_against_rotation,
                ball_revolutions,
                reason,
            }]);
        }
        let settlements = settle(&eng, r, number).map_err(|e| e.with_plan(&plan.key()))?;
        let stake_minor = settlements.iter().map(|s| s.stake_minor).sum();
        let paid_minor = settlements.iter().map(|s| s.total_minor).sum();
        Ok(vec![
            Event::ResultRecorded {
                round: round.to_string(),
                number,
                source,
            },
            Event::RoundSettled {
                round: round.to_string(),
                settlements,
                stake_minor,
                paid_minor,
                rng_seed,
            },
        ])
    }

    /// Voids a round under the plan's error policy: every accepted stake is returned.
    pub fn decide_void(
        &self,
        operator: &str,
        round: &str,
        reason: &str,
    ) -> Result<Vec<Event>, Refusal> {
        let r = self.round_of_operator(operator, round)?;
        if matches!(r.phase, Phase::Settled | Phase::Voided) {
            return Err(refuse(
                "out_of_order",
                format!("round {round} is already {:?}", r.phase),
            ));
        }
        if reason.trim().is_empty() || reason.len() > 500 {
            return Err(refuse(
                "bad_reason",
                "a void states its reason (1–500 characters)",
            ));
        }
        Ok(vec![void_event(r, reason)])
    }

    pub fn decide_close_table(
        &self,
        operator: &str,
        table: &str,
        reason: &str,
    ) -> Result<Vec<Event>, Refusal> {
        let t = self.table_of_operator(operator, table)?;
        if !t.open {
            return Err(refuse(
                "table_closed",
                format!("table {table} is already closed"),
            ));
        }
        let mut events = Vec::new();
        // A table closed with a round open returns every stake of that round (the plans' error
        // and table-closure policies: "sázející obdrží žetony ve výši své původní sázky").
        if let Some(current) = &t.current_round {
            events.push(void_event(&self.rounds[current], "table closed"));
        }
        events.push(Event::TableClosed {
            table: table.to_string(),
            reason: reason.to_string(),
        });
        Ok(events)
    }

    pub fn decide_connection(
        &self,
        operator: &str,
        table: &str,
        player: &str,
        connected: bool,
    ) -> Result<Vec<Event>, Refusal> {
        self.table_of_operator(operator, table)?;
        check_id("player", player)?;
        let (table, player) = (table.to_string(), player.to_string());
        Ok(vec![if connected {
            Event::PlayerReconnected { table, player }
        } else {
            Event::PlayerDisconnected { table, player }
        }])
    }

    // ----- evolution -------------------------------------------------------------------

    /// Folds one event into the state. Errors mean the log contradicts the rules or itself
    /// (a replay of a tampered or inconsistent log); the service never produces them.
    pub fn apply(&mut self, plans: &PlanSet, event: &Event) -> Result<(), String> {
        match event {
            Event::PlanLoaded { plan, sha256 } => {
                self.plans_logged.insert(plan.clone(), sha256.clone());
            }
            Event::TableOpened {
                table,
                operator,
                plan,
                plan_sha256,
                mode,
            } => {
                let r: crate::plan::PlanRef = plan.parse().map_err(|e| format!("{e}"))?;
                let loaded = plans
                    .get(&r)
                    .ok_or_else(|| format!("table {table}: plan {plan} is not loaded"))?;
                if &loaded.hash != plan_sha256 {
                    return Err(format!(
                        "table {table} was opened on {plan} with content {plan_sha256}, but the loaded {plan} is {}",
                        loaded.hash
                    ));
                }
                self.tables.insert(
                    table.clone(),
                    TableState {
                        table: table.clone(),
                        operator: operator.clone(),
                        plan: plan.clone(),
                        mode: *mode,
                        open: true,
                        rounds: 0,
                        current_round: None,
                        disconnected: BTreeSet::new(),
                        loaded: Arc::new(loaded.clone()),
                    },
                );
            }
            Event::TableClosed { table, .. } => {
                let t = self
                    .tables
                    .get_mut(table)
                    .ok_or("close of an unknown table")?;
                t.open = false;
            }
            Event::RoundOpened {
                round,
                table,
                number,
                opened_at,
                betting_deadline,
                rng_commitment,
            } => {
                let t = self
                    .tables
                    .get_mut(table)
                    .ok_or("round on an unknown table")?;
                t.rounds = *number;
                t.current_round = Some(round.clone());
                self.rounds.insert(
                    round.clone(),
                    RoundState {
                        round: round.clone(),
                        table: table.clone(),
                        number: *number,
                        phase: Phase::Betting,
                        opened_at: *opened_at,
                        betting_deadline: *betting_deadline,
                        rng_commitment: rng_commitment.clone(),
                        bets: Vec::new(),
                        result: None,
                        invalid_spins: 0,
                        settlements: None,
                        refunds: None,
                    },
                );
            }
            Event::BetAccepted {
                bet,
                round,
                player,
                request,
                placements,
                stake_minor,
            } => {
                let r = self
                    .rounds
                    .get_mut(round)
                    .ok_or("bet on an unknown round")?;
                r.bets.push(BetRecord {
                    bet: bet.clone(),
                    player: player.clone(),
                    request: request.clone(),
                    placements: placements.clone(),
                    stake_minor: *stake_minor,
                });
            }
            Event::BetRefused { .. }
            | Event::EventRefused { .. }
            | Event::CommandRefused { .. } => {}
            Event::BettingClosed { round, .. } => {
                self.rounds
                    .get_mut(round)
                    .ok_or("close of an unknown round")?
                    .phase = Phase::BettingClosed;
            }
            Event::SpinInvalid { round, .. } => {
                self.rounds
                    .get_mut(round)
                    .ok_or("spin on an unknown round")?
                    .invalid_spins += 1;
            }
            Event::ResultRecorded { round, number, .. } => {
                self.rounds
                    .get_mut(round)
                    .ok_or("result of an unknown round")?
                    .result = Some(*number);
            }
            Event::RoundSettled {
                round, settlements, ..
            } => {
                let r = self
                    .rounds
                    .get(round)
                    .ok_or("settlement of an unknown round")?;
                let number = r.result.ok_or("settlement without a result")?;
                let plan = self.plan_of_round(r);
                let eng = engine(&plan).map_err(|e| e.to_string())?;
                let derived = settle(&eng, r, number).map_err(|e| e.to_string())?;
                if &derived != settlements {
                    return Err(format!("round {round}: the logged settlement differs from the one the plan derives"));
                }
                let table = r.table.clone();
                let r = self.rounds.get_mut(round).expect("checked above");
                r.phase = Phase::Settled;
                r.settlements = Some(settlements.clone());
                self.tables
                    .get_mut(&table)
                    .expect("round's table exists")
                    .current_round = None;
            }
            Event::RoundVoided { round, refunds, .. } => {
                let r = self.rounds.get(round).ok_or("void of an unknown round")?;
                let derived = match void_event(r, "") {
                    Event::RoundVoided { refunds, .. } => refunds,
                    _ => unreachable!("void_event returns a RoundVoided"),
                };
                if &derived != refunds {
                    return Err(format!(
                        "round {round}: the logged refunds differ from the round's stakes"
                    ));
                }
                let table = r.table.clone();
                let r = self.rounds.get_mut(round).expect("checked above");
                r.phase = Phase::Voided;
                r.refunds = Some(refunds.clone());
                self.tables
                    .get_mut(&table)
                    .expect("round's table exists")
                    .current_round = None;
            }
            Event::PlayerDisconnected { table, player } => {
                self.tables
                    .get_mut(table)
                    .ok_or("unknown table")?
                    .disconnected
                    .insert(player.clone());
            }
            Event::PlayerReconnected { table, player } => {
                self.tables
                    .get_mut(table)
                    .ok_or("unknown table")?
                    .disconnected
                    .remove(player);
            }
        }
        Ok(())
    }
}

/// Every accepted bet of the round settled against `number`, each component against the plan.
fn settle(
    eng: &RouletteEngine<'_>,
    r: &RoundState,
    number: u8,
) -> Result<Vec<BetSettlement>, Refusal> {
    r.bets
        .iter()
        .map(|b| {
            let components = eng.settle(&b.placements, number)?;
            let returned_minor = components.iter().map(|c| c.returned_minor).sum();
            let win_minor = components.iter().map(|c| c.win_minor).sum();
            Ok(BetSettlement {
                bet: b.bet.clone(),
                player: b.player.clone(),
                stake_minor: b.stake_minor,
                returned_minor,
                win_minor,
                total_minor: returned_minor + win_minor,
                components,
            })
        })
        .collect()
}

/// The void of a round: every accepted stake back, and nothing else.
fn void_event(r: &RoundState, reason: &str) -> Event {
    let refunds: Vec<Refund> = r
        .bets
        .iter()
        .map(|b| Refund {
            bet: b.bet.clone(),
            player: b.player.clone(),
            refund_minor: b.stake_minor,
        })
        .collect();
    let refund_minor = refunds.iter().map(|x| x.refund_minor).sum();
    // The sum of refunds equals the sum of stakes of the voided round.
    debug_assert_eq!(
        refund_minor,
        r.bets.iter().map(|b| b.stake_minor).sum::<i64>()
    );
    Event::RoundVoided {
        round: r.round.clone(),
        reason: reason.to_string(),
        refunds,
        refund_minor,
    }
}

/// The roulette draw, documented with the other RNG algorithms in [`crate::rng`].
pub use crate::rng::draw_pocket;
