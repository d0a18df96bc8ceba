//! Top Card (`evolution-top-card@1`) end to end over HTTP, live and RNG, against the real
//! server: the dealing order (Home, then Away), the order of ranks (2 lowest, A highest, suits
//! never decide), every bet's exact money (Home/Away 1:1, half of Home/Away back on a tie, Tie
//! 11:1), the valid-round rule's re-deals with the bets standing (a card to Away first, a
//! third card, a damaged card the dealer declares), RNG rounds whose revealed seed is the
//! committed one, the exported log verified offline and a restart that rebuilds every round
//! from the log (SQLite and PostgreSQL).

use serde_json::{json, Value};

use crate::api_baccarat::{assert_paid, bet, code_of, next_of, revealed_seed, Ctx, Dealt};
use crate::server::{Backend, Storage};

const TOP: &str = "evolution-top-card@1";

/// "Pravidlo platného kola", the clause a re-deal cites.
const VALID_ROUND: &str = "Pravidlo platného kola";

/// A deal: Home's card, then Away's.
fn deal(home: &str, away: &str) -> Dealt {
    vec![("home", home.to_string()), ("away", away.to_string())]
}

/// "2 je nejnižší karta a hodnoty postupují vzestupně přes 3, 4, 5, 6, 7, 8, 9, 10, J (Jack),
/// Q (Queen), K (King) až po A (Ace), které má nejvyšší hodnotu."
const RANKS: [char; 13] = [
    '2', '3', '4', '5', '6', '7', '8', '9', 'T', 'J', 'Q', 'K', 'A',
];

fn strength(card: &str) -> usize {
    let r = card.chars().next().expect("rank");
    RANKS.iter().position(|&x| x == r).expect("a rank")
}

/// (returned, win) of a bet by 002: Home/Away 1:1, half of the Home/Away stake back on a tie
/// (rounded down, the plan's rounding), Tie 11:1 "bez ohledu na barvu".
fn expected(bet: &Value, home: &str, away: &str) -> (i64, i64) {
    let stake = bet["stake_minor"].as_i64().expect("stake");
    let (h, a) = (strength(home), strength(away));
    let side = |mine: usize, theirs: usize| match mine.cmp(&theirs) {
        std::cmp::Ordering::Greater => (stake, stake),
        std::cmp::Ordering::Equal => (stake / 2, 0),
        std::cmp::Ordering::Less => (0, 0),
    };
    match bet["bet"].as_str().expect("bet") {
        "home" => side(h, a),
        "away" => side(a, h),
        "tie" if h == a => (stake, 11 * stake),
        "tie" => (0, 0),
        other => panic!("no expectation for {other}"),
    }
}

fn assert_settled_by_the_table(reply: &Value, home: &str, away: &str, bets: &[Value]) {
    let winner = match strength(home).cmp(&strength(away)) {
        std::cmp::Ordering::Greater => "home",
        std::cmp::Ordering::Less => "away",
        std::cmp::Ordering::Equal => "tie",
    };
    assert_eq!(
        reply["outcome"],
        json!({"home": home, "away": away, "winner": winner}),
        "{reply}"
    );
    let settlements = reply["settlements"].as_array().expect("settlements");
    assert_eq!(settlements.len(), bets.len(), "{reply}");
    for (s, b) in settlements.iter().zip(bets) {
        let (returned, win) = expected(b, home, away);
        let stake = b["stake_minor"].as_i64().unwrap();
        assert_paid(
            s,
            stake,
            returned,
            win,
            &format!("{b}, Home {home} Away {away}"),
        );
    }
}

fn every_bet() -> Vec<Value> {
    vec![bet("home", 1_001), bet("away", 2_000), bet("tie", 300)]
}

fn live() -> Ctx {
    let ctx = Ctx::sqlite();
    ctx.open_table("top", TOP, "live");
    ctx
}

