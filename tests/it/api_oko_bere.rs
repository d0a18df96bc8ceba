//! Oko bere (000, "Rules") end to end over HTTP: a player-versus-player table on plan
//! `oko-bere@1`, played one action at a time through `POST /v1/tables/{t}/actions`.
//!
//! Every test keeps its own ledger of the table's chips, built from the effects the service
//! returns and from nothing else: each seat's stack, the bank and each hand's stake in play,
//! and buy-ins less cash-outs. After every accepted action the ledger must balance
//! (stacks + bank + stakes in play = buy-ins − cash-outs) and must agree with the table the
//! service shows (`GET /v1/tables/{t}` → `game`); after every refused action the table must
//! be exactly as before. Card sequences follow the engine's unit tests
//! (`src/games/oko_bere/tests.rs`); amounts are the plan's (minimum bank 10 000, minimum bet
//! and raise 1 000, bets matched 1:1 by the bank).

use std::collections::BTreeMap;

use pitboss::round::{event_of_entry, State};
use serde_json::{json, Value};

use crate::server::{Backend, Storage, TestServer, ADMIN_KEY};

const PLAN: &str = "oko-bere@1";
/// The decision time of the plan copy the tests run on (the committed plan gives 30 s).
const DECISION_MS: u64 = 300;
const BANKER: u8 = 0;

// ----- Actions --------------------------------------------------------------------------------

fn join(seat: u8, player: &str, buy_in_minor: i64) -> Value {
    json!({"action": "join", "seat": seat, "player": player, "buy_in_minor": buy_in_minor})
}

fn card(seat: u8, card: &str) -> Value {
    json!({"action": "card", "seat": seat, "card": card})
}

fn bet(seat: u8, stake_minor: i64) -> Value {
    json!({"action": "bet", "seat": seat, "stake_minor": stake_minor})
}

fn draw(seat: u8) -> Value {
    json!({"action": "draw", "seat": seat})
}

fn raise(seat: u8, raise_minor: i64) -> Value {
    json!({"action": "draw", "seat": seat, "raise_minor": raise_minor})
}

fn stand(seat: u8) -> Value {
    json!({"action": "stand", "seat": seat})
}

fn replace(seat: u8) -> Value {
    json!({"action": "replace", "seat": seat})
}

fn start_round(cutter: u8, mala_domu: bool) -> Value {
    json!({"action": "start_round", "cutter": cutter, "mala_domu": mala_domu})
}

fn set_bank(seat: u8, bank_minor: i64) -> Value {
    json!({"action": "set_bank", "seat": seat, "bank_minor": bank_minor})
}

fn offer_duel(seat: u8, stake_minor: i64) -> Value {
    json!({"action": "offer_duel", "seat": seat, "stake_minor": stake_minor})
}

fn answer_duel(accept: bool) -> Value {
    json!({"action": "answer_duel", "accept": accept})
}

fn settled(seat: u8, winner: &str, reason: &str, stake: i64) -> Value {
    let pot = 2 * stake;
    let (to_player, to_bank) = if winner == "player" {
        (pot, 0)
    } else {
        (0, pot)
    };
    json!({"effect": "settled", "seat": seat, "winner": winner, "reason": reason,
           "stake_minor": stake, "to_player_minor": to_player, "to_bank_minor": to_bank})
}

fn staked(seat: u8, stake: i64, stake_total: i64, bank: i64) -> Value {
    json!({"effect": "staked", "seat": seat, "stake_minor": stake, "matched_minor": stake,
           "stake_total_minor": stake_total, "bank_minor": bank})
}

fn stood(seat: u8, total: u8, automatic: bool) -> Value {
    json!({"effect": "stood", "seat": seat, "total": total, "automatic": automatic})
}

/// The `settled` effects among `effects`.
fn settlements(effects: &[Value]) -> Vec<Value> {
    effects
        .iter()
        .filter(|e| e["effect"] == "settled")
        .cloned()
        .collect()
}

fn i(v: &Value) -> i64 {
    v.as_i64()
        .unwrap_or_else(|| panic!("{v} is not an integer"))
}

// ----- The ledger -----------------------------------------------------------------------------

/// The table's chips as the effects say they moved: computed by the test, not read from the
/// engine.
#[derive(Debug, Default, Clone)]
struct Ledger {
    stacks: BTreeMap<u8, i64>,
    bank: i64,
    /// Each hand's stake and the bank's match while in play.
    in_play: BTreeMap<u8, i64>,
    /// Buy-ins less cash-outs.
    chips_in: i64,
}

fn seat_of(e: &Value) -> u8 {
    u8::try_from(i(&e["seat"])).expect("a seat number")
}

impl Ledger {
    fn stack(&mut self, seat: u8) -> &mut i64 {
        self.stacks
            .get_mut(&seat)
            .unwrap_or_else(|| panic!("an effect names seat {seat}, which nobody holds"))
    }

    /// Moves the chips one effect moves. A pot leaving the round is the hand's whole stake in
    /// play (the entry is cleared, not decremented), so amounts that do not add up break the
    /// balance instead of vanishing.
    fn apply(&mut self, e: &Value) {
        let kind = e["effect"].as_str().expect("an effect names itself");
        match kind {
            "seated" => {
                let seat = seat_of(e);
                assert!(!self.stacks.contains_key(&seat), "seat {seat} seated twice");
                self.stacks.insert(seat, i(&e["buy_in_minor"]));
                self.chips_in += i(&e["buy_in_minor"]);
            }
            "bought_in" => {
                *self.stack(seat_of(e)) += i(&e["amount_minor"]);
                self.chips_in += i(&e["amount_minor"]);
            }
            "cashed_out" => {
                *self.stack(seat_of(e)) -= i(&e["amount_minor"]);
                self.chips_in -= i(&e["amount_minor"]);
            }
            "left" => {
                let seat = seat_of(e);
                assert_eq!(self.stacks.remove(&seat), Some(0), "seat {seat} left chips");
            }
            "bank_set" => {
                assert_eq!(self.bank, 0, "a bank set up over a bank");
                *self.stack(seat_of(e)) -= i(&e["bank_minor"]);
                self.bank = i(&e["bank_minor"]);
            }
            "staked" => {
                let seat = seat_of(e);
                let (stake, matched) = (i(&e["stake_minor"]), i(&e["matched_minor"]));
                assert_eq!(stake, matched, "the bank matches every stake 1:1: {e}");
                *self.stack(seat) -= stake;
                self.bank -= matched;
                *self.in_play.entry(seat).or_default() += stake + matched;
                assert_eq!(i(&e["bank_minor"]), self.bank, "{e}");
                assert_eq!(2 * i(&e["stake_total_minor"]), self.in_play[&seat], "{e}");
            }
            "bust" => {
                let seat = seat_of(e);
                assert_eq!(i(&e["to_bank_minor"]), 2 * i(&e["stake_minor"]), "{e}");
                self.in_play.remove(&seat);
                self.bank += i(&e["to_bank_minor"]);
            }
            "settled" => {
                let seat = seat_of(e);
                assert_eq!(
                    i(&e["to_player_minor"]) + i(&e["to_bank_minor"]),
                    2 * i(&e["stake_minor"]),
                    "1:1: the pot is the stake and the bank's match: {e}"
                );
                self.in_play.remove(&seat);
                *self.stack(seat) += i(&e["to_player_minor"]);
                self.bank += i(&e["to_bank_minor"]);
            }
            "stake_returned" => {
                let seat = seat_of(e);
                self.in_play.remove(&seat);
                *self.stack(seat) += i(&e["amount_minor"]);
                self.bank += i(&e["bank_returned_minor"]);
            }
            "bank_taken" => {
                *self.stack(seat_of(e)) += i(&e["bank_minor"]);
                self.bank = 0;
            }
            "round_ended" => {
                assert_eq!(i(&e["bank_minor"]), self.bank, "{e}");
                assert!(
                    self.in_play.is_empty(),
                    "a round ended with stakes in play: {:?}",
                    self.in_play
                );
            }
            "round_voided" => {
                self.in_play.clear();
                for r in e["refunds"].as_array().expect("refunds") {
                    *self.stack(seat_of(r)) += i(&r["amount_minor"]);
                }
                self.bank = i(&e["bank_restored_minor"]);
            }
            "bank_emptied" => assert_eq!(self.bank, 0, "{e}"),
            "banker_draw_tied" | "banker_chosen" | "round_started" | "duel_offered"
            | "duel_declined" | "duel_accepted" | "replaced" | "outright" | "stood" | "sat_out"
            | "banker_bust" | "mala_domu" | "game_ended" | "table_closed" => {}
            other => panic!("an effect this test does not know: {other} ({e})"),
        }
    }

    /// Stacks + bank + stakes in play = buy-ins − cash-outs, and nothing negative.
    fn balance(&self) {
        let stacks: i64 = self.stacks.values().sum();
        let in_play: i64 = self.in_play.values().sum();
        assert_eq!(
            stacks + self.bank + in_play,
            self.chips_in,
            "chips not conserved: stacks {:?} + bank {} + in play {:?} ≠ buy-ins − cash-outs {}",
            self.stacks,
            self.bank,
            self.in_play,
            self.chips_in
        );
        assert!(
            self.bank >= 0 && self.stacks.values().all(|s| *s >= 0),
            "{self:?}"
        );
    }

