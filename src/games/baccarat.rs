//! Punto banco baccarat engine: SYNOT Baccarat and Evolution Speed Baccarat (002).
//!
//! Pure: no I/O, no clock, no randomness. The dealing order, the naturals, both third-card
//! tables, the pair definitions, the Big/Small card counts, the Egalite Extra totals and the
//! bonus margin come from the plan's [`BaccaratRules`]; every limit and ratio from its
//! `[[bets]]` and `[[payouts]]`. The card points (ace 1, 2–9 face value, 10 and pictures 0,
//! last digit of the sum) are the document's and not parameters.
//!
//! In the order of the document's section:
//! - *Tabulka nejvyšších sázek*: [`BaccaratEngine::place`] holds a bet to its type's
//!   `min_bet`/`max_bet`; [`BaccaratEngine::check_round`] holds one player's total on one bet
//!   (one Egalite total) in one round to `max_bet` and enforces `requires` (a side bet needs a
//!   main bet of the same player in the round).
//! - *Cíl hry*, *Pravidla pro třetí kartu*: live, the dealer system reports each card with the
//!   position it was dealt to; [`BaccaratEngine::expect_next`] says which position the rules
//!   give the next card to (or that the coup is complete) and
//!   [`BaccaratEngine::accept_card`] refuses a card to another position (`wrong_position`) or
//!   after the coup is complete (`deal_complete`), citing the clause; the lifecycle then
//!   applies the plan's error policy. In RNG mode [`BaccaratEngine::deal_coup`] deals from a
//!   seed (algorithm below).
//! - *Výplatní tabulka*: [`BaccaratEngine::outcome`] reads the coup (totals, naturals, winner,
//!   margin, card count, pairs) and [`BaccaratEngine::settle`] pays every bet by the plan's
//!   rows, exact to the minor unit with the plan's rounding; a win above the row's `max_win` is
//!   an error, never capped.
//! - [`BaccaratEngine::exact_rtp`]: the exact return of every bet of the plan from a full shoe,
//!   by combinatorial enumeration with card removal.
//!
//! **RNG deal** ([`BaccaratEngine::deal_coup`], [`ShoeShuffle`]). Each coup is dealt from a
//! freshly shuffled full shoe (as from a continuous shuffler):
//! 1. The shoe in canonical order: deck 0, deck 1, …; within a deck ranks 2, 3, …, 10, J, Q,
//!    K, A, within a rank the suits ♣ ♦ ♥ ♠. Position `p` (0-based) holds the card
//!    `p mod 52` of that order.
//! 2. `rand_chacha::ChaCha20Rng::from_seed(seed)`; 32-bit words `x` taken in order with
//!    `RngCore::next_u32`.
//! 3. Forward Fisher–Yates (Durstenfeld, from the front): for step `i = 0, 1, …` with
//!    `m = N − i` cards left (`N` the shoe's size), draw `r` uniform in `0..m` by rejection
//!    — reject `x ≥ ⌊(2³² − 1) / m⌋ · m`, else `r = x mod m` (exactly
//!    [`crate::round::draw_pocket`]'s sampling) — and swap positions `i` and `i + r`. Card `i`
//!    of the coup is then position `i`.
//! 4. The shuffle stops as soon as the coup is complete: the cards dealt are exactly the first
//!    cards of the full shuffle that continues the same way, so an auditor can re-derive the
//!    coup with a plain full Fisher–Yates over a 416-entry array.
//! 5. Cards go, in shuffle order, to the positions the rules give them
//!    ([`BaccaratEngine::expect_next`]).

use std::collections::BTreeMap;
use std::fmt;

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

pub use crate::rng::{uniform_below, ShoeShuffle, Shuffling};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Payout, Refusal};
use crate::cards::{Card, Rank};
use crate::money::{Money, Ratio};
use crate::plan::model::{BetType, Payout as PayoutRow, Plan};
use crate::plan::rules::baccarat::{BaccaratRules, CardMatch, Hand, PairCards};
use crate::plan::rules::{Family, GameRules};

/// The stable codes of the refusals this engine returns.
pub mod code {
    pub use crate::games::code::WRONG_FAMILY;
    /// The plan's baccarat rules do not pass their own lint (a third-card table with a gap).
    pub const INVALID_RULES: &str = "invalid_rules";
    /// `bet` is not a baccarat bet type.
    pub const UNKNOWN_BET_TYPE: &str = "unknown_bet_type";
    /// A baccarat bet type (or Egalite total) that this plan does not offer.
    pub const NOT_OFFERED: &str = "not_offered";
    /// An Egalite Extra bet without its `total`.
    pub const MISSING_FIELD: &str = "missing_field";
    /// A `total` on a bet other than Egalite Extra.
    pub const UNEXPECTED_FIELD: &str = "unexpected_field";
    /// A stake that is zero or negative.
    pub const BAD_STAKE: &str = "bad_stake";
    /// A stake summed over a round that does not fit in i64 minor units.
    pub const STAKE_OVERFLOW: &str = "stake_overflow";
    pub const BELOW_MIN_BET: &str = "below_min_bet";
    pub const ABOVE_MAX_BET: &str = "above_max_bet";
    pub use crate::games::code::REQUIRES_MAIN_BET;
    /// Live: a card reported to a position the drawing rules do not give the next card to.
    pub const WRONG_POSITION: &str = "wrong_position";
    /// Live: a card reported after the coup is complete.
    pub const DEAL_COMPLETE: &str = "deal_complete";
    /// Live: the round's cards hold more copies of a card than the shoe does.
    pub const NOT_IN_SHOE: &str = "not_in_shoe";
    /// An outcome asked of a coup the rules have not finished dealing.
    pub const DEAL_INCOMPLETE: &str = "deal_incomplete";
    /// Settlement: a placement the engine would not have made.
    pub const INCONSISTENT_PLACEMENT: &str = "inconsistent_placement";
    /// Settlement: an outcome that no coup can have (a winner that disagrees with the totals).
    pub const INCONSISTENT_OUTCOME: &str = "inconsistent_outcome";
    /// The settlement codes every engine shares ([`crate::games::code`]).
    pub use crate::games::code::{MAX_WIN_EXCEEDED, NO_PAYOUT_ROW, PAYOUT_OVERFLOW};
    /// Exact enumeration: a fraction that does not fit in 128 bits (a shoe far larger than any
    /// plan's).
    pub const EXACT_OVERFLOW: &str = "exact_overflow";
}

/// The `bet` of an Egalite Extra request, which also names the chosen `total`.
pub const EGALITE_BET: &str = "egalite_extra";

/// Most cards a coup can take: two to each hand and one third card each.
pub const MAX_COUP_CARDS: usize = 6;

/// One bet as an operator sends it. Amounts are integer minor units of the plan's currency.
///
/// ```json
/// {"bet": "banker", "stake_minor": 1000}
/// {"bet": "player_pair", "stake_minor": 500}
/// {"bet": "egalite_extra", "total": 6, "stake_minor": 200}
/// ```
///
/// Egalite Extra is one bet type with one payout row per total (`tie_0` … `tie_9`); each chosen
/// total is a bet of its own held to the row's limits (the plan's assumption on
/// `rules.baccarat.egalite_extra`), so a player betting several totals sends one request per
/// total. `total` is refused on every other bet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BaccaratBetRequest {
    pub bet: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u8>,
    pub stake_minor: i64,
}

/// One accepted bet: what limits are held to and what is settled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BaccaratPlacement {
    /// The bet type of the plan's limits and payout tables.
    pub bet_type: String,
    /// The chosen total of an Egalite Extra bet; absent on every other bet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub total: Option<u8>,
    pub stake_minor: i64,
}

/// A card's place in the coup: the hand and whether it is that hand's first, second or third
/// card. Written `player_1` … `banker_3`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum Position {
    #[serde(rename = "player_1")]
    Player1,
    #[serde(rename = "player_2")]
    Player2,
    #[serde(rename = "player_3")]
    Player3,
    #[serde(rename = "banker_1")]
    Banker1,
    #[serde(rename = "banker_2")]
    Banker2,
    #[serde(rename = "banker_3")]
    Banker3,
}

impl Position {
    pub fn hand(self) -> Hand {
        match self {
            Position::Player1 | Position::Player2 | Position::Player3 => Hand::Player,
            Position::Banker1 | Position::Banker2 | Position::Banker3 => Hand::Banker,
        }
    }

    /// 1, 2 or 3: the hand's first, second or third card.
    pub fn nth(self) -> u8 {
        match self {
            Position::Player1 | Position::Banker1 => 1,
            Position::Player2 | Position::Banker2 => 2,
            Position::Player3 | Position::Banker3 => 3,
        }
    }

    fn of(hand: Hand, nth: u8) -> Position {
        match (hand, nth) {
            (Hand::Player, 1) => Position::Player1,
            (Hand::Player, 2) => Position::Player2,
            (Hand::Player, _) => Position::Player3,
            (Hand::Banker, 1) => Position::Banker1,
            (Hand::Banker, 2) => Position::Banker2,
            (Hand::Banker, _) => Position::Banker3,
        }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ord = ["first", "second", "third"][usize::from(self.nth() - 1)];
        write!(f, "{} {ord} card", hand_name(self.hand()))
    }
}

/// A card as the dealer system reports it (live) or as the RNG deal gives it: the card and
/// the position it went to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BaccaratCard {
    pub to: Position,
    pub card: Card,
}

/// What the rules deal next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "next", rename_all = "snake_case")]
pub enum Deal {
    /// The next card goes to this position.
    Card { to: Position },
    /// No further card: the coup is complete and can be settled.
    Complete,
}

/// A coup dealt from a seed, held without allocation (at most [`MAX_COUP_CARDS`] cards).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Coup {
    cards: [BaccaratCard; MAX_COUP_CARDS],
    len: u8,
}

impl Coup {
    /// The cards in dealing order.
    pub fn as_slice(&self) -> &[BaccaratCard] {
        &self.cards[..usize::from(self.len)]
    }
}

/// Who won the coup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Winner {
    Player,
    Banker,
    Tie,
}

/// A complete coup read by the rules: everything a bet of either plan is settled on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BaccaratOutcome {
    /// Final points 0–9 ("započítává se pouze poslední číslice").
    pub player_total: u8,
    pub banker_total: u8,
    /// The hand's first two cards make one of the plan's `natural_totals`.
    pub player_natural: bool,
    pub banker_natural: bool,
    pub winner: Winner,
    /// Winner's total minus loser's (0 on a tie): the bonus bets' margin.
    pub margin: u8,
    /// Cards dealt to both hands (4, 5 or 6): Big / Small.
    pub cards_dealt: u8,
    /// The hand's first two cards make a pair by the plan's `pairs.pair_match`.
    pub player_pair: bool,
    pub banker_pair: bool,
    /// The hand's first two cards make a pair by the plan's `pairs.perfect_pair_match`.
    pub player_perfect_pair: bool,
    pub banker_perfect_pair: bool,
}

/// Baccarat points of a rank: ace 1, 2–9 face value, 10 and pictures 0 (002: "Eso má hodnotu
/// 1 bodu, … Karty 10, J, Q a K mají hodnotu 0 bodů").
pub fn points(rank: Rank) -> u8 {
    // The rule below as a table: dealing and reading a coup look it up for every card.
    POINTS[rank as usize]
}

const fn points_rule(rank: Rank) -> u8 {
    match rank {
        Rank::Ace => 1,
        Rank::Ten | Rank::Jack | Rank::Queen | Rank::King => 0,
        r => r as u8,
    }
}

/// [`points_rule`] by rank number (2 … 14).
const POINTS: [u8; 15] = {
    let mut t = [0u8; 15];
    let mut i = 0;
    while i < Rank::ALL.len() {
        t[Rank::ALL[i] as usize] = points_rule(Rank::ALL[i]);
        i += 1;
    }
    t
};

/// The third-card rules of the plan, as lookup tables built once from the plan.
#[derive(Debug, Clone, Copy)]
struct DrawTable {
    initial: [Hand; 4],
    natural: [bool; 10],
    player_draws: [bool; 10],
    banker_draws_player_stood: [bool; 10],
    /// `[banker two-card total][points of Player's third card]`.
    banker_draws_player_drew: [[bool; 10]; 10],
}

impl DrawTable {
    /// From rules that passed their lint (every list holds only 0–9, each total covered).
    fn new(r: &BaccaratRules) -> DrawTable {
        let mut t = DrawTable {
            initial: [Hand::Player; 4],
            natural: [false; 10],
            player_draws: [false; 10],
            banker_draws_player_stood: [false; 10],
            banker_draws_player_drew: [[false; 10]; 10],
        };
        for (slot, &h) in t.initial.iter_mut().zip(&r.initial_deal_order) {
            *slot = h;
        }
        for &v in &r.natural_totals {
            t.natural[usize::from(v)] = true;
        }
        for &v in &r.player_third_card.draws_on {
            t.player_draws[usize::from(v)] = true;
        }
        for &v in &r.banker_when_player_stood.draws_on {
            t.banker_draws_player_stood[usize::from(v)] = true;
        }
        for row in &r.banker_when_player_drew {
            for &b in &row.banker_totals {
                for &p in &row.draws_when_player_third_is {
                    t.banker_draws_player_drew[usize::from(b)][usize::from(p)] = true;
                }
            }
        }
        t
    }
}

/// The points of the cards each hand holds so far.
#[derive(Debug, Clone, Copy, Default)]
struct Hands {
    player: [u8; 3],
    player_n: u8,
    banker: [u8; 3],
    banker_n: u8,
}

impl Hands {
    fn push(&mut self, hand: Hand, pts: u8) {
        let (cards, n) = match hand {
            Hand::Player => (&mut self.player, &mut self.player_n),
            Hand::Banker => (&mut self.banker, &mut self.banker_n),
        };
        cards[usize::from(*n)] = pts;
        *n += 1;
    }

    fn count(&self, hand: Hand) -> u8 {
        match hand {
            Hand::Player => self.player_n,
            Hand::Banker => self.banker_n,
        }
    }

    fn dealt(&self) -> usize {
        usize::from(self.player_n + self.banker_n)
    }

    fn two_card(&self, hand: Hand) -> u8 {
        let c = match hand {
            Hand::Player => &self.player,
            Hand::Banker => &self.banker,
        };
        (c[0] + c[1]) % 10
    }

    fn total(&self, hand: Hand) -> u8 {
        let (c, n) = match hand {
            Hand::Player => (&self.player, self.player_n),
            Hand::Banker => (&self.banker, self.banker_n),
        };
        c[..usize::from(n)].iter().sum::<u8>() % 10
    }
}

/// The baccarat engine for one plan.
#[derive(Debug, Clone)]
pub struct BaccaratEngine<'p> {
    plan: &'p Plan,
    rules: &'p BaccaratRules,
    table: DrawTable,
    /// The side bets' rules as lookups, for [`BaccaratEngine::class_of`].
    sides: SideRules,
    shuffle: ShoeShuffle,
}

