//! Oko bere engine (000, "Rules"): a 21 between players, one of whom holds the bank.
//!
//! The house does not play. pitboss holds the players to the rules, keeps every player's
//! chips at the table and the bank exact, and says who acts next and with what.
//!
//! **Event sourced.** [`OkoBereState`] is the whole table. [`OkoBereEngine::apply`] takes one
//! [`OkoBereAction`] (a player's, the banker's or the dealing system's act, as the log holds
//! it) and either refuses it, leaving the state untouched, or changes the state and returns
//! what happened as [`OkoBereEffect`]s (stakes, busts, settlements, a new banker…).
//! [`OkoBereEngine::expected`] reads from the state alone what the rules wait for next, and
//! [`OkoBereEngine::replay`] rebuilds the state from the logged actions.
//!
//! **Chips.** A seat's `stack_minor` is its chips at the table. A bet moves the stake from the
//! player's stack and "the same amount … from the bank" into the round (the hand's
//! `stake_minor` and `matched_minor`); a hand that loses or overdraws gives both to the bank,
//! a hand that wins takes both. Only `join`, `buy_in`, `cash_out`, `leave` and `close_table`
//! bring chips to the table or take them away, so after every action
//! `Σ stacks + bank + Σ stakes in play = chips_in_minor` (buy-ins less cash-outs);
//! [`OkoBereEngine::apply`] checks it and refuses (`chips_not_conserved`) an action that would
//! break it.
//!
//! **Seats.** Seats are numbered `0 … players_max − 1` in the direction of play: the player
//! "on the right side" of seat `n` is the next higher occupied seat, after the highest the
//! lowest (plan assumption on `first_to_act`).
//!
//! In the order of the document:
//! - *Rules*: the 32-card deck (a card the shoe cannot hold, or one already out in the round,
//!   is refused: `card_not_in_shoe`); the banker "agreed upon by the players"
//!   (`appoint_banker`) "or drawn from the deck of cards (the highest card gives)"
//!   (`draw_for_banker`, then one `card` per contender, ties draw again); the bank of at least
//!   `min_bank` (`set_bank`).
//! - *Rounds*: `start_round` names the cutter ("the banker asks one player to slice the deck")
//!   and whether the banker calls malá domů; the cutter may `offer_duel` with his stake, the
//!   banker `answer_duel`s after hearing it, and in a duel the `duel_card` (the bottom card of
//!   the cut) is the first card of both, with no raise and no exchange. Otherwise one `card`
//!   to each player in the order of play, the banker's last. Each player in turn: `bet` once
//!   (at least `min_bet`, at most what the bank has not matched yet), `draw` (with an optional
//!   raise "before drawing each card", matched by the bank), `replace` a replaceable hand, or
//!   `stand` ("enough"). An overdraw gives the stake to the bank at once. The banker plays
//!   last (`draw`, `replace`, `stand`); then every active bet is settled, ties to the bank,
//!   and an overdrawn banker pays every active bet.
//! - *Card values*, *Special cases*: [`OkoBereEngine::best_total`] (the šantala counted as is
//!   best for its holder), [`OkoBereEngine::outright`] (two aces, ace and šantala),
//!   [`OkoBereEngine::replaceable`].
//! - *End of the game*: an empty bank passes to the player whose bet emptied it if the players
//!   go on (his `set_bank`) or ends the game (`end_game`); malá domů keeps the bank on the
//!   banker's first card 8 or K.
//!
//! Outside the document (plan `policies`): `void_round` returns every stake of the round and
//! the bank to where they stood before it; [`OkoBereEngine::automatic_decision`] is the
//! decision taken for a player or banker who does not decide in time; `close_table`.
//!
//! **RNG mode**: the lifecycle deals the cards of [`crate::rng::shuffled`] in order to whom
//! [`OkoBereEngine::expected`] names; the engine does not know where a card came from.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Refusal;
use crate::cards::Card;
use crate::plan::model::{AutoDecision, Plan};
use crate::plan::rules::oko_bere::{
    BankerMethod, BetCap, CardPattern, HandCondition, NextBanker, OkoBereRules, PiquetRank, Winner,
};
use crate::plan::rules::{Family, GameRules};

/// A seat number, `0 … players_max − 1`, increasing in the direction of play.
pub type SeatNo = u8;

/// Longest player id the engine keeps.
pub const PLAYER_ID_MAX_CHARS: usize = 64;
/// Longest reason given for a void.
pub const REASON_MAX_CHARS: usize = 200;

/// The stable codes of the refusals this engine returns.
pub mod code {
    pub use crate::games::code::WRONG_FAMILY;
    /// The plan's rules do not pass their own lint.
    pub const INVALID_RULES: &str = "invalid_rules";
    /// A reading of the rules this engine does not implement (`bet_cap =
    /// "each_bet_at_most_bank"`, a time-out decision other than `stand`…).
    pub const UNSUPPORTED_RULES: &str = "unsupported_rules";
    /// The table is closed: nothing more happens at it.
    pub const TABLE_CLOSED: &str = "table_closed";
    /// The action does not fit what the rules wait for now (the message says what they wait
    /// for).
    pub const NOT_EXPECTED: &str = "not_expected";
    /// Another seat is to act (or to receive the card).
    pub const NOT_YOUR_TURN: &str = "not_your_turn";
    /// Seats and chips change only between rounds.
    pub const ROUND_IN_PROGRESS: &str = "round_in_progress";
    /// A seat number beyond `players_max`, or a seat nobody sits at.
    pub const NO_SUCH_SEAT: &str = "no_such_seat";
    pub const SEAT_TAKEN: &str = "seat_taken";
    /// The player already sits at another seat of the table.
    pub const PLAYER_SEATED: &str = "player_seated";
    /// An empty or overlong player id or void reason.
    pub const BAD_TEXT: &str = "bad_text";
    /// An amount that is zero or negative.
    pub const BAD_AMOUNT: &str = "bad_amount";
    /// Chips at the table that would not fit in 64-bit minor units.
    pub const AMOUNT_OVERFLOW: &str = "amount_overflow";
    /// More than the seat holds.
    pub const INSUFFICIENT_CHIPS: &str = "insufficient_chips";
    /// The banker, the chosen banker or the next banker cannot leave now.
    pub const SEAT_IN_PLAY: &str = "seat_in_play";
    /// A way of choosing the banker the plan does not list.
    pub const METHOD_NOT_ALLOWED: &str = "method_not_allowed";
    /// A draw for the banker needs two contenders, each seated once.
    pub const BAD_DRAW: &str = "bad_draw";
    /// A bank below `min_bank`, or a banker who cannot set one up.
    pub const BANK_BELOW_MINIMUM: &str = "bank_below_minimum";
    /// The cutter must be a seated player other than the banker.
    pub const NOT_A_PLAYER: &str = "not_a_player";
    /// Nobody at the table can place a bet the bank can match.
    pub const NO_PLAYERS: &str = "no_players";
    /// Malá domů called with a bank below `min_bank_multiple` × the initial bank.
    pub const MALA_DOMU_BANK_TOO_SMALL: &str = "mala_domu_bank_too_small";
    pub const DUEL_NOT_ALLOWED: &str = "duel_not_allowed";
    /// The plan does not let the banker decline a duel.
    pub const DUEL_REFUSAL_NOT_ALLOWED: &str = "duel_refusal_not_allowed";
    pub const BELOW_MIN_BET: &str = "below_min_bet";
    /// A bet or raise above what the bank has not matched yet ("bet up to the bank").
    pub const ABOVE_BANK: &str = "above_bank";
    /// A second `bet`: a raise is made with the next card (`draw` with `raise_minor`).
    pub const ALREADY_BET: &str = "already_bet";
    /// A raise in a duel, or where the plan allows none.
    pub const RAISE_NOT_ALLOWED: &str = "raise_not_allowed";
    /// The banker holds the bank: he matches bets, he does not bet.
    pub const BANKER_DOES_NOT_BET: &str = "banker_does_not_bet";
    /// A card asked for by a player with nothing at stake.
    pub const NO_STAKE: &str = "no_stake";
    /// A hand that is none of the replaceable hands.
    pub const NOT_REPLACEABLE: &str = "not_replaceable";
    /// A replacement in a duel, or by the banker where the plan allows none.
    pub const REPLACEMENT_NOT_ALLOWED: &str = "replacement_not_allowed";
    /// A card the shoe does not hold, or one already out in this round (or draw).
    pub const CARD_NOT_IN_SHOE: &str = "card_not_in_shoe";
    /// The engine's own check: chips would appear or vanish. Never expected; a bug.
    pub const CHIPS_NOT_CONSERVED: &str = "chips_not_conserved";
}

// ----- Actions ----------------------------------------------------------------------------

/// One act at the table, as an operator sends it and as the log holds it:
/// `{"action": "bet", "seat": 2, "stake_minor": 2000}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum OkoBereAction {
    /// A player takes a free seat and brings chips (between rounds).
    Join {
        seat: SeatNo,
        player: String,
        buy_in_minor: i64,
    },
    /// More chips for a seated player (between rounds).
    BuyIn { seat: SeatNo, amount_minor: i64 },
    /// Chips taken from the table (between rounds; never the bank).
    CashOut { seat: SeatNo, amount_minor: i64 },
    /// A player leaves; his remaining chips are cashed out.
    Leave { seat: SeatNo },
    /// "agreed upon by the players".
    AppointBanker { seat: SeatNo },
    /// "drawn from the deck of cards (the highest card gives)": these seats draw, one `card`
    /// each in seat order.
    DrawForBanker { seats: Vec<SeatNo> },
    /// The banker sets up his bank from his chips (after being chosen, or after taking over
    /// an empty bank: the players go on).
    SetBank { seat: SeatNo, bank_minor: i64 },
    /// A round: the banker asks `cutter` to cut, and calls malá domů or not.
    StartRound {
        cutter: SeatNo,
        #[serde(default)]
        mala_domu: bool,
    },
    /// The cutter offers a duel with his stake.
    OfferDuel { seat: SeatNo, stake_minor: i64 },
    /// The banker accepts or declines the duel "after hearing initial bet size".
    AnswerDuel { accept: bool },
    /// The card at the bottom of the cut: the first card of both in a duel.
    DuelCard { card: Card },
    /// A card dealt to a seat (the banker's included, and in the draw for the banker).
    Card { seat: SeatNo, card: Card },
    /// A player's bet, once, in his turn.
    Bet { seat: SeatNo, stake_minor: i64 },
    /// "draw another card", with a raise "before drawing" it if `raise_minor` is given.
    Draw {
        seat: SeatNo,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        raise_minor: Option<i64>,
    },
    /// "enough". A player who has not bet takes no part in the round.
    Stand { seat: SeatNo },
    /// "he can ask to get his cards replaced".
    Replace { seat: SeatNo },
    /// No banker goes on: the players stop after an empty bank, or give up choosing a banker.
    EndGame,
    /// An error that cannot be put right: the round is void, every stake returned.
    VoidRound { reason: String },
    /// The table closes between rounds: the bank goes back to the banker and every seat is
    /// cashed out.
    CloseTable,
}

