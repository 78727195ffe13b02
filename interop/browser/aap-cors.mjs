// A real cross-origin AAP web client: Debian's Chromium (driven by
// playwright-core, no browser download) opens a page served from one
// origin, and the page's own fetch calls talk to aap2agui on another, the
// way the official AAP web client does. .ci/aap-browser-test.sh starts
// aap2agui with --cors-origin naming the page's origin and an API key.
//
//   AAP_URL=http://127.0.0.1:8080 API_KEY=k PAGE_PORT=3001 OTHER_PORT=3002 node aap-cors.mjs
//
// It checks what the page sees: /meta, a session, a streamed turn and the
// history, all with the key in Authorization and JSON bodies (so every
// call needs a preflight); and that a page on an origin that is not listed
// gets nothing ("Failed to fetch").
import { createServer } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const aapURL = process.env.AAP_URL;
const apiKey = process.env.API_KEY;
const pagePort = Number(process.env.PAGE_PORT);
const otherPort = Number(process.env.OTHER_PORT);
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
if (!aapURL || !apiKey || !pagePort || !otherPort) {
  console.error("set AAP_URL, API_KEY, PAGE_PORT and OTHER_PORT");
  process.exit(2);
}

// A page server per origin: the same blank page on two ports.
function servePage(port) {
  const srv = createServer((req, res) => {
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    res.end("<!doctype html><title>AAP web client</title><p>AAP web client</p>");
  });
  return new Promise((resolve) => srv.listen(port, "127.0.0.1", () => resolve(srv)));
}

// client runs in the page: an AAP conversation over fetch, as a web client
// would hold it. It returns what it saw.
async function client({ base, key }) {
  const auth = { Authorization: `Bearer ${key}` };
  const json = { ...auth, "Content-Type": "application/json" };
  const out = {};
  let r = await fetch(`${base}/meta`, { headers: auth });
  out.metaStatus = r.status;
  out.agents = (await r.json()).agents.map((a) => a.name);
  out.requestId = r.headers.get("X-Request-Id");

  r = await fetch(`${base}/sessions`, {
    method: "POST",
    headers: json,
    body: JSON.stringify({ agent: { name: "demo" } }),
  });
  out.createStatus = r.status;
  const { sessionId } = await r.json();

  r = await fetch(`${base}/sessions/${sessionId}/turns`, {
    method: "POST",
    headers: { ...json, Accept: "text/event-stream" },
    body: JSON.stringify({ stream: "delta", messages: [{ role: "user", content: "hello from the browser" }] }),
  });
  out.turnStatus = r.status;
  out.turnType = r.headers.get("Content-Type");
  // Read the stream as it comes, as a web client does.
  const reader = r.body.getReader();
  const dec = new TextDecoder();
  let sse = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    sse += dec.decode(value, { stream: true });
  }
  out.events = sse.split("\n").filter((l) => l.startsWith("event: ")).map((l) => l.slice(7));
  out.text = sse
    .split("\n")
    .filter((l) => l.startsWith("data: "))
    .map((l) => JSON.parse(l.slice(6)))
    .filter((d) => typeof d.delta === "string")
    .map((d) => d.delta)
    .join("");

  r = await fetch(`${base}/sessions/${sessionId}/history?type=full`, { headers: auth });
  out.history = (await r.json()).history.full.map((m) => `${m.role}: ${typeof m.content === "string" ? m.content : JSON.stringify(m.content)}`);

  r = await fetch(`${base}/sessions/${sessionId}`, { method: "DELETE", headers: auth });
  out.deleteStatus = r.status;
  return out;
}

// blocked runs in a page on an origin aap2agui does not list.
async function blocked({ base, key }) {
  try {
    await fetch(`${base}/meta`, { headers: { Authorization: `Bearer ${key}` } });
    return "fetched";
  } catch (e) {
    return `${e.name}: ${e.message}`;
  }
}

let failed = 0;
function check(name, ok, got) {
  if (ok) {
    console.log(`ok - ${name}`);
  } else {
    failed++;
    console.log(`not ok - ${name}: got ${JSON.stringify(got)}`);
  }
}

const servers = [await servePage(pagePort), await servePage(otherPort)];
const userDataDir = mkdtempSync(join(tmpdir(), "aap-cors-chromium-"));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const consoleLog = [];
try {
  const page = context.pages()[0] ?? (await context.newPage());
  page.on("console", (m) => consoleLog.push(`[${m.type()}] ${m.text()}`));
  page.setDefaultTimeout(30000);

  await page.goto(`http://127.0.0.1:${pagePort}/`);
  const got = await page.evaluate(client, { base: aapURL, key: apiKey });
  check("GET /meta from the page", got.metaStatus === 200 && got.agents.includes("demo"), got);
  check("the page reads X-Request-Id", typeof got.requestId === "string" && got.requestId.length > 0, got.requestId);
  check("POST /sessions from the page", got.createStatus === 201, got.createStatus);
  check("a streamed turn from the page", got.turnStatus === 200 && got.turnType.startsWith("text/event-stream"), got);
  check(
    "the turn's events",
    got.events[0] === "turn_start" && got.events.includes("text_delta") && got.events.at(-1) === "turn_stop",
    got.events,
  );
  check("the streamed answer", got.text === "You said: hello from the browser", got.text);
  check(
    "the history",
    JSON.stringify(got.history) === JSON.stringify(["user: hello from the browser", "assistant: You said: hello from the browser"]),
    got.history,
  );
  check("DELETE from the page", got.deleteStatus === 204, got.deleteStatus);

  await page.goto(`http://127.0.0.1:${otherPort}/`);
  const err = await page.evaluate(blocked, { base: aapURL, key: apiKey });
  check("a page on another origin is refused", err.startsWith("TypeError"), err);
  check("the refusal is logged by the browser as a CORS failure", consoleLog.some((l) => /CORS/i.test(l)), consoleLog);
} finally {
  await context.close();
  rmSync(userDataDir, { recursive: true, force: true });
  for (const s of servers) s.close();
}
if (failed > 0) {
  console.log(`${failed} check(s) failed; browser console:\n${consoleLog.join("\n")}`);
  process.exit(1);
}
console.log("aap2agui CORS browser test passed");
