//! Builds and runs the HTTP server.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use actix_web::{get, web, App, HttpResponse, HttpServer};

use super::auth::KeyRing;
use super::dto::{Health, ProblemDocument};
use super::problem::Problem;
use super::{admin, approvals, audit, exceptions, listings, openapi, plans, tables};
use crate::plan::PlanSet;
use crate::service::Service;
use crate::store::{self, DatabaseUrl};

/// What every handler may read.
pub struct AppState {
    pub plans: Arc<PlanSet>,
    pub service: Arc<Service>,
    pub keys: KeyRing,
    pub limits: crate::limits::RequestLimits,
    /// The regulators' and auditors' HTML pages (`/console/`): sessions, source documents,
    /// returns to player.
    pub console: crate::console::Console,
    /// The operators' logs (`--log-per-operator`); `None`: every operator writes `service`'s.
    pub logs: Option<Arc<crate::service::logs::OperatorLogs>>,
    /// Several nodes with a log per operator: which node writes which log
    /// ([`super::router`]); `None` on a single node.
    pub router: Option<Arc<super::router::Router>>,
    /// Operators' logs read from the store by the audit routes: from the read replica
    /// (`--read-database-url`), or from the primary where this node does not write them
    /// (several nodes); `None` with one log, or one node and no replica.
    pub stored_reads: Option<Arc<super::stored::StoredReads>>,
}

#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub bind: String,
    pub plans_dir: PathBuf,
    pub data_dir: PathBuf,
    /// `postgres://…` or a SQLite file; default `<data_dir>/pitboss.sqlite`.
    pub database_url: Option<String>,
    /// PKCS#8 PEM Ed25519 key; default `<data_dir>/signing-key.pem`, created if absent.
    pub signing_key: Option<PathBuf>,
    /// A bootstrap admin key to install (`pb_<16 hex>_<64 hex>`); if none is configured and
    /// no admin key exists, one is generated and printed once.
    pub admin_key: Option<String>,
    /// The log's origin line (also the key name in checkpoints). Required with PostgreSQL;
    /// with the embedded SQLite default, the stored one or one derived from the key.
    pub origin: Option<String>,
    /// The key that encrypts stored RNG seeds; default `seed-key` beside the signing key.
    pub seed_key: Option<PathBuf>,
    /// How long idempotency records are kept.
    pub idempotency_retention: std::time::Duration,
    pub limits: crate::limits::Limits,
    /// Rounds of each simulated return to player the console shows (computed once per plan
    /// content in the background); 0 computes none.
    pub rtp_rounds: u64,
    /// Console cookies get `Secure` even over plain HTTP (behind a TLS-terminating proxy).
    pub secure_cookies: bool,
    /// When the writer stores snapshots of the live state.
    pub snapshots: crate::service::Snapshots,
    /// How long a request waits for the writer before it is answered `503 outcome_unknown`.
    pub write_deadline: Option<std::time::Duration>,
    /// What the regulator's rules ask of this deployment (`--require-approval`, …).
    pub regulator: crate::service::approval::RegulatorOptions,
    /// The witnesses that cosign the log's checkpoints (`--witness-url`, `--witness-key`).
    pub witnesses: crate::service::witnessing::WitnessOptions,
    /// Where the other nodes reach this one (`--node-url`, PostgreSQL only): with it, a node
    /// whose log another node writes waits as a standby that forwards to it ([`super::standby`])
    /// instead of refusing to start.
    pub node_url: Option<String>,
    /// How long the writer's lease lasts after its last renewal (PostgreSQL).
    pub lease: std::time::Duration,
    /// A PostgreSQL read replica the audit log's read routes are served from.
    pub read_database_url: Option<String>,
    /// A log per operator (`--log-per-operator`, [`crate::service::logs`]).
    pub log_per_operator: bool,
}

impl ServeConfig {
    /// How long a request another node passes on may take: the writer's deadline, and 5 s
    /// for the way there and back.
    pub fn pass_deadline(&self) -> std::time::Duration {
        self.write_deadline
            .unwrap_or(crate::service::SUBMIT_DEADLINE)
            + std::time::Duration::from_secs(5)
    }
}

