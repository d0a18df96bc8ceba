//! A VFS over SQLite's own that writes a transaction's WAL frames in a few system calls.
//!
//! SQLite appends each WAL frame with two `pwrite`s (its 24-byte header, then the page):
//! ≈ 270 system calls for a transaction of ≈ 35 bets (≈ 135 frames of 2 KiB), each taking the
//! file's lock and going through the file system's write path for the same few pages of the
//! page cache (`walWriteOneFrame` was ≈ 26 % of the committer's CPU). This VFS is SQLite's
//! default one (`unix`) with the WAL file's writes gathered: a write that continues the
//! gathered bytes is appended to them, and they go to the file (in writes of 64 KiB, the most
//! SQLite's own VFS takes at once: ≈ 5 for such a transaction) before anything
//! else is done with the file (a read, a size, a truncation, a sync, a file control, its
//! close), before a write elsewhere in it, when they reach [`GATHER_AT_MOST`], and before its
//! connection passes a memory barrier of the database file's shared memory (what makes
//! frames visible to other connections: the WAL index header is written between barriers;
//! the WAL file is paired with its database file when it is opened,
//! `sqlite3_database_file_object`). A commit syncs the WAL (`synchronous = FULL`, every
//! connection of ours): its frames are in the file before its sync, so what is durable and
//! when is as before. Every other file (the database, its shared memory, journals) goes
//! straight through.
//!
//! A write error of the gathered bytes is answered to the call that wrote them out (the
//! commit's sync, mostly), which SQLite treats as it treats a failed write: the transaction
//! fails. At the memory barrier nothing can be answered: the process stops rather than let a
//! commit be published over missing frames (unreachable as configured: with `synchronous =
//! FULL` on a device that overwrites safely, the only WAL files gathered for, the commit's
//! sync wrote everything out first). When the connection releases the WAL's write lock, what
//! is still gathered belongs to a transaction that spilled frames and rolled back, and is
//! dropped: written out later it would land over frames another connection committed at the
//! same place (found in review; `tests::a_rolled_back_spill_…` failed with "file is not a
//! database" before).
//!
//! Registered as the process's default VFS ([`register`], once, before the first connection
//! is opened): every SQLite connection of the process uses it.

use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::OnceLock;

use libsqlite3_sys as ffi;

/// Bytes gathered before they are written out without waiting for a sync.
pub const GATHER_AT_MOST: usize = 1 << 20;

/// The most one call to SQLite's own VFS writes (`seekAndWriteFd` masks the length to
/// 17 bits; SQLite itself never writes more than a page and a frame header at once).
const WRITE_AT_MOST: usize = 64 * 1024;

/// The VFS's name.
const NAME: &[u8] = b"pitboss-unix\0";

/// One open file: SQLite's header (the methods below), the file of SQLite's own VFS it wraps
/// (in the same allocation, after this struct), for a WAL file what is gathered, and the
/// file it is paired with (a WAL file's database file, a database file's WAL file) in the
/// same connection.
#[repr(C)]
struct File {
    base: ffi::sqlite3_file,
    real: *mut ffi::sqlite3_file,
    /// Not null for a WAL file.
    gather: *mut Gather,
    peer: *mut File,
}

struct Gather {
    bytes: Vec<u8>,
    /// Where `bytes` start in the file.
    at: i64,
}

/// SQLite's own default VFS, which this one wraps.
static BASE: AtomicPtr<ffi::sqlite3_vfs> = AtomicPtr::new(std::ptr::null_mut());

/// Makes this VFS SQLite's default for the process (once; later calls answer as the first).
/// Returns SQLite's code when it could not (the connections then use SQLite's own VFS; the
/// refusal is logged once, when it happens).
pub fn register() -> Result<(), c_int> {
    static DONE: OnceLock<c_int> = OnceLock::new();
    let rc = *DONE.get_or_init(|| {
        let rc = register_once();
        if rc != ffi::SQLITE_OK {
            tracing::warn!(
                code = rc,
                "SQLite refused the WAL-gathering VFS; using its own"
            );
        }
        rc
    });
    match rc {
        ffi::SQLITE_OK => Ok(()),
        rc => Err(rc),
    }
}

