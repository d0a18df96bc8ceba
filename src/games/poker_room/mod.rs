//! The C40 poker room: a Texas Hold'em cash table between players (004, "Všeobecná pravidla
//! casina C40"). The house does not play: the engine holds every player's stack and the pots,
//! enforces the rules between the players and says what is expected next.
//!
//! Pure: no I/O, no clock, no randomness. The time (for the return-within-two-hours rule) is
//! an input of [`PokerRoomEngine::apply`]; cards come in as actions (reported by the dealer
//! system, or dealt by the lifecycle from its committed stream with [`rng_deal`]).
//!
//! **Event-sourced.** A [`Table`] is built only by [`PokerRoomEngine::apply`]: one
//! [`Action`] (an API request body and a log payload) in, a list of [`Effect`]s out, or a
//! [`Refusal`] and the table unchanged. Replaying the logged actions with their times
//! rebuilds the table exactly. What may come next — whose turn it is, which decisions with
//! which amounts, which cards — is computed from the table alone: [`PokerRoomEngine::expected`].
//! After every action the chips are counted: the stacks and the chips in the hand add up to
//! the chips bought in less the chips cashed out, or the action is refused
//! ([`code::CHIP_CONSERVATION`]: a bug, never a rule).
//!
//! In the order of the document's sections:
//! - *Buy-in*: [`Action::SitDown`] (a new buy-in, a player moved by the house, a voluntary
//!   change, a return within the window), [`Action::TopUp`], [`Action::Leave`] ([`seating`]).
//! - *Misdeal* and *Nesrovnalosti*: [`Action::Misdeal`], [`Action::Irregularity`]; a card
//!   the hand has already seen voids the hand by "Nesrovnalosti 4." ([`showdown`] voids).
//! - *Sázení a zvyšování*: [`Action::Fold`] … [`Action::AllIn`], and [`Action::Chips`] for
//!   chips pushed in without a declaration (the one-and-a-half-bets and the single
//!   oversized chip rules) ([`betting`]).
//! - *Showdown* and *Remízy*: side pots, showdown order, [`Action::Show`] / [`Action::Muck`],
//!   split pots and the odd chip ([`showdown`]).
//! - *Používání buttonu a blindů*, *Pravidla používání blindů*, *Straddle bet*: the draw for
//!   the button, the dead button, heads-up blinds, new players, [`Action::Straddle`]
//!   ([`seating`]).
//!
//! **What the engine decides that the document does not say** (each also in the plan's
//! `[[assumptions]]` where it is a value of the plan):
//! - An uncalled bet (the part of the largest bet of a betting round that nobody matched)
//!   goes back to its owner when the betting round closes.
//! - A player who bet or raised and everybody else folded wins without showing.
//! - At the showdown a player who mucks concedes only the pots somebody else still contests;
//!   a player left alone in every pot he is in is not asked to show.
//! - A pot-limit pot is the chips actually in it (a short blind counts for what it is).
//! - A player who cannot post the whole straddle does not straddle; a straddle needs three
//!   players dealt in (heads-up, the player left of the big blind is the small blind).
//! - Seats are numbered 1 … `seats_max` clockwise (the direction of play).
//!
//! **Cards.** Every card is reported when dealt (a card-reading shoe live; the committed
//! stream in RNG mode): two hole cards per player before the pre-flop betting, then the flop,
//! the turn and the river, each with its burn card if known. The showdown is decided on these
//! cards ("Karty hovoří sami za sebe").

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::poker_hand::HandRank;
use super::Refusal;
use crate::cards::Card;
use crate::money::Money;
use crate::plan::model::{AutoDecision, Plan};
use crate::plan::rules::poker::{
    AfterPlayStarted, BelowThreshold, BlindPlacement, Consequence, InitialButton, IrregularityKind,
    MisdealKind, MisdealSettlement, NewPlayerOption, OddChipTo, OversizedChip, PokerCashRules,
    PokerGame, PotOrder, Rake, Rotation, Seat, ShortBlind, ShowdownOrder, SidePotOrder,
    StraddleSeat, TopUp,
};
use crate::plan::rules::{Family, GameRules};

pub mod betting;
pub mod seating;
pub mod showdown;

#[cfg(test)]
mod random_play;
#[cfg(test)]
mod tests;

pub use showdown::rng_deal;

/// A seat: 1 … `seats_max`, clockwise (the direction of play).
pub type SeatNo = u8;

