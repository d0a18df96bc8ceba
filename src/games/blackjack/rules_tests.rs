//! Rules of the blackjack plans, each checked on chosen cards against the real plans.

use super::testing::*;
use super::*;
use crate::cards::Card;
use crate::plan::model::Plan;

fn engine(p: &Plan) -> BlackjackEngine<'_> {
    BlackjackEngine::new(p).expect("a blackjack plan")
}

fn hand(s: &str) -> Hand {
    Hand {
        cards: cards(s),
        ..Hand::default()
    }
}

fn stood(s: &str) -> Hand {
    Hand {
        stood: true,
        ..hand(s)
    }
}

fn split_hand(s: &str) -> Hand {
    Hand {
        from_split: true,
        ..hand(s)
    }
}

/// A split hand the player stood on.
fn split_stood(s: &str) -> Hand {
    Hand {
        stood: true,
        ..split_hand(s)
    }
}

fn refused(e: &BlackjackEngine, hands: &[Hand], at: usize, d: Decision) -> Refusal {
    e.check_decision(hands, at, d)
        .expect_err(&format!("{d:?} on {hands:?} is refused"))
}

fn one_box(main: i64, hands: Vec<Hand>) -> BoxPlay {
    BoxPlay {
        main_stake_minor: main,
        hands,
        insurance_stake_minor: None,
    }
}

fn settle(e: &BlackjackEngine, play: &BoxPlay, dealer: &str) -> Settlement {
    e.settle_box(play, &cards(dealer))
        .unwrap_or_else(|r| panic!("settles: {r}"))
}

fn deal(player: &str, dealer: &str) -> SideBetDeal {
    let p = cards(player);
    SideBetDeal {
        player_first_two: [p[0], p[1]],
        dealer: cards(dealer),
    }
}

/// (outcome, win) of side bet `id` with a stake of 100 minor units.
fn side(e: &BlackjackEngine, id: &str, player: &str, dealer: &str) -> (String, i64) {
    let s = e
        .settle_side_bet(id, 100, &deal(player, dealer))
        .unwrap_or_else(|r| panic!("{id} on {player} / {dealer}: {r}"));
    (s.payout.outcome, s.payout.win_minor)
}

// --- Hand values -------------------------------------------------------------------------

#[test]
fn aces_count_eleven_unless_that_busts_the_hand() {
    let p = plan("evolution-blackjack");
    let e = engine(&p);
    let v = |s: &str| e.value(&cards(s));
    assert_eq!(
        v("Ac 6d"),
        HandValue {
            total: 17,
            soft: true
        }
    );
    assert_eq!(
        v("Ac 6d Th"),
        HandValue {
            total: 17,
            soft: false
        }
    );
    assert_eq!(
        v("Ac Ad"),
        HandValue {
            total: 12,
            soft: true
        }
    );
    assert_eq!(
        v("Ac Ad Ah As 7c"),
        HandValue {
            total: 21,
            soft: true
        }
    );
    assert_eq!(
        v("Kc Qd"),
        HandValue {
            total: 20,
            soft: false
        }
    );
    assert_eq!(
        v("Jc 2d Ah"),
        HandValue {
            total: 13,
            soft: false
        }
    );
    assert!(v("Tc 6d 6h").is_bust());
    assert!(!v("Tc 6d 5h").is_bust());
}

#[test]
fn czech_two_aces_count_12_and_each_ace_stays_free_to_count_1() {
    // "dvě esa mají součet 12 (11+1)", read with "podle vlastního uvážení za 1 nebo za 11".
    for id in ["czech-blackjack", "czech-blackjack-strict"] {
        let p = plan(id);
        let e = engine(&p);
        assert_eq!(e.value(&cards("Ac Ad")).total, 12, "{id}");
        assert_eq!(
            e.value(&cards("Ac Ad Kh")),
            HandValue {
                total: 12,
                soft: false
            }
        );
        assert_eq!(
            e.value(&cards("Ac Ad 9h")),
            HandValue {
                total: 21,
                soft: true
            }
        );
        assert_eq!(e.value(&cards("Ac Ad 9h 5c")).total, 16);
    }
}

#[test]
fn blackjack_is_an_ace_and_a_ten_value_card_as_the_first_two_cards() {
    let p = plan("evolution-blackjack");
    let e = engine(&p);
    for bj in ["Ac Kd", "Kd Ac", "As Th", "Jh Ad", "Qc As"] {
        assert!(e.is_blackjack(&hand(bj)), "{bj}");
    }
    for not in ["7c 7d 7h", "Ac 5d 5h", "Ac 9d", "Tc Kd"] {
        assert!(!e.is_blackjack(&hand(not)), "{not}");
    }
}

#[test]
fn a_split_hands_ace_and_ten_is_21_not_blackjack_in_every_plan() {
    for id in PLANS {
        let p = plan(id);
        let e = engine(&p);
        assert!(!e.is_blackjack(&split_hand("Ac Kd")), "{id}");
        assert!(e.is_blackjack(&hand("Ac Kd")), "{id}");
    }
}

// --- Decisions -----------------------------------------------------------------------------

#[test]
fn split_aces_receive_one_card_each() {
    let p = plan("evolution-blackjack");
    let e = engine(&p);
    let mut hands = vec![hand("Ac Ad")];
    e.apply_decision(&mut hands, 0, Decision::Split).unwrap();
    assert_eq!(hands, vec![split_hand("Ac"), split_hand("Ad")]);
    assert_eq!(e.hand_status(&hands, 0).unwrap(), HandStatus::AwaitingCard);
    assert_eq!(
        refused(&e, &hands, 0, Decision::Stand).code,
        code::AWAITING_CARD
    );
    e.add_card(&mut hands, 0, card("5h")).unwrap();
    assert_eq!(
        e.hand_status(&hands, 0).unwrap(),
        HandStatus::Finished(HandEnd::SplitAceOneCard)
    );
    let r = refused(&e, &hands, 0, Decision::Hit);
    assert_eq!(r.code, code::SPLIT_ACES_ONE_CARD);
    assert_eq!(r.clause.as_deref(), Some(e.rules().split.clause.as_str()));
    assert!(e.add_card(&mut hands, 0, card("2c")).is_err());
    // The next card goes to the second ace; then the player is done.
    assert_eq!(e.next_hand(&hands), Some((1, HandStatus::AwaitingCard)));
    e.add_card(&mut hands, 1, card("9h")).unwrap();
    assert_eq!(e.next_hand(&hands), None);
}

