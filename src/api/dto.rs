//! The JSON bodies of the API as types: what the handlers and the service's writer send, and
//! what `openapi.json` describes. The writer builds its replies from these types (through
//! `serde_json::to_value`, since replies are stored as JSON for idempotent retries), so the
//! documentation cannot drift from the bodies.
//!
//! Amounts are integer minor units (`*_minor`) of the plan's currency.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

use crate::plan::model::Mode;
use crate::round::{BetSettlement, CardRecord, Next, Phase, Refund};

// ----- errors ------------------------------------------------------------------------------

/// An RFC 9457 problem document (`application/problem+json`): every error and every refusal.
/// Each error response of an operation lists, as its examples, the codes it can carry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[schema(as = Problem, example = json!({
    "type": "urn:pitboss:problem:above_max_bet",
    "title": "Refused",
    "status": 422,
    "code": "above_max_bet",
    "detail": "a stake of 12 000,00 CZK on straight 17 is above the maximum bet 10 000,00 CZK for Jedno číslo (Straight-Up) in alg-roulette@1",
    "plan": "alg-roulette@1",
    "clause": "Tabulka nejvyšších sázek a odvislých nejvyšších výher"
}))]
#[serde(deny_unknown_fields)]
pub struct ProblemDocument {
    /// `urn:pitboss:problem:<code>`.
    #[serde(rename = "type")]
    pub problem_type: String,
    /// `Refused` for a rule of the plan or the round lifecycle; otherwise the HTTP reason.
    pub title: String,
    /// The HTTP status, repeated.
    pub status: u16,
    /// Stable machine code (`plan_not_found`, `above_max_bet`, `idempotency_key_reused`, …).
    pub code: String,
    /// A message for a person.
    pub detail: String,
    /// The plan (`id@version`) whose rule refused, where one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub plan: Option<String>,
    /// The plan clause (field path) behind the refusal, where one is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub clause: Option<String>,
}

// ----- requests ----------------------------------------------------------------------------

/// The header every operator command carries: a retry with the same key and the same request
/// returns the first answer and changes nothing; the same key with another request is refused
/// (`idempotency_key_reused`, 422). Keys are per operator and kept for good.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Header)]
pub struct IdempotencyKey {
    /// 1–128 printable ASCII characters, chosen by the client, unique per change it means to
    /// make (a UUID is a good choice). Required: a command without one is refused
    /// (`idempotency_key_required`, 400).
    #[param(
        rename = "Idempotency-Key",
        min_length = 1,
        max_length = 128,
        example = "3f0c9b1e-7a55-4f5e-9d2a-1c4be0f1a001"
    )]
    pub idempotency_key: String,
}

/// `POST /v1/rounds/{round}/bets`: up to 500 bets, each decided on its own.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BetsRequest {
    #[schema(min_items = 1, max_items = 500, value_type = Vec<super::schemas::BetRequest>)]
    pub bets: Vec<Value>,
}

