//! Blackjack through the API: the single-deck game of document 001 (one deck, a peek on an ace
//! or a ten, the dealer hits a soft 17, re-splits to four hands, no double after a split, no
//! surrender) and the Czech game of document 003 for 2–6 players in its two plans
//! (`czech-blackjack@1` without the optional rules, `czech-blackjack-strict@1` with the
//! restrictive ones): no hole card, two players at least, the bust player loses first.
//!
//! Every amount is worked out here from the plan's `[[payouts]]` rows (`paid`, `pushed`) and
//! the stakes the test placed, never read back from the engine. RNG rounds are played to the
//! end with a fixed policy and checked against what their revealed seed deals.

use std::collections::BTreeMap;
use std::time::Duration;

use pitboss::cards::Card;
use pitboss::plan::rules::blackjack::Soft17;
use pitboss::plan::rules::GameRules;
use serde_json::{json, Value};
use sha2::Digest;

use crate::bj::{added_stakes, bet, credited, next_of, settlement, Ctx};
use crate::server::{Backend, Storage, TestServer, ADMIN_KEY};

const SINGLE: &str = "single-deck-blackjack@1";
const CZECH: &str = "czech-blackjack@1";
const STRICT: &str = "czech-blackjack-strict@1";

// ----- Money from the plan's rows ---------------------------------------------------------------

/// What the wallet is credited for a stake whose row (`bet`, `outcome`) pays a ratio: the stake
/// back and stake × ratio, the fraction of a haléř rounded half up (every plan here states
/// `rounding = "half_up"`).
fn paid(plan: &str, bet: &str, outcome: &str, stake: i64) -> i64 {
    let p = crate::source::plan(plan);
    assert_eq!(
        p.plan.plan.rounding,
        pitboss::money::Rounding::HalfUp,
        "{plan}"
    );
    let (n, d) = crate::source::ratio(&p, bet, outcome);
    let (n, d) = (n as i64, d as i64);
    stake + (2 * stake * n + d) / (2 * d)
}

/// What a push returns: the plan's refund share of the stake.
fn pushed(plan: &str, bet: &str, stake: i64) -> i64 {
    let p = crate::source::plan(plan);
    let (n, d) = crate::source::refund(&p, bet, "push");
    stake * n as i64 / d as i64
}

// ----- Replies ----------------------------------------------------------------------------------

fn ok(reply: (u16, Value)) -> Value {
    let (s, b) = reply;
    assert_eq!(s, 200, "{b}");
    b
}

fn refused(reply: (u16, Value), status: u16, code: &str) -> Value {
    let (s, b) = reply;
    assert_eq!((s, b["code"].as_str()), (status, Some(code)), "{b}");
    b
}

