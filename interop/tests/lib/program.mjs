// Builds one of the repository's commands and runs it on a free loopback
// port with a memory store: what the bridges' launchers (aap2agui.mjs,
// agui2aap.mjs) share.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

// freePort asks the kernel for a free port, then releases it for the
// program: the bridges listen on the address they are given.
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

async function waitHealthy(name, url, proc, log, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`${name} exited with ${proc.exitCode}:\n${log()}`);
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${name} did not become healthy within ${timeoutMs} ms:\n${log()}`);
}

// startProgram builds ./cmd/<name> and starts it with args after the
// listen address, the memory store and an info log level, in a temporary
// directory holding files (name to content; args may name them by their
// relative path), without the environment variables that begin with
// envPrefix (the program's own). It returns its base URL, a stop function
// and its log.
export async function startProgram({ name, envPrefix, args = [], files = {} }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${name}-interop-`));
  const bin = path.join(dir, name);
  execFileSync("go", ["build", "-o", bin, `./cmd/${name}`], { cwd: repoRoot, stdio: ["ignore", "inherit", "inherit"] });
  for (const [file, content] of Object.entries(files)) fs.writeFileSync(path.join(dir, file), content);
  let lastErr;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    let stderr = "";
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith(envPrefix)));
    const proc = spawn(bin, ["--store", "memory:", "--listen", `127.0.0.1:${port}`, "--log-level", "info", ...args], {
      cwd: dir,
      env,
      stdio: ["ignore", "ignore", "pipe"],
    });
    proc.stderr.setEncoding("utf8");
    proc.stderr.on("data", (d) => { stderr += d; });
    const base = `http://127.0.0.1:${port}`;
    try {
      await waitHealthy(name, `${base}/healthz`, proc, () => stderr, 20000);
    } catch (err) {
      // The port may have been taken between freePort and the program's
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
    return { base, stop, log: () => stderr };
  }
  fs.rmSync(dir, { recursive: true, force: true });
  throw lastErr;
}
