//! Nothing acknowledged is lost: `pitboss serve` is killed with SIGKILL at random moments while
//! clients place bets (one per request and batched) and open, close, settle and void rounds,
//! every request with an Idempotency-Key. After each restart:
//!
//! * every bet whose request was answered `200` with `accepted` is in its round with the same
//!   player and stake (read back from the restarted server, before anything is retried);
//! * the one request each client had in flight when the server died (its answer is unknown:
//!   the client saw a connection error) is retried with the same key and body: if the log shows
//!   it was committed, the retry returns the stored answer and writes nothing; if not, it
//!   executes once (the log grows), and a second retry returns the same answer again;
//! * after that, every round's bets are exactly the acknowledged ones, and every round is
//!   either unsettled (no `result_recorded`, `round_settled` or `round_voided` entry) or fully
//!   settled or voided (the one settlement covers every accepted bet with its stake);
//! * the export verifies offline and replays to the same settlements.
//!
//! The kill times and bets vary from run to run (seeded from the clock, printed); the
//! assertions hold for every outcome of every race, so they do not.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::server::{rand_u64, Backend, Storage, TestServer, ADMIN_KEY};

/// Bet requests per round before the client closes betting.
const BET_REQUESTS_PER_ROUND: u32 = 6;
/// A client stops an epoch after this many requests even if the server is still up (it never
/// is: the killer always fires first; this only bounds a broken run).
const MAX_REQUESTS_PER_EPOCH: u32 = 5_000;

/// xorshift64*: small and good enough to choose bets and kill times.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    /// One bet per request, rounds settled by a live spin.
    Single,
    /// 2–8 bets per request, one of them sometimes refused; every third round voided.
    Batched,
    /// One or two bets per request on an RNG table: pitboss draws the result.
    Rng,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    OpenRound,
    Bets,
    CloseBetting,
    Spin,
    Draw,
    Void,
}

/// A request as sent, kept so that it can be retried byte for byte.
#[derive(Debug, Clone)]
struct Request {
    op: Op,
    key: String,
    path: String,
    body: String,
}

/// What the client knows of one round from the answers it got.
#[derive(Debug, Default)]
struct RoundLedger {
    id: String,
    /// Acknowledged bets: bet id → (player, stake).
    acked: BTreeMap<String, (String, i64)>,
    /// `bet_accepted` + `bet_refused` entries the answers account for.
    bet_entries: usize,
    bet_requests: u32,
    closed: bool,
    /// A bet was refused because the betting window had run out: that bet request closed
    /// betting (reason `deadline`), so a later close_betting is refused whether or not it
    /// was committed.
    window_ran_out: bool,
    /// `settled` or `voided`, once the client has that answer.
    outcome: Option<&'static str>,
    /// The settlements or refunds it was answered with.
    paid: Value,
}

#[derive(Debug, Default, Clone, Copy)]
struct Stats {
    answered: u64,
    bets_acked: u64,
    unknown_committed: u64,
    unknown_not_committed: u64,
    /// Close requests after the betting window ran out: the log cannot tell (never so far).
    unknown_ambiguous: u64,
}

struct Client {
    table: String,
    style: Style,
    rng: Rng,
    seq: u64,
    rounds_opened: u64,
    current: Option<RoundLedger>,
    finished: Vec<RoundLedger>,
    /// The request in flight when the server died.
    unknown: Option<Request>,
    stats: Stats,
}

fn bet_json(rng: &mut Rng, player: &str) -> Value {
    let stake = 100 * (1 + rng.below(5) as i64);
    match rng.below(4) {
        0 => json!({"player": player, "bet": "red_black", "field": "red", "stake_minor": stake}),
        1 => json!({"player": player, "bet": "dozen", "field": "dozen_2", "stake_minor": stake}),
        _ => {
            json!({"player": player, "bet": "straight", "numbers": [rng.below(37)], "stake_minor": stake})
        }
    }
}

