// The shapes of @ag-ui/core 1.0 (docs/MAPPING.md, "AG-UI 1.0") through both
// bridges, with the real 1.0 packages on the AG-UI side.
//
// aap2agui: a Node AG-UI agent in this file writes each shape with
// @ag-ui/encoder 1.0's EventEncoder, every event first checked against
// @ag-ui/core 1.0's zod schema (and every RunAgentInput it gets checked
// the same way). aap2agui, built from cmd/aap2agui, serves AAP in front of
// it; the tests speak AAP over plain fetch and check what MAPPING says each
// shape becomes: the turn's events and the history.
//
// agui2aap: @ag-ui/client 1.0's HttpAgent (its verifier on) sends 1.0
// input shapes to agui2aap (its built-in demo agent): the run must succeed
// and the client must not warn.
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { randomUUID } from "node:crypto";
import { EventEncoder } from "@ag-ui/encoder";
import { EventType } from "@ag-ui/core";
import { EventSchemas, RunAgentInputSchema } from "@ag-ui/core/schemas";
import * as client100 from "@ag-ui/client";
import { startAAP2AGUI, aapClient } from "./lib/aap2agui.mjs";
import { startBridge } from "./lib/agui2aap.mjs";

const agentName = "node10";
const weatherTool = {
  name: "get_weather",
  description: "Get the current weather for a place.",
  parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
};

