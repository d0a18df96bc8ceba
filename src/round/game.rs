//! One interface over every family's engine, for the lifecycle.
//!
//! The lifecycle in [`super`] is the same for every game: a round opens, bets are placed and
//! checked, betting closes, the dealer system reports what happens (a spin, cards, players'
//! decisions) or pitboss draws it from the committed seed, and the round is settled or voided.
//! What differs per family lives here, as a dispatch over the pure engines of
//! [`crate::games`]: how a bet request becomes placements, which cards may come next, who must
//! decide, what the result is and what each bet pays. Nothing here does I/O.
//!
//! Cards are logged with their position as the engine names it (`player_1`, `banker_3`,
//! `home`, `board`, …); a round's cards are kept as a list of [`CardRecord`]s and read into
//! the engine's own deal type on every use, so the state holds one representation and a
//! replay re-checks every card against the rules.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::cards::{Card, Shoe};
use crate::games::baccarat::{
    BaccaratBetRequest, BaccaratCard, BaccaratEngine, BaccaratPlacement, Deal as BaccaratDeal,
};
use crate::games::blackjack::BlackjackEngine;
use crate::games::casino_holdem::{
    self as holdem, CasinoHoldemEngine, DealtCard, HoldemBetRequest, Next as HoldemNext,
};
use crate::games::roulette::{self, RouletteBetRequest, RouletteEngine};
use crate::games::top_card::{
    TopCardBetRequest, TopCardCard, TopCardDeal, TopCardEngine, TopCardPlacement,
};
use crate::games::{Payout, Refusal};
use crate::plan::model::Plan;
use crate::plan::rules::casino_holdem::Position as HoldemPosition;
use crate::plan::rules::top_card::Misdeal;
use crate::plan::rules::{Family, GameRules};

/// The stable codes of the lifecycle's card and decision handling.
pub mod code {
    /// The family's engine is not wired into the lifecycle.
    pub const FAMILY_NOT_SUPPORTED: &str = "family_not_supported";
    /// A bet request that is not the family's request shape.
    pub const MALFORMED_BET: &str = "malformed_bet";
    /// A position the family does not have.
    pub const BAD_POSITION: &str = "bad_position";
    /// The game has no cards (roulette) or no decisions.
    pub const NOT_IN_GAME: &str = "not_in_game";
    /// A card of which the shoe has already given every copy since the last shuffle.
    pub const CARD_NOT_IN_SHOE: &str = "card_not_in_shoe";
}

/// A card as logged: where it went and which card it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CardRecord {
    /// The position as the family names it: `player_1` … `banker_3` (baccarat), `home` /
    /// `away` (Top Card), `player` / `dealer` / `board` (Casino Hold'em).
    pub to: Position,
    pub card: Card,
}

/// A card as the dealer system reports it: with its position (`to`), except in blackjack,
/// where the rules place each card in dealing order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportedCard {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub to: Option<Position>,
    /// Rank then suit: `2`…`9`, `T` or `10`, `J`, `Q`, `K`, `A`, then `c`, `d`, `h`, `s` (or
    /// upper case, or the suit's symbol `♣♦♥♠`). Replies write `Ts`, `Ah`.
    #[schema(value_type = String, pattern = "^(10|[2-9TtJjQqKkAa])[cdhsCDHS♣♦♥♠]$", example = "AH")]
    pub card: Card,
}

/// A position name, checked by the family's engine when a card is dealt to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Position {
    #[serde(rename = "player_1")]
    Player1,
    #[serde(rename = "player_2")]
    Player2,
    #[serde(rename = "player_3")]
    Player3,
    #[serde(rename = "banker_1")]
    Banker1,
    #[serde(rename = "banker_2")]
    Banker2,
    #[serde(rename = "banker_3")]
    Banker3,
    Home,
    Away,
    Player,
    Dealer,
    Board,
}

impl Position {
    pub fn name(self) -> String {
        match serde_json::to_value(self) {
            Ok(Value::String(s)) => s,
            _ => unreachable!("positions serialise as strings"),
        }
    }

    /// Reads this name as the family's own position type.
    fn as_<T: for<'de> Deserialize<'de>>(self, family: Family) -> Result<T, Refusal> {
        serde_json::from_value(Value::String(self.name())).map_err(|_| {
            Refusal::new(
                code::BAD_POSITION,
                format!("{family} has no position '{}'", self.name()),
            )
        })
    }

