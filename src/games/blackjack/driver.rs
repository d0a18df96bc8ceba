//! The round driver: a whole round of blackjack, from the first card to the settlement of
//! every stake, as a state that inputs are applied to one at a time.
//!
//! **Event-sourced.** [`BlackjackEngine::open_round`] turns the accepted bets into a
//! [`RoundState`]; each logged [`Input`] (a card, an insurance answer, a decision, a time-out,
//! a Bet Behind declining a split or a double) is applied with [`BlackjackEngine::apply`],
//! which refuses anything the round does not expect now or the rules do not allow (with the
//! engine's codes) and leaves the state unchanged when it refuses; what the round expects next
//! is computed from the state alone by [`BlackjackEngine::next_step`]. Replaying the logged
//! inputs on the opened state rebuilds the round bit for bit, and
//! [`BlackjackEngine::settle_round`] settles it. [`BlackjackEngine::play_round`] drives the
//! same functions from a card source and a [`Decider`] (a strategy, a script of decisions).
//!
//! **A round** (in the order of the documents' "Průběh hry" and "Cíl hry"):
//! 1. *First pass* ([`BlackjackEngine::first_pass`]): a card to each box in box order, the
//!    dealer's up card, a second card to each box, then the hole card where the dealer has
//!    one. In a common-hand game every player takes the same two cards.
//! 2. *Insurance* where the plan offers it and the dealer's first card is an ace: each box
//!    owner (and each Bet Behind where `insurance.for_bet_behind`) answers, or the offer is
//!    closed ([`Input::CloseInsurance`], a time-out): whoever has not answered is not insured
//!    (no stake is ever placed for a silent player).
//! 3. *Peek* (`hole_card = "peek"`, up card in `peek_on`): a dealer blackjack ends the round
//!    there; nothing is played.
//! 4. *Players*. Seated: box by box in box order, each box's hands in order (hand 0, the
//!    right-hand hand, first), a card to the hand that awaits one, a decision from the box's
//!    owner otherwise. A hand that ends by itself (21, bust, a split ace with its card, a
//!    doubled hand with its card) takes no decision. Common hand: every player decides on
//!    his own current hand at the same time; once every player has decided, the dealer deals
//!    one card, and it goes to every player whose current hand awaits a card (he hit,
//!    doubled, or split and this hand needs its second card). A player whose hands are all
//!    finished takes nothing: a card dealt after he stood counts nothing for him
//!    (`cards_after_stand_count_zero`), and a player who did not split takes the cards in the
//!    order they are dealt (`non_splitter_takes_cards_in_dealing_order`), whatever others do.
//! 5. *Dealer*: he completes his hand by the drawing rules ([`BlackjackEngine::dealer_action`]),
//!    even when every player's hand is bust or surrendered (Bust It and Buster are decided on
//!    his hand).
//! 6. *Settlement* ([`BlackjackEngine::settle_round`]): each box's main play
//!    ([`BlackjackEngine::settle_box`]: main, splits, doubles, insurance, surrender), its side
//!    bets ([`BlackjackEngine::settle_side_bet`], on the box's first two cards and the
//!    dealer's cards), and each Bet Behind ([`BlackjackEngine::settle_bet_behind`]).
//!
//! **Bet Behind.** It follows its box's decisions; it matches a split or a double unless its
//! player cannot fund it, which the service records with [`Input::BetBehindDeclinesSplit`] /
//! [`Input::BetBehindDeclinesDouble`] while the players are still playing (then it plays the
//! right-hand hand only, or its single stake on the doubled hand, by the plan's rules).
//!
//! **What the driver leaves to the service.** Who is connected (a disconnected player is
//! never insured: the driver is told only of insurance actually taken), when a player's
//! blackjack or a surrender is paid out (`player_blackjack_paid`, `surrender.paid`: the amounts
//! are those of the settlement either way), and the clock (a time-out is an input).

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::deal::FirstPassSlot;
use super::dealer::DealerAction;
use super::play::{Decision, Hand, HandStatus, Insurer};
use super::settle::{BetBehind, BoxPlay, Settlement, StakeSettlement};
use super::side_bets::SideBetDeal;
use super::{code, BlackjackBet, BlackjackEngine};
use crate::cards::{Card, Rank};
use crate::games::Refusal;
use crate::plan::rules::blackjack::SeatingModel;

/// The accepted bets a round is dealt for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RoundSetup {
    /// Seated: the boxes with a main bet, in box order. Common hand: one per player.
    pub positions: Vec<PositionBets>,
}

/// One box (seated) or one player's place in the common hand, with its bets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PositionBets {
    /// The box, 1 … the plan's `seating.seats`; absent in a common-hand game.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat: Option<u8>,
    /// The box's owner (the player who decides), as the service names him.
    pub player: String,
    /// The owner's bets on the box: `main` and any side bets.
    pub bets: Vec<BlackjackBet>,
    /// Other players' Bet Behind on the box.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bets_behind: Vec<BetBehindBet>,
}

/// A Bet Behind placed on a box.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BetBehindBet {
    pub player: String,
    pub stake_minor: i64,
}

/// An answer to the insurance offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum InsuranceAnswer {
    /// Not answered (or not offered: the dealer's first card is not an ace).
    Open,
    Declined,
    Taken {
        stake_minor: i64,
    },
}

