//! The dealt card games without seats against "002": Speed Baccarat, Baccarat (SYNOT), Top Card,
//! Casino Hold'em (Evolution) and Casino Hold'em (SYNOT).
//!
//! Each game is checked three ways: its limits against the document's limits table (parsed from
//! the document), every payout ratio written out here, and every payout row that cites a payout
//! sub-table against that table as the document prints it. The baccarat third-card rules are
//! compared cell by cell with the document's tables.

use pitboss::cards::Rank;
use pitboss::money::Ratio;
use pitboss::plan::model::AutoDecision;
use pitboss::plan::rules::baccarat::{BaccaratRules, CardMatch, Hand};
use pitboss::plan::rules::casino_holdem::{
    AnteWhenNotQualified, CallWhenNotQualified, CasinoHoldemRules, FlopBonusBet, HandClass,
    SideBetOnFold,
};
use pitboss::plan::rules::top_card::{Misdeal, Side, TopCardRules};
use pitboss::plan::rules::GameRules;
use pitboss::plan::LoadedPlan;

use crate::source::{assert_limits_match_002, plan, ratio, refund, section_002};

fn baccarat(p: &LoadedPlan) -> &BaccaratRules {
    let GameRules::Baccarat(r) = &p.plan.rules else {
        panic!("{}: baccarat rules", p.key())
    };
    r
}

fn top_card(p: &LoadedPlan) -> &TopCardRules {
    let GameRules::TopCard(r) = &p.plan.rules else {
        panic!("{}: top card rules", p.key())
    };
    r
}

fn holdem(p: &LoadedPlan) -> &CasinoHoldemRules {
    let GameRules::CasinoHoldem(r) = &p.plan.rules else {
        panic!("{}: casino hold'em rules", p.key())
    };
    r
}

fn cells(line: &str) -> Vec<&str> {
    line.split('\t').map(str::trim).collect()
}

fn is_page_header(line: &str) -> bool {
    let l = line.trim();
    l.starts_with('*') || l.starts_with("dle zákona")
}

/// The rows of a payout sub-table of a section as (label, ratio): the table headed `sub` that
/// follows the line `table`. Vertical tables are label/ratio lines; a horizontal table (the
/// baccarat main bets) is a header line of labels and one line of ratios.
fn document_payout_table(section: &str, table: &str, sub: &str) -> Vec<(String, Ratio)> {
    let heading = |l: &str| l.trim().trim_end_matches(':').trim().to_string();
    let lines: Vec<&str> = section.lines().collect();
    let top = lines
        .iter()
        .position(|l| heading(l) == table)
        .unwrap_or_else(|| panic!("no table {table:?} in the section"));
    let start = top
        + lines[top..]
            .iter()
            .position(|l| heading(l) == sub)
            .unwrap_or_else(|| panic!("no sub-table {sub:?} after {table:?}"));
    let body: Vec<&str> = lines[start + 1..]
        .iter()
        .copied()
        .filter(|l| !l.trim().is_empty() && !is_page_header(l))
        .collect();
    let first = cells(body[0]);
    if first.len() > 2 {
        // Horizontal: "Hra | Hráč | Remíza | Banker" then "Speed Baccarat | 1 : 1 | 8 : 1 | 0,95 : 1".
        let values = cells(body[1]);
        return first[1..]
            .iter()
            .zip(&values[1..])
            .map(|(l, v)| (l.to_string(), v.parse().expect("a ratio")))
            .collect();
    }
    let mut rows = Vec::new();
    for line in body {
        let c = cells(line);
        match (c.len(), c.get(1).and_then(|v| v.parse::<Ratio>().ok())) {
            (2, Some(r)) => rows.push((c[0].to_string(), r)),
            (2, None) if rows.is_empty() => {} // the column header
            _ => break,
        }
    }
    assert!(!rows.is_empty(), "sub-table {sub:?} has no rows");
    rows
}

