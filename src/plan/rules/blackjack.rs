//! Blackjack in all its configurations: seated (7 boxes, Bet Behind), common hand (unlimited
//! players sharing one hand: Infinite Blackjack, All Bets Blackjack, BLACKJACK – ENDLESS),
//! single deck with peek (001) and the Czech variant with its optional rules (003).
//!
//! Every rule that the documents let differ between studios and variants is a parameter here,
//! in the order the documents describe a round: the shoe and how hands are counted, seating,
//! the dealer, naturals ("blackjack"), double, split, insurance, surrender, Bet Behind and the
//! side bets. Ratios are not here: they live in the plan's `[[payouts]]` rows, under the
//! outcome classes of [`BETS`]. An engine reads these parameters and hard-codes none of them.

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::BetSpec;
use crate::cards::{DeckKind, Shoe};
use crate::money::Ratio;
use crate::plan::model::Plan;

/// Outcome classes shared by the three pair bets ("Perfect Pairs", "Hráčův pár", "Dealerův
/// pár", "Páry"): "Dokonalý pár" (same suit), "Stejně barevný pár" (same colour, other suit),
/// "Smíšený pár" (different colours).
const PAIR_OUTCOMES: &[&str] = &["perfect_pair", "coloured_pair", "mixed_pair"];

/// A hand's own stakes: the main bet and the Bet Behind that copies it.
const HAND_OUTCOMES: &[&str] = &["win", "blackjack", "push", "surrender"];

pub const BETS: &[BetSpec] = &[
    BetSpec {
        id: "main",
        summary: "the main bet on a hand (\"Základní sázka\")",
        outcomes: HAND_OUTCOMES,
    },
    BetSpec {
        id: "bet_behind",
        summary: "a bet on another player's box that follows its owner's decisions (\"Bet Behind\")",
        outcomes: HAND_OUTCOMES,
    },
    BetSpec {
        id: "split",
        summary: "the stake added by a split, equal to the original stake (\"Rozdělení\")",
        outcomes: &["win", "push"],
    },
    BetSpec {
        id: "double",
        summary: "the stake added by a double, equal to the original stake (\"Zdvojnásobení\")",
        outcomes: &["win", "push"],
    },
    BetSpec {
        id: "insurance",
        summary: "the dealer has blackjack; offered when the dealer's first card is an ace (\"Pojištění\")",
        outcomes: &["win"],
    },
    BetSpec {
        id: "perfect_pairs",
        summary: "the player's first two cards form a pair (\"Perfect Pairs\", ALG Endless \"Páry\")",
        outcomes: PAIR_OUTCOMES,
    },
    BetSpec {
        id: "player_pair",
        summary: "the player's first two cards form a pair (\"Hráčův pár (Player Perfect Pairs)\")",
        outcomes: PAIR_OUTCOMES,
    },
    BetSpec {
        id: "dealer_pair",
        summary: "the dealer's first two cards form a pair (\"Dealerův pár (Dealer Perfect Pairs)\")",
        outcomes: PAIR_OUTCOMES,
    },
    BetSpec {
        id: "twenty_one_plus_three",
        summary: "the player's first two cards and the dealer's first card as a three-card poker hand (\"21+3\")",
        outcomes: &[
            // "Trojice v barvě", "Čistá postupka", "Trojice", "Postupka", "Barva"
            "suited_trips",
            "straight_flush",
            "three_of_a_kind",
            "straight",
            "flush",
        ],
    },
    BetSpec {
        id: "top_3",
        summary: "the player's first two cards and the dealer's first card as a three-card poker hand (\"Top 3\")",
        // "Trojice v barvě", "Postupka v barvě", "Trojice"
        outcomes: &["suited_trips", "straight_flush", "three_of_a_kind"],
    },
    BetSpec {
        id: "hot_3",
        summary: "the total of the player's first two cards and the dealer's first card (\"Hot 3\")",
        outcomes: &[
            // "7-7-7", "Součet 21 karet v barvě", "Součet 21 karet různé barvy", "Součet 20",
            // "Součet 19"
            "seven_seven_seven",
            "suited_21",
            "unsuited_21",
            "total_20",
            "total_19",
        ],
    },
    BetSpec {
        id: "lucky_lucky",
        summary: "the player's first two cards and the dealer's first card: 777, 678 or a total of 19–21 (\"Lucky Lucky\")",
        outcomes: &[
            // "777 v barvě", "678 v barvě", "777", "678", "21 v barvě", "21", "Jakákoliv 20",
            // "Jakákoliv 19"
            "suited_777",
            "suited_678",
            "unsuited_777",
            "unsuited_678",
            "suited_21",
            "unsuited_21",
            "any_20",
            "any_19",
        ],
    },
    BetSpec {
        id: "bust_it",
        summary: "the dealer busts, paid by the number of the dealer's cards; returned when the player has blackjack (\"Bust It\")",
        outcomes: &[
            // "Přes limit se 3 kartami" … "Přes limit s 8 a více kartami"
            "bust_3_cards",
            "bust_4_cards",
            "bust_5_cards",
            "bust_6_cards",
            "bust_7_cards",
            "bust_8_plus_cards",
            // "Vedlejší sázka Bust It se vrací, pokud má sázející Blackjack": a refund row.
            "player_blackjack",
        ],
    },
    BetSpec {
        id: "buster",
        summary: "the dealer busts, paid by the number of the dealer's cards, more with a player blackjack (\"Buster\")",
        outcomes: &[
            // "8+ karet a hráč má blackjack", "7 karet a hráč má blackjack", "8+ karet",
            // "7 karet", "6 karet", "5 karet", "3 nebo 4 karty"
            "bust_8_plus_cards_with_player_blackjack",
            "bust_7_cards_with_player_blackjack",
            "bust_8_plus_cards",
            "bust_7_cards",
            "bust_6_cards",
            "bust_5_cards",
            "bust_3_or_4_cards",
        ],
    },
];

/// The bet types of [`BETS`] that a hand's own play creates (everything else is a side bet).
const HAND_BETS: &[&str] = &["main", "bet_behind", "split", "double", "insurance"];

