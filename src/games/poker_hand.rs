//! Poker hand evaluation: the best five-card hand out of five, six or seven cards, ranked high
//! with every kicker, and the ace-low reading of five cards that Casino Razz pays on.
//!
//! The order is the one both Casino Hold'em sections of 002 state under "Pořadí kombinací":
//! the ten classes of "Tabulka karetních kombinací seřazených sestupně"; within a class "vyhrává
//! ta, která obsahuje kartu s vyšší hodnotou … V případě stejných hodnot vyhrává kombinace s
//! vyšší dodatečnou 2., 3., 4. potažmo 5. kartou"; an ace is the highest card of A-K-Q-J-10 and
//! the lowest of 5-4-3-2-A ("Eso je speciální karta…"). Suits never rank: two hands of equal
//! [`HandRank`] tie ("všech pět karet mají totožné").
//!
//! **How.** A hand is held as bitmasks over ranks (bit 2 … bit 14 = 2 … A): one mask of the
//! ranks seen at least once, twice, three and four times, and one mask per suit. Every class
//! then falls out of a few mask operations (a straight is five adjacent bits, the ace also
//! standing as bit 1), so evaluating seven cards is direct — no enumeration of the 21 five-card
//! subsets, no allocation. [`best_five`] does enumerate them, to name the five cards.
//!
//! **Why not a crate.** `rs_poker` (5.1) and `poker` (0.7) were looked at (`cargo info`). Both
//! rank 5 to 7 cards with kickers and the wheel, but their scores are opaque table indices
//! (they expose the class, not the ranks that decide it, and no royal flush), `rs_poker` pulls
//! `rand` 0.10 next to our 0.9 and generates its tables in a build script, `poker` builds
//! hash tables at run time, and neither reads a hand low (Casino Razz). The evaluator below is
//! short enough to audit and is checked exhaustively against the known counts of all
//! 2,598,960 five-card hands and the 7,462 distinct ranks, and against an independent
//! sort-based reference for the order of those ranks.

use schemars::JsonSchema;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::cards::{Card, Rank, Suit};
use crate::plan::rules::top_card::RankName;

pub use crate::plan::rules::casino_holdem::HandClass;

/// Fewest cards a hand is ranked from (five make a poker hand).
pub const MIN_CARDS: usize = 5;
/// Most cards a hand is ranked from (two hole cards and a five-card board).
pub const MAX_CARDS: usize = 7;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HandError {
    #[error("a poker hand is ranked from {MIN_CARDS} to {MAX_CARDS} cards, not {0}")]
    CardCount(usize),
    #[error("{0} is in the hand twice (one deck holds each card once)")]
    Duplicate(Card),
}

/// The value of the best five-card hand: its class, then the ranks that decide between hands
/// of that class, most significant first. Totally ordered: a greater `HandRank` is the better
/// hand, equal ones tie.
///
/// The deciding ranks per class:
///
/// | class | ranks |
/// |---|---|
/// | royal flush | A |
/// | straight flush, straight | the top card (5 for 5-4-3-2-A) |
/// | four of a kind | the four's rank, the kicker |
/// | full house | the three's rank, the pair's rank |
/// | flush, high card | all five, highest first |
/// | three of a kind | the three's rank, two kickers |
/// | two pair | the higher pair, the lower pair, the kicker |
/// | pair | the pair's rank, three kickers |
///
/// Packed as `class << 20 | r1 << 16 | r2 << 12 | r3 << 8 | r4 << 4 | r5` (ranks 2 … 14,
/// unused places 0), so comparing hands is comparing integers.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(into = "HandRankRepr", try_from = "HandRankRepr")]
pub struct HandRank(u32);

impl HandRank {
    fn pack(class: HandClass, ranks: [u32; 5]) -> HandRank {
        let mut v = class as u32;
        for r in ranks {
            v = (v << 4) | r;
        }
        HandRank(v)
    }

    /// The hand's class ("Královská postupka", "Pár", …).
    pub fn class(self) -> HandClass {
        HandClass::ALL[(self.0 >> 20) as usize]
    }

    /// The ranks that decide between two hands of the same class, most significant first
    /// (see the table on [`HandRank`]).
    pub fn ranks(self) -> Vec<Rank> {
        (0..5)
            .rev()
            .map(|i| (self.0 >> (4 * i)) & 0xF)
            .filter(|&n| n != 0)
            .map(rank_of)
            .collect()
    }

