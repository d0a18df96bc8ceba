//! A transaction of the committer as one PostgreSQL statement: one round trip.
//!
//! Written statement by statement, a transaction of bets costs about ten round trips
//! (`BEGIN`, the lease's fencing check, the entries, the log state, the tags, the tiles, the
//! idempotency records, the player register's counts, the seeds, `COMMIT`), and on a busy
//! machine each round trip costs more than the database's own work. Here the rows of every
//! table travel as arrays, bound as parameters (nothing is spliced into the SQL text), and
//! one statement of data-modifying `WITH` clauses writes them all: a statement outside a
//! transaction block is its own transaction, so it commits whole or not at all, with one
//! sync, like the transaction it replaces.
//!
//! Only the rows a batch of bets and settlements writes take this path ([`fits`]): entries,
//! the log state, tags, tiles, idempotency records, the register's counted amounts, seeds
//! sealed and revealed, finished rounds, payouts owed. A transaction that also writes
//! anything else (the round and table indexes, a snapshot, a closed table, key changes, a
//! player's register entry or reported amounts, a payment confirmed) is written statement by
//! statement as before ([`super::committer::write_rows`]), so each of those keeps one
//! implementation.
//!
//! Every clause of one statement sees the database as it was before the statement, and a row
//! changed twice by one statement is an error. So:
//! - the fencing check gates every clause: with the lease lost (another node took it over),
//!   nothing is written and the statement answers 0, which the caller turns into the error
//!   the statement-by-statement path gives;
//! - a seed both sealed and revealed by the transaction (a round opened and settled in
//!   batches that share it) is not inserted: the revealing `DELETE` would not see it;
//! - every other table's rows are distinct by key already: tiles are reduced to the last row
//!   of each tile, the register's counts are merged per player and period, and entries,
//!   tags, idempotency keys, finished rounds and payouts are each written once by the log.

use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::sql_types::{Array, BigInt, Bytea, Integer, Nullable, Text};
use pitboss_audit::entry::SealedEntry;

use super::committer::BatchRows;
use super::derived::{self, Derived};
use super::payouts::ts;

/// Whether a transaction's rows can be written as one statement: only the kinds of rows the
/// statement writes (see the module's documentation).
pub(super) fn fits(rows: &BatchRows<'_>) -> bool {
    // Every field named: a kind of row added to a transaction is a compile error here, not
    // rows the one statement silently leaves out.
    let BatchRows {
        entries: _,
        log_state: _,
        tile_rows: _,
        derived,
        idempotency: _,
        seeds: _,
        revealed: _,
        index,
    } = rows;
    index.is_none()
        && derived.iter().all(|d| {
            let Derived {
                finished: _,
                closed,
                snapshot,
                keys,
                key_rows,
                payouts_due: _,
                payouts_confirmed,
                register,
            } = d;
            closed.is_empty()
                && snapshot.is_none()
                && keys.is_empty()
                && key_rows.is_empty()
                && payouts_confirmed.is_empty()
                && register.counts_only()
        })
}

