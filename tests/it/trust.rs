//! Trust that does not rest on the operator (issue 14), through the real binary: seeds revealed
//! on void, `pitboss replay` catching a settlement re-signed with the operator's own key, the
//! consistency endpoint against an independent RFC 6962 implementation, one origin per log, and
//! key files other tools read.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pitboss_audit::entry::{Ids, Kind, NewEntry, Timestamp};
use pitboss_audit::export::{ExportHeader, ExportWriter};
use pitboss_audit::hash::Hash;
use pitboss_audit::log::Appender;
use pitboss_audit::note::{NoteSigner, SignedCheckpoint};
use serde_json::{json, Value};
use sha2::Digest;

use crate::replay::{exported_log_verifies_and_replays, replay_command};
use crate::server::{Backend, PgDatabase, Storage, TestServer, ADMIN_KEY};

struct Ctx {
    server: TestServer,
    op: String,
    auditor: String,
}

impl Ctx {
    fn start(storage: &Storage) -> Ctx {
        let server = TestServer::on(storage);
        let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
        let auditor = server.create_key(ADMIN_KEY, "auditor", None);
        Ctx {
            server,
            op,
            auditor,
        }
    }

    fn post(&self, path: &str, body: Value) -> Value {
        let (s, b) = self.server.post(&self.op, path, body);
        assert!(s == 200 || s == 201, "{path}: {s} {b}");
        b
    }

    fn open_round(&self, table: &str) -> (String, Option<String>) {
        let b = self.post(&format!("/v1/tables/{table}/rounds"), json!({}));
        (
            b["round"].as_str().expect("round").to_owned(),
            b["rng_commitment"].as_str().map(str::to_owned),
        )
    }

    fn export(&self) -> String {
        let (s, export) = self
            .server
            .get_text(Some(&self.auditor), "/v1/audit/export");
        assert_eq!(s, 200, "{export}");
        export
    }
}

fn sha256_hex(seed_hex: &str) -> String {
    let seed: Vec<u8> = (0..seed_hex.len() / 2)
        .map(|i| u8::from_str_radix(&seed_hex[2 * i..2 * i + 2], 16).expect("hex"))
        .collect();
    assert_eq!(seed.len(), 32, "a 32-byte seed");
    pitboss::plan::canonical::hex(&sha2::Sha256::digest(&seed))
}

/// A live round settled, so that the export has a settlement to replay.
fn settle_a_live_round(ctx: &Ctx, table: &str) {
    let (round, _) = ctx.open_round(table);
    let placed = ctx.post(
        &format!("/v1/rounds/{round}/bets"),
        json!({"bets": [
            {"player": "p1", "bet": "straight", "numbers": [17], "stake_minor": 1_000},
            {"player": "p2", "bet": "red_black", "field": "red", "stake_minor": 2_000}
        ]}),
    );
    assert_eq!(placed["accepted"], 2, "{placed}");
    ctx.post(
        &format!("/v1/rounds/{round}/events"),
        json!({"type": "close_betting"}),
    );
    let b = ctx.post(
        &format!("/v1/rounds/{round}/events"),
        json!({"type": "spin", "number": 17, "ball_against_rotation": true, "ball_revolutions": 4}),
    );
    assert_eq!(b["phase"], "settled", "{b}");
}

