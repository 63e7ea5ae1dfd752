// (d) An SDK PreToolUse hook (matcher "Bash") blocks the tool with a reason.
import { existsSync } from "node:fs";
import { finish, options, run, sdk } from "./common.mjs";

await run(async () => {
  const calls = [];
  const blockBash = async (input, toolUseId) => {
    calls.push({
      hook_event_name: input.hook_event_name,
      tool_name: input.tool_name,
      input: input.tool_input,
      tool_use_id: toolUseId,
    });
    return {
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: "blocked by the sdk-tests hook",
      },
    };
  };
  const opts = options({
    allowedTools: ["Bash"],
    hooks: { PreToolUse: [{ matcher: "Bash", hooks: [blockBash] }] },
  });
  const messages = [];
  for await (const m of sdk.query({ prompt: "Create hooked.txt.", options: opts })) messages.push(m);
  const files = ["hooked.txt"].filter((f) => existsSync(f));
  finish("hook", messages, { calls, files });
});
