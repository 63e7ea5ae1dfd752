// (f) Two queries in one session (streaming input): both results carry the same session_id.
import { finish, options, run, sdk, user } from "./common.mjs";

await run(async () => {
  let next;
  let turnDone = new Promise((resolve) => (next = resolve));
  async function* input() {
    yield user("First question.");
    await turnDone;
    yield user("Second question.");
  }
  const messages = [];
  let results = 0;
  for await (const m of sdk.query({ prompt: input(), options: options() })) {
    messages.push(m);
    if (m.type === "result") {
      results += 1;
      if (results === 1) next();
      else break;
    }
  }
  finish("session", messages);
});
