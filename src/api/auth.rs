//! API keys and roles. A key is `pb_<key id>_<secret>`; only SHA-256 of the secret is stored.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::RwLock;

use chrono::{DateTime, Utc};

use actix_web::dev::Payload;
use actix_web::http::StatusCode;
use actix_web::{web, FromRequest, HttpRequest};
use diesel::prelude::*;
use rand::TryRngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::problem::Problem;
use super::startup::AppState;
use crate::plan::canonical::hex;
use crate::round::Event;
use crate::service::derived::NewKeyRow;
use crate::store::schema::api_keys;
use crate::store::{DbConnection, StoreError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// An operator's backend: opens tables, places bets, posts dealer events — its own only.
    Operator,
    /// Reads everything and exports the audit log.
    Auditor,
    /// Reads plans, tables, rounds and the audit log.
    Regulator,
    /// Manages API keys; reads everything.
    Admin,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Operator => "operator",
            Role::Auditor => "auditor",
            Role::Regulator => "regulator",
            Role::Admin => "admin",
        }
    }

    fn parse(s: &str) -> Option<Role> {
        match s {
            "operator" => Some(Role::Operator),
            "auditor" => Some(Role::Auditor),
            "regulator" => Some(Role::Regulator),
            "admin" => Some(Role::Admin),
            _ => None,
        }
    }
}

#[derive(Debug)]
struct StoredKey {
    secret_hash: String,
    role: Role,
    operator: Option<String>,
    expires_at: Option<DateTime<Utc>>,
    revoked: bool,
    /// Unix seconds of the last authenticated request (0: never), and what the store has.
    last_used: AtomicI64,
    last_used_stored: AtomicI64,
}

/// The keys, loaded at start and kept in memory (there are as many as an admin created, not
/// as many as requests); every change goes through the log first ([`KeyRing::apply`]).
#[derive(Debug, Default)]
pub struct KeyRing {
    keys: RwLock<HashMap<String, StoredKey>>,
}

/// Who is calling.
#[derive(Debug, Clone)]
pub struct Caller {
    pub key_id: String,
    pub role: Role,
    /// The operator an operator key acts for.
    pub operator: Option<String>,
}

impl Caller {
    /// The operator id of an operator key; other roles may not change anything.
    pub fn operator(&self) -> Result<&str, Problem> {
        match (self.role, &self.operator) {
            (Role::Operator, Some(op)) => Ok(op),
            _ => Err(forbidden("only an operator key may do this")),
        }
    }

    /// Auditors, regulators and admins read everything; operators only their own.
    pub fn reads_all(&self) -> bool {
        self.role != Role::Operator
    }

    pub fn require(&self, roles: &[Role]) -> Result<(), Problem> {
        if roles.contains(&self.role) {
            Ok(())
        } else {
            let names: Vec<&str> = roles.iter().map(|r| r.as_str()).collect();
            Err(forbidden(&format!(
                "this needs the role {}",
                names.join(" or ")
            )))
        }
    }
}

pub fn forbidden(detail: &str) -> Problem {
    Problem::new(StatusCode::FORBIDDEN, "forbidden", "Forbidden", detail)
}

fn unauthorized(detail: &str) -> Problem {
    Problem::new(
        StatusCode::UNAUTHORIZED,
        "unauthorized",
        "Unauthorized",
        detail,
    )
}

fn secret_hash(secret: &str) -> String {
    hex(&Sha256::digest(secret.as_bytes()))
}

/// Splits `pb_<id>_<secret>`.
fn split_key(key: &str) -> Option<(&str, &str)> {
    let rest = key.strip_prefix("pb_")?;
    let (id, secret) = rest.split_once('_')?;
    let ok = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit());
    (ok(id, 16) && ok(secret, 64)).then_some((id, secret))
}

fn random_hex(bytes: usize) -> Result<String, StoreError> {
    let mut buf = vec![0u8; bytes];
    rand::rngs::OsRng
        .try_fill_bytes(&mut buf)
        .map_err(|e| StoreError::Corrupt(format!("random source: {e}")))?;
    Ok(hex(&buf))
}

impl KeyRing {
    pub fn load(conn: &mut DbConnection) -> Result<KeyRing, StoreError> {
        Ok(KeyRing {
            keys: RwLock::new(Self::read(conn)?),
        })
    }

