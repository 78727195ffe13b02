// Builds cmd/aap2agui and runs it on a free loopback port in front of an
// AG-UI agent (--upstream), with a memory store and an agent config
// naming the agent. It also holds a small AAP client over plain fetch.
import { startProgram } from "./program.mjs";

// startAAP2AGUI builds and starts aap2agui in front of upstream; agent is
// the agent config (written as JSON). It returns its base URL, a stop
// function and its log.
export function startAAP2AGUI({ upstream, agent, extraArgs = [] }) {
  return startProgram({
    name: "aap2agui",
    envPrefix: "AAP2AGUI_",
    args: ["--upstream", upstream, "--agent-config", "agent.json", ...extraArgs],
    files: { "agent.json": JSON.stringify(agent) },
  });
}

// aapClient talks AAP to base with plain fetch.
export function aapClient(base) {
  const json = { "Content-Type": "application/json" };
  return {
    async createSession(body) {
      const r = await fetch(`${base}/sessions`, { method: "POST", headers: json, body: JSON.stringify(body) });
      if (r.status !== 201) throw new Error(`POST /sessions: ${r.status} ${await r.text()}`);
      return (await r.json()).sessionId;
    },
    // turn posts a turn and returns its events as "name data" lines, the
    // data as the bridge wrote it.
    async turn(sessionId, body) {
      const r = await fetch(`${base}/sessions/${sessionId}/turns`, {
        method: "POST",
        headers: { ...json, Accept: "text/event-stream" },
        body: JSON.stringify(body),
      });
      const text = await r.text();
      if (r.status !== 200) throw new Error(`POST turns: ${r.status} ${text}`);
      const lines = [];
      for (const frame of text.split("\n\n")) {
        let name = null;
        let data = null;
        for (const l of frame.split("\n")) {
          if (l.startsWith("event: ")) name = l.slice(7);
          else if (l.startsWith("data: ")) data = l.slice(6);
        }
        if (name !== null) lines.push(`${name} ${data}`);
      }
      return lines;
    },
    async history(sessionId, type = "full") {
      const r = await fetch(`${base}/sessions/${sessionId}/history?type=${type}`);
      if (r.status !== 200) throw new Error(`GET history: ${r.status} ${await r.text()}`);
      return (await r.json()).history[type];
    },
    async metrics() {
      const r = await fetch(`${base}/metrics`);
      return r.text();
    },
  };
}
