//! The player-versus-player games: Oko bere against "000" (section "Rules") and the C40 poker
//! room's Texas Hold'em cash table against "004" ("Všeobecná pravidla casina C40").
//!
//! Each test quotes the document's sentence in its doc comment and first checks that the
//! document still says it (`says`), then that the plan encodes it.

use pitboss::cards::{Card, DeckKind};
use pitboss::plan::model::AutoDecision;
use pitboss::plan::rules::oko_bere::{self, CardPattern, HandCondition, OkoBereRules, PiquetRank};
use pitboss::plan::rules::poker::{
    self, Consequence, IrregularityKind, MisdealKind, PokerCashRules,
};
use pitboss::plan::rules::{Family, GameRules};
use pitboss::plan::LoadedPlan;

use crate::source::{document, plan};

const OKO_BERE: &str = "000_d0d13f40c060e066.txt";
const C40: &str = "004_7d953d4795365800.txt";

/// Asserts that `doc` contains `phrase`, whitespace and line breaks aside.
fn says(doc: &str, phrase: &str) {
    let norm = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        norm(&document(doc)).contains(&norm(phrase)),
        "{doc} no longer says {phrase:?}"
    );
}

fn oko_plan() -> LoadedPlan {
    plan("oko-bere@1")
}

fn oko() -> OkoBereRules {
    match oko_plan().plan.rules {
        GameRules::OkoBere(r) => r,
        other => panic!("oko-bere@1 has {:?} rules", other.family()),
    }
}

fn poker_plan() -> LoadedPlan {
    plan("c40-poker-holdem-cash@1")
}

fn c40() -> PokerCashRules {
    match poker_plan().plan.rules {
        GameRules::PokerCash(r) => r,
        other => panic!("c40-poker-holdem-cash@1 has {:?} rules", other.family()),
    }
}

fn card(s: &str) -> Card {
    s.parse().expect("a card")
}

fn pat(s: &str) -> CardPattern {
    s.parse().expect("a card pattern")
}

fn assumed(p: &LoadedPlan, field: &str) {
    assert!(
        p.plan.assumption(field).is_some(),
        "{}: {field} is not in the document and must be listed under [[assumptions]]",
        p.key()
    );
}

// ---------------------------------------------------------------------------------------
// Oko bere (000, "Rules")
// ---------------------------------------------------------------------------------------

/// 000 › "# Rules": a game between players; the plan has no limits or payout table.
#[test]
fn oko_bere_plan_loads_without_house_tables() {
    let p = oko_plan();
    says(OKO_BERE, "# Rules");
    assert_eq!(p.plan.plan.family, Family::OkoBere);
    assert_eq!(p.plan.source.section, "Rules");
    assert_eq!(p.plan.source.document, OKO_BERE);
    assert!(p.plan.bets.is_empty() && p.plan.payouts.is_empty());
    // The one warning is the acknowledged suit list of the document ("clubs, crosses").
    let warned: Vec<&str> = p.warnings.iter().map(|w| w.path.as_str()).collect();
    assert_eq!(warned, ["rules.oko_bere.shoe"], "{:?}", p.warnings);
}

/// "Oko bere is usually played with a deck of 32 cards (7, 8, 9, 10, jacks, queens, kings
/// and aces in hearts, clubs, crosses and spades)."
#[test]
fn oko_bere_is_played_with_one_32_card_deck() {
    says(OKO_BERE, "Oko bere is usually played with a deck of 32 cards (7, 8, 9, 10, jacks, queens, kings and aces");
    let r = oko();
    assert_eq!(r.shoe.deck, DeckKind::Piquet32);
    assert_eq!(r.shoe.decks, 1);
    assert_eq!(r.shoe.total_cards(), 32);
    // The suit list is garbled in the document: acknowledged, not silently fixed.
    assert!(oko_plan()
        .plan
        .document_inconsistencies
        .iter()
        .any(|i| i.field == "rules.oko_bere.shoe"));
}

/// "It is either agreed upon by the players or drawn from the deck of cards (the highest
/// card gives)."
#[test]
fn banker_is_chosen_by_agreement_or_by_the_highest_card() {
    says(OKO_BERE, "It is either agreed upon by the players or drawn from the deck of cards (the highest card gives).");
    let r = oko();
    assert_eq!(
        r.banker_selection.methods,
        [
            oko_bere::BankerMethod::ByAgreement,
            oko_bere::BankerMethod::HighestCardDrawn
        ]
    );
    // Ace highest, seven lowest: the order of the draw is an assumption.
    assert_eq!(
        r.banker_selection.draw_rank_order.first(),
        Some(&PiquetRank::Seven)
    );
    assert_eq!(
        r.banker_selection.draw_rank_order.last(),
        Some(&PiquetRank::Ace)
    );
    assumed(
        &oko_plan(),
        "rules.oko_bere.banker_selection.draw_rank_order",
    );
}

/// "A minimum amount for setting up a bank and minimal bet size is usually determined before
/// the game." — no amount is given: both are assumptions.
#[test]
fn minimum_bank_and_minimum_bet_are_set_before_the_game() {
    says(OKO_BERE, "A minimum amount for setting up a bank and minimal bet size is usually determined before the game.");
    let r = oko();
    assert_eq!(r.min_bank, 10_000);
    assert_eq!(r.min_bet, 1_000);
    assert!(r.min_bet <= r.min_bank);
    let p = oko_plan();
    assumed(&p, "rules.oko_bere.min_bank");
    assumed(&p, "rules.oko_bere.min_bet");
}

/// "At the start of each round the banker asks one player to slice the deck."
#[test]
fn the_deck_is_cut_at_the_start_of_each_round() {
    says(
        OKO_BERE,
        "**At the start of each round** the `banker` asks one player to slice the deck.",
    );
    let r = oko();
    assert!(r.cut.every_round);
    assert_eq!(r.cut.by, oko_bere::CutBy::PlayerChosenByBanker);
}

