//! Storage through diesel: SQLite (bundled, the embedded default) and PostgreSQL behind one
//! connection type, so every query is written once.
//!
//! Only this module talks to the database. The audit log is append-only here: there is no
//! function that updates or deletes an entry.

use std::path::Path;
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::r2d2::Pool;
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};

pub mod entry_index;
pub mod fixed_insert;
pub mod lease;
pub mod schema;
pub mod tiles;
pub mod wal_vfs;

const SQLITE_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/sqlite");
const POSTGRES_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/postgres");

/// One connection to either backend.
#[derive(diesel::MultiConnection)]
pub enum DbConnection {
    Sqlite(diesel::SqliteConnection),
    Pg(diesel::PgConnection),
}

/// Runs `$body` with `$conn` bound to the backend's own connection, so that statements the
/// multi-backend connection type cannot express (multi-row `INSERT`s) are written once.
macro_rules! per_backend {
    ($c:expr, $conn:ident => $body:expr) => {
        match $c {
            $crate::store::DbConnection::Sqlite($conn) => $body,
            $crate::store::DbConnection::Pg($conn) => $body,
        }
    };
}
pub(crate) use per_backend;

/// Rows per multi-row `INSERT`: 9 columns × 1,000 stays far below SQLite's 32,766 and
/// PostgreSQL's 65,535 bound parameters.
pub const ROWS_PER_INSERT: usize = 1_000;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot connect to {url}: {source}")]
    Connect {
        url: String,
        #[source]
        source: diesel::ConnectionError,
    },
    #[error("migrating the database: {0}")]
    Migrate(String),
    #[error("database: {0}")]
    Query(#[from] diesel::result::Error),
    #[error("connection pool: {0}")]
    Pool(String),
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
}

/// Where the data lives: a PostgreSQL URL, or a SQLite file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatabaseUrl {
    Postgres(String),
    Sqlite(String),
}

impl DatabaseUrl {
    pub fn parse(url: &str) -> DatabaseUrl {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            DatabaseUrl::Postgres(url.to_string())
        } else {
            DatabaseUrl::Sqlite(url.strip_prefix("sqlite://").unwrap_or(url).to_string())
        }
    }

    /// The embedded default: `<data_dir>/pitboss.sqlite`.
    pub fn default_in(data_dir: &Path) -> DatabaseUrl {
        DatabaseUrl::Sqlite(
            data_dir
                .join("pitboss.sqlite")
                .to_string_lossy()
                .into_owned(),
        )
    }

    pub fn as_str(&self) -> &str {
        match self {
            DatabaseUrl::Postgres(u) | DatabaseUrl::Sqlite(u) => u,
        }
    }

    pub fn is_sqlite(&self) -> bool {
        matches!(self, DatabaseUrl::Sqlite(_))
    }

    /// The store of one operator's log beside this (the service's) store
    /// (`serve --log-per-operator`): on PostgreSQL a schema of the same database, named by
    /// [`log_namespace`] (the connection's `search_path`, so every query is the one the
    /// service's log runs); on SQLite a file of that name in `logs/` beside this one.
    pub fn for_log(&self, namespace: &str) -> DatabaseUrl {
        match self {
            DatabaseUrl::Postgres(u) => {
                let base = u.split_once(NAMESPACE_MARK).map_or(u.as_str(), |(b, _)| b);
                DatabaseUrl::Postgres(format!("{base}{NAMESPACE_MARK}{namespace}"))
            }
            DatabaseUrl::Sqlite(path) => {
                let dir = Path::new(path).parent().unwrap_or(Path::new("."));
                DatabaseUrl::Sqlite(
                    dir.join("logs")
                        .join(format!("{namespace}.sqlite"))
                        .to_string_lossy()
                        .into_owned(),
                )
            }
        }
    }

    /// A PostgreSQL URL without the log's schema, and that schema (`None`: the service's).
    fn postgres_parts(url: &str) -> (&str, Option<&str>) {
        match url.split_once(NAMESPACE_MARK) {
            Some((base, ns)) => (base, Some(ns)),
            None => (url, None),
        }
    }
}

