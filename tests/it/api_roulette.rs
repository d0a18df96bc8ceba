//! Roulette end to end over HTTP, against SQLite and against PostgreSQL: live and RNG rounds
//! with every bet type, refusals, voids, idempotent retries, recall, the exported log verified
//! offline, and a replay of the log that reproduces every settlement.

use serde_json::{json, Value};

use crate::server::{Backend, Storage, TestServer, ADMIN_KEY};

struct Ctx {
    server: TestServer,
    op1: String,
    op2: String,
    auditor: String,
}

impl Ctx {
    fn start(storage: &Storage) -> Ctx {
        let server = TestServer::on(storage);
        let op1 = server.create_key(ADMIN_KEY, "operator", Some("op1"));
        let op2 = server.create_key(ADMIN_KEY, "operator", Some("op2"));
        let auditor = server.create_key(ADMIN_KEY, "auditor", None);
        Ctx {
            server,
            op1,
            op2,
            auditor,
        }
    }

    fn open_table(&self, table: &str, plan: &str, mode: &str) {
        let (s, b) = self.server.post(
            &self.op1,
            "/v1/tables",
            json!({"table": table, "plan": plan, "mode": mode}),
        );
        assert_eq!(s, 201, "{b}");
    }

    fn open_round(&self, table: &str) -> Value {
        let (s, b) = self
            .server
            .post(&self.op1, &format!("/v1/tables/{table}/rounds"), json!({}));
        assert_eq!(s, 201, "{b}");
        b
    }

    fn bets(&self, round: &str, bets: Value) -> Value {
        let (s, b) = self.server.post(
            &self.op1,
            &format!("/v1/rounds/{round}/bets"),
            json!({"bets": bets}),
        );
        assert_eq!(s, 200, "{b}");
        b
    }

    fn event(&self, round: &str, event: Value) -> (u16, Value) {
        self.server
            .post(&self.op1, &format!("/v1/rounds/{round}/events"), event)
    }

    fn log_size(&self) -> u64 {
        let (_, _, h) = self.server.get("/healthz");
        h["log_entries"].as_u64().unwrap()
    }
}

/// The document's ratio ("Výplatní tabulka") of each bet type, and what it covers.
fn expected_total(stake: i64, ratio: i64, covered: &[u8], number: u8) -> i64 {
    if covered.contains(&number) {
        stake * (ratio + 1)
    } else {
        0
    }
}

const RED: [u8; 18] = [
    1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36,
];

/// One bet of every bet type, with what it covers and its ratio (from the document).
fn every_bet_type() -> Vec<(Value, Vec<u8>, i64)> {
    let range = |a: u8, b: u8| (a..=b).collect::<Vec<u8>>();
    vec![
        (
            json!({"player": "p1", "bet": "straight", "numbers": [17], "stake_minor": 1_000}),
            vec![17],
            35,
        ),
        (
            json!({"player": "p1", "bet": "split", "numbers": [17, 20], "stake_minor": 1_000}),
            vec![17, 20],
            17,
        ),
        (
            json!({"player": "p1", "bet": "split", "numbers": [0, 2], "stake_minor": 1_000}),
            vec![0, 2],
            17,
        ),
        (
            json!({"player": "p1", "bet": "street", "numbers": [16, 17, 18], "stake_minor": 1_000}),
            vec![16, 17, 18],
            11,
        ),
        (
            json!({"player": "p1", "bet": "street", "numbers": [0, 1, 2], "stake_minor": 1_000}),
            vec![0, 1, 2],
            11,
        ),
        (
            json!({"player": "p1", "bet": "street", "numbers": [0, 2, 3], "stake_minor": 1_000}),
            vec![0, 2, 3],
            11,
        ),
        (
            json!({"player": "p1", "bet": "corner", "numbers": [14, 15, 17, 18], "stake_minor": 1_000}),
            vec![14, 15, 17, 18],
            8,
        ),
        (
            json!({"player": "p1", "bet": "corner", "numbers": [0, 1, 2, 3], "stake_minor": 1_000}),
            vec![0, 1, 2, 3],
            8,
        ),
        (
            json!({"player": "p1", "bet": "line", "numbers": [13, 14, 15, 16, 17, 18], "stake_minor": 1_000}),
            range(13, 18),
            5,
        ),
        (
            json!({"player": "p2", "bet": "dozen", "field": "dozen_2", "stake_minor": 2_000}),
            range(13, 24),
            2,
        ),
        (
            json!({"player": "p2", "bet": "column", "field": "column_2", "stake_minor": 2_000}),
            (0..12).map(|i| 2 + 3 * i).collect(),
            2,
        ),
        (
            json!({"player": "p2", "bet": "red_black", "field": "black", "stake_minor": 3_000}),
            (1..=36).filter(|n| !RED.contains(n)).collect(),
            1,
        ),
        (
            json!({"player": "p2", "bet": "red_black", "field": "red", "stake_minor": 3_000}),
            RED.to_vec(),
            1,
        ),
        (
            json!({"player": "p2", "bet": "even_odd", "field": "odd", "stake_minor": 3_000}),
            (1..=36).filter(|n| n % 2 == 1).collect(),
            1,
        ),
        (
            json!({"player": "p2", "bet": "low_high", "field": "low", "stake_minor": 3_000}),
            range(1, 18),
            1,
        ),
    ]
}

