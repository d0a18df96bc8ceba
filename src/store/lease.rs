//! One writer per log. A second `pitboss serve` on the same database would append entries
//! with the same `seq` as the first (and fork the chain, were it not for the primary key):
//! it must refuse to start, naming who holds the log.
//!
//! - **SQLite**: an exclusive lock (`flock`) on `<database>.lock`, held for the process's
//!   life; the kernel releases it when the process ends, however it ends. The file says who
//!   holds it.
//! - **PostgreSQL**: a lease row (`writer_lease`) with a fencing token, renewed while the
//!   writer runs and checked in every batch's transaction, so a writer whose lease another node
//!   has taken over can no longer commit. A lease runs out [`duration`] after its last renewal; a
//!   lease whose holder is a process of this host that no longer exists is taken over at once
//!   (a restart after a crash need not wait). Only plain SQL (no advisory locks).
//!
//! Several nodes on one PostgreSQL (`serve --node-url`): the holder writes where the others
//! reach it (`address`); a node that finds the lease held waits as a standby, forwarding
//! requests to that address ([`peek`]), and takes the lease over once it has run out.

use std::io::{Read, Seek, Write};
use std::time::Duration;

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bool, Text};

use super::{DatabaseUrl, DbConnection};

/// How long a PostgreSQL lease lasts after its last renewal, unless configured
/// ([`set_duration`], `serve --lease-ms`): a standby takes a dead writer's log over this long
/// after the writer's last renewal (at once when the holder was a process of the same host).
pub const DEFAULT_LEASE: Duration = Duration::from_secs(3);

static LEASE: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();

/// Sets the lease's duration for this process (once, before the writer starts; later calls
/// are ignored).
pub fn set_duration(d: Duration) {
    let _ = LEASE.set(d.max(Duration::from_millis(300)));
}

/// The lease's duration ([`DEFAULT_LEASE`] unless [`set_duration`] said otherwise).
pub fn duration() -> Duration {
    *LEASE.get_or_init(|| DEFAULT_LEASE)
}

/// Where this node says it can be reached (`serve --node-url`), written into the lease it
/// holds.
static ADDRESS: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Sets this node's address (once; without a trailing `/`).
pub fn set_address(url: &str) {
    let _ = ADDRESS.set(url.to_string());
}

fn address() -> Option<&'static str> {
    ADDRESS.get().map(String::as_str)
}

/// What the writer holds while it runs.
#[derive(Debug)]
pub enum WriterGuard {
    /// The locked file (the lock goes with the descriptor).
    File(std::fs::File),
    Lease {
        token: i64,
    },
}

/// Who this process is, as a holder: `pid N on HOST boot BOOT-ID since TIME`.
fn me() -> String {
    format!(
        "pid {} on {} boot {} since {}",
        std::process::id(),
        hostname(),
        boot_id(),
        chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    )
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown-host".into())
}

/// This boot of this machine (Linux: a UUID made at each boot).
fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// Whether `holder` (as [`me`] writes it) is a process of this host that no longer exists.
fn holder_is_gone(holder: &str) -> bool {
    holder_is_gone_on(holder, &hostname(), &boot_id(), |pid| {
        std::path::Path::new(&format!("/proc/{pid}")).exists()
    })
}

/// [`holder_is_gone`] as seen from `host` in boot `boot`. A holder of the same host name in
/// another boot is not judged: it is this machine before a reboot, or another machine that
/// has the same name; its lease must run out. (Holders written before the boot id was added
/// are judged by host and pid alone.)
fn holder_is_gone_on(holder: &str, host: &str, boot: &str, exists: impl Fn(u32) -> bool) -> bool {
    let mut words = holder.split_whitespace();
    let (Some("pid"), Some(pid), Some("on"), Some(their_host)) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        return false;
    };
    let Ok(pid) = pid.parse::<u32>() else {
        return false;
    };
    let same_boot = match (words.next(), words.next()) {
        (Some("boot"), Some(theirs)) => theirs == boot,
        _ => true,
    };
    their_host == host && same_boot && !exists(pid)
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

