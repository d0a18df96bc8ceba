//! What the regulator's own rules add (issue 20), end to end on SQLite and PostgreSQL: the
//! audit-entry listing with its stable cursor, filters and follow mode (the supervisor's feed).

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::server::{Backend, Storage, TestServer, ADMIN_KEY};

fn open_roulette(server: &TestServer, op: &str, table: &str) {
    let (s, b) = server.post(
        op,
        "/v1/tables",
        json!({"table": table, "plan": "evolution-roulette@1", "mode": "live"}),
    );
    assert_eq!(s, 201, "{b}");
}

fn open_round(server: &TestServer, op: &str, table: &str) -> String {
    let (s, b) = server.post(op, &format!("/v1/tables/{table}/rounds"), json!({}));
    assert_eq!(s, 201, "{b}");
    b["round"].as_str().expect("round").to_string()
}

/// `n` straight bets of the minimum stake, each by its own player `p{first + i}`.
fn place(server: &TestServer, op: &str, round: &str, first: usize, n: usize) {
    let bets: Vec<Value> = (first..first + n)
        .map(|i| json!({"player": format!("p{i}"), "bet": "straight", "numbers": [i % 37], "stake_minor": 100}))
        .collect();
    let (s, b) = server.post(
        op,
        &format!("/v1/rounds/{round}/bets"),
        json!({ "bets": bets }),
    );
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["accepted"], n, "{b}");
}

fn page(server: &TestServer, key: &str, query: &str) -> Value {
    let (s, _, b) = server.get_as(Some(key), &format!("/v1/audit/entries?{query}"));
    assert_eq!(s, 200, "{query}: {b}");
    b
}

