//! The roulette plans against "002", sections Roulette (Evolution), Roulette (SYNOT
//! Interactive) and ROULETTE (Absolute live gaming).

use std::collections::BTreeSet;

use pitboss::money::Ratio;
use pitboss::plan::model::{CancelScope, CancelSettlement};
use pitboss::plan::rules::roulette::{
    complete_bet_components, covered_numbers, is_valid_layout, AnnouncedBet, CompositeLimits,
    InvalidSpin, RouletteRules, Spot, WHEEL_ORDER,
};
use pitboss::plan::rules::GameRules;
use pitboss::plan::LoadedPlan;

use crate::source::{assert_limits_match_002, plan, ratio, section_002};

const EVOLUTION: (&str, &str) = ("evolution-roulette@1", "Roulette (Evolution)");
const SYNOT: (&str, &str) = ("synot-roulette@1", "Roulette (SYNOT Interactive)");
const ALG: (&str, &str) = ("alg-roulette@1", "ROULETTE (Absolute live gaming)");
const ALL: [(&str, &str); 3] = [EVOLUTION, SYNOT, ALG];

fn rules(p: &LoadedPlan) -> &RouletteRules {
    let GameRules::Roulette(r) = &p.plan.rules else {
        panic!("{}: roulette rules", p.key())
    };
    r
}

/// The rows of a section's "Výplatní tabulka": a name, a description and a ratio such as
/// `35:1`, tab-separated.
fn payout_rows(section: &str) -> Vec<(String, Ratio)> {
    section
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('\t').map(str::trim).collect();
            match cells.as_slice() {
                [name, _, r] if !name.is_empty() => {
                    r.parse::<Ratio>().ok().map(|r| (name.to_string(), r))
                }
                _ => None,
            }
        })
        .collect()
}

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

/// Every payout row of the plan is a row of the section's payout table (same name, same
/// ratio), and every row of that table is in the plan.
fn assert_payouts_match_the_payout_table((key, heading): (&str, &str)) {
    let p = plan(key);
    let rows = payout_rows(&section_002(heading));
    assert_eq!(rows.len(), 10, "{heading}: ten payout rows in the document");
    for (name, r) in &rows {
        let row = p
            .plan
            .payouts
            .iter()
            .find(|x| x.label.as_deref() == Some(name.as_str()))
            .unwrap_or_else(|| panic!("{key}: no payout row labelled {name:?}"));
        assert_eq!(row.ratio, Some(*r), "{key}: {name}");
    }
    assert_eq!(p.plan.payouts.len(), rows.len(), "{key}: extra payout rows");
}

/// The numbers an announced bet covers and the units it places.
fn coverage(a: &AnnouncedBet) -> (BTreeSet<u8>, u32) {
    let mut covered = BTreeSet::new();
    for c in &a.components {
        let numbers = covered_numbers(&c.bet, &Spot::Numbers(c.numbers.clone()))
            .unwrap_or_else(|| panic!("{}: {:?} is not a {}", a.id, c.numbers, c.bet));
        covered.extend(numbers);
    }
    (
        covered,
        a.components.iter().map(|c| u32::from(c.units)).sum(),
    )
}

/// The numbers of the wheel from `from` to `to` clockwise, both included.
fn arc(from: u8, to: u8) -> BTreeSet<u8> {
    let at = |n: u8| {
        WHEEL_ORDER
            .iter()
            .position(|&x| x == n)
            .expect("on the wheel")
    };
    let (a, b) = (at(from), at(to));
    let len = if b >= a { b - a + 1 } else { b + 37 - a + 1 };
    (0..len).map(|i| WHEEL_ORDER[(a + i) % 37]).collect()
}

// ---- Roulette (Evolution) -------------------------------------------------------------------

/// 002 › Roulette (Evolution) › Tabulka nejvyšších sázek a odvislých nejvyšších výher.
#[test]
fn evolution_roulette_limits_are_the_documents() {
    assert_limits_match_002(&plan(EVOLUTION.0), EVOLUTION.1);
}

/// 002 › Roulette (Evolution) › Výplatní tabulka.
#[test]
fn evolution_roulette_payouts_are_the_documents() {
    assert_standard_roulette_payouts(EVOLUTION.0);
    assert_payouts_match_the_payout_table(EVOLUTION);
}

