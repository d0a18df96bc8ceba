//! Sign-in with an API key, and sign-out (the rules are in [`super::auth`]).

use std::time::Instant;

use actix_web::cookie::time::Duration as CookieDuration;
use actix_web::http::header;
use actix_web::{get, post, web, HttpRequest, HttpResponse};
use maud::{html, Markup};
use serde::Deserialize;

use super::auth::{self, Viewer, CONSOLE_ROLES, LOGIN_COOKIE, SESSION_COOKIE};
use super::layout::{page, Section};
use super::ConsoleError;
use crate::api::auth::Role;
use crate::api::startup::AppState;

fn form_page(token: &str, error: Option<&str>) -> Markup {
    let body = html! {
        h1 { "Sign in" }
        p.lead {
            "The console is for regulators and auditors. Sign in with your regulator or auditor "
            "API key (" code { "pb_…" } "); it is checked and not kept."
        }
        @if let Some(e) = error {
            p.error role="alert" #sign-in-error { (e) }
        }
        form.login method="post" action="/console/login" {
            input type="hidden" name="csrf" value=(token);
            label for="key" { "API key" }
            input #key type="password" name="key" required autocomplete="off" spellcheck="false"
                aria-describedby=[error.map(|_| "sign-in-error")];
            button type="submit" { "Sign in" }
        }
    };
    page("Sign in", None, Section::None, body)
}

/// A fresh sign-in form, its token in a short-lived cookie too.
fn fresh_form(
    state: &AppState,
    req: &HttpRequest,
    error: Option<&str>,
    status: actix_web::http::StatusCode,
) -> Result<HttpResponse, ConsoleError> {
    let token = auth::random_token()?;
    let secure = auth::secure(req, state.console.secure_cookies);
    let mut c = auth::cookie(LOGIN_COOKIE, token.clone(), secure);
    c.set_max_age(CookieDuration::seconds(auth::LOGIN_FORM_SECONDS));
    Ok(HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .cookie(c)
        .body(form_page(&token, error).into_string()))
}

#[get("/login")]
pub async fn login_page(
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ConsoleError> {
    let signed_in = req
        .cookie(SESSION_COOKIE)
        .and_then(|c| state.console.sessions.get(c.value(), Instant::now()));
    if signed_in.is_some() {
        return Ok(HttpResponse::SeeOther()
            .insert_header((header::LOCATION, "/console/"))
            .finish());
    }
    fresh_form(&state, &req, None, actix_web::http::StatusCode::OK)
}

#[derive(Deserialize)]
pub struct SignIn {
    key: String,
    csrf: String,
}

#[post("/login")]
pub async fn sign_in(
    state: web::Data<AppState>,
    req: HttpRequest,
    input: web::Form<SignIn>,
) -> Result<HttpResponse, ConsoleError> {
    let expected = req.cookie(LOGIN_COOKIE).map(|c| c.value().to_string());
    if !expected.is_some_and(|t| auth::same(&t, &input.csrf)) {
        return fresh_form(
            &state,
            &req,
            Some("The sign-in form had expired or did not come from this console. Sign in again."),
            actix_web::http::StatusCode::FORBIDDEN,
        );
    }
    let caller = match state
        .keys
        .authenticate(Some(&format!("Bearer {}", input.key.trim())))
    {
        Ok(c) => c,
        Err(_) => {
            return fresh_form(
                &state,
                &req,
                Some("That key is not a key of this service."),
                actix_web::http::StatusCode::UNAUTHORIZED,
            )
        }
    };
    if !CONSOLE_ROLES.contains(&caller.role) {
        let why = match caller.role {
            Role::Operator => "Operator keys cannot sign in: the console shows every operator's tables. Use a regulator or auditor key.",
            _ => "Admin keys cannot sign in: an admin key manages keys and is not for a browser. Create an auditor key for reading (POST /v1/admin/keys).",
        };
        return fresh_form(
            &state,
            &req,
            Some(why),
            actix_web::http::StatusCode::FORBIDDEN,
        );
    }
    // A sign-in starts a new session; one the browser still held ends (no session fixation,
    // no orphan left to expire).
    if let Some(old) = req.cookie(SESSION_COOKIE) {
        state.console.sessions.remove(old.value());
    }
    let id = state
        .console
        .sessions
        .create(&caller.key_id, caller.role, Instant::now())?;
    let secure = auth::secure(&req, state.console.secure_cookies);
    Ok(HttpResponse::SeeOther()
        .insert_header((header::LOCATION, "/console/"))
        .cookie(auth::cookie(SESSION_COOKIE, id, secure))
        .cookie(auth::removal(LOGIN_COOKIE, secure))
        .finish())
}

#[derive(Deserialize)]
pub struct SignOut {
    csrf: String,
}

#[post("/logout")]
pub async fn sign_out(
    state: web::Data<AppState>,
    req: HttpRequest,
    viewer: Viewer,
    input: web::Form<SignOut>,
) -> Result<HttpResponse, ConsoleError> {
    if !auth::same(&viewer.csrf, &input.csrf) {
        return Err(ConsoleError::Forbidden(
            "the sign-out form did not come from this session".into(),
        ));
    }
    if let Some(c) = req.cookie(SESSION_COOKIE) {
        state.console.sessions.remove(c.value());
    }
    let secure = auth::secure(&req, state.console.secure_cookies);
    Ok(HttpResponse::SeeOther()
        .insert_header((header::LOCATION, "/console/login"))
        .cookie(auth::removal(SESSION_COOKIE, secure))
        .finish())
}
