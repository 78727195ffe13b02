package aap2agui_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/testkit/metricstest"
)

// TestSeparateCancelRun: a user message sent while an interrupt is open
// goes, with CancelRunSeparate, as two runs: the cancellation alone
// (its events left out of the turn), then the message, which answers the
// turn. Without it (CancelRunAuto), one run carries both, and an agent
// that answers the message in it gets no other.
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
			e := newEnv(t, up.URL, func(c *aap2agui.Config) {
				if separate {
					c.CancelRun = aap2agui.CancelRunSeparate
				}
			})
			id := e.createSession(t, aap.PostSessionsRequest{})
			_, err := e.Client.Turn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("start")}})
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

// cancelTurn is what a scripted agent does with a user message sent while
// its interrupt is open (cancelled resume entries beside it), as the
// frameworks were seen to: first the run carrying both, then, when
// aap2agui sends one, the run carrying the message alone.
type cancelTurn struct {
	name string
	mode aap2agui.CancelRun
	// first writes the run carrying both.
	first func(w http.ResponseWriter, in *runInput)
	// second, when set, writes the run of the message (by default: its
	// answer in text).
	second func(w http.ResponseWriter, in *runInput)
	// failSecond answers the run of the message with a 500.
	failSecond bool
	// followed: aap2agui sent the run of the message.
	followed bool
	want     []part
	stop     aap.StopReason
	// history is the history after the start of the conversation (the
	// user's "start", the interrupt call and its closing result).
	history []string
}

// snapshotOf is a MESSAGES_SNAPSHOT of msgs, then an assistant message id
// saying text.
func snapshotOf(t *testing.T, msgs []types.Message, id, text string) string {
	msgs = append(msgs[:len(msgs):len(msgs)], types.Message{ID: id, Role: types.RoleAssistant, Content: text})
	b, err := json.Marshal(msgs)
	require.NoError(t, err)
	return `{"type":"MESSAGES_SNAPSHOT","messages":` + string(b) + `}`
}

// whole is text streamed in one delta.
func whole(text string) part { return part{kind: "text", text: text, deltas: []string{text}} }

