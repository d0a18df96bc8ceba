//! Readiness: whether the service can write now, told by the writer itself.
//!
//! The writer marks the store down when a batch, a checkpoint or a reload fails (disk full,
//! database unreachable, a statement timed out), and up again when a commit succeeds; while it
//! is down the writer probes the store with a small write transaction once a second, so the
//! service recovers by itself even when no traffic arrives (a load balancer sends none to a
//! node that is not ready). While the writer rebuilds its state from the log (after a failure)
//! it is replaying. While any of these holds, or while the writer has been inside one batch
//! for longer than a request may wait, `/readyz` answers 503 and commands are refused at once
//! with 503 (nothing recorded) instead of waiting in the queue.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The writer's health as the HTTP layer reads it.
#[derive(Debug, Default)]
pub struct Health {
    store_down: AtomicBool,
    replaying: AtomicBool,
    /// Milliseconds since [`epoch`] when the writer's current batch started; 0 when idle.
    busy_since_ms: AtomicU64,
    /// Why the store is down (the last error), for the readiness document and the logs.
    reason: Mutex<String>,
    /// How long a request waits for the writer (the submit deadline), in milliseconds.
    deadline_ms: AtomicU64,
    /// The PostgreSQL lease's duration, in milliseconds (0: no lease, a SQLite file lock).
    lease_ms: AtomicU64,
    /// Milliseconds since [`epoch`] when the writer last confirmed the lease: the moment
    /// before the transaction that renewed it began, so never later than the time the
    /// database counted the lease's new term from.
    lease_confirmed_ms: AtomicU64,
}

/// Why the service is not ready, for a person (`/readyz` answers it as `not_ready`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotReady {
    pub detail: String,
}

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn now_ms() -> u64 {
    // Never 0, so that 0 can mean "idle".
    epoch().elapsed().as_millis() as u64 + 1
}

impl Health {
    /// Sets how long a request waits for the writer; a batch running longer makes the service
    /// not ready.
    pub fn set_deadline(&self, d: Duration) {
        self.deadline_ms
            .store(d.as_millis() as u64, Ordering::Relaxed);
    }

    /// The writer holds a lease of `lease` renewed by a transaction that began after `at`.
    pub fn lease_confirmed(&self, lease: Duration, at: Instant) {
        let ms = at.saturating_duration_since(epoch()).as_millis() as u64 + 1;
        self.lease_confirmed_ms.fetch_max(ms, Ordering::SeqCst);
        self.lease_ms
            .store(lease.as_millis() as u64, Ordering::SeqCst);
    }

    /// Why this node may no longer hold the log's lease: nine tenths of it have passed since
    /// the writer last confirmed it (the process was frozen, or could not reach the database),
    /// so another node may be taking the log over. Until the writer renews it (or learns it
    /// was taken over, and stops), nothing is served from this node's memory.
    pub fn lease_lapsed(&self) -> Option<String> {
        let lease = self.lease_ms.load(Ordering::SeqCst);
        if lease == 0 {
            return None;
        }
        let since = now_ms().saturating_sub(self.lease_confirmed_ms.load(Ordering::SeqCst));
        (since > lease - lease / 10).then(|| {
            format!(
                "this node last confirmed its lease on the log {since} ms ago (the lease lasts \
                 {lease} ms): another node may be taking the log over; nothing is served here \
                 until the lease is renewed"
            )
        })
    }

    /// The store refused a write or could not be reached.
    pub fn store_failed(&self, why: &str) {
        *self.reason.lock().expect("health lock") = why.to_string();
        if !self.store_down.swap(true, Ordering::SeqCst) {
            tracing::warn!(reason = why, "store refuses writes: not ready");
        }
    }

    /// A write committed: the store takes writes again.
    pub fn store_ok(&self) {
        if self.store_down.swap(false, Ordering::SeqCst) {
            tracing::info!("store takes writes again: ready");
        }
    }

    pub fn is_store_down(&self) -> bool {
        self.store_down.load(Ordering::SeqCst)
    }

