//! Log entries: what producers hand in ([`NewEntry`]), what sealing returns ([`SealedEntry`]),
//! the canonical bytes (RFC 8785) and the borrowed view the verifier parses ([`WireEntry`]).

use crate::hash::{leaf_hash, Hash};
use chrono::{DateTime, SecondsFormat, Timelike, Utc};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;

/// Value of the `v` field of every entry of this format.
pub const FORMAT_VERSION: u64 = 1;
/// Largest integer an entry may hold: 2^53 − 1, exact in every JSON implementation (RFC 8785 §3.2.2.3).
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;
/// Largest canonical entry, in bytes. Bounds the verifier's line buffer.
pub const MAX_ENTRY_BYTES: usize = 1 << 20;
/// Longest id (operator, table, round, bet), in bytes.
pub const MAX_ID_BYTES: usize = 256;
/// Longest kind name, in bytes.
pub const MAX_KIND_BYTES: usize = 64;

/// A UTC instant with microsecond precision, written `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
///
/// Microseconds because both SQLite's and PostgreSQL's timestamps hold exactly that, so a
/// stored entry round-trips; finer instants are truncated when converted.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(DateTime<Utc>);

/// A timestamp string not in the one accepted form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("timestamp must be RFC 3339 UTC with 6 fraction digits, e.g. 2025-01-31T12:00:00.000000Z")]
pub struct TimestampError;

impl Timestamp {
    /// Truncates to whole microseconds.
    pub fn from_datetime(dt: DateTime<Utc>) -> Timestamp {
        let micros = dt.nanosecond() / 1000 * 1000;
        Timestamp(
            dt.with_nanosecond(micros)
                .expect("truncating nanoseconds keeps them in range"),
        )
    }

    /// From microseconds since the Unix epoch, if representable.
    pub fn from_unix_micros(micros: i64) -> Option<Timestamp> {
        DateTime::<Utc>::from_timestamp_micros(micros).map(Timestamp)
    }

    /// Parses exactly the form this crate writes.
    pub fn parse(s: &str) -> Result<Timestamp, TimestampError> {
        if !timestamp_ok(s.as_bytes()) {
            return Err(TimestampError);
        }
        let dt = DateTime::parse_from_rfc3339(s).map_err(|_| TimestampError)?;
        Ok(Timestamp(dt.with_timezone(&Utc)))
    }

    pub fn as_datetime(&self) -> DateTime<Utc> {
        self.0
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.to_rfc3339_opts(SecondsFormat::Micros, true))
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Timestamp({self})")
    }
}

impl From<DateTime<Utc>> for Timestamp {
    fn from(dt: DateTime<Utc>) -> Self {
        Timestamp::from_datetime(dt)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = Cow::<'de, str>::deserialize(d)?;
        Timestamp::parse(&s).map_err(serde::de::Error::custom)
    }
}

/// The byte shape `DDDD-DD-DDTDD:DD:DD.DDDDDDZ`. The verifier checks only this (cheap); the
/// producer additionally guarantees it is a real instant.
pub fn timestamp_shape_ok(s: &[u8]) -> bool {
    const SHAPE: &[u8; 27] = b"dddd-dd-ddTdd:dd:dd.ddddddZ";
    s.len() == SHAPE.len()
        && s.iter().zip(SHAPE).all(|(c, p)| match p {
            b'd' => c.is_ascii_digit(),
            other => c == other,
        })
}

/// Whether `s` is a timestamp of the one accepted shape that names a real instant: a
/// calendar date (leap years included), hour 00–23, minute and second 00–59 (no leap second:
/// pitboss never writes one, and a verifier needs one answer).
pub fn timestamp_ok(s: &[u8]) -> bool {
    if !timestamp_shape_ok(s) {
        return false;
    }
    let num = |r: std::ops::Range<usize>| {
        s[r].iter()
            .fold(0u32, |acc, d| acc * 10 + u32::from(d - b'0'))
    };
    let (year, month, day) = (num(0..4), num(5..7), num(8..10));
    let (hour, minute, second) = (num(11..13), num(14..16), num(17..19));
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day) && hour <= 23 && minute <= 59 && second <= 59
}

