//! Receipts: every accepted bet's reply names its `bet_accepted` entry in the audit log (its
//! `seq` and leaf hash). The writer knows both once the entry is sealed, before the batch is
//! persisted, so the receipt is part of the stored answer an idempotent retry gets back.

use pitboss_audit::entry::SealedEntry;
use serde_json::{json, Value};

use super::Reply;

/// Adds a `receipt` to each accepted bet of `reply` (`results[i]`, matched by bet id) whose
/// `bet_accepted` entry is among `entries` (the entries sealed for this command).
pub fn attach(reply: &mut Reply, entries: &[SealedEntry]) {
    if reply.is_problem() {
        return;
    }
    let Some(results) = reply.body.get_mut("results").and_then(Value::as_array_mut) else {
        return;
    };
    for e in entries.iter().filter(|e| e.kind.as_str() == "bet_accepted") {
        let Some(bet) = e.ids.bet.as_deref() else {
            continue;
        };
        if let Some(r) = results.iter_mut().find(|r| {
            r.get("status").and_then(Value::as_str) == Some("accepted")
                && r.get("bet").and_then(Value::as_str) == Some(bet)
        }) {
            r["receipt"] = json!({"seq": e.seq, "leaf_hash": e.leaf_hash.to_hex()});
        }
    }
}
