//! Checks beyond the schema: a plan must be consistent with itself and with its family's
//! vocabulary, and every contradiction inside the source document must be acknowledged.
//!
//! Lint never fixes anything. Where the document is inconsistent the plan keeps what the
//! document says, lists the place under `document_inconsistencies`, and lint reports it as a
//! warning on every run; an unacknowledged inconsistency is an error.

use std::collections::{BTreeSet, HashSet};
use std::path::Path;

use sha2::{Digest, Sha256};

use super::canonical::{hex, normalised};
use super::load::{Finding, Severity};
use super::model::{Plan, FORMAT_VERSION};
use super::path::resolve;
use crate::money::format_minor;

/// Largest amount a plan may state: canonical JSON keeps integers exact only up to 2^53.
pub const MAX_AMOUNT_MINOR: i64 = (1 << 53) - 1;

struct Sink<'a> {
    file: &'a Path,
    out: Vec<Finding>,
}

impl Sink<'_> {
    fn push(
        &mut self,
        severity: Severity,
        code: &'static str,
        path: impl Into<String>,
        message: impl Into<String>,
    ) {
        self.out.push(Finding {
            severity,
            code,
            file: self.file.to_path_buf(),
            line: None,
            path: path.into(),
            message: message.into(),
        });
    }
    fn error(&mut self, code: &'static str, path: impl Into<String>, message: impl Into<String>) {
        self.push(Severity::Error, code, path, message);
    }
    fn warn(&mut self, code: &'static str, path: impl Into<String>, message: impl Into<String>) {
        self.push(Severity::Warning, code, path, message);
    }
}

/// Lints a parsed plan read from `file`. `sources_dir`, when given, is where the source
/// documents are kept; the plan's `document_sha256` is checked against the file there.
pub fn lint(plan: &Plan, file: &Path, sources_dir: Option<&Path>) -> Vec<Finding> {
    let mut s = Sink {
        file,
        out: Vec::new(),
    };
    identity(plan, &mut s);
    source(plan, sources_dir, &mut s);
    bets_and_payouts(plan, &mut s);
    limits_consistency(plan, &mut s);
    annotations(plan, &mut s);
    for (path, message) in plan.rules.lint() {
        s.error("rule_inconsistent", path, message);
    }
    for (path, message) in plan.rules.lint_against_plan(plan) {
        s.error("rule_inconsistent", path, message);
    }
    s.out
}

fn identity(plan: &Plan, s: &mut Sink) {
    if plan.format != FORMAT_VERSION {
        s.error(
            "unsupported_format",
            "format",
            format!(
                "plan file format {} is not supported; this build reads format {FORMAT_VERSION}",
                plan.format
            ),
        );
    }
    let id = &plan.plan;
    if id.version == 0 {
        s.error("bad_version", "plan.version", "versions start at 1");
    }
    if id.family != plan.rules.family() {
        s.error(
            "family_mismatch",
            "plan.family",
            format!(
                "plan.family is '{}' but the rules are under [rules.{}]",
                id.family,
                plan.rules.family()
            ),
        );
    }
    if id.modes.is_empty() {
        s.error(
            "no_modes",
            "plan.modes",
            "a plan allows at least one mode (live, rng)",
        );
    }
    let mut seen = HashSet::new();
    for m in &id.modes {
        if !seen.insert(m) {
            s.error("duplicate", "plan.modes", format!("mode {m} listed twice"));
        }
    }
    for (path, value) in [
        ("plan.title", &id.title),
        ("plan.operator", &id.operator),
        ("plan.studio", &id.studio),
    ] {
        if value.trim().is_empty() {
            s.error("empty", path, "must not be empty");
        }
    }
}

