//! Single-zero roulette engine: reads a bet request against the plan, expands it into the
//! component bets it places, holds each to the plan's limits, and settles them on a number.
//!
//! Pure: no I/O, no clock, no randomness. Every limit, ratio, announced bet, Neighbours range,
//! complete-bet chip count and valid-spin rule comes from the [`Plan`]; the layout and the
//! wheel come from [`crate::plan::rules::roulette`], the same functions lint checks the plan
//! with.
//!
//! In the order of the document's section:
//! - *Tabulka nejvyšších sázek*: [`RouletteEngine::place`] holds every placement to its bet
//!   type's `min_bet`/`max_bet`; [`RouletteEngine::check_cumulative`] holds one player's total
//!   on one spot in one round to `max_bet`.
//! - *Racetrack* and *Herní funkce*: announced bets (Tier, Orphelins, Voisins, Zero),
//!   Neighbours and the complete bet expand into component bets, each held to its own type's
//!   row (`composite_limits = "each_component"`).
//! - *Výplatní tabulka*: [`RouletteEngine::settle`] pays `stake × ratio` on top of the
//!   returned stake, and refuses, never caps, a win above the row's `max_win`.
//! - *Pravidlo platného roztočení rulety*: [`RouletteEngine::spin_validity`].
//!
//! **RNG mode.** The engine never draws. The caller draws the winning number uniformly from
//! `0..POCKETS` with an unbiased range sampler over its committed ChaCha20 stream (rand's
//! `gen_range(0..POCKETS)` / `random_range(0..POCKETS)`, which reject rather than take a
//! modulo), logs it, and passes it to [`RouletteEngine::validate_result`] and
//! [`RouletteEngine::settle`] like a dealer's number.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Payout, Refusal};
use crate::money::Money;
use crate::plan::model::{BetType, Plan};
use crate::plan::rules::roulette::{
    complete_bet_components, covered_numbers, is_inside, neighbours, CompositeLimits, InvalidSpin,
    OutsideField, RouletteRules, Spot, MAX_NUMBER,
};
use crate::plan::rules::{Family, GameRules};

/// Pockets of a single-zero wheel (0–36). In RNG mode the caller draws the winning number
/// uniformly from `0..POCKETS` (see the module documentation); the engine refuses plans with
/// another wheel.
pub const POCKETS: u8 = 37;

/// The `bet` of a racetrack Neighbours request.
pub const NEIGHBOURS_BET: &str = "neighbours";
/// The `bet` of a complete-bet request (Absolute live gaming's "režim kompletních sázek").
pub const COMPLETE_BET: &str = "complete";

/// Most numbers an inside bet lies on (a line); a longer `numbers` is refused before it is
/// looked at.
const MAX_INSIDE_NUMBERS: usize = 6;

/// The stable codes of the refusals this engine returns.
pub mod code {
    pub use crate::games::code::WRONG_FAMILY;
    /// `bet` is neither a bet type, an announced bet, `neighbours` nor `complete`.
    pub const UNKNOWN_BET_TYPE: &str = "unknown_bet_type";
    /// A bet of the roulette vocabulary that this plan does not offer.
    pub const NOT_OFFERED: &str = "not_offered";
    /// A field the bet needs is missing from the request.
    pub const MISSING_FIELD: &str = "missing_field";
    /// The request carries a field this kind of bet does not take.
    pub const UNEXPECTED_FIELD: &str = "unexpected_field";
    /// The numbers are not a bet of this type on the layout, or the field is of another type.
    pub const INVALID_LAYOUT: &str = "invalid_layout";
    /// A number that is not on the wheel (above 36).
    pub const INVALID_NUMBER: &str = "invalid_number";
    /// Neighbours on each side outside the plan's range.
    pub const NEIGHBOURS_OUT_OF_RANGE: &str = "neighbours_out_of_range";
    /// A stake that is zero or negative.
    pub const BAD_STAKE: &str = "bad_stake";
    /// A stake (times its units, or summed over a round) that does not fit in i64 minor units.
    pub const STAKE_OVERFLOW: &str = "stake_overflow";
    pub const BELOW_MIN_BET: &str = "below_min_bet";
    pub const ABOVE_MAX_BET: &str = "above_max_bet";
    /// Settlement: a placement whose spot, numbers or stake the engine would not have made.
    pub const INCONSISTENT_PLACEMENT: &str = "inconsistent_placement";
    /// The settlement codes every engine shares ([`crate::games::code`]).
    pub use crate::games::code::{MAX_WIN_EXCEEDED, NO_PAYOUT_ROW, PAYOUT_OVERFLOW};
}

/// One bet as an operator sends it. One JSON object per bet; which fields it takes depends
/// on `bet`, and any other field is refused (`unexpected_field`):
///
/// | `bet` | fields | `stake_minor` is |
/// |---|---|---|
/// | an inside bet type: `straight`, `split`, `street`, `corner`, `line` | `numbers` | the stake |
/// | an outside bet type: `dozen`, `column`, `red_black`, `even_odd`, `low_high` | `field` | the stake |
/// | an announced bet of the plan: `tier`, `orphelins`, `voisins`, `zero` | — | the stake per unit |
/// | `neighbours` | `number`, `neighbours` (count on each side) | the stake on each number |
/// | `complete` | `number` | the stake per chip |
///
/// ```json
/// {"bet": "straight", "numbers": [17], "stake_minor": 10000}
/// {"bet": "split", "numbers": [0, 3], "stake_minor": 10000}
/// {"bet": "corner", "numbers": [17, 18, 20, 21], "stake_minor": 10000}
/// {"bet": "column", "field": "column_2", "stake_minor": 10000}
/// {"bet": "red_black", "field": "red", "stake_minor": 10000}
/// {"bet": "voisins", "stake_minor": 10000}
/// {"bet": "neighbours", "number": 0, "neighbours": 2, "stake_minor": 10000}
/// {"bet": "complete", "number": 17, "stake_minor": 10000}
/// ```
///
/// Amounts are integer minor units of the plan's currency (haléře: 10000 is 100,00 Kč).
/// Fields: `dozen_1..3`, `column_1..3` (column 1 is 1, 4, …, 34), `red`/`black`,
/// `even`/`odd`, `low` (1–18)/`high` (19–36). Inside numbers may come in any order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RouletteBetRequest {
    pub bet: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numbers: Option<Vec<u8>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<OutsideField>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub neighbours: Option<u8>,
    pub stake_minor: i64,
}

/// A request read against the plan: what kind of bet it is and where it lies. Only
/// [`RouletteEngine::parse`] makes one, so it names only bets the plan offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouletteBet {
    /// An inside bet type on the numbers as sent (the layout is checked on expansion).
    Inside { bet_type: String, numbers: Vec<u8> },
    /// An outside bet type on one of its fields.
    Outside {
        bet_type: String,
        field: OutsideField,
    },
    /// An announced (racetrack) bet of the plan, by id.
    Announced { id: String },
    /// A straight bet on `number` and on `each_side` numbers either side of it on the wheel.
    Neighbours { number: u8, each_side: u8 },
    /// Every inside bet that includes `number`, with the plan's chips per bet type.
    Complete { number: u8 },
}

/// The combined bet a placement is a component of, for the audit trail and for the
/// round-level rules of combined bets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, utoipa::ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PartOf {
    Announced { id: String },
    Neighbours { number: u8, each_side: u8 },
    Complete { number: u8 },
}

/// One accepted bet on one spot: a simple bet, or one component of a combined bet. This is
/// what limits are held to and what is settled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Placement {
    /// The bet type of the plan's limits and payout tables (`split`, `dozen`, …).
    pub bet_type: String,
    /// Where it lies: inside numbers ascending, or an outside field.
    pub spot: Spot,
    /// The numbers that win it, ascending.
    pub covered: Vec<u8>,
    /// The stake at risk: the request's stake × `units`.
    pub stake_minor: i64,
    /// Units (chips) of the request's stake on this spot: 1 for a simple bet, the plan's
    /// units for a component (Voisins puts 2 on 0-2-3; a complete bet 3 on each street).
    pub units: u8,
    /// The combined bet this is a component of; absent for a simple bet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub part_of: Option<PartOf>,
}