/// The registration itself: SQLite's code.
fn register_once() -> c_int {
    // SAFETY: SQLite's registration functions are thread-safe (its default threading mode);
    // the VFS structure is leaked, so it lives as long as the process.
    unsafe {
        let rc = ffi::sqlite3_initialize();
        if rc != ffi::SQLITE_OK {
            return rc;
        }
        let base = ffi::sqlite3_vfs_find(std::ptr::null());
        if base.is_null() {
            return ffi::SQLITE_ERROR;
        }
        BASE.store(base, Ordering::Release);
        let mut vfs = *base;
        vfs.szOsFile = (real_offset() + (*base).szOsFile as usize) as c_int;
        vfs.pNext = std::ptr::null_mut();
        vfs.zName = NAME.as_ptr() as *const c_char;
        vfs.xOpen = Some(open);
        ffi::sqlite3_vfs_register(Box::leak(Box::new(vfs)), 1)
    }
}

/// Where the wrapped file starts in a [`File`]'s allocation.
const fn real_offset() -> usize {
    let n = std::mem::size_of::<File>();
    n.div_ceil(16) * 16
}

static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 3,
    xClose: Some(close),
    xRead: Some(read),
    xWrite: Some(write),
    xTruncate: Some(truncate),
    xSync: Some(sync),
    xFileSize: Some(file_size),
    xLock: Some(lock),
    xUnlock: Some(unlock),
    xCheckReservedLock: Some(check_reserved_lock),
    xFileControl: Some(file_control),
    xSectorSize: Some(sector_size),
    xDeviceCharacteristics: Some(device_characteristics),
    xShmMap: Some(shm_map),
    xShmLock: Some(shm_lock),
    xShmBarrier: Some(shm_barrier),
    xShmUnmap: Some(shm_unmap),
    xFetch: Some(fetch),
    xUnfetch: Some(unfetch),
};

unsafe extern "C" fn open(
    _vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let f = file as *mut File;
    let real = (file as *mut u8).add(real_offset()) as *mut ffi::sqlite3_file;
    (*real).pMethods = std::ptr::null();
    let base = BASE.load(Ordering::Acquire);
    let rc = ((*base).xOpen.expect("SQLite's VFS opens files"))(base, name, real, flags, out_flags);
    if rc != ffi::SQLITE_OK || (*real).pMethods.is_null() {
        // No `xClose` follows a failed open.
        (*f).base.pMethods = std::ptr::null();
        return rc;
    }
    let mut gather = std::ptr::null_mut();
    let mut peer = std::ptr::null_mut();
    if flags & ffi::SQLITE_OPEN_WAL != 0 && !name.is_null() {
        // The database file this WAL belongs to, in this connection (valid inside the open
        // of a WAL file); paired only when it is one of ours.
        let db = ffi::sqlite3_database_file_object(name) as *mut File;
        // Only where SQLite pads no frame to a sector after a commit's sync (a device that
        // overwrites safely, SQLite's default on Unix): then every frame of a commit is
        // written before its sync.
        if !db.is_null()
            && std::ptr::eq((*db).base.pMethods, &METHODS)
            && device_characteristics(db as *mut ffi::sqlite3_file)
                & ffi::SQLITE_IOCAP_POWERSAFE_OVERWRITE
                != 0
        {
            gather = Box::into_raw(Box::new(Gather {
                bytes: Vec::new(),
                at: 0,
            }));
            peer = db;
            (*db).peer = f;
        }
    }
    std::ptr::write(
        f,
        File {
            base: ffi::sqlite3_file { pMethods: &METHODS },
            real,
            gather,
            peer,
        },
    );
    ffi::SQLITE_OK
}

