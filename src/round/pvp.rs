//! Player-versus-player tables in the lifecycle: Oko bere and the C40 poker room.
//!
//! The house does not play these games: there are no bets against a paytable and no rounds
//! opened by the operator. A table holds the players' stacks (and the bank, or the pots), and
//! every act at the table — a player sitting down, a card dealt, a bet, a raise, a fold, the
//! end of a hand — is one *action*, checked by the family's pure engine against the plan and
//! logged as a `table_action` entry with the *effects* the engine derived (chips moved, pots
//! awarded, hands voided). The table's state is rebuilt by applying the logged actions in
//! order; applying one re-derives its effects and refuses a log whose effects differ, so a
//! replay proves every stack, bank and pot. The engines count the chips after every action
//! (stacks + bank or pots = chips bought in − chips cashed out).

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

use crate::games::oko_bere::{OkoBereAction, OkoBereEngine, OkoBereState};
use crate::games::poker_room::{self, PokerRoomEngine};
use crate::games::Refusal;
use crate::plan::model::Plan;
use crate::plan::rules::Family;

/// The codes of this module.
pub mod code {
    /// An action body that is not one of the family's actions.
    pub const MALFORMED_ACTION: &str = "malformed_action";
    /// `{"action": "automatic"}` when nobody owes a decision.
    pub const NO_AUTOMATIC_DECISION: &str = "no_automatic_decision";
}

/// The engine of a player-versus-player plan.
pub enum PvpEngine<'p> {
    OkoBere(OkoBereEngine<'p>),
    Poker(PokerRoomEngine<'p>),
}

/// A player-versus-player table's state, as the engines keep it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum PvpState {
    OkoBere(OkoBereState),
    Poker(poker_room::Table),
}

fn parse<T: for<'de> serde::Deserialize<'de>>(family: Family, v: &Value) -> Result<T, Refusal> {
    T::deserialize(v).map_err(|e| {
        Refusal::new(
            code::MALFORMED_ACTION,
            format!("not an action of {family}: {e}"),
        )
    })
}

fn to_value<T: Serialize>(t: &T) -> Value {
    serde_json::to_value(t).expect("actions, effects and states serialise")
}

impl<'p> PvpEngine<'p> {
    /// The engine of `plan`, if its family is played between players.
    pub fn new(plan: &'p Plan) -> Option<Result<PvpEngine<'p>, Refusal>> {
        match plan.plan.family {
            Family::OkoBere => Some(OkoBereEngine::new(plan).map(PvpEngine::OkoBere)),
            Family::PokerCash => Some(PokerRoomEngine::new(plan).map(PvpEngine::Poker)),
            _ => None,
        }
    }

    pub fn family(&self) -> Family {
        match self {
            PvpEngine::OkoBere(_) => Family::OkoBere,
            PvpEngine::Poker(_) => Family::PokerCash,
        }
    }

    /// The clause of the game's rules as a whole (`rules.<family>.clause`).
    fn rules_clause(&self) -> String {
        match self {
            PvpEngine::OkoBere(e) => match &e.plan().rules {
                crate::plan::rules::GameRules::OkoBere(r) => r.clause.clone(),
                _ => unreachable!("the Oko bere engine holds an Oko bere plan"),
            },
            PvpEngine::Poker(e) => e.rules().clause.clone(),
        }
    }

    /// An empty table.
    pub fn new_state(&self) -> PvpState {
        match self {
            PvpEngine::OkoBere(_) => PvpState::OkoBere(OkoBereState::new()),
            PvpEngine::Poker(e) => PvpState::Poker(e.new_table()),
        }
    }

    /// Reads `action` as the family's action and applies it at `now`: the effects, or a
    /// refusal and the state unchanged.
    pub fn apply(
        &self,
        state: &mut PvpState,
        action: &Value,
        now: DateTime<Utc>,
    ) -> Result<Value, Refusal> {
        // A refusal of the order of play (not his turn, not expected now) cites the game's
        // rules as a whole when the engine names no narrower clause.
        let cite = |e: Refusal| {
            if e.clause.is_some() {
                e
            } else {
                let clause = self.rules_clause();
                e.clause(clause)
            }
        };
        match (self, state) {
            (PvpEngine::OkoBere(e), PvpState::OkoBere(s)) => {
                let a: OkoBereAction = parse(Family::OkoBere, action)?;
                Ok(to_value(&e.apply(s, &a).map_err(cite)?))
            }
            (PvpEngine::Poker(e), PvpState::Poker(t)) => {
                let a: poker_room::Action = parse(Family::PokerCash, action)?;
                Ok(to_value(&e.apply(t, &a, now).map_err(cite)?))
            }
            _ => unreachable!("a table's state is made by its own engine"),
        }
    }

    /// The action the plan takes for a player who does not act in time (poker: check or
    /// fold; Oko bere: the plan's automatic act, if any).
    pub fn automatic(&self, state: &PvpState) -> Option<Value> {
        match (self, state) {
            (PvpEngine::OkoBere(e), PvpState::OkoBere(s)) => {
                e.automatic_decision(s).map(|a| to_value(&a))
            }
            (PvpEngine::Poker(e), PvpState::Poker(t)) => {
                e.automatic_decision(t).map(|a| to_value(&a))
            }
            _ => unreachable!("a table's state is made by its own engine"),
        }
    }

    /// What the table waits for.
    pub fn expected(&self, state: &PvpState) -> Value {
        match (self, state) {
            (PvpEngine::OkoBere(e), PvpState::OkoBere(s)) => to_value(&e.expected(s)),
            (PvpEngine::Poker(e), PvpState::Poker(t)) => to_value(&e.expected(t)),
            _ => unreachable!("a table's state is made by its own engine"),
        }
    }

    /// Chips at the table (stacks, bank or pots, stakes in play): a table is closed only
    /// when every chip has been cashed out.
    pub fn chips_at_table_minor(&self, state: &PvpState) -> i128 {
        match state {
            PvpState::OkoBere(s) => s.chips_counted_minor(),
            PvpState::Poker(t) => i128::from(t.chips_at_table_minor()),
        }
    }
}
