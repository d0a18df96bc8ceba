//! A property test over random play: tables of two to ten players with stacks from a few
//! chips to three buy-ins, random legal (and some illegal) decisions, straddles, players
//! coming and going, misdeals and irregularities, in no-limit and pot-limit, from seeded
//! ChaCha streams. After every action the engine itself counts the chips (an action that
//! would break the count is refused with `chip_conservation`, which fails the test); the test
//! checks besides that every decision the engine offers is accepted, that decisions outside
//! the offer are refused, that the pots paid are the pots formed and go to the best hands
//! shown, that a voided hand gives every player his stack back, and that replaying the log
//! rebuilds the table.

use rand::seq::{IndexedRandom, SliceRandom};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::tests::{plan, plan_with, Game, BUY_IN};
use super::*;
use crate::cards::{DeckKind, Shoe};
use crate::plan::rules::poker::BettingStructure;

const CHIP: i64 = 500;

#[derive(Debug, Default)]
struct Stats {
    hands: u32,
    showdowns: u32,
    showdowns_with_three_all_in: u32,
    side_pots: u32,
    split_pots: u32,
    voided: u32,
    incomplete_raises: u32,
    straddles: u32,
    refused_illegal: u32,
}

/// A random amount in whole chips in `lo ..= hi` (both whole chips).
fn chips_in(rng: &mut ChaCha8Rng, lo: i64, hi: i64) -> i64 {
    rng.random_range(lo / CHIP..=hi / CHIP) * CHIP
}

struct Player {
    next_id: u32,
}

impl Player {
    fn sit_somebody(&mut self, g: &mut Game, rng: &mut ChaCha8Rng) {
        let empty: Vec<SeatNo> = (1..=g.table.seats_max())
            .filter(|&s| g.table.seat(s).is_none())
            .collect();
        let Some(&seat) = empty.choose(rng) else {
            return;
        };
        self.next_id += 1;
        // Short stacks (moved here by the house) make all-ins and side pots common.
        let (entry, chips) = if rng.random_bool(0.6) {
            (Entry::MovedByHouse, chips_in(rng, CHIP, 30_000))
        } else {
            (Entry::BuyIn, chips_in(rng, BUY_IN, 3 * BUY_IN))
        };
        let np = if rng.random_bool(0.5) {
            NewPlayerOption::WaitForBigBlind
        } else {
            NewPlayerOption::PostBigBlind
        };
        g.ok(Action::SitDown {
            seat,
            player: format!("r{}", self.next_id),
            chips_minor: chips,
            entry,
            new_player: np,
        });
    }
}

fn between_hands(g: &mut Game, rng: &mut ChaCha8Rng, who: &mut Player) {
    g.now += chrono::Duration::minutes(rng.random_range(1..=5));
    let seated: Vec<SeatNo> = (1..=g.table.seats_max())
        .filter(|&s| g.table.seat(s).is_some())
        .collect();
    for &s in &seated {
        let p = g.table.seat(s).expect("seated").clone();
        if p.stack_minor == 0 {
            if rng.random_bool(0.5) {
                g.ok(Action::TopUp {
                    seat: s,
                    chips_minor: BUY_IN,
                });
            } else {
                g.ok(Action::Leave { seat: s });
            }
        } else if rng.random_bool(0.02) {
            g.ok(Action::Leave { seat: s });
        } else if p.status == Status::SittingOut && rng.random_bool(0.4) {
            g.ok(Action::SitIn {
                seat: s,
                new_player: NewPlayerOption::PostBigBlind,
            });
        } else if p.status != Status::SittingOut && rng.random_bool(0.02) {
            g.ok(Action::SitOut { seat: s });
        }
    }
    if rng.random_bool(0.1) {
        who.sit_somebody(g, rng);
    }
}

fn draw(g: &mut Game, rng: &mut ChaCha8Rng, players: &[SeatNo]) {
    let mut deck = DeckKind::Standard52.cards();
    deck.shuffle(rng);
    let cards = players
        .iter()
        .zip(deck)
        .map(|(&seat, card)| SeatCard { seat, card })
        .collect();
    g.ok(Action::DrawForButton { cards });
}

