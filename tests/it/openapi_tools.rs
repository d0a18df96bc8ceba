//! The API description read by tools that know nothing of pitboss, as an operator's team
//! would use them: Redocly CLI lints it (0 errors), openapi-python-client generates a client
//! that plays a roulette round and a blackjack round against the real binary, and schemathesis
//! drives every operation with generated requests and finds no server error, no reply outside
//! the schema and no undocumented status.
//!
//! `.ci/run` installs the tools (a virtualenv under `target/`, and npx); a test whose tool is
//! absent says so and passes, since `cargo test` alone must run on a machine with Rust only.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::server::{Backend, Storage, TestServer, ADMIN_KEY};

fn repo_file(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// An executable on `PATH`.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// The Python beside a tool installed in a virtualenv (the one that has its libraries), or
/// the system's.
fn python_beside(tool: &Path) -> PathBuf {
    tool.parent()
        .map(|bin| bin.join("python3"))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("python3"))
}

fn skip(tool: &str, how: &str) {
    eprintln!("SKIPPED: {tool} is not installed; {how} (.ci/run installs it)");
}

fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{text}",
        out.status
    );
    text
}

#[test]
fn the_description_passes_an_independent_linter() {
    let Some(npx) = on_path("npx") else {
        return skip("npx (Node.js)", "Redocly CLI runs through it");
    };
    let text = run(
        Command::new(npx).current_dir(repo_file("openapi")).args([
            "--yes",
            "@redocly/cli@2.77.0",
            "lint",
            "openapi.json",
            "--config",
            "redocly.yaml",
            "--format",
            "stylish",
        ]),
        "redocly lint openapi/openapi.json",
    );
    assert!(text.contains("Your API description is valid"), "{text}");
    // A finding is a `line:column  severity  rule  message` line.
    let findings: Vec<&str> = text
        .lines()
        .filter(|l| {
            l.trim_start().starts_with(|c: char| c.is_ascii_digit())
                && (l.contains(" warning ") || l.contains(" error "))
        })
        .collect();
    assert!(
        findings.is_empty(),
        "Redocly finds:\n{}",
        findings.join("\n")
    );
}

#[test]
fn a_generated_python_client_plays_a_roulette_and_a_blackjack_round() {
    let Some(generator) = on_path("openapi-python-client") else {
        return skip("openapi-python-client", "pip install openapi-python-client");
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("config.yaml");
    // No formatter runs over the generated code: what the generator writes is what is tested.
    std::fs::write(&config, "post_hooks: []\n").expect("config");
    let text = run(
        Command::new(&generator)
            .current_dir(dir.path())
            .args([
                "generate",
                "--meta",
                "none",
                "--output-path",
                "pitboss_client",
            ])
            .arg("--path")
            .arg(repo_file("openapi/openapi.json"))
            .arg("--config")
            .arg(&config),
        "openapi-python-client generate",
    );
    // The generator leaves out only what it cannot type at all: the two text downloads
    // (the JSONL export, the PEM key).
    let warnings: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("WARNING"))
        .filter(|l| {
            !l.contains("GET /v1/audit/export")
                && !l.contains("GET /v1/audit/public-key")
                // A regulator's signed note is posted as the note's text.
                && !l.contains("POST /v1/plan-approvals/note")
        })
        .collect();
    assert!(warnings.is_empty(), "the generator warns:\n{text}");
    assert!(!text.contains("duplicate models"), "{text}");

    let storage = Storage::new(Backend::Sqlite);
    let server = TestServer::on(&storage);
    let out = run(
        Command::new(python_beside(&generator))
            .arg(repo_file("tests/clients/play_rounds.py"))
            .arg("--client-dir")
            .arg(dir.path())
            .args(["--base-url", &server.base, "--admin-key", ADMIN_KEY]),
        "tests/clients/play_rounds.py",
    );
    assert!(
        out.contains("OK roulette") && out.contains("OK blackjack"),
        "{out}"
    );
}

/// schemathesis against a server holding a table with an open round (the description's
/// examples name `t1` and `t1.1`), once as an operator over every operation and once as an
/// auditor over the audit log, with every check but what `tests/clients/schemathesis.toml`
/// turns off and says why: no server error, every status documented, every reply of its
/// declared content type and schema, undeclared methods answered 405, schema-invalid requests
/// refused.
#[test]
fn schemathesis_finds_no_server_error_and_no_reply_outside_the_description() {
    let Some(schemathesis) = on_path("schemathesis") else {
        return skip("schemathesis", "pip install schemathesis");
    };
    let storage = Storage::new(Backend::Sqlite);
    // Schemathesis sends many requests without a key from one address: the per-source
    // budget of failed authentications (429 once used up) would hide the 401 it checks for.
    let server = TestServer::spawn(
        &crate::source::rng_plans_dir(),
        &storage,
        &[
            ("PITBOSS_ADMIN_KEY", ADMIN_KEY),
            ("PITBOSS_LIMIT_AUTH_FAILURES", "0"),
        ],
    );
    let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
    let auditor = server.create_key(ADMIN_KEY, "auditor", None);
    let (s, b) = server.post(
        &op,
        "/v1/tables",
        serde_json::json!({"table": "t1", "plan": "alg-roulette@1", "mode": "live"}),
    );
    assert_eq!(s, 201, "{b}");
    let (s, b) = server.post(&op, "/v1/tables/t1/rounds", serde_json::json!({}));
    assert_eq!(s, 201, "{b}");
    let settings = ["--workers", "1", "--max-examples", "25", "--seed", "1"];
    // schemathesis keeps a cache in its working directory: not in the repository.
    let work = tempfile::tempdir().expect("temp dir");
    for (key, filter) in [(&op, None), (&auditor, Some("audit"))] {
        let mut cmd = Command::new(&schemathesis);
        cmd.current_dir(work.path())
            .arg("--config-file")
            .arg(repo_file("tests/clients/schemathesis.toml"))
            .arg("run")
            .arg(repo_file("openapi/openapi.json"))
            .args(["--url", &server.base])
            .args(["--header", &format!("Authorization: Bearer {key}")])
            .args(settings)
            .env("NO_COLOR", "1");
        if let Some(tag) = filter {
            cmd.args(["--include-tag", tag]);
        }
        let text = run(&mut cmd, "schemathesis run");
        assert!(text.contains("passed"), "{text}");
    }
}
