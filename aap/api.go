package aap

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/aapagui/aapagui/internal/jsonenc"
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
	// Extensions are the extensions the server granted in the response's
	// ExtensionsHeader (Client.Meta fills it in): not part of the body.
	Extensions http.Header `json:"-"`
}

// Grants reports whether the server granted the extension ext.
func (m *GetMetaResponse) Grants(ext string) bool { return m != nil && HasExtension(m.Extensions, ext) }

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
	// AGUI is what the AG-UI extension keeps of the session (ExtensionAGUI):
	// its state and activity messages, given only to a request that asked
	// for the extension.
	AGUI *AGUISession `json:"agui,omitempty"`
}

// GetSessionsResponse is the body of GET /sessions. Next is empty on the
// last page.
type GetSessionsResponse struct {
	Sessions []SessionInfo `json:"sessions"`
	Next     string        `json:"next,omitempty"`
}

// UnmarshalJSON decodes the response, naming the agent in errors.
func (m *GetMetaResponse) UnmarshalJSON(data []byte) error {
	version, agents, err := decodeMeta[AgentInfo](data)
	if err != nil {
		return err
	}
	*m = GetMetaResponse{Version: version, Agents: agents}
	return nil
}

// decodeMeta decodes the body of GET /meta with agents of type T (the
// agent shape differs between protocol versions).
func decodeMeta[T any, P interface {
	*T
	json.Unmarshaler
}](data []byte) (int, []T, error) {
	var w struct {
		Version *int              `json:"version"`
		Agents  []json.RawMessage `json:"agents"`
	}
	if err := decodeObject(data, &w); err != nil {
		return 0, nil, err
	}
	version := 0
	if w.Version != nil {
		version = *w.Version
	}
	agents, err := decodeList(w.Agents, unmarshalInto[T, P])
	if err != nil {
		return 0, nil, within("agents", err)
	}
	return version, agents, nil
}

// UnmarshalJSON decodes a session, naming the failing field in errors.
func (s *SessionInfo) UnmarshalJSON(data []byte) error {
	p, err := decodeSession[ToolSpec](data)
	if err != nil {
		return err
	}
	*s = SessionInfo{SessionID: p.id, Agent: p.agent, Tools: p.tools, AGUI: p.agui}
	return nil
}

// sessionParts are the fields of a session object in every version.
type sessionParts[T any] struct {
	id      string
	agent   AgentConfig
	tools   []T
	history json.RawMessage // version 1's inline history, if any
	agui    *AGUISession
}

// decodeSession decodes a session object with tool specs of type T.
func decodeSession[T any, P interface {
	*T
	json.Unmarshaler
}](data []byte) (sessionParts[T], error) {
	var w struct {
		SessionID *string           `json:"sessionId"`
		Agent     json.RawMessage   `json:"agent"`
		Tools     []json.RawMessage `json:"tools"`
		History   json.RawMessage   `json:"history"`
		AGUI      json.RawMessage   `json:"agui"`
	}
	var out sessionParts[T]
	if err := decodeObject(data, &w); err != nil {
		return out, err
	}
	var err error
	if out.agui, err = decodeAGUISession(w.AGUI); err != nil {
		return out, err
	}
	if w.SessionID != nil {
		out.id = *w.SessionID
	}
	if w.Agent != nil && firstByte(w.Agent) != 'n' {
		if err := out.agent.UnmarshalJSON(w.Agent); err != nil {
			return out, within("agent", err)
		}
	}
	tools, err := decodeList(w.Tools, unmarshalInto[T, P])
	if err != nil {
		return out, within("tools", err)
	}
	out.tools = tools
	if firstByte(w.History) != 'n' {
		out.history = w.History
	}
	return out, nil
}

// UnmarshalJSON decodes a page of sessions, naming the failing session in
// errors.
func (r *GetSessionsResponse) UnmarshalJSON(data []byte) error {
	sessions, next, err := decodePage[SessionInfo](data, false)
	if err != nil {
		return err
	}
	*r = GetSessionsResponse{Sessions: sessions, Next: next}
	return nil
}

