package aap

import (
	"encoding/json"
	"fmt"
)

// The protocol versions this package speaks. GET /meta names the version a
// server implements.
//
// Version 1 (the protocol as first published) and version 2 share their
// routes: PUT /session creates a session and runs its first turn, whose
// stream opens with session_start; turns go to POST /session/:id; GET and
// DELETE /session/:id; tool specs carry their schema as inputSchema. They
// differ in two places: version 1 returns history inline in GET
// /session/:id?history=compacted|full and lists session ids in GET
// /sessions; version 2 serves history at GET /session/:id/history?type=…
// and lists session objects. Version 3 (Version) is the REST protocol of
// the rest of this package.
const (
	Version1 = 1
	Version2 = 2
	Version3 = 3
)

// KnownVersion reports whether v is a protocol version this package
// speaks: 1, 2 or 3.
func KnownVersion(v int) bool { return v == Version1 || v == Version2 || v == Version3 }

// ToolSpecV1 is a tool spec as versions 1 and 2 write it: the JSON Schema
// of the input is under inputSchema (version 3 calls it parameters).
type ToolSpecV1 struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// UnmarshalJSON decodes a tool spec, requiring name, description and an
// object for inputSchema.
func (t *ToolSpecV1) UnmarshalJSON(data []byte) error {
	var w struct {
		Name        *string         `json:"name"`
		Title       *string         `json:"title"`
		Description *string         `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	if err := decodeObject(data, &w); err != nil {
		return err
	}
	switch {
	case w.Name == nil || *w.Name == "":
		return fieldErr("name", "required")
	case w.Description == nil:
		return fieldErr("description", "required")
	case w.InputSchema == nil && w.Parameters != nil:
		return fieldErr("inputSchema", "required (parameters is what version 3 calls it; versions 1 and 2 name the schema inputSchema)")
	case w.InputSchema == nil:
		return fieldErr("inputSchema", "required")
	case firstByte(w.InputSchema) != '{':
		return fieldErr("inputSchema", "must be a JSON Schema object")
	}
	*t = ToolSpecV1{Name: *w.Name, Description: *w.Description, InputSchema: w.InputSchema}
	if w.Title != nil {
		t.Title = *w.Title
	}
	return nil
}

// V3 returns the spec with its schema under parameters.
func (t ToolSpecV1) V3() ToolSpec {
	return ToolSpec{Name: t.Name, Title: t.Title, Description: t.Description, Parameters: t.InputSchema}
}

// V1 returns the spec with its schema under inputSchema, as versions 1 and
// 2 write it.
func (t ToolSpec) V1() ToolSpecV1 {
	return ToolSpecV1{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.Parameters}
}

// ToolSpecsToV1 converts tool specs to the version 1 and 2 shape. Nil
// stays nil (not given) and empty stays empty (no tools).
func ToolSpecsToV1(ts []ToolSpec) []ToolSpecV1 {
	if ts == nil {
		return nil
	}
	out := make([]ToolSpecV1, len(ts))
	for i, t := range ts {
		out[i] = t.V1()
	}
	return out
}

// ToolSpecsFromV1 converts version 1 and 2 tool specs to ToolSpec. Nil
// stays nil and empty stays empty.
func ToolSpecsFromV1(ts []ToolSpecV1) []ToolSpec {
	if ts == nil {
		return nil
	}
	out := make([]ToolSpec, len(ts))
	for i, t := range ts {
		out[i] = t.V3()
	}
	return out
}

// AgentInfoV1 describes one agent in GET /meta of versions 1 and 2: as
// AgentInfo, with its server tools' schemas under inputSchema.
type AgentInfoV1 struct {
	Name         string        `json:"name"`
	Title        string        `json:"title,omitempty"`
	Version      string        `json:"version"`
	Description  string        `json:"description,omitempty"`
	Tools        []ToolSpecV1  `json:"tools,omitempty"`
	Options      []AgentOption `json:"options,omitempty"`
	Capabilities *Capabilities `json:"capabilities,omitempty"`
}

// UnmarshalJSON decodes an agent, naming the failing tool or option.
func (a *AgentInfoV1) UnmarshalJSON(data []byte) error {
	type plain AgentInfoV1
	var w struct {
		plain
		Tools   []json.RawMessage `json:"tools"`
		Options []json.RawMessage `json:"options"`
	}
	if err := decodeObject(data, &w); err != nil {
		return err
	}
	out := AgentInfoV1(w.plain)
	var err error
	if out.Tools, out.Options, err = decodeAgentLists[ToolSpecV1](w.Tools, w.Options); err != nil {
		return err
	}
	*a = out
	return nil
}

// V3 returns the agent with its tool specs in the version 3 shape.
func (a *AgentInfoV1) V3() AgentInfo {
	return AgentInfo{
		Name: a.Name, Title: a.Title, Version: a.Version, Description: a.Description,
		Tools: ToolSpecsFromV1(a.Tools), Options: a.Options, Capabilities: a.Capabilities,
	}
}

// V1 returns the agent as versions 1 and 2 describe it.
func (a *AgentInfo) V1() AgentInfoV1 {
	return AgentInfoV1{
		Name: a.Name, Title: a.Title, Version: a.Version, Description: a.Description,
		Tools: ToolSpecsToV1(a.Tools), Options: a.Options, Capabilities: a.Capabilities,
	}
}

// MetaResponseV1 is the body of GET /meta in versions 1 and 2.
type MetaResponseV1 struct {
	Version int           `json:"version"`
	Agents  []AgentInfoV1 `json:"agents"`
}

// UnmarshalJSON decodes the response, naming the agent in errors.
func (m *MetaResponseV1) UnmarshalJSON(data []byte) error {
	version, agents, err := decodeMeta[AgentInfoV1](data)
	if err != nil {
		return err
	}
	*m = MetaResponseV1{Version: version, Agents: agents}
	return nil
}

// V3 returns the response with its agents in the version 3 shape; Version
// stays the server's.
func (m *MetaResponseV1) V3() *GetMetaResponse {
	out := &GetMetaResponse{Version: m.Version}
	if m.Agents != nil {
		out.Agents = make([]AgentInfo, len(m.Agents))
		for i := range m.Agents {
			out.Agents[i] = m.Agents[i].V3()
		}
	}
	return out
}

// V1 returns the response as a version 1 or 2 server writes it, reporting
// the given version.
func (m *GetMetaResponse) V1(version int) *MetaResponseV1 {
	out := &MetaResponseV1{Version: version, Agents: make([]AgentInfoV1, len(m.Agents))}
	for i := range m.Agents {
		out.Agents[i] = m.Agents[i].V1()
	}
	return out
}

// PutSessionRequest is the body of PUT /session (versions 1 and 2), which
// creates a session and runs its first turn: the last message, a user
// message, is that turn; the messages before it seed the history.
type PutSessionRequest struct {
	Agent AgentConfig `json:"agent"`
	// Stream is the response mode; empty means StreamNone.
	Stream   StreamMode   `json:"stream,omitempty"`
	Messages []Message    `json:"messages"`
	Tools    []ToolSpecV1 `json:"tools,omitzero"`
}

// Mode returns the requested stream mode, StreamNone when unset.
func (r *PutSessionRequest) Mode() StreamMode {
	if r.Stream == "" {
		return StreamNone
	}
	return r.Stream
}

// Seed returns the messages before the first turn's user message.
func (r *PutSessionRequest) Seed() []Message {
	if len(r.Messages) == 0 {
		return nil
	}
	return r.Messages[:len(r.Messages)-1]
}

// Turn returns the first turn: the last message.
func (r *PutSessionRequest) Turn() []Message {
	if len(r.Messages) == 0 {
		return nil
	}
	return r.Messages[len(r.Messages)-1:]
}

// UnmarshalJSON decodes the request, requiring agent.name and history
// messages whose last one is a user message.
func (r *PutSessionRequest) UnmarshalJSON(data []byte) error {
	p, err := decodeCreate[ToolSpecV1](data)
	if err != nil {
		return err
	}
	stream, err := decodeStream(p.stream)
	if err != nil {
		return err
	}
	if err := CheckPutMessages(p.messages); err != nil {
		return err
	}
	*r = PutSessionRequest{Agent: p.agent, Stream: stream, Messages: p.messages, Tools: p.tools}
	return nil
}

// CheckPutMessages checks what PUT /session requires of its messages: at
// least one, the last a user message (the first turn).
func CheckPutMessages(msgs []Message) error {
	if len(msgs) == 0 {
		return fieldErr("messages", "must end with a user message, which is the session's first turn (got none)")
	}
	if last := msgs[len(msgs)-1]; last.Role() != RoleUser {
		return fieldErr(index("messages", len(msgs)-1)+".role", "the last message must be a user message, which is the session's first turn (got %q)", last.Role())
	}
	return nil
}

// decodeStream checks a request's stream mode.
func decodeStream(s *string) (StreamMode, error) {
	if s == nil {
		return "", nil
	}
	switch m := StreamMode(*s); m {
	case StreamDelta, StreamMessage, StreamNone:
		return m, nil
	}
	return "", fieldErr("stream", "unknown stream mode %q (want delta, message or none)", *s)
}

// PutSessionResponse is the body of PUT /session in StreamNone mode: the
// new session's id and its first turn's response.
type PutSessionResponse struct {
	SessionID  string     `json:"sessionId"`
	StopReason StopReason `json:"stopReason"`
	Messages   []Message  `json:"messages"`
}

// UnmarshalJSON decodes the response, requiring sessionId and checking the
// turn's response as PostSessionTurnResponse does.
func (r *PutSessionResponse) UnmarshalJSON(data []byte) error {
	var w struct {
		SessionID *string `json:"sessionId"`
	}
	if err := decodeObject(data, &w); err != nil {
		return err
	}
	if w.SessionID == nil || *w.SessionID == "" {
		return fieldErr("sessionId", "required")
	}
	var turn PostSessionTurnResponse
	if err := turn.UnmarshalJSON(data); err != nil {
		return err
	}
	*r = PutSessionResponse{SessionID: *w.SessionID, StopReason: turn.StopReason, Messages: turn.Messages}
	return nil
}

// Turn returns the first turn's response, without the session id.
func (r *PutSessionResponse) Turn() *PostSessionTurnResponse {
	return &PostSessionTurnResponse{StopReason: r.StopReason, Messages: r.Messages}
}

// SessionTurnRequestV1 is the body of POST /session/:id (versions 1 and
// 2): PostSessionTurnRequest with tool specs in the version 1 shape.
type SessionTurnRequestV1 struct {
	Agent    *AgentConfig `json:"agent,omitempty"`
	Stream   StreamMode   `json:"stream,omitempty"`
	Messages []Message    `json:"messages"`
	Tools    []ToolSpecV1 `json:"tools,omitzero"`
}

// UnmarshalJSON decodes the request and checks the shape of its messages
// as PostSessionTurnRequest does.
func (r *SessionTurnRequestV1) UnmarshalJSON(data []byte) error {
	p, err := decodeTurn[ToolSpecV1](data)
	if err != nil {
		return err
	}
	*r = SessionTurnRequestV1{Agent: p.agent, Stream: p.stream, Messages: p.messages, Tools: p.tools}
	return nil
}

// V3 returns the request in the version 3 shape.
func (r *SessionTurnRequestV1) V3() *PostSessionTurnRequest {
	return &PostSessionTurnRequest{Agent: r.Agent, Stream: r.Stream, Messages: r.Messages, Tools: ToolSpecsFromV1(r.Tools)}
}

// V1 returns the request as versions 1 and 2 write it.
func (r *PostSessionTurnRequest) V1() *SessionTurnRequestV1 {
	return &SessionTurnRequestV1{Agent: r.Agent, Stream: r.Stream, Messages: r.Messages, Tools: ToolSpecsToV1(r.Tools)}
}

// SessionResponseV1 is the body of GET /session/:id (versions 1 and 2) and
// an item of GET /sessions in version 2. History is version 1's inline
// history, present only when asked for with ?history= and served by the
// agent.
type SessionResponseV1 struct {
	SessionID string          `json:"sessionId"`
	Agent     AgentConfig     `json:"agent"`
	Tools     []ToolSpecV1    `json:"tools,omitzero"`
	History   *SessionHistory `json:"history,omitempty"`
}

// UnmarshalJSON decodes a session, naming the failing field in errors.
func (s *SessionResponseV1) UnmarshalJSON(data []byte) error {
	p, err := decodeSession[ToolSpecV1](data)
	if err != nil {
		return err
	}
	out := SessionResponseV1{SessionID: p.id, Agent: p.agent, Tools: p.tools}
	if p.history != nil {
		out.History = new(SessionHistory)
		if err := out.History.UnmarshalJSON(p.history); err != nil {
			return within("history", err)
		}
	}
	*s = out
	return nil
}

// V3 returns the session in the version 3 shape (which has no inline
// history).
func (s *SessionResponseV1) V3() SessionInfo {
	return SessionInfo{SessionID: s.SessionID, Agent: s.Agent, Tools: ToolSpecsFromV1(s.Tools)}
}

// V1 returns the session as versions 1 and 2 write it, without history.
func (s *SessionInfo) V1() SessionResponseV1 {
	return SessionResponseV1{SessionID: s.SessionID, Agent: s.Agent, Tools: ToolSpecsToV1(s.Tools)}
}

// SessionListResponseV1 is the body of GET /sessions in version 1: session
// ids only. Next is empty on the last page.
type SessionListResponseV1 struct {
	Sessions []string `json:"sessions"`
	Next     string   `json:"next,omitempty"`
}

// UnmarshalJSON decodes a page of ids, requiring sessions.
func (r *SessionListResponseV1) UnmarshalJSON(data []byte) error {
	var w struct {
		Sessions []json.RawMessage `json:"sessions"`
		Next     *string           `json:"next"`
	}
	if err := decodeObject(data, &w); err != nil {
		return err
	}
	if w.Sessions == nil {
		return fieldErr("sessions", "required")
	}
	var out SessionListResponseV1
	out.Sessions = make([]string, len(w.Sessions))
	for i, raw := range w.Sessions {
		if firstByte(raw) != '"' {
			return fieldErr(index("sessions", i), "must be a session id (a string); version 1 lists ids, version 2 objects")
		}
		if err := json.Unmarshal(raw, &out.Sessions[i]); err != nil {
			return jsonErr(index("sessions", i), err)
		}
	}
	if w.Next != nil {
		out.Next = *w.Next
	}
	*r = out
	return nil
}

// SessionListResponseV2 is the body of GET /sessions in version 2: session
// objects. Next is empty on the last page.
type SessionListResponseV2 struct {
	Sessions []SessionResponseV1 `json:"sessions"`
	Next     string              `json:"next,omitempty"`
}

// UnmarshalJSON decodes a page of sessions, naming the failing session.
func (r *SessionListResponseV2) UnmarshalJSON(data []byte) error {
	sessions, next, err := decodePage[SessionResponseV1](data, true)
	if err != nil {
		return err
	}
	*r = SessionListResponseV2{Sessions: sessions, Next: next}
	return nil
}

// V3 returns the page in the version 3 shape.
func (r *SessionListResponseV2) V3() *GetSessionsResponse {
	out := &GetSessionsResponse{Sessions: make([]SessionInfo, len(r.Sessions)), Next: r.Next}
	for i := range r.Sessions {
		out.Sessions[i] = r.Sessions[i].V3()
	}
	return out
}

// V3 returns the page in the version 3 shape: each session has only its
// id, which is all version 1 lists.
func (r *SessionListResponseV1) V3() *GetSessionsResponse {
	out := &GetSessionsResponse{Sessions: make([]SessionInfo, len(r.Sessions)), Next: r.Next}
	for i, id := range r.Sessions {
		out.Sessions[i] = SessionInfo{SessionID: id}
	}
	return out
}

// errVersion reports an endpoint that the server's protocol version does
// not have.
func errVersion(endpoint string, version int, instead string) error {
	return &endpointError{endpoint: endpoint, err: fmt.Errorf("%w (version %d); %s", ErrWrongVersion, version, instead)}
}
