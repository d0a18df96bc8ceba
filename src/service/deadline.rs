//! The deadline for interrupted rounds (issue 20): a round may stay paused, or unfinished
//! with no progress, for the plan's `policies.timing.interrupted_round_ms`; past it the plan's
//! error policy applies by itself: the writer voids the round and returns every stake, as a
//! `round_voided` entry whose `actor` is the service (`role` `service`) and whose reason
//! starts with `deadline:`. The players' stakes are never held without limit.
//!
//! When a round's time runs out:
//! - a paused round: `interrupted_round_ms` after its `round_paused` (the pause's `at`, kept
//!   in the state, so a restart changes nothing);
//! - any other unfinished round: `interrupted_round_ms` after the last change of the round
//!   this writer saw (a bet, a card, a decision, a phase, a pause or its resumption), and
//!   never before the end of its betting window while it takes bets, nor of its decision
//!   time while its players decide. A round first seen after a start counts from then, so a
//!   restart can only lengthen the wait, never shorten it.
//!
//! The check is cheap: it looks only at the live rounds in memory (never at history), at most
//! once a second. The decision is the writer's and is logged: a replay applies the
//! `round_voided` entry like any other void and decides nothing.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};

use chrono::{DateTime, SecondsFormat, Utc};

use crate::round::regulator::Actor;
use crate::round::{Phase, RoundState, State};

use super::{Command, Job, Writer};

/// How often the live rounds are looked at.
pub const CHECK_INTERVAL: Duration = Duration::from_secs(1);
/// A void the writer could not log is tried again after this long.
const RETRY_AFTER: Duration = Duration::from_secs(60);

/// What the writer remembers of each live round between checks.
#[derive(Default)]
pub struct Deadlines {
    seen: HashMap<String, Seen>,
    last_check: Option<Instant>,
}

struct Seen {
    /// A digest of what the round holds (see [`progress_mark`]).
    mark: u64,
    /// When the writer first saw the round as it is now.
    since: DateTime<Utc>,
    /// When a void at the deadline was last tried and not logged.
    failed: Option<Instant>,
}

/// A round whose time ran out, with the operator whose table it is and the void's reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expired {
    pub round: String,
    pub operator: String,
    pub reason: String,
}

/// Who voids a round at its deadline: the service itself.
pub fn service_actor() -> Actor {
    Actor {
        key: "serve".into(),
        role: "service".into(),
        person: None,
        signer: None,
    }
}

/// A digest of everything that changes as a round goes on: a change is progress. Costs a
/// handful of lengths and flags, whatever the number of bets.
fn progress_mark(r: &RoundState, paused: Option<DateTime<Utc>>) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (
        r.phase as u8,
        r.bets.len(),
        r.cards.len(),
        r.misdeals,
        r.invalid_spins,
        r.decisions.len(),
        r.decisions_pending.len(),
        r.decisions_closed,
        r.result,
        r.outcome.is_some(),
        r.blackjack.as_ref().map(|b| b.inputs),
        paused,
    )
        .hash(&mut h);
    h.finish()
}

fn after_ms(t: DateTime<Utc>, ms: u64) -> DateTime<Utc> {
    t + chrono::Duration::milliseconds(i64::try_from(ms).unwrap_or(i64::MAX))
}

/// "1800 s", "2.5 s".
fn seconds(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        let s = format!("{}.{:03}", ms / 1000, ms % 1000);
        format!("{} s", s.trim_end_matches('0'))
    }
}

fn stamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

impl Deadlines {
    /// Whether a check is due (at most one per [`CHECK_INTERVAL`]).
    fn due(&mut self) -> bool {
        match self.last_check {
            Some(t) if t.elapsed() < CHECK_INTERVAL => false,
            _ => {
                self.last_check = Some(Instant::now());
                true
            }
        }
    }