/// Every winning payout row whose clause names a payout sub-table ("table › sub") has the ratio
/// that the document's sub-table gives its label.
fn assert_payouts_quote_the_document(p: &LoadedPlan, heading: &str) {
    let section = section_002(heading);
    let mut checked = 0;
    for row in &p.plan.payouts {
        let (Some(r), Some(label)) = (row.ratio, row.label.as_deref()) else {
            continue;
        };
        let Some((table, sub)) = row.clause.split_once(" › ") else {
            continue;
        };
        let doc = document_payout_table(&section, table, sub);
        let found = doc
            .iter()
            .find(|(l, _)| l == label)
            .unwrap_or_else(|| panic!("{}: {label:?} is not a row of {sub:?}: {doc:?}", p.key()));
        assert_eq!(
            found.1,
            r,
            "{}: {}/{} differs from the document's {sub:?}",
            p.key(),
            row.bet,
            row.outcome
        );
        checked += 1;
    }
    assert!(checked > 0, "{}: no payout row cites a sub-table", p.key());
}

// ---------------------------------------------------------------------------------------------
// Baccarat

/// What the rules make Banker do with `banker_total` when Player's third card counts
/// `player_third` points (`None`: Player stood). `None` for a natural (no card for anyone).
fn banker_draws(r: &BaccaratRules, banker_total: u8, player_third: Option<u8>) -> Option<bool> {
    if r.natural_totals.contains(&banker_total) {
        return None;
    }
    match player_third {
        None => {
            let s = &r.banker_when_player_stood;
            let draws = s.draws_on.contains(&banker_total);
            assert_ne!(draws, s.stands_on.contains(&banker_total), "one rule");
            Some(draws)
        }
        Some(third) => {
            let rows: Vec<_> = r
                .banker_when_player_drew
                .iter()
                .filter(|row| row.banker_totals.contains(&banker_total))
                .collect();
            assert_eq!(rows.len(), 1, "banker total {banker_total}: one row");
            let draws = rows[0].draws_when_player_third_is.contains(&third);
            assert_ne!(
                draws,
                rows[0].stands_when_player_third_is.contains(&third),
                "banker {banker_total}, player third {third}: one rule"
            );
            Some(draws)
        }
    }
}

fn numbers(cell: &str) -> Vec<u8> {
    cell.split(',')
        .map(|n| n.trim().parse().expect("a number 0-9"))
        .collect()
}

/// Compares the plan's third-card rules with the section's "Pravidla pro třetí kartu": the
/// Player table, the sentence on Banker after Player stood, and every cell of the Banker table.
fn assert_third_card_rules_are_the_documents(p: &LoadedPlan, heading: &str, banker: &str) {
    let r = baccarat(p);
    let section = section_002(heading);
    let rules = &section[section
        .find("Pravidla pro třetí kartu\n")
        .expect("third-card rules")..];

    // "Hráč": three rows of totals → action.
    let player_rows: Vec<Vec<&str>> = rules
        .lines()
        .map(cells)
        .filter(|c| c.len() == 2 && c[0].starts_with(|ch: char| ch.is_ascii_digit()))
        .collect();
    assert_eq!(player_rows.len(), 3, "{player_rows:?}");
    for row in &player_rows {
        for total in numbers(row[0]) {
            match row[1] {
                "Obdrží kartu" => assert!(r.player_third_card.draws_on.contains(&total)),
                "Stojí" => assert!(r.player_third_card.stands_on.contains(&total)),
                natural if natural.starts_with("Přirozená kombinace") => {
                    assert!(r.natural_totals.contains(&total), "natural {total}")
                }
                other => panic!("unexpected Player action {other:?}"),
            }
        }
    }

    // "Pokud pozice Hráč stojí, pak pozice Banker obdrží třetí kartu, pokud je jeho hodnota
    // celkem 5 nebo méně."
    assert!(rules.contains(&format!(
        "Pokud pozice Hráč stojí, pak pozice {banker} obdrží třetí kartu, pokud je jeho hodnota celkem 5 nebo méně."
    )));
    for total in 0..=7 {
        assert_eq!(
            banker_draws(r, total, None),
            Some(total <= 5),
            "Banker {total} after Player stood"
        );
    }

    // The Banker table: "totals | draws when Player's third card is | stands when it is".
    let banker_rows: Vec<Vec<&str>> = rules
        .lines()
        .map(cells)
        .filter(|c| c.len() == 3 && c[0].starts_with(|ch: char| ch.is_ascii_digit()))
        .collect();
    assert_eq!(banker_rows.len(), 7, "{banker_rows:?}");
    let mut cells_checked = 0;
    for row in &banker_rows {
        for total in numbers(row[0]) {
            for third in 0..=9u8 {
                let expected = match (row[1], row[2]) {
                    ("Vždy obdrží kartu", "–") => Some(true),
                    ("Vždy stojí", "–") => Some(false),
                    ("Hráč stojí", "Hráč stojí") => None,
                    (draws, stands) => {
                        let d = numbers(draws).contains(&third);
                        assert_ne!(d, numbers(stands).contains(&third), "document row {row:?}");
                        Some(d)
                    }
                };
                assert_eq!(
                    banker_draws(r, total, Some(third)),
                    expected,
                    "{}: Banker {total}, Player's third card {third}",
                    p.key()
                );
                cells_checked += 1;
            }
        }
    }
    assert_eq!(
        cells_checked, 100,
        "Banker totals 0–9 × Player's third card 0–9"
    );
}

