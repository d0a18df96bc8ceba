//! The plan file format: one TOML file per game and version.
//!
//! These types are the single source of the format: `game_plans/schema.json` is generated from
//! them, the loader deserialises into them, and `plan show --json` prints them normalised.
//! Every value carries (or sits under something that carries) the clause of the source
//! document it came from; every value the document does not give is listed in `assumptions`.

use std::fmt;
use std::str::FromStr;

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::money::{Currency, Ratio, Rounding};
use crate::plan::rules::{Family, GameRules};

/// The plan file format this build reads.
pub const FORMAT_VERSION: u32 = 1;

/// A whole plan file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// Plan file format version; this build reads format 1.
    pub format: u32,
    pub plan: Identity,
    pub source: Source,
    /// Every bet type with its limits exactly as the document's limits table states them.
    /// Player-versus-player games (Oko bere, poker) have none: their stakes are in `rules`.
    #[serde(default)]
    pub bets: Vec<BetType>,
    /// The payout table: one row per bet type and outcome class.
    #[serde(default)]
    pub payouts: Vec<Payout>,
    /// The game's parameters, under the family's own table (`[rules.roulette]`, …).
    pub rules: GameRules,
    pub policies: Policies,
    /// Every value that the document does not give, with the reason it was chosen.
    #[serde(default)]
    pub assumptions: Vec<Assumption>,
    /// Places where the document contradicts itself. The plan keeps what the document says;
    /// lint reports each one as a warning. A contradiction not listed here is an error.
    #[serde(default)]
    pub document_inconsistencies: Vec<Inconsistency>,
}

/// Who approved what, for which game.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Identity {
    pub id: PlanId,
    /// Versions of one id are ordered by this number; a change is a new version.
    pub version: u32,
    /// The game's name as headed in the document.
    pub title: String,
    pub operator: String,
    pub studio: String,
    pub family: Family,
    pub currency: Currency,
    pub effective_from: NaiveDate,
    /// How a fraction of a minor unit is resolved when a ratio does not divide a stake.
    pub rounding: Rounding,
    /// How outcomes reach pitboss: reported by a dealer system (`live`) or drawn by pitboss
    /// from its committed ChaCha20 stream (`rng`).
    pub modes: Vec<Mode>,
    /// The document's clause that limits the modes (002 §3(1), §7(1): a live game "přímo
    /// obsluhována krupiérem"), given in a refusal of another mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modes_clause: Option<String>,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Live,
    Rng,
}

impl fmt::Display for Mode {
    /// The mode for a message to a person: "live", "RNG".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Live => "live",
            Mode::Rng => "RNG",
        })
    }
}

/// Where the plan comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// File name of the source document (kept under `game_plans/sources/`).
    pub document: String,
    /// SHA-256 of the document's bytes, lower-case hex: pins the exact text the plan cites.
    pub document_sha256: String,
    /// The document's own title.
    pub title: String,
    /// The heading of the game's section in the document.
    pub section: String,
}

/// A bet type and its limits, in minor units of the plan's currency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BetType {
    /// The bet type's id from the family's vocabulary (see `game_plans/README.md`).
    pub id: String,
    /// The bet's name exactly as the document writes it.
    pub label: String,
    /// Smallest stake accepted. The documents give no minimum bets: always an assumption.
    pub min_bet: i64,
    /// "Nejvyšší sázka".
    pub max_bet: i64,
    /// "Nejvyšší výhra": the most one bet of this type may win, a promise to the regulator.
    pub max_win: i64,
    /// "Nejvyšší výhra + sázka".
    pub max_win_plus_stake: i64,
    /// Bet types of which the player must hold at least one in the same round (a side bet
    /// needs a main bet).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<String>,
    /// The heading of the limits table this row comes from.
    pub clause: String,
}

/// One row of the payout table. Exactly one of `ratio` and `refund` is given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Payout {
    /// A bet type id declared in `bets`.
    pub bet: String,
    /// The outcome class from the bet type's vocabulary.
    pub outcome: String,
    /// The bet wins: stake returned plus stake × ratio ("Výherní poměr").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<Ratio>,
    /// The bet neither wins nor fully loses: this share of the stake is returned
    /// (`1/1` a push, `1/2` half back).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refund: Option<Ratio>,
    /// The document's name for the outcome, as written there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub clause: String,
}

/// The error, disconnect and timing policies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Policies {
    pub error: ErrorPolicy,
    pub disconnect: DisconnectPolicy,
    pub timing: Timing,
    /// Games where players owe a decision: what happens when time runs out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision_timeout: Option<DecisionTimeout>,
    /// What a table closed without notice means for open rounds (ALG).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_closure: Option<TableClosurePolicy>,
    /// Whether a player may withdraw his bets before betting closes (SYNOT Baccarat: "Do
    /// vyhlášení konce sázek a jejich potvrzení lze sázky odebrat"). Absent: a bet once
    /// accepted stands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub withdrawal: Option<WithdrawalPolicy>,
}

/// A player's withdrawal of his bets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WithdrawalPolicy {
    /// Bets may be withdrawn until betting closes.
    pub before_betting_closes: bool,
    pub clause: String,
}