fn kinds(page: &Value) -> Vec<String> {
    page["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| e["entry"]["kind"].as_str().expect("kind").to_string())
        .collect()
}

fn seqs(page: &Value) -> Vec<u64> {
    page["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| e["seq"].as_u64().expect("seq"))
        .collect()
}

/// 10,000 accepted bets, paged by kind with a cursor while more entries are being logged: each
/// comes exactly once, in order; the filters select what they name.
fn the_feed_pages_through_ten_thousand_entries(backend: Backend) {
    let storage = Storage::new(backend);
    let server = TestServer::on(&storage);
    let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
    let op2 = server.create_key(ADMIN_KEY, "operator", Some("op2"));
    let regulator = server.create_key(ADMIN_KEY, "regulator", None);
    open_roulette(&server, &op, "t1");
    open_roulette(&server, &op2, "u1");
    let mut rounds = Vec::new();
    for r in 0..4 {
        let round = open_round(&server, &op, "t1");
        for k in 0..5 {
            place(&server, &op, &round, r * 2500 + k * 500, 500);
        }
        let (s, b) = server.post(
            &op,
            &format!("/v1/rounds/{round}/void"),
            json!({"reason": "feed test"}),
        );
        assert_eq!(s, 200, "{b}");
        rounds.push(round);
    }
    // A refused bet (above the maximum) and the other operator's round.
    let (s, b) = server.post(&op, "/v1/tables/t1/rounds", json!({}));
    assert_eq!(s, 201, "{b}");
    let (s, b) = server.post(
        &op,
        "/v1/rounds/t1.5/bets",
        json!({"bets": [{"player": "big", "bet": "straight", "numbers": [1], "stake_minor": 999_999_999}]}),
    );
    assert_eq!((s, b["refused"].as_u64()), (200, Some(1)), "{b}");
    let other = open_round(&server, &op2, "u1");
    place(&server, &op2, &other, 0, 3);

    // Page through the accepted bets, 997 at a time, logging more entries between pages.
    let mut since = 0u64;
    let mut seen = Vec::new();
    let mut pages = 0;
    loop {
        let p = page(
            &server,
            &regulator,
            &format!("kind=bet_accepted&since={since}&limit=997"),
        );
        assert!(kinds(&p).iter().all(|k| k == "bet_accepted"), "{p}");
        let s = seqs(&p);
        if s.is_empty() {
            break;
        }
        seen.extend(s);
        let next = p["next"].as_u64().expect("next");
        assert!(
            next > *seen.last().unwrap(),
            "the cursor moves past the page"
        );
        // The same cursor gives the same page again (stable).
        if pages == 3 {
            let again = page(
                &server,
                &regulator,
                &format!("kind=bet_accepted&since={since}&limit=997"),
            );
            assert_eq!(seqs(&again), seqs(&p));
        }
        since = next;
        pages += 1;
        if pages == 5 {
            // Entries logged while paging come after the cursor, not inside what was read.
            place(&server, &op2, &other, 100, 7);
        }
    }
    assert_eq!(seen.len(), 10_000 + 3 + 7, "every accepted bet once");
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "in order, no repeats");
    assert_eq!(pages, 11);

    // A player's entries; a bet's; a round's.
    let p = page(&server, &regulator, "player=p2600");
    assert_eq!(kinds(&p), ["bet_accepted"], "{p}");
    assert_eq!(p["entries"][0]["entry"]["ids"]["bet"], "op1:t1.2.101");
    let p = page(&server, &regulator, "bet=op1:t1.2.101");
    assert_eq!(kinds(&p), ["bet_accepted"], "{p}");
    let p = page(
        &server,
        &regulator,
        "round=op1:t1.3&kind=round_opened,round_voided",
    );
    assert_eq!(kinds(&p), ["round_opened", "round_voided"], "{p}");
    let p = page(&server, &regulator, "code=above_max_bet");
    assert_eq!(kinds(&p), ["bet_refused"], "{p}");

    // Significant events: plan loads and the four voids; not bets, nor a refusal over the
    // maximum bet.
    let p = page(&server, &regulator, "significant=true");
    let k = kinds(&p);
    assert_eq!(
        k.iter().filter(|k| *k == "round_voided").count(),
        4,
        "{k:?}"
    );
    assert!(
        k.iter().all(|k| k == "round_voided" || k == "plan_loaded"),
        "{k:?}"
    );
    let p = page(&server, &regulator, "significant=true&table=op1:t1");
    assert_eq!(kinds(&p), ["round_voided"; 4]);

    // A time range: nothing logged in the future; everything since the start.
    let p = page(&server, &regulator, "from=2999-01-01T00:00:00Z");
    assert_eq!(kinds(&p).len(), 0);
    assert!(p["next"].as_u64().unwrap() > 10_000, "{}", p["next"]);
    let p = page(
        &server,
        &regulator,
        "kind=round_voided&from=2000-01-01T00:00:00Z&to=2999-01-01T00:00:00Z",
    );
    assert_eq!(kinds(&p).len(), 4);

    // An operator lists its own entries only.
    let p = page(&server, &op2, "kind=bet_accepted");
    assert_eq!(kinds(&p).len(), 10, "{p}");
    assert!(p["entries"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["entry"]["ids"]["operator"] == "op2"));

    // Malformed filters.
    for q in [
        "kind=Bet",
        "from=yesterday",
        "player=p1&significant=true",
        "wait=0",
        "wait=61",
        "significant=maybe",
    ] {
        let (s, _, b) = server.get_as(Some(&regulator), &format!("/v1/audit/entries?{q}"));
        assert_eq!(
            (s, b["code"].as_str()),
            (400, Some("malformed_query")),
            "{q}: {b}"
        );
    }
}

#[test]
fn the_feed_pages_through_ten_thousand_entries_sqlite() {
    the_feed_pages_through_ten_thousand_entries(Backend::Sqlite);
}

#[test]
fn the_feed_pages_through_ten_thousand_entries_postgres() {
    the_feed_pages_through_ten_thousand_entries(Backend::Postgres);
}

/// Follow mode: a regulator's long poll from the end of the log answers as soon as a matching
/// entry is logged; an operator cannot follow.
fn the_feed_follows_the_log(backend: Backend) {
    let storage = Storage::new(backend);
    let server = TestServer::on(&storage);
    let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
    let auditor = server.create_key(ADMIN_KEY, "auditor", None);
    open_roulette(&server, &op, "t1");
    let round = open_round(&server, &op, "t1");
    place(&server, &op, &round, 0, 2);
    let head = page(&server, &auditor, "significant=true");
    let since = head["next"].as_u64().unwrap();

    // Nothing significant happens within a second: the poll answers empty, after the wait.
    let t = Instant::now();
    let p = page(
        &server,
        &auditor,
        &format!("significant=true&since={since}&wait=1"),
    );
    assert!(
        t.elapsed() >= Duration::from_millis(900),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(kinds(&p).len(), 0);
    let since = p["next"].as_u64().unwrap();

    // A void half a second into a 20 s poll ends it.
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(500));
            place(&server, &op, &round, 10, 1);
            let (st, b) = server.post(
                &op,
                &format!("/v1/rounds/{round}/void"),
                json!({"reason": "wheel jammed"}),
            );
            assert_eq!(st, 200, "{b}");
        });
        let t = Instant::now();
        let p = page(
            &server,
            &auditor,
            &format!("significant=true&since={since}&wait=20"),
        );
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
        assert_eq!(kinds(&p), ["round_voided"], "{p}");
        assert_eq!(
            p["entries"][0]["entry"]["payload"]["reason"],
            "wheel jammed"
        );
    });

    let (s, _, b) = server.get_as(Some(&op), "/v1/audit/entries?wait=1");
    assert_eq!((s, b["code"].as_str()), (403, Some("forbidden")), "{b}");
}

