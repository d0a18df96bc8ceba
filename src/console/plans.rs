//! Plans as a regulator reads them: the list, one plan with the document's tables, its
//! returns to player, its versions, and two plans side by side.

use actix_web::{get, web, HttpResponse};
use maud::{html, Markup};
use serde::Deserialize;
use serde_json::Value;

use super::auth::Viewer;
use super::layout::{count, cs, money, page, pct, value, words, Section};
use super::rtp::Status;
use super::sources::section_link;
use super::{blocking, data, respond, ConsoleError};
use crate::api::startup::AppState;
use crate::plan::model::{AutoDecision, CancelScope, CancelSettlement, Plan};
use crate::plan::{LoadedPlan, PlanRef};
use crate::rtp::{self, Method, RtpReport};

fn find<'a>(state: &'a AppState, text: &str) -> Result<&'a LoadedPlan, ConsoleError> {
    let r: PlanRef = text
        .parse()
        .map_err(|e: crate::plan::model::PlanRefError| ConsoleError::BadRequest(e.to_string()))?;
    state
        .plans
        .get(&r)
        .ok_or_else(|| ConsoleError::NotFound(format!("no plan {r} is loaded")))
}

fn plan_link(key: &str) -> Markup {
    html! { a href=(format!("/console/plans/{key}")) { (key) } }
}

fn loads(all: &[data::PlanLoad], p: &LoadedPlan) -> Option<data::PlanLoad> {
    all.iter()
        .find(|l| l.plan == p.key() && l.sha256 == p.hash)
        .cloned()
}

/// `2026-11-26T11:16:28.919812Z` as `2026-11-26 11:16:28`.
fn short_ts(ts: &str) -> String {
    ts.get(..19)
        .map_or_else(|| ts.to_string(), |t| t.replace('T', " "))
}

/// The regulator's approval of a plan content now: the status, and the approval that gives it.
fn approval(state: &AppState, p: &LoadedPlan) -> Markup {
    let s = state.service.state.read().expect("state lock");
    let (status, a) =
        crate::round::regulator::status_of(s.approvals.values(), &p.hash, chrono::Utc::now());
    use crate::round::regulator::ApprovalStatus as A;
    html! {
        @match (status, a) {
            (A::Approved, Some(a)) => { strong { "approved" } " (" (a.reference) ")" },
            (A::None, _) => span.muted { "none" },
            (s, Some(a)) => { span.flag { (s.as_str()) } " (" (a.reference) ")" },
            (s, None) => span.flag { (s.as_str()) },
        }
    }
}

fn flag_count(state: &AppState, p: &LoadedPlan) -> Markup {
    match state.console.rtp.status(&p.hash) {
        Status::Done(r) => {
            let n = rtp::flags(&p.plan, &r).len();
            html! {
                @if n == 0 { "none" } @else { span.flag { (n) " flagged" } }
            }
        }
        Status::Disabled => html! { span.muted { "not computed" } },
        Status::Queued | Status::Computing => html! { span.muted { "computing…" } },
        Status::Failed(_) => html! { span.bad { "failed" } },
    }
}

