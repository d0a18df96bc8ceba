//! A strict, allocation-free reader of entry lines for the verifier's hot path.
//!
//! It accepts exactly the canonical envelope: `{"ids":{…},"kind":"…","payload":…,"prev":"…",
//! "seq":…,"ts":"…","v":1}` with the members in that order, the ids in the order bet, operator,
//! round, table, no whitespace outside strings, and a payload that is well-formed JSON. This is
//! stricter than a general JSON parser (it also refuses duplicate or reordered envelope
//! members), and measured about three times faster than deserialising with serde_json.

use crate::entry::{kind_ok, timestamp_ok, WireError, MAX_ENTRY_BYTES, MAX_SAFE_INTEGER};
use std::borrow::Cow;

/// Most nesting accepted inside a payload (as serde_json's default recursion limit).
pub const MAX_DEPTH: usize = 128;

/// The fixed members of an entry line, borrowed from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScannedEntry<'a> {
    pub seq: u64,
    /// 64 lowercase hex digits.
    pub prev: &'a [u8],
    pub ts: &'a str,
    pub kind: &'a str,
    /// The payload's JSON text.
    pub payload: &'a str,
}

struct Cur<'a> {
    b: &'a [u8],
    i: usize,
}

fn bad(what: &str) -> WireError {
    WireError::Json(format!("entry line: {what}"))
}

impl<'a> Cur<'a> {
    fn lit(&mut self, s: &[u8]) -> Result<(), WireError> {
        if self.b[self.i..].starts_with(s) {
            self.i += s.len();
            Ok(())
        } else {
            Err(bad(&format!(
                "expected {} at byte {}",
                String::from_utf8_lossy(s),
                self.i
            )))
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    /// A JSON string; returns its raw content (between the quotes, escapes not decoded).
    fn string(&mut self) -> Result<&'a [u8], WireError> {
        self.lit(b"\"")?;
        let start = self.i;
        loop {
            // Skip plain bytes in one pass: the common case is a long run without escapes.
            let rest = &self.b[self.i..];
            let run = rest
                .iter()
                .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
                .ok_or_else(|| bad("unterminated string"))?;
            self.i += run;
            match self.b[self.i] {
                b'"' => {
                    let s = &self.b[start..self.i];
                    self.i += 1;
                    return Ok(s);
                }
                b'\\' => match self.b.get(self.i + 1) {
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => self.i += 2,
                    Some(b'u') => {
                        let hex = self
                            .b
                            .get(self.i + 2..self.i + 6)
                            .ok_or_else(|| bad("bad \\u escape"))?;
                        if !hex.iter().all(u8::is_ascii_hexdigit) {
                            return Err(bad("bad \\u escape"));
                        }
                        self.i += 6;
                    }
                    _ => return Err(bad("bad escape")),
                },
                _ => return Err(bad("control character in string")),
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        self.i - start
    }

    /// A payload number: an integer in ±(2^53−1), written as RFC 8785 writes it (no fraction,
    /// no exponent, no `-0`). Anything else has no single spelling across JSON implementations.
    fn number(&mut self) -> Result<(), WireError> {
        let negative = self.peek() == Some(b'-');
        if negative {
            self.i += 1;
        }
        let start = self.i;
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(bad("bad number")),
        }
        if matches!(self.peek(), Some(b'.' | b'e' | b'E')) {
            return Err(bad(
                "payload number is not an integer (no fractions or exponents: write them as strings)",
            ));
        }
        let digits = &self.b[start..self.i];
        let value = (digits.len() <= 16).then(|| {
            digits
                .iter()
                .fold(0u64, |acc, d| acc * 10 + u64::from(d - b'0'))
        });
        if value.is_none_or(|v| v > MAX_SAFE_INTEGER) {
            return Err(bad("payload integer is outside ±(2^53−1)"));
        }
        if negative && digits == b"0" {
            return Err(bad("payload number -0 (RFC 8785 writes 0)"));
        }
        Ok(())
    }

    fn value(&mut self, depth: usize) -> Result<(), WireError> {
        if depth > MAX_DEPTH {
            return Err(bad("payload nested too deeply"));
        }
        match self.peek() {
            Some(b'{') => {
                self.i += 1;
                if self.peek() == Some(b'}') {
                    self.i += 1;
                    return Ok(());
                }
                let mut prev: Option<&[u8]> = None;
                loop {
                    let name = self.string()?;
                    // RFC 8785 sorts members by their names' UTF-16 code units; strictly
                    // increasing also means no name repeats.
                    if let Some(p) = prev {
                        if utf16_order(p, name)? != std::cmp::Ordering::Less {
                            return Err(bad(
                                "payload object members are not in RFC 8785 order, or a name repeats",
                            ));
                        }
                    }
                    prev = Some(name);
                    self.lit(b":")?;
                    self.value(depth + 1)?;
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(());
                        }
                        _ => return Err(bad("expected , or } in object")),
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                if self.peek() == Some(b']') {
                    self.i += 1;
                    return Ok(());
                }
                loop {
                    self.value(depth + 1)?;
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(());
                        }
                        _ => return Err(bad("expected , or ] in array")),
                    }
                }
            }
            Some(b'"') => self.string().map(|_| ()),
            Some(b't') => self.lit(b"true"),
            Some(b'f') => self.lit(b"false"),
            Some(b'n') => self.lit(b"null"),
            _ => self.number(),
        }
    }
}

