//! One writer per log. A second `pitboss serve` on the same database would append entries
//! with the same `seq` as the first (and fork the chain, were it not for the primary key):
//! it must refuse to start, naming who holds the log.
//!
//! - **SQLite**: an exclusive lock (`flock`) on `<database>.lock`, held for the process's
//!   life; the kernel releases it when the process ends, however it ends. The file says who
//!   holds it.
//! - **PostgreSQL**: a lease row (`writer_lease`) with a fencing token, renewed while the
//!   writer runs and checked in every batch's transaction, so a writer whose lease another node
//!   has taken over can no longer commit. A lease runs out [`LEASE`] after its last renewal; a
//!   lease whose holder is a process of this host that no longer exists is taken over at once
//!   (a restart after a crash need not wait). Only plain SQL (no advisory locks): the several-
//!   node design builds on the same row.

use std::io::{Read, Seek, Write};
use std::time::Duration;

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bool, Text};

use super::{DatabaseUrl, DbConnection};

/// How long a PostgreSQL lease lasts after its last renewal.
pub const LEASE: Duration = Duration::from_secs(15);

/// What the writer holds while it runs.
#[derive(Debug)]
pub enum WriterGuard {
    /// The locked file (the lock goes with the descriptor).
    File(std::fs::File),
    Lease {
        token: i64,
    },
}

/// Who this process is, as a holder: `pid N on HOST since TIME`.
fn me() -> String {
    format!(
        "pid {} on {} since {}",
        std::process::id(),
        hostname(),
        chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    )
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown-host".into())
}

/// Whether `holder` (as [`me`] writes it) is a process of this host that no longer exists.
fn holder_is_gone(holder: &str) -> bool {
    let mut words = holder.split_whitespace();
    let (Some("pid"), Some(pid), Some("on"), Some(host)) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        return false;
    };
    host == hostname()
        && pid.parse::<u32>().is_ok()
        && !std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// Takes the log's writer lock or lease, or says who holds it.
pub fn acquire(url: &DatabaseUrl, conn: &mut DbConnection) -> Result<WriterGuard, String> {
    match url {
        DatabaseUrl::Sqlite(path) => lock_file(path),
        DatabaseUrl::Postgres(_) => take_lease(conn),
    }
}

fn lock_file(db: &str) -> Result<WriterGuard, String> {
    let path = format!("{db}.lock");
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| format!("{path}: {e}"))?;
    match f.try_lock() {
        Ok(()) => {
            let _ = f.set_len(0);
            let _ = f.rewind();
            let _ = writeln!(f, "{}", me());
            let _ = f.flush();
            Ok(WriterGuard::File(f))
        }
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = f.read_to_string(&mut holder);
            Err(format!(
                "{db} is being written by another pitboss serve ({}); one writer per database: \
                 stop that one first, or give this one its own --data-dir",
                holder.trim()
            ))
        }
        Err(std::fs::TryLockError::Error(e)) => Err(format!("locking {path}: {e}")),
    }
}

#[derive(QueryableByName)]
struct Row {
    #[diesel(sql_type = Text)]
    holder: String,
    #[diesel(sql_type = BigInt)]
    token: i64,
    #[diesel(sql_type = Bool)]
    live: bool,
}

enum LeaseError {
    Db(diesel::result::Error),
    Held(String),
}

impl From<diesel::result::Error> for LeaseError {
    fn from(e: diesel::result::Error) -> Self {
        LeaseError::Db(e)
    }
}

fn take_lease(conn: &mut DbConnection) -> Result<WriterGuard, String> {
    let secs = LEASE.as_secs() as i64;
    let me = me();
    let taken = conn.transaction::<_, LeaseError, _>(|c| {
        let rows: Vec<Row> = diesel::sql_query(
            "SELECT holder, token, expires_at > now() AS live FROM writer_lease WHERE id = 1 FOR UPDATE",
        )
        .load(c)?;
        let token = match rows.first() {
            None => {
                diesel::sql_query(
                    "INSERT INTO writer_lease (id, holder, token, expires_at) \
                     VALUES (1, $1, 1, now() + make_interval(secs => $2))",
                )
                .bind::<Text, _>(&me)
                .bind::<BigInt, _>(secs)
                .execute(c)?;
                1
            }
            Some(r) if r.live && !holder_is_gone(&r.holder) => {
                return Err(LeaseError::Held(format!(
                    "this database's log is being written by another pitboss serve ({}, lease \
                     token {}); one writer per log: stop that one first, or wait until its lease \
                     runs out ({} s after its last renewal)",
                    r.holder,
                    r.token,
                    LEASE.as_secs()
                )));
            }
            Some(r) => {
                let token = r.token + 1;
                diesel::sql_query(
                    "UPDATE writer_lease SET holder = $1, token = $2, \
                     expires_at = now() + make_interval(secs => $3) WHERE id = 1",
                )
                .bind::<Text, _>(&me)
                .bind::<BigInt, _>(token)
                .bind::<BigInt, _>(secs)
                .execute(c)?;
                token
            }
        };
        Ok(WriterGuard::Lease { token })
    });
    taken.map_err(|e| match e {
        LeaseError::Db(e) => format!("taking the writer's lease: {e}"),
        LeaseError::Held(m) => m,
    })
}

/// Renews the lease and checks that it is still this writer's (inside a batch's transaction
/// this is the fencing check: a writer whose lease was taken over commits nothing). Nothing
/// to do for a file lock.
pub fn renew(guard: &WriterGuard, c: &mut DbConnection) -> Result<(), diesel::result::Error> {
    renew_token(guard.token(), c)
}

impl WriterGuard {
    /// The lease's fencing token (PostgreSQL); none for a file lock.
    pub fn token(&self) -> Option<i64> {
        match self {
            WriterGuard::File(_) => None,
            WriterGuard::Lease { token } => Some(*token),
        }
    }
}

/// [`renew`] for a connection other than the one that holds the guard (the committer's):
/// the fencing token is all it needs.
pub fn renew_token(token: Option<i64>, c: &mut DbConnection) -> Result<(), diesel::result::Error> {
    let Some(token) = token.as_ref() else {
        return Ok(());
    };
    let n = diesel::sql_query(
        "UPDATE writer_lease SET expires_at = now() + make_interval(secs => $1) \
         WHERE id = 1 AND token = $2",
    )
    .bind::<BigInt, _>(LEASE.as_secs() as i64)
    .bind::<BigInt, _>(*token)
    .execute(c)?;
    if n == 1 {
        Ok(())
    } else {
        Err(diesel::result::Error::QueryBuilderError(
            format!(
                "the writer's lease (token {token}) was taken over by another node: this node \
                 no longer writes the log"
            )
            .into(),
        ))
    }
}
