//! Approved plan releases over the API (issue 20): a regulator approves a plan version by its
//! SHA-256, or posts an approval signed offline with the regulator's own key; a regulator
//! withdraws an approval; anyone with a key reads each approval and its status.

use actix_web::{get, post, web, HttpResponse};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::auth::{Caller, Role};
use super::dto::ProblemDocument;
use super::problem::{json_body, Problem};
use super::startup::AppState;
use super::tables::respond;
use crate::round::regulator::{Actor, Approval, ApprovalStatus};
use crate::service::approval::ApprovalRequest;
use crate::service::Command;

/// A regulator's approval of a plan version.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"plan": "evolution-roulette@1", "sha256": "4d3c…", "reference": "MF-2026/0412", "valid_from": "2026-12-01T00:00:00Z"}))]
pub struct ApprovePlan {
    /// `id@version`.
    pub plan: String,
    /// SHA-256 of the plan's canonical form (`pitboss plan hash PLAN`): the content approved.
    pub sha256: String,
    /// The approval's reference (the regulator's file number), unique.
    pub reference: String,
    pub valid_from: DateTime<Utc>,
    /// End of validity (exclusive); absent: until withdrawn.
    #[serde(default)]
    pub valid_until: Option<DateTime<Utc>>,
    /// The person who approves (the regulator's own id for the official), logged as the
    /// actor's `person`.
    #[serde(default)]
    pub person: Option<String>,
}

/// An approval withdrawn.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"reference": "MF-2026/0412", "reason": "licence amended"}))]
pub struct WithdrawApproval {
    pub reference: String,
    pub reason: String,
    #[serde(default)]
    pub person: Option<String>,
}

/// What a withdrawal logged.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ApprovalWithdrawn {
    pub reference: String,
    pub sha256: String,
    pub reason: String,
    pub withdrawn_by: Actor,
}

/// An approval and where it stands now.
#[derive(Debug, Serialize, ToSchema)]
pub struct ApprovalView {
    pub reference: String,
    pub plan: String,
    pub sha256: String,
    pub valid_from: DateTime<Utc>,
    #[schema(required = true)]
    pub valid_until: Option<DateTime<Utc>>,
    pub approved_by: Actor,
    pub via: String,
    #[schema(required = true)]
    pub withdrawn_by: Option<Actor>,
    pub status: ApprovalStatus,
    /// Whether a plan version with this content is loaded here.
    pub loaded: bool,
}

/// `GET /v1/plan-approvals`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Approvals {
    /// `serve --require-approval`: tables and rounds only on approved plan versions.
    pub required: bool,
    pub approvals: Vec<ApprovalView>,
}

fn person_ok(p: &Option<String>) -> Result<(), Problem> {
    match p {
        Some(p) if p.is_empty() || p.len() > 128 || p.chars().any(char::is_control) => {
            Err(Problem::bad_request(
                "malformed_json",
                "person: 1–128 characters, no control characters",
            ))
        }
        _ => Ok(()),
    }
}

fn actor(caller: &Caller, person: Option<String>) -> Actor {
    Actor {
        key: caller.key_id.clone(),
        role: caller.role.as_str().to_string(),
        person,
        signer: None,
    }
}

