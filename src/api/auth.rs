//! API keys and roles. A key is `pb_<key id>_<secret>`; only SHA-256 of the secret is stored.

use std::collections::HashMap;
use std::sync::RwLock;

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

#[derive(Debug, Clone)]
struct StoredKey {
    secret_hash: String,
    role: Role,
    operator: Option<String>,
}

/// The keys, loaded at start and kept in memory.
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
        let rows: Vec<(String, String, String, Option<String>)> = api_keys::table
            .select((
                api_keys::key_id,
                api_keys::secret_hash,
                api_keys::role,
                api_keys::operator_id,
            ))
            .load(conn)?;
        let mut keys = HashMap::new();
        for (id, secret_hash, role, operator) in rows {
            let role = Role::parse(&role)
                .ok_or_else(|| StoreError::Corrupt(format!("key {id}: role {role}")))?;
            keys.insert(
                id,
                StoredKey {
                    secret_hash,
                    role,
                    operator,
                },
            );
        }
        Ok(KeyRing {
            keys: RwLock::new(keys),
        })
    }

    pub fn has_admin(&self) -> bool {
        self.keys
            .read()
            .expect("keys lock")
            .values()
            .any(|k| k.role == Role::Admin)
    }

    /// Stores a key given in full (the configured bootstrap admin key).
    pub fn insert_given(
        &self,
        conn: &mut DbConnection,
        key: &str,
        role: Role,
        operator: Option<&str>,
    ) -> Result<(), StoreError> {
        let (id, secret) = split_key(key).ok_or_else(|| {
            StoreError::Corrupt("a key is pb_<16 hex digits>_<64 hex digits>".to_string())
        })?;
        self.store(conn, id, &secret_hash(secret), role, operator)
    }

    /// Creates a new key and returns it in full: the only time its secret is shown.
    pub fn create(
        &self,
        conn: &mut DbConnection,
        role: Role,
        operator: Option<&str>,
    ) -> Result<(String, String), StoreError> {
        let id = random_hex(8)?;
        let secret = random_hex(32)?;
        self.store(conn, &id, &secret_hash(&secret), role, operator)?;
        Ok((id.clone(), format!("pb_{id}_{secret}")))
    }

    fn store(
        &self,
        conn: &mut DbConnection,
        id: &str,
        hash: &str,
        role: Role,
        operator: Option<&str>,
    ) -> Result<(), StoreError> {
        diesel::insert_into(api_keys::table)
            .values((
                api_keys::key_id.eq(id),
                api_keys::secret_hash.eq(hash),
                api_keys::role.eq(role.as_str()),
                api_keys::operator_id.eq(operator),
                api_keys::created_at.eq(chrono::Utc::now().to_rfc3339()),
            ))
            .execute(conn)?;
        self.keys.write().expect("keys lock").insert(
            id.to_string(),
            StoredKey {
                secret_hash: hash.to_string(),
                role,
                operator: operator.map(str::to_string),
            },
        );
        Ok(())
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
            Some(k) if k.secret_hash == secret_hash(secret) => Ok(Caller {
                key_id: id.to_string(),
                role: k.role,
                operator: k.operator.clone(),
            }),
            _ => Err(unauthorized("unknown API key")),
        }
    }

    /// Keys held by `operator`.
    pub fn count_for_operator(&self, operator: &str) -> usize {
        self.keys
            .read()
            .expect("keys lock")
            .values()
            .filter(|k| k.operator.as_deref() == Some(operator))
            .count()
    }
}

/// Authenticates a request and applies the caller's limits: a failed authentication is
/// counted against its source address (429 once the source's budget is used up), a
/// successful one against the key's and the operator's request rates.
fn caller_of(req: &HttpRequest, state: &AppState) -> Result<Caller, Problem> {
    let header = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok());
    match state.keys.authenticate(header) {
        Ok(caller) => {
            state
                .limits
                .check_caller(&caller.key_id, caller.operator.as_deref())
                .map_err(|t| Problem::throttled(&t))?;
            Ok(caller)
        }
        Err(p) => {
            let ip = req.peer_addr().map(|a| a.ip());
            match state.limits.on_auth_failure(ip) {
                Some(t) => Err(Problem::throttled(&t)),
                None => Err(p),
            }
        }
    }
}

impl FromRequest for Caller {
    type Error = Problem;
    type Future = std::future::Ready<Result<Caller, Problem>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let result = match req.app_data::<web::Data<AppState>>() {
            Some(state) => caller_of(req, state),
            None => Err(unauthorized("no key ring")),
        };
        std::future::ready(result)
    }
}