    /// The rank of the pair, three or four (the higher pair of two pair; the three of a full
    /// house); `None` for hands without cards of one rank.
    pub fn set_rank(self) -> Option<Rank> {
        use HandClass::*;
        match self.class() {
            Pair | TwoPair | ThreeOfAKind | FullHouse | FourOfAKind => {
                Some(rank_of((self.0 >> 16) & 0xF))
            }
            _ => None,
        }
    }

    /// The raw packed value (see [`HandRank`]); stable, for compact logs.
    pub fn value(self) -> u32 {
        self.0
    }
}

fn rank_of(n: u32) -> Rank {
    Rank::ALL[(n - 2) as usize]
}

/// How many deciding ranks a hand of `class` has.
fn rank_count(class: HandClass) -> usize {
    use HandClass::*;
    match class {
        RoyalFlush | StraightFlush | Straight => 1,
        FourOfAKind | FullHouse => 2,
        ThreeOfAKind | TwoPair => 3,
        Pair => 4,
        Flush | HighCard => 5,
    }
}

pub fn class_name(class: HandClass) -> &'static str {
    use HandClass::*;
    match class {
        HighCard => "high_card",
        Pair => "pair",
        TwoPair => "two_pair",
        ThreeOfAKind => "three_of_a_kind",
        Straight => "straight",
        Flush => "flush",
        FullHouse => "full_house",
        FourOfAKind => "four_of_a_kind",
        StraightFlush => "straight_flush",
        RoyalFlush => "royal_flush",
    }
}

impl fmt::Display for HandRank {
    /// `two_pair Q 3 9`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(class_name(self.class()))?;
        for r in self.ranks() {
            write!(f, " {}", RankName(r))?;
        }
        Ok(())
    }
}

impl fmt::Debug for HandRank {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HandRank({self})")
    }
}

/// How a [`HandRank`] is written in logs: `{"class": "two_pair", "ranks": ["Q", "3", "9"]}`.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "HandRank")]
struct HandRankRepr {
    class: HandClass,
    ranks: Vec<RankName>,
}

impl From<HandRank> for HandRankRepr {
    fn from(h: HandRank) -> Self {
        HandRankRepr {
            class: h.class(),
            ranks: h.ranks().into_iter().map(RankName).collect(),
        }
    }
}

impl TryFrom<HandRankRepr> for HandRank {
    type Error = String;
    fn try_from(r: HandRankRepr) -> Result<Self, Self::Error> {
        let want = rank_count(r.class);
        if r.ranks.len() != want {
            return Err(format!(
                "a {} is decided by {want} ranks, not {}",
                class_name(r.class),
                r.ranks.len()
            ));
        }
        let mut ranks = [0u32; 5];
        for (slot, rank) in ranks.iter_mut().zip(&r.ranks) {
            *slot = u32::from(rank.0.number());
        }
        Ok(HandRank::pack(r.class, ranks))
    }
}

/// Up to seven distinct cards as rank bitmasks (bit `n` is the rank numbered `n`, 2 … 14).
#[derive(Debug, Clone, Copy, Default)]
struct Hand {
    /// `by_count[k]`: ranks held at least `k + 1` times.
    by_count: [u16; 4],
    /// Ranks held in each suit, indexed by `Suit as usize`.
    by_suit: [u16; 4],
    /// The cards held, by `Card::index`, to refuse a card held twice.
    cards: u64,
    len: u8,
}

impl Hand {
    fn add(&mut self, card: Card) -> Result<(), HandError> {
        let bit = 1u64 << card.index();
        if self.cards & bit != 0 {
            return Err(HandError::Duplicate(card));
        }
        self.cards |= bit;
        self.len += 1;
        let r = 1u16 << card.rank.number();
        self.by_suit[card.suit as usize] |= r;
        // The first count that does not hold the rank yet; a deck has four of each rank, so
        // the last slot is never passed.
        let slot = self.by_count.iter().position(|&m| m & r == 0).unwrap_or(3);
        self.by_count[slot] |= r;
        Ok(())
    }