/// The stable codes of the refusals this engine returns.
pub mod code {
    pub use crate::games::code::WRONG_FAMILY;
    /// A poker plan this engine cannot play (a rule value it does not implement).
    pub const UNSUPPORTED_PLAN: &str = "unsupported_plan";
    /// A seat number outside 1 … `seats_max`.
    pub const NO_SUCH_SEAT: &str = "no_such_seat";
    /// Sitting down on a seat somebody holds.
    pub const SEAT_TAKEN: &str = "seat_taken";
    /// An action for an empty seat.
    pub const SEAT_EMPTY: &str = "seat_empty";
    /// A player who already holds a seat at this table.
    pub const ALREADY_SEATED: &str = "already_seated";
    /// A player id that is empty.
    pub const BAD_PLAYER: &str = "bad_player";
    /// An amount that is not a positive whole number of the smallest chip.
    pub const NOT_WHOLE_CHIPS: &str = "not_whole_chips";
    /// A buy-in below what the player needs to sit down (the minimum buy-in, or the chips he
    /// left this table with less than two hours ago).
    pub const BELOW_MIN_BUY_IN: &str = "below_min_buy_in";
    /// A buy-in or top-up above the maximum buy-in.
    pub const ABOVE_MAX_BUY_IN: &str = "above_max_buy_in";
    /// A new player's option that the plan does not offer.
    pub const OPTION_NOT_OFFERED: &str = "option_not_offered";
    /// Leaving, topping up or drawing while dealt into the hand being played.
    pub const IN_HAND: &str = "in_hand";
    /// Sitting in a player who is not sitting out, or sitting out one who already is.
    pub const NOT_SITTING_OUT: &str = "not_sitting_out";
    pub const ALREADY_SITTING_OUT: &str = "already_sitting_out";
    /// A table action while a hand is being played (a draw for the button, a new hand).
    pub const HAND_IN_PROGRESS: &str = "hand_in_progress";
    /// A hand action with no hand being played.
    pub const NO_HAND: &str = "no_hand";
    /// A floor decision's void without its reason (1–500 characters).
    pub const BAD_VOID_REASON: &str = "bad_void_reason";
    /// Fewer than two players ready to be dealt in.
    pub const NOT_ENOUGH_PLAYERS: &str = "not_enough_players";
    /// The button must be drawn for before the next hand (a new game, or one that cannot go
    /// on from the last hand's positions).
    pub const BUTTON_DRAW_NEEDED: &str = "button_draw_needed";
    /// A draw for the button when the button is placed by the last hand.
    pub const NO_DRAW_NEEDED: &str = "no_draw_needed";
    /// A draw that does not give one card to each player ready to play, or gives a card twice.
    pub const BAD_DRAW: &str = "bad_draw";
    /// The straddle: not offered, not this player, not now, or not the whole amount.
    pub const STRADDLE_NOT_ALLOWED: &str = "straddle_not_allowed";
    /// A card or a decision out of the order of play.
    pub const NOT_EXPECTED: &str = "not_expected";
    /// A decision from a player whose turn it is not.
    pub const NOT_YOUR_TURN: &str = "not_your_turn";
    /// Hole cards for a player not dealt in, or dealt already.
    pub const NOT_DEALT_IN: &str = "not_dealt_in";
    /// Board cards in the wrong number for the street.
    pub const WRONG_CARD_COUNT: &str = "wrong_card_count";
    /// A card seen twice in one hand where the plan has no rule for it.
    pub const DUPLICATE_CARD: &str = "duplicate_card";
    /// A check facing a bet.
    pub const CANNOT_CHECK: &str = "cannot_check";
    /// A call with nothing to call.
    pub const NOTHING_TO_CALL: &str = "nothing_to_call";
    /// A bet when there is a bet to call or raise (raise instead), or a raise with no bet.
    pub const BET_OR_RAISE: &str = "bet_or_raise";
    /// A bet below the minimum bet (one big blind) that is not all-in.
    pub const BELOW_MIN_BET: &str = "below_min_bet";
    /// A raise below a full raise that is not all-in.
    pub const BELOW_MIN_RAISE: &str = "below_min_raise";
    /// More chips than the player has.
    pub const ABOVE_STACK: &str = "above_stack";
    /// A pot-limit bet or raise above the pot.
    pub const ABOVE_POT_LIMIT: &str = "above_pot_limit";
    /// A raise by a player whom an all-in short of a full raise did not reopen the betting
    /// for, or when nobody is left to call it, or above the plan's raise cap.
    pub const RAISE_NOT_ALLOWED: &str = "raise_not_allowed";
    /// Chips pushed in short of the call without being all-in.
    pub const BELOW_CALL: &str = "below_call";
    /// A misdeal reported after two players acted: the hand stands.
    pub const PLAY_STARTED: &str = "play_started";
    /// A situation whose plan consequence does not fit the moment (a street redealt after
    /// its betting began, a dead hand at the showdown, …).
    pub const NOT_APPLICABLE: &str = "not_applicable";
    /// A situation the plan does not list.
    pub const NOT_IN_PLAN: &str = "not_in_plan";
    /// An amount that does not fit in 64-bit minor units.
    pub const OVERFLOW: &str = "overflow";
    /// The chips would not add up after the action: an engine bug, refused so the table stays
    /// consistent.
    pub const CHIP_CONSERVATION: &str = "chip_conservation";
}

// ----- Actions -----

