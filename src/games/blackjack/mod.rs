//! Blackjack engine for every blackjack plan: seated tables with Bet Behind, common-hand
//! games (Infinite Blackjack, All Bets Blackjack, BLACKJACK – ENDLESS), the single-deck game
//! with a peek (001) and the Czech game with its optional rules (003).
//!
//! Pure: no I/O, no clock, no randomness. Every rule the documents let vary is read from the
//! plan's `[rules.blackjack]` ([`BlackjackRules`]), every ratio and limit from its `[[bets]]`
//! and `[[payouts]]`, the automatic decision from `policies.decision_timeout`.
//!
//! In the order of a round:
//! - *Sázky*: [`BlackjackEngine::check_bets`] holds one player's bets on one box (main, Bet
//!   Behind, side bets) to the plan's limits and `requires`; [`BlackjackEngine::check_added_stake`]
//!   a split's or a double's added stake; [`BlackjackEngine::check_insurance`] insurance.
//! - *Hodnota karet* ([`hand`]): [`hand_value`], soft and hard totals, the natural, the bust.
//! - *Možnosti sázejícího* ([`play`]): [`BlackjackEngine::hand_status`],
//!   [`BlackjackEngine::check_decision`] (hit, stand, double, split, surrender, each refusal with
//!   a stable code and the clause), [`BlackjackEngine::apply_decision`],
//!   [`BlackjackEngine::add_card`] and [`BlackjackEngine::automatic_decision`] for a time-out.
//! - *Pravidla pro hru krupiéra* ([`dealer`]): [`BlackjackEngine::dealer_action`], the peek,
//!   the dealer's blackjack, [`BlackjackEngine::check_dealer_hand`].
//! - *Cíl hry a výplaty výher* ([`settle`]): [`BlackjackEngine::settle_box`] (main, splits,
//!   doubles, insurance, surrender) and [`BlackjackEngine::settle_bet_behind`].
//! - *Vedlejší sázky* ([`side_bets`]): [`BlackjackEngine::settle_side_bet`].
//! - *Rozdání* ([`deal`]): [`BlackjackEngine::first_pass`] (who gets the first cards, in which
//!   order), [`BlackjackEngine::check_cards_fit_shoe`], and when a blackjack is paid.
//! - *RNG* ([`shoe`]): [`shuffled_shoe`] deals a whole shoe from a seed, [`LazyShoe`] the same
//!   shoe card by card.
//! - *The round* ([`driver`]): [`BlackjackEngine::open_round`], [`BlackjackEngine::apply`]
//!   (cards, insurance, decisions, time-outs, Bet Behind funding) and
//!   [`BlackjackEngine::next_step`] play a whole round from its logged inputs, seated or on a
//!   common hand; [`BlackjackEngine::settle_round`] settles every stake of it.
//! - *Basic strategy* ([`strategy`]): [`BasicStrategy`], computed from the plan's rules.
//! - *Prepared settlement* ([`prepared`]): [`BlackjackEngine::prepare_settlement`] and
//!   [`BlackjackEngine::settle_round_prepared`], `settle_round` for many rounds of the same
//!   bets without allocating (the simulation).
//!
//! **Hands.** One player's play on one box (or, in a common-hand game, one player's own view
//! of the common hand) is a `Vec<Hand>`: one hand, or after splits several, in the order they
//! are played. Index 0 is the original hand and, after a split, the right-hand hand ("ta na
//! pravé straně", played first); the split-off hand is inserted right after the hand it came
//! from. The engine checks each decision against the hands as they stand, so the hands are
//! the whole history the rules need (a double, a split and a surrender each leave their mark).
//!
//! **Common hand.** Each player's `Vec<Hand>` holds only the cards that count for him: the
//! common first two cards, then the cards dealt while he was still drawing. Cards dealt after
//! he stood count nothing for him (`cards_after_stand_count_zero`); the round driver
//! ([`driver`]) attributes the dealt sequence to each player.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Refusal;
use crate::money::{Money, Ratio};
use crate::plan::model::{BetType, Plan};
use crate::plan::rules::blackjack::BlackjackRules;
use crate::plan::rules::{Family, GameRules};

