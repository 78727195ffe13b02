// CopilotKit's BuiltInAgent served by its own runtime (@copilotkit/runtime
// 1.75's CopilotRuntime and Node handler), which holds two agents, each
// with its AG-UI endpoint at POST /api/copilotkit/agent/<name>/run: demo
// and helper. Their models are the AI SDK's scripted mock from ai/test (no
// LLM, no network); demo follows the script of the built-in demo agents
// (demo/script.go), so that aap2agui's tests (bridge/aap2agui/
// copilotkit_test.go) can run it as an upstream, and helper has other tools
// and words, so that a test can tell which of the runtime's agents answered
// (bridge/aap2agui/agents_frameworks_test.go).
//
// It listens on 127.0.0.1 on a free port and prints "LISTENING <port>" on
// stdout. demo's script looks at the newest message; for a user message the
// first rule that matches wins (case-insensitively):
//
//   fail               "Starting…", then the model fails: RUN_ERROR
//   think              reasoning "Thinking about: <message>", then
//                      "Done thinking."
//   weather in <place> the client tool get_weather {"location": <place>} if
//                      the run declares it (then "The weather in <place>:
//                      <result>"); else says it cannot
//   search <query>     the agent's own tool web_search, run at once: its
//                      result, then "Here is what I found. <result>"
//   delete <name>      the tool delete_file, declared "interrupt: true":
//                      BuiltInAgent pauses the run with an interrupt whose
//                      id is the toolCallId, and hands the model the resume
//                      payload as the call's result; then "Deleted <name>."
//                      or "Not deleted: <reason>"
//   history            "History: tool calls: <names>"
//   anything else      "You said: <message>"
//
// helper's script, likewise:
//
//   search <query>     the agent's own tool doc_lookup, run at once: its
//                      result, then "From the docs: <result>"
//   archive <name>     the tool archive_file, declared "interrupt: true"
//                      (as demo's delete_file); then "Archived <name>." or
//                      "Not archived: <reason>"
//   anything else      "Helper here. You said: <message>"
//
// Text and tool arguments are streamed in several deltas.
import http from "node:http";

process.env.COPILOTKIT_TELEMETRY_DISABLED = "true";
process.env.DO_NOT_TRACK = "1";

const { BuiltInAgent, CopilotRuntime, createCopilotRuntimeHandler, defineTool } = await import("@copilotkit/runtime/v2");
const { createCopilotNodeHandler } = await import("@copilotkit/runtime/v2/node");
const { MockLanguageModelV3 } = await import("ai/test");
const { simulateReadableStream } = await import("ai");
const { z } = await import("zod");

const NO_WEATHER_TOOL = "I cannot check the weather: the application did not give me a get_weather tool.";

function chunks(s) {
  const out = s.split(/(?<= )/).filter((w) => w !== "");
  const runes = [...s];
  if (out.length >= 3 || runes.length < 3) return out;
  const size = Math.floor((runes.length + 2) / 3);
  return [runes.slice(0, size).join(""), runes.slice(size, 2 * size).join(""), runes.slice(2 * size).join("")];
}

function argChunks(s) {
  if (s.length < 3) return [s];
  const a = Math.floor(s.length / 3), b = Math.floor((2 * s.length) / 3);
  return [s.slice(0, a), s.slice(a, b), s.slice(b)];
}

const cleanArg = (s) => s.trim().replace(/[?!.,;: ]+$/, "");

function textOf(content) {
  if (typeof content === "string") return content;
  return (content ?? []).filter((p) => p.type === "text").map((p) => p.text).join("");
}

function outputValue(output) {
  if (output == null) return "";
  if (output.type === "text" || output.type === "error-text") return output.value;
  return output.value;
}

const asText = (v) => (typeof v === "string" ? v : JSON.stringify(v));

function inputOf(part) {
  return typeof part.input === "string" ? JSON.parse(part.input) : (part.input ?? {});
}

let calls = 0, texts = 0;
const usage = { inputTokens: { total: 1, noCache: 1 }, outputTokens: { total: 1, text: 1 } };

// streamParts returns the parts of one model response and the means to add
// to them: say (a text), call (a tool call), finish.
function streamParts() {
  const parts = [];
  const say = (s) => {
    const id = "ck-text-" + ++texts;
    parts.push({ type: "text-start", id });
    for (const delta of chunks(s)) parts.push({ type: "text-delta", id, delta });
    parts.push({ type: "text-end", id });
  };
  const call = (toolName, input) => {
    const id = `ck-call-${++calls}`;
    const args = JSON.stringify(input);
    parts.push({ type: "tool-input-start", id, toolName });
    for (const delta of argChunks(args)) parts.push({ type: "tool-input-delta", id, delta });
    parts.push({ type: "tool-input-end", id });
    parts.push({ type: "tool-call", toolCallId: id, toolName, input: args });
  };
  const finish = (reason) => parts.push({ type: "finish", finishReason: { unified: reason, raw: undefined }, usage });
  return { parts, say, call, finish };
}

// toolResultOf reads the result the newest (tool) message of the prompt
// carries: its value, and the name and input of the call it answers.
function toolResultOf(prompt) {
  const result = prompt[prompt.length - 1].content.find((p) => p.type === "tool-result");
  let callPart;
  for (const m of prompt) {
    if (m.role !== "assistant" || typeof m.content === "string") continue;
    for (const p of m.content) if (p.type === "tool-call" && p.toolCallId === result.toolCallId) callPart = p;
  }
  return { value: outputValue(result.output), name: callPart?.toolName ?? result.toolName, input: callPart ? inputOf(callPart) : {} };
}