    fn of<T: Serialize>(p: T) -> Position {
        serde_json::to_value(p)
            .and_then(serde_json::from_value)
            .expect("every engine position has a lifecycle name")
    }
}

/// What the deal expects next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "next", rename_all = "snake_case")]
pub enum Next {
    /// The next card goes to `to`.
    Card { to: Position },
    /// The players' decisions come first (Casino Hold'em after the flop).
    Decisions,
    /// Every card is dealt: the round can be settled.
    Complete,
}

/// A bet's placements, per family: what limits are held to and what is settled.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(untagged)]
pub enum Placements {
    Roulette(Vec<roulette::Placement>),
    Baccarat(Vec<BaccaratPlacement>),
    TopCard(Vec<TopCardPlacement>),
    CasinoHoldem(Vec<holdem::Placement>),
    Blackjack(Vec<super::blackjack::BlackjackPlacement>),
}

impl Placements {
    pub fn stake_minor(&self) -> i64 {
        match self {
            Placements::Roulette(v) => v.iter().map(|p| p.stake_minor).sum(),
            Placements::Baccarat(v) => v.iter().map(|p| p.stake_minor).sum(),
            Placements::TopCard(v) => v.iter().map(|p| p.stake_minor).sum(),
            Placements::CasinoHoldem(v) => v.iter().map(|p| p.stake_minor).sum(),
            Placements::Blackjack(v) => v.iter().map(|p| p.stake_minor).sum(),
        }
    }

    /// Reads logged placements as the family's type.
    pub fn parse(family: Family, v: &Value) -> Result<Placements, String> {
        let e = |e: serde_json::Error| format!("placements of a {family} bet: {e}");
        Ok(match family {
            Family::Roulette => Placements::Roulette(Vec::deserialize(v).map_err(e)?),
            Family::Baccarat => Placements::Baccarat(Vec::deserialize(v).map_err(e)?),
            Family::TopCard => Placements::TopCard(Vec::deserialize(v).map_err(e)?),
            Family::CasinoHoldem => Placements::CasinoHoldem(Vec::deserialize(v).map_err(e)?),
            Family::Blackjack => Placements::Blackjack(Vec::deserialize(v).map_err(e)?),
            other => return Err(format!("{other} bets are not played")),
        })
    }

    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).expect("placements serialise")
    }
}

/// One player's (or one bet's) settlement as the engine gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct Settled {
    /// The bets it covers, in order (one, or a Casino Hold'em player's every bet).
    pub bets: Vec<usize>,
    pub components: Vec<Payout>,
    /// The engine's reading of the player's hand (Casino Hold'em), for the operator and the log.
    pub detail: Option<Value>,
}