fn source(plan: &Plan, sources_dir: Option<&Path>, s: &mut Sink) {
    let src = &plan.source;
    let sha = &src.document_sha256;
    if sha.len() != 64
        || !sha
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        s.error(
            "bad_document_hash",
            "source.document_sha256",
            "must be 64 lower-case hex digits",
        );
        return;
    }
    if src.document.contains(['/', '\\']) || src.document.starts_with('.') {
        s.error(
            "bad_document_name",
            "source.document",
            "a bare file name under game_plans/sources/",
        );
        return;
    }
    let Some(dir) = sources_dir else { return };
    match std::fs::read(dir.join(&src.document)) {
        Ok(bytes) => {
            let actual = hex(&Sha256::digest(&bytes));
            if &actual != sha {
                s.error(
                    "document_hash_mismatch",
                    "source.document_sha256",
                    format!(
                        "{} has SHA-256 {actual}, the plan cites {sha}",
                        src.document
                    ),
                );
            }
        }
        Err(_) => s.warn(
            "document_missing",
            "source.document",
            format!(
                "{} is not in {}: the citation cannot be checked",
                src.document,
                dir.display()
            ),
        ),
    }
}

fn bets_and_payouts(plan: &Plan, s: &mut Sink) {
    let family = plan.plan.family;
    if !family.house_banked() {
        if !plan.bets.is_empty() {
            s.error("bets_in_player_game", "bets", format!("{family} is played between players: its stakes belong in [rules.{family}], not in [[bets]]"));
        }
        if !plan.payouts.is_empty() {
            s.error(
                "bets_in_player_game",
                "payouts",
                format!("{family} is played between players and has no payout table"),
            );
        }
        return;
    }
    if plan.bets.is_empty() {
        s.error(
            "no_bets",
            "bets",
            "a house-banked game needs its bet types and limits",
        );
    }
    let mut ids = HashSet::new();
    for b in &plan.bets {
        let p = format!("bets[{}]", b.id);
        if !ids.insert(b.id.as_str()) {
            s.error("duplicate_bet_type", &p, "bet type declared twice");
        }
        if family.bet_spec(&b.id).is_none() {
            let known: Vec<&str> = family.bet_specs().iter().map(|s| s.id).collect();
            s.error(
                "unknown_bet_type",
                format!("{p}.id"),
                format!(
                    "'{}' is not a {family} bet type (known: {})",
                    b.id,
                    known.join(", ")
                ),
            );
        }
        for (field, v) in [
            ("min_bet", b.min_bet),
            ("max_bet", b.max_bet),
            ("max_win", b.max_win),
            ("max_win_plus_stake", b.max_win_plus_stake),
        ] {
            if v < 0 {
                s.error(
                    "negative_amount",
                    format!("{p}.{field}"),
                    "amounts are never negative",
                );
            } else if v > MAX_AMOUNT_MINOR {
                s.error(
                    "amount_too_large",
                    format!("{p}.{field}"),
                    "amounts must stay within 2^53 − 1 minor units",
                );
            }
        }
        if b.min_bet <= 0 {
            s.error(
                "bad_limit",
                format!("{p}.min_bet"),
                "the minimum bet must be at least one minor unit",
            );
        }
        if b.min_bet > b.max_bet {
            s.error(
                "bad_limit",
                format!("{p}.min_bet"),
                format!(
                    "minimum bet {} exceeds maximum bet {}",
                    b.min_bet, b.max_bet
                ),
            );
        }
        for r in &b.requires {
            if !plan.bets.iter().any(|o| &o.id == r) || r == &b.id {
                s.error(
                    "unknown_bet_type",
                    format!("{p}.requires"),
                    format!("'{r}' is not another bet type of this plan"),
                );
            }
        }
        if b.label.trim().is_empty() {
            s.error(
                "empty",
                format!("{p}.label"),
                "the document's name of the bet is required",
            );
        }
    }
    let mut rows = HashSet::new();
    for pay in &plan.payouts {
        let p = format!("payouts[{}/{}]", pay.bet, pay.outcome);
        if !rows.insert((pay.bet.as_str(), pay.outcome.as_str())) {
            s.error("duplicate_payout", &p, "payout row given twice");
        }
        if plan.bet(&pay.bet).is_none() {
            s.error(
                "unknown_bet_type",
                format!("{p}.bet"),
                format!(
                    "payout for '{}', which is not a bet type declared in [[bets]]",
                    pay.bet
                ),
            );
            continue;
        }
        if let Some(spec) = family.bet_spec(&pay.bet) {
            if !spec.outcomes.contains(&pay.outcome.as_str()) {
                s.error(
                    "unknown_outcome",
                    format!("{p}.outcome"),
                    format!(
                        "'{}' is not an outcome of {} (known: {})",
                        pay.outcome,
                        pay.bet,
                        spec.outcomes.join(", ")
                    ),
                );
            }
        }
        match (pay.ratio, pay.refund) {
            (Some(_), Some(_)) => s.error(
                "ratio_and_refund",
                &p,
                "give either a ratio (a win) or a refund (a share of the stake returned), not both",
            ),
            (None, None) => s.error(
                "no_ratio",
                &p,
                "give a ratio (a win) or a refund (a share of the stake returned)",
            ),
            (None, Some(r)) if r.numerator() > r.denominator() => s.error(
                "refund_above_stake",
                format!("{p}.refund"),
                format!("a refund of {r} returns more than the stake"),
            ),
            _ => {}
        }
    }
    for b in &plan.bets {
        if plan.best_ratio(&b.id).is_none() {
            s.error(
                "bet_without_payout",
                format!("bets[{}]", b.id),
                "bet type has limits but no winning payout row",
            );
        }
    }
}

