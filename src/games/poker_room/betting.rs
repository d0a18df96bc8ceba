//! "Sázení a zvyšování (betting and raising)": whose turn it is, what he may do, how much,
//! and what chips pushed in without a word mean; the deal of the hole cards and the board.

use super::{
    code, Aggression, Declared, Effect, Hand, Legal, Move, Phase, PokerRoomEngine, SeatNo, Street,
    Table, Turn,
};
use crate::cards::Card;
use crate::games::Refusal;
use crate::plan::rules::poker::{BettingStructure, Consequence, IrregularityKind, ShortAllIn};

/// A decision reduced to what it does with the chips.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Go {
    Fold,
    Check,
    Call,
    /// The player's chips in the round become this (a bet, a raise, or an all-in).
    To(i64),
}

/// Everything a decision of player `i` is checked against.
#[derive(Debug, Clone, Copy)]
struct Options {
    stack: i64,
    in_round: i64,
    /// What he must put in to match the bet: the round's bet or, when nobody else can act any
    /// more, the most any other player still in has put in.
    to_call: i64,
    /// No bet in this round yet: the next chips in are a bet, not a raise.
    opening: bool,
    /// He may bet or raise (somebody can answer, the betting is open to him, the cap is not
    /// reached, he has chips beyond the call).
    may_raise: bool,
    /// Why not, when he may not.
    why_not: &'static str,
    min_to: i64,
    /// The last full bet or raise of the round: what a raise adds at least.
    full_raise: i64,
    /// The most he may make it: all his chips, or the pot in pot-limit.
    max_to: i64,
    all_in_to: i64,
}

fn stack(t: &Table, seat: SeatNo) -> i64 {
    t.seat(seat).map_or(0, |s| s.stack_minor)
}

fn can_act(h: &Hand, i: usize) -> bool {
    let p = &h.players[i];
    !p.folded && !p.all_in
}

fn others_can_act(h: &Hand, i: usize) -> bool {
    (0..h.players.len()).any(|j| j != i && can_act(h, j))
}

fn max_other_in_round(h: &Hand, i: usize) -> i64 {
    h.players
        .iter()
        .enumerate()
        .filter(|(j, p)| *j != i && !p.folded)
        .map(|(_, p)| p.in_round_minor)
        .max()
        .unwrap_or(0)
}

fn to_match(h: &Hand, i: usize) -> i64 {
    if others_can_act(h, i) {
        h.current_bet_minor
    } else {
        h.current_bet_minor.min(max_other_in_round(h, i))
    }
}

/// Whether player `i` still has a decision to take in this betting round.
fn needs_to_act(h: &Hand, i: usize) -> bool {
    if !can_act(h, i) {
        return false;
    }
    let p = &h.players[i];
    if others_can_act(h, i) {
        !p.acted || p.in_round_minor < h.current_bet_minor
    } else {
        p.in_round_minor < to_match(h, i)
    }
}

pub(super) fn non_folded(h: &Hand) -> usize {
    h.players.iter().filter(|p| !p.folded).count()
}

