//! The return to player (RTP) of every bet type of a plan, with how it was obtained, and the
//! band outside which a figure is flagged for a reviewer.
//!
//! Pure: the plan, its content hash and the number of rounds are inputs; no clock, no I/O.
//! `pitboss plan rtp` prints a report, `pitboss plan lint` flags it, and the service computes
//! one per plan hash in the background for the console (`src/console/rtp.rs`).
//!
//! **Methods.** *Exact* where the engine's own settlement can be enumerated: roulette on each
//! of the 37 numbers (every simple bet type on one spot, every announced bet, Neighbours on
//! every number with every count, the complete bet on every number), baccarat and Top Card by
//! the engines' `exact_rtp`, Casino Hold'em's side bets over all five-card hands
//! ([`holdem`]), blackjack's side bets decided on the first cards. *Simulated* otherwise, with
//! the 95 % interval: blackjack's main bet, Bet Behind and insurance (basic strategy,
//! [`crate::simulate_blackjack`]), the side bets that read the dealer's whole hand, and
//! Casino Hold'em's Ante, Call and Call Blind (the best strategy, estimated per hand,
//! [`holdem`]). A split or a double is counted with the main bet it belongs to.
//! Player-versus-player games have no return to player: the players play each other.
//!
//! **Runs.** A simulated figure is [`SEGMENTS`] runs of `rounds / SEGMENTS` rounds, each from
//! its own seed: segment `i`'s seed is SHA-256 of the base seed and `i` (8 bytes,
//! little-endian), the base seed SHA-256 of `pitboss-rtp/1 ` and the plan's content hash. So a
//! plan's figures are the same wherever they are computed, and the running figure after each
//! segment is the convergence plot's point. Casino Hold'em plays [`HOLDEM_ROUNDS_DIVISOR`]
//! times fewer rounds: each of its decisions costs about as much as that many rounds.
//!
//! **The band.** A figure below [`BAND_LOW`] or at or above [`BAND_HIGH`] is flagged, with
//! the plan's assumptions behind it; so is a simulated figure whose 95 % interval reaches
//! past either bound (it is not shown inside the band with the rounds played).

pub mod holdem;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::games::baccarat::{BaccaratEngine, Fraction};
use crate::games::blackjack::{BasicStrategy, BlackjackEngine};
use crate::games::roulette::{Placement, RouletteBetRequest, RouletteEngine, POCKETS};
use crate::games::top_card::TopCardEngine;
use crate::games::Refusal;
use crate::plan::load::{Finding, Severity};
use crate::plan::model::{Assumption, Plan};
use crate::plan::rules::{Family, GameRules};
use crate::simulate::{self, BetStats};

/// Changes whenever a method changes a figure: stored reports of another version are
/// recomputed.
pub const METHOD_VERSION: u32 = 1;
/// A simulated figure is this many runs (the points of its convergence plot).
pub const SEGMENTS: u64 = 20;
/// A return below this is flagged.
pub const BAND_LOW: f64 = 0.85;
/// A return at or above this is flagged: the player would have no house edge.
pub const BAND_HIGH: f64 = 1.0;
/// Casino Hold'em simulates `rounds / HOLDEM_ROUNDS_DIVISOR` rounds.
pub const HOLDEM_ROUNDS_DIVISOR: u64 = 10;
/// The stable code of an RTP finding of `pitboss plan lint`.
pub const OUT_OF_BAND: &str = "rtp_out_of_band";

/// How a figure was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Every outcome enumerated and settled by the engine: an exact fraction.
    Exact,
    /// Rounds played through the engine; the figure has a 95 % interval.
    Simulated,
    /// A stake that belongs to another bet's figure (a split or a double with the main bet).
    CountedWith,
    /// The game has no return to player (players play each other).
    NotApplicable,
    /// Not computed: the reason is in the note.
    Unavailable,
}