fn live_round_with_every_bet_type(ctx: &Ctx, table: &str, number: u8) {
    let round = ctx.open_round(table);
    let round = round["round"].as_str().unwrap().to_string();
    let bets = every_bet_type();
    let placed = ctx.bets(
        &round,
        Value::Array(bets.iter().map(|(b, _, _)| b.clone()).collect()),
    );
    assert_eq!(placed["accepted"], bets.len(), "{placed}");
    // Announced bets and Neighbours go through the same path.
    let announced = ctx.bets(
        &round,
        json!([
            {"player": "p3", "bet": "voisins", "stake_minor": 100},
            {"player": "p3", "bet": "tier", "stake_minor": 100},
            {"player": "p3", "bet": "orphelins", "stake_minor": 100},
            {"player": "p3", "bet": "zero", "stake_minor": 100},
            {"player": "p4", "bet": "neighbours", "number": 17, "neighbours": 2, "stake_minor": 100}
        ]),
    );
    assert_eq!(announced["accepted"], 5, "{announced}");
    let (s, b) = ctx.event(&round, json!({"type": "close_betting"}));
    assert_eq!(s, 200, "{b}");
    // The valid-spin rule: fewer than three revolutions is a re-spin, not a result.
    let (s, b) = ctx.event(
        &round,
        json!({"type": "spin", "number": 5, "ball_against_rotation": true, "ball_revolutions": 2}),
    );
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["spin"]["valid"], false);
    assert!(b.get("settlements").is_none());
    let (s, b) = ctx.event(&round, json!({"type": "spin", "number": number, "ball_against_rotation": false, "ball_revolutions": 5}));
    assert_eq!(
        b["spin"]["valid"], false,
        "a ball thrown with the rotation is a re-spin: {b}"
    );
    assert_eq!(s, 200);
    let (s, settled) = ctx.event(&round, json!({"type": "spin", "number": number, "ball_against_rotation": true, "ball_revolutions": 4}));
    assert_eq!(s, 200, "{settled}");
    assert_eq!(settled["phase"], "settled");
    let settlements = settled["settlements"].as_array().unwrap();
    for (i, (_, covered, ratio)) in bets.iter().enumerate() {
        let stake = settlements[i]["stake_minor"].as_i64().unwrap();
        assert_eq!(
            settlements[i]["total_minor"].as_i64().unwrap(),
            expected_total(stake, *ratio, covered, number),
            "bet {i} on {number}: {}",
            settlements[i]
        );
    }
    // The settlement endpoint says the same.
    let (s, _, again) = ctx
        .server
        .get_as(Some(&ctx.op1), &format!("/v1/rounds/{round}/settlement"));
    assert_eq!(s, 200);
    assert_eq!(again["settlements"], settled["settlements"]);
    // A second result is out of order.
    let (s, b) = ctx.event(
        &round,
        json!({"type": "spin", "number": 1, "ball_against_rotation": true, "ball_revolutions": 4}),
    );
    assert_eq!((s, b["code"].as_str()), (409, Some("out_of_order")), "{b}");
}

