package agui

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
)

// This file holds the shapes of @ag-ui/core 1.0 that the AG-UI Go SDK
// lacks (docs/MAPPING.md, "AG-UI 1.0"): the SUBAGENT_* events, a
// TOOL_CALL_RESULT whose content is an array of content parts, the token
// usage of RUN_FINISHED and RUN_ERROR, and the rules that map tool-result
// content parts to AAP content blocks and back.

// The event types of @ag-ui/core 1.0 that the SDK has no constant for.
const (
	EventTypeSubagentStarted  events.EventType = "SUBAGENT_STARTED"
	EventTypeSubagentFinished events.EventType = "SUBAGENT_FINISHED"
	EventTypeSubagentError    events.EventType = "SUBAGENT_ERROR"
)

// RunFinishedOutcomeCancelled is the outcome of a run that whoever ran it
// stopped before it completed (@ag-ui/core 1.0).
const RunFinishedOutcomeCancelled events.RunFinishedOutcomeType = "cancelled"

// SubagentStartedEvent announces a subagent invocation (@ag-ui/core 1.0).
type SubagentStartedEvent struct {
	*events.BaseEvent
	SubagentRunID       string `json:"subagentRunId"`
	Name                string `json:"name"`
	Description         string `json:"description,omitempty"`
	ParentSubagentRunID string `json:"parentSubagentRunId,omitempty"`
	ParentToolCallID    string `json:"parentToolCallId,omitempty"`
	ParentMessageID     string `json:"parentMessageId,omitempty"`
}

// SubagentFinishedEvent ends a subagent invocation's segment of the run.
type SubagentFinishedEvent struct {
	*events.BaseEvent
	SubagentRunID string           `json:"subagentRunId"`
	Result        any              `json:"result,omitempty"`
	Outcome       *SubagentOutcome `json:"outcome,omitempty"`
}

// SubagentOutcome is why a subagent's segment ended: success (the
// default) or suspended, waiting for interrupts.
type SubagentOutcome struct {
	Type         string   `json:"type"`
	InterruptIDs []string `json:"interruptIds,omitempty"`
}

// SubagentErrorEvent reports that a subagent invocation failed; the run
// may go on.
type SubagentErrorEvent struct {
	*events.BaseEvent
	SubagentRunID string  `json:"subagentRunId"`
	Message       string  `json:"message"`
	Code          *string `json:"code,omitempty"`
}

// ToolCallResultPartsEvent is a TOOL_CALL_RESULT whose content is an
// ordered list of content parts (@ag-ui/core 1.0); the SDK's
// ToolCallResultEvent holds only string content. Each part is kept as the
// agent's JSON (compacted), fields the SDK does not know included.
type ToolCallResultPartsEvent struct {
	*events.BaseEvent
	MessageID  string            `json:"messageId"`
	ToolCallID string            `json:"toolCallId"`
	Content    []json.RawMessage `json:"content"`
	Role       *string           `json:"role,omitempty"`
}

var (
	_ events.Event = (*SubagentStartedEvent)(nil)
	_ events.Event = (*SubagentFinishedEvent)(nil)
	_ events.Event = (*SubagentErrorEvent)(nil)
	_ events.Event = (*ToolCallResultPartsEvent)(nil)
)

// Validate checks the fields @ag-ui/core 1.0 requires.
func (e *SubagentStartedEvent) Validate() error {
	if e.SubagentRunID == "" || e.Name == "" {
		return fmt.Errorf("%s: subagentRunId and name are required", e.Type())
	}
	return nil
}

// ToJSON encodes the event.
func (e *SubagentStartedEvent) ToJSON() ([]byte, error) { return json.Marshal(e) }

// Validate checks the fields @ag-ui/core 1.0 requires.
func (e *SubagentFinishedEvent) Validate() error {
	if e.SubagentRunID == "" {
		return fmt.Errorf("%s: subagentRunId is required", e.Type())
	}
	return nil
}

// ToJSON encodes the event.
func (e *SubagentFinishedEvent) ToJSON() ([]byte, error) { return json.Marshal(e) }

// Validate checks the fields @ag-ui/core 1.0 requires.
func (e *SubagentErrorEvent) Validate() error {
	if e.SubagentRunID == "" {
		return fmt.Errorf("%s: subagentRunId is required", e.Type())
	}
	return nil
}

