// (j) `maxBudgetUsd`: the first call costs more than the budget, so the run ends with
// error_max_budget_usd and its Bash call is answered as not run (budget.txt is never created).
import { readdirSync } from "node:fs";
import { finish, options, run, sdk, user } from "./common.mjs";

await run(async () => {
  let close;
  const closed = new Promise((resolve) => (close = resolve));
  async function* input() {
    yield user("Create budget.txt.");
    await closed;
  }
  const opts = options({ maxBudgetUsd: 0.05, permissionMode: "bypassPermissions" });
  const q = sdk.query({ prompt: input(), options: opts });
  const messages = [];
  for await (const m of q) {
    messages.push(m);
    if (m.type === "result") break;
  }
  close();
  const files = readdirSync(".").filter((f) => f.endsWith(".txt")).sort();
  finish("budget", messages, { files });
});
