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
pub fn load_or_create(path: &Path) -> Result<SigningKey, KeyFileError> {
    let err = |detail: String| KeyFileError {
        path: path.display().to_string(),
        detail,
    };
    if path.exists() {
        let pem = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
        return pitboss_audit::note::private_key_from_pem(&pem).map_err(|e| err(e.to_string()));
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
    write_private(path, pem.as_bytes()).map_err(|e| err(e.to_string()))?;
    Ok(key)
}

/// The first 8 bytes of SHA-256 of the public key, in hex: a name for a key that has none yet
/// (the signed-note key id depends on the name, so it cannot be used to make one).
pub fn fingerprint(key: &SigningKey) -> String {
    let h = Sha256::digest(key.verifying_key().as_bytes());
    h[..8].iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(unix)]
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

#[cfg(not(unix))]
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::write(path, bytes)
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
    }
}
