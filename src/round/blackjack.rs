//! Blackjack in the round lifecycle: bets on boxes (or on the common hand), the round driver's
//! inputs as logged events, the stakes a decision adds as bets of their own, decision and
//! insurance deadlines, time-outs, and the settlement per box, side bet and Bet Behind.
//!
//! The rules live in the pure engine ([`crate::games::blackjack`]); its round driver
//! ([`crate::games::blackjack::driver`]) is an event-sourced state that inputs are applied to
//! one at a time. This module maps the lifecycle onto it:
//! - **Bets** (`{"bet": "main" | "bet_behind" | <side bet>, "seat": n, "stake_minor": …}`,
//!   no `seat` in a common-hand game) are checked one by one against the plan and against the
//!   whole round: a box belongs to the player whose main bet is on it (`seat_taken` for
//!   another), side bets need the player's main bet on the same box, a Bet Behind needs a box
//!   with another player's main bet.
//! - **The driver's round** is opened from the round's live bets when the first card comes:
//!   the boxes in seat order (seated) or the players in the order of their first main bet
//!   (common hand); each box's Bets Behind in the order placed.
//! - **Every input** (a card, a decision, an insurance answer, a time-out, the close of the
//!   insurance offer) is logged as one `blackjack_input` event with what it added: the stakes of
//!   a split, a double or insurance, each a bet of its own (so a void returns it and the wallet
//!   is debited by it), and the Bets Behind that follow the box's split or double unless their
//!   players cannot fund them (`bet_behind_declines`). Replay re-applies every input and
//!   refuses a log whose added bets or card positions differ from what the rules derive.
//! - **Deadlines**: whenever a decision or an insurance answer becomes due, its time
//!   (`policies.timing.decision_ms`) starts with the event that made it due; after the
//!   deadline the dealer system's `close_decisions` (or its next card or deal) takes the plan's
//!   automatic decision for each hand still due (`policies.decision_timeout`) and closes an
//!   open insurance offer (whoever has not answered is not insured).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use std::collections::BTreeSet;

use super::{
    bet_id, BetRecord, Engine, Event, Phase, RoundState, Settled, ShoeState, State, TableState,
};
use crate::cards::Card;
use crate::games::blackjack::{
    self as bj, BetBehindBet, BlackjackBet, BlackjackEngine, Decision, Input, PositionBets,
    RoundSetup,
};
use crate::games::Refusal;
use crate::plan::model::Mode;
use crate::plan::rules::blackjack::SeatingModel;

/// The stable codes of blackjack's lifecycle.
pub mod code {
    /// A main bet on a box another player holds.
    pub const SEAT_TAKEN: &str = "seat_taken";
    /// A seated game's bet without its box.
    pub const SEAT_REQUIRED: &str = "seat_required";
    /// A common-hand bet naming a box: the game has none.
    pub const NO_SEATS: &str = "no_seats";
    pub const NO_SUCH_SEAT: &str = "no_such_seat";
    /// A decision that is not blackjack's.
    pub const BAD_DECISION: &str = "bad_decision";
    /// A decision from a player who owes none now (not his turn, decided already).
    pub const NO_DECISION_OWED: &str = "no_decision_owed";
    /// A player owes several decisions (two boxes): the request names the box.
    pub const AMBIGUOUS_DECISION: &str = "ambiguous_decision";
}

/// One blackjack bet as the operator sends it (the player is the request's `player`).
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BlackjackBetRequest {
    /// The plan's bet type: `main`, `bet_behind` or a side bet (`perfect_pairs`, `21+3`, …).
    pub bet: String,
    /// The box, 1 … the plan's `seating.seats` (seated games); absent in a common-hand game.
    #[serde(default)]
    pub seat: Option<u8>,
    pub stake_minor: i64,
}

/// Where a blackjack stake lies: a bet placed at betting time, or a stake a decision added.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BlackjackPlacement {
    /// `main`, `bet_behind`, a side bet, or a stake added during the round: `split`,
    /// `double`, `insurance`.
    pub bet: String,
    /// The box (seated games).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat: Option<u8>,
    /// A split's or a double's hand (0 is the original, right-hand hand).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hand: Option<usize>,
    /// A stake of the player's Bet Behind on the box (following its split or double, or its
    /// insurance), not of the box's own play.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub behind: bool,
    pub stake_minor: i64,
}

/// A stake an input added, as logged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AddedBet {
    pub bet: String,
    pub player: String,
    pub placement: BlackjackPlacement,
}

/// A blackjack decision as the operator sends it for a player: `{"action": "double", "seat":
/// 3}`. A decision by its name alone (`"hit"`) is this object with the `action` only.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DecisionRequest {
    action: Action,
    /// The box (1 … the plan's seats), when the player owes decisions on more than one.
    #[serde(default)]
    #[schemars(range(min = 1))]
    seat: Option<u8>,
    /// The hand of the box (0 is the original, right-hand hand), after a split.
    #[serde(default)]
    hand: Option<usize>,
    /// Insurance: the stake (at most the plan's share of the main bet).
    #[serde(default)]
    #[schemars(range(min = 1))]
    stake_minor: Option<i64>,
    /// A split or a double: the Bet Behind players on the box who cannot fund it.
    #[serde(default)]
    bet_behind_declines: Vec<String>,
}

/// What the player does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Action {
    Hit,
    Stand,
    Double,
    Split,
    Surrender,
    Insurance,
    NoInsurance,
}

impl DecisionRequest {
    fn parse(v: &Value) -> Result<DecisionRequest, Refusal> {
        let v = match v {
            Value::String(s) => json!({ "action": s }),
            other => other.clone(),
        };
        DecisionRequest::deserialize(&v).map_err(|e| {
            Refusal::new(
                code::BAD_DECISION,
                format!(
                    "{v} is not a blackjack decision ({e}): {{\"action\": \"hit\" | \"stand\" | \"double\" | \"split\" | \"surrender\" | \"insurance\" | \"no_insurance\", \"seat\"?: n, \"hand\"?: n, \"stake_minor\"?: n (insurance), \"bet_behind_declines\"?: [players] (split, double)}}"
                ),
            )
        })
    }
}

/// The blackjack part of a round: the driver's state and what the round awaits.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct BlackjackRound {
    /// The driver's state: every box with its hands, insurance and Bets Behind, the dealer's
    /// cards, every card in dealing order.
    pub play: bj::RoundState,
    /// The box owners (the players of the common hand), by position.
    pub players: Vec<String>,
    /// What the round awaits now, with who owes what.
    #[schema(value_type = crate::api::schemas::BlackjackExpected)]
    pub expected: Value,
    /// Inputs applied.
    pub inputs: u64,
    /// In an operator's view while the players act: the dealer's hole card is face down, and
    /// left out of `play.dealer` and `play.dealt` until the dealer plays (the log keeps it
    /// for auditors; auditors and regulators see it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hole_card_hidden: bool,
}

