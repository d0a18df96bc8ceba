//! The player's decisions ("Možnosti sázejícího při hře", "Další sázky a volby v průběhu
//! hry"): hit ("Karta"), stand ("Stát"), double ("Zdvojnásobit"), split ("Rozdělit"),
//! surrender ("Vybrat"), insurance ("Pojištění"), and the automatic decision on a time-out.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::hand::{hard_value, is_natural_pair, is_ten_value, TWENTY_ONE};
use super::{code, BlackjackEngine};
use crate::cards::{Card, Rank};
use crate::games::Refusal;
use crate::plan::model::AutoDecision;
use crate::plan::rules::blackjack::{DoubleOn, InsuranceStake, PairMatch};

/// One hand of a player: the original hand or one made by a split.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Hand {
    /// The cards that count for this hand, in the order dealt.
    pub cards: Vec<Card>,
    /// The hand was made by a split (both hands of a split are).
    #[serde(default)]
    pub from_split: bool,
    #[serde(default)]
    pub doubled: bool,
    #[serde(default)]
    pub stood: bool,
    #[serde(default)]
    pub surrendered: bool,
}

impl Hand {
    /// The original hand on its first two cards.
    pub fn dealt(first: Card, second: Card) -> Hand {
        Hand {
            cards: vec![first, second],
            ..Hand::default()
        }
    }

    /// A hand that began as a split ace.
    pub fn is_split_ace(&self) -> bool {
        self.from_split && self.cards.first().is_some_and(|c| c.rank == Rank::Ace)
    }
}

/// A decision on one hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// "Karta": one more card.
    Hit,
    /// "Stát".
    Stand,
    /// "Zdvojnásobit": the stake doubled, then `double.cards_dealt` cards and no more.
    Double,
    /// "Rozdělit": the pair becomes two hands, each with the original stake.
    Split,
    /// "Vybrat": the hand is given up for the plan's share of the main bet.
    Surrender,
}

impl Decision {
    pub const ALL: [Decision; 5] = [
        Decision::Hit,
        Decision::Stand,
        Decision::Double,
        Decision::Split,
        Decision::Surrender,
    ];
}

/// A set of decisions ([`BlackjackEngine::legal_set`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LegalSet(u8);

impl LegalSet {
    fn bit(d: Decision) -> u8 {
        1 << (d as u8)
    }

    pub fn contains(self, d: Decision) -> bool {
        self.0 & LegalSet::bit(d) != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// Where a hand stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "status", content = "end", rename_all = "snake_case")]
pub enum HandStatus {
    /// The hand needs a card before anyone decides: fewer than two cards (a split hand's
    /// second card), or a double still owed its cards. Also a hand whose player has just hit:
    /// the caller deals with [`BlackjackEngine::add_card`].
    AwaitingCard,
    /// The player decides.
    Deciding,
    Finished(HandEnd),
}

/// Why a hand takes no more decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HandEnd {
    Stood,
    Surrendered,
    /// Over 21.
    Bust,
    /// 21, by a natural or by drawing: nothing more to draw for ("až do dosažení celkové
    /// hodnoty 21").
    TwentyOne,
    /// Doubled and dealt its `double.cards_dealt` cards.
    Doubled,
    /// A split ace dealt its one card (`split.aces_one_card`).
    SplitAceOneCard,
}

/// Who takes out insurance: the box's player or a Bet Behind on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Insurer {
    Box,
    BetBehind,
}

/// Why a decision is not allowed, before its message is written: the cheap form of a refusal
/// ([`BlackjackEngine::is_legal`] asks only whether there is one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    SurrenderWithBlackjack,
    NotDeciding(HandStatus),
    SplitAceOneCard,
    DoubleNotOffered,
    DoubleFirstTwoCardsOnly,
    DoubleAfterSplit,
    DoubleTotal,
    SplitNotOffered,
    SplitFirstTwoCardsOnly,
    NotAPair,
    TenValueSplit,
    MaxHands,
    ResplitAces,
    SurrenderNotOffered,
    SurrenderFirstDecisionOnly,
}