/// The lease as stored: who holds it, where it is reached, its token, whether it is live.
#[derive(QueryableByName, Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    #[diesel(sql_type = Text)]
    pub holder: String,
    #[diesel(sql_type = diesel::sql_types::Nullable<Text>)]
    pub address: Option<String>,
    #[diesel(sql_type = BigInt)]
    pub token: i64,
    #[diesel(sql_type = Bool)]
    pub live: bool,
}

impl Holder {
    /// Whether a node may take the lease now: it ran out, or its holder is a process of
    /// this host that no longer exists.
    pub fn is_free(&self) -> bool {
        !self.live || holder_is_gone(&self.holder)
    }
}

/// The lease's row as a [`Holder`].
const SELECT_HOLDER: &str =
    "SELECT holder, address, token, expires_at > now() AS live FROM writer_lease WHERE id = 1";

/// The PostgreSQL lease as it stands (none before any node took it). Reads without locking.
pub fn peek(conn: &mut DbConnection) -> Result<Option<Holder>, diesel::result::Error> {
    let rows: Vec<Holder> = diesel::sql_query(SELECT_HOLDER).load(conn)?;
    Ok(rows.into_iter().next())
}

/// The lease of the log in the PostgreSQL schema `schema` (an operator's log,
/// [`super::log_namespace`]), read on a connection of any schema of the database; `None`
/// while that log's store has not been made, or before any node took its lease.
pub fn peek_in(
    conn: &mut DbConnection,
    schema: &str,
) -> Result<Option<Holder>, diesel::result::Error> {
    // The name is quoted into the statement: only what `log_namespace` makes is accepted.
    if !schema
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    {
        return Ok(None);
    }
    #[derive(QueryableByName)]
    struct Exists {
        #[diesel(sql_type = Bool)]
        exists: bool,
    }
    let made: Vec<Exists> = diesel::sql_query(
        "SELECT EXISTS (SELECT 1 FROM information_schema.tables \
         WHERE table_schema = $1 AND table_name = 'writer_lease') AS exists",
    )
    .bind::<Text, _>(schema)
    .load(conn)?;
    if !made.first().is_some_and(|e| e.exists) {
        return Ok(None);
    }
    let rows: Vec<Holder> = diesel::sql_query(SELECT_HOLDER.replace(
        "FROM writer_lease",
        &format!("FROM \"{schema}\".writer_lease"),
    ))
    .load(conn)?;
    Ok(rows.into_iter().next())
}