/// The engine of a plan's family.
pub enum Engine<'p> {
    Roulette(RouletteEngine<'p>),
    Baccarat(BaccaratEngine<'p>),
    TopCard(TopCardEngine<'p>),
    CasinoHoldem(CasinoHoldemEngine<'p>),
    Blackjack(BlackjackEngine<'p>),
}

fn parse_request<T: for<'de> Deserialize<'de>>(request: &Value) -> Result<T, Refusal> {
    T::deserialize(request).map_err(|e| Refusal::new(code::MALFORMED_BET, e.to_string()))
}

impl<'p> Engine<'p> {
    /// The engine of `plan`'s family; a family whose engine is not wired is refused when a
    /// table is opened, never half-played.
    pub fn new(plan: &'p Plan) -> Result<Engine<'p>, Refusal> {
        Ok(match plan.plan.family {
            Family::Roulette => Engine::Roulette(RouletteEngine::new(plan)?),
            Family::Baccarat => Engine::Baccarat(BaccaratEngine::new(plan)?),
            Family::TopCard => Engine::TopCard(TopCardEngine::new(plan)?),
            Family::CasinoHoldem => Engine::CasinoHoldem(CasinoHoldemEngine::new(plan)?),
            Family::Blackjack => Engine::Blackjack(BlackjackEngine::new(plan)?),
            other => {
                return Err(Refusal::new(
                    code::FAMILY_NOT_SUPPORTED,
                    format!(
                        "tables of the {other} family cannot be opened yet: its engine is not wired into the round lifecycle"
                    ),
                ))
            }
        })
    }

    pub fn family(&self) -> Family {
        match self {
            Engine::Roulette(_) => Family::Roulette,
            Engine::Baccarat(_) => Family::Baccarat,
            Engine::TopCard(_) => Family::TopCard,
            Engine::CasinoHoldem(_) => Family::CasinoHoldem,
            Engine::Blackjack(_) => Family::Blackjack,
        }
    }

    pub fn blackjack(&self) -> Option<&BlackjackEngine<'p>> {
        match self {
            Engine::Blackjack(e) => Some(e),
            _ => None,
        }
    }

    pub fn roulette(&self) -> Option<&RouletteEngine<'p>> {
        match self {
            Engine::Roulette(e) => Some(e),
            _ => None,
        }
    }

    /// Whether rounds are dealt from cards (everything but roulette).
    pub fn deals_cards(&self) -> bool {
        !matches!(self, Engine::Roulette(_))
    }

    /// The shoe of a card game, with whether it is kept from round to round (baccarat's and
    /// Top Card's eight-deck shoes are dealt until the dealer shuffles) or is a fresh deck
    /// each round (Casino Hold'em's single deck).
    pub fn shoe(&self, plan: &Plan) -> Option<(Shoe, bool)> {
        match &plan.rules {
            GameRules::Baccarat(r) => Some((r.shoe, true)),
            GameRules::TopCard(r) => Some((r.shoe, true)),
            GameRules::CasinoHoldem(r) => Some((r.shoe, false)),
            GameRules::Blackjack(r) => Some((r.shoe, true)),
            _ => None,
        }
    }

    /// The clause of the dealing rules, cited when a card is refused.
    pub fn dealing_clause(&self, plan: &Plan) -> Option<String> {
        match &plan.rules {
            GameRules::Baccarat(r) => Some(r.clause.clone()),
            GameRules::TopCard(r) => Some(r.clause.clone()),
            GameRules::CasinoHoldem(r) => Some(r.clause.clone()),
            GameRules::Blackjack(r) => Some(r.clause.clone()),
            _ => None,
        }
    }

    // ----- bets --------------------------------------------------------------------------

    /// Reads one bet request (the family's shape) against the plan.
    pub fn place(&self, request: &Value) -> Result<Placements, Refusal> {
        Ok(match self {
            Engine::Roulette(e) => {
                Placements::Roulette(e.place(&parse_request::<RouletteBetRequest>(request)?)?)
            }
            Engine::Baccarat(e) => Placements::Baccarat(vec![
                e.place(&parse_request::<BaccaratBetRequest>(request)?)?
            ]),
            Engine::TopCard(e) => {
                Placements::TopCard(vec![e.place(&parse_request::<TopCardBetRequest>(request)?)?])
            }
            Engine::CasinoHoldem(e) => {
                Placements::CasinoHoldem(e.place(&parse_request::<HoldemBetRequest>(request)?)?)
            }
            Engine::Blackjack(e) => {
                Placements::Blackjack(vec![super::blackjack::place(e, request)?])
            }
        })
    }

    /// Checks `new` with the same player's earlier placements of the round: cumulative
    /// limits per spot or bet type, and the bets a side bet requires.
    pub fn check_round<'a>(
        &self,
        existing: impl Iterator<Item = &'a Placements>,
        new: &Placements,
    ) -> Result<(), Refusal> {
        // The earlier placements are borrowed, not copied: a round's check reads every earlier
        // placement of the player, and copying them made each bet cost grow with the round.
        fn gather<'a, T: 'a>(
            existing: impl Iterator<Item = &'a Placements>,
            pick: impl Fn(&'a Placements) -> Option<&'a Vec<T>>,
        ) -> Vec<&'a T> {
            existing.filter_map(pick).flatten().collect()
        }
        match (self, new) {
            (Engine::Roulette(e), Placements::Roulette(n)) => e.check_cumulative(
                &gather(existing, |p| match p {
                    Placements::Roulette(v) => Some(v),
                    _ => None,
                }),
                n,
            ),
            (Engine::Baccarat(e), Placements::Baccarat(n)) => e.check_round(
                &gather(existing, |p| match p {
                    Placements::Baccarat(v) => Some(v),
                    _ => None,
                }),
                n,
            ),
            (Engine::TopCard(e), Placements::TopCard(n)) => e.check_round(
                &gather(existing, |p| match p {
                    Placements::TopCard(v) => Some(v),
                    _ => None,
                }),
                n,
            ),
            (Engine::CasinoHoldem(e), Placements::CasinoHoldem(n)) => e.check_cumulative(
                &gather(existing, |p| match p {
                    Placements::CasinoHoldem(v) => Some(v),
                    _ => None,
                }),
                n,
            ),
            // Blackjack bets are checked against the whole round (boxes and their owners) by
            // the lifecycle ([`super::blackjack::check_round`]).
            (Engine::Blackjack(_), Placements::Blackjack(_)) => Ok(()),
            _ => unreachable!("placements are made by the table's own engine"),
        }
    }

    // ----- cards -------------------------------------------------------------------------

    fn baccarat_cards(&self, cards: &[CardRecord]) -> Result<Vec<BaccaratCard>, Refusal> {
        cards
            .iter()
            .map(|c| {
                Ok(BaccaratCard {
                    to: c.to.as_(Family::Baccarat)?,
                    card: c.card,
                })
            })
            .collect()
    }

    fn top_card_cards(&self, cards: &[CardRecord]) -> Result<Vec<TopCardCard>, Refusal> {
        cards
            .iter()
            .map(|c| {
                Ok(TopCardCard {
                    to: c.to.as_(Family::TopCard)?,
                    card: c.card,
                })
            })
            .collect()
    }

    fn holdem_deal(
        &self,
        e: &CasinoHoldemEngine<'p>,
        cards: &[CardRecord],
        decisions_closed: bool,
    ) -> Result<holdem::Deal, Refusal> {
        let mut deal = holdem::Deal::default();
        for c in cards {
            if e.next(&deal) == HoldemNext::Decisions {
                e.close_decisions(&mut deal)?;
            }
            e.deal_card(&mut deal, c.to.as_(Family::CasinoHoldem)?, c.card)?;
        }
        if decisions_closed && e.next(&deal) == HoldemNext::Decisions {
            e.close_decisions(&mut deal)?;
        }
        Ok(deal)
    }

    /// What comes after `cards` (the round's cards so far, each already accepted).
    pub fn next(&self, cards: &[CardRecord], decisions_closed: bool) -> Result<Next, Refusal> {
        Ok(match self {
            Engine::Roulette(_) => return Err(no_cards()),
            Engine::Blackjack(_) => return Err(driven()),
            Engine::Baccarat(e) => match e.expect_next(&self.baccarat_cards(cards)?)? {
                BaccaratDeal::Card { to } => Next::Card {
                    to: Position::of(to),
                },
                BaccaratDeal::Complete => Next::Complete,
            },
            Engine::TopCard(e) => match e.expect_next(&self.top_card_cards(cards)?)? {
                TopCardDeal::Card { to } => Next::Card {
                    to: Position::of(to),
                },
                TopCardDeal::Complete => Next::Complete,
            },
            Engine::CasinoHoldem(e) => {
                holdem_next(e.next(&self.holdem_deal(e, cards, decisions_closed)?))
            }
        })
    }

    /// Accepts `card` after `cards` when the rules deal it there; says what comes next.
    pub fn accept_card(
        &self,
        cards: &[CardRecord],
        decisions_closed: bool,
        card: CardRecord,
    ) -> Result<Next, Refusal> {
        Ok(match self {
            Engine::Roulette(_) => return Err(no_cards()),
            Engine::Blackjack(_) => return Err(driven()),
            Engine::Baccarat(e) => {
                let new = BaccaratCard {
                    to: card.to.as_(Family::Baccarat)?,
                    card: card.card,
                };
                match e.accept_card(&self.baccarat_cards(cards)?, new)? {
                    BaccaratDeal::Card { to } => Next::Card {
                        to: Position::of(to),
                    },
                    BaccaratDeal::Complete => Next::Complete,
                }
            }
            Engine::TopCard(e) => {
                let new = TopCardCard {
                    to: card.to.as_(Family::TopCard)?,
                    card: card.card,
                };
                match e.accept_card(&self.top_card_cards(cards)?, new)? {
                    TopCardDeal::Card { to } => Next::Card {
                        to: Position::of(to),
                    },
                    TopCardDeal::Complete => Next::Complete,
                }
            }
            Engine::CasinoHoldem(e) => {
                let mut deal = self.holdem_deal(e, cards, decisions_closed)?;
                holdem_next(e.deal_card(
                    &mut deal,
                    card.to.as_(Family::CasinoHoldem)?,
                    card.card,
                )?)
            }
        })
    }

    /// Whether the plan re-deals a misdeal (Top Card's "Pravidlo platného kola"), with the
    /// rule's clause; other card games pause and repair, or void, under the error policy.
    pub fn redeals_misdeals(&self, plan: &Plan) -> Option<String> {
        match (self, &plan.rules) {
            (Engine::TopCard(e), GameRules::TopCard(r)) => match e.on_misdeal() {
                Misdeal::Redeal => Some(r.valid_round.clause.clone()),
            },
            _ => None,
        }
    }

    /// RNG mode: the round's whole deal from its seed, in dealing order (the engines'
    /// documented algorithms).
    pub fn rng_cards(&self, seed: [u8; 32]) -> Vec<CardRecord> {
        match self {
            Engine::Roulette(_) | Engine::Blackjack(_) => Vec::new(),
            Engine::Baccarat(e) => e
                .deal_from_seed(seed)
                .into_iter()
                .map(|c| CardRecord {
                    to: Position::of(c.to),
                    card: c.card,
                })
                .collect(),
            Engine::TopCard(e) => e
                .deal_from_seed(seed)
                .into_iter()
                .map(|c| CardRecord {
                    to: Position::of(c.to),
                    card: c.card,
                })
                .collect(),
            Engine::CasinoHoldem(e) => e
                .rng_deal(seed)
                .into_iter()
                .map(|DealtCard { position, card }| CardRecord {
                    to: Position::of(position),
                    card,
                })
                .collect(),
        }
    }

    // ----- decisions ---------------------------------------------------------------------

    /// Whether a player holding `placements` owes a decision (Casino Hold'em: an Ante and no
    /// Call).
    pub fn decision_required<'a>(&self, placements: impl Iterator<Item = &'a Placements>) -> bool {
        match self {
            Engine::CasinoHoldem(e) => e.decision_required(&holdem_placements(placements)),
            _ => false,
        }
    }

    /// The decision taken for a player who does not decide in time or is disconnected.
    pub fn automatic_decision(&self) -> Option<Value> {
        match self {
            Engine::CasinoHoldem(e) => {
                Some(serde_json::to_value(e.automatic_decision()).expect("decisions serialise"))
            }
            _ => None,
        }
    }

    pub fn decision_ms(&self) -> Option<u64> {
        match self {
            Engine::CasinoHoldem(e) => e.decision_ms(),
            _ => None,
        }
    }

    /// A player's decision: the placements it adds (a Call), if any.
    pub fn decide<'a>(
        &self,
        placements: impl Iterator<Item = &'a Placements>,
        cards: &[CardRecord],
        decision: &Value,
    ) -> Result<Option<Placements>, Refusal> {
        match self {
            Engine::CasinoHoldem(e) => {
                let d: holdem::Decision =
                    holdem::Decision::deserialize(decision).map_err(|_| {
                        Refusal::new(
                            "bad_decision",
                            format!("{decision} is not a decision of Casino Hold'em: call or fold"),
                        )
                    })?;
                let deal = self.holdem_deal(e, cards, false)?;
                Ok(e.decide(&holdem_placements(placements), &deal, d)?
                    .map(|p| Placements::CasinoHoldem(vec![p])))
            }
            _ => Err(Refusal::new(
                code::NOT_IN_GAME,
                format!("{} takes no player decisions", self.family()),
            )),
        }
    }

    // ----- outcome and settlement ---------------------------------------------------------

    /// The result of a complete deal, as logged and shown.
    pub fn outcome(&self, cards: &[CardRecord]) -> Result<Value, Refusal> {
        let v = match self {
            Engine::Roulette(_) => return Err(no_cards()),
            Engine::Blackjack(_) => return Err(driven()),
            Engine::Baccarat(e) => serde_json::to_value(e.outcome(&self.baccarat_cards(cards)?)?),
            Engine::TopCard(e) => serde_json::to_value(e.outcome(&self.top_card_cards(cards)?)?),
            Engine::CasinoHoldem(e) => {
                let deal = self.holdem_deal(e, cards, true)?;
                serde_json::to_value(serde_json::json!({
                    "player": deal.at(HoldemPosition::Player),
                    "dealer": deal.at(HoldemPosition::Dealer),
                    "board": deal.at(HoldemPosition::Board),
                }))
            }
        };
        Ok(v.expect("outcomes serialise"))
    }

    /// Settles the bets of a round (each bet's player and placements) on a complete deal (or
    /// roulette's number): one [`Settled`] per bet, or per player where the game settles a
    /// player's hand as a whole (Casino Hold'em).
    pub fn settle(
        &self,
        bets: &[(&str, &Placements)],
        cards: &[CardRecord],
        number: Option<u8>,
    ) -> Result<Vec<Settled>, Refusal> {
        let one = |i: usize, components: Vec<Payout>| Settled {
            bets: vec![i],
            components,
            detail: None,
        };
        match self {
            Engine::Blackjack(_) => Err(driven()),
            Engine::Roulette(e) => {
                let n = number.ok_or_else(no_cards)?;
                bets.iter()
                    .enumerate()
                    .map(|(i, (_, p))| match p {
                        Placements::Roulette(v) => Ok(one(i, e.settle(v, n)?)),
                        _ => unreachable!("roulette bets hold roulette placements"),
                    })
                    .collect()
            }
            Engine::Baccarat(e) => {
                let outcome = e.outcome(&self.baccarat_cards(cards)?)?;
                bets.iter()
                    .enumerate()
                    .map(|(i, (_, p))| match p {
                        Placements::Baccarat(v) => Ok(one(i, e.settle(v, &outcome)?)),
                        _ => unreachable!("baccarat bets hold baccarat placements"),
                    })
                    .collect()
            }
            Engine::TopCard(e) => {
                let outcome = e.outcome(&self.top_card_cards(cards)?)?;
                bets.iter()
                    .enumerate()
                    .map(|(i, (_, p))| match p {
                        Placements::TopCard(v) => Ok(one(i, e.settle(v, &outcome)?)),
                        _ => unreachable!("Top Card bets hold Top Card placements"),
                    })
                    .collect()
            }
            Engine::CasinoHoldem(e) => {
                let deal = self.holdem_deal(e, cards, true)?;
                // One hand per player: the player's bets (and the Call of the decision)
                // settle together, in the order of the player's first bet.
                let mut players: Vec<(&str, Vec<usize>)> = Vec::new();
                for (i, (player, _)) in bets.iter().enumerate() {
                    match players.iter_mut().find(|(p, _)| p == player) {
                        Some((_, v)) => v.push(i),
                        None => players.push((player, vec![i])),
                    }
                }
                players
                    .into_iter()
                    .map(|(_, idx)| {
                        let placements = holdem_placements(idx.iter().map(|&i| bets[i].1));
                        let s = e.settle(&placements, &deal)?;
                        Ok(Settled {
                            bets: idx,
                            components: s.payouts.iter().map(|p| p.payout.clone()).collect(),
                            detail: Some(serde_json::to_value(&s).expect("settlements serialise")),
                        })
                    })
                    .collect()
            }
        }
    }
}

