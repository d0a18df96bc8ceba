//! "Pravidla pro hru krupiéra": the dealer draws below the plan's `stand_on`, stands on it or
//! above, with the plan's rule for a soft `stand_on`; the hole card model (peek, revealed after
//! the players, none) and the dealer's blackjack.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::hand::{hard_value, is_natural_pair, is_ten_value, value_of_hard, HandValue};
use super::{code, BlackjackEngine};
use crate::cards::{Card, Rank};
use crate::games::Refusal;
use crate::plan::rules::blackjack::{HoleCard, PeekOn, Soft17};

/// What the dealer does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DealerAction {
    Draw,
    Stand,
}

impl<'p> BlackjackEngine<'p> {
    /// The dealer's next move on `cards` (his cards so far, first card first). Below two cards
    /// he takes his second card (with `hole_card = "none"` it comes after the players: "bankéř
    /// pouze jednu"). Then he draws below `dealer.stand_on`, and on a soft `stand_on` only
    /// where `soft_17 = "hit"` ("krupiér musí kartu eso vždy počítat s hodnotou 11 a další
    /// kartu tedy již vzít nesmí" is `stand`).
    #[inline]
    pub fn dealer_action(&self, cards: &[Card]) -> DealerAction {
        if cards.len() < 2 {
            return DealerAction::Draw;
        }
        self.dealer_action_on(self.value(cards))
    }

    /// [`BlackjackEngine::dealer_action`] on two cards or more that count `v`.
    #[inline]
    fn dealer_action_on(&self, v: HandValue) -> DealerAction {
        let d = &self.rules.dealer;
        let draws =
            v.total < d.stand_on || (v.total == d.stand_on && v.soft && d.soft_17 == Soft17::Hit);
        if draws && !v.is_bust() {
            DealerAction::Draw
        } else {
            DealerAction::Stand
        }
    }

    /// Whether the dealer's hand `cards` is a finished hand the rules could have made: every
    /// card after the second drawn when the rules said draw, and the rules saying stand at the
    /// end.
    pub fn check_dealer_hand(&self, cards: &[Card]) -> Result<(), Refusal> {
        let clause = &self.rules.dealer.clause;
        // The value of each first `n` cards, card by card.
        let (mut hard, mut has_ace) = (0u8, false);
        for n in 0..cards.len() {
            let v = value_of_hard(hard, has_ace, self.rules.ace_counting);
            hard = hard.saturating_add(hard_value(cards[n]));
            has_ace |= cards[n].rank == Rank::Ace;
            if n >= 2 && self.dealer_action_on(v) == DealerAction::Stand {
                return Err(self.refuse(
                    code::DEALER_HAND_INVALID,
                    format!(
                        "the dealer stands on {} and may not draw {}",
                        self.cards_label(&cards[..n]),
                        cards[n]
                    ),
                    clause,
                ));
            }
        }
        let finished = cards.len() >= 2
            && self.dealer_action_on(value_of_hard(hard, has_ace, self.rules.ace_counting))
                == DealerAction::Stand;
        if !finished {
            return Err(self.refuse(
                code::DEALER_HAND_INVALID,
                format!(
                    "the dealer's hand {} is not finished: he must draw",
                    self.cards_label(cards)
                ),
                clause,
            ));
        }
        Ok(())
    }

    /// The dealer's blackjack: a natural on his first two cards (with `hole_card = "none"`,
    /// the first card and the first drawn after the players). `cards` is his finished hand or
    /// at least its first two cards.
    #[inline]
    pub fn dealer_has_blackjack(&self, cards: &[Card]) -> bool {
        cards.len() >= 2 && is_natural_pair(&cards[..2])
    }

    /// Whether the dealer looks at his hole card for a blackjack before the players act: a
    /// peeking dealer (`hole_card = "peek"`) whose up card is in `peek_on`. A blackjack found
    /// then ends the round before any double, split or surrender ("Dealer peeks for
    /// blackjack (US)").
    #[inline]
    pub fn dealer_peeks(&self, up: Card) -> bool {
        let d = &self.rules.dealer;
        d.hole_card == HoleCard::Peek
            && match d.peek_on {
                Some(PeekOn::Ace) => up.rank == Rank::Ace,
                Some(PeekOn::AceOrTen) => up.rank == Rank::Ace || is_ten_value(up),
                None => false,
            }
    }

    /// Whether the round ended at the peek: the dealer peeked on `dealer[0]` and holds a
    /// blackjack, so no player's hand was played.
    #[inline]
    pub fn ended_at_peek(&self, dealer: &[Card]) -> bool {
        dealer
            .first()
            .is_some_and(|&up| self.dealer_peeks(up) && self.dealer_has_blackjack(dealer))
    }