#[test]
fn the_feed_follows_the_log_sqlite() {
    the_feed_follows_the_log(Backend::Sqlite);
}

#[test]
fn the_feed_follows_the_log_postgres() {
    the_feed_follows_the_log(Backend::Postgres);
}

/// A log written before the listing's tags existed gets them at the next start.
#[test]
fn tags_are_derived_for_an_existing_log() {
    let storage = Storage::new(Backend::Sqlite);
    let mut server = TestServer::on(&storage);
    let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
    let regulator = server.create_key(ADMIN_KEY, "regulator", None);
    open_roulette(&server, &op, "t1");
    let round = open_round(&server, &op, "t1");
    place(&server, &op, &round, 0, 3);
    let before = page(&server, &regulator, "player=p1");
    assert_eq!(kinds(&before), ["bet_accepted"]);
    server.kill();
    // Forget the tags, as a database from before this version has none.
    {
        use diesel::RunQueryDsl;
        let url = pitboss::store::DatabaseUrl::default_in(storage.data_dir());
        let mut c = pitboss::store::connect(&url).expect("connect");
        diesel::sql_query("DELETE FROM audit_entry_tags")
            .execute(&mut c)
            .unwrap();
        diesel::sql_query("DELETE FROM audit_entry_tags_state")
            .execute(&mut c)
            .unwrap();
    }
    let server = TestServer::on(&storage);
    let after = page(&server, &regulator, "player=p1");
    assert_eq!(seqs(&after), seqs(&before));
}