/// Largest request body accepted, in bytes.
pub const MAX_BODY_BYTES: usize = 256 * 1024;

/// Liveness, the number of loaded plans and the size of the audit log.
///
/// No authentication.
#[utoipa::path(
    tag = "ops",
    responses((status = 200, description = "The service is up.", body = Health)),
)]
#[get("/healthz")]
pub async fn healthz(state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok().json(Health {
        status: "ok".to_string(),
        plans: state.plans.len(),
        log_entries: state
            .service
            .metrics
            .log_entries
            .load(std::sync::atomic::Ordering::Relaxed),
    })
}

/// Readiness: whether the service can record commands now.
///
/// `503 not_ready` (with `Retry-After`) while the service starts (it replays its audit log
/// before it takes commands), while the store refuses writes (disk full, database
/// unreachable or not answering in time) and while the service rebuilds its state from the
/// log after such a failure; `200` otherwise. Commands sent while it is not ready are
/// answered `503` at once, with nothing recorded. `/healthz` stays `200` throughout: it says the process
/// is alive, this says whether to send it traffic. No authentication.
#[utoipa::path(
    tag = "ops",
    responses(
        (status = 200, description = "The service can record commands.", body = Health),
        (status = 503, description = "`not_ready`: the store refuses writes, or the state is being rebuilt; the detail says which.", body = ProblemDocument, content_type = "application/problem+json"),
    ),
)]
#[get("/readyz")]
pub async fn readyz(state: web::Data<AppState>) -> Result<HttpResponse, Problem> {
    // With a log per operator, every log must be able to write (they share the store).
    if let Some(logs) = &state.logs {
        for (log, s) in logs.all() {
            if let Err(not_ready) = s.metrics.health.readiness() {
                return Err(super::problem::not_ready(format!(
                    "operator {log}'s log: {}",
                    not_ready.detail
                )));
            }
        }
    }
    let metrics = &state.service.metrics;
    match metrics.health.readiness() {
        Ok(()) => Ok(HttpResponse::Ok().json(Health {
            status: "ready".to_string(),
            plans: state.plans.len(),
            log_entries: metrics
                .log_entries
                .load(std::sync::atomic::Ordering::Relaxed),
        })),
        Err(not_ready) => Err(super::problem::not_ready(not_ready.detail)),
    }
}

/// Every route of the service. Each one is annotated with `#[utoipa::path]` and listed in
/// [`openapi::ApiDoc`]; `tests/it/api_openapi.rs` checks that the two lists agree.
///
/// actix tries the resources in this order, each with a pattern of `{…}` segments matching a
/// regex: the routes every round takes (bets, dealer events, a round's opening) come first, so
/// that a bet is not matched against every resource above it (≈ 7 % of the HTTP workers' CPU
/// under load). No two resources match one method and path, so the order picks nothing else.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(tables::place_bets)
        .service(tables::post_event)
        .service(tables::open_round)
        .service(healthz)
        .service(readyz)
        .service(openapi::openapi_json)
        .service(openapi::docs_page)
        .service(openapi::docs_asset)
        .service(admin::metrics)
        .service(listings::list_tables)
        .service(listings::list_rounds)
        .service(admin::create_key)
        .service(admin::list_keys)
        .service(admin::revoke_key)
        .service(admin::rotate_key)
        .service(admin::rotate_signing_key)
        .service(plans::list)
        .service(approvals::list)
        .service(exceptions::pause)
        .service(exceptions::resume)
        .service(approvals::approve)
        .service(approvals::approve_note)
        .service(approvals::withdraw)
        .service(plans::plan_diff)
        .service(plans::versions)
        .service(plans::show)
        .service(tables::open_table)
        .service(tables::get_table)
        .service(tables::close_table)
        .service(tables::player_connection)
        .service(tables::get_round)
        .service(tables::void_round)
        .service(tables::withdraw_bets)
        .service(super::payouts::confirm_payout)
        .service(super::payouts::overdue_payouts)
        .service(super::players::exclude)
        .service(super::players::lift_exclusion)
        .service(super::players::set_limits)
        .service(super::players::report_usage)
        .service(super::players::get_player)
        .service(tables::post_decisions)
        .service(tables::shoe)
        .service(tables::table_action)
        .service(tables::get_settlement)
        .service(tables::recall)
        .service(audit::entries)
        .service(audit::daily_summary)
        .service(audit::checkpoint)
        .service(audit::checkpoint_now)
        .service(audit::proof)
        .service(audit::consistency)
        .service(audit::export)
        .service(audit::public_key);
}

