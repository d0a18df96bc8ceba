//! Key management (admin only) and the service's own metrics.

use actix_web::{get, post, web, HttpResponse};
use serde::Deserialize;
use utoipa::ToSchema;

use super::auth::{Caller, Role};
use super::dto::{NewKeyReply, ProblemDocument};
use super::problem::{unavailable, Problem};
use super::startup::AppState;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"role": "operator", "operator": "op1"}))]
pub struct NewKey {
    pub role: Role,
    /// Required for, and only for, an operator key (1–64 of `a-z A-Z 0-9 _ -`); `null` is
    /// the same as leaving it out.
    pub operator: Option<String>,
}

/// Creates an API key; the response is the only time its secret is shown.
///
/// Roles: **admin**. Takes no `Idempotency-Key`: each call creates a new key (a lost
/// response is recovered by creating another; keys cannot be listed or revoked over HTTP yet).
#[utoipa::path(
    tag = "admin",
    security(("api_key" = [])),
    request_body = NewKey,
    responses(
        (status = 201, description = "The new key, in full.", body = NewKeyReply),
        (status = 400, description = "`malformed_json`, `bad_id`, `operator_required` or `operator_not_allowed`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: needs the role admin.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: the key could not be stored; retry.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[post("/v1/admin/keys")]
pub async fn create_key(
    state: web::Data<AppState>,
    caller: Caller,
    body: web::Bytes,
) -> Result<HttpResponse, Problem> {
    caller.require(&[Role::Admin])?;
    let b: NewKey = serde_json::from_slice(&body)
        .map_err(|e| Problem::bad_request("malformed_json", e.to_string()))?;
    match (b.role, &b.operator) {
        (Role::Operator, Some(op)) => crate::round::check_id("operator", op)
            .map_err(|r| Problem::bad_request("bad_id", r.message))?,
        (Role::Operator, None) => {
            return Err(Problem::bad_request(
                "operator_required",
                "an operator key names its operator",
            ))
        }
        (_, Some(_)) => {
            return Err(Problem::bad_request(
                "operator_not_allowed",
                "only operator keys name an operator",
            ))
        }
        (_, None) => {}
    }
    if let (Role::Operator, Some(op)) = (b.role, &b.operator) {
        let max = state.limits.limits.operator_keys;
        let held = state.keys.count_for_operator(op);
        if max > 0 && held >= max as usize {
            state
                .limits
                .counters
                .keys
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return Err(Problem::throttled(&crate::limits::Throttled {
                code: "quota_exceeded",
                detail: format!("operator {op} holds {held} keys, its limit ({max})"),
                retry_after: std::time::Duration::from_secs(60),
            }));
        }
    }
    let st = state.clone();
    let (id, key) = web::block(move || {
        let mut conn = st
            .service
            .pool
            .get()
            .map_err(|e| crate::store::StoreError::Pool(e.to_string()))?;
        st.keys.create(&mut conn, b.role, b.operator.as_deref())
    })
    .await
    .map_err(|e| unavailable(&e.to_string()))?
    .map_err(|e| unavailable(&e.to_string()))?;
    Ok(HttpResponse::Created().json(NewKeyReply { key_id: id, key }))
}

/// The service's metrics, Prometheus text exposition.
///
/// Counters: bets accepted and refused, rounds settled and voided, group commits, log
/// entries, checkpoints, storage failures, throttled requests. Histograms: request latency
/// per method, route and status (`pitboss_http_request_duration_seconds`), the writer's
/// stages (`pitboss_writer_stage_duration_seconds{stage="lookup|decide|seal|write|commit"}`),
/// commands per batch, time in the queue; the queue's depth and readiness (`pitboss_ready`).
/// The Prometheus text format 0.0.4, or OpenMetrics 1.0.0 when asked for with
/// `Accept: application/openmetrics-text`. No authentication.
#[utoipa::path(
    tag = "ops",
    responses(
        (status = 200, description = "Prometheus text format 0.0.4 (or OpenMetrics 1.0.0 when the `Accept` header asks for it).", content(
            (String = "text/plain; version=0.0.4; charset=utf-8"),
            (String = "application/openmetrics-text; version=1.0.0; charset=utf-8"),
        )),
    ),
)]
#[get("/metrics")]
pub async fn metrics(state: web::Data<AppState>, req: actix_web::HttpRequest) -> HttpResponse {
    let openmetrics = req
        .headers()
        .get(actix_web::http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("application/openmetrics-text"));
    let (content_type, body) = crate::observe::render(&state.service.metrics, openmetrics);
    HttpResponse::Ok().content_type(content_type).body(body)
}
