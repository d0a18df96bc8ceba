//! Casino Hold'em against the dealer: Evolution "Casino Hold'em (Evolution)" (Ante, "2x
//! Hrát", Bonus) and SYNOT "Casino Hold'em" (Ante, "Dorovnat", Call Blind, AA, Casino Razz).
//!
//! The rules read in the document's order: the deck and the deal, the player's decision after
//! the flop (Call at a multiple of the Ante, or fold), the dealer's qualification and what a
//! non-qualifying dealer means for the Ante and the Call, then the side bets. How much each
//! bet pays for each hand is the payout table's, not the rules'; lint checks that the two
//! agree (every hand class paid exactly once, a side bet in `[[bets]]` exactly when the rules
//! describe it).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::top_card::RankName;
use super::BetSpec;
use crate::cards::{DeckKind, Rank, Shoe};
use crate::money::Ratio;
use crate::plan::model::Plan;

pub const BETS: &[BetSpec] = &[
    BetSpec {
        id: "ante",
        summary: "the opening bet, paid by the player's final five-card hand; `push`: a tie with a qualified dealer",
        outcomes: &[
            "royal_flush",
            "straight_flush",
            "four_of_a_kind",
            "full_house",
            "flush",
            "straight",
            "three_of_a_kind",
            "two_pair",
            "pair_or_less",
            "straight_or_lower",
            "push",
        ],
    },
    BetSpec {
        id: "call",
        summary: "the call after the flop, a fixed multiple of the Ante (\"2x Hrát\" / \"Dorovnat\")",
        outcomes: &["win", "push", "dealer_not_qualified"],
    },
    BetSpec {
        id: "bonus",
        summary: "the player's two cards and the flop make a pair of aces or better (Evolution \"Bonus\")",
        outcomes: &[
            "royal_flush",
            "straight_flush",
            "four_of_a_kind",
            "full_house",
            "flush",
            "straight",
            "three_of_a_kind",
            "two_pair",
            "pair_of_aces",
        ],
    },
    BetSpec {
        id: "aa",
        summary: "the player's two cards and the flop make a pair of aces or better, paid only if the player calls (SYNOT \"AA\")",
        outcomes: &[
            "royal_flush",
            "straight_flush",
            "four_of_a_kind",
            "full_house",
            "flush",
            "pair_of_aces_to_straight",
        ],
    },
    BetSpec {
        id: "casino_razz",
        summary: "the player's two cards and the flop make a low hand, ace low (SYNOT \"Casino Razz\")",
        outcomes: &[
            "wheel_suited",
            "wheel_mixed_suits",
            "six_high",
            "seven_high",
            "eight_high",
            "nine_high",
            "ten_high",
            "jack_high",
        ],
    },
];

/// Poker hand classes, lowest first ("Tabulka karetních kombinací seřazených sestupně").
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum HandClass {
    /// "Vysoká karta (High card)".
    HighCard,
    /// "Pár".
    Pair,
    /// "Dva páry (Two pairs)".
    TwoPair,
    /// "Trojice (Three of a kind)".
    ThreeOfAKind,
    /// "Postupka (Straight)".
    Straight,
    /// "Jedna barva (Flush)".
    Flush,
    FullHouse,
    /// "Čtveřice (Four of a kind)".
    FourOfAKind,
    /// "Postupka v barvě (Straight flush)".
    StraightFlush,
    /// "Královská postupka (Royal Flush)".
    RoyalFlush,
}

impl HandClass {
    pub const ALL: [HandClass; 10] = [
        HandClass::HighCard,
        HandClass::Pair,
        HandClass::TwoPair,
        HandClass::ThreeOfAKind,
        HandClass::Straight,
        HandClass::Flush,
        HandClass::FullHouse,
        HandClass::FourOfAKind,
        HandClass::StraightFlush,
        HandClass::RoyalFlush,
    ];
}

