//! Key management (admin only) and the service's own metrics.

use actix_web::http::StatusCode;
use actix_web::{get, post, web, HttpResponse};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::auth::{Caller, KeyFacts, Role};
use super::dto::{NewKeyReply, ProblemDocument};
use super::problem::{json_body, unavailable, Problem};
use super::startup::AppState;
use crate::round::Event;
use crate::service::derived::NewKeyRow;
use crate::service::Command;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"role": "operator", "operator": "op1"}))]
pub struct NewKey {
    pub role: Role,
    /// Required for, and only for, an operator key (1–64 of `a-z A-Z 0-9 _ -`); `null` is
    /// the same as leaving it out.
    pub operator: Option<String>,
    /// When the key stops working (RFC 3339, in the future); none: until revoked.
    #[serde(default)]
    pub expires_at: Option<DateTime<Utc>>,
}

/// Logs key changes through the writer and, once they are durable, applies them to the key
/// ring: the answer, and every later request, sees them.
async fn commit_keys(
    state: &AppState,
    operator: &str,
    rows: Vec<NewKeyRow>,
    events: Vec<Event>,
    status: u16,
    body: serde_json::Value,
) -> HttpResponse {
    let reply = state
        .service
        .submit(
            operator,
            None,
            Command::Keys {
                events: events.clone(),
                rows: rows.clone(),
                status,
                body,
            },
        )
        .await;
    if reply.status == status {
        state.keys.apply(&rows, &events);
    }
    super::tables::respond(reply)
}

/// Creates the bootstrap admin key (configured or generated) through the log, at start.
pub async fn bootstrap_admin(state: &AppState, given: Option<&str>) -> Result<String, String> {
    let (row, event, key) = state
        .keys
        .prepare(given, Role::Admin, None, None, "service", None)
        .map_err(|e| format!("admin key: {e}"))?;
    let id = row.key_id.clone();
    let reply = commit_keys(
        state,
        "",
        vec![row],
        vec![event],
        201,
        serde_json::to_value(NewKeyReply {
            key_id: id,
            key: key.clone(),
        })
        .expect("serialises"),
    )
    .await;
    if reply.status().as_u16() == 201 {
        Ok(key)
    } else {
        Err(format!(
            "admin key: the log could not record it ({})",
            reply.status()
        ))
    }
}

fn key_not_found(id: &str) -> Problem {
    Problem::not_found("key_not_found", format!("no API key {id}"))
}

/// The key `id` if the caller may manage it: an admin any key, an operator the keys of its
/// own operator (another's is reported absent).
fn manageable(state: &AppState, caller: &Caller, id: &str) -> Result<KeyFacts, Problem> {
    caller.require(&[Role::Admin, Role::Operator])?;
    let k = state.keys.describe(id).ok_or_else(|| key_not_found(id))?;
    if caller.role == Role::Operator && k.operator.as_deref() != caller.operator.as_deref() {
        return Err(key_not_found(id));
    }
    if k.revoked {
        return Err(Problem::new(
            StatusCode::CONFLICT,
            "key_revoked",
            "Key revoked",
            format!("API key {id} is revoked already"),
        ));
    }
    Ok(k)
}

fn by(caller: &Caller) -> String {
    format!("key:{}", caller.key_id)
}

