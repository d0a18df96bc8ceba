//! Spawns the real `pitboss serve` binary on a free port, against a fresh SQLite file or a
//! fresh PostgreSQL database, and talks HTTP to it.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

/// Which database a test server uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The PostgreSQL server the tests use (trust auth); each test gets its own database on it.
pub fn pg_admin_url() -> String {
    std::env::var("PITBOSS_TEST_PG").unwrap_or_else(|_| "postgres://127.0.0.1:5432/test".into())
}

/// A fresh PostgreSQL database, dropped when this is dropped.
pub struct PgDatabase {
    pub name: String,
    pub url: String,
}

impl PgDatabase {
    pub fn create() -> PgDatabase {
        use diesel::RunQueryDsl;
        let admin = pg_admin_url();
        let mut conn =
            pitboss::store::connect(&pitboss::store::DatabaseUrl::Postgres(admin.clone()))
                .expect("PostgreSQL must be running for the tests (see .ci/run)");
        let name = format!("pitboss_test_{:016x}", rand_u64());
        diesel::sql_query(format!("CREATE DATABASE {name}"))
            .execute(&mut conn)
            .expect("create test database");
        let base = admin
            .rsplit_once('/')
            .map_or(admin.as_str(), |(b, _)| b)
            .to_string();
        PgDatabase {
            url: format!("{base}/{name}"),
            name,
        }
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        use diesel::RunQueryDsl;
        if let Ok(mut conn) =
            pitboss::store::connect(&pitboss::store::DatabaseUrl::Postgres(pg_admin_url()))
        {
            let _ = diesel::sql_query(format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ))
            .execute(&mut conn);
        }
    }
}

pub fn rand_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos(),
    );
    h.write_u32(std::process::id());
    h.finish()
}

/// Where a server keeps its data; survives restarts of the server.
pub struct Storage {
    pub data: tempfile::TempDir,
    pub pg: Option<PgDatabase>,
}

impl Storage {
    pub fn new(backend: Backend) -> Storage {
        Storage {
            data: tempfile::tempdir().expect("temp dir"),
            pg: (backend == Backend::Postgres).then(PgDatabase::create),
        }
    }

    pub fn data_dir(&self) -> &Path {
        self.data.path()
    }
}

pub struct TestServer {
    child: Child,
    pub base: String,
    /// The bootstrap admin key the server printed on its first start.
    pub admin_key: Option<String>,
    /// Checked when the server is dropped: snapshot + tail = full replay on its log.
    state_check: Option<(PathBuf, pitboss::store::DatabaseUrl)>,
    _own_storage: Option<Storage>,
}

/// The admin key every test server is started with.
pub const ADMIN_KEY: &str =
    "pb_00000000000000aa_00000000000000000000000000000000000000000000000000000000000000aa";

impl TestServer {
    /// Starts the service on `plans_dir` with a fresh SQLite data directory.
    pub fn start(plans_dir: &Path) -> TestServer {
        let storage = Storage::new(Backend::Sqlite);
        let mut s = TestServer::spawn(plans_dir, &storage, &[]);
        s._own_storage = Some(storage);
        s
    }

    /// Starts the service on the committed plans with the given storage (reusable across restarts).
    pub fn on(storage: &Storage) -> TestServer {
        TestServer::spawn(
            &crate::source::rng_plans_dir(),
            storage,
            &[("PITBOSS_ADMIN_KEY", ADMIN_KEY)],
        )
    }

    pub fn spawn(plans_dir: &Path, storage: &Storage, env: &[(&str, &str)]) -> TestServer {
        TestServer::spawn_in(
            plans_dir,
            storage.data_dir(),
            storage.pg.as_ref().map(|pg| pg.url.as_str()),
            env,
        )
    }

    /// Starts the service with its data in `data_dir` (and on `pg_url` when given).
    pub fn spawn_in(
        plans_dir: &Path,
        data_dir: &Path,
        pg_url: Option<&str>,
        env: &[(&str, &str)],
    ) -> TestServer {
        TestServer::spawn_logging(plans_dir, data_dir, pg_url, env, Stdio::inherit())
    }

