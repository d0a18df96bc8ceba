//! The plan format: malformed plans are refused with the named error, the content hash ignores
//! formatting, a reused `id@version` is refused, and diff lists exactly the changed fields.

use std::path::{Path, PathBuf};
use std::process::Command;

use pitboss::plan::diff::diff;
use pitboss::plan::load::{Finding, Severity};
use pitboss::plan::registry::{load_file, PlanSet, RegistryError};

use crate::source::{all_plans, plans_dir};

const EXAMPLE: &str = "evolution-roulette@1";

fn example_text() -> String {
    std::fs::read_to_string(plans_dir().join(format!("{EXAMPLE}.toml"))).expect("example plan")
}

/// Writes `text` as `name` into a fresh directory that shares the real source documents.
fn write_plan(dir: &Path, name: &str, text: &str) -> PathBuf {
    let sources = dir.join("sources");
    if !sources.exists() {
        std::fs::create_dir_all(&sources).unwrap();
        for entry in std::fs::read_dir(plans_dir().join("sources")).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), sources.join(entry.file_name())).unwrap();
        }
    }
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Loads `text` (a variant of the example) and returns its findings.
fn findings_of(text: &str) -> Vec<Finding> {
    let dir = tempfile::tempdir().unwrap();
    let file = write_plan(dir.path(), &format!("{EXAMPLE}.toml"), text);
    match load_file(&file, Some(&dir.path().join("sources"))) {
        Ok(loaded) => loaded.warnings,
        Err(findings) => findings,
    }
}

fn assert_error(text: &str, code: &str, path: &str) {
    let findings = findings_of(text);
    assert!(
        findings
            .iter()
            .any(|f| f.severity == Severity::Error && f.code == code && f.path == path),
        "expected error {code} at {path:?}, got:\n{}",
        findings
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    );
}

fn replace_once(text: &str, from: &str, to: &str) -> String {
    assert!(
        text.contains(from),
        "example plan no longer contains {from:?}"
    );
    text.replacen(from, to, 1)
}

#[test]
fn the_example_plan_loads_without_findings() {
    let findings = findings_of(&example_text());
    assert!(findings.is_empty(), "{findings:?}");
}

#[test]
fn a_missing_field_is_named_with_its_path() {
    let text = replace_once(&example_text(), "max_win = 35_000_000 ", "");
    let findings = findings_of(&text);
    let f = &findings[0];
    assert_eq!((f.code, f.path.as_str()), ("missing_field", "bets[0]"));
    assert!(f.message.contains("max_win"), "{}", f.message);
    assert!(f.line.is_some(), "the line of the table is reported");
}

#[test]
fn a_zero_ratio_is_refused() {
    let text = replace_once(&example_text(), "ratio = \"35:1\"", "ratio = \"0:1\"");
    assert_error(&text, "invalid_value", "payouts[0].ratio");
}

#[test]
fn a_negative_ratio_is_refused() {
    let text = replace_once(&example_text(), "ratio = \"35:1\"", "ratio = \"-35:1\"");
    assert_error(&text, "invalid_value", "payouts[0].ratio");
}

#[test]
fn a_payout_for_an_undeclared_bet_type_is_refused() {
    let text = replace_once(
        &example_text(),
        "bet = \"straight\"\noutcome",
        "bet = \"streight\"\noutcome",
    );
    assert_error(&text, "unknown_bet_type", "payouts[streight/win].bet");
}

#[test]
fn a_bet_type_outside_the_familys_vocabulary_is_refused() {
    let text = replace_once(&example_text(), "id = \"straight\"", "id = \"en_plein\"");
    assert_error(&text, "unknown_bet_type", "bets[en_plein].id");
}

#[test]
fn an_outcome_outside_the_bet_types_vocabulary_is_refused() {
    let text = replace_once(
        &example_text(),
        "outcome = \"win\"",
        "outcome = \"jackpot\"",
    );
    assert_error(
        &text,
        "unknown_outcome",
        "payouts[straight/jackpot].outcome",
    );
}