/// Whether a reported spin stands ("Pravidlo platného roztočení rulety").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "validity", rename_all = "snake_case")]
pub enum SpinValidity {
    /// The spin's number is the round's result.
    Valid,
    /// The spin is not a result; the dealer spins again ("provede krupiér opakované
    /// roztočení").
    Respin { reason: String, clause: String },
}

/// A component before it is checked: bet type, spot, units and the bet it belongs to, with the
/// clause to cite when the component itself is at fault.
struct Draft {
    bet_type: String,
    spot: Spot,
    units: u8,
    part_of: Option<PartOf>,
    clause: String,
}

/// The roulette engine for one plan.
#[derive(Debug, Clone, Copy)]
pub struct RouletteEngine<'p> {
    plan: &'p Plan,
    rules: &'p RouletteRules,
}

impl<'p> RouletteEngine<'p> {
    /// The engine for `plan`; refuses a plan of another family or with another wheel.
    pub fn new(plan: &'p Plan) -> Result<RouletteEngine<'p>, Refusal> {
        crate::games::expect_family(plan, Family::Roulette, "roulette")?;
        let GameRules::Roulette(rules) = &plan.rules else {
            unreachable!("expect_family checked the rules' family")
        };
        if rules.pockets != POCKETS {
            return Err(Refusal::new(
                code::WRONG_FAMILY,
                format!(
                    "{} has a wheel of {} pockets; this engine plays single zero ({POCKETS})",
                    plan.key(),
                    rules.pockets
                ),
            )
            .clause(rules.clause.clone()));
        }
        Ok(RouletteEngine { plan, rules })
    }

    pub fn plan(&self) -> &'p Plan {
        self.plan
    }

    /// Reads a request against the plan: which kind of bet, with exactly the fields that
    /// kind takes. Reserved words come first (`neighbours`, `complete`), then the plan's bet
    /// types, then its announced bets.
    pub fn parse(&self, req: &RouletteBetRequest) -> Result<RouletteBet, Refusal> {
        let bet = req.bet.as_str();
        if bet == NEIGHBOURS_BET {
            let Some(nb) = &self.rules.neighbours else {
                return Err(self.not_offered("the Neighbours bet"));
            };
            self.only_fields(req, &["number", "neighbours"])?;
            let number = self.number_on_wheel(req.number)?;
            let each_side = req.neighbours.ok_or_else(|| missing(bet, "neighbours"))?;
            if !(nb.min_each_side..=nb.max_each_side).contains(&each_side) {
                return Err(Refusal::new(
                    code::NEIGHBOURS_OUT_OF_RANGE,
                    format!(
                        "{each_side} neighbours on each side: {} allows {} to {}",
                        self.plan.key(),
                        nb.min_each_side,
                        nb.max_each_side
                    ),
                )
                .clause(nb.clause.clone()));
            }
            return Ok(RouletteBet::Neighbours { number, each_side });
        }
        if bet == COMPLETE_BET {
            if self.rules.complete_bet.is_none() {
                return Err(self.not_offered("the complete bet"));
            }
            self.only_fields(req, &["number"])?;
            let number = self.number_on_wheel(req.number)?;
            return Ok(RouletteBet::Complete { number });
        }
        if let Some(row) = self.plan.bet(bet) {
            if is_inside(bet) {
                self.only_fields(req, &["numbers"])?;
                let numbers = req.numbers.clone().ok_or_else(|| missing(bet, "numbers"))?;
                return Ok(RouletteBet::Inside {
                    bet_type: row.id.clone(),
                    numbers,
                });
            }
            if OutsideField::ALL.iter().any(|f| f.bet() == bet) {
                self.only_fields(req, &["field"])?;
                let field = req.field.ok_or_else(|| missing(bet, "field"))?;
                return Ok(RouletteBet::Outside {
                    bet_type: row.id.clone(),
                    field,
                });
            }
            // Lint admits only the family's vocabulary, all of which is inside or outside.
            return Err(Refusal::new(
                code::UNKNOWN_BET_TYPE,
                format!("'{bet}' is not a roulette bet type this engine knows"),
            )
            .clause(row.clause.clone()));
        }
        if let Some(a) = self.rules.announced.iter().find(|a| a.id == bet) {
            self.only_fields(req, &[])?;
            return Ok(RouletteBet::Announced { id: a.id.clone() });
        }
        if Family::Roulette.bet_spec(bet).is_some() {
            return Err(self.not_offered(&format!("the bet type '{bet}'")));
        }
        Err(Refusal::new(
            code::UNKNOWN_BET_TYPE,
            format!(
                "'{bet}' is not a bet of {}; it offers {}",
                self.plan.key(),
                self.offered().join(", ")
            ),
        ))
    }

    /// Reads, expands and checks one bet request. A simple bet gives one placement, a
    /// combined bet one per component (in the plan's order; Neighbours in wheel order), each
    /// checked on its own against its type's limits. Nothing is accepted unless everything
    /// is: the first refusal refuses the whole request.
    ///
    /// This checks the request alone; before accepting it, the caller checks it together
    /// with the same player's earlier placements in the round with
    /// [`RouletteEngine::check_cumulative`].
    pub fn place(&self, req: &RouletteBetRequest) -> Result<Vec<Placement>, Refusal> {
        let bet = self.parse(req)?;
        if req.stake_minor <= 0 {
            return Err(Refusal::new(
                code::BAD_STAKE,
                format!(
                    "the stake must be positive, not {} minor units",
                    req.stake_minor
                ),
            ));
        }
        let drafts = self.expand(&bet)?;
        let mut out = Vec::with_capacity(drafts.len());
        for d in drafts {
            out.push(self.check_component(d, req.stake_minor)?);
        }
        Ok(out)
    }