// decodePage decodes a page of GET /sessions whose items are of type T;
// required says whether sessions must be present.
func decodePage[T any, P interface {
	*T
	json.Unmarshaler
}](data []byte, required bool) ([]T, string, error) {
	var w struct {
		Sessions []json.RawMessage `json:"sessions"`
		Next     *string           `json:"next"`
	}
	if err := decodeObject(data, &w); err != nil {
		return nil, "", err
	}
	if w.Sessions == nil && required {
		return nil, "", fieldErr("sessions", "required")
	}
	next := ""
	if w.Next != nil {
		next = *w.Next
	}
	sessions, err := decodeList(w.Sessions, unmarshalInto[T, P])
	if err != nil {
		return nil, "", within("sessions", err)
	}
	return sessions, next, nil
}

// PostSessionsRequest is the body of POST /sessions.
type PostSessionsRequest struct {
	Agent AgentConfig `json:"agent"`
	// Messages seed the history; tool permissions are not allowed.
	Messages []Message  `json:"messages,omitzero"`
	Tools    []ToolSpec `json:"tools,omitzero"`
	// AGUI is what the AG-UI extension carries (ExtensionAGUI); a server
	// takes it only from a request that asked for the extension.
	AGUI *AGUIInput `json:"agui,omitempty"`
}

// UnmarshalJSON decodes the request, requiring agent.name and checking the
// seed messages.
func (r *PostSessionsRequest) UnmarshalJSON(data []byte) error {
	p, err := decodeCreate[ToolSpec](data)
	if err != nil {
		return err
	}
	*r = PostSessionsRequest{Agent: p.agent, Messages: p.messages, Tools: p.tools, AGUI: p.agui}
	return nil
}

// createParts are the fields of a request that creates a session, in
// every version.
type createParts[T any] struct {
	agent    AgentConfig
	stream   *string // versions 1 and 2 only
	messages []Message
	tools    []T
	agui     *AGUIInput
}

// decodeCreate decodes a request that creates a session, with tool specs
// of type T: agent.name is required, messages are history messages.
func decodeCreate[T any, P interface {
	*T
	json.Unmarshaler
}](data []byte) (createParts[T], error) {
	var w struct {
		Agent    json.RawMessage   `json:"agent"`
		Stream   *string           `json:"stream"`
		Messages []json.RawMessage `json:"messages"`
		Tools    []json.RawMessage `json:"tools"`
		AGUI     json.RawMessage   `json:"agui"`
	}
	var out createParts[T]
	if err := decodeObject(data, &w); err != nil {
		return out, err
	}
	if w.Agent == nil {
		return out, fieldErr("agent", "required")
	}
	if err := out.agent.UnmarshalJSON(w.Agent); err != nil {
		return out, within("agent", err)
	}
	if out.agent.Name == "" {
		return out, fieldErr("agent.name", "required")
	}
	out.stream = w.Stream
	if w.Messages != nil {
		msgs, err := decodeMessages(w.Messages, historyOnly)
		if err != nil {
			return out, within("messages", err)
		}
		out.messages = msgs
	}
	tools, err := decodeList(w.Tools, unmarshalInto[T, P])
	if err != nil {
		return out, within("tools", err)
	}
	out.tools = tools
	out.agui, err = decodeAGUIInput(w.AGUI)
	return out, err
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
	// AGUI is what the AG-UI extension carries (ExtensionAGUI); a server
	// takes it only from a request that asked for the extension.
	AGUI *AGUIInput `json:"agui,omitempty"`
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
	p, err := decodeTurn[ToolSpec](data)
	if err != nil {
		return err
	}
	*r = PostSessionTurnRequest{Agent: p.agent, Stream: p.stream, Messages: p.messages, Tools: p.tools, AGUI: p.agui}
	return nil
}

