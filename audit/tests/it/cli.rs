//! `pitboss-audit verify / prove / check-proof` on real exports, one tamper class per test.

use crate::fixture::{self, signer, Log};
use pitboss_audit::note::public_key_to_pem;
use pitboss_audit::SignedCheckpoint;
use std::path::PathBuf;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_pitboss-audit");

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn run(args: &[&str]) -> Run {
    let out = Command::new(BIN).args(args).output().expect("binary runs");
    Run {
        code: out.status.code().expect("exited normally"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A 60-entry export with checkpoints at 20, 40 and 60, and key A's public PEM, on disk.
struct Case {
    dir: PathBuf,
    key: PathBuf,
    lines: Vec<String>,
}

fn case(label: &str) -> (Case, Log) {
    let log = fixture::simple_log(60, 20, None);
    let dir = fixture::temp_dir(label);
    let key = dir.join("a.pub.pem");
    std::fs::write(&key, pem_of("A")).expect("write key");
    let text = String::from_utf8(log.export()).expect("utf8");
    let lines = text.lines().map(str::to_owned).collect();
    (Case { dir, key, lines }, log)
}

pub fn pem_of(label: &str) -> String {
    public_key_to_pem(signer(label).verifier().key()).expect("pem")
}

impl Case {
    /// Line index of entry `seq` (header is line 0; checkpoints every 20 entries).
    fn entry_line(&self, seq: usize) -> usize {
        let idx = self
            .lines
            .iter()
            .position(|l| l.contains(&format!("\"seq\":{seq},")))
            .expect("entry present");
        assert!(self.lines[idx].starts_with("{\"ids\":"));
        idx
    }

    fn checkpoint_line(&self, size: u64) -> usize {
        self.lines
            .iter()
            .position(|l| l.starts_with("{\"checkpoint\":") && l.contains(&format!("\\n{size}\\n")))
            .expect("checkpoint present")
    }

    fn write(&self, name: &str, lines: &[String]) -> PathBuf {
        let p = self.dir.join(name);
        let mut s = lines.join("\n");
        s.push('\n');
        std::fs::write(&p, s).expect("write export");
        p
    }

    fn verify(&self, lines: &[String], extra: &[&str]) -> Run {
        let p = self.write("export.jsonl", lines);
        let mut args = vec!["verify", p.to_str().expect("utf8 path"), "--public-key"];
        args.push(self.key.to_str().expect("utf8 path"));
        args.extend_from_slice(extra);
        run(&args)
    }
}

fn assert_fails(r: &Run, code: i32, prefix: &str) {
    assert!(
        r.stdout.starts_with(prefix),
        "expected {prefix:?}, got stdout {:?} stderr {:?}",
        r.stdout,
        r.stderr
    );
    assert_eq!(r.code, code, "{}", r.stdout);
}

fn flip_char(s: &str, at: usize) -> String {
    let mut b = s.as_bytes().to_vec();
    b[at] = match b[at] {
        b'0' => b'1',
        b'f' => b'e',
        b'A' => b'B',
        c if c.is_ascii_digit() => b'0',
        c if c.is_ascii_lowercase() => {
            if c == b'a' {
                b'b'
            } else {
                b'a'
            }
        }
        c if c.is_ascii_uppercase() => {
            if c == b'C' {
                b'D'
            } else {
                b'C'
            }
        }
        _ => b'x',
    };
    String::from_utf8(b).expect("ascii edit keeps utf8")
}

#[test]
fn untouched_export_verifies_with_exit_code_0_and_no_progress_output_off_terminal() {
    let (c, log) = case("ok");
    let r = c.verify(&c.lines, &[]);
    assert_eq!(r.code, 0, "{} {}", r.stdout, r.stderr);
    assert_eq!(
        r.stdout.trim(),
        format!(
            "OK {}: 60 entries, 3 checkpoints, root {}",
            fixture::ORIGIN,
            log.appender.root()
        )
    );
    assert_eq!(r.stderr, "");
}

#[test]
fn flipped_byte_in_a_payload_fails_as_broken_link_at_the_altered_entry() {
    let (c, _) = case("payload");
    let mut lines = c.lines.clone();
    let i = c.entry_line(26);
    lines[i] = lines[i].replace("\"stake_minor\":5026", "\"stake_minor\":5027");
    assert_ne!(lines[i], c.lines[i]);
    let r = c.verify(&lines, &[]);
    assert_fails(
        &r,
        10,
        "FAIL seq 26: broken link (hash of entry 26 does not match prev_hash of entry 27",
    );
}

#[test]
fn flipped_byte_in_a_prev_hash_fails_as_broken_link_at_that_entry() {
    let (c, _) = case("hash");
    let mut lines = c.lines.clone();
    let i = c.entry_line(25);
    let at = lines[i].find("\"prev\":\"").expect("prev") + 8 + 10;
    lines[i] = flip_char(&lines[i], at);
    let r = c.verify(&lines, &[]);
    assert_fails(
        &r,
        10,
        "FAIL seq 25: broken link (prev_hash does not match hash of entry 24)",
    );
}

#[test]
fn flipped_byte_in_a_checkpoint_signature_fails_as_bad_signature() {
    let (c, _) = case("sig");
    let mut lines = c.lines.clone();
    let i = c.checkpoint_line(40);
    // A character well inside the signature (past the 4-byte key id) and before the padding.
    let at = lines[i].rfind(' ').expect("signature") + 40;
    lines[i] = flip_char(&lines[i], at);
    let r = c.verify(&lines, &[]);
    assert_fails(&r, 16, "FAIL seq 39: bad signature");
}

#[test]
fn flipped_byte_in_a_checkpoint_root_fails_as_bad_signature() {
    let (c, _) = case("root");
    let mut lines = c.lines.clone();
    let i = c.checkpoint_line(20);
    let at = lines[i].find("\\n20\\n").expect("size line") + 8;
    lines[i] = flip_char(&lines[i], at);
    let r = c.verify(&lines, &[]);
    assert_fails(&r, 16, "FAIL seq 19: bad signature");
}

#[test]
fn deleted_entry_fails_as_gap() {
    let (c, _) = case("delete");
    let mut lines = c.lines.clone();
    lines.remove(c.entry_line(25));
    let r = c.verify(&lines, &[]);
    assert_fails(
        &r,
        11,
        "FAIL seq 25: gap (entry 25 is missing (next is 26))",
    );
}

#[test]
fn deleted_last_entry_before_a_checkpoint_fails_as_gap() {
    let (c, _) = case("delete-last");
    let mut lines = c.lines.clone();
    lines.remove(c.entry_line(39));
    let r = c.verify(&lines, &[]);
    assert_fails(&r, 11, "FAIL seq 39: gap");
}

#[test]
fn duplicated_entry_fails_as_duplicate() {
    let (c, _) = case("dup");
    let mut lines = c.lines.clone();
    let i = c.entry_line(25);
    lines.insert(i + 1, lines[i].clone());
    let r = c.verify(&lines, &[]);
    assert_fails(&r, 12, "FAIL seq 25: duplicate entry");
}

#[test]
fn inserted_entry_fails_as_inserted() {
    let (c, log) = case("insert");
    // A well-formed forgery: entry 26 with another note, chained correctly after the true 25.
    let forged = pitboss_audit::entry::seal_one(
        26,
        log.entries[25].leaf_hash,
        crate::fixture::event(26, "forged"),
    )
    .expect("seals");
    let mut lines = c.lines.clone();
    let i = c.entry_line(26);
    lines.insert(i, String::from_utf8(forged.canonical).expect("utf8"));
    let r = c.verify(&lines, &[]);
    assert_fails(
        &r,
        13,
        "FAIL seq 26: inserted entry (two different entries claim seq 26)",
    );
}

#[test]
fn reordered_entries_fail_as_out_of_order() {
    let (c, _) = case("reorder");
    let mut lines = c.lines.clone();
    let i = c.entry_line(25);
    lines.swap(i, i + 1);
    let r = c.verify(&lines, &[]);
    assert_fails(
        &r,
        14,
        "FAIL seq 25: out of order (entry 25 comes after entry 26)",
    );
}

#[test]
fn export_cut_after_an_entry_fails_as_truncated_from_the_last_checkpoint() {
    let (c, _) = case("truncate");
    let lines = c.lines[..=c.entry_line(50)].to_vec();
    let r = c.verify(&lines, &[]);
    assert_fails(
        &r,
        19,
        "FAIL seq 40: truncated (entries 40..50 are not covered by a signed checkpoint)",
    );
}

#[test]
fn export_cut_inside_a_line_fails_as_truncated() {
    let (c, _) = case("cut");
    let p = c.write("export.jsonl", &c.lines);
    let mut bytes = std::fs::read(&p).expect("read");
    bytes.truncate(bytes.len() - 30);
    std::fs::write(&p, bytes).expect("write");
    let r = run(&[
        "verify",
        p.to_str().expect("utf8"),
        "--public-key",
        c.key.to_str().expect("utf8"),
    ]);
    assert_fails(&r, 19, "FAIL seq 60: truncated (last line is cut");
}

fn write_checkpoint(c: &Case, name: &str, cp: &SignedCheckpoint) -> PathBuf {
    let p = c.dir.join(name);
    std::fs::write(&p, cp.to_text()).expect("write checkpoint");
    p
}

#[test]
fn export_shorter_than_the_trusted_checkpoint_fails_as_truncated() {
    let (c, log) = case("truncate-trusted");
    let trusted = write_checkpoint(&c, "trusted.txt", &log.checkpoints[2]);
    // Cut cleanly after the checkpoint of size 40: valid on its own.
    let lines = c.lines[..=c.checkpoint_line(40)].to_vec();
    assert_eq!(c.verify(&lines, &[]).code, 0);
    let r = c.verify(
        &lines,
        &["--trusted-checkpoint", trusted.to_str().expect("utf8")],
    );
    assert_fails(
        &r,
        19,
        "FAIL seq 40: truncated (export has 40 entries, the trusted checkpoint covers 60)",
    );
}

#[test]
fn export_that_extends_the_trusted_checkpoint_verifies() {
    let (c, log) = case("extends");
    let trusted = write_checkpoint(&c, "trusted.txt", &log.checkpoints[0]);
    let r = c.verify(
        &c.lines,
        &["--trusted-checkpoint", trusted.to_str().expect("utf8")],
    );
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(r.stdout.contains("extends the trusted checkpoint"));
}

#[test]
fn fork_that_does_not_extend_the_trusted_checkpoint_fails() {
    let (c, _) = case("fork");
    // Same key, same origin, a different entry 10: its checkpoint of size 20 is validly signed.
    let fork = fixture::simple_log(60, 20, Some(10));
    let trusted = write_checkpoint(&c, "trusted.txt", &fork.checkpoints[0]);
    let r = c.verify(
        &c.lines,
        &["--trusted-checkpoint", trusted.to_str().expect("utf8")],
    );
    assert_fails(&r, 20, "FAIL seq 19: does not extend trusted checkpoint");
}

#[test]
fn verifying_with_the_wrong_key_fails_as_unknown_key() {
    let (c, _) = case("wrongkey");
    let other = c.dir.join("z.pub.pem");
    std::fs::write(&other, pem_of("Z")).expect("write key");
    let p = c.write("export.jsonl", &c.lines);
    let r = run(&[
        "verify",
        p.to_str().expect("utf8"),
        "--public-key",
        other.to_str().expect("utf8"),
    ]);
    assert_fails(&r, 17, "FAIL seq 19: unknown key");
}

#[test]
fn consistently_rewritten_tail_fails_as_root_mismatch_at_the_first_unproven_entry() {
    let (c, log) = case("rewrite");
    // The attacker re-seals entries 42..59 with a change, chaining them correctly, but cannot
    // re-sign the checkpoint of size 60.
    let mut lines = c.lines.clone();
    let mut prev = log.entries[41].leaf_hash;
    for seq in 42..60u64 {
        let e = pitboss_audit::entry::seal_one(
            seq,
            prev,
            fixture::event(seq, if seq == 42 { "rewritten" } else { "" }),
        )
        .expect("seals");
        prev = e.leaf_hash;
        let i = c.entry_line(seq as usize);
        lines[i] = String::from_utf8(e.canonical).expect("utf8");
    }
    let r = c.verify(&lines, &[]);
    assert_fails(&r, 15, "FAIL seq 40: root mismatch");
}

#[test]
fn prove_then_check_proof_accepts_the_entry_and_rejects_a_tampered_proof() {
    let (c, _) = case("prove");
    let export = c.write("export.jsonl", &c.lines);
    let proof = c.dir.join("proof.json");
    let r = run(&[
        "prove",
        export.to_str().expect("utf8"),
        "--seq",
        "34",
        "--out",
        proof.to_str().expect("utf8"),
    ]);
    assert_eq!(r.code, 0, "{} {}", r.stdout, r.stderr);
    assert_eq!(
        r.stdout.trim_end(),
        format!(
            "OK wrote the inclusion proof of entry 34 (bet_accepted) in the tree of size 60 \
             (with its signed checkpoint) to {0}; check it with `pitboss-audit check-proof {0} \
             --public-key KEY.pem`",
            proof.display()
        ),
        "prove says what it wrote"
    );
    let to_stdout = run(&["prove", export.to_str().expect("utf8"), "--seq", "34"]);
    assert_eq!(to_stdout.code, 0);
    assert_eq!(
        to_stdout.stdout,
        std::fs::read_to_string(&proof).expect("proof"),
        "standard output is the proof alone"
    );
    assert!(
        to_stdout
            .stderr
            .starts_with("OK wrote the inclusion proof of entry 34"),
        "{}",
        to_stdout.stderr
    );
    let key = c.key.to_str().expect("utf8");
    let r = run(&[
        "check-proof",
        proof.to_str().expect("utf8"),
        "--public-key",
        key,
    ]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(
        r.stdout.starts_with(&format!(
            "OK {}: entry 34 (bet_accepted) is in the tree of size 60",
            fixture::ORIGIN
        )),
        "{}",
        r.stdout
    );

    let text = std::fs::read_to_string(&proof).expect("read");
    let tampered = c.dir.join("tampered.json");
    std::fs::write(&tampered, text.replace("5034", "5035")).expect("write");
    let r = run(&[
        "check-proof",
        tampered.to_str().expect("utf8"),
        "--public-key",
        key,
    ]);
    assert_eq!(r.code, 30, "{}", r.stdout);
    assert!(
        r.stdout.starts_with("FAIL inclusion proof does not verify"),
        "{}",
        r.stdout
    );

    let other = c.dir.join("z.pub.pem");
    std::fs::write(&other, pem_of("Z")).expect("write key");
    let r = run(&[
        "check-proof",
        proof.to_str().expect("utf8"),
        "--public-key",
        other.to_str().expect("utf8"),
    ]);
    assert_eq!(r.code, 30);
    assert!(r.stdout.contains("no valid signature"), "{}", r.stdout);
}

#[test]
fn prove_refuses_an_entry_not_in_the_export() {
    let (c, _) = case("prove-missing");
    let export = c.write("export.jsonl", &c.lines);
    let r = run(&["prove", export.to_str().expect("utf8"), "--seq", "60"]);
    assert_eq!(r.code, 31);
    assert!(r.stdout.contains("entry 60 is not in the export"));
}

#[test]
fn keygen_writes_keys_that_sign_and_verify_and_refuses_to_overwrite() {
    let dir = fixture::temp_dir("keygen");
    let (sk, pk) = (dir.join("k.pem"), dir.join("k.pub.pem"));
    let args = [
        "keygen",
        "--private-key",
        sk.to_str().expect("utf8"),
        "--public-key",
        pk.to_str().expect("utf8"),
        "--name",
        "example.org/log",
    ];
    let r = run(&args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("example.org/log+"));
    let signer = pitboss_audit::NoteSigner::from_pkcs8_pem(
        "example.org/log",
        &std::fs::read_to_string(&sk).expect("read"),
    )
    .expect("pkcs8");
    let public = pitboss_audit::public_key_from_pem(&std::fs::read_to_string(&pk).expect("read"))
        .expect("spki");
    assert_eq!(signer.verifier().key(), &public);
    assert_eq!(signer.verifier().to_vkey(), r.stdout.trim());
    assert_eq!(run(&args).code, 5);
}

#[test]
fn check_proof_with_witness_keys_requires_their_cosignatures_on_the_proofs_checkpoint() {
    use pitboss_audit::cosign::Cosigner;
    let (c, _) = case("prove-witnessed");
    let export = c.write("export.jsonl", &c.lines);
    let proof = c.dir.join("proof.json");
    let r = run(&[
        "prove",
        export.to_str().expect("utf8"),
        "--seq",
        "34",
        "--out",
        proof.to_str().expect("utf8"),
    ]);
    assert_eq!(r.code, 0, "{} {}", r.stdout, r.stderr);
    let key = c.key.to_str().expect("utf8");
    let w1 = Cosigner::new(
        "w1.test/witness",
        pitboss_audit::SigningKey::from_bytes(&[7; 32]),
    )
    .expect("name");
    let w2 = Cosigner::new(
        "w2.test/witness",
        pitboss_audit::SigningKey::from_bytes(&[8; 32]),
    )
    .expect("name");
    let (v1, v2) = (w1.verifier().to_vkey(), w2.verifier().to_vkey());
    let check = |file: &PathBuf, witnesses: &[&str], quorum: Option<&str>| {
        let mut args = vec![
            "check-proof",
            file.to_str().expect("utf8"),
            "--public-key",
            key,
        ];
        for w in witnesses {
            args.extend(["--witness-key", w]);
        }
        if let Some(q) = quorum {
            args.extend(["--witness-quorum", q]);
        }
        run(&args)
    };

    // Not cosigned: the proof alone checks, not with a witness required.
    let r = check(&proof, &[], None);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let r = check(&proof, &[&v1], None);
    assert_eq!(r.code, 30, "{}", r.stdout);
    assert!(
        r.stdout.starts_with(
            "FAIL the checkpoint of size 60 carries valid cosignatures by 0 of the given witnesses, 1 required"
        ),
        "{}",
        r.stdout
    );

    // Cosigned by w1: one of two is the quorum of 1, not of 2.
    let mut p: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&proof).expect("proof")).expect("json");
    let mut cp = SignedCheckpoint::parse(p["checkpoint"].as_str().expect("note")).expect("cp");
    cp.add_signatures([w1.cosign(&cp.checkpoint, 1_767_225_600)]);
    p["checkpoint"] = serde_json::Value::from(cp.to_text());
    let cosigned = c.dir.join("cosigned.json");
    std::fs::write(&cosigned, p.to_string()).expect("write");
    let r = check(&cosigned, &[&v1], None);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(
        r.stdout
            .trim_end()
            .ends_with(", cosigned by w1.test/witness at 1767225600"),
        "{}",
        r.stdout
    );
    let r = check(&cosigned, &[&v1, &v2], Some("1"));
    assert_eq!(r.code, 0, "{}", r.stdout);
    let r = check(&cosigned, &[&v1, &v2], None);
    assert_eq!(r.code, 30, "{}", r.stdout);

    // A cosignature that does not verify (the timestamp altered) is a failure, not ignored.
    let mut bad = cp.clone();
    bad.signatures.retain(|s| !w1.verifier().is_named_by(s));
    let mut forged = w1.cosign(&cp.checkpoint, 1_767_225_600);
    forged.signature[..8].copy_from_slice(&1_767_225_601u64.to_be_bytes());
    bad.add_signatures([forged]);
    p["checkpoint"] = serde_json::Value::from(bad.to_text());
    let tampered = c.dir.join("bad-cosignature.json");
    std::fs::write(&tampered, p.to_string()).expect("write");
    let r = check(&tampered, &[&v1], None);
    assert_eq!(r.code, 30, "{}", r.stdout);
    assert!(
        r.stdout
            .starts_with("FAIL the checkpoint's cosignature does not verify"),
        "{}",
        r.stdout
    );
}