impl RoundState {
    /// The round as an operator sees it while the dealer's hole card is face down (see
    /// [`BlackjackRound::masked`]); `None` when nothing is hidden.
    pub fn masked_for_operator(&self, plan: &crate::plan::LoadedPlan) -> Option<RoundState> {
        let Ok(Engine::Blackjack(eng)) = Engine::new(&plan.plan) else {
            return None;
        };
        let bj = self.blackjack.as_ref()?.masked(&eng)?;
        let mut r = self.clone();
        r.blackjack = Some(bj);
        Some(r)
    }

    /// While the dealer's hole card is face down: which card input of the round (counted from
    /// 0 over its `blackjack_input` entries carrying a card) dealt it.
    pub fn hidden_hole_card_input(&self, plan: &crate::plan::LoadedPlan) -> Option<usize> {
        let Ok(Engine::Blackjack(eng)) = Engine::new(&plan.plan) else {
            return None;
        };
        self.blackjack.as_ref()?.hidden_hole_card(&eng)
    }
}

impl BlackjackRound {
    /// The index in `play.dealt` of the dealer's hole card while it is face down.
    pub fn hidden_hole_card(&self, eng: &BlackjackEngine<'_>) -> Option<usize> {
        eng.hidden_hole_card(&self.play)
    }

    /// The round as an operator sees it: the hole card left out while it is face down.
    pub fn masked(&self, eng: &BlackjackEngine<'_>) -> Option<BlackjackRound> {
        let at = self.hidden_hole_card(eng)?;
        let mut r = self.clone();
        r.play.dealt.remove(at);
        r.play.dealer.truncate(1);
        r.hole_card_hidden = true;
        Some(r)
    }
}

/// Who owes what now: a decision on a hand, or an insurance answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Due {
    Decision {
        position: usize,
        hand: usize,
    },
    Insurance {
        position: usize,
        bet_behind: Option<usize>,
    },
}

/// The round's live bets, as the driver sees them.
pub(crate) struct Layout<'a> {
    /// For each position: its seat, owner, the owner's bets on the box (indices into `live`),
    /// its Bets Behind (indices).
    pub positions: Vec<LayoutPosition<'a>>,
}

pub(crate) struct LayoutPosition<'a> {
    pub seat: Option<u8>,
    pub owner: &'a str,
    pub own: Vec<usize>,
    pub behind: Vec<usize>,
}

fn placement(b: &BetRecord) -> &BlackjackPlacement {
    match &b.placements {
        super::Placements::Blackjack(v) => &v[0],
        _ => unreachable!("blackjack bets hold one blackjack placement"),
    }
}

/// Which placements a bet request of the family's shape makes.
pub fn place(eng: &BlackjackEngine<'_>, request: &Value) -> Result<BlackjackPlacement, Refusal> {
    let r = BlackjackBetRequest::deserialize(request)
        .map_err(|e| Refusal::new(super::game::code::MALFORMED_BET, e.to_string()))?;
    let rules = eng.rules();
    let key = eng.plan().key();
    let seating = &rules.seating;
    match (seating.model, r.seat) {
        (SeatingModel::CommonHand, Some(s)) => {
            return Err(Refusal::new(
                code::NO_SEATS,
                format!("{key} is played on one common hand: a bet names no box (seat {s})"),
            )
            .with_plan(&key)
            .clause(seating.clause.clone()))
        }
        (SeatingModel::Seats, None) => {
            return Err(Refusal::new(
                code::SEAT_REQUIRED,
                format!(
                    "a bet at {key} names its box: \"seat\": 1 … {}",
                    seating.seats.unwrap_or(1)
                ),
            )
            .with_plan(&key)
            .clause(seating.clause.clone()))
        }
        (SeatingModel::Seats, Some(s)) if s == 0 || s > seating.seats.unwrap_or(0) => {
            return Err(Refusal::new(
                code::NO_SUCH_SEAT,
                format!(
                    "{key} has boxes 1 … {}, not {s}",
                    seating.seats.unwrap_or(0)
                ),
            )
            .with_plan(&key)
            .clause(seating.clause.clone()))
        }
        _ => {}
    }
    if r.bet == "bet_behind" {
        // Where it may go is checked against the round (the box's main bet and owner).
        eng.check_bet_behind_box(true, false)?;
        eng.check_stake("bet_behind", r.stake_minor)?;
    } else {
        eng.check_bets(&[BlackjackBet {
            bet: r.bet.clone(),
            stake_minor: r.stake_minor,
        }])
        .or_else(|e| {
            // A side bet alone is checked with the box's other bets in `check_round`.
            if e.code == bj::code::REQUIRES_MISSING {
                Ok(())
            } else {
                Err(e)
            }
        })?;
    }
    Ok(BlackjackPlacement {
        bet: r.bet,
        seat: r.seat,
        hand: None,
        behind: false,
        stake_minor: r.stake_minor,
    })
}

