//! Casino Hold'em returns the plain simulation (`pitboss simulate`, always calling) does not
//! give: the side bets exactly, and the Ante and the Call under the best strategy.
//!
//! **Side bets, exactly.** Bonus (Evolution), AA and Casino Razz (SYNOT) are decided by the
//! player's two cards and the flop, five cards of one deck: all C(52, 5) = 2 598 960 of them
//! are enumerated. A five-card hand's poker class and its low reading depend only on its
//! ranks and on whether all five share a suit, so the hands are counted by that key (about
//! 7 500 keys) and one hand of each key is settled by the engine's own `settle` at the bet's
//! `min_bet`, with the player calling. Bonus and Casino Razz are settled on a fold too in both
//! plans; AA is lost on a fold, so its figure is that of a player who calls every hand AA pays
//! on (what an AA bettor does: the AA win is lost otherwise).
//!
//! **Ante and Call under the best strategy.** The player decides after the flop, knowing his
//! two cards and the flop. Folding loses the Ante; calling is worth, per Ante, the expectation
//! over the 47 unseen cards (the turn, the river, the dealer's two) of the plan's rows. An
//! exact expectation is 1 070 190 deals per decision, too slow to play many rounds with, so
//! the strategy *estimates* it per hand from [`SAMPLES`] deals drawn from the unseen cards and
//! calls when the estimate is at least −1 (a fold's loss); with three of a kind or better on
//! the five cards it calls without estimating (every dealer hand leaves such a call above −1).
//! The estimate only chooses the decision: every round is then settled by the engine on its
//! real cards, so the simulated return is that of the strategy played, near the optimum (a
//! hand is misjudged only when its two choices are worth nearly the same, which costs nearly
//! nothing). Side bets play no part in the decision.

use rand::RngCore;
use rand_chacha::ChaCha20Rng;
use sha2::{Digest, Sha256};

use crate::cards::Card;
use crate::games::baccarat::Fraction;
use crate::games::casino_holdem::{
    meets, CasinoHoldemEngine, Deal, Decision, HoldemBetRequest, Next, Placement, ANTE, CALL,
    CALL_BLIND, CASINO_RAZZ,
};
use crate::games::poker_hand::{self, HandRank};
use crate::games::Refusal;
use crate::plan::model::{Payout as PayoutRow, Plan};
use crate::plan::rules::casino_holdem::{outcome_classes, HandClass, Position};
use crate::rng;
use crate::simulate::BetStats;

/// Deals drawn per hand to estimate the return of a call.
pub const SAMPLES: u32 = 400;

/// What the strategy row of a report says.
pub const STRATEGY: &str = "best strategy, estimated per hand: call with three of a kind or \
     better; otherwise call when the return of calling, estimated from 400 deals of the turn, \
     the river and the dealer's two cards drawn from the 47 unseen cards, is at least that of \
     folding (the Ante lost); side bets play no part in the decision";

/// The side bets of the plan decided on the player's two cards and the flop, each with its
/// exact return at `min_bet` (module documentation).
pub fn exact_side_bets(plan: &Plan) -> Result<Vec<(String, Fraction)>, Refusal> {
    let engine = CasinoHoldemEngine::new(plan)?;
    let rules = engine.rules();
    let mut side: Vec<&str> = Vec::new();
    if let Some(fb) = &rules.flop_bonus {
        side.push(fb.bet.id());
    }
    if rules.casino_razz.is_some() {
        side.push(CASINO_RAZZ);
    }
    side.retain(|b| plan.bet(b).is_some());
    if side.is_empty() {
        return Ok(Vec::new());
    }
    // Count every five-card hand by its key; keep the first hand of each key.
    let deck = poker_hand::deck();
    let mut keys: std::collections::HashMap<u32, (u64, [Card; 5])> =
        std::collections::HashMap::new();
    for a in 0..52 {
        for b in a + 1..52 {
            for c in b + 1..52 {
                for d in c + 1..52 {
                    for e in d + 1..52 {
                        let five = [deck[a], deck[b], deck[c], deck[d], deck[e]];
                        keys.entry(key(&five))
                            .and_modify(|(n, _)| *n += 1)
                            .or_insert((1, five));
                    }
                }
            }
        }
    }
    let ante = plan.bet(ANTE).map_or(0, |b| b.min_bet);
    let mut out = Vec::new();
    for bet in side {
        let stake = plan.bet(bet).map_or(0, |b| b.min_bet);
        let mut placements = engine.place(&HoldemBetRequest {
            bet: ANTE.into(),
            stake_minor: ante,
        })?;
        placements.extend(engine.place(&HoldemBetRequest {
            bet: bet.into(),
            stake_minor: stake,
        })?);
        let (mut returned, mut hands) = (0u128, 0u128);
        for (count, five) in keys.values() {
            let (deal, called) = called_deal(&engine, &placements, five)?;
            let settled = engine.settle(&called, &deal)?;
            let paid = settled
                .payouts
                .iter()
                .find(|p| p.bet_type == bet)
                .map_or(0, |p| p.payout.total_minor());
            returned += u128::from(*count) * u128::try_from(paid).unwrap_or(0);
            hands += u128::from(*count);
        }
        let staked = hands * u128::try_from(stake).unwrap_or(0);
        let f = Fraction::new(returned, staked).ok_or_else(|| {
            Refusal::new(
                crate::simulate::code::UNSIMULATED_BET,
                format!("{bet} has no stake to compute a return on"),
            )
        })?;
        out.push((bet.to_string(), f));
    }
    Ok(out)
}

