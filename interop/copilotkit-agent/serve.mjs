// serve answers a CopilotKit runtime's AG-UI endpoints (its Node handler,
// under /api/copilotkit) on 127.0.0.1 on a free port, then calls listening
// with the port: what agent.mjs and relay.mjs share.
import http from "node:http";

const { createCopilotRuntimeHandler } = await import("@copilotkit/runtime/v2");
const { createCopilotNodeHandler } = await import("@copilotkit/runtime/v2/node");

export function serve(runtime, listening) {
  const handler = createCopilotNodeHandler(createCopilotRuntimeHandler({ runtime, basePath: "/api/copilotkit", activateChannels: false }));
  const server = http.createServer((req, res) => {
    handler(req, res).catch((err) => {
      console.error(err);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  server.listen(0, "127.0.0.1", () => listening(server.address().port));
}
