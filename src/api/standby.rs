//! A node that does not write the log (issue 17): several `pitboss serve --node-url …` on one
//! PostgreSQL, one of which holds the log's lease and writes it ([`crate::store::lease`]).
//! The others wait as standbys on their own port:
//!
//! - every request but the node's own `/healthz`, `/readyz` and `/metrics` is forwarded, as
//!   received (method, path, headers, body; the Idempotency-Key with them), to the node that
//!   holds the lease, at the address it wrote into it; its answer is passed back as it came,
//!   with `Pitboss-Writer: <its address>` added, so a client may also send there directly;
//! - when the writer cannot be reached, the answer is `503` with `Retry-After`, saying whether
//!   the request reached it (then only a retry with the same Idempotency-Key tells whether it
//!   was recorded) or not (nothing recorded);
//! - the standby reads the lease every [`POLL`]; once it has run out (or its holder was a
//!   process of this host that is gone), [`wait`] returns and the caller takes the lease over
//!   and starts the service from the store (snapshot + tail), on the same listening socket,
//!   before this server stops: no connection is refused in between.
//!
//! A request forwarded once is not forwarded again (`Pitboss-Forwarded-By`): two standbys that
//! each think the other writes answer `503` instead of passing a request back and forth.

use std::net::TcpListener;
use std::sync::atomic::Ordering;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use actix_web::dev::ServerHandle;
use actix_web::http::header::{self, HeaderName};
use actix_web::{web, App, HttpMessage, HttpRequest, HttpResponse, HttpServer};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;

use super::dto::Health;
use super::problem::{unavailable, Problem};
use crate::store::lease::Holder;
use crate::store::{self, DatabaseUrl};

/// How often a standby reads the lease.
pub const POLL: Duration = Duration::from_millis(200);

/// Set on a request a standby forwards (its value: the standby's address).
pub const FORWARDED_BY: &str = "pitboss-forwarded-by";
/// Set on every answer a standby passes back: the address of the node that wrote it.
pub const WRITER: &str = "pitboss-writer";

/// What a standby needs to serve the audit log's read routes itself, from the store (or a
/// read replica), rather than forwarding them to the writer.
#[derive(Clone)]
pub struct LocalReads {
    /// The store the reads are made on (the primary, or `--read-database-url`).
    pub read_url: DatabaseUrl,
    pub witnesses: crate::service::witnessing::Witnesses,
    pub limits: crate::limits::Limits,
    pub throttled: Arc<crate::limits::ThrottleCounters>,
    /// The nodes' shared secret, sent with every forwarded request ([`super::auth::NodeToken`]).
    pub node_token: String,
}

/// Polls between two reads of the API keys (one second: a key revoked through the writer is
/// refused here within it).
const KEYS_EVERY: u32 = 5;
/// Polls between two writes of the keys' last-used times (a minute).
const LAST_USED_EVERY: u32 = 300;
/// Polls between two housekeepings of the request limits (ten seconds).
const LIMITS_EVERY: u32 = 50;

/// What the standby's handlers share.
pub struct Shared {
    /// This node's address (`--node-url`).
    me: String,
    /// The nodes' shared secret (`pitboss-node-token` on what this node forwards).
    node_token: String,
    /// The lease as last read (none before any node took it, or while it cannot be read).
    leader: RwLock<Option<Holder>>,
    /// Whether the writer's own `/readyz` said `200` at the last read of the lease (checked
    /// with it, [`POLL`] apart): a standby is ready only while its writer is.
    writer_ready: std::sync::atomic::AtomicBool,
    plans: usize,
    /// How long a forwarded request may take.
    deadline: Duration,
    /// `pitboss_standby_forwarded_total{outcome}`: `answered` (the writer's answer passed
    /// back), `unreachable` (not sent: nothing recorded), `unknown` (sent, no answer),
    /// `refused` (not forwarded: no writer known, or forwarded here already).
    forwarded: Family<[(&'static str, &'static str); 1], Counter>,
    /// `pitboss_standby_served_total`: audit reads answered here, from the store.
    served: Counter,
    /// The keys and limits of the reads served here.
    gate: web::Data<super::auth::Gate>,
    /// Where those reads come from, and `pitboss_read_log_entries`: the log's size there.
    reads: web::Data<super::audit::LogReads>,
    read_entries: prometheus_client::metrics::gauge::Gauge,
    registry: prometheus_client::registry::Registry,
}

