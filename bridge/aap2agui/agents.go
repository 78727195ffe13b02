package aap2agui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/bridge/internal/upstream"
	"github.com/aapagui/aapagui/internal/ident"
	"github.com/aapagui/aapagui/internal/redact"
	"github.com/aapagui/aapagui/internal/redirect"
	"github.com/aapagui/aapagui/internal/reqbody"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// agent is one agent the Server serves: what GET /meta says of it and how
// its runs reach it (its AgentConfig, the Server's defaults filled in).
// Every session belongs to one agent, by the name it was created with.
type agent struct {
	client  *http.Client // calls the agent (Serving.HTTPClient)
	cfg     AgentConfig
	secrets map[string]bool // names of secret options
}

func newAgent(client *http.Client, cfg AgentConfig) *agent {
	a := &agent{client: client, cfg: cfg, secrets: map[string]bool{}}
	for _, o := range cfg.Agent.Options {
		if o.Type == aap.OptionSecret {
			a.secrets[o.Name] = true
		}
	}
	return a
}

// name is the agent's name, which routes its sessions.
func (a *agent) name() string { return a.cfg.Agent.Name }

// errOneAgentFields reports a Config that sets both Agents and the fields
// of a single agent.
var errOneAgentFields = errors.New("aap2agui: Config.Agents and the one-agent fields (Upstream, UpstreamHeader, Agent, OwnTools) exclude each other")

// roster is the agents a Server serves at one time: Server.SetAgents
// replaces it whole, and a turn keeps the agent it started with.
type roster struct {
	list   []*agent          // in the order of GET /meta
	byName map[string]*agent // the agents by name
	infos  []aap.AgentInfo   // what GET /meta says of them, in that order
}

// publicInfo is what GET /meta says of an agent: its description, with
// the default of each secret option redacted as a session's value of it
// is ("***"; an empty default stays empty, there being none).
func publicInfo(info aap.AgentInfo) aap.AgentInfo {
	secretDefault := func(o aap.AgentOption) bool { return o.Type == aap.OptionSecret && o.Default != "" }
	if !slices.ContainsFunc(info.Options, secretDefault) {
		return info
	}
	info.Options = slices.Clone(info.Options)
	for i, o := range info.Options {
		if secretDefault(o) {
			info.Options[i].Default = redactedValue
		}
	}
	return info
}

// agentOf returns the agent of a session: the one it was created with. A
// session whose agent is no longer configured cannot run turns.
func (r *roster) agentOf(sess *store.Session) (*agent, error) {
	if a := r.byName[sess.Agent.Name]; a != nil {
		return a, nil
	}
	return nil, fault.Fail(fault.KindNotFound, "unknown_agent", fmt.Sprintf("the session's agent %q is not served here any more", sess.Agent.Name))
}

// check validates server tool references, options and client tools
// against what the agent declares.
func (a *agent) check(cfg *aap.AgentConfig, clientTools []aap.ToolSpec) error {
	info := &a.cfg.Agent
	if cfg != nil {
		for i, t := range cfg.Tools {
			if a.ownTool(t.Name) {
				return fmt.Errorf("agent.tools[%d].name: agent %q runs %q on its own, whatever a session says (permissions: none in its configuration): it cannot be enabled or trusted", i, info.Name, t.Name)
			}
			if _, ok := info.Tool(t.Name); !ok {
				return fmt.Errorf("agent.tools[%d].name: %q is not a server tool of agent %q", i, t.Name, info.Name)
			}
		}
		for name, v := range cfg.Options {
			o, ok := info.Option(name)
			if !ok {
				return fmt.Errorf("agent.options.%s: agent %q has no such option", name, info.Name)
			}
			if o.Type == aap.OptionSelect && !slices.Contains(o.Options, v) {
				return fmt.Errorf("agent.options.%s: %q is not one of %q", name, v, o.Options)
			}
		}
	}
	seen := map[string]bool{}
	for i, t := range clientTools {
		if _, ok := info.Tool(t.Name); ok || a.ownTool(t.Name) {
			return fmt.Errorf("tools[%d].name: %q is already a server tool; tool names must be unique", i, t.Name)
		}
		if seen[t.Name] {
			return fmt.Errorf("tools[%d].name: %q is declared twice", i, t.Name)
		}
		seen[t.Name] = true
	}
	return nil
}

// ownTool reports whether name is a server tool the agent runs on its own
// (AgentConfig.OwnTools).
func (a *agent) ownTool(name string) bool {
	return slices.ContainsFunc(a.cfg.OwnTools, func(t aap.ToolSpec) bool { return t.Name == name })
}

// serverTool reports whether name is a server tool the agent declares.
func (a *agent) serverTool(name string) bool {
	_, ok := a.cfg.Agent.Tool(name)
	return ok
}

// toolOwners is whose each tool is in a session of the agent whose client
// tools are tools (translate.ToolOwners): those, and the server tools the
// agent declares in GET /meta. A call of any other tool (one declared
// permissions: none, or one the agent never declared) is the agent's
// own: the turn does not stop for it, and no answer is waited for.
func (a *agent) toolOwners(tools []aap.ToolSpec) translate.ToolOwners {
	return translate.ToolOwners{Client: translate.ToolNamed(tools), Server: a.serverTool}
}

