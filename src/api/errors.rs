//! The error codes each operation answers with, by HTTP status: the examples of every error
//! response in `openapi.json` are built from this list, one per code, so a client sees the
//! codes a response really carries (not one example shared by every error).
//!
//! `tests/it/api_openapi.rs` holds it to the code: each code must be one the source produces
//! with that status; and every problem document any HTTP test receives must carry a code
//! listed here for its operation and status (`tests/it/server.rs`).

/// The codes of a command's malformed request.
const BAD_COMMAND: &[&str] = &[
    "malformed_json",
    "bad_number",
    "idempotency_key_required",
    "bad_idempotency_key",
];

/// One operation's errors: method, path template, and the codes of each status.
pub struct OperationErrors {
    pub method: &'static str,
    pub path: &'static str,
    pub statuses: &'static [(u16, &'static [&'static str])],
}

const fn op(
    method: &'static str,
    path: &'static str,
    statuses: &'static [(u16, &'static [&'static str])],
) -> OperationErrors {
    OperationErrors {
        method,
        path,
        statuses,
    }
}

/// What a dealer event can be refused for as a whole (nothing of it is recorded): the round's
/// lifecycle, a card the rules or the shoe refuse, an RNG deal that cannot be made, a
/// settlement the plan forbids.
const EVENT_REFUSALS: &[&str] = &[
    // the round
    "bad_card_count",
    "bad_reason",
    "misdeal_not_in_plan",
    "round_not_complete",
    "settlement_inconsistent",
    "rng_exhausted",
    "rng_mismatch",
    // a card, or the deal
    "bad_position",
    "wrong_position",
    "card_not_in_shoe",
    "not_in_shoe",
    "duplicate_card",
    "deal_complete",
    "deal_incomplete",
    "awaiting_decisions",
    "card_not_expected",
    "cards_missing",
    "cards_exhausted",
    "dealer_hand_invalid",
    "too_few_players",
    "too_many_players",
    "inconsistent_outcome",
    "inconsistent_placement",
    // a spin
    "invalid_number",
    // the automatic decisions of `close_decisions`
    "no_automatic_decision",
    "play_invalid",
    // the settlement
    "max_win_exceeded",
    "no_payout_row",
    "payout_overflow",
    "idempotency_key_reused",
];

/// What an act at a player-versus-player table can be refused for: the Oko bere and poker
/// rules, and the table itself.
const ACTION_REFUSALS: &[&str] = &[
    "malformed_action",
    "bad_void_reason",
    "not_in_game",
    "no_automatic_decision",
    "idempotency_key_reused",
    // both games
    "not_expected",
    "not_your_turn",
    "no_such_seat",
    "seat_taken",
    "below_min_bet",
    "raise_not_allowed",
    "bad_draw",
    "card_not_in_shoe",
    "duplicate_card",
    // Oko bere
    "player_seated",
    "bad_text",
    "bad_amount",
    "amount_overflow",
    "insufficient_chips",
    "seat_in_play",
    "method_not_allowed",
    "bank_below_minimum",
    "not_a_player",
    "no_players",
    "mala_domu_bank_too_small",
    "duel_not_allowed",
    "duel_refusal_not_allowed",
    "above_bank",
    "already_bet",
    "banker_does_not_bet",
    "no_stake",
    "not_replaceable",
    "replacement_not_allowed",
    "chips_not_conserved",
    // poker
    "seat_empty",
    "already_seated",
    "bad_player",
    "not_whole_chips",
    "below_min_buy_in",
    "above_max_buy_in",
    "option_not_offered",
    "in_hand",
    "not_sitting_out",
    "already_sitting_out",
    "hand_in_progress",
    "no_hand",
    "not_enough_players",
    "button_draw_needed",
    "no_draw_needed",
    "straddle_not_allowed",
    "not_dealt_in",
    "wrong_card_count",
    "cannot_check",
    "nothing_to_call",
    "bet_or_raise",
    "below_min_raise",
    "above_stack",
    "above_pot_limit",
    "below_call",
    "play_started",
    "not_applicable",
    "not_in_plan",
    "overflow",
    "chip_conservation",
];

/// Every operation that answers with an error, and its codes.
pub const OPERATIONS: &[OperationErrors] = &[
    op(
        "POST",
        "/v1/payouts/confirm",
        &[
            (400, BAD_COMMAND),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (404, &["payout_not_found"]),
            (409, &["payout_already_confirmed"]),
            (422, &["bad_wallet_reference", "idempotency_key_reused"]),
            (503, &["unavailable"]),
        ],
    ),
    op(
        "GET",
        "/v1/payouts/overdue",
        &[
            (400, &["malformed_query"]),
            (401, &["unauthorized"]),
            (503, &["unavailable"]),
        ],
    ),
    op(
        "POST",
        "/v1/rounds/{round}/withdrawals",
        &[
            (400, BAD_COMMAND),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (404, &["round_not_found"]),
            (409, &["betting_closed"]),
            (
                422,
                &[
                    "withdrawal_not_allowed",
                    "no_live_bet",
                    "bet_not_live",
                    "bets_depend",
                    "bad_refund_request",
                    "bad_id",
                    "idempotency_key_reused",
                ],
            ),
            (503, &["unavailable"]),
        ],
    ),
    op(
        "POST",
        "/v1/players/{player}/exclusion",
        &[
            (400, BAD_COMMAND),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (422, &["bad_exclusion", "bad_id", "idempotency_key_reused"]),
            (503, &["unavailable"]),
        ],
    ),
    op(
        "POST",
        "/v1/players/{player}/exclusion/lift",
        &[
            (400, BAD_COMMAND),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (409, &["not_excluded"]),
            (422, &["bad_reason", "bad_id", "idempotency_key_reused"]),
            (503, &["unavailable"]),
        ],
    ),
    op(
        "POST",
        "/v1/players/{player}/limits",
        &[
            (400, BAD_COMMAND),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (422, &["bad_limits", "bad_id", "idempotency_key_reused"]),
            (503, &["unavailable"]),
        ],
    ),
    op(
        "POST",
        "/v1/players/{player}/usage",
        &[
            (400, BAD_COMMAND),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (422, &["bad_usage", "bad_id", "idempotency_key_reused"]),
            (503, &["unavailable"]),
        ],
    ),
    op(
        "GET",
        "/v1/players/{player}",
        &[
            (400, &["malformed_query", "operator_required"]),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (503, &["unavailable"]),
        ],
    ),
    op("GET", "/docs/{file}", &[(404, &["no_such_route"])]),
    op("GET", "/readyz", &[(503, &["not_ready"])]),
    op(
        "POST",
        "/v1/admin/keys",
        &[
            (
                400,
                &[
                    "malformed_json",
                    "bad_id",
                    "operator_required",
                    "operator_not_allowed",
                    "bad_expiry",
                ],
            ),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (503, &["unavailable"]),
        ],
    ),
    op(
        "GET",
        "/v1/admin/keys",
        &[
            (400, &["malformed_query", "bad_limit"]),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (503, &["unavailable"]),
        ],
    ),
    op(
        "POST",
        "/v1/admin/keys/{key_id}/revoke",
        &[
            (400, &["malformed_json"]),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (404, &["key_not_found"]),
            (409, &["key_revoked"]),
            (503, &["unavailable"]),
        ],
    ),
    op(
        "POST",
        "/v1/admin/keys/{key_id}/rotate",
        &[
            (400, &["malformed_json", "bad_overlap"]),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (404, &["key_not_found"]),
            (409, &["key_revoked"]),
            (503, &["unavailable"]),
        ],
    ),
    op(
        "POST",
        "/v1/admin/signing-key/rotate",
        &[
            (400, &["malformed_json"]),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (
                409,
                &[
                    "rotation_open",
                    "no_rotation_open",
                    "rotation_not_ready",
                    "rotation_unsupported",
                ],
            ),
            (503, &["unavailable"]),
        ],
    ),
    op(
        "GET",
        "/v1/audit/checkpoint",
        &[
            (400, &["malformed_query"]),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (404, &["no_such_log", "no_checkpoint", "not_witnessed"]),
            (503, &["unavailable"]),
        ],
    ),
    op(
        "POST",
        "/v1/audit/checkpoint",
        &[
            (400, &["malformed_query"]),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (404, &["no_such_log"]),
            (503, &["unavailable"]),
        ],
    ),
    op(
        "GET",
        "/v1/audit/entries",
        &[
            (400, &["malformed_query"]),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (404, &["no_such_log"]),
            (503, &["unavailable"]),
        ],
    ),
    op(
        "GET",
        "/v1/audit/daily-summary",
        &[
            (400, &["malformed_query"]),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (404, &["no_such_log"]),
            (503, &["unavailable"]),
        ],
    ),
    op(
        "GET",
        "/v1/audit/export",
        &[
            (400, &["malformed_query"]),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (404, &["no_such_log"]),
            (503, &["unavailable"]),
        ],
    ),
    op(
        "GET",
        "/v1/audit/consistency",
        &[
            (400, &["malformed_query", "bad_range"]),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (404, &["no_such_log", "beyond_log"]),
            (503, &["unavailable"]),
        ],
    ),
    op(
        "get",
        "/v1/audit/proof/{seq}",
        &[
            (400, &["malformed_path", "malformed_query"]),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (
                404,
                &[
                    "no_such_log",
                    "entry_not_found",
                    "no_checkpoint",
                    "entry_not_covered",
                ],
            ),
            (503, &["unavailable"]),
        ],
    ),
    op(
        "GET",
        "/v1/plan-diff",
        &[
            (400, &["malformed_query", "bad_plan_ref"]),
            (404, &["plan_not_found"]),
        ],
    ),
    op("GET", "/v1/plan-approvals", &[(401, &["unauthorized"])]),
    op(
        "POST",
        "/v1/plan-approvals",
        &[
            (400, &["malformed_json"]),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (409, &["approval_exists"]),
            (
                422,
                &[
                    "bad_plan_ref",
                    "bad_sha256",
                    "bad_reference",
                    "bad_validity",
                    "plan_hash_mismatch",
                ],
            ),
            (503, &["unavailable"]),
        ],
    ),
    op(
        "POST",
        "/v1/plan-approvals/note",
        &[
            (400, &["malformed_note"]),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (409, &["approval_exists"]),
            (
                422,
                &[
                    "bad_approval_note",
                    "approval_signature_unknown",
                    "bad_plan_ref",
                    "bad_sha256",
                    "bad_reference",
                    "bad_validity",
                    "plan_hash_mismatch",
                ],
            ),
            (503, &["unavailable"]),
        ],
    ),
    op(
        "POST",
        "/v1/plan-approvals/withdrawals",
        &[
            (400, &["malformed_json"]),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (404, &["approval_not_found"]),
            (409, &["approval_withdrawn"]),
            (422, &["bad_reason"]),
            (503, &["unavailable"]),
        ],
    ),
    op(
        "GET",
        "/v1/plans/{id}/versions",
        &[(400, &["bad_plan_ref"]), (404, &["plan_not_found"])],
    ),
    op(
        "GET",
        "/v1/plans/{plan}",
        &[(400, &["bad_plan_ref"]), (404, &["plan_not_found"])],
    ),
    op(
        "GET",
        "/v1/rounds/{round}",
        &[(401, &["unauthorized"]), (404, &["round_not_found"])],
    ),
    op(
        "POST",
        "/v1/rounds/{round}/bets",
        &[
            (400, BAD_COMMAND),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (404, &["round_not_found"]),
            (409, &["round_paused"]),
            (
                422,
                &[
                    "bad_bet_count",
                    "family_not_supported",
                    "idempotency_key_reused",
                ],
            ),
            (503, &["unavailable", "outcome_unknown"]),
        ],
    ),
    op(
        "POST",
        "/v1/rounds/{round}/decisions",
        &[
            (400, BAD_COMMAND),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (404, &["round_not_found"]),
            (409, &["out_of_order", "round_paused"]),
            (422, &["bad_decision_count", "idempotency_key_reused"]),
            (503, &["unavailable", "outcome_unknown"]),
        ],
    ),
    op(
        "POST",
        "/v1/rounds/{round}/events",
        &[
            (400, BAD_COMMAND),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (404, &["round_not_found"]),
            (
                409,
                &[
                    "out_of_order",
                    "betting_open",
                    "betting_closed",
                    "wrong_mode",
                    "not_rng",
                    "decisions_open",
                    "round_paused",
                ],
            ),
            (422, EVENT_REFUSALS),
            (503, &["unavailable", "outcome_unknown"]),
        ],
    ),
    op(
        "GET",
        "/v1/rounds/{round}/recall",
        &[
            (401, &["unauthorized"]),
            (404, &["round_not_found"]),
            (503, &["unavailable"]),
        ],
    ),
    op(
        "GET",
        "/v1/rounds/{round}/settlement",
        &[
            (401, &["unauthorized"]),
            (404, &["round_not_found"]),
            (409, &["not_settled"]),
        ],
    ),
    op(
        "POST",
        "/v1/rounds/{round}/void",
        &[
            (400, BAD_COMMAND),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (404, &["round_not_found"]),
            (409, &["out_of_order", "partial_void_not_possible"]),
            (
                422,
                &[
                    "bad_reason",
                    "partial_void_not_allowed",
                    "no_live_bet",
                    "bet_not_live",
                    "bets_depend",
                    "bad_refund_request",
                    "bad_id",
                    "idempotency_key_reused",
                ],
            ),
            (503, &["unavailable", "outcome_unknown"]),
        ],
    ),
    op(
        "POST",
        "/v1/rounds/{round}/pause",
        &[
            (400, BAD_COMMAND),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (404, &["round_not_found"]),
            (409, &["round_paused", "round_finished"]),
            (422, &["bad_reason", "idempotency_key_reused"]),
            (503, &["unavailable"]),
        ],
    ),
    op(
        "POST",
        "/v1/rounds/{round}/resume",
        &[
            (400, BAD_COMMAND),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (404, &["round_not_found"]),
            (409, &["round_not_paused"]),
            (422, &["bad_reason", "idempotency_key_reused"]),
            (503, &["unavailable"]),
        ],
    ),
    op(
        "POST",
        "/v1/tables",
        &[
            (400, BAD_COMMAND),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (404, &["plan_not_found"]),
            (409, &["table_exists", "plan_not_approved"]),
            (
                422,
                &[
                    "bad_id",
                    "bad_plan_ref",
                    "mode_not_allowed",
                    "mode_not_supported",
                    "family_not_supported",
                    "bad_registration",
                    "registration_required",
                    "unsupported_plan",
                    "idempotency_key_reused",
                ],
            ),
            (503, &["unavailable", "outcome_unknown"]),
        ],
    ),
    op(
        "GET",
        "/v1/tables",
        &[
            (400, &["malformed_query", "bad_limit"]),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (404, &["no_such_log"]),
            (503, &["unavailable"]),
        ],
    ),
    op(
        "GET",
        "/v1/tables/{table}/rounds",
        &[
            (400, &["malformed_query", "bad_limit"]),
            (401, &["unauthorized"]),
            (404, &["table_not_found"]),
            (503, &["unavailable"]),
        ],
    ),
    op(
        "GET",
        "/v1/tables/{table}",
        &[(401, &["unauthorized"]), (404, &["table_not_found"])],
    ),
    op(
        "POST",
        "/v1/tables/{table}/actions",
        &[
            (400, BAD_COMMAND),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (404, &["table_not_found"]),
            (
                409,
                &["table_closed", "decision_time_open", "round_in_progress"],
            ),
            (422, ACTION_REFUSALS),
            (503, &["unavailable", "outcome_unknown"]),
        ],
    ),
    op(
        "POST",
        "/v1/tables/{table}/close",
        &[
            (400, BAD_COMMAND),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (404, &["table_not_found"]),
            (409, &["table_closed"]),
            (422, &["chips_at_table", "idempotency_key_reused"]),
            (503, &["unavailable", "outcome_unknown"]),
        ],
    ),
    op(
        "POST",
        "/v1/tables/{table}/players",
        &[
            (400, BAD_COMMAND),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (404, &["table_not_found"]),
            (422, &["bad_id", "idempotency_key_reused"]),
            (503, &["unavailable", "outcome_unknown"]),
        ],
    ),
    op(
        "POST",
        "/v1/tables/{table}/rounds",
        &[
            (400, BAD_COMMAND),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (404, &["table_not_found"]),
            (
                409,
                &["table_closed", "round_in_progress", "plan_not_approved"],
            ),
            (
                422,
                &[
                    "not_in_game",
                    "rng_commitment_missing",
                    "idempotency_key_reused",
                ],
            ),
            (503, &["unavailable", "outcome_unknown", "rng_unavailable"]),
        ],
    ),
    op(
        "POST",
        "/v1/tables/{table}/shoe",
        &[
            (400, BAD_COMMAND),
            (401, &["unauthorized"]),
            (403, &["forbidden"]),
            (404, &["table_not_found"]),
            (409, &["out_of_order"]),
            (422, &["no_shoe", "idempotency_key_reused"]),
            (503, &["unavailable", "outcome_unknown"]),
        ],
    ),
];

/// What every operation that takes a body answers to one above the limit.
pub const TOO_LARGE: (u16, &[&str]) = (413, &["payload_too_large"]);

/// What every operation answers to a request target above the limit.
pub const URI_TOO_LONG: (u16, &[&str]) = (414, &["uri_too_long"]);

/// What every operation that takes a key answers when a limit is met (`src/limits.rs`).
pub const THROTTLED: (u16, &[&str]) = (
    429,
    &[
        "rate_limited",
        "too_many_failed_authentications",
        "quota_exceeded",
        "refusal_budget_exceeded",
    ],
);

/// The codes of `method path` answering `status`, if the operation lists that status.
pub fn codes(method: &str, path: &str, status: u16) -> Option<&'static [&'static str]> {
    for (s, codes) in [TOO_LARGE, URI_TOO_LONG, THROTTLED] {
        if status == s {
            return Some(codes);
        }
    }
    OPERATIONS
        .iter()
        .find(|o| o.method.eq_ignore_ascii_case(method) && o.path == path)?
        .statuses
        .iter()
        .find(|(s, _)| *s == status)
        .map(|(_, codes)| *codes)
}

/// The problem's `title` as the service writes it for a status.
pub fn title(status: u16) -> &'static str {
    match status {
        400 => "Bad request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not found",
        409 | 422 => "Refused",
        413 => "Payload Too Large",
        414 => "URI too long",
        429 => "Too many requests",
        503 => "Service unavailable",
        _ => "Error",
    }
}