    /// Refuses `new` when, added to `existing` (the same player's placements already accepted
    /// in this round), the player's total stake on one bet type and spot would exceed that
    /// type's `max_bet`. A component of a combined bet counts on its spot like a simple bet
    /// of its type (`composite_limits = "each_component"`): a Zero bet and a Voisins bet both
    /// put a split on 12-15. Also enforces the complete bet's `several_numbers = false`.
    pub fn check_cumulative(
        &self,
        existing: &[&Placement],
        new: &[Placement],
    ) -> Result<(), Refusal> {
        match self.rules.composite_limits {
            CompositeLimits::EachComponent => {}
        }
        // (already placed, total with `new`) per bet type and spot of `new`; earlier
        // placements elsewhere do not count. A list searched from its start rather than a
        // map: `new` holds the few placements of one bet, and a map built for each bet was
        // ≈ 5 % of the writer's CPU.
        type Totals<'a> = Vec<((&'a str, &'a Spot), (i64, i64))>;
        /// Where `p`'s bet type and spot are in `totals`.
        fn slot(totals: &Totals, p: &Placement) -> Option<usize> {
            let key = (p.bet_type.as_str(), &p.spot);
            totals.iter().position(|(k, _)| *k == key)
        }
        let mut totals: Totals = Vec::with_capacity(new.len());
        for p in new {
            if slot(&totals, p).is_none() {
                totals.push(((p.bet_type.as_str(), &p.spot), (0, 0)));
            }
        }
        let tagged = existing.iter().map(|p| (*p, true));
        for (p, is_existing) in tagged.chain(new.iter().map(|p| (p, false))) {
            let Some(at) = slot(&totals, p) else {
                continue;
            };
            let (already, total) = &mut totals[at].1;
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
                        "the total on {} {} does not fit in 64-bit minor units",
                        p.bet_type,
                        spot_label(&p.spot)
                    ),
                ));
            };
            (*already, *total) = (a, t);
        }
        for p in new {
            let row = self.row(&p.bet_type, None)?;
            let at = slot(&totals, p).expect("every placement of `new` was totalled above");
            let (already, total) = totals[at].1;
            if total > row.max_bet {
                return Err(Refusal::new(
                    code::ABOVE_MAX_BET,
                    format!(
                        "the player's total on {} {} would be {} ({} already placed this round), above its maximum bet {}",
                        p.bet_type,
                        spot_label(&p.spot),
                        self.money(total),
                        self.money(already),
                        self.money(row.max_bet)
                    ),
                )
                .clause(row.clause.clone()));
            }
        }
        if let Some(cb) = self
            .rules
            .complete_bet
            .as_ref()
            .filter(|cb| !cb.several_numbers)
        {
            let mut numbers = existing
                .iter()
                .copied()
                .chain(new)
                .filter_map(|p| match p.part_of {
                    Some(PartOf::Complete { number }) => Some(number),
                    _ => None,
                });
            if let Some(first) = numbers.next() {
                if let Some(other) = numbers.find(|&n| n != first) {
                    return Err(Refusal::new(
                        code::NOT_OFFERED,
                        format!(
                            "{} allows complete bets on one number per round: {first} and {other}",
                            self.plan.key()
                        ),
                    )
                    .clause(cb.clause.clone()));
                }
            }
        }
        Ok(())
    }

    /// Whether `number` can be a result: 0–36.
    pub fn validate_result(&self, number: u8) -> Result<(), Refusal> {
        if number > MAX_NUMBER {
            return Err(Refusal::new(
                code::INVALID_NUMBER,
                format!("{number} is not on the wheel (0 to {MAX_NUMBER})"),
            )
            .clause(self.rules.clause.clone()));
        }
        Ok(())
    }

    /// Whether a spin reported by the dealer system stands, by the plan's `valid_spin`: the
    /// ball thrown against the wheel's rotation (when the plan requires it) and at least
    /// `min_ball_revolutions` full revolutions. Every roulette plan has the rule (the format
    /// requires it; ALG's section has none, so its plan records the values as assumptions).
    pub fn spin_validity(&self, against_rotation: bool, revolutions: u8) -> SpinValidity {
        let rule = &self.rules.valid_spin;
        let reason = if rule.ball_against_rotation && !against_rotation {
            Some("the ball was thrown with the wheel's rotation, not against it".to_string())
        } else if revolutions < rule.min_ball_revolutions {
            Some(format!(
                "the ball went round {revolutions} times, fewer than the {} full revolutions of a valid spin",
                rule.min_ball_revolutions
            ))
        } else {
            None
        };
        match (reason, rule.on_invalid) {
            (None, _) => SpinValidity::Valid,
            (Some(reason), InvalidSpin::Respin) => SpinValidity::Respin {
                reason,
                clause: rule.clause.clone(),
            },
        }
    }

    /// Settles placements on `winning_number`: one [`Payout`] per placement, in the same
    /// order. A placement wins when its numbers cover the result: its stake comes back and it
    /// wins `stake × ratio` of the plan's `win` row, rounded by the plan's rule; otherwise it
    /// loses. The spot is re-read from the layout rather than trusted, so a placement read
    /// back from storage settles exactly as it was accepted.
    ///
    /// Every win is held to its bet type's `max_win` and `max_win_plus_stake`: a win above
    /// them is an error (`max_win_exceeded`), never capped. With the plan's limits placement
    /// keeps every win within them; the check is the settlement's own guarantee.
    pub fn settle(
        &self,
        placements: &[Placement],
        winning_number: u8,
    ) -> Result<Vec<Payout>, Refusal> {
        self.validate_result(winning_number)?;
        placements
            .iter()
            .map(|p| self.settle_one(p, winning_number))
            .collect()
    }

    fn settle_one(&self, p: &Placement, number: u8) -> Result<Payout, Refusal> {
        let row = self.row(&p.bet_type, None)?;
        let covered = covered_numbers(&p.bet_type, &p.spot)
            .filter(|c| *c == p.covered && p.stake_minor > 0 && p.spot == normalised(&p.spot))
            .ok_or_else(|| {
                Refusal::new(
                    code::INCONSISTENT_PLACEMENT,
                    format!(
                        "{} on {} covering {:?} with stake {} is not a placement of {}",
                        p.bet_type,
                        spot_label(&p.spot),
                        p.covered,
                        p.stake_minor,
                        self.plan.key()
                    ),
                )
            })?;
        if !covered.contains(&number) {
            return Ok(Payout::lose(p.stake_minor));
        }
        let payout_row = self
            .plan
            .payouts_for(&p.bet_type)
            .find(|r| r.outcome == "win")
            .filter(|r| r.ratio.is_some())
            .ok_or_else(|| {
                Refusal::new(
                    code::NO_PAYOUT_ROW,
                    format!("{} has no win payout for {}", self.plan.key(), p.bet_type),
                )
                .clause(row.clause.clone())
            })?;
        super::pay_row(
            self.plan,
            row,
            payout_row,
            p.stake_minor,
            &format!("{} on {}", p.bet_type, spot_label(&p.spot)),
        )
    }

    /// The component bets of a parsed bet, before limits.
    fn expand(&self, bet: &RouletteBet) -> Result<Vec<Draft>, Refusal> {
        let simple = |bet_type: &str, spot: Spot| -> Result<Vec<Draft>, Refusal> {
            let row = self.row(bet_type, None)?;
            let clause = self
                .plan
                .payouts_for(bet_type)
                .next()
                .map_or(&row.clause, |p| &p.clause);
            Ok(vec![Draft {
                bet_type: bet_type.to_string(),
                spot,
                units: 1,
                part_of: None,
                clause: clause.clone(),
            }])
        };
        match bet {
            RouletteBet::Inside { bet_type, numbers } => {
                simple(bet_type, Spot::Numbers(numbers.clone()))
            }
            RouletteBet::Outside { bet_type, field } => simple(bet_type, Spot::Field(*field)),
            RouletteBet::Announced { id } => {
                let a = self
                    .rules
                    .announced
                    .iter()
                    .find(|a| &a.id == id)
                    .ok_or_else(|| self.not_offered(&format!("the announced bet '{id}'")))?;
                let part_of = PartOf::Announced { id: id.clone() };
                Ok(a.components
                    .iter()
                    .map(|c| Draft {
                        bet_type: c.bet.clone(),
                        spot: Spot::Numbers(c.numbers.clone()),
                        units: c.units,
                        part_of: Some(part_of.clone()),
                        clause: a.clause.clone(),
                    })
                    .collect())
            }
            RouletteBet::Neighbours { number, each_side } => {
                let nb = self
                    .rules
                    .neighbours
                    .as_ref()
                    .ok_or_else(|| self.not_offered("the Neighbours bet"))?;
                let part_of = PartOf::Neighbours {
                    number: *number,
                    each_side: *each_side,
                };
                Ok(neighbours(*number, *each_side)
                    .into_iter()
                    .map(|n| Draft {
                        bet_type: "straight".into(),
                        spot: Spot::Numbers(vec![n]),
                        units: 1,
                        part_of: Some(part_of.clone()),
                        clause: nb.clause.clone(),
                    })
                    .collect())
            }
            RouletteBet::Complete { number } => {
                let cb = self
                    .rules
                    .complete_bet
                    .as_ref()
                    .ok_or_else(|| self.not_offered("the complete bet"))?;
                let part_of = PartOf::Complete { number: *number };
                Ok(complete_bet_components(*number, &cb.units)
                    .into_iter()
                    .map(|c| Draft {
                        bet_type: c.bet,
                        spot: Spot::Numbers(c.numbers),
                        units: c.units,
                        part_of: Some(part_of.clone()),
                        clause: cb.clause.clone(),
                    })
                    .collect())
            }
        }
    }

    /// Layout, stake × units and the bet type's limits of one component.
    fn check_component(&self, d: Draft, unit_stake_minor: i64) -> Result<Placement, Refusal> {
        let row = self.row(&d.bet_type, Some(&d.clause))?;
        let whose = match &d.part_of {
            None => String::new(),
            Some(p) => format!(" (a component of {})", part_label(p)),
        };
        let too_many = matches!(&d.spot, Spot::Numbers(n) if n.len() > MAX_INSIDE_NUMBERS);
        let covered = (!too_many)
            .then(|| covered_numbers(&d.bet_type, &d.spot))
            .flatten()
            .ok_or_else(|| {
                let what = match &d.spot {
                    Spot::Numbers(n) if too_many => format!("{} numbers", n.len()),
                    Spot::Numbers(n) => format!("{n:?}"),
                    Spot::Field(f) => format!("the field {}", f.as_str()),
                };
                Refusal::new(
                    code::INVALID_LAYOUT,
                    format!(
                        "{what} is not a {} on the single-zero layout{whose}",
                        d.bet_type
                    ),
                )
                .clause(d.clause.clone())
            })?;
        let stake_minor = unit_stake_minor
            .checked_mul(i64::from(d.units))
            .ok_or_else(|| {
                Refusal::new(
                    code::STAKE_OVERFLOW,
                    format!(
                        "{} units of {} minor units on {} do not fit in 64-bit minor units{whose}",
                        d.units, unit_stake_minor, d.bet_type
                    ),
                )
            })?;
        let spot = normalised(&d.spot);
        if stake_minor < row.min_bet || stake_minor > row.max_bet {
            let (code, bound, limit) = if stake_minor < row.min_bet {
                (code::BELOW_MIN_BET, "below the minimum", row.min_bet)
            } else {
                (code::ABOVE_MAX_BET, "above the maximum", row.max_bet)
            };
            let units = if d.units == 1 {
                String::new()
            } else {
                format!(" ({} units of {})", d.units, self.money(unit_stake_minor))
            };
            return Err(Refusal::new(
                code,
                format!(
                    "a stake of {}{units} on {} {}{whose} is {bound} bet {} for {} in {}",
                    self.money(stake_minor),
                    d.bet_type,
                    spot_label(&spot),
                    self.money(limit),
                    row.label,
                    self.plan.key()
                ),
            )
            .clause(row.clause.clone()));
        }
        Ok(Placement {
            bet_type: d.bet_type,
            spot,
            covered,
            stake_minor,
            units: d.units,
            part_of: d.part_of,
        })
    }

    /// The limits row of a bet type; a type the plan does not declare is not offered (cited
    /// with `clause`, the combined bet that names it, when there is one).
    fn row(&self, bet_type: &str, clause: Option<&str>) -> Result<&'p BetType, Refusal> {
        self.plan.bet(bet_type).ok_or_else(|| {
            let r = self.not_offered(&format!("the bet type '{bet_type}'"));
            match clause {
                Some(c) => r.clause(c),
                None => r,
            }
        })
    }

    fn not_offered(&self, what: &str) -> Refusal {
        Refusal::new(
            code::NOT_OFFERED,
            format!(
                "{} does not offer {what}; it offers {}",
                self.plan.key(),
                self.offered().join(", ")
            ),
        )
        .clause(self.rules.clause.clone())
    }

    /// Every `bet` a request to this plan may name.
    fn offered(&self) -> Vec<&str> {
        let mut out: Vec<&str> = self.plan.bets.iter().map(|b| b.id.as_str()).collect();
        out.extend(self.rules.announced.iter().map(|a| a.id.as_str()));
        if self.rules.neighbours.is_some() {
            out.push(NEIGHBOURS_BET);
        }
        if self.rules.complete_bet.is_some() {
            out.push(COMPLETE_BET);
        }
        out
    }

    fn only_fields(&self, req: &RouletteBetRequest, allowed: &[&str]) -> Result<(), Refusal> {
        let given = [
            ("numbers", req.numbers.is_some()),
            ("field", req.field.is_some()),
            ("number", req.number.is_some()),
            ("neighbours", req.neighbours.is_some()),
        ];
        match given
            .iter()
            .find(|(name, present)| *present && !allowed.contains(name))
        {
            Some((name, _)) => Err(Refusal::new(
                code::UNEXPECTED_FIELD,
                format!(
                    "a '{}' bet does not take '{name}'{}",
                    req.bet,
                    if allowed.is_empty() {
                        String::new()
                    } else {
                        format!(" (it takes {})", allowed.join(", "))
                    }
                ),
            )),
            None => Ok(()),
        }
    }

    fn number_on_wheel(&self, number: Option<u8>) -> Result<u8, Refusal> {
        let n =
            number.ok_or_else(|| Refusal::new(code::MISSING_FIELD, "the bet needs a 'number'"))?;
        self.validate_result(n)?;
        Ok(n)
    }

    fn money(&self, minor: i64) -> Money {
        Money::new(minor, self.plan.plan.currency)
    }
}