/// A writer whose lease may have run out (it was frozen, or cut off from the database)
/// answers `503` to everything but its own liveness, readiness and metrics until it renews
/// the lease: another node may be writing the log by then, and this node's memory (open
/// tables, rounds, the latest checkpoint) may be behind it.
async fn lease_gate(
    req: actix_web::dev::ServiceRequest,
    next: actix_web::middleware::Next<impl actix_web::body::MessageBody + 'static>,
) -> Result<actix_web::dev::ServiceResponse<actix_web::body::BoxBody>, actix_web::Error> {
    if !matches!(req.path(), "/healthz" | "/readyz" | "/metrics") {
        let lapsed = req
            .app_data::<web::Data<AppState>>()
            .and_then(|s| s.service.metrics.health.lease_lapsed());
        if let Some(detail) = lapsed {
            use actix_web::ResponseError;
            return Ok(req.into_response(super::problem::unavailable(&detail).error_response()));
        }
    }
    next.call(req).await.map(|r| r.map_into_boxed_body())
}

/// A query string that does not parse: `400 malformed_query`.
pub fn query_config() -> web::QueryConfig {
    web::QueryConfig::default()
        .error_handler(|err, _| Problem::bad_request("malformed_query", err.to_string()).into())
}

/// A path segment that does not parse: `400 malformed_path`.
pub fn path_config() -> web::PathConfig {
    web::PathConfig::default()
        .error_handler(|err, _| Problem::bad_request("malformed_path", err.to_string()).into())
}

