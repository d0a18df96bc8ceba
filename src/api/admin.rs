//! Key management (admin only) and the service's own metrics.

use std::sync::atomic::Ordering;

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

/// The service's counters, Prometheus text exposition.
///
/// Bets accepted and refused, rounds settled and voided, group commits, log entries,
/// checkpoints and storage failures. No authentication.
#[utoipa::path(
    tag = "ops",
    responses(
        (status = 200, description = "Prometheus text format 0.0.4.", body = String, content_type = "text/plain; version=0.0.4"),
    ),
)]
#[get("/metrics")]
pub async fn metrics(state: web::Data<AppState>) -> HttpResponse {
    let m = &state.service.metrics;
    let mut out = String::new();
    for (name, help, kind, value) in [
        (
            "pitboss_bets_accepted_total",
            "Bets accepted and logged.",
            "counter",
            m.bets_accepted.load(Ordering::Relaxed),
        ),
        (
            "pitboss_bets_refused_total",
            "Bets refused and logged.",
            "counter",
            m.bets_refused.load(Ordering::Relaxed),
        ),
        (
            "pitboss_rounds_settled_total",
            "Rounds settled.",
            "counter",
            m.rounds_settled.load(Ordering::Relaxed),
        ),
        (
            "pitboss_rounds_voided_total",
            "Rounds voided with every stake refunded.",
            "counter",
            m.rounds_voided.load(Ordering::Relaxed),
        ),
        (
            "pitboss_log_batches_total",
            "Group commits of the audit log.",
            "counter",
            m.batches.load(Ordering::Relaxed),
        ),
        (
            "pitboss_log_batch_commands_total",
            "Commands written in those group commits.",
            "counter",
            m.batch_commands.load(Ordering::Relaxed),
        ),
        (
            "pitboss_log_entries",
            "Entries in the audit log.",
            "gauge",
            m.log_entries.load(Ordering::Relaxed),
        ),
        (
            "pitboss_checkpoints_total",
            "Checkpoints signed.",
            "counter",
            m.checkpoints.load(Ordering::Relaxed),
        ),
        (
            "pitboss_storage_failures_total",
            "Batches or checkpoints the database refused.",
            "counter",
            m.storage_failures.load(Ordering::Relaxed),
        ),
        (
            "pitboss_rounds_in_memory",
            "Rounds held in memory: the open ones (finished rounds are read from the store).",
            "gauge",
            m.rounds_in_memory.load(Ordering::Relaxed),
        ),
        (
            "pitboss_tables_in_memory",
            "Tables held in memory.",
            "gauge",
            m.tables_in_memory.load(Ordering::Relaxed),
        ),
        (
            "pitboss_refusals_unlogged_total",
            "Refusal entries not logged because their operator's refusal budget was used up.",
            "counter",
            m.refusals_unlogged.load(Ordering::Relaxed),
        ),
    ] {
        out.push_str(&format!(
            "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}\n"
        ));
    }
    out.push_str(
        "# HELP pitboss_throttled_total Requests refused with 429, by the limit they met.\n\
         # TYPE pitboss_throttled_total counter\n",
    );
    for (limit, n) in m.throttled.all() {
        out.push_str(&format!(
            "pitboss_throttled_total{{limit=\"{limit}\"}} {n}\n"
        ));
    }
    // 002 § 9(1): winnings not confirmed paid, and those past their due time (read from the
    // store; left out when it cannot be read now).
    let pool = state.service.pool.clone();
    let now = chrono::Utc::now();
    if let Ok(Ok((outstanding, overdue))) = web::block(move || {
        let mut conn = pool
            .get()
            .map_err(|e| crate::store::StoreError::Pool(e.to_string()))?;
        crate::service::payouts::counts(&mut conn, now)
    })
    .await
    {
        for (name, help, value) in [
            (
                "pitboss_payouts_outstanding",
                "Winnings owed by settlements and not confirmed paid.",
                outstanding,
            ),
            (
                "pitboss_payouts_overdue",
                "Winnings not confirmed paid 30 days after their evaluation (002 § 9(1)).",
                overdue,
            ),
        ] {
            out.push_str(&format!(
                "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}\n"
            ));
        }
    }
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4")
        .body(out)
}
