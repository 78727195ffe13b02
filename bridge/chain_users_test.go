package bridge_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/userid"
	"github.com/aapagui/aapagui/store"
)

// userChain is an AG-UI client's way to an AG-UI agent through two
// bridges: agui2aap G (keys g1 and g2, users named by X-User, the user
// forwarded in X-User-Id) in front of aap2agui P (key p-key, users named
// by X-User-Id) in front of the demo AG-UI agent. It records the X-User-Id
// of every request P receives.
type userChain struct {
	G, P string // base URLs

	mu   sync.Mutex
	seen []string // "<method> <path> <X-User-Id>"
}

func newUserChain(t *testing.T) *userChain {
	uc := &userChain{}
	agent := httptest.NewServer(demo.AGUIAgent{})
	t.Cleanup(agent.Close)
	p, err := aap2agui.New(aap2agui.Config{
		Upstream: agent.URL, Store: store.NewMemory(), Agent: aap.AgentInfo{Name: "demo", Capabilities: aap2agui.DefaultAgent().Capabilities},
		Serving: aap2agui.Serving{APIKeys: []string{"p-key"}, Users: userid.Options{Header: "X-User-Id"}},
	})
	require.NoError(t, err)
	ps := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uc.mu.Lock()
		uc.seen = append(uc.seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("X-User-Id"))
		uc.mu.Unlock()
		p.ServeHTTP(w, r)
	}))
	t.Cleanup(ps.Close)
	g, err := agui2aap.New(agui2aap.Config{
		Upstream: ps.URL, UpstreamAPIKey: "p-key", Store: store.NewMemory(), ForwardUser: "X-User-Id",
		Serving: agui2aap.Serving{APIKeys: []string{"g1", "g2"}, Users: userid.Options{Header: "X-User"}},
	})
	require.NoError(t, err)
	gs := httptest.NewServer(g)
	t.Cleanup(gs.Close)
	uc.G, uc.P = gs.URL, ps.URL
	return uc
}

// run sends one user message on thread as (key, user) to agui2aap, which
// must run it to its end.
func (uc *userChain) run(t *testing.T, key, user, thread, text string) {
	t.Helper()
	in := map[string]any{
		"threadId": thread, "runId": "run-" + text, "state": map[string]any{}, "tools": []any{}, "context": []any{}, "forwardedProps": map[string]any{},
		"messages": []any{map[string]any{"id": "m-" + text, "role": "user", "content": text}},
	}
	body, err := json.Marshal(in)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), bridgetest.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, uc.G+"/agents/demo", strings.NewReader(string(body)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("X-User", user)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", out)
	require.Contains(t, string(out), "RUN_FINISHED", "%s", out)
}

// users are the X-User-Id values P received, in order of first sight.
func (uc *userChain) users(t *testing.T) []string {
	uc.mu.Lock()
	defer uc.mu.Unlock()
	var out []string
	for _, s := range uc.seen {
		method, rest, _ := strings.Cut(s, " ")
		path, user, _ := strings.Cut(rest, " ")
		if method == http.MethodGet && path == "/meta" {
			continue // no one user's: P's /meta needs none
		}
		assert.NotEmpty(t, user, "%s %s came without the user", method, path)
		if !slices.Contains(out, user) {
			out = append(out, user)
		}
	}
	return out
}

// With --forward-user, agui2aap names each run's user to an AAP server
// that takes --user-header, so that users stay apart beyond the first
// hop: on aap2agui each (agui2aap key, user) has its own sessions, which
// another user, or the same name under another key, does not see.
func TestChainKeepsUsersApart(t *testing.T) {
	uc := newUserChain(t)
	runs := []struct{ key, user, thread, text string }{
		{"g1", "alice", "t1", "alice says hi"},
		{"g1", "bob", "t1", "bob says hi"},
		{"g2", "alice", "t1", "the other alice says hi"},
		{"g1", "alice", "t2", "alice again"},
	}
	for _, r := range runs {
		uc.run(t, r.key, r.user, r.thread, r.text)
	}
	users := uc.users(t)
	require.Len(t, users, 3, "one user id on aap2agui per (key, user): %v", users)
	for _, u := range users {
		assert.NotContains(t, []string{"alice", "bob"}, u, "aap2agui is given an id, not the user's name")
	}

	// alice's second run is a thread of its own: two sessions.
	want := [][]string{{"alice again", "alice says hi"}, {"bob says hi"}, {"the other alice says hi"}}
	ctx, cancel := context.WithTimeout(context.Background(), bridgetest.Timeout)
	defer cancel()
	for i, u := range users {
		cl := aap.NewClient(uc.P, aap.ClientOptions{APIKey: "p-key", Header: http.Header{"X-User-Id": {u}}})
		var texts []string
		for s, err := range cl.Sessions(ctx) {
			require.NoError(t, err)
			hist, err := cl.History(ctx, s.SessionID, aap.HistoryFull)
			require.NoError(t, err)
			for _, m := range hist {
				if um, ok := m.(*aap.UserMessage); ok {
					texts = append(texts, um.Content.Text)
				}
			}
		}
		slices.Sort(texts)
		assert.Equal(t, want[i], texts, "the conversations of user %d, and no one else's", i)
	}
	r, err := http.Get(uc.P + "/sessions")
	require.NoError(t, err)
	r.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, r.StatusCode)
}

// ForwardUser needs a user scope to forward, and a header of its own.
func TestForwardUserConfig(t *testing.T) {
	for name, tc := range map[string]struct {
		cfg  agui2aap.Config
		says string
	}{
		"no user scope": {agui2aap.Config{ForwardUser: "X-User-Id"}, "needs a user scope"},
		"Authorization": {agui2aap.Config{ForwardUser: "authorization", Serving: agui2aap.Serving{Users: userid.Options{Header: "X-User"}}}, "cannot be Authorization"},
		"not a header":  {agui2aap.Config{ForwardUser: "X User", Serving: agui2aap.Serving{Users: userid.Options{Header: "X-User"}}}, "not a header name"},
	} {
		tc.cfg.Upstream, tc.cfg.Store = "http://127.0.0.1:1", store.NewMemory()
		_, err := agui2aap.New(tc.cfg)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), tc.says, name)
	}
}