/// A random decision from the offer, sent as a declaration or as pushed chips.
fn decide(g: &mut Game, rng: &mut ChaCha8Rng, turn: &Turn, stats: &mut Stats) -> Vec<Effect> {
    let seat = turn.seat;
    // Now and then something outside the offer, which must be refused.
    if rng.random_bool(0.05) {
        let wrong = [
            Action::Check {
                seat: seat % 10 + 1,
            },
            Action::Raise {
                seat,
                to_minor: turn.stack_minor + turn.in_round_minor + CHIP,
            },
            Action::Show { seat },
            Action::StartHand {},
        ];
        let a = wrong.choose(rng).expect("some").clone();
        assert!(g.try_apply(a).is_err(), "outside the offer: refused");
        stats.refused_illegal += 1;
        if !turn.legal.contains(&Legal::Check) {
            g.refused(Action::Check { seat }, code::CANNOT_CHECK);
            stats.refused_illegal += 1;
        }
    }
    let legal = &turn.legal;
    let weights: Vec<(Legal, u32)> = legal
        .iter()
        .map(|&l| {
            let w = match l {
                Legal::Fold => 2,
                Legal::Check | Legal::Call { .. } => 6,
                Legal::Bet { .. } | Legal::Raise { .. } => 3,
                Legal::AllIn { .. } => 2,
            };
            (l, w)
        })
        .collect();
    let l = weights.choose_weighted(rng, |x| x.1).expect("a choice").0;
    let action = match l {
        Legal::Fold => Action::Fold { seat },
        Legal::Check => Action::Check { seat },
        Legal::Call { amount_minor, .. } => {
            if rng.random_bool(0.2) && amount_minor > 0 {
                // Pushed: the exact call in chips of one unit.
                Action::Chips {
                    seat,
                    chips_minor: vec![CHIP; usize::try_from(amount_minor / CHIP).expect("few")],
                }
            } else {
                Action::Call { seat }
            }
        }
        Legal::Bet {
            min_to_minor,
            max_to_minor,
        }
        | Legal::Raise {
            min_to_minor,
            max_to_minor,
        } => {
            let to = if rng.random_bool(0.3) {
                min_to_minor
            } else {
                chips_in(rng, min_to_minor, max_to_minor.min(min_to_minor * 4))
            };
            // Below the minimum (and not all-in) is refused.
            if to > CHIP
                && to - CHIP < min_to_minor
                && to - CHIP != turn.in_round_minor + turn.stack_minor
            {
                let below = if matches!(l, Legal::Bet { .. }) {
                    Action::Bet {
                        seat,
                        to_minor: to - CHIP,
                    }
                } else {
                    Action::Raise {
                        seat,
                        to_minor: to - CHIP,
                    }
                };
                if rng.random_bool(0.1) {
                    assert!(g.try_apply(below).is_err(), "below the minimum: refused");
                    stats.refused_illegal += 1;
                }
            }
            if rng.random_bool(0.2) && to - turn.in_round_minor < turn.stack_minor {
                // Pushed without a word: whatever the rules make of it is accepted.
                let n = rng.random_range(1..=3);
                let total = to - turn.in_round_minor;
                let mut chips = vec![total / n / CHIP * CHIP; usize::try_from(n).expect("few")];
                chips[0] += total - chips.iter().sum::<i64>();
                chips.retain(|&c| c > 0);
                let a = Action::Chips {
                    seat,
                    chips_minor: chips,
                };
                return g.ok(a);
            }
            if matches!(l, Legal::Bet { .. }) {
                Action::Bet { seat, to_minor: to }
            } else {
                Action::Raise { seat, to_minor: to }
            }
        }
        Legal::AllIn { .. } => Action::AllIn { seat },
    };
    g.ok(action)
}

/// Checks what the action that ended a hand paid against the hand before it.
fn check_payout(before: &Hand, fx: &[Effect], stats: &mut Stats) {
    let pots = fx.iter().rev().find_map(|e| match e {
        Effect::BettingClosed { pots, .. } => Some(pots.clone()),
        _ => None,
    });
    let mut shown: Vec<(SeatNo, poker_hand_rank::Rank)> = before
        .players
        .iter()
        .filter_map(|p| p.shown.map(|r| (p.seat, r)))
        .collect();
    for e in fx {
        if let Effect::Shown { seat, hand, .. } = e {
            shown.push((*seat, *hand));
        }
    }
    let pots = pots.or_else(|| {
        before
            .showdown
            .as_ref()
            .map(|s| s.pots.iter().map(|sp| sp.pot.clone()).collect())
    });
    let awards: Vec<_> = fx
        .iter()
        .filter_map(|e| match e {
            Effect::PotAwarded {
                pot,
                amount_minor,
                shares,
                hand,
            } => Some((*pot, *amount_minor, shares.clone(), *hand)),
            _ => None,
        })
        .collect();
    if awards.is_empty() {
        return;
    }
    let pots = pots.expect("the pots paid were formed");
    assert_eq!(awards.len(), pots.len(), "every pot is paid once: {fx:?}");
    if pots.len() > 1 {
        stats.side_pots += 1;
    }
    for (k, (pot, amount, shares, hand)) in awards.iter().enumerate() {
        // The side pots first, the main pot last.
        assert_eq!(*pot, pots.len() - 1 - k);
        assert_eq!(*amount, pots[*pot].amount_minor);
        assert_eq!(shares.iter().map(|s| s.amount_minor).sum::<i64>(), *amount);
        let min = shares
            .iter()
            .map(|s| s.amount_minor)
            .min()
            .expect("a winner");
        for s in shares {
            assert!(pots[*pot].eligible.contains(&s.seat), "{s:?} not in {pot}");
            // An even split up to one smallest chip.
            assert!(s.amount_minor - min <= CHIP);
        }
        if shares.len() > 1 {
            stats.split_pots += 1;
        }
        if let Some(best) = hand {
            for s in shares {
                let r = shown
                    .iter()
                    .find(|x| x.0 == s.seat)
                    .expect("a winner showed")
                    .1;
                assert_eq!(r, *best);
            }
            for &(seat, r) in &shown {
                if pots[*pot].eligible.contains(&seat) {
                    assert!(
                        r <= *best,
                        "seat {seat} showed a better hand than the winner"
                    );
                }
            }
        }
    }
}

