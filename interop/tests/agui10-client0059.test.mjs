// @ag-ui/client 0.0.59 (the version CopilotKit 1.7x pins) against the
// bridges while the agent behind them speaks @ag-ui/core 1.0
// (docs/MAPPING.md, "AG-UI 1.0"): the chain 0.0.59 HttpAgent → agui2aap →
// AAP → aap2agui → a Node agent that writes 1.0-only shapes (a tool result
// made of content parts, encrypted reasoning values, subagents). What
// 0.0.59 meets must be what it accepts: no failed run, no warning, every
// message of its history valid for @ag-ui/core 0.0.59's own schema, no
// encrypted value (the agent's values travel back to it through aap2agui's
// store, not through the client).
//
// The first test shows why: 0.0.59 fails a run whose TOOL_CALL_RESULT
// carries content parts (its schema takes a string only), so agui2aap
// sends a tool result to its clients as a string, whichever client.
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { randomUUID } from "node:crypto";
import { EventEncoder } from "@ag-ui/encoder";
import { EventType } from "@ag-ui/core";
import * as client0059 from "agui-client-0059";
import { MessageSchema as MessageSchema0059 } from "agui-core-0059";
import { startAAP2AGUI } from "./lib/aap2agui.mjs";
import { startBridge } from "./lib/agui2aap.mjs";

const agentName = "node10old";
const weatherTool = {
  name: "get_weather",
  description: "Get the current weather for a place.",
  parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
};
const secrets = ["EqQBsig-chain", "gAAAAcall-chain", "gAAAAmsg-chain"];

const text = (messageId, delta) => [
  { type: EventType.TEXT_MESSAGE_START, messageId, role: "assistant" },
  { type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta },
  { type: EventType.TEXT_MESSAGE_END, messageId },
];

const partsResult = {
  type: EventType.TOOL_CALL_RESULT,
  messageId: "tr-1",
  toolCallId: "call_chart",
  role: "tool",
  content: [
    { type: "text", text: "the chart" },
    { type: "image", source: { type: "data", value: "iVBORw0KGgo=", mimeType: "image/png" } },
  ],
};

// The agent's runs, by the last user message's text; a run after a tool
// result says what the tool said.
const scripts = {
  chart: () => [
    { type: EventType.TOOL_CALL_START, toolCallId: "call_chart", toolCallName: "render_chart", parentMessageId: "m0" },
    { type: EventType.TOOL_CALL_ARGS, toolCallId: "call_chart", delta: "{}" },
    { type: EventType.TOOL_CALL_END, toolCallId: "call_chart" },
    partsResult,
    ...text("m1", "Here is the chart."),
  ],
  think: () => [
    { type: EventType.REASONING_START, messageId: "rs-0" },
    { type: EventType.REASONING_MESSAGE_START, messageId: "th-1", role: "reasoning" },
    { type: EventType.REASONING_MESSAGE_CONTENT, messageId: "th-1", delta: "They want Lima." },
    { type: EventType.REASONING_MESSAGE_END, messageId: "th-1" },
    { type: EventType.REASONING_ENCRYPTED_VALUE, subtype: "message", entityId: "th-1", encryptedValue: secrets[0] },
    { type: EventType.REASONING_END, messageId: "rs-0" },
    ...text("m2", "Checking."),
    { type: EventType.REASONING_ENCRYPTED_VALUE, subtype: "message", entityId: "m2", encryptedValue: secrets[2] },
    { type: EventType.TOOL_CALL_START, toolCallId: "call_w", toolCallName: "get_weather", parentMessageId: "m2" },
    { type: EventType.TOOL_CALL_ARGS, toolCallId: "call_w", delta: '{"location":"Lima"}' },
    { type: EventType.TOOL_CALL_END, toolCallId: "call_w" },
    { type: EventType.REASONING_ENCRYPTED_VALUE, subtype: "tool-call", entityId: "call_w", encryptedValue: secrets[1] },
  ],
  delegate: () => [
    { type: EventType.SUBAGENT_STARTED, subagentRunId: "sa-1", name: "researcher" },
    { type: EventType.TEXT_MESSAGE_START, messageId: "s1", role: "assistant", subagentRunId: "sa-1" },
    { type: EventType.TEXT_MESSAGE_CONTENT, messageId: "s1", delta: "Lima has 10M people.", subagentRunId: "sa-1" },
    { type: EventType.TEXT_MESSAGE_END, messageId: "s1", subagentRunId: "sa-1" },
    { type: EventType.SUBAGENT_FINISHED, subagentRunId: "sa-1" },
    ...text("m3", "About 10 million."),
  ],
  cancel: ({ threadId, runId }) => [...text("m4", "Half an"), { type: EventType.RUN_FINISHED, threadId, runId, outcome: { type: "cancelled" } }],
};

