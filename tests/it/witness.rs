//! `pitboss witness` as a process of its own (C2SP tlog-witness): every answer the spec defines,
//! durability across SIGKILL, evidence of forks and rollbacks, the witness client, and a witness
//! beside `pitboss serve`: checkpoints cosigned, a log rewritten and re-signed with the
//! operator's key refused, a log cut back failing against the witnessed checkpoint.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use pitboss::witness::client::{ClientError, WitnessClient};
use pitboss_audit::cosign::CosignerVerifier;
use pitboss_audit::entry::{EntryKind, NewEntry, Timestamp};
use pitboss_audit::hash::Hash;
use pitboss_audit::log::Appender;
use pitboss_audit::merkle::consistency_proof;
use pitboss_audit::note::{NoteSigner, NoteVerifier, SignedCheckpoint};
use pitboss_audit::verify::{verify_export, Reason, VerifyOptions};
use pitboss_audit::witness::format_add_checkpoint;
use serde_json::{json, Value};

use crate::server::{Backend, Storage, TestServer, ADMIN_KEY};

const ORIGIN: &str = "pitboss.test/witnessed-log";

pub(crate) struct Witness {
    child: Child,
    pub(crate) base: String,
    pub(crate) vkey: String,
    data: PathBuf,
}

impl Witness {
    fn start(data: &Path, name: &str, log_keys: &[String]) -> Witness {
        Witness::start_on(data, name, log_keys, "127.0.0.1:0")
    }

    /// A witness listening on `bind` (a fixed port lets a test restart it where a log expects it).
    pub(crate) fn start_on(data: &Path, name: &str, log_keys: &[String], bind: &str) -> Witness {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pitboss"));
        cmd.args(["witness", "serve", "--bind", bind, "--data-dir"])
            .arg(data)
            .args(["--name", name])
            .env_remove("PITBOSS_WITNESS_KEY")
            .env_remove("PITBOSS_WITNESS_NAME")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for k in log_keys {
            cmd.args(["--log-key", k]);
        }
        let mut child = cmd.spawn().expect("spawn pitboss witness");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let mut vkey = None;
        let base = loop {
            match lines.next() {
                Some(Ok(l)) => {
                    if let Some(k) = l.strip_prefix("witness key: ") {
                        vkey = Some(k.trim().to_owned());
                    }
                    if let Some(a) = l.strip_prefix("listening on ") {
                        break a.trim().to_owned();
                    }
                }
                _ => {
                    let _ = child.kill();
                    panic!("pitboss witness exited before listening");
                }
            }
        };
        std::thread::spawn(move || for _ in lines {});
        Witness {
            child,
            base,
            vkey: vkey.expect("the witness prints its key"),
            data: data.to_path_buf(),
        }
    }

    pub(crate) fn verifier(&self) -> CosignerVerifier {
        CosignerVerifier::from_vkey(&self.vkey).expect("a witness vkey")
    }

    fn post(&self, body: &str) -> (u16, String, String) {
        let mut resp = agent()
            .post(&format!("{}/add-checkpoint", self.base))
            .send(body)
            .expect("HTTP");
        let status = resp.status().as_u16();
        let ctype = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        (
            status,
            ctype,
            resp.body_mut().read_to_string().unwrap_or_default(),
        )
    }

    pub(crate) fn get(&self, path: &str) -> (u16, String) {
        let mut resp = agent()
            .get(&format!("{}{path}", self.base))
            .call()
            .expect("HTTP");
        let status = resp.status().as_u16();
        (status, resp.body_mut().read_to_string().unwrap_or_default())
    }

    pub(crate) fn evidence(&self) -> Vec<Value> {
        let (s, b) = self.get("/evidence");
        assert_eq!(s, 200, "{b}");
        let v: Value = serde_json::from_str(&b).expect("json");
        v["evidence"].as_array().expect("array").clone()
    }