/// "This could result in duel if both side agree - that means the following round will be
/// only between the two of them." … "It's important that the banker has the right to decline
/// offer after hearing initial bet size."
#[test]
fn duel_is_offered_after_the_cut_and_the_banker_may_refuse_it() {
    says(OKO_BERE, "This could result in `duel` if both side agree - that means the following round will be only between the two of them.");
    says(
        OKO_BERE,
        "the `banker` has the right to decline offer after hearing initial bet size.",
    );
    let d = oko().duel;
    assert!(d.allowed);
    assert_eq!(d.offered, oko_bere::DuelOffer::ByCutterAfterCut);
    assert!(d.banker_may_refuse_after_hearing_stake);
}

/// "The bet in this case can't be increased and the cards can't be exchanged."
#[test]
fn duel_allows_no_raise_and_no_card_exchange() {
    says(
        OKO_BERE,
        "The bet in this case can't be increased and the cards can't be exchanged.",
    );
    let d = oko().duel;
    assert!(!d.raise_allowed);
    assert!(!d.card_exchange_allowed);
}

/// "The player bets certain amount and the card at the bottom of sliced counts as first card
/// for both."
#[test]
fn duel_bottom_card_of_the_cut_is_the_first_card_of_both() {
    says(
        OKO_BERE,
        "the card at the bottom of sliced counts as first card for both.",
    );
    assert_eq!(
        oko().duel.first_card,
        oko_bere::DuelFirstCard::BottomCardOfCutSharedByBoth
    );
}

/// "The first player on the right side of player slicing starts."
#[test]
fn the_player_right_of_the_cutter_starts_and_the_banker_acts_last() {
    says(
        OKO_BERE,
        "The first player on the right side of player slicing starts.",
    );
    says(OKO_BERE, "when the game reaches the `banker`");
    assert_eq!(
        oko().first_to_act,
        oko_bere::FirstToAct::RightOfCutterThenRightwardsBankerLast
    );
}

/// "Winnings are therefore paid out as an equal bet with a payout ratio of 1:1 and it is
/// possible to bet up to the bank."
#[test]
fn bets_together_are_capped_by_the_bank_and_paid_one_to_one() {
    says(OKO_BERE, "Winnings are therefore paid out as an equal bet with a payout ratio of 1:1 and it is possible to bet up to the bank.");
    let r = oko();
    assert_eq!((r.win_ratio.numerator(), r.win_ratio.denominator()), (1, 1));
    assert_eq!(r.bet_cap, oko_bere::BetCap::TotalActiveBetsAtMostBank);
    assumed(&oko_plan(), "rules.oko_bere.bet_cap");
}

/// "The player can also before drawing each card increase his bet. Whenever player bets, the
/// banker adds the same amount to the bet from the bank."
#[test]
fn raises_before_each_card_are_matched_by_the_bank() {
    says(OKO_BERE, "The player can also before drawing each card increase his bet. Whenever player bets, the `banker` adds the same amount to the bet from the bank.");
    let r = oko();
    assert!(r.raise_before_each_card);
    assert_eq!(r.win_ratio, pitboss::money::Ratio::ONE);
}

/// "The goal of the game then for each player is to reach or get as close as possible to a
/// total of twenty-one without overdrawing."
#[test]
fn the_target_total_is_twenty_one() {
    says(
        OKO_BERE,
        "reach or get as close as possible to a total of twenty-one without overdrawing",
    );
    assert_eq!(oko().target_total, 21);
}

/// "Cards with number on them have that number's value"
#[test]
fn number_cards_count_their_face_value() {
    says(
        OKO_BERE,
        "Cards with number on them have that number's value",
    );
    let r = oko();
    for (rank, v) in [
        (PiquetRank::Seven, 7),
        (PiquetRank::Eight, 8),
        (PiquetRank::Nine, 9),
        (PiquetRank::Ten, 10),
    ] {
        assert_eq!(r.value_of(rank), Some(v), "{rank:?}");
    }
}

/// "Images (J, Q, K) are worth 1"
#[test]
fn pictures_count_one() {
    says(OKO_BERE, "Images (J, Q, K) are worth 1");
    let r = oko();
    for rank in [PiquetRank::Jack, PiquetRank::Queen, PiquetRank::King] {
        assert_eq!(r.value_of(rank), Some(1), "{rank:?}");
    }
}

/// "Aces are worth 11"
#[test]
fn aces_count_eleven() {
    says(OKO_BERE, "Aces are worth 11");
    assert_eq!(oko().value_of(PiquetRank::Ace), Some(11));
}

/// "with the exception 7 of hearts (also called šantala) which can be worth 7, 10 or 11
/// according to what is most beneficial for the player"
#[test]
fn santala_counts_seven_ten_or_eleven() {
    says(OKO_BERE, "**7 of hearts** (also called `šantala`) which can be worth 7, 10 or 11 according to what is most beneficial for the player");
    let r = oko();
    assert_eq!(r.wild_cards.len(), 1, "7♥ is the only card of choice");
    let s = &r.wild_cards[0];
    assert_eq!(s.id, "santala");
    assert_eq!(s.card, card("7h"));
    assert_eq!(s.values, [7, 10, 11]);
    assert_eq!(s.choice, oko_bere::WildChoice::BestForHolder);
}

/// "When someone receives two aces or ace and šantala he automatically wins independently of
/// hand of the other side"
#[test]
fn two_aces_or_ace_and_santala_win_outright() {
    says(OKO_BERE, "When someone receives two aces or ace and `šantala` he automatically wins independently of hand of the other side");
    let r = oko();
    let hands: Vec<(&str, &[CardPattern])> = r
        .outright_wins
        .iter()
        .map(|o| (o.id.as_str(), o.cards.as_slice()))
        .collect();
    assert_eq!(
        hands,
        [
            ("two_aces", &[pat("A"), pat("A")][..]),
            ("ace_and_santala", &[pat("A"), pat("7h")][..]),
        ]
    );
    // A plain seven with an ace is not šantala.
    assert!(!pat("7h").matches(card("7s")));
    // "independently of hand of the other side": when both have one, the tie rule (bank).
    assert_eq!(r.outright_against_outright, oko_bere::Winner::Bank);
    assumed(&oko_plan(), "rules.oko_bere.outright_against_outright");
}

