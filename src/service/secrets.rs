//! Secrets at rest: the data directory and its files are readable by the service's user
//! only, and the RNG seeds of open rounds are stored encrypted, with a key kept beside the
//! signing key and never in the database. Whoever reads the database (a backup, a replica, a
//! database administrator) learns a round's seed only when pitboss reveals it in the log.

use std::path::Path;

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use rand::TryRngCore;

/// Version byte of a stored seed: ChaCha20-Poly1305 (RFC 8439), 12-byte random nonce, the
/// round id as associated data (a ciphertext moved to another round does not open).
const SEALED_V1: u8 = 1;
const NONCE_BYTES: usize = 12;

#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    #[error("{path}: {detail}")]
    File { path: String, detail: String },
    #[error("the seed of round {0} does not open with this seed key (another key, or altered)")]
    Open(String),
    #[error("the stored seed of round {0} has an unknown format")]
    Format(String),
    #[error("the operating system's random source failed: {0}")]
    Random(String),
}

/// Encrypts and decrypts RNG seeds for storage.
pub struct SeedCipher {
    aead: ChaCha20Poly1305,
}

impl std::fmt::Debug for SeedCipher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SeedCipher(..)")
    }
}

impl SeedCipher {
    pub fn new(key: [u8; 32]) -> SeedCipher {
        SeedCipher {
            aead: ChaCha20Poly1305::new(Key::from_slice(&key)),
        }
    }

    /// Loads the key from `path` (64 hex digits), or creates one there (mode 0600).
    pub fn load_or_create(path: &Path) -> Result<SeedCipher, SecretError> {
        Ok(SeedCipher::new(load_or_create_key(path)?))
    }

    /// The stored form of `seed` for `round`.
    pub fn seal(&self, round: &str, seed: &[u8; 32]) -> Result<Vec<u8>, SecretError> {
        let mut nonce = [0u8; NONCE_BYTES];
        rand::rngs::OsRng
            .try_fill_bytes(&mut nonce)
            .map_err(|e| SecretError::Random(e.to_string()))?;
        let ct = self
            .aead
            .encrypt(
                Nonce::from_slice(&nonce),
                Payload {
                    msg: seed,
                    aad: round.as_bytes(),
                },
            )
            .map_err(|_| SecretError::Open(round.to_string()))?;
        let mut out = Vec::with_capacity(1 + NONCE_BYTES + ct.len());
        out.push(SEALED_V1);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&ct);
        Ok(out)
    }

    /// The seed of `round` from its stored form. A 32-byte row is a seed stored in the clear
    /// by an earlier version (read, and re-sealed by the service at start).
    pub fn open(&self, round: &str, stored: &[u8]) -> Result<[u8; 32], SecretError> {
        if stored.len() == 32 {
            let mut s = [0u8; 32];
            s.copy_from_slice(stored);
            return Ok(s);
        }
        match stored.split_first() {
            Some((&SEALED_V1, rest)) if rest.len() == NONCE_BYTES + 32 + 16 => {
                let (nonce, ct) = rest.split_at(NONCE_BYTES);
                let pt = self
                    .aead
                    .decrypt(
                        Nonce::from_slice(nonce),
                        Payload {
                            msg: ct,
                            aad: round.as_bytes(),
                        },
                    )
                    .map_err(|_| SecretError::Open(round.to_string()))?;
                let mut s = [0u8; 32];
                s.copy_from_slice(&pt);
                Ok(s)
            }
            _ => Err(SecretError::Format(round.to_string())),
        }
    }
}

/// Where the seed key is: as configured, else `seed-key` beside the signing key.
pub fn seed_key_path(configured: Option<&Path>, signing_key: &Path) -> std::path::PathBuf {
    configured.map_or_else(
        || {
            signing_key.parent().map_or_else(
                || std::path::PathBuf::from("seed-key"),
                |d| d.join("seed-key"),
            )
        },
        Path::to_path_buf,
    )
}

