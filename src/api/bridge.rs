//! Schemas of the engines' own types (a blackjack round's state, Oko bere and poker actions,
//! effects and tables, the card games' outcomes, the normalised plan) in the API description.
//!
//! The engines describe their types with `schemars` (as the plan format does): that keeps
//! the pure modules free of the HTTP documentation, and the schema follows each type's serde
//! form exactly (tags, renames, skipped fields). Here each such type gets a utoipa
//! [`ToSchema`] that only names it (the API's bodies refer to it by `$ref`), and
//! [`components`] gives the schemas themselves, converted to the document's conventions:
//! `$defs` become components, each named after its game so that two games' `Expected` or
//! `Phase` do not collide.

use std::borrow::Cow;
use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde_json::{json, Value};
use utoipa::openapi::schema::{ObjectBuilder, Schema};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

/// Definitions every game shares: kept under their own names, never prefixed.
const SHARED: &[&str] = &[
    "Card",
    "Shoe",
    "DeckKind",
    "Ratio",
    "Mode",
    "RankName",
    "SuitName",
    "HandClass",
    "HandRank",
    "LowHand",
];

/// What an engine type's placeholder says until [`components`] replaces it.
pub const PLACEHOLDER: &str = "x-pitboss-engine-schema";

/// The schema the engines' `ToSchema` answers with: only ever seen through its `$ref`,
/// replaced by the converted schemars schema when the document is finished.
fn placeholder() -> RefOr<Schema> {
    ObjectBuilder::new().description(Some(PLACEHOLDER)).into()
}

/// A type's schemars schema as components: the root under `name`, each definition under its
/// name with `prefix` (unless shared or already prefixed), every `$ref` rewritten.
fn convert<T: JsonSchema>(name: &str, prefix: &str) -> Vec<(String, Value)> {
    let mut generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let root = generator.root_schema_for::<T>();
    let mut root = serde_json::to_value(root).expect("a JSON Schema is JSON");
    let defs = match root.as_object_mut() {
        Some(m) => {
            m.remove("$schema");
            m.remove("title");
            m.remove("$defs")
        }
        None => None,
    };
    let rename = |def: &str| -> String {
        if SHARED.contains(&def) || def.starts_with(prefix) {
            def.to_string()
        } else {
            format!("{prefix}{def}")
        }
    };
    let mut out = Vec::new();
    let mut own = vec![(name.to_string(), root)];
    for (def, schema) in defs
        .and_then(|d| d.as_object().cloned())
        .into_iter()
        .flatten()
    {
        own.push((rename(&def), schema));
    }
    for (n, mut schema) in own {
        rewrite_refs(&mut schema, &rename);
        out.push((n, schema));
    }
    out
}

fn rewrite_refs(v: &mut Value, rename: &dyn Fn(&str) -> String) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.get_mut("$ref") {
                if let Some(def) = r.strip_prefix("#/$defs/") {
                    *r = format!("#/components/schemas/{}", rename(def));
                }
            }
            m.values_mut().for_each(|x| rewrite_refs(x, rename));
        }
        Value::Array(a) => a.iter_mut().for_each(|x| rewrite_refs(x, rename)),
        _ => {}
    }
}

macro_rules! engine_schemas {
    ($($ty:ty => $name:literal, $prefix:literal;)*) => {
        $(
            impl PartialSchema for $ty {
                fn schema() -> RefOr<Schema> {
                    placeholder()
                }
            }

            impl ToSchema for $ty {
                fn name() -> Cow<'static, str> {
                    Cow::Borrowed($name)
                }
            }
        )*

        /// Every engine type the API names, with the definitions it uses, as components.
        fn converted() -> Vec<(String, Value)> {
            let mut out = Vec::new();
            $( out.extend(convert::<$ty>($name, $prefix)); )*
            out
        }
    };
}