/// Creates an API key; the response is the only time its secret is shown.
///
/// Roles: **admin**. Takes no `Idempotency-Key`: each call creates a new key (a lost
/// response is recovered by creating another and revoking the lost one). The creation is
/// logged (`api_key_created`, without the secret) before the key is answered.
#[utoipa::path(
    tag = "admin",
    security(("api_key" = [])),
    request_body = NewKey,
    responses(
        (status = 201, description = "The new key, in full.", body = NewKeyReply),
        (status = 400, description = "`malformed_json`, `bad_id`, `operator_required`, `operator_not_allowed` or `bad_expiry`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed, unknown, revoked or expired API key.", body = ProblemDocument, content_type = "application/problem+json"),
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
    let b: NewKey = json_body(&body)?;
    match (b.role, &b.operator) {
        (Role::Operator, Some(op)) if op == super::logs::SERVICE_LOG => {
            return Err(Problem::bad_request(
                "bad_id",
                format!("operator id {op:?} is reserved: it names the service's log"),
            ))
        }
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
    if let Some(t) = b.expires_at.filter(|t| *t <= Utc::now()) {
        return Err(Problem::bad_request(
            "bad_expiry",
            format!("expires_at {t} is not in the future"),
        ));
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
    let (row, event, key) = state
        .keys
        .prepare(
            None,
            b.role,
            b.operator.as_deref(),
            b.expires_at,
            &by(&caller),
            None,
        )
        .map_err(|e| unavailable(&e.to_string()))?;
    let body = serde_json::to_value(NewKeyReply {
        key_id: row.key_id.clone(),
        key,
    })
    .expect("serialises");
    let operator = b.operator.clone().unwrap_or_default();
    Ok(commit_keys(&state, &operator, vec![row], vec![event], 201, body).await)
}

/// One API key as listed (never its secret).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct KeyInfo {
    pub key_id: String,
    pub role: Role,
    #[schema(required = true)]
    pub operator: Option<String>,
    pub created_at: String,
    #[schema(required = true)]
    pub expires_at: Option<String>,
    #[schema(required = true)]
    pub revoked_at: Option<String>,
    /// The key that replaced this one in a rotation.
    #[schema(required = true)]
    pub replaced_by: Option<String>,
    /// When it was last used (to the minute: usage is stored once a minute).
    #[schema(required = true)]
    pub last_used_at: Option<String>,
}

/// A page of keys.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct KeyList {
    pub keys: Vec<KeyInfo>,
    /// Pass as `after` for the next page; `null` on the last.
    #[schema(required = true)]
    pub next: Option<String>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
pub struct KeyListQuery {
    /// The `next` of the previous page.
    pub after: Option<String>,
    /// Keys per page, 1–1000 (default 100).
    pub limit: Option<u32>,
}

/// Lists API keys, by key id, without their secrets.
///
/// Roles: **admin** (every key) or **operator** (its own operator's keys).
#[utoipa::path(
    tag = "admin",
    security(("api_key" = [])),
    params(KeyListQuery),
    responses(
        (status = 200, description = "A page of keys.", body = KeyList),
        (status = 400, description = "`malformed_query` or `bad_limit`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed, unknown, revoked or expired API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: needs the role admin or operator.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: the store could not be read; retry.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[get("/v1/admin/keys")]
pub async fn list_keys(
    state: web::Data<AppState>,
    caller: Caller,
    q: web::Query<KeyListQuery>,
) -> Result<HttpResponse, Problem> {
    caller.require(&[Role::Admin, Role::Operator])?;
    let limit = q.limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return Err(Problem::bad_request(
            "bad_limit",
            format!("limit {limit} is outside 1–1000"),
        ));
    }
    let after = q.after.clone().unwrap_or_default();
    let operator = (caller.role == Role::Operator)
        .then(|| caller.operator.clone())
        .flatten();
    let pool = state.service.pool.clone();
    type Row = (
        String,
        String,
        Option<String>,
        String,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
    );
    let rows: Vec<Row> = web::block(move || {
        use crate::store::schema::api_keys;
        use diesel::prelude::*;
        let mut conn = pool
            .get()
            .map_err(|e| crate::store::StoreError::Pool(e.to_string()))?;
        let mut query = api_keys::table
            .filter(api_keys::key_id.gt(after))
            .order(api_keys::key_id.asc())
            .select((
                api_keys::key_id,
                api_keys::role,
                api_keys::operator_id,
                api_keys::created_at,
                api_keys::expires_at,
                api_keys::revoked_at,
                api_keys::replaced_by,
                api_keys::last_used_at,
            ))
            .limit(i64::from(limit) + 1)
            .into_boxed();
        if let Some(op) = operator {
            query = query.filter(api_keys::operator_id.eq(op));
        }
        Ok::<_, crate::store::StoreError>(query.load(&mut *conn)?)
    })
    .await
    .map_err(|e| unavailable(&e.to_string()))?
    .map_err(|e| unavailable(&e.to_string()))?;
    let used = state.keys.last_used();
    let more = rows.len() > limit as usize;
    let keys: Vec<KeyInfo> = rows
        .into_iter()
        .take(limit as usize)
        .map(
            |(id, role, operator, created, expires, revoked, replaced, last)| {
                // This process's own view is fresher than the store's (written once a minute).
                let last = match used.get(&id).copied().filter(|t| *t > 0) {
                    Some(t) => DateTime::<Utc>::from_timestamp(t, 0)
                        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
                    None => last,
                };
                KeyInfo {
                    role: serde_json::from_value(serde_json::Value::String(role))
                        .unwrap_or(Role::Operator),
                    key_id: id,
                    operator,
                    created_at: created,
                    expires_at: expires,
                    revoked_at: revoked,
                    replaced_by: replaced,
                    last_used_at: last,
                }
            },
        )
        .collect();
    let next = more
        .then(|| keys.last().map(|k| k.key_id.clone()))
        .flatten();
    Ok(HttpResponse::Ok().json(KeyList { keys, next }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"reason": "leaked in a support ticket"}))]
pub struct RevokeKey {
    /// Why (logged).
    pub reason: String,
}

/// `200` to a revocation.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct KeyRevoked {
    pub key_id: String,
    pub revoked: bool,
}