/// "If the player (including banker) has on of the following hands, he can ask to get his
/// cards replced: First card seven; First card eight followed by seven; Five images; Cards
/// which totals to 15"
#[test]
fn the_four_replaceable_hands_are_the_documents() {
    says(OKO_BERE, "If the player (including banker) has on of the following hands, he can ask to get his cards replced:");
    for label in [
        "First card seven",
        "First card eight followed by seven",
        "Five images",
        "Cards which totals to 15",
    ] {
        says(OKO_BERE, label);
    }
    let r = oko();
    let hands: Vec<(&str, &HandCondition, &str)> = r
        .replaceable_hands
        .iter()
        .map(|h| (h.id.as_str(), &h.when, h.label.as_str()))
        .collect();
    assert_eq!(
        hands,
        [
            (
                "first_card_seven",
                &HandCondition::FirstCards(vec![pat("7")]),
                "First card seven"
            ),
            (
                "eight_then_seven",
                &HandCondition::FirstCards(vec![pat("8"), pat("7")]),
                "First card eight followed by seven"
            ),
            (
                "five_pictures",
                &HandCondition::AllPictures(5),
                "Five images"
            ),
            (
                "total_fifteen",
                &HandCondition::Total(15),
                "Cards which totals to 15"
            ),
        ]
    );
    assert!(r.banker_may_replace, "\"(including banker)\"");
    assumed(&oko_plan(), "rules.oko_bere.replacement");
}

/// "if he overdraws, he immediately loses his bet, which goes to the bank."
#[test]
fn a_bust_player_loses_his_stake_to_the_bank_at_once() {
    says(
        OKO_BERE,
        "if he overdraws, he immediately loses his bet, which goes to the bank.",
    );
    assert_eq!(
        oko().player_bust,
        oko_bere::PlayerBust::StakeToBankImmediately
    );
}

/// "He can ask for cards or stop. In case the banker overdraws, he looses all active bets."
#[test]
fn a_bust_banker_pays_every_active_bet() {
    says(
        OKO_BERE,
        "He can ask for cards or stop. In case the banker overdraws, he looses all active bets.",
    );
    let r = oko();
    assert_eq!(r.banker_bust, oko_bere::BankerBust::PaysAllActiveBets);
    assert_eq!(r.banker_drawing, oko_bere::BankerDrawing::FreeChoice);
}

/// "if the player has less or the same amount as banker, the money goes to the bank.
/// Otherwise the player wins."
#[test]
fn ties_go_to_the_bank() {
    says(OKO_BERE, "if the player has less or the same amount as `banker`, the money goes to the bank. Otherwise the player wins.");
    assert_eq!(oko().ties, oko_bere::Winner::Bank);
}

/// "In this case, the players decide whether they want to continue. If they do, the banker is
/// the last player that placed the last bet which emptied out the bank."
#[test]
fn an_empty_bank_passes_to_the_player_whose_bet_emptied_it() {
    says(OKO_BERE, "In this case, the players decide whether they want to continue. If they do, the `banker` is the last player that placed the last bet which emptied out the `bank`.");
    let e = oko().empty_bank;
    assert_eq!(e.continuation, oko_bere::Continuation::PlayersDecide);
    assert_eq!(
        e.next_banker,
        oko_bere::NextBanker::PlayerWhoseBetEmptiedTheBank
    );
}

/// "If the bank is double the initial size and the banker is satisfied he can at the start of
/// the round call malá domů, that means if he receives an eight or a king as his first card he
/// keeps the bank and new banker is drawn. If he received other card the game continues
/// normal way."
#[test]
fn mala_domu_needs_a_doubled_bank_and_keeps_it_on_an_eight_or_a_king() {
    says(OKO_BERE, "If the bank is double the initial size and the `banker` is satisfied he can at the start of the round call `malá domů`, that means if he receives an eight or a king as his first card he keeps the bank and new banker is drawn. If he received other card the game continues normal way.");
    let m = oko().mala_domu;
    assert_eq!(m.min_bank_multiple, 2);
    assert_eq!(m.called, oko_bere::MalaDomuCall::AtStartOfRound);
    assert_eq!(m.keep_on_first_card, [PiquetRank::Eight, PiquetRank::King]);
    assert_eq!(m.next_banker, oko_bere::NextBanker::SelectedAnew);
    assert_eq!(m.otherwise, oko_bere::MalaDomuOtherwise::RoundContinues);
    let p = oko_plan();
    assumed(&p, "rules.oko_bere.mala_domu.min_bank_multiple");
    assumed(&p, "rules.oko_bere.mala_domu.on_keep");
}

/// The document has no error, disconnect or time-out clause: each policy is an assumption,
/// and a player who cannot decide says "enough" ("If he does not want to risk further - he
/// announces \"enough\".").
#[test]
fn oko_bere_policies_are_assumptions_and_default_to_enough() {
    says(
        OKO_BERE,
        "If he does not want to risk further - he announces \"enough\".",
    );
    let p = oko_plan();
    for f in [
        "policies.error",
        "policies.disconnect",
        "policies.decision_timeout",
        "policies.timing.betting_window_ms",
        "policies.timing.decision_ms",
    ] {
        assumed(&p, f);
    }
    let pol = &p.plan.policies;
    assert_eq!(
        pol.decision_timeout.as_ref().map(|d| d.automatic),
        Some(AutoDecision::Stand)
    );
    assert!(pol.disconnect.placed_bets_stand && pol.disconnect.pending_decisions_automatic);
    assert_eq!(
        pol.error.on_cancel,
        pitboss::plan::model::CancelSettlement::RefundStakes
    );
    assert!(pol.error.clause.contains("assumption"));
}