/// How a player comes to the table ("Buy-in").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Entry {
    /// A new buy-in: at least the minimum buy-in ("Při vstupu do hry musí hráč zaplatit
    /// minimální buy in").
    BuyIn,
    /// Moved by the house from a table of the same limit (table broken up, floorman's
    /// decision): keeps his chips, even below the minimum buy-in. Only the floor may say so;
    /// the caller checks the role.
    MovedByHouse,
    /// Changes table by his own choice: at least the minimum buy-in.
    VoluntaryChange,
}

fn wait_for_big_blind() -> NewPlayerOption {
    NewPlayerOption::WaitForBigBlind
}

/// One card of the draw for the button.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SeatCard {
    pub seat: SeatNo,
    pub card: Card,
}

/// Everything that happens at the table, as the caller sends it and the log keeps it.
///
/// ```json
/// {"action": "sit_down", "seat": 3, "player": "p-17", "chips_minor": 200000, "entry": "buy_in"}
/// {"action": "start_hand"}
/// {"action": "hole_cards", "seat": 3, "cards": ["Ah", "Kd"]}
/// {"action": "raise", "seat": 4, "to_minor": 6000}
/// {"action": "chips", "seat": 5, "chips_minor": [10000]}
/// {"action": "board", "cards": ["2c", "7d", "Js"], "burn": "5h"}
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// A player takes an empty seat with `chips_minor` (bought in, or brought from another
    /// table). He is a new player: he waits for the big blind or posts one.
    SitDown {
        seat: SeatNo,
        player: String,
        chips_minor: i64,
        entry: Entry,
        #[serde(default = "wait_for_big_blind")]
        new_player: NewPlayerOption,
    },
    /// A seated player adds chips between hands.
    TopUp {
        seat: SeatNo,
        chips_minor: i64,
    },
    /// A player stops being dealt in (from the next hand) but keeps his seat.
    SitOut {
        seat: SeatNo,
    },
    /// A player who sat out plays again, as a new player.
    SitIn {
        seat: SeatNo,
        #[serde(default = "wait_for_big_blind")]
        new_player: NewPlayerOption,
    },
    /// A player leaves with his chips (cashed out). Not while dealt into the hand.
    Leave {
        seat: SeatNo,
    },
    /// The draw for the first button: one card to each player ready to play.
    DrawForButton {
        cards: Vec<SeatCard>,
    },
    /// A new hand: the button, the blinds and the players dealt in are placed, the blinds
    /// (and new players' big blinds) are posted.
    StartHand {},
    /// The straddle, before the hole cards.
    Straddle {
        seat: SeatNo,
    },
    /// A player's two hole cards.
    HoleCards {
        seat: SeatNo,
        cards: [Card; 2],
    },
    /// The flop (three cards), the turn or the river (one), with the burn card before it.
    Board {
        cards: Vec<Card>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        burn: Option<Card>,
    },
    Fold {
        seat: SeatNo,
    },
    Check {
        seat: SeatNo,
    },
    Call {
        seat: SeatNo,
    },
    /// A declared bet: the player's chips in this betting round become `to_minor`.
    Bet {
        seat: SeatNo,
        to_minor: i64,
    },
    /// A declared raise to `to_minor` (the player's chips in this betting round after it).
    Raise {
        seat: SeatNo,
        to_minor: i64,
    },
    /// A declared all-in.
    AllIn {
        seat: SeatNo,
    },
    /// Chips pushed in without a declaration, one amount per chip: read by "Sázení a
    /// zvyšování" 8. and 9.
    Chips {
        seat: SeatNo,
        chips_minor: Vec<i64>,
    },
    /// At the showdown: the player tables his cards.
    Show {
        seat: SeatNo,
    },
    /// At the showdown: the player gives up his hand.
    Muck {
        seat: SeatNo,
    },
    /// A misdeal situation of the document's list ("Misdeal 1." … "9.").
    Misdeal {
        cause: MisdealKind,
    },
    /// An irregularity of the document's list ("Nesrovnalosti 1." … "12."); `seat` names the
    /// player for the ones about one player's hand.
    Irregularity {
        kind: IrregularityKind,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seat: Option<SeatNo>,
    },
    /// A floor decision: the hand cannot be completed (for a reason the lists do not name)
    /// and is void; every chip put into it goes back to its owner, as for the document's
    /// voiding irregularities ("všechny úkony jsou neplatné a všechny žetony se vrací svým
    /// původním majitelům").
    VoidHand {
        reason: String,
    },
}

// ----- Effects -----

/// A forced bet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Blind {
    SmallBlind,
    BigBlind,
    /// A new player's big blind ("vložit do banku množství žetonů, které odpovídá velikosti
    /// big blindu"): live.
    NewPlayerBigBlind,
    Straddle,
}

