//! Rule tests against the real plan `c40-poker-holdem-cash@1` (blinds 10/20 Kč, smallest chip
//! 5 Kč, minimum buy-in 2 000 Kč), each named after the rule of 004 it checks.

use std::path::Path;

use chrono::{DateTime, Duration, TimeZone, Utc};

use super::*;
use crate::plan::registry::load_file;
use crate::plan::rules::poker::BettingStructure;

pub(super) const SB: i64 = 1_000;
pub(super) const BB: i64 = 2_000;
pub(super) const BUY_IN: i64 = 200_000;

pub(super) fn plan() -> Plan {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("game_plans");
    load_file(
        &dir.join("c40-poker-holdem-cash@1.toml"),
        Some(&dir.join("sources")),
    )
    .unwrap_or_else(|f| panic!("the poker plan loads: {f:?}"))
    .plan
}

pub(super) fn plan_with(f: impl FnOnce(&mut PokerCashRules)) -> Plan {
    let mut p = plan();
    let GameRules::PokerCash(r) = &mut p.rules else {
        panic!("a poker plan")
    };
    f(r);
    p
}

fn c(s: &str) -> Card {
    s.parse().expect("a card")
}

fn cards(s: &str) -> Vec<Card> {
    s.split_whitespace().map(c).collect()
}

fn two(s: &str) -> [Card; 2] {
    let v = cards(s);
    [v[0], v[1]]
}

/// A table under test: the plan, the table, the clock, and every accepted action.
pub(super) struct Game {
    pub plan: Plan,
    pub table: Table,
    pub now: DateTime<Utc>,
    pub log: Vec<(Action, DateTime<Utc>)>,
}

impl Game {
    pub fn new(plan: Plan) -> Game {
        let table = PokerRoomEngine::new(&plan)
            .expect("a poker plan")
            .new_table();
        Game {
            plan,
            table,
            now: Utc.with_ymd_and_hms(2026, 5, 1, 18, 0, 0).unwrap(),
            log: Vec::new(),
        }
    }

    pub fn engine(&self) -> PokerRoomEngine<'_> {
        PokerRoomEngine::new(&self.plan).expect("a poker plan")
    }

    pub fn try_apply(&mut self, a: Action) -> Result<Vec<Effect>, Refusal> {
        let e = PokerRoomEngine::new(&self.plan).expect("a poker plan");
        let before = self.table.clone();
        let r = e.apply(&mut self.table, &a, self.now);
        match &r {
            Ok(_) => self.log.push((a, self.now)),
            Err(x) => {
                assert_ne!(x.code, code::CHIP_CONSERVATION, "{a:?}: {x}");
                assert_eq!(self.table, before, "a refusal leaves the table as it was");
            }
        }
        r
    }

    #[track_caller]
    pub fn ok(&mut self, a: Action) -> Vec<Effect> {
        let shown = format!("{a:?}");
        self.try_apply(a)
            .unwrap_or_else(|r| panic!("{shown} is accepted: {r}"))
    }

    #[track_caller]
    pub fn refused(&mut self, a: Action, code: &str) -> Refusal {
        let shown = format!("{a:?}");
        let r = self.try_apply(a).expect_err(&format!("{shown} is refused"));
        assert_eq!(r.code, code, "{shown}: {r}");
        r
    }

    pub fn sit(&mut self, seat: SeatNo, chips: i64) {
        self.sit_as(
            seat,
            chips,
            Entry::MovedByHouse,
            NewPlayerOption::WaitForBigBlind,
        );
    }

    pub fn sit_as(&mut self, seat: SeatNo, chips: i64, entry: Entry, np: NewPlayerOption) {
        self.ok(Action::SitDown {
            seat,
            player: format!("p{seat}"),
            chips_minor: chips,
            entry,
            new_player: np,
        });
    }

    /// Draws the button to `button`: an ace of spades for him, lower cards for the others.
    pub fn draw(&mut self, button: SeatNo) {
        let Expected::BetweenHands {
            readiness: Readiness::ButtonDraw { players },
        } = self.expected()
        else {
            panic!("a draw is expected, not {:?}", self.expected())
        };
        let low = cards("2c 3c 4c 5c 6c 7c 8c 9c Tc Jc");
        let draw = players
            .iter()
            .zip(low)
            .map(|(&seat, card)| SeatCard {
                seat,
                card: if seat == button { c("As") } else { card },
            })
            .collect();
        self.ok(Action::DrawForButton { cards: draw });
    }

    pub fn expected(&self) -> Expected {
        self.engine().expected(&self.table)
    }

    pub fn turn(&self) -> Turn {
        match self.expected() {
            Expected::Decision(t) => t,
            other => panic!("a decision is expected, not {other:?}"),
        }
    }

    pub fn hand(&self) -> &Hand {
        self.table.hand.as_ref().expect("a hand is being played")
    }

    pub fn stack(&self, seat: SeatNo) -> i64 {
        self.table.seat(seat).expect("seated").stack_minor
    }

    /// Deals hole cards: `holes` for the named seats, spare low cards for the others.
    pub fn deal(&mut self, holes: &[(SeatNo, &str)]) {
        let Expected::HoleCards { seats, .. } = self.expected() else {
            panic!("hole cards are expected, not {:?}", self.expected())
        };
        let mut spare = cards("2d 3h 4s 6d 7h 8s 9d 2h 3s 4d 6h 7s 8d 9h 2s 3d").into_iter();
        for seat in seats {
            let hole = match holes.iter().find(|(s, _)| *s == seat) {
                Some((_, h)) => two(h),
                None => [spare.next().unwrap(), spare.next().unwrap()],
            };
            self.ok(Action::HoleCards { seat, cards: hole });
        }
    }

    pub fn board(&mut self, s: &str) -> Vec<Effect> {
        self.ok(Action::Board {
            cards: cards(s),
            burn: None,
        })
    }

    /// Everyone still to act checks or calls until the betting round closes.
    pub fn check_around(&mut self) {
        while let Expected::Decision(t) = self.expected() {
            let seat = t.seat;
            if t.to_call_minor == 0 {
                self.ok(Action::Check { seat });
            } else {
                self.ok(Action::Call { seat });
            }
        }
    }

    /// Deals if the hole cards are awaited, then everybody folds to the last player.
    pub fn fold_around(&mut self) {
        if matches!(self.expected(), Expected::HoleCards { .. }) {
            self.deal(&[]);
        }
        while let Expected::Decision(t) = self.expected() {
            self.ok(Action::Fold { seat: t.seat });
        }
    }

    /// Every player in the showdown shows, in its order.
    pub fn show_all(&mut self) -> Vec<Effect> {
        let mut fx = Vec::new();
        while let Expected::Showdown { seat } = self.expected() {
            fx.extend(self.ok(Action::Show { seat }));
        }
        fx
    }

    pub fn chips_total(&self) -> i64 {
        self.table.chips_at_table_minor()
    }
}

/// Four players of 2 000 Kč on seats 1–4, the button drawn to seat 1: the first hand has the
/// small blind on 2, the big blind on 3, and seat 4 acts first.
fn four() -> Game {
    let mut g = Game::new(plan());
    for s in 1..=4 {
        g.sit_as(s, BUY_IN, Entry::BuyIn, NewPlayerOption::WaitForBigBlind);
    }
    g.draw(1);
    g
}

/// Each pot paid: its index, its amount, and who got how much.
type Paid = (usize, i64, Vec<(SeatNo, i64)>);

fn awarded(fx: &[Effect]) -> Vec<Paid> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::PotAwarded {
                pot,
                amount_minor,
                shares,
                ..
            } => Some((
                *pot,
                *amount_minor,
                shares.iter().map(|s| (s.seat, s.amount_minor)).collect(),
            )),
            _ => None,
        })
        .collect()
}

fn acted(fx: &[Effect]) -> (Move, i64, i64) {
    fx.iter()
        .find_map(|e| match e {
            Effect::Acted {
                read_as,
                put_in_minor,
                returned_minor,
                ..
            } => Some((*read_as, *put_in_minor, *returned_minor)),
            _ => None,
        })
        .expect("a decision was taken")
}

fn legal(g: &Game) -> Vec<Legal> {
    g.turn().legal
}