impl<'p> BlackjackEngine<'p> {
    /// Whether hand `at` of `hands` is a blackjack: a natural on the original two cards, or on
    /// a split hand only where the plan says so (`blackjack.after_split_is_blackjack`; "Po
    /// rozdělení není možné sestavit nejlepší hand „blackjack“").
    #[inline]
    pub fn is_blackjack(&self, hand: &Hand) -> bool {
        is_natural_pair(&hand.cards)
            && !hand.doubled
            && (!hand.from_split || self.rules.blackjack.after_split_is_blackjack)
    }

    /// Where hand `at` of a player's `hands` stands.
    pub fn hand_status(&self, hands: &[Hand], at: usize) -> Result<HandStatus, Refusal> {
        let h = self.hand_at(hands, at)?;
        Ok(self.status_of(hands, h))
    }

    /// [`BlackjackEngine::hand_status`] of `h`, one of `hands`.
    #[inline]
    pub(super) fn status_of(&self, hands: &[Hand], h: &Hand) -> HandStatus {
        if h.surrendered {
            return HandStatus::Finished(HandEnd::Surrendered);
        }
        if h.cards.len() < 2 {
            return HandStatus::AwaitingCard;
        }
        let v = self.value(&h.cards);
        if v.is_bust() {
            return HandStatus::Finished(HandEnd::Bust);
        }
        if h.doubled {
            return if h.cards.len() < self.double_cards_owed() {
                HandStatus::AwaitingCard
            } else {
                HandStatus::Finished(HandEnd::Doubled)
            };
        }
        if h.stood {
            return HandStatus::Finished(HandEnd::Stood);
        }
        if v.total == TWENTY_ONE {
            return HandStatus::Finished(HandEnd::TwentyOne);
        }
        if self.split_ace_one_card(h) && !self.may_resplit_aces(hands, h) {
            return HandStatus::Finished(HandEnd::SplitAceOneCard);
        }
        HandStatus::Deciding
    }

    /// The first hand of `hands` that is not finished, with its status: whom the dealer
    /// serves next. `None` when the player is done.
    #[inline]
    pub fn next_hand(&self, hands: &[Hand]) -> Option<(usize, HandStatus)> {
        hands.iter().enumerate().find_map(|(i, h)| {
            if self.finished_uncounted(h) {
                return None;
            }
            match self.status_of(hands, h) {
                HandStatus::Finished(_) => None,
                s => Some((i, s)),
            }
        })
    }

    /// A hand that [`BlackjackEngine::status_of`] finds finished whatever its cards count:
    /// surrendered, stood (bust or not), or doubled with its cards. What
    /// [`BlackjackEngine::next_hand`] asks first, without counting the cards.
    #[inline]
    fn finished_uncounted(&self, h: &Hand) -> bool {
        h.surrendered
            || (h.cards.len() >= 2
                && if h.doubled {
                    h.cards.len() >= self.double_cards_owed()
                } else {
                    h.stood
                })
    }

    /// The cards a doubled hand holds once it has its double's cards.
    #[inline]
    fn double_cards_owed(&self) -> usize {
        2 + usize::from(self.rules.double.cards_dealt.unwrap_or(1))
    }

