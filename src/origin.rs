//! The log's origin: the first line of every checkpoint, the name of its signing key, and what
//! witnesses and auditors know the log by. One origin names one log.

use ed25519_dalek::SigningKey;

/// Why the service cannot settle on an origin.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OriginError {
    #[error("origin {0:?} is not a valid log name: 1–256 bytes, no whitespace, control characters or '+' (audit/FORMAT.md 3.1)")]
    Invalid(String),
    #[error("a deployment on PostgreSQL names its log: give --origin (PITBOSS_LOG_ORIGIN), e.g. `casino.example.cz/pitboss/prague-live`")]
    Required,
    #[error("the log in this database is named {stored:?}, not {configured:?}: an origin names one log (start with --origin {stored:?}, or use a new database for a new log)")]
    Mismatch { stored: String, configured: String },
}

/// The embedded default's origin for a new log: `localhost/pitboss/<key fingerprint>`, unique
/// per signing key, so two test or demo deployments never share a log name.
pub fn derived(key: &SigningKey) -> String {
    format!("localhost/pitboss/{}", crate::keyfile::fingerprint(key))
}

/// The origin to run with: the configured one (which must match a log already in the
/// database), else the stored one, else — for the embedded SQLite default only — one derived
/// from the signing key. A PostgreSQL deployment (production) must name it.
pub fn resolve(
    configured: Option<&str>,
    stored: Option<&str>,
    key: &SigningKey,
    embedded: bool,
) -> Result<String, OriginError> {
    let origin = match (configured, stored) {
        (Some(c), Some(s)) if c != s => {
            return Err(OriginError::Mismatch {
                stored: s.to_owned(),
                configured: c.to_owned(),
            })
        }
        (Some(c), _) => c.to_owned(),
        (None, _) if !embedded => return Err(OriginError::Required),
        (None, Some(s)) => s.to_owned(),
        (None, None) => derived(key),
    };
    if !pitboss_audit::note::name_ok(&origin) {
        return Err(OriginError::Invalid(origin));
    }
    Ok(origin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_default_derives_a_unique_origin_from_the_key_and_keeps_a_stored_one() {
        let (a, b) = (
            SigningKey::from_bytes(&[1; 32]),
            SigningKey::from_bytes(&[2; 32]),
        );
        let oa = resolve(None, None, &a, true).expect("derived");
        assert!(oa.starts_with("localhost/pitboss/"), "{oa}");
        assert_ne!(oa, resolve(None, None, &b, true).expect("derived"));
        assert_eq!(
            resolve(None, Some("x.example/log"), &a, true),
            Ok("x.example/log".into())
        );
    }

    #[test]
    fn production_must_name_its_origin_and_cannot_rename_a_log() {
        let k = SigningKey::from_bytes(&[1; 32]);
        assert_eq!(resolve(None, None, &k, false), Err(OriginError::Required));
        assert_eq!(
            resolve(None, Some("a.example/log"), &k, false),
            Err(OriginError::Required)
        );
        assert_eq!(
            resolve(Some("a.example/log"), None, &k, false),
            Ok("a.example/log".into())
        );
        assert!(matches!(
            resolve(Some("b.example/log"), Some("a.example/log"), &k, true),
            Err(OriginError::Mismatch { .. })
        ));
        assert!(matches!(
            resolve(Some("a example"), None, &k, false),
            Err(OriginError::Invalid(_))
        ));
    }
}