impl Shared {
    fn leader(&self) -> Option<Holder> {
        self.leader.read().expect("leader lock").clone()
    }

    fn count(&self, outcome: &'static str) {
        self.forwarded.get_or_create(&[("outcome", outcome)]).inc();
    }
}

/// A standby server running on the node's listening socket; [`Running::stop`] ends it once
/// the service has taken the socket over.
pub struct Running {
    handle: ServerHandle,
    done: actix_web::rt::task::JoinHandle<std::io::Result<()>>,
    shared: Arc<Shared>,
}

impl Running {
    /// Stops answering (requests in flight are finished first).
    pub async fn stop(self) {
        self.handle.stop(true).await;
        let _ = self.done.await;
    }
}

/// What became of a wait.
pub enum Waited {
    /// The lease looks free: take it over (the standby keeps answering meanwhile).
    LeaseFree(Running),
    /// The server was stopped (SIGINT, SIGTERM): the node ends.
    Stopped,
}

/// Answers as a standby on `listener` (starting a server unless `running` is one) until the
/// log's lease looks free or the server is stopped.
#[allow(clippy::too_many_arguments)]
pub async fn wait(
    listener: &TcpListener,
    url: &DatabaseUrl,
    me: &str,
    plans: usize,
    deadline: Duration,
    local: &LocalReads,
    running: Option<Running>,
) -> Result<Waited, String> {
    let running = match running {
        Some(r) => r,
        None => start(listener, me, plans, deadline, local)?,
    };
    let url = url.clone();
    let mut conn: Option<store::DbConnection> = None;
    let mut polls: u32 = 0;
    let mut said: Option<(i64, Option<String>)> = None;
    // The writer's readiness, read with a deadline shorter than the poll.
    let probe = awc::Client::builder()
        .disable_redirects()
        .timeout(POLL * 2)
        .finish();
    loop {
        if running.done.is_finished() {
            return Ok(Waited::Stopped);
        }
        let read = {
            let url = url.clone();
            let mut c = conn.take();
            let gate = running.shared.gate.clone();
            let n = polls;
            polls = polls.wrapping_add(1);
            web::block(move || {
                let open = store::connected(&url, &mut c).map_err(|e| e.to_string())?;
                let h = store::lease::peek(open).map_err(|e| e.to_string())?;
                keep_gate(&gate, open, n);
                Ok::<_, String>((c, h))
            })
            .await
            .map_err(|e| e.to_string())
            .and_then(|r| r)
        };
        match read {
            Ok((c, holder)) => {
                conn = c;
                let free = holder.as_ref().is_none_or(Holder::is_free);
                if let Some(h) = &holder {
                    let now = (h.token, h.address.clone());
                    if said.as_ref() != Some(&now) {
                        println!(
                            "standby: the log is written by {} (lease token {}, reached at {})",
                            h.holder,
                            h.token,
                            h.address.as_deref().unwrap_or("no address")
                        );
                        said = Some(now);
                    }
                }
                let address = holder.as_ref().and_then(|h| h.address.clone());
                *running.shared.leader.write().expect("leader lock") = holder;
                if free {
                    running.shared.writer_ready.store(false, Ordering::SeqCst);
                    return Ok(Waited::LeaseFree(running));
                }
                let ready = match address {
                    Some(a) => probe
                        .get(format!("{a}/readyz"))
                        .send()
                        .await
                        .is_ok_and(|r| r.status().is_success()),
                    None => false,
                };
                running.shared.writer_ready.store(ready, Ordering::SeqCst);
            }
            // The store cannot be read now: requests go to the holder last read; try again
            // (a new connection).
            Err(e) => tracing::warn!(error = %e, "standby: cannot read the writer's lease"),
        }
        actix_web::rt::time::sleep(POLL).await;
    }
}