/// The wrapped file and its methods.
unsafe fn real(
    f: *mut ffi::sqlite3_file,
) -> (*mut ffi::sqlite3_file, &'static ffi::sqlite3_io_methods) {
    let real = (*(f as *mut File)).real;
    (real, &*(*real).pMethods)
}

/// The wrapped file and its methods, once what `file` gathered is written out (the error of
/// writing it out otherwise): what every call that reads, sizes, truncates, syncs or controls
/// the file does first.
unsafe fn written_out(
    file: *mut ffi::sqlite3_file,
) -> Result<(*mut ffi::sqlite3_file, &'static ffi::sqlite3_io_methods), c_int> {
    match write_out(file as *mut File) {
        ffi::SQLITE_OK => Ok(real(file)),
        rc => Err(rc),
    }
}

/// Writes out what `f` gathered (nothing for a file that is not a WAL file).
unsafe fn write_out(f: *mut File) -> c_int {
    let g = (*f).gather;
    if g.is_null() {
        return ffi::SQLITE_OK;
    }
    let g = &mut *g;
    if g.bytes.is_empty() {
        return ffi::SQLITE_OK;
    }
    let real = (*f).real;
    let xwrite = (*(*real).pMethods).xWrite.expect("files write");
    let mut rc = ffi::SQLITE_OK;
    let mut at = g.at;
    // SQLite's own VFS writes at most 128 KiB − 1 bytes a call (it masks the length).
    for chunk in g.bytes.chunks(WRITE_AT_MOST) {
        rc = xwrite(
            real,
            chunk.as_ptr() as *const c_void,
            chunk.len() as c_int,
            at,
        );
        if rc != ffi::SQLITE_OK {
            break;
        }
        at += chunk.len() as i64;
    }
    g.bytes.clear();
    if g.bytes.capacity() > GATHER_AT_MOST {
        g.bytes.shrink_to(GATHER_AT_MOST);
    }
    rc
}

/// Before a database file's shared-memory barrier: writes out what its WAL file gathered.
///
/// The barrier comes before the WAL index header that publishes a commit's frames is written
/// whole, and it cannot answer an error: bytes that cannot be written out here would be
/// published missing, which later readers and checkpoints would take for pages. The process
/// stops instead. Unreachable with `synchronous = FULL` on a power-safe device (the only
/// files this VFS gathers for): the commit's sync wrote everything out before.
unsafe fn write_out_wal_of(db: *mut ffi::sqlite3_file) {
    if let Some(wal) = gathering_wal_of(db) {
        let rc = write_out(wal);
        if rc != ffi::SQLITE_OK {
            eprintln!(
                "pitboss: SQLite WAL frames could not be written before they were published \
                 (SQLite code {rc}); stopping rather than publishing missing frames"
            );
            std::process::abort();
        }
    }
}

/// When a database file's connection releases the WAL's write lock: what its WAL file still
/// gathers belongs to no published commit (a commit's frames were written out at its sync, or
/// at the barrier before its header), only to a transaction that spilled frames and rolled
/// back. Written out later it would land over frames another connection commits at the same
/// place, so it is dropped.
unsafe fn drop_unpublished(db: *mut ffi::sqlite3_file) {
    if let Some(wal) = gathering_wal_of(db) {
        (*(*wal).gather).bytes.clear();
    }
}

/// The WAL file paired with database file `db` in its connection, if it gathers.
unsafe fn gathering_wal_of(db: *mut ffi::sqlite3_file) -> Option<*mut File> {
    let wal = (*(db as *mut File)).peer;
    (!wal.is_null() && !(*wal).gather.is_null()).then_some(wal)
}

unsafe extern "C" fn close(file: *mut ffi::sqlite3_file) -> c_int {
    let f = file as *mut File;
    let written = write_out(f);
    if !(*f).gather.is_null() {
        drop(Box::from_raw((*f).gather));
        (*f).gather = std::ptr::null_mut();
    }
    if !(*f).peer.is_null() {
        (*(*f).peer).peer = std::ptr::null_mut();
        (*f).peer = std::ptr::null_mut();
    }
    let (real, m) = real(file);
    let rc = (m.xClose.expect("files close"))(real);
    if written != ffi::SQLITE_OK {
        written
    } else {
        rc
    }
}