// The runs of the agent, chosen by the last user message's text. Each is a
// list of events without RUN_STARTED (added) and, unless it ends with its
// own, without RUN_FINISHED.
const scripts = {
  parts: () => [
    { type: EventType.TOOL_CALL_START, toolCallId: "call_020", toolCallName: "render_chart", parentMessageId: "m0" },
    { type: EventType.TOOL_CALL_ARGS, toolCallId: "call_020", delta: "{}" },
    { type: EventType.TOOL_CALL_END, toolCallId: "call_020" },
    {
      type: EventType.TOOL_CALL_RESULT,
      messageId: "tr-1",
      toolCallId: "call_020",
      role: "tool",
      content: [
        { type: "text", text: "the chart" },
        { type: "image", source: { type: "data", value: "iVBORw0KGgo=", mimeType: "image/png" } },
        { type: "image", source: { type: "url", value: "https://example.com/c.png" } },
        { type: "audio", source: { type: "url", value: "https://example.com/a.mp3", mimeType: "audio/mpeg" } },
      ],
    },
    ...text("m1", "Done."),
  ],
  interleaved: () => [
    { type: EventType.TOOL_CALL_CHUNK, toolCallId: "call_021", toolCallName: "get_weather", parentMessageId: "m2", delta: '{"loc' },
    { type: EventType.ACTIVITY_SNAPSHOT, messageId: "act-1", activityType: "PLAN", content: { step: 1 } },
    { type: EventType.TOOL_CALL_CHUNK, toolCallId: "call_021", delta: 'ation":' },
    { type: EventType.ACTIVITY_DELTA, messageId: "act-1", activityType: "PLAN", patch: [{ op: "replace", path: "/step", value: 2 }] },
    { type: EventType.REASONING_ENCRYPTED_VALUE, subtype: "tool-call", entityId: "call_021", encryptedValue: "gAAAAB-opaque-call" },
    { type: EventType.TOOL_CALL_CHUNK, toolCallId: "call_021", delta: '"Li' },
    { type: EventType.STATE_SNAPSHOT, snapshot: { city: "Lima" } },
    { type: EventType.STATE_DELTA, delta: [{ op: "add", path: "/x", value: 1 }] },
    { type: EventType.TOOL_CALL_CHUNK, toolCallId: "call_021", delta: "ma" },
    { type: EventType.CUSTOM, name: "progress", value: 0.5 },
    { type: EventType.RAW, event: { id: "evt_1" }, source: "openai" },
    { type: EventType.TOOL_CALL_CHUNK, toolCallId: "call_021", delta: '"}' },
  ],
  subagents: () => [
    { type: EventType.SUBAGENT_STARTED, subagentRunId: "sa-1", name: "researcher", description: "finds facts" },
    { type: EventType.TEXT_MESSAGE_START, messageId: "s1", role: "assistant", subagentRunId: "sa-1" },
    { type: EventType.TEXT_MESSAGE_CONTENT, messageId: "s1", delta: "Lima has 10M people.", subagentRunId: "sa-1" },
    { type: EventType.TEXT_MESSAGE_END, messageId: "s1", subagentRunId: "sa-1" },
    { type: EventType.SUBAGENT_FINISHED, subagentRunId: "sa-1" },
    { type: EventType.SUBAGENT_STARTED, subagentRunId: "sa-2", name: "checker", parentToolCallId: "call_9" },
    { type: EventType.TEXT_MESSAGE_CHUNK, messageId: "s2", delta: "checking", subagentRunId: "sa-2" },
    { type: EventType.SUBAGENT_ERROR, subagentRunId: "sa-2", message: "quota exceeded", code: "QUOTA" },
    ...text("a1", "About 10 million."),
  ],
  cancelled: ({ threadId, runId }) => [
    ...text("m1", "Half an"),
    {
      type: EventType.RUN_FINISHED,
      threadId,
      runId,
      outcome: { type: "cancelled" },
      usage: [{ provider: "openai", model: "gpt-x", inputTokens: 120, outputTokens: 30, totalTokens: 150, reasoningTokens: 12 }],
    },
  ],
  roles: () => [
    { type: EventType.TEXT_MESSAGE_START, messageId: "u1", role: "user" },
    { type: EventType.TEXT_MESSAGE_CONTENT, messageId: "u1", delta: "echo of the user" },
    { type: EventType.TEXT_MESSAGE_END, messageId: "u1" },
    { type: EventType.TEXT_MESSAGE_START, messageId: "d1", role: "developer" },
    { type: EventType.TEXT_MESSAGE_CONTENT, messageId: "d1", delta: "be brief" },
    { type: EventType.TEXT_MESSAGE_END, messageId: "d1" },
    ...text("a1", "Hello."),
  ],
  "two texts": () => [...text("m1", "part ", "one"), ...text("m2", "part two")],
  // OpenAI-Responses-style: a reasoning item's encrypted_content on its
  // (summary) reasoning message, a value on the text message and one on
  // the function call.
  encrypted: () => [
    { type: EventType.REASONING_MESSAGE_CHUNK, messageId: "rs_68a1", delta: "**Looking up weather**" },
    { type: EventType.REASONING_MESSAGE_CHUNK, delta: " for Lima" },
    { type: EventType.REASONING_ENCRYPTED_VALUE, subtype: "message", entityId: "rs_68a1", encryptedValue: "gAAAAABoENCRYPTEDone" },
    ...text("msg_a", "Checking."),
    { type: EventType.REASONING_ENCRYPTED_VALUE, subtype: "message", entityId: "msg_a", encryptedValue: "gAAAAABoENCRYPTEDmsg" },
    { type: EventType.TOOL_CALL_START, toolCallId: "fc_1", toolCallName: "get_weather", parentMessageId: "msg_a" },
    { type: EventType.TOOL_CALL_ARGS, toolCallId: "fc_1", delta: '{"location":"Lima"}' },
    { type: EventType.TOOL_CALL_END, toolCallId: "fc_1" },
    { type: EventType.REASONING_ENCRYPTED_VALUE, subtype: "tool-call", entityId: "fc_1", encryptedValue: "gAAAAABoENCRYPTEDcall" },
  ],
};

function text(messageId, ...deltas) {
  return [
    { type: EventType.TEXT_MESSAGE_START, messageId, role: "assistant" },
    ...deltas.map((delta) => ({ type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta })),
    { type: EventType.TEXT_MESSAGE_END, messageId },
  ];
}