// ---------------------------------------------------------------------------------------
// C40 poker room, Texas Hold'em cash table (004, "Všeobecná pravidla casina C40")
// ---------------------------------------------------------------------------------------

/// "Všeobecná pravidla casina C40": a game between players, no house tables.
#[test]
fn poker_plan_loads_without_house_tables() {
    says(C40, "Všeobecná pravidla casina C40");
    let p = poker_plan();
    assert_eq!(p.plan.plan.family, Family::PokerCash);
    assert_eq!(p.plan.source.section, "Všeobecná pravidla casina C40");
    assert!(p.plan.bets.is_empty() && p.plan.payouts.is_empty());
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    let r = c40();
    assert_eq!(r.shoe.deck, DeckKind::Standard52);
    assert_eq!(r.shoe.decks, 1);
    assert_eq!(r.game, poker::PokerGame::TexasHoldem);
    assumed(&p, "rules.poker_cash.game");
    assumed(&p, "rules.poker_cash.seats_max");
}

/// "Při vstupu do hry musí hráč zaplatit minimální buy in." — no amount is given.
#[test]
fn a_minimum_buy_in_is_required_to_enter() {
    says(
        C40,
        "Při vstupu do hry musí hráč zaplatit minimální buy in.",
    );
    let r = c40();
    assert_eq!(r.buy_in.min, 200_000);
    assert_eq!(r.buy_in.min, 100 * r.blinds.big);
    assert_eq!(r.buy_in.max, None);
    assumed(&poker_plan(), "rules.poker_cash.buy_in.min");
    assumed(&poker_plan(), "rules.poker_cash.buy_in");
}

/// "Hráč, který je nucen se přesunout na jiný stůl stejného limitu, protože jeho stávající se
/// rozpadl, nebo z rozhodnutí floormana, může pokračovat se stejným počtem žetonů, a to i
/// tehdy, pokud je to méně, než je minimální buy-in."
#[test]
fn a_player_moved_by_the_house_keeps_a_short_stack() {
    says(C40, "může pokračovat se stejným počtem žetonů, a to i tehdy, pokud je to méně, než je minimální buy-in.");
    assert_eq!(
        c40().buy_in.moved_by_house,
        poker::TableEntry::KeepsStackEvenShort
    );
}

/// "Hráč, který se rozhodne změnit stůl dobrovolně musí mít pro vstup na nový stůl počet
/// žetonů jako je minimální buy-in."
#[test]
fn a_voluntary_table_change_needs_the_full_minimum() {
    says(C40, "Hráč, který se rozhodne změnit stůl dobrovolně musí mít pro vstup na nový stůl počet žetonů jako je minimální buy-in.");
    assert_eq!(c40().buy_in.voluntary_change, poker::TableEntry::MinBuyIn);
}

/// "Pokud hráč změní stůl a chce se v době kratší než 2 hodiny vrátit na ten původní, musí
/// mít minimálně takový počet žetonů, jako když opouštěl původní stůl."
#[test]
fn returning_within_two_hours_needs_the_chips_one_left_with() {
    says(C40, "Pokud hráč změní stůl a chce se v době kratší než 2 hodiny vrátit na ten původní, musí mít minimálně takový počet žetonů, jako když opouštěl původní stůl.");
    let b = c40().buy_in;
    assert_eq!(b.return_window_minutes, 2 * 60);
    assert_eq!(b.return_within_window, poker::TableEntry::ChipsLeftWith);
}

/// "Hodnoty blindů jsou předem určené a nemění se ani když hráč nemá dostatek žetonů (vloží
/// co má, ale ostatní hrají jako by byly blindy normální)."
#[test]
fn blinds_are_fixed_even_for_a_short_player() {
    says(C40, "Hodnoty blindů jsou předem určené a nemění se ani když hráč nemá dostatek žetonů (vloží co má, ale ostatní hrají jako by byly blindy normální).");
    let r = c40();
    assert_eq!((r.blinds.small, r.blinds.big), (1_000, 2_000));
    assert!(r.blinds.big > r.blinds.small && r.blinds.small > 0);
    assert_eq!(
        r.blinds.short_player,
        poker::ShortBlind::PostsAllInOthersPlayFullBlind
    );
    let p = poker_plan();
    assumed(&p, "rules.poker_cash.blinds.small");
    assumed(&p, "rules.poker_cash.blinds.big");
    assumed(&p, "rules.poker_cash.smallest_chip");
}

/// "Hru v prvním sázkovém kole začíná hráč nalevo od big blindu. V dalších sázkových kolech
/// hraje jako první hráč na pozici malého blindu tj. hráč po levici dealera."
#[test]
fn left_of_the_big_blind_acts_first_preflop_and_left_of_the_button_after() {
    says(C40, "Hru v prvním sázkovém kole začíná hráč nalevo od big blindu. V dalších sázkových kolech hraje jako první hráč na pozici malého blindu tj. hráč po levici dealera.");
    let b = c40().blinds;
    assert_eq!(b.first_to_act_preflop, poker::Seat::LeftOfBigBlind);
    assert_eq!(b.first_to_act_postflop, poker::Seat::LeftOfButton);
}

/// "Button se posouvá ve směru hodinových ručiček po každé hře, aby výhoda poslední pozice
/// rotovala okolo celého stolu rovnoměrně."
#[test]
fn the_button_moves_clockwise_after_every_hand() {
    says(
        C40,
        "Button se posouvá ve směru hodinových ručiček po každé hře",
    );
    assert_eq!(c40().button.rotation, poker::Rotation::Clockwise);
}

/// "Před každou hrou se vždy umístí správně big blind a podle něj se dále umísťují small blind
/// a button, i když to může někdy znamenat, že small blind nebo button budou na prázdném
/// místě."
#[test]
fn the_big_blind_is_placed_correctly_and_the_button_may_be_dead() {
    says(C40, "Před každou hrou se vždy umístí správně big blind a podle něj se dále umísťují small blind a button, i když to může někdy znamenat, že small blind nebo button budou na prázdném místě.");
    assert_eq!(
        c40().button.placement,
        poker::BlindPlacement::BigBlindFirstDeadButton
    );
}