impl PokerRoomEngine<'_> {
    fn options(&self, t: &Table, h: &Hand, i: usize) -> Options {
        let p = &h.players[i];
        let stack = stack(t, p.seat);
        let in_round = p.in_round_minor;
        let to_match = to_match(h, i);
        let to_call = (to_match - in_round).max(0);
        let opening = h.current_bet_minor == 0;
        let all_in_to = in_round + stack;
        let reopened = !p.acted
            || match self.rules.betting.short_all_in {
                ShortAllIn::ReopensBetting => h.current_bet_minor > p.acted_at_minor,
                // "Každý raise musí být minimálně rozdíl mezi posledními dvěma sázkami": an
                // all-in short of a full raise is not a raise, so it reopens the betting only
                // for a player it leaves facing a full raise over what he last matched.
                ShortAllIn::DoesNotReopenBetting => {
                    h.current_bet_minor - p.acted_at_minor >= h.full_raise_minor
                }
            };
        let capped = !opening
            && self
                .rules
                .betting
                .raises_per_round_max
                .is_some_and(|m| h.raises >= m);
        let (may_raise, why_not) = if stack <= to_call {
            (false, "he has no chips beyond the call")
        } else if !others_can_act(h, i) {
            (false, "nobody is left to call a raise")
        } else if !reopened {
            (
                false,
                "an all-in short of a full raise does not reopen the betting for a player who has acted",
            )
        } else if capped {
            (false, "the plan's raises per betting round are used up")
        } else {
            (true, "")
        };
        let min_to = if opening {
            self.min_bet()
        } else {
            h.current_bet_minor + h.full_raise_minor
        };
        let max_to = match self.rules.betting_structure {
            BettingStructure::NoLimit => all_in_to,
            // Pot-limit: a raise of at most the pot after the call.
            BettingStructure::PotLimit => all_in_to.min(to_match + h.pot_total_minor() + to_call),
        };
        Options {
            stack,
            in_round,
            to_call,
            opening,
            may_raise,
            why_not,
            min_to,
            full_raise: h.full_raise_minor,
            max_to,
            all_in_to,
        }
    }

    /// The player to act and his legal decisions; none when no decision is awaited.
    pub fn turn(&self, t: &Table) -> Option<Turn> {
        let h = t.hand.as_ref()?;
        if h.phase != Phase::Betting {
            return None;
        }
        let seat = h.to_act?;
        let i = h.index(seat)?;
        let o = self.options(t, h, i);
        let mut legal = vec![Legal::Fold];
        if o.to_call == 0 {
            legal.push(Legal::Check);
        } else {
            legal.push(Legal::Call {
                amount_minor: o.to_call.min(o.stack),
                all_in: o.stack <= o.to_call,
            });
        }
        if o.may_raise {
            if o.min_to <= o.max_to {
                legal.push(if o.opening {
                    Legal::Bet {
                        min_to_minor: o.min_to,
                        max_to_minor: o.max_to,
                    }
                } else {
                    Legal::Raise {
                        min_to_minor: o.min_to,
                        max_to_minor: o.max_to,
                    }
                });
            }
            if o.all_in_to <= o.max_to {
                legal.push(Legal::AllIn {
                    to_minor: o.all_in_to,
                });
            }
        } else if o.stack <= o.to_call {
            legal.push(Legal::AllIn {
                to_minor: o.all_in_to,
            });
        }
        Some(Turn {
            seat,
            street: h.street,
            stack_minor: o.stack,
            in_round_minor: o.in_round,
            to_call_minor: o.to_call,
            legal,
        })
    }

    // ----- The deal -----

    /// A card the hand has seen already: "Pokud se objeví dvě stejné karty …, všechny úkony
    /// jsou neplatné a všechny žetony se vrací svým původním majitelům." Returns whether the
    /// hand was voided.
    fn duplicate(
        &self,
        t: &mut Table,
        h: &Hand,
        new: &[Card],
        fx: &mut Vec<Effect>,
    ) -> Result<bool, Refusal> {
        let mut seen = h.seen_cards();
        let mut dup = None;
        for &c in new {
            if seen.contains(&c) {
                dup = Some(c);
                break;
            }
            seen.push(c);
        }
        let Some(card) = dup else {
            return Ok(false);
        };
        let kind = IrregularityKind::DuplicateCard;
        match self.rules.irregularities.iter().find(|i| i.id == kind) {
            Some(i) if i.consequence == Consequence::VoidAllActionReturnChips => {
                let clause = i.clause.clone();
                self.void_hand(t, super::VoidReason::Irregularity { kind }, &clause, fx);
                Ok(true)
            }
            _ => Err(self.refuse(
                code::DUPLICATE_CARD,
                format!("{card} has been seen in this hand already"),
                &self.rules.clause,
            )),
        }
    }

    pub(super) fn hole_cards(
        &self,
        t: &mut Table,
        seat: SeatNo,
        cards: [Card; 2],
        fx: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        let clause = self.rules.button.clause.clone();
        let h = self.hand_in_progress(t)?;
        if h.phase != Phase::PreDeal {
            return Err(self.refuse(
                code::NOT_EXPECTED,
                "hole cards come before the first betting round",
                &clause,
            ));
        }
        if h.player(seat).is_none_or(|p| p.hole.is_some()) {
            return Err(self.refuse(
                code::NOT_DEALT_IN,
                format!("seat {seat} is not dealt in or has its cards"),
                &clause,
            ));
        }
        let h = h.clone();
        if self.duplicate(t, &h, &cards, fx)? {
            return Ok(());
        }
        let mut h = t.hand.take().expect("checked above");
        let i = h.index(seat).expect("checked above");
        h.players[i].hole = Some(cards);
        fx.push(Effect::HoleCardsDealt { seat });
        if h.players.iter().all(|p| p.hole.is_some()) {
            // "Hru v prvním sázkovém kole začíná hráč nalevo od big blindu" (or from the
            // straddle, who "uzavírá před flopem sázky").
            h.phase = Phase::Betting;
            let from = h.straddle.unwrap_or(h.big_blind);
            return self.open_round(t, h, from, fx);
        }
        t.hand = Some(h);
        Ok(())
    }

    pub(super) fn board(
        &self,
        t: &mut Table,
        cards: &[Card],
        burn: Option<Card>,
        fx: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        let clause = self.rules.betting.clause.clone();
        let h = self.hand_in_progress(t)?;
        if h.phase != Phase::AwaitingBoard {
            return Err(self.refuse(
                code::NOT_EXPECTED,
                "board cards come when a betting round has closed",
                &clause,
            ));
        }
        let street = h
            .street
            .next()
            .expect("the board is awaited before the river");
        if cards.len() != street.cards() {
            return Err(self.refuse(
                code::WRONG_CARD_COUNT,
                format!(
                    "the {} is {} card(s), not {}",
                    crate::games::wire_name(&street),
                    street.cards(),
                    cards.len()
                ),
                &clause,
            ));
        }
        let h = h.clone();
        let new: Vec<Card> = burn.iter().chain(cards).copied().collect();
        if self.duplicate(t, &h, &new, fx)? {
            return Ok(());
        }
        let mut h = t.hand.take().expect("checked above");
        h.board.extend(cards);
        h.burns.extend(burn);
        h.street = street;
        h.phase = Phase::Betting;
        h.current_bet_minor = 0;
        h.full_raise_minor = self.min_bet();
        h.raises = 0;
        for p in &mut h.players {
            p.in_round_minor = 0;
            p.acted = false;
            p.acted_at_minor = 0;
        }
        fx.push(Effect::BoardDealt {
            street,
            cards: cards.to_vec(),
        });
        // "V dalších sázkových kolech hraje jako první hráč na pozici malého blindu tj. hráč po
        // levici dealera."
        let from = h.button;
        self.open_round(t, h, from, fx)
    }

    /// Gives the turn to the first player after `from` with a decision to take, or closes
    /// the round when nobody has one (everybody else all-in).
    fn open_round(
        &self,
        t: &mut Table,
        mut h: Hand,
        from: SeatNo,
        fx: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        h.to_act = self.next_to_act(t, &h, from);
        if h.to_act.is_none() {
            return self.close_round(t, h, fx);
        }
        t.hand = Some(h);
        Ok(())
    }

    /// After a change out of turn (a dead hand): the turn stays with `from` if he still has a
    /// decision, else passes on; the round closes when nobody has one.
    pub(super) fn resume(
        &self,
        t: &mut Table,
        mut h: Hand,
        from: SeatNo,
        fx: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        let still = h.index(from).is_some_and(|i| needs_to_act(&h, i));
        h.to_act = if still {
            Some(from)
        } else {
            self.next_to_act(t, &h, from)
        };
        if h.to_act.is_none() {
            return self.close_round(t, h, fx);
        }
        t.hand = Some(h);
        Ok(())
    }

    fn next_to_act(&self, t: &Table, h: &Hand, from: SeatNo) -> Option<SeatNo> {
        t.clockwise_after(from)
            .filter_map(|s| h.index(s))
            .find(|&i| needs_to_act(h, i))
            .map(|i| h.players[i].seat)
    }

    // ----- Decisions -----

    pub(super) fn decide(
        &self,
        t: &mut Table,
        seat: SeatNo,
        declared: Declared,
        fx: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        let clause = self.rules.betting.clause.clone();
        let h = self.hand_in_progress(t)?;
        if h.phase != Phase::Betting {
            return Err(self.refuse(code::NOT_EXPECTED, "no betting round is open", &clause));
        }
        if h.to_act != Some(seat) {
            return Err(self.refuse(
                code::NOT_YOUR_TURN,
                format!(
                    "it is seat {}'s turn, not seat {seat}'s",
                    h.to_act.map_or("nobody".into(), |s| s.to_string())
                ),
                &clause,
            ));
        }
        let h = h.clone();
        let i = h.index(seat).expect("the player to act is dealt in");
        let o = self.options(t, &h, i);
        let (go, returned, by) = self.read(&o, declared)?;
        let mut h = t.hand.take().expect("checked above");
        self.commit(t, &mut h, i, go, returned, by, fx);
        if non_folded(&h) == 1 {
            return self.close_round(t, h, fx);
        }
        let next = self.next_to_act(t, &h, seat);
        h.to_act = next;
        if next.is_none() {
            return self.close_round(t, h, fx);
        }
        t.hand = Some(h);
        Ok(())
    }

    /// What the declared decision does with the chips, or why it is refused.
    fn read(&self, o: &Options, declared: Declared) -> Result<(Go, i64, Option<String>), Refusal> {
        let b = &self.rules.betting;
        let clause = |n: u8| format!("{} {n}.", b.clause);
        Ok(match declared {
            Declared::Fold => (Go::Fold, 0, None),
            Declared::Check => {
                if o.to_call > 0 {
                    return Err(self.refuse(
                        code::CANNOT_CHECK,
                        format!("{} to call: no check", self.money(o.to_call)),
                        &clause(6),
                    ));
                }
                (Go::Check, 0, None)
            }
            Declared::Call => {
                if o.to_call == 0 {
                    return Err(self.refuse(
                        code::NOTHING_TO_CALL,
                        "nothing to call: check, bet or raise",
                        &b.clause,
                    ));
                }
                (Go::Call, 0, None)
            }
            Declared::Bet(to) | Declared::Raise(to) => {
                let is_bet = matches!(declared, Declared::Bet(_));
                if is_bet != o.opening {
                    return Err(self.refuse(
                        code::BET_OR_RAISE,
                        if o.opening {
                            "nobody has bet in this round: that is a bet, not a raise"
                        } else {
                            "there is a bet in this round: that is a raise, not a bet"
                        },
                        &b.clause,
                    ));
                }
                (self.raise_to(o, to)?, 0, None)
            }
            Declared::AllIn => {
                if o.stack <= o.to_call {
                    (Go::Call, 0, None)
                } else {
                    (self.raise_to(o, o.all_in_to)?, 0, None)
                }
            }
            Declared::Chips(chips) => self.read_chips(o, chips)?,
        })
    }

    /// Checks a bet or raise to `to` (the player's chips in the round after it).
    fn raise_to(&self, o: &Options, to: i64) -> Result<Go, Refusal> {
        let b = &self.rules.betting;
        if !o.may_raise {
            return Err(self.refuse(
                code::RAISE_NOT_ALLOWED,
                format!("no bet or raise: {}; call or fold", o.why_not),
                &b.clause,
            ));
        }
        if to % self.rules.smallest_chip != 0 {
            return Err(self.refuse(
                code::NOT_WHOLE_CHIPS,
                format!(
                    "{} is not a whole number of the smallest chip ({})",
                    self.money(to),
                    self.money(self.rules.smallest_chip)
                ),
                &b.clause,
            ));
        }
        if to > o.all_in_to {
            return Err(self.refuse(
                code::ABOVE_STACK,
                format!(
                    "{} is more than the player's {} in front of him",
                    self.money(to),
                    self.money(o.all_in_to)
                ),
                &b.clause,
            ));
        }
        if to > o.max_to {
            return Err(self.refuse(
                code::ABOVE_POT_LIMIT,
                format!(
                    "pot-limit: at most {} (the pot after the call), not {}",
                    self.money(o.max_to),
                    self.money(to)
                ),
                &b.clause,
            ));
        }
        // "Každá sázka, která není allin, musí být alespoň stejně vysoká jako byla poslední
        // sázka nebo zvýšení"; the first bet is at least the minimum ("v holdemu … rovna
        // jednomu velkému blindu").
        if to < o.min_to && to != o.all_in_to {
            return Err(if o.opening {
                self.refuse(
                    code::BELOW_MIN_BET,
                    format!(
                        "the smallest bet is {}, not {} (unless all-in)",
                        self.money(o.min_to),
                        self.money(to)
                    ),
                    &format!("{} 1.", b.clause),
                )
            } else {
                self.refuse(
                    code::BELOW_MIN_RAISE,
                    format!(
                        "a raise is to at least {} (the last bet or raise again), not {} (unless all-in)",
                        self.money(o.min_to),
                        self.money(to)
                    ),
                    &format!("{} 3., 4.", b.clause),
                )
            });
        }
        Ok(Go::To(to))
    }

    /// Chips pushed in without a declaration: "Vložení jeden a půl plné sázky je považováno
    /// za zvýšení a hráč musí doplnit počet žetonů do plné výše" (8.), "Pokud hráč vloží
    /// jediný žeton, jehož hodnota je větší než poslední sázka a neohlásí raise, je toto
    /// považováno za call" (9.).
    fn read_chips(&self, o: &Options, chips: &[i64]) -> Result<(Go, i64, Option<String>), Refusal> {
        let b = &self.rules.betting;
        for &c in chips {
            self.whole_chips(c, "a chip", &b.clause)?;
        }
        let total = chips
            .iter()
            .try_fold(0i64, |a, &c| a.checked_add(c))
            .filter(|&s| s > 0)
            .ok_or_else(|| self.refuse(code::NOT_WHOLE_CHIPS, "no chips pushed in", &b.clause))?;
        if total > o.stack {
            return Err(self.refuse(
                code::ABOVE_STACK,
                format!(
                    "{} pushed in, but the player has {}",
                    self.money(total),
                    self.money(o.stack)
                ),
                &b.clause,
            ));
        }
        let item = |n: u8| Some(format!("{} {n}.", b.clause));
        let call_back = |excess: i64, n: u8| {
            if o.to_call == 0 {
                (Go::Check, excess, item(n))
            } else {
                (Go::Call, excess, item(n))
            }
        };
        if o.opening {
            // Nothing bet in this round: the chips are a bet of what they are worth.
            if !o.may_raise {
                return Ok(call_back(total, 6));
            }
            let to = o.in_round + total;
            return Ok((self.raise_to(o, to)?, 0, None));
        }
        if total < o.to_call {
            if total == o.stack {
                return Ok((Go::Call, 0, None));
            }
            return Err(self.refuse(
                code::BELOW_CALL,
                format!(
                    "{} pushed in short of the {} to call",
                    self.money(total),
                    self.money(o.to_call)
                ),
                &b.clause,
            ));
        }
        let excess = total - o.to_call;
        if excess == 0 {
            return Ok((Go::Call, 0, None));
        }
        if chips.len() == 1 {
            // One chip worth more than the call, without a declaration: a call; change is
            // given.
            return Ok(call_back(excess, 9));
        }
        if !o.may_raise {
            return Ok((
                if o.to_call == 0 { Go::Check } else { Go::Call },
                excess,
                Some(format!("{}: {}", b.clause, o.why_not)),
            ));
        }
        if total == o.stack {
            // Every chip at once: all-in.
            return Ok((self.raise_to(o, o.all_in_to)?, 0, None));
        }
        let to = o.in_round + total;
        if to >= o.min_to {
            return Ok((self.raise_to(o, to)?, 0, None));
        }
        // Short of a full raise: one and a half bets and more is a raise the player completes
        // (the chips he adds are `min_to − to`); less is a call and the rest goes back.
        let t = b.completed_raise_threshold;
        let (num, den) = (i128::from(t.numerator()), i128::from(t.denominator()));
        let counts_as_raise = i128::from(excess) * den >= (num - den) * i128::from(o.full_raise);
        if counts_as_raise {
            let completed = o.min_to.min(o.all_in_to);
            let go = self.raise_to(o, completed)?;
            return Ok((go, 0, item(8)));
        }
        Ok(call_back(excess, 8))
    }

    /// Moves the chips of a decision and records it.
    #[allow(clippy::too_many_arguments)]
    fn commit(
        &self,
        t: &mut Table,
        h: &mut Hand,
        i: usize,
        go: Go,
        returned: i64,
        by: Option<String>,
        fx: &mut Vec<Effect>,
    ) {
        let seat = h.players[i].seat;
        let to_match = to_match(h, i);
        let stack_before = stack(t, seat);
        let in_round = h.players[i].in_round_minor;
        let (to, read_as) = match go {
            Go::Fold => (in_round, Move::Fold),
            Go::Check => (in_round, Move::Check),
            Go::Call => (
                in_round + (to_match - in_round).max(0).min(stack_before),
                Move::Call,
            ),
            Go::To(to) if to <= h.current_bet_minor => (to, Move::Call),
            Go::To(to) => {
                let opening = h.current_bet_minor == 0;
                let full = if opening {
                    to >= self.min_bet()
                } else {
                    to - h.current_bet_minor >= h.full_raise_minor
                };
                if full {
                    h.full_raise_minor = to - h.current_bet_minor;
                    if !opening {
                        h.raises += 1;
                    }
                }
                h.current_bet_minor = to;
                h.last_aggression = Some(Aggression {
                    seat,
                    street: h.street,
                });
                (
                    to,
                    if opening {
                        Move::Bet { to_minor: to }
                    } else {
                        Move::Raise { to_minor: to, full }
                    },
                )
            }
        };
        let put = to - in_round;
        let s = t.seat_mut(seat).expect("a player in the hand is seated");
        s.stack_minor -= put;
        let all_in = s.stack_minor == 0;
        let p = &mut h.players[i];
        p.in_round_minor = to;
        p.in_hand_minor += put;
        p.all_in = all_in;
        p.folded |= go == Go::Fold;
        p.acted = true;
        p.acted_at_minor = to;
        if !h.players_acted.contains(&seat) {
            h.players_acted.push(seat);
        }
        fx.push(Effect::Acted {
            seat,
            read_as,
            put_in_minor: put,
            all_in,
            returned_minor: returned,
            by,
        });
    }

    /// Closes the betting round: the uncalled part of the largest bet goes back; with one
    /// player left he takes the pot, after the river the showdown starts, otherwise the next
    /// street is awaited.
    pub(super) fn close_round(
        &self,
        t: &mut Table,
        mut h: Hand,
        fx: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        h.to_act = None;
        let mut by_bet: Vec<(i64, usize)> = h
            .players
            .iter()
            .enumerate()
            .map(|(i, p)| (p.in_round_minor, i))
            .collect();
        by_bet.sort_unstable_by(|a, b| b.cmp(a));
        let second = by_bet.get(1).map_or(0, |x| x.0);
        if let Some(&(top, i)) = by_bet.first() {
            if top > second {
                let back = top - second;
                let p = &mut h.players[i];
                p.in_round_minor -= back;
                p.in_hand_minor -= back;
                p.all_in = false;
                t.seat_mut(p.seat).expect("seated").stack_minor += back;
                fx.push(Effect::UncalledBetReturned {
                    seat: p.seat,
                    amount_minor: back,
                });
            }
        }
        fx.push(Effect::BettingClosed {
            street: h.street,
            pots: super::showdown::pots(&h),
        });
        if non_folded(&h) == 1 {
            self.award_uncontested(t, h, fx);
            return Ok(());
        }
        if h.street == Street::River {
            self.start_showdown(t, h, fx);
            return Ok(());
        }
        h.phase = Phase::AwaitingBoard;
        t.hand = Some(h);
        Ok(())
    }
}
