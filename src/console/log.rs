//! The audit log as an auditor reads it: its size and growth, the latest checkpoint, the
//! checkpoint history, the signing keys' validity, the entries (filtered by kind, table or
//! round) and the significant events.

use actix_web::{get, web, HttpResponse};
use maud::{html, Markup};
use serde::Deserialize;

use super::auth::Viewer;
use super::data::{self, EntryFilter, LogEntry};
use super::layout::{count, json, page, pager, ts, Section};
use super::{blocking_on, respond, ConsoleError, Log};
use crate::api::startup::AppState;

fn entries_table(items: &[LogEntry], caption: &str, log: &Log) -> Markup {
    let q = log.suffix();
    html! {
        div.wide {
            table #entries {
                caption { (caption) }
                thead {
                    tr {
                        th scope="col" class="num" { "Seq" }
                        th scope="col" { "Time (UTC)" }
                        th scope="col" { "Kind" }
                        th scope="col" { "Table" }
                        th scope="col" { "Round" }
                        th scope="col" { "Operator" }
                        th scope="col" { "Detail" }
                    }
                }
                tbody {
                    @for e in items {
                        tr {
                            th scope="row" class="num" { a href=(format!("/console/log/entries/{}{q}", e.seq)) { (e.seq) } }
                            td.nowrap { (ts(&e.ts)) }
                            td { code { (e.kind) } }
                            td { @if let Some(t) = &e.table { a href=(format!("/console/tables/{t}")) { (t) } } }
                            td { @if let Some(r) = &e.round { a href=(format!("/console/rounds/{r}")) { (r) } } }
                            td { @if let Some(o) = &e.operator { (o) } }
                            td { (detail(e)) }
                        }
                    }
                }
            }
        }
    }
}

/// A short line on what an entry says.
fn detail(e: &LogEntry) -> Markup {
    let p = &e.payload;
    html! {
        @match e.kind.as_str() {
            "plan_loaded" => { a href=(format!("/console/plans/{}", p["plan"].as_str().unwrap_or(""))) { (p["plan"].as_str().unwrap_or("")) } },
            "round_voided" => { span.flag { "void" } " " (p["reason"].as_str().unwrap_or("")) },
            "key_rotated" => { span.flag { "key rotation" } " " (p["stage"].as_str().unwrap_or("")) },
            "table_opened" => { (p["plan"].as_str().unwrap_or("")) " (" (p["mode"].as_str().unwrap_or("")) ")" },
            "table_closed" => { (p["reason"].as_str().unwrap_or("")) },
            _ => {
                @if let Some(code) = e.code() {
                    span.bad { "refused" } " " code { (code) } " " (p["refusal"]["message"].as_str().unwrap_or(""))
                } @else if let Some(r) = p["reason"].as_str() {
                    (r)
                }
            },
        }
    }
}