/// "Při hře dvou hráčů je small blind na buttonu."
#[test]
fn heads_up_the_small_blind_is_on_the_button() {
    says(C40, "Při hře dvou hráčů je small blind na buttonu.");
    assert!(c40().button.heads_up_small_blind_on_button);
}

/// "Nově přichozí hráč má dvě možnosti - čekat na big blind - vložit do banku množství
/// žetonů, které odpovídá velikosti big blindu"
#[test]
fn a_new_player_waits_for_or_posts_the_big_blind() {
    says(C40, "Nově přichozí hráč má dvě možnosti");
    says(C40, "čekat na big blind");
    says(
        C40,
        "vložit do banku množství žetonů, které odpovídá velikosti big blindu",
    );
    assert_eq!(
        c40().new_player.options,
        [
            poker::NewPlayerOption::WaitForBigBlind,
            poker::NewPlayerOption::PostBigBlind
        ]
    );
}

/// "Nikdy nemůže nový hráč začít hrát mezi buttonem a big blindem."
#[test]
fn a_new_player_never_starts_between_the_button_and_the_big_blind() {
    says(
        C40,
        "Nikdy nemůže nový hráč začít hrát mezi buttonem a big blindem.",
    );
    assert!(!c40().new_player.may_start_between_button_and_big_blind);
}

/// "Pokud hráč vloží big blind, pak se toto pokládá za jeho otevírací sázku, při první
/// možnosti ke hře může zvyšovat."
#[test]
fn a_posted_big_blind_is_a_live_opening_bet() {
    says(C40, "Pokud hráč vloží big blind, pak se toto pokládá za jeho otevírací sázku, při první možnosti ke hře může zvyšovat.");
    assert!(c40().new_player.posted_big_blind_is_live);
}

/// "STRADDLE BET je dvojnásobkem velké sázky naslepo."
#[test]
fn straddle_is_twice_the_big_blind() {
    says(C40, "STRADDLE BET je dvojnásobkem velké sázky naslepo.");
    let r = c40();
    assert!(r.straddle.allowed);
    assert_eq!(r.straddle.big_blind_multiple, 2);
    assert_eq!(
        i64::from(r.straddle.big_blind_multiple) * r.blinds.big,
        4_000
    );
}

/// "… kterou je před rozdáním karet dovoleno položit hráči, jenž následuje po hráči s velkou
/// sázkou naslepo (big blind)." "Jedná se tedy o navýšení (RAISE) …"
#[test]
fn straddle_is_a_raise_posted_before_the_deal_by_the_player_after_the_big_blind() {
    says(C40, "kterou je před rozdáním karet dovoleno položit hráči, jenž následuje po hráči s velkou sázkou naslepo (big blind).");
    says(C40, "Jedná se tedy o navýšení (RAISE)");
    let s = c40().straddle;
    assert_eq!(s.by, poker::StraddleSeat::FirstLeftOfBigBlind);
    assert!(s.posted_before_deal);
    assert!(s.counts_as_raise);
}

/// "Hráč se sázkou STRADDLE uzavírá před flopem sázky a má právo opětového navýšení
/// (RERAISE)."
#[test]
fn straddle_acts_last_preflop_and_may_reraise() {
    says(C40, "Hráč se sázkou STRADDLE uzavírá před flopem sázky a má právo opětového navýšení (RERAISE).");
    let s = c40().straddle;
    assert!(s.acts_last_preflop);
    assert!(s.may_reraise);
}

/// "V no-limit a pot-limit hrách je dovoleno neomezené zvyšování" — which of the two this
/// table plays is an assumption; the raises are unlimited either way.
#[test]
fn the_table_is_no_limit_with_unlimited_raises() {
    says(
        C40,
        "V no-limit a pot-limit hrách je dovoleno neomezené zvyšování",
    );
    let r = c40();
    assert_eq!(r.betting_structure, poker::BettingStructure::NoLimit);
    assert_eq!(r.betting.raises_per_round_max, None);
    assumed(&poker_plan(), "rules.poker_cash.betting_structure");
}

/// "Např. v holdemu je nejmenší možná částka, kterou lze vsadit rovna jednomu velkému
/// blindu."
#[test]
fn the_minimum_bet_is_one_big_blind() {
    says(
        C40,
        "Např. v holdemu je nejmenší možná částka, kterou lze vsadit rovna jednomu velkému blindu.",
    );
    assert_eq!(c40().betting.min_bet_big_blinds, 1);
}

/// "Každá sázka, která není allin, musí být alespoň stejně vysoká jako byla poslední sázka
/// nebo zvýšení. Každý raise musí být minimálně rozdíl mezi posledními dvěma sázkami.."
#[test]
fn a_raise_is_at_least_the_previous_bet_or_raise() {
    says(C40, "Každá sázka, která není allin, musí být alespoň stejně vysoká jako byla poslední sázka nebo zvýšení.");
    says(
        C40,
        "Každý raise musí být minimálně rozdíl mezi posledními dvěma sázkami",
    );
    assert_eq!(c40().betting.min_raise, poker::MinRaise::PreviousBetOrRaise);
}

/// "Každá sázka, která není allin, musí být …" — only an all-in may fall short of a full
/// raise, and (an interpretation, recorded as an assumption) it does not reopen betting.
#[test]
fn a_short_all_in_does_not_reopen_betting() {
    says(C40, "Každá sázka, která není allin");
    assert_eq!(
        c40().betting.short_all_in,
        poker::ShortAllIn::DoesNotReopenBetting
    );
    assumed(&poker_plan(), "rules.poker_cash.betting.short_all_in");
}

