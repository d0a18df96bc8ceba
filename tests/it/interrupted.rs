//! The deadline for interrupted rounds (issue 20), end to end on SQLite and PostgreSQL: a
//! round may stay paused, or unfinished with no progress, for the plan's
//! `policies.timing.interrupted_round_ms`; then the service voids it by itself and returns
//! every stake, naming itself as the actor and the deadline as the reason. The tests run on a
//! copy of the plans whose roulette gives 2 s.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::server::{Backend, Storage, TestServer, ADMIN_KEY};

const DEADLINE: Duration = Duration::from_secs(2);

fn short_deadline_plans() -> tempfile::TempDir {
    crate::source::plans_with(&[(
        "evolution-roulette@1.toml",
        &[(
            "interrupted_round_ms = 1_800_000",
            "interrupted_round_ms = 2_000",
        )],
    )])
}

fn open_round(server: &TestServer, op: &str) -> String {
    let (s, b) = server.post(op, "/v1/tables/t1/rounds", json!({}));
    assert_eq!(s, 201, "{b}");
    b["round"].as_str().expect("round").to_string()
}

/// `n` straight bets of 1 Kč, each by its own player.
fn place(server: &TestServer, op: &str, round: &str, n: usize) {
    let bets: Vec<Value> = (0..n)
        .map(|i| json!({"player": format!("p{i}"), "bet": "straight", "numbers": [i], "stake_minor": 100}))
        .collect();
    let (s, b) = server.post(
        op,
        &format!("/v1/rounds/{round}/bets"),
        json!({ "bets": bets }),
    );
    assert_eq!((s, b["accepted"].as_u64()), (200, Some(n as u64)), "{b}");
}

fn phase(server: &TestServer, op: &str, round: &str) -> Value {
    let (s, _, b) = server.get_as(Some(op), &format!("/v1/rounds/{round}"));
    assert_eq!(s, 200, "{b}");
    b
}

