//! Consistency proofs against an independent implementation: `tests/reference/rfc6962_reference.py`
//! (written from RFC 6962 §2.1 and RFC 9162 §2.1.4.2 with Python's standard library) computes the
//! roots and PROOF(m, n) for every 1 ≤ m ≤ n ≤ 64; the library, `prove-consistency` and
//! `consistency` must agree with it on every pair, and a fork must be refused.

use crate::cli::{pem_of, run};
use crate::fixture::{self, Log};
use pitboss_audit::{
    check_consistency, consistency_proof, root_of, verify_consistency, ConsistencyProofFile, Hash,
};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const N: u64 = 64;

fn reference_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/reference/rfc6962_reference.py")
}

/// Runs the Python reference; `None` (with a message) when no `python3` is installed.
fn python(command: &str, input: &Value) -> Option<Value> {
    let child = Command::new("python3")
        .arg(reference_script())
        .arg(command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("SKIPPED: python3 is not installed, the RFC 6962 cross-check cannot run");
            return None;
        }
        Err(e) => panic!("python3: {e}"),
    };
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.to_string().as_bytes())
        .expect("write to python");
    let out = child.wait_with_output().expect("python runs");
    assert!(out.status.success(), "reference script failed");
    Some(serde_json::from_slice(&out.stdout).expect("reference prints JSON"))
}

fn hashes(v: &Value) -> Vec<Hash> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|h| Hash::from_hex(h.as_str().expect("hex")).expect("hash"))
        .collect()
}

/// The reference's PROOF(m, n) by (m, n).
type Proofs = BTreeMap<(u64, u64), Vec<Hash>>;

/// A 64-entry log with a checkpoint after every entry, and the reference's roots and proofs.
fn reference() -> Option<(Log, Vec<Hash>, Proofs)> {
    let log = fixture::simple_log(N, 1, None);
    let lines: Vec<String> = log
        .entries
        .iter()
        .map(|e| String::from_utf8(e.canonical.clone()).expect("utf8"))
        .collect();
    let out = python("prove", &json!({ "leaves": lines }))?;
    let roots = hashes(&out["roots"]);
    let mut proofs = BTreeMap::new();
    for (k, v) in out["proofs"].as_object().expect("object") {
        let (m, n) = k.split_once(' ').expect("\"m n\"");
        proofs.insert((m.parse().expect("m"), n.parse().expect("n")), hashes(v));
    }
    assert_eq!(proofs.len() as u64, N * (N + 1) / 2);
    Some((log, roots, proofs))
}

#[test]
fn library_proofs_equal_the_python_reference_on_every_pair_up_to_64_and_each_verifies_the_others() {
    let Some((log, roots, proofs)) = reference() else {
        return;
    };
    let leaves: Vec<Hash> = log.entries.iter().map(|e| e.leaf_hash).collect();
    for size in 0..=N as usize {
        assert_eq!(root_of(&leaves[..size]), roots[size], "root of size {size}");
    }
    let mut ours_for_python = Vec::new();
    for ((m, n), theirs) in &proofs {
        let ours = consistency_proof(leaves.as_slice(), *m, *n).expect("in order");
        assert_eq!(&ours, theirs, "PROOF({m}, {n})");
        verify_consistency(*m, *n, &roots[*m as usize], &roots[*n as usize], theirs)
            .unwrap_or_else(|e| panic!("reference proof {m} -> {n} does not verify here: {e}"));
        ours_for_python.push(json!({
            "old_size": m, "new_size": n,
            "old_root": roots[*m as usize].to_hex(), "new_root": roots[*n as usize].to_hex(),
            "proof": ours.iter().map(Hash::to_hex).collect::<Vec<_>>(),
        }));
        // A proof from a wrong old root must fail in both.
        if m < n {
            let wrong = roots[(*m - 1) as usize];
            assert!(verify_consistency(*m, *n, &wrong, &roots[*n as usize], &ours).is_err());
            ours_for_python.push(json!({
                "old_size": m, "new_size": n,
                "old_root": wrong.to_hex(), "new_root": roots[*n as usize].to_hex(),
                "proof": ours.iter().map(Hash::to_hex).collect::<Vec<_>>(),
                "expect": false,
            }));
        }
    }
    let verdicts = python("verify", &Value::Array(ours_for_python.clone())).expect("python ran");
    for (case, ok) in ours_for_python
        .iter()
        .zip(verdicts.as_array().expect("array"))
    {
        let expected = case.get("expect").is_none();
        assert_eq!(ok.as_bool(), Some(expected), "python on {case}");
    }
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p
}

