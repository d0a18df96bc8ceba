//! Signed notes and checkpoints from anywhere (a witness's answer, a checkpoint an auditor was
//! handed, a witness request body): parsing never panics, and what parses writes back to the
//! same text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pitboss_audit::cosign::CosignerVerifier;
use pitboss_audit::note::{NoteVerifier, SignedCheckpoint};
use pitboss_audit::witness::{parse_add_checkpoint, parse_cosignature_lines, parse_size_body};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(cp) = SignedCheckpoint::parse(text) {
            // One spelling: the parsed note writes back byte for byte.
            assert_eq!(cp.to_text(), text);
            assert_eq!(SignedCheckpoint::parse(&cp.to_text()).as_ref(), Ok(&cp));
        }
        if let Ok(v) = NoteVerifier::from_vkey(text) {
            assert_eq!(v.to_vkey(), text);
        }
        if let Ok(v) = CosignerVerifier::from_vkey(text) {
            assert_eq!(v.to_vkey(), text);
        }
    }
    if let Ok(req) = parse_add_checkpoint(data) {
        let again = pitboss_audit::witness::format_add_checkpoint(
            req.old_size,
            &req.proof,
            &req.checkpoint,
        );
        assert_eq!(again.as_bytes(), data);
    }
    let _ = parse_cosignature_lines(data);
    let _ = parse_size_body(data);
});
