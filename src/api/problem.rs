//! RFC 9457 `application/problem+json` errors, each with a stable machine `code`.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;

use super::dto::ProblemDocument;

/// A refusal or error as the client receives it.
#[derive(Debug, Clone)]
pub struct Problem {
    pub status: u16,
    /// Stable machine code, e.g. `plan_not_found`; the problem `type` is `urn:pitboss:problem:<code>`.
    pub code: &'static str,
    pub title: &'static str,
    pub detail: String,
    /// The plan rule that refused the request, where one did.
    pub rule: Option<Box<RuleRef>>,
    /// `Retry-After`, in seconds (429 and 503).
    pub retry_after_s: Option<u64>,
}

/// The plan (`id@version`) and clause behind a refusal.
#[derive(Debug, Clone, Serialize)]
pub struct RuleRef {
    pub plan: String,
    pub clause: String,
}

impl Problem {
    /// The document as sent (the `Problem` schema of `openapi.json`).
    pub fn document(&self) -> ProblemDocument {
        ProblemDocument {
            problem_type: format!("urn:pitboss:problem:{}", self.code),
            title: self.title.to_string(),
            status: self.status,
            code: self.code.to_string(),
            detail: self.detail.clone(),
            plan: self.rule.as_ref().map(|r| r.plan.clone()),
            clause: self.rule.as_ref().map(|r| r.clause.clone()),
        }
    }
}

impl Serialize for Problem {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.document().serialize(s)
    }
}

impl Problem {
    pub fn new(
        status: StatusCode,
        code: &'static str,
        title: &'static str,
        detail: impl Into<String>,
    ) -> Self {
        Problem {
            status: status.as_u16(),
            code,
            title,
            detail: detail.into(),
            rule: None,
            retry_after_s: None,
        }
    }

    /// 429: a limit of the caller's was reached (see [`crate::limits`]).
    pub fn throttled(t: &crate::limits::Throttled) -> Self {
        let mut p = Problem::new(
            StatusCode::TOO_MANY_REQUESTS,
            t.code,
            "Too many requests",
            t.detail.clone(),
        );
        p.retry_after_s = Some(t.retry_after_s());
        p
    }

    /// Names the plan rule behind the refusal.
    pub fn with_rule(mut self, plan: impl Into<String>, clause: impl Into<String>) -> Self {
        self.rule = Some(Box::new(RuleRef {
            plan: plan.into(),
            clause: clause.into(),
        }));
        self
    }

    pub fn not_found(code: &'static str, detail: impl Into<String>) -> Self {
        Problem::new(StatusCode::NOT_FOUND, code, "Not found", detail)
    }

    pub fn bad_request(code: &'static str, detail: impl Into<String>) -> Self {
        Problem::new(StatusCode::BAD_REQUEST, code, "Bad request", detail)
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.detail)
    }
}

impl ResponseError for Problem {
    fn status_code(&self) -> StatusCode {
        StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    fn error_response(&self) -> HttpResponse {
        let mut b = HttpResponse::build(self.status_code());
        b.content_type("application/problem+json");
        if let Some(s) = self.retry_after_s {
            b.insert_header((actix_web::http::header::RETRY_AFTER, s.to_string()));
        }
        b.json(self)
    }
}

/// A JSON request body as `T`, or `400 malformed_json` saying what is wrong with it.
pub fn json_body<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, Problem> {
    serde_json::from_slice(body).map_err(|e| Problem::bad_request("malformed_json", e.to_string()))
}

/// Every error actix raises itself (bad path, unknown route) also leaves as a problem document.
pub fn not_found_route() -> Problem {
    Problem::not_found("no_such_route", "no such route; see /v1/plans and /healthz")
}

/// What a request no route takes gets: `405 method_not_allowed` with `Allow` when the path
/// is an operation of the API under other methods (read from the API description), else
/// `404 no_such_route`.
pub fn route_miss(method: &actix_web::http::Method, path: &str) -> HttpResponse {
    use std::sync::LazyLock;
    /// Each path template of the description with its methods, upper case.
    static ROUTES: LazyLock<Vec<(Vec<String>, Vec<String>)>> = LazyLock::new(|| {
        let doc: serde_json::Value = serde_json::from_str(super::openapi::openapi_json_text())
            .expect("the served description is JSON");
        doc["paths"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(template, item)| {
                let segments = template.split('/').map(str::to_string).collect();
                let methods = item
                    .as_object()
                    .into_iter()
                    .flat_map(|m| m.keys())
                    .map(|m| m.to_uppercase())
                    .collect();
                (segments, methods)
            })
            .collect()
    });
    let segments: Vec<&str> = path.split('/').collect();
    let allowed = ROUTES.iter().find(|(template, _)| {
        template.len() == segments.len()
            && template
                .iter()
                .zip(&segments)
                .all(|(t, s)| (t.starts_with('{') && t.ends_with('}') && !s.is_empty()) || t == s)
    });
    match allowed {
        Some((_, methods)) if !methods.iter().any(|m| m == method.as_str()) => {
            let problem = Problem::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "Method not allowed",
                format!("{path} takes {}", methods.join(", ")),
            );
            let mut response = problem.error_response();
            if let Ok(allow) = actix_web::http::header::HeaderValue::from_str(&methods.join(", ")) {
                response
                    .headers_mut()
                    .insert(actix_web::http::header::ALLOW, allow);
            }
            response
        }
        _ => not_found_route().error_response(),
    }
}

