//! The rules of 000 ("Rules"), each as a test named after it, on the real plan `oko-bere@1`.

use std::path::Path;

use serde_json::json;

use super::*;
use crate::plan::registry::load_file;
use OkoBereAction as A;

fn load(id: &str) -> Plan {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("game_plans");
    load_file(&dir.join(format!("{id}.toml")), Some(&dir.join("sources")))
        .unwrap_or_else(|f| panic!("{id} loads: {f:?}"))
        .plan
}

fn plan() -> Plan {
    load("oko-bere@1")
}

fn c(s: &str) -> Card {
    s.parse().expect("a card")
}

fn card(seat: SeatNo, s: &str) -> A {
    A::Card { seat, card: c(s) }
}

fn bet(seat: SeatNo, stake_minor: i64) -> A {
    A::Bet { seat, stake_minor }
}

fn draw(seat: SeatNo) -> A {
    A::Draw {
        seat,
        raise_minor: None,
    }
}

fn raise(seat: SeatNo, raise_minor: i64) -> A {
    A::Draw {
        seat,
        raise_minor: Some(raise_minor),
    }
}

fn stand(seat: SeatNo) -> A {
    A::Stand { seat }
}

/// A table under test, with its log of accepted actions.
struct T<'p> {
    e: OkoBereEngine<'p>,
    s: OkoBereState,
    log: Vec<OkoBereAction>,
}

impl<'p> T<'p> {
    fn empty(p: &'p Plan) -> T<'p> {
        T {
            e: OkoBereEngine::new(p).expect("an Oko bere plan"),
            s: OkoBereState::new(),
            log: Vec::new(),
        }
    }

    fn ok(&mut self, a: A) -> Vec<OkoBereEffect> {
        let fx = self
            .e
            .apply(&mut self.s, &a)
            .unwrap_or_else(|r| panic!("{a:?} refused: {r}"));
        self.log.push(a);
        fx
    }

    /// Applies actions in order and returns every effect.
    fn all(&mut self, actions: impl IntoIterator<Item = A>) -> Vec<OkoBereEffect> {
        actions.into_iter().flat_map(|a| self.ok(a)).collect()
    }

    /// The action is refused and the state is untouched.
    fn no(&mut self, a: A) -> Refusal {
        let before = self.s.clone();
        let r = self
            .e
            .apply(&mut self.s, &a)
            .expect_err(&format!("{a:?} must be refused"));
        assert_eq!(self.s, before, "a refused {a:?} changed the state");
        r
    }

    fn stack(&self, seat: SeatNo) -> i64 {
        self.s.stack_minor(seat).expect("seated")
    }

    fn bank(&self) -> i64 {
        self.s.bank_minor().expect("a bank")
    }

    fn hand(&self, seat: SeatNo) -> &Hand {
        &self.s.round().expect("a round").hands[&seat]
    }

    fn decision(&self) -> Decision {
        match self.e.expected(&self.s) {
            Expected::Decision(d) => d,
            other => panic!("expected a decision, the rules wait for {other:?}"),
        }
    }
}

const BANKER: SeatNo = 0;

/// Seat 0 (the banker, 50 000) and seats 1, 2 and 3 (20 000 each, in minor units); the banker
/// appointed by agreement with the minimum bank of 10 000.
fn table(p: &Plan) -> T<'_> {
    let mut t = T::empty(p);
    t.ok(A::Join {
        seat: BANKER,
        player: "bankéř".into(),
        buy_in_minor: 50_000,
    });
    for seat in 1..=3 {
        t.ok(A::Join {
            seat,
            player: format!("p{seat}"),
            buy_in_minor: 20_000,
        });
    }
    t.ok(A::AppointBanker { seat: BANKER });
    t.ok(A::SetBank {
        seat: BANKER,
        bank_minor: 10_000,
    });
    t
}

/// A round cut by seat 3: seats 1, 2, 3 play in that order, the banker last; the first cards
/// dealt as given (seat 1, 2, 3, banker).
fn round(t: &mut T, first: [&str; 4]) {
    t.ok(A::StartRound {
        cutter: 3,
        mala_domu: false,
    });
    for (seat, s) in [1, 2, 3, BANKER].into_iter().zip(first) {
        t.ok(card(seat, s));
    }
}

fn settled(fx: &[OkoBereEffect]) -> Vec<(SeatNo, Winner, SettleReason)> {
    fx.iter()
        .filter_map(|f| match f {
            OkoBereEffect::Settled {
                seat,
                winner,
                reason,
                ..
            } => Some((*seat, *winner, *reason)),
            _ => None,
        })
        .collect()
}

// ----- The deck and the banker -------------------------------------------------------------

#[test]
fn the_deck_is_the_32_card_deck_each_card_once() {
    let p = plan();
    let mut t = table(&p);
    t.ok(A::StartRound {
        cutter: 3,
        mala_domu: false,
    });
    assert_eq!(t.no(card(1, "6h")).code, code::CARD_NOT_IN_SHOE);
    t.ok(card(1, "Ah"));
    assert_eq!(t.no(card(2, "Ah")).code, code::CARD_NOT_IN_SHOE);
}

#[test]
fn banker_by_agreement_sets_up_at_least_the_minimum_bank() {
    let p = plan();
    let mut t = T::empty(&p);
    t.ok(A::Join {
        seat: 1,
        player: "a".into(),
        buy_in_minor: 9_999,
    });
    t.ok(A::Join {
        seat: 2,
        player: "b".into(),
        buy_in_minor: 30_000,
    });
    assert_eq!(
        t.no(A::AppointBanker { seat: 1 }).code,
        code::BANK_BELOW_MINIMUM
    );
    t.ok(A::AppointBanker { seat: 2 });
    let r = t.no(A::SetBank {
        seat: 2,
        bank_minor: 9_999,
    });
    assert_eq!(r.code, code::BANK_BELOW_MINIMUM);
    assert_eq!(r.plan.as_deref(), Some("oko-bere@1"));
    assert_eq!(
        t.no(A::SetBank {
            seat: 1,
            bank_minor: 10_000
        })
        .code,
        code::NOT_YOUR_TURN
    );
    t.ok(A::SetBank {
        seat: 2,
        bank_minor: 12_000,
    });
    assert_eq!(t.stack(2), 18_000);
    assert_eq!(t.bank(), 12_000);
}

#[test]
fn the_highest_card_drawn_gives_the_banker() {
    let p = plan();
    let mut t = T::empty(&p);
    for seat in 1..=3 {
        t.ok(A::Join {
            seat,
            player: format!("p{seat}"),
            buy_in_minor: 20_000,
        });
    }
    t.ok(A::DrawForBanker {
        seats: vec![3, 1, 2],
    });
    assert_eq!(t.e.expected(&t.s), Expected::BankerDrawCard { seat: 1 });
    assert_eq!(t.no(card(2, "Ac")).code, code::NOT_YOUR_TURN);
    // Ranks, not game values: the king (worth 1) beats the ten.
    let fx = t.all([card(1, "Tc"), card(2, "Kd"), card(3, "9s")]);
    assert!(fx.contains(&OkoBereEffect::BankerChosen {
        seat: 2,
        by: ChosenBy::HighestCard
    }));
    assert!(matches!(t.e.expected(&t.s), Expected::Bank { seat: 2, .. }));
}

#[test]
fn tied_highest_cards_draw_again_only_the_tied() {
    let p = plan();
    let mut t = T::empty(&p);
    for seat in 1..=3 {
        t.ok(A::Join {
            seat,
            player: format!("p{seat}"),
            buy_in_minor: 20_000,
        });
    }
    t.ok(A::DrawForBanker {
        seats: vec![1, 2, 3],
    });
    let fx = t.all([card(1, "Ac"), card(2, "7d"), card(3, "As")]);
    assert_eq!(
        fx,
        vec![OkoBereEffect::BankerDrawTied { seats: vec![1, 3] }]
    );
    assert_eq!(t.no(card(2, "8d")).code, code::NOT_YOUR_TURN);
    // The cards drawn stay out.
    assert_eq!(t.no(card(1, "Ac")).code, code::CARD_NOT_IN_SHOE);
    let fx = t.all([card(1, "8c"), card(3, "9c")]);
    assert!(fx.contains(&OkoBereEffect::BankerChosen {
        seat: 3,
        by: ChosenBy::HighestCard
    }));
}