/// Which cards each side bet is decided on. Fixed by the bet type; the plan states it so that
/// a reader sees it, and lint refuses a plan that states anything else.
const SIDE_BET_CARDS: &[(&str, SideBetCards)] = &[
    ("perfect_pairs", SideBetCards::PlayerFirstTwo),
    ("player_pair", SideBetCards::PlayerFirstTwo),
    ("dealer_pair", SideBetCards::DealerFirstTwo),
    (
        "twenty_one_plus_three",
        SideBetCards::PlayerFirstTwoAndDealerFirst,
    ),
    ("top_3", SideBetCards::PlayerFirstTwoAndDealerFirst),
    ("hot_3", SideBetCards::PlayerFirstTwoAndDealerFirst),
    ("lucky_lucky", SideBetCards::PlayerFirstTwoAndDealerFirst),
    ("bust_it", SideBetCards::DealerFinalHand),
    ("buster", SideBetCards::DealerFinalHand),
];

/// `[rules.blackjack]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BlackjackRules {
    /// "Hraje se s osmi balíčky karet" (002); "1 deck" (001).
    pub shoe: Shoe,
    /// How aces count ("Esa mohou mít dvě různé hodnoty, jedna a jedenáct").
    pub ace_counting: AceCounting,
    /// The player's cards are dealt face up. 003 lets this vary ("zda se karty rozdávají
    /// každému tajně, nebo … aversem vzhůru"); 002 deals them "lícem nahoru".
    pub player_cards_face_up: bool,
    /// A player who busts loses even if the dealer busts afterwards ("Hráč, který je „trop“,
    /// vždy prohrává a to i tehdy, pokud je „trop“ i bankéř"; 001 "If both the dealer and
    /// player bust, the player loses").
    pub player_bust_loses_even_if_dealer_busts: bool,
    pub seating: Seating,
    pub dealer: DealerRules,
    /// The natural: an ace and a ten-value card as the first two cards.
    pub blackjack: NaturalRules,
    /// "Zdvojnásobit (Double)".
    pub double: DoubleRules,
    /// "Rozdělit (Split)".
    pub split: SplitRules,
    /// "Pojištění (Insurance)".
    pub insurance: InsuranceRules,
    /// "Vybrat (Surrender)" / "Vzdat se (Surrender)".
    pub surrender: SurrenderRules,
    /// "Bet Behind": a bet on a box played by another player.
    pub bet_behind: BetBehindRules,
    /// "Vedlejší sázky": every side bet of the game; each also appears in `[[bets]]`.
    #[serde(default)]
    pub side_bets: Vec<SideBet>,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AceCounting {
    /// Each ace counts 1 or 11, whichever is better for the hand; at most one ace of a hand
    /// can count 11, so two aces make 12 ("dvě esa mají součet 12 (11+1)", 003) and never 22.
    OneOrEleven,
}

/// "Usazení ke stolu": boxes at the table, or one common hand for everyone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Seating {
    pub model: SeatingModel,
    /// Boxes on the layout ("7 boxů pro umístění sázek"); only with `model = "seats"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seats: Option<u8>,
    /// Fewest players a round is dealt for ("jeden až sedm sázejících"; 003 "pro 2 až 6
    /// hráčů").
    pub min_players: u16,
    /// Most players; absent means unlimited ("neomezený počet sázejících").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_players: Option<u16>,
    /// Only with `model = "common_hand"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub common_hand: Option<CommonHandRules>,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SeatingModel {
    /// Each player plays his own box.
    Seats,
    /// Every player shares the first two cards ("1 box pro umístění sázek") and decides for
    /// himself; the dealer deals further cards in one sequence for all.
    CommonHand,
}

/// The rules peculiar to a common hand ("S ohledem na povahu této hry …").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CommonHandRules {
    /// Cards dealt after a player stood, for players who hit, count nothing for him ("mají
    /// tyto další karty pro sázejícího, který zvolil volbu „Stát“, hodnotu 0").
    pub cards_after_stand_count_zero: bool,
    /// When others split and he does not, his hand takes the cards in the order the dealer
    /// deals them ("rozhodující karty v takovém pořadí, jak je krupiér sázejícímu rozdává").
    pub non_splitter_takes_cards_in_dealing_order: bool,
    pub clause: String,
}

/// "Pravidla pro hru krupiéra".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DealerRules {
    /// The dealer stands on this total or more and draws below it ("Pokud je součet hodnot
    /// karet krupiéra 16 nebo nižší, krupiér povinně bere další kartu").
    pub stand_on: u8,
    /// What the dealer does on a soft `stand_on` (an ace counted 11).
    pub soft_17: Soft17,
    /// Whether the dealer has a second, face-down card and when it is looked at.
    pub hole_card: HoleCard,
    /// With `hole_card = "peek"`: on which first cards the dealer checks for blackjack.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peek_on: Option<PeekOn>,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Soft17 {
    /// "krupiér musí kartu eso vždy počítat s hodnotou 11 a další kartu tedy již vzít nesmí".
    Stand,
    /// "Soft 17: dealer hits" (001).
    Hit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HoleCard {
    /// A face-down second card that the dealer checks for blackjack before the players act
    /// ("Dealer peeks for blackjack (US)", 001): a dealer blackjack ends the round at once.
    Peek,
    /// A face-down second card revealed only when the dealer plays, after every player
    /// ("K odkrytí této skryté karty krupiéra dojde v momentu, kdy na něj přijde řada").
    RevealedAfterPlayers,
    /// No second card until the players are done: the dealer gets one card in the first
    /// pass ("Na začátku hry tedy každý hráč obdrží dvě karty a bankéř pouze jednu", 003).
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PeekOn {
    Ace,
    AceOrTen,
}

/// "Nejlepší hand ve hře Blackjack se nazývá „blackjack“".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NaturalRules {
    /// An ace and a ten on a split hand is a blackjack (paid `main/blackjack`) rather than an
    /// ordinary 21 ("Po rozdělení není možné sestavit nejlepší hand „blackjack“").
    pub after_split_is_blackjack: bool,
    /// A dealer blackjack beats a player's 21 of three or more cards (003 "prohrávají svou
    /// sázku všichni hráči s výjimkou těch, kteří sami mají black jack").
    pub dealer_blackjack_beats_player_21: bool,
    /// When a player's blackjack is paid.
    pub player_blackjack_paid: BlackjackPaid,
    /// Without a peek: which of a hand's stakes a dealer blackjack takes. With a peek the
    /// round ends before anyone doubles or splits, so the question does not arise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dealer_blackjack_takes: Option<DealerBlackjackTakes>,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BlackjackPaid {
    /// "the player is paid out immediately" (001): needs a peek that rules out a dealer
    /// blackjack.
    Immediately,
    /// "Jakmile krupiér dokončí svůj hand, obdrží sázející svoji výhru".
    AfterDealerHand,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DealerBlackjackTakes {
    /// Every stake of the hand: the original, doubles and splits.
    AllStakes,
    /// The original stake only; doubles and splits are returned.
    OriginalStakeOnly,
}

/// "Zdvojnásobit (Double)": the stake is doubled and the hand gets `cards_dealt` more cards.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DoubleRules {
    pub allowed: bool,
    /// Which two-card hands may double. Required when allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on: Option<DoubleOn>,
    /// With `on = "totals"`: the totals that may double (003 "Omezení double … například
    /// pouze při součtu 9, 10 nebo 11"). A hand's total is its best total.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub totals: Vec<u8>,
    /// Doubling on a hand made by a split ("Pokud Sázející zvolí možnost Rozdělit, nemůže
    /// již v rámci rozdělených hand zvolit možnost Zdvojnásobit"; 003 "Double po split").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_split: Option<bool>,
    /// Cards the hand receives after doubling ("obdrží už jen jednu další kartu").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cards_dealt: Option<u8>,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DoubleOn {
    /// Any first two cards ("Double Down: any two cards").
    AnyTwoCards,
    /// Only first two cards whose total is listed in `totals`.
    Totals,
}

