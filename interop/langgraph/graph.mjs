// A LangGraph.js graph with a scripted chat model (no LLM, no network) that
// follows the script of the built-in demo agents (demo/script.go), as the
// LangGraph API server loads it (agent.mjs serves it). The model looks at
// the newest message; for a user message, the first rule that matches
// wins (case-insensitively):
//
//   fail               "Starting…", then the model fails: RUN_ERROR
//   think              a thinking block "Thinking about: <message>" (as
//                      Anthropic's models stream one), then "Done thinking."
//   reason             a reasoning item whose summary is "Reasoning about:
//                      <message>" (as OpenAI's Responses API streams one;
//                      unlike a thinking block, the adapter's snapshot
//                      holds it), then "Done reasoning."
//   weather in <place> the client tool get_weather {"location": <place>}
//                      when the run declares it (the graph then ends: the
//                      AG-UI client runs it); else says it cannot
//   search <query>     the graph's own tool web_search, run at once: its
//                      result, then "Here is what I found. <result>"
//   delete <name>      the tool delete_file, which the graph runs only once
//                      the user approves: interrupt() with reason
//                      "tool_call" and the call's toolCallId (resume
//                      {approved, reason}); then "Done: <result>" or
//                      "Not deleted: <reason>"
//   post <text>        the graph's own tool post, which calls interrupt()
//                      itself (resume {approved, reason}): its result,
//                      then "Here is what happened: <result>"
//   publish <text>     interrupt() in a node of its own, not bound to a
//                      tool call (resume {approved, reason}); then
//                      "Published: <text>" or "Not published: <reason>"
//   history            "History: tool calls: <names>", the tool calls the
//                      model is given
//   anything else      "You said: <message>"
//
// Text and tool arguments are streamed in several chunks.
import { Annotation, END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, AIMessageChunk, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { ChatGenerationChunk } from "@langchain/core/outputs";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import {
  DONE_THINKING, FAIL_ERROR, FAIL_PREFIX, NO_WEATHER_TOOL, argChunks, argOf, chunks, echo, historyOf, ruleOf, searchAnswer, textOf,
  thinkingAbout, weatherIn,
} from "../agents/script.mjs";

// The system message the publish node gives the model with the user's
// decision.
const PUBLISHED = "publish decision: ";

let calls = 0;

// script is the scripted model: the chunks of one answer to messages.
function script(messages, tools) {
  const out = [];
  const say = (s) => {
    for (const delta of chunks(s)) out.push(new AIMessageChunk({ content: delta }));
  };
  const call = (name, input) => {
    const id = `lg-call-${++calls}`;
    // As a provider streams a call: its id and name first, with no
    // arguments (@ag-ui/langgraph sends that chunk as TOOL_CALL_START and
    // drops any arguments in it), then the arguments in pieces.
    const chunk = (fields) => out.push(new AIMessageChunk({ content: "", tool_call_chunks: [{ type: "tool_call_chunk", index: 0, ...fields }] }));
    chunk({ id, name, args: "" });
    for (const delta of argChunks(JSON.stringify(input))) chunk({ args: delta });
  };
  const last = messages[messages.length - 1];
  if (typeof last?.content === "string" && last.content.startsWith(PUBLISHED)) {
    const d = JSON.parse(last.content.slice(PUBLISHED.length));
    say(d.approved ? `Published: ${d.text}` : `Not published: ${d.reason || "no reason given"}`);
    return { out };
  }
  if (last?._getType?.() === "tool" || last?.getType?.() === "tool") {
    const text = textOf(last.content);
    let callOf;
    for (const m of messages) for (const c of m.tool_calls ?? []) if (c.id === last.tool_call_id) callOf = c;
    switch (callOf?.name) {
      case "get_weather":
        say(weatherIn(callOf.args.location, text));
        break;
      case "web_search":
        say(searchAnswer(text));
        break;
      case "post":
        say("Here is what happened: " + text);
        break;
      case "delete_file":
        say(text.startsWith("Tool call denied") ? `Not deleted: ${text.replace(/^Tool call denied:? ?/, "") || "no reason given"}` : `Done: ${text}`);
        break;
      default:
        say("Thanks, I got the result: " + text);
    }
    return { out };
  }
  let message = "";
  for (let i = messages.length - 1; i >= 0; i--) {
    const t = messages[i]._getType?.() ?? messages[i].getType?.();
    if (t === "human") {
      message = textOf(messages[i].content);
      break;
    }
  }
  const { rule, arg } = ruleOf(message, ["weather in", "search", "post", "delete"]);
  if (rule !== "fail" && rule !== "think" && /\breason\b/i.test(message)) {
    const id = `rs_${++calls}`;
    for (const delta of chunks("Reasoning about: " + message)) {
      out.push(new AIMessageChunk({ content: [{ type: "reasoning", id, summary: [{ type: "summary_text", text: delta, index: 0 }], index: 0 }] }));
    }
    for (const delta of chunks("Done reasoning.")) {
      out.push(new AIMessageChunk({ content: [{ type: "text", text: delta, index: 1 }] }));
    }
    return { out };
  }
  switch (rule) {
    case "fail":
      say(FAIL_PREFIX);
      return { out, fail: FAIL_ERROR };
    case "think":
      // As Anthropic's models stream: content blocks, a thinking block
      // first, then a text block.
      for (const delta of chunks(thinkingAbout(message))) {
        out.push(new AIMessageChunk({ content: [{ type: "thinking", thinking: delta, index: 0 }] }));
      }
      for (const delta of chunks(DONE_THINKING)) {
        out.push(new AIMessageChunk({ content: [{ type: "text", text: delta, index: 1 }] }));
      }
      break;
    case "weather in":
      if ((tools ?? []).some((t) => (t.function?.name ?? t.name) === "get_weather")) call("get_weather", { location: arg });
      else say(NO_WEATHER_TOOL);
      break;
    case "search":
      call("web_search", { query: arg });
      break;
    case "post":
      call("post", { text: arg });
      break;
    case "delete":
      call("delete_file", { name: arg });
      break;
    case "history": {
      const names = [];
      for (const msg of messages) for (const c of msg.tool_calls ?? []) names.push(c.name);
      say(historyOf(names));
      break;
    }
    default:
      say(echo(message));
  }
  return { out };
}

// ScriptedChatModel is a chat model whose answers the script writes,
// streamed chunk by chunk as a real model's are (what @ag-ui/langgraph
// reads from the graph's on_chat_model_stream events).
class ScriptedChatModel extends BaseChatModel {
  _llmType() {
    return "scripted";
  }

  async _generate(messages, options, runManager) {
    let message;
    for await (const chunk of this._streamResponseChunks(messages, options, runManager)) {
      message = message ? message.concat(chunk.message) : chunk.message;
    }
    return { generations: [{ text: textOf(message?.content), message: new AIMessage({ content: message?.content ?? "", tool_calls: message?.tool_calls ?? [] }) }] };
  }

  async *_streamResponseChunks(messages, options, runManager) {
    const { out, fail } = script(messages, options?.tools ?? this.tools);
    for (const message of out) {
      const chunk = new ChatGenerationChunk({ message, text: textOf(message.content) });
      yield chunk;
      await runManager?.handleLLMNewToken(chunk.text, undefined, undefined, undefined, undefined, { chunk });
    }
    if (fail) throw new Error(fail);
  }
}

const model = new ScriptedChatModel({});

const webSearch = tool(async ({ query }) => `Results for ${query}: the demo index has three pages about ${query}.`, {
  name: "web_search",
  description: "Search the web.",
  schema: z.object({ query: z.string() }),
});

const deleteFile = tool(async ({ name }) => `Deleted ${name}.`, {
  name: "delete_file",
  description: "Delete a file, once the user approves it.",
  schema: z.object({ name: z.string() }),
});

// post is a tool the graph runs on its own, which asks the user itself,
// from inside the tool, once its call was streamed.
const post = tool(
  async ({ text }) => {
    const d = decision(interrupt({ message: `Post "${text}"?`, responseSchema: approval }));
    return d.approved ? `Posted "${text}".` : `Not posted: ${d.reason || "no reason given"}`;
  },
  { name: "post", description: "Post a text, asking the user first.", schema: z.object({ text: z.string() }) },
);

const approval = {
  type: "object",
  properties: { approved: { type: "boolean" }, reason: { type: "string" } },
  required: ["approved"],
};

// A resume is a decision: {approved, reason}; @ag-ui/langgraph resumes a
// cancelled interrupt with {__agui_cancelled__: true}.
function decision(value) {
  if (value && typeof value === "object" && value.__agui_cancelled__) return { approved: false, reason: value.reason ?? "cancelled" };
  if (value && typeof value === "object") return { approved: value.approved === true, reason: value.reason ?? "" };
  return { approved: false, reason: "" };
}

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  // The client's tools, as @ag-ui/langgraph gives them.
  tools: Annotation({ reducer: (_, b) => b, default: () => [] }),
});

