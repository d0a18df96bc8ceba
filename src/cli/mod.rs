//! The `pitboss` command line.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// `println!` that ends the program quietly when the reader has gone (`pitboss … | head`)
/// instead of panicking on the broken pipe.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout().lock(), $($arg)*) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(0);
            }
        }
    }};
}

mod plan;
mod render;

pub use plan::PlanCommand;

use crate::plan::registry::PlanSet;
use crate::plan::{LoadedPlan, PlanRef};

#[derive(Debug, Parser)]
#[command(
    name = "pitboss",
    version,
    about = "Game-plan compliance engine and audit service"
)]
pub struct Cli {
    /// Directory holding the plan files.
    #[arg(
        long,
        global = true,
        default_value = "game_plans",
        env = "PITBOSS_PLANS"
    )]
    pub plans: PathBuf,
    #[command(subcommand)]
    pub command: Command,
}

// Parsed once per process: the size of `Serve`'s options costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Game plans: lint, list, show, hash, diff.
    #[command(subcommand)]
    Plan(PlanCommand),
    /// Run the service.
    Serve {
        /// Address to listen on (`127.0.0.1:0` picks a free port).
        #[arg(long, default_value = "127.0.0.1:8080", env = "PITBOSS_BIND")]
        bind: String,
        /// Where the service keeps its data (database, signing key).
        #[arg(long, default_value = "data", env = "PITBOSS_DATA_DIR")]
        data_dir: PathBuf,
        /// `postgres://…` for PostgreSQL, or a SQLite file (default `DATA_DIR/pitboss.sqlite`).
        #[arg(long, env = "DATABASE_URL")]
        database_url: Option<String>,
        /// Ed25519 signing key, PKCS#8 PEM (default `DATA_DIR/signing-key.pem`, created if absent).
        #[arg(long, env = "PITBOSS_SIGNING_KEY")]
        signing_key: Option<PathBuf>,
        /// Bootstrap admin key to install when none exists (else one is generated and printed once).
        #[arg(long, env = "PITBOSS_ADMIN_KEY", hide_env_values = true)]
        admin_key: Option<String>,
        /// The audit log's origin (first line of every checkpoint): one name per log, e.g.
        /// `casino.example.cz/pitboss/prague-live`. Required with PostgreSQL; the embedded
        /// SQLite default keeps the stored one, or derives `localhost/pitboss/<key fingerprint>`.
        #[arg(long, env = "PITBOSS_LOG_ORIGIN")]
        origin: Option<String>,
        /// Key (64 hex digits) that encrypts the stored seeds of open RNG rounds (default
        /// `seed-key` beside the signing key, created if absent).
        #[arg(long, env = "PITBOSS_SEED_KEY")]
        seed_key: Option<PathBuf>,
        /// Seconds an idempotency record is kept (a retry within it gets the first answer;
        /// after it, a retry is a new request).
        #[arg(long, env = "PITBOSS_IDEMPOTENCY_RETENTION_S", default_value_t = 86_400, value_parser = clap::value_parser!(u64).range(1..))]
        idempotency_retention_s: u64,
        /// Rounds of each simulated return to player the console shows, computed once per
        /// plan content in the background (Casino Hold'em plays a tenth); 0 computes none.
        #[arg(long, default_value_t = 10_000_000, env = "PITBOSS_RTP_ROUNDS")]
        rtp_rounds: u64,
        /// Give the console's cookies `Secure` even over plain HTTP (behind a TLS proxy that
        /// does not say `X-Forwarded-Proto: https`).
        #[arg(long, env = "PITBOSS_SECURE_COOKIES", value_parser = clap::builder::BoolishValueParser::new())]
        secure_cookies: bool,
        /// Store a snapshot of the live state after this many new log entries (also every
        /// `--snapshot-interval-s` while entries come, and at a clean shutdown); a start reads
        /// the latest and replays only the log after it. 0: no snapshots.
        #[arg(long, env = "PITBOSS_SNAPSHOT_EVERY", default_value_t = 10_000)]
        snapshot_every: u64,
        /// Seconds after which a snapshot is due if any entry came since the last.
        #[arg(long, env = "PITBOSS_SNAPSHOT_INTERVAL_S", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
        snapshot_interval_s: u64,
        /// Milliseconds a command waits for the writer's durable answer; past it the request
        /// is answered 503 `outcome_unknown` (a retry with the same Idempotency-Key tells).
        #[arg(long, env = "PITBOSS_WRITE_DEADLINE_MS", default_value_t = crate::service::SUBMIT_DEADLINE.as_millis() as u64, value_parser = clap::value_parser!(u64).range(1..))]
        write_deadline_ms: u64,
        /// Where the other nodes on the same PostgreSQL reach this one, e.g.
        /// `http://10.0.0.5:8080` (`auto`: `http://` and the address bound). With it, a node
        /// whose log another node writes starts as a standby that forwards every request to
        /// that node and takes the log over once its lease runs out; without it, such a node
        /// refuses to start.
        #[arg(long, env = "PITBOSS_NODE_URL")]
        node_url: Option<String>,
        /// Milliseconds the writer's lease lasts after its last renewal (PostgreSQL): a
        /// standby takes the log of a node that stopped renewing over after this long.
        #[arg(long, env = "PITBOSS_LEASE_MS", default_value_t = crate::store::lease::DEFAULT_LEASE.as_millis() as u64, value_parser = clap::value_parser!(u64).range(300..=600_000))]
        lease_ms: u64,
        /// A PostgreSQL read replica of `--database-url` (`postgres://…`): the audit log's
        /// read routes (entries, the daily summary, checkpoints, proofs) are served from it,
        /// on the writer and on standbys alike, and follow it as it replays; commands,
        /// leases and everything else stay on the primary.
        #[arg(long, env = "PITBOSS_READ_DATABASE_URL")]
        read_database_url: Option<String>,
        /// Each operator's tables write a log of their own (its own chain, checkpoints and
        /// origin: the service's followed by `/operator/<operator>`), written by a writer of
        /// its own; the service's log keeps plans, keys and approvals. Once a deployment has
        /// made an operator's log, every start needs this flag. With `--node-url`, each log
        /// is written by the node that holds its lease, and every node sends each request to
        /// the node that writes its log.
        #[arg(long, env = "PITBOSS_LOG_PER_OPERATOR", value_parser = clap::builder::BoolishValueParser::new())]
        log_per_operator: bool,
        #[command(flatten)]
        limits: LimitArgs,
        #[command(flatten)]
        regulator: RegulatorArgs,
        #[command(flatten)]
        witnesses: WitnessArgs,
    },
    /// Print the OpenAPI description of the HTTP API (committed as openapi/openapi.json).
    Openapi,
    /// Print a shell completion script (e.g. `pitboss completions bash > /etc/bash_completion.d/pitboss`).
    Completions {
        /// bash, elvish, fish, powershell or zsh.
        shell: clap_complete::Shell,
    },
    /// Play RNG rounds of a plan through its engine and report the return of every bet.
    ///
    /// Each round places one bet of every bet type at its `min_bet` (roulette on one spot per
    /// type, Egalite Extra on each total) from one ChaCha20 stream of the seed.
    Simulate {
        /// `ID` (latest version) or `ID@VERSION`.
        #[arg(long)]
        plan: String,
        /// Rounds to play.
        #[arg(long)]
        rounds: u64,
        /// A decimal u64 (little-endian in the first 8 bytes of the 32-byte seed, the rest
        /// zero) or 64 hex digits.
        #[arg(long)]
        seed: String,
        /// Print the results as JSON.
        #[arg(long)]
        json: bool,
        /// Also print the engine's exact return of every bet.
        #[arg(long)]
        exact: bool,
        /// Baccarat only: deal and read coups without placing bets (the game's bare rate).
        #[arg(long, hide = true)]
        deal_only: bool,
    },
    /// Re-derive every settlement, refund and RNG result of an export with the plans it names.
    ///
    /// Folds the export's entries with the plan versions in `--plans` (each checked by its
    /// content hash against the log's `plan_loaded` and `table_opened` entries) through the same
    /// rules the service applied, and prints each entry the re-derivation disagrees with as
    /// `DISAGREE seq N (kind): why`. No database, no service; run `pitboss-audit verify` first.
    ///
    /// Exit codes: 0 every entry agrees; 1 the export or the plans cannot be read; 2 usage;
    /// 3 one or more disagreements.
    Replay {
        /// The JSONL export (`GET /v1/audit/export`).
        export: PathBuf,
        /// Also print the daily summary per table of this UTC day (`YYYY-MM-DD`) as JSON,
        /// computed from the export's entries as `GET /v1/audit/daily-summary` computes it
        /// from the log.
        #[arg(long)]
        daily_summary: Option<chrono::NaiveDate>,
    },
    /// Run a witness (C2SP tlog-witness) or read its store.
    #[command(subcommand)]
    Witness(WitnessCommand),
    /// Apply pending database migrations and exit.
    Migrate {
        #[arg(long, default_value = "data", env = "PITBOSS_DATA_DIR")]
        data_dir: PathBuf,
        #[arg(long, env = "DATABASE_URL")]
        database_url: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum WitnessCommand {
    /// Serve `POST /add-checkpoint` for the configured logs (and `GET /latest-checkpoint`,
    /// `GET /evidence`, `GET /healthz`). Prints `witness key: <vkey>`, then `listening on …`.
    Serve {
        /// Address to listen on (`127.0.0.1:0` picks a free port).
        #[arg(long, default_value = "127.0.0.1:8090", env = "PITBOSS_WITNESS_BIND")]
        bind: String,
        /// Where the witness keeps its key and its store (`witness.sqlite`).
        #[arg(long, default_value = "witness-data", env = "PITBOSS_WITNESS_DATA_DIR")]
        data_dir: PathBuf,
        /// Its name, part of its key id (fixed at first start). Default
        /// `localhost/pitboss-witness/<key fingerprint>`; e.g. `regulator.example.cz/witness-1`.
        #[arg(long, env = "PITBOSS_WITNESS_NAME")]
        name: Option<String>,
        /// Its Ed25519 key, PKCS#8 PEM (default `DATA_DIR/witness-key.pem`, created if absent).
        #[arg(long, env = "PITBOSS_WITNESS_KEY")]
        key: Option<PathBuf>,
        /// A log to witness: the log's verifier key string `<origin>+<id>+<base64(0x01 ‖ key)>`
        /// (its name is the origin). Repeat for more logs, or for a log's keys during a rotation.
        #[arg(long = "log-key")]
        log_keys: Vec<String>,
        /// A file of log verifier key strings, one a line (`#` starts a comment).
        #[arg(long)]
        logs: Option<PathBuf>,
    },
    /// Print the evidence the witness kept (refused, conflicting checkpoints), one JSON
    /// object a line, oldest first.
    Evidence {
        #[arg(long, default_value = "witness-data", env = "PITBOSS_WITNESS_DATA_DIR")]
        data_dir: PathBuf,
        /// Only this log's.
        #[arg(long)]
        origin: Option<String>,
    },
    /// Print the witness's verifier key string (`<name>+<id>+<base64(0x04 ‖ key)>`), creating
    /// its key and fixing its name if this is its first start.
    Key {
        #[arg(long, default_value = "witness-data", env = "PITBOSS_WITNESS_DATA_DIR")]
        data_dir: PathBuf,
        #[arg(long, env = "PITBOSS_WITNESS_NAME")]
        name: Option<String>,
        #[arg(long, env = "PITBOSS_WITNESS_KEY")]
        key: Option<PathBuf>,
    },
}

pub fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Plan(cmd) => plan::run(&cli.plans, cmd),
        Command::Openapi => {
            // Already ends with a newline: the committed file is exactly this output.
            out!(
                "{}",
                crate::api::openapi::openapi_json_text().trim_end_matches('\n')
            );
            ExitCode::SUCCESS
        }
        Command::Completions { shell } => {
            use clap::CommandFactory;
            let mut cmd = Cli::command();
            let mut stdout = std::io::stdout().lock();
            clap_complete::generate(shell, &mut cmd, "pitboss", &mut stdout);
            ExitCode::SUCCESS
        }
        Command::Simulate {
            plan,
            rounds,
            seed,
            json,
            exact,
            deal_only,
        } => simulate(&cli.plans, &plan, rounds, &seed, json, exact, deal_only),
        Command::Replay {
            export,
            daily_summary,
        } => {
            let code = replay(&cli.plans, &export);
            match daily_summary {
                Some(date) if code == ExitCode::SUCCESS => summary(&export, date),
                _ => code,
            }
        }
        Command::Witness(cmd) => witness(cmd),
        Command::Migrate {
            data_dir,
            database_url,
        } => {
            if let Err(e) = std::fs::create_dir_all(&data_dir) {
                return fail(e);
            }
            let url = database_url
                .as_deref()
                .map(crate::store::DatabaseUrl::parse)
                .unwrap_or_else(|| crate::store::DatabaseUrl::default_in(&data_dir));
            // The service's store, then each operator's log's (`--log-per-operator`).
            let migrated = crate::store::migrate(&url).and_then(|n| {
                let recorded = crate::service::logs::recorded(&mut crate::store::connect(&url)?)?;
                let mut total = n;
                for r in &recorded {
                    total += crate::store::migrate(&url.for_log(&r.namespace))?;
                }
                Ok((total, recorded.len()))
            });
            match migrated {
                Ok((n, 0)) => {
                    out!("{n} migration(s) applied");
                    ExitCode::SUCCESS
                }
                Ok((n, logs)) => {
                    out!(
                        "{n} migration(s) applied (the service's store and {logs} operators' logs)"
                    );
                    ExitCode::SUCCESS
                }
                Err(e) => fail(e),
            }
        }
        Command::Serve {
            bind,
            data_dir,
            database_url,
            signing_key,
            admin_key,
            origin,
            seed_key,
            idempotency_retention_s,
            limits,
            rtp_rounds,
            secure_cookies,
            snapshot_every,
            snapshot_interval_s,
            write_deadline_ms,
            node_url,
            lease_ms,
            read_database_url,
            log_per_operator,
            regulator,
            witnesses,
        } => {
            crate::observe::init_logging();
            // A service never starts on plans with errors: it would enforce rules nobody approved.
            let set = match load(&cli.plans) {
                Ok(set) => set,
                Err(code) => return code,
            };
            if set.is_empty() {
                return fail(format!(
                    "no plan files (*.toml) in {}: point --plans DIR (or PITBOSS_PLANS) at the \
                     directory of plan files",
                    cli.plans.display()
                ));
            }
            let config = crate::api::ServeConfig {
                bind,
                plans_dir: cli.plans.clone(),
                data_dir,
                database_url,
                signing_key,
                admin_key,
                origin,
                seed_key,
                idempotency_retention: std::time::Duration::from_secs(idempotency_retention_s),
                limits: limits.into(),
                rtp_rounds,
                secure_cookies,
                snapshots: crate::service::Snapshots {
                    every_entries: snapshot_every,
                    interval: std::time::Duration::from_secs(snapshot_interval_s),
                },
                write_deadline: Some(std::time::Duration::from_millis(write_deadline_ms)),
                regulator: regulator.into(),
                witnesses: match witnesses.options() {
                    Ok(w) => w,
                    Err(e) => return fail(e),
                },
                node_url,
                lease: std::time::Duration::from_millis(lease_ms),
                read_database_url,
                log_per_operator,
            };
            match actix_web::rt::System::new().block_on(crate::api::serve(config, set)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => fail(e),
            }
        }
    }
}

