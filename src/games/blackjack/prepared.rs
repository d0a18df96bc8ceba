//! Prepared settlement: [`BlackjackEngine::settle_round`] for many rounds of the same bets,
//! without allocating (what `pitboss simulate` runs; baccarat's
//! [`crate::games::baccarat::BaccaratEngine::prepare`] is the model).
//!
//! [`BlackjackEngine::prepare_settlement`] reads, once, every payout row a round of the plan
//! can be paid by (the hand's own stakes' rows and every side bet's class rows) and what each
//! pays at the stakes of the round's bets. [`BlackjackEngine::settle_round_prepared`] then
//! settles a complete round through the very code `settle_round` runs — the completeness
//! check, [`BlackjackEngine::check_round`]'s checks, each hand's result, which row pays which
//! stake, the side bets' classes — and differs from it only in how a row becomes money: a
//! row read once and its amounts computed once for the stake, instead of the row looked up by
//! name and a [`crate::games::Payout`] with its own `String` per stake. A stake the
//! preparation did not see, a row the plan does not have, a payout above the bet's maximum
//! win are paid (or refused) by [`BlackjackEngine::pay`]'s own code at settlement, so the
//! result is the same for any round, and the refusals are the same refusals.
//!
//! The result, a [`RoundPaid`], holds each stake's amounts with its names borrowed from the
//! plan; its buffers are reused from one round to the next.
//! [`RoundPaid::to_settlement`] turns it into the [`RoundSettlement`] `settle_round` returns
//! (the tests check the two are equal on many rounds of every plan).

use super::driver::{PositionSettlement, RoundSettlement, RoundState};
use super::settle::{
    bet_name, HandResult, PlayBet, PlayRow, Settlement, StakeSettlement, StakeSink,
};
use super::side_bets::SideClass;
use super::BlackjackEngine;
use crate::cards::Card;
use crate::games::{Payout, Refusal};
use crate::plan::rules::blackjack::SideBet;

/// The outcome of a lost stake.
const LOSE: &str = "lose";
/// The outcome of a stake handed back by a rule.
const RETURNED: &str = "returned";

/// One stake's settlement: a [`StakeSettlement`] with its bet type and outcome borrowed from
/// the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StakePaid<'p> {
    pub bet: &'p str,
    pub hand: Option<usize>,
    pub stake_minor: i64,
    pub returned_minor: i64,
    pub win_minor: i64,
    pub outcome: &'p str,
}

impl StakePaid<'_> {
    /// What the wallet is credited: returned stake plus winnings.
    pub fn total_minor(&self) -> i64 {
        self.returned_minor + self.win_minor
    }

    /// The [`StakeSettlement`] [`BlackjackEngine::settle_round`] returns for this stake.
    pub fn to_stake_settlement(&self) -> StakeSettlement {
        StakeSettlement {
            bet: bet_name(self.bet),
            hand: self.hand,
            payout: Payout {
                stake_minor: self.stake_minor,
                returned_minor: self.returned_minor,
                win_minor: self.win_minor,
                outcome: self.outcome.to_string(),
            },
        }
    }
}

/// A settled box or Bet Behind: a [`Settlement`] of [`StakePaid`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BoxPaid<'p> {
    pub results: Vec<HandResult>,
    pub stakes: Vec<StakePaid<'p>>,
}

impl BoxPaid<'_> {
    pub fn to_settlement(&self) -> Settlement {
        Settlement {
            results: self.results.clone(),
            stakes: self
                .stakes
                .iter()
                .map(StakePaid::to_stake_settlement)
                .collect(),
        }
    }

    fn clear(&mut self) {
        self.results.clear();
        self.stakes.clear();
    }
}

/// One position's settlement: a [`PositionSettlement`] of [`StakePaid`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PositionPaid<'p> {
    pub main: BoxPaid<'p>,
    pub side_bets: Vec<StakePaid<'p>>,
    pub bets_behind: Vec<BoxPaid<'p>>,
}

