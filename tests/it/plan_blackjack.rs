//! The blackjack plans against their sources: 002 › Blackjack (Evolution), Infinite Blackjack,
//! Blackjack (SYNOT Interactive), All Bets Blackjack, BLACKJACK – ENDLESS, BLACKJACK (Absolute
//! live gaming); 001 (single deck); 003 (Czech variant and its optional rules).

use pitboss::cards::DeckKind;
use pitboss::plan::model::AutoDecision;
use pitboss::plan::rules::blackjack::{
    BlackjackPaid, BlackjackRules, DealerBlackjackTakes, DoubleOn, HoleCard, InsuranceStake,
    PairMatch, PeekOn, PlayerBlackjackEffect, SeatingModel, SideBetCards, Soft17, SurrenderPaid,
    UnfundedDouble, UnfundedSplit,
};
use pitboss::plan::rules::GameRules;
use pitboss::plan::LoadedPlan;

use crate::source::{
    assert_limits_match_002, document, plan, ratio, refund, section_002, HEADINGS_002,
};

const SINGLE_DECK: &str = "001_cfac103a917a9392.txt";
const CZECH: &str = "003_610210d2e255b80d.txt";

/// The six blackjack games of 002 and their plans.
const GAMES_002: &[(&str, &str)] = &[
    ("evolution-blackjack@1", "Blackjack (Evolution)"),
    ("evolution-infinite-blackjack@1", "Infinite Blackjack"),
    ("synot-blackjack@1", "Blackjack (SYNOT Interactive)"),
    ("synot-all-bets-blackjack@1", "All Bets Blackjack"),
    ("alg-blackjack-endless@1", "BLACKJACK – ENDLESS"),
    ("alg-blackjack@1", "BLACKJACK (Absolute live gaming)"),
];

fn rules(p: &LoadedPlan) -> &BlackjackRules {
    match &p.plan.rules {
        GameRules::Blackjack(r) => r,
        other => panic!("{}: not blackjack rules: {other:?}", p.key()),
    }
}

/// The document says `phrase` in `heading`'s section of 002 (so that a test citing it fails if
/// the plan is re-pointed at a document that no longer says so).
fn says_002(heading: &str, phrase: &str) {
    assert!(
        section_002(heading).contains(phrase),
        "002 › {heading} does not say {phrase:?}"
    );
}

fn says(doc: &str, phrase: &str) {
    assert!(
        document(doc).contains(phrase),
        "{doc} does not say {phrase:?}"
    );
}

/// "Vítězné handy jsou vypláceny 1:1", blackjack "3:2", a tie returns the stake, split and
/// double stakes pay 1:1 (a split 21 is no blackjack), insurance 2:1.
fn assert_main_game_payouts(p: &LoadedPlan) {
    assert_eq!(ratio(p, "main", "win"), (1, 1), "{}", p.key());
    assert_eq!(ratio(p, "main", "blackjack"), (3, 2), "{}", p.key());
    assert_eq!(refund(p, "main", "push"), (1, 1), "{}", p.key());
    for bet in ["split", "double"] {
        assert_eq!(ratio(p, bet, "win"), (1, 1), "{}: {bet}", p.key());
        assert_eq!(refund(p, bet, "push"), (1, 1), "{}: {bet}", p.key());
    }
    if p.plan.bet("insurance").is_some() {
        assert_eq!(ratio(p, "insurance", "win"), (2, 1), "{}", p.key());
    }
}

/// "Dokonalý pár 25:1, Stejně barevný pár 12:1, Smíšený pár 6:1".
fn assert_pair_paytable(p: &LoadedPlan, bet: &str) {
    assert_eq!(ratio(p, bet, "perfect_pair"), (25, 1), "{}: {bet}", p.key());
    assert_eq!(
        ratio(p, bet, "coloured_pair"),
        (12, 1),
        "{}: {bet}",
        p.key()
    );
    assert_eq!(ratio(p, bet, "mixed_pair"), (6, 1), "{}: {bet}", p.key());
}

/// "Trojice v barvě 100:1, Čistá postupka 40:1, Trojice `trips`:1, Postupka 10:1, Barva 5:1".
fn assert_21_plus_3_paytable(p: &LoadedPlan, trips: u64) {
    let bet = "twenty_one_plus_three";
    assert_eq!(ratio(p, bet, "suited_trips"), (100, 1), "{}", p.key());
    assert_eq!(ratio(p, bet, "straight_flush"), (40, 1), "{}", p.key());
    assert_eq!(ratio(p, bet, "three_of_a_kind"), (trips, 1), "{}", p.key());
    assert_eq!(ratio(p, bet, "straight"), (10, 1), "{}", p.key());
    assert_eq!(ratio(p, bet, "flush"), (5, 1), "{}", p.key());
}

/// The rules every 002 blackjack section shares: "Hraje se s osmi balíčky karet"; the dealer
/// draws on 16 and stands on every 17 ("krupiér musí kartu eso vždy počítat s hodnotou 11");
/// the hole card is revealed "po odehrání všech sázejících"; one split, "dvě esa … už jen jednu
/// kartu", no blackjack after a split; insurance "polovinu částky své původní sázky".
fn assert_002_common_rules(p: &LoadedPlan) {
    let r = rules(p);
    assert_eq!(r.shoe.deck, DeckKind::Standard52, "{}", p.key());
    assert_eq!(r.shoe.decks, 8, "{}", p.key());
    assert_eq!(r.dealer.stand_on, 17, "{}", p.key());
    assert_eq!(r.dealer.soft_17, Soft17::Stand, "{}", p.key());
    assert_eq!(
        r.dealer.hole_card,
        HoleCard::RevealedAfterPlayers,
        "{}",
        p.key()
    );
    assert!(!r.blackjack.after_split_is_blackjack, "{}", p.key());
    assert!(r.blackjack.dealer_blackjack_beats_player_21, "{}", p.key());
    assert_eq!(
        r.blackjack.player_blackjack_paid,
        BlackjackPaid::AfterDealerHand,
        "{}",
        p.key()
    );
    assert!(r.split.allowed, "{}", p.key());
    assert_eq!(r.split.pair, Some(PairMatch::SameValue), "{}", p.key());
    assert_eq!(r.split.max_hands, Some(2), "{}", p.key());
    assert_eq!(r.split.aces_one_card, Some(true), "{}", p.key());
    assert!(r.double.allowed, "{}", p.key());
    assert_eq!(r.double.cards_dealt, Some(1), "{}", p.key());
    assert!(r.insurance.offered, "{}", p.key());
    assert_eq!(
        r.insurance
            .fraction_of_main
            .map(|f| (f.numerator(), f.denominator())),
        Some((1, 2)),
        "{}",
        p.key()
    );
    assert_eq!(
        r.insurance.stake,
        Some(InsuranceStake::Exactly),
        "{}",
        p.key()
    );
    assert!(r.player_bust_loses_even_if_dealer_busts, "{}", p.key());
}

