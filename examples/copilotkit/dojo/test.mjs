// The browser test of the dojo's features: Debian's Chromium, driven by
// playwright-core (no browser download), uses each feature of the page
// (dojo/src) the way the AG-UI dojo's Playwright specs for the
// server-starter-all-features integration do, twice: straight to the
// starter (via=direct, the control) and through agui2aap in front of
// aap2agui in front of the same starter (via=chain). Every check must pass
// both ways, but those marked as a gap of the chain: they must pass
// direct, and are reported (not failed) through the chain, until the chain
// carries what they need; one that passes there fails the test, so that
// its mark is taken off.
//
//   BASE_URL=http://127.0.0.1:3001 STARTER_LOG=dojoagent.log ARTIFACTS=../../ci-artifacts/dojo node dojo/test.mjs
//
// STARTER_LOG is the starter's log (cmd/dojoagent --log-inputs): what the
// agent was sent, for the checks that the page's state, context and
// answers reach it. Screenshots of each feature go to $ARTIFACTS, and the
// page's console of a feature that failed is printed.
import { mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { chromium } from "playwright-core";

const baseURL = process.env.BASE_URL;
const starterLog = process.env.STARTER_LOG;
if (!baseURL || !starterLog) {
  console.error("dojo/test.mjs: set BASE_URL (the dojo runtime's URL) and STARTER_LOG (cmd/dojoagent's log, --log-inputs)");
  process.exit(2);
}
const artifacts = resolve(process.env.ARTIFACTS || "ci-artifacts/dojo");
const stepTimeout = Number(process.env.STEP_TIMEOUT_MS || 15000);
mkdirSync(artifacts, { recursive: true });

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});

// One feature, one way: a page of its own, and helpers acting on it.
class Visit {
  constructor(page, feature, via) {
    this.page = page;
    this.feature = feature;
    this.via = via;
    this.tag = `${via}-${Math.random().toString(36).slice(2, 8)}`;
  }

  testId(id) {
    return this.page.getByTestId(id);
  }

  // send types text into the chat and sends it once CopilotKit takes it.
  async send(text) {
    const box = this.testId("copilot-chat-textarea");
    await box.click();
    await box.fill(text);
    await this.page.locator('[data-testid="copilot-send-button"]:enabled').waitFor();
    await box.press("Enter");
    await this.testId("copilot-message-list").getByText(text, { exact: true }).last().waitFor();
  }

  async idle() {
    await this.page.locator('[data-testid="copilot-chat"][data-copilot-running="false"]').waitFor();
  }

  // assistant is the locator of the assistant messages holding text.
  assistant(text) {
    return this.testId("copilot-assistant-message").filter({ hasText: text });
  }

  // count waits until the selector (or locator) matches at least n
  // elements.
  async count(selector, n) {
    const locator = typeof selector === "string" ? this.page.locator(selector) : selector;
    const deadline = Date.now() + stepTimeout;
    let seen = 0;
    while ((seen = await locator.count()) < n) {
      if (Date.now() > deadline) throw new Error(`${n} of ${locator} wanted, ${seen} shown`);
      await this.page.waitForTimeout(100);
    }
  }

  // values waits until the inputs the selector matches hold all of want,
  // and returns what they hold.
  async values(selector, want) {
    const deadline = Date.now() + stepTimeout;
    for (;;) {
      const got = await this.page.locator(selector).evaluateAll((els) => els.map((e) => e.value));
      if (want.every((w) => got.includes(w))) return got;
      if (Date.now() > deadline) throw new Error(`${selector} holds ${JSON.stringify(got)}, not all of ${JSON.stringify(want)}`);
      await this.page.waitForTimeout(100);
    }
  }

  // events is the types of the events the page's agent has seen so far.
  async events() {
    return this.page.evaluate(() => window.dojo.events.slice());
  }

  // argsAfter is the number of TOOL_CALL_ARGS events seen after the first n.
  async argsAfter(n) {
    return (await this.events()).slice(n).filter((e) => e === "TOOL_CALL_ARGS").length;
  }

  // agentRuns are the inputs the starter got for this feature in this
  // visit's conversation (the one whose user messages hold its tag).
  agentRuns() {
    return readFileSync(starterLog, "utf8")
      .split("\n")
      .filter((l) => l.includes('"message":"run"') && l.includes(`"feature":"${this.feature}"`))
      .map((l) => JSON.parse(l).input)
      .filter((input) => input?.messages?.some((m) => m.role === "user" && JSON.stringify(m.content ?? "").includes(this.tag)));
  }
}

function expect(cond, what) {
  if (!cond) throw new Error(what);
}

