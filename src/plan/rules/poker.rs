//! The C40 poker room's cash-game rules (004, "Všeobecná pravidla casina C40"), for a Texas
//! Hold'em cash table.
//!
//! Players play against each other: there is no limits table and no payout table. The stakes
//! (buy-in, blinds, straddle), the betting rules, the showdown and pot rules and the lists of
//! misdeals and irregularities with their consequences are parameters here, in the order of
//! the document: Buy-in › Misdeal › Nesrovnalosti › Sázení a zvyšování › Showdown › Remízy ›
//! Používání buttonu a blindů › Straddle bet.

use std::collections::HashSet;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::cards::{DeckKind, Shoe};
use crate::money::Ratio;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PokerCashRules {
    pub shoe: Shoe,
    /// The poker game dealt at the table.
    pub game: PokerGame,
    /// No-limit or pot-limit ("V no-limit a pot-limit hrách …").
    pub betting_structure: BettingStructure,
    /// Most players seated at the table.
    pub seats_max: u8,
    /// Value of the smallest chip in play, minor units ("nejmenší žetony, které se ve hře
    /// používají"): every blind and buy-in is a multiple of it, and an odd chip is broken
    /// down to it.
    pub smallest_chip: i64,
    pub buy_in: BuyIn,
    pub blinds: Blinds,
    pub button: Button,
    pub new_player: NewPlayer,
    pub straddle: Straddle,
    pub betting: Betting,
    pub showdown: Showdown,
    pub odd_chip: OddChip,
    /// "Pořadí barev v pokeru nerozhoduje, přestože je stanovené – piky, srdce, káry, kříže":
    /// suits never break a tie between hands; this order (highest first) is used only to draw
    /// for the button.
    pub suit_order_for_button_draw: Vec<SuitName>,
    pub misdeal: Misdeal,
    /// "Nesrovnalosti, které mohou nastat v průběhu hry": each with its consequence.
    pub irregularities: Vec<Irregularity>,
    /// What the house takes from a pot.
    pub rake: Rake,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PokerGame {
    /// Two hole cards each, five community cards (flop, turn, river), four betting rounds.
    TexasHoldem,
}

impl PokerGame {
    /// Cards one hand uses at most from the deck with `players` seated: hole cards, board and
    /// one burn card before each of flop, turn and river.
    pub fn cards_needed(self, players: usize) -> usize {
        match self {
            PokerGame::TexasHoldem => 2 * players + 5 + 3,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BettingStructure {
    /// A bet or raise may be any amount up to the player's whole stack.
    NoLimit,
    /// A bet or raise may be at most the size of the pot after the call.
    PotLimit,
}

/// "Buy-in".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BuyIn {
    /// "Při vstupu do hry musí hráč zaplatit minimální buy in." Minor units.
    pub min: i64,
    /// Largest buy-in, minor units; absent: no maximum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<i64>,
    /// A player moved by the house (table broken up, or the floorman's decision) to a table
    /// of the same limit keeps his chips, even below the minimum buy-in.
    pub moved_by_house: TableEntry,
    /// "Hráč, který se rozhodne změnit stůl dobrovolně musí mít pro vstup na nový stůl počet
    /// žetonů jako je minimální buy-in."
    pub voluntary_change: TableEntry,
    /// "Pokud hráč změní stůl a chce se v době kratší než 2 hodiny vrátit na ten původní":
    /// the window, in minutes, within which a return is bound by `return_within_window`.
    pub return_window_minutes: u32,
    /// "… musí mít minimálně takový počet žetonů, jako když opouštěl původní stůl."
    pub return_within_window: TableEntry,
    /// Chips a seated player adds to his stack. The document does not say.
    pub top_up: TopUp,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TopUp {
    /// Between hands only (never while he is dealt in: a hand is played for the chips in
    /// front of the player when it starts), any whole number of chips up to the maximum
    /// buy-in; a player who has lost every chip buys in again with at least the minimum.
    BetweenHandsUpToMax,
}

/// What a player needs to sit down at a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TableEntry {
    /// Continues with the chips he has, even fewer than the minimum buy-in.
    KeepsStackEvenShort,
    /// At least the minimum buy-in.
    MinBuyIn,
    /// At least the chips he left this table with (and at least the minimum buy-in).
    ChipsLeftWith,
}

/// "Pravidla používání blindů".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Blinds {
    /// Small blind, minor units.
    pub small: i64,
    /// Big blind, minor units.
    pub big: i64,
    /// "Hodnoty blindů jsou předem určené a nemění se ani když hráč nemá dostatek žetonů
    /// (vloží co má, ale ostatní hrají jako by byly blindy normální)."
    pub short_player: ShortBlind,
    /// "Hru v prvním sázkovém kole začíná hráč nalevo od big blindu."
    pub first_to_act_preflop: Seat,
    /// "V dalších sázkových kolech hraje jako první hráč na pozici malého blindu tj. hráč po
    /// levici dealera."
    pub first_to_act_postflop: Seat,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ShortBlind {
    /// The player posts what he has (all-in); the others play as if the full blind was
    /// posted.
    PostsAllInOthersPlayFullBlind,
}

/// A seat relative to the button and the blinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Seat {
    /// The first active player to the left of the big blind (or of the straddle).
    LeftOfBigBlind,
    /// The first active player to the left of the button (the small blind's seat).
    LeftOfButton,
}

/// "Používání buttonu a blindů".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Button {
    /// "Button se posouvá ve směru hodinových ručiček po každé hře."
    pub rotation: Rotation,
    /// "Před každou hrou se vždy umístí správně big blind a podle něj se dále umísťují small
    /// blind a button, i když to může někdy znamenat, že small blind nebo button budou na
    /// prázdném místě."
    pub placement: BlindPlacement,
    /// "Při hře dvou hráčů je small blind na buttonu."
    pub heads_up_small_blind_on_button: bool,
    /// How the first button is placed: a draw, highest card wins.
    pub initial: InitialButton,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Rotation {
    Clockwise,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BlindPlacement {
    /// The big blind moves to the next player every hand; small blind and button follow it
    /// and may fall on an empty seat (dead small blind, dead button).
    BigBlindFirstDeadButton,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InitialButton {
    /// Each player draws a card; the highest rank takes the button, suits (in
    /// `suit_order_for_button_draw`) break a tie of ranks.
    HighCardDraw,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SuitName {
    Spades,
    Hearts,
    Diamonds,
    Clubs,
}

/// "Nově přichozí hráč má dvě možnosti".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewPlayer {
    /// "čekat na big blind" / "vložit do banku množství žetonů, které odpovídá velikosti big
    /// blindu".
    pub options: Vec<NewPlayerOption>,
    /// "Nikdy nemůže nový hráč začít hrát mezi buttonem a big blindem."
    pub may_start_between_button_and_big_blind: bool,
    /// "Pokud hráč vloží big blind, pak se toto pokládá za jeho otevírací sázku, při první
    /// možnosti ke hře může zvyšovat." A posted big blind is live: it counts toward a call
    /// and gives the right to raise.
    pub posted_big_blind_is_live: bool,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NewPlayerOption {
    WaitForBigBlind,
    PostBigBlind,
}

/// "Straddle bet".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Straddle {
    pub allowed: bool,
    /// "hráči, jenž následuje po hráči s velkou sázkou naslepo (big blind)".
    pub by: StraddleSeat,
    /// "STRADDLE BET je dvojnásobkem velké sázky naslepo."
    pub big_blind_multiple: u32,
    /// "před rozdáním karet".
    pub posted_before_deal: bool,
    /// "Jedná se tedy o navýšení (RAISE)": it is a raise the others must call.
    pub counts_as_raise: bool,
    /// "Hráč se sázkou STRADDLE uzavírá před flopem sázky": he acts last pre-flop.
    pub acts_last_preflop: bool,
    /// "… a má právo opětového navýšení (RERAISE)."
    pub may_reraise: bool,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StraddleSeat {
    FirstLeftOfBigBlind,
}

/// "Sázení a zvyšování (betting and raising)".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Betting {
    /// "v holdemu je nejmenší možná částka, kterou lze vsadit rovna jednomu velkému blindu":
    /// the smallest bet in big blinds.
    pub min_bet_big_blinds: u32,
    /// "V no-limit a pot-limit hrách je dovoleno neomezené zvyšování": most raises in one
    /// betting round; absent: unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raises_per_round_max: Option<u32>,
    /// "Každá sázka, která není allin, musí být alespoň stejně vysoká jako byla poslední
    /// sázka nebo zvýšení. Každý raise musí být minimálně rozdíl mezi posledními dvěma
    /// sázkami."
    pub min_raise: MinRaise,
    /// Whether an all-in for less than a full raise lets players who already acted raise
    /// again.
    pub short_all_in: ShortAllIn,
    /// "Verbální deklarace sázky je závazná."
    pub verbal_declaration_binding: bool,
    /// "Řetězové sázky (tzv. string bet, string raise) nejsou dovolené."
    pub string_bets_allowed: bool,
    /// "Poklepání na stůl označuje check."
    pub tap_is_check: bool,
    /// "Vložení jeden a půl plné sázky je považováno za zvýšení a hráč musí doplnit počet
    /// žetonů do plné výše": chips pushed in without a declaration are a raise that must be
    /// completed to a full raise when the part above the call is at least (this − 1) × the
    /// last full bet or raise of the betting round (for a player facing a bet with nothing
    /// in front of him: this multiple of the bet).
    pub completed_raise_threshold: Ratio,
    /// Chips pushed in (without a declaration) above a call but below the threshold.
    pub below_threshold: BelowThreshold,
    /// "Pokud hráč vloží jediný žeton, jehož hodnota je větší než poslední sázka a neohlásí
    /// raise, je toto považováno za call."
    pub single_oversized_chip: OversizedChip,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MinRaise {
    /// A raise is at least the previous bet or raise of the same betting round.
    PreviousBetOrRaise,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ShortAllIn {
    /// An all-in short of a full raise is not a raise: players who already acted may only
    /// call it or fold; betting reopens only after a full raise.
    DoesNotReopenBetting,
    /// Any all-in above a call reopens betting.
    ReopensBetting,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BelowThreshold {
    /// A call; the chips above the call go back to the player.
    CallExcessReturned,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OversizedChip {
    /// A call; change is given.
    Call,
}

/// "Showdown".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Showdown {
    /// "Aby měl hráč nárok na jakoukoliv výhru … musí položit všechny své karty na stůl
    /// lícem nahoru."
    pub all_cards_shown_to_win: bool,
    /// "Karty hovoří sami za sebe."
    pub cards_speak: bool,
    /// "Show one, show all."
    pub show_one_show_all: bool,
    /// Who shows first.
    pub order: ShowdownOrder,
    /// Over which betting the last aggressor is looked for.
    pub aggression_scope: AggressionScope,
    /// "Pokud existuje vedlejší bank (tzv. side pot) je nejdříve vyhodnocený tento side pot a
    /// až po něm hlavní bank."
    pub pots_resolved: PotOrder,
    /// "Pokud je side potů více, vyhodnocuje se nejdříve side pot, ve kterém jsou hráči,
    /// kteří měli na začátku hry nejvíce žetonů."
    pub side_pot_order: SidePotOrder,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ShowdownOrder {
    /// "vždy musí první ukázat karty ten hráč, který byl jako poslední agresivní"; "Pokud …
    /// nikdo nenavýší sázku …, ukazuje první karty hráč, který je první na řadě."
    LastAggressorElseFirstToAct,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AggressionScope {
    /// Any bet or raise of the hand ("v průběhu hry").
    WholeHand,
    /// Only bets and raises of the last betting round.
    LastBettingRound,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PotOrder {
    SidePotsBeforeMainPot,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SidePotOrder {
    /// The side pot of the players who had the most chips at the start of the hand first
    /// (the last-formed side pot first, down to the main pot).
    MostChipsAtStartFirst,
}

/// "Remízy": a split pot's odd chip.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OddChip {
    /// "Žeton, který zůstane navíc je rozdělen na nejmenší žetony, které se ve hře používají."
    pub break_down_to_smallest_chip: bool,
    /// "Pokud zůstane jeden žeton nejmenší hodnoty, dostává ho hráč, který … sedí první za
    /// buttonem ve směru hry."
    pub to: OddChipTo,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OddChipTo {
    /// The first of the players sharing the pot seated after the button in the direction of
    /// play.
    FirstWinnerLeftOfButton,
}

/// "Misdeal (špatně rozdané karty)".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "PokerMisdeal")]
pub struct Misdeal {
    /// "… pouze v případě že, se na chybu přijde dříve … než dva hráči rozehrají hru":
    /// a misdeal is declared only while fewer than this many players have acted.
    pub only_before_players_acted: u8,
    /// What a misdeal does to the chips already in (the blinds).
    pub on_misdeal: MisdealSettlement,
    /// "Pokud hra začne …, misdeal už nemůže nastat. Blindy se potom nevrací ani hráčům,
    /// kteří mají např. jenom jednu kartu."
    pub after_play_started: AfterPlayStarted,
    /// The listed situations, each with what it leads to.
    pub causes: Vec<MisdealCause>,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MisdealSettlement {
    /// The hand is dealt again; the blinds go back to the players who posted them.
    RedealBlindsReturned,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AfterPlayStarted {
    /// The hand is played on; nothing (not even a blind) is returned.
    HandStandsNoBlindReturned,
}

/// One numbered item of "Misdeal".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MisdealCause {
    pub id: MisdealKind,
    pub consequence: Consequence,
    /// The item's number in the document ("Misdeal 3.").
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MisdealKind {
    /// Item 1: "První nebo druhá karta je rozdaná lícem nahoru nebo je jinak odhalena chybou
    /// dealera."
    FirstOrSecondCardExposedByDealer,
    /// Item 2: "Dvě nebo více karet jsou rozdány lícem nahoru dealerem."
    TwoOrMoreCardsDealtFaceUp,
    /// Item 2: "(pokud se otočí jen jedna karta, je použita jako spálená a je hráči nahrazena po
    /// dorozdání všech karet)".
    OneCardDealtFaceUp,
    /// Item 3: "Jsou nalezeny dvě nebo více karet v balíčku obrácené lícem nahoru."
    TwoOrMoreFaceUpCardsInDeck,
    /// Item 4: "Dvě nebo více karet rozdaných navíc."
    TwoOrMoreExtraCardsDealt,
    /// Item 5: "Jakákoliv karta rozdaná mimo pořadí."
    CardDealtOutOfOrder,
    /// Item 6: "Button je na špatném místě."
    ButtonMisplaced,
    /// Item 7: "Karty byly rozdány také na volné místo popř. hráči, který na ně nemá nárok."
    DealtToEmptySeatOrIneligiblePlayer,
    /// Item 8: "Nebyly rozdané karty hráči, který chce hrát a má na ně nárok."
    EligiblePlayerNotDealt,
    /// Item 9: "Pokud je při flopu otočena jedna nebo více karet navíc …"
    ExtraCardExposedOnFlop,
    /// Item 9: "Stejný postup platí i při otočení jedné nebo více karet navíc u turnu."
    ExtraCardExposedOnTurn,
}

/// "Nesrovnalosti": one numbered item with what it leads to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Irregularity {
    pub id: IrregularityKind,
    pub consequence: Consequence,
    /// The item's number in the document ("Nesrovnalosti 3.").
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IrregularityKind {
    /// Item 1: "zjistíme, že button byl na špatném místě" (after play started).
    ButtonFoundMisplaced,
    /// Item 2: "Pokud si hráč karty nechrání nemá nárok na stížnosti, pokud mu dealer karty sebere
    /// jako foldnuté."
    UnprotectedCardsMucked,
    /// Item 3: "Pokud se v průběhu hry objeví karta s jiným rubem …"
    DifferentBackInPlay,
    /// Item 3: "Pokud je karta objevena ve zbytku balíčku všechny úkony platí."
    DifferentBackInStub,
    /// Item 4: "Pokud se objeví dvě stejné karty (stejná barva, stejná hodnota) …"
    DuplicateCard,
    /// Item 5: "Obrácená karta v balíčku je považována za bezvýznamný kus papíru (použije se jako
    /// spálená karta) a hráči je tato karta při rozdávání nahrazena …"
    FaceUpCardInDeck,
    /// Item 6: "Žolíky objevený v průběhu hry, kde nejsou používány žolíky je považován za
    /// bezvýznamný kus papíru."
    JokerFound,
    /// Item 6: "Pokud hráč s takovou kartou hraje, je jeho ruka považována za mrtvou (foldnutou)".
    JokerPlayed,
    /// Item 7: "Pokud hráč hraje bez dívání se na své karty, je zodpovědný za možnost mít neplatné
    /// karty nebo žolíka."
    PlayedWithoutLooking,
    /// Item 8: "Jedna nebo více karet chybějících v balíčku neruší výsledek hry."
    MissingCards,
    /// Item 9: "Pokud hráči spadnou karty ze stolu musí s nimi hrát."
    CardsFellOffTable,
    /// Item 10: "Pokud dealer zapomene spálit kartu nebo jich spálí více …"
    BurnError,
    /// Item 11: "Pokud dealer rozdá předčasně kartu před ukončením sázek …"
    CardDealtBeforeBettingClosed,
    /// Item 12: "Pokud je zbývající část balíčku znehodnocená …"
    StubSpoiled,
}

/// What a misdeal or an irregularity leads to: the lookup an engine makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Consequence {
    /// A misdeal: the hand is dealt again (`misdeal.on_misdeal` says what is returned).
    Misdeal,
    /// The card is used as the burn card and replaced after all cards are dealt.
    BurnCardReplacedAfterDeal,
    /// The extra board card(s) are shuffled back (without the burn card) and the street is
    /// dealt again.
    ReshuffleAndRedealStreet,
    /// The button and blinds are placed for the next hand so that every player gets every
    /// position in the round where possible; the current hand stands.
    CorrectNextHand,
    /// Every action of the hand is void and every chip goes back to its owner.
    VoidAllActionReturnChips,
    /// Every action stands; the hand goes on.
    ActionStands,
    /// The card is dead paper: not a card of the hand.
    DeadPaper,
    /// The player's hand is dead (folded) and has no claim to the pot.
    HandDead,
    /// The player must play the cards (or bears the risk of them) as they are.
    PlayerBearsIt,
    /// The error is corrected if found before two players acted; after that the cards dealt
    /// stand.
    CorrectBeforeActionElseStands,
    /// The card is void (not part of the board).
    CardVoid,
    /// The stub is reconstructed as closely as possible and the hand completed.
    ReconstructAndComplete,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Rake {
    /// The house takes nothing from the pots.
    #[serde(rename = "none")]
    NoRake,
}

impl PokerCashRules {
    /// The consequence the document gives for `kind`.
    pub fn irregularity(&self, kind: IrregularityKind) -> Option<Consequence> {
        self.irregularities
            .iter()
            .find(|i| i.id == kind)
            .map(|i| i.consequence)
    }

    /// The consequence the document gives for a misdeal situation `kind`.
    pub fn misdeal_cause(&self, kind: MisdealKind) -> Option<Consequence> {
        self.misdeal
            .causes
            .iter()
            .find(|c| c.id == kind)
            .map(|c| c.consequence)
    }

    pub fn lint(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        let mut err = |path: &str, msg: String| out.push((format!("rules.poker_cash.{path}"), msg));

        if self.shoe.deck != DeckKind::Standard52 {
            err(
                "shoe.deck",
                "Texas Hold'em is dealt from the 52-card deck".into(),
            );
        }
        // "Pokud se objeví dvě stejné karty …, všechny úkony jsou neplatné": with more than
        // one deck two identical cards would be legal, and the rule meaningless.
        if self.shoe.decks != 1 && self.irregularity(IrregularityKind::DuplicateCard).is_some() {
            err(
                "shoe.decks",
                format!(
                    "a duplicate card voids the hand, so the game is dealt from one deck, not {}",
                    self.shoe.decks
                ),
            );
        }
        let needed = self.game.cards_needed(usize::from(self.seats_max));
        if self.seats_max < 2 || needed > self.shoe.total_cards() {
            err(
                "seats_max",
                format!(
                    "{} seats need {needed} cards a hand but the deck holds {}; at least 2 seats",
                    self.seats_max,
                    self.shoe.total_cards()
                ),
            );
        }
        if self.smallest_chip <= 0 {
            err(
                "smallest_chip",
                "the smallest chip is worth at least one minor unit".into(),
            );
        }

        let b = &self.blinds;
        if b.small <= 0 {
            err("blinds.small", "the small blind is positive".into());
        }
        if b.big <= b.small {
            err(
                "blinds.big",
                format!(
                    "the big blind {} must be larger than the small blind {}",
                    b.big, b.small
                ),
            );
        }
        if self.betting.min_bet_big_blinds < 1 {
            err(
                "betting.min_bet_big_blinds",
                "the minimum bet is at least one big blind".into(),
            );
        }
        let s = &self.straddle;
        if s.big_blind_multiple < 2 {
            err(
                "straddle.big_blind_multiple",
                format!(
                    "a straddle is a raise over the big blind: at least 2 big blinds, not {}",
                    s.big_blind_multiple
                ),
            );
        }

        let buy = &self.buy_in;
        if buy.min < b.big {
            err(
                "buy_in.min",
                format!(
                    "the minimum buy-in {} does not cover one big blind {}",
                    buy.min, b.big
                ),
            );
        }
        if let Some(max) = buy.max {
            if max < buy.min {
                err(
                    "buy_in.max",
                    format!("the maximum buy-in {max} is below the minimum {}", buy.min),
                );
            }
        }
        if buy.return_window_minutes == 0 {
            err(
                "buy_in.return_window_minutes",
                "the return window is at least one minute".into(),
            );
        }
        if self.smallest_chip > 0 {
            for (path, v) in [
                ("blinds.small", b.small),
                ("blinds.big", b.big),
                ("buy_in.min", buy.min),
            ] {
                if v % self.smallest_chip != 0 {
                    err(
                        path,
                        format!(
                            "{v} cannot be paid in chips of {}: not a multiple of the smallest chip",
                            self.smallest_chip
                        ),
                    );
                }
            }
        }

        let t = self.betting.completed_raise_threshold;
        let one = Ratio::ONE;
        let two = Ratio::new(2, 1).expect("2/1 is a ratio");
        if t <= one || t >= two {
            err(
                "betting.completed_raise_threshold",
                format!(
                    "{t} bets pushed in must lie strictly between a call (1) and a full raise (2)"
                ),
            );
        }
        if self.betting.raises_per_round_max == Some(0) {
            err(
                "betting.raises_per_round_max",
                "omit the cap for unlimited raises; 0 would forbid raising".into(),
            );
        }

        let mut suits = self.suit_order_for_button_draw.clone();
        suits.sort_by_key(|s| *s as u8);
        suits.dedup();
        if suits.len() != 4 || self.suit_order_for_button_draw.len() != 4 {
            err(
                "suit_order_for_button_draw",
                "order each of the four suits exactly once".into(),
            );
        }

        if self.misdeal.only_before_players_acted < 1 {
            err(
                "misdeal.only_before_players_acted",
                "a misdeal must be possible before anyone acts".into(),
            );
        }
        let mut seen = HashSet::new();
        for c in &self.misdeal.causes {
            if !seen.insert(c.id) {
                err(
                    "misdeal.causes",
                    format!("{} is listed twice", crate::wire_name(&c.id)),
                );
            }
        }
        let mut seen = HashSet::new();
        for i in &self.irregularities {
            if !seen.insert(i.id) {
                err(
                    "irregularities",
                    format!("{} is listed twice", crate::wire_name(&i.id)),
                );
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> PokerCashRules {
        PokerCashRules {
            shoe: Shoe::new(DeckKind::Standard52, 1),
            game: PokerGame::TexasHoldem,
            betting_structure: BettingStructure::NoLimit,
            seats_max: 10,
            smallest_chip: 500,
            buy_in: BuyIn {
                min: 200_000,
                max: None,
                moved_by_house: TableEntry::KeepsStackEvenShort,
                voluntary_change: TableEntry::MinBuyIn,
                return_window_minutes: 120,
                return_within_window: TableEntry::ChipsLeftWith,
                top_up: TopUp::BetweenHandsUpToMax,
                clause: "Buy-in".into(),
            },
            blinds: Blinds {
                small: 1_000,
                big: 2_000,
                short_player: ShortBlind::PostsAllInOthersPlayFullBlind,
                first_to_act_preflop: Seat::LeftOfBigBlind,
                first_to_act_postflop: Seat::LeftOfButton,
                clause: "Pravidla používání blindů".into(),
            },
            button: Button {
                rotation: Rotation::Clockwise,
                placement: BlindPlacement::BigBlindFirstDeadButton,
                heads_up_small_blind_on_button: true,
                initial: InitialButton::HighCardDraw,
                clause: "Používání buttonu a blindů".into(),
            },
            new_player: NewPlayer {
                options: vec![
                    NewPlayerOption::WaitForBigBlind,
                    NewPlayerOption::PostBigBlind,
                ],
                may_start_between_button_and_big_blind: false,
                posted_big_blind_is_live: true,
                clause: "Pravidla používání blindů".into(),
            },
            straddle: Straddle {
                allowed: true,
                by: StraddleSeat::FirstLeftOfBigBlind,
                big_blind_multiple: 2,
                posted_before_deal: true,
                counts_as_raise: true,
                acts_last_preflop: true,
                may_reraise: true,
                clause: "Straddle bet".into(),
            },
            betting: Betting {
                min_bet_big_blinds: 1,
                raises_per_round_max: None,
                min_raise: MinRaise::PreviousBetOrRaise,
                short_all_in: ShortAllIn::DoesNotReopenBetting,
                verbal_declaration_binding: true,
                string_bets_allowed: false,
                tap_is_check: true,
                completed_raise_threshold: Ratio::new(3, 2).unwrap(),
                below_threshold: BelowThreshold::CallExcessReturned,
                single_oversized_chip: OversizedChip::Call,
                clause: "Sázení a zvyšování".into(),
            },
            showdown: Showdown {
                all_cards_shown_to_win: true,
                cards_speak: true,
                show_one_show_all: true,
                order: ShowdownOrder::LastAggressorElseFirstToAct,
                aggression_scope: AggressionScope::WholeHand,
                pots_resolved: PotOrder::SidePotsBeforeMainPot,
                side_pot_order: SidePotOrder::MostChipsAtStartFirst,
                clause: "Showdown".into(),
            },
            odd_chip: OddChip {
                break_down_to_smallest_chip: true,
                to: OddChipTo::FirstWinnerLeftOfButton,
                clause: "Remízy".into(),
            },
            suit_order_for_button_draw: vec![
                SuitName::Spades,
                SuitName::Hearts,
                SuitName::Diamonds,
                SuitName::Clubs,
            ],
            misdeal: Misdeal {
                only_before_players_acted: 2,
                on_misdeal: MisdealSettlement::RedealBlindsReturned,
                after_play_started: AfterPlayStarted::HandStandsNoBlindReturned,
                causes: vec![MisdealCause {
                    id: MisdealKind::ButtonMisplaced,
                    consequence: Consequence::Misdeal,
                    clause: "Misdeal 6.".into(),
                }],
                clause: "Misdeal".into(),
            },
            irregularities: vec![Irregularity {
                id: IrregularityKind::DuplicateCard,
                consequence: Consequence::VoidAllActionReturnChips,
                clause: "Nesrovnalosti 4.".into(),
            }],
            rake: Rake::NoRake,
            clause: "Všeobecná pravidla casina C40".into(),
        }
    }

    fn complaints(r: &PokerCashRules) -> Vec<String> {
        r.lint().into_iter().map(|(path, _)| path).collect()
    }

    #[test]
    fn the_documents_rules_are_consistent() {
        assert_eq!(rules().lint(), Vec::<(String, String)>::new());
    }

    #[test]
    fn big_blind_must_exceed_small_blind() {
        let mut r = rules();
        r.blinds.big = r.blinds.small;
        assert_eq!(complaints(&r), vec!["rules.poker_cash.blinds.big"]);
    }

    #[test]
    fn small_blind_must_be_positive() {
        let mut r = rules();
        r.blinds.small = 0;
        assert!(complaints(&r).contains(&"rules.poker_cash.blinds.small".to_string()));
    }

    #[test]
    fn straddle_multiple_must_be_at_least_two() {
        let mut r = rules();
        r.straddle.big_blind_multiple = 1;
        assert_eq!(
            complaints(&r),
            vec!["rules.poker_cash.straddle.big_blind_multiple"]
        );
    }

    #[test]
    fn min_buy_in_must_cover_the_big_blind() {
        let mut r = rules();
        r.buy_in.min = r.blinds.big - r.smallest_chip;
        assert_eq!(complaints(&r), vec!["rules.poker_cash.buy_in.min"]);
    }

    #[test]
    fn max_buy_in_must_not_be_below_the_minimum() {
        let mut r = rules();
        r.buy_in.max = Some(r.buy_in.min - r.smallest_chip);
        assert_eq!(complaints(&r), vec!["rules.poker_cash.buy_in.max"]);
    }

    #[test]
    fn blinds_are_multiples_of_the_smallest_chip() {
        let mut r = rules();
        r.blinds.small = 750;
        assert_eq!(complaints(&r), vec!["rules.poker_cash.blinds.small"]);
    }

    #[test]
    fn completed_raise_threshold_lies_between_call_and_raise() {
        let mut r = rules();
        r.betting.completed_raise_threshold = Ratio::new(2, 1).unwrap();
        assert_eq!(
            complaints(&r),
            vec!["rules.poker_cash.betting.completed_raise_threshold"]
        );
        r.betting.completed_raise_threshold = Ratio::ONE;
        assert_eq!(
            complaints(&r),
            vec!["rules.poker_cash.betting.completed_raise_threshold"]
        );
    }

    #[test]
    fn duplicate_card_rule_needs_a_single_deck() {
        let mut r = rules();
        r.shoe.decks = 2;
        assert_eq!(complaints(&r), vec!["rules.poker_cash.shoe.decks"]);
    }

    #[test]
    fn seats_must_fit_the_deck() {
        let mut r = rules();
        r.seats_max = 23; // 46 hole cards + 5 board + 3 burns = 54 > 52
        assert_eq!(complaints(&r), vec!["rules.poker_cash.seats_max"]);
        r.seats_max = 22;
        assert!(r.lint().is_empty());
    }

    #[test]
    fn suit_order_names_each_suit_once() {
        let mut r = rules();
        r.suit_order_for_button_draw[3] = SuitName::Spades;
        assert_eq!(
            complaints(&r),
            vec!["rules.poker_cash.suit_order_for_button_draw"]
        );
    }

    #[test]
    fn misdeal_and_irregularity_lists_name_each_situation_once() {
        let mut r = rules();
        r.misdeal.causes.push(r.misdeal.causes[0].clone());
        r.irregularities.push(r.irregularities[0].clone());
        assert_eq!(
            complaints(&r),
            vec![
                "rules.poker_cash.misdeal.causes",
                "rules.poker_cash.irregularities"
            ]
        );
    }

    #[test]
    fn consequences_are_looked_up_by_situation() {
        let r = rules();
        assert_eq!(
            r.irregularity(IrregularityKind::DuplicateCard),
            Some(Consequence::VoidAllActionReturnChips)
        );
        assert_eq!(r.irregularity(IrregularityKind::MissingCards), None);
        assert_eq!(
            r.misdeal_cause(MisdealKind::ButtonMisplaced),
            Some(Consequence::Misdeal)
        );
    }
}