    /// Reads the keys again from the store (a standby, which does not see the log's
    /// key events as they are written): new keys, revocations and expiries take effect; when
    /// each key was last used here is kept.
    pub fn refresh(&self, conn: &mut DbConnection) -> Result<(), StoreError> {
        let fresh = Self::read(conn)?;
        let mut keys = self.keys.write().expect("keys lock");
        for (id, k) in &fresh {
            if let Some(old) = keys.get(id) {
                let used = old.last_used.load(Ordering::Relaxed);
                k.last_used.fetch_max(used, Ordering::Relaxed);
                k.last_used_stored.fetch_max(
                    old.last_used_stored.load(Ordering::Relaxed),
                    Ordering::Relaxed,
                );
            }
        }
        *keys = fresh;
        Ok(())
    }

    fn read(conn: &mut DbConnection) -> Result<HashMap<String, StoredKey>, StoreError> {
        type Row = (
            String,
            String,
            String,
            Option<String>,
            Option<String>,
            Option<String>,
            Option<String>,
        );
        let rows: Vec<Row> = api_keys::table
            .select((
                api_keys::key_id,
                api_keys::secret_hash,
                api_keys::role,
                api_keys::operator_id,
                api_keys::expires_at,
                api_keys::revoked_at,
                api_keys::last_used_at,
            ))
            .load(conn)?;
        let mut keys = HashMap::new();
        for (id, secret_hash, role, operator, expires_at, revoked_at, last_used) in rows {
            let role = Role::parse(&role)
                .ok_or_else(|| StoreError::Corrupt(format!("key {id}: role {role}")))?;
            let time = |t: Option<String>| -> Result<Option<DateTime<Utc>>, StoreError> {
                t.map(|t| {
                    DateTime::parse_from_rfc3339(&t)
                        .map(|t| t.with_timezone(&Utc))
                        .map_err(|e| StoreError::Corrupt(format!("key {id}: {t}: {e}")))
                })
                .transpose()
            };
            let used = time(last_used)?.map_or(0, |t| t.timestamp());
            keys.insert(
                id.clone(),
                StoredKey {
                    secret_hash,
                    role,
                    operator,
                    expires_at: time(expires_at)?,
                    revoked: revoked_at.is_some(),
                    last_used: AtomicI64::new(used),
                    last_used_stored: AtomicI64::new(used),
                },
            );
        }
        Ok(keys)
    }

    pub fn has_admin(&self) -> bool {
        self.keys
            .read()
            .expect("keys lock")
            .values()
            .any(|k| k.role == Role::Admin && !k.revoked)
    }

    /// A new key: its row (the secret only hashed), its `api_key_created` event and the key in
    /// full (shown once). `given`: a configured key (the bootstrap admin key) instead of a
    /// random one.
    pub fn prepare(
        &self,
        given: Option<&str>,
        role: Role,
        operator: Option<&str>,
        expires_at: Option<DateTime<Utc>>,
        by: &str,
        replaces: Option<&str>,
    ) -> Result<(NewKeyRow, Event, String), StoreError> {
        let (id, secret) = match given {
            Some(k) => {
                let (id, secret) = split_key(k).ok_or_else(|| {
                    StoreError::Corrupt("a key is pb_<16 hex digits>_<64 hex digits>".to_string())
                })?;
                (id.to_string(), secret.to_string())
            }
            None => (random_hex(8)?, random_hex(32)?),
        };
        let row = NewKeyRow {
            key_id: id.clone(),
            secret_hash: secret_hash(&secret),
            role: role.as_str().to_string(),
            operator: operator.map(str::to_string),
            expires_at,
        };
        let event = Event::ApiKeyCreated {
            key_id: id.clone(),
            role: role.as_str().to_string(),
            operator: operator.map(str::to_string),
            expires_at,
            by: by.to_string(),
            replaces: replaces.map(str::to_string),
        };
        Ok((row, event, format!("pb_{id}_{secret}")))
    }

    /// Takes in what the log has recorded (the writer answered): new keys, revocations,
    /// expiries. A revoked key is refused from the next request on.
    pub fn apply(&self, rows: &[NewKeyRow], events: &[Event]) {
        let mut keys = self.keys.write().expect("keys lock");
        for r in rows {
            keys.insert(
                r.key_id.clone(),
                StoredKey {
                    secret_hash: r.secret_hash.clone(),
                    role: Role::parse(&r.role).expect("rows are made from roles"),
                    operator: r.operator.clone(),
                    expires_at: r.expires_at,
                    revoked: false,
                    last_used: AtomicI64::new(0),
                    last_used_stored: AtomicI64::new(0),
                },
            );
        }
        for e in events {
            match e {
                Event::ApiKeyRevoked { key_id, .. } => {
                    if let Some(k) = keys.get_mut(key_id) {
                        k.revoked = true;
                    }
                }
                Event::ApiKeyExpirySet {
                    key_id, expires_at, ..
                } => {
                    if let Some(k) = keys.get_mut(key_id) {
                        k.expires_at = Some(*expires_at);
                    }
                }
                _ => {}
            }
        }
    }

