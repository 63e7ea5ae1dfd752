"""(a) Text only: query() yields init, the scripted text and a success result."""

from common import finish, options, run

from claude_agent_sdk import query


async def main() -> None:
    messages = [m async for m in query(prompt="Say hello.", options=options())]
    finish("text", messages)


run(main)
