//! `pitboss plan …`: what a regulator and a plan author run.
//!
//! A plan is named on the command line as `ID`, `ID@VERSION` (from the plans directory) or by
//! the path of a plan file, which is read and linted on its own: a candidate is reviewed and
//! diffed against the approved plan whatever else the directory holds. Reading one plan by id
//! from a directory where other files fail lint still works, with a warning; `serve` and
//! `lint` stay strict.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Subcommand;
use serde_json::{json, Value};

use super::{fail, render};
use crate::plan::diff::diff;
use crate::plan::registry::{load_file, LoadReport, PlanSet};
use crate::plan::{canonical, LoadedPlan, PlanRef};

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
        /// `ID` (latest version), `ID@VERSION`, or the path of a plan file.
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
    List {
        /// Print the list as JSON.
        #[arg(long)]
        json: bool,
        /// Also show each version's approval status, as the service's log at this database
        /// records it (`postgres://…` or a SQLite file, e.g. `data/pitboss.sqlite`).
        #[arg(long)]
        database_url: Option<String>,
    },
    /// Sign an approval of a plan version offline, as a regulator: prints a C2SP signed note
    /// over the plan's content hash that `POST /v1/plan-approvals/note` records (the service
    /// knows the key from `serve --regulator-key`, see `plan approval-key`).
    Approve {
        /// `ID@VERSION` or the path of a plan file: its content hash is what is approved.
        plan: String,
        /// The regulator's Ed25519 key, PKCS#8 PEM (created, mode 0600, if absent).
        #[arg(long)]
        key: PathBuf,
        /// The key's name in the note, e.g. `mf.gov.cz/plan-approvals`.
        #[arg(long)]
        name: String,
        /// The approval's reference (the regulator's file number).
        #[arg(long)]
        reference: String,
        /// Valid from (RFC 3339, e.g. `2026-12-01T00:00:00Z`).
        #[arg(long)]
        valid_from: String,
        /// Valid until, exclusive (RFC 3339); default: until withdrawn.
        #[arg(long)]
        valid_until: Option<String>,
    },
    /// Print a regulator key's verifier key string (`name+id+base64`) for `serve
    /// --regulator-key`, creating the key (mode 0600) if absent.
    ApprovalKey {
        #[arg(long)]
        key: PathBuf,
        #[arg(long)]
        name: String,
    },
    /// Show one plan: its limits and payout tables, rules, policies and assumptions.
    Show {
        /// `ID` (latest version), `ID@VERSION`, or the path of a plan file.
        plan: String,
        /// Print the whole normalised plan as JSON (amounts in minor units).
        #[arg(long)]
        json: bool,
    },
    /// Print a plan's content hash (SHA-256 of its RFC 8785 canonical form).
    Hash {
        /// `ID` (latest version), `ID@VERSION`, or the path of a plan file.
        plan: String,
    },
    /// List the fields that differ between two plans; exits 0 when they are the same, 1 when
    /// they differ, 2 on an error (as diff(1) does).
    Diff {
        /// The plan compared from: `ID`, `ID@VERSION` or the path of a plan file.
        a: String,
        /// The plan compared to: `ID`, `ID@VERSION` or the path of a plan file.
        b: String,
        /// Print the changes as JSON (amounts in minor units, with the written form beside).
        #[arg(long)]
        json: bool,
    },
    /// Print the JSON Schema of the plan file format.
    Schema,
    /// List each family's bet types and their outcome classes (the ids a plan may use).
    Vocabulary,
}

/// `plan diff`'s exit status on an error, as diff(1): 1 means "they differ".
const DIFF_TROUBLE: u8 = 2;

/// The plans directory, loaded at most once per command.
struct Plans<'a> {
    dir: &'a Path,
    loaded: Option<(PlanSet, LoadReport)>,
    warned: bool,
}

