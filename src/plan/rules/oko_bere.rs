//! Oko bere (000): a player-banked 21 with a 32-card deck.
//!
//! The players play against a `banker` (bankéř) who holds the `bank` (bank) and deals. There
//! is no house limits table and no payout table: every stake is matched 1:1 from the bank, and
//! every rule that decides who wins what is a parameter here, in the order of the document
//! ("Rules" › Rounds › Card values › Special cases › End of the game).

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::cards::{Card, DeckKind, Rank, Shoe};
use crate::money::Ratio;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OkoBereRules {
    /// "a deck of 32 cards (7, 8, 9, 10, jacks, queens, kings and aces …)".
    pub shoe: Shoe,
    /// Most players at the table, the banker included. The document gives no number.
    pub players_max: u8,
    /// How the first banker is chosen, and a new one after "malá domů".
    pub banker_selection: BankerSelection,
    /// Smallest bank a banker may set up, minor units ("A minimum amount for setting up a
    /// bank … is usually determined before the game").
    pub min_bank: i64,
    /// Smallest bet, minor units ("… and minimal bet size").
    pub min_bet: i64,
    /// What "it is possible to bet up to the bank" limits.
    pub bet_cap: BetCap,
    /// "Winnings are therefore paid out as an equal bet with a payout ratio of 1:1": the bank
    /// adds the same amount to every bet.
    pub win_ratio: Ratio,
    /// "The player can also before drawing each card increase his bet. Whenever player bets,
    /// the banker adds the same amount to the bet from the bank."
    pub raise_before_each_card: bool,
    /// When a player bets: "The player has three options during his turn - draw another card,
    /// bet or stop."
    pub bet_timing: BetTiming,
    /// Smallest raise, minor units. The document gives a "minimal bet size" only.
    pub min_raise: i64,
    /// Whether a bet or a raise below `min_bet` / `min_raise` may take exactly what is left of
    /// the bank ("it is possible to bet up to the bank") when less than the minimum is left.
    pub rest_of_bank_below_min: bool,
    /// The cut (sejmutí) at the start of each round.
    pub cut: Cut,
    /// The duel (duel): the round is played between the banker and the cutting player only.
    pub duel: Duel,
    /// Who acts first after the deal.
    pub first_to_act: FirstToAct,
    /// "reach or get as close as possible to a total of twenty-one without overdrawing".
    pub target_total: u8,
    /// The value of each rank of the deck, exactly once per rank.
    pub card_values: Vec<CardValue>,
    /// Cards whose value the holder chooses from a list (7♥, "šantala").
    #[serde(default)]
    pub wild_cards: Vec<WildCard>,
    /// Two-card hands that win at once, "independently of hand of the other side".
    pub outright_wins: Vec<OutrightWin>,
    /// When both sides hold an outright win.
    pub outright_against_outright: Winner,
    /// Hands whose holder "can ask to get his cards replaced".
    pub replaceable_hands: Vec<ReplaceableHand>,
    /// Whether the banker may also ask for a replacement ("If the player (including banker)").
    pub banker_may_replace: bool,
    /// How a replacement is made.
    pub replacement: Replacement,
    /// "he can ask for cards or stop": the banker draws at will, there is no drawing rule.
    pub banker_drawing: BankerDrawing,
    /// "if he overdraws, he immediately loses his bet, which goes to the bank".
    pub player_bust: PlayerBust,
    /// "In case the banker overdraws, he looses all active bets."
    pub banker_bust: BankerBust,
    /// "if the player has less or the same amount as banker, the money goes to the bank".
    pub ties: Winner,
    /// "Empty banks".
    pub empty_bank: EmptyBank,
    /// "Malá domů" (literally "the little one goes home").
    pub mala_domu: MalaDomu,
    pub clause: String,
}

