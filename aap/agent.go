package aap

import (
	"encoding/json"
	"maps"
)

// Version is the AAP protocol version this package implements.
const Version = 3

// OptionType is the kind of an agent option.
type OptionType string

// The three kinds of agent option.
const (
	OptionText   OptionType = "text"
	OptionSecret OptionType = "secret" // masked in UIs, redacted in responses
	OptionSelect OptionType = "select" // one of Options
)

// AgentOption is an option a client may set per session. Options lists the
// allowed values and is required (and only allowed) for OptionSelect.
type AgentOption struct {
	Type        OptionType `json:"type"`
	Name        string     `json:"name"`
	Title       string     `json:"title,omitempty"`
	Description string     `json:"description,omitempty"`
	Options     []string   `json:"options,omitzero"`
	Default     string     `json:"default"`
}

// Validate checks the option's kind and required fields.
func (o *AgentOption) Validate() error {
	if o.Name == "" {
		return fieldErr("name", "required")
	}
	switch o.Type {
	case OptionText, OptionSecret:
		if o.Options != nil {
			return fieldErr("options", "only allowed for a select option")
		}
	case OptionSelect:
		if len(o.Options) == 0 {
			return fieldErr("options", "required for a select option")
		}
	case "":
		return fieldErr("type", "required")
	default:
		return fieldErr("type", "unknown option type %q", o.Type)
	}
	return nil
}

// Empty is the value of a capability flag: present means supported.
type Empty struct{}

// HistoryType names a kind of history served by GET /sessions/:id/history.
type HistoryType string

// The two history types.
const (
	HistoryCompacted HistoryType = "compacted"
	HistoryFull      HistoryType = "full"
)

// StreamMode is how a turn's response is delivered.
type StreamMode string

// The three stream modes. The zero value means the request did not say,
// which AAP defines as StreamNone.
const (
	StreamDelta   StreamMode = "delta"
	StreamMessage StreamMode = "message"
	StreamNone    StreamMode = "none"
)

// Capabilities declares what an agent supports. A nil field means
// unsupported.
type Capabilities struct {
	History     *HistoryCapabilities     `json:"history,omitempty"`
	Stream      *StreamCapabilities      `json:"stream,omitempty"`
	Application *ApplicationCapabilities `json:"application,omitempty"`
	Image       *ImageCapabilities       `json:"image,omitempty"`
}

// HistoryCapabilities declares which history types the agent serves.
type HistoryCapabilities struct {
	Compacted *Empty `json:"compacted,omitempty"`
	Full      *Empty `json:"full,omitempty"`
}

// StreamCapabilities declares which stream modes the agent supports.
type StreamCapabilities struct {
	Delta   *Empty `json:"delta,omitempty"`
	Message *Empty `json:"message,omitempty"`
	None    *Empty `json:"none,omitempty"`
}

// ApplicationCapabilities declares which application inputs the agent takes.
type ApplicationCapabilities struct {
	Tools *Empty `json:"tools,omitempty"`
}

// ImageCapabilities declares which image inputs the agent takes.
type ImageCapabilities struct {
	HTTP *Empty `json:"http,omitempty"`
	Data *Empty `json:"data,omitempty"`
}

// SupportsStream reports whether the mode is declared. AAP says an agent
// that declares no stream capabilities supports only StreamNone.
func (c *Capabilities) SupportsStream(m StreamMode) bool {
	if c == nil || c.Stream == nil {
		return m == StreamNone || m == ""
	}
	switch m {
	case StreamDelta:
		return c.Stream.Delta != nil
	case StreamMessage:
		return c.Stream.Message != nil
	case StreamNone, "":
		return c.Stream.None != nil
	}
	return false
}

// SupportsHistory reports whether the history type is declared.
func (c *Capabilities) SupportsHistory(t HistoryType) bool {
	if c == nil || c.History == nil {
		return false
	}
	switch t {
	case HistoryCompacted:
		return c.History.Compacted != nil
	case HistoryFull:
		return c.History.Full != nil
	}
	return false
}

// ToolSpec declares a tool: a client-side tool in requests, a server-side
// tool in /meta. Parameters is a JSON Schema, kept as raw JSON.
type ToolSpec struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