impl Client {
    fn new(table: &str, style: Style, seed: u64) -> Client {
        Client {
            table: table.to_string(),
            style,
            rng: Rng::new(seed),
            seq: 0,
            rounds_opened: 0,
            current: None,
            finished: Vec::new(),
            unknown: None,
            stats: Stats::default(),
        }
    }

    fn next_request(&mut self) -> Request {
        self.seq += 1;
        let key = format!("crash-{}-{}-{:x}", self.table, self.seq, self.rng.next());
        let req = |op, path: String, body: Value| Request {
            op,
            key: key.clone(),
            path,
            body: body.to_string(),
        };
        let Some(round) = &self.current else {
            return req(
                Op::OpenRound,
                format!("/v1/tables/{}/rounds", self.table),
                json!({}),
            );
        };
        let events = format!("/v1/rounds/{}/events", round.id);
        if !round.closed && round.bet_requests < BET_REQUESTS_PER_ROUND {
            let player = format!("p{}", 1 + self.rng.below(5));
            let mut bets = Vec::new();
            let n = match self.style {
                Style::Single => 1,
                Style::Batched => 2 + self.rng.below(7),
                Style::Rng => 1 + self.rng.below(2),
            };
            for _ in 0..n {
                bets.push(bet_json(&mut self.rng, &player));
            }
            if self.style == Style::Batched && self.rng.below(3) == 0 {
                // 1 and 5 are not adjacent: refused by the layout rule, logged as bet_refused.
                bets.push(json!({"player": player, "bet": "split", "numbers": [1, 5], "stake_minor": 100}));
            }
            return req(
                Op::Bets,
                format!("/v1/rounds/{}/bets", round.id),
                json!({ "bets": bets }),
            );
        }
        if !round.closed {
            return req(Op::CloseBetting, events, json!({"type": "close_betting"}));
        }
        match self.style {
            Style::Rng => req(Op::Draw, events, json!({"type": "draw"})),
            Style::Batched if self.rounds_opened.is_multiple_of(3) => req(
                Op::Void,
                format!("/v1/rounds/{}/void", round.id),
                json!({"reason": "crash test: dealer error"}),
            ),
            _ => req(
                Op::Spin,
                events,
                json!({"type": "spin", "number": self.rng.below(37), "ball_against_rotation": true, "ball_revolutions": 5}),
            ),
        }
    }

    /// Folds an answer into the ledger; asserts it is one the request can get.
    fn apply(&mut self, req: &Request, status: u16, body: &Value) {
        self.stats.answered += 1;
        let what = format!("{:?} {} → {status} {body}", req.op, req.path);
        if req.op == Op::OpenRound {
            assert_eq!(status, 201, "{what}");
            self.rounds_opened += 1;
            self.current = Some(RoundLedger {
                id: body["round"].as_str().expect("round id").to_string(),
                ..RoundLedger::default()
            });
            return;
        }
        let round = self.current.as_mut().expect("a round is open");
        match req.op {
            Op::OpenRound => unreachable!(),
            Op::Bets => {
                assert_eq!(status, 200, "{what}");
                assert_eq!(body["round"], round.id.as_str(), "{what}");
                let results = body["results"].as_array().expect("results");
                round.bet_requests += 1;
                round.bet_entries += results.len();
                for r in results {
                    if r["code"] == "betting_closed" {
                        round.window_ran_out = true;
                    }
                    if r["status"] == "accepted" {
                        let bet = r["bet"].as_str().expect("bet id").to_string();
                        let player = r["player"].as_str().expect("player").to_string();
                        let stake = r["stake_minor"].as_i64().expect("stake");
                        assert!(
                            round.acked.insert(bet, (player, stake)).is_none(),
                            "a bet id acknowledged twice: {what}"
                        );
                        self.stats.bets_acked += 1;
                    }
                }
            }
            Op::CloseBetting => {
                // 409 only if the betting window ran out first (a bet request closed it).
                assert!(
                    status == 200 || (status == 409 && body["code"] == "out_of_order"),
                    "{what}"
                );
                round.closed = true;
            }
            Op::Spin | Op::Draw | Op::Void => {
                assert_eq!(status, 200, "{what}");
                let (phase, list, amount) = if req.op == Op::Void {
                    ("voided", "refunds", "refund_minor")
                } else {
                    ("settled", "settlements", "stake_minor")
                };
                assert_eq!(body["phase"], phase, "{what}");
                assert_covers_exactly(&round.acked, &body[list], amount, &what);
                round.outcome = Some(phase);
                round.paid = body[list].clone();
                let done = self.current.take().expect("current round");
                self.finished.push(done);
            }
        }
    }

