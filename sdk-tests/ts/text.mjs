// (a) Text only: query() yields init, the scripted text and a success result.
import { finish, options, run, sdk } from "./common.mjs";

await run(async () => {
  const messages = [];
  for await (const m of sdk.query({ prompt: "Say hello.", options: options() })) messages.push(m);
  finish("text", messages);
});
