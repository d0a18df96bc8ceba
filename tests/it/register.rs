//! Issue 16 point 2, end to end over HTTP against SQLite and PostgreSQL: the player register
//! (002 § 6(2), (3)). Exclusions and self-limits set over the API, each change logged with who
//! made it; bets of an excluded player or over a limit refused with a stable code and the
//! clause, in the round's recall; what the operator reports for its other games added to what
//! pitboss counted; one operator's register never touching another's; the export verifying
//! and replaying.

use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{json, Value};

use crate::server::{Backend, Storage, TestServer, ADMIN_KEY};

const PLAN: &str = "evolution-roulette@1";

struct House {
    server: TestServer,
    op: String,
    op2: String,
    auditor: String,
}

impl House {
    fn start(storage: &Storage) -> House {
        let server = TestServer::on(storage);
        let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
        let op2 = server.create_key(ADMIN_KEY, "operator", Some("op2"));
        let auditor = server.create_key(ADMIN_KEY, "auditor", None);
        House {
            server,
            op,
            op2,
            auditor,
        }
    }

    fn ok(&self, key: &str, path: &str, body: Value) -> Value {
        let (s, b) = self.server.post(key, path, body);
        assert_eq!(s, 200, "{path}: {b}");
        b
    }

    fn open_table(&self, key: &str, table: &str) {
        let (s, b) = self.server.post(
            key,
            "/v1/tables",
            json!({"table": table, "plan": PLAN, "mode": "live"}),
        );
        assert_eq!(s, 201, "{b}");
    }

    fn open_round(&self, key: &str, table: &str) -> String {
        let (s, b) = self
            .server
            .post(key, &format!("/v1/tables/{table}/rounds"), json!({}));
        assert_eq!(s, 201, "{b}");
        b["round"].as_str().expect("round").to_string()
    }

    /// Red/black bets of `(player, stake)`; the reply's results.
    fn bets(&self, key: &str, round: &str, bets: &[(&str, i64)]) -> Vec<Value> {
        let bets: Vec<Value> = bets
            .iter()
            .map(
                |(p, s)| json!({"player": p, "bet": "red_black", "field": "red", "stake_minor": s}),
            )
            .collect();
        let b = self.ok(
            key,
            &format!("/v1/rounds/{round}/bets"),
            json!({ "bets": bets }),
        );
        b["results"].as_array().expect("results").clone()
    }

    /// Settles the round on 17 (black: every red bet loses).
    fn settle_on_black(&self, key: &str, round: &str) {
        let path = format!("/v1/rounds/{round}/events");
        self.ok(key, &path, json!({"type": "close_betting"}));
        self.ok(
            key,
            &path,
            json!({"type": "spin", "number": 17, "ball_against_rotation": true, "ball_revolutions": 5}),
        );
    }

    fn player(&self, key: &str, player: &str) -> Value {
        let (s, _, b) = self
            .server
            .get_as(Some(key), &format!("/v1/players/{player}"));
        assert_eq!(s, 200, "{b}");
        b
    }

    fn register(&self, key: &str, player: &str, tail: &str, body: Value) -> (u16, Value) {
        self.server
            .post(key, &format!("/v1/players/{player}{tail}"), body)
    }
}

fn accepted(r: &Value) {
    assert_eq!(r["status"], "accepted", "{r}");
}

/// A refused bet: its code and the clause of 002 § 6 it names.
fn refused(r: &Value, code: &str, clause: &str) {
    assert_eq!(r["status"], "refused", "{r}");
    assert_eq!(r["code"], code, "{r}");
    assert!(
        r["clause"].as_str().is_some_and(|c| c.contains(clause)),
        "clause {clause:?}: {r}"
    );
}