func cancelTurns(t *testing.T) []cancelTurn {
	closed := toolMessage("int-1", "Tool call was not answered: the user sent a new message instead.")
	asked := []string{`{"role":"user","content":"start"}`, toolUse("int-1", "agui_interrupt", `{"id":"int-1","reason":"confirmation","message":"Go on?"}`), closed}
	answered := append(asked[:3:3], `{"role":"user","content":"something else"}`, assistantText("About that message."))
	return []cancelTurn{
		{
			// @ag-ui/mastra: RUN_STARTED, RUN_FINISHED, nothing between.
			name:     "nothing: the message follows",
			first:    func(w http.ResponseWriter, in *runInput) { sseEvents(w, runStarted(in), runFinished(in)) },
			followed: true, want: []part{whole("About that message.")}, stop: aap.StopEndTurn, history: answered,
		},
		{
			// @ag-ui/langgraph: an answer to the cancellation, and a
			// snapshot without the message, which it never read; in the
			// run of the message, its answer and a snapshot that puts the
			// message after the answer to the cancellation. The two
			// answers are one AAP answer, in two text blocks.
			name: "an answer to the cancellation, a snapshot without the message: the message follows",
			first: func(w http.ResponseWriter, in *runInput) {
				sseEvents(w, concat([]string{runStarted(in)}, textMessage("cancel", "Cancelled."),
					[]string{snapshotOf(t, in.Messages[:len(in.Messages)-1], "cancel", "Cancelled."), runFinished(in)})...)
			},
			second: func(w http.ResponseWriter, in *runInput) {
				n := len(in.Messages)
				msgs := append(in.Messages[:n-1:n-1], types.Message{ID: "cancel", Role: types.RoleAssistant, Content: "Cancelled."}, in.Messages[n-1])
				sseEvents(w, concat([]string{runStarted(in)}, textMessage("answer", "About that message."),
					[]string{snapshotOf(t, msgs, "answer", "About that message."), runFinished(in)})...)
			},
			followed: true, want: []part{whole("Cancelled."), joined, whole("About that message.")}, stop: aap.StopEndTurn,
			history: append(asked[:3:3], assistantText("Cancelled."), `{"role":"user","content":"something else"}`, assistantText("About that message.")),
		},
		{
			// An agent that sends a snapshot in the run that cancelled,
			// and none in the run of the message: the snapshot keeps the
			// turn's message, before what the turn streamed; the message's
			// answer is a message of its own after the snapshot (the
			// stream still joins the two texts).
			name: "a snapshot in the first run only: the answer follows it in history",
			first: func(w http.ResponseWriter, in *runInput) {
				sseEvents(w, concat([]string{runStarted(in)}, textMessage("cancel", "Cancelled."),
					[]string{snapshotOf(t, in.Messages[:len(in.Messages)-1], "cancel", "Cancelled."), runFinished(in)})...)
			},
			followed: true, want: []part{whole("Cancelled."), joined, whole("About that message.")}, stop: aap.StopEndTurn,
			history: append(asked[:3:3], `{"role":"user","content":"something else"}`, assistantText("Cancelled."), assistantText("About that message.")),
		},
		{
			// The answer, given only in the snapshot, is streamed.
			name: "a snapshot holding the message: read, no other run",
			first: func(w http.ResponseWriter, in *runInput) {
				sseEvents(w, runStarted(in), snapshotOf(t, in.Messages, "answer", "About that message."), runFinished(in))
			},
			want: []part{whole("About that message.")}, stop: aap.StopEndTurn, history: answered,
		},
		{
			// The demo agent, agui2aap, CopilotKit's BuiltInAgent.
			name: "an answer: no other run",
			first: func(w http.ResponseWriter, in *runInput) {
				sseEvents(w, textRun(in, "answer", "About that message.")...)
			},
			want: []part{whole("About that message.")}, stop: aap.StopEndTurn, history: answered,
		},
		{
			name: "a new interrupt: no other run",
			first: func(w http.ResponseWriter, in *runInput) {
				sseEvents(w, runStarted(in), interruptFinish(in, `[{"id":"int-2","reason":"confirmation","message":"Really?"}]`))
			},
			want: []part{call("int-2", "agui_interrupt", `{"id":"int-2","reason":"confirmation","message":"Really?"}`)}, stop: aap.StopToolUse,
			history: append(asked[:3:3], `{"role":"user","content":"something else"}`,
				toolUse("int-2", "agui_interrupt", `{"id":"int-2","reason":"confirmation","message":"Really?"}`)),
		},
		{
			// Microsoft Agent Framework refuses every cancelled resume
			// entry (APPROVAL_RESUME_CANCELLED) before any output: the
			// message follows, on its own.
			name: "an error before any output: the message follows",
			first: func(w http.ResponseWriter, in *runInput) {
				sseEvents(w, runStarted(in), fmt.Sprintf(`{"type":"RUN_ERROR","message":"no","code":"REFUSED","runId":%q}`, in.RunID))
			},
			followed: true, want: []part{whole("About that message.")}, stop: aap.StopEndTurn, history: answered,
		},
		{
			name: "an error before any output, and the run of the message fails: the error ends the turn",
			first: func(w http.ResponseWriter, in *runInput) {
				sseEvents(w, runStarted(in), fmt.Sprintf(`{"type":"RUN_ERROR","message":"no","runId":%q}`, in.RunID))
			},
			failSecond: true, followed: true, stop: aap.StopError,
			history: append(asked[:3:3], `{"role":"user","content":"something else"}`),
		},
		{
			name: "an error after an answer: no other run",
			first: func(w http.ResponseWriter, in *runInput) {
				sseEvents(w, concat([]string{runStarted(in)}, textMessage("m", "Half"),
					[]string{fmt.Sprintf(`{"type":"RUN_ERROR","message":"no","runId":%q}`, in.RunID)})...)
			},
			want: []part{whole("Half")}, stop: aap.StopError,
			history: append(asked[:3:3], `{"role":"user","content":"something else"}`, assistantText("Half")),
		},
		{
			name:       "nothing, and the run of the message fails: the first run ends the turn",
			first:      func(w http.ResponseWriter, in *runInput) { sseEvents(w, runStarted(in), runFinished(in)) },
			failSecond: true, followed: true, stop: aap.StopEndTurn,
			history: append(asked[:3:3], `{"role":"user","content":"something else"}`),
		},
		{
			name:  "nothing, with CancelRunSingle: no other run",
			mode:  aap2agui.CancelRunSingle,
			first: func(w http.ResponseWriter, in *runInput) { sseEvents(w, runStarted(in), runFinished(in)) },
			stop:  aap.StopEndTurn, history: append(asked[:3:3], `{"role":"user","content":"something else"}`),
		},
	}
}

// TestCancelRunFollowUp: by default (CancelRunAuto) a user message sent
// while an interrupt is open goes in one run with the cancellation; when
// the agent ends that run without having read the message, a run carrying
// the message alone follows in the same turn and answers it. The AAP
// client sees one turn; history holds the message and the answer.
func TestCancelRunFollowUp(t *testing.T) {
	for _, tc := range cancelTurns(t) {
		for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
			t.Run(tc.name+"/"+string(mode), func(t *testing.T) {
				up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
					switch {
					case n == 0:
						sseEvents(w, runStarted(in), interruptFinish(in, `[{"id":"int-1","reason":"confirmation","message":"Go on?"}]`))
					case n == 1:
						tc.first(w, in)
					case tc.failSecond:
						http.Error(w, "busy", http.StatusInternalServerError)
					case tc.second != nil:
						tc.second(w, in)
					default:
						sseEvents(w, textRun(in, "answer", "About that message.")...)
					}
				})
				e := newEnv(t, up.URL, func(c *aap2agui.Config) { c.CancelRun = tc.mode })
				id := e.createSession(t, aap.PostSessionsRequest{})
				_, err := e.Client.Turn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("start")}})
				require.NoError(t, err)

				req := userTurn(mode, "something else")
				if mode == aap.StreamNone {
					resp, err := e.Client.Turn(bridgetest.Context(t), id, &req)
					require.NoError(t, err)
					assert.Equal(t, tc.stop, resp.StopReason)
				} else {
					evs, err := e.stream(t, id, req)
					require.NoError(t, err)
					assert.Equal(t, eventsOf(t, mode, tc.want, tc.stop), eventLines(t, evs))
				}
				assert.Equal(t, tc.history, e.history(t, id, aap.HistoryFull))
				assert.Empty(t, historyProblems(e.historyMessages(t, id)))

				first := up.input(t, 1)
				assert.Equal(t, []types.ResumeEntry{{InterruptID: "int-1", Status: types.ResumeStatusCancelled}}, first.Resume)
				if !tc.followed {
					assert.Equal(t, 2, up.count(), "no other run")
					return
				}
				require.Equal(t, 3, up.count())
				second := up.input(t, 2)
				assert.Empty(t, second.Resume, "the message alone")
				assert.Equal(t, first.messageIDs(), second.messageIDs(), "on the same history")
				assert.Equal(t, first.ThreadID, second.ThreadID)
				assert.NotEqual(t, first.RunID, second.RunID)
			})
		}
	}
}

