"""(l) Thinking, effort, betas and the fallback model reach the model's requests (the mock server
shows them); the main model is overloaded 3 times, then the fallback answers."""

from common import finish, options, run

from claude_agent_sdk import query


async def main() -> None:
    opts = options(
        model="claude-opus-4-5",
        fallback_model="claude-sonnet-4-5",
        thinking={"type": "enabled", "budget_tokens": 5000},
        effort="high",
        betas=["context-1m-2025-08-07"],
    )
    messages = [m async for m in query(prompt="Think, then answer.", options=opts)]
    finish("model_options", messages)


run(main)
