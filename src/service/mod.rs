//! The service core: one writer thread owns the domain state and the audit log's append side,
//! and group-commits: it takes every command waiting, decides and applies them, seals all
//! their log entries as one batch, writes the batch, the log state, idempotency records and
//! RNG seeds in one database transaction, and only then answers. A bet is acknowledged only
//! once its log entry is durable; one fsync serves a whole batch.
//!
//! Readers (HTTP GETs) read the shared state under a read lock and the stored log through a
//! pool of read connections.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use chrono::{DateTime, SecondsFormat, Utc};
use diesel::prelude::*;
use pitboss_audit::entry::{NewEntry, Timestamp};
use pitboss_audit::hash::Hash;
use pitboss_audit::log::{Appender, LogState, SealedBatch};
use pitboss_audit::note::{NoteSigner, SignedCheckpoint};
use rand::TryRngCore;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::api::dto::{
    BetResult, BetsReply, BlackjackInputNotice, ConnectionReply, DecisionResult, MisdealNotice,
    ProblemDocument, RoundOpenedReply, RoundOutcome, ShoeReply, SpinRejected, SpinResult,
    TableActionReply, TableClosedReply, TableOpenedReply,
};
use crate::games::blackjack as bj;
use crate::games::Refusal;
use crate::limits::{Limits, Rate, ThrottleCounters};
use crate::plan::canonical::hex;
use crate::plan::model::Mode;
use crate::plan::PlanSet;
use crate::round::{draw_pocket, CardRecord, Event, Phase, Refund, RoundState, State};
use crate::store::schema::{audit_entries, checkpoints, idempotency, log_state, rng_seeds};
use crate::store::tiles::{write_tiles, TileRow, Tiles};
use crate::store::{self, DatabaseUrl, DbConnection, ReadPool, StoreError};

pub mod approval;
mod commit_pg;
mod committer;
pub mod deadline;
pub mod derived;
pub mod exception;
pub mod feed;
pub mod follow;
pub mod health;
pub mod logs;
pub mod payouts;
pub mod receipts;
pub mod refusal;
pub mod register;
pub mod retention;
pub mod secrets;
pub mod signing_key;
pub mod summary;
mod wal;
pub mod witnessing;

use derived::Derived;
use secrets::SeedCipher;

/// Most commands folded into one batch (one transaction, one fsync).
pub const MAX_BATCH_COMMANDS: usize = 1024;
/// Commands that may wait for the writer before new ones are turned away with 503.
pub const QUEUE_CAPACITY: usize = 16_384;
/// Checkpoints are signed at least this often while entries are pending.
pub const CHECKPOINT_INTERVAL: Duration = Duration::from_secs(1);
/// How long the writer waits for more work, with a batch in flight, before it looks whether
/// that batch's outcome has come.
const IN_FLIGHT_POLL: Duration = Duration::from_millis(2);
/// How many sealed batches may be in flight by default: handed to the committer, not yet
/// settled by the writer (`PITBOSS_WRITER_PIPELINE`). The committer writes those waiting
/// for it in one transaction (see [`committer`]).
pub const PIPELINE_DEPTH: usize = 8;

/// `PITBOSS_WRITER_PIPELINE`: how many batches may be in flight (0: each batch is waited for
/// before the next is decided); [`PIPELINE_DEPTH`] when unset or not a number.
fn pipeline_depth() -> usize {
    tuning("PITBOSS_WRITER_PIPELINE", PIPELINE_DEPTH, |_| true)
}

/// A tuning knob read from the environment (measuring knobs with no flag of their own): its
/// value, or `default` when unset, or (with a warning in the log) when it is not a number
/// `valid` accepts.
pub(crate) fn tuning<T>(name: &str, default: T, valid: impl Fn(&T) -> bool) -> T
where
    T: std::str::FromStr + std::fmt::Display + Copy,
{
    let Ok(text) = std::env::var(name) else {
        return default;
    };
    match text.trim().parse::<T>() {
        Ok(v) if valid(&v) => v,
        _ => {
            tracing::warn!(%name, value = %text, %default, "not a valid value; the default is used");
            default
        }
    }
}

/// A batch handed to the committer, as the writer keeps it until it takes its outcome.
struct InFlight {
    /// When it was handed over (its transaction, which renews the lease, begins after).
    sent: Instant,
    /// The log's size once it is stored.
    end: u64,
    /// Its idempotent answers, for a retry that arrives before it is stored.
    answers: HashMap<(String, String), (String, StoredReply)>,
    /// Its player-register counts, for the limits of the batches decided after it.
    register: register::Writes,
}

/// How long an idle writer lets a batch be written before it waits for it
/// ([`Writer::settle_if_done`]).
const IN_FLIGHT_PATIENCE: Duration = Duration::from_millis(100);
/// How long a request waits for the writer's answer by default; past it the request is
/// answered 503 with its outcome unknown (a retry with the same Idempotency-Key tells).
pub const SUBMIT_DEADLINE: Duration = Duration::from_secs(3);
/// The exit code of a node that stopped because another node took its lease over.
pub const EXIT_FENCED: i32 = 75;

/// A change an operator asks for.
#[derive(Debug, Clone)]
pub enum Command {
    OpenTable {
        table: String,
        plan: String,
        mode: Mode,
        /// The table's registration number and dealing device, when given.
        registration: Option<Box<crate::round::regulator::Registration>>,
    },
    CloseTable {
        table: String,
        reason: String,
    },
    OpenRound {
        table: String,
    },
    Bets {
        round: String,
        bets: Vec<(String, Value)>,
    },
    CloseBetting {
        round: String,
    },
    Spin {
        round: String,
        number: u8,
        ball_against_rotation: bool,
        ball_revolutions: u8,
    },
    Draw {
        round: String,
    },
    /// Live card games: cards reported by the dealer system.
    Cards {
        round: String,
        cards: Vec<crate::round::game::ReportedCard>,
    },
    Misdeal {
        round: String,
        reason: String,
    },
    Decisions {
        round: String,
        decisions: Vec<(String, Value)>,
    },
    CloseDecisions {
        round: String,
    },
    Shoe {
        table: String,
        change: bool,
    },
    /// An act at a player-versus-player table; `None`: the plan's automatic act.
    TableAction {
        table: String,
        action: Option<Value>,
    },
    Void {
        round: String,
        reason: String,
    },
    Connection {
        table: String,
        player: String,
        connected: bool,
    },
    /// An API key's lifecycle (created, revoked, its expiry set): decided by the HTTP layer,
    /// which holds the key ring; the writer logs the events, writes the `api_keys` rows in the
    /// same transaction, and answers `status` and `body` once they are durable.
    Keys {
        events: Vec<Event>,
        /// Keys created: their rows, with the secret's hash (never logged).
        rows: Vec<derived::NewKeyRow>,
        status: u16,
        body: Value,
    },
    /// A regulator's approval of a plan version over the API.
    ApprovePlan {
        request: Box<approval::ApprovalRequest>,
        actor: Box<crate::round::regulator::Actor>,
    },
    /// An approval made offline: a note signed with a regulator's key, checked against the
    /// configured regulator keys (`actor` is the key that posted it).
    ApprovePlanNote {
        note: String,
        actor: Box<crate::round::regulator::Actor>,
    },
    WithdrawApproval {
        reference: String,
        reason: String,
        actor: Box<crate::round::regulator::Actor>,
    },
    /// The dealer system or staff reports an error: the round waits for a repair.
    PauseRound {
        round: String,
        reason: String,
        reported: Option<String>,
    },
    /// A repair: the paused round goes on.
    ResumeRound {
        round: String,
        reason: String,
    },
    /// A void of some players' or bets' stakes (`crate::round::refunds`).
    PartialVoid {
        round: String,
        reason: String,
        players: Vec<String>,
        bets: Vec<String>,
    },
    /// A player's bets withdrawn before betting closes (`crate::round::refunds`).
    Withdraw {
        round: String,
        player: String,
        bets: Vec<String>,
    },
    /// The operator paid what a settlement owed a player (`payouts`).
    ConfirmPayout {
        round: String,
        player: String,
        wallet_reference: String,
    },
    /// A change to the operator's player register (`register`, 002 § 6).
    Register(register::RegisterCommand),
}

impl Command {
    /// The command's name as logged in a `command_refused` entry.
    pub fn name(&self) -> &'static str {
        match self {
            Command::OpenTable { .. } => "open_table",
            Command::CloseTable { .. } => "close_table",
            Command::OpenRound { .. } => "open_round",
            Command::Bets { .. } => "place_bets",
            Command::CloseBetting { .. } => "close_betting",
            Command::Spin { .. } => "spin",
            Command::Draw { .. } => "draw",
            Command::Cards { .. } => "cards",
            Command::Misdeal { .. } => "misdeal",
            Command::Decisions { .. } => "decisions",
            Command::CloseDecisions { .. } => "close_decisions",
            Command::Shoe { change: false, .. } => "shuffle_shoe",
            Command::Shoe { change: true, .. } => "change_shoe",
            Command::TableAction { .. } => "table_action",
            Command::Void { .. } => "void",
            Command::Connection { .. } => "player_connection",
            Command::Keys { .. } => "api_keys",
            Command::ApprovePlan { .. } => "approve_plan",
            Command::ApprovePlanNote { .. } => "approve_plan_note",
            Command::WithdrawApproval { .. } => "withdraw_approval",
            Command::PauseRound { .. } => "pause_round",
            Command::ResumeRound { .. } => "resume_round",
            Command::PartialVoid { .. } => "partial_void",
            Command::Withdraw { .. } => "withdraw_bets",
            Command::ConfirmPayout { .. } => "confirm_payout",
            Command::Register(c) => c.name(),
        }
    }

    /// The table or round the command names, as the operator named it, to be resolved to
    /// the log's id ([`resolve_names`]); with a partial void's or a withdrawal's bets.
    fn names_mut(&mut self) -> Names<'_> {
        match self {
            Command::OpenTable { .. } => Names::None,
            Command::CloseTable { table, .. }
            | Command::OpenRound { table }
            | Command::Shoe { table, .. }
            | Command::TableAction { table, .. }
            | Command::Connection { table, .. } => Names::Table(table),
            Command::PartialVoid { round, bets, .. } | Command::Withdraw { round, bets, .. } => {
                Names::Round(round, Some(bets))
            }
            Command::Bets { round, .. }
            | Command::CloseBetting { round }
            | Command::Spin { round, .. }
            | Command::Draw { round }
            | Command::Cards { round, .. }
            | Command::Misdeal { round, .. }
            | Command::Decisions { round, .. }
            | Command::CloseDecisions { round }
            | Command::Void { round, .. }
            | Command::PauseRound { round, .. }
            | Command::ResumeRound { round, .. }
            | Command::ConfirmPayout { round, .. } => Names::Round(round, None),
            Command::Keys { .. }
            | Command::Register(_)
            | Command::ApprovePlan { .. }
            | Command::ApprovePlanNote { .. }
            | Command::WithdrawApproval { .. } => Names::None,
        }
    }

    /// The table or round the command concerns.
    fn target(&self) -> (Option<String>, Option<String>) {
        match self {
            Command::OpenTable { table, .. }
            | Command::CloseTable { table, .. }
            | Command::OpenRound { table }
            | Command::Shoe { table, .. }
            | Command::TableAction { table, .. }
            | Command::Connection { table, .. } => (Some(table.clone()), None),
            Command::Keys { .. } | Command::Register(_) => (None, None),
            Command::Bets { round, .. }
            | Command::CloseBetting { round }
            | Command::Spin { round, .. }
            | Command::Draw { round }
            | Command::Cards { round, .. }
            | Command::Misdeal { round, .. }
            | Command::Decisions { round, .. }
            | Command::CloseDecisions { round }
            | Command::Void { round, .. }
            | Command::PauseRound { round, .. }
            | Command::ResumeRound { round, .. }
            | Command::PartialVoid { round, .. }
            | Command::Withdraw { round, .. }
            | Command::ConfirmPayout { round, .. } => (
                round.split('.').next().map(str::to_string),
                Some(round.clone()),
            ),
            Command::ApprovePlan { .. }
            | Command::ApprovePlanNote { .. }
            | Command::WithdrawApproval { .. } => (None, None),
        }
    }
}

/// The answer to a command: an HTTP status and a JSON body, stored verbatim for idempotent
/// retries.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub body: Value,
    /// Seconds a client should wait before retrying (`Retry-After`; 429 and 503 only).
    pub retry_after_s: Option<u64>,
    /// `body` as JSON text, when the writer has it already (an answer it stores for retries,
    /// or one it repeats from a batch in flight; not one read back from the store): the HTTP
    /// worker sends it as it is rather than serialising `body` a second time. The same bytes
    /// either way (`Value`'s text).
    pub text: Option<Arc<str>>,
}

/// Replies are equal by what they answer; `text` is `body` written out, when known.
impl PartialEq for Reply {
    fn eq(&self, other: &Reply) -> bool {
        self.status == other.status
            && self.body == other.body
            && self.retry_after_s == other.retry_after_s
    }
}

/// An answer as its idempotency record holds it: the status and the body's JSON text.
#[derive(Debug, Clone)]
struct StoredReply {
    status: u16,
    text: Arc<str>,
}

impl StoredReply {
    /// The answer again (for a retry that arrives while its first answer is in flight).
    fn to_reply(&self) -> Reply {
        Reply {
            status: self.status,
            body: serde_json::from_str(&self.text).expect("a body serialised by the writer parses"),
            retry_after_s: None,
            text: Some(self.text.clone()),
        }
    }
}

/// A reply body as stored: one of the body types of [`crate::api::dto`], which
/// `openapi.json` describes.
fn body<T: serde::Serialize>(dto: &T) -> Value {
    serde_json::to_value(dto).expect("reply bodies are plain data and serialise")
}

impl Reply {
    fn ok<T: serde::Serialize>(status: u16, dto: &T) -> Reply {
        Reply {
            status,
            body: body(dto),
            retry_after_s: None,
            text: None,
        }
    }

    /// A refusal as an RFC 9457 body.
    pub fn refusal(status: u16, r: &Refusal) -> Reply {
        let problem = ProblemDocument {
            problem_type: format!("urn:pitboss:problem:{}", r.code),
            title: "Refused".to_string(),
            status,
            code: r.code.clone(),
            detail: r.message.clone(),
            plan: r.plan.clone(),
            clause: r.clause.clone(),
        };
        Reply {
            status,
            body: body(&problem),
            retry_after_s: None,
            text: None,
        }
    }

    /// 503: nothing was recorded; the client retries with the same Idempotency-Key.
    pub fn unavailable(detail: &str) -> Reply {
        Reply {
            retry_after_s: Some(1),
            ..Reply::refusal(503, &Refusal::new("unavailable", detail))
        }
    }

    /// 503: the writer did not answer within the deadline; the command may yet be recorded.
    pub fn outcome_unknown(deadline: Duration) -> Reply {
        Reply {
            retry_after_s: Some(1),
            ..Reply::refusal(
                503,
                &Refusal::new(
                    "outcome_unknown",
                    format!(
                        "the store did not confirm this request within {} ms: it may or may not \
                         have been recorded; retry with the same Idempotency-Key, which returns \
                         the recorded answer or performs the request once",
                        deadline.as_millis()
                    ),
                ),
            )
        }
    }

    /// 429: a limit of the caller's was reached; nothing was recorded.
    pub fn throttled(code: &str, detail: String, retry_after_s: u64) -> Reply {
        let mut r = Reply::refusal(429, &Refusal::new(code, detail));
        r.body["title"] = Value::from("Too many requests");
        r.retry_after_s = Some(retry_after_s.max(1));
        r
    }

    pub fn is_problem(&self) -> bool {
        self.status >= 400
    }
}

/// Stored answers by (operator, Idempotency-Key): the request's fingerprint and the reply.
type IdempotencyCache = HashMap<(String, String), (String, Reply)>;

/// An idempotency key and the fingerprint of the request that first used it.
#[derive(Debug, Clone)]
pub struct Idempotency {
    pub key: String,
    pub request_hash: String,
}

struct Job {
    operator: String,
    idem: Option<Idempotency>,
    /// Who asks (the key, and the person the caller named): written into the exception
    /// entries the command logs (a void, a pause, a table closed).
    actor: Option<Box<crate::round::regulator::Actor>>,
    command: Command,
    reply: tokio::sync::oneshot::Sender<Reply>,
    /// The HTTP request the command came in (for the logs).
    request_id: Option<tracing_actix_web::RequestId>,
    queued_at: Instant,
}

enum Msg {
    Job(Box<Job>),
    /// Store a snapshot, sign what is unsigned, and stop (a clean shutdown).
    Shutdown(tokio::sync::oneshot::Sender<()>),
    /// Sign a checkpoint now (on demand, before an export).
    Checkpoint(tokio::sync::oneshot::Sender<Result<u64, String>>),
    /// A step of a signing-key rotation ([`signing_key`]).
    RotateSigningKey(
        signing_key::Stage,
        tokio::sync::oneshot::Sender<Result<signing_key::Rotated, signing_key::Refused>>,
    ),
}

/// Counters for `/metrics`.
#[derive(Debug, Default)]
pub struct Metrics {
    pub bets_accepted: AtomicU64,
    pub bets_refused: AtomicU64,
    pub rounds_settled: AtomicU64,
    pub rounds_voided: AtomicU64,
    pub batches: AtomicU64,
    pub batch_commands: AtomicU64,
    pub log_entries: AtomicU64,
    pub checkpoints: AtomicU64,
    pub storage_failures: AtomicU64,
    /// Players whose register a batch found in the writer's cache, and players it read from
    /// the store (`register::Cache`).
    pub register_players_cached: AtomicU64,
    pub register_players_read: AtomicU64,
    /// Requests each limit refused (see [`crate::limits`]).
    pub throttled: Arc<ThrottleCounters>,
    /// Refusal entries not logged because their operator's refusal budget was used up.
    pub refusals_unlogged: AtomicU64,
    /// Snapshots of the live state stored, and the size of the last one.
    pub snapshots: AtomicU64,
    pub snapshot_bytes: AtomicU64,
    /// Log entries the last start replayed (those after the snapshot it started from).
    pub start_replayed_entries: AtomicU64,
    /// Rounds and tables held in memory (the live working set).
    pub rounds_in_memory: AtomicU64,
    pub tables_in_memory: AtomicU64,
    /// Latency histograms of the HTTP layer and of the writer's stages (`/metrics`).
    pub http: crate::observe::HttpMetrics,
    pub writer: crate::observe::WriterMetrics,
    /// Whether the writer can write now (`/readyz`).
    pub health: health::Health,
    /// Each configured witness's cosignatures and failures.
    pub witnesses: witnessing::WitnessMetrics,
}

