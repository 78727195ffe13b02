package aap

import (
	"encoding/json"
)

// StopReason says why a turn ended.
type StopReason string

// The five stop reasons of AAP v3.
const (
	StopEndTurn   StopReason = "end_turn"
	StopToolUse   StopReason = "tool_use"
	StopMaxTokens StopReason = "max_tokens"
	StopRefusal   StopReason = "refusal"
	StopError     StopReason = "error"
)

// Valid reports whether r is one of the five stop reasons.
func (r StopReason) Valid() bool {
	switch r {
	case StopEndTurn, StopToolUse, StopMaxTokens, StopRefusal, StopError:
		return true
	}
	return false
}

// GetMetaResponse is the body of GET /meta.
type GetMetaResponse struct {
	Version int         `json:"version"`
	Agents  []AgentInfo `json:"agents"`
}

// Agent returns the agent with the given name.
func (m *GetMetaResponse) Agent(name string) (*AgentInfo, bool) {
	for i := range m.Agents {
		if m.Agents[i].Name == name {
			return &m.Agents[i], true
		}
	}
	return nil, false
}

// SessionInfo describes a session (GET /sessions/:id and items of GET
// /sessions). Secret options are redacted by the server.
type SessionInfo struct {
	SessionID string      `json:"sessionId"`
	Agent     AgentConfig `json:"agent"`
	Tools     []ToolSpec  `json:"tools,omitzero"`
}

// GetSessionsResponse is the body of GET /sessions. Next is empty on the
// last page.
type GetSessionsResponse struct {
	Sessions []SessionInfo `json:"sessions"`
	Next     string        `json:"next,omitempty"`
}

// UnmarshalJSON decodes the response, naming the agent in errors.
func (m *GetMetaResponse) UnmarshalJSON(data []byte) error {
	var w struct {
		Version *int              `json:"version"`
		Agents  []json.RawMessage `json:"agents"`
	}
	if err := decodeObject(data, &w); err != nil {
		return err
	}
	var out GetMetaResponse
	if w.Version != nil {
		out.Version = *w.Version
	}
	agents, err := decodeList(w.Agents, unmarshalInto[AgentInfo])
	if err != nil {
		return within("agents", err)
	}
	out.Agents = agents
	*m = out
	return nil
}

// UnmarshalJSON decodes a session, naming the failing field in errors.
func (s *SessionInfo) UnmarshalJSON(data []byte) error {
	var w struct {
		SessionID *string           `json:"sessionId"`
		Agent     json.RawMessage   `json:"agent"`
		Tools     []json.RawMessage `json:"tools"`
	}
	if err := decodeObject(data, &w); err != nil {
		return err
	}
	var out SessionInfo
	if w.SessionID != nil {
		out.SessionID = *w.SessionID
	}
	if w.Agent != nil && firstByte(w.Agent) != 'n' {
		if err := out.Agent.UnmarshalJSON(w.Agent); err != nil {
			return within("agent", err)
		}
	}
	tools, err := decodeList(w.Tools, unmarshalInto[ToolSpec])
	if err != nil {
		return within("tools", err)
	}
	out.Tools = tools
	*s = out
	return nil
}

// UnmarshalJSON decodes a page of sessions, naming the failing session in
// errors.
func (r *GetSessionsResponse) UnmarshalJSON(data []byte) error {
	var w struct {
		Sessions []json.RawMessage `json:"sessions"`
		Next     *string           `json:"next"`
	}
	if err := decodeObject(data, &w); err != nil {
		return err
	}
	var out GetSessionsResponse
	if w.Next != nil {
		out.Next = *w.Next
	}
	sessions, err := decodeList(w.Sessions, unmarshalInto[SessionInfo])
	if err != nil {
		return within("sessions", err)
	}
	out.Sessions = sessions
	*r = out
	return nil
}

// PostSessionsRequest is the body of POST /sessions.
type PostSessionsRequest struct {
	Agent AgentConfig `json:"agent"`
	// Messages seed the history; tool permissions are not allowed.
	Messages []Message  `json:"messages,omitzero"`
	Tools    []ToolSpec `json:"tools,omitzero"`
}

// UnmarshalJSON decodes the request, requiring agent.name and checking the
// seed messages.
func (r *PostSessionsRequest) UnmarshalJSON(data []byte) error {
	var w struct {
		Agent    json.RawMessage   `json:"agent"`
		Messages []json.RawMessage `json:"messages"`
		Tools    []json.RawMessage `json:"tools"`
	}
	if err := decodeObject(data, &w); err != nil {
		return err
	}
	if w.Agent == nil {
		return fieldErr("agent", "required")
	}
	var out PostSessionsRequest
	if err := out.Agent.UnmarshalJSON(w.Agent); err != nil {
		return within("agent", err)
	}
	if out.Agent.Name == "" {
		return fieldErr("agent.name", "required")
	}
	if w.Messages != nil {
		msgs, err := decodeMessages(w.Messages, historyOnly)
		if err != nil {
			return within("messages", err)
		}
		out.Messages = msgs
	}
	tools, err := decodeList(w.Tools, unmarshalInto[ToolSpec])
	if err != nil {
		return within("tools", err)
	}
	out.Tools = tools
	*r = out
	return nil
}

// PostSessionsResponse is the body of a 201 from POST /sessions.
type PostSessionsResponse struct {
	SessionID string `json:"sessionId"`
}

