// (c) canUseTool: the first Bash call is denied, the second allowed with a changed command.
import { existsSync } from "node:fs";
import { finish, options, run, sdk } from "./common.mjs";

await run(async () => {
  const calls = [];
  const canUseTool = async (toolName, input) => {
    calls.push({ tool_name: toolName, input });
    if (input.command === "touch denied.txt") {
      return { behavior: "deny", message: "denied by the sdk-tests callback" };
    }
    return { behavior: "allow", updatedInput: { ...input, command: "touch changed.txt" } };
  };
  const messages = [];
  for await (const m of sdk.query({ prompt: "Create the files.", options: options({ canUseTool }) })) {
    messages.push(m);
  }
  const files = ["changed.txt", "denied.txt", "original.txt"].filter((f) => existsSync(f));
  finish("permission", messages, { calls, files });
});