/// 002 › Roulette (Evolution) › Pravidlo platného roztočení rulety; Racetrack ("lze nastavit
/// od 0 do 9").
#[test]
fn evolution_roulette_valid_spin_needs_three_revolutions_against_rotation() {
    let p = plan(EVOLUTION.0);
    let r = rules(&p);
    assert!(r.valid_spin.ball_against_rotation);
    assert_eq!(r.valid_spin.min_ball_revolutions, 3);
    assert_eq!(r.valid_spin.on_invalid, InvalidSpin::Respin);
    let n = r.neighbours.as_ref().expect("Evolution offers Neighbours");
    assert_eq!((n.min_each_side, n.max_each_side), (0, 9));
    assert!(section_002(EVOLUTION.1).contains("lze nastavit od 0 do 9"));
    assert!(r.complete_bet.is_none());
}

// ---- Roulette (SYNOT Interactive) -----------------------------------------------------------

/// 002 › Roulette (SYNOT Interactive) › Tabulka nejvyšších sázek a odvislých nejvyšších výher.
#[test]
fn synot_roulette_limits_are_the_documents() {
    assert_limits_match_002(&plan(SYNOT.0), SYNOT.1);
}

/// 002 › Roulette (SYNOT Interactive) › Tabulka nejvyšších sázek: the outside bets are lower
/// than Evolution's ("65 000,00 Kč" for Dozen and Column, "100 000,00 Kč" for the even-money
/// bets), the inside bets the same.
#[test]
fn synot_roulette_outside_bets_have_lower_limits() {
    let (s, e) = (plan(SYNOT.0), plan(EVOLUTION.0));
    let limits = |p: &LoadedPlan, id: &str| {
        let b = p.plan.bet(id).expect("bet");
        (b.max_bet, b.max_win, b.max_win_plus_stake)
    };
    for id in ["dozen", "column"] {
        assert_eq!(limits(&s, id), (6_500_000, 13_000_000, 19_500_000), "{id}");
    }
    for id in ["even_odd", "red_black", "low_high"] {
        assert_eq!(limits(&s, id), (10_000_000, 10_000_000, 20_000_000), "{id}");
    }
    for id in ["straight", "split", "street", "corner", "line"] {
        assert_eq!(limits(&s, id), limits(&e, id), "{id}");
    }
}

/// 002 › Roulette (SYNOT Interactive) › Výplatní tabulka.
#[test]
fn synot_roulette_payouts_are_the_documents() {
    assert_standard_roulette_payouts(SYNOT.0);
    assert_payouts_match_the_payout_table(SYNOT);
}

/// 002 › Roulette (SYNOT Interactive) › Pravidlo platného roztočení rulety; Racetrack
/// (neighbours offered without a range: an assumption).
#[test]
fn synot_roulette_valid_spin_needs_three_revolutions_against_rotation() {
    let p = plan(SYNOT.0);
    let r = rules(&p);
    assert!(r.valid_spin.ball_against_rotation);
    assert_eq!(r.valid_spin.min_ball_revolutions, 3);
    assert_eq!(r.valid_spin.on_invalid, InvalidSpin::Respin);
    assert!(r.neighbours.is_some());
    assert!(!section_002(SYNOT.1).contains("0 do 9"));
    assert!(p.plan.assumption("rules.roulette.neighbours").is_some());
    assert!(r.complete_bet.is_none());
}

// ---- ROULETTE (Absolute live gaming) --------------------------------------------------------

/// 002 › ROULETTE (Absolute live gaming) › Tabulka nejvyšších sázek a odvislých nejvyšších
/// výher.
#[test]
fn alg_roulette_limits_are_the_documents() {
    assert_limits_match_002(&plan(ALG.0), ALG.1);
}

/// 002 › ROULETTE (Absolute live gaming) › Výplatní tabulka.
#[test]
fn alg_roulette_payouts_are_the_documents() {
    assert_standard_roulette_payouts(ALG.0);
    assert_payouts_match_the_payout_table(ALG);
}

