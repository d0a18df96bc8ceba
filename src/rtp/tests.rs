use super::*;
use crate::cards::Card;
use crate::games::casino_holdem::CasinoHoldemEngine;
use crate::games::poker_hand;

fn plan(id: &str) -> Plan {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("game_plans");
    crate::plan::registry::load_file(
        &dir.join(format!("{id}@1.toml")),
        Some(&dir.join("sources")),
    )
    .unwrap_or_else(|f| panic!("{id} loads: {f:?}"))
    .plan
}

fn exact_only() -> RtpConfig {
    RtpConfig { rounds: 0 }
}

#[test]
fn every_evolution_roulette_bet_type_returns_36_in_37() {
    let p = plan("evolution-roulette");
    let r = compute(&p, "h", &exact_only());
    let ids: Vec<&str> = r.rows.iter().map(|r| r.bet.as_str()).collect();
    for b in &p.bets {
        assert!(ids.contains(&b.id.as_str()), "{} has no row", b.id);
    }
    for id in ["tier", "orphelins", "voisins", "zero", "neighbours"] {
        assert!(ids.contains(&id), "{id} has no row: {ids:?}");
    }
    for row in &r.rows {
        assert_eq!(row.method, Method::Exact, "{}", row.bet);
        assert_eq!(row.fraction.as_deref(), Some("36/37"), "{}", row.bet);
        assert_eq!(format!("{:.2}", row.rtp.unwrap() * 100.0), "97.30");
    }
    assert!(flags(&p, &r).is_empty());
}

#[test]
fn alg_roulette_complete_bets_return_36_in_37_on_every_number() {
    let r = compute(&plan("alg-roulette"), "h", &exact_only());
    let complete = r.row("complete").expect("ALG offers complete bets");
    assert_eq!(complete.fraction.as_deref(), Some("36/37"));
    assert!(complete.note.as_deref().unwrap().contains("37 placements"));
}

/// The side bets' returns counted the plain way: every five-card hand ranked and priced by
/// the plan's rows, independently of the engine's settlement.
fn side_bet_oracle(p: &Plan, bet: &str) -> Fraction {
    use crate::games::casino_holdem::{meets, razz_outcome};
    use crate::games::poker_hand::LowHand;
    use crate::plan::rules::casino_holdem::outcome_classes;
    let GameRules::CasinoHoldem(rules) = &p.rules else {
        unreachable!()
    };
    let deck = poker_hand::deck();
    // Per unit staked, in 1/denominator units of the ratios.
    let (mut num, mut hands) = (0u128, 0u128);
    let price = |ratio: Option<crate::money::Ratio>| -> (u128, u128) {
        ratio.map_or((0, 1), |q| {
            (
                u128::from(q.numerator() + q.denominator()),
                u128::from(q.denominator()),
            )
        })
    };
    let mut den = 1u128;
    for p_ in &p.payouts {
        if let Some(q) = p_.ratio {
            den = den.max(u128::from(q.denominator()));
        }
    }
    for a in 0..52 {
        for b in a + 1..52 {
            for c in b + 1..52 {
                for d in c + 1..52 {
                    for e in d + 1..52 {
                        let five: [Card; 5] = [deck[a], deck[b], deck[c], deck[d], deck[e]];
                        hands += 1;
                        let ratio = if bet == CASINO_RAZZ_ID {
                            let rz = rules.casino_razz.as_ref().unwrap();
                            let low = LowHand::of(&five).unwrap();
                            let loses = rz.losing_ranks.iter().any(|r| low.contains(r.0))
                                || (rz.paired_hands_lose && low.is_paired());
                            if loses {
                                None
                            } else {
                                p.payouts_for(bet)
                                    .find(|r| r.outcome == razz_outcome(&low))
                                    .and_then(|r| r.ratio)
                            }
                        } else {
                            let fb = rules.flop_bonus.as_ref().unwrap();
                            let h = poker_hand::evaluate(&five).unwrap();
                            if meets(h, &fb.min_hand) {
                                p.payouts_for(bet)
                                    .find(|r| outcome_classes(&r.outcome).contains(&h.class()))
                                    .and_then(|r| r.ratio)
                            } else {
                                None
                            }
                        };
                        let (n, d_) = price(ratio);
                        num += n * (den / d_);
                    }
                }
            }
        }
    }
    Fraction::new(num, hands * den).unwrap()
}

const CASINO_RAZZ_ID: &str = "casino_razz";

#[test]
fn casino_holdem_side_bets_are_exact_and_agree_with_a_plain_count() {
    let synot = plan("synot-casino-holdem");
    let side = holdem::exact_side_bets(&synot).unwrap();
    let razz = side.iter().find(|(b, _)| b == CASINO_RAZZ_ID).unwrap().1;
    assert_eq!(razz.to_string(), "147403/324870");
    assert_eq!(razz, side_bet_oracle(&synot, CASINO_RAZZ_ID));
    let aa = side.iter().find(|(b, _)| b == "aa").unwrap().1;
    assert_eq!(aa, side_bet_oracle(&synot, "aa"));
    let evolution = plan("evolution-casino-holdem");
    let bonus = holdem::exact_side_bets(&evolution).unwrap();
    assert_eq!(bonus.len(), 1);
    assert_eq!(bonus[0].1, side_bet_oracle(&evolution, "bonus"));
}