/// The sum of the stakes, for the wallet debit; `None` on overflow.
pub fn total_stake_minor(placements: &[Placement]) -> Option<i64> {
    placements
        .iter()
        .try_fold(0i64, |sum, p| sum.checked_add(p.stake_minor))
}

fn missing(bet: &str, field: &str) -> Refusal {
    Refusal::new(
        code::MISSING_FIELD,
        format!("a '{bet}' bet needs '{field}'"),
    )
}

/// Inside numbers ascending (the order they were sent in is not part of the bet).
fn normalised(spot: &Spot) -> Spot {
    match spot {
        Spot::Numbers(n) => {
            let mut n = n.clone();
            n.sort_unstable();
            Spot::Numbers(n)
        }
        Spot::Field(f) => Spot::Field(*f),
    }
}

/// `17-20` or `dozen_2`, for messages.
fn spot_label(spot: &Spot) -> String {
    match spot {
        Spot::Numbers(n) => n.iter().map(u8::to_string).collect::<Vec<_>>().join("-"),
        Spot::Field(f) => f.as_str().to_string(),
    }
}

fn part_label(p: &PartOf) -> String {
    match p {
        PartOf::Announced { id } => format!("the announced bet '{id}'"),
        PartOf::Neighbours { number, each_side } => {
            format!("Neighbours of {number} with {each_side} on each side")
        }
        PartOf::Complete { number } => format!("the complete bet on {number}"),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::games::refs;

    use serde_json::json;

    use super::*;
    use crate::plan::registry::load_file;
    use crate::plan::rules::roulette::inside_placements;

    const PLANS: [&str; 3] = ["evolution-roulette", "synot-roulette", "alg-roulette"];
    const LIMITS: &str = "Tabulka nejvyšších sázek a odvislých nejvyšších výher";

    fn plan(id: &str) -> Plan {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("game_plans");
        load_file(
            &dir.join(format!("{id}@1.toml")),
            Some(&dir.join("sources")),
        )
        .unwrap_or_else(|f| panic!("{id} loads: {f:?}"))
        .plan
    }

    fn engine(p: &Plan) -> RouletteEngine<'_> {
        RouletteEngine::new(p).expect("a roulette plan")
    }

    fn req(v: serde_json::Value) -> RouletteBetRequest {
        serde_json::from_value(v).expect("a well-formed request")
    }

    fn place(e: &RouletteEngine, v: serde_json::Value) -> Vec<Placement> {
        let r = req(v.clone());
        e.place(&r)
            .unwrap_or_else(|x| panic!("{v} is accepted: {x}"))
    }

    fn refused(e: &RouletteEngine, v: serde_json::Value) -> Refusal {
        let r = req(v.clone());
        e.place(&r).expect_err(&format!("{v} is refused"))
    }

    /// What the wallet is credited (stakes returned plus wins) when `number` comes up.
    fn credited(e: &RouletteEngine, ps: &[Placement], number: u8) -> i64 {
        e.settle(ps, number)
            .expect("settles")
            .iter()
            .map(Payout::total_minor)
            .sum()
    }

    /// The document's "Výplatní tabulka", read off the document, not the plan.
    fn document_ratio(bet: &str) -> i64 {
        match bet {
            "straight" => 35,
            "split" => 17,
            "street" => 11,
            "corner" => 8,
            "line" => 5,
            "dozen" | "column" => 2,
            "red_black" | "even_odd" | "low_high" => 1,
            other => panic!("no ratio for {other}"),
        }
    }

    /// A request for every spot of bet type `bet`, with `stake_minor`.
    fn every_spot(bet: &str, stake_minor: i64) -> Vec<serde_json::Value> {
        if is_inside(bet) {
            inside_placements(bet)
                .into_iter()
                .map(|n| json!({"bet": bet, "numbers": n, "stake_minor": stake_minor}))
                .collect()
        } else {
            OutsideField::ALL
                .into_iter()
                .filter(|f| f.bet() == bet)
                .map(|f| json!({"bet": bet, "field": f, "stake_minor": stake_minor}))
                .collect()
        }
    }

    /// For every bet type of every plan, every spot and every number: the bet wins exactly
    /// when the number is among those it covers, and then pays the document's ratio to the
    /// haléř on top of the returned stake.
    #[test]
    fn every_bet_pays_its_document_ratio_exactly_when_the_number_is_covered() {
        for id in PLANS {
            let p = plan(id);
            let e = engine(&p);
            assert_eq!(p.bets.len(), 10, "{id}");
            for row in &p.bets {
                let ratio = document_ratio(&row.id);
                for v in every_spot(&row.id, 100) {
                    let ps = place(&e, v.clone());
                    assert_eq!(ps.len(), 1);
                    let covered = ps[0].covered.clone();
                    // A bet on k numbers pays 36/k − 1: the document's ratios fit the layout.
                    assert_eq!(covered.len() as i64 * (ratio + 1), 36, "{id} {v}");
                    for number in 0..=MAX_NUMBER {
                        let got = e.settle(&ps, number).expect("settles");
                        let want = if covered.contains(&number) {
                            Payout {
                                stake_minor: 100,
                                returned_minor: 100,
                                win_minor: 100 * ratio,
                                outcome: "win".into(),
                            }
                        } else {
                            Payout::lose(100)
                        };
                        assert_eq!(got, vec![want], "{id} {v} on {number}");
                    }
                }
            }
        }
    }

    #[test]
    fn straight_up_pays_35_to_1_and_returns_the_stake() {
        let p = plan("evolution-roulette");
        let e = engine(&p);
        let ps = place(
            &e,
            json!({"bet": "straight", "numbers": [17], "stake_minor": 100}),
        );
        assert_eq!(
            e.settle(&ps, 17).expect("settles"),
            vec![Payout {
                stake_minor: 100,
                returned_minor: 100,
                win_minor: 3_500,
                outcome: "win".into()
            }]
        );
        assert_eq!(e.settle(&ps, 18).expect("settles"), vec![Payout::lose(100)]);
    }

    /// The document's worked example: 100 Kč on 0, on red and on the middle column; red 14
    /// wins "100,00 Kč x 0 + 100,00 Kč x 1 + 100,00 Kč x 2, tj. 300,00 Kč".
    #[test]
    fn document_example_red_14_wins_300_kc_on_0_red_and_middle_column() {
        for id in PLANS {
            let p = plan(id);
            let e = engine(&p);
            let mut ps = place(
                &e,
                json!({"bet": "straight", "numbers": [0], "stake_minor": 10_000}),
            );
            ps.extend(place(
                &e,
                json!({"bet": "red_black", "field": "red", "stake_minor": 10_000}),
            ));
            ps.extend(place(
                &e,
                json!({"bet": "column", "field": "column_2", "stake_minor": 10_000}),
            ));
            let payouts = e.settle(&ps, 14).expect("settles");
            let win: i64 = payouts.iter().map(|x| x.win_minor).sum();
            assert_eq!(win, 30_000, "{id}");
            assert_eq!(
                credited(&e, &ps, 14),
                50_000,
                "{id}: 300 Kč won + 200 Kč returned"
            );
        }
    }

    #[test]
    fn zero_loses_every_outside_bet() {
        let p = plan("evolution-roulette");
        let e = engine(&p);
        for f in OutsideField::ALL {
            let ps = place(&e, json!({"bet": f.bet(), "field": f, "stake_minor": 500}));
            assert_eq!(
                e.settle(&ps, 0).expect("settles"),
                vec![Payout::lose(500)],
                "{f:?}"
            );
        }
    }

    #[test]
    fn zero_wins_the_zero_splits_streets_and_corner() {
        let p = plan("synot-roulette");
        let e = engine(&p);
        for (bet, numbers, win) in [
            ("split", vec![0, 1], 1_700),
            ("split", vec![2, 0], 1_700),
            ("split", vec![0, 3], 1_700),
            ("street", vec![0, 1, 2], 1_100),
            ("street", vec![0, 2, 3], 1_100),
            ("corner", vec![0, 1, 2, 3], 800),
        ] {
            let ps = place(
                &e,
                json!({"bet": bet, "numbers": numbers, "stake_minor": 100}),
            );
            let got = e.settle(&ps, 0).expect("settles");
            assert_eq!(
                (got[0].returned_minor, got[0].win_minor),
                (100, win),
                "{bet} {numbers:?}"
            );
        }
    }

    /// Components and units exactly as each plan lists them: Tier 6 splits, Orphelins 1
    /// straight + 4 splits, Voisins 9 units over 7 bets, Zero 4.
    #[test]
    fn announced_bets_expand_exactly_as_the_plan_lists_them() {
        for id in PLANS {
            let p = plan(id);
            let e = engine(&p);
            let GameRules::Roulette(rules) = &p.rules else {
                unreachable!("a roulette plan")
            };
            for (announced, components, units) in [
                ("tier", 6, 6),
                ("orphelins", 5, 5),
                ("voisins", 7, 9),
                ("zero", 4, 4),
            ] {
                let ps = place(&e, json!({"bet": announced, "stake_minor": 100}));
                assert_eq!(ps.len(), components, "{id} {announced}");
                assert_eq!(
                    ps.iter().map(|x| u32::from(x.units)).sum::<u32>(),
                    units,
                    "{id} {announced}"
                );
                let listed = &rules
                    .announced
                    .iter()
                    .find(|a| a.id == announced)
                    .expect("declared")
                    .components;
                for (placed, c) in ps.iter().zip(listed) {
                    let mut numbers = c.numbers.clone();
                    numbers.sort_unstable();
                    assert_eq!(placed.bet_type, c.bet);
                    assert_eq!(placed.spot, Spot::Numbers(numbers.clone()));
                    assert_eq!(placed.covered, numbers);
                    assert_eq!(placed.units, c.units);
                    assert_eq!(placed.stake_minor, 100 * i64::from(c.units));
                    assert_eq!(
                        placed.part_of,
                        Some(PartOf::Announced {
                            id: announced.into()
                        })
                    );
                }
                assert_eq!(total_stake_minor(&ps), Some(100 * i64::from(units)));
            }
        }
    }

    /// Worked by hand with 1 Kč a unit: a winning split returns 1 + 17, a street 1 + 11, a
    /// straight 1 + 35, a corner 1 + 8 per unit.
    #[test]
    fn announced_bets_settle_component_by_component() {
        let p = plan("evolution-roulette");
        let e = engine(&p);
        let bet = |id: &str| place(&e, json!({"bet": id, "stake_minor": 100}));
        // Voisins on 0: only the street 0-2-3, 2 units: 200 back + 200 × 11.
        assert_eq!(credited(&e, &bet("voisins"), 0), 200 + 2_200);
        // Voisins on 26: only the corner 25-26-28-29, 2 units: 200 back + 200 × 8.
        assert_eq!(credited(&e, &bet("voisins"), 26), 200 + 1_600);
        // Voisins on 12: the split 12-15: 100 + 1 700.
        assert_eq!(credited(&e, &bet("voisins"), 12), 1_800);
        assert_eq!(credited(&e, &bet("voisins"), 1), 0);
        // Tier on 5: the split 5-8.
        assert_eq!(credited(&e, &bet("tier"), 5), 1_800);
        assert_eq!(credited(&e, &bet("tier"), 0), 0);
        // Orphelins on 17: both splits 14-17 and 17-20 win.
        assert_eq!(credited(&e, &bet("orphelins"), 17), 3_600);
        // Orphelins on 1: the straight.
        assert_eq!(credited(&e, &bet("orphelins"), 1), 3_600);
        // Zero on 26: the straight; on 0 and 3: the split 0-3.
        assert_eq!(credited(&e, &bet("zero"), 26), 3_600);
        assert_eq!(credited(&e, &bet("zero"), 0), 1_800);
        assert_eq!(credited(&e, &bet("zero"), 3), 1_800);
        assert_eq!(credited(&e, &bet("zero"), 7), 0);
    }

    #[test]
    fn neighbours_2_of_0_are_straights_on_3_26_0_32_15() {
        for id in PLANS {
            let p = plan(id);
            let e = engine(&p);
            let ps = place(
                &e,
                json!({"bet": "neighbours", "number": 0, "neighbours": 2, "stake_minor": 100}),
            );
            let on: Vec<Vec<u8>> = ps.iter().map(|x| x.covered.clone()).collect();
            assert_eq!(on, [[3], [26], [0], [32], [15]], "{id}");
            assert!(ps
                .iter()
                .all(|x| x.bet_type == "straight" && x.stake_minor == 100));
            assert_eq!(credited(&e, &ps, 32), 3_600);
            assert_eq!(credited(&e, &ps, 19), 0);
            // "Při zvolení 9 sousedních čísel bude celková sázka na 19 čísel."
            let nine = place(
                &e,
                json!({"bet": "neighbours", "number": 5, "neighbours": 9, "stake_minor": 100}),
            );
            assert_eq!(nine.len(), 19);
        }
    }

    #[test]
    fn neighbours_outside_the_plans_range_are_refused() {
        for (id, clause) in [
            ("evolution-roulette", "Racetrack › funkce Neighbours"),
            ("synot-roulette", "Racetrack"),
            ("alg-roulette", "Racetrack › funkce Neighbours"),
        ] {
            let p = plan(id);
            let e = engine(&p);
            let r = refused(
                &e,
                json!({"bet": "neighbours", "number": 0, "neighbours": 10, "stake_minor": 100}),
            );
            assert_eq!(r.code, code::NEIGHBOURS_OUT_OF_RANGE, "{id}");
            assert_eq!(r.clause.as_deref(), Some(clause), "{id}");
            assert!(
                r.message.contains("10") && r.message.contains("0 to 9"),
                "{}",
                r.message
            );
        }
    }

    #[test]
    fn neighbours_are_refused_where_the_plan_has_none() {
        let mut p = plan("evolution-roulette");
        if let GameRules::Roulette(r) = &mut p.rules {
            r.neighbours = None;
        }
        let e = engine(&p);
        let r = refused(
            &e,
            json!({"bet": "neighbours", "number": 0, "neighbours": 1, "stake_minor": 100}),
        );
        assert_eq!(r.code, code::NOT_OFFERED);
    }

    /// 17: 1 straight + 4 splits × 2 + 1 street × 3 + 4 corners × 4 + 2 lines × 6 = 40 chips.
    /// When 17 comes up every component returns 36 chips per chip staked divided by the
    /// numbers it covers: straight 1 × 36 + splits 8 × 18 + street 3 × 12 + corners 16 × 9 +
    /// lines 12 × 6 = 36 + 144 + 36 + 144 + 72 = 432 chips.
    #[test]
    fn complete_bet_on_17_places_40_chips_and_on_0_17_chips() {
        let p = plan("alg-roulette");
        let e = engine(&p);
        let on17 = place(
            &e,
            json!({"bet": "complete", "number": 17, "stake_minor": 100}),
        );
        assert_eq!(on17.len(), 12);
        assert_eq!(total_stake_minor(&on17), Some(4_000));
        assert!(
            on17.iter()
                .all(|x| x.covered.contains(&17)
                    && x.part_of == Some(PartOf::Complete { number: 17 }))
        );
        assert_eq!(credited(&e, &on17, 17), 43_200);
        // 20 is on the split 17-20, the corners 16-17-19-20 and 17-18-20-21 and the line
        // 16…21: 2 × 18 + 4 × 9 × 2 + 6 × 6 = 36 + 72 + 36 = 144 chips.
        assert_eq!(credited(&e, &on17, 20), 14_400);
        assert_eq!(credited(&e, &on17, 0), 0);

        let on0 = place(
            &e,
            json!({"bet": "complete", "number": 0, "stake_minor": 100}),
        );
        assert_eq!(on0.len(), 7);
        assert_eq!(total_stake_minor(&on0), Some(1_700));
        // straight 36 + splits 3 × 2 × 18 + streets 2 × 3 × 12 + corner 4 × 9 = 252 chips.
        assert_eq!(credited(&e, &on0, 0), 25_200);
    }

    #[test]
    fn complete_bet_is_refused_where_the_plan_has_none() {
        for id in ["evolution-roulette", "synot-roulette"] {
            let p = plan(id);
            let e = engine(&p);
            let r = refused(
                &e,
                json!({"bet": "complete", "number": 17, "stake_minor": 100}),
            );
            assert_eq!(r.code, code::NOT_OFFERED, "{id}");
            assert!(r.clause.is_some());
        }
    }

    /// "Sázka se provede s hodnotou zvoleného žetonu podle limitů konkrétního typu sázky":
    /// a chip of 10 000 Kč puts exactly the maximum on the straight and on every 6-chip line.
    #[test]
    fn complete_bet_chip_is_held_to_each_component_types_limits() {
        let p = plan("alg-roulette");
        let e = engine(&p);
        let ps = place(
            &e,
            json!({"bet": "complete", "number": 17, "stake_minor": 1_000_000}),
        );
        let line = ps.iter().find(|x| x.bet_type == "line").expect("a line");
        assert_eq!((line.units, line.stake_minor), (6, 6_000_000));
        let r = refused(
            &e,
            json!({"bet": "complete", "number": 17, "stake_minor": 1_000_001}),
        );
        assert_eq!(r.code, code::ABOVE_MAX_BET);
        assert_eq!(r.clause.as_deref(), Some(LIMITS));
        assert!(r.message.contains("complete bet on 17"), "{}", r.message);
    }

    #[test]
    fn stakes_below_min_or_above_max_are_refused_with_the_limits_clause() {
        let p = plan("evolution-roulette");
        let e = engine(&p);
        let r = refused(
            &e,
            json!({"bet": "straight", "numbers": [17], "stake_minor": 99}),
        );
        assert_eq!(r.code, code::BELOW_MIN_BET);
        assert_eq!(r.clause.as_deref(), Some(LIMITS));
        assert!(
            r.message.contains("0,99 CZK") && r.message.contains("1,00 CZK"),
            "{}",
            r.message
        );
        place(
            &e,
            json!({"bet": "straight", "numbers": [17], "stake_minor": 1_000_000}),
        );
        let r = refused(
            &e,
            json!({"bet": "straight", "numbers": [17], "stake_minor": 1_000_001}),
        );
        assert_eq!(r.code, code::ABOVE_MAX_BET);
        assert_eq!(r.clause.as_deref(), Some(LIMITS));
        assert!(r.message.contains("10 000,00 CZK"), "{}", r.message);
        // The same dozen stake is within Evolution's 120 000 Kč and above SYNOT's 65 000 Kč.
        let dozen = json!({"bet": "dozen", "field": "dozen_1", "stake_minor": 6_500_001});
        place(&e, dozen.clone());
        let synot = plan("synot-roulette");
        let r = refused(&engine(&synot), dozen);
        assert_eq!(r.code, code::ABOVE_MAX_BET);
        // A component below the minimum: Tier at 0,50 Kč a unit.
        let r = refused(&e, json!({"bet": "tier", "stake_minor": 50}));
        assert_eq!(r.code, code::BELOW_MIN_BET);
        assert_eq!(r.clause.as_deref(), Some(LIMITS));
    }

    /// Voisins puts 2 units on the street 0-2-3 (max 30 000 Kč): 15 000 Kč a unit at most.
    #[test]
    fn voisins_unit_is_held_to_the_street_limit_for_its_two_units() {
        let p = plan("evolution-roulette");
        let e = engine(&p);
        place(&e, json!({"bet": "voisins", "stake_minor": 1_500_000}));
        let r = refused(&e, json!({"bet": "voisins", "stake_minor": 1_500_001}));
        assert_eq!(r.code, code::ABOVE_MAX_BET);
        assert!(r.message.contains("street 0-2-3"), "{}", r.message);
    }

    #[test]
    fn cumulative_stake_on_one_spot_is_held_to_the_max_bet() {
        let p = plan("evolution-roulette");
        let e = engine(&p);
        let first = place(
            &e,
            json!({"bet": "straight", "numbers": [17], "stake_minor": 600_000}),
        );
        e.check_cumulative(&[], &first)
            .expect("alone within the limit");
        let again = place(
            &e,
            json!({"bet": "straight", "numbers": [17], "stake_minor": 600_000}),
        );
        let r = e
            .check_cumulative(&refs(&first), &again)
            .expect_err("12 000 Kč on 17");
        assert_eq!(r.code, code::ABOVE_MAX_BET);
        assert_eq!(r.clause.as_deref(), Some(LIMITS));
        assert!(r.message.contains("12 000,00 CZK"), "{}", r.message);
        // Another spot, or another bet type over the same number, is another bet.
        let other = place(
            &e,
            json!({"bet": "straight", "numbers": [18], "stake_minor": 600_000}),
        );
        e.check_cumulative(&refs(&first), &other)
            .expect("another number");
        let split = place(
            &e,
            json!({"bet": "split", "numbers": [17, 20], "stake_minor": 600_000}),
        );
        e.check_cumulative(&refs(&first), &split)
            .expect("another bet type");
        // The order the numbers are sent in does not make another spot.
        let a = place(
            &e,
            json!({"bet": "split", "numbers": [20, 17], "stake_minor": 1_500_000}),
        );
        assert!(e.check_cumulative(&refs(&split), &a).is_err());
        // Zero and Voisins both put a split on 12-15: 10 000 + 11 000 Kč > 20 000 Kč.
        let zero = place(&e, json!({"bet": "zero", "stake_minor": 1_000_000}));
        let voisins = place(&e, json!({"bet": "voisins", "stake_minor": 1_100_000}));
        let r = e
            .check_cumulative(&refs(&zero), &voisins)
            .expect_err("split 12-15 twice");
        assert!(r.message.contains("12-15"), "{}", r.message);
        let voisins = place(&e, json!({"bet": "voisins", "stake_minor": 1_000_000}));
        e.check_cumulative(&refs(&zero), &voisins)
            .expect("20 000 Kč on 12-15 is the maximum");
    }

    #[test]
    fn complete_bets_on_several_numbers_need_several_numbers_allowed() {
        let mut p = plan("alg-roulette");
        let e = engine(&p);
        let on17 = place(
            &e,
            json!({"bet": "complete", "number": 17, "stake_minor": 100}),
        );
        let on5 = place(
            &e,
            json!({"bet": "complete", "number": 5, "stake_minor": 100}),
        );
        e.check_cumulative(&refs(&on17), &on5)
            .expect("ALG: 'na jedno i více čísel'");
        if let GameRules::Roulette(r) = &mut p.rules {
            r.complete_bet.as_mut().expect("ALG has it").several_numbers = false;
        }
        let e = engine(&p);
        let r = e
            .check_cumulative(&refs(&on17), &on5)
            .expect_err("one number only");
        assert_eq!(r.code, code::NOT_OFFERED);
        e.check_cumulative(&refs(&on17), &on17)
            .expect("the same number again");
    }

    #[test]
    fn invalid_layouts_are_refused() {
        let p = plan("evolution-roulette");
        let e = engine(&p);
        for (bet, numbers) in [
            ("split", vec![1, 5]),
            ("split", vec![3, 4]),
            ("split", vec![17, 17]),
            ("street", vec![2, 3, 4]),
            ("corner", vec![1, 2, 3, 5]),
            ("line", vec![0, 1, 2, 3, 4, 5]),
            ("line", (1..=7).collect()),
            ("straight", vec![37]),
            ("straight", vec![]),
            ("straight", vec![0; 1000]),
        ] {
            let r = refused(
                &e,
                json!({"bet": bet, "numbers": numbers, "stake_minor": 100}),
            );
            assert_eq!(r.code, code::INVALID_LAYOUT, "{bet} {numbers:?}");
            assert_eq!(
                r.clause.as_deref(),
                Some("Výplatní tabulka › Vnitřní sázka (Inside bet)"),
                "{bet}"
            );
        }
        let r = refused(
            &e,
            json!({"bet": "dozen", "field": "red", "stake_minor": 100}),
        );
        assert_eq!(r.code, code::INVALID_LAYOUT);
        assert_eq!(
            r.clause.as_deref(),
            Some("Výplatní tabulka › Vnější sázky (Outside bet)")
        );
    }

    #[test]
    fn malformed_requests_are_refused_with_a_stable_code() {
        let p = plan("evolution-roulette");
        let e = engine(&p);
        for (v, c) in [
            (
                json!({"bet": "straight", "numbers": [1], "stake_minor": 0}),
                code::BAD_STAKE,
            ),
            (
                json!({"bet": "red_black", "field": "red", "stake_minor": -100}),
                code::BAD_STAKE,
            ),
            (
                json!({"bet": "basket", "numbers": [0, 1, 2, 3], "stake_minor": 100}),
                code::UNKNOWN_BET_TYPE,
            ),
            (
                json!({"bet": "dozen", "numbers": [1], "field": "dozen_1", "stake_minor": 100}),
                code::UNEXPECTED_FIELD,
            ),
            (
                json!({"bet": "split", "stake_minor": 100}),
                code::MISSING_FIELD,
            ),
            (
                json!({"bet": "dozen", "stake_minor": 100}),
                code::MISSING_FIELD,
            ),
            (
                json!({"bet": "voisins", "number": 0, "stake_minor": 100}),
                code::UNEXPECTED_FIELD,
            ),
            (
                json!({"bet": "neighbours", "number": 0, "stake_minor": 100}),
                code::MISSING_FIELD,
            ),
            (
                json!({"bet": "neighbours", "neighbours": 1, "stake_minor": 100}),
                code::MISSING_FIELD,
            ),
            (
                json!({"bet": "neighbours", "number": 37, "neighbours": 1, "stake_minor": 100}),
                code::INVALID_NUMBER,
            ),
            (
                json!({"bet": "voisins", "stake_minor": i64::MAX}),
                code::STAKE_OVERFLOW,
            ),
        ] {
            assert_eq!(refused(&e, v.clone()).code, c, "{v}");
        }
        // Shapes that are not a request at all never reach the engine.
        for v in [
            json!({"bet": "dozen", "field": "dozen_4", "stake_minor": 100}),
            json!({"bet": "straight", "numbers": [1], "stake_minor": 100, "player": "x"}),
            json!({"bet": "straight", "numbers": [256], "stake_minor": 100}),
            json!({"bet": "straight", "numbers": [1], "stake_minor": 1.5}),
        ] {
            assert!(
                serde_json::from_value::<RouletteBetRequest>(v.clone()).is_err(),
                "{v}"
            );
        }
    }

    #[test]
    fn documented_request_examples_are_accepted() {
        let p = plan("alg-roulette");
        let e = engine(&p);
        for line in [
            r#"{"bet": "straight", "numbers": [17], "stake_minor": 10000}"#,
            r#"{"bet": "split", "numbers": [0, 3], "stake_minor": 10000}"#,
            r#"{"bet": "corner", "numbers": [17, 18, 20, 21], "stake_minor": 10000}"#,
            r#"{"bet": "column", "field": "column_2", "stake_minor": 10000}"#,
            r#"{"bet": "red_black", "field": "red", "stake_minor": 10000}"#,
            r#"{"bet": "voisins", "stake_minor": 10000}"#,
            r#"{"bet": "neighbours", "number": 0, "neighbours": 2, "stake_minor": 10000}"#,
            r#"{"bet": "complete", "number": 17, "stake_minor": 10000}"#,
        ] {
            let r: RouletteBetRequest = serde_json::from_str(line).expect(line);
            e.place(&r).unwrap_or_else(|x| panic!("{line}: {x}"));
        }
    }

    #[test]
    fn a_spin_is_valid_only_against_the_rotation_with_3_full_revolutions() {
        for id in PLANS {
            let p = plan(id);
            let e = engine(&p);
            assert_eq!(e.spin_validity(true, 3), SpinValidity::Valid, "{id}");
            assert_eq!(e.spin_validity(true, 12), SpinValidity::Valid, "{id}");
            for (against, revolutions) in [(true, 2), (true, 0), (false, 5)] {
                match e.spin_validity(against, revolutions) {
                    SpinValidity::Respin { clause, .. } => {
                        assert!(!clause.is_empty(), "{id}")
                    }
                    SpinValidity::Valid => panic!("{id}: {against} {revolutions} is valid"),
                }
            }
        }
        let p = plan("evolution-roulette");
        assert_eq!(
            engine(&p).spin_validity(true, 2),
            SpinValidity::Respin {
                reason:
                    "the ball went round 2 times, fewer than the 3 full revolutions of a valid spin"
                        .into(),
                clause: "Pravidlo platného roztočení rulety".into()
            }
        );
    }

    #[test]
    fn results_are_0_to_36() {
        let p = plan("evolution-roulette");
        let e = engine(&p);
        for n in 0..POCKETS {
            e.validate_result(n).expect("on the wheel");
        }
        assert_eq!(
            e.validate_result(37).expect_err("off").code,
            code::INVALID_NUMBER
        );
        let ps = place(
            &e,
            json!({"bet": "straight", "numbers": [1], "stake_minor": 100}),
        );
        assert_eq!(
            e.settle(&ps, 37).expect_err("off").code,
            code::INVALID_NUMBER
        );
    }

    /// A plan whose max win is below what its max bet can win (never admitted by lint): the
    /// settlement refuses to pay rather than capping.
    #[test]
    fn a_win_above_the_plans_max_win_is_an_error_not_capped() {
        let mut p = plan("evolution-roulette");
        let row = p.bets.iter_mut().find(|b| b.id == "straight").expect("row");
        row.max_win = 34_999_999;
        let e = engine(&p);
        let ps = place(
            &e,
            json!({"bet": "straight", "numbers": [17], "stake_minor": 1_000_000}),
        );
        let r = e
            .settle(&ps, 17)
            .expect_err("35 × 10 000 Kč > 349 999,99 Kč");
        assert_eq!(r.code, code::MAX_WIN_EXCEEDED);
        assert_eq!(r.clause.as_deref(), Some(LIMITS));
        // A losing spin pays nothing, so nothing to refuse; a smaller stake is within it.
        e.settle(&ps, 18).expect("loses");
        let small = place(
            &e,
            json!({"bet": "straight", "numbers": [17], "stake_minor": 100}),
        );
        e.settle(&small, 17).expect("within");

        // The same with stake + win: max_win_plus_stake one haléř short.
        let mut p = plan("evolution-roulette");
        let row = p
            .bets
            .iter_mut()
            .find(|b| b.id == "red_black")
            .expect("row");
        row.max_win_plus_stake -= 1;
        let e = engine(&p);
        let ps = place(
            &e,
            json!({"bet": "red_black", "field": "red", "stake_minor": 20_000_000}),
        );
        assert_eq!(
            e.settle(&ps, 1).expect_err("over").code,
            code::MAX_WIN_EXCEEDED
        );
    }

    #[test]
    fn every_plans_max_bet_wins_exactly_its_max_win() {
        for id in PLANS {
            let p = plan(id);
            let e = engine(&p);
            for row in &p.bets {
                let v = every_spot(&row.id, row.max_bet).swap_remove(0);
                let ps = place(&e, v);
                let n = ps[0].covered[0];
                let got = e.settle(&ps, n).expect("within the plan's max win");
                assert_eq!(got[0].win_minor, row.max_win, "{id} {}", row.id);
            }
        }
    }

    #[test]
    fn settlement_refuses_a_placement_the_engine_would_not_make() {
        let p = plan("evolution-roulette");
        let e = engine(&p);
        let ps = place(
            &e,
            json!({"bet": "split", "numbers": [17, 20], "stake_minor": 100}),
        );
        let mut bad = ps.clone();
        bad[0].covered = vec![17, 20, 23];
        assert_eq!(
            e.settle(&bad, 23).expect_err("tampered").code,
            code::INCONSISTENT_PLACEMENT
        );
        let mut bad = ps.clone();
        bad[0].bet_type = "straight".into();
        assert_eq!(
            e.settle(&bad, 17).expect_err("tampered").code,
            code::INCONSISTENT_PLACEMENT
        );
        let mut bad = ps;
        bad[0].stake_minor = -100;
        assert_eq!(
            e.settle(&bad, 1).expect_err("tampered").code,
            code::INCONSISTENT_PLACEMENT
        );
    }

    #[test]
    fn placements_read_back_from_json_settle_the_same() {
        let p = plan("alg-roulette");
        let e = engine(&p);
        let mut ps = place(
            &e,
            json!({"bet": "complete", "number": 0, "stake_minor": 100}),
        );
        ps.extend(place(
            &e,
            json!({"bet": "low_high", "field": "low", "stake_minor": 100}),
        ));
        ps.extend(place(
            &e,
            json!({"bet": "neighbours", "number": 7, "neighbours": 1, "stake_minor": 100}),
        ));
        let text = serde_json::to_string(&ps).expect("serialises");
        let back: Vec<Placement> = serde_json::from_str(&text).expect("reads back");
        assert_eq!(back, ps);
        for n in 0..POCKETS {
            assert_eq!(e.settle(&back, n), e.settle(&ps, n));
        }
        assert!(
            text.contains(r#""part_of":{"kind":"complete","number":0}"#),
            "{text}"
        );
        assert!(text.contains(r#""spot":"low""#), "{text}");
    }

    #[test]
    fn non_roulette_plans_are_refused() {
        let p = plan("evolution-blackjack");
        let r = RouletteEngine::new(&p).expect_err("a blackjack plan");
        assert_eq!(r.code, code::WRONG_FAMILY);
    }

    /// Every bet of every plan returns, over the 37 numbers, exactly 36 times its stake: the
    /// return to player of each is 36/37, in integers, with no rounding anywhere.
    #[test]
    fn every_bet_returns_36_of_every_37_units_staked() {
        for id in PLANS {
            let p = plan(id);
            let e = engine(&p);
            let GameRules::Roulette(rules) = &p.rules else {
                unreachable!("a roulette plan")
            };
            let mut requests: Vec<serde_json::Value> = Vec::new();
            for row in &p.bets {
                requests.extend(every_spot(&row.id, 100));
            }
            for a in &rules.announced {
                requests.push(json!({"bet": a.id, "stake_minor": 100}));
            }
            if let Some(nb) = &rules.neighbours {
                for number in 0..=MAX_NUMBER {
                    for k in nb.min_each_side..=nb.max_each_side {
                        requests.push(json!({"bet": "neighbours", "number": number, "neighbours": k, "stake_minor": 100}));
                    }
                }
            }
            if rules.complete_bet.is_some() {
                for number in 0..=MAX_NUMBER {
                    requests.push(json!({"bet": "complete", "number": number, "stake_minor": 100}));
                }
            }
            for v in requests {
                let ps = place(&e, v.clone());
                let staked = total_stake_minor(&ps).expect("small");
                let returned: i64 = (0..POCKETS).map(|n| credited(&e, &ps, n)).sum();
                assert_eq!(returned, 36 * staked, "{id} {v}");
            }
        }
    }
}
