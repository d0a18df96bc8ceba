//! Issue 16, end to end over HTTP against SQLite and PostgreSQL: the plan rules around the
//! games that 002 requires — live-only plans (§ 3(1), § 7(1)), the hole card kept from the
//! operator, partial voids, bet withdrawal, a voided poker hand — each refusal with its code
//! and clause, each change in the round's recall, and the export verifying and replaying.

use serde_json::{json, Value};

use crate::server::{Backend, Storage, TestServer, ADMIN_KEY};

/// Every plan of the main game plan 002 (its `[source] document`).
fn plans_of_002() -> Vec<String> {
    let dir = crate::source::plans_dir();
    let mut out: Vec<String> = std::fs::read_dir(&dir)
        .expect("plans")
        .map(|e| e.expect("entry").file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".toml"))
        .filter(|n| {
            std::fs::read_to_string(dir.join(n))
                .expect("plan")
                .contains("document = \"002_24105721a8b212ac.txt\"")
        })
        .map(|n| n.trim_end_matches(".toml").to_string())
        .collect();
    out.sort();
    out
}

fn rng_is_refused_on_every_plan_of_002(backend: Backend) {
    let storage = Storage::new(backend);
    // The committed plans, not the tests' copies.
    let server = TestServer::spawn(
        &crate::source::plans_dir(),
        &storage,
        &[("PITBOSS_ADMIN_KEY", ADMIN_KEY)],
    );
    let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
    let plans = plans_of_002();
    assert_eq!(plans.len(), 14, "002 has 14 games: {plans:?}");
    for (i, plan) in plans.iter().enumerate() {
        let (s, b) = server.post(
            &op,
            "/v1/tables",
            json!({"table": format!("rng{i}"), "plan": plan, "mode": "rng"}),
        );
        assert_eq!(s, 422, "{plan}: {b}");
        assert_eq!(b["code"], "mode_not_allowed", "{plan}: {b}");
        assert_eq!(b["plan"], plan.as_str(), "{b}");
        let clause = b["clause"].as_str().unwrap_or_default();
        assert!(
            clause.contains("§ 3(1)") && clause.contains("živá hra") && clause.contains("§ 7(1)"),
            "{plan}: {clause}"
        );
        let (s, b) = server.post(
            &op,
            "/v1/tables",
            json!({"table": format!("live{i}"), "plan": plan, "mode": "live"}),
        );
        assert_eq!(s, 201, "{plan}: {b}");
    }
    // Plans of other documents keep RNG where they allow it.
    let (s, b) = server.post(
        &op,
        "/v1/tables",
        json!({"table": "sd", "plan": "single-deck-blackjack@1", "mode": "rng"}),
    );
    assert_eq!(s, 201, "{b}");
    // A round on a live table, settled; the refusals are logged, and the log verifies and
    // replays with the committed plans.
    let (s, b) = server.post(
        &op,
        "/v1/tables",
        json!({"table": "rl", "plan": "synot-roulette@1", "mode": "live"}),
    );
    assert_eq!(s, 201, "{b}");
    let (s, b) = server.post(&op, "/v1/tables/rl/rounds", json!({}));
    assert_eq!(s, 201, "{b}");
    let (s, b) = server.post(&op, "/v1/rounds/rl.1/bets", json!({"bets": [{"player": "p1", "bet": "straight", "numbers": [17], "stake_minor": 1_000}]}));
    assert_eq!((s, &b["accepted"]), (200, &json!(1)), "{b}");
    let (s, b) = server.post(
        &op,
        "/v1/rounds/rl.1/events",
        json!({"type": "close_betting"}),
    );
    assert_eq!(s, 200, "{b}");
    let (s, b) = server.post(
        &op,
        "/v1/rounds/rl.1/events",
        json!({"type": "spin", "number": 17, "ball_against_rotation": true, "ball_revolutions": 4}),
    );
    assert_eq!((s, &b["paid_minor"]), (200, &json!(36_000)), "{b}");
    let auditor = server.create_key(ADMIN_KEY, "auditor", None);
    crate::replay::exported_log_verifies_and_replays_on(
        &server,
        &auditor,
        &crate::source::plans_dir(),
    );
}

