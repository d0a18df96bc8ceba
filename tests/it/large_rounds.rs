//! A round whose settlement does not fit one audit entry (1 MiB: a roulette round of some
//! four thousand bets with long ids) is settled, logged in parts (`round_settled_part`, then
//! `round_settled`), verified and replayed offline, and read back after a restart. Before,
//! its draw was refused `unloggable_request` and the round could only be voided.

use serde_json::{json, Value};

use crate::server::{Backend, Storage, TestServer, ADMIN_KEY};

#[test]
fn a_settlement_too_large_for_one_entry_is_logged_in_parts_sqlite() {
    let storage = Storage::new(Backend::Sqlite);
    let server = TestServer::on(&storage);
    let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
    let auditor = server.create_key(ADMIN_KEY, "auditor", None);
    // Ids as long as ids go: every settlement carries its bet's and player's.
    let table = format!("t{}", "x".repeat(63));
    let (s, b) = server.post(
        &op,
        "/v1/tables",
        json!({"table": table, "plan": "synot-roulette@1", "mode": "rng"}),
    );
    assert_eq!(s, 201, "{b}");
    let (s, b) = server.post(&op, &format!("/v1/tables/{table}/rounds"), json!({}));
    assert_eq!(s, 201, "{b}");
    let round = b["round"].as_str().expect("round").to_string();
    const BETS: usize = 4_000;
    for chunk in 0..BETS / 500 {
        let bets: Vec<Value> = (0..500)
            .map(|i| {
                let n = chunk * 500 + i;
                json!({"player": format!("p{n:063}"), "bet": "straight",
                       "numbers": [n % 37], "stake_minor": 100})
            })
            .collect();
        let (s, b) = server.post(
            &op,
            &format!("/v1/rounds/{round}/bets"),
            json!({ "bets": bets }),
        );
        assert_eq!(
            s,
            200,
            "{}",
            b.to_string().chars().take(400).collect::<String>()
        );
    }
    for event in ["close_betting", "draw"] {
        let (s, b) = server.post(
            &op,
            &format!("/v1/rounds/{round}/events"),
            json!({"type": event}),
        );
        assert_eq!(
            s,
            200,
            "{event}: {}",
            b.to_string().chars().take(400).collect::<String>()
        );
    }
    let (s, _, r) = server.get_as(Some(&op), &format!("/v1/rounds/{round}"));
    assert_eq!(s, 200);
    assert_eq!(r["phase"], "settled");
    let settled = r["settlements"].as_array().expect("settlements").len();
    assert_eq!(settled, BETS);

    // The log: parts, then the entry that completes them; each under the entry size.
    let (s, _, page) = server.get_as(
        Some(&auditor),
        &format!("/v1/audit/entries?round={round}&kind=round_settled_part,round_settled"),
    );
    assert_eq!(s, 200);
    let entries = page["entries"].as_array().expect("entries");
    let kinds: Vec<&str> = entries
        .iter()
        .map(|e| e["entry"]["kind"].as_str().expect("kind"))
        .collect();
    assert!(kinds.len() >= 3, "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"round_settled"), "{kinds:?}");
    assert!(kinds[..kinds.len() - 1]
        .iter()
        .all(|k| *k == "round_settled_part"));
    let seqs: Vec<u64> = entries
        .iter()
        .map(|e| e["seq"].as_u64().expect("seq"))
        .collect();
    assert!(
        seqs.windows(2).all(|w| w[1] == w[0] + 1),
        "the parts and their completion are consecutive: {seqs:?}"
    );
    let logged: usize = entries
        .iter()
        .map(|e| {
            e["entry"]["payload"]["settlements"]
                .as_array()
                .map_or(0, Vec::len)
        })
        .sum();
    assert_eq!(logged, BETS, "every settlement logged once");

    crate::replay::exported_log_verifies_and_replays(&server, &auditor);

    // A restart reads the round back as settled, whole.
    drop(server);
    let server = TestServer::on(&storage);
    let (s, _, again) = server.get_as(Some(&op), &format!("/v1/rounds/{round}"));
    assert_eq!(s, 200);
    assert_eq!(again, r);
}