    /// The ledger is the table the service shows.
    fn agrees_with(&self, game: &Value) {
        assert_eq!(
            i(&game["chips_in_minor"]),
            self.chips_in,
            "buy-ins − cash-outs"
        );
        let seats: BTreeMap<u8, i64> = game["seats"]
            .as_object()
            .expect("seats")
            .iter()
            .map(|(k, v)| (k.parse().expect("a seat key"), i(&v["stack_minor"])))
            .collect();
        assert_eq!(seats, self.stacks, "the stacks");
        let bank = if game["bank"].is_null() {
            0
        } else {
            i(&game["bank"]["bank_minor"])
        };
        assert_eq!(bank, self.bank, "the bank");
        let mut in_play = BTreeMap::new();
        if let Some(hands) = game["phase"]["round"]["hands"].as_object() {
            for (k, h) in hands {
                assert_eq!(h["stake_minor"], h["matched_minor"], "{h}");
                let amount = i(&h["stake_minor"]) + i(&h["matched_minor"]);
                if h["status"] != "bust" && amount > 0 {
                    in_play.insert(k.parse::<u8>().expect("a seat key"), amount);
                }
            }
        }
        assert_eq!(in_play, self.in_play, "the stakes in play");
    }
}

// ----- The table under test -------------------------------------------------------------------

struct Oko {
    server: TestServer,
    op: String,
    table: String,
    ledger: Ledger,
    /// What the table waits for, from the last accepted action's reply.
    expected: Value,
    // Dropped after the server.
    storage: Storage,
    /// The plans with the decision time shortened to [`DECISION_MS`].
    plans: tempfile::TempDir,
}

impl Oko {
    /// A server on fresh storage with one open Oko bere table.
    fn start(backend: Backend) -> Oko {
        let storage = Storage::new(backend);
        let plans = crate::source::plans_with(&[(
            &format!("{PLAN}.toml"),
            &[(
                "decision_ms = 30_000",
                &format!("decision_ms = {DECISION_MS}"),
            )],
        )]);
        let server = TestServer::spawn(plans.path(), &storage, &[("PITBOSS_ADMIN_KEY", ADMIN_KEY)]);
        let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
        let table = "oko".to_string();
        let (s, b) = server.post(
            &op,
            "/v1/tables",
            json!({"table": table, "plan": PLAN, "mode": "live"}),
        );
        assert_eq!(s, 201, "{b}");
        // The table's id is scoped to its operator (`op1:oko`).
        assert_eq!(b["table"], format!("op1:{table}"), "{b}");
        let table = b["table"].as_str().expect("table id").to_string();
        Oko {
            server,
            op,
            table,
            ledger: Ledger::default(),
            expected: Value::Null,
            storage,
            plans,
        }
    }

    fn path(&self) -> String {
        format!("/v1/tables/{}/actions", self.table)
    }

    /// `GET /v1/tables/{t}`.
    fn table_json(&self) -> Value {
        let (s, _, t) = self
            .server
            .get_as(Some(&self.op), &format!("/v1/tables/{}", self.table));
        assert_eq!(s, 200, "{t}");
        t
    }

    fn game(&self) -> Value {
        self.table_json()["game"].clone()
    }

    fn stack(&self, seat: u8) -> i64 {
        i(&self.game()["seats"][seat.to_string()]["stack_minor"])
    }

    fn bank(&self) -> i64 {
        i(&self.game()["bank"]["bank_minor"])
    }

    fn hand(&self, seat: u8) -> Value {
        self.game()["phase"]["round"]["hands"][seat.to_string()].clone()
    }

    fn log_entries(&self) -> u64 {
        let (_, _, h) = self.server.get("/healthz");
        h["log_entries"].as_u64().expect("log_entries")
    }

    /// Applies an accepted reply: the ledger moves, balances and agrees with the table.
    fn accepted(&mut self, reply: &Value) -> Vec<Value> {
        let effects = reply["effects"].as_array().expect("effects").clone();
        for e in &effects {
            self.ledger.apply(e);
        }
        self.ledger.balance();
        let table = self.table_json();
        self.ledger.agrees_with(&table["game"]);
        self.expected = reply["expected"].clone();
        effects
    }

    /// The action is accepted; its effects.
    fn act(&mut self, action: Value) -> Vec<Value> {
        let (s, b) = self.server.post(&self.op, &self.path(), action.clone());
        assert_eq!(s, 200, "{action} refused: {b}");
        assert_eq!(b["action"], action);
        assert_eq!(
            (&b["table"], &b["automatic"]),
            (&json!(self.table), &json!(false))
        );
        self.accepted(&b)
    }

    /// Applies actions in order; every effect.
    fn acts(&mut self, actions: impl IntoIterator<Item = Value>) -> Vec<Value> {
        actions.into_iter().flat_map(|a| self.act(a)).collect()
    }

    /// `{"action": "automatic"}`, accepted: the whole reply.
    fn automatic(&mut self) -> Value {
        // The plan acts for a player only once his time has run out.
        std::thread::sleep(std::time::Duration::from_millis(DECISION_MS + 20));
        let (s, b) = self
            .server
            .post(&self.op, &self.path(), json!({"action": "automatic"}));
        assert_eq!(s, 200, "automatic refused: {b}");
        assert_eq!(b["automatic"], true, "{b}");
        self.accepted(&b);
        b
    }

    /// The action is refused and the table is exactly as before; the problem document.
    fn refused(&mut self, action: Value) -> Value {
        let before = self.table_json();
        let (s, _, b) = self.server.post_raw(
            Some(&self.op),
            Some(&format!("k-{:016x}", crate::server::rand_u64())),
            &self.path(),
            &action.to_string(),
        );
        assert!(matches!(s, 409 | 422), "{action} must be refused: {s} {b}");
        assert_eq!(b["status"], s, "{b}");
        assert_eq!(
            b["type"],
            format!("urn:pitboss:problem:{}", b["code"].as_str().unwrap_or("")),
            "{b}"
        );
        assert!(!b["detail"].as_str().unwrap_or("").is_empty(), "{b}");
        assert_eq!(
            self.table_json(),
            before,
            "a refused {action} changed the table"
        );
        b
    }

    /// Refused for `code`.
    fn refused_for(&mut self, action: Value, code: &str) -> Value {
        let b = self.refused(action);
        assert_eq!(b["code"], code, "{b}");
        b
    }

    /// Refused by a rule of the plan: the code, the plan and the clause.
    fn refused_by(&mut self, action: Value, code: &str, clause: &str) -> Value {
        let b = self.refused_for(action, code);
        assert_eq!(
            (&b["plan"], &b["clause"]),
            (&json!(PLAN), &json!(clause)),
            "{b}"
        );
        b
    }

    /// The decision the table waits for.
    fn decision(&self) -> &Value {
        assert_eq!(self.expected["expect"], "decision", "{}", self.expected);
        &self.expected
    }

    /// A new server process on the same storage: the state is rebuilt from the log.
    fn restart(&mut self) {
        self.server.kill();
        self.server = TestServer::spawn(
            self.plans.path(),
            &self.storage,
            &[("PITBOSS_ADMIN_KEY", ADMIN_KEY)],
        );
        self.op = self.server.create_key(ADMIN_KEY, "operator", Some("op1"));
    }
}

/// Seat 0 (the banker, 50 000) and seats 1, 2 and 3 (20 000 each); the banker appointed by
/// agreement with the minimum bank of 10 000.
fn table() -> Oko {
    let mut t = Oko::start(Backend::Sqlite);
    let fx = t.act(join(BANKER, "bankéř", 50_000));
    assert_eq!(
        fx,
        [json!({"effect": "seated", "seat": 0, "player": "bankéř", "buy_in_minor": 50_000})]
    );
    for seat in 1..=3 {
        t.act(join(seat, &format!("p{seat}"), 20_000));
    }
    t.act(json!({"action": "appoint_banker", "seat": BANKER}));
    t.act(set_bank(BANKER, 10_000));
    t
}

/// A round cut by seat 3: seats 1, 2, 3 play in that order, the banker last; the first cards
/// dealt as given (seat 1, 2, 3, banker).
fn round(t: &mut Oko, first: [&str; 4]) {
    let fx = t.act(start_round(3, false));
    assert_eq!(fx[0]["players"], json!([1, 2, 3]));
    for (seat, c) in [1, 2, 3, BANKER].into_iter().zip(first) {
        t.act(card(seat, c));
    }
}

// ----- The banker and the bank ----------------------------------------------------------------

/// "It is either agreed upon by the players" — and "A minimum amount for setting up a bank":
/// neither a banker who cannot set one up nor a bank below 100 Kč.
#[test]
fn the_banker_agreed_upon_sets_up_at_least_the_minimum_bank() {
    let mut t = Oko::start(Backend::Sqlite);
    t.acts([join(1, "a", 9_999), join(2, "b", 30_000)]);
    assert_eq!(
        t.expected,
        json!({"expect": "banker", "methods": ["by_agreement", "highest_card_drawn"]})
    );
    t.refused_by(
        json!({"action": "appoint_banker", "seat": 1}),
        "bank_below_minimum",
        "Rules",
    );
    let fx = t.act(json!({"action": "appoint_banker", "seat": 2}));
    assert_eq!(
        fx,
        [json!({"effect": "banker_chosen", "seat": 2, "by": "agreement"})]
    );
    assert_eq!(
        t.expected,
        json!({"expect": "bank", "seat": 2, "min_minor": 10_000, "stack_minor": 30_000})
    );
    t.refused_by(set_bank(2, 9_999), "bank_below_minimum", "Rules");
    t.refused_for(set_bank(1, 10_000), "not_your_turn");
    t.refused_for(set_bank(2, 30_001), "insufficient_chips");
    let fx = t.act(set_bank(2, 12_000));
    assert_eq!(
        fx,
        [json!({"effect": "bank_set", "seat": 2, "bank_minor": 12_000})]
    );
    assert_eq!((t.stack(2), t.bank()), (18_000, 12_000));
    assert_eq!(t.game()["bank"]["initial_minor"], 12_000);
    assert_eq!(
        t.expected,
        json!({"expect": "round", "banker": 2, "bank_minor": 12_000, "mala_domu_allowed": false})
    );
}