/// Ranks sorted (4 bits each) and whether all five share a suit: what a five-card hand's
/// class and its low reading depend on.
fn key(five: &[Card; 5]) -> u32 {
    let mut ranks = five.map(|c| c.rank as u32);
    ranks.sort_unstable();
    let flush = five.iter().all(|c| c.suit == five[0].suit);
    ranks.iter().fold(u32::from(flush), |k, &r| (k << 4) | r)
}

/// A whole deal with `five` as the player's two cards and the flop, the player calling: the
/// other cards are the lowest of the deck not among the five.
fn called_deal(
    engine: &CasinoHoldemEngine<'_>,
    placements: &[Placement],
    five: &[Card; 5],
) -> Result<(Deal, Vec<Placement>), Refusal> {
    let mut others = poker_hand::deck().into_iter().filter(|c| !five.contains(c));
    let (mut hole, mut flop) = (five[..2].iter(), five[2..].iter());
    let mut deal = Deal::default();
    let mut round = placements.to_vec();
    loop {
        match engine.next(&deal) {
            Next::Card { position } => {
                let card = match position {
                    Position::Player => hole.next(),
                    Position::Board if deal.at(Position::Board).len() < 3 => flop.next(),
                    _ => None,
                }
                .copied()
                .or_else(|| others.next())
                .expect("a deck holds enough cards for one deal");
                engine.deal_card(&mut deal, position, card)?;
            }
            Next::Decisions => {
                round.extend(engine.decide(&round, &deal, Decision::Call)?);
                engine.close_decisions(&mut deal)?;
            }
            Next::Complete => return Ok((deal, round)),
        }
    }
}

/// The plan's rows for the Ante and the Call as net results per unit staked, for the
/// strategy's estimate (the settlement itself is always the engine's).
struct Rows {
    /// The Ante's net when it is paid by the table on a hand of each class.
    ante_by_class: [f64; 10],
    ante_push: f64,
    call_win: f64,
    call_push: f64,
    call_not_qualified: f64,
    call_multiple: f64,
}

fn net(row: Option<&PayoutRow>) -> f64 {
    match row {
        Some(r) => match (r.ratio, r.refund) {
            (Some(q), _) => q.numerator() as f64 / q.denominator() as f64,
            (None, Some(q)) => q.numerator() as f64 / q.denominator() as f64 - 1.0,
            (None, None) => -1.0,
        },
        None => -1.0,
    }
}

impl Rows {
    fn of(plan: &Plan, call_multiple: u8) -> Rows {
        let row = |bet: &str, outcome: &str| {
            plan.payouts
                .iter()
                .find(|r| r.bet == bet && r.outcome == outcome)
        };
        let mut ante_by_class = [-1.0; 10];
        for (i, slot) in ante_by_class.iter_mut().enumerate() {
            let class = HandClass::ALL[i];
            *slot = net(plan
                .payouts
                .iter()
                .find(|r| r.bet == ANTE && outcome_classes(&r.outcome).contains(&class)));
        }
        Rows {
            ante_by_class,
            ante_push: net(row(ANTE, "push")),
            call_win: net(row(CALL, "win")),
            call_push: net(row(CALL, "push")),
            call_not_qualified: net(row(CALL, "dealer_not_qualified")),
            call_multiple: f64::from(call_multiple),
        }
    }
}

