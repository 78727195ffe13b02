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
import { argOf, lastUserText, modelParts, scriptAnswer, toolResultOf } from "../agents/script.mjs";
import { serve } from "./serve.mjs";

process.env.COPILOTKIT_TELEMETRY_DISABLED = "true";
process.env.DO_NOT_TRACK = "1";

const { BuiltInAgent, CopilotRuntime, defineTool } = await import("@copilotkit/runtime/v2");
const { MockLanguageModelV3 } = await import("ai/test");
const { simulateReadableStream } = await import("ai");
const { z } = await import("zod");

let calls = 0, texts = 0;

// streamParts returns the parts of one model response and the means to add
// to them (modelParts).
const streamParts = () => modelParts((kind) => (kind === "call" ? `ck-call-${++calls}` : `ck-${kind}-${++texts}`));

// respond is demo's script.
const respond = (prompt, tools) =>
  scriptAnswer(prompt, tools, streamParts(), {
    verb: "delete",
    tool: "delete_file",
    param: "name",
    said: ({ output, input }) => {
      const value = output?.value;
      return value?.approved === true ? `Deleted ${input.name}.` : `Not deleted: ${value?.reason || value?.status || "no reason given"}`;
    },
  });

// respondHelper is helper's script.
function respondHelper(prompt) {
  const { parts, say, call, finish } = streamParts();
  if (prompt[prompt.length - 1].role === "tool") {
    const { output, text, name, input } = toolResultOf(prompt);
    const value = output?.value;
    if (name === "archive_file") {
      say(value?.approved === true ? `Archived ${input.name}.` : `Not archived: ${value?.reason || value?.status || "no reason given"}`);
    } else {
      say("From the docs: " + text);
    }
    finish("stop");
    return parts;
  }
  const message = lastUserText(prompt);
  let arg;
  if ((arg = argOf("search", message)) !== "") {
    call("doc_lookup", { query: arg });
    finish("tool-calls");
  } else if ((arg = argOf("archive", message)) !== "") {
    call("archive_file", { name: arg });
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
serve(runtime, (port) => console.log(`LISTENING ${port}`));
