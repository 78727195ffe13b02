package translate_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/translate"
)

// FuzzCloseCalls: whatever the AG-UI conversation and the calls to close,
// CloseCalls never panics, leaves its input alone, keeps every message in
// order, and gives each named call that an assistant message holds and no
// tool message answers exactly one result, among the tool messages right
// after its assistant message; nothing else is added.
func FuzzCloseCalls(f *testing.F) {
	f.Add(`[{"id":"u1","role":"user","content":"hi"},{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"x","arguments":"{}"}},{"id":"c2","type":"function","function":{"name":"y","arguments":"{}"}}]},{"id":"t2","role":"tool","toolCallId":"c2","content":"ok"},{"id":"u2","role":"user","content":"next"}]`, "c1,c2,c9")
	f.Add(`[{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"x","arguments":"{}"}}]}]`, "c1")
	f.Fuzz(func(t *testing.T, conversation, calls string) {
		var msgs []types.Message
		if json.Unmarshal([]byte(conversation), &msgs) != nil {
			return
		}
		before, _ := json.Marshal(msgs)
		ids := strings.Split(calls, ",")
		out := translate.CloseCalls(msgs, ids, "closed")
		if after, _ := json.Marshal(msgs); string(after) != string(before) {
			t.Fatal("the input changed")
		}
		named := map[string]bool{}
		for _, id := range ids {
			named[id] = id != ""
		}
		owed := map[string]bool{} // named calls an assistant message holds, no tool message answers
		for _, m := range msgs {
			for _, c := range m.ToolCalls {
				if m.Role == types.RoleAssistant && named[c.ID] {
					owed[c.ID] = true
				}
			}
		}
		for _, m := range msgs {
			if m.Role == types.RoleTool {
				delete(owed, m.ToolCallID)
			}
		}
		k := 0
		open := map[string]bool{} // calls of the last assistant message
		for _, m := range out {
			if k < len(msgs) && m.ID == msgs[k].ID && m.Role == msgs[k].Role && m.ToolCallID == msgs[k].ToolCallID {
				k++
				if m.Role == types.RoleAssistant {
					open = map[string]bool{}
					for _, c := range m.ToolCalls {
						open[c.ID] = true
					}
				} else if m.Role != types.RoleTool {
					open = map[string]bool{}
				}
				continue
			}
			if m.Role != types.RoleTool || m.Content != "closed" || !owed[m.ToolCallID] || !open[m.ToolCallID] {
				t.Fatalf("added %+v", m)
			}
			delete(owed, m.ToolCallID)
		}
		if k != len(msgs) {
			t.Fatalf("kept %d of %d messages in order", k, len(msgs))
		}
		if len(owed) > 0 {
			t.Fatalf("calls left without a result: %v", owed)
		}
	})
}