/// Every loaded plan and version.
#[get("/plans")]
pub async fn list(
    state: web::Data<AppState>,
    viewer: Viewer,
) -> Result<HttpResponse, ConsoleError> {
    let loaded = blocking(&state, data::plan_loads).await?;
    let body = html! {
        h1 { "Plans" }
        p.lead {
            (state.plans.len()) " plan versions are loaded. Each is immutable: a change is a new "
            "version. “Loaded” is the first " code { "plan_loaded" } " entry of the audit log for "
            "that version and content."
        }
        div.wide {
            table #plans {
                caption { "Loaded plans" }
                thead {
                    tr {
                        th scope="col" { "Plan" }
                        th scope="col" { "Title" }
                        th scope="col" class="num" { "Version" }
                        th scope="col" { "Family" }
                        th scope="col" { "Studio" }
                        th scope="col" { "Source section" }
                        th scope="col" { "SHA-256" }
                        th scope="col" { "Loaded (UTC)" }
                        th scope="col" { "Approval" }
                        th scope="col" class="num" { "Assumptions" }
                        th scope="col" class="num" { "Lint warnings" }
                        th scope="col" { "Return to player" }
                    }
                }
                tbody {
                    @for p in state.plans.iter() {
                        @let id = &p.plan.plan;
                        tr {
                            th scope="row" { (plan_link(&p.key())) }
                            td { (cs(&id.title)) }
                            td.num { (id.version) }
                            td { (id.family) }
                            td { (id.studio) }
                            td {
                                @match section_link(&state, &p.plan.source.document, &p.plan.source.section) {
                                    Some(href) => a href=(href) lang="cs" { (p.plan.source.section) },
                                    None => span lang="cs" { (p.plan.source.section) },
                                }
                            }
                            td {
                                // The first 16 digits on screen, the whole hash in print (the
                                // plan's page shows it whole too).
                                code.screen-only title=(p.hash) { (&p.hash[..16.min(p.hash.len())]) "…" }
                                code.hash.print-only { (p.hash) }
                            }
                            td {
                                @match loads(&loaded, p) {
                                    Some(l) => a href=(format!("/console/log/entries/{}", l.seq)) { (short_ts(&l.ts)) },
                                    None => span.muted { "not in the log" },
                                }
                            }
                            td { (approval(&state, p)) }
                            td.num { (p.plan.assumptions.len()) }
                            td.num { (p.warnings.len()) }
                            td { (flag_count(&state, p)) }
                        }
                    }
                }
            }
        }
        p {
            a href="/console/diff" { "Compare two plans" }
        }
    };
    Ok(respond(page("Plans", Some(&viewer), Section::Plans, body)))
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn clause(state: &AppState, plan: &Plan, text: &str) -> Markup {
    let doc = state.console.sources.get(&plan.source.document);
    let line = doc.and_then(|d| {
        let s = d.section_line(&plan.source.section)?;
        d.clause_line(s, text)
    });
    html! {
        @match line {
            Some(l) => a lang="cs" href=(format!("/console/sources/{}#L{}", plan.source.document, l + 1)) { (text) },
            None => span lang="cs" { (text) },
        }
    }
}

fn ratio_text(r: crate::money::Ratio) -> String {
    format!("{}:{}", r.numerator(), r.denominator())
}

fn limits(state: &AppState, plan: &Plan) -> Markup {
    let cur = plan.plan.currency;
    // One clause for the whole table (the usual case) is said once, under it.
    let shared = plan
        .bets
        .first()
        .map(|b| &b.clause)
        .filter(|c| plan.bets.iter().all(|b| &b.clause == *c));
    html! {
        table #limits {
            caption lang="cs" { "Tabulka nejvyšších sázek a odvislých nejvyšších výher" }
            thead {
                tr {
                    th scope="col" { "Bet" br; span.sub lang="cs" { "Název sázky" } }
                    th scope="col" class="num" { "Max bet" br; span.sub lang="cs" { "Nejvyšší sázka" } }
                    th scope="col" class="num" { "Max win" br; span.sub lang="cs" { "Nejvyšší výhra" } }
                    th scope="col" class="num" { "Max win + stake" br; span.sub lang="cs" { "Nejvyšší výhra + sázka" } }
                    th scope="col" class="num" { "Min bet" }
                    @if shared.is_none() { th scope="col" { "Clause" } }
                }
            }
            tbody {
                @for b in &plan.bets {
                    tr {
                        th scope="row" { (cs(&b.label)) br; code { (b.id) } }
                        td.money { (money(b.max_bet, cur)) }
                        td.money { (money(b.max_win, cur)) }
                        td.money { (money(b.max_win_plus_stake, cur)) }
                        td.money {
                            (money(b.min_bet, cur))
                            @if plan.assumption(&format!("bets[{}].min_bet", b.id)).is_some() {
                                " " abbr title="an assumption: the document gives no minimum" { "*" }
                            }
                        }
                        @if shared.is_none() { td { (clause(state, plan, &b.clause)) } }
                    }
                }
            }
        }
        @if let Some(c) = shared { p.note { "Clause of every row: " (clause(state, plan, c)) } }
        p.note { "* The document gives no minimum bet: an assumption of the plan (below)." }
    }
}

