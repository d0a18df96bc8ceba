//! Audit reads from a PostgreSQL read replica (issue 17, item 3): `serve --read-database-url`.
//!
//! The test makes its own pair of real PostgreSQL servers (the installed binaries, run as the
//! `postgres` user in a temporary directory): a primary and a hot-standby replica streaming
//! from it (`pg_basebackup -R`). Two nodes write and stand by on the primary and serve the
//! audit log's reads from the replica; with the primary stopped, both still answer them.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::server::{TestServer, ADMIN_KEY};

/// A primary and its streaming replica, stopped and removed when dropped.
pub struct PgPair {
    dir: tempfile::TempDir,
    bin: PathBuf,
    pub primary: String,
    pub replica: String,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

impl PgPair {
    /// The pair, or why it cannot be made here (no PostgreSQL binaries, no `postgres` user).
    pub fn start() -> Result<PgPair, String> {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .map_err(|e| format!("/usr/lib/postgresql: {e}"))?
            .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
            .find(|b| b.join("pg_ctl").exists())
            .ok_or("no PostgreSQL server binaries in /usr/lib/postgresql/*/bin")?;
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let mut pair = PgPair {
            primary: String::new(),
            replica: String::new(),
            bin,
            dir,
        };
        let ok = Command::new("chown")
            .args(["postgres:postgres"])
            .arg(pair.dir.path())
            .status()
            .map_err(|e| e.to_string())?;
        if !ok.success() {
            return Err("no postgres user to run the servers as".into());
        }
        let (p, r) = (free_port(), free_port());
        let primary = pair.dir.path().join("primary");
        let replica = pair.dir.path().join("replica");
        let sock = pair.dir.path().display().to_string();
        // initdb's trust set-up admits replication connections from 127.0.0.1.
        pair.pg(
            "initdb",
            &[
                "-D",
                &primary.display().to_string(),
                "-A",
                "trust",
                "-U",
                "postgres",
            ],
        )?;
        pair.server(&primary, p, &sock)?;
        pair.pg(
            "pg_basebackup",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &p.to_string(),
                "-U",
                "postgres",
                "-D",
                &replica.display().to_string(),
                "-R",
                "-X",
                "stream",
            ],
        )?;
        pair.server(&replica, r, &sock)?;
        pair.primary = format!("postgres://postgres@127.0.0.1:{p}/postgres");
        pair.replica = format!("postgres://postgres@127.0.0.1:{r}/postgres");
        Ok(pair)
    }

    /// The pair, or `None` with the reason the test is skipped printed.
    pub fn start_or_skip() -> Option<PgPair> {
        PgPair::start()
            .map_err(|e| {
                eprintln!("SKIPPED: a PostgreSQL primary and replica cannot be made here: {e}")
            })
            .ok()
    }

