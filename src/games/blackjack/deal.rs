//! The first pass of the deal and what a live shoe can hold.
//!
//! The documents say who gets cards in the first pass ("krupiér všem zúčastněným (sázejícím a
//! krupiérovi) rozdá dvě karty"; 003 "každý hráč obdrží dvě karty a bankéř pouze jednu") but
//! not in which order. The engine uses the usual order, which no plan states yet: one card to
//! each box with a bet in box order (box 1 first, the dealer's left), one to the dealer (his
//! up card), a second to each box, then the dealer's hole card where he has one. A common
//! hand is one box.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{code, BlackjackEngine};
use crate::cards::Card;
use crate::games::Refusal;
use crate::plan::rules::blackjack::{BlackjackPaid, SeatingModel};

/// Where card `i` of the first pass goes, by position: [`BlackjackEngine::first_pass_slot`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FirstPassSlot {
    /// The `k`-th hand dealt to (the `k`-th box with a bet, or the common hand).
    Hand(usize),
    Dealer,
}

/// Who a card of the first pass goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "to", content = "box", rename_all = "snake_case")]
pub enum DealTo {
    /// A box, numbered from 1.
    Box(u8),
    /// The one hand of a common-hand game.
    CommonHand,
    Dealer,
}

impl<'p> BlackjackEngine<'p> {
    /// The first pass for the boxes that hold a bet (`boxes`, ascending, each 1 … the plan's
    /// `seating.seats`); for a common-hand game `boxes` is empty. See the module documentation
    /// for the order.
    pub fn first_pass(&self, boxes: &[u8]) -> Result<Vec<DealTo>, Refusal> {
        let s = &self.rules.seating;
        let hands: Vec<DealTo> = match s.model {
            SeatingModel::CommonHand => {
                if !boxes.is_empty() {
                    return Err(self.refuse(
                        code::PLAY_INVALID,
                        "a common-hand game has no boxes: everyone plays the one hand",
                        &s.clause,
                    ));
                }
                vec![DealTo::CommonHand]
            }
            SeatingModel::Seats => {
                self.check_boxes(boxes.iter().copied())?;
                boxes.iter().map(|&b| DealTo::Box(b)).collect()
            }
        };
        Ok((0..)
            .map_while(|i| self.first_pass_slot(hands.len(), i))
            .map(|slot| match slot {
                FirstPassSlot::Hand(k) => hands[k],
                FirstPassSlot::Dealer => DealTo::Dealer,
            })
            .collect())
    }

    /// The boxes of a seated round: at least one, each 1 … the plan's `seating.seats`, in
    /// ascending order (so each once).
    pub fn check_boxes(&self, boxes: impl Iterator<Item = u8> + Clone) -> Result<(), Refusal> {
        let s = &self.rules.seating;
        let seats = s.seats.unwrap_or(0);
        let mut previous = 0;
        let mut any = false;
        let ok = boxes.clone().all(|b| {
            let fits = b > previous && b <= seats;
            previous = b;
            any = true;
            fits
        });
        if ok && any {
            return Ok(());
        }
        let boxes: Vec<u8> = boxes.collect();
        Err(self.refuse(
            code::PLAY_INVALID,
            format!("boxes {boxes:?}: a round is dealt to distinct boxes 1 to {seats}, in order"),
            &s.clause,
        ))
    }

    /// Card `i` (from 0) of a first pass to `hands` hands, in the order of
    /// [`BlackjackEngine::first_pass`]; `None` past its last card.
    #[inline]
    pub fn first_pass_slot(&self, hands: usize, i: usize) -> Option<FirstPassSlot> {
        let slot = match i {
            i if i < hands => FirstPassSlot::Hand(i),
            i if i == hands => FirstPassSlot::Dealer,
            i if i <= 2 * hands => FirstPassSlot::Hand(i - hands - 1),
            i if i == 2 * hands + 1 && self.dealer_first_pass_cards() == 2 => FirstPassSlot::Dealer,
            _ => return None,
        };
        Some(slot)
    }

    /// Whether `cards` (every card seen since the shoe was last shuffled) could all come out
    /// of the plan's shoe: no card more often than its decks hold it. A live card beyond that
    /// is a misdeal or a foreign card.
    pub fn check_cards_fit_shoe(&self, cards: &[Card]) -> Result<(), Refusal> {
        let mut seen = [0usize; 52];
        for &c in cards {
            seen[c.index()] += 1;
            self.check_copies(c, seen[c.index()])?;
        }
        Ok(())
    }

    /// Whether `card` can come out of the plan's shoe after `seen` (every card seen since the
    /// shoe was last shuffled, all of which fit): [`BlackjackEngine::check_cards_fit_shoe`] for
    /// one more card.
    #[inline]
    pub fn check_card_fits_shoe(&self, seen: &[Card], card: Card) -> Result<(), Refusal> {
        // Fewer cards seen than the shoe's copies of this one: it fits whatever they are.
        if seen.len() < usize::from(self.rules.shoe.copies_of(card)) {
            return Ok(());
        }
        // Cards compared as one 16-bit word each (rank and suit), which the compiler counts
        // without a branch per card.
        let key = |c: &Card| u16::from_le_bytes([c.rank as u8, c.suit as u8]);
        let card_key = key(&card);
        let times = seen.iter().filter(|c| key(c) == card_key).count();
        self.check_copies(card, 1 + times)
    }

