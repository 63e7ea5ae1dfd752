"""(j) `max_budget_usd`: the first call costs more than the budget, so the run ends with
error_max_budget_usd and its Bash call is answered as not run (budget.txt is never created)."""

import os

from common import finish, options, run

from claude_agent_sdk import ClaudeSDKClient


async def main() -> None:
    messages = []
    opts = options(max_budget_usd=0.05, permission_mode="bypassPermissions")
    async with ClaudeSDKClient(options=opts) as client:
        await client.query("Create budget.txt.")
        messages += [m async for m in client.receive_response()]
    finish("budget", messages, files=sorted(f for f in os.listdir(".") if f.endswith(".txt")))


run(main)