fn assert_baccarat_deal(p: &LoadedPlan) {
    let r = baccarat(p);
    assert_eq!((r.shoe.decks, r.shoe.total_cards()), (8, 416));
    assert_eq!(
        r.initial_deal_order,
        [Hand::Player, Hand::Banker, Hand::Player, Hand::Banker]
    );
    assert_eq!(r.natural_totals, [8, 9]);
    let pairs = r.pairs.as_ref().expect("pair bets");
    assert_eq!(pairs.pair_match, CardMatch::Rank);
    assert_eq!(pairs.perfect_pair_match, CardMatch::RankAndSuit);
}

/// 002 › Speed Baccarat › Tabulka nejvyšších sázek a odvislých nejvyšších výher.
#[test]
fn speed_baccarat_limits_are_the_documents() {
    assert_limits_match_002(&plan("evolution-speed-baccarat@1"), "Speed Baccarat");
}

/// 002 › Speed Baccarat › "Výplatní tabulka výherních poměrů" (Tabulka výplatních poměrů
/// hlavních sázek; Tabulka výplatních poměrů vedlejších sázek).
#[test]
fn speed_baccarat_payouts_are_the_documents() {
    let p = plan("evolution-speed-baccarat@1");
    for (bet, r) in [
        ("player", (1, 1)),
        ("banker", (19, 20)), // 0,95 : 1
        ("tie", (8, 1)),
        ("player_pair", (11, 1)),
        ("banker_pair", (11, 1)),
        ("any_pair", (5, 1)),
        ("perfect_pair", (25, 1)),
    ] {
        assert_eq!(ratio(&p, bet, "win"), r, "{bet}");
    }
    assert_payouts_quote_the_document(&p, "Speed Baccarat");
}

/// Speed Baccarat: the section does not say what a tie does to Hráč / Banker; the plan returns
/// them (an assumption the regulator sees).
#[test]
fn speed_baccarat_main_bets_are_returned_on_a_tie_by_assumption() {
    let p = plan("evolution-speed-baccarat@1");
    for bet in ["player", "banker"] {
        assert_eq!(refund(&p, bet, "tie"), (1, 1));
        assert!(p
            .plan
            .assumption(&format!("payouts[{bet}/tie].refund"))
            .is_some());
    }
}