    pub(crate) fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Witness {
    fn drop(&mut self) {
        self.kill();
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .new_agent()
}

fn log_signer(label: &str) -> NoteSigner {
    use sha2::Digest;
    let seed: [u8; 32] = sha2::Sha256::digest(format!("witness test log key {label}")).into();
    NoteSigner::new(ORIGIN, pitboss_audit::SigningKey::from_bytes(&seed)).expect("name")
}

/// A log of `n` entries (entry `fork_at` written differently), its leaf hashes and a checkpoint
/// of every size, signed by `signer`.
struct Log {
    leaves: Vec<Hash>,
    checkpoints: Vec<SignedCheckpoint>,
}

fn log(n: u64, fork_at: Option<u64>, signer: &NoteSigner) -> Log {
    let mut app = Appender::new(ORIGIN, std::slice::from_ref(signer.verifier())).expect("origin");
    let mut leaves = Vec::new();
    let mut checkpoints = vec![app.checkpoint(std::slice::from_ref(signer)).expect("signs")];
    for i in 0..n {
        let ts = Timestamp::from_unix_micros(1_767_225_600_000_000 + i as i64).expect("ts");
        let note = if fork_at == Some(i) { "forked" } else { "" };
        let e = NewEntry::new(ts, EntryKind::BetAccepted, json!({"i": i, "note": note}));
        leaves.extend(
            app.seal(vec![e])
                .expect("seals")
                .iter()
                .map(|e| e.leaf_hash),
        );
        checkpoints.push(app.checkpoint(std::slice::from_ref(signer)).expect("signs"));
    }
    Log {
        leaves,
        checkpoints,
    }
}

fn body(old: u64, proof: &[Hash], cp: &SignedCheckpoint) -> String {
    format_add_checkpoint(old, proof, cp)
}

fn problem_code(text: &str) -> String {
    serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|v| v["code"].as_str().map(str::to_owned))
        .unwrap_or_default()
}

#[test]
fn the_witness_answers_add_checkpoint_as_the_spec_says_and_keeps_evidence_durably() {
    let dir = tempfile::tempdir().expect("dir");
    let signer = log_signer("L");
    let vkey = signer.verifier().to_vkey();
    let mut w = Witness::start(dir.path(), "witness.test/w1", std::slice::from_ref(&vkey));
    let witness = w.verifier();
    assert_eq!(witness.name(), "witness.test/w1");
    let l = log(12, None, &signer);
    let cp = |n: usize| &l.checkpoints[n];

    // 400: malformed.
    let (s, ctype, text) = w.post("old 01\n\n");
    assert_eq!(
        (s, problem_code(&text).as_str()),
        (400, "malformed"),
        "{text}"
    );
    assert!(ctype.starts_with("application/problem+json"), "{ctype}");
    // 404: unknown origin.
    let stranger = NoteSigner::new(
        "other.example/log",
        pitboss_audit::SigningKey::from_bytes(&[7; 32]),
    )
    .expect("name");
    let mut elsewhere = cp(5).checkpoint.clone();
    elsewhere.origin = "other.example/log".into();
    let other_cp = SignedCheckpoint::sign(elsewhere, &[stranger]);
    let (s, _, text) = w.post(&body(0, &[], &other_cp));
    assert_eq!(
        (s, problem_code(&text).as_str()),
        (404, "unknown_log"),
        "{text}"
    );
    // 403: signed by a key the witness does not trust for the origin, or a bad signature.
    let forged = SignedCheckpoint::sign(cp(5).checkpoint.clone(), &[log_signer("M")]);
    let (s, _, text) = w.post(&body(0, &[], &forged));
    assert_eq!(
        (s, problem_code(&text).as_str()),
        (403, "bad_log_signature"),
        "{text}"
    );
    let mut bad = cp(5).clone();
    bad.signatures[0].signature[3] ^= 1;
    assert_eq!(w.post(&body(0, &[], &bad)).0, 403);
    // 400: old size above the checkpoint's.
    assert_eq!(w.post(&body(6, &[], cp(5))).0, 400);
    // 200: the first checkpoint, from 0 with no proof.
    let (s, ctype, text) = w.post(&body(0, &[], cp(5)));
    assert_eq!(s, 200, "{text}");
    assert!(ctype.starts_with("text/plain"), "{ctype}");
    let lines = pitboss_audit::witness::parse_cosignature_lines(text.as_bytes()).expect("lines");
    let ts = witness
        .verify(&cp(5).checkpoint, &lines[0])
        .expect("a valid cosignature");
    let now = chrono::Utc::now().timestamp() as u64;
    assert!(ts <= now && ts + 60 > now, "timestamped now: {ts}");
    // 409: the client's old size is not the witness's; the body is its size.
    let (s, ctype, text) = w.post(&body(0, &[], cp(9)));
    assert_eq!(
        (s, ctype.as_str(), text.as_str()),
        (409, "text/x.tlog.size", "5\n")
    );
    // 422: a proof that does not connect 5 to 9 (recorded as evidence).
    let good = consistency_proof(&l.leaves, 5, 9).expect("proof");
    let mut wrong = good.clone();
    wrong[0] = Hash([9; 32]);
    let (s, _, text) = w.post(&body(5, &wrong, cp(9)));
    assert_eq!(
        (s, problem_code(&text).as_str()),
        (422, "inconsistent"),
        "{text}"
    );
    // 200 with the right proof; again for the same checkpoint (a fresh cosignature).
    assert_eq!(w.post(&body(5, &good, cp(9))).0, 200);
    assert_eq!(w.post(&body(9, &[], cp(9))).0, 200);
    // A fork: the same key signs another tree of the same size.
    let fork = log(12, Some(7), &signer);
    let (s, _, text) = w.post(&body(9, &[], &fork.checkpoints[9]));
    assert_eq!(
        (s, problem_code(&text).as_str()),
        (409, "conflicting_root"),
        "{text}"
    );
    // A rollback: a smaller tree it never cosigned. An old checkpoint it did cosign is no
    // conflict and is not recorded.
    assert_eq!(w.post(&body(9, &[], &fork.checkpoints[8])).0, 400);
    assert_eq!(w.post(&body(0, &[], &fork.checkpoints[8])).0, 409);
    assert_eq!(w.post(&body(9, &[], cp(5))).0, 400);
    let evidence = w.evidence();
    let kinds: Vec<&str> = evidence
        .iter()
        .map(|e| e["kind"].as_str().expect("kind"))
        .collect();
    assert_eq!(
        kinds,
        ["inconsistent", "fork", "rollback", "rollback"],
        "{evidence:?}"
    );
    let f = &evidence[1];
    assert_eq!(f["witnessed_size"], 9);
    assert!(
        f["witnessed_note"]
            .as_str()
            .expect("note")
            .starts_with(&cp(9).checkpoint.text()),
        "{f}"
    );
    assert_eq!(
        f["submitted_note"].as_str(),
        Some(fork.checkpoints[9].to_text().as_str())
    );
    // The last cosigned checkpoint, with the witness's cosignature.
    let (s, note) = w.get(&format!("/latest-checkpoint?origin={}", urlencode(ORIGIN)));
    assert_eq!(s, 200, "{note}");
    let latest = SignedCheckpoint::parse(&note).expect("a note");
    assert_eq!(latest.checkpoint, cp(9).checkpoint);
    assert_eq!(
        pitboss_audit::cosigned_by(&latest, std::slice::from_ref(&witness))
            .expect("valid")
            .len(),
        1
    );
    assert_eq!(w.get("/latest-checkpoint?origin=nobody").0, 404);
    assert_eq!(w.get("/latest-checkpoint").0, 400);
    // Durable: killed at once, restarted, it still knows size 9.
    w.kill();
    let mut w = Witness::start(dir.path(), "witness.test/w1", std::slice::from_ref(&vkey));
    assert_eq!(
        w.vkey,
        witness.to_vkey(),
        "same key and name after a restart"
    );
    let (s, _, text) = w.post(&body(0, &[], cp(12)));
    assert_eq!((s, text.as_str()), (409, "9\n"));
    // The CLI lists the same evidence from the store.
    let out = Command::new(env!("CARGO_BIN_EXE_pitboss"))
        .args(["witness", "evidence", "--data-dir"])
        .arg(&w.data)
        .output()
        .expect("runs");
    assert!(out.status.success());
    let listed: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(listed, evidence);
    w.kill();
    // The name is part of the key id: it cannot change.
    let out = Command::new(env!("CARGO_BIN_EXE_pitboss"))
        .args(["witness", "key", "--data-dir"])
        .arg(dir.path())
        .args(["--name", "witness.test/renamed"])
        .output()
        .expect("runs");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("part of its key id"));
}

