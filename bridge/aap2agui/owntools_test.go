package aap2agui_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/testkit/metricstest"
)

// fetchTool is a server tool the test agent runs on its own
// (permissions: none), as a Mastra agent runs its tools.
var fetchTool = aap.ToolSpec{
	Name: "fetch_page", Description: "Fetch a web page.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}}}`),
}

// inlineToolRun is a run that calls tool and runs it inline: the call, its
// result, then an answer.
func inlineToolRun(in *runInput, tool string) []string {
	return concat([]string{runStarted(in)},
		toolCallEvents("call_1", tool, "m0", `{"query":"x"}`),
		[]string{`{"type":"TOOL_CALL_RESULT","messageId":"result-call_1","toolCallId":"call_1","content":"ran","role":"tool"}`},
		textMessage("m1", "Done."), []string{runFinished(in)})
}

// A tool the agent runs on its own is not offered in /meta and cannot be
// enabled (nor used as a client tool's name); its calls are streamed as
// AAP's unexposed server-side tools: tool_call then tool_result, no action
// asked of the application, no warning.
func TestOwnTools(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, _ int) {
		sseEvents(w, inlineToolRun(in, fetchTool.Name)...)
	})
	var logs bridgetest.SyncBuffer
	e := newEnv(t, up.URL, func(c *aap2agui.Config) {
		c.OwnTools = []aap.ToolSpec{fetchTool}
		c.Logger = zerolog.New(&logs)
	})

	meta, err := e.Client.Meta(bridgetest.Context(t))
	require.NoError(t, err)
	var names []string
	for _, tool := range meta.Agents[0].Tools {
		names = append(names, tool.Name)
	}
	assert.Equal(t, []string{demo.SearchTool}, names, "only the tools the agent runs as sessions say are offered")

	r := doRaw(t, http.MethodPost, e.URL+"/sessions", "", `{"agent":{"name":"agent","tools":[{"name":"fetch_page","trust":true}]}}`)
	requireJSONError(t, r, http.StatusBadRequest, "invalid_request")
	assert.Contains(t, r.Body, `agent.tools[0].name`)
	assert.Contains(t, r.Body, `on its own`)
	r = doRaw(t, http.MethodPost, e.URL+"/sessions", "", `{"agent":{"name":"agent"},"tools":[{"name":"fetch_page","description":"d","parameters":{}}]}`)
	requireJSONError(t, r, http.StatusBadRequest, "invalid_request")
	assert.Contains(t, r.Body, `tools[0].name`)

	id := e.createSession(t, aap.PostSessionsRequest{})
	evs, err := e.stream(t, id, userTurn(aap.StreamDelta, "fetch"))
	require.NoError(t, err)
	assert.Equal(t, []string{
		`turn_start {}`,
		`tool_call {"toolCallId":"call_1","name":"fetch_page","input":{"query":"x"}}`,
		`tool_result {"toolCallId":"call_1","content":"ran"}`,
		`text_delta {"delta":"Done."}`,
		`turn_stop {"stopReason":"end_turn"}`,
	}, eventLines(t, evs))
	assert.Empty(t, historyProblems(e.historyMessages(t, id)))
	assert.NotContains(t, logs.String(), `"level":"warn"`)
	assert.NotContains(t, string(up.input(t, 0).Raw["forwardedProps"]), "fetch_page")
}

// A declared server tool (permissions: aap) that the agent runs although
// the session did not enable it with trust is logged as a warning naming
// the tool and the session; the turn and its history are what the agent
// did. A trusted tool run inline, or a granted one run after the resume,
// is no warning.
func TestToolRunAgainstSettings(t *testing.T) {
	const warning = "against the session's settings"
	tests := []struct {
		name    string
		tools   []aap.ServerToolRef
		setting string // "" when no warning is wanted
		label   string // the setting label of the metric
	}{
		{"not enabled", nil, "not enabled", "not_enabled"},
		{"enabled without trust", []aap.ServerToolRef{{Name: demo.SearchTool}}, "enabled without trust", "untrusted"},
		{"enabled with trust", []aap.ServerToolRef{{Name: demo.SearchTool, Trust: true}}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, _ int) {
				sseEvents(w, inlineToolRun(in, demo.SearchTool)...)
			})
			var logs bridgetest.SyncBuffer
			e := newEnv(t, up.URL, func(c *aap2agui.Config) { c.Logger = zerolog.New(&logs) })
			id := e.createSession(t, aap.PostSessionsRequest{Agent: aap.AgentConfig{Tools: tt.tools}})
			evs, err := e.stream(t, id, userTurn(aap.StreamDelta, "search x"))
			require.NoError(t, err)
			assert.Contains(t, eventLines(t, evs), `tool_result {"toolCallId":"call_1","content":"ran"}`)
			assert.Empty(t, historyProblems(e.historyMessages(t, id)))
			const counter = "aap2agui_tools_run_against_settings_total"
			m := metricstest.Scrape(t, e.Root+"/metrics", "")
			if tt.label == "" {
				assert.Zero(t, m.Value(counter), "no tool counted")
			} else {
				assert.Equal(t, 1.0, m.Value(counter, "tool", demo.SearchTool, "setting", tt.label))
			}
			var line string
			for _, l := range strings.Split(logs.String(), "\n") {
				if strings.Contains(l, warning) {
					line = l
				}
			}
			if tt.setting == "" {
				assert.Empty(t, line)
				return
			}
			require.NotEmpty(t, line, "logs:\n%s", logs.String())
			assert.Contains(t, line, `"level":"warn"`)
			assert.Contains(t, line, `"tool":"web_search"`)
			assert.Contains(t, line, `"session":"`+id+`"`)
			assert.Contains(t, line, `"session_setting":"`+tt.setting+`"`)
		})
	}

	t.Run("granted, run after the resume", func(t *testing.T) {
		up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
			if n == 0 {
				sseEvents(w, concat([]string{runStarted(in)}, toolCallEvents("call_s", demo.SearchTool, "m0", `{"query":"x"}`),
					[]string{interruptFinish(in, `[{"id":"perm-call_s","reason":"tool_call","toolCallId":"call_s"}]`)})...)
				return
			}
			sseEvents(w, concat([]string{runStarted(in),
				`{"type":"TOOL_CALL_RESULT","messageId":"result-call_s","toolCallId":"call_s","content":"ran","role":"tool"}`},
				textMessage("m1", "Done."), []string{runFinished(in)})...)
		})
		var logs bridgetest.SyncBuffer
		e := newEnv(t, up.URL, func(c *aap2agui.Config) { c.Logger = zerolog.New(&logs) })
		id := e.createSession(t, aap.PostSessionsRequest{Agent: aap.AgentConfig{Tools: []aap.ServerToolRef{{Name: demo.SearchTool}}}})
		_, err := e.stream(t, id, userTurn(aap.StreamDelta, "search x"))
		require.NoError(t, err)
		_, err = e.stream(t, id, aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{&aap.ToolPermissionMessage{ToolCallID: "call_s", Granted: true}}})
		require.NoError(t, err)
		assert.NotContains(t, logs.String(), warning)
	})
}