/// Seven boxes with Bet Behind ("Tuto sázku lze uzavřít pouze na pozicích, na kterých je vsazena
/// hlavní sázka, kromě vlastní pozice Sázejícího"; unfunded double: "obdrží jednu kartu a poté
/// stojí"; unfunded split: "s tou na pravé straně").
fn assert_seven_boxes_with_bet_behind(p: &LoadedPlan) {
    let r = rules(p);
    assert_eq!(r.seating.model, SeatingModel::Seats, "{}", p.key());
    assert_eq!(r.seating.seats, Some(7), "{}", p.key());
    assert_eq!(
        (r.seating.min_players, r.seating.max_players),
        (1, Some(7)),
        "{}",
        p.key()
    );
    let b = &r.bet_behind;
    assert!(b.allowed, "{}", p.key());
    assert_eq!(b.only_on_boxes_with_main_bet, Some(true), "{}", p.key());
    assert_eq!(b.on_own_box, Some(false), "{}", p.key());
    assert_eq!(b.follows_owner, Some(true), "{}", p.key());
    assert_eq!(
        b.unfunded_double,
        Some(UnfundedDouble::OneCardThenStand),
        "{}",
        p.key()
    );
    assert_eq!(
        b.unfunded_split,
        Some(UnfundedSplit::RightHandOnly),
        "{}",
        p.key()
    );
}

/// One common hand for unlimited players: "neomezený počet sázejících", "1 box"; later cards
/// "mají … pro sázejícího, který zvolil volbu „Stát“, hodnotu 0".
fn assert_common_hand(p: &LoadedPlan) {
    let r = rules(p);
    assert_eq!(r.seating.model, SeatingModel::CommonHand, "{}", p.key());
    assert_eq!(r.seating.seats, None, "{}", p.key());
    assert_eq!(r.seating.max_players, None, "{}", p.key());
    let c = r.seating.common_hand.as_ref().expect("common-hand rules");
    assert!(c.cards_after_stand_count_zero, "{}", p.key());
    assert!(c.non_splitter_takes_cards_in_dealing_order, "{}", p.key());
    assert!(!r.bet_behind.allowed, "{}", p.key());
    assert!(p.plan.bet("bet_behind").is_none(), "{}", p.key());
}

/// Surrender "50 % hodnoty základní sázky", "pouze jednou, během prvního kola voleb", "není k
/// dispozici, pokud má Sázející Blackjack", paid after the round.
fn assert_surrender_half_after_round(p: &LoadedPlan) {
    let s = &rules(p).surrender;
    assert!(s.allowed, "{}", p.key());
    assert_eq!(s.first_decision_only, Some(true), "{}", p.key());
    assert_eq!(s.not_with_blackjack, Some(true), "{}", p.key());
    assert_eq!(s.main_bet_only, Some(true), "{}", p.key());
    assert_eq!(s.paid, Some(SurrenderPaid::AfterRound), "{}", p.key());
    assert_eq!(refund(p, "main", "surrender"), (1, 2), "{}", p.key());
}

fn side_bet_ids(p: &LoadedPlan) -> Vec<&str> {
    rules(p).side_bets.iter().map(|s| s.id.as_str()).collect()
}

fn timeout(p: &LoadedPlan) -> (AutoDecision, Option<u8>) {
    let t = p
        .plan
        .policies
        .decision_timeout
        .as_ref()
        .expect("a decision time-out policy");
    (t.automatic, t.hit_at_or_below)
}

// ---------------------------------------------------------------------------------------------
// 002 › Blackjack (Evolution)

/// 002 › Blackjack (Evolution) › Tabulka nejvyšších sázek a odvislých nejvyšších výher.
#[test]
fn evolution_blackjack_limits_are_the_documents() {
    assert_limits_match_002(&plan("evolution-blackjack@1"), "Blackjack (Evolution)");
}

/// 002 › Blackjack (Evolution) › "Cíl hry a výplaty výher" (1:1, 3:2), "Pojištění" (2:1),
/// "Vybrat (Surrender)" (50 %) and "Výplatní tabulka vedlejších sázek".
#[test]
fn evolution_blackjack_payouts_are_the_documents() {
    let p = plan("evolution-blackjack@1");
    assert_main_game_payouts(&p);
    assert_eq!(ratio(&p, "bet_behind", "win"), (1, 1));
    assert_eq!(ratio(&p, "bet_behind", "blackjack"), (3, 2));
    assert_eq!(refund(&p, "bet_behind", "surrender"), (1, 2));
    assert_pair_paytable(&p, "perfect_pairs");
    assert_21_plus_3_paytable(&p, 30);
}