// The features, each a list of checks run in order on one page; a check
// that fails ends the visit (the ones after it are not run). gap names what
// the chain does not carry yet.
const features = {
  agentic_chat: [
    ["countdown streams to a check mark", async (v) => {
      const n = (await v.events()).length;
      await v.send(`Hey there (${v.tag})`);
      const msg = v.assistant("counting down:").last();
      await v.assistant("counting down:").filter({ hasText: "✓" }).last().waitFor();
      const text = await msg.innerText();
      expect(/counting down:\s*10\s+9\s+8\s+7\s+6\s+5\s+4\s+3\s+2\s+1\s+✓/.test(text), `the countdown reads ${JSON.stringify(text)}`);
      const deltas = (await v.events()).slice(n).filter((e) => e === "TEXT_MESSAGE_CONTENT").length;
      expect(deltas >= 2, `the countdown came in ${deltas} delta(s)`);
      await v.idle();
    }],
    ["the page's context reaches the agent", async (v) => {
      const run = v.agentRuns().at(-1);
      expect(run, "the agent got no run of this conversation");
      const ctx = (run.context ?? []).find((c) => c.description === "Name of the user");
      expect(ctx && String(ctx.value).includes("Bob"), `the agent's context: ${JSON.stringify(run.context)}`);
    }],
    ["a frontend tool changes the page, and the agent answers its result", async (v) => {
      await v.send("tool");
      await v.page.locator('[data-testid="background-container"][data-background*="linear-gradient"]').waitFor();
      await v.assistant("background changed ✓").last().waitFor();
      await v.idle();
    }],
    ["the agent's own call and its result (a snapshot) are shown", async (v) => {
      await v.send("backend_tool");
      await v.page.locator('[data-testid="lookup-weather"][data-status="complete"]').waitFor();
      const result = await v.testId("lookup-weather-result").last().innerText();
      expect(result.includes("The weather in San Francisco is sunny."), `the result shown: ${JSON.stringify(result)}`);
      await v.idle();
    }],
  ],

  backend_tool_rendering: [
    ["a suggestion's answer is drawn as a weather card", async (v) => {
      await v.page.getByRole("button", { name: "Weather in San Francisco" }).click();
      const card = v.testId("weather-card").first();
      await card.waitFor();
      const text = await card.innerText();
      for (const want of ["San Francisco", "20° C", "sunny", "Humidity 60%", "Wind 10 mph"]) {
        expect(text.includes(want), `the card lacks ${want}: ${JSON.stringify(text)}`);
      }
      await v.idle();
    }],
    ["a second question gets a second card", async (v) => {
      await v.send(`Tell me about the weather in New York. (${v.tag})`);
      await v.count('[data-testid="weather-card"]', 2);
      await v.idle();
    }],
  ],

  human_in_the_loop: [
    ["the agent's steps are shown to choose from", async (v) => {
      v.mark = (await v.events()).length;
      await v.send(`Hi (${v.tag})`);
      await v.count('[data-testid="select-steps"] [data-testid="step-item"]', 10);
      await v.testId("steps-count").getByText("10/10 Selected").first().waitFor();
    }],
    ["the steps stream in as the agent writes them", async (v) => {
      const args = await v.argsAfter(v.mark);
      expect(args >= 5, `the call's arguments came in ${args} part(s)`);
    }],
    ["the user's choice goes back and the agent answers", async (v) => {
      const confirm = v.page.getByRole("button", { name: "Confirm" });
      await v.page.locator('[data-testid="select-steps"][data-status="executing"]').waitFor();
      await v.testId("step-item").filter({ hasText: /^Step 3$/ }).locator("input").click();
      await v.testId("steps-count").getByText("9/10 Selected").waitFor();
      await confirm.click();
      await v.testId("steps-answer").getByText("Accepted").waitFor();
      await v.assistant("Ok! I'm working on it.").last().waitFor();
      await v.idle();
      const last = v.agentRuns().at(-1)?.messages?.at(-1);
      expect(last?.role === "tool", `the agent's last run ended with ${JSON.stringify(last)}`);
      const answer = JSON.parse(last.content);
      expect(answer.accepted === true && answer.steps.length === 9 && !answer.steps.some((s) => s.description === "Step 3"), `the agent got ${last.content}`);
    }],
    ["the thread goes on", async (v) => {
      await v.send(`Again (${v.tag})`);
      await v.count('[data-testid="select-steps"]', 2);
    }],
  ],

  agentic_generative_ui: [
    ["the agent's steps are drawn from its state, to the end", async (v) => {
      await v.send(`Plan a trip to mars (${v.tag})`);
      await v.testId("task-progress").waitFor();
      await v.count('[data-testid="task-progress"] [data-testid="task-step"]', 10);
      await v.testId("task-progress-count").getByText("10/10 Complete").waitFor();
      await v.idle();
    }],
    ["the steps complete one by one", async (v) => {
      const seen = await v.page.evaluate(() =>
        window.dojo.states.map((s) => (Array.isArray(s?.steps) ? s.steps.filter((x) => x.status === "completed").length : -1)),
      );
      const distinct = new Set(seen.filter((n) => n >= 0));
      expect(distinct.size === 11, `the page saw these numbers of steps done: ${JSON.stringify(seen)}`);
    }],
  ],

  tool_based_generative_ui: [
    ["the agent's haiku is drawn in the chat", async (v) => {
      await v.send(`Generate Haiku for "I will always win" (${v.tag})`);
      const card = v.testId("haiku-card").first();
      await card.waitFor();
      const text = await card.innerText();
      for (const want of ["エーアイの", "橋つなぐ道", "コパキット", "From AI's realm", "A bridge-road linking us—", "CopilotKit."]) {
        expect(text.includes(want), `the haiku lacks ${want}: ${JSON.stringify(text)}`);
      }
      await v.idle();
    }],
    ["a second prompt, a second haiku", async (v) => {
      await v.send(`Generate Haiku for "The moon shines bright" (${v.tag})`);
      await v.count('[data-testid="haiku-card"]', 2);
      await v.idle();
    }],
    ["thanks gets the agent's text", async (v) => {
      await v.send("thanks");
      await v.assistant("Haiku created").last().waitFor();
      await v.idle();
    }],
  ],

  shared_state: [
    ["the page's recipe is the agent's state, edited on the page", async (v) => {
      await v.values(".ingredient-name-input", ["Carrots", "All-Purpose Flour"]);
      await v.testId("add-ingredient-button").click();
      const added = v.page.locator(".ingredient-card").last();
      await added.locator(".ingredient-name-input").fill(`Potatoes ${v.tag}`);
      await added.locator(".ingredient-amount-input").fill("12");
      await v.send(`Give me all the ingredients (${v.tag})`);
      await v.idle();
      const state = v.agentRuns().at(-1)?.state;
      const names = (state?.recipe?.ingredients ?? []).map((i) => i.name);
      expect(names.includes(`Potatoes ${v.tag}`) && names.includes("Carrots"), `the agent got the state ${JSON.stringify(state)}`);
    }],
    ["the agent's recipe fills the page", async (v) => {
      const names = await v.values(".ingredient-name-input", ["chicken breast", "chili powder", "Salt", "Lettuce leaves"]);
      expect(names.length === 4, `the agent's four ingredients, and no others: ${JSON.stringify(names)}`);
      await v.count('[data-testid="instruction-item"]', 3);
      expect((await v.testId("instruction-item").count()) === 3, "three instructions");
      expect((await v.testId("recipe-skill").inputValue()) === "Advanced", "the skill level is the agent's");
      expect((await v.testId("recipe-time").inputValue()) === "15 min", "the cooking time is the agent's");
    }],
    ["the agent's recipe goes back to the agent", async (v) => {
      await v.send(`Make it spicier (${v.tag})`);
      await v.idle();
      const runs = v.agentRuns();
      const names = (runs.at(-1)?.state?.recipe?.ingredients ?? []).map((i) => i.name);
      expect(runs.length === 2 && names.includes("chicken breast") && !names.some((n) => n.startsWith("Potatoes")), `the agent's second run got ${JSON.stringify(runs.at(-1)?.state)}`);
    }],
  ],

  predictive_state_updates: [
    ["the agent's story shows as it is written, to confirm", async (v) => {
      v.mark = (await v.events()).length;
      await v.send(`Write a story (${v.tag})`);
      await v.testId("confirm-changes-modal").last().waitFor();
      await v.testId("proposed").filter({ hasText: /Once upon a time, there was a dog named (\w+)\. \1 was a very good dog\./ }).waitFor();
      v.first = (await v.testId("proposed").innerText()).trim();
    }],
    ["the story streams in as the agent writes it", async (v) => {
      const args = await v.argsAfter(v.mark);
      expect(args >= 5, `the call's arguments came in ${args} part(s)`);
    }],
    ["confirmed, it is the document, and the agent answers", async (v) => {
      await v.testId("confirm-changes-modal").last().getByTestId("confirm-button").click();
      await v.testId("status-display").getByText("✓ Accepted").waitFor();
      await v.assistant("Ok!").last().waitFor();
      await v.idle();
      const doc = (await v.testId("document").innerText()).trim();
      expect(doc === v.first, `the document reads ${JSON.stringify(doc)}, not ${JSON.stringify(v.first)}`);
      expect(JSON.parse(v.agentRuns().at(-1).messages.at(-1).content).accepted === true, "the agent was told it was accepted");
    }],
    ["rejected, the document stays, and the agent answers", async (v) => {
      await v.send(`Update the story (${v.tag})`);
      await v.count('[data-testid="confirm-changes-modal"]', 2);
      await v.testId("proposed").waitFor();
      await v.page.locator('[data-testid="confirm-changes-modal"][data-status="executing"]').last().getByTestId("reject-button").click();
      await v.testId("status-display").getByText("✗ Rejected").waitFor();
      await v.count(v.assistant("Ok!"), 2);
      await v.idle();
      const doc = (await v.testId("document").innerText()).trim();
      expect(doc === v.first, `the document reads ${JSON.stringify(doc)}, not ${JSON.stringify(v.first)}`);
      expect(JSON.parse(v.agentRuns().at(-1).messages.at(-1).content).accepted === false, "the agent was told it was rejected");
    }],
    ["the thread is never stuck", async (v) => {
      await v.send(`Another one (${v.tag})`);
      await v.count('[data-testid="confirm-changes-modal"]', 3);
    }],
  ],
};