/// A new bet against the round's live bets and those accepted earlier in the request
/// (`others`, with their players).
pub fn check_round<'a>(
    eng: &BlackjackEngine<'_>,
    others: impl Iterator<Item = (&'a str, &'a BlackjackPlacement)> + Clone,
    player: &str,
    new: &BlackjackPlacement,
) -> Result<(), Refusal> {
    let rules = eng.rules();
    let key = eng.plan().key();
    // The owner of a box: the player whose main bet is on it (a common hand has no boxes).
    let main_owner = |seat: Option<u8>| {
        seat.and_then(|s| {
            others
                .clone()
                .find(|(_, p)| p.bet == "main" && p.seat == Some(s))
                .map(|(pl, _)| pl)
        })
    };
    if new.bet == "bet_behind" {
        let owner = main_owner(new.seat);
        eng.check_bet_behind_box(owner.is_some(), owner == Some(player))?;
        if others
            .clone()
            .any(|(pl, p)| pl == player && p.bet == "bet_behind" && p.seat == new.seat)
        {
            return Err(Refusal::new(
                bj::code::DUPLICATE_BET,
                format!(
                    "{player} already has a Bet Behind on box {}",
                    new.seat.unwrap_or(0)
                ),
            )
            .with_plan(&key)
            .clause(rules.bet_behind.clause.clone()));
        }
        return Ok(());
    }
    if new.bet == "main" {
        if let Some(s) = new.seat {
            // A box is a round's: the player whose main bet is on it holds it this round.
            if let Some(h) = main_owner(Some(s)).filter(|h| *h != player) {
                return Err(Refusal::new(
                    code::SEAT_TAKEN,
                    format!("box {s} is {h}'s: a player bets on a free box or his own"),
                )
                .with_plan(&key)
                .clause(rules.seating.clause.clone()));
            }
            let mut owners: Vec<&str> = others
                .clone()
                .filter(|(_, p)| p.bet == "main")
                .map(|(pl, _)| pl)
                .collect();
            owners.push(player);
            owners.sort_unstable();
            owners.dedup();
            if let Some(max) = rules.seating.max_players {
                if owners.len() > usize::from(max) {
                    return Err(Refusal::new(
                        bj::code::TOO_MANY_PLAYERS,
                        format!("{key} seats at most {max} players"),
                    )
                    .with_plan(&key)
                    .clause(rules.seating.clause.clone()));
                }
            }
        }
    }
    // The player's own bets on the box, with the new one: offered, no type twice, and what
    // each requires (a side bet goes with the main bet).
    let mut box_bets: Vec<BlackjackBet> = others
        .filter(|(pl, p)| *pl == player && p.seat == new.seat && p.bet != "bet_behind")
        .map(|(_, p)| BlackjackBet {
            bet: p.bet.clone(),
            stake_minor: p.stake_minor,
        })
        .collect();
    box_bets.push(BlackjackBet {
        bet: new.bet.clone(),
        stake_minor: new.stake_minor,
    });
    eng.check_bets(&box_bets)
}

/// The round's live bets laid out as the driver's positions.
pub(crate) fn layout<'a>(eng: &BlackjackEngine<'_>, live: &[&'a BetRecord]) -> Layout<'a> {
    let common = eng.rules().seating.model == SeatingModel::CommonHand;
    let mut positions: Vec<LayoutPosition<'a>> = Vec::new();
    for (i, b) in live.iter().enumerate() {
        let p = placement(b);
        if p.bet == "main" {
            positions.push(LayoutPosition {
                seat: p.seat,
                owner: &b.player,
                own: vec![i],
                behind: Vec::new(),
            });
        }
    }
    if !common {
        positions.sort_by_key(|p| p.seat);
    }
    for (i, b) in live.iter().enumerate() {
        let p = placement(b);
        if p.bet == "main" || p.hand.is_some() || PLAY_STAKES.contains(&p.bet.as_str()) {
            continue;
        }
        let pos = positions.iter_mut().find(|q| {
            if common {
                q.owner == b.player
            } else {
                q.seat == p.seat && (p.bet == "bet_behind" || q.owner == b.player)
            }
        });
        if let Some(pos) = pos {
            if p.bet == "bet_behind" {
                pos.behind.push(i);
            } else {
                pos.own.push(i);
            }
        }
    }
    Layout { positions }
}

/// Stakes that decisions add.
const PLAY_STAKES: &[&str] = &["split", "double", "insurance"];

/// Opens the driver's round for the round's live bets.
pub(crate) fn open(
    eng: &BlackjackEngine<'_>,
    bets: &[BetRecord],
) -> Result<BlackjackRound, Refusal> {
    let live: Vec<&BetRecord> = bets.iter().filter(|b| !b.refunded).collect();
    let lay = layout(eng, &live);
    let setup = RoundSetup {
        positions: lay
            .positions
            .iter()
            .map(|p| PositionBets {
                seat: p.seat,
                player: p.owner.to_string(),
                bets: p
                    .own
                    .iter()
                    .map(|&i| {
                        let pl = placement(live[i]);
                        BlackjackBet {
                            bet: pl.bet.clone(),
                            stake_minor: pl.stake_minor,
                        }
                    })
                    .collect(),
                bets_behind: p
                    .behind
                    .iter()
                    .map(|&i| BetBehindBet {
                        player: live[i].player.clone(),
                        stake_minor: live[i].stake_minor,
                    })
                    .collect(),
            })
            .collect(),
    };
    let play = eng.open_round(&setup)?;
    let players = lay.positions.iter().map(|p| p.owner.to_string()).collect();
    let mut round = BlackjackRound {
        play,
        players,
        expected: Value::Null,
        inputs: 0,
        hole_card_hidden: false,
    };
    round.expected = expected(eng, &round, &live);
    Ok(round)
}

/// Who owes what now.
pub(crate) fn due(eng: &BlackjackEngine<'_>, play: &bj::RoundState) -> Vec<Due> {
    let mut out: Vec<Due> = eng
        .pending_insurance(play)
        .into_iter()
        .map(|(position, bet_behind)| Due::Insurance {
            position,
            bet_behind,
        })
        .collect();
    out.extend(
        eng.pending_decisions(play)
            .into_iter()
            .map(|(position, hand)| Due::Decision { position, hand }),
    );
    out
}

/// The player who owes `d`.
fn player_of<'a>(round: &'a BlackjackRound, live: &[&'a BetRecord], d: &Due) -> &'a str {
    match *d {
        Due::Decision { position, .. }
        | Due::Insurance {
            position,
            bet_behind: None,
        } => &round.players[position],
        Due::Insurance {
            position,
            bet_behind: Some(j),
        } => bets_behind_players(round, live, position)
            .get(j)
            .copied()
            .unwrap_or(""),
    }
}

/// The players of the Bets Behind on `position`, in the order placed.
fn bets_behind_players<'a>(
    round: &BlackjackRound,
    live: &[&'a BetRecord],
    position: usize,
) -> Vec<&'a str> {
    let seat = round.play.positions[position].seat;
    live.iter()
        .filter(|b| {
            let p = placement(b);
            p.bet == "bet_behind" && p.seat == seat
        })
        .map(|b| b.player.as_str())
        .collect()
}

/// The players who owe something now, in order, each once.
pub(crate) fn pending_players(
    eng: &BlackjackEngine<'_>,
    round: &BlackjackRound,
    live: &[&BetRecord],
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for d in due(eng, &round.play) {
        let p = player_of(round, live, &d);
        if !out.iter().any(|q| q == p) {
            out.push(p.to_string());
        }
    }
    out
}

/// What the round awaits, for readers: the next step and, for each decision or insurance
/// answer due, the player, the box, the hand and the legal decisions.
fn expected(eng: &BlackjackEngine<'_>, round: &BlackjackRound, live: &[&BetRecord]) -> Value {
    let next = eng.next_step(&round.play);
    let dues: Vec<Value> = due(eng, &round.play)
        .iter()
        .map(|d| {
            let player = player_of(round, live, d);
            match *d {
                Due::Decision { position, hand } => json!({
                    "player": player,
                    "seat": round.play.positions[position].seat,
                    "position": position,
                    "hand": hand,
                    "cards": round.play.positions[position].play.hands[hand].cards,
                    "total": eng.value(&round.play.positions[position].play.hands[hand].cards).total,
                    "legal": eng.legal_decisions(&round.play.positions[position].play.hands, hand),
                }),
                Due::Insurance {
                    position,
                    bet_behind,
                } => json!({
                    "player": player,
                    "seat": round.play.positions[position].seat,
                    "position": position,
                    "insurance": true,
                    "bet_behind": bet_behind.is_some(),
                }),
            }
        })
        .collect();
    json!({ "next": next, "due": dues })
}

/// What a party of a position has staked so far: the box's own play (`None`) or its Bet
/// Behind `j`. Equal to what the settlement settles for it.
fn committed(play: &bj::RoundState, position: usize, party: Option<usize>) -> i64 {
    let p = &play.positions[position];
    match party {
        None => {
            let m = p.play.main_stake_minor;
            let hands = p.play.hands.len() as i64;
            let doubled = p.play.hands.iter().filter(|h| h.doubled).count() as i64;
            m * hands + m * doubled + p.play.insurance_stake_minor.unwrap_or(0)
        }
        Some(j) => {
            let b = &p.bets_behind[j].bet;
            let followed = if p.play.hands.len() > 1 && !b.split_funded {
                1
            } else {
                p.play.hands.len() as i64
            };
            b.stake_minor * followed
                + b.stake_minor * b.doubles_funded.len() as i64
                + b.insurance_stake_minor.unwrap_or(0)
        }
    }
}

/// Applies one logged input (with the Bet Behind declines that came with a split or a
/// double) and derives the stakes it added: one bet per party whose stake grew, named by the
/// input (`split`, `double`, `insurance`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn apply_input(
    eng: &BlackjackEngine<'_>,
    round: &mut BlackjackRound,
    live: &[&BetRecord],
    round_id: &str,
    first_bet_index: usize,
    input: &Input,
    declines: &[Input],
) -> Result<Vec<AddedBet>, Refusal> {
    let before = round.play.clone();
    eng.apply(&mut round.play, input)?;
    for d in declines {
        if !matches!(
            d,
            Input::BetBehindDeclinesSplit { .. } | Input::BetBehindDeclinesDouble { .. }
        ) {
            round.play = before;
            return Err(Refusal::new(
                code::BAD_DECISION,
                "only a Bet Behind's decline follows a decision",
            ));
        }
        if let Err(e) = eng.apply(&mut round.play, d) {
            round.play = before;
            return Err(e);
        }
    }
    round.inputs += 1;
    let (bet, hand) = match *input {
        Input::Decide {
            decision: Decision::Split,
            hand,
            ..
        } => ("split", Some(hand)),
        Input::Decide {
            decision: Decision::Double,
            hand,
            ..
        } => ("double", Some(hand)),
        Input::TimedOut { hand, .. } => {
            // An automatic decision is hit or stand: it adds no stake.
            let _ = hand;
            ("", None)
        }
        Input::Insure { .. } => ("insurance", None),
        _ => ("", None),
    };
    let mut added = Vec::new();
    if !bet.is_empty() {
        let mut next = first_bet_index;
        for (i, p) in round.play.positions.iter().enumerate() {
            let parties = std::iter::once(None).chain((0..p.bets_behind.len()).map(Some));
            for party in parties {
                let delta = committed(&round.play, i, party) - committed(&before, i, party);
                if delta <= 0 {
                    continue;
                }
                let player = match party {
                    None => round.players[i].clone(),
                    Some(j) => bets_behind_players(round, live, i)
                        .get(j)
                        .copied()
                        .unwrap_or_default()
                        .to_string(),
                };
                added.push(AddedBet {
                    bet: bet_id(round_id, next),
                    player,
                    placement: BlackjackPlacement {
                        bet: bet.to_string(),
                        seat: p.seat,
                        hand,
                        behind: party.is_some(),
                        stake_minor: delta,
                    },
                });
                next += 1;
            }
        }
    }
    Ok(added)
}