fn payouts(state: &AppState, plan: &Plan) -> Markup {
    html! {
        table #payouts {
            caption lang="cs" { "Výplatní tabulka" }
            thead {
                tr {
                    th scope="col" { "Bet" }
                    th scope="col" { "Outcome" }
                    th scope="col" class="num" { "Pays" }
                    th scope="col" { "As the document names it" }
                    th scope="col" { "Clause" }
                }
            }
            tbody {
                @for r in &plan.payouts {
                    tr {
                        th scope="row" { code { (r.bet) } }
                        td { (words(&r.outcome)) }
                        td.num {
                            @match (r.ratio, r.refund) {
                                (Some(q), _) => (ratio_text(q)),
                                (None, Some(q)) => { "stake × " (q.numerator()) "/" (q.denominator()) " returned" },
                                (None, None) => "—",
                            }
                        }
                        td { @if let Some(l) = &r.label { (cs(l)) } }
                        td { (clause(state, plan, &r.clause)) }
                    }
                }
            }
        }
    }
}

/// A JSON value of the plan's rules as nested facts and tables.
fn render(v: &Value) -> Markup {
    match v {
        Value::Object(m) if !(m.len() == 2 && m.contains_key("numerator")) => html! {
            dl.facts {
                @for (k, x) in m {
                    dt { (words(k)) }
                    dd {
                        @if k == "clause" { span lang="cs" { (value(x)) } } @else { (render(x)) }
                    }
                }
            }
        },
        Value::Array(items) if items.iter().all(Value::is_object) && !items.is_empty() => {
            let mut cols: Vec<String> = Vec::new();
            for i in items {
                for k in i.as_object().into_iter().flat_map(|m| m.keys()) {
                    if !cols.contains(k) {
                        cols.push(k.clone());
                    }
                }
            }
            html! {
                table {
                    thead { tr { @for c in &cols { th scope="col" { (words(c)) } } } }
                    tbody {
                        @for i in items {
                            tr {
                                @for c in &cols {
                                    td { (value(i.get(c).unwrap_or(&Value::Null))) }
                                }
                            }
                        }
                    }
                }
            }
        }
        Value::Array(items) => html! {
            (items.iter().map(value).collect::<Vec<_>>().join(", "))
        },
        other => html! { (value(other)) },
    }
}

fn policies(state: &AppState, plan: &Plan) -> Markup {
    let p = &plan.policies;
    let seconds = |ms: u64| format!("{} s", ms as f64 / 1000.0);
    html! {
        section.policy #error-policy {
            h3 { "Errors and voids" }
            dl.facts {
                dt { "On an error" } dd { @if p.error.pause_and_repair { "the game is paused and repaired" } @else { "the game is not paused for a repair" } }
                dt { "Reconstruction before a cancellation" } dd { (yes_no(p.error.reconstruction_before_cancel)) }
                dt { "A cancellation covers" } dd { @match p.error.cancel_scope { CancelScope::SomeOrAllPlayers => "some or all players", CancelScope::AllPlayers => "all players" } }
                dt { "On cancellation" } dd { @match p.error.on_cancel { CancelSettlement::RefundStakes => "every stake is refunded" } }
                dt { "Clause" } dd { (clause(state, plan, &p.error.clause)) }
            }
        }
        section.policy #disconnect-policy {
            h3 { "Disconnection" }
            dl.facts {
                dt { "Placed bets stand" } dd { (yes_no(p.disconnect.placed_bets_stand)) }
                dt { "Refund if disconnected before betting closes" } dd { (yes_no(p.disconnect.refund_if_disconnected_before_betting_closes)) }
                dt { "Pending decisions taken automatically" } dd { (yes_no(p.disconnect.pending_decisions_automatic)) }
                @if let Some(n) = p.disconnect.remove_after_rounds_without_bet {
                    dt { "A player loses his place after" } dd { (n) " rounds without a bet" }
                }
                dt { "Clause" } dd { (clause(state, plan, &p.disconnect.clause)) }
            }
        }
        section.policy #timeout-policy {
            h3 { "Time-outs" }
            dl.facts {
                dt { "Betting window" } dd { (seconds(p.timing.betting_window_ms)) }
                @if let Some(ms) = p.timing.decision_ms {
                    dt { "Time to decide" } dd { (seconds(ms)) }
                }
                @if let Some(ms) = p.timing.interrupted_round_ms {
                    dt { "A paused or unfinished round is voided after" } dd { (seconds(ms)) " without progress (every stake returned)" }
                }
                @if let Some(t) = &p.decision_timeout {
                    dt { "A decision not taken in time is" }
                    dd {
                        @match t.automatic {
                            AutoDecision::Stand => "stand",
                            AutoDecision::HitAtOrBelowElseStand => { "hit at " (t.hit_at_or_below.unwrap_or(0)) " or less, else stand" },
                            AutoDecision::Fold => "fold",
                            AutoDecision::CheckOrFold => "check, or fold if a bet is owed",
                        }
                    }
                    dt { "Clause" } dd { (clause(state, plan, &t.clause)) }
                }
            }
        }
        @if let Some(c) = &p.table_closure {
            section.policy #closure-policy {
                h3 { "Table closed without notice" }
                dl.facts {
                    dt { "Then" } dd { @match c.without_notice { CancelSettlement::RefundStakes => "every stake is refunded" } }
                    dt { "Clause" } dd { (clause(state, plan, &c.clause)) }
                }
            }
        }
    }
}

