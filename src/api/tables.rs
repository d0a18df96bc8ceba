//! What operators do: tables, rounds, bets, dealer events, voids; and the reads of them.
//!
//! Every mutating request carries an `Idempotency-Key`; a retry with the same key and body
//! returns the first answer and changes nothing.

use actix_web::{get, post, web, HttpRequest, HttpResponse};
use serde::Deserialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::auth::Caller;
use super::problem::Problem;
use super::startup::AppState;
use crate::plan::canonical::hex;
use crate::plan::model::Mode;
use crate::round::{RoundState, TableState};
use crate::service::{Command, Idempotency, Reply};

/// Longest accepted Idempotency-Key.
pub const MAX_IDEMPOTENCY_KEY: usize = 128;

fn idempotency(req: &HttpRequest, body: &[u8]) -> Result<Idempotency, Problem> {
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

fn parse<T: for<'de> Deserialize<'de>>(body: &[u8]) -> Result<T, Problem> {
    serde_json::from_slice(body).map_err(|e| Problem::bad_request("malformed_json", e.to_string()))
}

fn respond(reply: Reply) -> HttpResponse {
    let status = actix_web::http::StatusCode::from_u16(reply.status)
        .unwrap_or(actix_web::http::StatusCode::INTERNAL_SERVER_ERROR);
    let mut b = HttpResponse::build(status);
    if reply.is_problem() {
        b.content_type("application/problem+json");
    }
    b.json(reply.body)
}

async fn run(
    state: &AppState,
    caller: &Caller,
    req: &HttpRequest,
    body: &[u8],
    command: Command,
) -> Result<HttpResponse, Problem> {
    let operator = caller.operator()?;
    let idem = idempotency(req, body)?;
    Ok(respond(
        state.service.submit(operator, Some(idem), command).await,
    ))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenTable {
    pub table: String,
    /// `id@version`: the table keeps this version for its whole life.
    pub plan: String,
    pub mode: Mode,
}

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
        },
    )
    .await
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reason {
    pub reason: String,
}

#[post("/v1/tables/{table}/close")]
pub async fn close_table(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, Problem> {
    let b: Reason = parse(&body)?;
    run(
        &state,
        &caller,
        &req,
        &body,
        Command::CloseTable {
            table: path.into_inner(),
            reason: b.reason,
        },
    )
    .await
}

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

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlayerConnection {
    pub player: String,
    pub connected: bool,
}

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
    /// Each bet: `{"player": "p1", "bet": "split", "numbers": [1, 2], "stake_minor": 500}`.
    pub bets: Vec<Value>,
}

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

/// A dealer event. `type` is `close_betting`, `spin` (live: `number`, `ball_against_rotation`,
/// `ball_revolutions`) or `draw` (RNG: pitboss draws from the committed seed).
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum DealerEvent {
    CloseBetting,
    Spin {
        number: u8,
        ball_against_rotation: bool,
        ball_revolutions: u8,
    },
    Draw,
}

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
        DealerEvent::Draw => Command::Draw { round },
    };
    run(&state, &caller, &req, &body, command).await
}

#[post("/v1/rounds/{round}/void")]
pub async fn void_round(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, Problem> {
    let b: Reason = parse(&body)?;
    run(
        &state,
        &caller,
        &req,
        &body,
        Command::Void {
            round: path.into_inner(),
            reason: b.reason,
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

#[get("/v1/tables/{table}")]
pub async fn get_table(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, Problem> {
    let s = state.service.state.read().expect("state lock");
    let t = visible_table(&caller, s.tables.get(path.as_str()))?;
    Ok(HttpResponse::Ok().json(t))
}

fn visible_round<'a>(
    caller: &Caller,
    s: &'a crate::round::State,
    round: &str,
) -> Result<&'a RoundState, Problem> {
    let r = s
        .rounds
        .get(round)
        .ok_or_else(|| Problem::not_found("round_not_found", format!("no round {round}")))?;
    visible_table(caller, s.tables.get(&r.table))
        .map_err(|_| Problem::not_found("round_not_found", format!("no round {round}")))?;
    Ok(r)
}

#[get("/v1/rounds/{round}")]
pub async fn get_round(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, Problem> {
    let s = state.service.state.read().expect("state lock");
    Ok(HttpResponse::Ok().json(visible_round(&caller, &s, &path)?))
}

/// What each bet of a settled round pays, or the refunds of a voided one.
#[get("/v1/rounds/{round}/settlement")]
pub async fn get_settlement(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, Problem> {
    let s = state.service.state.read().expect("state lock");
    let r = visible_round(&caller, &s, &path)?;
    match (&r.settlements, &r.refunds) {
        (Some(settlements), _) => Ok(HttpResponse::Ok().json(json!({
            "round": r.round, "phase": r.phase, "result": r.result, "settlements": settlements,
            "stake_minor": settlements.iter().map(|x| x.stake_minor).sum::<i64>(),
            "paid_minor": settlements.iter().map(|x| x.total_minor).sum::<i64>(),
        }))),
        (None, Some(refunds)) => Ok(HttpResponse::Ok().json(json!({
            "round": r.round, "phase": r.phase, "refunds": refunds,
            "refund_minor": refunds.iter().map(|x| x.refund_minor).sum::<i64>(),
        }))),
        (None, None) => Err(Problem::new(
            actix_web::http::StatusCode::CONFLICT,
            "not_settled",
            "Not settled",
            format!("round {} is {:?}", r.round, r.phase),
        )),
    }
}

/// The complete history of a round, as a player dispute needs it: every logged entry
/// concerning the round, in order, with its sequence number (for an inclusion proof).
#[get("/v1/rounds/{round}/recall")]
pub async fn recall(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, Problem> {
    let round = path.into_inner();
    let (plan, table) = {
        let s = state.service.state.read().expect("state lock");
        let r = visible_round(&caller, &s, &round)?;
        let t = &s.tables[&r.table];
        (t.plan.clone(), t.table.clone())
    };
    let pool = state.service.pool.clone();
    let rows = web::block(move || crate::service::read::entries_of_round(&pool, &round))
        .await
        .map_err(|e| super::problem::unavailable(&e.to_string()))?
        .map_err(|e| super::problem::unavailable(&e.to_string()))?;
    let entries: Vec<Value> = rows
        .iter()
        .map(|(seq, c)| json!({"seq": seq, "entry": serde_json::from_slice::<Value>(c).unwrap_or(Value::Null)}))
        .collect();
    Ok(HttpResponse::Ok().json(json!({"table": table, "plan": plan, "entries": entries})))
}