    fn of(cards: &[Card]) -> Result<Hand, HandError> {
        if !(MIN_CARDS..=MAX_CARDS).contains(&cards.len()) {
            return Err(HandError::CardCount(cards.len()));
        }
        let mut h = Hand::default();
        for &c in cards {
            h.add(c)?;
        }
        Ok(h)
    }

    /// The best five-card hand among the cards held (at least five).
    fn rank(&self) -> HandRank {
        use HandClass::*;
        debug_assert!(usize::from(self.len) >= MIN_CARDS);
        let [any, two, three, four] = self.by_count.map(u32::from);
        // One suit at most holds five of seven cards.
        let flush = self
            .by_suit
            .iter()
            .map(|&m| u32::from(m))
            .find(|m| m.count_ones() >= 5);
        if let Some(suited) = flush {
            if let Some(top) = straight_top(suited) {
                let class = if top == 14 { RoyalFlush } else { StraightFlush };
                return HandRank::pack(class, [top, 0, 0, 0, 0]);
            }
        }
        if four != 0 {
            let q = highest(four);
            return HandRank::pack(FourOfAKind, [q, highest(any & !(1 << q)), 0, 0, 0]);
        }
        if three != 0 {
            let t = highest(three);
            // The pair of a full house may be a second three (7 cards: 3 + 3 + 1).
            let pair = two & !(1 << t);
            if pair != 0 {
                return HandRank::pack(FullHouse, [t, highest(pair), 0, 0, 0]);
            }
        }
        if let Some(suited) = flush {
            return HandRank::pack(Flush, top_ranks(suited));
        }
        if let Some(top) = straight_top(any) {
            return HandRank::pack(Straight, [top, 0, 0, 0, 0]);
        }
        if three != 0 {
            let t = highest(three);
            let [k1, k2, ..] = top_ranks(any & !(1 << t));
            return HandRank::pack(ThreeOfAKind, [t, k1, k2, 0, 0]);
        }
        if two != 0 {
            let p1 = highest(two);
            let lower = two & !(1 << p1);
            if lower != 0 {
                let p2 = highest(lower);
                // A third pair's rank can be the kicker.
                let k = highest(any & !(1 << p1) & !(1 << p2));
                return HandRank::pack(TwoPair, [p1, p2, k, 0, 0]);
            }
            let [k1, k2, k3, ..] = top_ranks(any & !(1 << p1));
            return HandRank::pack(Pair, [p1, k1, k2, k3, 0]);
        }
        HandRank::pack(HighCard, top_ranks(any))
    }
}

/// The number of the highest rank in a non-empty mask.
fn highest(mask: u32) -> u32 {
    31 - mask.leading_zeros()
}

/// The five highest ranks of a mask, highest first (0 where the mask runs out).
fn top_ranks(mut mask: u32) -> [u32; 5] {
    let mut out = [0; 5];
    for slot in &mut out {
        if mask == 0 {
            break;
        }
        let h = highest(mask);
        *slot = h;
        mask &= !(1 << h);
    }
    out
}

/// The top card of the highest straight among the ranks of `mask`, the ace also counting as
/// 1 below the 2 (so 5-4-3-2-A is a straight to the 5).
fn straight_top(mask: u32) -> Option<u32> {
    let m = mask | ((mask >> 14) & 1) << 1;
    // Bit t survives when bits t, t-1, …, t-4 are all set.
    let runs = m & (m << 1) & (m << 2) & (m << 3) & (m << 4);
    (runs != 0).then(|| highest(runs))
}

/// The value of the best five-card hand among 5 to 7 distinct cards.
pub fn evaluate(cards: &[Card]) -> Result<HandRank, HandError> {
    Ok(Hand::of(cards)?.rank())
}

/// The best five of 5 to 7 distinct cards and their value. Where several five-card choices
/// are worth the same (a kicker shared with the board), the first in the order of `cards`
/// is named; they are equal for every purpose of the game.
pub fn best_five(cards: &[Card]) -> Result<([Card; 5], HandRank), HandError> {
    let best = evaluate(cards)?;
    let n = cards.len();
    for a in 0..n {
        for b in a + 1..n {
            for c in b + 1..n {
                for d in c + 1..n {
                    for e in d + 1..n {
                        let five = [cards[a], cards[b], cards[c], cards[d], cards[e]];
                        if evaluate(&five)? == best {
                            return Ok((five, best));
                        }
                    }
                }
            }
        }
    }
    unreachable!("the best hand of the cards is the value of one of their five-card subsets")
}

