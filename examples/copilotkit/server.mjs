// A CopilotKit runtime (the v2 entry of @copilotkit/runtime) whose one agent,
// "demo", is an AG-UI HttpAgent pointed at agui2aap. It also serves the built
// page from dist/, so the browser talks to a single origin.
//
//   AGUI2AAP_URL=http://127.0.0.1:8081 PORT=3000 node server.mjs
//
// Environment:
//   AGUI2AAP_URL      agui2aap's base URL (required); the agent is <url>/agents/demo
//   PORT, HOST        where to listen (default 127.0.0.1:3000)
//   LOG_RUNS          a file to append every RunAgentInput sent to agui2aap
//                     (">> {…}") and the events that answered it ("<< runId {…}")
//                     to, one a line: what CopilotKit and agui2aap really said
import { appendFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import { extname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";

import { HttpAgent } from "@ag-ui/client";
import { CopilotRuntime } from "@copilotkit/runtime/v2";
import { createCopilotNodeListener } from "@copilotkit/runtime/v2/node";

process.env.COPILOTKIT_TELEMETRY_DISABLED = "true";

const aguiURL = process.env.AGUI2AAP_URL;
if (!aguiURL) {
  console.error("server.mjs: set AGUI2AAP_URL to agui2aap's base URL, e.g. http://127.0.0.1:8081");
  process.exit(2);
}
const host = process.env.HOST || "127.0.0.1";
const port = Number(process.env.PORT || 3000);
const logRuns = process.env.LOG_RUNS;
const basePath = "/api/copilotkit";
const dist = fileURLToPath(new URL("./dist/", import.meta.url));

// fetchLogged records each request body (a RunAgentInput) and the event
// stream that answers it, when LOG_RUNS names a file.
async function fetchLogged(url, init) {
  if (!logRuns) return fetch(url, init);
  const input = typeof init?.body === "string" ? init.body : "";
  const runId = (() => {
    try {
      return JSON.parse(input).runId;
    } catch {
      return "";
    }
  })();
  appendFileSync(logRuns, `>> ${input}\n`);
  const res = await fetch(url, init);
  if (!res.body) return res;
  const [mine, theirs] = res.body.tee();
  (async () => {
    const text = await new Response(mine).text();
    const events = text
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => `<< ${runId} ${line.slice(6)}`);
    appendFileSync(logRuns, `<< ${runId} HTTP ${res.status}\n` + events.join("\n") + "\n");
  })().catch(() => {});
  return new Response(theirs, { status: res.status, statusText: res.statusText, headers: res.headers });
}

const runtime = new CopilotRuntime({
  agents: {
    demo: new HttpAgent({
      url: aguiURL.replace(/\/+$/, "") + "/agents/demo",
      fetch: fetchLogged,
    }),
  },
});

const copilot = createCopilotNodeListener({ runtime, basePath, activateChannels: false });

const types = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".json": "application/json",
  ".woff2": "font/woff2",
  ".png": "image/png",
};

// serveStatic answers GET/HEAD with a file of dist/, or index.html for any
// other path so that the page's own routes load too.
async function serveStatic(req, res) {
  const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
  let file = normalize(join(dist, path));
  if (!file.startsWith(dist) || file.endsWith(sep)) {
    file = join(dist, "index.html");
  }
  let body;
  try {
    body = await readFile(file);
  } catch {
    file = join(dist, "index.html");
    try {
      body = await readFile(file);
    } catch {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("page not built: run npm run build\n");
      return;
    }
  }
  res.writeHead(200, {
    "Content-Type": types[extname(file)] || "application/octet-stream",
    "Cache-Control": "no-store",
  });
  res.end(req.method === "HEAD" ? undefined : body);
}

const server = createServer((req, res) => {
  const path = new URL(req.url, "http://x").pathname;
  if (path === "/healthz") {
    res.writeHead(200, { "Content-Type": "text/plain" }).end("ok\n");
    return;
  }
  if (path === basePath || path.startsWith(basePath + "/")) {
    copilot(req, res).catch((err) => {
      console.error("runtime:", err);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
    return;
  }
  if (req.method === "GET" || req.method === "HEAD") {
    serveStatic(req, res);
    return;
  }
  res.writeHead(405).end();
});

server.listen(port, host, () => {
  console.log(`copilotkit runtime on http://${host}:${port}${basePath}, agent demo → ${aguiURL}/agents/demo`);
});

for (const sig of ["SIGINT", "SIGTERM"]) {
  process.on(sig, () => {
    server.close();
    server.closeAllConnections();
    process.exit(0);
  });
}