/// "první karta je vždy rozdána na pozici Domáci a druhá karta vždy na pozici Hosté"
#[test]
fn the_first_card_goes_to_home_and_the_second_to_away() {
    let ctx = live();
    let (round, _) = ctx.open_round("top");
    ctx.bets(&round, &[bet("home", 1_000)]);
    ctx.close_betting(&round);
    let r = ctx.cards_ok(&round, &[("home", "9h".into())]);
    assert_eq!(next_of(&r), "away", "the second card goes to Away: {r}");
    assert_eq!(r["phase"], Value::Null, "one card is no result: {r}");
    let r = ctx.cards_ok(&round, &[("away", "5c".into())]);
    assert_eq!(next_of(&r), "complete", "two cards make the deal: {r}");
    assert_eq!(r["phase"], "settled");
    assert_eq!(
        ctx.round(&round)["cards"],
        json!([{"to": "home", "card": "9h"}, {"to": "away", "card": "5c"}])
    );
    // A card after the round is settled changes nothing.
    let (s, b) = ctx.cards(&round, &[("home", "2d".into())]);
    assert_eq!((s, code_of(&b)), (409, "out_of_order"), "{b}");
}

/// The order of ranks 2 < 3 < … < 10 < J < Q < K < A, and "Barva karty nemá na výsledek hry
/// žádný vliv": every neighbouring pair of ranks both ways, and equal ranks of other suits tie.
#[test]
fn two_is_lowest_ace_highest_and_suits_never_decide() {
    let ctx = live();
    let bets = every_bet();
    let suits = ['c', 'd', 'h', 's'];
    for i in 0..RANKS.len() - 1 {
        let low = format!("{}{}", RANKS[i], suits[i % 4]);
        let high = format!("{}{}", RANKS[i + 1], suits[(i + 3) % 4]);
        for (home, away) in [(&high, &low), (&low, &high)] {
            let (_, r) = ctx.live_coup("top", &bets, &deal(home, away));
            let winner = if home == &high { "home" } else { "away" };
            assert_eq!(r["outcome"]["winner"], winner, "{high} beats {low}: {r}");
            assert_settled_by_the_table(&r, home, away, &bets);
        }
    }
    // 2 is lowest and A highest, whatever the suits.
    let (_, r) = ctx.live_coup("top", &bets, &deal("2s", "Ac"));
    assert_eq!(r["outcome"]["winner"], "away", "{r}");
    for (home, away) in [("Ah", "As"), ("2c", "2d"), ("Td", "Th"), ("7s", "7s")] {
        let (_, r) = ctx.live_coup("top", &bets, &deal(home, away));
        assert_eq!(
            r["outcome"]["winner"], "tie",
            "{home} and {away}: suits never decide: {r}"
        );
        assert_settled_by_the_table(&r, home, away, &bets);
    }
}

/// "Výherní sázky se vyplácejí v poměru 1:1" (Domáci, Hosté).
#[test]
fn home_and_away_pay_1_to_1() {
    let ctx = live();
    let bets = [bet("home", 1_000), bet("away", 2_500), bet("tie", 100)];
    let (_, r) = ctx.live_coup("top", &bets, &deal("Kd", "Qd"));
    let s = &r["settlements"];
    assert_paid(&s[0], 1_000, 1_000, 1_000, "Home wins 1:1");
    assert_paid(&s[1], 2_500, 0, 0, "Away loses");
    assert_paid(&s[2], 100, 0, 0, "Tie loses");
    assert_eq!(
        (r["stake_minor"].as_i64(), r["paid_minor"].as_i64()),
        (Some(3_600), Some(2_000))
    );
    let (_, r) = ctx.live_coup("top", &bets, &deal("3h", "4h"));
    let s = &r["settlements"];
    assert_paid(&s[0], 1_000, 0, 0, "Home loses");
    assert_paid(&s[1], 2_500, 2_500, 2_500, "Away wins 1:1");
}

