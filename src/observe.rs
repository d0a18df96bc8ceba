//! What operators watch: the Prometheus metrics of `/metrics` (through `prometheus-client`),
//! structured logs (through `tracing`, JSON lines on stderr), and the request id that ties an
//! HTTP request to what the writer did with it.
//!
//! - **Metrics.** The service's counters (`pitboss_bets_accepted_total`, …) are read from
//!   [`crate::service::Metrics`] at each scrape by a collector, under the names they always
//!   had; latency histograms are `prometheus-client` histograms: one per route, method and
//!   status ([`HttpMetrics`]), one per writer stage, the batch size and the queue
//!   ([`WriterMetrics`]). `/metrics` answers the Prometheus text format 0.0.4, or OpenMetrics
//!   1.0 when the scraper asks for it (`Accept: application/openmetrics-text`).
//! - **Request ids.** `tracing-actix-web` opens a root span per request with a fresh request
//!   id (UUID v4), method, route and status; [`observe_request`] returns the id to the client
//!   (`X-Request-Id`), times the request, and scopes the id as a task-local so that
//!   [`crate::service::Service::submit`] puts it on the writer's job without any handler
//!   passing it along.
//! - **Logs.** [`init_logging`]: `PITBOSS_LOG` (an `EnvFilter`, default `info,actix_server=warn`) and
//!   `PITBOSS_LOG_FORMAT` (`json`, the default, or `text`). Each request's outcome is logged at
//!   `debug` (target `pitboss::access`), so the default level stays quiet under load.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::HttpMessage;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

use crate::service::Metrics;

/// Latency buckets, in seconds: 50 µs to about 13 s, doubling.
fn seconds_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.000_05, 2.0, 19))
}

/// The labels of one HTTP latency series. `route` is the route's template
/// (`/v1/rounds/:round/bets`), or `unmatched` for a request no route took, so the number of
/// series is bounded by the routes, never by what clients send.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabels {
    pub method: String,
    pub route: String,
    pub status: u16,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

/// Request latency per route, method and status.
#[derive(Debug, Clone)]
pub struct HttpMetrics {
    pub requests: HistogramFamily<RouteLabels>,
}

impl Default for HttpMetrics {
    fn default() -> Self {
        HttpMetrics {
            requests: Family::new_with_constructor(seconds_histogram),
        }
    }
}

/// A writer stage, as labelled in `pitboss_writer_stage_duration_seconds`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StageLabels {
    stage: &'static str,
}

/// What the writer thread does with a batch, stage by stage.
#[derive(Debug, Clone)]
pub struct WriterMetrics {
    stages: HistogramFamily<StageLabels>,
    /// Reading the batch's idempotency records (one query per operator).
    pub lookup: Histogram,
    /// Deciding every command against the state and folding its events in.
    pub decide: Histogram,
    /// Sealing the batch's entries (hash chain, signatures' input) and the Merkle tiles.
    pub seal: Histogram,
    /// A sealed batch waiting for the committer: from the writer's hand-over to the start of
    /// the transaction that writes it (behind the transactions before it).
    pub commit_wait: Histogram,
    /// The batch's rows written inside the transaction, up to the commit.
    pub write: Histogram,
    /// The commit (SQLite's fsync of the WAL; PostgreSQL's COMMIT round trip and WAL flush).
    pub commit: Histogram,
    /// The writer waiting for the batch in flight to be written before it sends the next
    /// (the committer is the slower stage while this is large).
    pub settle: Histogram,
    /// Commands in each batch.
    pub batch_commands: Histogram,
    /// Batches in each of the committer's transactions (those waiting for it when it begins).
    pub transaction_batches: Histogram,
    /// Time a command waited in the queue before its batch started.
    pub queue_wait: Histogram,
    /// Commands submitted and not yet taken by the writer.
    pub queue_depth: Gauge,
    /// SQLite's WAL checkpoints, run by their own thread (not a stage of a batch).
    pub wal_checkpoint: Histogram,
    /// The checkpoint the committer runs between two transactions when the WAL is past its
    /// bound, so that its next transaction starts the WAL over (`service::wal`).
    pub wal_restart: Histogram,
    /// A state snapshot, serialised and sealed on the writer's thread (its rows are written by
    /// the committer behind the batches it covers): the time the writer takes no batch (not a
    /// stage of a batch).
    pub snapshot: Histogram,
    /// Frames in SQLite's WAL at the last checkpoint.
    pub wal_frames: Gauge,
}

