//! The round driver on the real plans: whole rounds, card by card and decision by decision.

use std::cell::RefCell;
use std::rc::Rc;

use super::driver::{InsuranceAnswer, Script};
use super::testing::*;
use super::*;
use crate::cards::Card;
use crate::plan::model::Plan;

fn engine(p: &Plan) -> BlackjackEngine<'_> {
    BlackjackEngine::new(p).expect("a blackjack plan")
}

fn main_bet(stake_minor: i64) -> BlackjackBet {
    BlackjackBet {
        bet: "main".into(),
        stake_minor,
    }
}

fn seat(n: u8, player: &str, main: i64) -> PositionBets {
    PositionBets {
        seat: Some(n),
        player: player.into(),
        bets: vec![main_bet(main)],
        bets_behind: vec![],
    }
}

fn common(player: &str, main: i64) -> PositionBets {
    PositionBets {
        seat: None,
        ..seat(0, player, main)
    }
}

fn open(e: &BlackjackEngine, positions: Vec<PositionBets>) -> RoundState {
    e.open_round(&RoundSetup { positions })
        .unwrap_or_else(|r| panic!("opens: {r}"))
}

fn deal(e: &BlackjackEngine, st: &mut RoundState, s: &str) {
    for c in cards(s) {
        e.apply(st, &Input::Card { card: c })
            .unwrap_or_else(|r| panic!("{c}: {r}"));
    }
}

fn decide(e: &BlackjackEngine, st: &mut RoundState, position: usize, hand: usize, d: Decision) {
    e.apply(
        st,
        &Input::Decide {
            position,
            hand,
            decision: d,
        },
    )
    .unwrap_or_else(|r| panic!("{d:?} on {position}/{hand}: {r}"));
}

/// Applies `input`, expects the refusal `code`, and checks the state did not change.
fn refused(e: &BlackjackEngine, st: &mut RoundState, input: Input, code: &str) {
    let before = st.clone();
    let r = e
        .apply(st, &input)
        .expect_err(&format!("{input:?} is refused"));
    assert_eq!(r.code, code, "{input:?}: {r}");
    assert!(r.clause.is_some(), "{input:?}: a refusal names its clause");
    assert_eq!(*st, before, "a refused input changes nothing");
}

fn hand_cards(st: &RoundState, position: usize) -> Vec<Vec<Card>> {
    st.positions[position]
        .play
        .hands
        .iter()
        .map(|h| h.cards.clone())
        .collect()
}

fn next_card_to(to: CardTo) -> Next {
    Next::Card { to }
}

fn box_hand(position: usize, hand: usize) -> Next {
    next_card_to(CardTo::Hand { position, hand })
}

/// (bet, hand, outcome, total credited) of each stake.
fn stakes(s: &Settlement) -> Vec<(String, Option<usize>, String, i64)> {
    s.stakes
        .iter()
        .map(|x| {
            (
                x.bet.to_string(),
                x.hand,
                x.payout.outcome.clone(),
                x.payout.total_minor(),
            )
        })
        .collect()
}

fn row(
    bet: &str,
    hand: Option<usize>,
    outcome: &str,
    total: i64,
) -> (String, Option<usize>, String, i64) {
    (bet.into(), hand, outcome.into(), total)
}

// --- The first pass and the order of play ---------------------------------------------------

