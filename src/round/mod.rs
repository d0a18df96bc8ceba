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
use serde_json::value::RawValue;
use serde_json::Value;

use crate::cards::{Card, Shoe};
use crate::games::roulette::SpinValidity;
use crate::games::{Payout, Refusal};
use crate::plan::model::Mode;
use crate::plan::rules::Family;
use crate::plan::{LoadedPlan, PlanSet};

pub mod blackjack;
pub mod game;
pub mod pvp;
pub mod refunds;
pub mod regulator;
pub mod snapshot;

pub use blackjack::BlackjackRound;
pub use game::{CardRecord, Engine, Next, Placements, Position, Settled};
pub use pvp::{PvpEngine, PvpState};

/// Upper bounds on everything a request can grow (TigerBeetle style: a limit on everything).
pub const MAX_BETS_PER_REQUEST: usize = 500;
pub const MAX_BETS_PER_ROUND: usize = 100_000;
pub const MAX_ID_LEN: usize = 64;
/// Cards in one dealer-system request (a whole baccarat coup is six).
pub const MAX_CARDS_PER_REQUEST: usize = 16;

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
        /// Who loaded it: the service at its start (`role` `service`), with the operating
        /// system's user that ran it as `person` when known. Absent in logs written before.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        loaded_by: Option<regulator::Actor>,
    },
    /// A regulator approved a plan version (by its content hash) under a reference, valid
    /// from `valid_from` (and until `valid_until`, exclusive). `via`: `api` (a regulator key)
    /// or `note` (an offline note signed with the regulator's own key, logged whole in
    /// `note` so anyone can check its signature).
    PlanApproved {
        plan: String,
        sha256: String,
        reference: String,
        valid_from: DateTime<Utc>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        valid_until: Option<DateTime<Utc>>,
        actor: regulator::Actor,
        via: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// An approval withdrawn: no new table or round on that plan version where approvals are
    /// required; running rounds finish.
    PlanApprovalWithdrawn {
        reference: String,
        sha256: String,
        reason: String,
        actor: regulator::Actor,
    },
    /// The service stored a snapshot of its live state as of `covers` entries (this entry's
    /// own seq): `sha256` is the SHA-256 of the snapshot's bytes ([`snapshot`]). Changes
    /// nothing; an auditor's replay recomputes the snapshot at this point and compares.
    StateSnapshot {
        covers: u64,
        sha256: String,
    },
    /// An API key created (its secret is never logged, nor its hash). `by` is who created it:
    /// `key:<id>` of the admin (or operator) key that asked, or `service` for the bootstrap
    /// admin key; `replaces` names the key a rotation replaces.
    ApiKeyCreated {
        key_id: String,
        role: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        operator: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expires_at: Option<DateTime<Utc>>,
        by: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replaces: Option<String>,
    },
    /// An API key revoked: refused from this entry on.
    ApiKeyRevoked {
        key_id: String,
        by: String,
        reason: String,
    },
    /// An API key's expiry changed (a rotation gives the old key the overlap's end), with
    /// the value before.
    ApiKeyExpirySet {
        key_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        previous: Option<DateTime<Utc>>,
        expires_at: DateTime<Utc>,
        by: String,
        reason: String,
    },
    TableOpened {
        table: String,
        operator: String,
        plan: String,
        plan_sha256: String,
        mode: Mode,
        /// The table's registration number (a transmitted live game's, Act 186/2016 §83).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        registration: Option<String>,
        /// The id of the device that deals it (wheel, shoe, shuffler).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        device: Option<String>,
    },
    TableClosed {
        table: String,
        reason: String,
        /// Who closed it (the key, and the person the operator named).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        actor: Option<regulator::Actor>,
    },
    /// The dealer system or staff reported an error: the round takes no bet and no dealer
    /// event until a repair resumes it (`round_resumed`) or it is voided. `reported`: what was
    /// reported, as the operator sent it.
    RoundPaused {
        round: String,
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reported: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        actor: Option<regulator::Actor>,
        at: DateTime<Utc>,
    },
    /// A repair: the paused round goes on where it stopped.
    RoundResumed {
        round: String,
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        actor: Option<regulator::Actor>,
        at: DateTime<Utc>,
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
        /// The family's placements (see [`Placements`]): what the plan reads from `request`.
        /// An entry leaves them out ([`logged_payload`]); read back from such an entry they are
        /// `null`, and [`State::apply`] derives them from `request` with the plan's engine.
        #[serde(default, skip_serializing_if = "Value::is_null")]
        placements: Value,
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
    /// Settlements of a round too large for one entry (more than [`PART_BYTES`] of them):
    /// each part but the last is logged as its own entry, in order, right before the
    /// `round_settled` entry, which carries the last part and the round's totals. Applied, a
    /// part is held with the round until its `round_settled` completes the list.
    RoundSettledPart {
        round: String,
        settlements: Vec<BetSettlement>,
    },
    /// Refunds of a void too large for one entry, as [`Event::RoundSettledPart`] for
    /// `round_voided`.
    RoundVoidedPart {
        round: String,
        refunds: Vec<Refund>,
    },
    RoundVoided {
        round: String,
        reason: String,
        refunds: Vec<Refund>,
        refund_minor: i64,
        /// Who voided it (the key, and the person the operator named); absent where no
        /// caller did (older logs).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        actor: Option<regulator::Actor>,
        /// The RNG seed, hex, revealed by the void as by a settlement (RNG mode), so that a
        /// void decided after looking at the seed's draw can be audited.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rng_seed: Option<String>,
    },
    PlayerDisconnected {
        table: String,
        player: String,
    },
    PlayerReconnected {
        table: String,
        player: String,
    },
    /// A bet's stake returned before the round is settled: the player was disconnected
    /// before betting closed, and the plan returns the stake then
    /// (`policies.disconnect.refund_if_disconnected_before_betting_closes`).
    BetRefunded {
        round: String,
        bet: String,
        player: String,
        refund_minor: i64,
        reason: String,
        clause: String,
    },
    /// A card dealt, reported by the dealer system (live) or drawn by pitboss (RNG), and
    /// accepted by the rules.
    CardDealt {
        round: String,
        to: Position,
        card: Card,
        source: Mode,
    },
    /// The round's cards so far are void and the dealer deals again; bets stand (Top Card's
    /// valid-round rule). The discarded cards stay out of the shoe.
    Misdeal {
        round: String,
        reason: String,
        clause: String,
        discarded: Vec<CardRecord>,
    },
    /// The dealer shuffled the table's shoe: every card can come again.
    ShoeShuffled {
        table: String,
        cards_seen: u32,
    },
    /// A new shoe replaced the table's shoe.
    ShoeChanged {
        table: String,
        cards_seen: u32,
    },
    /// The players' decision time starts; an undecided player gets the plan's automatic
    /// decision after `deadline`.
    DecisionsOpened {
        round: String,
        deadline: DateTime<Utc>,
        /// The players who owe a decision.
        players: Vec<String>,
    },
    /// A player's decision, or the plan's automatic decision for a player who did not
    /// decide in time or was disconnected. A call places a further bet (`bet`).
    DecisionTaken {
        round: String,
        player: String,
        decision: Value,
        automatic: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bet: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        placements: Option<Value>,
        stake_minor: i64,
    },
    DecisionsClosed {
        round: String,
        at: DateTime<Utc>,
        /// `all_decided`, `deadline` or `dealer`.
        reason: String,
    },
    /// The result of a complete deal, read by the rules (card games).
    OutcomeRecorded {
        round: String,
        outcome: Value,
        source: Mode,
    },
    /// An act at a player-versus-player table (Oko bere, the poker room), with the effects
    /// the rules gave it. `automatic`: the plan's act for a player who did not act in time.
    TableAction {
        table: String,
        action: Value,
        effects: Value,
        automatic: bool,
        at: DateTime<Utc>,
    },
    /// One input to a blackjack round, applied by the rules: a card (live: as the dealer
    /// system reported it; RNG: the next card of the round's shoe), a player's decision or
    /// insurance answer, the plan's automatic decision on a time-out, or the close of the
    /// insurance offer. `to` says where the rules placed a card; `bets` are the stakes the
    /// input added (a split, a double, insurance, and the Bets Behind that followed), each a
    /// bet of its own; `bet_behind_declines` the Bets Behind that did not follow a split or a
    /// double their players could not fund.
    BlackjackInput {
        round: String,
        input: crate::games::blackjack::Input,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        bet_behind_declines: Vec<crate::games::blackjack::Input>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        to: Option<crate::games::blackjack::CardTo>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        source: Option<Mode>,
        /// The player who decided (or was decided for).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        player: Option<String>,
        #[serde(default)]
        automatic: bool,
        /// Why an automatic input was taken: `time_out` or `disconnected`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        bets: Vec<blackjack::AddedBet>,
        at: DateTime<Utc>,
    },
    /// A player loses his place at the table: no bet in the plan's number of rounds in a row
    /// (`policies.disconnect.remove_after_rounds_without_bet`).
    SeatReleased {
        table: String,
        player: String,
        rounds_without_bet: u32,
        clause: String,
    },
    /// The operator confirms it paid a player what a settlement owed him (002 § 9(1): at
    /// the latest 30 days after the evaluation), with its wallet's reference.
    PayoutConfirmed {
        round: String,
        player: String,
        amount_minor: i64,
        wallet_reference: String,
        /// The payment was made after its due time.
        late: bool,
    },
    /// 002 § 6(2): the operator excluded a player from its games (the national register of
    /// excluded persons, or the player's self-exclusion); `replaces`: the exclusion it
    /// replaced. Kept in the player register (`crate::service::register`), not in the state.
    PlayerExcluded {
        player: String,
        exclusion: crate::service::register::Exclusion,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replaces: Option<crate::service::register::Exclusion>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        actor: Option<regulator::Actor>,
        at: DateTime<Utc>,
    },
    /// A player's exclusion lifted, with the reason.
    PlayerExclusionLifted {
        player: String,
        lifted: crate::service::register::Exclusion,
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        actor: Option<regulator::Actor>,
        at: DateTime<Utc>,
    },
    /// 002 § 6(3): a player's self-limits changed; each change with the time it takes effect.
    PlayerLimitsSet {
        player: String,
        changes: Vec<crate::service::register::LimitChange>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        actor: Option<regulator::Actor>,
        at: DateTime<Utc>,
    },
    /// 002 § 6(3): what the operator reports the player used in its other games in the
    /// current day and month (it replaces the earlier report of the same period).
    PlayerUsageReported {
        player: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        day: Option<crate::service::register::ReportedUsage>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        month: Option<crate::service::register::ReportedUsage>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        actor: Option<regulator::Actor>,
        at: DateTime<Utc>,
    },
    /// Any other operator command refused (opening a table or round, a void, …): what was
    /// asked, of which table or round, and why not.
    CommandRefused {
        command: String,
        /// What was asked, where it is more than the command's name and target (the action
        /// refused at a player-versus-player table).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        table: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        round: Option<String>,
        /// The table or round as the client named it, when it is not one of the operator's
        /// own (absent, or another operator's): kept out of the entry's ids so that no
        /// other operator's history shows the attempt.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        requested: Option<Value>,
        refusal: Refusal,
    },
}

impl Event {
    /// A refusal entry: the request was refused and changed nothing.
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            Event::BetRefused { .. } | Event::EventRefused { .. } | Event::CommandRefused { .. }
        )
    }

    /// Every kind an event is logged as (see [`Event::kind`]).
    pub const KINDS: &'static [&'static str] = &[
        "plan_loaded",
        "state_snapshot",
        "api_key_created",
        "api_key_revoked",
        "api_key_expiry_set",
        "plan_approved",
        "plan_approval_withdrawn",
        "round_paused",
        "round_resumed",
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
        "round_settled_part",
        "round_voided_part",
        "player_disconnected",
        "player_reconnected",
        "command_refused",
        "bet_refunded",
        "card_dealt",
        "misdeal",
        "shoe_shuffled",
        "shoe_changed",
        "decisions_opened",
        "decision_taken",
        "decisions_closed",
        "outcome_recorded",
        "table_action",
        "blackjack_input",
        "seat_released",
        "payout_confirmed",
        "player_excluded",
        "player_exclusion_lifted",
        "player_limits_set",
        "player_usage_reported",
    ];

    /// The audit entry kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::PlanLoaded { .. } => "plan_loaded",
            Event::StateSnapshot { .. } => "state_snapshot",
            Event::ApiKeyCreated { .. } => "api_key_created",
            Event::ApiKeyRevoked { .. } => "api_key_revoked",
            Event::ApiKeyExpirySet { .. } => "api_key_expiry_set",
            Event::PlanApproved { .. } => "plan_approved",
            Event::PlanApprovalWithdrawn { .. } => "plan_approval_withdrawn",
            Event::RoundPaused { .. } => "round_paused",
            Event::RoundResumed { .. } => "round_resumed",
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
            Event::RoundSettledPart { .. } => "round_settled_part",
            Event::RoundVoidedPart { .. } => "round_voided_part",
            Event::PlayerDisconnected { .. } => "player_disconnected",
            Event::PlayerReconnected { .. } => "player_reconnected",
            Event::CommandRefused { .. } => "command_refused",
            Event::BetRefunded { .. } => "bet_refunded",
            Event::CardDealt { .. } => "card_dealt",
            Event::Misdeal { .. } => "misdeal",
            Event::ShoeShuffled { .. } => "shoe_shuffled",
            Event::ShoeChanged { .. } => "shoe_changed",
            Event::DecisionsOpened { .. } => "decisions_opened",
            Event::DecisionTaken { .. } => "decision_taken",
            Event::DecisionsClosed { .. } => "decisions_closed",
            Event::OutcomeRecorded { .. } => "outcome_recorded",
            Event::TableAction { .. } => "table_action",
            Event::BlackjackInput { .. } => "blackjack_input",
            Event::SeatReleased { .. } => "seat_released",
            Event::PayoutConfirmed { .. } => "payout_confirmed",
            Event::PlayerExcluded { .. } => "player_excluded",
            Event::PlayerExclusionLifted { .. } => "player_exclusion_lifted",
            Event::PlayerLimitsSet { .. } => "player_limits_set",
            Event::PlayerUsageReported { .. } => "player_usage_reported",
        }
    }

    /// The event's fields without `kind` (which the entry carries). An entry logs it less
    /// what its ids say and what the plan re-derives ([`logged_payload`]).
    pub fn payload(&self) -> Value {
        let mut v = serde_json::to_value(self).expect("events serialise");
        if let Value::Object(m) = &mut v {
            m.remove("kind");
        }
        v
    }

    /// Reads an event back from an entry's kind and payload, the members its ids stand for
    /// included ([`payload_of_entry`]). Prefer [`event_of_entry`], which puts those back and
    /// decides which kinds are events.
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

