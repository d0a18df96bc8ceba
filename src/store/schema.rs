//! Diesel table definitions; the SQL lives in `migrations/sqlite` and `migrations/postgres`.

diesel::table! {
    audit_entries (seq) {
        seq -> BigInt,
        ts -> Text,
        kind -> Text,
        operator_id -> Nullable<Text>,
        table_id -> Nullable<Text>,
        round_id -> Nullable<Text>,
        bet_id -> Nullable<Text>,
        canonical -> Binary,
        leaf_hash -> Binary,
    }
}

diesel::table! {
    log_state (id) {
        id -> Integer,
        state -> Text,
    }
}

diesel::table! {
    checkpoints (tree_size) {
        tree_size -> BigInt,
        note -> Text,
        created_at -> Text,
    }
}

diesel::table! {
    checkpoint_cosignatures (tree_size, witness) {
        tree_size -> BigInt,
        witness -> Text,
        line -> Text,
        cosigned_at -> BigInt,
    }
}

diesel::table! {
    idempotency (operator_id, idem_key) {
        operator_id -> Text,
        idem_key -> Text,
        request_hash -> Text,
        status -> Integer,
        body -> Text,
        created_at -> Text,
    }
}

diesel::table! {
    api_keys (key_id) {
        key_id -> Text,
        secret_hash -> Text,
        role -> Text,
        operator_id -> Nullable<Text>,
        created_at -> Text,
        expires_at -> Nullable<Text>,
        revoked_at -> Nullable<Text>,
        replaced_by -> Nullable<Text>,
        last_used_at -> Nullable<Text>,
    }
}

diesel::table! {
    rng_seeds (round_id) {
        round_id -> Text,
        seed -> Binary,
    }
}

diesel::table! {
    merkle_tiles (level, idx) {
        level -> Integer,
        idx -> BigInt,
        hashes -> Binary,
    }
}

diesel::table! {
    finished_rounds (round_id) {
        round_id -> Text,
        table_id -> Text,
        operator_id -> Text,
        body -> Text,
    }
}

diesel::table! {
    state_snapshots (covers) {
        covers -> BigInt,
        sha256 -> Text,
        body -> Binary,
        created_at -> Text,
    }
}

diesel::table! {
    closed_tables (table_id) {
        table_id -> Text,
        operator_id -> Text,
        plan -> Text,
        body -> Text,
    }
}

diesel::table! {
    audit_entry_tags (tag, value, seq) {
        tag -> Text,
        value -> Text,
        seq -> BigInt,
    }
}

diesel::table! {
    audit_entry_tags_state (id) {
        id -> Integer,
        complete -> Integer,
    }
}

diesel::table! {
    payouts_due (round_id, player) {
        round_id -> Text,
        player -> Text,
        operator_id -> Text,
        amount_minor -> BigInt,
        evaluated_at -> Text,
        due_at -> Text,
        paid_at -> Nullable<Text>,
        wallet_reference -> Nullable<Text>,
    }
}

diesel::allow_tables_to_appear_in_same_query!(audit_entries, audit_entry_tags);

diesel::table! {
    audit_round_entries (round_id, seq) {
        round_id -> Text,
        seq -> BigInt,
    }
}

diesel::table! {
    audit_table_entries (table_id, seq) {
        table_id -> Text,
        seq -> BigInt,
    }
}

diesel::table! {
    audit_index_state (id) {
        id -> Integer,
        indexed_to -> BigInt,
    }
}

diesel::allow_tables_to_appear_in_same_query!(audit_entries, audit_round_entries);
diesel::allow_tables_to_appear_in_same_query!(audit_entries, audit_table_entries);

diesel::table! {
    player_register (operator_id, player) {
        operator_id -> Text,
        player -> Text,
        body -> Text,
    }
}

diesel::table! {
    player_usage_by_player (operator_id, player) {
        operator_id -> Text,
        player -> Text,
        day_period -> BigInt,
        day_staked_minor -> BigInt,
        day_net_loss_minor -> BigInt,
        day_reported_staked_minor -> BigInt,
        day_reported_net_loss_minor -> BigInt,
        month_period -> BigInt,
        month_staked_minor -> BigInt,
        month_net_loss_minor -> BigInt,
        month_reported_staked_minor -> BigInt,
        month_reported_net_loss_minor -> BigInt,
        open_staked_minor -> BigInt,
    }
}

diesel::table! {
    operator_logs (operator) {
        operator -> Text,
        namespace -> Text,
        origin -> Text,
        created_at -> Text,
    }
}
