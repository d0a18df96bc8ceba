//! The roulette plans against "002", sections Roulette (Evolution), Roulette (SYNOT
//! Interactive) and ROULETTE (Absolute live gaming).

use crate::source::{assert_limits_match_002, plan, ratio};

/// "Výplatní tabulka": the same inside and outside ratios in every roulette section.
fn assert_standard_roulette_payouts(key: &str) {
    let p = plan(key);
    for (bet, r) in [
        ("straight", (35, 1)),
        ("split", (17, 1)),
        ("street", (11, 1)),
        ("corner", (8, 1)),
        ("line", (5, 1)),
        ("dozen", (2, 1)),
        ("column", (2, 1)),
        ("red_black", (1, 1)),
        ("even_odd", (1, 1)),
        ("low_high", (1, 1)),
    ] {
        assert_eq!(ratio(&p, bet, "win"), r, "{key}: {bet}");
    }
}

/// 002 › Roulette (Evolution) › Tabulka nejvyšších sázek a odvislých nejvyšších výher.
#[test]
fn evolution_roulette_limits_are_the_documents() {
    assert_limits_match_002(&plan("evolution-roulette@1"), "Roulette (Evolution)");
}

/// 002 › Roulette (Evolution) › Výplatní tabulka.
#[test]
fn evolution_roulette_payouts_are_the_documents() {
    assert_standard_roulette_payouts("evolution-roulette@1");
}

/// 002 › Roulette (Evolution) › Pravidlo platného roztočení rulety.
#[test]
fn evolution_roulette_valid_spin_needs_three_revolutions_against_rotation() {
    let p = plan("evolution-roulette@1");
    let pitboss::plan::rules::GameRules::Roulette(r) = &p.plan.rules else {
        panic!("roulette rules")
    };
    assert!(r.valid_spin.ball_against_rotation);
    assert_eq!(r.valid_spin.min_ball_revolutions, 3);
    let n = r.neighbours.as_ref().expect("Evolution offers Neighbours");
    assert_eq!((n.min_each_side, n.max_each_side), (0, 9));
}
