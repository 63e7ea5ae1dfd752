//! Input validation against a tool's schema, with Claude Code's `InputValidationError` texts
//! (which name the parameter and the expected and provided types).

use serde_json::Value;

/// Check `input` against the top-level properties of `schema`.
pub fn validate(tool: &str, schema: &Value, input: &Value) -> Result<(), String> {
    let fail = |issue: String| {
        Err(format!(
            "InputValidationError: {tool} failed due to the following issue:\n{issue}"
        ))
    };
    let Some(obj) = input.as_object() else {
        return fail(format!(
            "The input is expected as `object` but provided as `{}`",
            type_name(input)
        ));
    };
    let props = schema.get("properties").and_then(Value::as_object);
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for r in required.iter().filter_map(Value::as_str) {
            if !obj.contains_key(r) {
                return fail(format!("The required parameter `{r}` is missing"));
            }
        }
    }
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    for (key, value) in obj {
        let Some(prop) = props.and_then(|p| p.get(key)) else {
            if closed {
                return fail(format!("An unexpected parameter `{key}` was provided"));
            }
            continue;
        };
        if let Some(msg) = check(key, prop, value) {
            return fail(msg);
        }
    }
    Ok(())
}

fn check(key: &str, prop: &Value, value: &Value) -> Option<String> {
    let expected: Vec<&str> = match prop.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !expected.is_empty() && !expected.iter().any(|t| matches_type(t, value)) {
        return Some(format!(
            "The parameter `{key}` type is expected as `{}` but provided as `{}`",
            expected.join(" | "),
            type_name(value)
        ));
    }
    if let Some(options) = prop.get("enum").and_then(Value::as_array)
        && !options.contains(value)
    {
        let list: Vec<String> = options.iter().map(Value::to_string).collect();
        return Some(format!(
            "The parameter `{key}` must be one of {}, but provided {value}",
            list.join(", ")
        ));
    }
    if let (Some(min), Some(text)) = (
        prop.get("minLength").and_then(Value::as_u64),
        value.as_str(),
    ) && (text.chars().count() as u64) < min
    {
        return Some(format!(
            "The parameter `{key}` must be at least {min} characters long, but provided {value}"
        ));
    }
    if let (Some(min), Some(n)) = (prop.get("minimum").and_then(Value::as_f64), value.as_f64())
        && n < min
    {
        return Some(format!(
            "The parameter `{key}` must be at least {min}, but provided {value}"
        ));
    }
    if let (Some(min), Some(n)) = (
        prop.get("exclusiveMinimum").and_then(Value::as_f64),
        value.as_f64(),
    ) && n <= min
    {
        return Some(format!(
            "The parameter `{key}` must be greater than {min}, but provided {value}"
        ));
    }
    None
}

fn matches_type(t: &str, v: &Value) -> bool {
    match t {
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "boolean" => v.is_boolean(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        "null" => v.is_null(),
        _ => true,
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type":"object","properties":{
            "file_path":{"type":"string"},
            "limit":{"type":"integer","exclusiveMinimum":0},
            "mode":{"type":"string","enum":["a","b"]}},
            "required":["file_path"],"additionalProperties":false})
    }

    #[test]
    fn claude_code_texts() {
        let e = validate("Read", &schema(), &json!({"file_path": 5})).unwrap_err();
        assert_eq!(
            e,
            "InputValidationError: Read failed due to the following issue:\nThe parameter `file_path` type is expected as `string` but provided as `number`"
        );
        let e = validate("Read", &schema(), &json!({})).unwrap_err();
        assert!(e.ends_with("The required parameter `file_path` is missing"));
        let e = validate("Read", &schema(), &json!({"file_path":"a","x":1})).unwrap_err();
        assert!(e.ends_with("An unexpected parameter `x` was provided"));
        let e = validate("Read", &schema(), &json!({"file_path":"a","limit":0})).unwrap_err();
        assert!(e.contains("`limit` must be greater than 0"));
        let query = json!({"type":"object","properties":{"query":{"type":"string","minLength":2}}});
        let e = validate("WebSearch", &query, &json!({"query":"é"})).unwrap_err();
        assert!(
            e.ends_with(
                "The parameter `query` must be at least 2 characters long, but provided \"é\""
            ),
            "{e}"
        );
        assert!(validate("WebSearch", &query, &json!({"query":"éé"})).is_ok());
        let e = validate("Read", &schema(), &json!({"file_path":"a","limit":1.5})).unwrap_err();
        assert!(e.contains("`limit` type is expected as `integer`"));
        let e = validate("Read", &schema(), &json!({"file_path":"a","mode":"c"})).unwrap_err();
        assert!(e.contains("must be one of \"a\", \"b\""));
        let e = validate("Read", &schema(), &json!("str")).unwrap_err();
        assert!(e.contains("expected as `object`"));
        validate(
            "Read",
            &schema(),
            &json!({"file_path":"a","limit":3,"mode":"b"}),
        )
        .unwrap();
    }
}
