//! Signing in to the console with an API key, and the sessions that follow.
//!
//! - Only **regulator** and **auditor** keys sign in. Operator keys never do (the console
//!   shows every operator's tables); admin keys do not either: an admin key manages keys and
//!   should not be typed into a browser; an admin creates an auditor key for reading.
//! - The key is posted once in a form body (never in a URL) and not kept: the session holds
//!   the key id and role only.
//! - A session id is 32 random bytes from the OS; the server keeps SHA-256 of it, so the
//!   memory of the service does not hold a usable cookie. The cookie is `HttpOnly`,
//!   `SameSite=Strict`, `Path=/console`, and `Secure` when the request came over HTTPS (or the
//!   service is told it is behind one, `--secure-cookies`).
//! - Sessions are bounded: at most [`MAX_SESSIONS`] at once (the least recently used one goes
//!   when a new one would exceed it), each ending after [`IDLE`] without a request and
//!   [`LIFETIME`] after sign-in, whichever comes first.
//! - Cross-site request forgery: sign-in and sign-out are POST forms carrying a token the
//!   attacker cannot read (the sign-in form's token is also in a short-lived `SameSite=Strict`
//!   cookie it must match; sign-out's is the session's own), on top of `SameSite=Strict`.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use actix_web::cookie::{Cookie, SameSite};
use actix_web::dev::Payload;
use actix_web::{web, FromRequest, HttpRequest};
use rand::TryRngCore;
use sha2::{Digest, Sha256};

use super::ConsoleError;
use crate::api::auth::Role;
use crate::api::startup::AppState;
use crate::plan::canonical::hex;

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "pitboss_console";
/// The sign-in form's token cookie.
pub const LOGIN_COOKIE: &str = "pitboss_console_login";
/// Most sessions held at once.
pub const MAX_SESSIONS: usize = 256;
/// A session ends after this long without a request.
pub const IDLE: Duration = Duration::from_secs(30 * 60);
/// A session ends this long after sign-in, however active.
pub const LIFETIME: Duration = Duration::from_secs(8 * 60 * 60);
/// How long a sign-in form stays valid.
pub const LOGIN_FORM_SECONDS: i64 = 10 * 60;

/// The roles that may sign in.
pub const CONSOLE_ROLES: &[Role] = &[Role::Regulator, Role::Auditor];

/// A signed-in reader.
#[derive(Debug, Clone)]
pub struct Viewer {
    pub key_id: String,
    pub role: Role,
    /// The token the session's forms carry (sign-out).
    pub csrf: String,
}

#[derive(Debug, Clone)]
struct Session {
    viewer: Viewer,
    created: Instant,
    last_seen: Instant,
}

impl Session {
    fn expired(&self, now: Instant) -> bool {
        now.duration_since(self.last_seen) >= IDLE || now.duration_since(self.created) >= LIFETIME
    }
}

/// The live sessions, by SHA-256 of their id.
#[derive(Debug, Default)]
pub struct Sessions {
    map: Mutex<HashMap<String, Session>>,
}

/// 32 random bytes from the OS, hex.
pub fn random_token() -> Result<String, ConsoleError> {
    let mut b = [0u8; 32];
    rand::rngs::OsRng
        .try_fill_bytes(&mut b)
        .map_err(|e| ConsoleError::Unavailable(format!("random source: {e}")))?;
    Ok(hex(&b))
}

fn digest(id: &str) -> String {
    hex(&Sha256::digest(id.as_bytes()))
}

/// Equal strings, compared in time that does not depend on where they differ.
pub fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

impl Sessions {
    /// A new session for `viewer`; returns its id (the cookie's value).
    pub fn create(&self, key_id: &str, role: Role, now: Instant) -> Result<String, ConsoleError> {
        let id = random_token()?;
        let viewer = Viewer {
            key_id: key_id.to_string(),
            role,
            csrf: random_token()?,
        };
        let mut map = self.map.lock().expect("sessions lock");
        map.retain(|_, s| !s.expired(now));
        while map.len() >= MAX_SESSIONS {
            let oldest = map
                .iter()
                .min_by_key(|(_, s)| s.last_seen)
                .map(|(k, _)| k.clone())
                .expect("a full map has an oldest session");
            map.remove(&oldest);
        }
        map.insert(
            digest(&id),
            Session {
                viewer,
                created: now,
                last_seen: now,
            },
        );
        Ok(id)
    }