// ----- Effects ----------------------------------------------------------------------------

/// How the banker came to hold the bank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChosenBy {
    Agreement,
    HighestCard,
    /// "the banker is the last player that placed the last bet which emptied out the bank".
    EmptiedTheBank,
}

/// Why a bet went where it went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SettleReason {
    /// The player's total beats the banker's.
    HigherTotal,
    /// The banker's total beats the player's.
    LowerTotal,
    /// Equal totals (the plan's `ties`).
    Tie,
    /// The player holds an outright win, the banker none.
    Outright,
    /// The banker holds an outright win, the player none.
    BankerOutright,
    /// Both do (the plan's `outright_against_outright`).
    BothOutright,
    /// "In case the banker overdraws, he looses all active bets."
    BankerBust,
}

/// A stake returned to its player.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Refund {
    pub seat: SeatNo,
    pub amount_minor: i64,
}

/// What an action did. Money moves are explicit so that the log shows every chip.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "effect", rename_all = "snake_case")]
pub enum OkoBereEffect {
    Seated {
        seat: SeatNo,
        player: String,
        buy_in_minor: i64,
    },
    BoughtIn {
        seat: SeatNo,
        amount_minor: i64,
    },
    CashedOut {
        seat: SeatNo,
        amount_minor: i64,
    },
    Left {
        seat: SeatNo,
        player: String,
    },
    /// The highest card was drawn by several: they draw again.
    BankerDrawTied {
        seats: Vec<SeatNo>,
    },
    BankerChosen {
        seat: SeatNo,
        by: ChosenBy,
    },
    /// Chips moved from the banker's stack into the bank.
    BankSet {
        seat: SeatNo,
        bank_minor: i64,
    },
    RoundStarted {
        round: u64,
        banker: SeatNo,
        cutter: SeatNo,
        /// The players dealt in, in the order of play.
        players: Vec<SeatNo>,
        mala_domu: bool,
    },
    DuelOffered {
        seat: SeatNo,
        stake_minor: i64,
    },
    DuelDeclined {
        seat: SeatNo,
        stake_minor: i64,
    },
    DuelAccepted {
        seat: SeatNo,
        stake_minor: i64,
    },
    /// A bet or a raise: `stake_minor` from the player, `matched_minor` from the bank.
    Staked {
        seat: SeatNo,
        stake_minor: i64,
        matched_minor: i64,
        /// The player's whole stake in the round after this bet.
        stake_total_minor: i64,
        /// What the bank holds unmatched after this bet.
        bank_minor: i64,
    },
    /// The hand's cards are put aside; as many new cards follow.
    Replaced {
        seat: SeatNo,
        hand: String,
        aside: Vec<Card>,
    },
    /// Two aces, or ace and šantala.
    Outright {
        seat: SeatNo,
        hand: String,
    },
    /// "enough", or 21 (`automatic`: no card can help).
    Stood {
        seat: SeatNo,
        total: u8,
        automatic: bool,
    },
    /// A player who stood without a bet: he takes no part in the round.
    SatOut {
        seat: SeatNo,
    },
    /// A player overdrew: his stake and the bank's match go to the bank at once.
    Bust {
        seat: SeatNo,
        total: u8,
        stake_minor: i64,
        to_bank_minor: i64,
    },
    /// The banker overdrew.
    BankerBust {
        seat: SeatNo,
        total: u8,
    },
    /// The banker's first card under malá domů.
    MalaDomu {
        card: Card,
        kept: bool,
    },
    /// A stake handed back (malá domů kept: "no hand was played out against the bank").
    StakeReturned {
        seat: SeatNo,
        amount_minor: i64,
        bank_returned_minor: i64,
    },
    /// One active bet settled: the whole pot (stake + match) goes to the player or the bank.
    Settled {
        seat: SeatNo,
        winner: Winner,
        reason: SettleReason,
        stake_minor: i64,
        to_player_minor: i64,
        to_bank_minor: i64,
    },
    RoundEnded {
        round: u64,
        bank_minor: i64,
    },
    /// The bank is empty: `next_banker` takes it if the players go on (none: chosen anew).
    BankEmptied {
        next_banker: Option<SeatNo>,
    },
    /// The bank went back into the banker's chips.
    BankTaken {
        seat: SeatNo,
        bank_minor: i64,
    },
    RoundVoided {
        round: u64,
        reason: String,
        refunds: Vec<Refund>,
        bank_restored_minor: i64,
    },
    /// No banker: one is chosen anew (or nobody plays on).
    GameEnded,
    TableClosed,
}

// ----- What the rules wait for -------------------------------------------------------------

/// A range of stakes, both ends included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StakeRange {
    pub min_minor: i64,
    pub max_minor: i64,
}

/// Why a card is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CardFor {
    BankerDraw,
    FirstCard,
    Draw,
    Replacement,
}

/// A player's or the banker's choices in his turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Decision {
    pub seat: SeatNo,
    pub banker: bool,
    /// The first bet, if he may place it now.
    pub bet: Option<StakeRange>,
    /// A raise with the next card, if he may.
    pub raise: Option<StakeRange>,
    pub draw: bool,
    /// Always true: "enough" is always possible.
    pub stand: bool,
    /// The replaceable hand he holds, if he may ask for a replacement.
    pub replace: Option<String>,
}

/// What the rules wait for next; computed from the state alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "expect", rename_all = "snake_case")]
pub enum Expected {
    /// No banker: `appoint_banker` or `draw_for_banker`, as the plan allows.
    Banker {
        methods: Vec<BankerMethod>,
    },
    BankerDrawCard {
        seat: SeatNo,
    },
    /// The chosen banker sets up his bank (`set_bank`).
    Bank {
        seat: SeatNo,
        min_minor: i64,
        stack_minor: i64,
    },
    /// Between rounds: `start_round`.
    Round {
        banker: SeatNo,
        bank_minor: i64,
        mala_domu_allowed: bool,
    },
    /// The cutter may offer a duel; otherwise the first card goes to `first_card_to`.
    DuelOrFirstCard {
        cutter: SeatNo,
        duel_stake: StakeRange,
        first_card_to: SeatNo,
    },
    DuelAnswer {
        banker: SeatNo,
        seat: SeatNo,
        stake_minor: i64,
    },
    DuelCard,
    Card {
        seat: SeatNo,
        reason: CardFor,
    },
    Decision(Decision),
    /// The bank is empty: `next_banker` sets up a bank (the players go on), or `end_game`.
    EmptyBank {
        next_banker: SeatNo,
    },
    Closed,
}

// ----- State ------------------------------------------------------------------------------

/// One seated player.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Seat {
    pub player: String,
    /// His chips at the table, outside the bank and outside the round's stakes.
    pub stack_minor: i64,
}

/// The bank and who holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Bank {
    pub banker: SeatNo,
    /// What the bank holds that no bet of the current round has matched.
    pub bank_minor: i64,
    /// The bank as the banker set it up (for malá domů: "double the initial size").
    pub initial_minor: i64,
}

/// One hand of a round (a player's, or the banker's with no stake).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Hand {
    pub cards: Vec<Card>,
    pub stake_minor: i64,
    /// The bank's equal amount ("the banker adds the same amount to the bet from the bank").
    pub matched_minor: i64,
    pub status: HandStatus,
    /// Cards due to this hand before anything else happens.
    pub owed: u8,
    /// The owed cards replace a hand put aside.
    pub replacing: bool,
}

impl Hand {
    /// A bet still in play at the end of the players' turns.
    fn active(&self) -> bool {
        self.stake_minor > 0 && matches!(self.status, HandStatus::Stood | HandStatus::Outright)
    }

    /// The stake and the bank's match while they are in the round.
    fn in_play_minor(&self) -> i64 {
        if self.status == HandStatus::Bust {
            0
        } else {
            self.stake_minor + self.matched_minor
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HandStatus {
    #[default]
    Open,
    Stood,
    Bust,
    Outright,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "stage", rename_all = "snake_case")]
pub enum Stage {
    /// After the cut: a duel may be offered, or the first card dealt.
    DuelOrDeal,
    DuelOffered {
        stake_minor: i64,
    },
    DuelCard,
    /// One card to each player in the order of play, the banker's last.
    FirstPass,
    Turn {
        seat: SeatNo,
    },
    BankerTurn,
}

/// A round under way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Round {
    pub number: u64,
    pub cutter: SeatNo,
    pub mala_domu: bool,
    pub duel: bool,
    pub stage: Stage,
    /// The players of the round in the order of play.
    pub order: Vec<SeatNo>,
    pub hands: BTreeMap<SeatNo, Hand>,
    pub banker_hand: Hand,
    /// Every card out in this round, those put aside included.
    pub dealt: Vec<Card>,
    /// The last player whose bet left the bank with nothing unmatched.
    pub emptied_by: Option<SeatNo>,
    /// Stacks and bank before the round, for a void.
    pub stacks_before: BTreeMap<SeatNo, i64>,
    pub bank_before_minor: i64,
}

/// The draw for the banker under way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BankerDraw {
    /// Who draws (again), in seat order.
    pub contenders: Vec<SeatNo>,
    pub drawn: Vec<(SeatNo, Card)>,
    /// Every card out in the draw.
    pub seen: Vec<Card>,
}

/// Externally tagged (`{"round": {…}}`, `"between_rounds"`): an internally tagged enum would
/// buffer its content, and seat-keyed maps inside would not read back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    NoBanker,
    BankerDraw(BankerDraw),
    AwaitingBank { banker: SeatNo },
    BetweenRounds,
    Round(Box<Round>),
    BankEmpty { next_banker: SeatNo },
    Closed,
}

/// The whole table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct OkoBereState {
    pub seats: BTreeMap<SeatNo, Seat>,
    /// Buy-ins less cash-outs: every chip at the table.
    pub chips_in_minor: i64,
    pub bank: Option<Bank>,
    pub phase: Phase,
    pub rounds_started: u64,
}

impl Default for OkoBereState {
    fn default() -> Self {
        OkoBereState::new()
    }
}

impl OkoBereState {
    /// An empty table with no banker.
    pub fn new() -> OkoBereState {
        OkoBereState {
            seats: BTreeMap::new(),
            chips_in_minor: 0,
            bank: None,
            phase: Phase::NoBanker,
            rounds_started: 0,
        }
    }