// PostSessionTurnRequest is the body of POST /sessions/:id/turns.
type PostSessionTurnRequest struct {
	// Agent overrides the session's server tools and options (merged by key);
	// nil leaves them as they are. Its Name, if set, must match the session.
	Agent *AgentConfig `json:"agent,omitempty"`
	// Stream is the response mode; empty means StreamNone.
	Stream StreamMode `json:"stream,omitempty"`
	// Messages is one user message, or tool results and tool permissions.
	Messages []Message `json:"messages"`
	// Tools, when non-nil, replaces the session's client-side tools.
	Tools []ToolSpec `json:"tools,omitzero"`
}

// Mode returns the requested stream mode, StreamNone when unset.
func (r *PostSessionTurnRequest) Mode() StreamMode {
	if r.Stream == "" {
		return StreamNone
	}
	return r.Stream
}

// UnmarshalJSON decodes the request and checks the shape of its messages
// (see CheckTurnMessages) and the stream mode.
func (r *PostSessionTurnRequest) UnmarshalJSON(data []byte) error {
	var w struct {
		Agent    json.RawMessage   `json:"agent"`
		Stream   *string           `json:"stream"`
		Messages []json.RawMessage `json:"messages"`
		Tools    []json.RawMessage `json:"tools"`
	}
	if err := decodeObject(data, &w); err != nil {
		return err
	}
	var out PostSessionTurnRequest
	if w.Agent != nil && firstByte(w.Agent) != 'n' {
		out.Agent = new(AgentConfig)
		if err := out.Agent.UnmarshalJSON(w.Agent); err != nil {
			return within("agent", err)
		}
	}
	if w.Stream != nil {
		switch m := StreamMode(*w.Stream); m {
		case StreamDelta, StreamMessage, StreamNone:
			out.Stream = m
		default:
			return fieldErr("stream", "unknown stream mode %q (want delta, message or none)", *w.Stream)
		}
	}
	if w.Messages == nil {
		return fieldErr("messages", "required")
	}
	msgs, err := decodeMessages(w.Messages, nil)
	if err != nil {
		return within("messages", err)
	}
	if err := CheckTurnMessages(msgs); err != nil {
		return err
	}
	out.Messages = msgs
	if out.Tools, err = decodeList(w.Tools, unmarshalInto[ToolSpec]); err != nil {
		return within("tools", err)
	}
	*r = out
	return nil
}

// PostSessionTurnResponse is the body of a turn in StreamNone mode.
type PostSessionTurnResponse struct {
	StopReason StopReason `json:"stopReason"`
	Messages   []Message  `json:"messages"`
}

// UnmarshalJSON decodes the response, checking the stop reason and the
// history messages.
func (r *PostSessionTurnResponse) UnmarshalJSON(data []byte) error {
	var w struct {
		StopReason *StopReason       `json:"stopReason"`
		Messages   []json.RawMessage `json:"messages"`
	}
	if err := decodeObject(data, &w); err != nil {
		return err
	}
	if w.StopReason == nil {
		return fieldErr("stopReason", "required")
	}
	if !w.StopReason.Valid() {
		return fieldErr("stopReason", "unknown stop reason %q", *w.StopReason)
	}
	if w.Messages == nil {
		return fieldErr("messages", "required")
	}
	msgs, err := decodeMessages(w.Messages, historyOnly)
	if err != nil {
		return within("messages", err)
	}
	*r = PostSessionTurnResponse{StopReason: *w.StopReason, Messages: msgs}
	return nil
}

// GetSessionHistoryResponse is the body of GET /sessions/:id/history. Only
// the requested type is present.
type GetSessionHistoryResponse struct {
	History SessionHistory `json:"history"`
}

// UnmarshalJSON decodes the response, naming "history" in errors.
func (r *GetSessionHistoryResponse) UnmarshalJSON(data []byte) error {
	var w struct {
		History json.RawMessage `json:"history"`
	}
	if err := decodeObject(data, &w); err != nil {
		return err
	}
	if w.History == nil {
		return fieldErr("history", "required")
	}
	var out GetSessionHistoryResponse
	if err := out.History.UnmarshalJSON(w.History); err != nil {
		return within("history", err)
	}
	*r = out
	return nil
}

// SessionHistory holds history by type; a nil slice is absent.
type SessionHistory struct {
	Compacted []Message `json:"compacted,omitzero"`
	Full      []Message `json:"full,omitzero"`
}

// UnmarshalJSON decodes both history types, if present.
func (h *SessionHistory) UnmarshalJSON(data []byte) error {
	var w struct {
		Compacted json.RawMessage `json:"compacted"`
		Full      json.RawMessage `json:"full"`
	}
	if err := decodeObject(data, &w); err != nil {
		return err
	}
	var out SessionHistory
	var err error
	if w.Compacted != nil {
		if out.Compacted, err = DecodeHistory(w.Compacted); err != nil {
			return within("compacted", err)
		}
	}
	if w.Full != nil {
		if out.Full, err = DecodeHistory(w.Full); err != nil {
			return within("full", err)
		}
	}
	*h = out
	return nil
}

// ErrorResponse is the JSON body of an error status. AAP does not fix its
// shape; this is the one the project's servers send and its client reads.
type ErrorResponse struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody is a stable machine-readable code and a safe human message.
type ErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}
