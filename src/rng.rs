//! Randomness for RNG mode, in one place and one documented algorithm each, so that an auditor
//! re-derives every result from a revealed seed with any ChaCha20 implementation.
//!
//! **Uniform draw** ([`uniform_below`]): from `rand_chacha::ChaCha20Rng::from_seed(seed)`,
//! 32-bit words `x` taken in order (`RngCore::next_u32`); for a bound `m ≥ 1`, a word is
//! rejected when `x ≥ ⌊(2³² − 1) / m⌋ · m` (the incomplete top zone), else the draw is
//! `x mod m`. Unbiased.
//!
//! **Roulette** ([`draw_pocket`]): the first accepted draw below the number of pockets.
//!
//! **Shuffled shoe** ([`shuffled`], [`ShoeShuffle`]): the shoe laid out deck by deck, each deck
//! in rank then suit order (`2c 2d 2h 2s 3c … As`, [`crate::cards::DeckKind::cards`]); then
//! forward Fisher–Yates: for step `i = 0, 1, …, N − 2` draw `r = uniform_below(N − i)` and swap
//! positions `i` and `i + r`. Cards are dealt from position 0 upward, so card `i` is final after
//! step `i`: an engine that needs only the first `k` cards ([`ShoeShuffle`]) deals exactly the
//! first `k` cards of the full shuffle.
//!
//! `tests/reference/rng_reference.py` re-derives the shuffle and the draw with Python's
//! `cryptography` ChaCha20, independently of this code; its output is pinned in the tests.
//!
//! Nothing here reads a clock or the operating system's random source: the seed is an input
//! (drawn by the service and committed in the log before any bet).

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

use crate::cards::{Card, Rank, Shoe, Suit};

/// A ChaCha20 stream from a 32-byte seed.
pub fn stream(seed: [u8; 32]) -> ChaCha20Rng {
    ChaCha20Rng::from_seed(seed)
}

/// Uniform in `0..m` (`m ≥ 1`) from 32-bit ChaCha20 words: reject `x ≥ ⌊(2³² − 1) / m⌋ · m`,
/// else `x mod m`.
pub fn uniform_below(rng: &mut ChaCha20Rng, m: u32) -> u32 {
    debug_assert!(m >= 1, "a draw needs at least one outcome");
    let zone = (u32::MAX / m) * m;
    loop {
        let x = rng.next_u32();
        if x < zone {
            return x % m;
        }
    }
}

/// [`uniform_below`] for one bound used many times: the rejection zone and a reciprocal of `m`
/// computed once, so that a draw costs no division. Draws exactly what `uniform_below(rng, m)`
/// draws from the same stream (the same words rejected, the same `x mod m`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UniformBelow {
    m: u32,
    zone: u32,
    /// `⌊(2⁶⁴ − 1) / m⌋ + 1` (mod 2⁶⁴), for [`UniformBelow::reduce`].
    reciprocal: u64,
}

impl UniformBelow {
    /// The draw below `m`; `m ≥ 1`.
    pub fn new(m: u32) -> UniformBelow {
        assert!(m >= 1, "a draw needs at least one outcome");
        UniformBelow {
            m,
            zone: (u32::MAX / m) * m,
            reciprocal: (u64::MAX / u64::from(m)).wrapping_add(1),
        }
    }

    pub fn bound(&self) -> u32 {
        self.m
    }

    /// The next draw: reject `x ≥ zone`, else `x mod m`.
    #[inline]
    pub fn sample(&self, rng: &mut ChaCha20Rng) -> u32 {
        loop {
            let x = rng.next_u32();
            if x < self.zone {
                return self.reduce(x);
            }
        }
    }

    /// `x mod m` without a division, by Lemire, Kaser and Kurz's direct remainder ("Faster
    /// remainder by direct computation", 2019): exact for every 32-bit `x` and `m ≥ 1`.
    #[inline]
    pub fn reduce(&self, x: u32) -> u32 {
        let low = self.reciprocal.wrapping_mul(u64::from(x));
        ((u128::from(low) * u128::from(self.m)) >> 64) as u32
    }
}

/// A roulette number (or any of `pockets` outcomes) from a seed: the first draw of the stream.
pub fn draw_pocket(seed: [u8; 32], pockets: u32) -> u32 {
    uniform_below(&mut stream(seed), pockets)
}

