"""(k) `allowed_tools=["Bash(echo:*)"]` without can_use_tool is an allow list: `touch` is denied
(even where the sandbox would run it without asking), `echo` runs."""

import os

from common import finish, options, run

from claude_agent_sdk import query


async def main() -> None:
    opts = options(allowed_tools=["Bash(echo:*)"])
    messages = [m async for m in query(prompt="Touch a file, then echo.", options=opts)]
    finish("allowlist", messages, files=sorted(f for f in os.listdir(".") if f.endswith(".txt")))


run(main)
