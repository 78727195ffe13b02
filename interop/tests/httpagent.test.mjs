// agui2aap driven by the real @ag-ui/client HttpAgent, in the version
// CopilotKit 1.7x pins (0.0.59) and in 1.0.0, the way CopilotKit drives it:
// agent.addMessage / setMessages, then runAgent({runId, tools, resume}) with
// the whole history every run. The bridge is built from cmd/agui2aap and
// serves its built-in AAP demo agent (web_search untrusted, so a search
// asks permission). The tests assert on agent.messages after each run and
// on what the client reports: no schema, verifier or subscriber error, and
// no warning from the client on the console.
//
// How the two versions differ, as far as these tests go: both keep the
// interrupts of the last run in agent.pendingInterrupts, export
// buildResumeArray, send `resume` in RunAgentInput, and refuse client-side
// to start a run that leaves a pending interrupt unanswered. runAgent's
// `result` is set only for a success outcome, so interrupts are read from
// pendingInterrupts (or onRunFinishedEvent). 1.0.0 also reports, for a
// success outcome, the tool calls the frontend still has to run
// (pendingToolCallIds); 0.0.59 exports getRunOutcome instead. Neither
// throws or calls onRunFailed for an in-band RUN_ERROR: runAgent resolves
// and onRunErrorEvent reports it. 1.0.0 strips fields its schema lacks and
// says so on the console; 0.0.59 keeps them silently.
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import * as client100 from "@ag-ui/client";
import * as client0059 from "agui-client-0059";
import { startBridge } from "./lib/agui2aap.mjs";

let bridge;

const weatherTool = {
  name: "get_weather",
  description: "Get the current weather for a place.",
  parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
};

const clients = [
  { label: "@ag-ui/client 1.0.0", lib: client100, v1: true },
  { label: "@ag-ui/client 0.0.59", lib: client0059, v1: false },
];

// Known problems of the bridge's streams that make a client warn; each is
// reported with its fix. A warning matching one of these is tolerated (and
// listed) rather than failing the test, so that the rest is still checked.
const knownWarnings = [];

