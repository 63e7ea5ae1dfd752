// (m) The smaller options: the server info's commands, a verbatim prompt (`/clear …` reaches the
// model as written), hook events in the stream, getContextUsage, and an interrupt that keeps the
// partial answer in the conversation (the mock server shows the next request).
import { finish, options, run, sdk, user } from "./common.mjs";

const hooks = { hooks: { UserPromptSubmit: [{ hooks: [{ type: "command", command: "echo prompt-hook-ran" }] }] } };

await run(async () => {
  const queue = [];
  let wake;
  async function* input() {
    for (;;) {
      while (queue.length === 0) await new Promise((r) => (wake = r));
      const next = queue.shift();
      if (next === null) return;
      yield next;
    }
  }
  const send = (m) => {
    queue.push(m);
    wake?.();
  };
  const opts = options({
    verbatimPrompts: true,
    includeHookEvents: true,
    includePartialMessages: true,
    settings: JSON.stringify(hooks),
  });
  const q = sdk.query({ prompt: input(), options: opts });
  const it = q[Symbol.asyncIterator]();
  const messages = [];
  const hookEvents = [];
  const extra = {};
  const info = await q.initializationResult();
  extra.server_commands = (info.commands ?? []).map((c) => c.name);
  // Read until the turn's result; `onEvent` sees each frame first.
  async function turn(onEvent = () => {}) {
    for (;;) {
      const { value: m, done } = await it.next();
      if (done) return;
      await onEvent(m);
      if (m.type === "stream_event") continue;
      if (m.type === "system" && m.subtype?.startsWith("hook_")) {
        hookEvents.push({ subtype: m.subtype, hook_event: m.hook_event });
        continue;
      }
      messages.push(m);
      if (m.type === "result") return;
    }
  }
  send(user("/clear the cache please"));
  await turn();
  const usage = await q.getContextUsage();
  extra.context = {
    model: usage.model,
    rawMaxTokens: usage.rawMaxTokens,
    totalTokens: usage.totalTokens,
    categories: Object.fromEntries(usage.categories.map((c) => [c.id ?? c.name, c.tokens])),
  };
  send(user("Write a long answer."));
  let interrupted = false;
  await turn(async (m) => {
    if (!interrupted && m.type === "stream_event" && m.event?.delta?.type === "text_delta") {
      interrupted = true;
      await q.interrupt();
    }
  });
  extra.interrupted = interrupted;
  send(user("Go on."));
  await turn();
  send(null);
  finish("extras", messages, { hook_events: hookEvents, ...extra });
});
