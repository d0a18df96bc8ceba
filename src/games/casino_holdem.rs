//! Casino Hold'em against the dealer: Evolution "Casino Hold'em (Evolution)" (Ante, "2x Hrát",
//! Bonus) and SYNOT "Casino Hold'em" (Ante, "Dorovnat", Call Blind, AA, Casino Razz).
//!
//! Pure: no I/O, no clock, no randomness. Every limit, ratio, the dealing order, the Call's
//! multiple, the dealer's qualifying hand, what a non-qualifying dealer means, the side bets'
//! cards and their fate on a fold, Casino Razz's losing ranks and the automatic decision come
//! from the [`Plan`] (`[rules.casino_holdem]`, `[[bets]]`, `[[payouts]]`,
//! `[policies.decision_timeout]`). Hands are ranked by [`super::poker_hand`].
//!
//! In the order of the document's sections:
//! - *Zahájení hry* and the limits table: [`CasinoHoldemEngine::place`] reads an Ante, a side
//!   bet, or (SYNOT) a Call Blind against its bet type's `min_bet`/`max_bet`;
//!   [`CasinoHoldemEngine::check_cumulative`] holds the player's round to `max_bet` per bet
//!   type and to `requires` (a side bet needs the Ante).
//! - *Průběh hry*, the deal: [`CasinoHoldemEngine::deal_card`] accepts the dealer's cards one at
//!   a time as (position, card) in the plan's `initial_deal_order`, then, once the decisions
//!   are closed ([`CasinoHoldemEngine::close_decisions`]), the `board_cards_after_decision`;
//!   [`CasinoHoldemEngine::next`] says what comes next. A card for another position, a card the
//!   one-deck shoe has already given, or a card while players decide is refused: the deal has
//!   broken the rules (a misdeal for the error policy).
//! - *Průběh hry*, the decision: after the flop the player calls (a Call of `call_multiple` ×
//!   the Ante) or folds, [`CasinoHoldemEngine::decide`]; on time-out the plan's automatic
//!   decision applies, [`CasinoHoldemEngine::automatic_decision`] (fold in both plans). A Call
//!   Blind player has called before the deal and takes no decision.
//! - Qualification and *Výplatní tabulka*: [`CasinoHoldemEngine::settle`].
//!
//! **A player folded when he holds no Call.** The lifecycle records the decision; a fold (or
//! a time-out) places nothing, a call places the Call. Settlement reads the placements.
//!
//! **RNG mode.** [`shuffle`] shuffles the plan's shoe from a 32-byte seed and
//! [`CasinoHoldemEngine::rng_deal`] lays the shuffled cards out in the plan's dealing order;
//! the lifecycle feeds them to `deal_card` like a dealer's cards (the last two after the
//! decisions close). The shuffle is the one documented in [`crate::rng`] (forward
//! Fisher–Yates over ChaCha20 with rejection sampling); the deal takes the shuffled cards
//! from index 0.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::poker_hand::{self, HandRank, LowHand};
use super::{Payout, Refusal};
use crate::cards::{Card, DeckKind, Rank, Shoe};
use crate::money::Money;
use crate::plan::model::{AutoDecision, BetType, Payout as PayoutRow, Plan};
use crate::plan::rules::casino_holdem::{
    outcome_classes, AceInStraights, AnteWhenNotQualified, CallWhenNotQualified, CasinoHoldemRules,
    FiveCards, MinimumHand, Position, SideBetOnFold,
};
use crate::plan::rules::{Family, GameRules};

pub use crate::plan::rules::casino_holdem::HandClass;

/// The bet types of the family (`[[bets]]` ids).
pub const ANTE: &str = "ante";
pub const CALL: &str = "call";
pub const CASINO_RAZZ: &str = "casino_razz";
/// The `bet` of a SYNOT Call Blind request: not a bet type of its own but a Call placed before
/// the deal together with its Ante.
pub const CALL_BLIND: &str = "call_blind";

/// The stable codes of the refusals this engine returns.
pub mod code {
    pub use crate::games::code::WRONG_FAMILY;
    /// A Casino Hold'em plan this engine cannot play (an automatic decision other than fold).
    pub const UNSUPPORTED_PLAN: &str = "unsupported_plan";
    /// `bet` is not a bet of the family.
    pub const UNKNOWN_BET_TYPE: &str = "unknown_bet_type";
    /// A bet of the family that this plan does not offer (Bonus at SYNOT, Call Blind at
    /// Evolution, …).
    pub const NOT_OFFERED: &str = "not_offered";
    /// A Call sent as a bet: the Call is the player's decision after the flop.
    pub const CALL_IS_A_DECISION: &str = "call_is_a_decision";
    /// A stake that is zero or negative.
    pub const BAD_STAKE: &str = "bad_stake";
    /// A stake (or a round's total) that does not fit in i64 minor units.
    pub const STAKE_OVERFLOW: &str = "stake_overflow";
    pub const BELOW_MIN_BET: &str = "below_min_bet";
    pub const ABOVE_MAX_BET: &str = "above_max_bet";
    /// A bet without the bet its plan row `requires` (a side bet without the Ante).
    pub const REQUIRES_BET: &str = "requires_bet";
    /// A Call Blind and an Ante placed on its own in one round.
    pub const CALL_BLIND_EXCLUDES_ANTE: &str = "call_blind_excludes_ante";
    /// A Call Blind whose Ante share is not a whole minor unit.
    pub const CALL_BLIND_NOT_DIVISIBLE: &str = "call_blind_not_divisible";
    /// Deal: a card for another position than the plan's dealing order expects.
    pub const WRONG_POSITION: &str = "wrong_position";
    /// Deal: a card the shoe has already given in this round.
    pub const DUPLICATE_CARD: &str = "duplicate_card";
    /// Deal: a card the plan's shoe does not hold.
    pub const CARD_NOT_IN_SHOE: &str = "card_not_in_shoe";
    /// Deal: a card while the players decide (the board after the decision comes after).
    pub const AWAITING_DECISIONS: &str = "awaiting_decisions";
    /// Deal: a card after the deal is complete.
    pub const DEAL_COMPLETE: &str = "deal_complete";
    /// A decision (or closing the decisions) outside the time for it.
    pub const NOT_AWAITING_DECISION: &str = "not_awaiting_decision";
    /// A decision from a player who has already called (by a Call Blind or a decision).
    pub const ALREADY_CALLED: &str = "already_called";
    /// A decision or settlement for a player without an Ante.
    pub const NO_ANTE: &str = "no_ante";
    /// Settlement before the cards it needs are dealt.
    pub const DEAL_INCOMPLETE: &str = "deal_incomplete";
    /// Settlement: placements the engine would not have made (a Call that is not the
    /// multiple of the Ante, an unknown bet type, a non-positive stake).
    pub const INCONSISTENT_PLACEMENT: &str = "inconsistent_placement";
    /// The settlement codes every engine shares ([`crate::games::code`]).
    pub use crate::games::code::{MAX_WIN_EXCEEDED, NO_PAYOUT_ROW, PAYOUT_OVERFLOW};
}

/// One bet as an operator sends it: `ante`, a side bet of the plan (`bonus`, `aa`,
/// `casino_razz`) or, where the plan has it, `call_blind`. The Call is not sent as a bet: it
/// is the player's decision ([`CasinoHoldemEngine::decide`]).
///
/// ```json
/// {"bet": "ante", "stake_minor": 10000}
/// {"bet": "bonus", "stake_minor": 5000}
/// {"bet": "call_blind", "stake_minor": 20000}
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HoldemBetRequest {
    pub bet: String,
    pub stake_minor: i64,
}

/// How a placement came about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlacedBy {
    /// A bet request of its own.
    Bet,
    /// One half of a Call Blind: the Call, or the Ante placed with it.
    CallBlind,
    /// The player's call after the flop.
    Decision,
}

/// One accepted stake on one bet type. A player's round is a list of them: chips added to a
/// box are further placements of the same bet type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Placement {
    /// The bet type of the plan's limits and payout tables (`ante`, `call`, `bonus`, …).
    pub bet_type: String,
    pub stake_minor: i64,
    pub placed_by: PlacedBy,
}

/// The player's decision after the flop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// "2x Hrát" / "Dorovnat": place the Call and play on.
    Call,
    /// "Položit" / "Složit karty": give up the Ante (and the Call's chance).
    Fold,
}

/// One card of the round's deal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DealtCard {
    pub position: Position,
    pub card: Card,
}

/// The round's cards so far, in dealing order, and whether the decisions are closed (after
/// which the rest of the board comes). Built only through the engine's `deal_card` and
/// `close_decisions`, which keep it to the plan's order; read back from the log it is checked
/// again by `settle`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Deal {
    pub cards: Vec<DealtCard>,
    pub decisions_closed: bool,
}

impl Deal {
    /// The cards dealt to `position`, in dealing order.
    pub fn at(&self, position: Position) -> Vec<Card> {
        self.cards
            .iter()
            .filter(|d| d.position == position)
            .map(|d| d.card)
            .collect()
    }
}

/// What the deal expects next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "next", rename_all = "snake_case")]
pub enum Next {
    /// A card for this position.
    Card { position: Position },
    /// The players' decisions: no card until [`CasinoHoldemEngine::close_decisions`].
    Decisions,
    /// Every card is dealt.
    Complete,
}

/// How the main game (Ante and Call) ended for the player.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MainResult {
    /// The player folded (or timed out): Ante lost.
    Folded,
    /// The dealer did not qualify: Ante by the payout table, Call returned.
    DealerNotQualified,
    /// The dealer qualified and the player's hand is better: Ante by the table, Call 1:1.
    PlayerWins,
    /// The dealer qualified and the hands are equal: Ante and Call returned.
    Tie,
    /// The dealer qualified and the dealer's hand is better: Ante and Call lost.
    DealerWins,
}

/// What one bet type of the player's round pays.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BetPayout {
    pub bet_type: String,
    #[serde(flatten)]
    pub payout: Payout,
}

/// A player's settled round: the hands it was decided on and one payout per bet type held.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Settlement {
    pub result: MainResult,
    /// The best five of the player's two cards and the flop (Bonus, AA).
    pub flop_hand: HandRank,
    /// The player's and the dealer's best five of seven, when the player called.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player_hand: Option<HandRank>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dealer_hand: Option<HandRank>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dealer_qualifies: Option<bool>,
    /// The player's two cards and the flop read low, when the player holds Casino Razz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub razz_hand: Option<LowHand>,
    /// One per bet type held, in the order Ante, Call, the flop bonus (Bonus/AA), Casino Razz;
    /// the stake is the total of that bet type's placements.
    pub payouts: Vec<BetPayout>,
}

