package aap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The AG-UI extension of AAP carries what an AG-UI page and an AG-UI agent
// say to each other that AAP has no field for, when both ends of an AAP
// hop are bridges of this project (agui2aap in front of aap2agui). It is
// opt-in on every request and invisible to a client that does not ask:
//
//   - A client asks by sending ExtensionsHeader with ExtensionAGUI among
//     its comma-separated tokens; a server that implements it answers that
//     request with ExtensionsHeader naming it. A server that does not
//     ignores the header (as HTTP servers ignore unknown headers) and the
//     client, finding no grant, speaks plain AAP.
//   - Granted, a POST /sessions or POST /sessions/:id/turns body may hold
//     "agui" (AGUIInput): the page's state, context and forwarded props,
//     handed to the agent's run. Without the grant the field is refused.
//   - Granted, a turn's event stream also holds EventAGUI events, each one
//     AG-UI event of the agent's that AAP has no event for, as its JSON,
//     in its place among the turn's other events.
//
// A later, incompatible version is a new token ("agui/2"); a server grants
// the tokens it shares with the client.

// ExtensionsHeader is the HTTP header naming the AAP extensions a request
// asks for and a response grants.
const ExtensionsHeader = "AAP-Extensions"

// ExtensionAGUI is the token of the AG-UI extension, version 1.
const ExtensionAGUI = "agui/1"

// EventAGUI is the SSE event name of an AG-UI event carried whole under
// ExtensionAGUI.
const EventAGUI EventName = "agui"

// HasExtension reports whether h's ExtensionsHeader names ext.
func HasExtension(h http.Header, ext string) bool {
	for _, v := range h.Values(ExtensionsHeader) {
		for tok := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(tok), ext) {
				return true
			}
		}
	}
	return false
}