/// How a PostgreSQL [`DatabaseUrl`] names an operator's log's schema: after the URL, never sent
/// to the server as part of it (libpq would read a `#` as the start of a fragment).
const NAMESPACE_MARK: &str = "#pitboss-log=";

/// The store namespace of an operator's log: `op_` and 20 hex digits of the SHA-256 of the
/// operator id. Operator ids are case-sensitive and up to 64 characters; a PostgreSQL schema
/// name folds case unless quoted and holds at most 63 bytes, and some file systems fold
/// case: a digest is one name on all of them. The operator behind a namespace is in the
/// service's store (`operator_logs`) and in the log's own origin.
pub fn log_namespace(operator: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(operator.as_bytes());
    let hex: String = digest[..10].iter().map(|b| format!("{b:02x}")).collect();
    format!("op_{hex}")
}

/// SQLite settings every connection gets. WAL lets readers run beside the one writer;
/// `synchronous=FULL` makes a commit durable before it returns: a bet is acknowledged only
/// after its log entry is on disk.
///
/// A new database gets 2 KiB pages (SQLite's default is 4 KiB; the setting does nothing to an
/// existing database). Each batch changes a page in each index for nearly every command (the
/// round, table and idempotency-key indexes are ordered by keys the batch's commands spread
/// over), and the WAL takes every changed page whole: half-size pages halve those bytes.
/// Measured in interleaved runs of `bench/loadgen`: 8,933 / 8,190 bets/s against 6,776 /
/// 7,748 with 4 KiB pages, for 5 % more disk per entry (2,330 bytes against 2,220). Log rows
/// (≈ 800 bytes) still fit two to a page; with 1 KiB pages they would take one each.
const SQLITE_PRAGMAS: &str = "PRAGMA page_size = 2048; PRAGMA journal_mode = WAL; \
     PRAGMA synchronous = FULL; PRAGMA busy_timeout = 10000; PRAGMA foreign_keys = ON;";

/// PostgreSQL settings every connection gets. diesel prepares and caches its statements, and
/// after five runs PostgreSQL may plan a cached statement once for any parameters (a generic
/// plan), costed on the table as it was then. Planned on a young, small table, the writer's
/// idempotency lookup (`operator_id = $1 AND idem_key = ANY($2)`) kept a plan that compared
/// the keys with every record of the operator: a lookup that grew with history (16 ms per batch
/// after 15,000 bets). Each statement is planned for its parameters instead.
const PG_SETTINGS: &str = "SET plan_cache_mode = force_custom_plan";

/// The connection `kept` holds, opened first when it holds none (a loop that reads the store
/// again and again keeps one, and drops it after a failed read to open a new one next time).
pub fn connected<'a>(
    url: &DatabaseUrl,
    kept: &'a mut Option<DbConnection>,
) -> Result<&'a mut DbConnection, StoreError> {
    match kept {
        Some(c) => Ok(c),
        None => Ok(kept.insert(connect(url)?)),
    }
}

/// Opens one connection (applying the SQLite pragmas) without migrating.
pub fn connect(url: &DatabaseUrl) -> Result<DbConnection, StoreError> {
    let err = |source| StoreError::Connect {
        url: url.as_str().to_string(),
        source,
    };
    match url {
        DatabaseUrl::Postgres(u) => {
            let (base, namespace) = DatabaseUrl::postgres_parts(u);
            let mut c = diesel::PgConnection::establish(&with_deadlines(base)).map_err(err)?;
            c.batch_execute(PG_SETTINGS)?;
            if let Some(ns) = namespace {
                // Every table of the log is in its schema; nothing is read from `public`.
                c.batch_execute(&format!("SET search_path TO {ns}"))?;
            }
            Ok(DbConnection::Pg(c))
        }
        DatabaseUrl::Sqlite(path) => {
            // The WAL's frames written in pieces of 64 KiB, not two calls a frame
            // (`wal_vfs`); if SQLite refused the VFS, its own (the same files; `register`
            // logs the refusal once).
            let _ = wal_vfs::register();
            let mut c = diesel::SqliteConnection::establish(path).map_err(err)?;
            c.batch_execute(SQLITE_PRAGMAS)?;
            Ok(DbConnection::Sqlite(c))
        }
    }
}