/// The log: size, latest checkpoint, keys, growth.
#[get("/log")]
pub async fn overview(
    state: web::Data<AppState>,
    viewer: Viewer,
    q: web::Query<LogQuery>,
) -> Result<HttpResponse, ConsoleError> {
    let log = Log::named(&state, q.log.as_deref())?;
    let lq = log.suffix();
    let logs: Vec<String> = state
        .logs
        .as_ref()
        .map(|l| l.all().into_iter().map(|(o, _)| o).collect())
        .unwrap_or_default();
    let (cp, growth, keys) = blocking_on(&log.svc, |svc| {
        Ok((
            data::latest_checkpoint(svc)?,
            data::log_growth(svc)?,
            data::key_validity(svc),
        ))
    })
    .await?;
    let size = data::log_size(&log.svc);
    let body = html! {
        h1 { "Audit log" @if log.operator.is_some() { ": " (log.title()) } }
        @if !logs.is_empty() {
            nav aria-label="Logs" {
                p {
                    "Each operator writes a log of its own: "
                    a href="/console/log" { "the service's" }
                    @for o in &logs { " · " a href=(format!("/console/log?log={o}")) { (o) } }
                }
            }
        }
        dl.facts {
            dt { "Origin" } dd { code { (log.svc.origin) } }
            dt { "Entries" } dd { (count(size)) }
            dt { "Covered by the latest checkpoint" } dd { @match &cp { Some(c) => (count(c.checkpoint.size)), None => "none signed yet" } }
        }
        p {
            a href=(format!("/console/log/entries{lq}")) { "Entries" } " · "
            a href=(format!("/console/log/checkpoints{lq}")) { "Checkpoint history" } " · "
            a href=(format!("/console/log/events{lq}")) { "Significant events" }
        }
        h2 { "Latest checkpoint" }
        @match &cp {
            Some(c) => {
                p.note { "A C2SP signed note: origin, tree size, root hash, then the Ed25519 signatures (audit/FORMAT.md §3)." }
                pre #latest-checkpoint { (c.to_text()) }
            },
            None => p { "None signed yet." },
        }
        h2 { "Signing keys" }
        table #keys {
            caption { "Which key may sign checkpoints of which tree sizes" }
            thead { tr { th scope="col" { "Key" } th scope="col" class="num" { "From size" } th scope="col" class="num" { "Until size" } th scope="col" { "Authorised" } th scope="col" class="num" { "Announced at entry" } } }
            tbody {
                @for k in &keys {
                    tr {
                        th scope="row" { code.hash { (k.vkey) } }
                        td.num { (k.from_size) }
                        td.num { @match k.until_size { Some(u) => (u), None => "still valid" } }
                        td { @if k.authorised { span.good { "yes" } } @else { span.bad { "no" } } }
                        td.num { @match k.announced_seq { Some(s) => a href=(format!("/console/log/entries/{s}{lq}")) { (s) }, None => "initial key" } }
                    }
                }
            }
        }
        p.note { "The public key, for " code { "pitboss-audit verify" } ": " code { "GET /v1/audit/public-key" } "." }
        h2 { "Growth" }
        @match super::plot::growth(&growth) {
            Some(svg) => figure.plot {
                (super::layout::raw(svg))
                figcaption { "Entries in the log over time (" (growth.len()) " entries sampled evenly over the log)." }
            },
            None => p { "Nothing logged yet." },
        }
    };
    Ok(respond(page(
        "Audit log",
        Some(&viewer),
        Section::Log,
        body,
    )))
}

#[derive(Deserialize)]
pub struct Before {
    before: Option<u64>,
    log: Option<String>,
}

/// `?log=`: the log a page reads (the service's by default).
#[derive(Deserialize)]
pub struct LogQuery {
    pub log: Option<String>,
}

/// The checkpoint history, largest first.
#[get("/log/checkpoints")]
pub async fn checkpoints(
    state: web::Data<AppState>,
    viewer: Viewer,
    q: web::Query<Before>,
) -> Result<HttpResponse, ConsoleError> {
    let before = q.before;
    let log = Log::named(&state, q.log.as_deref())?;
    let page_ = blocking_on(&log.svc, move |svc| data::checkpoints(svc, before)).await?;
    let body = html! {
        h1 { "Checkpoint history" @if log.operator.is_some() { ": " (log.title()) } }
        p.lead { "Every signed checkpoint, the largest tree first, " (data::PAGE) " to a page." }
        table #checkpoints {
            caption { "Signed checkpoints" }
            thead { tr { th scope="col" class="num" { "Tree size" } th scope="col" { "Signed (UTC)" } th scope="col" { "Note" } } }
            tbody {
                @for c in &page_.items {
                    tr {
                        th scope="row" class="num" { (count(c.size)) }
                        td { (c.created_at) }
                        td { details { summary { "Signed note" } pre { (c.note) } } }
                    }
                }
            }
        }
        (pager(&format!("/console/log/checkpoints?{}", log.q()), before, page_.older, "checkpoints"))
    };
    Ok(respond(page(
        "Checkpoints",
        Some(&viewer),
        Section::Log,
        body,
    )))
}

#[derive(Deserialize)]
pub struct EntriesQuery {
    kind: Option<String>,
    table: Option<String>,
    round: Option<String>,
    before: Option<u64>,
    log: Option<String>,
}