impl Default for WriterMetrics {
    fn default() -> Self {
        let stages: HistogramFamily<StageLabels> = Family::new_with_constructor(seconds_histogram);
        let stage = |s: &'static str| stages.get_or_create_owned(&StageLabels { stage: s });
        WriterMetrics {
            lookup: stage("lookup"),
            decide: stage("decide"),
            seal: stage("seal"),
            commit_wait: stage("commit_wait"),
            write: stage("write"),
            commit: stage("commit"),
            settle: stage("settle"),
            wal_checkpoint: stage("wal_checkpoint"),
            wal_restart: stage("wal_restart"),
            snapshot: stage("snapshot"),
            stages: stages.clone(),
            batch_commands: Histogram::new(exponential_buckets(1.0, 2.0, 11)),
            transaction_batches: Histogram::new(exponential_buckets(1.0, 2.0, 5)),
            queue_wait: seconds_histogram(),
            queue_depth: Gauge::default(),
            wal_frames: Gauge::default(),
        }
    }
}

/// Seconds since `start`, for a histogram.
pub fn since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64()
}

/// The service's counters and gauges kept as atomics in [`Metrics`], encoded at each scrape
/// under their established names. With a log per operator (`--log-per-operator`) every
/// operator's log's are added to the service log's (`others`): bets, rounds, batches,
/// checkpoints, failures and what is in memory count every log; the log's size, its snapshot
/// and its start are the service log's (each operator's log's size is
/// `pitboss_operator_log_entries{log}`).
#[derive(Debug)]
struct ServiceCounters {
    service: Arc<Metrics>,
    others: Vec<Arc<Metrics>>,
}

