//! Casino Hold'em end to end over HTTP: evolution-casino-holdem@1 and synot-casino-holdem@1,
//! live (the dealer system reports each card) and RNG (pitboss deals from the committed seed).
//!
//! Every money figure is worked out here from the plans' tables (game plan 002, "Casino
//! Hold'em (Evolution)" and "Casino Hold'em" of SYNOT): the Ante by the player's final hand
//! (royal flush 100:1, straight flush 20:1, four of a kind 10:1, full house 3:1, flush 2:1,
//! anything lower 1:1), the Call (twice the Ante) 1:1, returned when the dealer does not
//! qualify (a pair of 4s or better) and on a tie; Bonus/AA on the first five cards (a pair of
//! aces or better, 7:1 up to 100:1); Casino Razz on the same five read low.
//!
//! In every round all players share the one player hand ("Sázející obdrží dvě karty"): the
//! players differ in their bets and decisions only.

use std::time::Duration;

use pitboss::cards::Card;
use serde_json::{json, Value};

use crate::server::{Backend, Storage, TestServer, ADMIN_KEY};

const EVOLUTION: &str = "evolution-casino-holdem@1";
const SYNOT: &str = "synot-casino-holdem@1";

struct Ctx {
    server: TestServer,
    op: String,
    auditor: String,
}

impl Ctx {
    fn start(storage: &Storage) -> Ctx {
        Ctx::with_server(TestServer::on(storage))
    }

    fn with_server(server: TestServer) -> Ctx {
        let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
        let auditor = server.create_key(ADMIN_KEY, "auditor", None);
        Ctx {
            server,
            op,
            auditor,
        }
    }

    fn sqlite() -> (Storage, Ctx) {
        let storage = Storage::new(Backend::Sqlite);
        let ctx = Ctx::start(&storage);
        (storage, ctx)
    }

    fn open_table(&self, table: &str, plan: &str, mode: &str) {
        let (s, b) = self.server.post(
            &self.op,
            "/v1/tables",
            json!({"table": table, "plan": plan, "mode": mode}),
        );
        assert_eq!(s, 201, "{b}");
    }

    fn open_round(&self, table: &str) -> (String, Value) {
        let (s, b) = self
            .server
            .post(&self.op, &format!("/v1/tables/{table}/rounds"), json!({}));
        assert_eq!(s, 201, "{b}");
        (b["round"].as_str().expect("round id").to_string(), b)
    }

    fn bets(&self, round: &str, bets: Value) -> Value {
        let (s, b) = self.server.post(
            &self.op,
            &format!("/v1/rounds/{round}/bets"),
            json!({"bets": bets}),
        );
        assert_eq!(s, 200, "{b}");
        b
    }

    /// Bets that must all be accepted.
    fn accepted_bets(&self, round: &str, bets: Value) -> Value {
        let n = bets.as_array().map_or(0, Vec::len);
        let b = self.bets(round, bets);
        assert_eq!(b["accepted"], n, "{b}");
        b
    }

    fn event(&self, round: &str, event: Value) -> (u16, Value) {
        self.server
            .post(&self.op, &format!("/v1/rounds/{round}/events"), event)
    }

    fn close_betting(&self, round: &str) {
        let (s, b) = self.event(round, json!({"type": "close_betting"}));
        assert_eq!(s, 200, "{b}");
    }

    fn cards(&self, round: &str, cards: &[(&str, &str)]) -> (u16, Value) {
        let cards: Vec<Value> = cards
            .iter()
            .map(|(to, card)| json!({"to": to, "card": card}))
            .collect();
        self.event(round, json!({"type": "cards", "cards": cards}))
    }

    fn cards_ok(&self, round: &str, cards: &[(&str, &str)]) -> Value {
        let (s, b) = self.cards(round, cards);
        assert_eq!(s, 200, "{b}");
        b
    }

    fn decide(&self, round: &str, decisions: &[(&str, &str)]) -> (u16, Value) {
        let decisions: Vec<Value> = decisions
            .iter()
            .map(|(p, d)| json!({"player": p, "decision": d}))
            .collect();
        self.server.post(
            &self.op,
            &format!("/v1/rounds/{round}/decisions"),
            json!({"decisions": decisions}),
        )
    }

    fn decide_ok(&self, round: &str, decisions: &[(&str, &str)]) -> Value {
        let (s, b) = self.decide(round, decisions);
        assert_eq!(s, 200, "{b}");
        b
    }

    fn connection(&self, table: &str, player: &str, connected: bool) -> Value {
        let (s, b) = self.server.post(
            &self.op,
            &format!("/v1/tables/{table}/players"),
            json!({"player": player, "connected": connected}),
        );
        assert_eq!(s, 200, "{b}");
        b
    }

    fn round(&self, round: &str) -> Value {
        let (s, _, b) = self
            .server
            .get_as(Some(&self.op), &format!("/v1/rounds/{round}"));
        assert_eq!(s, 200, "{b}");
        b
    }

    /// A round dealt to the flop: opened, `bets` accepted, betting closed, the first seven
    /// cards of `hand` reported. Returns the round and the reply to the cards.
    fn to_the_flop(&self, table: &str, bets: Value, hand: &Hand) -> (String, Value) {
        let (round, _) = self.open_round(table);
        self.accepted_bets(&round, bets);
        self.close_betting(&round);
        let flop = self.cards_ok(&round, &hand.first_seven());
        (round, flop)
    }

    /// A whole live round: to the flop, the `decisions` (none when nobody owes one), the
    /// turn and the river. Returns the reply to the decisions and the settled reply.
    fn play(&self, table: &str, bets: Value, hand: &Hand, decisions: &[(&str, &str)]) -> Played {
        let (round, flop) = self.to_the_flop(table, bets, hand);
        let decided = if decisions.is_empty() {
            assert_eq!(flop["phase"], "betting_closed", "nobody decides: {flop}");
            Value::Null
        } else {
            assert_eq!(flop["phase"], "decisions", "{flop}");
            let d = self.decide_ok(&round, decisions);
            assert_eq!(d["phase"], "betting_closed", "everyone decided: {d}");
            d
        };
        let settled = self.cards_ok(&round, &hand.turn_and_river());
        assert_eq!(settled["phase"], "settled", "{settled}");
        assert_eq!(next_of(&settled), "complete", "{settled}");
        Played {
            round,
            decided,
            settled,
        }
    }
}

struct Played {
    round: String,
    decided: Value,
    settled: Value,
}

