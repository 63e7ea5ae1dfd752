#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use serde_json::{Value, json};

use super::*;

fn testdata(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The control frames of a capture: `{"dir", "frame"}` lines, or bare frames.
fn control_frames(name: &str) -> Vec<Value> {
    testdata(name)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|v| v.get("frame").cloned().unwrap_or(v))
        .filter(|f| {
            f["type"]
                .as_str()
                .is_some_and(ControlFrame::is_control_type)
        })
        .collect()
}

/// The value without `null` members: an explicit `null` and an absent field read the same.
fn without_nulls(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), without_nulls(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_nulls).collect()),
        other => other.clone(),
    }
}

const CAPTURES: &[&str] = &[
    "claude-code/control_protocol_hooks_canusetool_setmode.jsonl",
    "claude-code/control_protocol_interrupt_session_state.jsonl",
    "claude-code/control_protocol_permission_suggestions.jsonl",
    "claude-code-sdk-protocol/stdin.jsonl",
    "claude-code-sdk-protocol/stdout.jsonl",
];

#[test]
fn every_recorded_control_frame_round_trips() {
    let mut seen = std::collections::BTreeSet::new();
    let mut count = 0;
    for name in CAPTURES {
        for raw in control_frames(name) {
            let frame: ControlFrame = serde_json::from_value(raw.clone())
                .unwrap_or_else(|e| panic!("{name}: {e}\n{raw}"));
            let written = serde_json::to_value(&frame).unwrap();
            assert_eq!(
                without_nulls(&raw),
                without_nulls(&written),
                "{name}: changed in the round trip"
            );
            let again: ControlFrame = serde_json::from_value(written).unwrap();
            assert_eq!(frame, again, "{name}");
            if let ControlFrame::ControlRequest(r) = &frame {
                seen.insert(r.request.subtype().to_owned());
                let unknown = matches!(r.request, ControlRequest::Unsupported(_));
                assert_eq!(unknown, r.request.subtype() == "bogus_subtype", "{raw}");
            }
            count += 1;
        }
    }
    assert!(count >= 30, "only {count} control frames in the captures");
    for subtype in [
        "initialize",
        "interrupt",
        "set_permission_mode",
        "set_model",
        "mcp_status",
        "can_use_tool",
        "hook_callback",
        "bogus_subtype",
    ] {
        assert!(seen.contains(subtype), "no {subtype} in the captures");
    }
}

#[test]
fn recorded_requests_read_as_their_types() {
    let frames = control_frames("claude-code/control_protocol_hooks_canusetool_setmode.jsonl");
    let requests: Vec<ControlRequest> = frames
        .into_iter()
        .filter_map(|f| match ControlFrame::from_value(f).unwrap() {
            ControlFrame::ControlRequest(r) => Some(r.request),
            _ => None,
        })
        .collect();
    let ControlRequest::Initialize(init) = &requests[0] else {
        panic!("{:?}", requests[0]);
    };
    let hooks = init.hooks.as_ref().unwrap();
    assert_eq!(hooks["PreToolUse"][0].matcher.as_deref(), Some("Bash"));
    assert_eq!(hooks["PreToolUse"][0].hook_callback_ids, ["hook_0"]);
    assert_eq!(hooks["PostToolUse"][0].matcher, None);
    let can_use = requests
        .iter()
        .find_map(|r| match r {
            ControlRequest::CanUseTool(c) => Some(c),
            _ => None,
        })
        .unwrap();
    assert_eq!(can_use.tool_name, "Bash");
    assert_eq!(can_use.input["command"], "echo ctl");
    assert_eq!(can_use.decision_reason.as_deref(), Some("check with host"));
    assert_eq!(can_use.extra["decision_reason_type"], "hook");
    assert!(requests.iter().any(|r| matches!(r,
        ControlRequest::SetPermissionMode(m) if m.mode == "acceptEdits")));
    assert!(requests.iter().any(|r| matches!(r,
        ControlRequest::SetModel(m) if m.model.as_deref() == Some("claude-opus-4-1"))));
    let suggestions = control_frames("claude-code/control_protocol_permission_suggestions.jsonl");
    let answer = suggestions
        .into_iter()
        .filter_map(|f| match ControlFrame::from_value(f).unwrap() {
            ControlFrame::ControlResponse(r) => r.response.into_result().ok(),
            _ => None,
        })
        .find(|v| v.get("behavior").is_some())
        .unwrap();
    let CanUseToolAnswer::Allow(allow) = CanUseToolAnswer::read(answer) else {
        panic!("not an allow");
    };
    let updates = allow.updated_permissions.unwrap();
    let PermissionUpdate::AddRules(rules) = &updates[0] else {
        panic!("{updates:?}");
    };
    assert_eq!(rules.rules[0].to_text(), "Bash(touch /tmp/proj/t2)");
    assert_eq!(rules.destination, Some(Destination::LocalSettings));
}

