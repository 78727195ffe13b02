package agui2aap_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/demo"
)

// weatherTool is the frontend tool the demo agent calls for "weather in
// <place>", as an AG-UI client declares it.
var weatherTool = types.Tool{
	Name:        demo.WeatherTool,
	Description: "Get the current weather for a place.",
	Parameters: map[string]any{
		"type":       "object",
		"properties": map[string]any{"location": map[string]any{"type": "string"}},
		"required":   []any{"location"},
	},
}

// conv is an AG-UI client's side of one thread, kept the way HttpAgent
// keeps it: every run sends the whole history, and the events of the run
// are applied to it.
type conv struct {
	e              *env
	ThreadID       string
	Messages       []types.Message
	Tools          []types.Tool
	Context        []types.Context
	ForwardedProps any
	// Headers are sent with every run (name/value pairs).
	Headers []string
	n       int
}

func (e *env) conv(threadID string) *conv {
	return &conv{e: e, ThreadID: threadID}
}

func (c *conv) newID(prefix string) string {
	c.n++
	return fmt.Sprintf("%s-%s-%d", prefix, c.ThreadID, c.n)
}

// say adds a user message and returns its id.
func (c *conv) say(text string) string {
	id := c.newID("user")
	c.Messages = append(c.Messages, types.Message{ID: id, Role: types.RoleUser, Content: text})
	return id
}

// answer adds the tool message for a call.
func (c *conv) answer(toolCallID, content string) {
	c.Messages = append(c.Messages, types.Message{ID: c.newID("tool"), Role: types.RoleTool, ToolCallID: toolCallID, Content: content})
}

// input is the RunAgentInput of the next run.
func (c *conv) input(runID string, resume []types.ResumeEntry) types.RunAgentInput {
	if runID == "" {
		runID = c.newID("run")
	}
	tools := c.Tools
	if tools == nil {
		tools = []types.Tool{}
	}
	ctx := c.Context
	if ctx == nil {
		ctx = []types.Context{}
	}
	fwd := c.ForwardedProps
	if fwd == nil {
		fwd = map[string]any{}
	}
	msgs := c.Messages
	if msgs == nil {
		msgs = []types.Message{}
	}
	return types.RunAgentInput{
		ThreadID: c.ThreadID, RunID: runID, State: map[string]any{}, Messages: msgs,
		Tools: tools, Context: ctx, ForwardedProps: fwd, Resume: resume,
	}
}

// run starts a run with a new run id.
func (c *conv) run(t testing.TB, resume ...types.ResumeEntry) *result {
	t.Helper()
	return c.runAs(t, "", resume...)
}

// runAs starts a run with the given run id ("" for a new one) and applies
// its events to the history.
func (c *conv) runAs(t testing.TB, runID string, resume ...types.ResumeEntry) *result {
	t.Helper()
	in := c.input(runID, resume)
	r := c.e.post(t, "/agents/demo", in, c.Headers...)
	require.Equal(t, http.StatusOK, r.Status, "run answered %d: %s", r.Status, r.Body)
	res := summarize(r)
	if rs, ok := r.Events[0].(*events.RunStartedEvent); ok {
		require.Equal(t, in.ThreadID, rs.ThreadID())
		require.Equal(t, in.RunID, rs.RunID())
	}
	c.apply(r.Events)
	return res
}

// apply adds a run's messages to the history as HttpAgent does.
func (c *conv) apply(evs []events.Event) {
	find := func(id string) int {
		for i := range c.Messages {
			if c.Messages[i].ID == id {
				return i
			}
		}
		return -1
	}
	findCall := func(id string) (int, int) {
		for i := range c.Messages {
			for j := range c.Messages[i].ToolCalls {
				if c.Messages[i].ToolCalls[j].ID == id {
					return i, j
				}
			}
		}
		return -1, -1
	}
	appendText := func(i int, delta string) {
		s, _ := c.Messages[i].Content.(string)
		c.Messages[i].Content = s + delta
	}
	for _, ev := range evs {
		switch e := ev.(type) {
		case *events.TextMessageStartEvent:
			if find(e.MessageID) < 0 {
				c.Messages = append(c.Messages, types.Message{ID: e.MessageID, Role: types.RoleAssistant, Content: ""})
			}
		case *events.TextMessageContentEvent:
			appendText(find(e.MessageID), e.Delta)
		case *events.ReasoningMessageStartEvent:
			if find(e.MessageID) < 0 {
				c.Messages = append(c.Messages, types.Message{ID: e.MessageID, Role: types.RoleReasoning, Content: ""})
			}
		case *events.ReasoningMessageContentEvent:
			appendText(find(e.MessageID), e.Delta)
		case *events.ToolCallStartEvent:
			i := -1
			if e.ParentMessageID != nil {
				i = find(*e.ParentMessageID)
			}
			if i < 0 {
				id := e.ToolCallID
				if e.ParentMessageID != nil {
					id = *e.ParentMessageID
				}
				c.Messages = append(c.Messages, types.Message{ID: id, Role: types.RoleAssistant})
				i = len(c.Messages) - 1
			}
			c.Messages[i].ToolCalls = append(c.Messages[i].ToolCalls, types.ToolCall{ID: e.ToolCallID, Type: "function", Function: types.FunctionCall{Name: e.ToolCallName}})
		case *events.ToolCallArgsEvent:
			i, j := findCall(e.ToolCallID)
			c.Messages[i].ToolCalls[j].Function.Arguments += e.Delta
		case *events.ToolCallResultEvent:
			m := types.Message{ID: e.MessageID, Role: types.RoleTool, ToolCallID: e.ToolCallID, Content: e.Content}
			i, _ := findCall(e.ToolCallID)
			if i < 0 {
				c.Messages = append(c.Messages, m)
				continue
			}
			at := i + 1
			for at < len(c.Messages) && c.Messages[at].Role == types.RoleTool {
				at++
			}
			c.Messages = append(c.Messages[:at], append([]types.Message{m}, c.Messages[at:]...)...)
		}
	}
}

// dropLast removes the last message (a regenerate) and returns it.
func (c *conv) dropLast() types.Message {
	m := c.Messages[len(c.Messages)-1]
	c.Messages = c.Messages[:len(c.Messages)-1]
	return m
}

// toolCall is one tool call of a run.
type toolCall struct {
	ID, Name, Args, Parent string
}

// approve and deny are resume entries answering a permission interrupt.
func approve(interruptID string) types.ResumeEntry {
	return types.ResumeEntry{InterruptID: interruptID, Status: types.ResumeStatusResolved, Payload: map[string]any{"approved": true}}
}

func deny(interruptID, reason string) types.ResumeEntry {
	return types.ResumeEntry{InterruptID: interruptID, Status: types.ResumeStatusResolved, Payload: map[string]any{"approved": false, "reason": reason}}
}