/// Deadlines on every wait of a PostgreSQL connection, added to the URL unless it sets them:
/// connecting gives up after 3 s (`connect_timeout`); data sent and not acknowledged for 5 s
/// breaks the connection (`tcp_user_timeout`), as do 3 unanswered keepalives over an idle
/// wait (after 5 s, then every 2 s); a statement runs at most 30 s, and a transaction left
/// idle is ended after 60 s (`options`). A wait on a database that is gone thus ends in an
/// error the writer handles (503, reconnect), never in a hang.
pub fn with_deadlines(url: &str) -> String {
    const PARAMS: &[(&str, &str)] = &[
        ("connect_timeout", "3"),
        ("tcp_user_timeout", "5000"),
        ("keepalives", "1"),
        ("keepalives_idle", "5"),
        ("keepalives_interval", "2"),
        ("keepalives_count", "3"),
        (
            "options",
            "-c%20statement_timeout%3D30000%20-c%20idle_in_transaction_session_timeout%3D60000",
        ),
    ];
    let query = url.split_once('?').map_or("", |(_, q)| q);
    let given: Vec<&str> = query
        .split('&')
        .filter_map(|kv| kv.split('=').next())
        .collect();
    let mut out = url.to_string();
    for (k, v) in PARAMS {
        if !given.contains(k) {
            out.push(if out.contains('?') { '&' } else { '?' });
            out.push_str(k);
            out.push('=');
            out.push_str(v);
        }
    }
    out
}

/// Applies every pending migration; returns how many ran.
///
/// On PostgreSQL several nodes may start at once on a new database: each migration runs in a
/// transaction, so a node that loses the race for one fails it (the table exists) and tries
/// again, finding it applied (up to twenty attempts, 300 ms apart).
pub fn migrate(url: &DatabaseUrl) -> Result<usize, StoreError> {
    let attempts = if url.is_sqlite() { 1 } else { 20 };
    let mut tried = 0;
    loop {
        tried += 1;
        match migrate_once(url) {
            Err(StoreError::Migrate(e)) if tried < attempts => {
                tracing::warn!(error = %e, "a migration failed; another node may be running it: trying again");
                std::thread::sleep(std::time::Duration::from_millis(300));
            }
            other => return other,
        }
    }
}

fn migrate_once(url: &DatabaseUrl) -> Result<usize, StoreError> {
    // An operator's log's schema, or its file's directory, is made with its first migration.
    match url {
        DatabaseUrl::Postgres(u) => {
            if let (base, Some(ns)) = DatabaseUrl::postgres_parts(u) {
                let mut c = connect(&DatabaseUrl::Postgres(base.to_string()))?;
                c.batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {ns}"))
                    .map_err(|e| StoreError::Migrate(e.to_string()))?;
            }
        }
        DatabaseUrl::Sqlite(path) => {
            if let Some(dir) = Path::new(path)
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
            {
                std::fs::create_dir_all(dir)
                    .map_err(|e| StoreError::Migrate(format!("{}: {e}", dir.display())))?;
            }
        }
    }
    let mut conn = connect(url)?;
    let ran = match &mut conn {
        DbConnection::Sqlite(c) => c.run_pending_migrations(SQLITE_MIGRATIONS).map(|v| v.len()),
        DbConnection::Pg(c) => c
            .run_pending_migrations(POSTGRES_MIGRATIONS)
            .map(|v| v.len()),
    }
    .map_err(|e| StoreError::Migrate(e.to_string()))?;
    Ok(ran)
}