/// One bet type's figure (or a variant's: an Egalite total, an announced bet, Call Blind).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BetRtp {
    /// The row: a bet type id, or a variant (`egalite_extra 3`, `tier`, `call_blind`).
    pub bet: String,
    /// The plan's bet type whose limits the row's stakes are held to, if any.
    pub bet_type: Option<String>,
    pub label: String,
    pub method: Method,
    /// Returned ÷ staked.
    pub rtp: Option<f64>,
    /// The exact return, `numerator/denominator`.
    pub fraction: Option<String>,
    /// The 95 % interval of a simulated return.
    pub ci95: Option<[f64; 2]>,
    pub rounds: Option<u64>,
    /// What is bet and how the player decides, for a simulated figure.
    pub strategy: Option<String>,
    pub note: Option<String>,
}

impl BetRtp {
    fn new(bet: &str, bet_type: Option<&str>, label: &str, method: Method) -> BetRtp {
        BetRtp {
            bet: bet.to_string(),
            bet_type: bet_type.map(str::to_string),
            label: label.to_string(),
            method,
            rtp: None,
            fraction: None,
            ci95: None,
            rounds: None,
            strategy: None,
            note: None,
        }
    }

    fn exact(bet: &str, bet_type: Option<&str>, label: &str, f: Fraction) -> BetRtp {
        BetRtp {
            rtp: Some(f.to_f64()),
            fraction: Some(f.to_string()),
            ..BetRtp::new(bet, bet_type, label, Method::Exact)
        }
    }

    fn simulated(
        bet: &str,
        bet_type: Option<&str>,
        label: &str,
        s: &BetStats,
        strategy: &str,
    ) -> BetRtp {
        BetRtp {
            rtp: Some(s.rtp),
            ci95: Some([s.ci95_low, s.ci95_high]),
            rounds: Some(s.rounds),
            strategy: Some(strategy.to_string()),
            ..BetRtp::new(bet, bet_type, label, Method::Simulated)
        }
    }

    fn unavailable(bet: &str, label: &str, why: String) -> BetRtp {
        BetRtp {
            note: Some(why),
            ..BetRtp::new(bet, Some(bet), label, Method::Unavailable)
        }
    }

    fn note(mut self, note: impl Into<String>) -> BetRtp {
        self.note = Some(note.into());
        self
    }
}

/// The running figure of a simulated row after each segment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    pub bet: String,
    pub points: Vec<Point>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub rounds: u64,
    pub rtp: f64,
    pub ci95: [f64; 2],
}

/// Every figure of one plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RtpReport {
    /// `id@version`.
    pub plan: String,
    /// The plan's content hash the figures belong to.
    pub sha256: String,
    pub method_version: u32,
    /// The rounds asked for (Casino Hold'em plays a tenth).
    pub rounds: u64,
    /// The base seed, 64 hex digits.
    pub seed: String,
    pub rows: Vec<BetRtp>,
    pub convergence: Vec<Series>,
}

impl RtpReport {
    pub fn row(&self, bet: &str) -> Option<&BetRtp> {
        self.rows.iter().find(|r| r.bet == bet)
    }
}

/// What a report is computed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RtpConfig {
    /// Rounds of a simulated figure; 0 computes only the exact ones.
    pub rounds: u64,
}

/// The base seed of a plan's runs (module documentation).
pub fn base_seed(sha256: &str) -> [u8; 32] {
    Sha256::digest(format!("pitboss-rtp/1 {sha256}").as_bytes()).into()
}

fn segment_seed(base: &[u8; 32], i: u64) -> [u8; 32] {
    Sha256::digest([base.as_slice(), &i.to_le_bytes()].concat()).into()
}

