//! "Buy-in", "Používání buttonu a blindů", "Pravidla používání blindů", "Straddle bet": who
//! sits where with how many chips, where the button and the blinds go, who is dealt in.

use chrono::{DateTime, Duration, Utc};

use super::{
    code, Aggression, Blind, Effect, Entry, Hand, HandPlayer, Phase, PokerRoomEngine, Readiness,
    SeatCard, SeatNo, SeatedPlayer, Status, Street, Table,
};
use crate::cards::Suit;
use crate::games::Refusal;
use crate::plan::rules::poker::{NewPlayerOption, SuitName, TableEntry};

/// Where the next hand puts the button and the blinds, and who is dealt in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Placement {
    pub button: SeatNo,
    pub small_blind_seat: SeatNo,
    /// The small blind's player, when the small blind's seat is dealt in.
    pub small_blind: Option<SeatNo>,
    pub big_blind: SeatNo,
    pub dealt: Vec<SeatNo>,
    pub heads_up: bool,
    /// The first hand of a game: nobody is new, nobody posts a new player's big blind.
    pub fresh: bool,
}

impl PokerRoomEngine<'_> {
    // ----- Buy-in -----

    #[allow(clippy::too_many_arguments)]
    pub(super) fn sit_down(
        &self,
        t: &mut Table,
        seat: SeatNo,
        player: &str,
        chips_minor: i64,
        entry: Entry,
        new_player: NewPlayerOption,
        now: DateTime<Utc>,
        fx: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        let buy = &self.rules.buy_in;
        self.check_seat_no(seat)?;
        if player.trim().is_empty() {
            return Err(self.refuse(code::BAD_PLAYER, "the player has no id", &buy.clause));
        }
        if t.seat(seat).is_some() {
            return Err(self.refuse(
                code::SEAT_TAKEN,
                format!("seat {seat} is taken"),
                &buy.clause,
            ));
        }
        if t.seats.iter().flatten().any(|s| s.player == player) {
            return Err(self.refuse(
                code::ALREADY_SEATED,
                format!("{player} already has a seat at this table"),
                &buy.clause,
            ));
        }
        self.new_player_option(new_player)?;
        self.whole_chips(chips_minor, "a buy-in", &buy.clause)?;

        // Which rule of "Buy-in" applies: the house's move first (he keeps his chips), then a
        // return to this table within the window, then a voluntary change or a new buy-in.
        self.forget_departures(t, now);
        let returning = t
            .departures
            .iter()
            .rev()
            .find(|d| d.player == player)
            .map(|d| d.chips_minor);
        let (rule, left_with, why) = match (entry, returning) {
            (Entry::MovedByHouse, _) => (buy.moved_by_house, 0, "moved here by the house"),
            (_, Some(left)) => (
                buy.return_within_window,
                left,
                "back at the table he left less than the return window ago",
            ),
            (Entry::VoluntaryChange, None) => {
                (buy.voluntary_change, 0, "changing table by his own choice")
            }
            (Entry::BuyIn, None) => (TableEntry::MinBuyIn, 0, "buying in"),
        };
        let min = match rule {
            TableEntry::KeepsStackEvenShort => self.rules.smallest_chip,
            TableEntry::MinBuyIn => buy.min,
            TableEntry::ChipsLeftWith => buy.min.max(left_with),
        };
        if chips_minor < min {
            return Err(self.refuse(
                code::BELOW_MIN_BUY_IN,
                format!(
                    "{player}, {why}, sits down with at least {}, not {}",
                    self.money(min),
                    self.money(chips_minor)
                ),
                &buy.clause,
            ));
        }
        // The maximum does not stop a player from bringing back what he left with, nor a
        // player the house moved from keeping his chips.
        if let Some(max) = buy.max {
            let max = match rule {
                TableEntry::KeepsStackEvenShort => i64::MAX,
                TableEntry::ChipsLeftWith => max.max(left_with),
                TableEntry::MinBuyIn => max,
            };
            if chips_minor > max {
                return Err(self.refuse(
                    code::ABOVE_MAX_BUY_IN,
                    format!(
                        "{player} sits down with at most {}, not {}",
                        self.money(max),
                        self.money(chips_minor)
                    ),
                    &buy.clause,
                ));
            }
        }
        t.bought_in_minor = t.bought_in_minor.checked_add(chips_minor).ok_or_else(|| {
            self.refuse(code::OVERFLOW, "the table's chips overflow", &buy.clause)
        })?;
        t.departures.retain(|d| d.player != player);
        t.seats[usize::from(seat) - 1] = Some(SeatedPlayer {
            player: player.to_string(),
            stack_minor: chips_minor,
            status: Status::New(new_player),
        });
        fx.push(Effect::SatDown {
            seat,
            player: player.to_string(),
            chips_minor,
        });
        Ok(())
    }

    /// Drops the departures older than the return window: they bind nobody any more.
    fn forget_departures(&self, t: &mut Table, now: DateTime<Utc>) {
        let window = Duration::minutes(i64::from(self.rules.buy_in.return_window_minutes));
        // "v době kratší než 2 hodiny": a return exactly at the window's end is free.
        t.departures.retain(|d| now - d.at < window);
    }

    fn new_player_option(&self, option: NewPlayerOption) -> Result<(), Refusal> {
        let np = &self.rules.new_player;
        if !np.options.contains(&option) {
            return Err(self.refuse(
                code::OPTION_NOT_OFFERED,
                format!(
                    "{} is not an option for a new player in this plan",
                    crate::games::wire_name(&option)
                ),
                &np.clause,
            ));
        }
        Ok(())
    }

    fn seated(&self, t: &Table, seat: SeatNo) -> Result<(), Refusal> {
        self.check_seat_no(seat)?;
        if t.seat(seat).is_none() {
            return Err(self.refuse(
                code::SEAT_EMPTY,
                format!("seat {seat} is empty"),
                &self.rules.clause,
            ));
        }
        Ok(())
    }

    fn not_in_hand(&self, t: &Table, seat: SeatNo, what: &str) -> Result<(), Refusal> {
        if t.hand.as_ref().is_some_and(|h| h.player(seat).is_some()) {
            return Err(self.refuse(
                code::IN_HAND,
                format!("seat {seat} is dealt into the hand being played: {what} after it"),
                &self.rules.buy_in.clause,
            ));
        }
        Ok(())
    }

    pub(super) fn top_up(
        &self,
        t: &mut Table,
        seat: SeatNo,
        chips_minor: i64,
        fx: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        let buy = &self.rules.buy_in;
        self.seated(t, seat)?;
        self.not_in_hand(t, seat, "chips are added")?;
        self.whole_chips(chips_minor, "a top-up", &buy.clause)?;
        let s = t.seat(seat).expect("seated");
        let after = s
            .stack_minor
            .checked_add(chips_minor)
            .ok_or_else(|| self.refuse(code::OVERFLOW, "the stack overflows", &buy.clause))?;
        if s.stack_minor == 0 && chips_minor < buy.min {
            return Err(self.refuse(
                code::BELOW_MIN_BUY_IN,
                format!(
                    "a player without chips buys in again with at least {}, not {}",
                    self.money(buy.min),
                    self.money(chips_minor)
                ),
                &buy.clause,
            ));
        }
        if let Some(max) = buy.max {
            if after > max {
                return Err(self.refuse(
                    code::ABOVE_MAX_BUY_IN,
                    format!(
                        "the stack would be {}, above the maximum buy-in {}",
                        self.money(after),
                        self.money(max)
                    ),
                    &buy.clause,
                ));
            }
        }
        t.bought_in_minor = t.bought_in_minor.checked_add(chips_minor).ok_or_else(|| {
            self.refuse(code::OVERFLOW, "the table's chips overflow", &buy.clause)
        })?;
        t.seat_mut(seat).expect("seated").stack_minor = after;
        fx.push(Effect::ToppedUp { seat, chips_minor });
        Ok(())
    }

    pub(super) fn sit_out(
        &self,
        t: &mut Table,
        seat: SeatNo,
        fx: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        self.seated(t, seat)?;
        let s = t.seat_mut(seat).expect("seated");
        if s.status == Status::SittingOut {
            return Err(self.refuse(
                code::ALREADY_SITTING_OUT,
                format!("seat {seat} is sitting out"),
                &self.rules.new_player.clause,
            ));
        }
        s.status = Status::SittingOut;
        fx.push(Effect::SatOut { seat });
        Ok(())
    }

    /// A player back from sitting out comes back as a new player: he waits for the big blind
    /// or posts one (the document names no other way back in).
    pub(super) fn sit_in(
        &self,
        t: &mut Table,
        seat: SeatNo,
        option: NewPlayerOption,
        fx: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        self.seated(t, seat)?;
        self.new_player_option(option)?;
        let s = t.seat_mut(seat).expect("seated");
        if s.status != Status::SittingOut {
            return Err(self.refuse(
                code::NOT_SITTING_OUT,
                format!("seat {seat} is not sitting out"),
                &self.rules.new_player.clause,
            ));
        }
        s.status = Status::New(option);
        fx.push(Effect::SatIn { seat });
        Ok(())
    }

    pub(super) fn leave(
        &self,
        t: &mut Table,
        seat: SeatNo,
        now: DateTime<Utc>,
        fx: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        self.seated(t, seat)?;
        self.not_in_hand(t, seat, "he leaves")?;
        let s = t.seats[usize::from(seat) - 1].take().expect("seated");
        self.forget_departures(t, now);
        t.departures.retain(|d| d.player != s.player);
        t.departures.push(super::Departure {
            player: s.player.clone(),
            chips_minor: s.stack_minor,
            at: now,
        });
        t.cashed_out_minor += s.stack_minor;
        if t.drawn_button == Some(seat) {
            t.drawn_button = None;
        }
        fx.push(Effect::Left {
            seat,
            player: s.player,
            chips_minor: s.stack_minor,
        });
        Ok(())
    }

    // ----- The button -----

    /// Players who would be dealt in if the button reached them: seated, with chips, not
    /// sitting out.
    fn ready(&self, t: &Table) -> Vec<SeatNo> {
        (1..=t.seats_max())
            .filter(|&s| {
                t.seat(s)
                    .is_some_and(|p| p.stack_minor > 0 && p.status != Status::SittingOut)
            })
            .collect()
    }

    /// Whether a hand can start, and where its button and blinds go.
    pub(super) fn readiness(&self, t: &Table) -> Readiness {
        match self.placement(t) {
            Ok(p) => Readiness::Ready {
                button: p.button,
                small_blind: p.small_blind,
                big_blind: p.big_blind,
                dealt: p.dealt,
            },
            Err(r) if r.code == code::BUTTON_DRAW_NEEDED => Readiness::ButtonDraw {
                players: self.ready(t),
            },
            Err(_) => Readiness::TooFewPlayers,
        }
    }

    /// "Před každou hrou se vždy umístí správně big blind a podle něj se dále umísťují small
    /// blind a button, i když to může někdy znamenat, že small blind nebo button budou na
    /// prázdném místě": the big blind moves to the next player ready to play after the last
    /// big blind; the small blind goes to the last big blind's seat and the button to the last
    /// small blind's seat, dealt in or not (a dead small blind, a dead button).
    pub(super) fn placement(&self, t: &Table) -> Result<Placement, Refusal> {
        let clause = &self.rules.button.clause;
        let ready = self.ready(t);
        let too_few = || {
            self.refuse(
                code::NOT_ENOUGH_PLAYERS,
                format!("{} player(s) ready to play: a hand needs two", ready.len()),
                clause,
            )
        };
        let draw = || {
            self.refuse(
                code::BUTTON_DRAW_NEEDED,
                "the button is drawn for before this hand (a new game)",
                clause,
            )
        };
        if ready.len() < 2 {
            return Err(too_few());
        }
        let status = |s: SeatNo| t.seat(s).expect("a ready seat is taken").status;

        let Some(last) = t.positions else {
            // The first hand of a game: the button where the draw put it, every player ready
            // is dealt in.
            let Some(button) = t.drawn_button.filter(|b| ready.contains(b)) else {
                return Err(draw());
            };
            let after = |s: SeatNo| {
                t.clockwise_after(s)
                    .find(|x| ready.contains(x))
                    .expect("two players are ready")
            };
            let heads_up = ready.len() == 2;
            let (sb, bb) = if heads_up {
                (button, after(button))
            } else {
                let sb = after(button);
                (sb, after(sb))
            };
            return Ok(Placement {
                button,
                small_blind_seat: sb,
                small_blind: Some(sb),
                big_blind: bb,
                dealt: ready,
                heads_up,
                fresh: true,
            });
        };

        let bb = t
            .clockwise_after(last.big_blind)
            .find(|s| ready.contains(s))
            .expect("two players are ready");
        let sb_seat = last.big_blind;
        // The seats strictly between `from` and `to`, clockwise.
        let between = |from: SeatNo, to: SeatNo, s: SeatNo| {
            t.clockwise_after(from)
                .take_while(|&x| x != to)
                .any(|x| x == s)
        };
        let mut button = last.small_blind;
        if !between(bb, sb_seat, button) {
            // Coming from heads-up (the button was the small blind) the last small blind's
            // seat can be the new big blind's: the button goes to the seat before the small
            // blind.
            let n = u16::from(t.seats_max());
            button = ((u16::from(sb_seat) + n - 2) % n + 1) as SeatNo;
        }
        let np = &self.rules.new_player;
        let dealt: Vec<SeatNo> = ready
            .iter()
            .copied()
            .filter(|&s| match status(s) {
                Status::Playing => true,
                Status::New(_) if s == bb => true,
                Status::New(NewPlayerOption::WaitForBigBlind) => false,
                // "Nikdy nemůže nový hráč začít hrát mezi buttonem a big blindem" (nor on
                // the button).
                Status::New(NewPlayerOption::PostBigBlind) => {
                    np.may_start_between_button_and_big_blind
                        || !(s == button || between(button, bb, s))
                }
                Status::SittingOut => false,
            })
            .collect();
        if dealt.len() < 2 {
            // The game cannot go on from the last hand's positions (every player but one is
            // new): it starts again with a draw for the button.
            return Err(draw());
        }
        if dealt.len() == 2 {
            // "Při hře dvou hráčů je small blind na buttonu."
            let other = *dealt.iter().find(|&&s| s != bb).expect("two dealt in");
            if matches!(status(other), Status::New(_)) {
                // A new player would start on the button.
                return Err(draw());
            }
            return Ok(Placement {
                button: other,
                small_blind_seat: other,
                small_blind: Some(other),
                big_blind: bb,
                dealt,
                heads_up: true,
                fresh: false,
            });
        }
        Ok(Placement {
            button,
            small_blind_seat: sb_seat,
            small_blind: dealt.contains(&sb_seat).then_some(sb_seat),
            big_blind: bb,
            dealt,
            heads_up: false,
            fresh: false,
        })
    }

    /// The draw for the button: each player ready to play draws one card; the highest rank
    /// takes the button, the plan's suit order breaking a tie of ranks.
    pub(super) fn draw_for_button(
        &self,
        t: &mut Table,
        cards: &[SeatCard],
        fx: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        let clause = &self.rules.button.clause;
        if t.hand.is_some() {
            return Err(self.refuse(
                code::HAND_IN_PROGRESS,
                "the button is drawn for between hands",
                clause,
            ));
        }
        match self.placement(t) {
            Err(r) if r.code == code::BUTTON_DRAW_NEEDED => {}
            Err(r) => return Err(r),
            Ok(_) => {
                return Err(self.refuse(
                    code::NO_DRAW_NEEDED,
                    "the button moves on from the last hand; there is no draw",
                    clause,
                ))
            }
        }
        let ready = self.ready(t);
        let mut seats: Vec<SeatNo> = cards.iter().map(|c| c.seat).collect();
        seats.sort_unstable();
        let mut distinct: Vec<_> = cards.iter().map(|c| c.card).collect();
        distinct.sort_unstable();
        distinct.dedup();
        if seats != ready || distinct.len() != cards.len() {
            return Err(self.refuse(
                code::BAD_DRAW,
                format!(
                    "the draw gives one distinct card to each player ready to play: seats {ready:?}"
                ),
                clause,
            ));
        }
        let suit_rank = |s: Suit| {
            let name = match s {
                Suit::Spades => SuitName::Spades,
                Suit::Hearts => SuitName::Hearts,
                Suit::Diamonds => SuitName::Diamonds,
                Suit::Clubs => SuitName::Clubs,
            };
            // Highest first in the plan: a lower index wins.
            std::cmp::Reverse(
                self.rules
                    .suit_order_for_button_draw
                    .iter()
                    .position(|&n| n == name)
                    .expect("lint: every suit is ordered"),
            )
        };
        let best = cards
            .iter()
            .max_by_key(|c| (c.card.rank, suit_rank(c.card.suit)))
            .expect("two players are ready");
        t.positions = None;
        t.drawn_button = Some(best.seat);
        for s in ready {
            t.seat_mut(s).expect("ready").status = Status::Playing;
        }
        fx.push(Effect::ButtonDrawn {
            seat: best.seat,
            card: best.card,
        });
        Ok(())
    }

    // ----- A new hand -----

    pub(super) fn start_hand(&self, t: &mut Table, fx: &mut Vec<Effect>) -> Result<(), Refusal> {
        if t.hand.is_some() {
            return Err(self.refuse(
                code::HAND_IN_PROGRESS,
                "a hand is being played",
                &self.rules.clause,
            ));
        }
        let p = self.placement(t)?;
        t.hands_started += 1;
        let players = p
            .dealt
            .iter()
            .map(|&s| {
                let seat = t.seat(s).expect("dealt in");
                HandPlayer {
                    seat: s,
                    player: seat.player.clone(),
                    start_stack_minor: seat.stack_minor,
                    hole: None,
                    in_round_minor: 0,
                    in_hand_minor: 0,
                    folded: false,
                    all_in: false,
                    acted: false,
                    acted_at_minor: 0,
                    shown: None,
                    mucked: false,
                }
            })
            .collect();
        let blinds = &self.rules.blinds;
        let mut hand = Hand {
            number: t.hands_started,
            button: p.button,
            small_blind_seat: p.small_blind_seat,
            small_blind: p.small_blind,
            big_blind: p.big_blind,
            straddle: None,
            heads_up: p.heads_up,
            players,
            phase: Phase::PreDeal,
            street: Street::Preflop,
            board: Vec::new(),
            burns: Vec::new(),
            // "ostatní hrají jako by byly blindy normální"
            current_bet_minor: blinds.big,
            full_raise_minor: self.min_bet(),
            raises: 0,
            to_act: None,
            last_aggression: None,
            players_acted: Vec::new(),
            showdown: None,
        };
        fx.push(Effect::HandStarted {
            hand: hand.number,
            button: p.button,
            small_blind: p.small_blind,
            big_blind: p.big_blind,
            dealt: p.dealt.clone(),
            heads_up: p.heads_up,
        });
        if let Some(sb) = p.small_blind {
            post(t, &mut hand, sb, blinds.small, Blind::SmallBlind, fx);
        }
        post(t, &mut hand, p.big_blind, blinds.big, Blind::BigBlind, fx);
        // "vložit do banku množství žetonů, které odpovídá velikosti big blindu": a new
        // player dealt in off the big blind posts one, live.
        for &s in &p.dealt {
            let new_poster = matches!(
                t.seat(s).expect("dealt in").status,
                Status::New(NewPlayerOption::PostBigBlind)
            );
            if new_poster && !p.fresh && s != p.big_blind && Some(s) != p.small_blind {
                post(t, &mut hand, s, blinds.big, Blind::NewPlayerBigBlind, fx);
            }
        }
        t.hand = Some(hand);
        Ok(())
    }

    /// The first bet of a betting round at least, in minor units.
    pub(super) fn min_bet(&self) -> i64 {
        self.rules.blinds.big * i64::from(self.rules.betting.min_bet_big_blinds)
    }

    /// The player who may straddle: the first player dealt in left of the big blind, when he
    /// is neither blind (three players or more) and can post the whole straddle.
    pub(super) fn straddle_seat(&self, t: &Table, h: &Hand) -> Option<SeatNo> {
        let s = &self.rules.straddle;
        if !s.allowed || h.straddle.is_some() || h.heads_up {
            return None;
        }
        let seat = t
            .clockwise_after(h.big_blind)
            .find(|&x| h.player(x).is_some())?;
        if Some(seat) == h.small_blind || seat == h.big_blind {
            return None;
        }
        let p = h.player(seat)?;
        let stack = t.seat(seat)?.stack_minor;
        (p.in_round_minor + stack >= self.straddle_amount()).then_some(seat)
    }

    fn straddle_amount(&self) -> i64 {
        self.rules.blinds.big * i64::from(self.rules.straddle.big_blind_multiple)
    }

    /// "STRADDLE BET je dvojnásobkem velké sázky naslepo. Jedná se tedy o navýšení (RAISE) …
    /// Hráč se sázkou STRADDLE uzavírá před flopem sázky a má právo opětového navýšení."
    pub(super) fn straddle(
        &self,
        t: &mut Table,
        seat: SeatNo,
        fx: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        let clause = self.rules.straddle.clause.clone();
        let h = t.hand.as_ref().ok_or_else(|| {
            self.refuse(code::NO_HAND, "the straddle is posted in a hand", &clause)
        })?;
        let allowed = h.phase == Phase::PreDeal
            && h.players.iter().all(|p| p.hole.is_none())
            && self.straddle_seat(t, h) == Some(seat);
        if !allowed {
            return Err(self.refuse(
                code::STRADDLE_NOT_ALLOWED,
                format!(
                    "seat {seat} may not straddle now: only the player after the big blind, before the deal, with {} (not heads-up){}",
                    self.money(self.straddle_amount()),
                    if self.rules.straddle.allowed { "" } else { "; this plan has no straddle" }
                ),
                &clause,
            ));
        }
        let mut h = t.hand.take().expect("checked above");
        let amount = self.straddle_amount();
        let i = h.index(seat).expect("the straddle seat is dealt in");
        let add = amount - h.players[i].in_round_minor;
        post(t, &mut h, seat, add, Blind::Straddle, fx);
        h.straddle = Some(seat);
        if self.rules.straddle.counts_as_raise {
            // A raise of the big blind: the next raise adds at least as much again.
            h.full_raise_minor = amount - h.current_bet_minor;
            h.raises += 1;
            h.last_aggression = Some(Aggression {
                seat,
                street: Street::Preflop,
            });
        }
        h.current_bet_minor = amount;
        t.hand = Some(h);
        Ok(())
    }
}

/// Posts a forced bet of `amount` (all the player has, if less: "vloží co má").
fn post(
    t: &mut Table,
    h: &mut Hand,
    seat: SeatNo,
    amount: i64,
    blind: Blind,
    fx: &mut Vec<Effect>,
) {
    let stack = &mut t.seat_mut(seat).expect("a poster is seated").stack_minor;
    let paid = amount.min(*stack);
    *stack -= paid;
    let all_in = *stack == 0;
    let i = h.index(seat).expect("a poster is dealt in");
    let p = &mut h.players[i];
    p.in_round_minor += paid;
    p.in_hand_minor += paid;
    p.all_in = all_in;
    fx.push(Effect::Posted {
        seat,
        blind,
        amount_minor: paid,
        all_in,
    });
}
