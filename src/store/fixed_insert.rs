//! Multi-row `INSERT`s on SQLite by statements of fixed shapes, each prepared once per
//! connection and reused.
//!
//! diesel caches no insert of a `Vec` of rows (its text changes with the number of rows), nor
//! an insert of an array of rows whose values borrow: SQLite parsed and compiled each of the
//! committer's inserts anew at every transaction, about a third of a 25-row insert's cost
//! (`bench/sqlite-parse.py`). Here a transaction's rows go in statements of 64, 16, 8, 4, 2 and
//! 1 rows: each shape of each table is one statement text, which diesel keeps prepared (its
//! cache is keyed by [`Row::Id`] and the shape).
//!
//! The plain inserts (entries, idempotency records, tags) say `INSERT OR FAIL`. A multi-row
//! statement whose constraints resolve by `ABORT` (the default) opens a statement journal in a
//! transaction, so that a failure at its fifth row can undo its first four, and copies there
//! every page it changes first: ≈ 5 % of the committer's CPU. With `FAIL` a constraint
//! failure stops the statement and leaves its earlier rows in the transaction, which every
//! caller then rolls back whole (each insert runs in a transaction that fails with it): no
//! statement journal, the same outcome. `bench/sqlite-stmt-journal.py` measures the
//! difference (11–15 % of a 16-row insert's CPU). An upsert (`ON CONFLICT … DO UPDATE`)
//! measured no difference and keeps the default.

use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::sqlite::{Sqlite, SqliteConnection};
use diesel::{QueryResult, RunQueryDsl};

/// A row of a table, as the fixed-shape insert writes it.
pub trait Row {
    /// Names the table's statements in diesel's cache (with the shape).
    type Id: 'static;
    /// `INSERT [OR FAIL] INTO table (column, …) VALUES ` (the rows follow).
    const INSERT: &'static str;
    /// What follows the rows (an `ON CONFLICT` clause), if anything.
    const SUFFIX: &'static str = "";
    /// Binds the row's values, one `?` each, comma-separated.
    fn bind<'b>(&'b self, pass: &mut AstPass<'_, 'b, Sqlite>) -> QueryResult<()>;
}

/// Exactly `N` rows of one table.
struct Insert<'a, R, const N: usize>(&'a [R]);

impl<R: Row, const N: usize> QueryId for Insert<'_, R, N> {
    type QueryId = (R::Id, [(); N]);
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl<R: Row, const N: usize> QueryFragment<Sqlite> for Insert<'_, R, N> {
    fn walk_ast<'b>(&'b self, mut pass: AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
        debug_assert_eq!(self.0.len(), N);
        pass.push_sql(R::INSERT);
        for (i, row) in self.0.iter().enumerate() {
            pass.push_sql(if i == 0 { "(" } else { ", (" });
            row.bind(&mut pass)?;
            pass.push_sql(")");
        }
        pass.push_sql(R::SUFFIX);
        Ok(())
    }
}

impl<R, const N: usize> RunQueryDsl<SqliteConnection> for Insert<'_, R, N> {}

/// Inserts `rows` by statements of fixed shapes (64, 16, 8, 4, 2, 1 rows).
pub fn insert<R: Row>(c: &mut SqliteConnection, rows: &[R]) -> QueryResult<()> {
    let mut rest = rows;
    while !rest.is_empty() {
        let n = match rest.len() {
            64.. => 64,
            16.. => 16,
            8.. => 8,
            4.. => 4,
            2.. => 2,
            _ => 1,
        };
        let (head, tail) = rest.split_at(n);
        match n {
            64 => Insert::<R, 64>(head).execute(c)?,
            16 => Insert::<R, 16>(head).execute(c)?,
            8 => Insert::<R, 8>(head).execute(c)?,
            4 => Insert::<R, 4>(head).execute(c)?,
            2 => Insert::<R, 2>(head).execute(c)?,
            _ => Insert::<R, 1>(head).execute(c)?,
        };
        rest = tail;
    }
    Ok(())
}

