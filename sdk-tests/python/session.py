"""(f) ClaudeSDKClient with two queries in one session: both results carry the same session_id."""

from common import finish, options, run

from claude_agent_sdk import ClaudeSDKClient


async def main() -> None:
    messages = []
    async with ClaudeSDKClient(options=options()) as client:
        await client.query("First question.")
        messages += [m async for m in client.receive_response()]
        await client.query("Second question.")
        messages += [m async for m in client.receive_response()]
    finish("session", messages)


run(main)
