//! The plan endpoints a regulator reads, over real HTTP against the real binary.

use crate::server::TestServer;
use crate::source::plans_dir;

#[test]
fn a_regulator_lists_reads_and_compares_the_loaded_plans() {
    let server = TestServer::start(&plans_dir());

    let (status, _, health) = server.get("/healthz");
    assert_eq!(status, 200);
    assert_eq!(health["status"], "ok");

    let (status, _, list) = server.get("/v1/plans");
    assert_eq!(status, 200);
    let list = list.as_array().expect("a list");
    let roulette = list
        .iter()
        .find(|p| p["key"] == "evolution-roulette@1")
        .expect("the Evolution roulette plan is listed");
    assert_eq!(roulette["family"], "roulette");
    let expected_hash = crate::source::plan("evolution-roulette@1").hash;
    assert_eq!(roulette["sha256"], expected_hash.as_str());
    assert_eq!(health["plans"], list.len());

    let (status, _, doc) = server.get("/v1/plans/evolution-roulette@1");
    assert_eq!(status, 200);
    assert_eq!(doc["sha256"], expected_hash.as_str());
    let straight = doc["plan"]["bets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["id"] == "straight")
        .unwrap();
    assert_eq!(straight["max_win"], 35_000_000);

    // Without a version: the latest.
    let (status, _, latest) = server.get("/v1/plans/evolution-roulette");
    assert_eq!(status, 200);
    assert_eq!(latest["key"], "evolution-roulette@1");

    let (status, _, versions) = server.get("/v1/plans/evolution-roulette/versions");
    assert_eq!(status, 200);
    assert_eq!(versions.as_array().unwrap().len(), 1);

    let (status, _, d) =
        server.get("/v1/plan-diff?from=evolution-roulette@1&to=evolution-roulette@1");
    assert_eq!(status, 200);
    assert_eq!(d["changes"].as_array().unwrap().len(), 0);
}

#[test]
fn unknown_plans_and_bad_references_are_problem_documents() {
    let server = TestServer::start(&plans_dir());
    for (path, status, code) in [
        ("/v1/plans/no-such-plan", 404, "plan_not_found"),
        ("/v1/plans/evolution-roulette@9", 404, "plan_not_found"),
        ("/v1/plans/Bad%20Id", 400, "bad_plan_ref"),
        ("/v1/plans/evolution-roulette@0", 400, "bad_plan_ref"),
        (
            "/v1/plan-diff?from=evolution-roulette@1",
            400,
            "malformed_query",
        ),
        ("/v1/nothing-here", 404, "no_such_route"),
    ] {
        let (got, ctype, body) = server.get(path);
        assert_eq!(got, status, "{path}: {body}");
        assert_eq!(ctype, "application/problem+json", "{path}");
        assert_eq!(body["code"], code, "{path}: {body}");
        assert_eq!(body["status"], status, "{path}");
        assert!(
            body["detail"].as_str().is_some_and(|d| !d.is_empty()),
            "{path}"
        );
    }
}

#[test]
fn the_service_refuses_to_start_on_a_plan_with_errors() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(plans_dir().join("evolution-roulette@1.toml"))
        .unwrap()
        .replace("ratio = \"35:1\"", "ratio = \"36:1\"");
    std::fs::write(dir.path().join("evolution-roulette@1.toml"), text).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pitboss"))
        .arg("--plans")
        .arg(dir.path())
        .args(["serve", "--bind", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path().join("data"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("max_win_inconsistent"));
}

#[test]
fn the_first_start_prints_a_bootstrap_admin_key_once_and_it_works() {
    let storage = crate::server::Storage::new(crate::server::Backend::Sqlite);
    let mut first = TestServer::spawn(&plans_dir(), &storage, &[]);
    let admin = first
        .admin_key
        .clone()
        .expect("a bootstrap admin key is printed on first start");
    let operator = first.create_key(&admin, "operator", Some("op1"));
    assert!(operator.starts_with("pb_"));
    first.kill();
    // Only its hash was stored: the second start prints nothing and the key still works.
    let second = TestServer::spawn(&plans_dir(), &storage, &[]);
    assert_eq!(second.admin_key, None);
    second.create_key(&admin, "auditor", None);
    let (s, _, b) = second.post_raw(Some("pb_0000000000000000_00"), None, "/v1/admin/keys", "{}");
    assert_eq!((s, b["code"].as_str()), (401, Some("unauthorized")), "{b}");
}