    /// The writer rebuilds its state from the log; the returned guard ends it.
    pub fn replaying(&self) -> Replaying<'_> {
        self.replaying.store(true, Ordering::SeqCst);
        Replaying(self)
    }

    /// The writer works on a batch; the returned guard ends it.
    /// Nested guards (a wait for the batch in flight inside a batch) keep the outer start.
    pub fn busy(&self) -> Busy<'_> {
        let outer = self.busy_since_ms.load(Ordering::SeqCst);
        if outer == 0 {
            self.busy_since_ms.store(now_ms(), Ordering::SeqCst);
        }
        Busy(self, outer)
    }

    /// `Ok` when the service can write now, else why not.
    pub fn readiness(&self) -> Result<(), NotReady> {
        if self.replaying.load(Ordering::SeqCst) {
            return Err(NotReady {
                detail: "the service is rebuilding its state from the audit log".into(),
            });
        }
        if let Some(detail) = self.lease_lapsed() {
            return Err(NotReady { detail });
        }
        if self.store_down.load(Ordering::SeqCst) {
            let why = self.reason.lock().expect("health lock").clone();
            return Err(NotReady {
                detail: format!("the store refuses writes ({why})"),
            });
        }
        let since = self.busy_since_ms.load(Ordering::SeqCst);
        let deadline = self.deadline_ms.load(Ordering::Relaxed);
        if since != 0 && deadline != 0 {
            let waited = now_ms().saturating_sub(since);
            if waited > deadline {
                return Err(NotReady {
                    detail: format!("the writer has been waiting on the store for {} ms", waited),
                });
            }
        }
        Ok(())
    }
}

/// Free space a SQLite store needs beside its database before it is taken back into use after
/// a failure (a batch's pages go to the WAL first, then into the database file).
pub const MIN_FREE_BYTES: u64 = 1 << 20;

/// `Ok` when the filesystem holding the SQLite database `db` has [`MIN_FREE_BYTES`] free.
pub fn check_free_space(db: &std::path::Path) -> Result<(), String> {
    let dir = match db.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    let free = free_bytes(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if free < MIN_FREE_BYTES {
        return Err(format!(
            "{} has {free} bytes free, fewer than the {MIN_FREE_BYTES} a batch may need",
            dir.display()
        ));
    }
    Ok(())
}

/// Bytes an unprivileged writer may still use on the filesystem of `dir` (`statvfs`).
fn free_bytes(dir: &std::path::Path) -> std::io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid NUL-terminated path and `st` a writable statvfs.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st.f_bavail as u64 * st.f_frsize as u64)
}

/// Ends a replay when dropped.
pub struct Replaying<'a>(&'a Health);

impl Drop for Replaying<'_> {
    fn drop(&mut self) {
        self.0.replaying.store(false, Ordering::SeqCst);
    }
}

/// Ends a batch when dropped.
pub struct Busy<'a>(&'a Health, u64);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.busy_since_ms.store(self.1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_ready_while_the_store_is_down_or_replaying_or_a_batch_overruns() {
        let h = Health::default();
        h.set_deadline(Duration::from_millis(50));
        assert!(h.readiness().is_ok());
        h.store_failed("disk full");
        assert!(h.readiness().unwrap_err().detail.contains("disk full"));
        h.store_ok();
        assert!(h.readiness().is_ok());
        {
            let _r = h.replaying();
            assert!(h.readiness().is_err());
        }
        assert!(h.readiness().is_ok());
        {
            let _b = h.busy();
            assert!(h.readiness().is_ok(), "a batch within the deadline");
            std::thread::sleep(Duration::from_millis(80));
            assert!(h
                .readiness()
                .unwrap_err()
                .detail
                .contains("waiting on the store"));
        }
        assert!(h.readiness().is_ok());
    }

    #[test]
    fn a_lease_not_confirmed_for_nine_tenths_of_it_has_lapsed() {
        let h = Health::default();
        assert_eq!(h.lease_lapsed(), None, "no lease (SQLite): never");
        let lease = Duration::from_millis(300);
        let _ = epoch();
        std::thread::sleep(Duration::from_millis(10));
        h.lease_confirmed(lease, Instant::now());
        assert_eq!(h.lease_lapsed(), None);
        assert!(h.readiness().is_ok());
        std::thread::sleep(Duration::from_millis(280));
        let why = h.lease_lapsed().expect("lapsed");
        assert!(why.contains("lease"), "{why}");
        assert!(h.readiness().is_err());
        // An older confirmation (a batch sent before the last renewal) changes nothing.
        h.lease_confirmed(lease, Instant::now() - Duration::from_millis(290));
        assert!(h.lease_lapsed().is_some());
        h.lease_confirmed(lease, Instant::now());
        assert_eq!(h.lease_lapsed(), None, "renewed");
    }

    #[test]
    fn free_space_is_read_from_the_filesystem() {
        let dir = std::env::temp_dir();
        assert!(free_bytes(&dir).is_ok());
        assert!(free_bytes(std::path::Path::new("/no/such/dir")).is_err());
    }
}