#[test]
fn czech_split_aces_are_played_on_without_the_optional_one_card_rule() {
    let p = plan("czech-blackjack");
    let e = engine(&p);
    let hands = vec![split_hand("Ac 5d"), split_hand("Ah")];
    assert_eq!(
        e.legal_decisions(&hands, 0),
        vec![Decision::Hit, Decision::Stand, Decision::Double]
    );
    // "Pouze jedna karta na rozdělené eso" is on in the strict plan.
    let p = plan("czech-blackjack-strict");
    let e = engine(&p);
    assert_eq!(e.legal_decisions(&hands, 0), vec![]);
    assert_eq!(
        refused(&e, &hands, 0, Decision::Hit).code,
        code::SPLIT_ACES_ONE_CARD
    );
}

#[test]
fn single_deck_splits_into_four_hands_and_resplits_aces() {
    let p = plan("single-deck-blackjack");
    let e = engine(&p);
    let mut hands = vec![hand("8c 8d")];
    e.apply_decision(&mut hands, 0, Decision::Split).unwrap();
    e.add_card(&mut hands, 0, card("8h")).unwrap();
    e.apply_decision(&mut hands, 0, Decision::Split).unwrap();
    e.add_card(&mut hands, 0, card("8s")).unwrap();
    e.apply_decision(&mut hands, 0, Decision::Split).unwrap();
    assert_eq!(hands.len(), 4);
    e.add_card(&mut hands, 0, card("8c")).unwrap();
    assert_eq!(
        refused(&e, &hands, 0, Decision::Split).code,
        code::MAX_HANDS_REACHED
    );
    // Aces: "resplit_aces = true", and split aces are played on (aces_one_card = false).
    let mut hands = vec![hand("Ac Ad")];
    e.apply_decision(&mut hands, 0, Decision::Split).unwrap();
    e.add_card(&mut hands, 0, card("Ah")).unwrap();
    e.apply_decision(&mut hands, 0, Decision::Split).unwrap();
    assert_eq!(hands.len(), 3);
    // No double after a split in this game.
    e.add_card(&mut hands, 0, card("6h")).unwrap();
    assert_eq!(
        refused(&e, &hands, 0, Decision::Double).code,
        code::DOUBLE_AFTER_SPLIT_NOT_ALLOWED
    );
}

#[test]
fn split_aces_may_not_be_split_again_where_the_plan_forbids_it() {
    // No real plan allows three hands without re-splitting aces: widen the single deck's.
    let mut p = plan("single-deck-blackjack");
    let crate::plan::rules::GameRules::Blackjack(r) = &mut p.rules else {
        unreachable!()
    };
    r.split.resplit_aces = Some(false);
    let e = engine(&p);
    let hands = vec![split_hand("Ac Ah"), split_hand("Ad")];
    assert_eq!(
        refused(&e, &hands, 0, Decision::Split).code,
        code::RESPLIT_ACES_NOT_ALLOWED
    );
    e.check_decision(&[split_hand("8c 8h"), split_hand("8d")], 0, Decision::Split)
        .unwrap();
}

#[test]
fn one_split_only_where_the_plan_allows_two_hands() {
    for id in [
        "evolution-blackjack",
        "synot-blackjack",
        "alg-blackjack",
        "czech-blackjack",
    ] {
        let p = plan(id);
        let e = engine(&p);
        let hands = vec![split_hand("8c 8h"), split_hand("8d")];
        assert_eq!(
            refused(&e, &hands, 0, Decision::Split).code,
            code::MAX_HANDS_REACHED,
            "{id}"
        );
    }
}

#[test]
fn ten_value_cards_are_a_pair_by_value() {
    let p = plan("evolution-blackjack");
    let e = engine(&p);
    e.check_decision(&[hand("Jc Qd")], 0, Decision::Split)
        .unwrap();
    e.check_decision(&[hand("Tc Kd")], 0, Decision::Split)
        .unwrap();
    let r = refused(&e, &[hand("8c 9d")], 0, Decision::Split);
    assert_eq!(r.code, code::NOT_A_PAIR);
    assert!(
        r.message.contains("8c") && r.message.contains("9d"),
        "{}",
        r.message
    );
}

#[test]
fn czech_strict_forbids_splitting_ten_value_cards() {
    // "Zákaz split na desítku".
    let p = plan("czech-blackjack-strict");
    let e = engine(&p);
    for pair in ["Jc Qd", "Kc Kd", "Tc Th"] {
        let r = refused(&e, &[hand(pair)], 0, Decision::Split);
        assert_eq!(r.code, code::TEN_VALUE_SPLIT_NOT_ALLOWED, "{pair}");
    }
    e.check_decision(&[hand("9c 9d")], 0, Decision::Split)
        .unwrap();
    let p = plan("czech-blackjack");
    engine(&p)
        .check_decision(&[hand("Jc Qd")], 0, Decision::Split)
        .unwrap();
}

#[test]
fn split_and_double_need_the_first_two_cards() {
    let p = plan("evolution-blackjack");
    let e = engine(&p);
    let three = [hand("2c 3d 4h")];
    assert_eq!(
        refused(&e, &three, 0, Decision::Double).code,
        code::DOUBLE_FIRST_TWO_CARDS_ONLY
    );
    assert_eq!(
        refused(&e, &[hand("4c 4d 4h")], 0, Decision::Split).code,
        code::SPLIT_FIRST_TWO_CARDS_ONLY
    );
}

#[test]
fn no_double_after_split_in_evolution() {
    // "nemůže již v rámci rozdělených hand zvolit možnost Zdvojnásobit".
    for id in [
        "evolution-blackjack",
        "evolution-infinite-blackjack",
        "czech-blackjack-strict",
    ] {
        let p = plan(id);
        let e = engine(&p);
        let hands = vec![split_hand("9c 2h"), split_hand("9d")];
        let r = refused(&e, &hands, 0, Decision::Double);
        assert_eq!(r.code, code::DOUBLE_AFTER_SPLIT_NOT_ALLOWED, "{id}");
        assert_eq!(r.clause.as_deref(), Some(e.rules().double.clause.as_str()));
        e.check_decision(&[hand("9c 2h")], 0, Decision::Double)
            .unwrap();
    }
}