// The agent: node:http, @ag-ui/encoder. It records every input and every
// schema complaint (about its own events or the bridge's input).
function startAgent() {
  const inputs = [];
  const complaints = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (d) => { body += d; });
    req.on("end", () => {
      const input = JSON.parse(body);
      inputs.push(input);
      const parsed = RunAgentInputSchema.safeParse(input);
      if (!parsed.success) complaints.push(`input: ${parsed.error.message}`);
      const enc = new EventEncoder({ accept: req.headers.accept });
      res.writeHead(200, { "Content-Type": enc.getContentType() });
      const { threadId, runId } = input;
      const messages = input.messages ?? [];
      const lastMsg = messages.at(-1);
      let events;
      if (lastMsg?.role === "tool") {
        events = text(`${runId}-after`, `Tool said: ${typeof lastMsg.content === "string" ? lastMsg.content : JSON.stringify(lastMsg.content)}`);
      } else {
        const key = [...messages].reverse().find((m) => m.role === "user")?.content;
        const script = scripts[key];
        events = script ? script({ threadId, runId }) : text(`${runId}-echo`, `Heard: ${key}`);
      }
      events = [{ type: EventType.RUN_STARTED, threadId, runId }, ...events];
      if (events.at(-1).type !== EventType.RUN_FINISHED) events.push({ type: EventType.RUN_FINISHED, threadId, runId });
      for (const ev of events) {
        const ok = EventSchemas.safeParse(ev);
        if (!ok.success) complaints.push(`${ev.type}: ${ok.error.message}`);
        res.write(enc.encodeSSE(ev));
      }
      res.end();
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, inputs, complaints, url: `http://127.0.0.1:${server.address().port}/` })));
}

// metric returns the value of the sample of name whose labels include
// those given.
function metric(textBody, name, labels) {
  for (const line of textBody.split("\n")) {
    if (!line.startsWith(name + "{")) continue;
    const m = /^[^{]+\{([^}]*)\} (\S+)$/.exec(line);
    if (!m) continue;
    const have = Object.fromEntries(m[1].split(",").map((kv) => { const i = kv.indexOf("="); return [kv.slice(0, i), JSON.parse(kv.slice(i + 1))]; }));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[2]);
  }
  return undefined;
}

const user = (content) => ({ role: "user", content });
const turn = (stream, content) => ({ stream, messages: [user(content)] });
const assistantText = (t) => ({ role: "assistant", content: t });

