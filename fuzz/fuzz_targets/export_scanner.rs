//! An export an auditor did not make: the streaming verifier must answer every input with OK or
//! one failure, never a panic, a hang or unbounded memory; and the fast entry scanner must never
//! accept a line that a general JSON parser refuses.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pitboss_audit::entry::WireEntry;
use pitboss_audit::scan::scan_entry;
use pitboss_audit::verify::{verify_export, VerifyOptions};
use pitboss_audit::{NoteSigner, SigningKey};

fuzz_target!(|data: &[u8]| {
    if let Ok(e) = scan_entry(data) {
        let w = WireEntry::parse(data).expect("the scanner accepted what serde refuses");
        assert_eq!(w.seq, e.seq);
        assert_eq!(w.payload.get(), e.payload);
    }
    let opts = VerifyOptions {
        anchors: vec![*test_key().verifier().key()],
        ..VerifyOptions::default()
    };
    let _ = verify_export(data, opts, |_| {});
});

/// The key of the committed test vectors (`audit/testdata/key-a.TEST-ONLY.pem`), so that inputs
/// derived from them get past the signatures and reach the later checks.
fn test_key() -> &'static NoteSigner {
    static KEY: std::sync::OnceLock<NoteSigner> = std::sync::OnceLock::new();
    KEY.get_or_init(|| {
        let pem = include_str!("../../audit/testdata/key-a.TEST-ONLY.pem");
        let seed = pitboss_audit::note::private_key_from_pem(pem)
            .expect("test key")
            .to_bytes();
        NoteSigner::new("pitboss.test/audit/demo", SigningKey::from_bytes(&seed)).expect("name")
    })
}