/// Every figure of `plan`. A part that cannot be computed becomes an `unavailable` row with
/// the engine's reason, never an error: the other figures still stand.
pub fn compute(plan: &Plan, sha256: &str, cfg: &RtpConfig) -> RtpReport {
    let seed = base_seed(sha256);
    let mut report = RtpReport {
        plan: plan.key(),
        sha256: sha256.to_string(),
        method_version: METHOD_VERSION,
        rounds: cfg.rounds,
        seed: simulate::seed_hex(&seed),
        rows: Vec::new(),
        convergence: Vec::new(),
    };
    let family = plan.plan.family;
    let failed = |r: Refusal| {
        vec![BetRtp::unavailable(
            "—",
            "",
            format!("{}: {}", r.code, r.message),
        )]
    };
    match family {
        Family::Roulette => report.rows = roulette(plan).unwrap_or_else(failed),
        Family::Baccarat => {
            report.rows = BaccaratEngine::new(plan)
                .and_then(|e| e.exact_rtp())
                .map(|v| exact_rows(plan, v.into_iter().map(|e| (e.bet, e.total, e.rtp))))
                .unwrap_or_else(failed)
        }
        Family::TopCard => {
            report.rows = TopCardEngine::new(plan)
                .and_then(|e| e.exact_rtp())
                .map(|v| exact_rows(plan, v.into_iter().map(|e| (e.bet, e.total, e.rtp))))
                .unwrap_or_else(failed)
        }
        Family::CasinoHoldem => casino_holdem(plan, &seed, cfg, &mut report),
        Family::Blackjack => blackjack(plan, &seed, cfg, &mut report),
        Family::OkoBere | Family::PokerCash => {
            report
                .rows
                .push(BetRtp::new("—", None, "", Method::NotApplicable).note(
                    "the players play each other: the house risks nothing and has no return \
                     to player (its income is the plan's commission or rake)",
                ));
        }
    }
    report
}

fn label_of(plan: &Plan, bet: &str) -> String {
    plan.bet(bet)
        .map_or_else(|| bet.to_string(), |b| b.label.clone())
}

fn exact_rows(
    plan: &Plan,
    rows: impl Iterator<Item = (String, Option<u8>, Fraction)>,
) -> Vec<BetRtp> {
    rows.map(|(bet, total, f)| {
        let label = label_of(plan, &bet);
        match total {
            Some(t) => BetRtp::exact(
                &format!("{bet} {t}"),
                Some(&bet),
                &format!("{label} (total {t})"),
                f,
            ),
            None => BetRtp::exact(&bet, Some(&bet), &label, f),
        }
    })
    .collect()
}

/// The exact return of `placements` (one bet, or the components of one) over the 37 numbers.
fn roulette_exact(
    engine: &RouletteEngine<'_>,
    placements: &[Placement],
) -> Result<Fraction, Refusal> {
    let mut returned = 0u128;
    for n in 0..POCKETS {
        for p in engine.settle(placements, n)? {
            returned += u128::try_from(p.total_minor()).unwrap_or(0);
        }
    }
    let staked: u128 = placements
        .iter()
        .map(|p| u128::try_from(p.stake_minor).unwrap_or(0))
        .sum::<u128>()
        * u128::from(POCKETS);
    Fraction::new(returned, staked)
        .ok_or_else(|| Refusal::new(simulate::code::UNSIMULATED_BET, "a bet without a stake"))
}

/// The lowest and highest exact returns of several ways of placing one kind of bet.
fn range_row(bet: &str, label: &str, found: &[Fraction], what: &str) -> BetRtp {
    let (lo, hi) = found.iter().fold((found[0], found[0]), |(lo, hi), &f| {
        (
            if f.to_f64() < lo.to_f64() { f } else { lo },
            if f.to_f64() > hi.to_f64() { f } else { hi },
        )
    });
    let row = BetRtp::exact(bet, None, label, lo);
    if lo == hi {
        row.note(format!("the same on {what} ({} placements)", found.len()))
    } else {
        row.note(format!(
            "from {lo} ({:.4} %) to {hi} ({:.4} %) over {what}; the lowest is shown",
            lo.to_f64() * 100.0,
            hi.to_f64() * 100.0
        ))
    }
}