#[test]
fn a_voided_rng_round_reveals_its_seed_which_hashes_to_its_commitment() {
    let storage = Storage::new(Backend::Sqlite);
    let ctx = Ctx::start(&storage);
    ctx.post(
        "/v1/tables",
        json!({"table": "rng1", "plan": "synot-roulette@1", "mode": "rng"}),
    );
    ctx.post(
        "/v1/tables",
        json!({"table": "live1", "plan": "synot-roulette@1", "mode": "live"}),
    );
    // Voided while betting is open.
    let (round, commitment) = ctx.open_round("rng1");
    let commitment = commitment.expect("an RNG round commits its seed");
    ctx.post(
        &format!("/v1/rounds/{round}/bets"),
        json!({"bets": [{"player": "p1", "bet": "straight", "numbers": [5], "stake_minor": 1_000}]}),
    );
    let voided = ctx.post(
        &format!("/v1/rounds/{round}/void"),
        json!({"reason": "RNG server restarted"}),
    );
    assert_eq!(voided["phase"], "voided");
    let seed = voided["rng_seed"]
        .as_str()
        .expect("the void reveals the seed");
    assert_eq!(
        sha256_hex(seed),
        commitment,
        "the revealed seed is the committed one"
    );
    // Voided after betting closed.
    let (round2, commitment2) = ctx.open_round("rng1");
    ctx.post(
        &format!("/v1/rounds/{round2}/events"),
        json!({"type": "close_betting"}),
    );
    let voided2 = ctx.post(
        &format!("/v1/rounds/{round2}/void"),
        json!({"reason": "operator error"}),
    );
    assert_eq!(
        Some(sha256_hex(voided2["rng_seed"].as_str().expect("seed"))),
        commitment2
    );
    // A table closed with an RNG round open voids it and reveals that seed too.
    let (round3, commitment3) = ctx.open_round("rng1");
    ctx.post("/v1/tables/rng1/close", json!({"reason": "end of session"}));
    settle_a_live_round(&ctx, "live1");
    let export = ctx.export();
    let mut voids = 0;
    for line in export
        .lines()
        .filter(|l| l.contains("\"kind\":\"round_voided\""))
    {
        let v: Value = serde_json::from_str(line).expect("entry");
        let r = v["ids"]["round"].as_str().expect("round");
        let want = [
            (&round, Some(&commitment)),
            (&round2, commitment2.as_ref()),
            (&round3, commitment3.as_ref()),
        ]
        .into_iter()
        .find(|(id, _)| id.as_str() == r)
        .and_then(|(_, c)| c.cloned())
        .expect("one of the voided rounds");
        let logged = v["payload"]["rng_seed"]
            .as_str()
            .expect("the entry carries the seed");
        assert_eq!(sha256_hex(logged), want, "round {r}");
        voids += 1;
    }
    assert_eq!(voids, 3);
    // The export verifies, and the replay checks each seed against its commitment.
    exported_log_verifies_and_replays(&ctx.server, &ctx.auditor);
    let out = replay_command(&export, &crate::source::rng_plans_dir());
    assert!(
        out.stdout.contains("3 voids") && out.stdout.contains("3 RNG seeds checked"),
        "{}",
        out.stdout
    );
}

/// Re-seals every entry of an export (after `edit` changed some payloads), chaining and signing
/// it again with the operator's own key: what an operator with the data directory could do.
pub fn reseal(export: &str, key_pem: &str, edit: impl Fn(u64, &str, &mut Value)) -> String {
    let mut lines = export.lines();
    let header: ExportHeader = serde_json::from_str(lines.next().expect("header")).expect("header");
    let signer = NoteSigner::from_pkcs8_pem(&header.origin, key_pem).expect("operator key");
    let mut app =
        Appender::new(&header.origin, std::slice::from_ref(signer.verifier())).expect("origin");
    let mut entries: Vec<Vec<u8>> = Vec::new();
    let mut checkpoints: Vec<SignedCheckpoint> = Vec::new();
    for line in lines {
        let v: Value = serde_json::from_str(line).expect("line");
        if v.get("checkpoint").is_some() {
            checkpoints.push(
                app.checkpoint(std::slice::from_ref(&signer))
                    .expect("signs"),
            );
            continue;
        }
        let seq = v["seq"].as_u64().expect("seq");
        let kind = v["kind"].as_str().expect("kind").to_owned();
        let mut payload = v["payload"].clone();
        edit(seq, &kind, &mut payload);
        let ids: Ids = serde_json::from_value(v["ids"].clone()).expect("ids");
        let e = NewEntry {
            ts: Timestamp::parse(v["ts"].as_str().expect("ts")).expect("ts"),
            kind: Kind::parse(&kind).expect("kind"),
            ids,
            payload,
        };
        let sealed = app.seal(vec![e]).expect("seals");
        entries.extend(sealed.into_iter().map(|s| s.canonical));
    }
    let header = ExportHeader::new(&header.origin, app.state().keys);
    let mut w = ExportWriter::new(Vec::new(), &header).expect("header");
    let mut cps = checkpoints.into_iter().peekable();
    while let Some(cp) = cps.next_if(|c| c.checkpoint.size == 0) {
        w.checkpoint(&cp).expect("checkpoint");
    }
    for (i, e) in entries.iter().enumerate() {
        w.entry(e).expect("entry");
        while let Some(cp) = cps.next_if(|c| c.checkpoint.size == i as u64 + 1) {
            w.checkpoint(&cp).expect("checkpoint");
        }
    }
    String::from_utf8(w.finish().expect("export")).expect("utf8")
}