/// The witnesses that cosign the log's checkpoints (README, "Witnesses").
#[derive(Debug, Clone, clap::Args)]
pub struct WitnessArgs {
    /// A witness's URL prefix (`https://witness.example` serves `…/add-checkpoint`). Repeat
    /// for more witnesses, each with its `--witness-key`, in the same order.
    #[arg(
        long = "witness-url",
        env = "PITBOSS_WITNESS_URLS",
        value_delimiter = ','
    )]
    witness_urls: Vec<String>,
    /// A witness's verifier key string (`pitboss witness key` prints it).
    #[arg(
        long = "witness-key",
        env = "PITBOSS_WITNESS_VKEYS",
        value_delimiter = ','
    )]
    witness_keys: Vec<String>,
    /// How many distinct witnesses make a checkpoint witnessed (default: all configured);
    /// `GET /v1/audit/checkpoint?witnessed=true` serves the latest such checkpoint.
    #[arg(long, env = "PITBOSS_WITNESS_QUORUM", value_parser = clap::value_parser!(u64).range(1..))]
    witness_quorum: Option<u64>,
    /// Seconds one request to a witness may take; a witness that is down delays its
    /// cosignatures, never a bet.
    #[arg(long, env = "PITBOSS_WITNESS_TIMEOUT_S", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=600))]
    witness_timeout_s: u64,
}