/// Revokes an API key: refused from the next request on; logged (`api_key_revoked`).
///
/// Roles: **admin** (any key) or **operator** (its own operator's keys, itself included).
#[utoipa::path(
    tag = "admin",
    security(("api_key" = [])),
    params(("key_id" = String, Path, description = "The key id (the 16 hex digits after `pb_`).")),
    request_body = RevokeKey,
    responses(
        (status = 200, description = "Revoked.", body = KeyRevoked),
        (status = 400, description = "`malformed_json`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed, unknown, revoked or expired API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: needs the role admin or operator.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`key_not_found`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 409, description = "`key_revoked`: revoked already.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: not recorded; retry.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[post("/v1/admin/keys/{key_id}/revoke")]
pub async fn revoke_key(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, Problem> {
    let id = path.into_inner();
    let k = manageable(&state, &caller, &id)?;
    let b: RevokeKey = json_body(&body)?;
    let event = Event::ApiKeyRevoked {
        key_id: id.clone(),
        by: by(&caller),
        reason: crate::service::refusal::truncate(&b.reason, 512),
    };
    let body = serde_json::to_value(KeyRevoked {
        key_id: id,
        revoked: true,
    })
    .expect("serialises");
    let operator = k.operator.unwrap_or_default();
    Ok(commit_keys(&state, &operator, Vec::new(), vec![event], 200, body).await)
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"overlap_s": 3600}))]
pub struct RotateKey {
    /// Seconds the old key keeps working beside the new one (0–2,592,000; default 3,600), so
    /// that clients can switch without a gap.
    #[serde(default)]
    pub overlap_s: Option<u64>,
}

/// `201` to a rotation: the new key in full (shown once) and when the old one stops.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct KeyRotated {
    pub key_id: String,
    /// The whole new key, `pb_<key_id>_<secret>`: shown this once.
    pub key: String,
    pub replaces: String,
    /// When the old key stops working.
    pub old_expires_at: DateTime<Utc>,
}