fn card(s: &str) -> Card {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

/// The cards a reply's inputs dealt, in order (`None`: the dealer's hole card, face down to
/// the operator until the dealer plays).
fn dealt_or_hidden(reply: &Value) -> Vec<Option<Card>> {
    inputs(reply)
        .iter()
        .filter(|i| i["input"]["input"] == "card" || crate::bj::is_hidden_hole_card(i))
        .map(|i| i["input"]["card"].as_str().map(card))
        .collect()
}

fn inputs(reply: &Value) -> Vec<Value> {
    reply["inputs"].as_array().cloned().unwrap_or_default()
}

/// Where each card of a reply went: `hand:<position>:<hand>` or `dealer`.
fn placed(reply: &Value) -> Vec<String> {
    inputs(reply)
        .iter()
        .filter(|i| i["input"]["input"] == "card")
        .map(|i| match i["to"]["to"].as_str() {
            Some("hand") => format!("hand:{}:{}", i["to"]["position"], i["to"]["hand"]),
            Some(other) => other.to_string(),
            None => panic!("a card without its place: {i}"),
        })
        .collect()
}

fn due(reply: &Value) -> Vec<Value> {
    reply["expected"]["due"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn legal(reply: &Value) -> Vec<String> {
    due(reply)[0]["legal"]
        .as_array()
        .unwrap_or_else(|| panic!("no legal decisions: {reply}"))
        .iter()
        .map(|d| d.as_str().expect("decision").to_string())
        .collect()
}

fn shoe(ctx: &Ctx, table: &str, action: &str) -> (u16, Value) {
    ctx.server.post(
        &ctx.op,
        &format!("/v1/tables/{table}/shoe"),
        json!({ "action": action }),
    )
}

/// The ids and stakes of the bets a reply's inputs added for `player`.
fn added_bets(reply: &Value, player: &str) -> Vec<(String, i64)> {
    inputs(reply)
        .iter()
        .flat_map(|i| i["bets"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["player"] == player)
        .map(|b| {
            (
                b["bet"].as_str().expect("bet id").to_string(),
                b["placement"]["stake_minor"].as_i64().expect("stake"),
            )
        })
        .collect()
}

/// A settled round's per-player credits add up to `paid_minor`.
fn assert_paid_adds_up(settled: &Value) {
    let sum: i64 = settled["settlements"]
        .as_array()
        .expect("settlements")
        .iter()
        .map(|s| s["total_minor"].as_i64().expect("total"))
        .sum();
    assert_eq!(settled["paid_minor"], sum, "{settled}");
}

/// Two players on a Czech table (seats 1 and 3): p1 stakes 1 000, p2 2 000.
fn czech_round(ctx: &Ctx, table: &str) -> String {
    ctx.round_with(
        table,
        json!([bet("p1", "main", 1, 1000), bet("p2", "main", 3, 2000)]),
    )
}

// ===== Single deck (001) ========================================================================

/// "Hole card: Dealer peeks for blackjack (US)" on a ten up (plan: `peek_on = "ace_or_ten"`):
/// a blackjack under the ten ends the round at the fourth card, before any decision; the
/// player's 16 loses the main bet, and a player's own blackjack ties ("The hand ties if dealer
/// also has a natural").
#[test]
fn single_deck_peeked_dealer_blackjack_ends_the_round_before_any_decision() {
    let (_s, ctx) = Ctx::sqlite();
    ctx.open_table("t1", SINGLE, "live");
    let round = ctx.round_with("t1", json!([bet("p1", "main", 1, 1000)]));
    let settled = ctx.cards_ok(&round, &["9H", "KS", "7C", "AD"]);
    assert_eq!(settled["phase"], "settled", "{settled}");
    assert!(
        inputs(&settled)
            .iter()
            .all(|i| i["input"]["input"] == "card"),
        "nothing but the four cards: {settled}"
    );
    assert_eq!(settled["outcome"]["dealer"]["blackjack"], true, "{settled}");
    let hands = &settled["outcome"]["positions"][0]["hands"];
    assert_eq!(hands.as_array().map(Vec::len), Some(1), "{settled}");
    assert_eq!(hands[0]["cards"].as_array().map(Vec::len), Some(2));
    assert_eq!(credited(&settled, "p1"), 0, "{settled}");
    assert_eq!(settled["stake_minor"], 1000);
    // A decision after the peek: the round is over.
    refused(
        ctx.decide(&round, json!([{"player": "p1", "decision": "hit"}])),
        409,
        "out_of_order",
    );

    // The player's natural against the peeked natural: a push.
    ok(shoe(&ctx, "t1", "shuffle"));
    let round = ctx.round_with("t1", json!([bet("p1", "main", 1, 1000)]));
    let settled = ctx.cards_ok(&round, &["AH", "TS", "KC", "AC"]);
    assert_eq!(settled["phase"], "settled", "{settled}");
    assert_eq!(
        settled["outcome"]["positions"][0]["hands"][0]["result"],
        "push"
    );
    assert_eq!(
        credited(&settled, "p1"),
        pushed(SINGLE, "main", 1000),
        "{settled}"
    );

    // An ace up: the insurance offer comes first; declined, the peek finds the blackjack and
    // the round ends with the main bet lost.
    ok(shoe(&ctx, "t1", "shuffle"));
    let round = ctx.round_with("t1", json!([bet("p1", "main", 1, 1000)]));
    let offer = ctx.cards_ok(&round, &["9H", "AS", "7C", "KD"]);
    assert_eq!(next_of(&offer), "insurance", "{offer}");
    let settled = ctx.decide_ok(&round, "p1", json!({"action": "no_insurance"}));
    assert_eq!(settled["phase"], "settled", "{settled}");
    assert_eq!(credited(&settled, "p1"), 0, "{settled}");
    assert_eq!(settled["stake_minor"], 1000);
    ctx.verify_export();
}

/// No blackjack under the ten: "If the dealer doesn't have blackjack, the game continues" —
/// the player decides, may double any two cards (16 here: "Double Down: any two cards"), is
/// offered no surrender ("Surrender: not allowed") nor insurance (no ace up); his 20 against
/// the dealer's 17 pays the main bet and the double 1:1.
#[test]
fn single_deck_without_a_peeked_blackjack_play_goes_on_and_any_two_cards_double() {
    let (_s, ctx) = Ctx::sqlite();
    ctx.open_table("t1", SINGLE, "live");
    let round = ctx.round_with("t1", json!([bet("p1", "main", 1, 1000)]));
    let first = ctx.cards_ok(&round, &["9H", "KS", "7C", "7D"]);
    assert_eq!(first["phase"], "decisions", "{first}");
    assert_eq!(next_of(&first), "decision:0:0", "{first}");
    assert_eq!(due(&first).len(), 1, "no insurance under a ten: {first}");
    assert_eq!(due(&first)[0]["total"], 16);
    assert_eq!(legal(&first), ["hit", "stand", "double"], "{first}");
    ctx.decide_refused(&round, "p1", json!("surrender"), "surrender_not_offered");
    ctx.decide_refused(
        &round,
        "p1",
        json!({"action": "insurance", "stake_minor": 500}),
        "no_decision_owed",
    );
    let d = ctx.decide_ok(&round, "p1", json!("double"));
    assert_eq!(
        added_stakes(&d, "p1"),
        1000,
        "the double equals the bet: {d}"
    );
    assert_eq!(next_of(&d), "card:hand:0:0", "{d}");
    // One card to the doubled hand; the dealer stands on 17.
    let settled = ctx.cards_ok(&round, &["4D"]);
    assert_eq!(settled["phase"], "settled", "{settled}");
    assert_eq!(
        credited(&settled, "p1"),
        paid(SINGLE, "main", "win", 1000) + paid(SINGLE, "double", "win", 1000),
        "{settled}"
    );
    assert_eq!(settled["stake_minor"], 2000);
    assert_paid_adds_up(&settled);
    ctx.verify_export();
}

/// "Soft 17: dealer hits": A-6 draws (to a hard 16, then draws again and busts); a hard 17
/// (K-7) stands, so the player's standing 18 settles the round at once.
#[test]
fn single_deck_dealer_hits_soft_17_and_stands_on_hard_17() {
    let (_s, ctx) = Ctx::sqlite();
    ctx.open_table("t1", SINGLE, "live");
    let round = ctx.round_with("t1", json!([bet("p1", "main", 1, 1000)]));
    ctx.cards_ok(&round, &["TH", "6S", "8C", "AD"]);
    let stood = ctx.decide_ok(&round, "p1", json!("stand"));
    assert_eq!(stood["phase"], "betting_closed", "{stood}");
    assert_eq!(next_of(&stood), "card:dealer", "A-6 is a soft 17: {stood}");
    let settled = ctx.cards_ok(&round, &["9D", "TC"]);
    assert_eq!(placed(&settled), ["dealer", "dealer"], "{settled}");
    assert_eq!(settled["outcome"]["dealer"]["bust"], true, "{settled}");
    assert_eq!(
        credited(&settled, "p1"),
        paid(SINGLE, "main", "win", 1000),
        "{settled}"
    );

    let round = ctx.round_with("t1", json!([bet("p1", "main", 1, 1000)]));
    ctx.cards_ok(&round, &["TS", "7H", "8D", "KD"]);
    let settled = ctx.decide_ok(&round, "p1", json!("stand"));
    assert_eq!(settled["phase"], "settled", "hard 17 stands: {settled}");
    assert_eq!(settled["outcome"]["dealer"]["total"], 17);
    assert_eq!(
        settled["outcome"]["dealer"]["cards"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
    assert_eq!(
        credited(&settled, "p1"),
        paid(SINGLE, "main", "win", 1000),
        "{settled}"
    );
    ctx.verify_export();
}

/// "Splits any pair of cards: a maximum of 3 times to make 4 hands" (ten-value cards are a
/// pair: "Available for cards which are equally valued"): T-J, then T-Q, then T-K make four
/// hands; T-T on the fourth is refused (`max_hands_reached`), and so is its double ("Double
/// after split: not allowed"). Against the dealer's 19: 20 wins, 19 pushes, 18 and 17 lose.
#[test]
fn single_deck_resplits_to_four_hands_and_refuses_a_fifth() {
    let (_s, ctx) = Ctx::sqlite();
    ctx.open_table("t1", SINGLE, "live");
    let round = ctx.round_with("t1", json!([bet("p1", "main", 1, 1000)]));
    let first = ctx.cards_ok(&round, &["TH", "6S", "JC", "5D"]);
    assert!(legal(&first).contains(&"split".to_string()), "{first}");
    let mut split_stakes = 0;
    for (n, next) in ["QD", "KS"].iter().enumerate() {
        let d = ctx.decide_ok(&round, "p1", json!("split"));
        assert_eq!(added_bets(&d, "p1").len(), 1, "{d}");
        split_stakes += added_stakes(&d, "p1");
        assert_eq!(next_of(&d), "card:hand:0:0", "split {}: {d}", n + 1);
        let r = ctx.cards_ok(&round, &[next]);
        assert_eq!(next_of(&r), "decision:0:0", "{r}");
    }
    let d = ctx.decide_ok(&round, "p1", json!("split"));
    split_stakes += added_stakes(&d, "p1");
    assert_eq!(split_stakes, 3 * 1000, "three splits, each the bet");
    let fourth = ctx.cards_ok(&round, &["TC"]);
    let hands = ctx.round(&round)["blackjack"]["play"]["positions"][0]["play"]["hands"].clone();
    assert_eq!(hands.as_array().map(Vec::len), Some(4), "{hands}");
    assert_eq!(legal(&fourth), ["hit", "stand"], "{fourth}");
    ctx.decide_refused(&round, "p1", json!("split"), "max_hands_reached");
    ctx.decide_refused(
        &round,
        "p1",
        json!("double"),
        "double_after_split_not_allowed",
    );
    ctx.decide_ok(&round, "p1", json!("stand"));
    for c in ["9H", "8C", "7D"] {
        let r = ctx.cards_ok(&round, &[c]);
        assert_eq!(r["phase"], "decisions", "{r}");
        ctx.decide_ok(&round, "p1", json!("stand"));
    }
    let settled = ctx.cards_ok(&round, &["8S"]);
    assert_eq!(settled["phase"], "settled", "{settled}");
    let results: Vec<&str> = settled["outcome"]["positions"][0]["hands"]
        .as_array()
        .expect("hands")
        .iter()
        .map(|h| h["result"].as_str().expect("result"))
        .collect();
    assert_eq!(results, ["win", "push", "lose", "lose"], "{settled}");
    assert_eq!(
        credited(&settled, "p1"),
        paid(SINGLE, "main", "win", 1000) + pushed(SINGLE, "split", 1000),
        "{settled}"
    );
    assert_eq!(settled["stake_minor"], 4000);
    assert_eq!(
        settlement(&settled, &format!("{round}.1"))["components"]
            .as_array()
            .map(Vec::len),
        Some(4),
        "one component per hand: {settled}"
    );
    assert_paid_adds_up(&settled);
    ctx.verify_export();
}

/// Aces are re-split (plan: `resplit_aces = true`) and split aces are played on like any hand
/// (`aces_one_card = false`): A-A, then A-A again, the first ace hits to 20, the second's
/// A-K is 21 but no blackjack (`after_split_is_blackjack = false`: paid 1:1), the third's soft
/// 17 stands; against the dealer's hard 17: win, win, push.
#[test]
fn single_deck_split_aces_are_resplit_and_played_on() {
    let (_s, ctx) = Ctx::sqlite();
    ctx.open_table("t1", SINGLE, "live");
    let round = ctx.round_with("t1", json!([bet("p1", "main", 1, 1000)]));
    ctx.cards_ok(&round, &["AH", "7S", "AC", "TD"]);
    ctx.decide_ok(&round, "p1", json!("split"));
    let r = ctx.cards_ok(&round, &["AD"]);
    assert_eq!(next_of(&r), "decision:0:0", "{r}");
    assert_eq!(legal(&r), ["hit", "stand", "split"], "{r}");
    ctx.decide_ok(&round, "p1", json!("split"));
    let r = ctx.cards_ok(&round, &["5C"]);
    assert_eq!(
        next_of(&r),
        "decision:0:0",
        "a split ace takes more cards: {r}"
    );
    ctx.decide_ok(&round, "p1", json!("hit"));
    ctx.cards_ok(&round, &["4H"]);
    ctx.decide_ok(&round, "p1", json!("stand"));
    let r = ctx.cards_ok(&round, &["KS"]);
    assert_eq!(next_of(&r), "card:hand:0:2", "21 takes no decision: {r}");
    ctx.cards_ok(&round, &["6D"]);
    let settled = ctx.decide_ok(&round, "p1", json!("stand"));
    assert_eq!(settled["phase"], "settled", "{settled}");
    let results: Vec<&str> = settled["outcome"]["positions"][0]["hands"]
        .as_array()
        .expect("hands")
        .iter()
        .map(|h| h["result"].as_str().expect("result"))
        .collect();
    assert_eq!(results, ["win", "win", "push"], "{settled}");
    assert_eq!(
        credited(&settled, "p1"),
        paid(SINGLE, "main", "win", 1000)
            + paid(SINGLE, "split", "win", 1000)
            + pushed(SINGLE, "split", 1000),
        "{settled}"
    );
    assert_eq!(settled["stake_minor"], 3000);
    ctx.verify_export();
}

/// "Insurance: allowed if Dealer has an Ace face up", "Insurance pays: 2 : 1", up to half the
/// bet (plan: `fraction_of_main = "1/2"`, `stake = "at_most"`) and at least the insurance
/// row's minimum: 501 on 1 000 and 40 are refused, 500 is taken; the peek then finds the
/// blackjack: the main bet is lost, the insurance pays 2:1.
#[test]
fn single_deck_insurance_on_an_ace_pays_2_to_1_within_half_the_bet() {
    let (_s, ctx) = Ctx::sqlite();
    ctx.open_table("t1", SINGLE, "live");
    let p = crate::source::plan(SINGLE);
    let GameRules::Blackjack(rules) = &p.plan.rules else {
        panic!("a blackjack plan")
    };
    let f = rules.insurance.fraction_of_main.expect("insurance share");
    let most = 1000 * f.numerator() as i64 / f.denominator() as i64;
    let min = p.plan.bet("insurance").expect("insurance row").min_bet;
    let round = ctx.round_with("t1", json!([bet("p1", "main", 1, 1000)]));
    let first = ctx.cards_ok(&round, &["9H", "AS", "7C", "KD"]);
    assert_eq!(first["phase"], "decisions", "{first}");
    assert_eq!(next_of(&first), "insurance", "{first}");
    assert_eq!(due(&first)[0]["insurance"], true, "{first}");
    let insure = |stake: i64| json!({"action": "insurance", "stake_minor": stake});
    ctx.decide_refused(&round, "p1", insure(most + 1), "insurance_stake");
    ctx.decide_refused(&round, "p1", insure(min - 10), "below_min_bet");
    ctx.decide_refused(&round, "p1", json!("hit"), "no_decision_owed");
    let settled = ctx.decide_ok(&round, "p1", insure(most));
    assert_eq!(added_stakes(&settled, "p1"), most, "{settled}");
    assert_eq!(settled["phase"], "settled", "the peek ends it: {settled}");
    assert_eq!(
        credited(&settled, "p1"),
        paid(SINGLE, "insurance", "win", most),
        "{settled}"
    );
    assert_eq!(settled["stake_minor"], 1000 + most);
    assert_paid_adds_up(&settled);
    ctx.verify_export();
}

/// Insurance taken under an ace without a blackjack is lost, and the game continues: the
/// player's 19 beats the dealer's soft 18 (which stands: only a soft 17 hits).
#[test]
fn single_deck_insurance_is_lost_without_a_dealer_blackjack_and_play_goes_on() {
    let (_s, ctx) = Ctx::sqlite();
    ctx.open_table("t1", SINGLE, "live");
    let round = ctx.round_with("t1", json!([bet("p1", "main", 1, 1000)]));
    ctx.cards_ok(&round, &["TH", "AS", "9C", "7D"]);
    let d = ctx.decide_ok(
        &round,
        "p1",
        json!({"action": "insurance", "stake_minor": 300}),
    );
    assert_eq!(
        next_of(&d),
        "decision:0:0",
        "no blackjack: play goes on: {d}"
    );
    let settled = ctx.decide_ok(&round, "p1", json!("stand"));
    assert_eq!(settled["phase"], "settled", "{settled}");
    assert_eq!(
        credited(&settled, "p1"),
        paid(SINGLE, "main", "win", 1000),
        "the insurance is lost: {settled}"
    );
    assert_eq!(settled["stake_minor"], 1300);
    ctx.verify_export();
}

/// "A winning blackjack pays 3:2", on an odd stake in haléře: 1 001 × 3/2 leaves half a haléř,
/// rounded up (plan: `rounding = "half_up"`). The dealer (9 up, no peek) still plays to 21
/// with three cards, which a blackjack beats.
#[test]
fn single_deck_blackjack_pays_3_to_2_rounded_half_up() {
    let (_s, ctx) = Ctx::sqlite();
    ctx.open_table("t1", SINGLE, "live");
    let p = crate::source::plan(SINGLE);
    assert_eq!(crate::source::ratio(&p, "main", "blackjack"), (3, 2));
    let round = ctx.round_with("t1", json!([bet("p1", "main", 1, 1001)]));
    let first = ctx.cards_ok(&round, &["AH", "9S", "KC", "7D"]);
    assert_eq!(
        next_of(&first),
        "card:dealer",
        "a blackjack decides nothing: {first}"
    );
    let settled = ctx.cards_ok(&round, &["5H"]);
    assert_eq!(settled["phase"], "settled", "{settled}");
    assert_eq!(settled["outcome"]["dealer"]["total"], 21);
    assert_eq!(
        settled["outcome"]["positions"][0]["hands"][0]["result"],
        "blackjack"
    );
    assert_eq!(credited(&settled, "p1"), 1001 + 1502, "{settled}");
    assert_eq!(
        credited(&settled, "p1"),
        paid(SINGLE, "main", "blackjack", 1001)
    );
    ctx.verify_export();
}

/// "We use one deck": a card whose only copy has been dealt since the last shuffle is refused
/// (`card_not_in_shoe`, nothing of the request recorded), the shoe is not shuffled in the middle
/// of a round (409), and after a shuffle between rounds the card comes again.
#[test]
fn single_deck_a_card_already_dealt_is_refused_until_the_deck_is_shuffled() {
    let (_s, ctx) = Ctx::sqlite();
    ctx.open_table("t1", SINGLE, "live");
    let round = ctx.round_with("t1", json!([bet("p1", "main", 1, 1000)]));
    let settled = ctx.cards_ok(&round, &["AS", "9H", "KD", "8C"]);
    assert_eq!(settled["phase"], "settled", "{settled}");
    let blackjack = paid(SINGLE, "main", "blackjack", 1000);
    assert_eq!(credited(&settled, "p1"), blackjack, "{settled}");

    let round = ctx.round_with("t1", json!([bet("p1", "main", 1, 1000)]));
    let e = refused(ctx.cards(&round, &["2C", "AS"]), 422, "card_not_in_shoe");
    assert!(e["detail"].as_str().unwrap_or("").contains("void"), "{e}");
    assert!(
        ctx.round(&round)["blackjack"]["play"]["dealt"]
            .as_array()
            .is_none_or(Vec::is_empty),
        "nothing of the refused request is recorded"
    );
    ctx.cards_ok(&round, &["2C"]);
    refused(shoe(&ctx, "t1", "shuffle"), 409, "out_of_order");
    refused(ctx.cards(&round, &["AS"]), 422, "card_not_in_shoe");
    // Ten up, ace in the hole: the peek ends the round; the player's 5 loses.
    let settled = ctx.cards_ok(&round, &["TS", "3C", "AH"]);
    assert_eq!(settled["phase"], "settled", "{settled}");
    assert_eq!(credited(&settled, "p1"), 0);

    let shuffled = ok(shoe(&ctx, "t1", "shuffle"));
    assert_eq!(shuffled["cards_seen_before"], 8, "{shuffled}");
    let round = ctx.round_with("t1", json!([bet("p1", "main", 1, 1000)]));
    let settled = ctx.cards_ok(&round, &["AS", "9H", "KD", "8C"]);
    assert_eq!(credited(&settled, "p1"), blackjack, "{settled}");
    ctx.verify_export();
}

/// A void in the middle of a round returns every stake: the main bet, the insurance and the
/// split's stake, each by its own bet id.
#[test]
fn single_deck_void_mid_round_returns_main_insurance_and_split_stakes() {
    let (_s, ctx) = Ctx::sqlite();
    ctx.open_table("t1", SINGLE, "live");
    let round = ctx.round_with("t1", json!([bet("p1", "main", 1, 1000)]));
    ctx.cards_ok(&round, &["8H", "AS", "8C", "9D"]);
    let ins = ctx.decide_ok(
        &round,
        "p1",
        json!({"action": "insurance", "stake_minor": 500}),
    );
    let split = ctx.decide_ok(&round, "p1", json!("split"));
    ctx.cards_ok(&round, &["3H"]);
    ctx.decide_refused(
        &round,
        "p1",
        json!("double"),
        "double_after_split_not_allowed",
    );
    let voided = ctx.void(&round, "table fault");
    assert_eq!(voided["phase"], "voided", "{voided}");
    let mut want: BTreeMap<String, i64> = BTreeMap::new();
    want.insert(format!("{round}.1"), 1000);
    want.extend(added_bets(&ins, "p1"));
    want.extend(added_bets(&split, "p1"));
    assert_eq!(
        want.values().copied().collect::<Vec<_>>(),
        [1000, 500, 1000]
    );
    let got: BTreeMap<String, i64> = voided["refunds"]
        .as_array()
        .expect("refunds")
        .iter()
        .map(|r| {
            assert_eq!(r["player"], "p1");
            (
                r["bet"].as_str().expect("bet").to_string(),
                r["refund_minor"].as_i64().expect("refund"),
            )
        })
        .collect();
    assert_eq!(got, want, "{voided}");
    assert_eq!(voided["refund_minor"], 2500);
    assert_eq!(ctx.round(&round)["phase"], "voided");
    // The deck still counts the voided round's cards; the next round is dealt and settled
    // (ten up, ace in the hole: the peek ends it).
    let round = ctx.round_with("t1", json!([bet("p1", "main", 1, 1000)]));
    refused(ctx.cards(&round, &["8H"]), 422, "card_not_in_shoe");
    let settled = ctx.cards_ok(&round, &["2C", "TS", "4C", "AH"]);
    assert_eq!(settled["phase"], "settled", "{settled}");
    ctx.verify_export();
}

// ===== Czech blackjack (003) ====================================================================

/// "Na začátku hry tedy každý hráč obdrží dvě karty a bankéř pouze jednu": the first pass is
/// box, box, dealer, box, box; the dealer's second card comes after the players ("rozdá
/// bankéř další karty i sobě").
#[test]
fn czech_dealer_gets_one_card_in_the_first_pass_and_his_second_after_the_players() {
    let (_s, ctx) = Ctx::sqlite();
    for (table, plan) in [("c1", CZECH), ("s1", STRICT)] {
        ctx.open_table(table, plan, "live");
        let round = czech_round(&ctx, table);
        let first = ctx.cards_ok(&round, &["9H", "5S", "7D", "9C", "6D"]);
        assert_eq!(
            placed(&first),
            ["hand:0:0", "hand:1:0", "dealer", "hand:0:0", "hand:1:0"],
            "{first}"
        );
        assert_eq!(next_of(&first), "decision:0:0", "{first}");
        let play = &ctx.round(&round)["blackjack"]["play"];
        assert_eq!(play["dealer"], json!(["7d"]), "{play}");
        ctx.decide_ok(&round, "p1", json!("stand"));
        let hit = ctx.decide_ok(&round, "p2", json!("hit"));
        assert_eq!(next_of(&hit), "card:hand:1:0", "{hit}");
        let r = ctx.cards_ok(&round, &["TC"]);
        assert_eq!(next_of(&r), "card:dealer", "p2's 21 ends the players: {r}");
        let settled = ctx.cards_ok(&round, &["TS"]);
        assert_eq!(placed(&settled), ["dealer"]);
        assert_eq!(settled["phase"], "settled", "{settled}");
        assert_eq!(
            credited(&settled, "p1"),
            paid(plan, "main", "win", 1000),
            "{plan}: 18 beats 17"
        );
        assert_eq!(
            credited(&settled, "p2"),
            paid(plan, "main", "win", 2000),
            "{plan}: 21 beats 17"
        );
        assert_paid_adds_up(&settled);
    }
    ctx.verify_export();
}

/// "pro 2 až 6 hráčů" (plan: `min_players = 2`): a round with one player's bet cannot be
/// dealt (`too_few_players`, live and RNG), the refusal tells the operator what to do, and a
/// void returns the stake.
#[test]
fn czech_a_round_with_one_player_is_not_dealt_and_its_void_returns_the_stake() {
    let (_s, ctx) = Ctx::sqlite();
    for (table, plan, mode) in [("c1", CZECH, "live"), ("s1", STRICT, "rng")] {
        ctx.open_table(table, plan, mode);
        let round = ctx.round_with(table, json!([bet("p1", "main", 2, 1500)]));
        let attempt = if mode == "live" {
            ctx.cards(&round, &["9H"])
        } else {
            ctx.deal(&round)
        };
        let e = refused(attempt, 422, "too_few_players");
        let detail = e["detail"].as_str().unwrap_or("");
        assert!(detail.contains("at least 2"), "{plan}: {e}");
        assert!(
            detail.contains("void"),
            "{plan}: the refusal names the way out (void the round): {e}"
        );
        assert_eq!(e["plan"], plan, "{e}");
        let voided = ctx.void(&round, "one player only");
        assert_eq!(voided["refund_minor"], 1500, "{voided}");
        assert_eq!(voided["refunds"][0]["player"], "p1");
        // With a second player the next round is dealt.
        let round = czech_round(&ctx, table);
        if mode == "live" {
            ctx.cards_ok(&round, &["9H", "5S", "7D", "9C", "6D"]);
            ctx.decide_ok(&round, "p1", json!("stand"));
            ctx.decide_ok(&round, "p2", json!("stand"));
            let settled = ctx.cards_ok(&round, &["TS"]);
            assert_eq!(credited(&settled, "p1"), paid(plan, "main", "win", 1000));
            assert_eq!(credited(&settled, "p2"), 0, "11 loses to 17");
        } else {
            // A random deal may finish the round at once (a dealer's or both players'
            // blackjack); only a round still in play is voided.
            ok(ctx.deal(&round));
            if ctx.round(&round)["phase"] != "settled" {
                ctx.void(&round, "end of test");
            }
        }
    }
    ctx.verify_export();
}

/// "Eso (A) se může počítat … za 1 nebo za 11. Výjimka: dvě esa mají součet 12 (11+1)" (plan:
/// `ace_counting = "one_or_eleven"`, at most one ace counts 11): A-A is 12, A-A-K is 12 (not a
/// bust), A-A-K-8 is 20 and beats the dealer's 17.
#[test]
fn czech_two_aces_count_12_and_a_third_card_counts_them_one_each() {
    let (_s, ctx) = Ctx::sqlite();
    for (table, plan) in [("c1", CZECH), ("s1", STRICT)] {
        ctx.open_table(table, plan, "live");
        let round = czech_round(&ctx, table);
        let first = ctx.cards_ok(&round, &["AH", "9S", "7D", "AD", "8S"]);
        assert_eq!(due(&first)[0]["total"], 12, "{plan}: {first}");
        ctx.decide_ok(&round, "p1", json!("hit"));
        let r = ctx.cards_ok(&round, &["KS"]);
        assert_eq!(next_of(&r), "decision:0:0", "{plan}: A-A-K is no bust: {r}");
        assert_eq!(due(&r)[0]["total"], 12, "{plan}: {r}");
        ctx.decide_ok(&round, "p1", json!("hit"));
        let r = ctx.cards_ok(&round, &["8C"]);
        assert_eq!(due(&r)[0]["total"], 20, "{plan}: {r}");
        ctx.decide_ok(&round, "p1", json!("stand"));
        ctx.decide_ok(&round, "p2", json!("stand"));
        let settled = ctx.cards_ok(&round, &["TD"]);
        assert_eq!(settled["phase"], "settled", "{settled}");
        assert_eq!(credited(&settled, "p1"), paid(plan, "main", "win", 1000));
        assert_eq!(credited(&settled, "p2"), pushed(plan, "main", 2000));
    }
    ctx.verify_export();
}

/// "Hráč, který je „trop“, vždy prohrává a to i tehdy, pokud je „trop“ i bankéř": p1's 25
/// loses although the dealer busts with 24; p2's standing 17 wins.
#[test]
fn czech_a_bust_player_loses_even_when_the_dealer_busts() {
    let (_s, ctx) = Ctx::sqlite();
    for (table, plan) in [("c1", CZECH), ("s1", STRICT)] {
        ctx.open_table(table, plan, "live");
        let round = czech_round(&ctx, table);
        ctx.cards_ok(&round, &["TH", "TS", "6D", "6C", "7S"]);
        ctx.decide_ok(&round, "p1", json!("hit"));
        let r = ctx.cards_ok(&round, &["9D"]);
        assert_eq!(next_of(&r), "decision:1:0", "p1 is bust: {r}");
        let r = ctx.decide_ok(&round, "p2", json!("stand"));
        assert_eq!(next_of(&r), "card:dealer", "{r}");
        let settled = ctx.cards_ok(&round, &["TC", "8H"]);
        assert_eq!(settled["outcome"]["dealer"]["bust"], true, "{settled}");
        assert_eq!(
            settled["outcome"]["positions"][0]["hands"][0]["result"],
            "lose"
        );
        assert_eq!(credited(&settled, "p1"), 0, "{plan}: {settled}");
        assert_eq!(credited(&settled, "p2"), paid(plan, "main", "win", 2000));
        assert_eq!(settled["paid_minor"], paid(plan, "main", "win", 2000));
    }
    ctx.verify_export();
}

/// "Omezení double … pouze při součtu 9, 10 nebo 11" (strict: `double.on = "totals"`); the
/// base plan doubles any two cards. The same cards at both tables: p1's 16 doubles only at the
/// base table, p2's 10 at both; the dealer busts.
#[test]
fn czech_strict_doubles_only_on_9_10_11_where_the_base_plan_doubles_any_two_cards() {
    let (_s, ctx) = Ctx::sqlite();
    for (table, plan) in [("c1", CZECH), ("s1", STRICT)] {
        ctx.open_table(table, plan, "live");
        let round = czech_round(&ctx, table);
        let first = ctx.cards_ok(&round, &["9H", "6S", "5H", "7C", "4D"]);
        let p1_doubles = plan == CZECH;
        assert_eq!(
            legal(&first).contains(&"double".to_string()),
            p1_doubles,
            "{plan}: {first}"
        );
        if p1_doubles {
            let d = ctx.decide_ok(&round, "p1", json!("double"));
            assert_eq!(added_stakes(&d, "p1"), 1000, "{d}");
        } else {
            let e = ctx.decide_refused(&round, "p1", json!("double"), "double_total_not_allowed");
            assert_eq!(e["decisions"][0]["plan"], STRICT, "{e}");
            ctx.decide_ok(&round, "p1", json!("hit"));
        }
        let r = ctx.cards_ok(&round, &["5C"]);
        assert_eq!(next_of(&r), "decision:1:0", "{plan}: {r}");
        let d = ctx.decide_ok(&round, "p2", json!("double"));
        assert_eq!(added_stakes(&d, "p2"), 2000, "{d}");
        let settled = ctx.cards_ok(&round, &["TS", "TH", "9C"]);
        assert_eq!(settled["phase"], "settled", "{settled}");
        assert_eq!(settled["outcome"]["dealer"]["bust"], true, "{settled}");
        let p1 = paid(plan, "main", "win", 1000)
            + if p1_doubles {
                paid(plan, "double", "win", 1000)
            } else {
                0
            };
        assert_eq!(credited(&settled, "p1"), p1, "{plan}: {settled}");
        assert_eq!(
            credited(&settled, "p2"),
            paid(plan, "main", "win", 2000) + paid(plan, "double", "win", 2000),
            "{plan}: {settled}"
        );
        assert_paid_adds_up(&settled);
    }
    ctx.verify_export();
}

/// "Double po split" (strict: `double.after_split = false`; base: allowed): p1 splits 8-8 and
/// holds 11 on the first hand. The base table doubles it to 21, the strict one refuses
/// (`double_after_split_not_allowed`) and hits to the same 21. The second hand's 18 and p2's
/// 17 lose to the dealer's 20.
#[test]
fn czech_strict_forbids_a_double_after_a_split_where_the_base_plan_allows_it() {
    let (_s, ctx) = Ctx::sqlite();
    for (table, plan) in [("c1", CZECH), ("s1", STRICT)] {
        ctx.open_table(table, plan, "live");
        let round = czech_round(&ctx, table);
        ctx.cards_ok(&round, &["8H", "TS", "6D", "8C", "7S"]);
        let s = ctx.decide_ok(&round, "p1", json!("split"));
        assert_eq!(added_stakes(&s, "p1"), 1000, "{s}");
        let r = ctx.cards_ok(&round, &["3C"]);
        assert_eq!(due(&r)[0]["total"], 11, "{r}");
        let das = plan == CZECH;
        assert_eq!(
            legal(&r).contains(&"double".to_string()),
            das,
            "{plan}: {r}"
        );
        if das {
            ctx.decide_ok(&round, "p1", json!("double"));
        } else {
            ctx.decide_refused(
                &round,
                "p1",
                json!("double"),
                "double_after_split_not_allowed",
            );
            ctx.decide_ok(&round, "p1", json!("hit"));
        }
        let r = ctx.cards_ok(&round, &["TD", "TC"]);
        assert_eq!(next_of(&r), "decision:0:1", "{plan}: {r}");
        ctx.decide_ok(&round, "p1", json!("stand"));
        ctx.decide_ok(&round, "p2", json!("stand"));
        let settled = ctx.cards_ok(&round, &["TH", "4S"]);
        assert_eq!(settled["outcome"]["dealer"]["total"], 20, "{settled}");
        let p1 = paid(plan, "main", "win", 1000)
            + if das {
                paid(plan, "double", "win", 1000)
            } else {
                0
            };
        assert_eq!(credited(&settled, "p1"), p1, "{plan}: {settled}");
        assert_eq!(credited(&settled, "p2"), 0, "{plan}: {settled}");
        assert_eq!(settled["stake_minor"], if das { 5000 } else { 4000 });
        assert_paid_adds_up(&settled);
    }
    ctx.verify_export();
}

/// "Vícenásobný split" is off in both plans (`split.max_hands = 2`): 8-8 splits once; the
/// first hand's new 8-8 is refused (`max_hands_reached`) and stands on 16 (losing to 17), the
/// second hand draws to 21 and wins its split stake.
#[test]
fn czech_splits_once_into_two_hands_in_both_plans() {
    let (_s, ctx) = Ctx::sqlite();
    for (table, plan) in [("c1", CZECH), ("s1", STRICT)] {
        ctx.open_table(table, plan, "live");
        let round = czech_round(&ctx, table);
        ctx.cards_ok(&round, &["8H", "TS", "7D", "8C", "9S"]);
        ctx.decide_ok(&round, "p1", json!("split"));
        let r = ctx.cards_ok(&round, &["8D"]);
        assert_eq!(due(&r)[0]["cards"], json!(["8h", "8d"]), "{r}");
        assert!(!legal(&r).contains(&"split".to_string()), "{plan}: {r}");
        ctx.decide_refused(&round, "p1", json!("split"), "max_hands_reached");
        ctx.decide_ok(&round, "p1", json!("stand"));
        ctx.cards_ok(&round, &["3S"]);
        ctx.decide_ok(&round, "p1", json!("hit"));
        let r = ctx.cards_ok(&round, &["TC"]);
        assert_eq!(next_of(&r), "decision:1:0", "{plan}: 21 ends the hand: {r}");
        ctx.decide_ok(&round, "p2", json!("stand"));
        let settled = ctx.cards_ok(&round, &["TH"]);
        assert_eq!(settled["outcome"]["dealer"]["total"], 17, "{settled}");
        assert_eq!(
            credited(&settled, "p1"),
            paid(plan, "split", "win", 1000),
            "{plan}: {settled}"
        );
        assert_eq!(credited(&settled, "p2"), paid(plan, "main", "win", 2000));
        assert_eq!(settled["stake_minor"], 4000);
    }
    ctx.verify_export();
}

/// "Pouze jedna karta na rozdělené eso" (strict: `split.aces_one_card = true`): each split ace
/// takes one card and its hand ends (A-5 stays 16 and loses to 17); at the base table the
/// first ace hits its soft 16 to 20. The second ace's A-9 wins at both.
#[test]
fn czech_strict_gives_split_aces_one_card_each_where_the_base_plan_plays_them_on() {
    let (_s, ctx) = Ctx::sqlite();
    for (table, plan) in [("c1", CZECH), ("s1", STRICT)] {
        ctx.open_table(table, plan, "live");
        let one_card = plan == STRICT;
        let round = czech_round(&ctx, table);
        ctx.cards_ok(&round, &["AH", "TS", "9H", "AD", "8S"]);
        ctx.decide_ok(&round, "p1", json!("split"));
        let r = ctx.cards_ok(&round, &["5C"]);
        if one_card {
            assert_eq!(next_of(&r), "card:hand:0:1", "{plan}: {r}");
            refused(
                ctx.decide(&round, json!([{"player": "p1", "decision": "hit"}])),
                409,
                "out_of_order",
            );
        } else {
            assert_eq!(next_of(&r), "decision:0:0", "{plan}: {r}");
            ctx.decide_ok(&round, "p1", json!("hit"));
            ctx.cards_ok(&round, &["4D"]);
            ctx.decide_ok(&round, "p1", json!("stand"));
        }
        let r = ctx.cards_ok(&round, &["9S"]);
        if one_card {
            assert_eq!(next_of(&r), "decision:1:0", "{plan}: {r}");
        } else {
            assert_eq!(next_of(&r), "decision:0:1", "{plan}: {r}");
            ctx.decide_ok(&round, "p1", json!("stand"));
        }
        ctx.decide_ok(&round, "p2", json!("stand"));
        let settled = ctx.cards_ok(&round, &["8C"]);
        assert_eq!(settled["outcome"]["dealer"]["total"], 17, "{settled}");
        let first_hand = if one_card {
            0
        } else {
            paid(plan, "main", "win", 1000)
        };
        assert_eq!(
            credited(&settled, "p1"),
            first_hand + paid(plan, "split", "win", 1000),
            "{plan}: {settled}"
        );
        assert_eq!(credited(&settled, "p2"), paid(plan, "main", "win", 2000));
    }
    ctx.verify_export();
}

/// "Zákaz split na desítku" (strict: `split.ten_value_cards = false`): J-Q is refused
/// (`ten_value_split_not_allowed`) and stands on 20; the base table splits it into 19 and 18.
/// Against the dealer's 17 every hand wins.
#[test]
fn czech_strict_forbids_splitting_ten_value_cards_where_the_base_plan_splits_them() {
    let (_s, ctx) = Ctx::sqlite();
    for (table, plan) in [("c1", CZECH), ("s1", STRICT)] {
        ctx.open_table(table, plan, "live");
        let splits = plan == CZECH;
        let round = czech_round(&ctx, table);
        let first = ctx.cards_ok(&round, &["JH", "TS", "7S", "QD", "8S"]);
        assert_eq!(
            legal(&first).contains(&"split".to_string()),
            splits,
            "{plan}: {first}"
        );
        if splits {
            ctx.decide_ok(&round, "p1", json!("split"));
            ctx.cards_ok(&round, &["9C"]);
            ctx.decide_ok(&round, "p1", json!("stand"));
            ctx.cards_ok(&round, &["8H"]);
        } else {
            ctx.decide_refused(&round, "p1", json!("split"), "ten_value_split_not_allowed");
        }
        ctx.decide_ok(&round, "p1", json!("stand"));
        ctx.decide_ok(&round, "p2", json!("stand"));
        let settled = ctx.cards_ok(&round, &["TH"]);
        assert_eq!(settled["outcome"]["dealer"]["total"], 17, "{settled}");
        let p1 = paid(plan, "main", "win", 1000)
            + if splits {
                paid(plan, "split", "win", 1000)
            } else {
                0
            };
        assert_eq!(credited(&settled, "p1"), p1, "{plan}: {settled}");
        assert_eq!(credited(&settled, "p2"), paid(plan, "main", "win", 2000));
    }
    ctx.verify_export();
}

/// Neither plan offers insurance or surrender ("the document describes no insurance / no
/// surrender"): no insurance bet, no insurance offer on the dealer's ace, no surrender. The
/// dealer's A-6 stands ("pokud je 17 a výše, nesmí brát další kartu": `soft_17 = "stand"`).
#[test]
fn czech_offers_neither_insurance_nor_surrender_and_the_dealer_stands_on_soft_17() {
    let (_s, ctx) = Ctx::sqlite();
    for (table, plan) in [("c1", CZECH), ("s1", STRICT)] {
        ctx.open_table(table, plan, "live");
        let round = ctx.open_round(table);
        let b = ctx.bets(
            &round,
            json!([
                bet("p1", "main", 1, 1000),
                bet("p1", "insurance", 1, 500),
                bet("p2", "main", 3, 2000),
            ]),
        );
        assert_eq!(b["accepted"], 2, "{b}");
        assert_eq!(b["results"][1]["code"], "not_offered", "{b}");
        ctx.close_betting(&round);
        let first = ctx.cards_ok(&round, &["9H", "TS", "AS", "7C", "8S"]);
        assert_eq!(
            next_of(&first),
            "decision:0:0",
            "{plan}: no insurance: {first}"
        );
        assert!(!legal(&first).contains(&"surrender".to_string()), "{first}");
        ctx.decide_refused(&round, "p1", json!("surrender"), "surrender_not_offered");
        ctx.decide_refused(
            &round,
            "p1",
            json!({"action": "insurance", "stake_minor": 500}),
            "no_decision_owed",
        );
        ctx.decide_ok(&round, "p1", json!("stand"));
        ctx.decide_ok(&round, "p2", json!("stand"));
        let settled = ctx.cards_ok(&round, &["6D"]);
        assert_eq!(
            settled["phase"], "settled",
            "{plan}: soft 17 stands: {settled}"
        );
        assert_eq!(settled["outcome"]["dealer"]["soft"], true);
        assert_eq!(credited(&settled, "p1"), 0);
        assert_eq!(credited(&settled, "p2"), paid(plan, "main", "win", 2000));
        assert_eq!(settled["stake_minor"], 3000);
    }
    ctx.verify_export();
}

/// "Pokud má krupiér black jack, prohrávají svou sázku všichni hráči s výjimkou těch, kteří
/// sami mají black jack – ti končí nerozhodně": with no hole card the dealer's blackjack comes
/// after the players, and takes the double too (plan: `dealer_blackjack_takes =
/// "all_stakes"`): p1's doubled 21 loses everything, p2's blackjack ties.
#[test]
fn czech_dealer_blackjack_after_the_players_takes_the_double_and_ties_a_blackjack() {
    let (_s, ctx) = Ctx::sqlite();
    for (table, plan) in [("c1", CZECH), ("s1", STRICT)] {
        ctx.open_table(table, plan, "live");
        let round = czech_round(&ctx, table);
        let first = ctx.cards_ok(&round, &["5H", "AH", "AS", "6C", "KC"]);
        assert_eq!(next_of(&first), "decision:0:0", "{first}");
        ctx.decide_ok(&round, "p1", json!("double"));
        let r = ctx.cards_ok(&round, &["TD"]);
        assert_eq!(
            next_of(&r),
            "card:dealer",
            "p2's blackjack decides nothing: {r}"
        );
        let settled = ctx.cards_ok(&round, &["KD"]);
        assert_eq!(settled["outcome"]["dealer"]["blackjack"], true, "{settled}");
        assert_eq!(credited(&settled, "p1"), 0, "{plan}: {settled}");
        assert_eq!(credited(&settled, "p2"), pushed(plan, "main", 2000));
        assert_eq!(settled["stake_minor"], 4000);
    }
    ctx.verify_export();
}

/// A player's blackjack is paid when the dealer's hand is done (plan:
/// `player_blackjack_paid = "after_dealer_hand"`: his second card could still make a
/// blackjack), 3:2 (assumed: "the ratio of every casino plan of this family").
#[test]
fn czech_player_blackjack_is_paid_3_to_2_after_the_dealers_hand() {
    let (_s, ctx) = Ctx::sqlite();
    for (table, plan) in [("c1", CZECH), ("s1", STRICT)] {
        ctx.open_table(table, plan, "live");
        let round = czech_round(&ctx, table);
        ctx.cards_ok(&round, &["9H", "AH", "AS", "9C", "KC"]);
        let r = ctx.decide_ok(&round, "p1", json!("stand"));
        assert_eq!(r["phase"], "betting_closed", "not yet settled: {r}");
        assert!(r["settlements"].is_null(), "{r}");
        let settled = ctx.cards_ok(&round, &["6D"]);
        assert_eq!(settled["phase"], "settled", "{settled}");
        assert_eq!(credited(&settled, "p1"), paid(plan, "main", "win", 1000));
        assert_eq!(
            credited(&settled, "p2"),
            paid(plan, "main", "blackjack", 2000),
            "{plan}: {settled}"
        );
        assert_eq!(credited(&settled, "p2"), 2000 + 3000);
    }
    ctx.verify_export();
}

/// A void mid-round returns every stake, the ones decisions added included: p1's double, p2's
/// split and his double after it (base plan), each by its bet id.
#[test]
fn czech_void_mid_round_returns_every_stake_with_split_and_double_stakes() {
    let (_s, ctx) = Ctx::sqlite();
    ctx.open_table("c1", CZECH, "live");
    let round = czech_round(&ctx, "c1");
    ctx.cards_ok(&round, &["9H", "8S", "7D", "2C", "8D"]);
    let mut want: BTreeMap<String, (String, i64)> = BTreeMap::new();
    want.insert(format!("{round}.1"), ("p1".into(), 1000));
    want.insert(format!("{round}.2"), ("p2".into(), 2000));
    let mut add = |reply: &Value| {
        for p in ["p1", "p2"] {
            for (id, stake) in added_bets(reply, p) {
                want.insert(id, (p.to_string(), stake));
            }
        }
    };
    add(&ctx.decide_ok(&round, "p1", json!("double")));
    ctx.cards_ok(&round, &["5D"]);
    add(&ctx.decide_ok(&round, "p2", json!("split")));
    ctx.cards_ok(&round, &["2H"]);
    add(&ctx.decide_ok(&round, "p2", json!("double")));
    let r = ctx.cards_ok(&round, &["9C"]);
    assert_eq!(
        next_of(&r),
        "card:hand:1:1",
        "p2's second hand awaits its card: {r}"
    );
    assert_eq!(want.len(), 5, "{want:?}");
    let voided = ctx.void(&round, "dealer system fault");
    let got: BTreeMap<String, (String, i64)> = voided["refunds"]
        .as_array()
        .expect("refunds")
        .iter()
        .map(|r| {
            (
                r["bet"].as_str().expect("bet").to_string(),
                (
                    r["player"].as_str().expect("player").to_string(),
                    r["refund_minor"].as_i64().expect("refund"),
                ),
            )
        })
        .collect();
    assert_eq!(got, want, "{voided}");
    let of = |p: &str| -> i64 { got.values().filter(|(q, _)| q == p).map(|(_, s)| s).sum() };
    assert_eq!(of("p1"), 1000 + 1000, "main and double");
    assert_eq!(of("p2"), 2000 + 2000 + 2000, "main, split and double");
    assert_eq!(voided["refund_minor"], 8000);
    assert_eq!(ctx.round(&round)["phase"], "voided");
    // The table deals on: the next round is settled.
    let round = czech_round(&ctx, "c1");
    ctx.cards_ok(&round, &["TH", "TS", "7D", "9C", "8S"]);
    ctx.decide_ok(&round, "p1", json!("stand"));
    ctx.decide_ok(&round, "p2", json!("stand"));
    let settled = ctx.cards_ok(&round, &["TD"]);
    assert_eq!(credited(&settled, "p1"), paid(CZECH, "main", "win", 1000));
    assert_eq!(credited(&settled, "p2"), paid(CZECH, "main", "win", 2000));
    ctx.verify_export();
}

/// A decision not taken in time: the plan's automatic decision (`policies.decision_timeout`:
/// stand) once the decision time (1.5 s here) has run out. Live: the close of the decisions
/// before the deadline is refused, a late decision is refused (`decision_too_late`), the close
/// after it stands p1's 12 (which loses to 17). RNG: the next deal takes the time-out itself.
#[test]
fn czech_a_hand_whose_decision_time_runs_out_stands() {
    let plans = crate::source::plans_with(&[
        (
            "czech-blackjack@1.toml",
            &[("decision_ms = 15_000", "decision_ms = 1_500")],
        ),
        (
            "czech-blackjack-strict@1.toml",
            &[("decision_ms = 15_000", "decision_ms = 1_500")],
        ),
    ]);
    let storage = Storage::new(Backend::Sqlite);
    let ctx = Ctx::with_server(TestServer::spawn(
        plans.path(),
        &storage,
        &[("PITBOSS_ADMIN_KEY", ADMIN_KEY)],
    ));
    ctx.open_table("c1", CZECH, "live");
    ctx.open_table("s1", STRICT, "rng");
    let live = czech_round(&ctx, "c1");
    let first = ctx.cards_ok(&live, &["TH", "9S", "7H", "2C", "9D"]);
    assert!(first["decision_deadline"].is_string(), "{first}");
    refused(ctx.close_decisions(&live), 409, "decisions_open");
    let rng = czech_round(&ctx, "s1");
    let rng_reply = ok(ctx.deal(&rng));
    assert_eq!(rng_reply["phase"], "decisions", "{rng_reply}");
    let rng_due = due(&rng_reply)[0].clone();
    std::thread::sleep(Duration::from_millis(1_700));

    ctx.decide_refused(&live, "p1", json!("hit"), "decision_too_late");
    let closed = ok(ctx.close_decisions(&live));
    let auto = &inputs(&closed)[0];
    assert_eq!(auto["input"]["input"], "timed_out", "{closed}");
    assert_eq!(
        (auto["automatic"].as_bool(), auto["player"].as_str()),
        (Some(true), Some("p1"))
    );
    assert_eq!(auto["reason"], "time_out");
    assert_eq!(
        next_of(&closed),
        "decision:1:0",
        "p2's turn, in his own time: {closed}"
    );
    let settled = {
        ctx.decide_ok(&live, "p2", json!("stand"));
        ctx.cards_ok(&live, &["TD"])
    };
    let hands = &settled["outcome"]["positions"][0]["hands"];
    assert_eq!(
        hands[0]["cards"],
        json!(["Th", "2c"]),
        "stood on 12: {settled}"
    );
    assert_eq!(credited(&settled, "p1"), 0);
    assert_eq!(credited(&settled, "p2"), paid(CZECH, "main", "win", 2000));

    // RNG: the deal after the deadline stands the hand that was due, then deals on.
    let rng_reply = ok(ctx.deal(&rng));
    let auto = &inputs(&rng_reply)[0];
    assert_eq!(auto["input"]["input"], "timed_out", "{rng_reply}");
    assert_eq!(auto["input"]["position"], rng_due["position"]);
    assert_eq!(auto["player"], rng_due["player"]);
    assert_eq!(auto["automatic"], true);
    let position = rng_due["position"].as_u64().expect("position") as usize;
    let play = ctx.round(&rng)["blackjack"]["play"].clone();
    let hand = &play["positions"][position]["play"]["hands"][0];
    assert_eq!(hand["stood"], true, "{play}");
    assert_eq!(
        hand["cards"], rng_due["cards"],
        "no card after the time-out: {play}"
    );
    // (No export check here: the replay loads the committed plans, whose decision time
    // differs from this copy's, and refuses the tables opened on the copy.)
    // The automatic decisions replay from the log, with the plans the server ran.
    crate::replay::exported_log_verifies_and_replays_on(&ctx.server, &ctx.auditor, plans.path());
}

// ===== RNG ======================================================================================

/// What a plan's RNG round is checked against.
struct Rules {
    plan: &'static str,
    shoe: pitboss::cards::Shoe,
    hits_soft_17: bool,
    stand_on: u8,
    insurance_share: Option<(i64, i64)>,
}

fn rules_of(plan: &'static str) -> Rules {
    let p = crate::source::plan(plan);
    let GameRules::Blackjack(r) = &p.plan.rules else {
        panic!("{plan} is a blackjack plan")
    };
    Rules {
        plan,
        shoe: r.shoe,
        hits_soft_17: r.dealer.soft_17 == Soft17::Hit,
        stand_on: r.dealer.stand_on,
        insurance_share: r
            .insurance
            .offered
            .then(|| r.insurance.fraction_of_main.expect("share"))
            .map(|f| (f.numerator() as i64, f.denominator() as i64)),
    }
}

/// (total, soft) with at most one ace counted 11 (every plan here: `one_or_eleven`).
fn value(cards: &[Card]) -> (u8, bool) {
    let hard: u8 = cards
        .iter()
        .map(|c| match c.to_string().chars().next() {
            Some('A') => 1,
            Some('T' | 'J' | 'Q' | 'K') => 10,
            Some(d) => d.to_digit(10).expect("rank") as u8,
            None => unreachable!(),
        })
        .sum();
    let ace = cards.iter().any(|c| c.to_string().starts_with('A'));
    if ace && hard <= 11 {
        (hard + 10, true)
    } else {
        (hard, false)
    }
}

fn natural(cards: &[Card]) -> bool {
    cards.len() == 2 && value(cards).0 == 21
}

fn cards_in(v: &Value) -> Vec<Card> {
    v.as_array()
        .unwrap_or_else(|| panic!("cards: {v}"))
        .iter()
        .map(|c| card(c.as_str().expect("card")))
        .collect()
}

/// The fixed policy: insure half the bet on even rounds, split aces and eights, double 10 and
/// 11, hit below 17 (and a soft 17), else stand — each only where the round says it is legal.
fn policy(d: &Value, main: i64, round_no: usize, rules: &Rules) -> Value {
    if d["insurance"] == true {
        let (n, den) = rules.insurance_share.expect("insurance offered");
        return if round_no.is_multiple_of(2) {
            json!({"action": "insurance", "stake_minor": main * n / den})
        } else {
            json!({"action": "no_insurance"})
        };
    }
    let legal: Vec<&str> = d["legal"]
        .as_array()
        .expect("legal")
        .iter()
        .map(|l| l.as_str().expect("decision"))
        .collect();
    let cards = cards_in(&d["cards"]);
    let (total, soft) = value(&cards);
    let first = cards[0].to_string();
    let action = if legal.contains(&"split") && (first.starts_with('A') || first.starts_with('8')) {
        "split"
    } else if legal.contains(&"double") && (total == 10 || total == 11) {
        "double"
    } else if total < 17 || (total == 17 && soft) {
        "hit"
    } else {
        "stand"
    };
    assert!(legal.contains(&action), "{action} not in {legal:?}: {d}");
    json!({"action": action, "seat": d["seat"], "hand": d["hand"]})
}

/// One RNG round at `table` with the given (player, seat, stake) boxes, played to the end with
/// [`policy`] and checked: the seed's SHA-256 is the commitment given at open, every card dealt
/// is the start of the seed's shuffled shoe, the dealer followed the drawing rules, the stakes
/// added are what the decisions imply, and each player is credited what the plan's rows pay for
/// the outcome's hands. With `restart_on`, the server is killed after the round's first
/// decision and started again on that storage, and the round must come back as it was.
fn play_rng_round(
    ctx: &mut Ctx,
    table: &str,
    boxes: &[(&str, u8, i64)],
    round_no: usize,
    rules: &Rules,
    restart_on: Option<&Storage>,
) -> RngRound {
    let (s, opened) = ctx
        .server
        .post(&ctx.op, &format!("/v1/tables/{table}/rounds"), json!({}));
    assert_eq!(s, 201, "{opened}");
    let round = opened["round"].as_str().expect("round").to_string();
    let commitment = opened["rng_commitment"]
        .as_str()
        .expect("an RNG round commits its seed at open")
        .to_string();
    let bets: Vec<Value> = boxes
        .iter()
        .map(|(p, seat, stake)| bet(p, "main", *seat, *stake))
        .collect();
    ctx.accepted_bets(&round, json!(bets));
    ctx.close_betting(&round);
    let main_of = |player: &str| boxes.iter().find(|b| b.0 == player).expect("player").2;

    let mut cards: Vec<Option<Card>> = Vec::new();
    let mut added: BTreeMap<String, i64> = BTreeMap::new();
    let mut insured: BTreeMap<String, i64> = BTreeMap::new();
    let mut reply = ok(ctx.deal(&round));
    let mut by_decision = false;
    let mut restarted = false;
    for step in 0..60 {
        cards.extend(dealt_or_hidden(&reply));
        for (p, _, _) in boxes {
            *added.entry(p.to_string()).or_default() += added_stakes(&reply, p);
        }
        if reply["phase"] == "settled" {
            break;
        }
        if let (Some(storage), true, false) = (restart_on, step >= 1, restarted) {
            let before = ctx.round(&round);
            ctx.server.kill();
            ctx.server = TestServer::on(storage);
            let after = ctx.round(&round);
            for k in [
                "phase",
                "bets",
                "decision_deadline",
                "decisions_pending",
                "blackjack",
            ] {
                assert_eq!(after[k], before[k], "{k} after the restart");
            }
            restarted = true;
        }
        let owed = due(&reply);
        if owed.is_empty() {
            reply = ok(ctx.deal(&round));
            by_decision = false;
            continue;
        }
        let d = &owed[0];
        let player = d["player"].as_str().expect("player");
        let decision = policy(d, main_of(player), round_no, rules);
        if decision["action"] == "insurance" {
            insured.insert(
                player.to_string(),
                decision["stake_minor"].as_i64().unwrap(),
            );
        }
        reply = ctx.decide_ok(&round, player, decision);
        by_decision = true;
    }
    assert_eq!(reply["phase"], "settled", "{reply}");

    // The seed: committed before any bet, and the cards are its shoe's first cards.
    let hex = reply["rng_seed"]
        .as_str()
        .unwrap_or_else(|| panic!("round {round}: the seed is revealed at settlement: {reply}"));
    let seed: Vec<u8> = (0..32)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex seed"))
        .collect();
    assert_eq!(
        pitboss::plan::canonical::hex(&sha2::Sha256::digest(&seed)),
        commitment,
        "round {round}"
    );
    let shoe = pitboss::games::blackjack::shuffled_shoe(rules.shoe, seed.try_into().unwrap());
    // The hole card the replies withheld is the round's, once the dealer played.
    let all = crate::bj::dealt_of_finished(ctx, &round);
    let cards: Vec<Card> = cards
        .iter()
        .enumerate()
        .map(|(k, c)| c.unwrap_or_else(|| card(&all[k])))
        .collect();
    assert_eq!(
        cards[..],
        shoe[..cards.len()],
        "round {round}: the seed's shoe"
    );

    // The dealer drew by the plan's rules.
    let outcome = &reply["outcome"];
    let dealer = cards_in(&outcome["dealer"]["cards"]);
    let draws = |c: &[Card]| {
        let (t, soft) = value(c);
        t < rules.stand_on || (t == rules.stand_on && soft && rules.hits_soft_17)
    };
    assert!(dealer.len() >= 2, "{outcome}");
    for n in 2..dealer.len() {
        assert!(
            draws(&dealer[..n]),
            "round {round}: drew on {:?}",
            &dealer[..n]
        );
    }
    assert!(
        !draws(&dealer),
        "round {round}: stood too early on {dealer:?}"
    );
    let (dealer_total, _) = value(&dealer);
    let dealer_bj = natural(&dealer[..2]);
    let mut seen = dealer.len();

    // Each player's credit by the plan's rows.
    let p = rules.plan;
    for pos in outcome["positions"].as_array().expect("positions") {
        let player = pos["player"].as_str().expect("player");
        let main = main_of(player);
        let mut want = 0;
        let mut staked = 0;
        for (i, h) in pos["hands"].as_array().expect("hands").iter().enumerate() {
            let hc = cards_in(&h["cards"]);
            seen += hc.len();
            let (total, _) = value(&hc);
            let doubled = h["doubled"] == true;
            let base = if i == 0 { "main" } else { "split" };
            let player_bj = natural(&hc) && h["from_split"] == false && !doubled;
            let result = if total > 21 {
                "lose"
            } else if player_bj {
                if dealer_bj {
                    "push"
                } else {
                    "blackjack"
                }
            } else if dealer_bj {
                "lose"
            } else if dealer_total > 21 || total > dealer_total {
                "win"
            } else if total == dealer_total {
                "push"
            } else {
                "lose"
            };
            let shown = h["result"].as_str().expect("result");
            assert!(
                shown == result || (result == "lose" && shown == "lose_to_dealer_blackjack"),
                "round {round}: {h} is {result}"
            );
            let one = |bet: &str| match result {
                "win" => paid(p, bet, "win", main),
                "blackjack" => paid(p, bet, "blackjack", main),
                "push" => pushed(p, bet, main),
                _ => 0,
            };
            want += one(base);
            staked += main;
            if doubled {
                want += one("double");
                staked += main;
            }
        }
        if let Some(&ins) = insured.get(player) {
            staked += ins;
            if dealer_bj {
                want += paid(p, "insurance", "win", ins);
            }
        }
        assert_eq!(
            credited(&reply, player),
            want,
            "round {round} {player}: {reply}"
        );
        assert_eq!(
            added[player],
            staked - main,
            "round {round} {player}: the stakes the decisions added"
        );
    }
    assert_eq!(
        seen,
        cards.len(),
        "round {round}: every card dealt is in a hand"
    );
    let total_staked: i64 = boxes.iter().map(|b| b.2).sum::<i64>() + added.values().sum::<i64>();
    assert_eq!(reply["stake_minor"], total_staked, "round {round}");
    assert_paid_adds_up(&reply);
    RngRound {
        by_decision,
        restarted,
    }
}

struct RngRound {
    /// The round was settled by a decision (the dealer needed no further card), not a deal.
    by_decision: bool,
    restarted: bool,
}

/// Single deck, RNG: rounds dealt from the committed seed, played to the end and settled by
/// the plan; among them rounds that end on the player's last decision (the dealer stands on
/// his two cards), which must reveal the seed as well.
#[test]
fn single_deck_rng_rounds_deal_the_revealed_seeds_deck_and_settle_by_the_plan() {
    let (_s, mut ctx) = Ctx::sqlite();
    ctx.open_table("r1", SINGLE, "rng");
    let rules = rules_of(SINGLE);
    let mut ended_on_decision = 0;
    let mut n = 0;
    while n < 6 || (ended_on_decision == 0 && n < 40) {
        if play_rng_round(&mut ctx, "r1", &[("p1", 1, 1000)], n, &rules, None).by_decision {
            ended_on_decision += 1;
        }
        n += 1;
    }
    assert!(ended_on_decision > 0, "no round ended on a decision in {n}");
    ctx.verify_export();
}

/// Czech, RNG, both plans: three players per round, several rounds each, dealt from the
/// committed seeds (the dealer's second card after the players) and settled by the plan.
#[test]
fn czech_rng_rounds_deal_the_revealed_seeds_shoe_and_settle_by_the_plan() {
    let (_s, mut ctx) = Ctx::sqlite();
    for (table, plan) in [("c1", CZECH), ("s1", STRICT)] {
        ctx.open_table(table, plan, "rng");
        let rules = rules_of(plan);
        for n in 0..5 {
            play_rng_round(
                &mut ctx,
                table,
                &[("p1", 1, 1000), ("p2", 4, 2500), ("p3", 6, 100)],
                n,
                &rules,
                None,
            );
        }
    }
    ctx.verify_export();
}

// ===== Restarts =================================================================================

/// A kill in the middle of a split round and a restart on the same storage: the round, its
/// hands, what it awaits and the deck's count come back as they were, and the round plays on
/// to the settlement the cards make (20 wins, 18 pushes the dealer's 18).
#[test]
fn single_deck_restart_mid_round_continues_identically() {
    let storage = Storage::new(Backend::Sqlite);
    let mut ctx = Ctx::start(&storage);
    ctx.open_table("t1", SINGLE, "live");
    let round = ctx.round_with("t1", json!([bet("p1", "main", 1, 1000)]));
    ctx.cards_ok(&round, &["8H", "6S", "8C", "TD"]);
    ctx.decide_ok(&round, "p1", json!("split"));
    ctx.cards_ok(&round, &["3D"]);
    let before = ctx.round(&round);
    ctx.server.kill();
    ctx.server = TestServer::on(&storage);
    let after = ctx.round(&round);
    for k in [
        "phase",
        "bets",
        "decision_deadline",
        "decisions_pending",
        "blackjack",
    ] {
        assert_eq!(after[k], before[k], "{k} after the restart");
    }
    assert_eq!(after["blackjack"]["expected"]["due"][0]["total"], 11);
    ctx.decide_ok(&round, "p1", json!("hit"));
    ctx.cards_ok(&round, &["9C"]);
    ctx.decide_ok(&round, "p1", json!("stand"));
    ctx.cards_ok(&round, &["KD"]);
    ctx.decide_ok(&round, "p1", json!("stand"));
    // The deck's count survived the restart: the 8H is out.
    refused(ctx.cards(&round, &["8H"]), 422, "card_not_in_shoe");
    let settled = ctx.cards_ok(&round, &["2S"]);
    assert_eq!(settled["outcome"]["dealer"]["total"], 18, "{settled}");
    assert_eq!(
        credited(&settled, "p1"),
        paid(SINGLE, "main", "win", 1000) + pushed(SINGLE, "split", 1000),
        "{settled}"
    );
    ctx.verify_export();
}

/// PostgreSQL, Czech strict, RNG: a round killed after its first decision continues after a
/// restart from the same committed seed (its cards are the seed's shoe across the restart) and
/// settles by the plan; the export verifies and replays.
#[test]
fn czech_rng_restart_mid_round_on_postgresql_continues_from_the_committed_seed() {
    let storage = Storage::new(Backend::Postgres);
    let mut ctx = Ctx::start(&storage);
    ctx.open_table("s1", STRICT, "rng");
    let rules = rules_of(STRICT);
    // A round whose first deal settles it (every box a blackjack) has no middle: play another.
    let restarted = (0..4).any(|n| {
        play_rng_round(
            &mut ctx,
            "s1",
            &[("p1", 2, 1000), ("p2", 5, 2000)],
            n,
            &rules,
            Some(&storage),
        )
        .restarted
    });
    assert!(restarted, "no round was restarted in its middle");
    ctx.verify_export();
}
