// Builds cmd/agui2aap and runs it on a free loopback port, serving the
// built-in AAP demo agent (web_search untrusted, so searches ask
// permission) with a memory store.
import { startProgram } from "./program.mjs";

// startBridge builds and starts agui2aap; it returns its base URL and a
// stop function. Extra command-line flags may be given.
export async function startBridge(extraArgs = []) {
  const bridge = await startProgram({ name: "agui2aap", envPrefix: "AGUI2AAP_", args: extraArgs });
  // sessionsOf lists the AAP sessions a thread has had, from the bridge's
  // log ("thread started on a new AAP session" for its first, "thread
  // moved to a new AAP session" for each later one): one for a thread that
  // stayed on its session, more after a history rewrite. It waits until at
  // least `atLeast` are logged (the log is a pipe).
  const sessionsOf = async (threadId, atLeast = 1) => {
    const read = () => bridge.log().split("\n").flatMap((line) => {
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
  return { ...bridge, sessionsOf };
}
