//! The audit log as auditors and regulators read it: entries, checkpoints, inclusion proofs and
//! the JSONL export that `pitboss-audit verify` checks offline.

use actix_web::{get, post, web, HttpResponse};
use pitboss_audit::export::{ExportHeader, ExportWriter};
use serde::Deserialize;
use utoipa::IntoParams;

use super::auth::{Caller, Role};
use super::dto::{
    AuditEntries, CheckpointSigned, ConsistencyProofDocument, InclusionProofDocument, LoggedEntry,
    ProblemDocument,
};
use super::problem::{unavailable, Problem};
use super::startup::AppState;
use crate::service::read;

const READERS: &[Role] = &[Role::Auditor, Role::Regulator, Role::Admin];

/// Most entries one page returns.
pub const MAX_PAGE: i64 = 10_000;

/// The largest sequence number of the log format (audit/FORMAT.md §1.1).
const MAX_SEQ: u64 = (1 << 53) - 1;

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct Since {
    /// The first sequence number wanted (default 0); sequence numbers stop at 2^53 − 1
    /// (audit/FORMAT.md §1.1).
    #[serde(default)]
    #[param(maximum = 9_007_199_254_740_991_u64)]
    pub since: u64,
    /// At most this many entries, 1–10 000 (default 10 000).
    #[param(minimum = 1, maximum = 10000)]
    pub limit: Option<i64>,
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, crate::store::StoreError> + Send + 'static,
) -> Result<T, Problem> {
    web::block(f)
        .await
        .map_err(|e| unavailable(&e.to_string()))?
        .map_err(|e| unavailable(&e.to_string()))
}

