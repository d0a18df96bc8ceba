//! Blackjack at the seated 7-box tables of 002 through the API: Blackjack (Evolution),
//! Blackjack (SYNOT Interactive) and BLACKJACK (Absolute live gaming), live and RNG.
//!
//! Every figure is worked out here from the plan (`game_plans/<id>@1.toml`, which quotes the
//! document): main 1:1, blackjack 3:2, push and surrender refunds 1/1 and 1/2 rounded half up,
//! insurance 2:1, Perfect Pairs 25/12/6:1, 21+3 100/40/30/10/5:1, Top 3 270/180/90:1. The
//! live cards are given in dealing order: a card to each box in box order, the dealer's up
//! card, a second card to each box, the dealer's hole card (`hole_card =
//! "revealed_after_players"`: no peek), then the boxes' draws, then the dealer's.

use std::time::Duration;

use serde_json::{json, Value};

use crate::bj::{added_stakes, bet, credited, next_of, settlement, Ctx};
use crate::server::{Backend, Storage, TestServer, ADMIN_KEY};

const EVOLUTION: &str = "evolution-blackjack@1";
const SYNOT: &str = "synot-blackjack@1";
const ALG: &str = "alg-blackjack@1";

// ---------------------------------------------------------------------------------------
// Helpers of this file.

/// Each bet's result in request order: its id when accepted, else `refused:<code>`.
fn bet_results(reply: &Value) -> Vec<String> {
    reply["results"]
        .as_array()
        .unwrap_or_else(|| panic!("no results: {reply}"))
        .iter()
        .map(|r| match r["status"].as_str() {
            Some("accepted") => r["bet"].as_str().expect("bet id").to_string(),
            _ => format!("refused:{}", r["code"].as_str().unwrap_or("?")),
        })
        .collect()
}

/// The accepted bets' ids of a request (all must be accepted).
fn ids(reply: &Value) -> Vec<String> {
    let r = bet_results(reply);
    assert!(r.iter().all(|x| !x.starts_with("refused")), "{reply}");
    r
}

/// Opens a round, places `bets` (all accepted), closes betting; returns the round and the
/// bets' ids in request order.
fn round_ids(ctx: &Ctx, table: &str, bets: Value) -> (String, Vec<String>) {
    let round = ctx.open_round(table);
    let reply = ctx.accepted_bets(&round, bets);
    ctx.close_betting(&round);
    (round, ids(&reply))
}

