package agui2aap_test

import (
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/aap"
)

// result summarizes a run's stream.
type result struct {
	*response
	Text      []string          // the text of each text message, in order
	Reasoning []string          // the text of each reasoning message
	Calls     []toolCall        // tool calls, in order
	Results   map[string]string // tool call id → result content
	Finished  *events.RunFinishedEvent
	Error     *events.RunErrorEvent
}

func summarize(r *response) *result {
	res := &result{response: r, Results: map[string]string{}}
	text := map[string]int{}
	reasoning := map[string]int{}
	calls := map[string]int{}
	for _, ev := range r.Events {
		switch e := ev.(type) {
		case *events.TextMessageStartEvent:
			text[e.MessageID] = len(res.Text)
			res.Text = append(res.Text, "")
		case *events.TextMessageContentEvent:
			res.Text[text[e.MessageID]] += e.Delta
		case *events.ReasoningMessageStartEvent:
			reasoning[e.MessageID] = len(res.Reasoning)
			res.Reasoning = append(res.Reasoning, "")
		case *events.ReasoningMessageContentEvent:
			res.Reasoning[reasoning[e.MessageID]] += e.Delta
		case *events.ToolCallStartEvent:
			calls[e.ToolCallID] = len(res.Calls)
			c := toolCall{ID: e.ToolCallID, Name: e.ToolCallName}
			if e.ParentMessageID != nil {
				c.Parent = *e.ParentMessageID
			}
			res.Calls = append(res.Calls, c)
		case *events.ToolCallArgsEvent:
			res.Calls[calls[e.ToolCallID]].Args += e.Delta
		case *events.ToolCallResultEvent:
			res.Results[e.ToolCallID] = e.Content
		case *events.RunFinishedEvent:
			res.Finished = e
		case *events.RunErrorEvent:
			res.Error = e
		}
	}
	return res
}

// outcome is the RUN_FINISHED outcome type, "" when there is none (or the
// run failed).
func (r *result) outcome() string {
	if r.Finished == nil || r.Finished.Outcome == nil {
		return ""
	}
	return string(r.Finished.Outcome.Type)
}

// interrupts are the run's interrupts.
func (r *result) interrupts() []types.Interrupt {
	if r.Finished == nil || r.Finished.Outcome == nil {
		return nil
	}
	return r.Finished.Outcome.Interrupts
}

// lastText is the text of the run's last text message.
func (r *result) lastText() string {
	if len(r.Text) == 0 {
		return ""
	}
	return r.Text[len(r.Text)-1]
}

// userTexts are the texts of the history's user messages, in order.
func userTexts(hist []aap.Message) []string {
	var out []string
	for _, m := range hist {
		if u, ok := m.(*aap.UserMessage); ok {
			out = append(out, u.Content.PlainText())
		}
	}
	return out
}

// toolMessages are the history's tool messages, by tool call id.
func toolMessages(hist []aap.Message) map[string][]string {
	out := map[string][]string{}
	for _, m := range hist {
		if tm, ok := m.(*aap.ToolMessage); ok {
			out[tm.ToolCallID] = append(out[tm.ToolCallID], tm.Content.PlainText())
		}
	}
	return out
}

// roles are the roles of the history, in order.
func roles(hist []aap.Message) []string {
	out := make([]string, len(hist))
	for i, m := range hist {
		out[i] = string(m.Role())
	}
	return out
}