pub mod deal;
pub mod dealer;
pub mod driver;
#[cfg(test)]
mod driver_tests;
pub mod hand;
pub mod play;
pub mod prepared;
#[cfg(test)]
mod rules_tests;
pub mod settle;
pub mod shoe;
pub mod side_bets;
pub mod strategy;

pub use deal::{DealTo, FirstPassSlot};
pub use dealer::DealerAction;
pub use driver::{
    BetBehindBet, CardTo, Decider, Input, Next, PositionBets, PositionSettlement, RoundSettlement,
    RoundSetup, RoundState,
};
pub use hand::{hand_value, HandValue};
pub use play::{Decision, Hand, HandEnd, HandStatus, Insurer, LegalSet};
pub use prepared::{BoxPaid, PositionPaid, PreparedSettlement, RoundPaid, StakePaid};
pub use settle::{BetBehind, BoxPlay, HandResult, Settlement, StakeSettlement};
pub use shoe::{shuffled_shoe, LazyShoe};
pub use side_bets::SideBetDeal;
pub use strategy::BasicStrategy;

/// The stable codes of the refusals this engine returns.
pub mod code {
    pub use crate::games::code::WRONG_FAMILY;
    /// A bet type the plan does not offer (or not at this moment: a split is not placed with
    /// the initial bets).
    pub const NOT_OFFERED: &str = "not_offered";
    /// A stake that is zero or negative.
    pub const BAD_STAKE: &str = "bad_stake";
    pub const BELOW_MIN_BET: &str = "below_min_bet";
    pub const ABOVE_MAX_BET: &str = "above_max_bet";
    /// A bet placed without one of the bet types its `requires` names (a side bet alone).
    pub const REQUIRES_MISSING: &str = "requires_missing";
    /// The same bet type twice in one player's bets on one box.
    pub const DUPLICATE_BET: &str = "duplicate_bet";
    /// A split or double stake that is not the hand's stake ("ve stejné výši").
    pub const STAKE_NOT_EQUAL: &str = "stake_not_equal";
    /// Bet Behind on a box without a main bet, or on the player's own box.
    pub const BET_BEHIND_NOT_ALLOWED: &str = "bet_behind_not_allowed";

    /// There is no hand at that index.
    pub const NO_SUCH_HAND: &str = "no_such_hand";
    /// The hand needs a card before anything is decided on it (a split hand's second card).
    pub const AWAITING_CARD: &str = "awaiting_card";
    /// The hand is over: stood, surrendered, bust, 21, doubled, or a split ace with its card.
    pub const HAND_FINISHED: &str = "hand_finished";
    /// A split ace gets one card only ("může táhnout na každý nový hand už jen jednu kartu").
    pub const SPLIT_ACES_ONE_CARD: &str = "split_aces_one_card";
    pub const DOUBLE_NOT_OFFERED: &str = "double_not_offered";
    /// A double on anything but the first two cards of a hand.
    pub const DOUBLE_FIRST_TWO_CARDS_ONLY: &str = "double_first_two_cards_only";
    /// A double on a total the plan's `double.totals` does not list.
    pub const DOUBLE_TOTAL_NOT_ALLOWED: &str = "double_total_not_allowed";
    pub const DOUBLE_AFTER_SPLIT_NOT_ALLOWED: &str = "double_after_split_not_allowed";
    pub const SPLIT_NOT_OFFERED: &str = "split_not_offered";
    /// A split on anything but two cards.
    pub const SPLIT_FIRST_TWO_CARDS_ONLY: &str = "split_first_two_cards_only";
    /// Two cards that are not a pair by the plan's `split.pair`.
    pub const NOT_A_PAIR: &str = "not_a_pair";
    /// Two ten-value cards where `split.ten_value_cards` is false ("Zákaz split na desítku").
    pub const TEN_VALUE_SPLIT_NOT_ALLOWED: &str = "ten_value_split_not_allowed";
    /// The box already has `split.max_hands` hands.
    pub const MAX_HANDS_REACHED: &str = "max_hands_reached";
    pub const RESPLIT_ACES_NOT_ALLOWED: &str = "resplit_aces_not_allowed";
    pub const SURRENDER_NOT_OFFERED: &str = "surrender_not_offered";
    /// Surrender after the first round of decisions ("pouze jednou, během prvního kola voleb").
    pub const SURRENDER_FIRST_DECISION_ONLY: &str = "surrender_first_decision_only";
    pub const SURRENDER_NOT_WITH_BLACKJACK: &str = "surrender_not_with_blackjack";
    pub const INSURANCE_NOT_OFFERED: &str = "insurance_not_offered";
    /// Insurance when the dealer's first card is not an ace.
    pub const INSURANCE_NEEDS_DEALER_ACE: &str = "insurance_needs_dealer_ace";
    /// Insurance once the hand has been played on.
    pub const INSURANCE_AFTER_DECISIONS: &str = "insurance_after_decisions";
    /// An insurance stake other than the plan's share of the main bet.
    pub const INSURANCE_STAKE: &str = "insurance_stake";
    pub const INSURANCE_NOT_FOR_BET_BEHIND: &str = "insurance_not_for_bet_behind";
    pub const INSURANCE_NOT_FOR_DISCONNECTED: &str = "insurance_not_for_disconnected";
    /// The plan has no automatic decision for a blackjack hand.
    pub const NO_AUTOMATIC_DECISION: &str = "no_automatic_decision";

