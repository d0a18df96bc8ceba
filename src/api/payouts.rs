//! Payout deadlines (002 § 9(1)): the operator confirms each payment a settlement owes, and
//! anyone entitled lists the amounts past their due time (see [`crate::service::payouts`]).

use actix_web::{get, post, web, HttpRequest, HttpResponse};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::auth::Caller;
use super::dto::{IdempotencyKey, ProblemDocument};
use super::problem::Problem;
use super::startup::AppState;
use super::tables::{parse, run};
use crate::service::payouts::{self, PayoutDue};
use crate::service::Command;

/// A payment made.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"round": "t1.1", "player": "p1", "wallet_reference": "W-2026-000123"}))]
pub struct ConfirmPayout {
    pub round: String,
    pub player: String,
    /// The operator's wallet reference of the payment (1–128 characters).
    pub wallet_reference: String,
}

/// Confirms that a settlement's amount owed to a player was paid.
///
/// 002 § 9(1): "Provozovatel vyplátí výhru bez zbytečného odkladu, nejpozději do 30 dnů ode dne
/// jejího vyhodnocení". Logged as `payout_confirmed` with the wallet's reference (and `late`
/// when past the due time). Roles: **operator**, own rounds only.
#[utoipa::path(
    tag = "payouts",
    security(("api_key" = [])),
    params(IdempotencyKey),
    request_body = ConfirmPayout,
    responses(
        (status = 200, description = "The payment is recorded.", body = PayoutDue),
        (status = 400, description = "`malformed_json`, `bad_number` (a fraction, or a number beyond ±(2^53 − 1)), `idempotency_key_required` or `bad_idempotency_key`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: not an operator key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`payout_not_found`: the round owes the player nothing (or is another operator's).", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 409, description = "`payout_already_confirmed` (with `clause`).", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 422, description = "`bad_wallet_reference` (with `clause`) or `idempotency_key_reused`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: nothing was recorded; retry with the same Idempotency-Key.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[post("/v1/payouts/confirm")]
pub async fn confirm_payout(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    body: web::Bytes,
) -> Result<HttpResponse, Problem> {
    let b: ConfirmPayout = parse(&body)?;
    let command = Command::ConfirmPayout {
        round: b.round,
        player: b.player,
        wallet_reference: b.wallet_reference,
    };
    run(&state, &caller, &req, &body, command).await
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct AsOf {
    /// The time the due dates are compared with (default: now), RFC 3339.
    pub as_of: Option<DateTime<Utc>>,
}

/// Amounts past their due time and not confirmed paid.
#[derive(Debug, Serialize, ToSchema)]
pub struct OverduePayouts {
    pub as_of: DateTime<Utc>,
    /// "nejpozději do 30 dnů ode dne jejího vyhodnocení".
    pub clause: String,
    /// Oldest due first; at most 1 000.
    pub overdue: Vec<PayoutDue>,
}

/// Lists the winnings not confirmed paid whose due time (evaluation + 30 days, 002 § 9(1))
/// has passed.
///
/// Roles: any; an **operator** sees only its own.
#[utoipa::path(
    tag = "payouts",
    security(("api_key" = [])),
    params(AsOf),
    responses(
        (status = 200, description = "The overdue amounts.", body = OverduePayouts),
        (status = 400, description = "`malformed_query`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: the store could not be read.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[get("/v1/payouts/overdue")]
pub async fn overdue_payouts(
    state: web::Data<AppState>,
    caller: Caller,
    q: web::Query<AsOf>,
) -> Result<HttpResponse, Problem> {
    let as_of = q.as_of.unwrap_or_else(Utc::now);
    let operator = (!caller.reads_all()).then(|| caller.operator.clone().unwrap_or_default());
    // An operator's are in its log; the other roles read every log's (with several nodes,
    // also those other nodes write).
    let own = operator.as_ref().map(|op| state.log_of(op).pool.clone());
    let overdue = web::block(move || {
        let pools = match own {
            Some(pool) => vec![pool],
            None => state.every_pool()?,
        };
        let mut all = Vec::new();
        for pool in pools {
            let mut conn = pool
                .get()
                .map_err(|e| crate::store::StoreError::Pool(e.to_string()))?;
            all.extend(payouts::overdue(&mut conn, operator.as_deref(), as_of)?);
        }
        // Each log's are in this order, at most MAX_LIST of them.
        all.sort_by(|a, b| (a.due_at, &a.round).cmp(&(b.due_at, &b.round)));
        all.truncate(payouts::MAX_LIST as usize);
        Ok::<_, crate::store::StoreError>(all)
    })
    .await
    .map_err(|e| super::problem::unavailable(&e.to_string()))?
    .map_err(|e| super::problem::unavailable(&e.to_string()))?;
    Ok(HttpResponse::Ok().json(OverduePayouts {
        as_of,
        clause: payouts::CLAUSE.to_string(),
        overdue,
    }))
}