#[test]
fn double_after_split_in_alg_synot_and_czech() {
    for id in [
        "alg-blackjack",
        "alg-blackjack-endless",
        "synot-blackjack",
        "synot-all-bets-blackjack",
        "czech-blackjack",
    ] {
        let p = plan(id);
        let e = engine(&p);
        let hands = vec![split_hand("9c 2h"), split_hand("9d")];
        e.check_decision(&hands, 0, Decision::Double)
            .unwrap_or_else(|r| panic!("{id}: {r}"));
    }
}

#[test]
fn czech_strict_doubles_only_on_9_10_or_11() {
    // "Omezení double … pouze při součtu 9, 10 nebo 11".
    let p = plan("czech-blackjack-strict");
    let e = engine(&p);
    for ok in ["5c 4d", "6c 4d", "6c 5d", "9c 2d"] {
        e.check_decision(&[hand(ok)], 0, Decision::Double)
            .unwrap_or_else(|r| panic!("{ok}: {r}"));
    }
    // A soft 19 counts 19 ("A hand's total is its best total").
    for no in ["5c 3d", "Tc 2d", "Ac 8d", "Ac 9d"] {
        let r = refused(&e, &[hand(no)], 0, Decision::Double);
        assert_eq!(r.code, code::DOUBLE_TOTAL_NOT_ALLOWED, "{no}");
    }
    let p = plan("czech-blackjack");
    engine(&p)
        .check_decision(&[hand("Tc 2d")], 0, Decision::Double)
        .unwrap();
}

#[test]
fn a_doubled_hand_takes_one_card_and_ends() {
    let p = plan("evolution-blackjack");
    let e = engine(&p);
    let mut hands = vec![hand("5c 6d")];
    e.apply_decision(&mut hands, 0, Decision::Double).unwrap();
    assert_eq!(e.hand_status(&hands, 0).unwrap(), HandStatus::AwaitingCard);
    e.add_card(&mut hands, 0, card("2h")).unwrap();
    assert_eq!(
        e.hand_status(&hands, 0).unwrap(),
        HandStatus::Finished(HandEnd::Doubled)
    );
    assert_eq!(
        refused(&e, &hands, 0, Decision::Hit).code,
        code::HAND_FINISHED
    );
}

#[test]
fn no_hit_on_21_or_after_a_bust() {
    let p = plan("evolution-blackjack");
    let e = engine(&p);
    for (h, end) in [
        ("7c 7d 7h", HandEnd::TwentyOne),
        ("Ac Kd", HandEnd::TwentyOne),
        ("Tc 6d 6h", HandEnd::Bust),
    ] {
        assert_eq!(
            e.hand_status(&[hand(h)], 0).unwrap(),
            HandStatus::Finished(end),
            "{h}"
        );
        assert_eq!(
            refused(&e, &[hand(h)], 0, Decision::Hit).code,
            code::HAND_FINISHED
        );
    }
    assert_eq!(
        refused(&e, &[hand("Tc 6d")], 1, Decision::Hit).code,
        code::NO_SUCH_HAND
    );
}

#[test]
fn surrender_is_offered_only_as_the_first_decision() {
    // "Funkce Surrender je nabídnuta pouze jednou, během prvního kola voleb".
    for id in [
        "evolution-blackjack",
        "evolution-infinite-blackjack",
        "synot-blackjack",
        "synot-all-bets-blackjack",
        "alg-blackjack",
    ] {
        let p = plan(id);
        let e = engine(&p);
        e.check_decision(&[hand("Tc 6d")], 0, Decision::Surrender)
            .unwrap_or_else(|r| panic!("{id}: {r}"));
        for hands in [
            vec![hand("Tc 2d 4h")],
            vec![split_hand("8c 8d"), split_hand("8h 3c")],
        ] {
            let r = refused(&e, &hands, 0, Decision::Surrender);
            assert_eq!(r.code, code::SURRENDER_FIRST_DECISION_ONLY, "{id}");
        }
    }
}

#[test]
fn surrender_is_not_offered_on_a_blackjack() {
    let p = plan("evolution-blackjack");
    let e = engine(&p);
    let r = refused(&e, &[hand("Ac Kd")], 0, Decision::Surrender);
    assert_eq!(r.code, code::SURRENDER_NOT_WITH_BLACKJACK);
    assert_eq!(
        r.clause.as_deref(),
        Some(e.rules().surrender.clause.as_str())
    );
}

#[test]
fn no_surrender_where_the_plan_offers_none() {
    for id in [
        "alg-blackjack-endless",
        "czech-blackjack",
        "czech-blackjack-strict",
        "single-deck-blackjack",
    ] {
        let p = plan(id);
        let e = engine(&p);
        let r = refused(&e, &[hand("Tc 6d")], 0, Decision::Surrender);
        assert_eq!(r.code, code::SURRENDER_NOT_OFFERED, "{id}");
        assert_eq!(r.plan.as_deref(), Some(p.key().as_str()));
    }
}

#[test]
fn a_split_hand_awaits_its_second_card_before_any_decision() {
    let p = plan("czech-blackjack");
    let e = engine(&p);
    let mut hands = vec![hand("9c 9d")];
    e.apply_decision(&mut hands, 0, Decision::Split).unwrap();
    for d in Decision::ALL {
        assert_eq!(refused(&e, &hands, 1, d).code, code::AWAITING_CARD);
    }
}

// --- Insurance -----------------------------------------------------------------------------

#[test]
fn insurance_is_half_the_main_bet_on_a_dealer_ace() {
    let p = plan("evolution-blackjack");
    let e = engine(&p);
    let h = [hand("Tc 6d")];
    e.check_insurance(card("Ah"), &h, 10_000, 5_000, Insurer::Box, false)
        .unwrap();
    let cases = [
        (
            card("Kh"),
            5_000,
            Insurer::Box,
            false,
            code::INSURANCE_NEEDS_DEALER_ACE,
        ),
        (
            card("Ah"),
            4_000,
            Insurer::Box,
            false,
            code::INSURANCE_STAKE,
        ),
        (
            card("Ah"),
            5_000,
            Insurer::Box,
            true,
            code::INSURANCE_NOT_FOR_DISCONNECTED,
        ),
    ];
    for (up, stake, who, disc, c) in cases {
        let r = e
            .check_insurance(up, &h, 10_000, stake, who, disc)
            .unwrap_err();
        assert_eq!(r.code, c);
        assert_eq!(
            r.clause.as_deref(),
            Some(e.rules().insurance.clause.as_str())
        );
    }
    let r = e
        .check_insurance(
            card("Ah"),
            &[hand("Tc 2d 3h")],
            10_000,
            5_000,
            Insurer::Box,
            false,
        )
        .unwrap_err();
    assert_eq!(r.code, code::INSURANCE_AFTER_DECISIONS);
}

