//! Top Card engine (Evolution, 002): one card to Home ("Domáci"), one to Away ("Hosté"); the
//! higher rank wins.
//!
//! Pure: no I/O, no clock, no randomness. The shoe, the dealing order, the order of ranks,
//! that suits never decide and the valid-round rule come from the plan's [`TopCardRules`];
//! every limit and ratio, and what a tie does to the Home and Away bets (their `tie` row: half
//! the stake back), from its `[[bets]]` and `[[payouts]]`.
//!
//! In the order of the document's section:
//! - *Tabulka nejvyšších sázek*: [`TopCardEngine::place`], [`TopCardEngine::check_round`].
//! - *Základní informace*: live, [`TopCardEngine::expect_next`] and
//!   [`TopCardEngine::accept_card`] take the cards one at a time with the position they were
//!   dealt to; a card to the wrong position or a card too many is a misdeal (`misdeal`).
//! - *Pravidlo platného kola*: [`TopCardEngine::deal_validity`] says whether a finished deal
//!   stands or is void and dealt again ("rozdání více nebo méně karet, poškozená karta apod. …
//!   krupiér vyhlásí opakované rozdání"); bets stand for the new deal.
//! - *Cíl hry*, *Výplatní tabulka*: [`TopCardEngine::outcome`] and [`TopCardEngine::settle`].
//! - [`TopCardEngine::exact_rtp`]: the exact return of every bet from a full shoe.
//!
//! **RNG deal** ([`TopCardEngine::deal_from_seed`]): the shuffle of
//! [`crate::games::baccarat`] (canonical shoe order, ChaCha20 from the seed, forward
//! Fisher–Yates with `draw_pocket`'s rejection sampling, stopped after two cards); the first
//! card goes to the first position of `deal_order`, the second to the other.

use std::collections::BTreeMap;

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::baccarat::{ExactRtp, Fraction, ShoeShuffle};
use super::{Payout, Refusal};
use crate::cards::{Card, Rank};
use crate::money::Money;
use crate::plan::model::{BetType, Plan};
use crate::plan::rules::top_card::{Misdeal, Side, TopCardRules};
use crate::plan::rules::{Family, GameRules};

/// The stable codes of the refusals this engine returns.
pub mod code {
    pub use crate::games::code::WRONG_FAMILY;
    /// The plan's rules do not pass their own lint, or ask what this engine cannot do (suits
    /// that decide, with no order of suits given).
    pub const INVALID_RULES: &str = "invalid_rules";
    pub const UNKNOWN_BET_TYPE: &str = "unknown_bet_type";
    pub const NOT_OFFERED: &str = "not_offered";
    pub const BAD_STAKE: &str = "bad_stake";
    pub const STAKE_OVERFLOW: &str = "stake_overflow";
    pub const BELOW_MIN_BET: &str = "below_min_bet";
    pub const ABOVE_MAX_BET: &str = "above_max_bet";
    pub use crate::games::code::REQUIRES_MAIN_BET;
    /// Live: a card to the wrong position, a card too many, a card the shoe cannot hold, or an
    /// outcome asked of fewer than two cards. By the plan's valid-round rule the deal is void
    /// and dealt again ([`super::TopCardEngine::on_misdeal`]).
    pub const MISDEAL: &str = "misdeal";
    pub const INCONSISTENT_PLACEMENT: &str = "inconsistent_placement";
    /// Settlement: an outcome whose winner disagrees with its cards.
    pub const INCONSISTENT_OUTCOME: &str = "inconsistent_outcome";
    /// The settlement codes every engine shares ([`crate::games::code`]).
    pub use crate::games::code::{MAX_WIN_EXCEEDED, NO_PAYOUT_ROW, PAYOUT_OVERFLOW};
    pub const EXACT_OVERFLOW: &str = "exact_overflow";
}

/// One bet as an operator sends it: `{"bet": "home", "stake_minor": 1000}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TopCardBetRequest {
    pub bet: String,
    pub stake_minor: i64,
}

/// One accepted bet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TopCardPlacement {
    pub bet_type: String,
    pub stake_minor: i64,
}

/// A card and the position it was dealt to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TopCardCard {
    pub to: Side,
    pub card: Card,
}

/// What the rules deal next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "next", rename_all = "snake_case")]
pub enum TopCardDeal {
    Card { to: Side },
    Complete,
}