    /// Every decision the rules allow on hand `at` now, as a set: what
    /// [`BlackjackEngine::is_legal`] answers for each decision, with the hand's status found
    /// once (for strategies and simulations, which ask about several decisions).
    pub fn legal_set(&self, hands: &[Hand], at: usize) -> LegalSet {
        let Some(h) = hands.get(at) else {
            return LegalSet(0);
        };
        if self.status_of(hands, h) != HandStatus::Deciding {
            return LegalSet(0);
        }
        let one_card_ace = self.split_ace_one_card(h);
        let mut set = LegalSet(0);
        for d in Decision::ALL {
            // A split ace with its one card: split again or stand.
            let legal = (!one_card_ace || matches!(d, Decision::Split | Decision::Stand))
                && match d {
                    Decision::Hit | Decision::Stand => true,
                    Decision::Double => self.double_fault(h).is_none(),
                    Decision::Split => self.split_fault(hands, h).is_none(),
                    Decision::Surrender => {
                        !self.surrender_with_blackjack(h)
                            && self.surrender_fault(hands, h).is_none()
                    }
                };
            if legal {
                set.0 |= LegalSet::bit(d);
            }
        }
        set
    }

    /// Every decision the rules allow on hand `at` now.
    pub fn legal_decisions(&self, hands: &[Hand], at: usize) -> Vec<Decision> {
        Decision::ALL
            .into_iter()
            .filter(|d| self.is_legal(hands, at, *d))
            .collect()
    }

    /// Whether the rules allow `decision` on hand `at` now: [`BlackjackEngine::check_decision`]
    /// without building the refusal, for strategies and simulations that ask often.
    #[inline]
    pub fn is_legal(&self, hands: &[Hand], at: usize, decision: Decision) -> bool {
        matches!(self.decision_fault(hands, at, decision), Ok(None))
    }

    /// Whether the rules allow `decision` on hand `at` of a player's `hands` (the hands as
    /// they stand: their cards, splits, doubles). Each refusal names the rule's clause.
    pub fn check_decision(
        &self,
        hands: &[Hand],
        at: usize,
        decision: Decision,
    ) -> Result<(), Refusal> {
        match self.decision_fault(hands, at, decision)? {
            None => Ok(()),
            Some(fault) => Err(self.fault_refusal(hands, at, fault)),
        }
    }

    /// The rule that forbids `decision` on hand `at`, if any: the one place where the
    /// decision rules are read ([`BlackjackEngine::is_legal`] and
    /// [`BlackjackEngine::check_decision`] both ask it). `Err` only for a hand that does not
    /// exist.
    fn decision_fault(
        &self,
        hands: &[Hand],
        at: usize,
        decision: Decision,
    ) -> Result<Option<Fault>, Refusal> {
        let h = self.hand_at(hands, at)?;
        // Said before "the hand is over", which a natural also is: the surrender rule is the
        // one a player asking to surrender a blackjack needs to read.
        if decision == Decision::Surrender && self.surrender_with_blackjack(h) {
            return Ok(Some(Fault::SurrenderWithBlackjack));
        }
        let status = self.status_of(hands, h);
        if status != HandStatus::Deciding {
            return Ok(Some(Fault::NotDeciding(status)));
        }
        // A split ace holding another ace, where aces may be re-split: split or keep it.
        if self.split_ace_one_card(h) && !matches!(decision, Decision::Split | Decision::Stand) {
            return Ok(Some(Fault::SplitAceOneCard));
        }
        Ok(match decision {
            Decision::Hit | Decision::Stand => None,
            Decision::Double => self.double_fault(h),
            Decision::Split => self.split_fault(hands, h),
            Decision::Surrender => self.surrender_fault(hands, h),
        })
    }

    /// A surrender the plan refuses on a blackjack, asked of a blackjack.
    fn surrender_with_blackjack(&self, h: &Hand) -> bool {
        let r = self.rules;
        r.surrender.allowed && r.surrender.not_with_blackjack == Some(true) && self.is_blackjack(h)
    }

    fn double_fault(&self, h: &Hand) -> Option<Fault> {
        let d = &self.rules.double;
        if !d.allowed {
            Some(Fault::DoubleNotOffered)
        } else if h.cards.len() != 2 {
            Some(Fault::DoubleFirstTwoCardsOnly)
        } else if h.from_split && d.after_split != Some(true) {
            Some(Fault::DoubleAfterSplit)
        } else if d.on == Some(DoubleOn::Totals) && !d.totals.contains(&self.value(&h.cards).total)
        {
            Some(Fault::DoubleTotal)
        } else {
            None
        }
    }

