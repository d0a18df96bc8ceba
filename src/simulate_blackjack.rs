//! `pitboss simulate` for blackjack plans: whole rounds through the engine's round driver
//! ([`BlackjackEngine::play_round`]'s steps: `open_round` once, then `reopen_round`,
//! `play_on` and `settle_round` each round),
//! the same code the service drives from logged events, with basic strategy
//! ([`BasicStrategy`]) deciding.
//!
//! **Cards.** Each round is dealt from a freshly shuffled full shoe of the plan
//! ([`LazyShoe`]: the documented forward Fisher–Yates of [`crate::rng`], dealt lazily, card for
//! card what [`crate::games::blackjack::shuffled_shoe`] deals), continuing the run's one
//! ChaCha20 stream, as RNG mode deals each round from its own shuffled shoe.
//!
//! **Bets.** Every round: a main bet at `main`'s `min_bet` on each box (as many boxes as the
//! plan's `seating.min_players`, one player each: two in the Czech plans, one elsewhere; in a
//! common-hand game that many players), every side bet of the plan at its `min_bet` on each
//! box, and where the plan offers Bet Behind one Bet Behind at its `min_bet` on box 1, which
//! funds every split and double. Insurance is taken by every box owner whenever it is offered,
//! for the plan's full share of the main bet: basic strategy never insures, but insurance is
//! its own stake and changes no decision, so this measures its return without touching the
//! others'. A Bet Behind does not insure.
//!
//! **Rows.** `main`: per initial main stake, the net result of the hands' own stakes (main,
//! split, double, surrender refund; not insurance), as published house edges are stated
//! (returned = stake + net, so a doubled loss returns −1 stake). `bet_behind`: the same for
//! the Bet Behind. `insurance`: the rounds it was taken. Each side bet: its stake and return.
//! With two boxes a row adds both boxes' stakes of a round (one sample per round, so the
//! interval allows for the shared dealer hand); the largest win is one box's.

use rand_chacha::ChaCha20Rng;

use crate::cards::Card;
use crate::games::baccarat::Fraction;
use crate::games::blackjack::SideBetDeal;
use crate::games::blackjack::{
    BasicStrategy, BetBehindBet, BlackjackBet, BlackjackEngine, Decider, Decision, LazyShoe,
    PositionBets, RoundPaid, RoundSetup, RoundState,
};
use crate::games::Refusal;
use crate::plan::model::Plan;
use crate::plan::rules::blackjack::{SeatingModel, SideBetCards};
use crate::simulate::{BetStats, PROGRESS_EVERY};

/// Basic strategy, insuring every box owner when offered (see the module documentation).
struct SimDecider<'s> {
    strategy: &'s BasicStrategy,
}

impl Decider for SimDecider<'_> {
    fn decide(
        &mut self,
        engine: &BlackjackEngine<'_>,
        state: &RoundState,
        position: usize,
        hand: usize,
    ) -> Option<Decision> {
        let hands = &state.positions[position].play.hands;
        Some(self.strategy.decide(engine, hands, hand, state.dealer[0]))
    }

    fn insure(
        &mut self,
        engine: &BlackjackEngine<'_>,
        state: &RoundState,
        position: usize,
        bet_behind: Option<usize>,
    ) -> Option<i64> {
        if bet_behind.is_some() {
            return None;
        }
        let fraction = engine.rules().insurance.fraction_of_main?;
        fraction.apply(
            state.positions[position].play.main_stake_minor,
            engine.plan().plan.rounding,
        )
    }
}

/// The round's bets (module documentation).
fn setup(plan: &Plan, engine: &BlackjackEngine<'_>) -> Result<RoundSetup, Refusal> {
    let rules = engine.rules();
    let min_bet = |id: &str| {
        plan.bet(id).map(|b| b.min_bet).ok_or_else(|| {
            Refusal::new(
                crate::simulate::code::UNSIMULATED_BET,
                format!("{} has no bet type '{id}'", plan.key()),
            )
        })
    };
    let mut bets = vec![BlackjackBet {
        bet: "main".into(),
        stake_minor: min_bet("main")?,
    }];
    for sb in &rules.side_bets {
        bets.push(BlackjackBet {
            bet: sb.id.clone(),
            stake_minor: min_bet(&sb.id)?,
        });
    }
    let seated = rules.seating.model == SeatingModel::Seats;
    let boxes = rules.seating.min_players.max(1);
    let mut positions = Vec::new();
    for i in 1..=boxes {
        let seat = if seated {
            Some(u8::try_from(i).unwrap_or(u8::MAX))
        } else {
            None
        };
        let mut bets_behind = Vec::new();
        if i == 1 && rules.bet_behind.allowed {
            bets_behind.push(BetBehindBet {
                player: "bet behind".into(),
                stake_minor: min_bet("bet_behind")?,
            });
        }
        positions.push(PositionBets {
            seat,
            player: format!("player {i}"),
            bets: bets.clone(),
            bets_behind,
        });
    }
    Ok(RoundSetup { positions })
}