    /// [`TestServer::spawn_in`] with the server's stderr (its logs) sent to `stderr`.
    pub fn spawn_logging(
        plans_dir: &Path,
        data_dir: &Path,
        pg_url: Option<&str>,
        env: &[(&str, &str)],
        stderr: Stdio,
    ) -> TestServer {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pitboss"));
        cmd.arg("--plans")
            .arg(plans_dir)
            .args(["serve", "--bind", "127.0.0.1:0", "--data-dir"])
            .arg(data_dir)
            .env_remove("DATABASE_URL")
            .env_remove("PITBOSS_ADMIN_KEY")
            .env_remove("PITBOSS_LOG_ORIGIN")
            // No background computation of returns to player unless a test asks for it (the
            // console's tests do): it would take a core from every other test's server.
            .env("PITBOSS_RTP_ROUNDS", "0")
            // Snapshots of the live state every few entries, so that every test's restarts
            // start from one and every test's log carries some (checked when dropped).
            .env("PITBOSS_SNAPSHOT_EVERY", "40")
            // A test about something else must not fail because a loaded machine made one
            // batch slower than the write deadline (3 s); the tests of the deadline itself
            // (`observe.rs`) set it back.
            .env("PITBOSS_WRITE_DEADLINE_MS", "30000")
            // Entries indexed by round and table every few entries (default 512), so that
            // every test's reads by round or table cross the indexed bound
            // (`store::entry_index`).
            .env("PITBOSS_INDEX_EVERY", "5")
            .stdout(Stdio::piped())
            .stderr(stderr);
        if let Some(url) = pg_url {
            // A PostgreSQL deployment must name its log; each test database is its own log.
            let name = url.rsplit('/').next().unwrap_or("pg");
            cmd.args(["--database-url", url])
                .args(["--origin", &format!("pitboss.test/{name}")]);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn pitboss serve");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut lines = BufReader::new(stdout).lines();
        let mut admin_key = None;
        let mut starting = None;
        let base = loop {
            match lines.next() {
                Some(Ok(line)) => {
                    if let Some(addr) = line.strip_prefix("listening on ") {
                        break addr.trim().to_string();
                    }
                    if let Some(addr) = line.strip_prefix("starting on ") {
                        starting = Some(addr.trim().to_string());
                    }
                    // A node started with `--node-url` whose log another node writes answers
                    // as its standby (issue 17).
                    if line.starts_with("standby: the log is written by") {
                        if let Some(addr) = starting.take() {
                            break addr;
                        }
                    }
                    if let Some(k) = line.split("store it now): ").nth(1) {
                        admin_key = Some(k.trim().to_string());
                    }
                }
                _ => {
                    let _ = child.kill();
                    panic!("pitboss serve exited before listening");
                }
            }
        };
        // Keep draining stdout so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        let url = match pg_url {
            Some(u) => pitboss::store::DatabaseUrl::Postgres(u.to_string()),
            None => pitboss::store::DatabaseUrl::default_in(data_dir),
        };
        TestServer {
            child,
            base,
            admin_key,
            state_check: Some((plans_dir.to_path_buf(), url)),
            _own_storage: None,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    fn agent() -> ureq::Agent {
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(30)))
            .build()
            .new_agent()
    }

    /// GET returning (status, content type, JSON body).
    pub fn get(&self, path: &str) -> (u16, String, Value) {
        self.get_as(None, path)
    }

    pub fn get_as(&self, key: Option<&str>, path: &str) -> (u16, String, Value) {
        let mut req = Self::agent().get(&self.url(path));
        if let Some(k) = key {
            req = req.header("Authorization", &format!("Bearer {k}"));
        }
        let mut resp = req.call().expect("HTTP request");
        let (status, ctype, bytes) = checked("GET", path, &mut resp);
        let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        (status, ctype, body)
    }

    /// GET returning the raw body.
    pub fn get_text(&self, key: Option<&str>, path: &str) -> (u16, String) {
        let mut req = Self::agent().get(&self.url(path));
        if let Some(k) = key {
            req = req.header("Authorization", &format!("Bearer {k}"));
        }
        let mut resp = req.call().expect("HTTP request");
        let (status, _, bytes) = checked("GET", path, &mut resp);
        (status, String::from_utf8_lossy(&bytes).into_owned())
    }

    /// POST of raw bytes with a key and an Idempotency-Key.
    pub fn post_raw(
        &self,
        key: Option<&str>,
        idem: Option<&str>,
        path: &str,
        body: &str,
    ) -> (u16, String, Value) {
        let mut req = Self::agent()
            .post(&self.url(path))
            .header("Content-Type", "application/json");
        if let Some(k) = key {
            req = req.header("Authorization", &format!("Bearer {k}"));
        }
        if let Some(i) = idem {
            req = req.header("Idempotency-Key", i);
        }
        let mut resp = req.send(body).expect("HTTP request");
        let (status, ctype, bytes) = checked("POST", path, &mut resp);
        let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        (status, ctype, body)
    }

    /// POST JSON with a fresh Idempotency-Key.
    pub fn post(&self, key: &str, path: &str, body: Value) -> (u16, Value) {
        let idem = format!("k-{:016x}", rand_u64());
        let (s, _, b) = self.post_raw(Some(key), Some(&idem), path, &body.to_string());
        (s, b)
    }