pub(crate) fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[test]
fn the_witness_client_follows_the_witness_size_and_checks_the_cosignature() {
    let dir = tempfile::tempdir().expect("dir");
    let signer = log_signer("L");
    let w = Witness::start(
        dir.path(),
        "witness.test/w2",
        &[signer.verifier().to_vkey()],
    );
    let l = log(40, None, &signer);
    let leaves = l.leaves.clone();
    let proofs =
        move |old: u64, new: u64| consistency_proof(&leaves, old, new).map_err(|e| e.to_string());
    let mut client = WitnessClient::new(&w.base, w.verifier(), Duration::from_secs(5));
    let c = client
        .add_checkpoint(&l.checkpoints[10], &proofs)
        .expect("cosigned");
    assert_eq!(client.known_size(), Some(10));
    assert!(w
        .verifier()
        .verify(&l.checkpoints[10].checkpoint, &c.line)
        .is_ok());
    // Another client that believes the witness is new: it follows the 409 to size 10.
    let mut fresh = WitnessClient::new(&w.base, w.verifier(), Duration::from_secs(5));
    fresh
        .add_checkpoint(&l.checkpoints[25], &proofs)
        .expect("cosigned after a 409");
    assert_eq!(fresh.known_size(), Some(25));
    // The first client, behind by one size, catches up the same way.
    client
        .add_checkpoint(&l.checkpoints[40], &proofs)
        .expect("cosigned");
    let err = client
        .add_checkpoint(&l.checkpoints[30], &proofs)
        .expect_err("older");
    assert!(
        matches!(
            err,
            ClientError::Behind {
                witness_size: 40,
                size: 30,
                ..
            }
        ),
        "{err}"
    );
    // A client configured with another witness key refuses the answer.
    let impostor = pitboss_audit::Cosigner::new(
        "witness.test/w2",
        pitboss_audit::SigningKey::from_bytes(&[3; 32]),
    )
    .expect("name");
    let mut wrong =
        WitnessClient::new(&w.base, impostor.verifier().clone(), Duration::from_secs(5));
    wrong.set_known_size(Some(40));
    let err = wrong
        .add_checkpoint(&l.checkpoints[40], &proofs)
        .expect_err("not its key");
    assert!(matches!(err, ClientError::BadAnswer { .. }), "{err}");
    // A witness that is down: an error within the timeout, nothing else.
    drop(w);
    let started = std::time::Instant::now();
    let err = client
        .add_checkpoint(&l.checkpoints[40], &proofs)
        .expect_err("down");
    assert!(matches!(err, ClientError::Unreachable { .. }), "{err}");
    assert!(started.elapsed() < Duration::from_secs(6));
}

