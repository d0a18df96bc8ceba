//! RFC 9457 `application/problem+json` errors, each with a stable machine `code`.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;

/// A refusal or error as the client receives it.
#[derive(Debug, Clone, Serialize)]
pub struct Problem {
    /// A URI naming the problem type: `urn:pitboss:problem:<code>`.
    #[serde(rename = "type")]
    pub type_uri: String,
    pub title: String,
    pub status: u16,
    /// Stable machine code, e.g. `plan_not_found`.
    pub code: &'static str,
    pub detail: String,
    /// The plan (`id@version`) whose rule refused the request, where one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    /// The clause of that plan.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clause: Option<String>,
}

impl Problem {
    pub fn new(
        status: StatusCode,
        code: &'static str,
        title: &str,
        detail: impl Into<String>,
    ) -> Self {
        Problem {
            type_uri: format!("urn:pitboss:problem:{code}"),
            title: title.to_string(),
            status: status.as_u16(),
            code,
            detail: detail.into(),
            plan: None,
            clause: None,
        }
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
        HttpResponse::build(self.status_code())
            .content_type("application/problem+json")
            .json(self)
    }
}

/// Every error actix raises itself (bad path, unknown route) also leaves as a problem document.
pub fn not_found_route() -> Problem {
    Problem::not_found("no_such_route", "no such route; see /v1/plans and /healthz")
}