// ----- The round -----------------------------------------------------------------------------

#[test]
fn first_cards_go_right_of_the_cutter_and_the_banker_is_dealt_last() {
    let p = plan();
    let mut t = table(&p);
    let fx = t.ok(A::StartRound {
        cutter: 1,
        mala_domu: false,
    });
    assert!(fx.contains(&OkoBereEffect::RoundStarted {
        round: 1,
        banker: BANKER,
        cutter: 1,
        players: vec![2, 3, 1],
        mala_domu: false,
    }));
    assert_eq!(t.no(card(1, "9c")).code, code::NOT_YOUR_TURN);
    t.all([card(2, "9c"), card(3, "9d"), card(1, "9h")]);
    assert_eq!(t.no(card(2, "8c")).code, code::NOT_YOUR_TURN);
    t.ok(card(BANKER, "9s"));
    // "The first player on the right side of player slicing starts."
    assert_eq!(t.decision().seat, 2);
    assert_eq!(t.no(bet(1, 1_000)).code, code::NOT_YOUR_TURN);
}

#[test]
fn the_banker_cannot_cut() {
    let p = plan();
    let mut t = table(&p);
    let r = t.no(A::StartRound {
        cutter: BANKER,
        mala_domu: false,
    });
    assert_eq!(r.code, code::NOT_A_PLAYER);
    assert_eq!(r.clause.as_deref(), Some("Rounds"));
}

#[test]
fn bet_above_the_bank_is_refused() {
    let p = plan();
    let mut t = table(&p);
    round(&mut t, ["9c", "9d", "9h", "9s"]);
    let r = t.no(bet(1, 10_001));
    assert_eq!(r.code, code::ABOVE_BANK);
    assert_eq!(r.clause.as_deref(), Some("Rules"));
    t.ok(bet(1, 10_000));
    assert_eq!(t.bank(), 0);
}

#[test]
fn bets_together_are_capped_by_the_bank() {
    let p = plan();
    let mut t = table(&p);
    round(&mut t, ["9c", "9d", "9h", "9s"]);
    t.all([bet(1, 6_000), stand(1)]);
    assert_eq!(
        t.decision().bet,
        Some(StakeRange {
            min_minor: 1_000,
            max_minor: 4_000
        })
    );
    assert_eq!(t.no(bet(2, 5_000)).code, code::ABOVE_BANK);
    t.ok(bet(2, 4_000));
}

#[test]
fn bet_below_the_minimum_is_refused() {
    let p = plan();
    let mut t = table(&p);
    round(&mut t, ["9c", "9d", "9h", "9s"]);
    assert_eq!(t.no(bet(1, 999)).code, code::BELOW_MIN_BET);
    assert_eq!(t.no(bet(1, 0)).code, code::BAD_AMOUNT);
    assert_eq!(t.no(bet(1, -5)).code, code::BAD_AMOUNT);
}

#[test]
fn the_rest_of_the_bank_may_be_bet_below_the_minimum() {
    let p = plan();
    let mut t = table(&p);
    round(&mut t, ["9c", "9d", "9h", "9s"]);
    t.all([bet(1, 9_500), stand(1)]);
    assert_eq!(
        t.decision().bet,
        Some(StakeRange {
            min_minor: 500,
            max_minor: 500
        })
    );
    assert_eq!(t.no(bet(2, 400)).code, code::BELOW_MIN_BET);
    t.ok(bet(2, 500));
    assert_eq!(t.bank(), 0);
}

#[test]
fn a_bet_needs_the_players_chips() {
    let p = plan();
    let mut t = table(&p);
    t.ok(A::CashOut {
        seat: 1,
        amount_minor: 18_000,
    });
    round(&mut t, ["9c", "9d", "9h", "9s"]);
    assert_eq!(t.no(bet(1, 3_000)).code, code::INSUFFICIENT_CHIPS);
    t.ok(bet(1, 2_000));
}

#[test]
fn a_raise_before_a_card_is_matched_by_the_bank() {
    let p = plan();
    let mut t = table(&p);
    round(&mut t, ["9c", "9d", "9h", "8s"]);
    t.ok(bet(1, 2_000));
    let fx = t.ok(raise(1, 3_000));
    assert_eq!(
        fx,
        vec![OkoBereEffect::Staked {
            seat: 1,
            stake_minor: 3_000,
            matched_minor: 3_000,
            stake_total_minor: 5_000,
            bank_minor: 5_000,
        }]
    );
    assert_eq!(t.stack(1), 15_000);
    assert_eq!(t.bank(), 5_000);
    assert_eq!(
        (t.hand(1).stake_minor, t.hand(1).matched_minor),
        (5_000, 5_000)
    );
    // 9 + 10 = 19 against the banker's 8 + 10 = 18: 1:1 on the whole stake.
    t.all([card(1, "Tc"), stand(1), stand(2), stand(3), draw(BANKER)]);
    let fx = t.all([card(BANKER, "Td"), stand(BANKER)]);
    assert_eq!(
        settled(&fx),
        vec![(1, Winner::Player, SettleReason::HigherTotal)]
    );
    assert_eq!(t.stack(1), 25_000);
    assert_eq!(t.bank(), 5_000);
}

#[test]
fn a_raise_is_held_to_the_minimum_and_the_bank() {
    let p = plan();
    let mut t = table(&p);
    round(&mut t, ["9c", "9d", "9h", "8s"]);
    t.ok(bet(1, 8_000));
    assert_eq!(t.no(raise(1, 999)).code, code::BELOW_MIN_BET);
    assert_eq!(t.no(raise(1, 2_001)).code, code::ABOVE_BANK);
    // A second bet is not how a raise is made: it goes with the card.
    assert_eq!(t.no(bet(1, 1_000)).code, code::ALREADY_BET);
    t.ok(raise(1, 2_000));
    assert_eq!(t.bank(), 0);
}

#[test]
fn no_card_without_a_stake_and_standing_without_a_bet_sits_out() {
    let p = plan();
    let mut t = table(&p);
    round(&mut t, ["9c", "9d", "9h", "8s"]);
    let r = t.no(draw(1));
    assert_eq!(r.code, code::NO_STAKE);
    assert_eq!(t.ok(stand(1)), vec![OkoBereEffect::SatOut { seat: 1 }]);
    assert_eq!(t.stack(1), 20_000);
    assert_eq!(t.decision().seat, 2);
}

#[test]
fn the_banker_does_not_bet() {
    let p = plan();
    let mut t = table(&p);
    round(&mut t, ["9c", "9d", "9h", "8s"]);
    t.all([bet(1, 1_000), stand(1), stand(2), stand(3)]);
    let d = t.decision();
    assert!(d.banker && d.bet.is_none() && d.raise.is_none() && d.draw);
    assert_eq!(t.no(bet(BANKER, 1_000)).code, code::BANKER_DOES_NOT_BET);
    assert_eq!(t.no(raise(BANKER, 1_000)).code, code::BANKER_DOES_NOT_BET);
}

// ----- Card values ---------------------------------------------------------------------------

fn cards(s: &str) -> Vec<Card> {
    s.split_whitespace().map(c).collect()
}

#[test]
fn pictures_count_one_aces_eleven_numbers_their_value() {
    let p = plan();
    let e = OkoBereEngine::new(&p).unwrap();
    assert_eq!(e.best_total(&cards("Jc Qd Ks")), Some(3));
    assert_eq!(e.best_total(&cards("Ac 9d")), Some(20));
    assert_eq!(e.best_total(&cards("7c 8d")), Some(15));
    assert_eq!(e.best_total(&cards("Tc 9d 8s")), None);
}