/// The kinds of event pitboss logs. On the wire a kind is a snake_case string ([`Kind`]), so a
/// verifier accepts kinds it does not know; this enum is for producers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    PlanLoaded,
    TableOpened,
    TableClosed,
    RoundOpened,
    RngSeedCommitted,
    RngSeedRevealed,
    BetAccepted,
    BetRefused,
    BettingClosed,
    CardDealt,
    ResultRecorded,
    PlayerDecision,
    DecisionTimedOut,
    PlayerDisconnected,
    PlayerReconnected,
    RoundSettled,
    RoundVoided,
    Refund,
    KeyRotated,
}

impl EntryKind {
    pub const ALL: [EntryKind; 19] = [
        EntryKind::PlanLoaded,
        EntryKind::TableOpened,
        EntryKind::TableClosed,
        EntryKind::RoundOpened,
        EntryKind::RngSeedCommitted,
        EntryKind::RngSeedRevealed,
        EntryKind::BetAccepted,
        EntryKind::BetRefused,
        EntryKind::BettingClosed,
        EntryKind::CardDealt,
        EntryKind::ResultRecorded,
        EntryKind::PlayerDecision,
        EntryKind::DecisionTimedOut,
        EntryKind::PlayerDisconnected,
        EntryKind::PlayerReconnected,
        EntryKind::RoundSettled,
        EntryKind::RoundVoided,
        EntryKind::Refund,
        EntryKind::KeyRotated,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::PlanLoaded => "plan_loaded",
            EntryKind::TableOpened => "table_opened",
            EntryKind::TableClosed => "table_closed",
            EntryKind::RoundOpened => "round_opened",
            EntryKind::RngSeedCommitted => "rng_seed_committed",
            EntryKind::RngSeedRevealed => "rng_seed_revealed",
            EntryKind::BetAccepted => "bet_accepted",
            EntryKind::BetRefused => "bet_refused",
            EntryKind::BettingClosed => "betting_closed",
            EntryKind::CardDealt => "card_dealt",
            EntryKind::ResultRecorded => "result_recorded",
            EntryKind::PlayerDecision => "player_decision",
            EntryKind::DecisionTimedOut => "decision_timed_out",
            EntryKind::PlayerDisconnected => "player_disconnected",
            EntryKind::PlayerReconnected => "player_reconnected",
            EntryKind::RoundSettled => "round_settled",
            EntryKind::RoundVoided => "round_voided",
            EntryKind::Refund => "refund",
            EntryKind::KeyRotated => "key_rotated",
        }
    }

    /// The enum for a wire kind, if it is one of ours.
    pub fn from_wire(s: &str) -> Option<EntryKind> {
        EntryKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl fmt::Display for EntryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A kind as written on the wire: `[a-z][a-z0-9_]*`, at most [`MAX_KIND_BYTES`] bytes.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Kind(String);

/// A kind name outside `[a-z][a-z0-9_]{0,63}`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("kind {0:?} is not snake_case ascii ([a-z][a-z0-9_]*, at most 64 bytes)")]
pub struct KindError(pub String);

impl Kind {
    pub fn parse(s: &str) -> Result<Kind, KindError> {
        if kind_ok(s.as_bytes()) {
            Ok(Kind(s.to_owned()))
        } else {
            Err(KindError(s.to_owned()))
        }
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Whether `s` is a well-formed kind name.
pub fn kind_ok(s: &[u8]) -> bool {
    !s.is_empty()
        && s.len() <= MAX_KIND_BYTES
        && s[0].is_ascii_lowercase()
        && s.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_')
}

impl TryFrom<String> for Kind {
    type Error = KindError;
    fn try_from(s: String) -> Result<Kind, KindError> {
        if kind_ok(s.as_bytes()) {
            Ok(Kind(s))
        } else {
            Err(KindError(s))
        }
    }
}

impl From<Kind> for String {
    fn from(k: Kind) -> String {
        k.0
    }
}

impl From<EntryKind> for Kind {
    fn from(k: EntryKind) -> Kind {
        Kind(k.as_str().to_owned())
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The ids an entry concerns. Absent ids are left out of the canonical bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ids {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bet: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<String>,
}

/// An entry as a producer hands it in: everything but the sequence number and the link, which
/// sealing assigns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewEntry {
    pub ts: Timestamp,
    pub kind: Kind,
    #[serde(default)]
    pub ids: Ids,
    pub payload: Value,
}

impl NewEntry {
    pub fn new(ts: Timestamp, kind: impl Into<Kind>, payload: Value) -> NewEntry {
        NewEntry {
            ts,
            kind: kind.into(),
            ids: Ids::default(),
            payload,
        }
    }
    pub fn operator(mut self, id: impl Into<String>) -> Self {
        self.ids.operator = Some(id.into());
        self
    }
    pub fn table(mut self, id: impl Into<String>) -> Self {
        self.ids.table = Some(id.into());
        self
    }
    pub fn round(mut self, id: impl Into<String>) -> Self {
        self.ids.round = Some(id.into());
        self
    }
    pub fn bet(mut self, id: impl Into<String>) -> Self {
        self.ids.bet = Some(id.into());
        self
    }
}

/// An entry with its place in the log: what the service persists, in one transaction per batch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SealedEntry {
    pub seq: u64,
    pub ts: Timestamp,
    pub kind: Kind,
    pub ids: Ids,
    pub payload: Value,
    /// Leaf hash of the previous entry ([`Hash::ZERO`] for entry 0).
    pub prev: Hash,
    /// SHA-256(0x00 ‖ canonical): both the Merkle leaf hash and the chain link.
    pub leaf_hash: Hash,
    /// The RFC 8785 canonical bytes: stored and exported verbatim, never re-encoded.
    #[serde(with = "bytes_as_str")]
    pub canonical: Vec<u8>,
}

mod bytes_as_str {
    use serde::{Deserialize, Deserializer, Serializer};
    pub fn serialize<S: Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
        match std::str::from_utf8(b) {
            Ok(t) => s.serialize_str(t),
            Err(_) => Err(serde::ser::Error::custom("canonical bytes are not UTF-8")),
        }
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        String::deserialize(d).map(String::into_bytes)
    }
}

/// Why an entry cannot be sealed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EntryError {
    #[error("number at {path} is outside ±(2^53−1); write it as a string")]
    UnsafeInteger { path: String },
    #[error("number at {path} is not an integer; write it as a string or an integer ratio")]
    NonInteger { path: String },
    #[error("id {which} is longer than {MAX_ID_BYTES} bytes")]
    IdTooLong { which: &'static str },
    #[error("canonical entry is {len} bytes, more than {MAX_ENTRY_BYTES}")]
    TooLarge { len: usize },
    #[error("sequence number {0} exceeds 2^53−1")]
    SeqTooLarge(u64),
    #[error("canonicalising the payload: {0}")]
    Canonical(String),
}

/// The number as the log holds it: an integer within ±(2^53−1), else `None`.
fn safe_integer(n: &serde_json::Number) -> Option<i64> {
    n.as_i64().filter(|i| i.unsigned_abs() <= MAX_SAFE_INTEGER)
}

/// Checks that every number in `v` is an integer within ±(2^53−1). Fractions are refused too:
/// money is integer minor units here, and a float's canonical text is a trap for re-implementers.
pub fn check_numbers(v: &Value) -> Result<(), EntryError> {
    fn walk(v: &Value, path: &mut String) -> Result<(), EntryError> {
        match v {
            Value::Number(n) => {
                if safe_integer(n).is_none() {
                    let path = path.clone();
                    return Err(if n.as_i64().is_some() || n.as_u64().is_some() {
                        EntryError::UnsafeInteger { path }
                    } else {
                        EntryError::NonInteger { path }
                    });
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    let len = path.len();
                    path.push('/');
                    path.push_str(&i.to_string());
                    walk(x, path)?;
                    path.truncate(len);
                }
            }
            Value::Object(o) => {
                for (k, x) in o {
                    let len = path.len();
                    path.push('/');
                    // JSON Pointer escaping (RFC 6901) so the path names the member exactly.
                    path.push_str(&k.replace('~', "~0").replace('/', "~1"));
                    walk(x, path)?;
                    path.truncate(len);
                }
            }
            Value::Null | Value::Bool(_) | Value::String(_) => {}
        }
        Ok(())
    }
    let mut path = String::from("/payload");
    walk(v, &mut path)
}

/// Appends `s` as an RFC 8785 string: `"` and `\` escaped, U+0000–U+001F as `\b \t \n \f \r`
/// or `\u00xx` (lowercase hex), everything else as its UTF-8 bytes.
pub fn write_jcs_string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &c) in bytes.iter().enumerate() {
        let esc: &[u8] = match c {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            0x09 => b"\\t",
            0x0a => b"\\n",
            0x0c => b"\\f",
            0x0d => b"\\r",
            0x00..=0x1f => {
                out.extend_from_slice(&bytes[start..i]);
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[(c >> 4) as usize]);
                out.push(HEX[(c & 15) as usize]);
                start = i + 1;
                continue;
            }
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        out.extend_from_slice(esc);
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Writes the RFC 8785 form of a payload whose numbers are all integers within ±(2^53−1), and
/// returns `false` (with `out` partly written) at the first number that is not. For such
/// integers the ECMAScript number text RFC 8785 asks for is the plain decimal; strings are
/// escaped by [`write_jcs_string`]; an object's members go in the order of their names' UTF-16
/// code units, which is the order of a `serde_json::Map` (a B-tree over UTF-8 bytes, i.e. code
/// points) unless a name holds a character beyond U+FFFF: then, or if the map is in any other
/// order, the names are sorted here. The same bytes as `serde_json_canonicalizer` (tested
/// against it), without its buffering of every member.
fn write_canonical_payload(out: &mut Vec<u8>, v: &Value) -> bool {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => match safe_integer(n) {
            Some(i) => out.extend_from_slice(itoa::Buffer::new().format(i).as_bytes()),
            None => return false,
        },
        Value::String(s) => write_jcs_string(out, s),
        Value::Array(a) => {
            out.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                if !write_canonical_payload(out, x) {
                    return false;
                }
            }
            out.push(b']');
        }
        Value::Object(o) => {
            out.push(b'{');
            let mut prev: Option<&str> = None;
            let in_order = o.keys().all(|k| {
                let ok = prev.is_none_or(|p| utf16_cmp(p, k).is_lt());
                prev = Some(k);
                ok
            });
            let mut member = |i: usize, k: &str, x: &Value| {
                if i > 0 {
                    out.push(b',');
                }
                write_jcs_string(out, k);
                out.push(b':');
                write_canonical_payload(out, x)
            };
            if in_order {
                for (i, (k, x)) in o.iter().enumerate() {
                    if !member(i, k, x) {
                        return false;
                    }
                }
            } else {
                let mut members: Vec<(&String, &Value)> = o.iter().collect();
                members.sort_by(|a, b| utf16_cmp(a.0, b.0));
                for (i, (k, x)) in members.into_iter().enumerate() {
                    if !member(i, k, x) {
                        return false;
                    }
                }
            }
            out.push(b'}');
        }
    }
    true
}