/// The statistics rows and how a round's settlement adds to them.
struct Rows {
    main: BetStats,
    bet_behind: Option<BetStats>,
    insurance: Option<BetStats>,
    side_bets: Vec<BetStats>,
}

impl Rows {
    fn new(setup: &RoundSetup, engine: &BlackjackEngine<'_>) -> Rows {
        let first = &setup.positions[0];
        let n = setup.positions.len() as i64;
        let stake = |bet: &str| {
            first
                .bets
                .iter()
                .find(|b| b.bet == bet)
                .map_or(0, |b| b.stake_minor)
                * n
        };
        let rules = engine.rules();
        Rows {
            main: BetStats::row("main", stake("main")),
            bet_behind: first
                .bets_behind
                .first()
                .map(|b| BetStats::row("bet_behind", b.stake_minor)),
            insurance: rules
                .insurance
                .fraction_of_main
                .filter(|_| rules.insurance.offered)
                .and_then(|f| f.apply(stake("main") / n, engine.plan().plan.rounding))
                .map(|one| BetStats::row("insurance", one * n)),
            side_bets: rules
                .side_bets
                .iter()
                .map(|sb| BetStats::row(&sb.id, stake(&sb.id)))
                .collect(),
        }
    }

    fn record(&mut self, s: &RoundPaid<'_>) {
        let (mut staked, mut returned, mut win) = (0i64, 0i64, 0i64);
        let (mut ins_staked, mut ins_returned, mut ins_win) = (0i64, 0i64, 0i64);
        for p in &s.positions {
            let mut box_win = 0;
            for st in &p.main.stakes {
                if st.bet == "insurance" {
                    ins_staked += st.stake_minor;
                    ins_returned += st.total_minor();
                    ins_win = ins_win.max(st.win_minor);
                    continue;
                }
                if st.hand == Some(0) && st.bet == "main" {
                    staked += st.stake_minor;
                    returned += st.stake_minor;
                }
                returned += st.total_minor() - st.stake_minor;
                box_win += st.win_minor;
            }
            win = win.max(box_win);
        }
        self.main.add_round(staked, returned, win);
        if ins_staked > 0 {
            if let Some(row) = &mut self.insurance {
                row.add_round(ins_staked, ins_returned, ins_win);
            }
        }
        for (k, row) in self.side_bets.iter_mut().enumerate() {
            let (mut st, mut ret, mut w) = (0, 0, 0);
            for p in &s.positions {
                let b = &p.side_bets[k];
                st += b.stake_minor;
                ret += b.total_minor();
                w = w.max(b.win_minor);
            }
            row.add_round(st, ret, w);
        }
        if let Some(row) = &mut self.bet_behind {
            if let Some(bb) = s.positions[0].bets_behind.first() {
                let (mut st, mut ret, mut w) = (0, 0, 0);
                for x in &bb.stakes {
                    if x.bet == "insurance" {
                        continue;
                    }
                    if x.hand == Some(0) && x.bet == "bet_behind" {
                        st += x.stake_minor;
                        ret += x.stake_minor;
                    }
                    ret += x.total_minor() - x.stake_minor;
                    w += x.win_minor;
                }
                row.add_round(st, ret, w);
            }
        }
    }

    fn into_vec(self) -> Vec<BetStats> {
        let mut out = vec![self.main];
        out.extend(self.bet_behind);
        out.extend(self.insurance);
        out.extend(self.side_bets);
        out
    }
}