const STATEMENT: &str = concat!(
    r#"WITH lease AS (
    UPDATE writer_lease SET expires_at = now() + make_interval(secs => $1 / 1000.0)
    WHERE id = 1 AND token = $2 RETURNING 1
), ok AS (
    SELECT 1 WHERE $2 IS NULL OR EXISTS (SELECT 1 FROM lease)
), entries AS (
    INSERT INTO audit_entries (seq, ts, kind, operator_id, table_id, round_id, bet_id,
                               canonical, leaf_hash)
    SELECT * FROM unnest($3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[],
                         $8::text[], $9::text[], $10::bytea[], $11::bytea[])
    WHERE EXISTS (SELECT 1 FROM ok)
), state AS (
    INSERT INTO log_state (id, state) SELECT 1, $12 WHERE EXISTS (SELECT 1 FROM ok)
    ON CONFLICT (id) DO UPDATE SET state = excluded.state
), tags AS (
    INSERT INTO audit_entry_tags (seq, tag, value)
    SELECT * FROM unnest($13::bigint[], $14::text[], $15::text[])
    WHERE EXISTS (SELECT 1 FROM ok)
), tiles AS (
    INSERT INTO merkle_tiles (level, idx, hashes)
    SELECT * FROM unnest($16::integer[], $17::bigint[], $18::bytea[])
    WHERE EXISTS (SELECT 1 FROM ok)
    ON CONFLICT (level, idx) DO UPDATE SET hashes = excluded.hashes
), idempotency_records AS (
    INSERT INTO idempotency (operator_id, idem_key, request_hash, status, body, created_at)
    SELECT * FROM unnest($19::text[], $20::text[], $21::text[], $22::integer[], $23::text[],
                         $24::text[])
    WHERE EXISTS (SELECT 1 FROM ok)
), counts AS (
    "#,
    super::register::usage_insert!(),
    r#"
    SELECT o, p, d, ds, dn, 0, 0, m, ms, mn, 0, 0, op
    FROM unnest($25::text[], $26::text[], $27::bigint[], $28::bigint[], $29::bigint[],
                $43::bigint[], $44::bigint[], $45::bigint[], $46::bigint[])
        AS c (o, p, d, ds, dn, m, ms, mn, op)
    WHERE EXISTS (SELECT 1 FROM ok)
    "#,
    super::register::usage_add_set!(),
    r#"
), sealed_seeds AS (
    INSERT INTO rng_seeds (round_id, seed)
    SELECT * FROM unnest($30::text[], $31::bytea[])
    WHERE EXISTS (SELECT 1 FROM ok)
), revealed_seeds AS (
    DELETE FROM rng_seeds WHERE round_id = ANY ($32::text[]) AND EXISTS (SELECT 1 FROM ok)
), finished AS (
    INSERT INTO finished_rounds (round_id, table_id, operator_id, body)
    SELECT * FROM unnest($33::text[], $34::text[], $35::text[], $36::text[])
    WHERE EXISTS (SELECT 1 FROM ok)
), owed AS (
    INSERT INTO payouts_due (round_id, player, operator_id, amount_minor, evaluated_at, due_at)
    SELECT * FROM unnest($37::text[], $38::text[], $39::text[], $40::bigint[], $41::text[],
                         $42::text[])
    WHERE EXISTS (SELECT 1 FROM ok)
)
SELECT 1 FROM ok"#
);

/// The statement with its parameters: a type of its own, so that diesel prepares it once per
/// connection and reuses it (a `sql_query` is parsed and planned at every execution, which
/// cost more than the round trips it saves).
struct Statement<'a> {
    lease_ms: i64,
    fence: Option<i64>,
    seq: Vec<i64>,
    ts: Vec<String>,
    kind: Vec<&'a str>,
    operator: Vec<Option<&'a str>>,
    table: Vec<Option<&'a str>>,
    round: Vec<Option<&'a str>>,
    bet: Vec<Option<&'a str>>,
    canonical: Vec<&'a [u8]>,
    leaf_hash: Vec<&'a [u8]>,
    log_state: &'a str,
    tag_seq: Vec<i64>,
    tag: Vec<&'static str>,
    tag_value: Vec<String>,
    tile_level: Vec<i32>,
    tile_idx: Vec<i64>,
    tile_hashes: Vec<Vec<u8>>,
    idem_operator: Vec<&'a str>,
    idem_key: Vec<&'a str>,
    idem_hash: Vec<&'a str>,
    idem_status: Vec<i32>,
    idem_body: Vec<&'a str>,
    idem_created: Vec<&'a str>,
    count_operator: Vec<String>,
    count_player: Vec<String>,
    count_day: Vec<i64>,
    count_day_staked: Vec<i64>,
    count_day_net_loss: Vec<i64>,
    count_month: Vec<i64>,
    count_month_staked: Vec<i64>,
    count_month_net_loss: Vec<i64>,
    count_open: Vec<i64>,
    seed_round: Vec<&'a str>,
    seed: Vec<&'a [u8]>,
    revealed: Vec<&'a str>,
    finished_round: Vec<&'a str>,
    finished_table: Vec<&'a str>,
    finished_operator: Vec<&'a str>,
    finished_body: Vec<&'a str>,
    owed_round: Vec<&'a str>,
    owed_player: Vec<&'a str>,
    owed_operator: Vec<&'a str>,
    owed_amount: Vec<i64>,
    owed_evaluated: Vec<String>,
    owed_due: Vec<String>,
}