#[test]
fn seated_round_deals_box_dealer_box_hole_then_plays_boxes_in_order() {
    let p = plan("evolution-blackjack");
    let e = engine(&p);
    let mut st = open(&e, vec![seat(2, "ann", 1_000), seat(5, "bob", 1_000)]);
    let hand0 = |position| CardTo::Hand { position, hand: 0 };
    let expected = [
        hand0(0),
        hand0(1),
        CardTo::Dealer,
        hand0(0),
        hand0(1),
        CardTo::Dealer,
    ];
    for (to, c) in expected.into_iter().zip(cards("Tc 9d 6h 7s 8c Ks")) {
        assert_eq!(e.next_step(&st), next_card_to(to));
        deal(&e, &mut st, &c.to_string());
    }
    // Box 2 (ann, 17) first; bob (17) may not decide before her.
    assert_eq!(
        e.next_step(&st),
        Next::Decision {
            position: 0,
            hand: 0
        }
    );
    refused(
        &e,
        &mut st,
        Input::Decide {
            position: 1,
            hand: 0,
            decision: Decision::Stand,
        },
        code::DECISION_NOT_EXPECTED,
    );
    decide(&e, &mut st, 0, 0, Decision::Stand);
    assert_eq!(
        e.next_step(&st),
        Next::Decision {
            position: 1,
            hand: 0
        }
    );
    decide(&e, &mut st, 1, 0, Decision::Hit);
    assert_eq!(e.next_step(&st), box_hand(1, 0));
    // 21 takes no more decisions.
    deal(&e, &mut st, "4d");
    // Dealer 6 + K = 16 draws; with 4 he has 20.
    assert_eq!(e.next_step(&st), next_card_to(CardTo::Dealer));
    deal(&e, &mut st, "4c");
    assert_eq!(e.next_step(&st), Next::Complete);
    refused(
        &e,
        &mut st,
        Input::Card { card: card("5c") },
        code::CARD_NOT_EXPECTED,
    );
    let s = e.settle_round(&st).unwrap();
    assert_eq!(s.positions[0].main.total_minor(), 0, "17 loses to 20");
    assert_eq!(
        s.positions[1].main.total_minor(),
        2_000,
        "21 of three cards wins 1:1"
    );
}

#[test]
fn a_card_the_shoe_cannot_hold_is_refused_in_the_round() {
    let p = plan("single-deck-blackjack");
    let e = engine(&p);
    let mut st = open(&e, vec![seat(1, "ann", 1_000)]);
    deal(&e, &mut st, "Tc 6d");
    refused(
        &e,
        &mut st,
        Input::Card { card: card("Tc") },
        code::CARD_NOT_IN_SHOE,
    );
}

// --- Splits and doubles -------------------------------------------------------------------

#[test]
fn split_aces_receive_one_card_each_and_play_moves_on() {
    let p = plan("evolution-blackjack");
    let e = engine(&p);
    let mut st = open(&e, vec![seat(1, "ann", 1_000)]);
    deal(&e, &mut st, "Ac 9d Ah 7s");
    decide(&e, &mut st, 0, 0, Decision::Split);
    assert_eq!(e.next_step(&st), box_hand(0, 0));
    // The second split hand gets no decision before its card, the first none after its one.
    refused(
        &e,
        &mut st,
        Input::Decide {
            position: 0,
            hand: 1,
            decision: Decision::Hit,
        },
        code::DECISION_NOT_EXPECTED,
    );
    deal(&e, &mut st, "Kc");
    assert_eq!(e.next_step(&st), box_hand(0, 1));
    deal(&e, &mut st, "5d");
    assert_eq!(e.next_step(&st), next_card_to(CardTo::Dealer));
    deal(&e, &mut st, "3c");
    assert_eq!(hand_cards(&st, 0), vec![cards("Ac Kc"), cards("Ah 5d")]);
    let s = e.settle_round(&st).unwrap();
    // A + K on a split hand is 21, paid 1:1, not a blackjack; A + 5 (16) loses to 19.
    assert_eq!(
        stakes(&s.positions[0].main),
        vec![
            row("main", Some(0), "win", 2_000),
            row("split", Some(1), "lose", 0)
        ]
    );
}

#[test]
fn single_deck_resplits_to_four_hands_and_no_more() {
    let p = plan("single-deck-blackjack");
    let e = engine(&p);
    let mut st = open(&e, vec![seat(1, "ann", 1_000)]);
    // Dealer 6 up (no peek), T in the hole.
    deal(&e, &mut st, "Tc 6d Jd Ts");
    decide(&e, &mut st, 0, 0, Decision::Split);
    deal(&e, &mut st, "Qh");
    decide(&e, &mut st, 0, 0, Decision::Split);
    deal(&e, &mut st, "Kh");
    decide(&e, &mut st, 0, 0, Decision::Split);
    assert_eq!(st.positions[0].play.hands.len(), 4);
    deal(&e, &mut st, "Th");
    refused(
        &e,
        &mut st,
        Input::Decide {
            position: 0,
            hand: 0,
            decision: Decision::Split,
        },
        code::MAX_HANDS_REACHED,
    );
}