fn some(s: &Option<String>) -> Option<String> {
    s.as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// Entries, filtered by kind, table or round, newest first.
#[get("/log/entries")]
pub async fn entries(
    state: web::Data<AppState>,
    viewer: Viewer,
    q: web::Query<EntriesQuery>,
) -> Result<HttpResponse, ConsoleError> {
    let filter = EntryFilter {
        kind: some(&q.kind),
        table: some(&q.table),
        round: some(&q.round),
    };
    let before = q.before;
    let log = Log::named(&state, q.log.as_deref())?;
    let f2 = filter.clone();
    let page_ = blocking_on(&log.svc, move |svc| data::entries(svc, &f2, before)).await?;
    let mut kinds: Vec<&str> = crate::round::Event::KINDS.to_vec();
    kinds.push("key_rotated");
    kinds.sort_unstable();
    let mut base = format!("/console/log/entries?{}", log.q());
    for (k, v) in [
        ("kind", &filter.kind),
        ("table", &filter.table),
        ("round", &filter.round),
    ] {
        if let Some(v) = v {
            base.push_str(&format!("{k}={}&", url_encode(v)));
        }
    }
    let body = html! {
        h1 { "Entries" @if log.operator.is_some() { ": " (log.title()) } }
        form.filters method="get" action="/console/log/entries" role="search" {
            @if let Some(o) = &log.operator { input type="hidden" name="log" value=(o); }
            div {
                label for="kind" { "Kind" }
                select #kind name="kind" {
                    option value="" { "any" }
                    @for k in &kinds { option value=(k) selected[filter.kind.as_deref() == Some(*k)] { (k) } }
                }
            }
            div {
                label for="table" { "Table" }
                input #table type="text" name="table" value=(filter.table.clone().unwrap_or_default());
            }
            div {
                label for="round" { "Round" }
                input #round type="text" name="round" value=(filter.round.clone().unwrap_or_default());
            }
            button type="submit" { "Show" }
        }
        @if page_.items.is_empty() { p { "No entry matches." } } @else {
            (entries_table(&page_.items, "Entries, newest first", &log))
        }
        (pager(&base, before, page_.older, "entries"))
    };
    Ok(respond(page("Entries", Some(&viewer), Section::Log, body)))
}

/// `+`-free percent-encoding of a query value.
fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// One entry, whole.
#[get("/log/entries/{seq}")]
pub async fn entry(
    state: web::Data<AppState>,
    viewer: Viewer,
    path: web::Path<u64>,
    q: web::Query<LogQuery>,
) -> Result<HttpResponse, ConsoleError> {
    let seq = path.into_inner();
    let log = Log::named(&state, q.log.as_deref())?;
    let lq = log.suffix();
    let e = blocking_on(&log.svc, move |svc| data::entry(svc, seq))
        .await?
        .ok_or_else(|| ConsoleError::NotFound(format!("no entry {seq}")))?;
    let body = html! {
        h1 { "Entry " (seq) @if log.operator.is_some() { " of " (log.title()) } }
        dl.facts {
            dt { "Kind" } dd { code { (e.kind) } }
            dt { "Time" } dd { (e.ts) }
            @if let Some(t) = &e.table { dt { "Table" } dd { a href=(format!("/console/tables/{t}")) { (t) } } }
            @if let Some(r) = &e.round { dt { "Round" } dd { a href=(format!("/console/rounds/{r}")) { (r) } } }
            @if let Some(b) = &e.bet { dt { "Bet" } dd { code { (b) } } }
            @if let Some(o) = &e.operator { dt { "Operator" } dd { (o) } }
            dt { "Inclusion proof" } dd { a href=(format!("/console/proofs/{seq}{lq}")) { "Check this entry's proof" } }
        }
        h2 { "Payload" }
        pre { (json(&e.payload)) }
        h2 { "Canonical bytes (what is hashed)" }
        pre { (e.canonical) }
    };
    Ok(respond(page(
        &format!("Entry {seq}"),
        Some(&viewer),
        Section::Log,
        body,
    )))
}

/// Plans loaded, voids, refused dealer events, misdeals and invalid spins, key rotations,
/// tables closed, and refusals because a win would exceed the plan's maximum.
#[get("/log/events")]
pub async fn events(
    state: web::Data<AppState>,
    viewer: Viewer,
    q: web::Query<Before>,
) -> Result<HttpResponse, ConsoleError> {
    let before = q.before;
    let log = Log::named(&state, q.log.as_deref())?;
    let page_ = blocking_on(&log.svc, move |svc| data::significant(svc, before)).await?;
    let body = html! {
        h1 { "Significant events" @if log.operator.is_some() { ": " (log.title()) } }
        p.lead {
            "Plans loaded, rounds voided, dealer events refused (malfunctions), misdeals and invalid "
            "spins, signing-key rotations, tables closed, and every refusal for "
            code { "max_win_exceeded" } "; newest first."
        }
        @if page_.items.is_empty() { p { "None." } } @else {
            (entries_table(&page_.items, "Significant events, newest first", &log))
        }
        (pager(&format!("/console/log/events?{}", log.q()), before, page_.older, "events"))
    };
    Ok(respond(page(
        "Significant events",
        Some(&viewer),
        Section::Events,
        body,
    )))
}
