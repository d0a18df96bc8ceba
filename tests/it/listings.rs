//! Listings (issue 18): the caller's tables and a table's rounds, paged with stable cursors
//! (a cursor is a log sequence number: pages do not shift while tables and rounds are added),
//! filtered by state, phase and time; an operator sees only its own.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::server::{Backend, Storage, TestServer, ADMIN_KEY};

fn pages(server: &TestServer, key: &str, path: &str, field: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut after: Option<u64> = None;
    let sep = if path.contains('?') { '&' } else { '?' };
    loop {
        let url = match after {
            Some(a) => format!("{path}{sep}after={a}"),
            None => path.to_string(),
        };
        let (s, _, b) = server.get_as(Some(key), &url);
        assert_eq!(s, 200, "{url}: {b}");
        out.extend(b[field].as_array().expect("items").iter().cloned());
        match b["next"].as_u64() {
            Some(n) => after = Some(n),
            None => return out,
        }
    }
}

fn listings(backend: Backend, rounds: u64) {
    let storage = Storage::new(backend);
    let server = TestServer::on(&storage);
    let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
    let other = server.create_key(ADMIN_KEY, "operator", Some("op2"));
    let auditor = server.create_key(ADMIN_KEY, "auditor", None);
    for (key, table) in [(&op, "t1"), (&op, "t2"), (&other, "u1"), (&op, "t3")] {
        let (s, b) = server.post(
            key,
            "/v1/tables",
            json!({"table": table, "plan": "evolution-roulette@1", "mode": "live"}),
        );
        assert_eq!(s, 201, "{b}");
    }
    let (s, b) = server.post(
        &op,
        "/v1/tables/t2/close",
        json!({"reason": "end of shift"}),
    );
    assert_eq!(s, 200, "{b}");

    // Tables: the operator's own, in the order opened; open or closed; the auditor sees all.
    let names = |v: &[Value]| -> Vec<String> {
        v.iter()
            .map(|t| t["table"].as_str().unwrap().to_string())
            .collect()
    };
    let mine = pages(&server, &op, "/v1/tables?limit=1", "tables");
    assert_eq!(names(&mine), ["op1:t1", "op1:t2", "op1:t3"]);
    assert_eq!(mine[1]["open"], false);
    assert_eq!(
        names(&pages(&server, &op, "/v1/tables?open=false", "tables")),
        ["op1:t2"]
    );
    assert_eq!(
        names(&pages(&server, &auditor, "/v1/tables?limit=2", "tables")),
        ["op1:t1", "op1:t2", "op2:u1", "op1:t3"]
    );
    let (s, _, b) = server.get_as(Some(&op), "/v1/tables?limit=0");
    assert_eq!((s, b["code"].as_str()), (400, Some("bad_limit")));

    // Rounds of t1: many, voided and one left open.
    for n in 1..=rounds {
        let (s, b) = server.post(&op, "/v1/tables/t1/rounds", json!({}));
        assert_eq!(s, 201, "{b}");
        if n < rounds {
            let (s, b) = server.post(
                &op,
                &format!("/v1/rounds/t1.{n}/void"),
                json!({"reason": "test"}),
            );
            assert_eq!(s, 200, "{b}");
        }
    }
    // A first page taken, then a table and rounds added elsewhere: the pages do not shift.
    let (s, _, first) = server.get_as(Some(&op), "/v1/tables/t1/rounds?limit=1000");
    assert_eq!(s, 200);
    let (s, b) = server.post(&op, "/v1/tables/t3/rounds", json!({}));
    assert_eq!(s, 201, "{b}");
    let all = pages(&server, &op, "/v1/tables/t1/rounds?limit=1000", "rounds");
    assert_eq!(all.len() as u64, rounds);
    assert_eq!(
        first["rounds"].as_array().unwrap()[..],
        all[..first["rounds"].as_array().unwrap().len()]
    );
    let numbers: Vec<u64> = all.iter().map(|r| r["number"].as_u64().unwrap()).collect();
    assert_eq!(
        numbers,
        (1..=rounds).collect::<Vec<_>>(),
        "every round once, in order"
    );
    let unique: BTreeSet<&str> = all.iter().map(|r| r["round"].as_str().unwrap()).collect();
    assert_eq!(unique.len() as u64, rounds);
    // By phase; by time.
    let open = pages(&server, &op, "/v1/tables/t1/rounds?phase=betting", "rounds");
    assert_eq!(open.len(), 1);
    assert_eq!(open[0]["number"], rounds);
    let voided = pages(
        &server,
        &op,
        "/v1/tables/t1/rounds?phase=voided&limit=1000",
        "rounds",
    );
    assert_eq!(voided.len() as u64, rounds - 1);
    let later = pages(
        &server,
        &op,
        "/v1/tables/t1/rounds?from=2999-01-01T00:00:00Z",
        "rounds",
    );
    assert!(later.is_empty());
    // Another operator's table is not theirs to list.
    let (s, _, b) = server.get_as(Some(&other), "/v1/tables/t1/rounds");
    assert_eq!((s, b["code"].as_str()), (404, Some("table_not_found")));
}

#[test]
fn listings_page_through_ten_thousand_rounds_with_stable_cursors_sqlite() {
    listings(Backend::Sqlite, 10_000);
}

#[test]
fn listings_page_with_stable_cursors_postgres() {
    listings(Backend::Postgres, 300);
}