/// Player Bonus / Banker Bonus: the win condition is the document's ("přirozenou kombinací nebo
/// rozdílem čtyř a více bodů"), the paytable is assumed and its best ratio is the document's
/// maximum win of 30 × the maximum bet.
#[test]
fn speed_baccarat_bonus_paytable_is_assumed_and_capped_at_thirty_to_one() {
    let p = plan("evolution-speed-baccarat@1");
    let r = baccarat(&p);
    assert_eq!(r.bonus.as_ref().unwrap().min_margin_without_natural, 4);
    for bet in ["player_bonus", "banker_bonus"] {
        for (outcome, rt) in [
            ("natural_win", (1, 1)),
            ("win_by_9", (30, 1)),
            ("win_by_8", (10, 1)),
            ("win_by_7", (6, 1)),
            ("win_by_6", (4, 1)),
            ("win_by_5", (2, 1)),
            ("win_by_4", (1, 1)),
        ] {
            assert_eq!(ratio(&p, bet, outcome), rt, "{bet}/{outcome}");
            let kind = "ratio";
            assert!(
                p.plan
                    .assumption(&format!("payouts[{bet}/{outcome}].{kind}"))
                    .is_some(),
                "{bet}/{outcome} must be recorded as an assumption"
            );
        }
        assert_eq!(refund(&p, bet, "natural_tie"), (1, 1));
        for m in 1..=3 {
            assert!(
                p.plan
                    .payouts_for(bet)
                    .all(|row| row.outcome != format!("win_by_{m}")),
                "a win by {m} does not win the bonus"
            );
        }
        let b = p.plan.bet(bet).unwrap();
        assert_eq!(b.max_win, 30 * b.max_bet);
    }
}

/// 002 › Speed Baccarat › Pravidla pro třetí kartu (Hráč; Banker).
#[test]
fn speed_baccarat_third_card_rules_are_the_documents_table() {
    let p = plan("evolution-speed-baccarat@1");
    assert_third_card_rules_are_the_documents(&p, "Speed Baccarat", "Banker");
    assert_baccarat_deal(&p);
    assert!(baccarat(&p).big_small.is_none() && baccarat(&p).egalite_extra.is_none());
}

/// 002 › Baccarat › Tabulka nejvyšších sázek a odvislých nejvyšších výher.
#[test]
fn synot_baccarat_limits_are_the_documents() {
    assert_limits_match_002(&plan("synot-baccarat@1"), "Baccarat");
}

/// 002 › Baccarat › "Tabulky výplatních poměrů" (hlavních sázek; vedlejších sázek; Egalite
/// Extra).
#[test]
fn synot_baccarat_payouts_are_the_documents() {
    let p = plan("synot-baccarat@1");
    for (bet, r) in [
        ("player", (1, 1)),
        ("banker", (19, 20)), // "0,95 : 1"
        ("tie", (8, 1)),
        ("player_pair", (11, 1)),
        ("banker_pair", (11, 1)),
        ("any_pair", (5, 1)),
        ("perfect_pair", (25, 1)),
        ("big", (27, 50)), // "0,54 : 1"
        ("small", (3, 2)), // "1,5 : 1"
    ] {
        assert_eq!(ratio(&p, bet, "win"), r, "{bet}");
    }
    for (total, r) in [150, 215, 220, 200, 120, 110, 45, 45, 80, 80]
        .into_iter()
        .enumerate()
    {
        assert_eq!(ratio(&p, "egalite_extra", &format!("tie_{total}")), (r, 1));
    }
    assert_payouts_quote_the_document(&p, "Baccarat");
}

/// "Dojde-li k remíze a Sázející má uzavřenou hlavní sázku na pozici Hráč nebo Krupiér, vrací
/// se Sázejícímu částka odpovídající původně uzavřené sázce na tyto pozice."
#[test]
fn synot_baccarat_main_bets_are_returned_on_a_tie() {
    let p = plan("synot-baccarat@1");
    assert_eq!(refund(&p, "player", "tie"), (1, 1));
    assert_eq!(refund(&p, "banker", "tie"), (1, 1));
    assert!(p.plan.assumption("payouts[player/tie].refund").is_none());
    assert_eq!(p.plan.bet("banker").unwrap().label, "Krupiér");
}