/// Entries with `seq ≥ since`, at most `limit` (default and maximum 10 000).
///
/// Roles: **auditor**, **regulator**, **admin**.
#[utoipa::path(
    tag = "audit",
    operation_id = "audit_entries",
    security(("api_key" = [])),
    params(Since),
    responses(
        (status = 200, description = "A page of entries, in order.", body = AuditEntries),
        (status = 400, description = "`malformed_query`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: needs the role auditor, regulator or admin.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: the log could not be read or signed now; retry.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[get("/v1/audit/entries")]
pub async fn entries(
    state: web::Data<AppState>,
    caller: Caller,
    q: web::Query<Since>,
) -> Result<HttpResponse, Problem> {
    caller.require(READERS)?;
    let limit = q.limit.unwrap_or(MAX_PAGE);
    if !(1..=MAX_PAGE).contains(&limit) {
        return Err(Problem::bad_request(
            "malformed_query",
            format!("limit: {limit} is not 1–{MAX_PAGE}"),
        ));
    }
    let pool = state.service.pool.clone();
    let since = q.since;
    // The store reads sequence numbers as i64: a larger `since` would wrap to the log's start.
    if since > MAX_SEQ {
        return Err(Problem::bad_request(
            "malformed_query",
            format!("since: {since} is beyond the largest sequence number, {MAX_SEQ}"),
        ));
    }
    let rows = blocking(move || read::entries_since(&pool, since, limit)).await?;
    let entries: Vec<LoggedEntry> = rows.iter().map(LoggedEntry::from_row).collect();
    Ok(HttpResponse::Ok().json(AuditEntries { since, entries }))
}

/// The latest signed checkpoint, as note text (`text/plain`).
///
/// A C2SP signed note: origin, tree size, root hash, then the Ed25519 signature lines
/// (`audit/FORMAT.md`). Roles: **auditor**, **regulator**, **admin**.
#[utoipa::path(
    tag = "audit",
    operation_id = "latest_checkpoint",
    security(("api_key" = [])),
    responses(
        (status = 200, description = "The signed checkpoint note.", body = String, content_type = "text/plain; charset=utf-8"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: needs the role auditor, regulator or admin.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`no_checkpoint`: none signed yet.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: the log could not be read or signed now; retry.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[get("/v1/audit/checkpoint")]
pub async fn checkpoint(
    state: web::Data<AppState>,
    caller: Caller,
) -> Result<HttpResponse, Problem> {
    caller.require(READERS)?;
    let pool = state.service.pool.clone();
    match blocking(move || read::latest_checkpoint(&pool)).await? {
        Some(cp) => Ok(HttpResponse::Ok()
            .content_type("text/plain; charset=utf-8")
            .body(cp.to_text())),
        None => Err(Problem::not_found(
            "no_checkpoint",
            "no checkpoint has been signed yet",
        )),
    }
}

/// Signs a checkpoint of everything logged so far, now.
///
/// Safe to repeat: nothing is signed when nothing new was logged; it takes no body and no
/// `Idempotency-Key`. Roles: **auditor**, **regulator**, **admin**.
#[utoipa::path(
    tag = "audit",
    security(("api_key" = [])),
    responses(
        (status = 200, description = "The size of the tree the latest checkpoint covers.", body = CheckpointSigned),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: needs the role auditor, regulator or admin.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: the log could not be read or signed now; retry.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[post("/v1/audit/checkpoint")]
pub async fn checkpoint_now(
    state: web::Data<AppState>,
    caller: Caller,
) -> Result<HttpResponse, Problem> {
    caller.require(READERS)?;
    let size = state
        .service
        .checkpoint_now()
        .await
        .map_err(|e| unavailable(&e))?;
    Ok(HttpResponse::Ok().json(CheckpointSigned { tree_size: size }))
}

/// A self-contained inclusion proof of entry `seq` against the latest checkpoint, in the
/// format `pitboss-audit check-proof` reads.
///
/// Signs a checkpoint first if entries are pending. Roles: **auditor**, **regulator**,
/// **admin**.
#[utoipa::path(
    tag = "audit",
    operation_id = "inclusion_proof",
    security(("api_key" = [])),
    params(("seq" = u64, Path, description = "The entry's sequence number (its leaf index).")),
    responses(
        (status = 200, description = "The proof file.", body = InclusionProofDocument),
        (status = 400, description = "`malformed_path`: `seq` is not a number.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: needs the role auditor, regulator or admin.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`entry_not_found`, `no_checkpoint` or `entry_not_covered`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: the log could not be read or signed now; retry.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[get("/v1/audit/proof/{seq}")]
pub async fn proof(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<u64>,
) -> Result<HttpResponse, Problem> {
    caller.require(READERS)?;
    let seq = path.into_inner();
    state
        .service
        .checkpoint_now()
        .await
        .map_err(|e| unavailable(&e))?;
    let pool = state.service.pool.clone();
    // The proof is made from the stored tree's tiles: O(log n) rows, nothing held in memory.
    let file = blocking(move || {
        let Some(entry) = read::entry(&pool, seq)? else {
            return Ok(Err("entry_not_found"));
        };
        let Some(cp) = read::latest_checkpoint(&pool)? else {
            return Ok(Err("no_checkpoint"));
        };
        if seq >= cp.checkpoint.size {
            return Ok(Ok(None));
        }
        let mut conn = pool
            .get()
            .map_err(|e| crate::store::StoreError::Pool(e.to_string()))?;
        let src = crate::store::tiles::TileSource::over(&mut conn);
        pitboss_audit::proof::make_proof(&src, &entry, seq, &cp)
            .map(|f| Ok(Some(f)))
            .map_err(|e| crate::store::StoreError::Corrupt(e.to_string()))
    })
    .await?;
    match file {
        Ok(Some(file)) => Ok(HttpResponse::Ok().json(file)),
        Ok(None) => Err(Problem::not_found(
            "entry_not_covered",
            format!("entry {seq} is not yet covered by a checkpoint"),
        )),
        Err("entry_not_found") => Err(Problem::not_found(
            "entry_not_found",
            format!("no entry {seq}"),
        )),
        Err(_) => Err(Problem::not_found(
            "no_checkpoint",
            "no checkpoint has been signed yet",
        )),
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ConsistencyRange {
    /// The older tree size (of a checkpoint you hold).
    pub from: u64,
    /// The newer tree size (of a later checkpoint, e.g. `GET /v1/audit/checkpoint`'s).
    pub to: u64,
}

/// An RFC 6962 consistency proof that the log's tree of `from` entries is a prefix of its tree
/// of `to` entries, in the format `pitboss-audit consistency --proof` reads.
///
/// Check it against the two signed checkpoints of those sizes (audit/FORMAT.md section 8): it
/// shows the newer checkpoint extends the older one, so nothing the older one covers was
/// changed or dropped. Roles: **auditor**, **regulator**, **admin**.
#[utoipa::path(
    tag = "audit",
    operation_id = "consistency_proof",
    security(("api_key" = [])),
    params(ConsistencyRange),
    responses(
        (status = 200, description = "The proof file.", body = ConsistencyProofDocument),
        (status = 400, description = "`malformed_query`, or `bad_range`: `from` is above `to`.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: needs the role auditor, regulator or admin.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 404, description = "`beyond_log`: `to` is above the number of entries logged.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: the log could not be read now; retry.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[get("/v1/audit/consistency")]
pub async fn consistency(
    state: web::Data<AppState>,
    caller: Caller,
    q: web::Query<ConsistencyRange>,
) -> Result<HttpResponse, Problem> {
    caller.require(READERS)?;
    let (from, to) = (q.from, q.to);
    if from > to {
        return Err(Problem::bad_request(
            "bad_range",
            format!("from ({from}) is above to ({to})"),
        ));
    }
    // Entries are counted once committed, and their tiles are committed with them.
    let size = state
        .service
        .metrics
        .log_entries
        .load(std::sync::atomic::Ordering::Relaxed);
    if to > size {
        return Err(Problem::not_found(
            "beyond_log",
            format!("the log has {size} entries; no tree of size {to} yet"),
        ));
    }
    let pool = state.service.pool.clone();
    // Read from the stored tree's tiles: O(log n) rows.
    let hashes = blocking(move || {
        let mut conn = pool
            .get()
            .map_err(|e| crate::store::StoreError::Pool(e.to_string()))?;
        let src = crate::store::tiles::TileSource::over(&mut conn);
        pitboss_audit::merkle::consistency_proof(&src, from, to)
            .map_err(|e| crate::store::StoreError::Corrupt(e.to_string()))
    })
    .await?;
    Ok(HttpResponse::Ok().json(ConsistencyProofDocument {
        format: pitboss_audit::consistency::CONSISTENCY_FORMAT.to_owned(),
        old_size: from,
        new_size: to,
        proof: hashes.iter().map(|h| h.to_hex()).collect(),
    }))
}

/// The whole log as JSONL: header, entries, and the signed checkpoints in place, ending with
/// a checkpoint of the full size (signed for the export).
///
/// One JSON document per line (`audit/FORMAT.md`); `pitboss-audit verify` checks it offline
/// with the public key alone. Roles: **auditor**, **regulator**, **admin**.
#[utoipa::path(
    tag = "audit",
    operation_id = "export_log",
    security(("api_key" = [])),
    responses(
        (status = 200, description = "The export, JSONL.", body = String, content_type = "application/jsonl"),
        (status = 401, description = "`unauthorized`: no, malformed or unknown API key.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: needs the role auditor, regulator or admin.", body = ProblemDocument, content_type = "application/problem+json"),
        (status = 503, description = "`unavailable`: the log could not be read or signed now; retry.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[get("/v1/audit/export")]
pub async fn export(state: web::Data<AppState>, caller: Caller) -> Result<HttpResponse, Problem> {
    caller.require(READERS)?;
    state
        .service
        .checkpoint_now()
        .await
        .map_err(|e| unavailable(&e))?;
    let pool = state.service.pool.clone();
    let header = ExportHeader::new(
        &state.service.origin,
        state
            .service
            .key_validity
            .read()
            .expect("keys lock")
            .clone(),
    );
    let bytes = blocking(move || {
        let cps = read::checkpoints(&pool)?;
        let size = cps.last().map_or(0, |c| c.checkpoint.size);
        let mut w = ExportWriter::new(Vec::new(), &header)
            .map_err(|e| crate::store::StoreError::Corrupt(e.to_string()))?;
        let mut cps = cps.into_iter().peekable();
        let io = |e: std::io::Error| crate::store::StoreError::Corrupt(e.to_string());
        while let Some(cp) = cps.next_if(|c| c.checkpoint.size == 0) {
            w.checkpoint(&cp).map_err(io)?;
        }
        let mut next = 0u64;
        while next < size {
            let page = read::entries_since(&pool, next, MAX_PAGE)?;
            if page.is_empty() {
                break;
            }
            for (seq, canonical) in page.into_iter().take_while(|(s, _)| *s < size) {
                w.entry(&canonical).map_err(io)?;
                next = seq + 1;
                while let Some(cp) = cps.next_if(|c| c.checkpoint.size == next) {
                    w.checkpoint(&cp).map_err(io)?;
                }
            }
        }
        w.finish().map_err(io)
    })
    .await?;
    Ok(HttpResponse::Ok()
        .content_type("application/jsonl")
        .body(bytes))
}

/// The log's current signing key: the Ed25519 public key as SubjectPublicKeyInfo PEM
/// (`-----BEGIN PUBLIC KEY-----`, RFC 8410), the file `pitboss-audit verify --public-key` takes.
///
/// Only the key, nothing else: no private key, no validity. Its signed-note name is the log's
/// origin (the first line of `GET /v1/audit/checkpoint`). Which sizes each key may sign, across
/// rotations, is in the export's header and proved by the log's `key_rotated` entries; an auditor
/// holding this key from before a rotation learns the later keys from the log itself. No
/// authentication: anyone may verify the log.
#[utoipa::path(
    tag = "audit",
    responses(
        (status = 200, description = "The log's current Ed25519 signing key as a SubjectPublicKeyInfo PEM block (RFC 8410), and nothing else.", body = String, content_type = "application/x-pem-file"),
    ),
)]
#[get("/v1/audit/public-key")]
pub async fn public_key(state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/x-pem-file")
        .body(state.service.public_key_pem.clone())
}