/// Where a card of the first deal goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Position {
    /// The player's cards, face up ("lícem nahoru pro sázejícího").
    Player,
    /// The dealer's cards, face down ("pro krupiéra lícem dolů").
    Dealer,
    /// A community card ("společné karty").
    Board,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CasinoHoldemRules {
    /// "Hraje se s jedním balíčkem karet, který obsahuje 52 karet."
    pub shoe: Shoe,
    /// The deal before the decision: "nejprve první kartu lícem nahoru pro sázejícího, poté
    /// první kartu pro krupiéra lícem dolů, následuje druhá karta … pro sázejícího a druhá
    /// karta … pro krupiéra. Poté jsou rozdané tři společné karty".
    pub initial_deal_order: Vec<Position>,
    /// Community cards dealt after the calls: "rozdá poslední dvě společné karty".
    pub board_cards_after_decision: u8,
    /// The Call is this many times the Ante: "ve výši dvojnásobku své sázky Ante".
    pub call_multiple: u8,
    /// An ace plays high in A-K-Q-J-10 and low in 5-4-3-2-A ("Eso je speciální karta…").
    pub ace_in_straights: AceInStraights,
    /// "Aby se krupiér kvalifikoval ke hře, musí mít alespoň pár čtyřek … nebo lepší pokerovou
    /// kombinaci."
    pub dealer_qualifies_with: MinimumHand,
    /// "Pokud tomu tak není, sázka 2x Hrát se vrací a sázka Ante se vyplácí podle výplatní
    /// tabulky."
    pub dealer_not_qualified: NotQualified,
    /// SYNOT "Call Blind": the Call committed before the deal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_blind: Option<CallBlind>,
    /// Evolution "Bonus" or SYNOT "AA": a side bet on the player's two cards and the flop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flop_bonus: Option<FlopBonus>,
    /// SYNOT "Casino Razz".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub casino_razz: Option<CasinoRazz>,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AceInStraights {
    /// Ace high (A-K-Q-J-10) or low (5-4-3-2-A).
    HighOrLow,
}

/// A hand at least as good as `class`; for a pair, a pair of at least `pair_rank`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MinimumHand {
    pub class: HandClass,
    /// The lowest qualifying pair when `class` is `pair` (4 for "pár čtyřek", A for "pár es").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair_rank: Option<RankName>,
}

/// What a dealer who does not qualify means for the player's bets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NotQualified {
    pub ante: AnteWhenNotQualified,
    pub call: CallWhenNotQualified,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AnteWhenNotQualified {
    /// Paid by the Ante payout table on the player's hand ("se vyplácí podle výplatní
    /// tabulky"), whatever the dealer holds.
    PaidByPaytable,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CallWhenNotQualified {
    /// The Call is returned ("se vrací"): the `call` / `dealer_not_qualified` payout row.
    Returned,
}

/// SYNOT "Call Blind": "umožňuje vsadit na pozici Dorovnat (Call) před rozdáním karet a
/// automaticky se zúčastnit celého hracího kola. Sázka na pozici Call Blind představuje vždy
/// dvojnásobek sázky Ante. Po uzavření Sázky Call Blind, se automaticky zkopíruje polovina této
/// sázky na pozici Ante a všechny další žetony vložené na pozici Call Blind odpovídajícím
/// způsobem zvýší Sázku Ante."
///
/// So a Call Blind of C is a Call of C placed before the deal plus an Ante of C × the share,
/// placed with it (a further stake, not taken out of C); every chip added to the Call Blind
/// raises the Ante by the same share. The player is asked no decision and cannot fold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CallBlind {
    /// The Ante placed with a Call Blind, as a share of it ("polovina této sázky").
    pub ante_share: Ratio,
    /// "automaticky se zúčastnit celého hracího kola": no decision, no time-out, no fold.
    pub no_decision: bool,
    pub clause: String,
}

