//! Several nodes on one PostgreSQL (issue 17): every node started with `--node-url` accepts
//! any request; the one that holds the log's lease writes it, the others forward to it, and
//! one of them takes the log over when the writer dies (SIGKILL) or stops renewing its lease
//! (SIGSTOP). Clients send bets at the same tables through every node, each request retried
//! with its Idempotency-Key, on any node, while the answer is `503` or the connection fails.
//!
//! Checked each time: every request got a definitive answer; each round holds exactly the
//! acknowledged bets (none lost, none twice); every request sent again with its key gets its
//! first answer and writes nothing; the log, exported through a standby, verifies offline and
//! replays. A writer whose lease was taken over appends nothing (the SIGSTOP test sends it a
//! bet once it runs again) and stops.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::server::{rand_u64, Backend, Storage, TestServer, ADMIN_KEY};

/// A node on `storage` that waits as a standby when another node writes the log.
fn node(storage: &Storage) -> TestServer {
    TestServer::spawn(
        &crate::source::rng_plans_dir(),
        storage,
        &[
            ("PITBOSS_ADMIN_KEY", ADMIN_KEY),
            ("PITBOSS_NODE_URL", "auto"),
        ],
    )
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .new_agent()
}

/// One request as a client keeps it: sent again with the same key, it must get `answer`.
#[derive(Debug, Clone)]
struct Sent {
    key: String,
    path: String,
    body: String,
    answer: (u16, Value),
    /// Attempts that got a 503 or no answer before the definitive one.
    retries: u32,
}

/// One attempt: the answer, or `None` when the connection failed.
fn attempt(base: &str, op: &str, key: &str, path: &str, body: &str) -> Option<(u16, Value)> {
    let mut resp = agent()
        .post(&format!("{base}{path}"))
        .header("Content-Type", "application/json")
        .header("Authorization", &format!("Bearer {op}"))
        .header("Idempotency-Key", key)
        .send(body)
        .ok()?;
    let status = resp.status().as_u16();
    let ctype = crate::server::content_type(&resp);
    let bytes = resp.body_mut().read_to_vec().ok()?;
    crate::spec::check_reply("POST", path, status, &ctype, &bytes);
    Some((
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    ))
}

/// Sends a command with a fresh key to `bases[first]`, retrying with the same key on the next
/// node while the answer is `503` or the connection fails; panics if no definitive answer
/// comes within 20 s.
fn send(bases: &[String], first: usize, op: &str, path: &str, body: Value) -> Sent {
    let key = format!("n-{:016x}", rand_u64());
    let body = body.to_string();
    let started = Instant::now();
    let mut retries = 0;
    let mut i = first;
    loop {
        match attempt(&bases[i % bases.len()], op, &key, path, &body) {
            Some((503, _)) | None => {
                retries += 1;
                assert!(
                    started.elapsed() < Duration::from_secs(20),
                    "{path}: no definitive answer within 20 s ({retries} attempts)"
                );
                i += 1;
                std::thread::sleep(Duration::from_millis(50));
            }
            Some(answer) => {
                return Sent {
                    key,
                    path: path.to_string(),
                    body,
                    answer,
                    retries,
                }
            }
        }
    }
}

/// What one client did: every request, and the bets acknowledged in each round.
#[derive(Default)]
struct Played {
    sent: Vec<Sent>,
    rounds: BTreeMap<String, BTreeSet<String>>,
    /// When each definitive answer came (for the takeover's gap).
    answered_at: Vec<Instant>,
}

/// Plays RNG roulette rounds at `table` until `stop` is set or `rounds` rounds are done: each
/// round is opened, closed and drawn through one node (the next one each round), and bet on
/// through every node at once (three one-bet requests per node).
fn play(bases: &[String], op: &str, table: &str, rounds: usize, stop: &AtomicBool) -> Played {
    let mut p = Played::default();
    let record = |p: &mut Played, s: Sent| -> (u16, Value) {
        p.answered_at.push(Instant::now());
        let answer = s.answer.clone();
        p.sent.push(s);
        answer
    };
    for n in 0..rounds {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let dealer = n % bases.len();
        let s = send(
            bases,
            dealer,
            op,
            &format!("/v1/tables/{table}/rounds"),
            json!({}),
        );
        let (status, body) = record(&mut p, s);
        assert_eq!(status, 201, "open round at {table}: {body}");
        let round = body["round"].as_str().expect("round id").to_string();
        let bettors: Vec<Vec<Sent>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..bases.len())
                .map(|first| {
                    let round = &round;
                    scope.spawn(move || {
                        (0..3)
                            .map(|b| {
                                let bet = json!({"bets": [{"player": format!("p{first}{b}"),
                                    "bet": "straight", "numbers": [(n * 7 + first * 3 + b) % 37],
                                    "stake_minor": 100}]});
                                send(bases, first, op, &format!("/v1/rounds/{round}/bets"), bet)
                            })
                            .collect()
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("bettor"))
                .collect()
        });
        let mut acked = BTreeSet::new();
        for s in bettors.into_iter().flatten() {
            let (status, body) = record(&mut p, s);
            assert_eq!(status, 200, "bet in {round}: {body}");
            for r in body["results"].as_array().expect("results") {
                assert_eq!(r["status"], "accepted", "{body}");
                let id = r["bet"].as_str().expect("bet id").to_string();
                assert!(acked.insert(id), "a bet id acknowledged twice: {body}");
            }
        }
        p.rounds.insert(round.clone(), acked);
        for event in ["close_betting", "draw"] {
            let s = send(
                bases,
                dealer + 1,
                op,
                &format!("/v1/rounds/{round}/events"),
                json!({"type": event}),
            );
            let (status, body) = record(&mut p, s);
            assert_eq!(status, 200, "{event} in {round}: {body}");
        }
    }
    p
}

/// A client thread per table, each [`play`]ing there through `bases`.
fn play_at_every_table(
    bases: &[String],
    op: &str,
    tables: &[String],
    rounds: usize,
    stop: &Arc<AtomicBool>,
) -> Vec<std::thread::JoinHandle<Played>> {
    tables
        .iter()
        .map(|table| {
            let (bases, op, stop, table) =
                (bases.to_vec(), op.to_string(), stop.clone(), table.clone());
            std::thread::spawn(move || play(&bases, &op, &table, rounds, &stop))
        })
        .collect()
}

/// What each client thread played.
fn joined(handles: Vec<std::thread::JoinHandle<Played>>) -> Vec<Played> {
    handles
        .into_iter()
        .map(|h| h.join().expect("client"))
        .collect()
}

