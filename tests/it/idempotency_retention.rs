//! Idempotency records live in the store with a retention (issue 13, item 2): a retry inside
//! the retention returns the first answer, byte for byte, also after a restart (nothing is
//! kept in memory); after the retention the record is pruned, the retry is a new request, and
//! the audit log is untouched by the pruning.

use std::time::Duration;

use serde_json::{json, Value};

use crate::server::{Backend, Storage, TestServer, ADMIN_KEY};

fn start(storage: &Storage, retention_s: &str) -> TestServer {
    TestServer::spawn(
        &crate::source::rng_plans_dir(),
        storage,
        &[
            ("PITBOSS_ADMIN_KEY", ADMIN_KEY),
            ("PITBOSS_IDEMPOTENCY_RETENTION_S", retention_s),
        ],
    )
}

fn stored_records(storage: &Storage) -> i64 {
    use diesel::prelude::*;
    let url = match &storage.pg {
        Some(pg) => pitboss::store::DatabaseUrl::Postgres(pg.url.clone()),
        None => pitboss::store::DatabaseUrl::Sqlite(
            crate::server::data_file(storage)
                .to_string_lossy()
                .into_owned(),
        ),
    };
    let mut conn = pitboss::store::connect(&url).expect("connect");
    pitboss::store::schema::idempotency::table
        .count()
        .get_result(&mut conn)
        .expect("count")
}

fn log_size(server: &TestServer) -> u64 {
    server.get("/healthz").2["log_entries"]
        .as_u64()
        .expect("size")
}

fn retries_return_the_first_answer_until_the_retention_ends(backend: Backend) {
    let storage = Storage::new(backend);
    let mut server = start(&storage, "86400");
    let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
    let (s, b) = server.post(
        &op,
        "/v1/tables",
        json!({"table": "t1", "plan": "evolution-roulette@1", "mode": "live"}),
    );
    assert_eq!(s, 201, "{b}");
    let (s, b) = server.post(&op, "/v1/tables/t1/rounds", json!({}));
    assert_eq!(s, 201, "{b}");
    let bet =
        r#"{"bets": [{"player": "p1", "bet": "straight", "numbers": [17], "stake_minor": 1000}]}"#;
    let (s, _, first) = server.post_raw(Some(&op), Some("bet-1"), "/v1/rounds/t1.1/bets", bet);
    assert_eq!(s, 200, "{first}");
    let size = log_size(&server);
    let (s, _, again) = server.post_raw(Some(&op), Some("bet-1"), "/v1/rounds/t1.1/bets", bet);
    assert_eq!((s, &again), (200, &first));
    // Another body under the same key is refused; nothing is logged for either retry.
    let (s, _, other) = server.post_raw(
        Some(&op),
        Some("bet-1"),
        "/v1/rounds/t1.1/bets",
        &bet.replace("1000", "2000"),
    );
    assert_eq!(s, 422, "{other}");
    assert_eq!(other["code"], "idempotency_key_reused");
    assert_eq!(log_size(&server), size);

    // After a restart the answer comes from the store.
    server.kill();
    let server = start(&storage, "86400");
    let (s, _, after) = server.post_raw(Some(&op), Some("bet-1"), "/v1/rounds/t1.1/bets", bet);
    assert_eq!((s, &after), (200, &first));
    assert_eq!(log_size(&server), size);
    drop(server);
    let records = stored_records(&storage);
    assert!(records >= 3, "{records}");

    // With a retention of 2 s the record is pruned; the retry is then a new request.
    let server = start(&storage, "2");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while stored_records(&storage) > 0 {
        assert!(std::time::Instant::now() < deadline, "records are pruned");
        std::thread::sleep(Duration::from_millis(200));
    }
    let (s, _, late) = server.post_raw(Some(&op), Some("bet-1"), "/v1/rounds/t1.1/bets", bet);
    assert_eq!(s, 200, "{late}");
    assert_ne!(
        late["results"][0]["bet"], first["results"][0]["bet"],
        "executed anew"
    );
    assert!(log_size(&server) > size, "the log only grows");
    let auditor = server.create_key(ADMIN_KEY, "auditor", None);
    let (s, text) = server.get_text(Some(&auditor), "/v1/audit/export");
    assert_eq!(s, 200);
    let first_bet: Value = first["results"][0]["bet"].clone();
    assert!(
        text.contains(&format!("\"bet\":{first_bet}")),
        "the pruned record's bet is still in the log"
    );
}

#[test]
fn retries_return_the_first_answer_until_the_retention_ends_sqlite() {
    retries_return_the_first_answer_until_the_retention_ends(Backend::Sqlite);
}

#[test]
fn retries_return_the_first_answer_until_the_retention_ends_postgres() {
    retries_return_the_first_answer_until_the_retention_ends(Backend::Postgres);
}