/// A round's settlement, position by position: a [`RoundSettlement`] of [`StakePaid`], kept
/// from one round to the next by [`BlackjackEngine::settle_round_prepared`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RoundPaid<'p> {
    pub positions: Vec<PositionPaid<'p>>,
}

impl RoundPaid<'_> {
    /// The [`RoundSettlement`] [`BlackjackEngine::settle_round`] returns for the round.
    pub fn to_settlement(&self) -> RoundSettlement {
        RoundSettlement {
            positions: self
                .positions
                .iter()
                .map(|p| PositionSettlement {
                    main: p.main.to_settlement(),
                    side_bets: p
                        .side_bets
                        .iter()
                        .map(StakePaid::to_stake_settlement)
                        .collect(),
                    bets_behind: p.bets_behind.iter().map(BoxPaid::to_settlement).collect(),
                })
                .collect(),
        }
    }
}

/// What a row pays at one stake: the row's outcome name, the stake returned, the win.
type Amounts<'p> = (&'p str, i64, i64);

/// One bet type's rows (by index), read once: for each stake prepared, what each row pays,
/// `None` where the plan has no such row or refuses the payout (then [`BlackjackEngine::pay`]'s
/// code pays or refuses it at settlement).
#[derive(Debug, Clone)]
struct PreparedRows<'p, const N: usize> {
    at: Vec<(i64, [Option<Amounts<'p>>; N])>,
}

impl<'p, const N: usize> PreparedRows<'p, N> {
    /// What the rows of `bet` named `names` pay at each of `stakes`.
    fn new(
        engine: &BlackjackEngine<'p>,
        bet: &str,
        names: &[Option<&str>; N],
        stakes: &[i64],
    ) -> Self {
        let at = stakes
            .iter()
            .map(|&stake| {
                let amounts = std::array::from_fn(|k| {
                    names[k].and_then(|name| engine.pay_amounts(bet, name, stake).ok())
                });
                (stake, amounts)
            })
            .collect();
        PreparedRows { at }
    }

    /// What row `k` pays at `stake`, if prepared.
    #[inline]
    fn amounts(&self, k: usize, stake: i64) -> Option<Amounts<'p>> {
        self.at
            .iter()
            .find(|(s, _)| *s == stake)
            .and_then(|(_, a)| a[k])
    }
}

/// Side-bet rows: each class (index `c`), then each class with the player's blackjack
/// (`SideClass::COUNT + c`).
const SIDE_ROWS: usize = 2 * SideClass::COUNT;

/// One side bet of the plan, read once.
#[derive(Debug, Clone)]
struct PreparedSideBet<'p> {
    sb: &'p SideBet,
    /// The plan's row name for each class (and each class with the player's blackjack), where
    /// it has one.
    rows: [Option<&'p str>; SIDE_ROWS],
    paid: PreparedRows<'p, SIDE_ROWS>,
}

/// The payout rows of a round's bets and what they pay at its stakes, read once
/// ([`BlackjackEngine::prepare_settlement`]).
#[derive(Debug, Clone)]
pub struct PreparedSettlement<'p> {
    /// The hand's own stakes, by [`PlayBet`] in the order of [`PlayBet::ALL`].
    play: [PreparedRows<'p, 4>; 5],
    side_bets: Vec<PreparedSideBet<'p>>,
}