fn holdem_next(n: HoldemNext) -> Next {
    match n {
        HoldemNext::Card { position } => Next::Card {
            to: Position::of(position),
        },
        HoldemNext::Decisions => Next::Decisions,
        HoldemNext::Complete => Next::Complete,
    }
}

fn holdem_placements<'a>(ps: impl Iterator<Item = &'a Placements>) -> Vec<holdem::Placement> {
    ps.flat_map(|p| match p {
        Placements::CasinoHoldem(v) => v.iter().cloned(),
        _ => unreachable!("Casino Hold'em bets hold Casino Hold'em placements"),
    })
    .collect()
}

/// Blackjack's cards, decisions and settlement go through its round driver
/// ([`super::blackjack`]), not through positions named by the dealer system.
fn driven() -> Refusal {
    Refusal::new(
        code::NOT_IN_GAME,
        "blackjack rounds are driven by the blackjack round driver",
    )
}

fn no_cards() -> Refusal {
    Refusal::new(code::NOT_IN_GAME, "roulette is not dealt from cards")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_engine_position_has_a_lifecycle_name() {
        use crate::games::baccarat::Position as B;
        use crate::plan::rules::top_card::Side;
        for p in [
            B::Player1,
            B::Player2,
            B::Player3,
            B::Banker1,
            B::Banker2,
            B::Banker3,
        ] {
            let _ = Position::of(p);
        }
        let _ = Position::of(Side::Home);
        let _ = Position::of(Side::Away);
        for p in [
            HoldemPosition::Player,
            HoldemPosition::Dealer,
            HoldemPosition::Board,
        ] {
            let _ = Position::of(p);
        }
    }
}
