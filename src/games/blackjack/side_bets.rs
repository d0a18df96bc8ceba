//! "Vedlejší sázky": each side bet classified on the cards the plan's `side_bets[].cards` names,
//! by the document's definitions, and paid by the plan's row for its class.
//!
//! The document's classes of one bet exclude each other ("Trojice – stejná hodnota tří karet,
//! ale různé barvy"), so each deal has at most one class; a class the plan has no row for (a
//! straight for Top 3) loses. Where the document leaves a detail open, the reading taken is:
//! - pairs (Perfect Pairs, Hráčův pár, Dealerův pár, Páry) are pairs of rank: "dvě královny",
//!   "dvě esa"; a jack and a queen are no pair. Perfect = same suit, coloured = same colour
//!   ("stejná barva páru a jiný symbol"), mixed = different colours;
//! - in 21+3 and Top 3 a straight ("tři po sobě jdoucí karty") may run A-2-3 or Q-K-A, not
//!   round the corner (K-A-2);
//! - in Hot 3 and Lucky Lucky a total is the hand value of the three cards by the plan's ace
//!   counting (A + A + 9 is 21);
//! - Hot 3's 7-7-7 is any three sevens (the document's example has three suits; three suited
//!   sevens are not paid less than three unsuited ones);
//! - Bust It and Buster count the dealer's cards in his finished hand, the first two included.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::hand::{is_natural_pair, TWENTY_ONE};
use super::settle::{lose, StakeSettlement};
use super::{code, BlackjackEngine};
use crate::cards::{Card, Rank};
use crate::games::Refusal;
use crate::plan::rules::blackjack::{PlayerBlackjackEffect, SideBet, SideBetCards};

/// The cards side bets are decided on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SideBetDeal {
    /// The player's first two cards (in a common-hand game the common first two cards).
    pub player_first_two: [Card; 2],
    /// The dealer's cards as far as dealt: his first card, his second, then those he drew.
    /// Bets on the dealer's finished hand need it finished.
    pub dealer: Vec<Card>,
}

impl SideBetDeal {
    /// The player's first two cards are a natural.
    pub fn player_blackjack(&self) -> bool {
        is_natural_pair(&self.player_first_two)
    }
}

/// A side bet's outcome class: an index into [`SideClass::NAMES`], the class names of the
/// family's vocabulary ([`crate::plan::rules::blackjack::BETS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SideClass(u8);

impl SideClass {
    /// Every class a side bet is paid on, by index.
    pub(super) const NAMES: [&'static str; 27] = [
        "perfect_pair",
        "coloured_pair",
        "mixed_pair",
        "suited_trips",
        "straight_flush",
        "three_of_a_kind",
        "straight",
        "flush",
        "seven_seven_seven",
        "suited_21",
        "unsuited_21",
        "total_20",
        "total_19",
        "suited_777",
        "suited_678",
        "unsuited_777",
        "unsuited_678",
        "any_20",
        "any_19",
        "bust_3_cards",
        "bust_4_cards",
        "bust_5_cards",
        "bust_6_cards",
        "bust_7_cards",
        "bust_8_plus_cards",
        "bust_3_or_4_cards",
        "player_blackjack",
    ];
    const PERFECT_PAIR: SideClass = SideClass(0);
    const COLOURED_PAIR: SideClass = SideClass(1);
    const MIXED_PAIR: SideClass = SideClass(2);
    const SUITED_TRIPS: SideClass = SideClass(3);
    const STRAIGHT_FLUSH: SideClass = SideClass(4);
    const THREE_OF_A_KIND: SideClass = SideClass(5);
    const STRAIGHT: SideClass = SideClass(6);
    const FLUSH: SideClass = SideClass(7);
    const SEVEN_SEVEN_SEVEN: SideClass = SideClass(8);
    const SUITED_21: SideClass = SideClass(9);
    const UNSUITED_21: SideClass = SideClass(10);
    const TOTAL_20: SideClass = SideClass(11);
    const TOTAL_19: SideClass = SideClass(12);
    const SUITED_777: SideClass = SideClass(13);
    const SUITED_678: SideClass = SideClass(14);
    const UNSUITED_777: SideClass = SideClass(15);
    const UNSUITED_678: SideClass = SideClass(16);
    const ANY_20: SideClass = SideClass(17);
    const ANY_19: SideClass = SideClass(18);
    /// `bust_3_cards` … `bust_7_cards` are `BUST_3 + (n − 3)`.
    const BUST_3: SideClass = SideClass(19);
    const BUST_8_PLUS: SideClass = SideClass(24);
    const BUST_3_OR_4: SideClass = SideClass(25);
    const PLAYER_BLACKJACK: SideClass = SideClass(26);

    pub(super) const COUNT: usize = SideClass::NAMES.len();

    pub(super) fn name(self) -> &'static str {
        SideClass::NAMES[self.index()]
    }

    pub(super) fn index(self) -> usize {
        usize::from(self.0)
    }
}

/// The pair class of two cards: `perfect_pair`, `coloured_pair`, `mixed_pair`, or none.
pub fn pair_class(a: Card, b: Card) -> Option<&'static str> {
    pair_class_of(a, b).map(SideClass::name)
}