impl<'p> BaccaratEngine<'p> {
    /// The engine for `plan`; refuses a plan of another family and rules that do not pass
    /// their own lint (so that the draw tables it builds cover every total once).
    pub fn new(plan: &'p Plan) -> Result<BaccaratEngine<'p>, Refusal> {
        crate::games::expect_family(plan, Family::Baccarat, "baccarat")?;
        let GameRules::Baccarat(rules) = &plan.rules else {
            unreachable!("expect_family checked the rules' family")
        };
        let mut problems = rules.lint();
        problems.extend(rules.lint_against_plan(plan));
        if let Some((path, problem)) = problems.first() {
            return Err(Refusal::new(
                code::INVALID_RULES,
                format!("{}: {path}: {problem}", plan.key()),
            )
            .clause(rules.clause.clone()));
        }
        let shuffle = ShoeShuffle::new(rules.shoe, MAX_COUP_CARDS).ok_or_else(|| {
            Refusal::new(
                code::INVALID_RULES,
                format!(
                    "{}: a shoe of {} cards cannot deal a coup of {MAX_COUP_CARDS}",
                    plan.key(),
                    rules.shoe.total_cards()
                ),
            )
            .clause(rules.clause.clone())
        })?;
        Ok(BaccaratEngine {
            plan,
            rules,
            table: DrawTable::new(rules),
            sides: SideRules::new(rules),
            shuffle,
        })
    }

    pub fn plan(&self) -> &'p Plan {
        self.plan
    }

    // ----- Bets ---------------------------------------------------------------------------

    /// Reads one bet request against the plan and holds it to its type's `min_bet` and
    /// `max_bet`. This checks the request alone; before accepting it, the caller checks it
    /// together with the same player's earlier placements in the round with
    /// [`BaccaratEngine::check_round`].
    pub fn place(&self, req: &BaccaratBetRequest) -> Result<BaccaratPlacement, Refusal> {
        let row = self.plan.bet(&req.bet).ok_or_else(|| {
            if Family::Baccarat.bet_spec(&req.bet).is_some() {
                self.not_offered(&format!("the bet type '{}'", req.bet))
            } else {
                Refusal::new(
                    code::UNKNOWN_BET_TYPE,
                    format!(
                        "'{}' is not a bet of {}; it offers {}",
                        req.bet,
                        self.plan.key(),
                        self.offered()
                    ),
                )
            }
        })?;
        let total = self.check_total(&row.id, req.total)?;
        if req.stake_minor <= 0 {
            return Err(Refusal::new(
                code::BAD_STAKE,
                format!(
                    "the stake must be positive, not {} minor units",
                    req.stake_minor
                ),
            ));
        }
        if req.stake_minor < row.min_bet || req.stake_minor > row.max_bet {
            let (code, bound, limit) = if req.stake_minor < row.min_bet {
                (code::BELOW_MIN_BET, "below the minimum", row.min_bet)
            } else {
                (code::ABOVE_MAX_BET, "above the maximum", row.max_bet)
            };
            return Err(Refusal::new(
                code,
                format!(
                    "a stake of {} on {}{} is {bound} bet {} for {} in {}",
                    self.money(req.stake_minor),
                    row.id,
                    total_label(total),
                    self.money(limit),
                    row.label,
                    self.plan.key()
                ),
            )
            .clause(row.clause.clone()));
        }
        Ok(BaccaratPlacement {
            bet_type: row.id.clone(),
            total,
            stake_minor: req.stake_minor,
        })
    }

    /// Refuses `new` when, with `existing` (the same player's placements already accepted in
    /// this round):
    /// - the player's total stake on one bet type (one Egalite total) would exceed the type's
    ///   `max_bet` (`above_max_bet`);
    /// - a bet whose row `requires` other bet types has none of them in the round
    ///   (`requires_main_bet`): "side bets need a main bet". A main bet in `new` itself counts.
    pub fn check_round(
        &self,
        existing: &[&BaccaratPlacement],
        new: &[BaccaratPlacement],
    ) -> Result<(), Refusal> {
        // (already placed, total with `new`) per bet type and Egalite total.
        let mut totals: BTreeMap<(&str, Option<u8>), (i64, i64)> = BTreeMap::new();
        let tagged = existing.iter().map(|p| (*p, true));
        for (p, is_existing) in tagged.chain(new.iter().map(|p| (p, false))) {
            let (already, total) = totals.entry((p.bet_type.as_str(), p.total)).or_default();
            let add = |x: i64| x.checked_add(p.stake_minor);
            let sums = if is_existing {
                (add(*already), add(*total))
            } else {
                (Some(*already), add(*total))
            };
            let (Some(a), Some(t)) = sums else {
                return Err(Refusal::new(
                    code::STAKE_OVERFLOW,
                    format!(
                        "the total on {}{} does not fit in 64-bit minor units",
                        p.bet_type,
                        total_label(p.total)
                    ),
                ));
            };
            (*already, *total) = (a, t);
        }
        for p in new {
            let row = self.row(&p.bet_type)?;
            let (already, total) = totals[&(p.bet_type.as_str(), p.total)];
            if total > row.max_bet {
                return Err(Refusal::new(
                    code::ABOVE_MAX_BET,
                    format!(
                        "the player's total on {}{} would be {} ({} already placed this round), above its maximum bet {}",
                        p.bet_type,
                        total_label(p.total),
                        self.money(total),
                        self.money(already),
                        self.money(row.max_bet)
                    ),
                )
                .clause(row.clause.clone()));
            }
            crate::games::check_requires(
                row,
                existing
                    .iter()
                    .copied()
                    .chain(new)
                    .map(|q| q.bet_type.as_str()),
            )?;
        }
        Ok(())
    }

    // ----- Dealing ------------------------------------------------------------------------

    /// The position the rules give the next card to after `dealt` (the round's cards so far,
    /// in dealing order), or [`Deal::Complete`]. `dealt` is checked card by card as
    /// [`BaccaratEngine::accept_card`] would.
    pub fn expect_next(&self, dealt: &[BaccaratCard]) -> Result<Deal, Refusal> {
        let hands = self.replay(dealt)?;
        Ok(match self.next_position(&hands) {
            Some(to) => Deal::Card { to },
            None => Deal::Complete,
        })
    }

    /// Accepts `card` after `dealt` when the rules give the next card to its position, and
    /// says what comes next. Refuses a card to another position (`wrong_position`), a card
    /// after the coup is complete (`deal_complete`) and a card of which the round already
    /// holds as many copies as the shoe (`not_in_shoe`), citing the dealing rules: the
    /// lifecycle then applies the plan's error policy.
    pub fn accept_card(&self, dealt: &[BaccaratCard], card: BaccaratCard) -> Result<Deal, Refusal> {
        let mut hands = self.replay(dealt)?;
        self.step(&mut hands, dealt, card)?;
        Ok(match self.next_position(&hands) {
            Some(to) => Deal::Card { to },
            None => Deal::Complete,
        })
    }

    /// Deals a coup from `seed` (the algorithm is in the module documentation). No allocation.
    pub fn deal_coup(&self, seed: [u8; 32]) -> Coup {
        self.deal_coup_from(&mut ChaCha20Rng::from_seed(seed))
    }

    /// Deals a coup from the next words of `rng`, each coup from a freshly shuffled full shoe
    /// (the algorithm of the module documentation, continuing the stream where the previous
    /// coup stopped). For simulation: a run of coups from one seed costs the keystream it
    /// uses (about six words a coup) instead of a ChaCha20 key setup and four blocks per coup.
    pub fn deal_coup_from(&self, rng: &mut ChaCha20Rng) -> Coup {
        let mut shuffle = self.shuffle.start();
        let mut hands = Hands::default();
        let mut coup = Coup {
            cards: [BaccaratCard {
                to: Position::Player1,
                card: self.shuffle.deck[0],
            }; MAX_COUP_CARDS],
            len: 0,
        };
        while let Some(to) = self.next_position(&hands) {
            let card = shuffle.next_card(rng);
            hands.push(to.hand(), points(card.rank));
            coup.cards[usize::from(coup.len)] = BaccaratCard { to, card };
            coup.len += 1;
        }
        coup
    }

    /// [`BaccaratEngine::deal_coup`] as a list.
    pub fn deal_from_seed(&self, seed: [u8; 32]) -> Vec<BaccaratCard> {
        self.deal_coup(seed).as_slice().to_vec()
    }

    // ----- Outcome and settlement ---------------------------------------------------------

    /// Reads a complete coup: totals, naturals, winner, margin, card count and pairs. Refuses
    /// a coup the rules would not have dealt (as [`BaccaratEngine::accept_card`]) or have not
    /// finished dealing (`deal_incomplete`).
    pub fn outcome(&self, dealt: &[BaccaratCard]) -> Result<BaccaratOutcome, Refusal> {
        let hands = self.replay(dealt)?;
        if let Some(to) = self.next_position(&hands) {
            return Err(Refusal::new(
                code::DEAL_INCOMPLETE,
                format!(
                    "the coup is not complete after {} cards: the rules give the next card to {to} ({})",
                    dealt.len(),
                    self.why(&hands)
                ),
            )
            .clause(self.rules.clause.clone()));
        }
        let first_two = |hand: Hand| {
            let mut it = dealt
                .iter()
                .filter(|c| c.to.hand() == hand && c.to.nth() <= 2);
            match (it.next(), it.next()) {
                (Some(a), Some(b)) => (a.card, b.card),
                _ => unreachable!("a complete coup holds two cards in each hand"),
            }
        };
        let (mut pp, mut bp, mut ppp, mut bpp) = (false, false, false, false);
        if let Some(pairs) = &self.rules.pairs {
            match pairs.cards {
                PairCards::FirstTwo => {}
            }
            let (p1, p2) = first_two(Hand::Player);
            let (b1, b2) = first_two(Hand::Banker);
            pp = matches(pairs.pair_match, p1, p2);
            bp = matches(pairs.pair_match, b1, b2);
            ppp = matches(pairs.perfect_pair_match, p1, p2);
            bpp = matches(pairs.perfect_pair_match, b1, b2);
        }
        Ok(self.read(&hands, [pp, bp, ppp, bpp]))
    }

    /// The outcome of a coup this engine dealt ([`BaccaratEngine::deal_coup`]): the same as
    /// [`BaccaratEngine::outcome`] of its cards, without re-checking the deal (a [`Coup`] can
    /// only be made by the engine, by the rules).
    pub fn coup_outcome(&self, coup: &Coup) -> BaccaratOutcome {
        let mut hands = Hands::default();
        let mut first_two = [[coup.cards[0].card; 2]; 2];
        for c in coup.as_slice() {
            let hand = c.to.hand();
            let n = hands.count(hand);
            if n < 2 {
                first_two[usize::from(hand == Hand::Banker)][usize::from(n)] = c.card;
            }
            hands.push(hand, points(c.card.rank));
        }
        let pairs = match &self.rules.pairs {
            None => [false; 4],
            Some(p) => {
                let [[p1, p2], [b1, b2]] = first_two;
                [
                    matches(p.pair_match, p1, p2),
                    matches(p.pair_match, b1, b2),
                    matches(p.perfect_pair_match, p1, p2),
                    matches(p.perfect_pair_match, b1, b2),
                ]
            }
        };
        self.read(&hands, pairs)
    }

    /// Settles placements on a complete coup's outcome: one [`Payout`] per placement, in the
    /// same order. A bet pays by the plan's row for its outcome class: a `ratio` row returns
    /// the stake and wins `stake × ratio`, a `refund` row returns that share of the stake
    /// (Player and Banker on a tie), both rounded by the plan's rule; no class, or a tie or
    /// tie of naturals that the plan has no row for, loses.
    ///
    /// Every payout is held to its bet type's `max_win` and `max_win_plus_stake`: above them
    /// is an error (`max_win_exceeded`), never capped.
    ///
    /// Each placement is [prepared](BaccaratEngine::prepare) (what it pays on each class it
    /// can win) and paid from its slot for the coup's class: the same code that
    /// [`BaccaratEngine::settle_prepared`] runs for a simulation.
    pub fn settle(
        &self,
        placements: &[BaccaratPlacement],
        outcome: &BaccaratOutcome,
    ) -> Result<Vec<Payout>, Refusal> {
        self.check_outcome(outcome)?;
        placements
            .iter()
            .map(|p| {
                let bet = self.prepare_one(p)?;
                bet.payout(self.slot_of(bet.kind, outcome))
            })
            .collect()
    }