    fn split_fault(&self, hands: &[Hand], h: &Hand) -> Option<Fault> {
        let s = &self.rules.split;
        if !s.allowed {
            return Some(Fault::SplitNotOffered);
        }
        let [a, b] = h.cards[..] else {
            return Some(Fault::SplitFirstTwoCardsOnly);
        };
        if !self.is_pair(a, b) {
            Some(Fault::NotAPair)
        } else if is_ten_value(a) && s.ten_value_cards != Some(true) {
            Some(Fault::TenValueSplit)
        } else if hands.len() >= usize::from(s.max_hands.unwrap_or(2)) {
            Some(Fault::MaxHands)
        } else if h.is_split_ace() && a.rank == Rank::Ace && s.resplit_aces != Some(true) {
            Some(Fault::ResplitAces)
        } else {
            None
        }
    }

    fn surrender_fault(&self, hands: &[Hand], h: &Hand) -> Option<Fault> {
        if !self.rules.surrender.allowed {
            return Some(Fault::SurrenderNotOffered);
        }
        // Surrender gives up the original two-card hand: never a split hand, never after a
        // card was drawn. With `first_decision_only` that is exactly "during the first round
        // of decisions"; the plans all state it.
        if hands.len() != 1 || h.from_split || h.cards.len() != 2 || h.doubled {
            return Some(Fault::SurrenderFirstDecisionOnly);
        }
        None
    }

    /// The refusal, with its message and clause, for `fault` on hand `at`.
    fn fault_refusal(&self, hands: &[Hand], at: usize, fault: Fault) -> Refusal {
        let r = self.rules;
        let h = &hands[at];
        let (d, s) = (&r.double, &r.split);
        let pair = || match h.cards[..] {
            [a, b] => (a, b),
            _ => unreachable!("a pair fault is about two cards"),
        };
        match fault {
            Fault::SurrenderWithBlackjack => self.refuse(
                code::SURRENDER_NOT_WITH_BLACKJACK,
                "surrender is not offered on a blackjack",
                &r.surrender.clause,
            ),
            Fault::NotDeciding(_) => self
                .not_deciding(hands, at)
                .ok()
                .flatten()
                .expect("a hand that is not deciding has its refusal"),
            Fault::SplitAceOneCard => self.refuse(
                code::SPLIT_ACES_ONE_CARD,
                "a split ace gets one card only: split the aces again or stand",
                &s.clause,
            ),
            Fault::DoubleNotOffered => self.refuse(
                code::DOUBLE_NOT_OFFERED,
                format!("{} offers no double", self.plan.key()),
                &d.clause,
            ),
            Fault::DoubleFirstTwoCardsOnly => self.refuse(
                code::DOUBLE_FIRST_TWO_CARDS_ONLY,
                format!(
                    "a double is offered on a hand's first two cards, not on {}",
                    self.cards_label(&h.cards)
                ),
                &d.clause,
            ),
            Fault::DoubleAfterSplit => self.refuse(
                code::DOUBLE_AFTER_SPLIT_NOT_ALLOWED,
                "a hand made by a split cannot be doubled",
                &d.clause,
            ),
            Fault::DoubleTotal => {
                let totals: Vec<String> = d.totals.iter().map(u8::to_string).collect();
                self.refuse(
                    code::DOUBLE_TOTAL_NOT_ALLOWED,
                    format!(
                        "{} totals {}; a double is offered only on {}",
                        self.cards_label(&h.cards),
                        self.value(&h.cards).total,
                        totals.join(", ")
                    ),
                    &d.clause,
                )
            }
            Fault::SplitNotOffered => self.refuse(
                code::SPLIT_NOT_OFFERED,
                format!("{} offers no split", self.plan.key()),
                &s.clause,
            ),
            Fault::SplitFirstTwoCardsOnly => self.refuse(
                code::SPLIT_FIRST_TWO_CARDS_ONLY,
                format!(
                    "a split is offered on a pair of two cards, not on {}",
                    self.cards_label(&h.cards)
                ),
                &s.clause,
            ),
            Fault::NotAPair => {
                let (a, b) = pair();
                let rule = match s.pair {
                    Some(PairMatch::SameRank) => "the same rank",
                    _ => "the same value",
                };
                self.refuse(
                    code::NOT_A_PAIR,
                    format!("{a} and {b} are not a pair: a split needs two cards of {rule}"),
                    &s.clause,
                )
            }
            Fault::TenValueSplit => {
                let (a, b) = pair();
                self.refuse(
                    code::TEN_VALUE_SPLIT_NOT_ALLOWED,
                    format!("{a} and {b} are ten-value cards, which may not be split"),
                    &s.clause,
                )
            }
            Fault::MaxHands => self.refuse(
                code::MAX_HANDS_REACHED,
                format!(
                    "the box already plays {} hands, the most a split may make",
                    hands.len()
                ),
                &s.clause,
            ),
            Fault::ResplitAces => self.refuse(
                code::RESPLIT_ACES_NOT_ALLOWED,
                "split aces may not be split again",
                &s.clause,
            ),
            Fault::SurrenderNotOffered => self.refuse(
                code::SURRENDER_NOT_OFFERED,
                format!("{} offers no surrender", self.plan.key()),
                &r.surrender.clause,
            ),
            Fault::SurrenderFirstDecisionOnly => self.refuse(
                code::SURRENDER_FIRST_DECISION_ONLY,
                "surrender is offered once, as the first decision on the first two cards",
                &r.surrender.clause,
            ),
        }
    }

