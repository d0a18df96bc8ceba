//! Smaller entries (issue 13, item 5; audit/FORMAT.md 1.4): a payload says nothing the entry's
//! ids say, a bet's placements are derived from its request by the plan, and a log written
//! before (ids and placements in the payloads) reads and replays exactly as the new one.

use std::collections::BTreeMap;

use pitboss::round::{event_of_entry, payload_of_entry, Event, State};
use serde_json::{json, Value};

use crate::replay::{exported_log_verifies_and_replays, replay_command};
use crate::server::{Backend, Storage, TestServer, ADMIN_KEY};
use crate::trust::{reseal, verifies_with};

/// The entries of an export (its entry lines as JSON).
fn entries(export: &str) -> Vec<Value> {
    export
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str::<Value>(l).expect("line"))
        .filter(|v| v.get("checkpoint").is_none())
        .collect()
}

/// Folds an export: every event as read back, and the state's snapshot at the end.
fn fold(export: &str) -> (Vec<Event>, Vec<u8>) {
    let (plans, report) = pitboss::plan::PlanSet::load_dir(&crate::source::rng_plans_dir());
    assert_eq!(report.errors().count(), 0);
    let mut state = State::default();
    let mut events = Vec::new();
    let all = entries(export);
    for v in &all {
        let Some(e) = event_of_entry(v).unwrap_or_else(|e| panic!("entry {v}: {e}")) else {
            continue;
        };
        state
            .apply(&plans, &e)
            .unwrap_or_else(|e| panic!("replay: {e}"));
        events.push(e);
    }
    (events, state.snapshot(all.len() as u64))
}

fn post(server: &TestServer, key: &str, path: &str, body: Value) -> Value {
    let (s, b) = server.post(key, path, body);
    assert!(s == 200 || s == 201, "{path}: {s} {b}");
    b
}

