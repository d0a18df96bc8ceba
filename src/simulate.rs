//! Monte Carlo simulation of RNG rounds through the same engine code the service uses
//! (`pitboss simulate`), and the engines' exact returns to compare it with.
//!
//! Pure: the seed and the number of rounds are inputs, the statistics the output; no clock
//! (the CLI times the run) and no I/O (progress goes to a callback).
//!
//! **Seed.** [`parse_seed`] reads 64 hex digits as the 32 bytes in order, or a decimal `u64`
//! written little-endian into bytes 0–7 with bytes 8–31 zero. One ChaCha20 stream
//! ([`crate::rng::stream`]) feeds the whole run, round after round:
//! - roulette: one number per round, [`crate::rng::uniform_below`]`(stream, 37)`;
//! - baccarat: [`BaccaratEngine::deal_coup_from`] (a freshly shuffled full shoe per coup,
//!   continuing the stream);
//! - Top Card: [`TopCardEngine::deal_from`] (a freshly shuffled full shoe per deal,
//!   continuing the stream);
//! - Casino Hold'em: each round's deal from the next 32 bytes of the stream (the engine's
//!   `rng_deal` takes a seed).
//!
//! **Bets** ([`strategy`]). Every round places one bet of every bet type of the plan (for
//! Egalite Extra, one per total of `rules.baccarat.egalite_extra.totals`) at the bet type's
//! `min_bet`, through the engine's `place`, and settles them with the engine's settlement.
//! Roulette bets lie on one representative spot per bet type: straight 17, split 17-20, street
//! 16-17-18, corner 17-18-20-21, line 16–21, dozen_2, column_2, red, even, low. Baccarat bets
//! are [prepared](BaccaratEngine::prepare) once and each coup settled with
//! [`BaccaratEngine::settle_prepared`], the code [`BaccaratEngine::settle`] runs for the
//! service, without building a `Payout` per bet: the run counts how often each bet was paid
//! in each slot and adds up the slots' payouts at the end.
//!
//! **Casino Hold'em strategy: always call.** The Ante and every side bet (not Call Blind) at
//! `min_bet`; the player calls every hand (the Call is `call_multiple` × the Ante) and never
//! folds, which is not the best strategy: folding the worst hands returns more. The `ante`
//! and `call` rows are each bet's own return; `ante+call` is the hand as a whole (both
//! stakes of a round as one).
//!
//! **Statistics.** Per bet: rounds, total staked, total returned ([`Payout::total_minor`]),
//! largest single win (`win_minor`, on top of the returned stake), and the return to player
//! with a 95 % confidence interval `mean ± 1.96·σ/√N`, σ the sample standard deviation of
//! the per-round return per unit staked (exact i128 sums of the returns and their squares).

use rand::RngCore;
use rand_chacha::ChaCha20Rng;
use serde::Serialize;

use crate::games::baccarat::{
    BaccaratBetRequest, BaccaratEngine, BaccaratPlacement, Fraction, SETTLEMENT_SLOTS,
};
use crate::games::casino_holdem::{CasinoHoldemEngine, HoldemBetRequest};
use crate::games::roulette::{Placement, RouletteBetRequest, RouletteEngine, POCKETS};
use crate::games::top_card::{TopCardBetRequest, TopCardEngine, TopCardPlacement};
use crate::games::{Payout, Refusal};
use crate::plan::model::Plan;
use crate::plan::rules::roulette::OutsideField;
use crate::plan::rules::{Family, GameRules};
use crate::rng;

/// The progress callback is called every this many rounds (and once at the end).
pub const PROGRESS_EVERY: u64 = 1 << 16;

/// The stable codes of the refusals of this module.
pub mod code {
    /// The plan's family has no simulation yet.
    pub const NO_SIMULATION: &str = "no_simulation";
    /// A bet type with no representative spot (roulette) or that its engine refused.
    pub const UNSIMULATED_BET: &str = "unsimulated_bet";
    /// `--seed` is neither a u64 nor 64 hex digits.
    pub const BAD_SEED: &str = "bad_seed";
}

