//! The witness's store: a SQLite file of its own (diesel, `synchronous=FULL`), on the machine of
//! whoever runs the witness, never the service's database.
//!
//! SQLite because it is already compiled into pitboss, needs no server, and gives what a witness
//! must have: the check of the last cosigned size and the write of the new one in one
//! transaction (`BEGIN IMMEDIATE`: two requests for one log cannot both pass the check, the
//! rollback race of the tlog-witness spec), durable before the answer, and evidence that can be
//! queried. Every wait on it is bounded (pool and busy timeouts).

use std::path::Path;
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::r2d2::{ConnectionManager, CustomizeConnection, Pool};
use diesel::sqlite::SqliteConnection;
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};
use serde::Serialize;

const MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/witness");

/// Longest wait for a connection or for SQLite's write lock.
pub const WAIT: Duration = Duration::from_secs(5);

/// Most evidence rows kept per origin: only a holder of the log's key can produce evidence,
/// and the first rows already prove the misbehaviour; later ones are counted, not kept.
pub const MAX_EVIDENCE_PER_ORIGIN: i64 = 1_000;

mod schema {
    diesel::table! {
        witness_meta (key) {
            key -> Text,
            value -> Text,
        }
    }

    diesel::table! {
        witness_cosigned (origin, size) {
            origin -> Text,
            size -> BigInt,
            root -> Binary,
            note -> Text,
            cosigned_at -> Text,
        }
    }

    diesel::table! {
        witness_evidence (id) {
            id -> BigInt,
            origin -> Text,
            recorded_at -> Text,
            kind -> Text,
            detail -> Text,
            witnessed_size -> Nullable<BigInt>,
            witnessed_note -> Nullable<Text>,
            submitted_old_size -> BigInt,
            submitted_proof -> Text,
            submitted_note -> Text,
        }
    }
}

use schema::{witness_cosigned, witness_evidence, witness_meta};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("witness store {path}: {detail}")]
    Open { path: String, detail: String },
    #[error("witness store: {0}")]
    Query(#[from] diesel::result::Error),
    #[error("witness store busy: {0}")]
    Pool(String),
    #[error("witness store holds a bad value: {0}")]
    Corrupt(String),
}

/// A checkpoint the witness cosigned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cosigned {
    pub origin: String,
    pub size: u64,
    pub root: [u8; 32],
    /// The note with the witness's cosignature line.
    pub note: String,
    pub cosigned_at: String,
}

/// A refused, conflicting checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Evidence {
    pub id: i64,
    pub origin: String,
    pub recorded_at: String,
    /// `fork` (another root at a size the witness cosigned), `inconsistent` (the proof from
    /// the last cosigned size does not verify) or `rollback` (smaller than the last cosigned).
    pub kind: String,
    pub detail: String,
    /// What the witness had cosigned it conflicts with.
    pub witnessed_size: Option<i64>,
    pub witnessed_note: Option<String>,
    /// What was submitted: the `old` line, the proof lines (base64) and the checkpoint note.
    pub submitted_old_size: i64,
    pub submitted_proof: Vec<String>,
    pub submitted_note: String,
}

/// Evidence to record.
#[derive(Debug, Clone)]
pub struct NewEvidence {
    pub origin: String,
    pub kind: &'static str,
    pub detail: String,
    pub witnessed: Option<Cosigned>,
    pub submitted_old_size: u64,
    pub submitted_proof: Vec<String>,
    pub submitted_note: String,
}

#[derive(Debug, Clone, Copy)]
struct Pragmas;

impl CustomizeConnection<SqliteConnection, diesel::r2d2::Error> for Pragmas {
    fn on_acquire(&self, c: &mut SqliteConnection) -> Result<(), diesel::r2d2::Error> {
        // FULL: a cosignature is answered only once the size it commits to is on disk.
        c.batch_execute(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000;",
        )
        .map_err(diesel::r2d2::Error::QueryError)
    }
}

/// The witness's store.
#[derive(Clone)]
pub struct Store {
    pool: Pool<ConnectionManager<SqliteConnection>>,
}