#[test]
fn one_split_only_where_the_plan_allows_two_hands() {
    let p = plan("evolution-blackjack");
    let e = engine(&p);
    let mut st = open(&e, vec![seat(1, "ann", 1_000)]);
    deal(&e, &mut st, "8c 6d 8h Ts");
    refused(
        &e,
        &mut st,
        Input::Card { card: card("8s") },
        code::CARD_NOT_EXPECTED,
    );
    decide(&e, &mut st, 0, 0, Decision::Split);
    deal(&e, &mut st, "8s");
    refused(
        &e,
        &mut st,
        Input::Decide {
            position: 0,
            hand: 0,
            decision: Decision::Split,
        },
        code::MAX_HANDS_REACHED,
    );
}

#[test]
fn double_after_split_follows_the_plan() {
    // SYNOT allows it; Evolution does not ("nemůže již v rámci rozdělených hand zvolit
    // možnost Zdvojnásobit").
    for (id, allowed) in [("synot-blackjack", true), ("evolution-blackjack", false)] {
        let p = plan(id);
        let e = engine(&p);
        let mut st = open(&e, vec![seat(1, "ann", 1_000)]);
        deal(&e, &mut st, "8c 6d 8h Ts");
        decide(&e, &mut st, 0, 0, Decision::Split);
        deal(&e, &mut st, "3c");
        let double = Input::Decide {
            position: 0,
            hand: 0,
            decision: Decision::Double,
        };
        if allowed {
            e.apply(&mut st, &double).unwrap();
            assert_eq!(e.next_step(&st), box_hand(0, 0), "{id}");
            deal(&e, &mut st, "9d");
            // The doubled hand has its one card: hand 1 gets its second.
            assert_eq!(e.next_step(&st), box_hand(0, 1), "{id}");
        } else {
            refused(&e, &mut st, double, code::DOUBLE_AFTER_SPLIT_NOT_ALLOWED);
        }
    }
}

#[test]
fn czech_strict_doubles_only_on_9_10_or_11_in_the_round() {
    let p = plan("czech-blackjack-strict");
    let e = engine(&p);
    let mut st = open(&e, vec![seat(1, "ann", 1_000), seat(2, "bob", 1_000)]);
    // ann 5 + 7 = 12, bob 6 + 5 = 11, dealer 9.
    deal(&e, &mut st, "5c 6d 9h 7s 5h");
    refused(
        &e,
        &mut st,
        Input::Decide {
            position: 0,
            hand: 0,
            decision: Decision::Double,
        },
        code::DOUBLE_TOTAL_NOT_ALLOWED,
    );
    decide(&e, &mut st, 0, 0, Decision::Stand);
    decide(&e, &mut st, 1, 0, Decision::Double);
}

// --- The dealer -----------------------------------------------------------------------------

#[test]
fn dealer_hits_soft_17_where_the_plan_says_and_stands_where_it_does_not() {
    for (id, draws) in [
        ("single-deck-blackjack", true),
        ("evolution-blackjack", false),
    ] {
        let p = plan(id);
        let e = engine(&p);
        let mut st = open(&e, vec![seat(1, "ann", 1_000)]);
        // Dealer 6 up, ace in the hole: soft 17.
        deal(&e, &mut st, "Tc 6d 9h As");
        decide(&e, &mut st, 0, 0, Decision::Stand);
        let expected = if draws {
            next_card_to(CardTo::Dealer)
        } else {
            Next::Complete
        };
        assert_eq!(e.next_step(&st), expected, "{id}");
    }
}

#[test]
fn a_peeking_dealer_with_blackjack_ends_the_round_before_any_decision() {
    let p = plan("single-deck-blackjack");
    let e = engine(&p);
    let mut st = open(&e, vec![seat(1, "ann", 1_000)]);
    deal(&e, &mut st, "9c Kd 7h As");
    assert_eq!(e.next_step(&st), Next::Complete);
    refused(
        &e,
        &mut st,
        Input::Decide {
            position: 0,
            hand: 0,
            decision: Decision::Double,
        },
        code::DECISION_NOT_EXPECTED,
    );
    let s = e.settle_round(&st).unwrap();
    assert_eq!(
        stakes(&s.positions[0].main),
        vec![row("main", Some(0), "lose", 0)]
    );
}