/// Runs `f` over `items` on a few threads (each runs the CLI as a process).
fn par<T: Sync>(items: &[T], f: impl Fn(&T) + Sync) {
    std::thread::scope(|s| {
        for chunk in items.chunks(items.len().div_ceil(4).max(1)) {
            let f = &f;
            s.spawn(move || chunk.iter().for_each(f));
        }
    });
}

#[test]
fn the_commands_functions_agree_with_the_python_reference_on_every_pair_up_to_64() {
    let Some((log, _, proofs)) = reference() else {
        return;
    };
    let export = log.export();
    let key = *fixture::signer("A").verifier().key();
    for ((m, n), theirs) in &proofs {
        // What `prove-consistency` runs: one streaming pass over the export.
        let p = pitboss_audit::prove_consistency_from_export(
            std::io::Cursor::new(&export),
            *m,
            Some(*n),
        )
        .unwrap_or_else(|e| panic!("{m} -> {n}: {e}"));
        assert_eq!(&p.file.proof, theirs, "prove-consistency {m} -> {n}");
        // What `consistency --old --new --proof` runs, on the export's own checkpoints: the
        // signature checks (slow in a debug build, the same for every pair) on a sample.
        let (old, new) = (
            p.old_checkpoint.expect("checkpoint at every size"),
            p.new_checkpoint.expect("checkpoint at every size"),
        );
        if (m + n) % 31 == 0 {
            check_consistency(&old, &new, &p.file, &[key], &[], 0)
                .unwrap_or_else(|e| panic!("{m} -> {n}: {e}"));
        } else {
            verify_consistency(
                *m,
                *n,
                &old.checkpoint.root,
                &new.checkpoint.root,
                &p.file.proof,
            )
            .unwrap_or_else(|e| panic!("{m} -> {n}: {e}"));
        }
    }
}

/// The binaries themselves, on every pair ending at 33 (a size just past a power of two) or at
/// 64: each run is a process, so not all 2 080 pairs (the functions they call are checked on
/// every pair above).
#[test]
fn cli_prove_consistency_and_consistency_agree_with_the_python_reference() {
    let Some((log, _, mut proofs)) = reference() else {
        return;
    };
    proofs.retain(|(_, n), _| *n == 33 || *n == N);
    let dir = fixture::temp_dir("consistency-cli");
    let export = write(
        &dir,
        "export.jsonl",
        std::str::from_utf8(&log.export()).expect("utf8"),
    );
    let key = write(&dir, "a.pub.pem", &pem_of("A"));
    for cp in &log.checkpoints {
        write(
            &dir,
            &format!("cp-{}.txt", cp.checkpoint.size),
            &cp.to_text(),
        );
    }
    let pairs: Vec<(&(u64, u64), &Vec<Hash>)> = proofs.iter().collect();
    par(&pairs, |((m, n), theirs)| {
        let out = dir.join(format!("p-{m}-{n}.json"));
        let (from, to, out_s) = (m.to_string(), n.to_string(), out.to_str().expect("utf8"));
        let export_s = export.to_str().expect("utf8");
        let r = run(&[
            "prove-consistency",
            export_s,
            "--from",
            &from,
            "--to",
            &to,
            "-o",
            out_s,
        ]);
        assert_eq!(r.code, 0, "{} {}", r.stdout, r.stderr);
        let file: ConsistencyProofFile =
            serde_json::from_str(&std::fs::read_to_string(&out).expect("read")).expect("json");
        assert_eq!((file.old_size, file.new_size), (*m, *n));
        assert_eq!(&file.proof, *theirs, "prove-consistency {m} -> {n}");
        let old = dir.join(format!("cp-{m}.txt"));
        let new = dir.join(format!("cp-{n}.txt"));
        let r = run(&[
            "consistency",
            "--old",
            old.to_str().expect("utf8"),
            "--new",
            new.to_str().expect("utf8"),
            "--proof",
            out_s,
            "--public-key",
            key.to_str().expect("utf8"),
        ]);
        assert_eq!(
            r.code, 0,
            "consistency {m} -> {n}: {} {}",
            r.stdout, r.stderr
        );
        assert!(r.stdout.starts_with("OK "), "{}", r.stdout);
    });
}