#[test]
fn insurance_on_an_odd_main_bet_is_rounded_by_the_plan() {
    // 101 haléřů / 2 = 50.5, rounded half up.
    let p = plan("evolution-blackjack");
    let e = engine(&p);
    let h = [hand("Tc 6d")];
    e.check_insurance(card("Ah"), &h, 101, 51, Insurer::Box, false)
        .unwrap();
    let r = e
        .check_insurance(card("Ah"), &h, 101, 50, Insurer::Box, false)
        .unwrap_err();
    assert_eq!(r.code, code::INSURANCE_STAKE);
}

#[test]
fn bet_behind_insurance_only_where_the_plan_offers_it() {
    let h = [hand("Tc 6d")];
    for (id, ok) in [
        ("evolution-blackjack", true),
        ("alg-blackjack", true),
        ("synot-blackjack", false),
    ] {
        let p = plan(id);
        let r =
            engine(&p).check_insurance(card("Ah"), &h, 10_000, 5_000, Insurer::BetBehind, false);
        match (ok, r) {
            (true, Ok(())) => {}
            (false, Err(r)) => assert_eq!(r.code, code::INSURANCE_NOT_FOR_BET_BEHIND),
            (_, r) => panic!("{id}: {r:?}"),
        }
    }
}

#[test]
fn single_deck_insurance_may_be_less_than_half_and_czech_has_none() {
    let h = [hand("Tc 6d")];
    let p = plan("single-deck-blackjack");
    let e = engine(&p);
    e.check_insurance(card("Ah"), &h, 10_000, 2_000, Insurer::Box, false)
        .unwrap();
    let r = e
        .check_insurance(card("Ah"), &h, 10_000, 5_001, Insurer::Box, false)
        .unwrap_err();
    assert_eq!(r.code, code::INSURANCE_STAKE);
    let p = plan("czech-blackjack");
    let r = engine(&p)
        .check_insurance(card("Ah"), &h, 10_000, 5_000, Insurer::Box, false)
        .unwrap_err();
    assert_eq!(r.code, code::INSURANCE_NOT_OFFERED);
}

// --- The automatic decision ----------------------------------------------------------------

#[test]
fn timeout_hits_on_11_and_stands_on_12_in_evolution() {
    for id in ["evolution-blackjack", "evolution-infinite-blackjack"] {
        let p = plan(id);
        let e = engine(&p);
        let auto = |s: &str| e.automatic_decision(&[hand(s)], 0).unwrap();
        assert_eq!(auto("5c 6d"), Decision::Hit, "{id}");
        assert_eq!(auto("2c 3d"), Decision::Hit, "{id}");
        assert_eq!(auto("7c 5d"), Decision::Stand, "{id}");
        // A soft 16 is 16, above 11: stand.
        assert_eq!(auto("Ac 5d"), Decision::Stand, "{id}");
        // Never a double or a split for an absent player.
        assert_eq!(auto("5c 5d"), Decision::Hit, "{id}");
        assert_eq!(auto("8c 8d"), Decision::Stand, "{id}");
    }
}

#[test]
fn timeout_stands_in_the_other_plans() {
    for id in [
        "alg-blackjack",
        "alg-blackjack-endless",
        "synot-blackjack",
        "synot-all-bets-blackjack",
        "czech-blackjack",
        "czech-blackjack-strict",
        "single-deck-blackjack",
    ] {
        let p = plan(id);
        let e = engine(&p);
        assert_eq!(
            e.automatic_decision(&[hand("2c 3d")], 0).unwrap(),
            Decision::Stand,
            "{id}"
        );
    }
}

#[test]
fn timeout_decides_only_a_hand_that_awaits_a_decision() {
    let p = plan("evolution-blackjack");
    let e = engine(&p);
    let r = e.automatic_decision(&[stood("5c 6d")], 0).unwrap_err();
    assert_eq!(r.code, code::HAND_FINISHED);
    let r = e
        .automatic_decision(&[split_hand("5c"), split_hand("5d")], 0)
        .unwrap_err();
    assert_eq!(r.code, code::AWAITING_CARD);
}

// --- Settlement ----------------------------------------------------------------------------

#[test]
fn blackjack_pays_3_to_2_rounded_half_up_on_odd_stakes() {
    let p = plan("evolution-blackjack");
    let e = engine(&p);
    let s = settle(&e, &one_box(101, vec![hand("Ac Kd")]), "Tc 7d");
    assert_eq!(s.results, vec![HandResult::Blackjack]);
    // 101 × 3/2 = 151.5 haléřů → 152.
    assert_eq!(s.stakes[0].payout.win_minor, 152);
    assert_eq!(s.stakes[0].payout.returned_minor, 101);
    assert_eq!(s.stakes[0].payout.outcome, "blackjack");
    let s = settle(&e, &one_box(20_000, vec![hand("Ac Kd")]), "Tc 7d");
    assert_eq!(s.total_minor(), 50_000);
}

#[test]
fn blackjack_against_a_dealer_blackjack_is_a_push() {
    for id in PLANS {
        let p = plan(id);
        let e = engine(&p);
        let s = settle(&e, &one_box(10_000, vec![hand("Ac Kd")]), "Kh Ad");
        assert_eq!(s.results, vec![HandResult::Push], "{id}");
        assert_eq!(s.total_minor(), 10_000, "{id}");
    }
}

#[test]
fn winning_hands_pay_1_to_1_and_ties_return_the_stake() {
    let p = plan("synot-blackjack");
    let e = engine(&p);
    let cases = [
        ("Tc 9d", "Tc 7d", HandResult::Win, 20_000),
        ("Tc 7h", "Tc 7d", HandResult::Push, 10_000),
        ("Tc 6h", "Tc 7d", HandResult::Lose, 0),
        ("Tc 6h", "Tc 6d Th", HandResult::Win, 20_000),
    ];
    for (player, dealer, result, credited) in cases {
        let s = settle(&e, &one_box(10_000, vec![stood(player)]), dealer);
        assert_eq!(s.results, vec![result], "{player} / {dealer}");
        assert_eq!(s.total_minor(), credited, "{player} / {dealer}");
    }
}