    /// Runs one of the server's programs as the `postgres` user (the server refuses root).
    fn pg(&self, program: &str, args: &[&str]) -> Result<(), String> {
        let out = Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(self.bin.join(program))
            .args(args)
            .output()
            .map_err(|e| format!("{program}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{program} {args:?}: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    fn server(&self, data: &Path, port: u16, sock: &str) -> Result<(), String> {
        let data = data.display().to_string();
        let log = format!("{data}.log");
        let opts = format!(
            "-p {port} -k {sock} -c listen_addresses=127.0.0.1 -c fsync=off -c hot_standby=on"
        );
        self.pg(
            "pg_ctl",
            &["-D", &data, "-l", &log, "-o", &opts, "-w", "start"],
        )
    }

    /// Stops the primary at once (the replica keeps serving what it has).
    pub fn stop_primary(&self) {
        let data = self.dir.path().join("primary").display().to_string();
        self.pg("pg_ctl", &["-D", &data, "-m", "immediate", "-w", "stop"])
            .expect("stop the primary");
    }
}

impl Drop for PgPair {
    fn drop(&mut self) {
        for which in ["replica", "primary"] {
            let data = self.dir.path().join(which).display().to_string();
            let _ = self.pg("pg_ctl", &["-D", &data, "-m", "immediate", "-w", "stop"]);
        }
    }
}

fn node(pair: &PgPair, data: &Path) -> TestServer {
    let mut n = TestServer::spawn_in(
        &crate::source::rng_plans_dir(),
        data,
        Some(&pair.primary),
        &[
            ("PITBOSS_ADMIN_KEY", ADMIN_KEY),
            ("PITBOSS_NODE_URL", "auto"),
            ("PITBOSS_READ_DATABASE_URL", &pair.replica),
        ],
    );
    // The primary is stopped before the nodes end: nothing to check the state on then.
    n.skip_state_check();
    n
}

fn read(node: &TestServer, key: &str, path: &str) -> (u16, String) {
    let (s, body) = node.get_text(Some(key), path);
    (s, body)
}

/// Opens table `t0` for `op` through `node` and plays `rounds` roulette rounds of one bet.
fn play_rounds(node: &TestServer, op: &str, rounds: usize) {
    let (s, t) = node.post(
        op,
        "/v1/tables",
        json!({"table": "t0", "plan": "synot-roulette@1", "mode": "rng"}),
    );
    assert_eq!(s, 201, "{t}");
    for _ in 0..rounds {
        let (s, r) = node.post(op, "/v1/tables/t0/rounds", json!({}));
        assert_eq!(s, 201, "{r}");
        let round = r["round"].as_str().expect("round").to_string();
        let (s, r) = node.post(
            op,
            &format!("/v1/rounds/{round}/bets"),
            json!({"bets": [{"player": "p1", "bet": "straight", "numbers": [7], "stake_minor": 100}]}),
        );
        assert_eq!(s, 200, "{r}");
        for event in ["close_betting", "draw"] {
            let (s, r) = node.post(
                op,
                &format!("/v1/rounds/{round}/events"),
                json!({"type": event}),
            );
            assert_eq!(s, 200, "{event}: {r}");
        }
    }
}

/// Each of `paths` as both nodes answer it once they agree (the replica replays the
/// primary's log within moments), within 10 s.
fn agreed(a: &TestServer, b: &TestServer, key: &str, paths: &[String]) -> Vec<String> {
    let mut want = Vec::new();
    for path in paths {
        let started = Instant::now();
        let answer = loop {
            let (s, got) = read(a, key, path);
            let (s2, got2) = read(b, key, path);
            if s == 200 && (s2, &got2) == (200, &got) && !got.contains("\"next\":0") {
                break got;
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "{path}: {} {s} {got}; {} {s2} {got2}",
                a.base,
                b.base
            );
            std::thread::sleep(Duration::from_millis(100));
        };
        want.push(answer);
    }
    want
}

/// With the primary stopped, each node answers each of `paths` as `want` within 2 s.
fn answered_without_primary(nodes: &[&TestServer], key: &str, paths: &[String], want: &[String]) {
    for (path, want) in paths.iter().zip(want) {
        for n in nodes {
            let started = Instant::now();
            let (s, got) = read(n, key, path);
            assert_eq!((s, &got), (200, want), "{path} with the primary stopped");
            assert!(started.elapsed() < Duration::from_secs(2));
        }
    }
}

#[test]
fn audit_reads_are_served_from_a_read_replica_postgres() {
    let Some(pair) = PgPair::start_or_skip() else {
        return;
    };
    // One data directory for both nodes: the log's signing key is theirs to share.
    let data = tempfile::tempdir().expect("dir");
    let a = node(&pair, data.path());
    let op = a.create_key(ADMIN_KEY, "operator", Some("op1"));
    let auditor = a.create_key(ADMIN_KEY, "auditor", None);
    let b = node(&pair, data.path());
    play_rounds(&a, &op, 3);
    let (s, signed) = a.post(&auditor, "/v1/audit/checkpoint", json!({}));
    assert_eq!(s, 200, "{signed}");
    let size = signed["tree_size"].as_u64().expect("tree_size");
    let paths = [
        "/v1/audit/entries?limit=10000".to_string(),
        "/v1/audit/checkpoint".to_string(),
        format!("/v1/audit/proof/2?size={size}"),
        format!("/v1/audit/consistency?from=1&to={size}"),
    ];
    // Both nodes read the replica, which replays the primary's log within moments.
    let want = agreed(&a, &b, &auditor, &paths);
    let entries: serde_json::Value = serde_json::from_str(&want[0]).expect("json");
    assert_eq!(
        entries["entries"].as_array().expect("entries").len() as u64,
        entries["next"].as_u64().expect("next"),
        "every entry up to the cursor"
    );

    // The writer says how far the replica is behind it: not at all, once it has replayed.
    let (s, text) = a.get_text(None, "/metrics");
    assert_eq!(s, 200);
    let on_replica = crate::server::metric_in(&text, "pitboss_read_log_entries");
    assert!(
        on_replica >= size,
        "{on_replica} entries on the replica, {size} signed"
    );
    assert!(on_replica <= crate::server::metric_in(&text, "pitboss_log_entries"));

    // The primary gone: commands fail, the audit log's reads still come from the replica.
    pair.stop_primary();
    answered_without_primary(&[&a, &b], &auditor, &paths, &want);
    let (s, r) = a.post(&op, "/v1/tables/t0/rounds", json!({}));
    assert_eq!(s, 503, "a command with the primary stopped: {r}");
}

/// A node of a deployment of a log per operator that reads from the replica.
fn op_node(pair: &PgPair, data: &Path) -> TestServer {
    let mut n = TestServer::spawn_in(
        &crate::source::rng_plans_dir(),
        data,
        Some(&pair.primary),
        &[
            ("PITBOSS_ADMIN_KEY", ADMIN_KEY),
            ("PITBOSS_NODE_URL", "auto"),
            ("PITBOSS_LOG_PER_OPERATOR", "true"),
            ("PITBOSS_READ_DATABASE_URL", &pair.replica),
        ],
    );
    n.skip_state_check();
    n
}

/// A log per operator with a read replica (issue 17, item 3): two nodes, each writing one
/// operator's log, both answer the audit reads of both operators' logs and of the service's
/// from the replica, alike; with the primary stopped, still.
#[test]
fn operators_logs_are_read_from_a_read_replica_postgres() {
    let Some(pair) = PgPair::start_or_skip() else {
        return;
    };
    let data = tempfile::tempdir().expect("dir");
    let a = op_node(&pair, data.path());
    let ops = [
        a.create_key(ADMIN_KEY, "operator", Some("op1")),
        a.create_key(ADMIN_KEY, "operator", Some("op2")),
    ];
    let auditor = a.create_key(ADMIN_KEY, "auditor", None);
    let b = op_node(&pair, data.path());
    // op1's log written by a, op2's by b: each operator plays through its node.
    let mut sizes = Vec::new();
    for (n, op, log) in [(&a, &ops[0], "op1"), (&b, &ops[1], "op2")] {
        play_rounds(n, op, 2);
        let (s, signed) = n.post(
            &auditor,
            &format!("/v1/audit/checkpoint?log={log}"),
            json!({}),
        );
        assert_eq!(s, 200, "{signed}");
        sizes.push((log, signed["tree_size"].as_u64().expect("tree_size")));
    }
    let mut paths = Vec::new();
    for (log, size) in &sizes {
        paths.extend([
            format!("/v1/audit/entries?limit=10000&log={log}"),
            format!("/v1/audit/checkpoint?log={log}"),
            format!("/v1/audit/proof/2?size={size}&log={log}"),
            format!("/v1/audit/consistency?from=1&to={size}&log={log}"),
        ]);
    }
    paths.push("/v1/audit/entries?limit=10000".to_string());
    // Both nodes read the replica, which replays the primary's logs within moments.
    let want = agreed(&a, &b, &auditor, &paths);
    assert!(want[0].contains("/operator/op1") || want[1].contains("/operator/op1"));
    assert!(
        want[5].contains("/operator/op2"),
        "op2's checkpoint: {}",
        want[5]
    );

    // The primary gone: commands fail, every log's reads still come from the replica.
    pair.stop_primary();
    answered_without_primary(&[&a, &b], &auditor, &paths, &want);
    let (s, r) = a.post(&ops[0], "/v1/tables/t0/rounds", json!({}));
    assert_eq!(s, 503, "a command with the primary stopped: {r}");
}