/// Whether a finished deal stands ("Pravidlo platného kola").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "validity", rename_all = "snake_case")]
pub enum DealValidity {
    /// The two cards are the round's result.
    Valid,
    /// The deal is void; the dealer deals again and the bets stand for the new deal.
    Redeal { reason: String, clause: String },
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TopCardWinner {
    Home,
    Away,
    Tie,
}

/// A valid deal read by the rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TopCardOutcome {
    pub home: Card,
    pub away: Card,
    pub winner: TopCardWinner,
}

/// The Top Card engine for one plan.
#[derive(Debug, Clone)]
pub struct TopCardEngine<'p> {
    plan: &'p Plan,
    rules: &'p TopCardRules,
    /// `strength[rank.number()]`: the rank's place in `rank_order`.
    strength: [u8; 15],
    order: [Side; 2],
    shuffle: ShoeShuffle,
}

impl<'p> TopCardEngine<'p> {
    pub fn new(plan: &'p Plan) -> Result<TopCardEngine<'p>, Refusal> {
        crate::games::expect_family(plan, Family::TopCard, "Top Card")?;
        let GameRules::TopCard(rules) = &plan.rules else {
            unreachable!("expect_family checked the rules' family")
        };
        let invalid = |problem: String| {
            Refusal::new(code::INVALID_RULES, format!("{}: {problem}", plan.key()))
                .clause(rules.clause.clone())
        };
        let mut problems = rules.lint();
        problems.extend(rules.lint_against_plan(plan));
        if let Some((path, problem)) = problems.first() {
            return Err(invalid(format!("{path}: {problem}")));
        }
        if !rules.suits_ignored {
            return Err(invalid(
                "rules.top_card.suits_ignored = false, but the plan gives no order of suits to decide by"
                    .into(),
            ));
        }
        let mut strength = [0u8; 15];
        for (i, r) in rules.rank_order.iter().enumerate() {
            strength[usize::from(r.0.number())] = i as u8;
        }
        let order = [rules.deal_order[0], rules.deal_order[1]];
        let shuffle = ShoeShuffle::new(rules.shoe, 2)
            .ok_or_else(|| invalid("the shoe cannot deal two cards".into()))?;
        Ok(TopCardEngine {
            plan,
            rules,
            strength,
            order,
            shuffle,
        })
    }

    pub fn plan(&self) -> &'p Plan {
        self.plan
    }

    // ----- Bets ---------------------------------------------------------------------------