    /// Reads placements once for settling many coups ([`BaccaratEngine::settle_prepared`]):
    /// each placement's bet kind, and what it pays on every outcome class it can be paid on,
    /// by the plan's rows with the plan's rounding and held to the row's maximum win (a class
    /// whose payout the plan does not allow keeps its refusal, returned when a coup falls in
    /// it). Refuses a placement the engine would not have made (`inconsistent_placement`).
    pub fn prepare(&self, placements: &[BaccaratPlacement]) -> Result<PreparedBets, Refusal> {
        let bets: Vec<PreparedBet> = placements
            .iter()
            .map(|p| self.prepare_one(p))
            .collect::<Result<_, _>>()?;
        let kinds = bets
            .iter()
            .map(|b| {
                let refused = b
                    .slots
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.refusal.is_some())
                    .fold(0u32, |mask, (slot, _)| mask | 1 << slot);
                (b.kind, refused)
            })
            .collect();
        Ok(PreparedBets { kinds, bets })
    }

    /// Settles prepared bets on a complete coup's outcome without allocating: writes each
    /// bet's settlement slot (0 lose, else 1 + its outcome class; [`PreparedBets::payout`]
    /// turns a slot into the [`Payout`] that [`BaccaratEngine::settle`] returns) into
    /// `slots`, one per bet in order. Refuses as `settle` does: an outcome no coup can have,
    /// a payout above the row's maximum win, a missing payout row.
    ///
    /// Panics when `slots` is not as long as `bets` (a caller's bug, not an input).
    pub fn settle_prepared(
        &self,
        bets: &PreparedBets,
        outcome: &BaccaratOutcome,
        slots: &mut [u8],
    ) -> Result<(), Refusal> {
        assert_eq!(slots.len(), bets.bets.len(), "one slot per prepared bet");
        self.check_outcome(outcome)?;
        for (i, (&(kind, refused), out)) in bets.kinds.iter().zip(slots.iter_mut()).enumerate() {
            let slot = self.slot_of(kind, outcome);
            if refused & (1 << slot) != 0 {
                return bets.bets[i].payout(slot).map(|_| ());
            }
            *out = slot as u8;
        }
        Ok(())
    }

    fn prepare_one(&self, p: &BaccaratPlacement) -> Result<PreparedBet, Refusal> {
        let kind = self.kind_of(p)?;
        let row = self.row(&p.bet_type)?;
        let what = format!("{}{}", p.bet_type, total_label(p.total));
        let lose = || Slot {
            returned_minor: 0,
            win_minor: 0,
            outcome: LOSE,
            refusal: None,
        };
        let refused = |r: Refusal| Slot {
            refusal: Some(Box::new(r)),
            ..lose()
        };
        let mut slots: [Slot; SETTLEMENT_SLOTS] = std::array::from_fn(|_| lose());
        for class in self.classes(kind) {
            slots[class.slot()] =
                match self.payout_row(kind, &p.bet_type, class.name(), &row.clause) {
                    Ok(None) => lose(),
                    Err(r) => refused(r),
                    Ok(Some(payout_row)) => {
                        match super::pay_row_amounts(
                            self.plan,
                            row,
                            payout_row,
                            p.stake_minor,
                            &what,
                        ) {
                            Ok((returned_minor, win_minor)) => Slot {
                                returned_minor,
                                win_minor,
                                outcome: class.name(),
                                refusal: None,
                            },
                            Err(r) => refused(r),
                        }
                    }
                };
        }
        Ok(PreparedBet {
            kind,
            stake_minor: p.stake_minor,
            slots,
        })
    }

    // ----- Exact return -------------------------------------------------------------------

    /// The exact return to player of every bet of the plan (each Egalite total on its own),
    /// from a full shoe, by enumeration with card removal:
    /// - Player, Banker, Tie, Big/Small, Egalite and the bonus bets: every sequence of card
    ///   *points* (0–9, weighted by how many cards of the shoe count so) that the drawing
    ///   rules deal, 4 to 6 cards, over the common denominator `N·(N−1)·…·(N−5)`;
    /// - the pair bets: every sequence of the first four cards by rank and suit, over
    ///   `N·(N−1)·(N−2)·(N−3)`.
    ///
    /// Each enumerated coup is classed by the same functions that settle a bet, and priced by
    /// the plan's rows without rounding: `1 + ratio` per unit on a win, `refund` on a refund.
    pub fn exact_rtp(&self) -> Result<Vec<ExactRtp>, Refusal> {
        let overflow = || {
            Refusal::new(
                code::EXACT_OVERFLOW,
                format!(
                    "the exact return of {} does not fit in 128-bit fractions",
                    self.plan.key()
                ),
            )
        };
        let (points_leaves, points_den) = self.points_distribution().ok_or_else(overflow)?;
        let (pair_leaves, pair_den) = self.pairs_distribution().ok_or_else(overflow)?;
        let mut out = Vec::new();
        for bet in &self.plan.bets {
            let totals: Vec<Option<u8>> = match (&self.rules.egalite_extra, bet.id.as_str()) {
                (Some(eg), EGALITE_BET) => eg.totals.iter().map(|&t| Some(t)).collect(),
                _ => vec![None],
            };
            for total in totals {
                let p = BaccaratPlacement {
                    bet_type: bet.id.clone(),
                    total,
                    stake_minor: 1,
                };
                let kind = self.kind_of(&p)?;
                let (leaves, den) = if kind.is_pair() {
                    (&pair_leaves, pair_den)
                } else {
                    (&points_leaves, points_den)
                };
                let mut classes: BTreeMap<String, u128> = BTreeMap::new();
                let mut rtp = Fraction::ZERO;
                for (o, weight) in leaves {
                    let Some(class) = self.class_of(kind, o) else {
                        continue;
                    };
                    let Some(row) = self.payout_row(kind, &bet.id, class.name(), &bet.clause)?
                    else {
                        continue;
                    };
                    let n = classes.entry(row.outcome.clone()).or_default();
                    *n = n.checked_add(*weight).ok_or_else(overflow)?;
                    let per_unit = match (row.ratio, row.refund) {
                        (Some(r), _) => Fraction::ONE.checked_add(Fraction::from_ratio(r)),
                        (None, Some(r)) => Some(Fraction::from_ratio(r)),
                        (None, None) => Some(Fraction::ZERO),
                    };
                    rtp = per_unit
                        .and_then(|u| u.checked_mul(Fraction::new(*weight, den)?))
                        .and_then(|x| rtp.checked_add(x))
                        .ok_or_else(overflow)?;
                }
                let outcomes = classes
                    .into_iter()
                    .map(|(c, n)| Some((c, Fraction::new(n, den)?)))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(overflow)?;
                out.push(ExactRtp {
                    bet: bet.id.clone(),
                    total,
                    outcomes,
                    rtp,
                });
            }
        }
        Ok(out)
    }

    /// Every coup by card points with its weight (number of ordered card sequences of the
    /// shoe, scaled to the common denominator), aggregated by outcome.
    fn points_distribution(&self) -> Option<(Vec<(BaccaratOutcome, u128)>, u128)> {
        let n = self.shuffle.len as u128;
        let mut counts = [0u32; 10];
        for c in self.shuffle.deck[..self.shuffle.deck_len].iter() {
            counts[usize::from(points(c.rank))] += u32::from(self.rules.shoe.decks);
        }
        // fall[k] = (N−k)·(N−k−1)·…·(N−5): the draws a coup of k cards leaves out.
        let mut fall = [1u128; MAX_COUP_CARDS + 1];
        for k in (0..MAX_COUP_CARDS).rev() {
            fall[k] = fall[k + 1].checked_mul(n - k as u128)?;
        }
        // Keyed by (player total, banker total, naturals, cards − 4).
        let mut acc = [0u128; 10 * 10 * 4 * 3];
        self.walk(Hands::default(), &mut counts, 1, &fall, &mut acc)?;
        let mut leaves = Vec::new();
        for (i, &w) in acc.iter().enumerate().filter(|(_, w)| **w > 0) {
            let (p, b, nat, extra) = (i / 120, (i / 12) % 10, (i / 3) % 4, i % 3);
            // Final totals as one-card hands; naturals and the card count are set below.
            let h = Hands {
                player: [p as u8, 0, 0],
                player_n: 1,
                banker: [b as u8, 0, 0],
                banker_n: 1,
            };
            let mut o = self.read(&h, [false; 4]);
            o.player_natural = nat & 1 != 0;
            o.banker_natural = nat & 2 != 0;
            o.cards_dealt = 4 + extra as u8;
            leaves.push((o, w));
        }
        Some((leaves, fall[0]))
    }

    fn walk(
        &self,
        hands: Hands,
        counts: &mut [u32; 10],
        weight: u128,
        fall: &[u128; MAX_COUP_CARDS + 1],
        acc: &mut [u128; 1200],
    ) -> Option<()> {
        let Some(to) = self.next_position(&hands) else {
            let p = usize::from(hands.total(Hand::Player));
            let b = usize::from(hands.total(Hand::Banker));
            let nat = usize::from(self.table.natural[usize::from(hands.two_card(Hand::Player))])
                | usize::from(self.table.natural[usize::from(hands.two_card(Hand::Banker))]) << 1;
            let key = p * 120 + b * 12 + nat * 3 + (hands.dealt() - 4);
            acc[key] = acc[key].checked_add(weight.checked_mul(fall[hands.dealt()])?)?;
            return Some(());
        };
        for v in 0..10u8 {
            let c = counts[usize::from(v)];
            if c == 0 {
                continue;
            }
            counts[usize::from(v)] -= 1;
            let mut next = hands;
            next.push(to.hand(), v);
            let r = self.walk(next, counts, weight.checked_mul(u128::from(c))?, fall, acc);
            counts[usize::from(v)] += 1;
            r?;
        }
        Some(())
    }

    /// Every first four cards by rank and suit, aggregated by the four pair flags (the other
    /// fields of the outcomes are not read by the pair bets).
    fn pairs_distribution(&self) -> Option<(Vec<(BaccaratOutcome, u128)>, u128)> {
        let kinds = &self.shuffle.deck[..self.shuffle.deck_len];
        let copies = u128::from(self.rules.shoe.decks);
        let n = self.shuffle.len as u128;
        let den = n
            .checked_mul(n - 1)?
            .checked_mul(n - 2)?
            .checked_mul(n - 3)?;
        let Some(pairs) = &self.rules.pairs else {
            return Some((Vec::new(), den));
        };
        // Which of the first four cards (in the plan's initial order) are Player's and which
        // Banker's.
        let mut player_at = [0usize; 2];
        let mut banker_at = [0usize; 2];
        let (mut pn, mut bn) = (0, 0);
        for (i, h) in self.table.initial.iter().enumerate() {
            match h {
                Hand::Player => {
                    player_at[pn] = i;
                    pn += 1;
                }
                Hand::Banker => {
                    banker_at[bn] = i;
                    bn += 1;
                }
            }
        }
        let mut acc = [0u128; 16];
        // A kind already drawn k times among the earlier cards has `copies − k` left.
        let left = |before: &[usize], k: usize| {
            let seen = before.iter().filter(|&&x| x == k).count() as u128;
            copies.saturating_sub(seen)
        };
        // A full shoe holds every kind equally often and a pair is read from equal ranks or
        // equal cards, which no renaming of ranks and suits changes: every first card gives
        // the same counts, so the first card is the first kind, weighted by the number of kinds.
        {
            let a = 0;
            let wa = copies * kinds.len() as u128;
            for b in 0..kinds.len() {
                let wb = wa * left(&[a], b);
                for c in 0..kinds.len() {
                    let wc = wb * left(&[a, b], c);
                    if wc == 0 {
                        continue;
                    }
                    for d in 0..kinds.len() {
                        let w = wc * left(&[a, b, c], d);
                        if w == 0 {
                            continue;
                        }
                        let four = [kinds[a], kinds[b], kinds[c], kinds[d]];
                        let (p1, p2) = (four[player_at[0]], four[player_at[1]]);
                        let (b1, b2) = (four[banker_at[0]], four[banker_at[1]]);
                        let key = usize::from(matches(pairs.pair_match, p1, p2))
                            | usize::from(matches(pairs.pair_match, b1, b2)) << 1
                            | usize::from(matches(pairs.perfect_pair_match, p1, p2)) << 2
                            | usize::from(matches(pairs.perfect_pair_match, b1, b2)) << 3;
                        acc[key] = acc[key].checked_add(w)?;
                    }
                }
            }
        }
        let blank = self.read(&Hands::default(), [false; 4]);
        let leaves = acc
            .iter()
            .enumerate()
            .filter(|(_, w)| **w > 0)
            .map(|(k, &w)| {
                let mut o = blank;
                o.player_pair = k & 1 != 0;
                o.banker_pair = k & 2 != 0;
                o.player_perfect_pair = k & 4 != 0;
                o.banker_perfect_pair = k & 8 != 0;
                (o, w)
            })
            .collect();
        Some((leaves, den))
    }

    // ----- The rules ----------------------------------------------------------------------

    /// Where the rules send the next card, or `None` when the coup is complete: the first four
    /// cards by `initial_deal_order`; nothing more on a natural in either hand; Player's third
    /// card by `player_third_card`; Banker's by `banker_when_player_stood` or, when Player
    /// drew, by the `banker_when_player_drew` row of Banker's total and the points of
    /// Player's third card.
    fn next_position(&self, h: &Hands) -> Option<Position> {
        let dealt = h.dealt();
        if dealt < 4 {
            let hand = self.table.initial[dealt];
            return Some(Position::of(hand, h.count(hand) + 1));
        }
        let p2 = usize::from(h.two_card(Hand::Player));
        let b2 = usize::from(h.two_card(Hand::Banker));
        if self.table.natural[p2] || self.table.natural[b2] {
            return None;
        }
        if h.banker_n != 2 {
            return None;
        }
        if h.player_n == 2 && self.table.player_draws[p2] {
            return Some(Position::Player3);
        }
        let banker_draws = if h.player_n == 3 {
            self.table.banker_draws_player_drew[b2][usize::from(h.player[2])]
        } else {
            self.table.banker_draws_player_stood[b2]
        };
        banker_draws.then_some(Position::Banker3)
    }

    /// Why the rules deal what they deal after `h`, for messages.
    fn why(&self, h: &Hands) -> String {
        if h.dealt() < 4 {
            let order: Vec<&str> = self.table.initial.iter().map(|&x| hand_name(x)).collect();
            return format!("the first four cards go to {}", order.join(", "));
        }
        let (p2, b2) = (h.two_card(Hand::Player), h.two_card(Hand::Banker));
        if self.table.natural[usize::from(p2)] {
            return format!("Player's first two cards make a natural {p2}: no further card");
        }
        if self.table.natural[usize::from(b2)] {
            return format!("Banker's first two cards make a natural {b2}: no further card");
        }
        if h.player_n == 2 && h.banker_n == 2 && self.table.player_draws[usize::from(p2)] {
            return format!("Player draws on {p2}");
        }
        let player = if h.player_n == 3 {
            let third = h.player[2];
            let verb = if self.table.banker_draws_player_drew[usize::from(b2)][usize::from(third)] {
                "draws"
            } else {
                "stands"
            };
            format!("Player's third card counts {third}: Banker with {b2} {verb}")
        } else {
            let verb = if self.table.banker_draws_player_stood[usize::from(b2)] {
                "draws"
            } else {
                "stands"
            };
            format!("Player stands on {p2}: Banker with {b2} {verb}")
        };
        if h.banker_n == 3 {
            format!("{player}; both hands have drawn")
        } else {
            player
        }
    }

    /// `dealt` card by card through [`Self::step`].
    fn replay(&self, dealt: &[BaccaratCard]) -> Result<Hands, Refusal> {
        let mut hands = Hands::default();
        for (i, &c) in dealt.iter().enumerate() {
            self.step(&mut hands, &dealt[..i], c)?;
        }
        Ok(hands)
    }

    fn step(
        &self,
        hands: &mut Hands,
        before: &[BaccaratCard],
        c: BaccaratCard,
    ) -> Result<(), Refusal> {
        let nth = before.len() + 1;
        match self.next_position(hands) {
            None => {
                return Err(Refusal::new(
                    code::DEAL_COMPLETE,
                    format!(
                        "card {nth} ({}, reported to {}) comes after the coup is complete: {}",
                        c.card,
                        c.to,
                        self.why(hands)
                    ),
                )
                .clause(self.rules.clause.clone()))
            }
            Some(to) if to != c.to => {
                return Err(Refusal::new(
                    code::WRONG_POSITION,
                    format!(
                        "card {nth} ({}) was reported to {}, but the rules give it to {to}: {}",
                        c.card,
                        c.to,
                        self.why(hands)
                    ),
                )
                .clause(self.rules.clause.clone()))
            }
            Some(_) => {}
        }
        let copies = self.rules.shoe.copies_of(c.card);
        let seen = before.iter().filter(|x| x.card == c.card).count();
        if seen >= usize::from(copies) {
            return Err(Refusal::new(
                code::NOT_IN_SHOE,
                format!(
                    "card {nth} ({}) would be copy {} of it in the round; the shoe of {} decks holds {copies}",
                    c.card,
                    seen + 1,
                    self.rules.shoe.decks
                ),
            )
            .clause(self.rules.clause.clone()));
        }
        hands.push(c.to.hand(), points(c.card.rank));
        Ok(())
    }

    /// The outcome of complete hands; pairs as given.
    fn read(&self, h: &Hands, [pp, bp, ppp, bpp]: [bool; 4]) -> BaccaratOutcome {
        let p = h.total(Hand::Player);
        let b = h.total(Hand::Banker);
        let (winner, margin) = match p.cmp(&b) {
            std::cmp::Ordering::Greater => (Winner::Player, p - b),
            std::cmp::Ordering::Less => (Winner::Banker, b - p),
            std::cmp::Ordering::Equal => (Winner::Tie, 0),
        };
        BaccaratOutcome {
            player_total: p,
            banker_total: b,
            player_natural: h.player_n >= 2
                && self.table.natural[usize::from(h.two_card(Hand::Player))],
            banker_natural: h.banker_n >= 2
                && self.table.natural[usize::from(h.two_card(Hand::Banker))],
            winner,
            margin,
            cards_dealt: h.dealt() as u8,
            player_pair: pp,
            banker_pair: bp,
            player_perfect_pair: ppp,
            banker_perfect_pair: bpp,
        }
    }

    /// An outcome no coup can have is refused before anything is paid on it.
    fn check_outcome(&self, o: &BaccaratOutcome) -> Result<(), Refusal> {
        let (winner, margin) = match o.player_total.cmp(&o.banker_total) {
            std::cmp::Ordering::Greater => {
                (Winner::Player, o.player_total.wrapping_sub(o.banker_total))
            }
            std::cmp::Ordering::Less => {
                (Winner::Banker, o.banker_total.wrapping_sub(o.player_total))
            }
            std::cmp::Ordering::Equal => (Winner::Tie, 0),
        };
        let ok = o.player_total <= 9
            && o.banker_total <= 9
            && o.winner == winner
            && o.margin == margin
            && (4..=6).contains(&o.cards_dealt);
        if ok {
            Ok(())
        } else {
            Err(Refusal::new(
                code::INCONSISTENT_OUTCOME,
                format!("{} is not the outcome of a coup", super::wire_name(o)),
            ))
        }
    }

    /// The outcome class a bet is paid on, or `None` when it loses.
    #[inline]
    fn class_of(&self, kind: BetKind, o: &BaccaratOutcome) -> Option<Class> {
        let win = |b: bool| b.then_some(Class::WIN);
        match kind {
            BetKind::Player | BetKind::Banker => {
                let side = if kind == BetKind::Player {
                    Winner::Player
                } else {
                    Winner::Banker
                };
                match o.winner {
                    w if w == side => Some(Class::WIN),
                    Winner::Tie => Some(Class::TIE),
                    _ => None,
                }
            }
            BetKind::Tie => win(o.winner == Winner::Tie),
            BetKind::PlayerPair => win(o.player_pair),
            BetKind::BankerPair => win(o.banker_pair),
            // Paid once when both hands pair (the plans' assumptions on any_pair and
            // perfect_pair).
            BetKind::AnyPair => win(o.player_pair || o.banker_pair),
            BetKind::PerfectPair => win(o.player_perfect_pair || o.banker_perfect_pair),
            BetKind::Big => win(self.sides.big(o.cards_dealt)),
            BetKind::Small => win(self.sides.small(o.cards_dealt)),
            BetKind::Egalite(t) => {
                (o.winner == Winner::Tie && o.player_total == t).then(|| Class::tie_n(t))
            }
            BetKind::PlayerBonus | BetKind::BankerBonus => {
                let (side, natural, both_natural) = if kind == BetKind::PlayerBonus {
                    (Winner::Player, o.player_natural, o.banker_natural)
                } else {
                    (Winner::Banker, o.banker_natural, o.player_natural)
                };
                let min_margin = self.sides.bonus_min_margin?;
                match o.winner {
                    Winner::Tie => (natural && both_natural).then_some(Class::NATURAL_TIE),
                    w if w != side => None,
                    _ if natural => Some(Class::NATURAL_WIN),
                    _ if o.margin >= min_margin => Some(Class::win_by(o.margin)),
                    _ => None,
                }
            }
        }
    }

    /// Every class [`BaccaratEngine::class_of`] can give a bet of `kind`: the classes a
    /// prepared bet has a payout for.
    fn classes(&self, kind: BetKind) -> Vec<Class> {
        match kind {
            BetKind::Player | BetKind::Banker => vec![Class::WIN, Class::TIE],
            BetKind::Tie
            | BetKind::PlayerPair
            | BetKind::BankerPair
            | BetKind::AnyPair
            | BetKind::PerfectPair
            | BetKind::Big
            | BetKind::Small => vec![Class::WIN],
            BetKind::Egalite(t) => vec![Class::tie_n(t)],
            BetKind::PlayerBonus | BetKind::BankerBonus => {
                let Some(min_margin) = self.sides.bonus_min_margin else {
                    return Vec::new();
                };
                // A side wins by 1 to 9 points.
                [Class::NATURAL_WIN, Class::NATURAL_TIE]
                    .into_iter()
                    .chain((min_margin.max(1)..=9).map(Class::win_by))
                    .collect()
            }
        }
    }

    /// A bet's settlement slot: 0 when it loses, else 1 + its class.
    #[inline]
    fn slot_of(&self, kind: BetKind, o: &BaccaratOutcome) -> usize {
        self.class_of(kind, o).map_or(0, Class::slot)
    }

    /// The plan's row for `bet`/`class`. A tie on a main bet and a tie of naturals on a bonus
    /// bet lose when the plan has no row for them; any other missing row is an error.
    fn payout_row(
        &self,
        kind: BetKind,
        bet: &str,
        class: &str,
        clause: &str,
    ) -> Result<Option<&'p PayoutRow>, Refusal> {
        let plan: &'p Plan = self.plan;
        let row = plan
            .payouts
            .iter()
            .find(|r| r.bet == bet && r.outcome == class);
        let optional = matches!(
            (kind, class),
            (BetKind::Player | BetKind::Banker, "tie")
                | (BetKind::PlayerBonus | BetKind::BankerBonus, "natural_tie")
        );
        match row {
            Some(r) => Ok(Some(r)),
            None if optional => Ok(None),
            None => Err(Refusal::new(
                code::NO_PAYOUT_ROW,
                format!("{} has no payout row {bet}/{class}", self.plan.key()),
            )
            .clause(clause.to_string())),
        }
    }

    /// The kind of an accepted placement, re-read from the plan so that a placement read back
    /// from storage settles exactly as it was accepted.
    fn kind_of(&self, p: &BaccaratPlacement) -> Result<BetKind, Refusal> {
        let kind = (p.stake_minor > 0 && self.plan.bet(&p.bet_type).is_some())
            .then(|| self.check_total(&p.bet_type, p.total).ok())
            .flatten()
            .and_then(|total| BetKind::of(&p.bet_type, total))
            .filter(|k| self.describes(*k));
        kind.ok_or_else(|| {
            Refusal::new(
                code::INCONSISTENT_PLACEMENT,
                format!(
                    "{}{} with stake {} is not a placement of {}",
                    p.bet_type,
                    total_label(p.total),
                    p.stake_minor,
                    self.plan.key()
                ),
            )
        })
    }

    /// Whether the rules describe the side bet a kind needs (lint guarantees it for offered
    /// bets; checked again so that settlement cannot read a missing rule as a loss).
    fn describes(&self, kind: BetKind) -> bool {
        match kind {
            BetKind::Player | BetKind::Banker | BetKind::Tie => true,
            BetKind::PlayerPair | BetKind::BankerPair | BetKind::AnyPair | BetKind::PerfectPair => {
                self.rules.pairs.is_some()
            }
            BetKind::Big | BetKind::Small => self.rules.big_small.is_some(),
            BetKind::Egalite(_) => self.rules.egalite_extra.is_some(),
            BetKind::PlayerBonus | BetKind::BankerBonus => self.rules.bonus.is_some(),
        }
    }

    /// The `total` of a request on `bet`: required on Egalite Extra and one of the plan's
    /// totals, refused on any other bet.
    fn check_total(&self, bet: &str, total: Option<u8>) -> Result<Option<u8>, Refusal> {
        if bet != EGALITE_BET {
            return match total {
                None => Ok(None),
                Some(_) => Err(Refusal::new(
                    code::UNEXPECTED_FIELD,
                    format!("a '{bet}' bet does not take 'total' (only {EGALITE_BET} does)"),
                )),
            };
        }
        let eg = self
            .rules
            .egalite_extra
            .as_ref()
            .ok_or_else(|| self.not_offered("Egalite Extra"))?;
        let t = total.ok_or_else(|| {
            Refusal::new(
                code::MISSING_FIELD,
                format!("an '{EGALITE_BET}' bet needs 'total', the tie total 0–9 it is on"),
            )
            .clause(eg.clause.clone())
        })?;
        if !eg.totals.contains(&t) {
            return Err(Refusal::new(
                code::NOT_OFFERED,
                format!(
                    "{} offers Egalite Extra on the totals {:?}, not on {t}",
                    self.plan.key(),
                    eg.totals
                ),
            )
            .clause(eg.clause.clone()));
        }
        Ok(Some(t))
    }

    fn row(&self, bet_type: &str) -> Result<&'p BetType, Refusal> {
        self.plan
            .bet(bet_type)
            .ok_or_else(|| self.not_offered(&format!("the bet type '{bet_type}'")))
    }

    fn not_offered(&self, what: &str) -> Refusal {
        Refusal::new(
            code::NOT_OFFERED,
            format!(
                "{} does not offer {what}; it offers {}",
                self.plan.key(),
                self.offered()
            ),
        )
        .clause(self.rules.clause.clone())
    }

    fn offered(&self) -> String {
        let ids: Vec<&str> = self.plan.bets.iter().map(|b| b.id.as_str()).collect();
        ids.join(", ")
    }

    fn money(&self, minor: i64) -> Money {
        Money::new(minor, self.plan.plan.currency)
    }
}