impl<'a> Statement<'a> {
    fn of(fence: Option<i64>, rows: &BatchRows<'a>) -> Statement<'a> {
        let es = &rows.entries;
        let (tag_seq, tag, tag_value) = multiunzip(super::feed::tag_rows(es));
        let (tile_level, tile_idx, tile_hashes) = multiunzip(crate::store::tiles::stored_rows(
            rows.tile_rows.iter().copied(),
        ));
        let register = derived::merged_register(&rows.derived);
        let revealed: Vec<&str> = rows.revealed.iter().map(|r| r.as_str()).collect();
        let seeds: Vec<_> = rows
            .seeds
            .iter()
            .filter(|(round, _)| !revealed.contains(&round.as_str()))
            .collect();
        let finished: Vec<_> = rows.derived.iter().flat_map(|d| &d.finished).collect();
        let owed: Vec<_> = rows.derived.iter().flat_map(|d| &d.payouts_due).collect();
        let idem = &rows.idempotency;
        let ids = |f: fn(&'a SealedEntry) -> Option<&'a str>| es.iter().map(|e| f(e)).collect();
        let counts = super::register::updates(register.deltas());
        Statement {
            lease_ms: crate::store::lease::duration().as_millis() as i64,
            fence,
            seq: es.iter().map(|e| e.seq as i64).collect(),
            ts: es.iter().map(|e| e.ts.to_string()).collect(),
            kind: es.iter().map(|e| e.kind.as_str()).collect(),
            operator: ids(|e| e.ids.operator.as_deref()),
            table: ids(|e| e.ids.table.as_deref()),
            round: ids(|e| e.ids.round.as_deref()),
            bet: ids(|e| e.ids.bet.as_deref()),
            canonical: es.iter().map(|e| &e.canonical[..]).collect(),
            leaf_hash: es.iter().map(|e| &e.leaf_hash.0[..]).collect(),
            log_state: rows.log_state,
            tag_seq,
            tag,
            tag_value,
            tile_level,
            tile_idx,
            tile_hashes,
            idem_operator: idem.iter().map(|r| r.0).collect(),
            idem_key: idem.iter().map(|r| r.1).collect(),
            idem_hash: idem.iter().map(|r| r.2).collect(),
            idem_status: idem.iter().map(|r| r.3).collect(),
            idem_body: idem.iter().map(|r| r.4).collect(),
            idem_created: idem.iter().map(|r| r.5).collect(),
            count_operator: counts.iter().map(|u| u.operator.to_string()).collect(),
            count_player: counts.iter().map(|u| u.player.to_string()).collect(),
            count_day: counts.iter().map(|u| u.day.0).collect(),
            count_day_staked: counts.iter().map(|u| u.day.1).collect(),
            count_day_net_loss: counts.iter().map(|u| u.day.2).collect(),
            count_month: counts.iter().map(|u| u.month.0).collect(),
            count_month_staked: counts.iter().map(|u| u.month.1).collect(),
            count_month_net_loss: counts.iter().map(|u| u.month.2).collect(),
            count_open: counts.iter().map(|u| u.open_staked).collect(),
            seed_round: seeds.iter().map(|s| s.0.as_str()).collect(),
            seed: seeds.iter().map(|s| &s.1[..]).collect(),
            revealed,
            finished_round: finished.iter().map(|f| f.0.as_str()).collect(),
            finished_table: finished.iter().map(|f| f.1.as_str()).collect(),
            finished_operator: finished.iter().map(|f| f.2.as_str()).collect(),
            finished_body: finished.iter().map(|f| f.3.as_str()).collect(),
            owed_round: owed.iter().map(|(_, d)| d.round.as_str()).collect(),
            owed_player: owed.iter().map(|(_, d)| d.player.as_str()).collect(),
            owed_operator: owed.iter().map(|(o, _)| o.as_str()).collect(),
            owed_amount: owed.iter().map(|(_, d)| d.amount_minor).collect(),
            owed_evaluated: owed.iter().map(|(_, d)| ts(d.evaluated_at)).collect(),
            owed_due: owed.iter().map(|(_, d)| ts(d.due_at)).collect(),
        }
    }

    /// Binds parameter `$n` of [`STATEMENT`].
    fn bind<'b>(&'b self, n: usize, out: &mut AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        match n {
            1 => out.push_bind_param::<BigInt, _>(&self.lease_ms),
            2 => out.push_bind_param::<Nullable<BigInt>, _>(&self.fence),
            3 => out.push_bind_param::<Array<BigInt>, _>(&self.seq),
            4 => out.push_bind_param::<Array<Text>, _>(&self.ts),
            5 => out.push_bind_param::<Array<Text>, _>(&self.kind),
            6 => out.push_bind_param::<Array<Nullable<Text>>, _>(&self.operator),
            7 => out.push_bind_param::<Array<Nullable<Text>>, _>(&self.table),
            8 => out.push_bind_param::<Array<Nullable<Text>>, _>(&self.round),
            9 => out.push_bind_param::<Array<Nullable<Text>>, _>(&self.bet),
            10 => out.push_bind_param::<Array<Bytea>, _>(&self.canonical),
            11 => out.push_bind_param::<Array<Bytea>, _>(&self.leaf_hash),
            12 => out.push_bind_param::<Text, _>(self.log_state),
            13 => out.push_bind_param::<Array<BigInt>, _>(&self.tag_seq),
            14 => out.push_bind_param::<Array<Text>, _>(&self.tag),
            15 => out.push_bind_param::<Array<Text>, _>(&self.tag_value),
            16 => out.push_bind_param::<Array<Integer>, _>(&self.tile_level),
            17 => out.push_bind_param::<Array<BigInt>, _>(&self.tile_idx),
            18 => out.push_bind_param::<Array<Bytea>, _>(&self.tile_hashes),
            19 => out.push_bind_param::<Array<Text>, _>(&self.idem_operator),
            20 => out.push_bind_param::<Array<Text>, _>(&self.idem_key),
            21 => out.push_bind_param::<Array<Text>, _>(&self.idem_hash),
            22 => out.push_bind_param::<Array<Integer>, _>(&self.idem_status),
            23 => out.push_bind_param::<Array<Text>, _>(&self.idem_body),
            24 => out.push_bind_param::<Array<Text>, _>(&self.idem_created),
            25 => out.push_bind_param::<Array<Text>, _>(&self.count_operator),
            26 => out.push_bind_param::<Array<Text>, _>(&self.count_player),
            27 => out.push_bind_param::<Array<BigInt>, _>(&self.count_day),
            28 => out.push_bind_param::<Array<BigInt>, _>(&self.count_day_staked),
            29 => out.push_bind_param::<Array<BigInt>, _>(&self.count_day_net_loss),
            30 => out.push_bind_param::<Array<Text>, _>(&self.seed_round),
            31 => out.push_bind_param::<Array<Bytea>, _>(&self.seed),
            32 => out.push_bind_param::<Array<Text>, _>(&self.revealed),
            33 => out.push_bind_param::<Array<Text>, _>(&self.finished_round),
            34 => out.push_bind_param::<Array<Text>, _>(&self.finished_table),
            35 => out.push_bind_param::<Array<Text>, _>(&self.finished_operator),
            36 => out.push_bind_param::<Array<Text>, _>(&self.finished_body),
            37 => out.push_bind_param::<Array<Text>, _>(&self.owed_round),
            38 => out.push_bind_param::<Array<Text>, _>(&self.owed_player),
            39 => out.push_bind_param::<Array<Text>, _>(&self.owed_operator),
            40 => out.push_bind_param::<Array<BigInt>, _>(&self.owed_amount),
            41 => out.push_bind_param::<Array<Text>, _>(&self.owed_evaluated),
            42 => out.push_bind_param::<Array<Text>, _>(&self.owed_due),
            43 => out.push_bind_param::<Array<BigInt>, _>(&self.count_month),
            44 => out.push_bind_param::<Array<BigInt>, _>(&self.count_month_staked),
            45 => out.push_bind_param::<Array<BigInt>, _>(&self.count_month_net_loss),
            46 => out.push_bind_param::<Array<BigInt>, _>(&self.count_open),
            _ => Err(diesel::result::Error::QueryBuilderError(
                format!("the batch's statement has no parameter ${n}").into(),
            )),
        }
    }
}

/// Three columns of rows.
fn multiunzip<A, B, C>(rows: Vec<(A, B, C)>) -> (Vec<A>, Vec<B>, Vec<C>) {
    let mut out = (
        Vec::with_capacity(rows.len()),
        Vec::with_capacity(rows.len()),
        Vec::with_capacity(rows.len()),
    );
    for (a, b, c) in rows {
        out.0.push(a);
        out.1.push(b);
        out.2.push(c);
    }
    out
}

impl QueryId for Statement<'_> {
    type QueryId = ();
    // Cached by its text, which is the same for every transaction.
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl QueryFragment<Pg> for Statement<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        // The text between the parameters as written, each `$n` bound in its place.
        let mut rest = STATEMENT;
        while let Some(i) = rest.find('$') {
            out.push_sql(&rest[..i]);
            let digits = rest[i + 1..].bytes().take_while(u8::is_ascii_digit).count();
            let n = rest[i + 1..i + 1 + digits].parse().unwrap_or(0);
            self.bind(n, &mut out)?;
            rest = &rest[i + 1 + digits..];
        }
        out.push_sql(rest);
        Ok(())
    }
}