#[test]
fn czech_player_bust_loses_even_if_dealer_busts() {
    // "Hráč, který je „trop“, vždy prohrává a to i tehdy, pokud je „trop“ i bankéř".
    for id in PLANS {
        let p = plan(id);
        let e = engine(&p);
        let s = settle(&e, &one_box(10_000, vec![hand("Tc 6d 8h")]), "6c Td 9h");
        assert_eq!(s.results, vec![HandResult::Lose], "{id}");
        assert_eq!(s.total_minor(), 0, "{id}");
    }
}

#[test]
fn dealer_blackjack_beats_a_21_of_three_cards() {
    for id in ["evolution-blackjack", "czech-blackjack"] {
        let p = plan(id);
        let e = engine(&p);
        let s = settle(&e, &one_box(10_000, vec![hand("7c 7d 7h")]), "Ac Kd");
        assert_eq!(s.results, vec![HandResult::LoseToDealerBlackjack], "{id}");
        assert_eq!(s.total_minor(), 0);
    }
}

#[test]
fn doubled_hands_win_and_lose_both_stakes() {
    let p = plan("evolution-blackjack");
    let e = engine(&p);
    let doubled = Hand {
        doubled: true,
        ..hand("5c 6d 9h")
    };
    let s = settle(&e, &one_box(10_000, vec![doubled.clone()]), "Tc 7d");
    assert_eq!(s.staked_minor(), 20_000);
    assert_eq!(s.total_minor(), 40_000);
    assert_eq!(s.stakes[1].bet, "double");
    let s = settle(&e, &one_box(10_000, vec![doubled.clone()]), "Tc Td");
    assert_eq!(s.total_minor(), 20_000);
    let s = settle(&e, &one_box(10_000, vec![doubled]), "Tc 6d 5h");
    assert_eq!(s.total_minor(), 0);
}

#[test]
fn dealer_blackjack_revealed_after_the_players_takes_doubles_and_splits() {
    // dealer_blackjack_takes = "all_stakes" in every plan without a peek.
    for id in ["evolution-blackjack", "synot-blackjack", "alg-blackjack"] {
        let p = plan(id);
        let e = engine(&p);
        let doubled = Hand {
            doubled: true,
            ..hand("5c 6d 9h")
        };
        let s = settle(&e, &one_box(10_000, vec![doubled]), "Ac Kd");
        assert_eq!(s.total_minor(), 0, "{id}");
        let hands = vec![split_stood("8c Td"), split_stood("8d Th")];
        let s = settle(&e, &one_box(10_000, hands), "Ac Kd");
        assert_eq!(s.staked_minor(), 20_000);
        assert_eq!(s.total_minor(), 0, "{id}");
    }
}

#[test]
fn czech_dealer_blackjack_drawn_after_the_players_takes_every_stake() {
    // One dealer card in the first pass; his second card, drawn after the players, makes it.
    let p = plan("czech-blackjack");
    let e = engine(&p);
    let doubled = Hand {
        doubled: true,
        ..hand("5c 6d Th")
    };
    let s = settle(&e, &one_box(10_000, vec![doubled]), "Ac Kd");
    assert_eq!(s.results, vec![HandResult::LoseToDealerBlackjack]);
    assert_eq!(s.total_minor(), 0);
}

#[test]
fn original_stake_only_returns_doubles_and_splits_to_a_dealer_blackjack() {
    let mut p = plan("evolution-blackjack");
    let crate::plan::rules::GameRules::Blackjack(r) = &mut p.rules else {
        unreachable!()
    };
    r.blackjack.dealer_blackjack_takes =
        Some(crate::plan::rules::blackjack::DealerBlackjackTakes::OriginalStakeOnly);
    let e = engine(&p);
    let hands = vec![
        split_stood("8c Td"),
        Hand {
            doubled: true,
            ..split_stood("8d 3h 9c")
        },
    ];
    // No double after split in this plan: build the play as if it had one.
    let s = e
        .settle_box(&one_box(10_000, hands), &cards("Ac Kd"))
        .unwrap();
    // Main lost; split and its double returned.
    assert_eq!(s.total_minor(), 20_000);
}

#[test]
fn single_deck_dealer_blackjack_at_the_peek_ends_the_round() {
    let p = plan("single-deck-blackjack");
    let e = engine(&p);
    let play = BoxPlay {
        main_stake_minor: 10_000,
        hands: vec![hand("9c 7d")],
        insurance_stake_minor: Some(5_000),
    };
    let s = settle(&e, &play, "Ac Kd");
    assert_eq!(s.results, vec![HandResult::LoseToDealerBlackjack]);
    // The main bet lost, the insurance paid 2:1 with its stake back.
    assert_eq!(s.total_minor(), 15_000);
    // A peek on a ten finds the dealer's blackjack too; no insurance on a ten.
    let s = settle(&e, &one_box(10_000, vec![hand("9c 7d")]), "Kd Ac");
    assert_eq!(s.total_minor(), 0);
    // Where the dealer does not peek, an unplayed hand cannot be settled.
    let p = plan("evolution-blackjack");
    let r = engine(&p)
        .settle_box(&one_box(10_000, vec![hand("9c 7d")]), &cards("Ac Kd"))
        .unwrap_err();
    assert_eq!(r.code, code::PLAY_INVALID);
}

#[test]
fn insurance_pays_2_to_1_on_a_dealer_blackjack_and_loses_otherwise() {
    let p = plan("evolution-blackjack");
    let e = engine(&p);
    let play = |h: Hand| BoxPlay {
        main_stake_minor: 10_000,
        hands: vec![h],
        insurance_stake_minor: Some(5_000),
    };
    let s = settle(&e, &play(stood("Tc 9d")), "Ac Kd");
    assert_eq!(s.stakes[1].bet, "insurance");
    assert_eq!(s.stakes[1].payout.win_minor, 10_000);
    assert_eq!(s.total_minor(), 15_000);
    let s = settle(&e, &play(stood("Tc 9d")), "Ac 7d");
    assert_eq!(s.stakes[1].payout.total_minor(), 0);
    assert_eq!(s.total_minor(), 20_000);
    let r = e
        .settle_box(&play(stood("Tc 9d")), &cards("Kc 7d"))
        .unwrap_err();
    assert_eq!(r.code, code::PLAY_INVALID);
}