/// The standby's key ring read again (at once, then every [`KEYS_EVERY`] polls), the keys'
/// last-used times written, the limits' idle buckets forgotten.
fn keep_gate(gate: &super::auth::Gate, conn: &mut store::DbConnection, poll: u32) {
    let first = !gate.loaded.load(Ordering::Acquire);
    match keep_keys(&gate.keys, &gate.limits, conn, poll, first) {
        Ok(()) => gate.loaded.store(true, Ordering::Release),
        Err(e) => tracing::warn!(error = %e, "standby: cannot read the API keys"),
    }
}

/// What a node whose keys are made by another node does at its `poll`-th [`POLL`]: reads the
/// key ring again every [`KEYS_EVERY`] polls (and when `read_now`), writes the keys' last-used
/// times every [`LAST_USED_EVERY`], forgets the limits' idle buckets every [`LIMITS_EVERY`].
/// Fails when the keys were to be read and could not be.
pub fn keep_keys(
    keys: &super::auth::KeyRing,
    limits: &crate::limits::RequestLimits,
    conn: &mut store::DbConnection,
    poll: u32,
    read_now: bool,
) -> Result<(), crate::store::StoreError> {
    let read = if read_now || poll.is_multiple_of(KEYS_EVERY) {
        keys.refresh(conn)
    } else {
        Ok(())
    };
    if poll % LAST_USED_EVERY == LAST_USED_EVERY - 1 {
        let _ = keys.store_last_used(conn);
    }
    if poll.is_multiple_of(LIMITS_EVERY) {
        limits.housekeeping();
    }
    read
}

/// A proof request with a tree size names a signed checkpoint, which the store holds: the
/// standby serves it. Without one, the writer signs a checkpoint first: it is forwarded.
fn sized(ctx: &actix_web::guard::GuardContext) -> bool {
    ctx.head()
        .uri
        .query()
        .is_some_and(|q| q.split('&').any(|kv| kv.starts_with("size=")))
}

async fn proof_here(
    reads: web::Data<super::audit::LogReads>,
    caller: super::auth::Caller,
    path: web::Path<u64>,
    q: web::Query<super::audit::ProofQuery>,
) -> Result<HttpResponse, Problem> {
    let q = q.into_inner();
    super::audit::proof_of(reads, None, caller, path.into_inner(), q.size, q.log).await
}

/// Marks a request this standby forwarded (not counted as served here).
#[derive(Clone, Copy)]
struct Forwarded;

/// What a closed table or a finished round is stored as (`closed_tables`, `finished_rounds`):
/// written in the same transaction as the entries that closed or finished it, never changed
/// after, so any node (and a replica) may answer it; what is live is in the writer's memory.
#[derive(Clone, Copy)]
enum Stored {
    Table,
    Round,
}

/// The stored JSON of a closed table or a finished round the caller may read, by the caller's
/// name for it (an operator's bare name: its scoped id, then its own table from before ids
/// were scoped), from this node's read store; `None` when there is none (live, absent, or not
/// yet on a lagging replica: the writer answers).
async fn stored_here(
    reads: &super::audit::LogReads,
    caller: &super::auth::Caller,
    what: Stored,
    name: &str,
) -> Result<Option<String>, Problem> {
    for id in super::tables::named(caller, name) {
        let pool = reads.pool.clone();
        let row = web::block(move || {
            let mut c = pool
                .get()
                .map_err(|e| crate::store::StoreError::Pool(e.to_string()))?;
            Ok::<_, crate::store::StoreError>(match what {
                Stored::Table => crate::service::stored_table(&mut c, &id)?
                    .map(|(operator, _, body)| (operator, body)),
                Stored::Round => crate::service::stored_round(&mut c, &id)?
                    .map(|(_, operator, body)| (operator, body)),
            })
        })
        .await
        .map_err(|e| unavailable(&e.to_string()))?
        .map_err(|e| unavailable(&e.to_string()))?;
        if let Some((operator, body)) = row {
            if caller.reads_all() || caller.operator.as_deref() == Some(operator.as_str()) {
                return Ok(Some(body));
            }
        }
    }
    Ok(None)
}

