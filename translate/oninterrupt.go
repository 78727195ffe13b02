package translate

import (
	"encoding/json"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
)

// OnInterruptEvent is the name of the CUSTOM event by which
// @ag-ui/langgraph (and CopilotKit's LangGraph integration) report a
// LangGraph interrupt() by default: its value is the interrupt's value (as
// JSON text when it is not a string), its rawEvent the LangGraph interrupt
// ({id, value}); the run then finishes with no interrupt outcome.
const OnInterruptEvent = "on_interrupt"

// InterruptFromOnInterrupt reads an on_interrupt CUSTOM event as the
// AG-UI interrupt the adapter would have put in RUN_FINISHED's outcome
// (its emitInterruptOutcome option): the id of the LangGraph interrupt;
// from an object value, reason (default "langgraph:interrupt"), message,
// toolCallId (or tool_call_id), responseSchema (or response_schema) and
// expiresAt (or expires_at); a string value is the message; metadata
// {"langgraph": {"raw": value}}. ok is false for another event, or one
// without the interrupt's id, which no resume could name.
func InterruptFromOnInterrupt(e *events.CustomEvent) (types.Interrupt, bool) {
	if e == nil || e.Name != OnInterruptEvent || e.BaseEvent == nil {
		return types.Interrupt{}, false
	}
	raw, _ := e.RawEvent.(map[string]any)
	id, _ := raw["id"].(string)
	if id == "" {
		return types.Interrupt{}, false
	}
	value, ok := raw["value"]
	if !ok {
		value = e.Value
		if s, isString := value.(string); isString {
			var v any
			if json.Unmarshal([]byte(s), &v) == nil {
				value = v
			}
		}
	}
	in := types.Interrupt{ID: id, Reason: "langgraph:interrupt", Metadata: map[string]any{"langgraph": map[string]any{"raw": value}}}
	switch v := value.(type) {
	case string:
		in.Message = v
	case map[string]any:
		str := func(keys ...string) string {
			for _, k := range keys {
				if s, ok := v[k].(string); ok {
					return s
				}
			}
			return ""
		}
		if r := str("reason"); r != "" {
			in.Reason = r
		}
		in.Message = str("message")
		in.ToolCallID = str("toolCallId", "tool_call_id")
		in.ExpiresAt = str("expiresAt", "expires_at")
		for _, k := range []string{"responseSchema", "response_schema"} {
			if s, ok := v[k].(map[string]any); ok {
				in.ResponseSchema = s
				break
			}
		}
	}
	return in, true
}
