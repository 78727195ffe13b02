// A minimal CopilotKit (v2) chat in front of agui2aap: the agent "demo" of
// the runtime in server.mjs is an HttpAgent pointed at agui2aap.
//
// - get_weather is a frontend tool: the browser runs it, the page's colour
//   changes, and the agent answers with what it returned;
// - an AAP server tool that needs permission (web_search) reaches the page
//   as an AG-UI interrupt, shown as an Approve / Deny prompt;
// - tool calls and their results are shown in the chat.
//
// The thread id lives in the URL (?thread=…), so a reload continues the same
// thread and "New chat" starts another. The thread list (agui2aap's, through
// the runtime's /api/threads) switches between conversations; a thread this
// runtime has not seen (it restarted) is fetched back from agui2aap.
//
// The page asks the user to sign in first (the runtime's /api/signin sets an
// HttpOnly session cookie). It never names the user to the runtime itself:
// the runtime knows who is signed in from the cookie, and tells agui2aap.
import { useCallback, useEffect, useState } from "react";
import { createRoot } from "react-dom/client";
import { z } from "zod";
import {
  CopilotChat,
  CopilotKit,
  useAgent,
  useFrontendTool,
  useInterrupt,
  useRenderTool,
} from "@copilotkit/react-core/v2";
import "@copilotkit/react-core/v2/styles.css";
import "./page.css";

// The weather the frontend tool reports, and the page colour that goes with it.
const forecasts = {
  paris: { text: "Sunny, 21°C", colour: "#ffe08a", name: "sunny" },
  london: { text: "Rain, 12°C", colour: "#b8c7d9", name: "rainy" },
};
const fallback = { text: "Cloudy, 15°C", colour: "#d9dde3", name: "cloudy" };

function threadFromURL() {
  const url = new URL(window.location.href);
  let thread = url.searchParams.get("thread");
  if (!thread) {
    thread = crypto.randomUUID();
    url.searchParams.set("thread", thread);
    window.history.replaceState(null, "", url);
  }
  return thread;
}

function WeatherTool({ onWeather }) {
  useFrontendTool({
    name: "get_weather",
    description: "Get the current weather for a place; the page shows it by changing colour.",
    parameters: z.object({ location: z.string().describe("The place, e.g. Paris") }),
    handler: async ({ location }) => {
      const forecast = forecasts[String(location).trim().toLowerCase()] ?? fallback;
      document.body.style.background = forecast.colour;
      document.body.dataset.weather = forecast.name;
      onWeather(`${location}: ${forecast.text}`);
      return forecast.text;
    },
  });
  return null;
}

// streamedResults keeps the result of every tool call as agui2aap streamed it
// (TOOL_CALL_RESULT), by tool call id. For a server tool that needed
// permission CopilotKit keeps only one tool message per call in the thread,
// the approval payload it appended itself on resume ({"approved":true}), and
// drops the tool's real result when the run finishes; the card shows the
// streamed result instead.
const streamedResults = new Map();

function ToolResults() {
  const { agent } = useAgent({ agentId: "demo" });
  useEffect(() => {
    const { unsubscribe } = agent.subscribe({
      onToolCallResultEvent: ({ event }) => {
        streamedResults.set(event.toolCallId, event.content);
      },
    });
    return unsubscribe;
  }, [agent]);
  return null;
}

// ToolCallCard shows one tool call: its name, its input and, once there is
// one, its result.
function ToolCallCard({ name, toolCallId, parameters, status, result }) {
  useAgent({ agentId: "demo" }); // re-render as the thread changes
  const shown = streamedResults.get(toolCallId) ?? result;
  return (
    <div className="tool-call" data-testid="tool-call" data-tool={name} data-status={status}>
      <span className="tool-name">{name}</span>
      <code>{JSON.stringify(parameters ?? {})}</code>
      {status === "complete" ? (
        <div className="tool-result" data-testid="tool-result">
          → {typeof shown === "string" ? shown : JSON.stringify(shown)}
        </div>
      ) : (
        <span className="tool-status"> {status === "executing" ? "running…" : "…"}</span>
      )}
    </div>
  );
}

function ToolCalls() {
  useRenderTool({ name: "*", agentId: "demo", render: (props) => <ToolCallCard {...props} /> }, []);
  return null;
}

function ApprovalPrompt({ interrupt, resolve }) {
  const [answered, setAnswered] = useState(false);
  const answer = (payload) => {
    setAnswered(true);
    resolve(payload);
  };
  const tool = interrupt?.metadata?.aap?.toolName;
  return (
    <div className="approval" data-testid="approval" role="alertdialog" aria-label="Permission request">
      <div className="approval-title">Permission needed{tool ? `: ${tool}` : ""}</div>
      <p className="approval-message">{interrupt?.message ?? "The agent asks to run a tool."}</p>
      <div className="approval-buttons">
        <button type="button" disabled={answered} onClick={() => answer({ approved: true })}>
          Approve
        </button>
        <button
          type="button"
          className="deny"
          disabled={answered}
          onClick={() => answer({ approved: false, reason: "User denied" })}
        >
          Deny
        </button>
      </div>
    </div>
  );
}