engine_schemas! {
    crate::games::blackjack::RoundState => "BlackjackRoundState", "Blackjack";
    crate::games::blackjack::Input => "BlackjackInput", "Blackjack";
    crate::games::blackjack::CardTo => "BlackjackCardTo", "Blackjack";
    crate::games::blackjack::Next => "BlackjackNext", "Blackjack";
    crate::games::blackjack::Decision => "BlackjackDecision", "Blackjack";
    crate::games::blackjack::Hand => "BlackjackHand", "Blackjack";
    crate::games::blackjack::HandResult => "BlackjackHandResult", "Blackjack";
    crate::games::blackjack::StakeSettlement => "BlackjackStakeSettlement", "Blackjack";
    crate::round::blackjack::DecisionRequest => "BlackjackDecisionRequest", "Blackjack";
    crate::cards::Shoe => "Shoe", "";
    crate::cards::Card => "Card", "";
    crate::games::baccarat::BaccaratOutcome => "BaccaratOutcome", "Baccarat";
    crate::games::top_card::TopCardOutcome => "TopCardOutcome", "TopCard";
    crate::games::casino_holdem::Placement => "CasinoHoldemPlacement", "CasinoHoldem";
    crate::games::casino_holdem::Settlement => "CasinoHoldemSettlement", "CasinoHoldem";
    crate::games::casino_holdem::Decision => "CasinoHoldemDecision", "CasinoHoldem";
    crate::games::oko_bere::OkoBereAction => "OkoBereAction", "OkoBere";
    crate::games::oko_bere::OkoBereEffect => "OkoBereEffect", "OkoBere";
    crate::games::oko_bere::Expected => "OkoBereExpected", "OkoBere";
    crate::games::oko_bere::OkoBereState => "OkoBereState", "OkoBere";
    crate::games::poker_room::Action => "PokerAction", "Poker";
    crate::games::poker_room::Effect => "PokerEffect", "Poker";
    crate::games::poker_room::Expected => "PokerExpected", "Poker";
    crate::games::poker_room::Table => "PokerTable", "Poker";
    crate::plan::Plan => "Plan", "Plan";
}

/// Schemas the API writes by hand, as JSON: unions of the engines' types (what a table's
/// `game` holds is one of two engines' states) and bodies the engines build as JSON (a
/// blackjack round's `expected`). Each gets a unit type to name it in utoipa's annotations.
macro_rules! api_json_schemas {
    ($($(#[$doc:meta])* $name:ident => $schema:expr;)*) => {
        $(
            $(#[$doc])*
            // Named only in utoipa's annotations.
            #[allow(dead_code)]
            pub struct $name;

            impl utoipa::PartialSchema for $name {
                fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                    utoipa::openapi::schema::ObjectBuilder::new()
                        .description(Some($crate::api::bridge::PLACEHOLDER))
                        .into()
                }
            }

            impl utoipa::ToSchema for $name {
                fn name() -> std::borrow::Cow<'static, str> {
                    std::borrow::Cow::Borrowed(stringify!($name))
                }
            }
        )*

        /// The hand-written components.
        pub fn json_components() -> Vec<(String, serde_json::Value)> {
            vec![$((stringify!($name).to_string(), $schema),)*]
        }
    };
}

pub(crate) use api_json_schemas;

/// The engine types' components. A definition two types share must come out the same from
/// both (it is one component); a name the document already uses for something else is a bug
/// caught here, when the document is built.
pub fn components(existing: &serde_json::Map<String, Value>) -> BTreeMap<String, Value> {
    let mut out: BTreeMap<String, Value> = BTreeMap::new();
    let all = converted()
        .into_iter()
        .chain(super::schemas::json_components());
    for (name, mut schema) in all {
        if name == "Ratio" {
            // The plan file writes a ratio as text (`"3:2"`); every reply carries the
            // normalised form.
            schema = json!({
                "description": "An exact positive fraction: 0.95:1 is 19/20, 3:2 is 3/2.",
                "type": "object",
                "properties": {
                    "numerator": {"type": "integer", "minimum": 1},
                    "denominator": {"type": "integer", "minimum": 1}
                },
                "required": ["numerator", "denominator"],
                "additionalProperties": false
            });
        }
        if let Some(before) = out.get(&name) {
            assert!(
                *before == schema,
                "two engine types define the component {name} differently"
            );
        }
        if let Some(theirs) = existing.get(&name) {
            // A shared definition the API describes itself (`Mode`) keeps the API's schema.
            let is_placeholder = theirs["description"] == PLACEHOLDER;
            assert!(
                is_placeholder || SHARED.contains(&name.as_str()),
                "the component {name} is both an engine schema and an API schema"
            );
        }
        out.insert(name, schema);
    }
    out
}
