//! "Cíl hry a výplaty výher": each hand against the dealer's, then every stake of it (the main
//! bet, split stakes, doubles, insurance, a surrender's refund, a Bet Behind following the box)
//! paid by the plan's rows, rounded by the plan's rule and held to the plan's maximum win.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::hand::HandValue;
use super::play::{Hand, HandStatus};
use super::{code, BlackjackEngine};
use crate::cards::{Card, Rank};
use crate::games::{Payout, Refusal};
use crate::plan::model::Payout as PayoutRow;
use crate::plan::rules::blackjack::{DealerBlackjackTakes, UnfundedDouble, UnfundedSplit};

/// One player's play on one box (or his own view of a common hand), finished.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BoxPlay {
    /// The main bet. Every split stake and every double equals it.
    pub main_stake_minor: i64,
    /// The hands as played, in the order of [`super`]'s module documentation.
    pub hands: Vec<Hand>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insurance_stake_minor: Option<i64>,
}

/// A Bet Behind on a box: its own stake, following the box owner's decisions ("rozhodnutí
/// pouze následuje/kopíruje"), and which of the owner's added stakes its player matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BetBehind {
    pub stake_minor: i64,
    /// The Bet Behind player matched the owner's split. If not, by `unfunded_split` it plays
    /// the right-hand hand only (hand 0).
    #[serde(default)]
    pub split_funded: bool,
    /// The box hands whose double the Bet Behind player matched. An unmatched double plays
    /// the undoubled stake on the doubled hand: one card, then stand (`unfunded_double`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub doubles_funded: Vec<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insurance_stake_minor: Option<i64>,
}

/// A hand against the dealer's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HandResult {
    /// The player's blackjack against no dealer blackjack.
    Blackjack,
    Win,
    /// "Kdykoli má sázející stejný hand jako krupiér, jedná se o remízu."
    Push,
    Lose,
    /// Lost to the dealer's blackjack: which stakes go is `blackjack.dealer_blackjack_takes`.
    LoseToDealerBlackjack,
    /// Given up; the `surrender` refund row applies.
    Surrendered,
}

/// What one stake pays.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StakeSettlement {
    /// The bet type of the stake (`main`, `bet_behind`, `split`, `double`, `insurance` or a
    /// side bet), whose payout rows and maximum win apply. A name of the family's vocabulary
    /// ([`crate::plan::rules::blackjack::BETS`]), so settling copies no string for it.
    #[schemars(with = "String")]
    pub bet: Cow<'static, str>,
    /// The hand the stake rides on; absent for insurance and side bets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hand: Option<usize>,
    pub payout: Payout,
}

/// A settled box (or Bet Behind): each hand's result and each stake's payout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Settlement {
    /// One per hand played (for a Bet Behind: per hand it follows).
    pub results: Vec<HandResult>,
    pub stakes: Vec<StakeSettlement>,
}

impl Settlement {
    /// What the wallet is credited: stakes returned plus winnings.
    pub fn total_minor(&self) -> i64 {
        self.stakes.iter().map(|s| s.payout.total_minor()).sum()
    }

    /// The stakes at risk.
    pub fn staked_minor(&self) -> i64 {
        self.stakes.iter().map(|s| s.payout.stake_minor).sum()
    }
}

impl<'p> BlackjackEngine<'p> {
    /// A finished hand against the dealer's finished hand `dealer`.
    ///
    /// A bust hand loses, even if the dealer busts too, where the plan says so
    /// (`player_bust_loses_even_if_dealer_busts`; every plan does: "Hráč, který je „trop“,
    /// vždy prohrává"). A blackjack beats everything but a dealer blackjack, which it pushes. A
    /// dealer blackjack beats every other hand, a 21 of three cards included where
    /// `dealer_blackjack_beats_player_21`. Otherwise the higher total wins, equal totals push.
    pub fn hand_result(&self, hand: &Hand, dealer: &[Card]) -> HandResult {
        self.result_against(hand, &DealerHand::of(self, dealer))
    }

