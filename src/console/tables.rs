//! Tables and rounds as an auditor reads them: the open tables, a table's rounds, a round's
//! whole recall with each entry's inclusion proof checked against the latest checkpoint, and
//! one proof on its own (also as the JSON file `pitboss-audit check-proof` reads).

use actix_web::{get, web, HttpResponse};
use ed25519_dalek::VerifyingKey;
use maud::{html, Markup};
use pitboss_audit::note::NoteVerifier;
use pitboss_audit::proof::{check_proof, CheckedProof, InclusionProofFile};
use serde::Deserialize;
use serde_json::Value;

use super::auth::Viewer;
use super::data::{self, LogEntry, NoProof};
use super::layout::{count, cs, json, money, page, ts, value, Section};
use super::{blocking_on, respond, ConsoleError, Log};
use crate::api::startup::AppState;
use crate::money::Currency;

/// Most entries of a round one page shows.
pub const RECALL_PAGE: i64 = 500;

/// The keys a checkpoint of the log may be signed with (every key the log has announced).
fn keys(svc: &crate::service::Service) -> Vec<VerifyingKey> {
    data::key_validity(svc)
        .iter()
        .filter_map(|k| NoteVerifier::from_vkey(&k.vkey).ok().map(|v| *v.key()))
        .collect()
}

/// A proof made and checked, or why not.
pub enum Checked {
    Verified(Box<InclusionProofFile>, CheckedProof),
    Failed(Option<Box<InclusionProofFile>>, String),
    NotCovered(u64),
}

fn check(
    svc: &crate::service::Service,
    seq: u64,
    keys: &[VerifyingKey],
) -> Result<Checked, crate::store::StoreError> {
    Ok(match data::inclusion_proof(svc, seq)? {
        Ok(file) => match check_proof(&file, keys) {
            Ok(c) => Checked::Verified(Box::new(file), c),
            Err(e) => Checked::Failed(Some(Box::new(file)), e.to_string()),
        },
        Err(NoProof::NotCovered(size)) => Checked::NotCovered(size),
        Err(NoProof::NoCheckpoint) => {
            Checked::Failed(None, "no checkpoint has been signed yet".into())
        }
        Err(NoProof::NoEntry) => Checked::Failed(None, format!("no entry {seq}")),
        Err(NoProof::Failed(e)) => Checked::Failed(None, e),
    })
}

/// A proof's result; `link`: with a link to the proof's page (of the log `q` names).
fn checked_cell(seq: u64, c: &Checked, link: Option<&str>) -> Markup {
    html! {
        @match c {
            Checked::Verified(_, ok) => {
                span.good { "✓ included" } " (tree of " (count(ok.tree_size)) ")"
                @if let Some(q) = link { " · " a href=(format!("/console/proofs/{seq}{q}")) { "proof" } }
            },
            Checked::Failed(_, e) => { span.bad { "✗ not verified" } " " (e) },
            Checked::NotCovered(n) => { span.muted { "not yet covered (checkpoint of " (n) ")" } },
        }
    }
}

fn table_link(t: &str) -> Markup {
    html! { a href=(format!("/console/tables/{t}")) { (t) } }
}

fn round_link(r: &str) -> Markup {
    html! { a href=(format!("/console/rounds/{r}")) { (r) } }
}

/// The open tables.
#[get("/tables")]
pub async fn list(
    state: web::Data<AppState>,
    viewer: Viewer,
) -> Result<HttpResponse, ConsoleError> {
    let tables = super::all_open_tables(&state).await?;
    let body = html! {
        h1 { "Open tables" }
        @if tables.is_empty() {
            p { "No table is open." }
        } @else {
            table #tables {
                caption { (tables.len()) " open tables" }
                thead {
                    tr {
                        th scope="col" { "Table" }
                        th scope="col" { "Operator" }
                        th scope="col" { "Plan version" }
                        th scope="col" { "Mode" }
                        th scope="col" class="num" { "Rounds" }
                        th scope="col" { "Current round" }
                    }
                }
                tbody {
                    @for t in &tables {
                        tr {
                            th scope="row" { (table_link(&t.table)) }
                            td { (t.operator) }
                            td { a href=(format!("/console/plans/{}", t.plan)) { (t.plan) } }
                            td { (value(&serde_json::to_value(t.mode).unwrap_or(Value::Null))) }
                            td.num { (t.rounds) }
                            td {
                                @match &t.current_round {
                                    Some(r) => { (round_link(r)) " (" (t.current_phase.as_deref().unwrap_or("")) ")" },
                                    None => span.muted { "none" },
                                }
                            }
                        }
                    }
                }
            }
        }
        p { "Closed tables and every round are in the " a href="/console/log/entries?kind=table_opened" { "audit log" } "." }
    };
    Ok(respond(page(
        "Tables",
        Some(&viewer),
        Section::Tables,
        body,
    )))
}

