// (e) Query.interrupt() during a long Bash (`sleep 30`) returns at once; the turn ends in an error
// result well before the command would have finished.
import { finish, options, run, sdk, user } from "./common.mjs";

await run(async () => {
  let close;
  const closed = new Promise((resolve) => (close = resolve));
  async function* input() {
    yield user("Wait for 30 seconds.");
    await closed;
  }
  const q = sdk.query({ prompt: input(), options: options({ allowedTools: ["Bash"] }) });
  const messages = [];
  const timing = {};
  let started;
  for await (const m of q) {
    messages.push(m);
    if (m.type === "assistant" && m.message.content.some((b) => b.type === "tool_use")) {
      started = performance.now();
      await new Promise((r) => setTimeout(r, 1000)); // let the command start
      const t0 = performance.now();
      await q.interrupt();
      timing.interrupt_ms = Math.round(performance.now() - t0);
    }
    if (m.type === "result") {
      if (started !== undefined) timing.tool_use_to_result_ms = Math.round(performance.now() - started);
      break;
    }
  }
  close();
  finish("interrupt", messages, timing);
});