#[test]
fn split_hands_settle_each_against_the_dealer_at_1_to_1() {
    let p = plan("evolution-blackjack");
    let e = engine(&p);
    let hands = vec![split_stood("8c Td"), split_stood("8d 3h 9c")];
    let s = settle(&e, &one_box(10_000, hands), "Tc 9d");
    assert_eq!(s.results, vec![HandResult::Lose, HandResult::Win]);
    assert_eq!((&*s.stakes[0].bet, &*s.stakes[1].bet), ("main", "split"));
    assert_eq!(s.total_minor(), 20_000);
    // A split ace and a ten is 21, paid 1:1.
    let hands = vec![split_hand("Ac Kd"), split_hand("Ad 5c")];
    let s = settle(&e, &one_box(10_000, hands), "Tc 9d");
    assert_eq!(s.results, vec![HandResult::Win, HandResult::Lose]);
    assert_eq!(s.stakes[0].payout.win_minor, 10_000);
}

#[test]
fn surrender_returns_half_the_main_bet_even_against_a_dealer_blackjack() {
    let p = plan("synot-blackjack");
    let e = engine(&p);
    let surrendered = Hand {
        surrendered: true,
        ..hand("Tc 6d")
    };
    for dealer in ["Tc 7d", "Ac Kd"] {
        let s = settle(&e, &one_box(101, vec![surrendered.clone()]), dealer);
        assert_eq!(s.results, vec![HandResult::Surrendered]);
        // 101 / 2 = 50.5 haléřů → 51.
        assert_eq!(s.stakes[0].payout.returned_minor, 51);
        assert_eq!(s.stakes[0].payout.outcome, "surrender");
    }
}

#[test]
fn unfinished_hands_and_broken_dealer_hands_are_not_settled() {
    let p = plan("evolution-blackjack");
    let e = engine(&p);
    let r = e
        .settle_box(&one_box(10_000, vec![hand("Tc 6d")]), &cards("Tc 7d"))
        .unwrap_err();
    assert_eq!(r.code, code::PLAY_INVALID);
    let r = e
        .settle_box(&one_box(10_000, vec![stood("Tc 6d")]), &cards("Tc 7d 2c"))
        .unwrap_err();
    assert_eq!(r.code, code::DEALER_HAND_INVALID);
    let three = vec![
        split_stood("8c Td"),
        split_stood("8d Th"),
        split_stood("8h Tc"),
    ];
    let r = e
        .settle_box(&one_box(10_000, three), &cards("Tc 7d"))
        .unwrap_err();
    assert_eq!(r.code, code::PLAY_INVALID);
}

#[test]
fn common_hand_players_settle_on_the_cards_that_count_for_them() {
    // Infinite Blackjack: both share 9 3; the first stood, the second hit and took the 8.
    // Cards dealt after a player stood count nothing for him: his hand stays 9 3.
    let p = plan("evolution-infinite-blackjack");
    let e = engine(&p);
    let dealer = "Tc 7d";
    let s = settle(&e, &one_box(10_000, vec![stood("9c 3d")]), dealer);
    assert_eq!(s.results, vec![HandResult::Lose]);
    let s = settle(&e, &one_box(10_000, vec![stood("9c 3d 8h")]), dealer);
    assert_eq!(s.results, vec![HandResult::Win]);
}

#[test]
fn bet_behind_follows_the_box_and_is_paid_3_to_2_on_a_blackjack() {
    let p = plan("evolution-blackjack");
    let e = engine(&p);
    let owner = one_box(10_000, vec![hand("Ac Kd")]);
    let bb = BetBehind {
        stake_minor: 2_001,
        split_funded: false,
        doubles_funded: vec![],
        insurance_stake_minor: None,
    };
    let s = e.settle_bet_behind(&owner, &bb, &cards("Tc 7d")).unwrap();
    assert_eq!(s.stakes[0].bet, "bet_behind");
    assert_eq!(s.stakes[0].payout.outcome, "blackjack");
    // 2 001 × 3/2 = 3 001.5 → 3 002.
    assert_eq!(s.stakes[0].payout.win_minor, 3_002);
}

#[test]
fn bet_behind_unfunded_double_rides_the_doubled_hand_with_its_single_stake() {
    let p = plan("evolution-blackjack");
    let e = engine(&p);
    let owner = one_box(
        10_000,
        vec![Hand {
            doubled: true,
            ..hand("5c 6d 9h")
        }],
    );
    let mut bb = BetBehind {
        stake_minor: 1_000,
        split_funded: false,
        doubles_funded: vec![],
        insurance_stake_minor: None,
    };
    let s = e.settle_bet_behind(&owner, &bb, &cards("Tc 7d")).unwrap();
    assert_eq!(s.staked_minor(), 1_000);
    assert_eq!(s.total_minor(), 2_000);
    bb.doubles_funded = vec![0];
    let s = e.settle_bet_behind(&owner, &bb, &cards("Tc 7d")).unwrap();
    assert_eq!(s.staked_minor(), 2_000);
    assert_eq!(s.total_minor(), 4_000);
}

#[test]
fn bet_behind_unfunded_split_plays_the_right_hand_hand_only() {
    // "hraje pouze s jednou částí rozdělených karet, konkrétně s tou na pravé straně".
    let p = plan("synot-blackjack");
    let e = engine(&p);
    let owner = one_box(10_000, vec![split_stood("8c Td"), split_stood("8d 3h 9c")]);
    let mut bb = BetBehind {
        stake_minor: 1_000,
        split_funded: false,
        doubles_funded: vec![],
        insurance_stake_minor: None,
    };
    let s = e.settle_bet_behind(&owner, &bb, &cards("Tc 9d")).unwrap();
    assert_eq!(s.results, vec![HandResult::Lose]);
    assert_eq!(s.total_minor(), 0);
    bb.split_funded = true;
    let s = e.settle_bet_behind(&owner, &bb, &cards("Tc 9d")).unwrap();
    assert_eq!(s.results, vec![HandResult::Lose, HandResult::Win]);
    assert_eq!(
        (&*s.stakes[0].bet, &*s.stakes[1].bet),
        ("bet_behind", "split")
    );
    assert_eq!(s.total_minor(), 2_000);
}