/// Runs the service until it is stopped; prints `listening on http://ADDR` once bound.
pub async fn serve(config: ServeConfig, plans: PlanSet) -> Result<(), String> {
    // The port is taken first and answers while the log replays (`/readyz` 503, `/healthz`
    // 200); the HTTP server takes over the same socket once the service is up.
    let listener = std::net::TcpListener::bind(&config.bind)
        .map_err(|e| format!("bind {}: {e}", config.bind))?;
    let starting = super::starting::Starting::start(&listener, plans.len())
        .map_err(|e| format!("bind {}: {e}", config.bind))?;
    if let Ok(a) = listener.local_addr() {
        println!("starting on http://{a}");
    }
    crate::service::secrets::secure_data_dir(&config.data_dir)
        .map_err(|e| format!("{}: {e}", config.data_dir.display()))?;
    let url = config
        .database_url
        .as_deref()
        .map(DatabaseUrl::parse)
        .unwrap_or_else(|| DatabaseUrl::default_in(&config.data_dir));
    let key_path = config
        .signing_key
        .clone()
        .unwrap_or_else(|| config.data_dir.join("signing-key.pem"));
    let throttled = Arc::new(crate::limits::ThrottleCounters::default());
    store::lease::set_duration(config.lease);
    let node_url = match config.node_url.as_deref() {
        Some("auto") => match listener.local_addr() {
            Ok(a) if !a.ip().is_unspecified() => Some(format!("http://{a}")),
            _ => {
                return Err(format!(
                    "--node-url auto needs --bind on an address the other nodes can reach \
                     (not {}): give the URL instead",
                    config.bind
                ))
            }
        },
        other => other.map(|u| u.trim_end_matches('/').to_string()),
    };
    let node_url =
        match (node_url, &url) {
            (Some(u), DatabaseUrl::Postgres(_)) => {
                store::lease::set_address(&u);
                Some(u)
            }
            (Some(_), DatabaseUrl::Sqlite(_)) => return Err(
                "--node-url needs PostgreSQL: several nodes share one log only there (a SQLite \
                 store has one writer, on its own machine)"
                    .into(),
            ),
            (None, _) => None,
        };
    // The audit log's reads: on the primary, or on a read replica.
    let read_url = match (config.read_database_url.as_deref(), &url) {
        (None, _) => None,
        (Some(r), DatabaseUrl::Postgres(_)) => match DatabaseUrl::parse(r) {
            r @ DatabaseUrl::Postgres(_) => Some(r),
            DatabaseUrl::Sqlite(_) => {
                return Err(format!(
                    "--read-database-url {r}: a read replica is a PostgreSQL server                      (postgres://…)"
                ))
            }
        },
        (Some(_), DatabaseUrl::Sqlite(_)) => {
            return Err("--read-database-url needs PostgreSQL (--database-url postgres://…):                         a SQLite store has no replicas"
                .into())
        }
    };
    let witnesses = crate::service::witnessing::Witnesses::parse(&config.witnesses)?;
    // The nodes' shared secret, from the seed key every node holds alike.
    let node_token = match &node_url {
        None => None,
        Some(_) => {
            let seed_key =
                crate::service::secrets::seed_key_path(config.seed_key.as_deref(), &key_path);
            Some(
                crate::service::secrets::node_token(&seed_key)
                    .map_err(|e| format!("the nodes' shared secret: {e}"))?,
            )
        }
    };
    let local_reads = super::standby::LocalReads {
        node_token: node_token.clone().unwrap_or_default(),
        read_url: read_url.clone().unwrap_or_else(|| url.clone()),
        witnesses: witnesses.clone(),
        limits: config.limits.clone(),
        throttled: throttled.clone(),
    };
    let mut starting = Some(starting);
    let mut standby: Option<super::standby::Running> = None;
    let plan_count = plans.len();
    let options = crate::service::StartOptions {
        limits: config.limits.clone(),
        seed_key: config.seed_key.clone(),
        throttled: throttled.clone(),
        idempotency_retention: Some(config.idempotency_retention),
        snapshots: Some(config.snapshots),
        submit_deadline: config.write_deadline,
        regulator: config.regulator.clone(),
        witnesses: config.witnesses.clone(),
        lazy_reads: false,
        approvals_from: None,
        writer_metrics: None,
    };
    // The operators' logs' audit reads: from the replica, or (several nodes) from the primary
    // where another node writes them.
    let stored_reads = match (config.log_per_operator, &read_url, &node_url) {
        (true, Some(r), _) => Some(super::stored::StoredReads::start(
            r,
            true,
            witnesses.clone(),
        )?),
        (true, None, Some(_)) => Some(super::stored::StoredReads::start(
            &url,
            false,
            witnesses.clone(),
        )?),
        _ => None,
    };
    // Several nodes with a log per operator: a node that does not write the service's log
    // writes operators' logs, with the service's followed ([`Follower`]); kept through its
    // take-over of the service's log.
    let mut follower: Option<Follower> = None;
    let service = loop {
        let started = Service::start(
            url.clone(),
            plans.clone(),
            &key_path,
            config.origin.as_deref(),
            options.clone(),
        );
        match started {
            Ok(service) => break service,
            // Another node writes the service's log: write operators' logs here, until the
            // service's lease runs out.
            Err(crate::service::StartError::Locked(held))
                if config.log_per_operator && node_url.is_some() =>
            {
                let f = match follower.take() {
                    Some(f) => f,
                    None => {
                        let me = node_url.as_deref().unwrap_or_default();
                        let made = Follower::start(
                            &config,
                            &url,
                            &plans,
                            &key_path,
                            &options,
                            me,
                            node_token.as_deref().unwrap_or_default(),
                            &throttled,
                            read_url.as_ref(),
                            stored_reads.clone(),
                        );
                        match made {
                            Ok(f) => f,
                            // The service's log is being started by another node: again.
                            Err(FollowError::NotYet) => {
                                tracing::info!("waiting for the service's log to be written");
                                actix_web::rt::time::sleep(super::standby::POLL).await;
                                continue;
                            }
                            Err(FollowError::Failed(e)) => return Err(e),
                        }
                    }
                };
                if let Some(s) = starting.take() {
                    s.stop();
                }
                if f.running.is_none() {
                    println!("writes operators' logs; the service's log: {held}");
                    if let Ok(a) = listener.local_addr() {
                        println!("listening on http://{a}");
                    }
                }
                let f = f.listen(&listener)?;
                match f.wait_for_service_lease(&url).await {
                    Some(f) => follower = Some(f),
                    None => return Ok(()),
                }
            }
            // Another node writes the log: wait as its standby until its lease runs out.
            Err(crate::service::StartError::Locked(held)) if node_url.is_some() => {
                if let Some(s) = starting.take() {
                    s.stop();
                    println!("standby: {held}");
                }
                let waited = super::standby::wait(
                    &listener,
                    &url,
                    node_url.as_deref().unwrap_or_default(),
                    plan_count,
                    config.pass_deadline(),
                    &local_reads,
                    standby.take(),
                )
                .await?;
                match waited {
                    super::standby::Waited::LeaseFree(running) => standby = Some(running),
                    super::standby::Waited::Stopped => return Ok(()),
                }
            }
            Err(e) => {
                if let Some(s) = standby.take() {
                    s.stop().await;
                }
                return Err(e.to_string());
            }
        }
    };
    let mut conn = store::connect(&url).map_err(|e| e.to_string())?;
    let keys = KeyRing::load(&mut conn).map_err(|e| e.to_string())?;
    // A follower that took the service's log over keeps its operators' logs (their writers
    // run; the service's state they read approvals in is still followed from the store).
    let (logs, router, was_following) = match follower.take() {
        Some(f) => (
            Some(f.logs.clone()),
            Some(Arc::new(f.router.at_home())),
            Some(f),
        ),
        None => (
            operator_logs(
                &config, &service, &url, plans, &key_path, options, &mut conn,
            )?,
            match (&node_url, config.log_per_operator) {
                (Some(me), true) => Some(Arc::new(super::router::Router::new(
                    me,
                    node_token.as_deref().unwrap_or_default(),
                    &url,
                    true,
                    config.pass_deadline(),
                ))),
                _ => None,
            },
            None,
        ),
    };
    drop(conn);
    let bootstrap = !keys.has_admin();
    let console = crate::console::Console::start(
        &config.plans_dir,
        service.plans.clone(),
        &url,
        config.rtp_rounds,
        config.secure_cookies,
    )
    .map_err(|e| format!("console: {e}"))?;
    let node_token = web::Data::new(super::auth::NodeToken(node_token));
    let reads = web::Data::new(super::audit::LogReads::of_node(
        &service,
        read_url.as_ref(),
    )?);
    let state = web::Data::new(AppState {
        plans: service.plans.clone(),
        service: Arc::new(service),
        keys,
        limits: crate::limits::RequestLimits::new(config.limits.clone(), throttled),
        console,
        logs,
        router,
        stored_reads,
    });
    // The bootstrap admin key is created through the log, like every key.
    if bootstrap {
        let key = super::admin::bootstrap_admin(&state, config.admin_key.as_deref()).await?;
        if config.admin_key.is_none() {
            // Shown once: only its hash is stored.
            println!("bootstrap admin key (shown once, store it now): {key}");
        }
    }
    // Key usage is stored once a minute (one UPDATE per key used, never one per request).
    {
        let state = state.clone();
        let url = url.clone();
        std::thread::Builder::new()
            .name("pitboss-key-usage".into())
            .spawn(move || loop {
                std::thread::sleep(std::time::Duration::from_secs(60));
                if let Ok(mut c) = store::connect(&url) {
                    let _ = state.keys.store_last_used(&mut c);
                }
            })
            .map_err(|e| e.to_string())?;
    }
    // Idle buckets are forgotten, so the limiters hold only what is recently active.
    {
        let state = state.clone();
        std::thread::Builder::new()
            .name("pitboss-limits".into())
            .spawn(move || loop {
                std::thread::sleep(std::time::Duration::from_secs(10));
                state.limits.housekeeping();
            })
            .map_err(|e| e.to_string())?;
    }
    let on_stop = state.clone();
    if let Some(s) = starting.take() {
        s.stop();
    }
    let addrs: Vec<SocketAddr> = listener.local_addr().into_iter().collect();
    let server = api_server(state, reads, node_token, listener)
        .map_err(|e| format!("bind {}: {e}", config.bind))?;
    if let Some(s) = standby.take() {
        // This node writes the log now; the standby's server hands the socket over.
        s.stop().await;
        println!("took the log over: this node writes it now");
    }
    if let Some(f) = was_following {
        f.stop().await;
        println!("took the service's log over: this node writes it now");
    }
    for a in &addrs {
        println!("listening on http://{a}");
    }
    let ran = server.await.map_err(|e| e.to_string());
    // Stopped cleanly (SIGINT, SIGTERM): the writer stores a snapshot so the next start
    // replays nothing, and signs what is unsigned.
    if let Some(logs) = &on_stop.logs {
        logs.shutdown().await;
    }
    on_stop.service.shutdown().await;
    ran
}

