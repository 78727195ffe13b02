// The real-browser test of the CopilotKit page: Debian's Chromium driven by
// playwright-core (no browser download) against server.mjs, with agui2aap and
// its built-in AAP demo agent behind it. .ci/browser-test.sh starts agui2aap;
// this script starts the runtime (server.mjs) itself, so that it can kill and
// restart it mid-conversation.
//
//   AGUI2AAP_URL=http://127.0.0.1:8081 AGUI2AAP_LOG=agui2aap.log RUNTIME_PORT=3000 \
//     ARTIFACTS=../../ci-artifacts [LOG_RUNS=runs.log] node browser-test.mjs
//
// LOG_RUNS, the file server.mjs logs the AG-UI traffic to, lets it check
// that replies were streamed in several deltas (too fast to see on screen);
// AGUI2AAP_LOG, agui2aap's log, that a restored thread stayed in its AAP
// session.
//
// It checks what a user sees: a sign-in (the runtime answers nothing without
// a session), a streamed reply, a frontend tool that changes
// the page, an approval prompt that gates a server tool (approved in one
// thread, denied in another), a reload that keeps the thread working, an
// agent error shown without breaking the thread, and threads that outlive
// the runtime: after a restart and a reload the conversation and its pending
// approval are back, and the thread list switches between conversations;
// a long answer that was streaming when the runtime died goes on to its
// end after a reload (agui2aap runs with --on-client-gone finish and joins
// the page to the run through its connect). Then a second user, in a second browser, under the same API key: each
// thread list holds only its own conversations, a user header the browser
// sends changes nothing, the other's thread id opens as an empty chat, and
// a thread id both use is two conversations. Last, two tabs of one thread:
// a message sent while the other tab's answer runs is refused with an
// error the page shows (never an empty answer), and goes through once sent
// again.
// agui2aap runs with --user-header X-User-Id, which the runtime sets from
// its session cookie.
// Screenshots of every step go to $ARTIFACTS; the page's console is printed
// when a step fails.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium } from "playwright-core";

const aguiURL = process.env.AGUI2AAP_URL;
const aguiLog = process.env.AGUI2AAP_LOG;
const runtimePort = process.env.RUNTIME_PORT || "3000";
if (!aguiURL || !aguiLog) {
  console.error("browser-test.mjs: set AGUI2AAP_URL (agui2aap's base URL) and AGUI2AAP_LOG (its log file)");
  process.exit(2);
}
const baseURL = `http://127.0.0.1:${runtimePort}`;
const artifacts = resolve(process.env.ARTIFACTS || "ci-artifacts");
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
const stepTimeout = Number(process.env.STEP_TIMEOUT_MS || 30000);
mkdirSync(artifacts, { recursive: true });

// The two accounts of the runtime (DEMO_USERS), and the key its session
// cookies are signed with, the same across the restarts below so that the
// user stays signed in.
const passwords = { alice: crypto.randomUUID(), bob: crypto.randomUUID() };
const sessionSecret = crypto.randomUUID();

