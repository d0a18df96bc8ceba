//! The console: read-only HTML pages for regulators and auditors under `/console/`.
//!
//! Server-rendered with `maud` (compile-time templates, escaped by default); one stylesheet
//! compiled in (`static/console/console.css`); no JavaScript at all, so it works offline, in
//! any browser, and prints. Only regulator and auditor keys sign in ([`auth`]).
//!
//! One file per group of pages: [`sign_in`] (sign-in and sign-out), [`plans`] (plans, a
//! plan, versions, the diff), [`sources`] (the source documents), [`tables`] (tables,
//! rounds, inclusion proofs), [`log`] (the audit log, checkpoints, entries, significant
//! events). Everything about tables, rounds and the log is read through [`data`] alone; the
//! returns to player come from [`rtp`] (computed in the background, stored).
//!
//! **Not part of the API.** These routes are HTML for people, not in `openapi.json` (its
//! test excludes `/console/` explicitly). Their errors are HTML pages, not problem documents.

pub mod auth;
pub mod data;
pub mod layout;
pub mod log;
pub mod plans;
mod plot;
pub mod rtp;
pub mod sign_in;
pub mod sources;
pub mod tables;

use std::path::Path;
use std::sync::Arc;

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{get, web, HttpResponse, ResponseError};
use maud::{html, Markup};

use self::auth::{Sessions, Viewer};
use self::layout::{page, Section};
use crate::api::startup::AppState;
use crate::plan::PlanSet;
use crate::store::{DatabaseUrl, StoreError};

/// The stylesheet, compiled in.
pub const CSS: &str = include_str!("../../static/console/console.css");

/// The Content-Security-Policy of every console response: nothing but this origin's
/// stylesheet, no script at all, forms only to this origin, never framed.
pub const CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self' data:; \
     form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The console's own state beside the service's.
pub struct Console {
    pub sessions: Sessions,
    pub sources: sources::Sources,
    pub rtp: Arc<rtp::RtpReports>,
    /// Cookies get `Secure` even over plain HTTP (the service sits behind a TLS proxy).
    pub secure_cookies: bool,
}

impl Console {
    /// The console for `plans`; starts the background computation of returns to player.
    pub fn start(
        plans_dir: &Path,
        plans: Arc<PlanSet>,
        url: &DatabaseUrl,
        rtp_rounds: u64,
        secure_cookies: bool,
    ) -> std::io::Result<Console> {
        let rtp = Arc::new(rtp::RtpReports::new(&plans, rtp_rounds));
        rtp.spawn(plans.clone(), url.clone())?;
        Ok(Console {
            sessions: Sessions::default(),
            sources: sources::Sources::load(plans_dir, &plans),
            rtp,
            secure_cookies,
        })
    }
}

/// Why a console page is not shown.
#[derive(Debug, thiserror::Error)]
pub enum ConsoleError {
    #[error("sign in first")]
    NotSignedIn,
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    Unavailable(String),
}

impl From<StoreError> for ConsoleError {
    fn from(e: StoreError) -> Self {
        ConsoleError::Unavailable(e.to_string())
    }
}

