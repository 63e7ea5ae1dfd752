"""(d) An SDK PreToolUse hook (matcher "Bash") blocks the tool with a reason."""

import os

from common import finish, options, run

from claude_agent_sdk import HookMatcher, query

CALLS: list[dict] = []


async def block_bash(hook_input, tool_use_id, context):
    CALLS.append(
        {
            "hook_event_name": hook_input.get("hook_event_name"),
            "tool_name": hook_input.get("tool_name"),
            "input": hook_input.get("tool_input"),
            "tool_use_id": tool_use_id,
        }
    )
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "blocked by the sdk-tests hook",
        }
    }


async def main() -> None:
    opts = options(
        allowed_tools=["Bash"],
        hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[block_bash])]},
    )
    messages = [m async for m in query(prompt="Create hooked.txt.", options=opts)]
    files = sorted(f for f in ("hooked.txt",) if os.path.exists(f))
    finish("hook", messages, calls=CALLS, files=files)


run(main)