/// Which five cards a side bet looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FiveCards {
    /// "dvě karty sázejícího a první tři společné karty (tzv. flop)".
    HoleAndFlop,
}

/// Which bet type a flop bonus is in this plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FlopBonusBet {
    /// Evolution "Bonus".
    Bonus,
    /// SYNOT "AA".
    Aa,
}

impl FlopBonusBet {
    pub fn id(self) -> &'static str {
        match self {
            FlopBonusBet::Bonus => "bonus",
            FlopBonusBet::Aa => "aa",
        }
    }
}

/// What a side bet does when the player folds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SideBetOnFold {
    /// Settled on its cards as if the player had called ("i v případě, že se rozhodne pro
    /// Položit").
    StillSettled,
    /// Lost: the side bet needs the Call ("musí poté v průběhu hry Dorovnat, jinak sázky
    /// prohrávají").
    Lost,
}

/// "Sázející sází na to, že prvních pět rozdaných karet … bude obsahovat pár es nebo lepší
/// pokerovou kombinaci."
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlopBonus {
    pub bet: FlopBonusBet,
    pub cards: FiveCards,
    pub min_hand: MinimumHand,
    pub on_fold: SideBetOnFold,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RazzAce {
    /// "Eso se počítá jako nejnižší karta."
    Low,
}

/// "Cílem je získat co nejnižší možnou kombinaci pěti pokerových karet z prvních dvou karet a
/// prvních tří společných karet. Eso se počítá jako nejnižší karta. Pokud karetní kombinace
/// obsahuje jakoukoliv Dámu, Krále, Pár, Dva Páry, Trojici nebo Čtveřici sázející tuto vedlejší
/// sázku prohrává." A hand that does not lose is paid by its highest card (`six_high`, …);
/// 5-4-3-2-A by whether it is of one suit. A hand without a payout row loses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CasinoRazz {
    pub cards: FiveCards,
    pub ace: RazzAce,
    /// A hand holding any of these ranks loses ("jakoukoliv Dámu, Krále").
    pub losing_ranks: Vec<RankName>,
    /// A hand with two cards of one rank (pair, two pairs, three or four of a kind) loses.
    pub paired_hands_lose: bool,
    pub on_fold: SideBetOnFold,
    pub clause: String,
}

/// The hand classes an Ante or flop-bonus outcome stands for (a pair limited to the minimum
/// pair where the outcome says so). The engine pays a hand by the row whose classes hold its
/// class, the same reading lint checks the payout table with.
pub fn outcome_classes(outcome: &str) -> &'static [HandClass] {
    use HandClass::*;
    match outcome {
        "royal_flush" => &[RoyalFlush],
        "straight_flush" => &[StraightFlush],
        "four_of_a_kind" => &[FourOfAKind],
        "full_house" => &[FullHouse],
        "flush" => &[Flush],
        "straight" => &[Straight],
        "three_of_a_kind" => &[ThreeOfAKind],
        "two_pair" => &[TwoPair],
        "pair_or_less" => &[Pair, HighCard],
        "straight_or_lower" => &[Straight, ThreeOfAKind, TwoPair, Pair, HighCard],
        "pair_of_aces" => &[Pair],
        "pair_of_aces_to_straight" => &[Pair, TwoPair, ThreeOfAKind, Straight],
        _ => &[],
    }
}

/// Razz outcome → ranks every hand of that outcome holds (its highest card; the wheel all five).
fn razz_outcome_ranks(outcome: &str) -> &'static [Rank] {
    match outcome {
        "wheel_suited" | "wheel_mixed_suits" => {
            &[Rank::Ace, Rank::Two, Rank::Three, Rank::Four, Rank::Five]
        }
        "six_high" => &[Rank::Six],
        "seven_high" => &[Rank::Seven],
        "eight_high" => &[Rank::Eight],
        "nine_high" => &[Rank::Nine],
        "ten_high" => &[Rank::Ten],
        "jack_high" => &[Rank::Jack],
        _ => &[],
    }
}