    /// Cards the dealer holds in the first pass: two with a hole card, one without ("bankéř
    /// pouze jednu").
    #[inline]
    pub fn dealer_first_pass_cards(&self) -> usize {
        match self.rules.dealer.hole_card {
            HoleCard::Peek | HoleCard::RevealedAfterPlayers => 2,
            HoleCard::None => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    fn engine_of(p: &crate::plan::model::Plan) -> BlackjackEngine<'_> {
        BlackjackEngine::new(p).unwrap()
    }

    #[test]
    fn dealer_draws_on_16_and_stands_on_17() {
        for id in PLANS {
            let p = plan(id);
            let e = engine_of(&p);
            assert_eq!(e.dealer_action(&cards("Tc 6d")), DealerAction::Draw, "{id}");
            assert_eq!(
                e.dealer_action(&cards("Tc 7d")),
                DealerAction::Stand,
                "{id}"
            );
            assert_eq!(
                e.dealer_action(&cards("Tc 6d 5h")),
                DealerAction::Stand,
                "{id}"
            );
            assert_eq!(
                e.dealer_action(&cards("Tc 6d 9h")),
                DealerAction::Stand,
                "{id}"
            );
        }
    }

    #[test]
    fn dealer_stands_on_soft_17_in_evolution() {
        let p = plan("evolution-blackjack");
        let e = engine_of(&p);
        assert_eq!(e.dealer_action(&cards("Ac 6d")), DealerAction::Stand);
        assert_eq!(e.dealer_action(&cards("Ac 2d 4h")), DealerAction::Stand);
        // A soft 16 draws; a hard 17 made of an ace counted 1 stands.
        assert_eq!(e.dealer_action(&cards("Ac 5d")), DealerAction::Draw);
        assert_eq!(e.dealer_action(&cards("Ac 6d Th")), DealerAction::Stand);
    }

    #[test]
    fn dealer_hits_soft_17_in_single_deck() {
        let p = plan("single-deck-blackjack");
        let e = engine_of(&p);
        assert_eq!(e.dealer_action(&cards("Ac 6d")), DealerAction::Draw);
        assert_eq!(e.dealer_action(&cards("Ac 3d 3h")), DealerAction::Draw);
        // Soft 18 and hard 17 stand.
        assert_eq!(e.dealer_action(&cards("Ac 7d")), DealerAction::Stand);
        assert_eq!(e.dealer_action(&cards("Ac 6d Th")), DealerAction::Stand);
        e.check_dealer_hand(&cards("Ac 6d 2h")).unwrap();
        let r = e.check_dealer_hand(&cards("Ac 6d")).unwrap_err();
        assert_eq!(r.code, code::DEALER_HAND_INVALID);
    }

    #[test]
    fn a_dealer_hand_that_breaks_the_drawing_rule_is_refused() {
        let p = plan("evolution-blackjack");
        let e = engine_of(&p);
        e.check_dealer_hand(&cards("Tc 6d 5h")).unwrap();
        e.check_dealer_hand(&cards("Tc 6d 9h")).unwrap();
        e.check_dealer_hand(&cards("Ac 6d")).unwrap();
        for bad in ["Tc 7d 2h", "Tc 6d", "Ac 6d 2h", "Tc 6d Th 2c"] {
            let r = e.check_dealer_hand(&cards(bad)).unwrap_err();
            assert_eq!(r.code, code::DEALER_HAND_INVALID, "{bad}");
            assert_eq!(r.clause.as_deref(), Some(e.rules().dealer.clause.as_str()));
        }
    }

    #[test]
    fn czech_dealer_takes_one_card_in_the_first_pass_and_draws_his_second_after_the_players() {
        let p = plan("czech-blackjack");
        let e = engine_of(&p);
        assert_eq!(e.dealer_first_pass_cards(), 1);
        assert_eq!(e.dealer_action(&cards("Ac")), DealerAction::Draw);
        // The first card drawn after the players makes a blackjack with the first.
        assert!(e.dealer_has_blackjack(&cards("Ac Kd")));
        assert!(!e.dealer_has_blackjack(&cards("Ac 5d 5h")));
        assert!(!e.dealer_peeks(card("Ac")));
        let p = plan("evolution-blackjack");
        assert_eq!(engine_of(&p).dealer_first_pass_cards(), 2);
    }

    #[test]
    fn single_deck_dealer_peeks_on_an_ace_or_a_ten_only() {
        let p = plan("single-deck-blackjack");
        let e = engine_of(&p);
        for up in ["Ac", "Tc", "Jd", "Qh", "Ks"] {
            assert!(e.dealer_peeks(card(up)), "{up}");
        }
        for up in ["9c", "2d", "5h"] {
            assert!(!e.dealer_peeks(card(up)), "{up}");
        }
        assert!(e.ended_at_peek(&cards("Kc Ad")));
        assert!(!e.ended_at_peek(&cards("Kc 9d")));
        let p = plan("evolution-blackjack");
        let e = engine_of(&p);
        assert!(!e.dealer_peeks(card("Ac")));
        assert!(!e.ended_at_peek(&cards("Kc Ad")));
    }
}