/// A box (or a common-hand player) in play.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PositionState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat: Option<u8>,
    /// The main stake, the hands as played and the insurance taken: what
    /// [`BlackjackEngine::settle_box`] settles.
    pub play: BoxPlay,
    pub insurance: InsuranceAnswer,
    /// The owner's side bets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub side_bets: Vec<BlackjackBet>,
    /// The box's cards of the first pass (its first two cards, on which side bets are
    /// decided; a split moves the second to another hand).
    pub first_cards: Vec<Card>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bets_behind: Vec<BetBehindState>,
    /// The hand whose player has just hit ("Karta") and awaits its card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hit_pending: Option<usize>,
}

/// A Bet Behind in play.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BetBehindState {
    /// What [`BlackjackEngine::settle_bet_behind`] settles: the stake, the box's splits and
    /// doubles it matched, its insurance.
    pub bet: BetBehind,
    pub insurance: InsuranceAnswer,
    /// It declined the box's split (it then follows the right-hand hand only).
    #[serde(default)]
    pub split_declined: bool,
}

/// A round in progress: everything the next input and the settlement depend on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RoundState {
    pub positions: Vec<PositionState>,
    /// The dealer's cards: up card, hole card (if any), then those he drew.
    pub dealer: Vec<Card>,
    /// Every card of the round in dealing order (checked against the shoe as it comes); the
    /// first of them are the first pass ([`BlackjackEngine::first_pass`]).
    pub dealt: Vec<Card>,
}

/// Where a card goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "to", rename_all = "snake_case")]
pub enum CardTo {
    /// Hand `hand` of position `position` (in the first pass, hand 0).
    Hand {
        position: usize,
        hand: usize,
    },
    /// The common hand: every player whose current hand awaits a card (in the first pass,
    /// every player).
    CommonHand,
    Dealer,
}

/// What the round expects next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "next", rename_all = "snake_case")]
pub enum Next {
    Card {
        to: CardTo,
    },
    /// Insurance answers from [`BlackjackEngine::pending_insurance`], until every one has
    /// answered or [`Input::CloseInsurance`].
    Insurance,
    /// A decision (or [`Input::TimedOut`]) on hand `hand` of position `position`. In a
    /// common-hand game every player in [`BlackjackEngine::pending_decisions`] decides now,
    /// in any order; this is the first of them.
    Decision {
        position: usize,
        hand: usize,
    },
    /// Every card is dealt: [`BlackjackEngine::settle_round`].
    Complete,
}

impl std::fmt::Display for CardTo {
    /// Where a card goes, for a message to a person.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CardTo::Hand { position, hand } => write!(f, "hand {hand} of position {position}"),
            CardTo::CommonHand => f.write_str("the common hand"),
            CardTo::Dealer => f.write_str("the dealer"),
        }
    }
}

impl std::fmt::Display for Next {
    /// What the round expects, for a message to a person.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Next::Card { to } => write!(f, "a card to {to}"),
            Next::Insurance => f.write_str("the insurance answers"),
            Next::Decision { position, hand } => {
                write!(f, "a decision on hand {hand} of position {position}")
            }
            Next::Complete => f.write_str("nothing more (the round is complete)"),
        }
    }
}

/// One input to a round, as the service logs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "input", rename_all = "snake_case")]
pub enum Input {
    /// The next card out of the shoe (live: as the dealer deals it; RNG: the next card of the
    /// round's shuffled shoe).
    Card { card: Card },
    /// Insurance taken by a box's owner (`bet_behind` absent) or by a Bet Behind on it.
    Insure {
        position: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bet_behind: Option<usize>,
        stake_minor: i64,
    },
    DeclineInsurance {
        position: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bet_behind: Option<usize>,
    },
    /// The insurance offer's time ran out: whoever has not answered is not insured.
    CloseInsurance,
    Decide {
        position: usize,
        hand: usize,
        decision: Decision,
    },
    /// No decision in time (or the player is disconnected): the plan's automatic decision
    /// ([`BlackjackEngine::automatic_decision`]) is taken.
    TimedOut { position: usize, hand: usize },
    /// A Bet Behind cannot fund its box's split: it plays the right-hand hand only.
    BetBehindDeclinesSplit { position: usize, bet_behind: usize },
    /// A Bet Behind cannot fund its box's double on `hand`: its single stake rides the doubled
    /// hand.
    BetBehindDeclinesDouble {
        position: usize,
        bet_behind: usize,
        hand: usize,
    },
}

/// One position's settlement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PositionSettlement {
    /// The main play: each hand's result; main, split, double, insurance and surrender
    /// stakes.
    pub main: Settlement,
    /// The owner's side bets, in the order placed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub side_bets: Vec<StakeSettlement>,
    /// Each Bet Behind on the box, in the order placed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bets_behind: Vec<Settlement>,
}

impl PositionSettlement {
    /// What the owner's wallet is credited: the main play and the side bets.
    pub fn owner_total_minor(&self) -> i64 {
        self.main.total_minor()
            + self
                .side_bets
                .iter()
                .map(|s| s.payout.total_minor())
                .sum::<i64>()
    }
}

/// The settlement of a round, position by position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RoundSettlement {
    pub positions: Vec<PositionSettlement>,
}

/// Who takes the decisions of [`BlackjackEngine::play_round`]: a strategy, a script, a test.
pub trait Decider {
    /// The decision on hand `hand` of position `position`; `None` lets the time run out (the
    /// plan's automatic decision is taken).
    fn decide(
        &mut self,
        engine: &BlackjackEngine<'_>,
        state: &RoundState,
        position: usize,
        hand: usize,
    ) -> Option<Decision>;