// run starts one run like CopilotKit does and records what the client
// reports. Console output of the client is captured: a warning means the
// client had to repair or drop something.
async function run(agent, { runId = randomUUID(), tools = [], resume, strict = false } = {}) {
  const seen = [];
  const out = { events: seen, runError: null, failed: null, finished: null, warnings: [], tolerated: [] };
  const { warn, error } = console;
  const capture = (...args) => {
    const line = args.map((a) => (a instanceof Error ? a.message : String(a))).join(" ");
    (!strict && knownWarnings.some((re) => re.test(line)) ? out.tolerated : out.warnings).push(line);
  };
  console.warn = capture;
  console.error = capture;
  try {
    const params = { runId, tools };
    if (resume !== undefined) params.resume = resume;
    out.result = await agent.runAgent(params, {
      onEvent: ({ event }) => { seen.push(event.type); },
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
  assert.equal(seen[0], "RUN_STARTED");
  assert.ok(["RUN_FINISHED", "RUN_ERROR"].includes(seen.at(-1)), `last event ${seen.at(-1)}`);
  return out;
}

function newAgent(lib) {
  return new lib.HttpAgent({ url: `${bridge.base}/agents/demo`, threadId: randomUUID() });
}

function say(agent, text) {
  agent.addMessage({ id: randomUUID(), role: "user", content: text });
}

const assistantTexts = (agent) => agent.messages.filter((m) => m.role === "assistant" && typeof m.content === "string" && m.content !== "").map((m) => m.content);
const last = (agent) => agent.messages.at(-1);

for (const aapVersion of ["3", "1", "2"]) {
  describe(`AAP version ${aapVersion}`, () => {
    before(async () => {
      bridge = await startBridge(["--demo-aap-version", aapVersion]);
    });
    after(async () => {
      await bridge?.stop();
    });

    for (const { label, lib, v1 } of clients) {
      describe(label, () => {
        test("a text conversation over three runs", async () => {
          const agent = newAgent(lib);
          const says = ["hello", "how are you", "goodbye"];
          const answers = [];
          for (const s of says) {
            say(agent, s);
            const r = await run(agent);
            const want = `You said: ${s}`;
            // The run brought exactly one message: its own answer, never an
            // earlier turn's answer again (which would mean the agent saw an
            // earlier user message twice).
            assert.deepEqual(r.result.newMessages.map((m) => [m.role, m.content]), [["assistant", want]]);
            for (const earlier of answers) assert.notEqual(r.result.newMessages[0].content, earlier);
            answers.push(want);
            assert.deepEqual(assistantTexts(agent), answers, "the answers, once each, in order");
            assert.equal(r.finished.outcome, "success");
          }
          assert.deepEqual(agent.messages.map((m) => m.role), ["user", "assistant", "user", "assistant", "user", "assistant"]);
          assert.equal((await bridge.sessionsOf(agent.threadId)).length, 1, "the thread stayed on one AAP session");
        });

        test("thinking", async () => {
          const agent = newAgent(lib);
          say(agent, "please think");
          const r = await run(agent);
          assert.ok(r.events.includes("REASONING_START") && r.events.includes("REASONING_END"));
          const reasoning = agent.messages.filter((m) => m.role === "reasoning");
          assert.equal(reasoning.length, 1, "a reasoning message");
          assert.equal(reasoning[0].content, "Thinking about: please think");
          assert.equal(last(agent).role, "assistant");
          assert.equal(last(agent).content, "Done thinking.");
          // The reasoning message goes back with the next run's history.
          say(agent, "thanks");
          await run(agent);
          assert.equal(last(agent).content, "You said: thanks");
          assert.equal((await bridge.sessionsOf(agent.threadId)).length, 1, "the reasoning message was not taken for new input");
        });

        test("a frontend tool round trip", async () => {
          const agent = newAgent(lib);
          say(agent, "What is the weather in Paris?");
          let r = await run(agent, { tools: [weatherTool] });
          const call = last(agent);
          assert.equal(call.role, "assistant");
          assert.equal(call.toolCalls?.length, 1);
          assert.equal(call.toolCalls[0].function.name, "get_weather");
          assert.deepEqual(JSON.parse(call.toolCalls[0].function.arguments), { location: "Paris" });
          assert.ok(!r.events.includes("TOOL_CALL_RESULT"), "the frontend runs it");
          assert.equal(r.finished.outcome, "success", "RUN_FINISHED without an outcome reads as success");
          if (v1) {
            // 1.0.0 works out which calls the frontend still has to run.
            assert.deepEqual(r.finished.pendingToolCallIds, [call.toolCalls[0].id]);
          }
          assert.deepEqual(agent.pendingInterrupts, []);

          agent.addMessage({ id: randomUUID(), role: "tool", toolCallId: call.toolCalls[0].id, content: "Sunny" });
          r = await run(agent, { tools: [weatherTool] });
          assert.deepEqual(r.result.newMessages.map((m) => m.content), ["The weather in Paris: Sunny"]);
          assert.equal(last(agent).content, "The weather in Paris: Sunny");
          assert.equal((await bridge.sessionsOf(agent.threadId)).length, 1, "the thread stayed on one AAP session");
        });

        for (const approved of [true, false]) {
          test(`a permission interrupt ${approved ? "approved" : "denied"} via resume`, async () => {
            const agent = newAgent(lib);
            say(agent, "search cats");
            const interruptedRun = randomUUID();
            const r = await run(agent, { runId: interruptedRun });
            assert.equal(r.finished.outcome, "interrupt");
            if (!v1) assert.equal(lib.getRunOutcome(r.finished.event).type, "interrupt", "0.0.59's getRunOutcome");
            // Both versions keep the open interrupts on the agent.
            assert.equal(agent.pendingInterrupts.length, 1);
            const it = agent.pendingInterrupts[0];
            assert.deepEqual(r.finished.interrupts, agent.pendingInterrupts);
            assert.equal(it.reason, "tool_call");
            assert.deepEqual(it.responseSchema.required, ["approved"]);
            const call = agent.messages.flatMap((m) => m.toolCalls ?? []).find((c) => c.id === it.toolCallId);
            assert.equal(call?.function.name, "web_search");

            // Both versions refuse, client-side, to run on without answering.
            say(agent, "never mind");
            await assert.rejects(agent.runAgent({ runId: randomUUID(), tools: [] }), /pending interrupt/);
            agent.setMessages(agent.messages.slice(0, -1));

            const payload = approved ? { approved: true } : { approved: false, reason: "not today" };
            const resume = lib.buildResumeArray(agent.pendingInterrupts, { [it.id]: { status: "resolved", payload } });
            assert.deepEqual(resume, [{ interruptId: it.id, status: "resolved", payload }]);
            // What CopilotKit (react-core >= 1.61.2) adds for a tool_call
            // interrupt, and its resume reuses the interrupted run's id.
            agent.addMessage({ id: randomUUID(), role: "tool", toolCallId: it.toolCallId, content: JSON.stringify(payload) });
            const res = await run(agent, { runId: interruptedRun, resume });
            assert.equal(res.finished.outcome, "success");
            assert.deepEqual(agent.pendingInterrupts, [], "nothing left open");
            const results = agent.messages.filter((m) => m.role === "tool" && m.toolCallId === it.toolCallId).map((m) => m.content);
            const result = approved
              ? "Results for cats: the demo index has three pages about cats."
              : "Tool call denied: not today";
            assert.ok(results.includes(result), `the result: ${JSON.stringify(results)}`);
            assert.equal(last(agent).content, approved ? `Here is what I found. ${result}` : "Search was not allowed: not today");

            say(agent, "thanks");
            await run(agent);
            assert.equal(last(agent).content, "You said: thanks", "the thread goes on");
            assert.equal((await bridge.sessionsOf(agent.threadId)).length, 1, "the thread stayed on one AAP session");
          });
        }

        test("a reload gets the thread back: an empty run hydrates a new agent", async () => {
          const agent = newAgent(lib);
          say(agent, "hello");
          await run(agent);
          say(agent, "search cats");
          const r = await run(agent);
          assert.equal(r.finished.outcome, "interrupt");
          const open = agent.pendingInterrupts;

          // A new page: a fresh HttpAgent on the same thread, with no messages.
          const again = new lib.HttpAgent({ url: `${bridge.base}/agents/demo`, threadId: agent.threadId });
          const h = await run(again);
          assert.deepEqual(h.events, ["RUN_STARTED", "MESSAGES_SNAPSHOT", "RUN_FINISHED"]);
          const shape = (msgs) => msgs.map((m) => [m.id, m.role, m.content ?? "", (m.toolCalls ?? []).map((c) => [c.id, c.function.name, c.function.arguments])]);
          assert.deepEqual(shape(again.messages), shape(agent.messages), "the same messages, under the same ids");
          assert.equal(h.finished.outcome, "interrupt");
          assert.deepEqual(again.pendingInterrupts, open, "the pending approval is back");

          // It answers the approval and goes on in the same AAP session.
          const it = again.pendingInterrupts[0];
          const resume = lib.buildResumeArray(again.pendingInterrupts, { [it.id]: { status: "resolved", payload: { approved: true } } });
          const res = await run(again, { resume });
          assert.equal(res.finished.outcome, "success");
          assert.equal(last(again).content, "Here is what I found. Results for cats: the demo index has three pages about cats.");
          say(again, "thanks");
          await run(again);
          assert.equal(last(again).content, "You said: thanks");
          assert.equal((await bridge.sessionsOf(agent.threadId)).length, 1, "one AAP session throughout");
        });

        test("a regenerate", async () => {
          const agent = newAgent(lib);
          say(agent, "first");
          await run(agent);
          say(agent, "second");
          await run(agent);
          const dropped = last(agent);
          agent.setMessages(agent.messages.slice(0, -1));
          const r = await run(agent);
          assert.equal(r.runError, null);
          assert.equal(r.result.newMessages.length, 1);
          assert.notEqual(r.result.newMessages[0].id, dropped.id, "a fresh answer");
          assert.equal(last(agent).content, "You said: second");
          assert.deepEqual(assistantTexts(agent), ["You said: first", "You said: second"]);
          say(agent, "third");
          await run(agent);
          assert.equal(last(agent).content, "You said: third", "the thread goes on");
          assert.equal((await bridge.sessionsOf(agent.threadId, 2)).length, 2, "one new session for the regenerate, kept afterwards");
        });

        test("an error", async (t) => {
          const agent = newAgent(lib);
          say(agent, "please fail");
          const r = await run(agent);
          // Neither version throws or calls onRunFailed for an in-band
          // RUN_ERROR: runAgent resolves, and onRunErrorEvent reports it.
          assert.equal(r.events.at(-1), "RUN_ERROR");
          assert.ok(r.runError, "onRunErrorEvent");
          assert.equal(r.runError.code, "AGENT_ERROR");
          assert.ok(r.runError.message);
          assert.equal(last(agent).role, "assistant");
          assert.equal(last(agent).content, "Starting…", "the partial text is kept");
          for (const w of r.tolerated) t.diagnostic(`known bug, tolerated: ${w}`);
          say(agent, "hello");
          await run(agent);
          assert.equal(last(agent).content, "You said: hello", "the thread goes on");
          assert.equal((await bridge.sessionsOf(agent.threadId)).length, 1);
        });

        // The same, without tolerating the known warning: RUN_ERROR must reach
        // the client as its schema describes it.
        test("an error, the RUN_ERROR taken as is", async () => {
          const agent = newAgent(lib);
          say(agent, "please fail");
          const r = await run(agent, { strict: true });
          assert.equal(r.runError?.code, "AGENT_ERROR");
        });
      });
    }
  });
}