impl<'p> BlackjackEngine<'p> {
    /// Reads the plan's payout rows for settling rounds of the bets of `state` (an opened
    /// round, or any round of the same bets) with
    /// [`BlackjackEngine::settle_round_prepared`]: every row of the hand's own stakes and of
    /// every side bet of the plan, and what each pays at the round's stakes (the main bets,
    /// the Bets Behind, the side bets, and the full insurance of each). Refuses nothing: what
    /// the plan refuses is refused when a round is paid by it.
    pub fn prepare_settlement(&self, state: &RoundState) -> PreparedSettlement<'p> {
        let rules = self.rules;
        let mut main = Vec::new();
        let mut behind = Vec::new();
        for p in &state.positions {
            main.push(p.play.main_stake_minor);
            behind.extend(p.bets_behind.iter().map(|b| b.bet.stake_minor));
        }
        let added: Vec<i64> = main.iter().chain(&behind).copied().collect();
        let insurance: Vec<i64> = rules
            .insurance
            .fraction_of_main
            .map(|f| added.iter().filter_map(|&s| self.share(f, s)).collect())
            .unwrap_or_default();
        let play = PlayBet::ALL.map(|bet| {
            let names = PlayRow::ALL.map(|row| {
                self.payout_row(bet.name(), row.name())
                    .map(|r| r.outcome.as_str())
            });
            let stakes = match bet {
                PlayBet::Main => &main,
                PlayBet::BetBehind => &behind,
                PlayBet::Split | PlayBet::Double => &added,
                PlayBet::Insurance => &insurance,
            };
            PreparedRows::new(self, bet.name(), &names, &dedup(stakes))
        });
        let side_bets = rules
            .side_bets
            .iter()
            .map(|sb| {
                let stakes: Vec<i64> = state
                    .positions
                    .iter()
                    .flat_map(|p| &p.side_bets)
                    .filter(|b| b.bet == sb.id)
                    .map(|b| b.stake_minor)
                    .collect();
                let rows: [Option<&'p str>; SIDE_ROWS] = std::array::from_fn(|k| {
                    let class = SideClass::NAMES[k % SideClass::COUNT];
                    let row = if k < SideClass::COUNT {
                        self.payout_row(&sb.id, class)
                    } else {
                        self.payout_row(&sb.id, &super::side_bets::with_player_blackjack(class))
                    };
                    row.map(|r| r.outcome.as_str())
                });
                PreparedSideBet {
                    sb,
                    rows,
                    paid: PreparedRows::new(self, &sb.id, &rows, &dedup(&stakes)),
                }
            })
            .collect();
        PreparedSettlement { play, side_bets }
    }

    /// Settles a complete round as [`BlackjackEngine::settle_round`] does (the same checks,
    /// results, amounts and refusals; see the module documentation) into `out`, whose
    /// buffers are reused. On a refusal `out` holds part of the round.
    pub fn settle_round_prepared(
        &self,
        prepared: &PreparedSettlement<'p>,
        state: &RoundState,
        out: &mut RoundPaid<'p>,
    ) -> Result<(), Refusal> {
        self.check_complete(state)?;
        // Each box's settlement checks the dealer's hand first: once is enough (the same
        // refusal, before any other of the first box).
        if !state.positions.is_empty() {
            self.check_dealer_hand(&state.dealer)?;
        }
        out.positions
            .resize_with(state.positions.len(), PositionPaid::default);
        for (p, o) in state.positions.iter().zip(&mut out.positions) {
            o.main.clear();
            self.settle_box_into(
                &p.play,
                &state.dealer,
                true,
                &mut Prepared {
                    engine: self,
                    prepared,
                    out: &mut o.main,
                },
            )?;
            o.side_bets.clear();
            if !p.side_bets.is_empty() {
                let [a, b] = p.first_cards[..] else {
                    unreachable!("a complete round has dealt each box its first two cards")
                };
                for sb in &p.side_bets {
                    o.side_bets.push(self.settle_side_bet_prepared(
                        prepared,
                        &sb.bet,
                        sb.stake_minor,
                        [a, b],
                        &state.dealer,
                    )?);
                }
            }
            o.bets_behind
                .resize_with(p.bets_behind.len(), BoxPaid::default);
            for (bb, ob) in p.bets_behind.iter().zip(&mut o.bets_behind) {
                ob.clear();
                self.settle_bet_behind_into(
                    &p.play,
                    &bb.bet,
                    &state.dealer,
                    true,
                    &mut Prepared {
                        engine: self,
                        prepared,
                        out: ob,
                    },
                )?;
            }
        }
        Ok(())
    }

    /// [`BlackjackEngine::settle_side_bet`] from the prepared rows.
    fn settle_side_bet_prepared(
        &self,
        prepared: &PreparedSettlement<'p>,
        id: &str,
        stake_minor: i64,
        player_first_two: [Card; 2],
        dealer: &[Card],
    ) -> Result<StakePaid<'p>, Refusal> {
        let Some(ps) = prepared.side_bets.iter().find(|s| s.sb.id == id) else {
            // Every side bet the plan offers is prepared: `side_bet` refuses this one.
            return Err(match self.side_bet(id) {
                Err(r) => r,
                Ok(sb) => self.refuse(
                    super::code::NOT_OFFERED,
                    format!("side bet '{id}' was not prepared"),
                    &sb.clause,
                ),
            });
        };
        let bet = ps.sb.id.as_str();
        self.check_side_bet_stake(bet, stake_minor)?;
        let lose = StakePaid {
            bet,
            hand: None,
            stake_minor,
            returned_minor: 0,
            win_minor: 0,
            outcome: LOSE,
        };
        let Some((class, enhanced)) = self.side_bet_class(ps.sb, player_first_two, dealer)? else {
            return Ok(lose);
        };
        // The enhanced row where the plan has one, else the class's own row; a class the plan
        // does not pay loses (as `side_bet_outcome` and `settle_side_bet` read them).
        let enhanced_row = SideClass::COUNT + class.index();
        let k = if enhanced && ps.rows[enhanced_row].is_some() {
            enhanced_row
        } else {
            class.index()
        };
        let Some(name) = ps.rows[k] else {
            return Ok(lose);
        };
        let (outcome, returned_minor, win_minor) = match ps.paid.amounts(k, stake_minor) {
            Some(a) => a,
            None => self.pay_amounts(bet, name, stake_minor)?,
        };
        Ok(StakePaid {
            outcome,
            returned_minor,
            win_minor,
            ..lose
        })
    }
}

