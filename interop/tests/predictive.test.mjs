// The AG-UI dojo's predictive state updates through the chain, driven by
// the real @ag-ui/client HttpAgent (1.0.0 and 0.0.59, the version
// CopilotKit 1.7x pins): HttpAgent → agui2aap → AAP → aap2agui → a Node
// agent that does what the all-features server starter's
// integrations/server-starter-all-features/python/examples/example_server/
// predictive_state_updates.py (ag-ui-protocol/ag-ui) does. The agent calls
// its own write_document_local, which it declares nowhere and never
// reports a result for, and the page's confirm_changes. The same client
// pointed straight at the agent is the control: what it does there, it
// must do through the chain. Before the agent's own call was told apart,
// agui2aap made it a permission interrupt, which the client keeps in
// pendingInterrupts and for which it refuses the next run ("Thread has 1
// pending interrupt(s) not addressed by resume").
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { randomUUID } from "node:crypto";
import { EventEncoder } from "@ag-ui/encoder";
import { EventType } from "@ag-ui/core";
import * as client100 from "@ag-ui/client";
import * as client0059 from "agui-client-0059";
import { startAAP2AGUI } from "./lib/aap2agui.mjs";
import { startBridge } from "./lib/agui2aap.mjs";

const agentName = "predictive";
const story = "Once upon a time, there was a dog named Rex. Rex was a very good dog.";
const confirmTool = { name: "confirm_changes", description: "Ask the user to confirm the changes.", parameters: { type: "object", properties: {} } };

// predictiveRun is the agent's answer to a run, as predictive_state_updates.py
// gives it (one story, no pauses): "Ok!" after a tool message; otherwise
// PredictState, the document streamed word by word as the arguments of its
// own write_document_local, then a call of the page's confirm_changes.
function predictiveRun(input) {
  if (input.messages.at(-1)?.role === "tool") {
    const id = randomUUID();
    return [
      { type: EventType.TEXT_MESSAGE_START, messageId: id, role: "assistant" },
      { type: EventType.TEXT_MESSAGE_CONTENT, messageId: id, delta: "Ok!" },
      { type: EventType.TEXT_MESSAGE_END, messageId: id },
    ];
  }
  const doc = randomUUID();
  const confirm = randomUUID();
  return [
    { type: EventType.CUSTOM, name: "PredictState", value: [{ state_key: "document", tool: "write_document_local", tool_argument: "document" }] },
    { type: EventType.TOOL_CALL_START, toolCallId: doc, toolCallName: "write_document_local" },
    { type: EventType.TOOL_CALL_ARGS, toolCallId: doc, delta: '{"document":"' },
    ...story.split(" ").map((w, i, all) => ({ type: EventType.TOOL_CALL_ARGS, toolCallId: doc, delta: i < all.length - 1 ? `${w} ` : w })),
    { type: EventType.TOOL_CALL_ARGS, toolCallId: doc, delta: '"}' },
    { type: EventType.TOOL_CALL_END, toolCallId: doc },
    { type: EventType.TOOL_CALL_START, toolCallId: confirm, toolCallName: "confirm_changes" },
    { type: EventType.TOOL_CALL_ARGS, toolCallId: confirm, delta: "{}" },
    { type: EventType.TOOL_CALL_END, toolCallId: confirm },
  ];
}

// serveAgent starts the agent, recording the inputs it gets.
function serveAgent() {
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
      for (const ev of [{ type: EventType.RUN_STARTED, threadId, runId }, ...predictiveRun(input), { type: EventType.RUN_FINISHED, threadId, runId }]) {
        res.write(enc.encodeSSE(ev));
      }
      res.end();
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, inputs, url: `http://127.0.0.1:${server.address().port}/` })));
}

// run starts one run as CopilotKit does and records what the client
// reports; a run the client refuses (it throws) is a failure.
async function run(agent) {
  const out = { types: [], failed: null, runError: null, warnings: [] };
  const { warn, error } = console;
  console.warn = console.error = (...args) => out.warnings.push(args.map(String).join(" "));
  try {
    await agent.runAgent({ runId: randomUUID(), tools: [confirmTool] }, {
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

function taken(r) {
  assert.equal(r.failed, null, `the client failed or refused the run: ${r.failed}`);
  assert.equal(r.runError, null, `RUN_ERROR: ${JSON.stringify(r.runError)}`);
  assert.deepEqual(r.warnings, [], "the client warned");
  assert.equal(r.types.at(-1), "RUN_FINISHED");
}

describe("predictive state updates: HttpAgent → agui2aap → aap2agui → the agent, and straight at the agent", () => {
  let agent;
  let front;
  let back;
  before(async () => {
    agent = await serveAgent();
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

  for (const { label, lib } of [{ label: "@ag-ui/client 1.0.0", lib: client100 }, { label: "@ag-ui/client 0.0.59", lib: client0059 }]) {
    for (const target of ["the agent", "the chain"]) {
      test(`${label}, ${target}: the agent's own call shows, the page confirms, the next runs are taken`, async () => {
        const url = target === "the chain" ? `${front.base}/agents/${agentName}` : agent.url;
        const c = new lib.HttpAgent({ url, threadId: randomUUID() });
        c.addMessage({ id: randomUUID(), role: "user", content: "Write a story about a dog" });
        let r = await run(c);
        taken(r);
        assert.deepEqual(c.pendingInterrupts ?? [], [], "no interrupt is left for the page to answer");
        const calls = c.messages.flatMap((m) => m.toolCalls ?? []);
        assert.deepEqual(calls.map((tc) => tc.function.name), ["write_document_local", "confirm_changes"]);
        assert.deepEqual(JSON.parse(calls[0].function.arguments), { document: story });

        c.addMessage({ id: randomUUID(), role: "tool", toolCallId: calls[1].id, content: '{"accepted":true}' });
        r = await run(c);
        taken(r);
        assert.equal(c.messages.at(-1).content, "Ok!");
        // The agent is sent both its calls, the page's result last, and no
        // result for its own call (one assistant message through the
        // chain, one per call straight from HttpAgent, which gives a call
        // without parentMessageId a message of its own).
        const sent = agent.inputs.at(-1).messages;
        assert.deepEqual(sent.flatMap((m) => m.toolCalls ?? []).map((tc) => tc.function.name), ["write_document_local", "confirm_changes"], JSON.stringify(sent));
        assert.deepEqual(sent.filter((m) => m.role === "tool").map((m) => m.toolCallId), [calls[1].id], JSON.stringify(sent));
        assert.equal(sent.at(-1).role, "tool");

        c.addMessage({ id: randomUUID(), role: "user", content: "Another one" });
        r = await run(c);
        taken(r);
        assert.equal(c.messages.flatMap((m) => m.toolCalls ?? []).length, 4, "the agent wrote again");
      });
    }
  }
});
