//! Proof files and proofs an auditor was handed: inclusion and consistency proof files, raw
//! paths against arbitrary sizes, and a consistency proof made from an arbitrary export. Every
//! input is refused or checked, never a panic or an allocation the sizes ask for.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pitboss_audit::hash::Hash;
use pitboss_audit::merkle::{verify_consistency, verify_inclusion};
use pitboss_audit::{
    check_consistency, check_proof, prove_consistency_from_export, ConsistencyProofFile,
    InclusionProofFile, SignedCheckpoint,
};

fn u64_at(data: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    for (i, x) in b.iter_mut().enumerate() {
        *x = data.get(at + i).copied().unwrap_or(0);
    }
    u64::from_le_bytes(b)
}

fuzz_target!(|data: &[u8]| {
    let key = pitboss_audit::note::public_key_from_pem(include_str!(
        "../../audit/testdata/key-a.pub.pem"
    ))
    .expect("test key");
    if let Ok(p) = serde_json::from_slice::<InclusionProofFile>(data) {
        let _ = check_proof(&p, &[key]);
    }
    if let Ok(p) = serde_json::from_slice::<ConsistencyProofFile>(data) {
        let cp = SignedCheckpoint::parse(include_str!("../../audit/testdata/checkpoint-14.txt"))
            .expect("test checkpoint");
        let _ = check_consistency(&cp, &cp, &p, &[key], &[], 0);
    }
    // Raw proofs: sizes and an index from the first bytes, the rest as hashes.
    let (a, b, c) = (u64_at(data, 0), u64_at(data, 8), u64_at(data, 16));
    let path: Vec<Hash> = data
        .get(24..)
        .unwrap_or_default()
        .chunks_exact(32)
        .map(|h| Hash(h.try_into().expect("32 bytes")))
        .collect();
    let root = path.first().copied().unwrap_or(Hash::ZERO);
    let _ = verify_inclusion(&root, a, b, &path, &root);
    let _ = verify_consistency(a, b, &root, &root, &path);
    let _ = verify_consistency(a % 300, b % 300, &root, &root, &path);
    // A consistency proof from an arbitrary export (sizes kept small so that a long proof
    // request is about the export, not about counting).
    let _ = prove_consistency_from_export(
        std::io::Cursor::new(data),
        c % 64,
        (c & 1 == 0).then_some((c >> 8) % 64),
    );
});