/// Reads an entry line's fixed members and checks the line's structure.
pub fn scan_entry(line: &[u8]) -> Result<ScannedEntry<'_>, WireError> {
    if line.len() > MAX_ENTRY_BYTES {
        return Err(WireError::TooLarge(line.len()));
    }
    let text = std::str::from_utf8(line).map_err(|_| bad("not UTF-8"))?;
    let mut c = Cur { b: line, i: 0 };
    c.lit(b"{\"ids\":{")?;
    let names: [&[u8]; 4] = [b"bet", b"operator", b"round", b"table"];
    let mut next_name = 0;
    if c.peek() != Some(b'}') {
        loop {
            let name = c.string()?;
            let pos = names[next_name..]
                .iter()
                .position(|n| *n == name)
                .ok_or_else(|| bad("ids member unknown, repeated or out of order"))?;
            next_name += pos + 1;
            c.lit(b":")?;
            let v = c.string()?;
            if v.len() > crate::entry::MAX_ID_BYTES && decoded_len(v)? > crate::entry::MAX_ID_BYTES
            {
                return Err(WireError::Id(match next_name {
                    1 => "bet",
                    2 => "operator",
                    3 => "round",
                    _ => "table",
                }));
            }
            match c.peek() {
                Some(b',') if next_name < names.len() => c.i += 1,
                _ => break,
            }
        }
    }
    c.lit(b"},\"kind\":")?;
    let kind = c.string()?;
    if !kind_ok(kind) {
        return Err(WireError::Kind);
    }
    c.lit(b",\"payload\":")?;
    let p0 = c.i;
    c.value(0)?;
    let payload = &text[p0..c.i];
    c.lit(b",\"prev\":\"")?;
    let prev = line.get(c.i..c.i + 64).ok_or(WireError::Prev)?;
    if !prev.iter().all(|h| matches!(h, b'0'..=b'9' | b'a'..=b'f')) {
        return Err(WireError::Prev);
    }
    c.i += 64;
    c.lit(b"\",\"seq\":")?;
    let s0 = c.i;
    let n = c.digits();
    let digits = &line[s0..c.i];
    if n == 0 || n > 16 || (n > 1 && digits[0] == b'0') {
        return Err(bad("seq is not a canonical integer"));
    }
    let seq = digits
        .iter()
        .fold(0u64, |acc, d| acc * 10 + u64::from(d - b'0'));
    if seq > MAX_SAFE_INTEGER {
        return Err(WireError::Seq(seq));
    }
    c.lit(b",\"ts\":\"")?;
    let ts = line.get(c.i..c.i + 27).ok_or(WireError::Ts)?;
    if !timestamp_ok(ts) {
        return Err(WireError::Ts);
    }
    let ts = &text[c.i..c.i + 27];
    c.i += 27;
    c.lit(b"\",\"v\":")?;
    if &line[c.i..] != b"1}" {
        let rest = &line[c.i..];
        let digits = rest.strip_suffix(b"}").unwrap_or(rest);
        let n = c.digits();
        if n == 0 || n != digits.len() || (n > 1 && digits[0] == b'0') {
            return Err(bad(
                "v is not a canonical integer, or bytes follow the entry",
            ));
        }
        if rest.last() != Some(&b'}') {
            return Err(bad("trailing bytes after the entry"));
        }
        return Err(std::str::from_utf8(digits)
            .ok()
            .and_then(|d| d.parse::<u64>().ok())
            .map_or_else(|| bad("v is out of range"), WireError::Version));
    }
    let kind = std::str::from_utf8(kind).map_err(|_| WireError::Kind)?;
    Ok(ScannedEntry {
        seq,
        prev,
        ts,
        kind,
        payload,
    })
}