/// 002 › Baccarat › Pravidla pro třetí kartu (Hráč; Krupiér), Velká hra, Malá hra, Egalite Extra.
#[test]
fn synot_baccarat_third_card_rules_are_the_documents_table() {
    let p = plan("synot-baccarat@1");
    assert_third_card_rules_are_the_documents(&p, "Baccarat", "Krupiér");
    assert_baccarat_deal(&p);
    let r = baccarat(&p);
    let bs = r.big_small.as_ref().unwrap();
    assert_eq!(
        (
            bs.big_card_counts.as_slice(),
            bs.small_card_counts.as_slice()
        ),
        (&[5, 6][..], &[4][..])
    );
    assert_eq!(
        r.egalite_extra.as_ref().unwrap().totals,
        (0..=9).collect::<Vec<u8>>()
    );
    assert!(r.bonus.is_none());
}

/// "Pokud bude Sázející odpojen … do ukončení přijímání sázek, obdrží Sázející žetony ve výši
/// své původní sázky."
#[test]
fn synot_baccarat_refunds_players_disconnected_before_betting_closes() {
    let synot = plan("synot-baccarat@1");
    assert!(
        synot
            .plan
            .policies
            .disconnect
            .refund_if_disconnected_before_betting_closes
    );
    assert!(synot.plan.policies.disconnect.placed_bets_stand);
    let speed = plan("evolution-speed-baccarat@1");
    assert!(
        !speed
            .plan
            .policies
            .disconnect
            .refund_if_disconnected_before_betting_closes
    );
}

/// Classic cells of the third-card table, spelled out.
#[test]
fn banker_draws_on_3_unless_player_third_card_is_8() {
    for key in ["evolution-speed-baccarat@1", "synot-baccarat@1"] {
        let p = plan(key);
        let r = baccarat(&p);
        for third in 0..=9 {
            assert_eq!(banker_draws(r, 3, Some(third)), Some(third != 8), "{key}");
        }
        assert_eq!(banker_draws(r, 6, Some(7)), Some(true));
        assert_eq!(banker_draws(r, 6, None), Some(false));
        assert_eq!(banker_draws(r, 7, Some(0)), Some(false));
        assert_eq!(banker_draws(r, 8, Some(0)), None);
    }
}

// ---------------------------------------------------------------------------------------------
// Top Card

/// 002 › Top Card › Tabulka nejvyšších sázek a odvislých nejvyšších výher.
#[test]
fn top_card_limits_are_the_documents() {
    assert_limits_match_002(&plan("evolution-top-card@1"), "Top Card");
}

/// 002 › Top Card › "Výplatní tabulka výherních poměrů" › "Výplata hlavní výhry".
#[test]
fn top_card_payouts_are_the_documents() {
    let p = plan("evolution-top-card@1");
    assert_eq!(ratio(&p, "home", "win"), (1, 1));
    assert_eq!(ratio(&p, "away", "win"), (1, 1));
    assert_eq!(ratio(&p, "tie", "win"), (11, 1));
    assert_payouts_quote_the_document(&p, "Top Card");
}

/// "Pokud budou mít rozdané karty stejnou hodnotu, hráč vyhrává polovinu své původní hlavní
/// sázky (na Domáci nebo Hosté)": half the Home / Away stake comes back.
#[test]
fn top_card_main_bets_lose_half_on_a_tie() {
    let p = plan("evolution-top-card@1");
    let section = section_002("Top Card");
    assert!(section.contains("hráč vyhrává polovinu své původní hlavní"));
    assert_eq!(refund(&p, "home", "tie"), (1, 2));
    assert_eq!(refund(&p, "away", "tie"), (1, 2));
    assert!(p.plan.assumption("payouts[home/tie].refund").is_some());
}

/// "2 je nejnižší karta … až po A (Ace), které má nejvyšší hodnotu"; "Barva karty nemá na
/// výsledek hry žádný vliv"; "Pravidlo platného kola".
#[test]
fn top_card_ranks_two_low_ace_high_suits_ignored_misdeal_redealt() {
    let p = plan("evolution-top-card@1");
    let r = top_card(&p);
    let order: Vec<Rank> = r.rank_order.iter().map(|n| n.0).collect();
    assert_eq!(order, Rank::ALL);
    assert!(r.suits_ignored);
    assert_eq!(r.deal_order, [Side::Home, Side::Away]);
    assert_eq!(r.valid_round.on_misdeal, Misdeal::Redeal);
    assert!(r.valid_round.cards_dealt_correctly_and_visible);
    assert_eq!((r.shoe.decks, r.shoe.total_cards()), (8, 416));
}