impl WitnessArgs {
    fn options(&self) -> Result<crate::service::witnessing::WitnessOptions, String> {
        let o = crate::service::witnessing::WitnessOptions::from_lists(
            &self.witness_urls,
            &self.witness_keys,
            self.witness_quorum.map(|q| q as usize),
            Some(std::time::Duration::from_secs(self.witness_timeout_s)),
        )?;
        // Checked before the service starts: a misconfigured witness is a startup error.
        crate::service::witnessing::Witnesses::parse(&o)?;
        Ok(o)
    }
}

/// What the regulator's rules ask of a deployment (README, "For regulators").
#[derive(Debug, Clone, clap::Args)]
pub struct RegulatorArgs {
    /// Open a table, and start a round, only on a plan version whose approval by a regulator
    /// is valid at that moment (a production deployment under a licence).
    #[arg(long, env = "PITBOSS_REQUIRE_APPROVAL", value_parser = clap::builder::BoolishValueParser::new())]
    require_approval: bool,
    /// A regulator's note verifier key (`name+id+base64`, from `pitboss plan approval-key`)
    /// whose signed notes approve plan versions offline. Repeat for more keys.
    #[arg(
        long = "regulator-key",
        env = "PITBOSS_REGULATOR_KEYS",
        value_delimiter = ','
    )]
    regulator_keys: Vec<String>,
    /// Open a table only with its registration number and the id of its dealing device
    /// (`registration`, `device`): a production deployment of transmitted live games.
    #[arg(long, env = "PITBOSS_REQUIRE_REGISTRATION", value_parser = clap::builder::BoolishValueParser::new())]
    require_registration: bool,
}

