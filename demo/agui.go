package demo

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/internal/ident"
	"github.com/aapagui/aapagui/internal/sse"
	"github.com/aapagui/aapagui/translate"
)

// Tool names the script knows.
const (
	WeatherTool = "get_weather"
	SearchTool  = "web_search"
)

// SearchToolSpec is web_search as a server-side tool declaration.
var SearchToolSpec = aap.ToolSpec{
	Name:        SearchTool,
	Title:       "Web search",
	Description: "Search the web (the demo index) for a query.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"What to search for"}},"required":["query"]}`),
}

// AGUIAgent is the demo agent speaking AG-UI over HTTP: POST a
// RunAgentInput, get an SSE stream of events. It is stateless: everything
// it needs is in the input (messages, tools, resume, and the server-tool
// settings under forwardedProps, see translate.ForwardedPropsKey).
//
// Its zero value presents its search as web_search; SearchTool gives it
// another name, so that a second instance is another agent with other
// tools (two AG-UI agents behind one aap2agui, say).
type AGUIAgent struct {
	// SearchTool is the name of the agent's server search tool; empty
	// means web_search (the constant SearchTool).
	SearchTool string
}

// searchName is the name the agent's search goes by.
func (a AGUIAgent) searchName() string {
	if a.SearchTool == "" {
		return SearchTool
	}
	return a.SearchTool
}

// SearchSpec is the agent's search as a server-side tool declaration:
// SearchToolSpec under the agent's name for it.
func (a AGUIAgent) SearchSpec() aap.ToolSpec {
	spec := SearchToolSpec
	if name := a.searchName(); name != SearchTool {
		spec.Name, spec.Title = name, "Search ("+name+")"
	}
	return spec
}

// maxInput bounds a RunAgentInput body.
const maxInput = 32 << 20

// ServeHTTP runs one AG-UI run.
func (a AGUIAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, `{"error":{"code":"method_not_allowed","message":"POST a RunAgentInput"}}`, http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxInput))
	var in *types.RunAgentInput
	if err == nil {
		in, err = agui.DecodeRunAgentInput(body)
	}
	if err != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(aap.ErrorResponse{Error: aap.ErrorBody{Code: "invalid_body", Message: "the body is not a RunAgentInput: " + err.Error()}})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	s := &aguiStream{w: w, flusher: flusherOf(w), in: in, search: a.searchName()}
	s.run()
	s.flush()
}

func flusherOf(w http.ResponseWriter) http.Flusher {
	f, _ := w.(http.Flusher)
	return f
}

// aguiStream writes one run's events, coalescing them into large writes.
type aguiStream struct {
	w       http.ResponseWriter
	flusher http.Flusher
	in      *types.RunAgentInput
	search  string // the search tool's name
	buf     []byte
	data    []byte
	failed  bool
}

func (s *aguiStream) emit(ev events.Event) {
	if s.failed {
		return
	}
	var err error
	if s.data, err = agui.AppendEvent(s.data[:0], ev); err != nil {
		s.failed = true
		return
	}
	s.buf = sse.AppendEvent(s.buf, "", s.data)
	if len(s.buf) >= 32<<10 {
		s.flush()
	}
}

func (s *aguiStream) flush() {
	if s.failed || len(s.buf) == 0 {
		return
	}
	if _, err := s.w.Write(s.buf); err != nil {
		s.failed = true // the client left; stop producing
	}
	s.buf = s.buf[:0]
	if s.flusher != nil {
		s.flusher.Flush()
	}
}

func base(t events.EventType) *events.BaseEvent { return &events.BaseEvent{EventType: t} }