/// Plays `rounds` rounds of a blackjack plan from `stream` (module documentation).
pub(crate) fn simulate(
    plan: &Plan,
    stream: &mut ChaCha20Rng,
    rounds: u64,
    progress: &mut dyn FnMut(u64),
) -> Result<Vec<BetStats>, Refusal> {
    let engine = BlackjackEngine::new(plan)?;
    let strategy = BasicStrategy::new(&engine);
    let setup = setup(plan, &engine)?;
    let mut rows = Rows::new(&setup, &engine);
    let mut decider = SimDecider {
        strategy: &strategy,
    };
    let mut shoe = LazyShoe::new(engine.rules().shoe);
    // `play_round`, with the bets checked once, the round's memory kept from one round to
    // the next, and settled by the prepared settlement (`settle_round`'s code with the rows
    // read once; tested equal to it).
    let mut state = engine.open_round(&setup)?;
    let prepared = engine.prepare_settlement(&state);
    let mut paid = RoundPaid::default();
    for r in 0..rounds {
        shoe.restart();
        let mut cards = || -> Option<Card> { shoe.next_card(stream) };
        engine.reopen_round(&mut state);
        engine.play_on(&mut state, &mut cards, &mut decider)?;
        engine.settle_round_prepared(&prepared, &state, &mut paid)?;
        rows.record(&paid);
        if (r + 1) % PROGRESS_EVERY == 0 {
            progress(r + 1);
        }
    }
    Ok(rows.into_vec())
}

