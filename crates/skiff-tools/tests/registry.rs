//! The registry: definitions, order, disabling, unknown tools, and schemas that match Claude
//! Code's exactly in names, types and required fields.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use serde_json::{Value, json};
use skiff_tools::{ToolContext, ToolRegistry};

fn reference() -> Vec<Value> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/claude-code/builtin_tool_input_schemas.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Property name → JSON type, plus the required list.
fn shape(schema: &Value) -> (Vec<(String, Value)>, Value) {
    let mut props: Vec<(String, Value)> = schema["properties"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v["type"].clone()))
        .collect();
    props.sort_by(|a, b| a.0.cmp(&b.0));
    let mut req: Vec<Value> = schema["required"].as_array().cloned().unwrap_or_default();
    req.sort_by_key(|v| v.to_string());
    (props, Value::Array(req))
}

#[test]
fn builtin_schemas_match_claude_code() {
    let reg = ToolRegistry::with_builtins();
    let defs = reg.definitions();
    let mut checked = 0;
    for r in reference() {
        let name = r["name"].as_str().unwrap();
        let Some(def) = defs.iter().find(|d| d.name == name) else {
            continue;
        };
        let ours = &def.input_schema;
        assert_eq!(shape(ours), shape(&r["input_schema"]), "{name}");
        assert_eq!(ours["additionalProperties"], json!(false), "{name}");
        assert_eq!(ours["type"], "object");
        // Terser than Claude Code's: no `$schema` and no description of the input itself.
        assert!(ours.get("$schema").is_none(), "{name}");
        assert!(ours.get("description").is_none(), "{name}");
        assert!(def.description.as_ref().is_some_and(|d| d.len() > 40));
        checked += 1;
    }
    assert!(checked >= 3, "only {checked} tools compared");
}

/// The schema without its `description`s (Claude Code's fixture has none) and `$schema`
/// (which skiff does not send).
fn undescribed(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| k.as_str() != "description" && k.as_str() != "$schema")
                .map(|(k, v)| (k.clone(), undescribed(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(undescribed).collect()),
        other => other.clone(),
    }
}

#[test]
fn web_fetch_notebook_edit_and_web_search_schemas_equal_claude_codes_exactly() {
    let reg = ToolRegistry::with_builtins();
    let defs = reg.definitions();
    for name in ["WebFetch", "NotebookEdit", "WebSearch"] {
        let theirs =
            reference().into_iter().find(|r| r["name"] == name).unwrap()["input_schema"].clone();
        let def = defs.iter().find(|d| d.name == name).unwrap();
        assert_eq!(
            undescribed(&def.input_schema),
            undescribed(&theirs),
            "{name}"
        );
        for (k, v) in def.input_schema["properties"].as_object().unwrap() {
            assert!(
                v["description"].as_str().is_some_and(|d| !d.is_empty()),
                "{name}.{k} has no description"
            );
        }
    }
}

#[test]
fn definitions_are_sorted_and_byte_stable() {
    let a = serde_json::to_string(&ToolRegistry::with_builtins().definitions()).unwrap();
    let b = serde_json::to_string(&ToolRegistry::with_builtins().definitions()).unwrap();
    assert_eq!(a, b);
    let names = ToolRegistry::with_builtins().names();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
}

#[tokio::test]
async fn disabled_and_unknown_tools() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path()).unwrap();
    let mut reg = ToolRegistry::with_builtins();
    assert!(reg.disable("Write"));
    assert!(!reg.names().contains(&"Write".to_owned()));
    assert!(reg.definitions().iter().all(|d| d.name != "Write"));
    let o = reg
        .call("Write", json!({"file_path":"x","content":"y"}), &ctx)
        .await;
    assert!(o.is_error);
    assert_eq!(
        o.text_content(),
        "<tool_use_error>Error: No such tool available: Write</tool_use_error>"
    );
    assert!(!dir.path().join("x").exists());
    let o = reg.call("NoSuchTool", json!({}), &ctx).await;
    assert_eq!(
        o.text_content(),
        "<tool_use_error>Error: No such tool available: NoSuchTool</tool_use_error>"
    );
    reg.retain(&["Read"]);
    assert_eq!(reg.names(), vec!["Read".to_owned()]);
}

#[test]
fn read_only_and_concurrency_flags() {
    let reg = ToolRegistry::with_builtins();
    let read = reg.get("Read").unwrap();
    assert!(read.is_read_only());
    assert!(read.is_concurrency_safe(&json!({"file_path":"a"})));
    let edit = reg.get("Edit").unwrap();
    assert!(!edit.is_read_only());
    assert!(!edit.is_concurrency_safe(&json!({"file_path":"a","old_string":"x","new_string":"y"})));
}

/// The built-in tools' definitions keep their shipped schema text (nothing parses it before the
/// first request) and write exactly what serde_json writes for the parsed schema: the request's
/// bytes are the same as when the schemas were parsed.
#[test]
fn builtin_definitions_keep_the_schema_text_and_write_the_parsed_bytes() {
    let defs = ToolRegistry::with_builtins().definitions();
    assert!(defs.len() >= 10, "{} definitions", defs.len());
    for def in &defs {
        assert!(def.input_schema.is_text(), "{} parsed", def.name);
        let mut parsed = def.clone();
        parsed.input_schema = def.input_schema.clone().into_value().into();
        assert!(!parsed.input_schema.is_text());
        assert_eq!(
            serde_json::to_string(def).unwrap(),
            serde_json::to_string(&parsed).unwrap(),
            "{}",
            def.name
        );
    }
}