pub fn verifies_with(export: &str, key_pem: &str) -> Result<(), String> {
    let key = pitboss_audit::note::public_key_from_pem(key_pem).expect("pem");
    pitboss_audit::verify::verify_export(
        export.as_bytes(),
        pitboss_audit::verify::VerifyOptions {
            anchors: vec![key],
            check_canonical: true,
            ..Default::default()
        },
        |_| {},
    )
    .map(|_| ())
    .map_err(|f| f.to_string())
}

#[test]
fn a_settlement_altered_and_re_signed_with_the_operators_key_verifies_but_replay_names_its_seq() {
    let storage = Storage::new(Backend::Sqlite);
    let ctx = Ctx::start(&storage);
    ctx.post(
        "/v1/tables",
        json!({"table": "live1", "plan": "evolution-roulette@1", "mode": "live"}),
    );
    ctx.post(
        "/v1/tables",
        json!({"table": "rng1", "plan": "evolution-roulette@1", "mode": "rng"}),
    );
    settle_a_live_round(&ctx, "live1");
    let (round, _) = ctx.open_round("rng1");
    ctx.post(
        &format!("/v1/rounds/{round}/void"),
        json!({"reason": "test"}),
    );
    settle_a_live_round(&ctx, "live1");
    let export = ctx.export();
    let key_pem =
        std::fs::read_to_string(storage.data_dir().join("signing-key.pem")).expect("key file");
    let (_, public_pem) = ctx.server.get_text(None, "/v1/audit/public-key");
    let plans = crate::source::rng_plans_dir();

    // Untouched, re-sealed: identical bytes (the re-sealing is faithful).
    assert_eq!(reseal(&export, &key_pem, |_, _, _| {}), export);
    let settled_seq: u64 = export
        .lines()
        .find(|l| l.contains("\"kind\":\"round_settled\""))
        .and_then(|l| serde_json::from_str::<Value>(l).ok())
        .and_then(|v| v["seq"].as_u64())
        .expect("a settlement");
    // The first settlement pays 100 more to its first bet, consistently in every total.
    let forged = reseal(&export, &key_pem, |seq, kind, p| {
        if seq == settled_seq && kind == "round_settled" {
            let s = &mut p["settlements"][0];
            for k in ["win_minor", "total_minor"] {
                s[k] = json!(s[k].as_i64().expect("amount") + 100);
            }
            p["paid_minor"] = json!(p["paid_minor"].as_i64().expect("paid") + 100);
        }
    });
    assert_ne!(forged, export);
    verifies_with(&forged, &public_pem).expect("re-signed with the operator's key, it verifies");
    let out = replay_command(&forged, &plans);
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    let first = out.stdout.lines().next().expect("a line");
    assert!(
        first.starts_with(&format!("DISAGREE seq {settled_seq} (round_settled): ")),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("FAIL "), "{}", out.stdout);
    // A void's seed swapped for another: the commitment no longer matches.
    let void_seq: u64 = export
        .lines()
        .find(|l| l.contains("\"kind\":\"round_voided\""))
        .and_then(|l| serde_json::from_str::<Value>(l).ok())
        .and_then(|v| v["seq"].as_u64())
        .expect("a void");
    let forged = reseal(&export, &key_pem, |seq, _, p| {
        if seq == void_seq {
            p["rng_seed"] = json!("00".repeat(32));
        }
    });
    verifies_with(&forged, &public_pem).expect("verifies");
    let out = replay_command(&forged, &plans);
    assert_eq!(out.code, 3, "{}", out.stdout);
    assert!(
        out.stdout
            .starts_with(&format!("DISAGREE seq {void_seq} (round_voided): "))
            && out.stdout.contains("does not match the commitment"),
        "{}",
        out.stdout
    );
    // A plan directory whose plan differs from the one the log loaded.
    let other = tempfile::tempdir().expect("dir");
    for entry in std::fs::read_dir(&plans).expect("plans") {
        let p = entry.expect("entry").path();
        if p.extension().is_some_and(|e| e == "toml") {
            std::fs::copy(&p, other.path().join(p.file_name().expect("name"))).expect("copy");
        } else if p.is_dir() {
            // The source documents the plans pin by hash.
            copy_dir(&p, &other.path().join(p.file_name().expect("name")));
        }
    }
    let plan = other.path().join("evolution-roulette@1.toml");
    let text = std::fs::read_to_string(&plan).expect("plan");
    std::fs::write(&plan, format!("{text}\n# a comment changes nothing\n")).expect("write");
    assert_eq!(
        replay_command(&export, other.path()).code,
        0,
        "comments are not content"
    );
    let changed = text.replacen(
        "label = \"Jedno číslo (Straight-Up)\"",
        "label = \"Jedno číslo\"",
        1,
    );
    assert_ne!(changed, text);
    std::fs::write(&plan, changed).expect("write");
    let out = replay_command(&export, other.path());
    assert_eq!(out.code, 3, "{}", out.stdout);
    assert!(
        out.stdout
            .contains("(plan_loaded): the log loaded evolution-roulette@1"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("(table_opened)"), "{}", out.stdout);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read dir") {
        let p = e.expect("entry").path();
        let target = to.join(p.file_name().expect("name"));
        if p.is_dir() {
            copy_dir(&p, &target);
        } else {
            std::fs::copy(&p, &target).expect("copy");
        }
    }
}