impl<'a> Plans<'a> {
    fn new(dir: &'a Path) -> Plans<'a> {
        Plans {
            dir,
            loaded: None,
            warned: false,
        }
    }

    fn load(&mut self) -> &(PlanSet, LoadReport) {
        self.loaded
            .get_or_insert_with(|| PlanSet::load_dir(self.dir))
    }

    /// Whether `arg` names a file rather than a plan id: ids never hold a path separator or
    /// end in `.toml`.
    fn is_path(arg: &str) -> bool {
        arg.ends_with(".toml") || arg.contains('/') || arg.contains(std::path::MAIN_SEPARATOR)
    }

    /// The plan `arg` names. On failure, what to print (the findings were printed already).
    fn get(&mut self, arg: &str) -> Result<LoadedPlan, String> {
        if Self::is_path(arg) {
            return self.file(Path::new(arg));
        }
        let r: PlanRef = arg.parse().map_err(|e| format!("{e}"))?;
        if !self.dir.is_dir() {
            return Err(super::no_plans_dir(self.dir));
        }
        let dir = self.dir.display().to_string();
        let warned = self.warned;
        let (set, report) = self.load();
        match set.get(&r) {
            Some(p) => {
                let p = p.clone();
                let failing = failing_files(report);
                if !failing.is_empty() && !warned {
                    eprintln!(
                        "warning: {} other file(s) in {dir} fail lint and are not loaded ({}); \
                         run `pitboss plan lint {dir}`",
                        failing.len(),
                        failing.join(", ")
                    );
                    self.warned = true;
                }
                Ok(p)
            }
            None if report.has_errors() => {
                for f in report.errors() {
                    eprintln!("{f}");
                }
                Err(format!(
                    "no plan {r} is loaded; {dir} has files that fail lint (above): fix them, or \
                     name the plan's file instead"
                ))
            }
            None => Err(format!("no plan {r} is loaded (see `pitboss plan list`)")),
        }
    }

    /// A plan file read and linted on its own, against the source documents next to it
    /// (`sources/` beside the file) or else those of the plans directory.
    fn file_checked(&self, file: &Path) -> Result<LoadedPlan, Vec<crate::plan::load::Finding>> {
        let beside = file.parent().map(|d| d.join("sources"));
        let sources = match beside {
            Some(d) if d.is_dir() => d,
            _ => self.dir.join("sources"),
        };
        load_file(file, Some(&sources))
    }

    /// As [`Plans::file_checked`], the findings printed.
    fn file(&self, file: &Path) -> Result<LoadedPlan, String> {
        self.file_checked(file).map_err(|findings| {
            for f in &findings {
                eprintln!("{f}");
            }
            format!(
                "{} fails lint (above): run `pitboss plan lint {}`",
                file.display(),
                file.display()
            )
        })
    }
}

/// The files of a directory load that failed, for a warning.
fn failing_files(report: &LoadReport) -> Vec<String> {
    let mut files: Vec<String> = report
        .errors()
        .map(|f| f.file.display().to_string())
        .collect();
    files.sort();
    files.dedup();
    files
}

pub fn run(dir: &Path, cmd: PlanCommand) -> ExitCode {
    match cmd {
        PlanCommand::Lint { path, rtp_rounds } => {
            lint(path.as_deref().unwrap_or(dir), dir, rtp_rounds)
        }
        PlanCommand::Rtp { plan, rounds, json } => {
            let p = match Plans::new(dir).get(&plan) {
                Ok(p) => p,
                Err(e) => return fail(e),
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
        PlanCommand::List { json, database_url } => list(dir, json, database_url.as_deref()),
        PlanCommand::Approve {
            plan,
            key,
            name,
            reference,
            valid_from,
            valid_until,
        } => {
            let p = match Plans::new(dir).get(&plan) {
                Ok(p) => p,
                Err(e) => return fail(e),
            };
            let when = |s: &str| {
                chrono::DateTime::parse_from_rfc3339(s)
                    .map(|d| d.with_timezone(&chrono::Utc))
                    .map_err(|e| format!("{s:?} is not an RFC 3339 time: {e}"))
            };
            let request = match (
                when(&valid_from),
                valid_until.as_deref().map(when).transpose(),
            ) {
                (Ok(from), Ok(until)) => crate::service::approval::ApprovalRequest {
                    plan: p.key(),
                    sha256: p.hash.clone(),
                    reference,
                    valid_from: from,
                    valid_until: until,
                },
                (Err(e), _) | (_, Err(e)) => return fail(e),
            };
            match regulator_signer(&key, &name) {
                Ok(signer) => {
                    out!("{}", request.sign(&signer).trim_end());
                    ExitCode::SUCCESS
                }
                Err(e) => fail(e),
            }
        }
        PlanCommand::ApprovalKey { key, name } => match regulator_signer(&key, &name) {
            Ok(signer) => {
                out!("{}", signer.verifier().to_vkey());
                ExitCode::SUCCESS
            }
            Err(e) => fail(e),
        },
        PlanCommand::Show { plan, json } => {
            let p = match Plans::new(dir).get(&plan) {
                Ok(p) => p,
                Err(e) => return fail(e),
            };
            if json {
                let v = canonical::normalised(&p.plan);
                out!(
                    "{}",
                    serde_json::to_string_pretty(&v).expect("JSON values print")
                );
            } else {
                out!("{}", render::plan_text(&p).trim_end());
            }
            ExitCode::SUCCESS
        }
        PlanCommand::Hash { plan } => match Plans::new(dir).get(&plan) {
            Ok(p) => {
                out!("{}  {}", p.hash, p.key());
                ExitCode::SUCCESS
            }
            Err(e) => fail(e),
        },
        PlanCommand::Diff { a, b, json } => plan_diff(dir, &a, &b, json),
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

fn plan_diff(dir: &Path, a: &str, b: &str, json: bool) -> ExitCode {
    let mut plans = Plans::new(dir);
    let (pa, pb) = match (plans.get(a), plans.get(b)) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            return ExitCode::from(DIFF_TROUBLE);
        }
    };
    let changes = diff(&pa.plan, &pb.plan);
    let (from, to) = (pa.plan.plan.currency, pb.plan.plan.currency);
    if json {
        let doc = json!({
            "from": pa.key(),
            "to": pb.key(),
            "changes": changes
                .iter()
                .map(|c| render::change_json(c, from, to))
                .collect::<Vec<Value>>(),
        });
        out!(
            "{}",
            serde_json::to_string_pretty(&doc).expect("JSON values print")
        );
    } else {
        out!(
            "{} → {}: {} changed field(s)",
            pa.key(),
            pb.key(),
            changes.len()
        );
        for c in &changes {
            out!("{}", render::change_line(c, from, to));
        }
    }
    if changes.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// A regulator's note signer from its key file (created if absent).
fn regulator_signer(key: &Path, name: &str) -> Result<pitboss_audit::note::NoteSigner, String> {
    let k = crate::keyfile::load_or_create(key).map_err(|e| e.to_string())?;
    pitboss_audit::note::NoteSigner::new(name, k).map_err(|e| format!("key name {name:?}: {e}"))
}

fn list(dir: &Path, json: bool, database_url: Option<&str>) -> ExitCode {
    let approvals = match database_url {
        None => None,
        Some(url) => {
            match crate::service::approval::stored(&crate::store::DatabaseUrl::parse(url)) {
                Ok(a) => Some(a),
                Err(e) => return fail(e),
            }
        }
    };
    let now = chrono::Utc::now();
    let status = |hash: &str| {
        approvals.as_ref().map(|a| {
            crate::round::regulator::status_of(a.values(), hash, now)
                .0
                .as_str()
        })
    };
    let (set, report) = PlanSet::load_dir(dir);
    let failing = failing_files(&report);
    for f in report.errors() {
        eprintln!("{f}");
    }
    if json {
        let rows: Vec<Value> = set
            .iter()
            .map(|p| {
                let id = &p.plan.plan;
                json!({
                    "plan": p.key(),
                    "id": id.id.to_string(),
                    "version": id.version,
                    "title": id.title,
                    "family": id.family,
                    "operator": id.operator,
                    "studio": id.studio,
                    "currency": id.currency,
                    "effective_from": id.effective_from,
                    "modes": id.modes,
                    "sha256": p.hash,
                    "file": p.file.display().to_string(),
                    "approval": status(&p.hash),
                })
            })
            .collect();
        out!(
            "{}",
            serde_json::to_string_pretty(&rows).expect("JSON values print")
        );
    } else {
        let rows: Vec<Vec<String>> = set
            .iter()
            .map(|p| {
                let id = &p.plan.plan;
                let mut row = vec![
                    p.key(),
                    id.family.to_string(),
                    id.studio.clone(),
                    id.effective_from.to_string(),
                ];
                row.extend(status(&p.hash).map(str::to_string));
                row.push(p.hash.clone());
                row
            })
            .collect();
        let mut header: Vec<String> = ["PLAN", "FAMILY", "STUDIO", "EFFECTIVE"]
            .map(String::from)
            .to_vec();
        if approvals.is_some() {
            header.push("APPROVAL".into());
        }
        header.push("SHA-256".into());
        let mut widths = vec![0usize; header.len()];
        for row in std::iter::once(&header).chain(&rows) {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        for row in std::iter::once(&header).chain(&rows) {
            let mut line = String::new();
            for (i, (cell, w)) in row.iter().zip(widths.iter().copied()).enumerate() {
                if i + 1 == row.len() {
                    line.push_str(cell);
                } else {
                    // `{:<w$}` pads by chars, which is what a terminal shows for these names.
                    line.push_str(&format!("{cell:<w$}  "));
                }
            }
            out!("{line}");
        }
    }
    if failing.is_empty() {
        ExitCode::SUCCESS
    } else {
        fail(format!(
            "{} file(s) in {} fail lint and are not listed ({}): run `pitboss plan lint {}`",
            failing.len(),
            dir.display(),
            failing.join(", "),
            dir.display()
        ))
    }
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

fn lint(path: &Path, dir: &Path, rtp_rounds: u64) -> ExitCode {
    if !path.exists() {
        return fail(if path == dir {
            super::no_plans_dir(dir)
        } else {
            format!("no such file or directory: {}", path.display())
        });
    }
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
        let findings = match Plans::new(dir).file_checked(path) {
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
