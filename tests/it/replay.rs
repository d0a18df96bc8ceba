//! The log is the event source: the export verifies offline with the public key alone, and
//! folding its entries with the plans reproduces every settlement the service announced.

use std::collections::BTreeMap;

use pitboss::round::{event_of_entry, Event, State};
use serde_json::Value;

use crate::server::TestServer;

pub fn exported_log_verifies_and_replays(server: &TestServer, auditor: &str) {
    exported_log_verifies_and_replays_on(server, auditor, &crate::source::rng_plans_dir());
}

/// The same, for a server started on another plan directory (a copy of the plans with a
/// shorter decision time, say): the replay folds the log with those plans.
pub fn exported_log_verifies_and_replays_on(
    server: &TestServer,
    auditor: &str,
    plans_dir: &std::path::Path,
) {
    exported_log_verifies_and_replays_with_keys(server, auditor, plans_dir, &[]);
}

/// The same, for a log whose signing key was rotated: `earlier` are the keys it had before the
/// current one (`/v1/audit/public-key` serves only the current key).
pub fn exported_log_verifies_and_replays_with_keys(
    server: &TestServer,
    auditor: &str,
    plans_dir: &std::path::Path,
    earlier: &[pitboss_audit::VerifyingKey],
) {
    verifies_and_replays(server, auditor, plans_dir, earlier, "/v1/audit/export");
}

/// The same for the export at `path` (one log of several: `/v1/audit/export?log=…`);
/// returns the export.
pub fn export_at_verifies_and_replays(server: &TestServer, auditor: &str, path: &str) -> String {
    verifies_and_replays(server, auditor, &crate::source::rng_plans_dir(), &[], path)
}

fn verifies_and_replays(
    server: &TestServer,
    auditor: &str,
    plans_dir: &std::path::Path,
    earlier: &[pitboss_audit::VerifyingKey],
    path: &str,
) -> String {
    let (s, export) = server.get_text(Some(auditor), path);
    assert_eq!(s, 200, "{export}");
    let (s, pem) = server.get_text(None, "/v1/audit/public-key");
    assert_eq!(s, 200);
    let key = pitboss_audit::note::public_key_from_pem(&pem).expect("public key PEM");
    let mut anchors = vec![key];
    anchors.extend_from_slice(earlier);
    let summary = pitboss_audit::verify::verify_export(
        std::io::Cursor::new(export.as_bytes()),
        pitboss_audit::verify::VerifyOptions {
            anchors,
            trusted: None,
            check_canonical: true,
            ..Default::default()
        },
        |_| {},
    )
    .unwrap_or_else(|f| panic!("the export does not verify: {f:?}"));
    assert!(summary.entries > 0);

    // Replay every entry of the export through the domain's own fold.
    let (plans, report) = pitboss::plan::PlanSet::load_dir(plans_dir);
    assert_eq!(report.errors().count(), 0, "the plans load");
    let mut state = State::default();
    let mut settled: BTreeMap<String, Value> = BTreeMap::new();
    let mut parts: BTreeMap<String, Vec<pitboss::round::BetSettlement>> = BTreeMap::new();
    for line in export.lines().skip(1) {
        let v: Value = serde_json::from_str(line).unwrap();
        if v.get("checkpoint").is_some() {
            continue;
        }
        let Some(event) = event_of_entry(&v).unwrap_or_else(|e| panic!("entry {v}: {e}")) else {
            continue;
        };
        // apply re-derives each settlement and refuses one that differs from the logged one.
        state
            .apply(&plans, &event)
            .unwrap_or_else(|e| panic!("replay: {e}"));
        // A settlement too large for one entry comes in parts before its `round_settled`.
        match &event {
            Event::RoundSettledPart { round, settlements } => {
                parts
                    .entry(round.clone())
                    .or_default()
                    .extend(settlements.iter().cloned());
            }
            Event::RoundSettled {
                round, settlements, ..
            } => {
                let mut whole = parts.remove(round).unwrap_or_default();
                whole.extend(settlements.iter().cloned());
                settled.insert(round.clone(), serde_json::to_value(whole).unwrap());
            }
            _ => {}
        }
    }
    assert!(!settled.is_empty(), "the log holds settled rounds");
    assert!(
        parts.is_empty(),
        "settlement parts without their round_settled: {parts:?}"
    );
    for (round, logged) in &settled {
        let (s, _, served) =
            server.get_as(Some(auditor), &format!("/v1/rounds/{round}/settlement"));
        assert_eq!(s, 200);
        assert_eq!(
            &served["settlements"], logged,
            "round {round}: the service and the replay disagree"
        );
        let replayed = state.rounds[round]
            .settlements
            .as_ref()
            .expect("settled in the replay");
        assert_eq!(&serde_json::to_value(replayed).unwrap(), logged);
    }

    // The auditor's command agrees: every settlement, refund and RNG result re-derived, and
    // every logged state snapshot equal to the replay's own state at its point.
    let out = replay_command(&export, plans_dir);
    assert_eq!(out.code, 0, "pitboss replay: {}{}", out.stdout, out.stderr);
    let snapshots = export
        .lines()
        .filter(|l| l.contains("\"kind\":\"state_snapshot\""))
        .count();
    assert!(
        out.stdout
            .contains(&format!("{snapshots} state snapshots matched")),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.starts_with("OK ")
            && out
                .stdout
                .contains(&format!("{} settlements", settled.len())),
        "{}",
        out.stdout
    );
    export
}

pub struct CommandOutput {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `pitboss replay` on an export's text with the plans in `plans_dir`.
pub fn replay_command(export: &str, plans_dir: &std::path::Path) -> CommandOutput {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("export.jsonl");
    std::fs::write(&file, export).expect("write export");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pitboss"))
        .arg("--plans")
        .arg(plans_dir)
        .arg("replay")
        .arg(&file)
        .output()
        .expect("pitboss replay runs");
    CommandOutput {
        code: out.status.code().expect("exited normally"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// For a log without settled rounds: the auditor's `pitboss replay` accepts the export.
#[allow(dead_code)]
pub fn exported_log_verifies_and_replays_if_settled(server: &TestServer, auditor: &str) {
    let (s, export) = server.get_text(Some(auditor), "/v1/audit/export");
    assert_eq!(s, 200, "{export}");
    let out = replay_command(&export, &crate::source::rng_plans_dir());
    assert_eq!(out.code, 0, "pitboss replay: {}{}", out.stdout, out.stderr);
    assert!(out.stdout.starts_with("OK "), "{}", out.stdout);
}