impl RunQueryDsl<diesel::PgConnection> for Statement<'_> {}

/// Writes a transaction's rows ([`fits`] must hold) in one statement that first checks the
/// lease's fencing token `fence`; on its own it is a transaction.
pub(super) fn write(
    c: &mut diesel::PgConnection,
    fence: Option<i64>,
    rows: &BatchRows<'_>,
) -> QueryResult<()> {
    // The statement answers one row when it wrote, none when the lease was not this node's.
    match (Statement::of(fence, rows).execute(c)?, fence) {
        (1, _) => Ok(()),
        (_, Some(token)) => Err(crate::store::lease::taken_over(token)),
        (n, None) => Err(diesel::result::Error::QueryBuilderError(
            format!("the batch's statement answered {n} rows, not 1").into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use diesel::connection::SimpleConnection;
    use diesel::RunQueryDsl;
    use pitboss_audit::entry::{EntryKind, NewEntry, SealedEntry, Timestamp};
    use pitboss_audit::log::Appender;
    use serde_json::json;

    use super::super::committer::{write_rows, BatchRows};
    use super::super::derived::Derived;
    use super::super::payouts::PayoutDue;
    use super::super::register::Writes;
    use crate::store::tiles::TileRow;
    use crate::store::{self, DbConnection};

    /// A schema of its own in the test database (`store::scratch`), with a writer's lease.
    struct Scratch(store::scratch::PgSchema);

    impl Scratch {
        fn new() -> Scratch {
            let schema = store::scratch::PgSchema::new("pb_commit");
            let mut c = schema.conn();
            c.batch_execute(
                "INSERT INTO writer_lease (id, holder, token, expires_at) \
                 VALUES (1, 'this test', 7, now() + interval '1 minute')",
            )
            .expect("lease");
            Scratch(schema)
        }

        fn conn(&self) -> DbConnection {
            self.0.conn()
        }

        /// Every row of the tables the statement writes, as text, sorted.
        fn dump(&self) -> Vec<String> {
            #[derive(diesel::QueryableByName)]
            struct Rows {
                #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
                rows: Option<String>,
            }
            let mut c = self.conn();
            [
                "audit_entries",
                "log_state",
                "audit_entry_tags",
                "merkle_tiles",
                "idempotency",
                "player_usage_by_player",
                "rng_seeds",
                "finished_rounds",
                "payouts_due",
                "writer_lease",
            ]
            .iter()
            .map(|t| {
                let r: Rows = diesel::sql_query(format!(
                    "SELECT string_agg(x::text, ' | ' ORDER BY x::text) AS rows FROM {t} x"
                ))
                .get_result(&mut c)
                .expect("dump");
                // The lease's expiry moves with every write.
                let rows = r.rows.unwrap_or_default();
                let rows = if *t == "writer_lease" {
                    rows.split(',').take(3).collect::<Vec<_>>().join(",")
                } else {
                    rows
                };
                format!("{t}: {rows}")
            })
            .collect()
        }
    }

    fn entries(app: &mut Appender, from: i64, n: i64) -> Vec<SealedEntry> {
        let batch: Vec<NewEntry> = (from..from + n)
            .map(|i| {
                let ts = Timestamp::from_unix_micros(1_767_225_600_000_000 + i).expect("ts");
                let e = NewEntry::new(
                    ts,
                    EntryKind::BetAccepted,
                    json!({"player": format!("p{}", i % 2)}),
                )
                .operator("op")
                .table("t1");
                if i % 2 == 0 {
                    e.round(format!("r{i}"))
                } else {
                    e
                }
            })
            .collect();
        app.seal(batch).expect("seals")
    }

    fn owed(round: &str) -> (String, PayoutDue) {
        let at = chrono::DateTime::parse_from_rfc3339("2026-11-29T12:00:00Z")
            .expect("time")
            .with_timezone(&chrono::Utc);
        (
            "op".into(),
            PayoutDue {
                round: round.into(),
                player: "p0".into(),
                amount_minor: 1_500,
                evaluated_at: at,
                due_at: at + chrono::Duration::days(30),
                paid_at: None,
                wallet_reference: None,
            },
        )
    }

    /// A transaction's entries, tile rows, derived rows, seeds sealed and rounds revealed.
    type Transaction = (
        Vec<SealedEntry>,
        Vec<TileRow>,
        Derived,
        Vec<(String, Vec<u8>)>,
        Vec<String>,
    );

    /// Two transactions' rows: the first seals seeds and counts, the second updates a tile,
    /// adds to the counts, reveals an earlier seed and one it seals itself.
    fn two_transactions(app: &mut Appender) -> [Transaction; 2] {
        let tile = |n: u64| TileRow {
            level: 0,
            idx: 0,
            hashes: (0..n)
                .map(|i| pitboss_audit::leaf_hash(&i.to_le_bytes()))
                .collect(),
        };
        let first = Derived {
            finished: vec![(
                "r0".into(),
                "t1".into(),
                "op".into(),
                "{\"round\":\"r0\"}".into(),
            )],
            payouts_due: vec![owed("r0")],
            register: Writes::counted("op", "p0", "2026-11-29", 100, 40),
            ..Derived::default()
        };
        let second = Derived {
            finished: vec![("r2".into(), "t1".into(), "op".into(), "{}".into())],
            payouts_due: vec![owed("r2")],
            register: Writes::counted("op", "p0", "2026-11-29", 50, -10),
            ..Derived::default()
        };
        [
            (
                entries(app, 0, 3),
                vec![tile(1), tile(3)],
                first,
                vec![("r0".into(), vec![1]), ("r1".into(), vec![2])],
                vec![],
            ),
            (
                entries(app, 3, 2),
                vec![
                    tile(5),
                    TileRow {
                        level: 1,
                        idx: 0,
                        hashes: tile(1).hashes,
                    },
                ],
                second,
                vec![("r3".into(), vec![3]), ("r4".into(), vec![4])],
                vec!["r0".into(), "r3".into()],
            ),
        ]
    }

    /// The one statement leaves the store exactly as the statements of the general path do,
    /// over two transactions (upserts of a tile and of a player's counts, a seed revealed by
    /// a later transaction and one revealed by the transaction that seals it); with the lease
    /// taken over it writes nothing and says so.
    #[test]
    fn one_statement_writes_what_the_statements_write_and_nothing_once_fenced_postgres() {
        let (one, general) = (Scratch::new(), Scratch::new());
        let signer = pitboss_audit::NoteSigner::new(
            "test.example/log",
            pitboss_audit::SigningKey::from_bytes(&[7; 32]),
        )
        .expect("a key name");
        let mut app = Appender::new("test.example/log", std::slice::from_ref(signer.verifier()))
            .expect("origin");
        let txs = two_transactions(&mut app);
        // A second batch in the second transaction: its counts merge with the first's.
        let merged = Derived {
            register: Writes::counted("op", "p0", "2026-11-29", 7, 3),
            ..Derived::default()
        };
        let (mut c1, mut c2) = (one.conn(), general.conn());
        // The writer's settings (generic plans, LZ4), as the committer's connection has them.
        super::super::wal::for_writing(&mut c1).expect("settings");
        for (i, (es, tiles, derived, seeds, revealed)) in txs.iter().enumerate() {
            let created = format!("2026-11-29T12:00:0{i}.000000Z");
            let rows = BatchRows {
                entries: es.iter().collect(),
                log_state: if i == 0 {
                    "{\"size\":3}"
                } else {
                    "{\"size\":5}"
                },
                tile_rows: tiles.iter().collect(),
                derived: if i == 0 {
                    vec![derived]
                } else {
                    vec![derived, &merged]
                },
                idempotency: vec![(
                    "op",
                    if i == 0 { "k0" } else { "k1" },
                    "h",
                    200,
                    "{}",
                    &created,
                )],
                seeds: seeds.iter().collect(),
                revealed: revealed.iter().collect(),
                index: None,
            };
            assert!(super::fits(&rows));
            let DbConnection::Pg(pg) = &mut c1 else {
                panic!("a PostgreSQL connection")
            };
            super::write(pg, Some(7), &rows).expect("one statement");
            diesel::Connection::transaction(&mut c2, |t| write_rows(t, &rows)).expect("statements");
        }
        let (a, b) = (one.dump(), general.dump());
        assert_eq!(a, b);
        assert!(
            a[6].ends_with("(r1,\"\\\\x02\") | (r4,\"\\\\x04\")"),
            "{}",
            a[6]
        );
        assert!(a[5].contains("157,33"), "counts added: {}", a[5]);

        // Another node took the lease over: nothing is written, and the error says why.
        c1.batch_execute("UPDATE writer_lease SET token = 8")
            .expect("take over");
        let es = entries(&mut app, 5, 1);
        let register = Writes::counted("op", "p1", "2026-11-29", 1, 1);
        let d = Derived {
            register,
            ..Derived::default()
        };
        let rows = BatchRows {
            entries: es.iter().collect(),
            log_state: "{}",
            tile_rows: vec![],
            derived: vec![&d],
            idempotency: vec![],
            seeds: vec![],
            revealed: vec![],
            index: None,
        };
        let before = one.dump();
        let DbConnection::Pg(pg) = &mut c1 else {
            panic!("a PostgreSQL connection")
        };
        let e = super::write(pg, Some(7), &rows).expect_err("fenced");
        assert!(e.to_string().contains("taken over"), "{e}");
        assert_eq!(one.dump(), before);
    }

    /// What the one statement does not write sends the transaction the general way.
    #[test]
    fn rows_of_other_kinds_do_not_fit() {
        let d = Derived::default();
        let rows = |index, derived| BatchRows {
            entries: vec![],
            log_state: "{}",
            tile_rows: vec![],
            derived: vec![derived],
            idempotency: vec![],
            seeds: vec![],
            revealed: vec![],
            index,
        };
        assert!(super::fits(&rows(None, &d)));
        assert!(!super::fits(&rows(Some((0, 10)), &d)));
        let snapshot = Derived {
            snapshot: Some((1, "h".into(), vec![])),
            ..Derived::default()
        };
        assert!(!super::fits(&rows(None, &snapshot)));
        let closed = Derived {
            closed: vec![("t".into(), "op".into(), "p".into(), "{}".into())],
            ..Derived::default()
        };
        assert!(!super::fits(&rows(None, &closed)));
    }
}
