//! Bounded memory (issue 13): a settled or voided round leaves memory once durable, and every
//! read of it (the round, its settlement, its recall) comes from the store, byte-identical to
//! what the live round answered (the replay's own state of the round, serialised), also after
//! a restart; commands on a finished round are decided as before; the working set counted in
//! `/metrics` is what is live.

use serde_json::{json, Value};

use crate::server::{Backend, Storage, TestServer, ADMIN_KEY};

/// The state of every round as the replay of the export folds it (no eviction there).
fn replayed_rounds(
    server: &TestServer,
    auditor: &str,
) -> std::collections::BTreeMap<String, String> {
    let (s, export) = server.get_text(Some(auditor), "/v1/audit/export");
    assert_eq!(s, 200);
    let (plans, _) = pitboss::plan::PlanSet::load_dir(&crate::source::rng_plans_dir());
    let mut state = pitboss::round::State::default();
    for line in export.lines().skip(1) {
        let v: Value = serde_json::from_str(line).expect("line");
        if v.get("checkpoint").is_some() {
            continue;
        }
        let Some(e) = pitboss::round::event_of_entry(&v).expect("event") else {
            continue;
        };
        state.apply(&plans, &e).expect("replays");
    }
    state
        .rounds
        .iter()
        .map(|(k, r)| (k.clone(), serde_json::to_string(r).expect("serialises")))
        .collect()
}

fn finished_rounds_are_read_from_the_store(backend: Backend) {
    let storage = Storage::new(backend);
    let mut server = TestServer::on(&storage);
    let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
    let auditor = server.create_key(ADMIN_KEY, "auditor", None);
    let (s, b) = server.post(
        &op,
        "/v1/tables",
        json!({"table": "t1", "plan": "evolution-roulette@1", "mode": "live"}),
    );
    assert_eq!(s, 201, "{b}");
    let (s, b) = server.post(
        &op,
        "/v1/tables",
        json!({"table": "b1", "plan": "evolution-speed-baccarat@1", "mode": "rng"}),
    );
    assert_eq!(s, 201, "{b}");
    // Three roulette rounds (two settled, one voided) and an RNG baccarat coup.
    for (n, outcome) in [(1, "spin"), (2, "void"), (3, "spin")] {
        let (s, b) = server.post(&op, "/v1/tables/t1/rounds", json!({}));
        assert_eq!(s, 201, "{b}");
        let round = format!("t1.{n}");
        let (s, b) = server.post(
            &op,
            &format!("/v1/rounds/{round}/bets"),
            json!({"bets": [
                {"player": "p1", "bet": "straight", "numbers": [17], "stake_minor": 1000},
                {"player": "p2", "bet": "red_black", "field": "red", "stake_minor": 500}
            ]}),
        );
        assert_eq!(s, 200, "{b}");
        if outcome == "void" {
            let (s, b) = server.post(
                &op,
                &format!("/v1/rounds/{round}/void"),
                json!({"reason": "wheel fault"}),
            );
            assert_eq!(s, 200, "{b}");
        } else {
            for ev in [
                json!({"type": "close_betting"}),
                json!({"type": "spin", "number": 17, "ball_against_rotation": true, "ball_revolutions": 4}),
            ] {
                let (s, b) = server.post(&op, &format!("/v1/rounds/{round}/events"), ev);
                assert_eq!(s, 200, "{b}");
            }
        }
    }
    let (s, b) = server.post(&op, "/v1/tables/b1/rounds", json!({}));
    assert_eq!(s, 201, "{b}");
    let (s, b) = server.post(
        &op,
        "/v1/rounds/b1.1/bets",
        json!({"bets": [{"player": "p1", "bet": "banker", "stake_minor": 1000}]}),
    );
    assert_eq!(s, 200, "{b}");
    for ev in [json!({"type": "close_betting"}), json!({"type": "deal"})] {
        let (s, b) = server.post(&op, "/v1/rounds/b1.1/events", ev);
        assert_eq!(s, 200, "{b}");
    }
    // One round stays open: it alone is in memory.
    let (s, b) = server.post(&op, "/v1/tables/t1/rounds", json!({}));
    assert_eq!(s, 201, "{b}");
    assert_eq!(server.metric_settled("pitboss_rounds_in_memory", 1), 1);
    assert_eq!(server.metric_settled("pitboss_tables_in_memory", 2), 2);

    // By their ids (scoped to the operator): the auditor reads them too.
    let finished = ["op1:t1.1", "op1:t1.2", "op1:t1.3", "op1:b1.1"];
    let replayed = replayed_rounds(&server, &auditor);
    let read = |server: &TestServer, key: &str| -> Vec<(String, String)> {
        finished
            .iter()
            .map(|r| {
                let mut all = String::new();
                for path in [
                    format!("/v1/rounds/{r}"),
                    format!("/v1/rounds/{r}/settlement"),
                    format!("/v1/rounds/{r}/recall"),
                ] {
                    let (s, text) = server.get_text(Some(key), &path);
                    assert_eq!(s, 200, "{path}: {text}");
                    all.push_str(&text);
                    all.push('\n');
                }
                (r.to_string(), all)
            })
            .collect()
    };
    for r in finished {
        let (s, text) = server.get_text(Some(&op), &format!("/v1/rounds/{r}"));
        assert_eq!(s, 200);
        assert_eq!(
            &text, &replayed[r],
            "{r}: the stored round is the live round, byte for byte"
        );
    }
    let before = read(&server, &op);
    let as_auditor = read(&server, &auditor);
    assert_eq!(before, as_auditor);
    // Another operator reads none of it.
    let other = server.create_key(ADMIN_KEY, "operator", Some("op2"));
    for r in finished {
        let (s, _, b) = server.get_as(Some(&other), &format!("/v1/rounds/{r}"));
        assert_eq!(s, 404, "{b}");
    }
    // Commands on a finished round are decided as on the live round.
    let (s, b) = server.post(
        &op,
        "/v1/rounds/t1.1/bets",
        json!({"bets": [{"player": "p1", "bet": "straight", "numbers": [1], "stake_minor": 100}]}),
    );
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["results"][0]["code"], "betting_closed", "{b}");
    let (s, b) = server.post(&op, "/v1/rounds/t1.2/void", json!({"reason": "again"}));
    assert_eq!(s, 409, "{b}");
    assert_eq!(b["code"], "out_of_order");
    assert_eq!(
        server.metric_settled("pitboss_rounds_in_memory", 1),
        1,
        "faulted-in rounds leave again"
    );

    // After a restart: the same bytes.
    server.kill();
    let server = TestServer::on(&storage);
    assert_eq!(server.metric("pitboss_rounds_in_memory"), 1);
    let after = read(&server, &op);
    // The recall now also holds the refusals just logged; the round and settlement are equal.
    for ((r, a), (_, b)) in before.iter().zip(&after) {
        let a: Vec<&str> = a.lines().collect();
        let b: Vec<&str> = b.lines().collect();
        assert_eq!(a[0], b[0], "{r}: round");
        assert_eq!(a[1], b[1], "{r}: settlement");
    }
    crate::replay::exported_log_verifies_and_replays(&server, &auditor);
}

