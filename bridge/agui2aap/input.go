package agui2aap

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/internal/ident"
)

// maxThreadID bounds threadId, which becomes a store key.
const maxThreadID = 256

// checkThreadID refuses a thread id no thread can have: empty, too long,
// not UTF-8, holding control characters, or one that no URL path can
// address ("." and "..", which URL parsers remove as dot segments, so
// DELETE /agents/:name/threads/:threadId could never reach it). Any other
// id is addressed escaped (a%2Fb for "a/b").
func checkThreadID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("threadId is required")
	case id == "." || id == "..":
		return fmt.Errorf("threadId %q cannot be addressed in a URL path (clients remove \".\" and \"..\" segments): choose another id", id)
	case len(id) > maxThreadID:
		return fmt.Errorf("threadId is %d bytes long; at most %d are allowed", len(id), maxThreadID)
	case !utf8.ValidString(id):
		return fmt.Errorf("threadId is not UTF-8")
	}
	for _, r := range id {
		if unicode.IsControl(r) {
			return fmt.Errorf("threadId holds a control character (%U)", r)
		}
	}
	return nil
}

// checkInput refuses a RunAgentInput the bridge could only misread: a
// thread id that is empty, too long, or whose text is not what it shows
// (control, zero-width or bidi characters, U+FFFD: ident.Check; the
// thread routes take such ids still, so that threads stored before can
// be listed and deleted); two
// messages with one id (new messages are found by id); a tool message
// without a toolCallId or answering a call no assistant message made; a
// state that is not an object. Each error names the problem; nothing is
// stored.
func checkInput(in *types.RunAgentInput) error {
	if err := checkThreadID(in.ThreadID); err != nil {
		return err
	}
	if err := ident.Check(in.ThreadID); err != nil {
		return fmt.Errorf("threadId %w", err)
	}
	switch in.State.(type) {
	case nil, map[string]any:
	default:
		return fmt.Errorf("state must be a JSON object (or null), not %s", jsonKind(in.State))
	}
	seen := make(map[string]int, len(in.Messages))
	calls := map[string]bool{}
	for i, m := range in.Messages {
		if m.ID != "" {
			if j, dup := seen[m.ID]; dup {
				return fmt.Errorf("messages[%d] and messages[%d] have the same id %q", j, i, m.ID)
			}
			seen[m.ID] = i
		}
		for _, tc := range m.ToolCalls {
			calls[tc.ID] = true
		}
	}
	for i, m := range in.Messages {
		if m.Role != types.RoleTool {
			continue
		}
		if m.ToolCallID == "" {
			return fmt.Errorf("messages[%d] is a tool message without a toolCallId", i)
		}
		if !calls[m.ToolCallID] {
			return fmt.Errorf("messages[%d] answers tool call %q, which no assistant message made", i, m.ToolCallID)
		}
	}
	return nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, int, int64:
		return "a number"
	default:
		return fmt.Sprintf("%T", v)
	}
}