// visit runs a feature's checks one way; it returns each check's outcome.
async function visit(feature, via) {
  const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
  const page = await context.newPage();
  page.setDefaultTimeout(stepTimeout);
  const consoleLog = [];
  page.on("console", (m) => consoleLog.push(`[${m.type()}] ${m.text()}`));
  page.on("pageerror", (e) => consoleLog.push(`[pageerror] ${e.stack || e.message}`));
  const v = new Visit(page, feature, via);
  const outcomes = {};
  let failed = false;
  try {
    await page.goto(`${baseURL}/?feature=${feature}&via=${via}`);
    await v.testId("copilot-chat-textarea").waitFor();
    for (const [name, check, gap] of features[feature]) {
      if (failed) {
        outcomes[name] = { ok: false, detail: "not run: an earlier check failed" };
        continue;
      }
      try {
        await check(v);
        const runError = await page.evaluate(() => window.dojo.runError);
        expect(!runError, `the run failed: ${runError}`);
        outcomes[name] = { ok: true };
      } catch (err) {
        failed = !gap; // a gap's check ends nothing
        outcomes[name] = { ok: false, detail: String(err.message ?? err).split("\n")[0] };
      }
    }
  } catch (err) {
    for (const [name] of features[feature]) outcomes[name] ??= { ok: false, detail: `the page did not load: ${err.message}` };
    failed = true;
  }
  await page.screenshot({ path: join(artifacts, `${feature}-${via}.png`), fullPage: true }).catch(() => {});
  if (failed) {
    const events = await page.evaluate(() => window.dojo?.events ?? []).catch(() => []);
    console.log(`---- ${feature} (${via}): the page's console ----\n${consoleLog.slice(-40).join("\n")}`);
    console.log(`---- ${feature} (${via}): the events the page's agent saw ----\n${events.join(" ")}`);
  }
  await context.close();
  return outcomes;
}