/// Rotates an API key: a new key with the same role and operator, and the old one expiring
/// after an overlap; logged (`api_key_created` with `replaces`, `api_key_expiry_set`).
///
/// Roles: **admin** (any key) or **operator** (its own operator's keys).
#[utoipa::path(
    tag = "admin",
    security(("api_key" = [])),
    params(("key_id" = String, Path, description = "The key id (the 16 hex digits after `pb_`).")),
    request_body = RotateKey,
    responses(
        (status = 201, description = "The new key, in full.", body = KeyRotated),
        (status = 400, description = "`malformed_json` or `bad_overlap`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed, unknown, revoked or expired API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: needs the role admin or operator.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`key_not_found`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 409, description = "`key_revoked`: a revoked key is not rotated.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: not recorded; retry.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[post("/v1/admin/keys/{key_id}/rotate")]
pub async fn rotate_key(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, Problem> {
    let id = path.into_inner();
    let k = manageable(&state, &caller, &id)?;
    let b: RotateKey = if body.is_empty() {
        RotateKey { overlap_s: None }
    } else {
        json_body(&body)?
    };
    let overlap = b.overlap_s.unwrap_or(3600);
    if overlap > 30 * 86_400 {
        return Err(Problem::bad_request(
            "bad_overlap",
            format!("overlap_s {overlap} is over 30 days (2,592,000 s)"),
        ));
    }
    let old_expires_at = Utc::now() + chrono::Duration::seconds(overlap as i64);
    // An earlier expiry stays.
    let old_expires_at = k
        .expires_at
        .map_or(old_expires_at, |t| t.min(old_expires_at));
    let (row, created, key) = state
        .keys
        .prepare(
            None,
            k.role,
            k.operator.as_deref(),
            k.expires_at.filter(|t| *t > old_expires_at),
            &by(&caller),
            Some(&id),
        )
        .map_err(|e| unavailable(&e.to_string()))?;
    let expiry = Event::ApiKeyExpirySet {
        key_id: id.clone(),
        previous: k.expires_at,
        expires_at: old_expires_at,
        by: by(&caller),
        reason: format!("rotated: replaced by {}", row.key_id),
    };
    let body = serde_json::to_value(KeyRotated {
        key_id: row.key_id.clone(),
        key,
        replaces: id,
        old_expires_at,
    })
    .expect("serialises");
    let operator = k.operator.unwrap_or_default();
    Ok(commit_keys(
        &state,
        &operator,
        vec![row],
        vec![created, expiry],
        201,
        body,
    )
    .await)
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
pub async fn metrics(
    state: web::Data<AppState>,
    reads: web::Data<super::audit::LogReads>,
    req: actix_web::HttpRequest,
) -> HttpResponse {
    let openmetrics = req
        .headers()
        .get(actix_web::http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("application/openmetrics-text"));
    // 002 § 9(1): winnings not confirmed paid, and those past their due time (read from the
    // store; left out when it cannot be read now).
    let now = chrono::Utc::now();
    // A standby answers 0 (`api::standby`).
    let mut gauges = vec![
        (
            "pitboss_node_writer",
            "1 on the node that writes the log (with a log per operator: the service's log), 0 \
             on a standby (or a node that writes operators' logs only)",
            state.router.as_ref().map_or(1, |r| i64::from(r.home)),
        ),
        (
            "pitboss_read_log_entries",
            "Entries in the store the audit reads are served from (with --read-database-url, the \
             replica: pitboss_log_entries minus this is its lag, in entries)",
            i64::try_from(reads.committed()).unwrap_or(i64::MAX),
        ),
    ];
    // Read from the store for the whole deployment: with several nodes, reported by the node
    // that writes the service's log only (a sum over nodes would count them again).
    let every = state.clone();
    let reports = state.router.as_ref().is_none_or(|r| r.home);
    let sums = async move {
        if !reports {
            return None;
        }
        web::block(move || {
            let mut sums = (0, 0);
            for pool in every.every_pool()? {
                let mut conn = pool
                    .get()
                    .map_err(|e| crate::store::StoreError::Pool(e.to_string()))?;
                let (o, d) = crate::service::payouts::counts(&mut conn, now)?;
                sums = (sums.0 + o, sums.1 + d);
            }
            Ok::<_, crate::store::StoreError>(sums)
        })
        .await
        .ok()?
        .ok()
    };
    if let Some((outstanding, overdue)) = sums.await {
        gauges.push((
            "pitboss_payouts_outstanding",
            "Winnings owed by settlements and not confirmed paid",
            outstanding,
        ));
        gauges.push((
            "pitboss_payouts_overdue",
            "Winnings not confirmed paid 30 days after their evaluation (002 § 9(1))",
            overdue,
        ));
    }
    // With a log per operator: each operator's log's size and readiness.
    let logs: Vec<crate::observe::LogGauges> = match &state.logs {
        None => Vec::new(),
        Some(logs) => logs
            .all()
            .into_iter()
            .map(|(log, s)| crate::observe::LogGauges {
                metrics: s.metrics.clone(),
                log,
            })
            .collect(),
    };
    let (content_type, body) = crate::observe::render(
        &state.service.metrics,
        openmetrics,
        &gauges,
        &logs,
        state.router.as_ref().map(|r| &r.forwarded),
    );
    HttpResponse::Ok().content_type(content_type).body(body)
}

/// A step of a rotation of the log's signing key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SigningKeyStage {
    /// Make a new key and announce it (`key_rotated` `begin`): checkpoints are signed by both
    /// keys from now on (the overlap).
    Begin,
    /// Retire the old key (`key_rotated` `end`): the new key signs alone.
    End,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"stage": "begin"}))]