    /// Applies a decision that [`BlackjackEngine::check_decision`] allows. `Hit` changes
    /// nothing by itself: the caller deals the card with [`BlackjackEngine::add_card`]. A
    /// split leaves the first card in hand `at` and moves the second to a new hand at
    /// `at + 1`; each then awaits its second card.
    pub fn apply_decision(
        &self,
        hands: &mut Vec<Hand>,
        at: usize,
        decision: Decision,
    ) -> Result<(), Refusal> {
        self.check_decision(hands, at, decision)?;
        let h = &mut hands[at];
        match decision {
            Decision::Hit => {}
            Decision::Stand => h.stood = true,
            Decision::Double => h.doubled = true,
            Decision::Surrender => h.surrendered = true,
            Decision::Split => {
                let second = h.cards.pop().expect("a split hand holds two cards");
                h.from_split = true;
                hands.insert(
                    at + 1,
                    Hand {
                        cards: vec![second],
                        from_split: true,
                        ..Hand::default()
                    },
                );
            }
        }
        Ok(())
    }

    /// Deals `card` to hand `at`: refused when the hand is finished.
    pub fn add_card(&self, hands: &mut [Hand], at: usize, card: Card) -> Result<(), Refusal> {
        let h = self.hand_at(hands, at)?;
        if let HandStatus::Finished(end) = self.status_of(hands, h) {
            return Err(self.refuse(
                code::HAND_FINISHED,
                format!(
                    "hand {at} ({}) takes no more cards: {}",
                    self.cards_label(&hands[at].cards),
                    end_label(end)
                ),
                &self.rules.clause,
            ));
        }
        hands[at].cards.push(card);
        Ok(())
    }

