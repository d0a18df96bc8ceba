//! A log per operator (issue 17, item 1; `serve --log-per-operator`): each operator's tables
//! write a log of their own, with its own chain, checkpoints and origin, in a store namespace
//! of its own; the service's log keeps keys and plans. Each log verifies and replays on its
//! own, an operator reads only its own, and a restart opens every log again.

use serde_json::{json, Value};

use crate::server::{Backend, Storage, TestServer, ADMIN_KEY};

const SHARDED: (&str, &str) = ("PITBOSS_LOG_PER_OPERATOR", "true");

fn start(storage: &Storage) -> TestServer {
    TestServer::spawn(
        &crate::source::rng_plans_dir(),
        storage,
        &[("PITBOSS_ADMIN_KEY", ADMIN_KEY), SHARDED],
    )
}

/// Opens a round at `table` (the operator's name), bets on 17 and spins 17: settled.
fn play(server: &TestServer, key: &str, table: &str, stake: i64) -> String {
    let (s, body) = server.post(key, &format!("/v1/tables/{table}/rounds"), json!({}));
    assert_eq!(s, 201, "{body}");
    let round = body["round"].as_str().expect("round").to_string();
    let (s, body) = server.post(
        key,
        &format!("/v1/rounds/{round}/bets"),
        json!({"bets": [{"player": "p1", "bet": "straight", "numbers": [17], "stake_minor": stake}]}),
    );
    assert_eq!((s, &body["accepted"]), (200, &json!(1)), "{body}");
    for event in [
        json!({"type": "close_betting"}),
        json!({"type": "spin", "number": 17, "ball_against_rotation": true, "ball_revolutions": 4}),
    ] {
        let (s, body) = server.post(key, &format!("/v1/rounds/{round}/events"), event);
        assert_eq!(s, 200, "{body}");
    }
    round
}

fn entries(server: &TestServer, key: &str, query: &str) -> (u16, Value) {
    let (s, _, page) = server.get_as(Some(key), &format!("/v1/audit/entries?{query}"));
    (s, page)
}

/// The first line of a log's latest checkpoint: its origin.
fn origin_of(server: &TestServer, key: &str, log: &str) -> String {
    let (s, note) = server.get_text(Some(key), &format!("/v1/audit/checkpoint?log={log}"));
    assert_eq!(s, 200, "{note}");
    note.lines().next().expect("origin line").to_string()
}

