//! What operators do: tables, rounds, bets, dealer events, voids; and the reads of them.
//!
//! Every mutating request carries an `Idempotency-Key`; a retry with the same key and body
//! returns the first answer and changes nothing.

use actix_web::{get, post, web, HttpRequest, HttpResponse};
use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use utoipa::ToSchema;

use super::auth::Caller;
use super::dto::{
    BetsReply, BetsRequest, ConnectionReply, IdempotencyKey, LoggedEntry, ProblemDocument, Recall,
    RoundOpenedReply, RoundOutcome, SettledRound, SettlementDocument, ShoeReply, TableActionReply,
    TableClosedReply, TableOpenedReply, VoidedRound,
};
use super::problem::Problem;
use super::startup::AppState;
use crate::plan::canonical::hex;
use crate::plan::model::Mode;
use crate::round::{RoundState, TableState};
use crate::service::{Command, Idempotency, Reply, Service};

/// Longest accepted Idempotency-Key.
pub const MAX_IDEMPOTENCY_KEY: usize = 128;

pub(super) fn idempotency(req: &HttpRequest, body: &[u8]) -> Result<Idempotency, Problem> {
    let key = req
        .headers()
        .get("idempotency-key")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .ok_or_else(|| {
            Problem::bad_request(
                "idempotency_key_required",
                "every change carries an Idempotency-Key header",
            )
        })?;
    if key.len() > MAX_IDEMPOTENCY_KEY || !key.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(Problem::bad_request(
            "bad_idempotency_key",
            format!("an Idempotency-Key is 1–{MAX_IDEMPOTENCY_KEY} printable ASCII characters"),
        ));
    }
    let mut h = Sha256::new();
    h.update(req.method().as_str());
    h.update(b" ");
    h.update(req.path());
    h.update(b"\n");
    h.update(body);
    Ok(Idempotency {
        key: key.to_string(),
        request_hash: hex(&h.finalize()),
    })
}

pub(super) fn parse<T: for<'de> Deserialize<'de>>(body: &[u8]) -> Result<T, Problem> {
    let malformed = |e: serde_json::Error| Problem::bad_request("malformed_json", e.to_string());
    let value: Value = serde_json::from_slice(body).map_err(malformed)?;
    whole_numbers(&value, &mut String::new())?;
    T::deserialize(value).map_err(malformed)
}

/// The largest magnitude the audit log writes as a number (audit/FORMAT.md §1.1).
const MAX_LOGGED_NUMBER: u64 = (1 << 53) - 1;

/// Every number of a command is a whole number the audit log can hold (±(2^53 − 1)): the
/// request is logged with its refusal or acceptance, and the log has no other numbers. A
/// fraction or a larger number is refused here, before anything is decided or written.
fn whole_numbers(v: &Value, at: &mut String) -> Result<(), Problem> {
    match v {
        Value::Number(n) => {
            let whole = n.as_u64().or_else(|| n.as_i64().map(i64::unsigned_abs));
            if whole.is_some_and(|m| m <= MAX_LOGGED_NUMBER) {
                Ok(())
            } else {
                Err(Problem::bad_request(
                    "bad_number",
                    format!(
                        "{n} at {} is not a whole number within ±{MAX_LOGGED_NUMBER}: amounts are \
                         integer minor units, counts and numbers whole",
                        if at.is_empty() { "/" } else { at.as_str() }
                    ),
                ))
            }
        }
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                let len = at.len();
                at.push_str(&format!("/{i}"));
                whole_numbers(x, at)?;
                at.truncate(len);
            }
            Ok(())
        }
        Value::Object(m) => {
            for (k, x) in m {
                let len = at.len();
                at.push('/');
                at.push_str(k);
                whole_numbers(x, at)?;
                at.truncate(len);
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

pub(super) fn respond(reply: Reply) -> HttpResponse {
    let status = actix_web::http::StatusCode::from_u16(reply.status)
        .unwrap_or(actix_web::http::StatusCode::INTERNAL_SERVER_ERROR);
    let mut b = HttpResponse::build(status);
    let problem = reply.is_problem();
    if problem {
        b.content_type("application/problem+json");
    }
    if let Some(s) = reply.retry_after_s {
        b.insert_header((actix_web::http::header::RETRY_AFTER, s.to_string()));
    }
    match reply.text {
        // The text the writer serialised for the idempotency record: the same bytes as
        // `body`'s, written once.
        Some(text) => {
            if !problem {
                b.content_type(actix_web::http::header::ContentType::json());
            }
            b.body(actix_web::web::Bytes::copy_from_slice(text.as_bytes()))
        }
        None => b.json(reply.body),
    }
}

pub(super) async fn run(
    state: &AppState,
    caller: &Caller,
    req: &HttpRequest,
    body: &[u8],
    command: Command,
) -> Result<HttpResponse, Problem> {
    let operator = caller.operator()?;
    let idem = idempotency(req, body)?;
    Ok(respond(
        state
            .writer_of(operator)
            .await?
            .submit(operator, Some(idem), command)
            .await,
    ))
}

/// An exception command (a void, a table closed, a pause): logged naming the key and the
/// person the operator named.
pub(super) async fn run_as(
    state: &AppState,
    caller: &Caller,
    req: &HttpRequest,
    body: &[u8],
    person: Option<String>,
    command: Command,
) -> Result<HttpResponse, Problem> {
    let operator = caller.operator()?;
    let idem = idempotency(req, body)?;
    if person
        .as_ref()
        .is_some_and(|p| p.is_empty() || p.len() > 128 || p.chars().any(char::is_control))
    {
        return Err(Problem::bad_request(
            "malformed_json",
            "person: 1–128 characters, no control characters",
        ));
    }
    let actor = crate::round::regulator::Actor {
        key: caller.key_id.clone(),
        role: caller.role.as_str().to_string(),
        person,
        signer: None,
    };
    Ok(respond(
        state
            .writer_of(operator)
            .await?
            .submit_as(operator, Some(actor), Some(idem), command)
            .await,
    ))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"table": "t1", "plan": "alg-roulette@1", "mode": "live"}))]