/// Waits (at most 20 s) for the round to be voided; returns the round and how long it took.
fn await_void(server: &TestServer, op: &str, round: &str) -> (Value, Duration) {
    let start = Instant::now();
    loop {
        let r = phase(server, op, round);
        if r["phase"] == "voided" {
            return (r, start.elapsed());
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "round {round} was not voided at its deadline: {r}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn interrupted_rounds_are_voided_at_the_plans_deadline(backend: Backend) {
    let storage = Storage::new(backend);
    let plans = short_deadline_plans();
    let server = TestServer::spawn(plans.path(), &storage, &[("PITBOSS_ADMIN_KEY", ADMIN_KEY)]);
    let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
    let regulator = server.create_key(ADMIN_KEY, "regulator", None);
    let (s, b) = server.post(
        &op,
        "/v1/tables",
        json!({"table": "t1", "plan": "evolution-roulette@1", "mode": "live"}),
    );
    assert_eq!(s, 201, "{b}");

    // Paused, repaired within the deadline, resumed: the round goes on and is settled.
    let a = open_round(&server, &op);
    place(&server, &op, &a, 2);
    let (s, b) = server.post(
        &op,
        &format!("/v1/rounds/{a}/pause"),
        json!({"reason": "wheel sensor fault"}),
    );
    assert_eq!(s, 200, "{b}");
    std::thread::sleep(Duration::from_millis(800));
    let (s, b) = server.post(
        &op,
        &format!("/v1/rounds/{a}/resume"),
        json!({"reason": "sensor replaced"}),
    );
    assert_eq!((s, b["paused"].as_bool()), (200, Some(false)), "{b}");
    let events = format!("/v1/rounds/{a}/events");
    let (s, b) = server.post(&op, &events, json!({"type": "close_betting"}));
    assert_eq!(s, 200, "{b}");
    let (s, b) = server.post(
        &op,
        &events,
        json!({"type": "spin", "number": 7, "ball_against_rotation": true, "ball_revolutions": 4}),
    );
    assert_eq!((s, b["phase"].as_str()), (200, Some("settled")), "{b}");

    // Paused and never resumed: voided by the service once the deadline has passed, not before,
    // every stake returned.
    let b_round = open_round(&server, &op);
    place(&server, &op, &b_round, 3);
    let (s, b) = server.post(
        &op,
        &format!("/v1/rounds/{b_round}/pause"),
        json!({"reason": "shoe jammed"}),
    );
    assert_eq!(s, 200, "{b}");
    let (voided, waited) = await_void(&server, &op, &b_round);
    assert!(
        waited >= DEADLINE - Duration::from_millis(200),
        "voided after {waited:?}"
    );
    let refunds = voided["refunds"].as_array().expect("refunds");
    assert_eq!(refunds.len(), 3, "{voided}");
    assert_eq!(
        refunds
            .iter()
            .map(|r| r["refund_minor"].as_i64().unwrap())
            .sum::<i64>(),
        300
    );
    // A void ends the pause: nothing is left to resume.
    let (s, b) = server.post(
        &op,
        &format!("/v1/rounds/{b_round}/resume"),
        json!({"reason": "too late"}),
    );
    assert_eq!(
        (s, b["code"].as_str()),
        (409, Some("round_not_paused")),
        "{b}"
    );

    // Unfinished: betting closed and no result reported. Voided the same way.
    let c = open_round(&server, &op);
    place(&server, &op, &c, 1);
    let (s, b) = server.post(
        &op,
        &format!("/v1/rounds/{c}/events"),
        json!({"type": "close_betting"}),
    );
    assert_eq!(s, 200, "{b}");
    let (voided, waited) = await_void(&server, &op, &c);
    assert!(
        waited >= DEADLINE - Duration::from_millis(200),
        "voided after {waited:?}"
    );
    assert_eq!(voided["refunds"][0]["refund_minor"], 100, "{voided}");
    // The table takes its next round.
    let d = open_round(&server, &op);
    assert_ne!(d, c);

    // An RNG round whose result was never drawn: its void reveals the committed seed, as any
    // void does (the replay checks it against the commitment).
    let (s, b) = server.post(
        &op,
        "/v1/tables",
        json!({"table": "t2", "plan": "evolution-roulette@1", "mode": "rng"}),
    );
    assert_eq!(s, 201, "{b}");
    let (s, b) = server.post(&op, "/v1/tables/t2/rounds", json!({}));
    assert_eq!(s, 201, "{b}");
    let e = b["round"].as_str().expect("round").to_string();
    place(&server, &op, &e, 2);
    let (s, b) = server.post(
        &op,
        &format!("/v1/rounds/{e}/events"),
        json!({"type": "close_betting"}),
    );
    assert_eq!(s, 200, "{b}");
    await_void(&server, &op, &e);
    // The round reads as voided from the writer's state as soon as the void is sealed; its
    // entry is in the store once the committer has written it, milliseconds later (nothing
    // waits for this void's answer: the service made it). Read the log until it is there.
    let start = Instant::now();
    let p = loop {
        let (s, _, p) = server.get_as(
            Some(&regulator),
            "/v1/audit/entries?kind=round_voided&table=op1:t2",
        );
        assert_eq!(s, 200, "{p}");
        if p["entries"].as_array().is_some_and(|e| !e.is_empty()) {
            break p;
        }
        assert!(start.elapsed() < Duration::from_secs(5), "{p}");
        std::thread::sleep(Duration::from_millis(20));
    };
    let payload = &p["entries"][0]["entry"]["payload"];
    assert_eq!(payload["actor"]["role"], "service", "{p}");
    assert_eq!(payload["refund_minor"], 200, "{p}");
    assert!(
        payload["rng_seed"]
            .as_str()
            .is_some_and(|s| s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())),
        "{p}"
    );

    // Each void names the service as its actor and the deadline as its reason; the operator
    // sees them in its own feed too.
    let (s, _, p) = server.get_as(
        Some(&regulator),
        "/v1/audit/entries?kind=round_voided&table=op1:t1",
    );
    assert_eq!(s, 200, "{p}");
    let entries = p["entries"].as_array().expect("entries");
    assert_eq!(entries.len(), 2, "{p}");
    // The round is named by the entry's ids (audit/FORMAT.md 1.4: not repeated in the payload).
    let logged: Vec<(&Value, &Value)> = entries
        .iter()
        .map(|e| (&e["entry"]["ids"], &e["entry"]["payload"]))
        .collect();
    for ((ids, payload), round, refund, since) in [
        (logged[0], &b_round, 300, "deadline: paused since "),
        (logged[1], &c, 100, "deadline: no progress since "),
    ] {
        assert_eq!(ids["round"], round.as_str(), "{ids}");
        assert!(payload.get("round").is_none(), "{payload}");
        assert_eq!(payload["refund_minor"], refund, "{payload}");
        assert_eq!(
            payload["actor"],
            json!({"key": "serve", "role": "service"}),
            "{payload}"
        );
        let reason = payload["reason"].as_str().expect("reason");
        assert!(reason.starts_with(since), "{reason}");
        assert!(
            reason.contains("the plan's 2 s (policies.timing.interrupted_round_ms)")
                && reason.contains("Řešení chyb"),
            "{reason}"
        );
    }
    let (s, _, mine) = server.get_as(
        Some(&op),
        "/v1/audit/entries?kind=round_voided&table=op1:t1",
    );
    assert_eq!(s, 200, "{mine}");
    assert_eq!(mine["entries"].as_array().map(Vec::len), Some(2), "{mine}");

    let auditor = server.create_key(ADMIN_KEY, "auditor", None);
    crate::replay::exported_log_verifies_and_replays_on(&server, &auditor, plans.path());
}

#[test]
fn interrupted_rounds_are_voided_at_the_plans_deadline_sqlite() {
    interrupted_rounds_are_voided_at_the_plans_deadline(Backend::Sqlite);
}

#[test]
fn interrupted_rounds_are_voided_at_the_plans_deadline_postgres() {
    interrupted_rounds_are_voided_at_the_plans_deadline(Backend::Postgres);
}

/// A pause outlives a restart: the deadline counts from the logged pause, so a round paused
/// before a stop that outlasted the deadline is voided as soon as the service is back.
fn a_pause_before_a_restart_expires_on_time(backend: Backend) {
    let storage = Storage::new(backend);
    let plans = short_deadline_plans();
    let mut server = TestServer::spawn(plans.path(), &storage, &[("PITBOSS_ADMIN_KEY", ADMIN_KEY)]);
    let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
    let (s, b) = server.post(
        &op,
        "/v1/tables",
        json!({"table": "t1", "plan": "evolution-roulette@1", "mode": "live"}),
    );
    assert_eq!(s, 201, "{b}");
    let round = open_round(&server, &op);
    place(&server, &op, &round, 2);
    let (s, b) = server.post(
        &op,
        &format!("/v1/rounds/{round}/pause"),
        json!({"reason": "studio power cut"}),
    );
    assert_eq!(s, 200, "{b}");
    let paused_at = Instant::now();
    server.terminate();
    // Stopped for longer than the deadline: the restarted service voids the round at once,
    // rather than counting again from its start.
    std::thread::sleep(DEADLINE);
    let server = TestServer::spawn(plans.path(), &storage, &[("PITBOSS_ADMIN_KEY", ADMIN_KEY)]);
    let (voided, waited) = await_void(&server, &op, &round);
    assert!(waited < DEADLINE, "voided {waited:?} after the start");
    assert!(paused_at.elapsed() >= DEADLINE, "voided too early");
    assert_eq!(
        voided["refunds"].as_array().map(Vec::len),
        Some(2),
        "{voided}"
    );
    // The table goes on: its next round is settled.
    let next = open_round(&server, &op);
    place(&server, &op, &next, 1);
    let events = format!("/v1/rounds/{next}/events");
    assert_eq!(
        server
            .post(&op, &events, json!({"type": "close_betting"}))
            .0,
        200
    );
    let (s, b) = server.post(
        &op,
        &events,
        json!({"type": "spin", "number": 0, "ball_against_rotation": true, "ball_revolutions": 4}),
    );
    assert_eq!((s, b["phase"].as_str()), (200, Some("settled")), "{b}");
    let auditor = server.create_key(ADMIN_KEY, "auditor", None);
    crate::replay::exported_log_verifies_and_replays_on(&server, &auditor, plans.path());
}

#[test]
fn a_pause_before_a_restart_expires_on_time_sqlite() {
    a_pause_before_a_restart_expires_on_time(Backend::Sqlite);
}

#[test]
fn a_pause_before_a_restart_expires_on_time_postgres() {
    a_pause_before_a_restart_expires_on_time(Backend::Postgres);
}