impl ResponseError for ConsoleError {
    fn status_code(&self) -> StatusCode {
        match self {
            ConsoleError::NotSignedIn => StatusCode::SEE_OTHER,
            ConsoleError::Forbidden(_) => StatusCode::FORBIDDEN,
            ConsoleError::NotFound(_) => StatusCode::NOT_FOUND,
            ConsoleError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ConsoleError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    fn error_response(&self) -> HttpResponse {
        if let ConsoleError::NotSignedIn = self {
            return HttpResponse::SeeOther()
                .insert_header((header::LOCATION, "/console/login"))
                .finish();
        }
        let title = match self {
            ConsoleError::Forbidden(_) => "Not allowed",
            ConsoleError::NotFound(_) => "Not found",
            ConsoleError::BadRequest(_) => "Bad request",
            _ => "Unavailable, try again",
        };
        let body = html! {
            h1 { (title) }
            p.error role="alert" { (self.to_string()) }
            p { a href="/console/" { "Back to the console" } }
        };
        let mut r = respond(page(title, None, Section::None, body));
        *r.status_mut() = self.status_code();
        r
    }
}

/// An HTML page response.
pub fn respond(markup: Markup) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(markup.into_string())
}

/// Runs a blocking read (the database, the state's lock) off the async workers.
pub async fn blocking<T: Send + 'static>(
    state: &web::Data<AppState>,
    f: impl FnOnce(&crate::service::Service) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, ConsoleError> {
    blocking_on(&state.service, f).await
}

/// The log a page reads (`?log=`, `--log-per-operator`): the service's unless named; a table,
/// round or entry of an operator's log is read there.
#[derive(Clone)]
pub struct Log {
    pub svc: std::sync::Arc<crate::service::Service>,
    /// The operator whose log it is; `None`: the service's.
    pub operator: Option<String>,
}

impl Log {
    /// The log `?log=` names: `service` (or nothing), or an operator whose log exists.
    pub fn named(state: &AppState, log: Option<&str>) -> Result<Log, ConsoleError> {
        let Some(name) = log.filter(|l| !l.is_empty()) else {
            return Ok(Log {
                svc: state.service.clone(),
                operator: None,
            });
        };
        let svc = state
            .log_by_name(name)
            .map_err(|_| ConsoleError::NotFound(format!("no log {name:?}")))?;
        let operator = (!std::sync::Arc::ptr_eq(&svc, &state.service)).then(|| name.to_owned());
        Ok(Log { svc, operator })
    }

    /// The logs that may hold a table or round id, in the order to read them (an operator's,
    /// by the id's scope, then the service's: `AppState::logs_holding`).
    pub fn holding(state: &AppState, id: &str) -> Vec<Log> {
        state
            .logs_holding(id)
            .into_iter()
            .map(|svc| {
                let operator = (!std::sync::Arc::ptr_eq(&svc, &state.service))
                    .then(|| {
                        id.split_once(crate::round::SCOPE)
                            .map(|(o, _)| o.to_owned())
                    })
                    .flatten();
                Log { svc, operator }
            })
            .collect()
    }

    /// `log=<operator>&`, to begin a link's query; empty for the service's log.
    pub fn q(&self) -> String {
        self.operator
            .as_deref()
            .map_or(String::new(), |o| format!("log={o}&"))
    }

    /// `?log=<operator>`, for a link with no other query; empty for the service's log.
    pub fn suffix(&self) -> String {
        self.operator
            .as_deref()
            .map_or(String::new(), |o| format!("?log={o}"))
    }

    /// The log's name as a page shows it.
    pub fn title(&self) -> String {
        match &self.operator {
            None => "the service's log".to_owned(),
            Some(o) => format!("operator {o}'s log"),
        }
    }
}

/// [`blocking`] on one log.
pub async fn blocking_on<T: Send + 'static>(
    svc: &std::sync::Arc<crate::service::Service>,
    f: impl FnOnce(&crate::service::Service) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, ConsoleError> {
    let svc = svc.clone();
    web::block(move || f(&svc))
        .await
        .map_err(|e| ConsoleError::Unavailable(e.to_string()))?
        .map_err(ConsoleError::from)
}

/// Every log's open tables (the service's, then each operator's).
pub async fn all_open_tables(
    state: &web::Data<AppState>,
) -> Result<Vec<data::TableView>, ConsoleError> {
    let mut tables = Vec::new();
    for (_, svc) in state.every_log() {
        tables.extend(blocking_on(&svc, |svc| Ok(data::open_tables(svc))).await?);
    }
    Ok(tables)
}

/// The stylesheet (no sign-in: the sign-in page uses it).
#[get("/static/console.css")]
async fn stylesheet() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/css; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, "public, max-age=3600"))
        .body(CSS)
}

