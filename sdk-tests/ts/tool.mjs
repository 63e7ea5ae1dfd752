// (b) A tool round: the script runs Bash `echo hi`; the SDK sees the call, its result and the end.
import { finish, options, run, sdk } from "./common.mjs";

await run(async () => {
  const messages = [];
  for await (const m of sdk.query({ prompt: "Run echo hi.", options: options() })) messages.push(m);
  finish("tool", messages);
});
