//! Reads the source documents kept in `game_plans/sources/`, so that tests compare plans with
//! the document's own text rather than with numbers copied into the test.

// Shared by the per-family test modules; not every module uses every helper.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use pitboss::plan::registry::{load_file, PlanSet};
use pitboss::plan::{LoadedPlan, PlanRef};

pub fn plans_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("game_plans")
}

pub fn document(name: &str) -> String {
    std::fs::read_to_string(plans_dir().join("sources").join(name))
        .unwrap_or_else(|e| panic!("source document {name}: {e}"))
}

/// The main live-games plan.
pub const LIVE_GAMES: &str = "002_24105721a8b212ac.txt";

/// The game headings of 002, in document order: each stands alone on its line once.
pub const HEADINGS_002: &[&str] = &[
    "Roulette (Evolution)",
    "Blackjack (Evolution)",
    "Infinite Blackjack",
    "Casino Hold'em (Evolution)",
    "Top Card",
    "Speed Baccarat",
    "Roulette (SYNOT Interactive)",
    "Blackjack (SYNOT Interactive)",
    "All Bets Blackjack",
    "Casino Hold'em",
    "Baccarat",
    "ROULETTE (Absolute live gaming)",
    "BLACKJACK – ENDLESS",
    "BLACKJACK (Absolute live gaming)",
];

/// The text of one game's section of 002: from its heading line to the next game's heading.
pub fn section_002(heading: &str) -> String {
    let doc = document(LIVE_GAMES);
    let lines: Vec<&str> = doc.lines().collect();
    let at = |h: &str| {
        let found: Vec<usize> = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.trim_end() == h)
            .map(|(i, _)| i)
            .collect();
        assert_eq!(
            found.len(),
            1,
            "heading {h:?} must stand alone on exactly one line"
        );
        found[0]
    };
    let start = at(heading);
    let idx = HEADINGS_002
        .iter()
        .position(|h| *h == heading)
        .unwrap_or_else(|| panic!("{heading:?} is not a game heading of 002"));
    let end = HEADINGS_002
        .get(idx + 1)
        .map_or(lines.len(), |next| at(next));
    lines[start..end].join("\n")
}

/// "200 000,00 Kč" → 20 000 000 haléřů.
pub fn kc(text: &str) -> i64 {
    let t = text.trim().trim_end_matches("Kč").trim();
    let (whole, frac) = t.split_once(',').unwrap_or((t, "00"));
    let whole: String = whole.chars().filter(|c| c.is_ascii_digit()).collect();
    assert_eq!(frac.len(), 2, "amount {text:?} has two decimals");
    whole.parse::<i64>().expect("digits") * 100 + frac.parse::<i64>().expect("digits")
}

/// One row of "Tabulka nejvyšších sázek a odvislých nejvyšších výher".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitRow {
    pub label: String,
    pub max_bet: i64,
    pub max_win: i64,
    pub max_win_plus_stake: i64,
}

/// Every limits row of a section: lines of a label and three amounts in Kč, tab-separated.
pub fn limit_rows(section: &str) -> Vec<LimitRow> {
    section
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('\t').map(str::trim).collect();
            if cells.len() == 4 && cells[1..].iter().all(|c| c.ends_with("Kč")) {
                Some(LimitRow {
                    label: cells[0].to_string(),
                    max_bet: kc(cells[1]),
                    max_win: kc(cells[2]),
                    max_win_plus_stake: kc(cells[3]),
                })
            } else {
                None
            }
        })
        .collect()
}

/// Loads one plan file by `id@version` from `game_plans/`, failing the test on any lint error.
pub fn plan(key: &str) -> LoadedPlan {
    let dir = plans_dir();
    load_file(&dir.join(format!("{key}.toml")), Some(&dir.join("sources"))).unwrap_or_else(
        |findings| {
            let msgs: Vec<String> = findings.iter().map(ToString::to_string).collect();
            panic!("{key} does not load:\n{}", msgs.join("\n"))
        },
    )
}

