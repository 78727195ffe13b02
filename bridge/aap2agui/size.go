package aap2agui

// What a delta adds to the message the agent is building (turnRun.grow).

import (
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
)

// deltaSize is what ev adds to the message being built: the bytes of its
// text, thinking or tool-argument delta.
func deltaSize(ev events.Event) int {
	switch e := ev.(type) {
	case *events.TextMessageContentEvent:
		return len(e.Delta)
	case *events.ToolCallArgsEvent:
		return len(e.Delta)
	case *events.ReasoningMessageContentEvent:
		return len(e.Delta)
	case *events.ThinkingTextMessageContentEvent:
		return len(e.Delta)
	case *events.TextMessageChunkEvent:
		return lenOf(e.Delta)
	case *events.ToolCallChunkEvent:
		return lenOf(e.Delta)
	case *events.ReasoningMessageChunkEvent:
		return lenOf(e.Delta)
	}
	return 0
}

func lenOf(s *string) int {
	if s == nil {
		return 0
	}
	return len(*s)
}