impl From<RegulatorArgs> for crate::service::approval::RegulatorOptions {
    fn from(a: RegulatorArgs) -> Self {
        crate::service::approval::RegulatorOptions {
            require_approval: a.require_approval,
            regulator_keys: a.regulator_keys,
            require_registration: a.require_registration,
        }
    }
}

/// Quotas and throttling (README, "Limits"); a rate of 0 is no limit.
#[derive(Debug, Clone, clap::Args)]
pub struct LimitArgs {
    /// Requests per second one API key may send.
    #[arg(long, env = "PITBOSS_LIMIT_KEY_RPS", default_value_t = crate::limits::Limits::default().key_requests_per_s)]
    limit_key_rps: u32,
    /// Requests per second all keys of one operator may send together.
    #[arg(long, env = "PITBOSS_LIMIT_OPERATOR_RPS", default_value_t = crate::limits::Limits::default().operator_requests_per_s)]
    limit_operator_rps: u32,
    /// Tables one operator may have open at once (0: no limit).
    #[arg(long, env = "PITBOSS_LIMIT_OPEN_TABLES", default_value_t = crate::limits::Limits::default().operator_open_tables)]
    limit_open_tables: u32,
    /// API keys one operator may hold (0: no limit).
    #[arg(long, env = "PITBOSS_LIMIT_KEYS", default_value_t = crate::limits::Limits::default().operator_keys)]
    limit_keys: u32,
    /// Bytes of refusal entries per second one operator may add to the log (burst: 60 s).
    #[arg(long, env = "PITBOSS_LIMIT_REFUSAL_BYTES", default_value_t = crate::limits::Limits::default().operator_refusal_log_bytes_per_s)]
    limit_refusal_bytes: u32,
    /// Failed authentications per minute from one address (IPv6: one /64).
    #[arg(long, env = "PITBOSS_LIMIT_AUTH_FAILURES", default_value_t = crate::limits::Limits::default().source_auth_failures_per_min)]
    limit_auth_failures: u32,
}