#[test]
fn santala_counts_eleven_when_best() {
    let p = plan();
    let e = OkoBereEngine::new(&p).unwrap();
    assert_eq!(e.best_total(&cards("7h Tc")), Some(21));
    assert_eq!(e.best_total(&cards("7h 9c")), Some(20));
}

#[test]
fn santala_counts_ten_when_best() {
    let p = plan();
    let e = OkoBereEngine::new(&p).unwrap();
    // 7 + 11 = 18, 10 + 11 = 21, 11 + 11 = 22 (over).
    assert_eq!(e.best_total(&cards("7h Tc Kd")), Some(21));
}

#[test]
fn santala_counts_seven_when_best() {
    let p = plan();
    let e = OkoBereEngine::new(&p).unwrap();
    // 7 + 12 = 19, 10 + 12 = 22, 11 + 12 = 23.
    assert_eq!(e.best_total(&cards("7h Ks Ts Qs")), Some(19));
    // Another seven is not the šantala: 7 + 12 = 19 only.
    assert_eq!(e.totals(&cards("7s Tc Kd Qd")), vec![19]);
}

#[test]
fn santala_is_counted_best_for_the_banker_too() {
    let p = plan();
    let mut t = table(&p);
    round(&mut t, ["Tc", "9d", "9c", "7h"]);
    t.all([bet(1, 1_000), draw(1), card(1, "Kc"), stand(1)]); // 11
    t.all([bet(2, 1_000), draw(2), card(2, "Jd"), stand(2)]); // 10
    t.ok(stand(3));
    t.ok(draw(BANKER));
    // The banker's šantala and ten: 21 (šantala 11), not 17.
    let fx = t.ok(card(BANKER, "Td"));
    assert!(fx.contains(&OkoBereEffect::Stood {
        seat: BANKER,
        total: 21,
        automatic: true
    }));
    assert_eq!(
        settled(&fx),
        vec![
            (1, Winner::Bank, SettleReason::LowerTotal),
            (2, Winner::Bank, SettleReason::LowerTotal)
        ]
    );
}

#[test]
fn santala_wins_for_its_holder_at_twenty_one() {
    let p = plan();
    let mut t = table(&p);
    round(&mut t, ["7h", "9d", "9c", "Tc"]);
    t.all([bet(1, 1_000), draw(1)]);
    let fx = t.ok(card(1, "Td"));
    assert!(fx.contains(&OkoBereEffect::Stood {
        seat: 1,
        total: 21,
        automatic: true
    }));
    t.all([stand(2), stand(3), draw(BANKER)]);
    let fx = t.ok(card(BANKER, "Qd")); // 11
    assert!(fx.is_empty());
    let fx = t.all([draw(BANKER), card(BANKER, "9s"), stand(BANKER)]); // 20
    assert_eq!(
        settled(&fx),
        vec![(1, Winner::Player, SettleReason::HigherTotal)]
    );
}

// ----- Outright wins -------------------------------------------------------------------------

#[test]
fn two_aces_win_outright() {
    let p = plan();
    let mut t = table(&p);
    round(&mut t, ["Ac", "9d", "9c", "Tc"]);
    t.all([bet(1, 2_000), draw(1)]);
    let fx = t.ok(card(1, "As"));
    assert_eq!(
        fx,
        vec![OkoBereEffect::Outright {
            seat: 1,
            hand: "two_aces".into()
        }]
    );
    // His turn is over: seat 2 acts.
    assert_eq!(t.decision().seat, 2);
    t.all([stand(2), stand(3), draw(BANKER)]);
    let fx = t.ok(card(BANKER, "Ad")); // 21
    assert_eq!(
        settled(&fx),
        vec![(1, Winner::Player, SettleReason::Outright)]
    );
    assert_eq!(t.stack(1), 22_000);
}

#[test]
fn ace_and_santala_win_outright() {
    let p = plan();
    let mut t = table(&p);
    round(&mut t, ["7h", "9d", "9c", "Tc"]);
    t.all([bet(1, 2_000), draw(1)]);
    let fx = t.ok(card(1, "Ac"));
    assert_eq!(
        fx,
        vec![OkoBereEffect::Outright {
            seat: 1,
            hand: "ace_and_santala".into()
        }]
    );
    // An ace and another seven is no outright win (18).
    let e = OkoBereEngine::new(&p).unwrap();
    assert_eq!(e.outright(&cards("Ac 7s")), None);
    assert_eq!(e.outright(&cards("Ac Ad Kc")), None);
}

#[test]
fn the_bankers_outright_win_beats_twenty_one() {
    let p = plan();
    let mut t = table(&p);
    round(&mut t, ["Tc", "9d", "9c", "Ac"]);
    t.all([bet(1, 2_000), draw(1), card(1, "Ad")]); // 21
    t.all([stand(2), stand(3), draw(BANKER)]);
    let fx = t.ok(card(BANKER, "As"));
    assert_eq!(
        settled(&fx),
        vec![(1, Winner::Bank, SettleReason::BankerOutright)]
    );
}

#[test]
fn outright_against_outright_goes_to_the_bank() {
    let p = plan();
    let mut t = table(&p);
    round(&mut t, ["Ac", "9d", "9c", "Ah"]);
    t.all([bet(1, 2_000), draw(1), card(1, "As")]);
    t.all([stand(2), stand(3), draw(BANKER)]);
    let fx = t.ok(card(BANKER, "7h"));
    assert_eq!(
        settled(&fx),
        vec![(1, Winner::Bank, SettleReason::BothOutright)]
    );
    assert_eq!(t.stack(1), 18_000);
    assert_eq!(t.bank(), 12_000);
}

// ----- Replacement ---------------------------------------------------------------------------

#[test]
fn first_card_seven_may_be_replaced() {
    let p = plan();
    let mut t = table(&p);
    round(&mut t, ["7c", "9d", "9c", "Tc"]);
    assert_eq!(t.decision().replace.as_deref(), Some("first_card_seven"));
    let fx = t.ok(A::Replace { seat: 1 });
    assert_eq!(
        fx,
        vec![OkoBereEffect::Replaced {
            seat: 1,
            hand: "first_card_seven".into(),
            aside: vec![c("7c")],
        }]
    );
    assert_eq!(
        t.e.expected(&t.s),
        Expected::Card {
            seat: 1,
            reason: CardFor::Replacement
        }
    );
    t.ok(card(1, "Ks"));
    assert_eq!(t.hand(1).cards, vec![c("Ks")]);
    // The card put aside stays out of the round.
    t.ok(bet(1, 1_000));
    t.ok(draw(1));
    assert_eq!(t.no(card(1, "7c")).code, code::CARD_NOT_IN_SHOE);
}

#[test]
fn eight_then_seven_may_be_replaced_and_the_stake_stays() {
    let p = plan();
    let mut t = table(&p);
    round(&mut t, ["8c", "9d", "9c", "Tc"]);
    t.all([bet(1, 3_000), draw(1), card(1, "7d")]);
    assert_eq!(t.decision().replace.as_deref(), Some("eight_then_seven"));
    t.ok(A::Replace { seat: 1 });
    t.all([card(1, "Ts"), card(1, "9s")]);
    assert_eq!(t.hand(1).cards, cards("Ts 9s"));
    assert_eq!(t.hand(1).stake_minor, 3_000);
    assert_eq!(t.stack(1), 17_000);
}

