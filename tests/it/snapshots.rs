//! Snapshots of the live state and closed tables out of memory (issue 13): a start reads the
//! latest snapshot and replays only the log after it; what it rebuilds answers every read
//! exactly as before (the shoe's per-card counts included); a closed table leaves memory and
//! is read from the store byte for byte, its id still taken; a snapshot that does not check
//! out is set aside for a full replay. Every test server's log is also checked when dropped
//! (snapshot + tail = full replay, `server.rs`), and the export's `state_snapshot` entries by
//! the auditor's `pitboss replay` (`replay.rs`).

use serde_json::{json, Value};

use crate::server::{Backend, Storage, TestServer, ADMIN_KEY};

fn start(storage: &Storage) -> TestServer {
    TestServer::spawn(
        &crate::source::rng_plans_dir(),
        storage,
        &[
            ("PITBOSS_ADMIN_KEY", ADMIN_KEY),
            ("PITBOSS_SNAPSHOT_EVERY", "5"),
        ],
    )
}

/// The tables as the replay of the export folds them (nothing evicted there).
fn replayed_tables(
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
        if let Some(e) = pitboss::round::event_of_entry(&v).expect("event") {
            state.apply(&plans, &e).expect("replays");
        }
    }
    state
        .tables
        .iter()
        .map(|(k, t)| (k.clone(), serde_json::to_string(t).expect("serialises")))
        .collect()
}

/// A live baccarat coup dealt in one request: player Kd 9s (a natural 9), banker Kd 8s.
fn natural_coup(server: &TestServer, op: &str, n: u64) -> (u16, Value) {
    let round = format!("b1.{n}");
    let (s, b) = server.post(op, "/v1/tables/b1/rounds", json!({}));
    assert_eq!(s, 201, "{b}");
    let (s, b) = server.post(
        op,
        &format!("/v1/rounds/{round}/bets"),
        json!({"bets": [{"player": "p1", "bet": "player", "stake_minor": 1000}]}),
    );
    assert_eq!(s, 200, "{b}");
    let (s, b) = server.post(
        op,
        &format!("/v1/rounds/{round}/events"),
        json!({"type": "close_betting"}),
    );
    assert_eq!(s, 200, "{b}");
    server.post(
        op,
        &format!("/v1/rounds/{round}/events"),
        json!({"type": "cards", "cards": [
            {"to": "player_1", "card": "Kd"}, {"to": "banker_1", "card": "Kd"},
            {"to": "player_2", "card": "9s"}, {"to": "banker_2", "card": "8s"}
        ]}),
    )
}

fn reads(server: &TestServer, key: &str) -> Vec<(String, u16, String)> {
    [
        "/v1/tables/t1",
        "/v1/tables/b1",
        "/v1/tables/c1",
        "/v1/rounds/t1.1",
        "/v1/rounds/b1.1",
        "/v1/rounds/c1.1",
        "/v1/rounds/c1.1/settlement",
    ]
    .iter()
    .map(|p| {
        let (s, text) = server.get_text(Some(key), p);
        (p.to_string(), s, text)
    })
    .collect()
}