pub struct OpenTable {
    /// The operator's name for the table (1–64 of `a-z A-Z 0-9 _ -`), unique among its own
    /// tables; the table's id is `<operator>:<name>`.
    pub table: String,
    /// `id@version` (or `id` for the latest): the table keeps this version for its whole life.
    pub plan: String,
    /// One of the plan's modes.
    pub mode: Mode,
    /// The table's registration number (a transmitted live game's table carries one; Act
    /// 186/2016 §83), 1–64 characters; required under `serve --require-registration`.
    #[serde(default)]
    pub registration: Option<String>,
    /// The id of the device that deals at the table (wheel, shoe, shuffler), 1–64
    /// characters; required under `serve --require-registration`.
    #[serde(default)]
    pub device: Option<String>,
}

/// Opens a table bound to a plan version.
///
/// Roles: **operator** (the table belongs to the key's operator). Roulette, baccarat, Top Card
/// and Casino Hold'em tables play rounds; Oko bere and poker tables (live only) take actions
/// (`POST /v1/tables/{table}/actions`); blackjack plans are `family_not_supported` so far.
#[utoipa::path(
    tag = "tables",
    security(("api_key" = [])),
    params(IdempotencyKey),
    request_body = OpenTable,
    responses(
        (status = 201, description = "The table is open.", body = TableOpenedReply),
        (status = 400, description = "`malformed_json`, `bad_number` (a fraction, or a number beyond ±(2^53 − 1)), `idempotency_key_required` or `bad_idempotency_key`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: not an operator key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`plan_not_found`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 409, description = "`table_exists`; `plan_not_approved` (under `serve --require-approval`, no approval of the plan version is valid now).", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 422, description = "Refused: `bad_id`, `bad_plan_ref`, `mode_not_allowed` (with `plan` and `clause`), `mode_not_supported` (RNG at a player-versus-player table), `family_not_supported`, `bad_registration`, `registration_required` (under `serve --require-registration`); or `idempotency_key_reused`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: nothing was recorded; `outcome_unknown`: the store did not confirm it in time, so it may have been recorded. Retry either with the same Idempotency-Key.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[post("/v1/tables")]
pub async fn open_table(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    body: web::Bytes,
) -> Result<HttpResponse, Problem> {
    let b: OpenTable = parse(&body)?;
    run(
        &state,
        &caller,
        &req,
        &body,
        Command::OpenTable {
            table: b.table,
            plan: b.plan,
            mode: b.mode,
            registration: (b.registration.is_some() || b.device.is_some()).then(|| {
                Box::new(crate::round::regulator::Registration {
                    registration: b.registration,
                    device: b.device,
                })
            }),
        },
    )
    .await
}

/// Why a table is closed or a round voided (logged).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"reason": "wheel fault"}))]
pub struct Reason {
    pub reason: String,
    /// The person who decided (the operator's own id for its staff member), logged with the
    /// key as the entry's actor.
    #[serde(default)]
    pub person: Option<String>,
}

/// Closes a table.
///
/// A round in progress is voided first, every stake refunded (the plans' table-closure
/// policy). Roles: **operator**, own tables only.
#[utoipa::path(
    tag = "tables",
    security(("api_key" = [])),
    params(("table" = String, Path, description = "The table id as answered, `<operator>:<name>`; an operator may name its own table by its name alone."), IdempotencyKey),
    request_body = Reason,
    responses(
        (status = 200, description = "The table is closed.", body = TableClosedReply),
        (status = 400, description = "`malformed_json`, `bad_number` (a fraction, or a number beyond ±(2^53 − 1)), `idempotency_key_required` or `bad_idempotency_key`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: not an operator key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`table_not_found` (also for another operator's table).", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 409, description = "`table_closed`: already closed.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 422, description = "`idempotency_key_reused`, or another refusal.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: nothing was recorded; `outcome_unknown`: the store did not confirm it in time, so it may have been recorded. Retry either with the same Idempotency-Key.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[post("/v1/tables/{table}/close")]
pub async fn close_table(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, Problem> {
    let b: Reason = parse(&body)?;
    run_as(
        &state,
        &caller,
        &req,
        &body,
        b.person,
        Command::CloseTable {
            table: path.into_inner(),
            reason: b.reason,
        },
    )
    .await
}

/// Opens the table's next round.
///
/// The body is empty or `{}`. In RNG mode the reply carries the commitment (SHA-256) of the
/// seed the result will be drawn from, before any bet is taken. Roles: **operator**, own
/// tables only.
#[utoipa::path(
    tag = "rounds",
    security(("api_key" = [])),
    params(("table" = String, Path, description = "The table id as answered, `<operator>:<name>`; an operator may name its own table by its name alone."), IdempotencyKey),
    request_body(content = Option<super::schemas::EmptyObject>, description = "None, or an empty object.", example = json!({})),
    responses(
        (status = 201, description = "The round is open for bets.", body = RoundOpenedReply),
        (status = 400, description = "`malformed_json`, `bad_number` (a fraction, or a number beyond ±(2^53 − 1)), `idempotency_key_required` or `bad_idempotency_key`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: not an operator key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`table_not_found`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 409, description = "`table_closed` or `round_in_progress` (settle or void it first); `plan_not_approved` (under `serve --require-approval`, the approval of the table's plan version was withdrawn or has ended).", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 422, description = "`idempotency_key_reused`, or another refusal.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable` or `rng_unavailable`: nothing was recorded; `outcome_unknown`: the store did not confirm it in time, so it may have been recorded. Retry either with the same Idempotency-Key.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[post("/v1/tables/{table}/rounds")]
pub async fn open_round(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, Problem> {
    if !body.is_empty() {
        let _: serde_json::Map<String, Value> = parse(&body)?;
    }
    run(
        &state,
        &caller,
        &req,
        &body,
        Command::OpenRound {
            table: path.into_inner(),
        },
    )
    .await
}

/// A player's connection changed (logged; the plan's disconnect policy applies).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"player": "p1", "connected": false}))]
pub struct PlayerConnection {
    /// The player's id (1–64 of `a-z A-Z 0-9 _ -`).
    pub player: String,
    pub connected: bool,
}

/// Reports a player's disconnection or reconnection.
///
/// Roles: **operator**, own tables only.
#[utoipa::path(
    tag = "tables",
    security(("api_key" = [])),
    params(("table" = String, Path, description = "The table id as answered, `<operator>:<name>`; an operator may name its own table by its name alone."), IdempotencyKey),
    request_body = PlayerConnection,
    responses(
        (status = 200, description = "Logged.", body = ConnectionReply),
        (status = 400, description = "`malformed_json`, `bad_number` (a fraction, or a number beyond ±(2^53 − 1)), `idempotency_key_required` or `bad_idempotency_key`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: not an operator key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`table_not_found`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 422, description = "`bad_id` or `idempotency_key_reused`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: nothing was recorded; `outcome_unknown`: the store did not confirm it in time, so it may have been recorded. Retry either with the same Idempotency-Key.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[post("/v1/tables/{table}/players")]
pub async fn player_connection(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, Problem> {
    let b: PlayerConnection = parse(&body)?;
    run(
        &state,
        &caller,
        &req,
        &body,
        Command::Connection {
            table: path.into_inner(),
            player: b.player,
            connected: b.connected,
        },
    )
    .await
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bets {
    /// Each bet: `{"player": "p1", "bet": "split", "numbers": [1, 2], "stake_minor": 500}`;
    /// documented as [`BetsRequest`].
    pub bets: Vec<Value>,
}

/// Places bets: each one accepted or refused on its own.
///
/// 1–500 bets per request. A refused bet (`betting_closed`, `player_disconnected`, a limit,
/// a layout…; `player_excluded` or `limit_exceeded` from the player register, 002 § 6(2),
/// (3)) is logged with the rule and clause that refused it and reported in `results`:
/// the request as a whole still answers 200. A bet is acknowledged as accepted only once its
/// log entry is durable. Roles: **operator**, own
/// tables only.
#[utoipa::path(
    tag = "rounds",
    security(("api_key" = [])),
    params(("round" = String, Path, description = "The round id as answered, `<table id>.<number>`; an operator may name its own round by its table's name alone (`t1.1`).", example = "t1.1"), IdempotencyKey),
    request_body(
        content = BetsRequest,
        description = "One object per bet; which fields it takes depends on `bet`. Amounts are minor units.",
        examples(
            ("inside" = (summary = "Inside bets: `numbers`", value = json!({"bets": [
                {"player": "p1", "bet": "straight", "numbers": [17], "stake_minor": 1000},
                {"player": "p1", "bet": "split", "numbers": [0, 3], "stake_minor": 1000},
                {"player": "p1", "bet": "corner", "numbers": [17, 18, 20, 21], "stake_minor": 1000}
            ]}))),
            ("outside" = (summary = "Outside bets: `field`", value = json!({"bets": [
                {"player": "p2", "bet": "column", "field": "column_2", "stake_minor": 2000},
                {"player": "p2", "bet": "red_black", "field": "red", "stake_minor": 3000}
            ]}))),
            ("announced" = (summary = "Announced (racetrack) bet: stake per unit", value = json!({"bets": [
                {"player": "p3", "bet": "voisins", "stake_minor": 500}
            ]}))),
            ("neighbours" = (summary = "Neighbours: `number` and `neighbours` each side", value = json!({"bets": [
                {"player": "p3", "bet": "neighbours", "number": 0, "neighbours": 2, "stake_minor": 500}
            ]}))),
            ("complete" = (summary = "Complete bet on `number`: stake per chip", value = json!({"bets": [
                {"player": "p4", "bet": "complete", "number": 17, "stake_minor": 100}
            ]}))),
            ("blackjack" = (summary = "Blackjack: main, side bet and Bet Behind on box 3 (no `seat` on a common hand)", value = json!({"bets": [
                {"player": "p1", "bet": "main", "seat": 3, "stake_minor": 1000},
                {"player": "p1", "bet": "perfect_pairs", "seat": 3, "stake_minor": 100},
                {"player": "p2", "bet": "bet_behind", "seat": 3, "stake_minor": 500}
            ]}))),
        ),
    ),
    responses(
        (status = 200, description = "Each bet's decision, in request order.", body = BetsReply),
        (status = 400, description = "`malformed_json` (also a bet without `player`), `bad_number` (a fraction, or a number beyond ±(2^53 − 1)), `idempotency_key_required` or `bad_idempotency_key`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: not an operator key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`round_not_found`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 409, description = "`round_paused`: a reported error paused the round; resume or void it.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 422, description = "The request as a whole is refused: `bad_bet_count` (1–500 bets), `family_not_supported`, or `idempotency_key_reused`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: nothing was recorded; `outcome_unknown`: the store did not confirm it in time, so it may have been recorded. Retry either with the same Idempotency-Key.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[post("/v1/rounds/{round}/bets")]
pub async fn place_bets(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, Problem> {
    let b: Bets = parse(&body)?;
    let mut bets = Vec::with_capacity(b.bets.len());
    for (i, mut bet) in b.bets.into_iter().enumerate() {
        let player = match bet.as_object_mut().and_then(|m| m.remove("player")) {
            Some(Value::String(p)) => p,
            _ => {
                return Err(Problem::bad_request(
                    "malformed_json",
                    format!("bets[{i}].player: a string naming the player is required"),
                ))
            }
        };
        bets.push((player, bet));
    }
    run(
        &state,
        &caller,
        &req,
        &body,
        Command::Bets {
            round: path.into_inner(),
            bets,
        },
    )
    .await
}

/// A dealer event. `type` is `close_betting`; for roulette `spin` (live: `number`,
/// `ball_against_rotation`, `ball_revolutions`) or `draw` (RNG: pitboss draws from the
/// committed seed); for card games `cards` (live), `draw`/`deal` (RNG), `misdeal` and
/// `close_decisions`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum DealerEvent {
    /// No more bets.
    CloseBetting,
    /// Live mode: the number the dealer system reports, and what the valid-spin rule needs.
    Spin {
        #[schema(maximum = 36)]
        number: u8,
        ball_against_rotation: bool,
        ball_revolutions: u8,
    },
    /// RNG mode: pitboss draws the result from the round's committed seed (roulette), or
    /// deals from it up to the players' decisions or the end of the round (card games).
    Draw,
    /// RNG card games: the same as `draw`.
    Deal,
    /// Live card games: the cards the dealer system saw dealt, in dealing order, each with
    /// its position. All are accepted or none is.
    Cards {
        cards: Vec<crate::round::game::ReportedCard>,
    },
    /// Live card games: the dealer declares the deal void (a card damaged, dealt incorrectly
    /// or not clearly visible); where the plan re-deals, the bets stand for the new deal. A
    /// dealer system reports a card only once it lies correctly and clearly visible (Top
    /// Card's valid-round rule): a deal is settled as soon as its last card is reported, so a
    /// damaged last card is declared as a misdeal instead of being reported.
    Misdeal { reason: String },
    /// Ends the players' decision time (after the deadline, or once every player decided):
    /// the plan's automatic decision for every player who has not decided.
    CloseDecisions,
}

/// Posts a dealer event: close betting, a live spin, or an RNG draw.
///
/// A spin the plan's valid-spin rule rejects leaves the round open for another spin (`spin`
/// in the reply); a valid one settles the round. A refused event on the operator's own round
/// is itself logged. Roles: **operator**, own tables only.
#[utoipa::path(
    tag = "rounds",
    security(("api_key" = [])),
    params(("round" = String, Path, description = "The round id as answered, `<table id>.<number>`; an operator may name its own round by its table's name alone (`t1.1`).", example = "t1.1"), IdempotencyKey),
    request_body(
        content = DealerEvent,
        examples(
            ("close_betting" = (summary = "Close betting", value = json!({"type": "close_betting"}))),
            ("spin" = (summary = "Live spin", value = json!({"type": "spin", "number": 17, "ball_against_rotation": true, "ball_revolutions": 5}))),
            ("draw" = (summary = "RNG draw or deal", value = json!({"type": "draw"}))),
            ("cards" = (summary = "Live cards (baccarat)", value = json!({"type": "cards", "cards": [{"to": "player_1", "card": "9H"}, {"to": "banker_1", "card": "KS"}, {"to": "player_2", "card": "TC"}, {"to": "banker_2", "card": "7D"}]}))),
            ("blackjack_cards" = (summary = "Live blackjack cards: in dealing order, placed by the rules", value = json!({"type": "cards", "cards": [{"card": "5H"}, {"card": "9S"}, {"card": "6C"}, {"card": "8D"}]}))),
            ("misdeal" = (summary = "Misdeal (Top Card re-deal)", value = json!({"type": "misdeal", "reason": "the Away card was damaged"}))),
            ("close_decisions" = (summary = "End the decision time", value = json!({"type": "close_decisions"}))),
        ),
    ),
    responses(
        (status = 200, description = "`close_betting`: `round` and `phase` (`betting_closed`) only. `spin` or `draw` (roulette): an invalid spin (`spin`, the round stays `betting_closed`), or the settlement (`result`, `settlements`, …). Card games: the `cards` dealt, what comes `next`, the decision time opened (`decision_deadline`, `decisions_pending`), a `misdeal`, or the `outcome` and the settlement.", body = RoundOutcome),
        (status = 400, description = "`malformed_json`, `bad_number` (a fraction, or a number beyond ±(2^53 − 1)), `idempotency_key_required` or `bad_idempotency_key`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: not an operator key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`round_not_found`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 409, description = "`out_of_order`, `betting_open`, `betting_closed`, `wrong_mode`, `not_rng`, `decisions_open`, or `round_paused` (a reported error paused the round).", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 422, description = "An illegal value (`invalid_number`…), a card the rules or the shoe refuse (`wrong_position`, `deal_complete`, `card_not_in_shoe`, `duplicate_card`, …; nothing of the request is recorded and the round waits for the right card or a void), `misdeal_not_in_plan`, a settlement the plan forbids (`max_win_exceeded`), or `idempotency_key_reused`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: nothing was recorded; `outcome_unknown`: the store did not confirm it in time, so it may have been recorded. Retry either with the same Idempotency-Key.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[post("/v1/rounds/{round}/events")]
pub async fn post_event(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, Problem> {
    let e: DealerEvent = parse(&body)?;
    let round = path.into_inner();
    let command = match e {
        DealerEvent::CloseBetting => Command::CloseBetting { round },
        DealerEvent::Spin {
            number,
            ball_against_rotation,
            ball_revolutions,
        } => Command::Spin {
            round,
            number,
            ball_against_rotation,
            ball_revolutions,
        },
        DealerEvent::Draw | DealerEvent::Deal => Command::Draw { round },
        DealerEvent::Cards { cards } => Command::Cards { round, cards },
        DealerEvent::Misdeal { reason } => Command::Misdeal { round, reason },
        DealerEvent::CloseDecisions => Command::CloseDecisions { round },
    };
    run(&state, &caller, &req, &body, command).await
}

/// A void: of the whole round, or (naming `players` or `bets`) of some players' stakes.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"reason": "card misread at box 3", "players": ["p3"]}))]
pub struct VoidRequest {
    pub reason: String,
    /// Players whose every live bet of the round is voided (a partial void).
    #[serde(default)]
    pub players: Vec<String>,
    /// Bets voided (a partial void).
    #[serde(default)]
    pub bets: Vec<String>,
    /// The person who decided (the operator's own id for its staff member), logged with the
    /// key as the entry's actor.
    #[serde(default)]
    pub person: Option<String>,
}

/// Voids a round, or some players' or bets' stakes in it.
///
/// The plan's error policy: a round that cannot be completed is voided and each bet's stake
/// returned. Where the policy cancels "pro některé anebo všechny sázející"
/// (`cancel_scope = "some_or_all_players"`), naming `players` or `bets` voids only their
/// stakes (each logged as `bet_refunded` with the reason and the policy's clause); the rest of
/// the round goes on and is settled, and its settlement lists the stakes returned before it
/// (`refunded`). A Casino Hold'em player's bets are voided together (his hand is settled as
/// one); a blackjack round's stakes only before its first card. Roles: **operator**, own
/// tables only.
#[utoipa::path(
    tag = "rounds",
    security(("api_key" = [])),
    params(("round" = String, Path, description = "The round id as answered, `<table id>.<number>`; an operator may name its own round by its table's name alone (`t1.1`).", example = "t1.1"), IdempotencyKey),
    request_body = VoidRequest,
    responses(
        (status = 200, description = "The round is voided, or the named stakes; `refunds` lists each stake returned (`phase` is `voided` only for a whole round).", body = RoundOutcome),
        (status = 400, description = "`malformed_json`, `bad_number` (a fraction, or a number beyond ±(2^53 − 1)), `idempotency_key_required` or `bad_idempotency_key`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: not an operator key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`round_not_found`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 409, description = "`out_of_order`: already settled or voided; `partial_void_not_possible`: a blackjack round whose cards are dealt, or a round in its decision time.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 422, description = "`bad_reason` (1–500 characters), `partial_void_not_allowed` (the plan cancels for all players only; with `plan` and `clause`), `no_live_bet`, `bet_not_live`, `bets_depend` (a remaining bet needs a voided one), `bad_refund_request`, `bad_id` or `idempotency_key_reused`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: nothing was recorded; `outcome_unknown`: the store did not confirm it in time, so it may have been recorded. Retry either with the same Idempotency-Key.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[post("/v1/rounds/{round}/void")]
pub async fn void_round(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, Problem> {
    let b: VoidRequest = parse(&body)?;
    let person = b.person.clone();
    let command = if b.players.is_empty() && b.bets.is_empty() {
        Command::Void {
            round: path.into_inner(),
            reason: b.reason,
        }
    } else {
        Command::PartialVoid {
            round: path.into_inner(),
            reason: b.reason,
            players: b.players,
            bets: b.bets,
        }
    };
    run_as(&state, &caller, &req, &body, person, command).await
}

/// A player's withdrawal of his bets.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"player": "p1", "bets": ["t1.1.2"]}))]
pub struct WithdrawalRequest {
    pub player: String,
    /// The bets withdrawn; none named: every live bet of the player in the round.
    #[serde(default)]
    pub bets: Vec<String>,
}

/// A player withdraws bets before betting closes, where the plan allows it.
///
/// SYNOT Baccarat: "Do vyhlášení konce sázek a jejich potvrzení lze sázky odebrat"
/// (`policies.withdrawal`). Each stake is returned (`bet_refunded`, with the plan's clause)
/// and the bet takes no further part; elsewhere refused with `withdrawal_not_allowed`.
/// Roles: **operator**, own tables only.
#[utoipa::path(
    tag = "rounds",
    security(("api_key" = [])),
    params(("round" = String, Path, description = "The round id as answered, `<table id>.<number>`; an operator may name its own round by its table's name alone (`t1.1`).", example = "t1.1"), IdempotencyKey),
    request_body = WithdrawalRequest,
    responses(
        (status = 200, description = "The bets are withdrawn; `refunds` lists each stake returned.", body = RoundOutcome),
        (status = 400, description = "`malformed_json`, `bad_number` (a fraction, or a number beyond ±(2^53 − 1)), `idempotency_key_required` or `bad_idempotency_key`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: not an operator key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`round_not_found`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 409, description = "`betting_closed`: betting is closed (with `plan` and `clause`).", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 422, description = "`withdrawal_not_allowed` (with `plan` and `clause`), `no_live_bet`, `bet_not_live`, `bets_depend` (a remaining bet needs a withdrawn one), `bad_refund_request`, `bad_id` or `idempotency_key_reused`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: nothing was recorded; retry with the same Idempotency-Key.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[post("/v1/rounds/{round}/withdrawals")]
pub async fn withdraw_bets(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, Problem> {
    let b: WithdrawalRequest = parse(&body)?;
    let command = Command::Withdraw {
        round: path.into_inner(),
        player: b.player,
        bets: b.bets,
    };
    run(&state, &caller, &req, &body, command).await
}

/// The players' decisions.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"decisions": [{"player": "p1", "decision": "call"}, {"player": "p2", "decision": "fold"}]}))]
pub struct DecisionsRequest {
    /// 1–500 decisions, each `{"player": …, "decision": …}`. Casino Hold'em: `call` or `fold`.
    /// Blackjack: `hit`, `stand`, `double`, `split`, `surrender`, or an object
    /// `{"action": …, "seat"?: n, "hand"?: n}` (`seat` when the player owes decisions on two
    /// boxes), `{"action": "insurance", "stake_minor": n}`, `{"action": "no_insurance"}`, and
    /// for a split or a double `"bet_behind_declines": ["p2"]`: the Bet Behind players on the
    /// box who cannot fund it.
    pub decisions: Vec<PlayerDecision>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PlayerDecision {
    pub player: String,
    #[schema(value_type = super::schemas::Decision, example = "call")]
    pub decision: Value,
}

/// Posts players' decisions (Casino Hold'em: call or fold after the flop).
///
/// Each decision is taken or refused on its own (`decisions` in the reply); a call places the
/// Call (`call_multiple` × the Ante) as a further bet of the player, to debit from the wallet.
/// A decision after the deadline is refused (`decision_too_late`): the plan's automatic
/// decision applies. Once every player has decided, the decision time closes. Roles:
/// **operator**, own tables only.
#[utoipa::path(
    tag = "rounds",
    security(("api_key" = [])),
    params(("round" = String, Path, description = "The round id as answered, `<table id>.<number>`; an operator may name its own round by its table's name alone (`t1.1`).", example = "t1.1"), IdempotencyKey),
    request_body = DecisionsRequest,
    responses(
        (status = 200, description = "Each decision taken or refused, in request order (`decisions`); `phase` is `betting_closed` once the decision time closed.", body = RoundOutcome),
        (status = 400, description = "`malformed_json`, `bad_number` (a fraction, or a number beyond ±(2^53 − 1)), `idempotency_key_required` or `bad_idempotency_key`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: not an operator key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`round_not_found`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 409, description = "`out_of_order`: no decision time is open; `round_paused`: a reported error paused the round.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 422, description = "`bad_decision_count` or `idempotency_key_reused`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: nothing was recorded; `outcome_unknown`: the store did not confirm it in time, so it may have been recorded. Retry either with the same Idempotency-Key.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[post("/v1/rounds/{round}/decisions")]
pub async fn post_decisions(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, Problem> {
    let b: DecisionsRequest = parse(&body)?;
    run(
        &state,
        &caller,
        &req,
        &body,
        Command::Decisions {
            round: path.into_inner(),
            decisions: b
                .decisions
                .into_iter()
                .map(|d| (d.player, d.decision))
                .collect(),
        },
    )
    .await
}

/// What the dealer did with the table's shoe.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"action": "shuffle"}))]
pub struct ShoeAction {
    /// `shuffle` (the same cards, shuffled) or `change` (a new shoe).
    pub action: ShoeActionKind,
}

#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ShoeActionKind {
    Shuffle,
    Change,
}

/// Logs a shuffle or a change of the table's shoe (live card games).
///
/// pitboss counts every card dealt from the shoe since the last shuffle and refuses a card the
/// shoe can no longer hold (`card_not_in_shoe`); a shuffle or a new shoe makes every card
/// available again. Not while a round is being dealt. Roles: **operator**, own tables only.
#[utoipa::path(
    tag = "tables",
    security(("api_key" = [])),
    params(("table" = String, Path, description = "The table id as answered, `<operator>:<name>`; an operator may name its own table by its name alone."), IdempotencyKey),
    request_body = ShoeAction,
    responses(
        (status = 200, description = "Logged.", body = ShoeReply),
        (status = 400, description = "`malformed_json`, `bad_number` (a fraction, or a number beyond ±(2^53 − 1)), `idempotency_key_required` or `bad_idempotency_key`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: not an operator key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`table_not_found`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 409, description = "`out_of_order`: a round is being dealt.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 422, description = "`no_shoe` (an RNG table or a game without cards) or `idempotency_key_reused`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: nothing was recorded; `outcome_unknown`: the store did not confirm it in time, so it may have been recorded. Retry either with the same Idempotency-Key.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[post("/v1/tables/{table}/shoe")]
pub async fn shoe(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, Problem> {
    let b: ShoeAction = parse(&body)?;
    run(
        &state,
        &caller,
        &req,
        &body,
        Command::Shoe {
            table: path.into_inner(),
            change: matches!(b.action, ShoeActionKind::Change),
        },
    )
    .await
}

/// Posts an act at a player-versus-player table (Oko bere, the C40 poker room).
///
/// The body is one action of the table's game, e.g. `{"action": "bet", "seat": 2,
/// "stake_minor": 2000}` (Oko bere) or `{"action": "raise", "seat": 4, "to_minor": 6000}`
/// (poker); `{"action": "automatic"}` applies the plan's act for the player who has not acted
/// in time (poker: check, or fold when facing a bet). The engine checks it against the rules
/// and the plan; the reply lists its effects (chips moved, pots awarded, a hand voided) and
/// what the table waits for next. Roles: **operator**, own tables only.
#[utoipa::path(
    tag = "tables",
    security(("api_key" = [])),
    params(("table" = String, Path, description = "The table id as answered, `<operator>:<name>`; an operator may name its own table by its name alone."), IdempotencyKey),
    request_body(
        content = super::schemas::TableAction,
        description = "One action of the table's game, or `{\"action\": \"automatic\"}`.",
        examples(
            ("poker_sit_down" = (summary = "Poker: a player buys in", value = json!({"action": "sit_down", "seat": 3, "player": "p1", "chips_minor": 200_000, "entry": "buy_in"}))),
            ("poker_raise" = (summary = "Poker: a raise", value = json!({"action": "raise", "seat": 4, "to_minor": 6_000}))),
            ("oko_bet" = (summary = "Oko bere: a bet", value = json!({"action": "bet", "seat": 2, "stake_minor": 2_000}))),
            ("automatic" = (summary = "The plan's act for the player who has not acted", value = json!({"action": "automatic"}))),
        ),
    ),
    responses(
        (status = 200, description = "Applied and logged.", body = TableActionReply),
        (status = 400, description = "`malformed_json`, `bad_number` (a fraction, or a number beyond ±(2^53 − 1)), `idempotency_key_required` or `bad_idempotency_key`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: not an operator key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`table_not_found`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 409, description = "`table_closed`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 422, description = "The rules refuse the action (its code, with `plan` and `clause`), `malformed_action`, `not_in_game` (a table played against the house), `no_automatic_decision`, or `idempotency_key_reused`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: nothing was recorded; `outcome_unknown`: the store did not confirm it in time, so it may have been recorded. Retry either with the same Idempotency-Key.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[post("/v1/tables/{table}/actions")]
pub async fn table_action(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, Problem> {
    let action: Value = parse(&body)?;
    if !action.is_object() {
        return Err(Problem::bad_request(
            "malformed_json",
            "an action is a JSON object with an \"action\" field",
        ));
    }
    let automatic = action.get("action").and_then(Value::as_str) == Some("automatic");
    run(
        &state,
        &caller,
        &req,
        &body,
        Command::TableAction {
            table: path.into_inner(),
            action: if automatic { None } else { Some(action) },
        },
    )
    .await
}

fn visible_table<'a>(
    caller: &Caller,
    t: Option<&'a TableState>,
) -> Result<&'a TableState, Problem> {
    match t {
        Some(t)
            if caller.reads_all() || caller.operator.as_deref() == Some(t.operator.as_str()) =>
        {
            Ok(t)
        }
        _ => Err(Problem::not_found("table_not_found", "no such table")),
    }
}

/// One table.
///
/// Roles: any; an **operator** sees only its own tables (another's is `table_not_found`).
#[utoipa::path(
    tag = "tables",
    security(("api_key" = [])),
    params(("table" = String, Path, description = "The table id as answered, `<operator>:<name>`; an operator may name its own table by its name alone.")),
    responses(
        (status = 200, description = "The table.", body = crate::round::TableState),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`table_not_found`.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[get("/v1/tables/{table}")]
pub async fn get_table(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, Problem> {
    for id in named(&caller, &path) {
        for log in state.logs_holding(&id) {
            if let Some(found) = visible_table_json(&log, &caller, id.clone()).await? {
                return Ok(found);
            }
        }
    }
    Err(Problem::not_found("table_not_found", "no such table"))
}

/// The ids a caller's name for a table or round may stand for, in the order tried: an
/// operator's bare name (`t1`, `t1.3`) is first its scoped id (`op:t1`, issue 17), then a
/// table it opened before ids were scoped, logged bare; other callers, and scoped ids, name
/// what the log names. Whichever is found is still checked to be the caller's to read.
pub(super) fn named(caller: &Caller, id: &str) -> Vec<String> {
    match caller.operator.as_deref() {
        Some(op) if !caller.reads_all() && !id.contains(crate::round::SCOPE) => {
            vec![crate::round::scoped(op, id), id.to_string()]
        }
        _ => vec![id.to_string()],
    }
}

/// A table the caller may read: live from memory, closed from the store (as stored when it
/// closed, byte for byte); `None` when there is none it may read.
async fn visible_table_json(
    log: &Service,
    caller: &Caller,
    id: String,
) -> Result<Option<HttpResponse>, Problem> {
    {
        let s = log.state.read().expect("state lock");
        if let Some(t) = s.tables.get(id.as_str()) {
            return Ok(visible_table(caller, Some(t))
                .ok()
                .map(|t| HttpResponse::Ok().json(t)));
        }
    }
    let pool = log.pool.clone();
    let stored = web::block(move || {
        let mut conn = pool
            .get()
            .map_err(|e| crate::store::StoreError::Pool(e.to_string()))?;
        crate::service::stored_table(&mut conn, &id)
    })
    .await
    .map_err(|e| super::problem::unavailable(&e.to_string()))?
    .map_err(|e| super::problem::unavailable(&e.to_string()))?;
    match stored {
        Some((operator, _, body))
            if caller.reads_all() || caller.operator.as_deref() == Some(operator.as_str()) =>
        {
            Ok(Some(
                HttpResponse::Ok()
                    .content_type("application/json")
                    .body(body),
            ))
        }
        _ => Ok(None),
    }
}

/// A round the caller may read, with its JSON (as `GET /v1/rounds/{round}` answers it), its
/// table and the table's plan: from memory while it is live, from the store once finished
/// (the JSON stored when it finished, byte for byte).
struct RoundView {
    round: RoundState,
    json: String,
    table: String,
    plan: String,
    /// An operator's view of a blackjack round whose dealer's hole card is face down: which
    /// card input dealt it (its entry is withheld from the recall until the dealer plays).
    hole_card_input: Option<usize>,
    /// The log it was read from.
    log: std::sync::Arc<Service>,
}

async fn visible_round(
    state: &web::Data<AppState>,
    caller: &Caller,
    round: &str,
) -> Result<RoundView, Problem> {
    for id in named(caller, round) {
        for log in state.logs_holding(&id) {
            if let Some(v) = visible_round_as(log, caller, &id).await? {
                return Ok(v);
            }
        }
    }
    Err(Problem::not_found(
        "round_not_found",
        format!("no round {round}"),
    ))
}

/// The round of the log's id `round`, if the caller may read it.
async fn visible_round_as(
    log: std::sync::Arc<Service>,
    caller: &Caller,
    round: &str,
) -> Result<Option<RoundView>, Problem> {
    {
        let s = log.state.read().expect("state lock");
        if let Some(r) = s.rounds.get(round) {
            let Ok(t) = visible_table(caller, s.tables.get(&r.table)) else {
                return Ok(None);
            };
            // The hole card is face down to the operator until the dealer plays.
            let masked = (!caller.reads_all())
                .then(|| r.masked_for_operator(&t.loaded))
                .flatten();
            return Ok(Some(RoundView {
                json: serde_json::to_string(masked.as_ref().unwrap_or(r))
                    .expect("rounds serialise"),
                hole_card_input: masked.and_then(|_| r.hidden_hole_card_input(&t.loaded)),
                round: r.clone(),
                table: t.table.clone(),
                plan: t.plan.clone(),
                log: log.clone(),
            }));
        }
    }
    let pool = log.pool.clone();
    let svc_state = log.state.clone();
    let plans = log.plans.clone();
    let id = round.to_string();
    let stored = web::block(move || {
        let mut conn = pool
            .get()
            .map_err(|e| crate::store::StoreError::Pool(e.to_string()))?;
        crate::service::derived::read_finished_round(&svc_state, &plans, &mut conn, &id)
    })
    .await
    .map_err(|e| super::problem::unavailable(&e.to_string()))?
    .map_err(|e| super::problem::unavailable(&e.to_string()))?;
    let Some(v) = stored else {
        return Ok(None);
    };
    if !caller.reads_all() && caller.operator.as_deref() != Some(v.operator.as_str()) {
        return Ok(None);
    }
    Ok(Some(RoundView {
        table: v.round.table.clone(),
        round: v.round,
        json: v.json,
        plan: v.plan,
        hole_card_input: None,
        log,
    }))
}

/// One round, with its bets.
///
/// Roles: any; an **operator** sees only rounds of its own tables.
#[utoipa::path(
    tag = "rounds",
    security(("api_key" = [])),
    params(("round" = String, Path, description = "The round id as answered, `<table id>.<number>`; an operator may name its own round by its table's name alone (`t1.1`).", example = "t1.1")),
    responses(
        (status = 200, description = "The round.", body = crate::round::RoundState),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`round_not_found`.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[get("/v1/rounds/{round}")]
pub async fn get_round(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, Problem> {
    let v = visible_round(&state, &caller, &path).await?;
    Ok(HttpResponse::Ok()
        .content_type("application/json")
        .body(v.json))
}

/// What each bet of a settled round pays, or the refunds of a voided one.
///
/// Roles: any; an **operator** sees only rounds of its own tables.
#[utoipa::path(
    tag = "rounds",
    security(("api_key" = [])),
    params(("round" = String, Path, description = "The round id as answered, `<table id>.<number>`; an operator may name its own round by its table's name alone (`t1.1`).", example = "t1.1")),
    responses(
        (status = 200, description = "The settlement, or the refunds.", body = SettlementDocument),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`round_not_found`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 409, description = "`not_settled`: the round is neither settled nor voided.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[get("/v1/rounds/{round}/settlement")]
pub async fn get_settlement(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, Problem> {
    let v = visible_round(&state, &caller, &path).await?;
    let r = &v.round;
    match (&r.settlements, &r.refunds) {
        (Some(settlements), _) => Ok(HttpResponse::Ok().json(SettlementDocument::Settled(
            SettledRound {
                round: r.round.clone(),
                phase: r.phase,
                result: r.result,
                settlements: settlements.clone(),
                stake_minor: settlements.iter().map(|x| x.stake_minor).sum::<i64>(),
                paid_minor: settlements.iter().map(|x| x.total_minor).sum::<i64>(),
                refunded: r
                    .bets
                    .iter()
                    .filter(|b| b.refunded)
                    .map(|b| crate::round::Refund {
                        bet: b.bet.clone(),
                        player: b.player.clone(),
                        refund_minor: b.stake_minor,
                    })
                    .collect(),
            },
        ))),
        (None, Some(refunds)) => Ok(HttpResponse::Ok().json(SettlementDocument::Voided(
            VoidedRound {
                round: r.round.clone(),
                phase: r.phase,
                refunds: refunds.clone(),
                refund_minor: refunds.iter().map(|x| x.refund_minor).sum::<i64>(),
            },
        ))),
        (None, None) => Err(Problem::new(
            actix_web::http::StatusCode::CONFLICT,
            "not_settled",
            "Not settled",
            format!("round {} is {}: nothing is settled yet", r.round, r.phase),
        )),
    }
}

/// The complete history of a round, as a player dispute needs it: every logged entry
/// concerning the round, in order, with its sequence number (for an inclusion proof).
///
/// Roles: any; an **operator** sees only rounds of its own tables.
#[utoipa::path(
    tag = "rounds",
    security(("api_key" = [])),
    params(("round" = String, Path, description = "The round id as answered, `<table id>.<number>`; an operator may name its own round by its table's name alone (`t1.1`).", example = "t1.1")),
    responses(
        (status = 200, description = "The round's logged entries, in order.", body = Recall),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`round_not_found`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: the log could not be read.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[get("/v1/rounds/{round}/recall")]
pub async fn recall(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, Problem> {
    let RoundView {
        plan,
        table,
        hole_card_input,
        round,
        log,
        ..
    } = visible_round(&state, &caller, &path).await?;
    let round = round.round;
    let pool = log.pool.clone();
    let live_reg = log
        .state
        .read()
        .expect("state lock")
        .registrations
        .get(&table)
        .cloned();
    let t = table.clone();
    let (rows, reg) = web::block(move || {
        let rows = crate::service::read::entries_of_round(&pool, &round)?;
        // A closed table's registration is read from its `table_opened` entry.
        let reg = match live_reg {
            Some(r) => Some(r),
            None => crate::service::read::registration_of(&pool, &t)?,
        };
        Ok::<_, crate::store::StoreError>((rows, reg))
    })
    .await
    .map_err(|e| super::problem::unavailable(&e.to_string()))?
    .map_err(|e| super::problem::unavailable(&e.to_string()))?;
    let mut entries: Vec<LoggedEntry> = rows.iter().map(LoggedEntry::from_row).collect();
    // The entry that dealt the face-down hole card is withheld from the operator until the
    // dealer plays.
    let mut withheld = Vec::new();
    if let Some(at) = hole_card_input {
        let is_card = |e: &LoggedEntry| {
            e.entry["kind"] == "blackjack_input" && e.entry["payload"]["input"]["input"] == "card"
        };
        if let Some(i) = entries
            .iter()
            .enumerate()
            .filter(|(_, e)| is_card(e))
            .nth(at)
            .map(|(i, _)| i)
        {
            withheld.push(entries.remove(i).seq);
        }
    }
    Ok(HttpResponse::Ok().json(Recall {
        registration: reg.as_ref().and_then(|r| r.registration.clone()),
        device: reg.and_then(|r| r.device),
        table,
        plan,
        entries,
        withheld,
    }))
}