#[test]
fn five_pictures_may_be_replaced() {
    let p = plan();
    let mut t = table(&p);
    round(&mut t, ["Jc", "9d", "9c", "Tc"]);
    t.ok(bet(1, 1_000));
    for s in ["Qc", "Kc", "Jd"] {
        t.all([draw(1), card(1, s)]);
        assert_eq!(t.decision().replace, None, "{s}");
    }
    t.all([draw(1), card(1, "Qd")]);
    assert_eq!(t.decision().replace.as_deref(), Some("five_pictures"));
    t.ok(A::Replace { seat: 1 });
    for s in ["7s", "8s", "Js", "Qs"] {
        t.ok(card(1, s));
        assert!(matches!(
            t.e.expected(&t.s),
            Expected::Card {
                seat: 1,
                reason: CardFor::Replacement
            }
        ));
    }
    // Five new cards: 7 + 8 + 1 + 1 + 1 = 18.
    t.ok(card(1, "Ks"));
    assert_eq!(t.e.best_total(&t.hand(1).cards), Some(18));
    assert_eq!(t.decision().seat, 1);
}

#[test]
fn a_total_of_fifteen_may_be_replaced() {
    let p = plan();
    let mut t = table(&p);
    round(&mut t, ["7c", "9d", "9c", "Tc"]);
    t.all([bet(1, 1_000), draw(1), card(1, "8c")]);
    assert_eq!(t.decision().replace.as_deref(), Some("total_fifteen"));
    let e = OkoBereEngine::new(&p).unwrap();
    assert_eq!(e.replaceable(&cards("Tc 9d Jc Qc Kc")), None);
    assert_eq!(
        e.replaceable(&cards("9c Jc Qc Kc Jd Qd Kd")),
        Some("total_fifteen")
    );
}

#[test]
fn santala_may_count_seven_for_a_total_of_fifteen() {
    let p = plan();
    let e = OkoBereEngine::new(&p).unwrap();
    // 7h + 8: 15, 18 or 19; the holder asking for a replacement counts it 7.
    assert_eq!(e.replaceable(&cards("7h 8c")), Some("total_fifteen"));
    assert_eq!(e.best_total(&cards("7h 8c")), Some(19));
}

#[test]
fn other_hands_may_not_be_replaced() {
    let p = plan();
    let mut t = table(&p);
    round(&mut t, ["9s", "9d", "9c", "Tc"]);
    assert_eq!(t.decision().replace, None);
    let r = t.no(A::Replace { seat: 1 });
    assert_eq!(r.code, code::NOT_REPLACEABLE);
    t.all([bet(1, 1_000), draw(1), card(1, "7d")]); // 9 then 7: 16
    assert_eq!(t.no(A::Replace { seat: 1 }).code, code::NOT_REPLACEABLE);
}

#[test]
fn the_banker_may_replace_his_cards_too() {
    let p = plan();
    let mut t = table(&p);
    round(&mut t, ["9s", "9d", "9c", "7c"]);
    t.all([bet(1, 1_000), stand(1), stand(2), stand(3)]);
    let d = t.decision();
    assert!(d.banker);
    assert_eq!(d.replace.as_deref(), Some("first_card_seven"));
    t.ok(A::Replace { seat: BANKER });
    t.ok(card(BANKER, "Td"));
    assert_eq!(t.s.round().unwrap().banker_hand.cards, cards("Td"));
}

// ----- Overdraw, the banker's turn, settlement -----------------------------------------------

#[test]
fn a_player_who_overdraws_loses_his_stake_to_the_bank_at_once() {
    let p = plan();
    let mut t = table(&p);
    round(&mut t, ["Tc", "9d", "9c", "8c"]);
    t.all([bet(1, 2_000), draw(1), card(1, "9s")]);
    let fx = t.ok(raise(1, 1_000));
    assert_eq!(fx.len(), 1);
    let fx = t.ok(card(1, "8s"));
    assert_eq!(
        fx,
        vec![OkoBereEffect::Bust {
            seat: 1,
            total: 27,
            stake_minor: 3_000,
            to_bank_minor: 6_000
        }]
    );
    assert_eq!(t.stack(1), 17_000);
    assert_eq!(t.bank(), 13_000);
    // Nobody else bets: the banker does not play, the round is over.
    let fx = t.all([stand(2), stand(3)]);
    assert!(fx.contains(&OkoBereEffect::RoundEnded {
        round: 1,
        bank_minor: 13_000
    }));
    assert_eq!(t.s.phase, Phase::BetweenRounds);
}

#[test]
fn twenty_one_ends_the_turn() {
    let p = plan();
    let mut t = table(&p);
    round(&mut t, ["Tc", "9d", "9c", "8c"]);
    t.all([bet(1, 2_000), draw(1)]);
    let fx = t.ok(card(1, "Ac"));
    assert_eq!(
        fx,
        vec![OkoBereEffect::Stood {
            seat: 1,
            total: 21,
            automatic: true
        }]
    );
    assert_eq!(t.decision().seat, 2);
}

#[test]
fn ties_go_to_the_bank() {
    let p = plan();
    let mut t = table(&p);
    round(&mut t, ["Tc", "9d", "9c", "Td"]);
    t.all([bet(1, 2_000), draw(1), card(1, "9s"), stand(1)]); // 19
    t.all([stand(2), stand(3), draw(BANKER)]);
    let fx = t.all([card(BANKER, "9h"), stand(BANKER)]); // 19
    assert_eq!(settled(&fx), vec![(1, Winner::Bank, SettleReason::Tie)]);
    assert_eq!(t.stack(1), 18_000);
    assert_eq!(t.bank(), 12_000);
}

#[test]
fn the_banker_stands_at_will_and_the_higher_total_wins() {
    let p = plan();
    let mut t = table(&p);
    round(&mut t, ["Tc", "9d", "9c", "Td"]);
    t.all([bet(1, 2_000), draw(1), card(1, "9s"), stand(1)]); // 19
    t.all([bet(2, 1_000), draw(2), card(2, "Kd"), stand(2)]); // 10
    t.ok(stand(3));
    // The banker may stand on one card (10): he has no drawing rule.
    let fx = t.ok(stand(BANKER));
    assert_eq!(
        settled(&fx),
        vec![
            (1, Winner::Player, SettleReason::HigherTotal),
            (2, Winner::Bank, SettleReason::Tie)
        ]
    );
    assert_eq!(t.stack(1), 22_000);
    assert_eq!(t.stack(2), 19_000);
    assert_eq!(t.bank(), 10_000 - 2_000 + 1_000);
}

#[test]
fn an_overdrawn_banker_pays_every_active_bet() {
    let p = plan();
    let mut t = table(&p);
    round(&mut t, ["Tc", "9d", "9c", "Td"]);
    t.all([bet(1, 2_000), draw(1), card(1, "9s"), stand(1)]);
    t.all([bet(2, 1_000), stand(2)]);
    t.all([
        bet(3, 3_000),
        draw(3),
        card(3, "Ts"),
        draw(3),
        card(3, "8h"),
    ]); // 27: bust
    assert_eq!(t.bank(), 10_000 - 6_000 + 6_000);
    t.all([draw(BANKER), card(BANKER, "8c")]); // 18
    t.ok(draw(BANKER));
    let fx = t.ok(card(BANKER, "9h")); // 27
    assert!(fx.contains(&OkoBereEffect::BankerBust {
        seat: BANKER,
        total: 27
    }));
    assert_eq!(
        settled(&fx),
        vec![
            (1, Winner::Player, SettleReason::BankerBust),
            (2, Winner::Player, SettleReason::BankerBust)
        ]
    );
    assert_eq!(t.stack(1), 22_000);
    assert_eq!(t.stack(2), 21_000);
    assert_eq!(t.stack(3), 17_000);
    assert_eq!(t.bank(), 10_000 - 3_000 + 3_000);
}

// ----- The end of the game -------------------------------------------------------------------

/// Seat 1 bets the whole bank and beats the banker.
fn empty_the_bank(t: &mut T) {
    round(t, ["Tc", "9d", "9c", "Td"]);
    t.all([bet(1, 10_000), draw(1), card(1, "9s"), stand(1)]);
    assert_eq!(
        t.decision().bet,
        None,
        "nothing left in the bank for seat 2"
    );
    t.all([
        stand(2),
        stand(3),
        draw(BANKER),
        card(BANKER, "8h"),
        stand(BANKER),
    ]);
}