/// Reads the game event an audit entry records (the whole entry as JSON: `kind`, `payload`).
/// `Ok(None)` for kinds that are not game events (the audit crate's `key_rotated`); an entry of
/// a game kind whose payload does not read back is an error. The one place where stored entries
/// become events again: the service's recovery, `pitboss replay` and the tests go through it.
pub fn event_of_entry(entry: &Value) -> Result<Option<Event>, String> {
    let kind = entry
        .get("kind")
        .and_then(Value::as_str)
        .ok_or("entry has no kind")?;
    if !Event::KINDS.contains(&kind) {
        return Ok(None);
    }
    if entry.get("payload").is_none() {
        return Err("entry has no payload".into());
    }
    Event::from_entry(kind, &payload_of_entry(entry)).map(Some)
}

/// The payload members of each kind that repeat one of the entry's ids (`bet`, `operator`,
/// `round`, `table`). An entry leaves such a member out when it equals the entry's id of the
/// same name, and [`payload_of_entry`] puts it back (audit/FORMAT.md 1.4). A kind not listed
/// here keeps every member in its payload.
pub fn id_members(kind: &str) -> &'static [&'static str] {
    match kind {
        "api_key_created" => &["operator"],
        "table_opened" => &["operator", "table"],
        "table_closed"
        | "player_disconnected"
        | "player_reconnected"
        | "shoe_shuffled"
        | "shoe_changed"
        | "table_action"
        | "seat_released" => &["table"],
        "round_opened" | "command_refused" => &["round", "table"],
        "bet_accepted" | "bet_refunded" | "decision_taken" => &["bet", "round"],
        "round_paused" | "round_resumed" | "bet_refused" | "betting_closed" | "spin_invalid"
        | "event_refused" | "result_recorded" | "round_settled" | "round_voided"
        | "round_settled_part" | "round_voided_part" | "card_dealt" | "misdeal"
        | "decisions_opened" | "decisions_closed" | "outcome_recorded" | "blackjack_input"
        | "payout_confirmed" => &["round"],
        _ => &[],
    }
}

/// Payload members an entry of `kind` leaves out because the plan re-derives them from the
/// rest of the payload: `bet_accepted`'s `placements`, which the plan's engine reads from its
/// `request` ([`State::apply`] does so when it applies the entry).
pub fn derived_members(kind: &str) -> &'static [&'static str] {
    match kind {
        "bet_accepted" => &["placements"],
        _ => &[],
    }
}

/// The payload an entry logs (audit/FORMAT.md 1.4): the event's payload ([`Event::payload`])
/// less each member of [`id_members`] that equals the entry's id of that name (`id` gives the
/// entry's ids by name), and less the [`derived_members`].
pub fn logged_payload<'a>(
    kind: &str,
    mut payload: Value,
    id: impl Fn(&str) -> Option<&'a str>,
) -> Value {
    if let Value::Object(m) = &mut payload {
        for k in id_members(kind) {
            if id(k).is_some_and(|v| m.get(*k).and_then(Value::as_str) == Some(v)) {
                m.remove(*k);
            }
        }
        for k in derived_members(kind) {
            m.remove(*k);
        }
    }
    payload
}

/// An entry's payload (the whole entry as JSON) with the members its ids stand for put back:
/// each member of [`id_members`] the payload lacks, from the entry's id of that name. An entry
/// written before ids were left out of payloads carries them, and reads unchanged.
pub fn payload_of_entry(entry: &Value) -> Value {
    let mut payload = entry.get("payload").cloned().unwrap_or(Value::Null);
    let kind = entry.get("kind").and_then(Value::as_str).unwrap_or("");
    if let Value::Object(m) = &mut payload {
        for k in id_members(kind) {
            let id = entry.get("ids").and_then(|ids| ids.get(*k));
            if let (false, Some(id)) = (m.contains_key(*k), id.and_then(Value::as_str)) {
                m.insert((*k).to_string(), Value::String(id.to_string()));
            }
        }
    }
    payload
}

impl Event {
    /// The event as [`event_of_entry`] reads it back from its entry: the [`derived_members`]
    /// are left for [`State::apply`] to derive.
    pub fn as_read_back(&self) -> Event {
        let mut e = self.clone();
        if let Event::BetAccepted { placements, .. } = &mut e {
            *placements = Value::Null;
        }
        e
    }
}

/// Most bytes of settlements (or refunds) one entry carries: half the largest entry the log
/// takes (audit/FORMAT.md 1.1), which leaves room for the rest of the entry.
pub const PART_BYTES: usize = 512 * 1024;

/// A settlement or void too large for one entry, as the entries that log it: the parts of
/// at most [`PART_BYTES`] each, in order, then the event itself with the last part (and the
/// round's totals, its seed). `None` when the event fits one entry as it is, or is of
/// another kind. [`State::apply`] of the parts and then the event is the apply of the whole
/// event; the writer applies the whole event and logs these.
pub fn in_parts(event: &Event) -> Option<Vec<Event>> {
    /// The list cut into runs of at most [`PART_BYTES`] (as JSON): every run but the last,
    /// and the last; `None` when it is one run.
    fn cut<T: Serialize + Clone>(items: &[T]) -> Option<(Vec<Vec<T>>, Vec<T>)> {
        let mut runs: Vec<Vec<T>> = vec![Vec::new()];
        let mut bytes = 0;
        for item in items {
            let len = serde_json::to_vec(item).map_or(0, |v| v.len()) + 1;
            if bytes + len > PART_BYTES && runs.last().is_some_and(|r| !r.is_empty()) {
                runs.push(Vec::new());
                bytes = 0;
            }
            bytes += len;
            runs.last_mut()
                .expect("one run at least")
                .push(item.clone());
        }
        let last = runs.pop().filter(|_| !runs.is_empty())?;
        Some((runs, last))
    }
    let (mut out, last) = match event {
        Event::RoundSettled {
            round, settlements, ..
        } => {
            let (runs, last) = cut(settlements)?;
            let parts = runs.into_iter().map(|settlements| Event::RoundSettledPart {
                round: round.clone(),
                settlements,
            });
            let mut last_event = event.clone();
            if let Event::RoundSettled { settlements, .. } = &mut last_event {
                *settlements = last;
            }
            (parts.collect::<Vec<_>>(), last_event)
        }
        Event::RoundVoided { round, refunds, .. } => {
            let (runs, last) = cut(refunds)?;
            let parts = runs.into_iter().map(|refunds| Event::RoundVoidedPart {
                round: round.clone(),
                refunds,
            });
            let mut last_event = event.clone();
            if let Event::RoundVoided { refunds, .. } = &mut last_event {
                *refunds = last;
            }
            (parts.collect::<Vec<_>>(), last_event)
        }
        _ => return None,
    };
    out.push(last);
    Some(out)
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
    /// Every bet this settlement covers, when it is more than `bet` (Casino Hold'em settles a
    /// player's hand: the Ante, side bets and the Call together).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bets: Vec<String>,
    /// The engine's reading of the hand (Casino Hold'em: result, hand ranks, qualification).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<crate::api::schemas::SettlementDetail>, nullable = false)]
    pub detail: Option<Value>,
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
    /// Betting is closed; the result or the cards are awaited.
    BettingClosed,
    /// The players decide (Casino Hold'em after the flop) until the decision deadline.
    Decisions,
    Settled,
    Voided,
}

impl std::fmt::Display for Phase {
    /// The phase for a message to a person: "round t1.1 is already settled".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Phase::Betting => "taking bets",
            Phase::BettingClosed => "closed to bets",
            Phase::Decisions => "awaiting the players' decisions",
            Phase::Settled => "settled",
            Phase::Voided => "voided",
        })
    }
}

/// A request's JSON text, as `serde_json` writes the value (a [`BetRecord`] holds it so): its
/// objects' members in key order (a `Value`'s map is ordered by key; a test holds the build
/// to that), which a bet's snapshot text relies on ([`BetView`]).
pub fn raw(v: &Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(v).expect("a JSON value serialises")
}

/// An accepted bet: the request as sent (without `player`) and where it lies.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct BetRecord {
    pub bet: String,
    pub player: String,
    // Held as its JSON text (the form `serde_json` writes a value in), not as a
    // `serde_json::Value`: a live round holds up to thousands of bets, and a parsed request
    // took ten allocations where its text takes one. Readers and snapshots get the same bytes.
    // (A comment, not documentation: the API's description of the member stays the request.)
    #[schema(value_type = crate::api::schemas::BetRecordRequest)]
    pub request: Box<RawValue>,
    pub placements: Placements,
    pub stake_minor: i64,
    /// The stake was returned before settlement (a disconnect before betting closed): the bet
    /// takes no further part in the round.
    pub refunded: bool,
    /// The bet's text in a state snapshot ([`BetRecord::snapshot_text`]).
    #[serde(skip)]
    #[schema(ignore)]
    pub(crate) snapshot: SnapshotText,
}

/// A bet as its snapshot text is written: its members, the request's text as it is. That
/// text is `serde_json`'s writing of a `Value` ([`raw`] makes every one), whose objects'
/// members are in key order already; written as it is, it is not parsed again to be put in
/// that order. Its members are declared in key order, which `sorted_json` then need not
/// restore.
#[derive(Serialize)]
struct BetView<'a> {
    bet: &'a String,
    placements: &'a Placements,
    player: &'a String,
    refunded: &'a bool,
    request: crate::sorted_json::Presorted<'a>,
    stake_minor: &'a i64,
}

impl<'a> BetView<'a> {
    fn of(b: &'a BetRecord) -> BetView<'a> {
        // Every field named: one added to `BetRecord` and not here is a compile error.
        let BetRecord {
            bet,
            player,
            request,
            placements,
            stake_minor,
            refunded,
            snapshot: _,
        } = b;
        BetView {
            bet,
            placements,
            player,
            refunded,
            request: crate::sorted_json::Presorted(request.get()),
            stake_minor,
        }
    }
}

/// A bet's JSON with every object's members in key order, as the state snapshot writes it
/// (`crate::sorted_json`; audit/FORMAT.md §10.1), made once, when the bet is placed
/// ([`State::apply`]): the writer takes no batch while it writes a snapshot, and writing every
/// live bet again was ≈ 90 % of that pause (`bench/RESULTS.md`, "twenty-fourth session");
/// the snapshot now copies each bet's text. Held with the `refunded` it was made with: a
/// refund, the one change a placed bet takes, makes it stale, and a stale text is not used
/// (a refunded bet is written afresh at each snapshot; refunds are rare). A clone starts empty (the text is made again when first asked for).
#[derive(Default)]
pub(crate) struct SnapshotText(std::sync::OnceLock<(bool, Box<str>)>);

impl Clone for SnapshotText {
    fn clone(&self) -> SnapshotText {
        SnapshotText::default()
    }
}

impl std::fmt::Debug for SnapshotText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SnapshotText")
    }
}

