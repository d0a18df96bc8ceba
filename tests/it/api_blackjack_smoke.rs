//! Blackjack through the API, first rounds: a live seated round with a double followed by a
//! Bet Behind, and an RNG common-hand round played to the end.

use serde_json::json;

use crate::bj::{added_stakes, bet, common, credited, next_of, settlement, Ctx};

/// Evolution Blackjack, live: p1 doubles 11 on box 1 and p2's Bet Behind follows; 21 against
/// the dealer's 17 pays the main bet and the double 1:1, the Bet Behind and its double too.
#[test]
fn a_double_followed_by_the_bet_behind_is_paid_on_both() {
    let (_s, ctx) = Ctx::sqlite();
    ctx.open_table("t1", "evolution-blackjack@1", "live");
    let round = ctx.round_with(
        "t1",
        json!([
            bet("p1", "main", 1, 1000),
            bet("p1", "perfect_pairs", 1, 100),
            bet("p2", "bet_behind", 1, 200),
        ]),
    );
    // Box 1, the dealer's up card, box 1 again, the dealer's hole card (revealed after the
    // players: "K odkrytí této skryté karty krupiéra dojde … po odehrání všech sázejících").
    let first = ctx.cards_ok(&round, &["5H", "9S", "6C", "8D"]);
    assert_eq!(first["phase"], "decisions", "{first}");
    assert_eq!(next_of(&first), "decision:0:0", "{first}");
    assert_eq!(first["expected"]["due"][0]["player"], "p1", "{first}");
    let d = ctx.decide_ok(&round, "p1", json!("double"));
    assert_eq!(added_stakes(&d, "p1"), 1000, "{d}");
    assert_eq!(added_stakes(&d, "p2"), 200, "{d}");
    assert_eq!(next_of(&d), "card:hand:0:0", "{d}");
    // The double's card; the dealer stands on 17.
    let settled = ctx.cards_ok(&round, &["TD"]);
    assert_eq!(settled["phase"], "settled", "{settled}");
    assert_eq!(credited(&settled, "p1"), 4000, "{settled}");
    assert_eq!(credited(&settled, "p2"), 800, "{settled}");
    let pp = settlement(&settled, &format!("{round}.2"));
    assert_eq!(
        pp["total_minor"], 0,
        "perfect pairs loses on 5-6: {settled}"
    );
    assert_eq!(settled["stake_minor"], 1000 + 100 + 200 + 1000 + 200);
    ctx.verify_export();
}

/// Infinite Blackjack, RNG: two players on the common hand, both stand whatever they hold;
/// the round is dealt from the committed seed and settled, the seed revealed.
#[test]
fn an_rng_common_hand_round_is_dealt_decided_and_settled() {
    let (_s, ctx) = Ctx::sqlite();
    ctx.open_table("t1", "evolution-infinite-blackjack@1", "rng");
    let round = ctx.round_with(
        "t1",
        json!([common("p1", "main", 1000), common("p2", "main", 500)]),
    );
    let mut reply = {
        let (s, b) = ctx.deal(&round);
        assert_eq!(s, 200, "{b}");
        b
    };
    for _ in 0..20 {
        if reply["phase"] == "settled" {
            break;
        }
        let due = reply["expected"]["due"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if due.is_empty() {
            let (s, b) = ctx.deal(&round);
            assert_eq!(s, 200, "{b}");
            reply = b;
            continue;
        }
        let decisions: Vec<_> = due
            .iter()
            .map(|d| {
                let action = if d["insurance"] == true {
                    "no_insurance"
                } else {
                    "stand"
                };
                json!({"player": d["player"], "decision": {"action": action}})
            })
            .collect();
        let (s, b) = ctx.decide(&round, json!(decisions));
        assert_eq!(s, 200, "{b}");
        reply = b;
        if reply["phase"] != "settled"
            && reply["expected"]["due"]
                .as_array()
                .is_none_or(|d| d.is_empty())
        {
            let (s, b) = ctx.deal(&round);
            assert_eq!(s, 200, "{b}");
            reply = b;
        }
    }
    assert_eq!(reply["phase"], "settled", "{reply}");
    assert!(reply["rng_seed"].is_string(), "{reply}");
    ctx.verify_export();
}