    /// Reads one bet request against the plan and holds it to its type's `min_bet` and
    /// `max_bet`; then the caller checks it with the player's round with
    /// [`TopCardEngine::check_round`].
    pub fn place(&self, req: &TopCardBetRequest) -> Result<TopCardPlacement, Refusal> {
        let row = self.plan.bet(&req.bet).ok_or_else(|| {
            if Family::TopCard.bet_spec(&req.bet).is_some() {
                self.not_offered(&req.bet)
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
                    "a stake of {} on {} is {bound} bet {} for {} in {}",
                    self.money(req.stake_minor),
                    row.id,
                    self.money(limit),
                    row.label,
                    self.plan.key()
                ),
            )
            .clause(row.clause.clone()));
        }
        Ok(TopCardPlacement {
            bet_type: row.id.clone(),
            stake_minor: req.stake_minor,
        })
    }

    /// Refuses `new` when, with `existing` (the same player's placements already accepted in
    /// this round), the player's total on one bet type would exceed its `max_bet`, or a bet
    /// whose row `requires` other bet types has none of them in the round (the Top Card plan
    /// has no such bet: its Tie bet is an equal option).
    pub fn check_round(
        &self,
        existing: &[&TopCardPlacement],
        new: &[TopCardPlacement],
    ) -> Result<(), Refusal> {
        let mut totals: BTreeMap<&str, (i64, i64)> = BTreeMap::new();
        let tagged = existing.iter().map(|p| (*p, true));
        for (p, is_existing) in tagged.chain(new.iter().map(|p| (p, false))) {
            let (already, total) = totals.entry(p.bet_type.as_str()).or_default();
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
                        "the total on {} does not fit in 64-bit minor units",
                        p.bet_type
                    ),
                ));
            };
            (*already, *total) = (a, t);
        }
        for p in new {
            let row = self.row(&p.bet_type)?;
            let (already, total) = totals[p.bet_type.as_str()];
            if total > row.max_bet {
                return Err(Refusal::new(
                    code::ABOVE_MAX_BET,
                    format!(
                        "the player's total on {} would be {} ({} already placed this round), above its maximum bet {}",
                        p.bet_type,
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

    /// The position of the next card after `dealt`, or [`TopCardDeal::Complete`] after two.
    pub fn expect_next(&self, dealt: &[TopCardCard]) -> Result<TopCardDeal, Refusal> {
        self.replay(dealt)?;
        Ok(self.next_after(dealt.len()))
    }

    /// Accepts `card` after `dealt` when it goes to the position of `deal_order`; a card to
    /// the other position, a card after both are dealt, or a card the shoe cannot hold is a
    /// misdeal (`misdeal`): the deal is void and dealt again ([`TopCardEngine::on_misdeal`]).
    pub fn accept_card(
        &self,
        dealt: &[TopCardCard],
        card: TopCardCard,
    ) -> Result<TopCardDeal, Refusal> {
        self.replay(dealt)?;
        self.step(dealt, card)?;
        Ok(self.next_after(dealt.len() + 1))
    }

    /// What the plan does with a misdeal: the dealer deals again ("krupiér vyhlásí opakované
    /// rozdání"); bets stand for the new deal.
    pub fn on_misdeal(&self) -> Misdeal {
        self.rules.valid_round.on_misdeal
    }

    /// Whether a deal the dealer system reports as finished stands: exactly two cards, to
    /// Home then Away, that the shoe can hold, and — when the plan's rule asks for it —
    /// `dealt_correctly_and_visible`: the dealer system's word that both cards were dealt
    /// correctly, are undamaged and clearly visible on the table.
    pub fn deal_validity(
        &self,
        dealt: &[TopCardCard],
        dealt_correctly_and_visible: bool,
    ) -> DealValidity {
        let vr = &self.rules.valid_round;
        let reason = if let Err(r) = self.replay(dealt) {
            Some(r.message)
        } else if dealt.len() < 2 {
            Some(format!(
                "{} card(s) dealt: a deal is one card to Home and one to Away",
                dealt.len()
            ))
        } else if vr.cards_dealt_correctly_and_visible && !dealt_correctly_and_visible {
            Some(
                "the dealer system reports a card dealt incorrectly, damaged or not clearly visible"
                    .to_string(),
            )
        } else {
            None
        };
        match (reason, vr.on_misdeal) {
            (None, _) => DealValidity::Valid,
            (Some(reason), Misdeal::Redeal) => DealValidity::Redeal {
                reason,
                clause: vr.clause.clone(),
            },
        }
    }

    /// Deals the two cards from `seed` (the algorithm is in the module documentation).
    pub fn deal_from_seed(&self, seed: [u8; 32]) -> [TopCardCard; 2] {
        self.deal_from(&mut ChaCha20Rng::from_seed(seed))
    }

    /// Deals the two cards from the next words of `rng`, from a freshly shuffled full shoe
    /// (the algorithm of the module documentation, continuing the stream). For simulation: a
    /// run of deals from one seed costs the keystream it uses instead of a ChaCha20 key setup
    /// and four blocks per deal.
    pub fn deal_from(&self, rng: &mut ChaCha20Rng) -> [TopCardCard; 2] {
        let mut s = self.shuffle.start();
        let first = s.next_card(rng);
        let second = s.next_card(rng);
        [
            TopCardCard {
                to: self.order[0],
                card: first,
            },
            TopCardCard {
                to: self.order[1],
                card: second,
            },
        ]
    }

    // ----- Outcome and settlement ---------------------------------------------------------

    /// Reads a deal of two cards: the higher rank by `rank_order` wins, equal ranks tie. Fewer
    /// cards, or a deal the rules refuse, is a misdeal.
    pub fn outcome(&self, dealt: &[TopCardCard]) -> Result<TopCardOutcome, Refusal> {
        self.replay(dealt)?;
        if dealt.len() < 2 {
            return Err(self.misdeal(format!(
                "{} card(s) dealt: a deal is one card to Home and one to Away",
                dealt.len()
            )));
        }
        let card_of = |side: Side| {
            dealt
                .iter()
                .find(|c| c.to == side)
                .map(|c| c.card)
                .expect("a replayed deal of two cards holds one card per side")
        };
        Ok(self.read(card_of(Side::Home), card_of(Side::Away)))
    }

    /// Settles placements on a deal's outcome, one [`Payout`] per placement in the same order:
    /// a win returns the stake and wins `stake × ratio`; on a tie the Home and Away bets get
    /// their `tie` row's refund (half the stake, rounded by the plan's rule) or lose if the
    /// plan has none; every payout held to the bet type's `max_win` (an error, never capped).
    pub fn settle(
        &self,
        placements: &[TopCardPlacement],
        outcome: &TopCardOutcome,
    ) -> Result<Vec<Payout>, Refusal> {
        let o = self.read(outcome.home, outcome.away);
        if o != *outcome {
            return Err(Refusal::new(
                code::INCONSISTENT_OUTCOME,
                format!(
                    "{} is not the outcome of {} against {}",
                    super::wire_name(outcome),
                    outcome.home,
                    outcome.away
                ),
            ));
        }
        placements.iter().map(|p| self.settle_one(p, &o)).collect()
    }

    fn settle_one(&self, p: &TopCardPlacement, o: &TopCardOutcome) -> Result<Payout, Refusal> {
        let row = self
            .plan
            .bet(&p.bet_type)
            .filter(|_| p.stake_minor > 0)
            .ok_or_else(|| {
                Refusal::new(
                    code::INCONSISTENT_PLACEMENT,
                    format!(
                        "{} with stake {} is not a placement of {}",
                        p.bet_type,
                        p.stake_minor,
                        self.plan.key()
                    ),
                )
            })?;
        let Some(class) = class_of(&p.bet_type, o.winner) else {
            return Ok(Payout::lose(p.stake_minor));
        };
        let payout_row = match self
            .plan
            .payouts_for(&p.bet_type)
            .find(|r| r.outcome == class)
        {
            Some(r) => r,
            None if class == "tie" => return Ok(Payout::lose(p.stake_minor)),
            None => {
                return Err(Refusal::new(
                    code::NO_PAYOUT_ROW,
                    format!(
                        "{} has no payout row {}/{class}",
                        self.plan.key(),
                        p.bet_type
                    ),
                )
                .clause(row.clause.clone()))
            }
        };
        super::pay_row(self.plan, row, payout_row, p.stake_minor, &p.bet_type)
    }

    // ----- Exact return -------------------------------------------------------------------

    /// The exact return of every bet from a full shoe: every ordered pair of cards by rank and
    /// suit, the second drawn from the shoe without the first, over `N·(N−1)`; classed as
    /// [`TopCardEngine::settle`] classes them and priced by the plan's rows without rounding.
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
        let kinds = self.shuffle.deck();
        let copies = u128::from(self.shuffle.copies());
        let n = u128::from(self.shuffle.shoe_len());
        let den = n * (n - 1);
        let mut by_winner: BTreeMap<TopCardWinner, u128> = BTreeMap::new();
        for (i, &a) in kinds.iter().enumerate() {
            for (j, &b) in kinds.iter().enumerate() {
                let w = copies * (copies - u128::from(i == j));
                let (home, away) = match self.order {
                    [Side::Home, _] => (a, b),
                    _ => (b, a),
                };
                *by_winner.entry(self.read(home, away).winner).or_default() += w;
            }
        }
        let mut out = Vec::new();
        for bet in &self.plan.bets {
            let mut outcomes = Vec::new();
            let mut rtp = Fraction::ZERO;
            for (&winner, &w) in &by_winner {
                let Some(class) = class_of(&bet.id, winner) else {
                    continue;
                };
                let Some(row) = self.plan.payouts_for(&bet.id).find(|r| r.outcome == class) else {
                    continue;
                };
                let p = Fraction::new(w, den).ok_or_else(overflow)?;
                let per_unit = match (row.ratio, row.refund) {
                    (Some(r), _) => Fraction::ONE.checked_add(Fraction::from_ratio(r)),
                    (None, Some(r)) => Some(Fraction::from_ratio(r)),
                    (None, None) => Some(Fraction::ZERO),
                };
                rtp = per_unit
                    .and_then(|u| u.checked_mul(p))
                    .and_then(|x| rtp.checked_add(x))
                    .ok_or_else(overflow)?;
                outcomes.push((class.to_string(), p));
            }
            out.push(ExactRtp {
                bet: bet.id.clone(),
                total: None,
                outcomes,
                rtp,
            });
        }
        Ok(out)
    }

    // ----- The rules ----------------------------------------------------------------------

    fn next_after(&self, n: usize) -> TopCardDeal {
        match self.order.get(n) {
            Some(&to) => TopCardDeal::Card { to },
            None => TopCardDeal::Complete,
        }
    }

    fn replay(&self, dealt: &[TopCardCard]) -> Result<(), Refusal> {
        for (i, &c) in dealt.iter().enumerate() {
            self.step(&dealt[..i], c)?;
        }
        Ok(())
    }

    fn step(&self, before: &[TopCardCard], c: TopCardCard) -> Result<(), Refusal> {
        let nth = before.len() + 1;
        match self.order.get(before.len()) {
            None => {
                return Err(self.misdeal(format!(
                    "card {nth} ({} to {}) is one card too many: a deal is one card to Home and one to Away",
                    c.card,
                    side_name(c.to)
                )))
            }
            Some(&to) if to != c.to => {
                return Err(self.misdeal(format!(
                    "card {nth} ({}) was dealt to {}, but card {nth} goes to {}",
                    c.card,
                    side_name(c.to),
                    side_name(to)
                )))
            }
            Some(_) => {}
        }
        let copies = self.rules.shoe.copies_of(c.card);
        let seen = before.iter().filter(|x| x.card == c.card).count();
        if seen >= usize::from(copies) {
            return Err(self.misdeal(format!(
                "card {nth} ({}) would be copy {} of it in the deal; the shoe of {} decks holds {copies}",
                c.card,
                seen + 1,
                self.rules.shoe.decks
            )));
        }
        Ok(())
    }

    fn misdeal(&self, reason: String) -> Refusal {
        Refusal::new(code::MISDEAL, reason).clause(self.rules.valid_round.clause.clone())
    }

    fn read(&self, home: Card, away: Card) -> TopCardOutcome {
        let s = |r: Rank| self.strength[usize::from(r.number())];
        let winner = match s(home.rank).cmp(&s(away.rank)) {
            std::cmp::Ordering::Greater => TopCardWinner::Home,
            std::cmp::Ordering::Less => TopCardWinner::Away,
            std::cmp::Ordering::Equal => TopCardWinner::Tie,
        };
        TopCardOutcome { home, away, winner }
    }

    fn row(&self, bet_type: &str) -> Result<&'p BetType, Refusal> {
        self.plan
            .bet(bet_type)
            .ok_or_else(|| self.not_offered(bet_type))
    }

    fn not_offered(&self, bet: &str) -> Refusal {
        Refusal::new(
            code::NOT_OFFERED,
            format!(
                "{} does not offer the bet type '{bet}'; it offers {}",
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

/// The outcome class a bet is paid on, or `None` when it loses.
fn class_of(bet: &str, winner: TopCardWinner) -> Option<&'static str> {
    match (bet, winner) {
        ("home", TopCardWinner::Home) | ("away", TopCardWinner::Away) => Some("win"),
        ("home" | "away", TopCardWinner::Tie) => Some("tie"),
        ("tie", TopCardWinner::Tie) => Some("win"),
        _ => None,
    }
}

fn side_name(s: Side) -> &'static str {
    match s {
        Side::Home => "Home (Domáci)",
        Side::Away => "Away (Hosté)",
    }
}

/// The sum of the stakes, for the wallet debit; `None` on overflow.
pub fn total_stake_minor(placements: &[TopCardPlacement]) -> Option<i64> {
    placements
        .iter()
        .try_fold(0i64, |sum, p| sum.checked_add(p.stake_minor))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use rand::RngCore;
    use serde_json::json;

    use super::*;
    use crate::cards::{DeckKind, Shoe};
    use crate::plan::registry::load_file;

    const ID: &str = "evolution-top-card";
    const VALID_ROUND: &str = "Pravidlo platného kola";

    fn plan() -> Plan {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("game_plans");
        load_file(
            &dir.join(format!("{ID}@1.toml")),
            Some(&dir.join("sources")),
        )
        .unwrap_or_else(|f| panic!("{ID} loads: {f:?}"))
        .plan
    }

    fn engine(p: &Plan) -> TopCardEngine<'_> {
        TopCardEngine::new(p).expect("a Top Card plan")
    }

    fn card(s: &str) -> Card {
        s.parse().expect("a card")
    }

    fn home(s: &str) -> TopCardCard {
        TopCardCard {
            to: Side::Home,
            card: card(s),
        }
    }

    fn away(s: &str) -> TopCardCard {
        TopCardCard {
            to: Side::Away,
            card: card(s),
        }
    }

    fn outcome(e: &TopCardEngine, h: &str, a: &str) -> TopCardOutcome {
        e.outcome(&[home(h), away(a)]).expect("a valid deal")
    }

    fn place(e: &TopCardEngine, bet: &str, stake: i64) -> TopCardPlacement {
        e.place(&TopCardBetRequest {
            bet: bet.into(),
            stake_minor: stake,
        })
        .unwrap_or_else(|x| panic!("{bet} {stake}: {x}"))
    }

    fn settle_one(e: &TopCardEngine, bet: &str, stake: i64, o: &TopCardOutcome) -> Payout {
        e.settle(&[place(e, bet, stake)], o).unwrap().remove(0)
    }

    fn pay(stake: i64, returned: i64, win: i64, outcome: &str) -> Payout {
        Payout {
            stake_minor: stake,
            returned_minor: returned,
            win_minor: win,
            outcome: outcome.into(),
        }
    }

    #[test]
    fn the_first_card_goes_to_home_and_the_second_to_away() {
        let p = plan();
        let e = engine(&p);
        assert_eq!(
            e.expect_next(&[]).unwrap(),
            TopCardDeal::Card { to: Side::Home }
        );
        assert_eq!(
            e.accept_card(&[], home("7c")).unwrap(),
            TopCardDeal::Card { to: Side::Away }
        );
        assert_eq!(
            e.accept_card(&[home("7c")], away("9d")).unwrap(),
            TopCardDeal::Complete
        );
    }

    #[test]
    fn two_is_lowest_and_ace_highest() {
        let p = plan();
        let e = engine(&p);
        assert_eq!(outcome(&e, "Ac", "Kd").winner, TopCardWinner::Home);
        assert_eq!(outcome(&e, "2c", "3d").winner, TopCardWinner::Away);
        assert_eq!(outcome(&e, "Tc", "9d").winner, TopCardWinner::Home);
        assert_eq!(outcome(&e, "Jc", "Td").winner, TopCardWinner::Home);
        assert_eq!(outcome(&e, "2h", "Ah").winner, TopCardWinner::Away);
    }

    #[test]
    fn suits_do_not_decide() {
        let p = plan();
        let e = engine(&p);
        assert_eq!(outcome(&e, "Ks", "Kc").winner, TopCardWinner::Tie);
        assert_eq!(outcome(&e, "7h", "7h").winner, TopCardWinner::Tie);
    }

    #[test]
    fn rank_order_is_read_from_the_plan() {
        let mut p = plan();
        let GameRules::TopCard(r) = &mut p.rules else {
            unreachable!()
        };
        // A plan with the ace low.
        let ace = r.rank_order.pop().unwrap();
        r.rank_order.insert(0, ace);
        let e = engine(&p);
        assert_eq!(outcome(&e, "Ac", "2d").winner, TopCardWinner::Away);
    }

    #[test]
    fn home_and_away_pay_1_to_1() {
        let p = plan();
        let e = engine(&p);
        let o = outcome(&e, "Qh", "5s");
        assert_eq!(
            settle_one(&e, "home", 10_000, &o),
            pay(10_000, 10_000, 10_000, "win")
        );
        assert_eq!(settle_one(&e, "away", 10_000, &o), Payout::lose(10_000));
        assert_eq!(settle_one(&e, "tie", 10_000, &o), Payout::lose(10_000));
        let o = outcome(&e, "5h", "Qs");
        assert_eq!(
            settle_one(&e, "away", 10_000, &o),
            pay(10_000, 10_000, 10_000, "win")
        );
    }

    #[test]
    fn a_tie_loses_half_of_home_and_away_bets() {
        let p = plan();
        let e = engine(&p);
        let o = outcome(&e, "9h", "9s");
        for bet in ["home", "away"] {
            assert_eq!(
                settle_one(&e, bet, 10_000, &o),
                pay(10_000, 5_000, 0, "tie")
            );
            // Half of an odd stake rounds down (the plan's rounding): 1,01 Kč → 0,50 Kč back.
            assert_eq!(settle_one(&e, bet, 101, &o), pay(101, 50, 0, "tie"));
        }
    }

    #[test]
    fn tie_pays_11_to_1() {
        let p = plan();
        let e = engine(&p);
        let o = outcome(&e, "9h", "9s");
        assert_eq!(
            settle_one(&e, "tie", 10_000, &o),
            pay(10_000, 10_000, 110_000, "win")
        );
    }

    #[test]
    fn a_card_to_away_first_is_a_misdeal() {
        let p = plan();
        let e = engine(&p);
        let err = e.accept_card(&[], away("9s")).unwrap_err();
        assert_eq!(err.code, code::MISDEAL);
        assert_eq!(err.clause.as_deref(), Some(VALID_ROUND));
        assert_eq!(
            e.outcome(&[away("9s"), home("2c")]).unwrap_err().code,
            code::MISDEAL
        );
    }

    #[test]
    fn a_third_card_is_a_misdeal_and_the_deal_is_dealt_again() {
        let p = plan();
        let e = engine(&p);
        let two = [home("9h"), away("2s")];
        let err = e.accept_card(&two, home("3c")).unwrap_err();
        assert_eq!(err.code, code::MISDEAL);
        assert!(err.message.contains("one card too many"), "{}", err.message);
        assert_eq!(e.on_misdeal(), Misdeal::Redeal);
        let three = [home("9h"), away("2s"), home("3c")];
        assert!(matches!(
            e.deal_validity(&three, true),
            DealValidity::Redeal { clause, .. } if clause == VALID_ROUND
        ));
    }

    #[test]
    fn too_few_cards_is_a_misdeal() {
        let p = plan();
        let e = engine(&p);
        assert_eq!(e.outcome(&[home("9h")]).unwrap_err().code, code::MISDEAL);
        assert!(matches!(
            e.deal_validity(&[home("9h")], true),
            DealValidity::Redeal { .. }
        ));
        assert!(matches!(
            e.deal_validity(&[], true),
            DealValidity::Redeal { .. }
        ));
    }

    #[test]
    fn a_damaged_or_hidden_card_voids_the_deal() {
        let p = plan();
        let e = engine(&p);
        let two = [home("9h"), away("2s")];
        assert_eq!(e.deal_validity(&two, true), DealValidity::Valid);
        let DealValidity::Redeal { reason, clause } = e.deal_validity(&two, false) else {
            panic!("a damaged card voids the deal")
        };
        assert!(reason.contains("damaged"), "{reason}");
        assert_eq!(clause, VALID_ROUND);
    }

    #[test]
    fn bets_are_held_to_the_limits_table() {
        let p = plan();
        let e = engine(&p);
        for row in &p.bets {
            place(&e, &row.id, row.min_bet);
            place(&e, &row.id, row.max_bet);
            let r = |stake| {
                e.place(&TopCardBetRequest {
                    bet: row.id.clone(),
                    stake_minor: stake,
                })
                .unwrap_err()
            };
            assert_eq!(r(row.min_bet - 1).code, code::BELOW_MIN_BET);
            assert_eq!(r(row.max_bet + 1).code, code::ABOVE_MAX_BET);
            assert_eq!(
                r(row.max_bet + 1).clause.as_deref(),
                Some(row.clause.as_str())
            );
        }
        let req = |bet: &str| TopCardBetRequest {
            bet: bet.into(),
            stake_minor: 1000,
        };
        assert_eq!(
            e.place(&req("player")).unwrap_err().code,
            code::UNKNOWN_BET_TYPE
        );
        let home = place(&e, "home", 15_000_000);
        let err = e
            .check_round(&[&home], &[place(&e, "home", 5_000_001)])
            .unwrap_err();
        assert_eq!(err.code, code::ABOVE_MAX_BET);
        // The Tie bet needs no Home or Away bet ("tři možnosti sázek").
        e.check_round(&[], &[place(&e, "tie", 1000)]).unwrap();
    }

    #[test]
    fn every_bets_max_stake_wins_exactly_its_max_win() {
        let p = plan();
        let e = engine(&p);
        for row in &p.bets {
            let o = match row.id.as_str() {
                "home" => outcome(&e, "Ah", "2s"),
                "away" => outcome(&e, "2h", "As"),
                _ => outcome(&e, "Ah", "As"),
            };
            let paid = settle_one(&e, &row.id, row.max_bet, &o);
            assert_eq!(paid.win_minor, row.max_win, "{}", row.id);
            assert_eq!(paid.total_minor(), row.max_win_plus_stake, "{}", row.id);
        }
        let mut p = plan();
        p.bets.iter_mut().find(|b| b.id == "tie").unwrap().max_win = 10;
        let e = engine(&p);
        let err = e
            .settle(&[place(&e, "tie", 1000)], &outcome(&e, "Ah", "As"))
            .unwrap_err();
        assert_eq!(err.code, code::MAX_WIN_EXCEEDED);
    }

    #[test]
    fn an_outcome_that_disagrees_with_its_cards_is_refused() {
        let p = plan();
        let e = engine(&p);
        let mut o = outcome(&e, "Ah", "2s");
        o.winner = TopCardWinner::Away;
        let err = e.settle(&[place(&e, "away", 1000)], &o).unwrap_err();
        assert_eq!(err.code, code::INCONSISTENT_OUTCOME);
    }

    #[test]
    fn outcomes_and_placements_round_trip_through_json() {
        let p = plan();
        let e = engine(&p);
        let o = outcome(&e, "Th", "Ts");
        let text = serde_json::to_string(&o).unwrap();
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).unwrap(),
            json!({"home": "Th", "away": "Ts", "winner": "tie"})
        );
        let back: TopCardOutcome = serde_json::from_str(&text).unwrap();
        let pl = place(&e, "home", 1000);
        let pl_back: TopCardPlacement =
            serde_json::from_str(&serde_json::to_string(&pl).unwrap()).unwrap();
        assert_eq!(
            e.settle(&[pl_back], &back).unwrap(),
            e.settle(&[pl], &o).unwrap()
        );
    }

    #[test]
    fn non_top_card_plans_are_refused() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("game_plans");
        let p = load_file(&dir.join("synot-baccarat@1.toml"), None)
            .unwrap()
            .plan;
        assert_eq!(TopCardEngine::new(&p).unwrap_err().code, code::WRONG_FAMILY);
    }

    fn seed(i: u64) -> [u8; 32] {
        let mut s = [3u8; 32];
        s[..8].copy_from_slice(&i.to_le_bytes());
        s
    }

    #[test]
    fn rng_deal_is_deterministic_and_valid() {
        let p = plan();
        let e = engine(&p);
        for i in 0..500 {
            let d = e.deal_from_seed(seed(i));
            assert_eq!(d, e.deal_from_seed(seed(i)));
            assert_eq!(e.deal_validity(&d, true), DealValidity::Valid);
        }
    }

    #[test]
    fn rng_deal_is_the_first_two_cards_of_a_full_fisher_yates_shuffle() {
        let p = plan();
        let e = engine(&p);
        for i in 0..100 {
            let mut shoe: Vec<Card> = (0..8).flat_map(|_| DeckKind::Standard52.cards()).collect();
            let mut rng = ChaCha20Rng::from_seed(seed(i));
            for k in 0..2 {
                let m = (shoe.len() - k) as u32;
                let zone = (u32::MAX / m) * m;
                let r = loop {
                    let x = rng.next_u32();
                    if x < zone {
                        break x % m;
                    }
                };
                shoe.swap(k, k + r as usize);
            }
            let d = e.deal_from_seed(seed(i));
            assert_eq!([d[0].card, d[1].card], [shoe[0], shoe[1]], "seed {i}");
        }
    }

    #[test]
    fn rng_deal_uses_each_card_at_most_its_number_of_copies() {
        let mut p = plan();
        let GameRules::TopCard(r) = &mut p.rules else {
            unreachable!()
        };
        r.shoe = Shoe::new(DeckKind::Standard52, 1);
        let e = engine(&p);
        for i in 0..5_000 {
            let d = e.deal_from_seed(seed(i));
            assert_ne!(d[0].card, d[1].card, "seed {i}");
        }
    }

    #[test]
    fn exact_returns_from_8_decks_are_the_closed_forms() {
        let p = plan();
        let all = engine(&p).exact_rtp().unwrap();
        for r in &all {
            println!("{ID} {:<5} rtp {} = {}", r.bet, r.rtp.decimal(8), r.rtp);
        }
        // Independently: 32 cards of each rank in 416; the second card ties the first with
        // probability 31/415, else Home and Away win equally often (192/415 each).
        // Home/Away: 2 · 192/415 + 1/2 · 31/415 = 799/830; Tie: 12 · 31/415 = 372/415.
        let f = |n, d| Fraction::new(n, d).unwrap();
        let rtp = |bet: &str| all.iter().find(|r| r.bet == bet).unwrap().rtp;
        assert_eq!(rtp("home"), f(799, 830));
        assert_eq!(rtp("away"), f(799, 830));
        assert_eq!(rtp("tie"), f(372, 415));
    }
}
