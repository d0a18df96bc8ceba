//! "Showdown", "Remízy", "Misdeal", "Nesrovnalosti": the pots, who shows first, who wins
//! what, the odd chip, and the hands that are dealt again or voided.

use super::betting::non_folded;
use super::{
    code, Action, Effect, Hand, Phase, PokerRoomEngine, Positions, Pot, SeatNo, Share,
    ShowdownFirst, ShowdownPot, ShowdownState, Status, Street, Table, VoidReason,
};
use crate::cards::Card;
use crate::games::poker_hand;
use crate::games::Refusal;
use crate::plan::rules::poker::{AggressionScope, Consequence, IrregularityKind, MisdealKind};

/// The pots of the hand as it stands: the main pot (index 0) and the side pots in the order
/// they formed. A layer is cut at each all-in amount of a player still in; every player's
/// chips up to that amount go in, and the players still in who put in at least that much may
/// win it.
pub fn pots(h: &Hand) -> Vec<Pot> {
    let live: Vec<_> = h.players.iter().filter(|p| !p.folded).collect();
    let top = live.iter().map(|p| p.in_hand_minor).max().unwrap_or(0);
    let mut levels: Vec<i64> = live
        .iter()
        .filter(|p| p.all_in && p.in_hand_minor < top)
        .map(|p| p.in_hand_minor)
        .collect();
    levels.push(top);
    levels.sort_unstable();
    levels.dedup();
    let mut pots = Vec::new();
    let mut prev = 0;
    for (k, &level) in levels.iter().enumerate() {
        // The last layer takes every chip above the one before (a folded player's chips above
        // the top, if any, are not lost).
        let last = k + 1 == levels.len();
        let amount_minor: i64 = h
            .players
            .iter()
            .map(|p| {
                let c = p.in_hand_minor;
                let hi = if last { c } else { c.min(level) };
                (hi - c.min(prev)).max(0)
            })
            .sum();
        if amount_minor > 0 {
            pots.push(Pot {
                amount_minor,
                eligible: live
                    .iter()
                    .filter(|p| p.in_hand_minor >= level)
                    .map(|p| p.seat)
                    .collect(),
                level_minor: level,
            });
        }
        prev = level;
    }
    pots
}

/// Cards for a hand in RNG mode, from a shuffled deck (`crate::rng::shuffled`): the hole
/// cards one at a time around the table from the player after the button ("Hráč, který má
/// button, dostává jako poslední karty"), then a burn card before each of flop, turn and
/// river.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RngDeal {
    /// One `hole_cards` action per player, in dealing order.
    pub hole_cards: Vec<Action>,
    /// The flop, the turn and the river as `board` actions with their burn cards.
    pub boards: [Action; 3],
}

/// The deal of `h` from `shuffled` (taken from index 0); none if the deck is too short.
pub fn rng_deal(h: &Hand, shuffled: &[Card]) -> Option<RngDeal> {
    let n = h.players.len();
    let first = h
        .players
        .iter()
        .position(|p| p.seat > h.button)
        .unwrap_or(0);
    let order: Vec<SeatNo> = (0..n).map(|k| h.players[(first + k) % n].seat).collect();
    let needed = 2 * n + 8;
    if shuffled.len() < needed {
        return None;
    }
    let hole_cards = order
        .iter()
        .enumerate()
        .map(|(k, &seat)| Action::HoleCards {
            seat,
            cards: [shuffled[k], shuffled[n + k]],
        })
        .collect();
    let b = &shuffled[2 * n..];
    Some(RngDeal {
        hole_cards,
        boards: [
            Action::Board {
                cards: b[1..4].to_vec(),
                burn: Some(b[0]),
            },
            Action::Board {
                cards: vec![b[5]],
                burn: Some(b[4]),
            },
            Action::Board {
                cards: vec![b[7]],
                burn: Some(b[6]),
            },
        ],
    })
}

