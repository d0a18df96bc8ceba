//! Entries by round and by table, indexed in bulk.
//!
//! `audit_entries` has no index on its round or table: every batch would write a leaf page of
//! each such index per table it touches. The committer instead adds the `(round, seq)` and
//! `(table, seq)` pairs of all entries from [`indexed_to`] on, in one statement per index,
//! every [`every`] entries or once a second ([`due`]), inside a batch's transaction. Readers
//! split a lookup at `indexed_to`: below it through the index tables (bounded by what they
//! ask for, in `seq` order), at and above it by scanning the un-indexed tail by `seq` (at most
//! a few hundred entries plus one batch). Nothing but the committer writes these tables; the
//! log stays the source (they are rebuilt from it by the migration that made them).

use std::time::Duration;

use diesel::prelude::*;

use super::schema::{audit_entries, audit_index_state, audit_round_entries, audit_table_entries};
use super::DbConnection;

/// Entries left un-indexed before the committer indexes them (env `PITBOSS_INDEX_EVERY`, at
/// least 1; default 512).
pub fn every() -> u64 {
    std::env::var("PITBOSS_INDEX_EVERY")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(512, |n| n.max(1))
}

/// The longest an entry stays un-indexed while batches keep coming.
pub const AT_MOST: Duration = Duration::from_secs(1);

/// Whether a batch whose last entry is `last_seq` should also index the tail from
/// `indexed_to`, given when the tail was last indexed.
pub fn due(indexed_to: i64, last_seq: i64, since_last: Duration, every: u64) -> bool {
    let tail = last_seq + 1 - indexed_to;
    tail > 0 && (tail as u64 >= every || since_last >= AT_MOST)
}

/// Every entry with a smaller `seq` is in the index tables.
pub fn indexed_to(c: &mut DbConnection) -> QueryResult<i64> {
    Ok(audit_index_state::table
        .filter(audit_index_state::id.eq(1))
        .select(audit_index_state::indexed_to)
        .load::<i64>(c)?
        .first()
        .copied()
        .unwrap_or(0))
}

/// Indexes every entry from `from` up to `to` (exclusive; the caller's transaction holds them
/// all) and records `to`.
pub fn index(c: &mut DbConnection, from: i64, to: i64) -> QueryResult<()> {
    diesel::insert_into(audit_round_entries::table)
        .values(
            audit_entries::table
                .filter(audit_entries::seq.ge(from))
                .filter(audit_entries::seq.lt(to))
                .filter(audit_entries::round_id.is_not_null())
                .select((
                    audit_entries::round_id.assume_not_null(),
                    audit_entries::seq,
                )),
        )
        .into_columns((audit_round_entries::round_id, audit_round_entries::seq))
        .execute(c)?;
    diesel::insert_into(audit_table_entries::table)
        .values(
            audit_entries::table
                .filter(audit_entries::seq.ge(from))
                .filter(audit_entries::seq.lt(to))
                .filter(audit_entries::table_id.is_not_null())
                .select((
                    audit_entries::table_id.assume_not_null(),
                    audit_entries::seq,
                )),
        )
        .into_columns((audit_table_entries::table_id, audit_table_entries::seq))
        .execute(c)?;
    diesel::update(audit_index_state::table.filter(audit_index_state::id.eq(1)))
        .set(audit_index_state::indexed_to.eq(to))
        .execute(c)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_by_size_or_by_time_and_never_with_nothing_new() {
        let s = Duration::from_millis(10);
        assert!(
            !due(100, 99, Duration::from_secs(5), 512),
            "nothing un-indexed"
        );
        assert!(!due(100, 110, s, 512));
        assert!(due(100, 611, s, 512));
        assert!(due(100, 100, AT_MOST, 512));
        assert!(due(0, 0, s, 1));
    }
}
