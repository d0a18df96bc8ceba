//! Canonical serialisation and content hash of a plan.
//!
//! The canonical form is the normalised plan as JSON, with keyed lists sorted by their key,
//! serialised by RFC 8785 (JSON Canonicalization Scheme). Its SHA-256 is the plan's content
//! hash: formatting, comments, key order and the order of keyed lists in the TOML file do not
//! change it; any change of a value does.

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::model::Plan;
use super::path::element_key;

/// The normalised plan as a JSON value: keyed lists (bets, payouts, assumptions,
/// announced bets, …) sorted by key, so that their order in the file is not content.
pub fn normalised(plan: &Plan) -> Value {
    let mut v = serde_json::to_value(plan).expect("a plan always serialises to JSON");
    sort_keyed_lists(&mut v);
    v
}

fn sort_keyed_lists(v: &mut Value) {
    match v {
        Value::Array(items) => {
            items.iter_mut().for_each(sort_keyed_lists);
            if items.iter().all(|e| element_key(e).is_some()) {
                items.sort_by_key(|e| element_key(e).expect("checked above"));
            }
        }
        Value::Object(map) => map.values_mut().for_each(sort_keyed_lists),
        _ => {}
    }
}

/// RFC 8785 bytes of the normalised plan.
pub fn canonical_bytes(plan: &Plan) -> Vec<u8> {
    serde_json_canonicalizer::to_vec(&normalised(plan))
        .expect("a JSON value without non-finite numbers always canonicalises")
}

/// SHA-256 of the canonical bytes, lower-case hex.
pub fn content_hash(plan: &Plan) -> String {
    hex(&Sha256::digest(canonical_bytes(plan)))
}

pub fn hex(bytes: &[u8]) -> String {
    pitboss_audit::hash::hex(bytes)
}
