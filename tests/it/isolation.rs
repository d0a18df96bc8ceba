//! One operator cannot harm another (issue 12), end to end against SQLite and PostgreSQL:
//! requests the log's format cannot hold never fail anybody else's commands; refused attempts
//! on another operator's rounds stay out of that operator's history, and every answer to them
//! is the same whatever the round's state; quotas and throttling answer 429 with
//! `Retry-After` and the service answers normally afterwards; secrets at rest are the
//! owner's only, and stored RNG seeds are encrypted.

use std::time::Duration;

use serde_json::{json, Value};

use crate::server::{Backend, Storage, TestServer, ADMIN_KEY};

fn plans() -> std::path::PathBuf {
    crate::source::rng_plans_dir()
}

fn start(storage: &Storage, env: &[(&str, &str)]) -> TestServer {
    let mut all = vec![("PITBOSS_ADMIN_KEY", ADMIN_KEY)];
    all.extend_from_slice(env);
    TestServer::spawn(&plans(), storage, &all)
}

/// A raw request: status, the headers we look at, and the body as text.
struct Raw {
    status: u16,
    content_type: String,
    retry_after: Option<u64>,
    body: String,
}

fn raw(
    server: &TestServer,
    method: &str,
    key: Option<&str>,
    path: &str,
    body: Option<&str>,
    auth_scheme: &str,
) -> Raw {
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .new_agent();
    let url = server.url(path);
    let idem = format!("i-{:016x}", crate::server::rand_u64());
    let mut resp = match (method, body) {
        ("GET", _) => {
            let mut r = agent.get(&url);
            if let Some(k) = key {
                r = r.header("Authorization", &format!("{auth_scheme} {k}"));
            }
            r.call()
        }
        (_, b) => {
            let mut r = agent
                .post(&url)
                .header("Content-Type", "application/json")
                .header("Idempotency-Key", &idem);
            if let Some(k) = key {
                r = r.header("Authorization", &format!("{auth_scheme} {k}"));
            }
            r.send(b.unwrap_or(""))
        }
    }
    .expect("HTTP request");
    let h = |n: &str| {
        resp.headers()
            .get(n)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let content_type = h("content-type").unwrap_or_default();
    let retry_after = h("retry-after").and_then(|v| v.parse().ok());
    let body = resp
        .body_mut()
        .with_config()
        .limit(1 << 24)
        .read_to_string()
        .unwrap_or_default();
    Raw {
        status: resp.status().as_u16(),
        content_type,
        retry_after,
        body,
    }
}

fn json_of(r: &Raw) -> Value {
    serde_json::from_str(&r.body).unwrap_or(Value::Null)
}

fn open_table(server: &TestServer, op: &str, table: &str, mode: &str) {
    let (s, b) = server.post(
        op,
        "/v1/tables",
        json!({"table": table, "plan": "evolution-roulette@1", "mode": mode}),
    );
    assert_eq!(s, 201, "{b}");
}

fn open_round(server: &TestServer, op: &str, table: &str) -> String {
    let (s, b) = server.post(op, &format!("/v1/tables/{table}/rounds"), json!({}));
    assert_eq!(s, 201, "{b}");
    b["round"].as_str().expect("round id").to_string()
}

/// Every class of request whose content the log's entry format cannot hold as sent, from
/// operator B, while operator A bets: none of A's bets fails, each of B's is refused with a
/// 4xx, and the export verifies and replays.
fn poisoned_requests_never_fail_another_operators_bets(backend: Backend) {
    let storage = Storage::new(backend);
    let server = start(&storage, &[]);
    let a = server.create_key(ADMIN_KEY, "operator", Some("opA"));
    let b = server.create_key(ADMIN_KEY, "operator", Some("opB"));
    let auditor = server.create_key(ADMIN_KEY, "auditor", None);
    open_table(&server, &a, "ta", "live");
    open_table(&server, &b, "tb", "live");
    let round_a = open_round(&server, &a, "ta");
    let round_b = open_round(&server, &b, "tb");

    let long_id = "x".repeat(300);
    let big = format!(
        r#"{{"action": "bet", "pad": "{}"}}"#,
        "y".repeat(250 * 1024 - 40)
    );
    let poison: Vec<(String, String)> = vec![
        ("/v1/tables/nope/actions".into(), r#"{"action":"bet","x":0.5}"#.into()),
        (
            format!("/v1/rounds/{round_b}/bets"),
            r#"{"bets":[{"player":"p1","bet":"straight","numbers":[17],"stake_minor":9007199254740992}]}"#.into(),
        ),
        (
            format!("/v1/rounds/{round_b}/bets"),
            r#"{"bets":[{"player":"p1","bet":"straight","numbers":[17],"stake_minor":1000.0}]}"#.into(),
        ),
        (
            format!("/v1/rounds/{round_b}/bets"),
            r#"{"bets":[{"player":"p1","bet":"straight","numbers":[17],"stake_minor":100,"x":0.25}]}"#.into(),
        ),
        (format!("/v1/tables/{long_id}/actions"), r#"{"action":"fold"}"#.into()),
        (format!("/v1/rounds/{long_id}/bets"), r#"{"bets":[{"player":"p","bet":"red","stake_minor":100}]}"#.into()),
        (format!("/v1/rounds/{round_b}/events"), r#"{"type":"spin","number":1e3}"#.into()),
        (
            "/v1/tables".into(),
            format!(r#"{{"table":"{long_id}","plan":"evolution-roulette@1","mode":"live"}}"#),
        ),
        (format!("/v1/tables/{long_id}/actions"), big),
    ];

    let victim = std::thread::scope(|scope| {
        let victim = scope.spawn(|| {
            let mut failures = Vec::new();
            for i in 0..200 {
                let (s, body) = server.post(
                    &a,
                    &format!("/v1/rounds/{round_a}/bets"),
                    json!({"bets": [{"player": format!("p{}", i % 7), "bet": "straight", "numbers": [i % 37], "stake_minor": 100}]}),
                );
                if s != 200 || body["accepted"] != 1 {
                    failures.push((s, body));
                }
            }
            failures
        });
        let attacker = scope.spawn(|| {
            for round in 0..6 {
                for (path, body) in &poison {
                    let r = raw(&server, "POST", Some(&b), path, Some(body), "Bearer");
                    assert!(
                        (400..500).contains(&r.status) || r.status == 200,
                        "round {round}: {path}: {} {}",
                        r.status,
                        &r.body[..r.body.len().min(300)]
                    );
                    assert_ne!(r.status, 429, "the default limits never throttle this");
                }
            }
        });
        attacker.join().expect("attacker thread");
        victim.join().expect("victim thread")
    });
    assert!(
        victim.is_empty(),
        "{} of operator A's 200 bets failed: {:?}",
        victim.len(),
        &victim[..victim.len().min(3)]
    );
    let (_, _, m) = server.get("/healthz");
    assert!(m["log_entries"].as_u64().unwrap_or(0) > 200);

    // What B sent that the log cannot hold as sent is logged as its digest, and bounded.
    let (s, text) = server.get_text(Some(&auditor), "/v1/audit/export");
    assert_eq!(s, 200);
    let mut digests = 0;
    for line in text.lines().skip(1) {
        let v: Value = serde_json::from_str(line).expect("export line");
        assert!(
            line.len() < 8 * 1024,
            "an entry stays small: {}",
            &line[..300]
        );
        if v["ids"]["operator"] == "opB" && line.contains("\"unlogged\"") {
            digests += 1;
        }
    }
    assert!(
        digests >= 6,
        "refused requests recorded by digest: {digests}"
    );
    // Settle A's round and check the whole log offline.
    for ev in [
        json!({"type": "close_betting"}),
        json!({"type": "spin", "number": 17, "ball_against_rotation": true, "ball_revolutions": 4}),
    ] {
        let (s, body) = server.post(&a, &format!("/v1/rounds/{round_a}/events"), ev);
        assert_eq!(s, 200, "{body}");
    }
    crate::replay::exported_log_verifies_and_replays(&server, &auditor);
}

#[test]
fn poisoned_requests_never_fail_another_operators_bets_sqlite() {
    poisoned_requests_never_fail_another_operators_bets(Backend::Sqlite);
}

#[test]
fn poisoned_requests_never_fail_another_operators_bets_postgres() {
    poisoned_requests_never_fail_another_operators_bets(Backend::Postgres);
}

/// B's attempts on A's rounds and tables: never in A's recall, whether made before or after
/// A opened the round; every answer is the one an absent round gets, whatever the round's
/// mode and phase.
fn another_operators_attempts_stay_out_of_the_history_and_reveal_nothing(backend: Backend) {
    let storage = Storage::new(backend);
    let server = start(&storage, &[]);
    let a = server.create_key(ADMIN_KEY, "operator", Some("opA"));
    let b = server.create_key(ADMIN_KEY, "operator", Some("opB"));
    let auditor = server.create_key(ADMIN_KEY, "auditor", None);
    open_table(&server, &a, "ta", "live");
    open_table(&server, &a, "tr", "rng");

    let commands = |round: &str| -> Vec<(String, Value)> {
        vec![
            (
                format!("/v1/rounds/{round}/bets"),
                json!({"bets": [{"player": "p1", "bet": "red", "stake_minor": 100}]}),
            ),
            (
                format!("/v1/rounds/{round}/events"),
                json!({"type": "close_betting"}),
            ),
            (
                format!("/v1/rounds/{round}/events"),
                json!({"type": "draw"}),
            ),
            (
                format!("/v1/rounds/{round}/events"),
                json!({"type": "spin", "number": 3, "ball_against_rotation": true, "ball_revolutions": 4}),
            ),
            (
                format!("/v1/rounds/{round}/events"),
                json!({"type": "cards", "cards": [{"to": "player_1", "card": "9H"}]}),
            ),
            (
                format!("/v1/rounds/{round}/void"),
                json!({"reason": "test"}),
            ),
            (
                format!("/v1/rounds/{round}/decisions"),
                json!({"decisions": [{"player": "p1", "decision": "call"}]}),
            ),
        ]
    };
    // The answer to each command for a round that does not exist, with the id taken out.
    let answer = |round: &str, path: &str, body: &Value| -> (u16, String, String) {
        let r = raw(
            &server,
            "POST",
            Some(&b),
            path,
            Some(&body.to_string()),
            "Bearer",
        );
        let v = json_of(&r);
        (
            r.status,
            v["code"].as_str().unwrap_or_default().to_string(),
            v["detail"]
                .as_str()
                .unwrap_or_default()
                .replace(round, "ROUND"),
        )
    };
    // Ids are scoped to their operator (issue 17): A's rounds are `opA:ta.1`; B's bare name
    // `ta.1` is B's own scope's (`opB:ta.1`), which does not exist either.
    let absent: Vec<_> = commands("opA:zz.1")
        .iter()
        .map(|(p, body)| answer("opA:zz.1", p, body))
        .collect();
    assert!(
        absent
            .iter()
            .all(|(s, c, _)| *s == 404 && c == "round_not_found"),
        "{absent:?}"
    );
    let absent_bare: Vec<_> = commands("zz.1")
        .iter()
        .map(|(p, body)| answer("zz.1", p, body))
        .collect();
    assert!(
        absent_bare
            .iter()
            .all(|(s, c, _)| *s == 404 && c == "round_not_found"),
        "{absent_bare:?}"
    );

    // Before A opens them: B plants attempts on the ids A's next rounds will have.
    for round in ["opA:ta.1", "opA:tr.1"] {
        let before: Vec<_> = commands(round)
            .iter()
            .map(|(p, body)| answer(round, p, body))
            .collect();
        assert_eq!(before, absent, "{round} before it exists");
    }
    for round in ["ta.1", "tr.1"] {
        let before: Vec<_> = commands(round)
            .iter()
            .map(|(p, body)| answer(round, p, body))
            .collect();
        assert_eq!(before, absent_bare, "{round} (bare) before it exists");
    }
    let live = open_round(&server, &a, "ta");
    let rng = open_round(&server, &a, "tr");
    // While they are open (betting), after betting closed, and once settled.
    let (s, body) = server.post(
        &a,
        &format!("/v1/rounds/{live}/bets"),
        json!({"bets": [{"player": "p1", "bet": "red", "stake_minor": 100}]}),
    );
    assert_eq!(s, 200, "{body}");
    for round in [&live, &rng] {
        let open: Vec<_> = commands(round)
            .iter()
            .map(|(p, body)| answer(round, p, body))
            .collect();
        assert_eq!(open, absent, "{round} open");
    }
    let (s, body) = server.post(
        &a,
        &format!("/v1/rounds/{rng}/events"),
        json!({"type": "close_betting"}),
    );
    assert_eq!(s, 200, "{body}");
    let closed: Vec<_> = commands(&rng)
        .iter()
        .map(|(p, body)| answer(&rng, p, body))
        .collect();
    assert_eq!(closed, absent, "{rng} betting closed");
    let (s, body) = server.post(
        &a,
        &format!("/v1/rounds/{rng}/events"),
        json!({"type": "draw"}),
    );
    assert_eq!(s, 200, "{body}");
    let settled: Vec<_> = commands(&rng)
        .iter()
        .map(|(p, body)| answer(&rng, p, body))
        .collect();
    assert_eq!(settled, absent, "{rng} settled");
    // Bare names from B: B's own scope, where A's rounds are not.
    for round in [&live, &rng] {
        let bare = round.trim_start_matches("opA:");
        let open: Vec<_> = commands(bare)
            .iter()
            .map(|(p, body)| answer(bare, p, body))
            .collect();
        assert_eq!(open, absent_bare, "{bare} (bare) settled");
    }
    // Tables too: B's actions, rounds, shoe and closing of A's table answer as for none, by
    // A's table's id and by its bare name.
    for path in [
        "/v1/tables/opA:ta/rounds",
        "/v1/tables/opA:ta/close",
        "/v1/tables/opA:ta/shoe",
        "/v1/tables/opA:ta/actions",
        "/v1/tables/ta/rounds",
        "/v1/tables/ta/close",
        "/v1/tables/ta/shoe",
        "/v1/tables/ta/actions",
    ] {
        let r = raw(
            &server,
            "POST",
            Some(&b),
            path,
            Some(r#"{"action":"shuffle","reason":"x"}"#),
            "Bearer",
        );
        let r2 = raw(
            &server,
            "POST",
            Some(&b),
            &path.replace("ta/", "zz/"),
            Some(r#"{"action":"shuffle","reason":"x"}"#),
            "Bearer",
        );
        assert_eq!(
            (r.status, json_of(&r)["code"].clone()),
            (r2.status, json_of(&r2)["code"].clone()),
            "{path}"
        );
    }

    // A's recall of each round holds A's entries only.
    for round in [&live, &rng] {
        let (s, _, recall) = server.get_as(Some(&a), &format!("/v1/rounds/{round}/recall"));
        assert_eq!(s, 200, "{recall}");
        let entries = recall["entries"].as_array().expect("entries");
        assert!(!entries.is_empty());
        for e in entries {
            let text = e.to_string();
            assert!(
                !text.contains("opB"),
                "{round}: B's attempt in A's recall: {text}"
            );
        }
    }
    // B's attempts are in the log, under B, naming what B asked for in the payload only.
    let (s, text) = server.get_text(Some(&auditor), "/v1/audit/export");
    assert_eq!(s, 200);
    let mut b_entries = 0;
    for line in text.lines().skip(1) {
        let v: Value = serde_json::from_str(line).expect("line");
        // (The creation of B's key is logged under B too; it is not one of B's attempts.)
        if v["ids"]["operator"] == "opB" && v["kind"] != "api_key_created" {
            b_entries += 1;
            assert!(
                v["ids"].get("round").is_none() && v["ids"].get("table").is_none(),
                "{line}"
            );
            assert!(v["payload"]["requested"].is_object(), "{line}");
        }
    }
    assert!(b_entries > 20, "B's refusals are audited: {b_entries}");
    crate::replay::exported_log_verifies_and_replays(&server, &auditor);
}

#[test]
fn another_operators_attempts_stay_out_of_the_history_and_reveal_nothing_sqlite() {
    another_operators_attempts_stay_out_of_the_history_and_reveal_nothing(Backend::Sqlite);
}

#[test]
fn another_operators_attempts_stay_out_of_the_history_and_reveal_nothing_postgres() {
    another_operators_attempts_stay_out_of_the_history_and_reveal_nothing(Backend::Postgres);
}

/// A burst beyond a key's rate is answered 429 with `Retry-After`; after waiting, the key is
/// served normally. Failed sign-ins from one address are throttled while valid keys from it
/// keep working; the open-table, key and refusal-log quotas answer 429; `/metrics` counts it.
/// Opening a table named `t1` is refused: the operator has one.
/// Two operators' keys open a roulette table `t1` at the same time: each answer.
pub fn open_t1_at_once(server: &TestServer, keys: [&str; 2]) -> Vec<(u16, Value)> {
    std::thread::scope(|s| {
        let both: Vec<_> = keys
            .map(|k| {
                s.spawn(move || {
                    server.post(
                        k,
                        "/v1/tables",
                        json!({"table": "t1", "plan": "evolution-roulette@1", "mode": "live"}),
                    )
                })
            })
            .into_iter()
            .collect();
        both.into_iter().map(|h| h.join().expect("open")).collect()
    })
}

fn name_taken(server: &TestServer, key: &str) {
    let (s, body) = server.post(
        key,
        "/v1/tables",
        json!({"table": "t1", "plan": "evolution-roulette@1", "mode": "live"}),
    );
    assert_eq!(
        (s, body["code"].as_str()),
        (409, Some("table_exists")),
        "{body}"
    );
}

/// Table ids are scoped to their operator (issue 17): two operators name a table alike and
/// each gets its own, plays it by its bare name or its id, and never reaches or learns of the
/// other's; a name stays taken for its own operator only, across a restart and once closed.
fn operators_name_their_tables_alike(backend: Backend) {
    let storage = Storage::new(backend);
    let mut server = start(&storage, &[]);
    let a = server.create_key(ADMIN_KEY, "operator", Some("opA"));
    let b = server.create_key(ADMIN_KEY, "operator", Some("opB"));
    let auditor = server.create_key(ADMIN_KEY, "auditor", None);
    // Both open `t1` at once; neither is told the other's exists.
    let opened = open_t1_at_once(&server, [&a, &b]);
    assert_eq!(
        opened[0],
        (
            201,
            json!({"table": "opA:t1", "plan": "evolution-roulette@1", "mode": "live", "open": true})
        )
    );
    assert_eq!(opened[1].0, 201, "{:?}", opened[1]);
    assert_eq!(opened[1].1["table"], "opB:t1");
    // Each plays its own: A by bare names, B by the ids answered.
    let ra = open_round(&server, &a, "t1");
    let rb = open_round(&server, &b, "opB:t1");
    assert_eq!((ra.as_str(), rb.as_str()), ("opA:t1.1", "opB:t1.1"));
    let bet = |key: &str, round: &str, stake: i64| {
        let (s, body) = server.post(
            key,
            &format!("/v1/rounds/{round}/bets"),
            json!({"bets": [{"player": "p1", "bet": "straight", "numbers": [17], "stake_minor": stake}]}),
        );
        assert_eq!(s, 200, "{body}");
        assert_eq!(body["accepted"], 1, "{body}");
        body["results"][0]["bet"]
            .as_str()
            .expect("bet id")
            .to_string()
    };
    assert_eq!(bet(&a, "t1.1", 100), "opA:t1.1.1");
    assert_eq!(bet(&b, &rb, 200), "opB:t1.1.1");
    for (key, round) in [(&a, "t1.1"), (&b, "opB:t1.1")] {
        for event in [
            json!({"type": "close_betting"}),
            json!({"type": "spin", "number": 17, "ball_against_rotation": true, "ball_revolutions": 4}),
        ] {
            let (s, body) = server.post(key, &format!("/v1/rounds/{round}/events"), event);
            assert_eq!(s, 200, "{body}");
        }
    }
    // Each reads its own by either name, and never the other's.
    for (key, mine, theirs, stake) in [(&a, "opA", "opB", 100), (&b, "opB", "opA", 200)] {
        for id in ["t1.1".to_string(), format!("{mine}:t1.1")] {
            let (s, _, r) = server.get_as(Some(key), &format!("/v1/rounds/{id}"));
            assert_eq!(s, 200, "{r}");
            assert_eq!(r["round"], format!("{mine}:t1.1"), "{r}");
            assert_eq!(r["bets"][0]["stake_minor"], stake, "{r}");
            let (s, _, t) = server.get_as(Some(key), "/v1/tables/t1");
            assert_eq!((s, t["operator"].as_str()), (200, Some(mine)), "{t}");
        }
        for path in [
            format!("/v1/rounds/{theirs}:t1.1"),
            format!("/v1/rounds/{theirs}:t1.1/recall"),
            format!("/v1/tables/{theirs}:t1"),
            format!("/v1/tables/{theirs}:t1/rounds"),
        ] {
            let (s, _, body) = server.get_as(Some(key), &path);
            assert_eq!(s, 404, "{path}: {body}");
        }
        // Its own name is taken, for itself only.
        name_taken(&server, key);
    }
    // Each operator's audit listing by bare names gives its own entries only; by the other's
    // ids, nothing.
    for (key, mine, theirs) in [(&a, "opA", "opB"), (&b, "opB", "opA")] {
        for query in ["table=t1", "round=t1.1", "bet=t1.1.1"] {
            let (s, _, page) = server.get_as(Some(key), &format!("/v1/audit/entries?{query}"));
            assert_eq!(s, 200, "{page}");
            let entries = page["entries"].as_array().expect("entries");
            assert!(!entries.is_empty(), "{mine} {query}");
            for e in entries {
                let ids = &e["entry"]["ids"];
                assert_eq!(ids["operator"], mine, "{query}: {e}");
                assert!(
                    ids["table"].as_str().unwrap_or(mine).starts_with(mine),
                    "{query}: {e}"
                );
            }
            let scoped = query.replace('=', &format!("={theirs}:"));
            let (s, _, page) = server.get_as(Some(key), &format!("/v1/audit/entries?{scoped}"));
            assert_eq!(
                (s, page["entries"].as_array().map(Vec::len)),
                (200, Some(0)),
                "{scoped}"
            );
        }
    }
    // The auditor reads both by their ids; the log names each table's operator.
    for op in ["opA", "opB"] {
        let (s, _, t) = server.get_as(Some(&auditor), &format!("/v1/tables/{op}:t1"));
        assert_eq!((s, t["operator"].as_str()), (200, Some(op)), "{t}");
    }
    // Closed, restarted: the names still reach their own tables (from the store), and stay
    // taken for their own operator.
    let (s, body) = server.post(&a, "/v1/tables/t1/close", json!({"reason": "end"}));
    assert_eq!(s, 200, "{body}");
    assert_eq!(body["table"], "opA:t1", "{body}");
    server.terminate();
    server = start(&storage, &[]);
    let (s, _, t) = server.get_as(Some(&a), "/v1/tables/t1");
    assert_eq!(
        (s, t["table"].as_str(), t["open"].as_bool()),
        (200, Some("opA:t1"), Some(false)),
        "{t}"
    );
    let (s, _, r) = server.get_as(Some(&a), "/v1/rounds/t1.1/recall");
    assert_eq!(
        (s, r["entries"][0]["entry"]["ids"]["round"].as_str()),
        (200, Some("opA:t1.1")),
        "{r}"
    );
    name_taken(&server, &a);
    // The refused openings are in each operator's own table's history.
    for op in ["opA", "opB"] {
        let (s, _, refused) = server.get_as(
            Some(&auditor),
            &format!("/v1/audit/entries?kind=command_refused&table={op}:t1"),
        );
        assert_eq!(s, 200, "{refused}");
        let refused = refused["entries"].as_array().expect("entries");
        assert!(
            !refused.is_empty()
                && refused.iter().all(|e| e["entry"]["ids"]["operator"] == op
                    && e["entry"]["payload"]["refusal"]["code"] == "table_exists"),
            "{refused:?}"
        );
    }
    let (s, body) = server.post(&b, "/v1/tables/t1/rounds", json!({}));
    assert_eq!(
        (s, body["round"].as_str()),
        (201, Some("opB:t1.2")),
        "{body}"
    );
    crate::replay::exported_log_verifies_and_replays(&server, &auditor);
}

#[test]
fn operators_name_their_tables_alike_sqlite() {
    operators_name_their_tables_alike(Backend::Sqlite);
}

#[test]
fn operators_name_their_tables_alike_postgres() {
    operators_name_their_tables_alike(Backend::Postgres);
}

fn limits_answer_429_and_service_resumes(backend: Backend) {
    let storage = Storage::new(backend);
    let server = start(
        &storage,
        &[
            ("PITBOSS_LIMIT_KEY_RPS", "20"),
            ("PITBOSS_LIMIT_AUTH_FAILURES", "5"),
            ("PITBOSS_LIMIT_OPEN_TABLES", "2"),
            ("PITBOSS_LIMIT_KEYS", "2"),
            ("PITBOSS_LIMIT_REFUSAL_BYTES", "50"),
        ],
    );
    let a = server.create_key(ADMIN_KEY, "operator", Some("opA"));

    // Requests per second of one key.
    let mut throttled = None;
    for _ in 0..100 {
        let r = raw(&server, "GET", Some(&a), "/v1/tables/none", None, "Bearer");
        if r.status == 429 {
            throttled = Some(r);
            break;
        }
        assert_eq!(r.status, 404, "{}", r.body);
    }
    let r = throttled.expect("a burst of 100 requests at 20/s meets the limit");
    assert_eq!(r.content_type, "application/problem+json");
    assert_eq!(json_of(&r)["code"], "rate_limited");
    let wait = r.retry_after.expect("Retry-After");
    assert!((1..=2).contains(&wait), "{wait}");
    std::thread::sleep(Duration::from_secs(wait));
    let r = raw(&server, "GET", Some(&a), "/v1/tables/none", None, "bearer");
    assert_eq!(
        r.status, 404,
        "served again after Retry-After (lower-case scheme): {}",
        r.body
    );

    // Failed authentications from one address.
    let bad =
        "pb_0000000000000bad_0000000000000000000000000000000000000000000000000000000000000bad";
    let statuses: Vec<u16> = (0..8)
        .map(|_| raw(&server, "GET", Some(bad), "/v1/tables/none", None, "Bearer").status)
        .collect();
    assert_eq!(&statuses[..5], &[401; 5], "{statuses:?}");
    assert!(statuses[5..].iter().all(|s| *s == 429), "{statuses:?}");
    std::thread::sleep(Duration::from_millis(1100));
    let r = raw(&server, "GET", Some(&a), "/v1/tables/none", None, "Bearer");
    assert_eq!(
        r.status, 404,
        "a valid key from the same address still works: {}",
        r.body
    );

    // Open tables of one operator.
    open_table(&server, &a, "q1", "live");
    std::thread::sleep(Duration::from_millis(200));
    open_table(&server, &a, "q2", "live");
    std::thread::sleep(Duration::from_millis(200));
    let r = raw(
        &server,
        "POST",
        Some(&a),
        "/v1/tables",
        Some(r#"{"table":"q3","plan":"evolution-roulette@1","mode":"live"}"#),
        "Bearer",
    );
    assert_eq!(r.status, 429, "{}", r.body);
    assert_eq!(json_of(&r)["code"], "quota_exceeded");
    assert!(r.retry_after.is_some());
    let (s, body) = server.post(&a, "/v1/tables/q1/close", json!({"reason": "done"}));
    assert_eq!(s, 200, "{body}");
    std::thread::sleep(Duration::from_millis(200));
    open_table(&server, &a, "q3", "live");

    // Keys of one operator (opA holds one; the limit is two).
    server.create_key(ADMIN_KEY, "operator", Some("opA"));
    let r = raw(
        &server,
        "POST",
        Some(ADMIN_KEY),
        "/v1/admin/keys",
        Some(r#"{"role":"operator","operator":"opA"}"#),
        "Bearer",
    );
    assert_eq!(r.status, 429, "{}", r.body);
    assert_eq!(json_of(&r)["code"], "quota_exceeded");

    // The refusal budget: 50 bytes a second, a burst of 3000 bytes.
    std::thread::sleep(Duration::from_millis(1100));
    let size_before = server.get("/healthz").2["log_entries"]
        .as_u64()
        .expect("size");
    let mut budget_hit = false;
    for _ in 0..60 {
        std::thread::sleep(Duration::from_millis(60));
        let r = raw(
            &server,
            "POST",
            Some(&a),
            "/v1/tables/none/rounds",
            Some("{}"),
            "Bearer",
        );
        if r.status == 429 && json_of(&r)["code"] == "refusal_budget_exceeded" {
            assert!(r.retry_after.is_some());
            budget_hit = true;
            break;
        }
        assert!(matches!(r.status, 404 | 429), "{} {}", r.status, r.body);
    }
    assert!(budget_hit, "the refusal budget is met");
    let size_after = server.get("/healthz").2["log_entries"]
        .as_u64()
        .expect("size");
    assert!(
        size_after - size_before < 40,
        "{size_before} → {size_after}"
    );

    for limit in [
        "key_requests_per_s",
        "source_auth_failures_per_min",
        "operator_open_tables",
        "operator_keys",
        "operator_refusal_log_bytes_per_s",
    ] {
        assert!(
            server.metric(&format!("pitboss_throttled_total{{limit=\"{limit}\"}}")) >= 1,
            "{limit}"
        );
    }
    assert!(server.metric("pitboss_refusals_unlogged_total") >= 1);
}

#[test]
fn limits_answer_429_and_service_resumes_sqlite() {
    limits_answer_429_and_service_resumes(Backend::Sqlite);
}

#[test]
fn limits_answer_429_and_service_resumes_postgres() {
    limits_answer_429_and_service_resumes(Backend::Postgres);
}

#[cfg(unix)]
fn mode(p: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .permissions()
        .mode()
        & 0o777
}

/// The data directory is the owner's only, its files too; an open RNG round's seed is stored
/// encrypted (the stored bytes never contain it), and the seed revealed at settlement hashes
/// to the commitment.
#[cfg(unix)]
fn secrets_at_rest_are_the_owners_only(backend: Backend) {
    use diesel::prelude::*;
    use sha2::Digest;
    let storage = Storage::new(backend);
    let data = storage.data_dir().join("data");
    // A directory an operator created with a permissive mode is tightened at start.
    std::fs::create_dir(&data).expect("mkdir");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let server = TestServer::spawn_in(
        &plans(),
        &data,
        storage.pg.as_ref().map(|p| p.url.as_str()),
        &[("PITBOSS_ADMIN_KEY", ADMIN_KEY)],
    );
    let a = server.create_key(ADMIN_KEY, "operator", Some("opA"));
    open_table(&server, &a, "tr", "rng");
    let round = open_round(&server, &a, "tr");
    let (s, body) = server.post(
        &a,
        &format!("/v1/rounds/{round}/bets"),
        json!({"bets": [{"player": "p1", "bet": "red", "stake_minor": 100}]}),
    );
    assert_eq!(s, 200, "{body}");

    assert_eq!(mode(&data), 0o700, "the data directory");
    for f in ["signing-key.pem", "seed-key"] {
        assert_eq!(mode(&data.join(f)), 0o600, "{f}");
    }
    if backend == Backend::Sqlite {
        for f in ["pitboss.sqlite", "pitboss.sqlite-wal", "pitboss.sqlite-shm"] {
            let p = data.join(f);
            if p.exists() || f == "pitboss.sqlite" {
                assert_eq!(mode(&p), 0o600, "{f}");
            }
        }
    }

    // The stored seed of the open round, read straight from the database.
    let url = match &storage.pg {
        Some(pg) => pitboss::store::DatabaseUrl::Postgres(pg.url.clone()),
        None => pitboss::store::DatabaseUrl::Sqlite(
            data.join("pitboss.sqlite").to_string_lossy().into_owned(),
        ),
    };
    let stored: Vec<u8> = {
        let mut conn = pitboss::store::connect(&url).expect("connect");
        pitboss::store::schema::rng_seeds::table
            .filter(pitboss::store::schema::rng_seeds::round_id.eq(&round))
            .select(pitboss::store::schema::rng_seeds::seed)
            .first(&mut conn)
            .expect("the open round's seed is stored")
    };
    for ev in [json!({"type": "close_betting"}), json!({"type": "draw"})] {
        let (s, body) = server.post(&a, &format!("/v1/rounds/{round}/events"), ev);
        assert_eq!(s, 200, "{body}");
        if let Some(seed) = body["rng_seed"].as_str() {
            let seed: Vec<u8> = (0..seed.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&seed[i..i + 2], 16).expect("hex"))
                .collect();
            assert_eq!(seed.len(), 32);
            assert!(
                !stored.windows(32).any(|w| w == &seed[..]),
                "the stored seed is not in the clear"
            );
            let (_, _, r) = server.get_as(Some(&a), &format!("/v1/rounds/{round}"));
            assert_eq!(
                r["rng_commitment"].as_str().expect("commitment"),
                pitboss::plan::canonical::hex(&sha2::Sha256::digest(&seed))
            );
            return;
        }
    }
    panic!("the draw revealed no seed");
}

#[cfg(unix)]
#[test]
fn secrets_at_rest_are_the_owners_only_sqlite() {
    secrets_at_rest_are_the_owners_only(Backend::Sqlite);
}

#[cfg(unix)]
#[test]
fn secrets_at_rest_are_the_owners_only_postgres() {
    secrets_at_rest_are_the_owners_only(Backend::Postgres);
}

/// Small HTTP points: an over-long request target gets a problem document (414), an
/// over-long body too (413), and both are in the OpenAPI description.
#[test]
fn over_long_targets_and_bodies_get_problem_documents() {
    let storage = Storage::new(Backend::Sqlite);
    let server = start(&storage, &[]);
    let a = server.create_key(ADMIN_KEY, "operator", Some("opA"));
    let path = format!("/v1/tables/{}", "t".repeat(10 * 1024));
    let r = raw(&server, "GET", Some(&a), &path, None, "Bearer");
    assert_eq!(r.status, 414, "{}", r.body);
    assert_eq!(r.content_type, "application/problem+json");
    assert_eq!(json_of(&r)["code"], "uri_too_long");
    let body = format!(r#"{{"bets": [], "pad": "{}"}}"#, "z".repeat(300 * 1024));
    let r = raw(
        &server,
        "POST",
        Some(&a),
        "/v1/rounds/t.1/bets",
        Some(&body),
        "Bearer",
    );
    assert_eq!(r.status, 413, "{}", &r.body[..r.body.len().min(200)]);
    assert_eq!(r.content_type, "application/problem+json");
    assert_eq!(json_of(&r)["code"], "payload_too_large");
    let doc: Value =
        serde_json::from_str(pitboss::api::openapi::openapi_json_text()).expect("json");
    let bets = &doc["paths"]["/v1/rounds/{round}/bets"]["post"]["responses"];
    for code in ["413", "414", "429"] {
        assert!(bets[code].is_object(), "{code} documented");
    }
    assert!(bets["429"]["headers"]["Retry-After"].is_object());
}