    /// A dealer hand that did not follow the drawing rules, or is not finished.
    pub const DEALER_HAND_INVALID: &str = "dealer_hand_invalid";
    /// Settlement of hands that are not all finished, or that no play could have made.
    pub const PLAY_INVALID: &str = "play_invalid";
    /// A live card that the plan's shoe cannot hold (more copies than its decks have).
    pub const CARD_NOT_IN_SHOE: &str = "card_not_in_shoe";
    /// Side-bet settlement without the cards it is decided on.
    pub const CARDS_MISSING: &str = "cards_missing";

    // The round driver ([`super::driver`]).
    /// A box without a main bet: a box is dealt only for its main bet.
    pub const MAIN_BET_MISSING: &str = "main_bet_missing";
    /// Fewer box owners (or common-hand players) than the plan's `seating.min_players`.
    pub const TOO_FEW_PLAYERS: &str = "too_few_players";
    /// More box owners (or common-hand players) than the plan's `seating.max_players`, or one
    /// player twice in a common hand.
    pub const TOO_MANY_PLAYERS: &str = "too_many_players";
    /// A position or a Bet Behind the round does not have.
    pub const NO_SUCH_POSITION: &str = "no_such_position";
    /// A card while the round awaits decisions or insurance answers, or after the last card.
    pub const CARD_NOT_EXPECTED: &str = "card_not_expected";
    /// A decision (or a time-out) for a hand that does not await one now: not its turn, or
    /// the round is elsewhere.
    pub const DECISION_NOT_EXPECTED: &str = "decision_not_expected";
    /// An insurance answer outside the insurance offer, twice, or from one not offered it.
    pub const INSURANCE_NOT_EXPECTED: &str = "insurance_not_expected";
    /// A Bet Behind declining a split or a double its box did not make, or too late.
    pub const BET_BEHIND_NOTHING_TO_DECLINE: &str = "bet_behind_nothing_to_decline";
    /// Settlement asked before every card of the round is dealt.
    pub const ROUND_NOT_COMPLETE: &str = "round_not_complete";
    /// The card source ran dry before the round was complete.
    pub const CARDS_EXHAUSTED: &str = "cards_exhausted";
    /// The settlement codes every engine shares ([`crate::games::code`]).
    pub use crate::games::code::{MAX_WIN_EXCEEDED, NO_PAYOUT_ROW, PAYOUT_OVERFLOW};
}

/// One bet a player places at betting time: the main bet, a Bet Behind or a side bet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BlackjackBet {
    /// The bet type id of the plan (`main`, `bet_behind`, `perfect_pairs`, …).
    pub bet: String,
    pub stake_minor: i64,
}

/// The blackjack engine for one plan.
#[derive(Debug, Clone, Copy)]
pub struct BlackjackEngine<'p> {
    plan: &'p Plan,
    rules: &'p BlackjackRules,
}