impl Collector for ServiceCounters {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let m = &self.service;
        let all = |f: fn(&Metrics) -> &std::sync::atomic::AtomicU64| {
            std::iter::once(m)
                .chain(&self.others)
                .map(|x| f(x).load(Ordering::Relaxed))
                .sum::<u64>()
        };
        let l = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
        // Counters are named without `_total`: the encoder adds it.
        for (name, help, value) in [
            (
                "pitboss_bets_accepted",
                "Bets accepted and logged",
                all(|x| &x.bets_accepted),
            ),
            (
                "pitboss_bets_refused",
                "Bets refused and logged",
                all(|x| &x.bets_refused),
            ),
            (
                "pitboss_rounds_settled",
                "Rounds settled",
                all(|x| &x.rounds_settled),
            ),
            (
                "pitboss_rounds_voided",
                "Rounds voided with every stake refunded",
                all(|x| &x.rounds_voided),
            ),
            (
                "pitboss_log_batches",
                "Group commits of the audit log",
                all(|x| &x.batches),
            ),
            (
                "pitboss_log_batch_commands",
                "Commands written in those group commits",
                all(|x| &x.batch_commands),
            ),
            (
                "pitboss_checkpoints",
                "Checkpoints signed",
                all(|x| &x.checkpoints),
            ),
            (
                "pitboss_storage_failures",
                "Batches or checkpoints the database refused",
                all(|x| &x.storage_failures),
            ),
            (
                "pitboss_refusals_unlogged",
                "Refusal entries not logged because their operator's refusal budget was used up",
                all(|x| &x.refusals_unlogged),
            ),
            (
                "pitboss_snapshots",
                "Snapshots of the live state stored (a start replays only the log after the latest)",
                all(|x| &x.snapshots),
            ),
            (
                "pitboss_register_players_cached",
                "Players whose register (002 § 6) a batch found in its writer's cache, reading \
                 nothing from the store",
                all(|x| &x.register_players_cached),
            ),
            (
                "pitboss_register_players_read",
                "Players whose register (002 § 6) a batch read from the store (not in its \
                 writer's cache: new, or the cache emptied by a reload, a day's turn or its bound)",
                all(|x| &x.register_players_read),
            ),
        ] {
            let c = ConstCounter::new(value);
            c.encode(encoder.encode_descriptor(name, help, None, c.metric_type())?)?;
        }
        for (name, help, value) in [
            (
                "pitboss_log_entries",
                "Entries in the audit log",
                l(&m.log_entries),
            ),
            (
                "pitboss_rounds_in_memory",
                "Rounds held in memory: the open ones (finished rounds are read from the store)",
                all(|x| &x.rounds_in_memory),
            ),
            (
                "pitboss_tables_in_memory",
                "Tables held in memory: the open ones (closed tables are read from the store)",
                all(|x| &x.tables_in_memory),
            ),
            (
                "pitboss_snapshot_bytes",
                "Size of the last snapshot of the live state",
                l(&m.snapshot_bytes),
            ),
            (
                "pitboss_start_replayed_entries",
                "Log entries the last start replayed after the snapshot it started from",
                l(&m.start_replayed_entries),
            ),
        ] {
            let g = ConstGauge::new(i64::try_from(value).unwrap_or(i64::MAX));
            g.encode(encoder.encode_descriptor(name, help, None, g.metric_type())?)?;
        }
        let ready = ConstGauge::new(i64::from(m.health.readiness().is_ok()));
        ready.encode(encoder.encode_descriptor(
            "pitboss_ready",
            "1 while the service can write (what /readyz answers), else 0",
            None,
            ready.metric_type(),
        )?)?;
        {
            let mut throttled = encoder.encode_descriptor(
                "pitboss_throttled",
                "Requests refused with 429, by the limit they met",
                None,
                prometheus_client::metrics::MetricType::Counter,
            )?;
            for (limit, n) in m.throttled.all() {
                let labels = [("limit", limit)];
                ConstCounter::new(n).encode(throttled.encode_family(&labels)?)?;
            }
        }
        // Per witness (none without witnesses): its last cosigned size, cosignatures, failures.
        let witnesses = m.witnesses.all();
        if !witnesses.is_empty() {
            let mut e = encoder.encode_descriptor(
                "pitboss_witness_cosigned_size",
                "The largest checkpoint size each witness has cosigned",
                None,
                prometheus_client::metrics::MetricType::Gauge,
            )?;
            for w in witnesses {
                let labels = [("witness", w.name.as_str())];
                let v = i64::try_from(w.cosigned_size.load(Ordering::Relaxed)).unwrap_or(i64::MAX);
                ConstGauge::new(v).encode(e.encode_family(&labels)?)?;
            }
            for (name, help, get) in [
                (
                    "pitboss_witness_cosignatures",
                    "Cosignatures each witness returned and the service stored",
                    (|w: &crate::service::witnessing::WitnessStatus| &w.cosignatures)
                        as fn(&crate::service::witnessing::WitnessStatus) -> &std::sync::atomic::AtomicU64,
                ),
                (
                    "pitboss_witness_failures",
                    "Submissions of a checkpoint to each witness that failed (unreachable, refused, a bad answer, not stored); retried with the newest checkpoint",
                    |w: &crate::service::witnessing::WitnessStatus| &w.failures,
                ),
            ] {
                let mut e = encoder.encode_descriptor(
                    name,
                    help,
                    None,
                    prometheus_client::metrics::MetricType::Counter,
                )?;
                for w in witnesses {
                    let labels = [("witness", w.name.as_str())];
                    ConstCounter::new(get(w).load(Ordering::Relaxed))
                        .encode(e.encode_family(&labels)?)?;
                }
            }
        }
        Ok(())
    }
}