    /// The insurance stake a box's owner (`bet_behind` absent) or a Bet Behind takes; `None`
    /// declines. Basic strategy never insures.
    fn insure(
        &mut self,
        _engine: &BlackjackEngine<'_>,
        _state: &RoundState,
        _position: usize,
        _bet_behind: Option<usize>,
    ) -> Option<i64> {
        None
    }

    /// Whether Bet Behind `bet_behind` funds its box's `decision` (a split or a double) on
    /// hand `hand`. By default it does ("následuje/kopíruje").
    fn bet_behind_funds(
        &mut self,
        _state: &RoundState,
        _position: usize,
        _bet_behind: usize,
        _hand: usize,
        _decision: Decision,
    ) -> bool {
        true
    }
}

/// Decisions from a list, in the order asked; past its end (or at a `None`) the time runs
/// out.
#[derive(Debug, Clone, Default)]
pub struct Script {
    pub decisions: std::collections::VecDeque<Option<Decision>>,
}

impl Script {
    pub fn new(decisions: impl IntoIterator<Item = Option<Decision>>) -> Script {
        Script {
            decisions: decisions.into_iter().collect(),
        }
    }
}

impl Decider for Script {
    fn decide(
        &mut self,
        _: &BlackjackEngine<'_>,
        _: &RoundState,
        _: usize,
        _: usize,
    ) -> Option<Decision> {
        self.decisions.pop_front().flatten()
    }
}

/// Where the round is: the phase and, within it, what comes next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    FirstPass(FirstPassSlot),
    Insurance,
    Players(Next),
    DealerDraws,
    Complete,
}

impl<'p> BlackjackEngine<'p> {
    /// Opens a round for the accepted bets: each box's bets held to the plan
    /// ([`BlackjackEngine::check_bets`], a main bet on every box), each Bet Behind on another
    /// player's box ([`BlackjackEngine::check_bet_behind_box`]) within its limits, the boxes
    /// valid and in order ([`BlackjackEngine::check_boxes`]), and the number of players within
    /// `seating.min_players` … `max_players` (box owners; a Bet Behind takes no seat).
    pub fn open_round(&self, setup: &RoundSetup) -> Result<RoundState, Refusal> {
        self.check_setup(setup)?;
        let positions = setup
            .positions
            .iter()
            .map(|p| PositionState {
                seat: p.seat,
                play: BoxPlay {
                    main_stake_minor: p
                        .bets
                        .iter()
                        .find(|b| b.bet == "main")
                        .map_or(0, |b| b.stake_minor),
                    hands: vec![Hand::default()],
                    insurance_stake_minor: None,
                },
                insurance: InsuranceAnswer::Open,
                side_bets: p.bets.iter().filter(|b| b.bet != "main").cloned().collect(),
                first_cards: Vec::with_capacity(2),
                bets_behind: p
                    .bets_behind
                    .iter()
                    .map(|bb| BetBehindState {
                        bet: BetBehind {
                            stake_minor: bb.stake_minor,
                            split_funded: false,
                            doubles_funded: Vec::new(),
                            insurance_stake_minor: None,
                        },
                        insurance: InsuranceAnswer::Open,
                        split_declined: false,
                    })
                    .collect(),
                hit_pending: None,
            })
            .collect();
        Ok(RoundState {
            positions,
            dealer: Vec::with_capacity(6),
            dealt: Vec::with_capacity(16),
        })
    }

    /// A new round for the bets `state` was opened with (already checked): every card,
    /// decision, insurance answer and Bet Behind choice of the last round cleared. What a
    /// simulation does between rounds; the service opens each round with its own bets.
    pub fn reopen_round(&self, state: &mut RoundState) {
        state.dealer.clear();
        state.dealt.clear();
        for s in &mut state.positions {
            s.play.hands.truncate(1);
            let h = &mut s.play.hands[0];
            h.cards.clear();
            (h.from_split, h.doubled, h.stood, h.surrendered) = (false, false, false, false);
            s.play.insurance_stake_minor = None;
            s.insurance = InsuranceAnswer::Open;
            s.first_cards.clear();
            s.hit_pending = None;
            for b in &mut s.bets_behind {
                b.bet.split_funded = false;
                b.bet.doubles_funded.clear();
                b.bet.insurance_stake_minor = None;
                b.insurance = InsuranceAnswer::Open;
                b.split_declined = false;
            }
        }
    }

