//! Which node answers a request when several nodes share one PostgreSQL with a log per
//! operator (`serve --node-url … --log-per-operator`, issue 17).
//!
//! Every log has a lease of its own (its row `writer_lease` in its own schema), so different
//! nodes write different logs: one node writes the service's log (plans loaded, API keys,
//! approvals) and each operator's log is written by whichever node holds its lease. Every node
//! accepts every request and sends it to the node that writes its log:
//!
//! - the request's log is the one `?log=` names; else the operator an id is scoped to
//!   (`/v1/tables/opA:t1`, `/v1/rounds/opA:t1.3`); else the caller's operator (an operator's
//!   key; a key this node does not know is looked for in the store first, so a key made a
//!   moment ago through another node places its operator's log where its first request
//!   arrives); else the service's (an admin's, a regulator's or an auditor's request, the
//!   console's pages, a key the store does not hold: the node that writes the service's log
//!   answers `401`). A request with no key is answered here;
//! - a log this node writes is answered here; a log another live node writes is passed to it
//!   as received ([`super::standby::pass_to`]), its answer passed back with
//!   `Pitboss-Writer: <its address>`;
//! - an operator's log no live node writes (never made, or its node died and the lease ran
//!   out) is taken here: its lease, then its state from the store (snapshot + tail), by the
//!   request itself. So a node's logs go to the others when it dies, each with the first
//!   request for it after its lease runs out (at once when the dead node was of this host).
//!
//! - the audit log's reads that need no writer (entries, the daily summary, checkpoints,
//!   proofs against a stored checkpoint) are answered by every node from the store, for every
//!   log ([`super::stored`]), from the read replica when one is configured.
//!
//! Where the logs are is read from the leases, at most every [`HOLDER_TTL`] per log. A request
//! is passed on once at most (`Pitboss-Forwarded-By`): a node that receives a forwarded
//! request answers it (taking the log if it must), so two nodes that disagree never pass a
//! request back and forth.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{web, FromRequest, ResponseError};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;

use super::auth::Role;
use super::logs::SERVICE_LOG;
use super::problem::{unavailable, Problem};
use super::standby::{pass_to, NotPassed, FORWARDED_BY};
use super::startup::AppState;
use crate::store::lease::Holder;
use crate::store::{self, DatabaseUrl, DbConnection};

/// How long a log's lease, as read, is believed before it is read again.
pub const HOLDER_TTL: Duration = Duration::from_millis(200);

/// How often at most a node reads the API keys again for a key it does not know.
pub const KEYS_AGAIN: Duration = Duration::from_millis(100);

/// `pitboss_node_forwarded_total{outcome}`.
pub type Forwarded = Family<[(&'static str, &'static str); 1], Counter>;

/// What a node knows of where the logs are written.
pub struct Router {
    /// This node's address (`--node-url`).
    pub me: String,
    /// The nodes' shared secret, sent with what this node passes on.
    node_token: String,
    /// The service's store (the leases are read there, by schema).
    url: DatabaseUrl,
    /// Whether this node writes the service's log.
    pub home: bool,
    /// How long a request passed on may take.
    pub deadline: Duration,
    conn: Mutex<Option<DbConnection>>,
    /// Each log's lease as last read, and when (only logs with a lease: bounded by the
    /// operators' logs made).
    holders: Mutex<HashMap<String, (Instant, Option<Holder>)>>,
    /// When the keys were last read for a key this node did not know (held while they are
    /// read: a second request with a new key waits for that read instead of passing on).
    keys_read: tokio::sync::Mutex<Option<Instant>>,
    /// Requests passed to another node, by outcome: `answered`, `unreachable` (not sent:
    /// nothing recorded), `unknown` (sent, no answer), `refused` (no node writes the
    /// service's log now).
    pub forwarded: Forwarded,
}

/// The log a request is for.
#[derive(Debug, PartialEq, Eq)]
enum Target {
    /// Answered by whichever node receives it (no key, or the node's own routes).
    Here,
    Service,
    Operator(String),
    /// A key this node has not read (yet): made a moment ago on the node that writes the
    /// service's log, or no key at all.
    UnknownKey,
}

