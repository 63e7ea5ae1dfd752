// (k) `allowedTools: ["Bash(echo:*)"]` without canUseTool is an allow list: `touch` is denied (even
// where the sandbox would run it without asking), `echo` runs.
import { readdirSync } from "node:fs";
import { finish, options, run, sdk } from "./common.mjs";

await run(async () => {
  const messages = [];
  const opts = options({ allowedTools: ["Bash(echo:*)"] });
  for await (const m of sdk.query({ prompt: "Touch a file, then echo.", options: opts })) messages.push(m);
  const files = readdirSync(".").filter((f) => f.endsWith(".txt")).sort();
  finish("allowlist", messages, { files });
});