// warnUndeclaredApprovals warns of each interrupt the run left that asks
// permission for a call of the agent's own (names: the run's calls by
// id): aap2agui waits for that permission, but an AAP client that reads
// GET /meta (agui2aap among them) takes the call for the agent's business
// and never answers it, and only a new message moves on.
func (a *agent) warnUndeclaredApprovals(log *zerolog.Logger, sess *store.Session, names map[string]string) {
	owners := a.toolOwners(sess.Tools)
	for _, in := range sess.Interrupts {
		name := names[in.ToolCallID]
		if in.Reason != translate.InterruptReasonToolCall || name == "" || !owners.Agents(name) {
			continue
		}
		log.Warn().Str("session", sess.ID).Str("tool", name).Str("tool_call_id", in.ToolCallID).
			Msg("the agent asks permission for a call of a tool its configuration does not declare as a server tool: AAP clients that read GET /meta take the call for the agent's own and never answer it; declare the tool in --agent-config (permissions: aap)")
	}
}

// threadID is the threadId of the session's runs under the agent's
// ThreadIDs.
func (a *agent) threadID(sessionID string) string {
	if a.cfg.ThreadIDs == ThreadIDsSession {
		return sessionID
	}
	return ThreadID(sessionID)
}

// readiness is the body of GET /readyz: ok, and to a caller that may know
// (turns.Base.MayKnow) the store and whether each agent's upstream answers.
// An upstream that does not answer leaves the server ready (its other
// agents, sessions and histories are served); the body says which.
type readiness struct {
	Status    string              `json:"status"`
	Store     string              `json:"store,omitempty"`
	Upstreams []upstreamReadiness `json:"upstreams,omitempty"`
}

// readyCheck is what a readiness check found (edge.Ready reuses it for
// edge.ReadyTTL): the store's failure, else each agent's upstream.
type readyCheck struct {
	store     error
	upstreams []upstreamReadiness
}

// upstreamReadiness is one agent's upstream in GET /readyz.
type upstreamReadiness struct {
	Agent  string `json:"agent"`
	Status string `json:"status"`          // ok or unreachable
	Error  string `json:"error,omitempty"` // why, without the URL
}

// probe reports whether the agent's upstream answers HTTP at all: a GET of
// its URL, without the agent's headers (no secret goes out for a probe),
// where any answer, whatever its status, counts; a redirect too, which is
// not followed.
func (a *agent) probe(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.cfg.Upstream, nil)
	if err != nil {
		return err
	}
	resp, err := a.client.Do(req)
	var re *redirect.Error
	if errors.As(err, &re) {
		return nil
	}
	if err != nil {
		if ue, ok := err.(*url.Error); ok {
			return ue.Err // the URL may hold what the operator keeps private
		}
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	return nil
}

// postSeparate sends the run as two: first the cancellation alone (the
// history without the new message, the resume entries), whose events are
// read to their end and left out of the turn, then the message (the whole
// history, no resume, the calls the cancelled interrupts held, movedOn,
// closed in it as not answered), which answers the turn. What the agent
// said of the cancellation reaches history only through a
// MESSAGES_SNAPSHOT of its own.
func (a *agent) postSeparate(ctx context.Context, in *types.RunAgentInput, calls *runExtras, movedOn []string) (*upstream.IdleBody, error) {
	cancelRun := *in
	cancelRun.RunID = ident.Random("run-")
	cancelRun.Messages = in.Messages[:len(in.Messages)-1]
	body, err := a.post(ctx, &cancelRun, calls)
	if err != nil {
		return nil, err
	}
	_, err = io.Copy(io.Discard, body)
	body.Close()
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	// A cancellation the agent failed on goes no further: the message's
	// run says what the agent makes of it.
	return a.post(ctx, messageRun(in, movedOn), calls)
}

// post sends the run to the upstream agent and returns its SSE body. The
// request derives from ctx, so a client that leaves cancels it. extras
// are what the run's messages hold that the SDK's types cannot carry (the
// tool calls' encrypted values, the metadata): they are added to its JSON
// (encrypted.go).
func (a *agent) post(ctx context.Context, in *types.RunAgentInput, extras *runExtras) (*upstream.IdleBody, error) {
	data, err := agui.MarshalRunAgentInput(in)
	if err == nil {
		data, err = extras.patch(data)
	}
	if err != nil {
		return nil, &upstreamError{fault.KindUpstream, "upstream_request", "could not encode the run for the agent", err}
	}
	// The wait for response headers only is bounded: the stream itself
	// may run for as long as the agent takes.
	body, err := upstream.Dial(ctx, a.cfg.HeaderTimeout, a.cfg.IdleTimeout, func(ctx context.Context) (io.ReadCloser, error) {
		req, rb, err := a.request(ctx, data)
		if err != nil {
			return nil, err
		}
		resp, err := a.client.Do(req)
		rb.Release()
		if err != nil {
			// A refused redirect without the URL it pointed to in full; any other
			// error quotes the URL, maybe a token in its query.
			return nil, redact.Error(redirect.Strip(err))
		}
		if err := checkResponse(resp); err != nil {
			return nil, err
		}
		return resp.Body, nil
	})
	var ue *upstreamError
	switch {
	case err == nil:
		return body, nil
	case !errors.Is(err, upstream.ErrHeaderTimeout) && errors.As(err, &ue):
		return nil, ue
	}
	f := upstream.Failure(err, "the agent", a.cfg.HeaderTimeout)
	return nil, &upstreamError{f.Kind, f.Code, f.Message, err}
}

// request is the POST of a run's JSON, data, to the agent, made with ctx
// (the request is made once, with the context of the call).
func (a *agent) request(ctx context.Context, data []byte) (*http.Request, *reqbody.Body, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.cfg.Upstream, nil)
	if err != nil {
		return nil, nil, &upstreamError{fault.KindUpstream, "upstream_request", "could not build the request to the agent", err}
	}
	// The run holds the whole conversation: its bytes go once the answer
	// has begun, not when the stream ends.
	rb := reqbody.Set(req, data)
	for k, vs := range a.cfg.UpstreamHeader {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	return req, rb, nil
}

// redactedValue stands for the value of a secret option, in a session
// and as an option's default.
const redactedValue = "***"