/// Compares two raw JSON string contents (escapes not decoded) by their UTF-16 code units, the
/// order RFC 8785 sorts member names in.
fn utf16_order(a: &[u8], b: &[u8]) -> Result<std::cmp::Ordering, WireError> {
    // UTF-8 byte order is code point order, which is UTF-16 order for every character below
    // U+E000 (lead bytes under 0xEE): compare bytes unless an escape or a character from
    // U+E000 up is present.
    let plain = |s: &[u8]| s.iter().all(|&c| c != b'\\' && c < 0xEE);
    if plain(a) && plain(b) {
        return Ok(a.cmp(b));
    }
    let decode = |raw: &[u8]| -> Result<Vec<u16>, WireError> {
        let quoted = [b"\"", raw, b"\""].concat();
        let s: Cow<'_, str> = serde_json::from_slice(&quoted).map_err(|e| bad(&e.to_string()))?;
        Ok(s.encode_utf16().collect())
    };
    Ok(decode(a)?.cmp(&decode(b)?))
}

fn decoded_len(raw: &[u8]) -> Result<usize, WireError> {
    let quoted = [b"\"", raw, b"\""].concat();
    let s: Cow<'_, str> = serde_json::from_slice(&quoted).map_err(|e| bad(&e.to_string()))?;
    Ok(s.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::{seal_one, EntryKind, Kind, NewEntry, Timestamp, WireEntry};
    use crate::hash::Hash;
    use serde_json::json;

    fn sample() -> Vec<Vec<u8>> {
        let ts = Timestamp::parse("2025-03-01T18:30:00.123456Z").expect("valid");
        let payloads = [
            json!({}),
            json!([]),
            json!(null),
            json!("s\"\\\n\u{1}\u{1F600}"),
            json!({"a": [1, -2, 0, {"b": [true, false, null]}], "c": "x", "d": {"e": {}}}),
            json!(-9007199254740991i64),
        ];
        let mut out = Vec::new();
        for (i, p) in payloads.into_iter().enumerate() {
            let mut e = NewEntry::new(ts, EntryKind::BetAccepted, p);
            if i % 2 == 0 {
                e = e.bet("b\"1").table("t\u{e9}");
            }
            if i == 3 {
                e = e.operator("o").round("r").kind_for_test("x_1");
            }
            out.push(
                seal_one(i as u64 * 12345, Hash([7; 32]), e)
                    .expect("seals")
                    .canonical,
            );
        }
        out
    }

    trait KindForTest {
        fn kind_for_test(self, k: &str) -> Self;
    }
    impl KindForTest for NewEntry {
        fn kind_for_test(mut self, k: &str) -> Self {
            self.kind = Kind::parse(k).expect("valid");
            self
        }
    }

    #[test]
    fn scanner_reads_the_same_fields_as_serde_from_every_canonical_entry() {
        for line in sample() {
            let s = scan_entry(&line).expect("canonical entry scans");
            let w = WireEntry::parse(&line).expect("canonical entry parses");
            assert_eq!(s.seq, w.seq);
            assert_eq!(s.prev, w.prev.as_bytes());
            assert_eq!(s.ts, w.ts);
            assert_eq!(s.kind, w.kind);
            assert_eq!(s.payload, w.payload.get());
        }
    }

    #[test]
    fn scanner_never_accepts_a_line_that_serde_refuses() {
        // Every single-byte deletion and a set of substitutions of every sample line.
        for line in sample() {
            for i in 0..line.len() {
                let mut cut = line.clone();
                cut.remove(i);
                let mut variants = vec![cut];
                for sub in [b' ', b'"', b'\\', b'}', b'0', b'a', b',', 0x01] {
                    let mut v = line.clone();
                    v[i] = sub;
                    variants.push(v);
                }
                for v in variants {
                    if scan_entry(&v).is_ok() {
                        assert!(
                            WireEntry::parse(&v).is_ok(),
                            "scanner accepted what serde refuses: {}",
                            String::from_utf8_lossy(&v)
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn scanner_refuses_whitespace_reordered_members_and_trailing_bytes() {
        let line = String::from_utf8(sample().remove(1)).expect("utf8");
        let bad_lines = [
            line.replace("\"kind\":", "\"kind\": "),
            line.replace("{\"ids\":{}", "{\"ids\":{},\"ids\":{}"),
            format!("{line} "),
            line.replace("\"v\":1", "\"v\":2"),
            line.replace("\"seq\":12345", "\"seq\":012345"),
            line.replace("\"payload\":[]", "\"payload\":[1,]"),
            line.replace("\"payload\":[]", "\"payload\":01"),
        ];
        for b in bad_lines {
            assert_ne!(b, line);
            assert!(scan_entry(b.as_bytes()).is_err(), "{b}");
        }
    }
}