    /// Sends requests until the server dies; the request that got no answer is kept.
    fn run_epoch(mut self, base: &str, key: &str) -> Client {
        let agent = agent();
        for _ in 0..MAX_REQUESTS_PER_EPOCH {
            let req = self.next_request();
            match send(&agent, base, key, &req) {
                Ok((status, body)) => self.apply(&req, status, &body),
                Err(_) => {
                    // Connection refused, reset or cut mid-answer: the outcome is unknown.
                    self.unknown = Some(req);
                    return self;
                }
            }
        }
        panic!("the server was never killed during the epoch");
    }
}

/// `list` (settlements or refunds) names exactly the acknowledged bets, each with its stake.
fn assert_covers_exactly(
    acked: &BTreeMap<String, (String, i64)>,
    list: &Value,
    amount: &str,
    what: &str,
) {
    let got: BTreeMap<String, (String, i64)> = list
        .as_array()
        .unwrap_or_else(|| panic!("no list in {what}"))
        .iter()
        .map(|s| {
            (
                s["bet"].as_str().expect("bet").to_string(),
                (
                    s["player"].as_str().expect("player").to_string(),
                    s[amount].as_i64().expect("amount"),
                ),
            )
        })
        .collect();
    assert_eq!(
        &got, acked,
        "settlement or refund ≠ acknowledged bets: {what}"
    );
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(20)))
        .build()
        .new_agent()
}

fn send(
    agent: &ureq::Agent,
    base: &str,
    key: &str,
    req: &Request,
) -> Result<(u16, Value), ureq::Error> {
    let mut resp = agent
        .post(&format!("{base}{}", req.path))
        .header("Content-Type", "application/json")
        .header("Authorization", &format!("Bearer {key}"))
        .header("Idempotency-Key", &req.key)
        .send(&req.body)?;
    let status = resp.status().as_u16();
    let content_type = crate::server::content_type(&resp);
    let bytes = resp.body_mut().read_to_vec()?;
    // A reply that arrived whole is held to the API description like every other.
    crate::spec::check_reply("POST", &req.path, status, &content_type, &bytes);
    let body: Value = serde_json::from_slice(&bytes).map_err(|e| ureq::Error::Io(e.into()))?;
    Ok((status, body))
}

/// Entries in the log, not counting the `state_snapshot` entries this server process wrote
/// (the writer appends one after a batch whenever one is due, whatever the client does), read
/// from one scrape of `/metrics`.
fn log_size(server: &TestServer) -> u64 {
    let (s, text) = server.get_text(None, "/metrics");
    assert_eq!(s, 200);
    crate::server::metric_in(&text, "pitboss_log_entries")
        - crate::server::metric_in(&text, "pitboss_snapshots_total")
}

/// The round's logged entries (kind, payload with the ids put back), in order, read from the
/// database.
fn recall(server: &TestServer, op: &str, round: &str) -> Vec<(String, Value)> {
    let (s, _, b) = server.get_as(Some(op), &format!("/v1/rounds/{round}/recall"));
    assert_eq!(s, 200, "recall {round}: {b}");
    b["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| {
            (
                e["entry"]["kind"].as_str().expect("kind").to_string(),
                pitboss::round::payload_of_entry(&e["entry"]),
            )
        })
        .collect()
}