unsafe extern "C" fn read(
    file: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    n: c_int,
    at: i64,
) -> c_int {
    let (real, m) = match written_out(file) {
        Ok(x) => x,
        Err(rc) => return rc,
    };
    (m.xRead.expect("files read"))(real, buf, n, at)
}

unsafe extern "C" fn write(
    file: *mut ffi::sqlite3_file,
    buf: *const c_void,
    n: c_int,
    at: i64,
) -> c_int {
    let f = file as *mut File;
    let g = (*f).gather;
    if g.is_null() || n <= 0 {
        return match written_out(file) {
            Ok((real, m)) => (m.xWrite.expect("files write"))(real, buf, n, at),
            Err(rc) => rc,
        };
    }
    if !(*g).bytes.is_empty() && at != (*g).at + (*g).bytes.len() as i64 {
        let rc = write_out(f);
        if rc != ffi::SQLITE_OK {
            return rc;
        }
    }
    {
        let gather = &mut *g;
        if gather.bytes.is_empty() {
            gather.at = at;
        }
        gather
            .bytes
            .extend_from_slice(std::slice::from_raw_parts(buf as *const u8, n as usize));
        if gather.bytes.len() < GATHER_AT_MOST {
            return ffi::SQLITE_OK;
        }
    }
    write_out(f)
}

unsafe extern "C" fn truncate(file: *mut ffi::sqlite3_file, size: i64) -> c_int {
    let (real, m) = match written_out(file) {
        Ok(x) => x,
        Err(rc) => return rc,
    };
    (m.xTruncate.expect("files truncate"))(real, size)
}

unsafe extern "C" fn sync(file: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    let (real, m) = match written_out(file) {
        Ok(x) => x,
        Err(rc) => return rc,
    };
    (m.xSync.expect("files sync"))(real, flags)
}

unsafe extern "C" fn file_size(file: *mut ffi::sqlite3_file, size: *mut i64) -> c_int {
    let (real, m) = match written_out(file) {
        Ok(x) => x,
        Err(rc) => return rc,
    };
    (m.xFileSize.expect("files have a size"))(real, size)
}

unsafe extern "C" fn lock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    let (real, m) = real(file);
    (m.xLock.expect("files lock"))(real, level)
}

unsafe extern "C" fn unlock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    let (real, m) = real(file);
    (m.xUnlock.expect("files unlock"))(real, level)
}

unsafe extern "C" fn check_reserved_lock(file: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    let (real, m) = real(file);
    (m.xCheckReservedLock.expect("files lock"))(real, out)
}

unsafe extern "C" fn file_control(
    file: *mut ffi::sqlite3_file,
    op: c_int,
    arg: *mut c_void,
) -> c_int {
    let (real, m) = match written_out(file) {
        Ok(x) => x,
        Err(rc) => return rc,
    };
    (m.xFileControl.expect("files take controls"))(real, op, arg)
}

unsafe extern "C" fn sector_size(file: *mut ffi::sqlite3_file) -> c_int {
    let (real, m) = real(file);
    (m.xSectorSize.expect("files have a sector size"))(real)
}

unsafe extern "C" fn device_characteristics(file: *mut ffi::sqlite3_file) -> c_int {
    let (real, m) = real(file);
    (m.xDeviceCharacteristics
        .expect("files have characteristics"))(real)
}

unsafe extern "C" fn shm_map(
    file: *mut ffi::sqlite3_file,
    page: c_int,
    size: c_int,
    extend: c_int,
    out: *mut *mut c_void,
) -> c_int {
    let (real, m) = real(file);
    match m.xShmMap {
        Some(x) => x(real, page, size, extend, out),
        None => ffi::SQLITE_IOERR,
    }
}

