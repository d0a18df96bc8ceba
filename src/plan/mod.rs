//! Game plans as versioned, validated data.
//!
//! A plan file (`game_plans/<id>@<version>.toml`) is parsed into [`model::Plan`], linted
//! ([`lint`]) and admitted into a [`registry::PlanSet`] under its content hash
//! ([`canonical`]). Loaded plans are immutable: the same `id@version` with other content is
//! refused, and a change is a new version ([`diff`] lists what changed).

pub mod amounts;
pub mod canonical;
pub mod diff;
pub mod lint;
pub mod load;
pub mod model;
pub mod path;
pub mod registry;
pub mod rules;

pub use model::{Plan, PlanId, PlanRef};
pub use registry::{LoadedPlan, PlanSet};
