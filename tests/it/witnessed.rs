//! `pitboss serve` configured with a witness (`--witness-url`, `--witness-key`), the two as
//! processes of their own: each new checkpoint is sent, cosigned, stored and served (in
//! `/v1/audit/checkpoint`, proofs and exports); a bet's receipt plus its inclusion proof shows
//! the bet in a witnessed checkpoint; a log rewritten and re-signed with the operator's key is
//! refused by the witness and fails `verify --witness-key`; a log cut back fails against the
//! witness's later checkpoint; and a witness that is down delays cosigning, never bets.

use std::time::{Duration, Instant};

use pitboss::witness::client::{ClientError, WitnessClient};
use pitboss_audit::cosign::{cosigned_by, CosignerVerifier};
use pitboss_audit::note::{NoteVerifier, SignedCheckpoint};
use pitboss_audit::proof::{check_proof, InclusionProofFile};
use pitboss_audit::verify::Reason;
use serde_json::{json, Value};

use crate::server::{Backend, Storage, TestServer, ADMIN_KEY};
use crate::witness::{bet_round, endpoint_proofs, urlencode, verify, Witness};

const WITNESS: &str = "regulator.test/witness";

/// A free TCP port on the loopback (the witness is restarted on it).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// Polls `f` every 100 ms until it gives a value, for at most `within`.
fn eventually<T>(within: Duration, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(start.elapsed() < within, "{what}: not within {within:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn checkpoint(server: &TestServer, auditor: &str, query: &str) -> (u16, String) {
    server.get_text(Some(auditor), &format!("/v1/audit/checkpoint{query}"))
}

/// The latest witnessed checkpoint once it covers at least `size` entries.
fn witnessed_at_least(server: &TestServer, auditor: &str, size: u64) -> SignedCheckpoint {
    eventually(Duration::from_secs(45), "a witnessed checkpoint", || {
        let (s, note) = checkpoint(server, auditor, "?witnessed=true");
        (s == 200)
            .then(|| SignedCheckpoint::parse(&note).expect("note"))
            .filter(|cp| cp.checkpoint.size >= size)
    })
}

fn sign_now(server: &TestServer, auditor: &str) -> u64 {
    let (s, _, b) = server.post_raw(Some(auditor), None, "/v1/audit/checkpoint", "");
    assert_eq!(s, 200, "{b}");
    b["tree_size"].as_u64().expect("size")
}

/// The bytes of a POST's answer, as the client receives them.
fn post_bytes(
    server: &TestServer,
    key: &str,
    idem: &str,
    path: &str,
    body: &Value,
) -> (u16, Vec<u8>) {
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .new_agent();
    let mut resp = agent
        .post(&server.url(path))
        .header("Content-Type", "application/json")
        .header("Authorization", &format!("Bearer {key}"))
        .header("Idempotency-Key", idem)
        .send(body.to_string())
        .expect("HTTP");
    let status = resp.status().as_u16();
    (status, resp.body_mut().read_to_vec().expect("body"))
}

fn witness_metric(server: &TestServer, name: &str) -> u64 {
    server.metric(&format!("{name}{{witness=\"{WITNESS}\"}}"))
}

fn serve_with_a_witness_cosigns_proves_receipts_and_outlives_the_witness(backend: Backend) {
    let storage = Storage::new(backend);
    // The log's key and origin are fixed before it starts, so the witness can be told them.
    let key =
        pitboss::keyfile::load_or_create(&storage.data_dir().join("signing-key.pem")).expect("key");
    let origin = match &storage.pg {
        Some(pg) => format!("pitboss.test/{}", pg.name),
        None => "pitboss.test/witnessed".to_owned(),
    };
    let log_vkey = NoteVerifier::new(&origin, key.verifying_key())
        .expect("origin")
        .to_vkey();
    let wdir = tempfile::tempdir().expect("dir");
    let bind = format!("127.0.0.1:{}", free_port());
    let mut w = Witness::start_on(wdir.path(), WITNESS, std::slice::from_ref(&log_vkey), &bind);
    let witness: CosignerVerifier = w.verifier();
    let server = TestServer::spawn(
        &crate::source::rng_plans_dir(),
        &storage,
        &[
            ("PITBOSS_ADMIN_KEY", ADMIN_KEY),
            ("PITBOSS_LOG_ORIGIN", &origin),
            ("PITBOSS_WITNESS_URLS", &w.base),
            ("PITBOSS_WITNESS_VKEYS", &w.vkey),
            ("PITBOSS_WITNESS_TIMEOUT_S", "2"),
            // No snapshot entry on a timer: the test compares checkpoints of an idle log.
            ("PITBOSS_SNAPSHOT_INTERVAL_S", "3600"),
        ],
    );
    let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
    let auditor = server.create_key(ADMIN_KEY, "auditor", None);
    let pem = {
        let (s, pem) = server.get_text(None, "/v1/audit/public-key");
        assert_eq!(s, 200);
        pem
    };
    let (s, b) = server.post(
        &op,
        "/v1/tables",
        json!({"table": "t1", "plan": "evolution-roulette@1", "mode": "live"}),
    );
    assert_eq!(s, 201, "{b}");

    // A bet's reply carries its receipt; a retry with the same key gets the same bytes.
    let (s, b) = server.post(&op, "/v1/tables/t1/rounds", json!({}));
    assert_eq!(s, 201, "{b}");
    let round = b["round"].as_str().expect("round").to_owned();
    let bets = json!({"bets": [
        {"player": "alice", "bet": "straight", "numbers": [17], "stake_minor": 500},
        {"player": "bob", "bet": "red_black", "field": "red", "stake_minor": 1_000},
        {"player": "carol", "bet": "red_black", "field": "red", "stake_minor": 1},
    ]});
    let path = format!("/v1/rounds/{round}/bets");
    let (s, first) = post_bytes(&server, &op, "receipt-1", &path, &bets);
    assert_eq!(s, 200, "{}", String::from_utf8_lossy(&first));
    let (s, again) = post_bytes(&server, &op, "receipt-1", &path, &bets);
    assert_eq!(s, 200);
    assert_eq!(
        first, again,
        "an idempotent retry answers the same bytes, receipts included"
    );
    let reply: Value = serde_json::from_slice(&first).expect("json");
    let results = reply["results"].as_array().expect("results");
    let accepted: Vec<&Value> = results
        .iter()
        .filter(|r| r["status"] == "accepted")
        .collect();
    assert!(!accepted.is_empty(), "{reply}");
    for r in results {
        match r["status"].as_str() {
            Some("accepted") => assert!(r["receipt"]["seq"].is_u64(), "{r}"),
            _ => assert!(
                r.get("receipt").is_none(),
                "a refused bet has no receipt: {r}"
            ),
        }
    }
    let (s, b) = server.post(
        &op,
        &format!("/v1/rounds/{round}/events"),
        json!({"type": "close_betting"}),
    );
    assert_eq!(s, 200, "{b}");
    let (s, b) = server.post(
        &op,
        &format!("/v1/rounds/{round}/events"),
        json!({"type": "spin", "number": 17, "ball_against_rotation": true, "ball_revolutions": 5}),
    );
    assert_eq!(s, 200, "{b}");

    // The checkpoint is cosigned and served with the cosignature.
    let size = sign_now(&server, &auditor);
    let first_witnessed = witnessed_at_least(&server, &auditor, size);
    assert_eq!(first_witnessed.checkpoint.size, size);
    let by = cosigned_by(&first_witnessed, std::slice::from_ref(&witness)).expect("valid");
    assert_eq!(by.len(), 1, "{}", first_witnessed.to_text());
    let (s, latest) = checkpoint(&server, &auditor, "");
    assert_eq!(s, 200);
    assert_eq!(
        latest,
        first_witnessed.to_text(),
        "the latest checkpoint carries it too"
    );
    assert_eq!(
        witness_metric(&server, "pitboss_witness_cosigned_size"),
        size
    );
    assert!(witness_metric(&server, "pitboss_witness_cosignatures_total") >= 1);

    // The dispute: each receipt with its inclusion proof against the witnessed checkpoint.
    for r in &accepted {
        let seq = r["receipt"]["seq"].as_u64().expect("seq");
        let leaf_hash = r["receipt"]["leaf_hash"].as_str().expect("hash");
        let (s, _, proof) = server.get_as(
            Some(&auditor),
            &format!(
                "/v1/audit/proof/{seq}?size={}",
                first_witnessed.checkpoint.size
            ),
        );
        assert_eq!(s, 200, "{proof}");
        let proof: InclusionProofFile = serde_json::from_value(proof).expect("proof file");
        let checked = check_proof(
            &proof,
            &[pitboss_audit::note::public_key_from_pem(&pem).expect("pem")],
        )
        .expect("the proof checks against the log's key");
        assert_eq!((checked.seq, checked.kind.as_str()), (seq, "bet_accepted"));
        assert_eq!(
            checked.leaf_hash.to_hex(),
            leaf_hash,
            "the receipt names this entry"
        );
        let entry: Value = serde_json::from_str(&proof.entry).expect("entry");
        assert_eq!(entry["ids"]["bet"], r["bet"]);
        let cp = SignedCheckpoint::parse(&proof.checkpoint).expect("note");
        assert_eq!(
            cosigned_by(&cp, std::slice::from_ref(&witness))
                .expect("valid")
                .len(),
            1,
            "the proof's checkpoint is the witnessed one"
        );
    }
    // A size no checkpoint has is refused.
    let seq = accepted[0]["receipt"]["seq"].as_u64().expect("seq");
    let (s, _, b) = server.get_as(
        Some(&auditor),
        &format!("/v1/audit/proof/{seq}?size=999999"),
    );
    assert_eq!((s, b["code"].as_str()), (404, Some("no_checkpoint")), "{b}");

    // The witness goes down: bets go on, and its failures are counted.
    w.kill();
    let started = Instant::now();
    bet_round(&server, &op, "t1", 3);
    let down_size = sign_now(&server, &auditor);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "bets and checkpoints do not wait for a witness: {:?}",
        started.elapsed()
    );
    eventually(Duration::from_secs(20), "a failure counted", || {
        (witness_metric(&server, "pitboss_witness_failures_total") >= 1).then_some(())
    });
    let (s, note) = checkpoint(&server, &auditor, "?witnessed=true");
    assert_eq!(s, 200);
    assert_eq!(
        SignedCheckpoint::parse(&note)
            .expect("note")
            .checkpoint
            .size,
        size
    );
    let (s, note) = checkpoint(&server, &auditor, "");
    assert_eq!(s, 200);
    let unwitnessed = SignedCheckpoint::parse(&note).expect("note");
    assert_eq!(unwitnessed.checkpoint.size, down_size);
    assert!(cosigned_by(&unwitnessed, std::slice::from_ref(&witness))
        .expect("ok")
        .is_empty());
    // Back on the same address: the newest checkpoint is cosigned, with a consistency proof
    // from the size it cosigned last.
    let mut w = Witness::start_on(wdir.path(), WITNESS, std::slice::from_ref(&log_vkey), &bind);
    let second = witnessed_at_least(&server, &auditor, down_size);
    assert_eq!(
        witness_metric(&server, "pitboss_witness_cosigned_size"),
        second.checkpoint.size
    );

    // The export, once idle, ends in the witnessed checkpoint and verifies with its key.
    let (s, export) = server.get_text(Some(&auditor), "/v1/audit/export");
    assert_eq!(s, 200);
    let end = second.checkpoint.size;
    assert_eq!(
        verify(&export, &pem, &witness, None).expect("the served export verifies witnessed"),
        end
    );

    // History rewritten and re-signed with the operator's own key: no cosignature vouches for
    // it, and the witness refuses its checkpoint.
    let key_pem = std::fs::read_to_string(storage.data_dir().join("signing-key.pem")).expect("key");
    let settled: u64 = export
        .lines()
        .find(|l| l.contains("\"kind\":\"round_settled\""))
        .and_then(|l| serde_json::from_str::<Value>(l).ok())
        .and_then(|v| v["seq"].as_u64())
        .expect("a settlement");
    let rewritten = crate::trust::reseal(&export, &key_pem, |seq, _, p| {
        if seq == settled {
            p["settlements"][0]["win_minor"] = json!(123_456_789);
        }
    });
    let err = verify(&rewritten, &pem, &witness, None).expect_err("no witness cosigned it");
    assert_eq!(err.reason, Reason::NotWitnessed, "{err}");
    let v: Value = serde_json::from_str(rewritten.lines().last().expect("line")).expect("json");
    let forged = SignedCheckpoint::parse(v["checkpoint"].as_str().expect("note")).expect("cp");
    assert_eq!(forged.checkpoint.size, end);
    assert_ne!(forged.checkpoint.root, second.checkpoint.root);
    let proofs = endpoint_proofs(&server, &auditor);
    let mut client = WitnessClient::new(&w.base, witness.clone(), Duration::from_secs(10));
    let err = client
        .add_checkpoint(&forged, &proofs)
        .expect_err("refused");
    assert!(
        matches!(&err, ClientError::Refused { status: 409, detail, .. } if detail.starts_with("conflicting_root")),
        "{err}"
    );
    assert_eq!(w.evidence().last().expect("evidence")["kind"], "fork");

    // The log cut back at the first witnessed checkpoint: it verifies on its own (its last
    // checkpoint carries the cosignature the service stored) but not against the witness's
    // later checkpoint.
    let mut cut = String::new();
    for line in export.lines() {
        cut.push_str(line);
        cut.push('\n');
        if line.starts_with("{\"checkpoint\":") {
            let v: Value = serde_json::from_str(line).expect("json");
            let cp = SignedCheckpoint::parse(v["checkpoint"].as_str().expect("note")).expect("cp");
            if cp.checkpoint.size == size {
                break;
            }
        }
    }
    assert_eq!(
        verify(&cut, &pem, &witness, None).expect("a clean cut verifies alone"),
        size
    );
    let (s, latest) = w.get(&format!("/latest-checkpoint?origin={}", urlencode(&origin)));
    assert_eq!(s, 200, "{latest}");
    let latest = SignedCheckpoint::parse(&latest).expect("note");
    assert_eq!(latest.checkpoint.size, end);
    let err = verify(&cut, &pem, &witness, Some(latest.clone())).expect_err("cut back");
    assert_eq!(err.reason, Reason::Truncated, "{err}");
    verify(&export, &pem, &witness, Some(latest)).expect("the whole log extends it");

    w.kill();
    crate::replay::exported_log_verifies_and_replays(&server, &auditor);
}