pub struct RotateSigningKey {
    pub stage: SigningKeyStage,
}

/// `200` to a step of a signing-key rotation.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SigningKeyRotated {
    pub stage: SigningKeyStage,
    /// The key being replaced, as a verifier key string (`<origin>+<id>+<base64>`).
    pub old_key: String,
    /// Its successor, as a verifier key string: give it to the witnesses (`--log-key`) and
    /// auditors before the end.
    pub new_key: String,
    /// The seq of the `key_rotated` entry logged.
    pub seq: u64,
    /// The key `GET /v1/audit/public-key` serves after this step (SubjectPublicKeyInfo PEM): the
    /// old key after `begin`, the new one after `end`.
    pub public_key: String,
}

/// Rotates the log's signing key on the running service, in two steps with an overlap
/// (audit/FORMAT.md section 5).
///
/// `begin` makes a new Ed25519 key (written 0600 beside the signing key as
/// `signing-key.next.pem`) and logs a `key_rotated` `begin` entry naming both keys; every
/// checkpoint from then on is signed by both, the first one by the old key authorising the
/// new. `end` logs the `end` entry that retires the old key: later checkpoints are signed by
/// the new key alone, which takes the signing key's path (the old file is kept as
/// `signing-key.retired-<fingerprint>.pem`). An auditor holding the old key learns the new
/// one from the log; a witness must be given the new key (`--log-key`) before `end`. Safe to
/// retry: a second `begin` answers `rotation_open`, an `end` with nothing open
/// `no_rotation_open`. Roles: **admin**.
#[utoipa::path(
    tag = "admin",
    security(("api_key" = [])),
    request_body = RotateSigningKey,
    responses(
        (status = 200, description = "The step was logged.", body = SigningKeyRotated),
        (status = 400, description = "`malformed_json`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed, unknown, revoked or expired API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: needs the role admin.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 409, description = "`rotation_open`: `begin` while a rotation is open; `no_rotation_open`: `end` with none open; `rotation_not_ready`: the new key is not yet authorised by a checkpoint; `rotation_unsupported`: the service writes a log per operator (`--log-per-operator`), whose logs share the key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: not recorded; retry.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[post("/v1/admin/signing-key/rotate")]
pub async fn rotate_signing_key(
    state: web::Data<AppState>,
    caller: Caller,
    body: web::Bytes,
) -> Result<HttpResponse, Problem> {
    caller.require(&[Role::Admin])?;
    let b: RotateSigningKey = json_body(&body)?;
    let stage = match b.stage {
        SigningKeyStage::Begin => crate::service::signing_key::Stage::Begin,
        SigningKeyStage::End => crate::service::signing_key::Stage::End,
    };
    // The operators' logs are signed with the same key, and a rotation is logged in one log:
    // rotating it under them would leave their logs signed by a key their entries never
    // announced.
    if state.logs.is_some() {
        return Err(Problem::new(
            StatusCode::CONFLICT,
            "rotation_unsupported",
            "Refused",
            "the signing key cannot be rotated on a running service with a log per operator yet: \
             the operators' logs share the key and would not log its rotation",
        ));
    }
    match state.service.rotate_signing_key(stage).await {
        Ok(r) => Ok(HttpResponse::Ok().json(SigningKeyRotated {
            stage: b.stage,
            old_key: r.old_key,
            new_key: r.new_key,
            seq: r.seq,
            public_key: r.public_key_pem,
        })),
        Err(e) if e.status == 409 => Err(Problem::new(
            StatusCode::CONFLICT,
            e.code,
            "Refused",
            e.detail,
        )),
        Err(e) => Err(unavailable(&e.detail)),
    }
}