fn size_i64(size: u64) -> Result<i64, StoreError> {
    i64::try_from(size).map_err(|_| StoreError::Corrupt(format!("size {size} above 2^63")))
}

impl Store {
    /// Opens (creating and migrating) the store at `path`.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let open_err = |detail: String| StoreError::Open {
            path: path.display().to_string(),
            detail,
        };
        let url = path.to_string_lossy().into_owned();
        let pool = Pool::builder()
            .max_size(4)
            .connection_timeout(WAIT)
            .connection_customizer(Box::new(Pragmas))
            .build(ConnectionManager::<SqliteConnection>::new(url))
            .map_err(|e| open_err(e.to_string()))?;
        let store = Store { pool };
        let mut c = store.conn()?;
        c.run_pending_migrations(MIGRATIONS)
            .map_err(|e| open_err(e.to_string()))?;
        Ok(store)
    }

    fn conn(
        &self,
    ) -> Result<diesel::r2d2::PooledConnection<ConnectionManager<SqliteConnection>>, StoreError>
    {
        self.pool.get().map_err(|e| StoreError::Pool(e.to_string()))
    }

    /// The witness's name as fixed at its first start.
    pub fn name(&self) -> Result<Option<String>, StoreError> {
        Ok(witness_meta::table
            .filter(witness_meta::key.eq("name"))
            .select(witness_meta::value)
            .first(&mut self.conn()?)
            .optional()?)
    }

    pub fn set_name(&self, name: &str) -> Result<(), StoreError> {
        diesel::insert_into(witness_meta::table)
            .values((witness_meta::key.eq("name"), witness_meta::value.eq(name)))
            .execute(&mut self.conn()?)?;
        Ok(())
    }

    /// Runs `f` in one `BEGIN IMMEDIATE` transaction: it holds the write lock from its first
    /// read, so a check and the write that depends on it cannot interleave with another's.
    pub fn immediate<T, E>(&self, f: impl FnOnce(&mut Tx<'_>) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError> + From<diesel::result::Error>,
    {
        let mut c = self.conn()?;
        c.immediate_transaction(|conn| f(&mut Tx { conn }))
    }

    /// The last checkpoint cosigned for `origin`.
    pub fn latest(&self, origin: &str) -> Result<Option<Cosigned>, StoreError> {
        let mut c = self.conn()?;
        Tx { conn: &mut c }.latest(origin)
    }

    /// Evidence after id `after` (oldest first), for one origin or all, at most `limit`.
    pub fn evidence(
        &self,
        origin: Option<&str>,
        after: i64,
        limit: i64,
    ) -> Result<Vec<Evidence>, StoreError> {
        type Row = (
            i64,
            String,
            String,
            String,
            String,
            Option<i64>,
            Option<String>,
            i64,
            String,
            String,
        );
        let mut q = witness_evidence::table
            .filter(witness_evidence::id.gt(after))
            .order(witness_evidence::id.asc())
            .limit(limit)
            .into_boxed();
        if let Some(o) = origin {
            q = q.filter(witness_evidence::origin.eq(o.to_owned()));
        }
        let rows: Vec<Row> = q
            .select((
                witness_evidence::id,
                witness_evidence::origin,
                witness_evidence::recorded_at,
                witness_evidence::kind,
                witness_evidence::detail,
                witness_evidence::witnessed_size,
                witness_evidence::witnessed_note,
                witness_evidence::submitted_old_size,
                witness_evidence::submitted_proof,
                witness_evidence::submitted_note,
            ))
            .load(&mut self.conn()?)?;
        Ok(rows
            .into_iter()
            .map(|r| Evidence {
                id: r.0,
                origin: r.1,
                recorded_at: r.2,
                kind: r.3,
                detail: r.4,
                witnessed_size: r.5,
                witnessed_note: r.6,
                submitted_old_size: r.7,
                submitted_proof: r.8.lines().map(str::to_owned).collect(),
                submitted_note: r.9,
            })
            .collect())
    }
}

/// Queries inside one transaction.
pub struct Tx<'c> {
    conn: &'c mut SqliteConnection,
}

