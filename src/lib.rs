//! pitboss: a game-plan compliance engine and audit service for regulated casino tables.
//!
//! See ARCHITECTURE.md for the map of the crate.

pub mod api;
pub mod cards;
pub mod cli;
pub mod games;
pub mod keyfile;
pub mod limits;
pub mod money;
pub mod origin;
pub mod plan;
pub mod replay;
pub mod rng;
pub mod round;
pub mod service;
pub mod simulate;
pub mod simulate_blackjack;
pub mod store;
pub mod witness;
