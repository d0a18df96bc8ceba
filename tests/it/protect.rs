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