impl BetRecord {
    /// The bet's JSON as a state snapshot writes it: made on first use and kept (with the
    /// `refunded` it was made with: a refunded bet's older text is not used).
    pub(crate) fn snapshot_text(&self) -> std::borrow::Cow<'_, str> {
        let written = || {
            let bytes = crate::sorted_json::to_vec(&BetView::of(self)).expect("bets serialise");
            String::from_utf8(bytes)
                .expect("JSON is UTF-8")
                .into_boxed_str()
        };
        let (refunded, text) = self.snapshot.0.get_or_init(|| (self.refunded, written()));
        if *refunded == self.refunded {
            std::borrow::Cow::Borrowed(text)
        } else {
            std::borrow::Cow::Owned(written().into())
        }
    }
}

/// A player's decision, as the round holds it.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DecisionRecord {
    pub player: String,
    #[schema(value_type = crate::api::schemas::TakenDecisionValue)]
    pub decision: Value,
    /// Taken by the plan's rule (time-out or disconnect), not by the player.
    pub automatic: bool,
    /// The bet the decision placed (a Call).
    #[schema(required = true)]
    pub bet: Option<String>,
}

/// The table's shoe (live card games): which cards have come out since the last shuffle.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ShoeState {
    pub shoe: Shoe,
    /// Cards dealt since the last shuffle (misdealt cards included: they are not returned).
    pub cards_seen: u32,
    pub cards_left: u32,
    /// The shoe is kept from round to round (false: a fresh deck every round).
    pub persists: bool,
    #[serde(skip)]
    pub seen: std::collections::HashMap<Card, u16>,
}

impl ShoeState {
    fn new(shoe: Shoe, persists: bool) -> ShoeState {
        ShoeState {
            shoe,
            cards_seen: 0,
            cards_left: u32::try_from(shoe.total_cards()).unwrap_or(u32::MAX),
            persists,
            seen: Default::default(),
        }
    }

    fn reset(&mut self) {
        *self = ShoeState::new(self.shoe, self.persists);
    }

    /// Whether the shoe can still give `card`.
    fn holds(&self, card: Card) -> bool {
        let seen = self.seen.get(&card).copied().unwrap_or(0);
        seen < u16::from(self.shoe.copies_of(card))
    }

    fn take(&mut self, card: Card) {
        *self.seen.entry(card).or_default() += 1;
        self.cards_seen += 1;
        self.cards_left = self.cards_left.saturating_sub(1);
    }
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
    /// Card games: the cards dealt so far, in dealing order (after the last misdeal).
    pub cards: Vec<CardRecord>,
    /// Card games: the result read from the complete deal.
    #[schema(required = true, value_type = Option<crate::api::schemas::CardGameOutcome>)]
    pub outcome: Option<Value>,
    /// Card games: deals voided and dealt again.
    pub misdeals: u32,
    /// Players' decisions (Casino Hold'em), in the order taken.
    pub decisions: Vec<DecisionRecord>,
    /// The players who still owe a decision, while the decision time runs.
    pub decisions_pending: Vec<String>,
    #[schema(required = true)]
    pub decision_deadline: Option<DateTime<Utc>>,
    /// The decision time is over (or the game has none yet to come).
    pub decisions_closed: bool,
    #[schema(required = true)]
    pub settlements: Option<Vec<BetSettlement>>,
    #[schema(required = true)]
    pub refunds: Option<Vec<Refund>>,
    /// Blackjack, from the first card: every box with its hands, the dealer's hand, and what
    /// the round awaits (`expected`: the next step, who owes which decision, the legal ones).
    #[schema(required = true)]
    pub blackjack: Option<BlackjackRound>,
    /// The round's bets by player, for the checks each new bet makes against the player's
    /// earlier ones (not serialised: built from `bets` as far as it has grown).
    #[serde(skip)]
    #[schema(ignore)]
    by_player: BetIndex,
}

/// The positions in a round's `bets` of each player's bets. `bets` only grows (a refund
/// marks a bet, nothing removes one), so the index is brought up to date by reading the bets
/// added since it last looked; a clone starts empty and is built again when first asked.
#[derive(Default)]
struct BetIndex(std::sync::Mutex<(usize, std::collections::HashMap<String, Vec<u32>>)>);

impl Clone for BetIndex {
    fn clone(&self) -> BetIndex {
        BetIndex::default()
    }
}

impl std::fmt::Debug for BetIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BetIndex")
    }
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
    /// Card games in live mode: the shoe as the dealt cards have used it.
    #[schema(required = true)]
    pub shoe: Option<ShoeState>,
    /// Player-versus-player tables: the seats, stacks, bank or pots and the hand in play, as
    /// the family's engine keeps them.
    #[schema(required = true, value_type = Option<crate::api::schemas::PvpState>)]
    pub game: Option<PvpState>,
    /// Player-versus-player tables: what the table waits for (whose turn, the legal acts and
    /// amounts, which cards).
    #[schema(required = true, value_type = Option<crate::api::schemas::PvpExpected>)]
    pub expected: Option<Value>,
    /// Player-versus-player tables: actions applied so far.
    pub actions: u64,
    /// Player-versus-player tables: when the last action was applied (the time a player
    /// owing the next act has had starts then).
    #[schema(required = true)]
    pub last_action_at: Option<DateTime<Utc>>,
    /// Blackjack tables whose plan removes a player after rounds without a bet: the players
    /// at the table, each with the rounds in a row he has not bet.
    pub seated: BTreeMap<String, u32>,
    #[serde(skip)]
    pub loaded: Arc<LoadedPlan>,
}

/// A round as stored once finished: the JSON it serialises to, read back. Placements are
/// read with the family of the round's plan (their JSON shape is the family's).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredRound {
    round: String,
    table: String,
    number: u64,
    phase: Phase,
    opened_at: DateTime<Utc>,
    betting_deadline: DateTime<Utc>,
    rng_commitment: Option<String>,
    bets: Vec<StoredBet>,
    result: Option<u8>,
    invalid_spins: u32,
    cards: Vec<CardRecord>,
    outcome: Option<Value>,
    misdeals: u32,
    decisions: Vec<DecisionRecord>,
    decisions_pending: Vec<String>,
    decision_deadline: Option<DateTime<Utc>>,
    decisions_closed: bool,
    settlements: Option<Vec<BetSettlement>>,
    refunds: Option<Vec<Refund>>,
    blackjack: Option<BlackjackRound>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredBet {
    bet: String,
    player: String,
    request: Value,
    placements: Value,
    stake_minor: i64,
    refunded: bool,
}

impl RoundState {
    /// Reads back a round from the JSON it serialises to (a finished round kept in the store).
    pub fn from_stored(family: Family, v: &str) -> Result<RoundState, String> {
        let r: StoredRound = serde_json::from_str(v).map_err(|e| format!("stored round: {e}"))?;
        RoundState::from_parts(family, r)
    }

    /// [`RoundState::from_stored`] from a JSON value (a snapshot's round).
    pub fn from_stored_value(family: Family, v: Value) -> Result<RoundState, String> {
        let r: StoredRound = serde_json::from_value(v).map_err(|e| format!("stored round: {e}"))?;
        RoundState::from_parts(family, r)
    }