    /// Every check of [`BlackjackEngine::open_round`], before anything is written.
    fn check_setup(&self, setup: &RoundSetup) -> Result<(), Refusal> {
        let seating = &self.rules.seating;
        let common = seating.model == SeatingModel::CommonHand;
        if setup.positions.iter().any(|p| p.seat.is_some() == common) {
            return Err(self.refuse(
                code::PLAY_INVALID,
                if common {
                    "a common-hand game has no boxes: a player's place names no seat"
                } else {
                    "a seated game deals to boxes: every position names its box"
                },
                &seating.clause,
            ));
        }
        let positions = &setup.positions;
        // Distinct players; a quadratic count for a table's few boxes, a set for a crowd.
        let players = if positions.len() <= 16 {
            (0..positions.len())
                .filter(|&i| {
                    !positions[..i]
                        .iter()
                        .any(|q| q.player == positions[i].player)
                })
                .count()
        } else {
            positions
                .iter()
                .map(|p| p.player.as_str())
                .collect::<BTreeSet<&str>>()
                .len()
        };
        if common && players != positions.len() {
            return Err(self.refuse(
                code::TOO_MANY_PLAYERS,
                "a player plays the common hand once",
                &seating.clause,
            ));
        }
        let n = u16::try_from(players).unwrap_or(u16::MAX);
        if n < seating.min_players {
            return Err(self.refuse(
                code::TOO_FEW_PLAYERS,
                format!(
                    "{n} player(s); a round of {} is dealt for at least {}",
                    self.plan.key(),
                    seating.min_players
                ),
                &seating.clause,
            ));
        }
        if let Some(max) = seating.max_players.filter(|&m| n > m) {
            return Err(self.refuse(
                code::TOO_MANY_PLAYERS,
                format!("{n} players; {} seats at most {max}", self.plan.key()),
                &seating.clause,
            ));
        }
        if !common {
            self.check_boxes(positions.iter().map(|p| p.seat.unwrap_or(0)))?;
        }
        for p in positions {
            self.check_bets(&p.bets)?;
            if !p.bets.iter().any(|b| b.bet == "main") {
                return Err(self.refuse(
                    code::MAIN_BET_MISSING,
                    format!(
                        "{}'s box holds no main bet: a box is dealt only for its main bet",
                        p.player
                    ),
                    &self.rules.clause,
                ));
            }
            for bb in &p.bets_behind {
                self.check_bet_behind_box(true, bb.player == p.player)?;
                self.check_stake("bet_behind", bb.stake_minor)?;
            }
        }
        Ok(())
    }

    /// What the round expects next (see the module documentation for the order).
    pub fn next_step(&self, state: &RoundState) -> Next {
        self.next_of(self.stage(state))
    }

    /// Where the dealer's hole card lies in `state.dealt` while it is face down ("skrytá
    /// karta krupiéra", turned "v momentu, kdy na něj přijde řada, tj. po odehrání všech
    /// sázejících"): dealt in the first pass, and the insurance offer or a player still to
    /// act. `None` for a dealer without a hole card, before it is dealt, and once the dealer
    /// plays or the round is complete (a peeked blackjack ends it).
    pub fn hidden_hole_card(&self, state: &RoundState) -> Option<usize> {
        if self.dealer_first_pass_cards() != 2 || state.dealer.len() < 2 {
            return None;
        }
        let hands = if self.is_common_hand() {
            1
        } else {
            state.positions.len()
        };
        let at = 2 * hands + 1;
        match self.next_step(state) {
            Next::Insurance
            | Next::Decision { .. }
            | Next::Card {
                to: CardTo::Hand { .. } | CardTo::CommonHand,
            } => (state.dealt.len() > at).then_some(at),
            Next::Card { to: CardTo::Dealer } | Next::Complete => None,
        }
    }

    #[inline]
    fn next_of(&self, stage: Stage) -> Next {
        match stage {
            Stage::FirstPass(to) => Next::Card {
                to: match to {
                    FirstPassSlot::Hand(_) if self.is_common_hand() => CardTo::CommonHand,
                    FirstPassSlot::Hand(k) => CardTo::Hand {
                        position: k,
                        hand: 0,
                    },
                    FirstPassSlot::Dealer => CardTo::Dealer,
                },
            },
            Stage::Insurance => Next::Insurance,
            Stage::Players(next) => next,
            Stage::DealerDraws => Next::Card { to: CardTo::Dealer },
            Stage::Complete => Next::Complete,
        }
    }

    /// Who still answers the insurance offer: (position, Bet Behind) pairs, the owner first.
    /// Empty unless the round is at the offer.
    pub fn pending_insurance(&self, state: &RoundState) -> Vec<(usize, Option<usize>)> {
        if !matches!(self.stage(state), Stage::Insurance) {
            return Vec::new();
        }
        let mut out = Vec::new();
        for (i, p) in state.positions.iter().enumerate() {
            if p.insurance == InsuranceAnswer::Open {
                out.push((i, None));
            }
            if self.rules.insurance.for_bet_behind == Some(true) {
                for (j, bb) in p.bets_behind.iter().enumerate() {
                    if bb.insurance == InsuranceAnswer::Open {
                        out.push((i, Some(j)));
                    }
                }
            }
        }
        out
    }

    /// Every (position, hand) that awaits a decision now: one in a seated game, every player
    /// still deciding in a common-hand game. Empty when the round awaits something else.
    pub fn pending_decisions(&self, state: &RoundState) -> Vec<(usize, usize)> {
        match self.stage(state) {
            Stage::Players(Next::Decision { position, hand }) => {
                if self.rules.seating.model == SeatingModel::CommonHand {
                    state
                        .positions
                        .iter()
                        .enumerate()
                        .filter_map(|(i, p)| match self.current_hand(p) {
                            Some((h, HandStatus::Deciding)) => Some((i, h)),
                            _ => None,
                        })
                        .collect()
                } else {
                    vec![(position, hand)]
                }
            }
            _ => Vec::new(),
        }
    }

    /// The decision a time-out takes on hand `hand` of `position` now.
    pub fn automatic_decision_for(
        &self,
        state: &RoundState,
        position: usize,
        hand: usize,
    ) -> Result<Decision, Refusal> {
        self.automatic_at(state, position, hand, self.stage(state))
    }