/// A betting decision as the engine read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "move", rename_all = "snake_case")]
pub enum Move {
    Fold,
    Check,
    Call,
    /// The first bet of a betting round, to `to_minor`.
    Bet {
        to_minor: i64,
    },
    /// A raise to `to_minor`; `full` false for an all-in short of a full raise (which does
    /// not reopen the betting).
    Raise {
        to_minor: i64,
        full: bool,
    },
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Street {
    Preflop,
    Flop,
    Turn,
    River,
}

impl Street {
    fn next(self) -> Option<Street> {
        match self {
            Street::Preflop => Some(Street::Flop),
            Street::Flop => Some(Street::Turn),
            Street::Turn => Some(Street::River),
            Street::River => None,
        }
    }

    /// Board cards dealt for this street.
    pub fn cards(self) -> usize {
        match self {
            Street::Preflop => 0,
            Street::Flop => 3,
            Street::Turn | Street::River => 1,
        }
    }
}

/// One pot: the main pot (index 0) or a side pot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Pot {
    pub amount_minor: i64,
    /// The players who may win it (not folded, in at least `level_minor` this hand).
    pub eligible: Vec<SeatNo>,
    /// Each eligible player's chips in the hand cover this much.
    pub level_minor: i64,
}

/// One player's part of a pot (or of a voided hand's chips).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Share {
    pub seat: SeatNo,
    pub amount_minor: i64,
}

/// Why a hand was voided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum VoidReason {
    Misdeal {
        cause: MisdealKind,
    },
    Irregularity {
        kind: IrregularityKind,
    },
    /// A floor decision, with its reason ([`Action::VoidHand`]).
    FloorDecision {
        reason: String,
    },
}

/// Who shows first and why ("Showdown" 6. and 7.).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ShowdownFirst {
    LastAggressor,
    FirstToAct,
}

/// What an action did. The chips a wallet sees move only in `sat_down`, `topped_up` (in) and
/// `left` (out); everything else moves chips between stacks and pots at the table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "effect", rename_all = "snake_case")]
pub enum Effect {
    SatDown {
        seat: SeatNo,
        player: String,
        chips_minor: i64,
    },
    ToppedUp {
        seat: SeatNo,
        chips_minor: i64,
    },
    SatOut {
        seat: SeatNo,
    },
    SatIn {
        seat: SeatNo,
    },
    Left {
        seat: SeatNo,
        player: String,
        chips_minor: i64,
    },
    ButtonDrawn {
        seat: SeatNo,
        card: Card,
    },
    HandStarted {
        hand: u64,
        /// The button's seat, possibly empty (a dead button).
        button: SeatNo,
        /// The small blind's player; none when the small blind falls on a seat not dealt in.
        small_blind: Option<SeatNo>,
        big_blind: SeatNo,
        dealt: Vec<SeatNo>,
        heads_up: bool,
    },
    Posted {
        seat: SeatNo,
        blind: Blind,
        amount_minor: i64,
        all_in: bool,
    },
    HoleCardsDealt {
        seat: SeatNo,
    },
    BoardDealt {
        street: Street,
        cards: Vec<Card>,
    },
    /// A betting decision: what it was read as, the chips it put in, and the chips pushed in
    /// that went back to the player (`returned_minor`, by the rule `by`).
    Acted {
        seat: SeatNo,
        #[serde(rename = "as")]
        read_as: Move,
        put_in_minor: i64,
        all_in: bool,
        #[serde(default, skip_serializing_if = "is_zero")]
        returned_minor: i64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<String>,
    },
    /// The part of a bet nobody matched goes back.
    UncalledBetReturned {
        seat: SeatNo,
        amount_minor: i64,
    },
    BettingClosed {
        street: Street,
        pots: Vec<Pot>,
    },
    ShowdownOrder {
        first: ShowdownFirst,
        order: Vec<SeatNo>,
    },
    Shown {
        seat: SeatNo,
        cards: [Card; 2],
        hand: HandRank,
    },
    Mucked {
        seat: SeatNo,
    },
    /// A pot paid: side pots first, the main pot (index 0) last.
    PotAwarded {
        pot: usize,
        amount_minor: i64,
        shares: Vec<Share>,
        /// The winning hand; none when the pot was not contested.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hand: Option<HandRank>,
    },
    HandEnded {
        hand: u64,
    },
    /// Every chip of the hand goes back to the player who put it in.
    HandVoided {
        hand: u64,
        reason: VoidReason,
        returned: Vec<Share>,
        clause: String,
    },
    /// A player's hand is dead ("Nesrovnalosti" 2., 6.).
    HandKilled {
        seat: SeatNo,
        clause: String,
    },
    /// A situation of the document's lists whose consequence leaves the chips and the hand as
    /// they are (or is carried out by the dealer): recorded.
    Noted {
        consequence: Consequence,
        clause: String,
    },
}

fn is_zero(v: &i64) -> bool {
    *v == 0
}

// ----- What is expected -----

/// A decision a player may take now, with its amounts (chips in this betting round after it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Legal {
    Fold,
    Check,
    Call {
        /// Chips the call puts in (all the player has when he is short).
        amount_minor: i64,
        all_in: bool,
    },
    Bet {
        min_to_minor: i64,
        max_to_minor: i64,
    },
    Raise {
        min_to_minor: i64,
        max_to_minor: i64,
    },
    AllIn {
        to_minor: i64,
    },
}

