"""(b) A tool round: the script runs Bash `echo hi`; the SDK sees the call, its result and the end."""

from common import finish, options, run

from claude_agent_sdk import query


async def main() -> None:
    messages = [m async for m in query(prompt="Run echo hi.", options=options())]
    finish("tool", messages)


run(main)
