//! Baccarat end to end over HTTP: SYNOT Baccarat (`synot-baccarat@1`) and Evolution Speed
//! Baccarat (`evolution-speed-baccarat@1`), live and RNG, against the real server.
//!
//! The rules are asserted as 002 states them ("Pravidla pro třetí kartu", "Výplatní tabulka",
//! "Zásady odpojení", "Řešení chyb"), not as the plan files encode them: the dealing order,
//! the naturals, every row of the Banker's third-card table as live coups (the `next` position
//! the API announces after each card), a card against the rules refused and the round waiting
//! for the right card or a void, every bet with its exact money, SYNOT's refund to a player
//! disconnected before betting closes, the shoe's eight copies of each card, RNG rounds whose
//! revealed seed is the committed one, the exported log verified offline and a restart that
//! rebuilds every round from the log (SQLite and PostgreSQL).
//!
//! [`Ctx`] and the card helpers are shared with `api_top_card.rs`.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::HashMap;

use serde_json::{json, Value};
use sha2::Digest;

use crate::server::{Backend, Storage, TestServer, ADMIN_KEY};

pub const SYNOT: &str = "synot-baccarat@1";
pub const SPEED: &str = "evolution-speed-baccarat@1";

/// Copies of each card in an eight-deck shoe.
const COPIES: u32 = 8;

/// One operator's card tables over HTTP, with an auditor key, and for each live table the
/// cards its shoe has given (as this test dealt them) since the last shuffle.
pub struct Ctx {
    pub server: TestServer,
    pub op: String,
    pub auditor: String,
    shoe: RefCell<HashMap<String, HashMap<String, u32>>>,
    /// Cards of each round counted so far (a re-deal discards them).
    round_cards: RefCell<HashMap<String, usize>>,
    _storage: Option<Storage>,
}