describe("@ag-ui/encoder 1.0 agent behind aap2agui", () => {
  let agent;
  let bridge;
  let aap;
  before(async () => {
    agent = await startAgent();
    bridge = await startAAP2AGUI({
      upstream: agent.url,
      agent: {
        name: agentName,
        capabilities: {
          history: { full: {}, compacted: {} },
          stream: { delta: {}, message: {} },
          application: { tools: {} },
        },
      },
    });
    aap = aapClient(bridge.base);
  });
  after(async () => {
    await bridge?.stop();
    agent?.server.close();
  });

  const clean = () => assert.deepEqual(agent.complaints, [], "@ag-ui/core 1.0's schemas accept every event and input");

  for (const mode of ["delta", "message"]) {
    test(`TOOL_CALL_RESULT with content parts (${mode})`, async () => {
      const id = await aap.createSession({ agent: { name: agentName } });
      const lines = await aap.turn(id, turn(mode, "parts"));
      const blocks = [
        { type: "text", text: "the chart" },
        { type: "image", url: "data:image/png;base64,iVBORw0KGgo=" },
        { type: "image", url: "https://example.com/c.png" },
        { type: "text", text: '{"type":"audio","source":{"type":"url","value":"https://example.com/a.mp3","mimeType":"audio/mpeg"}}' },
      ];
      assert.deepEqual(lines, [
        "turn_start {}",
        'tool_call {"toolCallId":"call_020","name":"render_chart","input":{}}',
        `tool_result ${JSON.stringify({ toolCallId: "call_020", content: blocks })}`,
        mode === "delta" ? 'text_delta {"delta":"Done."}' : 'text {"text":"Done."}',
        'turn_stop {"stopReason":"end_turn"}',
      ]);
      assert.deepEqual(await aap.history(id), [
        user("parts"),
        { role: "assistant", content: [{ type: "tool_use", toolCallId: "call_020", name: "render_chart", input: {} }] },
        { role: "tool", toolCallId: "call_020", content: blocks },
        assistantText("Done."),
      ]);
      clean();
    });
  }

  test("activity, encrypted value, state, custom and raw events between TOOL_CALL_CHUNKs", async () => {
    const id = await aap.createSession({ agent: { name: agentName }, tools: [weatherTool] });
    const lines = await aap.turn(id, turn("delta", "interleaved"));
    assert.deepEqual(lines, [
      "turn_start {}",
      'tool_call {"toolCallId":"call_021","name":"get_weather","input":{"location":"Lima"}}',
      'turn_stop {"stopReason":"tool_use"}',
    ]);
    const n = agent.inputs.length;
    const after = await aap.turn(id, { stream: "delta", messages: [{ role: "tool", toolCallId: "call_021", content: "22°C" }] });
    assert.deepEqual(after, ["turn_start {}", 'text_delta {"delta":"Tool said: 22°C"}', 'turn_stop {"stopReason":"end_turn"}']);
    // The call went back whole, with its encrypted value where it was.
    const msgs = agent.inputs[n].messages;
    const call = msgs.flatMap((m) => m.toolCalls ?? []).find((c) => c.id === "call_021");
    assert.equal(call.function.arguments, '{"location":"Lima"}');
    assert.equal(call.encryptedValue, "gAAAAB-opaque-call");
    const hist = await aap.history(id);
    assert.ok(!JSON.stringify(hist).includes("opaque"), "the AAP client never sees the value");
    assert.deepEqual(hist[1], { role: "assistant", content: [{ type: "tool_use", toolCallId: "call_021", name: "get_weather", input: { location: "Lima" } }] });
    clean();
  });

  test("SUBAGENT_* events are calls of agui_subagent, not the parent's text", async () => {
    const id = await aap.createSession({ agent: { name: agentName } });
    const lines = await aap.turn(id, turn("delta", "subagents"));
    assert.deepEqual(lines, [
      "turn_start {}",
      'tool_call {"toolCallId":"sa-1","name":"agui_subagent","input":{"description":"finds facts","name":"researcher"}}',
      'tool_result {"toolCallId":"sa-1","content":"Lima has 10M people."}',
      'tool_call {"toolCallId":"sa-2","name":"agui_subagent","input":{"name":"checker","parentToolCallId":"call_9"}}',
      'tool_result {"toolCallId":"sa-2","content":"Error: quota exceeded (QUOTA)\\n\\nchecking"}',
      'text_delta {"delta":"About 10 million."}',
      'turn_stop {"stopReason":"end_turn"}',
    ]);
    const hist = await aap.history(id);
    assert.deepEqual(hist.at(-1), assistantText("About 10 million."));
    assert.ok(hist.some((m) => m.role === "tool" && m.toolCallId === "sa-2" && m.content === "Error: quota exceeded (QUOTA)\n\nchecking"), "the error is in history");
    // The next run does not send the subagents back as the agent's calls.
    const n = agent.inputs.length;
    await aap.turn(id, turn("delta", "hello"));
    for (const m of agent.inputs[n].messages) {
      assert.ok(!["sa-1", "sa-2"].includes(m.toolCallId), `a subagent's result sent back: ${JSON.stringify(m)}`);
      for (const c of m.toolCalls ?? []) assert.notEqual(c.function.name, "agui_subagent");
    }
    clean();
  });

  test("RUN_FINISHED with outcome cancelled and usage", async () => {
    const id = await aap.createSession({ agent: { name: agentName } });
    const lines = await aap.turn(id, turn("delta", "cancelled"));
    assert.deepEqual(lines, ["turn_start {}", 'text_delta {"delta":"Half an"}', 'turn_stop {"stopReason":"error"}']);
    assert.deepEqual(await aap.history(id), [user("cancelled"), assistantText("Half an")]);
    const m = await aap.metrics();
    // Only this run of the suite reports usage.
    assert.equal(metric(m, "aap2agui_tokens_total", { agent: agentName, kind: "input" }), 120);
    assert.equal(metric(m, "aap2agui_tokens_total", { agent: agentName, kind: "output" }), 30);
    assert.equal(metric(m, "aap2agui_tokens_total", { agent: agentName, kind: "reasoning" }), 12);
    assert.equal(metric(m, "aap2agui_upstream_requests_total", { call: "turn", outcome: "error", code: "agent_cancelled" }), 1);
    clean();
  });

  test("TEXT_MESSAGE_START with role user or developer is not the assistant's", async () => {
    const id = await aap.createSession({ agent: { name: agentName } });
    assert.deepEqual(await aap.turn(id, turn("delta", "roles")), ["turn_start {}", 'text_delta {"delta":"Hello."}', 'turn_stop {"stopReason":"end_turn"}']);
    assert.deepEqual(await aap.turn(id, turn("message", "roles")), ["turn_start {}", 'text {"text":"Hello."}', 'turn_stop {"stopReason":"end_turn"}']);
    assert.deepEqual(await aap.history(id), [user("roles"), assistantText("Hello."), user("roles"), assistantText("Hello.")]);
    clean();
  });

  test("two text messages in one run", async () => {
    const id = await aap.createSession({ agent: { name: agentName } });
    assert.deepEqual(await aap.turn(id, turn("delta", "two texts")), [
      "turn_start {}",
      'text_delta {"delta":"part "}',
      'text_delta {"delta":"one"}',
      'text_delta {"delta":"\\n\\n"}',
      'text_delta {"delta":"part two"}',
      'turn_stop {"stopReason":"end_turn"}',
    ]);
    assert.deepEqual(await aap.turn(id, turn("message", "two texts")), [
      "turn_start {}",
      'text {"text":"part one"}',
      'text {"text":"part two"}',
      'turn_stop {"stopReason":"end_turn"}',
    ]);
    const two = { role: "assistant", content: [{ type: "text", text: "part one" }, { type: "text", text: "part two" }] };
    assert.deepEqual(await aap.history(id), [user("two texts"), two, user("two texts"), two]);
    clean();
  });

  test("REASONING_ENCRYPTED_VALUE is kept, hidden, and sent back where it was", async () => {
    const id = await aap.createSession({ agent: { name: agentName }, tools: [weatherTool] });
    const lines = await aap.turn(id, turn("message", "encrypted"));
    assert.deepEqual(lines, [
      "turn_start {}",
      'thinking {"thinking":"**Looking up weather** for Lima"}',
      'text {"text":"Checking."}',
      'tool_call {"toolCallId":"fc_1","name":"get_weather","input":{"location":"Lima"}}',
      'turn_stop {"stopReason":"tool_use"}',
    ]);
    const n = agent.inputs.length;
    const after = await aap.turn(id, { stream: "delta", messages: [{ role: "tool", toolCallId: "fc_1", content: "22°C" }] });
    assert.deepEqual(after, ["turn_start {}", 'text_delta {"delta":"Tool said: 22°C"}', 'turn_stop {"stopReason":"end_turn"}']);
    for (const type of ["full", "compacted"]) {
      assert.ok(!JSON.stringify(await aap.history(id, type)).includes("ENCRYPTED"), `the ${type} history holds no value`);
    }
    assert.ok(!lines.join("\n").includes("ENCRYPTED"));
    const msgs = agent.inputs[n].messages;
    assert.deepEqual(msgs.map((m) => m.role), ["user", "reasoning", "assistant", "tool"]);
    assert.deepEqual(msgs[1], { id: "rs_68a1", role: "reasoning", content: "**Looking up weather** for Lima", encryptedValue: "gAAAAABoENCRYPTEDone" });
    assert.equal(msgs[2].id, "msg_a");
    assert.equal(msgs[2].encryptedValue, "gAAAAABoENCRYPTEDmsg");
    assert.equal(msgs[2].toolCalls.length, 1);
    assert.equal(msgs[2].toolCalls[0].id, "fc_1");
    assert.equal(msgs[2].toolCalls[0].encryptedValue, "gAAAAABoENCRYPTEDcall");
    clean();
  });
});