impl Settlement {
    /// What the wallet is credited: returned stakes plus wins.
    pub fn total_minor(&self) -> i64 {
        self.payouts.iter().map(|p| p.payout.total_minor()).sum()
    }
}

/// The Casino Hold'em engine for one plan.
#[derive(Debug, Clone, Copy)]
pub struct CasinoHoldemEngine<'p> {
    plan: &'p Plan,
    rules: &'p CasinoHoldemRules,
}

impl<'p> CasinoHoldemEngine<'p> {
    /// The engine for `plan`; refuses a plan of another family, and one whose automatic
    /// decision is not a fold (the only one the documents give for this game).
    pub fn new(plan: &'p Plan) -> Result<CasinoHoldemEngine<'p>, Refusal> {
        crate::games::expect_family(plan, Family::CasinoHoldem, "Casino Hold'em")?;
        let GameRules::CasinoHoldem(rules) = &plan.rules else {
            unreachable!("expect_family checked the rules' family")
        };
        // The evaluator plays the ace both ways, the only reading the documents give.
        match rules.ace_in_straights {
            AceInStraights::HighOrLow => {}
        }
        if rules.shoe.deck != DeckKind::Standard52 || rules.shoe.decks == 0 {
            return Err(Refusal::new(
                code::UNSUPPORTED_PLAN,
                format!("{} is not dealt from 52-card decks", plan.key()),
            )
            .clause(rules.clause.clone()));
        }
        match &plan.policies.decision_timeout {
            Some(t) if t.automatic == AutoDecision::Fold => {}
            other => {
                return Err(Refusal::new(
                    code::UNSUPPORTED_PLAN,
                    format!(
                        "{} has the automatic decision {}; Casino Hold'em folds on time-out",
                        plan.key(),
                        other
                            .as_ref()
                            .map_or_else(|| "none".into(), |t| super::wire_name(&t.automatic))
                    ),
                ))
            }
        }
        Ok(CasinoHoldemEngine { plan, rules })
    }

    pub fn plan(&self) -> &'p Plan {
        self.plan
    }

