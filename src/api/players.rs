//! The player register (002 § 6(2), (3)): exclusions and self-limits set by the operator, what
//! the player used in the operator's other games, and what counts toward the limits (see
//! [`crate::service::register`]).

use actix_web::{get, post, web, HttpRequest, HttpResponse};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use super::auth::Caller;
use super::dto::{IdempotencyKey, ProblemDocument};
use super::problem::Problem;
use super::startup::AppState;
use super::tables::{parse, run_as};
use crate::service::register::{
    self, Amounts, ExclusionSource, Limits, PlayerView, RegisterCommand,
};
use crate::service::Command;

/// An exclusion to record.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"source": "self_exclusion", "until": "2027-05-26T00:00:00Z", "reason": "the player asked for six months", "person": "support-3"}))]
pub struct ExcludeRequest {
    pub source: ExclusionSource,
    /// From when (default: now).
    #[serde(default)]
    pub from: Option<DateTime<Utc>>,
    /// Until when (absent: indefinitely); after `from`.
    #[serde(default)]
    pub until: Option<DateTime<Utc>>,
    /// Up to 500 bytes.
    #[serde(default)]
    pub reason: Option<String>,
    /// The operator's person who recorded it.
    #[serde(default)]
    pub person: Option<String>,
}

/// An exclusion lifted.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"reason": "removed from the national register", "person": "support-3"}))]
pub struct LiftRequest {
    /// 1–500 bytes.
    pub reason: String,
    #[serde(default)]
    pub person: Option<String>,
}

/// The player's self-limits, all of them: a limit left out is none.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"stake_per_bet_minor": 10000, "stakes_per_day_minor": 50000, "net_loss_per_month_minor": 200000, "person": "p1-self-service"}))]
pub struct LimitsRequest {
    /// The largest stake of one bet.
    #[serde(default)]
    pub stake_per_bet_minor: Option<i64>,
    /// The stakes of one day (Europe/Prague), with those reported for other games.
    #[serde(default)]
    pub stakes_per_day_minor: Option<i64>,
    #[serde(default)]
    pub stakes_per_month_minor: Option<i64>,
    /// The net loss of one day: settled net loss, open stakes and the new stake, with the
    /// net loss reported for other games.
    #[serde(default)]
    pub net_loss_per_day_minor: Option<i64>,
    #[serde(default)]
    pub net_loss_per_month_minor: Option<i64>,
    #[serde(default)]
    pub person: Option<String>,
}

/// What the player used in the operator's other games (§ 6(3): the internet technical game,
/// live game and lottery share the limits) in the current day and month, Europe/Prague. Each
/// report replaces the earlier one of its period.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"day": {"staked_minor": 20000, "net_loss_minor": 5000}, "month": {"staked_minor": 150000, "net_loss_minor": 40000}}))]
pub struct UsageRequest {
    #[serde(default)]
    pub day: Option<Amounts>,
    #[serde(default)]
    pub month: Option<Amounts>,
    #[serde(default)]
    pub person: Option<String>,
}

async fn submit(
    state: &AppState,
    caller: &Caller,
    req: &HttpRequest,
    body: &[u8],
    person: Option<String>,
    command: RegisterCommand,
) -> Result<HttpResponse, Problem> {
    run_as(state, caller, req, body, person, Command::Register(command)).await
}

const PLAYER: &str = "The operator's player id (1–64 of `a-z A-Z 0-9 _ -`).";