/// The whole shoe shuffled from `seed` by forward Fisher–Yates (see the module
/// documentation), first card dealt first.
pub fn shuffled(shoe: Shoe, seed: [u8; 32]) -> Vec<Card> {
    let mut cards: Vec<Card> = (0..shoe.decks).flat_map(|_| shoe.deck.cards()).collect();
    let mut rng = stream(seed);
    let n = cards.len();
    for i in 0..n.saturating_sub(1) {
        let m = u32::try_from(n - i).expect("a shoe holds far fewer than 2^32 cards");
        let j = i + uniform_below(&mut rng, m) as usize;
        cards.swap(i, j);
    }
    cards
}

/// A full shoe shuffled lazily by forward Fisher–Yates from a ChaCha20 stream, holding only the
/// positions the steps so far have swapped: the first `k` cards cost `k` steps and no copy of
/// the shoe. See the module documentation for the exact algorithm.
#[derive(Debug, Clone)]
pub struct ShoeShuffle {
    /// One deck in canonical order (ranks 2 … A, suits ♣ ♦ ♥ ♠ within a rank).
    pub(crate) deck: [Card; 52],
    pub(crate) deck_len: usize,
    /// Cards in the full shoe.
    pub(crate) len: u32,
    /// Most cards one shuffle deals.
    max_cards: usize,
    /// Step `i`'s draw, below `len − i`, for the first `max_cards` steps.
    steps: [UniformBelow; MAX_SWAPS],
    /// `p mod deck_len`: a position's card in the unshuffled shoe.
    of_deck: UniformBelow,
}

impl ShoeShuffle {
    /// `None` when the shoe holds fewer than `max_cards` cards (or more than 2³² − 1).
    pub fn new(shoe: Shoe, max_cards: usize) -> Option<ShoeShuffle> {
        let cards = shoe.deck.cards();
        let mut deck = [Card::new(Rank::Two, Suit::Clubs); 52];
        deck[..cards.len()].copy_from_slice(&cards);
        let len = u32::try_from(shoe.total_cards()).ok()?;
        if shoe.total_cards() < max_cards || max_cards > MAX_SWAPS || cards.is_empty() {
            return None;
        }
        let deck_len = u32::try_from(cards.len()).ok()?;
        // Steps past `max_cards` are never drawn; their bound is any valid one.
        let steps = std::array::from_fn(|i| UniformBelow::new(len.saturating_sub(i as u32).max(1)));
        Some(ShoeShuffle {
            deck,
            deck_len: cards.len(),
            len,
            max_cards,
            steps,
            of_deck: UniformBelow::new(deck_len),
        })
    }

    /// Cards in the full shoe.
    pub fn shoe_len(&self) -> u32 {
        self.len
    }

    /// The card at position `p` of the unshuffled shoe.
    pub fn canonical(&self, p: u32) -> Card {
        self.deck[self.of_deck.reduce(p) as usize]
    }

    /// A new shuffle of the full shoe.
    pub fn start(&self) -> Shuffling<'_> {
        Shuffling {
            shoe: self,
            step: 0,
            written: [(0, 0); MAX_SWAPS],
        }
    }

    /// The kinds of one deck in canonical order.
    pub fn deck(&self) -> &[Card] {
        &self.deck[..self.deck_len]
    }

    pub fn max_cards(&self) -> usize {
        self.max_cards
    }

    /// Copies of each kind in the shoe.
    pub fn copies(&self) -> u32 {
        self.len / self.deck_len as u32
    }
}

/// Most cards one [`Shuffling`] deals (a baccarat coup takes six).
const MAX_SWAPS: usize = 8;

/// One shuffle in progress.
#[derive(Debug, Clone)]
pub struct Shuffling<'s> {
    shoe: &'s ShoeShuffle,
    step: u32,
    /// The swaps so far: at step `k`, position `written[k].0` received the canonical index
    /// `written[k].1`. The last entry for a position is what it holds now; positions below
    /// `step` are final and never read again, so step `k` writes exactly one entry.
    written: [(u32, u32); MAX_SWAPS],
}

