//! The witness's HTTP interface: `POST /add-checkpoint` (C2SP tlog-witness), and for the people
//! who rely on it, `GET /latest-checkpoint`, `GET /evidence`, `GET /healthz`.

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::{get, post, web, HttpResponse};
use serde::{Deserialize, Serialize};

use super::core::{Outcome, Witness};
use super::store::Evidence;
use crate::api::problem::{unavailable, Problem};

/// Most evidence rows one `GET /evidence` returns.
pub const MAX_EVIDENCE_PAGE: i64 = 100;

pub struct WitnessState {
    pub witness: Arc<Witness>,
}

fn now() -> (u64, String) {
    let t = chrono::Utc::now();
    (
        u64::try_from(t.timestamp()).unwrap_or(0),
        t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
    )
}

fn problem(status: u16, code: &'static str, detail: String) -> HttpResponse {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST);
    let title = status.canonical_reason().unwrap_or("Refused");
    actix_web::ResponseError::error_response(&Problem::new(status, code, title, detail))
}

/// Submits a checkpoint with a consistency proof from the size last cosigned; answers with the
/// witness's cosignature. See C2SP tlog-witness and audit/FORMAT.md section 9.
#[post("/add-checkpoint")]
pub async fn add_checkpoint(state: web::Data<WitnessState>, body: web::Bytes) -> HttpResponse {
    let witness = state.witness.clone();
    let (ts, ts_text) = now();
    let outcome = web::block(move || witness.add_checkpoint(&body, ts, &ts_text)).await;
    match outcome {
        Ok(Ok(Outcome::Cosigned(lines))) => HttpResponse::Ok()
            .content_type("text/plain; charset=utf-8")
            .body(lines.iter().map(|l| l.line()).collect::<String>()),
        Ok(Ok(Outcome::SizeMismatch(size))) => HttpResponse::Conflict()
            .content_type(pitboss_audit::witness::SIZE_CONTENT_TYPE)
            .body(pitboss_audit::witness::format_size_body(size)),
        Ok(Ok(Outcome::Refused {
            status,
            code,
            detail,
        })) => problem(status, code, detail),
        Ok(Err(e)) => actix_web::ResponseError::error_response(&unavailable(&e.to_string())),
        Err(e) => actix_web::ResponseError::error_response(&unavailable(&e.to_string())),
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OriginQuery {
    pub origin: String,
}

/// The last checkpoint the witness cosigned for `origin`, with its cosignature: what an auditor
/// passes to `pitboss-audit verify --trusted-checkpoint`.
#[get("/latest-checkpoint")]
pub async fn latest_checkpoint(
    state: web::Data<WitnessState>,
    q: web::Query<OriginQuery>,
) -> Result<HttpResponse, Problem> {
    let witness = state.witness.clone();
    let origin = q.into_inner().origin;
    let o = origin.clone();
    let latest = web::block(move || witness.latest(&o))
        .await
        .map_err(|e| unavailable(&e.to_string()))?
        .map_err(|e| unavailable(&e.to_string()))?;
    match latest {
        Some(c) => Ok(HttpResponse::Ok()
            .content_type("text/plain; charset=utf-8")
            .body(c.note)),
        None => Err(Problem::not_found(
            "no_checkpoint",
            format!("no checkpoint of {origin:?} has been cosigned"),
        )),
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvidenceQuery {
    pub origin: Option<String>,
    /// Rows with an id above this (default 0).
    #[serde(default)]
    pub after: i64,
    /// At most this many (default and maximum 100).
    pub limit: Option<i64>,
}

#[derive(Debug, Serialize)]
pub struct EvidencePage {
    pub evidence: Vec<Evidence>,
}

/// Conflicting checkpoints the witness refused (forks, failed proofs, rollbacks), oldest first.
#[get("/evidence")]
pub async fn evidence(
    state: web::Data<WitnessState>,
    q: web::Query<EvidenceQuery>,
) -> Result<HttpResponse, Problem> {
    let witness = state.witness.clone();
    let q = q.into_inner();
    let limit = q
        .limit
        .unwrap_or(MAX_EVIDENCE_PAGE)
        .clamp(1, MAX_EVIDENCE_PAGE);
    let rows = web::block(move || witness.store.evidence(q.origin.as_deref(), q.after, limit))
        .await
        .map_err(|e| unavailable(&e.to_string()))?
        .map_err(|e| unavailable(&e.to_string()))?;
    Ok(HttpResponse::Ok().json(EvidencePage { evidence: rows }))
}

#[derive(Debug, Serialize)]
pub struct WitnessHealth {
    pub status: &'static str,
    /// The witness's verifier key string (`<name>+<id>+<base64(0x04 ‖ key)>`).
    pub witness: String,
    /// The origins it witnesses.
    pub logs: Vec<String>,
}

#[get("/healthz")]
pub async fn healthz(state: web::Data<WitnessState>) -> HttpResponse {
    HttpResponse::Ok().json(WitnessHealth {
        status: "ok",
        witness: state.witness.cosigner.verifier().to_vkey(),
        logs: state.witness.logs.origins().map(str::to_owned).collect(),
    })
}

/// Every error leaves as a problem document, except the `409` that the spec makes a size.
pub fn problemize<B>(
    res: actix_web::dev::ServiceResponse<B>,
) -> actix_web::Result<actix_web::middleware::ErrorHandlerResponse<B>> {
    let size_body = res
        .headers()
        .get(actix_web::http::header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes() == pitboss_audit::witness::SIZE_CONTENT_TYPE.as_bytes());
    if size_body {
        return Ok(actix_web::middleware::ErrorHandlerResponse::Response(
            res.map_into_left_body(),
        ));
    }
    crate::api::problem::problemize_limited(res, pitboss_audit::witness::MAX_BODY_BYTES)
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(add_checkpoint)
        .service(latest_checkpoint)
        .service(evidence)
        .service(healthz);
}