    /// `card` seen `times` since the shuffle: no more often than the plan's decks hold it.
    #[inline]
    fn check_copies(&self, card: Card, times: usize) -> Result<(), Refusal> {
        if times <= usize::from(self.rules.shoe.copies_of(card)) {
            return Ok(());
        }
        Err(self.too_many_copies(card, times))
    }

    #[cold]
    fn too_many_copies(&self, card: Card, times: usize) -> Refusal {
        let shoe = self.rules.shoe;
        self.refuse(
            code::CARD_NOT_IN_SHOE,
            format!(
                "{card} seen {times} times since the shuffle; a shoe of {} decks holds it {} times",
                shoe.decks,
                shoe.copies_of(card)
            ),
            &self.rules.clause,
        )
    }

    /// Whether a player's blackjack is paid as soon as it is dealt, before the dealer plays:
    /// only where the plan says so (`player_blackjack_paid = "immediately"`, 001) and the
    /// dealer's up card `up` cannot hide a blackjack any more (he peeked, or it is neither an
    /// ace nor a ten-value card). Otherwise it is paid when the dealer's hand is done.
    pub fn blackjack_paid_before_dealer_plays(&self, up: Card) -> bool {
        self.rules.blackjack.player_blackjack_paid == BlackjackPaid::Immediately
            && (self.dealer_peeks(up)
                || !(up.rank == crate::cards::Rank::Ace || super::hand::is_ten_value(up)))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    #[test]
    fn seated_first_pass_gives_each_box_two_cards_and_the_dealer_an_up_and_a_hole_card() {
        let p = plan("evolution-blackjack");
        let e = BlackjackEngine::new(&p).unwrap();
        use DealTo::*;
        assert_eq!(
            e.first_pass(&[2, 5]).unwrap(),
            vec![Box(2), Box(5), Dealer, Box(2), Box(5), Dealer]
        );
        for bad in [&[][..], &[0], &[8], &[5, 2], &[3, 3]] {
            assert_eq!(
                e.first_pass(bad).unwrap_err().code,
                code::PLAY_INVALID,
                "{bad:?}"
            );
        }
    }

    #[test]
    fn czech_dealer_gets_one_card_in_the_first_pass() {
        // "Na začátku hry tedy každý hráč obdrží dvě karty a bankéř pouze jednu".
        let p = plan("czech-blackjack");
        let e = BlackjackEngine::new(&p).unwrap();
        use DealTo::*;
        assert_eq!(
            e.first_pass(&[1, 6]).unwrap(),
            vec![Box(1), Box(6), Dealer, Box(1), Box(6)]
        );
        assert!(e.first_pass(&[7]).is_err());
    }

    #[test]
    fn common_hand_first_pass_deals_the_one_hand() {
        let p = plan("evolution-infinite-blackjack");
        let e = BlackjackEngine::new(&p).unwrap();
        use DealTo::*;
        assert_eq!(
            e.first_pass(&[]).unwrap(),
            vec![CommonHand, Dealer, CommonHand, Dealer]
        );
        assert!(e.first_pass(&[1]).is_err());
    }

    #[test]
    fn a_card_the_shoe_cannot_hold_is_refused() {
        let p = plan("single-deck-blackjack");
        let e = BlackjackEngine::new(&p).unwrap();
        e.check_cards_fit_shoe(&cards("Ac Kd 7h")).unwrap();
        let r = e.check_cards_fit_shoe(&cards("Ac Kd Ac")).unwrap_err();
        assert_eq!(r.code, code::CARD_NOT_IN_SHOE);
        let p = plan("evolution-blackjack");
        let e = BlackjackEngine::new(&p).unwrap();
        e.check_cards_fit_shoe(&cards("Ac Ac Ac Ac Ac Ac Ac Ac"))
            .unwrap();
        assert!(e
            .check_cards_fit_shoe(&cards("Ac Ac Ac Ac Ac Ac Ac Ac Ac"))
            .is_err());
    }

    #[test]
    fn single_deck_pays_a_blackjack_immediately_once_no_dealer_blackjack_can_follow() {
        // "the player is paid out immediately. The hand ties if dealer also has a natural."
        let p = plan("single-deck-blackjack");
        let e = BlackjackEngine::new(&p).unwrap();
        for up in ["Ac", "Kd", "9h", "2c"] {
            assert!(e.blackjack_paid_before_dealer_plays(card(up)), "{up}");
        }
        let p = plan("evolution-blackjack");
        let e = BlackjackEngine::new(&p).unwrap();
        assert!(!e.blackjack_paid_before_dealer_plays(card("9h")));
    }
}
