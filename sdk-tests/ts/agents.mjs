// (h) `agents`: a subagent type the SDK defines (sent in `initialize`) is listed in the init frame
// and the server info, and the Task tool runs it with its prompt, tools and model (the mock
// server shows the subagent's request).
import { finish, options, run, sdk, user } from "./common.mjs";

await run(async () => {
  let close;
  const closed = new Promise((resolve) => (close = resolve));
  async function* input() {
    yield user("Have the reviewer look at main.rs.");
    await closed;
  }
  const agents = {
    "code-reviewer": {
      description: "Reviews code changes for bugs.",
      prompt: "You are a strict code reviewer.",
      tools: ["Read"],
      model: "haiku",
    },
  };
  const q = sdk.query({ prompt: input(), options: options({ agents }) });
  const info = await q.initializationResult();
  const messages = [];
  for await (const m of q) {
    messages.push(m);
    if (m.type === "result") break;
  }
  close();
  finish("agents", messages, {
    server_agents: (info.agents ?? []).map((a) => a.name),
    server_commands: (info.commands ?? []).map((c) => c.name),
    server_version: info.claude_code_version ?? null,
  });
});