/// A message of the kind the service writes for `code`, for the example.
pub fn sample_detail(code: &str) -> String {
    match code {
        "malformed_json" => "expected value at line 1 column 1".into(),
        "bad_number" => "12.5 at /bets/0/stake_minor is not a whole number within ±9007199254740991: amounts are integer minor units, counts and numbers whole".into(),
        "idempotency_key_required" => "every change carries an Idempotency-Key header".into(),
        "bad_idempotency_key" => "an Idempotency-Key is 1–128 printable ASCII characters".into(),
        "idempotency_key_reused" => "this Idempotency-Key was used for a different request".into(),
        "unauthorized" => "send `Authorization: Bearer <API key>`".into(),
        "forbidden" => "only an operator key may do this".into(),
        "unavailable" => "the database did not answer in time; nothing was recorded".into(),
        "outcome_unknown" => "the store did not confirm this request within 3000 ms: it may or may not have been recorded; retry with the same Idempotency-Key, which returns the recorded answer or performs the request once".into(),
        "not_ready" => "the store refuses writes (storage: database or disk is full)".into(),
        "plan_not_found" => "no plan evolution-roulette@9 is loaded".into(),
        "table_not_found" => "no table t1".into(),
        "round_not_found" => "no round t1.1".into(),
        "table_exists" => "table t1 exists".into(),
        "table_closed" => "table t1 is closed".into(),
        "round_in_progress" => "round t1.3 is in progress: settle or void it first".into(),
        "out_of_order" => "round t1.1 is already settled".into(),
        "betting_open" => "round t1.1 is still taking bets: close betting before the result".into(),
        "not_settled" => "round t1.1 is taking bets: nothing is settled yet".into(),
        "bad_plan_ref" => "'evolution roulette' is not ID or ID@VERSION".into(),
        "malformed_query" => "missing field `from`".into(),
        "rotation_open" => "the rotation begun at seq 1234 is open: end it first".into(),
        "no_rotation_open" => "no signing-key rotation is open: begin one first".into(),
        "rotation_not_ready" => "the rotation cannot end now: rotation end names a new key that was not announced and authorised by a checkpoint".into(),
        "not_witnessed" => "no checkpoint carries cosignatures by 2 of the 3 configured witnesses yet".into(),
        "bad_expiry" => "expires_at 2020-01-01 00:00:00 UTC is not in the future".into(),
        "bad_overlap" => "overlap_s 9999999 is over 30 days (2,592,000 s)".into(),
        "key_not_found" => "no API key 0123456789abcdef".into(),
        "key_revoked" => "API key 0123456789abcdef is revoked already".into(),
        "no_such_route" => "no such route; see /v1/plans and /healthz".into(),
        "payload_too_large" => "request bodies are limited to 262144 bytes".into(),
        "uri_too_long" => "request targets are limited to 8192 bytes; this one has 10250".into(),
        "rate_limited" => "this API key sent more than 20000 requests a second; retry with the same Idempotency-Key".into(),
        "too_many_failed_authentications" => "too many failed authentications from this address (at most 60 a minute); wait before trying again".into(),
        "quota_exceeded" => "operator op1 has 1000 tables open, its limit (1000); close a table before opening another".into(),
        "refusal_budget_exceeded" => "operator op1's refused requests filled its share of the audit log (65536 bytes a second); nothing was recorded, retry later".into(),
        other => format!("refused: {}", other.replace('_', " ")),
    }
}
