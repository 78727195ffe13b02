package aap2agui_test

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
)

// The conversations with real frameworks (langgraph_test.go,
// copilotkit_test.go) are played by one runner.

// ids replaces the ids an upstream makes with call#1…, int#1…, in order of
// first sight, so that expectations can be written out in full; it keeps
// the real ones for the turns that answer them.
type ids struct {
	calls, interrupts []string
	callPattern       *regexp.Regexp
	interruptPattern  *regexp.Regexp // nil: the upstream's interrupts have no ids of their own
}

func (n *ids) lines(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		s = n.callPattern.ReplaceAllStringFunc(s, func(id string) string { return "call#" + strconv.Itoa(n.index(&n.calls, id)) })
		if n.interruptPattern != nil {
			s = n.interruptPattern.ReplaceAllStringFunc(s, func(id string) string { return "int#" + strconv.Itoa(n.index(&n.interrupts, id)) })
		}
		out[i] = s
	}
	return out
}

func (n *ids) index(list *[]string, id string) int {
	k := indexOf(*list, id)
	if k < 0 {
		*list = append(*list, id)
		k = len(*list) - 1
	}
	return k + 1
}

// upstreamStep is one turn of a conversation with a real framework.
type upstreamStep struct {
	send func(n *ids) []aap.Message
	want []part
	stop aap.StopReason
	// recorded are the history entries the turn adds before the run's own
	// messages (the results aap2agui records for answered permissions and
	// closed calls).
	recorded []string
	// produced are the run's messages: the none-mode response.
	produced []string
	// history, when set, is the whole history after the turn, where the
	// agent's MESSAGES_SNAPSHOT orders the thread otherwise than it was
	// sent and streamed.
	history []string
}

type upstreamConversation struct {
	name    string
	session aap.PostSessionsRequest
	steps   []upstreamStep
}

// runUpstreamConversations plays each conversation through e in every
// stream mode, checking the exact AAP events (or the none-mode response),
// that the stored history is exactly the conversation (what was sent and
// what was streamed), and that it is valid AAP.
func runUpstreamConversations(t *testing.T, e *env, newIDs func() *ids, convs []upstreamConversation) {
	for _, conv := range convs {
		for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
			t.Run(conv.name+"/"+string(mode), func(t *testing.T) {
				id := e.createSession(t, conv.session)
				n := newIDs()
				var conversation []string
				for i, st := range conv.steps {
					msgs := st.send(n)
					req := aap.PostSessionTurnRequest{Stream: mode, Messages: msgs}
					if mode == aap.StreamNone {
						resp, err := e.Client.Turn(testContext(t), id, &req)
						require.NoError(t, err, "step %d", i)
						assert.Equal(t, st.stop, resp.StopReason, "step %d", i)
						produced := st.produced
						if produced == nil {
							produced = []string{}
						}
						assert.Equal(t, produced, n.lines(messageLines(t, resp.Messages)), "step %d: response messages", i)
					} else {
						evs, err := e.stream(t, id, req)
						require.NoError(t, err, "step %d", i)
						assert.Equal(t, eventsOf(t, mode, st.want, st.stop), n.lines(eventLines(t, evs)), "step %d: events", i)
					}
					conversation = append(conversation, st.recorded...)
					for _, m := range msgs {
						if m.Role() != aap.RoleToolPermission {
							conversation = append(conversation, n.lines(messageLines(t, []aap.Message{m}))...)
						}
					}
					conversation = append(conversation, st.produced...)
					if st.history != nil {
						conversation = append([]string(nil), st.history...)
					}
					assert.Equal(t, conversation, n.lines(e.history(t, id, aap.HistoryFull)), "step %d: full history", i)
					assert.Empty(t, historyProblems(e.historyMessages(t, id)), "step %d", i)
				}
			})
		}
	}
}

func userSays(s string) func(*ids) []aap.Message {
	return func(*ids) []aap.Message { return []aap.Message{aap.UserText(s)} }
}

// answerCall answers the newest tool call; answerInterrupt the newest
// interrupt.
func answerCall(m func(id string) aap.Message) func(n *ids) []aap.Message {
	return func(n *ids) []aap.Message { return []aap.Message{m(n.calls[len(n.calls)-1])} }
}

func answerInterruptID(m func(id string) aap.Message) func(n *ids) []aap.Message {
	return func(n *ids) []aap.Message { return []aap.Message{m(n.interrupts[len(n.interrupts)-1])} }
}