impl Shuffling<'_> {
    /// The canonical index at position `p` (≥ `step`) now: the last swap that wrote it, or
    /// its own if none did.
    #[inline]
    fn at(&self, p: u32) -> u32 {
        self.written[..self.step as usize]
            .iter()
            .fold(p, |v, &(q, w)| if q == p { w } else { v })
    }

    /// The next card: step `i` of forward Fisher–Yates. Panics past `max_cards` cards (the
    /// engines deal at most that many by construction).
    #[inline]
    pub fn next_card(&mut self, rng: &mut ChaCha20Rng) -> Card {
        assert!(
            (self.step as usize) < self.shoe.max_cards,
            "a shuffle deals at most {} cards",
            self.shoe.max_cards
        );
        let i = self.step;
        // `uniform_below(rng, len − i)`, its bound's division done once per shoe.
        let step = &self.shoe.steps[i as usize];
        debug_assert_eq!(step.bound(), self.shoe.len - i);
        let j = i + step.sample(rng);
        let drawn = self.at(j);
        // Swap: position j now holds what was at i; position i is final (when j = i the entry
        // is for position i, which is never read again).
        self.written[i as usize] = (j, self.at(i));
        self.step += 1;
        self.shoe.canonical(drawn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cards::DeckKind;

    #[test]
    fn draws_are_unbiased_by_rejecting_the_top_zone() {
        // Rejecting the incomplete top zone makes each of the 37 outcomes equally likely;
        // over 37 000 draws each count stays near 1 000.
        let m = 37u32;
        let mut counts = [0u32; 37];
        let mut rng = stream([7; 32]);
        for _ in 0..37_000 {
            counts[uniform_below(&mut rng, m) as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (800..1200).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn the_precomputed_draw_draws_what_uniform_below_draws() {
        // The remainder without a division is exact at the edges of the 32-bit range.
        let edges = [
            0u32,
            1,
            2,
            3,
            51,
            52,
            415,
            416,
            u32::MAX / 2,
            u32::MAX - 1,
            u32::MAX,
        ];
        let mut rng = stream([3; 32]);
        let random_bounds: Vec<u32> = (0..1000).map(|_| rng.next_u32().max(1)).collect();
        let bounds = (1..=1000u32)
            .chain(edges.into_iter().filter(|&m| m >= 1))
            .chain(random_bounds);
        for m in bounds {
            let d = UniformBelow::new(m);
            for x in edges.into_iter().chain((0..50).map(|_| rng.next_u32())) {
                assert_eq!(d.reduce(x), x % m, "{x} mod {m}");
            }
        }
        // The same words rejected and the same draws, from the same stream.
        for m in [1u32, 2, 37, 52, 411, 416, 3_000_000_019, u32::MAX] {
            let (mut a, mut b) = (stream([9; 32]), stream([9; 32]));
            let d = UniformBelow::new(m);
            for _ in 0..2000 {
                assert_eq!(d.sample(&mut a), uniform_below(&mut b, m), "bound {m}");
            }
        }
    }

    #[test]
    fn the_draw_is_pinned_for_auditors() {
        // tests/reference/rng_reference.py, an independent implementation, draws 19 from the
        // all-zero seed.
        assert_eq!(draw_pocket([0; 32], 37), 19);
    }

    #[test]
    fn the_first_card_of_a_shuffle_is_the_one_draw_pocket_picks() {
        let shoe = Shoe::new(DeckKind::Standard52, 1);
        let seed = [42u8; 32];
        let canonical = DeckKind::Standard52.cards();
        assert_eq!(
            shuffled(shoe, seed)[0],
            canonical[draw_pocket(seed, 52) as usize]
        );
    }

    #[test]
    fn a_shuffle_is_a_permutation_of_the_shoe_and_depends_on_the_seed() {
        let shoe = Shoe::new(DeckKind::Standard52, 8);
        let a = shuffled(shoe, [1; 32]);
        let mut sorted = a.clone();
        sorted.sort();
        let mut expected: Vec<Card> = (0..8).flat_map(|_| DeckKind::Standard52.cards()).collect();
        expected.sort();
        assert_eq!(sorted, expected);
        assert_eq!(a, shuffled(shoe, [1; 32]));
        assert_ne!(a, shuffled(shoe, [2; 32]));
    }

    #[test]
    fn the_lazy_shuffle_deals_the_head_of_the_full_shuffle() {
        let shoe = Shoe::new(DeckKind::Standard52, 8);
        let lazy = ShoeShuffle::new(shoe, 6).expect("a shoe of 416 cards");
        for s in 0..50u8 {
            let seed = [s; 32];
            let full = shuffled(shoe, seed);
            let mut rng = stream(seed);
            let mut dealing = lazy.start();
            let head: Vec<Card> = (0..6).map(|_| dealing.next_card(&mut rng)).collect();
            assert_eq!(head, full[..6], "seed {s}");
        }
    }
}
