//! Plans as regulators read them: which plans and versions are loaded, each one whole, and what
//! changed between two versions.

use actix_web::{get, web, HttpResponse};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::problem::Problem;
use super::startup::AppState;
use crate::plan::canonical::normalised;
use crate::plan::diff::{diff, Change};
use crate::plan::load::Finding;
use crate::plan::{LoadedPlan, PlanRef};

/// One line of the plan list.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanSummary {
    pub key: String,
    pub id: String,
    pub version: u32,
    pub title: String,
    pub family: String,
    pub operator: String,
    pub studio: String,
    pub effective_from: String,
    pub sha256: String,
    pub source_document: String,
    pub source_section: String,
    pub assumptions: usize,
    pub warnings: usize,
    /// The regulator's approval of this content now (`GET /v1/plan-approvals` has each).
    pub approval: crate::round::regulator::ApprovalStatus,
}

impl From<&LoadedPlan> for PlanSummary {
    fn from(p: &LoadedPlan) -> Self {
        let id = &p.plan.plan;
        PlanSummary {
            key: p.key(),
            id: id.id.to_string(),
            version: id.version,
            title: id.title.clone(),
            family: id.family.to_string(),
            operator: id.operator.clone(),
            studio: id.studio.clone(),
            effective_from: id.effective_from.to_string(),
            sha256: p.hash.clone(),
            source_document: p.plan.source.document.clone(),
            source_section: p.plan.source.section.clone(),
            assumptions: p.plan.assumptions.len(),
            warnings: p.warnings.len(),
            approval: crate::round::regulator::ApprovalStatus::None,
        }
    }
}

/// A whole plan: the normalised content, its hash, and lint's warnings.
#[derive(Debug, Serialize, ToSchema)]
pub struct PlanDocument {
    /// `id@version`.
    pub key: String,
    /// SHA-256 (hex) of the plan's RFC 8785 canonical form.
    pub sha256: String,
    /// The normalised plan: amounts in minor units, ratios as fractions, keyed lists sorted
    /// (as `pitboss plan show ID@VERSION --json` prints it).
    #[schema(value_type = crate::plan::Plan)]
    pub plan: serde_json::Value,
    pub warnings: Vec<Finding>,
}

fn with_approval(state: &AppState, p: &LoadedPlan) -> PlanSummary {
    PlanSummary {
        approval: super::approvals::status_now(state, &p.hash),
        ..PlanSummary::from(p)
    }
}

fn parse_ref(text: &str) -> Result<PlanRef, Problem> {
    text.parse().map_err(|e: crate::plan::model::PlanRefError| {
        Problem::bad_request("bad_plan_ref", e.to_string())
    })
}

fn find<'a>(state: &'a AppState, r: &PlanRef) -> Result<&'a LoadedPlan, Problem> {
    state
        .plans
        .get(r)
        .ok_or_else(|| Problem::not_found("plan_not_found", format!("no plan {r} is loaded")))
}

/// Every loaded plan and version.
///
/// With its content hash, source section and the counts of its assumptions and lint warnings.
/// No authentication: plans are public.
#[utoipa::path(
    tag = "plans",
    operation_id = "list_plans",
    responses((status = 200, description = "Every loaded plan version, by id then version.", body = Vec<PlanSummary>)),
)]
#[get("/v1/plans")]
pub async fn list(state: web::Data<AppState>) -> HttpResponse {
    let summaries: Vec<PlanSummary> = state
        .plans
        .iter()
        .map(|p| with_approval(&state, p))
        .collect();
    HttpResponse::Ok().json(summaries)
}