/// `GET /v1/tables/{table}` and `GET /v1/rounds/{round}` on a standby: a closed table or a
/// finished round from the store, byte for byte what the writer answers; a live one (or one
/// not stored yet) is forwarded, and so is a request whose key this node does not know (yet:
/// it reads new keys every second), for the writer to decide.
async fn stored_or_forward(
    what: Stored,
    req: HttpRequest,
    body: web::Bytes,
    shared: web::Data<Shared>,
    client: web::Data<awc::Client>,
    reads: web::Data<super::audit::LogReads>,
    caller: Result<super::auth::Caller, Problem>,
) -> Result<HttpResponse, Problem> {
    let name = req.match_info().get("id").unwrap_or_default().to_string();
    if let Ok(caller) = caller {
        if let Some(json) = stored_here(&reads, &caller, what, &name).await? {
            return Ok(HttpResponse::Ok()
                .content_type("application/json")
                .body(json));
        }
    }
    forward(req, body, shared, client).await
}

/// `GET` of a table or round at `path`: from the store when it is stored, else forwarded;
/// every other method forwarded.
fn stored_resource(path: &str, what: Stored) -> actix_web::Resource {
    web::resource(path)
        .route(web::get().to(
            move |req: HttpRequest,
                  body: web::Bytes,
                  shared: web::Data<Shared>,
                  client: web::Data<awc::Client>,
                  reads: web::Data<super::audit::LogReads>,
                  caller: Result<super::auth::Caller, Problem>| {
                stored_or_forward(what, req, body, shared, client, reads, caller)
            },
        ))
        .default_service(web::to(forward))
}

/// Counts the reads answered here (routes of the API matched on this server, not forwarded).
async fn count_served(
    req: actix_web::dev::ServiceRequest,
    next: actix_web::middleware::Next<impl actix_web::body::MessageBody + 'static>,
) -> Result<actix_web::dev::ServiceResponse<impl actix_web::body::MessageBody>, actix_web::Error> {
    let shared = req.app_data::<web::Data<Shared>>().cloned();
    let res = next.call(req).await?;
    if res
        .request()
        .match_pattern()
        .is_some_and(|p| p.starts_with("/v1/"))
        && res.request().extensions().get::<Forwarded>().is_none()
    {
        if let Some(s) = shared {
            s.served.inc();
        }
    }
    Ok(res)
}

fn start(
    listener: &TcpListener,
    me: &str,
    plans: usize,
    deadline: Duration,
    local: &LocalReads,
) -> Result<Running, String> {
    let gate = web::Data::new(super::auth::Gate {
        keys: super::auth::KeyRing::default(),
        limits: crate::limits::RequestLimits::new(local.limits.clone(), local.throttled.clone()),
        loaded: std::sync::atomic::AtomicBool::new(false),
    });
    let reads = web::Data::new(super::audit::LogReads::polled(
        store::lazy_read_pool(&local.read_url, 4),
        local.witnesses.clone(),
    )?);
    let forwarded = Family::default();
    let served = Counter::default();
    let mut registry = prometheus_client::registry::Registry::default();
    registry.register(
        "pitboss_node_writer",
        "1 on the node that writes the log, 0 on a standby",
        ConstGauge::new(0i64),
    );
    registry.register(
        "pitboss_standby_forwarded",
        "Requests this standby received for the writer, by outcome",
        forwarded.clone(),
    );
    let read_entries = prometheus_client::metrics::gauge::Gauge::default();
    registry.register(
        "pitboss_read_log_entries",
        "Entries in the store the audit reads are served from (the primary, or the replica of \
         --read-database-url)",
        read_entries.clone(),
    );
    registry.register(
        "pitboss_standby_served",
        "Audit reads this standby answered itself, from the store",
        served.clone(),
    );
    let shared = Arc::new(Shared {
        me: me.to_string(),
        node_token: local.node_token.clone(),
        leader: RwLock::new(None),
        writer_ready: std::sync::atomic::AtomicBool::new(false),
        plans,
        deadline,
        forwarded,
        served,
        gate: gate.clone(),
        reads: reads.clone(),
        read_entries,
        registry,
    });
    let data = web::Data::from(shared.clone());
    let listener = listener.try_clone().map_err(|e| e.to_string())?;
    let server = HttpServer::new(move || {
        let client = awc::Client::builder()
            .disable_redirects()
            .timeout(data.deadline)
            .finish();
        App::new()
            .wrap(
                actix_web::middleware::ErrorHandlers::new()
                    .default_handler(super::problem::problemize),
            )
            .wrap(actix_web::middleware::from_fn(count_served))
            .app_data(data.clone())
            .app_data(web::Data::new(client))
            .app_data(gate.clone())
            .app_data(reads.clone())
            .app_data(web::PayloadConfig::new(super::startup::MAX_BODY_BYTES))
            .app_data(super::startup::query_config())
            .app_data(super::startup::path_config())
            .route("/healthz", web::get().to(healthz))
            .route("/readyz", web::get().to(readyz))
            .route("/metrics", web::get().to(metrics))
            // The audit log's reads, from the store; every other request goes to the writer.
            .service(super::audit::entries)
            .service(super::audit::daily_summary)
            .service(super::audit::checkpoint)
            .service(super::audit::consistency)
            .service(
                web::resource("/v1/audit/proof/{seq}")
                    .guard(actix_web::guard::Get())
                    .guard(actix_web::guard::fn_guard(sized))
                    .to(proof_here),
            )
            // Closed tables and finished rounds from the store; live ones from the writer.
            .service(stored_resource("/v1/tables/{id}", Stored::Table))
            .service(stored_resource("/v1/rounds/{id}", Stored::Round))
            .default_service(web::to(forward))
    })
    .listen(listener)
    .map_err(|e| e.to_string())?
    .run();
    let handle = server.handle();
    let done = actix_web::rt::spawn(server);
    Ok(Running {
        handle,
        done,
        shared,
    })
}