/// 002 › Blackjack (Evolution): 8 decks, 7 boxes, dealer stands on soft 17, hole card revealed
/// after the players, one split with one card to split aces, no double after a split
/// ("nemůže již v rámci rozdělených hand zvolit možnost Zdvojnásobit"), insurance for Bet
/// Behind ("Pojištění je pro Bet Behind Sázejícího k dispozici").
#[test]
fn evolution_blackjack_forbids_double_after_split_and_insures_bet_behind() {
    let h = "Blackjack (Evolution)";
    let p = plan("evolution-blackjack@1");
    assert_002_common_rules(&p);
    assert_seven_boxes_with_bet_behind(&p);
    let r = rules(&p);
    says_002(
        h,
        "nemůže již v rámci rozdělených hand zvolit možnost Zdvojnásobit",
    );
    assert_eq!(r.double.after_split, Some(false));
    says_002(h, "Pojištění je pro Bet Behind Sázejícího k dispozici");
    assert_eq!(r.insurance.for_bet_behind, Some(true));
    assert!(p
        .plan
        .bet("insurance")
        .is_some_and(|b| b.requires.contains(&"bet_behind".to_string())));
    assert_surrender_half_after_round(&p);
    assert_eq!(side_bet_ids(&p), ["perfect_pairs", "twenty_one_plus_three"]);
}

/// 002 › Blackjack (Evolution) › Zásady odpojení/ztráty připojení: "(1) Pokud je celková
/// hodnota karet 11 a méně, označí se … volba Karta. (2) … vyšší než 11, … volba Stát."
#[test]
fn evolution_blackjack_timeout_hits_on_eleven_or_less_else_stands() {
    says_002(
        "Blackjack (Evolution)",
        "Pokud je celková hodnota karet 11 a méně, označí se po uplynutí času na rozhodnutí volba Karta",
    );
    let p = plan("evolution-blackjack@1");
    assert_eq!(timeout(&p), (AutoDecision::HitAtOrBelowElseStand, Some(11)));
    assert!(p.plan.policies.disconnect.placed_bets_stand);
    assert!(p.plan.policies.error.reconstruction_before_cancel);
}

// ---------------------------------------------------------------------------------------------
// 002 › Infinite Blackjack

/// 002 › Infinite Blackjack › Tabulka nejvyšších sázek a odvislých nejvyšších výher.
#[test]
fn infinite_blackjack_limits_are_the_documents() {
    assert_limits_match_002(
        &plan("evolution-infinite-blackjack@1"),
        "Infinite Blackjack",
    );
}

/// 002 › Infinite Blackjack › "Výplatní tabulka vedlejších sázek": Hot 3 "7-7-7 100:1, Součet
/// 21 karet v barvě 20:1, Součet 21 karet různé barvy 4:1, Součet 20 2:1, Součet 19 1:1"; Bust It
/// "Přes limit s 8 a více kartami 250:1 … se 3 kartami 1:1", returned on a player blackjack.
#[test]
fn infinite_blackjack_payouts_are_the_documents() {
    let p = plan("evolution-infinite-blackjack@1");
    assert_main_game_payouts(&p);
    assert_eq!(refund(&p, "main", "surrender"), (1, 2));
    assert_pair_paytable(&p, "perfect_pairs");
    assert_21_plus_3_paytable(&p, 30);
    for (outcome, r) in [
        ("seven_seven_seven", (100, 1)),
        ("suited_21", (20, 1)),
        ("unsuited_21", (4, 1)),
        ("total_20", (2, 1)),
        ("total_19", (1, 1)),
    ] {
        assert_eq!(ratio(&p, "hot_3", outcome), r, "hot_3 {outcome}");
    }
    for (outcome, r) in [
        ("bust_8_plus_cards", (250, 1)),
        ("bust_7_cards", (100, 1)),
        ("bust_6_cards", (50, 1)),
        ("bust_5_cards", (9, 1)),
        ("bust_4_cards", (2, 1)),
        ("bust_3_cards", (1, 1)),
    ] {
        assert_eq!(ratio(&p, "bust_it", outcome), r, "bust_it {outcome}");
    }
}

/// 002 › Infinite Blackjack › Bust It: "Vedlejší sázka Bust It se vrací, pokud má sázející
/// Blackjack" — a refund outcome, not a loss.
#[test]
fn bust_it_is_returned_when_the_player_has_blackjack() {
    says_002(
        "Infinite Blackjack",
        "Vedlejší sázka Bust It se vrací, pokud má sázející Blackjack",
    );
    let p = plan("evolution-infinite-blackjack@1");
    assert_eq!(refund(&p, "bust_it", "player_blackjack"), (1, 1));
    let bust_it = rules(&p)
        .side_bets
        .iter()
        .find(|s| s.id == "bust_it")
        .expect("bust_it declared");
    assert_eq!(bust_it.on_player_blackjack, PlayerBlackjackEffect::Refund);
    assert_eq!(bust_it.cards, SideBetCards::DealerFinalHand);
}

/// 002 › Infinite Blackjack: unlimited players on one common hand, later cards count 0 for a
/// player who stood; the Evolution rules (no double after split, surrender) and time-out.
#[test]
fn infinite_blackjack_is_a_common_hand_for_unlimited_players() {
    let h = "Infinite Blackjack";
    says_002(h, "hraje neomezený počet sázejících");
    says_002(h, "hodnotu 0");
    let p = plan("evolution-infinite-blackjack@1");
    assert_002_common_rules(&p);
    assert_common_hand(&p);
    assert_eq!(rules(&p).double.after_split, Some(false));
    assert_surrender_half_after_round(&p);
    assert_eq!(
        side_bet_ids(&p),
        ["perfect_pairs", "twenty_one_plus_three", "hot_3", "bust_it"]
    );
    assert_eq!(timeout(&p), (AutoDecision::HitAtOrBelowElseStand, Some(11)));
}

// ---------------------------------------------------------------------------------------------
// 002 › Blackjack (SYNOT Interactive)