fn method_text(m: Method) -> &'static str {
    match m {
        Method::Exact => "exact (enumeration)",
        Method::Simulated => "simulated",
        Method::CountedWith => "counted with the main bet",
        Method::NotApplicable => "not applicable",
        Method::Unavailable => "not computed",
    }
}

fn rtp_table(plan: &Plan, key: &str, report: &RtpReport) -> Markup {
    let strategies: std::collections::BTreeSet<&str> = report
        .rows
        .iter()
        .filter_map(|r| r.strategy.as_deref())
        .collect();
    let first_series = report.convergence.first();
    let shown = std::cell::RefCell::new(std::collections::BTreeSet::new());
    html! {
        table #rtp-table {
            caption { "Return to player of every bet type (band: 85 % to below 100 %)" }
            thead {
                tr {
                    th scope="col" { "Bet" }
                    th scope="col" class="num" { "Return" }
                    th scope="col" { "Method" }
                    th scope="col" class="num" { "95 % interval" }
                    th scope="col" class="num" { "Rounds" }
                    th scope="col" { "Notes" }
                }
            }
            tbody {
                @for row in &report.rows {
                    @let flag = rtp::out_of_band(row);
                    tr #(format!("rtp-{}", row.bet.replace(' ', "-"))) {
                        th scope="row" { (cs(&row.label)) br; code { (row.bet) } }
                        td.num {
                            @if let Some(r) = row.rtp { (pct(r, 2)) } @else { "—" }
                            @if let Some(f) = &row.fraction { br; span.note { (f) } }
                        }
                        td { (method_text(row.method)) }
                        td.num {
                            @if let Some([lo, hi]) = row.ci95 { (pct(lo, 2)) " – " (pct(hi, 2)) } @else { "—" }
                        }
                        td.num { @if let Some(n) = row.rounds { (count(n)) } @else { "—" } }
                        td {
                            @if let Some(why) = &flag {
                                p { span.flag { "Flagged" } " " (why) }
                                @let behind = rtp::assumptions_behind(plan, row);
                                @if behind.is_empty() {
                                    p.note { "No assumption of the plan bears on it: the figure follows from the document's own tables." }
                                } @else {
                                    p.note { "Rests on the plan's assumptions:" }
                                    ul {
                                        @for a in behind {
                                            // Each reason in full once; a later row names it.
                                            @if shown.borrow_mut().insert(a.field.clone()) {
                                                li { code { (a.field) } ": " (a.reason) }
                                            } @else {
                                                li { code { (a.field) } " (above)" }
                                            }
                                        }
                                    }
                                }
                            }
                            @if let Some(n) = &row.note { p.note { (n) } }
                            @if report.convergence.iter().any(|s| s.bet == row.bet) {
                                p.note { a href=(format!("/console/plans/{key}/convergence?bet={}", row.bet)) { "Convergence plot" } }
                            }
                        }
                    }
                }
            }
        }
        @for s in &strategies {
            p.note { strong { "Strategy: " } (s) }
        }
        p.note {
            "Simulated figures: " (count(report.rounds)) " rounds asked (Casino Hold'em plays a tenth), in "
            (rtp::SEGMENTS) " runs from seed " code.hash { (report.seed) } " (derived from the plan's "
            "hash); reproduce with " code { "pitboss plan rtp " (key) " --rounds " (report.rounds) } "."
        }
        @if let Some(s) = first_series {
            @let label = report.row(&s.bet).map_or(s.bet.clone(), |r| r.label.clone());
            @if let Some(svg) = super::plot::convergence(s, &label) {
                figure.plot {
                    (super::layout::raw(svg))
                    figcaption { "Convergence of the simulated return of " (cs(&label)) " (" code { (s.bet) } ")." }
                }
            }
        }
    }
}