/// What `/healthz` and a ready `/readyz` say on a standby (it holds no log).
fn standby_health(shared: &Shared) -> Health {
    Health {
        status: "standby".to_string(),
        plans: shared.plans,
        log_entries: 0,
    }
}

async fn healthz(shared: web::Data<Shared>) -> HttpResponse {
    HttpResponse::Ok().json(standby_health(&shared))
}

/// Ready while the writer is known, has an address and says it is ready (its `/readyz`, read
/// every [`POLL`]): requests sent here reach a node that records them.
async fn readyz(shared: web::Data<Shared>) -> Result<HttpResponse, Problem> {
    let detail = match shared.leader() {
        Some(h) if h.live && h.address.is_some() => {
            if shared.writer_ready.load(Ordering::SeqCst) {
                return Ok(HttpResponse::Ok().json(standby_health(&shared)));
            }
            format!(
                "this node is a standby and the node that writes the log ({}) is not ready or \
                 not reachable now; if it is gone, a node takes the log over once its lease \
                 runs out",
                h.address.as_deref().unwrap_or_default()
            )
        }
        _ => "this node is a standby and no node that writes the log is known now (its lease \
              ran out, or the store cannot be read); one takes it over within the lease's \
              duration"
            .to_string(),
    };
    Err(super::problem::not_ready(detail))
}

async fn metrics(shared: web::Data<Shared>) -> HttpResponse {
    shared
        .read_entries
        .set(i64::try_from(shared.reads.committed()).unwrap_or(i64::MAX));
    let mut out = String::new();
    prometheus_client::encoding::prometheus_text::encode(&mut out, &shared.registry)
        .expect("writing to a String does not fail");
    HttpResponse::Ok()
        .content_type(crate::observe::PROMETHEUS_TEXT)
        .body(out)
}

/// Headers that belong to one connection and are not passed on.
fn hop_by_hop(name: &HeaderName) -> bool {
    name == header::CONNECTION
        || name == header::TRANSFER_ENCODING
        || name == header::TE
        || name == header::TRAILER
        || name == header::UPGRADE
        || name == header::CONTENT_LENGTH
        || name.as_str() == "keep-alive"
        || name.as_str() == "proxy-connection"
}

