package demo_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/sse"
)

// starterSays is what one run of the starter said, one line per message,
// call, snapshot or state event, after checking that its events are what
// @ag-ui/client accepts.
func starterSays(t *testing.T, url, body string) []string {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	var evs []events.Event
	var says []string
	var text, args strings.Builder
	var name string
	for f, err := range sse.Read(resp.Body, sse.ReadOptions{}) {
		require.NoError(t, err)
		ev, err := agui.DecodeEvent(f.Data)
		require.NoError(t, err, "%s", f.Data)
		evs = append(evs, ev)
		switch ev := ev.(type) {
		case *events.TextMessageContentEvent:
			text.WriteString(ev.Delta)
		case *events.TextMessageEndEvent:
			says = append(says, "text: "+text.String())
			text.Reset()
		case *events.ToolCallStartEvent:
			name = ev.ToolCallName
		case *events.ToolCallArgsEvent:
			args.WriteString(ev.Delta)
		case *events.ToolCallEndEvent:
			says = append(says, "call: "+name+" "+args.String())
			args.Reset()
		case *events.RunFinishedEvent:
			if ev.Result != nil {
				says = append(says, string(f.Data))
			}
		case *events.RunStartedEvent, *events.TextMessageStartEvent:
		default:
			says = append(says, string(f.Data))
		}
	}
	require.NoError(t, agui.Verify(evs))
	require.IsType(t, &events.RunStartedEvent{}, evs[0])
	require.IsType(t, &events.RunFinishedEvent{}, evs[len(evs)-1])
	return says
}

func starterInput(messages ...string) string {
	return `{"threadId":"th-1","runId":"run-1","state":{},"tools":[],"context":[],"forwardedProps":{},"messages":[` + strings.Join(messages, ",") + `]}`
}

func userSays(id, text string) string {
	return `{"id":` + strconvQuote(id) + `,"role":"user","content":` + strconvQuote(text) + `}`
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

const toolAnswer = `{"id":"t1","role":"tool","toolCallId":"call-0","content":"done"}`

// The starter's features, each on its path, answer as the Python
// starter's files do: texts, calls of the page's tools with their
// arguments streamed, snapshots of the input messages (as they came, with
// the agent's call and its result after them), the recipe and the steps as
// state, and the predictive story beside a confirmation.
func TestStarterFeatures(t *testing.T) {
	srv := httptest.NewServer(&demo.Starter{})
	t.Cleanup(srv.Close)
	u1 := `{"id":"u1","role":"user","content":"hello","metadata":{"kept":true}}`
	countdown := "text: counting down: 10  9  8  7  6  5  4  3  2  1  ✓"
	steps := `{"steps":[`
	for i := 1; i <= 10; i++ {
		if i > 1 {
			steps += ","
		}
		steps += fmt.Sprintf(`{"description":"Step %d","status":"enabled"}`, i)
	}
	steps += "]}"
	weather, _ := json.Marshal(demo.StarterWeather)
	haiku, _ := json.Marshal(demo.StarterHaiku)
	for i, tc := range []struct {
		feature, body string
		want          func(n int) []string
	}{
		{"agentic_chat", starterInput(u1), func(int) []string { return []string{countdown} }},
		{"agentic_chat", starterInput(userSays("u1", "tool")), func(int) []string {
			return []string{`call: change_background {"background":"` + demo.StarterBackground + `"}`}
		}},
		{"agentic_chat", starterInput(u1, toolAnswer), func(int) []string { return []string{"text: background changed ✓"} }},
		{"agentic_chat", starterInput(userSays("u1", "backend_tool")), func(n int) []string {
			return []string{snapshotOf(n, userSays("u1", "backend_tool"), "lookup_weather", `{"city":"San Francisco","weather":"sunny"}`, "The weather in San Francisco is sunny.")}
		}},
		{"backend_tool_rendering", starterInput(u1), func(n int) []string {
			return []string{snapshotOf(n, u1, "get_weather", `{"city":"San Francisco"}`, string(weather))}
		}},
		{"backend_tool_rendering", starterInput(u1, toolAnswer), func(int) []string { return []string{"text: Retrieved weather information!"} }},
		{"human_in_the_loop", starterInput(u1), func(int) []string { return []string{"call: generate_task_steps " + steps} }},
		{"human_in_the_loop", starterInput(u1, toolAnswer), func(int) []string { return []string{"text: Ok! I'm working on it."} }},
		{"tool_based_generative_ui", starterInput(u1), func(n int) []string {
			return []string{snapshotOf(n, u1, "generate_haiku", string(haiku), "Haiku created")}
		}},
		{"tool_based_generative_ui", starterInput(userSays("u2", "thanks")), func(n int) []string {
			return []string{fmt.Sprintf(`{"type":"MESSAGES_SNAPSHOT","messages":[%s,{"content":"Haiku created","id":"assistant-%d","role":"assistant"}]}`, userSays("u2", "thanks"), n)}
		}},
		{"shared_state", starterInput(u1), func(int) []string { return []string{`{"type":"STATE_SNAPSHOT","snapshot":` + demo.StarterRecipe + `}`} }},
		{"predictive_state_updates", starterInput(u1), func(n int) []string {
			return []string{`{"type":"CUSTOM","name":"PredictState","value":[{"state_key":"document","tool":"write_document_local","tool_argument":"document"}]}`,
				`call: write_document_local {"document":"` + demo.StarterStory(int64(n)) + `"}`, "call: confirm_changes {}"}
		}},
		{"predictive_state_updates", starterInput(u1, toolAnswer), func(int) []string { return []string{"text: Ok!"} }},
	} {
		// Each case is one run, numbered in turn: its ids are its own.
		t.Run(tc.feature, func(t *testing.T) {
			assert.Equal(t, tc.want(i), starterSays(t, srv.URL+"/"+tc.feature, tc.body))
		})
	}
}

// The agentic generative UI's steps are state: ten pending, each marked
// completed by a patch of its own, then all completed; with Extras, a step
// goes around the patches, and the shared state's recipe has an activity
// before it and a result after it. Pauses change nothing of what is said.
func TestStarterState(t *testing.T) {
	steps := func(done int) string {
		var parts []string
		for i := 1; i <= 10; i++ {
			status := "pending"
			if i <= done {
				status = "completed"
			}
			parts = append(parts, fmt.Sprintf(`{"description":"Step %d","status":"%s"}`, i, status))
		}
		return `{"type":"STATE_SNAPSHOT","snapshot":{"steps":[` + strings.Join(parts, ",") + `]}}`
	}
	want := []string{steps(0)}
	for i := range 10 {
		want = append(want, fmt.Sprintf(`{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/steps/%d/status","value":"completed"}]}`, i))
	}
	want = append(want, steps(10))
	withSteps := append(append([]string{want[0], `{"type":"STEP_STARTED","stepName":"steps"}`}, want[1:11]...), `{"type":"STEP_FINISHED","stepName":"steps"}`, want[11])
	recipe := `{"type":"STATE_SNAPSHOT","snapshot":` + demo.StarterRecipe + `}`
	result := `{"type":"RUN_FINISHED","threadId":"th-1","runId":"run-1","result":{"saved":true,"servings":2.50}}`
	for _, tc := range []struct {
		name    string
		starter *demo.Starter
		steps   []string
		recipe  []string
	}{
		{"plain", &demo.Starter{}, want, []string{recipe}},
		{"paused", &demo.Starter{Pause: time.Millisecond}, want, []string{recipe}},
		{"extras", &demo.Starter{Extras: true}, withSteps, []string{`{"type":"ACTIVITY_SNAPSHOT","messageId":"act-1","activityType":"recipe-card","content":{"title":"Spicy wraps"}}`, recipe, result}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.starter)
			t.Cleanup(srv.Close)
			assert.Equal(t, tc.steps, starterSays(t, srv.URL+"/agentic_generative_ui", starterInput(userSays("u1", "plan"))))
			assert.Equal(t, tc.recipe, starterSays(t, srv.URL+"/prefix/shared_state", starterInput(userSays("u1", "cook"))))
		})
	}
}