fn raise_range(g: &Game) -> (i64, i64) {
    legal(g)
        .into_iter()
        .find_map(|l| match l {
            Legal::Raise {
                min_to_minor,
                max_to_minor,
            }
            | Legal::Bet {
                min_to_minor,
                max_to_minor,
            } => Some((min_to_minor, max_to_minor)),
            _ => None,
        })
        .expect("a bet or raise is legal")
}

fn may_raise(g: &Game) -> bool {
    legal(g).iter().any(|l| {
        matches!(
            l,
            Legal::Raise { .. } | Legal::Bet { .. } | Legal::AllIn { .. }
        )
    })
}

// ----- Buy-in -----

/// "Při vstupu do hry musí hráč zaplatit minimální buy in."
#[test]
fn buy_in_below_the_minimum_is_refused() {
    let mut g = Game::new(plan());
    let r = g.refused(
        Action::SitDown {
            seat: 1,
            player: "a".into(),
            chips_minor: BUY_IN - 500,
            entry: Entry::BuyIn,
            new_player: NewPlayerOption::WaitForBigBlind,
        },
        code::BELOW_MIN_BUY_IN,
    );
    assert_eq!(r.clause.as_deref(), Some("Buy-in"));
    assert_eq!(r.plan.as_deref(), Some("c40-poker-holdem-cash@1"));
    g.sit_as(1, BUY_IN, Entry::BuyIn, NewPlayerOption::WaitForBigBlind);
    assert_eq!(g.table.bought_in_minor, BUY_IN);
}

/// Every amount at the table is a whole number of the smallest chip (5 Kč).
#[test]
fn buy_in_is_whole_chips() {
    let mut g = Game::new(plan());
    g.refused(
        Action::SitDown {
            seat: 1,
            player: "a".into(),
            chips_minor: BUY_IN + 100,
            entry: Entry::BuyIn,
            new_player: NewPlayerOption::WaitForBigBlind,
        },
        code::NOT_WHOLE_CHIPS,
    );
}

/// "Hráč, který je nucen se přesunout na jiný stůl stejného limitu … může pokračovat se
/// stejným počtem žetonů, a to i tehdy, pokud je to méně, než je minimální buy-in."
#[test]
fn player_moved_by_the_house_keeps_a_short_stack() {
    let mut g = Game::new(plan());
    g.sit_as(
        1,
        15_000,
        Entry::MovedByHouse,
        NewPlayerOption::WaitForBigBlind,
    );
    assert_eq!(g.stack(1), 15_000);
}

/// "Hráč, který se rozhodne změnit stůl dobrovolně musí mít pro vstup na nový stůl počet
/// žetonů jako je minimální buy-in."
#[test]
fn voluntary_table_change_needs_the_minimum_buy_in() {
    let mut g = Game::new(plan());
    g.refused(
        Action::SitDown {
            seat: 1,
            player: "a".into(),
            chips_minor: 15_000,
            entry: Entry::VoluntaryChange,
            new_player: NewPlayerOption::WaitForBigBlind,
        },
        code::BELOW_MIN_BUY_IN,
    );
}

/// "Pokud hráč změní stůl a chce se v době kratší než 2 hodiny vrátit na ten původní, musí mít
/// minimálně takový počet žetonů, jako když opouštěl původní stůl."
#[test]
fn returning_within_two_hours_brings_at_least_the_chips_left_with() {
    let mut g = Game::new(plan());
    g.sit_as(1, 500_000, Entry::BuyIn, NewPlayerOption::WaitForBigBlind);
    let fx = g.ok(Action::Leave { seat: 1 });
    assert!(fx.contains(&Effect::Left {
        seat: 1,
        player: "p1".into(),
        chips_minor: 500_000
    }));
    g.now += Duration::minutes(119);
    let back = |chips| Action::SitDown {
        seat: 2,
        player: "p1".into(),
        chips_minor: chips,
        entry: Entry::BuyIn,
        new_player: NewPlayerOption::WaitForBigBlind,
    };
    g.refused(back(BUY_IN), code::BELOW_MIN_BUY_IN);
    // A voluntary change does not escape it either.
    g.refused(
        Action::SitDown {
            seat: 2,
            player: "p1".into(),
            chips_minor: BUY_IN,
            entry: Entry::VoluntaryChange,
            new_player: NewPlayerOption::WaitForBigBlind,
        },
        code::BELOW_MIN_BUY_IN,
    );
    // Two hours after he left, the minimum buy-in is enough again.
    g.now += Duration::minutes(1);
    g.ok(back(BUY_IN));
    assert_eq!(g.table.bought_in_minor - g.table.cashed_out_minor, BUY_IN);
}

#[test]
fn returning_within_two_hours_with_the_chips_left_with_is_accepted() {
    let mut g = Game::new(plan());
    g.sit_as(1, 500_000, Entry::BuyIn, NewPlayerOption::WaitForBigBlind);
    g.ok(Action::Leave { seat: 1 });
    g.now += Duration::minutes(30);
    g.sit_as(1, 500_000, Entry::BuyIn, NewPlayerOption::WaitForBigBlind);
}

/// A player dealt into the hand leaves, or adds chips, only after it.
#[test]
fn no_leaving_or_topping_up_during_a_hand_one_is_dealt_into() {
    let mut g = four();
    g.ok(Action::StartHand {});
    g.refused(Action::Leave { seat: 2 }, code::IN_HAND);
    g.refused(
        Action::TopUp {
            seat: 2,
            chips_minor: 10_000,
        },
        code::IN_HAND,
    );
    // A player not dealt in may.
    g.sit_as(6, BUY_IN, Entry::BuyIn, NewPlayerOption::WaitForBigBlind);
    g.ok(Action::TopUp {
        seat: 6,
        chips_minor: 10_000,
    });
    g.ok(Action::Leave { seat: 6 });
}

/// Plan `top_up = between_hands_up_to_max`: chips are added between hands; a player who has
/// lost every chip buys in again with the minimum.
#[test]
fn top_up_after_losing_every_chip_needs_the_minimum_buy_in() {
    let mut g = Game::new(plan());
    g.sit(1, BUY_IN);
    g.sit(2, 1_000);
    g.draw(1); // heads-up: seat 1 small blind, seat 2 big blind all-in for 10 Kč
    g.ok(Action::StartHand {});
    g.deal(&[(1, "As Ad"), (2, "7c 2h")]);
    for b in ["Kc Qd 5s", "Jh", "3s"] {
        g.board(b);
    }
    g.show_all();
    assert_eq!(g.stack(2), 0);
    g.refused(
        Action::TopUp {
            seat: 2,
            chips_minor: 50_000,
        },
        code::BELOW_MIN_BUY_IN,
    );
    let fx = g.ok(Action::TopUp {
        seat: 2,
        chips_minor: BUY_IN,
    });
    assert_eq!(
        fx,
        vec![Effect::ToppedUp {
            seat: 2,
            chips_minor: BUY_IN
        }]
    );
    // With chips left, any whole number of chips may be added.
    g.ok(Action::TopUp {
        seat: 1,
        chips_minor: 500,
    });
}

/// A player back from sitting out comes back as a new player: waiting, he is dealt in when
/// the big blind reaches him.
#[test]
fn player_back_from_sitting_out_waits_for_the_big_blind() {
    let mut g = four();
    g.ok(Action::SitOut { seat: 4 });
    let fx = g.ok(Action::StartHand {});
    assert!(
        matches!(&fx[0], Effect::HandStarted { big_blind: 3, dealt, .. } if dealt == &vec![1, 2, 3])
    );
    g.fold_around();
    g.ok(Action::SitIn {
        seat: 4,
        new_player: NewPlayerOption::WaitForBigBlind,
    });
    // Button 2, small blind 3, big blind: seat 4, who is dealt in.
    let fx = g.ok(Action::StartHand {});
    assert!(
        matches!(&fx[0], Effect::HandStarted { button: 2, big_blind: 4, dealt, .. } if dealt == &vec![1, 2, 3, 4])
    );
}

// ----- Button and blinds -----