#[test]
fn an_unknown_subtype_is_kept_and_answered_unsupported() {
    let raw = json!({"type": "control_request", "request_id": "r5",
        "request": {"subtype": "frobnicate", "level": 3, "nested": {"a": [1]}}});
    let frame = ControlFrame::from_value(raw.clone()).unwrap();
    let ControlFrame::ControlRequest(r) = &frame else {
        panic!("{frame:?}");
    };
    assert_eq!(r.request.subtype(), "frobnicate");
    assert!(matches!(&r.request, ControlRequest::Unsupported(u) if u.fields["level"] == 3));
    assert_eq!(serde_json::to_value(&frame).unwrap(), raw);
    assert_eq!(
        serde_json::to_string(&ControlFrame::unsupported("r5", r.request.subtype())).unwrap(),
        r#"{"type":"control_response","response":{"subtype":"error","request_id":"r5","error":"Unsupported control request subtype: frobnicate","error_code":"unsupported_request"}}"#
    );
}

#[test]
fn unknown_fields_of_known_requests_are_tolerated_and_kept() {
    let raw = json!({"type": "control_request", "request_id": "r1",
        "request": {"subtype": "interrupt", "cancel_queued": true}});
    let frame = ControlFrame::from_value(raw.clone()).unwrap();
    assert!(matches!(&frame, ControlFrame::ControlRequest(RequestFrame {
        request: ControlRequest::Interrupt(p), .. }) if p.extra["cancel_queued"] == true));
    assert_eq!(serde_json::to_value(&frame).unwrap(), raw);
    let raw = json!({"type": "control_request", "request_id": "r2", "request": {
        "subtype": "initialize", "hooks": null, "title": "t", "promptSuggestions": true,
        "systemPrompt": ["a", "", "b"], "sdkMcpServers": ["calc"]}});
    let ControlFrame::ControlRequest(RequestFrame {
        request: ControlRequest::Initialize(init),
        ..
    }) = ControlFrame::from_value(raw).unwrap()
    else {
        panic!("not an initialize");
    };
    assert_eq!(init.hooks, None);
    assert_eq!(init.extra["title"], "t");
    assert_eq!(
        init.system_prompt.and_then(|p| p.text()).as_deref(),
        Some("a\n\nb")
    );
    assert_eq!(init.sdk_mcp_servers.unwrap(), ["calc"]);
}