#[test]
fn without_a_peek_the_players_play_into_a_dealer_blackjack_that_takes_the_double() {
    let p = plan("evolution-blackjack");
    let e = engine(&p);
    let mut st = open(&e, vec![seat(1, "ann", 1_000)]);
    // 6 + 5 = 11 against a K with an ace in the hole, unseen.
    deal(&e, &mut st, "6c Kd 5h As");
    assert_eq!(
        e.next_step(&st),
        Next::Decision {
            position: 0,
            hand: 0
        }
    );
    decide(&e, &mut st, 0, 0, Decision::Double);
    deal(&e, &mut st, "9d");
    assert_eq!(e.next_step(&st), Next::Complete);
    let s = e.settle_round(&st).unwrap();
    assert_eq!(
        stakes(&s.positions[0].main),
        vec![
            row("main", Some(0), "lose", 0),
            row("double", Some(0), "lose", 0)
        ]
    );
}

#[test]
fn czech_dealer_takes_his_second_card_after_the_players_and_his_blackjack_takes_all() {
    let p = plan("czech-blackjack");
    let e = engine(&p);
    let mut st = open(&e, vec![seat(1, "ann", 1_000), seat(3, "bob", 1_000)]);
    let hand0 = |position| CardTo::Hand { position, hand: 0 };
    // One card to the dealer in the first pass: box 1, box 3, dealer, box 1, box 3.
    for (to, c) in [hand0(0), hand0(1), CardTo::Dealer, hand0(0), hand0(1)]
        .into_iter()
        .zip(cards("6c Tc Kd 5h 6s"))
    {
        assert_eq!(e.next_step(&st), next_card_to(to));
        deal(&e, &mut st, &c.to_string());
    }
    assert_eq!(st.dealer.len(), 1);
    decide(&e, &mut st, 0, 0, Decision::Double);
    deal(&e, &mut st, "9d");
    // bob: 16, hits and busts; his bust loses first, whatever the dealer does.
    decide(&e, &mut st, 1, 0, Decision::Hit);
    deal(&e, &mut st, "Qh");
    assert_eq!(e.next_step(&st), next_card_to(CardTo::Dealer));
    deal(&e, &mut st, "Ah");
    assert_eq!(e.next_step(&st), Next::Complete);
    let s = e.settle_round(&st).unwrap();
    assert_eq!(
        stakes(&s.positions[0].main),
        vec![
            row("main", Some(0), "lose", 0),
            row("double", Some(0), "lose", 0)
        ]
    );
    assert_eq!(
        stakes(&s.positions[1].main),
        vec![row("main", Some(0), "lose", 0)]
    );
}

#[test]
fn czech_player_bust_loses_even_when_the_dealer_busts_after() {
    let p = plan("czech-blackjack");
    let e = engine(&p);
    let mut st = open(&e, vec![seat(1, "ann", 1_000), seat(2, "bob", 1_000)]);
    deal(&e, &mut st, "Tc 9c 6d 6h Tc");
    decide(&e, &mut st, 0, 0, Decision::Hit);
    deal(&e, &mut st, "Kc");
    decide(&e, &mut st, 1, 0, Decision::Stand);
    // Dealer 6, then T, then K: bust with three cards.
    deal(&e, &mut st, "Td Kd");
    let s = e.settle_round(&st).unwrap();
    assert_eq!(s.positions[0].main.total_minor(), 0, "ann's bust loses");
    assert_eq!(s.positions[1].main.total_minor(), 2_000, "bob's 19 wins");
}

// --- Time-outs and insurance ------------------------------------------------------------------

#[test]
fn a_time_out_takes_the_plans_automatic_decision() {
    // Evolution hits 11 and below; SYNOT stands.
    for (id, next) in [
        ("evolution-blackjack", box_hand(0, 0)),
        ("synot-blackjack", next_card_to(CardTo::Dealer)),
    ] {
        let p = plan(id);
        let e = engine(&p);
        let mut st = open(&e, vec![seat(1, "ann", 1_000)]);
        deal(&e, &mut st, "5c 9d 6h 7s");
        e.apply(
            &mut st,
            &Input::TimedOut {
                position: 0,
                hand: 0,
            },
        )
        .unwrap();
        assert_eq!(e.next_step(&st), next, "{id}");
    }
}