/// The player to act and what he may do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Turn {
    pub seat: SeatNo,
    pub street: Street,
    pub stack_minor: i64,
    /// His chips in this betting round so far.
    pub in_round_minor: i64,
    pub to_call_minor: i64,
    pub legal: Vec<Legal>,
}

/// Whether a hand can start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Readiness {
    Ready {
        button: SeatNo,
        small_blind: Option<SeatNo>,
        big_blind: SeatNo,
        dealt: Vec<SeatNo>,
    },
    /// Draw for the button ([`Action::DrawForButton`]) among these players.
    ButtonDraw {
        players: Vec<SeatNo>,
    },
    TooFewPlayers,
}

/// What the table waits for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "next", rename_all = "snake_case")]
pub enum Expected {
    /// No hand: players sit down, leave, top up; a hand starts when ready.
    BetweenHands {
        readiness: Readiness,
    },
    /// The hole cards for these players; before the first of them, the straddle may be posted
    /// by `straddle_seat`.
    HoleCards {
        seats: Vec<SeatNo>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        straddle_seat: Option<SeatNo>,
    },
    Decision(Turn),
    Board {
        street: Street,
        cards: usize,
    },
    /// The player who shows or mucks next.
    Showdown {
        seat: SeatNo,
    },
}

// ----- State -----

/// A seated player's standing for the next hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "status", content = "option", rename_all = "snake_case")]
pub enum Status {
    /// Dealt in whenever the button and blinds reach him.
    Playing,
    /// New at the table (or back from sitting out): waits for the big blind or posts one.
    New(NewPlayerOption),
    SittingOut,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SeatedPlayer {
    pub player: String,
    pub stack_minor: i64,
    pub status: Status,
}

/// Where the last completed hand put the button and the blinds ("Před každou hrou se vždy
/// umístí správně big blind a podle něj se dále umísťují small blind a button").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Positions {
    pub button: SeatNo,
    /// The small blind's seat, posted or not (heads-up: the button).
    pub small_blind: SeatNo,
    pub big_blind: SeatNo,
}

/// A player who left, for "Pokud hráč změní stůl a chce se v době kratší než 2 hodiny vrátit
/// na ten původní".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Departure {
    pub player: String,
    pub chips_minor: i64,
    pub at: DateTime<Utc>,
}

/// A player dealt into the hand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HandPlayer {
    pub seat: SeatNo,
    pub player: String,
    /// His stack when the hand started ("hráči, kteří měli na začátku hry nejvíce žetonů").
    pub start_stack_minor: i64,
    pub hole: Option<[Card; 2]>,
    /// Chips in the current betting round.
    pub in_round_minor: i64,
    /// Chips in the hand (every betting round, blinds included).
    pub in_hand_minor: i64,
    pub folded: bool,
    pub all_in: bool,
    /// Has taken a decision in this betting round (blinds are not decisions).
    pub acted: bool,
    /// His chips in the round after his last decision: an all-in short of a full raise
    /// reopens the betting for him only if it leaves him facing a full raise over this.
    pub acted_at_minor: i64,
    pub shown: Option<HandRank>,
    pub mucked: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Blinds posted; the straddle may come, then the hole cards.
    PreDeal,
    Betting,
    /// Betting closed; the next street's cards are awaited.
    AwaitingBoard,
    Showdown,
}

/// The last bet or raise: "hráč, který byl jako poslední agresivní".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Aggression {
    pub seat: SeatNo,
    pub street: Street,
}

/// A pot at the showdown with the players still contesting it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ShowdownPot {
    pub pot: Pot,
    pub live: Vec<SeatNo>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ShowdownState {
    pub order: Vec<SeatNo>,
    /// The index in `order` of the player to show or muck.
    pub next: usize,
    pub pots: Vec<ShowdownPot>,
}

/// The hand being played.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Hand {
    pub number: u64,
    pub button: SeatNo,
    pub small_blind_seat: SeatNo,
    pub small_blind: Option<SeatNo>,
    pub big_blind: SeatNo,
    pub straddle: Option<SeatNo>,
    pub heads_up: bool,
    /// The players dealt in, in seat order.
    pub players: Vec<HandPlayer>,
    pub phase: Phase,
    pub street: Street,
    pub board: Vec<Card>,
    pub burns: Vec<Card>,
    /// The bet to match in this betting round ("ostatní hrají jako by byly blindy normální":
    /// the whole big blind pre-flop even when it was posted short).
    pub current_bet_minor: i64,
    /// The last full bet or raise of this betting round: the least a raise adds.
    pub full_raise_minor: i64,
    /// Full raises in this betting round (for a plan's raise cap).
    pub raises: u32,
    pub to_act: Option<SeatNo>,
    pub last_aggression: Option<Aggression>,
    /// Players who took a decision in the hand: a misdeal is possible only before two have.
    pub players_acted: Vec<SeatNo>,
    pub showdown: Option<ShowdownState>,
}