#[test]
fn a_malformed_request_is_answered_with_an_error_naming_its_id() {
    let raw = json!({"type": "control_request", "request_id": "r9",
        "request": {"subtype": "set_permission_mode", "mode": 5}});
    let err = ControlFrame::from_value(raw).unwrap_err();
    assert_eq!(
        err,
        FrameError::Request {
            request_id: Some("r9".into()),
            message:
                "invalid set_permission_mode request: invalid type: integer `5`, expected a string"
                    .into(),
        }
    );
    assert_eq!(
        serde_json::to_string(&err.reply().unwrap()).unwrap(),
        r#"{"type":"control_response","response":{"subtype":"error","request_id":"r9","error":"invalid set_permission_mode request: invalid type: integer `5`, expected a string"}}"#
    );
    let missing = ControlFrame::from_value(json!({"type": "control_request",
        "request_id": "r10", "request": {"subtype": "rewind_files"}}))
    .unwrap_err();
    assert!(
        missing
            .message()
            .contains("missing field `user_message_id`"),
        "{missing}"
    );
    assert!(missing.reply().is_some());
    for (raw, why) in [
        (
            json!({"type": "control_request", "request_id": "r11", "request": {}}),
            "needs a subtype",
        ),
        (
            json!({"type": "control_request", "request_id": "r12", "request": {"subtype": 7}}),
            "must be a string",
        ),
        (
            json!({"type": "control_request", "request_id": "r13", "request": "interrupt"}),
            "needs a request object",
        ),
    ] {
        let err = ControlFrame::from_value(raw).unwrap_err();
        assert!(err.message().contains(why), "{err}");
        assert!(matches!(
            err.reply(),
            Some(ControlFrame::ControlResponse(_))
        ));
    }
    // Without an id there is nothing to answer.
    let err = ControlFrame::from_value(json!({"type": "control_request",
        "request": {"subtype": "interrupt"}}))
    .unwrap_err();
    assert!(matches!(
        err,
        FrameError::Request {
            request_id: None,
            ..
        }
    ));
    assert_eq!(err.reply(), None);
    let err = ControlFrame::from_value(json!({"type": "control_request",
        "request_id": 4, "request": {"subtype": "interrupt"}}))
    .unwrap_err();
    assert_eq!(err.reply(), None);
}

#[test]
fn responses_read_success_error_and_broken_ones() {
    let ok = ControlFrame::from_value(json!({"type": "control_response",
        "response": {"subtype": "success", "request_id": "a"}}))
    .unwrap();
    let ControlFrame::ControlResponse(r) = ok else {
        panic!()
    };
    assert_eq!(r.response.request_id(), "a");
    assert_eq!(r.response.into_result(), Ok(json!({})));
    let err = ControlFrame::from_value(json!({"type": "control_response",
        "response": {"subtype": "error", "request_id": "b", "error": "boom", "x": 1}}))
    .unwrap();
    let ControlFrame::ControlResponse(r) = err else {
        panic!()
    };
    assert_eq!(r.response.into_result(), Err("boom".into()));
    let broken = ControlFrame::from_value(json!({"type": "control_response",
        "response": {"subtype": "maybe", "request_id": "c"}}))
    .unwrap_err();
    assert!(matches!(&broken, FrameError::Response { request_id: Some(id), .. } if id == "c"));
    assert_eq!(broken.reply(), None, "a response is never answered");
    let no_id = ControlFrame::from_value(json!({"type": "control_response",
        "response": {"subtype": "success"}}))
    .unwrap_err();
    assert_eq!(
        no_id.message(),
        "a control_response needs response.request_id"
    );
    assert!(ControlFrame::from_value(json!({"type": "user"})).is_err());
    assert!(ControlFrame::from_value(json!(["control_request"])).is_err());
    assert_eq!(
        ControlFrame::from_value(json!({"type": "control_cancel_request", "request_id": "q"}))
            .unwrap(),
        ControlFrame::cancel("q")
    );
}

