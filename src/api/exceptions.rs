//! Exception events over the API (issue 20): the dealer system or staff reports an error that
//! pauses a round, and a repair resumes it; each names the key and the person the operator
//! gave, and the reason.

use actix_web::{post, web, HttpRequest, HttpResponse};
use serde::Deserialize;
use utoipa::ToSchema;

use super::auth::Caller;
use super::dto::{IdempotencyKey, ProblemDocument};
use super::problem::Problem;
use super::startup::AppState;
use super::tables::{parse, run_as};
use crate::service::exception::PauseReply;
use crate::service::Command;

/// An error reported by the dealer system or staff.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"reason": "wheel sensor fault", "reported": "E17 ball not detected", "person": "pitboss-042"}))]
pub struct PauseRequest {
    /// Why the round stops (1–500 bytes).
    pub reason: String,
    /// What the dealer system or staff reported, as text (up to 2,000 bytes).
    #[serde(default)]
    pub reported: Option<String>,
    /// The person who reports (the operator's own id for its staff member).
    #[serde(default)]
    pub person: Option<String>,
}

/// A repair.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"reason": "sensor replaced", "person": "tech-7"}))]
pub struct ResumeRequest {
    pub reason: String,
    #[serde(default)]
    pub person: Option<String>,
}

/// Pauses a round on a reported error.
///
/// Logged as `round_paused` with the reason, what was reported and who reported it (the key
/// and `person`). Until resumed the round takes no bet and no dealer event (`round_paused`,
/// 409); a void still ends it, every stake refunded. Roles: **operator**, own rounds only.
#[utoipa::path(
    tag = "rounds",
    security(("api_key" = [])),
    params(("round" = String, Path, description = "The round id as answered, `<table id>.<number>`; an operator may name its own round by its table's name alone (`t1.1`).", example = "t1.1"), IdempotencyKey),
    request_body = PauseRequest,
    responses(
        (status = 200, description = "The round is paused.", body = PauseReply),
        (status = 400, description = "`malformed_json`, `bad_number` (a fraction, or a number beyond ±(2^53 − 1)), `idempotency_key_required` or `bad_idempotency_key`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: not an operator key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`round_not_found` (also for another operator's round).", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 409, description = "`round_paused` (already paused) or `round_finished`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 422, description = "`bad_reason` or `idempotency_key_reused`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: nothing was recorded; retry with the same Idempotency-Key.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[post("/v1/rounds/{round}/pause")]
pub async fn pause(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, Problem> {
    let b: PauseRequest = parse(&body)?;
    run_as(
        &state,
        &caller,
        &req,
        &body,
        b.person,
        Command::PauseRound {
            round: path.into_inner(),
            reason: b.reason,
            reported: b.reported,
        },
    )
    .await
}

/// Resumes a paused round after a repair.
///
/// Logged as `round_resumed` with the reason and who resumed it. Roles: **operator**, own
/// rounds only.
#[utoipa::path(
    tag = "rounds",
    security(("api_key" = [])),
    params(("round" = String, Path, description = "The round id as answered, `<table id>.<number>`; an operator may name its own round by its table's name alone (`t1.1`).", example = "t1.1"), IdempotencyKey),
    request_body = ResumeRequest,
    responses(
        (status = 200, description = "The round goes on.", body = PauseReply),
        (status = 400, description = "`malformed_json`, `bad_number` (a fraction, or a number beyond ±(2^53 − 1)), `idempotency_key_required` or `bad_idempotency_key`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: not an operator key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`round_not_found` (also for another operator's round).", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 409, description = "`round_not_paused`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 422, description = "`bad_reason` or `idempotency_key_reused`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: nothing was recorded; retry with the same Idempotency-Key.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[post("/v1/rounds/{round}/resume")]
pub async fn resume(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, Problem> {
    let b: ResumeRequest = parse(&body)?;
    run_as(
        &state,
        &caller,
        &req,
        &body,
        b.person,
        Command::ResumeRound {
            round: path.into_inner(),
            reason: b.reason,
        },
    )
    .await
}