/// "Pořadí barev se používá pouze … na začátku hry, kdy se rozhoduje, kdo bude sedět na
/// buttonu": the highest card takes the button, the suit order (spades, hearts, diamonds,
/// clubs) breaks a tie of ranks.
#[test]
fn button_draw_goes_to_the_highest_card_suits_breaking_ties() {
    let mut g = Game::new(plan());
    for s in 1..=3 {
        g.sit(s, BUY_IN);
    }
    let draw = |a: &str, b: &str, d: &str| Action::DrawForButton {
        cards: vec![
            SeatCard {
                seat: 1,
                card: c(a),
            },
            SeatCard {
                seat: 2,
                card: c(b),
            },
            SeatCard {
                seat: 3,
                card: c(d),
            },
        ],
    };
    g.refused(draw("Kh", "Kh", "2c"), code::BAD_DRAW);
    let fx = g.ok(draw("Kd", "Kh", "Qs"));
    assert_eq!(
        fx,
        vec![Effect::ButtonDrawn {
            seat: 2,
            card: c("Kh")
        }]
    );
    g.refused(draw("Kd", "Kh", "Qs"), code::NO_DRAW_NEEDED);
}

/// "dává první hráč po levé ruce dealera tzv. malý blind … a druhý hráč tzv. velký blind …
/// Hru v prvním sázkovém kole začíná hráč nalevo od big blindu."
#[test]
fn blinds_left_of_the_button_and_first_to_act_left_of_the_big_blind() {
    let mut g = four();
    let fx = g.ok(Action::StartHand {});
    assert_eq!(
        fx[..3],
        [
            Effect::HandStarted {
                hand: 1,
                button: 1,
                small_blind: Some(2),
                big_blind: 3,
                dealt: vec![1, 2, 3, 4],
                heads_up: false
            },
            Effect::Posted {
                seat: 2,
                blind: Blind::SmallBlind,
                amount_minor: SB,
                all_in: false
            },
            Effect::Posted {
                seat: 3,
                blind: Blind::BigBlind,
                amount_minor: BB,
                all_in: false
            },
        ]
    );
    g.deal(&[]);
    assert_eq!(g.turn().seat, 4);
    assert_eq!(g.turn().to_call_minor, BB);
}

/// "V dalších sázkových kolech hraje jako první hráč na pozici malého blindu tj. hráč po
/// levici dealera."
#[test]
fn after_the_flop_the_player_left_of_the_button_acts_first() {
    let mut g = four();
    g.ok(Action::StartHand {});
    g.deal(&[]);
    g.check_around();
    g.board("Kc Qd 5s");
    assert_eq!(g.turn().seat, 2);
}

/// "Button se posouvá ve směru hodinových ručiček po každé hře."
#[test]
fn button_moves_clockwise_after_each_hand() {
    let mut g = four();
    for (hand, (button, sb, bb)) in [(1, 2, 3), (2, 3, 4), (3, 4, 1), (4, 1, 2), (1, 2, 3)]
        .into_iter()
        .enumerate()
    {
        let fx = g.ok(Action::StartHand {});
        let Effect::HandStarted {
            button: b,
            small_blind,
            big_blind,
            ..
        } = &fx[0]
        else {
            panic!("a hand starts")
        };
        assert_eq!(
            (*b, *small_blind, *big_blind),
            (button, Some(sb), bb),
            "hand {hand}"
        );
        // Everybody folds to the big blind.
        g.fold_around();
    }
}

/// "Před každou hrou se vždy umístí správně big blind a podle něj se dále umísťují small blind
/// a button, i když to může někdy znamenat, že small blind nebo button budou na prázdném
/// místě": the small blind's player leaves, and the next button is on his empty seat.
#[test]
fn dead_button_when_the_last_small_blind_has_left() {
    let mut g = four();
    g.ok(Action::StartHand {}); // button 1, small blind 2, big blind 3
    g.fold_around();
    g.ok(Action::Leave { seat: 2 });
    let fx = g.ok(Action::StartHand {});
    assert_eq!(
        fx[0],
        Effect::HandStarted {
            hand: 2,
            button: 2,
            small_blind: Some(3),
            big_blind: 4,
            dealt: vec![1, 3, 4],
            heads_up: false
        }
    );
}

/// The same rule with the last big blind gone: the small blind falls on his empty seat and
/// nobody posts it (a dead small blind); the big blind still moves one player on.
#[test]
fn dead_small_blind_when_the_last_big_blind_has_left() {
    let mut g = four();
    g.ok(Action::StartHand {}); // button 1, small blind 2, big blind 3
    g.fold_around();
    g.ok(Action::Leave { seat: 3 });
    let fx = g.ok(Action::StartHand {});
    assert_eq!(
        fx[0],
        Effect::HandStarted {
            hand: 2,
            button: 2,
            small_blind: None,
            big_blind: 4,
            dealt: vec![1, 2, 4],
            heads_up: false
        }
    );
    assert!(!fx.iter().any(|e| matches!(
        e,
        Effect::Posted {
            blind: Blind::SmallBlind,
            ..
        }
    )));
    g.deal(&[]);
    // First to act pre-flop is still the player left of the big blind.
    assert_eq!(g.turn().seat, 1);
}

/// "Při hře dvou hráčů je small blind na buttonu": the button posts the small blind and acts
/// first before the flop, last after it.
#[test]
fn heads_up_small_blind_is_on_the_button() {
    let mut g = Game::new(plan());
    g.sit(3, BUY_IN);
    g.sit(7, BUY_IN);
    g.draw(7);
    let fx = g.ok(Action::StartHand {});
    assert_eq!(
        fx[..3],
        [
            Effect::HandStarted {
                hand: 1,
                button: 7,
                small_blind: Some(7),
                big_blind: 3,
                dealt: vec![3, 7],
                heads_up: true
            },
            Effect::Posted {
                seat: 7,
                blind: Blind::SmallBlind,
                amount_minor: SB,
                all_in: false
            },
            Effect::Posted {
                seat: 3,
                blind: Blind::BigBlind,
                amount_minor: BB,
                all_in: false
            },
        ]
    );
    g.deal(&[]);
    assert_eq!(g.turn().seat, 7);
    g.ok(Action::Call { seat: 7 });
    g.ok(Action::Check { seat: 3 });
    g.board("Kc Qd 5s");
    assert_eq!(g.turn().seat, 3);
    // The next hand swaps: seat 3 has the button and the small blind.
    g.check_around();
    g.board("Jh");
    g.check_around();
    g.board("2s");
    g.check_around();
    g.show_all();
    let fx = g.ok(Action::StartHand {});
    assert!(matches!(
        fx[0],
        Effect::HandStarted {
            button: 3,
            small_blind: Some(3),
            big_blind: 7,
            heads_up: true,
            ..
        }
    ));
}

/// "Hodnoty blindů jsou předem určené a nemění se ani když hráč nemá dostatek žetonů (vloží co
/// má, ale ostatní hrají jako by byly blindy normální)."
#[test]
fn short_big_blind_posts_all_in_and_the_others_play_the_full_blind() {
    let mut g = Game::new(plan());
    g.sit(1, BUY_IN);
    g.sit(2, BUY_IN);
    g.sit(3, 1_500); // moved here by the house with 15 Kč
    g.draw(1);
    let fx = g.ok(Action::StartHand {});
    assert!(fx.contains(&Effect::Posted {
        seat: 3,
        blind: Blind::BigBlind,
        amount_minor: 1_500,
        all_in: true
    }));
    g.deal(&[]);
    let t = g.turn();
    assert_eq!((t.seat, t.to_call_minor), (1, BB));
    // A raise is to at least two full big blinds.
    assert_eq!(raise_range(&g).0, 2 * BB);
}

/// "Nově přichozí hráč má dvě možnosti - čekat na big blind": a new player waiting is dealt in
/// when the big blind reaches him.
#[test]
fn new_player_waiting_is_dealt_in_at_the_big_blind() {
    let mut g = four();
    g.ok(Action::StartHand {}); // button 1, blinds 2 and 3
    g.sit_as(5, BUY_IN, Entry::BuyIn, NewPlayerOption::WaitForBigBlind);
    g.fold_around();
    // Hand 2: button 2, blinds 3 and 4: seat 5 waits.
    let fx = g.ok(Action::StartHand {});
    assert!(
        matches!(&fx[0], Effect::HandStarted { big_blind: 4, dealt, .. } if dealt == &vec![1, 2, 3, 4])
    );
    g.fold_around();
    // Hand 3: the big blind reaches seat 5.
    let fx = g.ok(Action::StartHand {});
    assert!(
        matches!(&fx[0], Effect::HandStarted { button: 3, big_blind: 5, dealt, .. } if dealt == &vec![1, 2, 3, 4, 5])
    );
}