#[test]
fn an_unknown_or_malformed_currency_is_refused() {
    for bad in ["XYZ", "czk", "Kč"] {
        let text = replace_once(
            &example_text(),
            "currency = \"CZK\"",
            &format!("currency = \"{bad}\""),
        );
        assert_error(&text, "invalid_value", "plan.currency");
    }
}

#[test]
fn a_max_win_inconsistent_with_the_ratio_is_an_error() {
    let text = replace_once(
        &example_text(),
        "max_win = 35_000_000",
        "max_win = 36_000_000",
    );
    assert_error(&text, "max_win_inconsistent", "bets[straight].max_win");
}

#[test]
fn an_acknowledged_document_inconsistency_is_a_warning_not_an_error() {
    let mut text = replace_once(
        &example_text(),
        "max_win = 35_000_000",
        "max_win = 36_000_000",
    );
    text = replace_once(
        &text,
        "max_win_plus_stake = 36_000_000",
        "max_win_plus_stake = 37_000_000",
    );
    text.push_str(
        "\n[[document_inconsistencies]]\nfield = \"bets[straight].max_win\"\nnote = \"test\"\n",
    );
    let findings = findings_of(&text);
    assert!(
        findings.iter().all(|f| f.severity == Severity::Warning),
        "{findings:?}"
    );
    assert!(findings
        .iter()
        .any(|f| f.code == "document_inconsistent" && f.path == "bets[straight].max_win"));
}

#[test]
fn max_win_plus_stake_must_add_up() {
    let text = replace_once(
        &example_text(),
        "max_win_plus_stake = 36_000_000",
        "max_win_plus_stake = 36_000_100",
    );
    assert_error(
        &text,
        "max_win_inconsistent",
        "bets[straight].max_win_plus_stake",
    );
}

#[test]
fn a_misspelt_field_is_refused_not_ignored() {
    let text = replace_once(
        &example_text(),
        "max_bet = 1_000_000",
        "max_bett = 1_000_000",
    );
    let findings = findings_of(&text);
    assert_eq!(findings[0].code, "unknown_field", "{findings:?}");
    assert_eq!(findings[0].path, "bets[0].max_bett");
}

#[test]
fn a_value_the_document_does_not_give_must_be_recorded_as_an_assumption() {
    let text = replace_once(
        &example_text(),
        "[[assumptions]]\nfield = \"bets[split].min_bet\"\nreason = \"As bets[straight].min_bet.\"\n",
        "",
    );
    assert_error(&text, "unstated_assumption", "bets[split].min_bet");
}

#[test]
fn an_assumption_about_a_field_that_does_not_exist_is_refused() {
    let mut text = example_text();
    text.push_str("\n[[assumptions]]\nfield = \"bets[straight].max_lose\"\nreason = \"x\"\n");
    let index = text.matches("[[assumptions]]").count() - 1;
    assert_error(
        &text,
        "assumption_without_field",
        &format!("assumptions[{index}].field"),
    );
}

#[test]
fn a_payout_with_both_ratio_and_refund_is_refused() {
    let text = replace_once(
        &example_text(),
        "ratio = \"35:1\"",
        "ratio = \"35:1\"\nrefund = \"1/1\"",
    );
    assert_error(&text, "ratio_and_refund", "payouts[straight/win]");
}

#[test]
fn a_minimum_above_the_maximum_is_refused() {
    let text = replace_once(&example_text(), "min_bet = 100", "min_bet = 2_000_000");
    assert_error(&text, "bad_limit", "bets[straight].min_bet");
}

#[test]
fn a_citation_of_another_text_of_the_document_is_refused() {
    let text = replace_once(
        &example_text(),
        "5509a1814ab07d034e77ab1a6add831d6c2ba60ddf5e17621c59039d259449aa",
        "0000000000000000000000000000000000000000000000000000000000000000",
    );
    assert_error(&text, "document_hash_mismatch", "source.document_sha256");
}

