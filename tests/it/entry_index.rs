//! Entries by round and by table, indexed in bulk (`store::entry_index`): the committer adds a
//! batch's `(round, seq)` and `(table, seq)` pairs only every few entries, and readers split a
//! lookup at the indexed bound (below it through the index tables, above it by scanning the
//! tail). Every read by round or table must return exactly the entries that name it, once and
//! in order, wherever the bound falls: inside a page, between pages, above everything.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::server::{Backend, Storage, TestServer, ADMIN_KEY};

fn ok(s: u16, b: &Value) {
    assert!(s == 200 || s == 201, "{s} {b}");
}

/// Every entry's seq, with its round and table, from the unfiltered feed.
fn all_entries(server: &TestServer, key: &str) -> Vec<(u64, Option<String>, Option<String>)> {
    let mut out = Vec::new();
    let mut since = 0;
    loop {
        let (s, _, page) = server.get_as(
            Some(key),
            &format!("/v1/audit/entries?since={since}&limit=500"),
        );
        ok(s, &page);
        let entries = page["entries"].as_array().expect("entries");
        for e in entries {
            let ids = &e["entry"]["ids"];
            out.push((
                e["seq"].as_u64().expect("seq"),
                ids["round"].as_str().map(str::to_string),
                ids["table"].as_str().map(str::to_string),
            ));
        }
        if entries.is_empty() {
            return out;
        }
        since = page["next"].as_u64().expect("next");
    }
}

/// The seqs a filtered feed returns, page by page (`limit` per page).
fn feed(server: &TestServer, key: &str, filter: &str, limit: u32) -> Vec<u64> {
    let mut out = Vec::new();
    let mut since = 0;
    for _ in 0..10_000 {
        let (s, _, page) = server.get_as(
            Some(key),
            &format!("/v1/audit/entries?{filter}&since={since}&limit={limit}"),
        );
        ok(s, &page);
        let entries = page["entries"].as_array().expect("entries");
        out.extend(entries.iter().map(|e| e["seq"].as_u64().expect("seq")));
        if entries.is_empty() {
            return out;
        }
        since = page["next"].as_u64().expect("next");
    }
    panic!("the feed for {filter} does not end");
}

/// The rounds a table's listing returns, page by page.
fn listed_rounds(server: &TestServer, key: &str, table: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut after = String::new();
    for _ in 0..1_000 {
        let (s, _, page) = server.get_as(
            Some(key),
            &format!("/v1/tables/{table}/rounds?limit=2{after}"),
        );
        ok(s, &page);
        out.extend(
            page["rounds"]
                .as_array()
                .expect("rounds")
                .iter()
                .map(|r| r["round"].as_str().expect("round").to_string()),
        );
        match page["next"].as_u64() {
            Some(n) => after = format!("&after={n}"),
            None => return out,
        }
    }
    panic!("the listing of {table} does not end");
}

/// Checks every read by round and table against the unfiltered log.
fn reads_agree(server: &TestServer, op: &str, auditor: &str, tables: &[&str]) {
    let all = all_entries(server, auditor);
    let mut by_round: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut by_table: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (seq, round, table) in &all {
        if let Some(r) = round {
            by_round.entry(r.clone()).or_default().push(*seq);
        }
        if let Some(t) = table {
            by_table.entry(t.clone()).or_default().push(*seq);
        }
    }
    assert!(by_round.len() >= 6, "{by_round:?}");
    for (round, seqs) in &by_round {
        for limit in [1, 3, 500] {
            assert_eq!(
                &feed(server, auditor, &format!("round={round}"), limit),
                seqs,
                "round {round}, limit {limit}"
            );
        }
        let (s, _, recall) = server.get_as(Some(op), &format!("/v1/rounds/{round}/recall"));
        ok(s, &recall);
        let mut recalled: Vec<u64> = recall["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .map(|e| e["seq"].as_u64().expect("seq"))
            .collect();
        recalled.extend(
            recall["withheld"]
                .as_array()
                .map(|w| w.iter().filter_map(Value::as_u64).collect::<Vec<_>>())
                .unwrap_or_default(),
        );
        recalled.sort_unstable();
        assert_eq!(&recalled, seqs, "recall of {round}");
    }
    for name in tables {
        // The log's id of the table the operator named `name`.
        let table = &format!("op1:{name}");
        let seqs = &by_table[table];
        for limit in [2, 500] {
            assert_eq!(
                &feed(server, auditor, &format!("table={table}"), limit),
                seqs,
                "table {table}, limit {limit}"
            );
        }
        let opened: Vec<String> = by_round
            .keys()
            .filter(|r| r.starts_with(&format!("{table}.")))
            .cloned()
            .collect();
        let mut listed = listed_rounds(server, op, table);
        listed.sort();
        assert_eq!(listed, opened, "rounds of {table}");
        let (s, _, t) = server.get_as(Some(op), &format!("/v1/tables/{table}"));
        ok(s, &t);
    }
}

fn reads_split_at_the_index_bound(backend: Backend) {
    let storage = Storage::new(backend);
    // The bound moves every 7 entries: it falls inside rounds, inside pages, anywhere.
    let env = [
        ("PITBOSS_ADMIN_KEY", ADMIN_KEY),
        ("PITBOSS_INDEX_EVERY", "7"),
    ];
    let server = TestServer::spawn(&crate::source::rng_plans_dir(), &storage, &env);
    let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
    let auditor = server.create_key(ADMIN_KEY, "auditor", None);
    let tables = ["t1", "t2"];
    for t in tables {
        let (s, b) = server.post(
            &op,
            "/v1/tables",
            json!({"table": t, "plan": "evolution-roulette@1", "mode": "live"}),
        );
        ok(s, &b);
    }
    for n in 1..=4 {
        for t in tables {
            let (s, b) = server.post(&op, &format!("/v1/tables/{t}/rounds"), json!({}));
            ok(s, &b);
            let round = format!("{t}.{n}");
            // One bet per request: many small batches, so the bound moves between them.
            for p in 0..5 {
                let (s, b) = server.post(
                    &op,
                    &format!("/v1/rounds/{round}/bets"),
                    json!({"bets": [{"player": format!("p{p}"), "bet": "red_black", "field": "red", "stake_minor": 100}]}),
                );
                ok(s, &b);
            }
            if n < 4 {
                for ev in [
                    json!({"type": "close_betting"}),
                    json!({"type": "spin", "number": 17, "ball_against_rotation": true, "ball_revolutions": 4}),
                ] {
                    let (s, b) = server.post(&op, &format!("/v1/rounds/{round}/events"), ev);
                    ok(s, &b);
                }
            }
        }
    }
    reads_agree(&server, &op, &auditor, &tables);
    // After a restart the committer learns the bound from the store, and reads agree again.
    drop(server);
    let server = TestServer::spawn(&crate::source::rng_plans_dir(), &storage, &env);
    let (s, b) = server.post(
        &op,
        "/v1/rounds/t1.4/bets",
        json!({"bets": [{"player": "p9", "bet": "red_black", "field": "black", "stake_minor": 100}]}),
    );
    ok(s, &b);
    reads_agree(&server, &op, &auditor, &tables);
}

#[test]
fn reads_split_at_the_index_bound_sqlite() {
    reads_split_at_the_index_bound(Backend::Sqlite);
}

#[test]
fn reads_split_at_the_index_bound_postgres() {
    reads_split_at_the_index_bound(Backend::Postgres);
}
