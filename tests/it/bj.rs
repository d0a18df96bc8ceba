//! The shared harness of the blackjack HTTP tests (`api_blackjack_*.rs`): a server, an
//! operator, tables, rounds, bets, cards, decisions, and readers of the replies.
//!
//! Blackjack cards are reported in dealing order without positions: the rules place each
//! (a card to each box in box order, the dealer's up card, a second card to each box, the
//! hole card where the dealer has one; then the players' draws box by box, or on the common
//! hand once every player has decided; then the dealer's draws). Replies say where each card
//! went (`inputs[].to`) and what the round awaits (`expected`).

use serde_json::{json, Value};

use crate::server::{Backend, Storage, TestServer, ADMIN_KEY};

pub struct Ctx {
    pub server: TestServer,
    pub op: String,
    pub auditor: String,
}

impl Ctx {
    pub fn start(storage: &Storage) -> Ctx {
        Ctx::with_server(TestServer::on(storage))
    }

    pub fn with_server(server: TestServer) -> Ctx {
        let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
        let auditor = server.create_key(ADMIN_KEY, "auditor", None);
        Ctx {
            server,
            op,
            auditor,
        }
    }

    pub fn sqlite() -> (Storage, Ctx) {
        let storage = Storage::new(Backend::Sqlite);
        let ctx = Ctx::start(&storage);
        (storage, ctx)
    }

    pub fn open_table(&self, table: &str, plan: &str, mode: &str) {
        let (s, b) = self.server.post(
            &self.op,
            "/v1/tables",
            json!({"table": table, "plan": plan, "mode": mode}),
        );
        assert_eq!(s, 201, "{b}");
    }

    pub fn open_round(&self, table: &str) -> String {
        let (s, b) = self
            .server
            .post(&self.op, &format!("/v1/tables/{table}/rounds"), json!({}));
        assert_eq!(s, 201, "{b}");
        b["round"].as_str().expect("round id").to_string()
    }

    pub fn bets(&self, round: &str, bets: Value) -> Value {
        let (s, b) = self.server.post(
            &self.op,
            &format!("/v1/rounds/{round}/bets"),
            json!({"bets": bets}),
        );
        assert_eq!(s, 200, "{b}");
        b
    }

    /// Bets that must all be accepted.
    pub fn accepted_bets(&self, round: &str, bets: Value) -> Value {
        let n = bets.as_array().map_or(0, Vec::len);
        let b = self.bets(round, bets);
        assert_eq!(b["accepted"], n, "{b}");
        b
    }

    pub fn event(&self, round: &str, event: Value) -> (u16, Value) {
        self.server
            .post(&self.op, &format!("/v1/rounds/{round}/events"), event)
    }

    pub fn close_betting(&self, round: &str) {
        let (s, b) = self.event(round, json!({"type": "close_betting"}));
        assert_eq!(s, 200, "{b}");
    }

    /// Opens a round, places `bets` (all accepted) and closes betting.
    pub fn round_with(&self, table: &str, bets: Value) -> String {
        let round = self.open_round(table);
        self.accepted_bets(&round, bets);
        self.close_betting(&round);
        round
    }

    /// Live cards in dealing order (`"AS"`, `"TD"`, …).
    pub fn cards(&self, round: &str, cards: &[&str]) -> (u16, Value) {
        let cards: Vec<Value> = cards.iter().map(|c| json!({ "card": c })).collect();
        self.event(round, json!({"type": "cards", "cards": cards}))
    }

    pub fn cards_ok(&self, round: &str, cards: &[&str]) -> Value {
        let (s, b) = self.cards(round, cards);
        assert_eq!(s, 200, "{b}");
        b
    }

    /// RNG: pitboss deals from the committed seed up to what the players owe or the end.
    pub fn deal(&self, round: &str) -> (u16, Value) {
        self.event(round, json!({"type": "deal"}))
    }

    pub fn decide(&self, round: &str, decisions: Value) -> (u16, Value) {
        self.server.post(
            &self.op,
            &format!("/v1/rounds/{round}/decisions"),
            json!({ "decisions": decisions }),
        )
    }

    /// One decision of one player, which must be taken.
    pub fn decide_ok(&self, round: &str, player: &str, decision: Value) -> Value {
        let (s, b) = self.decide(round, json!([{"player": player, "decision": decision}]));
        assert_eq!(s, 200, "{b}");
        let d = &b["decisions"][0];
        assert_eq!(d["status"], "taken", "{player} {decision}: {b}");
        b
    }