async function agent(state) {
  const tools = state.tools ?? [];
  const response = await model.invoke(state.messages, { tools });
  return { messages: [response] };
}

// approve asks the user before delete_file runs: the denied call gets its
// result here, the approved one goes on to the tools node.
function approve(state) {
  const last = state.messages[state.messages.length - 1];
  const c = last.tool_calls.find((t) => t.name === "delete_file");
  const d = decision(interrupt({ reason: "tool_call", toolCallId: c.id, message: `Delete ${c.args.name}?`, responseSchema: approval }));
  if (d.approved) return {};
  return { messages: [new ToolMessage({ tool_call_id: c.id, content: d.reason ? `Tool call denied: ${d.reason}` : "Tool call denied" })] };
}

// publish asks the user, then has the model say what came of it (a
// model's answer is streamed; a message a node adds itself would reach the
// client only in the run's MESSAGES_SNAPSHOT).
async function publish(state) {
  const last = state.messages[state.messages.length - 1];
  const text = argOf("publish", textOf(last.content));
  const d = decision(interrupt({ message: `Publish "${text}"?`, responseSchema: approval }));
  const outcome = new SystemMessage(PUBLISHED + JSON.stringify({ text, ...d }));
  const response = await model.invoke([...state.messages, outcome]);
  return { messages: [response] };
}

function route(state) {
  const last = state.messages[state.messages.length - 1];
  const calls = last.tool_calls ?? [];
  if (calls.length === 0) return END;
  if (calls.some((c) => c.name === "delete_file")) return "approve";
  if (calls.every((c) => c.name === "web_search" || c.name === "post")) return "run_tools";
  return END; // a client tool: the AG-UI client runs it
}

function start(state) {
  const last = state.messages[state.messages.length - 1];
  const t = last?._getType?.() ?? last?.getType?.();
  return t === "human" && argOf("publish", textOf(last.content)) !== "" ? "publish" : "agent";
}

export const graph = new StateGraph(State)
  .addNode("agent", agent)
  .addNode("run_tools", new ToolNode([webSearch, deleteFile, post]))
  .addNode("approve", approve)
  .addNode("publish", publish)
  .addConditionalEdges(START, start, ["agent", "publish"])
  .addConditionalEdges("agent", route, ["run_tools", "approve", END])
  .addConditionalEdges("approve", (state) => (state.messages[state.messages.length - 1]._getType?.() === "tool" ? "agent" : "run_tools"), ["agent", "run_tools"])
  .addEdge("run_tools", "agent")
  .addEdge("publish", END)
  .compile();
