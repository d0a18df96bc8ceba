//! Private key files other tools read, and `verify --witness-key/--witness-quorum`.

use crate::cli::{pem_of, run};
use crate::fixture::{self, signer, Log};
use pitboss_audit::note::{private_key_from_pem, private_key_to_pem};
use pitboss_audit::{Cosigner, SignedCheckpoint, SigningKey};
use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn keygen_writes_a_pkcs8_v1_key_that_openssl_and_python_cryptography_load() {
    let dir = fixture::temp_dir("keygen-v1");
    let (private, public) = (dir.join("k.pem"), dir.join("k.pub.pem"));
    let r = run(&[
        "keygen",
        "--private-key",
        private.to_str().expect("utf8"),
        "--public-key",
        public.to_str().expect("utf8"),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let pem = std::fs::read_to_string(&private).expect("read");
    // Version 0 (v1) PrivateKeyInfo of an Ed25519 seed is 48 bytes: 64 base64 characters.
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    assert!(
        body.starts_with("MC4CAQAw"),
        "not a v1 PrivateKeyInfo: {pem}"
    );
    match Command::new("openssl")
        .args(["pkey", "-in"])
        .arg(&private)
        .args(["-pubout"])
        .output()
    {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("SKIPPED: the openssl binary is not installed; `openssl pkey` not run");
        }
        Err(e) => panic!("openssl: {e}"),
        Ok(out) => {
            assert!(
                out.status.success(),
                "openssl pkey refuses the key: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                std::fs::read_to_string(&public).expect("read"),
                "openssl derives the same public key"
            );
        }
    }
    let script = "import sys\n\
        from cryptography.hazmat.primitives.serialization import load_pem_private_key\n\
        load_pem_private_key(open(sys.argv[1], 'rb').read(), None)\n\
        print('ok')";
    match Command::new("python3")
        .args(["-c", script])
        .arg(&private)
        .output()
    {
        Ok(out) if out.status.success() => {
            assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "ok");
        }
        Ok(out) if String::from_utf8_lossy(&out.stderr).contains("No module named") => {
            eprintln!("SKIPPED: Python's cryptography package is not installed");
        }
        Ok(out) => panic!(
            "Python's cryptography refuses the key: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(_) => eprintln!("SKIPPED: python3 is not installed"),
    }
}

#[test]
fn a_pkcs8_v2_key_written_by_an_older_version_is_still_read() {
    use ed25519_dalek::pkcs8::EncodePrivateKey;
    let key = SigningKey::from_bytes(&[42; 32]);
    // The key type's own encoder writes version 2 (seed and public key), as pitboss used to.
    let v2 = key
        .to_pkcs8_pem(ed25519_dalek::pkcs8::spki::der::pem::LineEnding::LF)
        .expect("v2 pem")
        .to_string();
    let v1 = private_key_to_pem(&key).expect("v1 pem");
    assert_ne!(v1, v2);
    for pem in [&v1, &v2] {
        assert_eq!(
            private_key_from_pem(pem).expect("reads").to_bytes(),
            key.to_bytes()
        );
    }
}

fn witness(label: &str) -> Cosigner {
    use sha2::{Digest, Sha256};
    let seed: [u8; 32] = Sha256::digest(format!("pitboss-audit test witness {label}")).into();
    Cosigner::new(
        &format!("witness.test/{label}"),
        SigningKey::from_bytes(&seed),
    )
    .expect("name")
}

/// A 20-entry log whose last checkpoint carries cosignatures by `cosigners`, on disk.
fn cosigned(label: &str, cosigners: &[&Cosigner]) -> (PathBuf, PathBuf, Log) {
    let mut log = fixture::simple_log(20, 10, None);
    let last = log.checkpoints.last_mut().expect("checkpoint");
    let lines: Vec<_> = cosigners
        .iter()
        .map(|w| w.cosign(&last.checkpoint, 1_767_225_600))
        .collect();
    last.add_signatures(lines);
    let dir = fixture::temp_dir(label);
    let export = dir.join("export.jsonl");
    std::fs::write(&export, log.export()).expect("write");
    let key = dir.join("a.pub.pem");
    std::fs::write(&key, pem_of("A")).expect("write");
    (export, key, log)
}

fn verify_with(export: &Path, key: &Path, extra: &[&str]) -> crate::cli::Run {
    let mut args = vec![
        "verify",
        export.to_str().expect("utf8"),
        "--public-key",
        key.to_str().expect("utf8"),
    ];
    args.extend_from_slice(extra);
    run(&args)
}

#[test]
fn verify_requires_the_quorum_of_witness_cosignatures_on_the_last_checkpoint() {
    let (w1, w2, w3) = (witness("w1"), witness("w2"), witness("w3"));
    let (export, key, _) = cosigned("witnessed", &[&w1, &w2]);
    let (k1, k2, k3) = (
        w1.verifier().to_vkey(),
        w2.verifier().to_vkey(),
        w3.verifier().to_vkey(),
    );
    let r = verify_with(&export, &key, &["--witness-key", &k1, "--witness-key", &k2]);
    assert_eq!(r.code, 0, "{} {}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("cosigned by witness.test/w1 at 1767225600, witness.test/w2"),
        "{}",
        r.stdout
    );
    // Three witnesses given, all required by default: w3 never cosigned.
    let args = [
        "--witness-key",
        &k1,
        "--witness-key",
        &k2,
        "--witness-key",
        &k3,
    ];
    let r = verify_with(&export, &key, &args);
    assert_eq!(r.code, 24, "{}", r.stdout);
    assert!(
        r.stdout
            .starts_with("FAIL seq 19: not witnessed (last checkpoint of size 20 carries valid cosignatures by 2 of the given witnesses"),
        "{}",
        r.stdout
    );
    let mut two_of_three = args.to_vec();
    two_of_three.extend(["--witness-quorum", "2"]);
    assert_eq!(verify_with(&export, &key, &two_of_three).code, 0);
    // A witness key given in a file.
    let file = export.with_file_name("w3.vkey");
    std::fs::write(&file, format!("{k3}\n")).expect("write");
    let r = verify_with(
        &export,
        &key,
        &["--witness-key", file.to_str().expect("utf8")],
    );
    assert_eq!(r.code, 24, "{}", r.stdout);
    // More required than given is a usage mistake.
    let r = verify_with(
        &export,
        &key,
        &["--witness-key", &k1, "--witness-quorum", "2"],
    );
    assert_eq!(r.code, 5, "{}", r.stderr);
    // The log's own key is not a witness key (type byte 0x01, not 0x04).
    let log_vkey = signer("A").verifier().to_vkey();
    let r = verify_with(&export, &key, &["--witness-key", &log_vkey]);
    assert_eq!(r.code, 5, "{}", r.stderr);
    // Without witness keys, cosignatures are other keys' lines and are ignored.
    assert_eq!(verify_with(&export, &key, &[]).code, 0);
}

#[test]
fn a_bad_cosignature_by_a_given_witness_fails_and_a_cosigned_trusted_checkpoint_is_required() {
    let w1 = witness("w1");
    let (export, key, log) = cosigned("bad-cosig", &[&w1]);
    let k1 = w1.verifier().to_vkey();
    // Tamper with the cosignature's timestamp: the line no longer verifies.
    let text = std::fs::read_to_string(&export).expect("read");
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let last = lines.len() - 1;
    let cp_text: serde_json::Value = serde_json::from_str(&lines[last]).expect("json");
    let mut cp =
        SignedCheckpoint::parse(cp_text["checkpoint"].as_str().expect("note")).expect("parses");
    let line = cp.signatures.last_mut().expect("cosignature");
    line.signature[7] ^= 1;
    lines[last] = String::from_utf8(
        serde_json_canonicalizer::to_vec(&serde_json::json!({"checkpoint": cp.to_text()}))
            .expect("json"),
    )
    .expect("utf8");
    std::fs::write(&export, lines.join("\n") + "\n").expect("write");
    let r = verify_with(&export, &key, &["--witness-key", &k1]);
    assert_eq!(r.code, 16, "{}", r.stdout);
    assert!(
        r.stdout.starts_with(
            "FAIL seq 19: bad signature (checkpoint of size 20: cosignature by witness.test/w1"
        ),
        "{}",
        r.stdout
    );
    // A trusted checkpoint that no given witness cosigned.
    let (export, key, _) = cosigned("trusted-uncosigned", &[&w1]);
    let trusted = export.with_file_name("cp-10.txt");
    std::fs::write(&trusted, log.checkpoints[0].to_text()).expect("write");
    let t = trusted.to_str().expect("utf8");
    let r = verify_with(
        &export,
        &key,
        &["--witness-key", &k1, "--trusted-checkpoint", t],
    );
    assert_eq!(r.code, 24, "{}", r.stdout);
    assert!(
        r.stdout.contains("trusted checkpoint of size 10"),
        "{}",
        r.stdout
    );
    let r = verify_with(&export, &key, &["--trusted-checkpoint", t]);
    assert_eq!(r.code, 0, "{}", r.stdout);
}

#[test]
fn vkey_prints_the_verifier_key_string_a_witness_is_configured_with() {
    let dir = fixture::temp_dir("vkey");
    let key = dir.join("a.pub.pem");
    std::fs::write(&key, pem_of("A")).expect("write");
    let r = run(&[
        "vkey",
        "--public-key",
        key.to_str().expect("utf8"),
        "--name",
        fixture::ORIGIN,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.trim(), signer("A").verifier().to_vkey());
    let r = run(&[
        "vkey",
        "--public-key",
        key.to_str().expect("utf8"),
        "--name",
        "a b",
    ]);
    assert_eq!(r.code, 5, "{}", r.stdout);
}
