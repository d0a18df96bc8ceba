//! The OpenAPI 3.1 description of the HTTP API, built by utoipa from the handlers'
//! `#[utoipa::path]` annotations and the body types of [`super::dto`]. Served at
//! `GET /openapi.json`, printed by `pitboss openapi`, committed as `openapi/openapi.json` (a
//! test keeps the three equal). `GET /docs` is an interactive page (Swagger UI) that works
//! offline: its assets are vendored under `static/docs/` and compiled into the binary.

use std::sync::LazyLock;

use actix_web::{get, web, HttpResponse};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use super::problem::{not_found_route, Problem};
use super::{admin, approvals, audit, dto, exceptions, plans, startup, tables};

const DESCRIPTION: &str = "\
pitboss enforces the game plan a regulator approved on every bet and dealer event an \
operator's backend sends, resolves rounds, and keeps a hash-chained, Ed25519-signed audit log \
that an auditor verifies offline with the public key alone.

**Authentication.** `Authorization: Bearer pb_<key id>_<secret>` (16 and 64 hex digits). Keys \
have one role: `operator` (opens tables, places bets, posts dealer events, reads its own \
tables only), `auditor` and `regulator` (read everything, including the audit log), `admin` \
(creates keys, reads everything). Each operation says which roles may call it; plans, \
`/healthz`, `/metrics`, the log's public key and these docs need no key.

**Idempotency.** Every operator command (each `POST` under `/v1/tables` and `/v1/rounds`) \
carries an `Idempotency-Key` header: a retry with the same key and the same request returns \
the first answer and changes nothing; the same key with another request is \
refused (`idempotency_key_reused`). After a timeout or a `503`, retry with the same key.

**Errors.** Every error is an RFC 9457 `application/problem+json` document with a stable \
machine `code`; a refusal by a rule of the plan also names the plan (`id@version`) and the \
`clause`. A bet refused inside a batch is reported in that bet's result, not as an error.

**Money.** Amounts are integers in minor units of the plan's currency (`stake_minor`: haléře, \
10000 is 100,00 Kč); no amount is ever a floating-point number.";

/// The API description.
#[derive(OpenApi)]
#[openapi(
    info(title = "pitboss", description = DESCRIPTION),
    paths(
        startup::healthz,
        startup::readyz,
        admin::metrics,
        openapi_json,
        docs_page,
        docs_asset,
        plans::list,
        plans::show,
        plans::versions,
        plans::plan_diff,
        approvals::list,
        approvals::approve,
        approvals::approve_note,
        approvals::withdraw,
        tables::open_table,
        tables::get_table,
        tables::close_table,
        tables::player_connection,
        tables::open_round,
        tables::get_round,
        tables::place_bets,
        tables::post_event,
        tables::void_round,
        exceptions::pause,
        exceptions::resume,
        tables::withdraw_bets,
        super::payouts::confirm_payout,
        super::payouts::overdue_payouts,
        super::players::exclude,
        super::players::lift_exclusion,
        super::players::set_limits,
        super::players::report_usage,
        super::players::get_player,
        tables::post_decisions,
        tables::shoe,
        tables::table_action,
        tables::get_settlement,
        tables::recall,
        audit::entries,
        audit::daily_summary,
        audit::checkpoint,
        audit::checkpoint_now,
        audit::proof,
        audit::consistency,
        audit::export,
        audit::public_key,
        super::listings::list_tables,
        super::listings::list_rounds,
        admin::create_key,
        admin::list_keys,
        admin::revoke_key,
        admin::rotate_key,
        admin::rotate_signing_key,
    ),
    components(schemas(
        dto::ProblemDocument,
        dto::InsideBet,
        dto::OutsideBet,
        dto::AnnouncedBet,
        dto::NeighboursBet,
        dto::CompleteBet,
    )),
    modifiers(&ApiKeyScheme, &CommonResponses),
    tags(
        (name = "plans", description = "Game plans as regulators read them: every loaded version, whole, and what changed between versions. Public."),
        (name = "tables", description = "Operators open and close tables bound to a plan version, and report players' connections."),
        (name = "rounds", description = "Rounds: bets, dealer events (close betting, spin, RNG draw), voids, settlements and the recall of a round's log."),
        (name = "payouts", description = "Winnings owed by settlements and their due time (002 § 9(1): at the latest 30 days after the evaluation): the operator confirms each payment; overdue amounts are listed."),
        (name = "players", description = "The operator's player register (002 § 6(2), (3)): exclusions (the national register, self-exclusion) and self-limits (stake per bet; stakes and net loss per day and month, Europe/Prague), what the player used in the operator's other games, and what counts toward the limits. A bet of an excluded player, or over a limit, is refused `player_excluded` or `limit_exceeded` with the clause."),
        (name = "audit", description = "The audit log: entries, signed checkpoints, inclusion and consistency proofs, the export `pitboss-audit verify` checks offline, and the public key."),
        (name = "admin", description = "API keys."),
        (name = "ops", description = "Liveness, metrics, and this documentation."),
    ),
)]
pub struct ApiDoc;

