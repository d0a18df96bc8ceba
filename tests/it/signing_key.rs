//! Rotating the log's signing key on a running service (`POST /v1/admin/signing-key/rotate`,
//! audit/FORMAT.md section 5): `begin` announces a new key and checkpoints are signed by both
//! (also across a restart), `end` retires the old one and the new key signs alone (also after a
//! restart, from the key files swapped); the export verifies with the initial key alone, and
//! with every key published.

use pitboss_audit::note::{public_key_from_pem, SignedCheckpoint};
use pitboss_audit::verify::{verify_export, Reason, VerifyOptions};
use pitboss_audit::VerifyingKey;
use serde_json::json;

use crate::server::{Backend, Storage, TestServer, ADMIN_KEY};
use crate::witness::bet_round;

fn rotate(server: &TestServer, stage: &str) -> (u16, serde_json::Value) {
    let (s, _, b) = server.post_raw(
        Some(ADMIN_KEY),
        None,
        "/v1/admin/signing-key/rotate",
        &json!({ "stage": stage }).to_string(),
    );
    (s, b)
}

/// Signs what is pending and returns the latest checkpoint.
fn latest(server: &TestServer, auditor: &str) -> SignedCheckpoint {
    let (s, _, b) = server.post_raw(Some(auditor), None, "/v1/audit/checkpoint", "");
    assert_eq!(s, 200, "{b}");
    let (s, note) = server.get_text(Some(auditor), "/v1/audit/checkpoint");
    assert_eq!(s, 200, "{note}");
    SignedCheckpoint::parse(&note).expect("note")
}

fn public_key(server: &TestServer) -> String {
    let (s, pem) = server.get_text(None, "/v1/audit/public-key");
    assert_eq!(s, 200);
    pem
}

fn verify(export: &str, anchors: &[VerifyingKey]) -> Result<u64, pitboss_audit::verify::Failure> {
    verify_export(
        export.as_bytes(),
        VerifyOptions {
            anchors: anchors.to_vec(),
            trusted: None,
            check_canonical: true,
            witnesses: Vec::new(),
            witness_quorum: 0,
        },
        |_| {},
    )
    .map(|s| s.entries)
}

fn the_signing_key_rotates_with_an_overlap_across_restarts(backend: Backend) {
    let storage = Storage::new(backend);
    let server = TestServer::on(&storage);
    let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
    let auditor = server.create_key(ADMIN_KEY, "auditor", None);
    let (s, b) = server.post(
        &op,
        "/v1/tables",
        json!({"table": "t1", "plan": "evolution-roulette@1", "mode": "live"}),
    );
    assert_eq!(s, 201, "{b}");
    bet_round(&server, &op, "t1", 2);
    let old_pem = public_key(&server);
    let old = public_key_from_pem(&old_pem).expect("pem");

    // Only an admin rotates; an end needs a begin.
    let (s, _, b) = server.post_raw(
        Some(&auditor),
        None,
        "/v1/admin/signing-key/rotate",
        r#"{"stage":"begin"}"#,
    );
    assert_eq!((s, b["code"].as_str()), (403, Some("forbidden")), "{b}");
    let (s, b) = rotate(&server, "end");
    assert_eq!(
        (s, b["code"].as_str()),
        (409, Some("no_rotation_open")),
        "{b}"
    );
    let (s, _, b) = server.post_raw(
        Some(ADMIN_KEY),
        None,
        "/v1/admin/signing-key/rotate",
        r#"{"stage":"sideways"}"#,
    );
    assert_eq!(
        (s, b["code"].as_str()),
        (400, Some("malformed_json")),
        "{b}"
    );

    // Begin: both keys sign; the public key is still the old one.
    let (s, begun) = rotate(&server, "begin");
    assert_eq!(s, 200, "{begun}");
    assert_eq!(begun["public_key"], old_pem.as_str());
    assert_ne!(begun["old_key"], begun["new_key"]);
    let new_vkey = begun["new_key"].as_str().expect("vkey").to_owned();
    let new = *pitboss_audit::note::NoteVerifier::from_vkey(&new_vkey)
        .expect("vkey")
        .key();
    assert!(storage.data_dir().join("signing-key.next.pem").exists());
    let (s, b) = rotate(&server, "begin");
    assert_eq!((s, b["code"].as_str()), (409, Some("rotation_open")), "{b}");
    let (s, _, e) = server.get_as(
        Some(&auditor),
        &format!("/v1/audit/entries?since={}&limit=1", begun["seq"]),
    );
    assert_eq!(s, 200);
    assert_eq!(e["entries"][0]["entry"]["kind"], "key_rotated", "{e}");
    bet_round(&server, &op, "t1", 2);
    let cp = latest(&server, &auditor);
    assert!(cp.signed_by(&old) && cp.signed_by(&new), "{}", cp.to_text());

    // The overlap survives a restart.
    drop(server);
    let server = TestServer::on(&storage);
    bet_round(&server, &op, "t1", 1);
    let cp = latest(&server, &auditor);
    assert!(cp.signed_by(&old) && cp.signed_by(&new), "{}", cp.to_text());

    // End: the new key signs alone and is the public key.
    let (s, ended) = rotate(&server, "end");
    assert_eq!(s, 200, "{ended}");
    assert_eq!(ended["new_key"], new_vkey.as_str());
    let new_pem = public_key(&server);
    assert_eq!(ended["public_key"], new_pem.as_str());
    assert_eq!(public_key_from_pem(&new_pem).expect("pem"), new);
    bet_round(&server, &op, "t1", 2);
    let cp = latest(&server, &auditor);
    assert!(
        cp.signed_by(&new) && !cp.signed_by(&old),
        "{}",
        cp.to_text()
    );
    let (s, b) = rotate(&server, "end");
    assert_eq!(
        (s, b["code"].as_str()),
        (409, Some("no_rotation_open")),
        "{b}"
    );

    // After a restart the new key, now at the signing key's path, goes on; the old is kept.
    drop(server);
    assert!(!storage.data_dir().join("signing-key.next.pem").exists());
    let kept = std::fs::read_dir(storage.data_dir())
        .expect("dir")
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("signing-key.retired-")
        })
        .count();
    assert_eq!(kept, 1, "the retired key is kept");
    let server = TestServer::on(&storage);
    assert_eq!(public_key(&server), new_pem);
    bet_round(&server, &op, "t1", 1);
    let cp = latest(&server, &auditor);
    assert!(
        cp.signed_by(&new) && !cp.signed_by(&old),
        "{}",
        cp.to_text()
    );

    // The export: the initial key alone learns the new one from the log; every published key
    // verifies the same; the new key alone cannot vouch for what the old one signed.
    let (s, export) = server.get_text(Some(&auditor), "/v1/audit/export");
    assert_eq!(s, 200);
    let size = cp.checkpoint.size;
    assert_eq!(verify(&export, &[old]).expect("the initial key"), size);
    assert_eq!(verify(&export, &[new, old]).expect("every key"), size);
    let err = verify(&export, &[new]).expect_err("a later key alone");
    assert_eq!(err.reason, Reason::UnknownKey, "{err}");
    crate::replay::exported_log_verifies_and_replays_with_keys(
        &server,
        &auditor,
        &crate::source::rng_plans_dir(),
        &[old],
    );
}

#[test]
fn the_signing_key_rotates_with_an_overlap_across_restarts_sqlite() {
    the_signing_key_rotates_with_an_overlap_across_restarts(Backend::Sqlite);
}

#[test]
fn the_signing_key_rotates_with_an_overlap_across_restarts_postgres() {
    the_signing_key_rotates_with_an_overlap_across_restarts(Backend::Postgres);
}