    /// What the ring knows of the key an `Authorization` header names (its secret not
    /// checked: for routing a request to the node that will authenticate it).
    pub fn facts_of_header(&self, header: Option<&str>) -> Option<KeyFacts> {
        let key = header?
            .trim_start()
            .split_once(' ')
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))?
            .1;
        let (id, _) = split_key(key.trim())?;
        self.describe(id)
    }

    /// A key's role, operator, expiry and whether it is revoked.
    pub fn describe(&self, id: &str) -> Option<KeyFacts> {
        self.keys
            .read()
            .expect("keys lock")
            .get(id)
            .map(|k| KeyFacts {
                role: k.role,
                operator: k.operator.clone(),
                expires_at: k.expires_at,
                revoked: k.revoked,
            })
    }

    /// When each key was last used, as this process saw it (unix seconds; 0: not since start).
    pub fn last_used(&self) -> HashMap<String, i64> {
        self.keys
            .read()
            .expect("keys lock")
            .iter()
            .map(|(id, k)| (id.clone(), k.last_used.load(Ordering::Relaxed)))
            .collect()
    }

    /// Writes the last-used times that changed since the last call (a background thread calls
    /// it once a minute): one `UPDATE` per key used, never one per request.
    pub fn store_last_used(&self, conn: &mut DbConnection) -> Result<usize, StoreError> {
        let changed: Vec<(String, i64)> = {
            let keys = self.keys.read().expect("keys lock");
            keys.iter()
                .filter_map(|(id, k)| {
                    let used = k.last_used.load(Ordering::Relaxed);
                    (used > k.last_used_stored.load(Ordering::Relaxed)).then(|| (id.clone(), used))
                })
                .collect()
        };
        for (id, used) in &changed {
            let t = DateTime::<Utc>::from_timestamp(*used, 0)
                .unwrap_or_default()
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
            diesel::update(api_keys::table.filter(api_keys::key_id.eq(id)))
                .set(api_keys::last_used_at.eq(t))
                .execute(conn)?;
            if let Some(k) = self.keys.read().expect("keys lock").get(id) {
                k.last_used_stored.store(*used, Ordering::Relaxed);
            }
        }
        Ok(changed.len())
    }

    pub fn authenticate(&self, header: Option<&str>) -> Result<Caller, Problem> {
        let header =
            header.ok_or_else(|| unauthorized("send `Authorization: Bearer <API key>`"))?;
        // RFC 9110 §11.1: the scheme is case-insensitive.
        let key = header
            .trim_start()
            .split_once(' ')
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, key)| key)
            .ok_or_else(|| unauthorized("the Authorization header must be `Bearer <API key>`"))?;
        let (id, secret) =
            split_key(key.trim()).ok_or_else(|| unauthorized("malformed API key"))?;
        let keys = self.keys.read().expect("keys lock");
        match keys.get(id) {
            Some(k) if k.secret_hash == secret_hash(secret) => {
                let now = Utc::now();
                if k.revoked {
                    return Err(unauthorized("this API key was revoked"));
                }
                if let Some(t) = k.expires_at.filter(|t| *t <= now) {
                    return Err(unauthorized(&format!(
                        "this API key expired at {}",
                        t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                    )));
                }
                k.last_used.store(now.timestamp(), Ordering::Relaxed);
                Ok(Caller {
                    key_id: id.to_string(),
                    role: k.role,
                    operator: k.operator.clone(),
                })
            }
            _ => Err(unauthorized("unknown API key")),
        }
    }

    /// Keys held by `operator` (not revoked).
    pub fn count_for_operator(&self, operator: &str) -> usize {
        self.keys
            .read()
            .expect("keys lock")
            .values()
            .filter(|k| k.operator.as_deref() == Some(operator) && !k.revoked)
            .count()
    }
}

/// What the key ring knows of one key (no secret).
#[derive(Debug, Clone)]
pub struct KeyFacts {
    pub role: Role,
    pub operator: Option<String>,
    pub expires_at: Option<DateTime<Utc>>,
    pub revoked: bool,
}

/// A node that does not write the log (a standby) authenticates the reads it serves itself
/// with a key ring read from the store ([`KeyRing::refresh`], every second) and request limits
/// of its own.
pub struct Gate {
    pub keys: KeyRing,
    pub limits: crate::limits::RequestLimits,
    /// Whether the keys were read from the store at least once (until then, `503`).
    pub loaded: std::sync::atomic::AtomicBool,
}

/// Set by a standby on each request it forwards: the secret the nodes share
/// ([`crate::service::secrets::node_token`]). Replaces whatever a client sent under the name.
pub const NODE_TOKEN: &str = "pitboss-node-token";

