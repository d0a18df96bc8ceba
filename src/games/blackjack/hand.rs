//! How a hand is counted ("Esa mohou mít dvě různé hodnoty, jedna a jedenáct"): card values,
//! soft and hard totals, the natural ("blackjack") and the bust.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::cards::{Card, Rank};
use crate::plan::rules::blackjack::AceCounting;

/// The most a hand can count without going bust.
pub const TWENTY_ONE: u8 = 21;

/// A card's value with every ace counted 1: 2–9 their number, 10, J, Q, K ten.
#[inline]
pub fn hard_value(card: Card) -> u8 {
    match card.rank {
        Rank::Ace => 1,
        r if r >= Rank::Ten => 10,
        r => r.number(),
    }
}

/// A ten-value card: 10, J, Q or K ("jakákoli další karta s hodnotou deset (10, J, Q, K)").
pub fn is_ten_value(card: Card) -> bool {
    hard_value(card) == 10
}

/// What a set of cards counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HandValue {
    /// The best total: an ace counts 11 when that does not take the hand over 21.
    pub total: u8,
    /// An ace counts 11 in `total` (a "soft" total: another card cannot bust it).
    pub soft: bool,
}

impl HandValue {
    pub fn is_bust(&self) -> bool {
        self.total > TWENTY_ONE
    }
}

/// The value of `cards` by the plan's ace counting.
///
/// `one_or_eleven`: each ace counts 1 or 11, whichever is better, and at most one ace of a
/// hand counts 11 (two would make 22). This is also how the Czech plans read "dvě esa mají
/// součet 12 (11+1)": the pair of aces is 12 and every ace stays free to count 1 later, so
/// A + A + K is 12, not a bust (see their assumption on `rules.blackjack.ace_counting`).
#[inline]
pub fn hand_value(cards: &[Card], counting: AceCounting) -> HandValue {
    // Saturating: a hand is never long enough to overflow, but nothing here trusts that.
    let (mut hard, mut has_ace) = (0u8, false);
    for &c in cards {
        hard = hard.saturating_add(hard_value(c));
        has_ace |= c.rank == Rank::Ace;
    }
    value_of_hard(hard, has_ace, counting)
}

/// The value of cards whose values add up to `hard` with every ace counted 1, `has_ace`
/// when one of them is an ace (see [`hand_value`]).
#[inline]
pub fn value_of_hard(hard: u8, has_ace: bool, counting: AceCounting) -> HandValue {
    match counting {
        AceCounting::OneOrEleven => {
            if has_ace && hard <= TWENTY_ONE - 10 {
                HandValue {
                    total: hard + 10,
                    soft: true,
                }
            } else {
                HandValue {
                    total: hard,
                    soft: false,
                }
            }
        }
    }
}

/// Two cards that are an ace and a ten-value card: the natural, whoever holds it. Whether a
/// split hand's natural counts as "blackjack" is the plan's rule (see
/// [`super::BlackjackEngine::is_blackjack`]).
pub fn is_natural_pair(cards: &[Card]) -> bool {
    match cards {
        [a, b] => {
            (a.rank == Rank::Ace && is_ten_value(*b)) || (b.rank == Rank::Ace && is_ten_value(*a))
        }
        _ => false,
    }
}