/// "Rozdělit (Split)".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SplitRules {
    pub allowed: bool,
    /// Which two cards make a pair. Required when allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair: Option<PairMatch>,
    /// Most hands one original hand may become: 2 is one split, 4 is "a maximum of 3 times
    /// to make 4 hands" (001). Above 2 is re-splitting (003 "Vícenásobný split").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_hands: Option<u8>,
    /// Two ten-value cards may be split (003 "Zákaz split na desítku" turns this off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ten_value_cards: Option<bool>,
    /// Each split ace gets exactly one card and the hand ends ("pokud jsou Sázejícímu
    /// rozdána dvě esa, může táhnout na každý nový hand už jen jednu kartu").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aces_one_card: Option<bool>,
    /// A split ace that receives another ace may be split again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resplit_aces: Option<bool>,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PairMatch {
    /// Same value: any two ten-value cards (J + Q) are a pair ("stejnou hodnotu";
    /// "cards which are equally valued").
    SameValue,
    /// Same rank only: J + J, not J + Q.
    SameRank,
}

/// "Pojištění (Insurance)": a bet that the dealer has blackjack, offered on a dealer ace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InsuranceRules {
    pub offered: bool,
    /// The insurance stake as a share of the main bet ("vsadit polovinu částky své původní
    /// sázky"). Required when offered; at most 1/2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fraction_of_main: Option<Ratio>,
    /// Whether the stake must be exactly `fraction_of_main` or may be less.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stake: Option<InsuranceStake>,
    /// Insurance for a Bet Behind ("Pojištění je pro Bet Behind Sázejícího k dispozici" /
    /// "není … k dispozici"). Required exactly when Bet Behind is allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub for_bet_behind: Option<bool>,
    /// Insurance for a disconnected player (ALG Endless: "nemá nárok na pojištění").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub for_disconnected: Option<bool>,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InsuranceStake {
    Exactly,
    AtMost,
}

/// "Vybrat (Surrender)": the player gives up the hand and gets back the share of the main bet
/// given by the `main/surrender` refund row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SurrenderRules {
    pub allowed: bool,
    /// Offered only in the first round of decisions ("Funkce Surrender je nabídnuta pouze
    /// jednou, během prvního kola voleb").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_decision_only: Option<bool>,
    /// Not offered on a blackjack ("Funkce Surrender není k dispozici, pokud má Sázející
    /// Blackjack").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_with_blackjack: Option<bool>,
    /// Surrenders the main bet only; side bets are settled regardless ("Funkci Surrender lze
    /// použít pouze pro základní sázku").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main_bet_only: Option<bool>,
    /// The refund stands even if the dealer turns out to have blackjack: the hand ended when
    /// the player surrendered ("je hra … pro Sázejícího ukončena").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refund_kept_if_dealer_blackjack: Option<bool>,
    /// When the refund is paid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paid: Option<SurrenderPaid>,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SurrenderPaid {
    Immediately,
    /// "Hra … pokračuje pro zbývající hráče a po jejím dokončení je výběr Sázejícímu
    /// vyplacen".
    AfterRound,
}

/// "Bet Behind": "sázející může uzavřít sázku na hrací pozici ovládanou jiným sázejícím".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BetBehindRules {
    pub allowed: bool,
    /// Only on a box that holds a main bet ("pouze na pozicích, na kterých je vsazena hlavní
    /// sázka").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only_on_boxes_with_main_bet: Option<bool>,
    /// On the player's own box ("kromě vlastní pozice Sázejícího" makes this false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_own_box: Option<bool>,
    /// Every decision is the box owner's ("Bet Behind Sázející jeho rozhodnutí pouze
    /// následuje/kopíruje").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follows_owner: Option<bool>,
    /// The owner doubles and the Bet Behind player cannot fund the double.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unfunded_double: Option<UnfundedDouble>,
    /// The owner splits and the Bet Behind player cannot fund the split.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unfunded_split: Option<UnfundedSplit>,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UnfundedDouble {
    /// "Bet Behind Sázející obdrží jednu kartu a poté stojí": the undoubled stake plays the
    /// doubled hand (one card, then stand).
    OneCardThenStand,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UnfundedSplit {
    /// "hraje pouze s jednou částí rozdělených karet, konkrétně s tou na pravé straně".
    RightHandOnly,
}

