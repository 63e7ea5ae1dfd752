// (i) `outputFormat`: the StructuredOutput tool with the given schema; an invalid input goes back
// to the model as an error, the valid one ends the run as `structured_output`.
import { finish, options, run, sdk } from "./common.mjs";

const schema = {
  type: "object",
  properties: { count: { type: "integer" }, names: { type: "array", items: { type: "string" } } },
  required: ["count"],
};

await run(async () => {
  const messages = [];
  const opts = options({ outputFormat: { type: "json_schema", schema } });
  for await (const m of sdk.query({ prompt: "How many files?", options: opts })) messages.push(m);
  finish("structured", messages);
});