/// What the HTTP layer holds.
pub struct Service {
    tx: SyncSender<Msg>,
    pub state: Arc<RwLock<State>>,
    pub pool: ReadPool,
    pub plans: Arc<PlanSet>,
    pub metrics: Arc<Metrics>,
    pub origin: String,
    /// The key that signs the log now (changed by a rotation's end).
    pub public_key_pem: Arc<RwLock<String>>,
    pub key_validity: Arc<RwLock<Vec<pitboss_audit::keys::KeyValidity>>>,
    pub database: DatabaseUrl,
    /// How long a request waits for the writer ([`SUBMIT_DEADLINE`] unless configured).
    pub submit_deadline: Duration,
    /// `serve --require-approval`: tables and rounds only on approved plan versions.
    pub require_approval: bool,
    /// The witnesses that cosign the log's checkpoints, and their quorum.
    pub witnesses: witnessing::Witnesses,
    /// A log another node writes, followed from the store ([`follow`]); `None` for a log
    /// this process writes.
    pub followed: Option<Arc<follow::Cursor>>,
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("signing key {path}: {detail}")]
    Key { path: PathBuf, detail: String },
    #[error("replaying the audit log: {0}")]
    Replay(String),
    #[error("{0}")]
    Origin(String),
    /// Another process writes this log.
    #[error("{0}")]
    Locked(String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// What `serve` configures beyond the database, plans and signing key.
#[derive(Debug, Clone, Default)]
pub struct StartOptions {
    pub limits: Limits,
    /// The key that encrypts stored RNG seeds; default `seed-key` beside the signing key.
    pub seed_key: Option<PathBuf>,
    /// Counters the HTTP layer's limits share with the writer's, for `/metrics`.
    pub throttled: Arc<ThrottleCounters>,
    /// How long idempotency records are kept (`None`: [`retention::DEFAULT_RETENTION`]).
    pub idempotency_retention: Option<Duration>,
    /// What the regulator's rules ask of this deployment (`--require-approval`, …).
    pub regulator: approval::RegulatorOptions,
    /// When the writer stores a snapshot of the live state (`None`: [`Snapshots::default`]).
    pub snapshots: Option<Snapshots>,
    /// How long a request waits for the writer (`None`: [`SUBMIT_DEADLINE`]).
    pub submit_deadline: Option<Duration>,
    /// The witnesses each new checkpoint is sent to ([`witnessing`]).
    pub witnesses: witnessing::WitnessOptions,
    /// Readers connect on first use and keep no idle connection (an operator's log, [`logs`]).
    pub lazy_reads: bool,
    /// Where approvals of plan versions are decided when not in this log: the service log's
    /// state, for an operator's log ([`logs`]).
    pub approvals_from: Option<follow::Approvals>,
    /// The writer's histograms, shared with the service log's (an operator's log, [`logs`]):
    /// `/metrics` shows every log's batches together.
    pub writer_metrics: Option<crate::observe::WriterMetrics>,
}

/// When the writer stores a snapshot of the live state: after `every_entries` new entries,
/// or `interval` after the last one if any entry came since, and at a clean shutdown. A start
/// reads the latest and replays only the entries after it. `every_entries = 0` turns them
/// off (every start replays the whole log).
#[derive(Debug, Clone, Copy)]
pub struct Snapshots {
    pub every_entries: u64,
    pub interval: Duration,
}

impl Default for Snapshots {
    fn default() -> Self {
        Snapshots {
            every_entries: 10_000,
            interval: Duration::from_secs(60),
        }
    }
}

/// The note of the latest stored checkpoint (the log's own signatures; witnesses'
/// cosignatures are stored beside it), if any.
pub(crate) fn latest_note(conn: &mut DbConnection) -> QueryResult<Option<String>> {
    Ok(checkpoints::table
        .order(checkpoints::tree_size.desc())
        .select(checkpoints::note)
        .limit(1)
        .load(conn)?
        .pop())
}

/// The log's store, migrated and connected, and this node's signing key, checked to be the
/// one that signed the log's latest checkpoint (a node of another deployment, or one started
/// on a fresh data directory, would sign what no auditor of this log accepts).
fn open_with_key(
    url: &DatabaseUrl,
    key_path: &Path,
) -> Result<(ed25519_dalek::SigningKey, DbConnection), StartError> {
    store::migrate(url)?;
    let key_err = |detail: String| StartError::Key {
        path: key_path.to_path_buf(),
        detail,
    };
    let key = crate::keyfile::load_or_create(key_path).map_err(|e| key_err(e.detail))?;
    let mut conn = store::connect(url)?;
    signs_the_log(&mut conn, key_path, &key).map_err(key_err)?;
    Ok((key, conn))
}

/// Whether `key` (or, during a rotation, the next key beside it) signed the log's latest
/// stored checkpoint: a node started with another key (a new data directory that generated
/// one, a standby given the wrong file) would otherwise sign the log's next checkpoints with
/// it, which no auditor holding the log's key accepts. A log with no checkpoint yet takes any
/// key.
fn signs_the_log(
    conn: &mut DbConnection,
    key_path: &Path,
    key: &ed25519_dalek::SigningKey,
) -> Result<(), String> {
    let note = latest_note(conn).map_err(|e| format!("reading the latest checkpoint: {e}"))?;
    let Some(note) = note else {
        return Ok(());
    };
    let signed = SignedCheckpoint::parse(&note)
        .map_err(|e| format!("the latest stored checkpoint does not parse: {e}"))?;
    let text = signed.checkpoint.text();
    let mut keys = vec![key.verifying_key()];
    let next = signing_key::next_path(key_path);
    if next.exists() {
        if let Ok(k) = crate::keyfile::load_or_create(&next) {
            keys.push(k.verifying_key());
        }
    }
    if signed
        .signatures
        .iter()
        .any(|sig| keys.iter().any(|k| sig.verify(text.as_bytes(), k)))
    {
        return Ok(());
    }
    Err(format!(
        "this key did not sign the log's latest checkpoint (size {}): it is not this log's \
         signing key. Give the log's key (--signing-key), as every node of the log must",
        signed.checkpoint.size
    ))
}

fn fenced_detail(holder: &store::lease::Holder) -> String {
    let at = holder
        .address
        .as_deref()
        .map(|a| format!(" at {a}"))
        .unwrap_or_default();
    format!(
        "this node no longer writes the log: another node ({}{at}, lease token {}) took its \
         lease over; nothing of this request was recorded by this node, retry with the same \
         Idempotency-Key",
        holder.holder, holder.token
    )
}

fn now_ts(now: DateTime<Utc>) -> Timestamp {
    Timestamp::from_datetime(now)
}

/// The writer's own state: everything it must keep consistent with the database.
struct Writer {
    conn: DbConnection,
    appender: Appender,
    signer: NoteSigner,
    /// During a signing-key rotation, the new key: checkpoints are signed by both.
    next_signer: Option<NoteSigner>,
    key_path: PathBuf,
    public_key_pem: Arc<RwLock<String>>,
    state: Arc<RwLock<State>>,
    /// The right edge of the stored Merkle tree (the partial tile of each level).
    tiles: Tiles,
    key_validity: Arc<RwLock<Vec<pitboss_audit::keys::KeyValidity>>>,
    plans: Arc<PlanSet>,
    metrics: Arc<Metrics>,
    /// Secret RNG seeds of rounds not yet settled.
    seeds: HashMap<String, [u8; 32]>,
    /// Seeds are stored encrypted with this (its key lives beside the signing key).
    seed_cipher: SeedCipher,
    last_checkpoint: Instant,
    url: DatabaseUrl,
    limits: Limits,
    /// Bytes of refusal entries each operator may still log.
    refusal_budget: Rate<String>,
    snapshots: Snapshots,
    /// The database lock (SQLite) or lease (PostgreSQL) that makes this the log's one writer.
    guard: store::lease::WriterGuard,
    lease_renewed: Instant,
    /// The log's size right after the last snapshot's entry (or at start).
    snapshot_size: u64,
    last_snapshot: Instant,
    /// `serve --require-approval`.
    require_approval: bool,
    /// The service log's state, whose approvals an operator's log checks ([`logs`]).
    approvals_from: Option<follow::Approvals>,
    /// `serve --require-registration`.
    require_registration: bool,
    /// The regulators' keys that sign offline approvals.
    regulator_keys: Vec<pitboss_audit::note::NoteVerifier>,
    /// The committer's queue (see [`committer`]): at most `depth` batches are in flight.
    commits: SyncSender<committer::Commit>,
    outcomes: Receiver<committer::Outcome>,
    /// The batches handed to the committer whose outcomes the writer has not taken yet, oldest
    /// first (their outcomes come in this order).
    in_flight: VecDeque<InFlight>,
    /// How many batches may be in flight (`PITBOSS_WRITER_PIPELINE`, [`PIPELINE_DEPTH`] by
    /// default; 0: each batch is waited for before the next is decided, to measure what the
    /// pipeline gives in one binary).
    depth: usize,
    /// The register of the players recent batches read, as the decided batches left it
    /// (`register::Cache`): emptied by every reload from the store.
    register_cache: register::Cache,
    /// Which state the batches are built on: bumped by every reload from the store. The
    /// committer refuses a batch of a generation it saw fail (it was built on that batch).
    generation: u64,
    /// Live rounds' progress, for the interrupted-round deadline ([`deadline`]).
    deadlines: deadline::Deadlines,
    /// Each stored checkpoint is handed to the witnesses' threads here ([`witnessing`]).
    witnesses: witnessing::Hub,
}

impl Service {
    /// Migrates the database, loads the signing key, replays the log into the domain state and
    /// starts the writer thread.
    /// `origin` is the configured one; see [`crate::origin::resolve`] for what is run with.
    pub fn start(
        url: DatabaseUrl,
        plans: PlanSet,
        key_path: &Path,
        origin: Option<&str>,
        options: StartOptions,
    ) -> Result<Service, StartError> {
        let key_err = |detail: String| StartError::Key {
            path: key_path.to_path_buf(),
            detail,
        };
        // Before the lease: a node (or a standby) with another key must not write this log.
        let (key, mut conn) = open_with_key(&url, key_path)?;
        let guard = store::lease::acquire(&url, &mut conn).map_err(StartError::Locked)?;
        // Until the writer runs and renews it, the lease is renewed aside: a start may last
        // longer than the lease, and a standby would take the log over meanwhile.
        let keeper = store::lease::Keeper::start(&url, &guard);
        let origin = crate::origin::resolve(
            origin,
            stored_origin(&mut conn)?.as_deref(),
            &key,
            url.is_sqlite(),
        )
        .map_err(|e| StartError::Origin(e.to_string()))?;
        let origin = origin.as_str();
        let signer = NoteSigner::new(origin, key).map_err(|e| key_err(e.to_string()))?;
        let seed_key = secrets::seed_key_path(options.seed_key.as_deref(), key_path);
        let seed_cipher = SeedCipher::load_or_create(&seed_key).map_err(|e| StartError::Key {
            path: seed_key.clone(),
            detail: e.to_string(),
        })?;
        let regulator_keys = options
            .regulator
            .regulator_keys
            .iter()
            .map(|k| {
                pitboss_audit::note::NoteVerifier::from_vkey(k.trim())
                    .map_err(|e| StartError::Origin(format!("regulator key {k:?}: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let witnesses =
            witnessing::Witnesses::parse(&options.witnesses).map_err(StartError::Origin)?;
        let plans = Arc::new(plans);
        let (appender, state, tiles, replayed) = recover(&mut conn, &plans, &signer, origin)?;
        // The keys the logged schedule wants, across a rotation.
        let (signer, next_signer) =
            signing_key::resolve(key_path, signer, &appender).map_err(key_err)?;
        let public_key_pem = pitboss_audit::note::public_key_to_pem(signer.verifier().key())
            .map_err(|e| key_err(e.to_string()))?;
        let public_key_pem = Arc::new(RwLock::new(public_key_pem));
        feed::backfill(&mut conn)?;
        let seeds = load_seeds(&mut conn, &seed_cipher)?;
        let mut metrics = Metrics {
            throttled: options.throttled.clone(),
            ..Metrics::default()
        };
        if let Some(w) = &options.writer_metrics {
            metrics.writer = w.clone();
        }
        let metrics = Arc::new(metrics);
        let submit_deadline = options.submit_deadline.unwrap_or(SUBMIT_DEADLINE);
        metrics.health.set_deadline(submit_deadline);
        metrics
            .log_entries
            .store(appender.size(), Ordering::Relaxed);
        metrics
            .start_replayed_entries
            .store(replayed, Ordering::Relaxed);
        let state = Arc::new(RwLock::new(state));
        let key_validity = Arc::new(RwLock::new(appender.keys().validity()));
        let pool = if options.lazy_reads {
            store::lazy_read_pool(&url, 4)
        } else {
            store::read_pool(&url, 4)?
        };
        let (tx, rx) = mpsc::sync_channel(QUEUE_CAPACITY);
        let depth = pipeline_depth();
        let (commits, commit_rx) = mpsc::sync_channel(depth.max(1));
        let (outcome_tx, outcomes) = mpsc::sync_channel(depth.max(1));
        let wal_restart = Arc::new(wal::Restart::default());
        let committer = committer::Committer {
            url: url.clone(),
            conn: None,
            fence: guard.token(),
            metrics: metrics.clone(),
            indexed_to: None,
            indexed_at: Instant::now(),
            index_every: store::entry_index::every(),
            refuse_below: 0,
            wal_restart: wal_restart.clone(),
        };
        wal::for_writing(&mut conn).map_err(StoreError::from)?;
        wal::spawn(&url, Arc::downgrade(&metrics), wal_restart)?;
        std::thread::Builder::new()
            .name("pitboss-committer".into())
            .spawn(move || committer.run(commit_rx, outcome_tx))?;
        let mut writer = Writer {
            conn,
            appender,
            signer,
            next_signer,
            key_path: key_path.to_path_buf(),
            public_key_pem: public_key_pem.clone(),
            state: state.clone(),
            tiles,
            key_validity: key_validity.clone(),
            plans: plans.clone(),
            metrics: metrics.clone(),
            seeds,
            seed_cipher,
            last_checkpoint: Instant::now(),
            url: url.clone(),
            refusal_budget: Rate::per_second_with_burst(
                options.limits.operator_refusal_log_bytes_per_s,
                60,
            ),
            limits: options.limits,
            snapshots: options.snapshots.unwrap_or_default(),
            guard,
            lease_renewed: Instant::now(),
            snapshot_size: 0,
            last_snapshot: Instant::now(),
            require_approval: options.regulator.require_approval,
            approvals_from: options.approvals_from.clone(),
            require_registration: options.regulator.require_registration,
            regulator_keys,
            commits,
            outcomes,
            in_flight: VecDeque::new(),
            depth,
            register_cache: register::Cache::default(),
            generation: 0,
            deadlines: deadline::Deadlines::default(),
            witnesses: witnessing::Hub::default(),
        };
        // The log's size right after the snapshot this start read (0 without one). Not the
        // log's size: the tail replayed at start is in no snapshot yet, so a clean stop with no
        // new entry must still store one, or every later start replays that tail again.
        writer.snapshot_size = match writer.appender.size() - replayed {
            0 => 0,
            covers => covers + 1,
        };
        writer.log_loaded_plans()?;
        writer.evict(&Faulted::default());
        retention::spawn_pruner(
            url.clone(),
            options
                .idempotency_retention
                .unwrap_or(retention::DEFAULT_RETENTION),
        )?;
        // A checkpoint at start covers whatever the previous run left unsigned.
        writer.checkpoint_if_pending().map_err(StartError::Replay)?;
        // Each witness's thread starts with the latest stored checkpoint.
        writer.witnesses = witnessing::start(&url, &witnesses, &metrics.witnesses)?;
        drop(keeper);
        // The writer renews at its first pause.
        writer.lease_renewed = Instant::now()
            .checked_sub(store::lease::duration())
            .unwrap_or_else(Instant::now);
        std::thread::Builder::new()
            .name("pitboss-writer".into())
            .spawn(move || writer.run(rx))?;
        Ok(Service {
            tx,
            state,
            pool,
            plans,
            metrics,
            origin: origin.to_string(),
            public_key_pem,
            key_validity,
            database: url,
            submit_deadline,
            require_approval: options.regulator.require_approval,
            witnesses,
            followed: None,
        })
    }

    /// Submits a command and waits for its durable answer.
    pub async fn submit(
        &self,
        operator: &str,
        idem: Option<Idempotency>,
        command: Command,
    ) -> Reply {
        self.submit_as(operator, None, idem, command).await
    }

    /// Submits a command naming who asks (see [`exception`]) and waits for its durable answer.
    pub async fn submit_as(
        &self,
        operator: &str,
        actor: Option<crate::round::regulator::Actor>,
        idem: Option<Idempotency>,
        command: Command,
    ) -> Reply {
        // While the store refuses writes, nothing would be recorded: say so at once rather
        // than after the deadline.
        if let Err(not_ready) = self.metrics.health.readiness() {
            return Reply::unavailable(&format!(
                "{}; nothing of this request was recorded, retry with the same Idempotency-Key",
                not_ready.detail
            ));
        }
        let (reply, rx) = tokio::sync::oneshot::channel();
        let job = Job {
            operator: operator.to_string(),
            idem,
            actor: actor.map(Box::new),
            command,
            reply,
            request_id: crate::observe::current_request_id(),
            queued_at: Instant::now(),
        };
        match self.tx.try_send(Msg::Job(Box::new(job))) {
            Ok(()) => {
                self.metrics.writer.queue_depth.inc();
            }
            Err(TrySendError::Full(_)) => {
                return Reply::unavailable(
                    "the service is at capacity; retry with the same Idempotency-Key",
                )
            }
            Err(TrySendError::Disconnected(_)) => {
                return Reply::unavailable("the writer has stopped")
            }
        }
        match tokio::time::timeout(self.submit_deadline, rx).await {
            Ok(reply) => reply.unwrap_or_else(|_| Reply::unavailable("the writer has stopped")),
            // The command may still be decided and committed: only a retry can tell.
            Err(_) => Reply::outcome_unknown(self.submit_deadline),
        }
    }

    /// Stops the writer after what it has queued: it stores a snapshot of the live state and
    /// signs what is unsigned first. Waits at most 10 s.
    pub async fn shutdown(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        let (tx, rx) = tokio::sync::oneshot::channel();
        let mut msg = Msg::Shutdown(tx);
        loop {
            match self.tx.try_send(msg) {
                Ok(()) => break,
                Err(TrySendError::Full(m)) if Instant::now() < deadline => {
                    msg = m;
                    actix_web::rt::time::sleep(Duration::from_millis(20)).await;
                }
                Err(_) => return,
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        let _ = actix_web::rt::time::timeout(left, rx).await;
    }

    /// Takes a step of a signing-key rotation ([`signing_key`]).
    pub async fn rotate_signing_key(
        &self,
        stage: signing_key::Stage,
    ) -> Result<signing_key::Rotated, signing_key::Refused> {
        let busy = |detail: &str| signing_key::Refused {
            status: 503,
            code: "unavailable",
            detail: detail.to_owned(),
        };
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.tx
            .try_send(Msg::RotateSigningKey(stage, tx))
            .map_err(|_| busy("the writer is busy or stopped; retry"))?;
        tokio::time::timeout(self.submit_deadline, rx)
            .await
            .map_err(|_| busy("the writer did not answer in time; retry (a begun rotation answers rotation_open)"))?
            .map_err(|_| busy("the writer has stopped"))?
    }

    /// Signs a checkpoint of the current log now; returns its size.
    pub async fn checkpoint_now(&self) -> Result<u64, String> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.tx
            .try_send(Msg::Checkpoint(tx))
            .map_err(|_| "the writer is busy or stopped".to_string())?;
        tokio::time::timeout(self.submit_deadline, rx)
            .await
            .map_err(|_| "the writer did not sign a checkpoint in time".to_string())?
            .map_err(|_| "the writer has stopped".to_string())?
    }
}

/// The origin of the log already in the database, if there is one.
fn stored_origin(conn: &mut DbConnection) -> Result<Option<String>, StartError> {
    Ok(stored_log_state(conn)?.map(|st| st.origin))
}

/// The log's state as its writer last committed it (none before the log's first entry).
fn stored_log_state(conn: &mut DbConnection) -> Result<Option<LogState>, StartError> {
    let stored: Option<String> = log_state::table
        .filter(log_state::id.eq(1))
        .select(log_state::state)
        .first(conn)
        .optional()
        .map_err(StoreError::from)?;
    stored
        .map(|s| {
            serde_json::from_str::<LogState>(&s)
                .map_err(|e| StartError::Replay(format!("log state: {e}")))
        })
        .transpose()
}

/// Rebuilds the appender and the domain state from the database: the log is the event source.
fn recover(
    conn: &mut DbConnection,
    plans: &PlanSet,
    signer: &NoteSigner,
    origin: &str,
) -> Result<(Appender, State, Tiles, u64), StartError> {
    let appender = match stored_log_state(conn)? {
        Some(st) => Appender::from_state(st).map_err(|e| StartError::Replay(e.to_string()))?,
        None => Appender::new(origin, std::slice::from_ref(signer.verifier()))
            .map_err(|e| StartError::Replay(e.to_string()))?,
    };
    // Start from the latest snapshot when it is sound; otherwise from the log's first entry.
    let (mut state, covers) = match restore_snapshot(conn, plans, appender.size())? {
        Some((state, covers)) => (state, covers),
        None => (State::default(), 0),
    };
    let mut count: u64 = covers;
    let mut last: i64 = covers as i64 - 1;
    // A database written before finished rounds and closed tables were stored: store them as
    // a full replay finishes them (once).
    let (backfill_rounds, backfill_tables) = if covers == 0 {
        (
            !derived::any_finished_round(conn)?,
            !derived::any_closed_table(conn)?,
        )
    } else {
        (false, false)
    };
    let mut to_store = Derived::default();
    const PAGE: i64 = 10_000;
    loop {
        let rows: Vec<(i64, Vec<u8>)> = audit_entries::table
            .filter(audit_entries::seq.gt(last))
            .order(audit_entries::seq.asc())
            .select((audit_entries::seq, audit_entries::canonical))
            .limit(PAGE)
            .load(conn)
            .map_err(StoreError::from)?;
        if rows.is_empty() {
            break;
        }
        for (seq, canonical) in rows {
            if seq != last + 1 {
                return Err(StartError::Replay(format!("entry {} is missing", last + 1)));
            }
            last = seq;
            count += 1;
            apply_logged(
                &mut state,
                plans,
                seq,
                &canonical,
                |state, event| match event {
                    Event::RoundSettled { round, .. } | Event::RoundVoided { round, .. }
                        if backfill_rounds =>
                    {
                        to_store
                            .finished
                            .extend(derived::finished_rows(state, std::slice::from_ref(round)));
                    }
                    Event::TableClosed { table, .. } if backfill_tables => {
                        to_store
                            .closed
                            .extend(derived::closed_rows(state, std::slice::from_ref(table)));
                    }
                    _ => {}
                },
            )?;
        }
        if !to_store.finished.is_empty() || !to_store.closed.is_empty() {
            conn.transaction(|c| derived::write(c, &to_store))
                .map_err(StoreError::from)?;
            to_store = Derived::default();
        }
    }
    if count != appender.size() {
        return Err(StartError::Replay(format!(
            "the log state counts {} entries but {count} are stored",
            appender.size(),
        )));
    }
    let tiles = match Tiles::load(conn, appender.size()) {
        Ok(t) => t,
        // A database written before the tree was stored as tiles: build them once.
        Err(StoreError::Corrupt(_)) if !tiles_exist(conn)? => backfill_tiles(conn)?,
        Err(e) => return Err(e.into()),
    };
    if tiles.size() != appender.size() {
        return Err(StartError::Replay(format!(
            "the Merkle tiles cover {} entries, the log {}",
            tiles.size(),
            appender.size()
        )));
    }
    Ok((appender, state, tiles, count - covers))
}

/// Applies the stored entry `seq` to `state` as a start's replay does: `seen` gets each game
/// event once it is applied, before a finished round or a closed table leaves memory (the
/// replay holds only what is live). Entries of other kinds (the audit crate's key rotations)
/// do not change the game state; an entry of a game kind that does not read back is a corrupt
/// log.
fn apply_logged(
    state: &mut State,
    plans: &PlanSet,
    seq: i64,
    canonical: &[u8],
    mut seen: impl FnMut(&State, &Event),
) -> Result<(), StartError> {
    let v: Value = serde_json::from_slice(canonical)
        .map_err(|e| StartError::Replay(format!("entry {seq}: {e}")))?;
    let Some(event) = crate::round::event_of_entry(&v)
        .map_err(|e| StartError::Replay(format!("entry {seq}: {e}")))?
    else {
        return Ok(());
    };
    state
        .apply(plans, &event)
        .map_err(|e| StartError::Replay(format!("entry {seq}: {e}")))?;
    seen(state, &event);
    if let Event::RoundSettled { round, .. } | Event::RoundVoided { round, .. } = &event {
        state.rounds.remove(round);
    }
    state.forget_finished(&event);
    Ok(())
}

/// The latest stored snapshot read back, when it is sound: its bytes hash to what the row
/// says, and the log's entry at `covers` is the `state_snapshot` entry naming that hash (so
/// the snapshot is the one the signed log vouches for). Anything else is reported and the
/// start replays the whole log instead: the log is the source, a snapshot only a shortcut.
fn restore_snapshot(
    conn: &mut DbConnection,
    plans: &PlanSet,
    size: u64,
) -> Result<Option<(State, u64)>, StartError> {
    let Some((covers, sha, body)) = derived::latest_snapshot(conn)? else {
        return Ok(None);
    };
    let mut check = || -> Result<State, String> {
        if covers >= size {
            return Err(format!("it covers {covers} entries, the log holds {size}"));
        }
        let actual = crate::round::snapshot::sha256_hex(&body);
        if actual != sha {
            return Err(format!("its bytes hash to {actual}, its row says {sha}"));
        }
        let canonical: Vec<u8> = audit_entries::table
            .filter(audit_entries::seq.eq(covers as i64))
            .select(audit_entries::canonical)
            .first(conn)
            .map_err(|e| format!("reading entry {covers}: {e}"))?;
        let v: Value = serde_json::from_slice(&canonical).map_err(|e| e.to_string())?;
        match crate::round::event_of_entry(&v)? {
            Some(Event::StateSnapshot { covers: c, sha256 }) if c == covers && sha256 == sha => {}
            _ => {
                return Err(format!(
                    "entry {covers} is not the state_snapshot entry of this snapshot"
                ))
            }
        }
        let (state, c) = State::from_snapshot(plans, &body)?;
        if c != covers {
            return Err(format!("its body covers {c}, its row {covers}"));
        }
        Ok(state)
    };
    match check() {
        Ok(state) => Ok(Some((state, covers))),
        Err(e) => {
            eprintln!(
                "pitboss: the state snapshot at {covers} is not used ({e}); replaying the whole log"
            );
            Ok(None)
        }
    }
}

fn tiles_exist(conn: &mut DbConnection) -> Result<bool, StoreError> {
    use crate::store::schema::merkle_tiles;
    let n: i64 = merkle_tiles::table.count().get_result(conn)?;
    Ok(n > 0)
}

/// Builds and stores the tiles of a log written before tiles existed, page by page.
fn backfill_tiles(conn: &mut DbConnection) -> Result<Tiles, StoreError> {
    let mut tiles = Tiles::new();
    let mut last: i64 = -1;
    loop {
        let rows: Vec<(i64, Vec<u8>)> = audit_entries::table
            .filter(audit_entries::seq.gt(last))
            .order(audit_entries::seq.asc())
            .select((audit_entries::seq, audit_entries::leaf_hash))
            .limit(10_000)
            .load(conn)?;
        if rows.is_empty() {
            return Ok(tiles);
        }
        let mut leaves = Vec::with_capacity(rows.len());
        for (seq, leaf) in rows {
            last = seq;
            let leaf: [u8; 32] = leaf
                .try_into()
                .map_err(|_| StoreError::Corrupt(format!("entry {seq}: bad leaf hash")))?;
            leaves.push(Hash(leaf));
        }
        let rows = tiles.append(leaves);
        conn.transaction(|c| write_tiles(c, &rows))?;
    }
}

/// The stored answers of the batch's idempotency keys, read in one query per operator: the
/// store is the only record of answers (no cache grows in memory), and a key is found until
/// its record is pruned after the retention period.
///
/// On SQLite all of them in one read transaction: each statement alone is a transaction of its
/// own, and a connection drops its page cache at the start of a transaction when another
/// connection (the committer) has written since, so every key's lookup read the index's pages
/// again from the file (≈ 10 % of the writer's CPU).
fn stored_answers(conn: &mut DbConnection, jobs: &[Job]) -> Result<IdempotencyCache, StoreError> {
    if !jobs.iter().any(|j| j.idem.is_some()) {
        return Ok(IdempotencyCache::new());
    }
    match conn {
        DbConnection::Sqlite(_) => conn.transaction(|c| read_answers(c, jobs)),
        DbConnection::Pg(_) => read_answers(conn, jobs),
    }
}

fn read_answers(conn: &mut DbConnection, jobs: &[Job]) -> Result<IdempotencyCache, StoreError> {
    let mut by_operator: HashMap<&str, Vec<&str>> = HashMap::new();
    for j in jobs {
        if let Some(idem) = &j.idem {
            by_operator
                .entry(j.operator.as_str())
                .or_default()
                .push(idem.key.as_str());
        }
    }
    let mut out = IdempotencyCache::new();
    for (op, keys) in by_operator {
        let columns = (
            idempotency::idem_key,
            idempotency::request_hash,
            idempotency::status,
            idempotency::body,
        );
        let rows: Vec<(String, String, i32, String)> = match conn {
            // SQLite: one lookup of fixed shape per key (prepared once); an `IN` list's text
            // changes with the batch and would be parsed again for every batch.
            DbConnection::Sqlite(c) => {
                let mut rows = Vec::new();
                // (`load`, not `first`: SQLite re-prepares a statement whose `LIMIT ?` is
                // bound anew; the key is unique anyway.)
                for key in &keys {
                    rows.extend(
                        idempotency::table
                            .filter(idempotency::operator_id.eq(op))
                            .filter(idempotency::idem_key.eq(*key))
                            .select(columns)
                            .load::<(String, String, i32, String)>(c)?,
                    );
                }
                rows
            }
            // PostgreSQL: one round trip (`= ANY($2)` has one shape).
            DbConnection::Pg(c) => idempotency::table
                .filter(idempotency::operator_id.eq(op))
                .filter(idempotency::idem_key.eq_any(&keys))
                .select(columns)
                .load(c)?,
        };
        for (key, hash, status, body) in rows {
            let body: Value = serde_json::from_str(&body)
                .map_err(|e| StoreError::Corrupt(format!("idempotency record: {e}")))?;
            out.insert(
                (op.to_string(), key),
                (
                    hash,
                    // Served from the parsed body (the text of a record another version wrote
                    // is sent as this version writes it).
                    Reply {
                        status: status as u16,
                        body,
                        retry_after_s: None,
                        text: None,
                    },
                ),
            );
        }
    }
    Ok(out)
}

fn load_seeds(
    conn: &mut DbConnection,
    cipher: &SeedCipher,
) -> Result<HashMap<String, [u8; 32]>, StoreError> {
    let rows: Vec<(String, Vec<u8>)> = rng_seeds::table
        .select((rng_seeds::round_id, rng_seeds::seed))
        .load(conn)?;
    rows.into_iter()
        .map(|(r, s)| {
            let seed = cipher
                .open(&r, &s)
                .map_err(|e| StoreError::Corrupt(e.to_string()))?;
            Ok((r, seed))
        })
        .collect()
}

/// What one command produced before the batch is written.
struct Pending {
    job: Job,
    reply: Reply,
    /// Whether the batch stores this answer as the command's idempotency record (not for an
    /// answer repeated to a retry: that record exists, or is in the batch in flight). A
    /// recorded answer's body is serialised once when the batch is sealed (`reply.text`): the
    /// idempotency record, the answer sent and an in-flight retry's answer share that text.
    record: bool,
}

impl Pending {
    /// Every command of a batch that was not written, answered 503 (retry) and recorded nowhere.
    fn unwritten(jobs: Vec<Job>) -> Vec<Pending> {
        jobs.into_iter()
            .map(|job| Pending {
                job,
                reply: Reply::unavailable("retry"),
                record: false,
            })
            .collect()
    }
}

impl Writer {
    /// Logs every plan version this start admits that the log does not know yet, so the log
    /// says which plans were loaded and when. A plan whose `id@version` the log already holds
    /// with other content is refused: a change needs a new version.
    fn log_loaded_plans(&mut self) -> Result<(), StartError> {
        let now = Utc::now();
        let mut events = Vec::new();
        {
            let state = self.state.read().expect("state lock");
            for p in self.plans.iter() {
                match state.plans_logged.get(&p.key()) {
                    Some(h) if h == &p.hash => {}
                    Some(h) => {
                        return Err(StartError::Replay(format!(
                            "{} was loaded before with content {h}; the file now has content {}: \
                             a change of a loaded plan needs a new version",
                            p.key(),
                            p.hash
                        )))
                    }
                    None => events.push(Event::PlanLoaded {
                        plan: p.key(),
                        sha256: p.hash.clone(),
                        loaded_by: Some(approval::plan_loader()),
                    }),
                }
            }
        }
        if events.is_empty() {
            return Ok(());
        }
        let kind = |e: &Event| {
            pitboss_audit::entry::Kind::parse(e.kind()).expect("event kinds are valid entry kinds")
        };
        let entries: Vec<NewEntry> = events
            .iter()
            .map(|e| NewEntry::new(now_ts(now), kind(e), e.payload()))
            .collect();
        let batch = self
            .appender
            .prepare(entries)
            .map_err(|e| StartError::Replay(e.to_string()))?;
        let mut tiles = self.tiles.clone();
        let tile_rows = tiles.append(batch.entries.iter().map(|e| e.leaf_hash));
        self.persist(&batch, &tile_rows, &Derived::default())
            .map_err(StoreError::from)?;
        self.appender
            .commit(&batch)
            .map_err(|e| StartError::Replay(e.to_string()))?;
        self.tiles = tiles;
        let mut state = self.state.write().expect("state lock");
        for e in &events {
            state.apply(&self.plans, e).map_err(StartError::Replay)?;
        }
        self.metrics
            .log_entries
            .store(self.appender.size(), Ordering::Relaxed);
        Ok(())
    }

    fn run(&mut self, rx: Receiver<Msg>) {
        loop {
            self.void_expired_rounds();
            self.renew_lease_if_due();
            // With a batch in flight, wait only briefly for more work: an idle writer then
            // collects the outcome (and answers a failed batch's commands) at once.
            let wait = if !self.in_flight.is_empty() {
                IN_FLIGHT_POLL
            } else {
                CHECKPOINT_INTERVAL
            };
            let first = match rx.recv_timeout(wait) {
                Ok(m) => m,
                Err(RecvTimeoutError::Timeout) if !self.in_flight.is_empty() => {
                    self.settle_if_done();
                    continue;
                }
                // (The lease is renewed at the top of the loop.)
                Err(RecvTimeoutError::Timeout) => {
                    let _ = self.checkpoint_if_pending();
                    self.snapshot_if_due(false);
                    if self.metrics.health.is_store_down() {
                        self.probe_store();
                    }
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => {
                    // A clean shutdown: the next start reads this and replays nothing.
                    self.settle();
                    self.snapshot_if_due(true);
                    let _ = self.checkpoint_if_pending();
                    return;
                }
            };
            let mut msgs = vec![first];
            while msgs.len() < MAX_BATCH_COMMANDS {
                match rx.try_recv() {
                    Ok(m) => msgs.push(m),
                    Err(_) => break,
                }
            }
            let mut jobs = Vec::with_capacity(msgs.len());
            let mut checkpoint_requests = Vec::new();
            let mut shutdown = None;
            let mut rotations = Vec::new();
            for m in msgs {
                match m {
                    Msg::Job(j) => jobs.push(*j),
                    Msg::Checkpoint(tx) => checkpoint_requests.push(tx),
                    Msg::Shutdown(tx) => shutdown = Some(tx),
                    Msg::RotateSigningKey(stage, tx) => rotations.push((stage, tx)),
                }
            }
            if !jobs.is_empty() {
                self.metrics.writer.queue_depth.dec_by(jobs.len() as i64);
                self.process(jobs);
            }
            for (stage, tx) in rotations {
                let _ = tx.send(self.rotate_signing_key(stage));
            }
            self.snapshot_if_due(false);
            if !checkpoint_requests.is_empty()
                || self.last_checkpoint.elapsed() >= CHECKPOINT_INTERVAL
            {
                let result = self.checkpoint_if_pending().map(|()| self.appender.size());
                for tx in checkpoint_requests {
                    let _ = tx.send(result.clone());
                }
            }
            if let Some(tx) = shutdown {
                self.settle();
                self.snapshot_if_due(true);
                let _ = self.checkpoint_if_pending();
                let _ = tx.send(());
                return;
            }
        }
    }

    /// Stores a snapshot of the live state when one is due ([`Snapshots`]), with its
    /// `state_snapshot` entry, in one transaction. A failure costs nothing but the shortcut:
    /// it is reported, counted, and tried again later.
    fn snapshot_if_due(&mut self, shutdown: bool) {
        let size = self.appender.size();
        let since = size.saturating_sub(self.snapshot_size);
        let s = self.snapshots;
        if s.every_entries == 0
            || since == 0
            || !(shutdown || since >= s.every_entries || self.last_snapshot.elapsed() >= s.interval)
        {
            return;
        }
        self.last_snapshot = Instant::now();
        let written = self.write_snapshot();
        self.metrics
            .writer
            .snapshot
            .observe(crate::observe::since(self.last_snapshot));
        if let Err(e) = written {
            self.metrics
                .storage_failures
                .fetch_add(1, Ordering::Relaxed);
            eprintln!("pitboss: state snapshot not stored: {e}");
        }
    }

    /// Seals a snapshot of the live state (covering every entry so far, those in flight too)
    /// and hands it to the committer behind the batches it covers: it is written in their
    /// order, so it is durable only once they are, and a failure of one of them takes it
    /// along (see `committer`). Only the serialisation runs on the writer's thread; the writer
    /// does not wait for the batches in flight or for the snapshot's own commit.
    fn write_snapshot(&mut self) -> Result<(), String> {
        if !self.make_room() {
            return Err("an earlier batch was not written".into());
        }
        let now = Utc::now();
        let covers = self.appender.size();
        let bytes = self.state.read().expect("state lock").snapshot(covers);
        let sha256 = crate::round::snapshot::sha256_hex(&bytes);
        let event = Event::StateSnapshot {
            covers,
            sha256: sha256.clone(),
        };
        let kind = pitboss_audit::entry::Kind::parse(event.kind())
            .expect("event kinds are valid entry kinds");
        let entry = NewEntry::new(now_ts(now), kind, event.payload());
        let batch = self
            .appender
            .prepare(vec![entry])
            .map_err(|e| e.to_string())?;
        let mut tiles = self.tiles.clone();
        let tile_rows = tiles.append(batch.entries.iter().map(|e| e.leaf_hash));
        self.appender
            .commit(&batch)
            .expect("a batch prepared on this appender commits");
        self.tiles = tiles;
        self.snapshot_size = self.appender.size();
        // Counted by the committer once it is stored (`pitboss_snapshots_total`).
        let commit = committer::Commit {
            batch,
            tile_rows,
            derived: Derived {
                snapshot: Some((covers, sha256, bytes)),
                ..Derived::default()
            },
            pending: Vec::new(),
            seeds: Vec::new(),
            revealed: Vec::new(),
            created: now.to_rfc3339_opts(SecondsFormat::Micros, true),
            evict: Faulted::default(),
            generation: self.generation,
            handed_at: Instant::now(),
        };
        self.hand_over(commit, HashMap::new(), register::Writes::default());
        Ok(())
    }

    fn checkpoint_if_pending(&mut self) -> Result<(), String> {
        self.last_checkpoint = Instant::now();
        // A checkpoint signs durable entries only.
        if !self.settle() {
            return Err("an earlier batch was not written".into());
        }
        if !self.appender.needs_checkpoint() {
            return Ok(());
        }
        let mut next = self.appender.clone();
        let signed = next
            .checkpoint(&self.signers())
            .map_err(|e| e.to_string())?;
        let state = serde_json::to_string(&next.state()).expect("log state serialises");
        let text = signed.to_text();
        let size = signed.checkpoint.size as i64;
        let created = Utc::now().to_rfc3339_opts(SecondsFormat::Micros, true);
        let guard = &self.guard;
        let res = self.conn.transaction::<_, diesel::result::Error, _>(|c| {
            store::lease::renew(guard, c)?;
            diesel::insert_into(checkpoints::table)
                .values((
                    checkpoints::tree_size.eq(size),
                    checkpoints::note.eq(&text),
                    checkpoints::created_at.eq(&created),
                ))
                .execute(c)?;
            upsert_log_state(c, &state)?;
            Ok(())
        });
        match res {
            Ok(()) => {
                self.appender = next;
                self.metrics.checkpoints.fetch_add(1, Ordering::Relaxed);
                // A small write may still fit in SQLite's reused WAL on a full disk.
                if room_to_write(&self.url).is_ok() {
                    self.metrics.health.store_ok();
                }
                self.witnesses.offer(&signed);
                Ok(())
            }
            Err(e) => {
                // A COMMIT that lost its connection may have gone through: then this
                // checkpoint is stored, and inserting it again would fail for ever.
                let stored: Option<String> = checkpoints::table
                    .filter(checkpoints::tree_size.eq(size))
                    .select(checkpoints::note)
                    .first(&mut self.conn)
                    .optional()
                    .unwrap_or(None);
                match stored {
                    Some(note) if note == text => {
                        self.appender = next;
                        self.metrics.checkpoints.fetch_add(1, Ordering::Relaxed);
                        self.witnesses.offer(&signed);
                        return Ok(());
                    }
                    // Another note of this size: the stored log state is the one to go on from.
                    Some(_) => self.reload(),
                    None => {}
                }
                self.metrics
                    .storage_failures
                    .fetch_add(1, Ordering::Relaxed);
                self.metrics
                    .health
                    .store_failed(&format!("signing a checkpoint: {e}"));
                Err(e.to_string())
            }
        }
    }

    fn process(&mut self, jobs: Vec<Job>) {
        let metrics = self.metrics.clone();
        let _busy = metrics.health.busy();
        // A command whose request stopped waiting (its deadline passed, or the client went
        // away) was answered "outcome unknown" or not at all: it is not performed now, and its
        // retry with the same Idempotency-Key performs it once.
        let jobs: Vec<Job> = jobs
            .into_iter()
            .filter(|j| {
                metrics
                    .writer
                    .queue_wait
                    .observe(crate::observe::since(j.queued_at));
                !j.reply.is_closed()
            })
            .collect();
        if jobs.is_empty() {
            return;
        }
        metrics.writer.batch_commands.observe(jobs.len() as f64);
        // A confirmation of payment reads what the settlements owe from the store: the batch
        // in flight may hold that settlement.
        if jobs
            .iter()
            .any(|j| matches!(j.command, Command::ConfirmPayout { .. }))
            && !self.settle()
        {
            self.fail_batch(
                Pending::unwritten(jobs),
                None,
                "an earlier batch was not written",
            );
            return;
        }
        let lookup = Instant::now();
        let stored = match stored_answers(&mut self.conn, &jobs) {
            Ok(s) => s,
            Err(e) => {
                self.metrics
                    .storage_failures
                    .fetch_add(1, Ordering::Relaxed);
                self.fail_batch(
                    Pending::unwritten(jobs),
                    None,
                    &format!("reading idempotency records: {e}"),
                );
                self.reload();
                return;
            }
        };
        metrics.writer.lookup.observe(crate::observe::since(lookup));
        let decide = Instant::now();
        let now = Utc::now();
        let ts = now_ts(now);
        // The player register of the batch's players (002 § 6), read once for the batch.
        let mut register = match self.read_register(now, &jobs) {
            Ok(r) => r,
            Err(e) => {
                self.fail_batch(
                    Pending::unwritten(jobs),
                    None,
                    &format!("reading the player register: {e}"),
                );
                self.reload();
                return;
            }
        };
        let mut pending: Vec<Pending> = Vec::with_capacity(jobs.len());
        let mut builder = self.appender.builder();
        let mut new_seeds: Vec<(String, [u8; 32])> = Vec::new();
        let mut revealed: Vec<String> = Vec::new();
        // Idempotency keys first used in this batch: a repeat inside the batch gets the answer.
        let mut batch_keys: HashMap<(String, String), usize> = HashMap::new();
        // Finished rounds read back from the store for this batch's commands, and rounds this
        // batch finishes: both leave memory once the batch is durable.
        let mut faulted = Faulted::default();
        let mut finished_now = Faulted::default();
        let mut key_changes: Vec<Event> = Vec::new();
        let mut key_rows: Vec<derived::NewKeyRow> = Vec::new();
        // Amounts settlements of this batch owe, and payments confirmed in it.
        let mut due_rows: Vec<payouts::DueRow> = Vec::new();
        let mut confirmed: Vec<payouts::Confirmed> = Vec::new();
        let mut state = self
            .state
            .write()
            .expect("state lock is never poisoned: the writer does not panic while holding it");
        for job in jobs {
            if let Some(idem) = &job.idem {
                let k = (job.operator.clone(), idem.key.clone());
                if let Some((hash, reply)) = stored.get(&k) {
                    let r = if hash == &idem.request_hash {
                        reply.clone()
                    } else {
                        reused_key()
                    };
                    let _ = job.reply.send(r);
                    continue;
                }
                // A retry of a command of the batch in flight, or of this batch: its answer
                // goes out with this batch, after the first one's commit.
                let earlier = match batch_keys.get(&k) {
                    Some(&i) => {
                        let first: &Pending = &pending[i];
                        let hash = first.job.idem.as_ref().map(|x| x.request_hash.as_str());
                        Some((
                            hash == Some(idem.request_hash.as_str()),
                            first.reply.clone(),
                        ))
                    }
                    None => self
                        .in_flight
                        .iter()
                        .find_map(|b| b.answers.get(&k))
                        .map(|(hash, reply)| (hash == &idem.request_hash, reply.to_reply())),
                };
                if let Some((same, reply)) = earlier {
                    pending.push(Pending {
                        job,
                        reply: if same { reply } else { reused_key() },
                        record: false,
                    });
                    continue;
                }
            }
            let mut job = job;
            if let Err(e) = resolve_names(
                &mut self.conn,
                &self.plans,
                &mut state,
                &mut job,
                &mut faulted,
            )
            .and_then(|()| fault_in(&mut self.conn, &self.plans, &mut state, &job, &mut faulted))
            {
                drop(state);
                self.fail_batch(
                    pending,
                    Some(job),
                    &format!("reading a finished round: {e}"),
                );
                self.reload();
                return;
            }
            let seeds_mark = new_seeds.len();
            let revealed_mark = revealed.len();
            // A confirmation of payment is decided against the stored amount owed.
            let mut confirming: Option<(payouts::PayoutDue, String)> = None;
            let decided = if let Command::ConfirmPayout {
                round,
                player,
                wallet_reference,
            } = &job.command
            {
                match payouts::find(&mut self.conn, round, player) {
                    Ok(found) => Some(
                        match payouts::decide_confirm(
                            &job.operator,
                            round,
                            player,
                            wallet_reference,
                            found,
                            &confirmed,
                            now,
                        ) {
                            Ok((event, due)) => {
                                let paid = payouts::PayoutDue {
                                    paid_at: Some(now),
                                    wallet_reference: Some(wallet_reference.clone()),
                                    ..due.clone()
                                };
                                confirming = Some((due, wallet_reference.clone()));
                                (vec![event], Reply::ok(200, &paid))
                            }
                            Err(r) => (Vec::new(), Reply::refusal(refusal_status(&r), &r)),
                        },
                    ),
                    Err(e) => {
                        drop(state);
                        self.fail_batch(pending, Some(job), &format!("reading a payout: {e}"));
                        self.reload();
                        return;
                    }
                }
            } else if let Command::Register(c) = &job.command {
                Some(match register.decide(&job.operator, c) {
                    Ok(events) => (events, Reply::ok(200, &json!({}))),
                    Err(r) => (Vec::new(), Reply::refusal(refusal_status(&r), &r)),
                })
            } else {
                None
            };
            let (events, mut reply) = match (self.quota_refusal(&state, &job), decided) {
                (Some(r), _) => (Vec::new(), r),
                (None, Some(d)) => d,
                (None, None) => {
                    self.decide(&state, &job, now, &mut new_seeds, &mut revealed, &register)
                }
            };
            let events = exception::with_actor(events, job.actor.as_deref());
            let mut events = self.bounded_events(&state, &job, events, &reply);
            // Refusals cost log space that the operator, not the service, decides to spend:
            // past its budget they are answered 429 and not logged (counted in /metrics).
            if !events.is_empty() && events.iter().all(Event::is_refusal) {
                if let Some(throttled) = self.charge_refusals(&job.operator, &events) {
                    let _ = job.reply.send(throttled);
                    continue;
                }
            }
            let first_entry = builder.len();
            let mut mark = builder.mark();
            let mut sealed = push_entries(&mut builder, &events, &job.operator, ts, false);
            if sealed.is_err() && events.iter().any(|e| crate::round::in_parts(e).is_some()) {
                // A settlement or void too large for one entry is logged in parts, each its
                // own entry, before the one that completes it (audit/FORMAT.md 1.3).
                builder.rollback(mark);
                mark = builder.mark();
                sealed = push_entries(&mut builder, &events, &job.operator, ts, true);
            }
            if let Err(e) = sealed {
                // An entry of this command does not fit the log's format: this command alone
                // is refused; nothing of it is logged but the refusal, and the batch goes on.
                builder.rollback(mark);
                new_seeds.truncate(seeds_mark);
                revealed.truncate(revealed_mark);
                let refusal = Refusal::new(
                    "unloggable_request",
                    format!("the request cannot be recorded in the audit log ({e}); nothing of it was done"),
                );
                reply = Reply::refusal(422, &refusal);
                events = self.bounded_events(&state, &job, Vec::new(), &reply);
                let mark = builder.mark();
                if events
                    .iter()
                    .any(|ev| builder.push(entry_of(ev, &job.operator, ts)).is_err())
                {
                    builder.rollback(mark);
                    events.clear();
                }
            }
            for ev in &events {
                match ev {
                    Event::RoundSettled { round, .. } | Event::RoundVoided { round, .. } => {
                        finished_now.rounds.push(round.clone());
                    }
                    Event::TableClosed { table, .. } => finished_now.tables.push(table.clone()),
                    Event::ApiKeyCreated { .. }
                    | Event::ApiKeyRevoked { .. }
                    | Event::ApiKeyExpirySet { .. } => key_changes.push(ev.clone()),
                    _ => {}
                }
                if let Err(e) = state.apply(&self.plans, ev) {
                    // The decision and the fold disagree: a defect, never a rule of the plan.
                    drop(state);
                    self.fail_batch(pending, Some(job), &format!("internal invariant: {e}"));
                    self.reload();
                    return;
                }
            }
            if let Command::Keys { rows, .. } = &job.command {
                if !events.is_empty() {
                    key_rows.extend(rows.iter().cloned());
                }
            }
            // Stakes, losses and register changes counted for the player register.
            register.count(&job.operator, &events);
            if let Command::Register(c) = &job.command {
                if !reply.is_problem() {
                    reply = register.reply(&job.operator, c.player());
                }
            }
            // What the settlements owe, due 30 days on (002 § 9(1)); a payment confirmed.
            if !reply.is_problem() {
                let due = payouts::due_of_events(&events, &job.operator, now);
                if !due.is_empty() {
                    if let Value::Object(m) = &mut reply.body {
                        let list: Vec<&payouts::PayoutDue> = due.iter().map(|(_, d)| d).collect();
                        m.insert("payouts_due".into(), json!(list));
                    }
                }
                due_rows.extend(due);
                if let Some((due, reference)) = confirming.take() {
                    if events
                        .iter()
                        .any(|e| matches!(e, Event::PayoutConfirmed { .. }))
                    {
                        confirmed.push((due, now, reference));
                    }
                }
            }
            // Each accepted bet's receipt, before the reply is stored for retries.
            receipts::attach(&mut reply, &builder.entries()[first_entry..]);
            if let Some(idem) = &job.idem {
                batch_keys.insert((job.operator.clone(), idem.key.clone()), pending.len());
            }
            pending.push(Pending {
                job,
                reply,
                record: true,
            });
        }
        let derived = Derived {
            finished: derived::finished_rows(&state, &finished_now.rounds),
            closed: derived::closed_rows(&state, &finished_now.tables),
            snapshot: None,
            keys: key_changes,
            key_rows,
            payouts_due: due_rows,
            payouts_confirmed: confirmed,
            register: {
                // The cache is ahead of the store from here; a batch not written has the
                // writer read its state back, which empties it.
                self.register_cache.absorb(&register);
                register.into_writes()
            },
        };
        drop(state);
        metrics.writer.decide.observe(crate::observe::since(decide));
        if builder.is_empty() {
            // Only refusals that log nothing (unknown round…) and idempotent answers; an
            // answer repeated from the batch in flight goes out only once that batch is stored.
            if self.settle() {
                committer::evict(&self.state, &self.metrics, &faulted);
                finish(pending);
            } else {
                self.fail_batch(pending, None, "an earlier batch was not written");
            }
            return;
        }
        let seal = Instant::now();
        let batch = builder.finish();
        let mut tiles = self.tiles.clone();
        let tile_rows = tiles.append(batch.entries.iter().map(|e| e.leaf_hash));
        let sealed_seeds = match self.seal_seeds(&new_seeds) {
            Ok(s) => s,
            Err(e) => {
                self.fail_batch(pending, None, &format!("sealing a seed: {e}"));
                self.reload();
                return;
            }
        };
        metrics.writer.seal.observe(crate::observe::since(seal));
        // The batch is folded in now, before it is durable, so that the next batch can be
        // decided while this one is written; a failure rebuilds all of it from the store.
        self.appender
            .commit(&batch)
            .expect("a batch prepared on this appender commits");
        self.tiles = tiles;
        *self.key_validity.write().expect("keys lock") = self.appender.keys().validity();
        for (round, seed) in new_seeds {
            self.seeds.insert(round, seed);
        }
        for round in &revealed {
            self.seeds.remove(round);
        }
        // Each recorded answer serialised once (the idempotency record's body, and the answer
        // to a retry while this batch is in flight), while the batch before is written.
        for p in pending
            .iter_mut()
            .filter(|p| p.record && p.job.idem.is_some())
        {
            // `to_string` into a `Vec` rather than `Value`'s `Display` (the same bytes): that
            // goes through a `fmt::Formatter` a piece at a time, ≈ 19,000 instructions a bet.
            let text = serde_json::to_string(&p.reply.body).expect("a reply body serialises");
            p.reply.text = Some(text.into());
        }
        // A batch that was not written had the state rebuilt from the store: this one, built on
        // it, is not sent. (One that fails after this is sent takes this one with it: the
        // committer refuses the batches of its generation that follow it.)
        if !self.make_room() {
            self.fail_batch(pending, None, "an earlier batch was not written");
            return;
        }
        let mut answers = HashMap::new();
        for p in pending.iter().filter(|p| p.record) {
            if let (Some(idem), Some(text)) = (&p.job.idem, &p.reply.text) {
                answers.insert(
                    (p.job.operator.clone(), idem.key.clone()),
                    (
                        idem.request_hash.clone(),
                        StoredReply {
                            status: p.reply.status,
                            text: text.clone(),
                        },
                    ),
                );
            }
        }
        let register = derived.register.clone();
        let mut evict = faulted;
        evict.rounds.extend(finished_now.rounds);
        evict.tables.extend(finished_now.tables);
        let commit = committer::Commit {
            batch,
            tile_rows,
            derived,
            pending,
            seeds: sealed_seeds,
            revealed,
            created: now.to_rfc3339_opts(SecondsFormat::Micros, true),
            evict,
            generation: self.generation,
            handed_at: Instant::now(),
        };
        self.hand_over(commit, answers, register);
    }

    /// Room for one more batch in flight: the outcomes already come are taken and, with
    /// `depth` batches out, the oldest is waited for. `false` as [`Writer::settle`].
    fn make_room(&mut self) -> bool {
        self.settle_down_to(self.depth.max(1) - 1)
    }

    /// Hands a sealed batch, already folded into the writer's state and log, to the committer
    /// (the caller has made room: [`Writer::make_room`]).
    fn hand_over(
        &mut self,
        commit: committer::Commit,
        answers: HashMap<(String, String), (String, StoredReply)>,
        register: register::Writes,
    ) {
        self.in_flight.push_back(InFlight {
            sent: commit.handed_at,
            end: self.appender.size(),
            answers,
            register,
        });
        match self.commits.send(commit) {
            Ok(()) => {
                if self.depth == 0 {
                    self.settle();
                }
            }
            Err(mpsc::SendError(c)) => {
                self.in_flight.pop_back();
                self.fail_batch(c.pending, None, "the committer has stopped");
                self.reload();
            }
        }
    }

    /// Waits for the outcomes of every batch in flight. `false` when one was not written (or
    /// not known to be): its commands are answered as the store says, and the state is rebuilt
    /// from the store, so a batch decided before must not be written either.
    fn settle(&mut self) -> bool {
        self.settle_down_to(0)
    }

    /// Takes the outcomes of the batches in flight until at most `keep` are out, waiting for
    /// the oldest while more are; outcomes already sent are taken too, without waiting.
    /// `false` as [`Writer::settle`].
    fn settle_down_to(&mut self, keep: usize) -> bool {
        let mut written = true;
        while !self.in_flight.is_empty() {
            let outcome = if self.in_flight.len() > keep {
                // Waiting on the store: readiness fails if this lasts past the deadline.
                let metrics = self.metrics.clone();
                let _busy = metrics.health.busy();
                let waited = Instant::now();
                let outcome = self.outcomes.recv().ok();
                metrics.writer.settle.observe(crate::observe::since(waited));
                outcome
            } else {
                match self.outcomes.try_recv() {
                    Ok(outcome) => Some(outcome),
                    Err(mpsc::TryRecvError::Empty) => break,
                    Err(mpsc::TryRecvError::Disconnected) => None,
                }
            };
            written &= self.settled(outcome);
        }
        written
    }

    /// Collects the outcomes the committer has sent, without waiting for more: an idle writer
    /// takes the next commands as they arrive and decides them while batches are written,
    /// instead of waiting for their commit first (which made the two stages take turns
    /// whenever the queue was empty for [`IN_FLIGHT_POLL`]). A batch out for longer than
    /// [`IN_FLIGHT_PATIENCE`] is waited for ([`Writer::settle`]: readiness fails while that
    /// wait lasts past the deadline).
    fn settle_if_done(&mut self) {
        self.settle_down_to(usize::MAX);
        if self
            .in_flight
            .front()
            .is_some_and(|b| b.sent.elapsed() >= IN_FLIGHT_PATIENCE)
        {
            self.settle();
        }
    }

    /// The player register of the batch's players: those the cache holds from it
    /// (`register::Cache`), the others from the store, with what the batches in flight counted
    /// when the store does not hold them yet. Whether it does is read in the same snapshot as
    /// the register (the log's size against the end of each batch in flight): the committer
    /// may commit a batch at any moment, before the writer takes its outcome, and a register
    /// read after that commit already counts it (counted on top again, a player's stakes were
    /// counted twice and bets under a limit refused).
    fn read_register(
        &mut self,
        now: chrono::DateTime<Utc>,
        jobs: &[Job],
    ) -> Result<register::Batch, StoreError> {
        let commands = jobs.iter().map(|j| (j.operator.as_str(), &j.command));
        let conn = &mut self.conn;
        let in_flight = &self.in_flight;
        let batch = self.register_cache.load(now, commands, |players| {
            if in_flight.is_empty() {
                return register::Batch::load_players(conn, now, players);
            }
            let (read, stored) = conn.transaction(|c| {
                if let DbConnection::Pg(pg) = c {
                    // One snapshot for both reads (PostgreSQL's default gives each its own).
                    diesel::connection::SimpleConnection::batch_execute(
                        pg,
                        "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY",
                    )?;
                }
                let last: Option<i64> = audit_entries::table
                    .select(diesel::dsl::max(audit_entries::seq))
                    .get_result(c)?;
                let read = register::Batch::load_players(c, now, players)?;
                Ok::<_, StoreError>((read, last.map_or(0, |s| s as u64 + 1)))
            })?;
            // Batches commit whole and in order: those ending past the stored size are not in
            // it.
            Ok(in_flight
                .iter()
                .filter(|b| stored < b.end)
                .fold(read, |read, b| read.with_in_flight(&b.register)))
        });
        let (held, read) = self.register_cache.take_counts();
        let m = &self.metrics;
        m.register_players_cached.fetch_add(held, Ordering::Relaxed);
        m.register_players_read.fetch_add(read, Ordering::Relaxed);
        batch
    }

    /// What the oldest batch in flight became (`None`: the committer is gone); see
    /// [`Writer::settle`].
    fn settled(&mut self, outcome: Option<committer::Outcome>) -> bool {
        let Some(batch) = self.in_flight.pop_front() else {
            return true;
        };
        match outcome {
            Some(committer::Outcome::Written(finished)) => {
                self.lease_confirmed(batch.sent);
                self.evict(&finished);
                true
            }
            Some(committer::Outcome::Failed {
                detail,
                pending,
                last_seq,
            }) => {
                self.metrics
                    .storage_failures
                    .fetch_add(1, Ordering::Relaxed);
                self.metrics.health.store_failed(&detail);
                // The batches sent after it were built on it: the committer refuses them (they
                // are of its generation). Their outcomes are taken before the state is read back,
                // so that the store is not read while one could still be written.
                let mut failed = vec![(detail, pending, last_seq)];
                while let Some(later) = self.in_flight.pop_front() {
                    match self.outcomes.recv() {
                        Ok(committer::Outcome::Written(finished)) => {
                            self.lease_confirmed(later.sent);
                            self.evict(&finished);
                        }
                        Ok(committer::Outcome::Failed {
                            detail,
                            pending,
                            last_seq,
                        }) => failed.push((detail, pending, last_seq)),
                        Err(_) => break,
                    }
                }
                self.in_flight.clear();
                if let Some(holder) = self.lease_taken_over() {
                    // Refused by the fencing token: nothing of the batches was written.
                    for (_, pending, _) in failed {
                        self.fail_batch(pending, None, &fenced_detail(&holder));
                    }
                    self.stop_fenced(&holder);
                }
                // A connection lost during COMMIT leaves its outcome unknown: the log as
                // reloaded says whether the batches are in it, and so what their commands are
                // told.
                self.reload();
                for (detail, pending, last_seq) in failed {
                    if last_seq.is_some_and(|seq| self.appender.size() > seq) {
                        tracing::warn!(detail, "the batch was committed after all");
                        finish(pending);
                    } else {
                        self.fail_batch(pending, None, &detail);
                    }
                }
                false
            }
            None => {
                // The committer is gone (it never panics by design): its batches' commands
                // were dropped unanswered, which their requests report as 503.
                self.in_flight.clear();
                self.metrics
                    .health
                    .store_failed("the committer thread stopped");
                self.reload();
                false
            }
        }
    }

    fn seal_seeds(&self, seeds: &[(String, [u8; 32])]) -> Result<Vec<(String, Vec<u8>)>, String> {
        seeds
            .iter()
            .map(|(round, seed)| {
                self.seed_cipher
                    .seal(round, seed)
                    .map(|s| (round.clone(), s))
                    .map_err(|e| e.to_string())
            })
            .collect()
    }

    /// Nothing of the batch was written: every command of it is answered 503 and may be retried.
    fn fail_batch(&mut self, pending: Vec<Pending>, extra: Option<Job>, detail: &str) {
        self.metrics.health.store_failed(detail);
        let requests: Vec<String> = pending
            .iter()
            .map(|p| &p.job)
            .chain(extra.as_ref())
            .filter_map(|j| j.request_id.map(|id| id.to_string()))
            .collect();
        tracing::error!(
            detail,
            commands = pending.len() + usize::from(extra.is_some()),
            request_ids = ?requests,
            "batch not written; its commands are answered 503"
        );
        for p in pending {
            let _ = p.job.reply.send(Reply::unavailable(
                "the log could not be written; nothing of this request was recorded, retry",
            ));
        }
        if let Some(j) = extra {
            let _ = j.reply.send(Reply::unavailable(
                "the log could not be written; nothing of this request was recorded, retry",
            ));
        }
    }

    /// After a failed batch the in-memory state may be ahead of the database: rebuild it from
    /// the log, exactly as at start.
    fn reload(&mut self) {
        // The batches in flight are written or not before the state is read back; those
        // decided from here on are of a new generation (see `committer`).
        self.settle();
        self.generation += 1;
        self.register_cache.clear();
        let metrics = self.metrics.clone();
        let _replaying = metrics.health.replaying();
        loop {
            let attempt = store::connect(&self.url)
                .map_err(StartError::from)
                .and_then(|mut conn| {
                    wal::for_writing(&mut conn).map_err(StoreError::from)?;
                    let (appender, state, tiles, _) =
                        recover(&mut conn, &self.plans, &self.signer, self.appender.origin())?;
                    let seeds = load_seeds(&mut conn, &self.seed_cipher)?;
                    Ok((conn, appender, state, tiles, seeds))
                });
            match attempt {
                Ok((conn, appender, state, tiles, seeds)) => {
                    self.conn = conn;
                    self.appender = appender;
                    *self.state.write().expect("state lock") = state;
                    self.tiles = tiles;
                    self.seeds = seeds;
                    return;
                }
                Err(e) => {
                    self.metrics
                        .health
                        .store_failed(&format!("reloading from the database: {e}"));
                    tracing::warn!(error = %e, "cannot reload from the database; retrying in 1 s");
                    std::thread::sleep(Duration::from_secs(1));
                }
            }
        }
    }

    /// Writes a batch of the writer's own (plans loaded, a snapshot) on its connection, with
    /// nothing in flight.
    fn persist(
        &mut self,
        batch: &SealedBatch,
        tile_rows: &[TileRow],
        derived: &Derived,
    ) -> Result<(), diesel::result::Error> {
        debug_assert!(
            self.in_flight.is_empty(),
            "the writer writes only with nothing in flight"
        );
        let state = serde_json::to_string(batch.state_after()).expect("log state serialises");
        let rows = committer::BatchRows {
            entries: batch.entries.iter().collect(),
            log_state: &state,
            tile_rows: tile_rows.iter().collect(),
            derived: vec![derived],
            idempotency: Vec::new(),
            seeds: Vec::new(),
            revealed: Vec::new(),
            index: None,
        };
        let began = Instant::now();
        let (result, _) = committer::write_fenced(&mut self.conn, self.guard.token(), &rows);
        if result.is_ok() {
            self.lease_confirmed(began);
        }
        result
    }

    /// Keeps the PostgreSQL lease alive while no batch renews it (a file lock needs nothing):
    /// when idle, and when busy with commands that commit nothing (retries answered from
    /// their records, refusals not logged), or the lease would run out under load.
    fn renew_lease_if_due(&mut self) {
        if !self.lease_due() {
            return;
        }
        // A batch in flight renews it when committed.
        if self.settle() && !self.lease_due() {
            return;
        }
        let guard = &self.guard;
        let began = Instant::now();
        match self.conn.transaction(|c| store::lease::renew(guard, c)) {
            Ok(()) => self.lease_confirmed(began),
            Err(e) => {
                self.metrics
                    .storage_failures
                    .fetch_add(1, Ordering::Relaxed);
                eprintln!("pitboss: renewing the writer's lease: {e}");
                if let Some(holder) = self.lease_taken_over() {
                    self.stop_fenced(&holder);
                }
            }
        }
    }

    /// The lease was renewed by a transaction that began at `began`: told to the HTTP layer,
    /// which serves nothing once it may have run out ([`health::Health::lease_lapsed`]).
    fn lease_confirmed(&mut self, began: Instant) {
        self.lease_renewed = began;
        if matches!(self.guard, store::lease::WriterGuard::Lease { .. }) {
            self.metrics
                .health
                .lease_confirmed(store::lease::duration(), began);
        }
    }

    /// Whether a PostgreSQL lease is due for renewal: a third of it has passed since the last.
    fn lease_due(&self) -> bool {
        matches!(self.guard, store::lease::WriterGuard::Lease { .. })
            && self.lease_renewed.elapsed() >= store::lease::duration() / 3
    }

    /// After a refused write or renewal: the lease as stored, when another node has taken it
    /// over (a later token). `None` while this node still holds it, with a file lock, or when
    /// the store cannot say (then the usual failure handling goes on).
    fn lease_taken_over(&self) -> Option<store::lease::Holder> {
        let token = self.guard.token()?;
        let mut conn = store::connect(&self.url).ok()?;
        store::lease::peek(&mut conn)
            .ok()
            .flatten()
            .filter(|h| h.token != token)
    }

    /// This node no longer writes the log: another node holds its lease. Fail-stop: the
    /// process ends (exit code [`EXIT_FENCED`]) with what it has answered, so that nothing it
    /// holds in memory is served or written any more; a supervisor restarts it, as a standby
    /// when it has `--node-url`.
    fn stop_fenced(&self, holder: &store::lease::Holder) -> ! {
        let detail = fenced_detail(holder);
        tracing::error!(detail, "fenced: stopping");
        eprintln!("pitboss: {detail}; stopping");
        // The answers just given reach their requests before the process ends.
        std::thread::sleep(Duration::from_millis(300));
        std::process::exit(EXIT_FENCED)
    }

    /// While the store is down: one small write transaction; if it commits, the store takes
    /// writes again (see [`health`]).
    fn probe_store(&mut self) {
        self.settle();
        let probe = self.conn.transaction::<_, diesel::result::Error, _>(|c| {
            diesel::sql_query("UPDATE log_state SET state = state WHERE id = 1").execute(c)?;
            Ok(())
        });
        // SQLite may still fit a small write in its WAL on a full disk: the store is back only
        // with room for a batch.
        let probe = probe
            .map_err(|e| e.to_string())
            .and_then(|()| room_to_write(&self.url));
        match probe {
            Ok(()) => self.metrics.health.store_ok(),
            Err(e) => {
                self.metrics
                    .health
                    .store_failed(&format!("probing the store: {e}"));
                // A connection the database dropped is opened anew.
                if let Ok(conn) = store::connect(&self.url) {
                    self.conn = conn;
                }
            }
        }
    }

    /// Decides one command against the state; returns its events and its answer.
    fn decide(
        &self,
        state: &State,
        job: &Job,
        now: DateTime<Utc>,
        new_seeds: &mut Vec<(String, [u8; 32])>,
        revealed: &mut Vec<String>,
        register: &register::Batch,
    ) -> (Vec<Event>, Reply) {
        let op = job.operator.as_str();
        // Bets pass the player register too (002 § 6): an excluded player, a limit exceeded.
        let mut guard = register.guard(op);
        let mut place_bets = |round: &str, bets: &[(String, Value)]| {
            state.decide_bets_guarded(op, round, now, bets, &mut guard)
        };
        let refused = |r: Refusal| (Vec::new(), Reply::refusal(refusal_status(&r), &r));
        if self.require_approval {
            if let Err(r) = self.approved_now(state, op, &job.command, now) {
                return (Vec::new(), Reply::refusal(refusal_status(&r), &r));
            }
        }
        if let Err(r) = exception::not_paused(state, op, &job.command) {
            return refused(r);
        }
        match &job.command {
            Command::Keys {
                events,
                status,
                body,
                ..
            } => (
                events.clone(),
                Reply {
                    status: *status,
                    body: body.clone(),
                    retry_after_s: None,
                    text: None,
                },
            ),
            Command::PauseRound {
                round,
                reason,
                reported,
            } => {
                match exception::decide_pause(state, op, round, reason, reported.as_deref(), now) {
                    Ok(events) => {
                        let body = exception::reply(state, round, &events);
                        (events, Reply::ok(200, &body))
                    }
                    Err(r) => refused(r),
                }
            }
            Command::ResumeRound { round, reason } => {
                match exception::decide_resume(state, op, round, reason, now) {
                    Ok(events) => {
                        let body = exception::reply(state, round, &events);
                        (events, Reply::ok(200, &body))
                    }
                    Err(r) => refused(r),
                }
            }
            Command::ApprovePlan { request, actor } => {
                match approval::decide_approve(state, &self.plans, request, actor, "api", None) {
                    Ok(events) => {
                        let body = state_approval_reply(&events);
                        (events, Reply::ok(201, &body))
                    }
                    Err(r) => (Vec::new(), Reply::refusal(refusal_status(&r), &r)),
                }
            }
            Command::ApprovePlanNote { note, actor } => {
                let decided = approval::verify_note(note, &self.regulator_keys).and_then(
                    |(request, signer)| {
                        let actor = crate::round::regulator::Actor {
                            signer: Some(signer),
                            ..(**actor).clone()
                        };
                        approval::decide_approve(
                            state,
                            &self.plans,
                            &request,
                            &actor,
                            "note",
                            Some(note),
                        )
                    },
                );
                match decided {
                    Ok(events) => {
                        let body = state_approval_reply(&events);
                        (events, Reply::ok(201, &body))
                    }
                    Err(r) => (Vec::new(), Reply::refusal(refusal_status(&r), &r)),
                }
            }
            Command::WithdrawApproval {
                reference,
                reason,
                actor,
            } => match approval::decide_withdraw(state, reference, reason, actor) {
                Ok(events) => {
                    let body = state_approval_reply(&events);
                    (events, Reply::ok(200, &body))
                }
                Err(r) => (Vec::new(), Reply::refusal(refusal_status(&r), &r)),
            },
            Command::OpenTable {
                table,
                plan,
                mode,
                registration,
            } => {
                if let Err(r) = exception::check_registration(
                    registration.as_deref(),
                    self.require_registration,
                ) {
                    return refused(r);
                }
                match state.decide_open_table(&self.plans, op, table, plan, *mode) {
                    Ok(events) => {
                        let events = exception::with_registration(events, registration.as_deref());
                        let Some((table, plan)) = events.iter().find_map(|e| match e {
                            Event::TableOpened { table, plan, .. } => {
                                Some((table.clone(), plan.clone()))
                            }
                            _ => None,
                        }) else {
                            unreachable!("decide_open_table returns TableOpened")
                        };
                        let reply = TableOpenedReply {
                            table,
                            plan,
                            mode: *mode,
                            open: true,
                        };
                        (events, Reply::ok(201, &reply))
                    }
                    Err(r) => refused(r),
                }
            }
            Command::CloseTable { table, reason } => {
                // A round left open is voided, and an RNG round's seed revealed with it.
                let open_round = state
                    .tables
                    .get(table)
                    .and_then(|t| t.current_round.clone());
                let seed = open_round.as_ref().and_then(|r| self.seeds.get(r)).copied();
                match state.decide_close_table(op, table, reason, seed) {
                    Ok(events) => {
                        if seed.is_some() {
                            revealed.extend(open_round);
                        }
                        let reply = TableClosedReply {
                            table: table.clone(),
                            open: false,
                        };
                        (events, Reply::ok(200, &reply))
                    }
                    Err(r) => refused(r),
                }
            }
            Command::OpenRound { table } => {
                let rng = state.tables.get(table).is_some_and(|t| t.mode == Mode::Rng);
                let seed = if rng {
                    let mut seed = [0u8; 32];
                    if rand::rngs::OsRng.try_fill_bytes(&mut seed).is_err() {
                        return refused(Refusal::new(
                            "rng_unavailable",
                            "the operating system's random source failed",
                        ));
                    }
                    Some(seed)
                } else {
                    None
                };
                let commitment = seed.map(|s| hex(&Sha256::digest(s)));
                match state.decide_open_round(op, table, now, commitment) {
                    Ok(events) => {
                        let body = match &events[0] {
                            Event::RoundOpened {
                                round,
                                betting_deadline,
                                rng_commitment,
                                number,
                                ..
                            } => {
                                if let Some(s) = seed {
                                    new_seeds.push((round.clone(), s));
                                }
                                RoundOpenedReply {
                                    round: round.clone(),
                                    table: table.clone(),
                                    number: *number,
                                    betting_deadline: *betting_deadline,
                                    rng_commitment: rng_commitment.clone(),
                                }
                            }
                            _ => unreachable!("decide_open_round returns RoundOpened"),
                        };
                        (events, Reply::ok(201, &body))
                    }
                    Err(r) => refused(r),
                }
            }
            Command::Bets { round, bets } => match place_bets(round, bets) {
                Ok(events) => {
                    let results: Vec<BetResult> = events
                        .iter()
                        .filter_map(|e| match e {
                            Event::BetAccepted {
                                bet,
                                player,
                                placements,
                                stake_minor,
                                ..
                            } => Some(BetResult::Accepted {
                                bet: bet.clone(),
                                player: player.clone(),
                                stake_minor: *stake_minor,
                                placements: placements.clone(),
                                // Filled in once the entry is sealed (`receipts::attach`).
                                receipt: None,
                            }),
                            Event::BetRefused {
                                player, refusal, ..
                            } => Some(BetResult::Refused {
                                player: player.clone(),
                                code: refusal.code.clone(),
                                detail: refusal.message.clone(),
                                plan: refusal.plan.clone(),
                                clause: refusal.clause.clone(),
                            }),
                            _ => None,
                        })
                        .collect();
                    let accepted = results
                        .iter()
                        .filter(|r| matches!(r, BetResult::Accepted { .. }))
                        .count();
                    let reply = BetsReply {
                        round: round.clone(),
                        accepted,
                        refused: results.len() - accepted,
                        results,
                    };
                    (events, Reply::ok(200, &reply))
                }
                Err(r) => refused(r),
            },
            Command::CloseBetting { round } => match state.decide_close_betting(op, round, now) {
                Ok(events) => (
                    events,
                    Reply::ok(
                        200,
                        &RoundOutcome {
                            round: round.clone(),
                            phase: Some(Phase::BettingClosed),
                            ..RoundOutcome::default()
                        },
                    ),
                ),
                Err(r) => {
                    self.logged_refusal(state, op, round, json!({"type": "close_betting"}), r)
                }
            },
            Command::Spin {
                round,
                number,
                ball_against_rotation,
                ball_revolutions,
            } => {
                let report = crate::round::SpinReport {
                    number: *number,
                    ball_against_rotation: *ball_against_rotation,
                    ball_revolutions: *ball_revolutions,
                    source: Mode::Live,
                    rng_seed: None,
                };
                match state.decide_spin(op, round, &report) {
                    Ok(events) => {
                        let body = outcome_body(state, round, &events);
                        (events, Reply::ok(200, &body))
                    }
                    Err(r) => self.logged_refusal(
                        state,
                        op,
                        round,
                        json!({"type": "spin", "number": number, "ball_against_rotation": ball_against_rotation, "ball_revolutions": ball_revolutions}),
                        r,
                    ),
                }
            }
            Command::Draw { round } => {
                // Ownership first: another operator's round answers exactly as an absent one,
                // whatever its mode or phase.
                if let Err(r) = state.round_of_operator(op, round) {
                    return refused(r);
                }
                let Some(seed) = self.seeds.get(round).copied() else {
                    return self.logged_refusal(state, op, round, json!({"type": "draw"}), Refusal::new("not_rng", format!("round {round} has no committed seed: it is not an RNG round, or it is finished")));
                };
                let card_game = state
                    .rounds
                    .get(round)
                    .and_then(|r| state.tables.get(&r.table))
                    .is_some_and(|t| {
                        t.loaded.plan.plan.family != crate::plan::rules::Family::Roulette
                    });
                let decided = if card_game {
                    state.decide_rng_deal(op, round, now, seed)
                } else {
                    // An RNG spin is always valid: there is no ball to throw against the
                    // rotation.
                    let report = crate::round::SpinReport {
                        number: draw_pocket(seed, 37) as u8,
                        ball_against_rotation: true,
                        ball_revolutions: u8::MAX,
                        source: Mode::Rng,
                        rng_seed: Some(hex(&seed)),
                    };
                    state.decide_spin(op, round, &report)
                };
                match decided {
                    Ok(events) => {
                        if events
                            .iter()
                            .any(|e| matches!(e, Event::RoundSettled { .. }))
                        {
                            revealed.push(round.clone());
                        }
                        let body = outcome_body(state, round, &events);
                        (events, Reply::ok(200, &body))
                    }
                    Err(r) => self.logged_refusal(state, op, round, json!({"type": "draw"}), r),
                }
            }
            Command::Cards { round, cards } => match state.decide_cards(op, round, now, cards) {
                Ok(events) => {
                    let body = outcome_body(state, round, &events);
                    (events, Reply::ok(200, &body))
                }
                Err(r) => self.logged_refusal(
                    state,
                    op,
                    round,
                    json!({"type": "cards", "cards": cards}),
                    r,
                ),
            },
            Command::Misdeal { round, reason } => match state.decide_misdeal(op, round, reason) {
                Ok(events) => {
                    let body = outcome_body(state, round, &events);
                    (events, Reply::ok(200, &body))
                }
                Err(r) => self.logged_refusal(
                    state,
                    op,
                    round,
                    json!({"type": "misdeal", "reason": reason}),
                    r,
                ),
            },
            Command::Decisions { round, decisions } => {
                let seed = self.seeds.get(round).copied();
                match state.decide_decisions(op, round, now, decisions, seed) {
                    Ok(events) => {
                        // A blackjack round that a decision completes reveals its seed.
                        if events.iter().any(|e| {
                            matches!(e, Event::RoundSettled { rng_seed: Some(_), .. })
                        })
                        {
                            revealed.push(round.clone());
                        }
                        let body = outcome_body(state, round, &events);
                        (events, Reply::ok(200, &body))
                    }
                    Err(r) => self.logged_refusal(
                        state,
                        op,
                        round,
                        json!({"type": "decisions", "decisions": decisions.iter().map(|(p, d)| json!({"player": p, "decision": d})).collect::<Vec<_>>()}),
                        r,
                    ),
                }
            }
            Command::CloseDecisions { round } => {
                let seed = self.seeds.get(round).copied();
                match state.decide_close_decisions(op, round, now, seed) {
                    Ok(events) => {
                        if events.iter().any(|e| {
                            matches!(
                                e,
                                Event::RoundSettled {
                                    rng_seed: Some(_),
                                    ..
                                }
                            )
                        }) {
                            revealed.push(round.clone());
                        }
                        let body = outcome_body(state, round, &events);
                        (events, Reply::ok(200, &body))
                    }
                    Err(r) => {
                        self.logged_refusal(state, op, round, json!({"type": "close_decisions"}), r)
                    }
                }
            }
            Command::TableAction { table, action } => {
                match state.decide_table_action(op, table, action.as_ref(), now) {
                    Ok((events, expected)) => {
                        let reply = match &events[0] {
                            Event::TableAction {
                                action,
                                effects,
                                automatic,
                                ..
                            } => TableActionReply {
                                table: table.clone(),
                                action: action.clone(),
                                automatic: *automatic,
                                effects: effects.clone(),
                                expected,
                            },
                            _ => unreachable!("decide_table_action returns a TableAction"),
                        };
                        (events, Reply::ok(200, &reply))
                    }
                    Err(r) => refused(r),
                }
            }
            Command::Shoe { table, change } => match state.decide_shoe(op, table, *change) {
                Ok(events) => {
                    let cards_seen = events
                        .iter()
                        .find_map(|e| match e {
                            Event::ShoeShuffled { cards_seen, .. }
                            | Event::ShoeChanged { cards_seen, .. } => Some(*cards_seen),
                            _ => None,
                        })
                        .unwrap_or(0);
                    (
                        events,
                        Reply::ok(
                            200,
                            &ShoeReply {
                                table: table.clone(),
                                action: if *change { "change" } else { "shuffle" }.into(),
                                cards_seen_before: cards_seen,
                            },
                        ),
                    )
                }
                Err(r) => refused(r),
            },
            Command::Void { round, reason } => {
                match state.decide_void(op, round, reason, self.seeds.get(round).copied()) {
                    Ok(events) => {
                        let body = outcome_body(state, round, &events);
                        revealed.push(round.clone());
                        (events, Reply::ok(200, &body))
                    }
                    Err(r) => refused(r),
                }
            }
            Command::PartialVoid {
                round,
                reason,
                players,
                bets,
            } => match state.decide_partial_void(op, round, reason, players, bets) {
                Ok(events) => {
                    let body = refunds_body(round, Some(reason), &events);
                    (events, Reply::ok(200, &body))
                }
                Err(r) => refused(r),
            },
            Command::Withdraw {
                round,
                player,
                bets,
            } => match state.decide_withdrawal(op, round, player, bets, now) {
                Ok(events) => {
                    let body = refunds_body(round, None, &events);
                    (events, Reply::ok(200, &body))
                }
                Err(r) => refused(r),
            },
            // Decided in `process` against the stored amount owed.
            Command::Register(_) | Command::ConfirmPayout { .. } => refused(Refusal::new(
                "unavailable",
                "a confirmation of payment or a register change is decided with its stored rows",
            )),
            Command::Connection {
                table,
                player,
                connected,
            } => match state.decide_connection(op, table, player, *connected, now) {
                Ok(events) => {
                    let refunds = refunds_of(&events);
                    let automatic_decisions = events
                        .iter()
                        .filter(|e| matches!(e, Event::DecisionTaken { .. }))
                        .count();
                    (
                        events,
                        Reply::ok(
                            200,
                            &ConnectionReply {
                                table: table.clone(),
                                player: player.clone(),
                                connected: *connected,
                                refunds,
                                automatic_decisions,
                            },
                        ),
                    )
                }
                Err(r) => refused(r),
            },
        }
    }

    /// Under `--require-approval`: a table opens, and a round starts, only on a plan version
    /// whose approval is valid now. (A withdrawn approval refuses new rounds; the running
    /// round finishes.) Other commands, and tables or rounds that are not the caller's, are
    /// decided as usual.
    fn approved_now(
        &self,
        state: &State,
        op: &str,
        command: &Command,
        now: DateTime<Utc>,
    ) -> Result<(), Refusal> {
        let (key, hash) = match command {
            Command::OpenTable { plan, .. } => {
                let Ok(r) = plan.parse::<crate::plan::PlanRef>() else {
                    return Ok(());
                };
                match self.plans.get(&r) {
                    Some(l) => (l.key(), l.hash.clone()),
                    None => return Ok(()),
                }
            }
            Command::OpenRound { table } => match state.table_of_operator(op, table) {
                Ok(t) => (t.loaded.key(), t.loaded.hash.clone()),
                Err(_) => return Ok(()),
            },
            _ => return Ok(()),
        };
        match &self.approvals_from {
            // An operator's log: approvals are the service log's.
            Some(service) => approval::check_approved(&service.current(), &key, &hash, now),
            None => approval::check_approved(state, &key, &hash, now),
        }
    }

    /// Drops finished rounds and closed tables from memory (their state is in the store).
    fn evict(&self, which: &Faulted) {
        committer::evict(&self.state, &self.metrics, which);
    }

    /// A count quota the command would exceed (answered 429, nothing logged).
    fn quota_refusal(&self, state: &State, job: &Job) -> Option<Reply> {
        if let Command::OpenTable { .. } = &job.command {
            let max = self.limits.operator_open_tables;
            let open = state
                .tables
                .values()
                .filter(|t| t.open && t.operator == job.operator)
                .count();
            if max > 0 && open >= max as usize {
                self.metrics
                    .throttled
                    .open_tables
                    .fetch_add(1, Ordering::Relaxed);
                return Some(Reply::throttled(
                    "quota_exceeded",
                    format!(
                        "operator {} has {open} tables open, its limit ({max}); close a table before opening another",
                        job.operator
                    ),
                    60,
                ));
            }
        }
        None
    }

    /// The command's events as they are logged: every refused request and message bounded
    /// (see [`refusal`]), and a refusal that produced no event of its own recorded as a
    /// `command_refused` entry under the refused operator.
    fn bounded_events(
        &self,
        state: &State,
        job: &Job,
        mut events: Vec<Event>,
        reply: &Reply,
    ) -> Vec<Event> {
        // Every refusal is audited: a command refused before it touched anything is logged as
        // such, with the reason the operator was given. (503 and 429 are not refusals of the
        // command: nothing was decided.)
        if events.is_empty() && reply.is_problem() && reply.status != 503 && reply.status != 429 {
            let (table, round) = match &job.command {
                // A table refused its opening (its name taken) is named by its scoped id.
                Command::OpenTable { table, .. } if !table.contains(crate::round::SCOPE) => {
                    (Some(crate::round::scoped(&job.operator, table)), None)
                }
                c => c.target(),
            };
            let t = refusal::target(state, &job.operator, table.as_deref(), round.as_deref());
            events.push(Event::CommandRefused {
                command: job.command.name().to_string(),
                request: match &job.command {
                    Command::TableAction { action, .. } => Some(
                        action
                            .clone()
                            .unwrap_or_else(|| json!({"action": "automatic"})),
                    ),
                    _ => None,
                },
                table: t.table,
                round: t.round,
                requested: t.requested,
                refusal: refusal_of(reply),
            });
        }
        for ev in &mut events {
            match ev {
                Event::BetRefused {
                    request, refusal, ..
                } => {
                    *request = refusal::loggable(request);
                    refusal::bound(refusal);
                }
                Event::EventRefused { event, refusal, .. } => {
                    *event = refusal::loggable(event);
                    refusal::bound(refusal);
                }
                Event::CommandRefused {
                    request, refusal, ..
                } => {
                    if let Some(r) = request {
                        *r = refusal::loggable(r);
                    }
                    refusal::bound(refusal);
                }
                _ => {}
            }
        }
        events
    }

    /// Charges the log bytes of a command's refusal entries to its operator; `Some(429)` when
    /// the operator's refusal budget is used up (then nothing is logged).
    fn charge_refusals(&self, operator: &str, events: &[Event]) -> Option<Reply> {
        let bytes: usize = events
            .iter()
            .map(|e| serde_json::to_vec(&e.payload()).map_or(0, |v| v.len()) + 160)
            .sum();
        let cells = u32::try_from(bytes).unwrap_or(u32::MAX);
        match self.refusal_budget.take(&operator.to_string(), cells) {
            Ok(()) => None,
            Err(wait) => {
                self.metrics
                    .throttled
                    .refusal_log_bytes
                    .fetch_add(1, Ordering::Relaxed);
                self.metrics
                    .refusals_unlogged
                    .fetch_add(events.len() as u64, Ordering::Relaxed);
                let t = crate::limits::Throttled {
                    code: "refusal_budget_exceeded",
                    detail: String::new(),
                    retry_after: wait,
                };
                Some(Reply::throttled(
                    t.code,
                    format!(
                        "operator {operator}'s refused requests filled its share of the audit log ({} bytes a second); nothing was recorded, retry later",
                        self.limits.operator_refusal_log_bytes_per_s
                    ),
                    t.retry_after_s(),
                ))
            }
        }
    }

    /// A dealer event refused on a round the operator owns is itself logged.
    fn logged_refusal(
        &self,
        state: &State,
        op: &str,
        round: &str,
        event: Value,
        r: Refusal,
    ) -> (Vec<Event>, Reply) {
        let reply = Reply::refusal(refusal_status(&r), &r);
        if state.round_of_operator(op, round).is_ok() {
            (
                vec![Event::EventRefused {
                    round: round.to_string(),
                    event,
                    refusal: r,
                }],
                reply,
            )
        } else {
            (Vec::new(), reply)
        }
    }
}

/// The refusal a problem reply carries.
fn refusal_of(reply: &Reply) -> Refusal {
    let text = |k: &str| {
        reply
            .body
            .get(k)
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    Refusal {
        code: text("code").unwrap_or_else(|| "refused".into()),
        message: text("detail").unwrap_or_default(),
        plan: text("plan"),
        clause: text("clause"),
    }
}

fn reused_key() -> Reply {
    Reply::refusal(
        422,
        &Refusal::new(
            "idempotency_key_reused",
            "this Idempotency-Key was used for a different request",
        ),
    )
}

/// The HTTP status of a refusal.
pub fn refusal_status(r: &Refusal) -> u16 {
    match r.code.as_str() {
        "table_not_found" | "round_not_found" | "plan_not_found" | "payout_not_found" => 404,
        "table_exists" => 409,
        "out_of_order"
        | "betting_open"
        | "betting_closed"
        | "round_in_progress"
        | "table_closed"
        | "not_rng"
        | "wrong_mode"
        | "decisions_open"
        | "decision_time_open"
        | "partial_void_not_possible"
        | "payout_already_confirmed"
        | "not_excluded" => 409,
        "unavailable" | "rng_unavailable" | "outcome_unknown" => 503,
        // Approved plan releases (`approval.rs`).
        "approval_not_found" => 404,
        "approval_exists" | "approval_withdrawn" | "plan_not_approved" => 409,
        // Exception events (`exception.rs`).
        "round_paused" | "round_not_paused" | "round_finished" => 409,
        _ => 422,
    }
}

fn outcome_body(state: &State, round: &str, events: &[Event]) -> RoundOutcome {
    let mut body = RoundOutcome {
        round: round.to_string(),
        ..RoundOutcome::default()
    };
    let before = state.rounds.get(round);
    let mut cards: Vec<CardRecord> = before.map(|r| r.cards.clone()).unwrap_or_default();
    let mut decisions_closed = before.is_some_and(|r| r.decisions_closed);
    for e in events {
        match e {
            Event::SpinInvalid { reason, .. } => {
                body.phase = Some(Phase::BettingClosed);
                body.spin = Some(SpinRejected {
                    valid: false,
                    reason: reason.clone(),
                });
            }
            Event::ResultRecorded { number, source, .. } => {
                body.result = Some(SpinResult {
                    number: *number,
                    source: *source,
                });
            }
            Event::RoundSettled {
                settlements,
                stake_minor,
                paid_minor,
                rng_seed,
                ..
            } => {
                body.phase = Some(Phase::Settled);
                body.settlements = Some(settlements.clone());
                let refunded: Vec<Refund> = before
                    .map(|r| {
                        r.bets
                            .iter()
                            .filter(|b| b.refunded)
                            .map(|b| Refund {
                                bet: b.bet.clone(),
                                player: b.player.clone(),
                                refund_minor: b.stake_minor,
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                if !refunded.is_empty() {
                    body.refunded = Some(refunded);
                }
                body.stake_minor = Some(*stake_minor);
                body.paid_minor = Some(*paid_minor);
                if let Some(s) = rng_seed {
                    body.rng_seed = Some(s.clone());
                }
            }
            Event::RoundVoided {
                reason,
                refunds,
                refund_minor,
                rng_seed,
                ..
            } => {
                body.phase = Some(Phase::Voided);
                body.reason = Some(reason.clone());
                body.refunds = Some(refunds.clone());
                body.refund_minor = Some(*refund_minor);
                if let Some(s) = rng_seed {
                    body.rng_seed = Some(s.clone());
                }
            }
            Event::CardDealt { to, card, .. } => {
                let c = CardRecord {
                    to: *to,
                    card: *card,
                };
                cards.push(c);
                body.cards.get_or_insert_with(Vec::new).push(c);
            }
            Event::Misdeal {
                reason,
                clause,
                discarded,
                ..
            } => {
                cards.clear();
                body.misdeal = Some(MisdealNotice {
                    reason: reason.clone(),
                    clause: clause.clone(),
                    discarded: discarded.clone(),
                });
            }
            Event::DecisionsOpened {
                deadline, players, ..
            } => {
                body.phase = Some(Phase::Decisions);
                body.decision_deadline = Some(*deadline);
                body.decisions_pending = Some(players.clone());
            }
            Event::DecisionTaken {
                player,
                decision,
                automatic,
                reason,
                bet,
                stake_minor,
                ..
            } => {
                // A player decided for as the time opens (disconnected) owes nothing more.
                if let Some(pending) = &mut body.decisions_pending {
                    pending.retain(|p| p != player);
                }
                body.decisions
                    .get_or_insert_with(Vec::new)
                    .push(DecisionResult::Taken {
                        player: player.clone(),
                        decision: decision.clone(),
                        automatic: *automatic,
                        reason: reason.clone(),
                        bet: bet.clone(),
                        stake_minor: *stake_minor,
                    })
            }
            Event::EventRefused { event, refusal, .. }
                if event.get("type").and_then(Value::as_str) == Some("decision") =>
            {
                body.decisions
                    .get_or_insert_with(Vec::new)
                    .push(DecisionResult::Refused {
                        player: event
                            .get("player")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string(),
                        code: refusal.code.clone(),
                        detail: refusal.message.clone(),
                        plan: refusal.plan.clone(),
                        clause: refusal.clause.clone(),
                    })
            }
            Event::DecisionsClosed { .. } => {
                decisions_closed = true;
                body.phase = Some(Phase::BettingClosed);
            }
            Event::OutcomeRecorded { outcome, .. } => body.outcome = Some(outcome.clone()),
            Event::BlackjackInput {
                input,
                bet_behind_declines,
                to,
                player,
                automatic,
                reason,
                bets,
                ..
            } => {
                if let (Some(p), false) = (player, matches!(input, bj::Input::Card { .. })) {
                    let mine: Vec<&crate::round::blackjack::AddedBet> =
                        bets.iter().filter(|b| &b.player == p).collect();
                    body.decisions
                        .get_or_insert_with(Vec::new)
                        .push(DecisionResult::Taken {
                            player: p.clone(),
                            decision: serde_json::to_value(input).expect("inputs serialise"),
                            automatic: *automatic,
                            reason: reason.clone(),
                            bet: mine.first().map(|b| b.bet.clone()),
                            stake_minor: mine.iter().map(|b| b.placement.stake_minor).sum(),
                        });
                }
                body.inputs
                    .get_or_insert_with(Vec::new)
                    .push(BlackjackInputNotice {
                        input: Some(*input),
                        hole_card_hidden: false,
                        bet_behind_declines: bet_behind_declines.clone(),
                        to: *to,
                        player: player.clone(),
                        automatic: *automatic,
                        reason: reason.clone(),
                        bets: bets.clone(),
                    });
            }
            _ => {}
        }
    }
    // Blackjack: what the round awaits after this request, from the events folded into a
    // copy of the round.
    if let Some(r) = before.filter(|r| {
        r.blackjack.is_some()
            || events
                .iter()
                .any(|e| matches!(e, Event::BlackjackInput { .. }))
    }) {
        let mut mini = State::default();
        mini.tables
            .insert(r.table.clone(), state.tables[&r.table].clone());
        mini.rounds.insert(round.to_string(), r.clone());
        for e in events
            .iter()
            .filter(|e| matches!(e, Event::BlackjackInput { .. }))
        {
            if mini.apply_blackjack_input(e).is_err() {
                break;
            }
        }
        let after = &mini.rounds[round];
        hide_hole_card(&mut body, r, after, &state.tables[&r.table].loaded);
        if let Some(b) = &after.blackjack {
            body.expected = Some(b.expected.clone());
            if body.phase.is_none() {
                body.phase = Some(after.phase);
            }
            if after.phase == Phase::Decisions {
                body.decision_deadline = after.decision_deadline;
                body.decisions_pending = Some(after.decisions_pending.clone());
            }
        }
        return body;
    }
    // While the players decide, replies say so.
    if body.phase.is_none() && before.is_some_and(|r| r.phase == Phase::Decisions) {
        let closed = events
            .iter()
            .any(|e| matches!(e, Event::DecisionsClosed { .. }));
        if !closed {
            body.phase = Some(Phase::Decisions);
        }
    }
    // Card games: what the dealer system deals next.
    if let Some(t) = before.and_then(|r| state.tables.get(&r.table)) {
        if let Ok(eng) = crate::round::Engine::new(&t.loaded.plan) {
            if eng.deals_cards() && body.phase != Some(Phase::Voided) {
                body.next = eng.next(&cards, decisions_closed).ok();
            }
        }
    }
    body
}

/// The approval an approval or withdrawal event leaves, as the state will hold it.
fn state_approval_reply(events: &[Event]) -> Value {
    match events.first() {
        Some(Event::PlanApproved {
            plan,
            sha256,
            reference,
            valid_from,
            valid_until,
            actor,
            via,
            ..
        }) => json!({
            "reference": reference, "plan": plan, "sha256": sha256,
            "valid_from": valid_from, "valid_until": valid_until,
            "approved_by": actor, "via": via, "withdrawn_by": null,
        }),
        Some(Event::PlanApprovalWithdrawn {
            reference,
            sha256,
            reason,
            actor,
        }) => {
            json!({"reference": reference, "sha256": sha256, "reason": reason, "withdrawn_by": actor})
        }
        _ => Value::Null,
    }
}

/// The stakes the `bet_refunded` events among `events` return.
fn refunds_of(events: &[Event]) -> Vec<Refund> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::BetRefunded {
                bet,
                player,
                refund_minor,
                ..
            } => Some(Refund {
                bet: bet.clone(),
                player: player.clone(),
                refund_minor: *refund_minor,
            }),
            _ => None,
        })
        .collect()
}

/// The reply to stakes returned before settlement (a partial void, a withdrawal).
fn refunds_body(round: &str, reason: Option<&str>, events: &[Event]) -> RoundOutcome {
    let refunds = refunds_of(events);
    RoundOutcome {
        round: round.to_string(),
        reason: reason.map(str::to_string),
        refund_minor: Some(refunds.iter().map(|r| r.refund_minor).sum()),
        refunds: Some(refunds),
        ..RoundOutcome::default()
    }
}

/// The dealer's hole card left out of a reply while it is face down after the request
/// (`after`): its card input's notice carries no card.
fn hide_hole_card(
    body: &mut RoundOutcome,
    before: &RoundState,
    after: &RoundState,
    plan: &crate::plan::LoadedPlan,
) {
    let Some(at) = after.hidden_hole_card_input(plan) else {
        return;
    };
    let mut index = before.blackjack.as_ref().map_or(0, |b| b.play.dealt.len());
    for n in body.inputs.iter_mut().flatten() {
        if matches!(n.input, Some(bj::Input::Card { .. })) {
            if index == at {
                n.input = None;
                n.hole_card_hidden = true;
            }
            index += 1;
        }
    }
}

/// One event as an audit entry, with the ids it concerns.
/// Seals the entries of one command's events; with `in_parts`, a settlement or void too large
/// for one entry as its parts ([`crate::round::in_parts`]). Stops at the first that does not
/// fit.
fn push_entries(
    builder: &mut pitboss_audit::log::BatchBuilder,
    events: &[Event],
    operator: &str,
    ts: Timestamp,
    in_parts: bool,
) -> Result<(), pitboss_audit::log::SealError> {
    for ev in events {
        match in_parts.then(|| crate::round::in_parts(ev)).flatten() {
            Some(parts) => {
                for part in &parts {
                    builder.push(entry_of(part, operator, ts))?;
                }
            }
            None => {
                builder.push(entry_of(ev, operator, ts))?;
            }
        }
    }
    Ok(())
}

fn entry_of(ev: &Event, operator: &str, ts: Timestamp) -> NewEntry {
    // Replay reads back only the kinds it knows: a kind missing from the list would be skipped.
    debug_assert!(
        Event::KINDS.contains(&ev.kind()),
        "{} missing from Event::KINDS",
        ev.kind()
    );
    let kind =
        pitboss_audit::entry::Kind::parse(ev.kind()).expect("event kinds are valid entry kinds");
    let mut e = NewEntry::new(ts, kind, ev.payload());
    // Commands of no operator (an admin's key management) name none.
    if !operator.is_empty() {
        e = e.operator(operator);
    }
    let (table, round, bet): (Option<&str>, Option<&str>, Option<&str>) = match ev {
        Event::RoundPaused { round, .. } | Event::RoundResumed { round, .. } => {
            (round.split('.').next(), Some(round), None)
        }
        Event::PlanLoaded { .. }
        | Event::PlanApproved { .. }
        | Event::PlanApprovalWithdrawn { .. }
        | Event::StateSnapshot { .. }
        | Event::ApiKeyCreated { .. }
        | Event::ApiKeyRevoked { .. }
        | Event::ApiKeyExpirySet { .. }
        | Event::PlayerExcluded { .. }
        | Event::PlayerExclusionLifted { .. }
        | Event::PlayerLimitsSet { .. }
        | Event::PlayerUsageReported { .. } => (None, None, None),
        Event::TableOpened { table, .. } | Event::TableClosed { table, .. } => {
            (Some(table), None, None)
        }
        Event::PlayerDisconnected { table, .. }
        | Event::PlayerReconnected { table, .. }
        | Event::ShoeShuffled { table, .. }
        | Event::ShoeChanged { table, .. }
        | Event::TableAction { table, .. }
        | Event::SeatReleased { table, .. } => (Some(table), None, None),
        // The entry names the first stake the input added (a split, a double, insurance).
        Event::BlackjackInput { round, bets, .. } => (
            round.split('.').next(),
            Some(round),
            bets.first().map(|b| b.bet.as_str()),
        ),
        Event::BetRefunded { round, bet, .. } => (round.split('.').next(), Some(round), Some(bet)),
        Event::PayoutConfirmed { round, .. } => (round.split('.').next(), Some(round), None),
        Event::DecisionTaken {
            round,
            bet: Some(bet),
            ..
        } => (round.split('.').next(), Some(round), Some(bet)),
        Event::CommandRefused { table, round, .. } => (table.as_deref(), round.as_deref(), None),
        Event::RoundOpened { round, table, .. } => (Some(table), Some(round), None),
        Event::BetAccepted { bet, round, .. } => (round.split('.').next(), Some(round), Some(bet)),
        Event::BetRefused { round, .. }
        | Event::BettingClosed { round, .. }
        | Event::SpinInvalid { round, .. }
        | Event::EventRefused { round, .. }
        | Event::ResultRecorded { round, .. }
        | Event::RoundSettled { round, .. }
        | Event::RoundVoided { round, .. }
        | Event::RoundSettledPart { round, .. }
        | Event::RoundVoidedPart { round, .. }
        | Event::CardDealt { round, .. }
        | Event::Misdeal { round, .. }
        | Event::DecisionsOpened { round, .. }
        | Event::DecisionTaken { round, .. }
        | Event::DecisionsClosed { round, .. }
        | Event::OutcomeRecorded { round, .. } => (round.split('.').next(), Some(round), None),
    };
    if let Some(t) = table {
        e = e.table(t);
    }
    if let Some(r) = round {
        e = e.round(r);
    }
    if let Some(b) = bet {
        e = e.bet(b);
    }
    // What the ids say, and what the plan re-derives, is not logged twice (FORMAT.md 1.4).
    let id = |k: &str| match k {
        "table" => table,
        "round" => round,
        "bet" => bet,
        "operator" => Some(operator).filter(|o| !o.is_empty()),
        _ => None,
    };
    e.payload = crate::round::logged_payload(ev.kind(), std::mem::take(&mut e.payload), id);
    debug_assert_eq!(
        crate::round::event_of_entry(
            &json!({"kind": ev.kind(), "ids": &e.ids, "payload": &e.payload})
        ),
        Ok(Some(ev.as_read_back())),
        "an entry does not read back as the event it logs"
    );
    e
}

/// A command on a table or a round that has left memory (closed; settled or voided): it is
/// read back from the store for this batch, so the command is decided exactly as before (and
/// refused as it was: a closed table takes no rounds, a finished round no bets).
fn fault_in(
    conn: &mut DbConnection,
    plans: &PlanSet,
    state: &mut State,
    job: &Job,
    faulted: &mut Faulted,
) -> Result<(), StoreError> {
    let (table, round) = job.command.target();
    if let Some(t) = table {
        if derived::fault_in_table(conn, plans, state, &t)? {
            faulted.tables.push(t);
        }
    }
    if let Some(r) = round {
        if derived::fault_in_round(conn, state, &r)? {
            faulted.rounds.push(r);
        }
    }
    Ok(())
}

/// What a command names, for [`resolve_names`].
enum Names<'a> {
    None,
    Table(&'a mut String),
    Round(&'a mut String, Option<&'a mut Vec<String>>),
}

/// Resolves the table or round a command names to the id the log gives it (issue 17: table
/// ids are scoped to their operator). An operator names its table `t1` and its rounds `t1.3`
/// or by the ids pitboss answered (`op:t1`, `op:t1.3`). A bare name means the operator's
/// scoped table (`op:t1`) when there is one, in memory or in the store; else the operator's
/// own table logged bare before ids were scoped; else the scoped id (which the decision
/// then reports as not found). Another operator's table of the same name is never chosen.
/// Tables and rounds read from the store to decide are added to `faulted` (they leave memory
/// with the batch).
fn resolve_names(
    conn: &mut DbConnection,
    plans: &PlanSet,
    state: &mut State,
    job: &mut Job,
    faulted: &mut Faulted,
) -> Result<(), StoreError> {
    use crate::round::scoped;
    let op = job.operator.as_str();
    let mut table_in = |state: &mut State, id: &str| -> Result<bool, StoreError> {
        if derived::fault_in_table(conn, plans, state, id)? {
            faulted.tables.push(id.to_string());
        }
        Ok(state.tables.contains_key(id))
    };
    // Whether a bare table name means the operator's own table logged bare: no scoped table
    // of that name, and a bare one that is the operator's.
    let mut own_bare = |state: &mut State, bare: &str| -> Result<bool, StoreError> {
        Ok(!table_in(state, &scoped(op, bare))?
            && table_in(state, bare)?
            && state.tables[bare].operator == op)
    };
    let (name, bets) = match job.command.names_mut() {
        Names::None => {
            if let Command::OpenTable { table, .. } = &job.command {
                // The decision refuses a name the operator's table already has, open or
                // closed (scoped, or bare from before).
                if !table.contains(crate::round::SCOPE) {
                    own_bare(state, table)?;
                }
            }
            return Ok(());
        }
        Names::Table(name) => (name, None),
        Names::Round(round, bets) => (round, bets),
    };
    if name.contains(crate::round::SCOPE) {
        // Bets named bare in a round named by its scoped id.
        let own_round = name
            .strip_prefix(op)
            .is_some_and(|r| r.starts_with(crate::round::SCOPE));
        for b in bets.into_iter().flatten().filter(|_| own_round) {
            *b = scoped(op, b);
        }
        return Ok(());
    }
    // A round's table is its id up to the first `.`.
    let bare_table = name.split('.').next().unwrap_or_default().to_string();
    if !own_bare(state, &bare_table)? {
        *name = scoped(op, name);
        for b in bets.into_iter().flatten() {
            *b = scoped(op, b);
        }
    }
    Ok(())
}

/// Tables and rounds read back for one batch, or finished by it: they leave memory once the
/// batch is durable.
#[derive(Default)]
struct Faulted {
    tables: Vec<String>,
    rounds: Vec<String>,
}

pub use derived::{stored_round, stored_table};

/// Whether the store has room for a batch (SQLite: the data directory's free space; a
/// commit that fitted in the reused WAL does not show it).
fn room_to_write(url: &DatabaseUrl) -> Result<(), String> {
    match url {
        DatabaseUrl::Sqlite(path) => health::check_free_space(Path::new(path)),
        DatabaseUrl::Postgres(_) => Ok(()),
    }
}

/// Answers every command of a written batch.
fn finish(pending: Vec<Pending>) {
    for p in pending {
        tracing::debug!(
            target: "pitboss::writer",
            request_id = p.job.request_id.map(|id| id.to_string()).as_deref(),
            command = p.job.command.name(),
            status = p.reply.status,
            "command answered"
        );
        let _ = p.job.reply.send(p.reply);
    }
}

fn upsert_log_state(c: &mut DbConnection, state: &str) -> Result<(), diesel::result::Error> {
    let updated = diesel::update(log_state::table.filter(log_state::id.eq(1)))
        .set(log_state::state.eq(state))
        .execute(c)?;
    if updated == 0 {
        diesel::insert_into(log_state::table)
            .values((log_state::id.eq(1), log_state::state.eq(state)))
            .execute(c)?;
    }
    Ok(())
}

/// Reads for the HTTP layer.
pub mod read {
    use super::*;

    /// A table's registration number and dealing device, from its `table_opened` entry.
    pub fn registration_of(
        pool: &ReadPool,
        table: &str,
    ) -> Result<Option<crate::round::regulator::Registration>, StoreError> {
        use crate::store::schema::audit_table_entries as by_table;
        let mut c = pool.get().map_err(|e| StoreError::Pool(e.to_string()))?;
        // Below `indexed_to` through the table index, above it in the un-indexed tail.
        let split = store::entry_index::indexed_to(&mut c)?;
        let mut row: Option<Vec<u8>> = by_table::table
            .inner_join(audit_entries::table.on(audit_entries::seq.eq(by_table::seq)))
            .filter(by_table::table_id.eq(table))
            .filter(by_table::seq.lt(split))
            .filter(audit_entries::kind.eq("table_opened"))
            .select(audit_entries::canonical)
            .order(by_table::seq.asc())
            .limit(1)
            .load(&mut *c)?
            .pop();
        if row.is_none() {
            row = audit_entries::table
                .filter(audit_entries::seq.ge(split))
                .filter(audit_entries::table_id.eq(table))
                .filter(audit_entries::kind.eq("table_opened"))
                .select(audit_entries::canonical)
                .order(audit_entries::seq.asc())
                .limit(1)
                .load(&mut *c)?
                .pop();
        }
        let Some(bytes) = row else { return Ok(None) };
        let v: Value =
            serde_json::from_slice(&bytes).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let field = |k: &str| v["payload"][k].as_str().map(str::to_string);
        let (registration, device) = (field("registration"), field("device"));
        Ok((registration.is_some() || device.is_some()).then_some(
            crate::round::regulator::Registration {
                registration,
                device,
            },
        ))
    }

    /// Canonical entries (as JSON values) with `seq` in `[from, from + limit)`.
    pub fn entries_since(
        pool: &ReadPool,
        from: u64,
        limit: i64,
    ) -> Result<Vec<(u64, Vec<u8>)>, StoreError> {
        let mut conn = pool.get().map_err(|e| StoreError::Pool(e.to_string()))?;
        let rows: Vec<(i64, Vec<u8>)> = audit_entries::table
            .filter(audit_entries::seq.ge(from as i64))
            .order(audit_entries::seq.asc())
            .limit(limit)
            .select((audit_entries::seq, audit_entries::canonical))
            .load(&mut conn)?;
        Ok(rows.into_iter().map(|(s, c)| (s as u64, c)).collect())
    }

    pub fn entries_of_round(
        pool: &ReadPool,
        round: &str,
    ) -> Result<Vec<(u64, Vec<u8>)>, StoreError> {
        use crate::store::schema::audit_round_entries as by_round;
        let mut conn = pool.get().map_err(|e| StoreError::Pool(e.to_string()))?;
        // Below `indexed_to` through the round index, above it in the un-indexed tail.
        let split = store::entry_index::indexed_to(&mut conn)?;
        let mut rows: Vec<(i64, Vec<u8>)> = by_round::table
            .inner_join(audit_entries::table.on(audit_entries::seq.eq(by_round::seq)))
            .filter(by_round::round_id.eq(round))
            .filter(by_round::seq.lt(split))
            .order(by_round::seq.asc())
            .select((audit_entries::seq, audit_entries::canonical))
            .load(&mut conn)?;
        rows.extend(
            audit_entries::table
                .filter(audit_entries::seq.ge(split))
                .filter(audit_entries::round_id.eq(round))
                .order(audit_entries::seq.asc())
                .select((audit_entries::seq, audit_entries::canonical))
                .load::<(i64, Vec<u8>)>(&mut conn)?,
        );
        Ok(rows.into_iter().map(|(s, c)| (s as u64, c)).collect())
    }

    /// How many entries the store holds (the largest sequence number, plus one).
    pub fn log_size(pool: &ReadPool) -> Result<u64, StoreError> {
        let mut conn = pool.get().map_err(|e| StoreError::Pool(e.to_string()))?;
        let last: Option<i64> = audit_entries::table
            .select(diesel::dsl::max(audit_entries::seq))
            .first(&mut conn)?;
        Ok(last.map_or(0, |s| s as u64 + 1))
    }

    pub fn entry(pool: &ReadPool, seq: u64) -> Result<Option<Vec<u8>>, StoreError> {
        let mut conn = pool.get().map_err(|e| StoreError::Pool(e.to_string()))?;
        Ok(audit_entries::table
            .filter(audit_entries::seq.eq(seq as i64))
            .select(audit_entries::canonical)
            .first(&mut conn)
            .optional()?)
    }

    /// Every signed checkpoint, smallest first.
    pub fn checkpoints(pool: &ReadPool) -> Result<Vec<SignedCheckpoint>, StoreError> {
        let mut conn = pool.get().map_err(|e| StoreError::Pool(e.to_string()))?;
        let rows: Vec<String> = checkpoints::table
            .order(checkpoints::tree_size.asc())
            .select(checkpoints::note)
            .load(&mut conn)?;
        let mut cps = rows
            .iter()
            .map(|t| {
                SignedCheckpoint::parse(t)
                    .map_err(|e| StoreError::Corrupt(format!("checkpoint: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        witnessing::attach(&mut conn, &mut cps)?;
        Ok(cps)
    }

    /// The signed checkpoint of `size` with its witnesses' cosignatures, if one was signed.
    pub fn checkpoint_of_size(
        pool: &ReadPool,
        size: u64,
    ) -> Result<Option<SignedCheckpoint>, StoreError> {
        let mut conn = pool.get().map_err(|e| StoreError::Pool(e.to_string()))?;
        let row: Option<String> = checkpoints::table
            .filter(checkpoints::tree_size.eq(size as i64))
            .select(checkpoints::note)
            .first(&mut conn)
            .optional()?;
        with_cosignatures(&mut conn, row)
    }

    /// The latest checkpoint carrying `witnesses`' quorum of cosignatures, if any.
    pub fn latest_witnessed_checkpoint(
        pool: &ReadPool,
        witnesses: &witnessing::Witnesses,
    ) -> Result<Option<SignedCheckpoint>, StoreError> {
        if witnesses.specs.is_empty() {
            return Ok(None);
        }
        let mut conn = pool.get().map_err(|e| StoreError::Pool(e.to_string()))?;
        // The sizes some witness cosigned, newest first: the first with the quorum is it.
        let sizes: Vec<i64> = crate::store::schema::checkpoint_cosignatures::table
            .select(crate::store::schema::checkpoint_cosignatures::tree_size)
            .distinct()
            .order(crate::store::schema::checkpoint_cosignatures::tree_size.desc())
            .limit(1_000)
            .load(&mut conn)?;
        for size in sizes {
            let row: Option<String> = checkpoints::table
                .filter(checkpoints::tree_size.eq(size))
                .select(checkpoints::note)
                .first(&mut conn)
                .optional()?;
            if let Some(cp) = with_cosignatures(&mut conn, row)? {
                if witnesses.witnessed(&cp) {
                    return Ok(Some(cp));
                }
            }
        }
        Ok(None)
    }

    fn with_cosignatures(
        conn: &mut crate::store::DbConnection,
        note: Option<String>,
    ) -> Result<Option<SignedCheckpoint>, StoreError> {
        let Some(t) = note else { return Ok(None) };
        let cp = SignedCheckpoint::parse(&t)
            .map_err(|e| StoreError::Corrupt(format!("checkpoint: {e}")))?;
        let mut one = [cp];
        witnessing::attach(conn, &mut one)?;
        let [cp] = one;
        Ok(Some(cp))
    }

    pub fn latest_checkpoint(pool: &ReadPool) -> Result<Option<SignedCheckpoint>, StoreError> {
        let mut conn = pool.get().map_err(|e| StoreError::Pool(e.to_string()))?;
        let row = latest_note(&mut conn)?;
        with_cosignatures(&mut conn, row)
    }
}

/// Proves on a stored log that snapshots change nothing: [`crate::round::snapshot::check_equivalence`]
/// at `cuts` points of the log, and the latest stored snapshot (if any) read back as a start
/// reads it and folded with the tail to the full replay's state. The test suite runs it on
/// every log it produces. Returns a one-line summary.
pub fn check_snapshots(url: &DatabaseUrl, plans: &PlanSet, cuts: usize) -> Result<String, String> {
    let mut conn = store::connect(url).map_err(|e| e.to_string())?;
    let mut events = Vec::new();
    let mut last: i64 = -1;
    loop {
        let rows: Vec<(i64, Vec<u8>)> = audit_entries::table
            .filter(audit_entries::seq.gt(last))
            .order(audit_entries::seq.asc())
            .select((audit_entries::seq, audit_entries::canonical))
            .limit(10_000)
            .load(&mut conn)
            .map_err(|e| e.to_string())?;
        if rows.is_empty() {
            break;
        }
        for (seq, canonical) in rows {
            if seq != last + 1 {
                return Err(format!("entry {} is missing", last + 1));
            }
            last = seq;
            let v: Value = serde_json::from_slice(&canonical).map_err(|e| e.to_string())?;
            events.push(crate::round::event_of_entry(&v).map_err(|e| format!("entry {seq}: {e}"))?);
        }
    }
    let n = events.len() as u64;
    let checked = crate::round::snapshot::check_equivalence(plans, &events, cuts)?;
    let mut full = State::default();
    for e in events.iter().flatten() {
        full.fold(plans, e)?;
    }
    let full = full.snapshot(n);
    let stored = match derived::latest_snapshot(&mut conn).map_err(|e| e.to_string())? {
        None => "no stored snapshot".to_string(),
        Some((covers, _, _)) => {
            let (mut state, c) = restore_snapshot(&mut conn, plans, n)
                .map_err(|e| e.to_string())?
                .ok_or_else(|| format!("the stored snapshot at {covers} is not usable"))?;
            for e in events.iter().skip(c as usize).flatten() {
                state.fold(plans, e)?;
            }
            if state.snapshot(n) != full {
                return Err(format!(
                    "the stored snapshot at {covers} and the tail give another state than a full replay"
                ));
            }
            format!("the stored snapshot at {covers} + tail = full replay")
        }
    };
    Ok(format!(
        "{n} entries, {checked} cuts: snapshot + tail = full replay; {stored}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An operator's bare name resolves to its scoped table, else to its own table logged bare
    /// before ids were scoped, never to another operator's; ids already scoped stay as sent;
    /// a partial void's bets follow their round.
    #[test]
    fn names_resolve_to_the_operators_own_table_scoped_or_bare() {
        let dir = tempfile::tempdir().expect("dir");
        let url = DatabaseUrl::Sqlite(dir.path().join("s.sqlite").to_string_lossy().into());
        store::migrate(&url).expect("migrate");
        let mut conn = store::connect(&url).expect("connect");
        let (plans, _) = PlanSet::load_dir(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("game_plans")
                .as_path(),
        );
        let mut state = State::default();
        let plan = "evolution-roulette@1";
        let hash = plans
            .get(&plan.parse().expect("ref"))
            .expect("plan")
            .hash
            .clone();
        let opened = |table: &str, operator: &str| Event::TableOpened {
            table: table.into(),
            operator: operator.into(),
            plan: plan.into(),
            plan_sha256: hash.clone(),
            mode: Mode::Live,
            registration: None,
            device: None,
        };
        for e in [
            opened("op1:t1", "op1"),
            opened("t2", "op1"),
            opened("t3", "op2"),
        ] {
            state.apply(&plans, &e).expect("applies");
        }
        let mut resolved = |command: Command| -> Command {
            let mut job = Job {
                operator: "op1".into(),
                idem: None,
                actor: None,
                command,
                reply: tokio::sync::oneshot::channel().0,
                request_id: None,
                queued_at: Instant::now(),
            };
            let mut faulted = Faulted::default();
            resolve_names(&mut conn, &plans, &mut state, &mut job, &mut faulted).expect("store");
            job.command
        };
        let table = |c: Command| c.target().0.expect("a table");
        let open = |t: &str| Command::OpenRound { table: t.into() };
        assert_eq!(table(resolved(open("t1"))), "op1:t1");
        assert_eq!(table(resolved(open("t2"))), "t2", "its own, logged bare");
        assert_eq!(table(resolved(open("t3"))), "op1:t3", "not op2's t3");
        assert_eq!(table(resolved(open("t9"))), "op1:t9");
        assert_eq!(table(resolved(open("op2:t3"))), "op2:t3", "as sent");
        let void = |round: &str, bet: &str| Command::PartialVoid {
            round: round.into(),
            reason: "r".into(),
            players: vec![],
            bets: vec![bet.into()],
        };
        let round_and_bets = |c: Command| match c {
            Command::PartialVoid { round, bets, .. } => (round, bets),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            round_and_bets(resolved(void("t1.1", "t1.1.2"))),
            ("op1:t1.1".to_string(), vec!["op1:t1.1.2".to_string()])
        );
        assert_eq!(
            round_and_bets(resolved(void("op1:t1.1", "t1.1.2"))),
            ("op1:t1.1".to_string(), vec!["op1:t1.1.2".to_string()])
        );
        assert_eq!(
            round_and_bets(resolved(void("t2.4", "t2.4.1"))),
            ("t2.4".to_string(), vec!["t2.4.1".to_string()])
        );
        assert_eq!(
            round_and_bets(resolved(void("t3.1", "t3.1.1"))),
            ("op1:t3.1".to_string(), vec!["op1:t3.1.1".to_string()])
        );
    }

    /// A retry that arrives while its first answer is in flight gets that answer from the text
    /// the writer serialised once: the same status and the same JSON, byte for byte.
    #[test]
    fn an_in_flight_answer_is_given_again_from_its_text() {
        let first = Reply::refusal(
            409,
            &Refusal::new("round_closed", "betting is closed for round t1.1"),
        );
        let stored = StoredReply {
            status: first.status,
            text: first.body.to_string().into(),
        };
        let again = stored.to_reply();
        assert_eq!(again.status, 409);
        assert_eq!(again.body, first.body);
        assert_eq!(again.body.to_string(), first.body.to_string());
        assert_eq!(
            again.text.as_deref(),
            Some(first.body.to_string().as_str()),
            "the HTTP worker sends the stored text itself"
        );
        assert!(again.retry_after_s.is_none());
    }
}