    fn from_parts(family: Family, r: StoredRound) -> Result<RoundState, String> {
        let bets = r
            .bets
            .into_iter()
            .map(|b| {
                Ok(BetRecord {
                    placements: Placements::parse(family, &b.placements)?,
                    bet: b.bet,
                    player: b.player,
                    request: raw(&b.request),
                    stake_minor: b.stake_minor,
                    refunded: b.refunded,
                    snapshot: SnapshotText::default(),
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(RoundState {
            round: r.round,
            table: r.table,
            number: r.number,
            phase: r.phase,
            opened_at: r.opened_at,
            betting_deadline: r.betting_deadline,
            rng_commitment: r.rng_commitment,
            bets,
            result: r.result,
            invalid_spins: r.invalid_spins,
            cards: r.cards,
            outcome: r.outcome,
            misdeals: r.misdeals,
            decisions: r.decisions,
            decisions_pending: r.decisions_pending,
            decision_deadline: r.decision_deadline,
            decisions_closed: r.decisions_closed,
            settlements: r.settlements,
            refunds: r.refunds,
            blackjack: r.blackjack,
            by_player: BetIndex::default(),
        })
    }

    /// The placements of `player`'s bets that stand (not refunded), in the order placed: one
    /// look-up, however many bets the round holds.
    fn standing_placements_of(&self, player: &str) -> Vec<&Placements> {
        let mut index = self.by_player.0.lock().expect("bet index lock");
        let (seen, by_player) = &mut *index;
        for (i, b) in self.bets.iter().enumerate().skip(*seen) {
            by_player
                .entry(b.player.clone())
                .or_default()
                .push(u32::try_from(i).expect("a round holds fewer bets than u32::MAX"));
        }
        *seen = self.bets.len();
        by_player.get(player).map_or_else(Vec::new, |at| {
            at.iter()
                .map(|&i| &self.bets[i as usize])
                .filter(|b| !b.refunded)
                .map(|b| &b.placements)
                .collect()
        })
    }

    /// Settled or voided: nothing changes it any more.
    pub fn is_finished(&self) -> bool {
        matches!(self.phase, Phase::Settled | Phase::Voided)
    }
}

/// The whole domain state: rebuilt from the log at start.
#[derive(Debug, Clone, Default)]
pub struct State {
    pub tables: BTreeMap<String, TableState>,
    pub rounds: BTreeMap<String, RoundState>,
    /// Plan hashes already logged as `plan_loaded`.
    pub plans_logged: BTreeMap<String, String>,
    /// Approvals of plan versions by reference (`plan_approved`, `plan_approval_withdrawn`).
    pub approvals: BTreeMap<String, regulator::Approval>,
    /// Rounds paused by a reported error, until resumed or finished (`round_paused`).
    pub paused: BTreeMap<String, regulator::Pause>,
    /// Tables' registration numbers and dealing devices, by table (`table_opened`).
    pub registrations: BTreeMap<String, regulator::Registration>,
}

fn refuse(code: &str, message: impl Into<String>) -> Refusal {
    Refusal::new(code, message)
}

/// The engine of a plan's family (see [`game`]).
fn engine(plan: &LoadedPlan) -> Result<Engine<'_>, Refusal> {
    Engine::new(&plan.plan)
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

/// The separator of a scoped id: `<operator>:<table>`. Neither an operator's nor a table's id
/// can hold it (see [`check_id`]), so a scoped id names exactly one operator's table.
pub const SCOPE: char = ':';

/// The id the log gives a table an operator names `name`: `<operator>:<name>`. Table ids are
/// scoped to their operator (issue 17): two operators may both name a table `t1`, and neither
/// learns of the other's. Its rounds are `<operator>:<name>.<number>`, their bets
/// `<operator>:<name>.<number>.<index>`. Tables opened before ids were scoped keep the bare
/// name they were logged with; the writer's `resolve_names` finds them by it.
pub fn scoped_table(operator: &str, name: &str) -> String {
    format!("{operator}{SCOPE}{name}")
}

/// An id as an operator names it (`t1`, `t1.3`, `t1.3.2`) in that operator's scope; an id
/// already scoped (holding [`SCOPE`]) is kept as it is.
pub fn scoped(operator: &str, id: &str) -> String {
    if id.contains(SCOPE) {
        id.to_string()
    } else {
        scoped_table(operator, id)
    }
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

    fn family_of_round(&self, round: &str) -> Result<Family, String> {
        let r = self.rounds.get(round).ok_or("event of an unknown round")?;
        Ok(self.tables[&r.table].loaded.plan.plan.family)
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
        let name = table;
        let table = &scoped_table(operator, name);
        let r: crate::plan::PlanRef = plan_ref
            .parse()
            .map_err(|e: crate::plan::model::PlanRefError| refuse("bad_plan_ref", e.to_string()))?;
        let loaded = plans
            .get(&r)
            .ok_or_else(|| refuse("plan_not_found", format!("no plan {r} is loaded")))?;
        match PvpEngine::new(&loaded.plan) {
            Some(pvp) => {
                pvp?;
                // Cards at these tables are dealt by people and reported as actions.
                if mode != Mode::Live {
                    return Err(refuse(
                        "mode_not_supported",
                        format!(
                            "{} tables are played live: the dealer system reports every card as an action",
                            loaded.key()
                        ),
                    ));
                }
            }
            None => {
                engine(loaded)?;
            }
        }
        if !loaded.plan.plan.modes.contains(&mode) {
            return Err(refuse(
                "mode_not_allowed",
                format!("{} does not allow {mode} mode", loaded.key()),
            )
            .with_plan(&loaded.key())
            .clause(
                loaded
                    .plan
                    .plan
                    .modes_clause
                    .clone()
                    .unwrap_or_else(|| "plan.modes".into()),
            ));
        }
        // The operator's own table of that name: scoped, or logged bare before ids were
        // scoped. Another operator's table of the same name is no concern of this one.
        if self.tables.contains_key(table)
            || self
                .tables
                .get(name)
                .is_some_and(|t| t.operator == operator)
        {
            return Err(refuse(
                "table_exists",
                format!("table {name} already exists"),
            ));
        }
        // Every admitted plan was logged (`plan_loaded`) when the service started.
        Ok(vec![Event::TableOpened {
            table: table.to_string(),
            operator: operator.to_string(),
            plan: loaded.key(),
            plan_sha256: loaded.hash.clone(),
            mode,
            registration: None,
            device: None,
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
        if t.game.is_some() {
            return Err(refuse(
                game::code::NOT_IN_GAME,
                format!(
                    "table {table} is played between players: post its actions (POST /v1/tables/{table}/actions), it has no rounds"
                ),
            ));
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
        let number = t.rounds + 1;
        Ok(vec![Event::RoundOpened {
            round: round_id(table, number),
            table: table.to_string(),
            number,
            opened_at: now,
            betting_deadline: after_ms(now, t.loaded.plan.policies.timing.betting_window_ms),
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
        self.decide_bets_guarded(operator, round, now, bets, &mut |_, _| Ok(()))
    }

    /// [`State::decide_bets`], each bet the plan accepts put last to `guard` with its player
    /// and stake (the player register, 002 § 6): a bet it refuses is logged refused.
    pub fn decide_bets_guarded(
        &self,
        operator: &str,
        round: &str,
        now: DateTime<Utc>,
        bets: &[(String, Value)],
        guard: &mut dyn FnMut(&str, i64) -> Result<(), Refusal>,
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
        let mut accepted: Vec<(&str, Placements)> = Vec::new();
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
            let placements = match eng.place(request) {
                Ok(p) => p,
                Err(e) => {
                    events.push(refused(e.with_plan(&plan.key())));
                    continue;
                }
            };
            let existing = r.standing_placements_of(player).into_iter().chain(
                accepted
                    .iter()
                    .filter(|(p, _)| p == player)
                    .map(|(_, ps)| ps),
            );
            if let Err(e) = eng.check_round(existing, &placements) {
                events.push(refused(e.with_plan(&plan.key())));
                continue;
            }
            // Blackjack: a box, its owner and its Bets Behind are a matter of the whole round.
            if let (Engine::Blackjack(bj), Placements::Blackjack(new)) = (&eng, &placements) {
                let others = r
                    .bets
                    .iter()
                    .filter(|b| !b.refunded)
                    .map(|b| (b.player.as_str(), &b.placements))
                    .chain(accepted.iter().map(|(p, ps)| (*p, ps)))
                    .filter_map(|(p, ps)| match ps {
                        Placements::Blackjack(v) => Some((p, &v[0])),
                        _ => None,
                    });
                if let Err(e) = blackjack::check_round(bj, others, player, &new[0]) {
                    events.push(refused(e.with_plan(&plan.key())));
                    continue;
                }
            }
            let stake_minor = placements.stake_minor();
            if let Err(e) = guard(player, stake_minor) {
                events.push(refused(e));
                continue;
            }
            let bet = bet_id(round, next_index);
            next_index += 1;
            events.push(Event::BetAccepted {
                bet,
                round: round.to_string(),
                player: player.clone(),
                request: request.clone(),
                placements: placements.to_value(),
                stake_minor,
            });
            accepted.push((player, placements));
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
                format!("round {round} is {other}: betting is not open"),
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
                    "table {} is in {} mode: results come from {}",
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
                    format!("round {round} is already {other}"),
                ))
            }
        }
        let plan = self.plan_of_round(r);
        let eng = engine(&plan)?;
        let Some(wheel) = eng.roulette() else {
            return Err(refuse(
                game::code::NOT_IN_GAME,
                format!(
                    "{} rounds are dealt, not spun: post the cards (live) or a deal (RNG)",
                    eng.family()
                ),
            ));
        };
        wheel
            .validate_result(number)
            .map_err(|e| e.with_plan(&plan.key()))?;
        if let SpinValidity::Respin { reason, .. } =
            wheel.spin_validity(ball_against_rotation, ball_revolutions)
        {
            return Ok(vec![Event::SpinInvalid {
                round: round.to_string(),
                ball_against_rotation,
                ball_revolutions,
                reason,
            }]);
        }
        let settlements = settle_round(&eng, &r.bets, &r.cards, Some(number), None)
            .map_err(|e| e.with_plan(&plan.key()))?;
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

    // ----- card games ------------------------------------------------------------------

    /// Live mode: cards reported by the dealer system, in dealing order. Either every card of
    /// the request is accepted or none is: a card the rules or the shoe refuse leaves the round
    /// as it was (paused under the plan's error policy: the dealer system repairs by
    /// reporting the right card, or the operator voids the round and every stake is
    /// returned), except where the plan re-deals a misdeal (Top Card): then the deal so far is
    /// void and dealt again, and the bets stand. A deal that completes is read and settled.
    pub fn decide_cards(
        &self,
        operator: &str,
        round: &str,
        now: DateTime<Utc>,
        cards: &[game::ReportedCard],
    ) -> Result<Vec<Event>, Refusal> {
        let r = self.round_of_operator(operator, round)?;
        let table = &self.tables[&r.table];
        if table.mode != Mode::Live {
            return Err(refuse(
                "wrong_mode",
                format!(
                    "table {} is in RNG mode: pitboss deals from the committed seed (post a deal)",
                    r.table
                ),
            ));
        }
        if cards.is_empty() || cards.len() > MAX_CARDS_PER_REQUEST {
            return Err(refuse(
                "bad_card_count",
                format!(
                    "a request carries 1–{MAX_CARDS_PER_REQUEST} cards, not {}",
                    cards.len()
                ),
            ));
        }
        let plan = self.plan_of_round(r);
        let eng = engine(&plan)?;
        self.check_dealing(r, &eng)?;
        if let Engine::Blackjack(bj) = &eng {
            if let Some(c) = cards.iter().find(|c| c.to.is_some()) {
                return Err(refuse(
                    game::code::BAD_POSITION,
                    format!(
                        "blackjack cards are reported in dealing order without a position: the rules place each ({} was sent with one)",
                        c.card
                    ),
                ));
            }
            let cards: Vec<Card> = cards.iter().map(|c| c.card).collect();
            return self
                .decide_blackjack_cards(r, bj, now, blackjack::CardsFrom::Live(&cards))
                .map(|mut events| {
                    events.extend(self.after_blackjack_round(r, &events));
                    events
                });
        }
        let cards = cards
            .iter()
            .map(|c| match c.to {
                Some(to) => Ok(CardRecord { to, card: c.card }),
                None => Err(refuse(
                    game::code::BAD_POSITION,
                    format!("card {} names no position (\"to\")", c.card),
                )),
            })
            .collect::<Result<Vec<CardRecord>, Refusal>>()?;
        let (mut deal, mut events) = self.start_dealing(r, table, &eng, now)?;
        for (i, c) in cards.iter().enumerate() {
            match deal.accept(&eng, &plan, *c) {
                Ok(()) => events.push(Event::CardDealt {
                    round: round.to_string(),
                    to: c.to,
                    card: c.card,
                    source: Mode::Live,
                }),
                Err(e) => {
                    let e = e.with_plan(&plan.key());
                    // A position the game does not have is a malformed report of the dealer
                    // system, not a card dealt wrongly: refused, never a re-deal that would
                    // void the cards already (rightly) dealt.
                    let redeal = (e.code != game::code::BAD_POSITION)
                        .then(|| eng.redeals_misdeals(&plan.plan))
                        .flatten();
                    if let Some(clause) = redeal {
                        // "krupiér vyhlásí opakované rozdání": every card of this deal,
                        // including the refused one, is discarded.
                        let mut discarded = r.cards.clone();
                        discarded.extend_from_slice(&cards[..=i]);
                        return Ok(vec![Event::Misdeal {
                            round: round.to_string(),
                            reason: format!("card {} of the request: {}", i + 1, e.message),
                            clause,
                            discarded,
                        }]);
                    }
                    return Err(Refusal {
                        message: format!(
                            "card {} of the request ({} to {}): {}. Nothing of this request is recorded; the round is paused under the plan's error policy ({}): report the right card, or void the round to return every stake",
                            i + 1,
                            c.card,
                            c.to.name(),
                            e.message,
                            plan.plan.policies.error.clause
                        ),
                        ..e
                    });
                }
            }
        }
        events.extend(self.after_cards(r, &eng, &plan, &deal, now, Mode::Live, None)?);
        Ok(events)
    }

    /// RNG mode: deals from the round's committed seed up to the next decision or to the end
    /// of the round, and settles a complete round (revealing the seed).
    pub fn decide_rng_deal(
        &self,
        operator: &str,
        round: &str,
        now: DateTime<Utc>,
        seed: [u8; 32],
    ) -> Result<Vec<Event>, Refusal> {
        let r = self.round_of_operator(operator, round)?;
        let table = &self.tables[&r.table];
        if table.mode != Mode::Rng {
            return Err(refuse(
                "wrong_mode",
                format!(
                    "table {} is in live mode: the dealer system reports the cards",
                    r.table
                ),
            ));
        }
        let plan = self.plan_of_round(r);
        let eng = engine(&plan)?;
        self.check_dealing(r, &eng)?;
        if let Engine::Blackjack(bj) = &eng {
            return self
                .decide_blackjack_cards(r, bj, now, blackjack::CardsFrom::Seed(seed))
                .map(|mut events| {
                    events.extend(self.after_blackjack_round(r, &events));
                    events
                });
        }
        let all = eng.rng_cards(seed);
        if all.get(..r.cards.len()) != Some(&r.cards[..]) {
            return Err(refuse(
                "rng_mismatch",
                format!("the cards of round {round} are not the deal of its committed seed"),
            ));
        }
        let (mut deal, mut events) = self.start_dealing(r, table, &eng, now)?;
        let seed_hex = crate::plan::canonical::hex(&seed);
        loop {
            match eng
                .next(&deal.cards, deal.decisions_closed)
                .map_err(|e| e.with_plan(&plan.key()))?
            {
                Next::Card { .. } => {
                    let Some(c) = all.get(deal.cards.len()).copied() else {
                        return Err(refuse(
                            "rng_exhausted",
                            format!("the deal of round {round}'s seed has no further card"),
                        ));
                    };
                    deal.accept(&eng, &plan, c)
                        .map_err(|e| e.with_plan(&plan.key()))?;
                    events.push(Event::CardDealt {
                        round: round.to_string(),
                        to: c.to,
                        card: c.card,
                        source: Mode::Rng,
                    });
                }
                Next::Decisions | Next::Complete => {
                    let after = self.after_cards(
                        r,
                        &eng,
                        &plan,
                        &deal,
                        now,
                        Mode::Rng,
                        Some(seed_hex.clone()),
                    )?;
                    // Nobody owes a decision (a Call Blind, or every player disconnected):
                    // the deal goes on at once.
                    let closed_at_once = after
                        .iter()
                        .any(|e| matches!(e, Event::DecisionsClosed { .. }));
                    events.extend(after);
                    if !closed_at_once {
                        break;
                    }
                    deal.decisions_closed = true;
                }
            }
        }
        Ok(events)
    }

    /// The deal as a request finds it; a card or deal during the decision time first ends it
    /// (refused while it runs and a player has yet to decide).
    fn start_dealing(
        &self,
        r: &RoundState,
        table: &TableState,
        eng: &Engine<'_>,
        now: DateTime<Utc>,
    ) -> Result<(DealInProgress, Vec<Event>), Refusal> {
        let mut deal = DealInProgress::of(r, table);
        let mut events = Vec::new();
        if r.phase == Phase::Decisions {
            events.extend(self.close_decisions(r, table, eng, now)?);
            deal.decisions_closed = true;
        }
        Ok((deal, events))
    }

    fn check_dealing(&self, r: &RoundState, eng: &Engine<'_>) -> Result<(), Refusal> {
        if !eng.deals_cards() {
            return Err(refuse(
                game::code::NOT_IN_GAME,
                format!("{} rounds are spun, not dealt", eng.family()),
            ));
        }
        match r.phase {
            Phase::BettingClosed | Phase::Decisions => Ok(()),
            Phase::Betting => Err(refuse(
                "betting_open",
                format!(
                    "round {} is still taking bets: close betting before the deal",
                    r.round
                ),
            )),
            other => Err(refuse(
                "out_of_order",
                format!("round {} is already {other}", r.round),
            )),
        }
    }

    /// What follows the cards of a request: the decision time, or the outcome and the
    /// settlement of a complete deal.
    #[allow(clippy::too_many_arguments)]
    fn after_cards(
        &self,
        r: &RoundState,
        eng: &Engine<'_>,
        plan: &LoadedPlan,
        deal: &DealInProgress,
        now: DateTime<Utc>,
        source: Mode,
        rng_seed: Option<String>,
    ) -> Result<Vec<Event>, Refusal> {
        let round = r.round.clone();
        let with_plan = |e: Refusal| e.with_plan(&plan.key());
        match eng
            .next(&deal.cards, deal.decisions_closed)
            .map_err(with_plan)?
        {
            Next::Card { .. } => Ok(Vec::new()),
            Next::Decisions => {
                let players = self.players_owing_decisions(r, eng);
                // A disconnected player is not decided for at once: "Pokud v daném čase není
                // zvolena žádná možnost ať už z důvodu odpojení nebo nepřítomnosti sázejícího,
                // označí se po uplynutí času na rozhodnutí volba Položit" — the automatic
                // decision comes when the time runs out, and a player who reconnects in time
                // still decides.
                let nobody_decides = players.is_empty();
                let mut events = vec![Event::DecisionsOpened {
                    round: round.clone(),
                    deadline: after_ms(now, eng.decision_ms().unwrap_or(0)),
                    players,
                }];
                if nobody_decides {
                    events.push(Event::DecisionsClosed {
                        round,
                        at: now,
                        reason: "all_decided".into(),
                    });
                }
                Ok(events)
            }
            Next::Complete => {
                let outcome = eng.outcome(&deal.cards).map_err(with_plan)?;
                let settlements =
                    settle_round(eng, &r.bets, &deal.cards, None, None).map_err(with_plan)?;
                let stake_minor = settlements.iter().map(|s| s.stake_minor).sum();
                let paid_minor = settlements.iter().map(|s| s.total_minor).sum();
                Ok(vec![
                    Event::OutcomeRecorded {
                        round: round.clone(),
                        outcome,
                        source,
                    },
                    Event::RoundSettled {
                        round,
                        settlements,
                        stake_minor,
                        paid_minor,
                        rng_seed,
                    },
                ])
            }
        }
    }

    /// Players whose bets owe a decision, in the order of their first bet.
    fn players_owing_decisions(&self, r: &RoundState, eng: &Engine<'_>) -> Vec<String> {
        let mut players: Vec<&str> = Vec::new();
        for b in r.bets.iter().filter(|b| !b.refunded) {
            if !players.contains(&b.player.as_str()) {
                players.push(&b.player);
            }
        }
        players
            .into_iter()
            .filter(|p| {
                eng.decision_required(
                    r.bets
                        .iter()
                        .filter(|b| !b.refunded && b.player == *p)
                        .map(|b| &b.placements),
                )
            })
            .map(str::to_string)
            .collect()
    }

    /// Ends the decision time: the plan's automatic decision for every player who has not
    /// decided. Refused while the time runs and a player has yet to decide.
    fn close_decisions(
        &self,
        r: &RoundState,
        table: &TableState,
        eng: &Engine<'_>,
        now: DateTime<Utc>,
    ) -> Result<Vec<Event>, Refusal> {
        let deadline = r.decision_deadline.unwrap_or(now);
        // Disconnected players are waited for too: their automatic decision comes when the
        // time runs out, and they may reconnect and decide before.
        let waiting = &r.decisions_pending;
        if now < deadline && !waiting.is_empty() {
            return Err(refuse(
                "decisions_open",
                format!(
                    "the players decide until {deadline}; {} still to decide: {}",
                    waiting.len(),
                    waiting.join(", ")
                ),
            )
            .clause(timeout_clause(&self.plan_of_round(r))));
        }
        let decision = eng.automatic_decision().unwrap_or(Value::Null);
        let mut events: Vec<Event> = r
            .decisions_pending
            .iter()
            .map(|p| {
                let why = if table.disconnected.contains(p) {
                    "disconnected"
                } else {
                    "time_out"
                };
                automatic_decision(&r.round, p, &decision, why)
            })
            .collect();
        events.push(Event::DecisionsClosed {
            round: r.round.clone(),
            at: now.min(deadline),
            reason: if now >= deadline {
                "deadline"
            } else {
                "dealer"
            }
            .into(),
        });
        Ok(events)
    }

    /// The players' decisions (Casino Hold'em: call or fold), each taken or refused on its
    /// own. A call places the Call (`call_multiple` × the Ante) as a further bet.
    pub fn decide_decisions(
        &self,
        operator: &str,
        round: &str,
        now: DateTime<Utc>,
        decisions: &[(String, Value)],
        rng_seed: Option<[u8; 32]>,
    ) -> Result<Vec<Event>, Refusal> {
        let r = self.round_of_operator(operator, round)?;
        let table = &self.tables[&r.table];
        if decisions.is_empty() || decisions.len() > MAX_BETS_PER_REQUEST {
            return Err(refuse(
                "bad_decision_count",
                format!(
                    "a request carries 1–{MAX_BETS_PER_REQUEST} decisions, not {}",
                    decisions.len()
                ),
            ));
        }
        if r.phase != Phase::Decisions {
            return Err(refuse(
                "out_of_order",
                format!("round {round} is {}: no decision is open", r.phase),
            ));
        }
        let plan = self.plan_of_round(r);
        let eng = engine(&plan)?;
        if let Engine::Blackjack(bj) = &eng {
            return self
                .decide_blackjack_decisions(r, bj, now, decisions, rng_seed)
                .map(|mut events| {
                    events.extend(self.after_blackjack_round(r, &events));
                    events
                });
        }
        let deadline = r.decision_deadline.unwrap_or(now);
        let mut pending = r.decisions_pending.clone();
        let mut next_index = r.bets.len();
        let mut events = Vec::new();
        for (player, decision) in decisions {
            let refused = |refusal: Refusal| Event::EventRefused {
                round: round.to_string(),
                event: serde_json::json!({"type": "decision", "player": player, "decision": decision}),
                refusal: refusal.with_plan(&plan.key()),
            };
            if now > deadline {
                events.push(refused(
                    refuse(
                        "decision_too_late",
                        format!(
                            "the decision time ended at {deadline}: the plan decides for {player} ({})",
                            eng.automatic_decision().unwrap_or(Value::Null)
                        ),
                    )
                    .clause(timeout_clause(&plan)),
                ));
                continue;
            }
            if !pending.contains(player) {
                events.push(refused(
                    refuse(
                        "no_decision_owed",
                        format!("{player} owes no decision in round {round} (decided already, or holds no bet that needs one)"),
                    )
                    .clause(eng.dealing_clause(&plan.plan).unwrap_or_default()),
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
            let mine = r
                .bets
                .iter()
                .filter(|b| !b.refunded && &b.player == player)
                .map(|b| &b.placements);
            match eng.decide(mine, &r.cards, decision) {
                Ok(placed) => {
                    let (bet, stake_minor) = match &placed {
                        Some(p) => {
                            let id = bet_id(round, next_index);
                            next_index += 1;
                            (Some(id), p.stake_minor())
                        }
                        None => (None, 0),
                    };
                    pending.retain(|p| p != player);
                    events.push(Event::DecisionTaken {
                        round: round.to_string(),
                        player: player.clone(),
                        decision: decision.clone(),
                        automatic: false,
                        reason: None,
                        bet,
                        placements: placed.map(|p| p.to_value()),
                        stake_minor,
                    });
                }
                Err(e) => events.push(refused(e)),
            }
        }
        if pending.is_empty() {
            events.push(Event::DecisionsClosed {
                round: round.to_string(),
                at: now,
                reason: "all_decided".into(),
            });
        }
        Ok(events)
    }

    /// Ends the decision time (the dealer system's word once the deadline has passed, or once
    /// every player has decided).
    pub fn decide_close_decisions(
        &self,
        operator: &str,
        round: &str,
        now: DateTime<Utc>,
        rng_seed: Option<[u8; 32]>,
    ) -> Result<Vec<Event>, Refusal> {
        let r = self.round_of_operator(operator, round)?;
        if r.phase != Phase::Decisions {
            return Err(refuse(
                "out_of_order",
                format!("round {round} is {}: no decision is open", r.phase),
            ));
        }
        let plan = self.plan_of_round(r);
        let eng = engine(&plan)?;
        if let Engine::Blackjack(bj) = &eng {
            return self
                .decide_blackjack_close(r, bj, now, rng_seed)
                .map(|mut events| {
                    events.extend(self.after_blackjack_round(r, &events));
                    events
                });
        }
        self.close_decisions(r, &self.tables[&r.table], &eng, now)
    }

    /// The dealer system declares a misdeal (a card damaged, dealt incorrectly or not clearly
    /// visible): where the plan re-deals, the deal so far is void and dealt again.
    pub fn decide_misdeal(
        &self,
        operator: &str,
        round: &str,
        reason: &str,
    ) -> Result<Vec<Event>, Refusal> {
        let r = self.round_of_operator(operator, round)?;
        if reason.trim().is_empty() || reason.len() > 500 {
            return Err(refuse(
                "bad_reason",
                "a misdeal states its reason (1–500 characters)",
            ));
        }
        let table = &self.tables[&r.table];
        if table.mode != Mode::Live {
            return Err(refuse(
                "wrong_mode",
                "an RNG deal has no misdeal: pitboss deals it",
            ));
        }
        let plan = self.plan_of_round(r);
        let eng = engine(&plan)?;
        self.check_dealing(r, &eng)?;
        let Some(clause) = eng.redeals_misdeals(&plan.plan) else {
            return Err(refuse(
                "misdeal_not_in_plan",
                format!(
                    "{} does not re-deal: under its error policy the round is repaired (report the right cards) or voided (every stake returned)",
                    plan.key()
                ),
            )
            .with_plan(&plan.key())
            .clause(plan.plan.policies.error.clause.clone()));
        };
        Ok(vec![Event::Misdeal {
            round: round.to_string(),
            reason: reason.to_string(),
            clause,
            discarded: r.cards.clone(),
        }])
    }

    /// The dealer shuffles the table's shoe, or replaces it. Not in the middle of a deal.
    pub fn decide_shoe(
        &self,
        operator: &str,
        table: &str,
        change: bool,
    ) -> Result<Vec<Event>, Refusal> {
        let t = self.table_of_operator(operator, table)?;
        let Some(shoe) = &t.shoe else {
            return Err(refuse(
                "no_shoe",
                format!(
                    "table {table} keeps no shoe: it is an RNG table (each round a freshly shuffled shoe) or its game deals no cards"
                ),
            ));
        };
        if let Some(current) = &t.current_round {
            let r = &self.rounds[current];
            if !r.cards.is_empty() || r.blackjack.is_some() {
                return Err(refuse(
                    "out_of_order",
                    format!("round {current} is being dealt: the shoe is shuffled between rounds"),
                ));
            }
        }
        let (table, cards_seen) = (table.to_string(), shoe.cards_seen);
        Ok(vec![if change {
            Event::ShoeChanged { table, cards_seen }
        } else {
            Event::ShoeShuffled { table, cards_seen }
        }])
    }

    /// Voids a round under the plan's error policy: every accepted stake is returned. An RNG
    /// round's seed (`rng_seed`, from the service's secret store) is revealed in the void.
    pub fn decide_void(
        &self,
        operator: &str,
        round: &str,
        reason: &str,
        rng_seed: Option<[u8; 32]>,
    ) -> Result<Vec<Event>, Refusal> {
        let r = self.round_of_operator(operator, round)?;
        if matches!(r.phase, Phase::Settled | Phase::Voided) {
            return Err(refuse(
                "out_of_order",
                format!("round {round} is already {}", r.phase),
            ));
        }
        if reason.trim().is_empty() || reason.len() > 500 {
            return Err(refuse(
                "bad_reason",
                "a void states its reason (1–500 characters)",
            ));
        }
        let void = vec![void_event(r, reason, rng_seed.as_ref())];
        let seats = self.after_blackjack_round(r, &void);
        Ok(void.into_iter().chain(seats).collect())
    }

    /// Closes a table; a round still open is voided, revealing its RNG seed (`rng_seed`, the
    /// open round's) as [`State::decide_void`] does.
    pub fn decide_close_table(
        &self,
        operator: &str,
        table: &str,
        reason: &str,
        rng_seed: Option<[u8; 32]>,
    ) -> Result<Vec<Event>, Refusal> {
        let t = self.table_of_operator(operator, table)?;
        if !t.open {
            return Err(refuse(
                "table_closed",
                format!("table {table} is already closed"),
            ));
        }
        if let (Some(game), Ok(Some(pvp))) = (&t.game, PvpEngine::new(&t.loaded.plan).transpose()) {
            let chips = pvp.chips_at_table_minor(game);
            if chips != 0 {
                let chips = i64::try_from(chips).map_or_else(
                    |_| format!("{chips} minor units"),
                    |c| crate::money::Money::new(c, t.loaded.plan.plan.currency).to_string(),
                );
                return Err(refuse(
                    "chips_at_table",
                    format!(
                        "{chips} of chips are still at table {table}: the players cash out (or the table's closing action pays them) before it closes"
                    ),
                ));
            }
        }
        let mut events = Vec::new();
        // A table closed with a round open returns every stake of that round (the plans' error
        // and table-closure policies: "sázející obdrží žetony ve výši své původní sázky").
        if let Some(current) = &t.current_round {
            events.push(void_event(
                &self.rounds[current],
                "table closed",
                rng_seed.as_ref(),
            ));
        }
        events.push(Event::TableClosed {
            table: table.to_string(),
            reason: reason.to_string(),
            actor: None,
        });
        Ok(events)
    }

    /// A player's connection lost or regained. A loss while betting is open returns the
    /// player's stakes where the plan says so (SYNOT Baccarat). A disconnected player's
    /// pending decision is taken automatically when the decision time runs out
    /// ([`State::decide_close_decisions`]), as for an absent player.
    pub fn decide_connection(
        &self,
        operator: &str,
        table: &str,
        player: &str,
        connected: bool,
        now: DateTime<Utc>,
    ) -> Result<Vec<Event>, Refusal> {
        let t = self.table_of_operator(operator, table)?;
        check_id("player", player)?;
        let (table_id, player_id) = (table.to_string(), player.to_string());
        if connected {
            return Ok(vec![Event::PlayerReconnected {
                table: table_id,
                player: player_id,
            }]);
        }
        let mut events = vec![Event::PlayerDisconnected {
            table: table_id,
            player: player_id,
        }];
        let Some(r) = t.current_round.as_ref().map(|c| &self.rounds[c]) else {
            return Ok(events);
        };
        let policy = &t.loaded.plan.policies.disconnect;
        let betting_open = r.phase == Phase::Betting && now <= r.betting_deadline;
        if betting_open && policy.refund_if_disconnected_before_betting_closes {
            for b in r.bets.iter().filter(|b| !b.refunded && b.player == player) {
                events.push(Event::BetRefunded {
                    round: r.round.clone(),
                    bet: b.bet.clone(),
                    player: player.to_string(),
                    refund_minor: b.stake_minor,
                    reason: "disconnected before betting closed".into(),
                    clause: policy.clause.clone(),
                });
            }
        }
        Ok(events)
    }

    /// An act at a player-versus-player table, or with `automatic` the plan's act for the
    /// player who has not acted in time. With the event, what the table waits for after it.
    pub fn decide_table_action(
        &self,
        operator: &str,
        table: &str,
        action: Option<&Value>,
        now: DateTime<Utc>,
    ) -> Result<(Vec<Event>, Value), Refusal> {
        let t = self.table_of_operator(operator, table)?;
        if !t.open {
            return Err(refuse("table_closed", format!("table {table} is closed")));
        }
        let (Some(game), Some(pvp)) = (&t.game, PvpEngine::new(&t.loaded.plan)) else {
            return Err(refuse(
                game::code::NOT_IN_GAME,
                format!("table {table} plays rounds against the house: it takes bets, not actions"),
            ));
        };
        let pvp = pvp?;
        let (action, automatic) = match action {
            Some(a) => (a.clone(), false),
            None => match pvp.automatic(game) {
                Some(a) => {
                    // The plan's act is taken only once the player's time has run out:
                    // `policies.timing.decision_ms` from the act that made it his turn.
                    let ms = t.loaded.plan.policies.timing.decision_ms.unwrap_or(0);
                    let deadline = after_ms(t.last_action_at.unwrap_or(now), ms);
                    if now < deadline {
                        return Err(refuse(
                            "decision_time_open",
                            format!(
                                "the player's time runs until {deadline} ({ms} ms from the last act at table {table}): the plan acts for him only after it"
                            ),
                        )
                        .with_plan(&t.loaded.key())
                        .clause(timeout_clause(&t.loaded)));
                    }
                    (a, true)
                }
                None => {
                    return Err(refuse(
                        pvp::code::NO_AUTOMATIC_DECISION,
                        format!("nobody at table {table} owes an act the plan could take for him"),
                    )
                    .with_plan(&t.loaded.key())
                    .clause(timeout_clause(&t.loaded)))
                }
            },
        };
        let mut scratch = game.clone();
        let effects = pvp
            .apply(&mut scratch, &action, now)
            .map_err(|e| e.with_plan(&t.loaded.key()))?;
        Ok((
            vec![Event::TableAction {
                table: table.to_string(),
                action,
                effects,
                automatic,
                at: now,
            }],
            pvp.expected(&scratch),
        ))
    }

    // ----- evolution -------------------------------------------------------------------

    /// Folds one event into the state. Errors mean the log contradicts the rules or itself
    /// (a replay of a tampered or inconsistent log); the service never produces them.
    pub fn apply(&mut self, plans: &PlanSet, event: &Event) -> Result<(), String> {
        match event {
            Event::PlanLoaded { plan, sha256, .. } => {
                self.plans_logged.insert(plan.clone(), sha256.clone());
            }
            // A snapshot changes nothing; the replay checks its hash ([`snapshot`]).
            Event::StateSnapshot { .. } => {}
            // API keys are not game state: the log records their lifecycle for auditors.
            Event::ApiKeyCreated { .. }
            | Event::ApiKeyRevoked { .. }
            | Event::ApiKeyExpirySet { .. } => {}
            Event::PlanApproved {
                plan,
                sha256,
                reference,
                valid_from,
                valid_until,
                actor,
                via,
                ..
            } => {
                if self.approvals.contains_key(reference) {
                    return Err(format!("approval {reference} is logged twice"));
                }
                self.approvals.insert(
                    reference.clone(),
                    regulator::Approval {
                        reference: reference.clone(),
                        plan: plan.clone(),
                        sha256: sha256.clone(),
                        valid_from: *valid_from,
                        valid_until: *valid_until,
                        approved_by: actor.clone(),
                        via: via.clone(),
                        withdrawn_by: None,
                    },
                );
            }
            Event::RoundPaused {
                round,
                reason,
                reported,
                actor,
                at,
            } => {
                let r = self.rounds.get(round).ok_or("pause of an unknown round")?;
                if r.is_finished() || self.paused.contains_key(round) {
                    return Err(format!("round {round}: paused when it could not be"));
                }
                self.paused.insert(
                    round.clone(),
                    regulator::Pause {
                        reason: reason.clone(),
                        reported: reported.clone(),
                        actor: actor.clone(),
                        at: *at,
                    },
                );
            }
            Event::RoundResumed { round, .. } => {
                if self.paused.remove(round).is_none() {
                    return Err(format!("round {round}: resumed but not paused"));
                }
            }
            Event::PlanApprovalWithdrawn {
                reference,
                sha256,
                actor,
                ..
            } => {
                let a = self
                    .approvals
                    .get_mut(reference)
                    .ok_or_else(|| format!("approval {reference} withdrawn but never logged"))?;
                if &a.sha256 != sha256 || a.withdrawn_by.is_some() {
                    return Err(format!(
                        "approval {reference}: withdrawal does not match it"
                    ));
                }
                a.withdrawn_by = Some(actor.clone());
            }
            Event::TableOpened {
                table,
                operator,
                plan,
                plan_sha256,
                mode,
                registration,
                device,
            } => {
                if registration.is_some() || device.is_some() {
                    self.registrations.insert(
                        table.clone(),
                        regulator::Registration {
                            registration: registration.clone(),
                            device: device.clone(),
                        },
                    );
                }
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
                let pvp = PvpEngine::new(&loaded.plan).and_then(Result::ok);
                let game = pvp.as_ref().map(|e| e.new_state());
                let shoe = match (mode, Engine::new(&loaded.plan)) {
                    (Mode::Live, Ok(eng)) => eng
                        .shoe(&loaded.plan)
                        .map(|(shoe, persists)| ShoeState::new(shoe, persists)),
                    _ => None,
                };
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
                        shoe,
                        expected: pvp.as_ref().zip(game.as_ref()).map(|(e, g)| e.expected(g)),
                        game,
                        actions: 0,
                        last_action_at: None,
                        seated: BTreeMap::new(),
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
                // A game dealt from a fresh deck each round (Casino Hold'em's single deck).
                if let Some(shoe) = t.shoe.as_mut().filter(|s| !s.persists) {
                    shoe.reset();
                }
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
                        cards: Vec::new(),
                        outcome: None,
                        misdeals: 0,
                        decisions: Vec::new(),
                        decisions_pending: Vec::new(),
                        decision_deadline: None,
                        decisions_closed: false,
                        settlements: None,
                        refunds: None,
                        blackjack: None,
                        by_player: BetIndex::default(),
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
                // The placements are what the plan reads from the request: derived here when
                // the entry leaves them out, and checked against the derivation when it
                // carries them (entries written before they were left out).
                let plan =
                    self.plan_of_round(self.rounds.get(round).ok_or("bet on an unknown round")?);
                let eng = engine(&plan).map_err(|e| format!("bet {bet}: {}", e.message))?;
                let derived = eng.place(request).map_err(|e| {
                    format!(
                        "bet {bet}: the plan does not read its request: {}",
                        e.message
                    )
                })?;
                let placements = if placements.is_null() {
                    derived
                } else {
                    let logged = Placements::parse(eng.family(), placements)?;
                    if logged != derived {
                        return Err(format!(
                            "bet {bet}: the logged placements are not what the plan reads from its request"
                        ));
                    }
                    logged
                };
                if placements.stake_minor() != *stake_minor {
                    return Err(format!("bet {bet}: the stake differs from its placements"));
                }
                let r = self
                    .rounds
                    .get_mut(round)
                    .ok_or("bet on an unknown round")?;
                let placed = BetRecord {
                    bet: bet.clone(),
                    player: player.clone(),
                    request: raw(request),
                    placements,
                    stake_minor: *stake_minor,
                    refunded: false,
                    snapshot: SnapshotText::default(),
                };
                // Its snapshot text now, not in the snapshot's pause (see `SnapshotText`).
                let _ = placed.snapshot_text();
                r.bets.push(placed);
            }
            Event::BetRefused { .. }
            | Event::EventRefused { .. }
            | Event::CommandRefused { .. } => {}
            // What is owed and paid lives in the store (`payouts_due`), not in the game state.
            Event::PayoutConfirmed { .. } => {}
            // The player register lives in the store (`player_register`), not in the state.
            Event::PlayerExcluded { .. }
            | Event::PlayerExclusionLifted { .. }
            | Event::PlayerLimitsSet { .. }
            | Event::PlayerUsageReported { .. } => {}
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
            Event::RoundSettledPart { round, settlements } => {
                let r = self
                    .rounds
                    .get_mut(round)
                    .ok_or("settlement of an unknown round")?;
                if r.is_finished() || r.refunds.is_some() {
                    return Err(format!(
                        "round {round}: a settlement part after it was finished"
                    ));
                }
                r.settlements
                    .get_or_insert_with(Vec::new)
                    .extend(settlements.iter().cloned());
            }
            Event::RoundVoidedPart { round, refunds } => {
                let r = self
                    .rounds
                    .get_mut(round)
                    .ok_or("void of an unknown round")?;
                if r.is_finished() || r.settlements.is_some() {
                    return Err(format!(
                        "round {round}: a refund part after it was finished"
                    ));
                }
                r.refunds
                    .get_or_insert_with(Vec::new)
                    .extend(refunds.iter().cloned());
            }
            Event::RoundSettled {
                round,
                settlements,
                rng_seed,
                ..
            } => {
                let r = self
                    .rounds
                    .get(round)
                    .ok_or("settlement of an unknown round")?;
                let plan = self.plan_of_round(r);
                let eng = engine(&plan).map_err(|e| e.to_string())?;
                if let Engine::Blackjack(e) = &eng {
                    let complete = r.blackjack.as_ref().is_some_and(|b| {
                        e.next_step(&b.play) == crate::games::blackjack::Next::Complete
                    });
                    if !complete {
                        return Err(format!(
                            "round {round}: settled before its deal is complete"
                        ));
                    }
                } else if eng.deals_cards() {
                    if eng.next(&r.cards, true).map_err(|e| e.to_string())? != Next::Complete {
                        return Err(format!(
                            "round {round}: settled before its deal is complete"
                        ));
                    }
                } else if r.result.is_none() {
                    return Err("settlement without a result".into());
                }
                if let Some(seed) = rng_seed {
                    check_seed(&eng, r, seed, Reveal::Settlement)?;
                }
                let derived = settle_round(&eng, &r.bets, &r.cards, r.result, r.blackjack.as_ref())
                    .map_err(|e| e.to_string())?;
                // Parts logged before this entry (a settlement too large for one) come first.
                let settlements = match &r.settlements {
                    Some(parts) => parts.iter().chain(settlements).cloned().collect(),
                    None => settlements.clone(),
                };
                if derived != settlements {
                    return Err(format!("round {round}: the logged settlement differs from the one the plan derives"));
                }
                let table = r.table.clone();
                self.count_rounds_without_bet(round);
                let r = self.rounds.get_mut(round).expect("checked above");
                r.phase = Phase::Settled;
                r.settlements = Some(settlements);
                self.tables
                    .get_mut(&table)
                    .expect("round's table exists")
                    .current_round = None;
            }
            Event::RoundVoided {
                round,
                refunds,
                rng_seed,
                ..
            } => {
                self.paused.remove(round);
                let r = self.rounds.get(round).ok_or("void of an unknown round")?;
                if matches!(r.phase, Phase::Settled | Phase::Voided) {
                    return Err(format!("round {round}: voided after it was finished"));
                }
                let derived = match void_event(r, "", None) {
                    Event::RoundVoided { refunds, .. } => refunds,
                    _ => unreachable!("void_event returns a RoundVoided"),
                };
                let refunds: Vec<Refund> = match &r.refunds {
                    Some(parts) => parts.iter().chain(refunds).cloned().collect(),
                    None => refunds.clone(),
                };
                if derived != refunds {
                    return Err(format!(
                        "round {round}: the logged refunds differ from the round's stakes"
                    ));
                }
                if let Some(seed) = rng_seed {
                    let plan = self.plan_of_round(r);
                    let eng = engine(&plan).map_err(|e| e.to_string())?;
                    check_seed(&eng, r, seed, Reveal::Void)?;
                }
                let table = r.table.clone();
                self.count_rounds_without_bet(round);
                let r = self.rounds.get_mut(round).expect("checked above");
                r.phase = Phase::Voided;
                r.refunds = Some(refunds);
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
            Event::BetRefunded {
                round,
                bet,
                refund_minor,
                ..
            } => {
                let r = self
                    .rounds
                    .get_mut(round)
                    .ok_or("refund on an unknown round")?;
                let b = r
                    .bets
                    .iter_mut()
                    .find(|b| &b.bet == bet && !b.refunded)
                    .ok_or_else(|| format!("refund of bet {bet}, which is not live"))?;
                if b.stake_minor != *refund_minor {
                    return Err(format!("bet {bet}: the refund differs from the stake"));
                }
                b.refunded = true;
            }
            Event::CardDealt {
                round,
                to,
                card,
                source,
            } => {
                let r = self.rounds.get(round).ok_or("card of an unknown round")?;
                let rec = CardRecord {
                    to: *to,
                    card: *card,
                };
                let plan = self.plan_of_round(r);
                let eng = engine(&plan).map_err(|e| e.to_string())?;
                // A replay re-checks every card against the rules.
                eng.accept_card(&r.cards, r.decisions_closed, rec)
                    .map_err(|e| format!("round {round}: a logged card the rules refuse: {e}"))?;
                let table = r.table.clone();
                self.rounds
                    .get_mut(round)
                    .expect("checked above")
                    .cards
                    .push(rec);
                if *source == Mode::Live {
                    if let Some(shoe) = self.tables.get_mut(&table).and_then(|t| t.shoe.as_mut()) {
                        shoe.take(*card);
                    }
                }
            }
            Event::Misdeal {
                round, discarded, ..
            } => {
                let r = self
                    .rounds
                    .get_mut(round)
                    .ok_or("misdeal of an unknown round")?;
                if discarded.get(..r.cards.len()) != Some(&r.cards[..]) {
                    return Err(format!(
                        "round {round}: the misdeal discards other cards than were dealt"
                    ));
                }
                // Cards of the misdealt request never logged as dealt are out of the shoe too.
                let unlogged: Vec<Card> =
                    discarded[r.cards.len()..].iter().map(|c| c.card).collect();
                r.cards.clear();
                r.misdeals += 1;
                let table = r.table.clone();
                if let Some(shoe) = self.tables.get_mut(&table).and_then(|t| t.shoe.as_mut()) {
                    // A card the shoe cannot hold (a misread, a foreign card) never came out
                    // of it.
                    for c in unlogged {
                        if shoe.holds(c) {
                            shoe.take(c);
                        }
                    }
                }
            }
            Event::ShoeShuffled { table, .. } | Event::ShoeChanged { table, .. } => {
                self.tables
                    .get_mut(table)
                    .ok_or("shoe of an unknown table")?
                    .shoe
                    .as_mut()
                    .ok_or("shoe event on a table without a shoe")?
                    .reset();
            }
            Event::DecisionsOpened {
                round,
                deadline,
                players,
            } => {
                let r = self
                    .rounds
                    .get_mut(round)
                    .ok_or("decisions of an unknown round")?;
                r.phase = Phase::Decisions;
                r.decision_deadline = Some(*deadline);
                r.decisions_pending = players.clone();
            }
            Event::DecisionTaken {
                round,
                player,
                decision,
                automatic,
                bet,
                placements,
                stake_minor,
                ..
            } => {
                let family = self.family_of_round(round)?;
                let r = self
                    .rounds
                    .get_mut(round)
                    .ok_or("decision of an unknown round")?;
                if !r.decisions_pending.contains(player) {
                    return Err(format!("round {round}: {player} owed no decision"));
                }
                r.decisions_pending.retain(|p| p != player);
                if let (Some(bet), Some(placements)) = (bet, placements) {
                    let placements = Placements::parse(family, placements)?;
                    if placements.stake_minor() != *stake_minor {
                        return Err(format!("bet {bet}: the stake differs from its placements"));
                    }
                    r.bets.push(BetRecord {
                        bet: bet.clone(),
                        player: player.clone(),
                        request: raw(&serde_json::json!({ "decision": decision })),
                        placements,
                        stake_minor: *stake_minor,
                        refunded: false,
                        snapshot: SnapshotText::default(),
                    });
                }
                r.decisions.push(DecisionRecord {
                    player: player.clone(),
                    decision: decision.clone(),
                    automatic: *automatic,
                    bet: bet.clone(),
                });
            }
            Event::DecisionsClosed { round, .. } => {
                let r = self
                    .rounds
                    .get_mut(round)
                    .ok_or("decisions of an unknown round")?;
                r.phase = Phase::BettingClosed;
                r.decisions_closed = true;
                r.decisions_pending.clear();
            }
            Event::TableAction {
                table,
                action,
                effects,
                at,
                ..
            } => {
                let t = self
                    .tables
                    .get_mut(table)
                    .ok_or("action at an unknown table")?;
                let loaded = t.loaded.clone();
                let pvp = PvpEngine::new(&loaded.plan)
                    .ok_or("an action at a table played against the house")?
                    .map_err(|e| e.to_string())?;
                let game = t.game.as_mut().ok_or("a table without its game")?;
                let derived = pvp
                    .apply(game, action, *at)
                    .map_err(|e| format!("table {table}: a logged action the rules refuse: {e}"))?;
                if &derived != effects {
                    return Err(format!(
                        "table {table}: the logged effects differ from the ones the rules derive"
                    ));
                }
                t.expected = Some(pvp.expected(game));
                t.actions += 1;
                t.last_action_at = Some(*at);
            }
            Event::BlackjackInput { .. } => self.apply_blackjack_input(event)?,
            Event::SeatReleased { table, player, .. } => {
                self.tables
                    .get_mut(table)
                    .ok_or("seat at an unknown table")?
                    .seated
                    .remove(player)
                    .ok_or_else(|| format!("table {table}: {player} held no place"))?;
            }
            Event::OutcomeRecorded { round, outcome, .. } => {
                self.rounds
                    .get_mut(round)
                    .ok_or("outcome of an unknown round")?
                    .outcome = Some(outcome.clone());
            }
        }
        Ok(())
    }
}

/// Every live (not refunded) bet of the round settled against roulette's `number`, the
/// round's complete deal, or (blackjack) the round driver's complete round, each component
/// against the plan.
fn settle_round(
    eng: &Engine<'_>,
    bets: &[BetRecord],
    cards: &[CardRecord],
    number: Option<u8>,
    bj: Option<&BlackjackRound>,
) -> Result<Vec<BetSettlement>, Refusal> {
    let live: Vec<&BetRecord> = bets.iter().filter(|b| !b.refunded).collect();
    let settled = match (eng, bj) {
        (Engine::Blackjack(e), Some(bj)) => blackjack::settle(e, &live, bj)?,
        (Engine::Blackjack(_), None) => {
            return Err(refuse(
                "round_not_complete",
                "a blackjack round is settled once its cards are dealt",
            ))
        }
        _ => {
            let pairs: Vec<(&str, &Placements)> = live
                .iter()
                .map(|b| (b.player.as_str(), &b.placements))
                .collect();
            eng.settle(&pairs, cards, number)?
        }
    };
    bet_settlements(&live, settled)
}

/// The engine's settlements as logged: each with the bets it covers, its stake, what it
/// returns and wins. Refused where the components do not settle exactly the bets' stakes.
fn bet_settlements(
    live: &[&BetRecord],
    settled: Vec<Settled>,
) -> Result<Vec<BetSettlement>, Refusal> {
    settled
        .into_iter()
        .map(|s| {
            let first = live[s.bets[0]];
            let stake_minor: i64 = s.bets.iter().map(|&i| live[i].stake_minor).sum();
            let returned_minor: i64 = s.components.iter().map(|c| c.returned_minor).sum();
            let win_minor: i64 = s.components.iter().map(|c| c.win_minor).sum();
            // Where money moves: the components settle exactly the stakes of the bets.
            let component_stakes: i64 = s.components.iter().map(|c| c.stake_minor).sum();
            if component_stakes != stake_minor {
                return Err(refuse(
                    "settlement_inconsistent",
                    format!(
                        "bet {}: the settlement covers {component_stakes} minor units of stake, the bets hold {stake_minor}",
                        first.bet
                    ),
                ));
            }
            Ok(BetSettlement {
                bet: first.bet.clone(),
                player: first.player.clone(),
                stake_minor,
                returned_minor,
                win_minor,
                total_minor: returned_minor + win_minor,
                components: s.components,
                bets: if s.bets.len() > 1 {
                    s.bets.iter().map(|&i| live[i].bet.clone()).collect()
                } else {
                    Vec::new()
                },
                detail: s.detail,
            })
        })
        .collect()
}

/// A round's deal as a request advances it: the cards, and the table's shoe (live mode).
struct DealInProgress {
    cards: Vec<CardRecord>,
    decisions_closed: bool,
    shoe: Option<ShoeState>,
}

impl DealInProgress {
    fn of(r: &RoundState, table: &TableState) -> DealInProgress {
        DealInProgress {
            cards: r.cards.clone(),
            decisions_closed: r.decisions_closed,
            shoe: if table.mode == Mode::Live {
                table.shoe.clone()
            } else {
                None
            },
        }
    }

    /// The next card, if the shoe can give it and the rules deal it there.
    fn accept(
        &mut self,
        eng: &Engine<'_>,
        plan: &LoadedPlan,
        c: CardRecord,
    ) -> Result<(), Refusal> {
        if let Some(shoe) = &self.shoe {
            if !shoe.holds(c.card) {
                let clause = eng.dealing_clause(&plan.plan).unwrap_or_default();
                return Err(refuse(
                    game::code::CARD_NOT_IN_SHOE,
                    format!(
                        "{} cannot come out of the shoe: its {} deck(s) hold {} cop(ies) and every one has been dealt since the last shuffle ({} cards seen)",
                        c.card,
                        shoe.shoe.decks,
                        shoe.shoe.copies_of(c.card),
                        shoe.cards_seen
                    ),
                )
                .clause(clause));
            }
        }
        eng.accept_card(&self.cards, self.decisions_closed, c)?;
        self.cards.push(c);
        if let Some(shoe) = &mut self.shoe {
            shoe.take(c.card);
        }
        Ok(())
    }
}

fn automatic_decision(round: &str, player: &str, decision: &Value, why: &str) -> Event {
    Event::DecisionTaken {
        round: round.to_string(),
        player: player.to_string(),
        decision: decision.clone(),
        automatic: true,
        reason: Some(why.to_string()),
        bet: None,
        placements: None,
        stake_minor: 0,
    }
}

/// `ms` milliseconds of a plan's timing after `t`.
fn after_ms(t: DateTime<Utc>, ms: u64) -> DateTime<Utc> {
    t + chrono::Duration::milliseconds(i64::try_from(ms).unwrap_or(i64::MAX))
}

/// The clause of the plan's automatic decision ("označí se po uplynutí času na rozhodnutí
/// volba Položit").
fn timeout_clause(plan: &LoadedPlan) -> String {
    plan.plan
        .policies
        .decision_timeout
        .as_ref()
        .map(|t| t.clause.clone())
        .unwrap_or_else(|| plan.plan.policies.disconnect.clause.clone())
}

/// The void of a round: every accepted stake back, and nothing else (but the RNG seed, if
/// the round has one).
fn void_event(r: &RoundState, reason: &str, rng_seed: Option<&[u8; 32]>) -> Event {
    let refunds: Vec<Refund> = r
        .bets
        .iter()
        .filter(|b| !b.refunded)
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
        r.bets
            .iter()
            .filter(|b| !b.refunded)
            .map(|b| b.stake_minor)
            .sum::<i64>()
    );
    Event::RoundVoided {
        round: r.round.clone(),
        reason: reason.to_string(),
        refunds,
        refund_minor,
        actor: None,
        rng_seed: rng_seed.map(|s| crate::plan::canonical::hex(s)),
    }
}

/// When a seed is revealed: a settlement needs the whole result drawn; a void may come before
/// any of it (what was drawn must still be what the seed draws).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reveal {
    Settlement,
    Void,
}

/// An RNG round's revealed seed: its SHA-256 is the commitment logged when the round opened,
/// and the round's result is what the seed draws (the number, or the cards in order; for a
/// void, the cards dealt so far and the number if one was drawn).
fn check_seed(
    eng: &Engine<'_>,
    r: &RoundState,
    seed_hex: &str,
    reveal: Reveal,
) -> Result<(), String> {
    use sha2::{Digest, Sha256};
    let bytes = (0..seed_hex.len())
        .step_by(2)
        .map(|i| {
            seed_hex
                .get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        })
        .collect::<Option<Vec<u8>>>()
        .filter(|b| b.len() == 32)
        .ok_or_else(|| format!("round {}: the revealed seed is not 64 hex digits", r.round))?;
    let seed: [u8; 32] = bytes.try_into().expect("length checked");
    let commitment = crate::plan::canonical::hex(&Sha256::digest(seed));
    if r.rng_commitment.as_deref() != Some(commitment.as_str()) {
        return Err(format!(
            "round {}: the revealed seed does not match the commitment",
            r.round
        ));
    }
    let drawn_ok = if let (Engine::Blackjack(e), Some(bj)) = (eng, &r.blackjack) {
        blackjack::rng_cards_match(e, seed, &bj.play.dealt)
    } else if eng.deals_cards() {
        eng.rng_cards(seed).get(..r.cards.len()) == Some(&r.cards[..])
    } else if reveal == Reveal::Void && r.result.is_none() {
        true
    } else {
        r.result == Some(draw_pocket(seed, 37) as u8)
    };
    if !drawn_ok {
        return Err(format!(
            "round {}: the result is not what the revealed seed draws",
            r.round
        ));
    }
    Ok(())
}

/// The roulette draw, documented with the other RNG algorithms in [`crate::rng`].
pub use crate::rng::draw_pocket;

#[cfg(test)]
mod tests {
    use super::Event;

    /// A settlement and a void too large for one entry are logged in parts: applied part by
    /// part, then the completing event, they give the state the whole event gives; rounds that
    /// fit one entry are logged whole.
    #[test]
    fn a_settlement_or_void_in_parts_applies_as_the_whole() {
        use super::{in_parts, Mode, SpinReport, State, PART_BYTES};
        use serde_json::json;
        let (plans, report) = crate::plan::PlanSet::load_dir(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("game_plans")
                .as_path(),
        );
        assert_eq!(report.errors().count(), 0);
        let now = chrono::Utc::now();
        let mut state = State::default();
        let apply = |state: &mut State, events: &[Event]| {
            for e in events {
                state.apply(&plans, e).expect("applies");
            }
        };
        let table = format!("t{}", "x".repeat(63));
        let events = state
            .decide_open_table(&plans, "op1", &table, "evolution-roulette@1", Mode::Live)
            .expect("table");
        apply(&mut state, &events);
        let table = super::scoped_table("op1", &table);
        let events = state
            .decide_open_round("op1", &table, now, None)
            .expect("round");
        apply(&mut state, &events);
        let round = state.tables[&table].current_round.clone().expect("a round");
        let mut bets = 0;
        for chunk in 0..8 {
            let batch: Vec<(String, serde_json::Value)> = (0..500)
                .map(|i| {
                    let n = chunk * 500 + i;
                    (
                        format!("p{n:063}"),
                        json!({"bet": "straight", "numbers": [n % 37], "stake_minor": 100}),
                    )
                })
                .collect();
            let events = state.decide_bets("op1", &round, now, &batch).expect("bets");
            bets += events.len();
            apply(&mut state, &events);
        }
        assert_eq!(bets, 4000);
        let events = state
            .decide_close_betting("op1", &round, now)
            .expect("close");
        apply(&mut state, &events);
        let before_end = state.clone();
        let spin = SpinReport {
            number: 7,
            ball_against_rotation: true,
            ball_revolutions: 5,
            source: Mode::Live,
            rng_seed: None,
        };
        let void = before_end
            .decide_void("op1", &round, "test", None)
            .expect("void");
        for events in [state.decide_spin("op1", &round, &spin).expect("spin"), void] {
            let whole = events.last().expect("the finishing event").clone();
            let parts = in_parts(&whole).expect("too large for one entry");
            assert!(parts.len() >= 2, "{}", parts.len());
            for p in &parts {
                let text = serde_json::to_vec(&p.payload()).expect("serialises");
                assert!(text.len() < 2 * PART_BYTES, "{} bytes", text.len());
            }
            let mut by_whole = before_end.clone();
            apply(&mut by_whole, &events);
            let mut by_parts = before_end.clone();
            apply(&mut by_parts, &events[..events.len() - 1]);
            for (i, p) in parts.iter().enumerate() {
                if i + 1 < parts.len() {
                    assert!(
                        !by_parts.rounds[&round].is_finished(),
                        "a part finishes nothing"
                    );
                    // The snapshot of a state between parts reads back as that state.
                    let bytes = by_parts.snapshot(1);
                    let (read, _) = State::from_snapshot(&plans, &bytes).expect("reads");
                    assert_eq!(read.snapshot(1), bytes);
                }
                by_parts.apply(&plans, p).expect("a part applies");
            }
            assert_eq!(by_parts.snapshot(9), by_whole.snapshot(9));
            assert_eq!(
                serde_json::to_value(&by_parts.rounds[&round]).expect("round"),
                serde_json::to_value(&by_whole.rounds[&round]).expect("round")
            );
            // A part out of its place is refused: the round is finished.
            assert!(by_parts.apply(&plans, &parts[0]).is_err());
            // A part missing is a settlement that differs from the plan's.
            let mut short = before_end.clone();
            apply(&mut short, &events[..events.len() - 1]);
            assert!(short.apply(&plans, parts.last().expect("last")).is_err());
        }
        // A round that fits one entry is logged whole.
        let mut small = State::default();
        let events = small
            .decide_open_table(&plans, "op1", "t1", "evolution-roulette@1", Mode::Live)
            .expect("table");
        apply(&mut small, &events);
        let events = small
            .decide_open_round("op1", "op1:t1", now, None)
            .expect("round");
        apply(&mut small, &events);
        let r = small.tables["op1:t1"]
            .current_round
            .clone()
            .expect("a round");
        let bet = json!({"bet": "straight", "numbers": [7], "stake_minor": 100});
        let events = small
            .decide_bets("op1", &r, now, &[("p1".into(), bet)])
            .expect("bet");
        apply(&mut small, &events);
        let events = small.decide_void("op1", &r, "test", None).expect("void");
        assert!(in_parts(events.last().expect("void")).is_none());
    }

    /// Table ids are scoped to their operator: two operators both open a table named `t1`,
    /// each gets its own (`op1:t1`, `op2:t1`) and neither learns of the other's; an operator
    /// naming its own table twice is refused, whether that table was opened scoped or, before
    /// ids were scoped, bare.
    #[test]
    fn table_ids_are_scoped_to_their_operator() {
        use super::{scoped_table, Mode, State};
        let (plans, _) = crate::plan::PlanSet::load_dir(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("game_plans")
                .as_path(),
        );
        let mut state = State::default();
        let now = chrono::Utc::now();
        let open = |state: &State, op: &str, name: &str| {
            state.decide_open_table(&plans, op, name, "evolution-roulette@1", Mode::Live)
        };
        for op in ["op1", "op2"] {
            let events = open(&state, op, "t1").expect("each operator opens its own t1");
            assert!(
                matches!(&events[0], Event::TableOpened { table, operator, .. }
                    if *table == scoped_table(op, "t1") && operator == op),
                "{events:?}"
            );
            for e in &events {
                state.apply(&plans, e).expect("applies");
            }
        }
        assert_eq!(
            open(&state, "op1", "t1").expect_err("twice").code,
            "table_exists"
        );
        // Rounds and bets carry the scoped id.
        let events = state
            .decide_open_round("op2", "op2:t1", now, None)
            .expect("round");
        assert!(
            matches!(&events[0], Event::RoundOpened { round, .. } if round == "op2:t1.1"),
            "{events:?}"
        );
        // Neither operator reaches the other's table, by either id.
        assert_eq!(
            state
                .decide_open_round("op1", "op2:t1", now, None)
                .expect_err("another operator's")
                .code,
            "table_not_found"
        );
        // A table logged bare before ids were scoped is still its operator's name.
        let bare = Event::TableOpened {
            table: "t2".into(),
            operator: "op1".into(),
            plan: "evolution-roulette@1".into(),
            plan_sha256: plans
                .get(&"evolution-roulette@1".parse().expect("ref"))
                .expect("plan")
                .hash
                .clone(),
            mode: Mode::Live,
            registration: None,
            device: None,
        };
        state.apply(&plans, &bare).expect("a bare table applies");
        assert_eq!(
            open(&state, "op1", "t2").expect_err("its bare table").code,
            "table_exists"
        );
        open(&state, "op2", "t2").expect("another operator's bare table is no concern of op2");
        // Names outside an id's alphabet cannot forge a scope.
        assert_eq!(
            open(&state, "op1", "op2:t3").expect_err("scope").code,
            "bad_id"
        );
    }

    /// The audit format's documentation (`audit/FORMAT.md`, 1.3) names every kind the service
    /// writes, and no kind it does not.
    #[test]
    fn the_format_documents_every_event_kind() {
        let format = include_str!("../../audit/FORMAT.md");
        let section = &format[format.find("### 1.3 Kinds").expect("section 1.3")..];
        let section = &section[..section.find("\n#").expect("end of section 1.3")];
        let documented: Vec<&str> = section
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|k| k.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
            .collect();
        for k in Event::KINDS {
            assert!(documented.contains(k), "FORMAT.md 1.3 does not name {k}");
        }
        for k in documented {
            assert!(
                Event::KINDS.contains(&k) || k == "key_rotated",
                "FORMAT.md 1.3 names {k}, which the service does not write"
            );
        }
    }

    /// FORMAT.md 1.4 has a row for every kind, and says of each which members are left out
    /// for its ids: exactly what [`super::id_members`] leaves out.
    #[test]
    fn the_format_says_which_members_each_kind_takes_from_its_ids() {
        let format = include_str!("../../audit/FORMAT.md");
        let section = &format[format.find("### 1.4 Payloads").expect("section 1.4")..];
        let section = &section[..section.find("\n## ").expect("end of section 1")];
        let ticked = |cell: &str| -> Vec<String> {
            cell.split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect()
        };
        let mut rows = std::collections::BTreeMap::new();
        for line in section.lines().filter(|l| l.starts_with("| `")) {
            let cells: Vec<&str> = line.split('|').collect();
            let mut from_ids = ticked(cells[2]);
            from_ids.sort();
            for kind in ticked(cells[1]) {
                assert!(
                    rows.insert(kind.clone(), from_ids.clone()).is_none(),
                    "FORMAT.md 1.4 has two rows of {kind}"
                );
            }
        }
        for k in Event::KINDS {
            let row = rows
                .get(*k)
                .unwrap_or_else(|| panic!("FORMAT.md 1.4 has no row of {k}"));
            let mut code: Vec<String> =
                super::id_members(k).iter().map(|m| m.to_string()).collect();
            code.sort();
            assert_eq!(row, &code, "FORMAT.md 1.4, {k}: members from ids");
        }
        assert_eq!(
            rows.len(),
            Event::KINDS.len(),
            "FORMAT.md 1.4 lists other kinds"
        );
    }
}