fn rtp_section(state: &AppState, p: &LoadedPlan) -> Markup {
    html! {
        h2 #rtp { "Return to player" }
        @match state.console.rtp.status(&p.hash) {
            Status::Done(r) => (rtp_table(&p.plan, &p.key(), &r)),
            Status::Disabled => p { "This service does not compute returns to player (started with " code { "--rtp-rounds 0" } "). " code { "pitboss plan rtp " (p.key()) } " prints them." },
            Status::Queued | Status::Computing => p role="status" { "Being computed in the background (once per plan content); reload in a while." },
            Status::Failed(e) => p.error { "Could not be computed: " (e) },
        }
    }
}

/// One plan, as the document writes it.
#[get("/plans/{plan}")]
pub async fn show(
    state: web::Data<AppState>,
    viewer: Viewer,
    path: web::Path<String>,
) -> Result<HttpResponse, ConsoleError> {
    let p = find(&state, &path)?;
    let loaded = blocking(&state, data::plan_loads).await?;
    let plan = &p.plan;
    let id = &plan.plan;
    let all_versions: Vec<&LoadedPlan> = state.plans.versions(&id.id).collect();
    let others: Vec<&LoadedPlan> = state
        .plans
        .iter()
        .filter(|o| o.plan.plan.family == id.family && o.key() != p.key())
        .collect();
    let rules = serde_json::to_value(&plan.rules).unwrap_or(Value::Null);
    let rules = rules
        .as_object()
        .and_then(|m| m.values().next())
        .cloned()
        .unwrap_or(Value::Null);
    let body = html! {
        h1 { span lang="cs" { (id.title) } " " small.muted { (p.key()) } }
        dl.facts {
            dt { "Operator" } dd { (id.operator) }
            dt { "Studio" } dd { (id.studio) }
            dt { "Family" } dd { (id.family) }
            dt { "Currency" } dd { (id.currency.code()) }
            dt { "Effective from" } dd { (id.effective_from) }
            dt { "Rounding" } dd { (value(&serde_json::to_value(id.rounding).unwrap_or(Value::Null))) }
            dt { "Modes" } dd { (id.modes.iter().map(|m| value(&serde_json::to_value(m).unwrap_or(Value::Null))).collect::<Vec<_>>().join(", ")) }
            dt { "Source" }
            dd {
                span lang="cs" { (plan.source.title) } ", "
                @match section_link(&state, &plan.source.document, &plan.source.section) {
                    Some(href) => a href=(href) lang="cs" { (plan.source.section) },
                    None => span lang="cs" { (plan.source.section) },
                }
                " (" code { (plan.source.document) } ")"
            }
            dt { "SHA-256" } dd { code.hash { (p.hash) } }
            dt { "Approval" } dd { (approval(&state, p)) }
            dt { "Loaded" }
            dd {
                @match loads(&loaded, p) {
                    Some(l) => { (l.ts) " (" a href=(format!("/console/log/entries/{}", l.seq)) { "entry " (l.seq) } ")" },
                    None => span.muted { "not in the log" },
                }
            }
            dt { "Versions" }
            dd {
                a href=(format!("/console/plans/{}/versions", id.id)) { (all_versions.len()) " loaded" }
            }
            @if !others.is_empty() {
                dt { "Compare with" }
                dd {
                    @for (i, o) in others.iter().enumerate() {
                        @if i > 0 { ", " }
                        a href=(format!("/console/diff?from={}&to={}", p.key(), o.key())) { (o.key()) }
                    }
                }
            }
        }
        @if !plan.bets.is_empty() {
            h2 #limits-heading { "Limits" }
            (limits(&state, plan))
            h2 #payouts-heading { "Payouts" }
            (payouts(&state, plan))
        }
        (rtp_section(&state, p))
        h2 #rules { "Rules" }
        (render(&rules))
        h2 #policies { "Policies" }
        (policies(&state, plan))
        h2 #assumptions { "Assumptions" }
        p.note { "Values the document does not give, each with the reason for the value chosen." }
        @if plan.assumptions.is_empty() { p { "None." } } @else {
            table {
                caption { (plan.assumptions.len()) " assumptions" }
                thead { tr { th scope="col" { "Field" } th scope="col" { "Why this value" } } }
                tbody {
                    @for a in &plan.assumptions {
                        tr { th scope="row" { code { (a.field) } } td { (a.reason) } }
                    }
                }
            }
        }
        @if !plan.document_inconsistencies.is_empty() {
            h2 #inconsistencies { "The document's own inconsistencies" }
            table {
                caption { "Kept as the document states them" }
                thead { tr { th scope="col" { "Field" } th scope="col" { "Note" } } }
                tbody {
                    @for n in &plan.document_inconsistencies {
                        tr { th scope="row" { code { (n.field) } } td { (n.note) } }
                    }
                }
            }
        }
        h2 #warnings { "Lint warnings" }
        @if p.warnings.is_empty() { p { "None." } } @else {
            table {
                caption { (p.warnings.len()) " warnings" }
                thead { tr { th scope="col" { "Code" } th scope="col" { "Field" } th scope="col" { "Message" } } }
                tbody {
                    @for w in &p.warnings {
                        tr { th scope="row" { code { (w.code) } } td { code { (w.path) } } td { (w.message) } }
                    }
                }
            }
        }
    };
    Ok(respond(page(&p.key(), Some(&viewer), Section::Plans, body)))
}