#[test]
fn an_empty_bank_passes_to_the_player_whose_bet_emptied_it() {
    let p = plan();
    let mut t = table(&p);
    empty_the_bank(&mut t);
    assert_eq!(t.stack(1), 30_000);
    assert_eq!(t.s.bank, None);
    assert_eq!(t.e.expected(&t.s), Expected::EmptyBank { next_banker: 1 });
    assert_eq!(
        t.no(A::SetBank {
            seat: 2,
            bank_minor: 10_000
        })
        .code,
        code::NOT_YOUR_TURN
    );
    assert_eq!(t.no(A::Leave { seat: 1 }).code, code::SEAT_IN_PLAY);
    let fx = t.ok(A::SetBank {
        seat: 1,
        bank_minor: 15_000,
    });
    assert_eq!(
        fx,
        vec![
            OkoBereEffect::BankerChosen {
                seat: 1,
                by: ChosenBy::EmptiedTheBank
            },
            OkoBereEffect::BankSet {
                seat: 1,
                bank_minor: 15_000
            }
        ]
    );
    // The old banker now plays: seat 0 is right of the cutter 3.
    t.ok(A::StartRound {
        cutter: 3,
        mala_domu: false,
    });
    assert_eq!(
        t.e.expected(&t.s),
        Expected::DuelOrFirstCard {
            cutter: 3,
            duel_stake: StakeRange {
                min_minor: 1_000,
                max_minor: 15_000
            },
            first_card_to: 0
        }
    );
}

#[test]
fn the_last_bet_that_emptied_the_bank_names_the_next_banker() {
    let p = plan();
    let mut t = table(&p);
    round(&mut t, ["Tc", "9d", "9c", "Td"]);
    t.all([bet(1, 6_000), draw(1), card(1, "9s"), stand(1)]);
    t.all([bet(2, 4_000), draw(2), card(2, "Ts"), stand(2)]);
    t.all([stand(3), draw(BANKER), card(BANKER, "7c"), stand(BANKER)]); // 17
    assert_eq!(t.e.expected(&t.s), Expected::EmptyBank { next_banker: 2 });
}

#[test]
fn after_an_empty_bank_the_players_may_stop() {
    let p = plan();
    let mut t = table(&p);
    empty_the_bank(&mut t);
    assert_eq!(t.ok(A::EndGame), vec![OkoBereEffect::GameEnded]);
    assert!(matches!(t.e.expected(&t.s), Expected::Banker { .. }));
}

#[test]
fn the_game_does_not_end_at_will_between_rounds() {
    let p = plan();
    let mut t = table(&p);
    assert_eq!(t.no(A::EndGame).code, code::NOT_EXPECTED);
}

/// Seat 1 bets the whole bank and overdraws: the bank doubles to 20 000.
fn double_the_bank(t: &mut T) {
    round(t, ["Tc", "9d", "9c", "Td"]);
    t.all([
        bet(1, 10_000),
        draw(1),
        card(1, "9s"),
        draw(1),
        card(1, "8s"),
    ]);
    t.all([stand(2), stand(3)]);
    assert_eq!(t.bank(), 20_000);
}

#[test]
fn mala_domu_needs_twice_the_initial_bank() {
    let p = plan();
    let mut t = table(&p);
    let r = t.no(A::StartRound {
        cutter: 3,
        mala_domu: true,
    });
    assert_eq!(r.code, code::MALA_DOMU_BANK_TOO_SMALL);
    assert_eq!(r.clause.as_deref(), Some("Malá domů"));
    double_the_bank(&mut t);
    assert_eq!(
        t.e.expected(&t.s),
        Expected::Round {
            banker: BANKER,
            bank_minor: 20_000,
            mala_domu_allowed: true
        }
    );
}

fn mala_domu_round(t: &mut T, banker_first: &str) -> Vec<OkoBereEffect> {
    double_the_bank(t);
    t.ok(A::StartRound {
        cutter: 3,
        mala_domu: true,
    });
    t.all([
        card(1, "Ac"),
        card(2, "Ad"),
        card(3, "Ah"),
        card(BANKER, banker_first),
    ])
}

#[test]
fn mala_domu_an_eight_first_keeps_the_bank() {
    let p = plan();
    let mut t = table(&p);
    let fx = mala_domu_round(&mut t, "8d");
    assert!(fx.contains(&OkoBereEffect::MalaDomu {
        card: c("8d"),
        kept: true
    }));
    assert!(fx.contains(&OkoBereEffect::BankTaken {
        seat: BANKER,
        bank_minor: 20_000
    }));
    assert_eq!(t.stack(BANKER), 40_000 + 20_000);
    assert_eq!(t.s.bank, None);
    // "new banker is drawn"
    assert!(matches!(t.e.expected(&t.s), Expected::Banker { .. }));
}

#[test]
fn mala_domu_a_king_first_keeps_the_bank() {
    let p = plan();
    let mut t = table(&p);
    let fx = mala_domu_round(&mut t, "Kd");
    assert!(fx.contains(&OkoBereEffect::MalaDomu {
        card: c("Kd"),
        kept: true
    }));
    assert_eq!(t.stack(BANKER), 60_000);
}

#[test]
fn mala_domu_another_first_card_and_the_round_goes_on() {
    let p = plan();
    let mut t = table(&p);
    let fx = mala_domu_round(&mut t, "Qd");
    assert_eq!(
        fx.last(),
        Some(&OkoBereEffect::MalaDomu {
            card: c("Qd"),
            kept: false
        })
    );
    assert_eq!(t.bank(), 20_000);
    assert_eq!(t.decision().seat, 1);
}

#[test]
fn mala_domu_kept_in_a_duel_returns_the_stake() {
    let p = plan();
    let mut t = table(&p);
    double_the_bank(&mut t);
    t.ok(A::StartRound {
        cutter: 3,
        mala_domu: true,
    });
    t.all([
        A::OfferDuel {
            seat: 3,
            stake_minor: 5_000,
        },
        A::AnswerDuel { accept: true },
    ]);
    assert_eq!(t.stack(3), 15_000);
    let fx = t.ok(A::DuelCard { card: c("Kc") });
    assert!(fx.contains(&OkoBereEffect::StakeReturned {
        seat: 3,
        amount_minor: 5_000,
        bank_returned_minor: 5_000
    }));
    assert_eq!(t.stack(3), 20_000);
    assert_eq!(t.stack(BANKER), 60_000);
}

// ----- The duel ------------------------------------------------------------------------------

#[test]
fn duel_declined_after_hearing_the_stake_and_the_round_goes_on() {
    let p = plan();
    let mut t = table(&p);
    t.ok(A::StartRound {
        cutter: 3,
        mala_domu: false,
    });
    assert_eq!(
        t.no(A::OfferDuel {
            seat: 2,
            stake_minor: 5_000
        })
        .code,
        code::NOT_YOUR_TURN
    );
    t.ok(A::OfferDuel {
        seat: 3,
        stake_minor: 5_000,
    });
    assert_eq!(
        t.e.expected(&t.s),
        Expected::DuelAnswer {
            banker: BANKER,
            seat: 3,
            stake_minor: 5_000
        }
    );
    assert_eq!(t.no(card(1, "9c")).code, code::NOT_EXPECTED);
    let fx = t.ok(A::AnswerDuel { accept: false });
    assert_eq!(
        fx,
        vec![OkoBereEffect::DuelDeclined {
            seat: 3,
            stake_minor: 5_000
        }]
    );
    assert_eq!(t.stack(3), 20_000);
    assert_eq!(t.bank(), 10_000);
    t.all([
        card(1, "9c"),
        card(2, "9d"),
        card(3, "9h"),
        card(BANKER, "9s"),
    ]);
    assert_eq!(t.decision().seat, 1);
    // Once the first card is dealt, no duel.
    assert_eq!(
        t.no(A::OfferDuel {
            seat: 3,
            stake_minor: 5_000
        })
        .code,
        code::NOT_EXPECTED
    );
}