/// One plan, whole.
///
/// `ID` (the latest version) or `ID@VERSION`; the normalised content, its hash and lint's
/// warnings. No authentication: plans are public.
#[utoipa::path(
    tag = "plans",
    operation_id = "show_plan",
    params(("plan" = String, Path, description = "`ID` (the latest version) or `ID@VERSION`.", example = "alg-roulette@1", pattern = "^[a-z][a-z0-9-]{1,62}[a-z0-9](@0*[1-9][0-9]{0,8})?$")),
    responses(
        (status = 200, description = "The plan.", body = PlanDocument),
        (status = 400, description = "`bad_plan_ref`: not `ID` or `ID@VERSION`.", body = super::dto::ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`plan_not_found`.", body = super::dto::ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[get("/v1/plans/{plan}")]
pub async fn show(
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, Problem> {
    let r = parse_ref(&path)?;
    let p = find(&state, &r)?;
    Ok(HttpResponse::Ok().json(PlanDocument {
        key: p.key(),
        sha256: p.hash.clone(),
        plan: normalised(&p.plan),
        warnings: p.warnings.clone(),
    }))
}

/// Every loaded version of one plan id, oldest first.
///
/// No authentication: plans are public.
#[utoipa::path(
    tag = "plans",
    operation_id = "plan_versions",
    params(("id" = String, Path, description = "The plan id, without a version.", example = "alg-roulette", pattern = "^[a-z][a-z0-9-]{1,62}[a-z0-9]$")),
    responses(
        (status = 200, description = "The plan's versions, oldest first.", body = Vec<PlanSummary>),
        (status = 400, description = "`bad_plan_ref`: not a plan id, or a version was named.", body = super::dto::ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`plan_not_found`.", body = super::dto::ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[get("/v1/plans/{id}/versions")]
pub async fn versions(
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, Problem> {
    let r = parse_ref(&path)?;
    if r.version.is_some() {
        return Err(Problem::bad_request(
            "bad_plan_ref",
            "name the plan id without a version",
        ));
    }
    let summaries: Vec<PlanSummary> = state
        .plans
        .versions(&r.id)
        .map(|p| with_approval(&state, p))
        .collect();
    if summaries.is_empty() {
        return Err(Problem::not_found(
            "plan_not_found",
            format!("no plan {} is loaded", r.id),
        ));
    }
    Ok(HttpResponse::Ok().json(summaries))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DiffQuery {
    /// `ID` or `ID@VERSION`.
    #[param(
        example = "czech-blackjack@1",
        pattern = "^[a-z][a-z0-9-]{1,62}[a-z0-9](@0*[1-9][0-9]{0,8})?$"
    )]
    pub from: String,
    /// `ID` or `ID@VERSION`.
    #[param(
        example = "czech-blackjack-strict@1",
        pattern = "^[a-z][a-z0-9-]{1,62}[a-z0-9](@0*[1-9][0-9]{0,8})?$"
    )]
    pub to: String,
}

/// The fields that differ between two plans.
#[derive(Debug, Serialize, ToSchema)]
pub struct DiffDocument {
    /// `id@version`.
    pub from: String,
    /// `id@version`.
    pub to: String,
    /// In field-path order.
    pub changes: Vec<Change>,
}

/// The fields that differ between two plans.
///
/// `?from=ID@1&to=ID@2`. No authentication: plans are public.
#[utoipa::path(
    tag = "plans",
    params(DiffQuery),
    responses(
        (status = 200, description = "The changed fields.", body = DiffDocument),
        (status = 400, description = "`malformed_query` (`from` or `to` missing) or `bad_plan_ref`.", body = super::dto::ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`plan_not_found`.", body = super::dto::ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[get("/v1/plan-diff")]
pub async fn plan_diff(
    state: web::Data<AppState>,
    q: web::Query<DiffQuery>,
) -> Result<HttpResponse, Problem> {
    let a = find(&state, &parse_ref(&q.from)?)?;
    let b = find(&state, &parse_ref(&q.to)?)?;
    Ok(HttpResponse::Ok().json(DiffDocument {
        from: a.key(),
        to: b.key(),
        changes: diff(&a.plan, &b.plan),
    }))
}