    /// The decision taken for a player who does not decide in time or is disconnected, by the
    /// plan's `policies.decision_timeout`: `stand`, or `hit_at_or_below_else_stand` ("Pokud je
    /// celková hodnota karet 11 a méně … volba Karta … vyšší než 11 … volba Stát"), on the
    /// hand's best total (a soft 17 is 17). It never adds a stake: no double, split,
    /// surrender or insurance is taken for an absent player. A hand that may not hit (a split
    /// ace holding another ace) stands.
    pub fn automatic_decision(&self, hands: &[Hand], at: usize) -> Result<Decision, Refusal> {
        let Some(t) = &self.plan.policies.decision_timeout else {
            return Err(self.refuse(
                code::NO_AUTOMATIC_DECISION,
                format!("{} states no automatic decision", self.plan.key()),
                &self.rules.clause,
            ));
        };
        // Only a hand that awaits a decision gets one.
        if let Some(refusal) = self.not_deciding(hands, at)? {
            return Err(refusal);
        }
        let total = self.value(&hands[at].cards).total;
        let decision = match (t.automatic, t.hit_at_or_below) {
            (AutoDecision::Stand, _) => Decision::Stand,
            (AutoDecision::HitAtOrBelowElseStand, Some(limit)) => {
                if total <= limit && self.is_legal(hands, at, Decision::Hit) {
                    Decision::Hit
                } else {
                    Decision::Stand
                }
            }
            (other, _) => {
                return Err(self.refuse(
                    code::NO_AUTOMATIC_DECISION,
                    format!(
                        "'{}' is not an automatic decision for a blackjack hand",
                        crate::games::wire_name(&other)
                    ),
                    &t.clause,
                ))
            }
        };
        Ok(decision)
    }

    /// Checks insurance ("Pojištění") for the box's main bet of `main_stake_minor`: offered on
    /// a dealer ace, before the hand is played, to whom the plan allows (a Bet Behind, a
    /// disconnected player), for exactly (or at most, by `insurance.stake`) the plan's share
    /// of the main bet, rounded by the plan's rule, and within the insurance row's limits.
    pub fn check_insurance(
        &self,
        dealer_up: Card,
        hands: &[Hand],
        main_stake_minor: i64,
        stake_minor: i64,
        insurer: Insurer,
        disconnected: bool,
    ) -> Result<(), Refusal> {
        let i = &self.rules.insurance;
        let refuse = |c: &str, m: String| Err(self.refuse(c, m, &i.clause));
        if !i.offered {
            return refuse(
                code::INSURANCE_NOT_OFFERED,
                format!("{} offers no insurance", self.plan.key()),
            );
        }
        if dealer_up.rank != Rank::Ace {
            return refuse(
                code::INSURANCE_NEEDS_DEALER_ACE,
                format!(
                    "insurance is offered when the dealer's first card is an ace, not {dealer_up}"
                ),
            );
        }
        if insurer == Insurer::BetBehind && i.for_bet_behind != Some(true) {
            return refuse(
                code::INSURANCE_NOT_FOR_BET_BEHIND,
                "insurance is not offered to a Bet Behind".into(),
            );
        }
        if disconnected && i.for_disconnected != Some(true) {
            return refuse(
                code::INSURANCE_NOT_FOR_DISCONNECTED,
                "a disconnected player is not insured".into(),
            );
        }
        let untouched = matches!(hands, [h] if h.cards.len() == 2 && !h.from_split && !h.doubled && !h.stood && !h.surrendered);
        if !untouched {
            return refuse(
                code::INSURANCE_AFTER_DECISIONS,
                "insurance is offered on the first two cards, before any decision".into(),
            );
        }
        let fraction = i.fraction_of_main.unwrap_or(crate::money::Ratio::ONE);
        let full = self.share(fraction, main_stake_minor).ok_or_else(|| {
            self.refuse(
                code::PAYOUT_OVERFLOW,
                "the insurance stake does not fit in 64-bit minor units",
                &i.clause,
            )
        })?;
        let ok = match i.stake {
            Some(InsuranceStake::AtMost) => stake_minor > 0 && stake_minor <= full,
            _ => stake_minor == full,
        };
        if !ok {
            let how = if i.stake == Some(InsuranceStake::AtMost) {
                "at most"
            } else {
                "exactly"
            };
            return refuse(
                code::INSURANCE_STAKE,
                format!(
                    "insurance is {how} {fraction} of the main bet {}: {}, not {}",
                    self.money(main_stake_minor),
                    self.money(full),
                    self.money(stake_minor)
                ),
            );
        }
        self.check_stake("insurance", stake_minor)
    }