#[test]
fn casino_razz_is_flagged_below_the_band_with_the_assumption_behind_it() {
    let p = plan("synot-casino-holdem");
    let r = compute(&p, "h", &exact_only());
    let f = flags(&p, &r);
    let razz = f
        .iter()
        .find(|f| f.row.bet == CASINO_RAZZ_ID)
        .expect("Razz flagged");
    assert!(razz.why.starts_with("below 85.00 %"), "{}", razz.why);
    let fields: Vec<&str> = razz.assumptions.iter().map(|a| a.field.as_str()).collect();
    assert!(
        fields.contains(&"rules.casino_holdem.casino_razz.losing_ranks"),
        "{fields:?}"
    );
    assert!(!fields.iter().any(|f| f.ends_with("min_bet")), "{fields:?}");
    let found = findings(&p, std::path::Path::new("x.toml"), &r);
    let text = found
        .iter()
        .map(|f| f.to_string())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(text.contains("45.3729 % (exact, 147403/324870)"), "{text}");
    assert!(text.contains("warning[rtp_out_of_band]"), "{text}");
}

#[test]
fn the_best_strategy_calls_strong_hands_and_folds_hopeless_ones() {
    let p = plan("evolution-casino-holdem");
    let engine = CasinoHoldemEngine::new(&p).unwrap();
    let mut s = holdem::tests_support::strategy(&engine, [1; 32]);
    let c = |t: &str| t.parse::<Card>().unwrap();
    // Trips and a high pair call.
    assert_eq!(
        s.decide(&[c("7H"), c("7S")], &[c("7D"), c("2C"), c("KH")]),
        crate::games::casino_holdem::Decision::Call
    );
    assert_eq!(
        s.decide(&[c("AH"), c("AS")], &[c("9D"), c("2C"), c("5H")]),
        crate::games::casino_holdem::Decision::Call
    );
    // 3-2 off suit under a K-Q-9 rainbow flop: no pair, no draw, low cards: fold.
    assert_eq!(
        s.decide(&[c("3H"), c("2S")], &[c("KD"), c("QC"), c("9H")]),
        crate::games::casino_holdem::Decision::Fold
    );
}

#[test]
fn the_strategys_priced_outcomes_are_the_engines_settlement() {
    for id in ["evolution-casino-holdem", "synot-casino-holdem"] {
        let p = plan(id);
        holdem::tests_support::check_prices(&p, 3000);
    }
}

#[test]
fn the_best_strategy_calls_about_four_hands_in_five_and_beats_always_calling() {
    let p = plan("evolution-casino-holdem");
    let (rows, calls) = holdem::simulate_best(&p, [4; 32], 4000).unwrap();
    let rate = calls.called as f64 / calls.hands as f64;
    assert!((0.7..0.92).contains(&rate), "called {rate}");
    assert_eq!(rows[0].bet, "ante");
    assert_eq!(rows[0].rounds, 4000);
    assert_eq!(rows[1].rounds, calls.called);
}

#[test]
fn a_simulated_figure_whose_interval_reaches_100_is_flagged() {
    let mut row = BetRtp::new("main", Some("main"), "Základní sázka", Method::Simulated);
    row.rtp = Some(0.9991);
    row.ci95 = Some([0.997, 1.0012]);
    row.rounds = Some(1_000_000);
    assert!(out_of_band(&row)
        .unwrap()
        .contains("interval reaches 100.00 %"));
    row.ci95 = Some([0.9984, 0.9998]);
    assert_eq!(out_of_band(&row), None);
    row.rtp = Some(1.0003);
    assert!(out_of_band(&row)
        .unwrap()
        .starts_with("at or above 100.00 %"));
}

#[test]
fn blackjack_rows_name_the_strategy_and_the_surrender_assumption_behind_the_main_bet() {
    let p = plan("synot-blackjack");
    let r = compute(&p, "h", &RtpConfig { rounds: 400 });
    let main = r.row("main").unwrap();
    assert_eq!(main.method, Method::Simulated);
    assert!(main
        .strategy
        .as_deref()
        .unwrap()
        .starts_with("basic strategy"));
    assert_eq!(main.rounds, Some(400));
    assert_eq!(r.row("split").unwrap().method, Method::CountedWith);
    assert_eq!(r.row("player_pair").unwrap().method, Method::Exact);
    let behind: Vec<&str> = assumptions_behind(&p, main)
        .iter()
        .map(|a| a.field.as_str())
        .collect();
    assert!(
        behind.contains(&"rules.blackjack.surrender.refund_kept_if_dealer_blackjack"),
        "{behind:?}"
    );
    assert!(!behind.contains(&"rules.blackjack.side_bets"), "{behind:?}");
    // The convergence series ends at the figure.
    let s = r.convergence.iter().find(|s| s.bet == "main").unwrap();
    assert_eq!(s.points.last().unwrap().rtp, main.rtp.unwrap());
    assert_eq!(s.points.len() as u64, SEGMENTS);
}

#[test]
fn every_committed_plan_has_a_report_without_unavailable_rows() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("game_plans");
    let (set, _) = crate::plan::PlanSet::load_dir(&dir);
    for p in set.iter() {
        if p.plan.plan.family == Family::CasinoHoldem {
            continue; // enumerated above; 2.6 M hands per plan is slow in a debug build
        }
        let r = compute(&p.plan, &p.hash, &RtpConfig { rounds: 40 });
        assert!(!r.rows.is_empty(), "{}", p.key());
        for row in &r.rows {
            assert_ne!(row.method, Method::Unavailable, "{}: {row:?}", p.key());
        }
        for b in &p.plan.bets {
            assert!(
                r.rows
                    .iter()
                    .any(|row| row.bet_type.as_deref() == Some(&b.id) || row.bet == b.id),
                "{}: no row for {}",
                p.key(),
                b.id
            );
        }
    }
}
