// The dojo's features that keep something beside the chat: tool-based
// generative UI (haikus, from the agent's generate_haiku), shared state (a
// recipe the page and the agent both write) and predictive state updates
// (a document the agent writes with its own tool, shown as it streams, which
// the user confirms or rejects).
import { useEffect, useRef, useState } from "react";
import { z } from "zod";
import { UseAgentUpdate, useAgent, useConfigureSuggestions, useFrontendTool, useHumanInTheLoop } from "@copilotkit/react-core/v2";

import { Chat } from "./chat.jsx";
import { agentId } from "./place.js";

function HaikuCard({ haiku, testId }) {
  return (
    <div className="card haiku" data-testid={testId}>
      {(haiku.japanese ?? []).map((line, i) => (
        <div key={i}>
          <p data-testid="haiku-japanese-line">{line}</p>
          <p data-testid="haiku-english-line">{haiku.english?.[i]}</p>
        </div>
      ))}
    </div>
  );
}

const placeholder = {
  japanese: ["仮の句よ", "まっさらながら", "花を呼ぶ"],
  english: ["A placeholder verse—", "even in a blank canvas,", "it beckons flowers."],
};

// ToolBasedGenerativeUI is tool_based_generative_ui/page.tsx: the agent's
// generate_haiku drawn in the chat, and the haikus the page was given.
export function ToolBasedGenerativeUI() {
  const [haikus, setHaikus] = useState([placeholder]);
  useFrontendTool(
    {
      agentId,
      name: "generate_haiku",
      parameters: z.object({
        japanese: z.array(z.string()).describe("3 lines of haiku in Japanese"),
        english: z.array(z.string()).describe("3 lines of haiku translated to English"),
      }),
      followUp: false,
      handler: async ({ japanese, english }) => {
        setHaikus((prev) => [{ japanese, english }, ...prev.filter((h) => h !== placeholder)]);
        return "Haiku generated!";
      },
      render: ({ args }) => (args?.japanese ? <HaikuCard haiku={args} testId="haiku-card" /> : null),
    },
    [haikus],
  );
  useConfigureSuggestions({ suggestions: [{ title: "Nature Haiku", message: "Write me a haiku about nature." }], available: "always" });
  return (
    <div className="feature split">
      <Chat />
      <aside data-testid="haiku-display">
        {haikus.map((h, i) => (
          <HaikuCard key={i} haiku={h} testId={h === placeholder ? "haiku-placeholder" : "haiku-shown"} />
        ))}
      </aside>
    </div>
  );
}

const initialRecipe = {
  title: "Make Your Recipe",
  skill_level: "Intermediate",
  cooking_time: "45 min",
  special_preferences: [],
  ingredients: [
    { icon: "🥕", name: "Carrots", amount: "3 large, grated" },
    { icon: "🌾", name: "All-Purpose Flour", amount: "2 cups" },
  ],
  instructions: ["Preheat oven to 350°F (175°C)"],
};
const skillLevels = ["Beginner", "Intermediate", "Advanced"];
const cookingTimes = ["5 min", "15 min", "30 min", "45 min", "60+ min"];

