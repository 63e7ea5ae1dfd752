"""(c) can_use_tool: the first Bash call is denied, the second allowed with a changed command."""

import os

from common import finish, options, run

from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny, query

CALLS: list[dict] = []


async def can_use_tool(tool_name, tool_input, context):
    CALLS.append({"tool_name": tool_name, "input": tool_input})
    if tool_input.get("command") == "touch denied.txt":
        return PermissionResultDeny(message="denied by the sdk-tests callback")
    return PermissionResultAllow(updated_input={**tool_input, "command": "touch changed.txt"})


async def main() -> None:
    opts = options(can_use_tool=can_use_tool)
    messages = [m async for m in query(prompt="Create the files.", options=opts)]
    files = sorted(f for f in ("denied.txt", "original.txt", "changed.txt") if os.path.exists(f))
    finish("permission", messages, calls=CALLS, files=files)


run(main)
