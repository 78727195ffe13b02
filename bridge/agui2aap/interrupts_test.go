package agui2aap_test

import (
	"net/http"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/demo"
)

// Runs that break the AG-UI interrupt rules are answered with RUN_STARTED
// then RUN_ERROR with a stable code, and change nothing stored: a correct
// resume afterwards still works.
func TestInterruptRules(t *testing.T) {
	e := newEnv(t)
	c := e.conv("rules")
	c.say("search cats")
	r := c.run(t)
	require.Equal(t, "interrupt", r.outcome())
	it := r.interrupts()[0]
	before := e.thread(t, "rules")
	require.Len(t, before.Interrupts, 1)

	withMessage := func(text string) []types.Message {
		msgs := append([]types.Message(nil), c.Messages...)
		return append(msgs, types.Message{ID: "late-" + text, Role: types.RoleUser, Content: text})
	}
	cases := []struct {
		name     string
		messages []types.Message
		resume   []types.ResumeEntry
		code     string
	}{
		{name: "new input without resume", messages: withMessage("never mind"), code: agui2aap.CodeInterruptsPending},
		{name: "the same history without resume", messages: c.Messages, code: agui2aap.CodeInterruptsPending},
		{name: "resume naming an unknown interrupt", messages: c.Messages, resume: []types.ResumeEntry{approve("perm-nope")}, code: agui2aap.CodeUnknownInterrupt},
		{name: "resume answering one open and one unknown", messages: c.Messages, resume: []types.ResumeEntry{approve(it.ID), approve("perm-nope")}, code: agui2aap.CodeUnknownInterrupt},
		{name: "new input with resume", messages: withMessage("and also"), resume: []types.ResumeEntry{approve(it.ID)}, code: agui2aap.CodeInputWithResume},
		{
			name: "resume without approved", messages: c.Messages,
			resume: []types.ResumeEntry{{InterruptID: it.ID, Status: types.ResumeStatusResolved, Payload: map[string]any{"ok": true}}},
			code:   agui2aap.CodeInvalidResume,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := c.input("", tc.resume)
			in.Messages = tc.messages
			resp := e.post(t, "/agents/demo", in)
			require.Equal(t, http.StatusOK, resp.Status, resp.Body)
			assert.Equal(t, []string{"RUN_STARTED", "RUN_ERROR"}, resp.types())
			assert.Equal(t, tc.code, resp.errorCodeInBand())
			assert.NotEmpty(t, resp.runError().Message)
			assert.Equal(t, before, e.thread(t, "rules"), "the stored thread is unchanged")
		})
	}

	r = c.run(t, approve(it.ID))
	assert.Equal(t, "success", r.outcome(), "a correct resume still works")
	assert.Equal(t, demo.SearchAnswer(demo.SearchResult("cats")), r.lastText())
	assert.Len(t, e.sessions(t), 1)
}

// A cancelled interrupt is a denial; the thread moves on.
func TestResumeCancelled(t *testing.T) {
	e := newEnv(t)
	c := e.conv("cancel")
	c.say("search cats")
	it := c.run(t).interrupts()[0]
	r := c.run(t, types.ResumeEntry{InterruptID: it.ID, Status: types.ResumeStatusCancelled})
	assert.Equal(t, demo.DeniedResult("cancelled"), r.Results[it.ToolCallID])
	assert.Equal(t, demo.DeniedText("cancelled"), r.lastText())
	c.say("hello")
	assert.Equal(t, []string{demo.EchoText("hello")}, c.run(t).Text)
}

// A resume when no interrupt is open is refused.
func TestResumeWithoutInterrupt(t *testing.T) {
	e := newEnv(t)
	c := e.conv("none-open")
	c.say("hello")
	c.run(t)
	before := e.thread(t, "none-open")
	c.say("again")
	in := c.input("", []types.ResumeEntry{approve("perm-call_x")})
	resp := e.post(t, "/agents/demo", in)
	require.Equal(t, http.StatusOK, resp.Status)
	assert.Equal(t, []string{"RUN_STARTED", "RUN_ERROR"}, resp.types())
	assert.Equal(t, agui2aap.CodeUnknownInterrupt, resp.errorCodeInBand())
	assert.Equal(t, before, e.thread(t, "none-open"))

	// Nor on a thread never seen.
	in = e.conv("fresh").input("", []types.ResumeEntry{approve("perm-call_x")})
	in.Messages = []types.Message{{ID: "u", Role: types.RoleUser, Content: "hi"}}
	resp = e.post(t, "/agents/demo", in)
	assert.Equal(t, agui2aap.CodeUnknownInterrupt, resp.errorCodeInBand())
}

