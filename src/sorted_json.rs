//! A value's JSON with every object's members in key order, byte for byte what
//! `serde_json::to_vec(&serde_json::to_value(x)?)` writes, without building the
//! [`serde_json::Value`] first.
//!
//! The state snapshot writes each live round this way (`round::snapshot`; audit/FORMAT.md
//! §10.1: "object members are sorted by name, recursively"), since the writer takes no batch
//! while it writes a snapshot: building each round's `Value` first (a `String` for every
//! string, a map node for every object) made that pause longer (`bench/RESULTS.md`,
//! "twenty-third session"). Here an object's members are written in place as they come, and
//! rewritten in key order at its end only when they did not come in that order.
//!
//! What `Value` does is followed exactly: map keys become strings as `serde_json`'s map-key
//! rules make them (a key that is none of those is an error, as there); a later member of the
//! same key replaces an earlier one; a `RawValue` is parsed and written in key order too;
//! `f32`, `f64`, `i128`, `u128` and bytes are written through their `Value`.

use std::ops::Range;

use serde::ser::{self, Serialize};
use serde_json::{Error, Value};

/// The name `serde_json` gives a `RawValue` when it serialises one as a struct.
const RAW_VALUE: &str = "$serde_json::private::RawValue";

/// The name [`Presorted`] serialises under.
const PRESORTED: &str = "$pitboss::sorted_json::Presorted";

/// JSON text this module wrote before ([`to_vec`]), copied as it is where the value it is
/// the text of would be written: what a value does not change between two writings need not
/// be written again (a live bet between two state snapshots, `round::snapshot`). For this
/// module's writing only: another serialiser writes it as a JSON string.
pub struct Presorted<'a>(pub &'a str);

impl Serialize for Presorted<'_> {
    fn serialize<S: ser::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_newtype_struct(PRESORTED, self.0)
    }
}

/// `value`'s JSON as `serde_json::to_vec(&serde_json::to_value(value)?)` writes it.
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, Error> {
    let mut out = Vec::with_capacity(256);
    value.serialize(Writer { out: &mut out })?;
    Ok(out)
}

/// Appends `value`'s JSON to `out`, as [`to_vec`] writes it.
pub fn write<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<(), Error> {
    value.serialize(Writer { out })
}

/// Writes a value into `out`.
struct Writer<'a> {
    out: &'a mut Vec<u8>,
}

impl Writer<'_> {
    /// Writes what `serde_json` writes for `v` (a string, a number, a boolean).
    fn plain<T: Serialize + ?Sized>(self, v: &T) -> Result<(), Error> {
        serde_json::to_writer(&mut *self.out, v)
    }

    /// Writes `v` through its `Value` (the types whose `Value` is not written as they are).
    fn via_value<T: Serialize + ?Sized>(self, v: &T) -> Result<(), Error> {
        serde_json::to_writer(&mut *self.out, &serde_json::to_value(v)?)
    }

    /// `{"variant":` (the caller writes the value and `}`).
    fn open_variant(&mut self, variant: &str) -> Result<(), Error> {
        self.out.push(b'{');
        serde_json::to_writer(&mut *self.out, variant)?;
        self.out.push(b':');
        Ok(())
    }
}

impl<'a> ser::Serializer for Writer<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Seq<'a>;
    type SerializeTuple = Seq<'a>;
    type SerializeTupleStruct = Seq<'a>;
    type SerializeTupleVariant = Seq<'a>;
    type SerializeMap = Object<'a>;
    type SerializeStruct = Object<'a>;
    type SerializeStructVariant = Object<'a>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.plain(&v)
    }
    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.plain(&v)
    }
    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.plain(&v)
    }
    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.plain(&v)
    }
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        self.plain(&v)
    }
    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        self.via_value(&v)
    }
    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.plain(&v)
    }
    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.plain(&v)
    }
    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.plain(&v)
    }
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        self.plain(&v)
    }
    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        self.via_value(&v)
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        self.via_value(&v)
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        self.via_value(&v)
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.plain(&v)
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.plain(v)
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        // `[u8]` serialises as a sequence of numbers: the array `Value` makes of bytes.
        self.via_value(v)
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.serialize_none()
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        self.serialize_none()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.plain(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        if name == PRESORTED {
            // The text as it is (a `str`, which `KeyText` appends).
            return value.serialize(KeyText { out: self.out });
        }
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        mut self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.open_variant(variant)?;
        value.serialize(Writer {
            out: &mut *self.out,
        })?;
        self.out.push(b'}');
        Ok(())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Seq<'a>, Error> {
        self.out.push(b'[');
        Ok(Seq {
            out: self.out,
            first: true,
            close_variant: false,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq<'a>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Seq<'a>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        mut self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Seq<'a>, Error> {
        self.open_variant(variant)?;
        self.out.push(b'[');
        Ok(Seq {
            out: self.out,
            first: true,
            close_variant: true,
        })
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Object<'a>, Error> {
        Ok(Object::new(self.out, false, false))
    }
    fn serialize_struct(self, name: &'static str, _len: usize) -> Result<Object<'a>, Error> {
        Ok(Object::new(self.out, false, name == RAW_VALUE))
    }
    fn serialize_struct_variant(
        mut self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Object<'a>, Error> {
        self.open_variant(variant)?;
        Ok(Object::new(self.out, true, false))
    }
}

/// An array (or a tuple variant's, closed with `}` after `]`).
pub struct Seq<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
    close_variant: bool,
}

impl Seq<'_> {
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        if !std::mem::take(&mut self.first) {
            self.out.push(b',');
        }
        value.serialize(Writer {
            out: &mut *self.out,
        })
    }
    fn close(self) -> Result<(), Error> {
        self.out.push(b']');
        if self.close_variant {
            self.out.push(b'}');
        }
        Ok(())
    }
}

