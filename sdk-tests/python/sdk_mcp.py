"""(g) An in-process SDK MCP server (create_sdk_mcp_server) whose add tool the script calls."""

from common import finish, options, run

from claude_agent_sdk import create_sdk_mcp_server, query, tool

CALLS: list[dict] = []


@tool("add", "Add two numbers", {"a": int, "b": int})
async def add(args):
    CALLS.append(dict(args))
    return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}


async def main() -> None:
    calc = create_sdk_mcp_server(name="calc", version="1.0.0", tools=[add])
    opts = options(mcp_servers={"calc": calc}, allowed_tools=["mcp__calc__add"])
    messages = [m async for m in query(prompt="Add 2 and 3.", options=opts)]
    finish("sdk_mcp", messages, calls=CALLS)


run(main)