    /// Creates an API key with the admin key.
    pub fn create_key(&self, admin: &str, role: &str, operator: Option<&str>) -> String {
        let mut body = serde_json::json!({"role": role});
        if let Some(op) = operator {
            body["operator"] = Value::from(op);
        }
        let (s, _, b) = self.post_raw(Some(admin), None, "/v1/admin/keys", &body.to_string());
        assert_eq!(s, 201, "{b}");
        b["key"].as_str().expect("key").to_string()
    }

    /// One value of `/metrics` (a sample without labels, or `name{labels}` as printed).
    #[allow(dead_code)]
    pub fn metric(&self, name: &str) -> u64 {
        let (s, text) = self.get_text(None, "/metrics");
        assert_eq!(s, 200);
        metric_in(&text, name)
    }

    /// A value of `/metrics` once it reads `expected`, or the last one read after 5 s. For the
    /// gauges the writer sets after a command's answer has gone out (`pitboss_rounds_in_memory`
    /// and `pitboss_tables_in_memory`: what a durable batch finished leaves memory when the
    /// writer takes the batch's outcome, within a few milliseconds of the answer).
    #[allow(dead_code)]
    pub fn metric_settled(&self, name: &str, expected: u64) -> u64 {
        let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            let v = self.metric(name);
            if v == expected || std::time::Instant::now() >= until {
                return v;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// The server's process id.
    #[allow(dead_code)]
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Stops the server as an orchestrator does (SIGTERM) and waits for it to exit.
    #[allow(dead_code)]
    pub fn terminate(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("pitboss serve did not stop within 20 s of SIGTERM");
    }

    /// Waits for the server's process to end by itself; its exit code (`None` if it is still
    /// running after `within`).
    #[allow(dead_code)]
    pub fn wait_exit(&mut self, within: Duration) -> Option<Option<i32>> {
        let deadline = std::time::Instant::now() + within;
        while std::time::Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status.code());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// Sends a signal to the server's process (`STOP`, `CONT`, …).
    #[allow(dead_code)]
    pub fn signal(&self, signal: &str) {
        let ok = Command::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "kill -{signal}");
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One value of a `/metrics` text (see [`TestServer::metric`]).
#[allow(dead_code)]
pub fn metric_in(text: &str, name: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in /metrics:\n{text}"))
}

/// Reads a reply and checks it against the OpenAPI description ([`crate::spec::check_reply`]).
fn checked(
    method: &str,
    path: &str,
    resp: &mut ureq::http::Response<ureq::Body>,
) -> (u16, String, Vec<u8>) {
    let status = resp.status().as_u16();
    let ctype = content_type(resp);
    let bytes = resp
        .body_mut()
        .with_config()
        .limit(1 << 30)
        .read_to_vec()
        .unwrap_or_default();
    crate::spec::check_reply(method, path, status, &ctype, &bytes);
    (status, ctype, bytes)
}

/// The reply's `Content-Type` (empty when it has none).
pub fn content_type(resp: &ureq::http::Response<ureq::Body>) -> String {
    resp.headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string()
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.kill();
        if std::thread::panicking() {
            return;
        }
        // Every log the suite produces proves that a snapshot and the log's tail give exactly
        // the state of a full replay (issue 13), at several points of the log and for the
        // snapshot the server stored.
        if let Some((plans_dir, url)) = self.state_check.take() {
            // A store the test has already removed (its temporary directory or database
            // dropped first) has nothing left to check.
            match &url {
                pitboss::store::DatabaseUrl::Sqlite(path) if !Path::new(path).exists() => return,
                pitboss::store::DatabaseUrl::Postgres(_)
                    if pitboss::store::connect(&url).is_err() =>
                {
                    return
                }
                _ => {}
            }
            let (plans, _) = pitboss::plan::PlanSet::load_dir(&plans_dir);
            if let Err(e) = pitboss::service::check_snapshots(&url, &plans, 8) {
                panic!("snapshot + tail differs from a full replay on this test's log: {e}");
            }
            // And each operator's log (`--log-per-operator`), in its own store namespace.
            let recorded = pitboss::store::connect(&url)
                .and_then(|mut c| pitboss::service::logs::recorded(&mut c))
                .unwrap_or_else(|e| panic!("the operators' logs of this test: {e}"));
            for r in recorded {
                let log = url.for_log(&r.namespace);
                if let Err(e) = pitboss::service::check_snapshots(&log, &plans, 8) {
                    panic!(
                        "snapshot + tail differs from a full replay on {}'s log: {e}",
                        r.operator
                    );
                }
            }
        }
    }
}

impl TestServer {
    /// For a test that damages its store on purpose: no snapshot check when dropped.
    #[allow(dead_code)]
    pub fn skip_state_check(&mut self) {
        self.state_check = None;
    }
}

#[allow(dead_code)]
pub fn data_file(storage: &Storage) -> PathBuf {
    storage.data_dir().join("pitboss.sqlite")
}