impl ser::SerializeSeq for Seq<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeTuple for Seq<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeTupleStruct for Seq<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeTupleVariant for Seq<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

/// An object: its members written into `out` as they come (`"key":value`, comma-separated),
/// each one's raw key kept aside; at its end, members not already in key order (or a key
/// given twice) are rewritten in key order. A struct variant's object is closed with a second
/// `}`; a `RawValue`'s one member is the raw text, parsed and written in key order.
pub struct Object<'a> {
    out: &'a mut Vec<u8>,
    /// Where the object's `{` is in `out`.
    start: usize,
    /// The members' raw keys, one after the other.
    keys: Vec<u8>,
    /// Each member's key (a range of `keys`) and its `"key":value` (a range of `out`).
    members: Vec<(Range<usize>, Range<usize>)>,
    /// A map's member whose key is written and whose value is not yet.
    pending: Option<(Range<usize>, usize)>,
    close_variant: bool,
    raw: bool,
}

impl<'a> Object<'a> {
    fn new(out: &'a mut Vec<u8>, close_variant: bool, raw: bool) -> Object<'a> {
        let start = out.len();
        if !raw {
            out.push(b'{');
        }
        Object {
            out,
            start,
            keys: Vec::new(),
            members: Vec::new(),
            pending: None,
            close_variant,
            raw,
        }
    }

    /// Writes `,"key":` for a member whose raw key ends `keys` from `from`.
    fn key_written(&mut self, from: usize) -> Result<(), Error> {
        if !self.members.is_empty() {
            self.out.push(b',');
        }
        let at = self.out.len();
        let key = std::str::from_utf8(&self.keys[from..]).map_err(ser::Error::custom)?;
        serde_json::to_writer(&mut *self.out, key)?;
        self.out.push(b':');
        self.pending = Some((from..self.keys.len(), at));
        Ok(())
    }

    fn value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let (key, at) = self
            .pending
            .take()
            .ok_or_else(|| <Error as ser::Error>::custom("a map value before its key"))?;
        value.serialize(Writer {
            out: &mut *self.out,
        })?;
        self.members.push((key, at..self.out.len()));
        Ok(())
    }

    fn field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<(), Error> {
        if self.raw {
            // `RawValue`'s text: parsed, as `Value` parses it.
            let text = serde_json::to_value(value)?;
            let text = text
                .as_str()
                .ok_or_else(|| <Error as ser::Error>::custom("a raw value that is not text"))?;
            let parsed: Value = serde_json::from_str(text)?;
            return serde_json::to_writer(&mut *self.out, &parsed);
        }
        let from = self.keys.len();
        self.keys.extend_from_slice(key.as_bytes());
        self.key_written(from)?;
        self.value(value)
    }

    fn close(self) -> Result<(), Error> {
        if self.raw {
            return Ok(());
        }
        let keys = &self.keys;
        let key = |m: &(Range<usize>, Range<usize>)| &keys[m.0.clone()];
        let in_order = self.members.windows(2).all(|w| key(&w[0]) < key(&w[1]));
        if !in_order {
            // Stable: of members with one key, the later stays later and is the one kept.
            let mut order: Vec<usize> = (0..self.members.len()).collect();
            order.sort_by(|&a, &b| key(&self.members[a]).cmp(key(&self.members[b])));
            let body = self.out.split_off(self.start + 1);
            let base = self.start + 1;
            let mut first = true;
            for (i, &m) in order.iter().enumerate() {
                if order
                    .get(i + 1)
                    .is_some_and(|&next| key(&self.members[next]) == key(&self.members[m]))
                {
                    continue;
                }
                if !std::mem::take(&mut first) {
                    self.out.push(b',');
                }
                let r = &self.members[m].1;
                self.out
                    .extend_from_slice(&body[r.start - base..r.end - base]);
            }
        }
        self.out.push(b'}');
        if self.close_variant {
            self.out.push(b'}');
        }
        Ok(())
    }
}