#[test]
fn rng_is_refused_on_every_plan_of_002_sqlite() {
    rng_is_refused_on_every_plan_of_002(Backend::Sqlite);
}

#[test]
fn rng_is_refused_on_every_plan_of_002_postgres() {
    rng_is_refused_on_every_plan_of_002(Backend::Postgres);
}

// ----- 7. the hole card ---------------------------------------------------------------------

fn get(ctx: &crate::bj::Ctx, key: &str, path: &str) -> Value {
    let (s, _, b) = ctx.server.get_as(Some(key), path);
    assert_eq!(s, 200, "{path}: {b}");
    b
}

/// The cards of a recall's `blackjack_input` entries, in order.
fn recalled_cards(recall: &Value) -> Vec<String> {
    recall["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| e["entry"]["kind"] == "blackjack_input")
        .filter_map(|e| e["entry"]["payload"]["input"]["card"].as_str())
        .map(str::to_string)
        .collect()
}

fn the_hole_card_is_hidden_from_the_operator_until_the_dealer_plays(backend: Backend) {
    let storage = Storage::new(backend);
    let ctx = crate::bj::Ctx::start(&storage);
    ctx.open_table("bj", "evolution-blackjack@1", "live");
    let round = ctx.round_with("bj", json!([crate::bj::bet("p1", "main", 1, 1_000)]));
    // Box 9H, dealer 6S up, box 8C, the hole card KD face down.
    let dealt = ctx.cards_ok(&round, &["9h", "6s", "8c", "Kd"]);
    let inputs = dealt["inputs"].as_array().expect("inputs");
    assert_eq!(inputs.len(), 4, "{dealt}");
    assert_eq!(
        inputs[1]["input"]["card"], "6s",
        "the up card is seen: {dealt}"
    );
    assert_eq!(inputs[3]["to"]["to"], "dealer", "{dealt}");
    assert_eq!(inputs[3]["hole_card_hidden"], true, "{dealt}");
    assert!(
        inputs[3].get("input").is_none(),
        "no card in the reply: {dealt}"
    );
    assert!(!dealt.to_string().contains("Kd"), "{dealt}");
    assert_eq!(crate::bj::next_of(&dealt), "decision:0:0");

    // GET of the round: the operator sees the up card only; an auditor sees both.
    let path = format!("/v1/rounds/{round}");
    let seen = get(&ctx, &ctx.op, &path);
    assert_eq!(seen["blackjack"]["play"]["dealer"], json!(["6s"]), "{seen}");
    assert_eq!(
        seen["blackjack"]["play"]["dealt"],
        json!(["9h", "6s", "8c"]),
        "{seen}"
    );
    assert_eq!(seen["blackjack"]["hole_card_hidden"], true);
    assert!(!seen.to_string().contains("Kd"), "{seen}");
    let audited = get(&ctx, &ctx.auditor, &path);
    assert_eq!(audited["blackjack"]["play"]["dealer"], json!(["6s", "Kd"]));
    assert!(audited["blackjack"].get("hole_card_hidden").is_none());

    // The recall: the entry that dealt it is withheld from the operator, not from the auditor.
    let recall_path = format!("/v1/rounds/{round}/recall");
    let op_recall = get(&ctx, &ctx.op, &recall_path);
    assert_eq!(
        recalled_cards(&op_recall),
        ["9h", "6s", "8c"],
        "{op_recall}"
    );
    assert_eq!(op_recall["withheld"].as_array().map(Vec::len), Some(1));
    let au_recall = get(&ctx, &ctx.auditor, &recall_path);
    assert_eq!(recalled_cards(&au_recall), ["9h", "6s", "8c", "Kd"]);
    assert!(au_recall.get("withheld").is_none());
    assert_eq!(
        op_recall["withheld"][0],
        au_recall["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["entry"]["payload"]["input"]["card"] == "Kd")
            .expect("the hole card's entry")["seq"]
    );

    // The player stands: the dealer plays, and his hole card is turned.
    let stood = ctx.decide_ok(&round, "p1", json!("stand"));
    assert_eq!(crate::bj::next_of(&stood), "card:dealer", "{stood}");
    let seen = get(&ctx, &ctx.op, &path);
    assert_eq!(seen["blackjack"]["play"]["dealer"], json!(["6s", "Kd"]));
    assert!(seen["blackjack"].get("hole_card_hidden").is_none());
    assert_eq!(
        recalled_cards(&get(&ctx, &ctx.op, &recall_path)),
        ["9h", "6s", "8c", "Kd"]
    );
    // 16 draws 5C: 21 beats 17.
    let settled = ctx.cards_ok(&round, &["5C"]);
    assert_eq!(settled["phase"], "settled", "{settled}");
    assert_eq!(settled["paid_minor"], 0, "{settled}");
    ctx.verify_export();
}

#[test]
fn the_hole_card_is_hidden_from_the_operator_until_the_dealer_plays_sqlite() {
    the_hole_card_is_hidden_from_the_operator_until_the_dealer_plays(Backend::Sqlite);
}

#[test]
fn the_hole_card_is_hidden_from_the_operator_until_the_dealer_plays_postgres() {
    the_hole_card_is_hidden_from_the_operator_until_the_dealer_plays(Backend::Postgres);
}

/// RNG (the tests' copy of the plan): pitboss deals the hole card itself, and no reply or view
/// of the operator's shows it while the players act.
#[test]
fn an_rng_deal_keeps_the_hole_card_from_the_operator() {
    let storage = Storage::new(Backend::Sqlite);
    let ctx = crate::bj::Ctx::start(&storage);
    ctx.open_table("bj", "evolution-blackjack@1", "rng");
    let mut hidden_seen = 0;
    for _ in 0..6 {
        let round = ctx.round_with("bj", json!([crate::bj::bet("p1", "main", 1, 1_000)]));
        let (s, dealt) = ctx.deal(&round);
        assert_eq!(s, 200, "{dealt}");
        let path = format!("/v1/rounds/{round}");
        let audited = get(&ctx, &ctx.auditor, &path);
        let hole = audited["blackjack"]["play"]["dealer"][1].clone();
        if dealt["phase"] == "settled" {
            continue;
        }
        // The player owes a decision: the hole card is dealt and face down.
        assert!(hole.is_string(), "{audited}");
        let inputs = dealt["inputs"].as_array().expect("inputs");
        assert_eq!(inputs[3]["hole_card_hidden"], true, "{dealt}");
        assert!(inputs[3].get("input").is_none(), "{dealt}");
        let seen = get(&ctx, &ctx.op, &path);
        assert_eq!(
            seen["blackjack"]["play"]["dealer"].as_array().map(Vec::len),
            Some(1)
        );
        assert_eq!(seen["blackjack"]["hole_card_hidden"], true);
        hidden_seen += 1;
        let mut b = dealt.clone();
        if crate::bj::next_of(&b) == "insurance" {
            b = ctx.decide_ok(&round, "p1", json!({"action": "no_insurance"}));
        }
        if b["phase"] != "settled" {
            b = ctx.decide_ok(&round, "p1", json!("stand"));
        }
        if b["phase"] != "settled" {
            // The dealer draws: pitboss deals on.
            assert_eq!(crate::bj::next_of(&b), "card:dealer", "{b}");
            let (s, b) = ctx.deal(&round);
            assert_eq!((s, &b["phase"]), (200, &json!("settled")), "{b}");
        }
        let seen = get(&ctx, &ctx.op, &path);
        assert_eq!(
            seen["blackjack"]["play"]["dealer"][1], hole,
            "turned: {seen}"
        );
    }
    assert!(hidden_seen > 0, "a round in six left the player to decide");
    ctx.verify_export();
}

// ----- helpers for rounds against the house ------------------------------------------------

struct House {
    server: TestServer,
    op: String,
    auditor: String,
}

impl House {
    fn start(storage: &Storage) -> House {
        let server = TestServer::on(storage);
        let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
        let auditor = server.create_key(ADMIN_KEY, "auditor", None);
        House {
            server,
            op,
            auditor,
        }
    }

    fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.server.post(&self.op, path, body)
    }

    fn ok(&self, path: &str, body: Value) -> Value {
        let (s, b) = self.post(path, body);
        assert_eq!(s, 200, "{path}: {b}");
        b
    }

    fn open_table(&self, table: &str, plan: &str) {
        let (s, b) = self.post(
            "/v1/tables",
            json!({"table": table, "plan": plan, "mode": "live"}),
        );
        assert_eq!(s, 201, "{b}");
    }

    fn open_round(&self, table: &str) -> String {
        let (s, b) = self.post(&format!("/v1/tables/{table}/rounds"), json!({}));
        assert_eq!(s, 201, "{b}");
        b["round"].as_str().expect("round").to_string()
    }

    /// Bets that must all be accepted; their ids in order.
    fn bets(&self, round: &str, bets: Value) -> Vec<String> {
        let b = self.ok(&format!("/v1/rounds/{round}/bets"), json!({ "bets": bets }));
        assert_eq!(b["refused"], 0, "{b}");
        b["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(|r| r["bet"].as_str().expect("bet").to_string())
            .collect()
    }

    fn event(&self, round: &str, event: Value) -> (u16, Value) {
        self.post(&format!("/v1/rounds/{round}/events"), event)
    }

    fn get(&self, key: &str, path: &str) -> Value {
        let (s, _, b) = self.server.get_as(Some(key), path);
        assert_eq!(s, 200, "{path}: {b}");
        b
    }

    /// The `bet_refunded` entries of a round's recall: `(bet, reason, clause)`.
    fn refunded_in_recall(&self, round: &str) -> Vec<(String, String, String)> {
        let recall = self.get(&self.op, &format!("/v1/rounds/{round}/recall"));
        recall["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .filter(|e| e["entry"]["kind"] == "bet_refunded")
            .map(|e| {
                let p = &e["entry"]["payload"];
                (
                    e["entry"]["ids"]["bet"].as_str().unwrap().to_string(),
                    p["reason"].as_str().unwrap().to_string(),
                    p["clause"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    fn verify_export(&self) {
        crate::replay::exported_log_verifies_and_replays(&self.server, &self.auditor);
    }
}

/// A refusal: status, code, and (where a plan's rule refused) the plan and a clause.
fn refused(reply: (u16, Value), status: u16, code: &str) -> Value {
    let (s, b) = reply;
    assert_eq!((s, b["code"].as_str()), (status, Some(code)), "{b}");
    b
}

fn with_clause(b: &Value, plan: &str, clause: &str) {
    assert_eq!(b["plan"], plan, "{b}");
    assert!(
        b["clause"].as_str().is_some_and(|c| c.contains(clause)),
        "clause {clause:?}: {b}"
    );
}

// ----- 4. partial voids ------------------------------------------------------------------

fn some_players_stakes_are_voided_and_the_rest_settled(backend: Backend) {
    let storage = Storage::new(backend);
    let h = House::start(&storage);
    h.open_table("evo", "evolution-roulette@1");
    let round = h.open_round("evo");
    let ids = h.bets(
        &round,
        json!([
            {"player": "p1", "bet": "straight", "numbers": [17], "stake_minor": 1_000},
            {"player": "p2", "bet": "red_black", "field": "red", "stake_minor": 2_000},
            {"player": "p2", "bet": "straight", "numbers": [17], "stake_minor": 500},
            {"player": "p3", "bet": "split", "numbers": [17, 20], "stake_minor": 1_000},
            {"player": "p3", "bet": "straight", "numbers": [20], "stake_minor": 300},
        ]),
    );
    let void = format!("/v1/rounds/{round}/void");
    // Nothing named that the round holds: refused, nothing returned.
    refused(
        h.post(&void, json!({"reason": "x", "players": ["p9"]})),
        422,
        "no_live_bet",
    );
    refused(
        h.post(&void, json!({"reason": "x", "bets": ["evo.1.99"]})),
        422,
        "bet_not_live",
    );
    refused(
        h.post(&void, json!({"reason": " ", "players": ["p2"]})),
        422,
        "bad_reason",
    );
    let (s, b) = h.event(&round, json!({"type": "close_betting"}));
    assert_eq!(s, 200, "{b}");
    // Player p2 (both his bets) and p3's split: a floor decision with its reason.
    let b = h.ok(
        &void,
        json!({"reason": "chips misread on the layout", "players": ["p2"]}),
    );
    assert_eq!(b["refund_minor"], 2_500, "{b}");
    assert_eq!(b["reason"], "chips misread on the layout");
    assert!(b.get("phase").is_none(), "the round goes on: {b}");
    let b = h.ok(
        &void,
        json!({"reason": "split placed after the call", "bets": [ids[3]]}),
    );
    assert_eq!(
        b["refunds"],
        json!([{"bet": ids[3], "player": "p3", "refund_minor": 1_000}])
    );
    // A stake voided once is not voided again.
    refused(
        h.post(&void, json!({"reason": "again", "bets": [ids[1]]})),
        422,
        "bet_not_live",
    );
    // The round as read: those bets refunded, the rest live.
    let r = h.get(&h.op, &format!("/v1/rounds/{round}"));
    let refunded: Vec<bool> = r["bets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["refunded"].as_bool().unwrap())
        .collect();
    assert_eq!(refunded, [false, true, true, true, false], "{r}");
    // 17: p1's straight pays 35:1; p3's remaining straight on 20 loses.
    let (s, settled) = h.event(
        &round,
        json!({"type": "spin", "number": 17, "ball_against_rotation": true, "ball_revolutions": 5}),
    );
    assert_eq!(s, 200, "{settled}");
    assert_eq!(settled["phase"], "settled");
    let bets: Vec<&str> = settled["settlements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["bet"].as_str().unwrap())
        .collect();
    assert_eq!(bets, [ids[0].as_str(), ids[4].as_str()], "{settled}");
    assert_eq!(settled["stake_minor"], 1_300);
    assert_eq!(settled["paid_minor"], 36_000);
    let refunded: Vec<&str> = settled["refunded"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["bet"].as_str().unwrap())
        .collect();
    assert_eq!(
        refunded,
        [ids[1].as_str(), ids[2].as_str(), ids[3].as_str()]
    );
    let served = h.get(&h.op, &format!("/v1/rounds/{round}/settlement"));
    assert_eq!(served["refunded"], settled["refunded"], "{served}");
    assert_eq!(served["settlements"], settled["settlements"]);
    // The recall: each voided stake with the floor's reason and the error policy's clause.
    let recalled = h.refunded_in_recall(&round);
    assert_eq!(recalled.len(), 3, "{recalled:?}");
    assert!(recalled[0].1.contains("chips misread on the layout"));
    assert!(recalled[2].1.contains("split placed after the call"));
    assert!(recalled.iter().all(|(_, _, c)| c == "Řešení chyb"));
    // Finished: nothing more is voided.
    refused(
        h.post(&void, json!({"reason": "late", "players": ["p1"]})),
        409,
        "out_of_order",
    );

    // A plan whose error policy cancels for all players only.
    h.open_table("alg", "alg-roulette@1");
    let alg = h.open_round("alg");
    h.bets(
        &alg,
        json!([{"player": "p1", "bet": "straight", "numbers": [5], "stake_minor": 1_000}]),
    );
    let b = refused(
        h.post(
            &format!("/v1/rounds/{alg}/void"),
            json!({"reason": "x", "players": ["p1"]}),
        ),
        422,
        "partial_void_not_allowed",
    );
    with_clause(&b, "alg-roulette@1", "Řešení chyb");
    // Blackjack: once the cards are dealt, the boxes are played together.
    h.open_table("bj", "evolution-blackjack@1");
    let bj = h.open_round("bj");
    h.bets(&bj, json!([{"player": "p1", "bet": "main", "seat": 1, "stake_minor": 1_000}, {"player": "p2", "bet": "main", "seat": 2, "stake_minor": 1_000}]));
    let (s, b) = h.event(&bj, json!({"type": "close_betting"}));
    assert_eq!(s, 200, "{b}");
    let (s, b) = h.event(&bj, json!({"type": "cards", "cards": [{"card": "9H"}]}));
    assert_eq!(s, 200, "{b}");
    let b = refused(
        h.post(
            &format!("/v1/rounds/{bj}/void"),
            json!({"reason": "x", "players": ["p2"]}),
        ),
        409,
        "partial_void_not_possible",
    );
    with_clause(&b, "evolution-blackjack@1", "");
    h.verify_export();
}

#[test]
fn some_players_stakes_are_voided_and_the_rest_settled_sqlite() {
    some_players_stakes_are_voided_and_the_rest_settled(Backend::Sqlite);
}

#[test]
fn some_players_stakes_are_voided_and_the_rest_settled_postgres() {
    some_players_stakes_are_voided_and_the_rest_settled(Backend::Postgres);
}

// ----- 5. withdrawal -----------------------------------------------------------------------

fn baccarat_cards(round: &str, h: &House) -> Value {
    let (s, b) = h.event(
        round,
        json!({"type": "cards", "cards": [
            {"to": "player_1", "card": "9H"}, {"to": "banker_1", "card": "KS"},
            {"to": "player_2", "card": "TH"}, {"to": "banker_2", "card": "QS"}
        ]}),
    );
    assert_eq!(s, 200, "{b}");
    b
}

fn a_player_withdraws_bets_before_betting_closes_where_the_plan_allows(backend: Backend) {
    let storage = Storage::new(backend);
    let h = House::start(&storage);
    h.open_table("syn", "synot-baccarat@1");
    let round = h.open_round("syn");
    let ids = h.bets(
        &round,
        json!([
            {"player": "p1", "bet": "player", "stake_minor": 1_000},
            {"player": "p1", "bet": "player_pair", "stake_minor": 200},
            {"player": "p2", "bet": "banker", "stake_minor": 2_000},
            {"player": "p2", "bet": "tie", "stake_minor": 100},
        ]),
    );
    let withdraw = format!("/v1/rounds/{round}/withdrawals");
    // A side bet cannot stay without its main bet.
    let b = refused(
        h.post(&withdraw, json!({"player": "p1", "bets": [ids[0]]})),
        422,
        "bets_depend",
    );
    assert_eq!(b["plan"], "synot-baccarat@1", "{b}");
    refused(
        h.post(&withdraw, json!({"player": "p1", "bets": [ids[2]]})),
        422,
        "bet_not_live",
    );
    // p2 takes back his tie, then everything.
    let b = h.ok(&withdraw, json!({"player": "p2", "bets": [ids[3]]}));
    assert_eq!(
        b["refunds"],
        json!([{"bet": ids[3], "player": "p2", "refund_minor": 100}])
    );
    let b = h.ok(&withdraw, json!({"player": "p2"}));
    assert_eq!(b["refund_minor"], 2_000, "{b}");
    refused(
        h.post(&withdraw, json!({"player": "p2"})),
        422,
        "no_live_bet",
    );
    let (s, b) = h.event(&round, json!({"type": "close_betting"}));
    assert_eq!(s, 200, "{b}");
    // Once betting closes, nothing is withdrawn.
    let b = refused(
        h.post(&withdraw, json!({"player": "p1"})),
        409,
        "betting_closed",
    );
    with_clause(&b, "synot-baccarat@1", "Cíl hry a výplaty výher");
    // Player 9 against banker 0: p1's bet on the player pays 1:1, his pair bet loses.
    let settled = baccarat_cards(&round, &h);
    assert_eq!(settled["phase"], "settled", "{settled}");
    assert_eq!(settled["stake_minor"], 1_200);
    assert_eq!(settled["paid_minor"], 2_000);
    let refunded: Vec<&str> = settled["refunded"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["bet"].as_str().unwrap())
        .collect();
    assert_eq!(refunded, [ids[2].as_str(), ids[3].as_str()], "{settled}");
    let recalled = h.refunded_in_recall(&round);
    assert_eq!(recalled.len(), 2);
    assert!(recalled
        .iter()
        .all(|(_, r, c)| r.contains("withdrawn") && c == "Cíl hry a výplaty výher"));

    // A plan without the rule: refused with the clause it lacks.
    h.open_table("spd", "evolution-speed-baccarat@1");
    let speed = h.open_round("spd");
    h.bets(
        &speed,
        json!([{"player": "p1", "bet": "player", "stake_minor": 1_000}]),
    );
    let b = refused(
        h.post(
            &format!("/v1/rounds/{speed}/withdrawals"),
            json!({"player": "p1"}),
        ),
        422,
        "withdrawal_not_allowed",
    );
    with_clause(&b, "evolution-speed-baccarat@1", "no withdrawal");
    h.verify_export();
}

#[test]
fn a_player_withdraws_bets_before_betting_closes_where_the_plan_allows_sqlite() {
    a_player_withdraws_bets_before_betting_closes_where_the_plan_allows(Backend::Sqlite);
}

#[test]
fn a_player_withdraws_bets_before_betting_closes_where_the_plan_allows_postgres() {
    a_player_withdraws_bets_before_betting_closes_where_the_plan_allows(Backend::Postgres);
}

// ----- 3. payout deadlines ------------------------------------------------------------------

fn winnings_carry_a_due_date_and_their_payment_is_confirmed(backend: Backend) {
    let storage = Storage::new(backend);
    let h = House::start(&storage);
    h.open_table("evo", "evolution-roulette@1");
    let round = h.open_round("evo");
    h.bets(
        &round,
        json!([
            {"player": "p1", "bet": "straight", "numbers": [17], "stake_minor": 1_000},
            {"player": "p1", "bet": "split", "numbers": [17, 20], "stake_minor": 500},
            {"player": "p2", "bet": "red_black", "field": "red", "stake_minor": 2_000},
        ]),
    );
    let (s, b) = h.event(&round, json!({"type": "close_betting"}));
    assert_eq!(s, 200, "{b}");
    let (s, settled) = h.event(
        &round,
        json!({"type": "spin", "number": 17, "ball_against_rotation": true, "ball_revolutions": 5}),
    );
    assert_eq!(s, 200, "{settled}");
    // p1 is owed 36 000 + 9 000, due 30 days after the evaluation; p2 (17 is black) nothing.
    let due = settled["payouts_due"].as_array().expect("payouts_due");
    assert_eq!(due.len(), 1, "{settled}");
    assert_eq!(due[0]["player"], "p1");
    assert_eq!(due[0]["amount_minor"], 45_000);
    let at = |v: &Value| {
        chrono::DateTime::parse_from_rfc3339(v.as_str().expect("a time")).expect("RFC 3339")
    };
    let evaluated = at(&due[0]["evaluated_at"]);
    assert_eq!(
        at(&due[0]["due_at"]) - evaluated,
        chrono::Duration::days(30)
    );
    assert!(due[0]["paid_at"].is_null());

    // Not overdue now; overdue 31 days on.
    let later = (evaluated + chrono::Duration::days(31))
        .with_timezone(&chrono::Utc)
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let overdue = |key: &str, q: &str| h.get(key, &format!("/v1/payouts/overdue{q}"));
    assert_eq!(overdue(&h.op, "")["overdue"], json!([]));
    let late = overdue(&h.op, &format!("?as_of={later}"));
    assert_eq!(late["clause"], "002 § 9(1)");
    assert_eq!(late["overdue"].as_array().map(Vec::len), Some(1), "{late}");
    assert_eq!(late["overdue"][0]["round"], round.as_str());
    let regulator = h.server.create_key(ADMIN_KEY, "regulator", None);
    assert_eq!(
        overdue(&regulator, &format!("?as_of={later}"))["overdue"],
        late["overdue"]
    );
    // Another operator sees none of it, and cannot confirm it.
    let op2 = h.server.create_key(ADMIN_KEY, "operator", Some("op2"));
    assert_eq!(
        overdue(&op2, &format!("?as_of={later}"))["overdue"],
        json!([])
    );
    let confirm = "/v1/payouts/confirm";
    let (s, b) = h.server.post(
        &op2,
        confirm,
        json!({"round": round, "player": "p1", "wallet_reference": "W-1"}),
    );
    assert_eq!(
        (s, b["code"].as_str()),
        (404, Some("payout_not_found")),
        "{b}"
    );
    assert_eq!(h.server.metric("pitboss_payouts_outstanding"), 1);
    assert_eq!(h.server.metric("pitboss_payouts_overdue"), 0);

    // Refusals: no reference; nothing owed to p2.
    let b = refused(
        h.post(
            confirm,
            json!({"round": round, "player": "p1", "wallet_reference": ""}),
        ),
        422,
        "bad_wallet_reference",
    );
    assert_eq!(b["clause"], "002 § 9(1)");
    refused(
        h.post(
            confirm,
            json!({"round": round, "player": "p2", "wallet_reference": "W-2"}),
        ),
        404,
        "payout_not_found",
    );
    // The payment, with the wallet's reference.
    let paid = h.ok(
        confirm,
        json!({"round": round, "player": "p1", "wallet_reference": "W-2026-000123"}),
    );
    assert_eq!(paid["wallet_reference"], "W-2026-000123");
    assert_eq!(paid["amount_minor"], 45_000);
    assert!(paid["paid_at"].is_string(), "{paid}");
    let b = refused(
        h.post(
            confirm,
            json!({"round": round, "player": "p1", "wallet_reference": "W-3"}),
        ),
        409,
        "payout_already_confirmed",
    );
    assert_eq!(b["clause"], "002 § 9(1)");
    assert_eq!(
        overdue(&h.op, &format!("?as_of={later}"))["overdue"],
        json!([])
    );
    assert_eq!(h.server.metric("pitboss_payouts_outstanding"), 0);
    // The recall holds the confirmation.
    let recall = h.get(&h.op, &format!("/v1/rounds/{round}/recall"));
    let logged: Vec<Value> = recall["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["entry"]["kind"] == "payout_confirmed")
        .map(|e| pitboss::round::payload_of_entry(&e["entry"]))
        .collect();
    assert_eq!(
        logged,
        [
            json!({"round": round, "player": "p1", "amount_minor": 45_000, "wallet_reference": "W-2026-000123", "late": false})
        ]
    );
    h.verify_export();
}

#[test]
fn winnings_carry_a_due_date_and_their_payment_is_confirmed_sqlite() {
    winnings_carry_a_due_date_and_their_payment_is_confirmed(Backend::Sqlite);
}

#[test]
fn winnings_carry_a_due_date_and_their_payment_is_confirmed_postgres() {
    winnings_carry_a_due_date_and_their_payment_is_confirmed(Backend::Postgres);
}
