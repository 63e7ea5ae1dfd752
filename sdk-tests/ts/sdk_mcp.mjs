// (g) An in-process SDK MCP server (createSdkMcpServer) whose add tool the script calls.
import { finish, options, run, sdk, z } from "./common.mjs";

await run(async () => {
  const calls = [];
  const add = sdk.tool("add", "Add two numbers", { a: z.number(), b: z.number() }, async (args) => {
    calls.push(args);
    return { content: [{ type: "text", text: String(args.a + args.b) }] };
  });
  const calc = sdk.createSdkMcpServer({ name: "calc", version: "1.0.0", tools: [add] });
  const opts = options({ mcpServers: { calc }, allowedTools: ["mcp__calc__add"] });
  const messages = [];
  for await (const m of sdk.query({ prompt: "Add 2 and 3.", options: opts })) messages.push(m);
  finish("sdk_mcp", messages, { calls });
});