#[test]
fn finished_rounds_are_read_from_the_store_sqlite() {
    finished_rounds_are_read_from_the_store(Backend::Sqlite);
}

#[test]
fn finished_rounds_are_read_from_the_store_postgres() {
    finished_rounds_are_read_from_the_store(Backend::Postgres);
}

/// Every PostgreSQL connection of the store (the writer's, the committer's, the readers')
/// plans each statement for its parameters. A cached generic plan, costed on the empty table of
/// a fresh start, once turned the writer's idempotency lookup into a scan of the operator's
/// whole history: a read that grew with the log.
#[test]
fn postgres_connections_plan_each_statement_for_its_parameters() {
    use diesel::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct Mode {
        #[diesel(sql_type = diesel::sql_types::Text)]
        plan_cache_mode: String,
    }
    let pg = crate::server::PgDatabase::create();
    let url = pitboss::store::DatabaseUrl::Postgres(pg.url.clone());
    let mut conn = pitboss::store::connect(&url).expect("connect");
    let mode: Mode = diesel::sql_query("SHOW plan_cache_mode")
        .get_result(&mut conn)
        .expect("SHOW plan_cache_mode");
    assert_eq!(mode.plan_cache_mode, "force_custom_plan");
    let pool = pitboss::store::read_pool(&url, 1).expect("read pool");
    let mut reader = pool.get().expect("a reader");
    let mode: Mode = diesel::sql_query("SHOW plan_cache_mode")
        .get_result(&mut *reader)
        .expect("SHOW plan_cache_mode");
    assert_eq!(mode.plan_cache_mode, "force_custom_plan");
}
