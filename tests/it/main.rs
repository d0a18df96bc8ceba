//! All integration tests link into this one binary (one link instead of one per file).

mod api_baccarat;
mod api_blackjack_classic;
mod api_blackjack_common;
mod api_blackjack_seated;
mod api_blackjack_smoke;
mod api_casino_holdem;
mod api_oko_bere;
mod api_openapi;
mod api_plans;
mod api_poker_room;
mod api_roulette;
mod api_top_card;
mod bj;
mod crash;
mod openapi_tools;
mod plan_blackjack;
mod plan_cards;
mod plan_cli;
mod plan_format;
mod plan_player_games;
mod plan_roulette;
mod replay;
mod server;
mod simulate;
mod source;
mod spec;