impl From<LimitArgs> for crate::limits::Limits {
    fn from(a: LimitArgs) -> Self {
        crate::limits::Limits {
            key_requests_per_s: a.limit_key_rps,
            operator_requests_per_s: a.limit_operator_rps,
            operator_open_tables: a.limit_open_tables,
            operator_keys: a.limit_keys,
            operator_refusal_log_bytes_per_s: a.limit_refusal_bytes,
            source_auth_failures_per_min: a.limit_auth_failures,
        }
    }
}

/// Exit code of `replay` when an entry disagrees with the re-derivation.
const EXIT_DISAGREEMENT: u8 = 3;

fn replay(plans_dir: &Path, export: &Path) -> ExitCode {
    let plans = match load(plans_dir) {
        Ok(set) => set,
        Err(code) => return code,
    };
    let file = match std::fs::File::open(export) {
        Ok(f) => f,
        Err(e) => return fail(format!("{}: {e}", export.display())),
    };
    let reader = std::io::BufReader::with_capacity(1 << 16, file);
    match crate::replay::replay_export(reader, &plans, |d| out!("{d}")) {
        Ok(s) if s.disagreements == 0 => {
            out!(
                "OK {}: {} entries replayed, {} settlements, {} voids, {} refunds re-derived, {} RNG seeds checked against their commitments, {} state snapshots matched",
                s.origin,
                s.entries,
                s.settlements,
                s.voids,
                s.refunds,
                s.seeds_checked,
                s.snapshots_checked
            );
            ExitCode::SUCCESS
        }
        Ok(s) => {
            out!(
                "FAIL {}: {} disagreement(s) in {} entries",
                s.origin,
                s.disagreements,
                s.entries
            );
            ExitCode::from(EXIT_DISAGREEMENT)
        }
        Err(e) => fail(e),
    }
}