fn operators_write_logs_of_their_own(backend: Backend) {
    let storage = Storage::new(backend);
    let mut server = start(&storage);
    let a = server.create_key(ADMIN_KEY, "operator", Some("opA"));
    let b = server.create_key(ADMIN_KEY, "operator", Some("opB"));
    let auditor = server.create_key(ADMIN_KEY, "auditor", None);
    // `service` names the service's log: no operator may be called so.
    let (s, body) = server.post(
        ADMIN_KEY,
        "/v1/admin/keys",
        json!({"role": "operator", "operator": "service"}),
    );
    assert_eq!((s, body["code"].as_str()), (400, Some("bad_id")), "{body}");

    // Both open `t1` at once, each in its own log (made by its first command).
    let opened = crate::isolation::open_t1_at_once(&server, [&a, &b]);
    assert_eq!(
        (opened[0].0, &opened[0].1["table"]),
        (201, &json!("opA:t1"))
    );
    assert_eq!(
        (opened[1].0, &opened[1].1["table"]),
        (201, &json!("opB:t1"))
    );
    assert_eq!(play(&server, &a, "t1", 100), "opA:t1.1");
    assert_eq!(play(&server, &b, "t1", 200), "opB:t1.1");
    assert_eq!(play(&server, &a, "t1", 300), "opA:t1.2");

    // Each log has its own origin: the service's, then `/operator/<id>`.
    let service = origin_of(&server, &auditor, "service");
    assert_eq!(
        origin_of(&server, &auditor, "opA"),
        format!("{service}/operator/opA")
    );
    assert_eq!(
        origin_of(&server, &auditor, "opB"),
        format!("{service}/operator/opB")
    );

    // Each operator's log holds its own entries only, from seq 0; the service's log holds the
    // keys and no table.
    for (log, op, tables) in [("opA", "opA", 1), ("opB", "opB", 1)] {
        let (s, page) = entries(&server, &auditor, &format!("log={log}"));
        assert_eq!(s, 200, "{page}");
        let list = page["entries"].as_array().expect("entries");
        assert_eq!(list[0]["seq"], 0, "a log of its own starts at 0");
        for e in list {
            let ids = &e["entry"]["ids"];
            assert!(
                ids["operator"].is_null() || ids["operator"] == op,
                "{log}: {e}"
            );
        }
        let opened = list
            .iter()
            .filter(|e| e["entry"]["kind"] == "table_opened")
            .count();
        assert_eq!(opened, tables, "{log}");
    }
    let (s, page) = entries(&server, &auditor, "log=service&kind=table_opened");
    assert_eq!(
        (s, page["entries"].as_array().map(Vec::len)),
        (200, Some(0)),
        "{page}"
    );
    let (s, page) = entries(&server, &auditor, "kind=api_key_created");
    assert_eq!(s, 200, "{page}");
    assert!(
        page["entries"].as_array().expect("entries").len() >= 3,
        "{page}"
    );

    // An operator reads its own log by default, and no other.
    let (s, page) = entries(&server, &a, "kind=bet_accepted");
    assert_eq!(s, 200, "{page}");
    assert_eq!(page["entries"].as_array().map(Vec::len), Some(2), "{page}");
    let (s, page) = entries(&server, &a, "log=opB");
    assert_eq!(
        (s, page["code"].as_str()),
        (403, Some("forbidden")),
        "{page}"
    );
    let (s, page) = entries(&server, &auditor, "log=opC");
    assert_eq!(
        (s, page["code"].as_str()),
        (404, Some("no_such_log")),
        "{page}"
    );

    // Tables and rounds are read where they are, by every reader.
    let (s, _, list) = server.get_as(Some(&a), "/v1/tables");
    assert_eq!(s, 200, "{list}");
    let ids: Vec<&str> = list["tables"]
        .as_array()
        .expect("tables")
        .iter()
        .filter_map(|t| t["table"].as_str())
        .collect();
    assert_eq!(ids, ["opA:t1"]);
    let (s, _, list) = server.get_as(Some(&auditor), "/v1/tables?log=opB");
    assert_eq!(
        (s, &list["tables"][0]["table"]),
        (200, &json!("opB:t1")),
        "{list}"
    );
    let (s, _, rounds) = server.get_as(Some(&a), "/v1/tables/t1/rounds");
    assert_eq!(
        (s, rounds["rounds"].as_array().map(Vec::len)),
        (200, Some(2)),
        "{rounds}"
    );
    for (key, round) in [(&auditor, "opB:t1.1"), (&b, "t1.1"), (&a, "opA:t1.2")] {
        let (s, _, r) = server.get_as(Some(key), &format!("/v1/rounds/{round}"));
        assert_eq!((s, &r["phase"]), (200, &json!("settled")), "{round}: {r}");
    }
    let (s, _, r) = server.get_as(Some(&a), "/v1/rounds/opB:t1.1");
    assert_eq!(s, 404, "{r}");
    // Proofs and consistency, per log.
    let (s, _, proof) = server.get_as(Some(&auditor), "/v1/audit/proof/0?log=opA");
    assert_eq!(s, 200, "{proof}");
    assert!(proof.to_string().contains("/operator/opA"), "{proof}");
    let (s, _, c) = server.get_as(Some(&auditor), "/v1/audit/consistency?log=opB&from=1&to=2");
    assert_eq!(s, 200, "{c}");
    // /metrics: each operator's log's size and readiness.
    let (s, metrics) = server.get_text(None, "/metrics");
    assert_eq!(s, 200);
    // Every log's bets and rounds are counted together.
    for line in [
        "pitboss_bets_accepted_total 3",
        "pitboss_rounds_settled_total 3",
    ] {
        assert!(metrics.lines().any(|l| l == line), "{line}: {metrics}");
    }
    for op in ["opA", "opB"] {
        assert!(
            metrics.contains(&format!("pitboss_operator_log_ready{{log=\"{op}\"}} 1")),
            "{metrics}"
        );
    }

    // Each log is in a store namespace of its own: a file under `logs/`, or a schema.
    let namespaces: Vec<String> = ["opA", "opB"]
        .map(pitboss::store::log_namespace)
        .into_iter()
        .collect();
    match &storage.pg {
        None => {
            for ns in &namespaces {
                let file = storage.data_dir().join("logs").join(format!("{ns}.sqlite"));
                assert!(file.exists(), "{}", file.display());
            }
        }
        Some(pg) => {
            use diesel::RunQueryDsl;
            #[derive(diesel::QueryableByName)]
            struct Schema {
                #[diesel(sql_type = diesel::sql_types::Text)]
                schema_name: String,
            }
            let url = pitboss::store::DatabaseUrl::Postgres(pg.url.clone());
            let mut c = pitboss::store::connect(&url).expect("connect");
            let mut found: Vec<String> = diesel::sql_query(
                "SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE 'op\\_%'",
            )
            .load::<Schema>(&mut c)
            .expect("schemas")
            .into_iter()
            .map(|s| s.schema_name)
            .collect();
            found.sort();
            let mut want = namespaces.clone();
            want.sort();
            assert_eq!(found, want);
        }
    }

    // Each log's export verifies and replays alone, under its own origin.
    for log in ["opA", "opB"] {
        let export = crate::replay::export_at_verifies_and_replays(
            &server,
            &auditor,
            &format!("/v1/audit/export?log={log}"),
        );
        assert!(
            export
                .lines()
                .next()
                .unwrap_or("")
                .contains(&format!("/operator/{log}")),
            "{log}'s export header names its origin"
        );
    }

    // A restart opens both logs again: live state, names and sequence numbers go on.
    server.terminate();
    server = start(&storage);
    assert_eq!(play(&server, &b, "t1", 400), "opB:t1.2");
    let (s, body) = server.post(
        &a,
        "/v1/tables",
        json!({"table": "t1", "plan": "evolution-roulette@1", "mode": "live"}),
    );
    assert_eq!(
        (s, body["code"].as_str()),
        (409, Some("table_exists")),
        "{body}"
    );
    crate::replay::export_at_verifies_and_replays(&server, &auditor, "/v1/audit/export?log=opB");
    server.terminate();

    // Without the flag, a deployment with operators' logs does not start.
    let out = crate::single_writer::serve_to_exit(&storage);
    assert_ne!(out.0, Some(0), "{}", out.1);
    assert!(out.1.contains("--log-per-operator"), "{}", out.1);
}