/// The eight ranks of the 32-card deck, written as on the cards.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
pub enum PiquetRank {
    #[serde(rename = "7")]
    Seven,
    #[serde(rename = "8")]
    Eight,
    #[serde(rename = "9")]
    Nine,
    #[serde(rename = "10")]
    Ten,
    #[serde(rename = "J")]
    Jack,
    #[serde(rename = "Q")]
    Queen,
    #[serde(rename = "K")]
    King,
    #[serde(rename = "A")]
    Ace,
}

impl PiquetRank {
    pub const ALL: [PiquetRank; 8] = [
        PiquetRank::Seven,
        PiquetRank::Eight,
        PiquetRank::Nine,
        PiquetRank::Ten,
        PiquetRank::Jack,
        PiquetRank::Queen,
        PiquetRank::King,
        PiquetRank::Ace,
    ];

    pub fn rank(self) -> Rank {
        match self {
            PiquetRank::Seven => Rank::Seven,
            PiquetRank::Eight => Rank::Eight,
            PiquetRank::Nine => Rank::Nine,
            PiquetRank::Ten => Rank::Ten,
            PiquetRank::Jack => Rank::Jack,
            PiquetRank::Queen => Rank::Queen,
            PiquetRank::King => Rank::King,
            PiquetRank::Ace => Rank::Ace,
        }
    }

    pub fn of(rank: Rank) -> Option<PiquetRank> {
        PiquetRank::ALL.into_iter().find(|r| r.rank() == rank)
    }
}