// SharedState is shared_state/page.tsx: a recipe the page edits and the
// agent rewrites, both in the agent's state.
export function SharedState() {
  const { agent } = useAgent({ agentId, updates: [UseAgentUpdate.OnStateChanged, UseAgentUpdate.OnRunStatusChanged] });
  useEffect(() => {
    if (!agent.state?.recipe) agent.setState({ ...(agent.state ?? {}), recipe: initialRecipe });
    // Seeded once, on mount, as the dojo's page does.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  const recipe = agent.state?.recipe ?? initialRecipe;
  const update = (part) => agent.setState({ ...(agent.state ?? {}), recipe: { ...recipe, ...part } });
  const setIngredient = (i, field, value) =>
    update({ ingredients: recipe.ingredients.map((ing, j) => (j === i ? { ...ing, [field]: value } : ing)) });
  return (
    <div className="feature split">
      <form className="card recipe" data-testid="recipe-card" data-running={String(agent.isRunning)} onSubmit={(e) => e.preventDefault()}>
        <input data-testid="recipe-title" value={recipe.title ?? ""} onChange={(e) => update({ title: e.target.value })} />
        <select data-testid="recipe-skill" value={recipe.skill_level} onChange={(e) => update({ skill_level: e.target.value })}>
          {skillLevels.map((l) => (
            <option key={l}>{l}</option>
          ))}
        </select>
        <select data-testid="recipe-time" value={recipe.cooking_time} onChange={(e) => update({ cooking_time: e.target.value })}>
          {cookingTimes.map((t) => (
            <option key={t}>{t}</option>
          ))}
        </select>
        <div data-testid="recipe-preferences">{(recipe.special_preferences ?? []).join(", ")}</div>
        <h3>Ingredients</h3>
        <button type="button" data-testid="add-ingredient-button" onClick={() => update({ ingredients: [...recipe.ingredients, { icon: "🍴", name: "", amount: "" }] })}>
          + Add Ingredient
        </button>
        {(recipe.ingredients ?? []).map((ing, i) => (
          <div key={i} className="ingredient-card" data-testid="ingredient-card">
            <span>{ing.icon}</span>
            <input className="ingredient-name-input" value={ing.name ?? ""} placeholder="Ingredient name" onChange={(e) => setIngredient(i, "name", e.target.value)} />
            <input className="ingredient-amount-input" value={ing.amount ?? ""} placeholder="Amount" onChange={(e) => setIngredient(i, "amount", e.target.value)} />
          </div>
        ))}
        <h3>Instructions</h3>
        <ol className="instructions-container" data-testid="instructions">
          {(recipe.instructions ?? []).map((step, i) => (
            <li key={i} data-testid="instruction-item">
              {step}
            </li>
          ))}
        </ol>
      </form>
      <Chat />
    </div>
  );
}

// partialArgument is the string argument name of a call's arguments that
// have not all come yet ({"document":"Once upon a), or undefined.
function partialArgument(json, name) {
  for (const tail of ["", '"}', "}"]) {
    try {
      const value = JSON.parse(json + tail)?.[name];
      if (typeof value === "string") return value;
    } catch {
      // not yet a whole string
    }
  }
  return undefined;
}

// answered is whether the user accepted the changes, read from the tool's
// result (null before there is one).
function answered(result) {
  try {
    return typeof result === "string" ? Boolean(JSON.parse(result).accepted) : null;
  } catch {
    return null;
  }
}

// ConfirmChanges asks the user to take or leave the agent's changes; once
// answered, it shows the answer (kept in the call's result, so that it
// outlives the card's own state).
function ConfirmChanges({ respond, status, result, onConfirm, onReject }) {
  const [chosen, setAccepted] = useState(null);
  const accepted = chosen ?? (status === "complete" ? answered(result) : null);
  const answer = (yes) => {
    setAccepted(yes);
    (yes ? onConfirm : onReject)();
    respond?.({ accepted: yes });
  };
  return (
    <div className="card confirm" data-testid="confirm-changes-modal" data-status={status}>
      <h3>Confirm Changes</h3>
      {accepted === null ? (
        <div className="buttons">
          <button type="button" data-testid="reject-button" disabled={status !== "executing"} onClick={() => answer(false)}>
            Reject
          </button>
          <button type="button" data-testid="confirm-button" disabled={status !== "executing"} onClick={() => answer(true)}>
            Confirm
          </button>
        </div>
      ) : (
        <div data-testid="status-display">{accepted ? "✓ Accepted" : "✗ Rejected"}</div>
      )}
    </div>
  );
}

// PredictiveStateUpdates is predictive_state_updates/page.tsx: a document
// the agent writes with its own write_document_local. The agent's CUSTOM
// PredictState says which state key follows which argument of which tool;
// the page shows that argument as it streams, as the proposed document,
// and the user confirms it (it becomes the document, in the agent's state)
// or rejects it (the document stays what it was).
export function PredictiveStateUpdates() {
  const { agent } = useAgent({ agentId, updates: [UseAgentUpdate.OnStateChanged, UseAgentUpdate.OnRunStatusChanged] });
  const [proposed, setProposed] = useState(null);
  const predictions = useRef([]);
  const document = agent.state?.document ?? "";
  useEffect(() => {
    const { unsubscribe } = agent.subscribe({
      onCustomEvent: ({ event }) => {
        if (event.name === "PredictState" && Array.isArray(event.value)) predictions.current = event.value;
      },
      // The arguments so far, this event's delta included (the
      // subscriber's partialToolCallArgs are those before it).
      onToolCallArgsEvent: ({ event, toolCallName, toolCallBuffer }) => {
        const p = predictions.current.find((p) => p.tool === toolCallName && p.state_key === "document");
        const value = p && partialArgument(toolCallBuffer + event.delta, p.tool_argument);
        if (typeof value === "string") setProposed(value);
      },
    });
    return unsubscribe;
  }, [agent]);
  useHumanInTheLoop(
    {
      agentId,
      name: "confirm_changes",
      description: "Ask the user to confirm the changes to the document.",
      parameters: z.object({}),
      render: ({ respond, status, result }) => (
        <ConfirmChanges
          respond={respond}
          status={status}
          result={result}
          onConfirm={() => {
            agent.setState({ ...(agent.state ?? {}), document: proposed ?? document });
            setProposed(null);
          }}
          onReject={() => setProposed(null)}
        />
      ),
    },
    [proposed, document],
  );
  return (
    <div className="feature split">
      <Chat />
      <article className="card document" data-testid="document" data-proposed={proposed === null ? "false" : "true"}>
        {proposed === null ? document || <em>An empty document: ask the agent for a story.</em> : <ins data-testid="proposed">{proposed}</ins>}
      </article>
    </div>
  );
}