/// "- vložit do banku množství žetonů, které odpovídá velikosti big blindu … Pokud hráč vloží
/// big blind, pak se toto pokládá za jeho otevírací sázku, při první možnosti ke hře může
/// zvyšovat": dealt in at once, his post is live and he has the option.
#[test]
fn new_player_posting_a_big_blind_plays_at_once_with_the_option() {
    let mut g = four();
    g.ok(Action::StartHand {});
    g.fold_around();
    // Hand 2 will be button 2, blinds 3 and 4; seat 6 sits between the big blind and the
    // button, where he may start.
    g.sit_as(6, BUY_IN, Entry::BuyIn, NewPlayerOption::PostBigBlind);
    let fx = g.ok(Action::StartHand {});
    assert!(matches!(&fx[0], Effect::HandStarted { dealt, .. } if dealt == &vec![1, 2, 3, 4, 6]));
    assert!(fx.contains(&Effect::Posted {
        seat: 6,
        blind: Blind::NewPlayerBigBlind,
        amount_minor: BB,
        all_in: false
    }));
    g.deal(&[]);
    // Seat 6 acts first; everyone calls round to him; his big blind counts: he may check or
    // raise.
    assert_eq!(g.turn().seat, 6);
    assert_eq!(g.turn().to_call_minor, 0);
    g.ok(Action::Check { seat: 6 });
    for s in [1, 2, 3] {
        g.ok(Action::Call { seat: s });
    }
    let t = g.turn();
    assert_eq!((t.seat, t.to_call_minor), (4, 0));
}

/// "Nikdy nemůže nový hráč začít hrát mezi buttonem a big blindem."
#[test]
fn new_player_cannot_start_between_the_button_and_the_big_blind() {
    let mut g = Game::new(plan());
    for s in [1, 3, 5] {
        g.sit(s, BUY_IN);
    }
    g.draw(1); // hand 1: button 1, blinds 3 and 5
    g.ok(Action::StartHand {});
    g.fold_around();
    // Hand 2 will be button 3 (the last small blind), small blind 5, big blind 1. Seat 4
    // sits between the button and the big blind.
    g.sit_as(4, BUY_IN, Entry::BuyIn, NewPlayerOption::PostBigBlind);
    let fx = g.ok(Action::StartHand {});
    assert!(
        matches!(&fx[0], Effect::HandStarted { button: 3, big_blind: 1, dealt, .. } if dealt == &vec![1, 3, 5])
    );
    assert!(!fx.iter().any(|e| matches!(
        e,
        Effect::Posted {
            blind: Blind::NewPlayerBigBlind,
            ..
        }
    )));
    g.fold_around();
    // Hand 3: button 5, small blind 1, big blind 3: seat 4 is past the big blind and posts.
    let fx = g.ok(Action::StartHand {});
    assert!(
        matches!(&fx[0], Effect::HandStarted { button: 5, big_blind: 3, dealt, .. } if dealt == &vec![1, 3, 4, 5])
    );
    assert!(fx.contains(&Effect::Posted {
        seat: 4,
        blind: Blind::NewPlayerBigBlind,
        amount_minor: BB,
        all_in: false
    }));
}

// ----- Straddle -----

/// "STRADDLE BET je dvojnásobkem velké sázky naslepo … Hráč se sázkou STRADDLE uzavírá před
/// flopem sázky a má právo opětového navýšení": the others call two big blinds; the action
/// ends with the straddler, who may check or raise.
#[test]
fn straddle_is_two_big_blinds_acts_last_preflop_and_has_the_option() {
    let mut g = four();
    g.ok(Action::StartHand {});
    let Expected::HoleCards { straddle_seat, .. } = g.expected() else {
        panic!("hole cards expected")
    };
    assert_eq!(straddle_seat, Some(4));
    g.refused(Action::Straddle { seat: 1 }, code::STRADDLE_NOT_ALLOWED);
    let fx = g.ok(Action::Straddle { seat: 4 });
    assert_eq!(
        fx,
        vec![Effect::Posted {
            seat: 4,
            blind: Blind::Straddle,
            amount_minor: 2 * BB,
            all_in: false
        }]
    );
    g.deal(&[]);
    // The player after the straddler acts first, facing two big blinds.
    let t = g.turn();
    assert_eq!((t.seat, t.to_call_minor), (1, 2 * BB));
    // The straddle is a raise of one big blind: a re-raise is to three big blinds at least.
    assert_eq!(raise_range(&g).0, 3 * BB);
    for s in [1, 2, 3] {
        g.ok(Action::Call { seat: s });
    }
    let t = g.turn();
    assert_eq!((t.seat, t.to_call_minor), (4, 0));
    assert!(t.legal.contains(&Legal::Check));
    assert!(may_raise(&g));
    g.ok(Action::Raise {
        seat: 4,
        to_minor: 8 * BB,
    });
    assert_eq!(g.turn().seat, 1);
}

/// The straddle is posted before the deal only.
#[test]
fn straddle_only_before_the_hole_cards() {
    let mut g = four();
    g.ok(Action::StartHand {});
    g.ok(Action::HoleCards {
        seat: 2,
        cards: two("Ah Kh"),
    });
    g.refused(Action::Straddle { seat: 4 }, code::STRADDLE_NOT_ALLOWED);
}

/// Heads-up, the player left of the big blind is the small blind: no straddle.
#[test]
fn no_straddle_heads_up() {
    let mut g = Game::new(plan());
    g.sit(1, BUY_IN);
    g.sit(2, BUY_IN);
    g.draw(1);
    g.ok(Action::StartHand {});
    g.refused(Action::Straddle { seat: 1 }, code::STRADDLE_NOT_ALLOWED);
}

// ----- Betting -----

/// "v holdemu je nejmenší možná částka, kterou lze vsadit rovna jednomu velkému blindu"
#[test]
fn minimum_bet_is_one_big_blind() {
    let mut g = four();
    g.ok(Action::StartHand {});
    g.deal(&[]);
    g.check_around();
    g.board("Kc Qd 5s");
    assert_eq!(raise_range(&g).0, BB);
    let r = g.refused(
        Action::Bet {
            seat: 2,
            to_minor: BB - 500,
        },
        code::BELOW_MIN_BET,
    );
    assert!(r.clause.as_deref().is_some_and(|c| c.ends_with(" 1.")));
    g.ok(Action::Bet {
        seat: 2,
        to_minor: BB,
    });
}

/// "Každá sázka, která není allin, musí být alespoň stejně vysoká jako byla poslední sázka
/// nebo zvýšení. Každý raise musí být minimálně rozdíl mezi posledními dvěma sázkami."
#[test]
fn raise_is_at_least_the_previous_bet_or_raise() {
    let mut g = four();
    g.ok(Action::StartHand {});
    g.deal(&[]);
    g.check_around();
    g.board("Kc Qd 5s");
    g.ok(Action::Bet {
        seat: 2,
        to_minor: 5_000,
    });
    assert_eq!(raise_range(&g).0, 10_000);
    g.refused(
        Action::Raise {
            seat: 3,
            to_minor: 9_500,
        },
        code::BELOW_MIN_RAISE,
    );
    g.ok(Action::Raise {
        seat: 3,
        to_minor: 12_000,
    });
    // The raise was 7 000: the next is to 19 000 at least.
    assert_eq!(raise_range(&g).0, 19_000);
    g.refused(Action::Check { seat: 4 }, code::CANNOT_CHECK);
    g.refused(
        Action::Bet {
            seat: 4,
            to_minor: 30_000,
        },
        code::BET_OR_RAISE,
    );
    g.refused(Action::Call { seat: 1 }, code::NOT_YOUR_TURN);
}

/// "Verbální deklarace sázky je závazná": a declared bet or raise is taken as declared, never
/// more than the player has.
#[test]
fn a_declared_bet_above_the_stack_is_refused() {
    let mut g = four();
    g.ok(Action::StartHand {});
    g.deal(&[]);
    g.refused(
        Action::Raise {
            seat: 4,
            to_minor: BUY_IN + 500,
        },
        code::ABOVE_STACK,
    );
    g.ok(Action::Raise {
        seat: 4,
        to_minor: BUY_IN,
    });
    assert_eq!(g.stack(4), 0);
}