// ---------------------------------------------------------------------------------------------
// Casino Hold'em

fn assert_holdem_core(p: &LoadedPlan) {
    let r = holdem(p);
    assert_eq!((r.shoe.decks, r.shoe.total_cards()), (1, 52));
    assert_eq!(r.call_multiple, 2);
    assert_eq!(r.board_cards_after_decision, 2);
    assert_eq!(r.dealer_qualifies_with.class, HandClass::Pair);
    assert_eq!(
        r.dealer_qualifies_with.pair_rank.map(|n| n.0),
        Some(Rank::Four)
    );
    assert_eq!(
        r.dealer_not_qualified.ante,
        AnteWhenNotQualified::PaidByPaytable
    );
    assert_eq!(r.dealer_not_qualified.call, CallWhenNotQualified::Returned);
    let timeout = p
        .plan
        .policies
        .decision_timeout
        .as_ref()
        .expect("decision timeout");
    assert_eq!(timeout.automatic, AutoDecision::Fold);
    assert!(p.plan.policies.disconnect.pending_decisions_automatic);
    assert!(p.plan.policies.timing.decision_ms.is_some());
    // "sázka 2x Hrát se vyplácí v poměru 1:1"; ties and a non-qualifying dealer return it.
    assert_eq!(ratio(p, "call", "win"), (1, 1));
    assert_eq!(refund(p, "call", "push"), (1, 1));
    assert_eq!(refund(p, "call", "dealer_not_qualified"), (1, 1));
    assert_eq!(refund(p, "ante", "push"), (1, 1));
    // The Call's stated maximum win (100 × its bet) is the document's, acknowledged as such.
    let call = p.plan.bet("call").unwrap();
    assert_eq!(call.max_win, 100 * call.max_bet);
    assert!(p
        .plan
        .document_inconsistencies
        .iter()
        .any(|i| i.field == "bets[call].max_win"));
    assert!(p.warnings.iter().any(|w| w.path == "bets[call].max_win"));
}

/// 002 › Casino Hold'em (Evolution) › Tabulka nejvyšších sázek a odvislých nejvyšších výher.
#[test]
fn evolution_casino_holdem_limits_are_the_documents() {
    assert_limits_match_002(
        &plan("evolution-casino-holdem@1"),
        "Casino Hold'em (Evolution)",
    );
}

/// 002 › Casino Hold'em (Evolution) › "Výplatní tabulka výherních poměrů" › "Sázka Ante",
/// "Vedlejší sázka Bonus".
#[test]
fn evolution_casino_holdem_payouts_are_the_documents() {
    let p = plan("evolution-casino-holdem@1");
    for (outcome, ante, bonus) in [
        ("royal_flush", (100, 1), (100, 1)),
        ("straight_flush", (20, 1), (50, 1)),
        ("four_of_a_kind", (10, 1), (40, 1)),
        ("full_house", (3, 1), (30, 1)),
        ("flush", (2, 1), (20, 1)),
        ("straight", (1, 1), (7, 1)),
        ("three_of_a_kind", (1, 1), (7, 1)),
        ("two_pair", (1, 1), (7, 1)),
    ] {
        assert_eq!(ratio(&p, "ante", outcome), ante, "ante/{outcome}");
        assert_eq!(ratio(&p, "bonus", outcome), bonus, "bonus/{outcome}");
    }
    assert_eq!(ratio(&p, "ante", "pair_or_less"), (1, 1));
    assert_eq!(ratio(&p, "bonus", "pair_of_aces"), (7, 1));
    assert_payouts_quote_the_document(&p, "Casino Hold'em (Evolution)");
}