// The CopilotKit runtime, started (and restarted) by this script; its
// output goes to $ARTIFACTS/runtime.log.
let runtime = null;
async function startRuntime() {
  const out = openSync(join(artifacts, "runtime.log"), "a");
  runtime = spawn(process.execPath, ["server.mjs"], {
    env: {
      ...process.env,
      AGUI2AAP_URL: aguiURL,
      PORT: runtimePort,
      HOST: "127.0.0.1",
      DEMO_USERS: Object.entries(passwords)
        .map(([user, password]) => `${user}:${password}`)
        .join(","),
      SESSION_SECRET: sessionSecret,
    },
    stdio: ["ignore", out, out],
  });
  for (let i = 0; i < 150; i++) {
    if (runtime.exitCode !== null) throw new Error(`the runtime exited with ${runtime.exitCode}`);
    try {
      if ((await fetch(`${baseURL}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the runtime did not become healthy");
}
async function killRuntime() {
  if (!runtime || runtime.exitCode !== null) return;
  runtime.kill("SIGKILL");
  await once(runtime, "exit");
}
await startRuntime();

// sessionsOf lists the AAP sessions agui2aap put thread on, from its log
// ("thread started on a new AAP session" for the first, "thread moved to a
// new AAP session" for each later one).
function sessionsOf(thread) {
  return readFileSync(aguiLog, "utf8")
    .split("\n")
    .filter(
      (l) =>
        (l.includes("thread started on a new AAP session") || l.includes("thread moved to a new AAP session")) &&
        l.includes(`"thread":"${thread}"`),
    )
    .map((l) => JSON.parse(l).session);
}

const consoleLog = [];
const offHost = [];
let passed = 0;
let failed = 0;

// openBrowser starts a Chromium of its own profile (cookies included): one
// per user. Its page's console goes to the log printed on failure, each line
// marked with who.
const browsers = [];
async function openBrowser(who) {
  const userDataDir = mkdtempSync(join(tmpdir(), "copilotkit-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport: { width: 1000, height: 760 },
  });
  browsers.push({ context, userDataDir });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(stepTimeout);
  page.on("console", (m) => consoleLog.push(`${who} [${m.type()}] ${m.text()}`));
  page.on("pageerror", (e) => consoleLog.push(`${who} [pageerror] ${e.stack || e.message}`));
  page.on("requestfailed", (r) =>
    consoleLog.push(`${who} [requestfailed] ${r.method()} ${r.url()} ${r.failure()?.errorText}`),
  );
  page.on("request", (r) => {
    const host = new URL(r.url()).hostname;
    if (!["127.0.0.1", "localhost", "[::1]"].includes(host) && !r.url().startsWith("data:")) offHost.push(r.url());
  });
  return page;
}
const page = await openBrowser("alice");
let bobPage = null;

// The helpers act on alice's page unless given another.
const chat = (p = page) => p.getByTestId("copilot-chat");
const messages = (p = page) => p.getByTestId("copilot-message-list");

async function shot(name, p = page) {
  await scrollToBottom(p);
  await p.screenshot({ path: join(artifacts, `${name}.png`) });
}

// signIn fills the page's sign-in form as user, and waits for the chat.
async function signIn(user, p = page) {
  const form = p.getByTestId("signin");
  await form.waitFor();
  await form.getByTestId("signin-user").fill(user);
  await form.getByTestId("signin-password").fill(passwords[user]);
  await form.getByTestId("signin-submit").click();
  await chat(p).waitFor();
  await p.getByTestId("user").getByText(user, { exact: true }).waitFor();
}

// apiStatus is the status the runtime answers the page's own GET of path.
async function apiStatus(path, p = page) {
  return p.evaluate(async (path) => (await fetch(path)).status, path);
}

// listedThreads is the thread ids of /api/threads as the page gets them,
// sending headers of its own.
async function listedThreads(p, headers = {}) {
  const body = await p.evaluate(async (headers) => {
    const res = await fetch("/api/threads?limit=100", { headers });
    return { status: res.status, body: await res.json() };
  }, headers);
  if (body.status !== 200) throw new Error(`/api/threads answered ${body.status}: ${JSON.stringify(body.body)}`);
  return body.body.threads.map((t) => t.threadId);
}

// shownThreads is the thread ids of the page's thread list, once it shows
// the thread known.
async function shownThreads(p, known) {
  const list = p.getByTestId("thread-list");
  await list.locator(`[data-testid="thread-item"][data-thread="${known}"]`).waitFor();
  return list.locator('[data-testid="thread-item"]').evaluateAll((items) => items.map((i) => i.dataset.thread));
}

// openThread loads the page on thread and waits until the runtime has
// answered a connect of the thread, whole; it returns that answer's body.
// The page may send more than one connect on load and abort all but one of
// them (CopilotKit's connectAgent detaches the one in flight): an aborted
// request never finishes (playwright's response.finished() waits for
// requestfinished, which a request the page cancelled never gets), so the
// connect waited for is the first one to finish, not the first to start.
async function openThread(p, thread) {
  let timer;
  let onFinished;
  const answered = new Promise((resolve, reject) => {
    onFinished = (req) => {
      if (req.url().endsWith("/agent/demo/connect") && (req.postData() ?? "").includes(thread)) resolve(req);
    };
    p.on("requestfinished", onFinished);
    timer = setTimeout(() => reject(new Error(`no connect of thread ${thread} ended`)), stepTimeout);
  });
  try {
    await p.goto(`${baseURL}/?thread=${thread}`);
    const req = await answered;
    const body = await (await req.response()).text();
    await p.getByTestId("copilot-chat-textarea").waitFor();
    await waitIdle(p);
    return body;
  } finally {
    clearTimeout(timer);
    p.off("requestfinished", onFinished);
  }
}

async function send(text, p = page) {
  const box = p.getByTestId("copilot-chat-textarea");
  await box.click();
  await box.fill(text);
  // Enter sends only once CopilotKit has the agent from the runtime (its
  // /info) and no other run is settling; until then it keeps the text and
  // does nothing, with the send button disabled. On a slow machine that
  // takes a while after the page shows the chat.
  await p.locator('[data-testid="copilot-send-button"]:enabled').waitFor();
  await box.press("Enter");
  // The user message shows up at once.
  await messages(p).getByText(text, { exact: true }).last().waitFor();
}

// waitText waits until the chat shows text (a substring of some message).
async function waitText(text, p = page) {
  await messages(p).getByText(text).last().waitFor();
}

// scrollToBottom brings the newest part of the chat, prompts included, into view.
async function scrollToBottom(p = page) {
  await p.evaluate(() => {
    for (const el of document.querySelectorAll('[data-testid="copilot-chat"] *')) {
      if (el.scrollHeight > el.clientHeight + 4 && getComputedStyle(el).overflowY !== "visible") {
        el.scrollTop = el.scrollHeight;
      }
    }
  });
  await p.waitForTimeout(300);
}

async function waitIdle(p = page) {
  await p.locator('[data-testid="copilot-chat"][data-copilot-running="false"]').waitFor();
}

// wireDeltas counts the TEXT_MESSAGE_CONTENT events agui2aap streamed for the
// run whose newest message was userText, from server.mjs's LOG_RUNS file
// (undefined without one).
async function wireDeltas(userText) {
  const file = process.env.LOG_RUNS;
  if (!file) return undefined;
  for (let tries = 0; tries < 30; tries++) {
    const lines = existsSync(file) ? readFileSync(file, "utf8").split("\n") : [];
    const input = lines
      .filter((l) => l.startsWith(">> "))
      .map((l) => JSON.parse(l.slice(3)))
      .find((i) => i.messages.at(-1)?.content === userText);
    if (input && lines.some((l) => l.startsWith(`<< ${input.runId} {"type":"RUN_FINISHED"`))) {
      return lines.filter((l) => l.startsWith(`<< ${input.runId} {"type":"TEXT_MESSAGE_CONTENT"`)).length;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no run for ${JSON.stringify(userText)} in ${file}`);
}

async function step(name, fn) {
  const started = Date.now();
  try {
    await fn();
    passed++;
    console.log(`ok   ${name} (${Date.now() - started} ms)`);
  } catch (err) {
    failed++;
    console.log(`FAIL ${name} (${Date.now() - started} ms): ${err.message.split("\n")[0]}`);
    await shot(`FAILED-${name.replace(/[^a-z0-9]+/gi, "-")}`).catch(() => {});
    if (bobPage) await shot(`FAILED-bob-${name.replace(/[^a-z0-9]+/gi, "-")}`, bobPage).catch(() => {});
    throw err;
  }
}

const thread1 = crypto.randomUUID();
let thread2 = "";
try {
  await step("without a session the runtime answers 401; alice signs in", async () => {
    await page.goto(`${baseURL}/`);
    await page.getByTestId("signin").waitFor();
    for (const path of ["/api/threads", "/api/copilotkit/info", "/api/session"]) {
      const status = await apiStatus(path);
      if (status !== 401) throw new Error(`GET ${path} without a session answered ${status}, want 401`);
    }
    // A wrong password signs no one in.
    await page.getByTestId("signin-user").fill("alice");
    await page.getByTestId("signin-password").fill("not her password");
    await page.getByTestId("signin-submit").click();
    await page.getByTestId("signin").getByText("wrong password").waitFor();
    await signIn("alice");
    const status = await apiStatus("/api/threads");
    if (status !== 200) throw new Error(`GET /api/threads signed in answered ${status}, want 200`);
  });

  await step("page loads", async () => {
    await page.goto(`${baseURL}/?thread=${thread1}`);
    await chat().waitFor();
    await page.getByTestId("copilot-chat-textarea").waitFor();
  });

  await step("a plain message streams a reply", async () => {
    // Record every state the reply goes through on screen: the demo agent
    // streams it in several deltas.
    await page.evaluate(() => {
      window.__replyStates = [];
      const list = document.querySelector('[data-testid="copilot-message-list"]');
      new MutationObserver(() => {
        const text = list.innerText;
        const i = text.lastIndexOf("You said");
        if (i >= 0) {
          const reply = text.slice(i).split("\n")[0];
          if (window.__replyStates.at(-1) !== reply) window.__replyStates.push(reply);
        }
      }).observe(list, { subtree: true, childList: true, characterData: true });
    });
    await send("hello there");
    await waitText("You said: hello there");
    await waitIdle();
    const states = await page.evaluate(() => window.__replyStates);
    const deltas = await wireDeltas("hello there");
    console.log(`     on screen in ${states.length} state(s); on the wire in ${deltas ?? "?"} TEXT_MESSAGE_CONTENT deltas`);
    if (deltas !== undefined && deltas < 3) throw new Error(`the reply came in ${deltas} delta(s), not streamed`);
    await shot("01-streamed-reply");
  });

  await step("weather in Paris runs the frontend tool and the agent follows up", async () => {
    const before = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    await send("weather in Paris");
    await page.waitForFunction(() => document.body.dataset.weather === "sunny");
    // The colour fades in (a CSS transition): wait until it is the sunny one.
    await page
      .waitForFunction(() => getComputedStyle(document.body).backgroundColor === "rgb(255, 224, 138)", null, {
        timeout: 5000,
      })
      .catch(async () => {
        const now = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
        throw new Error(`the page colour did not turn sunny: ${before} → ${now}`);
      });
    await page.locator('[data-testid="tool-call"][data-tool="get_weather"] [data-testid="tool-result"]', {
      hasText: "Sunny, 21°C",
    }).waitFor();
    await waitText("The weather in Paris: Sunny, 21°C");
    await waitIdle();
    await shot("02-frontend-tool");
  });

  await step("search cats asks for approval; Approve runs the search", async () => {
    await send("search cats");
    const prompt = page.getByTestId("approval");
    await prompt.waitFor();
    await prompt.getByText("web_search").first().waitFor();
    await waitIdle();
    await shot("03-approval-prompt");
    await prompt.getByRole("button", { name: "Approve" }).click();
    // The tool's result (TOOL_CALL_RESULT) and the answer that uses it.
    await page.locator('[data-testid="tool-call"][data-tool="web_search"] [data-testid="tool-result"]', {
      hasText: "Results for cats",
    }).waitFor();
    await waitText("Here is what I found. Results for cats");
    await waitIdle();
    await page.getByTestId("approval").waitFor({ state: "detached" });
    await shot("04-approved");
  });

  await step("a second thread: search dogs, Deny → the refusal", async () => {
    await page.getByTestId("new-chat").click();
    await page.waitForFunction((t) => !location.search.includes(t), thread1);
    thread2 = new URL(page.url()).searchParams.get("thread");
    await page.getByTestId("copilot-chat-textarea").waitFor();
    if ((await messages().innerText()).includes("hello there")) throw new Error("the new chat shows the old thread");
    await send("search dogs");
    const prompt = page.getByTestId("approval");
    await prompt.waitFor();
    await waitIdle();
    await prompt.getByRole("button", { name: "Deny" }).click();
    await waitText("Search was not allowed: User denied");
    await waitIdle();
    await shot("05-denied");
  });

  await step("after a reload the thread continues", async () => {
    await page.reload();
    await page.getByTestId("copilot-chat-textarea").waitFor();
    if (new URL(page.url()).searchParams.get("thread") !== thread2) throw new Error("the reload lost the thread id");
    // The runtime replays the thread's history into the page.
    await waitText("Search was not allowed: User denied");
    await waitIdle();
    await send("hello again");
    await waitText("You said: hello again");
    await waitIdle();
    await shot("06-after-reload");
  });

  await step("the first thread is still there", async () => {
    await page.goto(`${baseURL}/?thread=${thread1}`);
    await waitText("Here is what I found.");
    await waitIdle();
    await send("one more");
    await waitText("You said: one more");
    await waitIdle();
    await shot("07-first-thread-again");
  });

  await step("an agent error is shown, and the thread goes on", async () => {
    await page.getByTestId("new-chat").click();
    await page.waitForFunction((t) => !location.search.includes(t), thread1);
    await send("please fail");
    await waitText("Starting…");
    // agui2aap's RUN_ERROR, as CopilotKit shows it.
    await page.getByText("The agent stopped with an error.").first().waitFor();
    await waitIdle();
    await shot("08-agent-error");
    await send("are you there");
    await waitText("You said: are you there");
    await waitIdle();
  });

  let thread4 = "";
  await step("a pending approval survives a runtime restart and a reload", async () => {
    await page.getByTestId("new-chat").click();
    await page.waitForFunction((t) => !location.search.includes(t), thread1);
    thread4 = new URL(page.url()).searchParams.get("thread");
    await page.getByTestId("copilot-chat-textarea").waitFor();
    await send("search birds");
    await page.getByTestId("approval").waitFor();
    await waitIdle();
    // The thread list marks it as waiting for an approval.
    await page
      .locator(`[data-testid="thread-item"][data-thread="${thread4}"]`)
      .getByText("approval pending")
      .waitFor();
    await killRuntime();
    await startRuntime();
    await page.reload();
    await page.getByTestId("copilot-chat-textarea").waitFor();
    // The conversation comes back from agui2aap: the runtime holds nothing.
    await waitText("search birds");
    const prompt = page.getByTestId("approval");
    await prompt.waitFor();
    await prompt.getByText("web_search").first().waitFor();
    await waitIdle();
    await shot("09-restored-after-restart");
  });

  await step("approving the restored prompt goes on in the same AAP session", async () => {
    await page.getByTestId("approval").getByRole("button", { name: "Approve" }).click();
    await waitText("Here is what I found. Results for birds");
    await waitIdle();
    await send("still there?");
    await waitText("You said: still there?");
    await waitIdle();
    const sessions = sessionsOf(thread4);
    if (sessions.length !== 1) throw new Error(`thread ${thread4} used AAP sessions ${JSON.stringify(sessions)}, want one`);
    await shot("10-restored-and-continued");
  });

  await step("the thread list switches between conversations", async () => {
    const list = page.getByTestId("thread-list");
    const item = (t) => list.locator(`[data-testid="thread-item"][data-thread="${t}"]`);
    await item(thread4).getByText("search birds").waitFor();
    await item(thread1).getByText("hello there").waitFor();
    // thread1 was last shown before the restart: agui2aap gives it back.
    await item(thread1).click();
    await page.waitForFunction((t) => location.search.includes(t), thread1);
    await waitText("Here is what I found. Results for cats");
    await waitText("You said: one more");
    await waitIdle();
    await shot("11-thread-list-first");
    await item(thread2).click();
    await page.waitForFunction((t) => location.search.includes(t), thread2);
    await waitText("Search was not allowed: User denied");
    await waitText("You said: hello again");
    if ((await messages().innerText()).includes("one more")) throw new Error("thread 2 shows thread 1's messages");
    await waitIdle();
    // Back to thread1, which goes on in its own AAP session.
    await item(thread1).click();
    await page.waitForFunction((t) => location.search.includes(t), thread1);
    await waitText("You said: one more");
    await waitIdle();
    await send("and after the restart");
    await waitText("You said: and after the restart");
    await waitIdle();
    for (const t of [thread1, thread2]) {
      const sessions = sessionsOf(t);
      if (sessions.length !== 1) throw new Error(`thread ${t} used AAP sessions ${JSON.stringify(sessions)}, want one`);
    }
    await shot("12-thread-list-continued");
  });

  await step("a thread continued after the restart comes back whole, from memory and after another restart", async () => {
    // The runtime holds thread1's run since the restart, whose input carried
    // what agui2aap gave back: a reload replays it all from memory.
    const whole = async () => {
      await page.getByTestId("copilot-chat-textarea").waitFor();
      for (const text of ["You said: hello there", "Here is what I found. Results for cats", "You said: and after the restart"]) {
        await waitText(text);
      }
      await waitIdle();
    };
    await page.reload();
    await whole();
    // Another restart: agui2aap gives back the whole conversation, from
    // before the first restart and after it.
    await killRuntime();
    await startRuntime();
    await page.reload();
    await whole();
    if ((await messages().innerText()).includes("search birds")) throw new Error("thread 1 shows another thread's messages");
    await send("after the second restart");
    await waitText("You said: after the second restart");
    await waitIdle();
    const sessions = sessionsOf(thread1);
    if (sessions.length !== 1) throw new Error(`thread ${thread1} used AAP sessions ${JSON.stringify(sessions)}, want one`);
    await shot("13-second-restart");
  });

  await step("a long answer goes on through a runtime restart and a reload, to its end", async () => {
    // agui2aap runs with --on-client-gone finish: the run goes on when the
    // runtime dies; the new runtime's connect joins it through agui2aap.
    const before = new URL(page.url()).searchParams.get("thread");
    await page.getByTestId("new-chat").click();
    await page.waitForFunction((t) => !location.search.includes(t), before);
    await page.getByTestId("copilot-chat-textarea").waitFor();
    await send("long 150");
    await waitText("word word word");
    await killRuntime();
    await startRuntime();
    await page.reload();
    await page.getByTestId("copilot-chat-textarea").waitFor();
    // The conversation is back and the answer goes on, to its last word.
    await waitText("long 150");
    const whole = `word${" word".repeat(149)}`;
    await messages().getByText(whole, { exact: true }).last().waitFor({ timeout: 30000 });
    await waitIdle();
    await shot("14-long-answer-after-restart");
    // Stored whole: another restart gives it back from agui2aap.
    await killRuntime();
    await startRuntime();
    await page.reload();
    await page.getByTestId("copilot-chat-textarea").waitFor();
    await messages().getByText(whole, { exact: true }).last().waitFor();
    await waitIdle();
  });

  let bobThread = "";
  await step("bob signs in in a browser of his own and has a conversation", async () => {
    bobPage = await openBrowser("bob");
    await bobPage.goto(`${baseURL}/`);
    await signIn("bob", bobPage);
    bobThread = new URL(bobPage.url()).searchParams.get("thread");
    await send("hello from bob", bobPage);
    await waitText("You said: hello from bob", bobPage);
    await waitIdle(bobPage);
    await shot("14-bob-signed-in", bobPage);
  });

  await step("each thread list holds only its user's conversations", async () => {
    const alices = [thread1, thread2, thread4];
    const bobs = await shownThreads(bobPage, bobThread);
    if (bobs.join() !== bobThread) throw new Error(`bob's thread list shows ${JSON.stringify(bobs)}, want only ${bobThread}`);
    await page.reload();
    const shown = await shownThreads(page, thread1);
    if (shown.includes(bobThread)) throw new Error("alice's thread list shows bob's thread");
    for (const t of alices) {
      if (!shown.includes(t)) throw new Error(`alice's thread list lacks her thread ${t}: ${JSON.stringify(shown)}`);
    }
    // The user is the session's: a user header the page sends itself is
    // dropped by the runtime.
    const spoofed = await listedThreads(bobPage, { "X-User-Id": "alice" });
    if (spoofed.join() !== bobThread) throw new Error(`bob, claiming to be alice, is listed ${JSON.stringify(spoofed)}`);
    const alicesSpoofed = await listedThreads(page, { "X-User-Id": "bob" });
    if (alicesSpoofed.includes(bobThread) || !alicesSpoofed.includes(thread1)) {
      throw new Error(`alice, claiming to be bob, is listed ${JSON.stringify(alicesSpoofed)}`);
    }
    await shot("15-alice-thread-list");
    await shot("16-bob-thread-list", bobPage);
  });

  await step("the other user's thread id opens as an empty chat", async () => {
    // thread1 is in the runtime's memory (alice ran it since the restart)
    // and in agui2aap: bob gets neither.
    const answer = await openThread(bobPage, thread1);
    if (answer.includes("hello there")) throw new Error("the runtime answered bob's connect with alice's messages");
    const bobSees = await messages(bobPage).innerText();
    if (bobSees.includes("hello there") || bobSees.includes("You said")) {
      throw new Error(`bob sees alice's thread: ${JSON.stringify(bobSees.slice(0, 200))}`);
    }
    if ((await listedThreads(bobPage)).includes(thread1)) throw new Error("opening alice's thread id listed it for bob");
    await shot("17-bob-opens-alices-thread", bobPage);
    // And the other way round.
    await openThread(page, bobThread);
    if ((await messages().innerText()).includes("hello from bob")) throw new Error("alice sees bob's thread");
    await shot("18-alice-opens-bobs-thread");
  });

  await step("a thread id both users use is two conversations", async () => {
    await openThread(bobPage, thread1);
    await send("bob was here", bobPage);
    await waitText("You said: bob was here", bobPage);
    await waitIdle(bobPage);
    if ((await messages(bobPage).innerText()).includes("hello there")) throw new Error("bob's thread shows alice's messages");
    // Alice's thread1 is whole, and has none of bob's.
    await openThread(page, thread1);
    for (const text of ["You said: hello there", "You said: after the second restart"]) await waitText(text);
    if ((await messages().innerText()).includes("bob was here")) throw new Error("alice's thread shows bob's message");
    await send("alice again", page);
    await waitText("You said: alice again");
    await waitIdle();
    await shot("19-same-thread-id-two-users");
  });

  await step("two tabs of one thread: a message sent while the other tab's answer runs is refused, visibly", async () => {
    // A second tab of alice's, on thread1 too, idle: it knows nothing of
    // what the first tab is about to send.
    const before = sessionsOf(thread1); // alice's, and bob's of the same id
    const tab2 = await page.context().newPage();
    tab2.setDefaultTimeout(stepTimeout);
    tab2.on("console", (m) => consoleLog.push(`alice tab 2 [${m.type()}] ${m.text()}`));
    await openThread(tab2, thread1);
    await waitText("You said: alice again", tab2);
    await send("long 100", page);
    await waitText("word word word");
    await send("hello from tab two", tab2);
    // The refusal, as CopilotKit shows a RUN_ERROR: not an empty answer.
    await tab2.getByText("a run is already in progress on this thread").first().waitFor();
    await waitIdle(tab2);
    await shot("20-second-tab-refused", tab2);
    const whole = `word${" word".repeat(99)}`;
    await messages().getByText(whole, { exact: true }).last().waitFor();
    await waitIdle();
    // Reloaded, the second tab shows the thread as it is, the first tab's
    // answer included, and its message goes through when sent again.
    await openThread(tab2, thread1);
    await messages(tab2).getByText(whole, { exact: true }).last().waitFor();
    if ((await messages(tab2).innerText()).includes("hello from tab two")) throw new Error("the refused message shows as sent");
    await send("hello from tab two", tab2);
    await waitText("You said: hello from tab two", tab2);
    await waitIdle(tab2);
    const sessions = sessionsOf(thread1);
    if (sessions.join() !== before.join()) {
      throw new Error(`thread ${thread1} moved from AAP sessions ${JSON.stringify(before)} to ${JSON.stringify(sessions)}`);
    }
    await shot("21-second-tab-sent-again", tab2);
    await tab2.close();
  });

  await step("a message sent while agui2aap runs the thread for another runtime is refused, visibly", async () => {
    // The page is on a thread, idle; then the thread's run starts in
    // agui2aap for someone else (another runtime replica, here this
    // script): agui2aap answers the page's run 409 run_in_progress, and
    // the page shows agui2aap's message.
    const before = new URL(page.url()).searchParams.get("thread");
    await page.getByTestId("new-chat").click();
    await page.waitForFunction((t) => !location.search.includes(t), before);
    const thread = new URL(page.url()).searchParams.get("thread");
    await page.getByTestId("copilot-chat-textarea").waitFor();
    const other = await fetch(`${aguiURL}/agents/demo`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${process.env.AGUI2AAP_API_KEY}`,
        [process.env.AGUI2AAP_USER_HEADER || "X-User-Id"]: "alice",
        "Content-Type": "application/json",
        Accept: "text/event-stream",
      },
      body: JSON.stringify({
        threadId: thread,
        runId: crypto.randomUUID(),
        state: {},
        messages: [{ id: crypto.randomUUID(), role: "user", content: "long 100" }],
        tools: [],
        context: [],
        forwardedProps: {},
      }),
    });
    if (other.status !== 200) throw new Error(`the other run answered ${other.status}: ${await other.text()}`);
    const otherDone = other.text();
    await send("hello meanwhile");
    const refusal = page.getByText("its lock runs out").first();
    await refusal.waitFor();
    // agui2aap's message as it wrote it, not HttpAgent's "HTTP 409: {…}".
    const shown = await refusal.innerText();
    if (shown.includes("409") || shown.includes("{")) throw new Error(`the refusal is shown as ${JSON.stringify(shown)}`);
    await waitIdle();
    await shot("22-refused-by-agui2aap");
    const answer = await otherDone;
    if (!answer.includes('"type":"RUN_FINISHED"')) throw new Error("the other run did not finish");
    // Reloaded, the page shows the thread as agui2aap has it; the message
    // goes through when sent again.
    await openThread(page, thread);
    await messages().getByText(`word${" word".repeat(99)}`, { exact: true }).last().waitFor();
    if ((await messages().innerText()).includes("hello meanwhile")) throw new Error("the refused message shows as sent");
    await send("hello meanwhile");
    await waitText("You said: hello meanwhile");
    await waitIdle();
    const sessions = sessionsOf(thread);
    if (sessions.length !== 1) throw new Error(`thread ${thread} used AAP sessions ${JSON.stringify(sessions)}, want one`);
  });
} catch {
  // reported below
} finally {
  if (failed > 0) {
    console.log("---- page console ----");
    for (const line of consoleLog) console.log(line);
    console.log("---- page text ----");
    console.log(await page.locator("body").innerText().catch((e) => `(no page: ${e.message})`));
  }
  if (offHost.length > 0) {
    console.log(`note: the page asked ${offHost.length} non-local URL(s), e.g. ${offHost.slice(0, 3).join(", ")}`);
  }
  for (const { context, userDataDir } of browsers) {
    await context.close().catch(() => {});
    rmSync(userDataDir, { recursive: true, force: true });
  }
  await killRuntime();
}

console.log(`browser-test: ${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