unsafe extern "C" fn shm_lock(
    file: *mut ffi::sqlite3_file,
    offset: c_int,
    n: c_int,
    flags: c_int,
) -> c_int {
    // The WAL's write lock is lock 0 (`WAL_WRITE_LOCK`), released exclusive-unlock.
    let unlock = ffi::SQLITE_SHM_UNLOCK | ffi::SQLITE_SHM_EXCLUSIVE;
    if offset == 0 && n >= 1 && flags & unlock == unlock {
        drop_unpublished(file);
    }
    let (real, m) = real(file);
    match m.xShmLock {
        Some(x) => x(real, offset, n, flags),
        None => ffi::SQLITE_IOERR,
    }
}

unsafe extern "C" fn shm_barrier(file: *mut ffi::sqlite3_file) {
    write_out_wal_of(file);
    let (real, m) = real(file);
    if let Some(x) = m.xShmBarrier {
        x(real)
    }
}

unsafe extern "C" fn shm_unmap(file: *mut ffi::sqlite3_file, delete: c_int) -> c_int {
    let (real, m) = real(file);
    match m.xShmUnmap {
        Some(x) => x(real, delete),
        None => ffi::SQLITE_OK,
    }
}

unsafe extern "C" fn fetch(
    file: *mut ffi::sqlite3_file,
    at: i64,
    n: c_int,
    out: *mut *mut c_void,
) -> c_int {
    let (real, m) = match written_out(file) {
        Ok(x) => x,
        Err(rc) => return rc,
    };
    match m.xFetch {
        Some(x) if m.iVersion >= 3 => x(real, at, n, out),
        _ => {
            *out = std::ptr::null_mut();
            ffi::SQLITE_OK
        }
    }
}

unsafe extern "C" fn unfetch(file: *mut ffi::sqlite3_file, at: i64, p: *mut c_void) -> c_int {
    let (real, m) = real(file);
    match m.xUnfetch {
        Some(x) if m.iVersion >= 3 => x(real, at, p),
        _ => ffi::SQLITE_OK,
    }
}

#[cfg(test)]
mod tests {
    use super::{ffi, NAME};
    use diesel::connection::SimpleConnection;
    use diesel::prelude::*;
    use diesel::sql_types::{BigInt, Text};

    #[derive(QueryableByName)]
    struct Count {
        #[diesel(sql_type = BigInt)]
        n: i64,
    }

    #[derive(QueryableByName)]
    struct Line {
        #[diesel(sql_type = Text)]
        line: String,
    }

    fn open(path: &std::path::Path) -> SqliteConnection {
        super::register().expect("the VFS registers");
        let mut c = SqliteConnection::establish(path.to_str().expect("utf-8")).expect("open");
        c.batch_execute(
            "PRAGMA page_size = 2048; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; \
             PRAGMA busy_timeout = 10000;",
        )
        .expect("pragmas");
        c
    }

    /// A new database at `path` with the tests' table `t (k, v)`, through the gathering VFS.
    fn new_table(path: &std::path::Path) -> SqliteConnection {
        let mut c = open(path);
        c.batch_execute("CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT NOT NULL)")
            .expect("table");
        c
    }

    fn insert(c: &mut SqliteConnection, key: String, value: String) -> QueryResult<()> {
        diesel::sql_query("INSERT INTO t (k, v) VALUES (?, ?)")
            .bind::<Text, _>(key)
            .bind::<Text, _>(value)
            .execute(c)
            .map(|_| ())
    }

    /// The rows of `t` (or what `sql`, a `SELECT count(*) AS n`, counts).
    fn count(c: &mut SqliteConnection, sql: &str) -> i64 {
        diesel::sql_query(sql)
            .get_result::<Count>(c)
            .expect("count")
            .n
    }

    const ROWS: &str = "SELECT count(*) AS n FROM t";

    /// SQLite's `integrity_check` finds nothing wrong.
    fn assert_whole(c: &mut SqliteConnection) {
        let check = diesel::sql_query("SELECT integrity_check AS line FROM pragma_integrity_check")
            .load::<Line>(c)
            .expect("integrity check");
        assert_eq!(check.len(), 1);
        assert_eq!(check[0].line, "ok");
    }

