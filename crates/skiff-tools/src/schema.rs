//! JSON Schemas for tool inputs, derived with schemars in the shape Claude Code sends
//! (draft 2020-12, `additionalProperties: false`, optional fields not nullable, no titles).

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

/// The input schema of `T` as sent to the API.
pub fn schema_for<T: JsonSchema>() -> Value {
    let settings = SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
    });
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut v = schema.to_value();
    tidy(&mut v, true);
    v
}

/// Remove what the API does not need (titles, integer formats) and default to closed objects.
fn tidy(v: &mut Value, root: bool) {
    match v {
        Value::Object(map) => {
            map.remove("title");
            // Integer formats (`uint64`) go; a string's `uri` stays, as Claude Code sends it.
            if map.get("format").and_then(Value::as_str) != Some("uri") {
                map.remove("format");
            }
            // Optional fields are simply not required; the API needs no `null` alternative.
            if let Some(Value::Array(types)) = map.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types.remove(0);
                    map.insert("type".into(), only);
                }
            }
            if let Some(Value::Array(alts)) = map.get_mut("anyOf") {
                alts.retain(|a| a.get("type").and_then(Value::as_str) != Some("null"));
                if alts.len() == 1
                    && let Some(Value::Object(only)) = alts.pop()
                {
                    map.remove("anyOf");
                    for (k, v) in only {
                        map.entry(k).or_insert(v);
                    }
                }
            }
            if let Some(Value::Array(options)) = map.get_mut("enum") {
                options.retain(|o| !o.is_null());
            }
            if !root {
                map.remove("$schema");
            }
            if map.get("type").and_then(Value::as_str) == Some("object")
                && !map.contains_key("additionalProperties")
            {
                map.insert("additionalProperties".into(), Value::Bool(false));
            }
            if let Some(Value::Object(props)) = map.get_mut("properties") {
                for p in props.values_mut() {
                    tidy(p, false);
                }
            }
            if let Some(items) = map.get_mut("items") {
                tidy(items, false);
            }
            if let Some(Value::Object(defs)) = map.get_mut("$defs") {
                for d in defs.values_mut() {
                    tidy(d, false);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| tidy(i, false)),
        _ => {}
    }
}