impl Hand {
    pub fn player(&self, seat: SeatNo) -> Option<&HandPlayer> {
        self.players.iter().find(|p| p.seat == seat)
    }

    fn index(&self, seat: SeatNo) -> Option<usize> {
        self.players.iter().position(|p| p.seat == seat)
    }

    /// The chips in the middle: every player's chips in the hand.
    pub fn pot_total_minor(&self) -> i64 {
        self.players.iter().map(|p| p.in_hand_minor).sum()
    }

    /// Every card of the hand seen so far.
    fn seen_cards(&self) -> Vec<Card> {
        let mut v: Vec<Card> = self
            .players
            .iter()
            .filter_map(|p| p.hole)
            .flatten()
            .collect();
        v.extend(&self.board);
        v.extend(&self.burns);
        v
    }
}

/// One table: its seats and stacks, the button's history, the hand being played, and the
/// chips that came in and went out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Table {
    /// `seats[n - 1]` is seat `n`.
    pub seats: Vec<Option<SeatedPlayer>>,
    pub positions: Option<Positions>,
    /// The seat the draw gave the button, before the first hand of a game.
    pub drawn_button: Option<SeatNo>,
    pub hand: Option<Hand>,
    /// Hands started (voided ones included): the next hand's number is this + 1.
    pub hands_started: u64,
    pub departures: Vec<Departure>,
    pub bought_in_minor: i64,
    pub cashed_out_minor: i64,
}

impl Table {
    pub fn seat(&self, seat: SeatNo) -> Option<&SeatedPlayer> {
        self.seats
            .get(usize::from(seat).wrapping_sub(1))
            .and_then(Option::as_ref)
    }

    fn seat_mut(&mut self, seat: SeatNo) -> Option<&mut SeatedPlayer> {
        self.seats
            .get_mut(usize::from(seat).wrapping_sub(1))
            .and_then(Option::as_mut)
    }

    fn seats_max(&self) -> SeatNo {
        SeatNo::try_from(self.seats.len()).expect("seats_max is a u8 in the plan")
    }

    /// The seats clockwise after `seat`, ending with `seat` itself.
    fn clockwise_after(&self, seat: SeatNo) -> impl Iterator<Item = SeatNo> {
        let n = self.seats_max();
        (1..=n).map(move |k| ((u16::from(seat) - 1 + u16::from(k)) % u16::from(n) + 1) as SeatNo)
    }

    /// Every chip at the table: the stacks and the chips in the hand.
    pub fn chips_at_table_minor(&self) -> i64 {
        let stacks: i64 = self.seats.iter().flatten().map(|s| s.stack_minor).sum();
        stacks + self.hand.as_ref().map_or(0, Hand::pot_total_minor)
    }
}

/// The C40 poker room engine for one plan.
#[derive(Debug, Clone, Copy)]
pub struct PokerRoomEngine<'p> {
    plan: &'p Plan,
    rules: &'p PokerCashRules,
}

impl<'p> PokerRoomEngine<'p> {
    /// The engine for `plan`; refuses a plan of another family and one with a rule value
    /// this engine does not implement.
    pub fn new(plan: &'p Plan) -> Result<PokerRoomEngine<'p>, Refusal> {
        crate::games::expect_family(plan, Family::PokerCash, "poker cash game")?;
        let GameRules::PokerCash(rules) = &plan.rules else {
            unreachable!("expect_family checked the rules' family")
        };
        let unsupported = |what: &str| {
            Err(Refusal::new(
                code::UNSUPPORTED_PLAN,
                format!("{}: this engine does not implement {what}", plan.key()),
            )
            .clause(rules.clause.clone()))
        };
        // Every enum the plan may name is matched here, so a new value is a compile error
        // until the engine implements it.
        match rules.game {
            PokerGame::TexasHoldem => {}
        }
        match (
            rules.blinds.short_player,
            rules.blinds.first_to_act_preflop,
            rules.blinds.first_to_act_postflop,
        ) {
            (
                ShortBlind::PostsAllInOthersPlayFullBlind,
                Seat::LeftOfBigBlind,
                Seat::LeftOfButton,
            ) => {}
            _ => return unsupported("these first players to act"),
        }
        match (
            rules.button.rotation,
            rules.button.placement,
            rules.button.initial,
        ) {
            (
                Rotation::Clockwise,
                BlindPlacement::BigBlindFirstDeadButton,
                InitialButton::HighCardDraw,
            ) => {}
        }
        match rules.straddle.by {
            StraddleSeat::FirstLeftOfBigBlind => {}
        }
        match (
            rules.betting.below_threshold,
            rules.betting.single_oversized_chip,
        ) {
            (BelowThreshold::CallExcessReturned, OversizedChip::Call) => {}
        }
        match (
            rules.showdown.order,
            rules.showdown.pots_resolved,
            rules.showdown.side_pot_order,
        ) {
            (
                ShowdownOrder::LastAggressorElseFirstToAct,
                PotOrder::SidePotsBeforeMainPot,
                SidePotOrder::MostChipsAtStartFirst,
            ) => {}
        }
        match rules.odd_chip.to {
            OddChipTo::FirstWinnerLeftOfButton => {}
        }
        match (rules.misdeal.on_misdeal, rules.misdeal.after_play_started) {
            (
                MisdealSettlement::RedealBlindsReturned,
                AfterPlayStarted::HandStandsNoBlindReturned,
            ) => {}
        }
        match rules.rake {
            Rake::NoRake => {}
        }
        match rules.buy_in.top_up {
            TopUp::BetweenHandsUpToMax => {}
        }
        if !rules.new_player.posted_big_blind_is_live {
            return unsupported("a dead new player's big blind");
        }
        let s = &rules.straddle;
        if s.allowed && !(s.posted_before_deal && s.acts_last_preflop && s.may_reraise) {
            return unsupported("a straddle other than the document's");
        }
        if !rules.odd_chip.break_down_to_smallest_chip {
            return unsupported("odd chips kept whole");
        }
        if !rules.showdown.all_cards_shown_to_win || !rules.showdown.cards_speak {
            return unsupported("a showdown where cards do not speak");
        }
        // A poker player's automatic decision never puts chips in for him.
        match plan.policies.decision_timeout.as_ref().map(|d| d.automatic) {
            Some(AutoDecision::CheckOrFold) | None => {}
            Some(_) => return unsupported("an automatic decision other than check-or-fold"),
        }
        if rules.smallest_chip <= 0 || rules.seats_max < 2 {
            return unsupported("a table without chips or seats");
        }
        Ok(PokerRoomEngine { plan, rules })
    }

    pub fn plan(&self) -> &'p Plan {
        self.plan
    }