/// Entries in the log not counting the snapshots the writer stored, read from the writer.
fn log_size(writer: &TestServer) -> u64 {
    let (s, text) = writer.get_text(None, "/metrics");
    assert_eq!(s, 200);
    crate::server::metric_in(&text, "pitboss_log_entries")
        - crate::server::metric_in(&text, "pitboss_snapshots_total")
}

/// Each round read through `reader` holds exactly the acknowledged bets; every request sent
/// again with its key gets its first answer and the log does not grow.
fn check_played(reader: &TestServer, writer: &TestServer, op: &str, played: &[Played]) {
    check_played_sized(reader, op, played, &|| log_size(writer));
}

/// [`check_played`] with the log's size (not counting snapshots) read by `size`.
fn check_played_sized(reader: &TestServer, op: &str, played: &[Played], size: &dyn Fn() -> u64) {
    let bases = [reader.base.clone()];
    let mut bets = 0;
    for p in played {
        for (round, acked) in &p.rounds {
            let (s, _, r) = reader.get_as(Some(op), &format!("/v1/rounds/{round}"));
            assert_eq!(s, 200, "{r}");
            let stored: Vec<String> = r["bets"]
                .as_array()
                .expect("bets")
                .iter()
                .map(|b| b["bet"].as_str().expect("bet").to_string())
                .collect();
            let unique: BTreeSet<String> = stored.iter().cloned().collect();
            assert_eq!(unique.len(), stored.len(), "a bet twice in {round}: {r}");
            assert_eq!(&unique, acked, "round {round} ≠ its acknowledged bets");
            bets += acked.len();
        }
    }
    assert!(bets > 0, "bets were acknowledged");
    let before = size();
    for p in played {
        for s in &p.sent {
            let again = attempt(&bases[0], op, &s.key, &s.path, &s.body).expect("an answer");
            assert_eq!(again, s.answer, "{} sent again with its key", s.path);
        }
    }
    assert_eq!(size(), before, "a request sent again wrote to the log");
}

/// The first node on `storage` (it takes the lease and writes), an operator's and an
/// auditor's key, and `tables` RNG roulette tables opened through it.
fn first_node(storage: &Storage, tables: usize) -> (TestServer, String, String, Vec<String>) {
    let a = node(storage);
    let op = a.create_key(ADMIN_KEY, "operator", Some("op1"));
    let auditor = a.create_key(ADMIN_KEY, "auditor", None);
    let tables = open_tables(&a, &op, tables);
    (a, op, auditor, tables)
}

/// Opens `n` RNG roulette tables through `server`.
fn open_tables(server: &TestServer, op: &str, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            let table = format!("t{i}");
            let (s, b) = server.post(
                op,
                "/v1/tables",
                json!({"table": table, "plan": "synot-roulette@1", "mode": "rng"}),
            );
            assert_eq!(s, 201, "{b}");
            table
        })
        .collect()
}

