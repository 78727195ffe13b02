// The dojo's chat features: agentic chat (a frontend tool that changes the
// page, the user's name as context), backend tool rendering (the agent's own
// get_weather drawn as a card), human in the loop (the page's
// generate_task_steps, answered by the user) and agentic generative UI (the
// agent's steps, from its state, drawn under the chat).
import { useState } from "react";
import { z } from "zod";
import {
  CopilotChat,
  UseAgentUpdate,
  useAgent,
  useAgentContext,
  useConfigureSuggestions,
  useFrontendTool,
  useHumanInTheLoop,
  useRenderTool,
} from "@copilotkit/react-core/v2";

import { agentId, threadId } from "./place.js";

// Chat is the feature's chat, on the page's thread.
export function Chat(props) {
  return (
    <div className="chat">
      <CopilotChat agentId={agentId} threadId={threadId} {...props} />
    </div>
  );
}

// parsed is a tool result as an object: some agents send it as JSON in a
// string.
function parsed(result) {
  if (typeof result !== "string") return result ?? {};
  try {
    return JSON.parse(result);
  } catch {
    return {};
  }
}

// AgenticChat is agentic_chat/page.tsx: the page's change_background, the
// user's name as context, and a card for a weather lookup the agent made
// itself.
export function AgenticChat() {
  const [background, setBackground] = useState("");
  useAgentContext({ description: "Name of the user", value: "Bob" });
  useFrontendTool({
    agentId,
    name: "change_background",
    description: "Change the background color of the chat. Can be anything that the CSS background attribute accepts.",
    parameters: z.object({ background: z.string().describe("The background. Prefer gradients.") }),
    handler: async ({ background }) => {
      setBackground(background);
      return { status: "success", message: `Background changed to ${background}` };
    },
  });
  useRenderTool({
    agentId,
    name: "lookup_weather",
    parameters: z.object({ city: z.string(), weather: z.string().optional() }),
    render: ({ parameters, result, status }) => (
      <div className="card" data-testid="lookup-weather" data-status={status}>
        <strong>Weather lookup: {parameters?.city}</strong>
        {status === "complete" && <div data-testid="lookup-weather-result">{String(result)}</div>}
      </div>
    ),
  });
  useConfigureSuggestions({
    suggestions: [
      { title: "Change background", message: "tool" },
      { title: "Count down", message: "Hey there" },
    ],
    available: "always",
  });
  return (
    <div className="feature" data-testid="background-container" data-background={background} style={{ background }}>
      <Chat />
    </div>
  );
}

// BackendToolRendering is backend_tool_rendering/page.tsx: the agent's
// get_weather, which it runs itself, drawn as a weather card.
export function BackendToolRendering() {
  useRenderTool({
    agentId,
    name: "get_weather",
    parameters: z.object({ city: z.string().optional(), location: z.string().optional() }),
    render: ({ parameters, result, status }) => {
      if (status !== "complete") {
        return (
          <div className="card" data-testid="weather-loading">
            Retrieving weather...
          </div>
        );
      }
      const weather = parsed(result);
      return (
        <div className="card weather-card" data-testid="weather-card">
          <h3 data-testid="weather-city">{weather.city ?? parameters?.city ?? parameters?.location}</h3>
          <p>Current Weather</p>
          <div data-testid="weather-temperature">{weather.temperature}° C</div>
          <div data-testid="weather-conditions">{weather.conditions}</div>
          <div data-testid="weather-humidity">Humidity {weather.humidity}%</div>
          <div data-testid="weather-wind">Wind {weather.wind_speed ?? weather.windSpeed} mph</div>
        </div>
      );
    },
  });
  useConfigureSuggestions({
    suggestions: [
      { title: "Weather in San Francisco", message: "What's the weather like in San Francisco?" },
      { title: "Weather in New York", message: "Tell me about the weather in New York." },
    ],
    available: "always",
  });
  return (
    <div className="feature">
      <Chat />
    </div>
  );
}

// StepsFeedback is the human-in-the-loop card: the steps the agent
// proposes, each to keep or leave out, then Confirm or Reject.
function StepsFeedback({ args, respond, status }) {
  const [chosen, setChosen] = useState(null);
  const [answer, setAnswer] = useState(null);
  const proposed = Array.isArray(args?.steps) ? args.steps : [];
  const steps = chosen ?? proposed;
  if (steps.length === 0) return null;
  const enabled = steps.filter((s) => s.status === "enabled").length;
  const toggle = (i) =>
    setChosen(steps.map((s, j) => (j === i ? { ...s, status: s.status === "enabled" ? "disabled" : "enabled" } : s)));
  const reply = (accepted) => {
    setAnswer(accepted ? "Accepted" : "Rejected");
    respond?.(accepted ? { accepted: true, steps: steps.filter((s) => s.status === "enabled") } : { accepted: false });
  };
  return (
    <div className="card steps" data-testid="select-steps" data-status={status}>
      <h3>Select Steps</h3>
      <div data-testid="steps-count">
        {enabled}/{steps.length} Selected
      </div>
      {steps.map((step, i) => (
        <label key={i} className="step" data-testid="step-item">
          <input
            type="checkbox"
            checked={step.status === "enabled"}
            disabled={status !== "executing" || answer !== null}
            onChange={() => toggle(i)}
          />
          <span data-testid="step-text">{step.description}</span>
        </label>
      ))}
      {answer === null ? (
        <div className="buttons">
          <button type="button" disabled={status !== "executing"} onClick={() => reply(false)}>
            Reject
          </button>
          <button type="button" disabled={status !== "executing"} onClick={() => reply(true)}>
            Confirm
          </button>
        </div>
      ) : (
        <div data-testid="steps-answer">{answer}</div>
      )}
    </div>
  );
}

// HumanInTheLoop is human_in_the_loop/page.tsx: the page's
// generate_task_steps, which the user answers.
export function HumanInTheLoop() {
  useHumanInTheLoop({
    agentId,
    name: "generate_task_steps",
    description: "Generates a list of steps for the user to perform",
    parameters: z.object({
      steps: z.array(z.object({ description: z.string(), status: z.enum(["enabled", "disabled", "executing"]) })),
    }),
    render: (props) => <StepsFeedback {...props} />,
  });
  return (
    <div className="feature">
      <Chat />
    </div>
  );
}

// TaskProgress draws the agent's steps from its state.
function TaskProgress({ steps }) {
  const done = steps.filter((s) => s.status === "completed").length;
  return (
    <div className="card progress" data-testid="task-progress" data-done={done}>
      <h3>Task Progress</h3>
      <div data-testid="task-progress-count">
        {done}/{steps.length} Complete
      </div>
      {steps.map((step, i) => (
        <div key={i} className={`task-step ${step.status}`} data-testid="task-step" data-status={step.status}>
          <span data-testid="task-step-text">{step.description}</span>
        </div>
      ))}
    </div>
  );
}

// AgenticGenerativeUI is agentic_generative_ui/page.tsx: the agent's steps,
// from its state, under the chat's messages.
export function AgenticGenerativeUI() {
  const { agent } = useAgent({ agentId, updates: [UseAgentUpdate.OnStateChanged] });
  const steps = agent.state?.steps;
  return (
    <div className="feature">
      <Chat
        messageView={{
          children: ({ messageElements, interruptElement }) => (
            <div data-testid="copilot-message-list" className="messages">
              {messageElements}
              {Array.isArray(steps) && steps.length > 0 && <TaskProgress steps={steps} />}
              {interruptElement}
            </div>
          ),
        }}
      />
    </div>
  );
}