fn roulette(plan: &Plan) -> Result<Vec<BetRtp>, Refusal> {
    let engine = RouletteEngine::new(plan)?;
    let GameRules::Roulette(rules) = &plan.rules else {
        unreachable!("RouletteEngine::new checked the family")
    };
    let request =
        |bet: &str, number: Option<u8>, neighbours: Option<u8>, stake_minor| RouletteBetRequest {
            bet: bet.to_string(),
            numbers: None,
            field: None,
            number,
            neighbours,
            stake_minor,
        };
    // A composite's unit must meet the minimum of every bet type it may hold.
    let unit = plan.bets.iter().map(|b| b.min_bet).max().unwrap_or(1);
    let mut rows = Vec::new();
    for b in &plan.bets {
        let Some((req, spot)) = simulate::roulette_request(&b.id, b.min_bet) else {
            rows.push(BetRtp::unavailable(
                &b.id,
                &b.label,
                format!("no representative spot for the bet type '{}'", b.id),
            ));
            continue;
        };
        let f = roulette_exact(&engine, &engine.place(&req)?)?;
        let spot = spot
            .split_once(' ')
            .map_or(spot.as_str(), |(_, s)| s)
            .to_string();
        rows.push(BetRtp::exact(&b.id, Some(&b.id), &b.label, f).note(format!("on {spot}")));
    }
    for a in &rules.announced {
        let f = roulette_exact(&engine, &engine.place(&request(&a.id, None, None, unit))?)?;
        rows.push(BetRtp::exact(&a.id, None, &a.label, f).note(format!(
            "{} components, each held to its own type",
            a.components.len()
        )));
    }
    if let Some(nb) = &rules.neighbours {
        let mut found = Vec::new();
        for number in 0..POCKETS {
            for each_side in nb.min_each_side..=nb.max_each_side {
                let req = request(
                    crate::games::roulette::NEIGHBOURS_BET,
                    Some(number),
                    Some(each_side),
                    unit,
                );
                found.push(roulette_exact(&engine, &engine.place(&req)?)?);
            }
        }
        rows.push(range_row(
            "neighbours",
            "Neighbours",
            &found,
            &format!(
                "every number with {}–{} neighbours each side",
                nb.min_each_side, nb.max_each_side
            ),
        ));
    }
    if rules.complete_bet.is_some() {
        let mut found = Vec::new();
        for number in 0..POCKETS {
            let req = request(
                crate::games::roulette::COMPLETE_BET,
                Some(number),
                None,
                unit,
            );
            found.push(roulette_exact(&engine, &engine.place(&req)?)?);
        }
        rows.push(range_row(
            "complete",
            "Kompletní sázka (complete bet)",
            &found,
            "every number",
        ));
    }
    Ok(rows)
}

/// Runs `run` in [`SEGMENTS`] segments of `rounds` in all and adds them up, keeping the
/// running figure of every row after each segment.
fn segmented(
    base: &[u8; 32],
    rounds: u64,
    mut run: impl FnMut([u8; 32], u64) -> Result<Vec<BetStats>, Refusal>,
) -> Result<(Vec<BetStats>, Vec<Series>), Refusal> {
    let segments = SEGMENTS.min(rounds.max(1));
    let mut total: Vec<BetStats> = Vec::new();
    let mut series: Vec<Series> = Vec::new();
    for i in 0..segments {
        let n = rounds / segments + u64::from(i < rounds % segments);
        let part = run(segment_seed(base, i), n)?;
        if total.is_empty() {
            total = part;
            series = total
                .iter()
                .map(|s| Series {
                    bet: s.bet.clone(),
                    points: Vec::new(),
                })
                .collect();
        } else {
            for (t, p) in total.iter_mut().zip(&part) {
                t.merge(p);
            }
        }
        for (t, s) in total.iter_mut().zip(series.iter_mut()) {
            t.finish();
            if t.rounds > 0 {
                s.points.push(Point {
                    rounds: t.rounds,
                    rtp: t.rtp,
                    ci95: [t.ci95_low, t.ci95_high],
                });
            }
        }
    }
    Ok((total, series))
}

fn not_simulated(bet: &str, bet_type: Option<&str>, label: &str) -> BetRtp {
    BetRtp {
        note: Some("not simulated: configured with 0 rounds".into()),
        ..BetRtp::new(bet, bet_type, label, Method::Unavailable)
    }
}