/// Each stake once.
fn dedup(stakes: &[i64]) -> Vec<i64> {
    let mut out = stakes.to_vec();
    out.sort_unstable();
    out.dedup();
    out
}

/// The prepared settlement's [`StakeSink`]: amounts from the prepared rows, else from
/// [`BlackjackEngine::pay_amounts`] (what [`BlackjackEngine::pay`] pays).
struct Prepared<'a, 'e, 'p> {
    engine: &'e BlackjackEngine<'p>,
    prepared: &'a PreparedSettlement<'p>,
    out: &'a mut BoxPaid<'p>,
}

impl StakeSink for Prepared<'_, '_, '_> {
    fn result(&mut self, result: HandResult) {
        self.out.results.push(result);
    }

    #[inline]
    fn pay(
        &mut self,
        bet: PlayBet,
        row: PlayRow,
        stake: i64,
        hand: Option<usize>,
    ) -> Result<(), Refusal> {
        let (outcome, returned_minor, win_minor) =
            match self.prepared.play[bet as usize].amounts(row as usize, stake) {
                Some(a) => a,
                None => self.engine.pay_amounts(bet.name(), row.name(), stake)?,
            };
        self.out.stakes.push(StakePaid {
            bet: bet.name(),
            hand,
            stake_minor: stake,
            returned_minor,
            win_minor,
            outcome,
        });
        Ok(())
    }

    fn lose(&mut self, bet: PlayBet, stake: i64, hand: Option<usize>) {
        self.out.stakes.push(StakePaid {
            bet: bet.name(),
            hand,
            stake_minor: stake,
            returned_minor: 0,
            win_minor: 0,
            outcome: LOSE,
        });
    }

    fn returned(&mut self, bet: PlayBet, stake: i64, hand: Option<usize>) {
        self.out.stakes.push(StakePaid {
            bet: bet.name(),
            hand,
            stake_minor: stake,
            returned_minor: stake,
            win_minor: 0,
            outcome: RETURNED,
        });
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use rand_chacha::ChaCha20Rng;

    use super::super::testing::{plan, PLANS};
    use super::super::{
        BetBehindBet, BlackjackBet, Decider, Decision, LazyShoe, PositionBets, RoundSetup,
        SideBetDeal,
    };
    use super::*;
    use crate::cards::{DeckKind, Shoe};
    use crate::plan::model::Plan;
    use crate::plan::rules::blackjack::{InsuranceStake, SeatingModel, SideBetCards};
    use crate::rng::uniform_below;

    fn below(rng: &mut ChaCha20Rng, n: usize) -> usize {
        uniform_below(rng, u32::try_from(n).unwrap()) as usize
    }

    fn chance(rng: &mut ChaCha20Rng, one_in: u32) -> bool {
        uniform_below(rng, one_in) == 0
    }

    /// A stake of `bet` within its limits: its minimum, a small multiple of it, or its maximum.
    fn stake_of(p: &Plan, bet: &str, rng: &mut ChaCha20Rng) -> i64 {
        let b = p.bet(bet).unwrap();
        match below(rng, 4) {
            0 => b.max_bet,
            k => (b.min_bet * k as i64 * 5).min(b.max_bet),
        }
    }

    /// Random bets the plan accepts: as many positions as it lets (up to four), a main bet on
    /// each, each side bet now and then, Bets Behind where offered.
    fn random_setup(p: &Plan, e: &BlackjackEngine<'_>, rng: &mut ChaCha20Rng) -> RoundSetup {
        let r = e.rules();
        let min = usize::from(r.seating.min_players.max(1));
        let max = r
            .seating
            .max_players
            .map_or(4, |m| usize::from(m).min(4))
            .max(min);
        let n = min + below(rng, max - min + 1);
        let seated = r.seating.model == SeatingModel::Seats;
        let seats = usize::from(r.seating.seats.unwrap_or(0));
        // Distinct boxes in order: `n` of the plan's seats.
        let mut boxes: Vec<u8> = (1..=seats as u8).collect();
        while boxes.len() > n {
            boxes.remove(below(rng, boxes.len()));
        }
        let positions = (0..n)
            .map(|i| {
                let mut bets = vec![BlackjackBet {
                    bet: "main".into(),
                    stake_minor: stake_of(p, "main", rng),
                }];
                for sb in &r.side_bets {
                    if !chance(rng, 3) {
                        bets.push(BlackjackBet {
                            bet: sb.id.clone(),
                            stake_minor: stake_of(p, &sb.id, rng),
                        });
                    }
                }
                let mut bets_behind = Vec::new();
                if r.bet_behind.allowed {
                    for j in 0..below(rng, 3) {
                        bets_behind.push(BetBehindBet {
                            player: format!("behind {i}.{j}"),
                            stake_minor: stake_of(p, "bet_behind", rng),
                        });
                    }
                }
                PositionBets {
                    seat: seated.then(|| boxes[i]),
                    player: format!("player {i}"),
                    bets,
                    bets_behind,
                }
            })
            .collect();
        RoundSetup { positions }
    }

    /// Any legal decision, now and then a time-out; insurance now and then, for the full
    /// share or (where the plan allows) less; a Bet Behind declining now and then.
    struct RandomDecider<'r> {
        rng: &'r mut ChaCha20Rng,
    }

    impl Decider for RandomDecider<'_> {
        fn decide(
            &mut self,
            engine: &BlackjackEngine<'_>,
            state: &RoundState,
            position: usize,
            hand: usize,
        ) -> Option<Decision> {
            if chance(self.rng, 20) {
                return None;
            }
            let legal = engine.legal_decisions(&state.positions[position].play.hands, hand);
            Some(legal[below(self.rng, legal.len())])
        }

        fn insure(
            &mut self,
            engine: &BlackjackEngine<'_>,
            state: &RoundState,
            position: usize,
            bet_behind: Option<usize>,
        ) -> Option<i64> {
            if chance(self.rng, 2) {
                return None;
            }
            let p = &state.positions[position];
            let of = bet_behind.map_or(p.play.main_stake_minor, |j| {
                p.bets_behind[j].bet.stake_minor
            });
            let full = engine.share(engine.rules().insurance.fraction_of_main?, of)?;
            let min = engine.plan().bet("insurance")?.min_bet;
            if engine.rules().insurance.stake == Some(InsuranceStake::AtMost)
                && full > min
                && chance(self.rng, 3)
            {
                Some(min + below(self.rng, usize::try_from(full - min).ok()?) as i64)
            } else {
                Some(full)
            }
        }

        fn bet_behind_funds(
            &mut self,
            _: &RoundState,
            _: usize,
            _: usize,
            _: usize,
            _: Decision,
        ) -> bool {
            !chance(self.rng, 4)
        }
    }

    /// Settles `state` both ways and checks they agree; returns the outcomes paid.
    fn check_round(
        e: &BlackjackEngine<'_>,
        prepared: &PreparedSettlement<'_>,
        state: &RoundState,
        what: &str,
    ) -> Vec<(String, String)> {
        let want = e.settle_round(state);
        let mut paid = RoundPaid::default();
        let got = e
            .settle_round_prepared(prepared, state, &mut paid)
            .map(|()| paid.to_settlement());
        assert_eq!(got, want, "{what}: {state:?}");
        want.map_or_else(
            |_| Vec::new(),
            |s| {
                s.positions
                    .iter()
                    .flat_map(|p| {
                        p.main
                            .stakes
                            .iter()
                            .chain(&p.side_bets)
                            .chain(p.bets_behind.iter().flat_map(|b| &b.stakes))
                    })
                    .map(|s| (s.bet.to_string(), s.payout.outcome.clone()))
                    .collect()
            },
        )
    }

    #[test]
    fn prepared_settlement_pays_what_settle_round_pays_on_random_rounds_of_every_plan() {
        // Random bets (one to four positions, stakes from the minimum to the maximum, side
        // bets, Bets Behind), random legal decisions, time-outs, insurance and Bet Behind
        // declines, from shuffled shoes: the prepared settlement and the service's
        // `settle_round` return the same settlement, round for round. Each round is also
        // settled by a settlement prepared for other bets (every amount then comes from
        // `pay_amounts` at settlement).
        for id in PLANS {
            let p = plan(id);
            let e = BlackjackEngine::new(&p).unwrap();
            let mut rng = crate::rng::stream([21; 32]);
            let mut shoe = LazyShoe::new(e.rules().shoe);
            let mut cards_rng = crate::rng::stream([22; 32]);
            let other =
                e.prepare_settlement(&e.open_round(&random_setup(&p, &e, &mut rng)).unwrap());
            let mut outcomes = BTreeSet::new();
            for _ in 0..60 {
                let setup = random_setup(&p, &e, &mut rng);
                let mut state = e
                    .open_round(&setup)
                    .unwrap_or_else(|r| panic!("{id}: {r}: {setup:?}"));
                let prepared = e.prepare_settlement(&state);
                for _ in 0..60 {
                    e.reopen_round(&mut state);
                    shoe.restart();
                    let mut cards = || shoe.next_card(&mut cards_rng);
                    let mut decider = RandomDecider { rng: &mut rng };
                    e.play_on(&mut state, &mut cards, &mut decider)
                        .unwrap_or_else(|r| panic!("{id}: {r}"));
                    outcomes.extend(check_round(&e, &prepared, &state, id));
                    check_round(&e, &other, &state, id);
                }
            }
            // The hand's own stakes were paid by each of their rows.
            for row in &p.payouts {
                if matches!(row.bet.as_str(), "main" | "split" | "double" | "bet_behind") {
                    assert!(
                        outcomes.contains(&(row.bet.clone(), row.outcome.clone())),
                        "{id}: {}/{} never paid",
                        row.bet,
                        row.outcome
                    );
                }
            }
        }
    }

    /// The random decider, checking at each decision that [`BlackjackEngine::legal_set`] is
    /// what [`BlackjackEngine::is_legal`] says of each decision.
    struct CheckingLegalSet<'r>(RandomDecider<'r>);

    impl Decider for CheckingLegalSet<'_> {
        fn decide(
            &mut self,
            engine: &BlackjackEngine<'_>,
            state: &RoundState,
            position: usize,
            hand: usize,
        ) -> Option<Decision> {
            let hands = &state.positions[position].play.hands;
            for at in 0..=hands.len() {
                let set = engine.legal_set(hands, at);
                for d in Decision::ALL {
                    assert_eq!(
                        set.contains(d),
                        engine.is_legal(hands, at, d),
                        "{d:?} on {at} of {hands:?}"
                    );
                }
            }
            self.0.decide(engine, state, position, hand)
        }
    }

    #[test]
    fn the_legal_set_is_what_is_legal_says_of_each_decision() {
        for id in PLANS {
            let p = plan(id);
            let e = BlackjackEngine::new(&p).unwrap();
            let mut rng = crate::rng::stream([25; 32]);
            let mut cards_rng = crate::rng::stream([26; 32]);
            let mut shoe = LazyShoe::new(e.rules().shoe);
            for _ in 0..2000 {
                let setup = random_setup(&p, &e, &mut rng);
                shoe.restart();
                let mut cards = || shoe.next_card(&mut cards_rng);
                let mut decider = CheckingLegalSet(RandomDecider { rng: &mut rng });
                e.play_round(&setup, &mut cards, &mut decider).unwrap();
            }
        }
    }

    /// A finished dealer hand: random cards or, one time in two, twos and threes for the
    /// first four to seven cards (long hands and many-card busts) and then any card.
    fn dealer_hand(e: &BlackjackEngine<'_>, rng: &mut ChaCha20Rng) -> Vec<Card> {
        let kinds = DeckKind::Standard52.cards();
        let low = if chance(rng, 2) { 4 + below(rng, 4) } else { 0 };
        let mut hand = Vec::new();
        while e.dealer_action(&hand) == super::super::DealerAction::Draw {
            // The first 8 kinds are the twos and threes.
            let c = if hand.len() < low {
                kinds[below(rng, 8)]
            } else {
                kinds[below(rng, kinds.len())]
            };
            hand.push(c);
        }
        hand
    }

    #[test]
    fn prepared_side_bets_pay_what_settle_side_bet_pays_on_every_deal() {
        // Every side bet of every plan on every player pair with every dealer first card
        // (and, for the bets on the dealer's hand, finished dealer hands, many of them long):
        // the prepared settlement pays what `settle_side_bet` pays, and every row of the
        // plan's side bets is paid somewhere.
        let kinds = DeckKind::Standard52.cards();
        for id in PLANS {
            let p = plan(id);
            let e = BlackjackEngine::new(&p).unwrap();
            let mut rng = crate::rng::stream([23; 32]);
            let rules = e.rules();
            let bets: Vec<BlackjackBet> = rules
                .side_bets
                .iter()
                .map(|sb| BlackjackBet {
                    bet: sb.id.clone(),
                    stake_minor: p.bet(&sb.id).unwrap().min_bet,
                })
                .collect();
            if bets.is_empty() {
                continue;
            }
            // One box with a main bet and every side bet (every plan with side bets deals
            // to one player).
            let setup = RoundSetup {
                positions: vec![PositionBets {
                    seat: (rules.seating.model == SeatingModel::Seats).then_some(1),
                    player: "p".into(),
                    bets: std::iter::once(BlackjackBet {
                        bet: "main".into(),
                        stake_minor: p.bet("main").unwrap().min_bet,
                    })
                    .chain(bets)
                    .collect(),
                    bets_behind: Vec::new(),
                }],
            };
            let prepared = e.prepare_settlement(&e.open_round(&setup).unwrap());
            let mut paid = BTreeSet::new();
            for sb in &rules.side_bets {
                let stake = p.bet(&sb.id).unwrap().min_bet;
                let mut check = |first_two: [Card; 2], dealer: Vec<Card>| {
                    let deal = SideBetDeal {
                        player_first_two: first_two,
                        dealer,
                    };
                    let want = e.settle_side_bet(&sb.id, stake, &deal);
                    let got = e
                        .settle_side_bet_prepared(&prepared, &sb.id, stake, first_two, &deal.dealer)
                        .map(|s| s.to_stake_settlement());
                    assert_eq!(got, want, "{id} {}: {deal:?}", sb.id);
                    if let Ok(s) = want {
                        paid.insert((sb.id.clone(), s.payout.outcome));
                    }
                };
                for &a in &kinds {
                    for &b in &kinds {
                        match sb.cards {
                            SideBetCards::PlayerFirstTwo | SideBetCards::DealerFirstTwo => {
                                check([a, b], vec![b, a]);
                            }
                            SideBetCards::PlayerFirstTwoAndDealerFirst => {
                                for &d in &kinds {
                                    check([a, b], vec![d]);
                                }
                            }
                            SideBetCards::DealerFinalHand => {
                                for _ in 0..8 {
                                    check([a, b], dealer_hand(&e, &mut rng));
                                }
                            }
                        }
                    }
                }
            }
            for row in p
                .payouts
                .iter()
                .filter(|r| rules.side_bets.iter().any(|s| s.id == r.bet))
            {
                assert!(
                    paid.contains(&(row.bet.clone(), row.outcome.clone())),
                    "{id}: {}/{} never paid",
                    row.bet,
                    row.outcome
                );
            }
        }
    }

    #[test]
    fn prepared_settlement_refuses_what_settle_round_refuses() {
        // A round not complete, and payouts above a bet's maximum win (main, double, a side
        // bet): the same refusal from both.
        let mut p = plan("synot-all-bets-blackjack");
        for b in &mut p.bets {
            if matches!(b.id.as_str(), "main" | "double" | "twenty_one_plus_three") {
                b.max_win = 150;
            }
        }
        let e = BlackjackEngine::new(&p).unwrap();
        let mut rng = crate::rng::stream([24; 32]);
        let setup = random_setup(&p, &e, &mut rng);
        let mut state = e.open_round(&setup).unwrap();
        let prepared = e.prepare_settlement(&state);
        let r = e.settle_round(&state).unwrap_err();
        let mut paid = RoundPaid::default();
        assert_eq!(
            e.settle_round_prepared(&prepared, &state, &mut paid),
            Err(r)
        );
        let mut shoe = LazyShoe::new(Shoe::new(DeckKind::Standard52, 8));
        let mut refusals = BTreeSet::new();
        for _ in 0..3000 {
            e.reopen_round(&mut state);
            shoe.restart();
            let mut cards = || shoe.next_card(&mut rng.clone());
            let mut decider_rng = rng.clone();
            let mut decider = RandomDecider {
                rng: &mut decider_rng,
            };
            e.play_on(&mut state, &mut cards, &mut decider).unwrap();
            rng = decider_rng;
            check_round(&e, &prepared, &state, "max win");
            if let Err(r) = e.settle_round(&state) {
                refusals.insert(r.code);
            }
        }
        assert!(refusals.contains(code_max_win()), "{refusals:?}");
    }

    fn code_max_win() -> &'static str {
        super::super::code::MAX_WIN_EXCEEDED
    }
}
