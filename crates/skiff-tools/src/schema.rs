//! JSON Schemas for tool inputs, derived with schemars in the shape Claude Code sends
//! (`additionalProperties: false`, optional fields not nullable, no titles), and terser: no
//! `$schema` and no description of the input struct itself (the tool's description says it),
//! `enum` rather than a `oneOf` of constants (small models follow `enum` better). Every byte
//! here is in every request's prefix.

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

/// The environment variable that makes `check_rendered_schema` write the rendered schemas instead
/// of comparing them.
pub const BLESS_VAR: &str = "SKIFF_BLESS_SCHEMAS";

/// `schema` as a tool ships it rendered ([`crate::TypedTool::SCHEMA`]): pretty JSON with every
/// object's keys sorted (whatever order `serde_json`'s features give a map), ending in a
/// newline.
pub fn render(schema: &Value) -> String {
    let mut sorted = schema.clone();
    sorted.sort_all_objects();
    serde_json::to_string_pretty(&sorted).unwrap_or_default() + "\n"
}

/// Remove what the API does not need (titles, integer formats, `$schema`, the description of
/// the input struct and of an array's item struct: the field says it) and default to closed
/// objects. `own`: `v` is a struct's schema whose doc comment goes.
fn tidy(v: &mut Value, own: bool) {
    match v {
        Value::Object(map) => {
            map.remove("title");
            map.remove("$schema");
            if own {
                // "Input of the X tool.": the doc comment of the input struct.
                map.remove("description");
            }
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
            consts_to_enum(map);
            if let Some(Value::Array(options)) = map.get_mut("enum") {
                options.retain(|o| !o.is_null());
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
                tidy(items, true);
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

/// A `oneOf` (or `anyOf`) of string constants — what schemars derives for a unit enum whose
/// variants have doc comments — becomes `{"type": "string", "enum": [...]}`.
fn consts_to_enum(map: &mut serde_json::Map<String, Value>) {
    for key in ["oneOf", "anyOf"] {
        let Some(Value::Array(alts)) = map.get(key) else {
            continue;
        };
        // A `null` alternative (an optional field) goes, as everywhere in these schemas.
        let consts: Option<Vec<Value>> = alts
            .iter()
            .filter(|a| a.get("type").and_then(Value::as_str) != Some("null"))
            .filter(|a| a.get("const").is_none_or(|c| !c.is_null()))
            .map(|a| {
                let c = a.get("const").filter(|c| c.is_string())?;
                let typed = a.get("type").is_none_or(|t| t == "string");
                typed.then(|| c.clone())
            })
            .collect();
        if let Some(consts) = consts.filter(|c| !c.is_empty()) {
            map.remove(key);
            map.insert("type".into(), Value::String("string".into()));
            map.insert("enum".into(), Value::Array(consts));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schemars::JsonSchema;

    /// Input of a test tool.
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Input {
        /// The mode.
        mode: Mode,
        /// A count.
        count: Option<u32>,
    }

    #[derive(JsonSchema)]
    #[serde(rename_all = "snake_case")]
    #[allow(dead_code)]
    enum Mode {
        /// The first.
        First,
        /// The second one.
        SecondOne,
    }

    #[test]
    fn schemas_are_terse() {
        let v = schema_for::<Input>();
        assert_eq!(
            v,
            serde_json::json!({
                "type": "object",
                "properties": {
                    "mode": {"type": "string", "enum": ["first", "second_one"], "description": "The mode."},
                    "count": {"type": "integer", "minimum": 0, "description": "A count."}
                },
                "required": ["mode"],
                "additionalProperties": false
            })
        );
    }
}