/// One round's cards: the player's two, the dealer's two, the flop, the turn and the river.
struct Hand {
    player: [&'static str; 2],
    dealer: [&'static str; 2],
    flop: [&'static str; 3],
    turn_river: [&'static str; 2],
}

const fn hand(
    player: [&'static str; 2],
    dealer: [&'static str; 2],
    flop: [&'static str; 3],
    turn_river: [&'static str; 2],
) -> Hand {
    Hand {
        player,
        dealer,
        flop,
        turn_river,
    }
}

impl Hand {
    /// The plans' dealing order: "nejprve první kartu … pro sázejícího, poté první kartu pro
    /// krupiéra …, následuje druhá karta … pro sázejícího a druhá karta … pro krupiéra. Poté
    /// … tři společné karty".
    fn first_seven(&self) -> Vec<(&'static str, &'static str)> {
        vec![
            ("player", self.player[0]),
            ("dealer", self.dealer[0]),
            ("player", self.player[1]),
            ("dealer", self.dealer[1]),
            ("board", self.flop[0]),
            ("board", self.flop[1]),
            ("board", self.flop[2]),
        ]
    }

    fn turn_and_river(&self) -> Vec<(&'static str, &'static str)> {
        vec![("board", self.turn_river[0]), ("board", self.turn_river[1])]
    }
}

/// What the deal expects next, as `card:<position>`, `decisions` or `complete`.
fn next_of(reply: &Value) -> String {
    let n = &reply["next"];
    match n["next"].as_str() {
        Some("card") => format!("card:{}", n["to"].as_str().unwrap_or("?")),
        Some(other) => other.to_string(),
        None => format!("none ({reply})"),
    }
}

fn cards(names: &[&str]) -> Vec<Card> {
    names.iter().map(|c| c.parse().expect("a card")).collect()
}

/// Cards as the service reports them (`[{"to": …, "card": …}]`), read back as cards.
fn dealt(v: &Value) -> Vec<(String, Card)> {
    v.as_array()
        .unwrap_or_else(|| panic!("no cards: {v}"))
        .iter()
        .map(|c| {
            (
                c["to"].as_str().unwrap_or_default().to_string(),
                parse_card(&c["card"]),
            )
        })
        .collect()
}

fn dealt_as(cards: &[(&str, &str)]) -> Vec<(String, Card)> {
    cards
        .iter()
        .map(|(to, c)| (to.to_string(), c.parse().expect("a card")))
        .collect()
}

/// The settlement of `player` in a settled reply (one per player: the Ante, the Call and the
/// side bets settle together as the player's hand).
fn settlement_of<'a>(reply: &'a Value, player: &str) -> &'a Value {
    reply["settlements"]
        .as_array()
        .and_then(|v| v.iter().find(|s| s["player"] == player))
        .unwrap_or_else(|| panic!("no settlement for {player}: {reply}"))
}

/// One bet type's payout: (bet type, outcome row, stake, returned, win).
type Paid<'a> = (&'a str, &'a str, i64, i64, i64);

/// Asserts the exact money of a player's settlement, bet type by bet type (in the engine's
/// order: Ante, Call, Bonus/AA, Casino Razz), the components, and the totals.
fn assert_paid(reply: &Value, player: &str, expected: &[Paid]) {
    let s = settlement_of(reply, player);
    let got: Vec<(String, String, i64, i64, i64)> = s["detail"]["payouts"]
        .as_array()
        .unwrap_or_else(|| panic!("no payouts: {s}"))
        .iter()
        .map(|p| {
            (
                p["bet_type"].as_str().unwrap_or_default().to_string(),
                p["outcome"].as_str().unwrap_or_default().to_string(),
                p["stake_minor"].as_i64().unwrap_or(-1),
                p["returned_minor"].as_i64().unwrap_or(-1),
                p["win_minor"].as_i64().unwrap_or(-1),
            )
        })
        .collect();
    let want: Vec<(String, String, i64, i64, i64)> = expected
        .iter()
        .map(|(b, o, st, r, w)| (b.to_string(), o.to_string(), *st, *r, *w))
        .collect();
    assert_eq!(got, want, "{player}: {s}");
    let components: Vec<(String, i64, i64, i64)> = s["components"]
        .as_array()
        .expect("components")
        .iter()
        .map(|c| {
            (
                c["outcome"].as_str().unwrap_or_default().to_string(),
                c["stake_minor"].as_i64().unwrap_or(-1),
                c["returned_minor"].as_i64().unwrap_or(-1),
                c["win_minor"].as_i64().unwrap_or(-1),
            )
        })
        .collect();
    let want_components: Vec<(String, i64, i64, i64)> = want
        .iter()
        .map(|(_, o, st, r, w)| (o.clone(), *st, *r, *w))
        .collect();
    assert_eq!(components, want_components, "{player}: {s}");
    let stake: i64 = want.iter().map(|p| p.2).sum();
    let returned: i64 = want.iter().map(|p| p.3).sum();
    let win: i64 = want.iter().map(|p| p.4).sum();
    assert_eq!(s["stake_minor"], stake, "{player}: {s}");
    assert_eq!(s["returned_minor"], returned, "{player}: {s}");
    assert_eq!(s["win_minor"], win, "{player}: {s}");
    assert_eq!(s["total_minor"], returned + win, "{player}: {s}");
}

/// The outcome row of the Ante for a hand class: Evolution has a row per class below the
/// straight, SYNOT one row "Postupka (Straight) nebo nižší".
fn ante_row(plan: &str, class: &str) -> String {
    let low = matches!(
        class,
        "straight" | "three_of_a_kind" | "two_pair" | "pair" | "high_card"
    );
    match (plan, low) {
        (SYNOT, true) => "straight_or_lower".into(),
        (_, true) if matches!(class, "pair" | "high_card") => "pair_or_less".into(),
        _ => class.into(),
    }
}

fn taken<'a>(reply: &'a Value, player: &str) -> &'a Value {
    reply["decisions"]
        .as_array()
        .and_then(|v| v.iter().find(|d| d["player"] == player))
        .unwrap_or_else(|| panic!("no decision of {player}: {reply}"))
}

/// A copy of the committed plans with the decision time shortened to `decision_ms`.
fn plans_with_decision_ms(decision_ms: u64) -> tempfile::TempDir {
    let to = format!("decision_ms = {decision_ms}");
    let edit: &[(&str, &str)] = &[("decision_ms = 20_000", &to)];
    let (evolution, synot) = (format!("{EVOLUTION}.toml"), format!("{SYNOT}.toml"));
    crate::source::plans_with(&[(&evolution, edit), (&synot, edit)])
}

fn short_decision_time(decision_ms: u64) -> (tempfile::TempDir, Storage, Ctx) {
    let plans = plans_with_decision_ms(decision_ms);
    let storage = Storage::new(Backend::Sqlite);
    let server = TestServer::spawn(plans.path(), &storage, &[("PITBOSS_ADMIN_KEY", ADMIN_KEY)]);
    let ctx = Ctx::with_server(server);
    (plans, storage, ctx)
}

// ----- the hands ---------------------------------------------------------------------------

/// The player pairs aces (A A K 9 7); the dealer pairs fives and qualifies. The first five
/// cards hold a pair of aces (Bonus/AA 7:1).
const ACES_OVER_FIVES: Hand = hand(["AH", "KH"], ["5C", "5D"], ["AD", "7S", "2C"], ["9H", "3S"]);

/// The player's K J 9 8 7 against a dealer who does not qualify with a pair of 3s, though it
/// beats the player.
const DEALER_PAIR_OF_3S: Hand = hand(["KH", "2C"], ["3S", "3D"], ["9C", "7D", "5S"], ["JH", "8S"]);
/// The same, the dealer holding the lowest qualifying hand: a pair of 4s.
const DEALER_PAIR_OF_4S: Hand = hand(["KH", "2C"], ["4S", "4D"], ["9C", "7D", "5S"], ["JH", "8S"]);

// ----- rules: bets -------------------------------------------------------------------------

/// "Vedlejší sázku lze podat v kombinaci s hlavní sázkou (Ante) a nelze ji podat samostatně";
/// the Call is the player's decision after the flop, never a bet of its own.
#[test]
fn a_side_bet_without_an_ante_is_refused() {
    let (_storage, ctx) = Ctx::sqlite();
    ctx.open_table("evo", EVOLUTION, "live");
    ctx.open_table("syn", SYNOT, "live");
    for (table, plan, sides) in [
        ("evo", EVOLUTION, vec!["bonus"]),
        ("syn", SYNOT, vec!["aa", "casino_razz"]),
    ] {
        let (round, _) = ctx.open_round(table);
        let mut bets: Vec<Value> = sides
            .iter()
            .map(|b| json!({"player": "p1", "bet": b, "stake_minor": 500}))
            .collect();
        bets.push(json!({"player": "p1", "bet": "call", "stake_minor": 2000}));
        let reply = ctx.bets(&round, Value::Array(bets));
        let results = reply["results"].as_array().unwrap();
        for (i, side) in sides.iter().enumerate() {
            assert_eq!(results[i]["status"], "refused", "{side}: {reply}");
            assert_eq!(results[i]["code"], "requires_bet", "{side}: {reply}");
            assert_eq!(results[i]["plan"], plan);
            assert_eq!(
                results[i]["clause"],
                "Tabulka nejvyšších sázek a odvislých nejvyšších výher"
            );
        }
        assert_eq!(
            results[sides.len()]["code"],
            "call_is_a_decision",
            "{reply}"
        );
        assert_eq!(reply["accepted"], 0, "{reply}");
        // With the Ante placed first (in the same request), the side bets are taken.
        let mut bets = vec![json!({"player": "p2", "bet": "ante", "stake_minor": 1000})];
        bets.extend(
            sides
                .iter()
                .map(|b| json!({"player": "p2", "bet": b, "stake_minor": 500})),
        );
        let reply = ctx.accepted_bets(&round, Value::Array(bets));
        for r in reply["results"].as_array().unwrap() {
            assert_eq!(r["player"], "p2");
        }
        // The side bet of another plan is not offered here.
        let other = if plan == EVOLUTION { "aa" } else { "bonus" };
        let reply = ctx.bets(
            &round,
            json!([{"player": "p2", "bet": other, "stake_minor": 500}]),
        );
        assert_eq!(reply["results"][0]["code"], "not_offered", "{reply}");
        let (_, r) = ctx.server.post(
            &ctx.op,
            &format!("/v1/rounds/{round}/void"),
            json!({"reason": "test over"}),
        );
        assert_eq!(
            r["refund_minor"],
            1000 + 500 * sides.len() as i64,
            "only the accepted bets are at stake: {r}"
        );
    }
}

/// "podáním sázky 2x Hrát ve výši dvojnásobku své sázky Ante": the call places a Call of twice
/// the Ante as a further bet (its id and stake in the reply, to debit from the wallet), and a
/// player who wins against a qualifying dealer is paid the Ante by the table and the Call 1:1.
#[test]
fn a_call_places_twice_the_ante_as_a_further_bet() {
    let (_storage, ctx) = Ctx::sqlite();
    for (table, plan, side) in [("evo", EVOLUTION, "bonus"), ("syn", SYNOT, "aa")] {
        ctx.open_table(table, plan, "live");
        let played = ctx.play(
            table,
            json!([
                {"player": "p1", "bet": "ante", "stake_minor": 1_250},
                {"player": "p1", "bet": side, "stake_minor": 500},
            ]),
            &ACES_OVER_FIVES,
            &[("p1", "call")],
        );
        let d = taken(&played.decided, "p1");
        assert_eq!(d["status"], "taken", "{}", played.decided);
        assert_eq!(d["decision"], "call");
        assert_eq!(d["automatic"], false);
        assert_eq!(d["stake_minor"], 2_500, "the Call is 2 × the Ante");
        let call_bet = d["bet"].as_str().expect("a call places a bet").to_string();
        assert_eq!(call_bet, format!("{}.3", played.round));
        // The round holds the Call as the player's bet, placed by the decision.
        let r = ctx.round(&played.round);
        let bet = r["bets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["bet"] == call_bet.as_str())
            .unwrap_or_else(|| panic!("no Call bet: {r}"));
        assert_eq!(bet["player"], "p1");
        assert_eq!(bet["stake_minor"], 2_500);
        assert_eq!(bet["placements"][0]["bet_type"], "call");
        assert_eq!(bet["placements"][0]["placed_by"], "decision");
        // Pair of aces against the dealer's qualifying pair of fives: Ante 1:1, Call 1:1,
        // and the first five cards' pair of aces pays the side bet 7:1.
        let side_row = if plan == EVOLUTION {
            "pair_of_aces"
        } else {
            "pair_of_aces_to_straight"
        };
        assert_paid(
            &played.settled,
            "p1",
            &[
                ("ante", &ante_row(plan, "pair"), 1_250, 1_250, 1_250),
                ("call", "win", 2_500, 2_500, 2_500),
                (side, side_row, 500, 500, 3_500),
            ],
        );
        let s = settlement_of(&played.settled, "p1");
        assert_eq!(
            s["bets"],
            json!([
                format!("{}.1", played.round),
                format!("{}.2", played.round),
                call_bet
            ]),
            "the hand covers the Ante, the side bet and the Call"
        );
        assert_eq!(s["detail"]["result"], "player_wins");
        assert_eq!(s["detail"]["dealer_qualifies"], true);
        assert_eq!(played.settled["stake_minor"], 1_250 + 500 + 2_500);
        assert_eq!(played.settled["paid_minor"], 2_500 + 5_000 + 4_000);
    }
}

/// "Položit karty … a o své sázky přijít": a fold loses the Ante and places nothing.
#[test]
fn a_fold_loses_the_ante_and_places_no_call() {
    let (_storage, ctx) = Ctx::sqlite();
    for (table, plan) in [("evo", EVOLUTION), ("syn", SYNOT)] {
        ctx.open_table(table, plan, "live");
        let played = ctx.play(
            table,
            json!([
                {"player": "p1", "bet": "ante", "stake_minor": 1_000},
                {"player": "p2", "bet": "ante", "stake_minor": 1_000},
            ]),
            // The folding player held the winning hand: the fold alone decides.
            &ACES_OVER_FIVES,
            &[("p1", "fold"), ("p2", "call")],
        );
        let d = taken(&played.decided, "p1");
        assert_eq!(
            (&d["decision"], &d["stake_minor"]),
            (&json!("fold"), &json!(0))
        );
        assert!(d.get("bet").is_none(), "a fold places no bet: {d}");
        assert_paid(&played.settled, "p1", &[("ante", "lose", 1_000, 0, 0)]);
        assert_eq!(
            settlement_of(&played.settled, "p1")["detail"]["result"],
            "folded"
        );
        assert_paid(
            &played.settled,
            "p2",
            &[
                ("ante", &ante_row(plan, "pair"), 1_000, 1_000, 1_000),
                ("call", "win", 2_000, 2_000, 2_000),
            ],
        );
        let r = ctx.round(&played.round);
        assert_eq!(r["bets"].as_array().unwrap().len(), 3, "{r}");
    }
}

/// "Výplatní tabulka › Sázka Ante": a winning player's Ante is paid by the final hand (best
/// five of seven): royal flush 100:1, straight flush 20:1, four of a kind 10:1, full house 3:1,
/// flush 2:1, straight or lower 1:1; the Call 1:1.
#[test]
fn the_ante_is_paid_by_the_players_final_hand_per_the_plans_table() {
    // (class, ratio, hand): every dealer qualifies and loses.
    let table: [(&str, i64, Hand); 9] = [
        ("pair", 1, ACES_OVER_FIVES),
        (
            "two_pair",
            1,
            hand(["KH", "9C"], ["6C", "6D"], ["KD", "9D", "2S"], ["4H", "7C"]),
        ),
        (
            "three_of_a_kind",
            1,
            hand(["8H", "8C"], ["6C", "6D"], ["8D", "KS", "2S"], ["4H", "JC"]),
        ),
        (
            "straight",
            1,
            hand(["9C", "TD"], ["4H", "4S"], ["JS", "QH", "2D"], ["8C", "5H"]),
        ),
        (
            "flush",
            2,
            hand(["2H", "9H"], ["4C", "4D"], ["KH", "7H", "3S"], ["JH", "8C"]),
        ),
        (
            "full_house",
            3,
            hand(["7S", "7D"], ["9C", "9D"], ["7H", "KS", "KD"], ["2C", "3H"]),
        ),
        (
            "four_of_a_kind",
            10,
            hand(["QS", "QD"], ["5C", "5D"], ["QH", "QC", "2S"], ["8D", "9H"]),
        ),
        (
            "straight_flush",
            20,
            hand(["5S", "6S"], ["8C", "8D"], ["7S", "8S", "9S"], ["2D", "3H"]),
        ),
        (
            "royal_flush",
            100,
            hand(["AD", "KD"], ["4H", "4S"], ["QD", "JD", "TD"], ["2C", "3C"]),
        ),
    ];
    let (_storage, ctx) = Ctx::sqlite();
    for (t, plan) in [("evo", EVOLUTION), ("syn", SYNOT)] {
        ctx.open_table(t, plan, "live");
        for (class, ratio, h) in &table {
            let played = ctx.play(
                t,
                json!([{"player": "p1", "bet": "ante", "stake_minor": 1_000}]),
                h,
                &[("p1", "call")],
            );
            let s = settlement_of(&played.settled, "p1");
            assert_eq!(s["detail"]["player_hand"]["class"], *class, "{s}");
            assert_eq!(s["detail"]["result"], "player_wins", "{class}: {s}");
            assert_paid(
                &played.settled,
                "p1",
                &[
                    ("ante", &ante_row(plan, class), 1_000, 1_000, 1_000 * ratio),
                    ("call", "win", 2_000, 2_000, 2_000),
                ],
            );
        }
    }
}

/// "Aby se krupiér kvalifikoval ke hře, musí mít alespoň pár čtyřek … nebo lepší pokerovou
/// kombinaci": a pair of 3s does not qualify (even though it beats the player: the Ante is
/// paid, the Call returned); a pair of 4s does (and wins: both lost).
#[test]
fn the_dealer_qualifies_with_a_pair_of_4s_or_better() {
    let (_storage, ctx) = Ctx::sqlite();
    for (t, plan) in [("evo", EVOLUTION), ("syn", SYNOT)] {
        ctx.open_table(t, plan, "live");
        let bets = json!([{"player": "p1", "bet": "ante", "stake_minor": 1_000}]);
        let threes = ctx.play(t, bets.clone(), &DEALER_PAIR_OF_3S, &[("p1", "call")]);
        let s = settlement_of(&threes.settled, "p1");
        assert_eq!(s["detail"]["dealer_qualifies"], false, "{s}");
        assert_eq!(s["detail"]["dealer_hand"]["class"], "pair", "{s}");
        assert_eq!(s["detail"]["result"], "dealer_not_qualified");
        assert_paid(
            &threes.settled,
            "p1",
            &[
                ("ante", &ante_row(plan, "high_card"), 1_000, 1_000, 1_000),
                ("call", "dealer_not_qualified", 2_000, 2_000, 0),
            ],
        );
        let fours = ctx.play(t, bets, &DEALER_PAIR_OF_4S, &[("p1", "call")]);
        let s = settlement_of(&fours.settled, "p1");
        assert_eq!(s["detail"]["dealer_qualifies"], true, "{s}");
        assert_eq!(s["detail"]["result"], "dealer_wins");
        assert_paid(
            &fours.settled,
            "p1",
            &[("ante", "lose", 1_000, 0, 0), ("call", "lose", 2_000, 0, 0)],
        );
    }
}

/// "Pokud tomu tak není, sázka 2x Hrát se vrací a sázka Ante se vyplácí podle výplatní
/// tabulky": whatever the dealer's unqualified hand, the Ante is paid by the player's hand
/// (here a flush, 2:1) and the Call returned.
#[test]
fn when_the_dealer_does_not_qualify_the_ante_is_paid_and_the_call_returned() {
    let (_storage, ctx) = Ctx::sqlite();
    for (t, plan) in [("evo", EVOLUTION), ("syn", SYNOT)] {
        ctx.open_table(t, plan, "live");
        let bets = json!([{"player": "p1", "bet": "ante", "stake_minor": 3_000}]);
        // The player's heart flush against the dealer's ace high.
        let flush = hand(["2H", "9H"], ["AC", "QD"], ["KH", "7H", "3S"], ["JH", "8C"]);
        let played = ctx.play(t, bets.clone(), &flush, &[("p1", "call")]);
        assert_paid(
            &played.settled,
            "p1",
            &[
                ("ante", "flush", 3_000, 3_000, 6_000),
                ("call", "dealer_not_qualified", 6_000, 6_000, 0),
            ],
        );
        // The dealer's ace high beats the player's king high, but does not qualify.
        let ace_high = hand(["KH", "2C"], ["AS", "3D"], ["9C", "7D", "5S"], ["JH", "8S"]);
        let played = ctx.play(t, bets, &ace_high, &[("p1", "call")]);
        let s = settlement_of(&played.settled, "p1");
        assert_eq!(s["detail"]["dealer_hand"]["class"], "high_card", "{s}");
        assert_paid(
            &played.settled,
            "p1",
            &[
                ("ante", &ante_row(plan, "high_card"), 3_000, 3_000, 3_000),
                ("call", "dealer_not_qualified", 6_000, 6_000, 0),
            ],
        );
    }
}

/// "Pokud se krupiér kvalifikuje a sázející s krupiérem remizuje, tzn. že všech pět karet mají
/// totožné, sázející obdrží hodnotu původní sázky Ante a sázky 2x Hrát": both play the
/// board's A A K Q J.
#[test]
fn equal_hands_push_the_ante_and_the_call() {
    let (_storage, ctx) = Ctx::sqlite();
    let board_plays = hand(["2C", "3D"], ["2H", "3S"], ["AS", "AD", "KC"], ["QH", "JS"]);
    for (t, plan) in [("evo", EVOLUTION), ("syn", SYNOT)] {
        ctx.open_table(t, plan, "live");
        let played = ctx.play(
            t,
            json!([{"player": "p1", "bet": "ante", "stake_minor": 1_000}]),
            &board_plays,
            &[("p1", "call")],
        );
        let s = settlement_of(&played.settled, "p1");
        assert_eq!(s["detail"]["result"], "tie", "{s}");
        assert_eq!(s["detail"]["dealer_qualifies"], true, "{s}");
        assert_paid(
            &played.settled,
            "p1",
            &[
                ("ante", "push", 1_000, 1_000, 0),
                ("call", "push", 2_000, 2_000, 0),
            ],
        );
    }
}

/// "V případě stejných hodnot vyhrává kombinace s vyšší dodatečnou 2., 3., 4. potažmo 5.
/// kartou": two pairs of aces with king kickers are decided by the next kicker (9 against 8).
#[test]
fn a_kicker_decides_between_equal_pairs() {
    let (_storage, ctx) = Ctx::sqlite();
    let player_kicks = hand(["AH", "9C"], ["AD", "8C"], ["AS", "7D", "4C"], ["KH", "2S"]);
    let dealer_kicks = hand(["AD", "8C"], ["AH", "9C"], ["AS", "7D", "4C"], ["KH", "2S"]);
    for (t, plan) in [("evo", EVOLUTION), ("syn", SYNOT)] {
        ctx.open_table(t, plan, "live");
        let bets = json!([{"player": "p1", "bet": "ante", "stake_minor": 1_000}]);
        let won = ctx.play(t, bets.clone(), &player_kicks, &[("p1", "call")]);
        let s = settlement_of(&won.settled, "p1");
        assert_eq!(
            s["detail"]["player_hand"]["ranks"],
            json!(["A", "K", "9", "7"])
        );
        assert_eq!(
            s["detail"]["dealer_hand"]["ranks"],
            json!(["A", "K", "8", "7"])
        );
        assert_paid(
            &won.settled,
            "p1",
            &[
                ("ante", &ante_row(plan, "pair"), 1_000, 1_000, 1_000),
                ("call", "win", 2_000, 2_000, 2_000),
            ],
        );
        let lost = ctx.play(t, bets, &dealer_kicks, &[("p1", "call")]);
        assert_eq!(
            settlement_of(&lost.settled, "p1")["detail"]["result"],
            "dealer_wins"
        );
        assert_paid(
            &lost.settled,
            "p1",
            &[("ante", "lose", 1_000, 0, 0), ("call", "lose", 2_000, 0, 0)],
        );
    }
}

/// Evolution's Bonus: the first five cards (the player's two and the flop) with a pair of
/// aces or better, "bez ohledu na výsledek hlavní hry, tedy i v případě, že se rozhodne pro
/// Položit"; below a pair of aces it loses.
#[test]
fn evolution_bonus_is_paid_on_a_pair_of_aces_or_better_even_on_a_fold() {
    let (_storage, ctx) = Ctx::sqlite();
    ctx.open_table("evo", EVOLUTION, "live");
    let bets = json!([
        {"player": "p1", "bet": "ante", "stake_minor": 1_000},
        {"player": "p1", "bet": "bonus", "stake_minor": 500},
        {"player": "p2", "bet": "ante", "stake_minor": 1_000},
        {"player": "p2", "bet": "bonus", "stake_minor": 500},
    ]);
    // Three aces in the first five: Bonus "Trojice" 7:1, for the folder and the caller alike.
    let trips = hand(["AH", "AC"], ["5C", "5D"], ["AD", "7S", "2C"], ["9H", "3S"]);
    let played = ctx.play(
        "evo",
        bets.clone(),
        &trips,
        &[("p1", "fold"), ("p2", "call")],
    );
    assert_paid(
        &played.settled,
        "p1",
        &[
            ("ante", "lose", 1_000, 0, 0),
            ("bonus", "three_of_a_kind", 500, 500, 3_500),
        ],
    );
    assert_paid(
        &played.settled,
        "p2",
        &[
            ("ante", "three_of_a_kind", 1_000, 1_000, 1_000),
            ("call", "win", 2_000, 2_000, 2_000),
            ("bonus", "three_of_a_kind", 500, 500, 3_500),
        ],
    );
    // A flush on the flop: 20:1, folded.
    let flop_flush = hand(["2H", "9H"], ["5C", "5D"], ["KH", "7H", "3H"], ["9S", "3S"]);
    let played = ctx.play(
        "evo",
        bets.clone(),
        &flop_flush,
        &[("p1", "fold"), ("p2", "fold")],
    );
    for p in ["p1", "p2"] {
        assert_paid(
            &played.settled,
            p,
            &[
                ("ante", "lose", 1_000, 0, 0),
                ("bonus", "flush", 500, 500, 10_000),
            ],
        );
    }
    // A pair of kings is below the Bonus's pair of aces, even when the player wins the hand.
    let kings = hand(["KH", "KC"], ["5C", "5D"], ["9D", "7S", "2C"], ["3H", "4S"]);
    let played = ctx.play("evo", bets, &kings, &[("p1", "call"), ("p2", "fold")]);
    assert_paid(
        &played.settled,
        "p1",
        &[
            ("ante", "pair_or_less", 1_000, 1_000, 1_000),
            ("call", "win", 2_000, 2_000, 2_000),
            ("bonus", "lose", 500, 0, 0),
        ],
    );
    assert_paid(
        &played.settled,
        "p2",
        &[("ante", "lose", 1_000, 0, 0), ("bonus", "lose", 500, 0, 0)],
    );
}

/// SYNOT's AA: the same first five cards, but "Aby sázející vyhráli vedlejší sázku AA, musí
/// poté v průběhu hry Dorovnat, jinak sázky prohrávají".
#[test]
fn synot_aa_is_paid_only_if_the_player_called() {
    let (_storage, ctx) = Ctx::sqlite();
    ctx.open_table("syn", SYNOT, "live");
    let bets = json!([
        {"player": "p1", "bet": "ante", "stake_minor": 1_000},
        {"player": "p1", "bet": "aa", "stake_minor": 500},
        {"player": "p2", "bet": "ante", "stake_minor": 1_000},
        {"player": "p2", "bet": "aa", "stake_minor": 500},
    ]);
    let trips = hand(["AH", "AC"], ["5C", "5D"], ["AD", "7S", "2C"], ["9H", "3S"]);
    let played = ctx.play(
        "syn",
        bets.clone(),
        &trips,
        &[("p1", "fold"), ("p2", "call")],
    );
    assert_paid(
        &played.settled,
        "p1",
        &[("ante", "lose", 1_000, 0, 0), ("aa", "lose", 500, 0, 0)],
    );
    assert_paid(
        &played.settled,
        "p2",
        &[
            ("ante", "straight_or_lower", 1_000, 1_000, 1_000),
            ("call", "win", 2_000, 2_000, 2_000),
            ("aa", "pair_of_aces_to_straight", 500, 500, 3_500),
        ],
    );
    // A flush in the first five pays AA 20:1 to the caller, even when the dealer's full house
    // wins the hand; a pair of kings pays nothing.
    let flush_loses = hand(["2H", "9H"], ["7C", "7D"], ["KH", "7H", "3H"], ["KS", "3S"]);
    let played = ctx.play(
        "syn",
        bets.clone(),
        &flush_loses,
        &[("p1", "call"), ("p2", "fold")],
    );
    assert_eq!(
        settlement_of(&played.settled, "p1")["detail"]["result"],
        "dealer_wins"
    );
    assert_paid(
        &played.settled,
        "p1",
        &[
            ("ante", "lose", 1_000, 0, 0),
            ("call", "lose", 2_000, 0, 0),
            ("aa", "flush", 500, 500, 10_000),
        ],
    );
    assert_paid(
        &played.settled,
        "p2",
        &[("ante", "lose", 1_000, 0, 0), ("aa", "lose", 500, 0, 0)],
    );
    let kings = hand(["KH", "KC"], ["5C", "5D"], ["9D", "7S", "2C"], ["3H", "4S"]);
    let played = ctx.play("syn", bets, &kings, &[("p1", "call"), ("p2", "fold")]);
    assert_paid(
        &played.settled,
        "p1",
        &[
            ("ante", "straight_or_lower", 1_000, 1_000, 1_000),
            ("call", "win", 2_000, 2_000, 2_000),
            ("aa", "lose", 500, 0, 0),
        ],
    );
}

/// SYNOT's Casino Razz: "co nejnižší možnou kombinaci pěti pokerových karet z prvních dvou
/// karet a prvních tří společných karet. Eso se počítá jako nejnižší karta. Pokud karetní
/// kombinace obsahuje jakoukoliv Dámu, Krále, Pár … sázející tuto vedlejší sázku prohrává";
/// settled on a fold too (the plan's assumption), paid by the highest card: 5-4-3-2-A suited
/// 200:1, unsuited 50:1, six high 25:1, seven 10:1, eight 8:1, nine 6:1; ten high has no row.
#[test]
fn synot_casino_razz_pays_the_lowest_five_of_the_hole_cards_and_the_flop_ace_low() {
    let (_storage, ctx) = Ctx::sqlite();
    ctx.open_table("syn", SYNOT, "live");
    // (hole, flop, row, ratio): the player folds, the dealer and the last two cards play no
    // part in Casino Razz.
    let rounds: [([&'static str; 2], [&'static str; 3], &str, i64); 10] = [
        (["AH", "2H"], ["3H", "4H", "5H"], "wheel_suited", 200),
        (["AH", "2C"], ["3D", "4S", "5H"], "wheel_mixed_suits", 50),
        (["AH", "3C"], ["4D", "5S", "6H"], "six_high", 25),
        (["2C", "7D"], ["3H", "4S", "5C"], "seven_high", 10),
        (["8C", "2D"], ["3H", "4S", "AC"], "eight_high", 8),
        (["9C", "2D"], ["3H", "4S", "5C"], "nine_high", 6),
        (["TC", "2D"], ["3H", "4S", "5C"], "lose", 0),
        (["AH", "2C"], ["3D", "4S", "QH"], "lose", 0),
        (["KH", "2C"], ["3D", "4S", "5H"], "lose", 0),
        (["AH", "AC"], ["2D", "3S", "4H"], "lose", 0),
    ];
    for (player, flop, row, ratio) in rounds {
        let h = Hand {
            player,
            dealer: ["JS", "JD"],
            flop,
            turn_river: ["TS", "TD"],
        };
        let played = ctx.play(
            "syn",
            json!([
                {"player": "p1", "bet": "ante", "stake_minor": 1_000},
                {"player": "p1", "bet": "casino_razz", "stake_minor": 100},
            ]),
            &h,
            &[("p1", "fold")],
        );
        let (returned, win) = if ratio > 0 {
            (100, 100 * ratio)
        } else {
            (0, 0)
        };
        assert_paid(
            &played.settled,
            "p1",
            &[
                ("ante", "lose", 1_000, 0, 0),
                ("casino_razz", row, 100, returned, win),
            ],
        );
    }
    // With a call the hand plays on and Casino Razz is settled the same: the wheel is also a
    // straight, which beats the dealer's two pair.
    let wheel = hand(["AH", "2C"], ["JS", "JD"], ["3D", "4S", "5H"], ["TS", "TD"]);
    let played = ctx.play(
        "syn",
        json!([
            {"player": "p1", "bet": "ante", "stake_minor": 1_000},
            {"player": "p1", "bet": "casino_razz", "stake_minor": 100},
        ]),
        &wheel,
        &[("p1", "call")],
    );
    assert_paid(
        &played.settled,
        "p1",
        &[
            ("ante", "straight_or_lower", 1_000, 1_000, 1_000),
            ("call", "win", 2_000, 2_000, 2_000),
            ("casino_razz", "wheel_mixed_suits", 100, 100, 5_000),
        ],
    );
}

/// SYNOT's Call Blind: "vsadit na pozici Dorovnat (Call) před rozdáním karet a automaticky se
/// zúčastnit celého hracího kola": the stake C stays on the Call and an Ante of C/2 is placed
/// with it; the player owes no decision (a decision from him is `no_decision_owed`) and is
/// settled as a call. A round of Call Blinds only goes on without a decision time.
#[test]
fn synot_call_blind_owes_no_decision_and_is_settled_as_a_call() {
    let (_storage, ctx) = Ctx::sqlite();
    ctx.open_table("syn", SYNOT, "live");
    ctx.open_table("evo", EVOLUTION, "live");
    let (round, _) = ctx.open_round("syn");
    let placed = ctx.bets(
        &round,
        json!([
            {"player": "p1", "bet": "call_blind", "stake_minor": 2_000},
            {"player": "p2", "bet": "ante", "stake_minor": 1_000},
            {"player": "p1", "bet": "ante", "stake_minor": 1_000},
            {"player": "p3", "bet": "call_blind", "stake_minor": 2_001},
        ]),
    );
    let results = placed["results"].as_array().unwrap();
    assert_eq!(results[0]["status"], "accepted", "{placed}");
    assert_eq!(
        results[0]["stake_minor"], 3_000,
        "the Call and half of it as the Ante"
    );
    assert_eq!(
        results[0]["placements"],
        json!([
            {"bet_type": "ante", "stake_minor": 1_000, "placed_by": "call_blind"},
            {"bet_type": "call", "stake_minor": 2_000, "placed_by": "call_blind"},
        ])
    );
    assert_eq!(results[1]["status"], "accepted");
    assert_eq!(results[2]["code"], "call_blind_excludes_ante", "{placed}");
    assert_eq!(results[3]["code"], "call_blind_not_divisible", "{placed}");
    ctx.close_betting(&round);
    let flop = ctx.cards_ok(&round, &ACES_OVER_FIVES.first_seven());
    assert_eq!(flop["decisions_pending"], json!(["p2"]), "{flop}");
    let d = ctx.decide_ok(&round, &[("p1", "call"), ("p2", "fold")]);
    assert_eq!(taken(&d, "p1")["status"], "refused", "{d}");
    assert_eq!(taken(&d, "p1")["code"], "no_decision_owed", "{d}");
    assert_eq!(taken(&d, "p2")["status"], "taken", "{d}");
    assert_eq!(d["phase"], "betting_closed", "{d}");
    let settled = ctx.cards_ok(&round, &ACES_OVER_FIVES.turn_and_river());
    assert_paid(
        &settled,
        "p1",
        &[
            ("ante", "straight_or_lower", 1_000, 1_000, 1_000),
            ("call", "win", 2_000, 2_000, 2_000),
        ],
    );
    assert_paid(&settled, "p2", &[("ante", "lose", 1_000, 0, 0)]);

    // Only Call Blinds: the flop opens no decision time, the board goes on at once.
    let (round, _) = ctx.open_round("syn");
    ctx.accepted_bets(
        &round,
        json!([{"player": "p1", "bet": "call_blind", "stake_minor": 4_000}]),
    );
    ctx.close_betting(&round);
    let flop = ctx.cards_ok(&round, &DEALER_PAIR_OF_4S.first_seven());
    assert_eq!(flop["phase"], "betting_closed", "{flop}");
    assert_eq!(next_of(&flop), "card:board", "{flop}");
    assert_eq!(flop["decisions_pending"], json!([]), "{flop}");
    let (s, b) = ctx.decide(&round, &[("p1", "fold")]);
    assert_eq!((s, b["code"].as_str()), (409, Some("out_of_order")), "{b}");
    let settled = ctx.cards_ok(&round, &DEALER_PAIR_OF_4S.turn_and_river());
    assert_paid(
        &settled,
        "p1",
        &[("ante", "lose", 2_000, 0, 0), ("call", "lose", 4_000, 0, 0)],
    );

    // Evolution has no Call Blind.
    let (round, _) = ctx.open_round("evo");
    let reply = ctx.bets(
        &round,
        json!([{"player": "p1", "bet": "call_blind", "stake_minor": 2_000}]),
    );
    assert_eq!(reply["results"][0]["code"], "not_offered", "{reply}");
}

// ----- rules: decisions ----------------------------------------------------------------------

/// "Nyní se sázející může rozhodnout" — after the flop and before the rest of the board:
/// a decision before the flop or once the decision time is over is refused (409).
#[test]
fn a_decision_before_the_flop_or_after_the_decisions_close_is_refused() {
    let (_storage, ctx) = Ctx::sqlite();
    ctx.open_table("evo", EVOLUTION, "live");
    let (round, _) = ctx.open_round("evo");
    ctx.accepted_bets(
        &round,
        json!([{"player": "p1", "bet": "ante", "stake_minor": 1_000}]),
    );
    let refused = |why: &str| {
        let (s, b) = ctx.decide(&round, &[("p1", "call")]);
        assert_eq!(
            (s, b["code"].as_str()),
            (409, Some("out_of_order")),
            "{why}: {b}"
        );
    };
    refused("betting open");
    ctx.close_betting(&round);
    refused("no card yet");
    let seven = ACES_OVER_FIVES.first_seven();
    ctx.cards_ok(&round, &seven[..6]);
    refused("before the third flop card");
    let flop = ctx.cards_ok(&round, &seven[6..]);
    assert_eq!(flop["phase"], "decisions");
    ctx.decide_ok(&round, &[("p1", "call")]);
    refused("decisions closed");
    ctx.cards_ok(&round, &ACES_OVER_FIVES.turn_and_river());
    refused("settled");
    // Nothing of it placed a bet: the round holds the Ante and the one Call.
    let r = ctx.round(&round);
    assert_eq!(r["bets"].as_array().unwrap().len(), 2, "{r}");
    assert_eq!(r["decisions"].as_array().unwrap().len(), 1, "{r}");
}

/// A decision from a player who has decided already, or who holds no Ante in the round, is
/// refused (`no_decision_owed`) and places nothing; the others' decisions stand.
#[test]
fn a_decision_from_a_player_who_owes_none_is_refused() {
    let (_storage, ctx) = Ctx::sqlite();
    ctx.open_table("syn", SYNOT, "live");
    let (round, _) = ctx.to_the_flop(
        "syn",
        json!([
            {"player": "p1", "bet": "ante", "stake_minor": 1_000},
            {"player": "p2", "bet": "ante", "stake_minor": 1_000},
        ]),
        &ACES_OVER_FIVES,
    );
    let d = ctx.decide_ok(
        &round,
        &[
            ("p1", "call"),
            ("p1", "fold"),
            ("p9", "call"),
            ("p2", "check"),
        ],
    );
    let ds = d["decisions"].as_array().unwrap();
    assert_eq!(ds.len(), 4, "{d}");
    assert_eq!(
        (&ds[0]["status"], &ds[0]["stake_minor"]),
        (&json!("taken"), &json!(2_000))
    );
    assert_eq!(
        (&ds[1]["player"], &ds[1]["code"]),
        (&json!("p1"), &json!("no_decision_owed"))
    );
    assert_eq!(
        (&ds[2]["player"], &ds[2]["code"]),
        (&json!("p9"), &json!("no_decision_owed"))
    );
    assert_eq!(
        (&ds[3]["player"], &ds[3]["code"]),
        (&json!("p2"), &json!("bad_decision"))
    );
    assert_eq!(d["phase"], "decisions", "the decision time goes on: {d}");
    assert_eq!(next_of(&d), "decisions", "p2 still decides: {d}");
    let r = ctx.round(&round);
    assert_eq!(r["decisions_pending"], json!(["p2"]), "{r}");
    assert_eq!(r["bets"].as_array().unwrap().len(), 3, "one Call only: {r}");
    let d = ctx.decide_ok(&round, &[("p2", "fold")]);
    assert_eq!(d["phase"], "betting_closed", "{d}");
}

/// "když se všichni rozhodli": once every player owing a decision has decided, the decision
/// time closes at once and the dealer deals the rest of the board.
#[test]
fn the_decision_time_closes_when_every_player_has_decided() {
    let (_storage, ctx) = Ctx::sqlite();
    ctx.open_table("evo", EVOLUTION, "live");
    let (round, flop) = ctx.to_the_flop(
        "evo",
        json!([
            {"player": "p1", "bet": "ante", "stake_minor": 1_000},
            {"player": "p2", "bet": "ante", "stake_minor": 1_000},
        ]),
        &ACES_OVER_FIVES,
    );
    assert_eq!(flop["decisions_pending"], json!(["p1", "p2"]), "{flop}");
    assert_eq!(next_of(&flop), "decisions");
    let d = ctx.decide_ok(&round, &[("p1", "call")]);
    assert_eq!(d["phase"], "decisions", "the decision time goes on: {d}");
    assert_eq!(next_of(&d), "decisions", "p2 has not decided: {d}");
    assert_eq!(ctx.round(&round)["phase"], "decisions");
    let d = ctx.decide_ok(&round, &[("p2", "fold")]);
    assert_eq!(d["phase"], "betting_closed", "{d}");
    assert_eq!(next_of(&d), "card:board", "{d}");
    let r = ctx.round(&round);
    assert_eq!(r["decisions_closed"], true, "{r}");
    assert_eq!(r["decisions_pending"], json!([]), "{r}");
    // A close afterwards has nothing to close.
    let (s, b) = ctx.event(&round, json!({"type": "close_decisions"}));
    assert_eq!((s, b["code"].as_str()), (409, Some("out_of_order")), "{b}");
}

/// "Pokud v daném čase sázející nedorovná, karty se automaticky složí": a decision after the
/// deadline is refused (`decision_too_late`, citing the time-out clause) and the dealer's
/// `close_decisions` folds every player who has not decided.
#[test]
fn a_decision_after_the_deadline_is_refused_and_closing_folds_the_undecided() {
    let (plans, storage, ctx) = short_decision_time(1_500);
    let mut rounds = Vec::new();
    let mut settled_rounds = Vec::new();
    for (t, plan) in [("evo", EVOLUTION), ("syn", SYNOT)] {
        ctx.open_table(t, plan, "live");
        let (round, flop) = ctx.to_the_flop(
            t,
            json!([
                {"player": "p1", "bet": "ante", "stake_minor": 1_000},
                {"player": "p2", "bet": "ante", "stake_minor": 1_000},
            ]),
            &ACES_OVER_FIVES,
        );
        assert!(flop["decision_deadline"].is_string(), "{flop}");
        let on_time = ctx.decide_ok(&round, &[("p1", "call")]);
        assert_eq!(taken(&on_time, "p1")["status"], "taken", "{on_time}");
        rounds.push((round, plan));
    }
    // Both tables' decision times run out together.
    std::thread::sleep(Duration::from_millis(1_700));
    for (round, plan) in rounds {
        let late = ctx.decide_ok(&round, &[("p2", "call")]);
        let d = taken(&late, "p2");
        assert_eq!(
            (&d["status"], &d["code"]),
            (&json!("refused"), &json!("decision_too_late")),
            "{late}"
        );
        assert_eq!(d["plan"], plan);
        assert_eq!(
            d["clause"], "Zásady odpojení/ztráty připojení; Průběh hry",
            "{d}"
        );
        let r = ctx.round(&round);
        assert_eq!(r["bets"].as_array().unwrap().len(), 3, "no late Call: {r}");
        assert_eq!(r["decisions_pending"], json!(["p2"]), "{r}");
        let (s, closed) = ctx.event(&round, json!({"type": "close_decisions"}));
        assert_eq!(s, 200, "{closed}");
        assert_eq!(closed["phase"], "betting_closed");
        let d = taken(&closed, "p2");
        assert_eq!(
            (&d["decision"], &d["automatic"], &d["reason"]),
            (&json!("fold"), &json!(true), &json!("time_out")),
            "{closed}"
        );
        assert_eq!(closed["decisions"].as_array().unwrap().len(), 1, "{closed}");
        let settled = ctx.cards_ok(&round, &ACES_OVER_FIVES.turn_and_river());
        assert_paid(
            &settled,
            "p1",
            &[
                ("ante", &ante_row(plan, "pair"), 1_000, 1_000, 1_000),
                ("call", "win", 2_000, 2_000, 2_000),
            ],
        );
        assert_paid(&settled, "p2", &[("ante", "lose", 1_000, 0, 0)]);
        settled_rounds.push((round.clone(), ctx.round(&round)));
    }
    // The late refusal and the automatic fold are logged: a restart replays them to the same
    // rounds (on the same shortened plans).
    let op = ctx.op.clone();
    drop(ctx);
    let server = TestServer::spawn(plans.path(), &storage, &[("PITBOSS_ADMIN_KEY", ADMIN_KEY)]);
    for (round, was) in &settled_rounds {
        let (s, _, now) = server.get_as(Some(&op), &format!("/v1/rounds/{round}"));
        assert_eq!((s, &now), (200, was), "round {round} after the restart");
    }
}

/// After the deadline the dealer may deal on without closing first: the next card (live) or
/// the next `deal` (RNG) applies the automatic fold ("označí se po uplynutí času na rozhodnutí
/// volba Položit").
#[test]
fn the_next_card_after_the_deadline_folds_the_undecided() {
    let (_plans, _storage, ctx) = short_decision_time(300);
    let mut live = Vec::new();
    for (t, plan) in [("evo", EVOLUTION), ("syn", SYNOT)] {
        ctx.open_table(t, plan, "live");
        let side = if plan == EVOLUTION { "bonus" } else { "aa" };
        let (round, _) = ctx.to_the_flop(
            t,
            json!([
                {"player": "p1", "bet": "ante", "stake_minor": 1_000},
                {"player": "p1", "bet": side, "stake_minor": 500},
            ]),
            &ACES_OVER_FIVES,
        );
        live.push((round, plan));
    }
    ctx.open_table("evo-rng", EVOLUTION, "rng");
    let (rng_round, _) = ctx.open_round("evo-rng");
    ctx.accepted_bets(
        &rng_round,
        json!([{"player": "p1", "bet": "ante", "stake_minor": 1_000}]),
    );
    ctx.close_betting(&rng_round);
    let (s, flop) = ctx.event(&rng_round, json!({"type": "deal"}));
    assert_eq!((s, &flop["phase"]), (200, &json!("decisions")), "{flop}");
    std::thread::sleep(Duration::from_millis(500));
    for (round, plan) in live {
        let settled = ctx.cards_ok(&round, &ACES_OVER_FIVES.turn_and_river());
        let d = taken(&settled, "p1");
        assert_eq!(
            (&d["decision"], &d["automatic"], &d["reason"]),
            (&json!("fold"), &json!(true), &json!("time_out")),
            "{settled}"
        );
        assert_eq!(settled["cards"].as_array().unwrap().len(), 2, "{settled}");
        assert_eq!(settled["phase"], "settled", "{settled}");
        // Folded: the Ante is lost; Evolution's Bonus is paid all the same, SYNOT's AA is not.
        let side_paid: Paid = if plan == EVOLUTION {
            ("bonus", "pair_of_aces", 500, 500, 3_500)
        } else {
            ("aa", "lose", 500, 0, 0)
        };
        assert_paid(&settled, "p1", &[("ante", "lose", 1_000, 0, 0), side_paid]);
    }
    let (s, settled) = ctx.event(&rng_round, json!({"type": "deal"}));
    assert_eq!(s, 200, "{settled}");
    let d = taken(&settled, "p1");
    assert_eq!(
        (&d["decision"], &d["automatic"], &d["reason"]),
        (&json!("fold"), &json!(true), &json!("time_out")),
        "{settled}"
    );
    assert_eq!(settled["phase"], "settled", "{settled}");
    assert!(settled["rng_seed"].is_string(), "{settled}");
    assert_paid(&settled, "p1", &[("ante", "lose", 1_000, 0, 0)]);
}

/// The decision time runs while a connected player has yet to decide: closing it (or dealing
/// on) before the deadline is refused (`decisions_open`) and changes nothing.
#[test]
fn closing_the_decisions_before_the_deadline_is_refused_while_a_connected_player_decides() {
    let (_storage, ctx) = Ctx::sqlite();
    ctx.open_table("syn", SYNOT, "live");
    let (round, _) = ctx.to_the_flop(
        "syn",
        json!([
            {"player": "p1", "bet": "ante", "stake_minor": 1_000},
            {"player": "p2", "bet": "ante", "stake_minor": 1_000},
        ]),
        &ACES_OVER_FIVES,
    );
    ctx.decide_ok(&round, &[("p1", "call")]);
    let (s, b) = ctx.event(&round, json!({"type": "close_decisions"}));
    assert_eq!(
        (s, b["code"].as_str()),
        (409, Some("decisions_open")),
        "{b}"
    );
    assert!(
        b["detail"].as_str().unwrap_or_default().contains("p2"),
        "{b}"
    );
    assert_eq!(b["clause"], "Zásady odpojení/ztráty připojení; Průběh hry");
    let r = ctx.round(&round);
    assert_eq!(r["phase"], "decisions", "{r}");
    assert_eq!(r["decisions_pending"], json!(["p2"]), "{r}");
    let d = ctx.decide_ok(&round, &[("p2", "call")]);
    assert_eq!(d["phase"], "betting_closed", "{d}");
}

/// A disconnected player's bets stand; his decision is the plan's automatic fold when the
/// decision time runs out, and a player back in time decides himself.
#[test]
fn a_disconnected_player_is_folded_when_the_decision_time_runs_out_and_may_decide_if_back_in_time()
{
    // "Pokud v daném čase není zvolena žádná možnost ať už z důvodu odpojení nebo nepřítomnosti
    // sázejícího, označí se po uplynutí času na rozhodnutí volba Položit": the fold comes when
    // the time runs out, for a disconnected player as for an absent one.
    let (_plans, _storage, ctx) = short_decision_time(1_500);
    ctx.open_table("evo", EVOLUTION, "live");
    let (round, _) = ctx.open_round("evo");
    ctx.accepted_bets(
        &round,
        json!([
            {"player": "p1", "bet": "ante", "stake_minor": 1_000},
            {"player": "p1", "bet": "bonus", "stake_minor": 500},
            {"player": "p2", "bet": "ante", "stake_minor": 1_000},
            {"player": "p3", "bet": "ante", "stake_minor": 1_000},
        ]),
    );
    ctx.close_betting(&round);
    // p1 drops before the flop: his bets stand ("zůstanou všechny podané sázky platné").
    ctx.connection("evo", "p1", false);
    let flop = ctx.cards_ok(&round, &ACES_OVER_FIVES.first_seven());
    assert_eq!(flop["phase"], "decisions", "{flop}");
    assert_eq!(
        flop["decisions_pending"],
        json!(["p1", "p2", "p3"]),
        "{flop}"
    );
    assert!(
        flop.get("decisions").is_none(),
        "nobody decided for yet: {flop}"
    );
    // A disconnected player cannot decide; p2 drops too, and nothing is decided for him.
    let d = ctx.decide_ok(&round, &[("p1", "call")]);
    assert_eq!(taken(&d, "p1")["code"], "player_disconnected", "{d}");
    let c = ctx.connection("evo", "p2", false);
    assert!(c.get("automatic_decisions").is_none(), "{c}");
    // p2 is back within the time and calls; p3 folds.
    ctx.connection("evo", "p2", true);
    let d = ctx.decide_ok(&round, &[("p2", "call"), ("p3", "fold")]);
    assert_eq!(taken(&d, "p2")["status"], "taken", "{d}");
    // The disconnected p1 still owes his decision: the dealer may not close before the time.
    let (s, b) = ctx.event(&round, json!({"type": "close_decisions"}));
    assert_eq!(
        (s, b["code"].as_str()),
        (409, Some("decisions_open")),
        "{b}"
    );
    std::thread::sleep(Duration::from_millis(1_700));
    let (s, closed) = ctx.event(&round, json!({"type": "close_decisions"}));
    assert_eq!(s, 200, "{closed}");
    let d = taken(&closed, "p1");
    assert_eq!(
        (&d["decision"], &d["automatic"], &d["reason"]),
        (&json!("fold"), &json!(true), &json!("disconnected")),
        "{closed}"
    );
    let settled = ctx.cards_ok(&round, &ACES_OVER_FIVES.turn_and_river());
    // Bonus is paid even on a fold ("Bonusová sázka se vyplácí i v případě, že sázející složí").
    assert_paid(
        &settled,
        "p1",
        &[
            ("ante", "lose", 1_000, 0, 0),
            ("bonus", "pair_of_aces", 500, 500, 3_500),
        ],
    );
    assert_paid(
        &settled,
        "p2",
        &[
            ("ante", "pair_or_less", 1_000, 1_000, 1_000),
            ("call", "win", 2_000, 2_000, 2_000),
        ],
    );
    assert_paid(&settled, "p3", &[("ante", "lose", 1_000, 0, 0)]);
}

// ----- rules: cards --------------------------------------------------------------------------

/// "Krupiér rozdává nejprve první kartu … pro sázejícího, poté první kartu pro krupiéra …,
/// následuje druhá karta … pro sázejícího a druhá karta … pro krupiéra. Poté … tři společné
/// karty", the decisions, then "poslední dvě společné karty": each reply announces the next.
#[test]
fn cards_are_dealt_in_the_plans_order_with_the_next_position_announced() {
    let (_storage, ctx) = Ctx::sqlite();
    for (t, plan) in [("evo", EVOLUTION), ("syn", SYNOT)] {
        ctx.open_table(t, plan, "live");
        let (round, _) = ctx.open_round(t);
        ctx.accepted_bets(
            &round,
            json!([{"player": "p1", "bet": "ante", "stake_minor": 1_000}]),
        );
        ctx.close_betting(&round);
        // The first card goes to the player.
        let (s, b) = ctx.cards(&round, &[("dealer", "5C")]);
        assert_eq!(
            (s, b["code"].as_str()),
            (422, Some("wrong_position")),
            "{b}"
        );
        let expected_next = [
            "card:dealer",
            "card:player",
            "card:dealer",
            "card:board",
            "card:board",
            "card:board",
            "decisions",
        ];
        for (card, next) in ACES_OVER_FIVES.first_seven().into_iter().zip(expected_next) {
            let b = ctx.cards_ok(&round, &[card]);
            assert_eq!(dealt(&b["cards"]), dealt_as(&[card]), "{b}");
            assert_eq!(next_of(&b), next, "after {card:?}: {b}");
        }
        let d = ctx.decide_ok(&round, &[("p1", "call")]);
        assert_eq!(next_of(&d), "card:board");
        let turn = ctx.cards_ok(&round, &ACES_OVER_FIVES.turn_and_river()[..1]);
        assert_eq!(next_of(&turn), "card:board", "{turn}");
        let river = ctx.cards_ok(&round, &ACES_OVER_FIVES.turn_and_river()[1..]);
        assert_eq!(next_of(&river), "complete", "{river}");
        assert_eq!(river["phase"], "settled");
        let outcome = &river["outcome"];
        let cards_of =
            |v: &Value| -> Vec<Card> { v.as_array().unwrap().iter().map(parse_card).collect() };
        assert_eq!(
            cards_of(&outcome["player"]),
            cards(&["AH", "KH"]),
            "{river}"
        );
        assert_eq!(
            cards_of(&outcome["dealer"]),
            cards(&["5C", "5D"]),
            "{river}"
        );
        assert_eq!(
            cards_of(&outcome["board"]),
            cards(&["AD", "7S", "2C", "9H", "3S"]),
            "{river}"
        );
        let r = ctx.round(&round);
        let whole: Vec<(&str, &str)> = ACES_OVER_FIVES
            .first_seven()
            .into_iter()
            .chain(ACES_OVER_FIVES.turn_and_river())
            .collect();
        assert_eq!(dealt(&r["cards"]), dealt_as(&whole), "{r}");
        // Nothing comes after the last card.
        let (s, b) = ctx.cards(&round, &[("board", "QC")]);
        assert_eq!((s, b["code"].as_str()), (409, Some("out_of_order")), "{b}");
    }
}

/// A card for another position than the plan's order expects is refused (422) under the error
/// policy ("hra se dočasně pozastaví"): nothing of the request is recorded, and the dealer
/// system repairs by reporting the right cards.
#[test]
fn a_card_to_the_wrong_position_is_refused_and_nothing_recorded_until_repaired() {
    let (_storage, ctx) = Ctx::sqlite();
    for (t, plan) in [("evo", EVOLUTION), ("syn", SYNOT)] {
        ctx.open_table(t, plan, "live");
        let (round, _) = ctx.open_round(t);
        ctx.accepted_bets(
            &round,
            json!([{"player": "p1", "bet": "ante", "stake_minor": 1_000}]),
        );
        ctx.close_betting(&round);
        // The dealer's card first.
        let (s, b) = ctx.cards(&round, &[("dealer", "5C")]);
        assert_eq!(
            (s, b["code"].as_str()),
            (422, Some("wrong_position")),
            "{b}"
        );
        assert_eq!(b["plan"], plan);
        let dealing_clause = if plan == EVOLUTION {
            "Průběh hry; Pořadí kombinací"
        } else {
            "Průběh hry; Call Blind; Pořadí kombinací"
        };
        assert_eq!(b["clause"], dealing_clause, "the plan's dealing rules");
        // Two right cards and a wrong third: none of the three is recorded.
        let (s, b) = ctx.cards(
            &round,
            &[("player", "AH"), ("dealer", "5C"), ("board", "AD")],
        );
        assert_eq!(
            (s, b["code"].as_str()),
            (422, Some("wrong_position")),
            "{b}"
        );
        assert!(
            b["detail"]
                .as_str()
                .unwrap_or_default()
                .contains("card 3 of the request"),
            "{b}"
        );
        let r = ctx.round(&round);
        assert_eq!(r["cards"], json!([]), "{r}");
        assert_eq!(r["phase"], "betting_closed");
        // Casino Hold'em has no re-deal: the round is repaired or voided ("Řešení chyb").
        let (s, b) = ctx.event(
            &round,
            json!({"type": "misdeal", "reason": "the dealer's card went to the player"}),
        );
        assert_eq!(
            (s, b["code"].as_str()),
            (422, Some("misdeal_not_in_plan")),
            "{b}"
        );
        assert_eq!(b["clause"], "Řešení chyb");
        // Repaired: the same deal in the right order.
        let flop = ctx.cards_ok(&round, &ACES_OVER_FIVES.first_seven());
        assert_eq!(flop["phase"], "decisions", "{flop}");
        ctx.decide_ok(&round, &[("p1", "call")]);
        let settled = ctx.cards_ok(&round, &ACES_OVER_FIVES.turn_and_river());
        assert_paid(
            &settled,
            "p1",
            &[
                ("ante", &ante_row(plan, "pair"), 1_000, 1_000, 1_000),
                ("call", "win", 2_000, 2_000, 2_000),
            ],
        );
    }
}

/// "Hraje se s jedním balíčkem karet": a second copy of a card in the round is refused (422,
/// nothing recorded), in a later request or in the same one; the next round has a full deck.
#[test]
fn a_second_copy_of_a_card_from_the_single_deck_is_refused() {
    let (_storage, ctx) = Ctx::sqlite();
    for (t, plan) in [("evo", EVOLUTION), ("syn", SYNOT)] {
        ctx.open_table(t, plan, "live");
        let (round, _) = ctx.open_round(t);
        ctx.accepted_bets(
            &round,
            json!([{"player": "p1", "bet": "ante", "stake_minor": 1_000}]),
        );
        ctx.close_betting(&round);
        ctx.cards_ok(&round, &[("player", "AH"), ("dealer", "5C")]);
        let single_deck = |b: &Value| {
            matches!(
                b["code"].as_str(),
                Some("card_not_in_shoe") | Some("duplicate_card")
            )
        };
        let (s, b) = ctx.cards(&round, &[("player", "AH")]);
        assert!(s == 422 && single_deck(&b), "{s} {b}");
        assert_eq!(b["plan"], plan);
        let (s, b) = ctx.cards(&round, &[("player", "KH"), ("dealer", "KH")]);
        assert!(s == 422 && single_deck(&b), "{s} {b}");
        assert_eq!(ctx.round(&round)["cards"].as_array().unwrap().len(), 2);
        // Repaired with the cards really dealt.
        let rest = &ACES_OVER_FIVES.first_seven()[2..];
        let flop = ctx.cards_ok(&round, rest);
        assert_eq!(flop["phase"], "decisions", "{flop}");
        ctx.decide_ok(&round, &[("p1", "fold")]);
        ctx.cards_ok(&round, &ACES_OVER_FIVES.turn_and_river());
        // A fresh deck each round: the same cards come again.
        let played = ctx.play(
            t,
            json!([{"player": "p1", "bet": "ante", "stake_minor": 1_000}]),
            &ACES_OVER_FIVES,
            &[("p1", "fold")],
        );
        assert_paid(&played.settled, "p1", &[("ante", "lose", 1_000, 0, 0)]);
    }
}

/// "poslední dvě společné karty" come after the decisions: a card while the players decide is
/// refused (the decision time is still open) and nothing is recorded.
#[test]
fn a_card_while_the_players_decide_is_refused() {
    let (_storage, ctx) = Ctx::sqlite();
    ctx.open_table("evo", EVOLUTION, "live");
    let (round, _) = ctx.to_the_flop(
        "evo",
        json!([{"player": "p1", "bet": "ante", "stake_minor": 1_000}]),
        &ACES_OVER_FIVES,
    );
    let (s, b) = ctx.cards(&round, &ACES_OVER_FIVES.turn_and_river()[..1]);
    assert_eq!(
        (s, b["code"].as_str()),
        (409, Some("decisions_open")),
        "{b}"
    );
    let r = ctx.round(&round);
    assert_eq!(r["cards"].as_array().unwrap().len(), 7, "{r}");
    assert_eq!(r["phase"], "decisions");
    assert_eq!(r["decisions"], json!([]), "nobody was folded: {r}");
    ctx.decide_ok(&round, &[("p1", "call")]);
    let settled = ctx.cards_ok(&round, &ACES_OVER_FIVES.turn_and_river());
    assert_eq!(settled["phase"], "settled");
}

/// "V takovém případě se sázejícím vrací podané sázky": a void returns every stake, the Call a
/// decision placed included, and nothing else.
#[test]
fn a_void_returns_every_stake_including_a_call_placed_by_a_decision() {
    let (_storage, ctx) = Ctx::sqlite();
    for (t, plan, side) in [("evo", EVOLUTION, "bonus"), ("syn", SYNOT, "casino_razz")] {
        ctx.open_table(t, plan, "live");
        let (round, _) = ctx.to_the_flop(
            t,
            json!([
                {"player": "p1", "bet": "ante", "stake_minor": 1_000},
                {"player": "p1", "bet": side, "stake_minor": 500},
                {"player": "p2", "bet": "ante", "stake_minor": 3_000},
            ]),
            &ACES_OVER_FIVES,
        );
        let d = ctx.decide_ok(&round, &[("p1", "call"), ("p2", "fold")]);
        let call_bet = taken(&d, "p1")["bet"].as_str().unwrap().to_string();
        let (s, v) = ctx.server.post(
            &ctx.op,
            &format!("/v1/rounds/{round}/void"),
            json!({"reason": "the turn card was exposed and cannot be reconstructed"}),
        );
        assert_eq!(s, 200, "{v}");
        assert_eq!(v["phase"], "voided");
        assert_eq!(
            v["refunds"],
            json!([
                {"bet": format!("{round}.1"), "player": "p1", "refund_minor": 1_000},
                {"bet": format!("{round}.2"), "player": "p1", "refund_minor": 500},
                {"bet": format!("{round}.3"), "player": "p2", "refund_minor": 3_000},
                {"bet": call_bet, "player": "p1", "refund_minor": 2_000},
            ]),
            "{v}"
        );
        assert_eq!(v["refund_minor"], 6_500);
        let (s, b) = ctx.cards(&round, &ACES_OVER_FIVES.turn_and_river());
        assert_eq!((s, b["code"].as_str()), (409, Some("out_of_order")), "{b}");
        let (s, _, doc) = ctx
            .server
            .get_as(Some(&ctx.op), &format!("/v1/rounds/{round}/settlement"));
        assert_eq!(s, 200);
        assert_eq!(doc["refund_minor"], 6_500, "{doc}");
    }
}

// ----- RNG ---------------------------------------------------------------------------------

fn hex_seed(hex: &str) -> [u8; 32] {
    let bytes: Vec<u8> = (0..32)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex seed"))
        .collect();
    bytes.try_into().expect("32 bytes")
}

fn parse_card(v: &Value) -> Card {
    v.as_str().expect("card").parse().expect("a card")
}

/// The revealed seed is the committed one, and the round's cards are its deal.
fn assert_seed_deals(plan: &str, commitment: &str, seed_hex: &str, cards: &[Value]) {
    use sha2::Digest;
    let seed = hex_seed(seed_hex);
    assert_eq!(
        pitboss::plan::canonical::hex(&sha2::Sha256::digest(seed)),
        commitment,
        "the revealed seed is the committed one"
    );
    let loaded = crate::source::plan(plan);
    let eng = pitboss::games::casino_holdem::CasinoHoldemEngine::new(&loaded.plan).expect("engine");
    let deal: Vec<Value> = eng
        .rng_deal(seed)
        .into_iter()
        .map(|d| json!({"to": d.position, "card": d.card}))
        .collect();
    assert_eq!(cards, &deal[..], "the cards are the seed's deal");
}

/// What a player holding `ante` (and `side` on Bonus/AA) is paid on the RNG deal, worked out
/// from the plans' tables with the hand evaluator alone.
fn expected_rng_payouts(
    plan: &str,
    cards: &[Value],
    ante: i64,
    side: i64,
    called: bool,
) -> Vec<(String, String, i64, i64, i64)> {
    use pitboss::games::casino_holdem::HandClass as C;
    use pitboss::games::poker_hand::{class_name, evaluate};
    let at = |to: &str| -> Vec<Card> {
        cards
            .iter()
            .filter(|c| c["to"] == to)
            .map(|c| parse_card(&c["card"]))
            .collect()
    };
    let (hole, dealer, board) = (at("player"), at("dealer"), at("board"));
    let ante_ratio = |c: C| match c {
        C::RoyalFlush => 100,
        C::StraightFlush => 20,
        C::FourOfAKind => 10,
        C::FullHouse => 3,
        C::Flush => 2,
        _ => 1,
    };
    let ante_name = |c: C| ante_row(plan, class_name(c));
    let mut out = Vec::new();
    let row = |b: &str, o: &str, s: i64, r: i64, w: i64| (b.to_string(), o.to_string(), s, r, w);
    if called {
        let call = 2 * ante;
        let p = evaluate(&[hole.as_slice(), &board].concat()).expect("hand");
        let d = evaluate(&[dealer.as_slice(), &board].concat()).expect("hand");
        let qualifies = d.class() > C::Pair
            || (d.class() == C::Pair
                && d.set_rank().expect("a pair").number() >= pitboss::cards::Rank::Four.number());
        if !qualifies {
            out.push(row(
                "ante",
                &ante_name(p.class()),
                ante,
                ante,
                ante * ante_ratio(p.class()),
            ));
            out.push(row("call", "dealer_not_qualified", call, call, 0));
        } else if p > d {
            out.push(row(
                "ante",
                &ante_name(p.class()),
                ante,
                ante,
                ante * ante_ratio(p.class()),
            ));
            out.push(row("call", "win", call, call, call));
        } else if p == d {
            out.push(row("ante", "push", ante, ante, 0));
            out.push(row("call", "push", call, call, 0));
        } else {
            out.push(row("ante", "lose", ante, 0, 0));
            out.push(row("call", "lose", call, 0, 0));
        }
    } else {
        out.push(row("ante", "lose", ante, 0, 0));
    }
    if side > 0 {
        let (bet, on_fold_paid) = if plan == EVOLUTION {
            ("bonus", true)
        } else {
            ("aa", false)
        };
        let f = evaluate(&[&hole[..2], &board[..3]].concat()).expect("flop hand");
        let aces = f.class() > C::Pair
            || (f.class() == C::Pair && f.set_rank() == Some(pitboss::cards::Rank::Ace));
        let ratio = match f.class() {
            C::RoyalFlush => 100,
            C::StraightFlush => 50,
            C::FourOfAKind => 40,
            C::FullHouse => 30,
            C::Flush => 20,
            _ => 7,
        };
        if aces && (called || on_fold_paid) {
            let outcome = match (plan, f.class()) {
                (EVOLUTION, C::Pair) => "pair_of_aces".to_string(),
                (SYNOT, c) if c <= C::Straight => "pair_of_aces_to_straight".to_string(),
                (_, c) => class_name(c).to_string(),
            };
            out.push(row(bet, &outcome, side, side, side * ratio));
        } else {
            out.push(row(bet, "lose", side, 0, 0));
        }
    }
    out
}

fn assert_rng_paid(
    plan: &str,
    settled: &Value,
    cards: &[Value],
    player: &str,
    ante: i64,
    side: i64,
    called: bool,
) {
    let want = expected_rng_payouts(plan, cards, ante, side, called);
    let rows: Vec<Paid> = want
        .iter()
        .map(|(b, o, s, r, w)| (b.as_str(), o.as_str(), *s, *r, *w))
        .collect();
    assert_paid(settled, player, &rows);
}

/// RNG mode: `deal` deals from the committed seed up to the decisions (the seven cards of the
/// plan's order), the players decide, `deal` again deals the turn and the river and settles,
/// revealing the seed, whose SHA-256 is the commitment and whose deal the cards are.
fn rng_round_with_decisions(ctx: &Ctx, table: &str, plan: &str) -> String {
    let side = if plan == EVOLUTION { "bonus" } else { "aa" };
    let (round, opened) = ctx.open_round(table);
    let commitment = opened["rng_commitment"]
        .as_str()
        .expect("an RNG round commits its seed at open")
        .to_string();
    ctx.accepted_bets(
        &round,
        json!([
            {"player": "p1", "bet": "ante", "stake_minor": 1_000},
            {"player": "p1", "bet": side, "stake_minor": 500},
            {"player": "p2", "bet": "ante", "stake_minor": 2_000},
            {"player": "p2", "bet": side, "stake_minor": 100},
        ]),
    );
    ctx.close_betting(&round);
    // The dealer system reports no cards at an RNG table.
    let (s, b) = ctx.cards(&round, &[("player", "AH")]);
    assert_eq!((s, b["code"].as_str()), (409, Some("wrong_mode")), "{b}");
    let (s, first) = ctx.event(&round, json!({"type": "deal"}));
    assert_eq!(s, 200, "{first}");
    let positions: Vec<&str> = first["cards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["to"].as_str().unwrap())
        .collect();
    assert_eq!(
        positions,
        ["player", "dealer", "player", "dealer", "board", "board", "board"],
        "{first}"
    );
    assert_eq!(first["phase"], "decisions", "{first}");
    assert_eq!(next_of(&first), "decisions");
    assert_eq!(first["decisions_pending"], json!(["p1", "p2"]));
    assert!(
        first.get("rng_seed").is_none(),
        "the seed stays secret: {first}"
    );
    // Dealing on before the players decide is refused.
    let (s, b) = ctx.event(&round, json!({"type": "deal"}));
    assert_eq!(
        (s, b["code"].as_str()),
        (409, Some("decisions_open")),
        "{b}"
    );
    let d = ctx.decide_ok(&round, &[("p1", "call"), ("p2", "fold")]);
    assert_eq!(taken(&d, "p1")["stake_minor"], 2_000);
    let (s, settled) = ctx.event(&round, json!({"type": "deal"}));
    assert_eq!(s, 200, "{settled}");
    assert_eq!(settled["phase"], "settled", "{settled}");
    assert_eq!(settled["cards"].as_array().unwrap().len(), 2, "{settled}");
    let seed = settled["rng_seed"].as_str().expect("the seed is revealed");
    let r = ctx.round(&round);
    let cards = r["cards"].as_array().unwrap().clone();
    assert_eq!(cards.len(), 9);
    assert_seed_deals(plan, &commitment, seed, &cards);
    assert_rng_paid(plan, &settled, &cards, "p1", 1_000, 500, true);
    assert_rng_paid(plan, &settled, &cards, "p2", 2_000, 100, false);
    let (s, b) = ctx.event(&round, json!({"type": "deal"}));
    assert_eq!(s, 409, "a settled round deals no more: {b}");
    round
}

/// SYNOT RNG: a round of Call Blinds only owes no decision: one `deal` deals all nine cards and
/// settles.
fn rng_call_blind_round(ctx: &Ctx, table: &str) -> String {
    let (round, opened) = ctx.open_round(table);
    let commitment = opened["rng_commitment"].as_str().unwrap().to_string();
    ctx.accepted_bets(
        &round,
        json!([
            {"player": "p1", "bet": "call_blind", "stake_minor": 2_000},
            {"player": "p1", "bet": "aa", "stake_minor": 300},
        ]),
    );
    ctx.close_betting(&round);
    let (s, settled) = ctx.event(&round, json!({"type": "deal"}));
    assert_eq!(s, 200, "{settled}");
    assert_eq!(settled["phase"], "settled", "{settled}");
    let cards = settled["cards"].as_array().unwrap().clone();
    assert_eq!(cards.len(), 9, "{settled}");
    assert!(
        settled.get("decisions").is_none(),
        "nobody decided: {settled}"
    );
    assert_seed_deals(
        SYNOT,
        &commitment,
        settled["rng_seed"].as_str().unwrap(),
        &cards,
    );
    assert_rng_paid(SYNOT, &settled, &cards, "p1", 1_000, 300, true);
    round
}

#[test]
fn rng_deal_stops_for_the_decisions_then_settles_and_reveals_the_committed_seed() {
    let (_storage, ctx) = Ctx::sqlite();
    for (t, plan) in [("evo", EVOLUTION), ("syn", SYNOT)] {
        ctx.open_table(t, plan, "rng");
        for _ in 0..3 {
            rng_round_with_decisions(&ctx, t, plan);
        }
    }
}

#[test]
fn rng_call_blind_only_round_is_dealt_through_in_one_request() {
    let (_storage, ctx) = Ctx::sqlite();
    ctx.open_table("syn", SYNOT, "rng");
    for _ in 0..3 {
        rng_call_blind_round(&ctx, "syn");
    }
}

// ----- whole scenarios, audit and replay -----------------------------------------------------

/// Both plans live and RNG on one server; the exported log verifies offline and its replay
/// reproduces every settlement; a restart on the same data rebuilds every round exactly.
fn scenario(backend: Backend) {
    let storage = Storage::new(backend);
    let ctx = Ctx::start(&storage);
    let mut rounds = Vec::new();
    for (plan, side) in [(EVOLUTION, "bonus"), (SYNOT, "aa")] {
        let (live, rng) = if plan == EVOLUTION {
            ("evo-live", "evo-rng")
        } else {
            ("syn-live", "syn-rng")
        };
        ctx.open_table(live, plan, "live");
        ctx.open_table(rng, plan, "rng");
        // A call, a fold and a side bet.
        let played = ctx.play(
            live,
            json!([
                {"player": "p1", "bet": "ante", "stake_minor": 1_000},
                {"player": "p1", "bet": side, "stake_minor": 500},
                {"player": "p2", "bet": "ante", "stake_minor": 2_000},
            ]),
            &ACES_OVER_FIVES,
            &[("p1", "call"), ("p2", "fold")],
        );
        let side_row = if plan == EVOLUTION {
            "pair_of_aces"
        } else {
            "pair_of_aces_to_straight"
        };
        assert_paid(
            &played.settled,
            "p1",
            &[
                ("ante", &ante_row(plan, "pair"), 1_000, 1_000, 1_000),
                ("call", "win", 2_000, 2_000, 2_000),
                (side, side_row, 500, 500, 3_500),
            ],
        );
        assert_paid(&played.settled, "p2", &[("ante", "lose", 2_000, 0, 0)]);
        rounds.push(played.round);
        // The dealer does not qualify.
        let played = ctx.play(
            live,
            json!([{"player": "p1", "bet": "ante", "stake_minor": 1_000}]),
            &DEALER_PAIR_OF_3S,
            &[("p1", "call")],
        );
        assert_paid(
            &played.settled,
            "p1",
            &[
                ("ante", &ante_row(plan, "high_card"), 1_000, 1_000, 1_000),
                ("call", "dealer_not_qualified", 2_000, 2_000, 0),
            ],
        );
        rounds.push(played.round);
        if plan == SYNOT {
            let played = ctx.play(
                live,
                json!([
                    {"player": "p1", "bet": "call_blind", "stake_minor": 2_000},
                    {"player": "p1", "bet": "casino_razz", "stake_minor": 100},
                ]),
                &hand(["AH", "2C"], ["JS", "JD"], ["3D", "4S", "5H"], ["TS", "TD"]),
                &[],
            );
            assert_paid(
                &played.settled,
                "p1",
                &[
                    ("ante", "straight_or_lower", 1_000, 1_000, 1_000),
                    ("call", "win", 2_000, 2_000, 2_000),
                    ("casino_razz", "wheel_mixed_suits", 100, 100, 5_000),
                ],
            );
            rounds.push(played.round);
        }
        // A void after a call.
        let (round, _) = ctx.to_the_flop(
            live,
            json!([{"player": "p3", "bet": "ante", "stake_minor": 4_000}]),
            &ACES_OVER_FIVES,
        );
        ctx.decide_ok(&round, &[("p3", "call")]);
        let (s, v) = ctx.server.post(
            &ctx.op,
            &format!("/v1/rounds/{round}/void"),
            json!({"reason": "studio fault"}),
        );
        assert_eq!((s, &v["refund_minor"]), (200, &json!(12_000)), "{v}");
        rounds.push(round);
        // RNG.
        rounds.push(rng_round_with_decisions(&ctx, rng, plan));
        if plan == SYNOT {
            rounds.push(rng_call_blind_round(&ctx, rng));
        }
    }
    // Disconnects: one before the flop who is back in time and folds himself, one during the
    // decision time who is back and calls; the bets of both stand.
    let (round, _) = ctx.open_round("evo-live");
    ctx.accepted_bets(
        &round,
        json!([
            {"player": "p4", "bet": "ante", "stake_minor": 1_000},
            {"player": "p5", "bet": "ante", "stake_minor": 1_000},
            {"player": "p5", "bet": "bonus", "stake_minor": 100},
            {"player": "p6", "bet": "ante", "stake_minor": 1_000},
        ]),
    );
    ctx.close_betting(&round);
    ctx.connection("evo-live", "p4", false);
    ctx.cards_ok(&round, &ACES_OVER_FIVES.first_seven());
    assert!(ctx
        .connection("evo-live", "p5", false)
        .get("automatic_decisions")
        .is_none());
    ctx.connection("evo-live", "p4", true);
    ctx.connection("evo-live", "p5", true);
    ctx.decide_ok(&round, &[("p4", "fold"), ("p5", "fold"), ("p6", "call")]);
    let settled = ctx.cards_ok(&round, &ACES_OVER_FIVES.turn_and_river());
    assert_paid(&settled, "p4", &[("ante", "lose", 1_000, 0, 0)]);
    assert_paid(
        &settled,
        "p5",
        &[
            ("ante", "lose", 1_000, 0, 0),
            ("bonus", "pair_of_aces", 100, 100, 700),
        ],
    );
    rounds.push(round);

    // Rounds left open across the restart: a live and an RNG round awaiting the decisions.
    let (open_live, _) = ctx.to_the_flop(
        "evo-live",
        json!([{"player": "p1", "bet": "ante", "stake_minor": 1_000}]),
        &ACES_OVER_FIVES,
    );
    let (open_rng, opened) = ctx.open_round("syn-rng");
    let commitment = opened["rng_commitment"].as_str().unwrap().to_string();
    ctx.accepted_bets(
        &open_rng,
        json!([
            {"player": "p1", "bet": "ante", "stake_minor": 1_000},
            {"player": "p1", "bet": "aa", "stake_minor": 200},
        ]),
    );
    ctx.close_betting(&open_rng);
    let (s, first) = ctx.event(&open_rng, json!({"type": "deal"}));
    assert_eq!((s, &first["phase"]), (200, &json!("decisions")), "{first}");
    rounds.push(open_live.clone());
    rounds.push(open_rng.clone());

    crate::replay::exported_log_verifies_and_replays(&ctx.server, &ctx.auditor);
    let before: Vec<Value> = rounds.iter().map(|r| ctx.round(r)).collect();
    let tables: Vec<Value> = ["evo-live", "evo-rng", "syn-live", "syn-rng"]
        .iter()
        .map(|t| {
            ctx.server
                .get_as(Some(&ctx.op), &format!("/v1/tables/{t}"))
                .2
        })
        .collect();
    let (op, auditor) = (ctx.op.clone(), ctx.auditor.clone());
    drop(ctx);

    // A restart rebuilds the state from the log: every round and table reads back the same.
    let server = TestServer::on(&storage);
    for (round, was) in rounds.iter().zip(&before) {
        let (s, _, now) = server.get_as(Some(&op), &format!("/v1/rounds/{round}"));
        assert_eq!(s, 200, "{now}");
        assert_eq!(&now, was, "round {round} after the restart");
    }
    for (t, was) in ["evo-live", "evo-rng", "syn-live", "syn-rng"]
        .iter()
        .zip(&tables)
    {
        let (_, _, now) = server.get_as(Some(&op), &format!("/v1/tables/{t}"));
        assert_eq!(&now, was, "table {t} after the restart");
    }
    crate::replay::exported_log_verifies_and_replays(&server, &auditor);
    // And play goes on where it stopped.
    let ctx = Ctx {
        server,
        op,
        auditor,
    };
    let played = ctx.play(
        "syn-live",
        json!([{"player": "p1", "bet": "ante", "stake_minor": 1_000}]),
        &DEALER_PAIR_OF_4S,
        &[("p1", "call")],
    );
    assert_paid(
        &played.settled,
        "p1",
        &[("ante", "lose", 1_000, 0, 0), ("call", "lose", 2_000, 0, 0)],
    );
    // The rounds left open are finished after the restart, the RNG one from its seed.
    ctx.decide_ok(&open_live, &[("p1", "call")]);
    let settled = ctx.cards_ok(&open_live, &ACES_OVER_FIVES.turn_and_river());
    assert_paid(
        &settled,
        "p1",
        &[
            ("ante", "pair_or_less", 1_000, 1_000, 1_000),
            ("call", "win", 2_000, 2_000, 2_000),
        ],
    );
    ctx.decide_ok(&open_rng, &[("p1", "call")]);
    let (s, settled) = ctx.event(&open_rng, json!({"type": "deal"}));
    assert_eq!(
        (s, &settled["phase"]),
        (200, &json!("settled")),
        "{settled}"
    );
    let cards = ctx.round(&open_rng)["cards"].as_array().unwrap().clone();
    assert_seed_deals(
        SYNOT,
        &commitment,
        settled["rng_seed"].as_str().unwrap(),
        &cards,
    );
    assert_rng_paid(SYNOT, &settled, &cards, "p1", 1_000, 200, true);
    crate::replay::exported_log_verifies_and_replays(&ctx.server, &ctx.auditor);
}

#[test]
fn casino_holdem_end_to_end_on_sqlite() {
    scenario(Backend::Sqlite);
}

#[test]
fn casino_holdem_end_to_end_on_postgres() {
    scenario(Backend::Postgres);
}
