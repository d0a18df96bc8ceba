//! Blackjack through the API, the common-hand games of 002: Infinite Blackjack (Evolution),
//! All Bets Blackjack (SYNOT Interactive) and BLACKJACK – ENDLESS (Absolute live gaming), live
//! and RNG. One hand is dealt for any number of players ("hraje neomezený počet sázejících"),
//! each decides on his own view of it, and is settled from his own hands.
//!
//! Every amount is worked out here from the plan's payout rows (`ratio`, `refund`) and the
//! cards chosen; the engine's settlement is compared with it, never with itself.

use std::time::Duration;

use pitboss::games::blackjack::shuffled_shoe;
use pitboss::money::Rounding;
use pitboss::plan::rules::blackjack::BlackjackRules;
use pitboss::plan::rules::GameRules;
use pitboss::plan::LoadedPlan;
use serde_json::{json, Value};

use crate::bj::{added_stakes, common, credited, next_of, settlement, Ctx};
use crate::server::{Backend, Storage, TestServer, ADMIN_KEY};
use crate::source::{plan, plans_with, ratio, refund};

const INF: &str = "evolution-infinite-blackjack@1";
const AB: &str = "synot-all-bets-blackjack@1";
const END: &str = "alg-blackjack-endless@1";
const PLANS: [&str; 3] = [INF, AB, END];

// ---------------------------------------------------------------------------------------------
// Helpers: money from the plan's rows, cards, decisions.

fn rules(p: &LoadedPlan) -> &BlackjackRules {
    match &p.plan.rules {
        GameRules::Blackjack(r) => r,
        other => panic!("{}: not blackjack rules: {other:?}", p.key()),
    }
}

/// `num / den` rounded half up, the plans' `rounding` (asserted).
fn half_up(p: &LoadedPlan, num: i64, den: i64) -> i64 {
    assert_eq!(p.plan.plan.rounding, Rounding::HalfUp, "{}", p.key());
    (2 * num + den) / (2 * den)
}

/// What a winning stake is credited by the plan's row `bet`/`outcome`: the stake back and the
/// win at the row's ratio.
fn paid(p: &LoadedPlan, bet: &str, outcome: &str, stake: i64) -> i64 {
    let (n, d) = ratio(p, bet, outcome);
    stake + half_up(p, stake * n as i64, d as i64)
}

/// What a refund row (`push`, `surrender`, Bust It on a player blackjack) returns of `stake`.
fn back(p: &LoadedPlan, bet: &str, outcome: &str, stake: i64) -> i64 {
    let (n, d) = refund(p, bet, outcome);
    half_up(p, stake * n as i64, d as i64)
}

/// Whether the plan's row `bet`/`outcome` is a refund (rather than a win).
fn is_refund_row(p: &LoadedPlan, bet: &str, outcome: &str) -> bool {
    p.plan
        .payouts
        .iter()
        .any(|r| r.bet == bet && r.outcome == outcome && r.refund.is_some())
}

/// What a stake settled by the plan's row `bet`/`outcome` is credited (`None`: it loses).
fn credit_of(p: &LoadedPlan, bet: &str, outcome: Option<&str>, stake: i64) -> i64 {
    match outcome {
        None => 0,
        Some(o) if is_refund_row(p, bet, o) => back(p, bet, o, stake),
        Some(o) => paid(p, bet, o, stake),
    }
}

/// `"5H"` as replies write it: `"5h"`.
fn lc(card: &str) -> String {
    let mut s = card[..1].to_string();
    s.push_str(&card[1..].to_lowercase());
    s
}

fn lcs(cards: &[&str]) -> Vec<String> {
    cards.iter().map(|c| lc(c)).collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|c| c.as_str().expect("string").to_string())
        .collect()
}

/// The outcome's position of `player`.
fn position<'a>(reply: &'a Value, player: &str) -> &'a Value {
    reply["outcome"]["positions"]
        .as_array()
        .unwrap_or_else(|| panic!("no outcome: {reply}"))
        .iter()
        .find(|p| p["player"] == player)
        .unwrap_or_else(|| panic!("{player} has no position: {reply}"))
}

/// The cards of `player`'s hand `hand` in a settled round.
fn hand_cards(reply: &Value, player: &str, hand: usize) -> Vec<String> {
    strings(&position(reply, player)["hands"][hand]["cards"])
}

/// The players `expected.due` lists, in order.
fn due_players(reply: &Value) -> Vec<String> {
    reply["expected"]["due"]
        .as_array()
        .unwrap_or_else(|| panic!("no expected.due: {reply}"))
        .iter()
        .map(|d| d["player"].as_str().expect("player").to_string())
        .collect()
}

/// The due entry of `player`.
fn due_of<'a>(reply: &'a Value, player: &str) -> &'a Value {
    reply["expected"]["due"]
        .as_array()
        .unwrap_or_else(|| panic!("no expected.due: {reply}"))
        .iter()
        .find(|d| d["player"] == player)
        .unwrap_or_else(|| panic!("nothing due from {player}: {reply}"))
}

fn legal_of(reply: &Value, player: &str) -> Vec<String> {
    strings(&due_of(reply, player)["legal"])
}