#[test]
fn a_file_must_be_named_after_its_identity() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_plan(dir.path(), "roulette.toml", &example_text());
    let findings = load_file(&file, None).unwrap_err();
    assert!(findings.iter().any(|f| f.code == "file_name_mismatch"));
}

#[test]
fn the_same_id_and_version_with_other_content_is_refused() {
    let original = crate::source::plan(EXAMPLE);
    let dir = tempfile::tempdir().unwrap();
    let changed_text = replace_once(&example_text(), "min_bet = 100", "min_bet = 200");
    let file = write_plan(dir.path(), &format!("{EXAMPLE}.toml"), &changed_text);
    let changed = load_file(&file, Some(&dir.path().join("sources"))).unwrap();
    let mut set = PlanSet::new();
    set.insert(original.clone()).unwrap();
    // The same content again is harmless.
    set.insert(original.clone()).unwrap();
    match set.insert(changed) {
        Err(RegistryError::VersionReused { key, .. }) => assert_eq!(key, EXAMPLE),
        other => panic!("expected VersionReused, got {other:?}"),
    }
    assert_eq!(set.len(), 1);
}

#[test]
fn the_hash_ignores_formatting_comments_and_key_order() {
    let original = crate::source::plan(EXAMPLE);
    // Same content: comments stripped, keys of each table reversed, [[bets]] blocks reversed.
    let value: toml::Table = toml::from_str(&example_text()).unwrap();
    let mut reordered = toml::Table::new();
    for (k, v) in value.iter().rev() {
        let v = match (k.as_str(), v) {
            ("bets", toml::Value::Array(items)) => {
                toml::Value::Array(items.iter().rev().cloned().collect())
            }
            _ => v.clone(),
        };
        reordered.insert(k.clone(), v);
    }
    let text = toml::to_string_pretty(&reordered).unwrap();
    assert_ne!(text, example_text());
    let dir = tempfile::tempdir().unwrap();
    let file = write_plan(dir.path(), &format!("{EXAMPLE}.toml"), &text);
    let again = load_file(&file, Some(&dir.path().join("sources"))).unwrap();
    assert_eq!(again.hash, original.hash);

    // Any change of a value changes it.
    let changed = replace_once(&example_text(), "min_bet = 100", "min_bet = 101");
    let file = write_plan(dir.path(), &format!("{EXAMPLE}.toml"), &changed);
    let other = load_file(&file, Some(&dir.path().join("sources"))).unwrap();
    assert_ne!(other.hash, original.hash);
}

#[test]
fn the_canonical_hash_of_a_frozen_plan_is_pinned() {
    // tests/fixtures/ holds a frozen copy of a plan. Its hash changes only when the canonical
    // form changes, which changes every loaded plan's identity: such a change must be
    // deliberate, and this value updated with it.
    // (Updated once with the fixture itself when the format came to require
    // `policies.timing.interrupted_round_ms` of every game played in rounds.)
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let frozen = load_file(
        &fixtures.join(format!("{EXAMPLE}.toml")),
        Some(&plans_dir().join("sources")),
    )
    .expect("the frozen plan loads");
    assert_eq!(
        frozen.hash,
        "4a9e4dd7280d7f06e8394c7ac47612df2b0394f6cb1fb42f374271a31c434c58"
    );
}