fn scenario(backend: Backend) {
    let storage = Storage::new(backend);
    let ctx = Ctx::start(&storage);
    ctx.open_table("evo-live", "evolution-roulette@1", "live");
    ctx.open_table("synot-rng", "synot-roulette@1", "rng");
    ctx.open_table("alg-live", "alg-roulette@1", "live");

    for n in [17, 0, 36] {
        live_round_with_every_bet_type(&ctx, "evo-live", n);
    }
    live_round_with_every_bet_type(&ctx, "alg-live", 14);

    refusals(&ctx);
    void_refunds_every_stake(&ctx);
    idempotent_retries(&ctx);
    rng_rounds(&ctx);
    recall_tells_the_whole_round(&ctx);
    crate::replay::exported_log_verifies_and_replays(&ctx.server, &ctx.auditor);
    drop(ctx);

    // A restart rebuilds the state from the log: the settled rounds read back the same.
    let ctx2 = Ctx {
        server: TestServer::on(&storage),
        op1: String::new(),
        op2: String::new(),
        auditor: String::new(),
    };
    let auditor = ctx2.server.create_key(ADMIN_KEY, "auditor", None);
    let (s, _, r) = ctx2
        .server
        .get_as(Some(&auditor), "/v1/rounds/op1:evo-live.1/settlement");
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["phase"], "settled");
    crate::replay::exported_log_verifies_and_replays(&ctx2.server, &auditor);
}