/// "or drawn from the deck of cards (the highest card gives)": ranks, not game values (the
/// king, worth 1, beats the ten); tied highest cards draw again, only the tied.
#[test]
fn the_highest_card_drawn_gives_the_banker() {
    let mut t = Oko::start(Backend::Sqlite);
    for seat in 1..=3 {
        t.act(join(seat, &format!("p{seat}"), 20_000));
    }
    let fx = t.act(json!({"action": "draw_for_banker", "seats": [3, 1, 2]}));
    assert!(fx.is_empty());
    assert_eq!(t.expected, json!({"expect": "banker_draw_card", "seat": 1}));
    t.refused_for(card(2, "Ac"), "not_your_turn");
    let fx = t.acts([card(1, "Ac"), card(2, "7d"), card(3, "As")]);
    assert_eq!(fx, [json!({"effect": "banker_draw_tied", "seats": [1, 3]})]);
    t.refused_for(card(2, "8d"), "not_your_turn");
    // The cards drawn stay out.
    t.refused_for(card(1, "Ac"), "card_not_in_shoe");
    let fx = t.acts([card(1, "Tc"), card(3, "Kd")]);
    assert_eq!(
        fx,
        [json!({"effect": "banker_chosen", "seat": 3, "by": "highest_card"})]
    );
    assert_eq!(
        t.expected,
        json!({"expect": "bank", "seat": 3, "min_minor": 10_000, "stack_minor": 20_000})
    );
    t.act(set_bank(3, 10_000));
    assert_eq!((t.stack(3), t.bank()), (10_000, 10_000));
}

// ----- Bets -----------------------------------------------------------------------------------

/// "minimal bet size is usually determined before the game": 10 Kč.
#[test]
fn a_bet_below_the_minimum_bet_is_refused() {
    let mut t = table();
    round(&mut t, ["9c", "9d", "9h", "9s"]);
    assert_eq!(
        t.decision()["bet"],
        json!({"min_minor": 1_000, "max_minor": 10_000})
    );
    t.refused_by(bet(1, 999), "below_min_bet", "Rules");
    t.refused_for(bet(1, 0), "bad_amount");
    t.refused_for(bet(1, -5), "bad_amount");
    let fx = t.act(bet(1, 1_000));
    assert_eq!(fx, [staked(1, 1_000, 1_000, 9_000)]);
    assert_eq!(t.stack(1), 19_000);
}

/// "it is possible to bet up to the bank": less than the minimum left in the bank may be bet
/// exactly (plan `rest_of_bank_below_min`).
#[test]
fn the_rest_of_the_bank_may_be_bet_below_the_minimum() {
    let mut t = table();
    round(&mut t, ["9c", "9d", "9h", "9s"]);
    t.acts([bet(1, 9_500), stand(1)]);
    assert_eq!(
        t.decision()["bet"],
        json!({"min_minor": 500, "max_minor": 500})
    );
    t.refused_by(bet(2, 400), "below_min_bet", "Rules");
    assert_eq!(t.act(bet(2, 500)), [staked(2, 500, 500, 0)]);
    assert_eq!(t.bank(), 0);
}

/// "it is possible to bet up to the bank": a bet above what the bank has not matched yet is
/// refused, all bets of the round together included.
#[test]
fn a_bet_above_the_bank_is_refused() {
    let mut t = table();
    round(&mut t, ["9c", "9d", "9h", "9s"]);
    t.refused_by(bet(1, 10_001), "above_bank", "Rules");
    t.acts([bet(1, 6_000), stand(1)]);
    assert_eq!(
        t.decision()["bet"],
        json!({"min_minor": 1_000, "max_minor": 4_000})
    );
    t.refused_by(bet(2, 5_000), "above_bank", "Rules");
    assert_eq!(t.act(bet(2, 4_000)), [staked(2, 4_000, 4_000, 0)]);
    t.act(stand(2));
    // Nothing is left for seat 3 to bet: he can only say "enough".
    assert_eq!(t.decision()["bet"], Value::Null);
    assert_eq!(t.act(stand(3)), [json!({"effect": "sat_out", "seat": 3})]);
    // 9 against the banker's 9: both ties go to the bank.
    let fx = t.act(stand(BANKER));
    assert_eq!(
        settlements(&fx),
        [
            settled(1, "bank", "tie", 6_000),
            settled(2, "bank", "tie", 4_000)
        ]
    );
    assert_eq!((t.stack(1), t.stack(2), t.bank()), (14_000, 16_000, 20_000));
}

/// "The player can also before drawing each card increase his bet. Whenever player bets, the
/// banker adds the same amount to the bet from the bank." A raise goes with the card, is held
/// to the minimum and to the bank, and wins 1:1 on the whole stake.
#[test]
fn a_raise_before_a_card_is_matched_by_the_bank() {
    let mut t = table();
    round(&mut t, ["9c", "9d", "9h", "8s"]);
    t.act(bet(1, 2_000));
    assert_eq!(
        t.decision()["raise"],
        json!({"min_minor": 1_000, "max_minor": 8_000})
    );
    t.refused_by(raise(1, 999), "below_min_bet", "Rules");
    t.refused_by(raise(1, 8_001), "above_bank", "Rules");
    // A second bet is not how a raise is made: it goes with the next card.
    t.refused_by(bet(1, 1_000), "already_bet", "Rules");
    let fx = t.act(raise(1, 3_000));
    assert_eq!(fx, [staked(1, 3_000, 5_000, 5_000)]);
    assert_eq!(
        t.expected,
        json!({"expect": "card", "seat": 1, "reason": "draw"})
    );
    let h = t.hand(1);
    assert_eq!(
        (i(&h["stake_minor"]), i(&h["matched_minor"])),
        (5_000, 5_000)
    );
    assert_eq!((t.stack(1), t.bank()), (15_000, 5_000));
    // 9 + 10 = 19 against the banker's 8 + 10 = 18.
    t.acts([card(1, "Tc"), stand(1), stand(2), stand(3), draw(BANKER)]);
    let fx = t.acts([card(BANKER, "Td"), stand(BANKER)]);
    assert_eq!(
        settlements(&fx),
        [settled(1, "player", "higher_total", 5_000)]
    );
    assert_eq!((t.stack(1), t.bank()), (25_000, 5_000));
}

// ----- The cut and the duel -------------------------------------------------------------------

/// "At the start of each round the banker asks one player to slice the deck." "The first
/// player on the right side of player slicing starts"; the banker is dealt last.
#[test]
fn the_cut_is_made_by_a_player_and_play_starts_right_of_the_cutter() {
    let mut t = table();
    t.refused_by(start_round(BANKER, false), "not_a_player", "Rounds");
    t.refused_by(start_round(7, false), "not_a_player", "Rounds");
    let fx = t.act(start_round(1, false));
    assert_eq!(
        fx,
        [
            json!({"effect": "round_started", "round": 1, "banker": 0, "cutter": 1,
                "players": [2, 3, 1], "mala_domu": false})
        ]
    );
    assert_eq!(
        t.expected,
        json!({"expect": "duel_or_first_card", "cutter": 1,
               "duel_stake": {"min_minor": 1_000, "max_minor": 10_000}, "first_card_to": 2})
    );
    t.refused_for(card(1, "9c"), "not_your_turn");
    t.acts([card(2, "9c"), card(3, "9d"), card(1, "9h")]);
    t.refused_for(card(2, "8c"), "not_your_turn");
    t.act(card(BANKER, "9s"));
    assert_eq!(t.decision()["seat"], 2);
    t.refused_for(bet(1, 1_000), "not_your_turn");
    assert_eq!(
        t.game()["phase"]["round"]["banker_hand"]["cards"],
        json!(["9s"])
    );
}

/// "It's important that the banker has the right to decline offer after hearing initial bet
/// size": a declined duel moves no chip and the round goes on as usual.
#[test]
fn a_duel_declined_after_hearing_the_stake_and_the_round_goes_on() {
    let mut t = table();
    t.act(start_round(3, false));
    t.refused_by(offer_duel(2, 5_000), "not_your_turn", "Rounds");
    assert_eq!(
        t.act(offer_duel(3, 5_000)),
        [json!({"effect": "duel_offered", "seat": 3, "stake_minor": 5_000})]
    );
    assert_eq!(
        t.expected,
        json!({"expect": "duel_answer", "banker": 0, "seat": 3, "stake_minor": 5_000})
    );
    t.refused_for(card(1, "9c"), "not_expected");
    assert_eq!(
        t.act(answer_duel(false)),
        [json!({"effect": "duel_declined", "seat": 3, "stake_minor": 5_000})]
    );
    assert_eq!((t.stack(3), t.bank()), (20_000, 10_000));
    t.acts([
        card(1, "9c"),
        card(2, "9d"),
        card(3, "9h"),
        card(BANKER, "9s"),
    ]);
    assert_eq!(t.decision()["seat"], 1);
    // Once a first card is dealt, no duel.
    t.refused_by(offer_duel(3, 5_000), "not_expected", "Rounds");
}