/// The strategy of the module documentation.
pub(crate) struct Strategy<'e> {
    engine: &'e CasinoHoldemEngine<'e>,
    rows: Rows,
    stream: ChaCha20Rng,
}

impl Strategy<'_> {
    fn evaluate(cards: &[Card]) -> HandRank {
        poker_hand::evaluate(cards).expect("the strategy ranks 5 or 7 distinct cards")
    }

    /// What a call is worth per Ante when the player's seven cards make `p` and the
    /// dealer's `d`, by the plan's rows.
    fn priced(&self, p: HandRank, d: HandRank) -> f64 {
        let r = &self.rows;
        let ante = r.ante_by_class[p.class() as usize];
        if !meets(d, &self.engine.rules().dealer_qualifies_with) {
            ante + r.call_multiple * r.call_not_qualified
        } else if p > d {
            ante + r.call_multiple * r.call_win
        } else if p == d {
            r.ante_push + r.call_multiple * r.call_push
        } else {
            -(1.0 + r.call_multiple)
        }
    }

    pub(crate) fn decide(&mut self, hole: &[Card], flop: &[Card]) -> Decision {
        let five: Vec<Card> = hole.iter().chain(flop).copied().collect();
        if Self::evaluate(&five).class() >= HandClass::ThreeOfAKind {
            return Decision::Call;
        }
        let mut unseen: Vec<Card> = poker_hand::deck()
            .into_iter()
            .filter(|c| !five.contains(c))
            .collect();
        let mut total = 0.0;
        let mut player = [five[0]; 7];
        player[..5].copy_from_slice(&five);
        let mut dealer = [five[0]; 7];
        dealer[2..5].copy_from_slice(flop);
        for _ in 0..SAMPLES {
            // A partial Fisher–Yates: the first four unseen cards become a uniform draw.
            for j in 0..4 {
                let k =
                    j + rng::uniform_below(&mut self.stream, (unseen.len() - j) as u32) as usize;
                unseen.swap(j, k);
            }
            player[5] = unseen[0];
            player[6] = unseen[1];
            dealer[0] = unseen[2];
            dealer[1] = unseen[3];
            dealer[5] = unseen[0];
            dealer[6] = unseen[1];
            total += self.priced(Self::evaluate(&player), Self::evaluate(&dealer));
        }
        if total / f64::from(SAMPLES) >= -1.0 {
            Decision::Call
        } else {
            Decision::Fold
        }
    }
}

/// How a simulated run went, beside its rows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Calls {
    pub hands: u64,
    pub called: u64,
}