/// "It is either agreed upon by the players or drawn from the deck of cards (the highest card
/// gives)."
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BankerSelection {
    /// The ways allowed, in order of precedence.
    pub methods: Vec<BankerMethod>,
    /// For `highest_card_drawn`: the ranks from lowest to highest.
    pub draw_rank_order: Vec<PiquetRank>,
    /// For `highest_card_drawn`: what happens when the highest rank is drawn by several.
    pub draw_tie: DrawTie,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BankerMethod {
    /// "agreed upon by the players".
    ByAgreement,
    /// "drawn from the deck of cards (the highest card gives)": everyone draws one card and
    /// the holder of the highest becomes banker and deals.
    HighestCardDrawn,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DrawTie {
    /// Only the tied players draw again.
    TiedPlayersDrawAgain,
}

/// "it is possible to bet up to the bank".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BetCap {
    /// The sum of every active bet of the round (raises included) may not exceed the bank, so
    /// the bank can always match and pay every bet.
    TotalActiveBetsAtMostBank,
    /// Each player's bet on its own may reach the bank.
    EachBetAtMostBank,
}

/// "The player has three options during his turn - draw another card, bet or stop."
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BetTiming {
    /// Each player bets in his own turn, holding his first card and before his second. A
    /// player who says "enough" without a bet takes no part in the round; no card is dealt to
    /// a player with nothing at stake; a raise is made for the next card, which follows it.
    OwnTurnAfterFirstCard,
}

/// "At the start of each round the banker asks one player to slice the deck."
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Cut {
    pub every_round: bool,
    pub by: CutBy,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CutBy {
    /// "the banker asks one player".
    PlayerChosenByBanker,
}

/// "This could result in duel if both side agree - that means the following round will be
/// only between the two of them."
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Duel {
    /// Whether a duel may be offered at all.
    pub allowed: bool,
    /// When: after the cut, by the cutting player.
    pub offered: DuelOffer,
    /// "It's important that the banker has the right to decline offer after hearing initial
    /// bet size."
    pub banker_may_refuse_after_hearing_stake: bool,
    /// "The bet in this case can't be increased".
    pub raise_allowed: bool,
    /// "… and the cards can't be exchanged" (no replacement in a duel).
    pub card_exchange_allowed: bool,
    /// "the card at the bottom of sliced counts as first card for both".
    pub first_card: DuelFirstCard,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DuelOffer {
    /// The player who cut offers the duel, with his stake, once the deck is cut.
    ByCutterAfterCut,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DuelFirstCard {
    /// The bottom card of the cut packet is the first card of both the banker and the player.
    BottomCardOfCutSharedByBoth,
}

/// "The first player on the right side of player slicing starts."
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FirstToAct {
    /// The player to the right of the cutter starts; play goes on to the right (counter-
    /// clockwise) and reaches the banker last. The first card of each player is dealt in the
    /// same order, the banker's last.
    RightOfCutterThenRightwardsBankerLast,
}

/// One row of "The card values".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CardValue {
    pub rank: PiquetRank,
    pub value: u8,
}

/// A card whose holder chooses its value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WildCard {
    /// `santala` for 7♥.
    pub id: String,
    pub card: Card,
    /// Every value it may take, its face value among them.
    pub values: Vec<u8>,
    pub choice: WildChoice,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WildChoice {
    /// "according to what is most beneficial for the player": the value that gives the holder
    /// the best total, decided by the engine, not announced.
    BestForHolder,
}

/// A card as a pattern: a rank (`"A"`, any ace) or one card (`"7h"`, the seven of hearts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CardPattern {
    Rank(PiquetRank),
    Card(Card),
}

impl CardPattern {
    pub fn matches(self, card: Card) -> bool {
        match self {
            CardPattern::Rank(r) => r.rank() == card.rank,
            CardPattern::Card(c) => c == card,
        }
    }

    fn in_deck(self, deck: DeckKind) -> bool {
        match self {
            CardPattern::Rank(r) => deck.contains(Card::new(r.rank(), crate::cards::Suit::Hearts)),
            CardPattern::Card(c) => deck.contains(c),
        }
    }

    /// Copies of cards matching this pattern in `shoe`.
    fn copies_in(self, shoe: &Shoe) -> usize {
        shoe.deck
            .cards()
            .into_iter()
            .filter(|&c| self.matches(c))
            .count()
            * usize::from(shoe.decks)
    }
}

impl FromStr for CardPattern {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Ok(card) = s.parse::<Card>() {
            return Ok(CardPattern::Card(card));
        }
        let rank = match s {
            "7" => PiquetRank::Seven,
            "8" => PiquetRank::Eight,
            "9" => PiquetRank::Nine,
            "10" | "T" => PiquetRank::Ten,
            "J" => PiquetRank::Jack,
            "Q" => PiquetRank::Queen,
            "K" => PiquetRank::King,
            "A" => PiquetRank::Ace,
            _ => {
                return Err(format!(
                    "'{s}' is neither a rank of the 32-card deck (7, 8, 9, 10, J, Q, K, A) nor a card ('7h')"
                ))
            }
        };
        Ok(CardPattern::Rank(rank))
    }
}

impl fmt::Display for CardPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CardPattern::Rank(PiquetRank::Ten) => f.write_str("10"),
            CardPattern::Rank(r) => write!(f, "{}", r.rank().letter()),
            CardPattern::Card(c) => write!(f, "{c}"),
        }
    }
}

impl Serialize for CardPattern {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for CardPattern {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for CardPattern {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CardPattern".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A rank of the 32-card deck ('A': any ace) or one card ('7h')",
            "type": "string",
            "pattern": "^(7|8|9|10|T|J|Q|K|A)[cdhs]?$",
        })
    }
}

/// "When someone receives two aces or ace and šantala he automatically wins independently of
/// hand of the other side."
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutrightWin {
    pub id: String,
    /// The hand's cards, in any order; the hand is exactly these cards.
    pub cards: Vec<CardPattern>,
}

/// Who takes the stake when neither side beats the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Winner {
    Bank,
    Player,
}

/// One of "If the player (including banker) has on of the following hands, he can ask to get
/// his cards replced".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplaceableHand {
    pub id: String,
    pub when: HandCondition,
    /// The document's words for it.
    pub label: String,
}