// twoSearches is a fake AAP turn: the first turn calls web_search twice
// (untrusted: both wait for permission); the next answers both.
func twoSearches(w http.ResponseWriter, _ *http.Request, n int, req *aap.PostSessionTurnRequest) {
	if n == 0 {
		writeEvents(w, &aap.TurnStart{},
			&aap.ToolCall{ToolCallID: "call_a", Name: demo.SearchTool, Input: []byte(`{"query":"a"}`)},
			&aap.ToolCall{ToolCallID: "call_b", Name: demo.SearchTool, Input: []byte(`{"query":"b"}`)},
			&aap.TurnStop{StopReason: aap.StopToolUse})
		return
	}
	evs := []aap.Event{&aap.TurnStart{}}
	for _, m := range req.Messages {
		if p, ok := m.(*aap.ToolPermissionMessage); ok {
			content := "found " + p.ToolCallID
			if !p.Granted {
				content = demo.DeniedResult(p.Reason)
			}
			evs = append(evs, &aap.ToolResult{ToolCallID: p.ToolCallID, Content: aap.TextContent(content)})
		}
	}
	evs = append(evs, &aap.Text{Text: "done"}, &aap.TurnStop{StopReason: aap.StopEndTurn})
	writeEvents(w, evs...)
}

// Two interrupts, one answered: PARTIAL_RESUME, nothing sent upstream and
// nothing stored; answering both then works.
func TestPartialResume(t *testing.T) {
	f := newFakeAAP(t, twoSearches)
	e := newBridge(t, f.URL)
	c := e.conv("partial")
	c.say("search twice")
	r := c.run(t)
	require.Equal(t, "interrupt", r.outcome())
	its := r.interrupts()
	require.Len(t, its, 2)
	assert.Equal(t, "call_a", its[0].ToolCallID)
	assert.Equal(t, "call_b", its[1].ToolCallID)
	before := e.thread(t, "partial")

	in := c.input("", []types.ResumeEntry{approve(its[0].ID)})
	resp := e.post(t, "/agents/demo", in)
	assert.Equal(t, []string{"RUN_STARTED", "RUN_ERROR"}, resp.types())
	assert.Equal(t, agui2aap.CodePartialResume, resp.errorCodeInBand())
	assert.Equal(t, before, e.thread(t, "partial"))
	assert.Len(t, f.turnRequests(), 1, "nothing was sent upstream")

	r = c.run(t, approve(its[0].ID), deny(its[1].ID, "too many"))
	assert.Equal(t, "success", r.outcome())
	assert.Equal(t, "found call_a", r.Results["call_a"])
	assert.Equal(t, demo.DeniedResult("too many"), r.Results["call_b"])
	turns := f.turnRequests()
	require.Len(t, turns, 2)
	require.Len(t, turns[1].Messages, 2)
	perms := map[string]*aap.ToolPermissionMessage{}
	for _, m := range turns[1].Messages {
		p, ok := m.(*aap.ToolPermissionMessage)
		require.True(t, ok, "only permissions: %T", m)
		perms[p.ToolCallID] = p
	}
	assert.True(t, perms["call_a"].Granted)
	assert.False(t, perms["call_b"].Granted)
	assert.Equal(t, "too many", perms["call_b"].Reason)
}

// A denial the AAP server answers without a tool_result still gets a
// TOOL_CALL_RESULT saying so.
func TestDeniedWithoutUpstreamResult(t *testing.T) {
	f := newFakeAAP(t, func(w http.ResponseWriter, _ *http.Request, n int, _ *aap.PostSessionTurnRequest) {
		if n == 0 {
			writeEvents(w, &aap.TurnStart{},
				&aap.ToolCall{ToolCallID: "call_a", Name: demo.SearchTool, Input: []byte(`{"query":"a"}`)},
				&aap.TurnStop{StopReason: aap.StopToolUse})
			return
		}
		writeEvents(w, &aap.TurnStart{}, &aap.Text{Text: "ok, I won't"}, &aap.TurnStop{StopReason: aap.StopEndTurn})
	})
	e := newBridge(t, f.URL)
	c := e.conv("silent-deny")
	c.say("search a")
	it := c.run(t).interrupts()[0]
	r := c.run(t, deny(it.ID, "nope"))
	assert.Equal(t, "Tool call denied: nope", r.Results["call_a"])
	assert.Equal(t, "ok, I won't", r.lastText())
}