impl Router {
    /// `deadline`: how long a request passed on may take ([`super::startup::ServeConfig::pass_deadline`]).
    pub fn new(
        me: &str,
        node_token: &str,
        url: &DatabaseUrl,
        home: bool,
        deadline: Duration,
    ) -> Router {
        Router {
            me: me.to_owned(),
            node_token: node_token.to_owned(),
            url: url.clone(),
            home,
            deadline,
            conn: Mutex::new(None),
            holders: Mutex::new(HashMap::new()),
            keys_read: tokio::sync::Mutex::new(None),
            forwarded: Forwarded::default(),
        }
    }

    /// The same router for a node that has just taken the service's log over (what it
    /// counted is kept).
    pub fn at_home(&self) -> Router {
        let mut home = Router::new(&self.me, &self.node_token, &self.url, true, self.deadline);
        home.forwarded = self.forwarded.clone();
        home
    }

    /// Reads the API keys again from the store, unless they were read less than
    /// [`KEYS_AGAIN`] ago (a flood of unknown keys costs a read per interval, not per
    /// request).
    async fn read_keys(&self, state: &web::Data<AppState>) {
        let mut last = self.keys_read.lock().await;
        if last.is_some_and(|t| t.elapsed() < KEYS_AGAIN) {
            return;
        }
        *last = Some(Instant::now());
        let (state, url) = (state.clone(), self.url.clone());
        let read = web::block(move || {
            let mut conn = store::connect(&url).map_err(|e| e.to_string())?;
            state.keys.refresh(&mut conn).map_err(|e| e.to_string())
        })
        .await;
        if let Ok(Err(e)) = read {
            tracing::warn!(error = %e, "cannot read the API keys");
        }
    }

    fn count(&self, outcome: &'static str) {
        self.forwarded.get_or_create(&[("outcome", outcome)]).inc();
    }

    /// The lease of `log` (the service's, or an operator's), read at most every
    /// [`HOLDER_TTL`]; `None` when there is none or it cannot be read now.
    async fn holder(self: &Arc<Self>, log: &str) -> Option<Holder> {
        if let Some((at, h)) = self.holders.lock().expect("holders lock").get(log) {
            if at.elapsed() < HOLDER_TTL {
                return h.clone();
            }
        }
        let (me, name) = (self.clone(), log.to_owned());
        let read = web::block(move || me.read_holder(&name)).await;
        match read {
            Ok(Ok(h)) => {
                // Only logs that have a lease are kept: their number is bounded by the
                // operators, where `?log=` may name anything.
                if h.is_some() {
                    self.holders
                        .lock()
                        .expect("holders lock")
                        .insert(log.to_owned(), (Instant::now(), h.clone()));
                }
                h
            }
            Ok(Err(e)) => {
                tracing::warn!(log, error = %e, "cannot read the log's lease");
                None
            }
            Err(_) => None,
        }
    }

    fn read_holder(&self, log: &str) -> Result<Option<Holder>, String> {
        let mut guard = self.conn.lock().expect("router connection lock");
        let conn = store::connected(&self.url, &mut guard).map_err(|e| e.to_string())?;
        let read = if log == SERVICE_LOG {
            store::lease::peek(conn)
        } else {
            store::lease::peek_in(conn, &store::log_namespace(log))
        };
        read.map_err(|e| {
            *guard = None;
            e.to_string()
        })
    }
}

/// The operator an id in a table's or a round's path is scoped to (`/v1/tables/opA:t1/…`).
fn scoped_operator(path: &str) -> Option<String> {
    let mut parts = path.split('/');
    let (Some(""), Some("v1"), Some("tables" | "rounds"), Some(id)) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    let id = id.replace("%3A", ":").replace("%3a", ":");
    let (op, _) = id.split_once(crate::round::SCOPE)?;
    (!op.is_empty()).then(|| op.to_owned())
}

/// `?log=` of the query string.
fn query_log(query: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Log {
        log: Option<String>,
    }
    web::Query::<Log>::from_query(query).ok()?.into_inner().log
}