/// Records a player's exclusion from the operator's games.
///
/// 002 § 6(2): the register of persons excluded from gambling, self-exclusion. From `from`
/// (default now) until `until` (absent: indefinitely), every bet of the player is refused
/// `player_excluded` with the clause. A new exclusion replaces the one before (logged as
/// `replaces`). Logged as `player_excluded`, naming the key and `person`. Answers the player
/// as the register now stands. Roles: **operator**, its own players only.
#[utoipa::path(
    tag = "players",
    security(("api_key" = [])),
    params(("player" = String, Path, description = PLAYER, example = "p1"), IdempotencyKey),
    request_body = ExcludeRequest,
    responses(
        (status = 200, description = "The exclusion is recorded.", body = PlayerView),
        (status = 400, description = "`malformed_json`, `bad_number` (a fraction, or a number beyond ±(2^53 − 1)), `idempotency_key_required` or `bad_idempotency_key`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: not an operator key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 422, description = "`bad_exclusion` (with `clause`), `bad_id` or `idempotency_key_reused`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: nothing was recorded; retry with the same Idempotency-Key.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[post("/v1/players/{player}/exclusion")]
pub async fn exclude(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, Problem> {
    let b: ExcludeRequest = parse(&body)?;
    let command = RegisterCommand::Exclude {
        player: path.into_inner(),
        source: b.source,
        from: b.from,
        until: b.until,
        reason: b.reason,
    };
    submit(&state, &caller, &req, &body, b.person, command).await
}

/// Lifts a player's exclusion.
///
/// Logged as `player_exclusion_lifted` with the exclusion lifted, the reason, the key and
/// `person`. Roles: **operator**, its own players only.
#[utoipa::path(
    tag = "players",
    security(("api_key" = [])),
    params(("player" = String, Path, description = PLAYER, example = "p1"), IdempotencyKey),
    request_body = LiftRequest,
    responses(
        (status = 200, description = "The exclusion is lifted.", body = PlayerView),
        (status = 400, description = "`malformed_json`, `bad_number` (a fraction, or a number beyond ±(2^53 − 1)), `idempotency_key_required` or `bad_idempotency_key`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: not an operator key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 409, description = "`not_excluded` (with `clause`): the player has no exclusion.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 422, description = "`bad_reason`, `bad_id` or `idempotency_key_reused`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: nothing was recorded; retry with the same Idempotency-Key.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[post("/v1/players/{player}/exclusion/lift")]
pub async fn lift_exclusion(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, Problem> {
    let b: LiftRequest = parse(&body)?;
    let command = RegisterCommand::Lift {
        player: path.into_inner(),
        reason: b.reason,
    };
    submit(&state, &caller, &req, &body, b.person, command).await
}

/// Sets a player's self-limits.
///
/// 002 § 6(3). The body is the whole set: a limit left out is none. A lowered or new limit
/// takes effect at once; a raised or removed one 24 hours later (an assumption: the documents
/// give no delay) and is answered as `pending` until then. A bet whose stake is above
/// `stake_per_bet_minor`, or that would take the day's or month's stakes, or its net loss
/// (settled net loss + open stakes + the stake), above a limit — counting what the operator
/// reported for its other games — is refused `limit_exceeded` with the clause. Logged as
/// `player_limits_set` with each change and when it takes effect (nothing is logged when
/// nothing changes). Roles: **operator**, its own players only.
#[utoipa::path(
    tag = "players",
    security(("api_key" = [])),
    params(("player" = String, Path, description = PLAYER, example = "p1"), IdempotencyKey),
    request_body = LimitsRequest,
    responses(
        (status = 200, description = "The limits as they now stand.", body = PlayerView),
        (status = 400, description = "`malformed_json`, `bad_number` (a fraction, or a number beyond ±(2^53 − 1)), `idempotency_key_required` or `bad_idempotency_key`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: not an operator key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 422, description = "`bad_limits` (with `clause`), `bad_id` or `idempotency_key_reused`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: nothing was recorded; retry with the same Idempotency-Key.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[post("/v1/players/{player}/limits")]
pub async fn set_limits(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, Problem> {
    let b: LimitsRequest = parse(&body)?;
    let command = RegisterCommand::SetLimits {
        player: path.into_inner(),
        limits: Limits {
            stake_per_bet_minor: b.stake_per_bet_minor,
            stakes_per_day_minor: b.stakes_per_day_minor,
            stakes_per_month_minor: b.stakes_per_month_minor,
            net_loss_per_day_minor: b.net_loss_per_day_minor,
            net_loss_per_month_minor: b.net_loss_per_month_minor,
        },
    };
    submit(&state, &caller, &req, &body, b.person, command).await
}

/// Reports what the player used in the operator's other games.
///
/// 002 § 6(3): the self-limits are set together for the internet technical game, live game
/// and lottery. The amounts staked and the net loss of the current day and month (Europe/Prague)
/// in the operator's other games; each report replaces the earlier one of its period, and is
/// added to what pitboss counted when a bet is checked. Logged as `player_usage_reported`.
/// Roles: **operator**, its own players only.
#[utoipa::path(
    tag = "players",
    security(("api_key" = [])),
    params(("player" = String, Path, description = PLAYER, example = "p1"), IdempotencyKey),
    request_body = UsageRequest,
    responses(
        (status = 200, description = "The usage is recorded.", body = PlayerView),
        (status = 400, description = "`malformed_json`, `bad_number` (a fraction, or a number beyond ±(2^53 − 1)), `idempotency_key_required` or `bad_idempotency_key`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: not an operator key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 422, description = "`bad_usage` (with `clause`), `bad_id` or `idempotency_key_reused`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: nothing was recorded; retry with the same Idempotency-Key.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[post("/v1/players/{player}/usage")]
pub async fn report_usage(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, Problem> {
    let b: UsageRequest = parse(&body)?;
    let command = RegisterCommand::ReportUsage {
        player: path.into_inner(),
        day: b.day,
        month: b.month,
    };
    submit(&state, &caller, &req, &body, b.person, command).await
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct OperatorQuery {
    /// Whose player (required of a regulator, an auditor or an admin; an operator key reads
    /// only its own).
    pub operator: Option<String>,
}

/// A player in the register: exclusion, limits, and what counts toward them now.
///
/// What pitboss counted in the current day and month (Europe/Prague: stakes accepted, net loss
/// of settled rounds), what the operator reported for its other games, their sum, and the
/// stakes of rounds not settled yet. Roles: **operator** (its own players), **regulator**,
/// **auditor** and **admin** with `?operator=`.
#[utoipa::path(
    tag = "players",
    security(("api_key" = [])),
    params(("player" = String, Path, description = PLAYER, example = "p1"), OperatorQuery),
    responses(
        (status = 200, description = "The player.", body = PlayerView),
        (status = 400, description = "`malformed_query`, or `operator_required` (a key of no operator names none).", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: an operator key naming another operator.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: the store could not be read.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[get("/v1/players/{player}")]
pub async fn get_player(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    q: web::Query<OperatorQuery>,
) -> Result<HttpResponse, Problem> {
    let operator = if caller.reads_all() {
        q.operator.clone().ok_or_else(|| {
            Problem::bad_request(
                "operator_required",
                "name the operator whose player this is: ?operator=",
            )
        })?
    } else {
        let own = caller.operator()?.to_string();
        if q.operator.as_ref().is_some_and(|o| *o != own) {
            return Err(super::auth::forbidden(
                "an operator key reads only its own players",
            ));
        }
        own
    };
    let player = path.into_inner();
    // The operator's register is in its log.
    let pool = state.log_of(&operator).pool.clone();
    let view = web::block(move || {
        let mut conn = pool
            .get()
            .map_err(|e| crate::store::StoreError::Pool(e.to_string()))?;
        register::read(&mut conn, &operator, &player, Utc::now())
    })
    .await
    .map_err(|e| super::problem::unavailable(&e.to_string()))?
    .map_err(|e| super::problem::unavailable(&e.to_string()))?;
    Ok(HttpResponse::Ok().json(view))
}