fn casino_holdem(plan: &Plan, seed: &[u8; 32], cfg: &RtpConfig, report: &mut RtpReport) {
    use crate::games::casino_holdem::{ANTE, CALL, CALL_BLIND};
    let has_blind = matches!(&plan.rules, GameRules::CasinoHoldem(r) if r.call_blind.is_some());
    let labels = [
        (
            ANTE,
            format!(
                "{} (with the Call it leads to, per Ante)",
                label_of(plan, ANTE)
            ),
        ),
        (CALL, label_of(plan, CALL)),
        (CALL_BLIND, "Call Blind (Call and its Ante)".to_string()),
    ];
    fn bet_type(bet: &str) -> Option<&str> {
        if bet == crate::games::casino_holdem::CALL_BLIND {
            Some(crate::games::casino_holdem::CALL)
        } else {
            Some(bet)
        }
    }
    let rounds = cfg.rounds / HOLDEM_ROUNDS_DIVISOR;
    if cfg.rounds == 0 {
        for (bet, label) in labels.iter().filter(|(b, _)| has_blind || *b != CALL_BLIND) {
            report.rows.push(not_simulated(bet, bet_type(bet), label));
        }
    } else {
        let mut calls = holdem::Calls::default();
        let run = segmented(seed, rounds.max(1), |s, n| {
            let (rows, c) = holdem::simulate_best(plan, s, n)?;
            calls.hands += c.hands;
            calls.called += c.called;
            Ok(rows)
        });
        match run {
            Ok((rows, series)) => {
                for s in &rows {
                    let label = labels
                        .iter()
                        .find(|(b, _)| *b == s.bet)
                        .map_or(s.bet.clone(), |(_, l)| l.clone());
                    let strategy = if s.bet == CALL_BLIND {
                        "Call Blind at the Call's min_bet on the same cards: the whole hand played, \
                         no decision"
                    } else {
                        holdem::STRATEGY
                    };
                    let mut row = BetRtp::simulated(&s.bet, bet_type(&s.bet), &label, s, strategy);
                    if s.bet == ANTE && calls.hands > 0 {
                        row = row.note(format!(
                            "the strategy called {:.1} % of {} hands",
                            calls.called as f64 * 100.0 / calls.hands as f64,
                            crate::money::format_minor(
                                i64::try_from(calls.hands).unwrap_or(i64::MAX),
                                0
                            )
                        ));
                    }
                    report.rows.push(row);
                }
                report.convergence = series;
            }
            Err(r) => report.rows.push(BetRtp::unavailable(
                ANTE,
                &labels[0].1,
                format!("{}: {}", r.code, r.message),
            )),
        }
    }
    match holdem::exact_side_bets(plan) {
        Ok(side) => {
            for (bet, f) in side {
                let mut row = BetRtp::exact(&bet, Some(&bet), &label_of(plan, &bet), f);
                if bet == "aa" {
                    row = row.note(
                        "for a player who calls every hand AA pays on (AA is lost on a fold)",
                    );
                }
                report.rows.push(row);
            }
        }
        Err(r) => report.rows.push(BetRtp::unavailable(
            "side bets",
            "",
            format!("{}: {}", r.code, r.message),
        )),
    }
}

/// What the blackjack rows are played with.
const BLACKJACK_STRATEGY: &str = "basic strategy computed from the plan's rules (infinite \
     deck, total-dependent); every bet type at its min_bet on each box each round, from a \
     freshly shuffled full shoe; insurance taken at every offer (it changes no decision)";