#[test]
fn duel_accepted_is_played_by_the_two_on_the_bottom_card_of_the_cut() {
    let p = plan();
    let mut t = table(&p);
    t.ok(A::StartRound {
        cutter: 3,
        mala_domu: false,
    });
    assert_eq!(
        t.no(A::OfferDuel {
            seat: 3,
            stake_minor: 10_001
        })
        .code,
        code::ABOVE_BANK
    );
    t.ok(A::OfferDuel {
        seat: 3,
        stake_minor: 5_000,
    });
    let fx = t.ok(A::AnswerDuel { accept: true });
    assert!(fx.contains(&OkoBereEffect::DuelAccepted {
        seat: 3,
        stake_minor: 5_000
    }));
    assert_eq!((t.stack(3), t.bank()), (15_000, 5_000));
    assert_eq!(t.e.expected(&t.s), Expected::DuelCard);
    assert_eq!(t.no(card(1, "9c")).code, code::NOT_EXPECTED);
    t.ok(A::DuelCard { card: c("9c") });
    let r = t.s.round().unwrap();
    assert_eq!(r.order, vec![3]);
    assert_eq!(r.hands[&3].cards, cards("9c"));
    assert_eq!(r.banker_hand.cards, cards("9c"));
    let d = t.decision();
    assert_eq!((d.seat, d.bet, d.raise), (3, None, None));
    // "The bet in this case can't be increased"
    assert_eq!(t.no(raise(3, 1_000)).code, code::RAISE_NOT_ALLOWED);
    assert_eq!(t.no(bet(3, 1_000)).code, code::RAISE_NOT_ALLOWED);
    t.all([draw(3), card(3, "Tc"), stand(3)]); // 19
    t.all([draw(BANKER), card(BANKER, "Kc")]); // 10
    let fx = t.all([draw(BANKER), card(BANKER, "Qc"), stand(BANKER)]); // 11
    assert_eq!(
        settled(&fx),
        vec![(3, Winner::Player, SettleReason::HigherTotal)]
    );
    assert_eq!((t.stack(3), t.bank()), (25_000, 5_000));
    assert_eq!((t.stack(1), t.stack(2)), (20_000, 20_000));
}

#[test]
fn duel_allows_no_card_exchange() {
    let p = plan();
    let mut t = table(&p);
    t.ok(A::StartRound {
        cutter: 3,
        mala_domu: false,
    });
    t.all([
        A::OfferDuel {
            seat: 3,
            stake_minor: 2_000,
        },
        A::AnswerDuel { accept: true },
        A::DuelCard { card: c("7c") },
    ]);
    assert_eq!(t.decision().replace, None);
    let r = t.no(A::Replace { seat: 3 });
    assert_eq!(r.code, code::REPLACEMENT_NOT_ALLOWED);
    assert_eq!(r.clause.as_deref(), Some("Rounds"));
    t.all([draw(3), card(3, "Tc"), stand(3)]);
    assert_eq!(t.decision().replace, None);
    assert_eq!(
        t.no(A::Replace { seat: BANKER }).code,
        code::REPLACEMENT_NOT_ALLOWED
    );
}

// ----- Seats, chips, voids -------------------------------------------------------------------

#[test]
fn seats_and_chips_change_only_between_rounds() {
    let p = plan();
    let mut t = table(&p);
    t.ok(A::StartRound {
        cutter: 3,
        mala_domu: false,
    });
    for a in [
        A::BuyIn {
            seat: 1,
            amount_minor: 1_000,
        },
        A::CashOut {
            seat: 1,
            amount_minor: 1_000,
        },
        A::Leave { seat: 2 },
        A::Join {
            seat: 4,
            player: "late".into(),
            buy_in_minor: 1_000,
        },
    ] {
        assert_eq!(t.no(a).code, code::ROUND_IN_PROGRESS);
    }
}

#[test]
fn the_banker_cannot_leave_with_the_bank_and_a_leaver_is_cashed_out() {
    let p = plan();
    let mut t = table(&p);
    assert_eq!(t.no(A::Leave { seat: BANKER }).code, code::SEAT_IN_PLAY);
    let fx = t.ok(A::Leave { seat: 2 });
    assert_eq!(
        fx,
        vec![
            OkoBereEffect::CashedOut {
                seat: 2,
                amount_minor: 20_000
            },
            OkoBereEffect::Left {
                seat: 2,
                player: "p2".into()
            }
        ]
    );
    assert_eq!(t.s.chips_in_minor, 50_000 + 2 * 20_000);
    assert_eq!(
        t.no(A::CashOut {
            seat: 1,
            amount_minor: 20_001
        })
        .code,
        code::INSUFFICIENT_CHIPS
    );
}

#[test]
fn seats_are_limited_and_taken_once() {
    let p = plan();
    let mut t = table(&p);
    let join = |seat, player: &str| A::Join {
        seat,
        player: player.into(),
        buy_in_minor: 1_000,
    };
    assert_eq!(t.no(join(8, "x")).code, code::NO_SUCH_SEAT);
    assert_eq!(t.no(join(1, "x")).code, code::SEAT_TAKEN);
    assert_eq!(t.no(join(4, "p1")).code, code::PLAYER_SEATED);
    assert_eq!(t.no(join(4, " ")).code, code::BAD_TEXT);
    t.ok(join(7, "x"));
    assert_eq!(
        t.no(A::BuyIn {
            seat: 7,
            amount_minor: i64::MAX
        })
        .code,
        code::AMOUNT_OVERFLOW
    );
}

#[test]
fn a_void_round_returns_every_stake_and_the_bank() {
    let p = plan();
    let mut t = table(&p);
    round(&mut t, ["Tc", "9d", "9c", "Td"]);
    t.all([
        bet(1, 2_000),
        draw(1),
        card(1, "9s"),
        draw(1),
        card(1, "8s"),
    ]); // bust
    t.all([bet(2, 3_000), draw(2)]);
    let fx = t.ok(A::VoidRound {
        reason: "a card from another deck".into(),
    });
    assert_eq!(
        fx,
        vec![OkoBereEffect::RoundVoided {
            round: 1,
            reason: "a card from another deck".into(),
            refunds: vec![
                Refund {
                    seat: 1,
                    amount_minor: 2_000
                },
                Refund {
                    seat: 2,
                    amount_minor: 3_000
                }
            ],
            bank_restored_minor: 10_000,
        }]
    );
    assert_eq!((t.stack(1), t.stack(2), t.bank()), (20_000, 20_000, 10_000));
    assert_eq!(t.s.phase, Phase::BetweenRounds);
}

#[test]
fn closing_the_table_returns_the_bank_and_cashes_everyone_out() {
    let p = plan();
    let mut t = table(&p);
    t.ok(A::StartRound {
        cutter: 3,
        mala_domu: false,
    });
    assert_eq!(t.no(A::CloseTable).code, code::ROUND_IN_PROGRESS);
    t.ok(A::VoidRound {
        reason: "closing".into(),
    });
    let fx = t.ok(A::CloseTable);
    assert!(fx.contains(&OkoBereEffect::BankTaken {
        seat: BANKER,
        bank_minor: 10_000
    }));
    assert!(fx.contains(&OkoBereEffect::CashedOut {
        seat: BANKER,
        amount_minor: 50_000
    }));
    assert_eq!(t.s.chips_in_minor, 0);
    assert_eq!(t.e.expected(&t.s), Expected::Closed);
    assert_eq!(
        t.no(A::StartRound {
            cutter: 1,
            mala_domu: false
        })
        .code,
        code::TABLE_CLOSED
    );
}