/// The console's first page: what is here, and what needs attention.
#[get("/")]
async fn home(state: web::Data<AppState>, viewer: Viewer) -> Result<HttpResponse, ConsoleError> {
    let tables = all_open_tables(&state).await?;
    let size = data::log_size(&state.service);
    let operator_logs = state.logs.as_ref().map_or(0, |l| l.all().len());
    let mut flagged = Vec::new();
    for p in state.plans.iter() {
        if let rtp::Status::Done(r) = state.console.rtp.status(&p.hash) {
            for f in crate::rtp::flags(&p.plan, &r) {
                flagged.push((
                    p.key(),
                    f.row.bet.replace(' ', "-"),
                    f.row.label.clone(),
                    crate::rtp::figure(&f.row),
                    f.why,
                ));
            }
        }
    }
    let body = html! {
        h1 { "Console" }
        p.lead {
            "What is loaded, what it pays, and what happened: read-only, from the service's plans "
            "and its audit log."
        }
        dl.facts {
            dt { "Plans loaded" } dd { a href="/console/plans" { (state.plans.len()) " plan versions" } }
            dt { "Open tables" } dd { a href="/console/tables" { (tables.len()) } }
            dt { "Audit log" } dd { a href="/console/log" { (layout::count(size)) " entries" }
                @if operator_logs > 0 { " in the service's log, and " (operator_logs) " operators' logs" } }
        }
        h2 { "Returns to player outside the band" }
        p.note {
            "A return below 85 % or at or above 100 % is flagged, as is a simulated one whose 95 % "
            "interval reaches past either bound."
        }
        @if flagged.is_empty() {
            p { "None among the returns computed so far." }
        } @else {
            table {
                caption { "Flagged returns to player" }
                thead { tr { th scope="col" { "Plan" } th scope="col" { "Bet" } th scope="col" { "Return" } th scope="col" { "Why" } } }
                tbody {
                    @for (plan, anchor, label, figure, why) in &flagged {
                        tr {
                            th scope="row" { a href=(format!("/console/plans/{plan}#rtp-{anchor}")) { (plan) } }
                            td { (layout::cs(label)) }
                            td { (figure) }
                            td { span.flag { "Flagged" } " " (why) }
                        }
                    }
                }
            }
        }
    };
    Ok(respond(page("Console", Some(&viewer), Section::Home, body)))
}

/// The console's routes, all under `/console`, with the security headers of every response.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource("/console").to(|| async {
        HttpResponse::PermanentRedirect()
            .insert_header((header::LOCATION, "/console/"))
            .finish()
    }))
    .service(
        web::scope("/console")
            .wrap(
                actix_web::middleware::DefaultHeaders::new()
                    .add((
                        header::CONTENT_SECURITY_POLICY,
                        HeaderValue::from_static(CSP),
                    ))
                    .add((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
                    .add((header::X_FRAME_OPTIONS, "DENY"))
                    .add((header::REFERRER_POLICY, "no-referrer"))
                    .add((header::CACHE_CONTROL, "no-store")),
            )
            .app_data(
                web::FormConfig::default()
                    .limit(16 * 1024)
                    .error_handler(|e, _| {
                        ConsoleError::BadRequest(format!("the form could not be read: {e}")).into()
                    }),
            )
            .app_data(web::QueryConfig::default().error_handler(|e, _| {
                ConsoleError::BadRequest(format!("the address's query could not be read: {e}"))
                    .into()
            }))
            .app_data(web::PathConfig::default().error_handler(|e, _| {
                ConsoleError::BadRequest(format!("the address could not be read: {e}")).into()
            }))
            .service(stylesheet)
            .service(home)
            .service(sign_in::login_page)
            .service(sign_in::sign_in)
            .service(sign_in::sign_out)
            .service(plans::list)
            .service(plans::diff)
            .service(plans::versions)
            .service(plans::convergence)
            .service(plans::show)
            .service(sources::plain_text)
            .service(sources::document)
            .service(tables::list)
            .service(tables::table)
            .service(tables::round)
            .service(tables::proof_json)
            .service(tables::proof)
            .service(log::overview)
            .service(log::checkpoints)
            .service(log::entries)
            .service(log::entry)
            .service(log::events)
            .default_service(web::to(|| async {
                Err::<HttpResponse, ConsoleError>(ConsoleError::NotFound(
                    "no such console page".into(),
                ))
            })),
    );
}