// AGUIInput is what a request carries under ExtensionAGUI of an AG-UI
// RunAgentInput that AAP has no field for. Each field is the JSON the
// page sent, kept byte for byte; nil when absent.
type AGUIInput struct {
	// State is the page's shared state (RunAgentInput.state): any JSON
	// value.
	State json.RawMessage `json:"state,omitempty"`
	// Context is RunAgentInput.context: an array of objects with string
	// "description" and "value".
	Context json.RawMessage `json:"context,omitempty"`
	// ForwardedProps is RunAgentInput.forwardedProps, under the extension
	// a JSON object (the server adds a member of its own).
	ForwardedProps json.RawMessage `json:"forwardedProps,omitempty"`
	// Metadata is the AG-UI metadata of the request's messages and their
	// tool calls: an array of {"at": the message's index in the request's
	// messages, "metadata": an object, "toolCalls": {toolCallId: an
	// object}}, one for each message that has any.
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// UnmarshalJSON decodes the "agui" field, checking that it is an object
// and that context, when present, is an array of {description, value}
// strings; an error names the field.
func (in *AGUIInput) UnmarshalJSON(data []byte) error {
	var w struct {
		State          json.RawMessage `json:"state"`
		Context        json.RawMessage `json:"context"`
		ForwardedProps json.RawMessage `json:"forwardedProps"`
		Metadata       json.RawMessage `json:"metadata"`
	}
	if err := decodeObject(data, &w); err != nil {
		return err
	}
	if err := checkMetadataList(w.Metadata); err != nil {
		return err
	}
	if w.Context != nil && !isNull(w.Context) {
		var ctx []struct {
			Description *string `json:"description"`
			Value       *string `json:"value"`
		}
		if firstByte(w.Context) != '[' || json.Unmarshal(w.Context, &ctx) != nil {
			return fieldErr("context", "must be an array of {description, value} strings")
		}
		for i, c := range ctx {
			if c.Description == nil || c.Value == nil {
				return fieldErr(fmt.Sprintf("context[%d]", i), "needs string description and value")
			}
		}
	}
	if props := nonNull(w.ForwardedProps); props != nil && firstByte(props) != '{' {
		return fieldErr("forwardedProps", "must be a JSON object")
	}
	*in = AGUIInput{State: nonNull(w.State), Context: nonNull(w.Context), ForwardedProps: nonNull(w.ForwardedProps), Metadata: nonNull(w.Metadata)}
	return nil
}

// decodeAGUIInput decodes the "agui" field of a request: nil when absent
// or null.
func decodeAGUIInput(raw json.RawMessage) (*AGUIInput, error) {
	if nonNull(raw) == nil {
		return nil, nil
	}
	in := new(AGUIInput)
	if err := in.UnmarshalJSON(raw); err != nil {
		return nil, within("agui", err)
	}
	return in, nil
}

// AGUISession is what a session's GET gives under ExtensionAGUI of what
// the extension keeps with the session. Each field is JSON as stored;
// nil when there is none.
type AGUISession struct {
	// State is the session's AG-UI state: any JSON value.
	State json.RawMessage `json:"state,omitempty"`
	// Activities are the session's activity messages, each at its place
	// among the history's messages: an array of {"at": the number of
	// history messages before it, "id", "activityType", "content": an
	// object}.
	Activities json.RawMessage `json:"activities,omitempty"`
	// Metadata is the AG-UI metadata of the history's messages and their
	// tool calls: an array of {"at": the message's place in the history,
	// "metadata": an object, "toolCalls": {toolCallId: an object}}, one
	// for each message that has any.
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// UnmarshalJSON decodes the "agui" member of a session, checking that it
// is an object and that activities, when present, are an array of such
// objects; an error names the field.
func (s *AGUISession) UnmarshalJSON(data []byte) error {
	var w struct {
		State      json.RawMessage `json:"state"`
		Activities json.RawMessage `json:"activities"`
		Metadata   json.RawMessage `json:"metadata"`
	}
	if err := decodeObject(data, &w); err != nil {
		return err
	}
	if err := checkMetadataList(w.Metadata); err != nil {
		return err
	}
	*s = AGUISession{State: nonNull(w.State), Activities: nonNull(w.Activities), Metadata: nonNull(w.Metadata)}
	return nil
}

// decodeAGUISession decodes the "agui" member of a session: nil when
// absent or null.
func decodeAGUISession(raw json.RawMessage) (*AGUISession, error) {
	if nonNull(raw) == nil {
		return nil, nil
	}
	s := new(AGUISession)
	if err := s.UnmarshalJSON(raw); err != nil {
		return nil, within("agui", err)
	}
	return s, nil
}

// Empty reports whether in carries nothing.
func (in *AGUIInput) Empty() bool {
	return in == nil || (in.State == nil && in.Context == nil && in.ForwardedProps == nil && in.Metadata == nil)
}

// AGUIEvent is one AG-UI event carried whole under ExtensionAGUI.
type AGUIEvent struct {
	// Data is the event's JSON, an object with a string "type".
	Data json.RawMessage
}

// EventName returns EventAGUI.
func (*AGUIEvent) EventName() EventName { return EventAGUI }

// AppendData appends the event's JSON compacted (one SSE data line), its
// bytes otherwise as they are.
func (e *AGUIEvent) AppendData(dst []byte) ([]byte, error) {
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, e.Data); err != nil {
		return dst, fmt.Errorf("aap: agui event: %w", err)
	}
	return buf.Bytes(), nil
}

// decodeAGUIEvent decodes an EventAGUI event's data: a JSON object with a
// string "type".
func decodeAGUIEvent(data []byte) (Event, error) {
	var w struct {
		Type *string `json:"type"`
	}
	if firstByte(data) != '{' || json.Unmarshal(data, &w) != nil {
		return nil, &DecodeError{Field: "data", Reason: "must be a JSON object"}
	}
	if w.Type == nil || *w.Type == "" {
		return nil, fieldErr("type", "required: the AG-UI event's type")
	}
	return &AGUIEvent{Data: bytes.Clone(bytes.TrimSpace(data))}, nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// nonNull is raw, or nil when it is absent or null.
func nonNull(raw json.RawMessage) json.RawMessage {
	if raw == nil || isNull(raw) {
		return nil
	}
	return raw
}

// checkMetadataList checks an "agui" member's metadata, when present: an
// array of {at, metadata, toolCalls}, at 0 or more, the metadata and each
// tool call's an object; an error names the field.
func checkMetadataList(raw json.RawMessage) error {
	meta := nonNull(raw)
	if meta == nil {
		return nil
	}
	var list []struct {
		At        *int                       `json:"at"`
		Metadata  json.RawMessage            `json:"metadata"`
		ToolCalls map[string]json.RawMessage `json:"toolCalls"`
	}
	if firstByte(meta) != '[' || json.Unmarshal(meta, &list) != nil {
		return fieldErr("metadata", "must be an array of {at, metadata, toolCalls}")
	}
	for i, m := range list {
		ok := m.At != nil && *m.At >= 0 && (m.Metadata == nil || firstByte(m.Metadata) == '{')
		for _, c := range m.ToolCalls {
			ok = ok && firstByte(c) == '{'
		}
		if !ok {
			return fieldErr(fmt.Sprintf("metadata[%d]", i), "needs a place at (0 or more) and objects for metadata and each tool call's")
		}
	}
	return nil
}