#[derive(Deserialize)]
pub struct Before {
    before: Option<u64>,
}

/// `?log=`: the log an entry's proof is read from (the service's by default).
#[derive(Deserialize)]
pub struct LogQuery {
    log: Option<String>,
}

/// One table and its rounds, newest first.
#[get("/tables/{table}")]
pub async fn table(
    state: web::Data<AppState>,
    viewer: Viewer,
    path: web::Path<String>,
    q: web::Query<Before>,
) -> Result<HttpResponse, ConsoleError> {
    let id = path.into_inner();
    let before = q.before;
    let mut found = None;
    for log in Log::holding(&state, &id) {
        let id2 = id.clone();
        let (t, rounds) = blocking_on(&log.svc, move |svc| {
            Ok((
                data::table(svc, &id2),
                data::table_rounds(svc, &id2, before)?,
            ))
        })
        .await?;
        if t.is_some() || !rounds.items.is_empty() {
            found = Some((log, t, rounds));
            break;
        }
    }
    let Some((log, t, rounds)) = found else {
        return Err(ConsoleError::NotFound(format!("no table {id}")));
    };
    let lq = log.suffix();
    let body = html! {
        h1 { "Table " (id) }
        @if let Some(t) = &t {
            dl.facts {
                dt { "Operator" } dd { (t.operator) }
                dt { "Plan version" } dd { a href=(format!("/console/plans/{}", t.plan)) { (t.plan) } }
                dt { "Mode" } dd { (value(&serde_json::to_value(t.mode).unwrap_or(Value::Null))) }
                dt { "Open" } dd { @if t.open { "yes" } @else { "no (closed)" } }
                dt { "Current round" } dd { @match &t.current_round { Some(r) => (round_link(r)), None => "none" } }
            }
        }
        p { a href=(format!("/console/log/entries?{}table={id}", log.q())) { "Every entry of this table" } }
        table #rounds {
            caption { "Rounds, newest first" }
            thead { tr { th scope="col" { "Round" } th scope="col" { "Opened (UTC)" } th scope="col" class="num" { "Entry" } } }
            tbody {
                @for e in &rounds.items {
                    tr {
                        th scope="row" { @if let Some(r) = &e.round { (round_link(r)) } }
                        td { (e.payload["opened_at"].as_str().unwrap_or(&e.ts)) }
                        td.num { a href=(format!("/console/log/entries/{}{lq}", e.seq)) { (e.seq) } }
                    }
                }
            }
        }
        (super::layout::pager(&format!("/console/tables/{id}?"), before, rounds.older, "rounds"))
    };
    Ok(respond(page(
        &format!("Table {id}"),
        Some(&viewer),
        Section::Tables,
        body,
    )))
}

