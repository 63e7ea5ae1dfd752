"""(e) ClaudeSDKClient.interrupt() during a long Bash (`sleep 30`) returns at once; the turn ends
in an error result well before the command would have finished."""

import time

from common import finish, options, run

from claude_agent_sdk import AssistantMessage, ClaudeSDKClient, ResultMessage, ToolUseBlock


async def main() -> None:
    import anyio

    messages = []
    timing: dict = {}
    async with ClaudeSDKClient(options=options(allowed_tools=["Bash"])) as client:
        await client.query("Wait for 30 seconds.")
        async for m in client.receive_response():
            messages.append(m)
            if isinstance(m, AssistantMessage) and any(
                isinstance(b, ToolUseBlock) for b in m.content
            ):
                started = time.monotonic()
                await anyio.sleep(1.0)  # let the command start
                t0 = time.monotonic()
                await client.interrupt()
                timing["interrupt_ms"] = int((time.monotonic() - t0) * 1000)
            if isinstance(m, ResultMessage) and "interrupt_ms" in timing:
                timing["tool_use_to_result_ms"] = int((time.monotonic() - started) * 1000)
    finish("interrupt", messages, **timing)


run(main)