/// The node's own routes: answered by every node about itself.
fn own_route(path: &str) -> bool {
    matches!(path, "/healthz" | "/readyz" | "/metrics" | "/openapi.json")
        || path == "/docs"
        || path.starts_with("/docs/")
}

/// The audit reads every node answers from the store for every log (entries, the daily
/// summary, checkpoints, consistency proofs, inclusion proofs against a stored checkpoint:
/// `size=`): [`super::stored`]. An inclusion proof without `size` signs a checkpoint first,
/// which the log's writer does.
fn read_from_store(req: &ServiceRequest) -> bool {
    if req.method() != actix_web::http::Method::GET {
        return false;
    }
    match req.path() {
        "/v1/audit/entries"
        | "/v1/audit/daily-summary"
        | "/v1/audit/checkpoint"
        | "/v1/audit/consistency" => true,
        p if p.starts_with("/v1/audit/proof/") => query_has_size(req.query_string()),
        _ => false,
    }
}

/// Whether a query string sets `size=`.
fn query_has_size(query: &str) -> bool {
    query
        .split('&')
        .any(|pair| pair.split('=').next() == Some("size"))
}

fn target(state: &AppState, req: &ServiceRequest) -> Target {
    let path = req.path();
    if own_route(path) {
        return Target::Here;
    }
    // The console's sessions live on the node that writes the service's log.
    if path == "/console" || path.starts_with("/console/") {
        return Target::Service;
    }
    let header = req
        .headers()
        .get(actix_web::http::header::AUTHORIZATION)
        .map(|v| v.to_str().unwrap_or_default());
    let facts = state.keys.facts_of_header(header);
    // Read here from the store, with a key this node knows (one made a moment ago elsewhere
    // is looked for in the store first, as for every request).
    if state.stored_reads.is_some() && read_from_store(req) {
        return match (header, facts) {
            (Some(_), None) => Target::UnknownKey,
            _ => Target::Here,
        };
    }
    if let Some(log) = query_log(req.query_string()) {
        return match log.as_str() {
            SERVICE_LOG => Target::Service,
            _ => Target::Operator(log),
        };
    }
    if let Some(op) = scoped_operator(path) {
        return Target::Operator(op);
    }
    match (header, facts) {
        (None, _) => Target::Here,
        (Some(_), Some(f)) if f.role == Role::Operator => {
            f.operator.map_or(Target::Service, Target::Operator)
        }
        (Some(_), Some(_)) => Target::Service,
        (Some(_), None) => Target::UnknownKey,
    }
}