/// Did the unanswered request's effect reach the log? `None` where the log cannot tell.
fn committed(server: &TestServer, op_key: &str, c: &Client, req: &Request) -> Option<bool> {
    if req.op == Op::OpenRound {
        let (s, _, t) = server.get_as(Some(op_key), &format!("/v1/tables/{}", c.table));
        assert_eq!(s, 200, "{t}");
        return Some(t["rounds"].as_u64().expect("rounds") > c.rounds_opened);
    }
    let round = c.current.as_ref().expect("a round is open");
    let entries = recall(server, op_key, &round.id);
    let count = |kinds: &[&str]| {
        entries
            .iter()
            .filter(|(k, _)| kinds.contains(&k.as_str()))
            .count()
    };
    Some(match req.op {
        Op::OpenRound => unreachable!(),
        Op::Bets => count(&["bet_accepted", "bet_refused"]) > round.bet_entries,
        // Only reachable if a round outlives its 15 s betting window (a very slow machine).
        Op::CloseBetting if round.window_ran_out => return None,
        Op::CloseBetting => count(&["betting_closed"]) > 0,
        Op::Spin | Op::Draw => count(&["round_settled"]) > 0,
        Op::Void => count(&["round_voided"]) > 0,
    })
}

/// Every bet the client was told was accepted is in its round, with the same player and stake;
/// finished rounds still read as they were answered.
fn assert_acknowledged_present(server: &TestServer, op_key: &str, c: &Client) {
    for round in c.finished.iter().chain(c.current.as_ref()) {
        let (s, _, r) = server.get_as(Some(op_key), &format!("/v1/rounds/{}", round.id));
        assert_eq!(s, 200, "round {} is gone after the restart: {r}", round.id);
        let stored: BTreeMap<&str, (&str, i64)> = r["bets"]
            .as_array()
            .expect("bets")
            .iter()
            .map(|b| {
                (
                    b["bet"].as_str().expect("bet"),
                    (
                        b["player"].as_str().expect("player"),
                        b["stake_minor"].as_i64().expect("stake"),
                    ),
                )
            })
            .collect();
        for (bet, (player, stake)) in &round.acked {
            assert_eq!(
                stored.get(bet.as_str()),
                Some(&(player.as_str(), *stake)),
                "acknowledged bet {bet} ({player}, {stake}) is missing or changed after the restart"
            );
        }
        if let Some(phase) = round.outcome {
            assert_eq!(r["phase"], phase, "round {}", round.id);
            let list = if phase == "voided" {
                &r["refunds"]
            } else {
                &r["settlements"]
            };
            assert_eq!(list, &round.paid, "round {}: the answer changed", round.id);
        }
    }
}

/// Retries the unanswered request with its key: the stored answer if it was committed (the log
/// does not grow), else one execution (it does); a second retry answers the same.
fn resolve_unknown(server: &TestServer, op_key: &str, c: &mut Client) {
    let Some(req) = c.unknown.take() else {
        return;
    };
    let was_committed = committed(server, op_key, c, &req);
    let agent = agent();
    let before = log_size(server);
    let (status, body) =
        send(&agent, &server.base, op_key, &req).expect("the restarted server answers");
    let after = log_size(server);
    if was_committed == Some(true) {
        assert_eq!(
            after, before,
            "a retry of a committed {:?} wrote to the log again: {body}",
            req.op
        );
        c.stats.unknown_committed += 1;
    } else if was_committed == Some(false) {
        assert!(
            after > before,
            "a retry of an uncommitted {:?} did not execute: {status} {body}",
            req.op
        );
        c.stats.unknown_not_committed += 1;
    } else {
        c.stats.unknown_ambiguous += 1;
    }
    c.apply(&req, status, &body);
    let again = send(&agent, &server.base, op_key, &req).expect("the server answers");
    assert_eq!(again, (status, body), "a second retry answered differently");
    assert_eq!(log_size(server), after, "a second retry wrote to the log");
}

