// (l) Thinking, effort, betas and the fallback model reach the model's requests (the mock server
// shows them); the main model is overloaded 3 times, then the fallback answers.
import { finish, options, run, sdk } from "./common.mjs";

await run(async () => {
  const messages = [];
  const opts = options({
    model: "claude-opus-4-5",
    fallbackModel: "claude-sonnet-4-5",
    thinking: { type: "enabled", budgetTokens: 5000 },
    effort: "high",
    betas: ["context-1m-2025-08-07"],
  });
  for await (const m of sdk.query({ prompt: "Think, then answer.", options: opts })) messages.push(m);
  finish("model_options", messages);
});
