package bridge_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/store"
)

// chain is the AAP demo agent reached two ways: directly, and through
// aap2agui in front of agui2aap in front of another instance of the agent
// (with the same options), so that the sessions of each side can be told
// apart.
type chain struct {
	// Agent is the demo agent's description, as its /meta gives it.
	Agent aap.AgentInfo
	// Direct talks to the demo agent.
	Direct *aap.Client
	// Chained talks to aap2agui, whose upstream is agui2aap's endpoint for
	// the demo agent.
	Chained *aap.Client
	// Upstream talks to the demo agent behind agui2aap: the AAP server the
	// chained conversations end up in.
	Upstream *aap.Client
}

// newChain starts the demo agent D (talked to directly), another demo
// agent A with the same options, agui2aap G in front of A (memory store,
// no server tools configured: aap2agui forwards the session's own in
// forwardedProps) and aap2agui P in front of G's /agents/demo, describing
// A's agent in its /meta. All speak AAP version 3.
func newChain(t *testing.T, opts demo.AAPAgentOptions) *chain {
	return newVersionChain(t, opts, aap.Version3, aap.Version3)
}

// newVersionChain is newChain with D and A speaking AAP version upstream
// (agui2aap reads it from A's /meta) and P serving version client. Each
// client reads its server's version from its /meta.
func newVersionChain(t *testing.T, opts demo.AAPAgentOptions, client, upstream int) *chain {
	t.Helper()
	opts.Version = upstream
	d := httptest.NewServer(demo.NewAAPAgent(opts))
	t.Cleanup(d.Close)
	direct := aap.NewClient(d.URL, aap.ClientOptions{})
	a := httptest.NewServer(demo.NewAAPAgent(opts))
	t.Cleanup(a.Close)
	upstreamClient := aap.NewClient(a.URL, aap.ClientOptions{})

	ctx, cancel := context.WithTimeout(context.Background(), bridgetest.Timeout)
	defer cancel()
	meta, err := direct.Meta(ctx)
	require.NoError(t, err)
	require.Equal(t, upstream, meta.Version)
	info, ok := meta.Agent("demo")
	require.True(t, ok, "the demo agent's /meta lists no agent named demo")

	g, err := agui2aap.New(agui2aap.Config{Upstream: a.URL, Store: store.NewMemory()})
	require.NoError(t, err)
	gs := httptest.NewServer(g)
	t.Cleanup(gs.Close)

	p, err := aap2agui.New(aap2agui.Config{
		Upstream: gs.URL + "/agents/" + info.Name, Store: store.NewMemory(), Agent: *info,
		Versions: []aap2agui.Mount{{Version: client}},
	})
	require.NoError(t, err)
	ps := httptest.NewServer(p)
	t.Cleanup(ps.Close)

	return &chain{Agent: *info, Direct: direct, Chained: aap.NewClient(ps.URL, aap.ClientOptions{}), Upstream: upstreamClient}
}

// turn is one scripted turn. Messages may answer a tool call by its
// normalised name ("call#1"): the runner substitutes the generated id.
type turn struct {
	Messages []aap.Message
	// Agent and Tools are the turn's overrides; nil sends none.
	Agent *aap.AgentConfig
	Tools []aap.ToolSpec
}

// transcript is what an AAP application observes of one conversation, ids
// normalised: each turn's events (delta and message modes) or response
// (none mode), the final full and compacted histories and the session as
// GET /sessions/:id shows it, without its id.
type transcript struct {
	Turns     [][]string
	History   []string
	Compacted []string
	Session   string
	// ID is the session's id (left out of the comparisons).
	ID string
}