type wireToolSpec struct {
	Name        *string         `json:"name"`
	Title       *string         `json:"title"`
	Description *string         `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// UnmarshalJSON decodes a tool spec, requiring name, description and an
// object for parameters.
func (t *ToolSpec) UnmarshalJSON(data []byte) error {
	var w wireToolSpec
	if err := decodeObject(data, &w); err != nil {
		return err
	}
	if w.Name == nil || *w.Name == "" {
		return fieldErr("name", "required")
	}
	if w.Description == nil {
		return fieldErr("description", "required")
	}
	if w.Parameters == nil {
		return fieldErr("parameters", "required")
	}
	if firstByte(w.Parameters) != '{' {
		return fieldErr("parameters", "must be a JSON Schema object")
	}
	*t = ToolSpec{Name: *w.Name, Description: *w.Description, Parameters: w.Parameters}
	if w.Title != nil {
		t.Title = *w.Title
	}
	return nil
}

// ServerToolRef enables a server-side tool for a session.
type ServerToolRef struct {
	Name string `json:"name"`
	// Trust lets the server run the tool without asking permission.
	Trust bool `json:"trust,omitempty"`
}

// AgentConfig chooses the agent and configures it. Name is required when a
// session is created and may not change afterwards. Tools distinguishes nil
// (not given) from empty (all server tools disabled); so does Options.
type AgentConfig struct {
	Name    string            `json:"name,omitempty"`
	Tools   []ServerToolRef   `json:"tools,omitzero"`
	Options map[string]string `json:"options,omitzero"`
}

type wireAgentConfig struct {
	Name    *string           `json:"name"`
	Tools   []json.RawMessage `json:"tools"`
	Options map[string]string `json:"options"`
}

// UnmarshalJSON decodes an agent config; it does not require Name (turns
// omit it), see PostSessionsRequest for where it is required.
func (a *AgentConfig) UnmarshalJSON(data []byte) error {
	var w wireAgentConfig
	if err := decodeObject(data, &w); err != nil {
		return err
	}
	out := AgentConfig{Options: w.Options}
	if w.Name != nil {
		out.Name = *w.Name
	}
	if w.Tools != nil {
		out.Tools = make([]ServerToolRef, 0, len(w.Tools))
		for i, raw := range w.Tools {
			var r struct {
				Name  *string `json:"name"`
				Trust *bool   `json:"trust"`
			}
			if err := decodeObject(raw, &r); err != nil {
				return within(index("tools", i), err)
			}
			if r.Name == nil || *r.Name == "" {
				return fieldErr(index("tools", i)+".name", "required")
			}
			ref := ServerToolRef{Name: *r.Name}
			if r.Trust != nil {
				ref.Trust = *r.Trust
			}
			out.Tools = append(out.Tools, ref)
		}
	}
	*a = out
	return nil
}

// AgentInfo describes one agent in GET /meta.
type AgentInfo struct {
	Name        string        `json:"name"`
	Title       string        `json:"title,omitempty"`
	Version     string        `json:"version"`
	Description string        `json:"description,omitempty"`
	Tools       []ToolSpec    `json:"tools,omitempty"`
	Options     []AgentOption `json:"options,omitempty"`
	// Capabilities is nil when the agent declares none.
	Capabilities *Capabilities `json:"capabilities,omitempty"`
}

// UnmarshalJSON decodes an agent, naming the failing tool or option in
// errors.
func (a *AgentInfo) UnmarshalJSON(data []byte) error {
	type plain AgentInfo
	var w struct {
		plain
		Tools   []json.RawMessage `json:"tools"`
		Options []json.RawMessage `json:"options"`
	}
	if err := decodeObject(data, &w); err != nil {
		return err
	}
	out := AgentInfo(w.plain)
	var err error
	if out.Tools, out.Options, err = decodeAgentLists[ToolSpec](w.Tools, w.Options); err != nil {
		return err
	}
	*a = out
	return nil
}

// decodeAgentLists decodes an agent's tools (specs of type T) and options,
// naming the failing one in errors.
func decodeAgentLists[T any, P interface {
	*T
	json.Unmarshaler
}](tools, options []json.RawMessage) ([]T, []AgentOption, error) {
	ts, err := decodeList(tools, unmarshalInto[T, P])
	if err != nil {
		return nil, nil, within("tools", err)
	}
	os, err := decodeList(options, unmarshalInto[AgentOption])
	if err != nil {
		return nil, nil, within("options", err)
	}
	return ts, os, nil
}

// Option returns the declared option with the given name.
func (a *AgentInfo) Option(name string) (AgentOption, bool) {
	for _, o := range a.Options {
		if o.Name == name {
			return o, true
		}
	}
	return AgentOption{}, false
}

// Tool returns the declared server-side tool with the given name.
func (a *AgentInfo) Tool(name string) (ToolSpec, bool) {
	for _, t := range a.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return ToolSpec{}, false
}

// UnmarshalJSON decodes an option and checks it with Validate.
func (o *AgentOption) UnmarshalJSON(data []byte) error {
	type plain AgentOption
	var p plain
	if err := decodeObject(data, &p); err != nil {
		return err
	}
	v := AgentOption(p)
	if err := v.Validate(); err != nil {
		return err
	}
	*o = v
	return nil
}

// Override applies a turn's agent overrides as AAP prescribes: server tools
// are replaced when given (an empty list disables them all), options are
// merged by key. The name never changes. A nil o changes nothing.
func (a *AgentConfig) Override(o *AgentConfig) {
	if o == nil {
		return
	}
	if o.Tools != nil {
		a.Tools = o.Tools
	}
	if len(o.Options) > 0 {
		opts := make(map[string]string, len(a.Options)+len(o.Options))
		maps.Copy(opts, a.Options)
		maps.Copy(opts, o.Options)
		a.Options = opts
	}
}