fn lint_minimum_hand(path: &str, m: &MinimumHand, out: &mut Vec<(String, String)>) {
    match (m.class, m.pair_rank) {
        (HandClass::Pair, None) => out.push((
            format!("{path}.pair_rank"),
            "a minimum of a pair names the lowest qualifying pair".into(),
        )),
        (c, Some(_)) if c != HandClass::Pair => out.push((
            format!("{path}.pair_rank"),
            format!(
                "pair_rank applies only to a minimum of a pair, not of {}",
                crate::wire_name(&c)
            ),
        )),
        _ => {}
    }
}

impl CasinoHoldemRules {
    pub fn lint(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let p = "rules.casino_holdem";
        if self.shoe.decks == 0 {
            out.push((
                format!("{p}.shoe.decks"),
                "a shoe holds at least one deck".into(),
            ));
        }
        if self.shoe.deck != DeckKind::Standard52 {
            out.push((
                format!("{p}.shoe.deck"),
                "Casino Hold'em is dealt from 52-card decks".into(),
            ));
        }
        let count = |x: Position| self.initial_deal_order.iter().filter(|&&y| y == x).count();
        if count(Position::Player) != 2 || count(Position::Dealer) != 2 {
            out.push((
                format!("{p}.initial_deal_order"),
                "the player and the dealer get two cards each".into(),
            ));
        }
        if count(Position::Board) + usize::from(self.board_cards_after_decision) != 5 {
            out.push((
                format!("{p}.board_cards_after_decision"),
                format!(
                    "the board is five cards: {} before the decision and {} after it",
                    count(Position::Board),
                    self.board_cards_after_decision
                ),
            ));
        }
        if self.call_multiple < 1 {
            out.push((
                format!("{p}.call_multiple"),
                "the Call is at least the Ante".into(),
            ));
        }
        lint_minimum_hand(
            &format!("{p}.dealer_qualifies_with"),
            &self.dealer_qualifies_with,
            &mut out,
        );
        if let Some(cb) = &self.call_blind {
            // The Ante copied from a Call Blind must make the Call exactly call_multiple × Ante.
            let share = cb.ante_share;
            if u64::from(self.call_multiple) * share.numerator() != share.denominator() {
                out.push((
                    format!("{p}.call_blind.ante_share"),
                    format!(
                        "an Ante of {share} of the Call Blind does not make the Call {} × the Ante",
                        self.call_multiple
                    ),
                ));
            }
        }
        if let Some(fb) = &self.flop_bonus {
            lint_minimum_hand(&format!("{p}.flop_bonus.min_hand"), &fb.min_hand, &mut out);
        }
        if let Some(rz) = &self.casino_razz {
            let mut seen = std::collections::BTreeSet::new();
            for r in &rz.losing_ranks {
                if !seen.insert(r) {
                    out.push((
                        format!("{p}.casino_razz.losing_ranks"),
                        format!("{r} is listed twice"),
                    ));
                }
                if r.0 == Rank::Ace {
                    out.push((
                        format!("{p}.casino_razz.losing_ranks"),
                        "the ace counts low in Casino Razz and cannot be a losing rank".into(),
                    ));
                }
            }
        }
        out
    }

