package aap

// The results of tool calls that ran no tool. Every program of the project
// that writes one (both bridges, the demo agents, agentcheck) takes the
// words from here, so that a reader of a history (agui2aap recognising a
// call closed as not answered, agentcheck checking a denial) finds them
// the same everywhere.
const (
	// ToolCallDenied is the result AAP prescribes for a server-side tool
	// call whose permission was denied; when the denial gives a reason it
	// is followed by ": " and the reason (see DeniedResult).
	ToolCallDenied = "Tool call denied"
	// ToolCallNotAnswered begins the result of a tool call that the
	// conversation moved on from without answering it (a new user message
	// while the call was open), so that every call in a history has a
	// result; ": " and why follow it.
	ToolCallNotAnswered = "Tool call was not answered"
)

// DeniedResult is the result of a tool call denied for reason:
// ToolCallDenied, then ": " and the reason when there is one.
func DeniedResult(reason string) string {
	if reason == "" {
		return ToolCallDenied
	}
	return ToolCallDenied + ": " + reason
}