    fn automatic_at(
        &self,
        state: &RoundState,
        position: usize,
        hand: usize,
        stage: Stage,
    ) -> Result<Decision, Refusal> {
        self.expect_decision(state, position, hand, stage)?;
        self.automatic_decision(&state.positions[position].play.hands, hand)
    }

    /// Applies one input, or refuses it and leaves `state` as it was.
    pub fn apply(&self, state: &mut RoundState, input: &Input) -> Result<(), Refusal> {
        let stage = self.stage(state);
        self.apply_at(state, input, stage)
    }

    /// [`BlackjackEngine::apply`] where the round is at `stage` (computed from `state` as it
    /// is now).
    fn apply_at(&self, state: &mut RoundState, input: &Input, stage: Stage) -> Result<(), Refusal> {
        match *input {
            Input::Card { card } => self.apply_card(state, card, stage),
            Input::Insure {
                position,
                bet_behind,
                stake_minor,
            } => {
                self.expect_insurance_answer(state, position, bet_behind, stage)?;
                let p = &state.positions[position];
                let up = state.dealer[0];
                let (stake_of, insurer) = match bet_behind {
                    None => (p.play.main_stake_minor, Insurer::Box),
                    Some(j) => (p.bets_behind[j].bet.stake_minor, Insurer::BetBehind),
                };
                self.check_insurance(up, &p.play.hands, stake_of, stake_minor, insurer, false)?;
                let taken = InsuranceAnswer::Taken { stake_minor };
                let p = &mut state.positions[position];
                match bet_behind {
                    None => {
                        p.insurance = taken;
                        p.play.insurance_stake_minor = Some(stake_minor);
                    }
                    Some(j) => {
                        p.bets_behind[j].insurance = taken;
                        p.bets_behind[j].bet.insurance_stake_minor = Some(stake_minor);
                    }
                }
                Ok(())
            }
            Input::DeclineInsurance {
                position,
                bet_behind,
            } => {
                self.expect_insurance_answer(state, position, bet_behind, stage)?;
                let p = &mut state.positions[position];
                match bet_behind {
                    None => p.insurance = InsuranceAnswer::Declined,
                    Some(j) => p.bets_behind[j].insurance = InsuranceAnswer::Declined,
                }
                Ok(())
            }
            Input::CloseInsurance => {
                if !matches!(stage, Stage::Insurance) {
                    return Err(self.refuse(
                        code::INSURANCE_NOT_EXPECTED,
                        "no insurance offer is open",
                        &self.rules.insurance.clause,
                    ));
                }
                for (i, j) in self.pending_insurance(state) {
                    let p = &mut state.positions[i];
                    match j {
                        None => p.insurance = InsuranceAnswer::Declined,
                        Some(j) => p.bets_behind[j].insurance = InsuranceAnswer::Declined,
                    }
                }
                Ok(())
            }
            Input::Decide {
                position,
                hand,
                decision,
            } => self.apply_decision_in_round(state, position, hand, decision, stage),
            Input::TimedOut { position, hand } => {
                let decision = self.automatic_at(state, position, hand, stage)?;
                self.apply_decision_in_round(state, position, hand, decision, stage)
            }
            Input::BetBehindDeclinesSplit {
                position,
                bet_behind,
            } => {
                let bb = self.declinable(state, position, bet_behind, stage)?;
                let hands = &state.positions[position].play.hands;
                if hands.len() < 2 || bb.split_declined {
                    return Err(self.refuse(
                        code::BET_BEHIND_NOTHING_TO_DECLINE,
                        format!(
                            "box {} has made no split for Bet Behind {bet_behind} to decline",
                            position
                        ),
                        &self.rules.bet_behind.clause,
                    ));
                }
                let bb = &mut state.positions[position].bets_behind[bet_behind];
                bb.split_declined = true;
                bb.bet.split_funded = false;
                // It follows the right-hand hand only: doubles on the others are not its own.
                bb.bet.doubles_funded.retain(|&h| h == 0);
                Ok(())
            }
            Input::BetBehindDeclinesDouble {
                position,
                bet_behind,
                hand,
            } => {
                let bb = self.declinable(state, position, bet_behind, stage)?;
                if !bb.bet.doubles_funded.contains(&hand) {
                    return Err(self.refuse(
                        code::BET_BEHIND_NOTHING_TO_DECLINE,
                        format!(
                            "Bet Behind {bet_behind} on box {position} follows no double on hand {hand} to decline"
                        ),
                        &self.rules.bet_behind.clause,
                    ));
                }
                state.positions[position].bets_behind[bet_behind]
                    .bet
                    .doubles_funded
                    .retain(|&h| h != hand);
                Ok(())
            }
        }
    }

