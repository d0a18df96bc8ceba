//! Playing cards, decks and shoes.
//!
//! Cards are written as rank then suit, `Ah`, `Td`, `7h` (`10h` is accepted for `Th`). The
//! 32-card deck of Oko bere holds 7 … A of each suit; the 52-card deck 2 … A.

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Suit {
    Clubs,
    Diamonds,
    Hearts,
    Spades,
}

impl Suit {
    pub const ALL: [Suit; 4] = [Suit::Clubs, Suit::Diamonds, Suit::Hearts, Suit::Spades];

    pub fn letter(self) -> char {
        match self {
            Suit::Clubs => 'c',
            Suit::Diamonds => 'd',
            Suit::Hearts => 'h',
            Suit::Spades => 's',
        }
    }

    pub fn is_red(self) -> bool {
        matches!(self, Suit::Diamonds | Suit::Hearts)
    }
}

/// Card ranks in ascending order, 2 lowest and the ace highest (ace-low uses are the games').
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rank {
    Two = 2,
    Three,
    Four,
    Five,
    Six,
    Seven,
    Eight,
    Nine,
    Ten,
    Jack,
    Queen,
    King,
    Ace,
}

impl Rank {
    pub const ALL: [Rank; 13] = [
        Rank::Two,
        Rank::Three,
        Rank::Four,
        Rank::Five,
        Rank::Six,
        Rank::Seven,
        Rank::Eight,
        Rank::Nine,
        Rank::Ten,
        Rank::Jack,
        Rank::Queen,
        Rank::King,
        Rank::Ace,
    ];

    /// 2 … 14 (ace high).
    pub fn number(self) -> u8 {
        self as u8
    }

    pub fn letter(self) -> char {
        match self {
            Rank::Ten => 'T',
            Rank::Jack => 'J',
            Rank::Queen => 'Q',
            Rank::King => 'K',
            Rank::Ace => 'A',
            r => char::from(b'0' + r.number()),
        }
    }

    pub fn is_picture(self) -> bool {
        matches!(self, Rank::Jack | Rank::Queen | Rank::King)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Card {
    pub rank: Rank,
    pub suit: Suit,
}

impl Card {
    pub const fn new(rank: Rank, suit: Suit) -> Card {
        Card { rank, suit }
    }

    /// 0 … 51, unique per rank and suit, for counting arrays.
    pub fn index(self) -> usize {
        (self.rank.number() as usize - 2) * 4 + self.suit as usize
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a card: write rank then suit, e.g. 'Ah', 'Td', '10h', '7c'")]
pub struct CardParseError(pub String);

impl FromStr for Card {
    type Err = CardParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || CardParseError(s.to_string());
        // The suit is the last character, which may be a multi-byte symbol (♥).
        let (last_at, _) = s.char_indices().next_back().ok_or_else(err)?;
        let (rank_part, suit_part) = s.split_at(last_at);
        let suit = match suit_part {
            "c" | "C" | "♣" => Suit::Clubs,
            "d" | "D" | "♦" => Suit::Diamonds,
            "h" | "H" | "♥" => Suit::Hearts,
            "s" | "S" | "♠" => Suit::Spades,
            _ => return Err(err()),
        };
        let rank = match rank_part {
            "2" => Rank::Two,
            "3" => Rank::Three,
            "4" => Rank::Four,
            "5" => Rank::Five,
            "6" => Rank::Six,
            "7" => Rank::Seven,
            "8" => Rank::Eight,
            "9" => Rank::Nine,
            "T" | "t" | "10" => Rank::Ten,
            "J" | "j" => Rank::Jack,
            "Q" | "q" => Rank::Queen,
            "K" | "k" => Rank::King,
            "A" | "a" => Rank::Ace,
            _ => return Err(err()),
        };
        Ok(Card { rank, suit })
    }
}

impl fmt::Display for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.rank.letter(), self.suit.letter())
    }
}

impl Serialize for Card {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Card {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for Card {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Card".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A card as rank then suit: 'Ah', 'Td', '7c'",
            "examples": ["Ah"],
            "type": "string",
            "pattern": "^(10|[2-9TJQKA])[cdhs]$",
        })
    }
}

/// The kinds of deck the source documents use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeckKind {
    /// 52 French-suited cards, 2 … A (every game of 002, 001, 003, 004).
    Standard52,
    /// 32 cards, 7 … A (Oko bere, 000).
    Piquet32,
}

impl DeckKind {
    pub fn contains(self, card: Card) -> bool {
        match self {
            DeckKind::Standard52 => true,
            DeckKind::Piquet32 => card.rank >= Rank::Seven,
        }
    }

    pub fn size(self) -> usize {
        match self {
            DeckKind::Standard52 => 52,
            DeckKind::Piquet32 => 32,
        }
    }

    /// Every card of one deck, in rank then suit order.
    pub fn cards(self) -> Vec<Card> {
        Rank::ALL
            .iter()
            .flat_map(|&rank| Suit::ALL.iter().map(move |&suit| Card::new(rank, suit)))
            .filter(|&c| self.contains(c))
            .collect()
    }
}

/// A shoe of `decks` decks of one kind: which cards, and how many copies of each, can come out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Shoe {
    pub deck: DeckKind,
    pub decks: u8,
}

impl Shoe {
    pub fn new(deck: DeckKind, decks: u8) -> Shoe {
        Shoe { deck, decks }
    }

    pub fn total_cards(&self) -> usize {
        self.deck.size() * usize::from(self.decks)
    }

    /// Copies of `card` in a full shoe (0 for a card that the deck kind does not hold).
    pub fn copies_of(&self, card: Card) -> u8 {
        if self.deck.contains(card) {
            self.decks
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cards_parse_in_every_accepted_spelling() {
        let ten_of_hearts = Card::new(Rank::Ten, Suit::Hearts);
        assert_eq!("Th".parse::<Card>().unwrap(), ten_of_hearts);
        assert_eq!("10h".parse::<Card>().unwrap(), ten_of_hearts);
        assert_eq!("10♥".parse::<Card>().unwrap(), ten_of_hearts);
        assert_eq!(ten_of_hearts.to_string(), "Th");
        for bad in ["", "h", "1h", "11h", "Ax", "AAh", "Zs"] {
            assert!(bad.parse::<Card>().is_err(), "{bad} must not parse");
        }
    }

    #[test]
    fn a_piquet_deck_has_32_cards_from_seven_up() {
        let cards = DeckKind::Piquet32.cards();
        assert_eq!(cards.len(), 32);
        assert!(cards.iter().all(|c| c.rank >= Rank::Seven));
        assert!(!DeckKind::Piquet32.contains("6h".parse().unwrap()));
    }

    #[test]
    fn a_standard_deck_has_52_distinct_cards() {
        let cards = DeckKind::Standard52.cards();
        assert_eq!(cards.len(), 52);
        let mut idx: Vec<usize> = cards.iter().map(|c| c.index()).collect();
        idx.sort();
        idx.dedup();
        assert_eq!(idx, (0..52).collect::<Vec<_>>());
    }

    #[test]
    fn an_eight_deck_shoe_holds_eight_copies_of_each_card() {
        let shoe = Shoe::new(DeckKind::Standard52, 8);
        assert_eq!(shoe.total_cards(), 416);
        assert_eq!(shoe.copies_of("As".parse().unwrap()), 8);
        let piquet = Shoe::new(DeckKind::Piquet32, 1);
        assert_eq!(piquet.copies_of("2s".parse().unwrap()), 0);
    }
}
