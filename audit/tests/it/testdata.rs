//! `testdata/` is regenerated here from fixed keys and timestamps and must match byte for byte,
//! so the published vectors cannot drift from the code. `PITBOSS_AUDIT_BLESS=1` rewrites them.

use crate::fixture::{rotation_log, signer, ORIGIN};
use pitboss_audit::note::public_key_to_pem;
use pitboss_audit::{
    make_proof, root_of, verify_export, Hash, LeafSource, SignedCheckpoint, VerifyOptions,
};
use serde_json::json;
use sha2::{Digest, Sha256};
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

/// Every file of `testdata/`, as the code produces it now.
fn render() -> Vec<(&'static str, String)> {
    let log = rotation_log();
    let (a, b) = (signer("A"), signer("B"));
    let export = String::from_utf8(log.export()).expect("utf8");
    let leaves: Vec<Hash> = log.entries.iter().map(|e| e.leaf_hash).collect();
    let roots: Vec<_> = log
        .checkpoints
        .iter()
        .map(|c| json!({"size": c.checkpoint.size, "root_hex": root_of(&leaves[..c.checkpoint.size as usize]).to_hex()}))
        .collect();
    let last = log.checkpoints.last().expect("has checkpoints");
    let proof =
        make_proof(leaves.as_slice(), &log.entries[4].canonical, 4, last).expect("in range");
    let expected = json!({
        "origin": ORIGIN,
        "key_a_vkey": a.verifier().to_vkey(),
        "key_b_vkey": b.verifier().to_vkey(),
        "leaf_hashes_hex": leaves.iter().map(Hash::to_hex).collect::<Vec<_>>(),
        "roots": roots,
        "checkpoints": log.checkpoints.iter().map(SignedCheckpoint::to_text).collect::<Vec<_>>(),
        "consistency_7_to_14_hex": pitboss_audit::consistency_proof(leaves.as_slice(), 7, 14).expect("in order").iter().map(Hash::to_hex).collect::<Vec<_>>(),
    });
    let pretty = |v: &serde_json::Value| serde_json::to_string_pretty(v).expect("json") + "\n";
    vec![
        ("export.jsonl", export),
        (
            "key-a.pub.pem",
            public_key_to_pem(a.verifier().key()).expect("pem"),
        ),
        (
            "key-b.pub.pem",
            public_key_to_pem(b.verifier().key()).expect("pem"),
        ),
        ("key-a.TEST-ONLY.pem", a.to_pkcs8_pem().expect("pem")),
        ("key-b.TEST-ONLY.pem", b.to_pkcs8_pem().expect("pem")),
        ("checkpoint-14.txt", last.to_text()),
        ("expected.json", pretty(&expected)),
        (
            "proof-4.json",
            pretty(&serde_json::to_value(&proof).expect("json")),
        ),
    ]
}

#[test]
fn testdata_matches_a_deterministic_regeneration() {
    let bless = std::env::var_os("PITBOSS_AUDIT_BLESS").is_some();
    for (name, content) in render() {
        let path = dir().join(name);
        if bless {
            std::fs::create_dir_all(dir()).expect("mkdir");
            std::fs::write(&path, &content).expect("write testdata");
        }
        let on_disk = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!("{}: {e} (PITBOSS_AUDIT_BLESS=1 writes it)", path.display())
        });
        assert_eq!(
            on_disk, content,
            "{name} differs from what the code produces"
        );
    }
}

#[test]
fn testdata_export_verifies_with_key_a_alone_learning_key_b_from_the_rotation() {
    let pem = std::fs::read_to_string(dir().join("key-a.pub.pem")).expect("read");
    let key_a = pitboss_audit::public_key_from_pem(&pem).expect("spki pem");
    let export = std::fs::read(dir().join("export.jsonl")).expect("read");
    let s = verify_export(
        export.as_slice(),
        VerifyOptions {
            anchors: vec![key_a],
            trusted: None,
            check_canonical: true,
            ..Default::default()
        },
        |_| {},
    )
    .expect("testdata verifies");
    assert_eq!((s.entries, s.checkpoints), (14, 4));
    let b = s
        .keys
        .iter()
        .find(|k| k.vkey == signer("B").verifier().to_vkey())
        .expect("B learned");
    assert_eq!((b.from_size, b.until_size, b.authorised), (8, None, true));
}

#[test]
fn testdata_expected_values_are_recomputed_independently_from_the_export_bytes() {
    let export = std::fs::read_to_string(dir().join("export.jsonl")).expect("read");
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir().join("expected.json")).expect("read"))
            .expect("json");
    let lines: Vec<&str> = export.lines().collect();
    let entry_lines: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("{\"ids\":"))
        .collect();
    // Leaf hash = SHA-256(0x00 ‖ line bytes), with sha2 directly.
    let leaf_hex: Vec<String> = entry_lines
        .iter()
        .map(|l| {
            let mut h = Sha256::new();
            h.update([0u8]);
            h.update(l.as_bytes());
            Hash(h.finalize().into()).to_hex()
        })
        .collect();
    assert_eq!(json!(leaf_hex), expected["leaf_hashes_hex"]);
    // Each entry's prev is the previous leaf hash; entry 0's is 64 zeros.
    for (i, l) in entry_lines.iter().enumerate() {
        let v: serde_json::Value = serde_json::from_str(l).expect("json");
        let want = if i == 0 {
            "0".repeat(64)
        } else {
            leaf_hex[i - 1].clone()
        };
        assert_eq!(v["prev"], json!(want), "entry {i}");
        assert_eq!(v["seq"], json!(i));
    }
    // Checkpoint lines carry the expected texts, in order.
    let cps: Vec<String> = lines
        .iter()
        .filter(|l| l.starts_with("{\"checkpoint\":"))
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).expect("json")["checkpoint"]
                .as_str()
                .expect("string")
                .to_owned()
        })
        .collect();
    assert_eq!(json!(cps), expected["checkpoints"]);
    // The roots in the checkpoints are the expected roots.
    let leaves: Vec<Hash> = leaf_hex
        .iter()
        .map(|h| Hash::from_hex(h).expect("hex"))
        .collect();
    for r in expected["roots"].as_array().expect("array") {
        let size = r["size"].as_u64().expect("size") as usize;
        assert_eq!(json!(root_of(&leaves[..size]).to_hex()), r["root_hex"]);
        assert_eq!(
            leaves
                .as_slice()
                .range_hash(0, size as u64)
                .expect("infallible")
                .to_hex(),
            r["root_hex"].as_str().expect("str")
        );
    }
}

#[test]
fn testdata_proof_checks_with_key_b() {
    let proof: pitboss_audit::InclusionProofFile =
        serde_json::from_str(&std::fs::read_to_string(dir().join("proof-4.json")).expect("read"))
            .expect("json");
    let key_b = *signer("B").verifier().key();
    let c = pitboss_audit::check_proof(&proof, &[key_b]).expect("proof checks");
    assert_eq!(
        (c.seq, c.tree_size, c.kind.as_str()),
        (4, 14, "bet_accepted")
    );
    assert!(pitboss_audit::check_proof(&proof, &[*signer("A").verifier().key()]).is_err());
}