function Approvals() {
  useInterrupt({
    agentId: "demo",
    render: ({ interrupt, resolve }) => (
      <ApprovalPrompt key={interrupt?.id} interrupt={interrupt} resolve={resolve} />
    ),
  });
  return null;
}

// ThreadList shows the threads agui2aap holds (newest first), and switches
// to one when it is clicked. It reloads when the thread changes and when a
// run ends.
function ThreadList({ threadId, onSelect }) {
  const { agent } = useAgent({ agentId: "demo" });
  const [threads, setThreads] = useState([]);
  const [error, setError] = useState("");
  const load = useCallback(async () => {
    try {
      const res = await fetch("/api/threads?limit=50");
      const body = await res.json();
      if (!res.ok) throw new Error(body?.error?.message ?? `HTTP ${res.status}`);
      setThreads(body.threads ?? []);
      setError("");
    } catch (err) {
      setError(String(err.message ?? err));
    }
  }, []);
  useEffect(() => {
    load();
  }, [load, threadId]);
  useEffect(() => {
    const { unsubscribe } = agent.subscribe({
      onRunFinishedEvent: () => void load(),
      onRunErrorEvent: () => void load(),
    });
    return unsubscribe;
  }, [agent, load]);
  return (
    <nav className="threads" data-testid="thread-list" aria-label="Conversations">
      <div className="threads-title">Conversations</div>
      {error && <div className="threads-error">{error}</div>}
      {threads.map((t) => (
        <button
          type="button"
          key={t.threadId}
          data-testid="thread-item"
          data-thread={t.threadId}
          aria-current={t.threadId === threadId ? "page" : undefined}
          onClick={() => onSelect(t.threadId)}
        >
          <span className="thread-title">{t.title || "(no message yet)"}</span>
          <span className="thread-meta">
            {t.messages} messages{t.interruptsOpen ? " · approval pending" : ""}
          </span>
        </button>
      ))}
    </nav>
  );
}

// SignIn asks for a user name and password and signs in with the runtime,
// which answers with the session cookie.
function SignIn({ onSignedIn }) {
  const [error, setError] = useState("");
  const submit = async (event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setError("");
    try {
      const res = await fetch("/api/signin", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ user: form.get("user"), password: form.get("password") }),
      });
      const body = await res.json();
      if (!res.ok) throw new Error(body?.error?.message ?? `HTTP ${res.status}`);
      onSignedIn(body.user);
    } catch (err) {
      setError(String(err.message ?? err));
    }
  };
  return (
    <form className="signin" data-testid="signin" onSubmit={submit}>
      <h1>Sign in</h1>
      <label>
        User <input name="user" autoComplete="username" data-testid="signin-user" required />
      </label>
      <label>
        Password{" "}
        <input name="password" type="password" autoComplete="current-password" data-testid="signin-password" required />
      </label>
      <button type="submit" data-testid="signin-submit">
        Sign in
      </button>
      {error && <div className="signin-error">{error}</div>}
    </form>
  );
}

// App shows the sign-in until the runtime knows who is there (its
// /api/session), then the chat.
function App() {
  const [user, setUser] = useState(undefined); // undefined: not known yet; null: signed out
  useEffect(() => {
    fetch("/api/session")
      .then((res) => (res.ok ? res.json() : null))
      .then((body) => setUser(body?.user ?? null))
      .catch(() => setUser(null));
  }, []);
  const signOut = useCallback(async () => {
    await fetch("/api/signout", { method: "POST" }).catch(() => {});
    setUser(null);
  }, []);
  if (user === undefined) return null;
  if (user === null) return <SignIn onSignedIn={setUser} />;
  return <Chat key={user} user={user} onSignOut={signOut} />;
}

function Chat({ user, onSignOut }) {
  const [threadId, setThreadId] = useState(threadFromURL);
  const [weather, setWeather] = useState("");
  const openThread = useCallback((thread) => {
    const url = new URL(window.location.href);
    if (url.searchParams.get("thread") === thread) return;
    url.searchParams.set("thread", thread);
    window.history.pushState(null, "", url);
    document.body.style.background = "";
    delete document.body.dataset.weather;
    setWeather("");
    setThreadId(thread);
  }, []);
  const newChat = useCallback(() => openThread(crypto.randomUUID()), [openThread]);

  return (
    <CopilotKit runtimeUrl="/api/copilotkit" agentId="demo" enableInspector={false}>
      <WeatherTool onWeather={setWeather} />
      <Approvals />
      <ToolCalls />
      <ToolResults />
      <div className="page">
        <header>
          <h1>AAP agent via agui2aap</h1>
          <span className="thread" data-testid="thread">
            thread {threadId.slice(0, 8)}
          </span>
          {weather && (
            <span className="weather" data-testid="weather">
              {weather}
            </span>
          )}
          <button type="button" onClick={newChat} data-testid="new-chat">
            New chat
          </button>
          <span className="user" data-testid="user">
            {user}
          </span>
          <button type="button" onClick={onSignOut} data-testid="sign-out">
            Sign out
          </button>
        </header>
        <div className="body">
          <ThreadList threadId={threadId} onSelect={openThread} />
          <main>
            <CopilotChat key={threadId} threadId={threadId} agentId="demo" />
          </main>
        </div>
      </div>
    </CopilotKit>
  );
}

createRoot(document.getElementById("root")).render(<App />);
