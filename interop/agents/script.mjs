// The demo script (demo/script.go) as the framework agents of interop/
// follow it (copilotkit-agent/, mastra/, langgraph/): its words, how it
// splits text into deltas, which rule a user message meets, and the parts
// of an AI SDK mock model's answer. It imports nothing, so that each
// agent, with its own node_modules, can use it.

export const NO_WEATHER_TOOL = "I cannot check the weather: the application did not give me a get_weather tool.";
export const FAIL_PREFIX = "Starting…";
export const FAIL_ERROR = "The demo agent failed on purpose.";
export const DONE_THINKING = "Done thinking.";

export const thinkingAbout = (message) => "Thinking about: " + message;
export const weatherIn = (place, result) => `The weather in ${place}: ${result}`;
export const searchAnswer = (result) => "Here is what I found. " + result;
export const historyOf = (names) => `History: tool calls: ${names.join(", ") || "none"}.`;
export const echo = (message) => "You said: " + message;

// chunks splits text the way the Go demo agent does (demo.Chunks): one
// delta per word with its following space, at least three when the text
// has three characters.
export function chunks(s) {
  const out = s.split(/(?<= )/).filter((w) => w !== "");
  const runes = [...s];
  if (out.length >= 3 || runes.length < 3) return out;
  const size = Math.floor((runes.length + 2) / 3);
  return [runes.slice(0, size).join(""), runes.slice(size, 2 * size).join(""), runes.slice(2 * size).join("")];
}

// argChunks splits tool arguments into three deltas.
export function argChunks(s) {
  if (s.length < 3) return [s];
  const a = Math.floor(s.length / 3), b = Math.floor((2 * s.length) / 3);
  return [s.slice(0, a), s.slice(a, b), s.slice(b)];
}

export const cleanArg = (s) => s.trim().replace(/[?!.,;: ]+$/, "");

// argOf is what follows "<verb> " in message, trimmed of its closing
// punctuation ("" when nothing does).
export function argOf(verb, message) {
  const m = new RegExp(`${verb} (.*)`, "i").exec(message);
  return m ? cleanArg(m[1]) : "";
}

export function textOf(content) {
  if (typeof content === "string") return content;
  return (content ?? []).filter((p) => p.type === "text").map((p) => p.text).join("");
}

// ruleOf is the first rule of the script a user message meets,
// case-insensitively: "fail", "think", then the first of verbs followed by
// an argument (arg), "history", else "echo".
export function ruleOf(message, verbs) {
  const lower = message.toLowerCase();
  if (lower.includes("fail")) return { rule: "fail" };
  if (lower.includes("think")) return { rule: "think" };
  for (const verb of verbs) {
    const arg = argOf(verb, message);
    if (arg !== "") return { rule: verb, arg };
  }
  if (lower.includes("history")) return { rule: "history" };
  return { rule: "echo" };
}

// The AI SDK's mock language model (ai/test's MockLanguageModelV3) is
// given a prompt and answers with stream parts.

const usage = { inputTokens: { total: 1, noCache: 1 }, outputTokens: { total: 1, text: 1 } };

// modelParts collects the parts of one answer: say adds a text, think a
// reasoning, call a tool call, fail an error, finish the end. newID names
// each new "text", "reasoning" and "call".
export function modelParts(newID) {
  const parts = [];
  const streamed = (kind, s) => {
    const id = newID(kind);
    parts.push({ type: `${kind}-start`, id });
    for (const delta of chunks(s)) parts.push({ type: `${kind}-delta`, id, delta });
    parts.push({ type: `${kind}-end`, id });
  };
  const call = (toolName, input) => {
    const id = newID("call");
    const args = JSON.stringify(input);
    parts.push({ type: "tool-input-start", id, toolName });
    for (const delta of argChunks(args)) parts.push({ type: "tool-input-delta", id, delta });
    parts.push({ type: "tool-input-end", id });
    parts.push({ type: "tool-call", toolCallId: id, toolName, input: args });
  };
  return {
    parts,
    say: (s) => streamed("text", s),
    think: (s) => streamed("reasoning", s),
    call,
    fail: (message) => parts.push({ type: "error", error: new Error(message) }),
    finish: (reason) => parts.push({ type: "finish", finishReason: { unified: reason, raw: undefined }, usage }),
  };
}

// toolResultOf reads the result the newest (tool) message of the prompt
// carries: its output, its value as text, and the name and input of the
// call it answers.
export function toolResultOf(prompt) {
  const result = prompt[prompt.length - 1].content.find((p) => p.type === "tool-result");
  let callPart;
  for (const m of prompt) {
    if (m.role !== "assistant" || typeof m.content === "string") continue;
    for (const p of m.content) if (p.type === "tool-call" && p.toolCallId === result.toolCallId) callPart = p;
  }
  const input = typeof callPart?.input === "string" ? JSON.parse(callPart.input) : (callPart?.input ?? {});
  const value = result.output?.value ?? "";
  return { output: result.output, text: typeof value === "string" ? value : JSON.stringify(value), name: callPart?.toolName ?? result.toolName, input };
}

// lastUserText is the text of the newest user message of the prompt.
export function lastUserText(prompt) {
  for (let i = prompt.length - 1; i >= 0; i--) {
    if (prompt[i].role === "user") return textOf(prompt[i].content);
  }
  return "";
}

// toolCallNames are the names of the prompt's tool calls, in order.
export function toolCallNames(prompt) {
  const names = [];
  for (const p of prompt) {
    if (p.role === "assistant" && Array.isArray(p.content)) {
      for (const c of p.content) if (c.type === "tool-call") names.push(c.toolName);
    }
  }
  return names;
}

// scriptAnswer is the answer by the script to prompt (the tools the run
// declares beside it), its parts added to model (modelParts): own is the
// agent's tool, which "<own.verb> <arg>" calls with {[own.param]: arg},
// and own.said(result) tells what came of its result (toolResultOf).
export function scriptAnswer(prompt, tools, model, own) {
  const { parts, say, think, call, fail, finish } = model;
  if (prompt[prompt.length - 1].role === "tool") {
    const result = toolResultOf(prompt);
    switch (result.name) {
      case "get_weather":
        say(weatherIn(result.input.location, result.text));
        break;
      case "web_search":
        say(searchAnswer(result.text));
        break;
      case own.tool:
        say(own.said(result));
        break;
      default:
        say("Thanks, I got the result: " + result.text);
    }
    finish("stop");
    return parts;
  }
  const message = lastUserText(prompt);
  const { rule, arg } = ruleOf(message, ["weather in", "search", own.verb]);
  const callTool = (name, input) => {
    call(name, input);
    finish("tool-calls");
    return parts;
  };
  switch (rule) {
    case "fail":
      say(FAIL_PREFIX);
      fail(FAIL_ERROR);
      return parts;
    case "think":
      think(thinkingAbout(message));
      say(DONE_THINKING);
      break;
    case "weather in":
      if ((tools ?? []).some((t) => t.name === "get_weather")) return callTool("get_weather", { location: arg });
      say(NO_WEATHER_TOOL);
      break;
    case "search":
      return callTool("web_search", { query: arg });
    case own.verb:
      return callTool(own.tool, { [own.param]: arg });
    case "history":
      say(historyOf(toolCallNames(prompt)));
      break;
    default:
      say(echo(message));
  }
  finish("stop");
  return parts;
}