/// With every request answered, each round's log holds exactly the acknowledged bets, and the
/// round is unsettled or wholly settled/voided, never in between.
fn assert_no_half_settled_round(server: &TestServer, op_key: &str, c: &Client) {
    for round in c.finished.iter().chain(c.current.as_ref()) {
        let entries = recall(server, op_key, &round.id);
        let what = format!("round {}: {:?}", round.id, entries);
        let logged: BTreeMap<String, (String, i64)> = entries
            .iter()
            .filter(|(k, _)| k == "bet_accepted")
            .map(|(_, p)| {
                (
                    p["bet"].as_str().expect("bet").to_string(),
                    (
                        p["player"].as_str().expect("player").to_string(),
                        p["stake_minor"].as_i64().expect("stake"),
                    ),
                )
            })
            .collect();
        assert_eq!(
            logged, round.acked,
            "the logged bets are not the acknowledged ones: {what}"
        );
        let of = |kind: &str| {
            entries
                .iter()
                .filter(|(k, _)| k == kind)
                .collect::<Vec<_>>()
        };
        let (results, settled, voided) = (
            of("result_recorded"),
            of("round_settled"),
            of("round_voided"),
        );
        assert!(settled.len() <= 1 && voided.len() <= 1, "{what}");
        assert_eq!(
            results.len(),
            settled.len(),
            "a result without its settlement: {what}"
        );
        assert!(settled.is_empty() || voided.is_empty(), "{what}");
        match round.outcome {
            Some("settled") => {
                let (_, p) = settled.first().unwrap_or_else(|| panic!("{what}"));
                assert_covers_exactly(&round.acked, &p["settlements"], "stake_minor", &what);
            }
            Some(_) => {
                let (_, p) = voided.first().unwrap_or_else(|| panic!("{what}"));
                assert_covers_exactly(&round.acked, &p["refunds"], "refund_minor", &what);
            }
            None => assert!(
                settled.is_empty() && voided.is_empty(),
                "settled or voided, but never answered so after the retry: {what}"
            ),
        }
        let (s, _, r) = server.get_as(Some(op_key), &format!("/v1/rounds/{}", round.id));
        assert_eq!(s, 200);
        match round.outcome {
            Some(phase) => assert_eq!(r["phase"], phase, "{what}"),
            None => assert!(
                r["phase"] == "betting" || r["phase"] == "betting_closed",
                "{what}: {r}"
            ),
        }
        assert_eq!(
            r["bets"].as_array().map(Vec::len),
            Some(round.acked.len()),
            "the round holds bets nobody was told of: {what}"
        );
    }
}

fn open_table(server: &TestServer, op: &str, table: &str, plan: &str, mode: &str) {
    let (s, b) = server.post(
        op,
        "/v1/tables",
        json!({"table": table, "plan": plan, "mode": mode}),
    );
    assert_eq!(s, 201, "{b}");
}