/// "the following round will be only between the two of them. The player bets certain amount
/// and the card at the bottom of sliced counts as first card for both. The bet in this case
/// can't be increased".
#[test]
fn a_duel_accepted_is_played_by_the_two_on_the_bottom_card_with_no_raise() {
    let mut t = table();
    t.act(start_round(3, false));
    t.refused_by(offer_duel(3, 10_001), "above_bank", "Rules");
    t.act(offer_duel(3, 5_000));
    let fx = t.act(answer_duel(true));
    assert_eq!(
        fx,
        [
            json!({"effect": "duel_accepted", "seat": 3, "stake_minor": 5_000}),
            staked(3, 5_000, 5_000, 5_000)
        ]
    );
    assert_eq!((t.stack(3), t.bank()), (15_000, 5_000));
    assert_eq!(t.expected, json!({"expect": "duel_card"}));
    t.refused_for(card(1, "9c"), "not_expected");
    t.act(json!({"action": "duel_card", "card": "9c"}));
    let r = t.game()["phase"]["round"].clone();
    assert_eq!(r["order"], json!([3]));
    assert_eq!(r["duel"], true);
    assert_eq!(r["hands"]["3"]["cards"], json!(["9c"]));
    assert_eq!(r["banker_hand"]["cards"], json!(["9c"]));
    let d = t.decision().clone();
    assert_eq!(
        (&d["seat"], &d["bet"], &d["raise"], &d["replace"]),
        (&json!(3), &Value::Null, &Value::Null, &Value::Null)
    );
    t.refused_by(raise(3, 1_000), "raise_not_allowed", "Rounds");
    t.refused_by(bet(3, 1_000), "raise_not_allowed", "Rounds");
    // The others take no part: seat 1 holds no hand.
    t.refused_for(stand(1), "not_your_turn");
    t.acts([draw(3), card(3, "Tc"), stand(3)]); // 19
    t.acts([draw(BANKER), card(BANKER, "Kc")]); // 10
    let fx = t.acts([draw(BANKER), card(BANKER, "Qc"), stand(BANKER)]); // 11
    assert_eq!(
        settlements(&fx),
        [settled(3, "player", "higher_total", 5_000)]
    );
    assert_eq!((t.stack(3), t.bank()), (25_000, 5_000));
    assert_eq!((t.stack(1), t.stack(2)), (20_000, 20_000));
}

/// "and the cards can't be exchanged": neither the player nor the banker replaces a
/// replaceable hand in a duel.
#[test]
fn a_duel_allows_no_card_exchange() {
    let mut t = table();
    t.acts([
        start_round(3, false),
        offer_duel(3, 2_000),
        answer_duel(true),
        json!({"action": "duel_card", "card": "7c"}),
    ]);
    assert_eq!(t.decision()["replace"], Value::Null);
    t.refused_by(replace(3), "replacement_not_allowed", "Rounds");
    t.acts([draw(3), card(3, "Tc"), stand(3)]); // 17
                                                // The banker holds the same first seven.
    assert_eq!(t.decision()["banker"], true);
    assert_eq!(t.decision()["replace"], Value::Null);
    t.refused_by(replace(BANKER), "replacement_not_allowed", "Rounds");
    let fx = t.acts([draw(BANKER), card(BANKER, "9c"), stand(BANKER)]); // 16
    assert_eq!(
        settlements(&fx),
        [settled(3, "player", "higher_total", 2_000)]
    );
    assert_eq!((t.stack(3), t.bank()), (22_000, 8_000));
}

/// The plan's automatic answer to a duel nobody answers in time is a refusal.
#[test]
fn a_duel_not_answered_in_time_is_declined() {
    let mut t = table();
    t.acts([start_round(3, false), offer_duel(3, 4_000)]);
    let b = t.automatic();
    assert_eq!(
        b["action"],
        json!({"action": "answer_duel", "accept": false})
    );
    assert_eq!(
        b["effects"],
        json!([{"effect": "duel_declined", "seat": 3, "stake_minor": 4_000}])
    );
    assert_eq!((t.stack(3), t.bank()), (20_000, 10_000));
}

// ----- Card values ----------------------------------------------------------------------------

/// "7 of hearts (also called šantala) which can be worth 7, 10 or 11 according to what is
/// most beneficial for the player": 7h + 9 is 20, which beats the banker's 19 (as 7 or 10 it
/// would lose or tie).
#[test]
fn santala_counts_eleven_when_best_for_its_holder() {
    let mut t = table();
    round(&mut t, ["7h", "9d", "9c", "Tc"]);
    t.acts([bet(1, 2_000), draw(1), card(1, "9s")]);
    assert_eq!(t.act(stand(1)), [stood(1, 20, false)]);
    t.acts([stand(2), stand(3), draw(BANKER), card(BANKER, "9h")]); // 19
    let fx = t.act(stand(BANKER));
    assert_eq!(
        settlements(&fx),
        [settled(1, "player", "higher_total", 2_000)]
    );
    assert_eq!((t.stack(1), t.bank()), (22_000, 8_000));
}

/// 7h + K + 10: 18, 21 or 22 — the šantala counts 10 and the hand is 21, which beats 20 (as 7
/// it would lose, as 11 overdraw).
#[test]
fn santala_counts_ten_when_best_for_its_holder() {
    let mut t = table();
    round(&mut t, ["7h", "9d", "9c", "Tc"]);
    t.acts([bet(1, 2_000), draw(1), card(1, "Kd"), draw(1)]);
    assert_eq!(t.act(card(1, "Ts")), [stood(1, 21, true)]);
    t.acts([stand(2), stand(3), draw(BANKER), card(BANKER, "9h")]); // 19
    let fx = t.acts([draw(BANKER), card(BANKER, "Jh"), stand(BANKER)]); // 20
    assert_eq!(
        settlements(&fx),
        [settled(1, "player", "higher_total", 2_000)]
    );
    assert_eq!(t.stack(1), 22_000);
}

/// 7h + K + Q + 10: 19, 22 or 23 — the šantala counts 7 and the hand stands at 19 instead of
/// overdrawing; 19 beats the banker's 18.
#[test]
fn santala_counts_seven_when_best_for_its_holder() {
    let mut t = table();
    round(&mut t, ["7h", "9d", "9c", "Tc"]);
    t.acts([
        bet(1, 2_000),
        draw(1),
        card(1, "Ks"),
        draw(1),
        card(1, "Qs"),
    ]);
    t.acts([draw(1), card(1, "Ts")]);
    assert_eq!(t.decision()["seat"], 1, "19: no overdraw");
    assert_eq!(t.act(stand(1)), [stood(1, 19, false)]);
    t.acts([stand(2), stand(3), draw(BANKER)]);
    let fx = t.acts([card(BANKER, "8c"), stand(BANKER)]); // 18
    assert_eq!(
        settlements(&fx),
        [settled(1, "player", "higher_total", 2_000)]
    );
}

/// The banker is a holder too: his šantala and ten make 21, which beats 11 and 10.
#[test]
fn santala_counts_best_for_the_banker_too() {
    let mut t = table();
    round(&mut t, ["Tc", "9d", "9c", "7h"]);
    t.acts([bet(1, 1_000), draw(1), card(1, "Kc"), stand(1)]); // 11
    t.acts([bet(2, 1_000), draw(2), card(2, "Jd"), stand(2)]); // 10
    t.acts([stand(3), draw(BANKER)]);
    let fx = t.act(card(BANKER, "Td"));
    assert_eq!(fx[0], stood(BANKER, 21, true));
    assert_eq!(
        settlements(&fx),
        [
            settled(1, "bank", "lower_total", 1_000),
            settled(2, "bank", "lower_total", 1_000)
        ]
    );
    assert_eq!(t.bank(), 12_000);
}

// ----- Outright wins --------------------------------------------------------------------------

/// "When someone receives two aces or ace and šantala he automatically wins independently of
/// hand of the other side": two aces beat the banker's 21; the player's turn ends.
#[test]
fn two_aces_win_outright() {
    let mut t = table();
    round(&mut t, ["Ac", "9d", "9c", "Tc"]);
    t.acts([bet(1, 2_000), draw(1)]);
    assert_eq!(
        t.act(card(1, "As")),
        [json!({"effect": "outright", "seat": 1, "hand": "two_aces"})]
    );
    assert_eq!(t.decision()["seat"], 2);
    t.acts([stand(2), stand(3), draw(BANKER)]);
    let fx = t.act(card(BANKER, "Ad")); // 21
    assert_eq!(settlements(&fx), [settled(1, "player", "outright", 2_000)]);
    assert_eq!((t.stack(1), t.bank()), (22_000, 8_000));
}

/// Ace and šantala, in either order, beat the banker's 21.
#[test]
fn ace_and_santala_win_outright() {
    let mut t = table();
    round(&mut t, ["7h", "9d", "9c", "Tc"]);
    t.acts([bet(1, 2_000), draw(1)]);
    assert_eq!(
        t.act(card(1, "Ac")),
        [json!({"effect": "outright", "seat": 1, "hand": "ace_and_santala"})]
    );
    t.acts([stand(2), stand(3), draw(BANKER)]);
    let fx = t.act(card(BANKER, "Ad")); // 21
    assert_eq!(settlements(&fx), [settled(1, "player", "outright", 2_000)]);
    assert_eq!((t.stack(1), t.bank()), (22_000, 8_000));
}

