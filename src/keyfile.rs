//! Ed25519 private key files: the log's signing key and a witness's key.
//!
//! Written as PKCS#8 v1 PEM (RFC 5208, the 32-byte seed only: what OpenSSL 3.0 and Python's
//! `cryptography` read), created with mode 0600 and synced before use; v1 and v2 files are read.

use std::path::Path;

use ed25519_dalek::SigningKey;
use rand::TryRngCore;
use sha2::{Digest, Sha256};

/// Why a key file could not be read or created.
#[derive(Debug, thiserror::Error)]
#[error("key file {path}: {detail}")]
pub struct KeyFileError {
    pub path: String,
    pub detail: String,
}

/// Reads the key at `path`, or creates one there on first use.
///
/// Several processes may start at once on one data directory (the nodes of a log): a key file
/// appears under its name only whole (see [`write_private`]), and the one that loses the race
/// to create it reads the winner's.
pub fn load_or_create(path: &Path) -> Result<SigningKey, KeyFileError> {
    let err = |detail: String| KeyFileError {
        path: path.display().to_string(),
        detail,
    };
    let read = || {
        let pem = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
        pitboss_audit::note::private_key_from_pem(&pem).map_err(|e| err(e.to_string()))
    };
    if path.exists() {
        return read();
    }
    let mut seed = [0u8; 32];
    rand::rngs::OsRng
        .try_fill_bytes(&mut seed)
        .map_err(|e| err(format!("the operating system's random source: {e}")))?;
    let key = SigningKey::from_bytes(&seed);
    let pem = pitboss_audit::note::private_key_to_pem(&key).map_err(|e| err(e.to_string()))?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| err(e.to_string()))?;
    }
    match write_private(path, pem.as_bytes()) {
        Ok(()) => Ok(key),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => read(),
        Err(e) => Err(err(e.to_string())),
    }
}

/// The first 8 bytes of SHA-256 of the public key, in hex: a name for a key that has none yet
/// (the signed-note key id depends on the name, so it cannot be used to make one).
pub fn fingerprint(key: &SigningKey) -> String {
    let h = Sha256::digest(key.verifying_key().as_bytes());
    h[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes a new private file at `path`: owner-only (0600 on Unix), whole and synced before it
/// appears under its name, never over a file already there (`AlreadyExists`, the file left as
/// it was). The bytes go to a temporary file in the same directory first, which is then linked
/// to `path` without replacing; a process that reads `path` thus never sees half a key.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) => d,
        None => Path::new("."),
    };
    // `tempfile` creates its files with mode 0600 on Unix.
    let mut tmp = tempfile::Builder::new()
        .prefix(".pitboss-key-")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist_noclobber(path).map_err(|e| e.error)?;
    // The new name is durable once its directory is synced.
    #[cfg(unix)]
    std::fs::File::open(dir)?.sync_all()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_created_key_is_v1_pem_owner_only_and_read_back() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("sub").join("k.pem");
        let key = load_or_create(&path).expect("created");
        let pem = std::fs::read_to_string(&path).expect("read");
        assert!(pem.contains("MC4CAQAw"), "PKCS#8 v1: {pem}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(
            load_or_create(&path).expect("read").to_bytes(),
            key.to_bytes()
        );
        assert_eq!(fingerprint(&key).len(), 16);
        // Never written over, and nothing left beside it.
        let err = write_private(&path, b"other").expect_err("exists");
        assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read_to_string(&path).expect("read"), pem);
        let names: Vec<_> = std::fs::read_dir(path.parent().expect("dir"))
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("k.pem")]);
    }

    /// Processes started at once on one data directory (the nodes of a log) all end with the
    /// one key: who loses the race to create it reads the winner's, whole.
    #[test]
    fn keys_created_at_once_by_many_are_one_key() {
        for _ in 0..20 {
            let dir = tempfile::tempdir().expect("temp dir");
            let path = dir.path().join("k.pem");
            let barrier = std::sync::Arc::new(std::sync::Barrier::new(8));
            let keys: Vec<[u8; 32]> = (0..8)
                .map(|_| {
                    let (path, barrier) = (path.clone(), barrier.clone());
                    std::thread::spawn(move || {
                        barrier.wait();
                        load_or_create(&path).expect("a key").to_bytes()
                    })
                })
                .collect::<Vec<_>>()
                .into_iter()
                .map(|h| h.join().expect("joined"))
                .collect();
            assert!(keys.iter().all(|k| *k == keys[0]));
            assert_eq!(load_or_create(&path).expect("read").to_bytes(), keys[0]);
        }
    }
}
