// Shared by the TypeScript flows: the SDK loaded from its install, options pointing it at skiff,
// the checks of what the SDK's types promise, and the summary line.
//
// Environment (set by crates/skiff-cli/tests/agent_sdk.rs):
//   SKIFF_BIN            the skiff binary (pathToClaudeCodeExecutable)
//   SKIFF_SDK_SCRIPT     the model script (passed as --provider script --script FILE via extraArgs)
//   SKIFF_AGENT_SDK_TS   the npm install of package.json here (.ci/run: target/sdk-ts)
//   SKIFF_SDK_MOCK       set when the mock server serves the script instead (ANTHROPIC_BASE_URL):
//                        the test then checks the requests the model received
// The working directory is the test's temporary workspace.
//
// Each flow prints one line `SDK-SUMMARY {json}`; the Rust test asserts on it. An exception from
// the SDK ends the flow with exit code 1 and `SDK-ERROR ...`.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const modules = join(process.env.SKIFF_AGENT_SDK_TS, "node_modules");

/** Import an ESM package from the install (the flows live outside it, so `import "x"` can't). */
async function load(name) {
  const dir = join(modules, name);
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  let entry = pkg.exports?.["."] ?? pkg.module ?? pkg.main;
  while (entry && typeof entry === "object") entry = entry.import ?? entry.default;
  return import(pathToFileURL(join(dir, entry)).href);
}

export const sdk = await load("@anthropic-ai/claude-agent-sdk");
export const { z } = await load("zod");
export const sdkVersion = JSON.parse(
  readFileSync(join(modules, "@anthropic-ai/claude-agent-sdk/package.json"), "utf8"),
).version;

const warnings = [];
process.on("warning", (w) => warnings.push(`${w.name}: ${w.message}`));

/** Options running skiff with the scripted model in the current directory. */
export function options(extra = {}) {
  const { extraArgs, ...rest } = extra;
  // SKIFF_SDK_CLI_IS_CLAUDE: Claude Code itself, with the mock server at ANTHROPIC_BASE_URL (README)
  const script = process.env.SKIFF_SDK_CLI_IS_CLAUDE || process.env.SKIFF_SDK_MOCK
    ? {}
    : { provider: "script", script: process.env.SKIFF_SDK_SCRIPT };
  return {
    pathToClaudeCodeExecutable: process.env.SKIFF_BIN,
    cwd: process.cwd(),
    extraArgs: { ...script, ...extraArgs },
    stderr: (data) => process.stderr.write(`skiff stderr: ${data}`),
    ...rest,
  };
}

// Required fields of the SDK's message types (sdk.d.ts of @anthropic-ai/claude-agent-sdk): the
// TypeScript SDK hands frames through unparsed, so a frame missing one would reach an app as
// `undefined` where its types promise a value.
const REQUIRED = {
  "system/init": {
    apiKeySource: "string",
    claude_code_version: "string",
    cwd: "string",
    tools: "array",
    mcp_servers: "array",
    model: "string",
    permissionMode: "string",
    slash_commands: "array",
    output_style: "string",
    skills: "array",
    plugins: "array",
    uuid: "string",
    session_id: "string",
  },
  assistant: { message: "object", parent_tool_use_id: "string|null", uuid: "string", session_id: "string" },
  user: { message: "object", parent_tool_use_id: "string|null" },
  result: {
    subtype: "string",
    duration_ms: "number",
    duration_api_ms: "number",
    is_error: "boolean",
    num_turns: "number",
    stop_reason: "string|null",
    total_cost_usd: "number",
    usage: "object",
    modelUsage: "object",
    permission_denials: "array",
    uuid: "string",
    session_id: "string",
  },
  "result/success": { result: "string" },
  "result/error": { errors: "array" },
};

function kind(v) {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v;
}

const problems = [];

function check(m) {
  const keys = [m.type, `${m.type}/${m.subtype}`];
  if (m.type === "result" && m.subtype !== "success") keys.push("result/error");
  for (const key of keys) {
    for (const [field, want] of Object.entries(REQUIRED[key] ?? {})) {
      if (!want.split("|").includes(kind(m[field]))) {
        problems.push(`${key}: field \`${field}\` is ${JSON.stringify(m[field])}, the SDK's type says ${want}`);
      }
    }
  }
  if (m.type === "assistant") {
    for (const f of ["model", "content"]) {
      if (m.message?.[f] === undefined) problems.push(`assistant: message.${f} missing`);
    }
  }
}

function text(content) {
  if (content == null) return "";
  if (typeof content === "string") return content;
  return content
    .filter((b) => b?.type === "text")
    .map((b) => b.text)
    .join("");
}

/** The parts of a message the tests look at, the same shape as the Python flows'. */
export function describe(m) {
  check(m);
  if (m.type === "system") {
    const d = { type: "system", subtype: m.subtype };
    if (m.subtype === "init") {
      Object.assign(d, {
        session_id: m.session_id,
        claude_code_version: m.claude_code_version,
        mcp_servers: m.mcp_servers,
        tools: m.tools,
        agents: m.agents,
      });
    }
    for (const key of ["hook_event", "trigger", "original_model", "fallback_model"]) {
      if (key in m) d[key] = m[key];
    }
    return d;
  }
  if (m.type === "assistant") {
    const blocks = (m.message?.content ?? []).map((b) => {
      if (b.type === "text") return { type: "text", text: b.text };
      if (b.type === "tool_use") return { type: "tool_use", id: b.id, name: b.name, input: b.input };
      return { type: b.type };
    });
    return { type: "assistant", session_id: m.session_id, blocks };
  }
  if (m.type === "user") {
    const content = m.message?.content;
    if (typeof content === "string") return { type: "user", blocks: [{ type: "text", text: content }] };
    const blocks = (content ?? []).map((b) => {
      if (b.type === "tool_result") {
        return { type: "tool_result", tool_use_id: b.tool_use_id, content: text(b.content), is_error: !!b.is_error };
      }
      if (b.type === "text") return { type: "text", text: b.text };
      return { type: b.type };
    });
    return { type: "user", blocks };
  }
  if (m.type === "result") {
    return {
      type: "result",
      subtype: m.subtype,
      is_error: m.is_error,
      result: m.result ?? null,
      session_id: m.session_id,
      num_turns: m.num_turns,
      permission_denials: m.permission_denials ?? null,
      structured_output: m.structured_output ?? null,
      errors: m.errors ?? null,
    };
  }
  return { type: m.type, subtype: m.subtype };
}

/** Print the summary line. */
export function finish(flow, messages, extra = {}) {
  const summary = {
    flow,
    sdk: "ts",
    sdk_version: sdkVersion,
    messages: messages.map(describe),
    warnings,
    problems,
    ...extra,
  };
  console.log(`SDK-SUMMARY ${JSON.stringify(summary)}`);
}

/** A user message as the streaming input wants it. */
export function user(textContent) {
  return { type: "user", message: { role: "user", content: textContent }, parent_tool_use_id: null, session_id: "" };
}

/** Run an async flow; an exception is exit code 1 with `SDK-ERROR`. */
export async function run(main) {
  try {
    await main();
    process.exit(0);
  } catch (e) {
    console.error(e);
    console.log(`SDK-ERROR ${e?.name}: ${e?.message}`);
    process.exit(1);
  }
}