/// The exact return of each side bet decided on the first cards alone (the pair bets and the
/// three-card bets): every ordered draw of the cards it reads out of the plan's full shoe,
/// weighted by its probability without replacement (`c·(c − 1)…` copies), settled by the
/// engine's `settle_side_bet` at the bet's `min_bet`. Bust It and Buster read the dealer's
/// whole hand, which play decides: simulated only.
pub(crate) fn exact_side_bets(plan: &Plan) -> Result<Vec<(String, Fraction)>, Refusal> {
    let engine = BlackjackEngine::new(plan)?;
    let rules = engine.rules();
    let kinds = rules.shoe.deck.cards();
    let copies = u128::from(rules.shoe.decks);
    // Copies of `c` left after `gone` are out of the shoe.
    let left = |c: Card, gone: &[Card]| copies - gone.iter().filter(|&&g| g == c).count() as u128;
    let mut out = Vec::new();
    for sb in &rules.side_bets {
        let stake = plan.bet(&sb.id).map_or(0, |b| b.min_bet);
        let (mut returned, mut staked) = (0u128, 0u128);
        let mut add = |deal: &SideBetDeal, weight: u128| -> Result<(), Refusal> {
            let paid = engine.settle_side_bet(&sb.id, stake, deal)?;
            returned += weight * u128::try_from(paid.payout.total_minor()).unwrap_or(0);
            staked += weight * u128::try_from(stake).unwrap_or(0);
            Ok(())
        };
        match sb.cards {
            SideBetCards::PlayerFirstTwo | SideBetCards::DealerFirstTwo => {
                for &a in &kinds {
                    for &b in &kinds {
                        let deal = SideBetDeal {
                            player_first_two: [a, b],
                            dealer: vec![a, b],
                        };
                        add(&deal, copies * left(b, &[a]))?;
                    }
                }
            }
            SideBetCards::PlayerFirstTwoAndDealerFirst => {
                for &a in &kinds {
                    for &b in &kinds {
                        for &d in &kinds {
                            let deal = SideBetDeal {
                                player_first_two: [a, b],
                                dealer: vec![d],
                            };
                            add(&deal, copies * left(b, &[a]) * left(d, &[a, b]))?;
                        }
                    }
                }
            }
            SideBetCards::DealerFinalHand => continue,
        }
        let f = Fraction::new(returned, staked).ok_or_else(|| {
            Refusal::new(
                crate::simulate::code::UNSIMULATED_BET,
                format!("{} has no stake to compute a return on", sb.id),
            )
        })?;
        out.push((sb.id.clone(), f));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::blackjack::testing::{plan, PLANS};

    #[test]
    fn every_blackjack_plan_simulates_with_basic_strategy_taking_only_legal_decisions() {
        // play_round refuses any decision the engine does not allow: 20 000 rounds of every
        // plan run without a refusal, and the main bet returns what blackjack returns.
        for id in PLANS {
            let p = plan(id);
            let mut stream = crate::rng::stream([9; 32]);
            let rows = simulate(&p, &mut stream, 20_000, &mut |_| {})
                .unwrap_or_else(|r| panic!("{id}: {r}"));
            let main = &rows[0];
            assert_eq!(main.bet, "main");
            assert_eq!(main.rounds, 20_000);
            let rtp = main.returned_minor as f64 / main.staked_minor as f64;
            assert!((0.95..1.03).contains(&rtp), "{id}: main returns {rtp}");
        }
    }

    /// Every row of a run as text: bet, rounds, staked, returned, largest win.
    fn rows_text(rows: &[BetStats]) -> String {
        rows.iter()
            .map(|r| {
                format!(
                    "{} {} {} {} {}",
                    r.bet, r.rounds, r.staked_minor, r.returned_minor, r.largest_win_minor
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// FNV-1a of `s`.
    fn fnv(s: &str) -> u64 {
        s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
    }

    #[test]
    fn the_simulation_of_every_plan_is_pinned_for_a_fixed_seed() {
        // 20 000 rounds of every plan from seed [3; 32]: every row's stake, return and largest
        // win, pinned by a checksum taken before the prepared settlement (any change to the
        // cards, the decisions or the amounts settled changes it). The first row is spelled
        // out as well, to show what moved.
        let pinned: [(&str, &str, u64); 9] = [
            (
                "alg-blackjack-endless",
                "main 20000 2000000 1986650 400",
                10584552808420577955,
            ),
            (
                "alg-blackjack",
                "main 20000 2000000 2007200 400",
                17658729538043883567,
            ),
            (
                "czech-blackjack-strict",
                "main 20000 4000000 3945700 200",
                11283814080376402744,
            ),
            (
                "czech-blackjack",
                "main 20000 4000000 3955200 400",
                12621022831374064234,
            ),
            (
                "evolution-blackjack",
                "main 20000 2000000 2002450 200",
                8247922467513480181,
            ),
            (
                "evolution-infinite-blackjack",
                "main 20000 2000000 2002450 200",
                4487955925139669609,
            ),
            (
                "single-deck-blackjack",
                "main 20000 2000000 1991050 300",
                5566022336213507550,
            ),
            (
                "synot-all-bets-blackjack",
                "main 20000 2000000 2007200 400",
                4922294217582188307,
            ),
            (
                "synot-blackjack",
                "main 20000 2000000 2007200 400",
                14929345870470316028,
            ),
        ];
        let mut got = Vec::new();
        for (id, _, _) in pinned {
            let mut stream = crate::rng::stream([3; 32]);
            let rows = simulate(&plan(id), &mut stream, 20_000, &mut |_| {}).unwrap();
            let text = rows_text(&rows);
            let first = text.split("; ").next().unwrap_or_default().to_string();
            got.push((id, first, fnv(&text)));
        }
        for ((id, first, sum), (pid, pfirst, psum)) in got.iter().zip(pinned) {
            assert_eq!(
                (*id, first.as_str(), *sum),
                (pid, pfirst, psum),
                "all: {got:?}"
            );
        }
    }

    #[test]
    fn perfect_pairs_25_12_6_returns_398_of_415_from_eight_decks() {
        // After any first card, 415 remain: 7 make a perfect pair (25:1), 8 a coloured pair
        // (12:1), 16 a mixed pair (6:1): (7·26 + 8·13 + 16·7) / 415 = 398/415, the published
        // house edge of 4.10 %.
        let exact = exact_side_bets(&plan("evolution-blackjack")).unwrap();
        let (bet, f) = &exact[0];
        assert_eq!(bet, "perfect_pairs");
        assert_eq!((f.numerator, f.denominator), (398, 415));
    }

    #[test]
    fn simulated_side_bets_agree_with_their_exact_returns() {
        // Every side bet decided on the first cards: over 200 000 rounds the simulated return
        // lies within twice its 95 % half-width (about four standard errors) of the exact
        // return; a broken deal or classification would not (a dozen bets are checked, so
        // the plain 95 % interval would miss one now and then by chance).
        for id in [
            "synot-all-bets-blackjack",
            "synot-blackjack",
            "evolution-infinite-blackjack",
        ] {
            let p = plan(id);
            let exact = exact_side_bets(&p).unwrap();
            let mut stream = crate::rng::stream([5; 32]);
            let mut rows = simulate(&p, &mut stream, 200_000, &mut |_| {}).unwrap();
            for (bet, f) in exact {
                let row = rows.iter_mut().find(|r| r.bet == bet).unwrap();
                row.finish();
                let x = f.numerator as f64 / f.denominator as f64;
                let half = (row.ci95_high - row.ci95_low) / 2.0;
                assert!(
                    (row.rtp - x).abs() <= 2.0 * half,
                    "{id} {bet}: exact {x}, simulated {} … {}",
                    row.ci95_low,
                    row.ci95_high
                );
            }
        }
    }
}