/// The banker's outright win against the player's: "if the player has less or the same
/// amount as banker, the money goes to the bank" (plan `outright_against_outright`).
#[test]
fn outright_against_outright_goes_to_the_bank() {
    let mut t = table();
    round(&mut t, ["Ac", "9d", "9c", "Ah"]);
    t.acts([bet(1, 2_000), draw(1), card(1, "As")]);
    t.acts([stand(2), stand(3), draw(BANKER)]);
    let fx = t.act(card(BANKER, "7h"));
    assert_eq!(
        fx[0],
        json!({"effect": "outright", "seat": 0, "hand": "ace_and_santala"})
    );
    assert_eq!(
        settlements(&fx),
        [settled(1, "bank", "both_outright", 2_000)]
    );
    assert_eq!((t.stack(1), t.bank()), (18_000, 12_000));
}

// ----- Replacement ----------------------------------------------------------------------------

/// "If the player (including banker) has on of the following hands, he can ask to get his
/// cards replced: First card seven"; the card put aside stays out of the round.
#[test]
fn first_card_seven_may_be_replaced() {
    let mut t = table();
    round(&mut t, ["7c", "9d", "9c", "Tc"]);
    assert_eq!(t.decision()["replace"], "first_card_seven");
    assert_eq!(
        t.act(replace(1)),
        [json!({"effect": "replaced", "seat": 1, "hand": "first_card_seven", "aside": ["7c"]})]
    );
    assert_eq!(
        t.expected,
        json!({"expect": "card", "seat": 1, "reason": "replacement"})
    );
    t.act(card(1, "Ks"));
    assert_eq!(t.hand(1)["cards"], json!(["Ks"]));
    t.acts([bet(1, 1_000), draw(1)]);
    t.refused_for(card(1, "7c"), "card_not_in_shoe");
}

/// "First card eight followed by seven": both cards replaced, the stake stays.
#[test]
fn eight_then_seven_may_be_replaced_and_the_stake_stays() {
    let mut t = table();
    round(&mut t, ["8c", "9d", "9c", "Tc"]);
    t.acts([bet(1, 3_000), draw(1), card(1, "7d")]);
    assert_eq!(t.decision()["replace"], "eight_then_seven");
    assert_eq!(
        t.act(replace(1)),
        [
            json!({"effect": "replaced", "seat": 1, "hand": "eight_then_seven", "aside": ["8c", "7d"]})
        ]
    );
    t.acts([card(1, "Ts"), card(1, "9s")]);
    let h = t.hand(1);
    assert_eq!(h["cards"], json!(["Ts", "9s"]));
    assert_eq!(i(&h["stake_minor"]), 3_000);
    assert_eq!((t.stack(1), t.bank()), (17_000, 7_000));
}

/// "Five images": five new cards; four pictures are not yet replaceable.
#[test]
fn five_pictures_may_be_replaced() {
    let mut t = table();
    round(&mut t, ["Jc", "9d", "9c", "Tc"]);
    t.act(bet(1, 1_000));
    for c in ["Qc", "Kc", "Jd"] {
        t.acts([draw(1), card(1, c)]);
        assert_eq!(t.decision()["replace"], Value::Null, "{c}");
    }
    t.acts([draw(1), card(1, "Qd")]);
    assert_eq!(t.decision()["replace"], "five_pictures");
    let fx = t.act(replace(1));
    assert_eq!(fx[0]["aside"], json!(["Jc", "Qc", "Kc", "Jd", "Qd"]));
    for c in ["7s", "8s", "Js", "Qs"] {
        t.act(card(1, c));
        assert_eq!(
            t.expected,
            json!({"expect": "card", "seat": 1, "reason": "replacement"})
        );
    }
    // Five new cards: 7 + 8 + 1 + 1 + 1 = 18, and the player decides again.
    t.act(card(1, "Ks"));
    assert_eq!(t.decision()["seat"], 1);
    assert_eq!(t.act(stand(1)), [stood(1, 18, false)]);
}

/// "Cards which totals to 15".
#[test]
fn a_total_of_fifteen_may_be_replaced() {
    let mut t = table();
    round(&mut t, ["7c", "9d", "9c", "Tc"]);
    t.acts([bet(1, 1_000), draw(1), card(1, "8c")]);
    assert_eq!(t.decision()["replace"], "total_fifteen");
    assert_eq!(
        t.act(replace(1)),
        [json!({"effect": "replaced", "seat": 1, "hand": "total_fifteen", "aside": ["7c", "8c"]})]
    );
    t.acts([card(1, "Ts"), card(1, "Ks")]);
    assert_eq!(t.act(stand(1)), [stood(1, 11, false)]);
    assert_eq!(i(&t.hand(1)["stake_minor"]), 1_000);
}

/// Any other hand is refused, the refusal naming the replaceable hands.
#[test]
fn other_hands_may_not_be_replaced() {
    let mut t = table();
    round(&mut t, ["9s", "9d", "9c", "Tc"]);
    assert_eq!(t.decision()["replace"], Value::Null);
    let b = t.refused_by(replace(1), "not_replaceable", "Rules");
    let detail = b["detail"].as_str().unwrap();
    assert!(detail.contains("Cards which totals to 15"), "{detail}");
    t.acts([bet(1, 1_000), draw(1), card(1, "7d")]); // 9 then 7: 16
    t.refused_by(replace(1), "not_replaceable", "Rules");
}

/// "(including banker)": the banker's first seven is replaced too.
#[test]
fn the_banker_may_replace_his_cards_too() {
    let mut t = table();
    round(&mut t, ["9s", "9d", "9c", "7c"]);
    t.acts([bet(1, 1_000), stand(1), stand(2), stand(3)]);
    let d = t.decision().clone();
    assert_eq!(
        (&d["banker"], &d["replace"]),
        (&json!(true), &json!("first_card_seven"))
    );
    t.act(replace(BANKER));
    t.act(card(BANKER, "Td"));
    assert_eq!(
        t.game()["phase"]["round"]["banker_hand"]["cards"],
        json!(["Td"])
    );
    // 9 against 10.
    let fx = t.act(stand(BANKER));
    assert_eq!(settlements(&fx), [settled(1, "bank", "lower_total", 1_000)]);
}

// ----- Overdraw, the banker's turn, settlement ------------------------------------------------

/// "if he overdraws, he immediately loses his bet, which goes to the bank" — the raise
/// included; with no active bet left the banker does not play.
#[test]
fn a_player_who_overdraws_loses_his_stake_to_the_bank_at_once() {
    let mut t = table();
    round(&mut t, ["Tc", "9d", "9c", "8c"]);
    t.acts([bet(1, 2_000), draw(1), card(1, "9s")]);
    assert_eq!(t.act(raise(1, 1_000)), [staked(1, 1_000, 3_000, 7_000)]);
    assert_eq!(
        t.act(card(1, "8s")),
        [
            json!({"effect": "bust", "seat": 1, "total": 27, "stake_minor": 3_000,
                "to_bank_minor": 6_000})
        ]
    );
    assert_eq!((t.stack(1), t.bank()), (17_000, 13_000));
    t.act(stand(2));
    let fx = t.act(stand(3));
    assert_eq!(
        fx,
        [
            json!({"effect": "sat_out", "seat": 3}),
            json!({"effect": "round_ended", "round": 1, "bank_minor": 13_000})
        ]
    );
    assert_eq!(t.game()["phase"], "between_rounds");
}

/// "When the game reaches the banker": he plays last, does not bet, may stand on any total
/// (he has no drawing rule), and the higher total wins 1:1.
#[test]
fn the_banker_plays_last_and_stands_at_will() {
    let mut t = table();
    round(&mut t, ["Tc", "9d", "9c", "Td"]);
    t.acts([bet(1, 2_000), draw(1), card(1, "9s"), stand(1)]); // 19
    t.acts([bet(2, 1_000), draw(2), card(2, "Kd"), stand(2)]); // 10
    t.act(stand(3));
    assert_eq!(
        t.expected,
        json!({"expect": "decision", "seat": 0, "banker": true, "bet": null, "raise": null,
               "draw": true, "stand": true, "replace": null})
    );
    t.refused_by(bet(BANKER, 1_000), "banker_does_not_bet", "Rules");
    t.refused_by(raise(BANKER, 1_000), "banker_does_not_bet", "Rules");
    t.refused_for(stand(1), "not_your_turn");
    // The banker stands on one card (10).
    let fx = t.act(stand(BANKER));
    assert_eq!(
        settlements(&fx),
        [
            settled(1, "player", "higher_total", 2_000),
            settled(2, "bank", "tie", 1_000)
        ]
    );
    assert_eq!(fx.last().unwrap()["effect"], "round_ended");
    assert_eq!((t.stack(1), t.stack(2), t.bank()), (22_000, 19_000, 9_000));
}

/// "if the player has less or the same amount as banker, the money goes to the bank".
#[test]
fn ties_go_to_the_bank() {
    let mut t = table();
    round(&mut t, ["Tc", "9d", "9c", "Td"]);
    t.acts([bet(1, 2_000), draw(1), card(1, "9s"), stand(1)]); // 19
    t.acts([stand(2), stand(3), draw(BANKER)]);
    let fx = t.acts([card(BANKER, "9h"), stand(BANKER)]); // 19
    assert_eq!(settlements(&fx), [settled(1, "bank", "tie", 2_000)]);
    assert_eq!((t.stack(1), t.bank()), (18_000, 12_000));
}