/// A served log's verifier key string: its origin and public key.
fn served_log_vkey(server: &TestServer, auditor: &str) -> (String, String) {
    let (_, pem) = server.get_text(None, "/v1/audit/public-key");
    let key = pitboss_audit::note::public_key_from_pem(&pem).expect("pem");
    let (_, note) = server.get_text(Some(auditor), "/v1/audit/checkpoint");
    let origin = note.lines().next().expect("origin").to_owned();
    (
        NoteVerifier::new(&origin, key).expect("origin").to_vkey(),
        pem,
    )
}

pub(crate) fn bet_round(server: &TestServer, op: &str, table: &str, bets: usize) {
    let (s, b) = server.post(op, &format!("/v1/tables/{table}/rounds"), json!({}));
    assert_eq!(s, 201, "{b}");
    let round = b["round"].as_str().expect("round").to_owned();
    let list: Vec<Value> = (0..bets)
        .map(|i| json!({"player": format!("p{i}"), "bet": "red_black", "field": "red", "stake_minor": 1_000}))
        .collect();
    let (s, b) = server.post(
        op,
        &format!("/v1/rounds/{round}/bets"),
        json!({ "bets": list }),
    );
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["accepted"], bets, "{b}");
    let (s, b) = server.post(
        op,
        &format!("/v1/rounds/{round}/events"),
        json!({"type": "close_betting"}),
    );
    assert_eq!(s, 200, "{b}");
    let (s, b) = server.post(
        op,
        &format!("/v1/rounds/{round}/events"),
        json!({"type": "spin", "number": 7, "ball_against_rotation": true, "ball_revolutions": 5}),
    );
    assert_eq!(s, 200, "{b}");
}