    /// One decision of one player, which must be refused with `code`.
    pub fn decide_refused(&self, round: &str, player: &str, decision: Value, code: &str) -> Value {
        let (s, b) = self.decide(round, json!([{"player": player, "decision": decision}]));
        assert_eq!(s, 200, "{b}");
        let d = &b["decisions"][0];
        assert_eq!(d["status"], "refused", "{player} {decision}: {b}");
        assert_eq!(d["code"], code, "{b}");
        b
    }

    pub fn close_decisions(&self, round: &str) -> (u16, Value) {
        self.event(round, json!({"type": "close_decisions"}))
    }

    pub fn connection(&self, table: &str, player: &str, connected: bool) -> Value {
        let (s, b) = self.server.post(
            &self.op,
            &format!("/v1/tables/{table}/players"),
            json!({"player": player, "connected": connected}),
        );
        assert_eq!(s, 200, "{b}");
        b
    }

    pub fn round(&self, round: &str) -> Value {
        let (s, _, b) = self
            .server
            .get_as(Some(&self.op), &format!("/v1/rounds/{round}"));
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

    /// The audit export verifies offline and its replay rebuilds the same state.
    pub fn verify_export(&self) {
        crate::replay::exported_log_verifies_and_replays(&self.server, &self.auditor);
    }
}

/// A bet on a box (seated games).
pub fn bet(player: &str, bet: &str, seat: u8, stake_minor: i64) -> Value {
    json!({"player": player, "bet": bet, "seat": seat, "stake_minor": stake_minor})
}

/// A bet on the common hand.
pub fn common(player: &str, bet: &str, stake_minor: i64) -> Value {
    json!({"player": player, "bet": bet, "stake_minor": stake_minor})
}

/// What the round awaits, as `card:hand:<position>:<hand>`, `card:dealer`,
/// `card:common_hand`, `insurance`, `decision:<position>:<hand>` or `complete`.
pub fn next_of(reply: &Value) -> String {
    let n = &reply["expected"]["next"];
    match n["next"].as_str() {
        Some("card") => match n["to"]["to"].as_str() {
            Some("hand") => format!("card:hand:{}:{}", n["to"]["position"], n["to"]["hand"]),
            Some(other) => format!("card:{other}"),
            None => format!("card:? ({reply})"),
        },
        Some("decision") => format!("decision:{}:{}", n["position"], n["hand"]),
        Some(other) => other.to_string(),
        None => format!("none ({reply})"),
    }
}

/// The settlement whose `bet` is `bet` (the first bet it covers).
pub fn settlement<'a>(reply: &'a Value, bet: &str) -> &'a Value {
    reply["settlements"]
        .as_array()
        .unwrap_or_else(|| panic!("no settlements: {reply}"))
        .iter()
        .find(|s| s["bet"] == bet)
        .unwrap_or_else(|| panic!("no settlement of {bet}: {reply}"))
}

/// What the player's wallet is credited in total by a settled round.
pub fn credited(reply: &Value, player: &str) -> i64 {
    reply["settlements"]
        .as_array()
        .unwrap_or_else(|| panic!("no settlements: {reply}"))
        .iter()
        .filter(|s| s["player"] == player)
        .map(|s| s["total_minor"].as_i64().expect("total"))
        .sum()
}

/// The stakes that the inputs of a reply added for `player` (to debit from his wallet).
pub fn added_stakes(reply: &Value, player: &str) -> i64 {
    reply["inputs"]
        .as_array()
        .map(|v| {
            v.iter()
                .flat_map(|i| i["bets"].as_array().cloned().unwrap_or_default())
                .filter(|b| b["player"] == player)
                .map(|b| b["placement"]["stake_minor"].as_i64().expect("stake"))
                .sum()
        })
        .unwrap_or(0)
}

/// A reply's input that dealt the dealer's hole card face down (its card withheld from the
/// operator until the dealer plays).
pub fn is_hidden_hole_card(input: &Value) -> bool {
    input["hole_card_hidden"] == true
}

/// The cards of a finished round in dealing order, as its `GET` shows them once the dealer has
/// played (the hole card a reply withheld included).
pub fn dealt_of_finished(ctx: &Ctx, round: &str) -> Vec<String> {
    let r = ctx.round(round);
    r["blackjack"]["play"]["dealt"]
        .as_array()
        .unwrap_or_else(|| panic!("{round}: {r}"))
        .iter()
        .map(|c| c.as_str().expect("card").to_string())
        .collect()
}