/// Whether the lease still carries `token` (no other node has taken it over since).
pub fn holds(token: i64, conn: &mut DbConnection) -> Result<bool, diesel::result::Error> {
    Ok(peek(conn)?.is_some_and(|h| h.token == token))
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
    let ms = duration().as_millis() as i64;
    let me = me();
    let taken = conn.transaction::<_, LeaseError, _>(|c| {
        // A writer frozen inside its batch's transaction holds the row until the database
        // ends its session: wait for it a moment only, and try again later.
        diesel::sql_query("SET LOCAL lock_timeout = '1s'").execute(c)?;
        let rows: Vec<Holder> = diesel::sql_query(format!("{SELECT_HOLDER} FOR UPDATE")).load(c)?;
        let token = match rows.first() {
            None => {
                diesel::sql_query(
                    "INSERT INTO writer_lease (id, holder, token, expires_at, address) \
                     VALUES (1, $1, 1, now() + make_interval(secs => $2 / 1000.0), $3)",
                )
                .bind::<Text, _>(&me)
                .bind::<BigInt, _>(ms)
                .bind::<diesel::sql_types::Nullable<Text>, _>(address())
                .execute(c)?;
                1
            }
            Some(r) if !r.is_free() => {
                let at = r
                    .address
                    .as_deref()
                    .map(|a| format!(", reached at {a}"))
                    .unwrap_or_default();
                return Err(LeaseError::Held(format!(
                    "this database's log is being written by another pitboss serve ({}{at}, \
                     lease token {}); one writer per log: stop that one first, wait until its \
                     lease runs out ({} ms after its last renewal), or give this one \
                     --node-url to wait as a standby that forwards to it",
                    r.holder,
                    r.token,
                    duration().as_millis()
                )));
            }
            Some(r) => {
                let token = r.token + 1;
                diesel::sql_query(
                    "UPDATE writer_lease SET holder = $1, token = $2, \
                     expires_at = now() + make_interval(secs => $3 / 1000.0), address = $4 \
                     WHERE id = 1",
                )
                .bind::<Text, _>(&me)
                .bind::<BigInt, _>(token)
                .bind::<BigInt, _>(ms)
                .bind::<diesel::sql_types::Nullable<Text>, _>(address())
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
        "UPDATE writer_lease SET expires_at = now() + make_interval(secs => $1 / 1000.0) \
         WHERE id = 1 AND token = $2",
    )
    .bind::<BigInt, _>(duration().as_millis() as i64)
    .bind::<BigInt, _>(*token)
    .execute(c)?;
    if n == 1 {
        Ok(())
    } else {
        Err(taken_over(*token))
    }
}

/// The error of a write whose fencing token `token` is no longer the lease's.
pub fn taken_over(token: i64) -> diesel::result::Error {
    diesel::result::Error::QueryBuilderError(
        format!(
            "the writer's lease (token {token}) was taken over by another node: this node no \
             longer writes the log"
        )
        .into(),
    )
}

/// Renews a lease from a thread of its own until dropped: while a node that has just taken
/// the lease starts (the replay of the log's tail, the checkpoint at start), which may last
/// longer than the lease, before its writer renews it.
pub struct Keeper {
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Keeper {
    /// Keeps the lease of `guard` on `url` (nothing to do for a file lock).
    pub fn start(url: &DatabaseUrl, guard: &WriterGuard) -> Keeper {
        let (Some(token), DatabaseUrl::Postgres(_)) = (guard.token(), url) else {
            return Keeper {
                stop: None,
                thread: None,
            };
        };
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let url = url.clone();
        let thread = std::thread::Builder::new()
            .name("pitboss-lease".into())
            .spawn(move || {
                let mut conn = None;
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(duration() / 3)
                {
                    if conn.is_none() {
                        conn = super::connect(&url).ok();
                    }
                    if let Some(c) = conn.as_mut() {
                        if let Err(e) = renew_token(Some(token), c) {
                            tracing::warn!(error = %e, "renewing the lease while starting");
                            conn = None;
                        }
                    }
                }
            })
            .ok();
        Keeper {
            stop: Some(stop),
            thread,
        }
    }
}

impl Drop for Keeper {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::holder_is_gone_on;

    #[test]
    fn a_holder_is_gone_only_when_its_process_on_this_boot_of_this_host_is() {
        let gone = |h: &str| holder_is_gone_on(h, "vm", "b1", |pid| pid == 7);
        assert!(gone("pid 8 on vm boot b1 since 2026-11-28T00:00:00Z"));
        assert!(
            !gone("pid 7 on vm boot b1 since 2026-11-28T00:00:00Z"),
            "alive"
        );
        assert!(
            !gone("pid 8 on other boot b1 since 2026-11-28T00:00:00Z"),
            "another host"
        );
        assert!(
            !gone("pid 8 on vm boot b2 since 2026-11-28T00:00:00Z"),
            "another boot, or another machine of the same name: wait for the lease"
        );
        assert!(
            gone("pid 8 on vm since 2026-11-28T00:00:00Z"),
            "the older form"
        );
        assert!(!gone("pid x on vm since 2026-11-28T00:00:00Z"));
        assert!(!gone("someone"));
    }
}