    pub fn rules(&self) -> &'p CasinoHoldemRules {
        self.rules
    }

    // ----- Zahájení hry: bets -----

    /// Reads and checks one bet request against its bet type's limits. A Call Blind gives two
    /// placements: the Call of the request's stake, and the Ante of `ante_share` of it placed
    /// with it ("se automaticky zkopíruje polovina této sázky na pozici Ante"), each held to its
    /// own type's limits. Nothing is accepted unless everything is.
    ///
    /// This checks the request alone; the caller then checks it together with the player's
    /// earlier placements of the round with [`CasinoHoldemEngine::check_cumulative`].
    pub fn place(&self, req: &HoldemBetRequest) -> Result<Vec<Placement>, Refusal> {
        let bet = req.bet.as_str();
        if bet == CALL {
            let how = if self.rules.call_blind.is_some() {
                format!(" (or before the deal as '{CALL_BLIND}')")
            } else {
                String::new()
            };
            return Err(Refusal::new(
                code::CALL_IS_A_DECISION,
                format!(
                    "the Call is placed by the player's decision after the flop{how}, at {} × the Ante",
                    self.rules.call_multiple
                ),
            )
            .clause(self.rules.clause.clone()));
        }
        if bet == CALL_BLIND {
            let Some(cb) = &self.rules.call_blind else {
                return Err(self.not_offered("the Call Blind"));
            };
            self.positive(req.stake_minor)?;
            let call = self.within_limits(CALL, req.stake_minor, PlacedBy::CallBlind)?;
            let (num, den) = (
                i128::from(cb.ante_share.numerator()),
                i128::from(cb.ante_share.denominator()),
            );
            let product = i128::from(req.stake_minor) * num;
            if product % den != 0 {
                return Err(Refusal::new(
                    code::CALL_BLIND_NOT_DIVISIBLE,
                    format!(
                        "a Call Blind of {} places an Ante of {} of it, which is not a whole minor unit",
                        self.money(req.stake_minor),
                        cb.ante_share
                    ),
                )
                .clause(cb.clause.clone()));
            }
            let ante_minor = i64::try_from(product / den).map_err(|_| self.overflow(bet))?;
            let ante = self.within_limits(ANTE, ante_minor, PlacedBy::CallBlind)?;
            return Ok(vec![ante, call]);
        }
        let offered = self.plan.bet(bet).is_some();
        if !offered {
            if poker_bet(bet) {
                return Err(self.not_offered(&format!("the bet '{bet}'")));
            }
            return Err(Refusal::new(
                code::UNKNOWN_BET_TYPE,
                format!(
                    "'{bet}' is not a bet of {}; it offers {}",
                    self.plan.key(),
                    self.offered().join(", ")
                ),
            ));
        }
        self.positive(req.stake_minor)?;
        Ok(vec![self.within_limits(
            bet,
            req.stake_minor,
            PlacedBy::Bet,
        )?])
    }

    /// Refuses `new` when, added to `existing` (the player's placements already accepted in
    /// this round), the player's total on a bet type would exceed its `max_bet`, a bet would
    /// lack a bet its row `requires` (a side bet without the Ante: "Vedlejší sázku lze podat v
    /// kombinaci s hlavní sázkou (Ante) a nelze ji podat samostatně"), a Call Blind would meet
    /// an Ante placed on its own ("uzavře sázku Ante nebo Call Blind"), or the Ante would need
    /// a Call above the Call's `max_bet`.
    pub fn check_cumulative(
        &self,
        existing: &[&Placement],
        new: &[Placement],
    ) -> Result<(), Refusal> {
        let all: Vec<&Placement> = existing.iter().copied().chain(new).collect();
        for p in new {
            let row = self.row(&p.bet_type)?;
            let total = self.total(all.iter().copied(), &p.bet_type)?;
            if total > row.max_bet {
                let already = self.total(existing.iter().copied(), &p.bet_type)?;
                return Err(Refusal::new(
                    code::ABOVE_MAX_BET,
                    format!(
                        "the player's total on {} would be {} ({} already placed this round), above its maximum bet {}",
                        row.label,
                        self.money(total),
                        self.money(already),
                        self.money(row.max_bet)
                    ),
                )
                .clause(row.clause.clone()));
            }
            for needed in &row.requires {
                if !all.iter().any(|q| &q.bet_type == needed) {
                    return Err(Refusal::new(
                        code::REQUIRES_BET,
                        format!(
                            "{} is placed only together with {}",
                            row.label,
                            self.plan.bet(needed).map_or(needed.as_str(), |b| &b.label)
                        ),
                    )
                    .clause(row.clause.clone()));
                }
            }
        }
        let is_ante = |p: &&&Placement| p.bet_type == ANTE;
        let blind = all
            .iter()
            .filter(is_ante)
            .any(|p| p.placed_by == PlacedBy::CallBlind);
        let own = all
            .iter()
            .filter(is_ante)
            .any(|p| p.placed_by == PlacedBy::Bet);
        if blind && own {
            let clause = self
                .rules
                .call_blind
                .as_ref()
                .map_or(&self.rules.clause, |c| &c.clause);
            return Err(Refusal::new(
                code::CALL_BLIND_EXCLUDES_ANTE,
                "a player places an Ante or a Call Blind (which brings its own Ante), not both",
            )
            .clause(clause.clone()));
        }
        if own {
            let ante = self.total(all.iter().copied(), ANTE)?;
            let call_row = self.row(CALL)?;
            let call = ante
                .checked_mul(i64::from(self.rules.call_multiple))
                .ok_or_else(|| self.overflow(CALL))?;
            if call > call_row.max_bet {
                return Err(Refusal::new(
                    code::ABOVE_MAX_BET,
                    format!(
                        "an Ante of {} would need a Call of {} ({} × the Ante), above the Call's maximum bet {}",
                        self.money(ante),
                        self.money(call),
                        self.rules.call_multiple,
                        self.money(call_row.max_bet)
                    ),
                )
                .clause(call_row.clause.clone()));
            }
        }
        Ok(())
    }

    // ----- Průběh hry: the deal -----

    /// What the deal expects next: the plan's `initial_deal_order`, then the players'
    /// decisions, then `board_cards_after_decision` board cards.
    pub fn next(&self, deal: &Deal) -> Next {
        let dealt = deal.cards.len();
        let initial = self.rules.initial_deal_order.len();
        if dealt < initial {
            return Next::Card {
                position: self.rules.initial_deal_order[dealt],
            };
        }
        if !deal.decisions_closed {
            return Next::Decisions;
        }
        if dealt < initial + usize::from(self.rules.board_cards_after_decision) {
            return Next::Card {
                position: Position::Board,
            };
        }
        Next::Complete
    }

    /// Accepts the next card of the deal, dealt to `position`. Refused, and `deal` left as it
    /// was, when the plan's order expects another position, when the shoe has already given
    /// every copy of the card in this round, while the players decide, or after the last card.
    pub fn deal_card(
        &self,
        deal: &mut Deal,
        position: Position,
        card: Card,
    ) -> Result<Next, Refusal> {
        let clause = self.rules.clause.clone();
        let number = deal.cards.len() + 1;
        match self.next(deal) {
            Next::Card { position: expected } if expected == position => {}
            Next::Card { position: expected } => {
                return Err(Refusal::new(
                    code::WRONG_POSITION,
                    format!(
                        "card {number} of the deal ({card}) goes to the {}, not the {}",
                        position_name(expected),
                        position_name(position)
                    ),
                )
                .clause(clause));
            }
            Next::Decisions => {
                return Err(Refusal::new(
                    code::AWAITING_DECISIONS,
                    format!(
                        "{card} was dealt while the players decide; the last {} board cards come after the decisions",
                        self.rules.board_cards_after_decision
                    ),
                )
                .clause(clause));
            }
            Next::Complete => {
                return Err(Refusal::new(
                    code::DEAL_COMPLETE,
                    format!("{card} was dealt after the last card of the round"),
                )
                .clause(clause));
            }
        }
        self.check_shoe(deal, card)?;
        deal.cards.push(DealtCard { position, card });
        Ok(self.next(deal))
    }

    /// Ends the players' decisions: the rest of the board may be dealt. Refused before the
    /// initial deal is complete and when already closed.
    pub fn close_decisions(&self, deal: &mut Deal) -> Result<Next, Refusal> {
        if self.next(deal) != Next::Decisions {
            return Err(self.not_awaiting(deal));
        }
        deal.decisions_closed = true;
        Ok(self.next(deal))
    }

    /// RNG mode: the whole deal of a round from a seed, in dealing order: [`shuffle`] of the
    /// plan's shoe, the first cards to the `initial_deal_order`, the next
    /// `board_cards_after_decision` to the board. Feed them to `deal_card` (the last ones
    /// after `close_decisions`).
    pub fn rng_deal(&self, seed: [u8; 32]) -> Vec<DealtCard> {
        let shuffled = shuffle(seed, self.rules.shoe);
        let positions = self
            .rules
            .initial_deal_order
            .iter()
            .copied()
            .chain(std::iter::repeat_n(
                Position::Board,
                usize::from(self.rules.board_cards_after_decision),
            ));
        positions
            .zip(shuffled)
            .map(|(position, card)| DealtCard { position, card })
            .collect()
    }

    // ----- Průběh hry: the decision -----

    /// Whether the player owes a decision: he holds an Ante and no Call (a Call Blind player
    /// has called already: "automaticky se zúčastnit celého hracího kola").
    pub fn decision_required(&self, placements: &[Placement]) -> bool {
        placements.iter().any(|p| p.bet_type == ANTE)
            && !placements.iter().any(|p| p.bet_type == CALL)
    }

    /// The decision taken for a player who does not decide in time or is disconnected
    /// (`policies.decision_timeout`: "označí se po uplynutí času na rozhodnutí volba Položit").
    pub fn automatic_decision(&self) -> Decision {
        match self
            .plan
            .policies
            .decision_timeout
            .as_ref()
            .map(|t| t.automatic)
        {
            Some(AutoDecision::Fold) => Decision::Fold,
            other => unreachable!("CasinoHoldemEngine::new admits only fold, not {other:?}"),
        }
    }

    /// The time the player has to decide (`policies.timing.decision_ms`).
    pub fn decision_ms(&self) -> Option<u64> {
        self.plan.policies.timing.decision_ms
    }

    /// The player's decision after the flop. A call gives the Call placement, `call_multiple`
    /// × the player's Ante ("ve výši dvojnásobku své sázky Ante"), held to the Call's limits; a
    /// fold places nothing (the Ante is lost at settlement). Refused outside the decision time
    /// (before the flop, after the decisions close) and for a player who has called already.
    pub fn decide(
        &self,
        placements: &[Placement],
        deal: &Deal,
        decision: Decision,
    ) -> Result<Option<Placement>, Refusal> {
        if self.next(deal) != Next::Decisions {
            return Err(self.not_awaiting(deal));
        }
        if let Some(call) = placements.iter().find(|p| p.bet_type == CALL) {
            let how = match call.placed_by {
                PlacedBy::CallBlind => "by a Call Blind, which takes no decision",
                _ => "already",
            };
            return Err(
                Refusal::new(code::ALREADY_CALLED, format!("the player has called {how}")).clause(
                    self.rules
                        .call_blind
                        .as_ref()
                        .map_or(&self.rules.clause, |c| &c.clause)
                        .clone(),
                ),
            );
        }
        let ante = self.total(placements.iter(), ANTE)?;
        if ante == 0 {
            return Err(
                Refusal::new(code::NO_ANTE, "a player without an Ante takes no decision")
                    .clause(self.rules.clause.clone()),
            );
        }
        match decision {
            Decision::Fold => Ok(None),
            Decision::Call => {
                let stake = ante
                    .checked_mul(i64::from(self.rules.call_multiple))
                    .ok_or_else(|| self.overflow(CALL))?;
                Ok(Some(self.within_limits(CALL, stake, PlacedBy::Decision)?))
            }
        }
    }

    // ----- Výplatní tabulka: settlement -----

    /// Settles one player's round on the deal. A player holding a Call (a call or a Call
    /// Blind) plays on: both hands are the best five of seven, the dealer qualifies with the
    /// plan's `dealer_qualifies_with`; a player without one folded.
    ///
    /// - Folded: Ante lost.
    /// - Dealer not qualified: Ante paid by the Ante table on the player's hand class, whatever
    ///   the dealer holds; Call returned (`call/dealer_not_qualified`).
    /// - Dealer qualified: better hand → Ante by the table, Call by `call/win`; equal hands
    ///   (every deciding rank equal) → `ante/push`, `call/push`; worse → both lost.
    /// - Flop bonus (Bonus, AA) on the player's two cards and the flop: paid by its table when
    ///   at least `min_hand`; on a fold per `on_fold` (Bonus still settled, AA lost).
    /// - Casino Razz on the same five read low: lost with a `losing_ranks` card or (with
    ///   `paired_hands_lose`) two cards of a rank; otherwise paid by the row of its class
    ///   (`wheel_suited`, `wheel_mixed_suits`, `six_high`, …), lost where the table has none.
    ///
    /// Every win is held to its bet type's `max_win` and `max_win_plus_stake`: above them is an
    /// error (`max_win_exceeded`), never capped.
    pub fn settle(&self, placements: &[Placement], deal: &Deal) -> Result<Settlement, Refusal> {
        let stakes = self.stakes(placements)?;
        self.check_deal(deal)?;
        let hole = deal.at(Position::Player);
        let board = deal.at(Position::Board);
        let flop_cards = self.five_cards(FiveCards::HoleAndFlop, &hole, &board)?;
        let flop_hand = self.rank(&flop_cards)?;
        let called = stakes.of(CALL) > 0;
        let mut settlement = Settlement {
            result: MainResult::Folded,
            flop_hand,
            player_hand: None,
            dealer_hand: None,
            dealer_qualifies: None,
            razz_hand: None,
            payouts: Vec::new(),
        };

        // Ante and Call.
        if called {
            if board.len() < 5 || hole.len() < 2 {
                return Err(self.incomplete("the whole board, to settle a called hand"));
            }
            let dealer = deal.at(Position::Dealer);
            let player_hand = self.rank(&[hole.as_slice(), &board].concat())?;
            let dealer_hand = self.rank(&[dealer.as_slice(), &board].concat())?;
            let qualifies = meets(dealer_hand, &self.rules.dealer_qualifies_with);
            let (result, ante, call) = if !qualifies {
                let ante = match self.rules.dealer_not_qualified.ante {
                    AnteWhenNotQualified::PaidByPaytable => {
                        self.class_row(ANTE, player_hand.class())?
                    }
                };
                let call = match self.rules.dealer_not_qualified.call {
                    CallWhenNotQualified::Returned => {
                        self.outcome_row(CALL, "dealer_not_qualified")?
                    }
                };
                (MainResult::DealerNotQualified, Some(ante), Some(call))
            } else if player_hand > dealer_hand {
                (
                    MainResult::PlayerWins,
                    Some(self.class_row(ANTE, player_hand.class())?),
                    Some(self.outcome_row(CALL, "win")?),
                )
            } else if player_hand == dealer_hand {
                (
                    MainResult::Tie,
                    Some(self.outcome_row(ANTE, "push")?),
                    Some(self.outcome_row(CALL, "push")?),
                )
            } else {
                (MainResult::DealerWins, None, None)
            };
            settlement.result = result;
            settlement.player_hand = Some(player_hand);
            settlement.dealer_hand = Some(dealer_hand);
            settlement.dealer_qualifies = Some(qualifies);
            settlement
                .payouts
                .push(self.pay(ANTE, stakes.of(ANTE), ante)?);
            settlement
                .payouts
                .push(self.pay(CALL, stakes.of(CALL), call)?);
        } else {
            settlement
                .payouts
                .push(self.pay(ANTE, stakes.of(ANTE), None)?);
        }

        // The flop bonus: Evolution's Bonus or SYNOT's AA.
        if let Some(fb) = &self.rules.flop_bonus {
            let id = fb.bet.id();
            let stake = stakes.of(id);
            if stake > 0 {
                let cards = self.five_cards(fb.cards, &hole, &board)?;
                let hand = self.rank(&cards)?;
                let lost_on_fold = !called && fb.on_fold == SideBetOnFold::Lost;
                let row = if !lost_on_fold && meets(hand, &fb.min_hand) {
                    Some(self.class_row(id, hand.class())?)
                } else {
                    None
                };
                settlement.payouts.push(self.pay(id, stake, row)?);
            }
        }

        // Casino Razz.
        if let Some(rz) = &self.rules.casino_razz {
            let stake = stakes.of(CASINO_RAZZ);
            if stake > 0 {
                let cards = self.five_cards(rz.cards, &hole, &board)?;
                let five: [Card; 5] = cards
                    .as_slice()
                    .try_into()
                    .expect("five_cards gives five cards");
                let low = LowHand::of(&five).map_err(|e| self.bad_deal(&e.to_string()))?;
                settlement.razz_hand = Some(low);
                let lost_on_fold = !called && rz.on_fold == SideBetOnFold::Lost;
                let loses = lost_on_fold
                    || rz.losing_ranks.iter().any(|r| low.contains(r.0))
                    || (rz.paired_hands_lose && low.is_paired());
                let row = if loses {
                    None
                } else {
                    // A hand of a class the table does not pay loses (the plan's assumption on
                    // ten and jack high).
                    self.plan
                        .payouts_for(CASINO_RAZZ)
                        .find(|r| r.outcome == razz_outcome(&low))
                };
                settlement.payouts.push(self.pay(CASINO_RAZZ, stake, row)?);
            }
        }
        Ok(settlement)
    }

    // ----- helpers -----

    /// The placement of `stake_minor` on `bet`, within its row's limits.
    fn within_limits(
        &self,
        bet: &str,
        stake_minor: i64,
        placed_by: PlacedBy,
    ) -> Result<Placement, Refusal> {
        let row = self.row(bet)?;
        if stake_minor < row.min_bet || stake_minor > row.max_bet {
            let (code, bound, limit) = if stake_minor < row.min_bet {
                (code::BELOW_MIN_BET, "below the minimum", row.min_bet)
            } else {
                (code::ABOVE_MAX_BET, "above the maximum", row.max_bet)
            };
            let via = match placed_by {
                PlacedBy::CallBlind => " (placed by a Call Blind)",
                PlacedBy::Decision => " (the Call of the player's decision)",
                PlacedBy::Bet => "",
            };
            return Err(Refusal::new(
                code,
                format!(
                    "a stake of {} on {}{via} is {bound} bet {} in {}",
                    self.money(stake_minor),
                    row.label,
                    self.money(limit),
                    self.plan.key()
                ),
            )
            .clause(row.clause.clone()));
        }
        Ok(Placement {
            bet_type: row.id.clone(),
            stake_minor,
            placed_by,
        })
    }

    fn positive(&self, stake_minor: i64) -> Result<(), Refusal> {
        if stake_minor <= 0 {
            return Err(Refusal::new(
                code::BAD_STAKE,
                format!("the stake must be positive, not {stake_minor} minor units"),
            ));
        }
        Ok(())
    }

    fn total<'a>(
        &self,
        placements: impl Iterator<Item = &'a Placement>,
        bet: &str,
    ) -> Result<i64, Refusal> {
        placements
            .filter(|p| p.bet_type == bet)
            .try_fold(0i64, |sum, p| sum.checked_add(p.stake_minor))
            .ok_or_else(|| self.overflow(bet))
    }

    /// The player's totals per bet type, checked to be placements this engine makes.
    fn stakes(&self, placements: &[Placement]) -> Result<Stakes, Refusal> {
        let inconsistent = |why: String| {
            Refusal::new(
                code::INCONSISTENT_PLACEMENT,
                format!("{why}: not a round of {}", self.plan.key()),
            )
        };
        for p in placements {
            if p.stake_minor <= 0 {
                return Err(inconsistent(format!(
                    "a stake of {} minor units on {}",
                    p.stake_minor, p.bet_type
                )));
            }
            if self.plan.bet(&p.bet_type).is_none() {
                return Err(inconsistent(format!("a bet on '{}'", p.bet_type)));
            }
        }
        let mut by_type = Vec::new();
        for b in &self.plan.bets {
            by_type.push((b.id.clone(), self.total(placements.iter(), &b.id)?));
        }
        let stakes = Stakes { by_type };
        let (ante, call) = (stakes.of(ANTE), stakes.of(CALL));
        if ante == 0 {
            return Err(Refusal::new(
                code::NO_ANTE,
                "a round without an Ante has nothing to settle",
            )
            .clause(self.rules.clause.clone()));
        }
        if call != 0 && i128::from(call) != i128::from(ante) * i128::from(self.rules.call_multiple)
        {
            return Err(inconsistent(format!(
                "a Call of {} is not {} × the Ante of {}",
                self.money(call),
                self.rules.call_multiple,
                self.money(ante)
            )));
        }
        Ok(stakes)
    }

    /// The deal read back (from the log) is one this engine accepts: replayed card by card.
    fn check_deal(&self, deal: &Deal) -> Result<(), Refusal> {
        let mut replay = Deal::default();
        for d in &deal.cards {
            if self.next(&replay) == Next::Decisions {
                self.close_decisions(&mut replay)?;
            }
            self.deal_card(&mut replay, d.position, d.card)?;
        }
        if self.next(&replay) == Next::Decisions && deal.decisions_closed {
            self.close_decisions(&mut replay)?;
        }
        if replay.cards.len() < self.rules.initial_deal_order.len() {
            return Err(self.incomplete("the deal before the decision"));
        }
        Ok(())
    }

    /// The five cards a side bet looks at.
    fn five_cards(
        &self,
        which: FiveCards,
        hole: &[Card],
        board: &[Card],
    ) -> Result<Vec<Card>, Refusal> {
        match which {
            // "dvě karty sázejícího a první tři společné karty (tzv. flop)"
            FiveCards::HoleAndFlop => {
                if hole.len() < 2 || board.len() < 3 {
                    return Err(self.incomplete("the player's two cards and the flop"));
                }
                Ok([&hole[..2], &board[..3]].concat())
            }
        }
    }

    fn rank(&self, cards: &[Card]) -> Result<HandRank, Refusal> {
        poker_hand::evaluate(cards).map_err(|e| self.bad_deal(&e.to_string()))
    }

    /// The one payout row of `bet` that pays a hand of `class`.
    fn class_row(&self, bet: &str, class: HandClass) -> Result<&'p PayoutRow, Refusal> {
        self.plan
            .payouts
            .iter()
            .find(|r| r.bet == bet && outcome_classes(&r.outcome).contains(&class))
            .ok_or_else(|| {
                Refusal::new(
                    code::NO_PAYOUT_ROW,
                    format!(
                        "{} has no {bet} payout for a {}",
                        self.plan.key(),
                        poker_hand::class_name(class)
                    ),
                )
            })
    }

    fn outcome_row(&self, bet: &str, outcome: &str) -> Result<&'p PayoutRow, Refusal> {
        self.plan
            .payouts
            .iter()
            .find(|r| r.bet == bet && r.outcome == outcome)
            .ok_or_else(|| {
                Refusal::new(
                    code::NO_PAYOUT_ROW,
                    format!("{} has no {bet}/{outcome} payout row", self.plan.key()),
                )
            })
    }

    /// The payout of `stake_minor` on `bet` by `row` (a loss without one): a ratio wins
    /// `stake × ratio` on top of the returned stake, a refund returns its share of the stake.
    fn pay(
        &self,
        bet: &str,
        stake_minor: i64,
        row: Option<&PayoutRow>,
    ) -> Result<BetPayout, Refusal> {
        let Some(row) = row else {
            return Ok(BetPayout {
                bet_type: bet.to_string(),
                payout: Payout::lose(stake_minor),
            });
        };
        let limits = self.row(bet)?;
        Ok(BetPayout {
            bet_type: bet.to_string(),
            payout: super::pay_row(self.plan, limits, row, stake_minor, &limits.label)?,
        })
    }

    fn check_shoe(&self, deal: &Deal, card: Card) -> Result<(), Refusal> {
        let copies = self.rules.shoe.copies_of(card);
        if copies == 0 {
            return Err(Refusal::new(
                code::CARD_NOT_IN_SHOE,
                format!("{card} is not in the plan's shoe"),
            )
            .clause(self.rules.clause.clone()));
        }
        let seen = deal.cards.iter().filter(|d| d.card == card).count();
        if seen >= usize::from(copies) {
            let deck = if copies == 1 {
                "one deck".to_string()
            } else {
                format!("{copies} decks")
            };
            return Err(Refusal::new(
                code::DUPLICATE_CARD,
                format!("{card} was already dealt this round and the shoe of {deck} holds it {copies} time(s)"),
            )
            .clause(self.rules.clause.clone()));
        }
        Ok(())
    }

    fn row(&self, bet: &str) -> Result<&'p BetType, Refusal> {
        self.plan
            .bet(bet)
            .ok_or_else(|| self.not_offered(&format!("the bet '{bet}'")))
    }

    fn not_offered(&self, what: &str) -> Refusal {
        Refusal::new(
            code::NOT_OFFERED,
            format!(
                "{} does not offer {what}; it offers {}",
                self.plan.key(),
                self.offered().join(", ")
            ),
        )
        .clause(self.rules.clause.clone())
    }

    fn not_awaiting(&self, deal: &Deal) -> Refusal {
        let when = match self.next(deal) {
            Next::Card { .. } if deal.decisions_closed => "after the decisions closed",
            Next::Card { .. } => "before the flop is dealt",
            Next::Complete => "after the deal",
            Next::Decisions => "now",
        };
        Refusal::new(
            code::NOT_AWAITING_DECISION,
            format!(
                "the players decide after the flop and before the rest of the board, not {when}"
            ),
        )
        .clause(self.rules.clause.clone())
    }

    fn incomplete(&self, what: &str) -> Refusal {
        Refusal::new(
            code::DEAL_INCOMPLETE,
            format!("settlement needs {what}, which is not dealt yet"),
        )
        .clause(self.rules.clause.clone())
    }

    fn bad_deal(&self, why: &str) -> Refusal {
        Refusal::new(code::DUPLICATE_CARD, why.to_string()).clause(self.rules.clause.clone())
    }

    fn overflow(&self, bet: &str) -> Refusal {
        Refusal::new(
            code::STAKE_OVERFLOW,
            format!("the stakes on {bet} do not fit in 64-bit minor units"),
        )
    }

    /// Every `bet` a request to this plan may name.
    fn offered(&self) -> Vec<&str> {
        let mut out: Vec<&str> = self
            .plan
            .bets
            .iter()
            .map(|b| b.id.as_str())
            .filter(|&b| b != CALL)
            .collect();
        if self.rules.call_blind.is_some() {
            out.push(CALL_BLIND);
        }
        out
    }

    fn money(&self, minor: i64) -> Money {
        Money::new(minor, self.plan.plan.currency)
    }
}