/// The service's HTTP server on `listener`: every route, the console, the middleware; with
/// several nodes and a log per operator, [`super::router::route`] first.
fn api_server(
    state: web::Data<AppState>,
    reads: web::Data<super::audit::LogReads>,
    node_token: web::Data<super::auth::NodeToken>,
    listener: std::net::TcpListener,
) -> std::io::Result<actix_web::dev::Server> {
    let deadline = state
        .router
        .as_ref()
        .map_or(std::time::Duration::from_secs(1), |r| r.deadline);
    Ok(HttpServer::new(move || {
        App::new()
            .wrap(
                actix_web::middleware::ErrorHandlers::new()
                    .default_handler(super::problem::problemize),
            )
            .app_data(state.clone())
            .app_data(web::PayloadConfig::new(MAX_BODY_BYTES))
            .app_data(
                web::JsonConfig::default()
                    .limit(MAX_BODY_BYTES)
                    .error_handler(|err, _| {
                        Problem::bad_request("malformed_json", err.to_string()).into()
                    }),
            )
            .app_data(reads.clone())
            .app_data(node_token.clone())
            .app_data(query_config())
            .app_data(path_config())
            // What a node passes on to another (one client per worker; unused on one node).
            .app_data(web::Data::new(
                awc::Client::builder()
                    .disable_redirects()
                    .timeout(deadline)
                    .finish(),
            ))
            .wrap(actix_web::middleware::from_fn(lease_gate))
            // Several nodes: a request for a log another node writes goes there.
            .wrap(actix_web::middleware::from_fn(super::router::route))
            .wrap(actix_web::middleware::from_fn(super::problem::limit_uri))
            // Latency per route, the request id returned and handed to the writer…
            .wrap(actix_web::middleware::from_fn(
                crate::observe::observe_request,
            ))
            // …inside the request's root span, which makes the id.
            .wrap(tracing_actix_web::TracingLogger::<crate::observe::RootSpan>::new())
            .configure(configure)
            // HTML pages for people, outside the API and its description.
            .configure(crate::console::configure)
            .default_service(web::to(|req: actix_web::HttpRequest| async move {
                super::problem::route_miss(req.method(), req.path())
            }))
    })
    .listen(listener)?
    .run())
}

