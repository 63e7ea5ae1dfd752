"""(i) `output_format`: the StructuredOutput tool with the given schema; an invalid input goes
back to the model as an error, the valid one ends the run as `structured_output`."""

from common import finish, options, run

from claude_agent_sdk import query

SCHEMA = {
    "type": "object",
    "properties": {"count": {"type": "integer"}, "names": {"type": "array", "items": {"type": "string"}}},
    "required": ["count"],
}


async def main() -> None:
    opts = options(output_format={"type": "json_schema", "schema": SCHEMA})
    messages = [m async for m in query(prompt="How many files?", options=opts)]
    finish("structured", messages)


run(main)