/// Signs a checkpoint of everything logged and returns it.
fn checkpoint_now(server: &TestServer, auditor: &str) -> SignedCheckpoint {
    let (s, _, b) = server.post_raw(Some(auditor), None, "/v1/audit/checkpoint", "");
    assert_eq!(s, 200, "{b}");
    let (s, note) = server.get_text(Some(auditor), "/v1/audit/checkpoint");
    assert_eq!(s, 200, "{note}");
    SignedCheckpoint::parse(&note).expect("checkpoint")
}

/// The served log's consistency endpoint as the client's proof source.
pub(crate) fn endpoint_proofs<'a>(
    server: &'a TestServer,
    auditor: &str,
) -> impl Fn(u64, u64) -> Result<Vec<Hash>, String> + 'a {
    let auditor = auditor.to_owned();
    move |old, new| {
        let (s, _, b) = server.get_as(
            Some(&auditor),
            &format!("/v1/audit/consistency?from={old}&to={new}"),
        );
        if s != 200 {
            return Err(format!("{s}: {b}"));
        }
        serde_json::from_value::<pitboss_audit::ConsistencyProofFile>(b)
            .map(|f| f.proof)
            .map_err(|e| e.to_string())
    }
}

/// The export with `lines` added to the checkpoint of `size`, cut after it.
fn export_to(
    export: &str,
    size: u64,
    cosignatures: &[pitboss_audit::note::NoteSignature],
) -> String {
    let mut out = String::new();
    for line in export.lines() {
        if line.starts_with("{\"checkpoint\":") {
            let v: Value = serde_json::from_str(line).expect("json");
            let mut cp =
                SignedCheckpoint::parse(v["checkpoint"].as_str().expect("note")).expect("cp");
            if cp.checkpoint.size == size {
                cp.add_signatures(cosignatures.iter().cloned());
                out.push_str(
                    std::str::from_utf8(
                        &serde_json_canonicalizer::to_vec(&json!({"checkpoint": cp.to_text()}))
                            .expect("json"),
                    )
                    .expect("utf8"),
                );
                out.push('\n');
                return out;
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    panic!("no checkpoint of size {size} in the export");
}

pub(crate) fn verify(
    export: &str,
    pem: &str,
    witness: &CosignerVerifier,
    trusted: Option<SignedCheckpoint>,
) -> Result<u64, pitboss_audit::verify::Failure> {
    verify_export(
        export.as_bytes(),
        VerifyOptions {
            anchors: vec![pitboss_audit::note::public_key_from_pem(pem).expect("pem")],
            trusted,
            check_canonical: true,
            witnesses: vec![witness.clone()],
            witness_quorum: 1,
        },
        |_| {},
    )
    .map(|s| s.entries)
}

#[test]
fn a_witness_beside_pitboss_serve_cosigns_refuses_a_rewritten_log_and_exposes_a_cut() {
    let storage = Storage::new(Backend::Sqlite);
    let server = TestServer::on(&storage);
    let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
    let auditor = server.create_key(ADMIN_KEY, "auditor", None);
    let (s, b) = server.post(
        &op,
        "/v1/tables",
        json!({"table": "t1", "plan": "evolution-roulette@1", "mode": "live"}),
    );
    assert_eq!(s, 201, "{b}");
    let (log_vkey, pem) = served_log_vkey(&server, &auditor);
    let wdir = tempfile::tempdir().expect("dir");
    let w = Witness::start(wdir.path(), "regulator.test/witness", &[log_vkey]);
    let witness = w.verifier();
    let mut client = WitnessClient::new(&w.base, witness.clone(), Duration::from_secs(10));
    let proofs = endpoint_proofs(&server, &auditor);

    bet_round(&server, &op, "t1", 3);
    let first = checkpoint_now(&server, &auditor);
    let c1 = client
        .add_checkpoint(&first, &proofs)
        .expect("first checkpoint cosigned");
    bet_round(&server, &op, "t1", 4);
    let second = checkpoint_now(&server, &auditor);
    assert!(second.checkpoint.size > first.checkpoint.size);
    let c2 = client
        .add_checkpoint(&second, &proofs)
        .expect("cosigned with the consistency proof the service serves");

    let (s, export) = server.get_text(Some(&auditor), "/v1/audit/export");
    assert_eq!(s, 200);
    // The export ending at the witnessed checkpoint, its cosignature attached: it verifies
    // with the witness key required.
    let witnessed = export_to(
        &export,
        second.checkpoint.size,
        std::slice::from_ref(&c2.line),
    );
    assert_eq!(
        verify(&witnessed, &pem, &witness, None).expect("witnessed export verifies"),
        second.checkpoint.size
    );

    // History rewritten and re-signed with the operator's own key (from its data directory).
    let key_pem = std::fs::read_to_string(storage.data_dir().join("signing-key.pem")).expect("key");
    let settled: u64 = export
        .lines()
        .find(|l| l.contains("\"kind\":\"round_settled\""))
        .and_then(|l| serde_json::from_str::<Value>(l).ok())
        .and_then(|v| v["seq"].as_u64())
        .expect("a settlement");
    let rewritten = crate::trust::reseal(
        &export_to(&export, second.checkpoint.size, &[]),
        &key_pem,
        |seq, _, p| {
            if seq == settled {
                p["settlements"][0]["win_minor"] = json!(123_456_789);
            }
        },
    );
    // The operator's key alone still vouches for it …
    let err = verify(&rewritten, &pem, &witness, None).expect_err("no witness cosigned it");
    assert_eq!(err.reason, Reason::NotWitnessed, "{err}");
    // … and the witness refuses its checkpoint: same size, another root.
    let last = rewritten.lines().last().expect("line");
    let v: Value = serde_json::from_str(last).expect("json");
    let forged = SignedCheckpoint::parse(v["checkpoint"].as_str().expect("note")).expect("cp");
    assert_eq!(forged.checkpoint.size, second.checkpoint.size);
    assert_ne!(forged.checkpoint.root, second.checkpoint.root);
    let err = client
        .add_checkpoint(&forged, &proofs)
        .expect_err("refused");
    assert!(
        matches!(&err, ClientError::Refused { status: 409, detail, .. } if detail.starts_with("conflicting_root")),
        "{err}"
    );
    let evidence = w.evidence();
    assert_eq!(evidence.last().expect("evidence")["kind"], "fork");

    // A log cut back to the first witnessed checkpoint: on its own it verifies (even witnessed) …
    let cut = export_to(
        &export,
        first.checkpoint.size,
        std::slice::from_ref(&c1.line),
    );
    assert_eq!(
        verify(&cut, &pem, &witness, None).expect("a clean cut verifies alone"),
        first.checkpoint.size
    );
    // … but not against the later checkpoint the witness holds.
    let (s, latest) = w.get(&format!(
        "/latest-checkpoint?origin={}",
        urlencode(&second.checkpoint.origin)
    ));
    assert_eq!(s, 200, "{latest}");
    let latest = SignedCheckpoint::parse(&latest).expect("note");
    let err = verify(&cut, &pem, &witness, Some(latest.clone())).expect_err("cut back");
    assert_eq!(err.reason, Reason::Truncated, "{err}");
    verify(&witnessed, &pem, &witness, Some(latest)).expect("the whole log extends it");
}