/// Reads a seed: 64 hex digits (the 32 bytes in order), or a decimal u64 written
/// little-endian into the first 8 bytes, the other 24 zero.
pub fn parse_seed(s: &str) -> Result<[u8; 32], Refusal> {
    let mut seed = [0u8; 32];
    if let Ok(n) = s.parse::<u64>() {
        seed[..8].copy_from_slice(&n.to_le_bytes());
        return Ok(seed);
    }
    let bad = || {
        Refusal::new(
            code::BAD_SEED,
            format!("seed '{s}' is neither a decimal u64 nor 64 hex digits"),
        )
    };
    if s.len() != 64 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad());
    }
    for (i, byte) in seed.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
    }
    Ok(seed)
}

/// The seed as 64 lower-case hex digits.
pub fn seed_hex(seed: &[u8; 32]) -> String {
    seed.iter().map(|b| format!("{b:02x}")).collect()
}

/// The statistics of one bet over a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BetStats {
    /// The bet type, with its spot (roulette) or total (Egalite Extra): `split 17-20`.
    pub bet: String,
    pub stake_minor: i64,
    pub rounds: u64,
    pub staked_minor: i128,
    pub returned_minor: i128,
    /// Returned ÷ staked.
    pub rtp: f64,
    /// The 95 % confidence interval of the return: `rtp ± 1.96·σ/√N`.
    pub ci95_low: f64,
    pub ci95_high: f64,
    /// The largest single win (winnings on top of the returned stake), minor units.
    pub largest_win_minor: i64,
    /// Σ of the per-round return (minor units) squared, for the interval.
    #[serde(skip)]
    returned_sq: i128,
}

impl BetStats {
    fn new(bet: String, stake_minor: i64) -> BetStats {
        BetStats {
            bet,
            stake_minor,
            rounds: 0,
            staked_minor: 0,
            returned_minor: 0,
            rtp: 0.0,
            ci95_low: 0.0,
            ci95_high: 0.0,
            largest_win_minor: 0,
            returned_sq: 0,
        }
    }

    #[inline]
    fn add(&mut self, p: &Payout) {
        self.add_n(p, 1);
    }

    /// `n` rounds that each paid `p`.
    #[inline]
    fn add_n(&mut self, p: &Payout, n: u64) {
        if n == 0 {
            return;
        }
        let total = i128::from(p.total_minor());
        let count = i128::from(n);
        self.rounds += n;
        self.staked_minor += i128::from(p.stake_minor) * count;
        self.returned_minor += total * count;
        self.returned_sq += total * total * count;
        self.largest_win_minor = self.largest_win_minor.max(p.win_minor);
    }

    /// Adds another run's rounds of the same bet at the same stake (a run played in segments,
    /// each from its own seed, is the sum of its segments).
    pub(crate) fn merge(&mut self, other: &BetStats) {
        debug_assert_eq!(self.stake_minor, other.stake_minor);
        self.rounds += other.rounds;
        self.staked_minor += other.staked_minor;
        self.returned_minor += other.returned_minor;
        self.returned_sq += other.returned_sq;
        self.largest_win_minor = self.largest_win_minor.max(other.largest_win_minor);
    }

    /// Fills in the return and its interval. Every round stakes the same `stake_minor`, so
    /// the per-unit return of a round is its return ÷ stake.
    pub(crate) fn finish(&mut self) {
        if self.rounds == 0 || self.staked_minor == 0 {
            return;
        }
        let n = self.rounds as f64;
        self.rtp = self.returned_minor as f64 / self.staked_minor as f64;
        // N·Σx² − (Σx)², exactly where it fits.
        let spread = i128::from(self.rounds)
            .checked_mul(self.returned_sq)
            .and_then(|a| {
                self.returned_minor
                    .checked_mul(self.returned_minor)
                    .and_then(|b| a.checked_sub(b))
            })
            .map(|d| d as f64)
            .unwrap_or_else(|| n * self.returned_sq as f64 - (self.returned_minor as f64).powi(2));
        let var = if self.rounds > 1 {
            (spread / (n * (n - 1.0))).max(0.0)
        } else {
            0.0
        };
        let half = 1.96 * var.sqrt() / self.stake_minor as f64 / n.sqrt();
        self.ci95_low = self.rtp - half;
        self.ci95_high = self.rtp + half;
    }
}

