//! One writer per log (issue 18): a second `pitboss serve` on a database another one writes
//! refuses to start, naming the holder, and the first keeps answering; on PostgreSQL a writer
//! whose lease was taken over commits nothing more (the fencing token), and a restart after a
//! crash takes the lease over at once.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::server::{Backend, Storage, TestServer, ADMIN_KEY};

/// Runs a (second) `pitboss serve` on `storage` that is expected to refuse to start; returns
/// its exit code and stderr (panics if it still runs after 20 s).
pub fn serve_to_exit(storage: &Storage) -> (Option<i32>, String) {
    serve_to_exit_with(storage, &[])
}

/// [`serve_to_exit`] with more environment for the server.
pub fn serve_to_exit_with(storage: &Storage, env: &[(&str, &str)]) -> (Option<i32>, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pitboss"));
    cmd.arg("--plans")
        .arg(crate::source::rng_plans_dir())
        .args(["serve", "--bind", "127.0.0.1:0", "--data-dir"])
        .arg(storage.data_dir())
        .env_remove("DATABASE_URL")
        .env("PITBOSS_RTP_ROUNDS", "0")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(pg) = &storage.pg {
        let name = pg.url.rsplit('/').next().unwrap_or("pg");
        cmd.args(["--database-url", &pg.url])
            .args(["--origin", &format!("pitboss.test/{name}")]);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let mut err = String::new();
            use std::io::Read;
            child
                .stderr
                .take()
                .expect("stderr")
                .read_to_string(&mut err)
                .expect("read stderr");
            return (status.code(), err);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("pitboss serve on this test's store is still running after 20 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn open_table(server: &TestServer, op: &str, table: &str) -> (u16, serde_json::Value) {
    server.post(
        op,
        "/v1/tables",
        json!({"table": table, "plan": "evolution-roulette@1", "mode": "live"}),
    )
}

fn a_second_writer_refuses_to_start(backend: Backend) {
    let storage = Storage::new(backend);
    let server = TestServer::on(&storage);
    let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
    let (s, b) = open_table(&server, &op, "t1");
    assert_eq!(s, 201, "{b}");
    let (code, err) = serve_to_exit(&storage);
    assert_ne!(code, Some(0), "{err}");
    assert!(
        err.contains("being written by another pitboss serve")
            && err.contains(&format!("pid {}", server.pid())),
        "the refusal names the holder: {err}"
    );
    // The first keeps answering and writing.
    let (s, b) = open_table(&server, &op, "t2");
    assert_eq!(s, 201, "{b}");
    let (s, _, h) = server.get("/healthz");
    assert_eq!(s, 200, "{h}");
}

#[test]
fn a_second_writer_refuses_to_start_sqlite() {
    a_second_writer_refuses_to_start(Backend::Sqlite);
}

#[test]
fn a_second_writer_refuses_to_start_postgres() {
    a_second_writer_refuses_to_start(Backend::Postgres);
}

/// A node whose lease another node took over commits nothing: its batch is refused (503,
/// nothing recorded), the log does not grow, and it stops (exit code 75); a restart takes the
/// lease back once the other's has run out.
#[test]
fn a_writer_whose_lease_was_taken_over_commits_nothing_postgres() {
    use diesel::RunQueryDsl;
    let storage = Storage::new(Backend::Postgres);
    let mut server = TestServer::on(&storage);
    let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
    let (s, b) = open_table(&server, &op, "t1");
    assert_eq!(s, 201, "{b}");
    let (_, _, h) = server.get("/healthz");
    let size = h["log_entries"].as_u64().expect("log_entries");
    let url = pitboss::store::DatabaseUrl::Postgres(storage.pg.as_ref().expect("pg").url.clone());
    let mut conn = pitboss::store::connect(&url).expect("connect");
    // Another node takes the lease over (as after this one's lease ran out).
    let n = diesel::sql_query(
        "UPDATE writer_lease SET token = token + 1, holder = 'pid 1 on another-host since now'",
    )
    .execute(&mut conn)
    .expect("take the lease over");
    assert_eq!(n, 1);
    let (s, b) = open_table(&server, &op, "t2");
    assert_eq!(s, 503, "{b}");
    // Fenced, it stops (issue 17: a supervisor restarts it, as a standby with --node-url).
    assert_eq!(server.wait_exit(Duration::from_secs(10)), Some(Some(75)));
    #[derive(diesel::QueryableByName)]
    struct Count {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let stored: Vec<Count> = diesel::sql_query("SELECT count(*) AS n FROM audit_entries")
        .load(&mut conn)
        .expect("count entries");
    assert_eq!(stored[0].n as u64, size, "nothing was appended");
    // The other node's lease is live: a new node refuses to start while it lasts.
    server.kill();
    let (code, err) = serve_to_exit(&storage);
    assert_ne!(code, Some(0), "{err}");
    assert!(err.contains("another-host"), "{err}");
    // Once it has run out, a new node takes the log over and writes it.
    diesel::sql_query("UPDATE writer_lease SET expires_at = now() - interval '1 second'")
        .execute(&mut conn)
        .expect("let the lease run out");
    let server = TestServer::on(&storage);
    let (s, b) = open_table(&server, &op, "t2");
    assert_eq!(s, 201, "{b}");
}