/// A player's total stake per bet type.
struct Stakes {
    by_type: Vec<(String, i64)>,
}

impl Stakes {
    fn of(&self, bet: &str) -> i64 {
        self.by_type
            .iter()
            .find(|(b, _)| b == bet)
            .map_or(0, |(_, s)| *s)
    }
}

/// Whether a bet id is of the family's vocabulary.
fn poker_bet(bet: &str) -> bool {
    Family::CasinoHoldem.bet_spec(bet).is_some()
}

/// At least `min`: a better class, or the same class and (for a pair) a pair at least as high
/// ("alespoň pár čtyřek … nebo lepší pokerovou kombinaci"; "pár es nebo lepší").
pub fn meets(hand: HandRank, min: &MinimumHand) -> bool {
    match hand.class().cmp(&min.class) {
        std::cmp::Ordering::Greater => true,
        std::cmp::Ordering::Less => false,
        std::cmp::Ordering::Equal => min
            .pair_rank
            .is_none_or(|lowest| hand.set_rank().is_some_and(|r| r >= lowest.0)),
    }
}

/// The Casino Razz outcome class of a low hand: `wheel_suited` or `wheel_mixed_suits` for
/// 5-4-3-2-A, otherwise its highest card, `six_high` … `king_high`.
pub fn razz_outcome(low: &LowHand) -> String {
    if low.is_wheel() {
        return if low.is_suited() {
            "wheel_suited".into()
        } else {
            "wheel_mixed_suits".into()
        };
    }
    let word = match low.highest() {
        Rank::Two => "two",
        Rank::Three => "three",
        Rank::Four => "four",
        Rank::Five => "five",
        Rank::Six => "six",
        Rank::Seven => "seven",
        Rank::Eight => "eight",
        Rank::Nine => "nine",
        Rank::Ten => "ten",
        Rank::Jack => "jack",
        Rank::Queen => "queen",
        Rank::King => "king",
        Rank::Ace => "ace",
    };
    format!("{word}_high")
}

fn position_name(p: Position) -> &'static str {
    match p {
        Position::Player => "player",
        Position::Dealer => "dealer",
        Position::Board => "board",
    }
}