// serveEvents starts an AG-UI agent answering each run with events(input)
// and recording the inputs.
function serveEvents(events) {
  const inputs = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (d) => { body += d; });
    req.on("end", () => {
      const input = JSON.parse(body);
      inputs.push(input);
      const enc = new EventEncoder({ accept: req.headers.accept });
      res.writeHead(200, { "Content-Type": enc.getContentType() });
      const { threadId, runId } = input;
      const evs = [{ type: EventType.RUN_STARTED, threadId, runId }, ...events(input)];
      if (evs.at(-1).type !== EventType.RUN_FINISHED) evs.push({ type: EventType.RUN_FINISHED, threadId, runId });
      for (const ev of evs) {
        res.write(enc.encodeSSE(ev));
      }
      res.end();
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, inputs, url: `http://127.0.0.1:${server.address().port}/` })));
}

function scripted(input) {
  const last = input.messages.at(-1);
  if (last?.role === "tool") return text(`${input.runId}-after`, `Tool said: ${last.content}`);
  const key = [...input.messages].reverse().find((m) => m.role === "user")?.content;
  return (scripts[key] ?? (() => text(`${input.runId}-echo`, `Heard: ${key}`)))(input);
}

// run starts one run of a 0.0.59 HttpAgent and records what it reports,
// its console included.
async function run(agent, tools = []) {
  const out = { types: [], failed: null, runError: null, warnings: [] };
  const { warn, error } = console;
  console.warn = console.error = (...args) => out.warnings.push(args.map(String).join(" "));
  try {
    await agent.runAgent({ runId: randomUUID(), tools }, {
      onEvent: ({ event }) => { out.types.push(event.type); },
      onRunErrorEvent: ({ event }) => { out.runError = event; },
      onRunFailed: ({ error: err }) => { out.failed = err; },
    });
  } catch (err) {
    out.failed ??= err;
  } finally {
    console.warn = warn;
    console.error = error;
  }
  return out;
}

// accepted checks that 0.0.59 took a run and that its history is valid
// for its own schema and holds no encrypted value.
function accepted(agent, r) {
  assert.equal(r.failed, null, `0.0.59 failed the run: ${r.failed}`);
  assert.equal(r.runError, null, `RUN_ERROR: ${JSON.stringify(r.runError)}`);
  assert.deepEqual(r.warnings, [], "0.0.59 warned");
  assert.equal(r.types.at(-1), "RUN_FINISHED");
  for (const m of agent.messages) {
    const ok = MessageSchema0059.safeParse(m);
    assert.ok(ok.success, `0.0.59's schema refuses ${JSON.stringify(m)}: ${ok.error?.message}`);
  }
  const all = JSON.stringify(agent.messages);
  for (const s of secrets) assert.ok(!all.includes(s), `the client holds the encrypted value ${s}`);
}

// What 0.0.59 does with 1.0-only shapes sent to it directly: it fails the
// run (zod: "Expected string, received array"; "Expected 'success' |
// 'interrupt'") and logs "Agent execution failed". (It ignores SUBAGENT_*
// events and keeps encryptedValue, which its schema already has.)
for (const [shape, key, where] of [
  ["a TOOL_CALL_RESULT with content parts", "chart", /string/],
  ["RUN_FINISHED with outcome cancelled", "cancel", /success|interrupt/],
]) {
  test(`@ag-ui/client 0.0.59 fails a run on ${shape} (why agui2aap never sends it)`, async () => {
    const agent = await serveEvents((input) => scripts[key](input));
    try {
      const client = new client0059.HttpAgent({ url: agent.url, threadId: randomUUID() });
      client.addMessage({ id: randomUUID(), role: "user", content: key });
      const r = await run(client);
      assert.notEqual(r.failed, null, "0.0.59 took the shape: the rule could be relaxed");
      assert.match(String(r.failed?.message ?? r.failed), where);
    } finally {
      agent.server.close();
    }
  });
}

