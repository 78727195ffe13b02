// Builds cmd/aap2agui and runs it on a free loopback port in front of an
// AG-UI agent (--upstream), with a memory store and an agent config
// naming the agent. It also holds a small AAP client over plain fetch.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function waitHealthy(url, proc, log, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`aap2agui exited with ${proc.exitCode}:\n${log()}`);
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`aap2agui did not become healthy within ${timeoutMs} ms:\n${log()}`);
}

// startAAP2AGUI builds and starts aap2agui in front of upstream; agent is
// the agent config (written as JSON). It returns its base URL, a stop
// function and its log.
export async function startAAP2AGUI({ upstream, agent, extraArgs = [] }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "aap2agui-interop-"));
  const bin = path.join(dir, "aap2agui");
  execFileSync("go", ["build", "-o", bin, "./cmd/aap2agui"], { cwd: repoRoot, stdio: ["ignore", "inherit", "inherit"] });
  const cfg = path.join(dir, "agent.json");
  fs.writeFileSync(cfg, JSON.stringify(agent));
  let lastErr;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    let stderr = "";
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("AAP2AGUI_")));
    const proc = spawn(bin, ["--store", "memory:", "--listen", `127.0.0.1:${port}`, "--upstream", upstream, "--agent-config", cfg, "--log-level", "info", ...extraArgs], {
      cwd: dir,
      env,
      stdio: ["ignore", "ignore", "pipe"],
    });
    proc.stderr.setEncoding("utf8");
    proc.stderr.on("data", (d) => { stderr += d; });
    const base = `http://127.0.0.1:${port}`;
    try {
      await waitHealthy(`${base}/healthz`, proc, () => stderr, 20000);
    } catch (err) {
      lastErr = err;
      proc.kill();
      continue;
    }
    const stop = async () => {
      if (proc.exitCode === null) {
        const exited = new Promise((r) => proc.once("exit", r));
        proc.kill("SIGTERM");
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    };
    return { base, stop, log: () => stderr };
  }
  fs.rmSync(dir, { recursive: true, force: true });
  throw lastErr;
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