/// "Pokud budou mít rozdané karty stejnou hodnotu, hráč vyhrává polovinu své původní hlavní
/// sázky (na Domáci nebo Hosté), a jestliže hráč podal sázku na Remízu, výhra se vyplatí v
/// poměru 11:1": half of the Home/Away stake back (an odd haléř rounded down), Tie 11:1.
#[test]
fn a_tie_returns_half_of_home_and_away_and_pays_tie_11_to_1() {
    let ctx = live();
    let bets = [bet("home", 1_001), bet("away", 2_000), bet("tie", 300)];
    let (_, r) = ctx.live_coup("top", &bets, &deal("Jc", "Jh"));
    let s = &r["settlements"];
    assert_paid(
        &s[0],
        1_001,
        500,
        0,
        "a tie returns half of Home, 500.5 rounded down",
    );
    assert_paid(&s[1], 2_000, 1_000, 0, "a tie returns half of Away");
    assert_paid(&s[2], 300, 300, 3_300, "Tie 11:1");
    assert_eq!(r["paid_minor"], 500 + 1_000 + 3_600);
    // The Tie bet stands alone: the document makes it no side bet.
    let (_, r) = ctx.live_coup("top", &[bet("tie", 100)], &deal("5c", "5s"));
    assert_paid(&r["settlements"][0], 100, 100, 1_100, "Tie alone, 11:1");
}

/// "Pokud dojde k chybě při rozdání (např. rozdání více nebo méně karet, poškozená karta apod.),
/// hra je považována za neplatnou a krupiér vyhlásí opakované rozdání": a card to Away first
/// voids the deal, which is dealt again; the bets stand.
#[test]
fn a_card_to_away_first_is_a_misdeal_and_the_deal_is_repeated_with_the_bets_standing() {
    let ctx = live();
    let bets = every_bet();
    let (round, _) = ctx.open_round("top");
    ctx.bets(&round, &bets);
    ctx.close_betting(&round);
    let r = ctx.cards_ok(&round, &[("away", "Kd".into())]);
    let m = &r["misdeal"];
    assert_eq!(m["clause"], VALID_ROUND, "{r}");
    assert_eq!(m["discarded"], json!([{"to": "away", "card": "Kd"}]));
    assert_eq!(next_of(&r), "home", "the deal starts again with Home: {r}");
    assert_eq!(r.get("settlements"), None);
    let round_now = ctx.round(&round);
    assert_eq!(round_now["misdeals"], 1);
    assert_eq!(round_now["cards"], json!([]));
    assert_eq!(round_now["phase"], "betting_closed");
    assert_eq!(
        round_now["bets"].as_array().unwrap().len(),
        3,
        "the bets stand"
    );
    // The discarded card stays out of the shoe.
    assert_eq!(ctx.table("top")["shoe"]["cards_seen"], 1);
    let r = ctx.cards_ok(&round, &deal("4s", "9c"));
    assert_settled_by_the_table(&r, "4s", "9c", &bets);
    assert_eq!(ctx.table("top")["shoe"]["cards_seen"], 3);
}

/// "rozdání více … karet": a third card in the deal voids it; it is dealt again and the bets
/// stand.
#[test]
fn a_third_card_is_a_misdeal_and_the_deal_is_repeated_with_the_bets_standing() {
    let ctx = live();
    let bets = every_bet();
    let (round, _) = ctx.open_round("top");
    ctx.bets(&round, &bets);
    ctx.close_betting(&round);
    let three = [deal("9h", "5c"), vec![("home", "2d".to_string())]].concat();
    let r = ctx.cards_ok(&round, &three);
    assert_eq!(r["misdeal"]["clause"], VALID_ROUND, "{r}");
    assert_eq!(
        r["misdeal"]["discarded"],
        json!([{"to": "home", "card": "9h"}, {"to": "away", "card": "5c"}, {"to": "home", "card": "2d"}]),
        "{r}"
    );
    assert_eq!(
        r.get("settlements"),
        None,
        "a void deal settles nothing: {r}"
    );
    let now = ctx.round(&round);
    assert_eq!(
        (now["misdeals"].as_u64(), now["phase"].as_str()),
        (Some(1), Some("betting_closed"))
    );
    assert_eq!(now["cards"], json!([]));
    assert_eq!(ctx.table("top")["shoe"]["cards_seen"], 3);
    // The re-deal settles the standing bets.
    let r = ctx.cards_ok(&round, &deal("6d", "6h"));
    assert_settled_by_the_table(&r, "6d", "6h", &bets);
    let kinds = ctx.recall_kinds(&round);
    let tail: Vec<&str> = kinds[kinds.len() - 5..]
        .iter()
        .map(String::as_str)
        .collect();
    assert_eq!(
        tail,
        [
            "misdeal",
            "card_dealt",
            "card_dealt",
            "outcome_recorded",
            "round_settled"
        ]
    );
}