/// "Vložení jeden a půl plné sázky je považováno za zvýšení a hráč musí doplnit počet žetonů
/// do plné výše."
#[test]
fn one_and_a_half_bets_pushed_in_are_a_raise_to_complete() {
    says(C40, "Vložení jeden a půl plné sázky je považováno za zvýšení a hráč musí doplnit počet žetonů do plné výše.");
    let b = c40().betting;
    let t = b.completed_raise_threshold;
    assert_eq!((t.numerator(), t.denominator()), (3, 2));
    assert_eq!(b.below_threshold, poker::BelowThreshold::CallExcessReturned);
    assumed(&poker_plan(), "rules.poker_cash.betting.below_threshold");
}

/// "Pokud hráč vloží jediný žeton, jehož hodnota je větší než poslední sázka a neohlásí
/// raise, je toto považováno za call (dorovnání)."
#[test]
fn a_single_oversized_chip_is_a_call() {
    says(C40, "Pokud hráč vloží jediný žeton, jehož hodnota je větší než poslední sázka a neohlásí raise, je toto považováno za call (dorovnání).");
    assert_eq!(
        c40().betting.single_oversized_chip,
        poker::OversizedChip::Call
    );
}

/// "Verbální deklarace sázky je závazná." "Poklepání na stůl označuje check." "Řetězové
/// sázky (tzv. string bet, string raise) nejsou dovolené."
#[test]
fn declarations_bind_taps_check_and_string_bets_are_refused() {
    says(C40, "Verbální deklarace sázky je závazná.");
    says(C40, "Poklepání na stůl označuje check");
    says(
        C40,
        "Řetězové sázky (tzv. string bet, string raise) nejsou dovolené.",
    );
    let b = c40().betting;
    assert!(b.verbal_declaration_binding);
    assert!(b.tap_is_check);
    assert!(!b.string_bets_allowed);
}

/// "Pokud v průběhu hry nikdo nenavýší sázku (pouze hráči dorovnejí BB), ukazuje první karty
/// hráč, který je první na řadě. Pokud dojde v průběhu hry k navyšování potu, vždy musí první
/// ukázat karty ten hráč, který byl jako poslední agresivní tj. poslední betoval nebo
/// raisoval."
#[test]
fn the_last_aggressor_shows_first_else_the_first_to_act() {
    says(C40, "Pokud v průběhu hry nikdo nenavýší sázku (pouze hráči dorovnejí BB), ukazuje první karty hráč, který je první na řadě.");
    says(C40, "Pokud dojde v průběhu hry k navyšování potu, vždy musí první ukázat karty ten hráč, který byl jako poslední agresivní tj. poslední betoval nebo raisoval.");
    let s = c40().showdown;
    assert_eq!(s.order, poker::ShowdownOrder::LastAggressorElseFirstToAct);
    // "v průběhu hry": the whole hand, as the document says (an interpretation).
    assert_eq!(s.aggression_scope, poker::AggressionScope::WholeHand);
    assumed(&poker_plan(), "rules.poker_cash.showdown.aggression_scope");
}

/// "Aby měl hráč nárok na jakoukoliv výhru (celý popř. část banku) musí položit všechny své
/// karty na stůl lícem nahoru." "Karty hovoří sami za sebe" "Show one, show all."
#[test]
fn all_cards_are_shown_to_win_cards_speak_show_one_show_all() {
    says(C40, "musí položit všechny své karty na stůl lícem nahoru.");
    says(C40, "Karty hovoří sami za sebe");
    says(C40, "Show one, show all.");
    let s = c40().showdown;
    assert!(s.all_cards_shown_to_win && s.cards_speak && s.show_one_show_all);
}

/// "Pokud existuje vedlejší bank (tzv. side pot) je nejdříve vyhodnocený tento side pot a až
/// po něm hlavní bank."
#[test]
fn side_pots_resolve_before_the_main_pot() {
    says(C40, "Pokud existuje vedlejší bank (tzv. side pot) je nejdříve vyhodnocený tento side pot a až po něm hlavní bank.");
    assert_eq!(
        c40().showdown.pots_resolved,
        poker::PotOrder::SidePotsBeforeMainPot
    );
}

/// "Pokud je side potů více, vyhodnocuje se nejdříve side pot, ve kterém jsou hráči, kteří
/// měli na začátku hry nejvíce žetonů."
#[test]
fn several_side_pots_start_with_the_biggest_stacks() {
    says(C40, "Pokud je side potů více, vyhodnocuje se nejdříve side pot, ve kterém jsou hráči, kteří měli na začátku hry nejvíce žetonů.");
    assert_eq!(
        c40().showdown.side_pot_order,
        poker::SidePotOrder::MostChipsAtStartFirst
    );
}

/// "Žeton, který zůstane navíc je rozdělen na nejmenší žetony, které se ve hře používají.
/// Pokud zůstane jeden žeton nejmenší hodnoty, dostává ho hráč, který: Ve hrách s buttonem
/// sedí první za buttonem ve směru hry."
#[test]
fn the_odd_chip_goes_to_the_first_player_after_the_button() {
    says(
        C40,
        "Žeton, který zůstane navíc je rozdělen na nejmenší žetony, které se ve hře používají.",
    );
    says(
        C40,
        "Ve hrách s buttonem sedí první za buttonem ve směru hry.",
    );
    let r = c40();
    assert!(r.odd_chip.break_down_to_smallest_chip);
    assert_eq!(r.odd_chip.to, poker::OddChipTo::FirstWinnerLeftOfButton);
    assert_eq!(r.blinds.small % r.smallest_chip, 0);
    assumed(&poker_plan(), "rules.poker_cash.odd_chip.to");
}

/// "Pořadí barev v pokeru nerozhoduje, přestože je stanovené – piky (spades), srdce (hearts),
/// káry (diamonds), kříže (clubs)."
#[test]
fn suits_only_order_the_draw_for_the_button() {
    says(C40, "Pořadí barev v pokeru nerozhoduje, přestože je stanovené – piky (spades), srdce (hearts), káry (diamonds), kříže (clubs).");
    let r = c40();
    assert_eq!(
        r.suit_order_for_button_draw,
        [
            poker::SuitName::Spades,
            poker::SuitName::Hearts,
            poker::SuitName::Diamonds,
            poker::SuitName::Clubs
        ]
    );
    assert_eq!(r.button.initial, poker::InitialButton::HighCardDraw);
}

