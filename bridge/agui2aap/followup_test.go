package agui2aap_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
)

// Under a grant policy the bridge answers untrusted calls itself with
// follow-up turns; a follow-up the AAP server refuses ends the run with
// RUN_ERROR (UPSTREAM_ERROR), and a server that keeps calling tools is
// stopped after MaxFollowUps (TOO_MANY_FOLLOW_UPS).
func TestPolicyFollowUps(t *testing.T) {
	cases := []struct {
		name string
		turn func(w http.ResponseWriter, r *http.Request, n int, req *aap.PostSessionTurnRequest)
		code string
	}{
		{
			name: "follow-up refused",
			turn: func(w http.ResponseWriter, _ *http.Request, n int, _ *aap.PostSessionTurnRequest) {
				if n == 0 {
					writeEvents(w, &aap.TurnStart{}, &aap.ToolCall{ToolCallID: "call_1", Name: demo.SearchTool, Input: json.RawMessage(`{"query":"q"}`)},
						&aap.TurnStop{StopReason: aap.StopToolUse})
					return
				}
				writeJSON(w, http.StatusInternalServerError, aap.ErrorResponse{Error: aap.ErrorBody{Code: "boom", Message: "no"}})
			},
			code: agui2aap.CodeUpstreamError,
		},
		{
			name: "endless tool calls",
			turn: func(w http.ResponseWriter, _ *http.Request, n int, _ *aap.PostSessionTurnRequest) {
				writeEvents(w, &aap.TurnStart{}, &aap.ToolCall{ToolCallID: fmt.Sprintf("call_%d", n), Name: demo.SearchTool, Input: json.RawMessage(`{"query":"q"}`)},
					&aap.TurnStop{StopReason: aap.StopToolUse})
			},
			code: agui2aap.CodeTooManyFollowUps,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeAAP(t, tc.turn)
			e := newBridge(t, f.URL, func(c *agui2aap.Config) { c.Policy = agui2aap.PolicyGrant; c.MaxFollowUps = 2 })
			c := e.conv("policy")
			c.say("search q")
			r := c.run(t)
			assert.Equal(t, tc.code, r.errorCodeInBand())
			assert.NotEmpty(t, r.Calls, "the calls were shown before the error")
			for _, tr := range f.turnRequests()[1:] {
				for _, m := range tr.Messages {
					p, ok := m.(*aap.ToolPermissionMessage)
					require.True(t, ok, "a follow-up carries permissions only")
					assert.True(t, p.Granted)
				}
			}
			assert.LessOrEqual(t, len(f.turnRequests()), 3, "at most MaxFollowUps follow-ups")
		})
	}
}

// A turn that stops for a client tool and an untrusted server tool at
// once: the run ends with the interrupt; the next run carries the client's
// tool result and the resume, and the AAP server gets both in one turn.
func TestClientToolAndInterruptTogether(t *testing.T) {
	f := newFakeAAP(t, func(w http.ResponseWriter, _ *http.Request, n int, _ *aap.PostSessionTurnRequest) {
		if n == 0 {
			writeEvents(w, &aap.TurnStart{},
				&aap.ToolCall{ToolCallID: "call_w", Name: demo.WeatherTool, Input: json.RawMessage(`{"location":"Oslo"}`)},
				&aap.ToolCall{ToolCallID: "call_s", Name: demo.SearchTool, Input: json.RawMessage(`{"query":"Oslo"}`)},
				&aap.TurnStop{StopReason: aap.StopToolUse})
			return
		}
		writeEvents(w, &aap.TurnStart{}, &aap.ToolResult{ToolCallID: "call_s", Content: aap.TextContent("found")},
			&aap.Text{Text: "both done"}, &aap.TurnStop{StopReason: aap.StopEndTurn})
	})
	e := newBridge(t, f.URL)
	c := e.conv("mixed")
	c.Tools = []types.Tool{weatherTool}
	c.say("weather and search Oslo")
	r := c.run(t)
	require.Equal(t, "interrupt", r.outcome())
	require.Len(t, r.interrupts(), 1, "only the server tool is an interrupt")
	assert.Equal(t, "call_s", r.interrupts()[0].ToolCallID)
	th := e.thread(t, "mixed")
	assert.Equal(t, []string{"call_w"}, th.ClientCalls)

	c.answer("call_w", "Cold")
	r = c.run(t, approve(r.interrupts()[0].ID))
	assert.Equal(t, "both done", r.lastText())
	turns := f.turnRequests()
	require.Len(t, turns, 2)
	var got []string
	for _, m := range turns[1].Messages {
		switch m := m.(type) {
		case *aap.ToolMessage:
			got = append(got, "result "+m.ToolCallID+" "+m.Content.PlainText())
		case *aap.ToolPermissionMessage:
			got = append(got, fmt.Sprintf("permission %s %v", m.ToolCallID, m.Granted))
		}
	}
	assert.ElementsMatch(t, []string{"result call_w Cold", "permission call_s true"}, got)
}