    pub fn rules(&self) -> &'p PokerCashRules {
        self.rules
    }

    /// An empty table of the plan's seats.
    pub fn new_table(&self) -> Table {
        Table {
            seats: vec![None; usize::from(self.rules.seats_max)],
            positions: None,
            drawn_button: None,
            hand: None,
            hands_started: 0,
            departures: Vec::new(),
            bought_in_minor: 0,
            cashed_out_minor: 0,
        }
    }

    /// Applies one action at the server time `now`. On success the table has changed and the
    /// effects say how; on a refusal the table is as it was.
    pub fn apply(
        &self,
        table: &mut Table,
        action: &Action,
        now: DateTime<Utc>,
    ) -> Result<Vec<Effect>, Refusal> {
        let mut t = table.clone();
        let mut fx = Vec::new();
        self.step(&mut t, action, now, &mut fx)
            .map_err(|r| r.with_plan(&self.plan.key()))?;
        self.check_chips(&t)?;
        *table = t;
        Ok(fx)
    }

    fn step(
        &self,
        t: &mut Table,
        action: &Action,
        now: DateTime<Utc>,
        fx: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        match action {
            Action::SitDown {
                seat,
                player,
                chips_minor,
                entry,
                new_player,
            } => self.sit_down(t, *seat, player, *chips_minor, *entry, *new_player, now, fx),
            Action::TopUp { seat, chips_minor } => self.top_up(t, *seat, *chips_minor, fx),
            Action::SitOut { seat } => self.sit_out(t, *seat, fx),
            Action::SitIn { seat, new_player } => self.sit_in(t, *seat, *new_player, fx),
            Action::Leave { seat } => self.leave(t, *seat, now, fx),
            Action::DrawForButton { cards } => self.draw_for_button(t, cards, fx),
            Action::StartHand {} => self.start_hand(t, fx),
            Action::Straddle { seat } => self.straddle(t, *seat, fx),
            Action::HoleCards { seat, cards } => self.hole_cards(t, *seat, *cards, fx),
            Action::Board { cards, burn } => self.board(t, cards, *burn, fx),
            Action::Fold { seat } => self.decide(t, *seat, Declared::Fold, fx),
            Action::Check { seat } => self.decide(t, *seat, Declared::Check, fx),
            Action::Call { seat } => self.decide(t, *seat, Declared::Call, fx),
            Action::Bet { seat, to_minor } => self.decide(t, *seat, Declared::Bet(*to_minor), fx),
            Action::Raise { seat, to_minor } => {
                self.decide(t, *seat, Declared::Raise(*to_minor), fx)
            }
            Action::AllIn { seat } => self.decide(t, *seat, Declared::AllIn, fx),
            Action::Chips { seat, chips_minor } => {
                self.decide(t, *seat, Declared::Chips(chips_minor), fx)
            }
            Action::Show { seat } => self.show(t, *seat, true, fx),
            Action::Muck { seat } => self.show(t, *seat, false, fx),
            Action::Misdeal { cause } => self.misdeal(t, *cause, fx),
            Action::Irregularity { kind, seat } => self.irregularity(t, *kind, *seat, fx),
            Action::VoidHand { reason } => self.floor_void(t, reason, fx),
        }
    }

    /// A floor decision voids the hand being played: every chip back to its owner, under the
    /// plan's error policy.
    fn floor_void(&self, t: &mut Table, reason: &str, fx: &mut Vec<Effect>) -> Result<(), Refusal> {
        let clause = &self.plan.policies.error.clause;
        if reason.trim().is_empty() || reason.chars().count() > 500 {
            return Err(self.refuse(
                code::BAD_VOID_REASON,
                "a floor decision voiding the hand states its reason (1–500 characters)",
                clause,
            ));
        }
        self.hand_in_progress(t)?;
        self.void_hand(
            t,
            VoidReason::FloorDecision {
                reason: reason.to_string(),
            },
            clause,
            fx,
        );
        Ok(())
    }

    /// What the table waits for.
    pub fn expected(&self, t: &Table) -> Expected {
        let Some(h) = &t.hand else {
            return Expected::BetweenHands {
                readiness: self.readiness(t),
            };
        };
        match h.phase {
            Phase::PreDeal => Expected::HoleCards {
                seats: h
                    .players
                    .iter()
                    .filter(|p| p.hole.is_none())
                    .map(|p| p.seat)
                    .collect(),
                straddle_seat: if h.players.iter().all(|p| p.hole.is_none()) {
                    self.straddle_seat(t, h)
                } else {
                    None
                },
            },
            Phase::Betting => match self.turn(t) {
                Some(turn) => Expected::Decision(turn),
                None => unreachable!("a betting round with nobody to act is closed"),
            },
            Phase::AwaitingBoard => {
                let street = h
                    .street
                    .next()
                    .expect("the board is awaited before the river");
                Expected::Board {
                    street,
                    cards: street.cards(),
                }
            }
            Phase::Showdown => {
                let s = h.showdown.as_ref().expect("a showdown has its state");
                Expected::Showdown {
                    seat: s.order[s.next],
                }
            }
        }
    }

    /// The decision the plan takes for a player who does not decide in time (check when
    /// nothing is owed, otherwise fold); none when no decision is awaited.
    pub fn automatic_decision(&self, t: &Table) -> Option<Action> {
        let turn = self.turn(t)?;
        let seat = turn.seat;
        Some(if turn.to_call_minor == 0 {
            Action::Check { seat }
        } else {
            Action::Fold { seat }
        })
    }

    fn check_chips(&self, t: &Table) -> Result<(), Refusal> {
        let expected = t.bought_in_minor - t.cashed_out_minor;
        let at_table = t.chips_at_table_minor();
        let mut bad = at_table != expected;
        bad |= t.seats.iter().flatten().any(|s| s.stack_minor < 0);
        if let Some(h) = &t.hand {
            bad |= h.players.iter().any(|p| {
                p.in_round_minor < 0
                    || p.in_round_minor > p.in_hand_minor
                    || p.all_in != (t.seat(p.seat).map(|s| s.stack_minor) == Some(0))
            });
        }
        if bad {
            return Err(Refusal::new(
                code::CHIP_CONSERVATION,
                format!(
                    "after this action the table would hold {at_table} in stacks and pots, not the {expected} bought in less cashed out: refused (engine error)"
                ),
            )
            .with_plan(&self.plan.key()));
        }
        Ok(())
    }

    // ----- Small helpers shared by the submodules -----

    fn money(&self, minor: i64) -> String {
        Money::new(minor, self.plan.plan.currency).to_string()
    }

    fn refuse(&self, code: &str, message: impl Into<String>, clause: &str) -> Refusal {
        Refusal::new(code, message).clause(clause.to_string())
    }

    fn check_seat_no(&self, seat: SeatNo) -> Result<(), Refusal> {
        if seat == 0 || seat > self.rules.seats_max {
            return Err(self.refuse(
                code::NO_SUCH_SEAT,
                format!(
                    "seat {seat}: the table has seats 1 … {}",
                    self.rules.seats_max
                ),
                &self.rules.clause,
            ));
        }
        Ok(())
    }

    fn whole_chips(&self, amount: i64, what: &str, clause: &str) -> Result<(), Refusal> {
        if amount <= 0 || amount % self.rules.smallest_chip != 0 {
            return Err(self.refuse(
                code::NOT_WHOLE_CHIPS,
                format!(
                    "{what} of {amount} minor units is not a positive whole number of the smallest chip ({})",
                    self.money(self.rules.smallest_chip)
                ),
                clause,
            ));
        }
        Ok(())
    }

    fn hand_in_progress<'t>(&self, t: &'t mut Table) -> Result<&'t mut Hand, Refusal> {
        t.hand.as_mut().ok_or_else(|| {
            Refusal::new(code::NO_HAND, "no hand is being played").clause(self.rules.clause.clone())
        })
    }
}

/// A betting decision as sent.
#[derive(Debug, Clone, Copy)]
enum Declared<'a> {
    Fold,
    Check,
    Call,
    Bet(i64),
    Raise(i64),
    AllIn,
    Chips(&'a [i64]),
}
