//! The regulator's command line: `plan diff` exit codes and amounts as the document writes
//! them, `plan show` sections, `plan list` columns and JSON, reading a candidate file whatever
//! else the directory holds, shell completions, and `serve` without a plan directory.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use crate::source::plans_dir;

const APPROVED: &str = "evolution-roulette@1";

fn pitboss(plans: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pitboss"))
        .arg("--plans")
        .arg(plans)
        .args(args)
        .env_remove("PITBOSS_PLANS")
        .output()
        .expect("run pitboss")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn approved_text() -> String {
    std::fs::read_to_string(plans_dir().join(format!("{APPROVED}.toml"))).expect("plan file")
}

/// A plan directory holding the approved plan, its source documents, and a file that fails
/// lint.
fn directory_with_a_broken_plan() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let sources = dir.path().join("sources");
    std::fs::create_dir_all(&sources).expect("sources");
    for entry in std::fs::read_dir(plans_dir().join("sources")).expect("sources") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), sources.join(entry.file_name())).expect("copy");
    }
    std::fs::write(dir.path().join(format!("{APPROVED}.toml")), approved_text()).expect("write");
    let broken = approved_text()
        .replacen("ratio = \"35:1\"", "ratio = \"0:1\"", 1)
        .replace("id = \"evolution-roulette\"", "id = \"broken-roulette\"");
    std::fs::write(dir.path().join("broken-roulette@1.toml"), broken).expect("write");
    dir
}

/// The approved plan as version 2 with lower dozen limits, in a directory of its own.
fn candidate() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let text = approved_text()
        .replacen("version = 1", "version = 2", 1)
        .replacen(
            "max_bet = 12_000_000             # 120 000,00 Kč\nmax_win = 24_000_000             # 240 000,00 Kč\nmax_win_plus_stake = 36_000_000",
            "max_bet = 6_500_000\nmax_win = 13_000_000\nmax_win_plus_stake = 19_500_000",
            1,
        );
    assert!(text.contains("max_bet = 6_500_000"), "the dozen row moved");
    let file = dir.path().join("evolution-roulette@2.toml");
    std::fs::write(&file, text).expect("write");
    (dir, file)
}

