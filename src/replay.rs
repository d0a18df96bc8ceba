//! `pitboss replay`: the auditor's re-derivation. It folds an export's entries with the plan
//! versions they name, through the same [`State::apply`] the service recovers with, and so
//! re-derives every settlement, refund and RNG result; each entry the fold refuses is a
//! disagreement, reported with its seq. No database and no service: a file and a plan
//! directory. The export is read line by line, never held whole.
//!
//! What it does not check is structure and signatures: run `pitboss-audit verify` first (a
//! log that verifies and replays is both untampered and right by the plans).

use std::io::{BufRead, Read};

use serde_json::Value;

use crate::plan::{PlanRef, PlanSet};
use crate::round::{event_of_entry, Event, State};
use pitboss_audit::export::{ExportHeader, CHECKPOINT_LINE_PREFIX, ENTRY_LINE_PREFIX};
use pitboss_audit::verify::MAX_LINE_BYTES;

/// One entry the re-derivation disagrees with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disagreement {
    pub seq: u64,
    pub kind: String,
    pub message: String,
}

impl std::fmt::Display for Disagreement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DISAGREE seq {} ({}): {}",
            self.seq, self.kind, self.message
        )
    }
}

/// What a replay went through.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub origin: String,
    pub entries: u64,
    /// Entries that are game events (the others, such as key rotations, change no state).
    pub events: u64,
    pub settlements: u64,
    pub voids: u64,
    pub refunds: u64,
    /// RNG seeds revealed by a settlement or a void and checked against their commitment and
    /// what they draw.
    pub seeds_checked: u64,
    /// `state_snapshot` entries whose hash the replay's own state at that point matched.
    pub snapshots_checked: u64,
    pub disagreements: u64,
}

/// Why a replay could not run to the end.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("reading the export: {0}")]
    Io(#[from] std::io::Error),
    #[error("export line {line}: {detail} (run pitboss-audit verify)")]
    Malformed { line: u64, detail: String },
}

/// Replays an export with `plans`, calling `report` for each disagreement as it is found (the
/// replay goes on after one: the fold refuses the entry and keeps its state as before it).
pub fn replay_export<R: BufRead>(
    mut r: R,
    plans: &PlanSet,
    mut report: impl FnMut(&Disagreement),
) -> Result<Summary, ReplayError> {
    let mut state = State::default();
    let mut summary = Summary::default();
    let mut buf = Vec::with_capacity(4096);
    let mut line = 0u64;
    loop {
        buf.clear();
        let n = r
            .by_ref()
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut buf)?;
        if n == 0 {
            break;
        }
        line += 1;
        let malformed = |detail: String| ReplayError::Malformed { line, detail };
        if buf.pop() != Some(b'\n') {
            return Err(malformed("line cut or too long".to_owned()));
        }
        if line == 1 {
            let h: ExportHeader =
                serde_json::from_slice(&buf).map_err(|e| malformed(format!("header: {e}")))?;
            summary.origin = h.origin;
            continue;
        }
        if buf.starts_with(CHECKPOINT_LINE_PREFIX) {
            continue;
        }
        if !buf.starts_with(ENTRY_LINE_PREFIX) {
            return Err(malformed("neither an entry nor a checkpoint".to_owned()));
        }
        let entry: Value = serde_json::from_slice(&buf).map_err(|e| malformed(e.to_string()))?;
        let seq = entry.get("seq").and_then(Value::as_u64);
        if seq != Some(summary.entries) {
            return Err(malformed(format!(
                "expected entry {}, found {seq:?}",
                summary.entries
            )));
        }
        summary.entries += 1;
        let kind = entry
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let seq = summary.entries - 1;
        for message in replay_entry(&mut state, &mut summary, plans, &entry, &kind, seq) {
            summary.disagreements += 1;
            report(&Disagreement {
                seq,
                kind: kind.clone(),
                message,
            });
        }
    }
    Ok(summary)
}

/// Folds one entry; returns what disagrees with it.
fn replay_entry(
    state: &mut State,
    summary: &mut Summary,
    plans: &PlanSet,
    entry: &Value,
    kind: &str,
    seq: u64,
) -> Vec<String> {
    let mut problems = Vec::new();
    let event = match event_of_entry(entry) {
        Ok(Some(e)) => e,
        Ok(None) => return problems,
        Err(e) => {
            problems.push(format!("the payload does not read as a {kind} event: {e}"));
            return problems;
        }
    };
    summary.events += 1;
    if let Event::PlanLoaded { plan, sha256, .. } = &event {
        problems.extend(plan_mismatch(plans, plan, sha256));
    }
    if let Event::StateSnapshot { covers, .. } = &event {
        if *covers != seq {
            problems.push(format!(
                "a state snapshot logged at seq {seq} says it covers {covers} entries"
            ));
            return problems;
        }
    }
    if let Err(e) = state.apply(plans, &event) {
        problems.push(e);
        return problems;
    }
    if let Event::StateSnapshot { covers, sha256 } = &event {
        let actual = crate::round::snapshot::sha256_hex(&state.snapshot(*covers));
        if &actual == sha256 {
            summary.snapshots_checked += 1;
        } else {
            problems.push(format!(
                "the logged state snapshot hashes to {sha256}; the replay's state at this point hashes to {actual}"
            ));
        }
    }
    match &event {
        Event::RoundSettled {
            round, rng_seed, ..
        }
        | Event::RoundVoided {
            round, rng_seed, ..
        } => {
            if matches!(event, Event::RoundSettled { .. }) {
                summary.settlements += 1;
            } else {
                summary.voids += 1;
            }
            let committed = state
                .rounds
                .get(round)
                .is_some_and(|r| r.rng_commitment.is_some());
            match (committed, rng_seed) {
                // `apply` checked it: it hashes to the commitment and draws what was logged.
                (true, Some(_)) => summary.seeds_checked += 1,
                (true, None) => problems.push(format!(
                    "RNG round {round} finished without revealing its seed: its result cannot be checked against the commitment"
                )),
                _ => {}
            }
        }
        Event::BetRefunded { .. } => summary.refunds += 1,
        _ => {}
    }
    // What is finished leaves memory, as in the service: the replay holds only what is live.
    state.forget_finished(&event);
    problems
}

/// A `plan_loaded` entry whose plan the directory holds with other content.
fn plan_mismatch(plans: &PlanSet, plan: &str, sha256: &str) -> Option<String> {
    let r: PlanRef = match plan.parse() {
        Ok(r) => r,
        Err(e) => return Some(format!("plan {plan:?}: {e}")),
    };
    let loaded = plans.get(&r)?;
    (loaded.hash != sha256).then(|| {
        format!(
            "the log loaded {plan} with content {sha256}, the plan directory's {plan} is {}",
            loaded.hash
        )
    })
}
