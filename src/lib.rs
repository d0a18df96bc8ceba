//! pitboss: a game-plan compliance engine and audit service for regulated casino tables.
//!
//! See ARCHITECTURE.md for the map of the crate.

pub mod api;
pub mod cards;
pub mod cli;
pub mod console;
pub mod games;
pub mod keyfile;
pub mod limits;
pub mod money;
pub mod observe;
pub mod origin;
pub mod plan;
pub mod replay;
pub mod rng;
pub mod round;
pub mod rtp;
pub mod service;
pub mod simulate;
pub mod simulate_blackjack;
pub mod sorted_json;
pub mod store;
pub mod witness;

/// A value as the API and the plan files write it (its serde name: `no_insurance`,
/// `extra_card_exposed_on_flop`; a value with fields as JSON), for a message to a person: a
/// message never shows a Rust type's `Debug` form.
pub fn wire_name<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::from("(unnamed)"),
    }
}