/// The whole plan directory, which must load without errors.
pub fn all_plans() -> PlanSet {
    let (set, report) = PlanSet::load_dir(&plans_dir());
    let errors: Vec<String> = report.errors().map(ToString::to_string).collect();
    assert!(
        errors.is_empty(),
        "game_plans/ has errors:\n{}",
        errors.join("\n")
    );
    set
}

/// Asserts that the plan's bet limits are exactly the rows of the document's limits table in
/// `heading`'s section: every row has a bet with that label and those amounts, and every bet
/// of the plan has a row — unless the table has no row for it and the plan records its
/// `max_bet` as an assumption (a stake the rules allow but the table omits, such as insurance
/// in BLACKJACK – ENDLESS).
pub fn assert_limits_match_002(p: &LoadedPlan, heading: &str) {
    let rows = limit_rows(&section_002(heading));
    assert!(!rows.is_empty(), "no limits table found under {heading:?}");
    for row in &rows {
        let bet = p
            .plan
            .bets
            .iter()
            .find(|b| b.label == row.label)
            .unwrap_or_else(|| {
                panic!(
                    "{}: no bet labelled {:?} (document row under {heading:?})",
                    p.key(),
                    row.label
                )
            });
        assert_eq!(
            (bet.max_bet, bet.max_win, bet.max_win_plus_stake),
            (row.max_bet, row.max_win, row.max_win_plus_stake),
            "{}: limits of {} ({:?}) differ from the document",
            p.key(),
            bet.id,
            row.label
        );
    }
    for bet in &p.plan.bets {
        let assumed = p
            .plan
            .assumption(&format!("bets[{}].max_bet", bet.id))
            .is_some();
        assert!(
            rows.iter().any(|r| r.label == bet.label) || assumed,
            "{}: bet {} ({:?}) has no row in the document's limits table under {heading:?}",
            p.key(),
            bet.id,
            bet.label
        );
    }
    assert_eq!(
        p.plan.source.section,
        heading,
        "{} cites another section",
        p.key()
    );
}

/// The ratio of a payout row as (numerator, denominator).
pub fn ratio(p: &LoadedPlan, bet: &str, outcome: &str) -> (u64, u64) {
    let row = p
        .plan
        .payouts
        .iter()
        .find(|r| r.bet == bet && r.outcome == outcome)
        .unwrap_or_else(|| panic!("{}: no payout row {bet}/{outcome}", p.key()));
    let r = row
        .ratio
        .unwrap_or_else(|| panic!("{}: {bet}/{outcome} is a refund, not a win", p.key()));
    (r.numerator(), r.denominator())
}

/// The refund share of a payout row as (numerator, denominator).
pub fn refund(p: &LoadedPlan, bet: &str, outcome: &str) -> (u64, u64) {
    let row = p
        .plan
        .payouts
        .iter()
        .find(|r| r.bet == bet && r.outcome == outcome)
        .unwrap_or_else(|| panic!("{}: no payout row {bet}/{outcome}", p.key()));
    let r = row
        .refund
        .unwrap_or_else(|| panic!("{}: {bet}/{outcome} is a win, not a refund", p.key()));
    (r.numerator(), r.denominator())
}

#[allow(dead_code)]
pub fn latest(set: &PlanSet, id: &str) -> LoadedPlan {
    set.get(&id.parse::<PlanRef>().expect("plan id"))
        .unwrap_or_else(|| panic!("{id} not loaded"))
        .clone()
}

#[test]
fn amounts_in_the_documents_notation_convert_to_halere() {
    assert_eq!(kc("200 000,00 Kč"), 20_000_000);
    assert_eq!(kc("10 000,00 Kč"), 1_000_000);
    assert_eq!(kc("1 100 000,00 Kč"), 110_000_000);
}

#[test]
fn every_game_heading_of_002_has_a_limits_table() {
    for h in HEADINGS_002 {
        assert!(!limit_rows(&section_002(h)).is_empty(), "{h}");
    }
}