func (s *aguiStream) run() {
	s.emit(&events.RunStartedEvent{BaseEvent: base(events.EventTypeRunStarted), ThreadIDValue: s.in.ThreadID, RunIDValue: s.in.RunID})
	msgs := s.in.Messages
	if len(s.in.Resume) > 0 && !allCancelledForNewInput(s.in) {
		s.resume()
		return
	}
	if n := len(msgs); n > 0 && msgs[n-1].Role == types.RoleTool {
		s.afterToolResult(msgs[n-1])
		return
	}
	a := Decide(lastUserText(msgs))
	switch a.Kind {
	case Fail:
		s.text(FailPrefix)
		code := "DEMO_FAILURE"
		s.emit(&events.RunErrorEvent{BaseEvent: base(events.EventTypeRunError), Message: FailMessage, Code: &code, RunIDValue: s.in.RunID})
		return
	case Think:
		id := ident.Random("reasoning-")
		s.emit(&events.ReasoningStartEvent{BaseEvent: base(events.EventTypeReasoningStart), MessageID: id})
		s.emit(&events.ReasoningMessageStartEvent{BaseEvent: base(events.EventTypeReasoningMessageStart), MessageID: id, Role: "reasoning"})
		for _, d := range Chunks(ThinkingText(a.Arg)) {
			s.emit(&events.ReasoningMessageContentEvent{BaseEvent: base(events.EventTypeReasoningMessageContent), MessageID: id, Delta: d})
		}
		s.emit(&events.ReasoningMessageEndEvent{BaseEvent: base(events.EventTypeReasoningMessageEnd), MessageID: id})
		s.emit(&events.ReasoningEndEvent{BaseEvent: base(events.EventTypeReasoningEnd), MessageID: id})
		s.text(DoneThinking)
	case Weather:
		if !s.hasTool(WeatherTool) {
			s.text(NoWeatherTool)
			break
		}
		args, _ := json.Marshal(map[string]string{"location": a.Arg})
		s.toolCall(ident.Random("call_"), WeatherTool, string(args))
	case Search:
		trust, enabled := s.searchTool()
		if !enabled {
			s.text(strings.Replace(NoSearchTool, SearchTool, s.search, 1))
			break
		}
		args, _ := json.Marshal(map[string]string{"query": a.Arg})
		id := ident.Random("call_")
		s.toolCall(id, s.search, string(args))
		if !trust {
			in := translate.PermissionInterrupt(&aap.ToolCall{ToolCallID: id, Name: s.search, Input: args})
			s.emit(&events.RunFinishedEvent{BaseEvent: base(events.EventTypeRunFinished), ThreadIDValue: s.in.ThreadID, RunIDValue: s.in.RunID,
				Outcome: &events.RunFinishedOutcome{Type: events.RunFinishedOutcomeTypeInterrupt, Interrupts: []types.Interrupt{in}}})
			return
		}
		result := SearchResult(a.Arg)
		s.toolResult(id, result)
		s.text(SearchAnswer(result))
	case Long:
		id := ident.Random("msg-")
		s.emit(&events.TextMessageStartEvent{BaseEvent: base(events.EventTypeTextMessageStart), MessageID: id, Role: &roleAssistant})
		for i := range a.N {
			s.emit(&events.TextMessageContentEvent{BaseEvent: base(events.EventTypeTextMessageContent), MessageID: id, Delta: LongWord(i)})
		}
		s.emit(&events.TextMessageEndEvent{BaseEvent: base(events.EventTypeTextMessageEnd), MessageID: id})
	default:
		s.text(EchoText(a.Arg))
	}
	s.finished()
}

var roleAssistant = "assistant"

func (s *aguiStream) finished() {
	s.emit(&events.RunFinishedEvent{BaseEvent: base(events.EventTypeRunFinished), ThreadIDValue: s.in.ThreadID, RunIDValue: s.in.RunID,
		Outcome: &events.RunFinishedOutcome{Type: events.RunFinishedOutcomeTypeSuccess}})
}

func (s *aguiStream) text(t string) {
	id := ident.Random("msg-")
	s.emit(&events.TextMessageStartEvent{BaseEvent: base(events.EventTypeTextMessageStart), MessageID: id, Role: &roleAssistant})
	for _, d := range Chunks(t) {
		s.emit(&events.TextMessageContentEvent{BaseEvent: base(events.EventTypeTextMessageContent), MessageID: id, Delta: d})
	}
	s.emit(&events.TextMessageEndEvent{BaseEvent: base(events.EventTypeTextMessageEnd), MessageID: id})
}

func (s *aguiStream) toolCall(id, name, args string) {
	parent := ident.Random("msg-")
	s.emit(&events.ToolCallStartEvent{BaseEvent: base(events.EventTypeToolCallStart), ToolCallID: id, ToolCallName: name, ParentMessageID: &parent})
	for _, d := range ArgChunks(args) {
		s.emit(&events.ToolCallArgsEvent{BaseEvent: base(events.EventTypeToolCallArgs), ToolCallID: id, Delta: d})
	}
	s.emit(&events.ToolCallEndEvent{BaseEvent: base(events.EventTypeToolCallEnd), ToolCallID: id})
}