/// "In case the banker overdraws, he looses all active bets" — not the bets already lost by
/// overdrawing.
#[test]
fn an_overdrawn_banker_pays_every_active_bet() {
    let mut t = table();
    round(&mut t, ["Tc", "9d", "9c", "Td"]);
    t.acts([bet(1, 2_000), draw(1), card(1, "9s"), stand(1)]);
    t.acts([bet(2, 1_000), stand(2)]);
    t.acts([
        bet(3, 3_000),
        draw(3),
        card(3, "Ts"),
        draw(3),
        card(3, "8h"),
    ]); // 27
    assert_eq!(t.bank(), 10_000 - 6_000 + 6_000);
    t.acts([draw(BANKER), card(BANKER, "8c"), draw(BANKER)]); // 18
    let fx = t.act(card(BANKER, "9h")); // 27
    assert_eq!(
        fx[0],
        json!({"effect": "banker_bust", "seat": 0, "total": 27})
    );
    assert_eq!(
        settlements(&fx),
        [
            settled(1, "player", "banker_bust", 2_000),
            settled(2, "player", "banker_bust", 1_000)
        ]
    );
    assert_eq!(
        (t.stack(1), t.stack(2), t.stack(3), t.bank()),
        (22_000, 21_000, 17_000, 10_000)
    );
}

// ----- The end of the game --------------------------------------------------------------------

/// Seat 1 bets the whole bank and beats the banker.
fn empty_the_bank(t: &mut Oko) -> Vec<Value> {
    round(t, ["Tc", "9d", "9c", "Td"]);
    t.acts([bet(1, 10_000), draw(1), card(1, "9s"), stand(1)]);
    assert_eq!(t.decision()["bet"], Value::Null, "nothing left for seat 2");
    t.acts([
        stand(2),
        stand(3),
        draw(BANKER),
        card(BANKER, "8h"),
        stand(BANKER),
    ])
}

/// "Empty banks": "the banker is the last player that placed the last bet which emptied out
/// the bank" if the players go on; he sets up a new bank from his own chips.
#[test]
fn an_empty_bank_passes_to_the_player_whose_bet_emptied_it() {
    let mut t = table();
    let fx = empty_the_bank(&mut t);
    assert_eq!(
        fx[fx.len() - 3..],
        [
            settled(1, "player", "higher_total", 10_000),
            json!({"effect": "round_ended", "round": 1, "bank_minor": 0}),
            json!({"effect": "bank_emptied", "next_banker": 1})
        ]
    );
    assert_eq!(t.stack(1), 30_000);
    assert_eq!(t.game()["bank"], Value::Null);
    assert_eq!(
        t.expected,
        json!({"expect": "empty_bank", "next_banker": 1})
    );
    t.refused_for(set_bank(2, 10_000), "not_your_turn");
    t.refused_for(json!({"action": "leave", "seat": 1}), "seat_in_play");
    t.refused_by(set_bank(1, 9_000), "bank_below_minimum", "Rules");
    assert_eq!(
        t.act(set_bank(1, 15_000)),
        [
            json!({"effect": "banker_chosen", "seat": 1, "by": "emptied_the_bank"}),
            json!({"effect": "bank_set", "seat": 1, "bank_minor": 15_000})
        ]
    );
    // The old banker now plays: seat 0 is right of the cutter 3.
    let fx = t.act(start_round(3, false));
    assert_eq!(fx[0]["players"], json!([0, 2, 3]));
    assert_eq!(fx[0]["banker"], 1);
    assert_eq!(t.expected["first_card_to"], 0);
    assert_eq!(
        t.expected["duel_stake"],
        json!({"min_minor": 1_000, "max_minor": 15_000})
    );
}

/// Of several bets, the last one that left the bank with nothing unmatched names the banker.
#[test]
fn the_last_bet_that_emptied_the_bank_names_the_next_banker() {
    let mut t = table();
    round(&mut t, ["Tc", "9d", "9c", "Td"]);
    t.acts([bet(1, 6_000), draw(1), card(1, "9s"), stand(1)]);
    t.acts([bet(2, 4_000), draw(2), card(2, "Ts"), stand(2)]);
    let fx = t.acts([stand(3), draw(BANKER), card(BANKER, "7c"), stand(BANKER)]); // 17
    assert_eq!(
        settlements(&fx),
        [
            settled(1, "player", "higher_total", 6_000),
            settled(2, "player", "higher_total", 4_000)
        ]
    );
    assert_eq!(
        t.expected,
        json!({"expect": "empty_bank", "next_banker": 2})
    );
}

/// "the players decide whether they want to continue": they may stop, and a banker is then
/// chosen anew.
#[test]
fn after_an_empty_bank_the_players_may_stop() {
    let mut t = table();
    t.refused_for(json!({"action": "end_game"}), "not_expected");
    empty_the_bank(&mut t);
    assert_eq!(
        t.act(json!({"action": "end_game"})),
        [json!({"effect": "game_ended"})]
    );
    assert_eq!(t.expected["expect"], "banker");
}

/// Seat 1 bets the whole bank and overdraws: the bank doubles to 20 000.
fn double_the_bank(t: &mut Oko) {
    round(t, ["Tc", "9d", "9c", "Td"]);
    t.acts([
        bet(1, 10_000),
        draw(1),
        card(1, "9s"),
        draw(1),
        card(1, "8s"),
    ]);
    t.acts([stand(2), stand(3)]);
    assert_eq!(t.bank(), 20_000);
    assert_eq!(
        t.expected,
        json!({"expect": "round", "banker": 0, "bank_minor": 20_000, "mala_domu_allowed": true})
    );
}

/// "If the bank is double the initial size … he can at the start of the round call malá
/// domů".
#[test]
fn mala_domu_needs_twice_the_initial_bank() {
    let mut t = table();
    t.refused_by(
        start_round(3, true),
        "mala_domu_bank_too_small",
        "Malá domů",
    );
    double_the_bank(&mut t);
    let fx = t.act(start_round(3, true));
    assert_eq!(fx[0]["mala_domu"], true);
}

/// "if he receives an eight or a king as his first card he keeps the bank and new banker is
/// drawn": the bank goes back into his chips.
#[test]
fn mala_domu_an_eight_first_keeps_the_bank() {
    let mut t = table();
    double_the_bank(&mut t);
    t.act(start_round(3, true));
    let fx = t.acts([
        card(1, "Ac"),
        card(2, "Ad"),
        card(3, "Ah"),
        card(BANKER, "8d"),
    ]);
    assert_eq!(
        fx,
        [
            json!({"effect": "mala_domu", "card": "8d", "kept": true}),
            json!({"effect": "round_ended", "round": 2, "bank_minor": 20_000}),
            json!({"effect": "bank_taken", "seat": 0, "bank_minor": 20_000}),
            json!({"effect": "game_ended"})
        ]
    );
    assert_eq!(t.stack(BANKER), 40_000 + 20_000);
    assert_eq!(t.game()["bank"], Value::Null);
    assert_eq!(t.expected["expect"], "banker");
}

/// A king keeps the bank too; a stake already placed (a duel's) is returned with the bank's
/// match (plan `mala_domu.on_keep`).
#[test]
fn mala_domu_a_king_first_keeps_the_bank_and_returns_the_stakes() {
    let mut t = table();
    double_the_bank(&mut t);
    t.acts([
        start_round(3, true),
        offer_duel(3, 5_000),
        answer_duel(true),
    ]);
    assert_eq!(t.stack(3), 15_000);
    let fx = t.act(json!({"action": "duel_card", "card": "Kc"}));
    assert_eq!(
        fx,
        [
            json!({"effect": "mala_domu", "card": "Kc", "kept": true}),
            json!({"effect": "stake_returned", "seat": 3, "amount_minor": 5_000,
                   "bank_returned_minor": 5_000}),
            json!({"effect": "round_ended", "round": 2, "bank_minor": 20_000}),
            json!({"effect": "bank_taken", "seat": 0, "bank_minor": 20_000}),
            json!({"effect": "game_ended"})
        ]
    );
    assert_eq!((t.stack(3), t.stack(BANKER)), (20_000, 60_000));
}

/// "If he received other card the game continues normal way."
#[test]
fn mala_domu_another_first_card_and_the_round_goes_on() {
    let mut t = table();
    double_the_bank(&mut t);
    t.act(start_round(3, true));
    let fx = t.acts([
        card(1, "Ac"),
        card(2, "Ad"),
        card(3, "Ah"),
        card(BANKER, "Qd"),
    ]);
    assert_eq!(
        fx,
        [json!({"effect": "mala_domu", "card": "Qd", "kept": false})]
    );
    assert_eq!(t.bank(), 20_000);
    assert_eq!(t.decision()["seat"], 1);
    t.act(bet(1, 20_000 - 10_000));
    assert_eq!(t.bank(), 10_000);
}

// ----- Time-outs and refusals -----------------------------------------------------------------