/// 002 › ROULETTE (Absolute live gaming) › Základní informace: the section has no valid-spin
/// rule of its own; the ball goes against the rotation, the rest is an assumption.
#[test]
fn alg_roulette_valid_spin_is_assumed_from_the_other_roulette_sections() {
    let p = plan(ALG.0);
    let r = rules(&p);
    assert!(r.valid_spin.ball_against_rotation);
    assert_eq!(r.valid_spin.min_ball_revolutions, 3);
    assert_eq!(r.valid_spin.on_invalid, InvalidSpin::Respin);
    assert!(p
        .plan
        .assumption("rules.roulette.valid_spin.min_ball_revolutions")
        .is_some());
    assert!(p
        .plan
        .assumption("rules.roulette.valid_spin.on_invalid")
        .is_some());
}

/// 002 › ROULETTE (Absolute live gaming) › Racetrack › Neighbours: "Počet sousedících čísel si
/// může sázející zvolit v rozsahu 0–9."
#[test]
fn alg_roulette_neighbours_range_from_0_to_9() {
    let p = plan(ALG.0);
    let n = rules(&p)
        .neighbours
        .as_ref()
        .expect("ALG offers Neighbours");
    assert_eq!((n.min_each_side, n.max_each_side), (0, 9));
    assert!(section_002(ALG.1).contains("v rozsahu 0–9"));
}

/// 002 › ROULETTE (Absolute live gaming) › Herní funkce: "režim kompletních sázek … straight,
/// split 2 žetony, street 3 žetony, corner 4 žetony, six line 6 žetonů zahrnujících dané
/// číslo … podle limitů konkrétního typu sázky".
#[test]
fn alg_roulette_complete_bet_places_every_inside_bet_on_the_number() {
    let p = plan(ALG.0);
    let r = rules(&p);
    let cb = r.complete_bet.as_ref().expect("ALG offers complete bets");
    let units: Vec<(&str, u8)> = cb.units.iter().map(|(b, u)| (b.as_str(), *u)).collect();
    assert_eq!(
        units,
        [
            ("corner", 4),
            ("line", 6),
            ("split", 2),
            ("straight", 1),
            ("street", 3)
        ]
    );
    assert!(cb.several_numbers);
    assert_eq!(r.composite_limits, CompositeLimits::EachComponent);
    let on_17 = complete_bet_components(17, &cb.units);
    assert_eq!(on_17.len(), 12);
    assert_eq!(on_17.iter().map(|c| u32::from(c.units)).sum::<u32>(), 40);
    assert!(p
        .plan
        .assumption("rules.roulette.complete_bet.units")
        .is_some());
}

/// 002 › ROULETTE (Absolute live gaming) › Řešení chyb: "aktuální hra bude přerušena a provede
/// se pokus o opravu … Pokud nebude možné hru opravit, bude zrušena a sázející obdrží žetony
/// ve výši své původní sázky."
#[test]
fn alg_roulette_error_interrupts_repairs_or_cancels_with_stakes_returned() {
    let p = plan(ALG.0);
    let e = &p.plan.policies.error;
    assert!(e.pause_and_repair);
    assert!(e.reconstruction_before_cancel);
    assert_eq!(e.cancel_scope, CancelScope::AllPlayers);
    assert_eq!(e.on_cancel, CancelSettlement::RefundStakes);
}

/// 002 › ROULETTE (Absolute live gaming) › Řešení chyb: "stůl může být uzavřen bez předchozího
/// oznámení. V takovém případě sázející obdrží žetony ve výši své původní sázky." Only this
/// roulette section says so.
#[test]
fn alg_roulette_table_closed_without_notice_returns_stakes() {
    for (key, heading) in ALL {
        let p = plan(key);
        let says_so = section_002(heading).contains("uzavřen bez předchozího oznámení");
        match &p.plan.policies.table_closure {
            Some(t) => {
                assert!(says_so, "{key}: table closure not in {heading}");
                assert_eq!(t.without_notice, CancelSettlement::RefundStakes);
            }
            None => assert!(!says_so, "{key}: {heading} closes tables without notice"),
        }
    }
    assert!(plan(ALG.0).plan.policies.table_closure.is_some());
}

