package translate_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/translate"
)

// FuzzCheckTurn: whatever the history (one AAP message a line), the open
// interrupts and the turn, CheckTurn never panics; a turn it admits that
// begins with a user message closes exactly the calls left open that no
// tool-bound interrupt answers (those its cancelled resume answers), and one
// that does not answers each open call; what it closes are results of
// calls the history made.
func FuzzCheckTurn(f *testing.F) {
	hist := `{"role":"user","content":"hi"}
{"role":"assistant","content":[{"type":"tool_use","toolCallId":"c1","name":"pick","input":{}},{"type":"tool_use","toolCallId":"c2","name":"web_search","input":{}}]}`
	f.Add(hist, "c2", `{"role":"user","content":"next"}`)
	f.Add(hist, "c2", `{"role":"tool","toolCallId":"c1","content":"blue"}
{"role":"tool_permission","toolCallId":"c2","granted":true}`)
	f.Add(hist, "", `{"role":"tool","toolCallId":"c1","content":"blue"}`)
	f.Add(hist+"\n"+`{"role":"tool","toolCallId":"c1","content":"x"}`, "", `{"role":"tool","toolCallId":"c2","content":"y"}`)
	f.Fuzz(func(t *testing.T, history, interrupted, turn string) {
		h, ok := decodeLines(history)
		msgs, ok2 := decodeLines(turn)
		if !ok || !ok2 || len(msgs) == 0 {
			return
		}
		var open []types.Interrupt
		for _, id := range strings.Split(interrupted, ",") {
			if id != "" {
				open = append(open, translate.PermissionInterrupt(&aap.ToolCall{ToolCallID: id, Name: "web_search", Input: json.RawMessage(`{}`)}))
			}
		}
		closing, cancelled, err := translate.CheckTurn(slices.Values(h), open, msgs, nil)
		if err != nil {
			return
		}
		openCalls := translate.OpenCalls(slices.Values(h))
		if _, user := msgs[0].(*aap.UserMessage); user {
			bound := translate.MovedOnCalls(slices.Values(h), open)
			if len(closing)+len(bound) != len(openCalls) || len(cancelled) != len(open) {
				t.Fatalf("a user message closed %d and left %d to their interrupts of %d open calls, and cancelled %d of %d interrupts", len(closing), len(bound), len(openCalls), len(cancelled), len(open))
			}
			for _, m := range closing {
				if slices.Contains(bound, translate.AnsweredCall(m)) {
					t.Fatalf("call %s answered twice: closed, and by its cancelled interrupt", translate.AnsweredCall(m))
				}
			}
			return
		}
		if len(closing) > 0 || len(cancelled) > 0 {
			t.Fatalf("a turn without a user message closed %v, cancelled %v", closing, cancelled)
		}
		answered := map[string]bool{}
		for _, m := range msgs {
			answered[translate.AnsweredCall(m)] = true
		}
		for _, tu := range openCalls {
			if !answered[tu.ToolCallID] {
				t.Fatalf("admitted a turn leaving call %s open", tu.ToolCallID)
			}
		}
	})
}

// decodeLines decodes one AAP message a line; false when one does not.
func decodeLines(s string) ([]aap.Message, bool) {
	var out []aap.Message
	for _, line := range strings.Split(s, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		m, err := aap.DecodeMessage([]byte(line))
		if err != nil {
			return nil, false
		}
		out = append(out, m)
	}
	return out, true
}