/// A card as the dealer system reports it: the position and the card.
pub type Dealt = Vec<(&'static str, String)>;

impl Ctx {
    /// A server on `storage` (kept by the caller: a restart reuses it).
    pub fn start(storage: &Storage) -> Ctx {
        let server = TestServer::on(storage);
        let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
        let auditor = server.create_key(ADMIN_KEY, "auditor", None);
        Ctx {
            server,
            op,
            auditor,
            shoe: RefCell::default(),
            round_cards: RefCell::default(),
            _storage: None,
        }
    }

    /// A server on a fresh SQLite database of its own.
    pub fn sqlite() -> Ctx {
        let storage = Storage::new(Backend::Sqlite);
        let mut ctx = Ctx::start(&storage);
        ctx._storage = Some(storage);
        ctx
    }

    pub fn open_table(&self, table: &str, plan: &str, mode: &str) {
        let (s, b) = self.server.post(
            &self.op,
            "/v1/tables",
            json!({"table": table, "plan": plan, "mode": mode}),
        );
        assert_eq!(s, 201, "{b}");
    }

    /// Opens the table's next round: its id and the reply.
    pub fn open_round(&self, table: &str) -> (String, Value) {
        let (s, b) = self
            .server
            .post(&self.op, &format!("/v1/tables/{table}/rounds"), json!({}));
        assert_eq!(s, 201, "{b}");
        (b["round"].as_str().expect("round id").to_string(), b)
    }

    /// Places bets; every one must be accepted.
    pub fn bets(&self, round: &str, bets: &[Value]) -> Value {
        let b = self.try_bets(round, bets);
        assert_eq!(b["accepted"], bets.len(), "every bet is accepted: {b}");
        b
    }

    /// Places bets, each accepted or refused on its own.
    pub fn try_bets(&self, round: &str, bets: &[Value]) -> Value {
        let (s, b) = self.server.post(
            &self.op,
            &format!("/v1/rounds/{round}/bets"),
            json!({ "bets": bets }),
        );
        assert_eq!(s, 200, "{b}");
        b
    }

    pub fn event(&self, round: &str, event: Value) -> (u16, Value) {
        self.server
            .post(&self.op, &format!("/v1/rounds/{round}/events"), event)
    }

    pub fn close_betting(&self, round: &str) {
        let (s, b) = self.event(round, json!({"type": "close_betting"}));
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["phase"], "betting_closed", "{b}");
    }

    /// Reports live cards, in dealing order, in one request. The cards the shoe gave (all of
    /// an accepted request; those a re-deal discarded) are counted for [`Ctx::ensure_shoe`].
    pub fn cards(&self, round: &str, cards: &[(&str, String)]) -> (u16, Value) {
        let body: Vec<Value> = cards
            .iter()
            .map(|(to, card)| json!({"to": to, "card": card}))
            .collect();
        let (s, b) = self.event(round, json!({"type": "cards", "cards": body}));
        if s == 200 {
            let taken: Vec<String> = match b["misdeal"]["discarded"].as_array() {
                Some(discarded) => {
                    let before = self.round_cards.borrow().get(round).copied().unwrap_or(0);
                    discarded[before.min(discarded.len())..]
                        .iter()
                        .map(|c| c["card"].as_str().expect("card").to_string())
                        .collect()
                }
                None => cards.iter().map(|(_, c)| c.clone()).collect(),
            };
            let mut dealt = self.round_cards.borrow_mut();
            let n = dealt.entry(round.to_string()).or_default();
            *n = if b["misdeal"].is_object() {
                0
            } else {
                *n + cards.len()
            };
            self.take(round, &taken);
        }
        (s, b)
    }

    /// The dealer declares a misdeal (Top Card): the reply.
    pub fn misdeal(&self, round: &str, reason: &str) -> (u16, Value) {
        let (s, b) = self.event(round, json!({"type": "misdeal", "reason": reason}));
        if s == 200 {
            self.round_cards.borrow_mut().remove(round);
        }
        (s, b)
    }

    fn take(&self, round: &str, cards: &[String]) {
        // The round's table, by the name the test gave it (its id is `<operator>:<name>`).
        let table = round.rsplit_once('.').map_or(round, |(t, _)| t);
        let table = table.rsplit_once(':').map_or(table, |(_, name)| name);
        let mut shoes = self.shoe.borrow_mut();
        let seen = shoes.entry(table.to_string()).or_default();
        for c in cards {
            *seen.entry(c.clone()).or_default() += 1;
        }
    }

    /// Shuffles the live table's shoe first when it could not give all of `cards` any more:
    /// every test coup is dealt from a real shoe of eight copies of each card.
    pub fn ensure_shoe(&self, table: &str, cards: &[(&str, String)]) {
        let mut want: HashMap<&str, u32> = HashMap::new();
        for (_, c) in cards {
            *want.entry(c.as_str()).or_default() += 1;
        }
        let exhausted = {
            let shoes = self.shoe.borrow();
            let seen = shoes.get(table);
            want.iter()
                .any(|(c, n)| seen.and_then(|s| s.get(*c)).copied().unwrap_or(0) + n > COPIES)
        };
        if exhausted {
            self.shuffle(table);
        }
    }

    /// Reports live cards that the rules must accept.
    pub fn cards_ok(&self, round: &str, cards: &[(&str, String)]) -> Value {
        let (s, b) = self.cards(round, cards);
        assert_eq!(s, 200, "{cards:?} must be accepted: {b}");
        b
    }

    pub fn round(&self, round: &str) -> Value {
        let (s, _, b) = self
            .server
            .get_as(Some(&self.op), &format!("/v1/rounds/{round}"));
        assert_eq!(s, 200, "{b}");
        b
    }

    pub fn table(&self, table: &str) -> Value {
        let (s, _, b) = self
            .server
            .get_as(Some(&self.op), &format!("/v1/tables/{table}"));
        assert_eq!(s, 200, "{b}");
        b
    }

    /// The kinds of the round's log entries, in order.
    pub fn recall_kinds(&self, round: &str) -> Vec<String> {
        let (s, _, r) = self
            .server
            .get_as(Some(&self.auditor), &format!("/v1/rounds/{round}/recall"));
        assert_eq!(s, 200, "{r}");
        r["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .map(|e| e["entry"]["kind"].as_str().expect("kind").to_string())
            .collect()
    }

    pub fn shuffle(&self, table: &str) -> Value {
        let (s, b) = self.server.post(
            &self.op,
            &format!("/v1/tables/{table}/shoe"),
            json!({"action": "shuffle"}),
        );
        assert_eq!(s, 200, "{b}");
        self.shoe.borrow_mut().remove(table);
        b
    }

    /// A player's connection lost or regained: the reply.
    pub fn connection(&self, table: &str, player: &str, connected: bool) -> Value {
        let (s, b) = self.server.post(
            &self.op,
            &format!("/v1/tables/{table}/players"),
            json!({"player": player, "connected": connected}),
        );
        assert_eq!(s, 200, "{b}");
        b
    }

    pub fn void(&self, round: &str, reason: &str) -> Value {
        let (s, b) = self.server.post(
            &self.op,
            &format!("/v1/rounds/{round}/void"),
            json!({ "reason": reason }),
        );
        assert_eq!(s, 200, "{b}");
        b
    }

    /// Opens a round on a live table, places `bets` (all accepted), closes betting and reports
    /// `cards` in one request, which the rules must accept: the round and the reply.
    pub fn live_round(
        &self,
        table: &str,
        bets: &[Value],
        cards: &[(&str, String)],
    ) -> (String, Value) {
        self.ensure_shoe(table, cards);
        let (round, _) = self.open_round(table);
        if !bets.is_empty() {
            self.bets(&round, bets);
        }
        self.close_betting(&round);
        let reply = self.cards_ok(&round, cards);
        (round, reply)
    }

    /// A whole live coup in one request: it must settle. Returns the round and the reply.
    pub fn live_coup(
        &self,
        table: &str,
        bets: &[Value],
        cards: &[(&str, String)],
    ) -> (String, Value) {
        let (round, reply) = self.live_round(table, bets, cards);
        assert_eq!(
            reply["phase"], "settled",
            "{cards:?} is a whole coup: {reply}"
        );
        assert_eq!(next_of(&reply), "complete", "{reply}");
        (round, reply)
    }
}

/// The position the API says the next card goes to, or `complete` / `decisions`.
pub fn next_of(reply: &Value) -> String {
    match reply["next"]["next"].as_str() {
        Some("card") => reply["next"]["to"].as_str().expect("to").to_string(),
        Some(other) => other.to_string(),
        None => panic!("the reply announces no next: {reply}"),
    }
}

/// A bet of player `p1`.
pub fn bet(kind: &str, stake: i64) -> Value {
    json!({"player": "p1", "bet": kind, "stake_minor": stake})
}

fn egalite(total: u8, stake: i64) -> Value {
    json!({"player": "p1", "bet": "egalite_extra", "total": total, "stake_minor": stake})
}

/// Asserts one bet's settlement to the minor unit: stake, returned stake, winnings, total.
pub fn assert_paid(s: &Value, stake: i64, returned: i64, win: i64, rule: &str) {
    let got = (
        s["stake_minor"].as_i64(),
        s["returned_minor"].as_i64(),
        s["win_minor"].as_i64(),
        s["total_minor"].as_i64(),
    );
    assert_eq!(
        got,
        (Some(stake), Some(returned), Some(win), Some(returned + win)),
        "{rule}: (stake, returned, win, total) of {s}"
    );
}

pub fn code_of(b: &Value) -> &str {
    b["code"].as_str().unwrap_or("")
}

/// SHA-256 of the revealed seed (hex), which must be the round's commitment; the seed bytes.
pub fn revealed_seed(reply: &Value, commitment: &str) -> [u8; 32] {
    let hex = reply["rng_seed"]
        .as_str()
        .unwrap_or_else(|| panic!("the seed is revealed at settlement: {reply}"));
    assert_eq!(hex.len(), 64, "{hex}");
    let seed: Vec<u8> = (0..32)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex seed"))
        .collect();
    assert_eq!(
        pitboss::plan::canonical::hex(&sha2::Sha256::digest(&seed)),
        commitment,
        "the revealed seed's SHA-256 is the commitment given before any bet"
    );
    seed.try_into().expect("32 bytes")
}

// ----- cards and the rules of 002, written out independently of the plan files -----------

const SUITS: [char; 4] = ['c', 'd', 'h', 's'];

/// A card worth `points` baccarat points (0 is a king), of the `i`-th suit.
fn pc(points: u8, i: usize) -> String {
    let rank = match points {
        0 => 'K',
        1 => 'A',
        n => char::from(b'0' + n),
    };
    format!("{rank}{}", SUITS[i % 4])
}

/// A coup in dealing order: Player 1, Banker 1, Player 2, Banker 2, then Player's and
/// Banker's third cards when given.
fn coup(p: &[&str], b: &[&str]) -> Dealt {
    let mut v: Dealt = vec![
        ("player_1", p[0].to_string()),
        ("banker_1", b[0].to_string()),
        ("player_2", p[1].to_string()),
        ("banker_2", b[1].to_string()),
    ];
    if let Some(c) = p.get(2) {
        v.push(("player_3", c.to_string()));
    }
    if let Some(c) = b.get(2) {
        v.push(("banker_3", c.to_string()));
    }
    v
}

/// "karta A (Eso) má hodnotu 1. Karty 2 až 9 mají svou nominální hodnotu a karty 10, J, Q a K
/// mají hodnotu 0."
fn points(card: &str) -> u8 {
    match card.as_bytes()[0] {
        b'A' => 1,
        c @ b'2'..=b'9' => c - b'0',
        _ => 0,
    }
}

/// What a complete coup is, read from its cards by 002's rules.
#[derive(Debug, Clone, Copy)]
struct Facts {
    player: u8,
    banker: u8,
    player_natural: bool,
    banker_natural: bool,
    cards: u8,
    player_pair: bool,
    banker_pair: bool,
    player_perfect: bool,
    banker_perfect: bool,
}

fn facts(cards: &Value) -> Facts {
    let cards: Vec<(String, String)> = cards
        .as_array()
        .expect("cards")
        .iter()
        .map(|c| {
            (
                c["to"].as_str().expect("to").to_string(),
                c["card"].as_str().expect("card").to_string(),
            )
        })
        .collect();
    let hand = |h: &str| -> Vec<&str> {
        cards
            .iter()
            .filter(|(to, _)| to.starts_with(h))
            .map(|(_, c)| c.as_str())
            .collect()
    };
    let (p, b) = (hand("player"), hand("banker"));
    let total = |h: &[&str]| h.iter().map(|c| points(c)).sum::<u8>() % 10;
    let rank = |c: &str| c[..c.len() - 1].to_string();
    Facts {
        player: total(&p),
        banker: total(&b),
        player_natural: total(&p[..2]) >= 8,
        banker_natural: total(&b[..2]) >= 8,
        cards: cards.len() as u8,
        player_pair: rank(p[0]) == rank(p[1]),
        banker_pair: rank(b[0]) == rank(b[1]),
        player_perfect: p[0] == p[1],
        banker_perfect: b[0] == b[1],
    }
}

/// Egalite Extra's ratio per tie total ("Egalite 0" … "Egalite 9", SYNOT).
const EGALITE: [i64; 10] = [150, 215, 220, 200, 120, 110, 45, 45, 80, 80];

/// (returned, win) of `bet` on the coup, from 002's payout tables (rounded down, the plans'
/// rounding). Player/Banker Bonus (Speed Baccarat) by the studio's table the plan assumes.
fn expected(bet: &Value, f: &Facts) -> (i64, i64) {
    let stake = bet["stake_minor"].as_i64().expect("stake");
    let win = |n: i64, d: i64| (stake, stake * n / d);
    let lose = (0, 0);
    let refund = (stake, 0);
    let by = f.player.cmp(&f.banker);
    let when = |c: bool, paid: (i64, i64)| if c { paid } else { lose };
    match bet["bet"].as_str().expect("bet") {
        "player" => match by {
            Ordering::Greater => win(1, 1),
            Ordering::Equal => refund,
            Ordering::Less => lose,
        },
        "banker" => match by {
            Ordering::Less => win(19, 20),
            Ordering::Equal => refund,
            Ordering::Greater => lose,
        },
        "tie" => when(by == Ordering::Equal, win(8, 1)),
        "player_pair" => when(f.player_pair, win(11, 1)),
        "banker_pair" => when(f.banker_pair, win(11, 1)),
        "any_pair" => when(f.player_pair || f.banker_pair, win(5, 1)),
        "perfect_pair" => when(f.player_perfect || f.banker_perfect, win(25, 1)),
        "big" => when(f.cards >= 5, win(54, 100)),
        "small" => when(f.cards == 4, win(3, 2)),
        "egalite_extra" => {
            let t = bet["total"].as_u64().expect("total") as u8;
            when(
                by == Ordering::Equal && f.player == t,
                win(EGALITE[usize::from(t)], 1),
            )
        }
        side @ ("player_bonus" | "banker_bonus") => {
            let (mine, theirs, natural) = if side == "player_bonus" {
                (f.player, f.banker, f.player_natural)
            } else {
                (f.banker, f.player, f.banker_natural)
            };
            if mine == theirs {
                when(f.player_natural && f.banker_natural, refund)
            } else if mine < theirs {
                lose
            } else if natural {
                win(1, 1)
            } else {
                match mine - theirs {
                    9 => win(30, 1),
                    8 => win(10, 1),
                    7 => win(6, 1),
                    6 => win(4, 1),
                    5 => win(2, 1),
                    4 => win(1, 1),
                    _ => lose,
                }
            }
        }
        other => panic!("no expectation for {other}"),
    }
}

/// Checks every settlement of a settled reply against 002's tables, bet by bet.
fn assert_settled_by_the_tables(reply: &Value, cards: &Value, bets: &[Value]) {
    let f = facts(cards);
    let o = &reply["outcome"];
    assert_eq!(
        (
            o["player_total"].as_u64(),
            o["banker_total"].as_u64(),
            o["cards_dealt"].as_u64()
        ),
        (
            Some(u64::from(f.player)),
            Some(u64::from(f.banker)),
            Some(u64::from(f.cards))
        ),
        "the outcome is read from the cards {cards}"
    );
    let settlements = reply["settlements"].as_array().expect("settlements");
    assert_eq!(settlements.len(), bets.len(), "{reply}");
    for (s, b) in settlements.iter().zip(bets) {
        let stake = b["stake_minor"].as_i64().expect("stake");
        let (returned, win) = expected(b, &f);
        assert_paid(s, stake, returned, win, &format!("{b} on {f:?}"));
    }
    let paid: i64 = settlements
        .iter()
        .map(|s| s["total_minor"].as_i64().expect("total"))
        .sum();
    assert_eq!(reply["paid_minor"], paid, "{reply}");
}

/// One bet of every type the plan offers (Egalite Extra on every total), all from `p1`.
fn every_bet(plan: &str) -> Vec<Value> {
    let mut v = vec![
        bet("player", 1_000),
        bet("banker", 1_234),
        bet("tie", 500),
        bet("player_pair", 300),
        bet("banker_pair", 300),
        bet("any_pair", 200),
        bet("perfect_pair", 100),
    ];
    if plan == SYNOT {
        v.push(bet("big", 1_001));
        v.push(bet("small", 999));
        v.extend((0..10).map(|t| egalite(t, 100)));
    } else {
        v.push(bet("player_bonus", 700));
        v.push(bet("banker_bonus", 701));
    }
    v
}

fn cards_of(dealt: &Dealt) -> Value {
    Value::Array(
        dealt
            .iter()
            .map(|(to, c)| json!({"to": to, "card": c}))
            .collect(),
    )
}

/// A live table of each plan on one server.
fn both_plans() -> Ctx {
    let ctx = Ctx::sqlite();
    ctx.open_table("synot", SYNOT, "live");
    ctx.open_table("speed", SPEED, "live");
    ctx
}

/// Runs `f` on a live table of each plan, each on its own server, both at once (the rounds
/// wait mostly on the database's fsync).
fn each_plan(f: impl Fn(&Ctx, &str, &str) + Sync) {
    std::thread::scope(|scope| {
        for (table, plan) in [("synot", SYNOT), ("speed", SPEED)] {
            let f = &f;
            scope.spawn(move || {
                let ctx = Ctx::sqlite();
                ctx.open_table(table, plan, "live");
                f(&ctx, table, plan);
            });
        }
    });
}

// ----- dealing order and naturals ----------------------------------------------------------

/// "první karta na pozici Hráč, druhá karta na pozici Krupiér/Banker, třetí karta na pozici
/// Hráč a čtvrtá karta na pozici Krupiér/Banker"
#[test]
fn cards_are_dealt_to_player_banker_player_banker() {
    each_plan(|ctx, table, plan| {
        let (round, _) = ctx.open_round(table);
        ctx.bets(&round, &[bet("player", 1_000)]);
        ctx.close_betting(&round);
        // The first card to Banker is refused: the first card is Player's.
        let (s, b) = ctx.cards(&round, &[("banker_1", "2c".into())]);
        assert_eq!((s, code_of(&b)), (422, "wrong_position"), "{plan}: {b}");
        assert_eq!(b["plan"], plan, "{b}");
        assert!(ctx.round(&round)["cards"].as_array().unwrap().is_empty());
        // One card at a time: the API announces the next position by the dealing order.
        let deal = coup(&["2h", "4d"], &["3c", "2s"]);
        let announced: Vec<String> = deal
            .iter()
            .take(4)
            .map(|c| next_of(&ctx.cards_ok(&round, std::slice::from_ref(c))))
            .collect();
        // Player 6 stands, Banker 5 draws when Player stood.
        assert_eq!(
            announced,
            ["banker_1", "player_2", "banker_2", "banker_3"],
            "{plan}: the order of the deal"
        );
        let r = ctx.round(&round);
        assert_eq!(
            r["cards"],
            cards_of(&deal),
            "the round keeps the cards in order"
        );
        assert_eq!(r["phase"], "betting_closed");
        let done = ctx.cards_ok(&round, &[("banker_3", "Ks".into())]);
        assert_eq!(done["phase"], "settled", "{done}");
        // Player 6 beats Banker 5: the Player bet wins 1:1.
        assert_paid(
            &done["settlements"][0],
            1_000,
            1_000,
            1_000,
            "Player wins 1:1",
        );
    });
}

/// "Pokud má Hráč nebo Krupiér celkový součet 8 nebo 9, další karta se nerozdává. Toto
/// pravidlo má přednost před všemi ostatními pravidly pro třetí kartu."
#[test]
fn a_natural_8_or_9_stops_the_deal_after_four_cards() {
    // (Player's two cards, Banker's two cards, why): in every case a hand would otherwise
    // draw (Player on 0–5, or Banker on 0–5).
    let cases: [(&[&str], &[&str], &str); 5] = [
        (
            &["5h", "3c"],
            &["Ac", "Kd"],
            "Player's natural 8 against Banker's 1",
        ),
        (
            &["4h", "5c"],
            &["2c", "Qd"],
            "Player's natural 9 against Banker's 2",
        ),
        (
            &["Kh", "Tc"],
            &["6c", "2d"],
            "Banker's natural 8 against Player's 0",
        ),
        (
            &["Ah", "2c"],
            &["4c", "5d"],
            "Banker's natural 9 against Player's 3",
        ),
        (&["6h", "2c"], &["9c", "Kd"], "both naturals, 8 against 9"),
    ];
    each_plan(|ctx, table, plan| {
        for (p, b, why) in cases {
            let deal = coup(p, b);
            let mut too_many = deal.clone();
            too_many.push(("player_3", "5s".into()));
            ctx.ensure_shoe(table, &deal);
            let (round, _) = ctx.open_round(table);
            ctx.close_betting(&round);
            let (s, r) = ctx.cards(&round, &too_many);
            assert_eq!(
                (s, code_of(&r)),
                (422, "deal_complete"),
                "{plan}, {why}: no further card is dealt: {r}"
            );
            assert!(
                ctx.round(&round)["cards"].as_array().unwrap().is_empty(),
                "{plan}, {why}: nothing of a refused request is recorded"
            );
            let done = ctx.cards_ok(&round, &deal);
            assert_eq!(done["phase"], "settled", "{plan}, {why}: {done}");
            assert_eq!(next_of(&done), "complete", "{plan}, {why}");
            assert_eq!(done["outcome"]["cards_dealt"], 4, "{plan}, {why}: {done}");
        }
    });
}

// ----- the third-card rules ----------------------------------------------------------------

/// Hráč: "0, 1, 2, 3, 4, 5 — Obdrží kartu"; "6, 7 — Stojí".
#[test]
fn player_draws_on_0_to_5_and_stands_on_6_or_7() {
    each_plan(|ctx, table, plan| {
        for total in 0..=7u8 {
            // Banker 7 (K + 7) stands whatever Player does.
            let (p1, p2) = (pc(total, 0), pc(0, 1));
            let deal = coup(&[&p1, &p2], &["7c", "Kd"]);
            let p3 = ("player_3", pc(0, total as usize));
            ctx.ensure_shoe(table, &[deal.clone(), vec![p3.clone()]].concat());
            let (round, reply) = ctx.live_round(table, &[], &deal);
            let draws = total <= 5;
            let rule = format!(
                "{plan}: Player with {total} {}",
                if draws {
                    "draws a third card"
                } else {
                    "stands"
                }
            );
            if draws {
                assert_eq!(next_of(&reply), "player_3", "{rule}: {reply}");
                assert_eq!(reply["phase"], Value::Null, "{rule}: not settled yet");
                let done = ctx.cards_ok(&round, &[p3]);
                assert_eq!(done["phase"], "settled", "{rule}, and Banker with 7 stands");
            } else {
                assert_eq!(next_of(&reply), "complete", "{rule}: {reply}");
                assert_eq!(reply["phase"], "settled", "{rule}");
            }
        }
    });
}

/// "Pokud pozice Hráč stojí, pak pozice Krupiér/Banker obdrží třetí kartu, pokud je jeho
/// hodnota celkem 5 nebo méně."
#[test]
fn banker_draws_on_0_to_5_and_stands_on_6_or_7_when_player_stood() {
    each_plan(|ctx, table, plan| {
        for player in [6u8, 7] {
            for banker in 0..=7u8 {
                let (p1, b1) = (pc(player, banker as usize), pc(banker, player as usize));
                let deal = coup(&[&p1, "Kc"], &[&b1, "Qd"]);
                let b3 = ("banker_3", "4h".to_string());
                ctx.ensure_shoe(table, &[deal.clone(), vec![b3.clone()]].concat());
                let (round, reply) = ctx.live_round(table, &[], &deal);
                let draws = banker <= 5;
                let rule = format!(
                    "{plan}: Player stood on {player}, so Banker with {banker} {}",
                    if draws { "draws" } else { "stands" }
                );
                if draws {
                    assert_eq!(next_of(&reply), "banker_3", "{rule}: {reply}");
                    let done = ctx.cards_ok(&round, &[b3]);
                    assert_eq!(done["phase"], "settled", "{rule}: {done}");
                    assert_eq!(
                        done["outcome"]["banker_total"],
                        (banker + 4) % 10,
                        "{rule}: {done}"
                    );
                } else {
                    assert_eq!(next_of(&reply), "complete", "{rule}: {reply}");
                    assert_eq!(reply["outcome"]["cards_dealt"], 4, "{rule}");
                }
            }
        }
    });
}

/// The table "Krupiér" / "Banker" of 002 ("Pokud pozice Hráč obdrží třetí kartu…"): the
/// Player's third-card points on which Banker with each two-card total draws.
fn banker_draws_when_player_drew(banker: u8, third: u8) -> bool {
    match banker {
        0..=2 => true,
        3 => third != 8,
        4 => (2..=7).contains(&third),
        5 => (4..=7).contains(&third),
        6 => third == 6 || third == 7,
        7 => false,
        _ => unreachable!("8 and 9 are naturals"),
    }
}

/// Plays a row of the table as live coups on both plans: for every points value of Player's
/// third card (with Banker's two-card total taken in turn from the row's `totals`), the
/// position the API announces once Player's third card is dealt: Banker's third card where
/// Banker draws; where Banker stands, the end of the coup, and a Banker card in the same
/// request is refused (`deal_complete`, nothing recorded). The coup's totals are its cards'.
fn third_card_row(totals: &[u8]) {
    each_plan(|ctx, table, plan| {
        for third in 0..=9u8 {
            let i = usize::from(third);
            let banker = totals[i % totals.len()];
            // Player 0–5 draws (never a natural); Banker's two cards make `banker`.
            let player = third % 6;
            let (p1, p2) = (pc(player, i), pc(0, i + 1));
            let (b1, b2) = (pc(banker, i + 2), pc(0, i + 3));
            let mut five = coup(&[&p1, &p2, &pc(third, i + 1)], &[&b1, &b2]);
            let b3 = ("banker_3", pc(3, i));
            let draws = banker_draws_when_player_drew(banker, third);
            let rule = format!(
                "{plan}: Banker with {banker} {} when Player's third card is {third}",
                if draws { "draws" } else { "stands" }
            );
            let mut six = five.clone();
            six.push(b3.clone());
            ctx.ensure_shoe(table, &six);
            let (round, _) = ctx.open_round(table);
            ctx.close_betting(&round);
            let settled = if draws {
                let r = ctx.cards_ok(&round, &five);
                assert_eq!(next_of(&r), "banker_3", "{rule}: {r}");
                assert_eq!(r["phase"], Value::Null, "{rule}: the coup goes on: {r}");
                ctx.cards_ok(&round, std::slice::from_ref(&b3))
            } else {
                let (s, r) = ctx.cards(&round, &six);
                assert_eq!((s, code_of(&r)), (422, "deal_complete"), "{rule}: {r}");
                ctx.cards_ok(&round, &five)
            };
            assert_eq!(settled["phase"], "settled", "{rule}: {settled}");
            assert_eq!(next_of(&settled), "complete", "{rule}");
            if draws {
                five.push(b3);
            }
            assert_eq!(ctx.round(&round)["cards"], cards_of(&five), "{rule}");
            let o = &settled["outcome"];
            let banker_final = if draws { (banker + 3) % 10 } else { banker };
            assert_eq!(
                (
                    o["player_total"].as_u64(),
                    o["banker_total"].as_u64(),
                    o["cards_dealt"].as_u64()
                ),
                (
                    Some(u64::from((player + third) % 10)),
                    Some(u64::from(banker_final)),
                    Some(if draws { 6 } else { 5 })
                ),
                "{rule}: {o}"
            );
        }
    });
}

/// "0, 1, 2 — Vždy obdrží kartu"
#[test]
fn banker_with_0_1_or_2_always_draws_when_player_drew() {
    third_card_row(&[0, 1, 2]);
}

/// "3 — 0, 1, 2, 3, 4, 5, 6, 7, 9 — 8"
#[test]
fn banker_with_3_stands_only_when_player_third_card_is_8() {
    third_card_row(&[3]);
}

/// "4 — 2, 3, 4, 5, 6, 7 — 0, 1, 8, 9"
#[test]
fn banker_with_4_draws_when_player_third_card_is_2_to_7() {
    third_card_row(&[4]);
}

/// "5 — 4, 5, 6, 7 — 0, 1, 2, 3, 8, 9"
#[test]
fn banker_with_5_draws_when_player_third_card_is_4_to_7() {
    third_card_row(&[5]);
}

/// "6 — 6, 7 — 0, 1, 2, 3, 4, 5, 8, 9"
#[test]
fn banker_with_6_draws_when_player_third_card_is_6_or_7() {
    third_card_row(&[6]);
}

/// "7 — Vždy stojí"
#[test]
fn banker_with_7_always_stands_when_player_drew() {
    third_card_row(&[7]);
}

// ----- the error policy ----------------------------------------------------------------------

/// "Řešení chyb": "hra se dočasně pozastaví" and the error is repaired. A card against the
/// drawing rules is refused with nothing of the request recorded, the round waits, and the
/// right card completes it. Baccarat has no re-deal: a misdeal is refused.
#[test]
fn a_card_against_the_drawing_rules_is_refused_and_the_round_waits_for_the_right_card() {
    each_plan(|ctx, table, plan| {
        let bets = [bet("player", 2_000), bet("banker", 2_000)];
        // Player 6 stands; Banker 2 draws.
        let deal = coup(&["3h", "3c"], &["2d", "Kc"]);
        let (round, reply) = ctx.live_round(table, &bets, &deal);
        assert_eq!(next_of(&reply), "banker_3", "{reply}");
        let before = ctx.round(&round);
        let log_before = ctx.recall_kinds(&round);

        // A third card to Player, who stood.
        let (s, b) = ctx.cards(&round, &[("player_3", "9s".into())]);
        assert_eq!((s, code_of(&b)), (422, "wrong_position"), "{plan}: {b}");
        assert_eq!(b["plan"], plan);
        assert_eq!(
            b["clause"],
            "Cíl hry a výplaty výher; Pravidla pro třetí kartu"
        );
        assert!(
            b["detail"].as_str().unwrap().contains("Řešení chyb"),
            "the refusal names the error policy: {b}"
        );
        // Two cards where one is due: neither is recorded.
        let (s, b) = ctx.cards(
            &round,
            &[("banker_3", "5h".into()), ("banker_3", "5d".into())],
        );
        assert_eq!((s, code_of(&b)), (422, "deal_complete"), "{plan}: {b}");
        // A misdeal is not a re-deal in baccarat.
        let (s, b) = ctx.event(&round, json!({"type": "misdeal", "reason": "card dropped"}));
        assert_eq!(
            (s, code_of(&b)),
            (422, "misdeal_not_in_plan"),
            "{plan}: {b}"
        );
        assert_eq!(b["clause"], "Řešení chyb");

        // The round is paused as it was: same cards, not settled; only the refusals logged.
        let paused = ctx.round(&round);
        assert_eq!(paused["cards"], before["cards"]);
        assert_eq!(paused["phase"], "betting_closed");
        assert_eq!(paused["settlements"], Value::Null);
        let log = ctx.recall_kinds(&round);
        assert_eq!(&log[..log_before.len()], &log_before[..]);
        assert_eq!(
            &log[log_before.len()..],
            ["event_refused", "event_refused", "event_refused"],
            "{plan}: nothing but the refusals is recorded"
        );

        // The right card repairs the round: Banker 2 + 5 = 7 beats Player 6.
        let done = ctx.cards_ok(&round, &[("banker_3", "5h".into())]);
        assert_eq!(done["phase"], "settled", "{done}");
        assert_paid(&done["settlements"][0], 2_000, 0, 0, "Player loses");
        assert_paid(
            &done["settlements"][1],
            2_000,
            2_000,
            1_900,
            "Banker wins 0.95:1",
        );
    });
}

/// "Závažnější chyby mohou vést ke zrušení aktuální hry … V takovém případě se Sázejícím vrací
/// podané sázky."
#[test]
fn a_round_that_cannot_be_repaired_is_voided_and_every_stake_returned() {
    each_plan(|ctx, table, plan| {
        let bets = [
            bet("player", 1_500),
            bet("tie", 250),
            json!({"player": "p2", "bet": "banker", "stake_minor": 3_333}),
            json!({"player": "p2", "bet": "any_pair", "stake_minor": 100}),
        ];
        let deal = coup(&["3h", "3c"], &["2d", "Kc"]);
        let (round, _) = ctx.live_round(table, &bets, &deal);
        let (s, b) = ctx.cards(&round, &[("player_3", "9s".into())]);
        assert_eq!(s, 422, "{b}");
        let voided = ctx.void(&round, "shoe fault: the coup cannot be reconstructed");
        assert_eq!(voided["phase"], "voided", "{voided}");
        let refunds = voided["refunds"].as_array().unwrap();
        let stakes = [1_500, 250, 3_333, 100];
        assert_eq!(refunds.len(), 4, "{voided}");
        for (r, stake) in refunds.iter().zip(stakes) {
            assert_eq!(
                r["refund_minor"], stake,
                "{plan}: the stake comes back: {r}"
            );
        }
        assert_eq!(voided["refund_minor"], stakes.iter().sum::<i64>());
        // Nothing more happens to the round; the table plays on.
        let (s, b) = ctx.cards(&round, &[("banker_3", "5h".into())]);
        assert_eq!((s, code_of(&b)), (409, "out_of_order"), "{b}");
        let (s, _, settlement) = ctx
            .server
            .get_as(Some(&ctx.op), &format!("/v1/rounds/{round}/settlement"));
        assert_eq!(s, 200);
        assert_eq!(settlement["refund_minor"], voided["refund_minor"]);
        ctx.live_coup(table, &[], &coup(&["9h", "Kc"], &["2d", "Kd"]));
    });
}

// ----- bets and payouts ----------------------------------------------------------------------

/// "Při sázce na pozici Hráč je výhra vyplacena v poměru 1 : 1. Při sázce na pozici Banker je
/// výhra vyplacena v poměru 0,95 : 1." "Sázka na pozici Remíza je vyplacena v poměru 8 : 1."
/// On a tie the Player and Banker stakes come back. 0,95:1 is rounded down (the plans'
/// rounding).
#[test]
fn player_pays_1_to_1_banker_0_95_to_1_rounded_down_tie_8_to_1_and_a_tie_returns_main_bets() {
    each_plan(|ctx, table, plan| {
        let bets = [
            bet("player", 1_000),
            bet("banker", 1_234),
            bet("banker", 150),
            bet("banker", 101),
            bet("tie", 700),
        ];
        // Player's natural 9 against Banker's 5.
        let (_, r) = ctx.live_coup(table, &bets, &coup(&["9h", "Kc"], &["2d", "3s"]));
        let s = &r["settlements"];
        assert_paid(&s[0], 1_000, 1_000, 1_000, &format!("{plan}: Player 1:1"));
        assert_paid(&s[1], 1_234, 0, 0, "Banker loses");
        assert_paid(&s[4], 700, 0, 0, "Tie loses");
        assert_eq!(r["stake_minor"], 1_000 + 1_234 + 150 + 101 + 700);
        assert_eq!(r["paid_minor"], 2_000);

        // Banker 7 against Player 5 (Player drew a 5 on 0; Banker 7 stands).
        let (_, r) = ctx.live_coup(table, &bets, &coup(&["Th", "Jc", "5d"], &["4d", "3s"]));
        let s = &r["settlements"];
        assert_paid(&s[0], 1_000, 0, 0, "Player loses");
        // 1 234 × 0,95 = 1 172,3 → 1 172; 150 × 0,95 = 142,5 → 142; 101 × 0,95 = 95,95 → 95.
        assert_paid(
            &s[1],
            1_234,
            1_234,
            1_172,
            &format!("{plan}: Banker 0.95:1 rounded down"),
        );
        assert_paid(&s[2], 150, 150, 142, "Banker 0.95:1, 142.5 rounded down");
        assert_paid(&s[3], 101, 101, 95, "Banker 0.95:1, 95.95 rounded down");
        assert_eq!(r["outcome"]["winner"], "banker");

        // A tie at 7: Player and Banker stakes returned, Tie 8:1.
        let (_, r) = ctx.live_coup(table, &bets, &coup(&["7h", "Kc"], &["7d", "Qs"]));
        let s = &r["settlements"];
        assert_eq!(r["outcome"]["winner"], "tie");
        assert_paid(
            &s[0],
            1_000,
            1_000,
            0,
            &format!("{plan}: a tie returns the Player bet"),
        );
        assert_paid(&s[1], 1_234, 1_234, 0, "a tie returns the Banker bet");
        assert_paid(&s[2], 150, 150, 0, "a tie returns the Banker bet");
        assert_paid(&s[4], 700, 700, 5_600, &format!("{plan}: Tie 8:1"));
    });
}

/// "Vedlejší sázky Pár hráče, Pár krupiéra/bankera, Jakýkoli pár a Dokonalé páry vyhodnocují
/// první dvě karty": a pair is two cards of one rank, a perfect pair also of one suit; the
/// third card never makes a pair; K-Q is no pair though both count 0. 11:1, 11:1, 5:1, 25:1.
#[test]
fn pair_bets_pay_on_the_first_two_cards_of_each_hand() {
    let pairs = [
        bet("player", 100),
        bet("player_pair", 1_000),
        bet("banker_pair", 1_000),
        bet("any_pair", 1_000),
        bet("perfect_pair", 1_000),
    ];
    // (cards, player pair, banker pair, perfect) with why.
    let coups: [(Dealt, bool, bool, bool, &str); 5] = [
        (
            coup(&["4h", "4h"], &["2c", "3d"]),
            true,
            false,
            true,
            "Player's 4♥ 4♥: a perfect pair",
        ),
        (
            coup(&["9d", "Kh"], &["5s", "5s"]),
            false,
            true,
            true,
            "Banker's 5♠ 5♠: a perfect pair",
        ),
        (
            coup(&["Qh", "Qs", "9c"], &["2c", "3d"]),
            true,
            false,
            false,
            "Player's Q♥ Q♠: a pair of one rank, not of one suit",
        ),
        (
            coup(&["Kh", "Qh", "Kd"], &["Ks", "Jh", "Kc"]),
            false,
            false,
            false,
            "K-Q and K-J are no pairs, and a third king does not pair",
        ),
        (
            coup(&["9h", "9c"], &["7d", "7s"]),
            true,
            true,
            false,
            "a pair in each hand",
        ),
    ];
    each_plan(|ctx, table, plan| {
        for (cards, pp, bp, perfect, why) in &coups {
            let (_, r) = ctx.live_coup(table, &pairs, cards);
            let s = &r["settlements"];
            let paid = |win: bool, ratio: i64| if win { (1_000, 1_000 * ratio) } else { (0, 0) };
            let rule = format!("{plan}, {why}");
            let (ret, win) = paid(*pp, 11);
            assert_paid(&s[1], 1_000, ret, win, &format!("{rule}: Player Pair 11:1"));
            let (ret, win) = paid(*bp, 11);
            assert_paid(&s[2], 1_000, ret, win, &format!("{rule}: Banker Pair 11:1"));
            // Any Pair 5:1, paid once when both hands pair.
            let (ret, win) = paid(*pp || *bp, 5);
            assert_paid(&s[3], 1_000, ret, win, &format!("{rule}: Any Pair 5:1"));
            let (ret, win) = paid(*perfect, 25);
            assert_paid(
                &s[4],
                1_000,
                ret,
                win,
                &format!("{rule}: Perfect Pair 25:1"),
            );
        }
    });
}

/// SYNOT: "Velká hra" wins when five or six cards are dealt (0,54:1), "Malá hra" on four
/// (1,5:1), both rounded down. Speed Baccarat offers neither.
#[test]
fn big_pays_0_54_to_1_on_five_or_six_cards_and_small_1_5_to_1_on_four() {
    let ctx = both_plans();
    let bets = [bet("player", 100), bet("big", 1_001), bet("small", 999)];
    let coups: [(Dealt, u8); 3] = [
        (coup(&["9h", "Kc"], &["2d", "3s"]), 4),
        (coup(&["Th", "Jc", "5d"], &["4d", "3s"]), 5),
        (coup(&["Th", "Jc", "Kd"], &["Ad", "Qs", "2h"]), 6),
    ];
    for (cards, n) in coups {
        let (_, r) = ctx.live_coup("synot", &bets, &cards);
        assert_eq!(r["outcome"]["cards_dealt"], n);
        let s = &r["settlements"];
        if n == 4 {
            assert_paid(&s[1], 1_001, 0, 0, "Big loses on four cards");
            // 999 × 1,5 = 1 498,5 → 1 498.
            assert_paid(
                &s[2],
                999,
                999,
                1_498,
                "Small 1.5:1 on four cards, rounded down",
            );
        } else {
            // 1 001 × 0,54 = 540,54 → 540.
            assert_paid(
                &s[1],
                1_001,
                1_001,
                540,
                &format!("Big 0.54:1 on {n} cards, rounded down"),
            );
            assert_paid(&s[2], 999, 0, 0, &format!("Small loses on {n} cards"));
        }
    }
    let (round, _) = ctx.open_round("speed");
    let r = ctx.try_bets(
        &round,
        &[bet("player", 100), bet("big", 100), bet("small", 100)],
    );
    assert_eq!(r["accepted"], 1, "{r}");
    assert_eq!(
        r["results"][1]["code"], "not_offered",
        "Speed Baccarat has no Big: {r}"
    );
    assert_eq!(
        r["results"][2]["code"], "not_offered",
        "Speed Baccarat has no Small: {r}"
    );
}

/// SYNOT's Egalite Extra: a bet on each tie total 0–9, each paid by its own row ("Egalite 0"
/// 150:1 … "Egalite 9" 80:1) only on a tie of that total. Speed Baccarat does not offer it.
#[test]
fn egalite_extra_pays_each_tie_total_by_its_own_row() {
    let ctx = both_plans();
    // A tie of each total, by the drawing rules (Banker's third cards by its table).
    let ties: [Dealt; 10] = [
        coup(&["Kh", "Kc", "Kd"], &["Ks", "Qh", "Tc"]),
        coup(&["Ah", "Kc", "Kd"], &["As", "Qh", "Tc"]),
        coup(&["2h", "Kc", "Kd"], &["2s", "Qh", "Tc"]),
        coup(&["3h", "Kc", "Kd"], &["3s", "Qh", "Tc"]),
        coup(&["4h", "Kc", "Kd"], &["4s", "Qh"]),
        coup(&["5h", "Kc", "Kd"], &["5s", "Qh"]),
        coup(&["6h", "Kc"], &["6s", "Qh"]),
        coup(&["7h", "Kc"], &["7s", "Qh"]),
        coup(&["8h", "Kc"], &["8s", "Qh"]),
        coup(&["9h", "Kc"], &["9s", "Qh"]),
    ];
    let mut bets = vec![
        bet("player", 1_000),
        bet("banker", 1_000),
        bet("tie", 1_000),
    ];
    bets.extend((0..10).map(|t| egalite(t, 100)));
    for (total, cards) in ties.iter().enumerate() {
        let (_, r) = ctx.live_coup("synot", &bets, cards);
        assert_eq!(r["outcome"]["winner"], "tie", "{r}");
        assert_eq!(r["outcome"]["player_total"], total, "{r}");
        let s = &r["settlements"];
        assert_paid(&s[0], 1_000, 1_000, 0, "a tie returns the Player bet");
        assert_paid(&s[1], 1_000, 1_000, 0, "a tie returns the Banker bet");
        assert_paid(&s[2], 1_000, 1_000, 8_000, "Tie 8:1");
        for t in 0..10usize {
            let (ret, win) = if t == total {
                (100, 100 * EGALITE[t])
            } else {
                (0, 0)
            };
            assert_paid(
                &s[3 + t],
                100,
                ret,
                win,
                &format!(
                    "Egalite {t} on a tie of {total} (Egalite {total} pays {}:1)",
                    EGALITE[total]
                ),
            );
        }
    }
    let (round, _) = ctx.open_round("speed");
    let r = ctx.try_bets(&round, &[bet("tie", 100), egalite(3, 100)]);
    assert_eq!(r["results"][1]["code"], "not_offered", "{r}");
}

/// Speed Baccarat: "Player Bonus vyhrává, pokud pozice Hráč vyhraje kolo přirozenou kombinací
/// nebo rozdílem čtyř a více bodů" (Banker Bonus alike). The ratios are the studio's table the
/// plan assumes: natural win 1:1, natural tie returned, by 9 30:1, 8 10:1, 7 6:1, 6 4:1, 5 2:1,
/// 4 1:1. SYNOT does not offer the bonus bets.
#[test]
fn player_and_banker_bonus_pay_by_the_winning_margin_or_a_natural() {
    let ctx = both_plans();
    let bets = [
        bet("player", 100),
        bet("player_bonus", 1_000),
        bet("banker_bonus", 1_000),
    ];
    let by_margin = |m: u8| match m {
        9 => 30,
        8 => 10,
        7 => 6,
        6 => 4,
        5 => 2,
        4 => 1,
        _ => 0,
    };
    for margin in 0..=9u8 {
        // Player K K + m against Banker K Q + K (0 draws and stays 0): Player wins by m.
        let m = pc(margin, usize::from(margin));
        let (_, r) = ctx.live_coup(
            "speed",
            &bets,
            &coup(&["Kh", "Kc", &m], &["Ks", "Qh", "Td"]),
        );
        let s = &r["settlements"];
        let ratio = by_margin(margin);
        let (ret, win) = if ratio > 0 {
            (1_000, 1_000 * ratio)
        } else {
            (0, 0)
        };
        let rule = format!("Player Bonus, Player wins by {margin} without a natural ({ratio}:1)");
        assert_paid(&s[1], 1_000, ret, win, &rule);
        assert_paid(
            &s[2],
            1_000,
            0,
            0,
            "Banker Bonus loses when Banker does not win",
        );
        // The mirror: Banker K Q + m against Player K K + K.
        let (_, r) = ctx.live_coup(
            "speed",
            &bets,
            &coup(&["Kh", "Kc", "Kd"], &["Ks", "Qh", &m]),
        );
        let s = &r["settlements"];
        let rule = format!("Banker Bonus, Banker wins by {margin} without a natural ({ratio}:1)");
        assert_paid(&s[2], 1_000, ret, win, &rule);
        assert_paid(
            &s[1],
            1_000,
            0,
            0,
            "Player Bonus loses when Player does not win",
        );
    }
    // A natural win pays 1:1 even by one point; a tie of naturals returns both bonus stakes;
    // a tie without naturals loses them.
    let (_, r) = ctx.live_coup("speed", &bets, &coup(&["9h", "Kc"], &["8s", "Qh"]));
    assert_paid(
        &r["settlements"][1],
        1_000,
        1_000,
        1_000,
        "Player Bonus: natural win 1:1",
    );
    assert_paid(&r["settlements"][2], 1_000, 0, 0, "Banker Bonus loses");
    let (_, r) = ctx.live_coup("speed", &bets, &coup(&["8h", "Kc"], &["9s", "Qh"]));
    assert_paid(
        &r["settlements"][2],
        1_000,
        1_000,
        1_000,
        "Banker Bonus: natural win 1:1",
    );
    let (_, r) = ctx.live_coup("speed", &bets, &coup(&["8h", "Kc"], &["8s", "Qh"]));
    assert_paid(
        &r["settlements"][1],
        1_000,
        1_000,
        0,
        "Player Bonus: a natural tie returns it",
    );
    assert_paid(
        &r["settlements"][2],
        1_000,
        1_000,
        0,
        "Banker Bonus: a natural tie returns it",
    );
    let (_, r) = ctx.live_coup("speed", &bets, &coup(&["7h", "Kc"], &["7s", "Qh"]));
    assert_paid(
        &r["settlements"][1],
        1_000,
        0,
        0,
        "Player Bonus loses a tie without naturals",
    );
    assert_paid(
        &r["settlements"][2],
        1_000,
        0,
        0,
        "Banker Bonus loses a tie without naturals",
    );

    let (round, _) = ctx.open_round("synot");
    let r = ctx.try_bets(
        &round,
        &[
            bet("player", 100),
            bet("player_bonus", 100),
            bet("banker_bonus", 100),
        ],
    );
    assert_eq!(r["results"][1]["code"], "not_offered", "{r}");
    assert_eq!(r["results"][2]["code"], "not_offered", "{r}");
}

/// "Tabulka nejvyšších sázek": limits per bet type; a side bet needs a main bet of the same
/// player; Egalite Extra names its total.
#[test]
fn bets_beyond_the_plan_are_refused_with_the_rule() {
    each_plan(|ctx, table, plan| {
        let (round, _) = ctx.open_round(table);
        let r = ctx.try_bets(
            &round,
            &[
                json!({"player": "p9", "bet": "player_pair", "stake_minor": 100}),
                bet("player", 10_000_001),
                bet("tie", 2_500_001),
                bet("player", 99),
                bet("perfect_pair", 1_000_001),
                bet("punto", 100),
                bet("player", 10_000_000),
                bet("player", 100),
            ],
        );
        let codes: Vec<&str> = r["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["code"].as_str().unwrap_or("accepted"))
            .collect();
        assert_eq!(
            codes,
            [
                "requires_main_bet",
                "above_max_bet",
                "above_max_bet",
                "below_min_bet",
                "above_max_bet",
                "unknown_bet_type",
                "accepted",
                "above_max_bet",
            ],
            "{plan}: {r}"
        );
        assert_eq!(r["results"][1]["plan"], plan);
        assert_eq!(
            r["results"][1]["clause"],
            "Tabulka nejvyšších sázek a odvislých nejvyšších výher"
        );
        if plan == SYNOT {
            egalite_limits(ctx, &round);
        }
    });
}

/// SYNOT's Egalite Extra names its total, 0–9; each total is a bet of its own, held to the
/// row's limits.
fn egalite_limits(ctx: &Ctx, round: &str) {
    let r = ctx.try_bets(
        round,
        &[
            bet("tie", 100),
            bet("egalite_extra", 100),
            egalite(10, 100),
            json!({"player": "p1", "bet": "player", "total": 3, "stake_minor": 100}),
            egalite(2, 100_001),
            egalite(2, 100_000),
            egalite(3, 100_000),
        ],
    );
    let codes: Vec<&str> = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["code"].as_str().unwrap_or("accepted"))
        .collect();
    assert_eq!(
        codes,
        [
            "accepted",
            "missing_field",
            "not_offered",
            "unexpected_field",
            "above_max_bet",
            "accepted",
            "accepted",
        ],
        "Egalite Extra: each total a bet of its own within the row's limits: {r}"
    );
}

// ----- disconnects ----------------------------------------------------------------------------

/// SYNOT: "Pokud bude Sázející odpojen … do ukončení přijímání sázek, obdrží Sázející žetony ve
/// výši své původní sázky. Pokud bude Sázející odpojen … po ukončení přijímání sázek, zůstanou
/// všechny podané sázky platné a vypořádají se v nepřítomnosti Sázejícího."
#[test]
fn synot_returns_the_stakes_of_a_player_disconnected_before_betting_closes() {
    let ctx = Ctx::sqlite();
    ctx.open_table("synot", SYNOT, "live");
    let (round, _) = ctx.open_round("synot");
    ctx.bets(
        &round,
        &[
            json!({"player": "gone", "bet": "player", "stake_minor": 5_000}),
            json!({"player": "gone", "bet": "player_pair", "stake_minor": 700}),
            json!({"player": "stays", "bet": "player", "stake_minor": 1_000}),
        ],
    );
    let c = ctx.connection("synot", "gone", false);
    let refunds = c["refunds"].as_array().expect("the stakes come back");
    assert_eq!(refunds.len(), 2, "{c}");
    assert_eq!(
        (
            refunds[0]["bet"].as_str(),
            refunds[0]["refund_minor"].as_i64()
        ),
        (Some(format!("{round}.1").as_str()), Some(5_000))
    );
    assert_eq!(refunds[1]["refund_minor"], 700);
    let r = ctx.round(&round);
    let refunded: Vec<bool> = r["bets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["refunded"].as_bool().unwrap())
        .collect();
    assert_eq!(refunded, [true, true, false]);
    // A disconnected player cannot bet; back again, the player can.
    let late = ctx.try_bets(
        &round,
        &[json!({"player": "gone", "bet": "banker", "stake_minor": 100})],
    );
    assert_eq!(late["results"][0]["code"], "player_disconnected", "{late}");
    ctx.connection("synot", "gone", true);
    ctx.bets(
        &round,
        &[json!({"player": "gone", "bet": "banker", "stake_minor": 400})],
    );
    ctx.close_betting(&round);
    // After betting closed, a disconnect leaves the bets standing.
    let c = ctx.connection("synot", "stays", false);
    assert!(
        c.get("refunds").is_none(),
        "bets stand after betting closed: {c}"
    );
    let r = ctx.cards_ok(&round, &coup(&["9h", "Kc"], &["2d", "3s"]));
    // The refunded bets are not settled; the others are, the absent player's included.
    let s = r["settlements"].as_array().unwrap();
    let settled: Vec<&str> = s.iter().map(|x| x["bet"].as_str().unwrap()).collect();
    assert_eq!(settled, [format!("{round}.3"), format!("{round}.4")]);
    assert_paid(
        &s[0],
        1_000,
        1_000,
        1_000,
        "the disconnected player's Player bet wins 1:1",
    );
    assert_paid(
        &s[1],
        400,
        0,
        0,
        "the Banker bet placed after reconnecting loses",
    );
}

/// Speed Baccarat: "Pokud bude Sázející odpojen v průběhu herního kola …, všechny podané sázky
/// zůstávají platné a budou vyhodnoceny podle výsledku hry."
#[test]
fn speed_baccarat_keeps_the_bets_of_a_player_disconnected_before_betting_closes() {
    let ctx = Ctx::sqlite();
    ctx.open_table("speed", SPEED, "live");
    let (round, _) = ctx.open_round("speed");
    ctx.bets(
        &round,
        &[json!({"player": "gone", "bet": "player", "stake_minor": 5_000})],
    );
    let c = ctx.connection("speed", "gone", false);
    assert!(c.get("refunds").is_none(), "no stake comes back: {c}");
    assert_eq!(ctx.round(&round)["bets"][0]["refunded"], false);
    ctx.close_betting(&round);
    let r = ctx.cards_ok(&round, &coup(&["9h", "Kc"], &["2d", "3s"]));
    assert_paid(
        &r["settlements"][0],
        5_000,
        5_000,
        5_000,
        "the bet stands and wins 1:1",
    );
}

// ----- the shoe -------------------------------------------------------------------------------

/// "s osmi standardními balíčky karet": eight copies of each card. A ninth 2♥ before a
/// shuffle is refused (`card_not_in_shoe`); after the dealer shuffles it can come again.
#[test]
fn a_ninth_copy_of_a_card_is_refused_until_the_shoe_is_shuffled() {
    each_plan(|ctx, table, plan| {
        // Six 2♥ in one coup: Player 4 draws (→ 6), Banker 4 with Player's third 2 draws.
        let six = coup(&["2h", "2h", "2h"], &["2h", "2h", "2h"]);
        let (_, r) = ctx.live_coup(table, &[], &six);
        assert_eq!(r["outcome"]["winner"], "tie", "{r}");
        assert_eq!(ctx.table(table)["shoe"]["cards_seen"], 6);
        // Two more: the seventh and eighth.
        let (_, r) = ctx.live_coup(table, &[], &coup(&["2h", "7c"], &["2h", "6d"]));
        assert_eq!(r["outcome"]["cards_dealt"], 4, "{r}");
        let shoe = &ctx.table(table)["shoe"];
        assert_eq!(
            (shoe["cards_seen"].as_u64(), shoe["cards_left"].as_u64()),
            (Some(10), Some(406))
        );
        // The ninth is refused.
        let (round2, _) = ctx.open_round(table);
        ctx.close_betting(&round2);
        let (s, b) = ctx.cards(&round2, &[("player_1", "2h".into())]);
        assert_eq!((s, code_of(&b)), (422, "card_not_in_shoe"), "{plan}: {b}");
        assert_eq!(
            b["clause"],
            "Cíl hry a výplaty výher; Pravidla pro třetí kartu"
        );
        // Not shuffled mid-deal: once a card of the round is out, the shoe stays.
        let r = ctx.cards_ok(&round2, &[("player_1", "3h".into())]);
        assert_eq!(next_of(&r), "banker_1");
        let (s, b) = ctx.server.post(
            &ctx.op,
            &format!("/v1/tables/{table}/shoe"),
            json!({"action": "shuffle"}),
        );
        assert_eq!((s, code_of(&b)), (409, "out_of_order"), "{b}");
        let r = ctx.cards_ok(&round2, &coup(&["3h", "6c"], &["7d", "Kd"])[1..]);
        assert_eq!(r["phase"], "settled", "Player's natural 9: {r}");
        // Between rounds the dealer shuffles: every card is there again.
        let shuffled = ctx.shuffle(table);
        assert_eq!(shuffled["cards_seen_before"], 14, "{shuffled}");
        assert_eq!(ctx.table(table)["shoe"]["cards_seen"], 0);
        ctx.live_coup(table, &[], &coup(&["2h", "7c"], &["2h", "6d"]));
    });
}

// ----- RNG ------------------------------------------------------------------------------------

/// RNG mode: the seed's SHA-256 is committed when the round opens, before any bet; `deal`
/// deals the whole coup from it by the drawing rules and settles; the revealed seed hashes to
/// the commitment and deals exactly those cards (the engine's documented shuffle).
fn rng_round(ctx: &Ctx, table: &str, plan: &str) -> String {
    let (round, commitment) = rng_open(ctx, table, plan);
    rng_deal(ctx, &round, &commitment, plan);
    round
}

/// Opens an RNG round (its commitment before any bet) and places every bet of the plan: the
/// round and the commitment.
fn rng_open(ctx: &Ctx, table: &str, plan: &str) -> (String, String) {
    let (round, opened) = ctx.open_round(table);
    let commitment = opened["rng_commitment"]
        .as_str()
        .expect("an RNG round commits its seed when it opens")
        .to_string();
    let r = ctx.round(&round);
    assert_eq!(r["rng_commitment"], commitment.as_str());
    assert_eq!(r["phase"], "betting");
    ctx.bets(&round, &every_bet(plan));
    (round, commitment)
}

/// Deals and settles an RNG round opened by [`rng_open`].
fn rng_deal(ctx: &Ctx, round: &str, commitment: &str, plan: &str) {
    let round = round.to_string();
    let bets = every_bet(plan);
    // The deal waits for betting to close; the dealer system reports no cards.
    let (s, b) = ctx.event(&round, json!({"type": "deal"}));
    assert_eq!((s, code_of(&b)), (409, "betting_open"), "{b}");
    ctx.close_betting(&round);
    let (s, b) = ctx.cards(&round, &[("player_1", "2h".into())]);
    assert_eq!((s, code_of(&b)), (409, "wrong_mode"), "{b}");
    let (s, dealt) = ctx.event(&round, json!({"type": "deal"}));
    assert_eq!(s, 200, "{dealt}");
    assert_eq!(dealt["phase"], "settled", "{dealt}");
    assert_eq!(next_of(&dealt), "complete");
    let seed = revealed_seed(&dealt, commitment);
    let loaded = crate::source::plan(plan);
    let engine = pitboss::games::baccarat::BaccaratEngine::new(&loaded.plan).expect("engine");
    assert_eq!(
        dealt["cards"],
        serde_json::to_value(engine.deal_from_seed(seed)).unwrap(),
        "the cards are the deal of the revealed seed"
    );
    assert_settled_by_the_tables(&dealt, &dealt["cards"], &bets);
    // The commitment was logged with the round's opening, before the first bet.
    let kinds = ctx.recall_kinds(&round);
    assert_eq!(kinds[0], "round_opened");
    assert_eq!(kinds[1], "bet_accepted");
    let (s, b) = ctx.event(&round, json!({"type": "deal"}));
    assert_eq!(s, 409, "a second deal is refused: {b}");
}

#[test]
fn rng_rounds_commit_before_bets_deal_the_whole_coup_and_reveal_the_seed() {
    let ctx = Ctx::sqlite();
    ctx.open_table("synot-rng", SYNOT, "rng");
    ctx.open_table("speed-rng", SPEED, "rng");
    ctx.open_table("speed-live", SPEED, "live");
    for _ in 0..4 {
        rng_round(&ctx, "synot-rng", SYNOT);
        rng_round(&ctx, "speed-rng", SPEED);
    }
    // An RNG table keeps no shoe; a live table does not deal.
    let (s, b) = ctx.server.post(
        &ctx.op,
        "/v1/tables/synot-rng/shoe",
        json!({"action": "shuffle"}),
    );
    assert_eq!((s, code_of(&b)), (422, "no_shoe"), "{b}");
    let (round, _) = ctx.open_round("speed-live");
    ctx.close_betting(&round);
    let (s, b) = ctx.event(&round, json!({"type": "deal"}));
    assert_eq!((s, code_of(&b)), (409, "not_rng"), "{b}");
}

// ----- whole scenarios: the log verified offline, a restart replays it ------------------------

/// Live coups that exercise every bet of the plan: a natural, Banker winning on five cards,
/// a six-card tie, pairs in both hands.
fn scenario_coups() -> Vec<Dealt> {
    vec![
        coup(&["9h", "Kc"], &["2d", "3s"]),
        coup(&["Th", "Jc", "5d"], &["4d", "3s"]),
        coup(&["2h", "Kc", "Kd"], &["2s", "Qh", "Tc"]),
        coup(&["9h", "9c"], &["7d", "7d"]),
        coup(&["Kh", "Kc", "9d"], &["Ks", "Qh", "Td"]),
    ]
}

fn scenario(plan: &str, backend: Backend) {
    let storage = Storage::new(backend);
    let ctx = Ctx::start(&storage);
    ctx.open_table("live", plan, "live");
    ctx.open_table("rng", plan, "rng");
    let mut rounds = Vec::new();
    let bets = every_bet(plan);
    for cards in scenario_coups() {
        let (round, r) = ctx.live_coup("live", &bets, &cards);
        assert_settled_by_the_tables(&r, &cards_of(&cards), &bets);
        rounds.push(round);
    }
    // A card against the rules, refused, then repaired.
    let (round, _) = ctx.live_round("live", &bets, &coup(&["3h", "3c"], &["2d", "Kc"]));
    let (s, _) = ctx.cards(&round, &[("player_3", "9s".into())]);
    assert_eq!(s, 422);
    let r = ctx.cards_ok(&round, &[("banker_3", "5h".into())]);
    assert_settled_by_the_tables(&r, &ctx.round(&round)["cards"], &bets);
    rounds.push(round);
    // A void.
    let (round, _) = ctx.live_round("live", &bets, &coup(&["3h", "3c"], &["2d", "Kc"]));
    ctx.void(&round, "the coup cannot be reconstructed");
    rounds.push(round);
    // A disconnect before betting closes: SYNOT returns the stake, Speed Baccarat keeps it.
    let (round, _) = ctx.open_round("live");
    ctx.bets(
        &round,
        &[json!({"player": "p7", "bet": "player", "stake_minor": 2_500})],
    );
    let c = ctx.connection("live", "p7", false);
    assert_eq!(c.get("refunds").is_some(), plan == SYNOT, "{plan}: {c}");
    ctx.connection("live", "p7", true);
    ctx.close_betting(&round);
    let r = ctx.cards_ok(&round, &coup(&["9h", "Kc"], &["2d", "3s"]));
    assert_eq!(
        r["settlements"].as_array().unwrap().len(),
        usize::from(plan != SYNOT),
        "{plan}: {r}"
    );
    rounds.push(round);
    ctx.shuffle("live");
    for _ in 0..3 {
        rounds.push(rng_round(&ctx, "rng", plan));
    }
    // At the restart, a live coup is half dealt and an RNG round holds its bets.
    let half = coup(&["3h", "3c"], &["2d", "Kc"]);
    let (half_round, r) = ctx.live_round("live", &bets, &half);
    assert_eq!(next_of(&r), "banker_3", "{r}");
    rounds.push(half_round.clone());
    let (pending, commitment) = rng_open(&ctx, "rng", plan);
    rounds.push(pending.clone());
    crate::replay::exported_log_verifies_and_replays(&ctx.server, &ctx.auditor);
    let before: Vec<Value> = rounds.iter().map(|r| ctx.round(r)).collect();
    let tables = [ctx.table("live"), ctx.table("rng")];
    drop(ctx);

    // A restart rebuilds every round and the shoe from the log.
    let ctx = Ctx::start(&storage);
    for (round, was) in rounds.iter().zip(&before) {
        assert_eq!(
            &ctx.round(round),
            was,
            "round {round} reads the same after a restart"
        );
    }
    assert_eq!(
        [ctx.table("live"), ctx.table("rng")],
        tables,
        "the tables read the same"
    );
    // The open rounds go on where they stopped: the right card, the committed seed.
    let r = ctx.cards_ok(&half_round, &[("banker_3", "5h".into())]);
    let mut whole = half.clone();
    whole.push(("banker_3", "5h".into()));
    assert_settled_by_the_tables(&r, &cards_of(&whole), &bets);
    rng_deal(&ctx, &pending, &commitment, plan);
    // The tables play on.
    let (_, r) = ctx.live_coup("live", &bets, &scenario_coups()[0]);
    assert_settled_by_the_tables(&r, &cards_of(&scenario_coups()[0]), &bets);
    rng_round(&ctx, "rng", plan);
    crate::replay::exported_log_verifies_and_replays(&ctx.server, &ctx.auditor);
}

#[test]
fn synot_baccarat_end_to_end_on_sqlite() {
    scenario(SYNOT, Backend::Sqlite);
}

#[test]
fn synot_baccarat_end_to_end_on_postgres() {
    scenario(SYNOT, Backend::Postgres);
}

#[test]
fn speed_baccarat_end_to_end_on_sqlite() {
    scenario(SPEED, Backend::Sqlite);
}

#[test]
fn speed_baccarat_end_to_end_on_postgres() {
    scenario(SPEED, Backend::Postgres);
}