/// Every metric of the service, in a registry built for one scrape (the metrics themselves
/// are shared; building the registry clones handles, not values).
fn registry(metrics: &Arc<Metrics>, others: Vec<Arc<Metrics>>) -> Registry {
    let mut r = Registry::default();
    r.register_collector(Box::new(ServiceCounters {
        service: metrics.clone(),
        others,
    }));
    r.register(
        "pitboss_http_request_duration_seconds",
        "Time from a request's arrival to its response, by method, route template and status",
        metrics.http.requests.clone(),
    );
    let w = &metrics.writer;
    r.register(
        "pitboss_writer_stage_duration_seconds",
        "Time the writer spent on each stage of a batch: lookup (idempotency records), decide, \
         seal (on the writer's thread); write (rows inside the transaction), commit (durable) \
         (on the committer's, overlapping the next batch's decide); wal_checkpoint (SQLite, on \
         a thread of its own); wal_restart (SQLite, on the committer's between two transactions, \
         when the WAL is past its bound); snapshot (a state snapshot serialised and sealed, during which \
         the writer takes no batch; the committer writes it)",
        w.stages.clone(),
    );
    r.register(
        "pitboss_writer_batch_commands",
        "Commands in each batch the writer committed or failed",
        w.batch_commands.clone(),
    );
    r.register(
        "pitboss_writer_transaction_batches",
        "Batches in each of the committer's transactions (every batch waiting for it, up to \
         the pipeline's depth, PITBOSS_WRITER_PIPELINE)",
        w.transaction_batches.clone(),
    );
    r.register(
        "pitboss_writer_queue_wait_seconds",
        "Time a command waited for the writer before its batch started",
        w.queue_wait.clone(),
    );
    r.register(
        "pitboss_writer_queue_depth",
        "Commands waiting for the writer",
        w.queue_depth.clone(),
    );
    r.register(
        "pitboss_sqlite_wal_frames",
        "Frames in SQLite's write-ahead log at its last checkpoint (0 on PostgreSQL)",
        w.wal_frames.clone(),
    );
    r
}

/// An operator's log as `/metrics` shows it (`--log-per-operator`; the writer's histograms
/// are shared by every log).
pub struct LogGauges {
    pub log: String,
    pub metrics: Arc<Metrics>,
}

/// The OpenMetrics media type `/metrics` answers when the scraper asks for it.
pub const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
/// The Prometheus text format `/metrics` answers by default.
pub const PROMETHEUS_TEXT: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// `/metrics`: the content type and body, in the format the scraper asked for.
pub fn render(
    metrics: &Arc<Metrics>,
    openmetrics: bool,
    gauges: &[(&'static str, &'static str, i64)],
    logs: &[LogGauges],
    forwarded: Option<&crate::api::router::Forwarded>,
) -> (&'static str, String) {
    let mut registry = registry(metrics, logs.iter().map(|l| l.metrics.clone()).collect());
    if let Some(f) = forwarded {
        registry.register(
            "pitboss_node_forwarded",
            "Requests this node passed to the node that writes their log, by outcome \
             (several nodes with a log per operator)",
            f.clone(),
        );
    }
    // Values read from the store at the scrape (the payouts of 002 § 9(1)).
    for (name, help, value) in gauges {
        registry.register(
            *name,
            *help,
            prometheus_client::metrics::gauge::ConstGauge::new(*value),
        );
    }
    if !logs.is_empty() {
        type ByLog = prometheus_client::metrics::family::Family<
            Vec<(String, String)>,
            prometheus_client::metrics::gauge::Gauge,
        >;
        let (entries, ready) = (ByLog::default(), ByLog::default());
        for l in logs {
            let label = vec![("log".to_owned(), l.log.clone())];
            let n = l.metrics.log_entries.load(Ordering::Relaxed);
            entries
                .get_or_create(&label)
                .set(i64::try_from(n).unwrap_or(i64::MAX));
            ready
                .get_or_create(&label)
                .set(i64::from(l.metrics.health.readiness().is_ok()));
        }
        registry.register(
            "pitboss_operator_log_entries",
            "Entries in each operator's log (--log-per-operator), by operator",
            entries,
        );
        registry.register(
            "pitboss_operator_log_ready",
            "1 while an operator's log can record commands, 0 while its store refuses writes",
            ready,
        );
    }
    let mut out = String::new();
    if openmetrics {
        prometheus_client::encoding::text::encode(&mut out, &registry)
            .expect("writing to a String does not fail");
        (OPENMETRICS, out)
    } else {
        prometheus_client::encoding::prometheus_text::encode(&mut out, &registry)
            .expect("writing to a String does not fail");
        (PROMETHEUS_TEXT, out)
    }
}

tokio::task_local! {
    /// The id of the HTTP request being served (set by [`observe_request`]).
    static REQUEST_ID: tracing_actix_web::RequestId;
}