#[test]
fn operators_write_logs_of_their_own_sqlite() {
    operators_write_logs_of_their_own(Backend::Sqlite);
}

#[test]
fn operators_write_logs_of_their_own_postgres() {
    operators_write_logs_of_their_own(Backend::Postgres);
}

/// Approvals are the service's (logged in its log, by a regulator), and gate every
/// operator's log: a table on an unapproved plan is refused in the operator's log, accepted
/// once approved, and its next round refused once the approval is withdrawn.
#[test]
fn approvals_in_the_services_log_gate_the_operators_logs_sqlite() {
    let storage = Storage::new(Backend::Sqlite);
    let server = TestServer::spawn(
        &crate::source::rng_plans_dir(),
        &storage,
        &[
            ("PITBOSS_ADMIN_KEY", ADMIN_KEY),
            ("PITBOSS_REQUIRE_APPROVAL", "true"),
            SHARDED,
        ],
    );
    let op = server.create_key(ADMIN_KEY, "operator", Some("opA"));
    let regulator = server.create_key(ADMIN_KEY, "regulator", None);
    let auditor = server.create_key(ADMIN_KEY, "auditor", None);
    let plan = "evolution-roulette@1";
    let open = || {
        server.post(
            &op,
            "/v1/tables",
            json!({"table": "t1", "plan": plan, "mode": "live"}),
        )
    };
    let (s, body) = open();
    assert_eq!(
        (s, body["code"].as_str()),
        (409, Some("plan_not_approved")),
        "{body}"
    );
    let (s, _, p) = server.get(&format!("/v1/plans/{plan}"));
    assert_eq!(s, 200, "{p}");
    let (s, body) = server.post(
        &regulator,
        "/v1/plan-approvals",
        json!({"plan": plan, "sha256": p["sha256"], "reference": "MF-2026/1",
               "valid_from": "2026-01-01T00:00:00Z"}),
    );
    assert_eq!(s, 201, "{body}");
    let (s, body) = open();
    assert_eq!((s, &body["table"]), (201, &json!("opA:t1")), "{body}");
    assert_eq!(play(&server, &op, "t1", 100), "opA:t1.1");
    let (s, body) = server.post(
        &regulator,
        "/v1/plan-approvals/withdrawals",
        json!({"reference": "MF-2026/1", "reason": "licence amended"}),
    );
    assert_eq!(s, 200, "{body}");
    let (s, body) = server.post(&op, "/v1/tables/t1/rounds", json!({}));
    assert_eq!(
        (s, body["code"].as_str()),
        (409, Some("plan_not_approved")),
        "{body}"
    );
    // The approval and its withdrawal are in the service's log; the refusals in the
    // operator's.
    let kinds = |log: &str| -> Vec<String> {
        let (s, page) = entries(&server, &auditor, &format!("log={log}"));
        assert_eq!(s, 200, "{page}");
        page["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .map(|e| e["entry"]["kind"].as_str().unwrap_or("").to_string())
            .collect()
    };
    let service = kinds("service");
    assert!(service.iter().any(|k| k == "plan_approved"), "{service:?}");
    assert!(
        service.iter().any(|k| k == "plan_approval_withdrawn"),
        "{service:?}"
    );
    let own = kinds("opA");
    assert_eq!(
        own.iter().filter(|k| *k == "command_refused").count(),
        2,
        "{own:?}"
    );
    assert!(
        !own.iter().any(|k| k.starts_with("plan_approval")),
        "{own:?}"
    );
}

/// A deployment of one log switched to a log per operator: refused while its one log holds an
/// open table; once they are closed, it starts, the tables closed before are read by their ids
/// (from the service's log) and the operator's new tables go to its own log.
#[test]
fn a_deployment_of_one_log_switches_once_its_tables_are_closed_sqlite() {
    let storage = Storage::new(Backend::Sqlite);
    let plans = crate::source::rng_plans_dir();
    let mut one = TestServer::spawn(&plans, &storage, &[("PITBOSS_ADMIN_KEY", ADMIN_KEY)]);
    let a = one.create_key(ADMIN_KEY, "operator", Some("opA"));
    let auditor = one.create_key(ADMIN_KEY, "auditor", None);
    let (s, body) = one.post(
        &a,
        "/v1/tables",
        json!({"table": "t1", "plan": "evolution-roulette@1", "mode": "live"}),
    );
    assert_eq!(s, 201, "{body}");
    assert_eq!(play(&one, &a, "t1", 100), "opA:t1.1");
    one.terminate();
    // Open table: the switch is refused, naming why.
    let (code, err) = crate::single_writer::serve_to_exit_with(&storage, &[SHARDED]);
    assert_ne!(code, Some(0), "{err}");
    assert!(err.contains("open tables"), "{err}");
    let mut one = TestServer::spawn(&plans, &storage, &[("PITBOSS_ADMIN_KEY", ADMIN_KEY)]);
    let (s, body) = one.post(&a, "/v1/tables/t1/close", json!({"reason": "switch"}));
    assert_eq!(s, 200, "{body}");
    one.terminate();
    let server = start(&storage);
    // New tables go to the operator's own log (made now, by this command).
    let (s, body) = server.post(
        &a,
        "/v1/tables",
        json!({"table": "t2", "plan": "evolution-roulette@1", "mode": "live"}),
    );
    assert_eq!((s, &body["table"]), (201, &json!("opA:t2")), "{body}");
    // The closed table and its round, from the service's log (the operator's has it not), by
    // id and by name.
    for (key, path) in [
        (&a, "/v1/tables/t1"),
        (&auditor, "/v1/tables/opA:t1"),
        (&a, "/v1/rounds/t1.1"),
        (&a, "/v1/rounds/t1.1/recall"),
        (&a, "/v1/tables/t1/rounds"),
    ] {
        let (s, _, body) = server.get_as(Some(key), path);
        assert_eq!(s, 200, "{path}: {body}");
    }
    // The console reads them there too.
    let session = crate::console::sign_in(&server, &auditor).expect("an auditor signs in");
    for path in ["/console/tables/opA:t1", "/console/rounds/opA:t1.1"] {
        let page = crate::console::get(&server, path, &session, &[]);
        assert_eq!(page.status, 200, "{path}: {}", page.body);
    }
    let recall = crate::console::get(&server, "/console/rounds/opA:t1.1", &session, &[]);
    assert!(recall.body.contains("✓ included") && !recall.body.contains("not verified"));
    let (s, page) = entries(&server, &auditor, "log=opA&kind=table_opened");
    assert_eq!(
        (s, page["entries"].as_array().map(Vec::len)),
        (200, Some(1)),
        "{page}"
    );
    let (s, page) = entries(&server, &auditor, "log=service&kind=table_opened");
    assert_eq!(
        (s, page["entries"].as_array().map(Vec::len)),
        (200, Some(1)),
        "{page}"
    );
}