/// 002 › Blackjack (SYNOT Interactive) › Tabulka nejvyšších sázek a odvislých nejvyšších výher.
#[test]
fn synot_blackjack_limits_are_the_documents() {
    assert_limits_match_002(&plan("synot-blackjack@1"), "Blackjack (SYNOT Interactive)");
}

/// 002 › Blackjack (SYNOT Interactive) › "Výplatní tabulka výherních poměrů": main 1:1,
/// Pojištění 2:1, Blackjack 3:2; Páry 25/12/6:1 for both Hráčův and Dealerův pár; 21+3;
/// Top 3 "Trojice v barvě 270:1, Postupka v barvě 180:1, Trojice 90:1".
#[test]
fn synot_blackjack_payouts_are_the_documents() {
    let p = plan("synot-blackjack@1");
    assert_main_game_payouts(&p);
    assert_eq!(refund(&p, "bet_behind", "surrender"), (1, 2));
    assert_pair_paytable(&p, "player_pair");
    assert_pair_paytable(&p, "dealer_pair");
    assert_21_plus_3_paytable(&p, 30);
    assert_eq!(ratio(&p, "top_3", "suited_trips"), (270, 1));
    assert_eq!(ratio(&p, "top_3", "straight_flush"), (180, 1));
    assert_eq!(ratio(&p, "top_3", "three_of_a_kind"), (90, 1));
}

/// 002 › Blackjack (SYNOT Interactive): "Pojištění není pro Bet Behind Sázejícího k dispozici";
/// surrender "po jejím dokončení je Sázejícímu vyplaceno 50 % hodnoty základní sázky"; time-out
/// "označí se po uplynutí času na rozhodnutí volba Stát"; the dealer pair is decided on the
/// dealer's first two cards.
#[test]
fn synot_blackjack_refuses_insurance_for_bet_behind_and_stands_on_timeout() {
    let h = "Blackjack (SYNOT Interactive)";
    says_002(h, "Pojištění není pro Bet Behind Sázejícího k dispozici");
    says_002(h, "je Sázejícímu vyplaceno 50 % hodnoty základní sázky");
    let p = plan("synot-blackjack@1");
    assert_002_common_rules(&p);
    assert_seven_boxes_with_bet_behind(&p);
    let r = rules(&p);
    assert_eq!(r.insurance.for_bet_behind, Some(false));
    assert_eq!(
        p.plan.bet("insurance").map(|b| b.requires.clone()),
        Some(vec!["main".to_string()])
    );
    assert_surrender_half_after_round(&p);
    assert_eq!(
        side_bet_ids(&p),
        [
            "twenty_one_plus_three",
            "top_3",
            "player_pair",
            "dealer_pair"
        ]
    );
    let dealer_pair = r.side_bets.iter().find(|s| s.id == "dealer_pair").unwrap();
    assert_eq!(dealer_pair.cards, SideBetCards::DealerFirstTwo);
    assert_eq!(timeout(&p), (AutoDecision::Stand, None));
}

// ---------------------------------------------------------------------------------------------
// 002 › All Bets Blackjack

/// 002 › All Bets Blackjack › Tabulka nejvyšších sázek a odvislých nejvyšších výher (printed in
/// two parts).
#[test]
fn all_bets_blackjack_limits_are_the_documents() {
    assert_limits_match_002(&plan("synot-all-bets-blackjack@1"), "All Bets Blackjack");
}

/// 002 › All Bets Blackjack › "Výplatní tabulka výherních poměrů": Lucky Lucky "777 v barvě
/// 200:1 … Jakákoliv 19 2:1"; Buster "8+ karet a hráč má blackjack 2000:1 … 3 nebo 4 karty 2:1".
#[test]
fn all_bets_blackjack_payouts_are_the_documents() {
    let p = plan("synot-all-bets-blackjack@1");
    assert_main_game_payouts(&p);
    assert_eq!(refund(&p, "main", "surrender"), (1, 2));
    assert_pair_paytable(&p, "perfect_pairs");
    assert_21_plus_3_paytable(&p, 30);
    assert_eq!(ratio(&p, "top_3", "suited_trips"), (270, 1));
    assert_eq!(ratio(&p, "top_3", "straight_flush"), (180, 1));
    assert_eq!(ratio(&p, "top_3", "three_of_a_kind"), (90, 1));
    for (outcome, r) in [
        ("suited_777", (200, 1)),
        ("suited_678", (100, 1)),
        ("unsuited_777", (50, 1)),
        ("unsuited_678", (25, 1)),
        ("suited_21", (15, 1)),
        ("unsuited_21", (3, 1)),
        ("any_20", (2, 1)),
        ("any_19", (2, 1)),
    ] {
        assert_eq!(
            ratio(&p, "lucky_lucky", outcome),
            r,
            "lucky_lucky {outcome}"
        );
    }
    for (outcome, r) in [
        ("bust_8_plus_cards_with_player_blackjack", (2000, 1)),
        ("bust_7_cards_with_player_blackjack", (800, 1)),
        ("bust_8_plus_cards", (250, 1)),
        ("bust_7_cards", (50, 1)),
        ("bust_6_cards", (18, 1)),
        ("bust_5_cards", (4, 1)),
        ("bust_3_or_4_cards", (2, 1)),
    ] {
        assert_eq!(ratio(&p, "buster", outcome), r, "buster {outcome}");
    }
}

/// 002 › All Bets Blackjack › Buster: "nejvyšší výhry jsou v kombinaci s blackjackem
/// Sázejícího".
#[test]
fn buster_is_enhanced_with_a_player_blackjack() {
    says_002(
        "All Bets Blackjack",
        "nejvyšší výhry jsou v kombinaci s blackjackem Sázejícího",
    );
    let p = plan("synot-all-bets-blackjack@1");
    let buster = rules(&p)
        .side_bets
        .iter()
        .find(|s| s.id == "buster")
        .expect("buster declared");
    assert_eq!(
        buster.on_player_blackjack,
        PlayerBlackjackEffect::EnhancedPayout
    );
}