/// Whether `/readyz` of `node` says `200` within `within`.
fn ready_within(node: &TestServer, within: Duration) -> bool {
    let started = Instant::now();
    while started.elapsed() < within {
        if agent()
            .get(&node.url("/readyz"))
            .call()
            .is_ok_and(|r| r.status().as_u16() == 200)
        {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// The lease's fencing token: how many times a node took the log's lease.
fn lease_token(storage: &Storage) -> i64 {
    use diesel::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct Token {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        token: i64,
    }
    let url = pitboss::store::DatabaseUrl::Postgres(storage.pg.as_ref().expect("pg").url.clone());
    let mut conn = pitboss::store::connect(&url).expect("connect");
    let rows: Vec<Token> = diesel::sql_query("SELECT token FROM writer_lease")
        .load(&mut conn)
        .expect("the lease");
    rows[0].token
}

/// The node among `nodes` that says it writes the log, and how long it took to say so.
fn wait_for_writer(nodes: &[&TestServer], within: Duration) -> (usize, Duration) {
    let started = Instant::now();
    while started.elapsed() < within {
        for (i, n) in nodes.iter().enumerate() {
            if let Ok(mut r) = agent().get(&n.url("/healthz")).call() {
                let body: Value = r.body_mut().read_json().unwrap_or(Value::Null);
                if body["status"] == "ok" {
                    return (i, started.elapsed());
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("no node took the log over within {within:?}");
}

#[test]
fn three_nodes_take_bets_at_the_same_tables_through_every_node_postgres() {
    let storage = Storage::new(Backend::Postgres);
    let (a, op, auditor, tables) = first_node(&storage, 2);
    let mut b = node(&storage);
    let mut c = node(&storage);
    b.skip_state_check();
    c.skip_state_check();

    // The standbys say what they are, and forward with the writer's address.
    for n in [&b, &c] {
        let (s, _, h) = n.get("/healthz");
        assert_eq!((s, h["status"].as_str()), (200, Some("standby")), "{h}");
        assert!(
            ready_within(n, Duration::from_secs(5)),
            "a standby whose writer is ready is ready"
        );
        assert_eq!(n.metric("pitboss_node_writer"), 0);
        let r = agent().get(&n.url("/v1/plans")).call().expect("plans");
        assert_eq!(r.status().as_u16(), 200);
        assert_eq!(
            r.headers()
                .get("pitboss-writer")
                .and_then(|v| v.to_str().ok()),
            Some(a.base.as_str()),
            "a forwarded answer names the writer"
        );
    }
    assert_eq!(a.metric("pitboss_node_writer"), 1);

    // Both tables at once, each round bet on through all three nodes at once.
    let bases = vec![a.base.clone(), b.base.clone(), c.base.clone()];
    let stop = Arc::new(AtomicBool::new(false));
    let handles = play_at_every_table(&bases, &op, &tables, 4, &stop);
    let played = joined(handles);
    let retried: u32 = played.iter().flat_map(|p| &p.sent).map(|s| s.retries).sum();
    assert_eq!(
        retried, 0,
        "no request needed a retry while every node was up"
    );
    check_played(&b, &a, &op, &played);
    // The export streams through a standby; it verifies and replays.
    crate::replay::exported_log_verifies_and_replays(&c, &auditor);
    let forwarded = b.metric("pitboss_standby_forwarded_total{outcome=\"answered\"}");
    assert!(forwarded > 0, "the standby forwarded");
    assert_eq!(lease_token(&storage), 1, "the first node wrote throughout");
    b.kill();
    c.kill();
}

#[test]
fn the_writer_killed_under_load_is_taken_over_within_5_s_postgres() {
    let storage = Storage::new(Backend::Postgres);
    let (mut a, op, auditor, tables) = first_node(&storage, 2);
    let mut b = node(&storage);
    let mut c = node(&storage);
    a.skip_state_check();

    let bases = vec![a.base.clone(), b.base.clone(), c.base.clone()];
    let stop = Arc::new(AtomicBool::new(false));
    let handles = play_at_every_table(&bases, &op, &tables, 10_000, &stop);
    std::thread::sleep(Duration::from_millis(1500));
    let killed_at = Instant::now();
    a.kill(); // SIGKILL: no chance to answer, flush or give the lease back.
    let (writer, took) = wait_for_writer(&[&b, &c], Duration::from_secs(10));
    eprintln!(
        "nodes: node {} took the log over {took:?} after the SIGKILL",
        writer + 1
    );
    assert!(took <= Duration::from_secs(5), "takeover took {took:?}");
    // Load goes on through the new writer and the other standby.
    std::thread::sleep(Duration::from_millis(2000));
    stop.store(true, Ordering::SeqCst);
    let played = joined(handles);
    let after_kill = played
        .iter()
        .flat_map(|p| &p.answered_at)
        .filter(|t| **t > killed_at)
        .count();
    let retried = played
        .iter()
        .flat_map(|p| &p.sent)
        .filter(|s| s.retries > 0)
        .count();
    eprintln!("nodes: {after_kill} requests answered after the kill, {retried} needed a retry");
    assert!(after_kill > 0, "requests were answered after the kill");
    let writer_is_b = writer == 0;
    let (writer, other) = if writer_is_b { (&b, &c) } else { (&c, &b) };
    check_played(other, writer, &op, &played);
    crate::replay::exported_log_verifies_and_replays(other, &auditor);
    assert_eq!(lease_token(&storage), 2, "exactly one takeover");
    // The node that was killed comes back as a standby of the new writer.
    let mut back = node(&storage);
    back.skip_state_check();
    let (_, _, h) = back.get("/healthz");
    assert_eq!(h["status"], "standby", "{h}");
    back.kill();
    // The writer's log is checked (snapshot + tail) when it is dropped; the other is not.
    let other = if writer_is_b { &mut c } else { &mut b };
    other.skip_state_check();
    other.kill();
}

/// A writer frozen past its lease (SIGSTOP) is replaced; once it runs again it appends nothing
/// (its batches fail the fencing token) and stops with exit code 75.
#[test]
fn a_writer_that_lost_its_lease_appends_nothing_and_stops_postgres() {
    let storage = Storage::new(Backend::Postgres);
    let (mut a, op, auditor, tables) = first_node(&storage, 1);
    let b = node(&storage);
    a.skip_state_check();
    let bases = vec![b.base.clone()];
    let never = AtomicBool::new(false);
    let mut played = vec![play(&bases, &op, &tables[0], 1, &never)];

    assert!(
        ready_within(&b, Duration::from_secs(5)),
        "the standby is ready"
    );
    a.signal("STOP");
    // The writer answers nothing: the standby stops saying it is ready before it takes over.
    let started = Instant::now();
    let mut unready = false;
    while started.elapsed() < Duration::from_secs(10) && !unready {
        let (s, _, h) = b.get("/readyz");
        if h["status"] == "ready" {
            break; // already the writer
        }
        unready = s == 503;
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(unready, "the standby said 503 while its writer was frozen");
    wait_for_writer(&[&b], Duration::from_secs(10));
    let took = started.elapsed();
    eprintln!("nodes: the standby took the log of the stopped writer over after {took:?}");
    assert!(
        took <= Duration::from_secs(5),
        "takeover took {took:?} with a 3 s lease"
    );
    played.push(play(&bases, &op, &tables[0], 1, &never));
    let size = log_size(&b);

    // The stale writer runs again and is sent a bet on its old idea of the table.
    a.signal("CONT");
    let round = played[1].rounds.keys().next().expect("a round").clone();
    // It serves nothing from its memory either: its lease may have run out (it has).
    let read = agent()
        .get(&a.url(&format!("/v1/tables/{}", tables[0])))
        .header("Authorization", &format!("Bearer {op}"))
        .call();
    if let Ok(mut r) = read {
        let status = r.status().as_u16();
        let body = r.body_mut().read_to_string().unwrap_or_default();
        assert_eq!(status, 503, "the stale writer served a read: {body}");
        assert!(body.contains("lease"), "{body}");
    }
    let stale = attempt(
        &a.base,
        &op,
        "stale-1",
        &format!("/v1/tables/{}/rounds", tables[0]),
        "{}",
    );
    assert!(
        !matches!(stale, Some((s, _)) if s < 300),
        "the stale writer acknowledged a command: {stale:?}"
    );
    assert_eq!(
        a.wait_exit(Duration::from_secs(10)),
        Some(Some(75)),
        "it stops"
    );
    assert_eq!(log_size(&b), size, "the stale writer appended nothing");
    let (s, _, r) = b.get_as(Some(&op), &format!("/v1/rounds/{round}"));
    assert_eq!(s, 200, "{r}");
    check_played(&b, &b, &op, &played);
    crate::replay::exported_log_verifies_and_replays(&b, &auditor);
    assert_eq!(lease_token(&storage), 2, "exactly one takeover");
}

/// A node given another signing key (a fresh data directory generates one) refuses to start,
/// as a writer or a standby, before it takes the lease: it would sign the log's next
/// checkpoints with a key no auditor of this log holds.
#[test]
fn a_node_with_another_signing_key_refuses_to_start_postgres() {
    let storage = Storage::new(Backend::Postgres);
    let a = node(&storage);
    let op = a.create_key(ADMIN_KEY, "operator", Some("op1"));
    open_tables(&a, &op, 1);
    let (s, _, b) = a.post_raw(Some(ADMIN_KEY), None, "/v1/audit/checkpoint", "");
    assert_eq!(s, 200, "a checkpoint is stored: {b}");
    let other = tempfile::tempdir().expect("temp dir");
    let pg = storage.pg.as_ref().expect("pg");
    let name = pg.url.rsplit('/').next().unwrap_or("pg");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pitboss"))
        .arg("--plans")
        .arg(crate::source::rng_plans_dir())
        .args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--node-url",
            "auto",
            "--data-dir",
        ])
        .arg(other.path())
        .args(["--database-url", &pg.url])
        .args(["--origin", &format!("pitboss.test/{name}")])
        .env_remove("DATABASE_URL")
        .env("PITBOSS_RTP_ROUNDS", "0")
        .output()
        .expect("run pitboss serve");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("not this log's signing key"),
        "the refusal says why: {err}"
    );
    assert_eq!(lease_token(&storage), 1, "it never took the lease");
    let (_, _, h) = a.get("/healthz");
    assert_eq!(h["status"], "ok", "the writer goes on: {h}");
}

/// Three nodes started at the same instant on a new database: the migrations race (a node
/// that loses one tries again), one node takes the lease, the other two stand by.
#[test]
fn three_nodes_started_at_once_on_a_new_database_postgres() {
    let storage = Arc::new(Storage::new(Backend::Postgres));
    let handles: Vec<_> = (0..3)
        .map(|_| {
            let storage = storage.clone();
            std::thread::spawn(move || {
                let mut n = node(&storage);
                n.skip_state_check();
                n
            })
        })
        .collect();
    let nodes: Vec<TestServer> = handles
        .into_iter()
        .map(|h| h.join().expect("a node starts"))
        .collect();
    let statuses: Vec<String> = nodes
        .iter()
        .map(|n| {
            let (s, _, h) = n.get("/healthz");
            assert_eq!(s, 200, "{h}");
            h["status"].as_str().expect("status").to_string()
        })
        .collect();
    let writers = statuses.iter().filter(|s| *s == "ok").count();
    let standbys = statuses.iter().filter(|s| *s == "standby").count();
    assert_eq!((writers, standbys), (1, 2), "{statuses:?}");
    assert_eq!(lease_token(&storage), 1);
    // Every node takes a command.
    let op = nodes[0].create_key(ADMIN_KEY, "operator", Some("op1"));
    for (i, n) in nodes.iter().enumerate() {
        let (s, b) = n.post(
            &op,
            "/v1/tables",
            json!({"table": format!("t{i}"), "plan": "synot-roulette@1", "mode": "rng"}),
        );
        assert_eq!(s, 201, "through node {i}: {b}");
    }
}

/// A GET as `key` through `node`: status, body, and the `Pitboss-Writer` header (set when a
/// standby passed the request on to the writer).
fn read(node: &TestServer, key: &str, path: &str) -> (u16, String, Option<String>) {
    let mut resp = agent()
        .get(&node.url(path))
        .header("Authorization", &format!("Bearer {key}"))
        .call()
        .expect("an answer");
    let writer = resp
        .headers()
        .get("pitboss-writer")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let status = resp.status().as_u16();
    let body = resp.body_mut().read_to_string().expect("body");
    (status, body, writer)
}

/// `node` answers `path` as `want` itself (not passed on: no `Pitboss-Writer`) within 3 s (a
/// node that does not write the log reads its size every 200 ms).
fn answers_here_as(node: &TestServer, key: &str, path: &str, want: &str) {
    let started = Instant::now();
    loop {
        let (s, got, by) = read(node, key, path);
        assert_eq!(by, None, "{path} was passed on by {}", node.base);
        if (s, got.as_str()) == (200, want) {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{path} on {}: {s} {got}\nwanted: {want}",
            node.base
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The audit log's reads a standby serves itself, from the store.
fn audit_reads(size: u64) -> Vec<String> {
    vec![
        "/v1/audit/entries?limit=10000".to_string(),
        "/v1/audit/entries?since=3&limit=5&kind=bet_accepted".to_string(),
        "/v1/audit/checkpoint".to_string(),
        format!("/v1/audit/proof/1?size={size}"),
        format!("/v1/audit/consistency?from=1&to={size}"),
        format!(
            "/v1/audit/daily-summary?date={}",
            chrono::Utc::now().format("%Y-%m-%d")
        ),
    ]
}

/// Readers on any node (issue 17, item 3): a standby answers the audit log's reads itself,
/// from the store, exactly as the writer does (no `Pitboss-Writer`: not forwarded), follows
/// the key ring's revocations within about a second, and keeps answering them while the
/// writer is frozen; what needs the writer (a proof without a size, signing a checkpoint)
/// is passed on to it.
#[test]
fn a_standby_serves_the_audit_log_from_the_store_postgres() {
    let storage = Storage::new(Backend::Postgres);
    let (mut a, op, auditor, tables) = first_node(&storage, 1);
    let b = node(&storage);
    a.skip_state_check();
    let never = AtomicBool::new(false);
    play(&[a.base.clone()], &op, &tables[0], 2, &never);
    let (s, signed) = a.post(&auditor, "/v1/audit/checkpoint", json!({}));
    assert_eq!(s, 200, "{signed}");
    let size = signed["tree_size"].as_u64().expect("tree_size");
    assert!(size > 5, "{signed}");

    // The standby reads the log's size every 200 ms: within a second it answers as the writer.
    for path in audit_reads(size) {
        let (ws, want, by) = read(&a, &auditor, &path);
        assert_eq!((ws, by), (200, None), "{path} on the writer: {want}");
        answers_here_as(&b, &auditor, &path, &want);
    }
    let (s, text) = b.get_text(None, "/metrics");
    assert_eq!(s, 200);
    assert!(
        crate::server::metric_in(&text, "pitboss_standby_served_total") >= 6,
        "{text}"
    );
    assert!(
        crate::server::metric_in(&text, "pitboss_read_log_entries") >= size,
        "{text}"
    );
    // Bad queries get the writer's problem, from the standby.
    let (s, body, by) = read(&b, &auditor, "/v1/audit/entries?limit=0");
    assert_eq!((s, by), (400, None), "{body}");
    assert!(body.contains("malformed_query"), "{body}");
    let (s, body, by) = read(&b, &auditor, "/v1/audit/consistency?from=1&to=99999999");
    assert_eq!((s, by), (404, None), "{body}");
    assert!(body.contains("beyond_log"), "{body}");
    // What needs the writer goes to it.
    let (s, body, by) = read(&b, &auditor, "/v1/audit/proof/1");
    assert_eq!(s, 200, "{body}");
    assert_eq!(
        by.as_deref(),
        Some(a.base.as_str()),
        "a proof without a size"
    );
    let (s, body, by) = read(&b, &op, "/v1/admin/keys");
    assert_eq!(s, 200, "{body}");
    assert!(by.is_some(), "an admin route is forwarded");

    // A finished round comes from the store, byte for byte the writer's answer, by its id or
    // (an operator's) bare name; a live table, and a round another operator asks for, go to
    // the writer. Only what the standby answered itself is counted as served.
    let served = |node: &TestServer| {
        crate::server::metric_in(
            &node.get_text(None, "/metrics").1,
            "pitboss_standby_served_total",
        )
    };
    let finished = format!("op1:{}.1", tables[0]);
    let (ws, want, _) = read(&a, &auditor, &format!("/v1/rounds/{finished}"));
    assert_eq!(ws, 200, "{want}");
    let before = served(&b);
    for (key, path) in [
        (&auditor, format!("/v1/rounds/{finished}")),
        (&op, format!("/v1/rounds/{finished}")),
        (&op, format!("/v1/rounds/{}.1", tables[0])),
    ] {
        let (s, got, by) = read(&b, key, &path);
        assert_eq!((s, by, &got), (200, None, &want), "{path} on the standby");
    }
    assert_eq!(served(&b), before + 3);
    let (s, body, by) = read(&b, &op, &format!("/v1/tables/{}", tables[0]));
    assert_eq!(
        (s, by.as_deref()),
        (200, Some(a.base.as_str())),
        "a live table: {body}"
    );
    assert_eq!(
        served(&b),
        before + 3,
        "forwarded reads are not counted as served"
    );
    // A key the standby does not know yet (it reads them every second) goes to the writer
    // too: answered at once.
    let other = a.create_key(ADMIN_KEY, "operator", Some("op2"));
    let (s, body, by) = read(&b, &other, &format!("/v1/rounds/{finished}"));
    assert_eq!((s, by.as_deref()), (404, Some(a.base.as_str())), "{body}");
    let unknown = format!("pb_{}_{}", "3".repeat(16), "4".repeat(64));
    let (s, body, by) = read(&b, &unknown, &format!("/v1/rounds/{finished}"));
    assert_eq!((s, by.as_deref()), (401, Some(a.base.as_str())), "{body}");
    assert_eq!(
        served(&b),
        before + 3,
        "forwarded reads are not counted as served"
    );

    // A key revoked through the writer is refused by the standby within about a second.
    let reader = a.create_key(ADMIN_KEY, "auditor", None);
    let started = Instant::now();
    while read(&b, &reader, "/v1/audit/checkpoint").0 != 200 {
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "the standby does not know a new key"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let id = reader.split('_').nth(1).expect("key id");
    let (s, r) = a.post(
        ADMIN_KEY,
        &format!("/v1/admin/keys/{id}/revoke"),
        json!({"reason": "test"}),
    );
    assert_eq!(s, 200, "{r}");
    let started = Instant::now();
    loop {
        let (s, body, by) = read(&b, &reader, "/v1/audit/checkpoint");
        if s == 401 {
            assert_eq!(by, None);
            assert!(body.contains("revoked"), "{body}");
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "the standby still takes the revoked key: {s} {body}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    eprintln!(
        "nodes: the standby refused a revoked key {:?} after the revocation",
        started.elapsed()
    );

    // The writer frozen: the standby still answers the audit reads, each within a second.
    a.signal("STOP");
    let mut answered_as_standby = 0;
    for path in audit_reads(size) {
        let started = Instant::now();
        let (s, body, by) = read(&b, &auditor, &path);
        let took = started.elapsed();
        assert_eq!(
            (s, by),
            (200, None),
            "{path} with the writer frozen: {body}"
        );
        assert!(took < Duration::from_secs(1), "{path} took {took:?}");
        let (_, _, h) = b.get("/healthz");
        if h["status"] == "standby" {
            answered_as_standby += 1;
        }
    }
    assert!(
        answered_as_standby > 0,
        "the reads were answered while the node was still a standby"
    );
    let (s, got, by) = read(&b, &auditor, &format!("/v1/rounds/{finished}"));
    assert_eq!(
        (s, by, got),
        (200, None, want),
        "a finished round with the writer frozen"
    );
    a.signal("KILL");
    wait_for_writer(&[&b], Duration::from_secs(10));
    let (s, body, _) = read(&b, &auditor, &format!("/v1/audit/proof/1?size={size}"));
    assert_eq!(s, 200, "{body}");
}

/// The writer counts a failed authentication against the client a standby names in its
/// `Forwarded` element only when the request carries the nodes' shared secret (derived from
/// the seed key every node holds): otherwise against the peer, whatever `Forwarded` says.
#[test]
fn the_writer_believes_forwarded_only_from_a_node_postgres() {
    let storage = Storage::new(Backend::Postgres);
    let a = TestServer::spawn(
        &crate::source::rng_plans_dir(),
        &storage,
        &[
            ("PITBOSS_ADMIN_KEY", ADMIN_KEY),
            ("PITBOSS_NODE_URL", "auto"),
            ("PITBOSS_LIMIT_AUTH_FAILURES", "2"),
        ],
    );
    let token = pitboss::service::secrets::node_token(&storage.data_dir().join("seed-key"))
        .expect("the seed key the node created");
    let bad = format!("pb_{}_{}", "1".repeat(16), "2".repeat(64));
    let status = |token: Option<&str>, forwarded: &str| -> u16 {
        let mut r = agent()
            .get(&format!("{}/v1/tables", a.base))
            .header("Authorization", &format!("Bearer {bad}"))
            .header("Forwarded", forwarded);
        if let Some(t) = token {
            r = r.header("Pitboss-Node-Token", t);
        }
        r.call().expect("an answer").status().as_u16()
    };
    // With the secret: each named client has a budget of its own (two a minute).
    for n in 1..=5 {
        let f = format!("for=\"10.0.1.{n}:4000\"");
        assert_eq!(status(Some(&token), &f), 401, "{f}");
    }
    let one = "for=\"192.0.2.1\", for=\"10.0.2.1:4000\"";
    assert_eq!(status(Some(&token), one), 401);
    assert_eq!(status(Some(&token), one), 401);
    assert_eq!(
        status(Some(&token), one),
        429,
        "the last element is the client"
    );
    let v6 = "for=\"[2001:db8::7]:4000\"";
    assert_eq!(status(Some(&token), v6), 401);
    // Without it, or with another: the peer's budget, whatever the header names.
    let answers: Vec<u16> = (1..=3)
        .map(|n| status(None, &format!("for=\"10.0.3.{n}:4000\"")))
        .collect();
    assert_eq!(
        answers,
        [401, 401, 429],
        "a client's own Forwarded is not believed"
    );
    assert_eq!(
        status(Some(&"0".repeat(64)), "for=\"10.0.4.1:4000\""),
        429,
        "nor one with a wrong secret"
    );
}

/// A node of a deployment that writes a log per operator (`--log-per-operator`).
fn op_node(storage: &Storage) -> TestServer {
    op_node_with(storage, &[])
}

/// [`op_node`] with more settings.
fn op_node_with(storage: &Storage, more: &[(&str, &str)]) -> TestServer {
    let mut env = vec![
        ("PITBOSS_ADMIN_KEY", ADMIN_KEY),
        ("PITBOSS_NODE_URL", "auto"),
        ("PITBOSS_LOG_PER_OPERATOR", "true"),
    ];
    env.extend_from_slice(more);
    TestServer::spawn(&crate::source::rng_plans_dir(), storage, &env)
}

/// Three nodes with a log per operator, an operator's key for each of `names` and an
/// auditor's made through the first (the end-of-test check of the store left to it).
fn op_nodes(
    storage: &Storage,
    names: &[&str],
) -> (TestServer, TestServer, TestServer, Vec<String>, String) {
    let a = op_node(storage);
    let ops = names
        .iter()
        .map(|o| a.create_key(ADMIN_KEY, "operator", Some(o)))
        .collect();
    let auditor = a.create_key(ADMIN_KEY, "auditor", None);
    let mut b = op_node(storage);
    let mut c = op_node(storage);
    b.skip_state_check();
    c.skip_state_check();
    (a, b, c, ops, auditor)
}

/// The lease of `operator`'s log as stored: the address of the node that holds it, and its
/// fencing token (how many times a node took it).
fn op_lease(storage: &Storage, operator: &str) -> Option<(String, i64)> {
    use diesel::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct Lease {
        #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
        address: Option<String>,
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        token: i64,
    }
    let url = pitboss::store::DatabaseUrl::Postgres(storage.pg.as_ref().expect("pg").url.clone());
    let mut conn = pitboss::store::connect(&url).expect("connect");
    let ns = pitboss::store::log_namespace(operator);
    let rows: Vec<Lease> =
        diesel::sql_query(format!("SELECT address, token FROM \"{ns}\".writer_lease"))
            .load(&mut conn)
            .ok()?;
    rows.into_iter()
        .next()
        .map(|l| (l.address.unwrap_or_default(), l.token))
}

/// Entries of `operator`'s log but the snapshots, counted in the store.
fn op_log_size(storage: &Storage, operator: &str) -> u64 {
    use diesel::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct Count {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let url = pitboss::store::DatabaseUrl::Postgres(storage.pg.as_ref().expect("pg").url.clone());
    let mut conn = pitboss::store::connect(&url).expect("connect");
    let ns = pitboss::store::log_namespace(operator);
    let rows: Vec<Count> = diesel::sql_query(format!(
        "SELECT count(*) AS n FROM \"{ns}\".audit_entries WHERE kind <> 'state_snapshot'"
    ))
    .load(&mut conn)
    .expect("count");
    rows[0].n as u64
}

/// Three nodes with a log per operator (issue 17, items 1 and 2 together): each operator's log
/// is written by the node its first command reached, so the three nodes write three logs at
/// once; every node takes every operator's bets and passes them to the node that writes its
/// log. Checked: where each log is (its lease), no request needed a retry, each round holds
/// exactly the acknowledged bets, a request sent again gets its first answer and writes
/// nothing, and each operator's log, exported through a node that does not write it, verifies
/// offline and replays; no lease was taken twice.
#[test]
fn three_nodes_write_three_operators_logs_postgres() {
    let storage = Storage::new(Backend::Postgres);
    let names = ["op1", "op2", "op3"];
    let (a, mut b, mut c, ops, auditor) = op_nodes(&storage, &names);
    let nodes = [&a, &b, &c];
    assert_eq!(
        a.metric("pitboss_node_writer"),
        1,
        "a writes the service's log"
    );
    assert_eq!(b.metric("pitboss_node_writer"), 0);
    assert_eq!(c.metric("pitboss_node_writer"), 0);

    // Each operator's first command reaches a node of its own, which then writes its log
    // (the keys were made through `a` a moment ago: b and c look for them in the store).
    for (i, n) in nodes.iter().enumerate() {
        open_tables(n, &ops[i], 1);
        assert_eq!(
            op_lease(&storage, names[i]),
            Some((n.base.clone(), 1)),
            "{}'s log is written by the node its first command reached",
            names[i]
        );
    }

    // Every operator plays at its table through all three nodes at once.
    let bases = vec![a.base.clone(), b.base.clone(), c.base.clone()];
    let stop = Arc::new(AtomicBool::new(false));
    let handles: Vec<_> = ops
        .iter()
        .map(|op| play_at_every_table(&bases, op, &["t0".to_string()], 3, &stop))
        .collect();
    let played: Vec<Vec<Played>> = handles.into_iter().map(joined).collect();
    let retried: u32 = played
        .iter()
        .flatten()
        .flat_map(|p| &p.sent)
        .map(|s| s.retries)
        .sum();
    assert_eq!(
        retried, 0,
        "no request needed a retry while every node was up"
    );
    for (i, p) in played.iter().enumerate() {
        let reader = nodes[(i + 1) % 3];
        check_played_sized(reader, &ops[i], p, &|| op_log_size(&storage, names[i]));
        // A round read through a node that does not write its log names the one that does.
        let round = p[0].rounds.keys().next().expect("a round");
        let (s, body, writer) = read(reader, &ops[i], &format!("/v1/rounds/{round}"));
        assert_eq!(s, 200, "{body}");
        assert_eq!(writer.as_deref(), Some(nodes[i].base.as_str()));
        // The operator's log alone, exported through another node: it verifies and replays.
        let export = crate::replay::export_at_verifies_and_replays(
            nodes[(i + 2) % 3],
            &auditor,
            &format!("/v1/audit/export?log={}", names[i]),
        );
        assert!(
            export.contains(&format!("/operator/{}", names[i])),
            "the export is the operator's log"
        );
        assert_eq!(op_lease(&storage, names[i]).map(|l| l.1), Some(1));
    }
    for n in nodes {
        assert!(
            n.metric("pitboss_node_forwarded_total{outcome=\"answered\"}") > 0,
            "{} passed requests on",
            n.base
        );
    }
    // Winnings owed in every operator's log (red, black and zero: one always wins), listed
    // for a regulator through any node from every node's logs (002 § 9(1)), and counted
    // once, by the node that writes the service's log.
    let regulator = a.create_key(ADMIN_KEY, "regulator", None);
    let mut owed = BTreeSet::new();
    for (i, op) in ops.iter().enumerate() {
        let n = nodes[(i + 1) % 3];
        let (s, r) = n.post(op, "/v1/tables/t0/rounds", json!({}));
        assert_eq!(s, 201, "{r}");
        let round = r["round"].as_str().expect("round").to_string();
        let (s, r) = n.post(
            op,
            &format!("/v1/rounds/{round}/bets"),
            json!({"bets": [
                {"player": "pr", "bet": "red_black", "field": "red", "stake_minor": 100},
                {"player": "pb", "bet": "red_black", "field": "black", "stake_minor": 100},
                {"player": "pz", "bet": "straight", "numbers": [0], "stake_minor": 100}]}),
        );
        assert_eq!(s, 200, "{r}");
        for event in ["close_betting", "draw"] {
            let (s, r) = n.post(
                op,
                &format!("/v1/rounds/{round}/events"),
                json!({"type": event}),
            );
            assert_eq!(s, 200, "{r}");
        }
        owed.insert(round);
    }
    let later = (chrono::Utc::now() + chrono::Duration::days(31))
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    for n in nodes {
        let (s, _, r) = n.get_as(
            Some(&regulator),
            &format!("/v1/payouts/overdue?as_of={later}"),
        );
        assert_eq!(s, 200, "{r}");
        let listed: BTreeSet<String> = r["overdue"]
            .as_array()
            .expect("overdue")
            .iter()
            .map(|p| p["round"].as_str().expect("round").to_string())
            .collect();
        assert!(
            listed.is_superset(&owed),
            "{} lists every log's: {r}",
            n.base
        );
    }
    assert!(a.metric("pitboss_payouts_outstanding") >= 3);
    let (_, text) = b.get_text(None, "/metrics");
    assert!(
        !text.contains("pitboss_payouts_outstanding"),
        "reported by the node that writes the service's log only"
    );
    // An operator reads only its own log, through any node.
    let (s, body, _) = read(&b, &ops[0], "/v1/audit/entries?log=op2");
    assert_eq!(s, 403, "{body}");
    b.kill();
    c.kill();
}

/// SIGKILL of a node that writes an operator's log, under load through every node: another
/// node takes that log over (its lease, then its state from the store) within 5 s, with the
/// first request for it; every request retried with its Idempotency-Key gets its first answer
/// or executes once; the other operator's log, written by a node that lives, goes on.
#[test]
fn a_node_killed_under_load_its_operators_log_is_taken_over_within_5_s_postgres() {
    let storage = Storage::new(Backend::Postgres);
    let names = ["op1", "op2"];
    let (a, mut b, mut c, ops, auditor) = op_nodes(&storage, &names);
    // op1's log on b, op2's on c.
    for (i, n) in [&b, &c].into_iter().enumerate() {
        open_tables(n, &ops[i], 2);
        assert_eq!(
            op_lease(&storage, names[i]).map(|l| l.0),
            Some(n.base.clone())
        );
    }
    let bases = vec![a.base.clone(), b.base.clone(), c.base.clone()];
    let stop = Arc::new(AtomicBool::new(false));
    let tables = vec!["t0".to_string(), "t1".to_string()];
    let handles: Vec<_> = ops
        .iter()
        .map(|op| play_at_every_table(&bases, op, &tables, 10_000, &stop))
        .collect();
    std::thread::sleep(Duration::from_millis(1500));
    let killed_at = Instant::now();
    b.kill(); // SIGKILL: no chance to answer, flush or give the lease back.
    let took = loop {
        if let Some((at, 2)) = op_lease(&storage, names[0]) {
            assert!(at == a.base || at == c.base, "taken by {at}");
            break killed_at.elapsed();
        }
        assert!(
            killed_at.elapsed() < Duration::from_secs(10),
            "no node took op1's log over within 10 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    eprintln!("nodes: op1's log was taken over {took:?} after the SIGKILL");
    assert!(took <= Duration::from_secs(5), "takeover took {took:?}");
    std::thread::sleep(Duration::from_millis(2000));
    stop.store(true, Ordering::SeqCst);
    let played: Vec<Vec<Played>> = handles.into_iter().map(joined).collect();
    let after_kill = played
        .iter()
        .flatten()
        .flat_map(|p| &p.answered_at)
        .filter(|t| **t > killed_at)
        .count();
    eprintln!("nodes: {after_kill} requests answered after the kill");
    assert!(after_kill > 0, "requests were answered after the kill");
    for (i, p) in played.iter().enumerate() {
        check_played_sized(&a, &ops[i], p, &|| op_log_size(&storage, names[i]));
        crate::replay::export_at_verifies_and_replays(
            &a,
            &auditor,
            &format!("/v1/audit/export?log={}", names[i]),
        );
    }
    assert_eq!(
        op_lease(&storage, names[1]).map(|l| (l.0, l.1)),
        Some((c.base.clone(), 1)),
        "op2's log stayed where it was"
    );
    c.kill();
}

/// SIGKILL of the node that writes the service's log (API keys, approvals): a node that
/// writes operators' logs takes it over within 5 s and goes on writing its operators' logs;
/// keys are made again, through any node, and the operators play on.
#[test]
fn the_services_log_is_taken_over_by_a_node_of_operators_logs_postgres() {
    let storage = Storage::new(Backend::Postgres);
    let mut a = op_node(&storage);
    let op1 = a.create_key(ADMIN_KEY, "operator", Some("op1"));
    let mut b = op_node(&storage);
    let mut c = op_node(&storage);
    a.skip_state_check();
    b.skip_state_check();
    c.skip_state_check();
    open_tables(&b, &op1, 1);
    assert_eq!(op_lease(&storage, "op1").map(|l| l.0), Some(b.base.clone()));
    let bases = vec![b.base.clone(), c.base.clone()];
    let never = AtomicBool::new(false);
    let mut played = vec![play(&bases, &op1, "t0", 1, &never)];

    let killed_at = Instant::now();
    a.kill();
    let writer = loop {
        // A node answers nothing for a moment while its server hands the socket over.
        let writes = |n: &TestServer| {
            agent()
                .get(&n.url("/metrics"))
                .call()
                .ok()
                .and_then(|mut r| r.body_mut().read_to_string().ok())
                .is_some_and(|t| t.lines().any(|l| l == "pitboss_node_writer 1"))
        };
        if let Some(n) = [&b, &c].into_iter().find(|n| writes(n)) {
            break n;
        }
        assert!(
            killed_at.elapsed() < Duration::from_secs(10),
            "no node took the service's log over within 10 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = killed_at.elapsed();
    eprintln!(
        "nodes: {} took the service's log over after {took:?}",
        writer.base
    );
    assert!(took <= Duration::from_secs(5), "takeover took {took:?}");
    assert_eq!(
        lease_token(&storage),
        2,
        "exactly one takeover of the service's log"
    );
    // op1's log is where it was, and plays on through both nodes.
    played.push(play(&bases, &op1, "t0", 2, &never));
    assert_eq!(op_lease(&storage, "op1"), Some((b.base.clone(), 1)));
    // A key made through either node (passed to the new writer of the service's log) works.
    let other = if std::ptr::eq(writer, &b) { &c } else { &b };
    let op2 = other.create_key(ADMIN_KEY, "operator", Some("op2"));
    open_tables(other, &op2, 1);
    check_played_sized(&c, &op1, &played, &|| op_log_size(&storage, "op1"));
    b.kill();
    c.kill();
}

/// One approval gates every node's operators' logs (`--require-approval`): the regulator's
/// approval and withdrawal, sent through nodes that do not write the service's log, are
/// logged there, and the next table or round opened on the node that writes the operator's
/// log (reached through a third node) is decided by them at once (that node brings the
/// service's state it follows up to what was committed before it decides).
#[test]
fn an_approval_through_any_node_gates_the_operators_log_on_every_node_postgres() {
    let storage = Storage::new(Backend::Postgres);
    let approval = [("PITBOSS_REQUIRE_APPROVAL", "true")];
    let a = op_node_with(&storage, &approval);
    let op = a.create_key(ADMIN_KEY, "operator", Some("op1"));
    let regulator = a.create_key(ADMIN_KEY, "regulator", None);
    let mut b = op_node_with(&storage, &approval);
    let mut c = op_node_with(&storage, &approval);
    b.skip_state_check();
    c.skip_state_check();
    let plan = "synot-roulette@1";
    let open = |n: &TestServer, table: &str| {
        n.post(
            &op,
            "/v1/tables",
            json!({"table": table, "plan": plan, "mode": "rng"}),
        )
    };
    let (s, body) = open(&b, "t0");
    assert_eq!(
        (s, body["code"].as_str()),
        (409, Some("plan_not_approved")),
        "{body}"
    );
    assert_eq!(op_lease(&storage, "op1").map(|l| l.0), Some(b.base.clone()));
    let (s, _, p) = c.get(&format!("/v1/plans/{plan}"));
    assert_eq!(s, 200, "{p}");
    for round in 0..3 {
        let reference = format!("MF-2026/{round}");
        let (s, body) = c.post(
            &regulator,
            "/v1/plan-approvals",
            json!({"plan": plan, "sha256": p["sha256"], "reference": reference,
                   "valid_from": "2026-01-01T00:00:00Z"}),
        );
        assert_eq!(s, 201, "{body}");
        // At once, through a third node, to the node that writes op1's log.
        let table = format!("t{round}");
        let (s, body) = open(&a, &table);
        assert_eq!(s, 201, "opened at once after the approval: {body}");
        let (s, body) = c.post(&op, &format!("/v1/tables/{table}/rounds"), json!({}));
        assert_eq!(s, 201, "{body}");
        let (s, body) = b.post(
            &regulator,
            "/v1/plan-approvals/withdrawals",
            json!({"reference": reference, "reason": "licence amended"}),
        );
        assert_eq!(s, 200, "{body}");
        let (s, body) = a.post(&op, &format!("/v1/tables/{table}/rounds"), json!({}));
        assert_eq!(
            (s, body["code"].as_str()),
            (409, Some("plan_not_approved")),
            "refused at once after the withdrawal: {body}"
        );
    }
    b.kill();
    c.kill();
}

/// Readers on any node with a log per operator (issue 17, item 3): an operator's log is read
/// through every node, those that do not write it answering from the store themselves (no
/// `Pitboss-Writer`: not passed on) exactly as its writer does; the service's log too, on a
/// node that follows it. The reads need no writer: with the node that writes the operator's
/// log killed, the others still answer them, and none of them took the log to do so.
#[test]
fn an_operators_log_is_read_through_every_node_from_the_store_postgres() {
    let storage = Storage::new(Backend::Postgres);
    let (a, mut b, mut c, ops, auditor) = op_nodes(&storage, &["op1"]);
    // op1's log on b.
    let tables = open_tables(&b, &ops[0], 1);
    assert_eq!(op_lease(&storage, "op1"), Some((b.base.clone(), 1)));
    let never = AtomicBool::new(false);
    play(&[b.base.clone()], &ops[0], &tables[0], 2, &never);
    // Signed by b, asked through c.
    let (s, signed) = c.post(&auditor, "/v1/audit/checkpoint?log=op1", json!({}));
    assert_eq!(s, 200, "{signed}");
    let size = signed["tree_size"].as_u64().expect("tree_size");
    assert!(size > 5, "{signed}");
    let with_log = |path: &str, log: &str| {
        let sep = if path.contains('?') { '&' } else { '?' };
        format!("{path}{sep}log={log}")
    };
    // Requests a node passed on (the series appears with the first).
    let forwarded = |n: &TestServer| {
        let (_, text) = n.get_text(None, "/metrics");
        let name = "pitboss_node_forwarded_total{outcome=\"answered\"}";
        if text.contains(name) {
            crate::server::metric_in(&text, name)
        } else {
            0
        }
    };
    let before = [forwarded(&a), forwarded(&c)];
    let mut want = Vec::new();
    for path in audit_reads(size) {
        let path = with_log(&path, "op1");
        let (s, on_b, by) = read(&b, &auditor, &path);
        assert_eq!((s, by), (200, None), "{path} on its writer: {on_b}");
        for n in [&a, &c] {
            answers_here_as(n, &auditor, &path, &on_b);
        }
        want.push((path, on_b));
    }
    // The operator reads its own log by default, through a node that does not write it.
    let (s, own, by) = read(&a, &ops[0], "/v1/audit/entries?limit=10000");
    assert_eq!((s, by), (200, None), "{own}");
    let (_, on_b, _) = read(&b, &ops[0], "/v1/audit/entries?limit=10000");
    assert!(
        own == on_b,
        "the operator's own log, as its writer lists it"
    );
    assert!(own.contains("\"op1:t0.1\""), "{own}");
    assert_eq!(
        [forwarded(&a), forwarded(&c)],
        before,
        "no read was passed on"
    );
    // Checked by breaking: a log that names nothing, another operator's log, a proof without
    // a size (signs first: its writer's).
    let (s, body, _) = read(&a, &auditor, "/v1/audit/entries?log=nobody");
    assert_eq!(s, 404, "{body}");
    assert!(body.contains("no_such_log"), "{body}");
    let (s, body, _) = read(&a, &ops[0], "/v1/audit/entries?log=op2");
    assert_eq!(s, 403, "{body}");
    let (s, body, by) = read(&a, &auditor, "/v1/audit/proof/1?log=op1");
    assert_eq!(s, 200, "{body}");
    assert_eq!(by.as_deref(), Some(b.base.as_str()), "signed by its writer");
    // The service's log, on the node that follows it (c), as on the node that writes it (a).
    let (s, svc, by) = read(&a, &auditor, "/v1/audit/entries?limit=10000");
    assert_eq!((s, by), (200, None), "{svc}");
    answers_here_as(&c, &auditor, "/v1/audit/entries?limit=10000", &svc);

    // A key made a moment ago through a is looked for in the store by c before it reads.
    let fresh = a.create_key(ADMIN_KEY, "auditor", None);
    let (s, body, by) = read(&c, &fresh, "/v1/audit/checkpoint?log=op1");
    assert_eq!((s, by), (200, None), "a key made a moment ago: {body}");

    // Its writer killed: the others answer the same, and neither took the log to read it.
    b.kill();
    for (path, on_b) in &want {
        for n in [&a, &c] {
            let (s, got, by) = read(n, &auditor, path);
            assert_eq!(
                (s, by, &got),
                (200, None, on_b),
                "{path} on {} after b died",
                n.base
            );
        }
    }
    assert_eq!(
        op_lease(&storage, "op1").map(|l| l.1),
        Some(1),
        "reading took no lease"
    );
    c.kill();
}