/// An all-in short of a full raise is not a raise: the players who already acted may only
/// call or fold (plan `short_all_in = does_not_reopen_betting`).
#[test]
fn incomplete_all_in_does_not_reopen_the_betting() {
    let mut g = Game::new(plan());
    g.sit(1, BUY_IN);
    g.sit(2, BUY_IN);
    g.sit(3, BUY_IN);
    g.sit(4, 16_000);
    g.draw(4); // button 4: small blind 1, big blind 2, seat 3 first
    g.ok(Action::StartHand {});
    g.deal(&[]);
    g.check_around();
    g.board("Kc Qd 5s");
    // Seat 1 bets 10 000; seat 2 calls; seat 3 calls; seat 4 (14 000 left) goes all-in to
    // 14 000: 4 000 more, short of a full raise of 10 000.
    g.ok(Action::Bet {
        seat: 1,
        to_minor: 10_000,
    });
    g.ok(Action::Call { seat: 2 });
    g.ok(Action::Call { seat: 3 });
    let fx = g.ok(Action::AllIn { seat: 4 });
    assert_eq!(
        acted(&fx).0,
        Move::Raise {
            to_minor: 14_000,
            full: false
        }
    );
    for seat in [1, 2, 3] {
        let t = g.turn();
        assert_eq!((t.seat, t.to_call_minor), (seat, 4_000));
        assert!(!may_raise(&g), "seat {seat} may only call or fold");
        let r = g.refused(
            Action::Raise {
                seat,
                to_minor: 30_000,
            },
            code::RAISE_NOT_ALLOWED,
        );
        assert!(r.message.contains("does not reopen"), "{}", r.message);
        g.refused(Action::AllIn { seat }, code::RAISE_NOT_ALLOWED);
        g.ok(Action::Call { seat });
    }
    assert!(matches!(
        g.expected(),
        Expected::Board {
            street: Street::Turn,
            ..
        }
    ));
}

/// A player who has not acted yet may raise over a short all-in, by at least the last full
/// bet.
#[test]
fn incomplete_all_in_leaves_the_full_raise_for_players_yet_to_act() {
    let mut g = Game::new(plan());
    g.sit(1, BUY_IN);
    g.sit(2, 16_000);
    g.sit(3, BUY_IN);
    g.sit(4, BUY_IN);
    g.draw(4);
    g.ok(Action::StartHand {});
    g.deal(&[]);
    g.check_around();
    g.board("Kc Qd 5s");
    g.ok(Action::Bet {
        seat: 1,
        to_minor: 10_000,
    });
    g.ok(Action::AllIn { seat: 2 }); // to 14 000
    assert!(may_raise(&g));
    assert_eq!(raise_range(&g).0, 24_000);
}

/// Short all-ins that together leave a player facing a full raise reopen the betting for him.
#[test]
fn short_all_ins_adding_up_to_a_full_raise_reopen_the_betting() {
    let mut g = Game::new(plan());
    g.sit(1, BUY_IN);
    g.sit(2, 17_000); // 15 000 after the blinds' hand
    g.sit(3, 23_000); // 21 000
    g.sit(4, BUY_IN);
    g.draw(4);
    g.ok(Action::StartHand {});
    g.deal(&[]);
    g.check_around();
    g.board("Kc Qd 5s");
    g.ok(Action::Bet {
        seat: 1,
        to_minor: 10_000,
    });
    g.ok(Action::AllIn { seat: 2 }); // to 15 000: short
    g.ok(Action::AllIn { seat: 3 }); // to 21 000: short of 25 000
    g.ok(Action::Call { seat: 4 });
    // Seat 1 faces 11 000 over his 10 000: a full raise; he may raise again.
    assert_eq!(g.turn().seat, 1);
    assert!(may_raise(&g));
}

/// "Vložení jeden a půl plné sázky je považováno za zvýšení a hráč musí doplnit počet žetonů
/// do plné výše."
#[test]
fn one_and_a_half_bets_pushed_in_is_a_raise_to_be_completed() {
    let mut g = four();
    g.ok(Action::StartHand {});
    g.deal(&[]);
    g.check_around();
    g.board("Kc Qd 5s");
    g.ok(Action::Bet {
        seat: 2,
        to_minor: 10_000,
    });
    let before = g.stack(3);
    let fx = g.ok(Action::Chips {
        seat: 3,
        chips_minor: vec![5_000, 5_000, 5_000],
    });
    let (mv, put, returned) = acted(&fx);
    assert_eq!(
        mv,
        Move::Raise {
            to_minor: 20_000,
            full: true
        }
    );
    assert_eq!((put, returned), (20_000, 0));
    assert_eq!(g.stack(3), before - 20_000);
    assert!(fx
        .iter()
        .any(|e| matches!(e, Effect::Acted { by: Some(b), .. } if b.ends_with(" 8."))));
}

/// Fewer than one and a half bets pushed in without a word: a call, the rest goes back (plan
/// `below_threshold = call_excess_returned`).
#[test]
fn less_than_one_and_a_half_bets_pushed_in_is_a_call() {
    let mut g = four();
    g.ok(Action::StartHand {});
    g.deal(&[]);
    g.check_around();
    g.board("Kc Qd 5s");
    g.ok(Action::Bet {
        seat: 2,
        to_minor: 10_000,
    });
    let before = g.stack(3);
    let fx = g.ok(Action::Chips {
        seat: 3,
        chips_minor: vec![5_000, 5_000, 2_500, 1_000, 500],
    });
    assert_eq!(acted(&fx), (Move::Call, 10_000, 4_000));
    assert_eq!(g.stack(3), before - 10_000);
    // Chips worth a full raise are the raise they make.
    let fx = g.ok(Action::Chips {
        seat: 4,
        chips_minor: vec![10_000, 10_000, 5_000],
    });
    assert_eq!(
        acted(&fx).0,
        Move::Raise {
            to_minor: 25_000,
            full: true
        }
    );
}

/// "Pokud hráč vloží jediný žeton, jehož hodnota je větší než poslední sázka a neohlásí raise,
/// je toto považováno za call (dorovnání)."
#[test]
fn single_oversized_chip_without_a_declaration_is_a_call() {
    let mut g = four();
    g.ok(Action::StartHand {});
    g.deal(&[]);
    g.check_around();
    g.board("Kc Qd 5s");
    g.ok(Action::Bet {
        seat: 2,
        to_minor: 5_000,
    });
    let fx = g.ok(Action::Chips {
        seat: 3,
        chips_minor: vec![50_000],
    });
    let (mv, put, returned) = acted(&fx);
    assert_eq!((mv, put, returned), (Move::Call, 5_000, 45_000));
    assert!(fx
        .iter()
        .any(|e| matches!(e, Effect::Acted { by: Some(b), .. } if b.ends_with(" 9."))));
    // Declared, the same chip is a raise.
    g.ok(Action::Raise {
        seat: 4,
        to_minor: 50_000,
    });
}

/// Chips pushed in short of the call are refused unless they are all the player has.
#[test]
fn chips_short_of_the_call_are_refused_unless_all_in() {
    let mut g = four();
    g.ok(Action::StartHand {});
    g.deal(&[]);
    g.refused(
        Action::Chips {
            seat: 4,
            chips_minor: vec![1_000],
        },
        code::BELOW_CALL,
    );
}

/// Pot-limit: a bet or raise of at most the pot after the call.
#[test]
fn pot_limit_raise_is_at_most_the_pot_after_the_call() {
    let mut g = Game::new(plan_with(|r| {
        r.betting_structure = BettingStructure::PotLimit
    }));
    for s in 1..=4 {
        g.sit(s, BUY_IN);
    }
    g.draw(1);
    g.ok(Action::StartHand {});
    g.deal(&[]);
    // Blinds 10 + 20 in the pot; seat 4 calls 20 and raises the pot of 50: to 70.
    assert_eq!(raise_range(&g), (2 * BB, 7_000));
    g.refused(
        Action::Raise {
            seat: 4,
            to_minor: 7_500,
        },
        code::ABOVE_POT_LIMIT,
    );
    g.refused(Action::AllIn { seat: 4 }, code::ABOVE_POT_LIMIT);
    assert!(!legal(&g).iter().any(|l| matches!(l, Legal::AllIn { .. })));
    g.ok(Action::Raise {
        seat: 4,
        to_minor: 7_000,
    });
    // Seat 1: pot 100 (10 + 20 + 70), call 70 → 170; raise to 70 + 170 = 240.
    assert_eq!(raise_range(&g), (12_000, 24_000));
    g.ok(Action::Fold { seat: 1 });
    g.ok(Action::Fold { seat: 2 });
    g.ok(Action::Call { seat: 3 });
    g.board("Kc Qd 5s");
    // A bet after the flop: at most the pot, 10 (the small blind's) + 70 + 70 = 150.
    assert_eq!(raise_range(&g), (BB, 15_000));
}