/// The bet types of the baccarat vocabulary, with the Egalite total.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BetKind {
    Player,
    Banker,
    Tie,
    PlayerPair,
    BankerPair,
    AnyPair,
    PerfectPair,
    Big,
    Small,
    Egalite(u8),
    PlayerBonus,
    BankerBonus,
}

impl BetKind {
    fn of(bet: &str, total: Option<u8>) -> Option<BetKind> {
        Some(match (bet, total) {
            ("player", None) => BetKind::Player,
            ("banker", None) => BetKind::Banker,
            ("tie", None) => BetKind::Tie,
            ("player_pair", None) => BetKind::PlayerPair,
            ("banker_pair", None) => BetKind::BankerPair,
            ("any_pair", None) => BetKind::AnyPair,
            ("perfect_pair", None) => BetKind::PerfectPair,
            ("big", None) => BetKind::Big,
            ("small", None) => BetKind::Small,
            (EGALITE_BET, Some(t)) if t <= 9 => BetKind::Egalite(t),
            ("player_bonus", None) => BetKind::PlayerBonus,
            ("banker_bonus", None) => BetKind::BankerBonus,
            _ => return None,
        })
    }

    fn is_pair(self) -> bool {
        matches!(
            self,
            BetKind::PlayerPair | BetKind::BankerPair | BetKind::AnyPair | BetKind::PerfectPair
        )
    }
}

/// The outcome classes of the baccarat payout rows (the `outcome` of a `[[payouts]]` row).
const CLASS_NAMES: [&str; 24] = [
    "win",
    "tie",
    "natural_win",
    "natural_tie",
    "tie_0",
    "tie_1",
    "tie_2",
    "tie_3",
    "tie_4",
    "tie_5",
    "tie_6",
    "tie_7",
    "tie_8",
    "tie_9",
    "win_by_0",
    "win_by_1",
    "win_by_2",
    "win_by_3",
    "win_by_4",
    "win_by_5",
    "win_by_6",
    "win_by_7",
    "win_by_8",
    "win_by_9",
];

/// The outcome of a losing bet's [`Payout`].
const LOSE: &str = "lose";

/// Settlement slots of a prepared bet: 0 for a loss, then one per outcome class (at most 32:
/// a prepared bet marks its refused slots in a `u32`).
pub const SETTLEMENT_SLOTS: usize = 1 + CLASS_NAMES.len();
const _: () = assert!(SETTLEMENT_SLOTS <= 32);

/// An outcome class a bet is paid on: an index into [`CLASS_NAMES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Class(u8);

impl Class {
    const WIN: Class = Class(0);
    const TIE: Class = Class(1);
    const NATURAL_WIN: Class = Class(2);
    const NATURAL_TIE: Class = Class(3);

    /// `tie_0` … `tie_9` (Egalite Extra); `t` ≤ 9.
    fn tie_n(t: u8) -> Class {
        debug_assert!(t <= 9, "a baccarat total is 0–9");
        Class(4 + t)
    }

    /// `win_by_0` … `win_by_9` (the bonus bets); `margin` ≤ 9.
    fn win_by(margin: u8) -> Class {
        debug_assert!(margin <= 9, "a baccarat margin is 0–9");
        Class(14 + margin)
    }

    fn name(self) -> &'static str {
        CLASS_NAMES[usize::from(self.0)]
    }

    fn slot(self) -> usize {
        1 + usize::from(self.0)
    }
}

/// The side bets' rules as lookups built once from the plan: the card counts of Big and
/// Small, and the bonus bets' margin (`None` when the plan describes no side bet of a kind,
/// which then never wins).
#[derive(Debug, Clone, Copy)]
struct SideRules {
    big: [bool; MAX_COUP_CARDS + 1],
    small: [bool; MAX_COUP_CARDS + 1],
    bonus_min_margin: Option<u8>,
}

impl SideRules {
    fn new(r: &BaccaratRules) -> SideRules {
        let mut sides = SideRules {
            big: [false; MAX_COUP_CARDS + 1],
            small: [false; MAX_COUP_CARDS + 1],
            bonus_min_margin: r.bonus.as_ref().map(|b| b.min_margin_without_natural),
        };
        if let Some(bs) = &r.big_small {
            for (counts, flags) in [
                (&bs.big_card_counts, &mut sides.big),
                (&bs.small_card_counts, &mut sides.small),
            ] {
                for &n in counts {
                    if let Some(f) = flags.get_mut(usize::from(n)) {
                        *f = true;
                    }
                }
            }
        }
        sides
    }

    fn big(&self, cards_dealt: u8) -> bool {
        self.big.get(usize::from(cards_dealt)) == Some(&true)
    }

    fn small(&self, cards_dealt: u8) -> bool {
        self.small.get(usize::from(cards_dealt)) == Some(&true)
    }
}

/// What a prepared bet pays in one settlement slot.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Slot {
    returned_minor: i64,
    win_minor: i64,
    /// The class, or `lose`.
    outcome: &'static str,
    /// The plan does not allow this payout (above the maximum win, no row): a coup in this
    /// slot is refused with it.
    refusal: Option<Box<Refusal>>,
}

/// One placement read against the plan ([`BaccaratEngine::prepare`]).
#[derive(Debug, Clone)]
struct PreparedBet {
    kind: BetKind,
    stake_minor: i64,
    slots: [Slot; SETTLEMENT_SLOTS],
}

impl PreparedBet {
    fn payout(&self, slot: usize) -> Result<Payout, Refusal> {
        let s = &self.slots[slot];
        match &s.refusal {
            Some(r) => Err((**r).clone()),
            None => Ok(Payout {
                stake_minor: self.stake_minor,
                returned_minor: s.returned_minor,
                win_minor: s.win_minor,
                outcome: s.outcome.to_string(),
            }),
        }
    }
}

/// Placements read once for settling many coups: [`BaccaratEngine::prepare`],
/// [`BaccaratEngine::settle_prepared`].
#[derive(Debug, Clone)]
pub struct PreparedBets {
    /// Each bet's kind and the mask of its refused slots: all that settling a coup reads,
    /// kept together and small.
    kinds: Vec<(BetKind, u32)>,
    bets: Vec<PreparedBet>,
}

impl PreparedBets {
    /// The number of bets.
    pub fn len(&self) -> usize {
        self.bets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bets.is_empty()
    }

    /// What bet `i` pays in `slot` (as [`BaccaratEngine::settle_prepared`] wrote it): the
    /// [`Payout`] that [`BaccaratEngine::settle`] returns for a coup of that slot, or its
    /// refusal. Panics when `i` or `slot` is out of range.
    pub fn payout(&self, i: usize, slot: usize) -> Result<Payout, Refusal> {
        self.bets[i].payout(slot)
    }
}