impl PokerRoomEngine<'_> {
    /// The showdown after the river: "vždy musí první ukázat karty ten hráč, který byl jako
    /// poslední agresivní … Pokud … nikdo nenavýší sázku …, ukazuje první karty hráč, který je
    /// první na řadě", then clockwise.
    pub(super) fn start_showdown(&self, t: &mut Table, mut h: Hand, fx: &mut Vec<Effect>) {
        let in_hand = |s: SeatNo| h.player(s).is_some_and(|p| !p.folded);
        let aggressor = h
            .last_aggression
            .filter(|a| match self.rules.showdown.aggression_scope {
                AggressionScope::WholeHand => true,
                AggressionScope::LastBettingRound => a.street == Street::River,
            })
            .map(|a| a.seat)
            .filter(|&s| in_hand(s));
        let (first, start) = match aggressor {
            Some(s) => (ShowdownFirst::LastAggressor, s),
            None => (
                ShowdownFirst::FirstToAct,
                t.clockwise_after(h.button)
                    .find(|&s| in_hand(s))
                    .expect("two players are in the showdown"),
            ),
        };
        let mut order = vec![start];
        order.extend(
            t.clockwise_after(start)
                .filter(|&s| s != start && in_hand(s)),
        );
        fx.push(Effect::ShowdownOrder {
            first,
            order: order.clone(),
        });
        h.showdown = Some(ShowdownState {
            order,
            next: 0,
            pots: pots(&h)
                .into_iter()
                .map(|pot| ShowdownPot {
                    live: pot.eligible.clone(),
                    pot,
                })
                .collect(),
        });
        h.phase = Phase::Showdown;
        self.next_to_show(t, h, 0, fx);
    }

    /// Gives the showdown to the first player from `from` on who still contests a pot with
    /// somebody; when nobody does, the pots are paid.
    fn next_to_show(&self, t: &mut Table, mut h: Hand, from: usize, fx: &mut Vec<Effect>) {
        let s = h.showdown.as_ref().expect("in the showdown");
        let must_decide = |seat: SeatNo| {
            s.pots
                .iter()
                .any(|sp| sp.live.len() > 1 && sp.live.contains(&seat))
        };
        let next = (from..s.order.len()).find(|&k| must_decide(s.order[k]));
        match next {
            Some(k) => {
                h.showdown.as_mut().expect("in the showdown").next = k;
                t.hand = Some(h);
            }
            None => self.pay(t, h, fx),
        }
    }

    /// "Aby měl hráč nárok na jakoukoliv výhru … musí položit všechny své karty na stůl lícem
    /// nahoru": a player shows or mucks in the showdown's order. A muck concedes the pots
    /// somebody else still contests.
    pub(super) fn show(
        &self,
        t: &mut Table,
        seat: SeatNo,
        shows: bool,
        fx: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        let clause = self.rules.showdown.clause.clone();
        let h = self.hand_in_progress(t)?;
        let Some(s) = h.showdown.as_ref().filter(|_| h.phase == Phase::Showdown) else {
            return Err(self.refuse(code::NOT_EXPECTED, "no showdown is under way", &clause));
        };
        let due = s.order[s.next];
        if due != seat {
            return Err(self.refuse(
                code::NOT_YOUR_TURN,
                format!("seat {due} shows or mucks first, not seat {seat}"),
                &clause,
            ));
        }
        let mut h = t.hand.take().expect("checked above");
        let i = h.index(seat).expect("a player in the showdown is dealt in");
        if shows {
            let hole = h.players[i]
                .hole
                .expect("every player in the showdown has cards");
            let mut cards = hole.to_vec();
            cards.extend(&h.board);
            let rank = poker_hand::evaluate(&cards).expect("seven distinct cards");
            h.players[i].shown = Some(rank);
            fx.push(Effect::Shown {
                seat,
                cards: hole,
                hand: rank,
            });
        } else {
            h.players[i].mucked = true;
            let s = h.showdown.as_mut().expect("in the showdown");
            for sp in &mut s.pots {
                if sp.live.len() > 1 {
                    sp.live.retain(|&x| x != seat);
                }
            }
            fx.push(Effect::Mucked { seat });
        }
        let from = h.showdown.as_ref().expect("in the showdown").next + 1;
        self.next_to_show(t, h, from, fx);
        Ok(())
    }

    /// Pays every pot: "Pokud existuje vedlejší bank … je nejdříve vyhodnocený tento side pot a
    /// až po něm hlavní bank. Pokud je side potů více, vyhodnocuje se nejdříve side pot, ve
    /// kterém jsou hráči, kteří měli na začátku hry nejvíce žetonů": the last side pot first,
    /// down to the main pot.
    fn pay(&self, t: &mut Table, h: Hand, fx: &mut Vec<Effect>) {
        let s = h.showdown.as_ref().expect("in the showdown");
        for (k, sp) in s.pots.iter().enumerate().rev() {
            let (winners, hand) = if sp.live.len() == 1 {
                (sp.live.clone(), None)
            } else {
                let rank = |seat: SeatNo| {
                    h.player(seat)
                        .and_then(|p| p.shown)
                        .expect("every player contesting a pot at its end has shown")
                };
                let best = sp.live.iter().map(|&x| rank(x)).max().expect("contested");
                (
                    sp.live
                        .iter()
                        .copied()
                        .filter(|&x| rank(x) == best)
                        .collect(),
                    Some(best),
                )
            };
            let shares = self.split(t, &h, sp.pot.amount_minor, &winners);
            credit(t, &shares);
            fx.push(Effect::PotAwarded {
                pot: k,
                amount_minor: sp.pot.amount_minor,
                shares,
                hand,
            });
        }
        self.end_hand(t, h, fx);
    }

    /// Everybody else folded: the last player takes every pot without showing.
    pub(super) fn award_uncontested(&self, t: &mut Table, h: Hand, fx: &mut Vec<Effect>) {
        debug_assert_eq!(non_folded(&h), 1);
        for (k, pot) in pots(&h).into_iter().enumerate().rev() {
            let shares = self.split(t, &h, pot.amount_minor, &pot.eligible);
            credit(t, &shares);
            fx.push(Effect::PotAwarded {
                pot: k,
                amount_minor: pot.amount_minor,
                shares,
                hand: None,
            });
        }
        self.end_hand(t, h, fx);
    }

    /// "Remízy": a pot split between `winners` in whole smallest chips ("Žeton, který zůstane
    /// navíc je rozdělen na nejmenší žetony"); an odd chip goes to the first winner after the
    /// button in the direction of play ("sedí první za buttonem ve směru hry"), and with
    /// several odd chips one each to the winners in that order.
    pub(super) fn split(&self, t: &Table, h: &Hand, amount: i64, winners: &[SeatNo]) -> Vec<Share> {
        let chip = self.rules.smallest_chip;
        let mut order: Vec<SeatNo> = t
            .clockwise_after(h.button)
            .filter(|s| winners.contains(s))
            .collect();
        if order.is_empty() {
            order = winners.to_vec();
        }
        let n = i64::try_from(order.len()).expect("a handful of winners");
        let units = amount / chip;
        let below_a_chip = amount % chip;
        let (each, odd) = (units / n, units % n);
        order
            .iter()
            .enumerate()
            .map(|(k, &seat)| {
                let k = i64::try_from(k).expect("a handful of winners");
                let mut amount_minor = each * chip + if k < odd { chip } else { 0 };
                if k == 0 {
                    amount_minor += below_a_chip;
                }
                Share { seat, amount_minor }
            })
            .collect()
    }

    fn end_hand(&self, t: &mut Table, h: Hand, fx: &mut Vec<Effect>) {
        t.positions = Some(Positions {
            button: h.button,
            small_blind: h.small_blind_seat,
            big_blind: h.big_blind,
        });
        t.drawn_button = None;
        for p in &h.players {
            if let Some(s) = t.seat_mut(p.seat) {
                if matches!(s.status, Status::New(_)) {
                    s.status = Status::Playing;
                }
            }
        }
        fx.push(Effect::HandEnded { hand: h.number });
        t.hand = None;
    }

    /// Every chip of the hand goes back to the player who put it in; the button does not move
    /// (the hand is dealt again).
    pub(super) fn void_hand(
        &self,
        t: &mut Table,
        reason: VoidReason,
        clause: &str,
        fx: &mut Vec<Effect>,
    ) {
        let h = t.hand.take().expect("a hand to void");
        let returned: Vec<Share> = h
            .players
            .iter()
            .filter(|p| p.in_hand_minor > 0)
            .map(|p| Share {
                seat: p.seat,
                amount_minor: p.in_hand_minor,
            })
            .collect();
        credit(t, &returned);
        fx.push(Effect::HandVoided {
            hand: h.number,
            reason,
            returned,
            clause: clause.to_string(),
        });
    }

    // ----- Misdeal -----

    /// "Následující situace jsou misdealem pouze v případě že, se na chybu přijde dříve … než
    /// dva hráči rozehrají hru (provedou nějakou akci – bet/fold/call...)."
    pub(super) fn misdeal(
        &self,
        t: &mut Table,
        cause: MisdealKind,
        fx: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        let m = &self.rules.misdeal;
        let Some(item) = m.causes.iter().find(|c| c.id == cause) else {
            return Err(self.refuse(
                code::NOT_IN_PLAN,
                format!(
                    "{} is not a misdeal situation of this plan",
                    crate::games::wire_name(&cause)
                ),
                &m.clause,
            ));
        };
        let h = self.hand_in_progress(t)?;
        match item.consequence {
            Consequence::Misdeal => {
                let acted = h.players_acted.len();
                if acted >= usize::from(m.only_before_players_acted) {
                    return Err(self.refuse(
                        code::PLAY_STARTED,
                        format!(
                            "{acted} players have acted: \"Pokud hra začne …, misdeal už nemůže nastat\"; the hand stands and no blind is returned"
                        ),
                        &format!("{} 10.", m.clause),
                    ));
                }
                self.void_hand(t, VoidReason::Misdeal { cause }, &item.clause, fx);
                Ok(())
            }
            Consequence::ReshuffleAndRedealStreet => self.redeal_street(t, cause, &item.clause, fx),
            consequence => {
                fx.push(Effect::Noted {
                    consequence,
                    clause: item.clause.clone(),
                });
                Ok(())
            }
        }
    }

    /// "Pokud je při flopu otočena jedna nebo více karet navíc, musí být flop rozdán znovu
    /// (znovu se zamíchá balíček karet už bez spálené karty). Stejný postup platí i … u
    /// turnu": the street's cards, if reported and nobody acted on them yet, go back; the
    /// burn card stays burnt.
    fn redeal_street(
        &self,
        t: &mut Table,
        cause: MisdealKind,
        clause: &str,
        fx: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        let street = match cause {
            MisdealKind::ExtraCardExposedOnFlop => Street::Flop,
            MisdealKind::ExtraCardExposedOnTurn => Street::Turn,
            other => {
                return Err(self.refuse(
                    code::NOT_APPLICABLE,
                    format!(
                        "{} names no street to deal again",
                        crate::games::wire_name(&other)
                    ),
                    clause,
                ))
            }
        };
        let h = t.hand.as_mut().expect("checked by the caller");
        let awaited = h.phase == Phase::AwaitingBoard && h.street.next() == Some(street);
        let untouched =
            h.phase == Phase::Betting && h.street == street && h.players.iter().all(|p| !p.acted);
        if untouched {
            let keep = h.board.len() - street.cards();
            h.board.truncate(keep);
            h.street = match street {
                Street::Flop => Street::Preflop,
                _ => Street::Flop,
            };
            h.phase = Phase::AwaitingBoard;
            h.to_act = None;
        } else if !awaited {
            return Err(self.refuse(
                code::NOT_APPLICABLE,
                format!(
                    "the {} is not the street being dealt, or its betting has begun",
                    crate::games::wire_name(&street)
                ),
                clause,
            ));
        }
        fx.push(Effect::Noted {
            consequence: Consequence::ReshuffleAndRedealStreet,
            clause: clause.to_string(),
        });
        Ok(())
    }

    // ----- Nesrovnalosti -----

    pub(super) fn irregularity(
        &self,
        t: &mut Table,
        kind: IrregularityKind,
        seat: Option<SeatNo>,
        fx: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        let Some(item) = self.rules.irregularities.iter().find(|i| i.id == kind) else {
            return Err(self.refuse(
                code::NOT_IN_PLAN,
                format!(
                    "{} is not an irregularity of this plan",
                    crate::games::wire_name(&kind)
                ),
                &self.rules.clause,
            ));
        };
        let clause = item.clause.clone();
        match item.consequence {
            // "všechny úkony jsou neplatné a všechny žetony se vrací svým původním majitelům"
            Consequence::VoidAllActionReturnChips => {
                self.hand_in_progress(t)?;
                self.void_hand(t, VoidReason::Irregularity { kind }, &clause, fx);
                Ok(())
            }
            Consequence::HandDead => self.kill_hand(t, seat, &clause, fx),
            Consequence::Misdeal => self.misdeal_by_irregularity(t, kind, &clause, fx),
            consequence => {
                fx.push(Effect::Noted {
                    consequence,
                    clause,
                });
                Ok(())
            }
        }
    }

    fn misdeal_by_irregularity(
        &self,
        t: &mut Table,
        kind: IrregularityKind,
        clause: &str,
        fx: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        let h = self.hand_in_progress(t)?;
        if h.players_acted.len() >= usize::from(self.rules.misdeal.only_before_players_acted) {
            return Err(self.refuse(code::PLAY_STARTED, "the hand stands", clause));
        }
        self.void_hand(t, VoidReason::Irregularity { kind }, clause, fx);
        Ok(())
    }

    /// A dead hand ("karty sebere jako foldnuté", "ruka považována za mrtvou"): folded, during
    /// the betting.
    fn kill_hand(
        &self,
        t: &mut Table,
        seat: Option<SeatNo>,
        clause: &str,
        fx: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        let h = self.hand_in_progress(t)?;
        if !matches!(h.phase, Phase::Betting | Phase::AwaitingBoard) {
            return Err(self.refuse(
                code::NOT_APPLICABLE,
                "a hand is declared dead during the betting (at the showdown the player mucks)",
                clause,
            ));
        }
        let Some(i) = seat
            .and_then(|s| h.index(s))
            .filter(|&i| !h.players[i].folded)
        else {
            return Err(self.refuse(
                code::NOT_DEALT_IN,
                "name the seat of a player still in the hand",
                clause,
            ));
        };
        let mut h = t.hand.take().expect("checked above");
        h.players[i].folded = true;
        let seat = h.players[i].seat;
        fx.push(Effect::HandKilled {
            seat,
            clause: clause.to_string(),
        });
        if non_folded(&h) == 1 {
            return self.close_round(t, h, fx);
        }
        if h.phase == Phase::Betting {
            let from = h.to_act.unwrap_or(seat);
            return self.resume(t, h, from, fx);
        }
        t.hand = Some(h);
        Ok(())
    }
}

fn credit(t: &mut Table, shares: &[Share]) {
    for s in shares {
        t.seat_mut(s.seat)
            .expect("a player of the hand keeps his seat until it ends")
            .stack_minor += s.amount_minor;
    }
}
