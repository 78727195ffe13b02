// Builds cmd/agui2aap and runs it on a free loopback port, serving the
// built-in AAP demo agent (web_search untrusted, so searches ask
// permission) with a memory store.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

// freePort asks the kernel for a free port, then releases it for the
// bridge: cmd/agui2aap listens on the address it is given.
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
    if (proc.exitCode !== null) throw new Error(`agui2aap exited with ${proc.exitCode}:\n${log()}`);
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`agui2aap did not become healthy within ${timeoutMs} ms:\n${log()}`);
}

// startBridge builds and starts agui2aap; it returns its base URL and a
// stop function. Extra command-line flags may be given.
export async function startBridge(extraArgs = []) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agui2aap-interop-"));
  const bin = path.join(dir, "agui2aap");
  execFileSync("go", ["build", "-o", bin, "./cmd/agui2aap"], { cwd: repoRoot, stdio: ["ignore", "inherit", "inherit"] });
  let lastErr;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    let stderr = "";
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("AGUI2AAP_")));
    const proc = spawn(bin, ["--store", "memory:", "--listen", `127.0.0.1:${port}`, "--log-level", "info", ...extraArgs], {
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
      // The port may have been taken between freePort and the bridge's
      // listen: try another.
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
    // sessionsOf lists the AAP sessions a thread has had, from the
    // bridge's log ("thread started on a new AAP session" for its first,
    // "thread moved to a new AAP session" for each later one): one for a
    // thread that stayed on its session, more after a history rewrite. It
    // waits until at least `atLeast` are logged (the log is a pipe).
    const sessionsOf = async (threadId, atLeast = 1) => {
      const read = () => stderr.split("\n").flatMap((line) => {
        try {
          const rec = JSON.parse(line);
          const started = rec.message === "thread started on a new AAP session" || rec.message === "thread moved to a new AAP session";
          return started && rec.thread === threadId ? [rec.session] : [];
        } catch {
          return [];
        }
      });
      const deadline = Date.now() + 2000;
      while (read().length < atLeast && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 20));
      return read();
    };
    return { base, stop, log: () => stderr, sessionsOf };
  }
  fs.rmSync(dir, { recursive: true, force: true });
  throw lastErr;
}
