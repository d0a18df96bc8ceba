//! Key lifecycle (issue 18): keys are listed without their secrets, revoked (refused from the
//! next request on), rotated (the old key keeps working for the overlap, then stops), given an
//! expiry; their last use is shown; every change is a log entry (`api_key_*`) that names who
//! made it, and never a secret.

use serde_json::{json, Value};

use crate::server::{Backend, Storage, TestServer, ADMIN_KEY};

fn key_id(key: &str) -> String {
    key.split('_').nth(1).expect("pb_<id>_<secret>").to_string()
}

fn post(server: &TestServer, key: &str, path: &str, body: Value) -> (u16, Value) {
    let (s, _, b) = server.post_raw(Some(key), None, path, &body.to_string());
    (s, b)
}

fn list(server: &TestServer, key: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut after = String::new();
    loop {
        let (s, _, b) = server.get_as(Some(key), &format!("/v1/admin/keys?limit=2&after={after}"));
        assert_eq!(s, 200, "{b}");
        out.extend(b["keys"].as_array().expect("keys").iter().cloned());
        match b["next"].as_str() {
            Some(n) => after = n.to_string(),
            None => return out,
        }
    }
}

fn key_lifecycle(backend: Backend) {
    let storage = Storage::new(backend);
    let mut server = TestServer::on(&storage);
    let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
    let op2 = server.create_key(ADMIN_KEY, "operator", Some("op2"));
    let auditor = server.create_key(ADMIN_KEY, "auditor", None);
    // An authenticated key gets 404 for a table nobody opened; a refused one 401.
    let ok = |server: &TestServer, key: &str| server.get_as(Some(key), "/v1/tables/zz").0 == 404;
    assert!(ok(&server, &op));

    // Listed, paged, without secrets; an operator sees only its own operator's keys.
    let all = list(&server, ADMIN_KEY);
    assert_eq!(all.len(), 4, "{all:?}");
    let text = serde_json::to_string(&all).unwrap();
    assert!(!text.contains(op.rsplit('_').next().unwrap()), "no secret");
    let mine = list(&server, &op);
    assert_eq!(mine.len(), 1);
    assert_eq!(mine[0]["key_id"], key_id(&op));
    assert!(mine[0]["last_used_at"].is_string(), "{mine:?}");
    let (s, _, b) = server.get_as(Some(&auditor), "/v1/admin/keys");
    assert_eq!((s, b["code"].as_str()), (403, Some("forbidden")));

    // Revoked: refused at once; another operator cannot revoke it (it is not theirs).
    let (s, b) = post(
        &server,
        &op2,
        &format!("/v1/admin/keys/{}/revoke", key_id(&op)),
        json!({"reason": "not mine"}),
    );
    assert_eq!((s, b["code"].as_str()), (404, Some("key_not_found")), "{b}");
    let (s, b) = post(
        &server,
        ADMIN_KEY,
        &format!("/v1/admin/keys/{}/revoke", key_id(&op)),
        json!({"reason": "leaked in a ticket"}),
    );
    assert_eq!(s, 200, "{b}");
    let (s, _, b) = server.get_as(Some(&op), "/v1/tables/zz");
    assert_eq!(s, 401, "{b}");
    assert!(b["detail"].as_str().unwrap().contains("revoked"), "{b}");
    let (s, b) = post(
        &server,
        ADMIN_KEY,
        &format!("/v1/admin/keys/{}/revoke", key_id(&op)),
        json!({"reason": "again"}),
    );
    assert_eq!((s, b["code"].as_str()), (409, Some("key_revoked")), "{b}");

    // Rotated by its own operator: the new key works, the old one until the overlap ends.
    let (s, b) = post(
        &server,
        &op2,
        &format!("/v1/admin/keys/{}/rotate", key_id(&op2)),
        json!({"overlap_s": 2}),
    );
    assert_eq!(s, 201, "{b}");
    let new2 = b["key"].as_str().expect("key").to_string();
    assert_eq!(b["replaces"], key_id(&op2));
    assert!(ok(&server, &new2));
    assert!(ok(&server, &op2), "the old key works during the overlap");
    std::thread::sleep(std::time::Duration::from_millis(2_500));
    let (s, _, b) = server.get_as(Some(&op2), "/v1/tables/zz");
    assert_eq!(s, 401, "{b}");
    assert!(b["detail"].as_str().unwrap().contains("expired"), "{b}");
    assert!(ok(&server, &new2));

    // A key with an expiry; one in the past is refused.
    let (s, b) = post(
        &server,
        ADMIN_KEY,
        "/v1/admin/keys",
        json!({"role": "auditor", "expires_at": "2020-01-01T00:00:00Z"}),
    );
    assert_eq!((s, b["code"].as_str()), (400, Some("bad_expiry")), "{b}");
    let (s, b) = post(
        &server,
        ADMIN_KEY,
        "/v1/admin/keys",
        json!({"role": "auditor", "expires_at": "2999-01-01T00:00:00Z"}),
    );
    assert_eq!(s, 201, "{b}");

    // All of it survives a restart.
    server.kill();
    let server = TestServer::on(&storage);
    assert_eq!(server.get_as(Some(&op), "/v1/tables/zz").0, 401);
    assert_eq!(server.get_as(Some(&op2), "/v1/tables/zz").0, 401);
    assert!(ok(&server, &new2));
    let all = list(&server, ADMIN_KEY);
    let by_id = |id: &str| all.iter().find(|k| k["key_id"] == id).cloned().unwrap();
    assert!(by_id(&key_id(&op))["revoked_at"].is_string());
    assert_eq!(by_id(&key_id(&op2))["replaced_by"], key_id(&new2));
    assert!(by_id(&key_id(&op2))["expires_at"].is_string());

    // The log holds every change, with who made it, and no secret.
    let (s, export) = server.get_text(Some(&auditor), "/v1/audit/export");
    assert_eq!(s, 200);
    let entries: Vec<Value> = export
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &Value| {
            v["kind"]
                .as_str()
                .is_some_and(|k| k.starts_with("api_key_"))
        })
        .collect();
    let kinds: Vec<&str> = entries
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == "api_key_created").count(),
        6,
        "bootstrap admin, three keys, the rotation's new key, the expiring auditor: {kinds:?}"
    );
    assert!(kinds.contains(&"api_key_revoked") && kinds.contains(&"api_key_expiry_set"));
    for e in &entries {
        assert!(e["payload"]["by"].is_string(), "{e}");
        for k in [&op, &op2, &new2] {
            assert!(
                !e.to_string().contains(k.rsplit('_').next().unwrap()),
                "{e}"
            );
        }
    }
    let revoked = entries
        .iter()
        .find(|e| e["kind"] == "api_key_revoked")
        .unwrap();
    assert_eq!(
        revoked["payload"]["by"],
        format!("key:{}", key_id(ADMIN_KEY))
    );
    assert_eq!(revoked["payload"]["reason"], "leaked in a ticket");
    let rotated = entries
        .iter()
        .find(|e| e["kind"] == "api_key_created" && e["payload"]["replaces"].is_string())
        .unwrap();
    assert_eq!(rotated["payload"]["by"], format!("key:{}", key_id(&op2)));
    crate::replay::exported_log_verifies_and_replays_if_settled(&server, &auditor);
}

#[test]
fn keys_are_listed_revoked_rotated_and_expire_every_change_logged_sqlite() {
    key_lifecycle(Backend::Sqlite);
}

#[test]
fn keys_are_listed_revoked_rotated_and_expire_every_change_logged_postgres() {
    key_lifecycle(Backend::Postgres);
}