/// Why a node could not start following the service's log.
enum FollowError {
    /// Not written yet (its first writer is starting): try again shortly.
    NotYet,
    Failed(String),
}

/// A node that writes operators' logs while another writes the service's
/// ([`crate::service::follow`]): the whole API on its socket, the service's state followed
/// from the store, the operators' logs opened here by the requests for them.
struct Follower {
    state: web::Data<AppState>,
    reads: web::Data<super::audit::LogReads>,
    node_token: web::Data<super::auth::NodeToken>,
    logs: Arc<crate::service::logs::OperatorLogs>,
    router: Arc<super::router::Router>,
    running: Option<(
        actix_web::dev::ServerHandle,
        actix_web::rt::task::JoinHandle<std::io::Result<()>>,
    )>,
}

impl Follower {
    #[allow(clippy::too_many_arguments)]
    fn start(
        config: &ServeConfig,
        url: &DatabaseUrl,
        plans: &PlanSet,
        key_path: &std::path::Path,
        options: &crate::service::StartOptions,
        me: &str,
        node_token: &str,
        throttled: &Arc<crate::limits::ThrottleCounters>,
        read_url: Option<&DatabaseUrl>,
        stored_reads: Option<Arc<super::stored::StoredReads>>,
    ) -> Result<Follower, FollowError> {
        let followed = match Service::follow(url.clone(), plans.clone(), key_path, options) {
            Ok(Some(s)) => s,
            Ok(None) => return Err(FollowError::NotYet),
            Err(e) => return Err(FollowError::Failed(format!("the service's log: {e}"))),
        };
        let failed = |e: String| FollowError::Failed(e);
        let mut conn = store::connect(url).map_err(|e| failed(e.to_string()))?;
        let keys = KeyRing::load(&mut conn).map_err(|e| failed(e.to_string()))?;
        drop(conn);
        let mut log_options = options.clone();
        log_options.approvals_from = Some(crate::service::follow::Approvals::of(&followed));
        log_options.writer_metrics = Some(followed.metrics.writer.clone());
        let logs = Arc::new(crate::service::logs::OperatorLogs::lazy(
            url,
            plans.clone(),
            key_path,
            &followed.origin,
            log_options,
        ));
        let router = Arc::new(super::router::Router::new(
            me,
            node_token,
            url,
            false,
            config.pass_deadline(),
        ));
        // The console is served where the service's log is written (its sessions are
        // there): no returns to player are computed here.
        let console = crate::console::Console::start(
            &config.plans_dir,
            followed.plans.clone(),
            url,
            0,
            config.secure_cookies,
        )
        .map_err(|e| failed(format!("console: {e}")))?;
        // The service's log's audit reads: from the replica when one is configured, else the
        // followed state's count (it follows what is committed).
        let reads =
            web::Data::new(super::audit::LogReads::of_node(&followed, read_url).map_err(failed)?);
        let state = web::Data::new(AppState {
            plans: followed.plans.clone(),
            service: Arc::new(followed),
            keys,
            limits: crate::limits::RequestLimits::new(config.limits.clone(), throttled.clone()),
            console,
            logs: Some(logs.clone()),
            router: Some(router.clone()),
            stored_reads,
        });
        // The keys are made on the node that writes the service's log: read them again every
        // second (a revoked key is refused here within it), their last-used times written, the
        // limits' idle buckets forgotten, as a standby does; until this node's state is dropped.
        {
            let weak = Arc::downgrade(&state.clone().into_inner());
            let url = url.clone();
            std::thread::Builder::new()
                .name("pitboss-follow-keys".into())
                .spawn(move || {
                    let mut conn: Option<store::DbConnection> = None;
                    for poll in 0u32.. {
                        std::thread::sleep(super::standby::POLL);
                        let Some(state) = weak.upgrade() else { return };
                        let kept = store::connected(&url, &mut conn).and_then(|c| {
                            super::standby::keep_keys(&state.keys, &state.limits, c, poll, false)
                        });
                        if let Err(e) = kept {
                            tracing::warn!(error = %e, "cannot read the API keys");
                            conn = None;
                        }
                    }
                })
                .map_err(|e| failed(e.to_string()))?;
        }
        Ok(Follower {
            state,
            reads,
            node_token: web::Data::new(super::auth::NodeToken(Some(node_token.to_owned()))),
            logs,
            router,
            running: None,
        })
    }