/// The id of the request this task serves, if it serves one.
pub fn current_request_id() -> Option<tracing_actix_web::RequestId> {
    REQUEST_ID.try_with(|id| *id).ok()
}

/// The root span of a request: `tracing-actix-web`'s default builder names the route at the
/// request's start, before actix has routed it, by matching the path against every resource's
/// pattern (a regex per resource, ~8 % of the service's CPU under load). This one has no
/// `http.route`: [`observe_request`]'s access event names the route once routing is done, when
/// actix names the matched pattern without matching again. (Recording it into the span then
/// made the JSON layer format the span's fields a second time: ~5 % of the CPU.)
///
/// At the request's end the status and the error are recorded into the span only for an
/// error (a status of 400 or more, or an error the handler returned): no event is logged in
/// the span after its end, so what is recorded then shows only in what a layer does when the
/// span closes (none here). The JSON layer formats a span's fields again at every record (it
/// parses what it holds and writes it out with the new field): two records per request were
/// ≈ 8 % of the HTTP workers' CPU under load, for nothing a log line showed. A success's
/// status is in the access event (`pitboss::access`, debug) and the per-route histogram.
pub struct RootSpan;

impl tracing_actix_web::RootSpanBuilder for RootSpan {
    fn on_request_start(request: &actix_web::dev::ServiceRequest) -> tracing::Span {
        let request_id = request
            .extensions()
            .get::<tracing_actix_web::RequestId>()
            .map(|id| id.to_string())
            .unwrap_or_default();
        tracing::info_span!(
            "HTTP request",
            http.method = %request.method(),
            http.target = %request.uri().path_and_query().map(|p| p.as_str()).unwrap_or(""),
            http.status_code = tracing::field::Empty,
            otel.kind = "server",
            otel.status_code = tracing::field::Empty,
            request_id = %request_id,
            exception.message = tracing::field::Empty,
            exception.details = tracing::field::Empty,
        )
    }

    fn on_request_end<B: actix_web::body::MessageBody>(
        span: tracing::Span,
        outcome: &Result<actix_web::dev::ServiceResponse<B>, actix_web::Error>,
    ) {
        let failed = match outcome {
            Ok(response) => {
                response.response().error().is_some() || response.status().as_u16() >= 400
            }
            Err(_) => true,
        };
        if failed {
            tracing_actix_web::DefaultRootSpanBuilder::on_request_end(span, outcome);
        }
    }
}

/// Times every request into [`HttpMetrics`], returns its id (`X-Request-Id`) and scopes the
/// id for the writer (see [`current_request_id`]). Runs inside `tracing-actix-web`'s root
/// span, whose id it reads.
pub async fn observe_request(
    req: actix_web::dev::ServiceRequest,
    next: actix_web::middleware::Next<impl actix_web::body::MessageBody + 'static>,
) -> Result<actix_web::dev::ServiceResponse<impl actix_web::body::MessageBody>, actix_web::Error> {
    let start = Instant::now();
    let id = req
        .extensions()
        .get::<tracing_actix_web::RequestId>()
        .copied();
    let http = req
        .app_data::<actix_web::web::Data<crate::api::AppState>>()
        .map(|s| s.service.metrics.clone());
    let method = req.method().as_str().to_string();
    let call = next.call(req);
    let result = match id {
        Some(id) => REQUEST_ID.scope(id, call).await,
        None => call.await,
    };
    let mut res = result?;
    let status = res.status().as_u16();
    let route = res
        .request()
        .match_pattern()
        .map_or_else(|| "unmatched".to_string(), |p| route_label(&p));
    let elapsed = start.elapsed();
    if let Some(m) = http {
        m.http
            .requests
            .get_or_create(&RouteLabels {
                method: method.clone(),
                route: route.clone(),
                status,
            })
            .observe(elapsed.as_secs_f64());
    }
    if let Some(id) = id {
        if let Ok(v) = HeaderValue::from_str(&id.to_string()) {
            res.headers_mut()
                .insert(HeaderName::from_static("x-request-id"), v);
        }
    }
    tracing::debug!(
        target: "pitboss::access",
        method = %method,
        route = %route,
        status,
        latency_ms = elapsed.as_secs_f64() * 1000.0,
        "request"
    );
    Ok(res)
}

