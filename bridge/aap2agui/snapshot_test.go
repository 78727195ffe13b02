package aap2agui_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
)

// Some AG-UI agents end each run with a MESSAGES_SNAPSHOT of the whole
// thread (what they sent in RunAgentInput plus the run's messages). When it
// matches what was streamed, it changes nothing: the answer, the history
// (ids included: the next RunAgentInput is the same) are those of the same
// run without the snapshot, in every mode.
func TestSnapshotMatchingTheStream(t *testing.T) {
	script := func(snapshot bool) func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		return func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
			r, m := fmt.Sprintf("r%d", n), fmt.Sprintf("m%d", n)
			text := fmt.Sprintf("Answer %d.", n)
			evs := concat([]string{runStarted(in),
				fmt.Sprintf(`{"type":"REASONING_MESSAGE_START","messageId":%q,"role":"reasoning"}`, r),
				fmt.Sprintf(`{"type":"REASONING_MESSAGE_CONTENT","messageId":%q,"delta":"Let me see."}`, r),
				fmt.Sprintf(`{"type":"REASONING_MESSAGE_END","messageId":%q}`, r)},
				textMessage(m, "Answer ", fmt.Sprintf("%d.", n)))
			if snapshot {
				msgs := append([]any{}, toAny(in.Raw["messages"])...)
				msgs = append(msgs,
					map[string]any{"id": r, "role": "reasoning", "content": "Let me see."},
					map[string]any{"id": m, "role": "assistant", "content": text})
				b, _ := json.Marshal(map[string]any{"type": "MESSAGES_SNAPSHOT", "messages": msgs})
				evs = append(evs, string(b))
			}
			sseEvents(w, append(evs, runFinished(in))...)
		}
	}
	for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
		t.Run(string(mode), func(t *testing.T) {
			var answers, histories [2][]string
			var inputs [2][]string
			for i, snapshot := range []bool{false, true} {
				up := newFakeUpstream(t, script(snapshot))
				e := newEnv(t, up.URL)
				id := e.createSession(t, aap.PostSessionsRequest{})
				for _, say := range []string{"hello", "and again", "once more"} {
					r := doRaw(t, http.MethodPost, e.URL+"/sessions/"+id+"/turns", "", `{"stream":"`+string(mode)+`","messages":[{"role":"user","content":"`+say+`"}]}`)
					require.Equal(t, http.StatusOK, r.Status, r.Body)
					answers[i] = append(answers[i], r.Body)
				}
				histories[i] = e.history(t, id, aap.HistoryFull)
				for n := range up.count() {
					inputs[i] = append(inputs[i], string(up.input(t, n).Raw["messages"]))
				}
			}
			// The ids aap2agui gives user messages are random: numbered here
			// in order of appearance.
			for i := range 2 {
				seen := map[string]string{}
				norm := func(xs []string) {
					for j, x := range xs {
						xs[j] = randomID.ReplaceAllStringFunc(x, func(id string) string {
							if _, ok := seen[id]; !ok {
								seen[id] = fmt.Sprintf("msg-%d", len(seen))
							}
							return seen[id]
						})
					}
				}
				for j := range answers[i] {
					answers[i][j] = namedLogs(answers[i][j])
				}
				norm(answers[i])
				norm(histories[i])
				norm(inputs[i])
			}
			assert.Equal(t, answers[0], answers[1], "the answers")
			assert.Equal(t, histories[0], histories[1], "the history")
			assert.Equal(t, inputs[0], inputs[1], "the agent is sent the same history, ids included")
			require.Len(t, histories[1], 6)
			assert.Contains(t, strings.Join(histories[1], "\n"), "Let me see.")
		})
	}
}

var randomID = regexp.MustCompile(`msg-[0-9a-f]{32}`)

// runLogID is the run log of a streamed turn's SSE ids ("id: <log>:<n>"):
// random, written as <log> by namedLogs.
var runLogID = regexp.MustCompile(`(?m)^id: [A-Za-z0-9_-]{11}:`)

// namedLogs is s with its SSE ids' run logs written as <log>.
func namedLogs(s string) string { return runLogID.ReplaceAllString(s, "id: <log>:") }

func toAny(raw json.RawMessage) []any {
	var out []any
	_ = json.Unmarshal(raw, &out)
	return out
}
