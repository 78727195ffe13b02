// The CopilotKit runtime (@copilotkit/runtime 1.75's CopilotRuntime and
// Node handler) in front of an AG-UI agent reached over HTTP (HttpAgent,
// @ag-ui/client): what an application that puts the runtime before its own
// agent runs, and the peer `aapbench -history` measures each bridge's run
// against. The runtime holds one agent, relay, whose AG-UI endpoint is
// POST /api/copilotkit/agent/relay/run.
//
// Started as `node relay.mjs -serve-bridge copilotkit -upstream URL` (the
// arguments aapbench gives every process it measures), it listens on
// 127.0.0.1 on a free port and prints that endpoint's URL on its first
// line; it ends when its stdin closes.
import { serve } from "./serve.mjs";

process.env.COPILOTKIT_TELEMETRY_DISABLED = "true";
process.env.DO_NOT_TRACK = "1";

const { CopilotRuntime } = await import("@copilotkit/runtime/v2");
const { HttpAgent } = await import("@ag-ui/client");

const at = process.argv.indexOf("-upstream");
const upstream = at > 0 ? process.argv[at + 1] : undefined;
if (!upstream) {
  console.error("relay.mjs: -upstream URL is required");
  process.exit(2);
}

const runtime = new CopilotRuntime({ agents: { relay: new HttpAgent({ url: upstream }) } });
serve(runtime, (port) => console.log(`http://127.0.0.1:${port}/api/copilotkit/agent/relay/run`));
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
