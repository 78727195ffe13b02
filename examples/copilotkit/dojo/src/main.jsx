// The features of the AG-UI dojo's server-starter-all-features pages
// (apps/dojo/src/app/[integrationId]/feature/(v2)/ in ag-ui-protocol/ag-ui),
// built the way the dojo builds them, with CopilotKit's v2 hooks, and shown
// one at a time: ?feature=<name>&via=direct|chain. The runtime of
// server.mjs holds each feature twice: direct_<name>, an HttpAgent pointed
// straight at the all-features starter (cmd/dojoagent), the control, and
// chain_<name>, one pointed at agui2aap in front of aap2agui in front of the
// same starter. The page is the same either way.
//
// Each load is a new thread (?thread=… picks one). What the page's agent
// sees is kept in window.dojo for the test: each event's type, each state
// the agent had, the last run's error.
import { useEffect, useState } from "react";
import { createRoot } from "react-dom/client";
import { CopilotKit, useAgent } from "@copilotkit/react-core/v2";
import "@copilotkit/react-core/v2/styles.css";
import "./dojo.css";

import { AgenticChat, BackendToolRendering, HumanInTheLoop, AgenticGenerativeUI } from "./chat.jsx";
import { agentId, feature, threadId, via } from "./place.js";
import { PredictiveStateUpdates, SharedState, ToolBasedGenerativeUI } from "./state.jsx";

const features = {
  agentic_chat: { title: "Agentic chat", Page: AgenticChat },
  backend_tool_rendering: { title: "Backend tool rendering", Page: BackendToolRendering },
  human_in_the_loop: { title: "Human in the loop", Page: HumanInTheLoop },
  agentic_generative_ui: { title: "Agentic generative UI", Page: AgenticGenerativeUI },
  tool_based_generative_ui: { title: "Tool-based generative UI", Page: ToolBasedGenerativeUI },
  shared_state: { title: "Shared state", Page: SharedState },
  predictive_state_updates: { title: "Predictive state updates", Page: PredictiveStateUpdates },
};

window.dojo = { feature, via, agentId, threadId, events: [], states: [], runError: null };

// Watch records what the agent sees, for the test: every event's type (and
// a CUSTOM event's name), every state, and the last RUN_ERROR, which it
// also shows.
function Watch() {
  const { agent } = useAgent({ agentId });
  const [error, setError] = useState(null);
  useEffect(() => {
    const { unsubscribe } = agent.subscribe({
      onEvent: ({ event }) => {
        window.dojo.events.push(event.type === "CUSTOM" ? `CUSTOM ${event.name}` : event.type);
      },
      onStateChanged: ({ state }) => {
        window.dojo.states.push(JSON.parse(JSON.stringify(state ?? null)));
      },
      onRunErrorEvent: ({ event }) => {
        window.dojo.runError = event.message ?? "run error";
        setError(window.dojo.runError);
      },
    });
    return unsubscribe;
  }, [agent]);
  return error ? (
    <div className="run-error" data-testid="run-error">
      {error}
    </div>
  ) : null;
}

function App() {
  const { title, Page } = features[feature] ?? features.agentic_chat;
  return (
    <CopilotKit runtimeUrl="/api/copilotkit" agentId={agentId} enableInspector={false}>
      <div className="page" data-testid="dojo" data-feature={feature} data-via={via}>
        <header>
          <h1>{title}</h1>
          <span className="via" data-testid="via">
            {via === "chain" ? "via agui2aap → aap2agui" : "straight to the agent"}
          </span>
          <nav>
            {Object.entries(features).map(([name, f]) => (
              <a key={name} href={`?feature=${name}&via=${via}`} aria-current={name === feature ? "page" : undefined}>
                {f.title}
              </a>
            ))}
          </nav>
        </header>
        <Watch />
        <Page />
      </div>
    </CopilotKit>
  );
}

createRoot(document.getElementById("root")).render(<App />);