#[test]
fn bet_behind_surrender_and_insurance_follow_the_plan() {
    let p = plan("evolution-blackjack");
    let e = engine(&p);
    let owner = one_box(
        10_000,
        vec![Hand {
            surrendered: true,
            ..hand("Tc 6d")
        }],
    );
    let bb = BetBehind {
        stake_minor: 1_001,
        split_funded: false,
        doubles_funded: vec![],
        insurance_stake_minor: Some(501),
    };
    let s = e.settle_bet_behind(&owner, &bb, &cards("Ac Kd")).unwrap();
    // Half of 1 001 back (500.5 → 501), and the insurance 2:1.
    assert_eq!(s.stakes[0].payout.returned_minor, 501);
    assert_eq!(s.stakes[1].payout.win_minor, 1_002);
    let p = plan("synot-blackjack");
    let r = engine(&p)
        .settle_bet_behind(&owner, &bb, &cards("Ac Kd"))
        .unwrap_err();
    assert_eq!(r.code, code::INSURANCE_NOT_FOR_BET_BEHIND);
}

#[test]
fn a_win_above_the_plans_max_win_is_an_error_not_capped() {
    let mut p = plan("evolution-blackjack");
    p.bets.iter_mut().find(|b| b.id == "main").unwrap().max_win = 29_999_999;
    let e = engine(&p);
    let r = e
        .settle_box(&one_box(20_000_000, vec![hand("Ac Kd")]), &cards("Tc 7d"))
        .unwrap_err();
    assert_eq!(r.code, code::MAX_WIN_EXCEEDED);
    assert!(r.clause.is_some());
}

#[test]
fn every_plans_maximum_stakes_win_within_its_maximum_win() {
    for id in PLANS {
        let p = plan(id);
        let e = engine(&p);
        let main = p.bet("main").unwrap().max_bet;
        // The blackjack is the main bet's best win: exactly its maximum in every plan.
        let s = settle(&e, &one_box(main, vec![hand("Ac Kd")]), "Tc 7d");
        assert_eq!(
            s.stakes[0].payout.win_minor,
            p.bet("main").unwrap().max_win,
            "{id}"
        );
        for sb in &e.rules().side_bets {
            let row = p.bet(&sb.id).unwrap();
            for pay in p.payouts_for(&sb.id).filter(|r| r.ratio.is_some()) {
                e.pay(&sb.id, &pay.outcome, row.max_bet, None)
                    .unwrap_or_else(|r| panic!("{id} {}/{}: {r}", sb.id, pay.outcome));
            }
        }
    }
}

#[test]
fn settlements_read_back_from_json_are_the_same() {
    let p = plan("evolution-blackjack");
    let e = engine(&p);
    let play = one_box(10_000, vec![split_stood("8c Td"), split_stood("8d 3h 9c")]);
    let json = serde_json::to_string(&play).unwrap();
    let back: BoxPlay = serde_json::from_str(&json).unwrap();
    assert_eq!(back, play);
    let s = settle(&e, &back, "Tc 9d");
    let again: Settlement = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
    assert_eq!(again, s);
}

// --- Side bets -----------------------------------------------------------------------------

#[test]
fn perfect_pairs_pay_25_12_and_6_by_the_kind_of_pair() {
    for (id, bet) in [
        ("evolution-blackjack", "perfect_pairs"),
        ("alg-blackjack-endless", "perfect_pairs"),
        ("synot-blackjack", "player_pair"),
    ] {
        let p = plan(id);
        let e = engine(&p);
        assert_eq!(
            side(&e, bet, "Qs Qs", "Tc"),
            ("perfect_pair".into(), 2_500),
            "{id}"
        );
        assert_eq!(
            side(&e, bet, "2d 2h", "Tc"),
            ("coloured_pair".into(), 1_200),
            "{id}"
        );
        assert_eq!(
            side(&e, bet, "Th Tc", "Tc"),
            ("mixed_pair".into(), 600),
            "{id}"
        );
        assert_eq!(side(&e, bet, "Jh Qh", "Tc"), ("lose".into(), 0), "{id}");
    }
}

#[test]
fn dealer_pair_is_decided_on_the_dealers_first_two_cards() {
    let p = plan("synot-blackjack");
    let e = engine(&p);
    assert_eq!(
        side(&e, "dealer_pair", "2c 9d", "Kh Kh"),
        ("perfect_pair".into(), 2_500)
    );
    assert_eq!(
        side(&e, "dealer_pair", "2c 2d", "Kh Qh"),
        ("lose".into(), 0)
    );
    let r = e
        .settle_side_bet("dealer_pair", 100, &deal("2c 9d", "Kh"))
        .unwrap_err();
    assert_eq!(r.code, code::CARDS_MISSING);
}

#[test]
fn twenty_one_plus_three_pays_each_poker_hand() {
    let p = plan("evolution-blackjack");
    let e = engine(&p);
    let cases = [
        ("Qh Qh", "Qh", "suited_trips", 10_000),
        ("Td Jd", "Qd", "straight_flush", 4_000),
        ("Kh Kd", "Kc", "three_of_a_kind", 3_000),
        ("2s 3c", "4h", "straight", 1_000),
        ("Ac 2d", "3h", "straight", 1_000),
        ("Qc Kd", "Ah", "straight", 1_000),
        ("2c 6c", "Tc", "flush", 500),
        ("Kc Ad", "2h", "lose", 0),
        ("Kc Kd", "2h", "lose", 0),
    ];
    for (player, dealer, outcome, win) in cases {
        assert_eq!(
            side(&e, "twenty_one_plus_three", player, dealer),
            (outcome.into(), win),
            "{player} {dealer}"
        );
    }
}

#[test]
fn endless_21_plus_3_three_of_a_kind_pays_25_to_1() {
    let p = plan("alg-blackjack-endless");
    let e = engine(&p);
    assert_eq!(
        side(&e, "twenty_one_plus_three", "Kh Kd", "Kc"),
        ("three_of_a_kind".into(), 2_500)
    );
    let p = plan("alg-blackjack");
    assert_eq!(
        side(&engine(&p), "twenty_one_plus_three", "Kh Kd", "Kc"),
        ("three_of_a_kind".into(), 3_000)
    );
}