/// The bet types a hand's own play creates; they are not placed with the initial bets.
const PLAY_BETS: &[&str] = &["split", "double", "insurance"];

impl<'p> BlackjackEngine<'p> {
    /// The engine for `plan`; refuses a plan of another family.
    pub fn new(plan: &'p Plan) -> Result<BlackjackEngine<'p>, Refusal> {
        crate::games::expect_family(plan, Family::Blackjack, "blackjack")?;
        let GameRules::Blackjack(rules) = &plan.rules else {
            unreachable!("expect_family checked the rules' family")
        };
        Ok(BlackjackEngine { plan, rules })
    }

    pub fn plan(&self) -> &'p Plan {
        self.plan
    }

    pub fn rules(&self) -> &'p BlackjackRules {
        self.rules
    }

    /// The value of `cards` by the plan's ace counting.
    #[inline]
    pub fn value(&self, cards: &[crate::cards::Card]) -> HandValue {
        hand_value(cards, self.rules.ace_counting)
    }

    /// Checks one player's bets on one box at betting time: each bet type offered and not a
    /// play bet (split, double and insurance come with decisions), each stake within its
    /// row's limits, no bet type twice, and every bet's `requires` met by another of them
    /// ("Vedlejší sázky lze podávat jen v kombinaci s hlavní sázkou").
    pub fn check_bets(&self, bets: &[BlackjackBet]) -> Result<(), Refusal> {
        for (i, b) in bets.iter().enumerate() {
            if PLAY_BETS.contains(&b.bet.as_str()) {
                return Err(self.refuse(
                    code::NOT_OFFERED,
                    format!(
                        "'{}' is placed with a decision during the round, not with the initial bets",
                        b.bet
                    ),
                    &self.rules.clause,
                ));
            }
            self.check_stake(&b.bet, b.stake_minor)?;
            if bets[..i].iter().any(|o| o.bet == b.bet) {
                return Err(self.refuse(
                    code::DUPLICATE_BET,
                    format!("'{}' is placed twice on one box", b.bet),
                    &self.row(&b.bet)?.clause,
                ));
            }
        }
        for b in bets {
            let row = self.row(&b.bet)?;
            if !row.requires.is_empty() && !bets.iter().any(|o| row.requires.contains(&o.bet)) {
                return Err(self.refuse(
                    code::REQUIRES_MISSING,
                    format!(
                        "{} ({}) is placed only together with {}",
                        row.label,
                        row.id,
                        row.requires.join(" or ")
                    ),
                    &row.clause,
                ));
            }
        }
        Ok(())
    }

    /// Where a Bet Behind may go: Bet Behind offered, on a box holding a main bet
    /// (`only_on_boxes_with_main_bet`) and not the player's own box (`on_own_box`).
    pub fn check_bet_behind_box(&self, box_has_main: bool, own_box: bool) -> Result<(), Refusal> {
        let bb = &self.rules.bet_behind;
        let reason = if !bb.allowed {
            Some(format!("{} offers no Bet Behind", self.plan.key()))
        } else if bb.only_on_boxes_with_main_bet == Some(true) && !box_has_main {
            Some("a Bet Behind goes only on a box that holds a main bet".to_string())
        } else if bb.on_own_box == Some(false) && own_box {
            Some("a Bet Behind goes on another player's box, not the player's own".to_string())
        } else {
            None
        };
        match reason {
            Some(r) => Err(self.refuse(code::BET_BEHIND_NOT_ALLOWED, r, &bb.clause)),
            None => Ok(()),
        }
    }

    /// A stake of `bet`: offered by the plan, positive, within its row's limits.
    pub fn check_stake(&self, bet: &str, stake_minor: i64) -> Result<(), Refusal> {
        let row = self.row(bet)?;
        if stake_minor <= 0 {
            return Err(Refusal::new(
                code::BAD_STAKE,
                format!("the stake must be positive, not {stake_minor} minor units"),
            )
            .with_plan(&self.plan.key()));
        }
        if stake_minor < row.min_bet || stake_minor > row.max_bet {
            let (c, bound, limit) = if stake_minor < row.min_bet {
                (code::BELOW_MIN_BET, "below the minimum", row.min_bet)
            } else {
                (code::ABOVE_MAX_BET, "above the maximum", row.max_bet)
            };
            return Err(self.refuse(
                c,
                format!(
                    "a stake of {} on {} is {bound} bet {}",
                    self.money(stake_minor),
                    row.label,
                    self.money(limit)
                ),
                &row.clause,
            ));
        }
        Ok(())
    }

    /// The stake a split or a double adds: equal to the hand's stake ("další sázku (ve stejné
    /// výši jako počáteční sázka)", "zdvojnásobit původní sázku") and within its own row's
    /// limits.
    pub fn check_added_stake(
        &self,
        bet: &str,
        hand_stake_minor: i64,
        stake_minor: i64,
    ) -> Result<(), Refusal> {
        let clause = match bet {
            "split" => &self.rules.split.clause,
            "double" => &self.rules.double.clause,
            other => {
                return Err(self.refuse(
                    code::NOT_OFFERED,
                    format!("'{other}' is not a stake a split or a double adds"),
                    &self.rules.clause,
                ))
            }
        };
        if stake_minor != hand_stake_minor {
            return Err(self.refuse(
                code::STAKE_NOT_EQUAL,
                format!(
                    "a {bet} adds a stake equal to the hand's {}, not {}",
                    self.money(hand_stake_minor),
                    self.money(stake_minor)
                ),
                clause,
            ));
        }
        self.check_stake(bet, stake_minor)
    }

    /// The limits row of a bet type; a type the plan does not declare is not offered.
    fn row(&self, bet: &str) -> Result<&'p BetType, Refusal> {
        self.plan.bet(bet).ok_or_else(|| {
            let offered: Vec<&str> = self.plan.bets.iter().map(|b| b.id.as_str()).collect();
            self.refuse(
                code::NOT_OFFERED,
                format!(
                    "{} does not offer '{bet}'; it offers {}",
                    self.plan.key(),
                    offered.join(", ")
                ),
                &self.rules.clause,
            )
        })
    }

    /// The share `ratio` of `stake_minor`, rounded by the plan's rule.
    fn share(&self, ratio: Ratio, stake_minor: i64) -> Option<i64> {
        ratio.apply(stake_minor, self.plan.plan.rounding)
    }

    /// A refusal with the plan and the clause. Cold: the rounds that are played are the
    /// ones without one.
    #[cold]
    #[inline(never)]
    fn refuse(&self, code: &str, message: impl Into<String>, clause: &str) -> Refusal {
        Refusal::new(code, message)
            .with_plan(&self.plan.key())
            .clause(clause.to_string())
    }

    fn money(&self, minor: i64) -> Money {
        Money::new(minor, self.plan.plan.currency)
    }
}

