// A Mastra agent served as an AG-UI agent the way @ag-ui/mastra is meant
// to be used: an @mastra/core Agent with its own tools, wrapped in
// @ag-ui/mastra's MastraAgent, each run's events written with @ag-ui/encoder
// on a node:http server. The model is a scripted mock from the AI SDK's
// ai/test (no LLM, no network) that follows the script of the built-in demo
// agents (demo/script.go), so that aap2agui's tests
// (bridge/aap2agui/mastra_test.go) can run a real framework as an upstream.
//
// It listens on 127.0.0.1 on a free port and prints "LISTENING <port>" on
// stdout. The script looks at the newest user message, case-insensitively;
// the first rule that matches wins:
//
//   fail               "Starting…", then the model fails: RUN_ERROR
//   think              reasoning "Thinking about: <message>", then
//                      "Done thinking."
//   weather in <place> the client tool get_weather {"location": <place>} if
//                      the run declares it (then "The weather in <place>:
//                      <result>"); else says it cannot
//   search <query>     the agent's own tool web_search, which Mastra runs
//                      inline whatever the session says (it never reads
//                      forwardedProps): its result, then "Here is what I
//                      found. <result>"
//   publish <text>     the agent's tool publish, which suspends for the
//                      user's approval (resume payload {approved, reason});
//                      after the resume "Published: <text>" or "Not
//                      published: <reason>"
//   history            "History: tool calls: <names>", the tool calls of the
//                      conversation as the model is given them (what Mastra
//                      made of the history it was sent)
//   anything else      "You said: <message>"
//
// Text and tool arguments are streamed in several deltas.
//
// @mastra/core 1.71.0 (and some of its dependencies) declare Node >= 22 in
// their engines; what this agent uses runs on Node 20, the project's Node
// (npm ci only warns).
import { Agent } from "@mastra/core/agent";
import { Mastra } from "@mastra/core/mastra";
import { createTool } from "@mastra/core/tools";
import { InMemoryStore } from "@mastra/core/storage";
import { MockLanguageModelV3 } from "ai/test";
import { simulateReadableStream } from "ai";
import { z } from "zod";
import { MastraAgent } from "@ag-ui/mastra";
import { EventEncoder } from "@ag-ui/encoder";
import { modelParts, scriptAnswer } from "../agents/script.mjs";
import { serveAGUI } from "../agents/serve.mjs";

let calls = 0;

// respond is the scripted model: the stream parts for one model call.
function respond(prompt, tools) {
  let n = 0;
  const newID = (kind) => (kind === "call" ? `mastra-call-${++calls}` : kind === "text" ? `text-${++n}` : "reasoning-1");
  return scriptAnswer(prompt, tools, modelParts(newID), {
    verb: "publish",
    tool: "publish",
    param: "text",
    said: ({ output, input }) => {
      const r = output?.value ?? {};
      return r.published ? `Published: ${input.text}` : `Not published: ${r.reason || "no reason given"}`;
    },
  });
}

const model = new MockLanguageModelV3({
  doStream: async ({ prompt, tools }) => ({
    stream: simulateReadableStream({ chunks: respond(prompt, tools), initialDelayInMs: null, chunkDelayInMs: null }),
  }),
});

const webSearch = createTool({
  id: "web_search",
  description: "Search the web.",
  inputSchema: z.object({ query: z.string() }),
  execute: async ({ query }) => `Results for ${query}: the demo index has three pages about ${query}.`,
});

const publish = createTool({
  id: "publish",
  description: "Publish a text, once the user approves it.",
  inputSchema: z.object({ text: z.string() }),
  suspendSchema: z.object({ message: z.string() }),
  resumeSchema: z.object({ approved: z.boolean(), reason: z.string().optional() }),
  execute: async ({ text }, context) => {
    const agent = context?.agent;
    if (!agent?.resumeData) {
      await agent.suspend({ message: `Publish "${text}"?` });
      return undefined;
    }
    const { approved, reason } = agent.resumeData;
    return approved ? { published: true } : { published: false, reason: reason ?? "" };
  },
});

const mastra = new Mastra({
  agents: {
    demo: new Agent({ id: "demo", name: "demo", instructions: "You are the demo agent.", model, tools: { web_search: webSearch, publish } }),
  },
  // Suspended tool calls are kept here until their resume.
  storage: new InMemoryStore(),
  logger: false,
});

const server = serveAGUI(() => new MastraAgent({ agent: mastra.getAgent("demo") }), EventEncoder);

server.listen(0, "127.0.0.1", () => {
  console.log(`LISTENING ${server.address().port}`);
});