/// Plan `policies.decision_timeout`: a player (or banker) who does not decide in time says
/// "enough"; `{"action": "automatic"}` applies it and the log marks it automatic.
#[test]
fn a_decision_not_made_in_time_is_enough() {
    let mut t = table();
    // Nobody owes a decision before the round.
    let b = t.refused_for(json!({"action": "automatic"}), "no_automatic_decision");
    assert_eq!(
        (&b["plan"], &b["clause"]),
        (&json!(PLAN), &json!("(not in the document: assumption)")),
        "{b}"
    );
    round(&mut t, ["9c", "9d", "9h", "Ts"]);
    // Not before the player's time has run out.
    let (s, b) = t
        .server
        .post(&t.op, &t.path(), json!({"action": "automatic"}));
    assert_eq!(
        (s, b["code"].as_str(), b["plan"].as_str()),
        (409, Some("decision_time_open"), Some(PLAN)),
        "{b}"
    );
    // Seat 1 has not bet: "enough" takes him out of the round.
    let b = t.automatic();
    assert_eq!(b["action"], json!({"action": "stand", "seat": 1}));
    assert_eq!(b["effects"], json!([{"effect": "sat_out", "seat": 1}]));
    t.act(bet(2, 3_000));
    let b = t.automatic();
    assert_eq!(b["action"], json!({"action": "stand", "seat": 2}));
    assert_eq!(b["effects"], json!([stood(2, 9, false)]));
    t.act(stand(3));
    // The banker too: he stands on 10 and beats 9.
    let b = t.automatic();
    assert_eq!(b["action"], json!({"action": "stand", "seat": 0}));
    assert_eq!(
        settlements(b["effects"].as_array().unwrap()),
        [settled(2, "bank", "lower_total", 3_000)]
    );
    assert_eq!((t.stack(2), t.bank()), (17_000, 13_000));
    // The log holds the automatic acts as such, the others as not.
    let (s, _, page) = t.server.get_as(Some(ADMIN_KEY), "/v1/audit/entries");
    assert_eq!(s, 200, "{page}");
    let automatic: Vec<(Value, bool)> = page["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["entry"])
        .filter(|e| e["kind"] == "table_action")
        .map(|e| {
            (
                e["payload"]["action"].clone(),
                e["payload"]["automatic"] == true,
            )
        })
        .filter(|(a, _)| a["action"] == "stand")
        .collect();
    assert_eq!(
        automatic,
        [
            (stand(1), true),
            (stand(2), true),
            (stand(3), false),
            (stand(0), true)
        ]
    );
}

/// Every refused action is explained — its code, the plan and the clause it enforces — is
/// logged as refused, and changes nothing at the table.
#[test]
fn a_refused_action_is_explained_and_changes_nothing() {
    let mut t = table();
    round(&mut t, ["9c", "9d", "9h", "9s"]);
    t.act(bet(1, 2_000));
    let before = t.table_json();
    let entries = t.log_entries();
    let b = t.refused_by(raise(1, 8_001), "above_bank", "Rules");
    assert_eq!(b["status"], 422);
    assert!(
        b["detail"].as_str().unwrap().contains("above the bank"),
        "{b}"
    );
    assert_eq!(t.log_entries(), entries + 1, "the refusal is logged");
    for (action, code) in [
        (bet(2, 1_000), "not_your_turn"),
        (json!({"action": "fly", "seat": 1}), "malformed_action"),
        (json!({"action": "bet", "seat": 1}), "malformed_action"),
        (card(1, "6h"), "not_expected"),
        (
            json!({"action": "buy_in", "seat": 1, "amount_minor": 1_000}),
            "round_in_progress",
        ),
        (json!({"action": "close_table"}), "round_in_progress"),
    ] {
        t.refused_for(action, code);
    }
    // Not even the count of actions moved.
    assert_eq!(t.table_json(), before);
    assert_eq!(before["actions"], 12);
    // The 32-card deck: a six is not in it.
    t.act(draw(1));
    t.refused_by(card(1, "6h"), "card_not_in_shoe", "Rules");
    t.refused_by(card(1, "9c"), "card_not_in_shoe", "Rules");
}

// ----- Whole games ----------------------------------------------------------------------------

/// The export verifies offline with the public key alone; folding its entries rebuilds the
/// table the service shows (each logged action re-applied, its effects compared).
fn exported_log_verifies_and_rebuilds_the_table(t: &Oko) {
    let auditor = t.server.create_key(ADMIN_KEY, "auditor", None);
    let (s, export) = t.server.get_text(Some(&auditor), "/v1/audit/export");
    assert_eq!(s, 200, "{export}");
    let (s, pem) = t.server.get_text(None, "/v1/audit/public-key");
    assert_eq!(s, 200);
    let key = pitboss_audit::note::public_key_from_pem(&pem).expect("public key PEM");
    let summary = pitboss_audit::verify::verify_export(
        std::io::Cursor::new(export.as_bytes()),
        pitboss_audit::verify::VerifyOptions {
            anchors: vec![key],
            trusted: None,
            check_canonical: true,
            ..Default::default()
        },
        |_| {},
    )
    .unwrap_or_else(|f| panic!("the export does not verify: {f:?}"));
    assert!(summary.entries > 0);
    // The plans the server ran on: the committed ones with the shorter decision time.
    let (plans, report) = pitboss::plan::PlanSet::load_dir(t.plans.path());
    assert_eq!(report.errors().count(), 0);
    let mut state = State::default();
    let mut actions: i64 = 0;
    for line in export.lines().skip(1) {
        let v: Value = serde_json::from_str(line).unwrap();
        if v.get("checkpoint").is_some() {
            continue;
        }
        let kind = v["kind"].as_str().unwrap();
        let event = event_of_entry(&v)
            .unwrap_or_else(|e| panic!("entry {v}: {e}"))
            .expect("an event");
        state
            .apply(&plans, &event)
            .unwrap_or_else(|e| panic!("replay: {e}"));
        actions += i64::from(kind == "table_action");
    }
    let served = t.table_json();
    assert_eq!(i(&served["actions"]), actions);
    let replayed = serde_json::to_value(&state.tables[&t.table]).unwrap();
    assert_eq!(
        replayed["game"], served["game"],
        "the replay and the service disagree"
    );
    assert_eq!(replayed["open"], served["open"]);
}

/// A whole evening at one table: a banker drawn, five players, rounds won, lost, tied and
/// overdrawn, raises, a replacement, a declined and an accepted duel, a void, buy-ins and
/// cash-outs between rounds, an emptied bank taken over, malá domů, a banker agreed upon and
/// the table closed. The ledger balances after every step; a restart mid-round and the
/// exported log both rebuild the same table.
fn whole_game(backend: Backend) {
    let mut t = Oko::start(backend);
    // The cards are the dealer system's: an RNG table is refused.
    let (s, b) = t.server.post(
        &t.op,
        "/v1/tables",
        json!({"table": "oko-rng", "plan": PLAN, "mode": "rng"}),
    );
    assert_eq!(
        (s, b["code"].as_str()),
        (422, Some("mode_not_supported")),
        "{b}"
    );

    // Players play against each other here: no round against the house; and a house table
    // takes no actions.
    let (s, b) = t
        .server
        .post(&t.op, &format!("/v1/tables/{}/rounds", t.table), json!({}));
    assert_eq!((s, b["code"].as_str()), (422, Some("not_in_game")), "{b}");
    let (s, b) = t.server.post(
        &t.op,
        "/v1/tables",
        json!({"table": "house", "plan": "evolution-roulette@1", "mode": "live"}),
    );
    assert_eq!(s, 201, "{b}");
    let (s, b) = t
        .server
        .post(&t.op, "/v1/tables/house/actions", join(0, "anna", 50_000));
    assert_eq!((s, b["code"].as_str()), (422, Some("not_in_game")), "{b}");

    t.act(join(0, "anna", 50_000));
    for seat in 1..=4 {
        t.act(join(seat, &format!("p{seat}"), 20_000));
    }
    t.refused_for(join(8, "p8", 20_000), "no_such_seat");
    t.refused_for(join(5, "p1", 20_000), "player_seated");
    // The highest card gives: the king beats the nine.
    t.act(json!({"action": "draw_for_banker", "seats": [0, 1]}));
    let fx = t.acts([card(0, "Kc"), card(1, "9d")]);
    assert_eq!(
        fx,
        [json!({"effect": "banker_chosen", "seat": 0, "by": "highest_card"})]
    );
    t.act(set_bank(0, 20_000));

    // Round 1, cut by seat 4: seats 1 to 4 play, every player beats the banker's 18.
    let body = start_round(4, false).to_string();
    let (s, _, first) = t
        .server
        .post_raw(Some(&t.op), Some("round-1"), &t.path(), &body);
    assert_eq!(s, 200, "{first}");
    let fx = t.accepted(&first);
    assert_eq!(fx[0]["players"], json!([1, 2, 3, 4]));
    // A retry (the same Idempotency-Key) is answered again, not applied again.
    let before = t.table_json();
    let (s, _, again) = t
        .server
        .post_raw(Some(&t.op), Some("round-1"), &t.path(), &body);
    assert_eq!((s, &again), (200, &first));
    assert_eq!(t.table_json(), before);
    // Another operator's table does not exist for it.
    let op2 = t.server.create_key(ADMIN_KEY, "operator", Some("op2"));
    let (s, b) = t.server.post(&op2, &t.path(), card(1, "Tc"));
    assert_eq!(
        (s, b["code"].as_str()),
        (404, Some("table_not_found")),
        "{b}"
    );
    assert_eq!(t.table_json(), before);
    t.acts([
        card(1, "Tc"),
        card(2, "9d"),
        card(3, "7h"),
        card(4, "8c"),
        card(0, "Td"),
    ]);
    t.acts([bet(1, 3_000), draw(1), card(1, "9s"), stand(1)]); // 19
    t.acts([
        bet(2, 2_000),
        draw(2),
        card(2, "Kd"),
        raise(2, 1_000),
        card(2, "Ts"),
    ]); // 20
    t.act(stand(2));
    t.acts([bet(3, 1_000), draw(3), card(3, "Ac")]); // outright
    t.acts([bet(4, 2_000), draw(4), card(4, "7d"), replace(4)]);
    t.acts([
        card(4, "9c"),
        card(4, "Jc"),
        draw(4),
        card(4, "9h"),
        stand(4),
    ]); // 19
    assert_eq!(t.bank(), 20_000 - 9_000);
    let fx = t.acts([draw(0), card(0, "8h"), stand(0)]); // 18
    assert_eq!(
        settlements(&fx),
        [
            settled(1, "player", "higher_total", 3_000),
            settled(2, "player", "higher_total", 3_000),
            settled(3, "player", "outright", 1_000),
            settled(4, "player", "higher_total", 2_000),
        ]
    );
    assert_eq!(t.bank(), 11_000);

    // Round 2, cut by seat 1: a duel declined, an overdraw, a time-out, the banker's 21.
    t.act(start_round(1, false));
    t.acts([offer_duel(1, 3_000), answer_duel(false)]);
    t.acts([
        card(2, "9c"),
        card(3, "Ac"),
        card(4, "Qc"),
        card(1, "7s"),
        card(0, "9h"),
    ]);
    t.acts([bet(2, 2_000), draw(2), card(2, "Td"), raise(2, 1_000)]);
    assert_eq!(t.act(card(2, "8c"))[0]["effect"], "bust"); // 27
    t.acts([bet(3, 1_000), stand(3)]); // 11
    assert_eq!(
        t.automatic()["effects"],
        json!([{"effect": "sat_out", "seat": 4}])
    );
    t.acts([
        bet(1, 1_000),
        draw(1),
        card(1, "Ks"),
        draw(1),
        card(1, "Ts"),
        stand(1),
    ]); // 18

    // A restart in the middle of the banker's turn rebuilds the very same table.
    let before = t.table_json();
    t.restart();
    assert_eq!(
        t.table_json(),
        before,
        "the restarted service shows another table"
    );
    t.acts([draw(0), card(0, "Qh")]); // 10
    let fx = t.acts([draw(0), card(0, "Ah")]); // 21
    assert_eq!(
        settlements(&fx),
        [
            settled(3, "bank", "lower_total", 1_000),
            settled(1, "bank", "lower_total", 1_000),
        ]
    );
    assert_eq!(t.bank(), 11_000 - 5_000 + 6_000 + 2_000 + 2_000);

    // Between rounds: chips come and go; none while a round is played.
    t.act(json!({"action": "buy_in", "seat": 4, "amount_minor": 5_000}));
    t.act(json!({"action": "cash_out", "seat": 2, "amount_minor": 1_000}));
    t.refused_for(
        json!({"action": "cash_out", "seat": 0, "amount_minor": 40_000}),
        "insufficient_chips",
    );

    // Round 3 is void: every stake and the bank as before it.
    t.act(start_round(2, false));
    t.acts([
        card(3, "9s"),
        card(4, "8d"),
        card(1, "9d"),
        card(2, "Jh"),
        card(0, "Kd"),
    ]);
    t.act(bet(3, 2_000));
    let bank = t.bank();
    let fx = t.act(json!({"action": "void_round", "reason": "a card from another deck"}));
    assert_eq!(
        fx,
        [
            json!({"effect": "round_voided", "round": 3, "reason": "a card from another deck",
                "refunds": [{"seat": 3, "amount_minor": 2_000}],
                "bank_restored_minor": bank + 2_000})
        ]
    );

    // Round 4: a duel accepted, won by the player.
    t.acts([
        start_round(3, false),
        offer_duel(3, 4_000),
        answer_duel(true),
    ]);
    t.acts([
        json!({"action": "duel_card", "card": "9d"}),
        draw(3),
        card(3, "Th"),
        stand(3),
    ]);
    let fx = t.acts([draw(0), card(0, "9s"), stand(0)]); // 19 against 18
    assert_eq!(
        settlements(&fx),
        [settled(3, "player", "higher_total", 4_000)]
    );
    assert_eq!(t.bank(), 12_000);

    // Round 5: seat 2's bet leaves the bank empty, but the banker wins both bets back.
    t.act(start_round(4, false));
    t.acts([
        card(1, "Tc"),
        card(2, "9c"),
        card(3, "8c"),
        card(4, "7c"),
        card(0, "Ts"),
    ]);
    t.acts([bet(1, 4_000), draw(1), card(1, "7d"), stand(1)]); // 17
    t.acts([bet(2, 8_000), draw(2), card(2, "Jd"), stand(2)]); // 10
    assert_eq!(t.bank(), 0);
    assert_eq!(t.decision()["bet"], Value::Null);
    t.acts([stand(3), stand(4)]);
    let fx = t.acts([draw(0), card(0, "9h"), draw(0), card(0, "Kh"), stand(0)]); // 20
    assert_eq!(
        settlements(&fx),
        [
            settled(1, "bank", "lower_total", 4_000),
            settled(2, "bank", "lower_total", 8_000),
        ]
    );
    assert_eq!(t.bank(), 24_000);

    // Round 6: seat 3 stakes the whole bank and wins it: the bank passes to him.
    t.act(start_round(4, false));
    t.acts([
        card(1, "Ac"),
        card(2, "9c"),
        card(3, "8c"),
        card(4, "7c"),
        card(0, "Ts"),
    ]);
    t.automatic();
    t.act(stand(2));
    assert_eq!(t.stack(3), 24_000);
    t.acts([bet(3, 24_000), draw(3), card(3, "Ad"), stand(3)]); // 19
    t.act(stand(4));
    let fx = t.acts([draw(0), card(0, "8d"), stand(0)]); // 18
    assert_eq!(
        fx[fx.len() - 3..],
        [
            settled(3, "player", "higher_total", 24_000),
            json!({"effect": "round_ended", "round": 6, "bank_minor": 0}),
            json!({"effect": "bank_emptied", "next_banker": 3})
        ]
    );
    t.act(set_bank(3, 10_000));

    // Round 7: seat 3's bank doubled by an overdraw; round 8: malá domů on a king.
    let fx = t.act(start_round(2, false));
    assert_eq!(fx[0]["players"], json!([4, 0, 1, 2]));
    t.acts([
        card(4, "Tc"),
        card(0, "9c"),
        card(1, "8c"),
        card(2, "7c"),
        card(3, "Ts"),
    ]);
    t.acts([
        bet(4, 10_000),
        draw(4),
        card(4, "9s"),
        draw(4),
        card(4, "8s"),
    ]); // 27
    t.acts([stand(0), stand(1), stand(2)]);
    assert_eq!(t.bank(), 20_000);
    t.act(start_round(2, true));
    let fx = t.acts([
        card(4, "Ac"),
        card(0, "Ad"),
        card(1, "Ah"),
        card(2, "As"),
        card(3, "Kd"),
    ]);
    assert_eq!(fx[fx.len() - 1], json!({"effect": "game_ended"}));
    assert_eq!(t.stack(3), 38_000 + 20_000);

    // A banker agreed upon; a player leaves; the table closes only with every chip out.
    t.act(json!({"action": "appoint_banker", "seat": 2}));
    t.act(set_bank(2, 10_000));
    let fx = t.act(json!({"action": "leave", "seat": 4}));
    assert_eq!(fx.last().unwrap()["effect"], "left");
    let (s, b) = t.server.post(
        &t.op,
        &format!("/v1/tables/{}/close", t.table),
        json!({"reason": "closing time"}),
    );
    assert_eq!(
        (s, b["code"].as_str()),
        (422, Some("chips_at_table")),
        "{b}"
    );
    let chips = t.ledger.chips_in;
    let fx = t.act(json!({"action": "close_table"}));
    let out: i64 = fx
        .iter()
        .filter(|e| e["effect"] == "cashed_out")
        .map(|e| i(&e["amount_minor"]))
        .sum();
    assert_eq!(out, chips, "every chip is cashed out");
    assert_eq!(t.ledger.chips_in, 0);
    assert_eq!(fx.last().unwrap(), &json!({"effect": "table_closed"}));
    t.refused_for(join(1, "late", 1_000), "table_closed");
    let (s, b) = t.server.post(
        &t.op,
        &format!("/v1/tables/{}/close", t.table),
        json!({"reason": "closing time"}),
    );
    assert_eq!(s, 200, "{b}");
    let closed = t.table_json();
    assert_eq!(closed["open"], false);
    t.refused_for(json!({"action": "automatic"}), "table_closed");

    exported_log_verifies_and_rebuilds_the_table(&t);
    t.restart();
    assert_eq!(
        t.table_json(),
        closed,
        "the restarted service shows another table"
    );
}

#[test]
fn oko_bere_whole_game_conserves_every_chip_on_sqlite() {
    whole_game(Backend::Sqlite);
}

#[test]
fn oko_bere_whole_game_conserves_every_chip_on_postgres() {
    whole_game(Backend::Postgres);
}
