// The AG-UI streams of the golden conversations (testdata/golden, those the
// AAP→AG-UI translator produced) replayed to the real @ag-ui/client
// HttpAgent, in the version CopilotKit 1.7x pins (0.0.59) and in 1.0.0: each
// run must complete without the client's schema check or verifier
// objecting, and end with the messages the conversation says. The frames
// must also be byte for byte what @ag-ui/encoder writes for the same events.
import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { HttpAgent as HttpAgent100 } from "@ag-ui/client";
import { HttpAgent as HttpAgent0059 } from "agui-client-0059";
import { EventEncoder } from "@ag-ui/encoder";

const here = path.dirname(fileURLToPath(import.meta.url));
const goldenDir = path.join(here, "..", "..", "testdata", "golden");

// parseTxtar splits a txtar archive into its sections.
function parseTxtar(text) {
  const files = {};
  let name = null;
  for (const line of text.split("\n")) {
    const m = /^-- (.+) --$/.exec(line);
    if (m) {
      name = m[1];
      files[name] = "";
    } else if (name !== null) {
      files[name] += line + "\n";
    }
  }
  for (const k of Object.keys(files)) files[k] = files[k].replace(/\n$/, "");
  return files;
}

function frames(sse) {
  return sse.split("\n\n").filter((f) => f.trim() !== "").map((f) => f + "\n\n");
}

async function serve(body) {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "Content-Type": "text/event-stream" });
      res.end(body);
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return server;
}

const clients = [
  ["@ag-ui/client 1.0.0", HttpAgent100],
  ["@ag-ui/client 0.0.59", HttpAgent0059],
];

const goldens = fs.readdirSync(goldenDir).filter((f) => f.endsWith(".txtar")).sort();
assert.ok(goldens.length >= 14, "golden files found");

for (const file of goldens) {
  const sections = parseTxtar(fs.readFileSync(path.join(goldenDir, file), "utf8"));
  const opts = JSON.parse(sections["options.json"]);
  if (opts.source !== "aap") continue; // hand-written AG-UI inputs, some broken on purpose
  const turns = Object.keys(sections).filter((k) => /^turn\d+\.agui\.sse$/.test(k)).sort();
  for (const turn of turns) {
    const body = sections[turn] + "\n";
    const events = frames(body).map((f) => JSON.parse(f.slice("data: ".length)));

    test(`${file} ${turn}: frames are what @ag-ui/encoder writes`, () => {
      const enc = new EventEncoder();
      const ours = frames(body);
      events.forEach((ev, i) => assert.equal(ours[i], enc.encodeSSE(ev), `frame ${i}`));
    });

    for (const [label, HttpAgent] of clients) {
      test(`${file} ${turn}: ${label} runs it cleanly`, async () => {
        const server = await serve(body);
        try {
          const { port } = server.address();
          const agent = new HttpAgent({ url: `http://127.0.0.1:${port}/`, threadId: "thread-1" });
          const seen = [];
          let failed = null;
          await agent.runAgent({ runId: "client-run" }, {
            onEvent: ({ event }) => { seen.push(event.type); },
            onRunFailed: ({ error }) => { failed = error; },
          });
          assert.equal(failed, null, `run failed: ${failed}`);
          assert.equal(seen[0], "RUN_STARTED");
          assert.ok(["RUN_FINISHED", "RUN_ERROR"].includes(seen.at(-1)), `last event ${seen.at(-1)}`);
          // Every text the stream carried is in the client's messages.
          const texts = events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT");
          for (const id of new Set(texts.map((e) => e.messageId))) {
            const want = texts.filter((e) => e.messageId === id).map((e) => e.delta).join("");
            const msg = agent.messages.find((m) => m.id === id);
            assert.ok(msg, `message ${id} in the client's messages`);
            assert.equal(msg.content, want);
          }
          // Every tool call is on an assistant message with its arguments.
          for (const start of events.filter((e) => e.type === "TOOL_CALL_START")) {
            const args = events.filter((e) => e.type === "TOOL_CALL_ARGS" && e.toolCallId === start.toolCallId).map((e) => e.delta).join("");
            const call = agent.messages.flatMap((m) => m.toolCalls ?? []).find((c) => c.id === start.toolCallId);
            assert.ok(call, `tool call ${start.toolCallId}`);
            assert.equal(call.function.name, start.toolCallName);
            assert.equal(call.function.arguments, args);
          }
          for (const r of events.filter((e) => e.type === "TOOL_CALL_RESULT")) {
            const msg = agent.messages.find((m) => m.role === "tool" && m.toolCallId === r.toolCallId);
            assert.ok(msg, `tool result for ${r.toolCallId}`);
            assert.equal(msg.content, r.content);
          }
        } finally {
          server.close();
        }
      });
    }
  }
}