/// Rows filled by the blackjack simulation ([`crate::simulate_blackjack`]), where a round's
/// return is not one [`Payout`] (a hand's split and double stakes count with its main bet).
impl BetStats {
    pub(crate) fn row(bet: &str, stake_minor: i64) -> BetStats {
        BetStats::new(bet.to_string(), stake_minor)
    }

    /// One round: `staked_minor` at risk, `returned_minor` back (below zero when added
    /// stakes were lost), `largest_win_minor` its win.
    #[inline]
    pub(crate) fn add_round(
        &mut self,
        staked_minor: i64,
        returned_minor: i64,
        largest_win_minor: i64,
    ) {
        let total = i128::from(returned_minor);
        self.rounds += 1;
        self.staked_minor += i128::from(staked_minor);
        self.returned_minor += total;
        self.returned_sq += total * total;
        self.largest_win_minor = self.largest_win_minor.max(largest_win_minor);
    }
}

/// A run's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Simulation {
    pub plan: String,
    pub family: Family,
    /// The seed as 64 hex digits.
    pub seed: String,
    pub rounds: u64,
    /// What is bet each round, and how the player decides where the game asks him to.
    pub strategy: &'static str,
    pub bets: Vec<BetStats>,
}

/// The bets a run places and the player's decisions, by family (the module documentation).
pub fn strategy(family: Family) -> &'static str {
    match family {
        Family::Roulette => {
            "every bet type at its min_bet each round, each on one representative spot"
        }
        Family::Baccarat => {
            "every bet type at its min_bet each round, Egalite Extra on each of its totals"
        }
        Family::CasinoHoldem => {
            "always call: the Ante and every side bet at min_bet each round; the player calls \
             every hand (Call = call_multiple x Ante) and never folds; 'ante+call' is the hand \
             as a whole"
        }
        _ => "every bet type at its min_bet each round",
    }
}

/// One bet's exact return per unit staked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExactReturn {
    pub bet: String,
    /// `numerator/denominator`, reduced.
    pub fraction: String,
    /// Truncated to 8 decimal places.
    pub decimal: String,
}

/// Families [`simulate`] plays.
pub fn supported(family: Family) -> bool {
    matches!(
        family,
        Family::Roulette
            | Family::Baccarat
            | Family::TopCard
            | Family::CasinoHoldem
            | Family::Blackjack
    )
}

fn unsupported(plan: &Plan) -> Refusal {
    Refusal::new(
        code::NO_SIMULATION,
        format!(
            "{} is a {} plan: simulation plays roulette, baccarat, Top Card, Casino Hold'em and blackjack plans only",
            plan.key(),
            plan.plan.family
        ),
    )
}

/// Plays `rounds` RNG rounds of `plan` from `seed` (see the module documentation), calling
/// `progress(rounds_done)` every [`PROGRESS_EVERY`] rounds and at the end.
pub fn simulate(
    plan: &Plan,
    seed: [u8; 32],
    rounds: u64,
    progress: &mut dyn FnMut(u64),
) -> Result<Simulation, Refusal> {
    let mut stream = rng::stream(seed);
    let mut bets = match plan.plan.family {
        Family::Roulette => roulette(plan, &mut stream, rounds, progress)?,
        Family::Baccarat => baccarat(plan, &mut stream, rounds, progress)?,
        Family::TopCard => top_card(plan, &mut stream, rounds, progress)?,
        Family::CasinoHoldem => casino_holdem(plan, &mut stream, rounds, progress)?,
        Family::Blackjack => {
            crate::simulate_blackjack::simulate(plan, &mut stream, rounds, progress)?
        }
        _ => return Err(unsupported(plan)),
    };
    progress(rounds);
    bets.iter_mut().for_each(BetStats::finish);
    Ok(Simulation {
        plan: plan.key(),
        family: plan.plan.family,
        seed: seed_hex(&seed),
        rounds,
        strategy: strategy(plan.plan.family),
        bets,
    })
}