/// Every loaded version of one plan id.
#[get("/plans/{id}/versions")]
pub async fn versions(
    state: web::Data<AppState>,
    viewer: Viewer,
    path: web::Path<String>,
) -> Result<HttpResponse, ConsoleError> {
    let r: PlanRef = path
        .parse()
        .map_err(|e: crate::plan::model::PlanRefError| ConsoleError::BadRequest(e.to_string()))?;
    let loaded: Vec<&LoadedPlan> = state.plans.versions(&r.id).collect();
    if loaded.is_empty() {
        return Err(ConsoleError::NotFound(format!(
            "no plan {} is loaded",
            r.id
        )));
    }
    let body = html! {
        h1 { "Versions of " (r.id) }
        table {
            caption { (loaded.len()) " versions, oldest first" }
            thead { tr { th scope="col" { "Version" } th scope="col" { "Effective from" } th scope="col" { "SHA-256" } th scope="col" { "Changes from the previous" } } }
            tbody {
                @for (i, p) in loaded.iter().enumerate() {
                    tr {
                        th scope="row" { (plan_link(&p.key())) }
                        td { (p.plan.plan.effective_from) }
                        td { code.hash { (p.hash) } }
                        td {
                            @if i == 0 { "first version" } @else {
                                @let prev = loaded[i - 1];
                                a href=(format!("/console/diff?from={}&to={}", prev.key(), p.key())) {
                                    (crate::plan::diff::diff(&prev.plan, &p.plan).len()) " fields changed"
                                }
                            }
                        }
                    }
                }
            }
        }
        p { a href=(format!("/console/diff?from={}", loaded[0].key())) { "Compare with another plan" } }
    };
    Ok(respond(page(
        &format!("Versions of {}", r.id),
        Some(&viewer),
        Section::Plans,
        body,
    )))
}

#[derive(Deserialize)]
pub struct DiffQuery {
    from: Option<String>,
    to: Option<String>,
    /// Show equal fields too.
    all: Option<u8>,
}