fn snapshots_and_closed_tables(backend: Backend) {
    let storage = Storage::new(backend);
    let mut server = start(&storage);
    let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
    let other = server.create_key(ADMIN_KEY, "operator", Some("op2"));
    let auditor = server.create_key(ADMIN_KEY, "auditor", None);
    for (table, plan) in [
        ("t1", "evolution-roulette@1"),
        ("b1", "evolution-speed-baccarat@1"),
        ("c1", "evolution-roulette@1"),
    ] {
        let (s, b) = server.post(
            &op,
            "/v1/tables",
            json!({"table": table, "plan": plan, "mode": "live"}),
        );
        assert_eq!(s, 201, "{b}");
    }
    // c1: a round voided, then the table closed: it leaves memory.
    let (s, b) = server.post(&op, "/v1/tables/c1/rounds", json!({}));
    assert_eq!(s, 201, "{b}");
    let (s, b) = server.post(
        &op,
        "/v1/rounds/c1.1/bets",
        json!({"bets": [{"player": "p1", "bet": "straight", "numbers": [3], "stake_minor": 500}]}),
    );
    assert_eq!(s, 200, "{b}");
    let (s, b) = server.post(
        &op,
        "/v1/rounds/c1.1/void",
        json!({"reason": "wheel fault"}),
    );
    assert_eq!(s, 200, "{b}");
    let (s, b) = server.post(
        &op,
        "/v1/tables/c1/close",
        json!({"reason": "end of shift"}),
    );
    assert_eq!(s, 200, "{b}");
    assert_eq!(server.metric_settled("pitboss_tables_in_memory", 2), 2);
    let (s, closed) = server.get_text(Some(&op), "/v1/tables/c1");
    assert_eq!(s, 200, "{closed}");
    assert_eq!(
        closed,
        replayed_tables(&server, &auditor)["op1:c1"],
        "the stored closed table is the table as it closed, byte for byte"
    );
    // Its name stays taken for its operator (another operator's names are its own, issue
    // 17); only its operator reads it, by its name or its id.
    let refusals = |server: &TestServer| -> Vec<(u16, Value)> {
        let mut out = Vec::new();
        let (s, b) = server.post(
            &op,
            "/v1/tables",
            json!({"table": "c1", "plan": "evolution-roulette@1", "mode": "live"}),
        );
        out.push((s, b["code"].clone()));
        let (s, b) = server.post(&op, "/v1/tables/c1/rounds", json!({}));
        out.push((s, b["code"].clone()));
        for id in ["c1", "op1:c1"] {
            let (s, _, b) = server.get_as(Some(&other), &format!("/v1/tables/{id}"));
            out.push((s, b["code"].clone()));
            let (s, _, b) = server.get_as(Some(&op), &format!("/v1/tables/{id}"));
            out.push((s, b["table"].clone()));
        }
        out
    };
    let refused = refusals(&server);
    assert_eq!(refused[0], (409, json!("table_exists")));
    assert_eq!(refused[1].1, json!("table_closed"), "{refused:?}");
    assert_eq!(refused[2], (404, json!("table_not_found")));
    assert_eq!(refused[3], (200, json!("op1:c1")));
    assert_eq!(refused[4], (404, json!("table_not_found")));
    assert_eq!(refused[5], (200, json!("op1:c1")));
    assert_eq!(
        server.metric_settled("pitboss_tables_in_memory", 2),
        2,
        "a closed table read back for a command leaves again"
    );

    // b1: four natural coups deal all eight Kd of the shoe; a fifth round stays open with a bet.
    for n in 1..=4 {
        let (s, b) = natural_coup(&server, &op, n);
        assert_eq!(s, 200, "{b}");
    }
    let (s, b) = server.post(&op, "/v1/tables/b1/rounds", json!({}));
    assert_eq!(s, 201, "{b}");
    let (s, b) = server.post(
        &op,
        "/v1/rounds/b1.5/bets",
        json!({"bets": [{"player": "p2", "bet": "banker", "stake_minor": 2000}]}),
    );
    assert_eq!(s, 200, "{b}");
    // t1: a round open with bets.
    let (s, b) = server.post(&op, "/v1/tables/t1/rounds", json!({}));
    assert_eq!(s, 201, "{b}");
    let (s, b) = server.post(
        &op,
        "/v1/rounds/t1.1/bets",
        json!({"bets": [{"player": "p1", "bet": "red_black", "field": "red", "stake_minor": 700}]}),
    );
    assert_eq!(s, 200, "{b}");
    assert!(server.metric("pitboss_snapshots_total") >= 1);
    // Each snapshot's pause of the writer is timed.
    assert_eq!(
        server.metric("pitboss_writer_stage_duration_seconds_count{stage=\"snapshot\"}"),
        server.metric("pitboss_snapshots_total")
    );
    let before = reads(&server, &op);
    let round_before = server.get_text(Some(&op), "/v1/rounds/b1.5");

    // A clean stop stores a snapshot: the next start replays only its own entry.
    server.terminate();
    let mut server = start(&storage);
    assert!(
        server.metric("pitboss_start_replayed_entries") <= 1,
        "a start after a clean stop replays nothing but the snapshot's entry"
    );
    assert_eq!(reads(&server, &op), before);
    assert_eq!(server.get_text(Some(&op), "/v1/rounds/b1.5"), round_before);
    assert_eq!(refusals(&server), refused);
    // The shoe's per-card counts came through the snapshot: a ninth Kd is refused.
    let (s, b) = server.post(
        &op,
        "/v1/rounds/b1.5/events",
        json!({"type": "close_betting"}),
    );
    assert_eq!(s, 200, "{b}");
    let (s, b) = server.post(
        &op,
        "/v1/rounds/b1.5/events",
        json!({"type": "cards", "cards": [{"to": "player_1", "card": "Kd"}]}),
    );
    assert_eq!(b["code"], "card_not_in_shoe", "{s} {b}");
    let entries = server.metric("pitboss_log_entries");

    // A snapshot that does not check out is set aside: the start replays the whole log and
    // rebuilds the same state.
    server.kill();
    {
        use diesel::RunQueryDsl;
        let url = match &storage.pg {
            Some(pg) => pitboss::store::DatabaseUrl::Postgres(pg.url.clone()),
            None => pitboss::store::DatabaseUrl::default_in(storage.data_dir()),
        };
        let mut conn = pitboss::store::connect(&url).expect("connect");
        let n = diesel::sql_query("UPDATE state_snapshots SET sha256 = 'damaged'")
            .execute(&mut conn)
            .expect("damage the snapshot");
        assert_eq!(n, 1, "one snapshot is kept");
    }
    let server = start(&storage);
    let size = server.metric("pitboss_log_entries");
    assert!(size >= entries);
    assert_eq!(
        server.metric("pitboss_start_replayed_entries"),
        size,
        "a damaged snapshot is not used: the whole log is replayed"
    );
    assert_eq!(reads(&server, &op), before);
    // Play on until a new snapshot replaces the damaged one (checked when the server drops).
    let (s, b) = server.post(&op, "/v1/rounds/b1.5/void", json!({"reason": "shoe fault"}));
    assert_eq!(s, 200, "{b}");
    for _ in 0..8 {
        let (s, b) = server.post(
            &op,
            "/v1/rounds/t1.1/bets",
            json!({"bets": [{"player": "p3", "bet": "red_black", "field": "black", "stake_minor": 100}]}),
        );
        assert_eq!(s, 200, "{b}");
    }
    assert!(server.metric("pitboss_snapshots_total") >= 1);
    crate::replay::exported_log_verifies_and_replays(&server, &auditor);
}