/// Opens pool connections through [`connect`], so the backend is chosen by the URL's form and
/// never guessed.
#[derive(Debug, Clone)]
pub struct Manager(DatabaseUrl);

impl diesel::r2d2::ManageConnection for Manager {
    type Connection = DbConnection;
    type Error = StoreError;

    fn connect(&self) -> Result<DbConnection, StoreError> {
        connect(&self.0)
    }

    fn is_valid(&self, conn: &mut DbConnection) -> Result<(), StoreError> {
        conn.batch_execute("SELECT 1").map_err(StoreError::Query)
    }

    fn has_broken(&self, _conn: &mut DbConnection) -> bool {
        false
    }
}

pub type ReadPool = Pool<Manager>;

/// A small pool of connections for readers (the single writer has its own connection).
pub fn read_pool(url: &DatabaseUrl, size: u32) -> Result<ReadPool, StoreError> {
    Pool::builder()
        .max_size(size)
        // A reader waits at most this long for a connection (while the database is gone, a
        // request answers 503 within it rather than hanging).
        .connection_timeout(Duration::from_secs(3))
        .build(Manager(url.clone()))
        .map_err(|e| StoreError::Pool(e.to_string()))
}

/// A pool that connects on first use (a standby's reads, or a read replica that may not be up
/// when the node starts): a reader waits at most 3 s for a connection, as with [`read_pool`].
/// A connection unused for [`LAZY_IDLE`] is closed, and every such pool of the process shares
/// one pair of timer threads (r2d2 starts three per pool otherwise: with a log per operator,
/// three per operator's log).
pub fn lazy_read_pool(url: &DatabaseUrl, size: u32) -> ReadPool {
    lazy_read_pool_idle(url, size, LAZY_IDLE)
}

/// How long a lazy pool keeps a connection nobody uses.
pub const LAZY_IDLE: Duration = Duration::from_secs(60);

/// [`lazy_read_pool`], closing a connection unused for `idle` (r2d2 looks every 30 s).
pub fn lazy_read_pool_idle(url: &DatabaseUrl, size: u32, idle: Duration) -> ReadPool {
    static TIMERS: std::sync::OnceLock<std::sync::Arc<scheduled_thread_pool::ScheduledThreadPool>> =
        std::sync::OnceLock::new();
    let timers = TIMERS.get_or_init(|| {
        std::sync::Arc::new(
            scheduled_thread_pool::ScheduledThreadPool::builder()
                .num_threads(2)
                .thread_name_pattern("pitboss-pools-{}")
                .build(),
        )
    });
    Pool::builder()
        .max_size(size)
        .min_idle(Some(0))
        .connection_timeout(Duration::from_secs(3))
        .idle_timeout(Some(idle))
        .thread_pool(timers.clone())
        .build_unchecked(Manager(url.clone()))
}

/// Stores of their own for unit tests.
#[cfg(test)]
pub(crate) mod scratch {
    use super::{connect, migrate, DatabaseUrl, DbConnection};
    use diesel::connection::SimpleConnection;

    /// A schema of its own in the test database (`PITBOSS_TEST_PG`, else the local server's
    /// `test`), migrated; dropped at the end.
    pub struct PgSchema {
        pub url: DatabaseUrl,
        name: String,
    }

    impl PgSchema {
        pub fn new(prefix: &str) -> PgSchema {
            let base = std::env::var("PITBOSS_TEST_PG")
                .unwrap_or_else(|_| "postgres://127.0.0.1:5432/test".into());
            let name = {
                use std::hash::{BuildHasher, Hasher};
                let mut h = std::collections::hash_map::RandomState::new().build_hasher();
                h.write_u8(0);
                format!("{prefix}_{:016x}", h.finish())
            };
            let url = DatabaseUrl::Postgres(base).for_log(&name);
            migrate(&url).expect("PostgreSQL must be running for the tests (.ci/run)");
            PgSchema { url, name }
        }

        pub fn conn(&self) -> DbConnection {
            connect(&self.url).expect("connect")
        }
    }