    /// The plan's bet types and payout rows agree with the rules.
    pub fn lint_against_plan(&self, plan: &Plan) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let p = "rules.casino_holdem";
        for main in ["ante", "call"] {
            if plan.bet(main).is_none() {
                out.push((
                    "bets".into(),
                    format!("Casino Hold'em needs the bet '{main}'"),
                ));
            }
        }
        let bonus_id = self.flop_bonus.as_ref().map(|f| f.bet.id());
        for id in ["bonus", "aa"] {
            match (bonus_id == Some(id), plan.bet(id).is_some()) {
                (true, false) => out.push((
                    format!("{p}.flop_bonus.bet"),
                    format!("describes the side bet '{id}' that the plan does not offer"),
                )),
                (false, true) => out.push((
                    format!("bets[{id}]"),
                    format!("the plan offers '{id}' but {p}.flop_bonus does not describe it"),
                )),
                _ => {}
            }
        }
        match (
            self.casino_razz.is_some(),
            plan.bet("casino_razz").is_some(),
        ) {
            (true, false) => out.push((
                format!("{p}.casino_razz"),
                "describes Casino Razz but the plan does not offer it".into(),
            )),
            (false, true) => out.push((
                "bets[casino_razz]".into(),
                format!("the plan offers Casino Razz but {p}.casino_razz does not describe it"),
            )),
            _ => {}
        }
        // Every hand class the Ante can end with is paid by exactly one row.
        if plan.bet("ante").is_some() {
            cover_classes(plan, "ante", &HandClass::ALL, &mut out);
        }
        if let Some(fb) = &self.flop_bonus {
            let id = fb.bet.id();
            if plan.bet(id).is_some() {
                let winning: Vec<HandClass> = HandClass::ALL
                    .into_iter()
                    .filter(|&c| c >= fb.min_hand.class)
                    .collect();
                cover_classes(plan, id, &winning, &mut out);
                let aces = MinimumHand {
                    class: HandClass::Pair,
                    pair_rank: Some(RankName(Rank::Ace)),
                };
                for row in plan.payouts_for(id) {
                    if row.outcome.starts_with("pair_of_aces") && fb.min_hand != aces {
                        out.push((
                            format!("payouts[{id}/{}]", row.outcome),
                            format!(
                                "pays a pair of aces but {p}.flop_bonus.min_hand is another hand"
                            ),
                        ));
                    }
                }
            }
        }
        if let Some(rz) = &self.casino_razz {
            for row in plan.payouts_for("casino_razz") {
                let held = razz_outcome_ranks(&row.outcome);
                if rz.losing_ranks.iter().any(|r| held.contains(&r.0)) {
                    out.push((
                        format!("payouts[casino_razz/{}]", row.outcome),
                        format!("pays a hand that {p}.casino_razz.losing_ranks makes lose"),
                    ));
                }
            }
        }
        out
    }
}