    /// Settles a complete round: every box's main play, side bets and Bets Behind.
    pub fn settle_round(&self, state: &RoundState) -> Result<RoundSettlement, Refusal> {
        self.check_complete(state)?;
        let mut positions = Vec::with_capacity(state.positions.len());
        let mut deal: Option<SideBetDeal> = None;
        for p in &state.positions {
            let main = self.settle_box(&p.play, &state.dealer)?;
            let mut side_bets = Vec::with_capacity(p.side_bets.len());
            if !p.side_bets.is_empty() {
                let [a, b] = p.first_cards[..] else {
                    unreachable!("a complete round has dealt each box its first two cards")
                };
                let deal = deal.get_or_insert_with(|| SideBetDeal {
                    player_first_two: [a, b],
                    dealer: state.dealer.clone(),
                });
                deal.player_first_two = [a, b];
                for sb in &p.side_bets {
                    side_bets.push(self.settle_side_bet(&sb.bet, sb.stake_minor, deal)?);
                }
            }
            let mut bets_behind = Vec::with_capacity(p.bets_behind.len());
            for bb in &p.bets_behind {
                bets_behind.push(self.settle_bet_behind(&p.play, &bb.bet, &state.dealer)?);
            }
            positions.push(PositionSettlement {
                main,
                side_bets,
                bets_behind,
            });
        }
        Ok(RoundSettlement { positions })
    }

    /// Refuses a round that is not complete: what [`BlackjackEngine::settle_round`] checks
    /// first.
    pub(super) fn check_complete(&self, state: &RoundState) -> Result<(), Refusal> {
        if matches!(self.stage(state), Stage::Complete) {
            return Ok(());
        }
        Err(self.refuse(
            code::ROUND_NOT_COMPLETE,
            format!(
                "the round is not complete: it expects {}",
                self.next_step(state)
            ),
            &self.rules.clause,
        ))
    }

    /// Plays a whole round: opens it, takes each card from `cards` as the round asks for one,
    /// each decision, insurance answer and Bet Behind funding from `decider`, and settles.
    /// Every input goes through [`BlackjackEngine::apply`]: a decision the rules refuse is
    /// returned as the refusal.
    pub fn play_round<C, D>(
        &self,
        setup: &RoundSetup,
        cards: &mut C,
        decider: &mut D,
    ) -> Result<(RoundState, RoundSettlement), Refusal>
    where
        C: FnMut() -> Option<Card>,
        D: Decider + ?Sized,
    {
        let mut state = self.open_round(setup)?;
        self.play_on(&mut state, cards, decider)?;
        let settlement = self.settle_round(&state)?;
        Ok((state, settlement))
    }

    /// Plays an opened round on until it is complete (see [`BlackjackEngine::play_round`]).
    pub fn play_on<C, D>(
        &self,
        state: &mut RoundState,
        cards: &mut C,
        decider: &mut D,
    ) -> Result<(), Refusal>
    where
        C: FnMut() -> Option<Card>,
        D: Decider + ?Sized,
    {
        // The stage is computed once per step and handed to the input it expects; after a
        // card or a seated player's decision, from what that input can have changed
        // (`stage_after`).
        let mut stage = self.stage(state);
        loop {
            match self.next_of(stage) {
                Next::Card { .. } => {
                    let card = cards().ok_or_else(|| {
                        self.refuse(
                            code::CARDS_EXHAUSTED,
                            "the card source ran out before the round was complete",
                            &self.rules.clause,
                        )
                    })?;
                    // What `apply_at` does with a card.
                    self.apply_card(state, card, stage)?;
                    stage = self.stage_after(state, stage);
                }
                Next::Insurance => {
                    for (position, bet_behind) in self.pending_insurance(state) {
                        let input = match decider.insure(self, state, position, bet_behind) {
                            Some(stake_minor) => Input::Insure {
                                position,
                                bet_behind,
                                stake_minor,
                            },
                            None => Input::DeclineInsurance {
                                position,
                                bet_behind,
                            },
                        };
                        self.apply(state, &input)?;
                    }
                    stage = self.stage(state);
                }
                Next::Decision { position, hand } => {
                    if self.is_common_hand() {
                        // Every player still deciding decides now, each on his own hand.
                        for i in 0..state.positions.len() {
                            if let Some((h, HandStatus::Deciding)) =
                                self.current_hand(&state.positions[i])
                            {
                                let now = self.players_stage(state, 0);
                                debug_assert_eq!(now, self.stage(state));
                                self.decide_with(state, i, h, decider, now)?;
                            }
                        }
                        stage = self.stage_after(state, stage);
                    } else {
                        self.decide_with(state, position, hand, decider, stage)?;
                        stage = self.stage_after(state, stage);
                    }
                }
                Next::Complete => return Ok(()),
            }
        }
    }

    /// One decision from `decider` (or its time-out), then the Bet Behind funding of a split
    /// or a double.
    fn decide_with<D: Decider + ?Sized>(
        &self,
        state: &mut RoundState,
        position: usize,
        hand: usize,
        decider: &mut D,
        stage: Stage,
    ) -> Result<(), Refusal> {
        let decision = match decider.decide(self, state, position, hand) {
            Some(decision) => {
                let input = Input::Decide {
                    position,
                    hand,
                    decision,
                };
                self.apply_at(state, &input, stage)?;
                decision
            }
            None => {
                let d = self.automatic_at(state, position, hand, stage)?;
                self.apply_at(state, &Input::TimedOut { position, hand }, stage)?;
                d
            }
        };
        if !matches!(decision, Decision::Split | Decision::Double) {
            return Ok(());
        }
        for j in 0..state.positions[position].bets_behind.len() {
            let bb = &state.positions[position].bets_behind[j].bet;
            // After an unmatched split it follows no double but hand 0's.
            let follows = decision == Decision::Split || bb.doubles_funded.contains(&hand);
            if !follows || decider.bet_behind_funds(state, position, j, hand, decision) {
                continue;
            }
            let input = if decision == Decision::Split {
                Input::BetBehindDeclinesSplit {
                    position,
                    bet_behind: j,
                }
            } else {
                Input::BetBehindDeclinesDouble {
                    position,
                    bet_behind: j,
                    hand,
                }
            };
            self.apply(state, &input)?;
        }
        Ok(())
    }