/// `HandRank` under a short name for the checks above.
mod poker_hand_rank {
    pub use crate::games::poker_hand::HandRank as Rank;
}

fn play_table(seed: u64, stats: &mut Stats) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let plan = if rng.random_bool(0.3) {
        plan_with(|r| r.betting_structure = BettingStructure::PotLimit)
    } else {
        plan()
    };
    let mut g = Game::new(plan);
    let mut who = Player { next_id: 0 };
    for _ in 0..rng.random_range(2..=10) {
        who.sit_somebody(&mut g, &mut rng);
    }
    let mut deal: Option<showdown::RngDeal> = None;
    // A street dealt again goes out without its burn card (it stays burnt).
    let mut no_burn = false;
    for _ in 0..600 {
        let before = g.table.clone();
        let expected = g.expected();
        // Now and then an irregularity or a misdeal during a hand; the hand stands or is
        // voided as the plan says.
        if g.table.hand.is_some() && rng.random_bool(0.01) {
            let plan_rules = match &g.plan.rules {
                GameRules::PokerCash(r) => r.clone(),
                _ => unreachable!(),
            };
            let a = if rng.random_bool(0.5) {
                Action::Misdeal {
                    cause: plan_rules
                        .misdeal
                        .causes
                        .choose(&mut rng)
                        .expect("causes")
                        .id,
                }
            } else {
                let seat = g.hand().players.choose(&mut rng).map(|p| p.seat);
                Action::Irregularity {
                    kind: plan_rules
                        .irregularities
                        .choose(&mut rng)
                        .expect("items")
                        .id,
                    seat,
                }
            };
            if let Ok(fx) = g.try_apply(a) {
                after_action(&before, &g.table, &fx, stats);
                let board = |t: &Table| t.hand.as_ref().map_or(0, |h| h.board.len());
                no_burn |= board(&g.table) < board(&before);
                if g.table.hand.is_none() {
                    deal = None;
                }
            }
            continue;
        }
        let fx = match expected {
            Expected::BetweenHands { .. } => {
                between_hands(&mut g, &mut rng, &mut who);
                match g.engine().readiness(&g.table) {
                    Readiness::Ready { .. } => {
                        let fx = g.ok(Action::StartHand {});
                        stats.hands += 1;
                        deal = None;
                        no_burn = false;
                        fx
                    }
                    Readiness::ButtonDraw { players } => {
                        draw(&mut g, &mut rng, &players);
                        continue;
                    }
                    Readiness::TooFewPlayers => {
                        who.sit_somebody(&mut g, &mut rng);
                        continue;
                    }
                }
            }
            Expected::HoleCards {
                seats,
                straddle_seat,
            } => {
                if let Some(s) = straddle_seat.filter(|_| rng.random_bool(0.3)) {
                    g.ok(Action::Straddle { seat: s });
                    stats.straddles += 1;
                    continue;
                }
                let d = deal.get_or_insert_with(|| {
                    let mut deck = DeckKind::Standard52.cards();
                    deck.shuffle(&mut rng);
                    let h = g.table.hand.as_ref().expect("a hand");
                    rng_deal(h, &deck).expect("one deck serves ten players")
                });
                let a = d
                    .hole_cards
                    .iter()
                    .find(|a| matches!(a, Action::HoleCards { seat, .. } if seats.contains(seat)))
                    .expect("every player's cards")
                    .clone();
                // Rarely, a card the hand has seen already.
                if rng.random_bool(0.01) {
                    if let Some(seen) = g.hand().players.iter().find_map(|p| p.hole) {
                        let Action::HoleCards { seat, .. } = a else {
                            unreachable!()
                        };
                        let fx = g.ok(Action::HoleCards {
                            seat,
                            cards: [seen[0], seen[1]],
                        });
                        assert!(matches!(fx.last(), Some(Effect::HandVoided { .. })));
                        after_action(&before, &g.table, &fx, stats);
                        deal = None;
                        continue;
                    }
                }
                g.ok(a)
            }
            Expected::Decision(turn) => decide(&mut g, &mut rng, &turn, stats),
            Expected::Board { street, .. } => {
                let d = deal.as_ref().expect("dealt from a deck");
                let k = match street {
                    Street::Flop => 0,
                    Street::Turn => 1,
                    _ => 2,
                };
                let mut board = d.boards[k].clone();
                if std::mem::take(&mut no_burn) {
                    if let Action::Board { burn, .. } = &mut board {
                        *burn = None;
                    }
                }
                g.ok(board)
            }
            Expected::Showdown { seat } => {
                if rng.random_bool(0.85) {
                    g.ok(Action::Show { seat })
                } else {
                    g.ok(Action::Muck { seat })
                }
            }
        };
        after_action(&before, &g.table, &fx, stats);
        if g.table.hand.is_none() {
            deal = None;
        }
        assert_eq!(
            g.table.chips_at_table_minor(),
            g.table.bought_in_minor - g.table.cashed_out_minor
        );
    }

    // The log is the table.
    let e = PokerRoomEngine::new(&g.plan).expect("a poker plan");
    let mut t = e.new_table();
    for (a, at) in &g.log {
        e.apply(&mut t, a, *at).expect("a logged action replays");
    }
    assert_eq!(t, g.table, "seed {seed}: the replay rebuilds the table");
}

