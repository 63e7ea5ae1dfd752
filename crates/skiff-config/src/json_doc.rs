//! An order-preserving JSON document, for editing files other programs own (`~/.claude.json`,
//! `.mcp.json`): keys keep their order and everything not edited is written back as it was read
//! (`serde_json::Value` would sort the keys).

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

/// A JSON value whose objects keep their key order.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A number.
    Number(serde_json::Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Json>),
    /// An object, keys in document order.
    Object(Vec<(String, Json)>),
}

impl Json {
    /// Parse JSON text (serde_json's errors, with line and column).
    pub fn parse(text: &str) -> serde_json::Result<Self> {
        serde_json::from_str(text)
    }

    /// Any serializable value as a document (fields in their serialization order).
    pub fn from_serialize<T: Serialize>(value: &T) -> serde_json::Result<Self> {
        Self::parse(&serde_json::to_string(value)?)
    }

    /// Pretty-printed with two-space indents, as `JSON.stringify(v, null, 2)` writes it.
    pub fn to_pretty(&self) -> serde_json::Result<String> {
        serde_json::to_string_pretty(self)
    }

    /// As a `serde_json::Value` (keys sorted).
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// The value of `key` when this is an object (the last one, if the key repeats).
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(fields) => fields.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value of `key` when this is an object, mutably.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Json> {
        match self {
            Json::Object(fields) => fields
                .iter_mut()
                .rev()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// Set `key` (in place when present, else appended). No-op unless this is an object.
    pub fn insert(&mut self, key: &str, value: Json) {
        if let Some(slot) = self.get_mut(key) {
            *slot = value;
        } else if let Json::Object(fields) = self {
            fields.push((key.to_owned(), value));
        }
    }

    /// Remove `key` (every occurrence); the last value, if there was one.
    pub fn remove(&mut self, key: &str) -> Option<Json> {
        let Json::Object(fields) = self else {
            return None;
        };
        let mut removed = None;
        fields.retain_mut(|(k, v)| {
            if k == key {
                removed = Some(std::mem::replace(v, Json::Null));
                false
            } else {
                true
            }
        });
        removed
    }

    /// The object at `key`, created (empty, appended) when absent or `null`. `None` when this
    /// is not an object or `key` holds something else than an object.
    pub fn object_at(&mut self, key: &str) -> Option<&mut Json> {
        if !matches!(self, Json::Object(_)) {
            return None;
        }
        if matches!(self.get(key), None | Some(Json::Null)) {
            self.insert(key, Json::Object(Vec::new()));
        }
        self.get_mut(key).filter(|v| matches!(v, Json::Object(_)))
    }

    /// The keys, when this is an object.
    #[cfg(test)]
    pub fn keys(&self) -> Vec<&str> {
        match self {
            Json::Object(fields) => fields.iter().map(|(k, _)| k.as_str()).collect(),
            _ => Vec::new(),
        }
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => s.serialize_unit(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Number(n) => n.serialize(s),
            Json::String(t) => s.serialize_str(t),
            Json::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Json::Object(fields) => {
                let mut map = s.serialize_map(Some(fields.len()))?;
                for (k, v) in fields {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_none<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
        Json::deserialize(d)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
        Ok(Json::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
        Ok(Json::Number(n.into()))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
        Ok(Json::Number(n.into()))
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Json, E> {
        serde_json::Number::from_f64(n)
            .map(Json::Number)
            .ok_or_else(|| E::custom("a number that is not finite"))
    }

    fn visit_str<E>(self, s: &str) -> Result<Json, E> {
        Ok(Json::String(s.to_owned()))
    }

    fn visit_string<E>(self, s: String) -> Result<Json, E> {
        Ok(Json::String(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut fields = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Json>()? {
            fields.push((k, v));
        }
        Ok(Json::Object(fields))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_keep_key_order_and_values() {
        let text = r#"{
  "zeta": 1,
  "alpha": {
    "b": [
      true,
      null,
      -3,
      1.5,
      "ü\n\"q\""
    ],
    "a": {}
  },
  "big": 18446744073709551615,
  "empty": []
}"#;
        let doc = Json::parse(text).unwrap();
        assert_eq!(doc.to_pretty().unwrap(), text);
        assert_eq!(doc.keys(), ["zeta", "alpha", "big", "empty"]);
    }

    #[test]
    fn edits() {
        let mut doc = Json::parse(r#"{"b": 1, "a": null, "c": 3}"#).unwrap();
        doc.insert("b", Json::Bool(false));
        doc.insert("z", Json::Null);
        assert_eq!(doc.keys(), ["b", "a", "c", "z"]);
        assert!(doc.object_at("a").is_some());
        assert!(doc.object_at("c").is_none());
        doc.object_at("new")
            .unwrap()
            .insert("k", Json::String("v".into()));
        assert_eq!(
            serde_json::to_string(&doc).unwrap(),
            r#"{"b":false,"a":{},"c":3,"z":null,"new":{"k":"v"}}"#
        );
        assert_eq!(doc.remove("c"), Some(Json::Number(3.into())));
        assert_eq!(doc.remove("c"), None);
        assert_eq!(doc.keys(), ["b", "a", "z", "new"]);
        assert!(Json::Array(vec![]).object_at("x").is_none());
    }

    #[test]
    fn from_a_struct_keeps_field_order() {
        #[derive(serde::Serialize)]
        struct E {
            z: u8,
            a: u8,
        }
        let doc = Json::from_serialize(&E { z: 1, a: 2 }).unwrap();
        assert_eq!(doc.keys(), ["z", "a"]);
        assert_eq!(doc.to_value(), serde_json::json!({"a": 2, "z": 1}));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let text = "[".repeat(100_000);
        assert!(Json::parse(&text).is_err());
    }
}