fn refusals(ctx: &Ctx) {
    let round = ctx.open_round("evo-live");
    let round = round["round"].as_str().unwrap().to_string();
    let placed = ctx.bets(
        &round,
        json!([
            {"player": "p1", "bet": "straight", "numbers": [5], "stake_minor": 1_000_001},
            {"player": "p1", "bet": "split", "numbers": [1, 5], "stake_minor": 1_000},
            {"player": "p1", "bet": "straight", "numbers": [5], "stake_minor": 99},
            {"player": "p1", "bet": "en_plein", "numbers": [5], "stake_minor": 100},
        ]),
    );
    let results = placed["results"].as_array().unwrap();
    let codes: Vec<&str> = results
        .iter()
        .map(|r| r["code"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        codes,
        [
            "above_max_bet",
            "invalid_layout",
            "below_min_bet",
            "unknown_bet_type"
        ],
        "{placed}"
    );
    // Rule refusals name the plan and the clause.
    assert_eq!(results[0]["plan"], "evolution-roulette@1");
    assert_eq!(
        results[0]["clause"],
        "Tabulka nejvyšších sázek a odvislých nejvyšších výher"
    );

    // Wrong role: an auditor cannot bet.
    let (s, b) = ctx.server.post(
        &ctx.auditor,
        &format!("/v1/rounds/{round}/bets"),
        json!({"bets": [{"player": "p", "bet": "straight", "numbers": [1], "stake_minor": 100}]}),
    );
    assert_eq!((s, b["code"].as_str()), (403, Some("forbidden")), "{b}");
    // No key at all.
    let (s, _, b) = ctx
        .server
        .post_raw(None, Some("x"), &format!("/v1/rounds/{round}/bets"), "{}");
    assert_eq!((s, b["code"].as_str()), (401, Some("unauthorized")), "{b}");
    // Another operator's table and round do not exist for op2.
    let (s, b) = ctx.server.post(
        &ctx.op2,
        &format!("/v1/rounds/{round}/bets"),
        json!({"bets": [{"player": "p", "bet": "straight", "numbers": [1], "stake_minor": 100}]}),
    );
    assert_eq!(
        (s, b["code"].as_str()),
        (404, Some("round_not_found")),
        "{b}"
    );
    let (s, _, b) = ctx.server.get_as(Some(&ctx.op2), "/v1/tables/evo-live");
    assert_eq!(
        (s, b["code"].as_str()),
        (404, Some("table_not_found")),
        "{b}"
    );
    // Malformed JSON.
    let (s, ctype, b) = ctx.server.post_raw(
        Some(&ctx.op1),
        Some("m1"),
        &format!("/v1/rounds/{round}/bets"),
        "{\"bets\": [",
    );
    assert_eq!(
        (s, b["code"].as_str()),
        (400, Some("malformed_json")),
        "{b}"
    );
    assert_eq!(ctype, "application/problem+json");
    // Missing Idempotency-Key.
    let (s, _, b) = ctx.server.post_raw(
        Some(&ctx.op1),
        None,
        &format!("/v1/rounds/{round}/bets"),
        "{\"bets\": []}",
    );
    assert_eq!(
        (s, b["code"].as_str()),
        (400, Some("idempotency_key_required")),
        "{b}"
    );
    // Unknown plan.
    let (s, b) = ctx.server.post(
        &ctx.op1,
        "/v1/tables",
        json!({"table": "x", "plan": "no-such-plan@1", "mode": "live"}),
    );
    assert_eq!(
        (s, b["code"].as_str()),
        (404, Some("plan_not_found")),
        "{b}"
    );
    // A result while betting is open is out of order.
    let (s, b) = ctx.event(
        &round,
        json!({"type": "spin", "number": 1, "ball_against_rotation": true, "ball_revolutions": 4}),
    );
    assert_eq!((s, b["code"].as_str()), (409, Some("betting_open")), "{b}");
    // Late bet: after betting closed.
    ctx.event(&round, json!({"type": "close_betting"}));
    let placed = ctx.bets(
        &round,
        json!([{"player": "p1", "bet": "straight", "numbers": [5], "stake_minor": 100}]),
    );
    assert_eq!(placed["results"][0]["code"], "betting_closed", "{placed}");
    // Finish the round so the table is free again.
    let (s, b) = ctx.event(
        &round,
        json!({"type": "spin", "number": 5, "ball_against_rotation": true, "ball_revolutions": 3}),
    );
    assert_eq!(s, 200, "{b}");
}

fn void_refunds_every_stake(ctx: &Ctx) {
    let round = ctx.open_round("evo-live");
    let round = round["round"].as_str().unwrap().to_string();
    let placed = ctx.bets(
        &round,
        json!([
            {"player": "p1", "bet": "straight", "numbers": [5], "stake_minor": 1_234},
            {"player": "p2", "bet": "voisins", "stake_minor": 100},
            {"player": "p3", "bet": "dozen", "field": "dozen_3", "stake_minor": 5_000}
        ]),
    );
    let stakes: i64 = placed["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["stake_minor"].as_i64().unwrap())
        .sum();
    assert_eq!(stakes, 1_234 + 900 + 5_000);
    let (s, b) = ctx.server.post(
        &ctx.op1,
        &format!("/v1/rounds/{round}/void"),
        json!({"reason": "wheel fault: cannot be repaired"}),
    );
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["phase"], "voided");
    assert_eq!(b["refund_minor"], stakes);
    let refunds = b["refunds"].as_array().unwrap();
    assert_eq!(refunds.len(), 3);
    for (r, p) in refunds.iter().zip(placed["results"].as_array().unwrap()) {
        assert_eq!(r["refund_minor"], p["stake_minor"]);
        assert_eq!(r["bet"], p["bet"]);
    }
    // Nothing happens to a voided round any more.
    let (s, b) = ctx.event(&round, json!({"type": "close_betting"}));
    assert_eq!((s, b["code"].as_str()), (409, Some("out_of_order")), "{b}");
    let (s, b) = ctx.server.post(
        &ctx.op1,
        &format!("/v1/rounds/{round}/void"),
        json!({"reason": "again"}),
    );
    assert_eq!((s, b["code"].as_str()), (409, Some("out_of_order")), "{b}");
}

fn idempotent_retries(ctx: &Ctx) {
    let round = ctx.open_round("evo-live");
    let round = round["round"].as_str().unwrap().to_string();
    let body =
        json!({"bets": [{"player": "p9", "bet": "straight", "numbers": [9], "stake_minor": 500}]})
            .to_string();
    let path = format!("/v1/rounds/{round}/bets");
    let (s1, _, first) = ctx
        .server
        .post_raw(Some(&ctx.op1), Some("retry-1"), &path, &body);
    assert_eq!(s1, 200);
    let size = ctx.log_size();
    for _ in 0..3 {
        let (s, _, again) = ctx
            .server
            .post_raw(Some(&ctx.op1), Some("retry-1"), &path, &body);
        assert_eq!(
            (s, &again),
            (s1, &first),
            "a retry returns the first answer"
        );
    }
    assert_eq!(ctx.log_size(), size, "a retry changes nothing");
    let (_, _, r) = ctx
        .server
        .get_as(Some(&ctx.op1), &format!("/v1/rounds/{round}"));
    assert_eq!(r["bets"].as_array().unwrap().len(), 1);
    // The same key for another request is refused.
    let other =
        json!({"bets": [{"player": "p9", "bet": "straight", "numbers": [10], "stake_minor": 500}]})
            .to_string();
    let (s, _, b) = ctx
        .server
        .post_raw(Some(&ctx.op1), Some("retry-1"), &path, &other);
    assert_eq!(
        (s, b["code"].as_str()),
        (422, Some("idempotency_key_reused")),
        "{b}"
    );
    // Keys are per operator: op2 may use the same key for its own request.
    let (s, _, b) = ctx.server.post_raw(
        Some(&ctx.op2),
        Some("retry-1"),
        "/v1/tables",
        &json!({"table": "op2-t", "plan": "evolution-roulette@1", "mode": "live"}).to_string(),
    );
    assert_eq!(s, 201, "{b}");
    ctx.event(&round, json!({"type": "close_betting"}));
    ctx.event(
        &round,
        json!({"type": "spin", "number": 9, "ball_against_rotation": true, "ball_revolutions": 3}),
    );
}

fn rng_rounds(ctx: &Ctx) {
    for _ in 0..3 {
        let opened = ctx.open_round("synot-rng");
        let round = opened["round"].as_str().unwrap().to_string();
        let commitment = opened["rng_commitment"]
            .as_str()
            .expect("an RNG round commits its seed at open")
            .to_string();
        let bets = every_bet_type();
        ctx.bets(
            &round,
            Value::Array(bets.iter().map(|(b, _, _)| b.clone()).collect()),
        );
        // The dealer system cannot report a result for an RNG table.
        ctx.event(&round, json!({"type": "close_betting"}));
        let (s, b) = ctx.event(&round, json!({"type": "spin", "number": 1, "ball_against_rotation": true, "ball_revolutions": 4}));
        assert_eq!((s, b["code"].as_str()), (409, Some("wrong_mode")), "{b}");
        let (s, drawn) = ctx.event(&round, json!({"type": "draw"}));
        assert_eq!(s, 200, "{drawn}");
        let number = drawn["result"]["number"].as_u64().unwrap() as u8;
        let seed_hex = drawn["rng_seed"]
            .as_str()
            .expect("the seed is revealed at settlement");
        let seed: Vec<u8> = (0..32)
            .map(|i| u8::from_str_radix(&seed_hex[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        use sha2::Digest;
        assert_eq!(
            pitboss::plan::canonical::hex(&sha2::Sha256::digest(&seed)),
            commitment,
            "the revealed seed is the committed one"
        );
        assert_eq!(
            pitboss::round::draw_pocket(seed.try_into().unwrap(), 37) as u8,
            number,
            "the number follows from the seed"
        );
        for (i, (_, covered, ratio)) in bets.iter().enumerate() {
            let st = &drawn["settlements"][i];
            assert_eq!(
                st["total_minor"].as_i64().unwrap(),
                expected_total(st["stake_minor"].as_i64().unwrap(), *ratio, covered, number)
            );
        }
        let (s, b) = ctx.event(&round, json!({"type": "draw"}));
        assert_eq!(s, 409, "a second draw is refused: {b}");
    }
    // A live table cannot draw.
    let round = ctx.open_round("alg-live");
    let round = round["round"].as_str().unwrap().to_string();
    ctx.event(&round, json!({"type": "close_betting"}));
    let (s, b) = ctx.event(&round, json!({"type": "draw"}));
    assert_eq!((s, b["code"].as_str()), (409, Some("not_rng")), "{b}");
    ctx.event(
        &round,
        json!({"type": "spin", "number": 3, "ball_against_rotation": true, "ball_revolutions": 3}),
    );
}

fn recall_tells_the_whole_round(ctx: &Ctx) {
    let (s, _, r) = ctx
        .server
        .get_as(Some(&ctx.auditor), "/v1/rounds/op1:evo-live.1/recall");
    assert_eq!(s, 200, "{r}");
    let kinds: Vec<&str> = r["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["entry"]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.first(), Some(&"round_opened"));
    // The last entry is the refused second result, logged after the settlement.
    assert_eq!(
        &kinds[kinds.len() - 2..],
        ["round_settled", "event_refused"]
    );
    assert!(
        kinds.contains(&"bet_accepted")
            && kinds.contains(&"betting_closed")
            && kinds.contains(&"spin_invalid")
            && kinds.contains(&"result_recorded"),
        "{kinds:?}"
    );
    assert_eq!(r["plan"], "evolution-roulette@1");
    // Another operator cannot recall it.
    for id in ["evo-live.1", "op1:evo-live.1"] {
        let (s, _, _) = ctx
            .server
            .get_as(Some(&ctx.op2), &format!("/v1/rounds/{id}/recall"));
        assert_eq!(s, 404, "{id}");
    }
}

/// "Sázky je nutné umístit během časového odpočtu": a bet after the betting deadline (server
/// time) is refused, and the round's betting is closed in the log by the deadline itself.
#[test]
fn a_bet_after_the_betting_deadline_is_refused() {
    let plans = crate::source::plans_with(&[(
        "evolution-roulette@1.toml",
        &[("betting_window_ms = 15_000", "betting_window_ms = 300")],
    )]);
    let storage = Storage::new(Backend::Sqlite);
    let server = TestServer::spawn(plans.path(), &storage, &[("PITBOSS_ADMIN_KEY", ADMIN_KEY)]);
    let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
    let (s, b) = server.post(
        &op,
        "/v1/tables",
        json!({"table": "t", "plan": "evolution-roulette@1", "mode": "live"}),
    );
    assert_eq!(s, 201, "{b}");
    let (_, opened) = server.post(&op, "/v1/tables/t/rounds", json!({}));
    let round = opened["round"].as_str().unwrap().to_string();
    let bet =
        json!({"bets": [{"player": "p1", "bet": "straight", "numbers": [7], "stake_minor": 100}]});
    let (_, early) = server.post(&op, &format!("/v1/rounds/{round}/bets"), bet.clone());
    assert_eq!(early["accepted"], 1, "{early}");
    std::thread::sleep(std::time::Duration::from_millis(500));
    let (_, late) = server.post(&op, &format!("/v1/rounds/{round}/bets"), bet);
    assert_eq!(late["results"][0]["code"], "betting_closed", "{late}");
    let (_, _, r) = server.get_as(Some(&op), &format!("/v1/rounds/{round}"));
    assert_eq!(r["phase"], "betting_closed");
    assert_eq!(
        r["bets"].as_array().unwrap().len(),
        1,
        "the early bet stands"
    );
}

#[test]
fn roulette_end_to_end_on_sqlite() {
    scenario(Backend::Sqlite);
}

#[test]
fn roulette_end_to_end_on_postgres() {
    scenario(Backend::Postgres);
}