#[test]
fn serve_with_a_witness_cosigns_proves_receipts_and_outlives_the_witness_sqlite() {
    serve_with_a_witness_cosigns_proves_receipts_and_outlives_the_witness(Backend::Sqlite);
}

#[test]
fn serve_with_a_witness_cosigns_proves_receipts_and_outlives_the_witness_postgres() {
    serve_with_a_witness_cosigns_proves_receipts_and_outlives_the_witness(Backend::Postgres);
}

#[test]
fn without_witnesses_no_checkpoint_is_witnessed_and_a_misconfiguration_stops_the_start() {
    let storage = Storage::new(Backend::Sqlite);
    let server = TestServer::on(&storage);
    let auditor = server.create_key(ADMIN_KEY, "auditor", None);
    let (s, _, b) = server.get_as(Some(&auditor), "/v1/audit/checkpoint?witnessed=true");
    assert_eq!((s, b["code"].as_str()), (404, Some("not_witnessed")), "{b}");
    let (s, _, b) = server.get_as(Some(&auditor), "/v1/audit/checkpoint?witnessed=maybe");
    assert_eq!(
        (s, b["code"].as_str()),
        (400, Some("malformed_query")),
        "{b}"
    );
    crate::replay::exported_log_verifies_and_replays_if_settled(&server, &auditor);
    drop(server);

    // A URL without its key is refused before anything starts.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pitboss"))
        .args(["serve", "--bind", "127.0.0.1:0", "--data-dir"])
        .arg(storage.data_dir())
        .args(["--witness-url", "http://127.0.0.1:9"])
        .env_remove("PITBOSS_WITNESS_VKEYS")
        .env_remove("PITBOSS_WITNESS_URLS")
        .env("PITBOSS_PLANS", crate::source::rng_plans_dir())
        .output()
        .expect("run");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("1 --witness-url and 0 --witness-key"), "{err}");
}