#[test]
fn top_3_pays_suited_trips_straight_flush_and_trips_only() {
    for id in ["synot-blackjack", "synot-all-bets-blackjack"] {
        let p = plan(id);
        let e = engine(&p);
        assert_eq!(
            side(&e, "top_3", "Qh Qh", "Qh"),
            ("suited_trips".into(), 27_000)
        );
        assert_eq!(
            side(&e, "top_3", "Td Jd", "Qd"),
            ("straight_flush".into(), 18_000)
        );
        assert_eq!(
            side(&e, "top_3", "Kh Kd", "Kc"),
            ("three_of_a_kind".into(), 9_000)
        );
        assert_eq!(side(&e, "top_3", "2s 3c", "4h"), ("lose".into(), 0));
        assert_eq!(side(&e, "top_3", "2c 6c", "Tc"), ("lose".into(), 0));
    }
}

#[test]
fn hot_3_pays_777_suited_21_unsuited_21_20_and_19() {
    let p = plan("evolution-infinite-blackjack");
    let e = engine(&p);
    let cases = [
        ("7h 7c", "7d", "seven_seven_seven", 10_000),
        ("7h 7h", "7h", "seven_seven_seven", 10_000),
        ("9d 2d", "Td", "suited_21", 2_000),
        ("9h 2d", "Ts", "unsuited_21", 400),
        ("Ah Ad", "9s", "unsuited_21", 400),
        ("8h 2d", "Ts", "total_20", 200),
        ("8h 2d", "9s", "total_19", 100),
        ("8h 2d", "8s", "lose", 0),
        ("Th Td", "5s", "lose", 0),
    ];
    for (player, dealer, outcome, win) in cases {
        assert_eq!(
            side(&e, "hot_3", player, dealer),
            (outcome.into(), win),
            "{player} {dealer}"
        );
    }
}

#[test]
fn lucky_lucky_pays_777_678_and_totals_of_19_to_21() {
    let p = plan("synot-all-bets-blackjack");
    let e = engine(&p);
    let cases = [
        ("7s 7s", "7s", "suited_777", 20_000),
        ("6h 8h", "7h", "suited_678", 10_000),
        ("7s 7d", "7h", "unsuited_777", 5_000),
        ("6s 7d", "8h", "unsuited_678", 2_500),
        ("9d 2d", "Td", "suited_21", 1_500),
        ("9h 2d", "Ts", "unsuited_21", 300),
        ("Kh Qd", "Ts", "lose", 0),
        ("8h 2h", "Th", "any_20", 200),
        ("8h 2d", "9s", "any_19", 200),
        ("8h 2d", "8s", "lose", 0),
    ];
    for (player, dealer, outcome, win) in cases {
        assert_eq!(
            side(&e, "lucky_lucky", player, dealer),
            (outcome.into(), win),
            "{player} {dealer}"
        );
    }
}

/// Dealer hands standing-legal under "stand on all 17" that bust with 3 … 8 cards.
const BUSTS: [(&str, usize); 6] = [
    ("Tc 6d 9h", 3),
    ("Tc 2d 2h Th", 4),
    ("2c 2d 2h Tc Th", 5),
    ("2c 2d 2h 2s 6c Tc", 6),
    ("2c 2d 2h 2s 3c 3d Tc", 7),
    ("2c 2d 2h 2s 3c 3d 2h Tc", 8),
];

#[test]
fn bust_it_pays_by_the_dealers_number_of_cards() {
    let p = plan("evolution-infinite-blackjack");
    let e = engine(&p);
    let wins = [100, 200, 900, 5_000, 10_000, 25_000];
    for ((dealer, n), win) in BUSTS.iter().zip(wins) {
        let (_, w) = side(&e, "bust_it", "Tc 9d", dealer);
        assert_eq!(w, win, "{n} cards");
    }
    assert_eq!(side(&e, "bust_it", "Tc 9d", "Tc 7d"), ("lose".into(), 0));
    // A dealer hand that is not finished decides nothing.
    let r = e
        .settle_side_bet("bust_it", 100, &deal("Tc 9d", "Tc 5d"))
        .unwrap_err();
    assert_eq!(r.code, code::DEALER_HAND_INVALID);
}

#[test]
fn bust_it_is_returned_on_a_player_blackjack() {
    let p = plan("evolution-infinite-blackjack");
    let e = engine(&p);
    for dealer in ["Tc 7d", "Tc 6d 9h"] {
        let s = e
            .settle_side_bet("bust_it", 100, &deal("Ac Kd", dealer))
            .unwrap();
        assert_eq!(s.payout.outcome, "player_blackjack");
        assert_eq!((s.payout.returned_minor, s.payout.win_minor), (100, 0));
    }
}

#[test]
fn buster_is_enhanced_with_a_player_blackjack_on_7_and_8_cards() {
    let p = plan("synot-all-bets-blackjack");
    let e = engine(&p);
    let plain = [200, 200, 400, 1_800, 5_000, 25_000];
    let with_bj = [200, 200, 400, 1_800, 80_000, 200_000];
    for (((dealer, n), w), wbj) in BUSTS.iter().zip(plain).zip(with_bj) {
        assert_eq!(side(&e, "buster", "Tc 9d", dealer).1, w, "{n} cards");
        assert_eq!(
            side(&e, "buster", "Ac Kd", dealer).1,
            wbj,
            "{n} cards, player blackjack"
        );
    }
    assert_eq!(
        side(&e, "buster", "Ac Kd", BUSTS[5].0).0,
        "bust_8_plus_cards_with_player_blackjack"
    );
    assert_eq!(side(&e, "buster", "Ac Kd", "Tc 8d").0, "lose");
}

#[test]
fn side_bets_the_plan_does_not_offer_are_refused() {
    let p = plan("evolution-blackjack");
    let e = engine(&p);
    for id in ["hot_3", "bust_it", "top_3", "lucky_lucky"] {
        let r = e
            .settle_side_bet(id, 100, &deal("7h 7c", "7d"))
            .unwrap_err();
        assert_eq!(r.code, code::NOT_OFFERED, "{id}");
    }
    let p = plan("czech-blackjack");
    let r = engine(&p)
        .settle_side_bet("perfect_pairs", 100, &deal("7h 7c", "7d"))
        .unwrap_err();
    assert_eq!(r.code, code::NOT_OFFERED);
}

#[test]
fn shuffled_shoe_is_the_plans_shoe() {
    for id in [
        "single-deck-blackjack",
        "czech-blackjack",
        "evolution-blackjack",
    ] {
        let p = plan(id);
        let e = engine(&p);
        let shoe: Vec<Card> = shuffled_shoe(e.rules().shoe, [3; 32]);
        assert_eq!(shoe.len(), e.rules().shoe.total_cards(), "{id}");
    }
}