describe("@ag-ui/client 1.0 in front of agui2aap", () => {
  let bridge;
  before(async () => {
    bridge = await startBridge(["--demo-aap-version", "3"]);
  });
  after(async () => {
    await bridge?.stop();
  });

  // run starts one run as CopilotKit does; the client must not fail the
  // run nor warn on the console.
  async function run(agent, tools = []) {
    const out = { events: [], warnings: [], failed: null, finished: null, runError: null };
    const { warn, error } = console;
    const capture = (...args) => out.warnings.push(args.map((a) => (a instanceof Error ? a.message : String(a))).join(" "));
    console.warn = capture;
    console.error = capture;
    try {
      out.result = await agent.runAgent({ runId: randomUUID(), tools }, {
        onEvent: ({ event }) => { out.events.push(event.type); },
        onRunErrorEvent: ({ event }) => { out.runError = event; },
        onRunFailed: ({ error: err }) => { out.failed = err; },
        onRunFinishedEvent: (p) => { out.finished = p; },
      });
    } finally {
      console.warn = warn;
      console.error = error;
    }
    assert.equal(out.failed, null, `the client failed the run: ${out.failed}`);
    assert.deepEqual(out.warnings, [], "the client warned");
    assert.equal(out.runError, null);
    assert.equal(out.events[0], "RUN_STARTED");
    assert.equal(out.events.at(-1), "RUN_FINISHED");
    return out;
  }

  const newAgent = () => new client100.HttpAgent({ url: `${bridge.base}/agents/demo`, threadId: randomUUID() });

  test("a tool message with content parts", async () => {
    const agent = newAgent();
    agent.addMessage({ id: randomUUID(), role: "user", content: "What is the weather in Paris?" });
    let r = await run(agent, [weatherTool]);
    const call = agent.messages.at(-1).toolCalls[0];
    assert.equal(call.function.name, "get_weather");
    assert.deepEqual(r.finished.pendingToolCallIds, [call.id]);
    agent.addMessage({
      id: randomUUID(),
      role: "tool",
      toolCallId: call.id,
      content: [{ type: "text", text: "Sunny" }],
    });
    r = await run(agent, [weatherTool]);
    assert.deepEqual(r.result.newMessages.map((m) => [m.role, m.content]), [["assistant", "The weather in Paris: Sunny"]]);
    assert.equal(r.finished.outcome, "success");
    assert.deepEqual(agent.messages.map((m) => m.role), ["user", "assistant", "tool", "assistant"]);
  });

  test("encryptedValue on the messages and tool calls of the input", async () => {
    const agent = newAgent();
    agent.addMessage({ id: randomUUID(), role: "user", content: "hello" });
    await run(agent);
    const answer = agent.messages.at(-1);
    agent.setMessages([
      agent.messages[0],
      { id: "rs-1", role: "reasoning", content: "thought", encryptedValue: "gAAAAABoENCRYPTEDone" },
      { ...answer, encryptedValue: "gAAAAABoENCRYPTEDmsg" },
      { id: randomUUID(), role: "user", content: "thanks" },
    ]);
    const r = await run(agent);
    assert.deepEqual(r.result.newMessages.map((m) => [m.role, m.content]), [["assistant", "You said: thanks"]]);
    assert.equal(r.finished.outcome, "success");
    // The client keeps the values it was given; the bridge sends none back.
    assert.equal(agent.messages[1].encryptedValue, "gAAAAABoENCRYPTEDone");
    assert.equal(agent.messages[2].encryptedValue, "gAAAAABoENCRYPTEDmsg");
    assert.equal(agent.messages.at(-1).encryptedValue, undefined);
  });
});