impl ser::SerializeMap for Object<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        // Text and integers (the keys this service's maps have) written as they are;
        // anything else as `Value` makes it: `serde_json`'s map-key rules, then the text.
        let from = self.keys.len();
        if key
            .serialize(KeyText {
                out: &mut self.keys,
            })
            .is_err()
        {
            self.keys.truncate(from);
            let probe = serde_json::to_value(Probe(key))?;
            let text = match probe {
                Value::Object(m) => m.into_iter().next().map(|(k, _)| k),
                _ => None,
            }
            .ok_or_else(|| <Error as ser::Error>::custom("a map key"))?;
            self.keys.extend_from_slice(text.as_bytes());
        }
        self.key_written(from)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.value(value)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

/// A map key that is text or an integer, written as its text; every other kind is refused
/// (and then made as `Value` makes it).
struct KeyText<'a> {
    out: &'a mut Vec<u8>,
}

impl KeyText<'_> {
    fn int(self, v: impl itoa::Integer) -> Result<(), Error> {
        self.out
            .extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
        Ok(())
    }
}

/// Not a key [`KeyText`] writes.
fn other_key() -> Error {
    <Error as ser::Error>::custom("not text or an integer")
}

impl ser::Serializer for KeyText<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = ser::Impossible<(), Error>;
    type SerializeTuple = ser::Impossible<(), Error>;
    type SerializeTupleStruct = ser::Impossible<(), Error>;
    type SerializeTupleVariant = ser::Impossible<(), Error>;
    type SerializeMap = ser::Impossible<(), Error>;
    type SerializeStruct = ser::Impossible<(), Error>;
    type SerializeStructVariant = ser::Impossible<(), Error>;

    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.out.extend_from_slice(v.as_bytes());
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.int(v)
    }
    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.int(v)
    }
    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.int(v)
    }
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        self.int(v)
    }
    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.int(v)
    }
    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.int(v)
    }
    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.int(v)
    }
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        self.int(v)
    }
    fn serialize_bool(self, _: bool) -> Result<(), Error> {
        Err(other_key())
    }
    fn serialize_f32(self, _: f32) -> Result<(), Error> {
        Err(other_key())
    }
    fn serialize_f64(self, _: f64) -> Result<(), Error> {
        Err(other_key())
    }
    fn serialize_char(self, _: char) -> Result<(), Error> {
        Err(other_key())
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), Error> {
        Err(other_key())
    }
    fn serialize_none(self) -> Result<(), Error> {
        Err(other_key())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<(), Error> {
        Err(other_key())
    }
    fn serialize_unit(self) -> Result<(), Error> {
        Err(other_key())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        Err(other_key())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), Error> {
        Err(other_key())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<(), Error> {
        Err(other_key())
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Error> {
        Err(other_key())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(other_key())
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
        Err(other_key())
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(other_key())
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(other_key())
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(other_key())
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Error> {
        Err(other_key())
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(other_key())
    }
}

/// A map of one member with `key` and a null value: what `serde_json` makes of the key is
/// read back from its `Value`.
struct Probe<'k, K: ?Sized>(&'k K);

impl<K: Serialize + ?Sized> Serialize for Probe<'_, K> {
    fn serialize<S: ser::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use ser::SerializeMap;
        let mut m = serializer.serialize_map(Some(1))?;
        m.serialize_entry(self.0, &())?;
        m.end()
    }
}