/// Runs the `pitboss` CLI on the committed plans; its exit code and standard output.
fn cli(args: &[&str]) -> (i32, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pitboss"))
        .arg("--plans")
        .arg(crate::source::plans_dir())
        .args(args)
        .env_remove("DATABASE_URL")
        .output()
        .expect("pitboss runs");
    assert!(
        out.status.code().is_some(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// Starts a server that requires approvals and knows the regulator key `vkey`.
fn approving_server(storage: &Storage, vkey: &str) -> TestServer {
    TestServer::spawn(
        &crate::source::plans_dir(),
        storage,
        &[
            ("PITBOSS_ADMIN_KEY", ADMIN_KEY),
            ("PITBOSS_REQUIRE_APPROVAL", "true"),
            ("PITBOSS_REGULATOR_KEYS", vkey),
        ],
    )
}

fn plan_hash(server: &TestServer, plan: &str) -> String {
    let (s, _, b) = server.get(&format!("/v1/plans/{plan}"));
    assert_eq!(s, 200, "{b}");
    b["sha256"].as_str().expect("sha256").to_string()
}

fn approval_of(server: &TestServer, plan: &str) -> String {
    let (s, _, b) = server.get(&format!(
        "/v1/plans/{}/versions",
        plan.split('@').next().unwrap()
    ));
    assert_eq!(s, 200, "{b}");
    b.as_array()
        .unwrap()
        .iter()
        .find(|p| p["key"] == plan)
        .expect("the version")["approval"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Under `--require-approval` a table on an unapproved plan is refused, and accepted once a
/// regulator approves the version (over the API, or offline with a signed note); a withdrawn
/// approval lets the running round finish and refuses the next; every approval, withdrawal and
/// plan load names who did it; `plan list` shows each version's status; the log replays.
fn approvals_gate_tables(backend: Backend) {
    let keys = tempfile::tempdir().unwrap();
    let key = keys.path().join("regulator.pem");
    let key = key.to_str().unwrap();
    let name = "mf.example.cz/plan-approvals";
    let (code, vkey) = cli(&["plan", "approval-key", "--key", key, "--name", name]);
    assert_eq!(code, 0);
    let vkey = vkey.trim().to_string();
    assert!(vkey.starts_with(&format!("{name}+")), "{vkey}");

    let storage = Storage::new(backend);
    let server = approving_server(&storage, &vkey);
    let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
    let regulator = server.create_key(ADMIN_KEY, "regulator", None);
    let roulette = "evolution-roulette@1";
    let baccarat = "evolution-speed-baccarat@1";
    let open = |table: &str, plan: &str| {
        server.post(
            &op,
            "/v1/tables",
            json!({"table": table, "plan": plan, "mode": "live"}),
        )
    };

    // Unapproved: refused, and the refusal is logged.
    let (s, b) = open("t1", roulette);
    assert_eq!(
        (s, b["code"].as_str()),
        (409, Some("plan_not_approved")),
        "{b}"
    );
    assert_eq!(approval_of(&server, roulette), "none");

    // Approved over the API by a regulator key: accepted.
    let hash = plan_hash(&server, roulette);
    let (s, b) = server.post(
        &regulator,
        "/v1/plan-approvals",
        json!({"plan": roulette, "sha256": hash, "reference": "MF-2026/1",
               "valid_from": "2026-01-01T00:00:00Z", "person": "inspector-7"}),
    );
    assert_eq!(s, 201, "{b}");
    assert_eq!(b["approved_by"]["person"], "inspector-7");
    // Not by an operator, not twice, not with other content.
    let (s, _) = server.post(
        &op,
        "/v1/plan-approvals",
        json!({"plan": roulette, "sha256": hash, "reference": "X", "valid_from": "2026-01-01T00:00:00Z"}),
    );
    assert_eq!(s, 403);
    let (s, b) = server.post(
        &regulator,
        "/v1/plan-approvals",
        json!({"plan": roulette, "sha256": hash, "reference": "MF-2026/1", "valid_from": "2026-01-01T00:00:00Z"}),
    );
    assert_eq!(
        (s, b["code"].as_str()),
        (409, Some("approval_exists")),
        "{b}"
    );
    let (s, b) = server.post(
        &regulator,
        "/v1/plan-approvals",
        json!({"plan": roulette, "sha256": "0".repeat(64), "reference": "MF-2026/9", "valid_from": "2026-01-01T00:00:00Z"}),
    );
    assert_eq!(
        (s, b["code"].as_str()),
        (422, Some("plan_hash_mismatch")),
        "{b}"
    );
    assert_eq!(approval_of(&server, roulette), "approved");
    let (s, b) = open("t1", roulette);
    assert_eq!(s, 201, "{b}");
    let round = open_round(&server, &op, "t1");
    place(&server, &op, &round, 0, 2);

    // Withdrawn: the running round finishes; the next is refused.
    let (s, b) = server.post(
        &regulator,
        "/v1/plan-approvals/withdrawals",
        json!({"reference": "MF-2026/1", "reason": "licence amended"}),
    );
    assert_eq!(s, 200, "{b}");
    assert_eq!(approval_of(&server, roulette), "withdrawn");
    let (s, b) = server.post(
        &op,
        &format!("/v1/rounds/{round}/events"),
        json!({"type": "close_betting"}),
    );
    assert_eq!(s, 200, "{b}");
    let (s, b) = server.post(
        &op,
        &format!("/v1/rounds/{round}/events"),
        json!({"type": "spin", "number": 17, "ball_against_rotation": true, "ball_revolutions": 4}),
    );
    assert_eq!((s, b["phase"].as_str()), (200, Some("settled")), "{b}");
    let (s, b) = server.post(&op, "/v1/tables/t1/rounds", json!({}));
    assert_eq!(
        (s, b["code"].as_str()),
        (409, Some("plan_not_approved")),
        "{b}"
    );

    // Offline: a note signed with the regulator's own key, posted by the admin.
    let (code, note) = cli(&[
        "plan",
        "approve",
        roulette,
        "--key",
        key,
        "--name",
        name,
        "--reference",
        "MF-2026/2",
        "--valid-from",
        "2026-01-01T00:00:00Z",
        "--valid-until",
        "2999-01-01T00:00:00Z",
    ]);
    assert_eq!(code, 0);
    assert!(note.contains(&format!("sha256 {hash}")), "{note}");
    let post_note = |note: &str| {
        let (s, _, b) = server.post_raw(Some(ADMIN_KEY), None, "/v1/plan-approvals/note", note);
        (s, b)
    };
    let (s, b) = post_note(&note);
    assert_eq!(s, 201, "{b}");
    assert!(
        b["approved_by"]["signer"]
            .as_str()
            .unwrap()
            .starts_with(name),
        "{b}"
    );
    assert_eq!(approval_of(&server, roulette), "approved");
    let (s, b) = server.post(&op, "/v1/tables/t1/rounds", json!({}));
    assert_eq!(s, 201, "{b}");
    // A note changed after signing, or signed by another key, approves nothing.
    let (s, b) = post_note(&note.replace("MF-2026/2", "MF-2026/3"));
    assert_eq!(
        (s, b["code"].as_str()),
        (422, Some("approval_signature_unknown")),
        "{b}"
    );
    let other = keys.path().join("other.pem");
    let (_, forged) = cli(&[
        "plan",
        "approve",
        baccarat,
        "--key",
        other.to_str().unwrap(),
        "--name",
        name,
        "--reference",
        "MF-2026/4",
        "--valid-from",
        "2026-01-01T00:00:00Z",
    ]);
    let (s, b) = post_note(&forged);
    assert_eq!(
        (s, b["code"].as_str()),
        (422, Some("approval_signature_unknown")),
        "{b}"
    );
    // An approval valid only from a later date does not open a table yet.
    let (s, b) = server.post(
        &regulator,
        "/v1/plan-approvals",
        json!({"plan": baccarat, "sha256": plan_hash(&server, baccarat), "reference": "MF-2026/5",
               "valid_from": "2999-01-01T00:00:00Z"}),
    );
    assert_eq!(s, 201, "{b}");
    assert_eq!(approval_of(&server, baccarat), "pending");
    let (s, b) = open("b1", baccarat);
    assert_eq!(
        (s, b["code"].as_str()),
        (409, Some("plan_not_approved")),
        "{b}"
    );

    // Every approval, withdrawal and plan load names who did it.
    let p = page(
        &server,
        &regulator,
        "kind=plan_approved,plan_approval_withdrawn,plan_loaded",
    );
    let entries = p["entries"].as_array().unwrap();
    assert!(entries.len() > 4, "{p}");
    for e in entries {
        let payload = &e["entry"]["payload"];
        let actor = if e["entry"]["kind"] == "plan_loaded" {
            &payload["loaded_by"]
        } else {
            &payload["actor"]
        };
        assert!(actor["key"].as_str().is_some_and(|k| !k.is_empty()), "{e}");
        assert!(actor["role"].as_str().is_some(), "{e}");
    }
    let k = kinds(&p);
    assert_eq!(
        k.iter().filter(|k| *k == "plan_approved").count(),
        3,
        "{k:?}"
    );
    assert_eq!(
        k.iter().filter(|k| *k == "plan_approval_withdrawn").count(),
        1
    );
    // Approvals are significant events; the refusals were logged.
    let p = page(&server, &regulator, "significant=true&kind=plan_approved");
    assert_eq!(kinds(&p).len(), 3);
    let p = page(&server, &regulator, "code=plan_not_approved");
    assert_eq!(kinds(&p), ["command_refused"; 3], "{p}");

    // The list of approvals, and `plan list` reading the service's database.
    let (s, _, b) = server.get_as(Some(&op), "/v1/plan-approvals");
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["required"], true);
    assert_eq!(b["approvals"].as_array().unwrap().len(), 3, "{b}");
    let url = match &storage.pg {
        Some(pg) => pg.url.clone(),
        None => crate::server::data_file(&storage).display().to_string(),
    };
    let (code, out) = cli(&["plan", "list", "--database-url", &url]);
    assert_eq!(code, 0, "{out}");
    let line = |plan: &str| {
        out.lines()
            .find(|l| l.starts_with(&format!("{plan} ")))
            .unwrap_or_else(|| panic!("{plan} in {out}"))
            .to_string()
    };
    assert!(out.lines().next().unwrap().contains("APPROVAL"), "{out}");
    assert!(line(roulette).contains(" approved "), "{out}");
    assert!(line(baccarat).contains(" pending "), "{out}");
    assert!(line("alg-roulette@1").contains(" none "), "{out}");

    // The log with its approvals replays.
    let auditor = server.create_key(ADMIN_KEY, "auditor", None);
    let (s, export) = server.get_text(Some(&auditor), "/v1/audit/export");
    assert_eq!(s, 200);
    let r = crate::replay::replay_command(&export, &crate::source::plans_dir());
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

#[test]
fn approvals_gate_tables_sqlite() {
    approvals_gate_tables(Backend::Sqlite);
}

#[test]
fn approvals_gate_tables_postgres() {
    approvals_gate_tables(Backend::Postgres);
}

/// A reported error pauses a round: it takes no bet and no dealer event until a repair
/// resumes it; another paused round is voided with its refunds; every exception entry (pause,
/// resumption, void, table closed) names the key and the person the operator gave, and the
/// reason; the log replays.
fn exceptions_name_their_actor(backend: Backend) {
    let storage = Storage::new(backend);
    let server = TestServer::on(&storage);
    let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
    let regulator = server.create_key(ADMIN_KEY, "regulator", None);
    let key_id = op.split('_').nth(1).unwrap().to_string();
    open_roulette(&server, &op, "t1");
    let round = open_round(&server, &op, "t1");
    place(&server, &op, &round, 0, 2);
    let post =
        |path: &str, body: Value| server.post(&op, &format!("/v1/rounds/{round}/{path}"), body);

    let (s, b) = post(
        "pause",
        json!({"reason": "wheel sensor fault", "reported": "E17 ball not detected", "person": "pitboss-042"}),
    );
    assert_eq!((s, b["paused"].as_bool()), (200, Some(true)), "{b}");
    let (s, b) = post("pause", json!({"reason": "again"}));
    assert_eq!((s, b["code"].as_str()), (409, Some("round_paused")), "{b}");
    let (s, b) = post(
        "bets",
        json!({"bets": [{"player": "p9", "bet": "straight", "numbers": [1], "stake_minor": 100}]}),
    );
    assert_eq!((s, b["code"].as_str()), (409, Some("round_paused")), "{b}");
    let (s, b) = post("events", json!({"type": "close_betting"}));
    assert_eq!((s, b["code"].as_str()), (409, Some("round_paused")), "{b}");
    let (s, b) = post(
        "resume",
        json!({"reason": "sensor replaced", "person": "tech-7"}),
    );
    assert_eq!((s, b["paused"].as_bool()), (200, Some(false)), "{b}");
    let (s, b) = post("resume", json!({"reason": "again"}));
    assert_eq!(
        (s, b["code"].as_str()),
        (409, Some("round_not_paused")),
        "{b}"
    );
    assert_eq!(post("events", json!({"type": "close_betting"})).0, 200);
    let (s, b) = post(
        "events",
        json!({"type": "spin", "number": 0, "ball_against_rotation": true, "ball_revolutions": 4}),
    );
    assert_eq!((s, b["phase"].as_str()), (200, Some("settled")), "{b}");

    // Paused, then voided: every stake back, the void names its actor.
    let round2 = open_round(&server, &op, "t1");
    place(&server, &op, &round2, 0, 3);
    let (s, b) = server.post(
        &op,
        &format!("/v1/rounds/{round2}/pause"),
        json!({"reason": "shoe jammed"}),
    );
    assert_eq!(s, 200, "{b}");
    let (s, b) = server.post(
        &op,
        &format!("/v1/rounds/{round2}/void"),
        json!({"reason": "not repairable", "person": "floor-3"}),
    );
    assert_eq!((s, b["refund_minor"].as_i64()), (200, Some(300)), "{b}");
    let (s, b) = server.post(
        &op,
        &format!("/v1/rounds/{round2}/resume"),
        json!({"reason": "too late"}),
    );
    assert_eq!(
        (s, b["code"].as_str()),
        (409, Some("round_not_paused")),
        "{b}"
    );
    // A table closed with a round running, naming who closed it.
    let round3 = open_round(&server, &op, "t1");
    place(&server, &op, &round3, 0, 1);
    let (s, b) = server.post(
        &op,
        "/v1/tables/t1/close",
        json!({"reason": "studio evacuated", "person": "manager-1"}),
    );
    assert_eq!(s, 200, "{b}");

    // The feed's significant events: each names the key, the reason, and the person given.
    let p = page(&server, &regulator, "significant=true&table=op1:t1");
    let entries = p["entries"].as_array().unwrap();
    let k = kinds(&p);
    assert_eq!(
        k,
        [
            "round_paused",
            "round_resumed",
            "round_paused",
            "round_voided",
            "round_voided",
            "table_closed"
        ],
        "{p}"
    );
    let persons: Vec<Option<&str>> = entries
        .iter()
        .map(|e| e["entry"]["payload"]["actor"]["person"].as_str())
        .collect();
    assert_eq!(
        persons,
        [
            Some("pitboss-042"),
            Some("tech-7"),
            None,
            Some("floor-3"),
            Some("manager-1"),
            Some("manager-1")
        ]
    );
    for e in entries {
        let payload = &e["entry"]["payload"];
        assert_eq!(payload["actor"]["key"], key_id.as_str(), "{e}");
        assert_eq!(payload["actor"]["role"], "operator", "{e}");
        assert!(
            payload["reason"].as_str().is_some_and(|r| !r.is_empty()),
            "{e}"
        );
    }
    assert_eq!(
        entries[0]["entry"]["payload"]["reported"],
        "E17 ball not detected"
    );
    assert_eq!(entries[3]["entry"]["payload"]["refund_minor"], 300);

    let auditor = server.create_key(ADMIN_KEY, "auditor", None);
    let (s, export) = server.get_text(Some(&auditor), "/v1/audit/export");
    assert_eq!(s, 200);
    let r = crate::replay::replay_command(&export, &crate::source::rng_plans_dir());
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

#[test]
fn exceptions_name_their_actor_sqlite() {
    exceptions_name_their_actor(Backend::Sqlite);
}

#[test]
fn exceptions_name_their_actor_postgres() {
    exceptions_name_their_actor(Backend::Postgres);
}

/// A live table carries its registration number and dealing device from its opening: both
/// are in every round's recall and in the export's `table_opened` entry; a deployment that
/// requires them refuses a table without them.
fn tables_carry_their_registration(backend: Backend) {
    let storage = Storage::new(backend);
    let server = TestServer::spawn(
        &crate::source::plans_dir(),
        &storage,
        &[
            ("PITBOSS_ADMIN_KEY", ADMIN_KEY),
            ("PITBOSS_REQUIRE_REGISTRATION", "true"),
        ],
    );
    let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
    let auditor = server.create_key(ADMIN_KEY, "auditor", None);
    let open = |body: Value| server.post(&op, "/v1/tables", body);
    let (s, b) = open(json!({"table": "t1", "plan": "evolution-roulette@1", "mode": "live"}));
    assert_eq!(
        (s, b["code"].as_str()),
        (422, Some("registration_required")),
        "{b}"
    );
    let (s, b) = open(
        json!({"table": "t1", "plan": "evolution-roulette@1", "mode": "live", "registration": "MF-LT-0042"}),
    );
    assert_eq!(
        (s, b["code"].as_str()),
        (422, Some("registration_required")),
        "{b}"
    );
    let (s, b) = open(
        json!({"table": "t1", "plan": "evolution-roulette@1", "mode": "live", "registration": "MF-LT-0042", "device": "wheel\u{7}"}),
    );
    assert_eq!(
        (s, b["code"].as_str()),
        (422, Some("bad_registration")),
        "{b}"
    );
    let (s, b) = open(
        json!({"table": "t1", "plan": "evolution-roulette@1", "mode": "live",
                            "registration": "MF-LT-0042", "device": "wheel-CW-1187"}),
    );
    assert_eq!(s, 201, "{b}");
    for _ in 0..2 {
        let round = open_round(&server, &op, "t1");
        place(&server, &op, &round, 0, 1);
        let (s, b) = server.post(
            &op,
            &format!("/v1/rounds/{round}/void"),
            json!({"reason": "test"}),
        );
        assert_eq!(s, 200, "{b}");
        let (s, _, r) = server.get_as(Some(&auditor), &format!("/v1/rounds/{round}/recall"));
        assert_eq!(s, 200, "{r}");
        assert_eq!(
            (r["registration"].as_str(), r["device"].as_str()),
            (Some("MF-LT-0042"), Some("wheel-CW-1187")),
            "{r}"
        );
    }
    let (s, export) = server.get_text(Some(&auditor), "/v1/audit/export");
    assert_eq!(s, 200);
    let opened = export
        .lines()
        .find(|l| l.contains("\"kind\":\"table_opened\""))
        .expect("table_opened in the export");
    let v: Value = serde_json::from_str(opened).unwrap();
    assert_eq!(v["payload"]["registration"], "MF-LT-0042");
    assert_eq!(v["payload"]["device"], "wheel-CW-1187");
    let r = crate::replay::replay_command(&export, &crate::source::plans_dir());
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

#[test]
fn tables_carry_their_registration_sqlite() {
    tables_carry_their_registration(Backend::Sqlite);
}

#[test]
fn tables_carry_their_registration_postgres() {
    tables_carry_their_registration(Backend::Postgres);
}

/// The daily summary per table, read from the store, equals the one `pitboss replay
/// --daily-summary` computes from the export; its figures are the day's.
fn the_daily_summary_equals_the_replays(backend: Backend) {
    let storage = Storage::new(backend);
    let server = TestServer::spawn(
        &crate::source::plans_dir(),
        &storage,
        &[("PITBOSS_ADMIN_KEY", ADMIN_KEY)],
    );
    let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
    let auditor = server.create_key(ADMIN_KEY, "auditor", None);
    open_roulette(&server, &op, "t1");
    open_roulette(&server, &op, "t2");
    // t1: a settled round (straight on 17 and a split), a voided one; a refusal.
    let r1 = open_round(&server, &op, "t1");
    let (s, b) = server.post(
        &op,
        &format!("/v1/rounds/{r1}/bets"),
        json!({"bets": [
            {"player": "p1", "bet": "straight", "numbers": [17], "stake_minor": 100},
            {"player": "p2", "bet": "straight", "numbers": [1], "stake_minor": 200},
            {"player": "p3", "bet": "straight", "numbers": [1], "stake_minor": 999_999_999}
        ]}),
    );
    assert_eq!((s, b["accepted"].as_u64()), (200, Some(2)), "{b}");
    assert_eq!(
        server
            .post(
                &op,
                &format!("/v1/rounds/{r1}/events"),
                json!({"type": "close_betting"})
            )
            .0,
        200
    );
    let (s, b) = server.post(
        &op,
        &format!("/v1/rounds/{r1}/events"),
        json!({"type": "spin", "number": 17, "ball_against_rotation": true, "ball_revolutions": 4}),
    );
    assert_eq!((s, b["phase"].as_str()), (200, Some("settled")), "{b}");
    let r2 = open_round(&server, &op, "t1");
    place(&server, &op, &r2, 0, 3);
    assert_eq!(
        server
            .post(
                &op,
                &format!("/v1/rounds/{r2}/void"),
                json!({"reason": "test"})
            )
            .0,
        200
    );
    // t2: one round, open.
    let r3 = open_round(&server, &op, "t2");
    place(&server, &op, &r3, 0, 2);

    // The day the entries were logged (not the clock now: a test may straddle midnight).
    let first = page(&server, &auditor, "kind=round_opened&limit=1");
    let today = first["entries"][0]["entry"]["ts"].as_str().unwrap()[..10].to_string();
    let (s, _, served) = server.get_as(
        Some(&auditor),
        &format!("/v1/audit/daily-summary?date={today}"),
    );
    assert_eq!(s, 200, "{served}");
    let t1 = &served["tables"][0];
    assert_eq!(t1["table"], "op1:t1", "{served}");
    assert_eq!(
        (
            t1["rounds"].as_u64(),
            t1["bets"].as_u64(),
            t1["stakes_minor"].as_i64()
        ),
        (Some(2), Some(5), Some(600)),
        "{served}"
    );
    assert_eq!(
        t1["paid_minor"], 3600,
        "the straight on 17 pays 35:1 and its stake"
    );
    assert_eq!(
        (t1["voids"].as_u64(), t1["refunds_minor"].as_i64()),
        (Some(1), Some(300))
    );
    assert_eq!(t1["refusals"]["above_max_bet"], 1, "{served}");
    assert_eq!(served["tables"][1]["stakes_minor"], 200);
    let (s, _, one) = server.get_as(
        Some(&auditor),
        &format!("/v1/audit/daily-summary?date={today}&table=op1:t2"),
    );
    assert_eq!(s, 200);
    assert_eq!(one["tables"].as_array().unwrap().len(), 1);
    let (s, _, none) = server.get_as(Some(&auditor), "/v1/audit/daily-summary?date=2000-01-01");
    assert_eq!((s, none["tables"].as_array().unwrap().len()), (200, 0));
    let (s, _, b) = server.get_as(Some(&auditor), "/v1/audit/daily-summary?date=yesterday");
    assert_eq!((s, b["code"].as_str()), (400, Some("malformed_query")));

    // The replay of the export computes the same.
    let (s, export) = server.get_text(Some(&auditor), "/v1/audit/export");
    assert_eq!(s, 200);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("export.jsonl");
    std::fs::write(&file, &export).unwrap();
    let (code, out) = cli(&["replay", file.to_str().unwrap(), "--daily-summary", &today]);
    assert_eq!(code, 0, "{out}");
    let replayed: Value = serde_json::from_str(out.lines().last().unwrap()).expect("JSON");
    // The export was taken after the served summary: only its entry count may be larger (the
    // export signs a checkpoint, which is no entry, so it is the same).
    assert_eq!(replayed, served);
}

#[test]
fn the_daily_summary_equals_the_replays_sqlite() {
    the_daily_summary_equals_the_replays(Backend::Sqlite);
}

#[test]
fn the_daily_summary_equals_the_replays_postgres() {
    the_daily_summary_equals_the_replays(Backend::Postgres);
}

/// A switch's environment variable takes what deployment files write: `1`, `yes`, `on` turn
/// `--require-registration` on, `0`, `no`, `off` leave it off (the CLI took only `true` and
/// `false`), and a word that is neither is refused at start, naming the setting.
#[test]
fn a_switchs_environment_variable_takes_1_yes_on_and_their_opposites_sqlite() {
    for (value, on) in [
        ("1", true),
        ("yes", true),
        ("on", true),
        ("0", false),
        ("off", false),
    ] {
        let storage = Storage::new(Backend::Sqlite);
        let server = TestServer::spawn(
            &crate::source::plans_dir(),
            &storage,
            &[
                ("PITBOSS_ADMIN_KEY", ADMIN_KEY),
                ("PITBOSS_REQUIRE_REGISTRATION", value),
            ],
        );
        let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
        let (s, b) = server.post(
            &op,
            "/v1/tables",
            json!({"table": "t1", "plan": "evolution-roulette@1", "mode": "live"}),
        );
        let want = if on { 422 } else { 201 };
        assert_eq!(s, want, "PITBOSS_REQUIRE_REGISTRATION={value}: {b}");
    }
    let data = tempfile::tempdir().expect("dir");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pitboss"))
        .args(["--plans"])
        .arg(crate::source::plans_dir())
        .args(["serve", "--bind", "127.0.0.1:0", "--data-dir"])
        .arg(data.path())
        .env("PITBOSS_REQUIRE_REGISTRATION", "maybe")
        .output()
        .expect("run pitboss");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("maybe") && err.contains("--require-registration"),
        "{err}"
    );
}