    pub fn stack_minor(&self, seat: SeatNo) -> Option<i64> {
        self.seats.get(&seat).map(|s| s.stack_minor)
    }

    pub fn bank_minor(&self) -> Option<i64> {
        self.bank.as_ref().map(|b| b.bank_minor)
    }

    pub fn banker(&self) -> Option<SeatNo> {
        self.bank.as_ref().map(|b| b.banker)
    }

    pub fn round(&self) -> Option<&Round> {
        match &self.phase {
            Phase::Round(r) => Some(r),
            _ => None,
        }
    }

    /// Every chip at the table: stacks, bank, stakes in play (i128: never overflows).
    pub fn chips_counted_minor(&self) -> i128 {
        let stacks: i128 = self.seats.values().map(|s| i128::from(s.stack_minor)).sum();
        let bank = self.bank.as_ref().map_or(0, |b| i128::from(b.bank_minor));
        let in_play: i128 = self.round().map_or(0, |r| {
            r.hands
                .values()
                .map(|h| i128::from(h.in_play_minor()))
                .sum()
        });
        stacks + bank + in_play
    }
}

// ----- Engine -----------------------------------------------------------------------------

/// The Oko bere engine for one plan.
#[derive(Debug, Clone)]
pub struct OkoBereEngine<'p> {
    plan: &'p Plan,
    rules: &'p OkoBereRules,
    key: String,
    /// `value[rank.number()]` from the card-value table.
    value: [u8; 15],
}

impl<'p> OkoBereEngine<'p> {
    pub fn new(plan: &'p Plan) -> Result<OkoBereEngine<'p>, Refusal> {
        crate::games::expect_family(plan, Family::OkoBere, "Oko bere")?;
        let GameRules::OkoBere(rules) = &plan.rules else {
            unreachable!("expect_family checked the rules' family")
        };
        let key = plan.key();
        if let Some((path, problem)) = rules.lint().first() {
            return Err(
                Refusal::new(code::INVALID_RULES, format!("{key}: {path}: {problem}"))
                    .clause(rules.clause.clone()),
            );
        }
        let unsupported = |what: &str| {
            Err(Refusal::new(
                code::UNSUPPORTED_RULES,
                format!("{key}: {what} is not implemented by the Oko bere engine"),
            )
            .clause(rules.clause.clone()))
        };
        if rules.bet_cap != BetCap::TotalActiveBetsAtMostBank {
            // With each bet capped alone, the bank could owe more than it holds.
            return unsupported("bet_cap other than total_active_bets_at_most_bank");
        }
        if rules.mala_domu.next_banker != NextBanker::SelectedAnew {
            return unsupported("mala_domu.next_banker other than selected_anew");
        }
        if let Some(t) = &plan.policies.decision_timeout {
            if t.automatic != AutoDecision::Stand {
                return unsupported("a decision time-out other than stand");
            }
        }
        let mut value = [0u8; 15];
        for v in &rules.card_values {
            value[usize::from(v.rank.rank().number())] = v.value;
        }
        Ok(OkoBereEngine {
            plan,
            rules,
            key,
            value,
        })
    }

    pub fn plan(&self) -> &'p Plan {
        self.plan
    }

    // ----- Card values ---------------------------------------------------------------------

    /// Every value `card` may take: its row of the card-value table, or a wild card's values.
    fn values_of(&self, card: Card) -> Vec<u16> {
        match self.rules.wild_cards.iter().find(|w| w.card == card) {
            Some(w) => w.values.iter().map(|&v| u16::from(v)).collect(),
            None => vec![u16::from(self.value[usize::from(card.rank.number())])],
        }
    }

    /// Every total the hand can make (each šantala taking each of its values), ascending.
    pub fn totals(&self, cards: &[Card]) -> Vec<u16> {
        let mut totals = vec![0u16];
        for &c in cards {
            let vs = self.values_of(c);
            totals = totals
                .iter()
                .flat_map(|t| vs.iter().map(move |v| t + v))
                .collect();
            totals.sort_unstable();
            totals.dedup();
        }
        totals
    }

    /// The hand's total, each šantala counted "according to what is most beneficial for the
    /// player": the highest total not above the target. `None`: every reading overdraws.
    pub fn best_total(&self, cards: &[Card]) -> Option<u8> {
        self.totals(cards)
            .into_iter()
            .filter(|&t| t <= u16::from(self.rules.target_total))
            .max()
            .map(|t| u8::try_from(t).expect("at most the target, a u8"))
    }

