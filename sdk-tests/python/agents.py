"""(h) `agents`: a subagent type the SDK defines (sent in `initialize`) is listed in the init
frame and the server info, and the Task tool runs it with its prompt, tools and model (the mock
server shows the subagent's request)."""

from common import finish, options, run

from claude_agent_sdk import AgentDefinition, ClaudeSDKClient


async def main() -> None:
    reviewer = AgentDefinition(
        description="Reviews code changes for bugs.",
        prompt="You are a strict code reviewer.",
        tools=["Read"],
        model="haiku",
    )
    messages = []
    async with ClaudeSDKClient(options=options(agents={"code-reviewer": reviewer})) as client:
        info = await client.get_server_info() or {}
        await client.query("Have the reviewer look at main.rs.")
        messages += [m async for m in client.receive_response()]
    finish(
        "agents",
        messages,
        server_agents=[a.get("name") for a in info.get("agents", [])],
        server_commands=[c.get("name") for c in info.get("commands", [])],
        server_version=info.get("claude_code_version"),
    )


run(main)