/// "poškozená karta": the dealer system declares the deal void (`misdeal`) with the damaged
/// card on the table; the card is discarded, the deal repeated, the bets stand.
#[test]
fn a_misdeal_the_dealer_declares_discards_the_damaged_card_and_the_deal_is_repeated() {
    let ctx = live();
    let bets = every_bet();
    let (round, _) = ctx.open_round("top");
    ctx.bets(&round, &bets);
    // Not before betting closes, and with a reason.
    let (s, b) = ctx.misdeal(&round, "the Home card is damaged");
    assert_eq!((s, code_of(&b)), (409, "betting_open"), "{b}");
    ctx.close_betting(&round);
    ctx.cards_ok(&round, &[("home", "Qh".into())]);
    let (s, b) = ctx.misdeal(&round, " ");
    assert_eq!((s, code_of(&b)), (422, "bad_reason"), "{b}");
    let (s, r) = ctx.misdeal(&round, "the Home card is damaged");
    assert_eq!(s, 200, "{r}");
    assert_eq!(
        r["misdeal"],
        json!({"reason": "the Home card is damaged", "clause": VALID_ROUND, "discarded": [{"to": "home", "card": "Qh"}]}),
        "{r}"
    );
    assert_eq!(next_of(&r), "home");
    let now = ctx.round(&round);
    assert_eq!(
        (now["misdeals"].as_u64(), now["cards"].clone()),
        (Some(1), json!([]))
    );
    assert_eq!(now["bets"].as_array().unwrap().len(), 3, "the bets stand");
    assert_eq!(
        ctx.table("top")["shoe"]["cards_seen"],
        1,
        "the damaged card is out of the shoe"
    );
    let r = ctx.cards_ok(&round, &deal("Ad", "Kd"));
    assert_settled_by_the_table(&r, "Ad", "Kd", &bets);
    // After the result, no misdeal.
    let (s, b) = ctx.misdeal(&round, "late");
    assert_eq!((s, code_of(&b)), (409, "out_of_order"), "{b}");
}

/// "všechny již podané sázky zůstávají platné a hra pokračuje i bez jeho přítomnosti": no
/// refund on a disconnect, even before betting closes.
#[test]
fn the_bets_of_a_disconnected_player_stand() {
    let ctx = live();
    let (round, _) = ctx.open_round("top");
    ctx.bets(
        &round,
        &[json!({"player": "gone", "bet": "away", "stake_minor": 4_000})],
    );
    let c = ctx.connection("top", "gone", false);
    assert!(c.get("refunds").is_none(), "no stake comes back: {c}");
    ctx.close_betting(&round);
    let r = ctx.cards_ok(&round, &deal("2c", "3c"));
    assert_paid(
        &r["settlements"][0],
        4_000,
        4_000,
        4_000,
        "the bet stands and wins 1:1",
    );
}

/// "Tabulka nejvyšších sázek": Home and Away up to 200 000 Kč, Tie up to 100 000 Kč, per
/// player and round.
#[test]
fn bets_beyond_the_plan_are_refused_with_the_rule() {
    let ctx = live();
    let (round, _) = ctx.open_round("top");
    let r = ctx.try_bets(
        &round,
        &[
            bet("home", 20_000_001),
            bet("away", 20_000_001),
            bet("tie", 10_000_001),
            bet("home", 99),
            bet("draw", 100),
            bet("home", 20_000_000),
            bet("home", 100),
            bet("tie", 10_000_000),
        ],
    );
    let codes: Vec<&str> = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["code"].as_str().unwrap_or("accepted"))
        .collect();
    assert_eq!(
        codes,
        [
            "above_max_bet",
            "above_max_bet",
            "above_max_bet",
            "below_min_bet",
            "unknown_bet_type",
            "accepted",
            "above_max_bet",
            "accepted"
        ],
        "{r}"
    );
    assert_eq!(r["results"][0]["plan"], TOP);
    assert_eq!(
        r["results"][0]["clause"],
        "Tabulka nejvyšších sázek a odvislých nejvyšších výher"
    );
}