/// The nodes' shared secret on a node that runs with `--node-url`, `None` on a single node
/// (app data of the writer's server).
#[derive(Debug, Clone)]
pub struct NodeToken(pub Option<String>);

/// The address a request came from, for the failed-authentication budget: the peer, or, when
/// a standby forwarded it (its `pitboss-node-token` is the nodes' secret), the client the
/// standby named in the last `Forwarded` element (RFC 7239: it appends its own). A client's
/// own `Forwarded` header, or one without the secret, is not believed.
fn source_of(req: &HttpRequest) -> Option<std::net::IpAddr> {
    use sha2::{Digest, Sha256};
    let peer = req.peer_addr().map(|a| a.ip());
    let Some(token) = req
        .app_data::<web::Data<NodeToken>>()
        .and_then(|t| t.0.as_deref())
    else {
        return peer;
    };
    let sent = req.headers().get(NODE_TOKEN).map(|v| v.as_bytes());
    // Digests compared, not the secrets: how long a comparison takes says nothing of it.
    if sent.map(Sha256::digest) != Some(Sha256::digest(token.as_bytes())) {
        return peer;
    }
    req.headers()
        .get_all(actix_web::http::header::FORWARDED)
        .last()
        .and_then(|v| v.to_str().ok())
        .and_then(forwarded_for)
        .or(peer)
}

/// The address of the last element of a `Forwarded` header value (`for="192.0.2.7:51234"`,
/// `for="[2001:db8::7]:443"`, `for=192.0.2.7`); `None` for an obfuscated or unknown one.
fn forwarded_for(value: &str) -> Option<std::net::IpAddr> {
    let last = value.rsplit(',').next()?;
    let node = last.split(';').find_map(|pair| {
        let (k, v) = pair.trim().split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("for")
            .then(|| v.trim().trim_matches('"'))
    })?;
    if let Some(rest) = node.strip_prefix('[') {
        return rest.split(']').next()?.parse().ok();
    }
    node.parse::<std::net::SocketAddr>()
        .map(|a| a.ip())
        .or_else(|_| node.parse())
        .ok()
}

/// Authenticates a request and applies the caller's limits: a failed authentication is
/// counted against its source address (429 once the source's budget is used up), a
/// successful one against the key's and the operator's request rates.
fn caller_of(
    req: &HttpRequest,
    keys: &KeyRing,
    limits: &crate::limits::RequestLimits,
) -> Result<Caller, Problem> {
    let header = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok());
    match keys.authenticate(header) {
        Ok(caller) => {
            limits
                .check_caller(&caller.key_id, caller.operator.as_deref())
                .map_err(|t| Problem::throttled(&t))?;
            Ok(caller)
        }
        Err(p) => match limits.on_auth_failure(source_of(req)) {
            Some(t) => Err(Problem::throttled(&t)),
            None => Err(p),
        },
    }
}

impl FromRequest for Caller {
    type Error = Problem;
    type Future = std::future::Ready<Result<Caller, Problem>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let result = if let Some(state) = req.app_data::<web::Data<AppState>>() {
            caller_of(req, &state.keys, &state.limits)
        } else if let Some(gate) = req.app_data::<web::Data<Gate>>() {
            if gate.loaded.load(Ordering::Acquire) {
                caller_of(req, &gate.keys, &gate.limits)
            } else {
                Err(super::problem::unavailable(
                    "this node has not read the API keys from the store yet; retry",
                ))
            }
        } else {
            Err(unauthorized("no key ring"))
        };
        std::future::ready(result)
    }
}

#[cfg(test)]
mod tests {
    use super::forwarded_for;

    /// The last element's `for`: with a port, bracketed IPv6, bare, among other parameters;
    /// nothing for obfuscated or unknown nodes.
    #[test]
    fn the_client_is_the_last_forwarded_element() {
        let ip = |s: &str| forwarded_for(s).map(|a| a.to_string());
        assert_eq!(ip("for=\"192.0.2.7:51234\"").as_deref(), Some("192.0.2.7"));
        assert_eq!(ip("for=192.0.2.7").as_deref(), Some("192.0.2.7"));
        assert_eq!(
            ip("for=\"[2001:db8::7]:443\"").as_deref(),
            Some("2001:db8::7")
        );
        assert_eq!(
            ip("for=198.51.100.1;proto=https, proto=http;For=\"192.0.2.9:1\"").as_deref(),
            Some("192.0.2.9")
        );
        assert_eq!(ip("for=192.0.2.7, for=_hidden"), None);
        assert_eq!(ip("for=unknown"), None);
        assert_eq!(ip("by=192.0.2.1"), None);
        assert_eq!(ip(""), None);
    }
}