#[cfg(test)]
pub(crate) mod testing {
    use std::path::Path;

    use crate::cards::Card;
    use crate::plan::model::Plan;
    use crate::plan::registry::load_file;

    /// Every blackjack plan.
    pub const PLANS: [&str; 9] = [
        "alg-blackjack-endless",
        "alg-blackjack",
        "czech-blackjack-strict",
        "czech-blackjack",
        "evolution-blackjack",
        "evolution-infinite-blackjack",
        "single-deck-blackjack",
        "synot-all-bets-blackjack",
        "synot-blackjack",
    ];

    pub fn plan(id: &str) -> Plan {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("game_plans");
        load_file(
            &dir.join(format!("{id}@1.toml")),
            Some(&dir.join("sources")),
        )
        .unwrap_or_else(|f| panic!("{id} loads: {f:?}"))
        .plan
    }

    /// Cards from a space-separated list: `"Ah Td 7c"`.
    pub fn cards(s: &str) -> Vec<Card> {
        s.split_whitespace()
            .map(|c| c.parse().unwrap_or_else(|e| panic!("{c}: {e}")))
            .collect()
    }

    pub fn card(s: &str) -> Card {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;

    fn bet(b: &str, stake_minor: i64) -> BlackjackBet {
        BlackjackBet {
            bet: b.into(),
            stake_minor,
        }
    }

    #[test]
    fn every_blackjack_plan_makes_an_engine_and_others_are_refused() {
        for id in PLANS {
            let p = plan(id);
            BlackjackEngine::new(&p).unwrap_or_else(|e| panic!("{id}: {e}"));
        }
        let roulette = plan("evolution-roulette");
        let e = BlackjackEngine::new(&roulette).expect_err("a roulette plan");
        assert_eq!(e.code, code::WRONG_FAMILY);
    }

    #[test]
    fn side_bets_are_accepted_only_with_a_main_bet() {
        let p = plan("evolution-blackjack");
        let e = BlackjackEngine::new(&p).unwrap();
        e.check_bets(&[bet("main", 10_000), bet("perfect_pairs", 1_000)])
            .unwrap();
        let r = e.check_bets(&[bet("perfect_pairs", 1_000)]).unwrap_err();
        assert_eq!(r.code, code::REQUIRES_MISSING);
        assert_eq!(r.plan.as_deref(), Some("evolution-blackjack@1"));
        assert!(r.clause.is_some());
        // A Bet Behind needs no main bet of its own player.
        e.check_bets(&[bet("bet_behind", 10_000)]).unwrap();
    }

    #[test]
    fn stakes_are_held_to_each_bet_types_limits() {
        let p = plan("evolution-blackjack");
        let e = BlackjackEngine::new(&p).unwrap();
        let r = e.check_bets(&[bet("main", 99)]).unwrap_err();
        assert_eq!(r.code, code::BELOW_MIN_BET);
        let r = e.check_bets(&[bet("main", 20_000_001)]).unwrap_err();
        assert_eq!(r.code, code::ABOVE_MAX_BET);
        e.check_bets(&[bet("main", 20_000_000)]).unwrap();
        let r = e
            .check_bets(&[bet("main", 10_000), bet("perfect_pairs", 2_000_001)])
            .unwrap_err();
        assert_eq!(r.code, code::ABOVE_MAX_BET);
        let r = e.check_bets(&[bet("main", 0)]).unwrap_err();
        assert_eq!(r.code, code::BAD_STAKE);
        let r = e
            .check_bets(&[bet("main", 10_000), bet("main", 10_000)])
            .unwrap_err();
        assert_eq!(r.code, code::DUPLICATE_BET);
    }

    #[test]
    fn bets_the_plan_does_not_offer_are_refused() {
        let p = plan("czech-blackjack");
        let e = BlackjackEngine::new(&p).unwrap();
        for b in ["perfect_pairs", "bet_behind", "insurance", "split"] {
            let r = e
                .check_bets(&[bet("main", 10_000), bet(b, 1_000)])
                .unwrap_err();
            assert_eq!(r.code, code::NOT_OFFERED, "{b}");
        }
    }

    #[test]
    fn split_and_double_stakes_equal_the_hands_stake() {
        let p = plan("evolution-blackjack");
        let e = BlackjackEngine::new(&p).unwrap();
        e.check_added_stake("split", 10_000, 10_000).unwrap();
        e.check_added_stake("double", 10_000, 10_000).unwrap();
        let r = e.check_added_stake("double", 10_000, 5_000).unwrap_err();
        assert_eq!(r.code, code::STAKE_NOT_EQUAL);
        assert_eq!(r.clause.as_deref(), Some(e.rules().double.clause.as_str()));
    }

    #[test]
    fn bet_behind_goes_only_on_another_players_box_with_a_main_bet() {
        let p = plan("evolution-blackjack");
        let e = BlackjackEngine::new(&p).unwrap();
        e.check_bet_behind_box(true, false).unwrap();
        for (has_main, own) in [(false, false), (true, true)] {
            let r = e.check_bet_behind_box(has_main, own).unwrap_err();
            assert_eq!(r.code, code::BET_BEHIND_NOT_ALLOWED);
        }
        let p = plan("evolution-infinite-blackjack");
        let e = BlackjackEngine::new(&p).unwrap();
        let r = e.check_bet_behind_box(true, false).unwrap_err();
        assert_eq!(r.code, code::BET_BEHIND_NOT_ALLOWED);
    }
}