/// A live-only plan's text (002's plans, § 3(1)) rewritten to allow RNG too: the test copies
/// of the plans, on which the tests of RNG rounds play. Other plans are returned unchanged.
pub fn test_plan_text(text: &str) -> String {
    if !text.contains("\nmodes_clause = ") {
        return text.to_string();
    }
    text.lines()
        .filter(|l| !l.starts_with("modes_clause = "))
        .map(|l| {
            if l.starts_with("modes = [\"live\"]") {
                "modes = [\"live\", \"rng\"]   # test copy: RNG allowed".to_string()
            } else {
                l.to_string()
            }
        })
        .map(|l| l + "\n")
        .collect()
}

/// The test copies of the committed plans (see [`test_plan_text`]), written once under the
/// build's temporary directory and named by their content: what every test server runs on
/// unless it needs the committed plans themselves (the refusal of RNG on a live-only plan).
pub fn rng_plans_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        use std::hash::{Hash, Hasher};
        let src = plans_dir();
        let mut files: Vec<(String, String)> = std::fs::read_dir(&src)
            .expect("plans")
            .map(|e| e.expect("entry"))
            .map(|e| e.file_name().to_string_lossy().to_string())
            .filter(|n| n.ends_with(".toml"))
            .map(|n| {
                let text = std::fs::read_to_string(src.join(&n)).expect("plan");
                (n, test_plan_text(&text))
            })
            .collect();
        files.sort();
        let mut h = std::collections::hash_map::DefaultHasher::new();
        files.hash(&mut h);
        let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        let dir = base.join(format!("test-plans-{:016x}", h.finish()));
        if dir.join("sources").exists() {
            return dir;
        }
        // Written aside and renamed: concurrent test processes never see half a directory.
        let tmp = tempfile::tempdir_in(&base).expect("temp dir");
        std::fs::create_dir(tmp.path().join("sources")).expect("sources dir");
        for e in std::fs::read_dir(src.join("sources")).expect("sources") {
            let e = e.expect("entry");
            std::fs::copy(e.path(), tmp.path().join("sources").join(e.file_name())).expect("copy");
        }
        for (name, text) in &files {
            std::fs::write(tmp.path().join(name), text).expect("write plan");
        }
        let tmp = tmp.keep();
        if std::fs::rename(&tmp, &dir).is_err() {
            // Another process renamed its copy first: the same content.
            let _ = std::fs::remove_dir_all(&tmp);
        }
        dir
    })
    .clone()
}

/// A copy of the committed plans (and their source documents) with text replaced in some plan
/// files: for a test that needs, say, a shorter decision time. `edits` pairs a plan file with
/// its `(from, to)` replacements; each `from` must occur. Like [`rng_plans_dir`], live-only
/// plans are test copies that allow RNG.
pub fn plans_with(edits: &[(&str, &[(&str, &str)])]) -> tempfile::TempDir {
    let plans = tempfile::tempdir().expect("temp dir");
    let src = plans_dir();
    std::fs::create_dir(plans.path().join("sources")).expect("sources dir");
    for e in std::fs::read_dir(src.join("sources")).expect("sources") {
        let e = e.expect("entry");
        std::fs::copy(e.path(), plans.path().join("sources").join(e.file_name())).expect("copy");
    }
    for e in std::fs::read_dir(&src).expect("plans") {
        let e = e.expect("entry");
        let name = e.file_name().to_string_lossy().to_string();
        if !name.ends_with(".toml") {
            continue;
        }
        let mut text = test_plan_text(&std::fs::read_to_string(e.path()).expect("plan"));
        for (_, replace) in edits.iter().filter(|(file, _)| *file == name) {
            for (from, to) in *replace {
                assert!(text.contains(from), "{name} holds no {from:?}");
                text = text.replace(from, to);
            }
        }
        std::fs::write(plans.path().join(&name), text).expect("write plan");
    }
    for (file, _) in edits {
        assert!(plans.path().join(file).exists(), "no plan file {file}");
    }
    plans
}