/// Recomputes what the round awaits (after the state changed).
pub(crate) fn refresh(eng: &BlackjackEngine<'_>, round: &mut BlackjackRound, live: &[&BetRecord]) {
    round.expected = expected(eng, round, live);
}

/// Whether an input makes a new decision or insurance answer due: its time starts then.
pub(crate) fn starts_new_time(before: &[Due], after: &[Due]) -> bool {
    after.iter().any(|d| !before.contains(d))
}

/// The settlement of a complete round: per box its own play (main, splits, doubles,
/// insurance, surrender) as one settlement, each side bet, each Bet Behind with what it
/// followed.
pub(crate) fn settle(
    eng: &BlackjackEngine<'_>,
    live: &[&BetRecord],
    round: &BlackjackRound,
) -> Result<Vec<Settled>, Refusal> {
    let s = eng.settle_round(&round.play)?;
    let lay = layout(eng, live);
    let mut out = Vec::new();
    for (i, (pos, ps)) in lay.positions.iter().zip(&s.positions).enumerate() {
        let seat = pos.seat;
        let owner = pos.owner;
        // The box's own play: its main bet and the stakes its decisions added.
        let main = pos.own[0];
        let mut own = vec![main];
        own.extend(live.iter().enumerate().filter_map(|(k, b)| {
            let p = placement(b);
            (PLAY_STAKES.contains(&p.bet.as_str())
                && !p.behind
                && p.seat == seat
                && b.player == owner)
                .then_some(k)
        }));
        out.push(Settled {
            bets: own,
            components: ps.main.stakes.iter().map(|st| st.payout.clone()).collect(),
            detail: Some(json!({
                "seat": seat,
                "position": i,
                "hands": round.play.positions[i].play.hands,
                "results": ps.main.results,
                "stakes": ps.main.stakes,
            })),
        });
        for (k, sb) in pos.own[1..].iter().zip(&ps.side_bets) {
            out.push(Settled {
                bets: vec![*k],
                components: vec![sb.payout.clone()],
                detail: Some(json!({
                    "seat": seat,
                    "first_cards": round.play.positions[i].first_cards,
                    "dealer": round.play.dealer,
                })),
            });
        }
        for (k, bbs) in pos.behind.iter().zip(&ps.bets_behind) {
            let bb_player = &live[*k].player;
            let mut bets = vec![*k];
            bets.extend(live.iter().enumerate().filter_map(|(m, b)| {
                let p = placement(b);
                (p.behind && p.seat == seat && &b.player == bb_player).then_some(m)
            }));
            out.push(Settled {
                bets,
                components: bbs.stakes.iter().map(|st| st.payout.clone()).collect(),
                detail: Some(json!({
                    "seat": seat,
                    "results": bbs.results,
                    "stakes": bbs.stakes,
                })),
            });
        }
    }
    Ok(out)
}