/// An inside bet on `numbers` (any order); the numbers must be one bet of that type on the
/// layout (a split is two adjacent numbers).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"player": "p1", "bet": "split", "numbers": [17, 20], "stake_minor": 1000}))]
pub struct InsideBet {
    /// The player's id (1–64 of `a-z A-Z 0-9 _ -`).
    pub player: String,
    #[schema(inline)]
    pub bet: InsideBetType,
    #[schema(min_items = 1, max_items = 6, maximum = 36)]
    pub numbers: Vec<u8>,
    /// The stake, in minor units.
    #[schema(minimum = 1)]
    pub stake_minor: i64,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum InsideBetType {
    Straight,
    Split,
    Street,
    Corner,
    Line,
}

/// An outside bet on one field of the layout; the field must belong to the bet type
/// (`dozen` takes `dozen_1..3`, `column` takes `column_1..3`, `red_black` `red`/`black`,
/// `even_odd` `even`/`odd`, `low_high` `low`/`high`).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"player": "p2", "bet": "column", "field": "column_2", "stake_minor": 2000}))]
pub struct OutsideBet {
    pub player: String,
    #[schema(inline)]
    pub bet: OutsideBetType,
    pub field: crate::plan::rules::roulette::OutsideField,
    #[schema(minimum = 1)]
    pub stake_minor: i64,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutsideBetType {
    Dozen,
    Column,
    RedBlack,
    EvenOdd,
    LowHigh,
}

/// An announced (racetrack) bet of the plan, by id (`tier`, `orphelins`, `voisins`, `zero`
/// in the committed plans); `stake_minor` is the stake per unit, and each component is held to
/// its own bet type's limits.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"player": "p3", "bet": "voisins", "stake_minor": 500}))]
pub struct AnnouncedBet {
    pub player: String,
    /// The announced bet's id in the plan.
    #[schema(example = "voisins")]
    pub bet: String,
    #[schema(minimum = 1)]
    pub stake_minor: i64,
}

/// A racetrack Neighbours bet: a straight bet on `number` and on `neighbours` numbers either
/// side of it on the wheel; `stake_minor` is the stake on each number.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"player": "p3", "bet": "neighbours", "number": 0, "neighbours": 2, "stake_minor": 500}))]
pub struct NeighboursBet {
    pub player: String,
    /// `neighbours`.
    #[schema(pattern = "^neighbours$")]
    pub bet: String,
    #[schema(maximum = 36)]
    pub number: u8,
    /// Numbers on each side, within the plan's range.
    pub neighbours: u8,
    #[schema(minimum = 1)]
    pub stake_minor: i64,
}

/// A complete bet: every inside bet that includes `number`, with the plan's chips per bet
/// type; `stake_minor` is the stake per chip.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"player": "p4", "bet": "complete", "number": 17, "stake_minor": 100}))]
pub struct CompleteBet {
    pub player: String,
    /// `complete`.
    #[schema(pattern = "^complete$")]
    pub bet: String,
    #[schema(maximum = 36)]
    pub number: u8,
    #[schema(minimum = 1)]
    pub stake_minor: i64,
}

// ----- operator replies ------------------------------------------------------------------

/// `201` to `POST /v1/tables`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TableOpenedReply {
    /// The table's id, `<operator>:<name>`: its rounds are `<id>.<number>`.
    pub table: String,
    /// The plan as `id@version`: the table keeps this version for its whole life.
    pub plan: String,
    pub mode: Mode,
    /// Always `true`.
    pub open: bool,
}

/// `200` to `POST /v1/tables/{table}/close`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TableClosedReply {
    pub table: String,
    /// Always `false`.
    pub open: bool,
}

/// `201` to `POST /v1/tables/{table}/rounds`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RoundOpenedReply {
    /// `<table>.<number>`.
    pub round: String,
    pub table: String,
    /// The round's number at the table, from 1.
    pub number: u64,
    /// Bets after this instant are refused; betting also closes when the dealer says so.
    pub betting_deadline: DateTime<Utc>,
    /// RNG mode: SHA-256 (hex) of the seed the result will be drawn from, committed before any
    /// bet; `null` in live mode.
    #[schema(required = true)]
    pub rng_commitment: Option<String>,
}

/// `200` to `POST /v1/rounds/{round}/bets`: each bet accepted or refused on its own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BetsReply {
    pub round: String,
    pub accepted: usize,
    pub refused: usize,
    /// One result per bet, in request order.
    pub results: Vec<BetResult>,
}

/// The decision on one bet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "status", rename_all = "snake_case", deny_unknown_fields)]
pub enum BetResult {
    /// Logged and acknowledged: the stake is committed.
    Accepted {
        /// The bet's id, `<round>.<index>`.
        bet: String,
        player: String,
        /// The total stake at risk (all components).
        stake_minor: i64,
        /// What the bet holds: roulette, the spots it lies on (one for a simple bet, one per
        /// component of an announced, Neighbours or complete bet); card games, the bet type
        /// (and Egalite total) with its stake (a Casino Hold'em Call Blind places two).
        #[schema(value_type = crate::round::game::Placements)]
        placements: Value,
        /// Where the bet is in the audit log: always present on an accepted bet.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        receipt: Option<Receipt>,
    },
    /// Logged refusal, with the plan rule that refused it.
    Refused {
        player: String,
        code: String,
        detail: String,
        #[schema(required = true)]
        plan: Option<String>,
        #[schema(required = true)]
        clause: Option<String>,
    },
}

