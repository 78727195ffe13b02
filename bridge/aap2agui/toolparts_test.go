package aap2agui_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
)

// An AAP tool result with an image block reaches an agent that speaks
// @ag-ui/core 1.0 (Config.ToolResultParts) as content parts; a 0.0.x agent
// (the default) gets the JSON of the blocks as a string; a text-only result
// is a string either way.
func TestToolResultParts(t *testing.T) {
	result := aap.BlockContent(&aap.TextBlock{Text: "the chart"}, &aap.ImageBlock{URL: "https://example.com/c.png"})
	for _, parts := range []bool{false, true} {
		up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
			if n == 0 {
				sseEvents(w, concat([]string{runStarted(in)},
					toolCallEvents("call_1", weatherSpec.Name, "m0", `{"location":"Lima"}`),
					toolCallEvents("call_2", weatherSpec.Name, "m0", `{"location":"Cusco"}`),
					[]string{runFinished(in)})...)
				return
			}
			sseEvents(w, textRun(in, "m1", "ok")...)
		})
		e := newEnv(t, up.URL, func(c *aap2agui.Config) { c.ToolResultParts = parts })
		id := e.createSession(t, aap.PostSessionsRequest{Tools: []aap.ToolSpec{weatherSpec}})
		_, err := e.stream(t, id, userTurn(aap.StreamDelta, "chart"))
		require.NoError(t, err)
		_, err = e.stream(t, id, aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{
			&aap.ToolMessage{ToolCallID: "call_1", Content: result},
			&aap.ToolMessage{ToolCallID: "call_2", Content: aap.BlockContent(&aap.TextBlock{Text: "22°C"})},
		}})
		require.NoError(t, err)
		msgs := rawMessages(t, up.input(t, 1))
		require.Len(t, msgs, 4)
		want := any(`[{"type":"text","text":"the chart"},{"type":"image","url":"https://example.com/c.png"}]`)
		if parts {
			var p []any
			require.NoError(t, json.Unmarshal([]byte(`[{"type":"text","text":"the chart"},{"type":"image","source":{"type":"url","value":"https://example.com/c.png"}}]`), &p))
			want = p
		}
		assert.Equal(t, want, msgs[2]["content"], "parts: %v", parts)
		assert.Equal(t, "22°C", msgs[3]["content"], "parts: %v", parts)
	}
}