    /// Two cards that may be split by the plan's `split.pair` (before the ten-value rule).
    pub fn is_pair(&self, a: Card, b: Card) -> bool {
        match self.rules.split.pair {
            Some(PairMatch::SameRank) => a.rank == b.rank,
            Some(PairMatch::SameValue) | None => hard_value(a) == hard_value(b),
        }
    }

    /// A split ace that has had its one card, where split aces get one card only.
    #[inline]
    fn split_ace_one_card(&self, h: &Hand) -> bool {
        self.rules.split.aces_one_card == Some(true) && h.is_split_ace() && h.cards.len() >= 2
    }

    /// A split ace holding a second ace that the rules let split again now.
    fn may_resplit_aces(&self, hands: &[Hand], h: &Hand) -> bool {
        let s = &self.rules.split;
        matches!(h.cards[..], [a, b] if a.rank == Rank::Ace && b.rank == Rank::Ace)
            && s.resplit_aces == Some(true)
            && hands.len() < usize::from(s.max_hands.unwrap_or(2))
    }

    /// The refusal for a decision on hand `at` when it is not awaiting one; `None` when it is.
    fn not_deciding(&self, hands: &[Hand], at: usize) -> Result<Option<Refusal>, Refusal> {
        let r = self.rules;
        let h = self.hand_at(hands, at)?;
        Ok(match self.hand_status(hands, at)? {
            HandStatus::Deciding => None,
            HandStatus::AwaitingCard => Some(self.refuse(
                code::AWAITING_CARD,
                format!(
                    "hand {at} ({}) is owed a card before anything is decided on it",
                    self.cards_label(&h.cards)
                ),
                &r.clause,
            )),
            HandStatus::Finished(end) => {
                let (c, clause) = match end {
                    HandEnd::SplitAceOneCard => (code::SPLIT_ACES_ONE_CARD, &r.split.clause),
                    HandEnd::Doubled => (code::HAND_FINISHED, &r.double.clause),
                    HandEnd::Surrendered => (code::HAND_FINISHED, &r.surrender.clause),
                    _ => (code::HAND_FINISHED, &r.clause),
                };
                Some(self.refuse(
                    c,
                    format!(
                        "hand {at} ({}) takes no more decisions: {}",
                        self.cards_label(&h.cards),
                        end_label(end)
                    ),
                    clause,
                ))
            }
        })
    }

    /// `Ah Td, soft 21` for messages.
    pub(super) fn cards_label(&self, cards: &[Card]) -> String {
        if cards.is_empty() {
            return "no cards".into();
        }
        let v = self.value(cards);
        let names: Vec<String> = cards.iter().map(Card::to_string).collect();
        format!(
            "{}, {}{}",
            names.join(" "),
            if v.soft { "soft " } else { "" },
            v.total
        )
    }

    #[inline]
    fn hand_at<'h>(&self, hands: &'h [Hand], at: usize) -> Result<&'h Hand, Refusal> {
        hands.get(at).ok_or_else(|| {
            self.refuse(
                code::NO_SUCH_HAND,
                format!("there is no hand {at}: the player has {}", hands.len()),
                &self.rules.clause,
            )
        })
    }
}

fn end_label(end: HandEnd) -> &'static str {
    match end {
        HandEnd::Stood => "it stood",
        HandEnd::Surrendered => "it was surrendered",
        HandEnd::Bust => "it is bust",
        HandEnd::TwentyOne => "it counts 21",
        HandEnd::Doubled => "it was doubled and has its card",
        HandEnd::SplitAceOneCard => "a split ace gets one card only",
    }
}