/// No-limit: any bet up to all the player has.
#[test]
fn no_limit_bet_goes_up_to_the_whole_stack() {
    let mut g = four();
    g.ok(Action::StartHand {});
    g.deal(&[]);
    assert_eq!(raise_range(&g), (2 * BB, BUY_IN));
    assert!(legal(&g).contains(&Legal::AllIn { to_minor: BUY_IN }));
}

/// The part of a bet nobody matched goes back to its owner.
#[test]
fn uncalled_bet_is_returned() {
    let mut g = four();
    g.ok(Action::StartHand {});
    g.deal(&[]);
    g.ok(Action::Raise {
        seat: 4,
        to_minor: 10_000,
    });
    g.ok(Action::Fold { seat: 1 });
    g.ok(Action::Fold { seat: 2 });
    let fx = g.ok(Action::Fold { seat: 3 });
    assert!(fx.contains(&Effect::UncalledBetReturned {
        seat: 4,
        amount_minor: 8_000
    }));
    assert_eq!(
        awarded(&fx),
        vec![(0, SB + BB + BB, vec![(4, SB + BB + BB)])]
    );
    assert_eq!(g.stack(4), BUY_IN + SB + BB);
    assert!(g.table.hand.is_none());
}

// ----- Pots -----

/// "Pokud existuje vedlejší bank … je nejdříve vyhodnocený tento side pot a až po něm hlavní
/// bank. Pokud je side potů více, vyhodnocuje se nejdříve side pot, ve kterém jsou hráči,
/// kteří měli na začátku hry nejvíce žetonů": three players all-in for different amounts and
/// one who covers them; the side pots are paid from the last formed down to the main pot.
#[test]
fn side_pots_with_three_all_in_players_are_paid_before_the_main_pot() {
    let mut g = Game::new(plan());
    g.sit(1, 10_000);
    g.sit(2, 30_000);
    g.sit(3, 60_000);
    g.sit(4, BUY_IN);
    g.draw(4); // small blind 1, big blind 2, seat 3 first
    g.ok(Action::StartHand {});
    g.deal(&[
        (1, "As Ad"), // best: wins the main pot
        (2, "Ks Kd"), // second: wins side pot 1
        (3, "Qs Qd"), // third: wins side pot 2
        (4, "4h 5h"), // worst
    ]);
    g.ok(Action::AllIn { seat: 3 }); // 60 000
    g.ok(Action::Call { seat: 4 });
    g.ok(Action::AllIn { seat: 1 }); // 10 000
    let fx = g.ok(Action::AllIn { seat: 2 }); // 30 000
    let pots = fx
        .iter()
        .find_map(|e| match e {
            Effect::BettingClosed { pots, .. } => Some(pots.clone()),
            _ => None,
        })
        .expect("the betting closed");
    assert_eq!(
        pots,
        vec![
            Pot {
                amount_minor: 40_000,
                eligible: vec![1, 2, 3, 4],
                level_minor: 10_000
            },
            Pot {
                amount_minor: 60_000,
                eligible: vec![2, 3, 4],
                level_minor: 30_000
            },
            Pot {
                amount_minor: 60_000,
                eligible: vec![3, 4],
                level_minor: 60_000
            },
        ]
    );
    g.board("2c 7d 9h");
    g.board("Js");
    let fx = g.board("3d");
    // Nobody can bet: straight to the showdown. The short all-ins only called; seat 3's
    // all-in was the last raise: he shows first.
    assert!(fx.contains(&Effect::ShowdownOrder {
        first: ShowdownFirst::LastAggressor,
        order: vec![3, 4, 1, 2]
    }));
    let fx = g.show_all();
    assert_eq!(
        awarded(&fx),
        vec![
            (2, 60_000, vec![(3, 60_000)]),
            (1, 60_000, vec![(2, 60_000)]),
            (0, 40_000, vec![(1, 40_000)]),
        ]
    );
    assert_eq!(g.stack(1), 40_000);
    assert_eq!(g.stack(2), 60_000);
    assert_eq!(g.stack(3), 60_000);
    assert_eq!(g.stack(4), BUY_IN - 60_000);
    assert_eq!(g.chips_total(), 10_000 + 30_000 + 60_000 + BUY_IN);
}

/// "Pot se v této situaci dělí na části … Žeton, který zůstane navíc je rozdělen na nejmenší
/// žetony … Pokud zůstane jeden žeton nejmenší hodnoty, dostává ho hráč, který … sedí první za
/// buttonem ve směru hry."
#[test]
fn odd_chip_of_a_split_pot_goes_to_the_first_winner_after_the_button() {
    // A short stack of 25 Kč (five chips) all-in makes a pot of fifteen chips; two players
    // split it with the same two pair.
    let split = |holes: [(SeatNo, &str); 3]| {
        let mut g = Game::new(plan());
        g.sit(1, 2_500);
        g.sit(2, BUY_IN);
        g.sit(3, BUY_IN);
        g.draw(1); // button 1, small blind 2, big blind 3; seat 1 acts first
        g.ok(Action::StartHand {});
        g.deal(&holes);
        g.ok(Action::AllIn { seat: 1 });
        g.ok(Action::Call { seat: 2 });
        g.ok(Action::Call { seat: 3 });
        for b in ["Kc Kd 7h", "7s", "2c"] {
            g.board(b);
            g.check_around();
        }
        awarded(&g.show_all())
    };
    // Seats 2 and 3 win: seat 2 sits first after the button.
    assert_eq!(
        split([(1, "Qh Jd"), (2, "Ah 3d"), (3, "As 4c")]),
        vec![(0, 7_500, vec![(2, 4_000), (3, 3_500)])]
    );
    // The button's own player and seat 3 win: seat 3 comes first after the button, the button
    // last.
    assert_eq!(
        split([(1, "Ah 3d"), (2, "Qh Jd"), (3, "As 4c")]),
        vec![(0, 7_500, vec![(3, 4_000), (1, 3_500)])]
    );
}

/// Three winners of a pot of fourteen chips: four each, and the two odd chips one each to the
/// first two winners after the button.
#[test]
fn several_odd_chips_go_one_each_from_the_button_on() {
    let mut g = four(); // button 1, small blind 2, big blind 3, seat 4 first
    g.ok(Action::StartHand {});
    g.deal(&[(1, "2c 3d"), (2, "4c 4d"), (3, "2h 3s"), (4, "2d 3c")]);
    g.ok(Action::Call { seat: 4 });
    g.ok(Action::Call { seat: 1 });
    g.ok(Action::Fold { seat: 2 });
    g.ok(Action::Check { seat: 3 });
    for b in ["Th Jd Qc", "Ks", "Ad"] {
        g.board(b);
        g.check_around();
    }
    // 20 × 3 + 10 = 70 Kč = 14 chips.
    assert_eq!(
        awarded(&g.show_all()),
        vec![(0, 7_000, vec![(3, 2_500), (4, 2_500), (1, 2_000)])]
    );
}

#[test]
fn odd_chip_split_is_exact() {
    let p = plan();
    let e = PokerRoomEngine::new(&p).unwrap();
    let mut g = Game::new(plan());
    for s in [1, 4, 6, 9] {
        g.sit(s, BUY_IN);
    }
    g.draw(6);
    g.ok(Action::StartHand {});
    let h = g.hand().clone();
    // 11 chips of 5 Kč between seats 1 and 9, button 6: 9 is first after the button.
    let shares = e.split(&g.table, &h, 5_500, &[1, 9]);
    assert_eq!(
        shares,
        vec![
            Share {
                seat: 9,
                amount_minor: 3_000
            },
            Share {
                seat: 1,
                amount_minor: 2_500
            }
        ]
    );
    // Three winners, 11 chips: 3 each and two odd chips, one each from the button on.
    let shares = e.split(&g.table, &h, 5_500, &[1, 4, 9]);
    let amounts: Vec<(SeatNo, i64)> = shares.iter().map(|s| (s.seat, s.amount_minor)).collect();
    assert_eq!(amounts, vec![(9, 2_000), (1, 2_000), (4, 1_500)]);
}