/// A route template as a label value: `/v1/rounds/{round}/bets` is `/v1/rounds/:round/bets`
/// (braces in label values trip up simple exposition parsers; a segment's pattern, as in
/// `{file:.*}`, is dropped).
fn route_label(template: &str) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        let name = &rest[open + 1..open + close];
        out.push(':');
        out.push_str(name.split(':').next().unwrap_or(name));
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out
}

/// The fields of spans as the JSON log keeps them: the JSON object `tracing-subscriber`'s
/// `JsonFields` writes (members in key order), written straight
/// into one buffer. `JsonFields` puts each value into a `serde_json::Value` in a map and writes
/// the map out through an adaptor that checks every piece it writes for UTF-8: the request's
/// root span, created for every request, cost 12,200 instructions a request with it and 7,700
/// with this (`bench/callgrind.sh`; an HTTP worker's whole request ≈ 110,000). What an event
/// logged in the span shows is the same (the JSON formatter reads these fields back as JSON;
/// test `span_fields_log_as_json_fields_do`).
#[derive(Debug, Default, Clone, Copy)]
pub struct SpanFields;

/// A span's fields as JSON texts, by name, in the order recorded.
#[derive(Default)]
struct SpanFieldsVisitor {
    fields: Vec<(&'static str, String)>,
}

impl SpanFieldsVisitor {
    fn push(&mut self, name: &'static str, json: String) {
        self.fields
            .push((name.strip_prefix("r#").unwrap_or(name), json));
    }

    fn push_str(&mut self, name: &'static str, value: &str) {
        let json = serde_json::to_string(value).expect("a string serialises");
        self.push(name, json);
    }

    /// `{"name":value,…}`: members in key order. (A name repeated, `r#type` beside `type`,
    /// stays repeated in recorded order: whoever reads the object back keeps its last value,
    /// as `JsonFields`'s map did.)
    fn write(mut self, out: &mut String) {
        self.fields.sort_by(|a, b| a.0.cmp(b.0)); // stable
        out.push('{');
        for (i, (name, json)) in self.fields.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&serde_json::to_string(name).expect("a string serialises"));
            out.push(':');
            out.push_str(json);
        }
        out.push('}');
    }
}

impl tracing::field::Visit for SpanFieldsVisitor {
    fn record_f64(&mut self, field: &tracing::field::Field, value: f64) {
        self.push(field.name(), serde_json::Value::from(value).to_string());
    }

    fn record_i64(&mut self, field: &tracing::field::Field, value: i64) {
        self.push(field.name(), value.to_string());
    }

    fn record_u64(&mut self, field: &tracing::field::Field, value: u64) {
        self.push(field.name(), value.to_string());
    }

    fn record_bool(&mut self, field: &tracing::field::Field, value: bool) {
        self.push(field.name(), value.to_string());
    }

    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.push_str(field.name(), value);
    }

    fn record_bytes(&mut self, field: &tracing::field::Field, value: &[u8]) {
        self.push(field.name(), serde_json::Value::from(value).to_string());
    }

    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.push_str(field.name(), &format!("{value:?}"));
    }
}

impl<'w> tracing_subscriber::fmt::FormatFields<'w> for SpanFields {
    fn format_fields<R: tracing_subscriber::field::RecordFields>(
        &self,
        mut writer: tracing_subscriber::fmt::format::Writer<'w>,
        fields: R,
    ) -> std::fmt::Result {
        let mut v = SpanFieldsVisitor::default();
        fields.record(&mut v);
        let mut out = String::new();
        v.write(&mut out);
        writer.write_str(&out)
    }

    /// Fields recorded later (an error's status at a request's end): the object read back,
    /// the new fields put in, written again (as `JsonFields` does).
    fn add_fields(
        &self,
        current: &'w mut tracing_subscriber::fmt::FormattedFields<Self>,
        fields: &tracing::span::Record<'_>,
    ) -> std::fmt::Result {
        let mut v = SpanFieldsVisitor::default();
        fields.record(&mut v);
        let mut all: std::collections::BTreeMap<String, serde_json::Value> = if current.is_empty() {
            Default::default()
        } else {
            serde_json::from_str(current).map_err(|_| std::fmt::Error)?
        };
        for (name, json) in v.fields {
            let value = serde_json::from_str(&json).map_err(|_| std::fmt::Error)?;
            all.insert(name.to_string(), value);
        }
        current.fields = serde_json::to_string(&all).map_err(|_| std::fmt::Error)?;
        Ok(())
    }
}