/// Five cards read low, the ace counting 1, for Casino Razz ("Cílem je získat co nejnižší
/// možnou kombinaci … Eso se počítá jako nejnižší karta"). Straights and flushes play no part in
/// a low hand; whether the five are of one suit is kept because the SYNOT table pays a suited
/// 5-4-3-2-A apart.
///
/// Ordered lower-is-less: an unpaired hand before every paired one, then by the ranks from the
/// highest down (6-4-3-2-A < 6-5-3-2-A < 7-2-…), then one suit before mixed suits (the table
/// pays the suited wheel more). The best low hand is the least.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(into = "LowHandRepr", try_from = "LowHandRepr")]
pub struct LowHand {
    // Field order is the comparison order.
    paired: bool,
    /// Ace-low values 1 … 13 (A … K), highest first.
    values: [u8; 5],
    mixed_suits: bool,
}

impl LowHand {
    /// Reads five distinct cards low.
    pub fn of(cards: &[Card; 5]) -> Result<LowHand, HandError> {
        Hand::of(cards)?;
        let mut values = cards.map(|c| low_value(c.rank));
        values.sort_unstable_by(|a, b| b.cmp(a));
        Ok(LowHand {
            paired: values.windows(2).any(|w| w[0] == w[1]),
            values,
            mixed_suits: cards.iter().any(|c| c.suit != cards[0].suit),
        })
    }

    /// The ranks, highest (ace low) first.
    pub fn ranks(&self) -> [Rank; 5] {
        self.values.map(rank_of_low)
    }

    /// The highest card, the ace counting low.
    pub fn highest(&self) -> Rank {
        rank_of_low(self.values[0])
    }

    /// Two or more cards of one rank (a pair, two pairs, three or four of a kind).
    pub fn is_paired(&self) -> bool {
        self.paired
    }

    /// All five cards of one suit.
    pub fn is_suited(&self) -> bool {
        !self.mixed_suits
    }

    /// 5-4-3-2-A, the lowest hand there is.
    pub fn is_wheel(&self) -> bool {
        self.values == [5, 4, 3, 2, 1]
    }

    pub fn contains(&self, rank: Rank) -> bool {
        self.values.contains(&low_value(rank))
    }
}

fn low_value(rank: Rank) -> u8 {
    match rank {
        Rank::Ace => 1,
        r => r.number(),
    }
}

fn rank_of_low(v: u8) -> Rank {
    match v {
        1 => Rank::Ace,
        n => rank_of(u32::from(n)),
    }
}

impl fmt::Debug for LowHand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ranks: Vec<String> = self
            .ranks()
            .iter()
            .map(|&r| RankName(r).to_string())
            .collect();
        write!(
            f,
            "LowHand({}{})",
            ranks.join("-"),
            if self.is_suited() { " suited" } else { "" }
        )
    }
}

/// How a [`LowHand`] is written in logs: `{"ranks": ["7", "5", "4", "2", "A"], "suited": false}`.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "LowHand")]
struct LowHandRepr {
    ranks: [RankName; 5],
    suited: bool,
}

impl From<LowHand> for LowHandRepr {
    fn from(h: LowHand) -> Self {
        LowHandRepr {
            ranks: h.ranks().map(RankName),
            suited: h.is_suited(),
        }
    }
}

impl TryFrom<LowHandRepr> for LowHand {
    type Error = String;
    fn try_from(r: LowHandRepr) -> Result<Self, Self::Error> {
        let mut values = r.ranks.map(|n| low_value(n.0));
        values.sort_unstable_by(|a, b| b.cmp(a));
        let paired = values.windows(2).any(|w| w[0] == w[1]);
        if paired && r.suited {
            return Err("a paired hand cannot be of one suit (one deck)".into());
        }
        Ok(LowHand {
            paired,
            values,
            mixed_suits: !r.suited,
        })
    }
}