fn blackjack(plan: &Plan, seed: &[u8; 32], cfg: &RtpConfig, report: &mut RtpReport) {
    let exact = crate::simulate_blackjack::exact_side_bets(plan).unwrap_or_default();
    let infinite = BlackjackEngine::new(plan)
        .map(|e| BasicStrategy::new(&e).expected_return(&e))
        .ok();
    let mut rows = Vec::new();
    if cfg.rounds == 0 {
        for b in &plan.bets {
            if !["split", "double"].contains(&b.id.as_str())
                && !exact.iter().any(|(bet, _)| bet == &b.id)
            {
                rows.push(not_simulated(&b.id, Some(&b.id), &b.label));
            }
        }
    } else {
        let run = segmented(seed, cfg.rounds, |s, n| {
            let mut stream = crate::rng::stream(s);
            crate::simulate_blackjack::simulate(plan, &mut stream, n, &mut |_| {}).map(|mut v| {
                v.iter_mut().for_each(BetStats::finish);
                v
            })
        });
        match run {
            Ok((stats, series)) => {
                for s in stats
                    .iter()
                    .filter(|s| !exact.iter().any(|(b, _)| b == &s.bet))
                {
                    let mut row = BetRtp::simulated(
                        &s.bet,
                        Some(&s.bet),
                        &label_of(plan, &s.bet),
                        s,
                        BLACKJACK_STRATEGY,
                    );
                    if s.bet == "main" {
                        if let Some(v) = infinite {
                            row = row.note(format!(
                                "computed for an infinite deck with the same strategy: {:.3} % \
                                 (a finite shoe adds a few hundredths)",
                                v * 100.0
                            ));
                        }
                    }
                    rows.push(row);
                }
                report.convergence = series
                    .into_iter()
                    .filter(|s| !exact.iter().any(|(b, _)| b == &s.bet))
                    .collect();
            }
            Err(r) => rows.push(BetRtp::unavailable(
                "main",
                &label_of(plan, "main"),
                format!("{}: {}", r.code, r.message),
            )),
        }
    }
    for (bet, f) in exact {
        rows.push(
            BetRtp::exact(&bet, Some(&bet), &label_of(plan, &bet), f)
                .note("every draw of the cards it reads from the full shoe"),
        );
    }
    for part in ["split", "double"] {
        if let Some(b) = plan.bet(part) {
            rows.push(
                BetRtp::new(part, Some(part), &b.label, Method::CountedWith).note(
                    "an added stake of the main bet's hand: counted in the main bet's figure",
                ),
            );
        }
    }
    // The plan's order of bet types, variants after their type.
    rows.sort_by_key(|r| {
        r.bet_type
            .as_deref()
            .and_then(|t| plan.bets.iter().position(|b| b.id == t))
            .unwrap_or(usize::MAX)
    });
    report.rows = rows;
}

/// Why a figure is outside the band, if it is.
pub fn out_of_band(row: &BetRtp) -> Option<String> {
    let rtp = row.rtp?;
    let pct = |x: f64| format!("{:.2} %", x * 100.0);
    if rtp < BAND_LOW {
        return Some(format!("below {}", pct(BAND_LOW)));
    }
    if rtp >= BAND_HIGH {
        return Some(format!(
            "at or above {}: the player has no house edge",
            pct(BAND_HIGH)
        ));
    }
    if let Some([lo, hi]) = row.ci95 {
        if hi >= BAND_HIGH {
            return Some(format!(
                "its 95 % interval reaches {}: a return of 100 % or more is not ruled out with \
                 the rounds played",
                pct(BAND_HIGH)
            ));
        }
        if lo < BAND_LOW {
            return Some(format!("its 95 % interval reaches below {}", pct(BAND_LOW)));
        }
    }
    None
}

/// The figure as a reviewer reads it: `45.3728 % (exact, 147403/324870)` or
/// `100.03 % (simulated, 95 % interval 99.96–100.10 %, 10 000 000 rounds)`.
pub fn figure(row: &BetRtp) -> String {
    match (row.method, row.rtp) {
        (Method::Exact, Some(r)) => format!(
            "{:.4} % (exact, {})",
            r * 100.0,
            row.fraction.as_deref().unwrap_or("")
        ),
        (Method::Simulated, Some(r)) => {
            let [lo, hi] = row.ci95.unwrap_or([r, r]);
            format!(
                "{:.3} % (simulated, 95 % interval {:.3}–{:.3} %, {} rounds)",
                r * 100.0,
                lo * 100.0,
                hi * 100.0,
                crate::money::format_minor(
                    i64::try_from(row.rounds.unwrap_or(0)).unwrap_or(i64::MAX),
                    0
                )
            )
        }
        _ => "—".into(),
    }
}