/// "Řešení chyb".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorPolicy {
    /// The round is paused and the error repaired where possible.
    pub pause_and_repair: bool,
    /// Reconstructing the round so it can be completed takes precedence over cancelling it.
    pub reconstruction_before_cancel: bool,
    /// Whom a cancellation may concern.
    pub cancel_scope: CancelScope,
    /// What a cancelled round pays back.
    pub on_cancel: CancelSettlement,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CancelScope {
    /// "pro některé anebo všechny sázející".
    SomeOrAllPlayers,
    AllPlayers,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CancelSettlement {
    /// Every stake of the cancelled round is returned ("vrací podané sázky").
    RefundStakes,
}

/// "Zásady odpojení/ztráty připojení".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DisconnectPolicy {
    /// Bets already placed stay valid and are settled in the player's absence.
    pub placed_bets_stand: bool,
    /// A player disconnected before betting closes gets the stake back (SYNOT Baccarat).
    #[serde(default)]
    pub refund_if_disconnected_before_betting_closes: bool,
    /// A disconnected player's pending decisions are taken automatically
    /// (see `policies.decision_timeout`).
    #[serde(default)]
    pub pending_decisions_automatic: bool,
    /// A player who places no bet in this many consecutive rounds is removed (ALG Endless).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remove_after_rounds_without_bet: Option<u32>,
    pub clause: String,
}

/// Betting window, decision time and the interrupted-round deadline. The documents give none
/// of them: always assumptions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Timing {
    pub betting_window_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision_ms: Option<u64>,
    /// How long a round may stay interrupted: paused (from its `round_paused`) or unfinished
    /// with no progress (from the later of its last change and its betting or decision
    /// deadline). Past it the error policy applies by itself: the service voids the round
    /// and returns every stake (`round_voided`, reason `deadline: …`, actor the service).
    /// Required of every game played in rounds (house-banked); games played between players
    /// have no rounds and give none. At most 30 days.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted_round_ms: Option<u64>,
}

/// The automatic decision when a player does not decide in time (or is disconnected).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DecisionTimeout {
    pub automatic: AutoDecision,
    /// With `hit_at_or_below_else_stand`: the highest total that still hits (11 in the
    /// Evolution games).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hit_at_or_below: Option<u8>,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AutoDecision {
    Stand,
    HitAtOrBelowElseStand,
    Fold,
    /// Check when nothing is owed, otherwise fold (poker: a player never loses chips he did
    /// not put in by an automatic decision).
    CheckOrFold,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TableClosurePolicy {
    pub without_notice: CancelSettlement,
    pub clause: String,
}

/// A value the document does not give.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Assumption {
    /// Path of the value in the normalised plan, e.g. `bets[straight].min_bet` or
    /// `policies.timing.betting_window_ms`.
    pub field: String,
    /// Why this value: what the document says or does not say, and what it was chosen after.
    pub reason: String,
}

/// A contradiction inside the document that the plan keeps as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Inconsistency {
    /// Path of the value that disagrees, e.g. `bets[call].max_win`.
    pub field: String,
    /// What disagrees with what, citing the document.
    pub note: String,
}

/// A plan id: lower-case ASCII letters, digits and `-`, 3 to 64 characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PlanId(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanRefError {
    #[error(
        "'{0}' is not a plan id: use 3–64 characters of a-z, 0-9 and '-', starting with a letter"
    )]
    BadId(String),
    #[error("'{0}' is not a plan version: use a whole number from 1")]
    BadVersion(String),
}

impl PlanId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for PlanId {
    type Err = PlanRefError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let ok = (3..=64).contains(&s.len())
            && s.as_bytes()[0].is_ascii_lowercase()
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !s.ends_with('-');
        if ok {
            Ok(PlanId(s.to_string()))
        } else {
            Err(PlanRefError::BadId(s.to_string()))
        }
    }
}

impl fmt::Display for PlanId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for PlanId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for PlanId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for PlanId {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "PlanId".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": "^[a-z][a-z0-9-]{1,62}[a-z0-9]$",
        })
    }
}

/// `id@version`, e.g. `evolution-roulette@1`. Without `@version` it means the latest.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PlanRef {
    pub id: PlanId,
    pub version: Option<u32>,
}

impl FromStr for PlanRef {
    type Err = PlanRefError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.split_once('@') {
            None => Ok(PlanRef {
                id: s.parse()?,
                version: None,
            }),
            Some((id, v)) => {
                let version: u32 = v
                    .parse()
                    .ok()
                    .filter(|&n| n >= 1)
                    .ok_or_else(|| PlanRefError::BadVersion(v.to_string()))?;
                Ok(PlanRef {
                    id: id.parse()?,
                    version: Some(version),
                })
            }
        }
    }
}

impl fmt::Display for PlanRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.version {
            Some(v) => write!(f, "{}@{}", self.id, v),
            None => write!(f, "{}", self.id),
        }
    }
}

impl Plan {
    /// `id@version` of this plan.
    pub fn key(&self) -> String {
        format!("{}@{}", self.plan.id, self.plan.version)
    }

    pub fn bet(&self, id: &str) -> Option<&BetType> {
        self.bets.iter().find(|b| b.id == id)
    }

    pub fn payouts_for<'a>(&'a self, bet: &'a str) -> impl Iterator<Item = &'a Payout> + 'a {
        self.payouts.iter().filter(move |p| p.bet == bet)
    }

    /// The best winning ratio of a bet type (what its maximum win is computed from).
    pub fn best_ratio(&self, bet: &str) -> Option<Ratio> {
        self.payouts_for(bet).filter_map(|p| p.ratio).max()
    }

    /// The assumption recorded for `field`, if any.
    pub fn assumption(&self, field: &str) -> Option<&Assumption> {
        self.assumptions.iter().find(|a| a.field == field)
    }
}