#[test]
fn diff_reports_exactly_the_changed_fields() {
    let v1 = crate::source::plan(EXAMPLE);
    let mut text = replace_once(&example_text(), "version = 1", "version = 2");
    text = replace_once(&text, "max_bet = 1_000_000 ", "max_bet = 2_000_000 ");
    text = replace_once(&text, "max_win = 35_000_000 ", "max_win = 70_000_000 ");
    text = replace_once(
        &text,
        "max_win_plus_stake = 36_000_000 ",
        "max_win_plus_stake = 72_000_000 ",
    );
    text = replace_once(
        &text,
        "min_ball_revolutions = 3",
        "min_ball_revolutions = 4",
    );
    let dir = tempfile::tempdir().unwrap();
    let file = write_plan(dir.path(), "evolution-roulette@2.toml", &text);
    let v2 = load_file(&file, Some(&dir.path().join("sources"))).unwrap();
    let changes = diff(&v1.plan, &v2.plan);
    let paths: Vec<&str> = changes.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "bets[straight].max_bet",
            "bets[straight].max_win",
            "bets[straight].max_win_plus_stake",
            "plan.version",
            "rules.roulette.valid_spin.min_ball_revolutions",
        ]
    );
    assert_eq!(changes[0].before, Some(serde_json::json!(1_000_000)));
    assert_eq!(changes[0].after, Some(serde_json::json!(2_000_000)));
    assert!(diff(&v1.plan, &v1.plan).is_empty());
}

#[test]
fn diff_names_a_changed_ratio_as_one_value() {
    let v1 = crate::source::plan(EXAMPLE);
    let text = replace_once(&example_text(), "ratio = \"17:1\"", "ratio = \"16:1\"");
    let text = replace_once(&text, "max_win = 34_000_000 ", "max_win = 32_000_000 ");
    let text = replace_once(&text, "max_win_plus_stake = 36_000_000  # 360 000,00 Kč\nclause = \"Tabulka nejvyšších sázek a odvislých nejvyšších výher\"\n\n[[bets]]\nid = \"street\"", "max_win_plus_stake = 34_000_000\nclause = \"Tabulka nejvyšších sázek a odvislých nejvyšších výher\"\n\n[[bets]]\nid = \"street\"");
    let dir = tempfile::tempdir().unwrap();
    let file = write_plan(dir.path(), &format!("{EXAMPLE}.toml"), &text);
    let v2 = load_file(&file, Some(&dir.path().join("sources"))).unwrap();
    let changes = diff(&v1.plan, &v2.plan);
    let ratio = changes
        .iter()
        .find(|c| c.path == "payouts[split/win].ratio")
        .expect("ratio change");
    assert_eq!(ratio.to_string(), "~ payouts[split/win].ratio: {\"denominator\":1,\"numerator\":17} → {\"denominator\":1,\"numerator\":16}");
}

#[test]
fn the_committed_json_schema_matches_the_plan_types() {
    let generated =
        serde_json::to_string_pretty(&schemars::schema_for!(pitboss::plan::Plan)).unwrap() + "\n";
    let committed = std::fs::read_to_string(plans_dir().join("schema.json")).unwrap_or_default();
    assert!(
        committed == generated,
        "game_plans/schema.json is stale: run `cargo run -- plan schema > game_plans/schema.json`"
    );
}

#[test]
fn every_game_of_the_documents_has_a_plan() {
    let set = all_plans();
    let from_002 = set
        .iter()
        .filter(|p| p.plan.source.document == crate::source::LIVE_GAMES)
        .count();
    assert_eq!(from_002, 14, "one plan per game of 002");
    for doc in [
        "000_d0d13f40c060e066.txt",
        "001_cfac103a917a9392.txt",
        "003_610210d2e255b80d.txt",
        "004_7d953d4795365800.txt",
    ] {
        assert!(
            set.iter().any(|p| p.plan.source.document == doc),
            "no plan from {doc}"
        );
    }
    assert!(set.len() >= 18);
    for heading in crate::source::HEADINGS_002 {
        assert!(
            set.iter().any(|p| p.plan.source.section == *heading),
            "no plan for {heading:?}"
        );
    }
}

fn pitboss() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pitboss"))
}

