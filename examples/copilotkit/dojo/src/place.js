// Where the page is: the feature it shows, the way to the agent (direct or
// chain), the agent's id in the runtime, and the thread (a new one on each
// load unless ?thread=… names one).
const params = new URL(window.location.href).searchParams;

export const feature = params.get("feature") || "agentic_chat";
export const via = params.get("via") === "chain" ? "chain" : "direct";
export const agentId = `${via}_${feature}`;
export const threadId = params.get("thread") || crypto.randomUUID();