/// A row flagged outside the band, with the plan's assumptions that bear on it.
#[derive(Debug, Clone, PartialEq)]
pub struct Flag<'p> {
    pub row: BetRtp,
    pub why: String,
    pub assumptions: Vec<&'p Assumption>,
}

/// The rows of `report` outside the band.
pub fn flags<'p>(plan: &'p Plan, report: &RtpReport) -> Vec<Flag<'p>> {
    report
        .rows
        .iter()
        .filter_map(|row| {
            out_of_band(row).map(|why| Flag {
                assumptions: assumptions_behind(plan, row),
                row: row.clone(),
                why,
            })
        })
        .collect()
}

/// The plan's assumptions that bear on a row's return: those naming its bet (or variant) as a
/// field-path segment, and for the game's main bets those on the game's rules that name no
/// side bet. Minimum bets and timings change no return and are left out.
pub fn assumptions_behind<'p>(plan: &'p Plan, row: &BetRtp) -> Vec<&'p Assumption> {
    let family = plan.plan.family;
    let mut keys: Vec<&str> = vec![row.bet.split(' ').next().unwrap_or(&row.bet)];
    if let Some(t) = &row.bet_type {
        keys.push(t);
    }
    match row.bet.as_str() {
        "tier" | "orphelins" | "voisins" | "zero" => keys.push("announced"),
        "complete" => keys.push("complete_bet"),
        _ => {}
    }
    let main_bets: &[&str] = match family {
        Family::Blackjack => &["main", "bet_behind", "split", "double"],
        Family::CasinoHoldem => &["ante", "call", "call_blind"],
        _ => &[],
    };
    let is_main = main_bets.contains(&row.bet.as_str());
    let side: Vec<&str> = plan
        .bets
        .iter()
        .map(|b| b.id.as_str())
        .filter(|b| !main_bets.contains(b))
        .collect();
    let rules_prefix = format!("rules.{}.", family_key(family));
    plan.assumptions
        .iter()
        .filter(|a| !a.field.ends_with(".min_bet") && !a.field.starts_with("policies.timing"))
        .filter(|a| {
            let segments: Vec<&str> = a
                .field
                .split(['.', '[', ']', '/'])
                .filter(|s| !s.is_empty())
                .collect();
            let names_row = keys.iter().any(|k| segments.contains(k));
            let on_main_rules = is_main
                && a.field.starts_with(&rules_prefix)
                && !a.field.contains("side_bet")
                && !side.iter().any(|b| segments.contains(b));
            names_row || on_main_rules
        })
        .collect()
}

fn family_key(family: Family) -> String {
    serde_json::to_value(family)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// The flags of a report as lint warnings (`rtp_out_of_band`), each with the figure and the
/// assumptions behind it.
pub fn findings(plan: &Plan, file: &std::path::Path, report: &RtpReport) -> Vec<Finding> {
    flags(plan, report)
        .into_iter()
        .map(|f| {
            let mut message = format!(
                "{} ({}) returns {}: {}",
                f.row.label,
                f.row.bet,
                figure(&f.row),
                f.why
            );
            if let Some(s) = &f.row.strategy {
                message.push_str(&format!("; played with {s}"));
            }
            if f.assumptions.is_empty() {
                message.push_str("; no assumption of the plan bears on it");
            }
            for a in &f.assumptions {
                message.push_str(&format!("; assumption {}: {}", a.field, a.reason));
            }
            Finding {
                severity: Severity::Warning,
                code: OUT_OF_BAND,
                file: file.to_path_buf(),
                line: None,
                path: format!("bets[{}]", f.row.bet_type.as_deref().unwrap_or(&f.row.bet)),
                message,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