fn matches(m: CardMatch, a: Card, b: Card) -> bool {
    match m {
        CardMatch::Rank => a.rank == b.rank,
        CardMatch::RankAndSuit => a == b,
    }
}

fn hand_name(h: Hand) -> &'static str {
    match h {
        Hand::Player => "Player",
        Hand::Banker => "Banker",
    }
}

fn total_label(total: Option<u8>) -> String {
    match total {
        Some(t) => format!(" (total {t})"),
        None => String::new(),
    }
}

/// The sum of the stakes, for the wallet debit; `None` on overflow.
pub fn total_stake_minor(placements: &[BaccaratPlacement]) -> Option<i64> {
    placements
        .iter()
        .try_fold(0i64, |sum, p| sum.checked_add(p.stake_minor))
}

// ----- Exact fractions ----------------------------------------------------------------------

/// An exact non-negative fraction, reduced, for exact returns to player.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Fraction {
    pub numerator: u128,
    pub denominator: u128,
}

impl Fraction {
    pub const ZERO: Fraction = Fraction {
        numerator: 0,
        denominator: 1,
    };
    pub const ONE: Fraction = Fraction {
        numerator: 1,
        denominator: 1,
    };

    /// `None` when `denominator` is 0.
    pub fn new(numerator: u128, denominator: u128) -> Option<Fraction> {
        if denominator == 0 {
            return None;
        }
        let g = gcd128(numerator, denominator);
        Some(Fraction {
            numerator: numerator / g,
            denominator: denominator / g,
        })
    }

    pub fn from_ratio(r: Ratio) -> Fraction {
        Fraction::new(u128::from(r.numerator()), u128::from(r.denominator()))
            .expect("a ratio's denominator is positive")
    }

    pub fn checked_add(self, o: Fraction) -> Option<Fraction> {
        let g = gcd128(self.denominator, o.denominator);
        let den = (self.denominator / g).checked_mul(o.denominator)?;
        let num = self
            .numerator
            .checked_mul(o.denominator / g)?
            .checked_add(o.numerator.checked_mul(self.denominator / g)?)?;
        Fraction::new(num, den)
    }

    pub fn checked_mul(self, o: Fraction) -> Option<Fraction> {
        let g1 = gcd128(self.numerator, o.denominator).max(1);
        let g2 = gcd128(o.numerator, self.denominator).max(1);
        Fraction::new(
            (self.numerator / g1).checked_mul(o.numerator / g2)?,
            (self.denominator / g2).checked_mul(o.denominator / g1)?,
        )
    }

    pub fn to_f64(self) -> f64 {
        self.numerator as f64 / self.denominator as f64
    }

    /// The decimal expansion truncated to `digits` places, e.g. `0.989424`.
    pub fn decimal(self, digits: u32) -> String {
        let whole = self.numerator / self.denominator;
        let mut rest = self.numerator % self.denominator;
        let mut s = format!("{whole}.");
        for _ in 0..digits {
            rest *= 10;
            s.push(char::from(b'0' + (rest / self.denominator) as u8));
            rest %= self.denominator;
        }
        s
    }
}

impl fmt::Display for Fraction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.numerator, self.denominator)
    }
}

fn gcd128(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.max(1)
}