    impl Drop for PgSchema {
        fn drop(&mut self) {
            if let Ok(mut c) = connect(&self.url) {
                let _ = c.batch_execute(&format!("DROP SCHEMA {} CASCADE", self.name));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A new SQLite store has 2 KiB pages; a store made with 4 KiB pages keeps them.
    #[test]
    fn new_sqlite_stores_get_2_kib_pages_and_old_ones_keep_theirs() {
        #[derive(QueryableByName)]
        struct PageSize {
            #[diesel(sql_type = diesel::sql_types::Integer)]
            page_size: i32,
        }
        let page_size = |c: &mut DbConnection| {
            diesel::sql_query("PRAGMA page_size")
                .get_result::<PageSize>(c)
                .expect("page size")
                .page_size
        };
        let dir = tempfile::tempdir().expect("temp dir");
        let new = DatabaseUrl::Sqlite(dir.path().join("new.sqlite").display().to_string());
        migrate(&new).expect("migrate");
        assert_eq!(page_size(&mut connect(&new).expect("connect")), 2048);
        let old_path = dir.path().join("old.sqlite");
        let mut c =
            diesel::SqliteConnection::establish(old_path.to_str().expect("utf-8")).expect("open");
        c.batch_execute("PRAGMA page_size = 4096; PRAGMA journal_mode = WAL; CREATE TABLE t (x)")
            .expect("an older store");
        drop(c);
        let old = DatabaseUrl::Sqlite(old_path.display().to_string());
        migrate(&old).expect("migrate");
        assert_eq!(page_size(&mut connect(&old).expect("connect")), 4096);
    }

    /// A new SQLite store at `path` with every migration run before the one whose name ends
    /// with `name`.
    fn migrated_before(path: &Path, name: &str) -> diesel::SqliteConnection {
        let mut c =
            diesel::SqliteConnection::establish(path.to_str().expect("utf-8")).expect("open");
        c.batch_execute(SQLITE_PRAGMAS).expect("pragmas");
        loop {
            let next = c
                .pending_migrations(SQLITE_MIGRATIONS)
                .expect("pending")
                .into_iter()
                .next()
                .expect("the migration is pending");
            if next.name().to_string().ends_with(name) {
                return c;
            }
            c.run_next_migration(SQLITE_MIGRATIONS).expect("migrate");
        }
    }

    /// A SQLite store written with a row a player and period keeps each player's latest day
    /// and month, and his open stakes, in his one row.
    #[test]
    fn sqlite_player_usage_moves_to_a_row_a_player() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut c = migrated_before(
            &dir.path().join("pitboss.sqlite"),
            "_player_usage_by_player",
        );
        c.batch_execute(
            "INSERT INTO player_usage VALUES \
             ('op', 'a', '2026-11-29', 10, 1, 0, 0), \
             ('op', 'a', '2026-11-30', 20, 2, 3, 4), \
             ('op', 'a', '2026-10', 99, 9, 9, 9), \
             ('op', 'a', '2026-11', 30, 3, 5, 6), \
             ('op', 'a', 'open', 40, 0, 0, 0), \
             ('op', 'b', 'open', 7, 0, 0, 0), \
             ('op2', 'a', '2026-11', 1, 1, 1, 1)",
        )
        .expect("usage of the old layout");
        c.run_pending_migrations(SQLITE_MIGRATIONS)
            .expect("the remaining migrations");
        use schema::player_usage_by_player as u;
        type Day = (String, String, i64, i64, i64, i64, i64);
        type Month = (String, String, i64, i64, i64, i64, i64, i64);
        let days: Vec<Day> = u::table
            .order((u::operator_id, u::player))
            .select((
                u::operator_id,
                u::player,
                u::day_period,
                u::day_staked_minor,
                u::day_net_loss_minor,
                u::day_reported_staked_minor,
                u::day_reported_net_loss_minor,
            ))
            .load(&mut c)
            .expect("read");
        let months: Vec<Month> = u::table
            .order((u::operator_id, u::player))
            .select((
                u::operator_id,
                u::player,
                u::month_period,
                u::month_staked_minor,
                u::month_net_loss_minor,
                u::month_reported_staked_minor,
                u::month_reported_net_loss_minor,
                u::open_staked_minor,
            ))
            .load(&mut c)
            .expect("read");
        let s = |x: &str| x.to_string();
        assert_eq!(
            days,
            [
                (s("op"), s("a"), 20261130, 20, 2, 3, 4),
                (s("op"), s("b"), 0, 0, 0, 0, 0),
                (s("op2"), s("a"), 0, 0, 0, 0, 0),
            ]
        );
        assert_eq!(
            months,
            [
                (s("op"), s("a"), 202611, 30, 3, 5, 6, 40),
                (s("op"), s("b"), 0, 0, 0, 0, 0, 7),
                (s("op2"), s("a"), 202611, 1, 1, 1, 1, 0),
            ]
        );
    }

    /// A SQLite store written before idempotency records became a rowid table keeps every
    /// record through the migration, and the key still finds one record only.
    #[test]
    fn sqlite_idempotency_records_survive_their_move_to_a_rowid_table() {
        #[derive(QueryableByName)]
        struct Sql {
            #[diesel(sql_type = diesel::sql_types::Text)]
            sql: String,
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let mut c = migrated_before(&dir.path().join("pitboss.sqlite"), "_idempotency_rowid");
        c.batch_execute(
            "INSERT INTO idempotency VALUES \
             ('op1', 'k2', 'h2', 200, '{\"b\":2}', '2026-11-26T10:00:01Z'), \
             ('op1', 'k1', 'h1', 409, '{\"b\":1}', '2026-11-26T10:00:00Z'), \
             ('op2', 'k1', 'h3', 200, '{\"b\":3}', '2026-11-26T10:00:02Z')",
        )
        .expect("records of the old layout");
        c.run_pending_migrations(SQLITE_MIGRATIONS)
            .expect("the remaining migrations");
        let rows: Vec<(String, String, String, i32, String, String)> = c
            .transaction(|t| {
                schema::idempotency::table
                    .order((
                        schema::idempotency::operator_id,
                        schema::idempotency::idem_key,
                    ))
                    .load(t)
            })
            .expect("read");
        let rows: Vec<_> = rows
            .iter()
            .map(|(o, k, h, s, b, _)| (o.as_str(), k.as_str(), h.as_str(), *s, b.as_str()))
            .collect();
        assert_eq!(
            rows,
            [
                ("op1", "k1", "h1", 409, "{\"b\":1}"),
                ("op1", "k2", "h2", 200, "{\"b\":2}"),
                ("op2", "k1", "h3", 200, "{\"b\":3}"),
            ]
        );
        let table: Sql = diesel::sql_query(
            "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'idempotency'",
        )
        .get_result(&mut c)
        .expect("schema");
        assert!(!table.sql.contains("WITHOUT ROWID"), "{}", table.sql);
        let again = c.batch_execute(
            "INSERT INTO idempotency VALUES ('op1', 'k1', 'h9', 200, '{}', '2026-11-26T11:00:00Z')",
        );
        assert!(again.is_err(), "a second record under one key was taken");
    }

    #[test]
    fn postgres_urls_get_deadlines_unless_they_set_their_own() {
        let u = with_deadlines("postgres://127.0.0.1:5432/test");
        assert!(u.starts_with("postgres://127.0.0.1:5432/test?connect_timeout=3&"));
        assert!(u.contains("&tcp_user_timeout=5000&"));
        assert!(u.contains("statement_timeout%3D30000"));
        let u = with_deadlines("postgres://h/db?connect_timeout=10&sslmode=require");
        assert!(
            u.starts_with("postgres://h/db?connect_timeout=10&sslmode=require&tcp_user_timeout=")
        );
        assert_eq!(u.matches("connect_timeout").count(), 1);
    }
}