    /// [`BlackjackEngine::hand_result`] against the dealer's hand read once.
    fn result_against(&self, hand: &Hand, dealer: &DealerHand) -> HandResult {
        let r = self.rules;
        let DealerHand {
            blackjack: dealer_bj,
            value: dealer_v,
        } = *dealer;
        if hand.surrendered {
            return if dealer_bj && r.surrender.refund_kept_if_dealer_blackjack == Some(false) {
                HandResult::LoseToDealerBlackjack
            } else {
                HandResult::Surrendered
            };
        }
        let player = self.value(&hand.cards);
        if player.is_bust() {
            return if dealer_v.is_bust() && !r.player_bust_loses_even_if_dealer_busts {
                HandResult::Push
            } else {
                HandResult::Lose
            };
        }
        if self.is_blackjack(hand) {
            return if dealer_bj {
                HandResult::Push
            } else {
                HandResult::Blackjack
            };
        }
        if dealer_bj {
            return if player.total == dealer_v.total
                && !r.blackjack.dealer_blackjack_beats_player_21
            {
                HandResult::Push
            } else {
                HandResult::LoseToDealerBlackjack
            };
        }
        if dealer_v.is_bust() || player.total > dealer_v.total {
            HandResult::Win
        } else if player.total == dealer_v.total {
            HandResult::Push
        } else {
            HandResult::Lose
        }
    }

    /// Settles a box's main play against the dealer's finished hand: the main bet on hand 0,
    /// a split stake on each further hand, a double on each doubled hand, the insurance, and a
    /// surrender's refund. Refuses hands that are not finished (unless the round ended at the
    /// dealer's peek) and a dealer hand that broke the drawing rules or is not finished: the
    /// dealer always completes his hand ("Jakmile skončí s taháním karet všichni sázející,
    /// krupiér dokončí svůj hand"; Bust It and Buster are decided on it), even when every
    /// player's hand is bust. The insurance stake is taken as accepted by
    /// [`BlackjackEngine::check_insurance`].
    pub fn settle_box(&self, play: &BoxPlay, dealer: &[Card]) -> Result<Settlement, Refusal> {
        let mut out = ByName {
            engine: self,
            out: Settlement {
                results: Vec::new(),
                stakes: Vec::new(),
            },
        };
        self.settle_box_into(play, dealer, false, &mut out)?;
        Ok(out.out)
    }

    /// [`BlackjackEngine::settle_box`] into `out`: the one settlement of a box's main play,
    /// whatever turns a payout row into money ([`StakeSink`]).
    /// `dealer_checked`: the caller has checked the dealer's hand
    /// ([`BlackjackEngine::check_dealer_hand`], the first check here) for this settlement.
    pub(super) fn settle_box_into<S: StakeSink>(
        &self,
        play: &BoxPlay,
        dealer: &[Card],
        dealer_checked: bool,
        out: &mut S,
    ) -> Result<(), Refusal> {
        self.check_round(play, dealer, dealer_checked)?;
        let dealer_hand = DealerHand::of(self, dealer);
        for (i, hand) in play.hands.iter().enumerate() {
            let result = self.result_against(hand, &dealer_hand);
            out.result(result);
            let base = if i == 0 {
                PlayBet::Main
            } else {
                PlayBet::Split
            };
            self.settle_hand(out, i, result, base, play.main_stake_minor, hand.doubled)?;
        }
        if let Some(s) = play.insurance_stake_minor {
            self.settle_insurance(out, s, dealer)?;
        }
        Ok(())
    }

