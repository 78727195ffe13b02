package aap2agui_test

import (
	"net/http"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
)

// TestSeparateCancelRun: a user message sent while an interrupt is open
// goes, with Config.SeparateCancelRun, as two runs: the cancellation alone
// (its events left out of the turn), then the message, which answers the
// turn. Without it, one run carries both.
func TestSeparateCancelRun(t *testing.T) {
	for _, separate := range []bool{true, false} {
		t.Run(map[bool]string{true: "separate", false: "one run"}[separate], func(t *testing.T) {
			up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
				switch {
				case n == 0:
					sseEvents(w, runStarted(in), interruptFinish(in, `[{"id":"int-1","reason":"confirmation","message":"Go on?"}]`))
				case len(in.Resume) > 0 && separate:
					sseEvents(w, textRun(in, "cancel", "Cancelled.")...)
				default:
					sseEvents(w, textRun(in, "answer", "About that message.")...)
				}
			})
			e := newEnv(t, up.URL, func(c *aap2agui.Config) { c.SeparateCancelRun = separate })
			id := e.createSession(t, aap.PostSessionsRequest{})
			_, err := e.Client.Turn(testContext(t), id, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("start")}})
			require.NoError(t, err)

			evs, err := e.stream(t, id, userTurn(aap.StreamDelta, "something else"))
			require.NoError(t, err)
			assert.Equal(t, eventsOf(t, aap.StreamDelta, []part{{kind: "text", text: "About that message.", deltas: []string{"About that message."}}}, aap.StopEndTurn), eventLines(t, evs))

			cancelled := []types.ResumeEntry{{InterruptID: "int-1", Status: types.ResumeStatusCancelled}}
			if !separate {
				require.Equal(t, 2, up.count())
				assert.Equal(t, cancelled, up.input(t, 1).Resume)
				assert.Equal(t, "something else", up.input(t, 1).Messages[len(up.input(t, 1).Messages)-1].Content)
				return
			}
			require.Equal(t, 3, up.count())
			first, second := up.input(t, 1), up.input(t, 2)
			assert.Equal(t, cancelled, first.Resume, "the cancellation first")
			assert.Equal(t, second.Messages[:len(second.Messages)-1], first.Messages, "without the new message")
			assert.Empty(t, second.Resume, "then the message, alone")
			assert.Equal(t, "something else", second.Messages[len(second.Messages)-1].Content)
			assert.NotEqual(t, first.RunID, second.RunID)
			assert.Equal(t, first.ThreadID, second.ThreadID)
			assert.Equal(t, []string{
				`{"role":"user","content":"start"}`,
				toolUse("int-1", "agui_interrupt", `{"id":"int-1","reason":"confirmation","message":"Go on?"}`),
				toolMessage("int-1", "Tool call was not answered: the user sent a new message instead."),
				`{"role":"user","content":"something else"}`,
				assistantText("About that message."),
			}, e.history(t, id, aap.HistoryFull))
			assert.Empty(t, historyProblems(e.historyMessages(t, id)))
		})
	}
}