/// Orders two names by their UTF-16 code units (RFC 8785 §3.2.3). UTF-8 bytes order the same
/// way unless one of them holds a character beyond U+FFFF (four UTF-8 bytes, a surrogate pair).
fn utf16_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let wide = |s: &str| s.bytes().any(|c| c >= 0xf0);
    if wide(a) || wide(b) {
        a.encode_utf16().cmp(b.encode_utf16())
    } else {
        a.as_bytes().cmp(b.as_bytes())
    }
}

/// Writes the canonical bytes of an entry into `out` (cleared first). The member order is the
/// RFC 8785 order of the fixed member names: ids, kind, payload, prev, seq, ts, v; inside ids:
/// bet, operator, round, table. The payload is written by [`write_canonical_payload`].
pub fn encode_canonical(
    out: &mut Vec<u8>,
    seq: u64,
    prev: &Hash,
    entry: &NewEntry,
) -> Result<(), EntryError> {
    if seq > MAX_SAFE_INTEGER {
        return Err(EntryError::SeqTooLarge(seq));
    }
    out.clear();
    out.extend_from_slice(b"{\"ids\":{");
    let mut first = true;
    for (name, v) in [
        ("bet", &entry.ids.bet),
        ("operator", &entry.ids.operator),
        ("round", &entry.ids.round),
        ("table", &entry.ids.table),
    ] {
        if let Some(v) = v {
            if v.len() > MAX_ID_BYTES {
                return Err(EntryError::IdTooLong { which: name });
            }
            if !first {
                out.push(b',');
            }
            first = false;
            out.push(b'"');
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b"\":");
            write_jcs_string(out, v);
        }
    }
    out.extend_from_slice(b"},\"kind\":");
    write_jcs_string(out, entry.kind.as_str());
    out.extend_from_slice(b",\"payload\":");
    if !write_canonical_payload(out, &entry.payload) {
        // A number out of reach: the walk that names where.
        check_numbers(&entry.payload)?;
        return Err(EntryError::Canonical("a number the log cannot hold".into()));
    }
    out.extend_from_slice(b",\"prev\":\"");
    let mut hex = [0u8; 64];
    prev.write_hex(&mut hex);
    out.extend_from_slice(&hex);
    out.extend_from_slice(b"\",\"seq\":");
    out.extend_from_slice(itoa::Buffer::new().format(seq).as_bytes());
    out.extend_from_slice(b",\"ts\":\"");
    out.extend_from_slice(entry.ts.to_string().as_bytes());
    out.extend_from_slice(b"\",\"v\":1}");
    if out.len() > MAX_ENTRY_BYTES {
        return Err(EntryError::TooLarge { len: out.len() });
    }
    Ok(())
}