    /// The outright win the hand is ("two aces or ace and šantala"), if any: the hand is
    /// exactly the named cards, in any order.
    pub fn outright(&self, cards: &[Card]) -> Option<&'p str> {
        self.rules
            .outright_wins
            .iter()
            .find(|o| o.cards.len() == cards.len() && matches_in_any_order(&o.cards, cards))
            .map(|o| o.id.as_str())
    }

    /// The replaceable hand `cards` is, if any. A total is met by any reading of the šantala:
    /// its holder chooses what is best for him, and asking for a replacement says it.
    pub fn replaceable(&self, cards: &[Card]) -> Option<&'p str> {
        self.rules
            .replaceable_hands
            .iter()
            .find(|h| match &h.when {
                HandCondition::FirstCards(first) => {
                    first.len() == cards.len()
                        && first.iter().zip(cards).all(|(p, c)| p.matches(*c))
                }
                HandCondition::AllPictures(n) => {
                    usize::from(*n) == cards.len() && cards.iter().all(|c| c.rank.is_picture())
                }
                HandCondition::Total(t) => self.totals(cards).contains(&u16::from(*t)),
            })
            .map(|h| h.id.as_str())
    }

    // ----- What next -----------------------------------------------------------------------

    /// What the rules wait for in `s`.
    pub fn expected(&self, s: &OkoBereState) -> Expected {
        match &s.phase {
            Phase::Closed => Expected::Closed,
            Phase::NoBanker => Expected::Banker {
                methods: self.rules.banker_selection.methods.clone(),
            },
            Phase::BankerDraw(d) => Expected::BankerDrawCard {
                seat: next_drawer(d).expect("a draw under way has a contender to draw"),
            },
            Phase::AwaitingBank { banker } => Expected::Bank {
                seat: *banker,
                min_minor: self.rules.min_bank,
                stack_minor: s.stack_minor(*banker).unwrap_or(0),
            },
            Phase::BetweenRounds => {
                let b = s.bank.as_ref().expect("between rounds a bank is held");
                Expected::Round {
                    banker: b.banker,
                    bank_minor: b.bank_minor,
                    mala_domu_allowed: self.mala_domu_allowed(b),
                }
            }
            Phase::BankEmpty { next_banker } => Expected::EmptyBank {
                next_banker: *next_banker,
            },
            Phase::Round(r) => {
                let b = s.bank.as_ref().expect("a round is played against a bank");
                match r.stage {
                    Stage::DuelOrDeal => {
                        let stack = s.stack_minor(r.cutter).unwrap_or(0);
                        match self.stake_range(stack, b.bank_minor, self.rules.min_bet) {
                            Some(duel_stake) => Expected::DuelOrFirstCard {
                                cutter: r.cutter,
                                duel_stake,
                                first_card_to: first_pass_next(r, b.banker),
                            },
                            None => Expected::Card {
                                seat: first_pass_next(r, b.banker),
                                reason: CardFor::FirstCard,
                            },
                        }
                    }
                    Stage::DuelOffered { stake_minor } => Expected::DuelAnswer {
                        banker: b.banker,
                        seat: r.cutter,
                        stake_minor,
                    },
                    Stage::DuelCard => Expected::DuelCard,
                    Stage::FirstPass => Expected::Card {
                        seat: first_pass_next(r, b.banker),
                        reason: CardFor::FirstCard,
                    },
                    Stage::Turn { seat } => {
                        let h = &r.hands[&seat];
                        self.turn_expected(s, r, b, seat, h, false)
                    }
                    Stage::BankerTurn => {
                        self.turn_expected(s, r, b, b.banker, &r.banker_hand, true)
                    }
                }
            }
        }
    }

    fn turn_expected(
        &self,
        s: &OkoBereState,
        r: &Round,
        b: &Bank,
        seat: SeatNo,
        h: &Hand,
        banker: bool,
    ) -> Expected {
        if h.owed > 0 {
            return Expected::Card {
                seat,
                reason: if h.replacing {
                    CardFor::Replacement
                } else {
                    CardFor::Draw
                },
            };
        }
        let stack = s.stack_minor(seat).unwrap_or(0);
        let may_stake = !banker && !r.duel;
        let bet = (may_stake && h.stake_minor == 0)
            .then(|| self.stake_range(stack, b.bank_minor, self.rules.min_bet))
            .flatten();
        let raise = (may_stake && h.stake_minor > 0 && self.rules.raise_before_each_card)
            .then(|| self.stake_range(stack, b.bank_minor, self.rules.min_raise))
            .flatten();
        Expected::Decision(Decision {
            seat,
            banker,
            bet,
            raise,
            draw: banker || h.stake_minor > 0,
            stand: true,
            replace: self
                .replacement_allowed(r, banker)
                .then(|| self.replaceable(&h.cards))
                .flatten()
                .map(str::to_string),
        })
    }

    /// The decision the plan's `policies.decision_timeout` takes for a player (or banker) who
    /// does not decide in time: "enough"; a duel not answered is declined. `None` when no
    /// decision is pending.
    pub fn automatic_decision(&self, s: &OkoBereState) -> Option<OkoBereAction> {
        self.plan.policies.decision_timeout.as_ref()?;
        match self.expected(s) {
            Expected::Decision(d) => Some(OkoBereAction::Stand { seat: d.seat }),
            Expected::DuelAnswer { .. }
                if self.rules.duel.banker_may_refuse_after_hearing_stake =>
            {
                Some(OkoBereAction::AnswerDuel { accept: false })
            }
            _ => None,
        }
    }

    // ----- Apply ---------------------------------------------------------------------------

    /// Applies one action: on success the state moves on and the effects say what happened;
    /// on refusal the state is unchanged. The chips are counted after every action.
    pub fn apply(
        &self,
        state: &mut OkoBereState,
        action: &OkoBereAction,
    ) -> Result<Vec<OkoBereEffect>, Refusal> {
        let mut next = state.clone();
        let mut fx = Vec::new();
        self.step(&mut next, action, &mut fx)?;
        self.check_chips(&next)?;
        *state = next;
        Ok(fx)
    }

    /// Rebuilds a table from its logged actions; on a refusal, its index and the refusal.
    pub fn replay<'a>(
        &self,
        actions: impl IntoIterator<Item = &'a OkoBereAction>,
    ) -> Result<OkoBereState, (usize, Refusal)> {
        let mut s = OkoBereState::new();
        for (i, a) in actions.into_iter().enumerate() {
            self.apply(&mut s, a).map_err(|r| (i, r))?;
        }
        Ok(s)
    }

    /// `Σ stacks + bank + Σ stakes in play = chips_in_minor`, no negative stack or bank, and
    /// every stake matched 1:1 by the bank.
    pub fn check_chips(&self, s: &OkoBereState) -> Result<(), Refusal> {
        let broken =
            |what: String| Err(Refusal::new(code::CHIPS_NOT_CONSERVED, what).with_plan(&self.key));
        if let Some((n, seat)) = s.seats.iter().find(|(_, seat)| seat.stack_minor < 0) {
            return broken(format!("seat {n} holds {} chips", seat.stack_minor));
        }
        if let Some(b) = s.bank.as_ref().filter(|b| b.bank_minor < 0) {
            return broken(format!("the bank holds {}", b.bank_minor));
        }
        if let Some(r) = s.round() {
            if let Some((n, h)) = r
                .hands
                .iter()
                .find(|(_, h)| h.stake_minor < 0 || h.matched_minor != h.stake_minor)
            {
                return broken(format!(
                    "seat {n} stakes {} matched by {}",
                    h.stake_minor, h.matched_minor
                ));
            }
        }
        let counted = s.chips_counted_minor();
        if counted != i128::from(s.chips_in_minor) {
            return broken(format!(
                "{counted} chips counted at the table, {} brought in",
                s.chips_in_minor
            ));
        }
        Ok(())
    }

    fn step(
        &self,
        s: &mut OkoBereState,
        a: &OkoBereAction,
        fx: &mut Vec<OkoBereEffect>,
    ) -> Result<(), Refusal> {
        use OkoBereAction as A;
        if matches!(s.phase, Phase::Closed) {
            return Err(Refusal::new(code::TABLE_CLOSED, "the table is closed"));
        }
        match a {
            A::Join {
                seat,
                player,
                buy_in_minor,
            } => self.join(s, *seat, player, *buy_in_minor, fx),
            A::BuyIn { seat, amount_minor } => self.buy_in(s, *seat, *amount_minor, fx),
            A::CashOut { seat, amount_minor } => self.cash_out(s, *seat, *amount_minor, fx),
            A::Leave { seat } => self.leave(s, *seat, fx),
            A::AppointBanker { seat } => self.appoint(s, *seat, fx),
            A::DrawForBanker { seats } => self.start_draw(s, seats),
            A::SetBank { seat, bank_minor } => self.set_bank(s, *seat, *bank_minor, fx),
            A::StartRound { cutter, mala_domu } => self.start_round(s, *cutter, *mala_domu, fx),
            A::OfferDuel { seat, stake_minor } => self.offer_duel(s, *seat, *stake_minor, fx),
            A::AnswerDuel { accept } => self.answer_duel(s, *accept, fx),
            A::DuelCard { card } => self.duel_card(s, *card, fx),
            A::Card { seat, card } => {
                if matches!(s.phase, Phase::BankerDraw(_)) {
                    self.banker_draw_card(s, *seat, *card, fx)
                } else {
                    self.round_card(s, *seat, *card, fx)
                }
            }
            A::Bet { seat, stake_minor } => self.bet(s, *seat, *stake_minor, fx),
            A::Draw { seat, raise_minor } => self.draw(s, *seat, *raise_minor, fx),
            A::Stand { seat } => self.stand(s, *seat, fx),
            A::Replace { seat } => self.replace(s, *seat, fx),
            A::EndGame => self.end_game(s, fx),
            A::VoidRound { reason } => self.void_round(s, reason, fx),
            A::CloseTable => self.close_table(s, fx),
        }
    }

    // ----- Seats and chips -----------------------------------------------------------------

    fn between_rounds(&self, s: &OkoBereState) -> Result<(), Refusal> {
        match &s.phase {
            Phase::Round(_) => Err(Refusal::new(
                code::ROUND_IN_PROGRESS,
                "seats and chips change only between rounds",
            )),
            Phase::BankerDraw(_) => Err(Refusal::new(
                code::ROUND_IN_PROGRESS,
                "seats and chips change only between rounds, not during the draw for the banker",
            )),
            _ => Ok(()),
        }
    }

    fn seat_mut<'s>(&self, s: &'s mut OkoBereState, seat: SeatNo) -> Result<&'s mut Seat, Refusal> {
        s.seats
            .get_mut(&seat)
            .ok_or_else(|| Refusal::new(code::NO_SUCH_SEAT, format!("nobody sits at seat {seat}")))
    }

    /// Takes `amount_minor` from the seat's stack, refused when the stack holds less.
    fn take_from_stack(
        &self,
        s: &mut OkoBereState,
        seat: SeatNo,
        amount_minor: i64,
    ) -> Result<(), Refusal> {
        let money = self.money(amount_minor);
        let st = self.seat_mut(s, seat)?;
        if amount_minor > st.stack_minor {
            return Err(Refusal::new(
                code::INSUFFICIENT_CHIPS,
                format!(
                    "seat {seat} holds {}, not {money}",
                    self.money(st.stack_minor)
                ),
            ));
        }
        st.stack_minor -= amount_minor;
        Ok(())
    }

    fn positive(&self, amount_minor: i64, what: &str) -> Result<(), Refusal> {
        if amount_minor <= 0 {
            return Err(Refusal::new(
                code::BAD_AMOUNT,
                format!("{what} must be positive, not {amount_minor}"),
            ));
        }
        Ok(())
    }

    fn bring_in(&self, s: &mut OkoBereState, amount_minor: i64) -> Result<(), Refusal> {
        s.chips_in_minor = s.chips_in_minor.checked_add(amount_minor).ok_or_else(|| {
            Refusal::new(
                code::AMOUNT_OVERFLOW,
                "the chips at the table would not fit in 64-bit minor units",
            )
        })?;
        Ok(())
    }

    fn join(
        &self,
        s: &mut OkoBereState,
        seat: SeatNo,
        player: &str,
        buy_in_minor: i64,
        fx: &mut Vec<OkoBereEffect>,
    ) -> Result<(), Refusal> {
        self.between_rounds(s)?;
        if seat >= self.rules.players_max {
            return Err(Refusal::new(
                code::NO_SUCH_SEAT,
                format!(
                    "{} seats players 0 to {}",
                    self.key,
                    self.rules.players_max - 1
                ),
            )
            .with_plan(&self.key));
        }
        if s.seats.contains_key(&seat) {
            return Err(Refusal::new(
                code::SEAT_TAKEN,
                format!("seat {seat} is taken"),
            ));
        }
        if player.trim().is_empty() || player.chars().count() > PLAYER_ID_MAX_CHARS {
            return Err(Refusal::new(
                code::BAD_TEXT,
                format!("a player id has 1 to {PLAYER_ID_MAX_CHARS} characters"),
            ));
        }
        if let Some((n, _)) = s.seats.iter().find(|(_, x)| x.player == player) {
            return Err(Refusal::new(
                code::PLAYER_SEATED,
                format!("{player} sits at seat {n} already"),
            ));
        }
        self.positive(buy_in_minor, "a buy-in")?;
        self.bring_in(s, buy_in_minor)?;
        s.seats.insert(
            seat,
            Seat {
                player: player.to_string(),
                stack_minor: buy_in_minor,
            },
        );
        fx.push(OkoBereEffect::Seated {
            seat,
            player: player.to_string(),
            buy_in_minor,
        });
        Ok(())
    }

    fn buy_in(
        &self,
        s: &mut OkoBereState,
        seat: SeatNo,
        amount_minor: i64,
        fx: &mut Vec<OkoBereEffect>,
    ) -> Result<(), Refusal> {
        self.between_rounds(s)?;
        self.seat_mut(s, seat)?;
        self.positive(amount_minor, "a buy-in")?;
        self.bring_in(s, amount_minor)?;
        self.seat_mut(s, seat)?.stack_minor += amount_minor;
        fx.push(OkoBereEffect::BoughtIn { seat, amount_minor });
        Ok(())
    }

    fn cash_out(
        &self,
        s: &mut OkoBereState,
        seat: SeatNo,
        amount_minor: i64,
        fx: &mut Vec<OkoBereEffect>,
    ) -> Result<(), Refusal> {
        self.between_rounds(s)?;
        self.positive(amount_minor, "a cash-out")?;
        self.take_from_stack(s, seat, amount_minor)?;
        s.chips_in_minor -= amount_minor;
        fx.push(OkoBereEffect::CashedOut { seat, amount_minor });
        Ok(())
    }

    fn leave(
        &self,
        s: &mut OkoBereState,
        seat: SeatNo,
        fx: &mut Vec<OkoBereEffect>,
    ) -> Result<(), Refusal> {
        self.between_rounds(s)?;
        self.seat_mut(s, seat)?;
        let holds = match &s.phase {
            Phase::AwaitingBank { banker } => *banker == seat,
            Phase::BankEmpty { next_banker } => *next_banker == seat,
            _ => s.banker() == Some(seat),
        };
        if holds {
            return Err(Refusal::new(
                code::SEAT_IN_PLAY,
                format!("seat {seat} holds or is to take the bank and cannot leave now"),
            ));
        }
        let st = s.seats.remove(&seat).expect("checked: seated");
        if st.stack_minor > 0 {
            s.chips_in_minor -= st.stack_minor;
            fx.push(OkoBereEffect::CashedOut {
                seat,
                amount_minor: st.stack_minor,
            });
        }
        fx.push(OkoBereEffect::Left {
            seat,
            player: st.player,
        });
        Ok(())
    }

    // ----- The banker ----------------------------------------------------------------------

    fn selection_refusal(&self, code: &str, msg: String) -> Refusal {
        Refusal::new(code, msg)
            .with_plan(&self.key)
            .clause(self.rules.banker_selection.clause.clone())
    }

    fn method_allowed(&self, m: BankerMethod) -> Result<(), Refusal> {
        if self.rules.banker_selection.methods.contains(&m) {
            return Ok(());
        }
        Err(self.selection_refusal(
            code::METHOD_NOT_ALLOWED,
            format!(
                "{} does not choose the banker by {}",
                self.key,
                super::wire_name(&m)
            ),
        ))
    }

    /// The banker must be able to set up the minimum bank.
    fn can_hold_bank(&self, s: &OkoBereState, seat: SeatNo) -> Result<(), Refusal> {
        let stack = s.stack_minor(seat).ok_or_else(|| {
            Refusal::new(code::NO_SUCH_SEAT, format!("nobody sits at seat {seat}"))
        })?;
        if stack < self.rules.min_bank {
            return Err(Refusal::new(
                code::BANK_BELOW_MINIMUM,
                format!(
                    "seat {seat} holds {}, less than the minimum bank {}",
                    self.money(stack),
                    self.money(self.rules.min_bank)
                ),
            )
            .with_plan(&self.key)
            .clause(self.rules.clause.clone()));
        }
        Ok(())
    }

    fn no_banker(&self, s: &OkoBereState) -> Result<(), Refusal> {
        if matches!(s.phase, Phase::NoBanker) {
            return Ok(());
        }
        Err(self.not_expected(s))
    }

    fn appoint(
        &self,
        s: &mut OkoBereState,
        seat: SeatNo,
        fx: &mut Vec<OkoBereEffect>,
    ) -> Result<(), Refusal> {
        self.no_banker(s)?;
        self.method_allowed(BankerMethod::ByAgreement)?;
        self.can_hold_bank(s, seat)?;
        s.phase = Phase::AwaitingBank { banker: seat };
        fx.push(OkoBereEffect::BankerChosen {
            seat,
            by: ChosenBy::Agreement,
        });
        Ok(())
    }

    fn start_draw(&self, s: &mut OkoBereState, seats: &[SeatNo]) -> Result<(), Refusal> {
        self.no_banker(s)?;
        self.method_allowed(BankerMethod::HighestCardDrawn)?;
        let mut contenders = seats.to_vec();
        contenders.sort_unstable();
        contenders.dedup();
        if contenders.len() != seats.len() || contenders.len() < 2 {
            return Err(self.selection_refusal(
                code::BAD_DRAW,
                "the draw for the banker needs at least two seats, each named once".into(),
            ));
        }
        for &c in &contenders {
            self.can_hold_bank(s, c)?;
        }
        s.phase = Phase::BankerDraw(BankerDraw {
            contenders,
            drawn: Vec::new(),
            seen: Vec::new(),
        });
        Ok(())
    }

    fn banker_draw_card(
        &self,
        s: &mut OkoBereState,
        seat: SeatNo,
        card: Card,
        fx: &mut Vec<OkoBereEffect>,
    ) -> Result<(), Refusal> {
        let Phase::BankerDraw(d) = &mut s.phase else {
            unreachable!("called in the draw for the banker")
        };
        let to = next_drawer(d).expect("a draw under way has a contender to draw");
        if seat != to {
            return Err(self.selection_refusal(
                code::NOT_YOUR_TURN,
                format!("seat {to} draws next for the banker, not seat {seat}"),
            ));
        }
        self.take_card(&mut d.seen, card)?;
        d.drawn.push((seat, card));
        if next_drawer(d).is_some() {
            return Ok(());
        }
        // "the highest card gives"
        let order = &self.rules.banker_selection.draw_rank_order;
        let strength = |c: Card| {
            PiquetRank::of(c.rank)
                .and_then(|r| order.iter().position(|x| *x == r))
                .expect("lint: the order holds every rank of the deck")
        };
        let top = d
            .drawn
            .iter()
            .map(|(_, c)| strength(*c))
            .max()
            .expect("every contender drew");
        let tied: Vec<SeatNo> = d
            .drawn
            .iter()
            .filter(|(_, c)| strength(*c) == top)
            .map(|(n, _)| *n)
            .collect();
        if let [winner] = tied[..] {
            s.phase = Phase::AwaitingBank { banker: winner };
            fx.push(OkoBereEffect::BankerChosen {
                seat: winner,
                by: ChosenBy::HighestCard,
            });
        } else {
            // draw_tie = "tied_players_draw_again"
            fx.push(OkoBereEffect::BankerDrawTied {
                seats: tied.clone(),
            });
            d.contenders = tied;
            d.drawn.clear();
        }
        Ok(())
    }

    fn set_bank(
        &self,
        s: &mut OkoBereState,
        seat: SeatNo,
        bank_minor: i64,
        fx: &mut Vec<OkoBereEffect>,
    ) -> Result<(), Refusal> {
        let (banker, by) = match s.phase {
            Phase::AwaitingBank { banker } => (banker, None),
            Phase::BankEmpty { next_banker } => (next_banker, Some(ChosenBy::EmptiedTheBank)),
            _ => return Err(self.not_expected(s)),
        };
        if seat != banker {
            return Err(Refusal::new(
                code::NOT_YOUR_TURN,
                format!("seat {banker} sets up the bank, not seat {seat}"),
            ));
        }
        self.positive(bank_minor, "a bank")?;
        if bank_minor < self.rules.min_bank {
            return Err(Refusal::new(
                code::BANK_BELOW_MINIMUM,
                format!(
                    "a bank of {} is below the minimum bank {}",
                    self.money(bank_minor),
                    self.money(self.rules.min_bank)
                ),
            )
            .with_plan(&self.key)
            .clause(self.rules.clause.clone()));
        }
        self.take_from_stack(s, seat, bank_minor)?;
        s.bank = Some(Bank {
            banker: seat,
            bank_minor,
            initial_minor: bank_minor,
        });
        s.phase = Phase::BetweenRounds;
        if let Some(by) = by {
            fx.push(OkoBereEffect::BankerChosen { seat, by });
        }
        fx.push(OkoBereEffect::BankSet { seat, bank_minor });
        Ok(())
    }

    fn mala_domu_allowed(&self, b: &Bank) -> bool {
        i128::from(b.bank_minor)
            >= i128::from(b.initial_minor) * i128::from(self.rules.mala_domu.min_bank_multiple)
    }

    // ----- The round -----------------------------------------------------------------------

    fn start_round(
        &self,
        s: &mut OkoBereState,
        cutter: SeatNo,
        mala_domu: bool,
        fx: &mut Vec<OkoBereEffect>,
    ) -> Result<(), Refusal> {
        if !matches!(s.phase, Phase::BetweenRounds) {
            return Err(self.not_expected(s));
        }
        let b = s.bank.clone().expect("between rounds a bank is held");
        if cutter == b.banker || !s.seats.contains_key(&cutter) {
            return Err(Refusal::new(
                code::NOT_A_PLAYER,
                format!("the banker asks a seated player to cut; seat {cutter} is not one"),
            )
            .with_plan(&self.key)
            .clause(self.rules.cut.clause.clone()));
        }
        if mala_domu && !self.mala_domu_allowed(&b) {
            return Err(Refusal::new(
                code::MALA_DOMU_BANK_TOO_SMALL,
                format!(
                    "malá domů needs a bank of at least {} × the initial {}; the bank holds {}",
                    self.rules.mala_domu.min_bank_multiple,
                    self.money(b.initial_minor),
                    self.money(b.bank_minor)
                ),
            )
            .with_plan(&self.key)
            .clause(self.rules.mala_domu.clause.clone()));
        }
        // The players in the order of play: right of the cutter, rightwards, the cutter last.
        let can_bet = |stack: i64| {
            self.stake_range(stack, b.bank_minor, self.rules.min_bet)
                .is_some()
        };
        let (after, upto): (Vec<SeatNo>, Vec<SeatNo>) = s
            .seats
            .iter()
            .filter(|(n, st)| **n != b.banker && can_bet(st.stack_minor))
            .map(|(n, _)| *n)
            .partition(|n| *n > cutter);
        let order: Vec<SeatNo> = after.into_iter().chain(upto).collect();
        if order.is_empty() {
            return Err(Refusal::new(
                code::NO_PLAYERS,
                format!(
                    "no player can place a bet the bank of {} can match (minimum bet {})",
                    self.money(b.bank_minor),
                    self.money(self.rules.min_bet)
                ),
            )
            .with_plan(&self.key)
            .clause(self.rules.clause.clone()));
        }
        s.rounds_started += 1;
        let duel_possible = self.rules.duel.allowed
            && self
                .stake_range(
                    s.stack_minor(cutter).unwrap_or(0),
                    b.bank_minor,
                    self.rules.min_bet,
                )
                .is_some();
        let round = Round {
            number: s.rounds_started,
            cutter,
            mala_domu,
            duel: false,
            stage: if duel_possible {
                Stage::DuelOrDeal
            } else {
                Stage::FirstPass
            },
            order: order.clone(),
            hands: order.iter().map(|n| (*n, Hand::default())).collect(),
            banker_hand: Hand::default(),
            dealt: Vec::new(),
            emptied_by: None,
            stacks_before: s.seats.iter().map(|(n, st)| (*n, st.stack_minor)).collect(),
            bank_before_minor: b.bank_minor,
        };
        fx.push(OkoBereEffect::RoundStarted {
            round: round.number,
            banker: b.banker,
            cutter,
            players: order,
            mala_domu,
        });
        s.phase = Phase::Round(Box::new(round));
        Ok(())
    }

    /// Takes the round out of the phase (the caller puts it back or ends it); the engine works
    /// on a copy of the state, so a refusal after this leaves the caller's state untouched.
    fn take_round(&self, s: &mut OkoBereState) -> Result<(Box<Round>, SeatNo), Refusal> {
        if !matches!(s.phase, Phase::Round(_)) {
            return Err(self.not_expected(s));
        }
        let Phase::Round(r) = std::mem::replace(&mut s.phase, Phase::BetweenRounds) else {
            unreachable!("checked: a round")
        };
        let banker = s.banker().expect("a round is played against a bank");
        Ok((r, banker))
    }

    fn duel_refusal(&self, code: &str, msg: String) -> Refusal {
        Refusal::new(code, msg)
            .with_plan(&self.key)
            .clause(self.rules.duel.clause.clone())
    }

    fn offer_duel(
        &self,
        s: &mut OkoBereState,
        seat: SeatNo,
        stake_minor: i64,
        fx: &mut Vec<OkoBereEffect>,
    ) -> Result<(), Refusal> {
        if !self.rules.duel.allowed {
            return Err(self.duel_refusal(
                code::DUEL_NOT_ALLOWED,
                format!("{} allows no duel", self.key),
            ));
        }
        let expected = self.expected(s);
        let (mut r, _) = self.take_round(s)?;
        if r.stage != Stage::DuelOrDeal {
            return Err(self.duel_refusal(
                code::NOT_EXPECTED,
                format!(
                    "a duel is offered after the cut, before any card; expected: {}",
                    describe(&expected)
                ),
            ));
        }
        if seat != r.cutter {
            return Err(self.duel_refusal(
                code::NOT_YOUR_TURN,
                format!(
                    "the cutter (seat {}) offers a duel, not seat {seat}",
                    r.cutter
                ),
            ));
        }
        let stack = s.stack_minor(seat).unwrap_or(0);
        let bank = s.bank_minor().unwrap_or(0);
        self.check_stake(stake_minor, stack, bank, self.rules.min_bet, "duel stake")?;
        r.stage = Stage::DuelOffered { stake_minor };
        s.phase = Phase::Round(r);
        fx.push(OkoBereEffect::DuelOffered { seat, stake_minor });
        Ok(())
    }

    fn answer_duel(
        &self,
        s: &mut OkoBereState,
        accept: bool,
        fx: &mut Vec<OkoBereEffect>,
    ) -> Result<(), Refusal> {
        let expected = self.expected(s);
        let (mut r, _) = self.take_round(s)?;
        let Stage::DuelOffered { stake_minor } = r.stage else {
            return Err(self.duel_refusal(
                code::NOT_EXPECTED,
                format!("no duel is offered; expected: {}", describe(&expected)),
            ));
        };
        let seat = r.cutter;
        if !accept {
            if !self.rules.duel.banker_may_refuse_after_hearing_stake {
                return Err(self.duel_refusal(
                    code::DUEL_REFUSAL_NOT_ALLOWED,
                    format!("{} does not let the banker decline a duel", self.key),
                ));
            }
            // The round goes on as usual; the cutter may offer again.
            r.stage = Stage::DuelOrDeal;
            s.phase = Phase::Round(r);
            fx.push(OkoBereEffect::DuelDeclined { seat, stake_minor });
            return Ok(());
        }
        // "the following round will be only between the two of them"
        r.duel = true;
        r.order = vec![seat];
        r.hands.retain(|n, _| *n == seat);
        fx.push(OkoBereEffect::DuelAccepted { seat, stake_minor });
        self.stake(s, &mut r, seat, stake_minor, fx);
        r.stage = Stage::DuelCard;
        s.phase = Phase::Round(r);
        Ok(())
    }

    fn duel_card(
        &self,
        s: &mut OkoBereState,
        card: Card,
        fx: &mut Vec<OkoBereEffect>,
    ) -> Result<(), Refusal> {
        let expected = self.expected(s);
        let (mut r, _) = self.take_round(s)?;
        if r.stage != Stage::DuelCard {
            return Err(Refusal::new(
                code::NOT_EXPECTED,
                format!("no duel card is due; expected: {}", describe(&expected)),
            ));
        }
        self.take_card(&mut r.dealt, card)?;
        // "the card at the bottom of sliced counts as first card for both"
        let seat = r.cutter;
        r.hands
            .get_mut(&seat)
            .expect("the duel's player")
            .cards
            .push(card);
        r.banker_hand.cards.push(card);
        self.after_banker_first_card(s, r, card, fx)
    }

    fn round_card(
        &self,
        s: &mut OkoBereState,
        seat: SeatNo,
        card: Card,
        fx: &mut Vec<OkoBereEffect>,
    ) -> Result<(), Refusal> {
        let expected = self.expected(s);
        let (mut r, banker) = self.take_round(s)?;
        let wrong = |due: SeatNo| {
            Refusal::new(
                code::NOT_YOUR_TURN,
                format!("the next card goes to seat {due}, not seat {seat}"),
            )
        };
        match r.stage {
            Stage::DuelOrDeal | Stage::FirstPass => {
                // A first card dealt means no duel was offered (or one was declined).
                let due = first_pass_next(&r, banker);
                if seat != due {
                    return Err(wrong(due));
                }
                self.take_card(&mut r.dealt, card)?;
                r.stage = Stage::FirstPass;
                if seat == banker {
                    r.banker_hand.cards.push(card);
                    return self.after_banker_first_card(s, r, card, fx);
                }
                r.hands.get_mut(&seat).expect("a player").cards.push(card);
                s.phase = Phase::Round(r);
                Ok(())
            }
            Stage::Turn { seat: due } => {
                if seat != due {
                    return Err(wrong(due));
                }
                let h = r.hands.get_mut(&seat).expect("a player");
                if h.owed == 0 {
                    return Err(Refusal::new(
                        code::NOT_EXPECTED,
                        format!(
                            "seat {seat} has not asked for a card; expected: {}",
                            describe(&expected)
                        ),
                    ));
                }
                self.take_card(&mut r.dealt, card)?;
                let h = r.hands.get_mut(&seat).expect("a player");
                h.cards.push(card);
                h.owed -= 1;
                if h.owed > 0 {
                    s.phase = Phase::Round(r);
                    return Ok(());
                }
                h.replacing = false;
                self.after_player_cards(s, r, seat, fx)
            }
            Stage::BankerTurn => {
                if seat != banker {
                    return Err(wrong(banker));
                }
                if r.banker_hand.owed == 0 {
                    return Err(Refusal::new(
                        code::NOT_EXPECTED,
                        format!(
                            "the banker has not asked for a card; expected: {}",
                            describe(&expected)
                        ),
                    ));
                }
                self.take_card(&mut r.dealt, card)?;
                let h = &mut r.banker_hand;
                h.cards.push(card);
                h.owed -= 1;
                if h.owed > 0 {
                    s.phase = Phase::Round(r);
                    return Ok(());
                }
                h.replacing = false;
                self.after_banker_cards(s, r, banker, fx)
            }
            Stage::DuelOffered { .. } | Stage::DuelCard => Err(Refusal::new(
                code::NOT_EXPECTED,
                format!(
                    "no card to a seat is due; expected: {}",
                    describe(&expected)
                ),
            )),
        }
    }

    /// Malá domů is decided on the banker's first card; then the first player's turn.
    fn after_banker_first_card(
        &self,
        s: &mut OkoBereState,
        mut r: Box<Round>,
        card: Card,
        fx: &mut Vec<OkoBereEffect>,
    ) -> Result<(), Refusal> {
        if r.mala_domu {
            let kept = PiquetRank::of(card.rank)
                .is_some_and(|rank| self.rules.mala_domu.keep_on_first_card.contains(&rank));
            fx.push(OkoBereEffect::MalaDomu { card, kept });
            if kept {
                return self.mala_domu_keep(s, &r, fx);
            }
        }
        r.stage = Stage::Turn { seat: r.order[0] };
        s.phase = Phase::Round(r);
        Ok(())
    }

    /// "he keeps the bank and new banker is drawn": every stake of the round back to its
    /// player, the bank back into the banker's chips (plan `mala_domu.on_keep`).
    fn mala_domu_keep(
        &self,
        s: &mut OkoBereState,
        r: &Round,
        fx: &mut Vec<OkoBereEffect>,
    ) -> Result<(), Refusal> {
        let mut bank = s.bank.take().expect("a round is played against a bank");
        for (&seat, h) in &r.hands {
            if h.stake_minor > 0 {
                self.seat_mut(s, seat)?.stack_minor += h.stake_minor;
                bank.bank_minor += h.matched_minor;
                fx.push(OkoBereEffect::StakeReturned {
                    seat,
                    amount_minor: h.stake_minor,
                    bank_returned_minor: h.matched_minor,
                });
            }
        }
        fx.push(OkoBereEffect::RoundEnded {
            round: r.number,
            bank_minor: bank.bank_minor,
        });
        self.seat_mut(s, bank.banker)?.stack_minor += bank.bank_minor;
        fx.push(OkoBereEffect::BankTaken {
            seat: bank.banker,
            bank_minor: bank.bank_minor,
        });
        fx.push(OkoBereEffect::GameEnded);
        s.phase = Phase::NoBanker;
        Ok(())
    }

    fn after_player_cards(
        &self,
        s: &mut OkoBereState,
        mut r: Box<Round>,
        seat: SeatNo,
        fx: &mut Vec<OkoBereEffect>,
    ) -> Result<(), Refusal> {
        let h = r.hands.get_mut(&seat).expect("a player");
        if let Some(id) = self.outright(&h.cards) {
            h.status = HandStatus::Outright;
            fx.push(OkoBereEffect::Outright {
                seat,
                hand: id.to_string(),
            });
            return self.end_turn(s, r, seat, fx);
        }
        match self.best_total(&h.cards) {
            None => {
                // "if he overdraws, he immediately loses his bet, which goes to the bank"
                h.status = HandStatus::Bust;
                let to_bank_minor = h.stake_minor + h.matched_minor;
                let (stake_minor, total) = (h.stake_minor, self.min_total(&h.cards));
                s.bank.as_mut().expect("a bank").bank_minor += to_bank_minor;
                fx.push(OkoBereEffect::Bust {
                    seat,
                    total,
                    stake_minor,
                    to_bank_minor,
                });
                self.end_turn(s, r, seat, fx)
            }
            Some(total) if total == self.rules.target_total => {
                // No card can help a hand of 21: every card counts at least 1.
                h.status = HandStatus::Stood;
                fx.push(OkoBereEffect::Stood {
                    seat,
                    total,
                    automatic: true,
                });
                self.end_turn(s, r, seat, fx)
            }
            Some(_) => {
                s.phase = Phase::Round(r);
                Ok(())
            }
        }
    }

    fn after_banker_cards(
        &self,
        s: &mut OkoBereState,
        mut r: Box<Round>,
        banker: SeatNo,
        fx: &mut Vec<OkoBereEffect>,
    ) -> Result<(), Refusal> {
        let h = &mut r.banker_hand;
        if let Some(id) = self.outright(&h.cards) {
            h.status = HandStatus::Outright;
            fx.push(OkoBereEffect::Outright {
                seat: banker,
                hand: id.to_string(),
            });
            return self.settle(s, r, fx);
        }
        match self.best_total(&h.cards) {
            None => {
                h.status = HandStatus::Bust;
                fx.push(OkoBereEffect::BankerBust {
                    seat: banker,
                    total: self.min_total(&h.cards),
                });
                self.settle(s, r, fx)
            }
            Some(total) if total == self.rules.target_total => {
                h.status = HandStatus::Stood;
                fx.push(OkoBereEffect::Stood {
                    seat: banker,
                    total,
                    automatic: true,
                });
                self.settle(s, r, fx)
            }
            Some(_) => {
                s.phase = Phase::Round(r);
                Ok(())
            }
        }
    }

    fn min_total(&self, cards: &[Card]) -> u8 {
        let t = self.totals(cards).first().copied().unwrap_or(0);
        u8::try_from(t).unwrap_or(u8::MAX)
    }

    /// The next player's turn; after the last, the banker's if a bet is still active ("when
    /// the game reaches the banker"), else the round ends.
    fn end_turn(
        &self,
        s: &mut OkoBereState,
        mut r: Box<Round>,
        seat: SeatNo,
        fx: &mut Vec<OkoBereEffect>,
    ) -> Result<(), Refusal> {
        let i = r
            .order
            .iter()
            .position(|n| *n == seat)
            .expect("a player of the round");
        if let Some(&next) = r.order.get(i + 1) {
            r.stage = Stage::Turn { seat: next };
            s.phase = Phase::Round(r);
            return Ok(());
        }
        if r.hands.values().any(Hand::active) {
            r.stage = Stage::BankerTurn;
            s.phase = Phase::Round(r);
            return Ok(());
        }
        self.finish_round(s, &r, fx)
    }

    /// Every active bet against the banker's hand.
    fn settle(
        &self,
        s: &mut OkoBereState,
        r: Box<Round>,
        fx: &mut Vec<OkoBereEffect>,
    ) -> Result<(), Refusal> {
        let bh = &r.banker_hand;
        let banker_total = self.best_total(&bh.cards);
        for &seat in &r.order {
            let h = &r.hands[&seat];
            if !h.active() {
                continue;
            }
            let (winner, reason) = match (bh.status, h.status) {
                (HandStatus::Bust, _) => (Winner::Player, SettleReason::BankerBust),
                (HandStatus::Outright, HandStatus::Outright) => (
                    self.rules.outright_against_outright,
                    SettleReason::BothOutright,
                ),
                (_, HandStatus::Outright) => (Winner::Player, SettleReason::Outright),
                (HandStatus::Outright, _) => (Winner::Bank, SettleReason::BankerOutright),
                _ => {
                    let p = self
                        .best_total(&h.cards)
                        .expect("a standing hand has a total");
                    let b = banker_total.expect("a standing banker has a total");
                    match p.cmp(&b) {
                        std::cmp::Ordering::Greater => (Winner::Player, SettleReason::HigherTotal),
                        std::cmp::Ordering::Equal => (self.rules.ties, SettleReason::Tie),
                        std::cmp::Ordering::Less => (Winner::Bank, SettleReason::LowerTotal),
                    }
                }
            };
            let pot = h.stake_minor + h.matched_minor;
            let (to_player_minor, to_bank_minor) = match winner {
                Winner::Player => {
                    self.seat_mut(s, seat)?.stack_minor += pot;
                    (pot, 0)
                }
                Winner::Bank => {
                    s.bank.as_mut().expect("a bank").bank_minor += pot;
                    (0, pot)
                }
            };
            fx.push(OkoBereEffect::Settled {
                seat,
                winner,
                reason,
                stake_minor: h.stake_minor,
                to_player_minor,
                to_bank_minor,
            });
        }
        // Every hand is settled: the round holds no stake any more.
        self.finish_round(s, &r, fx)
    }

    fn finish_round(
        &self,
        s: &mut OkoBereState,
        r: &Round,
        fx: &mut Vec<OkoBereEffect>,
    ) -> Result<(), Refusal> {
        let bank = s.bank.as_ref().expect("a bank").bank_minor;
        fx.push(OkoBereEffect::RoundEnded {
            round: r.number,
            bank_minor: bank,
        });
        if bank > 0 {
            s.phase = Phase::BetweenRounds;
            return Ok(());
        }
        // "the bank is empty": the players decide whether they go on.
        s.bank = None;
        match self.rules.empty_bank.next_banker {
            NextBanker::PlayerWhoseBetEmptiedTheBank => {
                // Only a bet takes the unmatched bank to zero; nothing but a bust gives it
                // chips back during a round, and a bust leaves it above zero.
                let next = r
                    .emptied_by
                    .expect("an empty bank was emptied by a bet of the round");
                fx.push(OkoBereEffect::BankEmptied {
                    next_banker: Some(next),
                });
                s.phase = Phase::BankEmpty { next_banker: next };
            }
            NextBanker::SelectedAnew => {
                fx.push(OkoBereEffect::BankEmptied { next_banker: None });
                s.phase = Phase::NoBanker;
            }
        }
        Ok(())
    }

    // ----- Decisions -----------------------------------------------------------------------

    /// The hand of whoever acts at `seat` now, refusing anyone else.
    fn acting<'r>(
        &self,
        r: &'r mut Round,
        banker: SeatNo,
        seat: SeatNo,
        expected: &Expected,
    ) -> Result<(&'r mut Hand, bool), Refusal> {
        let is_banker = match r.stage {
            Stage::Turn { seat: due } if due == seat => false,
            Stage::BankerTurn if seat == banker => true,
            Stage::Turn { seat: due } => {
                return Err(Refusal::new(
                    code::NOT_YOUR_TURN,
                    format!("seat {due} is to act, not seat {seat}"),
                ))
            }
            Stage::BankerTurn => {
                return Err(Refusal::new(
                    code::NOT_YOUR_TURN,
                    format!("the banker (seat {banker}) is to act, not seat {seat}"),
                ))
            }
            _ => {
                return Err(Refusal::new(
                    code::NOT_EXPECTED,
                    format!("no one is to decide now; expected: {}", describe(expected)),
                ))
            }
        };
        let h = if is_banker {
            &mut r.banker_hand
        } else {
            r.hands.get_mut(&seat).expect("a player")
        };
        if h.owed > 0 {
            return Err(Refusal::new(
                code::NOT_EXPECTED,
                format!(
                    "seat {seat} is owed a card first; expected: {}",
                    describe(expected)
                ),
            ));
        }
        Ok((h, is_banker))
    }

    fn bet(
        &self,
        s: &mut OkoBereState,
        seat: SeatNo,
        stake_minor: i64,
        fx: &mut Vec<OkoBereEffect>,
    ) -> Result<(), Refusal> {
        let expected = self.expected(s);
        let (mut r, banker) = self.take_round(s)?;
        let duel = r.duel;
        let (h, is_banker) = self.acting(&mut r, banker, seat, &expected)?;
        if is_banker {
            return Err(self.banker_does_not_bet());
        }
        if duel {
            return Err(self.duel_refusal(
                code::RAISE_NOT_ALLOWED,
                "in a duel the stake offered is the stake: \"The bet in this case can't be increased\"".into(),
            ));
        }
        if h.stake_minor > 0 {
            return Err(Refusal::new(
                code::ALREADY_BET,
                format!("seat {seat} has bet; a raise is made with the next card (draw with raise_minor)"),
            )
            .with_plan(&self.key)
            .clause(self.rules.clause.clone()));
        }
        let stack = s.stack_minor(seat).unwrap_or(0);
        let bank = s.bank_minor().unwrap_or(0);
        self.check_stake(stake_minor, stack, bank, self.rules.min_bet, "bet")?;
        self.stake(s, &mut r, seat, stake_minor, fx);
        s.phase = Phase::Round(r);
        Ok(())
    }

    fn draw(
        &self,
        s: &mut OkoBereState,
        seat: SeatNo,
        raise_minor: Option<i64>,
        fx: &mut Vec<OkoBereEffect>,
    ) -> Result<(), Refusal> {
        let expected = self.expected(s);
        let (mut r, banker) = self.take_round(s)?;
        let duel = r.duel;
        let (h, is_banker) = self.acting(&mut r, banker, seat, &expected)?;
        if !is_banker && h.stake_minor == 0 {
            return Err(Refusal::new(
                code::NO_STAKE,
                format!("seat {seat} has nothing at stake: bet first, or stand"),
            )
            .with_plan(&self.key)
            .clause(self.rules.clause.clone()));
        }
        if let Some(raise) = raise_minor {
            if is_banker {
                return Err(self.banker_does_not_bet());
            }
            if duel {
                return Err(self.duel_refusal(
                    code::RAISE_NOT_ALLOWED,
                    "\"The bet in this case can't be increased\"".into(),
                ));
            }
            if !self.rules.raise_before_each_card {
                return Err(Refusal::new(
                    code::RAISE_NOT_ALLOWED,
                    format!("{} allows no raise", self.key),
                )
                .with_plan(&self.key)
                .clause(self.rules.clause.clone()));
            }
            let stack = s.stack_minor(seat).unwrap_or(0);
            let bank = s.bank_minor().unwrap_or(0);
            self.check_stake(raise, stack, bank, self.rules.min_raise, "raise")?;
            self.stake(s, &mut r, seat, raise, fx);
        }
        let h = if is_banker {
            &mut r.banker_hand
        } else {
            r.hands.get_mut(&seat).expect("a player")
        };
        h.owed = 1;
        h.replacing = false;
        s.phase = Phase::Round(r);
        Ok(())
    }

    fn stand(
        &self,
        s: &mut OkoBereState,
        seat: SeatNo,
        fx: &mut Vec<OkoBereEffect>,
    ) -> Result<(), Refusal> {
        let expected = self.expected(s);
        let (mut r, banker) = self.take_round(s)?;
        let (h, is_banker) = self.acting(&mut r, banker, seat, &expected)?;
        h.status = HandStatus::Stood;
        let total = self.best_total(&h.cards).expect("an open hand has a total");
        if !is_banker && h.stake_minor == 0 {
            fx.push(OkoBereEffect::SatOut { seat });
        } else {
            fx.push(OkoBereEffect::Stood {
                seat,
                total,
                automatic: false,
            });
        }
        if is_banker {
            self.settle(s, r, fx)
        } else {
            self.end_turn(s, r, seat, fx)
        }
    }

    fn replacement_allowed(&self, r: &Round, banker: bool) -> bool {
        (!r.duel || self.rules.duel.card_exchange_allowed)
            && (!banker || self.rules.banker_may_replace)
    }

    fn replace(
        &self,
        s: &mut OkoBereState,
        seat: SeatNo,
        fx: &mut Vec<OkoBereEffect>,
    ) -> Result<(), Refusal> {
        let expected = self.expected(s);
        let (mut r, banker) = self.take_round(s)?;
        let is_banker = matches!(r.stage, Stage::BankerTurn) && seat == banker;
        if r.duel && !self.rules.duel.card_exchange_allowed {
            return Err(self.duel_refusal(
                code::REPLACEMENT_NOT_ALLOWED,
                "in a duel \"the cards can't be exchanged\"".into(),
            ));
        }
        if is_banker && !self.rules.banker_may_replace {
            return Err(Refusal::new(
                code::REPLACEMENT_NOT_ALLOWED,
                format!("{} does not let the banker replace his cards", self.key),
            )
            .with_plan(&self.key)
            .clause(self.rules.clause.clone()));
        }
        let (h, _) = self.acting(&mut r, banker, seat, &expected)?;
        let Some(id) = self.replaceable(&h.cards) else {
            return Err(Refusal::new(
                code::NOT_REPLACEABLE,
                format!(
                    "{} is none of the hands that may be replaced ({})",
                    cards_text(&h.cards),
                    self.rules
                        .replaceable_hands
                        .iter()
                        .map(|x| x.label.as_str())
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            )
            .with_plan(&self.key)
            .clause(self.rules.clause.clone()));
        };
        // replacement = "every_card_replaced_stake_stays"
        let aside = std::mem::take(&mut h.cards);
        h.owed = u8::try_from(aside.len()).expect("a hand holds at most the deck");
        h.replacing = true;
        fx.push(OkoBereEffect::Replaced {
            seat,
            hand: id.to_string(),
            aside,
        });
        s.phase = Phase::Round(r);
        Ok(())
    }

    fn banker_does_not_bet(&self) -> Refusal {
        Refusal::new(
            code::BANKER_DOES_NOT_BET,
            "the banker holds the bank: he matches bets, he does not bet",
        )
        .with_plan(&self.key)
        .clause(self.rules.clause.clone())
    }

    // ----- Stakes --------------------------------------------------------------------------

    /// The stakes a player holding `stack` may put up when the bank holds `bank` unmatched:
    /// from `min` (or exactly the rest of the bank, where the plan allows it and less than
    /// `min` is left) up to the smaller of his chips and the bank.
    pub fn stake_range(&self, stack: i64, bank: i64, min: i64) -> Option<StakeRange> {
        let max = stack.min(bank);
        let lo = if self.rules.rest_of_bank_below_min && bank < min {
            bank
        } else {
            min
        };
        (max > 0 && max >= lo).then_some(StakeRange {
            min_minor: lo,
            max_minor: max,
        })
    }

    fn check_stake(
        &self,
        amount: i64,
        stack: i64,
        bank: i64,
        min: i64,
        what: &str,
    ) -> Result<(), Refusal> {
        let rule = |code: &str, msg: String| {
            Refusal::new(code, msg)
                .with_plan(&self.key)
                .clause(self.rules.clause.clone())
        };
        self.positive(amount, what)?;
        if amount > bank {
            // "it is possible to bet up to the bank": the bank matches every bet in full.
            return Err(rule(
                code::ABOVE_BANK,
                format!(
                    "a {what} of {} is above the bank's unmatched {}",
                    self.money(amount),
                    self.money(bank)
                ),
            ));
        }
        if amount > stack {
            return Err(Refusal::new(
                code::INSUFFICIENT_CHIPS,
                format!(
                    "a {what} of {} is more than the player's {}",
                    self.money(amount),
                    self.money(stack)
                ),
            ));
        }
        if amount < min && !(self.rules.rest_of_bank_below_min && amount == bank) {
            return Err(rule(
                code::BELOW_MIN_BET,
                format!(
                    "a {what} of {} is below the minimum {}",
                    self.money(amount),
                    self.money(min)
                ),
            ));
        }
        Ok(())
    }

    /// Moves a checked stake from the player and the same amount from the bank into the round.
    fn stake(
        &self,
        s: &mut OkoBereState,
        r: &mut Round,
        seat: SeatNo,
        amount: i64,
        fx: &mut Vec<OkoBereEffect>,
    ) {
        let st = s.seats.get_mut(&seat).expect("a seated player");
        st.stack_minor -= amount;
        let b = s.bank.as_mut().expect("a bank");
        b.bank_minor -= amount;
        let h = r.hands.get_mut(&seat).expect("a player of the round");
        h.stake_minor += amount;
        h.matched_minor += amount;
        if b.bank_minor == 0 {
            r.emptied_by = Some(seat);
        }
        fx.push(OkoBereEffect::Staked {
            seat,
            stake_minor: amount,
            matched_minor: amount,
            stake_total_minor: h.stake_minor,
            bank_minor: b.bank_minor,
        });
    }

    // ----- Ending --------------------------------------------------------------------------

    fn end_game(&self, s: &mut OkoBereState, fx: &mut Vec<OkoBereEffect>) -> Result<(), Refusal> {
        match s.phase {
            Phase::BankerDraw(_) | Phase::AwaitingBank { .. } | Phase::BankEmpty { .. } => {
                s.phase = Phase::NoBanker;
                fx.push(OkoBereEffect::GameEnded);
                Ok(())
            }
            Phase::BetweenRounds => Err(Refusal::new(
                code::NOT_EXPECTED,
                "\"The game can end in two ways - the bank is empty or the banker calls malá domů\"",
            )
            .with_plan(&self.key)
            .clause(self.rules.clause.clone())),
            _ => Err(self.not_expected(s)),
        }
    }

    /// An error that cannot be put right: every stack and the bank as before the round
    /// (plan `policies.error`: "refund_stakes", the bank "returns to its state before the
    /// round").
    fn void_round(
        &self,
        s: &mut OkoBereState,
        reason: &str,
        fx: &mut Vec<OkoBereEffect>,
    ) -> Result<(), Refusal> {
        if reason.trim().is_empty() || reason.chars().count() > REASON_MAX_CHARS {
            return Err(Refusal::new(
                code::BAD_TEXT,
                format!("a void gives its reason in 1 to {REASON_MAX_CHARS} characters"),
            ));
        }
        let (r, _) = self.take_round(s)?;
        let mut refunds = Vec::new();
        for (&seat, &before) in &r.stacks_before {
            let st = s
                .seats
                .get_mut(&seat)
                .expect("nobody leaves during a round");
            if before > st.stack_minor {
                refunds.push(Refund {
                    seat,
                    amount_minor: before - st.stack_minor,
                });
            }
            st.stack_minor = before;
        }
        s.bank.as_mut().expect("a bank").bank_minor = r.bank_before_minor;
        s.phase = Phase::BetweenRounds;
        fx.push(OkoBereEffect::RoundVoided {
            round: r.number,
            reason: reason.to_string(),
            refunds,
            bank_restored_minor: r.bank_before_minor,
        });
        Ok(())
    }

    fn close_table(
        &self,
        s: &mut OkoBereState,
        fx: &mut Vec<OkoBereEffect>,
    ) -> Result<(), Refusal> {
        if matches!(s.phase, Phase::Round(_)) {
            return Err(Refusal::new(
                code::ROUND_IN_PROGRESS,
                "a table closes between rounds: void the round first",
            ));
        }
        if let Some(b) = s.bank.take() {
            self.seat_mut(s, b.banker)?.stack_minor += b.bank_minor;
            fx.push(OkoBereEffect::BankTaken {
                seat: b.banker,
                bank_minor: b.bank_minor,
            });
        }
        for (seat, st) in std::mem::take(&mut s.seats) {
            if st.stack_minor > 0 {
                s.chips_in_minor -= st.stack_minor;
                fx.push(OkoBereEffect::CashedOut {
                    seat,
                    amount_minor: st.stack_minor,
                });
            }
            fx.push(OkoBereEffect::Left {
                seat,
                player: st.player,
            });
        }
        s.phase = Phase::Closed;
        fx.push(OkoBereEffect::TableClosed);
        Ok(())
    }

    // ----- Helpers -------------------------------------------------------------------------

    /// Refuses a card the shoe cannot hold or one already out (`seen`), else records it.
    fn take_card(&self, seen: &mut Vec<Card>, card: Card) -> Result<(), Refusal> {
        let copies = usize::from(self.rules.shoe.copies_of(card));
        if copies == 0 {
            return Err(Refusal::new(
                code::CARD_NOT_IN_SHOE,
                format!("{card} is not a card of the 32-card deck"),
            )
            .with_plan(&self.key)
            .clause(self.rules.clause.clone()));
        }
        if seen.iter().filter(|c| **c == card).count() >= copies {
            return Err(
                Refusal::new(code::CARD_NOT_IN_SHOE, format!("{card} is out already"))
                    .with_plan(&self.key)
                    .clause(self.rules.clause.clone()),
            );
        }
        seen.push(card);
        Ok(())
    }

    fn not_expected(&self, s: &OkoBereState) -> Refusal {
        Refusal::new(
            code::NOT_EXPECTED,
            format!("not now; expected: {}", describe(&self.expected(s))),
        )
    }

    fn money(&self, minor: i64) -> String {
        format!(
            "{} {}",
            crate::money::format_minor(minor, self.plan.plan.currency.exponent()),
            self.plan.plan.currency
        )
    }
}