/// The result of a complete round, as logged and shown: the dealer's hand and every box's.
pub(crate) fn outcome(eng: &BlackjackEngine<'_>, round: &BlackjackRound) -> Value {
    let dealer = &round.play.dealer;
    let dv = eng.value(dealer);
    json!({
        "dealer": {
            "cards": dealer,
            "total": dv.total,
            "soft": dv.soft,
            "blackjack": eng.dealer_has_blackjack(dealer),
            "bust": dv.is_bust(),
        },
        "positions": round.play.positions.iter().zip(&round.players).map(|(p, player)| json!({
            "seat": p.seat,
            "player": player,
            "hands": p.play.hands.iter().map(|h| {
                let v = eng.value(&h.cards);
                json!({
                    "cards": h.cards,
                    "total": v.total,
                    "result": eng.hand_result(h, dealer),
                    "doubled": h.doubled,
                    "surrendered": h.surrendered,
                    "from_split": h.from_split,
                })
            }).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

/// The inputs a decision request asks for, with who owes it: the driver's input and, for a
/// split or a double, the Bet Behind declines.
pub(crate) fn decision_inputs(
    eng: &BlackjackEngine<'_>,
    round: &BlackjackRound,
    live: &[&BetRecord],
    player: &str,
    decision: &Value,
) -> Result<(Input, Vec<Input>), Refusal> {
    let d = DecisionRequest::parse(decision)?;
    let key = eng.plan().key();
    let dues = due(eng, &round.play);
    let insurance = matches!(d.action, Action::Insurance | Action::NoInsurance);
    let mine: Vec<&Due> = dues
        .iter()
        .filter(|x| player_of(round, live, x) == player)
        .filter(|x| match x {
            Due::Decision { position, hand } => {
                !insurance
                    && d.seat
                        .is_none_or(|s| round.play.positions[*position].seat == Some(s))
                    && d.hand.is_none_or(|h| h == *hand)
            }
            Due::Insurance { position, .. } => {
                insurance
                    && d.seat
                        .is_none_or(|s| round.play.positions[*position].seat == Some(s))
            }
        })
        .collect();
    let due = match mine[..] {
        [one] => one.clone(),
        [] => {
            return Err(Refusal::new(
                code::NO_DECISION_OWED,
                format!(
                    "{player} owes no {} now{}; the round awaits {}",
                    if insurance {
                        "insurance answer"
                    } else {
                        "decision"
                    },
                    d.seat.map(|s| format!(" on box {s}")).unwrap_or_default(),
                    round.expected
                ),
            )
            .with_plan(&key)
            .clause(if insurance {
                eng.rules().insurance.clause.clone()
            } else {
                eng.rules().clause.clone()
            }))
        }
        _ => {
            return Err(Refusal::new(
                code::AMBIGUOUS_DECISION,
                format!("{player} owes several decisions now: name the box (\"seat\")"),
            )
            .with_plan(&key))
        }
    };
    let refuse_extra = |what: &str| {
        Refusal::new(
            code::BAD_DECISION,
            format!(
                "\"{what}\" does not go with \"{}\"",
                crate::games::wire_name(&d.action)
            ),
        )
        .with_plan(&key)
    };
    if d.stake_minor.is_some() && d.action != Action::Insurance {
        return Err(refuse_extra("stake_minor"));
    }
    if !d.bet_behind_declines.is_empty() && !matches!(d.action, Action::Split | Action::Double) {
        return Err(refuse_extra("bet_behind_declines"));
    }
    match (due, d.action) {
        (
            Due::Insurance {
                position,
                bet_behind,
            },
            Action::Insurance,
        ) => {
            let stake_minor = d.stake_minor.ok_or_else(|| {
                Refusal::new(
                    code::BAD_DECISION,
                    "insurance names its stake (\"stake_minor\")",
                )
                .with_plan(&key)
                .clause(eng.rules().insurance.clause.clone())
            })?;
            Ok((
                Input::Insure {
                    position,
                    bet_behind,
                    stake_minor,
                },
                Vec::new(),
            ))
        }
        (
            Due::Insurance {
                position,
                bet_behind,
            },
            _,
        ) => Ok((
            Input::DeclineInsurance {
                position,
                bet_behind,
            },
            Vec::new(),
        )),
        (Due::Decision { position, hand }, action) => {
            let decision = match action {
                Action::Hit => Decision::Hit,
                Action::Stand => Decision::Stand,
                Action::Double => Decision::Double,
                Action::Split => Decision::Split,
                Action::Surrender => Decision::Surrender,
                Action::Insurance | Action::NoInsurance => unreachable!("filtered above"),
            };
            let bbs = bets_behind_players(round, live, position);
            let mut declines = Vec::new();
            for name in &d.bet_behind_declines {
                let Some(j) = bbs.iter().position(|p| p == name) else {
                    return Err(Refusal::new(
                        code::BAD_DECISION,
                        format!("{name} has no Bet Behind on this box to decline with"),
                    )
                    .with_plan(&key)
                    .clause(eng.rules().bet_behind.clause.clone()));
                };
                declines.push(match decision {
                    Decision::Split => Input::BetBehindDeclinesSplit {
                        position,
                        bet_behind: j,
                    },
                    _ => Input::BetBehindDeclinesDouble {
                        position,
                        bet_behind: j,
                        hand,
                    },
                });
            }
            Ok((
                Input::Decide {
                    position,
                    hand,
                    decision,
                },
                declines,
            ))
        }
    }
}

/// The time-outs for what is due once the time has run out: the plan's automatic decision
/// for every hand due, the close of an open insurance offer.
pub(crate) fn time_outs(eng: &BlackjackEngine<'_>, round: &BlackjackRound) -> Vec<Input> {
    let dues = due(eng, &round.play);
    if dues.iter().any(|d| matches!(d, Due::Insurance { .. })) {
        return vec![Input::CloseInsurance];
    }
    dues.into_iter()
        .filter_map(|d| match d {
            Due::Decision { position, hand } => Some(Input::TimedOut { position, hand }),
            Due::Insurance { .. } => None,
        })
        .collect()
}

/// Whether the dealt cards of an RNG round are the start of its seed's shoe.
pub(crate) fn rng_cards_match(eng: &BlackjackEngine<'_>, seed: [u8; 32], dealt: &[Card]) -> bool {
    let shoe = bj::shuffled_shoe(eng.rules().shoe, seed);
    shoe.get(..dealt.len()) == Some(dealt)
}

/// How an input came: a card with its source, a player's decision, or the plan's automatic
/// decision.
pub(crate) enum Origin {
    Card(Mode),
    Player(String),
    Automatic {
        player: Option<String>,
        reason: String,
    },
}

/// A request's work on a blackjack round: the state as the request advances it, and the
/// events so far. What `State::apply` will do with each event, done here first on a copy.
pub(crate) struct Session<'a, 'p> {
    pub eng: &'a BlackjackEngine<'p>,
    pub round: String,
    pub bets: Vec<BetRecord>,
    pub bj: BlackjackRound,
    pub shoe: Option<ShoeState>,
    pub deadline: Option<DateTime<Utc>>,
    pub decision_ms: u64,
    pub events: Vec<Event>,
}

impl<'a, 'p> Session<'a, 'p> {
    /// The round as a request finds it (its driver's round opened at the first card).
    pub fn of(
        eng: &'a BlackjackEngine<'p>,
        r: &RoundState,
        table: &TableState,
    ) -> Result<Session<'a, 'p>, Refusal> {
        let bj = match &r.blackjack {
            Some(b) => b.clone(),
            None => open(eng, &r.bets)?,
        };
        Ok(Session {
            eng,
            round: r.round.clone(),
            bets: r.bets.clone(),
            bj,
            shoe: (table.mode == Mode::Live)
                .then(|| table.shoe.clone())
                .flatten(),
            deadline: r.decision_deadline,
            decision_ms: table.loaded.plan.policies.timing.decision_ms.unwrap_or(0),
            events: Vec::new(),
        })
    }

    pub fn next(&self) -> bj::Next {
        self.eng.next_step(&self.bj.play)
    }

    pub fn live(&self) -> Vec<&BetRecord> {
        self.bets.iter().filter(|b| !b.refunded).collect()
    }

    /// Applies one input and records its event.
    pub fn push(
        &mut self,
        input: Input,
        declines: Vec<Input>,
        origin: Origin,
        now: DateTime<Utc>,
    ) -> Result<(), Refusal> {
        let to = match (input, self.next()) {
            (Input::Card { card }, bj::Next::Card { to }) => {
                if let Some(shoe) = &self.shoe {
                    if !shoe.holds(card) {
                        return Err(Refusal::new(
                            super::game::code::CARD_NOT_IN_SHOE,
                            format!(
                                "{card} cannot come out of the shoe: its {} deck(s) hold {} cop(ies) and every one has been dealt since the last shuffle ({} cards seen)",
                                shoe.shoe.decks,
                                shoe.shoe.copies_of(card),
                                shoe.cards_seen
                            ),
                        )
                        .with_plan(&self.eng.plan().key())
                        .clause(self.eng.rules().clause.clone()));
                    }
                }
                Some(to)
            }
            _ => None,
        };
        let added = step(
            self.eng,
            &mut self.bj,
            &mut self.bets,
            &self.round,
            &input,
            &declines,
            now,
            self.decision_ms,
            &mut self.deadline,
        )?;
        if let (Input::Card { card }, Some(shoe)) = (input, &mut self.shoe) {
            shoe.take(card);
        }
        let (source, player, automatic, reason) = match origin {
            Origin::Card(m) => (Some(m), None, false, None),
            Origin::Player(p) => (None, Some(p), false, None),
            Origin::Automatic { player, reason } => (None, player, true, Some(reason)),
        };
        self.events.push(Event::BlackjackInput {
            round: self.round.clone(),
            input,
            bet_behind_declines: declines,
            to,
            source,
            player,
            automatic,
            reason,
            bets: added,
            at: now,
        });
        Ok(())
    }

    /// The plan's automatic decisions for what is due, once its time has run out.
    pub fn time_out(
        &mut self,
        disconnected: &BTreeSet<String>,
        now: DateTime<Utc>,
    ) -> Result<(), Refusal> {
        for input in time_outs(self.eng, &self.bj) {
            let player = match input {
                Input::TimedOut { position, .. } => Some(self.bj.players[position].clone()),
                _ => None,
            };
            let reason = if player.as_ref().is_some_and(|p| disconnected.contains(p)) {
                "disconnected"
            } else {
                "time_out"
            };
            self.push(
                input,
                Vec::new(),
                Origin::Automatic {
                    player,
                    reason: reason.into(),
                },
                now,
            )?;
        }
        Ok(())
    }

    /// Whether something is due whose time has not run out.
    pub fn waiting(&self, now: DateTime<Utc>) -> bool {
        !due(self.eng, &self.bj.play).is_empty() && self.deadline.is_some_and(|d| now < d)
    }

    /// A complete round's outcome and settlement.
    pub fn settle_if_complete(&mut self, rng_seed: Option<String>) -> Result<bool, Refusal> {
        if self.next() != bj::Next::Complete {
            return Ok(false);
        }
        let live = self.live();
        let settled = settle(self.eng, &live, &self.bj)?;
        let settlements = super::bet_settlements(&live, settled)?;
        let stake_minor = settlements.iter().map(|s| s.stake_minor).sum();
        let paid_minor = settlements.iter().map(|s| s.total_minor).sum();
        let source = if rng_seed.is_some() {
            Mode::Rng
        } else {
            Mode::Live
        };
        let outcome = outcome(self.eng, &self.bj);
        self.events.push(Event::OutcomeRecorded {
            round: self.round.clone(),
            outcome,
            source,
        });
        self.events.push(Event::RoundSettled {
            round: self.round.clone(),
            settlements,
            stake_minor,
            paid_minor,
            rng_seed,
        });
        Ok(true)
    }
}

/// One input applied to the round: the driver's state, the bets it added, and the decision
/// deadline (a decision or insurance answer newly due starts its time now). The decide side
/// and the replay run exactly this.
#[allow(clippy::too_many_arguments)]
pub(crate) fn step(
    eng: &BlackjackEngine<'_>,
    bj: &mut BlackjackRound,
    bets: &mut Vec<BetRecord>,
    round: &str,
    input: &Input,
    declines: &[Input],
    at: DateTime<Utc>,
    decision_ms: u64,
    deadline: &mut Option<DateTime<Utc>>,
) -> Result<Vec<AddedBet>, Refusal> {
    let before = due(eng, &bj.play);
    let added = {
        let live: Vec<&BetRecord> = bets.iter().filter(|b| !b.refunded).collect();
        apply_input(eng, bj, &live, round, bets.len(), input, declines)?
    };
    for a in &added {
        bets.push(BetRecord {
            bet: a.bet.clone(),
            player: a.player.clone(),
            request: super::raw(&json!({ "decision": input })),
            placements: super::Placements::Blackjack(vec![a.placement.clone()]),
            stake_minor: a.placement.stake_minor,
            refunded: false,
            snapshot: Default::default(),
        });
    }
    let after = due(eng, &bj.play);
    if after.is_empty() {
        *deadline = None;
    } else if starts_new_time(&before, &after) {
        *deadline = Some(super::after_ms(at, decision_ms));
    }
    let live: Vec<&BetRecord> = bets.iter().filter(|b| !b.refunded).collect();
    refresh(eng, bj, &live);
    Ok(added)
}

impl State {
    /// Live blackjack cards (in dealing order; the rules place each) or an RNG deal (from the
    /// round's seed, up to what the players owe or the end of the round). A decision or an
    /// insurance answer still in its time refuses a card (`decisions_open`); one whose time
    /// has run out is taken automatically first.
    pub(crate) fn decide_blackjack_cards(
        &self,
        r: &RoundState,
        eng: &BlackjackEngine<'_>,
        now: DateTime<Utc>,
        cards: CardsFrom<'_>,
    ) -> Result<Vec<Event>, Refusal> {
        let table = &self.tables[&r.table];
        let key = table.loaded.key();
        // The round's bets cannot be dealt (too few players for the plan): nothing more can
        // be bet, so the operator voids the round.
        let mut s = Session::of(eng, r, table).map_err(|e| Refusal {
            message: format!(
                "{}. Nothing is dealt: betting is closed, so void the round to return every stake",
                e.message
            ),
            ..e
        })?;
        let (shoe, seed) = match cards {
            CardsFrom::Live(_) => (None, None),
            CardsFrom::Seed(seed) => {
                let shoe = bj::shuffled_shoe(eng.rules().shoe, seed);
                if shoe.get(..s.bj.play.dealt.len()) != Some(&s.bj.play.dealt[..]) {
                    return Err(Refusal::new(
                        "rng_mismatch",
                        format!(
                            "the cards of round {} are not the deal of its committed seed",
                            r.round
                        ),
                    ));
                }
                (Some(shoe), Some(crate::plan::canonical::hex(&seed)))
            }
        };
        let mut live_cards = match cards {
            CardsFrom::Live(c) => c.iter().copied().enumerate().collect::<Vec<_>>(),
            CardsFrom::Seed(_) => Vec::new(),
        }
        .into_iter();
        loop {
            match s.next() {
                bj::Next::Complete => break,
                bj::Next::Insurance | bj::Next::Decision { .. } => {
                    if s.waiting(now) {
                        if shoe.is_none() && live_cards.len() > 0 {
                            let d = s.deadline.unwrap_or(now);
                            return Err(Refusal::new(
                                "decisions_open",
                                format!(
                                    "the round awaits {} until {d}: a card comes after the players have decided or their time has run out",
                                    s.bj.expected
                                ),
                            )
                            .with_plan(&key)
                            .clause(super::timeout_clause(&table.loaded)));
                        }
                        break;
                    }
                    s.time_out(&table.disconnected, now)?;
                }
                bj::Next::Card { .. } => {
                    let (card, origin, what) = match &shoe {
                        Some(shoe) => {
                            let Some(card) = shoe.get(s.bj.play.dealt.len()).copied() else {
                                return Err(Refusal::new(
                                    "rng_exhausted",
                                    format!(
                                        "the shoe of round {}'s seed has no further card",
                                        r.round
                                    ),
                                ));
                            };
                            (card, Origin::Card(Mode::Rng), None)
                        }
                        None => match live_cards.next() {
                            Some((i, c)) => (c, Origin::Card(Mode::Live), Some(i)),
                            None => break,
                        },
                    };
                    if let Err(e) = s.push(Input::Card { card }, Vec::new(), origin, now) {
                        let e = e.with_plan(&key);
                        return Err(match what {
                            Some(i) => Refusal {
                                message: format!(
                                    "card {} of the request ({card}): {}. Nothing of this request is recorded; the round is paused under the plan's error policy ({}): report the right card, or void the round to return every stake",
                                    i + 1,
                                    e.message,
                                    table.loaded.plan.policies.error.clause
                                ),
                                ..e
                            },
                            None => e,
                        });
                    }
                }
            }
        }
        if let Some((i, c)) = live_cards.next() {
            return Err(Refusal::new(
                bj::code::CARD_NOT_EXPECTED,
                format!(
                    "card {} of the request ({c}) comes after the round is complete",
                    i + 1
                ),
            )
            .with_plan(&key)
            .clause(eng.rules().clause.clone()));
        }
        s.settle_if_complete(seed)?;
        if s.events.is_empty() {
            return Err(Refusal::new(
                "decisions_open",
                format!(
                    "the round awaits {} until {}: nothing to deal",
                    s.bj.expected,
                    s.deadline.map(|d| d.to_string()).unwrap_or_default()
                ),
            )
            .with_plan(&key)
            .clause(super::timeout_clause(&table.loaded)));
        }
        Ok(s.events)
    }

    /// Players' decisions and insurance answers, each taken or refused on its own.
    pub(crate) fn decide_blackjack_decisions(
        &self,
        r: &RoundState,
        eng: &BlackjackEngine<'_>,
        now: DateTime<Utc>,
        decisions: &[(String, Value)],
        rng_seed: Option<[u8; 32]>,
    ) -> Result<Vec<Event>, Refusal> {
        let table = &self.tables[&r.table];
        let key = table.loaded.key();
        if r.blackjack.is_none() || r.phase != Phase::Decisions {
            return Err(Refusal::new(
                "out_of_order",
                format!("round {} awaits no decision now", r.round),
            ));
        }
        let mut s = Session::of(eng, r, table)?;
        for (player, decision) in decisions {
            let refused = |refusal: Refusal| Event::EventRefused {
                round: r.round.clone(),
                event: json!({"type": "decision", "player": player, "decision": decision}),
                refusal: refusal.with_plan(&key),
            };
            if let Some(d) = s.deadline.filter(|d| now > *d) {
                s.events.push(refused(
                    Refusal::new(
                        "decision_too_late",
                        format!("the decision time ended at {d}: the plan decides for {player}"),
                    )
                    .clause(super::timeout_clause(&table.loaded)),
                ));
                continue;
            }
            if table.disconnected.contains(player) {
                s.events.push(refused(Refusal::new(
                    "player_disconnected",
                    format!("player {player} is disconnected from table {}", r.table),
                )));
                continue;
            }
            let inputs = {
                let live = s.live();
                decision_inputs(eng, &s.bj, &live, player, decision)
            };
            let (input, declines) = match inputs {
                Ok(x) => x,
                Err(e) => {
                    s.events.push(refused(e));
                    continue;
                }
            };
            if let Err(e) = s.push(input, declines, Origin::Player(player.clone()), now) {
                s.events.push(refused(e));
            }
        }
        // An RNG round that a decision completes (the dealer needs no further card) reveals
        // its seed as a deal would.
        s.settle_if_complete(rng_seed.map(|seed| crate::plan::canonical::hex(&seed)))?;
        Ok(s.events)
    }

    /// The dealer system ends the decision time: refused while it runs.
    pub(crate) fn decide_blackjack_close(
        &self,
        r: &RoundState,
        eng: &BlackjackEngine<'_>,
        now: DateTime<Utc>,
        rng_seed: Option<[u8; 32]>,
    ) -> Result<Vec<Event>, Refusal> {
        let table = &self.tables[&r.table];
        let mut s = Session::of(eng, r, table)?;
        if s.waiting(now) {
            return Err(Refusal::new(
                "decisions_open",
                format!(
                    "the round awaits {} until {}",
                    s.bj.expected,
                    s.deadline.map(|d| d.to_string()).unwrap_or_default()
                ),
            )
            .with_plan(&table.loaded.key())
            .clause(super::timeout_clause(&table.loaded)));
        }
        s.time_out(&table.disconnected, now)?;
        s.settle_if_complete(rng_seed.map(|seed| crate::plan::canonical::hex(&seed)))?;
        Ok(s.events)
    }

    /// Folds a `blackjack_input` event into the round: the same step the decision ran, and
    /// the logged card position and added bets checked against it.
    pub(crate) fn apply_blackjack_input(&mut self, event: &Event) -> Result<(), String> {
        let Event::BlackjackInput {
            round,
            input,
            bet_behind_declines,
            to,
            source,
            bets,
            at,
            ..
        } = event
        else {
            unreachable!("called for blackjack_input events")
        };
        let r = self.rounds.get(round).ok_or("input of an unknown round")?;
        let table = r.table.clone();
        let plan = self.plan_of_round(r);
        let Engine::Blackjack(eng) = Engine::new(&plan.plan).map_err(|e| e.to_string())? else {
            return Err(format!("round {round}: a blackjack input at another game"));
        };
        let mut bj = match &r.blackjack {
            Some(b) => b.clone(),
            None => open(&eng, &r.bets).map_err(|e| format!("round {round}: {e}"))?,
        };
        if let (Input::Card { .. }, bj::Next::Card { to: expected }) =
            (input, eng.next_step(&bj.play))
        {
            if *to != Some(expected) {
                return Err(format!(
                    "round {round}: a card logged to {}, the rules deal it to {expected}",
                    to.map_or_else(|| "no place".to_string(), |t| t.to_string())
                ));
            }
        }
        let r = self.rounds.get_mut(round).expect("checked above");
        let mut deadline = r.decision_deadline;
        let derived = step(
            &eng,
            &mut bj,
            &mut r.bets,
            round,
            input,
            bet_behind_declines,
            *at,
            plan.plan.policies.timing.decision_ms.unwrap_or(0),
            &mut deadline,
        )
        .map_err(|e| format!("round {round}: a logged input the rules refuse: {e}"))?;
        if &derived != bets {
            return Err(format!(
                "round {round}: the logged stakes of an input differ from the ones the rules derive"
            ));
        }
        let live: Vec<&BetRecord> = r.bets.iter().filter(|b| !b.refunded).collect();
        r.decisions_pending = pending_players(&eng, &bj, &live);
        r.decision_deadline = deadline;
        r.phase = phase_of(&eng, &bj);
        r.cards = Vec::new();
        r.blackjack = Some(bj);
        if let (Input::Card { card }, Some(Mode::Live)) = (input, source) {
            if let Some(shoe) = self.tables.get_mut(&table).and_then(|t| t.shoe.as_mut()) {
                shoe.take(*card);
            }
        }
        Ok(())
    }
}

/// Where a request's cards come from.
#[derive(Clone, Copy)]
pub(crate) enum CardsFrom<'c> {
    Live(&'c [Card]),
    Seed([u8; 32]),
}

/// Where a round stands: the players decide while a decision or an insurance answer is due.
pub(crate) fn phase_of(eng: &BlackjackEngine<'_>, round: &BlackjackRound) -> Phase {
    if due(eng, &round.play).is_empty() {
        Phase::BettingClosed
    } else {
        Phase::Decisions
    }
}

impl State {
    /// What ends with a blackjack round (settled or voided, among `events`): the players who
    /// lose their place for not betting in the plan's number of rounds in a row.
    pub(crate) fn after_blackjack_round(&self, r: &RoundState, events: &[Event]) -> Vec<Event> {
        let ended = events
            .iter()
            .any(|e| matches!(e, Event::RoundSettled { .. } | Event::RoundVoided { .. }));
        let table = &self.tables[&r.table];
        let policy = &table.loaded.plan.policies.disconnect;
        let Some(limit) = policy.remove_after_rounds_without_bet.filter(|_| ended) else {
            return Vec::new();
        };
        table
            .seated
            .iter()
            .filter(|(p, _)| !r.bets.iter().any(|b| &b.player == *p))
            .filter(|(_, n)| **n + 1 >= limit)
            .map(|(p, n)| Event::SeatReleased {
                table: r.table.clone(),
                player: p.clone(),
                rounds_without_bet: n + 1,
                clause: policy.clause.clone(),
            })
            .collect()
    }

    /// At the end of a round of a table whose plan removes players who do not bet: every
    /// player who bet is at the table with no round missed, every other one has missed one
    /// more.
    pub(crate) fn count_rounds_without_bet(&mut self, round: &str) {
        let Some(r) = self.rounds.get(round) else {
            return;
        };
        let Some(t) = self.tables.get_mut(&r.table) else {
            return;
        };
        if t.loaded
            .plan
            .policies
            .disconnect
            .remove_after_rounds_without_bet
            .is_none()
            || t.loaded.plan.plan.family != crate::plan::rules::Family::Blackjack
        {
            return;
        }
        for n in t.seated.values_mut() {
            *n += 1;
        }
        for b in &r.bets {
            t.seated.insert(b.player.clone(), 0);
        }
    }
}