/// RNG: the seed's SHA-256 is committed when the round opens, before any bet; `deal` deals
/// both cards from it and settles; the revealed seed hashes to the commitment and deals
/// exactly those cards (the engine's documented shuffle).
fn rng_round(ctx: &Ctx, table: &str) -> String {
    let (round, commitment) = rng_open(ctx, table);
    rng_deal(ctx, &round, &commitment);
    round
}

/// Opens an RNG round (its commitment before any bet) and places the bets: the round and
/// the commitment.
fn rng_open(ctx: &Ctx, table: &str) -> (String, String) {
    let (round, opened) = ctx.open_round(table);
    let commitment = opened["rng_commitment"]
        .as_str()
        .expect("an RNG round commits its seed when it opens")
        .to_string();
    assert_eq!(ctx.round(&round)["rng_commitment"], commitment.as_str());
    ctx.bets(&round, &every_bet());
    (round, commitment)
}

/// Deals and settles an RNG round opened by [`rng_open`].
fn rng_deal(ctx: &Ctx, round: &str, commitment: &str) {
    let round = round.to_string();
    let bets = every_bet();
    ctx.close_betting(&round);
    let (s, b) = ctx.cards(&round, &deal("2c", "3c"));
    assert_eq!((s, code_of(&b)), (409, "wrong_mode"), "{b}");
    let (s, b) = ctx.misdeal(&round, "no");
    assert_eq!(
        (s, code_of(&b)),
        (409, "wrong_mode"),
        "an RNG deal has no misdeal: {b}"
    );
    let (s, r) = ctx.event(&round, json!({"type": "deal"}));
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["phase"], "settled", "{r}");
    let seed = revealed_seed(&r, commitment);
    let loaded = crate::source::plan(TOP);
    let engine = pitboss::games::top_card::TopCardEngine::new(&loaded.plan).expect("engine");
    assert_eq!(
        r["cards"],
        serde_json::to_value(engine.deal_from_seed(seed)).unwrap(),
        "the cards are the deal of the revealed seed"
    );
    assert_eq!(r["cards"][0]["to"], "home");
    assert_eq!(r["cards"][1]["to"], "away");
    let (home, away) = (
        r["cards"][0]["card"].as_str().unwrap().to_string(),
        r["cards"][1]["card"].as_str().unwrap().to_string(),
    );
    assert_settled_by_the_table(&r, &home, &away, &bets);
    let kinds = ctx.recall_kinds(&round);
    assert_eq!(&kinds[..2], ["round_opened", "bet_accepted"]);
    let (s, b) = ctx.event(&round, json!({"type": "deal"}));
    assert_eq!(s, 409, "a second deal is refused: {b}");
}

#[test]
fn rng_rounds_commit_before_bets_deal_both_cards_and_reveal_the_seed() {
    let ctx = Ctx::sqlite();
    ctx.open_table("top-rng", TOP, "rng");
    for _ in 0..6 {
        rng_round(&ctx, "top-rng");
    }
}

