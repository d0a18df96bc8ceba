//! pitboss: a game-plan compliance engine and audit service for regulated casino tables.
//!
//! See ARCHITECTURE.md for the map of the crate.

pub mod api;
pub mod cards;
pub mod cli;
pub mod console;
pub mod games;
pub mod money;
pub mod plan;
pub mod rng;
pub mod round;
pub mod rtp;
pub mod service;
pub mod simulate;
pub mod simulate_blackjack;
pub mod store;