/// One side bet ("Vedlejší sázka"): which cards decide it and how a player blackjack affects
/// it. Its outcome classes and ratios are the plan's `[[payouts]]` rows for `id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SideBet {
    /// The bet type id, as in `[[bets]]`.
    pub id: String,
    pub cards: SideBetCards,
    pub on_player_blackjack: PlayerBlackjackEffect,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SideBetCards {
    /// "první dvě karty" of the player (with a common hand: the common first two cards).
    PlayerFirstTwo,
    /// The dealer's first two cards ("Dealerův pár").
    DealerFirstTwo,
    /// "jeho první dvě karty a první karta krupiéra".
    PlayerFirstTwoAndDealerFirst,
    /// The dealer's finished hand: whether it busts and with how many cards.
    DealerFinalHand,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlayerBlackjackEffect {
    /// The player's hand does not matter.
    NoEffect,
    /// The stake is returned ("Vedlejší sázka Bust It se vrací, pokud má sázející
    /// Blackjack"): the `<id>/player_blackjack` refund row.
    Refund,
    /// Higher ratios when the player has blackjack ("nejvyšší výhry jsou v kombinaci s
    /// blackjackem Sázejícího"): the `…_with_player_blackjack` outcome rows.
    EnhancedPayout,
}

type Problems = Vec<(String, String)>;

fn push(out: &mut Problems, path: &str, message: impl Into<String>) {
    out.push((format!("rules.blackjack.{path}"), message.into()));
}

/// Fields that only make sense when a feature is on: present when on, absent when off.
fn present_iff(out: &mut Problems, on: bool, feature: &str, fields: &[(&str, bool)]) {
    for (field, present) in fields {
        if on && !present {
            push(
                out,
                &format!("{feature}.{field}"),
                format!("{feature} is allowed: state {field}"),
            );
        }
        if !on && *present {
            push(
                out,
                &format!("{feature}.{field}"),
                format!("{feature} is not allowed: {field} must be left out"),
            );
        }
    }
}

impl BlackjackRules {
    /// The rules' internal consistency: each problem as (field path, message).
    pub fn lint(&self) -> Problems {
        let mut out = Vec::new();
        self.lint_shoe(&mut out);
        self.lint_seating(&mut out);
        self.lint_dealer(&mut out);
        self.lint_double(&mut out);
        self.lint_split(&mut out);
        self.lint_insurance(&mut out);
        self.lint_surrender(&mut out);
        self.lint_bet_behind(&mut out);
        self.lint_side_bets(&mut out);
        out
    }

    fn lint_shoe(&self, out: &mut Problems) {
        if self.shoe.deck != DeckKind::Standard52 {
            push(out, "shoe.deck", "blackjack is dealt from 52-card decks");
        }
        if !(1..=8).contains(&self.shoe.decks) {
            push(
                out,
                "shoe.decks",
                format!("{} decks: a blackjack shoe holds 1 to 8", self.shoe.decks),
            );
        }
    }

    fn lint_seating(&self, out: &mut Problems) {
        let s = &self.seating;
        match s.model {
            SeatingModel::Seats => {
                match s.seats {
                    None | Some(0) => {
                        push(out, "seating.seats", "a seated table has at least one box")
                    }
                    Some(n) => {
                        if s.max_players.is_none_or(|m| m > u16::from(n)) {
                            push(
                                out,
                                "seating.max_players",
                                format!("a table of {n} boxes seats at most {n} players"),
                            );
                        }
                    }
                }
                if s.common_hand.is_some() {
                    push(
                        out,
                        "seating.common_hand",
                        "common-hand rules belong to model = \"common_hand\"",
                    );
                }
            }
            SeatingModel::CommonHand => {
                if s.seats.is_some() {
                    push(
                        out,
                        "seating.seats",
                        "a common hand has no boxes: everyone plays the one hand",
                    );
                }
                if s.common_hand.is_none() {
                    push(
                        out,
                        "seating.common_hand",
                        "a common-hand game states how later cards count for each player",
                    );
                }
            }
        }
        if s.min_players == 0 {
            push(out, "seating.min_players", "at least one player");
        }
        if s.max_players.is_some_and(|m| m < s.min_players) {
            push(
                out,
                "seating.max_players",
                "the maximum number of players is below the minimum",
            );
        }
    }

    fn lint_dealer(&self, out: &mut Problems) {
        let d = &self.dealer;
        if !(12..=21).contains(&d.stand_on) {
            push(
                out,
                "dealer.stand_on",
                format!("a dealer standing on {} is not blackjack", d.stand_on),
            );
        }
        match (d.hole_card, d.peek_on) {
            (HoleCard::Peek, None) => push(
                out,
                "dealer.peek_on",
                "a peeking dealer states on which first cards he peeks",
            ),
            (HoleCard::RevealedAfterPlayers | HoleCard::None, Some(_)) => push(
                out,
                "dealer.peek_on",
                "only a dealer who peeks (hole_card = \"peek\") has peek_on",
            ),
            _ => {}
        }
        let n = &self.blackjack;
        let peeks = d.hole_card == HoleCard::Peek;
        if peeks && n.dealer_blackjack_takes.is_some() {
            push(
                out,
                "blackjack.dealer_blackjack_takes",
                "with a peek a dealer blackjack ends the round before any double or split",
            );
        }
        if !peeks && n.dealer_blackjack_takes.is_none() {
            push(
                out,
                "blackjack.dealer_blackjack_takes",
                "without a peek, state which stakes (doubles, splits) a dealer blackjack takes",
            );
        }
        if n.player_blackjack_paid == BlackjackPaid::Immediately
            && d.peek_on != Some(PeekOn::AceOrTen)
        {
            push(
                out,
                "blackjack.player_blackjack_paid",
                "a blackjack can be paid at once only when a peek on an ace or a ten has ruled out a dealer blackjack",
            );
        }
    }

    fn lint_double(&self, out: &mut Problems) {
        let d = &self.double;
        present_iff(
            out,
            d.allowed,
            "double",
            &[
                ("on", d.on.is_some()),
                ("after_split", d.after_split.is_some()),
                ("cards_dealt", d.cards_dealt.is_some()),
            ],
        );
        match (d.on, d.totals.is_empty()) {
            (Some(DoubleOn::Totals), true) => push(
                out,
                "double.totals",
                "doubling on totals needs the list of totals",
            ),
            (Some(DoubleOn::AnyTwoCards) | None, false) => push(
                out,
                "double.totals",
                "totals are given only with on = \"totals\"",
            ),
            _ => {}
        }
        if let Some(t) = d.totals.iter().find(|t| !(4..=21).contains(*t)) {
            push(
                out,
                "double.totals",
                format!("two cards cannot total {t} (4 … 21)"),
            );
        }
        if d.cards_dealt == Some(0) {
            push(
                out,
                "double.cards_dealt",
                "a doubled hand gets at least one card",
            );
        }
        if d.after_split == Some(true) && !self.split.allowed {
            push(
                out,
                "double.after_split",
                "doubling after a split needs splitting to be allowed",
            );
        }
    }

    fn lint_split(&self, out: &mut Problems) {
        let s = &self.split;
        present_iff(
            out,
            s.allowed,
            "split",
            &[
                ("pair", s.pair.is_some()),
                ("max_hands", s.max_hands.is_some()),
                ("ten_value_cards", s.ten_value_cards.is_some()),
                ("aces_one_card", s.aces_one_card.is_some()),
                ("resplit_aces", s.resplit_aces.is_some()),
            ],
        );
        if let Some(m) = s.max_hands {
            if m < 2 {
                push(
                    out,
                    "split.max_hands",
                    format!("a split makes at least two hands, not {m}"),
                );
            }
            if m == 2 && s.resplit_aces == Some(true) {
                push(
                    out,
                    "split.resplit_aces",
                    "re-splitting aces needs max_hands above 2",
                );
            }
        }
    }

    fn lint_insurance(&self, out: &mut Problems) {
        let i = &self.insurance;
        present_iff(
            out,
            i.offered,
            "insurance",
            &[
                ("fraction_of_main", i.fraction_of_main.is_some()),
                ("stake", i.stake.is_some()),
                ("for_disconnected", i.for_disconnected.is_some()),
            ],
        );
        if let Some(f) = i.fraction_of_main {
            if f > Ratio::new(1, 2).expect("1/2 is positive") {
                push(
                    out,
                    "insurance.fraction_of_main",
                    format!("insurance is at most half the main bet, not {f}"),
                );
            }
        }
        let bet_behind_insurable = i.offered && self.bet_behind.allowed;
        if bet_behind_insurable != i.for_bet_behind.is_some() {
            push(
                out,
                "insurance.for_bet_behind",
                if bet_behind_insurable {
                    "insurance and Bet Behind are both offered: state whether a Bet Behind may insure"
                } else {
                    "given only when both insurance and Bet Behind are offered"
                },
            );
        }
    }

    fn lint_surrender(&self, out: &mut Problems) {
        let s = &self.surrender;
        present_iff(
            out,
            s.allowed,
            "surrender",
            &[
                ("first_decision_only", s.first_decision_only.is_some()),
                ("not_with_blackjack", s.not_with_blackjack.is_some()),
                ("main_bet_only", s.main_bet_only.is_some()),
                (
                    "refund_kept_if_dealer_blackjack",
                    s.refund_kept_if_dealer_blackjack.is_some(),
                ),
                ("paid", s.paid.is_some()),
            ],
        );
        if s.refund_kept_if_dealer_blackjack == Some(false)
            && self.dealer.hole_card == HoleCard::Peek
        {
            push(
                out,
                "surrender.refund_kept_if_dealer_blackjack",
                "with a peek a dealer blackjack is known before anyone can surrender",
            );
        }
    }

    fn lint_bet_behind(&self, out: &mut Problems) {
        let b = &self.bet_behind;
        present_iff(
            out,
            b.allowed,
            "bet_behind",
            &[
                (
                    "only_on_boxes_with_main_bet",
                    b.only_on_boxes_with_main_bet.is_some(),
                ),
                ("on_own_box", b.on_own_box.is_some()),
                ("follows_owner", b.follows_owner.is_some()),
                ("unfunded_double", b.unfunded_double.is_some()),
                ("unfunded_split", b.unfunded_split.is_some()),
            ],
        );
        if b.allowed && self.seating.model != SeatingModel::Seats {
            push(
                out,
                "bet_behind.allowed",
                "Bet Behind is a bet on another player's box: it needs a seated table",
            );
        }
        if b.unfunded_double.is_some() && !self.double.allowed {
            push(
                out,
                "bet_behind.unfunded_double",
                "doubling is not allowed in this game",
            );
        }
        if b.unfunded_split.is_some() && !self.split.allowed {
            push(
                out,
                "bet_behind.unfunded_split",
                "splitting is not allowed in this game",
            );
        }
    }

    fn lint_side_bets(&self, out: &mut Problems) {
        let mut seen = BTreeSet::new();
        for sb in &self.side_bets {
            let p = format!("side_bets[{}]", sb.id);
            if !seen.insert(sb.id.as_str()) {
                push(out, &p, "side bet listed twice");
            }
            let Some((_, cards)) = SIDE_BET_CARDS.iter().find(|(id, _)| *id == sb.id) else {
                let known: Vec<&str> = SIDE_BET_CARDS.iter().map(|(id, _)| *id).collect();
                push(
                    out,
                    &format!("{p}.id"),
                    format!(
                        "'{}' is not a blackjack side bet (known: {})",
                        sb.id,
                        known.join(", ")
                    ),
                );
                continue;
            };
            if sb.cards != *cards {
                push(
                    out,
                    &format!("{p}.cards"),
                    format!(
                        "{} is decided on {}, not {}",
                        sb.id,
                        crate::wire_name(cards),
                        crate::wire_name(&sb.cards)
                    ),
                );
            }
            if sb.cards == SideBetCards::DealerFirstTwo && self.dealer.hole_card == HoleCard::None {
                push(
                    out,
                    &format!("{p}.cards"),
                    "the dealer gets one card in the first pass: there are no first two dealer cards to bet on",
                );
            }
        }
    }

    /// Consistency of the rules with the plan's bets and payout table.
    pub fn lint_plan(&self, plan: &Plan) -> Problems {
        let mut out = Vec::new();
        let has_bet = |id: &str| plan.bet(id).is_some();
        let row = |bet: &str, outcome: &str| {
            plan.payouts
                .iter()
                .find(|p| p.bet == bet && p.outcome == outcome)
        };
        for (feature, on, bet) in [
            ("bet_behind.allowed", self.bet_behind.allowed, "bet_behind"),
            ("split.allowed", self.split.allowed, "split"),
            ("double.allowed", self.double.allowed, "double"),
            ("insurance.offered", self.insurance.offered, "insurance"),
        ] {
            if on != has_bet(bet) {
                out.push((
                    format!("bets[{bet}]"),
                    if on {
                        format!("rules.blackjack.{feature} is true but [[bets]] has no '{bet}' row with its limits")
                    } else {
                        format!("'{bet}' is in [[bets]] but rules.blackjack.{feature} is false")
                    },
                ));
            }
        }
        if !has_bet("main") {
            out.push((
                "bets[main]".into(),
                "a blackjack plan has a main bet".into(),
            ));
        }
        for outcome in ["win", "blackjack"] {
            if row("main", outcome).is_none_or(|p| p.ratio.is_none()) {
                out.push((
                    format!("payouts[main/{outcome}]"),
                    format!("the main bet needs a winning ratio for '{outcome}'"),
                ));
            }
        }
        if row("main", "push").is_none_or(|p| p.refund != Some(Ratio::ONE)) {
            out.push((
                "payouts[main/push]".into(),
                "a tie returns the main bet: refund = \"1/1\"".into(),
            ));
        }
        let surrender_row = row("main", "surrender");
        match (self.surrender.allowed, surrender_row) {
            (true, None) => out.push((
                "payouts[main/surrender]".into(),
                "surrender is allowed: give its refund share as a main/surrender refund row".into(),
            )),
            (true, Some(p)) if p.refund.is_none() => out.push((
                "payouts[main/surrender]".into(),
                "a surrender returns part of the stake: give a refund, not a ratio".into(),
            )),
            (false, Some(_)) => out.push((
                "payouts[main/surrender]".into(),
                "surrender is not allowed in this game".into(),
            )),
            _ => {}
        }
        // The stakes a hand adds are bounded by the main bet: a split or a double is equal to
        // the original stake, insurance a share of it.
        if let Some(main) = plan.bet("main") {
            for id in ["split", "double", "bet_behind"] {
                if let Some(b) = plan.bet(id) {
                    if b.max_bet > main.max_bet {
                        out.push((
                            format!("bets[{id}].max_bet"),
                            format!(
                                "{id} stakes equal the original stake: max {} exceeds the main bet's {}",
                                b.max_bet, main.max_bet
                            ),
                        ));
                    }
                }
            }
            if let (Some(ins), Some(f)) = (plan.bet("insurance"), self.insurance.fraction_of_main) {
                let cap = f.apply(main.max_bet, crate::money::Rounding::Down);
                if cap.is_some_and(|cap| ins.max_bet > cap) {
                    out.push((
                        "bets[insurance].max_bet".into(),
                        format!(
                            "insurance is at most {f} of the main bet: max {} exceeds {}",
                            ins.max_bet,
                            cap.unwrap_or_default()
                        ),
                    ));
                }
            }
        }
        if let Some(ins) = plan.bet("insurance") {
            let insures_bet_behind = ins.requires.iter().any(|r| r == "bet_behind");
            if insures_bet_behind != (self.insurance.for_bet_behind == Some(true)) {
                out.push((
                    "bets[insurance].requires".into(),
                    "a Bet Behind may hold insurance exactly when rules.blackjack.insurance.for_bet_behind is true".into(),
                ));
            }
        }
        let declared: BTreeSet<&str> = self.side_bets.iter().map(|s| s.id.as_str()).collect();
        for b in &plan.bets {
            if HAND_BETS.contains(&b.id.as_str()) {
                continue;
            }
            if !declared.contains(b.id.as_str()) {
                out.push((
                    format!("bets[{}]", b.id),
                    "a side bet in [[bets]] must be declared in [[rules.blackjack.side_bets]]"
                        .into(),
                ));
            }
            if !b.requires.iter().any(|r| r == "main") {
                out.push((
                    format!("bets[{}].requires", b.id),
                    "a side bet is placed only with a main bet: requires = [\"main\"]".into(),
                ));
            }
        }
        for sb in &self.side_bets {
            if !has_bet(&sb.id) {
                out.push((
                    format!("rules.blackjack.side_bets[{}]", sb.id),
                    "declared side bet has no [[bets]] row with its limits".into(),
                ));
            }
            let refund_row = row(&sb.id, "player_blackjack");
            let wants_refund = sb.on_player_blackjack == PlayerBlackjackEffect::Refund;
            if wants_refund != refund_row.is_some_and(|p| p.refund.is_some()) {
                out.push((
                    format!("payouts[{}/player_blackjack]", sb.id),
                    if wants_refund {
                        "the stake is returned on a player blackjack: give a refund row".into()
                    } else {
                        "a refund on a player blackjack needs on_player_blackjack = \"refund\""
                            .to_string()
                    },
                ));
            }
            let enhanced = plan
                .payouts_for(&sb.id)
                .any(|p| p.outcome.ends_with("_with_player_blackjack"));
            let wants_enhanced = sb.on_player_blackjack == PlayerBlackjackEffect::EnhancedPayout;
            if wants_enhanced != enhanced {
                out.push((
                    format!("rules.blackjack.side_bets[{}].on_player_blackjack", sb.id),
                    "enhanced_payout exactly when the payout table has …_with_player_blackjack rows".into(),
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A seated 8-deck game as in 002 › Blackjack (Evolution).
    fn seated() -> BlackjackRules {
        BlackjackRules {
            shoe: Shoe::new(DeckKind::Standard52, 8),
            ace_counting: AceCounting::OneOrEleven,
            player_cards_face_up: true,
            player_bust_loses_even_if_dealer_busts: true,
            seating: Seating {
                model: SeatingModel::Seats,
                seats: Some(7),
                min_players: 1,
                max_players: Some(7),
                common_hand: None,
                clause: String::new(),
            },
            dealer: DealerRules {
                stand_on: 17,
                soft_17: Soft17::Stand,
                hole_card: HoleCard::RevealedAfterPlayers,
                peek_on: None,
                clause: String::new(),
            },
            blackjack: NaturalRules {
                after_split_is_blackjack: false,
                dealer_blackjack_beats_player_21: true,
                player_blackjack_paid: BlackjackPaid::AfterDealerHand,
                dealer_blackjack_takes: Some(DealerBlackjackTakes::AllStakes),
                clause: String::new(),
            },
            double: DoubleRules {
                allowed: true,
                on: Some(DoubleOn::AnyTwoCards),
                totals: vec![],
                after_split: Some(false),
                cards_dealt: Some(1),
                clause: String::new(),
            },
            split: SplitRules {
                allowed: true,
                pair: Some(PairMatch::SameValue),
                max_hands: Some(2),
                ten_value_cards: Some(true),
                aces_one_card: Some(true),
                resplit_aces: Some(false),
                clause: String::new(),
            },
            insurance: InsuranceRules {
                offered: true,
                fraction_of_main: Some(Ratio::new(1, 2).unwrap()),
                stake: Some(InsuranceStake::Exactly),
                for_bet_behind: Some(true),
                for_disconnected: Some(false),
                clause: String::new(),
            },
            surrender: SurrenderRules {
                allowed: true,
                first_decision_only: Some(true),
                not_with_blackjack: Some(true),
                main_bet_only: Some(true),
                refund_kept_if_dealer_blackjack: Some(true),
                paid: Some(SurrenderPaid::AfterRound),
                clause: String::new(),
            },
            bet_behind: BetBehindRules {
                allowed: true,
                only_on_boxes_with_main_bet: Some(true),
                on_own_box: Some(false),
                follows_owner: Some(true),
                unfunded_double: Some(UnfundedDouble::OneCardThenStand),
                unfunded_split: Some(UnfundedSplit::RightHandOnly),
                clause: String::new(),
            },
            side_bets: vec![SideBet {
                id: "perfect_pairs".into(),
                cards: SideBetCards::PlayerFirstTwo,
                on_player_blackjack: PlayerBlackjackEffect::NoEffect,
                clause: String::new(),
            }],
            clause: String::new(),
        }
    }

    fn paths(r: &BlackjackRules) -> Vec<String> {
        r.lint().into_iter().map(|(p, _)| p).collect()
    }

    fn flags(r: &BlackjackRules, path: &str) -> bool {
        paths(r).iter().any(|p| p == path)
    }

    #[test]
    fn a_consistent_seated_game_passes() {
        assert_eq!(seated().lint(), vec![]);
    }

    #[test]
    fn split_max_hands_must_be_at_least_two() {
        let mut r = seated();
        r.split.max_hands = Some(1);
        assert!(flags(&r, "rules.blackjack.split.max_hands"));
    }

    #[test]
    fn split_options_are_required_when_splitting_is_allowed() {
        let mut r = seated();
        r.split.max_hands = None;
        assert!(flags(&r, "rules.blackjack.split.max_hands"));
    }

    #[test]
    fn split_options_must_be_absent_when_splitting_is_not_allowed() {
        let mut r = seated();
        r.split.allowed = false;
        r.double.after_split = Some(false);
        r.bet_behind.unfunded_split = None;
        r.bet_behind.allowed = false;
        let p = paths(&r);
        assert!(
            p.contains(&"rules.blackjack.split.pair".to_string()),
            "{p:?}"
        );
    }

    #[test]
    fn resplitting_aces_needs_more_than_two_hands() {
        let mut r = seated();
        r.split.resplit_aces = Some(true);
        assert!(flags(&r, "rules.blackjack.split.resplit_aces"));
        r.split.max_hands = Some(4);
        assert!(!flags(&r, "rules.blackjack.split.resplit_aces"));
    }

    #[test]
    fn double_after_split_needs_splitting() {
        let mut r = seated();
        r.split = SplitRules {
            allowed: false,
            pair: None,
            max_hands: None,
            ten_value_cards: None,
            aces_one_card: None,
            resplit_aces: None,
            clause: String::new(),
        };
        r.bet_behind.unfunded_split = None;
        r.double.after_split = Some(true);
        assert!(flags(&r, "rules.blackjack.double.after_split"));
    }

    #[test]
    fn double_on_totals_needs_the_totals() {
        let mut r = seated();
        r.double.on = Some(DoubleOn::Totals);
        assert!(flags(&r, "rules.blackjack.double.totals"));
        r.double.totals = vec![9, 10, 11];
        assert!(!flags(&r, "rules.blackjack.double.totals"));
        r.double.totals = vec![9, 10, 22];
        assert!(flags(&r, "rules.blackjack.double.totals"));
    }

    #[test]
    fn double_totals_only_with_on_totals() {
        let mut r = seated();
        r.double.totals = vec![10, 11];
        assert!(flags(&r, "rules.blackjack.double.totals"));
    }

    #[test]
    fn bet_behind_needs_seats() {
        let mut r = seated();
        r.seating.model = SeatingModel::CommonHand;
        r.seating.seats = None;
        r.seating.max_players = None;
        r.seating.common_hand = Some(CommonHandRules {
            cards_after_stand_count_zero: true,
            non_splitter_takes_cards_in_dealing_order: true,
            clause: String::new(),
        });
        assert!(flags(&r, "rules.blackjack.bet_behind.allowed"));
    }

    #[test]
    fn common_hand_has_no_seats_and_states_its_rules() {
        let mut r = seated();
        r.bet_behind = BetBehindRules {
            allowed: false,
            only_on_boxes_with_main_bet: None,
            on_own_box: None,
            follows_owner: None,
            unfunded_double: None,
            unfunded_split: None,
            clause: String::new(),
        };
        r.insurance.for_bet_behind = None;
        r.seating.model = SeatingModel::CommonHand;
        r.seating.max_players = None;
        let p = paths(&r);
        assert!(p.contains(&"rules.blackjack.seating.seats".to_string()));
        assert!(p.contains(&"rules.blackjack.seating.common_hand".to_string()));
        r.seating.seats = None;
        r.seating.common_hand = Some(CommonHandRules {
            cards_after_stand_count_zero: true,
            non_splitter_takes_cards_in_dealing_order: true,
            clause: String::new(),
        });
        assert_eq!(r.lint(), vec![]);
    }

    #[test]
    fn seated_players_cannot_outnumber_the_boxes() {
        let mut r = seated();
        r.seating.max_players = Some(8);
        assert!(flags(&r, "rules.blackjack.seating.max_players"));
        r.seating.max_players = None;
        assert!(flags(&r, "rules.blackjack.seating.max_players"));
    }

    #[test]
    fn min_players_cannot_exceed_max_players() {
        let mut r = seated();
        r.seating.min_players = 7;
        r.seating.max_players = Some(6);
        assert!(flags(&r, "rules.blackjack.seating.max_players"));
    }

    #[test]
    fn insurance_is_at_most_half_the_main_bet() {
        let mut r = seated();
        r.insurance.fraction_of_main = Ratio::new(3, 4);
        assert!(flags(&r, "rules.blackjack.insurance.fraction_of_main"));
    }

    #[test]
    fn insurance_for_bet_behind_is_stated_exactly_when_both_exist() {
        let mut r = seated();
        r.insurance.for_bet_behind = None;
        assert!(flags(&r, "rules.blackjack.insurance.for_bet_behind"));
        let mut r = seated();
        r.insurance = InsuranceRules {
            offered: false,
            fraction_of_main: None,
            stake: None,
            for_bet_behind: Some(false),
            for_disconnected: None,
            clause: String::new(),
        };
        assert!(flags(&r, "rules.blackjack.insurance.for_bet_behind"));
    }

    #[test]
    fn peek_on_belongs_to_a_peeking_dealer() {
        let mut r = seated();
        r.dealer.peek_on = Some(PeekOn::Ace);
        assert!(flags(&r, "rules.blackjack.dealer.peek_on"));
        let mut r = seated();
        r.dealer.hole_card = HoleCard::Peek;
        r.blackjack.dealer_blackjack_takes = None;
        assert!(flags(&r, "rules.blackjack.dealer.peek_on"));
    }

    #[test]
    fn dealer_blackjack_takes_is_stated_exactly_without_a_peek() {
        let mut r = seated();
        r.blackjack.dealer_blackjack_takes = None;
        assert!(flags(
            &r,
            "rules.blackjack.blackjack.dealer_blackjack_takes"
        ));
        let mut r = seated();
        r.dealer.hole_card = HoleCard::Peek;
        r.dealer.peek_on = Some(PeekOn::AceOrTen);
        assert!(flags(
            &r,
            "rules.blackjack.blackjack.dealer_blackjack_takes"
        ));
    }

    #[test]
    fn blackjack_paid_immediately_needs_a_peek_on_ace_or_ten() {
        let mut r = seated();
        r.blackjack.player_blackjack_paid = BlackjackPaid::Immediately;
        assert!(flags(&r, "rules.blackjack.blackjack.player_blackjack_paid"));
        r.dealer.hole_card = HoleCard::Peek;
        r.dealer.peek_on = Some(PeekOn::Ace);
        r.blackjack.dealer_blackjack_takes = None;
        assert!(flags(&r, "rules.blackjack.blackjack.player_blackjack_paid"));
        r.dealer.peek_on = Some(PeekOn::AceOrTen);
        assert_eq!(r.lint(), vec![]);
    }

    #[test]
    fn dealer_stands_on_a_blackjack_total() {
        let mut r = seated();
        r.dealer.stand_on = 22;
        assert!(flags(&r, "rules.blackjack.dealer.stand_on"));
    }

    #[test]
    fn shoe_holds_one_to_eight_standard_decks() {
        let mut r = seated();
        r.shoe.decks = 0;
        assert!(flags(&r, "rules.blackjack.shoe.decks"));
        let mut r = seated();
        r.shoe.deck = DeckKind::Piquet32;
        assert!(flags(&r, "rules.blackjack.shoe.deck"));
    }

    #[test]
    fn surrender_options_are_required_when_surrender_is_allowed() {
        let mut r = seated();
        r.surrender.paid = None;
        assert!(flags(&r, "rules.blackjack.surrender.paid"));
    }

    #[test]
    fn side_bets_are_decided_on_their_own_cards() {
        let mut r = seated();
        r.side_bets[0].cards = SideBetCards::DealerFirstTwo;
        assert!(flags(&r, "rules.blackjack.side_bets[perfect_pairs].cards"));
    }

    #[test]
    fn side_bets_come_from_the_vocabulary_once() {
        let mut r = seated();
        r.side_bets.push(r.side_bets[0].clone());
        r.side_bets.push(SideBet {
            id: "lucky_ladies".into(),
            cards: SideBetCards::PlayerFirstTwo,
            on_player_blackjack: PlayerBlackjackEffect::NoEffect,
            clause: String::new(),
        });
        let p = paths(&r);
        assert!(p.contains(&"rules.blackjack.side_bets[perfect_pairs]".to_string()));
        assert!(p.contains(&"rules.blackjack.side_bets[lucky_ladies].id".to_string()));
    }

    #[test]
    fn dealer_pair_needs_two_dealer_cards_in_the_first_pass() {
        let mut r = seated();
        r.side_bets = vec![SideBet {
            id: "dealer_pair".into(),
            cards: SideBetCards::DealerFirstTwo,
            on_player_blackjack: PlayerBlackjackEffect::NoEffect,
            clause: String::new(),
        }];
        assert_eq!(r.lint(), vec![]);
        r.dealer.hole_card = HoleCard::None;
        assert!(flags(&r, "rules.blackjack.side_bets[dealer_pair].cards"));
    }

    #[test]
    fn every_side_bet_of_the_vocabulary_has_its_cards() {
        for spec in BETS {
            let known = SIDE_BET_CARDS.iter().any(|(id, _)| *id == spec.id);
            assert_eq!(
                known,
                !HAND_BETS.contains(&spec.id),
                "{} must be either a hand bet or a side bet with its cards",
                spec.id
            );
        }
    }
}