    /// Settles a Bet Behind on a box: it follows the owner's hands with its own stake (rows
    /// `bet_behind/*`); a split it matched adds its `split` stake on the other hand, one it did
    /// not leaves it on the right-hand hand only (`unfunded_split = "right_hand_only"`); a
    /// double it matched adds its `double` stake, one it did not leaves its single stake on the
    /// doubled hand, which took one card and stood (`unfunded_double = "one_card_then_stand"`).
    pub fn settle_bet_behind(
        &self,
        owner: &BoxPlay,
        bet_behind: &BetBehind,
        dealer: &[Card],
    ) -> Result<Settlement, Refusal> {
        let mut out = ByName {
            engine: self,
            out: Settlement {
                results: Vec::new(),
                stakes: Vec::new(),
            },
        };
        self.settle_bet_behind_into(owner, bet_behind, dealer, false, &mut out)?;
        Ok(out.out)
    }

    /// [`BlackjackEngine::settle_bet_behind`] into `out` (see
    /// [`BlackjackEngine::settle_box_into`]).
    pub(super) fn settle_bet_behind_into<S: StakeSink>(
        &self,
        owner: &BoxPlay,
        bet_behind: &BetBehind,
        dealer: &[Card],
        dealer_checked: bool,
        out: &mut S,
    ) -> Result<(), Refusal> {
        let bb = &self.rules.bet_behind;
        if !bb.allowed {
            return Err(self.refuse(
                code::NOT_OFFERED,
                format!("{} offers no Bet Behind", self.plan.key()),
                &bb.clause,
            ));
        }
        self.check_round(owner, dealer, dealer_checked)?;
        let invalid = |m: String| Err(self.refuse(code::PLAY_INVALID, m, &bb.clause));
        if bet_behind.stake_minor <= 0 {
            return invalid(format!(
                "a Bet Behind stake of {} minor units",
                bet_behind.stake_minor
            ));
        }
        let followed = if owner.hands.len() > 1 && !bet_behind.split_funded {
            match bb.unfunded_split {
                Some(UnfundedSplit::RightHandOnly) => 1,
                None => return invalid("the plan states no rule for an unmatched split".into()),
            }
        } else {
            owner.hands.len()
        };
        if bet_behind.split_funded && owner.hands.len() < 2 {
            return invalid("a matched split on a box that did not split".into());
        }
        for &i in &bet_behind.doubles_funded {
            if i >= followed || !owner.hands[i].doubled {
                return invalid(format!(
                    "a matched double on hand {i}, which it does not follow doubled"
                ));
            }
        }
        let unmatched_double = owner.hands[..followed]
            .iter()
            .enumerate()
            .any(|(i, h)| h.doubled && !bet_behind.doubles_funded.contains(&i));
        if unmatched_double && bb.unfunded_double != Some(UnfundedDouble::OneCardThenStand) {
            return invalid("the plan states no rule for an unmatched double".into());
        }
        let dealer_hand = DealerHand::of(self, dealer);
        for (i, hand) in owner.hands[..followed].iter().enumerate() {
            let result = self.result_against(hand, &dealer_hand);
            out.result(result);
            let base = if i == 0 {
                PlayBet::BetBehind
            } else {
                PlayBet::Split
            };
            let doubled = hand.doubled && bet_behind.doubles_funded.contains(&i);
            self.settle_hand(out, i, result, base, bet_behind.stake_minor, doubled)?;
        }
        if let Some(s) = bet_behind.insurance_stake_minor {
            if self.rules.insurance.for_bet_behind != Some(true) {
                return Err(self.refuse(
                    code::INSURANCE_NOT_FOR_BET_BEHIND,
                    "insurance is not offered to a Bet Behind",
                    &self.rules.insurance.clause,
                ));
            }
            self.settle_insurance(out, s, dealer)?;
        }
        Ok(())
    }

