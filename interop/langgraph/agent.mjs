// A LangGraph.js graph (graph.mjs, a scripted model following the demo
// script) served the way a LangGraph deployment is served to CopilotKit:
// the LangGraph API server (@langchain/langgraph-api, in-process, what
// `langgraph dev` runs) on a loopback port, and in front of it
// @ag-ui/langgraph's LangGraphAgent, each run's events written with
// @ag-ui/encoder on a node:http server. aap2agui's tests
// (bridge/aap2agui/langgraph_test.go) run it as an upstream. No network:
// the model is scripted and the server keeps its threads in a temporary
// directory.
//
// It listens on 127.0.0.1 on a free port and prints "LISTENING <port>" on
// stdout; everything else it logs goes to stderr.
//
// LANGGRAPH_INTERRUPTS=outcome (the default here) makes LangGraphAgent
// report interrupt() in RUN_FINISHED's interrupt outcome
// (emitInterruptOutcome: true); LANGGRAPH_INTERRUPTS=default keeps the
// adapter's defaults (a CUSTOM on_interrupt event only).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { serveAGUI } from "../agents/serve.mjs";

// The API server logs to stdout; the test reads the first line for the
// port.
const stdoutFd = 1;
process.stdout.write = process.stderr.write.bind(process.stderr);
process.env.LOG_LEVEL ??= "warn";
// The API server extracts a graph's input and output schemas by parsing its
// source with TypeScript, which fails for this .mjs graph (GET
// /assistants/:id/schemas answers 500); LangGraphAgent then uses its
// default input keys (messages, tools), which are what the graph reads.
// Given 1 ms, the parser fails at once rather than after seconds, and the
// SDK client below does not retry it (five retries with backoff took 20 s
// a run).
process.env.LANGGRAPH_SCHEMA_RESOLVE_TIMEOUT_MS ??= "1";
process.env.LANGSMITH_TRACING = "false";
process.env.LANGCHAIN_TRACING_V2 = "false";

const { startServer } = await import("@langchain/langgraph-api/server");
const { LangGraphAgent } = await import("@ag-ui/langgraph");
const { Client } = await import("@langchain/langgraph-sdk");
const { EventEncoder } = await import("@ag-ui/encoder");

const here = path.dirname(fileURLToPath(import.meta.url));
// The server's files (threads, checkpoints) go to LANGGRAPH_DATA_DIR (the
// tests give a directory they remove), else to a temporary directory.
const cwd = process.env.LANGGRAPH_DATA_DIR || fs.mkdtempSync(path.join(os.tmpdir(), "aapagui-langgraph-"));
const { host, cleanup } = await startServer({
  port: 0,
  nWorkers: 2,
  host: "127.0.0.1",
  cwd,
  graphs: { demo: path.join(here, "graph.mjs") + ":graph" },
});
const deploymentUrl = `http://${host}`;
const emitInterruptOutcome = (process.env.LANGGRAPH_INTERRUPTS ?? "outcome") === "outcome";

const server = serveAGUI(() => {
  const client = new Client({ apiUrl: deploymentUrl, callerOptions: { maxRetries: 0 } });
  return new LangGraphAgent({ deploymentUrl, graphId: "demo", emitInterruptOutcome, client });
}, EventEncoder);

const stop = async () => {
  server.close();
  await cleanup().catch(() => {});
  if (!process.env.LANGGRAPH_DATA_DIR) fs.rmSync(cwd, { recursive: true, force: true });
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);

server.listen(0, "127.0.0.1", () => {
  fs.writeSync(stdoutFd, `LISTENING ${server.address().port}\n`);
});