/// The secret the nodes of one log share (issue 17): derived from the seed key, which every
/// node must hold alike (a node that takes the log over opens the stored seeds with it).
/// A standby sends it with each request it forwards; the writer then trusts the `Forwarded`
/// element the standby added, and counts a failed authentication against the client's
/// address rather than the standby's. SHA-256 of a label and the key: the key cannot be
/// recovered from it, and no other secret derived from the key equals it.
pub fn node_token(seed_key: &Path) -> Result<String, SecretError> {
    use sha2::{Digest, Sha256};
    let key = load_or_create_key(seed_key)?;
    let mut h = Sha256::new();
    h.update(b"pitboss node token v1\n");
    h.update(key);
    Ok(crate::plan::canonical::hex(&h.finalize()))
}

/// The seed key at `path` (64 hex digits), or a new one created there (mode 0600). Nodes
/// started at once on one data directory end with the one key: a key file appears whole
/// (`keyfile::write_private`), and who loses the race to create it reads the winner's.
fn load_or_create_key(path: &Path) -> Result<[u8; 32], SecretError> {
    let err = |detail: String| SecretError::File {
        path: path.display().to_string(),
        detail,
    };
    let read = || {
        let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
        let bytes = decode_hex(text.trim())
            .filter(|b| b.len() == 32)
            .ok_or_else(|| err("a seed key is 64 hex digits".into()))?;
        let mut key = [0u8; 32];
        key.copy_from_slice(&bytes);
        restrict(path).map_err(|e| err(e.to_string()))?;
        Ok(key)
    };
    if path.exists() {
        return read();
    }
    let mut key = [0u8; 32];
    rand::rngs::OsRng
        .try_fill_bytes(&mut key)
        .map_err(|e| SecretError::Random(e.to_string()))?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| err(e.to_string()))?;
    }
    let text = format!("{}\n", crate::plan::canonical::hex(&key));
    match crate::keyfile::write_private(path, text.as_bytes()) {
        Ok(()) => Ok(key),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => read(),
        Err(e) => Err(err(e.to_string())),
    }
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Makes `path` readable and writable by its owner only.
#[cfg(unix)]
pub fn restrict(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = if path.is_dir() { 0o700 } else { 0o600 };
    let current = std::fs::metadata(path)?.permissions().mode() & 0o777;
    if current & 0o077 != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
    }
    Ok(())
}

#[cfg(not(unix))]
pub fn restrict(_path: &Path) -> std::io::Result<()> {
    Ok(())
}

/// Prepares the data directory: created (or tightened) to mode 0700, the files pitboss keeps
/// there tightened to 0600, and the process's umask set to 077 so that every file created
/// later (SQLite's database, its WAL and shared-memory files, keys) is the owner's only.
pub fn secure_data_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        // SAFETY: umask(2) only sets the calling process's file mode creation mask.
        unsafe {
            libc::umask(0o077);
        }
        use std::os::unix::fs::DirBuilderExt;
        if !dir.exists() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)?;
        }
    }
    #[cfg(not(unix))]
    std::fs::create_dir_all(dir)?;
    restrict(dir)?;
    for name in [
        "pitboss.sqlite",
        "pitboss.sqlite-wal",
        "pitboss.sqlite-shm",
        "pitboss.sqlite-journal",
        "signing-key.pem",
        "seed-key",
    ] {
        let p = dir.join(name);
        if p.exists() {
            restrict(&p)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_seed_opens_for_its_round_only() {
        let c = SeedCipher::new([7u8; 32]);
        let seed = [42u8; 32];
        let sealed = c.seal("t1.1", &seed).expect("seals");
        assert_ne!(&sealed[..], &seed[..]);
        assert!(!sealed.windows(32).any(|w| w == seed));
        assert_eq!(c.open("t1.1", &sealed).expect("opens"), seed);
        assert!(matches!(c.open("t1.2", &sealed), Err(SecretError::Open(_))));
        let other = SeedCipher::new([8u8; 32]);
        assert!(other.open("t1.1", &sealed).is_err());
        // Two seals of one seed differ (random nonce).
        assert_ne!(sealed, c.seal("t1.1", &seed).expect("seals"));
    }

    #[test]
    fn a_seed_key_file_is_created_private_and_read_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("seed-key");
        let a = SeedCipher::load_or_create(&path).expect("creates");
        let b = SeedCipher::load_or_create(&path).expect("reads");
        let sealed = a.seal("r.1", &[1u8; 32]).expect("seals");
        assert_eq!(b.open("r.1", &sealed).expect("opens"), [1u8; 32]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
    }
}