/// Seals one entry at `seq` after `prev`.
pub fn seal_one(seq: u64, prev: Hash, entry: NewEntry) -> Result<SealedEntry, EntryError> {
    let mut canonical = Vec::with_capacity(256);
    encode_canonical(&mut canonical, seq, &prev, &entry)?;
    let leaf = leaf_hash(&canonical);
    Ok(SealedEntry {
        seq,
        ts: entry.ts,
        kind: entry.kind,
        ids: entry.ids,
        payload: entry.payload,
        prev,
        leaf_hash: leaf,
        canonical,
    })
}

/// The ids of an entry as parsed from the wire, borrowed where no unescaping was needed.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WireIds<'a> {
    #[serde(borrow, default)]
    pub bet: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub operator: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub round: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub table: Option<Cow<'a, str>>,
}

/// An entry line as the verifier reads it: the fixed members, with the payload left unparsed.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WireEntry<'a> {
    #[serde(borrow)]
    pub ids: WireIds<'a>,
    #[serde(borrow)]
    pub kind: Cow<'a, str>,
    #[serde(borrow)]
    pub payload: &'a RawValue,
    #[serde(borrow)]
    pub prev: &'a str,
    pub seq: u64,
    #[serde(borrow)]
    pub ts: &'a str,
    pub v: u64,
}