/// The bearer API key scheme that operations name as `api_key`.
struct ApiKeyScheme;

impl Modify for ApiKeyScheme {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "api_key",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("pb_<id>_<secret>")
                    .description(Some(
                        "An API key, `pb_<16 hex key id>_<64 hex secret>`, created by an admin \
                         (`POST /v1/admin/keys`); only its hash is stored.",
                    ))
                    .build(),
            ),
        );
    }
}

/// The answers every operation of a kind can give, whatever its handler: written once here
/// rather than in each annotation. `414 uri_too_long` (every operation), `413
/// payload_too_large` (every operation with a body), `429` (every operation that takes a
/// key: its rate limits and quotas), and `Retry-After` on every 429 and 503.
struct CommonResponses;

impl Modify for CommonResponses {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::header::HeaderBuilder;
        use utoipa::openapi::path::Operation;
        use utoipa::openapi::{ContentBuilder, Ref, RefOr, Response, ResponseBuilder, Type};
        let retry_after = || {
            HeaderBuilder::new()
                .schema(
                    utoipa::openapi::ObjectBuilder::new()
                        .schema_type(Type::Integer)
                        .minimum(Some(1)),
                )
                .description(Some("Seconds to wait before retrying."))
                .build()
        };
        let problem = |description: &str, retry: bool| -> Response {
            let mut b = ResponseBuilder::new().description(description).content(
                "application/problem+json",
                ContentBuilder::new()
                    .schema(Some(Ref::from_schema_name("Problem")))
                    .build(),
            );
            if retry {
                b = b.header("Retry-After", retry_after());
            }
            b.build()
        };
        let add = |op: &mut Operation| {
            let r = &mut op.responses.responses;
            r.entry("414".into()).or_insert_with(|| {
                RefOr::T(problem(
                    "`uri_too_long`: the request target is longer than 8 KiB.",
                    false,
                ))
            });
            if op.request_body.is_some() {
                r.entry("413".into()).or_insert_with(|| {
                    RefOr::T(problem(
                        "`payload_too_large`: the body is longer than 256 KiB.",
                        false,
                    ))
                });
            }
            let keyed = op.security.as_ref().is_some_and(|s| !s.is_empty());
            if keyed {
                r.entry("429".into()).or_insert_with(|| {
                    RefOr::T(problem(
                        "A limit was reached; nothing was recorded. `rate_limited` (the key's or the operator's requests per second), `too_many_failed_authentications` (from this address), `quota_exceeded` (open tables, keys), `refusal_budget_exceeded` (the operator's refused requests filled its share of the log). Retry after `Retry-After` seconds (with the same Idempotency-Key).",
                        true,
                    ))
                });
            }
            if let Some(RefOr::T(resp)) = r.get_mut("503") {
                resp.headers
                    .entry("Retry-After".into())
                    .or_insert_with(retry_after);
            }
        };
        for item in openapi.paths.paths.values_mut() {
            for op in [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
                &mut item.patch,
            ]
            .into_iter()
            .flatten()
            {
                add(op);
            }
        }
    }
}