#[test]
fn lint_exits_zero_on_the_committed_plans_and_nonzero_on_a_broken_one() {
    // Returns to player are flagged by their own test (tests/it/console.rs).
    let ok = pitboss()
        .args(["plan", "lint", "--rtp-rounds", "0"])
        .arg(plans_dir())
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(String::from_utf8_lossy(&ok.stdout).contains("0 error(s)"));

    let dir = tempfile::tempdir().unwrap();
    write_plan(dir.path(), &format!("{EXAMPLE}.toml"), &example_text());
    let broken = replace_once(&example_text(), "ratio = \"35:1\"", "ratio = \"0:1\"")
        .replace("id = \"evolution-roulette\"", "id = \"broken-roulette\"");
    write_plan(dir.path(), "broken-roulette@1.toml", &broken);
    let out = pitboss()
        .args(["plan", "lint", "--rtp-rounds", "0"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("broken-roulette@1.toml"), "{stderr}");
    assert!(stderr.contains("payouts[0].ratio"), "{stderr}");
}

#[test]
fn show_json_prints_limits_in_minor_units_and_ratios_as_fractions() {
    let out = pitboss()
        .args(["--plans"])
        .arg(plans_dir())
        .args(["plan", "show", EXAMPLE, "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let straight = v["bets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["id"] == "straight")
        .unwrap();
    assert_eq!(straight["max_bet"], 1_000_000);
    assert_eq!(straight["max_win"], 35_000_000);
    let row = v["payouts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["bet"] == "straight")
        .unwrap();
    assert_eq!(
        row["ratio"],
        serde_json::json!({"numerator": 35, "denominator": 1})
    );
}

#[test]
fn hash_and_diff_commands_name_plans_by_id_and_version() {
    let out = pitboss()
        .args(["--plans"])
        .arg(plans_dir())
        .args(["plan", "hash", EXAMPLE])
        .output()
        .unwrap();
    assert!(out.status.success());
    let expected = crate::source::plan(EXAMPLE).hash;
    assert!(String::from_utf8_lossy(&out.stdout).starts_with(&expected));

    let out = pitboss()
        .args(["--plans"])
        .arg(plans_dir())
        .args(["plan", "show", "no-such-plan"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no plan no-such-plan"));

    let out = pitboss()
        .args(["--plans"])
        .arg(plans_dir())
        .args(["plan", "diff", EXAMPLE, EXAMPLE])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("0 changed field(s)"));
}

/// A game played in rounds says how long a round may stay paused or unfinished before its
/// error policy voids it (issue 20), as an assumption, within 1 ms to 30 days; a game
/// between players has no rounds and gives none.
#[test]
fn the_interrupted_round_deadline_is_required_assumed_and_bounded() {
    let line = "interrupted_round_ms = 1_800_000";
    let path = "policies.timing.interrupted_round_ms";
    let without = example_text()
        .lines()
        .filter(|l| !l.starts_with(line))
        .collect::<Vec<_>>()
        .join("\n");
    assert_error(&without, "no_interrupted_round_deadline", path);
    assert_error(
        &replace_once(&example_text(), line, "interrupted_round_ms = 0"),
        "bad_timing",
        path,
    );
    assert_error(
        &replace_once(
            &example_text(),
            line,
            "interrupted_round_ms = 2_592_000_001",
        ),
        "bad_timing",
        path,
    );
    let unassumed = replace_once(
        &example_text(),
        "field = \"policies.timing.interrupted_round_ms\"",
        "field = \"plan.title\"",
    );
    assert_error(&unassumed, "unstated_assumption", path);

    let oko = std::fs::read_to_string(plans_dir().join("oko-bere@1.toml")).expect("oko bere");
    let oko = replace_once(
        &oko,
        "betting_window_ms = 20_000\n",
        "betting_window_ms = 20_000\ninterrupted_round_ms = 60_000\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let file = write_plan(dir.path(), "oko-bere@1.toml", &oko);
    let findings = load_file(&file, Some(&dir.path().join("sources"))).unwrap_err();
    assert!(
        findings
            .iter()
            .any(|f| f.code == "not_applicable" && f.path == path),
        "{findings:?}"
    );
}