fn sigkill_scenario(backend: Backend, kills: usize) {
    let started = Instant::now();
    let seed = rand_u64();
    eprintln!("crash test on {backend:?}: seed {seed:#x}");
    let mut rng = Rng::new(seed);
    let storage = Storage::new(backend);
    let mut server = TestServer::on(&storage);
    let op = server.create_key(ADMIN_KEY, "operator", Some("crash"));
    let auditor = server.create_key(ADMIN_KEY, "auditor", None);
    open_table(&server, &op, "t-single", "evolution-roulette@1", "live");
    open_table(&server, &op, "t-batch", "alg-roulette@1", "live");
    open_table(&server, &op, "t-rng", "synot-roulette@1", "rng");
    open_table(&server, &op, "t-warm", "evolution-roulette@1", "live");
    // One settled round before the first kill, so that every export has a settlement to replay.
    let mut warm = Client::new("t-warm", Style::Single, rng.next());
    while warm.finished.is_empty() {
        let req = warm.next_request();
        let (s, b) = send(&agent(), &server.base, &op, &req).expect("warm-up request");
        warm.apply(&req, s, &b);
    }

    let mut clients = vec![
        Client::new("t-single", Style::Single, rng.next()),
        Client::new("t-batch", Style::Batched, rng.next()),
        Client::new("t-rng", Style::Rng, rng.next()),
    ];
    let mut snapshots_seen = false;
    for _ in 0..kills {
        let handles: Vec<_> = clients
            .into_iter()
            .map(|c| {
                let (base, key) = (server.base.clone(), op.clone());
                std::thread::spawn(move || c.run_epoch(&base, &key))
            })
            .collect();
        std::thread::sleep(Duration::from_millis(100 + rng.below(400)));
        server.kill(); // Child::kill: SIGKILL on Unix, no chance to flush or answer.
        clients = handles
            .into_iter()
            .map(|h| h.join().expect("client thread"))
            .collect();

        // The killed server's log is checked (snapshot + tail against a full replay) when it is
        // dropped: before the next one starts writing to it, or the check reads a log that grows.
        drop(server);
        server = TestServer::on(&storage);
        // Snapshots were written while the clients ran (the test servers store one every
        // 40 entries): the start read the latest and replayed only the log after it.
        let size = server.metric("pitboss_log_entries");
        let replayed = server.metric("pitboss_start_replayed_entries");
        if size > 2_000 {
            assert!(
                replayed < size,
                "the start replayed {replayed} of {size} entries: no snapshot was used"
            );
        }
        snapshots_seen |= replayed < size;
        for c in &clients {
            assert_acknowledged_present(&server, &op, c);
        }
        assert_acknowledged_present(&server, &op, &warm);
        for c in &mut clients {
            resolve_unknown(&server, &op, c);
        }
        for c in &clients {
            assert_no_half_settled_round(&server, &op, c);
        }
        crate::replay::exported_log_verifies_and_replays(&server, &auditor);
    }

    let total = clients.iter().fold(Stats::default(), |a, c| Stats {
        answered: a.answered + c.stats.answered,
        bets_acked: a.bets_acked + c.stats.bets_acked,
        unknown_committed: a.unknown_committed + c.stats.unknown_committed,
        unknown_not_committed: a.unknown_not_committed + c.stats.unknown_not_committed,
        unknown_ambiguous: a.unknown_ambiguous + c.stats.unknown_ambiguous,
    });
    let rounds: usize = clients.iter().map(|c| c.finished.len()).sum();
    eprintln!(
        "crash test on {backend:?}: {kills} kills, {} answered requests, {} bets acknowledged, \
         {rounds} rounds finished; unanswered requests: {} had committed, {} had not, {} could not \
         be told; {:.1} s",
        total.answered,
        total.bets_acked,
        total.unknown_committed,
        total.unknown_not_committed,
        total.unknown_ambiguous,
        started.elapsed().as_secs_f64()
    );
    // Each kill cut every client off mid-request, and each such request was resolved.
    assert_eq!(
        total.unknown_committed + total.unknown_not_committed + total.unknown_ambiguous,
        (kills * clients.len()) as u64
    );
    assert!(
        total.bets_acked > 0 && rounds > 0,
        "the clients made progress"
    );
    assert!(snapshots_seen, "some restart started from a snapshot");
}

#[test]
fn sigkill_loses_no_acknowledged_bet_and_leaves_no_half_settled_round_sqlite() {
    sigkill_scenario(Backend::Sqlite, 6);
}

#[test]
fn sigkill_loses_no_acknowledged_bet_and_leaves_no_half_settled_round_postgres() {
    sigkill_scenario(Backend::Postgres, 5);
}
