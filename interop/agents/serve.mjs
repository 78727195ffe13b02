// serveAGUI: a node:http server for an AG-UI agent of a framework adapter
// (@ag-ui/mastra's MastraAgent, @ag-ui/langgraph's LangGraphAgent), the way
// such an agent is served. It imports nothing but Node's own modules: each
// agent gives the EventEncoder of its own @ag-ui/encoder.
import http from "node:http";

// serveAGUI returns a server that runs each posted RunAgentInput with the
// agent newAgent() makes and writes the run's events with an EventEncoder.
export function serveAGUI(newAgent, EventEncoder) {
  return http.createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    let input;
    try {
      input = JSON.parse(body);
    } catch {
      res.writeHead(400, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ error: "the body is not a RunAgentInput" }));
      return;
    }
    const encoder = new EventEncoder();
    res.writeHead(200, { "Content-Type": encoder.getContentType() });
    const sub = newAgent().run(input).subscribe({
      next: (event) => res.write(encoder.encode(event)),
      // The adapters report a failed run as an error of the observable; an
      // AG-UI server ends the stream with RUN_ERROR.
      error: (err) => {
        res.write(encoder.encode({ type: "RUN_ERROR", message: String(err?.message ?? err) }));
        res.end();
      },
      complete: () => res.end(),
    });
    res.on("close", () => sub.unsubscribe());
  });
}