    /// The stakes of one hand by its result: `base` (main, bet_behind or split) of `stake`,
    /// and a double of the same stake when `doubled`.
    fn settle_hand<S: StakeSink>(
        &self,
        out: &mut S,
        i: usize,
        result: HandResult,
        base: PlayBet,
        stake: i64,
        doubled: bool,
    ) -> Result<(), Refusal> {
        let hand = Some(i);
        let takes_all = self.rules.blackjack.dealer_blackjack_takes
            != Some(DealerBlackjackTakes::OriginalStakeOnly);
        match result {
            HandResult::Blackjack => out.pay(base, PlayRow::Blackjack, stake, hand)?,
            HandResult::Win => out.pay(base, PlayRow::Win, stake, hand)?,
            HandResult::Push => out.pay(base, PlayRow::Push, stake, hand)?,
            HandResult::Surrendered => out.pay(base, PlayRow::Surrender, stake, hand)?,
            HandResult::Lose => out.lose(base, stake, hand),
            HandResult::LoseToDealerBlackjack if takes_all || base != PlayBet::Split => {
                out.lose(base, stake, hand)
            }
            // "original_stake_only": the original stake goes; what a split added comes back.
            HandResult::LoseToDealerBlackjack => out.returned(base, stake, hand),
        }
        if doubled {
            let double = PlayBet::Double;
            match result {
                HandResult::Win => out.pay(double, PlayRow::Win, stake, hand)?,
                HandResult::Push => out.pay(double, PlayRow::Push, stake, hand)?,
                HandResult::Lose => out.lose(double, stake, hand),
                HandResult::LoseToDealerBlackjack if takes_all => out.lose(double, stake, hand),
                HandResult::LoseToDealerBlackjack => out.returned(double, stake, hand),
                HandResult::Blackjack | HandResult::Surrendered => {
                    return Err(self.refuse(
                        code::PLAY_INVALID,
                        format!(
                            "hand {i} is doubled but ended {}",
                            crate::games::wire_name(&result)
                        ),
                        &self.rules.double.clause,
                    ))
                }
            }
        }
        Ok(())
    }

    fn settle_insurance<S: StakeSink>(
        &self,
        out: &mut S,
        stake: i64,
        dealer: &[Card],
    ) -> Result<(), Refusal> {
        let i = &self.rules.insurance;
        if !i.offered || dealer.first().is_none_or(|c| c.rank != Rank::Ace) {
            return Err(self.refuse(
                code::PLAY_INVALID,
                "insurance is taken only where offered, on a dealer ace",
                &i.clause,
            ));
        }
        if self.dealer_has_blackjack(dealer) {
            out.pay(PlayBet::Insurance, PlayRow::Win, stake, None)
        } else {
            out.lose(PlayBet::Insurance, stake, None);
            Ok(())
        }
    }

    /// The dealer's hand is finished by the rules, and the box's hands are a finished play (or
    /// an unplayed first two cards when the round ended at the peek).
    /// The dealer's hand is checked first, unless `dealer_checked` (the caller checked it).
    fn check_round(
        &self,
        play: &BoxPlay,
        dealer: &[Card],
        dealer_checked: bool,
    ) -> Result<(), Refusal> {
        if !dealer_checked {
            self.check_dealer_hand(dealer)?;
        }
        let invalid = |m: String| Err(self.refuse(code::PLAY_INVALID, m, &self.rules.clause));
        if play.main_stake_minor <= 0 {
            return invalid(format!(
                "a main stake of {} minor units",
                play.main_stake_minor
            ));
        }
        let max_hands = if self.rules.split.allowed {
            usize::from(self.rules.split.max_hands.unwrap_or(2))
        } else {
            1
        };
        if play.hands.is_empty() || play.hands.len() > max_hands {
            return invalid(format!(
                "{} hands on one box; the plan allows 1 to {max_hands}",
                play.hands.len()
            ));
        }
        let split = play.hands.len() > 1;
        if play.hands.iter().any(|h| h.from_split != split) {
            return invalid("hands marked as split do not match the number of hands".into());
        }
        if self.ended_at_peek(dealer) {
            let untouched = matches!(&play.hands[..], [h] if h.cards.len() == 2 && !h.doubled && !h.surrendered);
            if !untouched {
                return invalid(
                    "the dealer's blackjack ended the round at the peek: no hand was played".into(),
                );
            }
            return Ok(());
        }
        for (i, h) in play.hands.iter().enumerate() {
            if !matches!(self.status_of(&play.hands, h), HandStatus::Finished(_)) {
                return invalid(format!(
                    "hand {i} ({}) is not finished",
                    self.cards_label(&play.hands[i].cards)
                ));
            }
        }
        Ok(())
    }