#[test]
fn a_forked_pair_is_refused_by_the_library_and_the_command() {
    let log = fixture::simple_log(N, 1, None);
    // The same log with entry 28 written differently, re-chained and re-signed by the same key.
    let fork = fixture::simple_log(N, 1, Some(28));
    let (old, new) = (&log.checkpoints[34], &fork.checkpoints[49]);
    assert_eq!((old.checkpoint.size, new.checkpoint.size), (35, 50));
    let fork_leaves: Vec<Hash> = fork.entries.iter().map(|e| e.leaf_hash).collect();
    let proof = ConsistencyProofFile::new(
        35,
        50,
        consistency_proof(fork_leaves.as_slice(), 35, 50).expect("in order"),
    );
    let key = *fixture::signer("A").verifier().key();
    let err = check_consistency(old, new, &proof, &[key], &[], 0).expect_err("a fork");
    assert!(err.to_string().contains("does not show"), "{err}");
    // Below the fork point the two logs agree.
    let below = ConsistencyProofFile::new(
        28,
        50,
        consistency_proof(fork_leaves.as_slice(), 28, 50).expect("in order"),
    );
    check_consistency(&log.checkpoints[27], new, &below, &[key], &[], 0)
        .expect("the fork extends the common prefix");

    let dir = fixture::temp_dir("consistency-fork");
    let key_file = write(&dir, "a.pub.pem", &pem_of("A"));
    let old_file = write(&dir, "old.txt", &old.to_text());
    let new_file = write(&dir, "new.txt", &new.to_text());
    let proof_file = write(
        &dir,
        "p.json",
        &serde_json::to_string(&proof).expect("json"),
    );
    let k = key_file.to_str().expect("utf8");
    let r = run(&[
        "consistency",
        "--old",
        old_file.to_str().expect("utf8"),
        "--new",
        new_file.to_str().expect("utf8"),
        "--proof",
        proof_file.to_str().expect("utf8"),
        "--public-key",
        k,
    ]);
    assert_eq!(r.code, 32, "{} {}", r.stdout, r.stderr);
    assert!(
        r.stdout.starts_with("FAIL the proof does not show"),
        "{}",
        r.stdout
    );
    // The whole forked export against the checkpoint of size 35 that the auditor kept.
    let fork_export = write(
        &dir,
        "fork.jsonl",
        std::str::from_utf8(&fork.export()).expect("utf8"),
    );
    let r = run(&[
        "consistency",
        "--old",
        old_file.to_str().expect("utf8"),
        "--export",
        fork_export.to_str().expect("utf8"),
        "--public-key",
        k,
    ]);
    assert_eq!(r.code, 20, "{} {}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .starts_with("FAIL seq 34: does not extend trusted checkpoint"),
        "{}",
        r.stdout
    );
}

#[test]
fn prove_consistency_reads_an_export_in_one_pass_and_checks_the_roots_it_passes() {
    let log = fixture::simple_log(40, 10, None);
    let export = log.export();
    let p = pitboss_audit::prove_consistency_from_export(std::io::Cursor::new(&export), 10, None)
        .expect("proves to the last checkpoint");
    assert_eq!((p.file.old_size, p.file.new_size), (10, 40));
    assert!(p.old_checkpoint.is_some() && p.new_checkpoint.is_some());
    // An export whose entries were changed after the checkpoint at 20 was signed.
    let text = String::from_utf8(export).expect("utf8");
    let altered = text.replace("\"stake_minor\":5012", "\"stake_minor\":5013");
    assert_ne!(altered, text);
    let err = pitboss_audit::prove_consistency_from_export(
        std::io::Cursor::new(altered.as_bytes()),
        20,
        Some(30),
    )
    .expect_err("root of 20 no longer matches");
    assert!(err.to_string().contains("run verify"), "{err}");
    assert!(pitboss_audit::prove_consistency_from_export(
        std::io::Cursor::new(text.as_bytes()),
        30,
        Some(41)
    )
    .is_err());
}