fn refused_in_recall(h: &House, round: &str) -> Vec<(String, String)> {
    let (s, _, recall) = h
        .server
        .get_as(Some(&h.op), &format!("/v1/rounds/{round}/recall"));
    assert_eq!(s, 200, "{recall}");
    recall["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| e["entry"]["kind"] == "bet_refused")
        .map(|e| {
            let p = &e["entry"]["payload"];
            (
                p["player"].as_str().unwrap().to_string(),
                p["refusal"]["code"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn an_excluded_player_cannot_bet_with_this_operator(backend: Backend) {
    let storage = Storage::new(backend);
    let h = House::start(&storage);
    h.open_table(&h.op, "r1");
    h.open_table(&h.op2, "r2");

    // Self-excluded until 2099, recorded by a named person.
    let (s, b) = h.register(
        &h.op,
        "p1",
        "/exclusion",
        json!({"source": "self_exclusion", "until": "2099-01-01T00:00:00Z", "reason": "asked by the player", "person": "desk-7"}),
    );
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["excluded"], true, "{b}");
    assert_eq!(b["exclusion"]["source"], "self_exclusion");
    let round = h.open_round(&h.op, "r1");
    let results = h.bets(&h.op, &round, &[("p1", 500), ("p2", 500)]);
    refused(&results[0], "player_excluded", "002 § 6(2)");
    accepted(&results[1]);
    // Another operator's player of the same id is not touched, and sees nothing of it.
    let other = h.open_round(&h.op2, "r2");
    accepted(&h.bets(&h.op2, &other, &[("p1", 500)])[0]);
    let seen = h.player(&h.op2, "p1");
    assert_eq!(seen["excluded"], false, "{seen}");
    assert!(seen.get("exclusion").is_none(), "{seen}");
    let (s, b) = h.register(&h.op2, "p1", "/exclusion/lift", json!({"reason": "try"}));
    assert_eq!((s, b["code"].as_str()), (409, Some("not_excluded")), "{b}");
    // An exclusion from the national register that starts later takes effect then.
    let (s, b) = h.register(
        &h.op,
        "p3",
        "/exclusion",
        json!({"source": "national_register", "from": "2099-01-01T00:00:00Z"}),
    );
    assert_eq!((s, &b["excluded"]), (200, &json!(false)), "{b}");
    accepted(&h.bets(&h.op, &round, &[("p3", 500)])[0]);
    // Refused: an end before the start; a player id that is no id.
    let (s, b) = h.register(
        &h.op,
        "p4",
        "/exclusion",
        json!({"source": "self_exclusion", "from": "2027-01-01T00:00:00Z", "until": "2026-01-01T00:00:00Z"}),
    );
    assert_eq!((s, b["code"].as_str()), (422, Some("bad_exclusion")), "{b}");
    assert_eq!(b["clause"], "002 § 6(2)", "{b}");
    let (s, b) = h.register(
        &h.op,
        "p%20x",
        "/exclusion",
        json!({"source": "self_exclusion"}),
    );
    assert_eq!((s, b["code"].as_str()), (422, Some("bad_id")), "{b}");

    // Lifted, with a reason: the player bets again.
    let (s, b) = h.register(
        &h.op,
        "p1",
        "/exclusion/lift",
        json!({"reason": "the self-exclusion was entered for the wrong player", "person": "desk-8"}),
    );
    assert_eq!((s, &b["excluded"]), (200, &json!(false)), "{b}");
    assert!(b.get("exclusion").is_none(), "{b}");
    accepted(&h.bets(&h.op, &round, &[("p1", 500)])[0]);
    let (s, b) = h.register(&h.op, "p1", "/exclusion/lift", json!({"reason": "again"}));
    assert_eq!((s, b["code"].as_str()), (409, Some("not_excluded")), "{b}");
    assert_eq!(b["clause"], "002 § 6(2)", "{b}");

    // The refusal is in the round's recall; each change is in the log, with who made it.
    assert_eq!(
        refused_in_recall(&h, &round),
        [("p1".to_string(), "player_excluded".to_string())]
    );
    let (s, _, log) = h
        .server
        .get_as(Some(&h.auditor), "/v1/audit/entries?player=p1");
    assert_eq!(s, 200, "{log}");
    let changes: Vec<(String, Value)> = log["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| {
            e["entry"]["kind"]
                .as_str()
                .is_some_and(|k| k.starts_with("player_"))
        })
        .map(|e| {
            (
                e["entry"]["kind"].as_str().unwrap().to_string(),
                e["entry"]["payload"].clone(),
            )
        })
        .collect();
    assert_eq!(changes.len(), 2, "{changes:?}");
    assert_eq!(changes[0].0, "player_excluded");
    assert_eq!(changes[0].1["exclusion"]["until"], "2099-01-01T00:00:00Z");
    assert_eq!(changes[0].1["actor"]["person"], "desk-7");
    assert_eq!(changes[0].1["actor"]["role"], "operator");
    assert_eq!(changes[1].0, "player_exclusion_lifted");
    assert_eq!(changes[1].1["lifted"]["source"], "self_exclusion");
    assert_eq!(changes[1].1["actor"]["person"], "desk-8");
    // An operator's listing of the log holds only its own register's changes.
    let (s, _, mine) = h.server.get_as(Some(&h.op2), "/v1/audit/entries?player=p1");
    assert_eq!(s, 200);
    assert!(
        mine["entries"].as_array().unwrap().iter().all(
            |e| e["entry"]["kind"] == "bet_accepted" || e["entry"]["kind"] == "command_refused"
        ),
        "{mine}"
    );
    h.settle_on_black(&h.op, &round);
    h.settle_on_black(&h.op2, &other);
    crate::replay::exported_log_verifies_and_replays(&h.server, &h.auditor);
}

#[test]
fn an_excluded_player_cannot_bet_with_this_operator_sqlite() {
    an_excluded_player_cannot_bet_with_this_operator(Backend::Sqlite);
}

#[test]
fn an_excluded_player_cannot_bet_with_this_operator_postgres() {
    an_excluded_player_cannot_bet_with_this_operator(Backend::Postgres);
}

fn limit_of(view: &Value, name: &str) -> Value {
    view["limits"]
        .as_array()
        .expect("limits")
        .iter()
        .find(|l| l["limit"] == name)
        .cloned()
        .unwrap_or(Value::Null)
}

fn self_limits_refuse_bets_over_them(backend: Backend) {
    let storage = Storage::new(backend);
    let mut h = House::start(&storage);
    h.open_table(&h.op, "r1");
    let b = h.ok(
        &h.op,
        "/v1/players/p3/limits",
        json!({"stake_per_bet_minor": 1_000, "stakes_per_day_minor": 3_000, "net_loss_per_day_minor": 2_500, "person": "p3-self-service"}),
    );
    assert_eq!(limit_of(&b, "stake_per_bet")["value_minor"], 1_000, "{b}");
    assert_eq!(limit_of(&b, "net_loss_per_day")["value_minor"], 2_500);
    let round = h.open_round(&h.op, "r1");
    // Above the stake per bet.
    let r = h.bets(&h.op, &round, &[("p3", 1_500)]);
    refused(&r[0], "limit_exceeded", "002 § 6(3)");
    assert!(
        r[0]["detail"].as_str().unwrap().contains("stake per bet"),
        "{}",
        r[0]
    );
    // Two in one request count together; the third would make the potential loss (open
    // stakes + the stake) 3 000 > 2 500; a smaller one fits.
    let r = h.bets(
        &h.op,
        &round,
        &[("p3", 1_000), ("p3", 1_000), ("p3", 1_000), ("p3", 500)],
    );
    accepted(&r[0]);
    accepted(&r[1]);
    refused(&r[2], "limit_exceeded", "002 § 6(3)");
    assert!(
        r[2]["detail"]
            .as_str()
            .unwrap()
            .contains("net loss per day"),
        "{}",
        r[2]
    );
    accepted(&r[3]);
    let v = h.player(&h.op, "p3");
    assert_eq!(v["day"]["counted"]["staked_minor"], 2_500, "{v}");
    assert_eq!(v["open_stakes_minor"], 2_500, "{v}");
    assert_eq!(v["day"]["counted"]["net_loss_minor"], 0, "{v}");
    // The round settles on black: p3 loses 2 500, counted as net loss now.
    h.settle_on_black(&h.op, &round);
    let v = h.player(&h.op, "p3");
    assert_eq!(v["day"]["counted"]["net_loss_minor"], 2_500, "{v}");
    assert_eq!(v["month"]["counted"]["net_loss_minor"], 2_500, "{v}");
    assert_eq!(v["month"]["counted"]["staked_minor"], 2_500, "{v}");
    assert_eq!(v["open_stakes_minor"], 0, "{v}");
    assert_eq!(v["time_zone"], "Europe/Prague");
    let round2 = h.open_round(&h.op, "r1");
    let r = h.bets(&h.op, &round2, &[("p3", 100)]);
    refused(&r[0], "limit_exceeded", "002 § 6(3)");

    // Raised: it waits 24 hours (the bet is still refused); lowered: at once.
    let b = h.ok(
        &h.op,
        "/v1/players/p3/limits",
        json!({"stake_per_bet_minor": 50, "stakes_per_day_minor": 3_000, "net_loss_per_day_minor": 10_000}),
    );
    let raised = limit_of(&b, "net_loss_per_day");
    assert_eq!(raised["value_minor"], 2_500, "{b}");
    assert_eq!(raised["pending"]["value_minor"], 10_000, "{b}");
    let effective = chrono::DateTime::parse_from_rfc3339(
        raised["pending"]["effective_at"]
            .as_str()
            .expect("effective_at"),
    )
    .unwrap();
    let as_of = chrono::DateTime::parse_from_rfc3339(b["as_of"].as_str().unwrap()).unwrap();
    assert_eq!(effective - as_of, chrono::Duration::hours(24));
    assert_eq!(limit_of(&b, "stake_per_bet")["value_minor"], 50, "{b}");
    let r = h.bets(&h.op, &round2, &[("p3", 100)]);
    refused(&r[0], "limit_exceeded", "002 § 6(3)");
    assert!(r[0]["detail"].as_str().unwrap().contains("stake per bet"));
    // Setting the same limits again changes nothing and logs nothing.
    let before = h.server.metric("pitboss_log_entries");
    h.ok(
        &h.op,
        "/v1/players/p3/limits",
        json!({"stake_per_bet_minor": 50, "stakes_per_day_minor": 3_000, "net_loss_per_day_minor": 10_000}),
    );
    assert_eq!(h.server.metric("pitboss_log_entries"), before);
    let (s, b) = h.register(
        &h.op,
        "p3",
        "/limits",
        json!({"stakes_per_day_minor": 9_007_199_254_740_992_i64}),
    );
    assert_eq!(s, 400, "{b}");
    let (s, b) = h.register(&h.op, "p3", "/limits", json!({"stakes_per_day_minor": -5}));
    assert_eq!((s, b["code"].as_str()), (422, Some("bad_limits")), "{b}");
    assert_eq!(b["clause"], "002 § 6(3)");

    // What the player used in the operator's other games counts too (§ 6(3)).
    h.ok(
        &h.op,
        "/v1/players/p4/limits",
        json!({"stakes_per_day_minor": 5_000, "net_loss_per_month_minor": 100_000}),
    );
    let b = h.ok(
        &h.op,
        "/v1/players/p4/usage",
        json!({"day": {"staked_minor": 4_500, "net_loss_minor": 1_000}, "month": {"staked_minor": 160_000, "net_loss_minor": 99_000}}),
    );
    assert_eq!(b["day"]["reported"]["staked_minor"], 4_500, "{b}");
    assert_eq!(b["day"]["combined"]["staked_minor"], 4_500, "{b}");
    let r = h.bets(&h.op, &round2, &[("p4", 600)]);
    refused(&r[0], "limit_exceeded", "002 § 6(3)");
    assert!(
        r[0]["detail"].as_str().unwrap().contains("4500 reported"),
        "{}",
        r[0]
    );
    // A later report replaces the earlier one of its period.
    h.ok(
        &h.op,
        "/v1/players/p4/usage",
        json!({"day": {"staked_minor": 4_000, "net_loss_minor": 0}, "month": {"staked_minor": 160_000, "net_loss_minor": 90_000}}),
    );
    let r = h.bets(&h.op, &round2, &[("p4", 1_100), ("p4", 500)]);
    refused(&r[0], "limit_exceeded", "002 § 6(3)");
    accepted(&r[1]);
    let v = h.player(&h.op, "p4");
    assert_eq!(v["day"]["counted"]["staked_minor"], 500, "{v}");
    assert_eq!(v["day"]["reported"]["staked_minor"], 4_000, "{v}");
    assert_eq!(v["day"]["combined"]["staked_minor"], 4_500, "{v}");
    assert_eq!(v["month"]["reported"]["net_loss_minor"], 90_000, "{v}");
    let (s, b) = h.register(
        &h.op,
        "p4",
        "/usage",
        json!({"day": {"staked_minor": -1, "net_loss_minor": 0}}),
    );
    assert_eq!((s, b["code"].as_str()), (422, Some("bad_usage")), "{b}");

    // A voided round's stakes are no longer a potential loss.
    h.ok(
        &h.op,
        "/v1/players/p5/limits",
        json!({"net_loss_per_day_minor": 1_000}),
    );
    let r = h.bets(&h.op, &round2, &[("p5", 1_000), ("p5", 100)]);
    accepted(&r[0]);
    refused(&r[1], "limit_exceeded", "002 § 6(3)");
    h.ok(
        &h.op,
        &format!("/v1/rounds/{round2}/void"),
        json!({"reason": "wheel fault"}),
    );
    let v = h.player(&h.op, "p5");
    assert_eq!(v["open_stakes_minor"], 0, "{v}");
    assert_eq!(v["day"]["counted"]["staked_minor"], 1_000, "{v}");
    let round3 = h.open_round(&h.op, "r1");
    accepted(&h.bets(&h.op, &round3, &[("p5", 1_000)])[0]);
    h.settle_on_black(&h.op, &round3);

    // The refusals are in the rounds' recall.
    let codes = |round: &str| -> Vec<String> {
        refused_in_recall(&h, round)
            .into_iter()
            .map(|(p, c)| format!("{p}:{c}"))
            .collect()
    };
    assert_eq!(
        codes(&round),
        ["p3:limit_exceeded", "p3:limit_exceeded"],
        "{round}"
    );
    assert_eq!(
        codes(&round2),
        [
            "p3:limit_exceeded",
            "p3:limit_exceeded",
            "p4:limit_exceeded",
            "p4:limit_exceeded",
            "p5:limit_exceeded"
        ]
    );
    // The limits' changes are logged, each with when it takes effect.
    let (s, _, log) = h.server.get_as(
        Some(&h.auditor),
        "/v1/audit/entries?player=p3&kind=player_limits_set",
    );
    assert_eq!(s, 200, "{log}");
    let entries = log["entries"].as_array().expect("entries");
    assert_eq!(entries.len(), 2, "{log}");
    let first = &entries[0]["entry"]["payload"];
    assert_eq!(first["actor"]["person"], "p3-self-service");
    assert_eq!(
        first["changes"].as_array().map(Vec::len),
        Some(3),
        "{first}"
    );
    let second = &entries[1]["entry"]["payload"]["changes"];
    assert_eq!(
        second,
        &json!([
            {"limit": "stake_per_bet", "from_minor": 1_000, "to_minor": 50, "effective_at": entries[1]["entry"]["payload"]["at"].clone()},
            {"limit": "net_loss_per_day", "from_minor": 2_500, "to_minor": 10_000, "effective_at": raised["pending"]["effective_at"].clone()},
        ]),
        "{log}"
    );
    // A regulator reads the operator's player; the register survives a restart (it lives in
    // the store, not in memory).
    let regulator = h.server.create_key(ADMIN_KEY, "regulator", None);
    let (s, _, v) = h
        .server
        .get_as(Some(&regulator), "/v1/players/p4?operator=op1");
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["day"]["counted"]["staked_minor"], 500, "{v}");
    crate::replay::exported_log_verifies_and_replays(&h.server, &h.auditor);
    h.server.terminate();
    h.server = TestServer::on(&storage);
    let v = h.player(&h.op, "p4");
    assert_eq!(v["day"]["counted"]["staked_minor"], 500, "{v}");
    let round4 = h.open_round(&h.op, "r1");
    let r = h.bets(&h.op, &round4, &[("p3", 100), ("p4", 600)]);
    refused(&r[0], "limit_exceeded", "002 § 6(3)");
    refused(&r[1], "limit_exceeded", "002 § 6(3)");
    crate::replay::exported_log_verifies_and_replays(&h.server, &h.auditor);
}

#[test]
fn self_limits_refuse_bets_over_them_sqlite() {
    self_limits_refuse_bets_over_them(Backend::Sqlite);
}

#[test]
fn self_limits_refuse_bets_over_them_postgres() {
    self_limits_refuse_bets_over_them(Backend::Postgres);
}

/// A player's stakes are counted once, however the batches that carry them meet the one in
/// flight: a batch's register is read from the store while the batch before it is being
/// committed, and that batch's counts were added on top of the read even when the read
/// already held them (a stake counted twice, a bet refused under the limit). Sixteen clients
/// send one bet each at a time for the same player, twice the limit in all: exactly the limit
/// is accepted, and no bet sent after a refusal is accepted (a stake counted twice refused
/// bets early, and later batches, counted right, accepted them again).
fn concurrent_bets_are_counted_once_against_a_limit(backend: Backend) {
    let storage = Storage::new(backend);
    let h = House::start(&storage);
    h.open_table(&h.op, "r1");
    const STAKE: i64 = 100;
    const FITS: i64 = 600;
    h.ok(
        &h.op,
        "/v1/players/px/limits",
        json!({"stakes_per_day_minor": FITS * STAKE, "person": "px"}),
    );
    let round = h.open_round(&h.op, "r1");
    let full = AtomicBool::new(false);
    let (clients, each) = (48, (2 * FITS as usize).div_ceil(48));
    let outcomes: Vec<(usize, usize)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..clients)
            .map(|_| {
                s.spawn(|| {
                    let (mut ok, mut no) = (0, 0);
                    for _ in 0..each {
                        let after_a_refusal = full.load(Ordering::SeqCst);
                        let r = h.bets(&h.op, &round, &[("px", STAKE)]);
                        if r[0]["status"] == "accepted" {
                            // Stakes only grow here: once one bet was refused at the limit,
                            // a bet sent after that answer cannot fit.
                            assert!(!after_a_refusal, "accepted after a refusal: {}", r[0]);
                            ok += 1;
                        } else {
                            refused(&r[0], "limit_exceeded", "002 § 6(3)");
                            full.store(true, Ordering::SeqCst);
                            no += 1;
                        }
                    }
                    (ok, no)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|t| t.join().expect("client"))
            .collect()
    });
    let accepted: usize = outcomes.iter().map(|o| o.0).sum();
    let refused_n: usize = outcomes.iter().map(|o| o.1).sum();
    assert_eq!(accepted + refused_n, clients * each);
    assert_eq!(
        accepted as i64, FITS,
        "accepted {accepted}, refused {refused_n}"
    );
    let v = h.player(&h.op, "px");
    assert_eq!(v["day"]["counted"]["staked_minor"], FITS * STAKE, "{v}");
}

#[test]
fn concurrent_bets_are_counted_once_against_a_limit_sqlite() {
    concurrent_bets_are_counted_once_against_a_limit(Backend::Sqlite);
}

#[test]
fn concurrent_bets_are_counted_once_against_a_limit_postgres() {
    concurrent_bets_are_counted_once_against_a_limit(Backend::Postgres);
}