// ToJSON encodes the event.
func (e *SubagentErrorEvent) ToJSON() ([]byte, error) { return json.Marshal(e) }

// Validate checks the fields @ag-ui/core 1.0 requires.
func (e *ToolCallResultPartsEvent) Validate() error {
	if e.MessageID == "" || e.ToolCallID == "" {
		return fmt.Errorf("%s: messageId and toolCallId are required", e.Type())
	}
	return nil
}

// ToJSON encodes the event.
func (e *ToolCallResultPartsEvent) ToJSON() ([]byte, error) { return json.Marshal(e) }

// newEvent10 is newEvent for the types of @ag-ui/core 1.0 the SDK lacks.
func newEvent10(typ events.EventType) events.Event {
	base := &events.BaseEvent{EventType: typ}
	switch typ {
	case EventTypeSubagentStarted:
		return &SubagentStartedEvent{BaseEvent: base}
	case EventTypeSubagentFinished:
		return &SubagentFinishedEvent{BaseEvent: base}
	case EventTypeSubagentError:
		return &SubagentErrorEvent{BaseEvent: base}
	}
	return nil
}

// contentIsArray reports whether err is encoding/json's complaint that a
// TOOL_CALL_RESULT's content is an array, the 1.0 shape with parts.
func contentIsArray(err error) bool {
	te, ok := err.(*json.UnmarshalTypeError)
	return ok && te.Field == "content" && te.Value == "array"
}

// TokenUsage is one entry of the token usage of RUN_FINISHED or RUN_ERROR
// (@ag-ui/core 1.0): the counts of one provider and model.
// ReasoningTokens is part of OutputTokens; CachedInputTokens and
// CacheWriteInputTokens are parts of InputTokens.
type TokenUsage struct {
	Provider              string `json:"provider,omitempty"`
	Model                 string `json:"model,omitempty"`
	InputTokens           int64  `json:"inputTokens,omitempty"`
	OutputTokens          int64  `json:"outputTokens,omitempty"`
	TotalTokens           int64  `json:"totalTokens,omitempty"`
	ReasoningTokens       int64  `json:"reasoningTokens,omitempty"`
	CachedInputTokens     int64  `json:"cachedInputTokens,omitempty"`
	CacheWriteInputTokens int64  `json:"cacheWriteInputTokens,omitempty"`
}

// UsageCounts sums usage by kind: input, output, reasoning, cached input
// and cache-write input tokens, in that order (negative counts are
// ignored).
func UsageCounts(usage []TokenUsage) [5]int64 {
	var c [5]int64
	for _, u := range usage {
		for i, n := range [5]int64{u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CachedInputTokens, u.CacheWriteInputTokens} {
			if n > 0 {
				c[i] += n
			}
		}
	}
	return c
}

// Usage reads the usage of a RUN_FINISHED or RUN_ERROR event's JSON;
// entries that cannot be read are skipped (usage never fails a run).
func Usage(data []byte) []TokenUsage {
	if !bytes.Contains(data, []byte(`"usage"`)) {
		return nil
	}
	var w struct {
		Usage []json.RawMessage `json:"usage"`
	}
	if json.Unmarshal(data, &w) != nil {
		return nil
	}
	var out []TokenUsage
	for _, raw := range w.Usage {
		var u TokenUsage
		if json.Unmarshal(raw, &u) == nil {
			out = append(out, u)
		}
	}
	return out
}

// SubagentRunID returns the subagentRunId of an event's JSON ("" when it has
// none, or it is null), found the way encoding/json would, but for a key
// spelled with escapes (no agent writes one): looking for those too made
// every delta with an escaped character cost a second decode. It runs for
// every event, so it first looks for "RunId": its rare capital is passed
// over several times faster than the "a" of "agentRunId" in a delta's text.
func SubagentRunID(data []byte) string {
	if !bytes.Contains(data, []byte("RunId")) {
		return ""
	}
	var w struct {
		SubagentRunID *string `json:"subagentRunId"`
	}
	if json.Unmarshal(data, &w) != nil || w.SubagentRunID == nil {
		return ""
	}
	return *w.SubagentRunID
}