/// The shoe shuffled from a 32-byte seed by the one documented shuffle of [`crate::rng`]
/// (forward Fisher–Yates over ChaCha20 with rejection sampling), first card dealt first.
pub fn shuffle(seed: [u8; 32], shoe: Shoe) -> Vec<Card> {
    crate::rng::shuffled(shoe, seed)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::games::refs;

    use serde_json::json;

    use super::*;
    use crate::plan::registry::load_file;

    const KC: i64 = 100; // minor units per koruna

    fn plan(id: &str) -> Plan {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("game_plans");
        load_file(
            &dir.join(format!("{id}@1.toml")),
            Some(&dir.join("sources")),
        )
        .unwrap_or_else(|f| panic!("{id} loads: {f:?}"))
        .plan
    }

    fn evolution() -> Plan {
        plan("evolution-casino-holdem")
    }

    fn synot() -> Plan {
        plan("synot-casino-holdem")
    }

    fn engine(p: &Plan) -> CasinoHoldemEngine<'_> {
        CasinoHoldemEngine::new(p).expect("a Casino Hold'em plan")
    }

    fn cards(s: &str) -> Vec<Card> {
        s.split_whitespace()
            .map(|c| c.parse().expect("a card"))
            .collect()
    }

    fn place(e: &CasinoHoldemEngine, v: serde_json::Value) -> Vec<Placement> {
        let r: HoldemBetRequest = serde_json::from_value(v.clone()).expect("a request");
        e.place(&r)
            .unwrap_or_else(|x| panic!("{v} is accepted: {x}"))
    }

    fn refused(e: &CasinoHoldemEngine, v: serde_json::Value) -> Refusal {
        let r: HoldemBetRequest = serde_json::from_value(v.clone()).expect("a request");
        e.place(&r).expect_err(&format!("{v} is refused"))
    }

    /// Deals the plan's initial order from the player's, the dealer's and the board's cards.
    fn initial(e: &CasinoHoldemEngine, player: &str, dealer: &str, board: &str) -> Deal {
        let (mut p, mut d, mut b) = (cards(player), cards(dealer), cards(board));
        p.reverse();
        d.reverse();
        b.reverse();
        let mut deal = Deal::default();
        while let Next::Card { position } = e.next(&deal) {
            let card = match position {
                Position::Player => p.pop(),
                Position::Dealer => d.pop(),
                Position::Board => b.pop(),
            }
            .expect("enough cards for the initial deal");
            e.deal_card(&mut deal, position, card)
                .expect("dealt in order");
        }
        assert_eq!(e.next(&deal), Next::Decisions);
        deal
    }

    /// The whole deal: the initial order, the decisions closed, the last board cards.
    fn full(e: &CasinoHoldemEngine, player: &str, dealer: &str, board: &str) -> Deal {
        let b = cards(board);
        let mut deal = initial(e, player, dealer, board);
        e.close_decisions(&mut deal).expect("after the flop");
        for &c in &b[3..] {
            e.deal_card(&mut deal, Position::Board, c)
                .expect("board after decision");
        }
        assert_eq!(e.next(&deal), Next::Complete);
        deal
    }

    /// An Ante of `ante_kc` and a call: the placements of a player who calls.
    fn called(e: &CasinoHoldemEngine, ante_kc: i64, deal: &Deal) -> Vec<Placement> {
        let mut ps = place(e, json!({"bet": "ante", "stake_minor": ante_kc * KC}));
        let call = e
            .decide(&ps, deal, Decision::Call)
            .expect("a call after the flop")
            .expect("a call places the Call");
        ps.push(call);
        ps
    }

    fn payout<'a>(s: &'a Settlement, bet: &str) -> &'a Payout {
        &s.payouts
            .iter()
            .find(|p| p.bet_type == bet)
            .unwrap_or_else(|| panic!("a {bet} payout in {s:?}"))
            .payout
    }

    /// (outcome, win in Kč, returned in Kč) of one bet.
    fn paid(s: &Settlement, bet: &str) -> (String, i64, i64) {
        let p = payout(s, bet);
        (p.outcome.clone(), p.win_minor / KC, p.returned_minor / KC)
    }

    fn o(outcome: &str, win_kc: i64, returned_kc: i64) -> (String, i64, i64) {
        (outcome.to_string(), win_kc, returned_kc)
    }

    /// Settles a called hand: ante of 100 Kč, call 200 Kč.
    fn settle_called(
        e: &CasinoHoldemEngine,
        player: &str,
        dealer: &str,
        board: &str,
    ) -> Settlement {
        let deal = initial(e, player, dealer, board);
        let ps = called(e, 100, &deal);
        let deal = full(e, player, dealer, board);
        e.settle(&ps, &deal).expect("settles")
    }

    // ----- the engine and the plan -----

    #[test]
    fn non_casino_holdem_plans_are_refused() {
        let p = plan("evolution-roulette");
        let r = CasinoHoldemEngine::new(&p).expect_err("a roulette plan");
        assert_eq!(r.code, code::WRONG_FAMILY);
    }

    #[test]
    fn a_plan_whose_timeout_is_not_a_fold_is_refused() {
        let mut p = evolution();
        p.policies.decision_timeout.as_mut().unwrap().automatic = AutoDecision::Stand;
        assert_eq!(
            CasinoHoldemEngine::new(&p).unwrap_err().code,
            code::UNSUPPORTED_PLAN
        );
    }

    // ----- bets and limits -----

    #[test]
    fn stakes_below_min_or_above_max_are_refused_with_the_limits_clause() {
        for p in [evolution(), synot()] {
            let e = engine(&p);
            for bet in p.bets.iter().filter(|b| b.id != CALL) {
                let ok = place(&e, json!({"bet": bet.id, "stake_minor": bet.max_bet}));
                assert_eq!(ok[0].stake_minor, bet.max_bet);
                for (stake, code) in [
                    (bet.min_bet - 1, code::BELOW_MIN_BET),
                    (bet.max_bet + 1, code::ABOVE_MAX_BET),
                ] {
                    let r = refused(&e, json!({"bet": bet.id, "stake_minor": stake}));
                    assert_eq!(r.code, code, "{} {stake}", bet.id);
                    assert_eq!(r.clause.as_deref(), Some(bet.clause.as_str()));
                }
            }
            assert_eq!(
                refused(&e, json!({"bet": "ante", "stake_minor": 0})).code,
                code::BAD_STAKE
            );
        }
    }

    #[test]
    fn each_plan_offers_only_its_own_side_bets() {
        let (evo, syn) = (evolution(), synot());
        let (e, s) = (engine(&evo), engine(&syn));
        for bet in ["aa", "casino_razz", "call_blind"] {
            assert_eq!(
                refused(&e, json!({"bet": bet, "stake_minor": 1000})).code,
                code::NOT_OFFERED,
                "{bet} at Evolution"
            );
        }
        assert_eq!(
            refused(&s, json!({"bet": "bonus", "stake_minor": 1000})).code,
            code::NOT_OFFERED
        );
        assert_eq!(
            refused(&s, json!({"bet": "straight", "stake_minor": 1000})).code,
            code::UNKNOWN_BET_TYPE
        );
    }

    #[test]
    fn the_call_is_placed_only_by_the_decision_after_the_flop() {
        let p = evolution();
        let e = engine(&p);
        let r = refused(&e, json!({"bet": "call", "stake_minor": 20000}));
        assert_eq!(r.code, code::CALL_IS_A_DECISION);
    }

    #[test]
    fn a_side_bet_needs_the_ante() {
        for (p, side) in [
            (evolution(), "bonus"),
            (synot(), "aa"),
            (synot(), "casino_razz"),
        ] {
            let e = engine(&p);
            let bonus = place(&e, json!({"bet": side, "stake_minor": 1000}));
            let r = e.check_cumulative(&[], &bonus).unwrap_err();
            assert_eq!(r.code, code::REQUIRES_BET, "{side}");
            let ante = place(&e, json!({"bet": "ante", "stake_minor": 1000}));
            e.check_cumulative(&refs(&ante), &bonus)
                .expect("with the Ante");
            // Together in one batch too.
            e.check_cumulative(&[], &[ante, bonus].concat())
                .expect("placed together");
        }
    }

    #[test]
    fn the_players_total_on_a_bet_type_is_held_to_its_max_bet() {
        let p = evolution();
        let e = engine(&p);
        let first = place(&e, json!({"bet": "ante", "stake_minor": 1_500_000}));
        let more = place(&e, json!({"bet": "ante", "stake_minor": 600_000}));
        let r = e.check_cumulative(&refs(&first), &more).unwrap_err();
        assert_eq!(r.code, code::ABOVE_MAX_BET);
        assert!(r.message.contains("20 000,00 CZK"), "{}", r.message);
        let fits = place(&e, json!({"bet": "ante", "stake_minor": 500_000}));
        e.check_cumulative(&refs(&first), &fits)
            .expect("exactly the maximum");
    }

    #[test]
    fn an_ante_whose_call_would_exceed_the_calls_max_bet_is_refused() {
        let mut p = evolution();
        p.bets.iter_mut().find(|b| b.id == CALL).unwrap().max_bet = 3_000_000;
        let e = engine(&p);
        let ante = place(&e, json!({"bet": "ante", "stake_minor": 2_000_000}));
        assert_eq!(
            e.check_cumulative(&[], &ante).unwrap_err().code,
            code::ABOVE_MAX_BET
        );
    }

    // ----- Call Blind (SYNOT) -----

    #[test]
    fn call_blind_places_the_call_and_an_ante_of_half_of_it() {
        let p = synot();
        let e = engine(&p);
        let ps = place(&e, json!({"bet": "call_blind", "stake_minor": 20000}));
        assert_eq!(
            ps,
            vec![
                Placement {
                    bet_type: "ante".into(),
                    stake_minor: 10000,
                    placed_by: PlacedBy::CallBlind
                },
                Placement {
                    bet_type: "call".into(),
                    stake_minor: 20000,
                    placed_by: PlacedBy::CallBlind
                },
            ]
        );
        e.check_cumulative(&[], &ps).expect("a Call Blind alone");
        // More chips on the Call Blind raise the Ante with it.
        let more = place(&e, json!({"bet": "call_blind", "stake_minor": 4000}));
        e.check_cumulative(&refs(&ps), &more).expect("added chips");
        // The Call Blind is limited as the Call: 40 000 Kč, with an Ante of 20 000 Kč.
        place(&e, json!({"bet": "call_blind", "stake_minor": 4_000_000}));
        assert_eq!(
            refused(&e, json!({"bet": "call_blind", "stake_minor": 4_000_002})).code,
            code::ABOVE_MAX_BET
        );
    }

    #[test]
    fn call_blind_of_an_odd_amount_is_refused() {
        let p = synot();
        let e = engine(&p);
        let r = refused(&e, json!({"bet": "call_blind", "stake_minor": 20001}));
        assert_eq!(r.code, code::CALL_BLIND_NOT_DIVISIBLE);
        assert_eq!(r.clause.as_deref(), Some("Call Blind"));
    }

    #[test]
    fn call_blind_and_an_ante_of_its_own_do_not_mix() {
        let p = synot();
        let e = engine(&p);
        let blind = place(&e, json!({"bet": "call_blind", "stake_minor": 20000}));
        let ante = place(&e, json!({"bet": "ante", "stake_minor": 10000}));
        assert_eq!(
            e.check_cumulative(&refs(&blind), &ante).unwrap_err().code,
            code::CALL_BLIND_EXCLUDES_ANTE
        );
        assert_eq!(
            e.check_cumulative(&refs(&ante), &blind).unwrap_err().code,
            code::CALL_BLIND_EXCLUDES_ANTE
        );
    }

    #[test]
    fn a_call_blind_player_takes_no_decision_and_is_settled_as_a_call() {
        let p = synot();
        let e = engine(&p);
        let ps = place(&e, json!({"bet": "call_blind", "stake_minor": 20000}));
        assert!(!e.decision_required(&ps));
        let (pl, dl, bd) = ("Ac Ad", "4c 4d", "2h 7s 9d Jc Kh");
        let deal = initial(&e, pl, dl, bd);
        assert_eq!(
            e.decide(&ps, &deal, Decision::Fold).unwrap_err().code,
            code::ALREADY_CALLED
        );
        let s = e.settle(&ps, &full(&e, pl, dl, bd)).expect("settles");
        assert_eq!(s.result, MainResult::PlayerWins);
        assert_eq!(paid(&s, "ante"), o("straight_or_lower", 100, 100));
        assert_eq!(paid(&s, "call"), o("win", 200, 200));
    }

    // ----- the live deal -----

    #[test]
    fn the_deal_follows_the_plans_order_player_dealer_player_dealer_then_the_flop() {
        for p in [evolution(), synot()] {
            let e = engine(&p);
            let mut deal = Deal::default();
            let order = [
                Position::Player,
                Position::Dealer,
                Position::Player,
                Position::Dealer,
                Position::Board,
                Position::Board,
                Position::Board,
            ];
            let cs = cards("2c 3c 4c 5c 6c 7c 8c 9c Tc");
            for (i, &pos) in order.iter().enumerate() {
                assert_eq!(e.next(&deal), Next::Card { position: pos });
                e.deal_card(&mut deal, pos, cs[i]).expect("in order");
            }
            assert_eq!(e.next(&deal), Next::Decisions);
            e.close_decisions(&mut deal).unwrap();
            for &c in &cs[7..] {
                assert_eq!(
                    e.next(&deal),
                    Next::Card {
                        position: Position::Board
                    }
                );
                e.deal_card(&mut deal, Position::Board, c).unwrap();
            }
            assert_eq!(e.next(&deal), Next::Complete);
            assert_eq!(deal.at(Position::Player), cards("2c 4c"));
            assert_eq!(deal.at(Position::Dealer), cards("3c 5c"));
            assert_eq!(deal.at(Position::Board), cards("6c 7c 8c 9c Tc"));
        }
    }

    #[test]
    fn a_card_for_the_wrong_position_is_refused_and_not_dealt() {
        let p = evolution();
        let e = engine(&p);
        let mut deal = Deal::default();
        e.deal_card(&mut deal, Position::Player, "As".parse().unwrap())
            .unwrap();
        let r = e
            .deal_card(&mut deal, Position::Player, "Ks".parse().unwrap())
            .unwrap_err();
        assert_eq!(r.code, code::WRONG_POSITION);
        assert!(r.message.contains("goes to the dealer"), "{}", r.message);
        assert_eq!(deal.cards.len(), 1);
    }

    #[test]
    fn a_card_dealt_twice_from_the_one_deck_is_refused() {
        let p = evolution();
        let e = engine(&p);
        let mut deal = Deal::default();
        e.deal_card(&mut deal, Position::Player, "As".parse().unwrap())
            .unwrap();
        let r = e
            .deal_card(&mut deal, Position::Dealer, "As".parse().unwrap())
            .unwrap_err();
        assert_eq!(r.code, code::DUPLICATE_CARD);
        assert_eq!(deal.cards.len(), 1);
    }

    #[test]
    fn no_card_is_dealt_while_the_players_decide_or_after_the_last_one() {
        let p = evolution();
        let e = engine(&p);
        let mut deal = initial(&e, "Ac Ad", "4c 4d", "2h 7s 9d");
        let r = e
            .deal_card(&mut deal, Position::Board, "Kh".parse().unwrap())
            .unwrap_err();
        assert_eq!(r.code, code::AWAITING_DECISIONS);
        let deal = full(&e, "Ac Ad", "4c 4d", "2h 7s 9d Jc Kh");
        let mut more = deal.clone();
        let r = e
            .deal_card(&mut more, Position::Board, "Qh".parse().unwrap())
            .unwrap_err();
        assert_eq!(r.code, code::DEAL_COMPLETE);
        assert_eq!(more, deal);
    }

    #[test]
    fn decisions_are_taken_only_after_the_flop_and_before_the_rest_of_the_board() {
        let p = evolution();
        let e = engine(&p);
        let ante = place(&e, json!({"bet": "ante", "stake_minor": 10000}));
        let mut deal = Deal::default();
        e.deal_card(&mut deal, Position::Player, "As".parse().unwrap())
            .unwrap();
        assert_eq!(
            e.decide(&ante, &deal, Decision::Call).unwrap_err().code,
            code::NOT_AWAITING_DECISION
        );
        assert_eq!(
            e.close_decisions(&mut deal).unwrap_err().code,
            code::NOT_AWAITING_DECISION
        );
        let mut deal = initial(&e, "Ac Ad", "4c 4d", "2h 7s 9d");
        e.close_decisions(&mut deal).unwrap();
        assert_eq!(
            e.decide(&ante, &deal, Decision::Call).unwrap_err().code,
            code::NOT_AWAITING_DECISION
        );
    }

    #[test]
    fn the_call_is_twice_the_ante_and_a_fold_places_nothing() {
        for p in [evolution(), synot()] {
            let e = engine(&p);
            let deal = initial(&e, "Ac Ad", "4c 4d", "2h 7s 9d");
            let ante = place(&e, json!({"bet": "ante", "stake_minor": 12300}));
            assert!(e.decision_required(&ante));
            let call = e.decide(&ante, &deal, Decision::Call).unwrap().unwrap();
            assert_eq!(
                call,
                Placement {
                    bet_type: "call".into(),
                    stake_minor: 24600,
                    placed_by: PlacedBy::Decision
                }
            );
            assert_eq!(e.decide(&ante, &deal, Decision::Fold).unwrap(), None);
            let both = [ante.clone(), vec![call]].concat();
            assert_eq!(
                e.decide(&both, &deal, Decision::Call).unwrap_err().code,
                code::ALREADY_CALLED
            );
        }
    }

    #[test]
    fn timeout_folds() {
        for p in [evolution(), synot()] {
            let e = engine(&p);
            assert_eq!(e.automatic_decision(), Decision::Fold);
            assert_eq!(e.decision_ms(), Some(20_000));
            let (pl, dl, bd) = ("Ac Ad", "2c 3d", "Ah As 9d Jc Kh");
            let deal = initial(&e, pl, dl, bd);
            let ante = place(&e, json!({"bet": "ante", "stake_minor": 10000}));
            let auto = e.decide(&ante, &deal, e.automatic_decision()).unwrap();
            assert_eq!(auto, None);
            // Four aces on the flop lose the Ante all the same ("bez ohledu na pokerovou
            // kombinaci").
            let s = e
                .settle(&ante, &deal)
                .expect("a folded hand settles on the flop");
            assert_eq!(s.result, MainResult::Folded);
            assert_eq!(paid(&s, "ante"), o("lose", 0, 0));
            assert_eq!(s.payouts.len(), 1);
        }
    }

    // ----- qualification and the main game -----

    #[test]
    fn dealer_without_a_pair_of_fours_does_not_qualify_and_call_is_returned() {
        for p in [evolution(), synot()] {
            let e = engine(&p);
            // The dealer's pair of threes beats the player's ace high, but does not qualify:
            // the Ante is paid by the table all the same.
            let s = settle_called(&e, "Ac Qd", "3c 3d", "2h 7s 9d Jc Kh");
            assert_eq!(s.result, MainResult::DealerNotQualified);
            assert_eq!(s.dealer_qualifies, Some(false));
            assert!(s.dealer_hand > s.player_hand);
            let ante_row = if p.plan.id.as_str() == "synot-casino-holdem" {
                "straight_or_lower"
            } else {
                "pair_or_less"
            };
            assert_eq!(paid(&s, "ante"), o(ante_row, 100, 100));
            assert_eq!(paid(&s, "call"), o("dealer_not_qualified", 0, 200));
            assert_eq!(s.total_minor(), 400 * KC);
        }
    }

    #[test]
    fn dealer_with_a_pair_of_fours_qualifies_and_beats_ace_high() {
        let p = evolution();
        let e = engine(&p);
        let s = settle_called(&e, "Ac Qd", "4c 4d", "2h 7s 9d Jc Kh");
        assert_eq!(s.dealer_qualifies, Some(true));
        assert_eq!(s.result, MainResult::DealerWins);
        assert_eq!(paid(&s, "ante"), o("lose", 0, 0));
        assert_eq!(paid(&s, "call"), o("lose", 0, 0));
        assert_eq!(s.total_minor(), 0);
    }

    #[test]
    fn dealer_two_pair_of_threes_and_twos_qualifies_as_better_than_a_pair() {
        let p = evolution();
        let e = engine(&p);
        let s = settle_called(&e, "Ac Ad", "3c 2d", "3h 2s 9d Jc Kh");
        assert_eq!(s.dealer_qualifies, Some(true));
        assert_eq!(s.result, MainResult::DealerWins);
    }

    #[test]
    fn player_beating_a_qualified_dealer_wins_the_ante_by_the_table_and_the_call_1_to_1() {
        let p = evolution();
        let e = engine(&p);
        let s = settle_called(&e, "Ac Ad", "4c 4d", "2h 7s 9d Jc Kh");
        assert_eq!(s.result, MainResult::PlayerWins);
        assert_eq!(paid(&s, "ante"), o("pair_or_less", 100, 100));
        assert_eq!(paid(&s, "call"), o("win", 200, 200));
        // A flush beats the dealer's qualifying pair and pays 2:1 on the Ante.
        let s = settle_called(&e, "Ah 9h", "4c 4d", "2h 5h Jh Kc 4s");
        assert_eq!(s.result, MainResult::PlayerWins);
        assert_eq!(paid(&s, "ante"), o("flush", 200, 100));
        assert_eq!(paid(&s, "call"), o("win", 200, 200));
    }

    #[test]
    fn ties_with_equal_kickers_push_both_bets() {
        let p = evolution();
        let e = engine(&p);
        // Both play K K A Q J: the 2 and the 3 in hand do not play.
        let s = settle_called(&e, "Ac 2d", "As 3c", "Kh Kd Qs Jc 9h");
        assert_eq!(s.result, MainResult::Tie);
        assert_eq!(paid(&s, "ante"), o("push", 0, 100));
        assert_eq!(paid(&s, "call"), o("push", 0, 200));
        // The board plays for both: a straight on the board ties.
        let s = settle_called(&e, "2c 3d", "2s 3c", "9h Td Js Qc Kh");
        assert_eq!(s.result, MainResult::Tie);
    }

    #[test]
    fn a_kicker_decides_between_equal_pairs() {
        let p = evolution();
        let e = engine(&p);
        let s = settle_called(&e, "Ac 5d", "Qc 6h", "Kh Kd 9s 8c 2h");
        assert_eq!(s.result, MainResult::PlayerWins);
        let s = settle_called(&e, "Qc 6h", "Ac 5d", "Kh Kd 9s 8c 2h");
        assert_eq!(s.result, MainResult::DealerWins);
        // The fifth card: K K 9 8 7 against K K 9 8 6.
        let s = settle_called(&e, "7c 2d", "6c 3h", "Kh Kd 9s 8c 4h");
        assert_eq!(s.result, MainResult::PlayerWins);
    }

    /// The Ante table, row by row: (player, dealer, board, Evolution row, SYNOT row, ratio,
    /// dealer qualifies). Each hand is chosen so the dealer does not qualify where it can.
    const ANTE_ROWS: &[(&str, &str, &str, &str, &str, i64, bool)] = &[
        (
            "Ah Kh",
            "3s 4c",
            "Qh Jh Th 2c 7d",
            "royal_flush",
            "royal_flush",
            100,
            false,
        ),
        (
            "9h 8h",
            "Ac Jd",
            "7h 6h 5h Kc 2d",
            "straight_flush",
            "straight_flush",
            20,
            false,
        ),
        (
            "2c 2d",
            "Ac 4d",
            "2h 2s 7c 9d Kh",
            "four_of_a_kind",
            "four_of_a_kind",
            10,
            false,
        ),
        (
            "9c 9d",
            "Ac 3d",
            "9h 9s 2c 5d Kh",
            "four_of_a_kind",
            "four_of_a_kind",
            10,
            true,
        ),
        (
            "Kc Kd",
            "Ac 5d",
            "Kh 3s 3c 8d 9h",
            "full_house",
            "full_house",
            3,
            false,
        ),
        (
            "Ah 9h",
            "Qc 3d",
            "2h 5h Jh Kc 7d",
            "flush",
            "flush",
            2,
            false,
        ),
        (
            "9c Td",
            "5c 6d",
            "Jh Qs Kd 2c 4h",
            "straight",
            "straight_or_lower",
            1,
            false,
        ),
        (
            "7c 7d",
            "Ac 3d",
            "7h Ks 2d 9c Jh",
            "three_of_a_kind",
            "straight_or_lower",
            1,
            false,
        ),
        (
            "Jc 9d",
            "Ac 3d",
            "Jh 9s 2d 5c Kh",
            "two_pair",
            "straight_or_lower",
            1,
            false,
        ),
        (
            "Ac Ad",
            "3c 4d",
            "2h 7s 9d Jc Kh",
            "pair_or_less",
            "straight_or_lower",
            1,
            false,
        ),
        (
            "Ac Qd",
            "3c 4d",
            "2h 7s 9d Jc Kh",
            "pair_or_less",
            "straight_or_lower",
            1,
            false,
        ),
    ];

    #[test]
    fn each_ante_paytable_row_pays_its_ratio() {
        for (p, synot_plan) in [(evolution(), false), (synot(), true)] {
            let e = engine(&p);
            for &(pl, dl, bd, evo_row, syn_row, ratio, qualifies) in ANTE_ROWS {
                let s = settle_called(&e, pl, dl, bd);
                let row = if synot_plan { syn_row } else { evo_row };
                assert_eq!(s.dealer_qualifies, Some(qualifies), "{pl} {dl} {bd}");
                assert_eq!(paid(&s, "ante"), o(row, 100 * ratio, 100), "{pl} {bd}");
                let call = if qualifies {
                    o("win", 200, 200)
                } else {
                    o("dealer_not_qualified", 0, 200)
                };
                assert_eq!(paid(&s, "call"), call, "{pl} {bd}");
            }
        }
    }

    // ----- side bets -----

    #[test]
    fn bonus_is_paid_even_when_the_player_folds() {
        let p = evolution();
        let e = engine(&p);
        let deal = initial(&e, "Ac Ad", "Kc Kd", "2h 7s 9d");
        let mut ps = place(&e, json!({"bet": "ante", "stake_minor": 10000}));
        ps.extend(place(&e, json!({"bet": "bonus", "stake_minor": 5000})));
        assert_eq!(e.decide(&ps, &deal, Decision::Fold).unwrap(), None);
        let s = e.settle(&ps, &deal).unwrap();
        assert_eq!(s.result, MainResult::Folded);
        assert_eq!(paid(&s, "ante"), o("lose", 0, 0));
        assert_eq!(paid(&s, "bonus"), o("pair_of_aces", 350, 50));
    }

    #[test]
    fn bonus_is_paid_even_when_the_dealer_wins() {
        let p = evolution();
        let e = engine(&p);
        let (pl, dl, bd) = ("Ac Ad", "Kc Kd", "2h 7s Kh Jc 9h");
        let deal = initial(&e, pl, dl, bd);
        let mut ps = called(&e, 100, &deal);
        ps.extend(place(&e, json!({"bet": "bonus", "stake_minor": 10000})));
        let s = e.settle(&ps, &full(&e, pl, dl, bd)).unwrap();
        assert_eq!(s.result, MainResult::DealerWins);
        assert_eq!(paid(&s, "bonus"), o("pair_of_aces", 700, 100));
    }

    #[test]
    fn bonus_needs_a_pair_of_aces_or_better_in_the_first_five_cards() {
        let p = evolution();
        let e = engine(&p);
        let bonus = |player: &str, board: &str| {
            let deal = initial(&e, player, "Kc 4d", board);
            let mut ps = place(&e, json!({"bet": "ante", "stake_minor": 10000}));
            ps.extend(place(&e, json!({"bet": "bonus", "stake_minor": 10000})));
            let s = e.settle(&ps, &deal).unwrap();
            paid(&s, "bonus")
        };
        assert_eq!(bonus("Qc Qd", "2h 7s 9d"), o("lose", 0, 0));
        assert_eq!(bonus("Ac 7d", "2h 7s 9d"), o("lose", 0, 0));
        assert_eq!(bonus("3c 2d", "2h 3s 9d"), o("two_pair", 700, 100));
        assert_eq!(bonus("9c 9d", "2h 9s 9h"), o("four_of_a_kind", 4000, 100));
        assert_eq!(bonus("Ah Kh", "Qh Jh Th"), o("royal_flush", 10000, 100));
        assert_eq!(bonus("9h 8h", "7h 6h 5h"), o("straight_flush", 5000, 100));
        assert_eq!(bonus("Ah 2h", "7h 9h Jh"), o("flush", 2000, 100));
        assert_eq!(bonus("Ah 2c", "3h 4s 5d"), o("straight", 700, 100));
    }

    #[test]
    fn bonus_looks_at_the_flop_not_the_whole_board() {
        let p = evolution();
        let e = engine(&p);
        let (pl, dl, bd) = ("Ac Kd", "3c 4d", "2h 7s 9d Ah As");
        let deal = initial(&e, pl, dl, bd);
        let mut ps = called(&e, 100, &deal);
        ps.extend(place(&e, json!({"bet": "bonus", "stake_minor": 10000})));
        let s = e.settle(&ps, &full(&e, pl, dl, bd)).unwrap();
        assert_eq!(s.player_hand.unwrap().class(), HandClass::ThreeOfAKind);
        assert_eq!(s.flop_hand.class(), HandClass::HighCard);
        assert_eq!(paid(&s, "bonus"), o("lose", 0, 0));
    }

    #[test]
    fn aa_is_lost_when_the_player_folds() {
        let p = synot();
        let e = engine(&p);
        let deal = initial(&e, "Ac Ad", "Kc Kd", "Ah 7s 9d");
        let mut ps = place(&e, json!({"bet": "ante", "stake_minor": 10000}));
        ps.extend(place(&e, json!({"bet": "aa", "stake_minor": 10000})));
        let s = e.settle(&ps, &deal).unwrap();
        assert_eq!(s.flop_hand.class(), HandClass::ThreeOfAKind);
        assert_eq!(paid(&s, "aa"), o("lose", 0, 0));
    }

    #[test]
    fn aa_pays_when_the_player_calls_whatever_the_main_game() {
        let p = synot();
        let e = engine(&p);
        let aa = |player: &str, dealer: &str, board: &str| {
            let deal = initial(&e, player, dealer, board);
            let mut ps = called(&e, 100, &deal);
            ps.extend(place(&e, json!({"bet": "aa", "stake_minor": 10000})));
            let s = e.settle(&ps, &full(&e, player, dealer, board)).unwrap();
            (s.result, paid(&s, "aa"))
        };
        // "AA nebo vyšší" from a pair of aces up to a straight pays 7:1; the dealer's kings
        // full win the main game.
        assert_eq!(
            aa("Ac Ad", "Kc Kd", "2h 7s Kh 2c 9h"),
            (
                MainResult::DealerWins,
                o("pair_of_aces_to_straight", 700, 100)
            )
        );
        assert_eq!(
            aa("Ac 2d", "Kc Kd", "3h 4s 5d Jc Jh"),
            (
                MainResult::PlayerWins,
                o("pair_of_aces_to_straight", 700, 100)
            )
        );
        assert_eq!(
            aa("Ah 2h", "Kc Kd", "7h 9h Jh 3c 4d").1,
            o("flush", 2000, 100)
        );
        assert_eq!(aa("Kh Ks", "2c 3d", "7h 9c Jh 3c 4d").1, o("lose", 0, 0));
    }

    /// Casino Razz on the player's two cards and the flop, with the player folding (the
    /// plan's `on_fold = "still_settled"`).
    fn razz(player: &str, flop: &str) -> (String, i64, i64) {
        let p = synot();
        let e = engine(&p);
        let deal = initial(&e, player, "Kc Kd", flop);
        let mut ps = place(&e, json!({"bet": "ante", "stake_minor": 10000}));
        ps.extend(place(
            &e,
            json!({"bet": "casino_razz", "stake_minor": 10000}),
        ));
        let s = e.settle(&ps, &deal).unwrap();
        assert!(s.razz_hand.is_some());
        paid(&s, "casino_razz")
    }

    #[test]
    fn razz_with_a_queen_loses() {
        assert_eq!(razz("Qh 2c", "3d 4s Ac"), o("lose", 0, 0));
    }

    #[test]
    fn razz_with_a_king_loses() {
        assert_eq!(razz("Kh 2c", "3d 4s Ac"), o("lose", 0, 0));
    }

    #[test]
    fn razz_with_a_pair_loses() {
        assert_eq!(razz("Ah 2c", "3d 2s Ac"), o("lose", 0, 0));
        assert_eq!(razz("2h 2c", "3d 4s 5c"), o("lose", 0, 0));
    }

    #[test]
    fn razz_pays_the_suited_wheel_200_to_1_and_the_mixed_wheel_50_to_1() {
        assert_eq!(razz("Ah 2h", "3h 4h 5h"), o("wheel_suited", 20000, 100));
        assert_eq!(razz("Ah 2c", "3h 4h 5h"), o("wheel_mixed_suits", 5000, 100));
    }

    #[test]
    fn razz_pays_by_the_highest_card_with_the_ace_low() {
        assert_eq!(razz("6c Ad", "2h 3s 4d"), o("six_high", 2500, 100));
        // A straight and a flush play no part: 6-5-4-3-2 in hearts is six high.
        assert_eq!(razz("6h 5h", "4h 3h 2h"), o("six_high", 2500, 100));
        assert_eq!(razz("7c Ad", "2h 3s 4d"), o("seven_high", 1000, 100));
        assert_eq!(razz("8c Ad", "2h 3s 6d"), o("eight_high", 800, 100));
        assert_eq!(razz("9c 8d", "7h 6s 5d"), o("nine_high", 600, 100));
    }

    #[test]
    fn razz_ten_or_jack_high_has_no_row_and_loses() {
        assert_eq!(razz("Tc Ad", "2h 3s 4d"), o("lose", 0, 0));
        assert_eq!(razz("Jc Ad", "2h 3s 4d"), o("lose", 0, 0));
    }

    #[test]
    fn razz_looks_at_the_first_five_cards_only() {
        let p = synot();
        let e = engine(&p);
        let (pl, dl, bd) = ("Ac 2d", "Kc Kd", "3h 4s 5d Qc Qh");
        let deal = initial(&e, pl, dl, bd);
        let mut ps = called(&e, 100, &deal);
        ps.extend(place(
            &e,
            json!({"bet": "casino_razz", "stake_minor": 10000}),
        ));
        let s = e.settle(&ps, &full(&e, pl, dl, bd)).unwrap();
        assert_eq!(paid(&s, "casino_razz"), o("wheel_mixed_suits", 5000, 100));
    }

    // ----- settlement guarantees -----

    #[test]
    fn a_called_hand_is_settled_only_on_the_whole_board() {
        let p = evolution();
        let e = engine(&p);
        let deal = initial(&e, "Ac Ad", "4c 4d", "2h 7s 9d");
        let ps = called(&e, 100, &deal);
        assert_eq!(
            e.settle(&ps, &deal).unwrap_err().code,
            code::DEAL_INCOMPLETE
        );
        let ante = place(&e, json!({"bet": "ante", "stake_minor": 10000}));
        assert_eq!(
            e.settle(&ante, &Deal::default()).unwrap_err().code,
            code::DEAL_INCOMPLETE
        );
    }

    #[test]
    fn settlement_refuses_placements_the_engine_would_not_make() {
        let p = evolution();
        let e = engine(&p);
        let deal = full(&e, "Ac Ad", "4c 4d", "2h 7s 9d Jc Kh");
        let mut ps = place(&e, json!({"bet": "ante", "stake_minor": 10000}));
        ps.push(Placement {
            bet_type: "call".into(),
            stake_minor: 10000,
            placed_by: PlacedBy::Decision,
        });
        assert_eq!(
            e.settle(&ps, &deal).unwrap_err().code,
            code::INCONSISTENT_PLACEMENT
        );
        let aa = vec![Placement {
            bet_type: "aa".into(),
            stake_minor: 100,
            placed_by: PlacedBy::Bet,
        }];
        assert_eq!(
            e.settle(&aa, &deal).unwrap_err().code,
            code::INCONSISTENT_PLACEMENT
        );
        // A deal read back out of order is refused too.
        let mut bad = deal.clone();
        bad.cards.swap(0, 1);
        let ante = place(&e, json!({"bet": "ante", "stake_minor": 10000}));
        assert_eq!(
            e.settle(&ante, &bad).unwrap_err().code,
            code::WRONG_POSITION
        );
    }

    #[test]
    fn a_win_above_the_plans_max_win_is_an_error_not_capped() {
        let mut p = evolution();
        p.bets.iter_mut().find(|b| b.id == ANTE).unwrap().max_win = 99_999_999;
        let e = engine(&p);
        let (pl, dl, bd) = ("Ah Kh", "3s 4c", "Qh Jh Th 2c 7d");
        let deal = initial(&e, pl, dl, bd);
        let ps = called(&e, 10_000, &deal);
        let r = e.settle(&ps, &full(&e, pl, dl, bd)).unwrap_err();
        assert_eq!(r.code, code::MAX_WIN_EXCEEDED);
        assert!(r.message.contains("1 000 000,00 CZK"), "{}", r.message);
    }

    #[test]
    fn every_plans_max_bet_on_its_best_row_wins_exactly_its_max_win() {
        // Royal flush on the flop for the Ante and the Bonus/AA, a suited wheel for Razz.
        for p in [evolution(), synot()] {
            let e = engine(&p);
            let max = |id: &str| p.bet(id).unwrap().max_bet;
            let (pl, dl, bd) = ("Ah Kh", "3s 4c", "Qh Jh Th 2c 7d");
            let deal = initial(&e, pl, dl, bd);
            let mut ps = place(&e, json!({"bet": "ante", "stake_minor": max(ANTE)}));
            ps.push(e.decide(&ps, &deal, Decision::Call).unwrap().unwrap());
            let side = e.rules().flop_bonus.as_ref().unwrap().bet.id();
            ps.extend(place(&e, json!({"bet": side, "stake_minor": max(side)})));
            let s = e.settle(&ps, &full(&e, pl, dl, bd)).unwrap();
            for bet in [ANTE, side] {
                assert_eq!(payout(&s, bet).win_minor, p.bet(bet).unwrap().max_win);
            }
            if p.bet(CASINO_RAZZ).is_some() {
                let (pl, bd) = ("Ah 2h", "3h 4h 5h 9c 9d");
                let deal = initial(&e, pl, dl, bd);
                let mut ps = place(&e, json!({"bet": "ante", "stake_minor": 100}));
                ps.extend(place(
                    &e,
                    json!({"bet": CASINO_RAZZ, "stake_minor": max(CASINO_RAZZ)}),
                ));
                let s = e.settle(&ps, &deal).unwrap();
                let razz = payout(&s, CASINO_RAZZ);
                assert_eq!(razz.win_minor, p.bet(CASINO_RAZZ).unwrap().max_win);
            }
        }
    }

    #[test]
    fn placements_deal_and_settlement_read_back_from_json_settle_the_same() {
        let p = synot();
        let e = engine(&p);
        let (pl, dl, bd) = ("Ah 2h", "4c 4d", "3h 4h 5h 9c 9d");
        let mut ps = place(&e, json!({"bet": "call_blind", "stake_minor": 20000}));
        ps.extend(place(&e, json!({"bet": "aa", "stake_minor": 1000})));
        ps.extend(place(
            &e,
            json!({"bet": "casino_razz", "stake_minor": 1000}),
        ));
        let deal = full(&e, pl, dl, bd);
        let s = e.settle(&ps, &deal).unwrap();
        let ps2: Vec<Placement> =
            serde_json::from_str(&serde_json::to_string(&ps).unwrap()).unwrap();
        let deal2: Deal = serde_json::from_str(&serde_json::to_string(&deal).unwrap()).unwrap();
        let s_json = serde_json::to_string(&s).unwrap();
        assert_eq!(e.settle(&ps2, &deal2).unwrap(), s);
        assert_eq!(serde_json::from_str::<Settlement>(&s_json).unwrap(), s);
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(v["result"], "player_wins");
        assert_eq!(v["player_hand"]["class"], "straight_flush");
        assert_eq!(v["payouts"][3]["outcome"], "wheel_suited");
    }

    // ----- RNG -----

    #[test]
    fn rng_shuffle_is_fisher_yates_over_one_deck_with_draw_pockets_sampling() {
        let seed = [42u8; 32];
        let shoe = Shoe::new(DeckKind::Standard52, 1);
        let a = shuffle(seed, shoe);
        assert_eq!(a, shuffle(seed, shoe), "the same seed deals the same cards");
        assert_ne!(a, shuffle([43u8; 32], shoe));
        let mut sorted = a.clone();
        sorted.sort_by_key(|c| c.index());
        assert_eq!(sorted, DeckKind::Standard52.cards());
        // The first step of the forward shuffle puts in front the card draw_pocket(seed, 52) picks.
        let j = crate::round::draw_pocket(seed, 52) as usize;
        assert_eq!(a[0], DeckKind::Standard52.cards()[j]);
    }

    #[test]
    fn rng_deal_is_accepted_in_the_plans_order() {
        for p in [evolution(), synot()] {
            let e = engine(&p);
            let dealt = e.rng_deal([9u8; 32]);
            assert_eq!(dealt.len(), 9);
            assert_eq!(
                dealt.iter().map(|d| d.card).collect::<Vec<_>>(),
                shuffle([9u8; 32], e.rules().shoe)[..9].to_vec()
            );
            let mut deal = Deal::default();
            for d in dealt {
                if e.next(&deal) == Next::Decisions {
                    e.close_decisions(&mut deal).unwrap();
                }
                e.deal_card(&mut deal, d.position, d.card)
                    .expect("in order");
            }
            assert_eq!(e.next(&deal), Next::Complete);
        }
    }

    #[test]
    fn rng_rounds_on_2000_seeds_all_settle_within_the_plans_limits() {
        // A smoke check of the whole path on many seeds: every round settles, and no payout
        // breaks the plan's limits.
        let p = synot();
        let e = engine(&p);
        for i in 0..2_000u32 {
            let mut seed = [0u8; 32];
            seed[..4].copy_from_slice(&i.to_le_bytes());
            let dealt = e.rng_deal(seed);
            let mut deal = Deal::default();
            let mut ps = place(&e, json!({"bet": "ante", "stake_minor": 10000}));
            ps.extend(place(&e, json!({"bet": "aa", "stake_minor": 1000})));
            ps.extend(place(
                &e,
                json!({"bet": "casino_razz", "stake_minor": 1000}),
            ));
            for d in dealt {
                if e.next(&deal) == Next::Decisions {
                    if i % 2 == 0 {
                        ps.extend(e.decide(&ps, &deal, Decision::Call).unwrap());
                    }
                    e.close_decisions(&mut deal).unwrap();
                }
                e.deal_card(&mut deal, d.position, d.card).unwrap();
            }
            let s = e.settle(&ps, &deal).expect("every round settles");
            assert_eq!(s.payouts.len(), if i % 2 == 0 { 4 } else { 3 });
        }
    }
}
