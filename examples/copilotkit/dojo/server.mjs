// The CopilotKit runtime of the dojo page (the v2 entry of
// @copilotkit/runtime), holding every feature of the AG-UI all-features
// server starter twice: direct_<feature>, an HttpAgent pointed straight at
// the starter (go run ./cmd/dojoagent: <STARTER_URL>/<feature>), and
// chain_<feature>, one pointed at agui2aap (<AGUI2AAP_URL>/agents/<feature>)
// in front of aap2agui (--agent-config examples/dojo-agents.yaml) in front
// of the same starter. It serves the built page (dojo/dist) too, so that
// the browser talks to one origin.
//
//   STARTER_URL=http://127.0.0.1:8000 AGUI2AAP_URL=http://127.0.0.1:8081 PORT=3001 node dojo/server.mjs
//
// Environment:
//   STARTER_URL   the starter's base URL (required)
//   AGUI2AAP_URL  agui2aap's base URL (required)
//   AGUI2AAP_API_KEY  the key the chain's agents send agui2aap (Authorization:
//                 Bearer …) when it runs with --api-key
//   PORT, HOST    where to listen (default 127.0.0.1:3001)
//   LOG_RUNS      a file to append every RunAgentInput an agent sends
//                 (">> agent {…}") and the events that answered it
//                 ("<< agent {…}") to, one a line
import { appendFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import { extname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";

import { HttpAgent } from "@ag-ui/client";
import { CopilotRuntime, InMemoryAgentRunner } from "@copilotkit/runtime/v2";
import { createCopilotNodeListener } from "@copilotkit/runtime/v2/node";

process.env.COPILOTKIT_TELEMETRY_DISABLED = "true";

const starterURL = process.env.STARTER_URL?.replace(/\/+$/, "");
const aguiURL = process.env.AGUI2AAP_URL?.replace(/\/+$/, "");
if (!starterURL || !aguiURL) {
  console.error("dojo/server.mjs: set STARTER_URL (the starter's base URL) and AGUI2AAP_URL (agui2aap's)");
  process.exit(2);
}
const host = process.env.HOST || "127.0.0.1";
const port = Number(process.env.PORT || 3001);
const logRuns = process.env.LOG_RUNS;
const chainHeaders = process.env.AGUI2AAP_API_KEY ? { Authorization: `Bearer ${process.env.AGUI2AAP_API_KEY}` } : {};
const basePath = "/api/copilotkit";
const dist = fileURLToPath(new URL("./dist/", import.meta.url));

export const features = [
  "agentic_chat",
  "backend_tool_rendering",
  "human_in_the_loop",
  "agentic_generative_ui",
  "tool_based_generative_ui",
  "shared_state",
  "predictive_state_updates",
];

// logged is a fetch that records, when LOG_RUNS names a file, each request
// body (a RunAgentInput) and the event stream that answered it.
function logged(agent) {
  return async (url, init) => {
    if (!logRuns) return fetch(url, init);
    appendFileSync(logRuns, `>> ${agent} ${typeof init?.body === "string" ? init.body : ""}\n`);
    const res = await fetch(url, init);
    if (!res.body) return res;
    const [mine, theirs] = res.body.tee();
    (async () => {
      const text = await new Response(mine).text();
      const events = text
        .split("\n")
        .filter((line) => line.startsWith("data: "))
        .map((line) => `<< ${agent} ${line.slice(6)}`);
      appendFileSync(logRuns, `<< ${agent} HTTP ${res.status}\n${events.join("\n")}\n`);
    })().catch(() => {});
    return new Response(theirs, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

function agents() {
  const out = {};
  for (const f of features) {
    out[`direct_${f}`] = new HttpAgent({ url: `${starterURL}/${f}`, fetch: logged(`direct_${f}`) });
    out[`chain_${f}`] = new HttpAgent({ url: `${aguiURL}/agents/${f}`, headers: chainHeaders, fetch: logged(`chain_${f}`) });
  }
  return out;
}

const runtime = new CopilotRuntime({ agents, runner: new InMemoryAgentRunner() });
const copilot = createCopilotNodeListener({ runtime, basePath, activateChannels: false });

const types = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".woff2": "font/woff2",
};

// serveStatic answers GET/HEAD with a file of dist/, or index.html.
async function serveStatic(req, res) {
  const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
  let file = normalize(join(dist, path));
  if (!file.startsWith(dist) || file.endsWith(sep)) file = join(dist, "index.html");
  let body;
  try {
    body = await readFile(file);
  } catch {
    file = join(dist, "index.html");
    try {
      body = await readFile(file);
    } catch {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("page not built: run vite build --config dojo/vite.config.js\n");
      return;
    }
  }
  res.writeHead(200, { "Content-Type": types[extname(file)] || "application/octet-stream", "Cache-Control": "no-store" });
  res.end(req.method === "HEAD" ? undefined : body);
}

const server = createServer((req, res) => {
  const path = new URL(req.url, "http://x").pathname;
  if (path === "/healthz") {
    res.writeHead(200, { "Content-Type": "text/plain" }).end("ok\n");
  } else if (path === basePath || path.startsWith(basePath + "/")) {
    copilot(req, res).catch((err) => {
      console.error("runtime:", err);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  } else if (req.method === "GET" || req.method === "HEAD") {
    serveStatic(req, res);
  } else {
    res.writeHead(405).end();
  }
});

server.listen(port, host, () => {
  console.log(`dojo runtime on http://${host}:${port}${basePath}: direct_<feature> → ${starterURL}, chain_<feature> → ${aguiURL}/agents`);
});

for (const sig of ["SIGINT", "SIGTERM"]) {
  process.on(sig, () => {
    server.close();
    server.closeAllConnections();
    process.exit(0);
  });
}