/// Approves a plan version by its content hash.
///
/// Logged as `plan_approved`, naming the key (and `person`). Under `serve --require-approval`
/// tables open, and rounds start, only on a plan version with an approval valid at that
/// moment. A version loaded here must have exactly the approved content; a version not
/// loaded yet may be approved ahead. Roles: **regulator**.
#[utoipa::path(
    tag = "plans",
    security(("api_key" = [])),
    request_body = ApprovePlan,
    responses(
        (status = 201, description = "The approval, as logged.", body = Approval),
        (status = 400, description = "`malformed_json`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: needs the role regulator.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 409, description = "`approval_exists`: the reference is taken.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 422, description = "`bad_plan_ref`, `bad_sha256`, `bad_reference`, `bad_validity`, `plan_hash_mismatch`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: nothing was recorded; retry.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[post("/v1/plan-approvals")]
pub async fn approve(
    state: web::Data<AppState>,
    caller: Caller,
    body: web::Bytes,
) -> Result<HttpResponse, Problem> {
    caller.require(&[Role::Regulator])?;
    let b: ApprovePlan = json_body(&body)?;
    person_ok(&b.person)?;
    let command = Command::ApprovePlan {
        request: Box::new(ApprovalRequest {
            plan: b.plan,
            sha256: b.sha256,
            reference: b.reference,
            valid_from: b.valid_from,
            valid_until: b.valid_until,
        }),
        actor: Box::new(actor(&caller, b.person)),
    };
    Ok(respond(state.service.submit("", None, command).await))
}

/// Records an approval signed offline: a C2SP signed note over the approval's lines (`pitboss
/// plan approve` writes it), signed with a regulator's own Ed25519 key.
///
/// The body is the note (`text/plain`). It is checked against the regulator keys the service
/// is configured with (`serve --regulator-key`) and logged whole in the `plan_approved`
/// entry, so anyone can check the signature again. Roles: **regulator**, **admin** (an
/// operator's administrator may post the regulator's note; the signature is the authority).
#[utoipa::path(
    tag = "plans",
    security(("api_key" = [])),
    request_body(content = String, content_type = "text/plain", description = "The signed note."),
    responses(
        (status = 201, description = "The approval, as logged.", body = Approval),
        (status = 400, description = "`malformed_note`: not UTF-8 text.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: needs the role regulator or admin.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 409, description = "`approval_exists`: the reference is taken.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 422, description = "`bad_approval_note`, `approval_signature_unknown` (no configured regulator key signed it), `bad_plan_ref`, `bad_sha256`, `bad_reference`, `bad_validity`, `plan_hash_mismatch`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: nothing was recorded; retry.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[post("/v1/plan-approvals/note")]
pub async fn approve_note(
    state: web::Data<AppState>,
    caller: Caller,
    body: web::Bytes,
) -> Result<HttpResponse, Problem> {
    caller.require(&[Role::Regulator, Role::Admin])?;
    let note = std::str::from_utf8(&body)
        .map_err(|_| Problem::bad_request("malformed_note", "the note must be UTF-8 text"))?;
    let command = Command::ApprovePlanNote {
        note: note.to_string(),
        actor: Box::new(actor(&caller, None)),
    };
    Ok(respond(state.service.submit("", None, command).await))
}

/// Withdraws an approval.
///
/// Logged as `plan_approval_withdrawn`, naming the key (and `person`) and the reason. Under
/// `serve --require-approval` no new table or round starts on that plan version (unless
/// another approval is valid); running rounds finish. Roles: **regulator**.
#[utoipa::path(
    tag = "plans",
    security(("api_key" = [])),
    request_body = WithdrawApproval,
    responses(
        (status = 200, description = "The withdrawal, as logged.", body = ApprovalWithdrawn),
        (status = 400, description = "`malformed_json`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: needs the role regulator.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`approval_not_found`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 409, description = "`approval_withdrawn`: already withdrawn.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 422, description = "`bad_reason`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: nothing was recorded; retry.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[post("/v1/plan-approvals/withdrawals")]
pub async fn withdraw(
    state: web::Data<AppState>,
    caller: Caller,
    body: web::Bytes,
) -> Result<HttpResponse, Problem> {
    caller.require(&[Role::Regulator])?;
    let b: WithdrawApproval = json_body(&body)?;
    person_ok(&b.person)?;
    let command = Command::WithdrawApproval {
        reference: b.reference,
        reason: b.reason,
        actor: Box::new(actor(&caller, b.person)),
    };
    Ok(respond(state.service.submit("", None, command).await))
}

/// The approval status of a plan content now (for plan lists).
pub fn status_now(state: &AppState, sha256: &str) -> ApprovalStatus {
    let s = state.service.state.read().expect("state lock");
    crate::round::regulator::status_of(s.approvals.values(), sha256, Utc::now()).0
}

/// Every approval logged, with its status now.
///
/// Roles: any key.
#[utoipa::path(
    tag = "plans",
    operation_id = "list_plan_approvals",
    security(("api_key" = [])),
    responses(
        (status = 200, description = "Every approval, by reference.", body = Approvals),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[get("/v1/plan-approvals")]
pub async fn list(state: web::Data<AppState>, _caller: Caller) -> HttpResponse {
    let now = Utc::now();
    let approvals: Vec<Approval> = state
        .service
        .state
        .read()
        .expect("state lock")
        .approvals
        .values()
        .cloned()
        .collect();
    let views = approvals
        .into_iter()
        .map(|a| ApprovalView {
            status: a.status_at(now),
            loaded: state.plans.iter().any(|p| p.hash == a.sha256),
            reference: a.reference,
            plan: a.plan,
            sha256: a.sha256,
            valid_from: a.valid_from,
            valid_until: a.valid_until,
            approved_by: a.approved_by,
            via: a.via,
            withdrawn_by: a.withdrawn_by,
        })
        .collect();
    HttpResponse::Ok().json(Approvals {
        required: state.service.require_approval,
        approvals: views,
    })
}