/// The finished document: what utoipa derives from the annotations, completed by
/// [`super::shape::finish`] (engine schemas, tagged unions, error examples).
pub fn document() -> serde_json::Value {
    let mut doc = serde_json::to_value(ApiDoc::openapi())
        .expect("the OpenAPI document is plain data and serialises");
    super::shape::finish(&mut doc);
    doc
}

/// The document as served and committed: pretty JSON with a final newline.
pub fn openapi_json_text() -> &'static str {
    static TEXT: LazyLock<String> = LazyLock::new(|| {
        let mut text = serde_json::to_string_pretty(&document())
            .expect("the OpenAPI document is plain data and serialises");
        text.push('\n');
        text
    });
    &TEXT
}

/// This document: the OpenAPI 3.1 description of the API.
///
/// The same bytes as `pitboss openapi` prints and `openapi/openapi.json` holds. No
/// authentication.
#[utoipa::path(
    tag = "ops",
    responses((status = 200, description = "The OpenAPI document.", body = super::schemas::OpenApiDocument, content_type = "application/json")),
)]
#[get("/openapi.json")]
pub async fn openapi_json() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .body(openapi_json_text())
}

/// The page refers to nothing outside this service; the policy makes the browser hold it to
/// that (Swagger UI styles inline and draws its icons from `data:` URLs).
const DOCS_CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
                        img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'";

/// Interactive API documentation (Swagger UI), served from the binary: works offline.
///
/// No authentication; to try an operation, authorise with an API key.
#[utoipa::path(
    tag = "ops",
    responses((status = 200, description = "The docs page.", body = String, content_type = "text/html; charset=utf-8")),
)]
#[get("/docs")]
pub async fn docs_page() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .insert_header(("Content-Security-Policy", DOCS_CSP))
        .body(include_str!("../../static/docs/index.html"))
}

/// The files the docs page loads: (name, content type, bytes). Swagger UI's files are
/// swagger-ui-dist as published (see `static/docs/README.md`).
pub const DOCS_ASSETS: &[(&str, &str, &[u8])] = &[
    (
        "swagger-ui-bundle.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../static/docs/swagger-ui-bundle.js"),
    ),
    (
        "swagger-ui.css",
        "text/css; charset=utf-8",
        include_bytes!("../../static/docs/swagger-ui.css"),
    ),
    (
        "init.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../static/docs/init.js"),
    ),
    (
        "LICENSE",
        "text/plain; charset=utf-8",
        include_bytes!("../../static/docs/LICENSE"),
    ),
];

/// A file of the docs page.
///
/// No authentication.
#[utoipa::path(
    tag = "ops",
    params(("file" = String, Path, description = "The file's name.", example = "swagger-ui-bundle.js")),
    responses(
        (status = 200, description = "The file, with its content type.", content(
            (String = "text/javascript; charset=utf-8"),
            (String = "text/css; charset=utf-8"),
            (String = "text/plain; charset=utf-8"),
        )),
        (status = 404, description = "`no_such_route`: no such file.", body = dto::ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[get("/docs/{file}")]
pub async fn docs_asset(path: web::Path<String>) -> Result<HttpResponse, Problem> {
    let (_, content_type, bytes) = DOCS_ASSETS
        .iter()
        .find(|(name, _, _)| *name == path.as_str())
        .ok_or_else(not_found_route)?;
    Ok(HttpResponse::Ok()
        .content_type(*content_type)
        .insert_header(("X-Content-Type-Options", "nosniff"))
        .body(*bytes))
}