fn reference_proofs(lines: &[&str]) -> Option<Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/rfc6962_reference.py");
    let mut child = match Command::new("python3")
        .arg(script)
        .arg("prove")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("SKIPPED: python3 is not installed, the RFC 6962 cross-check cannot run");
            return None;
        }
        Err(e) => panic!("python3: {e}"),
    };
    use std::io::Write;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(json!({ "leaves": lines }).to_string().as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("python");
    assert!(out.status.success());
    Some(serde_json::from_slice(&out.stdout).expect("json"))
}

#[test]
fn the_consistency_endpoint_agrees_with_an_independent_rfc6962_on_every_pair_up_to_64() {
    let storage = Storage::new(Backend::Sqlite);
    let ctx = Ctx::start(&storage);
    ctx.post(
        "/v1/tables",
        json!({"table": "live1", "plan": "evolution-roulette@1", "mode": "live"}),
    );
    let (round, _) = ctx.open_round("live1");
    let bets: Vec<Value> = (0..70)
        .map(|i| json!({"player": format!("p{i}"), "bet": "straight", "numbers": [i % 37], "stake_minor": 1_000}))
        .collect();
    let placed = ctx.post(&format!("/v1/rounds/{round}/bets"), json!({ "bets": bets }));
    assert_eq!(placed["accepted"], 70, "{placed}");
    let export = ctx.export();
    let lines: Vec<&str> = export
        .lines()
        .filter(|l| l.starts_with("{\"ids\":"))
        .take(64)
        .collect();
    assert_eq!(lines.len(), 64);
    let Some(reference) = reference_proofs(&lines) else {
        return;
    };
    let roots: Vec<Hash> = reference["roots"]
        .as_array()
        .expect("roots")
        .iter()
        .map(|h| Hash::from_hex(h.as_str().expect("hex")).expect("hash"))
        .collect();
    for n in 1..=64u64 {
        for m in 0..=n {
            let (s, _, b) = ctx.server.get_as(
                Some(&ctx.auditor),
                &format!("/v1/audit/consistency?from={m}&to={n}"),
            );
            assert_eq!(s, 200, "{m} -> {n}: {b}");
            let file: pitboss_audit::ConsistencyProofFile =
                serde_json::from_value(b).expect("a proof file");
            let expected: Vec<Hash> = if m == 0 {
                Vec::new()
            } else {
                reference["proofs"][format!("{m} {n}")]
                    .as_array()
                    .expect("proof")
                    .iter()
                    .map(|h| Hash::from_hex(h.as_str().expect("hex")).expect("hash"))
                    .collect()
            };
            assert_eq!(file.proof, expected, "PROOF({m}, {n})");
            pitboss_audit::merkle::verify_consistency(
                m,
                n,
                &roots[m as usize],
                &roots[n as usize],
                &file.proof,
            )
            .unwrap_or_else(|e| panic!("{m} -> {n}: {e}"));
            // A fork: the same proof does not connect another old root.
            if m > 0 && m < n {
                let forged = roots[(m - 1) as usize];
                assert!(pitboss_audit::merkle::verify_consistency(
                    m,
                    n,
                    &forged,
                    &roots[n as usize],
                    &file.proof
                )
                .is_err());
            }
        }
    }
}

