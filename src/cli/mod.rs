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
    /// Apply pending database migrations and exit.
    Migrate {
        #[arg(long, default_value = "data", env = "PITBOSS_DATA_DIR")]
        data_dir: PathBuf,
        #[arg(long, env = "DATABASE_URL")]
        database_url: Option<String>,
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
        } => {
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