describe("@ag-ui/client 0.0.59 → agui2aap → aap2agui → a 1.0 agent", () => {
  let agent;
  let front;
  let back;
  before(async () => {
    agent = await serveEvents(scripted);
    back = await startAAP2AGUI({
      upstream: agent.url,
      agent: { name: agentName, capabilities: { history: { full: {}, compacted: {} }, stream: { delta: {}, message: {} }, application: { tools: {} } } },
    });
    front = await startBridge(["--upstream", back.base]);
  });
  after(async () => {
    await front?.stop();
    await back?.stop();
    agent?.server.close();
  });
  const newClient = () => new client0059.HttpAgent({ url: `${front.base}/agents/${agentName}`, threadId: randomUUID() });
  const say = (c, content) => c.addMessage({ id: randomUUID(), role: "user", content });

  test("a tool result made of content parts reaches 0.0.59 as a string holding its blocks", async () => {
    const c = newClient();
    say(c, "chart");
    const r = await run(c);
    accepted(c, r);
    const tool = c.messages.find((m) => m.role === "tool");
    assert.ok(tool, `no tool message: ${JSON.stringify(c.messages)}`);
    assert.equal(typeof tool.content, "string");
    assert.deepEqual(JSON.parse(tool.content), [
      { type: "text", text: "the chart" },
      { type: "image", url: "data:image/png;base64,iVBORw0KGgo=" },
    ]);
    assert.equal(c.messages.at(-1).content, "Here is the chart.");
  });

  test("encrypted reasoning: 0.0.59 never sees the values, the agent gets them back on the next run", async () => {
    const c = newClient();
    say(c, "think");
    let r = await run(c, [weatherTool]);
    accepted(c, r);
    const call = c.messages.flatMap((m) => m.toolCalls ?? []).find((tc) => tc.function.name === "get_weather");
    assert.ok(call, `no call: ${JSON.stringify(c.messages)}`);
    c.addMessage({ id: randomUUID(), role: "tool", toolCallId: call.id, content: "22°C" });
    r = await run(c, [weatherTool]);
    accepted(c, r);
    assert.equal(c.messages.at(-1).content, "Tool said: 22°C");

    const input = agent.inputs.at(-1);
    const reasoning = input.messages.find((m) => m.role === "reasoning");
    assert.equal(reasoning?.encryptedValue, secrets[0], JSON.stringify(input.messages));
    const assistant = input.messages.find((m) => m.id === "m2");
    assert.equal(assistant?.encryptedValue, secrets[2]);
    assert.equal(assistant?.toolCalls?.[0]?.encryptedValue, secrets[1]);
  });

  test("a run the agent cancelled ends for 0.0.59 as an error it can read, not a failed run", async () => {
    const c = newClient();
    say(c, "cancel");
    const r = await run(c);
    assert.equal(r.failed, null, `0.0.59 failed the run: ${r.failed}`);
    assert.deepEqual(r.warnings, [], "0.0.59 warned");
    assert.equal(r.types.at(-1), "RUN_ERROR", `events ${r.types}`);
    assert.ok(c.messages.some((m) => m.role === "assistant" && m.content === "Half an"), JSON.stringify(c.messages));
  });

  test("a subagent reaches 0.0.59 as a call of agui_subagent with its result", async () => {
    const c = newClient();
    say(c, "delegate");
    const r = await run(c);
    accepted(c, r);
    assert.ok(!r.types.some((t) => t.startsWith("SUBAGENT_")), `events ${r.types}`);
    const tool = c.messages.find((m) => m.role === "tool");
    assert.equal(tool?.content, "Lima has 10M people.");
    assert.equal(c.messages.at(-1).content, "About 10 million.");
  });
});