/// The middleware: answers here what this node writes (or takes now), passes the rest on.
pub async fn route(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let Some(state) = req.app_data::<web::Data<AppState>>().cloned() else {
        return next.call(req).await.map(|r| r.map_into_boxed_body());
    };
    let Some(router) = state.router.clone() else {
        return next.call(req).await.map(|r| r.map_into_boxed_body());
    };
    let mut to = target(&state, &req);
    if to == Target::UnknownKey {
        // A key made a moment ago on another node: the keys are read again (at most every
        // [`KEYS_AGAIN`]), so its operator's first request places the log here, where it
        // arrived.
        router.read_keys(&state).await;
        to = match target(&state, &req) {
            // Still unknown here: the node that writes the service's log answers it.
            Target::UnknownKey => Target::Service,
            known => known,
        };
    }
    let log = match to {
        Target::Here | Target::UnknownKey => None,
        Target::Service if router.home => None,
        Target::Service => Some(SERVICE_LOG.to_owned()),
        Target::Operator(op) => match &state.logs {
            Some(logs) if logs.get(&op).is_none() => Some(op),
            _ => None,
        },
    };
    let Some(log) = log else {
        return next.call(req).await.map(|r| r.map_into_boxed_body());
    };
    // A request passed on once is answered where it arrived: an operator's log is taken
    // here if no node holds it (else `503`, and the client's retry finds where it went).
    if req.headers().contains_key(FORWARDED_BY) {
        if log != SERVICE_LOG {
            if let Err(p) = take(&state, &log).await {
                return Ok(req.into_response(p.error_response()));
            }
        }
        return next.call(req).await.map(|r| r.map_into_boxed_body());
    }
    let holder = router.holder(&log).await;
    let address = holder
        .as_ref()
        .filter(|h| !h.is_free())
        .and_then(|h| h.address.clone())
        .filter(|a| *a != router.me);
    let Some(address) = address else {
        if log == SERVICE_LOG {
            router.count("refused");
            return Ok(req.into_response(
                unavailable(
                    "no node writes the service's log now (its node stopped; another takes it \
                     over once its lease runs out); nothing was recorded, retry with the same \
                     Idempotency-Key",
                )
                .error_response(),
            ));
        }
        // No live node writes this operator's log: this node takes it, if it was made (a
        // command makes it otherwise).
        if let Err(p) = take(&state, &log).await {
            return Ok(req.into_response(p.error_response()));
        }
        return next.call(req).await.map(|r| r.map_into_boxed_body());
    };
    let (http, mut payload) = req.into_parts();
    let body = match web::Bytes::from_request(&http, &mut payload).await {
        Ok(b) => b,
        Err(e) => return Ok(ServiceResponse::new(http, e.error_response())),
    };
    let Some(client) = http.app_data::<web::Data<awc::Client>>().cloned() else {
        return Ok(ServiceResponse::new(
            http,
            unavailable("this node cannot pass requests on").error_response(),
        ));
    };
    let answer = match pass_to(
        &http,
        body,
        &address,
        &router.me,
        &router.node_token,
        &client,
    )
    .await
    {
        Ok(back) => {
            router.count("answered");
            back
        }
        Err(NotPassed::Unreachable(e)) => {
            router.count("unreachable");
            unavailable(&format!(
                "the node that writes the log {log:?} cannot be reached at {address} ({e}); \
                 nothing was recorded, retry with the same Idempotency-Key (another node takes \
                 the log over once its lease runs out)"
            ))
            .error_response()
        }
        Err(NotPassed::Unknown(e)) => {
            router.count("unknown");
            unavailable(&format!(
                "the request was sent to the node that writes the log {log:?} at {address}, \
                 which did not answer ({e}): whether it was recorded is not known here; retry \
                 with the same Idempotency-Key, which gives the first answer or records it once"
            ))
            .error_response()
        }
    };
    Ok(ServiceResponse::new(http, answer))
}

/// Opens here the operator's log no live node writes, when it has been made; a log never made
/// is left to the command that makes it.
async fn take(state: &AppState, operator: &str) -> Result<(), Problem> {
    let Some(logs) = state.logs.clone() else {
        return Ok(());
    };
    let op = operator.to_owned();
    match web::block(move || logs.open_recorded(&op)).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(unavailable(&format!(
            "the operator's log cannot be opened on this node now ({e}); nothing was recorded, \
             retry with the same Idempotency-Key"
        ))),
        Err(_) => Err(unavailable("the service is stopping")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_operator_of_a_scoped_path() {
        assert_eq!(scoped_operator("/v1/tables/opA:t1"), Some("opA".into()));
        assert_eq!(
            scoped_operator("/v1/rounds/opA%3At1.3/bets"),
            Some("opA".into())
        );
        assert_eq!(scoped_operator("/v1/rounds/t1.3"), None);
        assert_eq!(scoped_operator("/v1/tables"), None);
        assert_eq!(scoped_operator("/v1/players/a:b"), None);
        assert_eq!(scoped_operator("/v1/tables/:t1"), None);
    }

    #[test]
    fn the_log_a_query_names() {
        assert_eq!(query_log("after=3&log=opA"), Some("opA".into()));
        assert_eq!(query_log("log=op%20A"), Some("op A".into()));
        assert_eq!(query_log("after=3"), None);
        assert!(own_route("/metrics") && own_route("/docs/x") && !own_route("/v1/plans"));
        assert!(query_has_size("log=opA&size=12") && query_has_size("size=3"));
        assert!(!query_has_size("log=opA&sizes=3") && !query_has_size(""));
    }
}