/// 002 › ROULETTE (Absolute live gaming): the section has no "Zásady odpojení/ztráty
/// připojení"; placed bets standing is an assumption there, and the document's word in the
/// other two.
#[test]
fn disconnected_players_bets_stand_by_the_document_or_an_assumption() {
    for (key, heading) in ALL {
        let p = plan(key);
        assert!(p.plan.policies.disconnect.placed_bets_stand, "{key}");
        let in_document = section_002(heading).contains("Zásady odpojení/ztráty připojení");
        let assumed = p
            .plan
            .assumption("policies.disconnect.placed_bets_stand")
            .is_some();
        assert_ne!(
            in_document, assumed,
            "{key}: document or assumption, not both"
        );
    }
}

// ---- Rules shared by the three sections -----------------------------------------------------

/// Each section's "Pravidlo platného roztočení rulety", where it has one; otherwise the plan
/// records the valid-spin rule as an assumption.
#[test]
fn valid_spin_rule_is_the_documents_or_an_assumption() {
    for (key, heading) in ALL {
        let p = plan(key);
        let in_document = section_002(heading).contains("Pravidlo platného roztočení rulety");
        let assumed = p
            .plan
            .assumption("rules.roulette.valid_spin.min_ball_revolutions")
            .is_some();
        assert_ne!(in_document, assumed, "{key}");
    }
}

/// Racetrack: "(Sázky Tier, Orphelins, Voisins, Zero)" in every section, each component a
/// valid bet on the layout.
#[test]
fn announced_bets_are_tier_orphelins_voisins_zero_of_valid_components() {
    for (key, heading) in ALL {
        let p = plan(key);
        assert!(section_002(heading).contains("(Sázky Tier, Orphelins, Voisins, Zero)"));
        let r = rules(&p);
        let ids: Vec<&str> = r.announced.iter().map(|a| a.id.as_str()).collect();
        assert_eq!(ids, ["tier", "orphelins", "voisins", "zero"], "{key}");
        for a in &r.announced {
            for c in &a.components {
                assert!(
                    is_valid_layout(&c.bet, &c.numbers),
                    "{key}: {} {:?} in {}",
                    c.bet,
                    c.numbers,
                    a.id
                );
            }
        }
        assert!(
            p.plan.assumption("rules.roulette.announced").is_some(),
            "{key}"
        );
    }
}

/// The announced bets cover the sectors of the wheel they are named after: Voisins du zéro the
/// 17 numbers from 22 to 25 (9 units), Tiers du cylindre the 12 opposite 0 from 27 to 33 (6
/// units), Orphelins the 8 left over (5 units), Jeu zéro the 7 from 12 to 15 (4 units).
#[test]
fn announced_bets_cover_their_sectors_of_the_wheel() {
    for (key, _) in ALL {
        let p = plan(key);
        let r = rules(&p);
        let get = |id: &str| {
            coverage(
                r.announced
                    .iter()
                    .find(|a| a.id == id)
                    .unwrap_or_else(|| panic!("{key}: {id}")),
            )
        };
        let (voisins, tier, orphelins, zero) =
            (get("voisins"), get("tier"), get("orphelins"), get("zero"));
        assert_eq!(voisins, (arc(22, 25), 9), "{key}: voisins");
        assert_eq!(tier, (arc(27, 33), 6), "{key}: tier");
        assert_eq!(zero, (arc(12, 15), 4), "{key}: zero");
        let rest: BTreeSet<u8> = (0..=36)
            .filter(|n| !voisins.0.contains(n) && !tier.0.contains(n))
            .collect();
        assert_eq!(orphelins, (rest, 5), "{key}: orphelins");
        assert_eq!(orphelins.0.len(), 8);
    }
}

/// Racetrack bets have no row in any limits table: each component is held to its own bet
/// type's limits (a document rule for ALG's complete bets, an assumption elsewhere).
#[test]
fn composite_bets_are_limited_component_by_component() {
    for (key, _) in ALL {
        let p = plan(key);
        assert_eq!(rules(&p).composite_limits, CompositeLimits::EachComponent);
        assert!(
            p.plan
                .assumption("rules.roulette.composite_limits")
                .is_some(),
            "{key}"
        );
    }
}

/// "Usazení ke stolu" / "Výplatní tabulka": a single-zero wheel of 37 numbers.
#[test]
fn every_roulette_plan_uses_a_single_zero_wheel() {
    for (key, heading) in ALL {
        assert_eq!(rules(&plan(key)).pockets, 37);
        assert!(section_002(heading).contains("rozděleno na 37 obarvených a očíslovaných dílů"));
    }
}