/// Deals `rounds` bare baccarat coups (deal and outcome, no bets) from `seed`: the cost of
/// the game itself. Returns the count of Player, Banker and Tie wins.
pub fn baccarat_deal_only(plan: &Plan, seed: [u8; 32], rounds: u64) -> Result<[u64; 3], Refusal> {
    use crate::games::baccarat::Winner;
    let engine = BaccaratEngine::new(plan)?;
    let mut stream = rng::stream(seed);
    let mut wins = [0u64; 3];
    for _ in 0..rounds {
        let o = engine.coup_outcome(&engine.deal_coup_from(&mut stream));
        wins[match o.winner {
            Winner::Player => 0,
            Winner::Banker => 1,
            Winner::Tie => 2,
        }] += 1;
    }
    Ok(wins)
}

/// The representative request of a roulette bet type (module documentation).
pub(crate) fn roulette_request(
    bet_type: &str,
    stake_minor: i64,
) -> Option<(RouletteBetRequest, String)> {
    let inside = |numbers: Vec<u8>| {
        let label = numbers
            .iter()
            .map(u8::to_string)
            .collect::<Vec<_>>()
            .join("-");
        (Some(numbers), None, label)
    };
    let outside = |f: OutsideField, label: &str| (None, Some(f), label.to_string());
    let (numbers, field, spot) = match bet_type {
        "straight" => inside(vec![17]),
        "split" => inside(vec![17, 20]),
        "street" => inside(vec![16, 17, 18]),
        "corner" => inside(vec![17, 18, 20, 21]),
        "line" => inside((16..=21).collect()),
        "dozen" => outside(OutsideField::Dozen2, "dozen_2"),
        "column" => outside(OutsideField::Column2, "column_2"),
        "red_black" => outside(OutsideField::Red, "red"),
        "even_odd" => outside(OutsideField::Even, "even"),
        "low_high" => outside(OutsideField::Low, "low"),
        _ => return None,
    };
    Some((
        RouletteBetRequest {
            bet: bet_type.to_string(),
            numbers,
            field,
            number: None,
            neighbours: None,
            stake_minor,
        },
        format!("{bet_type} {spot}"),
    ))
}

fn roulette_placements(
    engine: &RouletteEngine<'_>,
    plan: &Plan,
) -> Result<Vec<(Placement, String)>, Refusal> {
    let mut out = Vec::new();
    for b in &plan.bets {
        let (req, label) = roulette_request(&b.id, b.min_bet).ok_or_else(|| {
            Refusal::new(
                code::UNSIMULATED_BET,
                format!("the roulette bet type '{}' has no simulated spot", b.id),
            )
        })?;
        let mut placed = engine.place(&req)?;
        if placed.len() != 1 {
            return Err(Refusal::new(
                code::UNSIMULATED_BET,
                format!("{label} places {} components, not one", placed.len()),
            ));
        }
        out.push((placed.remove(0), label));
    }
    Ok(out)
}

fn roulette(
    plan: &Plan,
    stream: &mut ChaCha20Rng,
    rounds: u64,
    progress: &mut dyn FnMut(u64),
) -> Result<Vec<BetStats>, Refusal> {
    let engine = RouletteEngine::new(plan)?;
    let (placements, mut stats) = split(roulette_placements(&engine, plan)?);
    for r in 0..rounds {
        let number = rng::uniform_below(stream, u32::from(POCKETS)) as u8;
        record(&mut stats, &engine.settle(&placements, number)?);
        tick(r, progress);
    }
    Ok(stats)
}