// turnParts are the fields of a turn request in every version.
type turnParts[T any] struct {
	agent    *AgentConfig
	stream   StreamMode
	messages []Message
	tools    []T
	agui     *AGUIInput
}

// decodeTurn decodes a turn request with tool specs of type T.
func decodeTurn[T any, P interface {
	*T
	json.Unmarshaler
}](data []byte) (turnParts[T], error) {
	var w struct {
		Agent    json.RawMessage   `json:"agent"`
		Stream   *string           `json:"stream"`
		Messages []json.RawMessage `json:"messages"`
		Tools    []json.RawMessage `json:"tools"`
		AGUI     json.RawMessage   `json:"agui"`
	}
	var out turnParts[T]
	if err := decodeObject(data, &w); err != nil {
		return out, err
	}
	if w.Agent != nil && firstByte(w.Agent) != 'n' {
		out.agent = new(AgentConfig)
		if err := out.agent.UnmarshalJSON(w.Agent); err != nil {
			return out, within("agent", err)
		}
	}
	var err error
	if out.stream, err = decodeStream(w.Stream); err != nil {
		return out, err
	}
	if w.Messages == nil {
		return out, fieldErr("messages", "required")
	}
	msgs, err := decodeMessages(w.Messages, nil)
	if err != nil {
		return out, within("messages", err)
	}
	if err := CheckTurnMessages(msgs); err != nil {
		return out, err
	}
	out.messages = msgs
	if out.tools, err = decodeList(w.Tools, unmarshalInto[T, P]); err != nil {
		return out, within("tools", err)
	}
	out.agui, err = decodeAGUIInput(w.AGUI)
	return out, err
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
	if inner, ok := soleMember(data, "history"); ok {
		var out GetSessionHistoryResponse
		if out.History.UnmarshalJSON(inner) == nil {
			*r = out
			return nil
		}
	}
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
	for _, name := range [...]string{"full", "compacted"} {
		if inner, ok := soleMember(data, name); ok {
			if msgs, err := DecodeHistory(inner); err == nil {
				if name == "full" {
					*h = SessionHistory{Full: msgs}
				} else {
					*h = SessionHistory{Compacted: msgs}
				}
				return nil
			}
		}
	}
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

// AppendHistoryResponse appends the JSON of GetSessionHistoryResponse{h}:
// what encoding/json writes, each message by its own MarshalJSON, without
// encoding/json's second pass over the messages' bytes (a long history is
// megabytes).
func AppendHistoryResponse(dst []byte, h *SessionHistory) ([]byte, error) {
	dst = append(dst, `{"history":{`...)
	var err error
	sep := ""
	for _, part := range [...]struct {
		name string
		msgs []Message
	}{{"compacted", h.Compacted}, {"full", h.Full}} {
		if part.msgs == nil {
			continue
		}
		dst = append(append(append(dst, sep...), `"`+part.name+`":`...), '[')
		for i, m := range part.msgs {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = AppendMessage(dst, m); err != nil {
				return nil, err
			}
		}
		dst, sep = append(dst, ']'), ","
	}
	return append(dst, "}}"...), nil
}

// soleMember is the value of data when data is an object of one member,
// name, written compactly as this package writes it ({"name":value}):
// the bytes between, which the caller decodes itself. A value that then
// decodes makes data exactly that object, so the caller skips the
// general decoder's pass over the whole (a history is read once, not
// once per level); one that does not goes to the general decoder, which
// says what is wrong.
func soleMember(data []byte, name string) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(data, []byte(`{"`+name+`":`))
	if !ok {
		return nil, false
	}
	// An encoder's closing newline (json.Encoder, this project's servers)
	// is not part of the member.
	return bytes.CutSuffix(bytes.TrimRight(rest, " \t\r\n"), []byte("}"))
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

// WriteError answers status with the ErrorResponse {"error":{"code",
// "message"}}, the JSON written without HTML escaping.
func WriteError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = jsonenc.Encode(w, ErrorResponse{Error: ErrorBody{Code: code, Message: message}})
}