/// The exact return of one bet (one Egalite total) from a full shoe.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExactRtp {
    pub bet: String,
    /// The Egalite Extra total; absent on other bets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u8>,
    /// The probability of each paid outcome class (`win`, `tie`, `win_by_9`, …); the rest
    /// loses.
    pub outcomes: Vec<(String, Fraction)>,
    /// Expected credit per unit staked: Σ P(class) · (1 + ratio) on wins, · refund on refunds.
    pub rtp: Fraction,
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use rand::RngCore;

    use super::*;
    use crate::cards::{DeckKind, Shoe, Suit};
    use crate::plan::registry::load_file;

    const SYNOT: &str = "synot-baccarat";
    const SPEED: &str = "evolution-speed-baccarat";
    const PLANS: [&str; 2] = [SYNOT, SPEED];
    const THIRD_CARD: &str = "Cíl hry a výplaty výher; Pravidla pro třetí kartu";

    fn plan(id: &str) -> Plan {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("game_plans");
        load_file(
            &dir.join(format!("{id}@1.toml")),
            Some(&dir.join("sources")),
        )
        .unwrap_or_else(|f| panic!("{id} loads: {f:?}"))
        .plan
    }

    fn engine(p: &Plan) -> BaccaratEngine<'_> {
        BaccaratEngine::new(p).expect("a baccarat plan")
    }

    fn card(s: &str) -> Card {
        s.parse().expect("a card")
    }

    /// A card of `pts` points (0 → K, 1 → A), of a suit that varies with `salt` so that
    /// test coups do not pair by accident.
    fn pts(pts: u8, salt: usize) -> Card {
        let rank = match pts {
            0 => Rank::King,
            1 => Rank::Ace,
            n => Rank::ALL[usize::from(n) - 2],
        };
        Card::new(rank, Suit::ALL[salt % 4])
    }

    /// Deals `cards` one by one to the positions the engine asks for.
    fn deal(e: &BaccaratEngine, cards: &[Card]) -> Vec<BaccaratCard> {
        let mut dealt = Vec::new();
        for &c in cards {
            let Deal::Card { to } = e.expect_next(&dealt).expect("a valid prefix") else {
                panic!("the coup {dealt:?} is complete before {c}")
            };
            let next = BaccaratCard { to, card: c };
            e.accept_card(&dealt, next)
                .expect("the card the rules asked for");
            dealt.push(next);
        }
        dealt
    }

    fn deal_str(e: &BaccaratEngine, cards: &[&str]) -> Vec<BaccaratCard> {
        deal(e, &cards.iter().map(|s| card(s)).collect::<Vec<_>>())
    }

    fn outcome_of(e: &BaccaratEngine, cards: &[&str]) -> BaccaratOutcome {
        e.outcome(&deal_str(e, cards)).expect("a complete coup")
    }

    /// Whether Banker draws with two cards of `banker` points after Player drew a third card
    /// of `third` points (Player's first two cards make 2).
    fn banker_draws_after_player_drew(e: &BaccaratEngine, banker: u8, third: u8) -> bool {
        let (b1, b2) = if banker == 0 { (0, 0) } else { (0, banker) };
        let dealt = deal(
            e,
            &[pts(0, 0), pts(b1, 1), pts(2, 2), pts(b2, 3), pts(third, 0)],
        );
        assert_eq!(dealt[4].to, Position::Player3);
        match e.expect_next(&dealt).unwrap() {
            Deal::Card { to } => {
                assert_eq!(to, Position::Banker3);
                true
            }
            Deal::Complete => false,
        }
    }

    /// Whether Banker draws on `banker` points when Player stood on 6 or 7.
    fn banker_draws_after_player_stood(e: &BaccaratEngine, player: u8, banker: u8) -> bool {
        let dealt = deal(e, &[pts(0, 0), pts(0, 1), pts(player, 2), pts(banker, 3)]);
        match e.expect_next(&dealt).unwrap() {
            Deal::Card { to } => {
                assert_eq!(to, Position::Banker3);
                true
            }
            Deal::Complete => false,
        }
    }

    fn check_row(banker: u8, draws_on: &[u8]) {
        for id in PLANS {
            let p = plan(id);
            let e = engine(&p);
            for third in 0..=9 {
                assert_eq!(
                    banker_draws_after_player_drew(&e, banker, third),
                    draws_on.contains(&third),
                    "{id}: Banker with {banker}, Player's third card {third}"
                );
            }
        }
    }

    // ----- Dealing order and the third-card rules -------------------------------------------

    #[test]
    fn the_first_four_cards_go_player_banker_player_banker() {
        for id in PLANS {
            let p = plan(id);
            let e = engine(&p);
            let dealt = deal_str(&e, &["2c", "3d", "4h", "5s"]);
            let to: Vec<Position> = dealt.iter().map(|c| c.to).collect();
            assert_eq!(
                to,
                [
                    Position::Player1,
                    Position::Banker1,
                    Position::Player2,
                    Position::Banker2
                ]
            );
            assert_eq!(
                e.expect_next(&[]).unwrap(),
                Deal::Card {
                    to: Position::Player1
                }
            );
        }
    }

    #[test]
    fn a_natural_8_or_9_in_either_hand_stops_the_deal() {
        for id in PLANS {
            let p = plan(id);
            let e = engine(&p);
            // Player 8 (natural) against Banker 0, which would otherwise draw.
            for cards in [
                ["5c", "Kd", "3h", "Qs"], // Player natural 8
                ["4c", "Kd", "5h", "Qs"], // Player natural 9
                ["Kc", "6d", "Qh", "2s"], // Banker natural 8, Player 0 would draw
                ["Kc", "4d", "Qh", "5s"], // Banker natural 9
            ] {
                let dealt = deal_str(&e, &cards);
                assert_eq!(
                    e.expect_next(&dealt).unwrap(),
                    Deal::Complete,
                    "{id} {cards:?}"
                );
                let o = e.outcome(&dealt).unwrap();
                assert!(o.player_natural || o.banker_natural);
                assert_eq!(o.cards_dealt, 4);
            }
        }
    }

    #[test]
    fn player_draws_on_0_to_5() {
        for id in PLANS {
            let p = plan(id);
            let e = engine(&p);
            for total in 0..=5 {
                let dealt = deal(&e, &[pts(0, 0), pts(0, 1), pts(total, 2), pts(7, 3)]);
                assert_eq!(
                    e.expect_next(&dealt).unwrap(),
                    Deal::Card {
                        to: Position::Player3
                    },
                    "{id}: Player on {total}"
                );
            }
        }
    }

    #[test]
    fn player_stands_on_6_or_7() {
        for id in PLANS {
            let p = plan(id);
            let e = engine(&p);
            for total in [6, 7] {
                // Banker 7 stands too: the coup ends with four cards.
                let dealt = deal(&e, &[pts(0, 0), pts(0, 1), pts(total, 2), pts(7, 3)]);
                assert_eq!(e.expect_next(&dealt).unwrap(), Deal::Complete, "{id}");
            }
        }
    }

    #[test]
    fn banker_draws_on_0_to_5_when_player_stood() {
        for id in PLANS {
            let p = plan(id);
            let e = engine(&p);
            for player in [6, 7] {
                for banker in 0..=5 {
                    assert!(banker_draws_after_player_stood(&e, player, banker), "{id}");
                }
            }
        }
    }

    #[test]
    fn banker_stands_on_6_or_7_when_player_stood() {
        for id in PLANS {
            let p = plan(id);
            let e = engine(&p);
            for player in [6, 7] {
                for banker in [6, 7] {
                    assert!(!banker_draws_after_player_stood(&e, player, banker), "{id}");
                }
            }
        }
    }

    #[test]
    fn banker_with_0_1_or_2_always_draws_when_player_drew() {
        for banker in 0..=2 {
            check_row(banker, &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        }
    }

    #[test]
    fn banker_with_3_stands_when_player_third_card_is_8() {
        for id in PLANS {
            let p = plan(id);
            assert!(!banker_draws_after_player_drew(&engine(&p), 3, 8));
        }
    }

    #[test]
    fn banker_with_3_draws_when_player_third_card_is_0_to_7_or_9() {
        check_row(3, &[0, 1, 2, 3, 4, 5, 6, 7, 9]);
    }

    #[test]
    fn banker_with_4_draws_when_player_third_card_is_2_to_7() {
        check_row(4, &[2, 3, 4, 5, 6, 7]);
    }

    #[test]
    fn banker_with_4_stands_when_player_third_card_is_0_1_8_or_9() {
        for id in PLANS {
            let p = plan(id);
            for third in [0, 1, 8, 9] {
                assert!(!banker_draws_after_player_drew(&engine(&p), 4, third));
            }
        }
    }

    #[test]
    fn banker_with_5_draws_when_player_third_card_is_4_to_7() {
        check_row(5, &[4, 5, 6, 7]);
    }

    #[test]
    fn banker_with_5_stands_when_player_third_card_is_0_to_3_8_or_9() {
        for id in PLANS {
            let p = plan(id);
            for third in [0, 1, 2, 3, 8, 9] {
                assert!(!banker_draws_after_player_drew(&engine(&p), 5, third));
            }
        }
    }

    #[test]
    fn banker_with_6_draws_when_player_third_card_is_6_or_7() {
        check_row(6, &[6, 7]);
    }

    #[test]
    fn banker_with_6_stands_when_player_third_card_is_0_to_5_8_or_9() {
        for id in PLANS {
            let p = plan(id);
            for third in [0, 1, 2, 3, 4, 5, 8, 9] {
                assert!(!banker_draws_after_player_drew(&engine(&p), 6, third));
            }
        }
    }

    #[test]
    fn banker_with_7_always_stands_when_player_drew() {
        check_row(7, &[]);
    }

    #[test]
    fn the_coup_ends_after_banker_third_card() {
        let p = plan(SYNOT);
        let e = engine(&p);
        let dealt = deal_str(&e, &["Kc", "Kd", "2h", "3s", "9c", "4d"]);
        assert_eq!(dealt[5].to, Position::Banker3);
        assert_eq!(e.expect_next(&dealt).unwrap(), Deal::Complete);
        let o = e.outcome(&dealt).unwrap();
        assert_eq!((o.player_total, o.banker_total, o.cards_dealt), (1, 7, 6));
    }

    #[test]
    fn third_card_rules_are_read_from_the_plan() {
        let mut p = plan(SYNOT);
        let GameRules::Baccarat(r) = &mut p.rules else {
            unreachable!()
        };
        // A plan whose Banker with 3 also stands on a Player third card of 9.
        r.banker_when_player_drew[1].draws_when_player_third_is = vec![0, 1, 2, 3, 4, 5, 6, 7];
        r.banker_when_player_drew[1].stands_when_player_third_is = vec![8, 9];
        let e = engine(&p);
        assert!(!banker_draws_after_player_drew(&e, 3, 9));
        assert!(banker_draws_after_player_drew(&e, 3, 7));
    }

    #[test]
    fn rules_with_a_gap_in_the_third_card_table_are_refused() {
        let mut p = plan(SYNOT);
        let GameRules::Baccarat(r) = &mut p.rules else {
            unreachable!()
        };
        r.banker_when_player_drew.pop();
        let err = BaccaratEngine::new(&p).unwrap_err();
        assert_eq!(err.code, code::INVALID_RULES);
        assert!(err.message.contains("7 has no rule"), "{}", err.message);
    }

    // ----- Live input that breaks the rules ---------------------------------------------------

    #[test]
    fn a_card_to_the_wrong_position_is_refused_with_the_third_card_clause() {
        let p = plan(SYNOT);
        let e = engine(&p);
        // Player stands on 7; Banker 5 draws: a card reported as Player's third is refused.
        let dealt = deal_str(&e, &["4c", "Kd", "3h", "5s"]);
        let err = e
            .accept_card(
                &dealt,
                BaccaratCard {
                    to: Position::Player3,
                    card: card("9h"),
                },
            )
            .unwrap_err();
        assert_eq!(err.code, code::WRONG_POSITION);
        assert_eq!(err.clause.as_deref(), Some(THIRD_CARD));
        assert!(
            err.message.contains("Banker third card") && err.message.contains("Player stands on 7"),
            "{}",
            err.message
        );
        // The second card of the coup reported to Player.
        let err = e
            .accept_card(
                &dealt[..1],
                BaccaratCard {
                    to: Position::Player2,
                    card: card("9h"),
                },
            )
            .unwrap_err();
        assert_eq!(err.code, code::WRONG_POSITION);
        // A recorded sequence with a wrong card is refused when replayed.
        let mut bad = dealt.clone();
        bad[3].to = Position::Player3;
        assert_eq!(e.expect_next(&bad).unwrap_err().code, code::WRONG_POSITION);
    }

    #[test]
    fn a_third_card_to_player_on_6_is_refused() {
        let p = plan(SPEED);
        let e = engine(&p);
        let dealt = deal_str(&e, &["6c", "Kd", "Kh", "7s"]);
        let err = e
            .accept_card(
                &dealt,
                BaccaratCard {
                    to: Position::Player3,
                    card: card("2h"),
                },
            )
            .unwrap_err();
        // Player 6 and Banker 7 both stand: the coup is complete.
        assert_eq!(err.code, code::DEAL_COMPLETE);
        assert!(
            err.message.contains("Banker with 7 stands"),
            "{}",
            err.message
        );
    }

    #[test]
    fn a_card_after_a_natural_is_refused() {
        let p = plan(SYNOT);
        let e = engine(&p);
        let dealt = deal_str(&e, &["9c", "Kd", "Kh", "2s"]);
        let err = e
            .accept_card(
                &dealt,
                BaccaratCard {
                    to: Position::Banker3,
                    card: card("2h"),
                },
            )
            .unwrap_err();
        assert_eq!(err.code, code::DEAL_COMPLETE);
        assert!(err.message.contains("natural 9"), "{}", err.message);
    }

    #[test]
    fn a_card_the_shoe_cannot_hold_is_refused() {
        let mut p = plan(SYNOT);
        let GameRules::Baccarat(r) = &mut p.rules else {
            unreachable!()
        };
        r.shoe = Shoe::new(DeckKind::Standard52, 1);
        let e = engine(&p);
        let dealt = deal_str(&e, &["Kc"]);
        let err = e
            .accept_card(
                &dealt,
                BaccaratCard {
                    to: Position::Banker1,
                    card: card("Kc"),
                },
            )
            .unwrap_err();
        assert_eq!(err.code, code::NOT_IN_SHOE);
    }

    #[test]
    fn an_unfinished_coup_has_no_outcome() {
        let p = plan(SYNOT);
        let e = engine(&p);
        let dealt = deal_str(&e, &["Kc", "Kd", "2h", "3s"]);
        let err = e.outcome(&dealt).unwrap_err();
        assert_eq!(err.code, code::DEAL_INCOMPLETE);
        assert!(err.message.contains("Player third card"), "{}", err.message);
    }

    // ----- Bets and limits ----------------------------------------------------------------------

    fn req(v: serde_json::Value) -> BaccaratBetRequest {
        serde_json::from_value(v).expect("a well-formed request")
    }

    fn place(e: &BaccaratEngine, v: serde_json::Value) -> BaccaratPlacement {
        e.place(&req(v.clone()))
            .unwrap_or_else(|x| panic!("{v} is accepted: {x}"))
    }

    fn refused(e: &BaccaratEngine, v: serde_json::Value) -> Refusal {
        e.place(&req(v.clone()))
            .expect_err(&format!("{v} is refused"))
    }

    #[test]
    fn documented_request_examples_are_accepted() {
        let p = plan(SYNOT);
        let e = engine(&p);
        let b = place(&e, json!({"bet": "banker", "stake_minor": 1000}));
        assert_eq!((b.bet_type.as_str(), b.total), ("banker", None));
        let eg = place(
            &e,
            json!({"bet": "egalite_extra", "total": 6, "stake_minor": 200}),
        );
        assert_eq!(eg.total, Some(6));
    }

    #[test]
    fn requests_the_plan_does_not_take_are_refused_with_a_stable_code() {
        let synot = plan(SYNOT);
        let speed = plan(SPEED);
        let (s, e) = (engine(&synot), engine(&speed));
        let cases = [
            (
                &e,
                json!({"bet": "big", "stake_minor": 1000}),
                code::NOT_OFFERED,
            ),
            (
                &e,
                json!({"bet": "egalite_extra", "total": 1, "stake_minor": 1000}),
                code::NOT_OFFERED,
            ),
            (
                &s,
                json!({"bet": "player_bonus", "stake_minor": 1000}),
                code::NOT_OFFERED,
            ),
            (
                &s,
                json!({"bet": "dragon", "stake_minor": 1000}),
                code::UNKNOWN_BET_TYPE,
            ),
            (
                &s,
                json!({"bet": "egalite_extra", "stake_minor": 1000}),
                code::MISSING_FIELD,
            ),
            (
                &s,
                json!({"bet": "egalite_extra", "total": 10, "stake_minor": 1000}),
                code::NOT_OFFERED,
            ),
            (
                &s,
                json!({"bet": "player", "total": 3, "stake_minor": 1000}),
                code::UNEXPECTED_FIELD,
            ),
            (
                &s,
                json!({"bet": "player", "stake_minor": 0}),
                code::BAD_STAKE,
            ),
            (
                &s,
                json!({"bet": "player", "stake_minor": -100}),
                code::BAD_STAKE,
            ),
        ];
        for (eng, v, want) in cases {
            assert_eq!(refused(eng, v.clone()).code, want, "{v}");
        }
        assert!(serde_json::from_value::<BaccaratBetRequest>(
            json!({"bet": "player", "stake_minor": 100, "side": 1})
        )
        .is_err());
    }

    #[test]
    fn stakes_below_min_or_above_max_are_refused_with_the_limits_clause() {
        for id in PLANS {
            let p = plan(id);
            let e = engine(&p);
            for row in &p.bets {
                let total = (row.id == EGALITE_BET).then_some(0);
                let at = |stake: i64| json!({"bet": row.id, "total": total, "stake_minor": stake});
                place(&e, at(row.min_bet));
                place(&e, at(row.max_bet));
                for (stake, want) in [
                    (row.min_bet - 1, code::BELOW_MIN_BET),
                    (row.max_bet + 1, code::ABOVE_MAX_BET),
                ] {
                    let r = refused(&e, at(stake));
                    assert_eq!(r.code, want, "{id} {}", row.id);
                    assert_eq!(r.clause.as_deref(), Some(row.clause.as_str()));
                }
            }
        }
    }

    #[test]
    fn side_bets_need_a_main_bet_of_the_same_player_in_the_round() {
        for id in PLANS {
            let p = plan(id);
            let e = engine(&p);
            let pair = place(&e, json!({"bet": "player_pair", "stake_minor": 1000}));
            let err = e.check_round(&[], std::slice::from_ref(&pair)).unwrap_err();
            assert_eq!(err.code, code::REQUIRES_MAIN_BET);
            assert!(
                err.message.contains("player or banker or tie"),
                "{}",
                err.message
            );
            for main in ["player", "banker", "tie"] {
                let m = place(&e, json!({"bet": main, "stake_minor": 1000}));
                // A main bet placed earlier in the round, or in the same request batch.
                e.check_round(&[&m], std::slice::from_ref(&pair)).unwrap();
                e.check_round(&[], &[m.clone(), pair.clone()]).unwrap();
            }
            // A side bet does not satisfy another side bet.
            let any = place(&e, json!({"bet": "any_pair", "stake_minor": 1000}));
            assert_eq!(
                e.check_round(&[&any], &[pair]).unwrap_err().code,
                code::REQUIRES_MAIN_BET
            );
        }
    }

    #[test]
    fn cumulative_stake_on_one_bet_is_held_to_its_max_bet() {
        let p = plan(SYNOT);
        let e = engine(&p);
        let banker = |s: i64| place(&e, json!({"bet": "banker", "stake_minor": s}));
        e.check_round(&[&banker(6_000_000)], &[banker(4_000_000)])
            .unwrap();
        let err = e
            .check_round(&[&banker(6_000_000)], &[banker(4_000_001)])
            .unwrap_err();
        assert_eq!(err.code, code::ABOVE_MAX_BET);
        assert!(
            err.message.contains("60 000,00 CZK already placed"),
            "{}",
            err.message
        );
        // Each Egalite total is a bet of its own, held to the row's limit on its own.
        let eg = |t: u8, s: i64| {
            place(
                &e,
                json!({"bet": "egalite_extra", "total": t, "stake_minor": s}),
            )
        };
        let main = banker(1000);
        e.check_round(&[&main, &eg(6, 100_000)], &[eg(7, 100_000)])
            .unwrap();
        assert_eq!(
            e.check_round(&[&main, &eg(6, 100_000)], &[eg(6, 100)])
                .unwrap_err()
                .code,
            code::ABOVE_MAX_BET
        );
    }

    // ----- Settlement -------------------------------------------------------------------------

    fn settle_one(e: &BaccaratEngine, bet: serde_json::Value, o: &BaccaratOutcome) -> Payout {
        let pl = place(e, bet);
        e.settle(&[pl], o).expect("settles").remove(0)
    }

    fn win(stake: i64, win: i64, outcome: &str) -> Payout {
        Payout {
            stake_minor: stake,
            returned_minor: stake,
            win_minor: win,
            outcome: outcome.into(),
        }
    }

    fn refund(stake: i64, returned: i64, outcome: &str) -> Payout {
        Payout {
            stake_minor: stake,
            returned_minor: returned,
            win_minor: 0,
            outcome: outcome.into(),
        }
    }

    #[test]
    fn player_pays_1_to_1_and_banker_0_95_to_1() {
        for id in PLANS {
            let p = plan(id);
            let e = engine(&p);
            // Player natural 9 against Banker 7.
            let o = outcome_of(&e, &["9c", "7d", "Kh", "Ks"]);
            assert_eq!(o.winner, Winner::Player);
            let bet = |b: &str| json!({"bet": b, "stake_minor": 10_000});
            assert_eq!(
                settle_one(&e, bet("player"), &o),
                win(10_000, 10_000, "win")
            );
            assert_eq!(settle_one(&e, bet("banker"), &o), Payout::lose(10_000));
            assert_eq!(settle_one(&e, bet("tie"), &o), Payout::lose(10_000));
            // Banker 7 against Player 6.
            let o = outcome_of(&e, &["6c", "7d", "Kh", "Ks"]);
            assert_eq!(o.winner, Winner::Banker);
            assert_eq!(settle_one(&e, bet("banker"), &o), win(10_000, 9_500, "win"));
            assert_eq!(settle_one(&e, bet("player"), &o), Payout::lose(10_000));
        }
    }

    #[test]
    fn banker_0_95_to_1_rounds_down_on_odd_stakes() {
        for id in PLANS {
            let p = plan(id);
            assert_eq!(p.plan.rounding, crate::money::Rounding::Down);
            let e = engine(&p);
            let o = outcome_of(&e, &["6c", "7d", "Kh", "Ks"]);
            for (stake, won) in [
                (101, 95),
                (105, 99),
                (1_999, 1_899),
                (10_000_000, 9_500_000),
            ] {
                let pay = settle_one(&e, json!({"bet": "banker", "stake_minor": stake}), &o);
                assert_eq!(pay, win(stake, won, "win"), "{id}: {stake}");
            }
        }
    }

    #[test]
    fn a_tie_returns_the_player_and_banker_bets_and_pays_tie_8_to_1() {
        for id in PLANS {
            let p = plan(id);
            let e = engine(&p);
            // Player 7 stands, Banker 7 stands.
            let o = outcome_of(&e, &["4c", "5d", "3h", "2s"]);
            assert_eq!((o.winner, o.player_total), (Winner::Tie, 7));
            for main in ["player", "banker"] {
                let pay = settle_one(&e, json!({"bet": main, "stake_minor": 10_001}), &o);
                assert_eq!(pay, refund(10_001, 10_001, "tie"), "{id} {main}");
            }
            let pay = settle_one(&e, json!({"bet": "tie", "stake_minor": 10_000}), &o);
            assert_eq!(pay, win(10_000, 80_000, "win"));
        }
    }

    #[test]
    fn player_and_banker_pair_pay_11_to_1_on_the_first_two_cards_of_the_same_rank() {
        for id in PLANS {
            let p = plan(id);
            let e = engine(&p);
            let bet = |b: &str| json!({"bet": b, "stake_minor": 1000});
            // Player K♥ K♦: a pair (0 points, draws 9); Banker 5 2 = 7 stands.
            let o = outcome_of(&e, &["Kh", "5c", "Kd", "2s", "9s"]);
            assert!(o.player_pair && !o.banker_pair && !o.player_perfect_pair);
            assert_eq!(
                settle_one(&e, bet("player_pair"), &o),
                win(1000, 11_000, "win")
            );
            assert_eq!(settle_one(&e, bet("banker_pair"), &o), Payout::lose(1000));
            // K and Q both count 0 but are no pair.
            let o = outcome_of(&e, &["Kh", "5c", "Qh", "2s", "9s"]);
            assert!(!o.player_pair);
            assert_eq!(settle_one(&e, bet("player_pair"), &o), Payout::lose(1000));
            // A third card of the same rank does not make a pair: only the first two count.
            let o = outcome_of(&e, &["Kh", "5c", "2d", "2s", "Kd"]);
            assert!(!o.player_pair);
            // Banker 5 5.
            let o = outcome_of(&e, &["Kh", "5c", "2d", "5s", "9d", "3c"]);
            assert!(o.banker_pair && !o.player_pair);
            assert_eq!(
                settle_one(&e, bet("banker_pair"), &o),
                win(1000, 11_000, "win")
            );
        }
    }

    #[test]
    fn any_pair_pays_5_to_1_once_when_either_or_both_hands_pair() {
        for id in PLANS {
            let p = plan(id);
            let e = engine(&p);
            let bet = json!({"bet": "any_pair", "stake_minor": 1000});
            let player_only = outcome_of(&e, &["Kh", "5c", "Kd", "2s", "9s"]);
            let both = outcome_of(&e, &["Kh", "5c", "Kd", "5d", "9s", "3c"]);
            assert!(both.player_pair && both.banker_pair);
            let none = outcome_of(&e, &["Kh", "5c", "Qd", "2s", "9s"]);
            for o in [player_only, both] {
                assert_eq!(settle_one(&e, bet.clone(), &o), win(1000, 5000, "win"));
            }
            assert_eq!(settle_one(&e, bet, &none), Payout::lose(1000));
        }
    }

    #[test]
    fn perfect_pair_needs_the_same_rank_and_suit_and_pays_25_to_1_once() {
        for id in PLANS {
            let p = plan(id);
            let e = engine(&p);
            let bet = json!({"bet": "perfect_pair", "stake_minor": 1000});
            let suited = outcome_of(&e, &["Kh", "5c", "Kh", "2s", "9s"]);
            assert!(suited.player_perfect_pair && suited.player_pair);
            assert_eq!(
                settle_one(&e, bet.clone(), &suited),
                win(1000, 25_000, "win")
            );
            let both = outcome_of(&e, &["Kh", "5c", "Kh", "5c", "9s", "3c"]);
            assert!(both.player_perfect_pair && both.banker_perfect_pair);
            assert_eq!(settle_one(&e, bet.clone(), &both), win(1000, 25_000, "win"));
            let unsuited = outcome_of(&e, &["Kh", "5c", "Kd", "2s", "9s"]);
            assert_eq!(settle_one(&e, bet, &unsuited), Payout::lose(1000));
        }
    }

    #[test]
    fn big_wins_on_5_or_6_cards_and_small_on_4() {
        let p = plan(SYNOT);
        let e = engine(&p);
        let four = outcome_of(&e, &["4c", "5d", "3h", "2s"]);
        let five = outcome_of(&e, &["Kh", "5c", "Kd", "2s", "9s"]);
        let six = outcome_of(&e, &["Kc", "Kd", "2h", "3s", "9c", "4d"]);
        let big = json!({"bet": "big", "stake_minor": 10_001});
        let small = json!({"bet": "small", "stake_minor": 10_001});
        // 0.54:1 and 1.5:1 rounded down: 5 400,54 → 5 400; 15 001,5 → 15 001.
        assert_eq!(
            settle_one(&e, big.clone(), &five),
            win(10_001, 5_400, "win")
        );
        assert_eq!(settle_one(&e, big.clone(), &six), win(10_001, 5_400, "win"));
        assert_eq!(settle_one(&e, big, &four), Payout::lose(10_001));
        assert_eq!(
            settle_one(&e, small.clone(), &four),
            win(10_001, 15_001, "win")
        );
        assert_eq!(settle_one(&e, small.clone(), &five), Payout::lose(10_001));
        assert_eq!(settle_one(&e, small, &six), Payout::lose(10_001));
    }

    #[test]
    fn egalite_extra_pays_only_a_tie_on_the_chosen_total() {
        let p = plan(SYNOT);
        let e = engine(&p);
        let tie7 = outcome_of(&e, &["4c", "5d", "3h", "2s"]);
        let eg = |t: u8| json!({"bet": "egalite_extra", "total": t, "stake_minor": 1000});
        assert_eq!(settle_one(&e, eg(7), &tie7), win(1000, 45_000, "tie_7"));
        assert_eq!(settle_one(&e, eg(6), &tie7), Payout::lose(1000));
        // Egalite 2, the best row, 220:1: Player 2 (K 2, draws K), Banker 2 (K 2, draws K).
        let tie2 = outcome_of(&e, &["Kc", "Kd", "2h", "2s", "Kh", "Ks"]);
        assert_eq!((tie2.winner, tie2.player_total), (Winner::Tie, 2));
        assert_eq!(settle_one(&e, eg(2), &tie2), win(1000, 220_000, "tie_2"));
        let player_wins = outcome_of(&e, &["9c", "7d", "Kh", "Ks"]);
        assert_eq!(settle_one(&e, eg(9), &player_wins), Payout::lose(1000));
    }

    #[test]
    fn player_bonus_pays_a_natural_win_1_to_1_and_margins_of_4_or_more_by_the_table() {
        let p = plan(SPEED);
        let e = engine(&p);
        let pb = json!({"bet": "player_bonus", "stake_minor": 1000});
        let bb = json!({"bet": "banker_bonus", "stake_minor": 1000});
        // Natural 9 against 7: natural_win whatever the margin.
        let o = outcome_of(&e, &["9c", "7d", "Kh", "Ks"]);
        assert_eq!(
            settle_one(&e, pb.clone(), &o),
            win(1000, 1000, "natural_win")
        );
        assert_eq!(settle_one(&e, bb.clone(), &o), Payout::lose(1000));
        // Natural 8 against natural 8: the stake comes back.
        let o = outcome_of(&e, &["8c", "8d", "Kh", "Ks"]);
        assert_eq!(
            settle_one(&e, pb.clone(), &o),
            refund(1000, 1000, "natural_tie")
        );
        assert_eq!(
            settle_one(&e, bb.clone(), &o),
            refund(1000, 1000, "natural_tie")
        );
        // A tie without naturals loses.
        let o = outcome_of(&e, &["4c", "5d", "3h", "2s"]);
        assert_eq!(settle_one(&e, pb.clone(), &o), Payout::lose(1000));
        // Player 9 (K K 9) against Banker 0 (K K Q): a win by 9 without a natural, 30:1.
        let o = outcome_of(&e, &["Kh", "Kc", "Kd", "Ks", "9h", "Qh"]);
        assert_eq!((o.margin, o.player_natural), (9, false));
        assert_eq!(
            settle_one(&e, pb.clone(), &o),
            win(1000, 30_000, "win_by_9")
        );
        // Player 7 stands; Banker 3 draws K: a win by 4, 1:1.
        let o = outcome_of(&e, &["4h", "Kc", "3d", "3s", "Kh"]);
        assert_eq!(o.margin, 4);
        assert_eq!(settle_one(&e, pb.clone(), &o), win(1000, 1000, "win_by_4"));
        // Player 7 against Banker 4: a win by 3 loses the bonus.
        let o = outcome_of(&e, &["4h", "Kc", "3d", "4s", "Kh"]);
        assert_eq!((o.winner, o.margin), (Winner::Player, 3));
        assert_eq!(settle_one(&e, pb, &o), Payout::lose(1000));
    }

    #[test]
    fn banker_bonus_pays_banker_margins_by_the_table() {
        let p = plan(SPEED);
        let e = engine(&p);
        let bb = json!({"bet": "banker_bonus", "stake_minor": 1000});
        // Player K K A = 1; Banker 6 stands on a Player third card of 1: Banker by 5, 2:1.
        let o = outcome_of(&e, &["Kd", "6c", "Kh", "Ks", "Ah"]);
        assert_eq!((o.winner, o.margin), (Winner::Banker, 5));
        assert_eq!(settle_one(&e, bb.clone(), &o), win(1000, 2000, "win_by_5"));
        // Player K K K = 0; Banker 6 or 7 stands, Banker K 2 draws to 8 or 9.
        let cases: [(&[&str], u8, i64); 4] = [
            (&["Kd", "Kc", "Kh", "6s", "Ks"], 6, 4_000),
            (&["Kd", "Kc", "Kh", "7s", "Ks"], 7, 6_000),
            (&["Kd", "Kc", "Kh", "2s", "Ks", "6h"], 8, 10_000),
            (&["Kd", "Kc", "Kh", "2s", "Ks", "7h"], 9, 30_000),
        ];
        for (cards, margin, won) in cases {
            let o = outcome_of(&e, cards);
            assert_eq!(
                (o.winner, o.margin, o.banker_natural),
                (Winner::Banker, margin, false)
            );
            let want = format!("win_by_{margin}");
            assert_eq!(settle_one(&e, bb.clone(), &o), win(1000, won, &want));
        }
    }

    #[test]
    fn a_win_above_the_plans_max_win_is_an_error_not_capped() {
        let mut p = plan(SYNOT);
        p.bets.iter_mut().find(|b| b.id == "tie").unwrap().max_win = 7_999;
        let e = engine(&p);
        let o = outcome_of(&e, &["4c", "5d", "3h", "2s"]);
        let pl = place(&e, json!({"bet": "tie", "stake_minor": 1000}));
        let err = e.settle(&[pl], &o).unwrap_err();
        assert_eq!(err.code, code::MAX_WIN_EXCEEDED);
        assert_eq!(
            err.clause.as_deref(),
            Some("Tabulka nejvyšších sázek a odvislých nejvyšších výher")
        );
    }

    #[test]
    fn every_bets_max_stake_wins_at_most_its_max_win() {
        // Each bet at its maximum stake on its best outcome settles within the row's limits.
        for id in PLANS {
            let p = plan(id);
            let e = engine(&p);
            let best = |bet: &str| {
                let cards: &[&str] = match bet {
                    "player" | "player_bonus" => &["Kh", "Kc", "Kd", "Ks", "9h", "Qh"],
                    "banker" | "banker_bonus" => &["Kd", "Kc", "Kh", "2s", "Ks", "7h"],
                    "tie" | "small" => &["4c", "5d", "3h", "2s"],
                    "egalite_extra" => &["Kc", "Kd", "2h", "2s", "Kh", "Ks"],
                    "big" => &["Kh", "5c", "Kd", "2s", "9s"],
                    _ => &["Kh", "5c", "Kh", "5c", "9s", "3c"],
                };
                outcome_of(&e, cards)
            };
            for row in &p.bets {
                let total = (row.id == EGALITE_BET).then_some(2);
                let pl = place(
                    &e,
                    json!({"bet": row.id, "total": total, "stake_minor": row.max_bet}),
                );
                let pay = e.settle(&[pl], &best(&row.id)).unwrap().remove(0);
                assert!(pay.win_minor > 0, "{id} {}: {pay:?}", row.id);
                assert!(
                    pay.win_minor <= row.max_win && pay.total_minor() <= row.max_win_plus_stake
                );
            }
        }
    }

    #[test]
    fn settlement_refuses_placements_and_outcomes_the_engine_would_not_make() {
        let p = plan(SPEED);
        let e = engine(&p);
        let o = outcome_of(&e, &["4c", "5d", "3h", "2s"]);
        for bad in [
            BaccaratPlacement {
                bet_type: "big".into(),
                total: None,
                stake_minor: 100,
            },
            BaccaratPlacement {
                bet_type: "player".into(),
                total: Some(3),
                stake_minor: 100,
            },
            BaccaratPlacement {
                bet_type: "player".into(),
                total: None,
                stake_minor: 0,
            },
        ] {
            assert_eq!(
                e.settle(&[bad], &o).unwrap_err().code,
                code::INCONSISTENT_PLACEMENT
            );
        }
        let mut wrong = o;
        wrong.winner = Winner::Player;
        let pl = place(&e, json!({"bet": "player", "stake_minor": 100}));
        assert_eq!(
            e.settle(&[pl], &wrong).unwrap_err().code,
            code::INCONSISTENT_OUTCOME
        );
    }

    /// Every placement a plan accepts: each bet type (each Egalite total) at its minimum, an
    /// odd stake (for the rounding) and its maximum stake.
    fn every_placement(e: &BaccaratEngine, p: &Plan) -> Vec<BaccaratPlacement> {
        let mut out = Vec::new();
        for row in &p.bets {
            let totals: Vec<Option<u8>> = if row.id == EGALITE_BET {
                (0..=9).map(Some).collect()
            } else {
                vec![None]
            };
            for total in totals {
                for stake in [row.min_bet, row.min_bet + 37, row.max_bet] {
                    let req = BaccaratBetRequest {
                        bet: row.id.clone(),
                        total,
                        stake_minor: stake,
                    };
                    out.push(e.place(&req).expect("a stake within the limits"));
                }
            }
        }
        out
    }

    /// Every outcome a coup can have (and some no coup of a given plan has, which settle
    /// alike): totals, naturals, card count and the four pair flags.
    fn every_outcome() -> Vec<BaccaratOutcome> {
        let mut out = Vec::new();
        for p in 0..=9u8 {
            for b in 0..=9u8 {
                for nat in 0..4u8 {
                    for cards in 4..=6u8 {
                        for pairs in 0..16u8 {
                            let (winner, margin) = match p.cmp(&b) {
                                std::cmp::Ordering::Greater => (Winner::Player, p - b),
                                std::cmp::Ordering::Less => (Winner::Banker, b - p),
                                std::cmp::Ordering::Equal => (Winner::Tie, 0),
                            };
                            out.push(BaccaratOutcome {
                                player_total: p,
                                banker_total: b,
                                player_natural: nat & 1 != 0,
                                banker_natural: nat & 2 != 0,
                                winner,
                                margin,
                                cards_dealt: cards,
                                player_pair: pairs & 1 != 0,
                                banker_pair: pairs & 2 != 0,
                                player_perfect_pair: pairs & 4 != 0,
                                banker_perfect_pair: pairs & 8 != 0,
                            });
                        }
                    }
                }
            }
        }
        out
    }

    /// A bet settled the direct way, as the engine did before prepared settlement: the class,
    /// the plan's row looked up by its name, and the row paid by `pay_row`.
    fn settle_by_row_lookup(
        e: &BaccaratEngine,
        p: &BaccaratPlacement,
        o: &BaccaratOutcome,
    ) -> Result<Payout, Refusal> {
        let kind = e.kind_of(p)?;
        let row = e.row(&p.bet_type)?;
        let Some(class) = e.class_of(kind, o) else {
            return Ok(Payout::lose(p.stake_minor));
        };
        let Some(payout_row) = e.payout_row(kind, &p.bet_type, class.name(), &row.clause)? else {
            return Ok(Payout::lose(p.stake_minor));
        };
        let what = format!("{}{}", p.bet_type, total_label(p.total));
        crate::games::pay_row(e.plan, row, payout_row, p.stake_minor, &what)
    }

    #[test]
    fn prepared_settlement_pays_what_settle_pays_on_every_outcome() {
        // The simulation's path (prepare once, settle_prepared per coup) and the service's
        // (settle) agree with each other and with a plain row lookup, for every bet at three
        // stakes on every outcome: the same amounts, the same outcome class names.
        for id in PLANS {
            let p = plan(id);
            let e = engine(&p);
            let placements = every_placement(&e, &p);
            let prepared = e.prepare(&placements).expect("the plan's own placements");
            let mut slots = vec![0u8; placements.len()];
            let mut paid_classes = std::collections::BTreeSet::new();
            for o in every_outcome() {
                let settled = e
                    .settle(&placements, &o)
                    .expect("every payout within max_win");
                e.settle_prepared(&prepared, &o, &mut slots)
                    .expect("every payout within max_win");
                for (i, pl) in placements.iter().enumerate() {
                    let fast = prepared.payout(i, usize::from(slots[i])).unwrap();
                    assert_eq!(fast, settled[i], "{id} {pl:?} on {o:?}");
                    assert_eq!(
                        settle_by_row_lookup(&e, pl, &o).unwrap(),
                        settled[i],
                        "{id} {pl:?} on {o:?}"
                    );
                    // A prepared bet has a payout for every class it can be paid on.
                    let kind = e.kind_of(pl).unwrap();
                    if let Some(c) = e.class_of(kind, &o) {
                        assert!(e.classes(kind).contains(&c), "{id} {kind:?}: {c:?}");
                    }
                    paid_classes.insert(settled[i].outcome.clone());
                }
            }
            // Every row of the plan's payout table was paid somewhere.
            for row in &p.payouts {
                assert!(paid_classes.contains(&row.outcome), "{id}: {}", row.outcome);
            }
        }
    }

    #[test]
    fn prepared_settlement_of_seeded_coups_matches_settle() {
        for id in PLANS {
            let p = plan(id);
            let e = engine(&p);
            let placements = every_placement(&e, &p);
            let prepared = e.prepare(&placements).unwrap();
            let mut slots = vec![0u8; placements.len()];
            let mut rng = crate::rng::stream(seed(11));
            for _ in 0..3000 {
                let coup = e.deal_coup_from(&mut rng);
                let o = e.coup_outcome(&coup);
                assert_eq!(o, e.outcome(coup.as_slice()).unwrap());
                let settled = e.settle(&placements, &o).unwrap();
                e.settle_prepared(&prepared, &o, &mut slots).unwrap();
                for (i, want) in settled.iter().enumerate() {
                    assert_eq!(&prepared.payout(i, usize::from(slots[i])).unwrap(), want);
                }
            }
        }
    }

    #[test]
    fn prepared_settlement_refuses_a_win_above_max_win_only_when_it_is_won() {
        let mut p = plan(SYNOT);
        p.bets.iter_mut().find(|b| b.id == "tie").unwrap().max_win = 7_999;
        let e = engine(&p);
        let pl = place(&e, json!({"bet": "tie", "stake_minor": 1000}));
        // Preparing does not refuse: a tie bet that loses pays nothing above the limit.
        let prepared = e.prepare(std::slice::from_ref(&pl)).unwrap();
        let mut slots = [0u8];
        let player_wins = outcome_of(&e, &["9c", "7d", "Kh", "Ks"]);
        e.settle_prepared(&prepared, &player_wins, &mut slots)
            .unwrap();
        assert_eq!(
            prepared.payout(0, usize::from(slots[0])).unwrap(),
            Payout::lose(1000)
        );
        let tie = outcome_of(&e, &["4c", "5d", "3h", "2s"]);
        let err = e.settle_prepared(&prepared, &tie, &mut slots).unwrap_err();
        assert_eq!(err.code, code::MAX_WIN_EXCEEDED);
        assert_eq!(err, e.settle(&[pl], &tie).unwrap_err());
        let mut wrong = tie;
        wrong.winner = Winner::Player;
        assert_eq!(
            e.settle_prepared(&prepared, &wrong, &mut slots)
                .unwrap_err()
                .code,
            code::INCONSISTENT_OUTCOME
        );
    }

    #[test]
    fn placements_coups_and_outcomes_round_trip_through_json() {
        let p = plan(SYNOT);
        let e = engine(&p);
        let pl = place(
            &e,
            json!({"bet": "egalite_extra", "total": 7, "stake_minor": 1000}),
        );
        let back: BaccaratPlacement =
            serde_json::from_str(&serde_json::to_string(&pl).unwrap()).unwrap();
        assert_eq!(back, pl);
        let dealt = deal_str(&e, &["4c", "5d", "3h", "2s"]);
        let text = serde_json::to_string(&dealt).unwrap();
        assert!(
            text.starts_with(r#"[{"to":"player_1","card":"4c"}"#),
            "{text}"
        );
        let dealt_back: Vec<BaccaratCard> = serde_json::from_str(&text).unwrap();
        let o = e.outcome(&dealt_back).unwrap();
        let o_back: BaccaratOutcome =
            serde_json::from_str(&serde_json::to_string(&o).unwrap()).unwrap();
        assert_eq!(
            e.settle(&[back], &o_back).unwrap(),
            e.settle(&[pl], &o).unwrap()
        );
        let next = serde_json::to_value(e.expect_next(&dealt[..2]).unwrap()).unwrap();
        assert_eq!(next, json!({"next": "card", "to": "player_2"}));
    }

    #[test]
    fn non_baccarat_plans_are_refused() {
        let p = plan("evolution-top-card");
        assert_eq!(
            BaccaratEngine::new(&p).unwrap_err().code,
            code::WRONG_FAMILY
        );
    }

    // ----- RNG ----------------------------------------------------------------------------------

    fn seed(i: u64) -> [u8; 32] {
        let mut s = [7u8; 32];
        s[..8].copy_from_slice(&i.to_le_bytes());
        s
    }

    #[test]
    fn rng_deal_is_deterministic_for_a_seed() {
        let p = plan(SYNOT);
        let e = engine(&p);
        for i in 0..50 {
            assert_eq!(e.deal_from_seed(seed(i)), e.deal_from_seed(seed(i)));
        }
        let distinct: std::collections::BTreeSet<String> = (0..50)
            .map(|i| format!("{:?}", e.deal_from_seed(seed(i))))
            .collect();
        assert!(distinct.len() > 45);
    }

    #[test]
    fn rng_deal_follows_the_drawing_rules() {
        for id in PLANS {
            let p = plan(id);
            let e = engine(&p);
            for i in 0..2_000 {
                let coup = e.deal_from_seed(seed(i));
                e.outcome(&coup)
                    .expect("an RNG coup is a complete, valid coup");
            }
        }
    }

    #[test]
    fn the_outcome_of_a_dealt_coup_is_the_outcome_of_its_cards() {
        for id in PLANS {
            let p = plan(id);
            let e = engine(&p);
            let mut stream = ChaCha20Rng::from_seed(seed(99));
            for i in 0..2_000 {
                let coup = e.deal_coup(seed(i));
                assert_eq!(e.coup_outcome(&coup), e.outcome(coup.as_slice()).unwrap());
                let next = e.deal_coup_from(&mut stream);
                assert_eq!(e.coup_outcome(&next), e.outcome(next.as_slice()).unwrap());
            }
            // A stream's first coup is the coup of its seed.
            let first = e.deal_coup_from(&mut ChaCha20Rng::from_seed(seed(5)));
            assert_eq!(first, e.deal_coup(seed(5)));
        }
    }

    /// The reference an auditor writes: the whole shoe in canonical order, a plain full
    /// Fisher–Yates from the front, then the cards dealt in order.
    fn reference_shuffle(decks: u8, seed: [u8; 32]) -> Vec<Card> {
        let mut shoe: Vec<Card> = (0..decks)
            .flat_map(|_| DeckKind::Standard52.cards())
            .collect();
        let mut rng = ChaCha20Rng::from_seed(seed);
        let n = shoe.len();
        for i in 0..n - 1 {
            let m = (n - i) as u32;
            let zone = (u32::MAX / m) * m;
            let r = loop {
                let x = rng.next_u32();
                if x < zone {
                    break x % m;
                }
            };
            shoe.swap(i, i + r as usize);
        }
        shoe
    }

    #[test]
    fn rng_deal_is_the_head_of_a_full_fisher_yates_shuffle_of_the_shoe() {
        let p = plan(SPEED);
        let e = engine(&p);
        for i in 0..200 {
            let coup = e.deal_from_seed(seed(i));
            let shuffled = reference_shuffle(8, seed(i));
            let cards: Vec<Card> = coup.iter().map(|c| c.card).collect();
            assert_eq!(cards, shuffled[..cards.len()], "seed {i}");
        }
    }

    #[test]
    fn rng_deal_uses_each_card_at_most_its_number_of_copies() {
        let mut p = plan(SYNOT);
        let GameRules::Baccarat(r) = &mut p.rules else {
            unreachable!()
        };
        r.shoe = Shoe::new(DeckKind::Standard52, 1);
        let e = engine(&p);
        let mut seen_per_kind = [0u32; 52];
        for i in 0..5_000 {
            let coup = e.deal_coup(seed(i));
            let mut kinds: Vec<usize> = coup.as_slice().iter().map(|c| c.card.index()).collect();
            kinds.sort_unstable();
            let n = kinds.len();
            kinds.dedup();
            assert_eq!(kinds.len(), n, "a one-deck coup repeats a card: {coup:?}");
            for k in kinds {
                seen_per_kind[k] += 1;
            }
        }
        // Every card of the deck comes out (≈ 470 times each in 5 000 coups).
        assert!(seen_per_kind.iter().all(|&n| n > 300), "{seen_per_kind:?}");
    }

    // ----- Exact return -------------------------------------------------------------------------

    fn rtp_of<'a>(all: &'a [ExactRtp], bet: &str, total: Option<u8>) -> &'a ExactRtp {
        all.iter()
            .find(|r| r.bet == bet && r.total == total)
            .unwrap_or_else(|| panic!("{bet} {total:?}"))
    }

    fn print(id: &str, all: &[ExactRtp]) {
        for r in all {
            println!(
                "{id} {:<14}{:<4} rtp {} = {}",
                r.bet,
                r.total.map(|t| t.to_string()).unwrap_or_default(),
                r.rtp.decimal(8),
                r.rtp
            );
        }
    }

    #[test]
    fn exact_main_bet_returns_from_8_decks_are_the_known_values() {
        let p = plan(SPEED);
        let all = engine(&p).exact_rtp().unwrap();
        print(SPEED, &all);
        for (bet, known) in [
            ("banker", 0.989421),
            ("player", 0.987648),
            ("tie", 0.856405),
        ] {
            let got = rtp_of(&all, bet, None).rtp.to_f64();
            assert!((got - known).abs() < 2e-6, "{bet}: {got} vs {known}");
        }
        // The outcome probabilities: Banker 0.458597, Player 0.446247, Tie 0.095156.
        let prob = |bet: &str, class: &str| {
            rtp_of(&all, bet, None)
                .outcomes
                .iter()
                .find(|(c, _)| c == class)
                .unwrap()
                .1
        };
        for (bet, class, known) in [
            ("banker", "win", 0.458597),
            ("player", "win", 0.446247),
            ("tie", "win", 0.095156),
        ] {
            let got = prob(bet, class).to_f64();
            assert!((got - known).abs() < 1e-6, "{bet}: {got}");
        }
        // Every ordered coup is counted once: P(player) + P(banker) + P(tie) = 1 exactly.
        let sum = prob("player", "win")
            .checked_add(prob("banker", "win"))
            .and_then(|s| s.checked_add(prob("tie", "win")))
            .unwrap();
        assert_eq!(sum, Fraction::ONE);
        assert_eq!(prob("player", "tie"), prob("tie", "win"));
    }

    #[test]
    fn exact_pair_returns_are_the_closed_forms() {
        // Independently: with R = 32 cards of a rank and K = 8 of a rank and suit in N = 416,
        // P(pair in one hand) = (R−1)/(N−1); both hands pair: the banker's first card is of the
        // player's rank or not.
        let f = |n: u128, d: u128| Fraction::new(n, d).unwrap();
        let d3 = 415 * 414 * 413;
        let pair = f(31, 415);
        let both_pair = f(31 * 30 * 29 + 384 * 31 * 31, d3);
        let perfect = f(7, 415);
        let both_perfect = f(7 * 6 * 5 + 408 * 7 * 7, d3);
        // P(A or B) = P(A) + P(B) − P(A and B), as (2·P − both).
        let either = |one: Fraction, both: Fraction| {
            let two = one.checked_add(one).unwrap();
            f(
                two.numerator * both.denominator - both.numerator * two.denominator,
                two.denominator * both.denominator,
            )
        };
        let times = |x: Fraction, k: u128| x.checked_mul(f(k, 1)).unwrap();
        for id in PLANS {
            let p = plan(id);
            let all = engine(&p).exact_rtp().unwrap();
            assert_eq!(rtp_of(&all, "player_pair", None).rtp, times(pair, 12));
            assert_eq!(rtp_of(&all, "banker_pair", None).rtp, times(pair, 12));
            assert_eq!(
                rtp_of(&all, "any_pair", None).rtp,
                times(either(pair, both_pair), 6)
            );
            assert_eq!(
                rtp_of(&all, "perfect_pair", None).rtp,
                times(either(perfect, both_perfect), 26)
            );
        }
    }

    #[test]
    fn exact_returns_of_every_bet_of_both_plans() {
        for id in PLANS {
            let p = plan(id);
            let all = engine(&p).exact_rtp().unwrap();
            print(id, &all);
            let bets: usize = p
                .bets
                .iter()
                .map(|b| if b.id == EGALITE_BET { 10 } else { 1 })
                .sum();
            assert_eq!(all.len(), bets);
            for r in &all {
                let x = r.rtp.to_f64();
                assert!(0.5 < x && x < 1.0, "{id} {} {:?}: {x}", r.bet, r.total);
            }
        }
        let synot = plan(SYNOT);
        let all = engine(&synot).exact_rtp().unwrap();
        // Big 0.54:1 and Small 1.5:1 from 8 decks: house edges 4.35 % and 5.28 %.
        let big = rtp_of(&all, "big", None).rtp.to_f64();
        let small = rtp_of(&all, "small", None).rtp.to_f64();
        assert!((big - (1.0 - 0.0435)).abs() < 1e-4, "{big}");
        assert!((small - (1.0 - 0.0528)).abs() < 1e-4, "{small}");
        // The assumed Player/Banker Bonus table from 8 decks: house edges 2.65 % and 9.37 %.
        let speed = plan(SPEED);
        let bonus = engine(&speed).exact_rtp().unwrap();
        let pb = rtp_of(&bonus, "player_bonus", None).rtp.to_f64();
        let bb = rtp_of(&bonus, "banker_bonus", None).rtp.to_f64();
        assert!((pb - (1.0 - 0.0265)).abs() < 1e-4, "{pb}");
        assert!((bb - (1.0 - 0.0937)).abs() < 1e-4, "{bb}");
        // The Egalite totals' tie probabilities add up to the Tie bet's.
        let mut ties = Fraction::ZERO;
        for t in 0..=9 {
            ties = ties
                .checked_add(rtp_of(&all, EGALITE_BET, Some(t)).outcomes[0].1)
                .unwrap();
        }
        assert_eq!(ties, rtp_of(&all, "tie", None).outcomes[0].1);
    }

    /// Throughput of RNG baccarat per core.
    /// `cargo test --release --lib games::baccarat::tests::throughput -- --ignored --nocapture`
    #[test]
    #[ignore = "a measurement, not a check"]
    fn throughput_rng_coups_per_second() {
        let p = plan(SYNOT);
        let e = engine(&p);
        let rounds = 4_000_000u64;
        let mut check = 0u64;
        let per_s = |d: std::time::Duration| rounds as f64 / d.as_secs_f64() / 1e6;
        let timed = |name: &str, check: &mut u64, f: &dyn Fn(u64) -> u64| {
            let t = std::time::Instant::now();
            for i in 0..rounds {
                *check = check.wrapping_add(f(i));
            }
            println!("{name:<58} {:>6.2} M/s", per_s(t.elapsed()));
        };
        timed(
            "ChaCha20 key setup + first word (per seed)",
            &mut check,
            &|i| u64::from(ChaCha20Rng::from_seed(seed(i)).next_u32() & 1),
        );
        timed("deal_coup(seed)", &mut check, &|i| {
            u64::from(e.deal_coup(seed(i)).len)
        });
        timed(
            "deal_coup(seed) + outcome(cards) (checked)",
            &mut check,
            &|i| {
                let coup = e.deal_coup(seed(i));
                u64::from(e.outcome(coup.as_slice()).unwrap().player_total)
            },
        );
        timed("deal_coup(seed) + coup_outcome", &mut check, &|i| {
            u64::from(e.coup_outcome(&e.deal_coup(seed(i))).player_total)
        });
        let pl = place(&e, json!({"bet": "banker", "stake_minor": 1000}));
        timed(
            "deal_coup(seed) + coup_outcome + settle(1 bet)",
            &mut check,
            &|i| {
                let o = e.coup_outcome(&e.deal_coup(seed(i)));
                e.settle(std::slice::from_ref(&pl), &o).unwrap()[0].win_minor as u64
            },
        );
        let rng = std::cell::RefCell::new(ChaCha20Rng::from_seed(seed(0)));
        timed(
            "one stream: deal_coup_from + coup_outcome",
            &mut check,
            &|_| {
                let coup = e.deal_coup_from(&mut rng.borrow_mut());
                u64::from(e.coup_outcome(&coup).player_total)
            },
        );
        println!("(check {check})");
    }
}