#[test]
fn frames_skiff_writes_are_byte_for_byte_what_the_sdks_read() {
    let line = |f: &ControlFrame| serde_json::to_string(f).unwrap();
    assert_eq!(
        line(&ControlFrame::success("r1", json!({"mode": "plan"}))),
        r#"{"type":"control_response","response":{"subtype":"success","request_id":"r1","response":{"mode":"plan"}}}"#
    );
    assert_eq!(
        line(&ControlFrame::error("r2", "no", None)),
        r#"{"type":"control_response","response":{"subtype":"error","request_id":"r2","error":"no"}}"#
    );
    assert_eq!(
        line(&ControlFrame::cancel("r3")),
        r#"{"type":"control_cancel_request","request_id":"r3"}"#
    );
    let hook = ControlFrame::request(
        "h1",
        ControlRequest::HookCallback(HookCallback {
            callback_id: "hook_0".into(),
            input: json!({"hook_event_name": "Stop"}),
            tool_use_id: Some("u".into()),
            extra: JsonMap::new(),
        }),
    );
    assert_eq!(
        line(&hook),
        r#"{"type":"control_request","request_id":"h1","request":{"subtype":"hook_callback","callback_id":"hook_0","input":{"hook_event_name":"Stop"},"tool_use_id":"u"}}"#
    );
    let mcp = ControlFrame::request(
        "mcp_1_ab",
        ControlRequest::McpMessage(McpMessage {
            server_name: "calc".into(),
            message: json!({"method": "tools/list"}),
            extra: JsonMap::new(),
        }),
    );
    assert_eq!(
        line(&mcp),
        r#"{"type":"control_request","request_id":"mcp_1_ab","request":{"subtype":"mcp_message","server_name":"calc","message":{"method":"tools/list"}}}"#
    );
    let ask = ControlFrame::request(
        "a1",
        ControlRequest::CanUseTool(Box::new(CanUseTool {
            tool_name: "Write".into(),
            display_name: Some("Write".into()),
            input: json!({"file_path": "a.txt"}),
            permission_suggestions: Some(vec![
                PermissionUpdate::AddRules(RulesUpdate {
                    rules: vec![
                        RuleValue::from_text("Write(a.txt)"),
                        RuleValue::from_text("Read"),
                    ],
                    behavior: Some(RuleBehavior::Allow),
                    destination: Some(Destination::LocalSettings),
                    extra: JsonMap::new(),
                }),
                PermissionUpdate::SetMode(ModeUpdate {
                    mode: "acceptEdits".into(),
                    destination: Some(Destination::Session),
                    extra: JsonMap::new(),
                }),
            ]),
            tool_use_id: Some("toolu_1".into()),
            blocked_path: Some("/w/a.txt".into()),
            description: None,
            decision_reason: Some("ask rule".into()),
            mcp_server: None,
            extra: JsonMap::new(),
        })),
    );
    assert_eq!(
        line(&ask),
        r#"{"type":"control_request","request_id":"a1","request":{"subtype":"can_use_tool","tool_name":"Write","display_name":"Write","input":{"file_path":"a.txt"},"permission_suggestions":[{"type":"addRules","rules":[{"toolName":"Write","ruleContent":"a.txt"},{"toolName":"Read"}],"behavior":"allow","destination":"localSettings"},{"type":"setMode","mode":"acceptEdits","destination":"session"}],"tool_use_id":"toolu_1","blocked_path":"/w/a.txt","decision_reason":"ask rule"}}"#
    );
}

#[test]
fn a_can_use_tool_answer_that_is_not_a_clean_allow_denies() {
    let allow = CanUseToolAnswer::read(json!({"behavior": "allow", "updatedInput": {"a": 1},
        "updatedPermissions": [{"type": "addDirectories", "directories": ["/x"]},
                               {"type": "teleport"}, {"type": "addRules", "rules": 5}]}));
    let CanUseToolAnswer::Allow(a) = allow else {
        panic!("{allow:?}")
    };
    let updates = a.updated_permissions.unwrap();
    assert!(matches!(updates[0], PermissionUpdate::AddDirectories(_)));
    assert_eq!(updates[1].type_name(), Some("teleport"));
    assert!(matches!(updates[2], PermissionUpdate::Unknown(_)));
    assert_eq!(updates[2].type_name(), Some("addRules"));
    for garbage in [
        json!({"behavior": "maybe"}),
        json!({}),
        json!("allow"),
        json!({"behavior": "allow", "updatedPermissions": "all"}),
    ] {
        assert!(
            matches!(
                CanUseToolAnswer::read(garbage.clone()),
                CanUseToolAnswer::Deny(Deny { message: None, .. })
            ),
            "{garbage}"
        );
    }
    let deny =
        CanUseToolAnswer::read(json!({"behavior": "deny", "message": "no", "interrupt": true}));
    assert!(
        matches!(deny, CanUseToolAnswer::Deny(Deny { message: Some(m), interrupt: Some(true), .. }) if m == "no")
    );
}
