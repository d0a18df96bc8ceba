//! The HTTP interface (actix-web): thin handlers that translate HTTP to domain calls and
//! domain errors to RFC 9457 problem documents, nothing more.

pub mod admin;
pub mod approvals;
pub mod audit;
pub mod auth;
pub(crate) mod bridge;
pub mod dto;
pub mod errors;
pub mod exceptions;
pub mod listings;
pub mod logs;
pub mod openapi;
pub mod payouts;
pub mod plans;
pub mod players;
pub mod problem;
pub mod router;
pub mod schemas;
mod shape;
pub mod standby;
pub mod starting;
pub mod startup;
pub mod stored;
pub mod tables;

pub use problem::Problem;
pub use startup::{serve, AppState, ServeConfig};