    /// Where the round is, computed from its state alone.
    fn stage(&self, state: &RoundState) -> Stage {
        let hands = if self.is_common_hand() {
            1
        } else {
            state.positions.len()
        };
        if let Some(slot) = self.first_pass_slot(hands, state.dealt.len()) {
            return Stage::FirstPass(slot);
        }
        let up = state.dealer[0];
        if self.insurance_offered_on(up)
            && state.positions.iter().any(|p| {
                p.insurance == InsuranceAnswer::Open
                    || (self.rules.insurance.for_bet_behind == Some(true)
                        && p.bets_behind
                            .iter()
                            .any(|b| b.insurance == InsuranceAnswer::Open))
            })
        {
            return Stage::Insurance;
        }
        if self.ended_at_peek(&state.dealer) {
            return Stage::Complete;
        }
        self.players_stage(state, 0)
    }

    /// [`BlackjackEngine::stage`] once the first pass, the insurance offer and the peek are
    /// behind: the first position from `from` on that is still playing (every one before
    /// `from` is done), else the dealer.
    fn players_stage(&self, state: &RoundState, from: usize) -> Stage {
        if self.rules.seating.model == SeatingModel::CommonHand {
            let mut awaits_card = false;
            for (i, p) in state.positions.iter().enumerate() {
                match self.current_hand(p) {
                    Some((h, HandStatus::Deciding)) => {
                        return Stage::Players(Next::Decision {
                            position: i,
                            hand: h,
                        })
                    }
                    Some((_, HandStatus::AwaitingCard)) => awaits_card = true,
                    _ => {}
                }
            }
            if awaits_card {
                return Stage::Players(Next::Card {
                    to: CardTo::CommonHand,
                });
            }
        } else {
            for (i, p) in state.positions.iter().enumerate().skip(from) {
                match self.current_hand(p) {
                    Some((h, HandStatus::Deciding)) => {
                        return Stage::Players(Next::Decision {
                            position: i,
                            hand: h,
                        })
                    }
                    Some((h, _)) => {
                        return Stage::Players(Next::Card {
                            to: CardTo::Hand {
                                position: i,
                                hand: h,
                            },
                        })
                    }
                    None => {}
                }
            }
        }
        self.dealer_stage(&state.dealer)
    }

    /// The stage once every player is done: the dealer draws, or the round is complete.
    fn dealer_stage(&self, dealer: &[Card]) -> Stage {
        match self.dealer_action(dealer) {
            DealerAction::Draw => Stage::DealerDraws,
            DealerAction::Stand => Stage::Complete,
        }
    }

    /// The stage after a card or a player's decision was applied at stage `before`: what
    /// [`BlackjackEngine::stage`] computes from the state, reading only what the input can
    /// have changed. After the dealer's card only his hand (the players are done, the first
    /// pass, the insurance and the peek are behind). After a player's card or decision the
    /// players (the first pass, the insurance and the peek are behind), in a seated game
    /// from that box on (the boxes before it were done, and the input did not touch them).
    fn stage_after(&self, state: &RoundState, before: Stage) -> Stage {
        let stage = match before {
            Stage::DealerDraws => self.dealer_stage(&state.dealer),
            Stage::Players(
                Next::Decision { position, .. }
                | Next::Card {
                    to: CardTo::Hand { position, .. },
                },
            ) if !self.is_common_hand() => self.players_stage(state, position),
            // A common hand's players are all read again.
            Stage::Players(_) => self.players_stage(state, 0),
            _ => self.stage(state),
        };
        debug_assert_eq!(stage, self.stage(state), "stage_after {before:?}");
        stage
    }

    /// The hand of a position the round serves now, and what it awaits: the hand that has
    /// just hit awaits its card (the hand itself does not show a hit), else the engine's
    /// [`BlackjackEngine::next_hand`]. `None` when all its hands are finished.
    #[inline]
    fn current_hand(&self, p: &PositionState) -> Option<(usize, HandStatus)> {
        match p.hit_pending {
            Some(h) => Some((h, HandStatus::AwaitingCard)),
            None => self.next_hand(&p.play.hands),
        }
    }

    #[inline]
    fn is_common_hand(&self) -> bool {
        self.rules.seating.model == SeatingModel::CommonHand
    }

    #[inline]
    fn insurance_offered_on(&self, up: Card) -> bool {
        self.rules.insurance.offered && up.rank == Rank::Ace
    }

