//! Stakes returned before a round is settled, each a `bet_refunded` event with its reason and
//! clause (the bet then takes no further part in the round; the rest is settled as usual):
//!
//! - a **partial void** under the plan's error policy, where it may cancel the round "pro
//!   některé anebo všechny sázející" (`cancel_scope = "some_or_all_players"`): the floor
//!   names players or bets, and their stakes are returned;
//! - a **withdrawal** by the player before betting closes, where the plan allows it (SYNOT
//!   Baccarat: "Do vyhlášení konce sázek a jejich potvrzení lze sázky odebrat").
//!
//! Either is refused when what would remain breaks a rule of the round (a side bet left
//! without its main bet, a Bet Behind without its box).

use chrono::{DateTime, Utc};

use super::{
    blackjack, check_id, engine, refuse, BetRecord, Engine, Event, Phase, Placements, RoundState,
    State,
};
use crate::games::Refusal;
use crate::plan::model::CancelScope;
use crate::plan::LoadedPlan;

/// The stable codes of this module's refusals.
pub mod code {
    /// The plan's error policy cancels a round for all players only.
    pub const PARTIAL_VOID_NOT_ALLOWED: &str = "partial_void_not_allowed";
    /// A blackjack round whose cards are dealt, or a Casino Hold'em round in its decision
    /// time: the bets are in play together.
    pub const PARTIAL_VOID_NOT_POSSIBLE: &str = "partial_void_not_possible";
    /// A named bet is not a live bet of the round (or not the player's).
    pub const BET_NOT_LIVE: &str = "bet_not_live";
    /// A named player holds no live bet in the round.
    pub const NO_LIVE_BET: &str = "no_live_bet";
    /// The plan gives no withdrawal of bets.
    pub const WITHDRAWAL_NOT_ALLOWED: &str = "withdrawal_not_allowed";
    /// What would remain breaks a rule of the round.
    pub const BETS_DEPEND: &str = "bets_depend";
    /// A request naming nothing, or too much.
    pub const BAD_REFUND_REQUEST: &str = "bad_refund_request";
}

/// Most players or bets one request names.
pub const MAX_NAMED: usize = 500;

impl State {
    /// A void of some players' or bets' stakes under the plan's error policy: each named bet
    /// (and every live bet of each named player) is refunded; the rest of the round goes on
    /// and is settled.
    pub fn decide_partial_void(
        &self,
        operator: &str,
        round: &str,
        reason: &str,
        players: &[String],
        bets: &[String],
    ) -> Result<Vec<Event>, Refusal> {
        let r = self.round_of_operator(operator, round)?;
        if matches!(r.phase, Phase::Settled | Phase::Voided) {
            return Err(refuse(
                "out_of_order",
                format!("round {round} is already {}", r.phase),
            ));
        }
        if reason.trim().is_empty() || reason.len() > 500 {
            return Err(refuse(
                "bad_reason",
                "a void states its reason (1–500 characters)",
            ));
        }
        named_count(players.len() + bets.len())?;
        let plan = self.plan_of_round(r);
        let policy = &plan.plan.policies.error;
        if policy.cancel_scope != CancelScope::SomeOrAllPlayers {
            return Err(refuse(
                code::PARTIAL_VOID_NOT_ALLOWED,
                format!(
                    "{}'s error policy cancels a round for all players only: void the whole round",
                    plan.key()
                ),
            )
            .with_plan(&plan.key())
            .clause(policy.clause.clone()));
        }
        let eng = engine(&plan)?;
        if r.blackjack.is_some() {
            return Err(refuse(
                code::PARTIAL_VOID_NOT_POSSIBLE,
                format!(
                    "round {round}'s cards are dealt: its boxes, Bets Behind and the dealer's hand are played together; void the whole round"
                ),
            )
            .with_plan(&plan.key())
            .clause(policy.clause.clone()));
        }
        if r.phase == Phase::Decisions {
            return Err(refuse(
                code::PARTIAL_VOID_NOT_POSSIBLE,
                format!(
                    "round {round} is awaiting the players' decisions: void stakes before the decision time opens or after it closes"
                ),
            )
            .with_plan(&plan.key())
            .clause(policy.clause.clone()));
        }
        let mut chosen: Vec<&BetRecord> = Vec::new();
        for p in players {
            check_id("player", p)?;
            let mine: Vec<&BetRecord> = live(r).filter(|b| &b.player == p).collect();
            if mine.is_empty() {
                return Err(refuse(
                    code::NO_LIVE_BET,
                    format!("player {p} holds no live bet in round {round}"),
                ));
            }
            chosen.extend(mine);
        }
        for id in bets {
            let b = live(r).find(|b| &b.bet == id).ok_or_else(|| {
                refuse(
                    code::BET_NOT_LIVE,
                    format!("{id} is not a live bet of round {round}"),
                )
            })?;
            chosen.push(b);
        }
        chosen.sort_by_key(|b| index_of(r, &b.bet));
        chosen.dedup_by(|a, b| a.bet == b.bet);
        let gone: Vec<&str> = chosen.iter().map(|b| b.bet.as_str()).collect();
        check_remaining(r, &eng, &plan, &gone)?;
        // A Casino Hold'em hand is settled as one: its bets go together.
        if let Engine::CasinoHoldem(_) = eng {
            for b in &chosen {
                if live(r).any(|o| o.player == b.player && !gone.contains(&o.bet.as_str())) {
                    return Err(refuse(
                        code::BETS_DEPEND,
                        format!(
                            "player {}'s bets in round {round} are settled as one hand: name the player, or every bet of his",
                            b.player
                        ),
                    )
                    .with_plan(&plan.key())
                    .clause(policy.clause.clone()));
                }
            }
        }
        Ok(chosen
            .into_iter()
            .map(|b| Event::BetRefunded {
                round: round.to_string(),
                bet: b.bet.clone(),
                player: b.player.clone(),
                refund_minor: b.stake_minor,
                reason: format!("void for some players: {reason}"),
                clause: policy.clause.clone(),
            })
            .collect())
    }