/// Runs `pitboss serve` expecting it to refuse to start; returns its stderr.
fn serve_refuses(args: &[&str], data_dir: &Path) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pitboss"))
        .arg("--plans")
        .arg(crate::source::rng_plans_dir())
        .args(["serve", "--bind", "127.0.0.1:0", "--data-dir"])
        .arg(data_dir)
        .args(args)
        .env_remove("DATABASE_URL")
        .env_remove("PITBOSS_LOG_ORIGIN")
        .env("PITBOSS_ADMIN_KEY", ADMIN_KEY)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            assert!(!status.success(), "serve started with {args:?}");
            let out = child.wait_with_output().expect("output");
            return String::from_utf8_lossy(&out.stderr).into_owned();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("serve {args:?} neither started nor refused within 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn checkpoint_origin(ctx: &Ctx) -> String {
    let (s, text) = ctx
        .server
        .get_text(Some(&ctx.auditor), "/v1/audit/checkpoint");
    assert_eq!(s, 200, "{text}");
    text.lines().next().expect("origin line").to_owned()
}

#[test]
fn the_embedded_default_derives_its_origin_from_the_key_and_a_log_keeps_its_name() {
    let storage = Storage::new(Backend::Sqlite);
    let origin = {
        let ctx = Ctx::start(&storage);
        checkpoint_origin(&ctx)
    };
    let pem = std::fs::read_to_string(storage.data_dir().join("signing-key.pem")).expect("key");
    let key = pitboss_audit::note::private_key_from_pem(&pem).expect("v1 key reads");
    assert_eq!(
        origin,
        format!("localhost/pitboss/{}", pitboss::keyfile::fingerprint(&key))
    );
    // Another data directory, another key: another origin.
    let other = Storage::new(Backend::Sqlite);
    assert_ne!(checkpoint_origin(&Ctx::start(&other)), origin);
    // The log keeps its name; another one given is refused.
    let err = serve_refuses(
        &["--origin", "casino.example.cz/pitboss/other"],
        storage.data_dir(),
    );
    assert!(err.contains("an origin names one log"), "{err}");
    let ctx = Ctx::start(&storage);
    assert_eq!(checkpoint_origin(&ctx), origin);
    // The service's generated key is PKCS#8 v1, which OpenSSL reads.
    match Command::new("openssl")
        .args(["pkey", "-noout", "-in"])
        .arg(storage.data_dir().join("signing-key.pem"))
        .output()
    {
        Ok(out) => assert!(
            out.status.success(),
            "openssl pkey: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("SKIPPED: the openssl binary is not installed")
        }
        Err(e) => panic!("openssl: {e}"),
    }
}

#[test]
fn a_postgresql_deployment_must_name_its_origin() {
    let pg = PgDatabase::create();
    let dir = tempfile::tempdir().expect("dir");
    let err = serve_refuses(&["--database-url", &pg.url], dir.path());
    assert!(err.contains("--origin"), "{err}");
    let bad = serve_refuses(
        &["--database-url", &pg.url, "--origin", "has a space"],
        dir.path(),
    );
    assert!(bad.contains("not a valid log name"), "{bad}");
}