fn pair_class_of(a: Card, b: Card) -> Option<SideClass> {
    if a.rank != b.rank {
        None
    } else if a.suit == b.suit {
        Some(SideClass::PERFECT_PAIR)
    } else if a.suit.is_red() == b.suit.is_red() {
        Some(SideClass::COLOURED_PAIR)
    } else {
        Some(SideClass::MIXED_PAIR)
    }
}

/// The three-card poker class of 21+3 and Top 3: `suited_trips`, `straight_flush`,
/// `three_of_a_kind`, `straight`, `flush`, or none.
pub fn poker3_class(cards: [Card; 3]) -> Option<&'static str> {
    poker3_class_of(cards).map(SideClass::name)
}

fn poker3_class_of(cards: [Card; 3]) -> Option<SideClass> {
    let suited = cards.iter().all(|c| c.suit == cards[0].suit);
    let trips = cards.iter().all(|c| c.rank == cards[0].rank);
    let mut n = cards.map(|c| c.rank.number());
    n.sort_unstable();
    // A-2-3: the ace counts low.
    let straight = (n[1] == n[0] + 1 && n[2] == n[1] + 1) || n == [2, 3, 14];
    match (trips, straight, suited) {
        (true, _, true) => Some(SideClass::SUITED_TRIPS),
        (_, true, true) => Some(SideClass::STRAIGHT_FLUSH),
        (true, _, false) => Some(SideClass::THREE_OF_A_KIND),
        (_, true, false) => Some(SideClass::STRAIGHT),
        (false, false, true) => Some(SideClass::FLUSH),
        (false, false, false) => None,
    }
}

/// The name of class `class` paid with the player's blackjack (`…_with_player_blackjack`).
pub(super) fn with_player_blackjack(class: &str) -> String {
    format!("{class}_with_player_blackjack")
}

impl<'p> BlackjackEngine<'p> {
    /// The class of side bet `id` on `deal`: the plan's outcome class it falls in, or `None`
    /// when it loses. Refuses a side bet the plan does not offer and a deal without the cards
    /// the bet is decided on.
    pub fn side_bet_outcome(
        &self,
        id: &str,
        deal: &SideBetDeal,
    ) -> Result<Option<String>, Refusal> {
        let sb = self.side_bet(id)?;
        let Some((class, enhanced)) =
            self.side_bet_class(sb, deal.player_first_two, &deal.dealer)?
        else {
            return Ok(None);
        };
        // "nejvyšší výhry jsou v kombinaci s blackjackem Sázejícího": the enhanced row where
        // the plan has one for this class.
        if enhanced {
            let enhanced = with_player_blackjack(class.name());
            if self.has_row(id, &enhanced) {
                return Ok(Some(enhanced));
            }
        }
        Ok(Some(class.name().to_string()))
    }

    /// The class of side bet `sb` on the player's first two cards and the dealer's cards, and
    /// whether its `…_with_player_blackjack` row applies where the plan has one; `None` when
    /// it loses. What [`BlackjackEngine::side_bet_outcome`] reads, and a prepared settlement
    /// ([`super::prepared`]) with it.
    pub(super) fn side_bet_class(
        &self,
        sb: &SideBet,
        player_first_two: [Card; 2],
        dealer: &[Card],
    ) -> Result<Option<(SideClass, bool)>, Refusal> {
        self.check_side_bet_cards(sb, dealer)?;
        let player_blackjack = is_natural_pair(&player_first_two);
        if sb.on_player_blackjack == PlayerBlackjackEffect::Refund && player_blackjack {
            // "Vedlejší sázka Bust It se vrací, pokud má sázející Blackjack."
            return Ok(Some((SideClass::PLAYER_BLACKJACK, false)));
        }
        let class = match sb.cards {
            SideBetCards::PlayerFirstTwo => {
                let [a, b] = player_first_two;
                pair_class_of(a, b)
            }
            SideBetCards::DealerFirstTwo => pair_class_of(dealer[0], dealer[1]),
            SideBetCards::PlayerFirstTwoAndDealerFirst => {
                let [a, b] = player_first_two;
                let three = [a, b, dealer[0]];
                match sb.id.as_str() {
                    "hot_3" => self.hot_3_class(three),
                    "lucky_lucky" => self.lucky_lucky_class(three),
                    _ => poker3_class_of(three),
                }
            }
            SideBetCards::DealerFinalHand => self.bust_class(&sb.id, dealer),
        };
        let enhanced =
            sb.on_player_blackjack == PlayerBlackjackEffect::EnhancedPayout && player_blackjack;
        Ok(class.map(|c| (c, enhanced)))
    }

    /// Settles side bet `id` of `stake_minor` on `deal` by the plan's row for its class; a
    /// class the plan does not pay loses.
    pub fn settle_side_bet(
        &self,
        id: &str,
        stake_minor: i64,
        deal: &SideBetDeal,
    ) -> Result<StakeSettlement, Refusal> {
        self.check_side_bet_stake(id, stake_minor)?;
        match self.side_bet_outcome(id, deal)? {
            Some(class) if self.has_row(id, &class) => self.pay(id, &class, stake_minor, None),
            _ => Ok(lose(id, stake_minor, None)),
        }
    }