/// A bet's receipt: its `bet_accepted` entry in the audit log. The player keeps it; with an
/// inclusion proof (`GET /v1/audit/proof/{seq}`) against a checkpoint witnesses cosigned, it
/// shows the bet is in the log as accepted, whatever the operator later claims (README,
/// "Receipts").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Receipt {
    /// The entry's sequence number (its leaf index in the log's Merkle tree).
    pub seq: u64,
    /// The entry's leaf hash, hex: SHA-256(0x00 ‖ the entry's canonical bytes).
    #[schema(pattern = "^[0-9a-f]{64}$")]
    pub leaf_hash: String,
}

/// `200` to a dealer event or a void. After `close_betting`: `round` and `phase` only. After a
/// spin or draw: the spin was invalid (`phase` stays `betting_closed`, `spin` says why: the
/// dealer spins again), or the round is settled (`result`, `settlements`, `stake_minor`,
/// `paid_minor`, and `rng_seed` in RNG mode). After a void: `reason`, `refunds`,
/// `refund_minor`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RoundOutcome {
    pub round: String,
    /// Where the round is now, after a phase change (`close_betting`, a settlement, a void).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub phase: Option<Phase>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub spin: Option<SpinRejected>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub result: Option<SpinResult>,
    /// What each bet pays: the wallet is credited `total_minor` per bet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub settlements: Option<Vec<BetSettlement>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub stake_minor: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub paid_minor: Option<i64>,
    /// RNG mode: the seed (hex), revealed now; its SHA-256 is the round's `rng_commitment`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub rng_seed: Option<String>,
    /// Why the round was voided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub reason: Option<String>,
    /// A voided round: every accepted stake back; a void of some players or a withdrawal:
    /// the stakes it returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub refunds: Option<Vec<Refund>>,
    /// A settlement: the stakes returned before it (a void of some players, a withdrawal, a
    /// disconnect before betting closed), whose bets are not in `settlements`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub refunded: Option<Vec<Refund>>,
    /// A settlement: what it owes each player (the sum of his `total_minor`, when above zero)
    /// and when it is due, 30 days after this evaluation (002 § 9(1)); the operator confirms
    /// each payment (`POST /v1/payouts/confirm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub payouts_due: Option<Vec<crate::service::payouts::PayoutDue>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub refund_minor: Option<i64>,
    /// Card games: the cards this request dealt (live: as reported; RNG: as drawn).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub cards: Option<Vec<CardRecord>>,
    /// Card games: what the deal expects next (a card to a position, the players' decisions,
    /// or nothing: `complete`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub next: Option<Next>,
    /// Card games: the result read from the complete deal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, value_type = super::schemas::CardGameOutcome)]
    pub outcome: Option<Value>,
    /// A misdeal: the deal so far is void and dealt again; the bets stand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub misdeal: Option<MisdealNotice>,
    /// The players' decisions taken by this request (automatic ones included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub decisions: Option<Vec<DecisionResult>>,
    /// The decision time opened by this request: players decide until then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub decision_deadline: Option<DateTime<Utc>>,
    /// The players who owe a decision (when the decision time opens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub decisions_pending: Option<Vec<String>>,
    /// Blackjack: every input this request applied (cards with where the rules placed them,
    /// decisions, automatic decisions), with the stakes each added — to debit from the
    /// players' wallets (a split, a double, insurance, a Bet Behind following).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub inputs: Option<Vec<BlackjackInputNotice>>,
    /// Blackjack: what the round awaits now (`next`) and who owes what (`due`: player, box,
    /// hand, cards, total and the legal decisions, or an insurance answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, value_type = super::schemas::BlackjackExpected)]
    pub expected: Option<Value>,
}