    /// A stake settled by the plan's row (`bet`, `outcome`): a ratio pays the stake back with
    /// `stake × ratio`, a refund returns that share of the stake; both rounded by the plan's
    /// rule. Refuses (never caps) a win above the bet type's `max_win` or
    /// `max_win_plus_stake`.
    pub(super) fn pay(
        &self,
        bet: &str,
        outcome: &str,
        stake: i64,
        hand: Option<usize>,
    ) -> Result<StakeSettlement, Refusal> {
        let (outcome, returned_minor, win_minor) = self.pay_amounts(bet, outcome, stake)?;
        Ok(StakeSettlement {
            bet: bet_name(bet),
            hand,
            payout: Payout {
                stake_minor: stake,
                returned_minor,
                win_minor,
                outcome: outcome.to_string(),
            },
        })
    }

    /// [`BlackjackEngine::pay`]'s amounts: the plan's row name (the payout's `outcome`), the
    /// stake returned and the win, by [`crate::games::pay_row_amounts`] (what
    /// [`crate::games::pay_row`] pays), with the same refusals.
    pub(super) fn pay_amounts(
        &self,
        bet: &str,
        outcome: &str,
        stake: i64,
    ) -> Result<(&'p str, i64, i64), Refusal> {
        let limits = self.row(bet)?;
        let row = self.payout_row(bet, outcome).ok_or_else(|| {
            self.refuse(
                code::NO_PAYOUT_ROW,
                format!("{} has no payout row {bet}/{outcome}", self.plan.key()),
                &limits.clause,
            )
        })?;
        // `pay_row_amounts` names the outcome in its messages itself: the bet type is enough
        // here (and builds no string on the way to a payout).
        let (returned_minor, win_minor) =
            crate::games::pay_row_amounts(self.plan, limits, row, stake, bet)
                .map_err(|r| r.with_plan(&self.plan.key()))?;
        Ok((row.outcome.as_str(), returned_minor, win_minor))
    }

    /// The plan's payout row `bet`/`outcome`.
    pub(super) fn payout_row(&self, bet: &str, outcome: &str) -> Option<&'p PayoutRow> {
        let plan: &'p crate::plan::Plan = self.plan;
        plan.payouts
            .iter()
            .find(|p| p.bet == bet && p.outcome == outcome)
    }
}

/// What every hand's result reads of the dealer's finished hand.
#[derive(Debug, Clone, Copy)]
struct DealerHand {
    blackjack: bool,
    value: HandValue,
}

impl DealerHand {
    fn of(engine: &BlackjackEngine<'_>, dealer: &[Card]) -> DealerHand {
        DealerHand {
            blackjack: engine.dealer_has_blackjack(dealer),
            value: engine.value(dealer),
        }
    }
}

/// The bet types of a hand's own stakes, which [`BlackjackEngine::settle_box`] and
/// [`BlackjackEngine::settle_bet_behind`] pay; as `usize`, the index in [`PlayBet::ALL`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PlayBet {
    Main,
    BetBehind,
    Split,
    Double,
    Insurance,
}

impl PlayBet {
    pub(super) const ALL: [PlayBet; 5] = [
        PlayBet::Main,
        PlayBet::BetBehind,
        PlayBet::Split,
        PlayBet::Double,
        PlayBet::Insurance,
    ];

    /// The bet type's id in the plan (and the vocabulary).
    pub(super) fn name(self) -> &'static str {
        match self {
            PlayBet::Main => "main",
            PlayBet::BetBehind => "bet_behind",
            PlayBet::Split => "split",
            PlayBet::Double => "double",
            PlayBet::Insurance => "insurance",
        }
    }
}