// Oversized bodies and bad forwardedProps or tools are refused before the
// stream.
func TestInputLimits(t *testing.T) {
	e := newEnv(t, func(c *agui2aap.Config) { c.MaxBody = 2048 })
	big := e.conv("big")
	big.say(strings.Repeat("x", 4096))
	badFwd := e.conv("fwd")
	badFwd.say("hi")
	badFwd.ForwardedProps = map[string]any{"aap": "not an object"}
	badTools := e.conv("tools")
	badTools.say("hi")
	badTools.Tools = []types.Tool{{Name: "", Description: "nameless"}}
	cases := []struct {
		name   string
		in     types.RunAgentInput
		status int
		code   string
	}{
		{name: "body over MaxBody", in: big.input("", nil), status: http.StatusRequestEntityTooLarge, code: "body_too_large"},
		{name: "forwardedProps.aap not an object", in: badFwd.input("", nil), status: http.StatusBadRequest, code: "invalid_input"},
		{name: "a tool without a name", in: badTools.input("", nil), status: http.StatusBadRequest, code: "invalid_input"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.post(t, "/agents/demo", tc.in)
			assert.Equal(t, tc.status, r.Status, r.Body)
			assert.Equal(t, tc.code, r.errorCode())
		})
	}
	assert.Empty(t, e.sessions(t))
}

// --forward-auth: the caller's key goes to the AAP server, and threads are
// scoped to it.
func TestForwardAuth(t *testing.T) {
	up := httptestServer(t, demo.NewAAPAgent(demo.AAPAgentOptions{APIKeys: []string{"k1", "k2"}}))
	e := newBridge(t, up, func(c *agui2aap.Config) { c.ForwardAuth = true })
	one := e.conv("same")
	one.Headers = []string{"Authorization", "Bearer k1"}
	two := e.conv("same")
	two.Headers = []string{"Authorization", "Bearer k2"}
	one.say("from one")
	one.run(t)
	two.say("from two")
	two.run(t)
	one.say("one again")
	assert.Equal(t, []string{demo.EchoText("one again")}, one.run(t).Text)

	for key, want := range map[string][]string{"k1": {"from one", "one again"}, "k2": {"from two"}} {
		cl := aap.NewClient(up, aap.ClientOptions{APIKey: key})
		var ss []aap.SessionInfo
		for s, err := range cl.Sessions(bridgetest.Context(t)) {
			require.NoError(t, err)
			ss = append(ss, s)
		}
		require.Len(t, ss, 1, "key %s has its own session", key)
		hist, err := cl.History(bridgetest.Context(t), ss[0].SessionID, aap.HistoryFull)
		require.NoError(t, err)
		assert.Equal(t, want, userTexts(hist))
	}

	t.Run("a key the AAP server refuses", func(t *testing.T) {
		c := e.conv("refused")
		c.say("hi")
		r := e.post(t, "/agents/demo", c.input("", nil), "Authorization", "Bearer k3")
		assert.Equal(t, http.StatusUnauthorized, r.Status)
	})
}

func httptestServer(t *testing.T, h http.Handler) string {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s.URL
}