/// Plays `rounds` RNG rounds from `seed` (each deal from the next 32 bytes of the stream, as
/// `pitboss simulate` deals): one player with the Ante at `min_bet` deciding by the strategy
/// of the module documentation, and, where the plan has Call Blind, a second player with a
/// Call Blind at the Call's `min_bet` on the same cards. Rows: `ante` (the hand, Ante and
/// Call together, per Ante staked: the published convention), `call` (the Call's own
/// stakes, on the hands called), `call_blind` (per Call Blind stake, Ante and Call).
pub fn simulate_best(
    plan: &Plan,
    seed: [u8; 32],
    rounds: u64,
) -> Result<(Vec<BetStats>, Calls), Refusal> {
    let engine = CasinoHoldemEngine::new(plan)?;
    let ante_stake = plan.bet(ANTE).map_or(0, |b| b.min_bet);
    let ante = engine.place(&HoldemBetRequest {
        bet: ANTE.into(),
        stake_minor: ante_stake,
    })?;
    let call_stake = ante_stake * i64::from(engine.rules().call_multiple);
    let blind = match (&engine.rules().call_blind, plan.bet(CALL)) {
        (Some(_), Some(call)) => Some(engine.place(&HoldemBetRequest {
            bet: CALL_BLIND.into(),
            stake_minor: call.min_bet,
        })?),
        _ => None,
    };
    let blind_stake: i64 = blind
        .as_ref()
        .map_or(0, |b| b.iter().map(|p| p.stake_minor).sum());
    let mut hand = BetStats::row(ANTE, ante_stake);
    let mut call = BetStats::row(CALL, call_stake);
    let mut blind_row = BetStats::row(CALL_BLIND, blind_stake);
    let mut strategy = Strategy {
        engine: &engine,
        rows: Rows::of(plan, engine.rules().call_multiple),
        stream: rng::stream(
            Sha256::digest([b"casino-holdem-strategy".as_slice(), &seed].concat()).into(),
        ),
    };
    let mut calls = Calls::default();
    let mut stream = rng::stream(seed);
    let mut deal_seed = [0u8; 32];
    for _ in 0..rounds {
        stream.fill_bytes(&mut deal_seed);
        let mut cards = engine.rng_deal(deal_seed).into_iter();
        let mut deal = Deal::default();
        let mut round = ante.clone();
        loop {
            match engine.next(&deal) {
                Next::Card { position } => {
                    let c = cards.next().expect("rng_deal deals every card");
                    engine.deal_card(&mut deal, position, c.card)?;
                }
                Next::Decisions => {
                    let decision =
                        strategy.decide(&deal.at(Position::Player), &deal.at(Position::Board));
                    calls.hands += 1;
                    if decision == Decision::Call {
                        calls.called += 1;
                    }
                    round.extend(engine.decide(&round, &deal, decision)?);
                    engine.close_decisions(&mut deal)?;
                }
                Next::Complete => break,
            }
        }
        let settled = engine.settle(&round, &deal)?;
        let (mut returned, mut win) = (0i64, 0i64);
        for p in &settled.payouts {
            returned += p.payout.total_minor();
            win += p.payout.win_minor;
            if p.bet_type == CALL {
                call.add_round(
                    p.payout.stake_minor,
                    p.payout.total_minor(),
                    p.payout.win_minor,
                );
            }
        }
        // Per Ante staked: the Call's result counts with it (a lost Call makes the round's
        // return negative, as blackjack's doubles do).
        let call_staked: i64 = round
            .iter()
            .filter(|p| p.bet_type == CALL)
            .map(|p| p.stake_minor)
            .sum();
        hand.add_round(ante_stake, returned - call_staked, win);
        if let Some(b) = &blind {
            let s = engine.settle(b, &deal)?;
            blind_row.add_round(
                blind_stake,
                s.total_minor(),
                s.payouts.iter().map(|p| p.payout.win_minor).sum(),
            );
        }
    }
    let mut rows = vec![hand, call];
    if blind.is_some() {
        rows.push(blind_row);
    }
    Ok((rows, calls))
}

#[cfg(test)]
pub(crate) mod tests_support {
    use super::*;

    pub(crate) fn strategy<'e>(engine: &'e CasinoHoldemEngine<'e>, seed: [u8; 32]) -> Strategy<'e> {
        Strategy {
            engine,
            rows: Rows::of(engine.plan(), engine.rules().call_multiple),
            stream: rng::stream(seed),
        }
    }

    /// On `deals` random deals, a called hand's net per Ante as the strategy prices it is the
    /// engine's settlement.
    pub(crate) fn check_prices(plan: &Plan, deals: u64) {
        let engine = CasinoHoldemEngine::new(plan).unwrap();
        let s = strategy(&engine, [0; 32]);
        let ante = plan.bet(ANTE).unwrap().min_bet;
        let placed = engine
            .place(&HoldemBetRequest {
                bet: ANTE.into(),
                stake_minor: ante,
            })
            .unwrap();
        let mut stream = rng::stream([7; 32]);
        let mut seed = [0u8; 32];
        for _ in 0..deals {
            stream.fill_bytes(&mut seed);
            let mut cards = engine.rng_deal(seed).into_iter();
            let mut deal = Deal::default();
            let mut round = placed.clone();
            loop {
                match engine.next(&deal) {
                    Next::Card { position } => {
                        engine
                            .deal_card(&mut deal, position, cards.next().unwrap().card)
                            .unwrap();
                    }
                    Next::Decisions => {
                        round.extend(engine.decide(&round, &deal, Decision::Call).unwrap());
                        engine.close_decisions(&mut deal).unwrap();
                    }
                    Next::Complete => break,
                }
            }
            let settled = engine.settle(&round, &deal).unwrap();
            let staked: i64 = round.iter().map(|p| p.stake_minor).sum();
            let net = (settled.total_minor() - staked) as f64 / ante as f64;
            let board = deal.at(Position::Board);
            let p = Strategy::evaluate(&[deal.at(Position::Player), board.clone()].concat());
            let d = Strategy::evaluate(&[deal.at(Position::Dealer), board].concat());
            assert!(
                (s.priced(p, d) - net).abs() < 1e-9,
                "{}: priced {} but settled {net} ({settled:?})",
                plan.key(),
                s.priced(p, d)
            );
        }
    }
}