    /// A player withdraws bets (`bets`; none named: every live bet of his) before betting
    /// closes, where the plan allows it.
    pub fn decide_withdrawal(
        &self,
        operator: &str,
        round: &str,
        player: &str,
        bets: &[String],
        now: DateTime<Utc>,
    ) -> Result<Vec<Event>, Refusal> {
        let r = self.round_of_operator(operator, round)?;
        check_id("player", player)?;
        named_count(bets.len().max(1))?;
        let plan = self.plan_of_round(r);
        let Some(policy) = plan
            .plan
            .policies
            .withdrawal
            .as_ref()
            .filter(|w| w.before_betting_closes)
        else {
            return Err(refuse(
                code::WITHDRAWAL_NOT_ALLOWED,
                format!(
                    "{} gives no withdrawal of a bet once placed: its section ({}) has no such rule",
                    plan.key(),
                    plan.plan.source.section
                ),
            )
            .with_plan(&plan.key())
            .clause(format!(
                "{} (no withdrawal of bets)",
                plan.plan.source.section
            )));
        };
        if r.phase != Phase::Betting || now > r.betting_deadline {
            return Err(refuse(
                "betting_closed",
                format!("betting on round {round} is closed: bets can no longer be withdrawn"),
            )
            .with_plan(&plan.key())
            .clause(policy.clause.clone()));
        }
        let mine: Vec<&BetRecord> = live(r).filter(|b| b.player == player).collect();
        let chosen: Vec<&BetRecord> = if bets.is_empty() {
            if mine.is_empty() {
                return Err(refuse(
                    code::NO_LIVE_BET,
                    format!("player {player} holds no live bet in round {round}"),
                ));
            }
            mine
        } else {
            let mut out = Vec::new();
            for id in bets {
                let b = mine.iter().find(|b| &b.bet == id).ok_or_else(|| {
                    refuse(
                        code::BET_NOT_LIVE,
                        format!("{id} is not a live bet of player {player} in round {round}"),
                    )
                })?;
                if !out.iter().any(|o: &&BetRecord| o.bet == b.bet) {
                    out.push(*b);
                }
            }
            out
        };
        let gone: Vec<&str> = chosen.iter().map(|b| b.bet.as_str()).collect();
        let eng = engine(&plan)?;
        check_remaining(r, &eng, &plan, &gone)?;
        Ok(chosen
            .into_iter()
            .map(|b| Event::BetRefunded {
                round: round.to_string(),
                bet: b.bet.clone(),
                player: b.player.clone(),
                refund_minor: b.stake_minor,
                reason: "withdrawn by the player before betting closed".into(),
                clause: policy.clause.clone(),
            })
            .collect())
    }
}

fn live(r: &RoundState) -> impl Iterator<Item = &BetRecord> + Clone {
    r.bets.iter().filter(|b| !b.refunded)
}

fn index_of(r: &RoundState, bet: &str) -> usize {
    r.bets
        .iter()
        .position(|b| b.bet == bet)
        .unwrap_or(usize::MAX)
}

fn named_count(n: usize) -> Result<(), Refusal> {
    if n == 0 || n > MAX_NAMED {
        return Err(refuse(
            code::BAD_REFUND_REQUEST,
            format!("a request names 1–{MAX_NAMED} players or bets, not {n}"),
        ));
    }
    Ok(())
}

/// The bets that would remain, taken again in the order they were placed, must each still be
/// acceptable beside those before it: no side bet left without its main bet, no Bet Behind
/// without its box.
fn check_remaining(
    r: &RoundState,
    eng: &Engine<'_>,
    plan: &LoadedPlan,
    gone: &[&str],
) -> Result<(), Refusal> {
    let remaining: Vec<&BetRecord> = live(r)
        .filter(|b| !gone.contains(&b.bet.as_str()))
        .collect();
    let why = |e: Refusal, b: &BetRecord| {
        let mut e = e.with_plan(&plan.key());
        e.message = format!(
            "bet {} of player {} could not stand without the others: {}",
            b.bet, b.player, e.message
        );
        e.code = code::BETS_DEPEND.to_string();
        e
    };
    for (i, b) in remaining.iter().enumerate() {
        let before = remaining[..i]
            .iter()
            .filter(|o| o.player == b.player)
            .map(|o| &o.placements);
        eng.check_round(before, &b.placements)
            .map_err(|e| why(e, b))?;
        if let (Engine::Blackjack(bj), Placements::Blackjack(new)) = (eng, &b.placements) {
            let others = remaining[..i]
                .iter()
                .filter_map(|o| match &o.placements {
                    Placements::Blackjack(v) => Some((o.player.as_str(), &v[0])),
                    _ => None,
                })
                .collect::<Vec<_>>();
            blackjack::check_round(bj, others.iter().copied(), &b.player, &new[0])
                .map_err(|e| why(e, b))?;
        }
    }
    Ok(())
}