    /// The session of `id`, if live; counts as activity.
    pub fn get(&self, id: &str, now: Instant) -> Option<Viewer> {
        let mut map = self.map.lock().expect("sessions lock");
        let key = digest(id);
        match map.get_mut(&key) {
            Some(s) if !s.expired(now) => {
                s.last_seen = now;
                Some(s.viewer.clone())
            }
            Some(_) => {
                map.remove(&key);
                None
            }
            None => None,
        }
    }

    pub fn remove(&self, id: &str) {
        self.map.lock().expect("sessions lock").remove(&digest(id));
    }

    pub fn len(&self) -> usize {
        self.map.lock().expect("sessions lock").len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Whether cookies get `Secure`: the request came over HTTPS (directly or as a proxy in
/// front says), or the service was told so.
pub fn secure(req: &HttpRequest, forced: bool) -> bool {
    forced || req.connection_info().scheme() == "https"
}

/// A console cookie with the attributes every one of them carries.
pub fn cookie(name: &str, value: String, secure: bool) -> Cookie<'static> {
    Cookie::build(name.to_string(), value)
        .path("/console")
        .http_only(true)
        .same_site(SameSite::Strict)
        .secure(secure)
        .finish()
}

/// The cookie that removes `name`.
pub fn removal(name: &str, secure: bool) -> Cookie<'static> {
    let mut c = cookie(name, String::new(), secure);
    c.make_removal();
    c
}

impl FromRequest for Viewer {
    type Error = ConsoleError;
    type Future = std::future::Ready<Result<Viewer, ConsoleError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let viewer = req
            .app_data::<web::Data<AppState>>()
            .zip(req.cookie(SESSION_COOKIE))
            .and_then(|(state, c)| state.console.sessions.get(c.value(), Instant::now()));
        std::future::ready(viewer.ok_or(ConsoleError::NotSignedIn))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_are_bounded_in_number_and_in_time() {
        let s = Sessions::default();
        let t0 = Instant::now();
        let first = s.create("k0", Role::Auditor, t0).unwrap();
        let mut last = String::new();
        for i in 1..=MAX_SESSIONS {
            last = s
                .create(
                    &format!("k{i}"),
                    Role::Regulator,
                    t0 + Duration::from_millis(i as u64),
                )
                .unwrap();
        }
        assert_eq!(s.len(), MAX_SESSIONS);
        // The least recently used one made room.
        assert!(s.get(&first, t0 + Duration::from_secs(1)).is_none());
        let v = s.get(&last, t0 + Duration::from_secs(1)).unwrap();
        assert_eq!(v.role, Role::Regulator);
        // Idle too long, then gone.
        assert!(s.get(&last, t0 + Duration::from_secs(1) + IDLE).is_none());
        // Active, but past its lifetime.
        let id = s.create("k", Role::Auditor, t0).unwrap();
        let mut t = t0;
        while t < t0 + LIFETIME - IDLE / 2 {
            t += IDLE / 2;
            assert!(s.get(&id, t).is_some());
        }
        assert!(s.get(&id, t0 + LIFETIME).is_none());
    }

    #[test]
    fn the_service_keeps_only_a_digest_of_a_session_id() {
        let s = Sessions::default();
        let id = s.create("k", Role::Auditor, Instant::now()).unwrap();
        assert_eq!(id.len(), 64);
        let map = s.map.lock().unwrap();
        assert!(!map.contains_key(&id));
        assert!(map.contains_key(&digest(&id)));
    }

    #[test]
    fn same_compares_whole_strings() {
        assert!(same("abc", "abc"));
        assert!(!same("abc", "abd"));
        assert!(!same("abc", "abcd"));
    }
}