func (s *aguiStream) toolResult(id, content string) {
	role := "tool"
	s.emit(&events.ToolCallResultEvent{BaseEvent: base(events.EventTypeToolCallResult), MessageID: ident.ToolResultMessage(id), ToolCallID: id, Content: content, Role: &role})
}

func (s *aguiStream) hasTool(name string) bool {
	for _, t := range s.in.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// searchTool reads the search tool's settings (web_search's, or the name
// AGUIAgent.SearchTool gives it) from forwardedProps.
func (s *aguiStream) searchTool() (trust, enabled bool) {
	f, err := translate.ForwardedFrom(s.in.ForwardedProps)
	if err != nil || f == nil || f.Agent == nil {
		return false, false
	}
	for _, t := range f.Agent.Tools {
		if t.Name == s.search {
			return t.Trust, true
		}
	}
	return false, false
}

// findCall finds a tool call of an assistant message by id.
func findCall(msgs []types.Message, id string) (types.ToolCall, bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, c := range msgs[i].ToolCalls {
			if c.ID == id {
				return c, true
			}
		}
	}
	return types.ToolCall{}, false
}

func argString(c types.ToolCall, key string) string {
	var m map[string]any
	_ = json.Unmarshal([]byte(c.Function.Arguments), &m)
	s, _ := m[key].(string)
	return s
}

func (s *aguiStream) afterToolResult(m types.Message) {
	call, ok := findCall(s.in.Messages, m.ToolCallID)
	content, _ := m.Content.(string)
	if ok && call.Function.Name == WeatherTool {
		s.text(WeatherText(argString(call, "location"), content))
	} else {
		s.text(ResultText(content))
	}
	s.finished()
}

func (s *aguiStream) resume() {
	for _, r := range s.in.Resume {
		callID, _ := ident.ToolCallFromInterrupt(r.InterruptID)
		call, ok := findCall(s.in.Messages, callID)
		if !ok {
			code := "UNKNOWN_INTERRUPT"
			s.emit(&events.RunErrorEvent{BaseEvent: base(events.EventTypeRunError), Message: "no interrupt " + r.InterruptID + " is open", Code: &code, RunIDValue: s.in.RunID})
			return
		}
		p, err := translate.PermissionFromResume(r, callID)
		if err != nil {
			code := "INVALID_RESUME"
			s.emit(&events.RunErrorEvent{BaseEvent: base(events.EventTypeRunError), Message: err.Error(), Code: &code, RunIDValue: s.in.RunID})
			return
		}
		if p.Granted {
			result := SearchResult(argString(call, "query"))
			s.toolResult(callID, result)
			s.text(SearchAnswer(result))
		} else {
			s.toolResult(callID, DeniedResult(p.Reason))
			s.text(DeniedText(p.Reason))
		}
	}
	s.finished()
}

// lastUserText is the text of the newest user message.
func lastUserText(msgs []types.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != types.RoleUser {
			continue
		}
		switch c := msgs[i].Content.(type) {
		case string:
			return c
		case []any:
			var parts []string
			for _, p := range c {
				if m, ok := p.(map[string]any); ok && m["type"] == "text" {
					if t, ok := m["text"].(string); ok {
						parts = append(parts, t)
					}
				}
			}
			return strings.Join(parts, " ")
		case []types.InputContent:
			var parts []string
			for _, p := range c {
				if p.Type == types.InputContentTypeText {
					parts = append(parts, p.Text)
				}
			}
			return strings.Join(parts, " ")
		}
	}
	return ""
}

// allCancelledForNewInput reports a resume that only abandons interrupts
// because the user said something new: the new message is what to answer.
func allCancelledForNewInput(in *types.RunAgentInput) bool {
	for _, r := range in.Resume {
		if r.Status != types.ResumeStatusCancelled {
			return false
		}
	}
	n := len(in.Messages)
	if n == 0 {
		return false
	}
	// The bridge closes the abandoned calls no tool-bound interrupt speaks
	// for with tool messages placed before the new user message; a call of
	// the demo's own permission interrupt is answered by its cancelled
	// entry, and the bridge records its result.
	return in.Messages[n-1].Role == types.RoleUser
}