// TestCancelRunDemoAgent: the demo AG-UI agent reads a cancelled resume
// and the new message in one run and answers the message: the default
// sends it that run and no other, in every stream mode, and history holds
// the message and the answer.
func TestCancelRunDemoAgent(t *testing.T) {
	for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
		t.Run(string(mode), func(t *testing.T) {
			var runs atomic.Int32
			agent := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				runs.Add(1)
				demo.AGUIAgent{}.ServeHTTP(w, r)
			}))
			e := newEnv(t, agent)
			id := e.createSession(t, aap.PostSessionsRequest{Agent: aap.AgentConfig{Tools: []aap.ServerToolRef{{Name: demo.SearchTool}}}})
			resp, err := e.Client.Turn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("search dogs")}})
			require.NoError(t, err)
			require.Equal(t, aap.StopToolUse, resp.StopReason, "the search waits for its permission")
			callID := resp.Messages[0].(*aap.AssistantMessage).Content.Blocks[0].(*aap.ToolUseBlock).ToolCallID

			req := userTurn(mode, "never mind")
			if mode == aap.StreamNone {
				resp, err := e.Client.Turn(bridgetest.Context(t), id, &req)
				require.NoError(t, err)
				assert.Equal(t, []string{assistantText("You said: never mind")}, messageLines(t, resp.Messages))
			} else {
				evs, err := e.stream(t, id, req)
				require.NoError(t, err)
				assert.Equal(t, eventsOf(t, mode, []part{say("You said: never mind")}, aap.StopEndTurn), eventLines(t, evs))
			}
			assert.Equal(t, int32(2), runs.Load(), "one run for the message")
			assert.Equal(t, []string{
				`{"role":"user","content":"search dogs"}`,
				toolUse(callID, demo.SearchTool, `{"query":"dogs"}`),
				toolMessage(callID, "Tool call was not answered: the user sent a new message instead."),
				`{"role":"user","content":"never mind"}`,
				assistantText("You said: never mind"),
			}, e.history(t, id, aap.HistoryFull))
			assert.Empty(t, historyProblems(e.historyMessages(t, id)))
		})
	}
}

// The tokens of both runs of a followed turn are counted: the first run's
// RUN_FINISHED is left out of the turn, its usage is not.
func TestCancelRunFollowUpCountsBothRuns(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		finished := func(in *runInput, input, output int) string {
			return fmt.Sprintf(`{"type":"RUN_FINISHED","threadId":%q,"runId":%q,"usage":[{"provider":"p","model":"m","inputTokens":%d,"outputTokens":%d}]}`,
				in.ThreadID, in.RunID, input, output)
		}
		switch n {
		case 0:
			sseEvents(w, runStarted(in), interruptFinish(in, `[{"id":"int-1","reason":"confirmation","message":"Go on?"}]`))
		case 1: // the cancelled resume, the message unread (@ag-ui/mastra)
			sseEvents(w, runStarted(in), finished(in, 100, 0))
		default:
			sseEvents(w, concat([]string{runStarted(in)}, textMessage("answer", "About that."), []string{finished(in, 120, 30)})...)
		}
	})
	e := newEnv(t, up.URL)
	id := e.createSession(t, aap.PostSessionsRequest{})
	_, err := e.Client.Turn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("start")}})
	require.NoError(t, err)
	resp, err := e.Client.Turn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("something else")}})
	require.NoError(t, err)
	require.Equal(t, aap.StopEndTurn, resp.StopReason)
	require.Equal(t, 3, up.count(), "the message had a run of its own")
	m := metricstest.Scrape(t, e.Root+"/metrics", "")
	assert.Equal(t, 220.0, m.Value("aap2agui_tokens_total", "agent", agentName, "kind", "input"), "both runs' input tokens")
	assert.Equal(t, 30.0, m.Value("aap2agui_tokens_total", "agent", agentName, "kind", "output"))
}