/// The next contender to draw for the banker.
fn next_drawer(d: &BankerDraw) -> Option<SeatNo> {
    d.contenders
        .iter()
        .copied()
        .find(|c| !d.drawn.iter().any(|(n, _)| n == c))
}

/// Who gets the next card of the first pass: the players in the order of play, the banker
/// last.
fn first_pass_next(r: &Round, banker: SeatNo) -> SeatNo {
    r.order
        .iter()
        .copied()
        .find(|n| r.hands[n].cards.is_empty())
        .unwrap_or(banker)
}

/// Whether `cards` are exactly `patterns`, in some order.
fn matches_in_any_order(patterns: &[CardPattern], cards: &[Card]) -> bool {
    fn go(patterns: &[CardPattern], cards: &[Card], used: &mut Vec<bool>) -> bool {
        let Some((p, rest)) = patterns.split_first() else {
            return true;
        };
        for (i, c) in cards.iter().enumerate() {
            if !used[i] && p.matches(*c) {
                used[i] = true;
                if go(rest, cards, used) {
                    return true;
                }
                used[i] = false;
            }
        }
        false
    }
    patterns.len() == cards.len() && go(patterns, cards, &mut vec![false; cards.len()])
}

fn cards_text(cards: &[Card]) -> String {
    cards
        .iter()
        .map(Card::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

/// A short English reading of what the rules wait for, for refusal messages.
pub fn describe(e: &Expected) -> String {
    match e {
        Expected::Banker { .. } => "a banker to be chosen".into(),
        Expected::BankerDrawCard { seat } => format!("a card drawn for the banker by seat {seat}"),
        Expected::Bank { seat, .. } => format!("seat {seat} to set up the bank"),
        Expected::Round { .. } => "the start of a round".into(),
        Expected::DuelOrFirstCard {
            cutter,
            first_card_to,
            ..
        } => format!("a duel offered by the cutter (seat {cutter}) or the first card to seat {first_card_to}"),
        Expected::DuelAnswer { .. } => "the banker's answer to the duel".into(),
        Expected::DuelCard => "the bottom card of the cut (the duel's first card)".into(),
        Expected::Card { seat, .. } => format!("a card to seat {seat}"),
        Expected::Decision(d) => format!("a decision of seat {}", d.seat),
        Expected::EmptyBank { next_banker } => {
            format!("seat {next_banker} to set up a bank, or the end of the game")
        }
        Expected::Closed => "nothing: the table is closed".into(),
    }
}

#[cfg(test)]
mod tests;