/// One blackjack input as applied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BlackjackInputNotice {
    /// `{"input": "card", "card": "AS"}`, `{"input": "decide", "position": 0, "hand": 0,
    /// "decision": "double"}`, `{"input": "insure", …}`, `{"input": "timed_out", …}`,
    /// `{"input": "close_insurance"}`, … Absent for the dealer's hole card while it is face
    /// down (`hole_card_hidden`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub input: Option<crate::games::blackjack::Input>,
    /// The dealer's hole card, dealt face down: its value is withheld from the operator until
    /// the dealer plays (002: "K odkrytí této skryté karty krupiéra dojde v momentu, kdy na
    /// něj přijde řada"); the log keeps it for auditors.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hole_card_hidden: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bet_behind_declines: Vec<crate::games::blackjack::Input>,
    /// Where the rules placed a card: `{"to": "hand", "position": 0, "hand": 0}`,
    /// `{"to": "common_hand"}` or `{"to": "dealer"}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub to: Option<crate::games::blackjack::CardTo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub player: Option<String>,
    pub automatic: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub reason: Option<String>,
    /// The stakes this input added, each a bet of its own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bets: Vec<crate::round::blackjack::AddedBet>,
}

/// A deal declared void and dealt again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MisdealNotice {
    pub reason: String,
    /// The plan's rule that re-deals.
    pub clause: String,
    pub discarded: Vec<CardRecord>,
}

/// One player's decision, taken or refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "status", rename_all = "snake_case", deny_unknown_fields)]
pub enum DecisionResult {
    Taken {
        player: String,
        #[schema(value_type = super::schemas::TakenDecisionValue)]
        decision: Value,
        /// The plan's automatic decision (time-out or disconnect).
        automatic: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        reason: Option<String>,
        /// The bet a call placed, and its stake (to debit from the player's wallet).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        bet: Option<String>,
        stake_minor: i64,
    },
    Refused {
        player: String,
        code: String,
        detail: String,
        #[schema(required = true)]
        plan: Option<String>,
        #[schema(required = true)]
        clause: Option<String>,
    },
}

/// A spin the plan's valid-spin rule rejects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SpinRejected {
    /// Always `false`.
    pub valid: bool,
    pub reason: String,
}

/// The round's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SpinResult {
    #[schema(maximum = 36)]
    pub number: u8,
    /// `live` (reported by the dealer system) or `rng` (drawn by pitboss).
    pub source: Mode,
}

/// `200` to `POST /v1/tables/{table}/players`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ConnectionReply {
    pub table: String,
    pub player: String,
    pub connected: bool,
    /// Stakes returned by the plan's disconnect policy (a player disconnected before betting
    /// closes, where the plan returns the stake): credit them to the player's wallet.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refunds: Vec<Refund>,
    /// Pending decisions the plan took for the player at once (Casino Hold'em: fold).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub automatic_decisions: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// `200` to `POST /v1/tables/{table}/shoe`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ShoeReply {
    pub table: String,
    /// `shuffle` or `change`.
    pub action: String,
    /// Cards that had come out of the shoe since the previous shuffle.
    pub cards_seen_before: u32,
}

// ----- reads -------------------------------------------------------------------------------

/// `GET /v1/rounds/{round}/settlement`: a settled round's payouts or a voided round's refunds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum SettlementDocument {
    Settled(SettledRound),
    Voided(VoidedRound),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SettledRound {
    pub round: String,
    /// `settled`.
    pub phase: Phase,
    /// The winning number.
    #[schema(required = true)]
    pub result: Option<u8>,
    pub settlements: Vec<BetSettlement>,
    /// Sum of the bets' stakes.
    pub stake_minor: i64,
    /// Sum of what the wallets are credited (`total_minor`).
    pub paid_minor: i64,
    /// Stakes returned before the settlement (a void of some players, a withdrawal, a
    /// disconnect before betting closed): those bets are not in `settlements`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refunded: Vec<Refund>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct VoidedRound {
    pub round: String,
    /// `voided`.
    pub phase: Phase,
    pub refunds: Vec<Refund>,
    /// Sum of the refunds: equals the sum of the round's stakes.
    pub refund_minor: i64,
}

/// One audit-log entry with its sequence number (the leaf index for an inclusion proof).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoggedEntry {
    pub seq: u64,
    /// The entry as logged (`audit/FORMAT.md`): `ts`, `kind`, the ids it concerns, `payload`, …
    #[schema(value_type = super::schemas::AuditEntry)]
    pub entry: Value,
}