fn entries_say_each_thing_once(backend: Backend) {
    let storage = Storage::new(backend);
    let server = TestServer::on(&storage);
    let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
    let auditor = server.create_key(ADMIN_KEY, "auditor", None);
    post(
        &server,
        &op,
        "/v1/tables",
        json!({"table": "t1", "plan": "evolution-roulette@1", "mode": "live"}),
    );
    // A settled round with simple and combined bets, a voided one, and one left open.
    for (n, outcome) in [(1, "spin"), (2, "void"), (3, "open")] {
        post(&server, &op, "/v1/tables/t1/rounds", json!({}));
        let round = format!("t1.{n}");
        let b = post(
            &server,
            &op,
            &format!("/v1/rounds/{round}/bets"),
            json!({"bets": [
                {"player": "p1", "bet": "straight", "numbers": [17], "stake_minor": 1000},
                {"player": "p2", "bet": "red_black", "field": "red", "stake_minor": 500},
                {"player": "p3", "bet": "voisins", "stake_minor": 100},
                {"player": "p4", "bet": "split", "numbers": [17, 20], "stake_minor": 200}
            ]}),
        );
        assert_eq!(b["accepted"], 4, "{b}");
        match outcome {
            "spin" => {
                for ev in [
                    json!({"type": "close_betting"}),
                    json!({"type": "spin", "number": 17, "ball_against_rotation": true, "ball_revolutions": 4}),
                ] {
                    post(&server, &op, &format!("/v1/rounds/{round}/events"), ev);
                }
            }
            "void" => {
                post(
                    &server,
                    &op,
                    &format!("/v1/rounds/{round}/void"),
                    json!({"reason": "wheel fault"}),
                );
            }
            _ => {}
        }
    }
    // A refused command names its round.
    let (s, b) = server.post(&op, "/v1/rounds/t1.2/void", json!({"reason": "again"}));
    assert_eq!(s, 409, "{b}");
    let (s, export) = server.get_text(Some(&auditor), "/v1/audit/export");
    assert_eq!(s, 200);

    // Nothing is logged twice: no payload member repeats the entry's id of the same name, and
    // an accepted bet's placements are not logged beside its request.
    let all = entries(&export);
    let mut bets = 0;
    for v in &all {
        for id in ["bet", "operator", "round", "table"] {
            if let Some(x) = v["ids"][id].as_str() {
                assert_ne!(v["payload"][id].as_str(), Some(x), "{id} logged twice: {v}");
            }
        }
        if v["kind"] == "bet_accepted" {
            bets += 1;
            assert!(v["payload"].get("placements").is_none(), "{v}");
            assert!(v["payload"]["request"].is_object(), "{v}");
        }
    }
    assert_eq!(bets, 12);
    assert!(
        all.iter()
            .any(|v| v["kind"] == "command_refused" && v["ids"]["round"] == "op1:t1.2"),
        "the refusal names its round in its ids"
    );
    // The placements the replay derives are the ones the service answered and serves.
    exported_log_verifies_and_replays(&server, &auditor);
    let (_, new_state) = fold(&export);
    let mut placements: BTreeMap<String, Value> = BTreeMap::new();
    for r in ["t1.1", "t1.2", "t1.3"] {
        let (s, _, round) = server.get_as(Some(&op), &format!("/v1/rounds/{r}"));
        assert_eq!(s, 200, "{round}");
        for b in round["bets"].as_array().expect("bets") {
            let p = b["placements"].clone();
            assert!(p.as_array().is_some_and(|a| !a.is_empty()), "{b}");
            placements.insert(b["bet"].as_str().expect("bet").to_string(), p);
        }
    }
    assert_eq!(placements.len(), 12);

    // The same log written before the change: ids and placements in every payload. It
    // verifies, and replays to the same events, the same state and the same report.
    let old_payloads: BTreeMap<u64, Value> = all
        .iter()
        .map(|v| {
            let mut p = payload_of_entry(v);
            if v["kind"] == "bet_accepted" {
                p["placements"] = placements[v["ids"]["bet"].as_str().expect("bet")].clone();
            }
            (v["seq"].as_u64().expect("seq"), p)
        })
        .collect();
    let key_pem =
        std::fs::read_to_string(storage.data_dir().join("signing-key.pem")).expect("key file");
    let (_, public_pem) = server.get_text(None, "/v1/audit/public-key");
    let old = reseal(&export, &key_pem, |seq, _, p| {
        *p = old_payloads[&seq].clone()
    });
    verifies_with(&old, &public_pem).expect("the old form verifies");
    let old_entries = entries(&old);
    for (o, n) in old_entries.iter().zip(&all) {
        if n["kind"] == "bet_accepted" {
            assert_eq!(o["payload"]["bet"], n["ids"]["bet"], "{o}");
            assert_eq!(o["payload"]["round"], n["ids"]["round"], "{o}");
        }
    }
    let (old_len, new_len) = (old.len(), export.len());
    assert!(new_len < old_len, "{new_len} bytes, {old_len} before");
    let (old_events, old_state) = fold(&old);
    let (new_events, _) = fold(&export);
    assert_eq!(old_state, new_state, "the same state");
    assert_eq!(old_events.len(), new_events.len());
    for (o, n) in old_events.iter().zip(&new_events) {
        assert_eq!(&o.as_read_back(), n, "the same events");
    }
    let plans = crate::source::rng_plans_dir();
    let (old_out, new_out) = (
        replay_command(&old, &plans),
        replay_command(&export, &plans),
    );
    assert_eq!(new_out.code, 0, "{}{}", new_out.stdout, new_out.stderr);
    assert_eq!(old_out.code, 0, "{}{}", old_out.stdout, old_out.stderr);
    assert_eq!(old_out.stdout, new_out.stdout);

    // A logged placement that is not what the plan reads from its request is named.
    let straight = all
        .iter()
        .find(|v| v["kind"] == "bet_accepted" && v["payload"]["request"]["bet"] == "straight")
        .and_then(|v| v["seq"].as_u64())
        .expect("a straight bet");
    let forged = reseal(&old, &key_pem, |seq, _, p| {
        if seq == straight {
            p["placements"][0]["covered"] = json!([18]);
        }
    });
    verifies_with(&forged, &public_pem).expect("verifies");
    let out = replay_command(&forged, &plans);
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.starts_with(&format!(
            "DISAGREE seq {straight} (bet_accepted): bet op1:t1.1.1: the logged placements are not what the plan reads from its request"
        )),
        "{}",
        out.stdout
    );
    // The request is the evidence: altered, the settlement derived from it differs.
    let forged = reseal(&export, &key_pem, |seq, _, p| {
        if seq == straight {
            p["request"]["numbers"] = json!([18]);
        }
    });
    let out = replay_command(&forged, &plans);
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("(round_settled): round op1:t1.1: the logged settlement differs"),
        "{}",
        out.stdout
    );
}

#[test]
fn entries_say_each_thing_once_sqlite() {
    entries_say_each_thing_once(Backend::Sqlite);
}

#[test]
fn entries_say_each_thing_once_postgres() {
    entries_say_each_thing_once(Backend::Postgres);
}