    /// The live rounds whose time has run out at `now`. Remembers what each live round holds
    /// and forgets the rounds no longer live.
    pub fn expired(&mut self, state: &State, now: DateTime<Utc>) -> Vec<Expired> {
        let mut out = Vec::new();
        let mut live = 0;
        for (id, r) in &state.rounds {
            if r.is_finished() {
                continue;
            }
            let Some(table) = state.tables.get(&r.table) else {
                continue;
            };
            let plan = &table.loaded.plan;
            let Some(ms) = plan.policies.timing.interrupted_round_ms else {
                continue;
            };
            live += 1;
            let pause = state.paused.get(id);
            let mark = progress_mark(r, pause.map(|p| p.at));
            let seen = self.seen.entry(id.clone()).or_insert(Seen {
                mark,
                since: now,
                failed: None,
            });
            if seen.mark != mark {
                seen.mark = mark;
                seen.since = now;
            }
            if seen.failed.is_some_and(|t| t.elapsed() < RETRY_AFTER) {
                continue;
            }
            let from = match pause {
                Some(p) => p.at,
                None => {
                    // While bets or decisions are still awaited, the wait starts when they
                    // are no longer (a closed phase is a change, which restarts it).
                    let waiting_for = match r.phase {
                        Phase::Betting => Some(r.betting_deadline),
                        Phase::Decisions => r.decision_deadline,
                        _ => None,
                    };
                    waiting_for.map_or(seen.since, |d| d.max(seen.since))
                }
            };
            if now < after_ms(from, ms) {
                continue;
            }
            let (what, not) = if pause.is_some() {
                ("paused", "not resumed")
            } else {
                ("no progress", "not finished")
            };
            out.push(Expired {
                round: id.clone(),
                operator: table.operator.clone(),
                reason: bounded(format!(
                    "deadline: {what} since {}, {not} within the plan's {} (policies.timing.interrupted_round_ms): voided under its error policy ({}), every stake returned",
                    stamp(from),
                    seconds(ms),
                    plan.policies.error.clause
                )),
            });
        }
        if self.seen.len() > live {
            self.seen
                .retain(|id, _| state.rounds.get(id).is_some_and(|r| !r.is_finished()));
        }
        out
    }

    fn failed(&mut self, round: &str) {
        if let Some(s) = self.seen.get_mut(round) {
            s.failed = Some(Instant::now());
        }
    }
}

/// A void's reason is at most 500 bytes (a plan's clause could make it longer).
fn bounded(mut reason: String) -> String {
    const MAX: usize = 500;
    if reason.len() > MAX {
        let mut end = MAX;
        while !reason.is_char_boundary(end) {
            end -= 1;
        }
        reason.truncate(end);
    }
    reason
}

impl Writer {
    /// Voids the rounds whose interrupted-round deadline has run out, as commands of the
    /// service decided and logged like any operator's void. Called on every turn of the
    /// writer's loop; looks at the rounds at most once a second, and not while the store is
    /// down (the next check after it is back voids them).
    pub(super) fn void_expired_rounds(&mut self) {
        if !self.deadlines.due() || self.metrics.health.is_store_down() {
            return;
        }
        let expired = {
            let state = self.state.read().expect("state lock");
            self.deadlines.expired(&state, Utc::now())
        };
        if expired.is_empty() {
            return;
        }
        let mut answers = Vec::with_capacity(expired.len());
        let jobs = expired
            .into_iter()
            .map(|e| {
                let (reply, rx) = tokio::sync::oneshot::channel();
                answers.push((e.round.clone(), rx));
                Job {
                    operator: e.operator,
                    idem: None,
                    actor: Some(Box::new(service_actor())),
                    command: Command::Void {
                        round: e.round,
                        reason: e.reason,
                    },
                    reply,
                    request_id: None,
                    queued_at: Instant::now(),
                }
            })
            .collect();
        self.process(jobs);
        // The committer answers once the batch is durable: wait for it.
        self.settle();
        for (round, mut rx) in answers {
            match rx.try_recv() {
                Ok(r) if r.status == 200 => {
                    tracing::warn!(round, "round voided at its interrupted-round deadline");
                }
                other => {
                    let detail = other.map_or_else(|e| e.to_string(), |r| r.body.to_string());
                    tracing::error!(
                        round,
                        detail,
                        "a void at the interrupted-round deadline was not logged; retrying later"
                    );
                    self.deadlines.failed(&round);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_written_plainly() {
        assert_eq!(seconds(1_800_000), "1800 s");
        assert_eq!(seconds(2_500), "2.5 s");
        assert_eq!(seconds(1), "0.001 s");
    }

    #[test]
    fn a_reason_is_cut_at_a_character_boundary() {
        let r = bounded("deadline: ".to_string() + &"ř".repeat(400));
        assert!(r.len() <= 500 && r.starts_with("deadline: "));
        assert_eq!(bounded("short".into()), "short");
    }
}