/// Binds `values` (each `(sql type, value)`), comma-separated.
macro_rules! bind_all {
    ($pass:expr, $(($st:ty, $v:expr)),+ $(,)?) => {{
        let mut first = true;
        $(
            if !std::mem::take(&mut first) {
                $pass.push_sql(", ");
            }
            $pass.push_bind_param::<$st, _>($v)?;
        )+
        Ok(())
    }};
}
pub(crate) use bind_all;

#[cfg(test)]
mod tests {
    use super::*;
    use diesel::connection::SimpleConnection;
    use diesel::prelude::*;
    use diesel::sql_types::{BigInt, Text};

    diesel::table! {
        t (k) {
            k -> BigInt,
            v -> Text,
        }
    }

    struct TRow<'a>(i64, &'a str);

    impl Row for TRow<'_> {
        type Id = t::table;
        const INSERT: &'static str = "INSERT INTO t (k, v) VALUES ";
        fn bind<'b>(&'b self, pass: &mut AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
            bind_all!(pass, (BigInt, &self.0), (Text, self.1))
        }
    }

    /// Every number of rows up to 200 goes in whole and in order, by the fixed shapes.
    #[test]
    fn every_count_of_rows_is_inserted_whole() {
        let mut c = SqliteConnection::establish(":memory:").expect("sqlite");
        c.batch_execute("CREATE TABLE t (k INTEGER PRIMARY KEY NOT NULL, v TEXT NOT NULL)")
            .expect("table");
        let text: Vec<String> = (0..200).map(|i| format!("v{i}")).collect();
        let mut next = 0i64;
        for n in 0..200usize {
            let rows: Vec<TRow> = (0..n)
                .map(|i| TRow(next + i as i64, text[i].as_str()))
                .collect();
            insert(&mut c, &rows).expect("inserted");
            let got: Vec<(i64, String)> = t::table
                .filter(t::k.ge(next))
                .order(t::k.asc())
                .load(&mut c)
                .expect("read");
            assert_eq!(got.len(), n);
            for (i, (k, v)) in got.iter().enumerate() {
                assert_eq!((*k, v.as_str()), (next + i as i64, text[i].as_str()));
            }
            next += n as i64;
        }
    }

    /// `INSERT OR FAIL` (as the log's inserts say it) still refuses a duplicate, and the
    /// transaction it fails takes every row with it, the statement's earlier rows too.
    #[test]
    fn a_failed_insert_or_fail_leaves_nothing_of_its_transaction() {
        struct FRow(i64);
        impl Row for FRow {
            type Id = (t::table, bool);
            const INSERT: &'static str = "INSERT OR FAIL INTO t (k, v) VALUES ";
            fn bind<'b>(&'b self, pass: &mut AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
                bind_all!(pass, (BigInt, &self.0), (Text, "v"))
            }
        }
        let mut c = SqliteConnection::establish(":memory:").expect("sqlite");
        c.batch_execute("CREATE TABLE t (k INTEGER PRIMARY KEY NOT NULL, v TEXT NOT NULL)")
            .expect("table");
        insert(&mut c, &[FRow(7)]).expect("a first row");
        // 16 rows in one statement, the duplicate of 7 at the ninth.
        let rows: Vec<FRow> = (0..16)
            .map(|i| FRow(if i == 8 { 7 } else { 100 + i }))
            .collect();
        let failed = c.transaction(|c| {
            insert(c, &[FRow(50)])?;
            insert(c, &rows)
        });
        assert!(
            matches!(
                failed,
                Err(diesel::result::Error::DatabaseError(
                    diesel::result::DatabaseErrorKind::UniqueViolation,
                    _
                ))
            ),
            "{failed:?}"
        );
        let keys: Vec<i64> = t::table.select(t::k).load(&mut c).expect("read");
        assert_eq!(keys, vec![7], "the failed transaction left nothing");
        // The connection goes on.
        c.transaction(|c| insert(c, &[FRow(8)]))
            .expect("the next transaction");
    }
}