/// "Následující situace jsou misdealem pouze v případě že, se na chybu přijde dříve, … než dva
/// hráči rozehrají hru" and "10. Pokud hra začne (musí se vyjádřit alespoň dva hráči), misdeal
/// už nemůže nastat. Blindy se potom nevrací ani hráčům, kteří mají např. jenom jednu kartu."
#[test]
fn a_misdeal_is_only_possible_before_two_players_acted() {
    says(
        C40,
        "než dva hráči rozehrají hru (provedou nějakou akci – bet/fold/call...).",
    );
    says(C40, "Pokud hra začne (musí se vyjádřit alespoň dva hráči), misdeal už nemůže nastat. Blindy se potom nevrací ani hráčům, kteří mají např. jenom jednu kartu.");
    let m = c40().misdeal;
    assert_eq!(m.only_before_players_acted, 2);
    assert_eq!(m.on_misdeal, poker::MisdealSettlement::RedealBlindsReturned);
    assert_eq!(
        m.after_play_started,
        poker::AfterPlayStarted::HandStandsNoBlindReturned
    );
    assumed(&poker_plan(), "rules.poker_cash.misdeal.on_misdeal");
}

/// "Misdeal (špatně rozdané karty)" items 1–8: each of these situations is a misdeal.
#[test]
fn the_documents_misdeal_situations_are_misdeals() {
    for phrase in [
        "1. První nebo druhá karta je rozdaná lícem nahoru nebo je jinak odhalena chybou dealera.",
        "2. Dvě nebo více karet jsou rozdány lícem nahoru dealerem",
        "3. Jsou nalezeny dvě nebo více karet v balíčku obrácené lícem nahoru.",
        "4. Dvě nebo více karet rozdaných navíc.",
        "5. Jakákoliv karta rozdaná mimo pořadí.",
        "6. Button je na špatném místě.",
        "7. Karty byly rozdány také na volné místo popř. hráči, který na ně nemá nárok.",
        "8. Nebyly rozdané karty hráči, který chce hrát a má na ně nárok.",
    ] {
        says(C40, phrase);
    }
    let r = c40();
    for kind in [
        MisdealKind::FirstOrSecondCardExposedByDealer,
        MisdealKind::TwoOrMoreCardsDealtFaceUp,
        MisdealKind::TwoOrMoreFaceUpCardsInDeck,
        MisdealKind::TwoOrMoreExtraCardsDealt,
        MisdealKind::CardDealtOutOfOrder,
        MisdealKind::ButtonMisplaced,
        MisdealKind::DealtToEmptySeatOrIneligiblePlayer,
        MisdealKind::EligiblePlayerNotDealt,
    ] {
        assert_eq!(
            r.misdeal_cause(kind),
            Some(Consequence::Misdeal),
            "{kind:?}"
        );
    }
    assert_eq!(
        r.misdeal.causes.len(),
        11,
        "8 misdeals + 1 single exposed card + flop + turn"
    );
}

/// "(pokud se otočí jen jedna karta, je použita jako spálená a je hráči nahrazena po
/// dorozdání všech karet)"
#[test]
fn a_single_card_dealt_face_up_is_a_burn_card() {
    says(C40, "(pokud se otočí jen jedna karta, je použita jako spálená a je hráči nahrazena po dorozdání všech karet)");
    assert_eq!(
        c40().misdeal_cause(MisdealKind::OneCardDealtFaceUp),
        Some(Consequence::BurnCardReplacedAfterDeal)
    );
}

/// "9. Pokud je při flopu otočena jedna nebo více karet navíc, musí být flop rozdán znovu
/// (znovu se zamíchá balíček karet už bez spálené karty). Stejný postup platí i při otočení
/// jedné nebo více karet navíc u turnu."
#[test]
fn an_extra_flop_or_turn_card_redeals_the_street() {
    says(C40, "Pokud je při flopu otočena jedna nebo více karet navíc, musí být flop rozdán znovu (znovu se zamíchá balíček karet už bez spálené karty). Stejný postup platí i při otočení jedné nebo více karet navíc u turnu.");
    let r = c40();
    for kind in [
        MisdealKind::ExtraCardExposedOnFlop,
        MisdealKind::ExtraCardExposedOnTurn,
    ] {
        assert_eq!(
            r.misdeal_cause(kind),
            Some(Consequence::ReshuffleAndRedealStreet),
            "{kind:?}"
        );
    }
}

/// "3. Pokud se v průběhu hry objeví karta s jiným rubem, všechny úkony jsou neplatné a všechny
/// žetony se vrací svým původním majitelům." "4. Pokud se objeví dvě stejné karty (stejná
/// barva, stejná hodnota), všechny úkony jsou neplatné a všechny žetony se vrací svým
/// původním majitelům."
#[test]
fn a_different_back_or_a_duplicate_card_voids_all_action_and_returns_every_chip() {
    says(C40, "Pokud se v průběhu hry objeví karta s jiným rubem, všechny úkony jsou neplatné a všechny žetony se vrací svým původním majitelům.");
    says(C40, "Pokud se objeví dvě stejné karty (stejná barva, stejná hodnota), všechny úkony jsou neplatné a všechny žetony se vrací svým původním majitelům.");
    let r = c40();
    for kind in [
        IrregularityKind::DifferentBackInPlay,
        IrregularityKind::DuplicateCard,
    ] {
        assert_eq!(
            r.irregularity(kind),
            Some(Consequence::VoidAllActionReturnChips),
            "{kind:?}"
        );
    }
}

