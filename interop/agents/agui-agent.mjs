// An AG-UI agent written the way a Node AG-UI server is: node:http, the
// official @ag-ui/encoder to write the SSE stream and @ag-ui/core's event
// types. aap2agui's interop test (bridge/aap2agui/nodeagent_test.go) runs
// it as an upstream, so that the bridge is checked against the bytes a real
// AG-UI server sends rather than only against the Go demo agent.
//
// It listens on 127.0.0.1 on a free port, prints "LISTENING <port>" on
// stdout, and answers each POST (a RunAgentInput) with one run chosen by
// the last user message:
//
//   text        a text message (START, CONTENT, CONTENT, END)
//   chunks      TEXT_MESSAGE_CHUNKs, then TOOL_CALL_CHUNKs calling the
//               client tool get_weather {"location":"Paris"}
//   reasoning   REASONING_* events, then a text message
//   state       STATE_SNAPSHOT and STATE_DELTA, then a text message
//   show state  a text message holding the input's state (keys sorted)
//   interrupt   a web_search tool call, then RUN_FINISHED with an interrupt
//               outcome (reason tool_call) asking permission for it
//   other       "Node heard: <message>"
//
// A run whose input has resume entries answers them: a TOOL_CALL_RESULT per
// entry (the search's result if approved, a denial if not) and a text
// message. A run whose last message is a tool result says what it got.
import http from "node:http";
import { EventEncoder } from "@ag-ui/encoder";
import { EventType } from "@ag-ui/core";

// interruptPrefix makes an interrupt id from the tool call it guards.
const interruptPrefix = "interrupt-";

function lastUserText(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role !== "user") continue;
    if (typeof m.content === "string") return m.content;
    if (Array.isArray(m.content)) {
      return m.content.filter((p) => p.type === "text").map((p) => p.text).join(" ");
    }
    return "";
  }
  return "";
}

// stableStringify writes JSON with object keys sorted, so that the output
// does not depend on key order.
function stableStringify(v) {
  if (Array.isArray(v)) return "[" + v.map(stableStringify).join(",") + "]";
  if (v && typeof v === "object") {
    return "{" + Object.keys(v).sort().map((k) => JSON.stringify(k) + ":" + stableStringify(v[k])).join(",") + "}";
  }
  return JSON.stringify(v === undefined ? null : v);
}

// run writes the events of one run through send.
function run(input, send) {
  const { threadId, runId } = input;
  const messages = input.messages ?? [];
  const text = (id, ...deltas) => {
    send({ type: EventType.TEXT_MESSAGE_START, messageId: id, role: "assistant" });
    for (const delta of deltas) send({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: id, delta });
    send({ type: EventType.TEXT_MESSAGE_END, messageId: id });
  };
  const finished = () => send({ type: EventType.RUN_FINISHED, threadId, runId });

  send({ type: EventType.RUN_STARTED, threadId, runId });

  if (Array.isArray(input.resume) && input.resume.length > 0) {
    let verdict = "approved.";
    for (const entry of input.resume) {
      const toolCallId = entry.interruptId.startsWith(interruptPrefix) ? entry.interruptId.slice(interruptPrefix.length) : entry.interruptId;
      const approved = entry.status === "resolved" && entry.payload?.approved === true;
      if (!approved) verdict = "denied.";
      send({
        type: EventType.TOOL_CALL_RESULT,
        messageId: `result-${toolCallId}`,
        toolCallId,
        content: approved ? "Search results for node" : "Search was denied",
        role: "tool",
      });
    }
    text(`${runId}-resumed`, "Resumed: ", verdict);
    finished();
    return;
  }

  const last = messages[messages.length - 1];
  if (last && last.role === "tool") {
    text(`${runId}-tool`, "Tool said: ", String(last.content));
    finished();
    return;
  }

  switch (lastUserText(messages).trim().toLowerCase()) {
    case "text":
      text(`${runId}-text`, "Hello ", "from Node.");
      break;
    case "chunks": {
      const messageId = `${runId}-chunks`;
      send({ type: EventType.TEXT_MESSAGE_CHUNK, messageId, role: "assistant", delta: "Checking " });
      send({ type: EventType.TEXT_MESSAGE_CHUNK, messageId, delta: "the weather." });
      send({ type: EventType.TOOL_CALL_CHUNK, toolCallId: "node-call-1", toolCallName: "get_weather", parentMessageId: messageId, delta: '{"location":' });
      send({ type: EventType.TOOL_CALL_CHUNK, toolCallId: "node-call-1", delta: '"Paris"}' });
      break;
    }
    case "reasoning": {
      const messageId = `${runId}-reasoning`;
      send({ type: EventType.REASONING_START, messageId });
      send({ type: EventType.REASONING_MESSAGE_START, messageId, role: "reasoning" });
      send({ type: EventType.REASONING_MESSAGE_CONTENT, messageId, delta: "Let me " });
      send({ type: EventType.REASONING_MESSAGE_CONTENT, messageId, delta: "think." });
      send({ type: EventType.REASONING_MESSAGE_END, messageId });
      send({ type: EventType.REASONING_END, messageId });
      text(`${runId}-text`, "Thought it ", "through.");
      break;
    }
    case "state":
      send({ type: EventType.STATE_SNAPSHOT, snapshot: { counter: 1, from: "node" } });
      send({ type: EventType.STATE_DELTA, delta: [{ op: "replace", path: "/counter", value: 2 }, { op: "add", path: "/items", value: ["a"] }] });
      text(`${runId}-text`, "State ", "updated.");
      break;
    case "show state":
      text(`${runId}-text`, "State: ", stableStringify(input.state));
      break;
    case "interrupt": {
      const toolCallId = "node-search-1";
      send({ type: EventType.TOOL_CALL_START, toolCallId, toolCallName: "web_search", parentMessageId: `${runId}-search` });
      send({ type: EventType.TOOL_CALL_ARGS, toolCallId, delta: '{"query":' });
      send({ type: EventType.TOOL_CALL_ARGS, toolCallId, delta: '"node"}' });
      send({ type: EventType.TOOL_CALL_END, toolCallId });
      send({
        type: EventType.RUN_FINISHED,
        threadId,
        runId,
        outcome: {
          type: "interrupt",
          interrupts: [{ id: interruptPrefix + toolCallId, reason: "tool_call", toolCallId, message: "Allow web_search for node?" }],
        },
      });
      return;
    }
    default:
      text(`${runId}-text`, "Node heard: ", lastUserText(messages));
  }
  finished();
}

const server = http.createServer(async (req, res) => {
  if (req.method !== "POST") {
    res.writeHead(405, { "Content-Type": "application/json", Allow: "POST" });
    res.end(JSON.stringify({ error: { code: "method_not_allowed", message: "POST a RunAgentInput" } }));
    return;
  }
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  let input;
  try {
    input = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch (err) {
    res.writeHead(400, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ error: { code: "invalid_body", message: String(err) } }));
    return;
  }
  const encoder = new EventEncoder({ accept: req.headers.accept });
  res.writeHead(200, { "Content-Type": encoder.getContentType(), "Cache-Control": "no-cache" });
  run(input, (event) => res.write(encoder.encode(event)));
  res.end();
});

server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`LISTENING ${server.address().port}\n`);
});

// The test kills the process; end cleanly on a polite signal too.
for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