fn due(reply: &Value) -> Vec<Value> {
    reply["expected"]["due"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The legal decisions of the first decision due.
fn legal(reply: &Value) -> Vec<String> {
    let d = due(reply);
    let first = d
        .iter()
        .find(|x| x["legal"].is_array())
        .unwrap_or_else(|| panic!("no decision due: {reply}"));
    first["legal"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

/// Who owes the first thing due, and on which box.
fn first_due(reply: &Value) -> (String, i64) {
    let d = due(reply);
    let first = d.first().unwrap_or_else(|| panic!("nothing due: {reply}"));
    (
        first["player"].as_str().unwrap().to_string(),
        first["seat"].as_i64().unwrap(),
    )
}

/// The stakes added by a reply's inputs, as (player, bet, seat, hand, behind, stake).
fn added(reply: &Value) -> Vec<Added> {
    reply["inputs"]
        .as_array()
        .map(|v| {
            v.iter()
                .flat_map(|i| i["bets"].as_array().cloned().unwrap_or_default())
                .map(|b| {
                    let p = &b["placement"];
                    (
                        b["player"].as_str().unwrap().to_string(),
                        p["bet"].as_str().unwrap().to_string(),
                        p["seat"].as_i64().unwrap_or(0),
                        p["hand"].as_i64(),
                        p["behind"].as_bool().unwrap_or(false),
                        p["stake_minor"].as_i64().unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

type Added = (String, String, i64, Option<i64>, bool, i64);

/// An added stake as [`added`] lists it.
fn st(player: &str, bet: &str, seat: i64, hand: Option<i64>, behind: bool, stake: i64) -> Added {
    (player.into(), bet.into(), seat, hand, behind, stake)
}

fn total(s: &Value) -> i64 {
    s["total_minor"].as_i64().unwrap_or_else(|| panic!("{s}"))
}

/// The outcome's hands of the box at `position`.
fn hands(reply: &Value, position: usize) -> Vec<Value> {
    reply["outcome"]["positions"][position]["hands"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| panic!("no hands at {position}: {reply}"))
}

fn settled(reply: &Value) {
    assert_eq!(reply["phase"], "settled", "{reply}");
    let sum: i64 = reply["settlements"]
        .as_array()
        .unwrap()
        .iter()
        .map(total)
        .sum();
    assert_eq!(reply["paid_minor"], sum, "paid = Σ totals: {reply}");
}

/// Half of `x` rounded half up (the plans' `rounding = "half_up"`).
fn half_up(x: i64) -> i64 {
    (x + 1) / 2
}

/// The stake back with a win of `stake × num / den`, rounded half up.
fn pays(stake: i64, num: i64, den: i64) -> i64 {
    stake + (2 * stake * num + den) / (2 * den)
}

/// A server on plans whose decision time is 1.5 s (for the time-out tests).
fn short_decision_time(files: &[&str]) -> (Storage, tempfile::TempDir, Ctx) {
    let edit: &[(&str, &str)] = &[("decision_ms = 15_000", "decision_ms = 1_500")];
    let names: Vec<String> = files.iter().map(|f| format!("{f}.toml")).collect();
    let edits: Vec<(&str, &[(&str, &str)])> = names.iter().map(|n| (n.as_str(), edit)).collect();
    let plans = crate::source::plans_with(&edits);
    let storage = Storage::new(Backend::Sqlite);
    let server = TestServer::spawn(plans.path(), &storage, &[("PITBOSS_ADMIN_KEY", ADMIN_KEY)]);
    let ctx = Ctx::with_server(server);
    (storage, plans, ctx)
}

/// Past a 1.5 s decision time.
fn let_the_time_run_out() {
    std::thread::sleep(Duration::from_millis(1_700));
}

fn blackjack_rules(key: &str) -> pitboss::plan::rules::blackjack::BlackjackRules {
    match crate::source::plan(key).plan.rules {
        pitboss::plan::rules::GameRules::Blackjack(r) => *r,
        other => panic!("{key}: not blackjack: {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------
// Bets: boxes, owners, side bets, Bet Behind, limits.

/// "Na hracím plátně je virtuálně vyznačeno 7 boxů": a box is the player's whose main bet
/// is on it; a player may hold two boxes; side bets go with the player's own main bet on the
/// same box; a Bet Behind goes on another player's box with a main bet, once; stakes within
/// the rows of "Tabulka nejvyšších sázek"; split, double and insurance come with decisions.
/// The accepted bets are then dealt and paid box by box.
#[test]
fn a_box_is_held_by_its_main_bet_and_side_bets_and_bets_behind_go_where_the_plan_says() {
    let (_s, ctx) = Ctx::sqlite();
    ctx.open_table("t1", EVOLUTION, "live");
    let round = ctx.open_round("t1");
    let reply = ctx.bets(
        &round,
        json!([
            bet("p1", "main", 1, 1000),
            bet("p2", "main", 1, 1000),
            bet("p1", "main", 2, 500),
            bet("p1", "main", 8, 1000),
            bet("p1", "main", 0, 1000),
            {"player": "p1", "bet": "main", "stake_minor": 1000},
            bet("p3", "perfect_pairs", 3, 100),
            bet("p2", "perfect_pairs", 1, 100),
            bet("p1", "perfect_pairs", 2, 100),
            bet("p1", "bet_behind", 1, 200),
            bet("p2", "bet_behind", 4, 200),
            bet("p2", "bet_behind", 1, 200),
            bet("p2", "bet_behind", 1, 200),
            bet("p3", "main", 3, 99),
            bet("p3", "main", 3, 20_000_001),
            bet("p3", "main", 3, 20_000_000),
            bet("p3", "perfect_pairs", 3, 2_000_001),
            bet("p3", "twenty_one_plus_three", 3, 2_000_000),
            bet("p2", "bet_behind", 3, 20_000_001),
            bet("p1", "split", 1, 1000),
            bet("p1", "insurance", 1, 500),
            bet("p1", "main", 1, 1000),
        ]),
    );
    let r = bet_results(&reply);
    let want = [
        "", // p1 main on box 1
        "refused:seat_taken",
        "", // p1 holds a second box
        "refused:no_such_seat",
        "refused:no_such_seat",
        "refused:seat_required",
        "refused:requires_missing", // p3 has no main bet on box 3 yet
        "refused:requires_missing", // box 1's main bet is p1's, not p2's
        "",                         // p1's Perfect Pairs on his box 2
        "refused:bet_behind_not_allowed", // his own box
        "refused:bet_behind_not_allowed", // box 4 holds no main bet
        "",                         // p2 behind p1's box 1
        "refused:duplicate_bet",
        "refused:below_min_bet", // 1,00 Kč minimum
        "refused:above_max_bet", // 200 000,00 Kč maximum
        "",                      // exactly the maximum
        "refused:above_max_bet", // Perfect Pairs 20 000,00 Kč maximum
        "",                      // 21+3 at its maximum
        "refused:above_max_bet", // Bet Behind 200 000,00 Kč maximum
        "refused:not_offered",   // a split comes with a decision
        "refused:not_offered",   // insurance comes with the dealer's ace
        "refused:duplicate_bet", // a second main bet on box 1
    ];
    assert_eq!(r.len(), want.len(), "{reply}");
    for (i, (got, w)) in r.iter().zip(want).enumerate() {
        if w.is_empty() {
            assert!(!got.starts_with("refused"), "bet {i}: {got}: {reply}");
        } else {
            assert_eq!(got, w, "bet {i}: {reply}");
        }
    }
    assert_eq!(reply["accepted"], 6, "{reply}");
    let (p1_box1, p1_box2, p1_pp, p2_bb, p3_main, p3_213) =
        (&r[0], &r[2], &r[8], &r[11], &r[15], &r[17]);
    ctx.close_betting(&round);

    // Box 1 TH 8D (18), box 2 9C 9D (18, a mixed pair), box 3 2D 3C (5); dealer 7S, TS.
    let first = ctx.cards_ok(&round, &["TH", "9C", "2D", "7S", "8D", "9D", "3C", "TS"]);
    assert_eq!(first_due(&first), ("p1".into(), 1), "{first}");
    // p1 owes box 1 first: box 2 is not his turn yet, and p3 owes nothing.
    ctx.decide_refused(
        &round,
        "p1",
        json!({"action": "stand", "seat": 2}),
        "no_decision_owed",
    );
    ctx.decide_refused(&round, "p3", json!("hit"), "no_decision_owed");
    let d = ctx.decide_ok(&round, "p1", json!("stand"));
    assert_eq!(first_due(&d), ("p1".into(), 2), "{d}");
    let d = ctx.decide_ok(&round, "p1", json!({"action": "stand", "seat": 2}));
    assert_eq!(first_due(&d), ("p3".into(), 3), "{d}");
    ctx.decide_ok(&round, "p3", json!("hit"));
    ctx.cards_ok(&round, &["4H"]); // 9
    ctx.decide_ok(&round, "p3", json!("hit"));
    ctx.cards_ok(&round, &["KH"]); // 19
    let end = ctx.decide_ok(&round, "p3", json!("stand")); // the dealer stands on 17
    settled(&end);
    // 18 and 18 against 17 win 1:1; Perfect Pairs 9C 9D is a mixed pair, 6:1.
    assert_eq!(total(settlement(&end, p1_box1)), 2 * 1000);
    assert_eq!(total(settlement(&end, p1_box2)), 2 * 500);
    assert_eq!(total(settlement(&end, p1_pp)), 100 + 6 * 100);
    assert_eq!(credited(&end, "p1"), 2000 + 1000 + 700);
    // The Bet Behind follows box 1: 1:1.
    assert_eq!(total(settlement(&end, p2_bb)), 2 * 200);
    assert_eq!(credited(&end, "p2"), 400);
    // 19 wins 1:1 on the maximum bet; 2D 3C 7S is no 21+3 hand.
    assert_eq!(total(settlement(&end, p3_main)), 2 * 20_000_000);
    assert_eq!(total(settlement(&end, p3_213)), 0);
    assert_eq!(
        end["stake_minor"],
        1000 + 500 + 100 + 200 + 20_000_000 + 2_000_000
    );
    ctx.verify_export();
}

// ---------------------------------------------------------------------------------------
// Decisions against the hand.

/// "zdvojnásobit původní sázku … obdrží už jen jednu další kartu" on any first two cards (the
/// plans' `double.on = "any_two_cards"`), never after a hit; "Funkce Surrender je nabídnuta
/// pouze jednou, během prvního kola voleb".
#[test]
fn a_double_goes_on_any_first_two_cards_and_surrender_only_as_the_first_decision() {
    let (_s, ctx) = Ctx::sqlite();
    ctx.open_table("t1", ALG, "live");
    let (round, ids) = round_ids(
        &ctx,
        "t1",
        json!([bet("p1", "main", 1, 1000), bet("p2", "main", 2, 1000)]),
    );
    // Box 1 TH QD (20), box 2 5C 4D (9); dealer 9S, 8C (17).
    let first = ctx.cards_ok(&round, &["TH", "5C", "9S", "QD", "4D", "8C"]);
    let l = legal(&first);
    for d in ["hit", "stand", "double", "split", "surrender"] {
        assert!(l.contains(&d.to_string()), "{d} on T Q: {first}");
    }
    let d = ctx.decide_ok(&round, "p1", json!("double"));
    assert_eq!(added(&d), [st("p1", "double", 1, Some(0), false, 1000)]);
    assert_eq!(next_of(&d), "card:hand:0:0", "{d}");
    let d = ctx.cards_ok(&round, &["AS"]); // 21 on three cards: the double's one card
    assert_eq!(first_due(&d), ("p2".into(), 2), "{d}");
    ctx.decide_ok(&round, "p2", json!("hit"));
    let d = ctx.cards_ok(&round, &["2H"]); // 11 on three cards
    assert_eq!(legal(&d), ["hit", "stand"], "{d}");
    ctx.decide_refused(&round, "p2", json!("double"), "double_first_two_cards_only");
    ctx.decide_refused(
        &round,
        "p2",
        json!("surrender"),
        "surrender_first_decision_only",
    );
    ctx.decide_ok(&round, "p2", json!("hit"));
    ctx.cards_ok(&round, &["9H"]); // 20
    let end = ctx.decide_ok(&round, "p2", json!("stand"));
    settled(&end);
    // 21 doubled against 17: main and double 1:1. 20 against 17: 1:1.
    assert_eq!(total(settlement(&end, &ids[0])), 2 * 1000 + 2 * 1000);
    assert_eq!(settlement(&end, &ids[0])["stake_minor"], 2000);
    assert_eq!(total(settlement(&end, &ids[1])), 2 * 1000);
    assert_eq!(end["stake_minor"], 3000);
}

/// "Rozdělit … pokud mají první dvě karty stejnou hodnotu" makes one second hand
/// (`max_hands = 2`): a pair made again on a split hand is not split; two cards of different
/// value are not a pair. A double after a split: Evolution "nemůže již v rámci rozdělených
/// hand zvolit možnost Zdvojnásobit" (`after_split = false`); SYNOT and ALG do not forbid it
/// (`after_split = true`).
#[test]
fn a_split_makes_one_second_hand_of_a_pair_and_a_double_after_it_is_the_plans() {
    let (_s, ctx) = Ctx::sqlite();
    for (n, (plan, double_after_split)) in [(EVOLUTION, false), (SYNOT, true), (ALG, true)]
        .into_iter()
        .enumerate()
    {
        let rules = blackjack_rules(plan);
        assert_eq!(rules.double.after_split, Some(double_after_split), "{plan}");
        assert_eq!(rules.split.max_hands, Some(2), "{plan}");
        let table = format!("t{n}");
        ctx.open_table(&table, plan, "live");
        let (round, ids) = round_ids(
            &ctx,
            &table,
            json!([bet("p1", "main", 1, 1000), bet("p2", "main", 2, 1000)]),
        );
        // Box 1 8S 8H, box 2 TC 9C (19); dealer 6D, TD (16).
        let first = ctx.cards_ok(&round, &["8S", "TC", "6D", "8H", "9C", "TD"]);
        assert!(legal(&first).contains(&"split".to_string()), "{first}");
        let d = ctx.decide_ok(&round, "p1", json!("split"));
        assert_eq!(
            added(&d),
            [st("p1", "split", 1, Some(0), false, 1000)],
            "{plan}: {d}"
        );
        assert_eq!(next_of(&d), "card:hand:0:0", "{d}");
        let d = ctx.cards_ok(&round, &["3D"]); // hand 0: 8S 3D, 11
        assert_eq!(first_due(&d), ("p1".into(), 1), "{d}");
        let doubled = if double_after_split {
            assert!(legal(&d).contains(&"double".to_string()), "{plan}: {d}");
            let d = ctx.decide_ok(&round, "p1", json!("double"));
            assert_eq!(
                added(&d),
                [st("p1", "double", 1, Some(0), false, 1000)],
                "{plan}: {d}"
            );
            ctx.cards_ok(&round, &["TS"]); // 21, doubled
            true
        } else {
            assert!(!legal(&d).contains(&"double".to_string()), "{plan}: {d}");
            ctx.decide_refused(
                &round,
                "p1",
                json!("double"),
                "double_after_split_not_allowed",
            );
            ctx.decide_ok(&round, "p1", json!("hit"));
            ctx.cards_ok(&round, &["TS"]); // 21 on three cards
            false
        };
        // Hand 1: 8H 8C is a pair again, but the box plays two hands already.
        let d = ctx.cards_ok(&round, &["8C"]);
        assert_eq!(next_of(&d), "decision:0:1", "{d}");
        assert!(!legal(&d).contains(&"split".to_string()), "{plan}: {d}");
        ctx.decide_refused(&round, "p1", json!("split"), "max_hands_reached");
        ctx.decide_ok(&round, "p1", json!({"action": "stand", "hand": 1}));
        // Box 2: T and 9 differ in value.
        ctx.decide_refused(&round, "p2", json!("split"), "not_a_pair");
        let d = ctx.decide_ok(&round, "p2", json!("stand"));
        assert_eq!(next_of(&d), "card:dealer", "{d}");
        let end = ctx.cards_ok(&round, &["7C"]); // 23: the dealer busts
        settled(&end);
        // Every hand standing wins 1:1: 21 (doubled or not) and 16 on the split, 19 on box 2.
        let p1 = 2 * 1000 + 2 * 1000 + if doubled { 2 * 1000 } else { 0 };
        assert_eq!(total(settlement(&end, &ids[0])), p1, "{plan}: {end}");
        assert_eq!(credited(&end, "p1"), p1, "{plan}");
        assert_eq!(total(settlement(&end, &ids[1])), 2000, "{plan}");
        for h in hands(&end, 0) {
            assert_eq!(h["result"], "win", "{plan}: {h}");
            assert_eq!(h["from_split"], true, "{plan}: {h}");
        }
    }
}

/// "může táhnout na každý nový hand už jen jednu kartu" (`aces_one_card`, no re-split) and
/// "Po rozdělení není možné sestavit nejlepší hand „blackjack“": split aces take one card
/// each with no decision between, and an ace with a ten on a split hand is 21 paid 1:1.
#[test]
fn split_aces_take_one_card_each_and_their_21_is_paid_1_to_1_not_as_a_blackjack() {
    let (_s, ctx) = Ctx::sqlite();
    for (n, plan) in [SYNOT, EVOLUTION].into_iter().enumerate() {
        let table = format!("t{n}");
        ctx.open_table(&table, plan, "live");
        let (round, ids) = round_ids(&ctx, &table, json!([bet("p1", "main", 1, 1001)]));
        // Box 1 AS AH; dealer 9D, TD (19).
        ctx.cards_ok(&round, &["AS", "9D", "AH", "TD"]);
        let d = ctx.decide_ok(&round, "p1", json!("split"));
        assert_eq!(added_stakes(&d, "p1"), 1001, "{d}");
        // Both cards in one request: no decision is due on a split ace with its card, not
        // even on the second pair of aces (hand 1: AH AD).
        let end = ctx.cards_ok(&round, &["KS", "AD"]);
        settled(&end);
        let h = hands(&end, 0);
        assert_eq!(h[0]["total"], 21, "{end}");
        assert_eq!(
            h[0]["result"], "win",
            "{plan}: a split 21 is no blackjack: {end}"
        );
        assert_eq!(h[1]["cards"].as_array().unwrap().len(), 2, "{end}");
        assert_eq!(h[1]["result"], "lose", "{end}"); // 12 against 19
                                                     // 1:1 on hand 0's 1001 (3:2 would be 1001 + 1502); hand 1's split stake lost.
        assert_eq!(total(settlement(&end, &ids[0])), 2 * 1001, "{plan}");
        assert_eq!(settlement(&end, &ids[0])["stake_minor"], 2002, "{plan}");
    }
}

// ---------------------------------------------------------------------------------------
// Surrender, insurance, the dealer.

/// Surrender returns 50 % of the main bet (1001 → 500.5 → 501, half up), for the Bet Behind
/// that follows too, and the refund is kept when the dealer's hole card, revealed after the
/// players, makes a blackjack (`refund_kept_if_dealer_blackjack = true`). The same blackjack
/// takes a double (`dealer_blackjack_takes = "all_stakes"`) and pushes a player's blackjack;
/// a blackjack takes no decision.
#[test]
fn surrender_returns_half_the_main_bet_and_keeps_it_against_a_dealer_blackjack() {
    let (_s, ctx) = Ctx::sqlite();
    let rules = blackjack_rules(EVOLUTION);
    assert_eq!(rules.surrender.refund_kept_if_dealer_blackjack, Some(true));
    ctx.open_table("t1", EVOLUTION, "live");
    let (round, ids) = round_ids(
        &ctx,
        "t1",
        json!([
            bet("p1", "main", 1, 1001),
            bet("p2", "bet_behind", 1, 301),
            bet("p3", "main", 2, 1000),
            bet("p4", "main", 3, 1000),
        ]),
    );
    // Box 1 TH 6C (16), box 2 AS KD (blackjack), box 3 5S 5D (10); dealer TS, AC.
    let first = ctx.cards_ok(&round, &["TH", "AS", "5S", "TS", "6C", "KD", "5D", "AC"]);
    assert_eq!(first_due(&first), ("p1".into(), 1), "{first}");
    assert!(legal(&first).contains(&"surrender".to_string()), "{first}");
    let d = ctx.decide_ok(&round, "p1", json!("surrender"));
    assert!(added(&d).is_empty(), "a surrender adds no stake: {d}");
    // Box 2's blackjack is skipped: box 3 is next, and p3 owes nothing.
    assert_eq!(first_due(&d), ("p4".into(), 3), "{d}");
    ctx.decide_refused(&round, "p3", json!("surrender"), "no_decision_owed");
    let d = ctx.decide_ok(&round, "p4", json!("double"));
    assert_eq!(added_stakes(&d, "p4"), 1000);
    let end = ctx.cards_ok(&round, &["9S"]); // 19; the dealer's TS AC is a blackjack
    settled(&end);
    assert_eq!(end["outcome"]["dealer"]["blackjack"], true, "{end}");
    assert_eq!(total(settlement(&end, &ids[0])), half_up(1001));
    assert_eq!(total(settlement(&end, &ids[0])), 501);
    assert_eq!(
        total(settlement(&end, &ids[1])),
        151,
        "301 / 2 = 150.5 → 151"
    );
    assert_eq!(
        total(settlement(&end, &ids[2])),
        1000,
        "blackjack against blackjack: push"
    );
    assert_eq!(hands(&end, 1)[0]["result"], "push");
    assert_eq!(
        total(settlement(&end, &ids[3])),
        0,
        "main and double both taken"
    );
    assert_eq!(settlement(&end, &ids[3])["stake_minor"], 2000);
    assert_eq!(end["stake_minor"], 1001 + 301 + 1000 + 1000 + 1000);
    assert_eq!(end["paid_minor"], 501 + 151 + 1000);
}

/// Insurance "pokud je první kartou krupiéra eso … polovinu částky své původní sázky" pays
/// 2:1 on the dealer's blackjack; the stake is exactly half (`stake = "exactly"`): other
/// sizes are refused. Evolution and ALG offer it to a Bet Behind ("Pojištění je pro Bet
/// Behind Sázejícího k dispozici"). While the offer is open no card and no decision come.
#[test]
fn insurance_is_half_the_main_bet_pays_2_to_1_and_is_offered_to_a_bet_behind() {
    let (_s, ctx) = Ctx::sqlite();
    for (n, plan) in [EVOLUTION, ALG].into_iter().enumerate() {
        assert_eq!(blackjack_rules(plan).insurance.for_bet_behind, Some(true));
        let table = format!("t{n}");
        ctx.open_table(&table, plan, "live");
        let (round, ids) = round_ids(
            &ctx,
            &table,
            json!([bet("p1", "main", 1, 1000), bet("p2", "bet_behind", 1, 400)]),
        );
        // Box 1 TH 9C (19); dealer AS, KH.
        let first = ctx.cards_ok(&round, &["TH", "AS", "9C", "KH"]);
        assert_eq!(next_of(&first), "insurance", "{first}");
        let d = due(&first);
        assert_eq!(d.len(), 2, "{first}");
        assert_eq!(
            (&d[0]["player"], &d[0]["bet_behind"]),
            (&json!("p1"), &json!(false))
        );
        assert_eq!(
            (&d[1]["player"], &d[1]["bet_behind"]),
            (&json!("p2"), &json!(true))
        );
        let (s, b) = ctx.cards(&round, &["2C"]);
        assert_eq!(
            (s, b["code"].as_str()),
            (409, Some("decisions_open")),
            "{b}"
        );
        ctx.decide_refused(&round, "p1", json!("stand"), "no_decision_owed");
        for wrong in [400, 501, 1000] {
            ctx.decide_refused(
                &round,
                "p1",
                json!({"action": "insurance", "stake_minor": wrong}),
                "insurance_stake",
            );
        }
        let d = ctx.decide_ok(
            &round,
            "p1",
            json!({"action": "insurance", "stake_minor": 500}),
        );
        assert_eq!(
            added(&d),
            [st("p1", "insurance", 1, None, false, 500)],
            "{d}"
        );
        let d = ctx.decide_ok(
            &round,
            "p2",
            json!({"action": "insurance", "stake_minor": 200}),
        );
        assert_eq!(
            added(&d),
            [st("p2", "insurance", 1, None, true, 200)],
            "{d}"
        );
        assert_eq!(next_of(&d), "decision:0:0", "{d}");
        let end = ctx.decide_ok(&round, "p1", json!("stand"));
        settled(&end);
        // 19 loses to the blackjack; the insurance pays 2:1.
        assert_eq!(total(settlement(&end, &ids[0])), 500 + 2 * 500, "{plan}");
        assert_eq!(settlement(&end, &ids[0])["stake_minor"], 1500);
        assert_eq!(total(settlement(&end, &ids[1])), 200 + 2 * 200, "{plan}");
        assert_eq!(end["stake_minor"], 1000 + 400 + 500 + 200);
    }
}

/// A player on two boxes owes two insurance answers at once: each names its box (without
/// one the answer is `ambiguous_decision`), each is half of that box's main bet.
#[test]
fn a_player_on_two_boxes_names_the_box_of_each_insurance_answer() {
    let (_s, ctx) = Ctx::sqlite();
    ctx.open_table("t1", EVOLUTION, "live");
    let (round, ids) = round_ids(
        &ctx,
        "t1",
        json!([bet("p1", "main", 1, 1000), bet("p1", "main", 3, 600)]),
    );
    // Box 1 TH 9C (19), box 3 TS QS (20); dealer AD, 9D (soft 20).
    let first = ctx.cards_ok(&round, &["TH", "TS", "AD", "9C", "QS", "9D"]);
    assert_eq!(due(&first).len(), 2, "{first}");
    ctx.decide_refused(
        &round,
        "p1",
        json!({"action": "insurance", "stake_minor": 500}),
        "ambiguous_decision",
    );
    ctx.decide_ok(
        &round,
        "p1",
        json!({"action": "insurance", "seat": 1, "stake_minor": 500}),
    );
    ctx.decide_refused(
        &round,
        "p1",
        json!({"action": "insurance", "seat": 3, "stake_minor": 500}),
        "insurance_stake",
    );
    let d = ctx.decide_ok(
        &round,
        "p1",
        json!({"action": "insurance", "seat": 3, "stake_minor": 300}),
    );
    assert_eq!(first_due(&d), ("p1".into(), 1), "{d}");
    ctx.decide_ok(&round, "p1", json!("stand"));
    let end = ctx.decide_ok(&round, "p1", json!("stand"));
    settled(&end);
    // 19 loses to 20, 20 pushes; no dealer blackjack: both insurances lost.
    assert_eq!(total(settlement(&end, &ids[0])), 0);
    assert_eq!(settlement(&end, &ids[0])["stake_minor"], 1500);
    assert_eq!(total(settlement(&end, &ids[1])), 600);
    assert_eq!(settlement(&end, &ids[1])["stake_minor"], 900);
}

/// SYNOT: "Pojištění není pro Bet Behind Sázejícího k dispozici": only the box's owner is
/// asked; an insurance without the dealer's blackjack is lost while the hand wins 1:1.
#[test]
fn synot_offers_insurance_to_the_box_only_and_it_is_lost_without_a_dealer_blackjack() {
    let (_s, ctx) = Ctx::sqlite();
    assert_eq!(blackjack_rules(SYNOT).insurance.for_bet_behind, Some(false));
    ctx.open_table("t1", SYNOT, "live");
    let (round, ids) = round_ids(
        &ctx,
        "t1",
        json!([bet("p1", "main", 1, 1000), bet("p2", "bet_behind", 1, 400)]),
    );
    // Box 1 TH 9C (19); dealer AS, 7D (soft 18).
    let first = ctx.cards_ok(&round, &["TH", "AS", "9C", "7D"]);
    assert_eq!(next_of(&first), "insurance", "{first}");
    let d = due(&first);
    assert_eq!(d.len(), 1, "{first}");
    assert_eq!(d[0]["player"], "p1");
    ctx.decide_refused(
        &round,
        "p2",
        json!({"action": "insurance", "stake_minor": 200}),
        "no_decision_owed",
    );
    ctx.decide_ok(
        &round,
        "p1",
        json!({"action": "insurance", "stake_minor": 500}),
    );
    let end = ctx.decide_ok(&round, "p1", json!("stand"));
    settled(&end);
    assert_eq!(
        total(settlement(&end, &ids[0])),
        2 * 1000,
        "19 beats 18, insurance lost"
    );
    assert_eq!(settlement(&end, &ids[0])["stake_minor"], 1500);
    assert_eq!(total(settlement(&end, &ids[1])), 2 * 400);
    assert_eq!(end["stake_minor"], 1000 + 400 + 500);
}

/// "Pokud je tento součet 17 či vyšší, krupiér další kartu vzít nesmí … krupiér musí kartu eso
/// vždy počítat s hodnotou 11" (`soft_17 = "stand"` in all three plans): the dealer stands on
/// A 6 and draws to 16.
#[test]
fn the_dealer_stands_on_soft_17_and_draws_to_16() {
    let (_s, ctx) = Ctx::sqlite();
    for (n, plan) in [EVOLUTION, SYNOT, ALG].into_iter().enumerate() {
        let table = format!("t{n}");
        ctx.open_table(&table, plan, "live");
        // Box 1 TH 8C (18); dealer 6H, AD: soft 17.
        let (round, ids) = round_ids(&ctx, &table, json!([bet("p1", "main", 1, 1000)]));
        ctx.cards_ok(&round, &["TH", "6H", "8C", "AD"]);
        let end = ctx.decide_ok(&round, "p1", json!("stand"));
        settled(&end);
        assert_eq!(end["outcome"]["dealer"]["total"], 17, "{plan}: {end}");
        assert_eq!(
            end["outcome"]["dealer"]["cards"].as_array().unwrap().len(),
            2
        );
        assert_eq!(
            total(settlement(&end, &ids[0])),
            2000,
            "{plan}: 18 beats 17"
        );
        // Dealer 6H QD (16) draws: 5C makes 21.
        let (round, ids) = round_ids(&ctx, &table, json!([bet("p1", "main", 1, 1000)]));
        ctx.cards_ok(&round, &["TH", "6H", "8C", "QD"]);
        let d = ctx.decide_ok(&round, "p1", json!("stand"));
        assert_eq!(next_of(&d), "card:dealer", "{plan}: {d}");
        let end = ctx.cards_ok(&round, &["5C"]);
        settled(&end);
        assert_eq!(end["outcome"]["dealer"]["total"], 21, "{plan}");
        assert_eq!(
            total(settlement(&end, &ids[0])),
            0,
            "{plan}: 18 loses to 21"
        );
        let (s, b) = ctx.cards(&round, &["5C"]);
        assert_ne!(s, 200, "no card after the round: {b}");
    }
}

/// The hole card is revealed only after the players ("K odkrytí této skryté karty krupiéra
/// dojde … po odehrání všech sázejících"): a dealer blackjack found then takes every stake of
/// the hand, the split and the double included (`dealer_blackjack_takes = "all_stakes"`), and
/// those of the Bets Behind that followed.
#[test]
fn a_dealer_blackjack_found_after_the_players_takes_their_splits_and_doubles() {
    let (_s, ctx) = Ctx::sqlite();
    for (n, plan) in [ALG, SYNOT].into_iter().enumerate() {
        let rules = blackjack_rules(plan);
        assert_eq!(
            rules.blackjack.dealer_blackjack_takes,
            Some(pitboss::plan::rules::blackjack::DealerBlackjackTakes::AllStakes)
        );
        let table = format!("t{n}");
        ctx.open_table(&table, plan, "live");
        let (round, ids) = round_ids(
            &ctx,
            &table,
            json!([
                bet("p1", "main", 1, 1000),
                bet("p2", "bet_behind", 1, 300),
                bet("p3", "main", 2, 1000),
            ]),
        );
        // Box 1 8S 8H, box 2 5C 6C (11); dealer KS (no insurance), AH.
        let first = ctx.cards_ok(&round, &["8S", "5C", "KS", "8H", "6C", "AH"]);
        assert_eq!(
            next_of(&first),
            "decision:0:0",
            "no peek, no insurance: {first}"
        );
        let d = ctx.decide_ok(&round, "p1", json!("split"));
        assert_eq!(added_stakes(&d, "p1"), 1000);
        assert_eq!(added_stakes(&d, "p2"), 300, "the Bet Behind follows: {d}");
        ctx.cards_ok(&round, &["2D"]); // hand 0: 10
        let d = ctx.decide_ok(&round, "p1", json!("double"));
        assert_eq!(added_stakes(&d, "p1"), 1000);
        assert_eq!(added_stakes(&d, "p2"), 300);
        ctx.cards_ok(&round, &["9D", "TC"]); // hand 0: 19 doubled; hand 1: 18
        ctx.decide_ok(&round, "p1", json!("stand"));
        ctx.decide_ok(&round, "p3", json!("double"));
        let end = ctx.cards_ok(&round, &["TD"]); // 21 on three cards
        settled(&end);
        assert_eq!(end["outcome"]["dealer"]["blackjack"], true);
        assert_eq!(settlement(&end, &ids[0])["stake_minor"], 3000, "{plan}");
        assert_eq!(total(settlement(&end, &ids[0])), 0, "{plan}: {end}");
        assert_eq!(settlement(&end, &ids[1])["stake_minor"], 900, "{plan}");
        assert_eq!(total(settlement(&end, &ids[1])), 0, "{plan}");
        // A 21 of three cards loses to the blackjack (`dealer_blackjack_beats_player_21`).
        assert_eq!(hands(&end, 1)[0]["total"], 21);
        assert_eq!(total(settlement(&end, &ids[2])), 0, "{plan}");
        assert_eq!(end["paid_minor"], 0);
        assert_eq!(
            end["stake_minor"],
            1000 + 300 + 1000 + 1000 + 300 + 1000 + 300 + 1000
        );
    }
}

/// "blackjack … ve výherním poměru 3:2", paid after the dealer completes his hand: a
/// blackjack beats the dealer's 21 of three cards; 1001 pays 1501.5 → 1502 (half up), a Bet
/// Behind of 201 follows with 301.5 → 302. A 21 against 21 is a push.
#[test]
fn a_blackjack_pays_3_to_2_against_a_dealers_three_card_21() {
    let (_s, ctx) = Ctx::sqlite();
    ctx.open_table("t1", SYNOT, "live");
    let (round, ids) = round_ids(
        &ctx,
        "t1",
        json!([
            bet("p1", "main", 1, 1001),
            bet("p2", "bet_behind", 1, 201),
            bet("p3", "main", 2, 1000),
        ]),
    );
    // Box 1 AH KC, box 2 7C 7D; dealer 9H, 7H (16).
    let first = ctx.cards_ok(&round, &["AH", "7C", "9H", "KC", "7D", "7H"]);
    assert_eq!(
        first_due(&first),
        ("p3".into(), 2),
        "the blackjack decides nothing"
    );
    ctx.decide_ok(&round, "p3", json!("hit"));
    let d = ctx.cards_ok(&round, &["7S"]); // 21: no further decision
    assert_eq!(next_of(&d), "card:dealer", "{d}");
    let end = ctx.cards_ok(&round, &["5S"]); // the dealer's 21
    settled(&end);
    assert_eq!(hands(&end, 0)[0]["result"], "blackjack");
    assert_eq!(total(settlement(&end, &ids[0])), pays(1001, 3, 2));
    assert_eq!(total(settlement(&end, &ids[0])), 1001 + 1502);
    assert_eq!(total(settlement(&end, &ids[1])), 201 + 302);
    assert_eq!(total(settlement(&end, &ids[2])), 1000, "21 against 21");
}

// ---------------------------------------------------------------------------------------
// Bet Behind on a split and on a double.

/// "Bet Behind Sázející jeho rozhodnutí pouze následuje/kopíruje": it adds its own stake for
/// the box's split and double (reply `inputs[].bets`, `behind: true`) and is paid as the
/// box's hands; one that cannot fund them (`bet_behind_declines`) plays the right-hand hand
/// only (`unfunded_split = "right_hand_only"`) with its single stake on the doubled hand
/// (`unfunded_double = "one_card_then_stand"`).
#[test]
fn bets_behind_follow_a_split_and_a_double_or_decline_them_by_the_plans_rules() {
    let (_s, ctx) = Ctx::sqlite();
    ctx.open_table("t1", ALG, "live");
    let (round, ids) = round_ids(
        &ctx,
        "t1",
        json!([
            bet("p1", "main", 1, 1000),
            bet("p2", "bet_behind", 1, 300),
            bet("p3", "bet_behind", 1, 200),
        ]),
    );
    // Box 1 8S 8H; dealer 6D, TD (16).
    ctx.cards_ok(&round, &["8S", "6D", "8H", "TD"]);
    ctx.decide_refused(
        &round,
        "p1",
        json!({"action": "split", "bet_behind_declines": ["p9"]}),
        "bad_decision",
    );
    let d = ctx.decide_ok(
        &round,
        "p1",
        json!({"action": "split", "bet_behind_declines": ["p3"]}),
    );
    assert_eq!(
        added(&d),
        [
            st("p1", "split", 1, Some(0), false, 1000),
            st("p2", "split", 1, Some(0), true, 300),
        ],
        "{d}"
    );
    ctx.cards_ok(&round, &["3C"]); // hand 0: 11
    let d = ctx.decide_ok(
        &round,
        "p1",
        json!({"action": "double", "bet_behind_declines": ["p3"]}),
    );
    assert_eq!(
        added(&d),
        [
            st("p1", "double", 1, Some(0), false, 1000),
            st("p2", "double", 1, Some(0), true, 300),
        ],
        "{d}"
    );
    ctx.cards_ok(&round, &["TH", "KS"]); // hand 0: 21 doubled; hand 1: 18
    let d = ctx.decide_ok(&round, "p1", json!("stand"));
    assert_eq!(next_of(&d), "card:dealer");
    let end = ctx.cards_ok(&round, &["4C"]); // the dealer's 20
    settled(&end);
    // p1: hand 0 main + double win 1:1, hand 1's split stake loses to 20.
    assert_eq!(total(settlement(&end, &ids[0])), 4000);
    assert_eq!(settlement(&end, &ids[0])["stake_minor"], 3000);
    // p2 followed everything: as the box with 300.
    assert_eq!(total(settlement(&end, &ids[1])), 4 * 300);
    assert_eq!(settlement(&end, &ids[1])["stake_minor"], 900);
    // p3 declined both: 200 on the right-hand hand (21) only, 1:1.
    assert_eq!(total(settlement(&end, &ids[2])), 2 * 200);
    assert_eq!(settlement(&end, &ids[2])["stake_minor"], 200);
    assert_eq!(credited(&end, "p3"), 400);
    ctx.verify_export();
}

/// Evolution: a Bet Behind that cannot fund the box's double "obdrží jednu kartu a poté
/// stojí": its single stake rides the doubled hand, and the one following adds its double.
#[test]
fn an_unfunded_bet_behind_rides_the_doubled_hand_with_its_single_stake() {
    let (_s, ctx) = Ctx::sqlite();
    ctx.open_table("t1", EVOLUTION, "live");
    let (round, ids) = round_ids(
        &ctx,
        "t1",
        json!([
            bet("p1", "main", 2, 1000),
            bet("p2", "bet_behind", 2, 500),
            bet("p3", "bet_behind", 2, 250),
        ]),
    );
    // Box 2 5H 6C (11); dealer TS, 7D (17).
    ctx.cards_ok(&round, &["5H", "TS", "6C", "7D"]);
    let d = ctx.decide_ok(
        &round,
        "p1",
        json!({"action": "double", "bet_behind_declines": ["p2"]}),
    );
    assert_eq!(
        added(&d),
        [
            st("p1", "double", 2, Some(0), false, 1000),
            st("p3", "double", 2, Some(0), true, 250),
        ],
        "{d}"
    );
    let end = ctx.cards_ok(&round, &["9D"]); // 20 against 17
    settled(&end);
    assert_eq!(total(settlement(&end, &ids[0])), 4 * 1000);
    assert_eq!(
        total(settlement(&end, &ids[1])),
        2 * 500,
        "single stake 1:1"
    );
    assert_eq!(total(settlement(&end, &ids[2])), 4 * 250, "doubled 1:1");
}

// ---------------------------------------------------------------------------------------
// Side bets.

/// Seven boxes, one dealer up card 7H, each box a class of Perfect Pairs ("Dokonalý pár"
/// 25:1, "Stejně barevný pár" 12:1, "Smíšený pár" 6:1) and of 21+3 ("Trojice v barvě" 100:1,
/// "Čistá postupka" 40:1, "Trojice" 30:1, "Postupka" 10:1, "Barva" 5:1), in Evolution and ALG.
#[test]
fn perfect_pairs_and_21_plus_3_pay_each_class_by_the_plans_table() {
    let (_s, ctx) = Ctx::sqlite();
    // (first card, second card, Perfect Pairs pays, 21+3 pays) with 7H up; stakes of 100.
    let boxes = [
        ("7H", "7H", 25, Some(100)), // perfect pair; suited trips
        ("5H", "6H", 0, Some(40)),   // straight flush
        ("7S", "7C", 12, Some(30)),  // coloured pair (black); three of a kind
        ("5S", "6D", 0, Some(10)),   // straight
        ("2H", "9H", 0, Some(5)),    // flush
        ("9S", "9D", 6, None),       // mixed pair; no 21+3 hand
        ("2S", "9D", 0, None),       // nothing
    ];
    for (n, plan) in [EVOLUTION, ALG].into_iter().enumerate() {
        let table = format!("t{n}");
        ctx.open_table(&table, plan, "live");
        let mut bets = Vec::new();
        for seat in 1..=7u8 {
            let p = format!("p{seat}");
            bets.push(bet(&p, "main", seat, 100));
            bets.push(bet(&p, "perfect_pairs", seat, 100));
            bets.push(bet(&p, "twenty_one_plus_three", seat, 100));
        }
        let (round, ids) = round_ids(&ctx, &table, json!(bets));
        let mut cards: Vec<&str> = boxes.iter().map(|b| b.0).collect();
        cards.push("7H");
        cards.extend(boxes.iter().map(|b| b.1));
        cards.push("TD"); // the dealer's 17
        let mut reply = ctx.cards_ok(&round, &cards);
        for seat in 1..=7 {
            let p = format!("p{seat}");
            assert_eq!(first_due(&reply), (p.clone(), seat), "{reply}");
            reply = ctx.decide_ok(&round, &p, json!("stand"));
        }
        settled(&reply);
        for (k, (a, b, pp, t)) in boxes.iter().enumerate() {
            let pp_total = if *pp > 0 { 100 + pp * 100 } else { 0 };
            let t_total = t.map_or(0, |r| 100 + r * 100);
            assert_eq!(
                total(settlement(&reply, &ids[3 * k + 1])),
                pp_total,
                "{plan}: Perfect Pairs on {a} {b}: {reply}"
            );
            assert_eq!(
                total(settlement(&reply, &ids[3 * k + 2])),
                t_total,
                "{plan}: 21+3 on {a} {b} 7H: {reply}"
            );
        }
        // Only box 6's 18 beats the dealer's 17.
        assert_eq!(total(settlement(&reply, &ids[15])), 200);
        assert_eq!(
            reply["paid_minor"],
            200 + 2600 + 1300 + 700 + 10_100 + 4_100 + 3_100 + 1_100 + 600
        );
    }
}

/// SYNOT's side bets: 21+3 as above; Top 3 "Trojice v barvě" 270:1, "Postupka v barvě"
/// 180:1, "Trojice" 90:1 (a straight or a flush is no Top 3 hand); "Hráčův pár" 25/12/6:1 on
/// the player's first two cards.
#[test]
fn synot_pays_21_plus_3_top_3_and_the_players_pair_by_class() {
    let (_s, ctx) = Ctx::sqlite();
    ctx.open_table("t1", SYNOT, "live");
    // (first, second, 21+3, Top 3, player pair) with 7H up.
    let boxes = [
        ("7H", "7H", Some(100), Some(270), Some(25)),
        ("5H", "6H", Some(40), Some(180), None),
        ("7S", "7C", Some(30), Some(90), Some(12)),
        ("5S", "6D", Some(10), None, None),
        ("2H", "9H", Some(5), None, None),
        ("9S", "9D", None, None, Some(6)),
        ("2S", "9D", None, None, None),
    ];
    let mut bets = Vec::new();
    for seat in 1..=7u8 {
        let p = format!("p{seat}");
        bets.push(bet(&p, "main", seat, 100));
        bets.push(bet(&p, "twenty_one_plus_three", seat, 100));
        bets.push(bet(&p, "top_3", seat, 100));
        bets.push(bet(&p, "player_pair", seat, 100));
    }
    let (round, ids) = round_ids(&ctx, "t1", json!(bets));
    let mut cards: Vec<&str> = boxes.iter().map(|b| b.0).collect();
    cards.push("7H");
    cards.extend(boxes.iter().map(|b| b.1));
    cards.push("TD");
    let mut reply = ctx.cards_ok(&round, &cards);
    for seat in 1..=7 {
        reply = ctx.decide_ok(&round, &format!("p{seat}"), json!("stand"));
    }
    settled(&reply);
    let pay = |r: Option<i64>| r.map_or(0, |r| 100 + r * 100);
    for (k, (a, b, t213, top3, pair)) in boxes.iter().enumerate() {
        for (i, want, what) in [
            (1, t213, "21+3"),
            (2, top3, "Top 3"),
            (3, pair, "player pair"),
        ] {
            assert_eq!(
                total(settlement(&reply, &ids[4 * k + i])),
                pay(*want),
                "{what} on {a} {b} 7H: {reply}"
            );
        }
    }
}

/// SYNOT "Dealerův pár" on the dealer's first two cards (up and hole): perfect 25:1,
/// coloured 12:1, mixed 6:1, else lost. One round per class.
#[test]
fn synot_pays_the_dealers_pair_on_his_first_two_cards() {
    let (_s, ctx) = Ctx::sqlite();
    ctx.open_table("t1", SYNOT, "live");
    // (up, hole, ratio); the dealer's 16 or 18 with the box's T 9 standing.
    for (up, hole, ratio) in [
        ("8D", "8D", 25),
        ("8D", "8H", 12),
        ("8D", "8C", 6),
        ("8D", "9D", 0),
    ] {
        let (round, ids) = round_ids(
            &ctx,
            "t1",
            json!([bet("p1", "main", 4, 1000), bet("p1", "dealer_pair", 4, 150)]),
        );
        ctx.cards_ok(&round, &["TC", up, "9C", hole]);
        let mut end = ctx.decide_ok(&round, "p1", json!("stand"));
        if end["phase"] != "settled" {
            end = ctx.cards_ok(&round, &["2S"]); // 16 draws to 18
        }
        settled(&end);
        let want = if ratio > 0 { 150 + ratio * 150 } else { 0 };
        assert_eq!(total(settlement(&end, &ids[1])), want, "{up} {hole}: {end}");
    }
}

// ---------------------------------------------------------------------------------------
// Time-outs and disconnection (a decision time of 1.5 s).

/// Evolution "(1) Pokud je celková hodnota karet 11 a méně, … volba Karta. (2) … vyšší než
/// 11, … volba Stát": after the deadline the plan hits 11 and stands on 12; a decision then
/// is `decision_too_late`; `close_decisions` before the deadline is 409; a card after the
/// deadline takes the automatic decision first.
#[test]
fn evolution_times_out_to_a_hit_at_11_or_less_and_a_stand_above() {
    let (_st, plans, ctx) = short_decision_time(&[EVOLUTION]);
    ctx.open_table("t1", EVOLUTION, "live");
    let (round, ids) = round_ids(
        &ctx,
        "t1",
        json!([bet("p1", "main", 1, 1000), bet("p2", "main", 2, 1000)]),
    );
    // Box 1 5H 6C (11), box 2 TH 2C (12); dealer 9S, 6S (15).
    let first = ctx.cards_ok(&round, &["5H", "TH", "9S", "6C", "2C", "6S"]);
    assert!(first["decision_deadline"].is_string(), "{first}");
    let (s, b) = ctx.close_decisions(&round);
    assert_eq!(
        (s, b["code"].as_str()),
        (409, Some("decisions_open")),
        "{b}"
    );
    let_the_time_run_out();
    ctx.decide_refused(&round, "p1", json!("stand"), "decision_too_late");
    let (s, d) = ctx.close_decisions(&round);
    assert_eq!(s, 200, "{d}");
    let i = &d["inputs"][0];
    assert_eq!(i["input"]["input"], "timed_out", "{d}");
    assert_eq!(
        (&i["player"], &i["automatic"], &i["reason"]),
        (&json!("p1"), &json!(true), &json!("time_out"))
    );
    assert_eq!(next_of(&d), "card:hand:0:0", "11 hits: {d}");
    let d = ctx.cards_ok(&round, &["4D"]); // 15: a new decision, in time
    assert_eq!(first_due(&d), ("p1".into(), 1));
    let d = ctx.decide_ok(&round, "p1", json!("stand"));
    assert_eq!(first_due(&d), ("p2".into(), 2));
    let_the_time_run_out();
    // The dealer's card after p2's time: his 12 stands first, then the dealer draws.
    let (s, end) = ctx.cards(&round, &["TD"]);
    assert_eq!(s, 200, "{end}");
    let ins = end["inputs"].as_array().unwrap();
    assert_eq!(ins[0]["input"]["input"], "timed_out", "{end}");
    assert_eq!(ins[0]["player"], "p2");
    assert_eq!(ins[1]["to"]["to"], "dealer", "{end}");
    settled(&end);
    assert_eq!(
        hands(&end, 1)[0]["cards"].as_array().unwrap().len(),
        2,
        "12 stood"
    );
    // The dealer's 25: both standing hands win 1:1.
    assert_eq!(total(settlement(&end, &ids[0])), 2000);
    assert_eq!(total(settlement(&end, &ids[1])), 2000);
    // The automatic decisions replay from the log, with the plans the server ran.
    crate::replay::exported_log_verifies_and_replays_on(&ctx.server, &ctx.auditor, plans.path());
}

/// SYNOT "označí se po uplynutí času na rozhodnutí volba Stát", ALG "uplatní se automatické
/// rozhodnutí „Zastavit“": a hand of 11 stands.
#[test]
fn synot_and_alg_time_out_to_stand_even_on_11() {
    let (_st, plans, ctx) = short_decision_time(&[SYNOT, ALG]);
    let mut rounds = Vec::new();
    for (n, plan) in [SYNOT, ALG].into_iter().enumerate() {
        let table = format!("t{n}");
        ctx.open_table(&table, plan, "live");
        let (round, ids) = round_ids(&ctx, &table, json!([bet("p1", "main", 1, 1000)]));
        // Box 1 5H 6C (11); dealer 9S, 9C (18).
        ctx.cards_ok(&round, &["5H", "9S", "6C", "9C"]);
        rounds.push((plan, round, ids));
    }
    let_the_time_run_out();
    for (plan, round, ids) in rounds {
        let (s, end) = ctx.close_decisions(&round);
        assert_eq!(s, 200, "{end}");
        assert_eq!(
            end["inputs"][0]["input"]["input"], "timed_out",
            "{plan}: {end}"
        );
        settled(&end);
        let h = &hands(&end, 0)[0];
        assert_eq!(
            h["cards"].as_array().unwrap().len(),
            2,
            "{plan}: 11 stood: {end}"
        );
        assert_eq!(
            total(settlement(&end, &ids[0])),
            0,
            "{plan}: 11 loses to 18"
        );
    }
    // The automatic decisions replay from the log, with the plans the server ran.
    crate::replay::exported_log_verifies_and_replays_on(&ctx.server, &ctx.auditor, plans.path());
}

/// The insurance offer closes at its time-out: "nobody who has not answered is insured" (no
/// stake is placed for a silent player or Bet Behind); an answer after it is too late, and
/// the hand's decision time starts then.
#[test]
fn the_insurance_offer_closes_at_its_time_out_and_nobody_silent_is_insured() {
    let (_st, plans, ctx) = short_decision_time(&[ALG]);
    ctx.open_table("t1", ALG, "live");
    let (round, ids) = round_ids(
        &ctx,
        "t1",
        json!([bet("p1", "main", 1, 1000), bet("p2", "bet_behind", 1, 400)]),
    );
    // Box 1 TH 9C (19); dealer AS, 7D (soft 18).
    let first = ctx.cards_ok(&round, &["TH", "AS", "9C", "7D"]);
    assert_eq!(next_of(&first), "insurance");
    let_the_time_run_out();
    ctx.decide_refused(
        &round,
        "p1",
        json!({"action": "insurance", "stake_minor": 500}),
        "decision_too_late",
    );
    let (s, d) = ctx.close_decisions(&round);
    assert_eq!(s, 200, "{d}");
    assert_eq!(d["inputs"][0]["input"]["input"], "close_insurance", "{d}");
    assert_eq!(d["inputs"][0]["automatic"], true);
    assert!(added(&d).is_empty(), "{d}");
    assert_eq!(next_of(&d), "decision:0:0", "{d}");
    ctx.decide_refused(
        &round,
        "p2",
        json!({"action": "insurance", "stake_minor": 200}),
        "no_decision_owed",
    );
    let end = ctx.decide_ok(&round, "p1", json!("stand"));
    settled(&end);
    assert_eq!(
        total(settlement(&end, &ids[0])),
        2000,
        "19 beats 18, no insurance"
    );
    assert_eq!(total(settlement(&end, &ids[1])), 800);
    assert_eq!(end["stake_minor"], 1400, "no insurance stake: {end}");
    // The automatic decisions replay from the log, with the plans the server ran.
    crate::replay::exported_log_verifies_and_replays_on(&ctx.server, &ctx.auditor, plans.path());
}

/// "ať už z důvodu odpojení nebo nepřítomnosti sázejícího, uplatní se … automatická
/// rozhodnutí": a disconnected player's decision is refused; when his time runs out the plan
/// decides for him (Evolution: 9 hits, 19 stands) with reason `disconnected`; his bets stand
/// and are settled.
#[test]
fn a_disconnected_players_hand_is_decided_by_the_plan_when_his_time_runs_out() {
    let (_st, plans, ctx) = short_decision_time(&[EVOLUTION]);
    ctx.open_table("t1", EVOLUTION, "live");
    let (round, ids) = round_ids(
        &ctx,
        "t1",
        json!([bet("p1", "main", 1, 1000), bet("p2", "main", 2, 1000)]),
    );
    // Box 1 5H 4C (9), box 2 TH 8C (18); dealer 7S, TS (17).
    ctx.cards_ok(&round, &["5H", "TH", "7S", "4C", "8C", "TS"]);
    ctx.connection("t1", "p1", false);
    ctx.decide_refused(&round, "p1", json!("hit"), "player_disconnected");
    let_the_time_run_out();
    let (s, d) = ctx.close_decisions(&round);
    assert_eq!(s, 200, "{d}");
    let i = &d["inputs"][0];
    assert_eq!(i["input"]["input"], "timed_out");
    assert_eq!(
        (&i["player"], &i["reason"]),
        (&json!("p1"), &json!("disconnected")),
        "{d}"
    );
    assert_eq!(next_of(&d), "card:hand:0:0", "9 hits: {d}");
    let d = ctx.cards_ok(&round, &["TD"]); // 19
    assert_eq!(first_due(&d), ("p1".into(), 1));
    let_the_time_run_out();
    let (s, d) = ctx.close_decisions(&round);
    assert_eq!(s, 200, "{d}");
    assert_eq!(d["inputs"][0]["reason"], "disconnected", "{d}");
    assert_eq!(first_due(&d), ("p2".into(), 2), "19 stood: {d}");
    let end = ctx.decide_ok(&round, "p2", json!("stand"));
    settled(&end);
    assert_eq!(hands(&end, 0)[0]["total"], 19);
    assert_eq!(total(settlement(&end, &ids[0])), 2000, "19 beats 17");
    assert_eq!(total(settlement(&end, &ids[1])), 2000, "18 beats 17");
    // The automatic decisions replay from the log, with the plans the server ran.
    crate::replay::exported_log_verifies_and_replays_on(&ctx.server, &ctx.auditor, plans.path());
}

// ---------------------------------------------------------------------------------------
// Void.

/// "V takovém případě se sázejícím vrací podané sázky": a round voided mid-play returns every
/// stake, the insurance, split and double stakes added by decisions and the Bet Behind's
/// followed stakes included.
#[test]
fn a_void_mid_round_returns_every_stake_including_those_decisions_added() {
    let (_s, ctx) = Ctx::sqlite();
    ctx.open_table("t1", SYNOT, "live");
    let (round, _ids) = round_ids(
        &ctx,
        "t1",
        json!([
            bet("p1", "main", 1, 1000),
            bet("p1", "player_pair", 1, 100),
            bet("p2", "bet_behind", 1, 400),
        ]),
    );
    // Box 1 8S 8H; dealer AS, 6D.
    ctx.cards_ok(&round, &["8S", "AS", "8H", "6D"]);
    ctx.decide_ok(
        &round,
        "p1",
        json!({"action": "insurance", "stake_minor": 500}),
    );
    ctx.decide_ok(&round, "p1", json!("split"));
    ctx.cards_ok(&round, &["3C"]);
    let d = ctx.decide_ok(&round, "p1", json!("double")); // SYNOT: after a split
    assert_eq!(added_stakes(&d, "p2"), 400, "{d}");
    let v = ctx.void(&round, "dealer error");
    assert_eq!(v["phase"], "voided", "{v}");
    let refunds = v["refunds"].as_array().unwrap();
    let of = |p: &str| -> i64 {
        refunds
            .iter()
            .filter(|r| r["player"] == p)
            .map(|r| r["refund_minor"].as_i64().unwrap())
            .sum()
    };
    // p1: main, pair, insurance, split, double; p2: Bet Behind, its split and double.
    assert_eq!(of("p1"), 1000 + 100 + 500 + 1000 + 1000, "{v}");
    assert_eq!(of("p2"), 400 + 400 + 400, "{v}");
    assert_eq!(refunds.len(), 3 + 1 + 2 + 2, "{v}");
    assert_eq!(v["refund_minor"], 3600 + 1200);
    // The table goes on; the log with the void and the next round verifies and replays (the
    // replay re-derives the refunds).
    let (round, ids) = round_ids(&ctx, "t1", json!([bet("p1", "main", 1, 1000)]));
    ctx.cards_ok(&round, &["TC", "7D", "9C", "TD"]);
    let end = ctx.decide_ok(&round, "p1", json!("stand"));
    assert_eq!(total(settlement(&end, &ids[0])), 2000, "19 beats 17");
    ctx.verify_export();
}

// ---------------------------------------------------------------------------------------
// RNG.

/// A card's blackjack value with aces as 1 (the test's own reading, not the engine's).
fn card_value(card: &str) -> u32 {
    match card.chars().next().unwrap() {
        'A' => 1,
        'T' | 'J' | 'Q' | 'K' => 10,
        c => c.to_digit(10).unwrap(),
    }
}

/// (best total, soft): an ace counts 11 where that does not bust.
fn hand_total(cards: &[String]) -> (u32, bool) {
    let hard: u32 = cards.iter().map(|c| card_value(c)).sum();
    if cards.iter().any(|c| c.starts_with('A')) && hard + 10 <= 21 {
        (hard + 10, true)
    } else {
        (hard, false)
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect()
}

fn natural(cards: &[String]) -> bool {
    cards.len() == 2 && hand_total(cards).0 == 21
}

/// What one stake of `stake` on a hand pays back, from the hand and the dealer's cards by the
/// plans' rows (all three alike): blackjack 3:2, win 1:1, push back, surrender half back
/// (kept against a dealer blackjack), a dealer blackjack takes everything else, double 1:1.
fn hand_pays(hand: &Value, dealer: &[String], stake: i64) -> i64 {
    let cards = strings(&hand["cards"]);
    let (p, _) = hand_total(&cards);
    let (d, _) = hand_total(dealer);
    let dealer_bj = natural(dealer);
    let doubled = hand["doubled"] == true;
    let stakes = if doubled { 2 } else { 1 };
    if hand["surrendered"] == true {
        return half_up(stake);
    }
    if p > 21 {
        return 0;
    }
    let player_bj = natural(&cards) && hand["from_split"] != true && !doubled;
    if player_bj {
        return if dealer_bj { stake } else { pays(stake, 3, 2) };
    }
    if dealer_bj {
        return 0;
    }
    if d > 21 || p > d {
        2 * stake * stakes
    } else if p == d {
        stake * stakes
    } else {
        0
    }
}

fn pair_ratio(a: &str, b: &str) -> i64 {
    let (ra, sa) = (a.chars().next().unwrap(), a.chars().last().unwrap());
    let (rb, sb) = (b.chars().next().unwrap(), b.chars().last().unwrap());
    let red = |s: char| s == 'h' || s == 'd';
    if ra != rb {
        0
    } else if sa == sb {
        25
    } else if red(sa) == red(sb) {
        12
    } else {
        6
    }
}

fn rank_number(c: &str) -> u32 {
    match c.chars().next().unwrap() {
        'A' => 14,
        'K' => 13,
        'Q' => 12,
        'J' => 11,
        'T' => 10,
        d => d.to_digit(10).unwrap(),
    }
}

/// 21+3 by the document's classes (a straight may run A-2-3 or Q-K-A).
fn poker3_ratio(three: [&str; 3]) -> i64 {
    let suited = three
        .iter()
        .all(|c| c.chars().last() == three[0].chars().last());
    let trips = three
        .iter()
        .all(|c| c.chars().next() == three[0].chars().next());
    let mut n: Vec<u32> = three.iter().map(|c| rank_number(c)).collect();
    n.sort_unstable();
    let straight = (n[1] == n[0] + 1 && n[2] == n[1] + 1) || n == [2, 3, 14];
    match (trips, straight, suited) {
        (true, _, true) => 100,
        (_, true, true) => 40,
        (true, _, false) => 30,
        (_, true, false) => 10,
        (false, false, true) => 5,
        _ => 0,
    }
}

/// One RNG round of `plan` at `table`, played to the end by a fixed policy; every check that
/// holds whatever the cards. Returns the number of decisions taken.
fn play_rng_round(ctx: &Ctx, table: &str, plan: &str) -> usize {
    use sha2::{Digest, Sha256};
    let pair_bet = if plan == SYNOT {
        "player_pair"
    } else {
        "perfect_pairs"
    };
    let (s, opened) = ctx
        .server
        .post(&ctx.op, &format!("/v1/tables/{table}/rounds"), json!({}));
    assert_eq!(s, 201, "{opened}");
    let round = opened["round"].as_str().unwrap().to_string();
    let commitment = opened["rng_commitment"]
        .as_str()
        .expect("commitment")
        .to_string();
    let placed = ctx.accepted_bets(
        &round,
        json!([
            bet("p1", "main", 2, 1000),
            bet("p1", pair_bet, 2, 100),
            bet("p1", "twenty_one_plus_three", 2, 100),
            bet("p3", "bet_behind", 2, 400),
            bet("p2", "main", 5, 600),
        ]),
    );
    let ids = ids(&placed);
    ctx.close_betting(&round);
    let mut inputs: Vec<Value> = Vec::new();
    let (s, mut reply) = ctx.deal(&round);
    assert_eq!(s, 200, "{reply}");
    let mut decisions = 0;
    let mut insured: [Option<i64>; 2] = [None, None]; // box 2's owner, its Bet Behind
    for _ in 0..40 {
        inputs.extend(reply["inputs"].as_array().cloned().unwrap_or_default());
        if reply["phase"] == "settled" {
            break;
        }
        let dues = due(&reply);
        if dues.is_empty() {
            let (s, b) = ctx.deal(&round);
            assert_eq!(s, 200, "{b}");
            reply = b;
            continue;
        }
        let d = &dues[0];
        let player = d["player"].as_str().unwrap().to_string();
        let (decision, implied): (Value, Vec<(&str, i64)>) = if d["insurance"] == true {
            // Box 2's owner and its Bet Behind take exactly half; p2 declines.
            let stake = match (player.as_str(), d["bet_behind"] == true) {
                ("p1", false) => Some(500),
                ("p3", true) => Some(200),
                _ => None,
            };
            match stake {
                Some(s) => {
                    insured[usize::from(player == "p3")] = Some(s);
                    (
                        json!({"action": "insurance", "stake_minor": s}),
                        vec![(if player == "p3" { "p3" } else { "p1" }, s)],
                    )
                }
                None => (json!({"action": "no_insurance"}), vec![]),
            }
        } else {
            let legal = strings(&d["legal"]);
            let total = d["total"].as_u64().unwrap();
            let has = |x: &str| legal.iter().any(|l| l == x);
            let action = if has("split") {
                "split"
            } else if has("double") && (9..=11).contains(&total) {
                "double"
            } else if has("surrender") && total == 16 {
                "surrender"
            } else if total < 17 {
                "hit"
            } else {
                "stand"
            };
            let main = if player == "p1" { 1000 } else { 600 };
            let implied = match action {
                "split" | "double" if player == "p1" => vec![("p1", main), ("p3", 400)],
                "split" | "double" => vec![("p2", main)],
                _ => vec![],
            };
            (
                json!({"action": action, "seat": d["seat"], "hand": d["hand"]}),
                implied,
            )
        };
        let b = ctx.decide_ok(&round, &player, decision.clone());
        decisions += 1;
        for p in ["p1", "p2", "p3"] {
            let want: i64 = implied.iter().filter(|(q, _)| *q == p).map(|x| x.1).sum();
            assert_eq!(added_stakes(&b, p), want, "{p} after {decision}: {b}");
        }
        reply = b;
    }
    settled(&reply);
    let seed_hex = reply["rng_seed"]
        .as_str()
        .unwrap_or_else(|| panic!("{plan} {round}: no seed revealed: {reply}"));
    let seed: Vec<u8> = (0..64)
        .step_by(2)
        .map(|i| u8::from_str_radix(&seed_hex[i..i + 2], 16).unwrap())
        .collect();
    let digest: String = Sha256::digest(&seed)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(digest, commitment, "the seed is the committed one");
    let shoe = pitboss::games::blackjack::shuffled_shoe(
        blackjack_rules(plan).shoe,
        seed.try_into().unwrap(),
    );
    // The hole card the replies withheld is the round's, once the dealer played.
    let all = crate::bj::dealt_of_finished(ctx, &round);
    let dealt: Vec<String> = inputs
        .iter()
        .filter(|i| i["input"]["input"] == "card" || crate::bj::is_hidden_hole_card(i))
        .enumerate()
        .map(|(k, i)| {
            i["input"]["card"]
                .as_str()
                .map_or_else(|| all[k].clone(), str::to_string)
        })
        .collect();
    let from_shoe: Vec<String> = shoe[..dealt.len()]
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        dealt, from_shoe,
        "{plan} {round}: the cards are the seed's shoe"
    );
    let round_state = ctx.round(&round);
    assert_eq!(
        strings(&round_state["blackjack"]["play"]["dealt"]),
        dealt,
        "{round_state}"
    );

    // The dealer drew to 16 and stood on 17, soft 17 included.
    let dealer = strings(&reply["outcome"]["dealer"]["cards"]);
    for k in 2..dealer.len() {
        assert!(
            hand_total(&dealer[..k]).0 < 17,
            "{plan}: drew on {:?}",
            &dealer[..k]
        );
    }
    assert!(hand_total(&dealer).0 >= 17, "{plan}: stood on {dealer:?}");
    let dealer_bj = natural(&dealer);

    // Box 2 (position 0): p1's play, p1's side bets, p3's Bet Behind; box 5: p2's play.
    let ins_pay = |s: Option<i64>| s.map_or(0, |s| if dealer_bj { 3 * s } else { 0 });
    let box2 = hands(&reply, 0);
    let box5 = hands(&reply, 1);
    let p1_main: i64 = box2
        .iter()
        .map(|h| hand_pays(h, &dealer, 1000))
        .sum::<i64>()
        + ins_pay(insured[0]);
    let p3_bb: i64 =
        box2.iter().map(|h| hand_pays(h, &dealer, 400)).sum::<i64>() + ins_pay(insured[1]);
    let p2_main: i64 = box5.iter().map(|h| hand_pays(h, &dealer, 600)).sum();
    assert_eq!(
        total(settlement(&reply, &ids[0])),
        p1_main,
        "{plan}: box 2: {reply}"
    );
    assert_eq!(
        total(settlement(&reply, &ids[3])),
        p3_bb,
        "{plan}: Bet Behind: {reply}"
    );
    assert_eq!(
        total(settlement(&reply, &ids[4])),
        p2_main,
        "{plan}: box 5: {reply}"
    );
    // The side bets on the first pass: box 2's cards are the 1st and 4th dealt, the dealer's
    // up card the 3rd.
    let (a, b, up) = (&dealt[0], &dealt[3], &dealt[2]);
    let pp = pair_ratio(a, b);
    assert_eq!(
        total(settlement(&reply, &ids[1])),
        if pp > 0 { 100 + pp * 100 } else { 0 },
        "{plan}: pair on {a} {b}"
    );
    let t = poker3_ratio([a, b, up]);
    assert_eq!(
        total(settlement(&reply, &ids[2])),
        if t > 0 { 100 + t * 100 } else { 0 },
        "{plan}: 21+3 on {a} {b} {up}"
    );
    // The round's stakes: the bets placed and every stake the decisions added.
    let added_all: i64 = inputs
        .iter()
        .flat_map(|i| i["bets"].as_array().cloned().unwrap_or_default())
        .map(|b| b["placement"]["stake_minor"].as_i64().unwrap())
        .sum();
    assert_eq!(
        reply["stake_minor"],
        1000 + 100 + 100 + 400 + 600 + added_all
    );
    decisions
}

/// RNG, each plan: rounds dealt from the committed seed and played to the end by a fixed
/// policy (insure half on an ace, split every pair, double 9–11, surrender 16, hit below 17):
/// the cards are the revealed seed's shoe in dealing order, the dealer's drawing follows the
/// plan, every settlement is what the plan's ratios make of the hands, the stakes added are
/// those the decisions imply, and the export verifies.
#[test]
fn rng_rounds_deal_the_revealed_seeds_shoe_and_settle_by_the_plans_ratios() {
    let (_s, ctx) = Ctx::sqlite();
    let mut decisions = 0;
    for (n, plan) in [EVOLUTION, SYNOT, ALG].into_iter().enumerate() {
        let table = format!("t{n}");
        ctx.open_table(&table, plan, "rng");
        for _ in 0..6 {
            decisions += play_rng_round(&ctx, &table, plan);
        }
    }
    assert!(
        decisions >= 18,
        "the policy decided {decisions} times in 18 rounds"
    );
    ctx.verify_export();
}

// ---------------------------------------------------------------------------------------
// Storage.

/// A whole live round on PostgreSQL: bets, a split followed by a Bet Behind, the dealer's
/// draw, the settlement; the export verifies and replays.
#[test]
fn a_live_round_on_postgresql_settles_and_its_export_verifies() {
    let storage = Storage::new(Backend::Postgres);
    let ctx = Ctx::start(&storage);
    ctx.open_table("t1", ALG, "live");
    let (round, ids) = round_ids(
        &ctx,
        "t1",
        json!([
            bet("p1", "main", 3, 1000),
            bet("p1", "perfect_pairs", 3, 100),
            bet("p2", "bet_behind", 3, 500),
        ]),
    );
    // Box 3 9H 9S (a mixed pair); dealer 6C, TC (16).
    ctx.cards_ok(&round, &["9H", "6C", "9S", "TC"]);
    let d = ctx.decide_ok(&round, "p1", json!("split"));
    assert_eq!(added_stakes(&d, "p2"), 500);
    ctx.cards_ok(&round, &["TS"]); // 19
    ctx.decide_ok(&round, "p1", json!("stand"));
    ctx.cards_ok(&round, &["8S"]); // 17
    ctx.decide_ok(&round, "p1", json!("stand"));
    let end = ctx.cards_ok(&round, &["6S"]); // the dealer's 22
    settled(&end);
    assert_eq!(total(settlement(&end, &ids[0])), 4000);
    assert_eq!(total(settlement(&end, &ids[1])), 100 + 6 * 100);
    assert_eq!(total(settlement(&end, &ids[2])), 2000);
    ctx.verify_export();
}

/// The service killed mid-round with a split due, and again with the split's hands awaiting
/// their cards: each new process rebuilds the round from the log (the same state, what it
/// awaits, the deadline), and the round goes on and settles as it would have.
#[test]
fn a_round_killed_with_a_split_pending_continues_identically_after_a_restart() {
    let storage = Storage::new(Backend::Sqlite);
    let mut ctx = Ctx::start(&storage);
    ctx.open_table("t1", SYNOT, "live");
    let (round, ids) = round_ids(
        &ctx,
        "t1",
        json!([
            bet("p1", "main", 1, 1000),
            bet("p2", "bet_behind", 1, 300),
            bet("p3", "main", 2, 1000),
        ]),
    );
    // Box 1 8S 8H, box 2 TC 7C (17); dealer 6D, TD (16).
    let first = ctx.cards_ok(&round, &["8S", "TC", "6D", "8H", "7C", "TD"]);
    assert_eq!(next_of(&first), "decision:0:0");
    let restart = |ctx: &mut Ctx| {
        let before = ctx.round(&round);
        ctx.server.kill();
        let server = TestServer::on(&storage);
        *ctx = Ctx::with_server(server);
        let after = ctx.round(&round);
        for field in [
            "blackjack",
            "bets",
            "decision_deadline",
            "decisions_pending",
            "phase",
        ] {
            assert_eq!(before[field], after[field], "{field} after the restart");
        }
    };
    restart(&mut ctx);
    let d = ctx.decide_ok(&round, "p1", json!("split"));
    assert_eq!(added_stakes(&d, "p1"), 1000);
    assert_eq!(added_stakes(&d, "p2"), 300);
    assert_eq!(next_of(&d), "card:hand:0:0");
    restart(&mut ctx);
    let d = ctx.cards_ok(&round, &["3H"]); // hand 0: 11
    assert_eq!(next_of(&d), "decision:0:0", "{d}");
    ctx.decide_ok(&round, "p1", json!("double")); // SYNOT: after a split
    ctx.cards_ok(&round, &["9S", "KH"]); // hand 0: 20 doubled; hand 1: 18
    ctx.decide_ok(&round, "p1", json!("stand"));
    ctx.decide_ok(&round, "p3", json!("stand"));
    let end = ctx.cards_ok(&round, &["2C"]); // the dealer's 18
    settled(&end);
    // Hand 0: 20 doubled beats 18; hand 1: 18 pushes. Box 2: 17 loses.
    assert_eq!(total(settlement(&end, &ids[0])), 2 * 1000 + 2 * 1000 + 1000);
    assert_eq!(total(settlement(&end, &ids[1])), 2 * 300 + 2 * 300 + 300);
    assert_eq!(total(settlement(&end, &ids[2])), 0);
    ctx.verify_export();
}
