// A CopilotKit runtime (the v2 entry of @copilotkit/runtime) whose one agent,
// "demo", is an AG-UI HttpAgent pointed at agui2aap. It also serves the built
// page from dist/, so the browser talks to a single origin.
//
// Threads outlive this process: its runner (HydratingRunner) keeps runs in
// memory like CopilotKit's default one, and answers a connect for a thread it
// does not hold with agui2aap's connect (POST <agent>/connect): the thread's
// run still in flight on any agui2aap replica, from its RUN_STARTED and live
// to its end, else the thread's messages and its open interrupts, as a
// hydration. GET /api/threads lists the threads agui2aap holds, for the
// page's thread list.
//
// A stop (the page's Stop button) ends the thread's run on purpose: the
// runner sends agui2aap DELETE <agent>/threads/<threadId>/run with the run's
// own headers (the API key and the user), which stops the run on whichever
// agui2aap replica runs it, under either --on-client-gone (with finish, a
// run goes on without its client, so that a restarted runtime can join it:
// closing the connection alone would not stop it); agui2aap cancels the AAP
// turn, keeps what came in the thread and frees it. The runner then closes
// the page's connection, as CopilotKit's own runner does.
//
// Every user signs in (session.mjs: POST /api/signin sets a signed, HttpOnly
// session cookie). The runtime answers 401 to a run, a connect or
// /api/threads without a session, and names the session's user to agui2aap
// in its user header (X-User-Id), so that agui2aap (run with --user-header
// X-User-Id) keeps each user's threads apart under the one API key. That
// header is set here, from the session, and only here: one the browser sends
// is dropped before anything reads the request, or any browser could claim
// to be anyone.
//
//   AGUI2AAP_URL=http://127.0.0.1:8081 PORT=3000 node server.mjs
//
// Environment:
//   AGUI2AAP_URL      agui2aap's base URL (required); the agent is <url>/agents/demo
//   AGUI2AAP_API_KEY  the API key the runtime sends agui2aap (Authorization:
//                     Bearer …) when agui2aap runs with --api-key; without it,
//                     an Authorization header the page sends is passed on
//                     (CopilotKit forwards it on runs, and so do the
//                     hydration and /api/threads here). agui2aap's threads
//                     are per key and user.
//   AGUI2AAP_USER_HEADER  the header that names the user to agui2aap, as its
//                     --user-header (default X-User-Id)
//   DEMO_USERS, SESSION_SECRET  the accounts and the cookies' key (session.mjs)
//   PORT, HOST        where to listen (default 127.0.0.1:3000)
//   LOG_RUNS          a file to append every RunAgentInput sent to agui2aap
//                     (">> {…}") and the events that answered it ("<< runId {…}")
//                     to, one a line: what CopilotKit and agui2aap really said
import { AsyncLocalStorage } from "node:async_hooks";
import { appendFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import { extname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";

import { EventType, HttpAgent } from "@ag-ui/client";
import { CopilotRuntime, InMemoryAgentRunner } from "@copilotkit/runtime/v2";
import { createCopilotNodeListener } from "@copilotkit/runtime/v2/node";
import { Observable, catchError, map, of, throwError } from "rxjs";

import { checkPassword, sessionCookie, sessionUser, signedOutCookie } from "./session.mjs";

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

const agentURL = aguiURL.replace(/\/+$/, "") + "/agents/demo";
const apiKey = process.env.AGUI2AAP_API_KEY;
const userHeader = process.env.AGUI2AAP_USER_HEADER || "X-User-Id";

// requestUser holds the signed-in user of the request in hand: the server
// below runs each request it lets through inside requestUser.run(user, …),
// with the user its session cookie names, and the agent (its user header)
// and the runner (the part of its memory it reads) take the user from here.
const requestUser = new AsyncLocalStorage();

// currentUser is the user of the request in hand. Outside of one it throws:
// a thread is never read or run without knowing whose it is.
function currentUser() {
  const user = requestUser.getStore();
  if (!user) throw new Error("no signed-in user for this request");
  return user;
}

// agentHeaders are the headers the runtime sends agui2aap for the request in
// hand: the API key, and the user its session signs in.
function agentHeaders() {
  return { ...(apiKey ? { Authorization: `Bearer ${apiKey}` } : {}), [userHeader]: currentUser() };
}

// sseEvents yields the JSON of each event of an SSE body (data: lines,
// events separated by a blank line; CR LF, CR and LF alike).
async function* sseEvents(body) {
  const decoder = new TextDecoder();
  let buffer = "";
  let data = [];
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    const lines = buffer.split(/\r\n|\r|\n/);
    buffer = lines.pop();
    for (const line of lines) {
      if (line === "") {
        if (data.length > 0) yield JSON.parse(data.join("\n"));
        data = [];
      } else if (line.startsWith("data:")) {
        data.push(line.slice(line[5] === " " ? 6 : 5));
      }
    }
  }
  if (data.length > 0) yield JSON.parse(data.join("\n"));
}

// threadKey is the key the runner keeps a thread under: the thread id within
// the user's own space, as agui2aap keeps it. CopilotKit's in-memory runner
// keys its (process-wide) store by thread id alone, so without this a user
// who opens another's thread id would be replayed that thread from memory,
// and a thread id two users both use would be one conversation here.
function threadKey(threadId) {
  return JSON.stringify([currentUser(), threadId]);
}

// HydratingRunner is CopilotKit's in-memory runner, with its memory kept per
// user (threadKey), except that a connect for a thread this process holds
// nothing of (it restarted, or another replica ran the thread) gets the
// thread from agui2aap's connect: its run in flight, followed to its end;
// else RUN_STARTED, a MESSAGES_SNAPSHOT under the ids the page saw, and
// RUN_FINISHED with the interrupts still open, so a pending approval shows
// again. The next run sends those messages back and agui2aap continues the
// same AAP session.
class HydratingRunner extends InMemoryAgentRunner {
  constructor(options) {
    super(options);
    // CopilotKit's own thread routes (list, messages, events, state and
    // clear, under /api/copilotkit/threads) would read and wipe the threads
    // of every user this process holds: the page's thread list is
    // agui2aap's (/api/threads), which is per user, and those routes answer
    // that they are not available.
    this.ɵsupportsLocalThreadEndpoints = false;
  }

  // run runs the thread, unless a run of it is going on: then the page
  // gets RUN_ERROR run_in_progress, as when agui2aap refuses it (below).
  // CopilotKit's own runner throws "Thread already running" there
  // (@copilotkit/runtime 1.75.0, InMemoryAgentRunner.run), which its SSE
  // handler answers with an empty stream: no reply, no error, the message
  // lost. A refused run is not kept in the runtime's memory, so a reload
  // shows the thread as it is; the user sends the message again.
  run(request) {
    let events;
    try {
      events = super.run({ ...request, threadId: threadKey(request.threadId) });
    } catch (err) {
      if (err?.message !== "Thread already running") throw err;
      return of(runError(runInProgress, "a run is already in progress on this thread; wait for it to finish, then send the message again"));
    }
    // agui2aap's refusal of the run before its stream (409
    // run_in_progress when another runtime, or a run this one no longer
    // holds after a restart, has the thread): CopilotKit's runner ends the
    // run with RUN_ERROR INCOMPLETE_STREAM and the error's text, and keeps
    // nothing of it; the page gets agui2aap's code and message instead.
    return events.pipe(
      map((event) => {
        const refusal = request.agent.refusal;
        return event.type === EventType.RUN_ERROR && refusal ? runError(refusal.code, refusal.message) : event;
      }),
    );
  }

  isRunning(request) {
    return super.isRunning({ ...request, threadId: threadKey(request.threadId) });
  }

  // stop ends the thread's run with agui2aap's DELETE of it (stopRun), then
  // closes the page's connection to it; it reports whether a run was
  // stopped: one agui2aap ran (202), or one this process held.
  async stop(request) {
    const stopped = await stopRun(request.threadId);
    const closed = await super.stop({ ...request, threadId: threadKey(request.threadId) });
    return stopped || Boolean(closed);
  }

  connect(request) {
    const held = super.connect({ ...request, threadId: threadKey(request.threadId) });
    return new Observable((subscriber) => {
      let any = false;
      let stopped = false;
      const controller = new AbortController();
      const inner = held.subscribe({
        next: (event) => {
          any = true;
          subscriber.next(event);
        },
        error: (err) => subscriber.error(err),
        complete: () => {
          if (any) {
            subscriber.complete();
            return;
          }
          // request.headers are the agent's own headers (the key and the
          // user) and those the page sent that CopilotKit forwards (an
          // Authorization without AGUI2AAP_API_KEY), as on a run: the
          // thread is asked for as the key and the user that ran it.
          connectThread(request.threadId, request.headers, controller.signal, (event) => !stopped && subscriber.next(event))
            .then(() => subscriber.complete())
            .catch((err) => {
              if (stopped) return;
              console.error(`connecting thread ${request.threadId}:`, err.message);
              subscriber.complete(); // an empty thread, as without hydration
            });
        },
      });
      return () => {
        stopped = true;
        controller.abort();
        inner.unsubscribe();
      };
    });
  }
}

// stopRun asks agui2aap to stop thread threadId's run in flight (DELETE
// <agent>/threads/<threadId>/run), with the headers of the request's user:
// true when it did (202); false when the thread has no run in flight (404)
// or agui2aap could not be asked (logged).
async function stopRun(threadId) {
  try {
    const res = await fetch(`${agentURL}/threads/${encodeURIComponent(threadId)}/run`, {
      method: "DELETE",
      headers: { ...agentHeaders(), Accept: "application/json" },
    });
    const body = await res.text();
    if (res.status !== 202 && res.status !== 404) {
      console.error(`stopping thread ${threadId}: agui2aap answered ${res.status}: ${body.slice(0, 300)}`);
    }
    return res.status === 202;
  } catch (err) {
    console.error(`stopping thread ${threadId}:`, err.message);
    return false;
  }
}

// connectThread asks agui2aap's connect for thread threadId (a
// RunAgentInput with no messages), sending headers (the connect's), and
// passes each event of the answer to emit: the thread's run in flight, or
// its conversation.
async function connectThread(threadId, headers, signal, emit) {
  const res = await fetchLogged(`${agentURL}/connect`, {
    method: "POST",
    headers: { ...headers, "Content-Type": "application/json", Accept: "text/event-stream" },
    body: JSON.stringify({
      threadId,
      runId: crypto.randomUUID(),
      state: {},
      messages: [],
      tools: [],
      context: [],
      forwardedProps: {},
    }),
    signal,
  });
  if (!res.ok || !res.body) {
    throw new Error(`agui2aap answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  }
  for await (const event of sseEvents(res.body)) emit(event);
}

// runInProgress is the code of a run refused because another run of the
// thread is going on: agui2aap's (409 run_in_progress), and this runtime's.
const runInProgress = "run_in_progress";

// runError is the RUN_ERROR that ends a refused run: CopilotKit shows its
// message in the page's error banner.
function runError(code, message) {
  return { type: EventType.RUN_ERROR, code, message };
}

// Agui2aapAgent is an HttpAgent for agui2aap that remembers agui2aap's
// refusal of a run before its stream (a JSON error such as 409
// run_in_progress; HttpAgent's error carries the status and the parsed
// body), for HydratingRunner.run to give the page.
class Agui2aapAgent extends HttpAgent {
  run(input) {
    return super.run(input).pipe(
      catchError((err) => {
        const body = err?.payload?.error;
        if (typeof err?.status === "number" && typeof body?.code === "string") {
          this.refusal = { code: body.code, message: body.message || `agui2aap answered ${err.status}` };
        }
        return throwError(() => err);
      }),
    );
  }
}

const runtime = new CopilotRuntime({
  // The agents are made per request (CopilotKit clones them per request
  // anyway), with the headers of the request's user.
  agents: () => ({
    demo: new Agui2aapAgent({ url: agentURL, headers: agentHeaders(), fetch: fetchLogged }),
  }),
  runner: new HydratingRunner(),
  // Of the page's own headers, CopilotKit passes on to agui2aap only
  // Authorization (used when the runtime has no key of its own), not the
  // x-* headers it forwards by default.
  forwardHeaders: { allow: ["authorization"] },
});

// listThreads answers GET /api/threads with agui2aap's list of the demo
// agent's threads (newest first) for the signed-in user, passed through as it
// came. It asks with the key runs use (the runtime's own, else the page's
// Authorization header) and the user.
async function listThreads(req, res) {
  try {
    const query = new URL(req.url, "http://x").search;
    const headers = { Accept: "application/json" };
    if (req.headers.authorization) headers.Authorization = req.headers.authorization;
    Object.assign(headers, agentHeaders());
    const upstream = await fetch(`${agentURL}/threads${query}`, { headers });
    res.writeHead(upstream.status, { "Content-Type": "application/json", "Cache-Control": "no-store" });
    res.end(await upstream.text());
  } catch (err) {
    res.writeHead(502, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ error: { code: "upstream_unreachable", message: `agui2aap: ${err.message}` } }));
  }
}

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

function replyJSON(res, status, body, headers = {}) {
  res.writeHead(status, { "Content-Type": "application/json", "Cache-Control": "no-store", ...headers });
  res.end(body === undefined ? undefined : JSON.stringify(body));
}

function replyError(res, status, code, message) {
  replyJSON(res, status, { error: { code, message } });
}

// readJSON reads a small JSON request body (a sign-in), or null when it is
// too large or not JSON.
async function readJSON(req) {
  let text = "";
  for await (const chunk of req) {
    text += chunk;
    if (text.length > 4096) return null;
  }
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

// signIn answers POST /api/signin {user, password}: a session cookie when
// the password is the user's, else a 401.
async function signIn(req, res) {
  const body = await readJSON(req);
  const user = typeof body?.user === "string" ? body.user : "";
  if (!checkPassword(user, body?.password)) {
    replyError(res, 401, "bad_credentials", "unknown user or wrong password");
    return;
  }
  replyJSON(res, 200, { user }, { "Set-Cookie": sessionCookie(user) });
}

// api answers the routes under /api/: the session's (open to all), then the
// runtime's and the thread list, which need a signed-in user and run as that
// user (requestUser).
function api(req, res, path) {
  // The user is the session's. A user header the browser sent is dropped
  // before anything reads the request, so that no code path (CopilotKit's
  // header forwarding included) can pass it on.
  delete req.headers[userHeader.toLowerCase()];
  if (path === "/api/signin" && req.method === "POST") {
    signIn(req, res).catch((err) => replyError(res, 500, "internal", err.message));
    return;
  }
  if (path === "/api/signout" && req.method === "POST") {
    replyJSON(res, 204, undefined, { "Set-Cookie": signedOutCookie() });
    return;
  }
  const user = sessionUser(req.headers.cookie);
  if (path === "/api/session" && req.method === "GET") {
    if (user) replyJSON(res, 200, { user });
    else replyError(res, 401, "unauthenticated", "not signed in");
    return;
  }
  const threads = path === "/api/threads" && req.method === "GET";
  if (!threads && path !== basePath && !path.startsWith(basePath + "/")) {
    replyError(res, 404, "not_found", `no route ${req.method} ${path}`);
    return;
  }
  if (!user) {
    replyError(res, 401, "unauthenticated", "sign in first");
    return;
  }
  requestUser.run(user, () => {
    if (threads) {
      listThreads(req, res);
      return;
    }
    copilot(req, res).catch((err) => {
      console.error("runtime:", err);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
}

const server = createServer((req, res) => {
  const path = new URL(req.url, "http://x").pathname;
  if (path === "/healthz") {
    res.writeHead(200, { "Content-Type": "text/plain" }).end("ok\n");
    return;
  }
  if (path === "/api" || path.startsWith("/api/")) {
    api(req, res, path);
    return;
  }
  if (req.method === "GET" || req.method === "HEAD") {
    serveStatic(req, res);
    return;
  }
  res.writeHead(405).end();
});

server.listen(port, host, () => {
  console.log(
    `copilotkit runtime on http://${host}:${port}${basePath}, agent demo → ${aguiURL}/agents/demo, user in ${userHeader}`,
  );
});

for (const sig of ["SIGINT", "SIGTERM"]) {
  process.on(sig, () => {
    server.close();
    server.closeAllConnections();
    process.exit(0);
  });
}