async fn forward(
    req: HttpRequest,
    body: web::Bytes,
    shared: web::Data<Shared>,
    client: web::Data<awc::Client>,
) -> Result<HttpResponse, Problem> {
    req.extensions_mut().insert(Forwarded);
    if let Some(by) = req.headers().get(FORWARDED_BY) {
        shared.count("refused");
        return Err(unavailable(&format!(
            "this node is a standby: the request was forwarded here by {} and is not forwarded \
             again; nothing was recorded, retry with the same Idempotency-Key",
            by.to_str().unwrap_or("another node")
        )));
    }
    let leader = shared.leader();
    let Some(address) = leader.as_ref().and_then(|h| h.address.clone()) else {
        shared.count("refused");
        return Err(unavailable(&match leader {
            Some(h) => format!(
                "this node is a standby and the node that writes the log ({}) gave no address \
                 (it runs without --node-url); nothing was recorded, send the request to it",
                h.holder
            ),
            None => "this node is a standby and no node writes the log now; one takes it over \
                     within the lease's duration: nothing was recorded, retry with the same \
                     Idempotency-Key"
                .to_string(),
        }));
    };
    if address == shared.me {
        shared.count("refused");
        return Err(unavailable(
            "this node is taking the log over; nothing was recorded, retry with the same \
             Idempotency-Key",
        ));
    }
    match pass_to(
        &req,
        body,
        &address,
        &shared.me,
        &shared.node_token,
        &client,
    )
    .await
    {
        Ok(back) => {
            shared.count("answered");
            Ok(back)
        }
        Err(NotPassed::Unreachable(e)) => {
            shared.count("unreachable");
            Err(unavailable(&format!(
                "this node is a standby and the node that writes the log cannot be reached at \
                 {address} ({e}); nothing was recorded, retry with the same Idempotency-Key \
                 (another node takes the log over once its lease runs out)"
            )))
        }
        Err(NotPassed::Unknown(e)) => {
            shared.count("unknown");
            Err(unavailable(&format!(
                "this node is a standby; the request was sent to the node that writes the log \
                 at {address}, which did not answer ({e}): whether it was recorded is not known \
                 here; retry with the same Idempotency-Key, which gives the first answer or \
                 records it once"
            )))
        }
    }
}

/// Why a request was not passed on to another node.
pub enum NotPassed {
    /// The node could not be connected to: nothing was recorded.
    Unreachable(String),
    /// The request was sent and no answer came: whether it was recorded is not known.
    Unknown(String),
}

/// Passes `req` (with `body`) as received to the node at `address` (method, path, query,
/// headers but hop-by-hop ones and `Host`; `Pitboss-Forwarded-By: <me>`, the nodes' secret and
/// a `Forwarded: for=` element added) and its answer back as it came, streamed, with
/// `Pitboss-Writer: <address>`.
pub async fn pass_to(
    req: &HttpRequest,
    body: web::Bytes,
    address: &str,
    me: &str,
    node_token: &str,
    client: &awc::Client,
) -> Result<HttpResponse, NotPassed> {
    let target = format!(
        "{address}{}",
        req.uri()
            .path_and_query()
            .map_or_else(|| req.path(), |p| p.as_str())
    );
    let mut out = client.request(req.method().clone(), &target);
    for (name, value) in req.headers() {
        if !hop_by_hop(name) && name != header::HOST {
            out = out.append_header((name.clone(), value.clone()));
        }
    }
    out = out.insert_header((FORWARDED_BY, me));
    // The writer believes the `Forwarded` element below only with the nodes' secret (this
    // replaces a client's own header of that name).
    out = out.insert_header((super::auth::NODE_TOKEN, node_token));
    // Appended to whatever a proxy in front of this node said (RFC 7239 keeps a list).
    if let Some(peer) = req.peer_addr() {
        out = out.append_header((header::FORWARDED, format!("for=\"{peer}\"")));
    }
    match out.send_body(body).await {
        Ok(resp) => {
            let mut back = HttpResponse::build(resp.status());
            for (name, value) in resp.headers() {
                if !hop_by_hop(name) {
                    back.append_header((name.clone(), value.clone()));
                }
            }
            back.insert_header((WRITER, address.to_owned()));
            Ok(back.streaming(resp))
        }
        Err(awc::error::SendRequestError::Connect(e)) => Err(NotPassed::Unreachable(e.to_string())),
        Err(e) => Err(NotPassed::Unknown(e.to_string())),
    }
}