// A path that names no feature is 404, naming the features; another
// method than POST is 405; a body that is not a RunAgentInput is 400.
func TestStarterRefusals(t *testing.T) {
	srv := httptest.NewServer(&demo.Starter{})
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		method, path, body string
		status             int
		code, says         string
	}{
		{http.MethodPost, "/weather", starterInput(), http.StatusNotFound, "unknown_feature", "agentic_chat, backend_tool_rendering"},
		{http.MethodGet, "/shared_state", "", http.StatusMethodNotAllowed, "method_not_allowed", "POST"},
		{http.MethodPost, "/shared_state", `{"messages":"no"}`, http.StatusBadRequest, "invalid_body", "not a RunAgentInput"},
	} {
		req, err := http.NewRequest(tc.method, srv.URL+tc.path, bytes.NewReader([]byte(tc.body)))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var body struct {
			Error struct{ Code, Message string }
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		resp.Body.Close()
		assert.Equal(t, tc.status, resp.StatusCode, tc.path)
		assert.Equal(t, tc.code, body.Error.Code)
		assert.Contains(t, body.Error.Message, tc.says)
	}
}

// snapshotOf is the MESSAGES_SNAPSHOT of run n that answers the input
// message with a call of the tool and its result.
func snapshotOf(n int, input, tool, args, result string) string {
	call, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("assistant-%d", n), "role": "assistant", "toolCalls": []any{map[string]any{
		"id": fmt.Sprintf("call-%d", n), "type": "function", "function": map[string]string{"name": tool, "arguments": args}}}})
	res, _ := json.Marshal(map[string]string{"id": fmt.Sprintf("result-%d", n), "role": "tool", "content": result, "toolCallId": fmt.Sprintf("call-%d", n)})
	return `{"type":"MESSAGES_SNAPSHOT","messages":[` + input + "," + string(call) + "," + string(res) + `]}`
}