impl LoggedEntry {
    /// A stored row: its sequence number and canonical bytes (`null` if they are not JSON,
    /// which the writer never stores).
    pub fn from_row((seq, canonical): &(u64, Vec<u8>)) -> LoggedEntry {
        LoggedEntry {
            seq: *seq,
            entry: serde_json::from_slice(canonical).unwrap_or(Value::Null),
        }
    }
}

/// `GET /v1/rounds/{round}/recall`: every logged entry of a round, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Recall {
    pub table: String,
    /// The table's plan, `id@version`.
    pub plan: String,
    /// The table's registration number, as given when it opened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration: Option<String>,
    /// The id of the table's dealing device, as given when it opened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    pub entries: Vec<LoggedEntry>,
    /// The sequence numbers of entries withheld from this view: to an operator, the entry
    /// that dealt a blackjack dealer's hole card while it is face down (until the dealer
    /// plays). Auditors and regulators see every entry.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub withheld: Vec<u64>,
}

/// `GET /v1/audit/entries`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AuditEntries {
    pub since: u64,
    /// The cursor of the next page (`since=next`): every matching entry below it has been
    /// returned. Stable: entries logged later have larger sequence numbers.
    pub next: u64,
    pub entries: Vec<LoggedEntry>,
}

/// `POST /v1/audit/checkpoint`: the size of the tree the latest checkpoint covers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckpointSigned {
    pub tree_size: u64,
}

/// `GET /v1/audit/proof/{seq}`: a self-contained inclusion proof, as `pitboss-audit
/// check-proof` reads it (`pitboss_audit::proof::InclusionProofFile`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[schema(as = InclusionProofFile)]
#[serde(deny_unknown_fields)]
pub struct InclusionProofDocument {
    /// `pitboss-audit-inclusion-proof/1`.
    pub format: String,
    /// The entry's canonical bytes, as a JSON string (so byte-exact).
    pub entry: String,
    pub leaf_index: u64,
    pub tree_size: u64,
    /// Audit path, leaf's sibling first, each hash in hex.
    pub path: Vec<String>,
    /// The signed checkpoint of `tree_size`, as note text.
    pub checkpoint: String,
}

/// `GET /v1/audit/consistency`: an RFC 6962 consistency proof, as `pitboss-audit consistency`
/// reads it (`pitboss_audit::consistency::ConsistencyProofFile`, audit/FORMAT.md section 8).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[schema(as = ConsistencyProofFile)]
#[serde(deny_unknown_fields)]
pub struct ConsistencyProofDocument {
    /// `pitboss-audit-consistency-proof/1`.
    pub format: String,
    pub old_size: u64,
    pub new_size: u64,
    /// PROOF(old_size, D[new_size]) of RFC 6962 §2.1.2, each hash in hex; empty when
    /// `old_size` is 0 or equals `new_size`.
    pub proof: Vec<String>,
}

/// `201` to `POST /v1/admin/keys`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewKeyReply {
    pub key_id: String,
    /// The whole key, `pb_<key_id>_<secret>`: shown this once, only its hash is stored.
    pub key: String,
}

/// `GET /healthz`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Health {
    /// `ok` (`/healthz`: the process is up; `starting` while it replays its audit log, when
    /// `log_entries` is not known yet and reads 0) or `ready` (`/readyz`: it can write);
    /// `standby` on a node that forwards to the node that writes the log (`serve --node-url`;
    /// `log_entries` reads 0).
    pub status: String,
    /// Loaded plan versions.
    pub plans: usize,
    /// Entries in the audit log.
    pub log_entries: u64,
}

/// `200` to `POST /v1/tables/{table}/actions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TableActionReply {
    pub table: String,
    /// The action applied (the plan's own when `automatic`).
    #[schema(value_type = super::schemas::PvpAction)]
    pub action: Value,
    pub automatic: bool,
    /// What it did: chips moved between stacks, bank and pots, cards, hands won or voided.
    /// Chips enter and leave the table only by the effects of sitting down, buying in and
    /// leaving (cashing out).
    #[schema(value_type = Vec<super::schemas::PvpEffect>)]
    pub effects: Value,
    /// What the table waits for now.
    #[schema(value_type = super::schemas::PvpExpected)]
    pub expected: Value,
}
