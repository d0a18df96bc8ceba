//! What a refused command leaves in the log: bounded in size, and built only from what the
//! log's entry format can hold, so that nothing a client sends can fail a batch or flood the
//! log; and named after the operator who sent it, never after another operator's table or
//! round, so that one operator's attempts never appear in another's history.
//!
//! The log's entry format (audit/FORMAT.md §1) refuses fractions, integers beyond ±(2^53−1),
//! ids over 256 bytes and entries over 1 MiB, while JSON allows all of them. A refused
//! request is therefore logged verbatim only when it is small and fits the format; otherwise
//! its SHA-256 and size stand for it.

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::games::Refusal;
use crate::plan::canonical::hex;
use crate::round::{check_id, State};

/// A refused request (one bet, one dealer event, one action) is logged verbatim up to this
/// many bytes of compact JSON; a longer one is logged as its digest. Every request the
/// documented shapes allow is far below it (a bet is about 100 bytes).
pub const MAX_LOGGED_REQUEST_BYTES: usize = 2048;

/// A refusal's message is logged up to this many bytes (it may quote what the client sent).
pub const MAX_LOGGED_MESSAGE_BYTES: usize = 512;

/// A request as a refusal entry records it: verbatim when it is small and every number in it
/// is a safe integer; otherwise `{"unlogged": {"sha256", "bytes", "reason"}}`, the SHA-256 of
/// its compact JSON as pitboss read it.
pub fn loggable(v: &Value) -> Value {
    let bytes = serde_json::to_vec(v).expect("a parsed JSON value serialises");
    let reason = if bytes.len() > MAX_LOGGED_REQUEST_BYTES {
        Some(format!("longer than {MAX_LOGGED_REQUEST_BYTES} bytes"))
    } else {
        pitboss_audit::entry::check_numbers(v)
            .err()
            .map(|e| e.to_string().replace("/payload", "request "))
    };
    match reason {
        None => v.clone(),
        Some(reason) => json!({"unlogged": {
            "sha256": hex(&Sha256::digest(&bytes)),
            "bytes": bytes.len(),
            "reason": reason,
        }}),
    }
}

/// Cuts a refusal's message to [`MAX_LOGGED_MESSAGE_BYTES`] (at a character boundary, marked
/// with `…`).
pub fn bound(r: &mut Refusal) {
    if r.message.len() > MAX_LOGGED_MESSAGE_BYTES {
        r.message = truncate(&r.message, MAX_LOGGED_MESSAGE_BYTES);
    }
}

pub fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// An id as the client named it, for the payload of a refusal: verbatim when it has the
/// shape of an id pitboss could have issued, else its digest.
fn requested_id(id: &str) -> Value {
    // A scoped id (`op:t1`, `op:t1.3`) has an operator's id before the table's.
    let id_in_scope = match id.split_once(crate::round::SCOPE) {
        Some((op, rest)) if check_id("operator", op).is_ok() => rest,
        _ => id,
    };
    let round_shape = id_in_scope.rsplit_once('.').is_some_and(|(t, n)| {
        check_id("table", t).is_ok()
            && n.bytes().all(|b| b.is_ascii_digit())
            && !n.is_empty()
            && n.len() <= 20
    });
    if check_id("table", id_in_scope).is_ok() || round_shape {
        Value::String(id.to_string())
    } else {
        json!({"unlogged": {"sha256": hex(&Sha256::digest(id.as_bytes())), "bytes": id.len()}})
    }
}

/// Which ids a refusal entry carries: the table and round only when they exist and belong to
/// the refused operator (so the entry is part of that operator's history); otherwise none,
/// and the target as the client named it goes into the payload (`requested`), where no
/// history or recall of another operator's table or round picks it up.
pub struct RefusalTarget {
    pub table: Option<String>,
    pub round: Option<String>,
    pub requested: Option<Value>,
}

pub fn target(
    state: &State,
    operator: &str,
    table: Option<&str>,
    round: Option<&str>,
) -> RefusalTarget {
    if let Some(round) = round {
        if let Ok(r) = state.round_of_operator(operator, round) {
            return RefusalTarget {
                table: Some(r.table.clone()),
                round: Some(round.to_string()),
                requested: None,
            };
        }
        return RefusalTarget {
            table: None,
            round: None,
            requested: Some(json!({"round": requested_id(round)})),
        };
    }
    if let Some(table) = table {
        if state.table_of_operator(operator, table).is_ok() {
            return RefusalTarget {
                table: Some(table.to_string()),
                round: None,
                requested: None,
            };
        }
        return RefusalTarget {
            table: None,
            round: None,
            requested: Some(json!({"table": requested_id(table)})),
        };
    }
    RefusalTarget {
        table: None,
        round: None,
        requested: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_request_of_safe_integers_is_logged_verbatim() {
        let v = json!({"bet": "straight", "numbers": [17], "stake_minor": 1000});
        assert_eq!(loggable(&v), v);
    }

    #[test]
    fn a_fraction_an_unsafe_integer_or_a_long_request_is_logged_as_its_digest() {
        for v in [
            json!({"bet": "red", "x": 0.5}),
            json!({"stake_minor": 9007199254740992u64}),
            json!({"stake_minor": 1000.0}),
            json!({"pad": "x".repeat(MAX_LOGGED_REQUEST_BYTES)}),
        ] {
            let logged = loggable(&v);
            let u = &logged["unlogged"];
            assert_eq!(u["sha256"].as_str().map(str::len), Some(64), "{logged}");
            assert!(u["bytes"].as_u64().is_some_and(|n| n > 0));
            assert!(pitboss_audit::entry::check_numbers(&logged).is_ok());
        }
    }

    #[test]
    fn messages_are_cut_at_a_character_boundary() {
        let long = "č".repeat(600);
        let t = truncate(&long, MAX_LOGGED_MESSAGE_BYTES);
        assert!(t.len() <= MAX_LOGGED_MESSAGE_BYTES);
        assert!(t.ends_with('…'));
        assert_eq!(truncate("short", 10), "short");
    }

    #[test]
    fn an_id_pitboss_could_not_have_issued_is_named_by_its_digest() {
        assert_eq!(requested_id("t1.17"), json!("t1.17"));
        assert_eq!(requested_id("table-1"), json!("table-1"));
        assert_eq!(requested_id("op-1:t1"), json!("op-1:t1"));
        assert_eq!(requested_id("op-1:t1.17"), json!("op-1:t1.17"));
        assert!(requested_id("a:b:c")["unlogged"].is_object());
        assert!(requested_id(":t1")["unlogged"].is_object());
        let long = "a".repeat(300);
        assert!(requested_id(&long)["unlogged"]["sha256"].is_string());
        assert!(requested_id("a b")["unlogged"].is_object());
    }
}