/// What a recall entry says, in a line or a small table.
fn summary(e: &LogEntry, cur: Currency) -> Markup {
    let p = &e.payload;
    let m = |v: &Value| v.as_i64().map(|x| money(x, cur)).unwrap_or_default();
    let s = |v: &Value| value(v);
    let kind = e.kind.as_str();
    html! {
        @match kind {
            "round_opened" => {
                "Round " (s(&p["number"])) " opened; betting until " (s(&p["betting_deadline"]))
                @if let Some(c) = p["rng_commitment"].as_str() { "; RNG seed committed: " code.hash { (c) } }
            },
            "bet_accepted" => {
                "Bet " code { (e.bet.as_deref().unwrap_or("")) } " of " strong { (s(&p["player"])) } ": "
                code { (s(&p["request"]["bet"])) } " "
                @if let Some(n) = p["request"]["numbers"].as_array() { "on " (n.iter().map(s).collect::<Vec<_>>().join("-")) " " }
                @if let Some(f) = p["request"]["field"].as_str() { "on " (f) " " }
                @if let Some(x) = p["request"]["seat"].as_u64() { "box " (x) " " }
                "stake " (m(&p["request"]["stake_minor"]))
            },
            "bet_refused" | "event_refused" | "command_refused" => {
                span.bad { "Refused" } " " code { (s(&p["refusal"]["code"])) } ": " (s(&p["refusal"]["message"]))
                @if let Some(c) = p["refusal"]["clause"].as_str() { " (" (cs(c)) ")" }
            },
            "card_dealt" => { "Card " strong { (s(&p["card"])) } " to " (s(&p["to"])) " (" (s(&p["source"])) ")" },
            "result_recorded" => { "Result " strong { (s(&p["number"])) } " (" (s(&p["source"])) ")" },
            "decision_taken" => {
                strong { (s(&p["player"])) } " decided " code { (s(&p["decision"])) }
                @if p["automatic"].as_bool() == Some(true) { " (automatic: " (s(&p["reason"])) ")" }
            },
            "round_settled" | "round_settled_part" => {
                @if kind == "round_settled_part" {
                    "Settlement, continued in the next entry (a part of a settlement too large for one entry)"
                } @else {
                    "Settled: staked " (m(&p["stake_minor"])) ", paid " (m(&p["paid_minor"]))
                }
                @if let Some(seed) = p["rng_seed"].as_str() { "; RNG seed revealed: " code.hash { (seed) } }
                @if let Some(settled) = p["settlements"].as_array() {
                    table.settlement {
                        caption { "Settlement per bet" }
                        thead { tr { th scope="col" { "Bet" } th scope="col" { "Player" } th scope="col" class="num" { "Stake" } th scope="col" class="num" { "Returned" } th scope="col" class="num" { "Win" } th scope="col" class="num" { "Credited" } } }
                        tbody {
                            @for b in settled {
                                tr {
                                    th scope="row" { code { (s(&b["bet"])) } }
                                    td { (s(&b["player"])) }
                                    td.money { (m(&b["stake_minor"])) }
                                    td.money { (m(&b["returned_minor"])) }
                                    td.money { (m(&b["win_minor"])) }
                                    td.money { (m(&b["total_minor"])) }
                                }
                            }
                        }
                    }
                }
            },
            "round_voided" | "round_voided_part" => {
                @if kind == "round_voided_part" {
                    "Refunds of a void, continued in the next entry (a part of a void too large for one entry)"
                } @else {
                    span.flag { "Voided" } " " (s(&p["reason"])) "; refunded " (m(&p["refund_minor"]))
                }
                @if let Some(refunds) = p["refunds"].as_array() {
                    ul { @for r in refunds { li { code { (s(&r["bet"])) } " " (s(&r["player"])) ": " (m(&r["refund_minor"])) } } }
                }
            },
            "bet_refunded" => { "Refund of " code { (e.bet.as_deref().unwrap_or("")) } " to " (s(&p["player"])) ": " (m(&p["refund_minor"])) " (" (s(&p["reason"])) ")" },
            "misdeal" => { span.flag { "Misdeal" } " " (s(&p["reason"])) },
            "spin_invalid" => { span.flag { "Invalid spin" } " " (s(&p["reason"])) },
            "betting_closed" => { "Betting closed (" (s(&p["reason"])) ")" },
            "blackjack_input" => {
                @if let Some(to) = p.get("to").filter(|v| !v.is_null()) { "Card " strong { (s(&p["input"]["card"])) } " to " (s(to)) }
                @else { "Input " code { (p["input"].to_string()) } }
                @if p["automatic"].as_bool() == Some(true) { " (automatic: " (s(&p["reason"])) ")" }
            },
            _ => { code { (p.to_string().chars().take(240).collect::<String>()) } },
        }
    }
}

#[derive(Deserialize)]
pub struct After {
    after: Option<u64>,
}

