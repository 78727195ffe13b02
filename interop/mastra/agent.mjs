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
import http from "node:http";
import { Agent } from "@mastra/core/agent";
import { Mastra } from "@mastra/core/mastra";
import { createTool } from "@mastra/core/tools";
import { InMemoryStore } from "@mastra/core/storage";
import { MockLanguageModelV3 } from "ai/test";
import { simulateReadableStream } from "ai";
import { z } from "zod";
import { MastraAgent } from "@ag-ui/mastra";
import { EventEncoder } from "@ag-ui/encoder";

const NO_WEATHER_TOOL = "I cannot check the weather: the application did not give me a get_weather tool.";

// chunks splits text the way the Go demo agent does (demo.Chunks): one
// delta per word with its following space, at least three when the text
// has three characters.
function chunks(s) {
  const out = s.split(/(?<= )/).filter((w) => w !== "");
  const runes = [...s];
  if (out.length >= 3 || runes.length < 3) return out;
  const size = Math.floor((runes.length + 2) / 3);
  return [runes.slice(0, size).join(""), runes.slice(size, 2 * size).join(""), runes.slice(2 * size).join("")];
}

// argChunks splits tool arguments into three deltas.
function argChunks(s) {
  if (s.length < 3) return [s];
  const a = Math.floor(s.length / 3), b = Math.floor((2 * s.length) / 3);
  return [s.slice(0, a), s.slice(a, b), s.slice(b)];
}

function cleanArg(s) {
  return s.trim().replace(/[?!.,;: ]+$/, "");
}

function textOf(content) {
  if (typeof content === "string") return content;
  return (content ?? []).filter((p) => p.type === "text").map((p) => p.text).join("");
}

// outputText reads a tool result as the model is given it.
function outputText(output) {
  if (output == null) return "";
  if (output.type === "text" || output.type === "error-text") return String(output.value);
  const v = output.value;
  return typeof v === "string" ? v : JSON.stringify(v);
}

function inputOf(part) {
  return typeof part.input === "string" ? JSON.parse(part.input) : (part.input ?? {});
}

let calls = 0;
const usage = { inputTokens: { total: 1, noCache: 1 }, outputTokens: { total: 1, text: 1 } };

// respond is the scripted model: the stream parts for one model call.
function respond(prompt, tools) {
  const parts = [];
  let n = 0;
  const say = (s) => {
    const id = "text-" + ++n;
    parts.push({ type: "text-start", id });
    for (const delta of chunks(s)) parts.push({ type: "text-delta", id, delta });
    parts.push({ type: "text-end", id });
  };
  const call = (toolName, input) => {
    const id = `mastra-call-${++calls}`;
    const args = JSON.stringify(input);
    parts.push({ type: "tool-input-start", id, toolName });
    for (const delta of argChunks(args)) parts.push({ type: "tool-input-delta", id, delta });
    parts.push({ type: "tool-input-end", id });
    parts.push({ type: "tool-call", toolCallId: id, toolName, input: args });
  };
  const finish = (reason) => parts.push({ type: "finish", finishReason: { unified: reason, raw: undefined }, usage });

  const last = prompt[prompt.length - 1];
  if (last.role === "tool") {
    // A tool result: answer with it.
    const result = last.content.find((p) => p.type === "tool-result");
    const text = outputText(result.output);
    let callPart;
    for (const m of prompt) {
      if (m.role !== "assistant" || typeof m.content === "string") continue;
      for (const p of m.content) if (p.type === "tool-call" && p.toolCallId === result.toolCallId) callPart = p;
    }
    const input = callPart ? inputOf(callPart) : {};
    switch (result.toolName) {
      case "get_weather":
        say(`The weather in ${input.location}: ${text}`);
        break;
      case "web_search":
        say("Here is what I found. " + text);
        break;
      case "publish": {
        const r = result.output?.value ?? {};
        say(r.published ? `Published: ${input.text}` : `Not published: ${r.reason || "no reason given"}`);
        break;
      }
      default:
        say("Thanks, I got the result: " + text);
    }
    finish("stop");
    return parts;
  }

  let message = "";
  for (let i = prompt.length - 1; i >= 0; i--) {
    if (prompt[i].role === "user") {
      message = textOf(prompt[i].content);
      break;
    }
  }
  const lower = message.toLowerCase();
  let m;
  if (lower.includes("fail")) {
    say("Starting…");
    parts.push({ type: "error", error: new Error("The demo agent failed on purpose.") });
  } else if (lower.includes("think")) {
    parts.push({ type: "reasoning-start", id: "reasoning-1" });
    for (const delta of chunks("Thinking about: " + message)) parts.push({ type: "reasoning-delta", id: "reasoning-1", delta });
    parts.push({ type: "reasoning-end", id: "reasoning-1" });
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
  } else if ((m = /publish (.*)/i.exec(message)) && cleanArg(m[1]) !== "") {
    call("publish", { text: cleanArg(m[1]) });
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

const server = http.createServer(async (req, res) => {
  let body = "";
  for await (const chunk of req) body += chunk;
  let input;
  try {
    input = JSON.parse(body);
  } catch {
    res.writeHead(400, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ error: "the body is not a RunAgentInput" }));
    return;
  }
  const encoder = new EventEncoder();
  res.writeHead(200, { "Content-Type": encoder.getContentType() });
  const agent = new MastraAgent({ agent: mastra.getAgent("demo") });
  const sub = agent.run(input).subscribe({
    next: (event) => res.write(encoder.encode(event)),
    // MastraAgent reports a failed run as an error of its observable; an
    // AG-UI server ends the stream with RUN_ERROR.
    error: (err) => {
      res.write(encoder.encode({ type: "RUN_ERROR", message: String(err?.message ?? err) }));
      res.end();
    },
    complete: () => res.end(),
  });
  res.on("close", () => sub.unsubscribe());
});

server.listen(0, "127.0.0.1", () => {
  console.log(`LISTENING ${server.address().port}`);
});