fn baccarat_placements(
    engine: &BaccaratEngine<'_>,
    plan: &Plan,
) -> Result<Vec<(BaccaratPlacement, String)>, Refusal> {
    let totals: Vec<u8> = match &plan.rules {
        GameRules::Baccarat(r) => r
            .egalite_extra
            .as_ref()
            .map(|e| e.totals.clone())
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    let mut out = Vec::new();
    for b in &plan.bets {
        let per_total: Vec<Option<u8>> = if b.id == "egalite_extra" {
            totals.iter().map(|&t| Some(t)).collect()
        } else {
            vec![None]
        };
        for total in per_total {
            let p = engine.place(&BaccaratBetRequest {
                bet: b.id.clone(),
                total,
                stake_minor: b.min_bet,
            })?;
            out.push((p, label_total(&b.id, total)));
        }
    }
    Ok(out)
}

fn label_total(bet: &str, total: Option<u8>) -> String {
    match total {
        Some(t) => format!("{bet} {t}"),
        None => bet.to_string(),
    }
}

fn baccarat(
    plan: &Plan,
    stream: &mut ChaCha20Rng,
    rounds: u64,
    progress: &mut dyn FnMut(u64),
) -> Result<Vec<BetStats>, Refusal> {
    let engine = BaccaratEngine::new(plan)?;
    let (placements, mut stats) = split(baccarat_placements(&engine, plan)?);
    let prepared = engine.prepare(&placements)?;
    // How often each bet was settled in each slot; a slot's payout is the same every time.
    let mut counts = vec![[0u64; SETTLEMENT_SLOTS]; prepared.len()];
    let mut slots = vec![0u8; prepared.len()];
    for r in 0..rounds {
        let outcome = engine.coup_outcome(&engine.deal_coup_from(stream));
        engine.settle_prepared(&prepared, &outcome, &mut slots)?;
        for (c, &s) in counts.iter_mut().zip(&slots) {
            c[usize::from(s)] += 1;
        }
        tick(r, progress);
    }
    for (i, (st, c)) in stats.iter_mut().zip(&counts).enumerate() {
        for (slot, &n) in c.iter().enumerate().filter(|(_, n)| **n > 0) {
            st.add_n(&prepared.payout(i, slot)?, n);
        }
    }
    Ok(stats)
}

fn top_card_placements(
    engine: &TopCardEngine<'_>,
    plan: &Plan,
) -> Result<Vec<(TopCardPlacement, String)>, Refusal> {
    plan.bets
        .iter()
        .map(|b| {
            engine
                .place(&TopCardBetRequest {
                    bet: b.id.clone(),
                    stake_minor: b.min_bet,
                })
                .map(|p| (p, b.id.clone()))
        })
        .collect()
}

fn top_card(
    plan: &Plan,
    stream: &mut ChaCha20Rng,
    rounds: u64,
    progress: &mut dyn FnMut(u64),
) -> Result<Vec<BetStats>, Refusal> {
    let engine = TopCardEngine::new(plan)?;
    let (placements, mut stats) = split(top_card_placements(&engine, plan)?);
    for r in 0..rounds {
        let outcome = engine.outcome(&engine.deal_from(stream))?;
        record(&mut stats, &engine.settle(&placements, &outcome)?);
        tick(r, progress);
    }
    Ok(stats)
}

/// Casino Hold'em: the Ante and every side bet at `min_bet`; the player always calls (the
/// Call is the engine's `decide(Call)`: `call_multiple` × the Ante). Each round's deal comes
/// from the next 32 bytes of the stream ([`CasinoHoldemEngine::rng_deal`] takes a seed) and
/// goes through `deal_card` / `close_decisions` as the service feeds it. One row per bet type
/// the settlement pays (`ante`, `call`, the flop bonus, Casino Razz), then `ante+call`: the
/// Ante and the Call of each round as one stake, the return of the hand.
fn casino_holdem(
    plan: &Plan,
    stream: &mut ChaCha20Rng,
    rounds: u64,
    progress: &mut dyn FnMut(u64),
) -> Result<Vec<BetStats>, Refusal> {
    use crate::games::casino_holdem::{Deal, Decision, Next, ANTE, CALL, CALL_BLIND};
    /// The row of the Ante and the Call together.
    const HAND: &str = "ante+call";
    let engine = CasinoHoldemEngine::new(plan)?;
    let mut placements = Vec::new();
    for b in plan
        .bets
        .iter()
        .filter(|b| b.id != CALL && b.id != CALL_BLIND)
    {
        placements.extend(engine.place(&HoldemBetRequest {
            bet: b.id.clone(),
            stake_minor: b.min_bet,
        })?);
    }
    let mut stats: Vec<BetStats> = Vec::new();
    let mut whole: Option<BetStats> = None;
    let mut seed = [0u8; 32];
    for r in 0..rounds {
        stream.fill_bytes(&mut seed);
        let mut round = placements.clone();
        let mut deal = Deal::default();
        let mut cards = engine.rng_deal(seed).into_iter();
        loop {
            match engine.next(&deal) {
                Next::Card { position } => {
                    let c = cards.next().expect("rng_deal deals every card");
                    debug_assert_eq!(c.position, position);
                    engine.deal_card(&mut deal, position, c.card)?;
                }
                Next::Decisions => {
                    round.extend(engine.decide(&round, &deal, Decision::Call)?);
                    engine.close_decisions(&mut deal)?;
                }
                Next::Complete => break,
            }
        }
        let settlement = engine.settle(&round, &deal)?;
        let mut hand = Payout::lose(0);
        for bp in &settlement.payouts {
            let i = match stats.iter().position(|s| s.bet == bp.bet_type) {
                Some(i) => i,
                None => {
                    stats.push(BetStats::new(bp.bet_type.clone(), bp.payout.stake_minor));
                    stats.len() - 1
                }
            };
            stats[i].add(&bp.payout);
            if bp.bet_type == ANTE || bp.bet_type == CALL {
                hand.stake_minor += bp.payout.stake_minor;
                hand.returned_minor += bp.payout.returned_minor;
                hand.win_minor += bp.payout.win_minor;
            }
        }
        // The stake of the hand is the same every round: the Ante and a Call of a fixed
        // multiple of it.
        match &mut whole {
            Some(w) => w.add(&hand),
            None => {
                let mut w = BetStats::new(HAND.to_string(), hand.stake_minor);
                w.add(&hand);
                whole = Some(w);
            }
        }
        tick(r, progress);
    }
    // The plan's order, then the hand as a whole.
    stats.sort_by_key(|s| plan.bets.iter().position(|b| b.id == s.bet));
    stats.extend(whole);
    Ok(stats)
}

/// Placements and their empty statistics.
fn split<P: StakeOf>(labelled: Vec<(P, String)>) -> (Vec<P>, Vec<BetStats>) {
    labelled
        .into_iter()
        .map(|(p, label)| {
            let stake = p.stake();
            (p, BetStats::new(label, stake))
        })
        .unzip()
}

trait StakeOf {
    fn stake(&self) -> i64;
}

impl StakeOf for Placement {
    fn stake(&self) -> i64 {
        self.stake_minor
    }
}

impl StakeOf for BaccaratPlacement {
    fn stake(&self) -> i64 {
        self.stake_minor
    }
}

impl StakeOf for TopCardPlacement {
    fn stake(&self) -> i64 {
        self.stake_minor
    }
}

#[inline]
fn record(stats: &mut [BetStats], payouts: &[Payout]) {
    for (s, p) in stats.iter_mut().zip(payouts) {
        s.add(p);
    }
}

#[inline]
fn tick(r: u64, progress: &mut dyn FnMut(u64)) {
    if (r + 1).is_multiple_of(PROGRESS_EVERY) {
        progress(r + 1);
    }
}

/// The exact return of every simulated bet: the engines' `exact_rtp()` for baccarat and Top
/// Card; for roulette, each placement settled on each of the 37 numbers; none for Casino
/// Hold'em (its engine has no exact return).
pub fn exact_returns(plan: &Plan) -> Result<Vec<ExactReturn>, Refusal> {
    let show = |bet: String, f: Fraction| ExactReturn {
        bet,
        fraction: f.to_string(),
        decimal: f.decimal(8),
    };
    match plan.plan.family {
        Family::Roulette => {
            let engine = RouletteEngine::new(plan)?;
            let mut out = Vec::new();
            for (p, label) in roulette_placements(&engine, plan)? {
                let mut returned = 0u128;
                for n in 0..POCKETS {
                    let paid = engine.settle(std::slice::from_ref(&p), n)?;
                    returned += paid[0].total_minor().unsigned_abs() as u128;
                }
                let staked = u128::from(POCKETS) * p.stake_minor.unsigned_abs() as u128;
                let f = Fraction::new(returned, staked).expect("a stake is positive");
                out.push(show(label, f));
            }
            Ok(out)
        }
        Family::Baccarat => Ok(BaccaratEngine::new(plan)?
            .exact_rtp()?
            .into_iter()
            .map(|e| show(label_total(&e.bet, e.total), e.rtp))
            .collect()),
        Family::TopCard => Ok(TopCardEngine::new(plan)?
            .exact_rtp()?
            .into_iter()
            .map(|e| show(label_total(&e.bet, e.total), e.rtp))
            .collect()),
        // The engine has no exact return (yet): none to print.
        Family::CasinoHoldem => Ok(Vec::new()),
        // The side bets decided on the first cards; the main bet depends on play.
        Family::Blackjack => Ok(crate::simulate_blackjack::exact_side_bets(plan)?
            .into_iter()
            .map(|(bet, f)| show(bet, f))
            .collect()),
        _ => Err(unsupported(plan)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(id: &str) -> Plan {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("game_plans");
        crate::plan::registry::load_file(
            &dir.join(format!("{id}@1.toml")),
            Some(&dir.join("sources")),
        )
        .unwrap_or_else(|f| panic!("{id} loads: {f:?}"))
        .plan
    }

    #[test]
    fn baccarat_simulation_totals_are_the_sums_of_settle_round_by_round() {
        // The simulation settles through prepared bets and counts slots; the same rounds
        // settled one by one with the service's `settle` give the same totals and the same
        // largest wins.
        for id in ["synot-baccarat", "evolution-speed-baccarat"] {
            let p = plan(id);
            let rounds = 5000;
            let sim = simulate(&p, [5; 32], rounds, &mut |_| {}).unwrap();
            let engine = BaccaratEngine::new(&p).unwrap();
            let (placements, mut want) = split(baccarat_placements(&engine, &p).unwrap());
            let mut stream = rng::stream([5; 32]);
            for _ in 0..rounds {
                let o = engine.coup_outcome(&engine.deal_coup_from(&mut stream));
                record(&mut want, &engine.settle(&placements, &o).unwrap());
            }
            want.iter_mut().for_each(BetStats::finish);
            assert_eq!(sim.bets, want, "{id}");
            assert!(sim.bets.iter().any(|b| b.largest_win_minor > 0));
        }
    }

    #[test]
    fn a_u64_seed_is_little_endian_and_zero_padded() {
        let s = parse_seed("258").unwrap();
        assert_eq!(&s[..3], &[2, 1, 0]);
        assert!(s[8..].iter().all(|&b| b == 0));
        let hex = "00".repeat(31) + "ff";
        assert_eq!(parse_seed(&hex).unwrap()[31], 0xff);
        assert_eq!(seed_hex(&parse_seed(&hex).unwrap()), hex);
        assert!(parse_seed("xyz").is_err());
    }
}