const rows = [];
let bad = 0;
for (const [feature, checks] of Object.entries(features)) {
  const started = Date.now();
  const direct = await visit(feature, "direct");
  const chain = await visit(feature, "chain");
  for (const [name, , gap] of checks) {
    const d = direct[name];
    const c = chain[name];
    let verdict = "ok";
    if (!d.ok) verdict = "FAIL: the control fails";
    else if (gap && c.ok) verdict = "FAIL: a gap of the chain closed; take off its mark";
    else if (gap) verdict = `gap: ${gap}`;
    else if (!c.ok) verdict = "FAIL: passes direct, fails through the chain";
    if (verdict.startsWith("FAIL")) bad++;
    rows.push({ feature, name, direct: d, chain: c, verdict });
  }
  console.log(`${feature}: ${((Date.now() - started) / 1000).toFixed(1)}s`);
}
await browser.close();

const mark = (o) => (o.ok ? "pass" : "fail");
console.log("\nfeature | check | direct | chain | verdict");
for (const r of rows) {
  console.log(`${r.feature} | ${r.name} | ${mark(r.direct)} | ${mark(r.chain)} | ${r.verdict}`);
  for (const [via, o] of [["direct", r.direct], ["chain", r.chain]]) {
    if (!o.ok) console.log(`    ${via}: ${o.detail}`);
  }
}
const passedBoth = rows.filter((r) => r.direct.ok && r.chain.ok).length;
console.log(`\n${rows.length} checks: ${passedBoth} pass both ways, ${rows.filter((r) => r.verdict.startsWith("gap")).length} known gaps of the chain, ${bad} failed`);
process.exit(bad > 0 ? 1 : 0);