/// The service cannot answer now (storage, capacity): 503, safe to retry.
pub fn unavailable(detail: &str) -> Problem {
    let mut p = Problem::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "unavailable",
        "Service unavailable",
        detail,
    );
    p.retry_after_s = Some(1);
    p
}

/// The node should not be sent traffic now (`/readyz`): 503 `not_ready`, the reason in
/// `detail`, safe to ask again.
pub fn not_ready(detail: impl Into<String>) -> Problem {
    let mut p = Problem::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "not_ready",
        "Service unavailable",
        detail,
    );
    p.retry_after_s = Some(1);
    p
}

/// Longest request target (path and query) the service reads, in bytes; a longer one is
/// answered `414 uri_too_long`. (Request lines of 64 KiB and more never reach pitboss: the
/// HTTP parser refuses them with a bare `400` first.)
pub const MAX_URI_BYTES: usize = 8 * 1024;

/// Refuses an over-long request target before any handler or extractor reads it.
pub async fn limit_uri(
    req: actix_web::dev::ServiceRequest,
    next: actix_web::middleware::Next<impl actix_web::body::MessageBody + 'static>,
) -> Result<actix_web::dev::ServiceResponse<actix_web::body::BoxBody>, actix_web::Error> {
    let len = req.uri().path_and_query().map_or(0, |pq| pq.as_str().len());
    if len > MAX_URI_BYTES {
        let p = Problem::new(
            StatusCode::URI_TOO_LONG,
            "uri_too_long",
            "URI too long",
            format!("request targets are limited to {MAX_URI_BYTES} bytes; this one has {len}"),
        );
        return Ok(req.into_response(p.error_response()));
    }
    next.call(req).await.map(|r| r.map_into_boxed_body())
}

/// Turns any error response that is not yet a problem document (actix's own 404, 405, 413,
/// 5xx) into one, so that every error leaves as `application/problem+json`.
pub fn problemize<B>(
    res: actix_web::dev::ServiceResponse<B>,
) -> actix_web::Result<actix_web::middleware::ErrorHandlerResponse<B>> {
    problemize_limited(res, super::startup::MAX_BODY_BYTES)
}

/// [`problemize`] for a server whose request bodies are limited to `max_body_bytes`.
pub fn problemize_limited<B>(
    res: actix_web::dev::ServiceResponse<B>,
    max_body_bytes: usize,
) -> actix_web::Result<actix_web::middleware::ErrorHandlerResponse<B>> {
    use actix_web::middleware::ErrorHandlerResponse;
    // A problem document already, or a console page written for a person (`/console/`).
    let already = res
        .headers()
        .get(actix_web::http::header::CONTENT_TYPE)
        .is_some_and(|v| {
            v.as_bytes().starts_with(b"application/problem+json")
                || v.as_bytes().starts_with(b"text/html")
        });
    if already {
        return Ok(ErrorHandlerResponse::Response(res.map_into_left_body()));
    }
    let status = res.status();
    let (code, detail) = match status.as_u16() {
        404 => (
            "no_such_route",
            "no such route; see /openapi.json".to_string(),
        ),
        405 => (
            "method_not_allowed",
            "this route does not take that method".to_string(),
        ),
        413 => (
            "payload_too_large",
            format!("request bodies are limited to {max_body_bytes} bytes"),
        ),
        s if s >= 500 => (
            "internal_error",
            "the service failed to answer; nothing was recorded unless an answer said so"
                .to_string(),
        ),
        _ => ("bad_request", "the request could not be read".to_string()),
    };
    let title = status.canonical_reason().unwrap_or("Error");
    let problem = Problem::new(status, code, title, detail);
    let (req, _) = res.into_parts();
    let res =
        actix_web::dev::ServiceResponse::new(req, problem.error_response()).map_into_right_body();
    Ok(ErrorHandlerResponse::Response(res))
}