type CosignedRow = (String, i64, Vec<u8>, String, String);

fn cosigned_of(r: CosignedRow) -> Result<Cosigned, StoreError> {
    Ok(Cosigned {
        size: u64::try_from(r.1).map_err(|_| StoreError::Corrupt(format!("size {}", r.1)))?,
        root: r
            .2
            .try_into()
            .map_err(|_| StoreError::Corrupt(format!("root of {} at {}", r.0, r.1)))?,
        origin: r.0,
        note: r.3,
        cosigned_at: r.4,
    })
}

impl Tx<'_> {
    pub fn latest(&mut self, origin: &str) -> Result<Option<Cosigned>, StoreError> {
        witness_cosigned::table
            .filter(witness_cosigned::origin.eq(origin))
            .order(witness_cosigned::size.desc())
            .select((
                witness_cosigned::origin,
                witness_cosigned::size,
                witness_cosigned::root,
                witness_cosigned::note,
                witness_cosigned::cosigned_at,
            ))
            .first::<CosignedRow>(self.conn)
            .optional()?
            .map(cosigned_of)
            .transpose()
    }

    pub fn at_size(&mut self, origin: &str, size: u64) -> Result<Option<Cosigned>, StoreError> {
        witness_cosigned::table
            .filter(witness_cosigned::origin.eq(origin))
            .filter(witness_cosigned::size.eq(size_i64(size)?))
            .select((
                witness_cosigned::origin,
                witness_cosigned::size,
                witness_cosigned::root,
                witness_cosigned::note,
                witness_cosigned::cosigned_at,
            ))
            .first::<CosignedRow>(self.conn)
            .optional()?
            .map(cosigned_of)
            .transpose()
    }

    /// Records a cosigned checkpoint (a repeat of one already recorded changes nothing).
    pub fn insert_cosigned(&mut self, c: &Cosigned) -> Result<(), StoreError> {
        diesel::insert_or_ignore_into(witness_cosigned::table)
            .values((
                witness_cosigned::origin.eq(&c.origin),
                witness_cosigned::size.eq(size_i64(c.size)?),
                witness_cosigned::root.eq(c.root.to_vec()),
                witness_cosigned::note.eq(&c.note),
                witness_cosigned::cosigned_at.eq(&c.cosigned_at),
            ))
            .execute(self.conn)?;
        Ok(())
    }

    /// Records evidence; returns its id, or `None` when the origin's evidence is full.
    pub fn insert_evidence(
        &mut self,
        e: &NewEvidence,
        recorded_at: &str,
    ) -> Result<Option<i64>, StoreError> {
        let held: i64 = witness_evidence::table
            .filter(witness_evidence::origin.eq(&e.origin))
            .count()
            .get_result(self.conn)?;
        if held >= MAX_EVIDENCE_PER_ORIGIN {
            return Ok(None);
        }
        // Ids are assigned here, inside the write transaction, not by the database.
        let last: Option<i64> = witness_evidence::table
            .select(diesel::dsl::max(witness_evidence::id))
            .first(self.conn)?;
        let id = last.unwrap_or(0) + 1;
        diesel::insert_into(witness_evidence::table)
            .values((
                witness_evidence::id.eq(id),
                witness_evidence::origin.eq(&e.origin),
                witness_evidence::recorded_at.eq(recorded_at),
                witness_evidence::kind.eq(e.kind),
                witness_evidence::detail.eq(&e.detail),
                witness_evidence::witnessed_size.eq(e
                    .witnessed
                    .as_ref()
                    .map(|w| size_i64(w.size))
                    .transpose()?),
                witness_evidence::witnessed_note.eq(e.witnessed.as_ref().map(|w| w.note.clone())),
                witness_evidence::submitted_old_size.eq(size_i64(e.submitted_old_size)?),
                witness_evidence::submitted_proof.eq(e.submitted_proof.join("\n")),
                witness_evidence::submitted_note.eq(&e.submitted_note),
            ))
            .execute(self.conn)?;
        Ok(Some(id))
    }
}
