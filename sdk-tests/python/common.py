"""Shared by the Python flows: options pointing the Agent SDK at skiff, and the summary line.

Environment (set by crates/skiff-cli/tests/agent_sdk.rs):
  SKIFF_BIN         the skiff binary (cli_path)
  SKIFF_SDK_SCRIPT  the model script (passed as --provider script --script FILE via extra_args)
  SKIFF_SDK_MOCK    set when the mock server serves the script instead (ANTHROPIC_BASE_URL): the
                    test then checks the requests the model received
The working directory is the test's temporary workspace.

Each flow prints one line `SDK-SUMMARY {json}` describing what the SDK parsed; the Rust test
asserts on it. An exception from the SDK ends the flow with exit code 1 and `SDK-ERROR ...`.
"""

import json
import logging
import os
import sys
import traceback
from importlib.metadata import version
from typing import Any

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ResultMessage,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)


class _Collect(logging.Handler):
    """Warnings the SDK logs (e.g. "Claude Code ... is too old to report its version")."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


WARNINGS = _Collect()
logging.getLogger("claude_agent_sdk").addHandler(WARNINGS)
STDERR: list[str] = []


def _stderr(line: str) -> None:
    STDERR.append(line)
    print(f"skiff stderr: {line}", file=sys.stderr, flush=True)


def options(**kw: Any) -> ClaudeAgentOptions:
    """Options running skiff with the scripted model in the current directory."""
    extra = {"provider": "script", "script": os.environ["SKIFF_SDK_SCRIPT"]}
    if os.environ.get("SKIFF_SDK_CLI_IS_CLAUDE") or os.environ.get("SKIFF_SDK_MOCK"):
        extra = {}  # the mock server at ANTHROPIC_BASE_URL serves the script (README)
    extra.update(kw.pop("extra_args", {}))
    return ClaudeAgentOptions(
        cli_path=os.environ["SKIFF_BIN"],
        cwd=os.getcwd(),
        extra_args=extra,
        stderr=_stderr,
        **kw,
    )


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(
        b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
    )


def describe(m: Any) -> dict[str, Any]:
    """The parts of a parsed message the tests look at, the same shape in both languages."""
    if isinstance(m, SystemMessage):
        d = {"type": "system", "subtype": m.subtype}
        if m.subtype == "init":
            d["session_id"] = m.data.get("session_id")
            d["claude_code_version"] = m.data.get("claude_code_version")
            d["mcp_servers"] = m.data.get("mcp_servers")
            d["tools"] = m.data.get("tools")
            d["agents"] = m.data.get("agents")
        for key in ("hook_event", "trigger", "original_model", "fallback_model"):
            if key in m.data:
                d[key] = m.data[key]
        return d
    if isinstance(m, AssistantMessage):
        blocks = []
        for b in m.content:
            if isinstance(b, TextBlock):
                blocks.append({"type": "text", "text": b.text})
            elif isinstance(b, ToolUseBlock):
                blocks.append({"type": "tool_use", "id": b.id, "name": b.name, "input": b.input})
            else:
                blocks.append({"type": type(b).__name__})
        return {"type": "assistant", "session_id": m.session_id, "blocks": blocks}
    if isinstance(m, UserMessage):
        if isinstance(m.content, str):
            return {"type": "user", "blocks": [{"type": "text", "text": m.content}]}
        blocks = []
        for b in m.content:
            if isinstance(b, ToolResultBlock):
                blocks.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": b.tool_use_id,
                        "content": _text(b.content),
                        "is_error": bool(b.is_error),
                    }
                )
            elif isinstance(b, TextBlock):
                blocks.append({"type": "text", "text": b.text})
            else:
                blocks.append({"type": type(b).__name__})
        return {"type": "user", "blocks": blocks}
    if isinstance(m, ResultMessage):
        return {
            "type": "result",
            "subtype": m.subtype,
            "is_error": m.is_error,
            "result": m.result,
            "session_id": m.session_id,
            "num_turns": m.num_turns,
            "permission_denials": m.permission_denials,
            "structured_output": m.structured_output,
            "errors": getattr(m, "errors", None),
        }
    return {"type": type(m).__name__}


def finish(flow: str, messages: list[Any], **extra: Any) -> None:
    """Print the summary line."""
    summary = {
        "flow": flow,
        "sdk": "python",
        "sdk_version": version("claude-agent-sdk"),
        "messages": [describe(m) for m in messages],
        "warnings": WARNINGS.messages,
        "problems": [],
        **extra,
    }
    print("SDK-SUMMARY " + json.dumps(summary), flush=True)


def run(main: Any) -> None:
    """Run an async flow; an exception is exit code 1 with `SDK-ERROR`."""
    import anyio

    try:
        anyio.run(main)
    except BaseException as e:  # noqa: BLE001 - report anything the SDK raised
        traceback.print_exc()
        print(f"SDK-ERROR {type(e).__name__}: {e}", flush=True)
        sys.exit(1)