/// 002 › All Bets Blackjack: common hand, "ALL BETS" / "ALL SIDE BETS" are buttons (no bet type
/// of that name; the plan records how they are treated), time-out "volba Stát".
#[test]
fn all_bets_buttons_are_not_bet_types() {
    let h = "All Bets Blackjack";
    says_002(
        h,
        "„ALL BETS“ tlačítko – umístění základní sázky a všech vedlejších sázek.",
    );
    let p = plan("synot-all-bets-blackjack@1");
    assert_002_common_rules(&p);
    assert_common_hand(&p);
    assert!(p.plan.bets.iter().all(|b| !b.id.contains("all")));
    let a = p
        .plan
        .assumption("rules.blackjack.side_bets")
        .expect("the buttons' treatment is an assumption");
    assert!(a.reason.contains("ALL BETS") && a.reason.contains("ALL SIDE BETS"));
    assert_eq!(
        side_bet_ids(&p),
        [
            "perfect_pairs",
            "twenty_one_plus_three",
            "top_3",
            "lucky_lucky",
            "buster"
        ]
    );
    assert_surrender_half_after_round(&p);
    assert_eq!(timeout(&p), (AutoDecision::Stand, None));
}

// ---------------------------------------------------------------------------------------------
// 002 › BLACKJACK – ENDLESS

/// 002 › BLACKJACK – ENDLESS › the limits table (printed without its heading); split, double and
/// insurance, which the table omits, carry assumed limits derived from the main bet.
#[test]
fn endless_blackjack_limits_are_the_documents() {
    let p = plan("alg-blackjack-endless@1");
    assert_limits_match_002(&p, "BLACKJACK – ENDLESS");
    let main = p.plan.bet("main").unwrap();
    for id in ["split", "double"] {
        let b = p.plan.bet(id).unwrap();
        assert_eq!(b.max_bet, main.max_bet, "{id}");
        assert!(p.plan.assumption(&format!("bets[{id}].max_bet")).is_some());
    }
    assert_eq!(p.plan.bet("insurance").unwrap().max_bet, main.max_bet / 2);
}

/// 002 › BLACKJACK – ENDLESS › "Výplatní tabulka výherních poměrů": 21+3 pays "Trojice 25:1"
/// here (30:1 elsewhere); "Páry" 25/12/6:1.
#[test]
fn endless_blackjack_pays_25_to_1_for_three_of_a_kind() {
    says_002("BLACKJACK – ENDLESS", "Trojice\t25:1");
    let p = plan("alg-blackjack-endless@1");
    assert_main_game_payouts(&p);
    assert_pair_paytable(&p, "perfect_pairs");
    assert_21_plus_3_paytable(&p, 25);
}

/// 002 › BLACKJACK – ENDLESS › Zásady odpojení/ztráty připojení: accepted bets stay; "nemá nárok
/// na pojištění a je automaticky ve stavu „Zastavit“"; stake returned when disconnected before
/// betting closes; "Pokud sázející neumístí sázku ve dvou po sobě jdoucích hrách, bude odstraněn".
#[test]
fn endless_blackjack_disconnected_player_stands_uninsured_and_is_removed_after_two_rounds() {
    let h = "BLACKJACK – ENDLESS";
    says_002(
        h,
        "nemá nárok na pojištění a je automaticky ve stavu „Zastavit“",
    );
    says_002(h, "neumístí sázku ve dvou po sobě jdoucích hrách");
    let p = plan("alg-blackjack-endless@1");
    let d = &p.plan.policies.disconnect;
    assert!(d.placed_bets_stand);
    assert!(d.refund_if_disconnected_before_betting_closes);
    assert!(d.pending_decisions_automatic);
    assert_eq!(d.remove_after_rounds_without_bet, Some(2));
    assert_eq!(rules(&p).insurance.for_disconnected, Some(false));
    assert_eq!(timeout(&p), (AutoDecision::Stand, None));
    assert!(p.plan.policies.table_closure.is_some());
}

/// 002 › BLACKJACK – ENDLESS: common hand, no surrender (the section offers none), side bets
/// 21+3 and Páry.
#[test]
fn endless_blackjack_is_a_common_hand_without_surrender() {
    assert!(!section_002("BLACKJACK – ENDLESS").contains("Surrender"));
    let p = plan("alg-blackjack-endless@1");
    assert_002_common_rules(&p);
    assert_common_hand(&p);
    assert!(!rules(&p).surrender.allowed);
    assert!(p.plan.payouts.iter().all(|r| r.outcome != "surrender"));
    assert_eq!(side_bet_ids(&p), ["perfect_pairs", "twenty_one_plus_three"]);
}

// ---------------------------------------------------------------------------------------------
// 002 › BLACKJACK (Absolute live gaming)

/// 002 › BLACKJACK (Absolute live gaming) › Tabulka nejvyšších sázek a odvislých nejvyšších
/// výher.
#[test]
fn alg_blackjack_limits_are_the_documents() {
    assert_limits_match_002(&plan("alg-blackjack@1"), "BLACKJACK (Absolute live gaming)");
}

/// 002 › BLACKJACK (Absolute live gaming) › "Výplatní tabulka vedlejších sázek" and the main
/// game: surrender "Částka k výběru odpovídá 50 % hodnoty základní sázky".
#[test]
fn alg_blackjack_payouts_are_the_documents() {
    let p = plan("alg-blackjack@1");
    assert_main_game_payouts(&p);
    assert_pair_paytable(&p, "perfect_pairs");
    assert_21_plus_3_paytable(&p, 30);
    assert_surrender_half_after_round(&p);
}