/// Why an entry line is not a well-formed entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("not an entry object: {0}")]
    Json(String),
    #[error("unsupported entry version {0}")]
    Version(u64),
    #[error("seq {0} exceeds 2^53−1")]
    Seq(u64),
    #[error("prev is not 64 lowercase hex digits")]
    Prev,
    #[error("ts is not a real UTC instant of the form YYYY-MM-DDTHH:MM:SS.ffffffZ")]
    Ts,
    #[error("kind is not snake_case ascii")]
    Kind,
    #[error("id {0} is longer than 256 bytes")]
    Id(&'static str),
    #[error("entry is {0} bytes, more than {MAX_ENTRY_BYTES}")]
    TooLarge(usize),
    #[error("entry bytes are not in RFC 8785 canonical form")]
    NotCanonical,
}

impl<'a> WireEntry<'a> {
    /// Parses an entry line and checks its structure (not its links or hashes).
    pub fn parse(line: &'a [u8]) -> Result<WireEntry<'a>, WireError> {
        if line.len() > MAX_ENTRY_BYTES {
            return Err(WireError::TooLarge(line.len()));
        }
        let e: WireEntry<'a> =
            serde_json::from_slice(line).map_err(|e| WireError::Json(e.to_string()))?;
        if e.v != FORMAT_VERSION {
            return Err(WireError::Version(e.v));
        }
        if e.seq > MAX_SAFE_INTEGER {
            return Err(WireError::Seq(e.seq));
        }
        if Hash::from_hex(e.prev).is_err() {
            return Err(WireError::Prev);
        }
        if !timestamp_ok(e.ts.as_bytes()) {
            return Err(WireError::Ts);
        }
        if !kind_ok(e.kind.as_bytes()) {
            return Err(WireError::Kind);
        }
        for (name, v) in [
            ("bet", &e.ids.bet),
            ("operator", &e.ids.operator),
            ("round", &e.ids.round),
            ("table", &e.ids.table),
        ] {
            if v.as_ref().is_some_and(|v| v.len() > MAX_ID_BYTES) {
                return Err(WireError::Id(name));
            }
        }
        Ok(e)
    }
}

/// The slow, full check that `line` is exactly the RFC 8785 form of itself and that its payload
/// keeps to integers within ±(2^53−1). `verify --canonical` runs it on every entry.
pub fn check_canonical(line: &[u8]) -> Result<(), WireError> {
    let v: Value = serde_json::from_slice(line).map_err(|e| WireError::Json(e.to_string()))?;
    if let Some(p) = v.get("payload") {
        check_numbers(p).map_err(|_| WireError::NotCanonical)?;
    }
    let again = serde_json_canonicalizer::to_vec(&v).map_err(|e| WireError::Json(e.to_string()))?;
    if again == line {
        Ok(())
    } else {
        Err(WireError::NotCanonical)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ts() -> Timestamp {
        Timestamp::parse("2025-03-01T18:30:00.123456Z").expect("valid")
    }

    /// The canonical bytes as the RFC 8785 crate writes the whole entry object.
    fn reference(seq: u64, prev: &Hash, e: &NewEntry) -> Vec<u8> {
        let v = json!({
            "v": 1, "seq": seq, "ts": e.ts.to_string(), "kind": e.kind.as_str(),
            "ids": serde_json::to_value(&e.ids).expect("ids serialise"),
            "payload": e.payload, "prev": prev.to_hex(),
        });
        serde_json_canonicalizer::to_vec(&v).expect("canonicalises")
    }

    #[test]
    fn hand_written_envelope_equals_rfc8785_canonicalisation_of_the_whole_entry() {
        let nasty =
            "quote\" backslash\\ nl\n tab\t nul\u{0} del\u{7f} e\u{301} \u{1F600} \u{2028} /";
        let entries = [
            NewEntry::new(
                ts(),
                EntryKind::BetAccepted,
                json!({"stake_minor": 5000, "z": [1, -2, {"b": true, "a": null}]}),
            )
            .operator("op-1")
            .table("t-9")
            .round("r-77")
            .bet("b-1"),
            NewEntry::new(ts(), EntryKind::PlanLoaded, json!({})),
            NewEntry::new(
                ts(),
                Kind::parse("future_kind_2").expect("ok"),
                json!(nasty),
            )
            .bet(nasty)
            .table("\u{1F600}"),
            NewEntry::new(
                ts(),
                EntryKind::Refund,
                json!({"\u{e9}": 1, "z": 2, "\u{1F600}": 3, "\u{ff61}": 4, "max": 9007199254740991i64, "min": -9007199254740991i64}),
            ),
        ];
        let prev = crate::hash::sha256(b"prev");
        let mut buf = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            encode_canonical(&mut buf, 1000 + i as u64, &prev, e).expect("seals");
            assert_eq!(
                String::from_utf8_lossy(&buf),
                String::from_utf8_lossy(&reference(1000 + i as u64, &prev, e))
            );
            WireEntry::parse(&buf).expect("own bytes parse");
            check_canonical(&buf).expect("own bytes are canonical");
        }
    }

    /// A payload drawn from a small deterministic generator: nested objects and arrays, names
    /// and strings from an alphabet that holds escapes, U+E000..U+FFFF and characters beyond
    /// U+FFFF (the names whose UTF-8 and UTF-16 orders differ), integers at the bounds.
    fn drawn(seed: &mut u64, depth: u32) -> Value {
        fn next(seed: &mut u64, n: u64) -> u64 {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (*seed >> 33) % n
        }
        fn text(seed: &mut u64) -> String {
            const ALPHABET: [&str; 12] = [
                "a",
                "b",
                "Z",
                "_",
                "\"",
                "\\",
                "\n",
                "\u{1}",
                "\u{e9}",
                "\u{ff61}",
                "\u{1F600}",
                "\u{10000}",
            ];
            (0..next(seed, 4))
                .map(|_| ALPHABET[next(seed, 12) as usize])
                .collect()
        }
        match next(seed, if depth == 0 { 4 } else { 6 }) {
            0 => Value::Null,
            1 => Value::Bool(next(seed, 2) == 1),
            2 => {
                let n = [
                    0,
                    1,
                    -1,
                    42,
                    MAX_SAFE_INTEGER as i64,
                    -(MAX_SAFE_INTEGER as i64),
                ][next(seed, 6) as usize];
                json!(n)
            }
            3 => Value::String(text(seed)),
            4 => Value::Array((0..next(seed, 4)).map(|_| drawn(seed, depth - 1)).collect()),
            _ => {
                let mut o = serde_json::Map::new();
                for _ in 0..next(seed, 6) {
                    let k = text(seed);
                    let x = drawn(seed, depth - 1);
                    o.insert(k, x);
                }
                Value::Object(o)
            }
        }
    }

    #[test]
    fn payloads_are_written_as_the_rfc8785_canonicaliser_writes_them() {
        let mut seed = 7;
        let mut checked = 0;
        for _ in 0..5000 {
            let v = drawn(&mut seed, 4);
            let mut mine = Vec::new();
            assert!(write_canonical_payload(&mut mine, &v));
            let theirs = serde_json_canonicalizer::to_vec(&v).expect("canonicalises");
            assert_eq!(
                String::from_utf8_lossy(&mine),
                String::from_utf8_lossy(&theirs)
            );
            checked += usize::from(matches!(&v, Value::Object(o) if o.len() > 1));
        }
        assert!(
            checked > 500,
            "too few objects with several members: {checked}"
        );
        // Names whose UTF-8 order is not their UTF-16 order, in one object.
        let v = json!({"\u{ff61}": 1, "\u{1F600}": 2, "\u{e000}": 3, "\u{10000}a": 4, "~": 5});
        let mut mine = Vec::new();
        assert!(write_canonical_payload(&mut mine, &v));
        assert_eq!(
            mine,
            serde_json_canonicalizer::to_vec(&v).expect("canonicalises")
        );
        // Out of reach: refused, not written wrong.
        for bad in [
            json!(1.5),
            json!([9007199254740992u64]),
            json!({"a": -9007199254740992i64}),
        ] {
            assert!(!write_canonical_payload(&mut Vec::new(), &bad));
        }
    }

    #[test]
    fn string_escaping_matches_rfc8785_for_every_ascii_and_sampled_unicode_char() {
        let mut chars: Vec<char> = (0u32..0x3000).filter_map(char::from_u32).collect();
        chars.extend(['\u{fffd}', '\u{10000}', '\u{10ffff}', '\u{1F600}']);
        for c in chars {
            let s = format!("a{c}b");
            let mut mine = Vec::new();
            write_jcs_string(&mut mine, &s);
            let theirs = serde_json_canonicalizer::to_vec(&s).expect("string");
            assert_eq!(mine, theirs, "char U+{:04X}", c as u32);
        }
    }

    #[test]
    fn integers_beyond_2_pow_53_minus_1_are_refused_at_sealing() {
        for bad in [
            json!({"a": 9007199254740992u64}),
            json!([-9007199254740992i64]),
            json!({"x": {"y": u64::MAX}}),
        ] {
            let e = NewEntry::new(ts(), EntryKind::BetAccepted, bad);
            assert!(matches!(
                seal_one(0, Hash::ZERO, e),
                Err(EntryError::UnsafeInteger { .. })
            ));
        }
        let e = NewEntry::new(
            ts(),
            EntryKind::BetAccepted,
            json!({"a": [0, {"b/c": 9007199254740992u64}]}),
        );
        match seal_one(0, Hash::ZERO, e) {
            Err(EntryError::UnsafeInteger { path }) => assert_eq!(path, "/payload/a/1/b~1c"),
            other => panic!("expected refusal, got {other:?}"),
        }
    }

    #[test]
    fn fractional_numbers_are_refused_at_sealing() {
        let e = NewEntry::new(ts(), EntryKind::RoundSettled, json!({"rtp": 0.973}));
        assert!(matches!(
            seal_one(0, Hash::ZERO, e),
            Err(EntryError::NonInteger { .. })
        ));
    }

    #[test]
    fn timestamps_are_utc_with_six_fraction_digits_and_truncate_nanoseconds() {
        let dt = DateTime::parse_from_rfc3339("2025-01-02T03:04:05.123456789+01:00")
            .expect("valid")
            .with_timezone(&Utc);
        assert_eq!(
            Timestamp::from_datetime(dt).to_string(),
            "2025-01-02T02:04:05.123456Z"
        );
        assert_eq!(
            Timestamp::from_unix_micros(0)
                .map(|t| t.to_string())
                .as_deref(),
            Some("1970-01-01T00:00:00.000000Z")
        );
        for bad in [
            "2025-01-02T03:04:05Z",
            "2025-01-02T03:04:05.123456+00:00",
            "2025-01-02 03:04:05.123456Z",
            "2025-13-02T03:04:05.123456Z",
        ] {
            assert!(Timestamp::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn kinds_serialise_as_snake_case_and_unknown_kinds_still_parse_on_the_wire() {
        for k in EntryKind::ALL {
            let s = serde_json::to_value(k).expect("serialises");
            assert_eq!(s, json!(k.as_str()));
            assert_eq!(EntryKind::from_wire(k.as_str()), Some(k));
        }
        assert!(Kind::parse("Bet-Accepted").is_err());
        assert!(Kind::parse("").is_err());
        let e = seal_one(
            0,
            Hash::ZERO,
            NewEntry::new(
                ts(),
                Kind::parse("dealer_shuffled").expect("ok"),
                json!(null),
            ),
        )
        .expect("seals");
        assert_eq!(
            WireEntry::parse(&e.canonical).expect("parses").kind,
            "dealer_shuffled"
        );
    }

    #[test]
    fn wire_parse_refuses_unknown_members_duplicates_and_bad_fields() {
        let e = seal_one(
            3,
            Hash::ZERO,
            NewEntry::new(ts(), EntryKind::Refund, json!({"a": 1})),
        )
        .expect("seals");
        let good = String::from_utf8(e.canonical).expect("utf8");
        let cases = [
            good.replace("\"v\":1", "\"v\":2"),
            good.replace("\"v\":1}", "\"v\":1,\"x\":0}"),
            good.replace("\"seq\":3", "\"seq\":3,\"seq\":4"),
            good.replace("\"prev\":\"0", "\"prev\":\"A"),
            good.replace(".123456Z", "Z"),
            good.replace("\"refund\"", "\"Refund\""),
            good.replace("\"ids\":{}", "\"ids\":{\"player\":\"p\"}"),
        ];
        for bad in cases {
            assert_ne!(bad, good);
            assert!(WireEntry::parse(bad.as_bytes()).is_err(), "{bad}");
        }
        assert!(check_canonical(good.replace("{\"a\":1}", "{ \"a\":1}").as_bytes()).is_err());
    }
}