/// The payout rows a hand's stakes are paid by; as `usize`, the index in [`PlayRow::ALL`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PlayRow {
    Blackjack,
    Win,
    Push,
    Surrender,
}

impl PlayRow {
    pub(super) const ALL: [PlayRow; 4] = [
        PlayRow::Blackjack,
        PlayRow::Win,
        PlayRow::Push,
        PlayRow::Surrender,
    ];

    /// The row's outcome name in the plan.
    pub(super) fn name(self) -> &'static str {
        match self {
            PlayRow::Blackjack => "blackjack",
            PlayRow::Win => "win",
            PlayRow::Push => "push",
            PlayRow::Surrender => "surrender",
        }
    }
}

/// Where the settlement of a box (or a Bet Behind) goes, stake by stake: the one place the
/// two settlements differ. [`BlackjackEngine::settle_box`] writes a [`Settlement`], each
/// payout row looked up by name and paid by [`BlackjackEngine::pay`]; a prepared settlement
/// ([`super::prepared`]) writes the same amounts from rows read once.
pub(super) trait StakeSink {
    /// The next hand's result.
    fn result(&mut self, result: HandResult);
    /// A stake of `bet` paid by its row `row`.
    fn pay(
        &mut self,
        bet: PlayBet,
        row: PlayRow,
        stake: i64,
        hand: Option<usize>,
    ) -> Result<(), Refusal>;
    /// A stake lost.
    fn lose(&mut self, bet: PlayBet, stake: i64, hand: Option<usize>);
    /// A stake handed back by a rule rather than a payout row.
    fn returned(&mut self, bet: PlayBet, stake: i64, hand: Option<usize>);
}

/// The service's settlement: [`Settlement`] with each row looked up by name.
struct ByName<'e, 'p> {
    engine: &'e BlackjackEngine<'p>,
    out: Settlement,
}

impl StakeSink for ByName<'_, '_> {
    fn result(&mut self, result: HandResult) {
        self.out.results.push(result);
    }

    fn pay(
        &mut self,
        bet: PlayBet,
        row: PlayRow,
        stake: i64,
        hand: Option<usize>,
    ) -> Result<(), Refusal> {
        let paid = self.engine.pay(bet.name(), row.name(), stake, hand)?;
        self.out.stakes.push(paid);
        Ok(())
    }

    fn lose(&mut self, bet: PlayBet, stake: i64, hand: Option<usize>) {
        self.out.stakes.push(lose(bet.name(), stake, hand));
    }

    fn returned(&mut self, bet: PlayBet, stake: i64, hand: Option<usize>) {
        self.out.stakes.push(returned(bet.name(), stake, hand));
    }
}

/// The vocabulary's own name for bet type `bet` (every bet type of a plan is one of them,
/// lint sees to it).
pub(super) fn bet_name(bet: &str) -> Cow<'static, str> {
    crate::plan::rules::blackjack::BETS
        .iter()
        .find(|b| b.id == bet)
        .map_or_else(|| Cow::Owned(bet.to_string()), |b| Cow::Borrowed(b.id))
}

pub(super) fn lose(bet: &str, stake: i64, hand: Option<usize>) -> StakeSettlement {
    StakeSettlement {
        bet: bet_name(bet),
        hand,
        payout: Payout::lose(stake),
    }
}

/// A stake handed back by a rule rather than a payout row (a split or double that a dealer
/// blackjack does not take, with `dealer_blackjack_takes = "original_stake_only"`).
fn returned(bet: &str, stake: i64, hand: Option<usize>) -> StakeSettlement {
    StakeSettlement {
        bet: bet_name(bet),
        hand,
        payout: Payout {
            stake_minor: stake,
            returned_minor: stake,
            win_minor: 0,
            outcome: "returned".into(),
        },
    }
}