/// Installs the process's log subscriber: JSON lines (or text) on stderr, filtered by
/// `PITBOSS_LOG` (default `info,actix_server=warn`). Stdout stays for what `serve` prints for people and
/// scripts (the listening address, the bootstrap key). A second call does nothing.
pub fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_env("PITBOSS_LOG")
        .unwrap_or_else(|_| EnvFilter::new("info,actix_server=warn"));
    let text = std::env::var("PITBOSS_LOG_FORMAT").is_ok_and(|f| f.eq_ignore_ascii_case("text"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = if text {
        builder.with_ansi(false).try_init()
    } else {
        builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .fmt_fields(SpanFields)
            .try_init()
    };
}

#[cfg(test)]
mod tests {
    /// An event in a span logs the same line with [`super::SpanFields`] as with
    /// `tracing-subscriber`'s own `JsonFields`: fields of every kind, escapes, a raw name, an
    /// empty field, fields recorded after the span's start.
    #[test]
    fn span_fields_log_as_json_fields_do() {
        use std::io::Write;
        use std::sync::{Arc, Mutex};

        #[derive(Clone, Default)]
        struct Lines(Arc<Mutex<Vec<u8>>>);
        impl Write for Lines {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }

        fn log_some() {
            let span = tracing::info_span!(
                "HTTP request",
                http.method = %"POST",
                http.target = %"/v1/rounds/a:b.1/bets?x=\"q\"&y=ř\u{1}",
                controls = "\t\n\r\u{8}\u{c}\\/\u{1f}\u{7f}é€𝄞",
                http.status_code = tracing::field::Empty,
                otel.kind = "server",
                request_id = %"1b4e28ba-2fa1-11d2-883f-0016d3cca427",
                r#type = 7u64,
                n = -3i64,
                ok = true,
                ratio = 0.25f64,
                nan = f64::NAN,
                dbg = ?vec!["a", "b"],
                exception.message = tracing::field::Empty,
            );
            let _in = span.enter();
            tracing::info!(answer = 42, "first");
            span.record("http.status_code", 503u64);
            span.record("exception.message", "the \"store\" is down");
            span.record("ok", false);
            tracing::warn!("second");
        }

        let run = |ours: bool| {
            let lines = Lines::default();
            let out = lines.clone();
            let builder = tracing_subscriber::fmt()
                .with_writer(move || out.clone())
                .without_time()
                .json()
                .flatten_event(true)
                .with_current_span(true)
                .with_span_list(false);
            if ours {
                tracing::subscriber::with_default(
                    builder.fmt_fields(super::SpanFields).finish(),
                    log_some,
                );
            } else {
                tracing::subscriber::with_default(builder.finish(), log_some);
            }
            let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
            text
        };
        let (theirs, ours) = (run(false), run(true));
        assert_eq!(theirs.lines().count(), 2, "{theirs}");
        for shown in [
            "\"http.target\":\"/v1/rounds/a:b.1/bets?x=\\\"q\\\"&y=ř\\u0001\"",
            "\"type\":7",
            "\"ratio\":0.25",
            "\"nan\":null",
            "\"http.status_code\":503",
            "\"ok\":false",
            "\"controls\":\"\\t\\n\\r\\b\\f\\\\/\\u001f\u{7f}é€𝄞\"",
        ] {
            assert!(theirs.contains(shown), "{shown} in {theirs}");
        }
        assert_eq!(ours, theirs);
    }

    #[test]
    fn route_labels_name_their_segments_without_braces() {
        use super::route_label;
        assert_eq!(
            route_label("/v1/rounds/{round}/bets"),
            "/v1/rounds/:round/bets"
        );
        assert_eq!(route_label("/docs/{file:.*}"), "/docs/:file");
        assert_eq!(route_label("/healthz"), "/healthz");
    }
}