#[test]
fn a_decision_not_made_in_time_is_enough() {
    let p = plan();
    let mut t = table(&p);
    round(&mut t, ["Tc", "9d", "9c", "Td"]);
    t.ok(bet(1, 2_000));
    assert_eq!(t.e.automatic_decision(&t.s), Some(stand(1)));
    t.all([stand(1), stand(2), stand(3)]);
    assert_eq!(t.e.automatic_decision(&t.s), Some(stand(BANKER)));
}

#[test]
fn non_oko_bere_plans_are_refused() {
    let p = load("evolution-top-card@1");
    let r = OkoBereEngine::new(&p).unwrap_err();
    assert_eq!(r.code, code::WRONG_FAMILY);
}

// ----- Log payloads and replay ---------------------------------------------------------------

#[test]
fn actions_read_and_write_as_tagged_json() {
    let a: OkoBereAction =
        serde_json::from_value(json!({"action": "draw", "seat": 2, "raise_minor": 2000})).unwrap();
    assert_eq!(a, raise(2, 2_000));
    assert_eq!(
        serde_json::to_value(draw(2)).unwrap(),
        json!({"action": "draw", "seat": 2})
    );
    assert_eq!(
        serde_json::to_value(card(0, "7h")).unwrap(),
        json!({"action": "card", "seat": 0, "card": "7h"})
    );
    assert_eq!(
        serde_json::from_value::<OkoBereAction>(json!({"action": "end_game"})).unwrap(),
        A::EndGame
    );
    assert_eq!(
        serde_json::from_value::<OkoBereAction>(json!({"action": "start_round", "cutter": 3}))
            .unwrap(),
        A::StartRound {
            cutter: 3,
            mala_domu: false
        }
    );
    // Unknown fields and unknown actions are errors, not ignored.
    assert!(serde_json::from_value::<OkoBereAction>(
        json!({"action": "bet", "seat": 1, "stake_minor": 1000, "odds": 2})
    )
    .is_err());
    assert!(
        serde_json::from_value::<OkoBereAction>(json!({"action": "split", "seat": 1})).is_err()
    );
    let fx = serde_json::to_value(OkoBereEffect::Settled {
        seat: 1,
        winner: Winner::Bank,
        reason: SettleReason::Tie,
        stake_minor: 1_000,
        to_player_minor: 0,
        to_bank_minor: 2_000,
    })
    .unwrap();
    assert_eq!(fx["effect"], "settled");
    assert_eq!(fx["winner"], "bank");
}

#[test]
fn replaying_the_log_rebuilds_the_table() {
    let p = plan();
    let mut t = table(&p);
    double_the_bank(&mut t);
    round(&mut t, ["Tc", "9d", "9c", "Td"]);
    t.all([bet(1, 2_000), draw(1), card(1, "9s"), stand(1)]);
    let mid = t.e.replay(&t.log).expect("the log replays");
    assert_eq!(mid, t.s);
    // The state itself round-trips through JSON, for snapshots.
    let json = serde_json::to_string(&t.s).unwrap();
    assert_eq!(serde_json::from_str::<OkoBereState>(&json).unwrap(), t.s);
    // A log with a refused action names it.
    let mut bad = t.log.clone();
    bad.insert(3, bet(1, 1_000));
    assert_eq!(t.e.replay(&bad).unwrap_err().0, 3);
}

// ----- Chips are conserved under random legal play -------------------------------------------

mod random_play {
    use rand::seq::{IndexedRandom, SliceRandom};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    use super::*;

    fn in_range(rng: &mut ChaCha20Rng, r: StakeRange) -> i64 {
        // Mostly small stakes, sometimes the whole range's top (emptying the bank).
        if rng.random_bool(0.15) {
            r.max_minor
        } else {
            rng.random_range(r.min_minor..=r.max_minor.min(r.min_minor * 4).max(r.min_minor))
        }
    }

    fn fresh_deck(rng: &mut ChaCha20Rng) -> Vec<Card> {
        let mut d = crate::cards::DeckKind::Piquet32.cards();
        d.shuffle(rng);
        d
    }

    /// A legal action for what the rules wait for (sometimes a seat or chip change between
    /// rounds), or `None` where the test stops the game.
    fn legal(
        e: &OkoBereEngine,
        s: &OkoBereState,
        deck: &mut Vec<Card>,
        rng: &mut ChaCha20Rng,
        next_player: &mut u32,
    ) -> Option<OkoBereAction> {
        let free_seat = (0..8).find(|n| !s.seats.contains_key(n));
        let seated: Vec<SeatNo> = s.seats.keys().copied().collect();
        let chips_change = |rng: &mut ChaCha20Rng, next_player: &mut u32| -> Option<A> {
            let roll = rng.random_range(0..10);
            if roll < 3 {
                if let Some(seat) = free_seat {
                    *next_player += 1;
                    return Some(A::Join {
                        seat,
                        player: format!("r{next_player}"),
                        buy_in_minor: rng.random_range(1..=40) * 1_000,
                    });
                }
            }
            let seat = *seated.choose(rng)?;
            let stack = s.stack_minor(seat)?;
            match roll {
                3..=5 => Some(A::BuyIn {
                    seat,
                    amount_minor: rng.random_range(1..=20) * 1_000,
                }),
                6 | 7 if stack > 0 => Some(A::CashOut {
                    seat,
                    amount_minor: rng.random_range(1..=stack),
                }),
                _ if s.banker() != Some(seat) => Some(A::Leave { seat }),
                _ => None,
            }
        };
        if s.round().is_some() && rng.random_bool(0.005) {
            return Some(A::VoidRound {
                reason: "a card fell off the table".into(),
            });
        }
        Some(match e.expected(s) {
            Expected::Closed => return None,
            Expected::Banker { .. } => {
                let able: Vec<SeatNo> = s
                    .seats
                    .iter()
                    .filter(|(_, st)| st.stack_minor >= 10_000)
                    .map(|(n, _)| *n)
                    .collect();
                if s.seats.is_empty() {
                    *next_player += 1;
                    return Some(A::Join {
                        seat: 0,
                        player: format!("r{next_player}"),
                        buy_in_minor: 20_000,
                    });
                }
                if s.seats.len() < 3 || able.is_empty() || rng.random_bool(0.2) {
                    return chips_change(rng, next_player).or(Some(A::BuyIn {
                        seat: *seated.first()?,
                        amount_minor: 10_000,
                    }));
                }
                if able.len() >= 2 && rng.random_bool(0.5) {
                    *deck = fresh_deck(rng);
                    A::DrawForBanker { seats: able }
                } else {
                    A::AppointBanker {
                        seat: *able.choose(rng)?,
                    }
                }
            }
            Expected::BankerDrawCard { seat } => match deck.pop() {
                Some(card) => A::Card { seat, card },
                None => A::EndGame,
            },
            Expected::Bank {
                seat,
                min_minor,
                stack_minor,
            } => {
                if stack_minor < min_minor {
                    A::EndGame
                } else {
                    A::SetBank {
                        seat,
                        bank_minor: rng.random_range(min_minor..=stack_minor.min(3 * min_minor)),
                    }
                }
            }
            Expected::Round {
                banker,
                mala_domu_allowed,
                ..
            } => {
                if rng.random_bool(0.15) {
                    if let Some(a) = chips_change(rng, next_player) {
                        return Some(a);
                    }
                }
                let players: Vec<SeatNo> =
                    seated.iter().copied().filter(|n| *n != banker).collect();
                let bank = s.bank_minor()?;
                let can = players.iter().any(|n| {
                    e.stake_range(s.stack_minor(*n).unwrap_or(0), bank, 1_000)
                        .is_some()
                });
                if !can {
                    return Some(match players.first() {
                        Some(&seat) => A::BuyIn {
                            seat,
                            amount_minor: 5_000,
                        },
                        None => chips_change(rng, next_player)?,
                    });
                }
                *deck = fresh_deck(rng);
                A::StartRound {
                    cutter: *players.choose(rng)?,
                    mala_domu: mala_domu_allowed && rng.random_bool(0.5),
                }
            }
            Expected::DuelOrFirstCard {
                cutter,
                duel_stake,
                first_card_to,
            } => {
                if rng.random_bool(0.2) {
                    A::OfferDuel {
                        seat: cutter,
                        stake_minor: in_range(rng, duel_stake),
                    }
                } else {
                    A::Card {
                        seat: first_card_to,
                        card: deck.pop()?,
                    }
                }
            }
            Expected::DuelAnswer { .. } => A::AnswerDuel {
                accept: rng.random_bool(0.6),
            },
            Expected::DuelCard => A::DuelCard { card: deck.pop()? },
            Expected::Card { seat, .. } => match deck.pop() {
                Some(card) => A::Card { seat, card },
                None => A::VoidRound {
                    reason: "the deck ran out".into(),
                },
            },
            Expected::Decision(d) => {
                let r = s.round()?;
                let hand = if d.banker {
                    &r.banker_hand
                } else {
                    &r.hands[&d.seat]
                };
                let total = e.best_total(&hand.cards).unwrap_or(0);
                if let Some(range) = d.bet {
                    if rng.random_bool(0.8) {
                        return Some(A::Bet {
                            seat: d.seat,
                            stake_minor: in_range(rng, range),
                        });
                    }
                    return Some(A::Stand { seat: d.seat });
                }
                if d.replace.is_some() && rng.random_bool(0.4) {
                    return Some(A::Replace { seat: d.seat });
                }
                if d.draw && total < rng.random_range(12..=20) {
                    let raise_minor = d
                        .raise
                        .filter(|_| rng.random_bool(0.3))
                        .map(|r| in_range(rng, r));
                    return Some(A::Draw {
                        seat: d.seat,
                        raise_minor,
                    });
                }
                A::Stand { seat: d.seat }
            }
            Expected::EmptyBank { next_banker } => {
                let stack = s.stack_minor(next_banker)?;
                if stack >= 10_000 && rng.random_bool(0.8) {
                    A::SetBank {
                        seat: next_banker,
                        bank_minor: rng.random_range(10_000..=stack.min(30_000)),
                    }
                } else {
                    A::EndGame
                }
            }
        })
    }

