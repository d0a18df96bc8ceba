//! Exception events with an actor and a reason (issue 20): an error the dealer system or staff
//! reports pauses a round (`round_paused`, with what was reported) until a repair resumes it
//! (`round_resumed`) or it is voided; while paused the round takes no bet and no dealer event.
//! Every void, pause, resumption and table closure names who asked: the API key (its id), its
//! role, and the person the operator named (`person` in the request), written by the writer
//! into the events the command logs ([`with_actor`]).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::games::Refusal;
use crate::round::regulator::Actor;
use crate::round::{Event, State};

use super::Command;

/// Longest reason and report, in bytes.
pub const MAX_REASON: usize = 500;
pub const MAX_REPORTED: usize = 2000;

fn refuse(code: &str, message: impl Into<String>) -> Refusal {
    Refusal::new(code, message)
}

/// The command's exception events, naming who asked.
pub fn with_actor(mut events: Vec<Event>, actor: Option<&Actor>) -> Vec<Event> {
    let Some(a) = actor else {
        return events;
    };
    for ev in &mut events {
        match ev {
            Event::RoundVoided { actor, .. }
            | Event::TableClosed { actor, .. }
            | Event::RoundPaused { actor, .. }
            | Event::RoundResumed { actor, .. }
            | Event::PlayerExcluded { actor, .. }
            | Event::PlayerExclusionLifted { actor, .. }
            | Event::PlayerLimitsSet { actor, .. }
            | Event::PlayerUsageReported { actor, .. } => *actor = Some(a.clone()),
            _ => {}
        }
    }
    events
}

/// A table's registration number and dealing device as given: each 1–64 printable
/// characters; both required under `serve --require-registration`.
pub fn check_registration(
    r: Option<&crate::round::regulator::Registration>,
    required: bool,
) -> Result<(), Refusal> {
    let ok = |v: &Option<String>| {
        v.as_ref().is_none_or(|v| {
            !v.is_empty() && v.len() <= 64 && v.chars().all(|c| c.is_ascii_graphic() || c == ' ')
        })
    };
    if let Some(r) = r {
        if !ok(&r.registration) || !ok(&r.device) {
            return Err(refuse(
                "bad_registration",
                "registration and device are 1–64 printable characters",
            ));
        }
    }
    let complete = r.is_some_and(|r| r.registration.is_some() && r.device.is_some());
    if required && !complete {
        return Err(refuse(
            "registration_required",
            "this service opens a table only with its registration number and the id of its dealing device (`registration`, `device`; serve --require-registration)",
        ));
    }
    Ok(())
}

/// The table's registration and device, written into its `table_opened` event.
pub fn with_registration(
    mut events: Vec<Event>,
    r: Option<&crate::round::regulator::Registration>,
) -> Vec<Event> {
    let Some(r) = r else {
        return events;
    };
    for ev in &mut events {
        if let Event::TableOpened {
            registration,
            device,
            ..
        } = ev
        {
            registration.clone_from(&r.registration);
            device.clone_from(&r.device);
        }
    }
    events
}

/// A paused round takes no bet and no dealer event: only a resumption or a void (or the
/// table's closure, which voids it).
pub fn not_paused(state: &State, op: &str, command: &Command) -> Result<(), Refusal> {
    let round = match command {
        Command::Bets { round, .. }
        | Command::CloseBetting { round }
        | Command::Spin { round, .. }
        | Command::Draw { round }
        | Command::Cards { round, .. }
        | Command::Misdeal { round, .. }
        | Command::Decisions { round, .. }
        | Command::CloseDecisions { round } => round,
        _ => return Ok(()),
    };
    match state.paused.get(round) {
        Some(p) if state.round_of_operator(op, round).is_ok() => Err(refuse(
            "round_paused",
            format!(
                "round {round} is paused ({}): resume it after the repair, or void it",
                p.reason
            ),
        )),
        _ => Ok(()),
    }
}

fn check_reason(reason: &str) -> Result<(), Refusal> {
    if reason.trim().is_empty() || reason.len() > MAX_REASON {
        return Err(refuse(
            "bad_reason",
            format!("the reason is 1–{MAX_REASON} bytes"),
        ));
    }
    Ok(())
}

pub fn decide_pause(
    state: &State,
    op: &str,
    round: &str,
    reason: &str,
    reported: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Vec<Event>, Refusal> {
    let r = state.round_of_operator(op, round)?;
    check_reason(reason)?;
    if reported.is_some_and(|t| t.len() > MAX_REPORTED) {
        return Err(refuse(
            "bad_reason",
            format!("what was reported is at most {MAX_REPORTED} bytes"),
        ));
    }
    if r.is_finished() {
        return Err(refuse(
            "round_finished",
            format!("round {round} is already {}", r.phase),
        ));
    }
    if state.paused.contains_key(round) {
        return Err(refuse(
            "round_paused",
            format!("round {round} is already paused"),
        ));
    }
    Ok(vec![Event::RoundPaused {
        round: round.to_string(),
        reason: reason.to_string(),
        reported: reported.map(str::to_string),
        actor: None,
        at: now,
    }])
}

pub fn decide_resume(
    state: &State,
    op: &str,
    round: &str,
    reason: &str,
    now: DateTime<Utc>,
) -> Result<Vec<Event>, Refusal> {
    state.round_of_operator(op, round)?;
    check_reason(reason)?;
    if !state.paused.contains_key(round) {
        return Err(refuse(
            "round_not_paused",
            format!("round {round} is not paused"),
        ));
    }
    Ok(vec![Event::RoundResumed {
        round: round.to_string(),
        reason: reason.to_string(),
        actor: None,
        at: now,
    }])
}

/// `POST /v1/rounds/{round}/pause` and `…/resume`: the round and whether it is paused now.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PauseReply {
    pub round: String,
    pub paused: bool,
    pub reason: String,
    /// When the pause or the resumption was logged.
    pub at: DateTime<Utc>,
}

pub fn reply(_state: &State, round: &str, events: &[Event]) -> PauseReply {
    match events.first() {
        Some(Event::RoundPaused { reason, at, .. }) => PauseReply {
            round: round.to_string(),
            paused: true,
            reason: reason.clone(),
            at: *at,
        },
        Some(Event::RoundResumed { reason, at, .. }) => PauseReply {
            round: round.to_string(),
            paused: false,
            reason: reason.clone(),
            at: *at,
        },
        _ => unreachable!("a pause or a resumption"),
    }
}