/// "Pokud je karta objevena ve zbytku balíčku všechny úkony platí."
#[test]
fn a_different_back_in_the_stub_lets_the_action_stand() {
    says(
        C40,
        "Pokud je karta objevena ve zbytku balíčku všechny úkony platí.",
    );
    assert_eq!(
        c40().irregularity(IrregularityKind::DifferentBackInStub),
        Some(Consequence::ActionStands)
    );
}

/// "8. Jedna nebo více karet chybějících v balíčku neruší výsledek hry."
#[test]
fn a_missing_card_does_not_void_the_hand() {
    says(
        C40,
        "Jedna nebo více karet chybějících v balíčku neruší výsledek hry.",
    );
    assert_eq!(
        c40().irregularity(IrregularityKind::MissingCards),
        Some(Consequence::ActionStands)
    );
}

/// "5. Obrácená karta v balíčku je považována za bezvýznamný kus papíru (použije se jako
/// spálená karta) a hráči je tato karta při rozdávání nahrazena za jinou kartu až po
/// dorozdání karet."
#[test]
fn a_wrong_side_card_in_the_deck_is_a_burn_card() {
    says(C40, "Obrácená karta v balíčku je považována za bezvýznamný kus papíru (použije se jako spálená karta)");
    assert_eq!(
        c40().irregularity(IrregularityKind::FaceUpCardInDeck),
        Some(Consequence::BurnCardReplacedAfterDeal)
    );
}

/// "6. Žolíky objevený v průběhu hry, kde nejsou používány žolíky je považován za bezvýznamný
/// kus papíru. Pokud hráč s takovou kartou hraje, je jeho ruka považována za mrtvou
/// (foldnutou) a nemá nárok na výhru."
#[test]
fn jokers_are_dead_paper_and_kill_the_hand_that_plays_one() {
    says(C40, "Žolíky objevený v průběhu hry, kde nejsou používány žolíky je považován za bezvýznamný kus papíru. Pokud hráč s takovou kartou hraje, je jeho ruka považována za mrtvou (foldnutou) a nemá nárok na výhru.");
    let r = c40();
    assert_eq!(
        r.irregularity(IrregularityKind::JokerFound),
        Some(Consequence::DeadPaper)
    );
    assert_eq!(
        r.irregularity(IrregularityKind::JokerPlayed),
        Some(Consequence::HandDead)
    );
}

/// The rest of "Nesrovnalosti, které mohou nastat v průběhu hry", items 1, 2, 7, 9, 10, 11
/// and 12, each with its consequence.
#[test]
fn the_other_irregularities_have_the_documents_consequences() {
    for phrase in [
        "Následující hru jsou button a blindy umístěny tak, aby každý byl v průběhu jednoho kola na všech pozicích (pokud je to možné).",
        "Pokud si hráč karty nechrání nemá nárok na stížnosti, pokud mu dealer karty sebere jako foldnuté.",
        "Pokud hráč hraje bez dívání se na své karty, je zodpovědný za možnost mít neplatné karty nebo žolíka.",
        "Pokud hráči spadnou karty ze stolu musí s nimi hrát.",
        "musí se chyba odstranit ještě před tím než hráči začnou hrát. Pokud je hra rozehrána (musí se vyjádřit alespoň dva hráči), rozdané karty platí.",
        "Pokud dealer rozdá předčasně kartu před ukončením sázek, tato karta je neplatná.",
        "balíček musí být zrekonstruován co možná nejpřesněji a hra dohrána.",
    ] {
        says(C40, phrase);
    }
    let r = c40();
    for (kind, consequence) in [
        (
            IrregularityKind::ButtonFoundMisplaced,
            Consequence::CorrectNextHand,
        ),
        (
            IrregularityKind::UnprotectedCardsMucked,
            Consequence::HandDead,
        ),
        (
            IrregularityKind::PlayedWithoutLooking,
            Consequence::PlayerBearsIt,
        ),
        (
            IrregularityKind::CardsFellOffTable,
            Consequence::PlayerBearsIt,
        ),
        (
            IrregularityKind::BurnError,
            Consequence::CorrectBeforeActionElseStands,
        ),
        (
            IrregularityKind::CardDealtBeforeBettingClosed,
            Consequence::CardVoid,
        ),
        (
            IrregularityKind::StubSpoiled,
            Consequence::ReconstructAndComplete,
        ),
    ] {
        assert_eq!(r.irregularity(kind), Some(consequence), "{kind:?}");
    }
    assert_eq!(
        r.irregularities.len(),
        14,
        "12 items, 3. and 6. in two cases each"
    );
}

/// The document never mentions a rake: "no rake" is an assumption a regulator sees.
#[test]
fn no_rake_is_taken_and_that_is_an_assumption() {
    let doc = document(C40).to_lowercase();
    assert!(
        !doc.contains("rake"),
        "004 now mentions a rake: revisit the plan"
    );
    assert_eq!(c40().rake, poker::Rake::NoRake);
    assumed(&poker_plan(), "rules.poker_cash.rake");
}

/// "12. … balíček musí být zrekonstruován co možná nejpřesněji a hra dohrána" with 3. and 4.
/// (every chip returned) make the error policy; the document has no disconnect or time-out
/// rule: check when nothing is owed, otherwise fold.
#[test]
fn poker_errors_are_repaired_first_and_time_outs_check_or_fold() {
    says(
        C40,
        "balíček musí být zrekonstruován co možná nejpřesněji a hra dohrána.",
    );
    let p = poker_plan();
    let pol = &p.plan.policies;
    assert!(pol.error.pause_and_repair && pol.error.reconstruction_before_cancel);
    assert_eq!(
        pol.error.cancel_scope,
        pitboss::plan::model::CancelScope::AllPlayers
    );
    assert_eq!(
        pol.decision_timeout.as_ref().map(|d| d.automatic),
        Some(AutoDecision::CheckOrFold)
    );
    for f in [
        "policies.error",
        "policies.disconnect",
        "policies.decision_timeout",
        "policies.timing.betting_window_ms",
        "policies.timing.decision_ms",
    ] {
        assumed(&p, f);
    }
}