/// A round's whole recall, each entry's proof checked against the latest checkpoint.
#[get("/rounds/{round}")]
pub async fn round(
    state: web::Data<AppState>,
    viewer: Viewer,
    path: web::Path<String>,
    q: web::Query<After>,
) -> Result<HttpResponse, ConsoleError> {
    let id = path.into_inner();
    let after = q.after;
    let mut found = None;
    for log in Log::holding(&state, &id) {
        // Proofs are made against the latest checkpoint: sign one covering what is logged.
        let signed = data::sign_pending(&log.svc).await;
        let id2 = id.clone();
        let (summary_view, entries, cp) = blocking_on(&log.svc, move |svc| {
            let recall = data::round_recall(svc, &id2, after, RECALL_PAGE + 1)?;
            let keys = keys(svc);
            let mut checked = Vec::new();
            for e in recall {
                let c = check(svc, e.seq, &keys)?;
                checked.push((e, c));
            }
            Ok((
                data::round(svc, &id2),
                checked,
                data::latest_checkpoint(svc)?,
            ))
        })
        .await?;
        if summary_view.is_some() || !entries.is_empty() {
            found = Some((log, signed, summary_view, entries, cp));
            break;
        }
    }
    let Some((log, signed, summary_view, entries, cp)) = found else {
        return Err(ConsoleError::NotFound(format!("no round {id}")));
    };
    let lq = log.suffix();
    let more = entries.len() as i64 > RECALL_PAGE;
    let entries = &entries[..entries.len().min(RECALL_PAGE as usize)];
    let plan_key = summary_view.as_ref().map(|r| r.plan.clone());
    let cur = plan_key
        .as_deref()
        .and_then(|k| k.parse().ok())
        .and_then(|r| state.plans.get(&r))
        .map_or(Currency::CZK, |p| p.plan.plan.currency);
    let verified = entries
        .iter()
        .filter(|(_, c)| matches!(c, Checked::Verified(..)))
        .count();
    let body = html! {
        h1 { "Round " (id) }
        @if let Some(r) = &summary_view {
            dl.facts {
                dt { "Table" } dd { (table_link(&r.table)) }
                dt { "Plan version" } dd { a href=(format!("/console/plans/{}", r.plan)) { (r.plan) } }
                dt { "Number" } dd { (r.number) }
                dt { "Phase" } dd { (r.phase) }
                dt { "Opened" } dd { (r.opened_at.format("%Y-%m-%d %H:%M:%S UTC")) }
                dt { "Bets" } dd { (r.bets) }
            }
        }
        h2 { "Recall" }
        p role="status" {
            (verified) " of " (entries.len()) " entries shown verified by their inclusion proof against the latest checkpoint"
            @if let Some(cp) = &cp { " (tree size " (count(cp.checkpoint.size)) ")" }
            ", checked here with " code { "pitboss_audit::proof::check_proof" } " and the log's public keys."
            @if let Err(e) = &signed { " " span.bad { "No new checkpoint could be signed: " (e) } }
        }
        div.wide {
            table #recall {
                caption { "Every entry of the round, in order" }
                thead {
                    tr {
                        th scope="col" class="num" { "Seq" }
                        th scope="col" { "Time (UTC)" }
                        th scope="col" { "Kind" }
                        th scope="col" { "What happened" }
                        th scope="col" { "Inclusion proof" }
                    }
                }
                tbody {
                    @for (e, c) in entries {
                        tr {
                            th scope="row" class="num" { a href=(format!("/console/log/entries/{}{lq}", e.seq)) { (e.seq) } }
                            td.nowrap { (ts(&e.ts)) }
                            td { code { (e.kind) } }
                            td { (summary(e, cur)) }
                            td { (checked_cell(e.seq, c, Some(&lq))) }
                        }
                    }
                }
            }
        }
        @if more {
            nav.pager aria-label="More of the recall" {
                a href=(format!("/console/rounds/{id}?after={}", entries.last().map_or(0, |(e, _)| e.seq))) { "Later entries »" }
            }
        }
    };
    Ok(respond(page(
        &format!("Round {id}"),
        Some(&viewer),
        Section::Tables,
        body,
    )))
}