#[test]
fn insurance_is_offered_on_a_dealer_ace_to_the_box_and_its_bet_behind_then_closed() {
    let p = plan("evolution-blackjack");
    let e = engine(&p);
    let mut ann = seat(1, "ann", 1_000);
    ann.bets_behind.push(BetBehindBet {
        player: "bob".into(),
        stake_minor: 2_000,
    });
    let mut st = open(&e, vec![ann]);
    deal(&e, &mut st, "9c Ad 7h Ks");
    assert_eq!(e.next_step(&st), Next::Insurance);
    assert_eq!(e.pending_insurance(&st), vec![(0, None), (0, Some(0))]);
    refused(
        &e,
        &mut st,
        Input::Card { card: card("2c") },
        code::CARD_NOT_EXPECTED,
    );
    let insure = |stake_minor| Input::Insure {
        position: 0,
        bet_behind: None,
        stake_minor,
    };
    refused(&e, &mut st, insure(400), code::INSURANCE_STAKE);
    e.apply(&mut st, &insure(500)).unwrap();
    refused(&e, &mut st, insure(500), code::INSURANCE_NOT_EXPECTED);
    e.apply(&mut st, &Input::CloseInsurance).unwrap();
    assert_eq!(
        st.positions[0].bets_behind[0].insurance,
        InsuranceAnswer::Declined
    );
    assert_eq!(
        e.next_step(&st),
        Next::Decision {
            position: 0,
            hand: 0
        }
    );
    decide(&e, &mut st, 0, 0, Decision::Stand);
    let s = e.settle_round(&st).unwrap();
    // The dealer's A + K: the main bet loses, the insurance pays 2:1.
    assert_eq!(
        stakes(&s.positions[0].main),
        vec![
            row("main", Some(0), "lose", 0),
            row("insurance", None, "win", 1_500)
        ]
    );
    assert_eq!(s.positions[0].bets_behind[0].total_minor(), 0);
}

#[test]
fn czech_and_other_plans_without_insurance_go_straight_to_the_players() {
    let p = plan("czech-blackjack");
    let e = engine(&p);
    let mut st = open(&e, vec![seat(1, "ann", 1_000), seat(2, "bob", 1_000)]);
    deal(&e, &mut st, "9c 7d Ad 9h 7s");
    assert_eq!(
        e.next_step(&st),
        Next::Decision {
            position: 0,
            hand: 0
        }
    );
    refused(
        &e,
        &mut st,
        Input::CloseInsurance,
        code::INSURANCE_NOT_EXPECTED,
    );
}

// --- Bet Behind ---------------------------------------------------------------------------

#[test]
fn bet_behind_follows_a_split_and_a_double_unless_it_declines() {
    // SYNOT: double after split, Bet Behind. Three Bets Behind on ann's box: one matches
    // everything, one declines the split, one declines the double.
    let p = plan("synot-blackjack");
    let e = engine(&p);
    let mut ann = seat(1, "ann", 1_000);
    for who in ["bob", "cid", "dan"] {
        ann.bets_behind.push(BetBehindBet {
            player: who.into(),
            stake_minor: 1_000,
        });
    }
    let mut st = open(&e, vec![ann]);
    deal(&e, &mut st, "8c 6d 8h Ts");
    decide(&e, &mut st, 0, 0, Decision::Split);
    e.apply(
        &mut st,
        &Input::BetBehindDeclinesSplit {
            position: 0,
            bet_behind: 1,
        },
    )
    .unwrap();
    deal(&e, &mut st, "3c");
    decide(&e, &mut st, 0, 0, Decision::Double);
    e.apply(
        &mut st,
        &Input::BetBehindDeclinesDouble {
            position: 0,
            bet_behind: 2,
            hand: 0,
        },
    )
    .unwrap();
    refused(
        &e,
        &mut st,
        Input::BetBehindDeclinesDouble {
            position: 0,
            bet_behind: 0,
            hand: 1,
        },
        code::BET_BEHIND_NOTHING_TO_DECLINE,
    );
    deal(&e, &mut st, "9d Kc");
    decide(&e, &mut st, 0, 1, Decision::Stand);
    // Dealer 16 draws 7: bust. Every hand wins.
    deal(&e, &mut st, "7c");
    assert_eq!(e.next_step(&st), Next::Complete);
    refused(
        &e,
        &mut st,
        Input::BetBehindDeclinesSplit {
            position: 0,
            bet_behind: 0,
        },
        code::BET_BEHIND_NOTHING_TO_DECLINE,
    );
    let s = e.settle_round(&st).unwrap();
    let owner = vec![
        row("main", Some(0), "win", 2_000),
        row("double", Some(0), "win", 2_000),
        row("split", Some(1), "win", 2_000),
    ];
    assert_eq!(stakes(&s.positions[0].main), owner);
    let bb = &s.positions[0].bets_behind;
    assert_eq!(
        stakes(&bb[0]),
        vec![
            row("bet_behind", Some(0), "win", 2_000),
            row("double", Some(0), "win", 2_000),
            row("split", Some(1), "win", 2_000),
        ]
    );
    // Declined the split: the right-hand hand only, with its double.
    assert_eq!(
        stakes(&bb[1]),
        vec![
            row("bet_behind", Some(0), "win", 2_000),
            row("double", Some(0), "win", 2_000),
        ]
    );
    // Declined the double: its single stake rides the doubled hand.
    assert_eq!(
        stakes(&bb[2]),
        vec![
            row("bet_behind", Some(0), "win", 2_000),
            row("split", Some(1), "win", 2_000),
        ]
    );
}

