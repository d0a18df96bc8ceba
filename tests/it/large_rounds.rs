//! A round whose settlement does not fit one audit entry (1 MiB: a roulette round of some
//! four thousand bets with long ids) is settled, logged in parts (`round_settled_part`, then
//! `round_settled`), verified and replayed offline, and read back after a restart. Before,
//! its draw was refused `unloggable_request` and the round could only be voided. A void whose
//! refunds do not fit one entry is logged the same way (`round_voided_part`, `round_voided`).

use serde_json::{json, Value};

use crate::server::{Backend, Storage, TestServer, ADMIN_KEY};

#[test]
fn a_settlement_too_large_for_one_entry_is_logged_in_parts_sqlite() {
    large_round(Backend::Sqlite, End::Settle, 4_000);
}

/// Refunds are smaller than settlements: more bets are needed to pass the entry's size.
#[test]
fn a_void_too_large_for_one_entry_is_logged_in_parts_sqlite() {
    large_round(Backend::Sqlite, End::Void, 6_500);
}

#[derive(Clone, Copy, PartialEq)]
enum End {
    Settle,
    Void,
}

fn large_round(backend: Backend, end: End, bets: usize) {
    let storage = Storage::new(backend);
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
    const BETS_PER_REQUEST: usize = 500;
    for chunk in 0..bets / BETS_PER_REQUEST {
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
    let (path, body) = match end {
        End::Settle => ("events", json!({"type": "draw"})),
        End::Void => ("void", json!({"reason": "the wheel's sensor failed"})),
    };
    for (path, body) in [("events", json!({"type": "close_betting"})), (path, body)] {
        let (s, b) = server.post(&op, &format!("/v1/rounds/{round}/{path}"), body);
        assert_eq!(
            s,
            200,
            "{path}: {}",
            b.to_string().chars().take(400).collect::<String>()
        );
    }
    let (phase, list, part, whole) = match end {
        End::Settle => (
            "settled",
            "settlements",
            "round_settled_part",
            "round_settled",
        ),
        End::Void => ("voided", "refunds", "round_voided_part", "round_voided"),
    };
    let (s, _, r) = server.get_as(Some(&op), &format!("/v1/rounds/{round}"));
    assert_eq!(s, 200);
    assert_eq!(r["phase"], phase);
    assert_eq!(r[list].as_array().expect(list).len(), bets);

    // The log: parts, then the entry that completes them; each under the entry size.
    let (s, _, page) = server.get_as(
        Some(&auditor),
        &format!("/v1/audit/entries?round={round}&kind={part},{whole}"),
    );
    assert_eq!(s, 200);
    let entries = page["entries"].as_array().expect("entries");
    let kinds: Vec<&str> = entries
        .iter()
        .map(|e| e["entry"]["kind"].as_str().expect("kind"))
        .collect();
    assert!(kinds.len() >= 3, "{kinds:?}");
    assert_eq!(kinds.last(), Some(&whole), "{kinds:?}");
    assert!(kinds[..kinds.len() - 1].iter().all(|k| *k == part));
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
        .map(|e| e["entry"]["payload"][list].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(logged, bets, "every {list} item logged once");

    // (The replay check below compares settled rounds with the service's: one small one.)
    if end == End::Void {
        let (s, b) = server.post(
            &op,
            "/v1/tables",
            json!({"table": "small", "plan": "synot-roulette@1", "mode": "rng"}),
        );
        assert_eq!(s, 201, "{b}");
        let (s, b) = server.post(&op, "/v1/tables/small/rounds", json!({}));
        assert_eq!(s, 201, "{b}");
        for (path, body) in [
            (
                "bets",
                json!({"bets": [{"player": "p1", "bet": "straight", "numbers": [7], "stake_minor": 100}]}),
            ),
            ("events", json!({"type": "close_betting"})),
            ("events", json!({"type": "draw"})),
        ] {
            let (s, b) = server.post(&op, &format!("/v1/rounds/small.1/{path}"), body);
            assert_eq!(s, 200, "{b}");
        }
    }
    crate::replay::exported_log_verifies_and_replays(&server, &auditor);

    // A restart reads the round back as it ended, whole.
    drop(server);
    let server = TestServer::on(&storage);
    let (s, _, again) = server.get_as(Some(&op), &format!("/v1/rounds/{round}"));
    assert_eq!(s, 200);
    assert_eq!(again, r);
}