/// A condition on a hand, as data an engine evaluates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum HandCondition {
    /// The hand is exactly these first cards, in this order ("First card eight followed by
    /// seven" is `["8", "7"]`).
    FirstCards(Vec<CardPattern>),
    /// The hand is this many cards, all pictures (J, Q, K).
    AllPictures(u8),
    /// The hand totals exactly this.
    Total(u8),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Replacement {
    /// Every card of the hand is put aside and as many new cards are dealt; the stake stays.
    EveryCardReplacedStakeStays,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BankerDrawing {
    /// The banker asks for cards or stops as he likes, like any player.
    FreeChoice,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlayerBust {
    /// The stake goes to the bank at once, whatever the banker later draws.
    StakeToBankImmediately,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BankerBust {
    /// Every bet still active (not busted) is paid at `win_ratio` from the bank.
    PaysAllActiveBets,
}

/// "The game can end in two ways - the bank is empty or the banker calls malá domů."
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EmptyBank {
    /// "the players decide whether they want to continue".
    pub continuation: Continuation,
    /// "If they do, the banker is the last player that placed the last bet which emptied out
    /// the bank."
    pub next_banker: NextBanker,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Continuation {
    PlayersDecide,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NextBanker {
    /// The player whose bet emptied the bank.
    PlayerWhoseBetEmptiedTheBank,
    /// Chosen again as at the start (`banker_selection`).
    SelectedAnew,
}

/// "If the bank is double the initial size and the banker is satisfied he can at the start of
/// the round call malá domů, that means if he receives an eight or a king as his first card he
/// keeps the bank and new banker is drawn. If he received other card the game continues
/// normal way."
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MalaDomu {
    /// The bank must be at least this multiple of the bank the banker set up.
    pub min_bank_multiple: u32,
    /// When it may be called.
    pub called: MalaDomuCall,
    /// First cards of the banker that let him keep the bank.
    pub keep_on_first_card: Vec<PiquetRank>,
    /// What happens to the round when he keeps the bank.
    pub on_keep: MalaDomuKeep,
    /// "new banker is drawn".
    pub next_banker: NextBanker,
    /// "If he received other card the game continues normal way."
    pub otherwise: MalaDomuOtherwise,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MalaDomuCall {
    AtStartOfRound,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MalaDomuKeep {
    /// The round ends at once and every stake placed in it is returned to its player.
    RoundEndsStakesReturned,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MalaDomuOtherwise {
    RoundContinues,
}

impl OkoBereRules {
    /// The value of `rank` in the card-value table.
    pub fn value_of(&self, rank: PiquetRank) -> Option<u8> {
        self.card_values
            .iter()
            .find(|v| v.rank == rank)
            .map(|v| v.value)
    }

    pub fn lint(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        let mut err = |path: &str, msg: String| out.push((format!("rules.oko_bere.{path}"), msg));

        if self.shoe.decks == 0 {
            err("shoe.decks", "a shoe holds at least one deck".into());
        }
        if self.players_max < 2 {
            err(
                "players_max",
                "the banker needs at least one other player".into(),
            );
        }
        if self.min_bet <= 0 {
            err(
                "min_bet",
                "the minimum bet is at least one minor unit".into(),
            );
        }
        if self.min_bank <= 0 {
            err(
                "min_bank",
                "the minimum bank is at least one minor unit".into(),
            );
        }
        if self.min_bet > self.min_bank {
            err(
                "min_bet",
                format!(
                    "the minimum bet {} exceeds the minimum bank {}: a minimal bank could not match a minimal bet",
                    self.min_bet, self.min_bank
                ),
            );
        }
        if self.min_raise <= 0 {
            err(
                "min_raise",
                "the minimum raise is at least one minor unit".into(),
            );
        }
        if self.min_raise > self.min_bank {
            err(
                "min_raise",
                format!(
                    "the minimum raise {} exceeds the minimum bank {}: a minimal bank could not match it",
                    self.min_raise, self.min_bank
                ),
            );
        }
        if self.win_ratio != Ratio::ONE {
            err(
                "win_ratio",
                format!(
                    "the bank matches each bet with the same amount, so a win pays 1:1, not {}",
                    self.win_ratio
                ),
            );
        }

        let sel = &self.banker_selection;
        if sel.methods.is_empty() {
            err(
                "banker_selection.methods",
                "at least one way of choosing the banker".into(),
            );
        }
        if sel.methods.contains(&BankerMethod::HighestCardDrawn) {
            let deck_ranks = deck_ranks(self.shoe.deck);
            if !same_set_once(&sel.draw_rank_order, &deck_ranks) {
                err(
                    "banker_selection.draw_rank_order",
                    "the draw for the banker must order every rank of the deck exactly once".into(),
                );
            }
        }

        if self.target_total == 0 {
            err("target_total", "the target total is positive".into());
        }

        // Card values: every rank the deck holds, exactly once, and nothing else.
        let deck_ranks = deck_ranks(self.shoe.deck);
        for rank in &deck_ranks {
            let n = self.card_values.iter().filter(|v| v.rank == *rank).count();
            if n != 1 {
                err(
                    "card_values",
                    format!(
                        "rank {} has {n} values; the table gives each rank of the deck exactly once",
                        CardPattern::Rank(*rank)
                    ),
                );
            }
        }
        if deck_ranks.len() != PiquetRank::ALL.len() {
            err(
                "shoe.deck",
                "Oko bere is played with the 32-card deck (7 … A)".into(),
            );
        }
        for v in &self.card_values {
            if v.value == 0 {
                err(
                    "card_values",
                    format!(
                        "rank {} is worth 0; every card counts",
                        CardPattern::Rank(v.rank)
                    ),
                );
            }
        }

        let mut ids = std::collections::HashSet::new();
        for w in &self.wild_cards {
            let p = format!("wild_cards[{}]", w.id);
            if !ids.insert(w.id.as_str()) {
                err(&p, "wild card listed twice".into());
            }
            if !self.shoe.deck.contains(w.card) {
                err(
                    &format!("{p}.card"),
                    format!("{} is not in the deck", w.card),
                );
            }
            let mut values = w.values.clone();
            values.sort_unstable();
            values.dedup();
            if values.len() != w.values.len() || values.is_empty() {
                err(
                    &format!("{p}.values"),
                    "give each possible value once".into(),
                );
            }
            let face = PiquetRank::of(w.card.rank).and_then(|r| self.value_of(r));
            if let Some(face) = face {
                if !w.values.contains(&face) {
                    err(
                        &format!("{p}.values"),
                        format!("{} keeps its face value {face} among its choices", w.card),
                    );
                }
            }
            if w.values.iter().any(|&v| v == 0 || v > self.target_total) {
                err(
                    &format!("{p}.values"),
                    format!("values lie between 1 and the target {}", self.target_total),
                );
            }
        }

        let mut ids = std::collections::HashSet::new();
        for o in &self.outright_wins {
            let p = format!("outright_wins[{}]", o.id);
            if !ids.insert(o.id.as_str()) {
                err(&p, "outright win listed twice".into());
            }
            if o.cards.len() < 2 {
                err(
                    &format!("{p}.cards"),
                    "an outright win is a hand of at least two cards".into(),
                );
            }
            check_patterns(&self.shoe, &o.cards, &format!("{p}.cards"), &mut err);
        }

        let mut ids = std::collections::HashSet::new();
        for h in &self.replaceable_hands {
            let p = format!("replaceable_hands[{}]", h.id);
            if !ids.insert(h.id.as_str()) {
                err(&p, "replaceable hand listed twice".into());
            }
            match &h.when {
                HandCondition::FirstCards(cards) => {
                    if cards.is_empty() {
                        err(&format!("{p}.when"), "name at least one card".into());
                    }
                    check_patterns(&self.shoe, cards, &format!("{p}.when"), &mut err);
                }
                HandCondition::AllPictures(n) => {
                    let pictures = usize::from(self.shoe.decks) * 12;
                    if *n == 0 || usize::from(*n) > pictures {
                        err(
                            &format!("{p}.when"),
                            format!("a hand of {n} pictures cannot be dealt from this shoe"),
                        );
                    }
                }
                HandCondition::Total(t) => {
                    if *t == 0 || *t > self.target_total {
                        err(
                            &format!("{p}.when"),
                            format!(
                                "a total of {t} is not a standing hand below the target {}",
                                self.target_total
                            ),
                        );
                    }
                }
            }
        }

        let m = &self.mala_domu;
        if m.min_bank_multiple < 1 {
            err(
                "mala_domu.min_bank_multiple",
                "the bank must be at least the initial bank (multiple ≥ 1)".into(),
            );
        }
        if m.keep_on_first_card.is_empty() {
            err(
                "mala_domu.keep_on_first_card",
                "name the first cards that keep the bank".into(),
            );
        }
        let mut keep = m.keep_on_first_card.clone();
        keep.sort_unstable();
        keep.dedup();
        if keep.len() != m.keep_on_first_card.len() {
            err(
                "mala_domu.keep_on_first_card",
                "a rank is listed twice".into(),
            );
        }
        out
    }
}

fn deck_ranks(deck: DeckKind) -> Vec<PiquetRank> {
    let mut ranks: Vec<PiquetRank> = deck
        .cards()
        .into_iter()
        .filter_map(|c| PiquetRank::of(c.rank))
        .collect();
    ranks.dedup();
    // Ranks below 7 (a 52-card deck) have no PiquetRank: count them as missing.
    if deck
        .cards()
        .iter()
        .any(|c| PiquetRank::of(c.rank).is_none())
    {
        ranks.clear();
    }
    ranks
}

fn same_set_once(list: &[PiquetRank], set: &[PiquetRank]) -> bool {
    list.len() == set.len()
        && set
            .iter()
            .all(|r| list.iter().filter(|x| *x == r).count() == 1)
}

/// Every pattern names a card of the deck, and the shoe holds enough copies for the hand.
fn check_patterns(
    shoe: &Shoe,
    cards: &[CardPattern],
    path: &str,
    err: &mut impl FnMut(&str, String),
) {
    for c in cards {
        if !c.in_deck(shoe.deck) {
            err(path, format!("{c} is not in the deck"));
        }
    }
    for (i, c) in cards.iter().enumerate() {
        // The same pattern named several times needs as many distinct cards.
        let needed = cards[..=i].iter().filter(|o| **o == *c).count();
        if needed > c.copies_in(shoe) {
            err(
                path,
                format!("the shoe does not hold {needed} cards matching {c}"),
            );
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> CardPattern {
        s.parse().unwrap()
    }

    /// The rules of 000 as the plan states them.
    fn rules() -> OkoBereRules {
        use PiquetRank::*;
        OkoBereRules {
            shoe: Shoe::new(DeckKind::Piquet32, 1),
            players_max: 8,
            banker_selection: BankerSelection {
                methods: vec![BankerMethod::ByAgreement, BankerMethod::HighestCardDrawn],
                draw_rank_order: PiquetRank::ALL.to_vec(),
                draw_tie: DrawTie::TiedPlayersDrawAgain,
                clause: "Rules".into(),
            },
            min_bank: 10_000,
            min_bet: 1_000,
            bet_cap: BetCap::TotalActiveBetsAtMostBank,
            win_ratio: Ratio::ONE,
            raise_before_each_card: true,
            bet_timing: BetTiming::OwnTurnAfterFirstCard,
            min_raise: 1_000,
            rest_of_bank_below_min: true,
            cut: Cut {
                every_round: true,
                by: CutBy::PlayerChosenByBanker,
                clause: "Rounds".into(),
            },
            duel: Duel {
                allowed: true,
                offered: DuelOffer::ByCutterAfterCut,
                banker_may_refuse_after_hearing_stake: true,
                raise_allowed: false,
                card_exchange_allowed: false,
                first_card: DuelFirstCard::BottomCardOfCutSharedByBoth,
                clause: "Rounds".into(),
            },
            first_to_act: FirstToAct::RightOfCutterThenRightwardsBankerLast,
            target_total: 21,
            card_values: [
                (Seven, 7),
                (Eight, 8),
                (Nine, 9),
                (Ten, 10),
                (Jack, 1),
                (Queen, 1),
                (King, 1),
                (Ace, 11),
            ]
            .into_iter()
            .map(|(rank, value)| CardValue { rank, value })
            .collect(),
            wild_cards: vec![WildCard {
                id: "santala".into(),
                card: "7h".parse().unwrap(),
                values: vec![7, 10, 11],
                choice: WildChoice::BestForHolder,
            }],
            outright_wins: vec![
                OutrightWin {
                    id: "two_aces".into(),
                    cards: vec![p("A"), p("A")],
                },
                OutrightWin {
                    id: "ace_and_santala".into(),
                    cards: vec![p("A"), p("7h")],
                },
            ],
            outright_against_outright: Winner::Bank,
            replaceable_hands: vec![
                ReplaceableHand {
                    id: "first_card_seven".into(),
                    when: HandCondition::FirstCards(vec![p("7")]),
                    label: "First card seven".into(),
                },
                ReplaceableHand {
                    id: "eight_then_seven".into(),
                    when: HandCondition::FirstCards(vec![p("8"), p("7")]),
                    label: "First card eight followed by seven".into(),
                },
                ReplaceableHand {
                    id: "five_pictures".into(),
                    when: HandCondition::AllPictures(5),
                    label: "Five images".into(),
                },
                ReplaceableHand {
                    id: "total_fifteen".into(),
                    when: HandCondition::Total(15),
                    label: "Cards which totals to 15".into(),
                },
            ],
            banker_may_replace: true,
            replacement: Replacement::EveryCardReplacedStakeStays,
            banker_drawing: BankerDrawing::FreeChoice,
            player_bust: PlayerBust::StakeToBankImmediately,
            banker_bust: BankerBust::PaysAllActiveBets,
            ties: Winner::Bank,
            empty_bank: EmptyBank {
                continuation: Continuation::PlayersDecide,
                next_banker: NextBanker::PlayerWhoseBetEmptiedTheBank,
                clause: "Empty banks".into(),
            },
            mala_domu: MalaDomu {
                min_bank_multiple: 2,
                called: MalaDomuCall::AtStartOfRound,
                keep_on_first_card: vec![Eight, King],
                on_keep: MalaDomuKeep::RoundEndsStakesReturned,
                next_banker: NextBanker::SelectedAnew,
                otherwise: MalaDomuOtherwise::RoundContinues,
                clause: "Malá domů".into(),
            },
            clause: "Rules".into(),
        }
    }

    fn complaints(r: &OkoBereRules) -> Vec<String> {
        r.lint().into_iter().map(|(path, _)| path).collect()
    }

    #[test]
    fn the_documents_rules_are_consistent() {
        assert_eq!(rules().lint(), Vec::<(String, String)>::new());
    }

    #[test]
    fn card_value_table_covers_every_rank_once() {
        let mut r = rules();
        r.card_values.pop(); // no ace
        assert!(complaints(&r).contains(&"rules.oko_bere.card_values".to_string()));
        let mut r = rules();
        r.card_values.push(CardValue {
            rank: PiquetRank::Jack,
            value: 2,
        });
        assert!(complaints(&r).contains(&"rules.oko_bere.card_values".to_string()));
    }

    #[test]
    fn card_value_table_needs_the_32_card_deck() {
        let mut r = rules();
        r.shoe = Shoe::new(DeckKind::Standard52, 1);
        assert!(complaints(&r).contains(&"rules.oko_bere.shoe.deck".to_string()));
    }

    #[test]
    fn santala_values_include_its_face_value() {
        let mut r = rules();
        r.wild_cards[0].values = vec![10, 11];
        assert_eq!(
            complaints(&r),
            vec!["rules.oko_bere.wild_cards[santala].values".to_string()]
        );
    }

    #[test]
    fn santala_values_are_given_once_each() {
        let mut r = rules();
        r.wild_cards[0].values = vec![7, 10, 10];
        assert_eq!(
            complaints(&r),
            vec!["rules.oko_bere.wild_cards[santala].values".to_string()]
        );
    }

    #[test]
    fn wild_card_must_be_in_the_deck() {
        let mut r = rules();
        r.wild_cards[0].card = "6h".parse().unwrap();
        assert!(complaints(&r).contains(&"rules.oko_bere.wild_cards[santala].card".to_string()));
    }

    #[test]
    fn win_ratio_must_be_even_money() {
        let mut r = rules();
        r.win_ratio = "3:2".parse().unwrap();
        assert_eq!(complaints(&r), vec!["rules.oko_bere.win_ratio".to_string()]);
    }

    #[test]
    fn minimum_bet_must_fit_in_the_minimum_bank() {
        let mut r = rules();
        r.min_bet = r.min_bank + 1;
        assert_eq!(complaints(&r), vec!["rules.oko_bere.min_bet".to_string()]);
        let mut r = rules();
        r.min_bet = 0;
        assert_eq!(complaints(&r), vec!["rules.oko_bere.min_bet".to_string()]);
    }

    #[test]
    fn minimum_raise_must_fit_in_the_minimum_bank() {
        let mut r = rules();
        r.min_raise = r.min_bank + 1;
        assert_eq!(complaints(&r), vec!["rules.oko_bere.min_raise".to_string()]);
        let mut r = rules();
        r.min_raise = 0;
        assert_eq!(complaints(&r), vec!["rules.oko_bere.min_raise".to_string()]);
    }

    #[test]
    fn mala_domu_multiplier_must_be_at_least_one() {
        let mut r = rules();
        r.mala_domu.min_bank_multiple = 0;
        assert_eq!(
            complaints(&r),
            vec!["rules.oko_bere.mala_domu.min_bank_multiple".to_string()]
        );
    }

    #[test]
    fn mala_domu_needs_its_keeping_cards() {
        let mut r = rules();
        r.mala_domu.keep_on_first_card.clear();
        assert_eq!(
            complaints(&r),
            vec!["rules.oko_bere.mala_domu.keep_on_first_card".to_string()]
        );
    }

    #[test]
    fn outright_hand_must_be_dealable_from_the_shoe() {
        let mut r = rules();
        r.outright_wins[1].cards = vec![p("7h"), p("7h")];
        assert_eq!(
            complaints(&r),
            vec!["rules.oko_bere.outright_wins[ace_and_santala].cards".to_string()]
        );
        // Two of the same card are possible with two decks.
        r.shoe.decks = 2;
        assert!(r.lint().is_empty());
    }

    #[test]
    fn replaceable_total_must_lie_below_the_target() {
        let mut r = rules();
        r.replaceable_hands[3].when = HandCondition::Total(22);
        assert_eq!(
            complaints(&r),
            vec!["rules.oko_bere.replaceable_hands[total_fifteen].when".to_string()]
        );
    }

    #[test]
    fn banker_draw_orders_every_rank_once() {
        let mut r = rules();
        r.banker_selection.draw_rank_order.pop();
        assert_eq!(
            complaints(&r),
            vec!["rules.oko_bere.banker_selection.draw_rank_order".to_string()]
        );
    }

    #[test]
    fn card_patterns_read_ranks_and_cards() {
        assert_eq!(p("A"), CardPattern::Rank(PiquetRank::Ace));
        assert_eq!(p("10"), CardPattern::Rank(PiquetRank::Ten));
        assert_eq!(p("7h"), CardPattern::Card("7h".parse().unwrap()));
        assert!("6".parse::<CardPattern>().is_err());
        assert_eq!(p("10").to_string(), "10");
        assert_eq!(p("7h").to_string(), "7h");
        assert!(p("A").matches("As".parse().unwrap()));
        assert!(!p("7h").matches("7s".parse().unwrap()));
    }
}