/// The daily summary of an export's entries (`pitboss replay --daily-summary`), read line by
/// line.
fn summary(export: &Path, date: chrono::NaiveDate) -> ExitCode {
    use std::io::BufRead;
    let file = match std::fs::File::open(export) {
        Ok(f) => f,
        Err(e) => return fail(format!("{}: {e}", export.display())),
    };
    let mut s = crate::service::summary::Summer::new(date);
    for line in std::io::BufReader::with_capacity(1 << 16, file).lines() {
        let line = match line {
            Ok(l) => l,
            Err(e) => return fail(e),
        };
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else {
            return fail(format!("{}: a line is not JSON", export.display()));
        };
        if v.get("kind").is_some() && v.get("seq").is_some() {
            s.add(&v);
        }
    }
    match serde_json::to_string(&s.finish(None)) {
        Ok(j) => {
            out!("{j}");
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}

fn witness(cmd: WitnessCommand) -> ExitCode {
    match cmd {
        WitnessCommand::Serve {
            bind,
            data_dir,
            name,
            key,
            log_keys,
            logs,
        } => {
            let config = crate::witness::WitnessConfig {
                bind,
                data_dir,
                name,
                key,
                log_keys,
                logs_file: logs,
            };
            match actix_web::rt::System::new().block_on(crate::witness::serve(config)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => fail(e),
            }
        }
        WitnessCommand::Evidence { data_dir, origin } => {
            let path = data_dir.join("witness.sqlite");
            if !path.exists() {
                return fail(format!("{}: no witness store here", path.display()));
            }
            let store = match crate::witness::store::Store::open(&path) {
                Ok(s) => s,
                Err(e) => return fail(e),
            };
            let mut after = 0;
            loop {
                let page = match store.evidence(origin.as_deref(), after, 100) {
                    Ok(p) => p,
                    Err(e) => return fail(e),
                };
                let Some(last) = page.last() else {
                    return ExitCode::SUCCESS;
                };
                after = last.id;
                for e in &page {
                    match serde_json::to_string(e) {
                        Ok(line) => out!("{line}"),
                        Err(e) => return fail(e),
                    }
                }
            }
        }
        WitnessCommand::Key {
            data_dir,
            name,
            key,
        } => match crate::witness::vkey(&data_dir, name.as_deref(), key.as_deref()) {
            Ok(v) => {
                out!("{v}");
                ExitCode::SUCCESS
            }
            Err(e) => fail(e),
        },
    }
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::FAILURE
}

/// What to say when the plans directory is not there: the default is relative to the
/// working directory, so a command run outside the repository finds none.
fn no_plans_dir(dir: &Path) -> String {
    format!(
        "no plan directory at {}: point --plans DIR (or PITBOSS_PLANS) at the directory of plan \
         files, e.g. the repository's game_plans/",
        dir.display()
    )
}

/// Loads the plan directory; errors in any file are printed and make this fail.
fn load(dir: &Path) -> Result<PlanSet, ExitCode> {
    if !dir.is_dir() {
        return Err(fail(no_plans_dir(dir)));
    }
    let (set, report) = PlanSet::load_dir(dir);
    if report.has_errors() {
        for f in report.errors() {
            eprintln!("{f}");
        }
        return Err(fail(format!(
            "{} has plan errors: run `pitboss plan lint {}`",
            dir.display(),
            dir.display()
        )));
    }
    Ok(set)
}

fn lookup<'a>(set: &'a PlanSet, reference: &str) -> Result<&'a LoadedPlan, ExitCode> {
    let r: PlanRef = reference.parse().map_err(fail)?;
    set.get(&r)
        .ok_or_else(|| fail(format!("no plan {r} is loaded (see `pitboss plan list`)")))
}

