//! RNG mode: a whole shoe shuffled from a committed 32-byte seed, dealt from the top, by the
//! one documented shuffle of [`crate::rng`] (forward Fisher–Yates over ChaCha20 with rejection
//! sampling).

//!
//! A round takes a dozen cards or so of a shoe of up to 416, so [`LazyShoe`] deals the same
//! shuffle step by step: card `i` is final after step `i` of the forward Fisher–Yates, so
//! dealing the first `k` cards needs only the first `k` steps (and the same ChaCha20 words).
//! [`crate::rng::ShoeShuffle`] does the same for baccarat but holds at most eight cards; a
//! blackjack round has no such bound.

use rand_chacha::ChaCha20Rng;

use crate::cards::{Card, Shoe};
use crate::rng::uniform_below;

/// The plan's shoe shuffled from `seed` ([`crate::rng::shuffled`]), first card dealt first.
pub fn shuffled_shoe(shoe: Shoe, seed: [u8; 32]) -> Vec<Card> {
    crate::rng::shuffled(shoe, seed)
}

/// [`shuffled_shoe`] dealt one card at a time: the `k` first cards of the full shuffle after
/// `k` steps, drawing the same words from the stream (see the module documentation).
#[derive(Debug, Clone)]
pub struct LazyShoe {
    /// One deck in canonical order; position `p` of the unshuffled shoe holds `deck[p % 52]`.
    deck: Vec<Card>,
    /// Cards in the full shoe.
    len: u32,
    /// The next position to deal.
    step: u32,
    /// (position, canonical position now there) for the positions at or after `step` that a
    /// swap has written; every other position still holds its own card.
    moved: Vec<(u32, u32)>,
}

impl LazyShoe {
    pub fn new(shoe: Shoe) -> LazyShoe {
        let deck = shoe.deck.cards();
        let len =
            u32::try_from(shoe.total_cards()).expect("a blackjack shoe holds at most 416 cards");
        LazyShoe {
            deck,
            len,
            step: 0,
            moved: Vec::new(),
        }
    }

    /// Starts a new shuffle of the full shoe.
    pub fn restart(&mut self) {
        self.step = 0;
        self.moved.clear();
    }

    /// Cards dealt since the shuffle began.
    pub fn dealt(&self) -> u32 {
        self.step
    }

    /// The next card, drawing step `i` of the shuffle from `rng`; `None` when the shoe is
    /// dealt out. The last card takes no draw (the whole shuffle makes `N − 1` steps).
    pub fn next_card(&mut self, rng: &mut ChaCha20Rng) -> Option<Card> {
        let i = self.step;
        if i >= self.len {
            return None;
        }
        let j = if i + 1 == self.len {
            i
        } else {
            i + uniform_below(rng, self.len - i)
        };
        let at = |moved: &[(u32, u32)], p: u32| {
            moved.iter().find(|(q, _)| *q == p).map_or(p, |&(_, v)| v)
        };
        let drawn = at(&self.moved, j);
        // Position j now holds what was at i; position i is final and never read again.
        if j != i {
            let was_i = at(&self.moved, i);
            match self.moved.iter_mut().find(|(q, _)| *q == j) {
                Some(slot) => slot.1 = was_i,
                None => self.moved.push((j, was_i)),
            }
        }
        if let Some(k) = self.moved.iter().position(|(q, _)| *q == i) {
            self.moved.swap_remove(k);
        }
        self.step += 1;
        Some(self.deck[drawn as usize % self.deck.len()])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cards::DeckKind;

    #[test]
    fn a_shuffled_shoe_holds_every_card_of_the_plans_shoe_once_per_deck() {
        let shoe = Shoe::new(DeckKind::Standard52, 8);
        let cards = shuffled_shoe(shoe, [7; 32]);
        assert_eq!(cards.len(), 416);
        let mut counts = [0u8; 52];
        for c in &cards {
            counts[c.index()] += 1;
        }
        assert!(counts.iter().all(|&n| n == 8));
    }

    #[test]
    fn the_same_seed_deals_the_same_shoe_and_another_seed_another() {
        let shoe = Shoe::new(DeckKind::Standard52, 1);
        assert_eq!(shuffled_shoe(shoe, [1; 32]), shuffled_shoe(shoe, [1; 32]));
        assert_ne!(shuffled_shoe(shoe, [1; 32]), shuffled_shoe(shoe, [2; 32]));
        assert_ne!(shuffled_shoe(shoe, [1; 32]), DeckKind::Standard52.cards());
    }

    #[test]
    fn the_lazy_shoe_deals_the_whole_shuffle_card_for_card() {
        for (decks, seeds) in [(1u8, 0..40u8), (8, 0..4)] {
            let shoe = Shoe::new(DeckKind::Standard52, decks);
            let mut lazy = LazyShoe::new(shoe);
            for s in seeds {
                let whole = shuffled_shoe(shoe, [s; 32]);
                let mut rng = crate::rng::stream([s; 32]);
                lazy.restart();
                let dealt: Vec<Card> = std::iter::from_fn(|| lazy.next_card(&mut rng)).collect();
                assert_eq!(dealt, whole, "{decks} decks, seed {s}");
            }
        }
    }

    #[test]
    fn the_shuffle_is_pinned_for_auditors() {
        // Re-derived independently from the documented algorithm with Python's `cryptography`
        // ChaCha20 (key = seed, 16-byte all-zero counter and nonce, little-endian words) by
        // tests/reference/rng_reference.py: any change to the algorithm changes these cards.
        let shoe = Shoe::new(DeckKind::Standard52, 1);
        let top: Vec<String> = shuffled_shoe(shoe, [0; 32])
            .iter()
            .take(5)
            .map(Card::to_string)
            .collect();
        assert_eq!(top, ["3h", "Kh", "3c", "2h", "Td"]);
    }

    #[test]
    fn every_position_of_a_single_deck_is_reached_by_each_card() {
        // Over 2 000 seeds each card lands in the top position about 38 times; a biased or
        // broken shuffle leaves some card there never.
        let shoe = Shoe::new(DeckKind::Standard52, 1);
        let mut seen = [0u32; 52];
        for s in 0..2_000u32 {
            let mut seed = [0u8; 32];
            seed[..4].copy_from_slice(&s.to_le_bytes());
            seen[shuffled_shoe(shoe, seed)[0].index()] += 1;
        }
        assert!(seen.iter().all(|&n| n > 10), "{seen:?}");
    }
}
