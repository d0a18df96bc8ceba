//! The `pitboss` command line.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::money::format_minor;

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
use crate::plan::diff::diff;
use crate::plan::registry::{load_file, PlanSet};
use crate::plan::{canonical, LoadedPlan, PlanRef};

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
        /// The audit log's origin (first line of every checkpoint).
        #[arg(long, default_value = "pitboss/audit", env = "PITBOSS_LOG_ORIGIN")]
        origin: String,
        /// Rounds of each simulated return to player the console shows, computed once per
        /// plan content in the background (Casino Hold'em plays a tenth); 0 computes none.
        #[arg(long, default_value_t = 10_000_000, env = "PITBOSS_RTP_ROUNDS")]
        rtp_rounds: u64,
        /// Give the console's cookies `Secure` even over plain HTTP (behind a TLS proxy that
        /// does not say `X-Forwarded-Proto: https`).
        #[arg(long, env = "PITBOSS_SECURE_COOKIES")]
        secure_cookies: bool,
    },
    /// Print the OpenAPI description of the HTTP API (committed as openapi/openapi.json).
    Openapi,
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
    /// Apply pending database migrations and exit.
    Migrate {
        #[arg(long, default_value = "data", env = "PITBOSS_DATA_DIR")]
        data_dir: PathBuf,
        #[arg(long, env = "DATABASE_URL")]
        database_url: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum PlanCommand {
    /// Check plan files (a directory or one file); exits non-zero on any error.
    ///
    /// Also computes every bet type's return to player (as `plan rtp` does) and warns
    /// (`rtp_out_of_band`) where it is below 85 % or at or above 100 %, or where a simulated
    /// figure's 95 % interval reaches past either bound.
    Lint {
        /// A plan directory or a single plan file (default: the plans directory).
        path: Option<PathBuf>,
        /// Rounds per simulated return (Casino Hold'em plays a tenth); 0 checks only the
        /// exact returns.
        #[arg(long, default_value_t = 1_000_000)]
        rtp_rounds: u64,
    },
    /// The return to player of every bet type of a plan, with its method: exact by
    /// enumeration where the engine settles every outcome, otherwise simulated with its 95 %
    /// interval and the strategy played (the figures the console shows).
    Rtp {
        /// `ID` (latest version) or `ID@VERSION`.
        plan: String,
        /// Rounds per simulated return (Casino Hold'em plays a tenth); 0 computes only the
        /// exact returns.
        #[arg(long, default_value_t = 1_000_000)]
        rounds: u64,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// List loaded plans with their versions and content hashes.
    List,
    /// Show one plan: its limits and payout tables, rules, policies and assumptions.
    Show {
        /// `ID` (latest version) or `ID@VERSION`.
        plan: String,
        /// Print the whole normalised plan as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print a plan's content hash (SHA-256 of its RFC 8785 canonical form).
    Hash { plan: String },
    /// List the fields that differ between two plans (`ID@1 ID@2`).
    Diff {
        a: String,
        b: String,
        /// Print the changes as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print the JSON Schema of the plan file format.
    Schema,
    /// List each family's bet types and their outcome classes (the ids a plan may use).
    Vocabulary,
}

pub fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Plan(cmd) => plan(&cli.plans, cmd),
        Command::Openapi => {
            // Already ends with a newline: the committed file is exactly this output.
            out!(
                "{}",
                crate::api::openapi::openapi_json_text().trim_end_matches('\n')
            );
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
            match crate::store::migrate(&url) {
                Ok(n) => {
                    out!("{n} migration(s) applied");
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
            rtp_rounds,
            secure_cookies,
        } => {
            // A service never starts on plans with errors: it would enforce rules nobody approved.
            let set = match load(&cli.plans) {
                Ok(set) => set,
                Err(code) => return code,
            };
            if set.is_empty() {
                return fail(format!("no plans in {}", cli.plans.display()));
            }
            let config = crate::api::ServeConfig {
                bind,
                plans_dir: cli.plans.clone(),
                data_dir,
                database_url,
                signing_key,
                admin_key,
                origin,
                rtp_rounds,
                secure_cookies,
            };
            match actix_web::rt::System::new().block_on(crate::api::serve(config, set)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => fail(e),
            }
        }
    }
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::FAILURE
}

/// Loads the plan directory; errors in any file are printed and make this fail.
fn load(dir: &Path) -> Result<PlanSet, ExitCode> {
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

fn plan(dir: &Path, cmd: PlanCommand) -> ExitCode {
    match cmd {
        PlanCommand::Lint { path, rtp_rounds } => lint(path.as_deref().unwrap_or(dir), rtp_rounds),
        PlanCommand::Rtp { plan, rounds, json } => {
            let set = match load(dir) {
                Ok(s) => s,
                Err(c) => return c,
            };
            let p = match lookup(&set, &plan) {
                Ok(p) => p,
                Err(c) => return c,
            };
            let report = crate::rtp::compute(&p.plan, &p.hash, &crate::rtp::RtpConfig { rounds });
            if json {
                out!(
                    "{}",
                    serde_json::to_string_pretty(&report).expect("reports serialise")
                );
            } else {
                out!("{}", render_rtp(&p.plan, &report).trim_end());
            }
            ExitCode::SUCCESS
        }
        PlanCommand::List => match load(dir) {
            Ok(set) => {
                out!(
                    "{:<40} {:<14} {:<12} {:<10} SHA-256",
                    "PLAN",
                    "FAMILY",
                    "STUDIO",
                    "EFFECTIVE"
                );
                for p in set.iter() {
                    out!(
                        "{:<40} {:<14} {:<12} {:<10} {}",
                        p.key(),
                        p.plan.plan.family,
                        p.plan.plan.studio,
                        p.plan.plan.effective_from,
                        p.hash
                    );
                }
                ExitCode::SUCCESS
            }
            Err(code) => code,
        },
        PlanCommand::Show { plan, json } => {
            let set = match load(dir) {
                Ok(s) => s,
                Err(c) => return c,
            };
            let p = match lookup(&set, &plan) {
                Ok(p) => p,
                Err(c) => return c,
            };
            if json {
                let v = canonical::normalised(&p.plan);
                out!(
                    "{}",
                    serde_json::to_string_pretty(&v).expect("JSON values print")
                );
            } else {
                out!("{}", render_text(p).trim_end());
            }
            ExitCode::SUCCESS
        }
        PlanCommand::Hash { plan } => {
            let set = match load(dir) {
                Ok(s) => s,
                Err(c) => return c,
            };
            match lookup(&set, &plan) {
                Ok(p) => {
                    out!("{}  {}", p.hash, p.key());
                    ExitCode::SUCCESS
                }
                Err(c) => c,
            }
        }
        PlanCommand::Diff { a, b, json } => {
            let set = match load(dir) {
                Ok(s) => s,
                Err(c) => return c,
            };
            let (pa, pb) = match (lookup(&set, &a), lookup(&set, &b)) {
                (Ok(x), Ok(y)) => (x, y),
                (Err(c), _) | (_, Err(c)) => return c,
            };
            let changes = diff(&pa.plan, &pb.plan);
            if json {
                out!(
                    "{}",
                    serde_json::to_string_pretty(&changes).expect("JSON values print")
                );
            } else {
                out!(
                    "{} → {}: {} changed field(s)",
                    pa.key(),
                    pb.key(),
                    changes.len()
                );
                for c in &changes {
                    out!("{c}");
                }
            }
            ExitCode::SUCCESS
        }
        PlanCommand::Vocabulary => {
            for family in crate::plan::rules::Family::ALL {
                let specs = family.bet_specs();
                if specs.is_empty() {
                    out!("{family}: played between players, no house bet types");
                    continue;
                }
                out!("{family}:");
                for spec in specs {
                    out!("  {:<28} {}", spec.id, spec.summary);
                    out!("  {:<28} outcomes: {}", "", spec.outcomes.join(", "));
                }
            }
            ExitCode::SUCCESS
        }
        PlanCommand::Schema => {
            let schema = schemars::schema_for!(crate::plan::Plan);
            out!(
                "{}",
                serde_json::to_string_pretty(&schema).expect("JSON values print")
            );
            ExitCode::SUCCESS
        }
    }
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

/// The RTP warnings of one loaded plan, printed; returns how many.
fn lint_rtp(p: &LoadedPlan, rounds: u64) -> usize {
    let report = crate::rtp::compute(&p.plan, &p.hash, &crate::rtp::RtpConfig { rounds });
    let found = crate::rtp::findings(&p.plan, &p.file, &report);
    for f in &found {
        eprintln!("{f}");
    }
    found.len()
}

fn lint(path: &Path, rtp_rounds: u64) -> ExitCode {
    let findings = if path.is_dir() {
        let (set, report) = PlanSet::load_dir(path);
        for f in &report.findings {
            eprintln!("{f}");
        }
        let (errors, warnings) = (report.errors().count(), report.warnings().count());
        let rtp: usize = set.iter().map(|p| lint_rtp(p, rtp_rounds)).sum();
        out!(
            "{}: {} plan(s) loaded, {errors} error(s), {} warning(s) ({rtp} on returns to player)",
            path.display(),
            set.len(),
            warnings + rtp
        );
        errors
    } else {
        let sources = path.parent().map(|d| d.join("sources"));
        let findings = match load_file(path, sources.as_deref()) {
            Ok(loaded) => {
                out!(
                    "{}: {} loaded, hash {}",
                    path.display(),
                    loaded.key(),
                    loaded.hash
                );
                lint_rtp(&loaded, rtp_rounds);
                loaded.warnings
            }
            Err(findings) => findings,
        };
        for f in &findings {
            eprintln!("{f}");
        }
        findings
            .iter()
            .filter(|f| f.severity == crate::plan::load::Severity::Error)
            .count()
    };
    if findings == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// A plan's returns to player as a table: bet, figure, method, and the notes below.
fn render_rtp(plan: &crate::plan::model::Plan, report: &crate::rtp::RtpReport) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} — return to player ({} rounds per simulated figure, seed {})",
        report.plan, report.rounds, report.seed
    );
    for row in &report.rows {
        let flag = crate::rtp::out_of_band(row)
            .map(|w| format!("  FLAGGED: {w}"))
            .unwrap_or_default();
        let figure = match row.method {
            crate::rtp::Method::Exact | crate::rtp::Method::Simulated => crate::rtp::figure(row),
            crate::rtp::Method::CountedWith => "counted with the main bet".into(),
            crate::rtp::Method::NotApplicable => "not applicable".into(),
            crate::rtp::Method::Unavailable => "not computed".into(),
        };
        let _ = writeln!(s, "  {:<24} {figure}{flag}", row.bet);
        if let Some(n) = &row.note {
            let _ = writeln!(s, "  {:<24}   {n}", "");
        }
    }
    let strategies: std::collections::BTreeSet<&str> = report
        .rows
        .iter()
        .filter_map(|r| r.strategy.as_deref())
        .collect();
    for st in strategies {
        let _ = writeln!(s, "\nStrategy: {st}");
    }
    for f in crate::rtp::flags(plan, report) {
        for a in f.assumptions {
            let _ = writeln!(s, "\n{} rests on {}: {}", f.row.bet, a.field, a.reason);
        }
    }
    s
}

/// A plan as a reviewer reads it: the document's tables as tables.
pub fn render_text(p: &LoadedPlan) -> String {
    use std::fmt::Write;
    let plan = &p.plan;
    let exp = plan.plan.currency.exponent();
    let cur = plan.plan.currency.code();
    let mut s = String::new();
    let id = &plan.plan;
    let _ = writeln!(s, "{} — {}", p.key(), id.title);
    let _ = writeln!(s, "  operator   {}", id.operator);
    let _ = writeln!(s, "  studio     {}", id.studio);
    let _ = writeln!(s, "  family     {}", id.family);
    let _ = writeln!(s, "  currency   {cur} (amounts below in {cur})");
    let _ = writeln!(s, "  effective  {}", id.effective_from);
    // The names as the plan file writes them (`half_up`, `live`).
    let name = |v: serde_json::Value| v.as_str().map(str::to_string).unwrap_or_default();
    let _ = writeln!(s, "  rounding   {}", name(serde_json::json!(id.rounding)));
    let modes: Vec<String> = id
        .modes
        .iter()
        .map(|m| name(serde_json::json!(m)))
        .collect();
    let _ = writeln!(s, "  modes      {}", modes.join(", "));
    let _ = writeln!(
        s,
        "  source     {} § {}",
        plan.source.document, plan.source.section
    );
    let _ = writeln!(s, "  sha-256    {}", p.hash);
    if !plan.bets.is_empty() {
        let _ = writeln!(
            s,
            "\nLimits (\"Tabulka nejvyšších sázek a odvislých nejvyšších výher\")"
        );
        let _ = writeln!(
            s,
            "  {:<24} {:>16} {:>16} {:>18} {:>20}  label",
            "bet", "min bet", "max bet", "max win", "max win + stake"
        );
        for b in &plan.bets {
            let assumed = if plan
                .assumption(&format!("bets[{}].min_bet", b.id))
                .is_some()
            {
                "*"
            } else {
                " "
            };
            let _ = writeln!(
                s,
                "  {:<24} {:>15}{assumed} {:>16} {:>18} {:>20}  {}",
                b.id,
                format_minor(b.min_bet, exp),
                format_minor(b.max_bet, exp),
                format_minor(b.max_win, exp),
                format_minor(b.max_win_plus_stake, exp),
                b.label
            );
        }
        let _ = writeln!(s, "  (* an assumption: see below)");
        let _ = writeln!(s, "\nPayouts");
        let _ = writeln!(s, "  {:<24} {:<24} {:>10}  label", "bet", "outcome", "pays");
        for pay in &plan.payouts {
            let pays = match (pay.ratio, pay.refund) {
                (Some(r), _) => format!("{}:{}", r.numerator(), r.denominator()),
                (None, Some(r)) => format!("back {}/{}", r.numerator(), r.denominator()),
                (None, None) => "-".into(),
            };
            let _ = writeln!(
                s,
                "  {:<24} {:<24} {:>10}  {}",
                pay.bet,
                pay.outcome,
                pays,
                pay.label.as_deref().unwrap_or("")
            );
        }
    }
    let mut rules = toml::Table::new();
    rules.insert(
        "rules".into(),
        toml::Value::try_from(&plan.rules).expect("rules serialise to TOML"),
    );
    rules.insert(
        "policies".into(),
        toml::Value::try_from(&plan.policies).expect("policies serialise to TOML"),
    );
    let _ = writeln!(
        s,
        "\n{}",
        toml::to_string_pretty(&rules)
            .expect("rules serialise to TOML")
            .trim_end()
    );
    if !plan.assumptions.is_empty() {
        let _ = writeln!(s, "\nAssumptions (values the document does not give)");
        for a in &plan.assumptions {
            let _ = writeln!(s, "  {}\n      {}", a.field, a.reason);
        }
    }
    if !plan.document_inconsistencies.is_empty() {
        let _ = writeln!(
            s,
            "\nDocument inconsistencies (kept as the document states them)"
        );
        for n in &plan.document_inconsistencies {
            let _ = writeln!(s, "  {}\n      {}", n.field, n.note);
        }
    }
    s
}