/// Two plans side by side, the changed fields marked (`src/plan/diff.rs`).
#[get("/diff")]
pub async fn diff(
    state: web::Data<AppState>,
    viewer: Viewer,
    q: web::Query<DiffQuery>,
) -> Result<HttpResponse, ConsoleError> {
    let keys: Vec<String> = state.plans.iter().map(|p| p.key()).collect();
    let from = q
        .from
        .as_deref()
        .filter(|s| !s.is_empty())
        .map(|s| find(&state, s))
        .transpose()?;
    let to =
        q.to.as_deref()
            .filter(|s| !s.is_empty())
            .map(|s| find(&state, s))
            .transpose()?;
    let all = q.all == Some(1);
    let select = |name: &str, label: &str, chosen: Option<&LoadedPlan>| {
        html! {
            div {
                label for=(name) { (label) }
                select #(name) name=(name) {
                    option value="" { "— choose —" }
                    @for k in &keys {
                        option value=(k) selected[chosen.is_some_and(|c| &c.key() == k)] { (k) }
                    }
                }
            }
        }
    };
    let body = html! {
        h1 { "Compare two plans" }
        form.filters method="get" action="/console/diff" {
            (select("from", "From (left)", from))
            (select("to", "To (right)", to))
            div {
                label for="all" { "Fields" }
                select #all name="all" {
                    option value="0" selected[!all] { "changed only" }
                    option value="1" selected[all] { "all, changed marked" }
                }
            }
            button type="submit" { "Compare" }
        }
        @if let (Some(a), Some(b)) = (from, to) {
            @let rows = crate::plan::diff::side_by_side(&a.plan, &b.plan);
            @let changed = rows.iter().filter(|r| r.changed).count();
            p role="status" {
                strong { (changed) } " fields differ between " (plan_link(&a.key())) " and " (plan_link(&b.key())) "."
                @if !all { " " a href=(format!("/console/diff?from={}&to={}&all=1", a.key(), b.key())) { "Show every field" } }
            }
            div.wide {
                table #diff .diff {
                    caption { (a.key()) " and " (b.key()) " side by side" }
                    thead {
                        tr {
                            th scope="col" { "Field" }
                            th scope="col" { (a.key()) }
                            th scope="col" { (b.key()) }
                            th scope="col" { "Changed" }
                        }
                    }
                    tbody {
                        @for r in rows.iter().filter(|r| all || r.changed) {
                            tr.changed[r.changed] {
                                th scope="row" { code { (r.path) } }
                                td { @if let Some(v) = &r.before { (value(v)) } @else { em { "absent" } } }
                                td { @if let Some(v) = &r.after { (value(v)) } @else { em { "absent" } } }
                                td { @if r.changed { strong { "≠ changed" } } @else { "=" } }
                            }
                        }
                    }
                }
            }
        }
    };
    Ok(respond(page(
        "Compare plans",
        Some(&viewer),
        Section::Plans,
        body,
    )))
}

#[derive(Deserialize)]
pub struct SeriesQuery {
    bet: Option<String>,
}

/// The convergence of one simulated bet type's return, with the figures behind the plot.
#[get("/plans/{plan}/convergence")]
pub async fn convergence(
    state: web::Data<AppState>,
    viewer: Viewer,
    path: web::Path<String>,
    q: web::Query<SeriesQuery>,
) -> Result<HttpResponse, ConsoleError> {
    let p = find(&state, &path)?;
    let Status::Done(report) = state.console.rtp.status(&p.hash) else {
        return Err(ConsoleError::NotFound(format!(
            "the returns of {} are not computed (yet)",
            p.key()
        )));
    };
    let series = match &q.bet {
        Some(b) => report.convergence.iter().find(|s| &s.bet == b),
        None => report.convergence.first(),
    }
    .ok_or_else(|| ConsoleError::NotFound("no simulated bet of that name".into()))?;
    let label = report
        .row(&series.bet)
        .map_or(series.bet.clone(), |r| r.label.clone());
    let body = html! {
        h1 { "Convergence: " (cs(&label)) " " small.muted { (p.key()) } }
        @if let Some(svg) = super::plot::convergence(series, &label) {
            figure.plot {
                (super::layout::raw(svg))
                figcaption { "The running return after each of " (series.points.len()) " runs, with its 95 % interval." }
            }
        }
        table {
            caption { "The running return after each run" }
            thead { tr { th scope="col" class="num" { "Rounds" } th scope="col" class="num" { "Return" } th scope="col" class="num" { "95 % interval" } } }
            tbody {
                @for pt in &series.points {
                    tr {
                        th scope="row" class="num" { (count(pt.rounds)) }
                        td.num { (format!("{:.3} %", pt.rtp * 100.0)) }
                        td.num { (format!("{:.3} – {:.3} %", pt.ci95[0] * 100.0, pt.ci95[1] * 100.0)) }
                    }
                }
            }
        }
        p { a href=(format!("/console/plans/{}#rtp", p.key())) { "Back to the plan's returns" } }
    };
    Ok(respond(page(
        &format!("Convergence of {label}"),
        Some(&viewer),
        Section::Plans,
        body,
    )))
}