#[test]
fn bet_behind_goes_on_another_players_box_and_not_where_the_plan_has_none() {
    let p = plan("evolution-blackjack");
    let e = engine(&p);
    let mut ann = seat(1, "ann", 1_000);
    ann.bets_behind.push(BetBehindBet {
        player: "ann".into(),
        stake_minor: 1_000,
    });
    let r = e
        .open_round(&RoundSetup {
            positions: vec![ann.clone()],
        })
        .unwrap_err();
    assert_eq!(r.code, code::BET_BEHIND_NOT_ALLOWED);
    let p = plan("czech-blackjack");
    let e = engine(&p);
    ann.bets_behind[0].player = "bob".into();
    let r = e
        .open_round(&RoundSetup {
            positions: vec![ann, seat(2, "bob", 1_000)],
        })
        .unwrap_err();
    assert_eq!(r.code, code::BET_BEHIND_NOT_ALLOWED);
}

// --- Opening a round ----------------------------------------------------------------------

#[test]
fn a_round_opens_only_for_boxes_with_a_main_bet_and_enough_players() {
    let p = plan("czech-blackjack");
    let e = engine(&p);
    // "pro 2 až 6 hráčů".
    let r = e
        .open_round(&RoundSetup {
            positions: vec![seat(1, "ann", 1_000)],
        })
        .unwrap_err();
    assert_eq!(r.code, code::TOO_FEW_PLAYERS);
    let mut empty = seat(2, "bob", 1_000);
    empty.bets.clear();
    let r = e
        .open_round(&RoundSetup {
            positions: vec![seat(1, "ann", 1_000), empty],
        })
        .unwrap_err();
    assert_eq!(r.code, code::MAIN_BET_MISSING);
    let r = e
        .open_round(&RoundSetup {
            positions: vec![seat(1, "ann", 1_000), seat(7, "bob", 1_000)],
        })
        .unwrap_err();
    assert_eq!(r.code, code::PLAY_INVALID, "the Czech table has 6 boxes");
    let p = plan("evolution-infinite-blackjack");
    let e = engine(&p);
    for bad in [
        vec![seat(1, "ann", 1_000)],
        vec![common("ann", 1_000), common("ann", 500)],
    ] {
        assert!(e.open_round(&RoundSetup { positions: bad }).is_err());
    }
}

// --- The common hand ------------------------------------------------------------------------