/// 002 › BLACKJACK (Absolute live gaming): seven boxes with Bet Behind, "Pojištění je pro Bet
/// Behind Sázejícího k dispozici"; Zásady odpojení: "uplatní se automatické rozhodnutí
/// „Zastavit“".
#[test]
fn alg_blackjack_insures_bet_behind_and_stands_on_timeout() {
    let h = "BLACKJACK (Absolute live gaming)";
    says_002(h, "Pojištění je pro Bet Behind Sázejícího k dispozici");
    says_002(h, "uplatní se automatické rozhodnutí „Zastavit“");
    let p = plan("alg-blackjack@1");
    assert_002_common_rules(&p);
    assert_seven_boxes_with_bet_behind(&p);
    assert_eq!(rules(&p).insurance.for_bet_behind, Some(true));
    assert_eq!(timeout(&p), (AutoDecision::Stand, None));
    assert!(p.plan.policies.disconnect.pending_decisions_automatic);
}

/// Every blackjack section of 002 has a plan, and every plan cites its own section.
#[test]
fn every_blackjack_section_of_002_has_a_plan() {
    let blackjack_headings: Vec<&str> = HEADINGS_002
        .iter()
        .copied()
        .filter(|h| h.to_lowercase().contains("blackjack"))
        .collect();
    let planned: Vec<&str> = GAMES_002.iter().map(|(_, h)| *h).collect();
    assert_eq!(blackjack_headings.len(), planned.len());
    for h in blackjack_headings {
        assert!(planned.contains(&h), "{h} has no plan");
    }
    for (key, heading) in GAMES_002 {
        assert_eq!(plan(key).plan.source.section, *heading);
    }
}