/// Each of `classes` is paid by exactly one of `bet`'s hand-class rows, and no row pays a
/// class outside them.
fn cover_classes(plan: &Plan, bet: &str, classes: &[HandClass], out: &mut Vec<(String, String)>) {
    for &c in classes {
        let rows: Vec<&str> = plan
            .payouts_for(bet)
            .filter(|r| outcome_classes(&r.outcome).contains(&c))
            .map(|r| r.outcome.as_str())
            .collect();
        match rows.len() {
            1 => {}
            0 => out.push((
                format!("bets[{bet}]"),
                format!(
                    "no payout row pays a hand of class {}",
                    crate::wire_name(&c)
                ),
            )),
            _ => out.push((
                format!("bets[{bet}]"),
                format!(
                    "a hand of class {} is paid by several rows: {}",
                    crate::wire_name(&c),
                    rows.join(", ")
                ),
            )),
        }
    }
    for r in plan.payouts_for(bet) {
        if outcome_classes(&r.outcome)
            .iter()
            .any(|c| !classes.contains(c))
        {
            out.push((
                format!("payouts[{bet}/{}]", r.outcome),
                "pays a hand that does not win this bet".into(),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::rules::GameRules;

    fn load(text: &str) -> (Plan, CasinoHoldemRules) {
        let plan = crate::plan::load::parse(std::path::Path::new("t.toml"), text).unwrap();
        let GameRules::CasinoHoldem(r) = plan.rules.clone() else {
            panic!("casino hold'em rules")
        };
        (plan, r)
    }

    fn evolution() -> (Plan, CasinoHoldemRules) {
        load(include_str!(
            "../../../game_plans/evolution-casino-holdem@1.toml"
        ))
    }

    fn synot() -> (Plan, CasinoHoldemRules) {
        load(include_str!(
            "../../../game_plans/synot-casino-holdem@1.toml"
        ))
    }

    #[test]
    fn both_plans_pass_their_own_rules() {
        for (plan, r) in [evolution(), synot()] {
            assert_eq!(r.lint(), Vec::<(String, String)>::new());
            assert_eq!(r.lint_against_plan(&plan), Vec::<(String, String)>::new());
        }
    }

    #[test]
    fn call_multiple_must_be_at_least_one() {
        let (_, mut r) = evolution();
        r.call_multiple = 0;
        assert!(r
            .lint()
            .iter()
            .any(|(p, _)| p == "rules.casino_holdem.call_multiple"));
    }

    #[test]
    fn call_blind_ante_share_must_match_the_call_multiple() {
        let (_, mut r) = synot();
        r.call_blind.as_mut().unwrap().ante_share = Ratio::new(1, 3).unwrap();
        let found = r.lint();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, "rules.casino_holdem.call_blind.ante_share");
    }

    #[test]
    fn a_qualifying_pair_names_its_rank() {
        let (_, mut r) = evolution();
        r.dealer_qualifies_with.pair_rank = None;
        assert_eq!(
            r.lint()[0].0,
            "rules.casino_holdem.dealer_qualifies_with.pair_rank"
        );
    }

    #[test]
    fn the_board_is_five_cards() {
        let (_, mut r) = evolution();
        r.board_cards_after_decision = 1;
        assert_eq!(
            r.lint()[0].0,
            "rules.casino_holdem.board_cards_after_decision"
        );
    }

    #[test]
    fn side_bet_in_bets_must_be_described_in_rules() {
        let (plan, mut r) = synot();
        r.casino_razz = None;
        let found = r.lint_against_plan(&plan);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, "bets[casino_razz]");
        let (plan, mut r) = evolution();
        r.flop_bonus.as_mut().unwrap().bet = FlopBonusBet::Aa;
        let found = r.lint_against_plan(&plan);
        assert!(found
            .iter()
            .any(|(p, _)| p == "rules.casino_holdem.flop_bonus.bet"));
        assert!(found.iter().any(|(p, _)| p == "bets[bonus]"));
    }

    #[test]
    fn every_ante_hand_class_is_paid_exactly_once() {
        let (mut plan, r) = evolution();
        plan.payouts
            .retain(|p| !(p.bet == "ante" && p.outcome == "two_pair"));
        let found = r.lint_against_plan(&plan);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].1.contains("two_pair"));
        // SYNOT's "straight or lower" row together with a separate straight row pays twice.
        let (mut plan, r) = synot();
        let mut extra = plan
            .payouts_for("ante")
            .find(|p| p.outcome == "flush")
            .unwrap()
            .clone();
        extra.outcome = "straight".into();
        plan.payouts.push(extra);
        let found = r.lint_against_plan(&plan);
        assert!(found
            .iter()
            .any(|(_, m)| m.contains("straight is paid by several rows")));
    }

    #[test]
    fn flop_bonus_pays_nothing_below_its_minimum_hand() {
        let (mut plan, r) = evolution();
        let mut extra = plan.payouts_for("bonus").next().unwrap().clone();
        extra.outcome = "pair_or_less".into();
        plan.payouts.push(extra);
        let found = r.lint_against_plan(&plan);
        assert!(
            found
                .iter()
                .any(|(p, _)| p == "payouts[bonus/pair_or_less]"),
            "{found:?}"
        );
    }

    #[test]
    fn razz_pays_no_hand_with_a_losing_rank() {
        let (plan, mut r) = synot();
        r.casino_razz
            .as_mut()
            .unwrap()
            .losing_ranks
            .push(RankName(Rank::Nine));
        let found = r.lint_against_plan(&plan);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, "payouts[casino_razz/nine_high]");
    }
}