// converse creates a session with c, plays the turns in the stream mode
// and returns the transcript. Any transport or protocol error fails the
// test: the demo agent answers every scripted turn.
func converse(t *testing.T, c *aap.Client, session *aap.PostSessionsRequest, turns []turn, mode aap.StreamMode) transcript {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bridgetest.Timeout)
	defer cancel()
	x := newIDs()
	var tr transcript
	version, err := c.Version(ctx)
	require.NoError(t, err)
	if version == aap.Version3 {
		created, err := c.CreateSession(ctx, session)
		require.NoError(t, err)
		tr.ID = created.SessionID
	} else {
		// Versions 1 and 2 create the session with its first turn: PUT
		// /session with the seed and the first turn's user message. Its
		// answer opens with session_start (a none answer carries
		// sessionId), which the transcript leaves out.
		require.Truef(t, startsWithUser(turns), "version %d starts a session with a user message", version)
		put := &aap.PutSessionRequest{
			Agent: session.Agent, Stream: mode, Tools: aap.ToolSpecsToV1(session.Tools),
			Messages: append(session.Messages[:len(session.Messages):len(session.Messages)], turns[0].Messages...),
		}
		var got []string
		tr.ID, got = putTurn(t, ctx, c, x, put)
		tr.Turns, turns = append(tr.Turns, got), turns[1:]
	}
	id := tr.ID

	for i, tu := range turns {
		req := &aap.PostSessionTurnRequest{Stream: mode, Messages: resolveCalls(t, x, tu.Messages), Agent: tu.Agent, Tools: tu.Tools}
		var got []string
		if mode == aap.StreamNone {
			resp, err := c.Turn(ctx, id, req)
			require.NoErrorf(t, err, "turn %d", i+1)
			got = responseLines(t, x, resp)
		} else {
			for ev, err := range c.StreamTurn(ctx, id, req) {
				require.NoErrorf(t, err, "turn %d", i+1)
				s, err := x.event(ev)
				require.NoError(t, err)
				got = append(got, s)
			}
		}
		tr.Turns = append(tr.Turns, got)
	}

	hist, err := c.History(ctx, id, aap.HistoryFull)
	require.NoError(t, err)
	tr.History, err = x.messages(hist)
	require.NoError(t, err)
	hist, err = c.History(ctx, id, aap.HistoryCompacted)
	require.NoError(t, err)
	tr.Compacted, err = x.messages(hist)
	require.NoError(t, err)

	info, err := c.GetSession(ctx, id)
	require.NoError(t, err)
	require.Equal(t, id, info.SessionID)
	info.SessionID = ""
	tr.Session, err = marshal(info)
	require.NoError(t, err)
	return tr
}

// startsWithUser reports whether the first turn is a user message without
// overrides: what PUT /session (versions 1 and 2) can start a session
// with.
func startsWithUser(turns []turn) bool {
	return len(turns) > 0 && len(turns[0].Messages) == 1 && turns[0].Messages[0].Role() == aap.RoleUser &&
		turns[0].Agent == nil && turns[0].Tools == nil
}

// putTurn sends PUT /session and returns the new session's id and the
// first turn's transcript lines.
func putTurn(t *testing.T, ctx context.Context, c *aap.Client, x *ids, put *aap.PutSessionRequest) (string, []string) {
	t.Helper()
	if put.Mode() == aap.StreamNone {
		resp, err := c.PutSession(ctx, put)
		require.NoError(t, err, "PUT /session")
		return resp.SessionID, responseLines(t, x, resp.Turn())
	}
	var id string
	var got []string
	for ev, err := range c.StreamPutSession(ctx, put) {
		require.NoError(t, err, "PUT /session")
		if start, ok := ev.(*aap.SessionStart); ok {
			require.Empty(t, id, "one session_start")
			require.Empty(t, got, "session_start comes first")
			id = start.SessionID
			continue
		}
		s, err := x.event(ev)
		require.NoError(t, err)
		got = append(got, s)
	}
	require.NotEmpty(t, id, "the stream named its session")
	return id, got
}

// responseLines renders a none-mode turn response.
func responseLines(t *testing.T, x *ids, resp *aap.PostSessionTurnResponse) []string {
	t.Helper()
	msgs, err := x.messages(resp.Messages)
	require.NoError(t, err)
	return append([]string{"stopReason " + string(resp.StopReason)}, msgs...)
}

// upstreamSessions lists the sessions of the AAP server behind the chain.
func upstreamSessions(t *testing.T, c *aap.Client) []aap.SessionInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bridgetest.Timeout)
	defer cancel()
	var out []aap.SessionInfo
	for s, err := range c.Sessions(ctx) {
		require.NoError(t, err)
		out = append(out, s)
	}
	return out
}

// fullHistory is a session's full history with its toolCallIds normalised
// (numbered by first appearance in it).
func fullHistory(t *testing.T, c *aap.Client, id string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bridgetest.Timeout)
	defer cancel()
	hist, err := c.History(ctx, id, aap.HistoryFull)
	require.NoError(t, err)
	out, err := newIDs().messages(hist)
	require.NoError(t, err)
	return out
}

// String renders a transcript for a failure message.
func (tr transcript) String() string {
	var sb strings.Builder
	for i, tu := range tr.Turns {
		fmt.Fprintf(&sb, "turn %d:\n  %s\n", i+1, strings.Join(tu, "\n  "))
	}
	fmt.Fprintf(&sb, "history:\n  %s\nsession: %s\n", strings.Join(tr.History, "\n  "), tr.Session)
	return sb.String()
}