    /// Serves the API on `listener` (once).
    fn listen(mut self, listener: &std::net::TcpListener) -> Result<Follower, String> {
        if self.running.is_none() {
            let server = api_server(
                self.state.clone(),
                self.reads.clone(),
                self.node_token.clone(),
                listener.try_clone().map_err(|e| e.to_string())?,
            )
            .map_err(|e| e.to_string())?;
            let handle = server.handle();
            self.running = Some((handle, actix_web::rt::spawn(server)));
        }
        Ok(self)
    }

    /// Waits until the service's lease looks free (`Some`: take the service's log over) or the
    /// server was stopped (`None`: SIGINT, SIGTERM; the operators' logs stored and stopped).
    async fn wait_for_service_lease(self, url: &DatabaseUrl) -> Option<Follower> {
        let mut conn: Option<store::DbConnection> = None;
        loop {
            if self
                .running
                .as_ref()
                .is_none_or(|(_, done)| done.is_finished())
            {
                self.logs.shutdown().await;
                return None;
            }
            let (url2, mut c) = (url.clone(), conn.take());
            let read = web::block(move || {
                let open = store::connected(&url2, &mut c).map_err(|e| e.to_string())?;
                let h = store::lease::peek(open).map_err(|e| e.to_string())?;
                Ok::<_, String>((c, h))
            })
            .await
            .map_err(|e| e.to_string())
            .and_then(|r| r);
            match read {
                Ok((c, holder)) => {
                    conn = c;
                    if holder
                        .as_ref()
                        .is_none_or(crate::store::lease::Holder::is_free)
                    {
                        return Some(self);
                    }
                }
                Err(e) => tracing::warn!(error = %e, "cannot read the service's lease"),
            }
            actix_web::rt::time::sleep(super::standby::POLL).await;
        }
    }