fn after_action(before: &Table, after: &Table, fx: &[Effect], stats: &mut Stats) {
    for e in fx {
        match e {
            Effect::ShowdownOrder { .. } => {
                stats.showdowns += 1;
                let h = after
                    .hand
                    .as_ref()
                    .expect("a showdown with decisions to take");
                if h.players.iter().filter(|p| p.all_in && !p.folded).count() >= 3 {
                    stats.showdowns_with_three_all_in += 1;
                }
            }
            Effect::Acted {
                read_as: Move::Raise { full: false, .. },
                ..
            } => stats.incomplete_raises += 1,
            Effect::HandVoided { .. } => {
                stats.voided += 1;
                // Every player of the hand is back to his stack at its start.
                let h = before
                    .hand
                    .as_ref()
                    .expect("a voided hand was being played");
                for p in &h.players {
                    assert_eq!(
                        after.seat(p.seat).map(|s| s.stack_minor),
                        Some(p.start_stack_minor)
                    );
                }
            }
            _ => {}
        }
    }
    if let Some(h) = &before.hand {
        check_payout(h, fx, stats);
    }
}

#[test]
fn random_legal_play_keeps_every_chip_and_replays() {
    let mut stats = Stats::default();
    for seed in 0..150 {
        play_table(seed, &mut stats);
    }
    eprintln!("{stats:?}");
    assert!(stats.hands > 5_000, "{stats:?}");
    assert!(stats.showdowns_with_three_all_in > 50, "{stats:?}");
    assert!(stats.side_pots > 200, "{stats:?}");
    assert!(stats.split_pots > 10, "{stats:?}");
    assert!(stats.voided > 10, "{stats:?}");
    assert!(stats.incomplete_raises > 20, "{stats:?}");
    assert!(stats.straddles > 100, "{stats:?}");
    assert!(stats.refused_illegal > 100, "{stats:?}");
}

#[test]
fn rng_deal_gives_the_button_the_last_hole_cards() {
    let mut g = Game::new(plan());
    for s in [2, 5, 9] {
        g.sit(s, BUY_IN);
    }
    g.draw(5);
    g.ok(Action::StartHand {});
    let deck = crate::rng::shuffled(Shoe::new(DeckKind::Standard52, 1), [7; 32]);
    let d = rng_deal(g.hand(), &deck).expect("enough cards");
    let seats: Vec<SeatNo> = d
        .hole_cards
        .iter()
        .map(|a| match a {
            Action::HoleCards { seat, .. } => *seat,
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(seats, vec![9, 2, 5]);
    // One card each round the table, twice: seat 9 has the first and the fourth card.
    assert_eq!(
        d.hole_cards[0],
        Action::HoleCards {
            seat: 9,
            cards: [deck[0], deck[3]]
        }
    );
    assert_eq!(
        d.boards[0],
        Action::Board {
            cards: deck[7..10].to_vec(),
            burn: Some(deck[6])
        }
    );
}
