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

    /// The three cards of 21+3, Top 3, Hot 3 and Lucky Lucky.
    fn three(&self) -> Option<[Card; 3]> {
        let [a, b] = self.player_first_two;
        self.dealer.first().map(|&d| [a, b, d])
    }
}

/// The pair class of two cards: `perfect_pair`, `coloured_pair`, `mixed_pair`, or none.
pub fn pair_class(a: Card, b: Card) -> Option<&'static str> {
    if a.rank != b.rank {
        None
    } else if a.suit == b.suit {
        Some("perfect_pair")
    } else if a.suit.is_red() == b.suit.is_red() {
        Some("coloured_pair")
    } else {
        Some("mixed_pair")
    }
}

/// The three-card poker class of 21+3 and Top 3: `suited_trips`, `straight_flush`,
/// `three_of_a_kind`, `straight`, `flush`, or none.
pub fn poker3_class(cards: [Card; 3]) -> Option<&'static str> {
    let suited = cards.iter().all(|c| c.suit == cards[0].suit);
    let trips = cards.iter().all(|c| c.rank == cards[0].rank);
    let mut n = cards.map(|c| c.rank.number());
    n.sort_unstable();
    // A-2-3: the ace counts low.
    let straight = (n[1] == n[0] + 1 && n[2] == n[1] + 1) || n == [2, 3, 14];
    match (trips, straight, suited) {
        (true, _, true) => Some("suited_trips"),
        (_, true, true) => Some("straight_flush"),
        (true, _, false) => Some("three_of_a_kind"),
        (_, true, false) => Some("straight"),
        (false, false, true) => Some("flush"),
        (false, false, false) => None,
    }
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
        self.check_side_bet_cards(sb, deal)?;
        if sb.on_player_blackjack == PlayerBlackjackEffect::Refund && deal.player_blackjack() {
            // "Vedlejší sázka Bust It se vrací, pokud má sázející Blackjack."
            return Ok(Some("player_blackjack".into()));
        }
        let class = match sb.cards {
            SideBetCards::PlayerFirstTwo => {
                let [a, b] = deal.player_first_two;
                pair_class(a, b).map(str::to_string)
            }
            SideBetCards::DealerFirstTwo => {
                pair_class(deal.dealer[0], deal.dealer[1]).map(str::to_string)
            }
            SideBetCards::PlayerFirstTwoAndDealerFirst => {
                let three = deal
                    .three()
                    .expect("checked: the dealer's first card is dealt");
                match id {
                    "hot_3" => self.hot_3_class(three),
                    "lucky_lucky" => self.lucky_lucky_class(three),
                    _ => poker3_class(three),
                }
                .map(str::to_string)
            }
            SideBetCards::DealerFinalHand => self.bust_class(id, &deal.dealer),
        };
        let Some(class) = class else {
            return Ok(None);
        };
        // "nejvyšší výhry jsou v kombinaci s blackjackem Sázejícího": the enhanced row where
        // the plan has one for this class.
        if sb.on_player_blackjack == PlayerBlackjackEffect::EnhancedPayout
            && deal.player_blackjack()
        {
            let enhanced = format!("{class}_with_player_blackjack");
            if self.has_row(id, &enhanced) {
                return Ok(Some(enhanced));
            }
        }
        Ok(Some(class))
    }

    /// Settles side bet `id` of `stake_minor` on `deal` by the plan's row for its class; a
    /// class the plan does not pay loses.
    pub fn settle_side_bet(
        &self,
        id: &str,
        stake_minor: i64,
        deal: &SideBetDeal,
    ) -> Result<StakeSettlement, Refusal> {
        if stake_minor <= 0 {
            return Err(self.refuse(
                code::BAD_STAKE,
                format!("a side-bet stake of {stake_minor} minor units"),
                &self.side_bet(id)?.clause,
            ));
        }
        match self.side_bet_outcome(id, deal)? {
            Some(class) if self.has_row(id, &class) => self.pay(id, &class, stake_minor, None),
            _ => Ok(lose(id, stake_minor, None)),
        }
    }

    fn side_bet(&self, id: &str) -> Result<&'p SideBet, Refusal> {
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

    fn check_side_bet_cards(&self, sb: &SideBet, deal: &SideBetDeal) -> Result<(), Refusal> {
        let need = match sb.cards {
            SideBetCards::PlayerFirstTwo => return Ok(()),
            SideBetCards::PlayerFirstTwoAndDealerFirst => 1,
            SideBetCards::DealerFirstTwo => 2,
            SideBetCards::DealerFinalHand => return self.check_dealer_hand(&deal.dealer),
        };
        if deal.dealer.len() < need {
            return Err(self.refuse(
                code::CARDS_MISSING,
                format!(
                    "{} is decided on the dealer's first {need} card(s); {} dealt",
                    sb.id,
                    deal.dealer.len()
                ),
                &sb.clause,
            ));
        }
        Ok(())
    }

    /// Hot 3: "7-7-7", "Součet 21 karet v barvě", "Součet 21 karet různé barvy", "Součet 20",
    /// "Součet 19".
    fn hot_3_class(&self, three: [Card; 3]) -> Option<&'static str> {
        let suited = three.iter().all(|c| c.suit == three[0].suit);
        if three.iter().all(|c| c.rank == Rank::Seven) {
            return Some("seven_seven_seven");
        }
        match self.value(&three).total {
            TWENTY_ONE if suited => Some("suited_21"),
            TWENTY_ONE => Some("unsuited_21"),
            20 => Some("total_20"),
            19 => Some("total_19"),
            _ => None,
        }
    }

    /// Lucky Lucky: "777 v barvě", "678 v barvě", "777", "678", "21 v barvě", "21" (each
    /// "kromě výše uvedených"), "Jakákoliv 20", "Jakákoliv 19".
    fn lucky_lucky_class(&self, three: [Card; 3]) -> Option<&'static str> {
        let suited = three.iter().all(|c| c.suit == three[0].suit);
        let mut ranks = three.map(|c| c.rank);
        ranks.sort_unstable();
        let sevens = ranks == [Rank::Seven; 3];
        let six_seven_eight = ranks == [Rank::Six, Rank::Seven, Rank::Eight];
        match (sevens, six_seven_eight, suited) {
            (true, _, true) => return Some("suited_777"),
            (_, true, true) => return Some("suited_678"),
            (true, _, false) => return Some("unsuited_777"),
            (_, true, false) => return Some("unsuited_678"),
            _ => {}
        }
        match self.value(&three).total {
            TWENTY_ONE if suited => Some("suited_21"),
            TWENTY_ONE => Some("unsuited_21"),
            20 => Some("any_20"),
            19 => Some("any_19"),
            _ => None,
        }
    }

    /// Bust It and Buster: the dealer busts, classed by his number of cards in the bet's own
    /// classes (Bust It "přes limit se 3 kartami" … "s 8 a více kartami"; Buster "3 nebo 4
    /// karty" … "8+ karet").
    fn bust_class(&self, id: &str, dealer: &[Card]) -> Option<String> {
        if !self.value(dealer).is_bust() {
            return None;
        }
        let n = dealer.len();
        let class = match (id, n) {
            (_, 8..) => "bust_8_plus_cards".to_string(),
            ("buster", 3 | 4) => "bust_3_or_4_cards".to_string(),
            (_, n) => format!("bust_{n}_cards"),
        };
        Some(class)
    }

    fn has_row(&self, bet: &str, outcome: &str) -> bool {
        self.plan.payouts_for(bet).any(|p| p.outcome == outcome)
    }
}