    /// Stops this node's server once the service's has taken the socket over (requests in
    /// flight are finished first).
    async fn stop(mut self) {
        if let Some((handle, done)) = self.running.take() {
            handle.stop(true).await;
            let _ = done.await;
        }
    }
}

/// The operators' logs: each recorded one opened (`--log-per-operator`), or none. A store
/// whose operators have logs of their own never starts without the flag (their tables would
/// be unreachable and their names free again); nor does one switched to the flag while the
/// service's log holds open tables (they would be unreachable from the operators' logs).
fn operator_logs(
    config: &ServeConfig,
    service: &Service,
    url: &DatabaseUrl,
    plans: PlanSet,
    key_path: &std::path::Path,
    mut options: crate::service::StartOptions,
    conn: &mut store::DbConnection,
) -> Result<Option<Arc<crate::service::logs::OperatorLogs>>, String> {
    use crate::service::logs;
    let recorded = logs::recorded(conn).map_err(|e| e.to_string())?;
    if !config.log_per_operator {
        return match recorded.first() {
            None => Ok(None),
            Some(r) => Err(format!(
                "this deployment writes a log per operator ({} of them, e.g. {}'s, origin {}): \
                 start it with --log-per-operator",
                recorded.len(),
                r.operator,
                r.origin
            )),
        };
    }
    let open_here = service.state.read().expect("state lock").tables.len();
    if open_here > 0 && recorded.is_empty() {
        return Err(format!(
            "the service's log holds {open_here} open tables: close them before switching to \
             --log-per-operator (an operator's tables are then in its own log)"
        ));
    }
    options.approvals_from = Some(crate::service::follow::Approvals::of(service));
    options.writer_metrics = Some(service.metrics.writer.clone());
    // With several nodes, each log is opened by the first request for it on the node that
    // gets it (the nodes share the logs); else every recorded log is opened now.
    if config.node_url.is_some() {
        return Ok(Some(Arc::new(logs::OperatorLogs::lazy(
            url,
            plans,
            key_path,
            &service.origin,
            options,
        ))));
    }
    let opened = logs::OperatorLogs::open_all(url, plans, key_path, &service.origin, options)
        .map_err(|e| format!("the operators' logs: {e}"))?;
    Ok(Some(Arc::new(opened)))
}