    /// A side bet's stake is positive.
    pub(super) fn check_side_bet_stake(&self, id: &str, stake_minor: i64) -> Result<(), Refusal> {
        if stake_minor <= 0 {
            return Err(self.refuse(
                code::BAD_STAKE,
                format!("a side-bet stake of {stake_minor} minor units"),
                &self.side_bet(id)?.clause,
            ));
        }
        Ok(())
    }

    pub(super) fn side_bet(&self, id: &str) -> Result<&'p SideBet, Refusal> {
        self.rules
            .side_bets
            .iter()
            .find(|s| s.id == id)
            .ok_or_else(|| {
                let offered: Vec<&str> =
                    self.rules.side_bets.iter().map(|s| s.id.as_str()).collect();
                self.refuse(
                    code::NOT_OFFERED,
                    format!(
                        "{} offers no side bet '{id}'; it offers {}",
                        self.plan.key(),
                        if offered.is_empty() {
                            "none".to_string()
                        } else {
                            offered.join(", ")
                        }
                    ),
                    &self.rules.clause,
                )
            })
    }

    fn check_side_bet_cards(&self, sb: &SideBet, dealer: &[Card]) -> Result<(), Refusal> {
        let need = match sb.cards {
            SideBetCards::PlayerFirstTwo => return Ok(()),
            SideBetCards::PlayerFirstTwoAndDealerFirst => 1,
            SideBetCards::DealerFirstTwo => 2,
            SideBetCards::DealerFinalHand => return self.check_dealer_hand(dealer),
        };
        if dealer.len() < need {
            return Err(self.refuse(
                code::CARDS_MISSING,
                format!(
                    "{} is decided on the dealer's first {need} card(s); {} dealt",
                    sb.id,
                    dealer.len()
                ),
                &sb.clause,
            ));
        }
        Ok(())
    }

    /// Hot 3: "7-7-7", "Součet 21 karet v barvě", "Součet 21 karet různé barvy", "Součet 20",
    /// "Součet 19".
    fn hot_3_class(&self, three: [Card; 3]) -> Option<SideClass> {
        let suited = three.iter().all(|c| c.suit == three[0].suit);
        if three.iter().all(|c| c.rank == Rank::Seven) {
            return Some(SideClass::SEVEN_SEVEN_SEVEN);
        }
        match self.value(&three).total {
            TWENTY_ONE if suited => Some(SideClass::SUITED_21),
            TWENTY_ONE => Some(SideClass::UNSUITED_21),
            20 => Some(SideClass::TOTAL_20),
            19 => Some(SideClass::TOTAL_19),
            _ => None,
        }
    }

    /// Lucky Lucky: "777 v barvě", "678 v barvě", "777", "678", "21 v barvě", "21" (each
    /// "kromě výše uvedených"), "Jakákoliv 20", "Jakákoliv 19".
    fn lucky_lucky_class(&self, three: [Card; 3]) -> Option<SideClass> {
        let suited = three.iter().all(|c| c.suit == three[0].suit);
        let mut ranks = three.map(|c| c.rank);
        ranks.sort_unstable();
        let sevens = ranks == [Rank::Seven; 3];
        let six_seven_eight = ranks == [Rank::Six, Rank::Seven, Rank::Eight];
        match (sevens, six_seven_eight, suited) {
            (true, _, true) => return Some(SideClass::SUITED_777),
            (_, true, true) => return Some(SideClass::SUITED_678),
            (true, _, false) => return Some(SideClass::UNSUITED_777),
            (_, true, false) => return Some(SideClass::UNSUITED_678),
            _ => {}
        }
        match self.value(&three).total {
            TWENTY_ONE if suited => Some(SideClass::SUITED_21),
            TWENTY_ONE => Some(SideClass::UNSUITED_21),
            20 => Some(SideClass::ANY_20),
            19 => Some(SideClass::ANY_19),
            _ => None,
        }
    }

    /// Bust It and Buster: the dealer busts, classed by his number of cards in the bet's own
    /// classes (Bust It "přes limit se 3 kartami" … "s 8 a více kartami"; Buster "3 nebo 4
    /// karty" … "8+ karet").
    fn bust_class(&self, id: &str, dealer: &[Card]) -> Option<SideClass> {
        if !self.value(dealer).is_bust() {
            return None;
        }
        // Two cards never bust: a bust hand holds three cards or more.
        let class = match (id, dealer.len()) {
            (_, 8..) => SideClass::BUST_8_PLUS,
            ("buster", 3 | 4) => SideClass::BUST_3_OR_4,
            (_, n @ 3..=7) => SideClass(SideClass::BUST_3.0 + (n - 3) as u8),
            (_, _) => return None,
        };
        Some(class)
    }

    pub(super) fn has_row(&self, bet: &str, outcome: &str) -> bool {
        self.plan.payouts_for(bet).any(|p| p.outcome == outcome)
    }
}