fn limits_consistency(plan: &Plan, s: &mut Sink) {
    let acknowledged: BTreeSet<&str> = plan
        .document_inconsistencies
        .iter()
        .map(|i| i.field.as_str())
        .collect();
    let check = |s: &mut Sink, path: String, consistent: bool, message: String| {
        if consistent {
            if acknowledged.contains(path.as_str()) {
                s.warn(
                    "inconsistency_not_found",
                    &path,
                    "listed under document_inconsistencies, but the value is consistent",
                );
            }
        } else if let Some(note) = plan
            .document_inconsistencies
            .iter()
            .find(|i| i.field == path)
        {
            s.warn(
                "document_inconsistent",
                &path,
                format!("{message} (kept as the document states it: {})", note.note),
            );
        } else {
            s.error("max_win_inconsistent", &path, format!("{message}; if the document itself says so, list it under [[document_inconsistencies]]"));
        }
    };
    // Amounts in messages as the document writes them (200 000,00 CZK), not in minor units.
    let exp = plan.plan.currency.exponent();
    let cur = plan.plan.currency.code();
    let amount = |minor: i64| format!("{} {cur}", format_minor(minor, exp));
    for b in &plan.bets {
        let Some(best) = plan.best_ratio(&b.id) else {
            continue;
        };
        let Some(expected) = best.apply(b.max_bet, plan.plan.rounding) else {
            s.error(
                "amount_too_large",
                format!("bets[{}].max_bet", b.id),
                "maximum bet × best ratio overflows",
            );
            continue;
        };
        check(
            s,
            format!("bets[{}].max_win", b.id),
            b.max_win == expected,
            format!(
                "maximum win {} is not maximum bet {} × best ratio {best} = {}",
                amount(b.max_win),
                amount(b.max_bet),
                amount(expected)
            ),
        );
        check(
            s,
            format!("bets[{}].max_win_plus_stake", b.id),
            b.max_win.checked_add(b.max_bet) == Some(b.max_win_plus_stake),
            format!(
                "maximum win + stake {} is not maximum win {} + maximum bet {}",
                amount(b.max_win_plus_stake),
                amount(b.max_win),
                amount(b.max_bet)
            ),
        );
    }
}

/// `bets[…].max_win` and `bets[…].max_win_plus_stake`: the fields limits_consistency checks.
fn is_limit_path(field: &str) -> bool {
    field.starts_with("bets[")
        && (field.ends_with("].max_win") || field.ends_with("].max_win_plus_stake"))
}