#[test]
fn a_start_reads_the_latest_snapshot_and_closed_tables_leave_memory_sqlite() {
    snapshots_and_closed_tables(Backend::Sqlite);
}

#[test]
fn a_start_reads_the_latest_snapshot_and_closed_tables_leave_memory_postgres() {
    snapshots_and_closed_tables(Backend::Postgres);
}

/// A start that replayed a tail (after a crash) and is stopped cleanly before any new entry
/// stores a snapshot all the same: the tail is in no snapshot yet, so without one every later
/// start would replay it again.
fn a_clean_stop_after_a_tail_replay_stores_a_snapshot(backend: Backend) {
    let storage = Storage::new(backend);
    let start_rare = || {
        TestServer::spawn(
            &crate::source::rng_plans_dir(),
            &storage,
            &[
                ("PITBOSS_ADMIN_KEY", ADMIN_KEY),
                ("PITBOSS_SNAPSHOT_EVERY", "1000000"),
            ],
        )
    };
    let mut server = start_rare();
    let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
    let (s, b) = server.post(
        &op,
        "/v1/tables",
        json!({"table": "t1", "plan": "evolution-roulette@1", "mode": "live"}),
    );
    assert_eq!(s, 201, "{b}");
    server.terminate();
    let mut server = start_rare();
    assert!(server.metric("pitboss_start_replayed_entries") <= 1);
    let (s, b) = server.post(&op, "/v1/tables/t1/rounds", json!({}));
    assert_eq!(s, 201, "{b}");
    for n in 0..5 {
        let (s, b) = server.post(
            &op,
            "/v1/rounds/t1.1/bets",
            json!({"bets": [{"player": "p1", "bet": "straight", "numbers": [n], "stake_minor": 100}]}),
        );
        assert_eq!(s, 200, "{b}");
    }
    // A crash: the round and its bets are in no snapshot.
    server.kill();
    let mut server = start_rare();
    let tail = server.metric("pitboss_start_replayed_entries");
    assert!(
        tail > 5,
        "the start replayed the tail after the snapshot ({tail})"
    );
    let entries = server.metric("pitboss_log_entries");
    server.terminate();
    let server = start_rare();
    assert!(
        server.metric("pitboss_start_replayed_entries") <= 1,
        "a clean stop after a tail replay stored a snapshot"
    );
    assert_eq!(server.metric("pitboss_log_entries"), entries + 1);
}

#[test]
fn a_clean_stop_after_a_tail_replay_stores_a_snapshot_sqlite() {
    a_clean_stop_after_a_tail_replay_stores_a_snapshot(Backend::Sqlite);
}

#[test]
fn a_clean_stop_after_a_tail_replay_stores_a_snapshot_postgres() {
    a_clean_stop_after_a_tail_replay_stores_a_snapshot(Backend::Postgres);
}