/// "Pořadí barev v pokeru nerozhoduje": equal hands of different suits split the pot.
#[test]
fn equal_hands_split_whatever_their_suits() {
    let mut g = Game::new(plan());
    for s in 1..=2 {
        g.sit(s, BUY_IN);
    }
    g.draw(1);
    g.ok(Action::StartHand {});
    g.deal(&[(1, "As Ks"), (2, "Ah Kh")]);
    g.check_around();
    g.board("2c 7d 9s");
    g.check_around();
    g.board("Js");
    g.check_around();
    g.board("3d");
    g.check_around();
    let fx = g.show_all();
    assert_eq!(awarded(&fx), vec![(0, 2 * BB, vec![(2, BB), (1, BB)])]);
}

// ----- Showdown -----

/// "Pokud dojde v průběhu hry k navyšování potu, vždy musí první ukázat karty ten hráč, který
/// byl jako poslední agresivní tj. poslední betoval nebo raisoval" — over the whole hand
/// (plan `aggression_scope = whole_hand`).
#[test]
fn last_aggressor_shows_first() {
    let mut g = four();
    g.ok(Action::StartHand {});
    g.deal(&[]);
    g.check_around();
    g.board("Kc Qd 5s");
    g.ok(Action::Check { seat: 2 });
    g.ok(Action::Bet {
        seat: 3,
        to_minor: 4_000,
    });
    g.check_around();
    g.board("Jh");
    g.check_around();
    g.board("2s");
    let mut fx = Vec::new();
    while let Expected::Decision(t) = g.expected() {
        fx.extend(g.ok(Action::Check { seat: t.seat }));
    }
    assert!(fx.contains(&Effect::ShowdownOrder {
        first: ShowdownFirst::LastAggressor,
        order: vec![3, 4, 1, 2]
    }));
    assert_eq!(g.expected(), Expected::Showdown { seat: 3 });
    g.refused(Action::Show { seat: 4 }, code::NOT_YOUR_TURN);
}

/// "Pokud v průběhu hry nikdo nenavýší sázku (pouze hráči dorovnejí BB), ukazuje první karty
/// hráč, který je první na řadě."
#[test]
fn first_to_act_shows_first_when_nobody_bet() {
    let mut g = four();
    g.ok(Action::StartHand {});
    g.deal(&[]);
    g.check_around();
    for b in ["Kc Qd 5s", "Jh", "2s"] {
        g.board(b);
        g.check_around();
    }
    assert_eq!(g.expected(), Expected::Showdown { seat: 2 });
}

/// "Aby měl hráč nárok na jakoukoliv výhru … musí položit všechny své karty na stůl": a
/// player who mucks wins nothing, even with the best hand.
#[test]
fn mucked_hand_wins_nothing() {
    let mut g = Game::new(plan());
    g.sit(1, BUY_IN);
    g.sit(2, BUY_IN);
    g.draw(1);
    g.ok(Action::StartHand {});
    g.deal(&[(1, "As Ad"), (2, "7c 2h")]);
    g.check_around();
    for b in ["Kc Qd 5s", "Jh", "3s"] {
        g.board(b);
        g.check_around();
    }
    // Seat 2 (first after the button) shows first; seat 1 mucks his aces.
    g.ok(Action::Show { seat: 2 });
    let fx = g.ok(Action::Muck { seat: 1 });
    assert_eq!(awarded(&fx), vec![(0, 2 * BB, vec![(2, 2 * BB)])]);
}

/// Everybody else folded: the last player takes the pot without showing.
#[test]
fn last_player_in_wins_without_showing() {
    let mut g = four();
    g.ok(Action::StartHand {});
    g.deal(&[]);
    g.ok(Action::Fold { seat: 4 });
    g.ok(Action::Fold { seat: 1 });
    let fx = g.ok(Action::Fold { seat: 2 });
    // The big blind's unmatched half goes back; the pot is the two small blinds' worth.
    assert!(fx.contains(&Effect::UncalledBetReturned {
        seat: 3,
        amount_minor: BB - SB
    }));
    assert_eq!(awarded(&fx), vec![(0, 2 * SB, vec![(3, 2 * SB)])]);
    assert!(!fx.iter().any(|e| matches!(e, Effect::Shown { .. })));
    assert_eq!(g.stack(3), BUY_IN + SB);
}

// ----- Misdeal -----

/// "Následující situace jsou misdealem pouze v případě že, se na chybu přijde dříve … než dva
/// hráči rozehrají hru": the hand is void, the blinds go back, the button stays.
#[test]
fn misdeal_before_two_players_acted_voids_the_hand_and_returns_the_blinds() {
    let mut g = four();
    g.ok(Action::StartHand {});
    g.deal(&[]);
    g.ok(Action::Fold { seat: 4 });
    let fx = g.ok(Action::Misdeal {
        cause: MisdealKind::CardDealtOutOfOrder,
    });
    assert_eq!(
        fx,
        vec![Effect::HandVoided {
            hand: 1,
            reason: VoidReason::Misdeal {
                cause: MisdealKind::CardDealtOutOfOrder
            },
            returned: vec![
                Share {
                    seat: 2,
                    amount_minor: SB
                },
                Share {
                    seat: 3,
                    amount_minor: BB
                }
            ],
            clause: "Misdeal 5.".into()
        }]
    );
    for s in 1..=4 {
        assert_eq!(g.stack(s), BUY_IN);
    }
    // Dealt again with the same button and blinds.
    let fx = g.ok(Action::StartHand {});
    assert!(matches!(
        fx[0],
        Effect::HandStarted {
            hand: 2,
            button: 1,
            small_blind: Some(2),
            big_blind: 3,
            ..
        }
    ));
}

/// "Pokud hra začne (musí se vyjádřit alespoň dva hráči), misdeal už nemůže nastat. Blindy se
/// potom nevrací."
#[test]
fn misdeal_after_two_players_acted_is_refused_and_the_hand_stands() {
    let mut g = four();
    g.ok(Action::StartHand {});
    g.deal(&[]);
    g.ok(Action::Fold { seat: 4 });
    g.ok(Action::Call { seat: 1 });
    let r = g.refused(
        Action::Misdeal {
            cause: MisdealKind::ButtonMisplaced,
        },
        code::PLAY_STARTED,
    );
    assert_eq!(
        r.clause.as_deref(),
        Some("Misdeal (špatně rozdané karty) 10.")
    );
    assert_eq!(g.turn().seat, 2);
}

/// "Pokud je při flopu otočena jedna nebo více karet navíc, musí být flop rozdán znovu
/// (znovu se zamíchá balíček karet už bez spálené karty)": the flop's cards go back into the
/// deck and may come again.
#[test]
fn extra_card_exposed_on_the_flop_redeals_the_flop() {
    let mut g = four();
    g.ok(Action::StartHand {});
    g.deal(&[]);
    g.check_around();
    g.ok(Action::Board {
        cards: cards("Kc Qd 5s"),
        burn: Some(c("Jd")),
    });
    g.ok(Action::Misdeal {
        cause: MisdealKind::ExtraCardExposedOnFlop,
    });
    assert!(matches!(
        g.expected(),
        Expected::Board {
            street: Street::Flop,
            cards: 3
        }
    ));
    // The flop cards may come again; the burn card may not (it stays burnt).
    g.ok(Action::Board {
        cards: cards("5s Kc Ah"),
        burn: None,
    });
    assert_eq!(g.hand().board, cards("5s Kc Ah"));
    // After someone acts on the flop it is too late.
    g.ok(Action::Check { seat: 2 });
    g.refused(
        Action::Misdeal {
            cause: MisdealKind::ExtraCardExposedOnFlop,
        },
        code::NOT_APPLICABLE,
    );
}

// ----- Nesrovnalosti -----