fn annotations(plan: &Plan, s: &mut Sink) {
    let root = normalised(plan);
    let mut seen = HashSet::new();
    for (i, a) in plan.assumptions.iter().enumerate() {
        if !seen.insert(a.field.as_str()) {
            s.error(
                "duplicate_assumption",
                format!("assumptions[{i}]"),
                format!("'{}' has two assumptions", a.field),
            );
        }
        if resolve(&root, &a.field).is_none() {
            s.error(
                "assumption_without_field",
                format!("assumptions[{i}].field"),
                format!("'{}' is not a field of this plan", a.field),
            );
        }
        if a.reason.trim().is_empty() {
            s.error(
                "empty",
                format!("assumptions[{i}].reason"),
                "an assumption states its reason",
            );
        }
    }
    for (i, n) in plan.document_inconsistencies.iter().enumerate() {
        if resolve(&root, &n.field).is_none() {
            s.error(
                "inconsistency_without_field",
                format!("document_inconsistencies[{i}].field"),
                format!("'{}' is not a field of this plan", n.field),
            );
        } else if !is_limit_path(&n.field) {
            // Limit fields are reported by limits_consistency; every other acknowledged
            // contradiction is reported here, on every run.
            s.warn(
                "document_inconsistent",
                &n.field,
                format!("kept as the document states it: {}", n.note),
            );
        }
    }
    // The documents give no minimum bets and no time limits: such values can only be
    // assumptions, and a regulator must see them as such.
    let mut must_be_assumed: Vec<String> = plan
        .bets
        .iter()
        .map(|b| format!("bets[{}].min_bet", b.id))
        .collect();
    must_be_assumed.push("policies.timing.betting_window_ms".into());
    if plan.policies.timing.decision_ms.is_some() {
        must_be_assumed.push("policies.timing.decision_ms".into());
    }
    if interrupted_round(plan, s) {
        must_be_assumed.push("policies.timing.interrupted_round_ms".into());
    }
    // A ratio or refund that is not whole (0.95:1, 3:2, 1/2) can leave a fraction of a minor
    // unit; the documents never say how it is rounded.
    let fractional = plan
        .payouts
        .iter()
        .filter_map(|p| p.ratio.or(p.refund))
        .any(|r| r.denominator() != 1);
    if fractional {
        must_be_assumed.push("plan.rounding".into());
    }
    for f in must_be_assumed {
        if plan.assumption(&f).is_none() {
            s.error("unstated_assumption", &f, "the document does not give this value: record it under [[assumptions]] with its reason");
        }
    }
}

/// Longest `policies.timing.interrupted_round_ms`: 30 days, the longest a settlement's payout
/// may wait (002 § 9(1)); a stake held longer is held without a meaningful limit.
pub const MAX_INTERRUPTED_ROUND_MS: u64 = 30 * 24 * 3600 * 1000;

/// A game played in rounds says how long a round may stay paused or unfinished before the
/// error policy voids it (issue 20: the players' stakes are never held without limit); a game
/// played between players has no rounds and gives no such time. Whether the plan gives it.
fn interrupted_round(plan: &Plan, s: &mut Sink) -> bool {
    const PATH: &str = "policies.timing.interrupted_round_ms";
    let given = plan.policies.timing.interrupted_round_ms;
    match (plan.plan.family.house_banked(), given) {
        (true, None) => s.error(
            "no_interrupted_round_deadline",
            PATH,
            "a game played in rounds says how long a round may stay paused or unfinished before its error policy voids it and returns the stakes",
        ),
        (false, Some(_)) => s.error(
            "not_applicable",
            PATH,
            format!(
                "{} is played between players and has no rounds: it gives no interrupted-round deadline",
                plan.plan.family
            ),
        ),
        (true, Some(ms)) if ms == 0 || ms > MAX_INTERRUPTED_ROUND_MS => s.error(
            "bad_timing",
            PATH,
            format!("from 1 ms to {MAX_INTERRUPTED_ROUND_MS} ms (30 days)"),
        ),
        _ => {}
    }
    given.is_some()
}