#[test]
fn common_hand_players_decide_independently_and_take_only_the_cards_they_wait_for() {
    let p = plan("evolution-infinite-blackjack");
    let e = engine(&p);
    let mut st = open(
        &e,
        vec![
            common("ann", 1_000),
            common("bob", 1_000),
            common("cid", 1_000),
        ],
    );
    assert_eq!(
        e.first_pass(&[]).unwrap(),
        vec![
            DealTo::CommonHand,
            DealTo::Dealer,
            DealTo::CommonHand,
            DealTo::Dealer
        ]
    );
    // Everyone holds 8-8 against the dealer's 9 (7 in the hole).
    deal(&e, &mut st, "8c 9d 8h 7s");
    assert_eq!(e.pending_decisions(&st), vec![(0, 0), (1, 0), (2, 0)]);
    // In any order: cid splits, ann stands, bob hits.
    decide(&e, &mut st, 2, 0, Decision::Split);
    decide(&e, &mut st, 0, 0, Decision::Stand);
    assert_eq!(
        e.next_step(&st),
        Next::Decision {
            position: 1,
            hand: 0
        }
    );
    refused(
        &e,
        &mut st,
        Input::Card { card: card("3c") },
        code::CARD_NOT_EXPECTED,
    );
    decide(&e, &mut st, 1, 0, Decision::Hit);
    // One card for everyone still drawing: bob's hand and cid's first split hand.
    assert_eq!(e.next_step(&st), next_card_to(CardTo::CommonHand));
    deal(&e, &mut st, "3c");
    assert_eq!(e.pending_decisions(&st), vec![(1, 0), (2, 0)]);
    decide(&e, &mut st, 1, 0, Decision::Stand);
    decide(&e, &mut st, 2, 0, Decision::Hit);
    deal(&e, &mut st, "2d");
    decide(&e, &mut st, 2, 0, Decision::Stand);
    // Only cid's second split hand awaits a card now.
    deal(&e, &mut st, "Kd");
    decide(&e, &mut st, 2, 1, Decision::Stand);
    assert_eq!(e.next_step(&st), next_card_to(CardTo::Dealer));
    deal(&e, &mut st, "6h");
    assert_eq!(e.next_step(&st), Next::Complete);
    // Cards dealt after ann stood count nothing for her; bob, who did not split, took the
    // first card dealt after the first pass, as it was dealt.
    assert_eq!(hand_cards(&st, 0), vec![cards("8c 8h")]);
    assert_eq!(hand_cards(&st, 1), vec![cards("8c 8h 3c")]);
    assert_eq!(hand_cards(&st, 2), vec![cards("8c 3c 2d"), cards("8h Kd")]);
    let s = e.settle_round(&st).unwrap();
    // The dealer busts (9 + 7 + 6): every hand still standing wins.
    let totals: Vec<i64> = s.positions.iter().map(|p| p.main.total_minor()).collect();
    assert_eq!(totals, vec![2_000, 2_000, 4_000]);
}

#[test]
fn common_hand_side_bets_are_decided_on_the_common_first_two_cards() {
    let p = plan("evolution-infinite-blackjack");
    let e = engine(&p);
    let mut ann = common("ann", 1_000);
    ann.bets.push(BlackjackBet {
        bet: "perfect_pairs".into(),
        stake_minor: 100,
    });
    let mut st = open(&e, vec![ann, common("bob", 1_000)]);
    deal(&e, &mut st, "8c 9d 8c 7s");
    decide(&e, &mut st, 0, 0, Decision::Split);
    decide(&e, &mut st, 1, 0, Decision::Stand);
    deal(&e, &mut st, "Tc");
    decide(&e, &mut st, 0, 0, Decision::Stand);
    deal(&e, &mut st, "Td");
    decide(&e, &mut st, 0, 1, Decision::Stand);
    // The dealer's 16 draws.
    deal(&e, &mut st, "2c");
    let s = e.settle_round(&st).unwrap();
    // Two 8♣ are a perfect pair: 25:1.
    assert_eq!(s.positions[0].side_bets[0].payout.total_minor(), 2_600);
    assert!(s.positions[1].side_bets.is_empty());
}

// --- Event sourcing -------------------------------------------------------------------------

/// Records every input [`BlackjackEngine::play_round`] applies, in order.
struct Recorder {
    log: Rc<RefCell<Vec<Input>>>,
    script: Script,
}

impl Decider for Recorder {
    fn decide(
        &mut self,
        e: &BlackjackEngine<'_>,
        st: &RoundState,
        position: usize,
        hand: usize,
    ) -> Option<Decision> {
        let d = self.script.decide(e, st, position, hand);
        self.log.borrow_mut().push(match d {
            Some(decision) => Input::Decide {
                position,
                hand,
                decision,
            },
            None => Input::TimedOut { position, hand },
        });
        d
    }