/// The applied inputs of a reply that are cards: (card, where it went).
fn card_inputs(reply: &Value) -> Vec<(String, Value)> {
    reply["inputs"]
        .as_array()
        .map(|v| {
            v.iter()
                .filter(|i| i["input"]["input"] == "card" || crate::bj::is_hidden_hole_card(i))
                .map(|i| {
                    (
                        // The hole card, face down to the operator: its place, not its card.
                        i["input"]["card"].as_str().unwrap_or("hidden").to_string(),
                        i["to"].clone(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Several players' decisions in one request, every one of which must be taken.
fn decide_all(ctx: &Ctx, round: &str, ds: &[(&str, Value)]) -> Value {
    let body: Vec<Value> = ds
        .iter()
        .map(|(p, d)| json!({"player": p, "decision": d}))
        .collect();
    let (s, b) = ctx.decide(round, json!(body));
    assert_eq!(s, 200, "{b}");
    for (i, (p, d)) in ds.iter().enumerate() {
        assert_eq!(b["decisions"][i]["status"], "taken", "{p} {d}: {b}");
    }
    b
}

/// Each player's main bet of `stake`.
fn mains(players: &[&str], stake: i64) -> Value {
    json!(players
        .iter()
        .map(|p| common(p, "main", stake))
        .collect::<Vec<_>>())
}

/// A live round at a freshly shuffled shoe (so that the rounds of a test never run out of a
/// card), its bets accepted and betting closed.
fn live_round(ctx: &Ctx, table: &str, bets: Value) -> String {
    let (s, b) = ctx.server.post(
        &ctx.op,
        &format!("/v1/tables/{table}/shoe"),
        json!({"action": "shuffle"}),
    );
    assert_eq!(s, 200, "{b}");
    ctx.round_with(table, bets)
}

fn settled(reply: &Value) {
    assert_eq!(reply["phase"], "settled", "{reply}");
}

/// A table of each plan: `inf`, `ab`, `end`.
fn tables(ctx: &Ctx, mode: &str) -> Vec<(&'static str, LoadedPlan)> {
    PLANS
        .iter()
        .zip(["inf", "ab", "end"])
        .map(|(key, table)| {
            ctx.open_table(table, key, mode);
            (table, plan(key))
        })
        .collect()
}

/// A server on plans whose decision time is 1.5 s.
fn short_time_ctx(storage: &Storage) -> (tempfile::TempDir, Ctx) {
    let edit: &[(&str, &str)] = &[("decision_ms = 15_000", "decision_ms = 1_500")];
    let plans = plans_with(&[
        ("evolution-infinite-blackjack@1.toml", edit),
        ("synot-all-bets-blackjack@1.toml", edit),
        ("alg-blackjack-endless@1.toml", edit),
    ]);
    let server = TestServer::spawn(plans.path(), storage, &[("PITBOSS_ADMIN_KEY", ADMIN_KEY)]);
    (plans, Ctx::with_server(server))
}

/// The audit export's entries of `kind` (their payloads, with the ids put back).
fn exported(ctx: &Ctx, kind: &str) -> Vec<Value> {
    let (s, export) = ctx.server.get_text(Some(&ctx.auditor), "/v1/audit/export");
    assert_eq!(s, 200, "{export}");
    export
        .lines()
        .skip(1)
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["kind"] == kind)
        .map(|v| pitboss::round::payload_of_entry(&v))
        .collect()
}

fn table_state(ctx: &Ctx, table: &str) -> Value {
    let (s, _, b) = ctx
        .server
        .get_as(Some(&ctx.op), &format!("/v1/tables/{table}"));
    assert_eq!(s, 200, "{b}");
    b
}

// ---------------------------------------------------------------------------------------------
// Bets.

/// "Na hracím plátně je virtuálně vyznačen 1 box": a bet at a common-hand table names no box;
/// one that does is refused `seat_required`, and any number of players bet on the one hand.
#[test]
fn a_common_hand_bet_names_no_seat_and_any_number_of_players_bet() {
    let (_s, ctx) = Ctx::sqlite();
    for (t, p) in tables(&ctx, "live") {
        assert!(
            rules(&p).seating.max_players.is_none(),
            "{t}: unlimited players"
        );
        let round = ctx.open_round(t);
        let b = ctx.bets(
            &round,
            json!([{"player": "p1", "bet": "main", "seat": 1, "stake_minor": 1000}]),
        );
        assert_eq!(b["results"][0]["status"], "refused", "{b}");
        assert_eq!(b["results"][0]["code"], "no_seats", "{b}");
        let players: Vec<String> = (1..=40).map(|i| format!("p{i}")).collect();
        let names: Vec<&str> = players.iter().map(String::as_str).collect();
        let b = ctx.accepted_bets(&round, mains(&names, 1000));
        assert_eq!(b["results"][39]["bet"], format!("{round}.40"), "{b}");
    }
}

/// "Vedlejší sázky lze podávat (jen) v kombinaci s hlavní sázkou": a side bet needs the
/// player's own main bet (another player's does not do), and a player bets main once.
#[test]
fn side_bets_need_the_players_own_main_bet() {
    let (_s, ctx) = Ctx::sqlite();
    for (t, p) in tables(&ctx, "live") {
        let round = ctx.open_round(t);
        ctx.accepted_bets(&round, json!([common("p2", "main", 1000)]));
        for sb in &rules(&p).side_bets {
            let b = ctx.bets(&round, json!([common("p1", &sb.id, 100)]));
            assert_eq!(
                b["results"][0]["code"], "requires_missing",
                "{t} {}: {b}",
                sb.id
            );
        }
        // In one request: the side bet before the main bet is refused, after it accepted.
        let first = &rules(&p).side_bets[0].id;
        let b = ctx.bets(
            &round,
            json!([
                common("p1", first, 100),
                common("p1", "main", 1000),
                common("p1", first, 100)
            ]),
        );
        assert_eq!(b["results"][0]["code"], "requires_missing", "{b}");
        assert_eq!(b["results"][1]["status"], "accepted", "{b}");
        assert_eq!(b["results"][2]["status"], "accepted", "{b}");
        let others: Vec<Value> = rules(&p).side_bets[1..]
            .iter()
            .map(|sb| common("p1", &sb.id, 100))
            .collect();
        ctx.accepted_bets(&round, json!(others));
        let b = ctx.bets(&round, json!([common("p1", "main", 1000)]));
        assert_eq!(b["results"][0]["code"], "duplicate_bet", "{t}: {b}");
    }
}

/// One common hand has no other player's box to bet behind: every common-hand plan refuses a
/// Bet Behind (`bet_behind.allowed = false`) with its reason.
#[test]
fn no_bet_behind_at_a_common_hand() {
    let (_s, ctx) = Ctx::sqlite();
    for (t, p) in tables(&ctx, "live") {
        assert!(!rules(&p).bet_behind.allowed, "{t}");
        let round = ctx.open_round(t);
        ctx.accepted_bets(&round, json!([common("p1", "main", 1000)]));
        let b = ctx.bets(&round, json!([common("p2", "bet_behind", 1000)]));
        let r = &b["results"][0];
        assert_eq!(r["code"], "bet_behind_not_allowed", "{t}: {b}");
        assert!(
            r["detail"]
                .as_str()
                .is_some_and(|d| d.contains("offers no Bet Behind")),
            "{b}"
        );
        assert_eq!(r["plan"], p.key(), "{b}");
    }
}

/// The limits are each plan's table: the main bet's maximum is accepted, a haléř more or
/// less than the limits refused.
#[test]
fn bet_limits_are_each_plans_limits_table() {
    let (_s, ctx) = Ctx::sqlite();
    for (t, p) in tables(&ctx, "live") {
        let row = |id: &str| {
            p.plan
                .bets
                .iter()
                .find(|b| b.id == id)
                .unwrap_or_else(|| panic!("{t}: no bet {id}"))
        };
        let main = row("main");
        let pp = row("perfect_pairs");
        let round = ctx.open_round(t);
        let b = ctx.bets(
            &round,
            json!([
                common("p1", "main", main.max_bet + 1),
                common("p2", "main", main.min_bet - 1),
                common("p3", "main", main.max_bet),
                common("p3", "perfect_pairs", pp.max_bet + 1),
                common("p3", "perfect_pairs", pp.max_bet),
            ]),
        );
        let codes: Vec<&Value> = (0..5).map(|i| &b["results"][i]["code"]).collect();
        assert_eq!(codes[0], "above_max_bet", "{t}: {b}");
        assert_eq!(codes[1], "below_min_bet", "{t}: {b}");
        assert_eq!(b["results"][2]["status"], "accepted", "{t}: {b}");
        assert_eq!(codes[3], "above_max_bet", "{t}: {b}");
        assert_eq!(b["results"][4]["status"], "accepted", "{t}: {b}");
    }
}

// ---------------------------------------------------------------------------------------------
// The common hand.

/// Every player takes the same first two cards ("Sázejícímu rozdá krupiér dvě karty"), and
/// all decide at once, each on his own hand: the reply lists every player due; a player who
/// decided is no longer due while the others still are.
#[test]
fn every_player_takes_the_same_first_two_cards_and_all_decide_at_once() {
    let (_s, ctx) = Ctx::sqlite();
    let players: Vec<String> = (1..=12).map(|i| format!("p{i}")).collect();
    let names: Vec<&str> = players.iter().map(String::as_str).collect();
    for (t, p) in tables(&ctx, "live") {
        let round = live_round(&ctx, t, mains(&names, 1000));
        let first = ctx.cards_ok(&round, &["9S", "TC", "3D", "7H"]);
        assert_eq!(first["phase"], "decisions", "{t}: {first}");
        let to: Vec<Value> = card_inputs(&first).into_iter().map(|(_, to)| to).collect();
        assert_eq!(
            to,
            vec![
                json!({"to": "common_hand"}),
                json!({"to": "dealer"}),
                json!({"to": "common_hand"}),
                json!({"to": "dealer"}),
            ],
            "{t}: {first}"
        );
        assert_eq!(due_players(&first), players, "{t}: {first}");
        assert_eq!(strings(&first["decisions_pending"]), players, "{first}");
        for d in first["expected"]["due"].as_array().unwrap() {
            assert_eq!(strings(&d["cards"]), lcs(&["9S", "3D"]), "{d}");
            assert_eq!(d["total"], 12, "{d}");
        }
        // The even players stand on 12, the odd ones hit: each decides for himself, in any
        // order, in as many requests as the operator likes.
        let d = decide_all(
            &ctx,
            &round,
            &[("p12", json!("stand")), ("p1", json!("hit"))],
        );
        let still: Vec<String> = players[1..11].to_vec();
        assert_eq!(due_players(&d), still, "{d}");
        assert_eq!(next_of(&d), "decision:1:0", "{d}");
        let rest: Vec<(&str, Value)> = names[1..11]
            .iter()
            .enumerate()
            .map(|(i, n)| (*n, json!(if i % 2 == 0 { "stand" } else { "hit" })))
            .collect();
        let d = decide_all(&ctx, &round, &rest);
        assert_eq!(next_of(&d), "card:common_hand", "{d}");
        // One card, to every player who hit (21: done); then the dealer's 17 stands.
        let s = ctx.cards_ok(&round, &["9C"]);
        settled(&s);
        for (i, n) in names.iter().enumerate() {
            let hit = i % 2 == 0;
            let want: &[&str] = if hit {
                &["9S", "3D", "9C"]
            } else {
                &["9S", "3D"]
            };
            assert_eq!(hand_cards(&s, n, 0), lcs(want), "{t} {n}: {s}");
            // 21 beats the dealer's 17, 12 loses to it.
            let expect = if hit {
                paid(&p, "main", "win", 1000)
            } else {
                0
            };
            assert_eq!(credited(&s, n), expect, "{t} {n}: {s}");
        }
        assert_eq!(s["stake_minor"], 12 * 1000, "{s}");
        assert_eq!(s["paid_minor"], 6 * paid(&p, "main", "win", 1000), "{s}");
    }
    ctx.verify_export();
}

/// "mají tyto další karty pro sázejícího, který zvolil volbu „Stát“, hodnotu 0": p1 stands on
/// 16, p2 hits and takes the 5 to 21; the 5 counts nothing for p1, who loses his 16 to the
/// dealer's 18 while p2 wins.
#[test]
fn cards_after_stand_count_zero() {
    let (_s, ctx) = Ctx::sqlite();
    for (t, p) in tables(&ctx, "live") {
        assert_eq!(
            rules(&p)
                .seating
                .common_hand
                .as_ref()
                .map(|c| c.cards_after_stand_count_zero),
            Some(true),
            "{t}"
        );
        let round = live_round(&ctx, t, mains(&["p1", "p2"], 1000));
        ctx.cards_ok(&round, &["9S", "TC", "7D", "8H"]);
        let d = ctx.decide_ok(&round, "p1", json!("stand"));
        assert_eq!(due_players(&d), ["p2"], "{d}");
        let d = ctx.decide_ok(&round, "p2", json!("hit"));
        assert_eq!(next_of(&d), "card:common_hand", "{d}");
        let s = ctx.cards_ok(&round, &["5H"]);
        settled(&s);
        assert_eq!(hand_cards(&s, "p1", 0), lcs(&["9S", "7D"]), "{s}");
        assert_eq!(position(&s, "p1")["hands"][0]["total"], 16, "{s}");
        assert_eq!(hand_cards(&s, "p2", 0), lcs(&["9S", "7D", "5H"]), "{s}");
        assert_eq!(credited(&s, "p1"), 0, "{t}: {s}");
        assert_eq!(
            credited(&s, "p2"),
            paid(&p, "main", "win", 1000),
            "{t}: {s}"
        );
    }
}

/// "rozhodující karty v takovém pořadí, jak je krupiér sázejícímu rozdává": p1 splits his 8s,
/// p2 hits. The next card goes to p2 and to p1's first split hand; p2 stands, so the card after
/// it goes to p1's first hand alone, and the one after to p1's second hand. Each is settled from
/// his own hands against the dealer's 19.
#[test]
fn non_splitter_takes_cards_in_dealing_order_while_split_hands_take_the_following_cards() {
    let (_s, ctx) = Ctx::sqlite();
    let p = plan(INF);
    ctx.open_table("t1", INF, "live");
    let round = live_round(&ctx, "t1", mains(&["p1", "p2"], 1000));
    let first = ctx.cards_ok(&round, &["8S", "6C", "8D", "TH"]);
    assert!(
        legal_of(&first, "p1").contains(&"split".to_string()),
        "{first}"
    );
    let d = decide_all(
        &ctx,
        &round,
        &[("p1", json!("split")), ("p2", json!("hit"))],
    );
    assert_eq!(
        added_stakes(&d, "p1"),
        1000,
        "a split stake equals the main bet: {d}"
    );
    assert_eq!(added_stakes(&d, "p2"), 0, "{d}");
    let split_bet = &d["inputs"][0]["bets"][0];
    assert_eq!(split_bet["placement"]["bet"], "split", "{d}");
    assert_eq!(split_bet["bet"], format!("{round}.3"), "{d}");
    // 3C: to p2 and to p1's hand 0.
    let d = ctx.cards_ok(&round, &["3C"]);
    assert_eq!(due_players(&d), ["p1", "p2"], "{d}");
    assert_eq!(
        strings(&due_of(&d, "p1")["cards"]),
        lcs(&["8S", "3C"]),
        "{d}"
    );
    assert_eq!(due_of(&d, "p1")["hand"], 0, "{d}");
    assert_eq!(due_of(&d, "p2")["total"], 19, "{d}");
    // Infinite: "nemůže již v rámci rozdělených hand zvolit možnost Zdvojnásobit".
    assert!(!legal_of(&d, "p1").contains(&"double".to_string()), "{d}");
    decide_all(
        &ctx,
        &round,
        &[("p1", json!("hit")), ("p2", json!("stand"))],
    );
    // 9H: to p1's hand 0 only (p2 stood).
    let d = ctx.cards_ok(&round, &["9H"]);
    assert_eq!(due_players(&d), ["p1"], "{d}");
    assert_eq!(due_of(&d, "p1")["total"], 20, "{d}");
    let d = ctx.decide_ok(&round, "p1", json!("stand"));
    assert_eq!(
        next_of(&d),
        "card:common_hand",
        "hand 1 awaits its card: {d}"
    );
    // KD: p1's hand 1.
    let d = ctx.cards_ok(&round, &["KD"]);
    assert_eq!(due_of(&d, "p1")["hand"], 1, "{d}");
    assert_eq!(
        strings(&due_of(&d, "p1")["cards"]),
        lcs(&["8D", "KD"]),
        "{d}"
    );
    ctx.decide_ok(&round, "p1", json!("stand"));
    // The dealer's 16 draws to 19.
    let s = ctx.cards_ok(&round, &["3S"]);
    settled(&s);
    assert_eq!(hand_cards(&s, "p1", 0), lcs(&["8S", "3C", "9H"]), "{s}");
    assert_eq!(hand_cards(&s, "p1", 1), lcs(&["8D", "KD"]), "{s}");
    assert_eq!(hand_cards(&s, "p2", 0), lcs(&["8S", "8D", "3C"]), "{s}");
    // p1: 20 wins the main bet, 18 loses the split stake; p2: 19 pushes.
    assert_eq!(credited(&s, "p1"), paid(&p, "main", "win", 1000), "{s}");
    assert_eq!(credited(&s, "p2"), back(&p, "main", "push", 1000), "{s}");
    let own = settlement(&s, &format!("{round}.1"));
    assert_eq!(
        strings(&own["bets"]),
        [format!("{round}.1"), format!("{round}.3")]
    );
    assert_eq!(s["stake_minor"], 3000, "{s}");
    ctx.verify_export();
}

/// "obdrží už jen jednu další kartu": p1 doubles 11 and takes the next card only; p2, who hit,
/// takes that card and the next. p1 owes nothing more.
#[test]
fn a_double_takes_one_card_and_the_others_play_on() {
    let (_s, ctx) = Ctx::sqlite();
    for (t, p) in tables(&ctx, "live") {
        let round = live_round(&ctx, t, mains(&["p1", "p2"], 1000));
        ctx.cards_ok(&round, &["6H", "9C", "5D", "7S"]);
        let d = decide_all(
            &ctx,
            &round,
            &[("p1", json!("double")), ("p2", json!("hit"))],
        );
        assert_eq!(added_stakes(&d, "p1"), 1000, "{d}");
        let placement = &d["inputs"][0]["bets"][0]["placement"];
        assert_eq!(placement["bet"], "double", "{d}");
        assert_eq!(placement["hand"], 0, "{d}");
        let d = ctx.cards_ok(&round, &["2C"]);
        assert_eq!(due_players(&d), ["p2"], "{t}: {d}");
        ctx.decide_refused(&round, "p1", json!("hit"), "no_decision_owed");
        ctx.decide_ok(&round, "p2", json!("hit"));
        // 8D to p2 (21, done), then the dealer's 16 draws the ten and busts.
        let s = ctx.cards_ok(&round, &["8D", "TD"]);
        settled(&s);
        assert_eq!(hand_cards(&s, "p1", 0), lcs(&["6H", "5D", "2C"]), "{s}");
        assert_eq!(position(&s, "p1")["hands"][0]["doubled"], true, "{s}");
        assert_eq!(
            hand_cards(&s, "p2", 0),
            lcs(&["6H", "5D", "2C", "8D"]),
            "{s}"
        );
        assert_eq!(
            credited(&s, "p1"),
            paid(&p, "main", "win", 1000) + paid(&p, "double", "win", 1000),
            "{t}: {s}"
        );
        assert_eq!(credited(&s, "p2"), paid(&p, "main", "win", 1000), "{s}");
        assert_eq!(s["stake_minor"], 3000, "{s}");
    }
}

// ---------------------------------------------------------------------------------------------
// Decision legality.

/// The first decision's legal choices follow each plan: double on any two cards, surrender
/// where offered (not at Endless), no split without a pair; after a hit only hit or stand.
#[test]
fn legal_decisions_follow_each_plans_rules() {
    let (_s, ctx) = Ctx::sqlite();
    for (t, p) in tables(&ctx, "live") {
        let r = rules(&p);
        let round = live_round(&ctx, t, mains(&["p1", "p2"], 1000));
        let first = ctx.cards_ok(&round, &["TS", "9C", "6H", "7D"]);
        let mut want = vec!["hit", "stand", "double"];
        if r.surrender.allowed {
            want.push("surrender");
        }
        assert_eq!(legal_of(&first, "p1"), want, "{t}: {first}");
        ctx.decide_refused(&round, "p1", json!("split"), "not_a_pair");
        if !r.surrender.allowed {
            ctx.decide_refused(&round, "p2", json!("surrender"), "surrender_not_offered");
        }
        decide_all(
            &ctx,
            &round,
            &[("p1", json!("stand")), ("p2", json!("hit"))],
        );
        let d = ctx.cards_ok(&round, &["2C"]);
        assert_eq!(legal_of(&d, "p2"), ["hit", "stand"], "{t}: {d}");
        ctx.decide_refused(&round, "p2", json!("double"), "double_first_two_cards_only");
        if r.surrender.allowed {
            ctx.decide_refused(
                &round,
                "p2",
                json!("surrender"),
                "surrender_first_decision_only",
            );
        }
        ctx.decide_ok(&round, "p2", json!("stand"));
        let s = ctx.cards_ok(&round, &["5S"]);
        settled(&s);
        // 16 and 18 against the dealer's 21.
        assert_eq!(credited(&s, "p1") + credited(&s, "p2"), 0, "{s}");
    }
}

/// One split makes two hands at most ("vytvořit druhý hand"): a pair on a split hand is not
/// split again (`max_hands_reached`).
#[test]
fn one_split_makes_two_hands_at_most() {
    let (_s, ctx) = Ctx::sqlite();
    for (t, p) in tables(&ctx, "live") {
        assert_eq!(rules(&p).split.max_hands, Some(2), "{t}");
        let round = live_round(&ctx, t, mains(&["p1"], 1000));
        ctx.cards_ok(&round, &["8S", "6C", "8D", "TH"]);
        ctx.decide_ok(&round, "p1", json!("split"));
        let d = ctx.cards_ok(&round, &["8H"]);
        assert_eq!(
            strings(&due_of(&d, "p1")["cards"]),
            lcs(&["8S", "8H"]),
            "{d}"
        );
        assert!(!legal_of(&d, "p1").contains(&"split".to_string()), "{d}");
        ctx.decide_refused(&round, "p1", json!("split"), "max_hands_reached");
    }
}

/// Infinite Blackjack forbids a double on a split hand; All Bets and Endless allow it (their
/// sections do not forbid it: see the plans' assumptions). The double adds the main stake and
/// takes one card; a dealer's 19 beats the other hand's 18.
#[test]
fn a_double_after_a_split_is_refused_by_infinite_and_taken_by_all_bets_and_endless() {
    let (_s, ctx) = Ctx::sqlite();
    for (t, p) in tables(&ctx, "live") {
        let das = rules(&p).double.after_split == Some(true);
        assert_eq!(das, p.key() != INF, "{t}");
        let round = live_round(&ctx, t, mains(&["p1"], 1000));
        ctx.cards_ok(&round, &["8S", "6C", "8D", "TH"]);
        ctx.decide_ok(&round, "p1", json!("split"));
        let d = ctx.cards_ok(&round, &["3C"]);
        assert_eq!(
            legal_of(&d, "p1").contains(&"double".to_string()),
            das,
            "{d}"
        );
        let want = if das {
            let d = ctx.decide_ok(&round, "p1", json!("double"));
            assert_eq!(added_stakes(&d, "p1"), 1000, "{d}");
            assert_eq!(d["inputs"][0]["bets"][0]["placement"]["bet"], "double");
            // 9H ends the doubled hand 0 at 20; KD is hand 1's.
            let d = ctx.cards_ok(&round, &["9H", "KD"]);
            assert_eq!(due_of(&d, "p1")["hand"], 1, "{d}");
            paid(&p, "main", "win", 1000) + paid(&p, "double", "win", 1000)
        } else {
            ctx.decide_refused(
                &round,
                "p1",
                json!("double"),
                "double_after_split_not_allowed",
            );
            ctx.decide_ok(&round, "p1", json!("hit"));
            ctx.cards_ok(&round, &["9H"]);
            ctx.decide_ok(&round, "p1", json!("stand"));
            ctx.cards_ok(&round, &["KD"]);
            paid(&p, "main", "win", 1000)
        };
        ctx.decide_ok(&round, "p1", json!("stand"));
        let s = ctx.cards_ok(&round, &["3S"]);
        settled(&s);
        assert_eq!(hand_cards(&s, "p1", 0), lcs(&["8S", "3C", "9H"]), "{s}");
        assert_eq!(position(&s, "p1")["hands"][0]["doubled"], das, "{s}");
        assert_eq!(credited(&s, "p1"), want, "{t}: {s}");
        assert_eq!(s["stake_minor"], if das { 3000 } else { 2000 }, "{s}");
    }
}

/// Split aces take one card each ("může táhnout na každý nový hand už jen jednu kartu") and no
/// decision; an ace and a king after a split is 21, not a blackjack, paid 1:1. A player who
/// stands on the pair of aces takes none of those cards.
#[test]
fn split_aces_take_one_card_each_and_their_21_is_paid_even_money() {
    let (_s, ctx) = Ctx::sqlite();
    for (t, p) in tables(&ctx, "live") {
        assert_eq!(rules(&p).split.aces_one_card, Some(true), "{t}");
        let round = live_round(&ctx, t, mains(&["p1", "p2"], 1000));
        ctx.cards_ok(&round, &["AS", "9C", "AD", "7S"]);
        let d = decide_all(
            &ctx,
            &round,
            &[("p1", json!("split")), ("p2", json!("stand"))],
        );
        assert_eq!(next_of(&d), "card:common_hand", "{d}");
        // KH to hand 0, 9D to hand 1, then the dealer's 16 draws to 18: no decision between.
        let s = ctx.cards_ok(&round, &["KH", "9D", "2C"]);
        settled(&s);
        let hands = &position(&s, "p1")["hands"];
        assert_eq!(strings(&hands[0]["cards"]), lcs(&["AS", "KH"]), "{s}");
        assert_eq!(hands[0]["result"], "win", "not a blackjack: {s}");
        assert_eq!(strings(&hands[1]["cards"]), lcs(&["AD", "9D"]), "{s}");
        assert_eq!(hand_cards(&s, "p2", 0), lcs(&["AS", "AD"]), "{s}");
        assert_eq!(
            credited(&s, "p1"),
            paid(&p, "main", "win", 1000) + paid(&p, "split", "win", 1000),
            "{t}: {s}"
        );
        // Soft 12 against 18.
        assert_eq!(credited(&s, "p2"), 0, "{s}");
    }
}

/// "Vybrat (Surrender) … 50 % hodnoty základní sázky" (Infinite, All Bets): half the main bet,
/// rounded half up on an odd stake; the surrendering player takes no more cards.
#[test]
fn surrender_returns_half_the_main_bet_where_offered() {
    let (_s, ctx) = Ctx::sqlite();
    for (t, p) in tables(&ctx, "live") {
        if !rules(&p).surrender.allowed {
            assert_eq!(p.key(), END);
            continue;
        }
        let round = live_round(
            &ctx,
            t,
            json!([common("p1", "main", 1001), common("p2", "main", 1000)]),
        );
        ctx.cards_ok(&round, &["TS", "9C", "6H", "7D"]);
        decide_all(
            &ctx,
            &round,
            &[("p1", json!("surrender")), ("p2", json!("stand"))],
        );
        // The dealer's 16 busts; p1 keeps only his half.
        let s = ctx.cards_ok(&round, &["TD"]);
        settled(&s);
        assert_eq!(position(&s, "p1")["hands"][0]["result"], "surrendered");
        assert_eq!(
            credited(&s, "p1"),
            back(&p, "main", "surrender", 1001),
            "{s}"
        );
        assert_eq!(credited(&s, "p1"), 501, "half of 10,01 Kč rounded up: {s}");
        assert_eq!(credited(&s, "p2"), paid(&p, "main", "win", 1000), "{s}");
    }
}

/// "blackjack … ve výherním poměru 3:2", paid after the dealer completes his hand (his 21 of
/// three cards does not beat it); an odd stake's half haléř is rounded up. A dealer blackjack
/// pushes a player blackjack.
#[test]
fn blackjack_pays_3_to_2_after_the_dealer_hand_and_pushes_a_dealer_blackjack() {
    let (_s, ctx) = Ctx::sqlite();
    for (t, p) in tables(&ctx, "live") {
        let bets = json!([common("p1", "main", 1000), common("p2", "main", 1001)]);
        let round = live_round(&ctx, t, bets.clone());
        // A blackjack owes no decision: the dealer's 16 draws the 5 at once.
        let s = ctx.cards_ok(&round, &["AS", "9C", "KH", "7D", "5C"]);
        settled(&s);
        assert_eq!(s["outcome"]["dealer"]["total"], 21, "{s}");
        assert_eq!(position(&s, "p1")["hands"][0]["result"], "blackjack");
        assert_eq!(
            credited(&s, "p1"),
            paid(&p, "main", "blackjack", 1000),
            "{s}"
        );
        assert_eq!(credited(&s, "p1"), 2500, "{s}");
        assert_eq!(
            credited(&s, "p2"),
            paid(&p, "main", "blackjack", 1001),
            "{s}"
        );
        assert_eq!(credited(&s, "p2"), 2503, "1001 + 1501,5 rounded up: {s}");

        let round = live_round(&ctx, t, bets);
        let s = ctx.cards_ok(&round, &["AS", "TC", "KH", "AD"]);
        settled(&s);
        assert_eq!(s["outcome"]["dealer"]["blackjack"], true, "{s}");
        assert_eq!(credited(&s, "p1"), back(&p, "main", "push", 1000), "{s}");
        assert_eq!(credited(&s, "p2"), back(&p, "main", "push", 1001), "{s}");
    }
}

/// "krupiér musí kartu eso vždy počítat s hodnotou 11 a další kartu tedy již vzít nesmí": the
/// dealer stands on a soft 17, dealt or drawn; a card after it is refused.
#[test]
fn dealer_stands_on_soft_17() {
    let (_s, ctx) = Ctx::sqlite();
    for (t, p) in tables(&ctx, "live") {
        assert_eq!(rules(&p).dealer.stand_on, 17, "{t}");
        let round = live_round(&ctx, t, mains(&["p1"], 1000));
        ctx.cards_ok(&round, &["TS", "6C", "8H", "AD"]);
        let s = ctx.decide_ok(&round, "p1", json!("stand"));
        settled(&s);
        let dealer = &s["outcome"]["dealer"];
        assert_eq!(
            (dealer["total"].clone(), dealer["soft"].clone()),
            (json!(17), json!(true))
        );
        assert_eq!(credited(&s, "p1"), paid(&p, "main", "win", 1000), "{s}");

        let round = live_round(&ctx, t, mains(&["p1"], 1000));
        ctx.cards_ok(&round, &["TS", "2C", "8H", "4D"]);
        ctx.decide_ok(&round, "p1", json!("stand"));
        let (code, b) = ctx.cards(&round, &["AH", "5S"]);
        assert_eq!(code, 422, "{b}");
        assert_eq!(b["code"], "card_not_expected", "{b}");
        let s = ctx.cards_ok(&round, &["AH"]);
        settled(&s);
        assert_eq!(
            strings(&s["outcome"]["dealer"]["cards"]),
            lcs(&["2C", "4D", "AH"])
        );
        assert_eq!(credited(&s, "p1"), paid(&p, "main", "win", 1000), "{s}");
    }
}

/// "K odkrytí této skryté karty krupiéra dojde … po odehrání všech sázejících": with a ten up
/// and an ace in the hole the players still play; the dealer's blackjack then takes every stake
/// of theirs (`dealer_blackjack_takes = "all_stakes"`): p1's double, p2's split, p4's 21 of
/// four cards. p3's surrender keeps its half (`refund_kept_if_dealer_blackjack`) where offered.
#[test]
fn dealer_blackjack_revealed_after_the_players_takes_every_stake() {
    let (_s, ctx) = Ctx::sqlite();
    for (t, p) in tables(&ctx, "live") {
        let r = rules(&p);
        let round = live_round(&ctx, t, mains(&["p1", "p2", "p3", "p4"], 1000));
        let first = ctx.cards_ok(&round, &["5H", "TS", "5D", "AC"]);
        assert_eq!(first["phase"], "decisions", "no peek: {first}");
        let p3 = if r.surrender.allowed {
            "surrender"
        } else {
            "stand"
        };
        let d = decide_all(
            &ctx,
            &round,
            &[
                ("p1", json!("double")),
                ("p2", json!("split")),
                ("p3", json!(p3)),
                ("p4", json!("hit")),
            ],
        );
        assert_eq!(added_stakes(&d, "p1") + added_stakes(&d, "p2"), 2000, "{d}");
        let d = ctx.cards_ok(&round, &["6C"]);
        assert_eq!(due_players(&d), ["p2", "p4"], "{d}");
        decide_all(
            &ctx,
            &round,
            &[("p2", json!("stand")), ("p4", json!("hit"))],
        );
        // 5C to p4 (21) and to p2's hand 1.
        let d = ctx.cards_ok(&round, &["5C"]);
        assert_eq!(due_players(&d), ["p2"], "{d}");
        let s = ctx.decide_ok(&round, "p2", json!("stand"));
        settled(&s);
        assert_eq!(s["outcome"]["dealer"]["blackjack"], true, "{s}");
        assert_eq!(
            hand_cards(&s, "p4", 0),
            lcs(&["5H", "5D", "6C", "5C"]),
            "{s}"
        );
        assert_eq!(credited(&s, "p1"), 0, "main and double lost: {s}");
        assert_eq!(credited(&s, "p2"), 0, "main and split lost: {s}");
        assert_eq!(credited(&s, "p4"), 0, "a 21 loses to a blackjack: {s}");
        let p3_gets = if r.surrender.allowed {
            assert_eq!(r.surrender.refund_kept_if_dealer_blackjack, Some(true));
            back(&p, "main", "surrender", 1000)
        } else {
            0
        };
        assert_eq!(credited(&s, "p3"), p3_gets, "{t}: {s}");
        assert_eq!(s["stake_minor"], 6000, "{s}");
        assert_eq!(s["paid_minor"], p3_gets, "{s}");
    }
}

/// "Pojištění … pokud je první kartou krupiéra eso": every player answers the offer on his own,
/// for exactly half his main bet; it pays 2:1 on the dealer's blackjack and loses without one.
/// Decisions come after the offer.
#[test]
fn insurance_is_half_the_main_bet_and_pays_2_to_1_on_a_dealer_blackjack() {
    let (_s, ctx) = Ctx::sqlite();
    for (t, p) in tables(&ctx, "live") {
        assert!(rules(&p).insurance.offered, "{t}");
        for (hole, dealer_bj) in [("KD", true), ("7D", false)] {
            let round = live_round(&ctx, t, mains(&["p1", "p2", "p3"], 1000));
            let first = ctx.cards_ok(&round, &["TS", "AC", "9H", hole]);
            assert_eq!(next_of(&first), "insurance", "{first}");
            assert_eq!(due_players(&first), ["p1", "p2", "p3"], "{first}");
            assert_eq!(due_of(&first, "p1")["insurance"], true, "{first}");
            ctx.decide_refused(&round, "p1", json!("stand"), "no_decision_owed");
            ctx.decide_refused(
                &round,
                "p3",
                json!({"action": "insurance", "stake_minor": 400}),
                "insurance_stake",
            );
            let d = ctx.decide_ok(
                &round,
                "p1",
                json!({"action": "insurance", "stake_minor": 500}),
            );
            assert_eq!(added_stakes(&d, "p1"), 500, "{d}");
            assert_eq!(d["inputs"][0]["bets"][0]["placement"]["bet"], "insurance");
            let d = decide_all(
                &ctx,
                &round,
                &[("p2", json!("no_insurance")), ("p3", json!("no_insurance"))],
            );
            assert_eq!(due_players(&d), ["p1", "p2", "p3"], "{d}");
            assert!(d["expected"]["due"][0]["legal"].is_array(), "{d}");
            let s = decide_all(
                &ctx,
                &round,
                &[
                    ("p1", json!("stand")),
                    ("p2", json!("stand")),
                    ("p3", json!("stand")),
                ],
            );
            settled(&s);
            assert_eq!(s["outcome"]["dealer"]["blackjack"], dealer_bj, "{s}");
            let (p1, others) = if dealer_bj {
                (paid(&p, "insurance", "win", 500), 0)
            } else {
                // 19 beats soft 18; the insurance is lost.
                let w = paid(&p, "main", "win", 1000);
                (w, w)
            };
            assert_eq!(credited(&s, "p1"), p1, "{t} {hole}: {s}");
            assert_eq!(credited(&s, "p2"), others, "{s}");
            assert_eq!(credited(&s, "p3"), others, "{s}");
            assert_eq!(s["stake_minor"], 3500, "{s}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Side bets on chosen cards.

/// A live round for side bets: the first pass, a stand by every player if they owe a
/// decision, the dealer's cards; then each bet's settlement against its class.
struct SideRound {
    first: [&'static str; 4],
    rest: &'static [&'static str],
    /// The main bet's result class (`None`: lost).
    main: Option<&'static str>,
    /// Each side bet with its class (`None`: lost).
    side: &'static [(&'static str, Option<&'static str>)],
}

fn play_side_rounds(table: &str, key: &str, rounds: &[SideRound]) {
    let (_s, ctx) = Ctx::sqlite();
    let p = plan(key);
    ctx.open_table(table, key, "live");
    for r in rounds {
        let mut bets = vec![common("p1", "main", 1000)];
        bets.extend(r.side.iter().map(|(b, _)| common("p1", b, 100)));
        // p2 bets the main bet alone: the side bets are p1's.
        bets.push(common("p2", "main", 1000));
        let round = live_round(&ctx, table, json!(bets));
        let first = ctx.cards_ok(&round, &r.first);
        let mut reply = if first["phase"] == "decisions" {
            decide_all(
                &ctx,
                &round,
                &[("p1", json!("stand")), ("p2", json!("stand"))],
            )
        } else {
            first
        };
        if !r.rest.is_empty() {
            reply = ctx.cards_ok(&round, r.rest);
        }
        settled(&reply);
        let cards = format!("{:?} {:?}", r.first, r.rest);
        let main = credit_of(&p, "main", r.main, 1000);
        let mut total = main;
        assert_eq!(
            settlement(&reply, &format!("{round}.1"))["total_minor"],
            main,
            "{key} {cards}: main: {reply}"
        );
        for (i, (bet, class)) in r.side.iter().enumerate() {
            let s = settlement(&reply, &format!("{round}.{}", i + 2));
            let want = credit_of(&p, bet, *class, 100);
            total += want;
            assert_eq!(
                s["components"][0]["outcome"],
                class.unwrap_or("lose"),
                "{key} {cards}: {bet}: {s}"
            );
            assert_eq!(s["total_minor"], want, "{key} {cards}: {bet}: {s}");
        }
        assert_eq!(credited(&reply, "p1"), total, "{reply}");
        assert_eq!(credited(&reply, "p2"), main, "{reply}");
    }
    ctx.verify_export();
}

/// Infinite Blackjack's side bets, each class on chosen cards: Perfect Pairs (perfect,
/// coloured, mixed), 21+3 (suited trips, straight flush, three of a kind, straight, flush),
/// Hot 3 (7-7-7, suited 21, unsuited 21, 20, 19) and Bust It by the dealer's bust card count
/// (3 … 8+), returned on a player blackjack.
#[test]
fn infinite_side_bets_pay_each_class_by_the_plan() {
    const PP: &str = "perfect_pairs";
    const T3: &str = "twenty_one_plus_three";
    const H3: &str = "hot_3";
    const BI: &str = "bust_it";
    play_side_rounds(
        "inf",
        INF,
        &[
            // 7h 7h | 7h 5d, the dealer draws the ten: bust with 3 cards.
            SideRound {
                first: ["7H", "7H", "7H", "5D"],
                rest: &["TS"],
                main: Some("win"),
                side: &[
                    (PP, Some("perfect_pair")),
                    (T3, Some("suited_trips")),
                    (H3, Some("seven_seven_seven")),
                    (BI, Some("bust_3_cards")),
                ],
            },
            // 8h 8d | 8s 4c 2c 2d th: bust with 5 cards.
            SideRound {
                first: ["8H", "8S", "8D", "4C"],
                rest: &["2C", "2D", "TH"],
                main: Some("win"),
                side: &[
                    (PP, Some("coloured_pair")),
                    (T3, Some("three_of_a_kind")),
                    (H3, None),
                    (BI, Some("bust_5_cards")),
                ],
            },
            // 8h 8c | 3s 2d 2h 2s 2c ah th: 8 + 8 + 3 = 19, bust with 7 cards.
            SideRound {
                first: ["8H", "3S", "8C", "2D"],
                rest: &["2H", "2S", "2C", "AH", "TH"],
                main: Some("win"),
                side: &[
                    (PP, Some("mixed_pair")),
                    (T3, None),
                    (H3, Some("total_19")),
                    (BI, Some("bust_7_cards")),
                ],
            },
            // 6h 7d | 8c: a straight of 21 in three suits; bust with 6 cards.
            SideRound {
                first: ["6H", "8C", "7D", "2D"],
                rest: &["2H", "2S", "2C", "TH"],
                main: Some("win"),
                side: &[
                    (PP, None),
                    (T3, Some("straight")),
                    (H3, Some("unsuited_21")),
                    (BI, Some("bust_6_cards")),
                ],
            },
            // 7s 4s | ks: a flush of 21; bust with 4 cards.
            SideRound {
                first: ["7S", "KS", "4S", "2D"],
                rest: &["2H", "TH"],
                main: Some("win"),
                side: &[
                    (PP, None),
                    (T3, Some("flush")),
                    (H3, Some("suited_21")),
                    (BI, Some("bust_4_cards")),
                ],
            },
            // 5h 5d | tc 9s: 20, the dealer's 19 stands.
            SideRound {
                first: ["5H", "TC", "5D", "9S"],
                rest: &[],
                main: None,
                side: &[
                    (PP, Some("coloured_pair")),
                    (T3, None),
                    (H3, Some("total_20")),
                    (BI, None),
                ],
            },
            // 9h th | jh 7c: a straight flush; the dealer's 17 stands.
            SideRound {
                first: ["9H", "JH", "TH", "7C"],
                rest: &[],
                main: Some("win"),
                side: &[(T3, Some("straight_flush")), (H3, None), (BI, None)],
            },
            // 9h td | 2c 2d 2h 2s 3c 3d 2c tc: bust with 8 cards.
            SideRound {
                first: ["9H", "2C", "TD", "2D"],
                rest: &["2H", "2S", "3C", "3D", "2C", "TC"],
                main: Some("win"),
                side: &[(H3, Some("unsuited_21")), (BI, Some("bust_8_plus_cards"))],
            },
        ],
    );
}

/// "Vedlejší sázka Bust It se vrací, pokud má sázející Blackjack": the dealer busts with three
/// cards, yet Bust It comes back (the refund row), while the blackjack is paid 3:2.
#[test]
fn infinite_bust_it_is_returned_on_a_player_blackjack() {
    play_side_rounds(
        "inf",
        INF,
        &[SideRound {
            first: ["AH", "6S", "KD", "TC"],
            rest: &["9D"],
            main: Some("blackjack"),
            side: &[
                ("bust_it", Some("player_blackjack")),
                ("hot_3", None),
                ("perfect_pairs", None),
            ],
        }],
    );
}

/// All Bets Blackjack's side bets, each class on chosen cards: Perfect Pairs, 21+3, Top 3
/// (suited trips 270:1, straight flush, three of a kind; a straight loses), Lucky Lucky (777
/// and 678 suited or not, 21 suited or not, 20, 19) and Buster by the dealer's bust card count.
#[test]
fn all_bets_side_bets_pay_each_class_by_the_plan() {
    const PP: &str = "perfect_pairs";
    const T3: &str = "twenty_one_plus_three";
    const TOP: &str = "top_3";
    const LL: &str = "lucky_lucky";
    const BU: &str = "buster";
    play_side_rounds(
        "ab",
        AB,
        &[
            SideRound {
                first: ["7H", "7H", "7H", "5D"],
                rest: &["TS"],
                main: Some("win"),
                side: &[
                    (PP, Some("perfect_pair")),
                    (T3, Some("suited_trips")),
                    (TOP, Some("suited_trips")),
                    (LL, Some("suited_777")),
                    (BU, Some("bust_3_or_4_cards")),
                ],
            },
            // 6d 7d | 8d 4c 2h th: bust with 4 cards.
            SideRound {
                first: ["6D", "8D", "7D", "4C"],
                rest: &["2H", "TH"],
                main: Some("win"),
                side: &[
                    (PP, None),
                    (T3, Some("straight_flush")),
                    (TOP, Some("straight_flush")),
                    (LL, Some("suited_678")),
                    (BU, Some("bust_3_or_4_cards")),
                ],
            },
            // 7c 7d | 7s 9h 2c: the dealer's 18 beats 14.
            SideRound {
                first: ["7C", "7S", "7D", "9H"],
                rest: &["2C"],
                main: None,
                side: &[
                    (PP, Some("mixed_pair")),
                    (T3, Some("three_of_a_kind")),
                    (TOP, Some("three_of_a_kind")),
                    (LL, Some("unsuited_777")),
                    (BU, None),
                ],
            },
            // 6c 8d | 7s 2d 2h 2s 2c th: bust with 6 cards.
            SideRound {
                first: ["6C", "7S", "8D", "2D"],
                rest: &["2H", "2S", "2C", "TH"],
                main: Some("win"),
                side: &[
                    (T3, Some("straight")),
                    (TOP, None),
                    (LL, Some("unsuited_678")),
                    (BU, Some("bust_6_cards")),
                ],
            },
            // 9s 2s | ks 2d 2h 2c th: bust with 5 cards.
            SideRound {
                first: ["9S", "KS", "2S", "2D"],
                rest: &["2H", "2C", "TH"],
                main: Some("win"),
                side: &[
                    (T3, Some("flush")),
                    (TOP, None),
                    (LL, Some("suited_21")),
                    (BU, Some("bust_5_cards")),
                ],
            },
            // 5h 5s | tc 4d 5c: 20; the dealer's 19 beats 10.
            SideRound {
                first: ["5H", "TC", "5S", "4D"],
                rest: &["5C"],
                main: None,
                side: &[(PP, Some("mixed_pair")), (LL, Some("any_20")), (BU, None)],
            },
            // 9h td | 2c: 21 in three suits; bust with 8 cards.
            SideRound {
                first: ["9H", "2C", "TD", "2D"],
                rest: &["2H", "2S", "3C", "3D", "2C", "TC"],
                main: Some("win"),
                side: &[(LL, Some("unsuited_21")), (BU, Some("bust_8_plus_cards"))],
            },
            // 4h td | 5c: 19; bust with 7 cards.
            SideRound {
                first: ["4H", "5C", "TD", "2D"],
                rest: &["2H", "2S", "2C", "2H", "TH"],
                main: Some("win"),
                side: &[(LL, Some("any_19")), (BU, Some("bust_7_cards"))],
            },
        ],
    );
}

/// "nejvyšší výhry jsou v kombinaci s blackjackem Sázejícího": with a player blackjack the
/// Buster pays the enhanced rows for 7 and 8+ cards, and the ordinary row for 3 or 4 cards
/// (the plan has no enhanced row for it).
#[test]
fn all_bets_buster_is_enhanced_with_a_player_blackjack() {
    play_side_rounds(
        "ab",
        AB,
        &[
            SideRound {
                first: ["AH", "2S", "KH", "2D"],
                rest: &["2C", "2H", "3S", "3D", "TC"],
                main: Some("blackjack"),
                side: &[
                    ("buster", Some("bust_7_cards_with_player_blackjack")),
                    ("lucky_lucky", None),
                    ("twenty_one_plus_three", None),
                ],
            },
            SideRound {
                first: ["AS", "2C", "KD", "2D"],
                rest: &["2H", "2S", "3C", "3D", "2C", "TC"],
                main: Some("blackjack"),
                side: &[("buster", Some("bust_8_plus_cards_with_player_blackjack"))],
            },
            SideRound {
                first: ["AS", "6C", "KD", "TC"],
                rest: &["9D"],
                main: Some("blackjack"),
                side: &[("buster", Some("bust_3_or_4_cards"))],
            },
        ],
    );
}

/// BLACKJACK – ENDLESS: 21+3 pays three of a kind 25:1 (not the 30:1 of the other studios),
/// and its other classes; Perfect Pairs as the others.
#[test]
fn endless_21_plus_3_pays_three_of_a_kind_25_to_1() {
    assert_eq!(
        ratio(&plan(END), "twenty_one_plus_three", "three_of_a_kind"),
        (25, 1)
    );
    assert_eq!(
        ratio(&plan(INF), "twenty_one_plus_three", "three_of_a_kind"),
        (30, 1)
    );
    const PP: &str = "perfect_pairs";
    const T3: &str = "twenty_one_plus_three";
    play_side_rounds(
        "end",
        END,
        &[
            SideRound {
                first: ["7C", "7S", "7D", "9H"],
                rest: &["2C"],
                main: None,
                side: &[(PP, Some("mixed_pair")), (T3, Some("three_of_a_kind"))],
            },
            SideRound {
                first: ["7H", "7H", "7H", "5D"],
                rest: &["TS"],
                main: Some("win"),
                side: &[(PP, Some("perfect_pair")), (T3, Some("suited_trips"))],
            },
            SideRound {
                first: ["6D", "8D", "7D", "4C"],
                rest: &["2H", "TH"],
                main: Some("win"),
                side: &[(PP, None), (T3, Some("straight_flush"))],
            },
            SideRound {
                first: ["6C", "8D", "7S", "2D"],
                rest: &["2H", "2S", "2C", "TH"],
                main: Some("win"),
                side: &[(T3, Some("straight"))],
            },
            SideRound {
                first: ["8H", "KH", "8D", "9S"],
                rest: &[],
                main: None,
                side: &[(PP, Some("coloured_pair")), (T3, None)],
            },
            SideRound {
                first: ["9S", "KS", "2S", "2D"],
                rest: &["2H", "2C", "TH"],
                main: Some("win"),
                side: &[(T3, Some("flush"))],
            },
        ],
    );
}

// ---------------------------------------------------------------------------------------------
// Time-outs and disconnects.

/// "po uplynutí času na rozhodnutí": each hand still due gets the plan's automatic decision —
/// Infinite hits 11 and below and stands above (`hit_at_or_below = 11`), All Bets and Endless
/// stand. p1 decided in time; p2 let the time run out (`time_out`); p3 is disconnected
/// (`disconnected`, his own decisions refused). Closing early is refused; a decision after the
/// deadline is `decision_too_late`.
#[test]
fn time_outs_take_each_plans_automatic_decision_per_player() {
    let storage = Storage::new(Backend::Sqlite);
    let (plans, ctx) = short_time_ctx(&storage);
    let mut rounds = Vec::new();
    for (t, p) in tables(&ctx, "live") {
        let round = live_round(&ctx, t, mains(&["p1", "p2", "p3"], 1000));
        // 6 + 5 = 11 against the dealer's 17.
        let first = ctx.cards_ok(&round, &["6H", "9C", "5D", "8S"]);
        assert!(first["decision_deadline"].is_string(), "{first}");
        ctx.connection(t, "p3", false);
        ctx.decide_ok(&round, "p1", json!("stand"));
        ctx.decide_refused(&round, "p3", json!("hit"), "player_disconnected");
        let (code, b) = ctx.close_decisions(&round);
        assert_eq!(
            (code, b["code"].clone()),
            (409, json!("decisions_open")),
            "{b}"
        );
        rounds.push((t, p, round));
    }
    std::thread::sleep(Duration::from_millis(1_700));
    for (t, p, round) in &rounds {
        ctx.decide_refused(round, "p2", json!("stand"), "decision_too_late");
        let timeout = p.plan.policies.decision_timeout.as_ref().expect("timeout");
        let hits_11 = timeout.hit_at_or_below == Some(11);
        assert_eq!(hits_11, p.key() == INF, "{t}");
        // Infinite: the next card takes the automatic decisions first (hit on 11), then goes
        // to p2 and p3. The others: close_decisions stands them, the dealer's 17 stands.
        let reply = if hits_11 {
            ctx.cards_ok(round, &["9H"])
        } else {
            let (code, b) = ctx.close_decisions(round);
            assert_eq!(code, 200, "{b}");
            b
        };
        let auto: Vec<(Value, Value, Value)> = reply["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["automatic"] == true)
            .map(|i| {
                (
                    i["player"].clone(),
                    i["reason"].clone(),
                    i["input"]["input"].clone(),
                )
            })
            .collect();
        assert_eq!(
            auto,
            vec![
                (json!("p2"), json!("time_out"), json!("timed_out")),
                (json!("p3"), json!("disconnected"), json!("timed_out")),
            ],
            "{t}: {reply}"
        );
        if hits_11 {
            // 11 + 9 = 20 is due again; above 11 the time-out stands.
            assert_eq!(due_players(&reply), ["p2", "p3"], "{reply}");
            assert_eq!(due_of(&reply, "p2")["total"], 20, "{reply}");
        } else {
            settled(&reply);
            for n in ["p2", "p3"] {
                assert_eq!(hand_cards(&reply, n, 0), lcs(&["6H", "5D"]), "{reply}");
                assert_eq!(credited(&reply, n), 0, "11 loses to 17: {reply}");
            }
        }
    }
    std::thread::sleep(Duration::from_millis(1_700));
    let (t, p, round) = &rounds[0];
    let (code, s) = ctx.close_decisions(round);
    assert_eq!(code, 200, "{t}: {s}");
    settled(&s);
    for n in ["p2", "p3"] {
        assert_eq!(hand_cards(&s, n, 0), lcs(&["6H", "5D", "9H"]), "{s}");
        assert_eq!(
            credited(&s, n),
            paid(p, "main", "win", 1000),
            "20 beats 17: {s}"
        );
    }
    assert_eq!(hand_cards(&s, "p1", 0), lcs(&["6H", "5D"]), "{s}");
    assert_eq!(credited(&s, "p1"), 0, "{s}");
    // (The export's replay needs the committed plans; these are edited.)
    // The automatic decisions replay from the log, with the plans the server ran.
    crate::replay::exported_log_verifies_and_replays_on(&ctx.server, &ctx.auditor, plans.path());
}

/// RNG, nobody deciding: after each deadline `close_decisions` takes the plan's automatic
/// decisions (and closes an insurance offer: nobody is insured), `deal` goes on from the seed;
/// the settled round reveals its seed and its cards are the seed's shoe. All Bets stands
/// whatever the total; Endless too.
#[test]
fn rng_time_outs_stand_and_the_settlement_reveals_the_seed() {
    let storage = Storage::new(Backend::Sqlite);
    let (plans, ctx) = short_time_ctx(&storage);
    let mut rounds = Vec::new();
    for (t, p) in tables(&ctx, "rng") {
        if p.key() == INF {
            continue;
        }
        let round = ctx.round_with(t, mains(&["p1", "p2"], 1000));
        let (s, b) = ctx.deal(&round);
        assert_eq!(s, 200, "{b}");
        rounds.push((t, p, round, b));
    }
    for _ in 0..4 {
        if rounds.iter().all(|(_, _, _, b)| b["phase"] == "settled") {
            break;
        }
        std::thread::sleep(Duration::from_millis(1_700));
        for (t, _, round, reply) in rounds.iter_mut() {
            while reply["phase"] != "settled" {
                let due = reply["expected"]["due"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                let (s, b) = if due.is_empty() {
                    ctx.deal(round)
                } else {
                    let (s, b) = ctx.close_decisions(round);
                    if s == 409 {
                        // A new offer or decision opened after this sleep: wait for it.
                        break;
                    }
                    // Every time-out stands, or closes the insurance offer.
                    for i in b["inputs"].as_array().unwrap() {
                        if i["automatic"] == true && i["player"].is_string() {
                            assert_eq!(i["reason"], "time_out", "{t}: {b}");
                        }
                    }
                    (s, b)
                };
                assert_eq!(s, 200, "{t}: {b}");
                *reply = b;
            }
        }
    }
    for (t, p, round, reply) in &rounds {
        settled(reply);
        let seed = unhex(
            reply["rng_seed"]
                .as_str()
                .unwrap_or_else(|| panic!("{t}: {reply}")),
        );
        let shoe: Vec<String> = shuffled_shoe(rules(p).shoe, seed)
            .iter()
            .map(ToString::to_string)
            .collect();
        let r = ctx.round(round);
        let dealt = strings(&r["blackjack"]["play"]["dealt"]);
        assert_eq!(dealt[..], shoe[..dealt.len()], "{t}: {r}");
        for n in ["p1", "p2"] {
            let hands = position(reply, n)["hands"].as_array().unwrap().clone();
            // Stood on the first two cards (a blackjack, too, has two).
            assert_eq!(hands.len(), 1, "{reply}");
            assert_eq!(
                strings(&hands[0]["cards"]),
                [dealt[0].clone(), dealt[2].clone()]
            );
        }
    }
    // The automatic decisions replay from the log, with the plans the server ran.
    crate::replay::exported_log_verifies_and_replays_on(&ctx.server, &ctx.auditor, plans.path());
}

/// BLACKJACK – ENDLESS: "ještě před uzavřením přijímání sázek, obdrží žetony ve výši své
/// původní sázky" — a player who disconnects while betting is open gets every stake back at
/// once (`refunds`), bets no more and is dealt nothing. After betting closed his bets stand.
/// Infinite Blackjack returns nothing (`placed_bets_stand`).
#[test]
fn endless_returns_the_stakes_of_a_player_disconnected_before_betting_closes() {
    let (_s, ctx) = Ctx::sqlite();
    let p = plan(END);
    assert!(
        p.plan
            .policies
            .disconnect
            .refund_if_disconnected_before_betting_closes
    );
    ctx.open_table("end", END, "live");
    let round = ctx.open_round("end");
    ctx.accepted_bets(
        &round,
        json!([
            common("p1", "main", 1000),
            common("p2", "main", 2000),
            common("p2", "perfect_pairs", 100),
        ]),
    );
    let c = ctx.connection("end", "p2", false);
    let refunds: Vec<(Value, Value, Value)> = c["refunds"]
        .as_array()
        .unwrap_or_else(|| panic!("no refunds: {c}"))
        .iter()
        .map(|r| {
            (
                r["bet"].clone(),
                r["player"].clone(),
                r["refund_minor"].clone(),
            )
        })
        .collect();
    assert_eq!(
        refunds,
        vec![
            (json!(format!("{round}.2")), json!("p2"), json!(2000)),
            (json!(format!("{round}.3")), json!("p2"), json!(100)),
        ],
        "{c}"
    );
    let b = ctx.bets(&round, json!([common("p2", "main", 1000)]));
    assert_eq!(b["results"][0]["code"], "player_disconnected", "{b}");
    ctx.close_betting(&round);
    // p1 disconnects after betting closed: nothing comes back.
    let c = ctx.connection("end", "p1", false);
    assert!(c["refunds"].is_null(), "{c}");
    ctx.connection("end", "p1", true);
    let first = ctx.cards_ok(&round, &["TS", "9C", "9H", "8D"]);
    assert_eq!(due_players(&first), ["p1"], "{first}");
    assert_eq!(ctx.round(&round)["blackjack"]["players"], json!(["p1"]));
    let s = ctx.decide_ok(&round, "p1", json!("stand"));
    settled(&s);
    assert_eq!(credited(&s, "p1"), paid(&p, "main", "win", 1000), "{s}");
    assert!(s["settlements"]
        .as_array()
        .unwrap()
        .iter()
        .all(|x| x["player"] == "p1"));
    assert_eq!(s["stake_minor"], 1000, "{s}");

    // Infinite: the stakes of a player who disconnects while betting is open stand.
    ctx.open_table("inf", INF, "live");
    let round = ctx.open_round("inf");
    ctx.accepted_bets(&round, mains(&["p1", "p2"], 1000));
    let c = ctx.connection("inf", "p2", false);
    assert!(c["refunds"].is_null(), "{c}");
    ctx.close_betting(&round);
    let first = ctx.cards_ok(&round, &["TS", "9C", "9H", "8D"]);
    assert_eq!(due_players(&first), ["p1", "p2"], "{first}");
    ctx.verify_export();
}

/// BLACKJACK – ENDLESS: "Pokud sázející neumístí sázku ve dvou po sobě jdoucích hrách, bude
/// odstraněn z hrací pozice stolu" (`remove_after_rounds_without_bet = 2`): p3 bets in round 1
/// only; after round 3 his place is released (`seat_released` in the log), p1 keeps his.
#[test]
fn endless_removes_a_player_after_two_rounds_without_a_bet() {
    let (_s, ctx) = Ctx::sqlite();
    let p = plan(END);
    assert_eq!(
        p.plan.policies.disconnect.remove_after_rounds_without_bet,
        Some(2)
    );
    ctx.open_table("end", END, "live");
    let blackjack_round = |players: &[&str]| {
        let round = live_round(&ctx, "end", mains(players, 1000));
        // A blackjack against the dealer's 17: no decision, settled at once.
        let s = ctx.cards_ok(&round, &["AH", "9C", "KD", "8D"]);
        settled(&s);
        for n in players {
            assert_eq!(credited(&s, n), paid(&p, "main", "blackjack", 1000), "{s}");
        }
    };
    blackjack_round(&["p1", "p3"]);
    assert_eq!(
        table_state(&ctx, "end")["seated"],
        json!({"p1": 0, "p3": 0})
    );
    blackjack_round(&["p1"]);
    assert_eq!(
        table_state(&ctx, "end")["seated"],
        json!({"p1": 0, "p3": 1})
    );
    assert!(exported(&ctx, "seat_released").is_empty());
    blackjack_round(&["p1"]);
    assert_eq!(table_state(&ctx, "end")["seated"], json!({"p1": 0}));
    let released = exported(&ctx, "seat_released");
    assert_eq!(released.len(), 1, "{released:?}");
    assert_eq!(released[0]["player"], "p3", "{released:?}");
    assert_eq!(released[0]["table"], "op1:end", "{released:?}");
    assert_eq!(released[0]["rounds_without_bet"], 2, "{released:?}");
    // Infinite removes nobody: it keeps no places.
    ctx.open_table("inf", INF, "live");
    let round = live_round(&ctx, "inf", mains(&["p1"], 1000));
    settled(&ctx.cards_ok(&round, &["AH", "9C", "KD", "8D"]));
    assert_eq!(table_state(&ctx, "inf")["seated"], json!({}));
    ctx.verify_export();
}

/// "V takovém případě se sázejícím vrací podané sázky": a void mid-round returns every stake —
/// main bets, side bets, a split, doubles (one on a split hand) and insurance.
#[test]
fn a_void_mid_round_returns_every_stake_with_splits_doubles_and_insurance() {
    let (_s, ctx) = Ctx::sqlite();
    ctx.open_table("ab", AB, "live");
    let round = live_round(
        &ctx,
        "ab",
        json!([
            common("p1", "main", 1000),
            common("p1", "perfect_pairs", 100),
            common("p2", "main", 1000),
            common("p3", "main", 1000),
        ]),
    );
    ctx.cards_ok(&round, &["8S", "AC", "8D", "9H"]);
    ctx.decide_ok(
        &round,
        "p3",
        json!({"action": "insurance", "stake_minor": 500}),
    );
    decide_all(
        &ctx,
        &round,
        &[("p1", json!("no_insurance")), ("p2", json!("no_insurance"))],
    );
    decide_all(
        &ctx,
        &round,
        &[
            ("p1", json!("split")),
            ("p2", json!("double")),
            ("p3", json!("stand")),
        ],
    );
    ctx.cards_ok(&round, &["3C"]);
    ctx.decide_ok(&round, "p1", json!("double"));
    let v = ctx.void(&round, "the dealer system failed");
    assert_eq!(v["phase"], "voided", "{v}");
    let mut refunds: Vec<(String, String, i64)> = v["refunds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["bet"].as_str().unwrap().to_string(),
                r["player"].as_str().unwrap().to_string(),
                r["refund_minor"].as_i64().unwrap(),
            )
        })
        .collect();
    refunds.sort();
    let id = |n: u32| format!("{round}.{n}");
    // .5 insurance (p3), .6 split (p1), .7 double (p2), .8 double on p1's split hand 0.
    let mut want = vec![
        (id(1), "p1".to_string(), 1000),
        (id(2), "p1".to_string(), 100),
        (id(3), "p2".to_string(), 1000),
        (id(4), "p3".to_string(), 1000),
        (id(5), "p3".to_string(), 500),
        (id(6), "p1".to_string(), 1000),
        (id(7), "p2".to_string(), 1000),
        (id(8), "p1".to_string(), 1000),
    ];
    want.sort();
    assert_eq!(refunds, want, "{v}");
    assert_eq!(v["refund_minor"], 6600, "{v}");
    let (s, _, doc) = ctx.server.get_as(
        Some(&ctx.auditor),
        &format!("/v1/rounds/{round}/settlement"),
    );
    assert_eq!(s, 200, "{doc}");
    assert_eq!(doc["refund_minor"], 6600, "{doc}");
    // The table plays on: a blackjack against the dealer's 17.
    let round = live_round(&ctx, "ab", mains(&["p1"], 1000));
    let s = ctx.cards_ok(&round, &["AH", "9C", "KD", "8D"]);
    assert_eq!(
        credited(&s, "p1"),
        paid(&plan(AB), "main", "blackjack", 1000),
        "{s}"
    );
    ctx.verify_export();
}

// ---------------------------------------------------------------------------------------------
// RNG.

/// A card's value, an ace 11.
fn card_value(card: &str) -> i64 {
    match &card[..1] {
        "A" => 11,
        "T" | "J" | "Q" | "K" => 10,
        d => d.parse().expect("rank"),
    }
}

/// The best total of `cards` (an ace 1 or 11, whichever is better).
fn total(cards: &[String]) -> i64 {
    let mut t: i64 = cards.iter().map(|c| card_value(c)).sum();
    let mut aces = cards.iter().filter(|c| c.starts_with('A')).count();
    while t > 21 && aces > 0 {
        t -= 10;
        aces -= 1;
    }
    t
}

fn natural(cards: &[String]) -> bool {
    cards.len() == 2 && total(cards) == 21
}

/// What a player's own play is credited, worked out from the outcome's cards and the plan's
/// rows: each hand against the dealer, the double on a doubled hand, the surrender's half, the
/// insurance (stake `insured`).
fn own_play_credit(p: &LoadedPlan, pos: &Value, dealer: &[String], main: i64, insured: i64) -> i64 {
    let dealer_bj = natural(dealer);
    let dealer_total = total(dealer);
    let mut credit = 0;
    let hands = pos["hands"].as_array().unwrap();
    for (i, h) in hands.iter().enumerate() {
        let cards = strings(&h["cards"]);
        let doubled = h["doubled"] == true;
        let base = if i == 0 { "main" } else { "split" };
        let t = total(&cards);
        let bj = natural(&cards) && hands.len() == 1 && !doubled;
        if h["surrendered"] == true {
            credit += back(p, "main", "surrender", main);
        } else if t > 21 {
        } else if bj {
            credit += if dealer_bj {
                back(p, base, "push", main)
            } else {
                paid(p, base, "blackjack", main)
            };
        } else if dealer_bj {
        } else if dealer_total > 21 || t > dealer_total {
            credit += paid(p, base, "win", main);
            if doubled {
                credit += paid(p, "double", "win", main);
            }
        } else if t == dealer_total {
            credit += back(p, base, "push", main);
            if doubled {
                credit += back(p, "double", "push", main);
            }
        }
    }
    if insured > 0 && dealer_bj {
        credit += paid(p, "insurance", "win", insured);
    }
    credit
}

/// The Perfect Pairs class of two cards.
fn pair_class(a: &str, b: &str) -> Option<&'static str> {
    let red = |c: &str| c.ends_with('h') || c.ends_with('d');
    if a[..1] != b[..1] {
        None
    } else if a == b {
        Some("perfect_pair")
    } else if red(a) == red(b) {
        Some("coloured_pair")
    } else {
        Some("mixed_pair")
    }
}

/// A deterministic player: the decision he takes on a due hand from its legal choices.
fn policy(player: &str, due: &Value) -> Value {
    let legal = strings(&due["legal"]);
    let has = |d: &str| legal.iter().any(|l| l == d);
    let total = due["total"].as_i64().unwrap();
    let d = match player {
        // Stands on anything.
        "p1" => "stand",
        // Hits below 17.
        "p2" => {
            if total < 17 {
                "hit"
            } else {
                "stand"
            }
        }
        // Splits and doubles whenever allowed, hits below 12.
        "p3" => {
            if has("split") {
                "split"
            } else if has("double") {
                "double"
            } else if total < 12 {
                "hit"
            } else {
                "stand"
            }
        }
        // Surrenders where offered, else hits below 15.
        _ => {
            if has("surrender") {
                "surrender"
            } else if total < 15 {
                "hit"
            } else {
                "stand"
            }
        }
    };
    json!(d)
}

fn unhex(s: &str) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex");
    }
    out
}

/// RNG: several rounds per plan, four players on the common hand each following his own
/// policy (p2 insures when offered), played to the end. Whatever the cards: every card dealt
/// is the next of the revealed seed's shoe; every player's first two cards are the common
/// ones; each stake a decision added is the one it implies (split and double: the main bet;
/// insurance: half of it); each player is credited what his hands and the plan's rows give;
/// `paid_minor` and `stake_minor` add up; the export verifies.
#[test]
fn rng_rounds_deal_the_seed_shoe_and_settle_each_player_by_the_plan() {
    let (_s, ctx) = Ctx::sqlite();
    let players = ["p1", "p2", "p3", "p4"];
    let main = 1000;
    for (t, p) in tables(&ctx, "rng") {
        for n in 0..4 {
            let round = ctx.round_with(
                t,
                json!([
                    common("p1", "main", main),
                    common("p1", "perfect_pairs", 100),
                    common("p2", "main", main),
                    common("p3", "main", main),
                    common("p4", "main", main),
                ]),
            );
            let mut dealt: Vec<String> = Vec::new();
            let mut added = [0i64; 4];
            let mut insured = [0i64; 4];
            let mut reply = Value::Null;
            for step in 0..40 {
                assert!(step < 39, "{t} round {n} does not end: {reply}");
                let due = reply["expected"]["due"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                if step > 0 && reply["phase"] == "settled" {
                    break;
                }
                reply = if due.is_empty() {
                    let (s, b) = ctx.deal(&round);
                    assert_eq!(s, 200, "{b}");
                    b
                } else {
                    let decisions: Vec<(&str, Value)> = due
                        .iter()
                        .map(|d| {
                            let pl = players
                                .iter()
                                .find(|x| d["player"] == **x)
                                .copied()
                                .unwrap();
                            let decision = if d["insurance"] == true {
                                if pl == "p2" {
                                    json!({"action": "insurance", "stake_minor": main / 2})
                                } else {
                                    json!("no_insurance")
                                }
                            } else {
                                policy(pl, d)
                            };
                            (pl, decision)
                        })
                        .collect();
                    let b = decide_all(&ctx, &round, &decisions);
                    for (k, pl) in players.iter().enumerate() {
                        let want: i64 = decisions
                            .iter()
                            .filter(|(x, _)| x == pl)
                            .map(|(_, d)| match (d.as_str(), d["action"].as_str()) {
                                (Some("split" | "double"), _) => main,
                                (_, Some("insurance")) => main / 2,
                                _ => 0,
                            })
                            .sum();
                        assert_eq!(added_stakes(&b, pl), want, "{t} {pl}: {b}");
                        added[k] += want;
                        if decisions
                            .iter()
                            .any(|(x, d)| x == pl && d["action"] == "insurance")
                        {
                            insured[k] += main / 2;
                        }
                    }
                    b
                };
                dealt.extend(card_inputs(&reply).into_iter().map(|(c, _)| c));
            }
            settled(&reply);
            // The hole card the replies withheld is the round's, once the dealer played.
            let all = crate::bj::dealt_of_finished(&ctx, &round);
            for (k, c) in dealt.iter_mut().enumerate() {
                if c == "hidden" {
                    *c = all[k].clone();
                }
            }
            // The cards are the seed's shoe, in order.
            let seed = unhex(reply["rng_seed"].as_str().expect("seed"));
            let shoe: Vec<String> = shuffled_shoe(rules(&p).shoe, seed)
                .iter()
                .map(ToString::to_string)
                .collect();
            assert_eq!(dealt[..], shoe[..dealt.len()], "{t}: {reply}");
            let dealer = strings(&reply["outcome"]["dealer"]["cards"]);
            let firsts = [dealt[0].clone(), dealt[2].clone()];
            let mut stakes = 100;
            for (k, pl) in players.iter().enumerate() {
                let pos = position(&reply, pl);
                let hands = pos["hands"].as_array().unwrap();
                // His first cards are the common ones (after a split, one on each hand).
                if hands.len() == 1 {
                    assert_eq!(strings(&hands[0]["cards"])[..2], firsts[..], "{reply}");
                } else {
                    assert_eq!(strings(&hands[0]["cards"])[0], firsts[0], "{reply}");
                    assert_eq!(strings(&hands[1]["cards"])[0], firsts[1], "{reply}");
                }
                let mut want = own_play_credit(&p, pos, &dealer, main, insured[k]);
                if *pl == "p1" {
                    want += credit_of(&p, "perfect_pairs", pair_class(&firsts[0], &firsts[1]), 100);
                }
                assert_eq!(credited(&reply, pl), want, "{t} {pl}: {reply}");
                stakes += main + added[k];
            }
            assert_eq!(reply["stake_minor"], stakes, "{reply}");
            let totals: i64 = reply["settlements"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["total_minor"].as_i64().unwrap())
                .sum();
            assert_eq!(reply["paid_minor"], totals, "{reply}");
        }
    }
    ctx.verify_export();
}

// ---------------------------------------------------------------------------------------------
// Storage.

/// PostgreSQL: a full Infinite Blackjack round with two players, a double and side bets,
/// settled; its export verifies and replays.
#[test]
fn a_round_on_postgres_is_settled_and_its_export_verifies() {
    let storage = Storage::new(Backend::Postgres);
    let ctx = Ctx::start(&storage);
    let p = plan(INF);
    ctx.open_table("inf", INF, "live");
    let round = live_round(
        &ctx,
        "inf",
        json!([
            common("p1", "main", 1000),
            common("p1", "perfect_pairs", 100),
            common("p2", "main", 2000),
            common("p2", "hot_3", 100),
        ]),
    );
    ctx.cards_ok(&round, &["5H", "9C", "5D", "7S"]);
    decide_all(
        &ctx,
        &round,
        &[("p1", json!("double")), ("p2", json!("hit"))],
    );
    let d = ctx.cards_ok(&round, &["9S"]);
    assert_eq!(due_players(&d), ["p2"], "{d}");
    ctx.decide_ok(&round, "p2", json!("stand"));
    // 19 each; the dealer's 16 draws the 2 to 18.
    let s = ctx.cards_ok(&round, &["2C"]);
    settled(&s);
    assert_eq!(
        credited(&s, "p1"),
        paid(&p, "main", "win", 1000)
            + paid(&p, "double", "win", 1000)
            + paid(&p, "perfect_pairs", "coloured_pair", 100),
        "{s}"
    );
    // 5 + 5 + 9 (the dealer's first card) = 19.
    assert_eq!(
        credited(&s, "p2"),
        paid(&p, "main", "win", 2000) + paid(&p, "hot_3", "total_19", 100),
        "{s}"
    );
    ctx.verify_export();
}

/// A restart mid-round: the state is rebuilt from the log, the split and the due decisions
/// included, and the round goes on to the same settlement.
#[test]
fn a_restart_mid_round_resumes_the_common_hand() {
    let storage = Storage::new(Backend::Sqlite);
    let mut ctx = Ctx::start(&storage);
    let p = plan(AB);
    ctx.open_table("ab", AB, "live");
    let round = live_round(&ctx, "ab", mains(&["p1", "p2"], 1000));
    ctx.cards_ok(&round, &["8S", "6C", "8D", "TH"]);
    ctx.decide_ok(&round, "p1", json!("split"));
    let before = ctx.round(&round);

    ctx.server.kill();
    ctx = Ctx::with_server(TestServer::on(&storage));
    let after = ctx.round(&round);
    assert_eq!(after["blackjack"], before["blackjack"], "{after}");
    assert_eq!(after["bets"], before["bets"], "{after}");
    assert_eq!(strings(&after["decisions_pending"]), ["p2"], "{after}");

    ctx.decide_ok(&round, "p2", json!("hit"));
    let d = ctx.cards_ok(&round, &["3C"]);
    assert_eq!(due_players(&d), ["p1", "p2"], "{d}");
    decide_all(
        &ctx,
        &round,
        &[("p1", json!("double")), ("p2", json!("stand"))],
    );
    ctx.cards_ok(&round, &["9H", "KD"]);
    ctx.decide_ok(&round, "p1", json!("stand"));
    let s = ctx.cards_ok(&round, &["3S"]);
    settled(&s);
    // p1: 20 doubled wins, 18 loses the split stake; p2: 19 pushes.
    assert_eq!(
        credited(&s, "p1"),
        paid(&p, "main", "win", 1000) + paid(&p, "double", "win", 1000),
        "{s}"
    );
    assert_eq!(credited(&s, "p2"), back(&p, "main", "push", 1000), "{s}");
    ctx.verify_export();
}