    fn apply_card(&self, state: &mut RoundState, card: Card, stage: Stage) -> Result<(), Refusal> {
        if matches!(stage, Stage::Insurance | Stage::Complete)
            || matches!(stage, Stage::Players(Next::Decision { .. }))
        {
            return Err(self.refuse(
                code::CARD_NOT_EXPECTED,
                format!(
                    "{card} comes when the round expects {}",
                    self.next_step(state)
                ),
                &self.rules.clause,
            ));
        }
        self.check_card_fits_shoe(&state.dealt, card)?;
        match stage {
            Stage::FirstPass(FirstPassSlot::Hand(_)) if self.is_common_hand() => {
                for p in &mut state.positions {
                    p.play.hands[0].cards.push(card);
                    p.first_cards.push(card);
                }
            }
            Stage::FirstPass(FirstPassSlot::Hand(k)) => {
                let p = &mut state.positions[k];
                p.play.hands[0].cards.push(card);
                p.first_cards.push(card);
            }
            Stage::FirstPass(FirstPassSlot::Dealer) | Stage::DealerDraws => state.dealer.push(card),
            Stage::Players(Next::Card {
                to: CardTo::Hand { position, hand },
            }) => {
                let p = &mut state.positions[position];
                self.add_card(&mut p.play.hands, hand, card)?;
                p.hit_pending = None;
            }
            Stage::Players(Next::Card {
                to: CardTo::CommonHand,
            }) => {
                for p in &mut state.positions {
                    if let Some((h, HandStatus::AwaitingCard)) = self.current_hand(p) {
                        self.add_card(&mut p.play.hands, h, card)?;
                        p.hit_pending = None;
                    }
                }
            }
            _ => unreachable!("every other stage refused the card above"),
        }
        state.dealt.push(card);
        Ok(())
    }

    /// Refuses a decision on a hand that does not await one now.
    fn expect_decision(
        &self,
        state: &RoundState,
        position: usize,
        hand: usize,
        stage: Stage,
    ) -> Result<(), Refusal> {
        self.position(state, position)?;
        let expected = match stage {
            Stage::Players(Next::Decision {
                position: p,
                hand: h,
            }) => {
                if self.rules.seating.model == SeatingModel::CommonHand {
                    self.current_hand(&state.positions[position])
                        == Some((hand, HandStatus::Deciding))
                } else {
                    (p, h) == (position, hand)
                }
            }
            _ => false,
        };
        if expected {
            return Ok(());
        }
        Err(self.refuse(
            code::DECISION_NOT_EXPECTED,
            format!(
                "hand {hand} of position {position} does not await a decision now; the round expects {}",
                self.next_step(state)
            ),
            &self.rules.clause,
        ))
    }

    fn apply_decision_in_round(
        &self,
        state: &mut RoundState,
        position: usize,
        hand: usize,
        decision: Decision,
        stage: Stage,
    ) -> Result<(), Refusal> {
        self.expect_decision(state, position, hand, stage)?;
        let p = &mut state.positions[position];
        self.apply_decision(&mut p.play.hands, hand, decision)?;
        if decision == Decision::Hit {
            p.hit_pending = Some(hand);
        }
        // A Bet Behind matches its box's split and double unless it declines
        // ("následuje/kopíruje").
        for bb in &mut p.bets_behind {
            match decision {
                Decision::Split => bb.bet.split_funded = !bb.split_declined,
                Decision::Double if hand == 0 || !bb.split_declined => {
                    bb.bet.doubles_funded.push(hand)
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn expect_insurance_answer(
        &self,
        state: &RoundState,
        position: usize,
        bet_behind: Option<usize>,
        stage: Stage,
    ) -> Result<(), Refusal> {
        let p = self.position(state, position)?;
        let answer = match bet_behind {
            None => Some(p.insurance),
            Some(j) => p.bets_behind.get(j).map(|b| b.insurance),
        };
        let Some(answer) = answer else {
            return Err(self.no_bet_behind(position, bet_behind.unwrap_or_default()));
        };
        let offered_to_it =
            bet_behind.is_none() || self.rules.insurance.for_bet_behind == Some(true);
        if !matches!(stage, Stage::Insurance) || answer != InsuranceAnswer::Open || !offered_to_it {
            return Err(self.refuse(
                code::INSURANCE_NOT_EXPECTED,
                format!(
                    "no insurance answer is expected from position {position}{} now",
                    bet_behind.map_or(String::new(), |j| format!(", Bet Behind {j}"))
                ),
                &self.rules.insurance.clause,
            ));
        }
        Ok(())
    }

    /// The Bet Behind `bet_behind` on `position`, while the players are still playing.
    fn declinable<'s>(
        &self,
        state: &'s RoundState,
        position: usize,
        bet_behind: usize,
        stage: Stage,
    ) -> Result<&'s BetBehindState, Refusal> {
        let p = self.position(state, position)?;
        let bb = p
            .bets_behind
            .get(bet_behind)
            .ok_or_else(|| self.no_bet_behind(position, bet_behind))?;
        if !matches!(stage, Stage::Players(_)) {
            return Err(self.refuse(
                code::BET_BEHIND_NOTHING_TO_DECLINE,
                "a Bet Behind declines a split or a double while the players play, not after",
                &self.rules.bet_behind.clause,
            ));
        }
        Ok(bb)
    }

    fn position<'s>(
        &self,
        state: &'s RoundState,
        position: usize,
    ) -> Result<&'s PositionState, Refusal> {
        state.positions.get(position).ok_or_else(|| {
            self.refuse(
                code::NO_SUCH_POSITION,
                format!(
                    "there is no position {position}: the round has {}",
                    state.positions.len()
                ),
                &self.rules.seating.clause,
            )
        })
    }

    fn no_bet_behind(&self, position: usize, bet_behind: usize) -> Refusal {
        self.refuse(
            code::NO_SUCH_POSITION,
            format!("position {position} has no Bet Behind {bet_behind}"),
            &self.rules.bet_behind.clause,
        )
    }
}
