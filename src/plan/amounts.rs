//! Which fields of a plan are amounts of money.
//!
//! The plan format keeps one convention: every `i64` field is an amount in minor units of the
//! plan's currency (limits, blinds, buy-ins, banks), and nothing else is an `i64` (counts and
//! times are unsigned). The format's JSON Schema marks `i64` fields `format: int64`, so a
//! reader (`plan show`, `plan diff`) finds the amounts by walking that schema along a field
//! path, with no list of amount fields to keep in step with the format.

use std::sync::LazyLock;

use serde_json::Value;

use super::model::Plan;
use super::path::{segments, Segment};

/// The plan format's JSON Schema, as `pitboss plan schema` prints it.
fn root() -> &'static Value {
    static SCHEMA: LazyLock<Value> = LazyLock::new(|| {
        serde_json::to_value(schemars::schema_for!(Plan)).expect("a JSON Schema is JSON")
    });
    &SCHEMA
}

/// A position in the plan format's schema: the schema node of one field.
#[derive(Debug, Clone, Copy)]
pub struct SchemaNode(&'static Value);

impl SchemaNode {
    /// The schema of the whole plan.
    pub fn plan() -> SchemaNode {
        SchemaNode(root())
    }

    /// The node after following `$ref`s.
    fn resolved(self) -> &'static Value {
        let mut node = self.0;
        // The format's definitions refer to each other by name only, never in a cycle of
        // bare references, so this ends; the bound guards against a schema that did.
        for _ in 0..16 {
            match node.get("$ref").and_then(Value::as_str) {
                Some(r) => match r
                    .strip_prefix("#/$defs/")
                    .and_then(|name| root()["$defs"].get(name))
                {
                    Some(target) => node = target,
                    None => return node,
                },
                None => return node,
            }
        }
        node
    }

    /// The alternatives of a `oneOf`/`anyOf`/`allOf` node (an enum, an optional field).
    fn alternatives(node: &'static Value) -> impl Iterator<Item = SchemaNode> {
        ["oneOf", "anyOf", "allOf"]
            .into_iter()
            .filter_map(move |k| node.get(k).and_then(Value::as_array))
            .flatten()
            .map(SchemaNode)
    }

    /// The schema of the field `name` of this object (of whichever alternative has it).
    pub fn field(self, name: &str) -> Option<SchemaNode> {
        let node = self.resolved();
        if let Some(f) = node.get("properties").and_then(|p| p.get(name)) {
            return Some(SchemaNode(f));
        }
        Self::alternatives(node).find_map(|alt| alt.field(name))
    }

    /// The schema of this list's elements.
    pub fn items(self) -> Option<SchemaNode> {
        let node = self.resolved();
        if let Some(items) = node.get("items") {
            return Some(SchemaNode(items));
        }
        Self::alternatives(node).find_map(SchemaNode::items)
    }

    /// Whether this field holds an amount in minor units.
    pub fn is_amount(self) -> bool {
        let node = self.resolved();
        node.get("format").and_then(Value::as_str) == Some("int64")
            || Self::alternatives(node).any(SchemaNode::is_amount)
    }

    /// The node at a field path of the plan (`bets[straight].max_win`).
    pub fn at(path: &str) -> Option<SchemaNode> {
        let mut node = SchemaNode::plan();
        for seg in segments(path)? {
            node = match seg {
                Segment::Field(name) => node.field(&name)?,
                Segment::Element(_) => node.items()?,
            };
        }
        Some(node)
    }
}

/// Whether the field at `path` of a plan is an amount in minor units.
pub fn is_amount(path: &str) -> bool {
    SchemaNode::at(path).is_some_and(SchemaNode::is_amount)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `i64` field of the format, found by walking its schema: each is an amount. A new
    /// `i64` field that is not an amount breaks the convention `plan show` and `plan diff` rely
    /// on; add it here only if it is money.
    #[test]
    fn every_int64_field_of_the_format_is_an_amount() {
        fn walk(v: &Value, out: &mut std::collections::BTreeSet<String>) {
            match v {
                Value::Object(m) => {
                    for (k, s) in m
                        .get("properties")
                        .and_then(Value::as_object)
                        .into_iter()
                        .flatten()
                    {
                        if s.get("format").and_then(Value::as_str) == Some("int64") {
                            out.insert(k.clone());
                        }
                    }
                    m.values().for_each(|x| walk(x, out));
                }
                Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
                _ => {}
            }
        }
        let mut found = std::collections::BTreeSet::new();
        walk(root(), &mut found);
        let amounts = [
            "big",
            "max",
            "max_bet",
            "max_win",
            "max_win_plus_stake",
            "min",
            "min_bank",
            "min_bet",
            "min_raise",
            "small",
            "smallest_chip",
        ];
        assert_eq!(
            found.iter().map(String::as_str).collect::<Vec<_>>(),
            amounts,
            "the plan format's i64 fields"
        );
    }

    #[test]
    fn amounts_are_found_by_path_through_lists_enums_and_options() {
        assert!(is_amount("bets[straight].max_win"));
        assert!(is_amount("bets[straight].min_bet"));
        assert!(is_amount("rules.poker_cash.blinds.small"));
        assert!(is_amount("rules.oko_bere.min_bank"));
        assert!(!is_amount("policies.timing.betting_window_ms"));
        assert!(!is_amount("rules.roulette.pockets"));
        assert!(!is_amount("plan.version"));
        assert!(!is_amount("payouts[straight/win].ratio"));
        assert!(!is_amount("no.such.field"));
    }
}