impl ser::SerializeStruct for Object<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.field(key, value)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeStructVariant for Object<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.field(key, value)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;
    use serde_json::json;
    use std::collections::{BTreeMap, HashMap};

    /// What `Value` writes.
    fn via_value<T: Serialize>(v: &T) -> String {
        serde_json::to_string(&serde_json::to_value(v).expect("value")).expect("text")
    }

    /// What [`to_vec`] writes, as text.
    fn to_string<T: Serialize>(v: &T) -> String {
        String::from_utf8(to_vec(v).expect("writes")).expect("UTF-8")
    }

    #[derive(Serialize)]
    #[allow(dead_code)]
    enum Kind {
        Unit,
        Newtype(i64),
        Tuple(i32, String),
        Struct { z: u8, a: Option<String> },
    }

    #[derive(Serialize)]
    struct Inner {
        zeta: Vec<Kind>,
        alpha: (u8, char),
        #[serde(skip_serializing_if = "Option::is_none")]
        skipped: Option<u8>,
    }

    #[derive(Serialize)]
    struct Outer {
        z: String,
        b: Inner,
        #[serde(flatten)]
        extra: BTreeMap<String, i64>,
        a_map: HashMap<u32, bool>,
        keyed_by_enum: BTreeMap<Kind2, u8>,
        floats: (f32, f64, f64),
        big: (i128, u128),
        unit: (),
        raw: Box<serde_json::value::RawValue>,
        value: Value,
    }

    #[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
    enum Kind2 {
        Red,
        Black,
    }

    #[test]
    fn writes_what_value_writes() {
        let outer = Outer {
            z: "quote \" backslash \\ tab \t control \u{1} é 😀".into(),
            b: Inner {
                zeta: vec![
                    Kind::Unit,
                    Kind::Newtype(-5),
                    Kind::Tuple(1, "x".into()),
                    Kind::Struct {
                        z: 1,
                        a: Some("b".into()),
                    },
                    Kind::Struct { z: 2, a: None },
                ],
                alpha: (7, 'ř'),
                skipped: None,
            },
            extra: [
                ("zz".to_string(), 1),
                ("B".to_string(), 2),
                ("é".to_string(), 3),
            ]
            .into_iter()
            .collect(),
            a_map: [(10, true), (9, false), (100, true)].into_iter().collect(),
            keyed_by_enum: [(Kind2::Red, 1), (Kind2::Black, 2)].into_iter().collect(),
            floats: (0.1, 1e300, f64::NAN),
            big: (-(1i128 << 60), 1u128 << 63),
            unit: (),
            raw: serde_json::value::RawValue::from_string(
                r#"{"z": 1, "a": [ {"y":2,"b":3} ], "m": "\u00e9"}"#.into(),
            )
            .expect("raw"),
            value: json!({"k": {"b": 1, "a": 2}, "arr": [3, {"y": null, "x": true}]}),
        };
        let sorted = to_string(&outer);
        assert_eq!(sorted, via_value(&outer));
        // The members are in key order, nested ones too (the check is not vacuous).
        assert!(
            sorted.starts_with(r#"{"B":2,"a_map":{"10":true,"100":true,"9":false}"#),
            "{sorted}"
        );
    }

    #[test]
    fn a_later_member_of_one_key_replaces_the_earlier() {
        struct Twice;
        impl Serialize for Twice {
            fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use ser::SerializeMap;
                let mut m = s.serialize_map(None)?;
                m.serialize_entry("b", &1)?;
                m.serialize_entry("a", &2)?;
                m.serialize_entry("b", &3)?;
                m.end()
            }
        }
        assert_eq!(to_string(&Twice), via_value(&Twice));
        assert_eq!(to_string(&Twice), r#"{"a":2,"b":3}"#);
    }

    #[test]
    fn bytes_are_the_array_value_makes() {
        struct Bytes;
        impl Serialize for Bytes {
            fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(&[0, 7, 255])
            }
        }
        assert_eq!(to_string(&Bytes), via_value(&Bytes));
        assert_eq!(to_string(&Bytes), "[0,7,255]");
    }

    #[test]
    fn keys_value_refuses_are_refused() {
        let m: BTreeMap<Vec<u8>, u8> = [(vec![1], 1)].into_iter().collect();
        assert!(serde_json::to_value(&m).is_err());
        assert!(to_vec(&m).is_err());
    }

    /// Text written before, copied where its value goes (in a sequence, as an object's member
    /// that the object's end moves into key order), gives the bytes the value gives.
    #[test]
    fn presorted_text_is_written_as_its_value_is() {
        #[derive(Serialize)]
        struct Bet {
            z: u8,
            request: Value,
        }
        let bets = [
            Bet {
                z: 1,
                request: json!({"b": [1, {"y": 2, "x": 3}], "a": "é\n"}),
            },
            Bet {
                z: 2,
                request: json!({}),
            },
        ];
        let texts: Vec<String> = bets
            .iter()
            .map(|b| String::from_utf8(to_vec(b).expect("bet")).expect("UTF-8"))
            .collect();
        #[derive(Serialize)]
        struct Round<B> {
            x: u8,
            bets: Vec<B>,
            a: u8,
        }
        let whole = to_vec(&Round {
            x: 1,
            bets: bets.iter().collect(),
            a: 2,
        })
        .expect("round");
        let spliced = to_vec(&Round {
            x: 1,
            bets: texts.iter().map(|t| Presorted(t)).collect(),
            a: 2,
        })
        .expect("round");
        assert_eq!(
            String::from_utf8(spliced).unwrap(),
            String::from_utf8(whole).unwrap()
        );
        assert_eq!(
            to_vec(&Round {
                x: 1,
                bets: bets.iter().collect(),
                a: 2
            })
            .unwrap(),
            via_value(&Round {
                x: 1,
                bets: bets.iter().collect(),
                a: 2
            })
            .into_bytes()
        );
    }
}
