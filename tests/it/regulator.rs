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
    assert_eq!(p["entries"][0]["entry"]["ids"]["bet"], "t1.2.101");
    let p = page(&server, &regulator, "bet=t1.2.101");
    assert_eq!(kinds(&p), ["bet_accepted"], "{p}");
    let p = page(
        &server,
        &regulator,
        "round=t1.3&kind=round_opened,round_voided",
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
    let p = page(&server, &regulator, "significant=true&table=t1");
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