/// One entry's inclusion proof, checked.
#[get("/proofs/{seq}")]
pub async fn proof(
    state: web::Data<AppState>,
    viewer: Viewer,
    path: web::Path<u64>,
    q: web::Query<LogQuery>,
) -> Result<HttpResponse, ConsoleError> {
    let seq = path.into_inner();
    let log = Log::named(&state, q.log.as_deref())?;
    let lq = log.suffix();
    let signed = data::sign_pending(&log.svc).await;
    let (entry, c, keys_text) = blocking_on(&log.svc, move |svc| {
        let k = keys(svc);
        let validity = data::key_validity(svc);
        Ok((data::entry(svc, seq)?, check(svc, seq, &k)?, validity))
    })
    .await?;
    let entry = entry.ok_or_else(|| ConsoleError::NotFound(format!("no entry {seq}")))?;
    let file = match &c {
        Checked::Verified(f, _) => Some(f.as_ref()),
        Checked::Failed(f, _) => f.as_deref(),
        Checked::NotCovered(_) => None,
    };
    let body = html! {
        h1 { "Inclusion proof of entry " (seq) }
        p role="status" { (checked_cell(seq, &c, None)) }
        @if let Err(e) = &signed { p.bad { "No new checkpoint could be signed: " (e) } }
        dl.facts {
            dt { "Entry" } dd { a href=(format!("/console/log/entries/{seq}{lq}")) { code { (entry.kind) } " at " (entry.ts) } }
            @if let Some(r) = &entry.round { dt { "Round" } dd { (round_link(r)) } }
            @if let Checked::Verified(_, ok) = &c {
                dt { "Leaf hash" } dd { code.hash { (ok.leaf_hash.to_string()) } }
                dt { "Log" } dd { code { (ok.origin) } }
            }
        }
        @if let Some(f) = file {
            p { a href=(format!("/console/proofs/{seq}.json{lq}")) download=(format!("proof-{seq}.json")) { "The proof file (JSON)" }
                ", which " code { "pitboss-audit check-proof" } " verifies offline with the public key "
                "(" code { "GET /v1/audit/public-key" } ")." }
            h2 { "Audit path" }
            p.note { "RFC 6962 path from the leaf to the root of the tree of " (count(f.tree_size)) " entries, the leaf's sibling first." }
            ol.mono {
                @for h in &f.path { li { code.hash { (h.to_string()) } } }
            }
            h2 { "Checkpoint" }
            pre { (f.checkpoint) }
        }
        h2 { "Keys the check accepts" }
        ul { @for k in &keys_text { li { code.hash { (k.vkey) } } } }
        h2 { "The entry's canonical bytes" }
        pre { (entry.canonical) }
    };
    Ok(respond(page(
        &format!("Proof of entry {seq}"),
        Some(&viewer),
        Section::Tables,
        body,
    )))
}

/// One entry's inclusion proof as the JSON file `pitboss-audit check-proof` reads.
#[get("/proofs/{seq}.json")]
pub async fn proof_json(
    state: web::Data<AppState>,
    _viewer: Viewer,
    path: web::Path<u64>,
    q: web::Query<LogQuery>,
) -> Result<HttpResponse, ConsoleError> {
    let seq = path.into_inner();
    let log = Log::named(&state, q.log.as_deref())?;
    data::sign_pending(&log.svc)
        .await
        .map_err(ConsoleError::Unavailable)?;
    let made = blocking_on(&log.svc, move |svc| data::inclusion_proof(svc, seq)).await?;
    match made {
        Ok(file) => Ok(HttpResponse::Ok()
            .content_type("application/json")
            .body(json(&serde_json::to_value(file).unwrap_or(Value::Null)))),
        Err(NoProof::NoEntry) => Err(ConsoleError::NotFound(format!("no entry {seq}"))),
        Err(NoProof::NotCovered(n)) => Err(ConsoleError::NotFound(format!(
            "entry {seq} is not covered by the latest checkpoint ({n})"
        ))),
        Err(NoProof::NoCheckpoint) => Err(ConsoleError::NotFound("no checkpoint yet".into())),
        Err(NoProof::Failed(e)) => Err(ConsoleError::Unavailable(e)),
    }
}