/// Every card of one 52-card deck, by [`Card::index`].
pub fn deck() -> [Card; 52] {
    std::array::from_fn(|i| Card::new(Rank::ALL[i / 4], Suit::ALL[i % 4]))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::time::Instant;

    use rand::{RngCore, SeedableRng};

    use super::*;
    use HandClass::*;

    fn cards(s: &str) -> Vec<Card> {
        s.split_whitespace()
            .map(|c| c.parse().expect("a card"))
            .collect()
    }

    fn rank(s: &str) -> HandRank {
        evaluate(&cards(s)).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn ranks(s: &str) -> Vec<Rank> {
        s.split_whitespace()
            .map(|r| r.parse::<RankName>().expect("a rank").0)
            .collect()
    }

    /// An independent reference: group the five ranks by count (largest group first, then by
    /// rank), read the class off the group sizes, a straight off five consecutive ranks (the
    /// wheel by hand), a flush off one suit. The tie-break is the grouped ranks.
    fn reference(five: &[Card; 5]) -> (u8, Vec<u8>) {
        let mut nums: Vec<u8> = five.iter().map(|c| c.rank.number()).collect();
        nums.sort_unstable_by(|a, b| b.cmp(a));
        let mut groups: Vec<(usize, u8)> = Vec::new();
        for &n in &nums {
            match groups.iter_mut().find(|(_, r)| *r == n) {
                Some(g) => g.0 += 1,
                None => groups.push((1, n)),
            }
        }
        groups.sort_unstable_by(|a, b| b.cmp(a));
        let sizes: Vec<usize> = groups.iter().map(|g| g.0).collect();
        let tiebreak: Vec<u8> = groups.iter().map(|g| g.1).collect();
        let flush = five.iter().all(|c| c.suit == five[0].suit);
        let distinct = groups.len() == 5;
        let straight_top = if distinct && nums[0] - nums[4] == 4 {
            Some(nums[0])
        } else if nums == [14, 5, 4, 3, 2] {
            Some(5)
        } else {
            None
        };
        let (class, tiebreak) = match (straight_top, flush, sizes.as_slice()) {
            (Some(14), true, _) => (9, vec![14]),
            (Some(t), true, _) => (8, vec![t]),
            (_, _, [4, 1]) => (7, tiebreak),
            (_, _, [3, 2]) => (6, tiebreak),
            (_, true, _) => (5, tiebreak),
            (Some(t), false, _) => (4, vec![t]),
            (_, _, [3, 1, 1]) => (3, tiebreak),
            (_, _, [2, 2, 1]) => (2, tiebreak),
            (_, _, [2, 1, 1, 1]) => (1, tiebreak),
            _ => (0, tiebreak),
        };
        (class, tiebreak)
    }

    #[test]
    fn every_five_card_hand_is_counted_in_its_class_and_7462_ranks_are_distinct() {
        let started = Instant::now();
        let deck = deck();
        let mut per_class = [0u32; 10];
        // One bit per possible packed value (class 9 << 20 is the largest prefix).
        let mut seen = vec![0u64; (10 << 20) / 64];
        let mut examples: HashMap<HandRank, [Card; 5]> = HashMap::new();
        let mut total = 0u32;
        let empty = Hand::default();
        for a in 0..52 {
            let mut h1 = empty;
            h1.add(deck[a]).expect("distinct");
            for b in a + 1..52 {
                let mut h2 = h1;
                h2.add(deck[b]).expect("distinct");
                for c in b + 1..52 {
                    let mut h3 = h2;
                    h3.add(deck[c]).expect("distinct");
                    for d in c + 1..52 {
                        let mut h4 = h3;
                        h4.add(deck[d]).expect("distinct");
                        for e in d + 1..52 {
                            let mut h5 = h4;
                            h5.add(deck[e]).expect("distinct");
                            let r = h5.rank();
                            total += 1;
                            per_class[r.class() as usize] += 1;
                            let (word, bit) = ((r.0 / 64) as usize, r.0 % 64);
                            if seen[word] & (1 << bit) == 0 {
                                seen[word] |= 1 << bit;
                                examples.insert(r, [deck[a], deck[b], deck[c], deck[d], deck[e]]);
                            }
                        }
                    }
                }
            }
        }
        let elapsed = started.elapsed();
        assert_eq!(total, 2_598_960);
        let expected = [
            (HighCard, 1_302_540),
            (Pair, 1_098_240),
            (TwoPair, 123_552),
            (ThreeOfAKind, 54_912),
            (Straight, 10_200),
            (Flush, 5_108),
            (FullHouse, 3_744),
            (FourOfAKind, 624),
            (StraightFlush, 36),
            (RoyalFlush, 4),
        ];
        for (class, count) in expected {
            assert_eq!(per_class[class as usize], count, "{class:?}");
        }
        assert_eq!(examples.len(), 7_462);
        // Distinct ranks per class: the textbook 1277 high-card and flush ranks (1287 rank
        // sets less the 10 straights), 2860 pairs, 858 two pairs and threes, 156 full houses
        // and fours, 10 straights, 9 straight flushes and one royal flush.
        let mut distinct = [0usize; 10];
        for r in examples.keys() {
            distinct[r.class() as usize] += 1;
        }
        assert_eq!(distinct, [1277, 2860, 858, 858, 10, 1277, 156, 156, 9, 1]);
        // The order of the 7,462 ranks agrees with the independent reference, strictly.
        let mut sorted: Vec<(HandRank, [Card; 5])> = examples.into_iter().collect();
        sorted.sort_unstable_by_key(|(r, _)| *r);
        for w in sorted.windows(2) {
            let (lo, hi) = (reference(&w[0].1), reference(&w[1].1));
            assert!(
                lo < hi,
                "{} ({:?}) ranks below {} ({:?}) but the reference says {lo:?} vs {hi:?}",
                w[0].0,
                w[0].1,
                w[1].0,
                w[1].1
            );
        }
        eprintln!(
            "evaluated all 2,598,960 five-card hands in {:.2} s ({} build)",
            elapsed.as_secs_f64(),
            if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            }
        );
    }

    /// Hands of `size` cards per class, every hand of one deck (depth first over ascending
    /// card indices).
    fn count_every_hand(size: u8) -> [u64; 10] {
        let deck = deck();
        let mut per_class = [0u64; 10];
        let mut hands = vec![(0usize, Hand::default())];
        while let Some((next, h)) = hands.pop() {
            if h.len == size {
                per_class[h.rank().class() as usize] += 1;
                continue;
            }
            let room = usize::from(size - h.len);
            for (i, &card) in deck
                .iter()
                .enumerate()
                .skip(next)
                .take(52 + 1 - room - next)
            {
                let mut g = h;
                g.add(card).expect("distinct");
                hands.push((i + 1, g));
            }
        }
        per_class
    }

    /// Known counts of the 20,358,520 six-card hands, best five of six. Run with
    /// `cargo test --lib games::poker_hand -- --ignored --nocapture`.
    #[test]
    #[ignore = "20 million hands: run on demand"]
    fn every_six_card_hand_is_counted_in_its_class() {
        let started = Instant::now();
        assert_eq!(
            count_every_hand(6),
            [
                6_612_900, 9_730_740, 2_532_816, 732_160, 361_620, 205_792, 165_984, 14_664, 1_656,
                188
            ]
        );
        eprintln!(
            "evaluated all 20,358,520 six-card hands in {:.2} s",
            started.elapsed().as_secs_f64()
        );
    }

    /// Known counts of the 133,784,560 seven-card hands (Hold'em: two cards and the board).
    #[test]
    #[ignore = "134 million hands: run on demand"]
    fn every_seven_card_hand_is_counted_in_its_class() {
        let started = Instant::now();
        assert_eq!(
            count_every_hand(7),
            [
                23_294_460, 58_627_800, 31_433_400, 6_461_620, 6_180_020, 4_047_644, 3_473_184,
                224_848, 37_260, 4_324
            ]
        );
        eprintln!(
            "evaluated all 133,784,560 seven-card hands in {:.2} s",
            started.elapsed().as_secs_f64()
        );
    }

    #[test]
    fn best_of_seven_is_the_best_of_its_21_five_card_hands() {
        let mut rng = rand_chacha::ChaCha20Rng::from_seed([7; 32]);
        let deck = deck();
        for _ in 0..20_000 {
            // Seven distinct cards by rejection.
            let mut picked = Vec::with_capacity(7);
            while picked.len() < 7 {
                let c = deck[(rng.next_u32() % 52) as usize];
                if !picked.contains(&c) {
                    picked.push(c);
                }
            }
            let direct = evaluate(&picked).expect("seven distinct cards");
            let mut best = None;
            for skip1 in 0..7 {
                for skip2 in skip1 + 1..7 {
                    let five: Vec<Card> = (0..7)
                        .filter(|&i| i != skip1 && i != skip2)
                        .map(|i| picked[i])
                        .collect();
                    let r = evaluate(&five).expect("five distinct cards");
                    best = best.max(Some(r));
                }
            }
            assert_eq!(Some(direct), best, "{picked:?}");
            let (five, r) = best_five(&picked).expect("seven distinct cards");
            assert_eq!(r, direct);
            assert_eq!(evaluate(&five).expect("five of them"), direct);
        }
    }

    #[test]
    fn best_five_of_seven_picks_the_flush_over_the_straight() {
        let seven = cards("9h 8h 7c 6h 5d 2h Kh");
        let (five, r) = best_five(&seven).unwrap();
        assert_eq!(r.class(), Flush);
        assert_eq!(r.ranks(), ranks("K 9 8 6 2"));
        assert!(five.iter().all(|c| c.suit == Suit::Hearts));
    }

    #[test]
    fn best_five_of_seven_uses_the_highest_straight_and_the_straight_flush_over_the_flush() {
        assert_eq!(rank("2c 3d 4h 5s 6c 7d Ah").ranks(), ranks("7"));
        let r = rank("9s 8s 7s 6s 5s As Ks");
        assert_eq!((r.class(), r.ranks()), (StraightFlush, ranks("9")));
        let r = rank("As Ks Qs Js Ts 9s 8s");
        assert_eq!((r.class(), r.ranks()), (RoyalFlush, ranks("A")));
    }

    #[test]
    fn two_threes_in_seven_cards_make_a_full_house_of_the_higher_three() {
        let r = rank("7c 7d 7h Kc Kd Ks 2c");
        assert_eq!((r.class(), r.ranks()), (FullHouse, ranks("K 7")));
        // Three and two pairs: the higher pair completes the full house.
        let r = rank("4c 4d 4h 9c 9d Jc Jd");
        assert_eq!((r.class(), r.ranks()), (FullHouse, ranks("4 J")));
    }

    #[test]
    fn three_pairs_in_seven_cards_play_the_two_highest_and_the_best_kicker() {
        let r = rank("Qc Qd 9c 9d 3c 3d 2h");
        assert_eq!((r.class(), r.ranks()), (TwoPair, ranks("Q 9 3")));
        let r = rank("Qc Qd 9c 9d 3c 3d Ah");
        assert_eq!(r.ranks(), ranks("Q 9 A"));
    }

    #[test]
    fn four_of_a_kind_plays_the_highest_other_card_as_kicker() {
        let r = rank("8c 8d 8h 8s Kc Kd Ac");
        assert_eq!((r.class(), r.ranks()), (FourOfAKind, ranks("8 A")));
    }

    #[test]
    fn ace_plays_high_in_a_k_q_j_10_and_low_in_5_4_3_2_a_and_nowhere_between() {
        let broadway = rank("Ac Kd Qh Js Tc");
        let wheel = rank("5c 4d 3h 2s Ac");
        let six_high = rank("6c 5d 4h 3s 2c");
        assert_eq!((broadway.class(), broadway.ranks()), (Straight, ranks("A")));
        assert_eq!((wheel.class(), wheel.ranks()), (Straight, ranks("5")));
        // The wheel is the lowest straight.
        assert!(wheel < six_high && six_high < broadway);
        // No wrap-around: Q-K-A-2-3 is ace high.
        assert_eq!(rank("Qc Kd Ah 2s 3c").class(), HighCard);
        assert_eq!(rank("5h 4h 3h 2h Ah").class(), StraightFlush);
        assert_eq!(rank("5h 4h 3h 2h Ah").ranks(), ranks("5"));
    }

    #[test]
    fn kickers_decide_in_order_down_to_the_fifth_card() {
        // "flush A, 6, 5, 4, 3 je lepší než barva/flush K, J, 10, 8, 7"
        assert!(rank("Ad 6d 5d 4d 3d") > rank("Kc Jc Tc 8c 7c"));
        // "tři králové jsou lepší než tři dámy"
        assert!(rank("Kc Kd Kh 2c 3d") > rank("Qc Qd Qh Ac Jd"));
        // Same pair: the 2nd, 3rd, then 4th card decide.
        assert!(rank("9c 9d Ah 7c 3d") > rank("9h 9s Kh Qc Jd"));
        assert!(rank("9c 9d Ah 7c 3d") > rank("9h 9s Ac 6c 5d"));
        assert!(rank("9c 9d Ah 7c 4d") > rank("9h 9s Ac 7d 3d"));
        // High card down to the fifth card.
        assert!(rank("Kc Jd 9h 6c 3d") > rank("Ks Jh 9c 6d 2d"));
        // Two pair: higher pair, lower pair, then kicker.
        assert!(rank("Jc Jd 3h 3c 2d") > rank("Th Ts 9c 9d Ad"));
        assert!(rank("Jc Jd 4h 4c 2d") > rank("Jh Js 3c 3d Ad"));
        assert!(rank("Jc Jd 4h 4c 6d") > rank("Jh Js 4s 4d 5d"));
        // Full house by its three first.
        assert!(rank("3c 3d 3h 2c 2d") > rank("2h 2s 2c Ac Ad"));
    }

    #[test]
    fn identical_ranks_in_other_suits_tie() {
        assert_eq!(rank("Ac Kd 9h 6c 3d"), rank("Ah Ks 9d 6s 3c"));
        assert_eq!(rank("Ah Kh Qh Jh Th"), rank("As Ks Qs Js Ts"));
        // A kicker below the board's five plays no part.
        assert_eq!(rank("2c 3d Ah Kh Qc Jd 9s"), rank("4c 5d Ah Kh Qc Jd 9s"));
    }

    #[test]
    fn five_six_or_seven_distinct_cards_only() {
        assert_eq!(
            evaluate(&cards("Ac Kd Qh Js")),
            Err(HandError::CardCount(4))
        );
        assert_eq!(
            evaluate(&cards("Ac Kd Qh Js Tc 9c 8c 7c")),
            Err(HandError::CardCount(8))
        );
        assert_eq!(
            evaluate(&cards("Ac Kd Qh Js Ac")),
            Err(HandError::Duplicate("Ac".parse().unwrap()))
        );
        assert_eq!(rank("Ac Kd Qh Js 9c 9d").class(), Pair);
    }

    #[test]
    fn hand_ranks_are_logged_as_class_and_deciding_ranks_and_read_back() {
        let r = rank("Qc Qd 3h 3c 9d");
        let json = serde_json::to_value(r).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"class": "two_pair", "ranks": ["Q", "3", "9"]})
        );
        assert_eq!(serde_json::from_value::<HandRank>(json).unwrap(), r);
        assert_eq!(r.to_string(), "two_pair Q 3 9");
        assert_eq!(r.set_rank(), Some(Rank::Queen));
        assert!(serde_json::from_value::<HandRank>(
            serde_json::json!({"class": "pair", "ranks": ["Q"]})
        )
        .is_err());
    }

    #[test]
    fn razz_reads_the_ace_low_and_orders_the_lowest_first() {
        let low = |s: &str| {
            let c = cards(s);
            LowHand::of(&[c[0], c[1], c[2], c[3], c[4]]).expect("five distinct cards")
        };
        let wheel = low("Ac 2d 3h 4s 5c");
        assert!(wheel.is_wheel() && !wheel.is_suited() && !wheel.is_paired());
        assert_eq!(wheel.highest(), Rank::Five);
        assert!(low("Ah 2h 3h 4h 5h").is_suited());
        // A straight or a flush does not spoil a low hand: 6-5-4-3-2 is six high.
        let six = low("6c 5d 4h 3s 2c");
        assert_eq!(six.highest(), Rank::Six);
        assert!(wheel < six);
        assert!(low("6c 4d 3h 2s Ac") < low("6d 5c 3c 2c Ad"));
        assert!(low("9c 8d 7h 6s 5c") < low("Tc 2d 3h 4s Ac"));
        // Any pair is worse than every unpaired hand.
        let paired = low("Ac Ad 2h 3s 4c");
        assert!(paired.is_paired() && paired > low("Kc Qd Jh Ts 9c"));
        assert!(low("Kc 2d 3h 4s 5c").contains(Rank::King));
        assert_eq!(
            wheel.ranks(),
            [Rank::Five, Rank::Four, Rank::Three, Rank::Two, Rank::Ace]
        );
        let json = serde_json::to_value(wheel).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"ranks": ["5", "4", "3", "2", "A"], "suited": false})
        );
        assert_eq!(serde_json::from_value::<LowHand>(json).unwrap(), wheel);
    }
}