    /// Transactions of many frames through the gathering VFS, read by a second connection
    /// after each commit, checkpointed now and then by a third: every row is there, in order,
    /// and the database is whole.
    #[test]
    fn what_one_connection_commits_another_reads_whole() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.sqlite");
        let mut w = new_table(&path);
        let mut r = open(&path);
        let mut cp = open(&path);
        // SQLite's default VFS is this one.
        // SAFETY: a lookup by SQLite's API; the name is a C string SQLite keeps.
        let default =
            unsafe { std::ffi::CStr::from_ptr((*ffi::sqlite3_vfs_find(std::ptr::null())).zName) };
        assert_eq!(default.to_bytes_with_nul(), NAME);
        let mut written = 0i64;
        // One transaction of ≈ 3 MB first: gathered beyond `GATHER_AT_MOST` and written out in
        // pieces SQLite's VFS takes.
        w.transaction(|c| {
            for i in 0..3000 {
                insert(c, format!("big-{i:05}"), "y".repeat(1000))?;
            }
            Ok::<_, diesel::result::Error>(())
        })
        .expect("a large commit");
        written += 3000;
        for tx in 0..200 {
            w.transaction(|c| {
                for i in 0..(1 + tx % 37) {
                    insert(
                        c,
                        format!("{:08x}-{tx}-{i}", (tx * 7919 + i * 104_729) % 65_521),
                        "x".repeat(300 + (i as usize * 13) % 900),
                    )?;
                }
                Ok::<_, diesel::result::Error>(())
            })
            .expect("commit");
            written += 1 + tx % 37;
            assert_eq!(count(&mut r, ROWS), written, "after transaction {tx}");
            if tx % 25 == 24 {
                cp.batch_execute("PRAGMA wal_checkpoint(RESTART)")
                    .expect("checkpoint");
            }
        }
        assert_whole(&mut r);
        drop((w, r, cp));
        // Opened again (the WAL read back from the file): the same rows.
        assert_eq!(count(&mut open(&path), ROWS), written);
    }

    /// A transaction that spills frames to the WAL and rolls back leaves nothing behind that
    /// reaches the file later: another connection's commits over the same place in the WAL
    /// (after a checkpoint started it over) stay whole when the first connection reads again.
    #[test]
    fn a_rolled_back_spill_never_overwrites_another_connections_commits() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.sqlite");
        let mut a = new_table(&path);
        let mut b = open(&path);
        let mut cp = open(&path);
        // A small page cache: A's transaction spills frames before it ends.
        a.batch_execute("PRAGMA cache_size = 10").expect("cache");
        for round in 0..20 {
            // The WAL starts over: every frame is in the database file.
            cp.batch_execute("PRAGMA wal_checkpoint(TRUNCATE)")
                .expect("checkpoint");
            let rolled_back = a.transaction(|c| {
                for i in 0..60 {
                    insert(c, format!("a-{round}-{i:03}"), "a".repeat(1500))?;
                }
                Err::<(), _>(diesel::result::Error::RollbackTransaction)
            });
            assert!(rolled_back.is_err());
            b.transaction(|c| {
                for i in 0..3 {
                    insert(c, format!("b-{round}-{i}"), "b".repeat(1500))?;
                }
                Ok::<_, diesel::result::Error>(())
            })
            .expect("B commits");
            // A reads again (its barrier), then B's rows must be whole.
            assert_eq!(count(&mut a, ROWS), 3 * (round + 1), "round {round}");
            let whole = count(
                &mut b,
                "SELECT count(*) AS n FROM t WHERE v = replace(v, 'a', '') AND k LIKE 'b-%'",
            );
            assert_eq!(
                whole,
                3 * (round + 1),
                "round {round}: B's rows hold A's bytes"
            );
        }
        assert_whole(&mut a);
        assert_whole(&mut b);
    }
}