    /// An action drawn without looking at the rules: mostly refused.
    fn wild(s: &OkoBereState, rng: &mut ChaCha20Rng) -> OkoBereAction {
        let seat = rng.random_range(0..9);
        let amount = rng.random_range(-1_000..=30_000);
        match rng.random_range(0..12) {
            0 => A::Bet {
                seat,
                stake_minor: amount,
            },
            1 => A::Draw {
                seat,
                raise_minor: rng.random_bool(0.5).then_some(amount),
            },
            2 => A::Stand { seat },
            3 => A::Replace { seat },
            4 => A::StartRound {
                cutter: seat,
                mala_domu: rng.random_bool(0.5),
            },
            5 => A::OfferDuel {
                seat,
                stake_minor: amount,
            },
            6 => A::AnswerDuel {
                accept: rng.random_bool(0.5),
            },
            7 => A::CashOut {
                seat,
                amount_minor: amount,
            },
            8 => A::SetBank {
                seat,
                bank_minor: amount,
            },
            9 => A::EndGame,
            10 => A::Leave { seat },
            _ => A::AppointBanker {
                seat: *s.seats.keys().next().unwrap_or(&seat),
            },
        }
    }

    /// Σ stacks + bank + stakes in play, counted by the test from the state's parts.
    fn chips_on_table(s: &OkoBereState) -> i64 {
        let stacks: i64 = s.seats.values().map(|x| x.stack_minor).sum();
        let bank = s.bank_minor().unwrap_or(0);
        let in_play: i64 = s.round().map_or(0, |r| {
            r.hands
                .values()
                .filter(|h| h.status != HandStatus::Bust)
                .map(|h| h.stake_minor + h.matched_minor)
                .sum()
        });
        stacks + bank + in_play
    }

    #[test]
    fn chips_are_conserved_under_random_legal_play() {
        let p = plan();
        let e = OkoBereEngine::new(&p).unwrap();
        let (mut rounds, mut settled_bets, mut refused) = (0u64, 0u64, 0u64);
        let mut seen: BTreeMap<String, u64> = BTreeMap::new();
        for game in 0..150u64 {
            let mut rng = ChaCha20Rng::seed_from_u64(0x0c0b_e7e0 + game);
            let mut s = OkoBereState::new();
            let mut log = Vec::new();
            let mut deck = Vec::new();
            let mut next_player = 0;
            // The test's own ledger of chips brought in and taken out.
            let mut ledger: i64 = 0;
            for _ in 0..600 {
                if rng.random_bool(0.1) {
                    let a = wild(&s, &mut rng);
                    let before = s.clone();
                    match e.apply(&mut s, &a) {
                        Ok(fx) => {
                            ledger += money_in(&a, &fx);
                            log.push(a);
                        }
                        Err(r) => {
                            assert_ne!(r.code, code::CHIPS_NOT_CONSERVED, "game {game}: {a:?}");
                            assert_eq!(s, before, "a refused action changed the state");
                            refused += 1;
                        }
                    }
                } else {
                    let Some(a) = legal(&e, &s, &mut deck, &mut rng, &mut next_player) else {
                        break;
                    };
                    let fx = e.apply(&mut s, &a).unwrap_or_else(|r| {
                        panic!(
                            "game {game}: legal {a:?} refused: {r}; expected {:?}",
                            e.expected(&s)
                        )
                    });
                    rounds += fx
                        .iter()
                        .filter(|f| matches!(f, OkoBereEffect::RoundEnded { .. }))
                        .count() as u64;
                    settled_bets += fx
                        .iter()
                        .filter(|f| matches!(f, OkoBereEffect::Settled { .. }))
                        .count() as u64;
                    for f in &fx {
                        let v = serde_json::to_value(f).unwrap();
                        let mut kind = v["effect"].as_str().unwrap().to_string();
                        if let Some(kept) = v["kept"].as_bool() {
                            kind = format!("{kind}:{kept}");
                        }
                        *seen.entry(kind).or_default() += 1;
                    }
                    ledger += money_in(&a, &fx);
                    log.push(a);
                }
                assert_eq!(s.chips_in_minor, ledger, "game {game}");
                assert_eq!(chips_on_table(&s), ledger, "game {game}");
                if let Some(r) = s.round() {
                    for h in r.hands.values() {
                        assert_eq!(h.stake_minor, h.matched_minor);
                    }
                }
            }
            assert_eq!(e.replay(&log).expect("the log replays"), s, "game {game}");
        }
        // The loop did play the game, not only stand around.
        assert!(rounds > 1_000, "{rounds} rounds");
        assert!(settled_bets > 1_000, "{settled_bets} bets settled");
        assert!(refused > 1_000, "{refused} refused");
        // Every path of the rules was taken.
        for kind in [
            "banker_draw_tied",
            "duel_declined",
            "duel_accepted",
            "replaced",
            "outright",
            "bust",
            "banker_bust",
            "mala_domu:true",
            "mala_domu:false",
            "stake_returned",
            "bank_emptied",
            "round_voided",
            "left",
        ] {
            assert!(seen.contains_key(kind), "no {kind} in {seen:?}");
        }
        eprintln!("{rounds} rounds, {settled_bets} bets settled, {refused} refused: {seen:?}");
    }

    /// Chips brought to the table (positive) or taken away (negative) by one action.
    fn money_in(a: &OkoBereAction, fx: &[OkoBereEffect]) -> i64 {
        let out: i64 = fx
            .iter()
            .map(|f| match f {
                OkoBereEffect::CashedOut { amount_minor, .. } => *amount_minor,
                _ => 0,
            })
            .sum();
        match a {
            A::Join { buy_in_minor, .. } => *buy_in_minor,
            A::BuyIn { amount_minor, .. } => *amount_minor,
            _ => -out,
        }
    }
}