/// Every outcome of the side-bet and main-game payout tables of 002 is written exactly as the
/// document prints it: a line "<label>\t<ratio>" in the game's section.
#[test]
fn payout_table_rows_appear_in_the_documents_tables() {
    for (key, heading) in GAMES_002 {
        let p = plan(key);
        let section = section_002(heading);
        for row in p
            .plan
            .payouts
            .iter()
            .filter(|r| r.clause.starts_with("Výplatní tabulka"))
        {
            let (Some(r), Some(label)) = (row.ratio, row.label.as_deref()) else {
                continue;
            };
            let line = format!("{label}\t{}:{}", r.numerator(), r.denominator());
            assert!(
                section.lines().any(|l| l.trim_end() == line),
                "{key}: {}/{} — no line {line:?} under {heading:?}",
                row.bet,
                row.outcome
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 001 — single deck

/// 001 › General Rules: "Decks: 1 deck (up to 8)", "Blackjack pays: 3 : 2", "Hole card: Dealer
/// peeks for blackjack (US)", "Insurance pays: 2 : 1", "Soft 17: dealer hits".
#[test]
fn single_deck_dealer_peeks_and_hits_soft_17() {
    for phrase in [
        "Decks: 1 deck (up to 8)",
        "Blackjack pays: 3 : 2",
        "Dealer peeks for blackjack (US)",
        "Insurance pays: 2 : 1",
        "Soft 17: dealer hits",
    ] {
        says(SINGLE_DECK, phrase);
    }
    let p = plan("single-deck-blackjack@1");
    let r = rules(&p);
    assert_eq!((r.shoe.deck, r.shoe.decks), (DeckKind::Standard52, 1));
    assert_eq!(r.dealer.stand_on, 17);
    assert_eq!(r.dealer.soft_17, Soft17::Hit);
    assert_eq!(r.dealer.hole_card, HoleCard::Peek);
    assert_eq!(r.dealer.peek_on, Some(PeekOn::AceOrTen));
    assert!(p
        .plan
        .assumption("rules.blackjack.dealer.peek_on")
        .is_some());
    assert_eq!(ratio(&p, "main", "blackjack"), (3, 2));
    assert_eq!(ratio(&p, "main", "win"), (1, 1));
    assert_eq!(refund(&p, "main", "push"), (1, 1));
    assert_eq!(ratio(&p, "insurance", "win"), (2, 1));
}

/// 001 › Notes: "If a player receives 21 on the 1st and 2nd card it is considered a
/// "blackjack" and the player is paid out immediately. The hand ties if dealer also has a
/// natural."
#[test]
fn single_deck_blackjack_is_paid_immediately_unless_the_dealer_has_one() {
    says(SINGLE_DECK, "the player is paid out immediately");
    let p = plan("single-deck-blackjack@1");
    let r = rules(&p);
    assert_eq!(
        r.blackjack.player_blackjack_paid,
        BlackjackPaid::Immediately
    );
    assert!(r.blackjack.dealer_blackjack_beats_player_21);
    assert_eq!(r.blackjack.dealer_blackjack_takes, None);
}

/// 001 › General Rules: "Double Down: any two cards", "Splits any pair of cards: a maximum of 3
/// times to make 4 hands", "Double after split: not allowed", "Surrender: not allowed".
#[test]
fn single_deck_splits_to_four_hands_without_double_after_split_or_surrender() {
    for phrase in [
        "Double Down: any two cards",
        "a maximum of 3 times to make 4 hands",
        "Double after split: not allowed",
        "Surrender: not allowed",
    ] {
        says(SINGLE_DECK, phrase);
    }
    let p = plan("single-deck-blackjack@1");
    let r = rules(&p);
    assert_eq!(r.double.on, Some(DoubleOn::AnyTwoCards));
    assert_eq!(r.double.after_split, Some(false));
    assert_eq!(r.double.cards_dealt, Some(1));
    assert_eq!(r.split.max_hands, Some(4));
    assert_eq!(r.split.pair, Some(PairMatch::SameValue));
    assert!(!r.surrender.allowed);
    assert!(p.plan.payouts.iter().all(|row| row.outcome != "surrender"));
    assert!(!r.bet_behind.allowed);
    assert!(r.side_bets.is_empty());
}

/// 001 gives no operator, currency or limits: each is a recorded assumption.
#[test]
fn single_deck_values_the_document_lacks_are_assumptions() {
    let p = plan("single-deck-blackjack@1");
    for field in [
        "plan.operator",
        "plan.currency",
        "bets[main].max_bet",
        "bets[insurance].max_bet",
        "rules.blackjack.insurance.fraction_of_main",
        "policies.error",
        "policies.disconnect",
    ] {
        assert!(p.plan.assumption(field).is_some(), "{field}");
    }
    assert_eq!(p.plan.source.section, "General Rules");
}

// ---------------------------------------------------------------------------------------------
// 003 — Czech blackjack

/// 003: "Na začátku hry tedy každý hráč obdrží dvě karty a bankéř pouze jednu" (no hole card);
/// "Pokud je součet bankéře do 16ti, musí vždy vzít další kartu, pokud je 17 a výše, nesmí brát
/// další kartu"; "Příklad varianty hry pro 2 až 6 hráčů".
#[test]
fn czech_dealer_gets_one_card_and_stands_on_17() {
    says(CZECH, "každý hráč obdrží dvě karty a bankéř pouze jednu");
    says(CZECH, "pokud je 17 a výše, nesmí brát další kartu");
    says(CZECH, "pro 2 až 6 hráčů");
    for key in ["czech-blackjack@1", "czech-blackjack-strict@1"] {
        let p = plan(key);
        let r = rules(&p);
        assert_eq!(r.dealer.hole_card, HoleCard::None, "{key}");
        assert_eq!(r.dealer.peek_on, None, "{key}");
        assert_eq!(r.dealer.stand_on, 17, "{key}");
        assert_eq!(r.dealer.soft_17, Soft17::Stand, "{key}");
        assert_eq!(
            (r.seating.min_players, r.seating.max_players),
            (2, Some(6)),
            "{key}"
        );
        assert_eq!(r.seating.seats, Some(6), "{key}");
    }
}

/// 003: "Hráč, který je „trop“, vždy prohrává a to i tehdy, pokud je „trop“ i bankéř"; "Pokud
/// má krupiér black jack, prohrávají svou sázku všichni hráči s výjimkou těch, kteří sami mají
/// black jack – ti končí nerozhodně (stand off)".
#[test]
fn czech_player_bust_loses_and_dealer_blackjack_beats_all_but_blackjack() {
    says(
        CZECH,
        "vždy prohrává a to i tehdy, pokud je „trop“ i bankéř",
    );
    says(CZECH, "ti končí nerozhodně (stand off)");
    for key in ["czech-blackjack@1", "czech-blackjack-strict@1"] {
        let p = plan(key);
        let r = rules(&p);
        assert!(r.player_bust_loses_even_if_dealer_busts, "{key}");
        assert!(r.blackjack.dealer_blackjack_beats_player_21, "{key}");
        assert_eq!(
            r.blackjack.dealer_blackjack_takes,
            Some(DealerBlackjackTakes::AllStakes),
            "{key}"
        );
        assert_eq!(refund(&p, "main", "push"), (1, 1), "{key}");
        assert!(!r.insurance.offered, "{key}");
        assert!(p.plan.bet("insurance").is_none(), "{key}");
        assert!(!r.surrender.allowed, "{key}");
    }
}

/// 003: "Výjimka: dvě esa mají součet 12 (11+1)" — read as "at most one ace counts 11", a
/// recorded interpretation; the document gives no ratios, so 1:1 and 3:2 are assumptions.
#[test]
fn czech_two_aces_count_12_and_missing_ratios_are_assumptions() {
    says(CZECH, "dvě esa mají součet 12 (11+1)");
    for key in ["czech-blackjack@1", "czech-blackjack-strict@1"] {
        let p = plan(key);
        assert!(
            p.plan.assumption("rules.blackjack.ace_counting").is_some(),
            "{key}"
        );
        assert_eq!(ratio(&p, "main", "win"), (1, 1), "{key}");
        assert_eq!(ratio(&p, "main", "blackjack"), (3, 2), "{key}");
        assert!(p.plan.assumption("payouts[main/win]").is_some(), "{key}");
        assert!(
            p.plan.assumption("payouts[main/blackjack]").is_some(),
            "{key}"
        );
        assert!(
            p.plan.assumption("rules.blackjack.shoe.decks").is_some(),
            "{key}"
        );
    }
}

/// 003 › Doplňková ustanovení, "Mohou se používat (ale také nemusí)": czech-blackjack@1 uses
/// none of them.
#[test]
fn czech_blackjack_without_optional_rules() {
    let p = plan("czech-blackjack@1");
    let r = rules(&p);
    assert_eq!(r.split.aces_one_card, Some(false)); // "Pouze jedna karta na rozdělené eso": off
    assert_eq!(r.split.max_hands, Some(2)); // "Vícenásobný split": off
    assert_eq!(r.double.on, Some(DoubleOn::AnyTwoCards)); // "Omezení double": off
    assert!(r.double.totals.is_empty());
    assert_eq!(r.double.after_split, Some(true)); // "Double po split" may be forbidden: not here
    assert_eq!(r.split.ten_value_cards, Some(true)); // "Zákaz split na desítku": off
}

/// 003 › Doplňková ustanovení in czech-blackjack-strict@1: "Pouze jedna karta na rozdělené eso"
/// on; "Omezení double (… například pouze při součtu 9, 10 nebo 11)" on; "Double po split" not
/// allowed; "Zákaz split na desítku" on; "Vícenásobný split" off.
#[test]
fn czech_strict_switches_on_the_restrictive_optional_rules() {
    says(
        CZECH,
        "vydá krupiér na každé eso pouze jednu kartu a hra končí",
    );
    says(CZECH, "pouze při součtu 9, 10 nebo 11");
    says(CZECH, "Zákaz split na desítku");
    let p = plan("czech-blackjack-strict@1");
    let r = rules(&p);
    assert_eq!(r.split.aces_one_card, Some(true));
    assert_eq!(r.double.on, Some(DoubleOn::Totals));
    assert_eq!(r.double.totals, [9, 10, 11]);
    assert_eq!(r.double.after_split, Some(false));
    assert_eq!(r.split.ten_value_cards, Some(false));
    assert_eq!(r.split.max_hands, Some(2));
    assert_eq!(r.split.resplit_aces, Some(false));
}

// ---------------------------------------------------------------------------------------------
// Lint: the rules decide which bets and payout rows a plan must have.

fn plan_findings(p: &LoadedPlan) -> Vec<String> {
    rules(p)
        .lint_plan(&p.plan)
        .into_iter()
        .map(|(path, _)| path)
        .collect()
}

#[test]
fn the_blackjack_plans_satisfy_the_plan_level_checks() {
    for key in GAMES_002.iter().map(|(k, _)| *k).chain([
        "single-deck-blackjack@1",
        "czech-blackjack@1",
        "czech-blackjack-strict@1",
    ]) {
        let p = plan(key);
        assert_eq!(plan_findings(&p), Vec::<String>::new(), "{key}");
    }
}

#[test]
fn insurance_bet_is_required_exactly_when_insurance_is_offered() {
    let mut p = plan("evolution-blackjack@1");
    p.plan.bets.retain(|b| b.id != "insurance");
    p.plan.payouts.retain(|r| r.bet != "insurance");
    assert!(plan_findings(&p).contains(&"bets[insurance]".to_string()));
    let mut p = plan("czech-blackjack@1");
    let mut ins = p.plan.bet("main").unwrap().clone();
    ins.id = "insurance".into();
    p.plan.bets.push(ins);
    assert!(plan_findings(&p).contains(&"bets[insurance]".to_string()));
}

#[test]
fn insurance_for_bet_behind_matches_what_the_insurance_bet_requires() {
    let mut p = plan("synot-blackjack@1");
    let ins = p
        .plan
        .bets
        .iter_mut()
        .find(|b| b.id == "insurance")
        .unwrap();
    ins.requires.push("bet_behind".into());
    assert!(plan_findings(&p).contains(&"bets[insurance].requires".to_string()));
}

#[test]
fn insurance_limit_is_at_most_half_the_main_limit() {
    let mut p = plan("alg-blackjack@1");
    let main_max = p.plan.bet("main").unwrap().max_bet;
    let ins = p
        .plan
        .bets
        .iter_mut()
        .find(|b| b.id == "insurance")
        .unwrap();
    ins.max_bet = main_max / 2 + 100;
    assert!(plan_findings(&p).contains(&"bets[insurance].max_bet".to_string()));
}

#[test]
fn surrender_refund_row_exists_exactly_when_surrender_is_allowed() {
    let mut p = plan("evolution-blackjack@1");
    p.plan
        .payouts
        .retain(|r| !(r.bet == "main" && r.outcome == "surrender"));
    assert!(plan_findings(&p).contains(&"payouts[main/surrender]".to_string()));
    let mut p = plan("alg-blackjack-endless@1");
    let mut row = p
        .plan
        .payouts
        .iter()
        .find(|r| r.outcome == "push")
        .unwrap()
        .clone();
    row.outcome = "surrender".into();
    p.plan.payouts.push(row);
    assert!(plan_findings(&p).contains(&"payouts[main/surrender]".to_string()));
}

#[test]
fn side_bets_in_bets_are_exactly_the_declared_side_bets() {
    let mut p = plan("evolution-infinite-blackjack@1");
    let GameRules::Blackjack(r) = &mut p.plan.rules else {
        unreachable!()
    };
    r.side_bets.retain(|s| s.id != "hot_3");
    assert!(plan_findings(&p).contains(&"bets[hot_3]".to_string()));
    let mut p = plan("evolution-infinite-blackjack@1");
    p.plan.bets.retain(|b| b.id != "hot_3");
    p.plan.payouts.retain(|r| r.bet != "hot_3");
    assert!(plan_findings(&p).contains(&"rules.blackjack.side_bets[hot_3]".to_string()));
}

#[test]
fn a_side_bet_requires_the_main_bet() {
    let mut p = plan("alg-blackjack@1");
    let pp = p
        .plan
        .bets
        .iter_mut()
        .find(|b| b.id == "perfect_pairs")
        .unwrap();
    pp.requires.clear();
    assert!(plan_findings(&p).contains(&"bets[perfect_pairs].requires".to_string()));
}

#[test]
fn bust_it_refund_row_follows_the_declared_player_blackjack_effect() {
    let mut p = plan("evolution-infinite-blackjack@1");
    p.plan
        .payouts
        .retain(|r| !(r.bet == "bust_it" && r.outcome == "player_blackjack"));
    assert!(plan_findings(&p).contains(&"payouts[bust_it/player_blackjack]".to_string()));
}

#[test]
fn buster_enhanced_rows_follow_the_declared_player_blackjack_effect() {
    let mut p = plan("synot-all-bets-blackjack@1");
    p.plan
        .payouts
        .retain(|r| !r.outcome.ends_with("_with_player_blackjack"));
    assert!(plan_findings(&p)
        .contains(&"rules.blackjack.side_bets[buster].on_player_blackjack".to_string()));
}

#[test]
fn split_and_double_limits_do_not_exceed_the_main_bet() {
    let mut p = plan("synot-blackjack@1");
    let split = p.plan.bets.iter_mut().find(|b| b.id == "split").unwrap();
    split.max_bet += 100;
    assert!(plan_findings(&p).contains(&"bets[split].max_bet".to_string()));
}

/// The plan-level checks run in the ordinary lint, as errors.
#[test]
fn plan_level_blackjack_checks_are_lint_errors() {
    use pitboss::plan::load::Severity;
    let mut p = plan("evolution-blackjack@1");
    p.plan.bets.retain(|b| b.id != "double");
    p.plan.payouts.retain(|r| r.bet != "double");
    let findings = pitboss::plan::lint::lint(&p.plan, &p.file, None);
    assert!(findings.iter().any(|f| f.severity == Severity::Error
        && f.code == "rule_inconsistent"
        && f.path == "bets[double]"));
}