fn scenario(backend: Backend) {
    let storage = Storage::new(backend);
    let ctx = Ctx::start(&storage);
    ctx.open_table("live", TOP, "live");
    ctx.open_table("rng", TOP, "rng");
    let bets = every_bet();
    let mut rounds = Vec::new();
    for (home, away) in [("Ah", "2c"), ("3d", "Qs"), ("Ks", "Kh")] {
        let (round, r) = ctx.live_coup("live", &bets, &deal(home, away));
        assert_settled_by_the_table(&r, home, away, &bets);
        rounds.push(round);
    }
    // Re-deals: a card to Away first, then a damaged card.
    let (round, _) = ctx.open_round("live");
    ctx.bets(&round, &bets);
    ctx.close_betting(&round);
    assert!(ctx.cards_ok(&round, &[("away", "8c".into())])["misdeal"].is_object());
    ctx.cards_ok(&round, &[("home", "Jd".into())]);
    let (s, _) = ctx.misdeal(&round, "the Home card is damaged");
    assert_eq!(s, 200);
    let r = ctx.cards_ok(&round, &deal("Tc", "9s"));
    assert_settled_by_the_table(&r, "Tc", "9s", &bets);
    rounds.push(round);
    // A void returns every stake.
    let (round, _) = ctx.open_round("live");
    ctx.bets(&round, &bets);
    let voided = ctx.void(&round, "studio fault");
    assert_eq!(voided["refund_minor"], 1_001 + 2_000 + 300);
    rounds.push(round);
    ctx.shuffle("live");
    for _ in 0..3 {
        rounds.push(rng_round(&ctx, "rng"));
    }
    // At the restart, a live deal has its Home card and an RNG round holds its bets.
    let (half, _) = ctx.open_round("live");
    ctx.bets(&half, &bets);
    ctx.close_betting(&half);
    ctx.cards_ok(&half, &[("home", "8d".into())]);
    rounds.push(half.clone());
    let (pending, commitment) = rng_open(&ctx, "rng");
    rounds.push(pending.clone());
    crate::replay::exported_log_verifies_and_replays(&ctx.server, &ctx.auditor);
    let before: Vec<Value> = rounds.iter().map(|r| ctx.round(r)).collect();
    let tables = [ctx.table("live"), ctx.table("rng")];
    drop(ctx);

    // A restart rebuilds every round and the shoe from the log.
    let ctx = Ctx::start(&storage);
    for (round, was) in rounds.iter().zip(&before) {
        assert_eq!(
            &ctx.round(round),
            was,
            "round {round} reads the same after a restart"
        );
    }
    assert_eq!(
        [ctx.table("live"), ctx.table("rng")],
        tables,
        "the tables read the same"
    );
    // The open rounds go on where they stopped: Away's card, the committed seed.
    let r = ctx.cards_ok(&half, &[("away", "8s".into())]);
    assert_settled_by_the_table(&r, "8d", "8s", &bets);
    rng_deal(&ctx, &pending, &commitment);
    let (_, r) = ctx.live_coup("live", &bets, &deal("5h", "5d"));
    assert_settled_by_the_table(&r, "5h", "5d", &bets);
    rng_round(&ctx, "rng");
    crate::replay::exported_log_verifies_and_replays(&ctx.server, &ctx.auditor);
}

#[test]
fn top_card_end_to_end_on_sqlite() {
    scenario(Backend::Sqlite);
}

#[test]
fn top_card_end_to_end_on_postgres() {
    scenario(Backend::Postgres);
}

/// A card reported to a position Top Card does not have (`player_1`) is a malformed report of
/// the dealer system, not a misdeal: it is refused and the Home card already dealt stands
/// (it was once read as a re-deal, voiding the valid Home card).
#[test]
fn a_card_to_a_position_top_card_does_not_have_is_refused_not_redealt() {
    let ctx = live();
    let bets = every_bet();
    let (round, _) = ctx.open_round("top");
    ctx.bets(&round, &bets);
    ctx.close_betting(&round);
    ctx.cards_ok(&round, &[("home", "9h".into())]);
    let (s, b) = ctx.cards(&round, &[("player_1", "5c".into())]);
    assert_eq!((s, code_of(&b)), (422, "bad_position"), "{b}");
    let now = ctx.round(&round);
    assert_eq!(now["misdeals"], 0, "{now}");
    assert_eq!(now["cards"], json!([{"to": "home", "card": "9h"}]));
    assert_eq!(ctx.table("top")["shoe"]["cards_seen"], 1);
    let r = ctx.cards_ok(&round, &[("away", "5c".into())]);
    assert_settled_by_the_table(&r, "9h", "5c", &bets);
}