fn simulate(
    dir: &Path,
    plan: &str,
    rounds: u64,
    seed: &str,
    json: bool,
    exact: bool,
    deal_only: bool,
) -> ExitCode {
    use crate::simulate as sim;
    let set = match load(dir) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let p = match lookup(&set, plan) {
        Ok(p) => &p.plan,
        Err(c) => return c,
    };
    let seed = match sim::parse_seed(seed) {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    if !sim::supported(p.plan.family) {
        return fail(format!(
            "no simulation for {} plans yet ({}): roulette, baccarat, top_card, casino_holdem and blackjack are simulated",
            p.plan.family,
            p.key()
        ));
    }
    if deal_only {
        let start = std::time::Instant::now();
        return match sim::baccarat_deal_only(p, seed, rounds) {
            Ok([player, banker, tie]) => {
                let secs = start.elapsed().as_secs_f64();
                out!(
                    "{} bare coups (deal + outcome): player {player}, banker {banker}, tie {tie}; {:.0} rounds/s",
                    rounds,
                    rounds as f64 / secs
                );
                ExitCode::SUCCESS
            }
            Err(e) => fail(e),
        };
    }
    let exact = if exact {
        match sim::exact_returns(p) {
            Ok(e) => Some(e),
            Err(e) => return fail(e),
        }
    } else {
        None
    };
    let bar = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        indicatif::ProgressBar::new(rounds)
    } else {
        indicatif::ProgressBar::hidden()
    };
    let start = std::time::Instant::now();
    let cpu_start = thread_cpu_seconds();
    let result = sim::simulate(p, seed, rounds, &mut |done| bar.set_position(done));
    let secs = start.elapsed().as_secs_f64();
    let cpu_secs = thread_cpu_seconds()
        .zip(cpu_start)
        .map(|(end, start)| end - start);
    bar.finish_and_clear();
    let s = match result {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let per_second = if secs > 0.0 {
        rounds as f64 / secs
    } else {
        0.0
    };
    if json {
        let mut v = serde_json::to_value(&s).expect("statistics serialise");
        v["seconds"] = serde_json::json!(secs);
        v["rounds_per_second"] = serde_json::json!(per_second);
        if let Some(cpu) = cpu_secs.filter(|c| *c > 0.0) {
            v["cpu_seconds"] = serde_json::json!(cpu);
            v["rounds_per_cpu_second"] = serde_json::json!(rounds as f64 / cpu);
        }
        if let Some(e) = &exact {
            v["exact"] = serde_json::to_value(e).expect("fractions serialise");
        }
        out!(
            "{}",
            serde_json::to_string_pretty(&v).expect("JSON values print")
        );
        return ExitCode::SUCCESS;
    }
    out!(
        "{} — {} rounds from seed {}; {}",
        s.plan,
        s.rounds,
        s.seed,
        s.strategy
    );
    out!(
        "{:<24} {:>10} {:>14} {:>14} {:>10} {:>10} {:>10} {:>12}",
        "BET",
        "ROUNDS",
        "STAKED",
        "RETURNED",
        "RTP",
        "CI95 LOW",
        "CI95 HIGH",
        "LARGEST WIN"
    );
    for b in &s.bets {
        out!(
            "{:<24} {:>10} {:>14} {:>14} {:>10.6} {:>10.6} {:>10.6} {:>12}",
            b.bet,
            b.rounds,
            b.staked_minor,
            b.returned_minor,
            b.rtp,
            b.ci95_low,
            b.ci95_high,
            b.largest_win_minor
        );
    }
    out!("(amounts in minor units)");
    match cpu_secs.filter(|c| *c > 0.0) {
        // On a shared machine the thread's CPU time is the cost on one core; the wall clock
        // also counts the time it waited for one.
        Some(cpu) => out!(
            "{per_second:.0} rounds/s ({secs:.3} s wall); {:.0} rounds per CPU-second on one core ({cpu:.3} s)",
            rounds as f64 / cpu
        ),
        None => out!("{per_second:.0} rounds/s ({secs:.3} s)"),
    }
    if let Some(e) = &exact {
        if e.is_empty() {
            out!("\nNo exact return for {} plans", s.family);
        } else {
            out!("\nExact return");
        }
        for r in e {
            out!("{:<24} {:>12} {}", r.bet, r.decimal, r.fraction);
        }
    }
    ExitCode::SUCCESS
}

/// The CPU time the calling thread has run, in seconds: the first field of Linux's
/// `/proc/thread-self/schedstat` (nanoseconds on a CPU). `None` where there is no such file.
fn thread_cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}