/// Dealer qualifies with a pair of fours; Call = 2 × Ante ("2x Hrát"); a decision not taken in
/// time folds ("označí se po uplynutí času na rozhodnutí volba Položit"); the Bonus is settled
/// even after a fold ("i v případě, že se rozhodne pro Položit").
#[test]
fn evolution_casino_holdem_dealer_qualifies_with_fours_and_timeout_folds() {
    let p = plan("evolution-casino-holdem@1");
    assert_holdem_core(&p);
    let r = holdem(&p);
    let bonus = r.flop_bonus.as_ref().unwrap();
    assert_eq!(bonus.bet, FlopBonusBet::Bonus);
    assert_eq!(bonus.on_fold, SideBetOnFold::StillSettled);
    assert_eq!(bonus.min_hand.pair_rank.map(|n| n.0), Some(Rank::Ace));
    assert!(r.call_blind.is_none() && r.casino_razz.is_none());
    assert_eq!(p.plan.bet("call").unwrap().label, "2x Hrát");
}

/// 002 › Casino Hold'em › Tabulka nejvyšších sázek a odvislých nejvyšších výher.
#[test]
fn synot_casino_holdem_limits_are_the_documents() {
    assert_limits_match_002(&plan("synot-casino-holdem@1"), "Casino Hold'em");
}

/// 002 › Casino Hold'em › "Výplatní tabulka výherních poměrů" › "Sázka Ante", "Vedlejší sázka
/// AA", "Vedlejší sázka Casino Razz".
#[test]
fn synot_casino_holdem_payouts_are_the_documents() {
    let p = plan("synot-casino-holdem@1");
    for (outcome, ante, aa) in [
        ("royal_flush", (100, 1), (100, 1)),
        ("straight_flush", (20, 1), (50, 1)),
        ("four_of_a_kind", (10, 1), (40, 1)),
        ("full_house", (3, 1), (30, 1)),
        ("flush", (2, 1), (20, 1)),
    ] {
        assert_eq!(ratio(&p, "ante", outcome), ante, "ante/{outcome}");
        assert_eq!(ratio(&p, "aa", outcome), aa, "aa/{outcome}");
    }
    assert_eq!(ratio(&p, "ante", "straight_or_lower"), (1, 1));
    assert_eq!(ratio(&p, "aa", "pair_of_aces_to_straight"), (7, 1));
    for (outcome, r) in [
        ("wheel_suited", (200, 1)),
        ("wheel_mixed_suits", (50, 1)),
        ("six_high", (25, 1)),
        ("seven_high", (10, 1)),
        ("eight_high", (8, 1)),
        ("nine_high", (6, 1)),
    ] {
        assert_eq!(
            ratio(&p, "casino_razz", outcome),
            r,
            "casino_razz/{outcome}"
        );
    }
    assert_eq!(p.plan.payouts_for("casino_razz").count(), 6);
    assert_payouts_quote_the_document(&p, "Casino Hold'em");
}

/// Call Blind: the Call placed before the deal, twice the Ante, half of it copied to the Ante;
/// AA needs the Call; Casino Razz: ace low, any Q, K or pair loses.
#[test]
fn synot_casino_holdem_call_blind_aa_and_razz_rules() {
    let p = plan("synot-casino-holdem@1");
    assert_holdem_core(&p);
    let r = holdem(&p);
    let cb = r.call_blind.as_ref().unwrap();
    assert_eq!(cb.ante_share, Ratio::new(1, 2).unwrap());
    assert!(cb.no_decision);
    let aa = r.flop_bonus.as_ref().unwrap();
    assert_eq!(aa.bet, FlopBonusBet::Aa);
    assert_eq!(aa.on_fold, SideBetOnFold::Lost);
    let razz = r.casino_razz.as_ref().unwrap();
    let losing: Vec<Rank> = razz.losing_ranks.iter().map(|n| n.0).collect();
    assert_eq!(losing, [Rank::Queen, Rank::King]);
    assert!(razz.paired_hands_lose);
    assert_eq!(p.plan.bet("call").unwrap().label, "Dorovnat");
}