// lastUserText is the text of the newest user message of the prompt.
function lastUserText(prompt) {
  for (let i = prompt.length - 1; i >= 0; i--) {
    if (prompt[i].role === "user") return textOf(prompt[i].content);
  }
  return "";
}

function respond(prompt, tools) {
  const { parts, say, call, finish } = streamParts();

  const last = prompt[prompt.length - 1];
  if (last.role === "tool") {
    const { value, name, input } = toolResultOf(prompt);
    switch (name) {
      case "get_weather":
        say(`The weather in ${input.location}: ${asText(value)}`);
        break;
      case "web_search":
        say("Here is what I found. " + asText(value));
        break;
      case "delete_file":
        say(value?.approved === true ? `Deleted ${input.name}.` : `Not deleted: ${value?.reason || value?.status || "no reason given"}`);
        break;
      default:
        say("Thanks, I got the result: " + asText(value));
    }
    finish("stop");
    return parts;
  }

  const message = lastUserText(prompt);
  const lower = message.toLowerCase();
  let m;
  if (lower.includes("fail")) {
    say("Starting…");
    parts.push({ type: "error", error: new Error("The demo agent failed on purpose.") });
  } else if (lower.includes("think")) {
    const id = "ck-reasoning-" + ++texts;
    parts.push({ type: "reasoning-start", id });
    for (const delta of chunks("Thinking about: " + message)) parts.push({ type: "reasoning-delta", id, delta });
    parts.push({ type: "reasoning-end", id });
    say("Done thinking.");
    finish("stop");
  } else if ((m = /weather in (.*)/i.exec(message)) && cleanArg(m[1]) !== "") {
    if ((tools ?? []).some((t) => t.name === "get_weather")) {
      call("get_weather", { location: cleanArg(m[1]) });
      finish("tool-calls");
    } else {
      say(NO_WEATHER_TOOL);
      finish("stop");
    }
  } else if ((m = /search (.*)/i.exec(message)) && cleanArg(m[1]) !== "") {
    call("web_search", { query: cleanArg(m[1]) });
    finish("tool-calls");
  } else if ((m = /delete (.*)/i.exec(message)) && cleanArg(m[1]) !== "") {
    call("delete_file", { name: cleanArg(m[1]) });
    finish("tool-calls");
  } else if (lower.includes("history")) {
    const names = [];
    for (const p of prompt) {
      if (p.role === "assistant" && Array.isArray(p.content)) {
        for (const c of p.content) if (c.type === "tool-call") names.push(c.toolName);
      }
    }
    say(`History: tool calls: ${names.join(", ") || "none"}.`);
    finish("stop");
  } else {
    say("You said: " + message);
    finish("stop");
  }
  return parts;
}

// respondHelper is helper's script.
function respondHelper(prompt) {
  const { parts, say, call, finish } = streamParts();
  if (prompt[prompt.length - 1].role === "tool") {
    const { value, name, input } = toolResultOf(prompt);
    if (name === "archive_file") {
      say(value?.approved === true ? `Archived ${input.name}.` : `Not archived: ${value?.reason || value?.status || "no reason given"}`);
    } else {
      say("From the docs: " + asText(value));
    }
    finish("stop");
    return parts;
  }
  const message = lastUserText(prompt);
  let m;
  if ((m = /search (.*)/i.exec(message)) && cleanArg(m[1]) !== "") {
    call("doc_lookup", { query: cleanArg(m[1]) });
    finish("tool-calls");
  } else if ((m = /archive (.*)/i.exec(message)) && cleanArg(m[1]) !== "") {
    call("archive_file", { name: cleanArg(m[1]) });
    finish("tool-calls");
  } else {
    say("Helper here. You said: " + message);
    finish("stop");
  }
  return parts;
}

const scripted = (respondTo) =>
  new MockLanguageModelV3({
    doStream: async ({ prompt, tools }) => ({
      stream: simulateReadableStream({ chunks: respondTo(prompt, tools), initialDelayInMs: null, chunkDelayInMs: null }),
    }),
  });
const model = scripted(respond);

const webSearch = defineTool({
  name: "web_search",
  description: "Search the web.",
  parameters: z.object({ query: z.string() }),
  execute: async ({ query }) => `Results for ${query}: the demo index has three pages about ${query}.`,
});

const deleteFile = defineTool({
  name: "delete_file",
  description: "Delete a file, once the user approves it.",
  parameters: z.object({ name: z.string() }),
  interrupt: true,
  interruptMessage: "Delete the file?",
});

const docLookup = defineTool({
  name: "doc_lookup",
  description: "Look a query up in the documentation.",
  parameters: z.object({ query: z.string() }),
  execute: async ({ query }) => `Docs for ${query}: two pages mention ${query}.`,
});

const archiveFile = defineTool({
  name: "archive_file",
  description: "Archive a file, once the user approves it.",
  parameters: z.object({ name: z.string() }),
  interrupt: true,
  interruptMessage: "Archive the file?",
});

const runtime = new CopilotRuntime({
  agents: {
    demo: new BuiltInAgent({ model, tools: [webSearch, deleteFile], maxSteps: 5 }),
    helper: new BuiltInAgent({ model: scripted(respondHelper), tools: [docLookup, archiveFile], maxSteps: 5 }),
  },
});
const handler = createCopilotNodeHandler(createCopilotRuntimeHandler({ runtime, basePath: "/api/copilotkit", activateChannels: false }));

const server = http.createServer((req, res) => {
  handler(req, res).catch((err) => {
    console.error(err);
    if (!res.headersSent) res.writeHead(500);
    res.end();
  });
});

server.listen(0, "127.0.0.1", () => {
  console.log(`LISTENING ${server.address().port}`);
});
