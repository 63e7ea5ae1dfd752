"""(m) The smaller options: the server info's commands, a verbatim prompt (`/clear …` reaches the
model as written), hook events in the stream, get_context_usage, and an interrupt that keeps the
partial answer in the conversation (the mock server shows the next request)."""

import json

from common import finish, options, run

from claude_agent_sdk import ClaudeSDKClient, StreamEvent, SystemMessage

HOOKS = {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo prompt-hook-ran"}]}]}}


def keep(m, hook_events: list) -> bool:
    """Stream events are left out; hook frames are kept aside (they come before init)."""
    if isinstance(m, StreamEvent):
        return False
    if isinstance(m, SystemMessage) and m.subtype.startswith("hook_"):
        hook_events.append({"subtype": m.subtype, "hook_event": m.data.get("hook_event")})
        return False
    return True


async def main() -> None:
    messages = []
    hook_events: list = []
    extra = {}
    opts = options(
        verbatim_prompts=True,
        include_hook_events=True,
        include_partial_messages=True,
        settings=json.dumps(HOOKS),
    )
    async with ClaudeSDKClient(options=opts) as client:
        info = await client.get_server_info() or {}
        extra["server_commands"] = [c.get("name") for c in info.get("commands", [])]
        await client.query("/clear the cache please")
        messages += [m async for m in client.receive_response() if keep(m, hook_events)]
        usage = await client.get_context_usage()
        extra["context"] = {
            "model": usage.get("model"),
            "rawMaxTokens": usage.get("rawMaxTokens"),
            "totalTokens": usage.get("totalTokens"),
            "categories": {c.get("id", c.get("name")): c.get("tokens") for c in usage.get("categories", [])},
        }
        await client.query("Write a long answer.")
        interrupted = False
        async for m in client.receive_response():
            if isinstance(m, StreamEvent):
                delta = m.event.get("delta", {})
                if not interrupted and delta.get("type") == "text_delta":
                    interrupted = True
                    await client.interrupt()
            if keep(m, hook_events):
                messages.append(m)
        extra["interrupted"] = interrupted
        await client.query("Go on.")
        messages += [m async for m in client.receive_response() if keep(m, hook_events)]
    finish("extras", messages, hook_events=hook_events, **extra)


run(main)