/// "Pokud se objeví dvě stejné karty (stejná barva, stejná hodnota), všechny úkony jsou
/// neplatné a všechny žetony se vrací svým původním majitelům" — even after the flop's
/// betting.
#[test]
fn duplicate_card_voids_all_action_and_returns_every_chip() {
    let mut g = four();
    g.ok(Action::StartHand {});
    g.deal(&[(4, "Ah Kh")]);
    g.ok(Action::Raise {
        seat: 4,
        to_minor: 6_000,
    });
    g.check_around();
    g.board("Kc Qd 5s");
    g.ok(Action::Bet {
        seat: 2,
        to_minor: 10_000,
    });
    g.check_around();
    assert!(g.stack(2) < BUY_IN);
    // The turn shows a second ace of hearts.
    let fx = g.board("Ah");
    let Some(Effect::HandVoided {
        reason,
        returned,
        clause,
        ..
    }) = fx.last()
    else {
        panic!("the hand is voided: {fx:?}")
    };
    assert_eq!(
        *reason,
        VoidReason::Irregularity {
            kind: IrregularityKind::DuplicateCard
        }
    );
    assert_eq!(clause, "Nesrovnalosti 4.");
    assert_eq!(
        returned.iter().map(|s| s.amount_minor).sum::<i64>(),
        4 * 16_000
    );
    for s in 1..=4 {
        assert_eq!(g.stack(s), BUY_IN, "seat {s} has every chip back");
    }
    assert!(g.table.hand.is_none());
    // The same card twice in one deal is a duplicate too.
    g.ok(Action::StartHand {});
    g.ok(Action::HoleCards {
        seat: 1,
        cards: two("9c 9d"),
    });
    let fx = g.ok(Action::HoleCards {
        seat: 2,
        cards: two("9d Tc"),
    });
    assert!(matches!(fx.last(), Some(Effect::HandVoided { .. })));
}

/// "Pokud se v průběhu hry objeví karta s jiným rubem, všechny úkony jsou neplatné a všechny
/// žetony se vrací svým původním majitelům."
#[test]
fn card_with_a_different_back_in_play_voids_all_action() {
    let mut g = four();
    g.ok(Action::StartHand {});
    g.deal(&[]);
    g.ok(Action::Raise {
        seat: 4,
        to_minor: 6_000,
    });
    g.ok(Action::Call { seat: 1 });
    let fx = g.ok(Action::Irregularity {
        kind: IrregularityKind::DifferentBackInPlay,
        seat: None,
    });
    assert!(matches!(fx[0], Effect::HandVoided { .. }));
    for s in 1..=4 {
        assert_eq!(g.stack(s), BUY_IN);
    }
}

/// "Jedna nebo více karet chybějících v balíčku neruší výsledek hry"; "Pokud je karta [s jiným
/// rubem] objevena ve zbytku balíčku všechny úkony platí."
#[test]
fn missing_card_does_not_void_the_hand() {
    let mut g = four();
    g.ok(Action::StartHand {});
    g.deal(&[]);
    g.ok(Action::Raise {
        seat: 4,
        to_minor: 6_000,
    });
    let before = g.table.clone();
    let fx = g.ok(Action::Irregularity {
        kind: IrregularityKind::MissingCards,
        seat: None,
    });
    assert_eq!(
        fx,
        vec![Effect::Noted {
            consequence: Consequence::ActionStands,
            clause: "Nesrovnalosti 8.".into()
        }]
    );
    assert_eq!(g.table, before);
    g.ok(Action::Irregularity {
        kind: IrregularityKind::DifferentBackInStub,
        seat: None,
    });
    assert_eq!(g.table, before);
}

/// "Pokud si hráč karty nechrání nemá nárok na stížnosti, pokud mu dealer karty sebere jako
/// foldnuté": his hand is dead, the betting goes on without him.
#[test]
fn unprotected_cards_mucked_by_the_dealer_are_a_dead_hand() {
    let mut g = four();
    g.ok(Action::StartHand {});
    g.deal(&[]);
    // Seat 4 to act; seat 2's cards are taken.
    let fx = g.ok(Action::Irregularity {
        kind: IrregularityKind::UnprotectedCardsMucked,
        seat: Some(2),
    });
    assert!(matches!(fx[0], Effect::HandKilled { seat: 2, .. }));
    g.ok(Action::Fold { seat: 4 });
    // Seat 1 is next, then seat 3 (seat 2 is skipped): the small blind stays in the pot.
    let fx = g.ok(Action::Fold { seat: 1 });
    assert_eq!(awarded(&fx), vec![(0, 2 * SB, vec![(3, 2 * SB)])]);
    assert_eq!(g.stack(2), BUY_IN - SB);
}

// ----- Rake, chips, log -----

/// The plan takes no rake (`rake = "none"`): every chip of every pot goes to the players.
#[test]
fn no_rake_the_pots_go_whole_to_the_players() {
    let mut g = four();
    g.ok(Action::StartHand {});
    g.deal(&[(1, "As Ad")]);
    g.check_around();
    for b in ["Kc Qd 5s", "Jh", "2s"] {
        g.board(b);
        g.check_around();
    }
    let fx = g.show_all();
    let paid: i64 = awarded(&fx).iter().map(|(_, a, _)| a).sum();
    assert_eq!(paid, 4 * BB);
    assert_eq!(g.chips_total(), 4 * BUY_IN);
    assert_eq!(g.stack(1), BUY_IN + 3 * BB);
}

/// The log is the table: replaying the accepted actions with their times gives the same
/// table, and every action reads back from its JSON.
#[test]
fn replaying_the_logged_actions_rebuilds_the_table() {
    let mut g = four();
    g.ok(Action::StartHand {});
    g.ok(Action::Straddle { seat: 4 });
    g.deal(&[(1, "As Ad")]);
    g.ok(Action::Chips {
        seat: 1,
        chips_minor: vec![10_000],
    });
    g.check_around();
    g.board("Kc Qd 5s");
    g.ok(Action::Bet {
        seat: 2,
        to_minor: 4_000,
    });
    g.check_around();
    let p = plan();
    let e = PokerRoomEngine::new(&p).unwrap();
    let mut t = e.new_table();
    for (a, at) in &g.log {
        let json = serde_json::to_string(a).unwrap();
        let back: Action = serde_json::from_str(&json).unwrap();
        assert_eq!(&back, a, "{json}");
        e.apply(&mut t, &back, *at).unwrap();
    }
    assert_eq!(t, g.table);
}

#[test]
fn actions_read_from_their_documented_json() {
    let read = |s: &str| serde_json::from_str::<Action>(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    assert_eq!(
        read(
            r#"{"action": "sit_down", "seat": 3, "player": "p-17", "chips_minor": 200000, "entry": "buy_in"}"#
        ),
        Action::SitDown {
            seat: 3,
            player: "p-17".into(),
            chips_minor: 200_000,
            entry: Entry::BuyIn,
            new_player: NewPlayerOption::WaitForBigBlind
        }
    );
    assert_eq!(read(r#"{"action": "start_hand"}"#), Action::StartHand {});
    assert_eq!(
        read(r#"{"action": "raise", "seat": 4, "to_minor": 6000}"#),
        Action::Raise {
            seat: 4,
            to_minor: 6_000
        }
    );
    assert_eq!(
        read(r#"{"action": "board", "cards": ["2c", "7d", "Js"], "burn": "5h"}"#),
        Action::Board {
            cards: cards("2c 7d Js"),
            burn: Some(c("5h"))
        }
    );
    assert!(serde_json::from_str::<Action>(r#"{"action": "start_hand", "seat": 1}"#).is_err());
    assert!(serde_json::from_str::<Action>(r#"{"action": "fold"}"#).is_err());
    assert_eq!(
        read(r#"{"action": "irregularity", "kind": "duplicate_card"}"#),
        Action::Irregularity {
            kind: IrregularityKind::DuplicateCard,
            seat: None
        }
    );
}

/// A plan of another family is refused.
#[test]
fn engine_refuses_a_plan_of_another_family() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("game_plans");
    let p = load_file(&dir.join("oko-bere@1.toml"), Some(&dir.join("sources")))
        .expect("loads")
        .plan;
    let r = PokerRoomEngine::new(&p).expect_err("not a poker plan");
    assert_eq!(r.code, code::WRONG_FAMILY);
}

/// On time-out: check when nothing is owed, otherwise fold.
#[test]
fn automatic_decision_checks_or_folds() {
    let mut g = four();
    g.ok(Action::StartHand {});
    g.deal(&[]);
    assert_eq!(
        g.engine().automatic_decision(&g.table),
        Some(Action::Fold { seat: 4 })
    );
    g.check_around();
    g.board("Kc Qd 5s");
    assert_eq!(
        g.engine().automatic_decision(&g.table),
        Some(Action::Check { seat: 2 })
    );
}