#[test]
fn plan_diff_exits_0_when_same_1_when_different_and_2_on_an_error() {
    let plans = plans_dir();
    let same = pitboss(&plans, &["plan", "diff", APPROVED, APPROVED]);
    assert_eq!(same.status.code(), Some(0), "{}", stderr(&same));
    assert!(stdout(&same).contains("0 changed field(s)"));

    let differ = pitboss(&plans, &["plan", "diff", APPROVED, "synot-roulette@1"]);
    assert_eq!(differ.status.code(), Some(1), "{}", stderr(&differ));
    let text = stdout(&differ);
    assert!(
        text.contains("~ bets[column].max_bet: 120 000 Kč → 65 000 Kč"),
        "amounts as the document writes them:\n{text}"
    );
    assert!(
        !text.contains("12000000"),
        "no minor units in the text:\n{text}"
    );

    let json = pitboss(
        &plans,
        &["plan", "diff", APPROVED, "synot-roulette@1", "--json"],
    );
    assert_eq!(json.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&json.stdout).expect("JSON");
    assert_eq!(
        (v["from"].as_str(), v["to"].as_str()),
        (Some(APPROVED), Some("synot-roulette@1"))
    );
    let column = v["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .find(|c| c["path"] == "bets[column].max_bet")
        .expect("the column's max bet changed");
    assert_eq!(column["before"], 12_000_000, "minor units in --json");
    assert_eq!(column["after"], 6_500_000);
    assert_eq!(column["before_text"], "120 000 Kč");
    assert_eq!(column["after_text"], "65 000 Kč");
    let clause = v["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .find(|c| c["path"] == "plan.studio")
        .expect("the studio changed");
    assert!(
        clause.get("before_text").is_none(),
        "text only for amounts: {clause}"
    );

    for bad in [["nope@1", APPROVED], [APPROVED, "not a plan ref"]] {
        let o = pitboss(&plans, &["plan", "diff", bad[0], bad[1]]);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", stderr(&o));
        assert!(stderr(&o).starts_with("error: "), "{}", stderr(&o));
    }
    let missing = pitboss(&plans, &["plan", "diff", APPROVED, "/no/such/plan@1.toml"]);
    assert_eq!(missing.status.code(), Some(2), "{}", stderr(&missing));
}

#[test]
fn a_candidate_file_is_diffed_against_the_approved_plan_whatever_else_fails_lint() {
    let dir = directory_with_a_broken_plan();
    let (_cand_dir, cand) = candidate();
    let cand = cand.to_str().expect("UTF-8 path");

    // The directory as a whole does not load: `serve` and `lint` refuse it.
    let lint = pitboss(dir.path(), &["plan", "lint"]);
    assert!(!lint.status.success());

    let o = pitboss(dir.path(), &["plan", "diff", APPROVED, cand]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("evolution-roulette@1 → evolution-roulette@2"),
        "{text}"
    );
    assert!(text.contains("~ plan.version: 1 → 2"), "{text}");
    assert!(
        text.contains("~ bets[dozen].max_win: 240 000 Kč → 130 000 Kč"),
        "{text}"
    );
    assert!(
        stderr(&o).contains("broken-roulette@1.toml"),
        "the failing file is named in a warning: {}",
        stderr(&o)
    );

    // By id from that directory, and by file.
    let show = pitboss(dir.path(), &["plan", "show", APPROVED]);
    assert!(show.status.success(), "{}", stderr(&show));
    assert!(stdout(&show).starts_with("evolution-roulette@1 — "));
    let show = pitboss(dir.path(), &["plan", "show", cand]);
    assert!(show.status.success(), "{}", stderr(&show));
    assert!(stdout(&show).starts_with("evolution-roulette@2 — "));
    let hash = pitboss(dir.path(), &["plan", "hash", cand]);
    assert!(hash.status.success(), "{}", stderr(&hash));
    assert!(stdout(&hash).trim_end().ends_with("  evolution-roulette@2"));

    // The failing plan itself is not shown: its findings are.
    let broken = dir.path().join("broken-roulette@1.toml");
    let o = pitboss(
        dir.path(),
        &["plan", "show", broken.to_str().expect("UTF-8")],
    );
    assert!(!o.status.success());
    assert!(stderr(&o).contains("payouts[0].ratio"), "{}", stderr(&o));
    let o = pitboss(dir.path(), &["plan", "show", "broken-roulette@1"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("fail lint"), "{}", stderr(&o));
}

#[test]
fn plan_show_renders_rules_and_policies_as_labelled_sections() {
    let o = pitboss(&plans_dir(), &["plan", "show", "synot-roulette@1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    for line in [
        "Rules (roulette)  (§ Základní informace; Racetrack)",
        "  valid spin  (§ Pravidlo platného roztočení rulety)",
        "    min ball revolutions   3",
        "    - tier — Tier  (§ Racetrack)",
        "        - bet split · numbers 5, 8 · units 1",
        "Policies",
        "  error  (§ Řešení chyb)",
        "    cancel scope                  some or all players",
        "    betting window     15 s*",
        "    interrupted round  1800 s*",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "no line {line:?} in\n{text}"
        );
    }
    // No TOML: no table headers, no `key = value`, no arrays spread over lines.
    for toml in ["[rules", "[policies", "clause = ", "[[", " = "] {
        assert!(!text.contains(toml), "{toml:?} in\n{text}");
    }

    let poker = stdout(&pitboss(
        &plans_dir(),
        &["plan", "show", "c40-poker-holdem-cash@1"],
    ));
    assert!(
        poker
            .lines()
            .any(|l| l == "    big                    20 Kč*"),
        "{poker}"
    );
    assert!(
        poker
            .lines()
            .any(|l| l == "    min                    2 000 Kč*"),
        "{poker}"
    );
}

#[test]
fn plan_list_aligns_its_columns_and_prints_json() {
    let o = pitboss(&plans_dir(), &["plan", "list"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() > 18, "{text}");
    let header: Vec<char> = lines[0].chars().collect();
    for name in ["FAMILY", "STUDIO", "EFFECTIVE", "SHA-256"] {
        let at = lines[0].find(name).expect("a header column");
        let col = lines[0][..at].chars().count();
        assert_eq!(header[col - 1], ' ');
        for l in &lines[1..] {
            let cells: Vec<char> = l.chars().collect();
            assert!(
                cells[col] != ' ' && cells[col - 1] == ' ',
                "{name} does not start at its header's column in {l:?}"
            );
        }
    }

    let o = pitboss(&plans_dir(), &["plan", "list", "--json"]);
    assert!(o.status.success());
    let rows: Vec<Value> = serde_json::from_slice(&o.stdout).expect("JSON");
    let approved = crate::source::plan(APPROVED);
    let row = rows
        .iter()
        .find(|r| r["plan"] == APPROVED)
        .expect("the plan is listed");
    assert_eq!(row["sha256"], approved.hash.as_str());
    assert_eq!(row["id"], "evolution-roulette");
    assert_eq!(row["version"], 1);
    assert_eq!(row["family"], "roulette");
    assert_eq!(row["currency"], "CZK");
    assert_eq!(rows.len(), lines.len() - 1);

    // A directory with a failing file lists what loads and exits non-zero.
    let dir = directory_with_a_broken_plan();
    let o = pitboss(dir.path(), &["plan", "list"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains(APPROVED));
    assert!(
        stderr(&o).contains("broken-roulette@1.toml"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn completions_are_printed_for_each_shell() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = pitboss(&plans_dir(), &["completions", shell]);
        assert!(o.status.success(), "{shell}: {}", stderr(&o));
        let text = stdout(&o);
        assert!(
            text.contains("pitboss") && text.contains("diff") && text.contains("plans"),
            "{shell}: {text}"
        );
    }
    let o = pitboss(&plans_dir(), &["completions", "tcsh"]);
    assert!(!o.status.success());
}

#[test]
fn serve_without_a_plan_directory_names_the_flag_that_gives_one() {
    let empty = tempfile::tempdir().expect("temp dir");
    let data = tempfile::tempdir().expect("temp dir");
    let o = Command::new(env!("CARGO_BIN_EXE_pitboss"))
        .current_dir(empty.path())
        .env_remove("PITBOSS_PLANS")
        .args(["serve", "--bind", "127.0.0.1:0", "--data-dir"])
        .arg(data.path())
        .output()
        .expect("run pitboss");
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("--plans") && err.contains("PITBOSS_PLANS") && err.contains("game_plans"),
        "{err}"
    );
    // A directory without plan files says the same.
    let o = Command::new(env!("CARGO_BIN_EXE_pitboss"))
        .args(["serve", "--bind", "127.0.0.1:0", "--plans"])
        .arg(empty.path())
        .arg("--data-dir")
        .arg(data.path())
        .output()
        .expect("run pitboss");
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--plans"), "{}", stderr(&o));
}