    fn insure(
        &mut self,
        _: &BlackjackEngine<'_>,
        _: &RoundState,
        position: usize,
        bet_behind: Option<usize>,
    ) -> Option<i64> {
        let (input, stake) = match bet_behind {
            None => (
                Input::Insure {
                    position,
                    bet_behind,
                    stake_minor: 500,
                },
                Some(500),
            ),
            Some(_) => (
                Input::DeclineInsurance {
                    position,
                    bet_behind,
                },
                None,
            ),
        };
        self.log.borrow_mut().push(input);
        stake
    }
}

#[test]
fn a_round_replayed_from_its_logged_inputs_is_the_same_round() {
    let p = plan("evolution-blackjack");
    let e = engine(&p);
    let mut ann = seat(1, "ann", 1_000);
    ann.bets_behind.push(BetBehindBet {
        player: "bob".into(),
        stake_minor: 1_000,
    });
    let setup = RoundSetup {
        positions: vec![ann, seat(4, "cid", 1_000)],
    };
    let log = Rc::new(RefCell::new(Vec::new()));
    let mut recorder = Recorder {
        log: log.clone(),
        // ann splits her 8s, hits the first, stands on both; cid times out twice (hit on 6,
        // then the automatic stand on 16).
        script: Script::new([
            Some(Decision::Split),
            Some(Decision::Hit),
            Some(Decision::Stand),
            Some(Decision::Stand),
            None,
            None,
        ]),
    };
    let mut shoe = cards("8c 4d Ad 8h 2s 5c 3h 9d Tc Kh 2c 9s").into_iter();
    let mut source = || {
        let c = shoe.next()?;
        log.borrow_mut().push(Input::Card { card: c });
        Some(c)
    };
    let (played, settled) = e.play_round(&setup, &mut source, &mut recorder).unwrap();
    let mut replayed = e.open_round(&setup).unwrap();
    for input in log.borrow().iter() {
        e.apply(&mut replayed, input).unwrap();
    }
    assert_eq!(replayed, played);
    assert_eq!(e.settle_round(&replayed).unwrap(), settled);
    // The log and the state read back from JSON are the same.
    let json = serde_json::to_string(&*log.borrow()).unwrap();
    let back: Vec<Input> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, *log.borrow());
    let state: RoundState = serde_json::from_str(&serde_json::to_string(&played).unwrap()).unwrap();
    assert_eq!(state, played);
    assert_eq!(
        hand_cards(&played, 0),
        vec![cards("8c 3h 9d"), cards("8h Tc")]
    );
    assert_eq!(hand_cards(&played, 1), vec![cards("4d 2s Kh")]);
}

#[test]
fn a_round_is_settled_only_when_complete() {
    let p = plan("synot-blackjack");
    let e = engine(&p);
    let mut st = open(&e, vec![seat(1, "ann", 1_000)]);
    deal(&e, &mut st, "Tc 6d");
    let r = e.settle_round(&st).unwrap_err();
    assert_eq!(r.code, code::ROUND_NOT_COMPLETE);
    let mut none = || None;
    let r = e
        .play_on(&mut st, &mut none, &mut Script::default())
        .unwrap_err();
    assert_eq!(r.code, code::CARDS_EXHAUSTED);
}

#[test]
fn a_reopened_round_is_the_round_freshly_opened_for_the_same_bets() {
    let p = plan("synot-blackjack");
    let e = engine(&p);
    let mut ann = seat(1, "ann", 1_000);
    ann.bets.push(BlackjackBet {
        bet: "top_3".into(),
        stake_minor: 100,
    });
    ann.bets_behind.push(BetBehindBet {
        player: "bob".into(),
        stake_minor: 1_000,
    });
    let setup = RoundSetup {
        positions: vec![ann],
    };
    let mut shoe = cards("8c 6d 8h Ts 3c 9d Kc 7c").into_iter();
    let mut script = Script::new([
        Some(Decision::Split),
        Some(Decision::Double),
        Some(Decision::Stand),
    ]);
    let (mut st, _) = e
        .play_round(&setup, &mut || shoe.next(), &mut script)
        .unwrap();
    assert_ne!(st, e.open_round(&setup).unwrap());
    e.reopen_round(&mut st);
    assert_eq!(st, e.open_round(&setup).unwrap());
}
