package aap_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
)

// Lines copied verbatim from the reference server captures
// (delta-08-session-and-history.txt, none-03-client-tool.txt and the request
// lines of the delta-* and message-* captures).
const (
	wireSystem        = `{"role":"system","content":"You are a test agent."}`
	wireUser          = `{"role":"user","content":"hello there"}`
	wireAssistantText = `{"role":"assistant","content":[{"type":"text","text":"Hello! You said: hello there"}]}`
	wireAssistantBoth = `{"role":"assistant","content":[{"type":"text","text":"After thinking it over: the answer is 42."},{"type":"thinking","thinking":"The user asked me to think about: please think. I will reason briefly before answering."}]}`
	wireAssistantTool = `{"role":"assistant","content":[{"type":"tool_use","toolCallId":"call_001","name":"get_weather","input":{"location":"Tokyo"}}]}`
	wireTool          = `{"role":"tool","toolCallId":"call_001","content":"Tokyo: 18°C, partly cloudy"}`
	wireToolQuoted    = `{"role":"tool","toolCallId":"call_002","content":"\"Top result for aap: AAP is the Agent Application Protocol (agentapplicationprotocol.com)\""}`
	wireToolDenied    = `{"role":"tool","toolCallId":"call_003","content":"Tool use denied: User declined"}`

	wireSession = `{"sessionId":"sess_d00e325e19ff4ad6","agent":{"name":"scripted-agent","tools":[{"name":"web_search","trust":true}],"options":{"apiKey":"***","language":"French"}},"tools":[{"name":"get_weather","description":"Get current weather for a location","parameters":{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}}]}`

	wireTurnDelta   = `{"stream":"delta","messages":[{"role":"user","content":"hello there"}]}`
	wireTurnTool    = `{"stream":"delta","messages":[{"role":"tool","toolCallId":"call_001","content":"Tokyo: 18°C, partly cloudy"}]}`
	wireTurnMessage = `{"stream":"message","messages":[{"role":"user","content":"what is the weather in Tokyo"}]}`
	wireTurnNone    = `{"stream":"none","messages":[{"role":"tool","toolCallId":"call_009","content":"Tokyo: 18°C, partly cloudy"}]}`
	wireTurnAgent   = `{"stream":"delta","agent":{"tools":[{"name":"web_search","trust":true}]},"messages":[{"role":"user","content":"search for dogs"}]}`

	wireTurnRespTool = `{"stopReason":"tool_use","messages":[{"role":"assistant","content":[{"type":"tool_use","toolCallId":"call_009","name":"get_weather","input":{"location":"Tokyo"}}]}]}`
	wireTurnRespText = `{"stopReason":"end_turn","messages":[{"role":"assistant","content":[{"type":"text","text":"The weather tool says: Tokyo: 18°C, partly cloudy"}]}]}`
)

// compact returns s without insignificant whitespace.
func compact(t testing.TB, s string) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, json.Compact(&buf, []byte(s)))
	return buf.String()
}

// encodeNoHTML encodes v the way a proxy that wants exact bytes would: with
// encoding/json's HTML escaping turned off.
func encodeNoHTML(t testing.TB, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(v))
	return strings.TrimSuffix(buf.String(), "\n")
}

func TestDecodeMessageRoundTrip(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		want       string // empty: the compacted input
		wantType   string
		wantBlocks bool
	}{
		{name: "capture system", in: wireSystem, wantType: "*aap.SystemMessage"},
		{name: "capture user string", in: wireUser, wantType: "*aap.UserMessage"},
		{name: "capture assistant text block", in: wireAssistantText, wantType: "*aap.AssistantMessage", wantBlocks: true},
		{name: "capture assistant text then thinking keeps order", in: wireAssistantBoth, wantType: "*aap.AssistantMessage", wantBlocks: true},
		{name: "capture assistant tool_use", in: wireAssistantTool, wantType: "*aap.AssistantMessage", wantBlocks: true},
		{name: "capture tool result with non-ASCII", in: wireTool, wantType: "*aap.ToolMessage"},
		{name: "capture tool result with escaped quotes", in: wireToolQuoted, wantType: "*aap.ToolMessage"},
		{name: "capture tool denial", in: wireToolDenied, wantType: "*aap.ToolMessage"},
		{name: "user empty string stays string", in: `{"role":"user","content":""}`, wantType: "*aap.UserMessage"},
		{name: "user single text block stays blocks", in: `{"role":"user","content":[{"type":"text","text":"hello there"}]}`, wantType: "*aap.UserMessage", wantBlocks: true},
		{name: "user empty block list stays list", in: `{"role":"user","content":[]}`, wantType: "*aap.UserMessage", wantBlocks: true},
		{
			name:     "user images https and data",
			in:       `{"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image","url":"https://example.com/a.png"},{"type":"image","url":"data:image/png;base64,iVBORw0KGgo="}]}`,
			wantType: "*aap.UserMessage", wantBlocks: true,
		},
		{name: "assistant string", in: `{"role":"assistant","content":"The capital of France is Paris."}`, wantType: "*aap.AssistantMessage"},
		{
			name:     "docs assistant thinking text tool_use",
			in:       `{"role":"assistant","content":[{"type":"thinking","thinking":"The user wants the weather in Tokyo. I should use the get_weather tool."},{"type":"text","text":"Let me check that for you."},{"type":"tool_use","toolCallId":"call_001","name":"get_weather","input":{"location":"Tokyo"}}]}`,
			wantType: "*aap.AssistantMessage", wantBlocks: true,
		},
		{name: "tool result as blocks", in: `{"role":"tool","toolCallId":"call_001","content":[{"type":"text","text":"18°C"},{"type":"image","url":"https://example.com/map.png"}]}`, wantType: "*aap.ToolMessage", wantBlocks: true},
		{name: "tool permission granted", in: `{"role":"tool_permission","toolCallId":"call_002","granted":true}`, wantType: "*aap.ToolPermissionMessage"},
		{name: "tool permission denied with reason", in: `{"role":"tool_permission","toolCallId":"call_002","granted":false,"reason":"User declined"}`, wantType: "*aap.ToolPermissionMessage"},
		{
			name:     "docs pretty printed",
			in:       "{\n  \"role\": \"system\",\n  \"content\": \"You are a helpful assistant that responds concisely.\"\n}",
			wantType: "*aap.SystemMessage",
		},
		{name: "empty reason is dropped", in: `{"role":"tool_permission","toolCallId":"c","granted":false,"reason":""}`, want: `{"role":"tool_permission","toolCallId":"c","granted":false}`, wantType: "*aap.ToolPermissionMessage"},
		{name: "unknown keys are ignored", in: `{"role":"user","content":"hi","name":"bob","metadata":{"x":1}}`, want: `{"role":"user","content":"hi"}`, wantType: "*aap.UserMessage"},
		{name: "text escapes are decoded", in: `{"role":"user","content":"caf\u00e9 \/ \ud83d\ude00"}`, want: `{"role":"user","content":"café / 😀"}`, wantType: "*aap.UserMessage"},
		{name: "key order of the message does not matter", in: `{"content":"hi","role":"assistant"}`, want: `{"role":"assistant","content":"hi"}`, wantType: "*aap.AssistantMessage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := aap.DecodeMessage([]byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.wantType, fmt.Sprintf("%T", m))
			switch m := m.(type) {
			case *aap.UserMessage:
				assert.Equal(t, tt.wantBlocks, m.Content.IsBlocks())
			case *aap.AssistantMessage:
				assert.Equal(t, tt.wantBlocks, m.Content.IsBlocks())
			case *aap.ToolMessage:
				assert.Equal(t, tt.wantBlocks, m.Content.IsBlocks())
			}
			want := tt.want
			if want == "" {
				want = compact(t, tt.in)
			}
			got, err := json.Marshal(m)
			require.NoError(t, err)
			assert.Equal(t, want, string(got))
		})
	}
}

// toolInputs are tool inputs whose bytes must survive decoding and
// encoding, apart from whitespace outside strings.
var toolInputs = []struct {
	name string
	in   string
	want string // empty: in is already compact
}{
	{name: "capture", in: `{"location":"Tokyo"}`},
	{name: "key order kept", in: `{"z":1,"a":{"y":2,"b":3},"m":[3,1,2]}`},
	{name: "number beyond float64", in: `{"n":1e400}`},
	{name: "integer beyond 2^53", in: `{"n":9007199254740993}`},
	{name: "long decimals", in: `{"n":0.10000000000000000555,"m":-0.0,"e":1E+2}`},
	{name: "unicode escape kept", in: `{"s":"\u00e9"}`},
	{name: "surrogate pair escape kept", in: `{"s":"\ud83d\ude00"}`},
	{name: "escaped slash and quote kept", in: `{"s":"a\"b\\c\/d"}`},
	{name: "raw non-ASCII kept", in: `{"s":"18°C é"}`},
	{name: "duplicate keys kept", in: `{"a":1,"a":2}`},
	{name: "empty object", in: `{}`},
	{name: "spaces inside strings kept", in: `{"s":"a  b\tc"}`},
	{name: "whitespace compacted", in: "{ \"b\" : [ 1 , 2 ] ,\n\t\"a\" : \"x y\" }", want: `{"b":[1,2],"a":"x y"}`},
	{name: "nested empty values", in: `{"a":{},"b":[],"c":null,"d":true,"e":""}`},
}

func TestToolUseInputPreserved(t *testing.T) {
	for _, tt := range toolInputs {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if want == "" {
				want = tt.in
			}
			in := `{"role":"assistant","content":[{"type":"tool_use","toolCallId":"call_1","name":"f","input":` + tt.in + `}]}`
			m, err := aap.DecodeMessage([]byte(in))
			require.NoError(t, err)
			block := m.(*aap.AssistantMessage).Content.Blocks[0].(*aap.ToolUseBlock)
			assert.Equal(t, want, compact(t, string(block.Input)), "decoded Input")

			got, err := json.Marshal(m)
			require.NoError(t, err)
			assert.Equal(t, `{"role":"assistant","content":[{"type":"tool_use","toolCallId":"call_1","name":"f","input":`+want+`}]}`, string(got))
		})
	}
}

func TestToolCallEventInputPreserved(t *testing.T) {
	for _, tt := range toolInputs {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if want == "" {
				want = tt.in
			}
			ev, err := aap.DecodeEvent("tool_call", []byte(`{"toolCallId":"call_1","name":"f","input":`+tt.in+`}`))
			require.NoError(t, err)
			got, err := ev.AppendData(nil)
			require.NoError(t, err)
			assert.Equal(t, `{"toolCallId":"call_1","name":"f","input":`+want+`}`, string(got))
		})
	}
}

// TestToolInputNotHTMLEscaped checks that an encoder with HTML escaping off
// writes tool input exactly: AAP tool input is kept byte for byte, so "<",
// ">" and "&" must not turn into \u003c, \u003e and \u0026.
func TestToolInputNotHTMLEscaped(t *testing.T) {
	const input = `{"html":"<b>Tom & Jerry</b>","cmp":"a>b"}`
	t.Run("tool_use block", func(t *testing.T) {
		in := `{"role":"assistant","content":[{"type":"tool_use","toolCallId":"call_1","name":"f","input":` + input + `}]}`
		m, err := aap.DecodeMessage([]byte(in))
		require.NoError(t, err)
		assert.Equal(t, in, encodeNoHTML(t, m))
	})
	t.Run("tool_call event", func(t *testing.T) {
		data := `{"toolCallId":"call_1","name":"f","input":` + input + `}`
		ev, err := aap.DecodeEvent("tool_call", []byte(data))
		require.NoError(t, err)
		got, err := ev.AppendData(nil)
		require.NoError(t, err)
		assert.Equal(t, data, string(got))
	})
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // empty: the compacted input
		into func() any
	}{
		{name: "capture turn request delta", in: wireTurnDelta, into: func() any { return new(aap.PostSessionTurnRequest) }},
		{name: "capture turn request tool result", in: wireTurnTool, into: func() any { return new(aap.PostSessionTurnRequest) }},
		{name: "capture turn request message", in: wireTurnMessage, into: func() any { return new(aap.PostSessionTurnRequest) }},
		{name: "capture turn request none", in: wireTurnNone, into: func() any { return new(aap.PostSessionTurnRequest) }},
		{
			name: "capture turn request with agent override",
			in:   wireTurnAgent,
			want: `{"agent":{"tools":[{"name":"web_search","trust":true}]},"stream":"delta","messages":[{"role":"user","content":"search for dogs"}]}`,
			into: func() any { return new(aap.PostSessionTurnRequest) },
		},
		{name: "turn request without stream", in: `{"messages":[{"role":"user","content":"hi"}]}`, into: func() any { return new(aap.PostSessionTurnRequest) }},
		{
			name: "turn request tool results and permissions mixed",
			in:   `{"stream":"delta","messages":[{"role":"tool","toolCallId":"call_001","content":"a"},{"role":"tool_permission","toolCallId":"call_004","granted":false,"reason":"no"},{"role":"tool","toolCallId":"call_002","content":[{"type":"text","text":"b"}]}]}`,
			into: func() any { return new(aap.PostSessionTurnRequest) },
		},
		{
			name: "turn request empty tools and agent tools are kept",
			in:   `{"agent":{"tools":[],"options":{}},"messages":[{"role":"user","content":"hi"}],"tools":[]}`,
			into: func() any { return new(aap.PostSessionTurnRequest) },
		},
		{
			name: "docs turn request",
			in:   `{"agent":{"tools":[{"name":"web_search","trust":true}],"options":{"language":"English"}},"stream":"delta","messages":[{"role":"user","content":"What about Osaka?"}],"tools":[{"name":"get_weather","description":"Get current weather for a location","parameters":{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}}]}`,
			into: func() any { return new(aap.PostSessionTurnRequest) },
		},
		{
			name: "docs session request",
			in:   `{"agent":{"name":"research-agent","tools":[{"name":"web_search","trust":true}],"options":{"language":"Japanese","model":"claude-opus-4-5"}},"messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"What's the capital of France?"},{"role":"assistant","content":"The capital of France is Paris."}],"tools":[{"name":"get_weather","description":"Get current weather for a location","parameters":{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}}]}`,
			into: func() any { return new(aap.PostSessionsRequest) },
		},
		{name: "session request name only", in: `{"agent":{"name":"a"}}`, into: func() any { return new(aap.PostSessionsRequest) }},
		{name: "session response", in: `{"sessionId":"sess_abc123"}`, into: func() any { return new(aap.PostSessionsResponse) }},
		{name: "capture turn response tool_use", in: wireTurnRespTool, into: func() any { return new(aap.PostSessionTurnResponse) }},
		{name: "capture turn response end_turn", in: wireTurnRespText, into: func() any { return new(aap.PostSessionTurnResponse) }},
		{
			name: "docs turn response with inline tool",
			in:   `{"stopReason":"end_turn","messages":[{"role":"assistant","content":[{"type":"tool_use","toolCallId":"call_002","name":"web_search","input":{"query":"Tokyo weather today"}}]},{"role":"tool","toolCallId":"call_002","content":"Tokyo: 18°C, partly cloudy"},{"role":"assistant","content":"The weather in Tokyo is 18°C, partly cloudy."}]}`,
			into: func() any { return new(aap.PostSessionTurnResponse) },
		},
		{name: "capture session", in: wireSession, into: func() any { return new(aap.SessionInfo) }},
		{
			name: "sessions page",
			in:   `{"sessions":[` + wireSession + `,{"sessionId":"s2","agent":{"name":"a"}}],"next":"dXNlcjoxMjM0NTY3ODk"}`,
			into: func() any { return new(aap.GetSessionsResponse) },
		},
		{name: "last sessions page", in: `{"sessions":[]}`, into: func() any { return new(aap.GetSessionsResponse) }},
		{
			name: "capture history full",
			in:   `{"history":{"full":[` + strings.Join([]string{wireSystem, wireUser, wireAssistantText, wireAssistantBoth, wireAssistantTool, wireTool, wireToolQuoted, wireToolDenied}, ",") + `]}}`,
			into: func() any { return new(aap.GetSessionHistoryResponse) },
		},
		{name: "history compacted", in: `{"history":{"compacted":[` + wireSystem + `]}}`, into: func() any { return new(aap.GetSessionHistoryResponse) }},
		{name: "history empty", in: `{"history":{"full":[]}}`, into: func() any { return new(aap.GetSessionHistoryResponse) }},
		{
			name: "docs meta",
			in: `{"version":3,"agents":[{"name":"research-agent","title":"Research Agent","version":"1.2.0","description":"A research agent that can search the web and summarize information.",` +
				`"tools":[{"name":"web_search","title":"Web Search","description":"Search the web for information","parameters":{"type":"object","properties":{"query":{"type":"string","description":"Search query"}},"required":["query"]}}],` +
				`"options":[{"type":"select","name":"model","title":"Model","description":"The LLM model to use for this agent.","options":["claude-sonnet-4-5","claude-opus-4-5"],"default":"claude-sonnet-4-5"},` +
				`{"type":"text","name":"language","title":"Response Language","description":"The language the agent should respond in.","default":"English"},` +
				`{"type":"secret","name":"apiKey","default":""}],` +
				`"capabilities":{"history":{"compacted":{},"full":{}},"stream":{"delta":{},"message":{},"none":{}},"application":{"tools":{}},"image":{"http":{},"data":{}}}}]}`,
			into: func() any { return new(aap.GetMetaResponse) },
		},
		{name: "meta minimal agent", in: `{"version":3,"agents":[{"name":"a","version":"0.1.0"}]}`, into: func() any { return new(aap.GetMetaResponse) }},
		{name: "error body", in: `{"error":{"code":"session_not_found","message":"no such session"}}`, into: func() any { return new(aap.ErrorResponse) }},
		{name: "content string", in: `"hello"`, into: func() any { return new(aap.Content) }},
		{name: "content blocks", in: `[{"type":"text","text":"hello"}]`, into: func() any { return new(aap.Content) }},
		{name: "tool spec with title", in: `{"name":"t","title":"T","description":"","parameters":{"type":"object"}}`, into: func() any { return new(aap.ToolSpec) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := tt.into()
			require.NoError(t, json.Unmarshal([]byte(tt.in), v))
			want := tt.want
			if want == "" {
				want = compact(t, tt.in)
			}
			got, err := json.Marshal(v)
			require.NoError(t, err)
			assert.Equal(t, want, string(got))
		})
	}
}

func TestDecodeContentBlock(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want aap.ContentBlock
	}{
		{name: "text", in: `{"type":"text","text":"hi"}`, want: &aap.TextBlock{Text: "hi"}},
		{name: "empty text", in: `{"type":"text","text":""}`, want: &aap.TextBlock{}},
		{name: "thinking", in: `{"type":"thinking","thinking":"hmm"}`, want: &aap.ThinkingBlock{Thinking: "hmm"}},
		{name: "tool_use", in: `{"type":"tool_use","toolCallId":"c","name":"n","input":{"a":1}}`, want: &aap.ToolUseBlock{ToolCallID: "c", Name: "n", Input: json.RawMessage(`{"a":1}`)}},
		{name: "image https", in: `{"type":"image","url":"https://x/y.png"}`, want: &aap.ImageBlock{URL: "https://x/y.png"}},
		{name: "image data", in: `{"type":"image","url":"data:image/png;base64,AAAA"}`, want: &aap.ImageBlock{URL: "data:image/png;base64,AAAA"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := aap.DecodeContentBlock([]byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.want, b)
			got, err := json.Marshal(b)
			require.NoError(t, err)
			assert.Equal(t, tt.in, string(got))
		})
	}
}

func TestDecodeHistoryCapture(t *testing.T) {
	// The full history of delta-08-session-and-history.txt, one message per line.
	lines := []string{
		wireSystem, wireUser, wireAssistantText,
		`{"role":"user","content":"please think"}`, wireAssistantBoth,
		`{"role":"user","content":"what is the weather in Tokyo"}`, wireAssistantTool, wireTool,
		`{"role":"assistant","content":[{"type":"text","text":"The weather tool says: Tokyo: 18°C, partly cloudy"}]}`,
		`{"role":"user","content":"search for aap"}`,
		`{"role":"assistant","content":[{"type":"tool_use","toolCallId":"call_002","name":"web_search","input":{"query":"aap"}}]}`,
		wireToolQuoted,
		`{"role":"assistant","content":[{"type":"text","text":"Search result: \"Top result for aap: AAP is the Agent Application Protocol (agentapplicationprotocol.com)\""}]}`,
		`{"role":"user","content":"search for cats"}`,
		`{"role":"assistant","content":[{"type":"tool_use","toolCallId":"call_003","name":"web_search","input":{"query":"cats"}}]}`,
		wireToolDenied,
		`{"role":"assistant","content":[{"type":"text","text":"I could not search the web (permission denied): Tool use denied: User declined"}]}`,
		`{"role":"user","content":"please fail"}`,
	}
	in := "[" + strings.Join(lines, ",\n") + "]"
	msgs, err := aap.DecodeHistory([]byte(in))
	require.NoError(t, err)
	require.Len(t, msgs, len(lines))
	roles := make([]aap.Role, len(msgs))
	for i, m := range msgs {
		roles[i] = m.Role()
	}
	assert.Equal(t, []aap.Role{"system", "user", "assistant", "user", "assistant", "user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant", "user"}, roles)
	got, err := json.Marshal(msgs)
	require.NoError(t, err)
	assert.Equal(t, compact(t, in), string(got))
}

func TestDecodeErrors(t *testing.T) {
	message := func(b []byte) error { _, err := aap.DecodeMessage(b); return err }
	history := func(b []byte) error { _, err := aap.DecodeHistory(b); return err }
	block := func(b []byte) error { _, err := aap.DecodeContentBlock(b); return err }
	into := func(newV func() any) func([]byte) error {
		return func(b []byte) error { return json.Unmarshal(b, newV()) }
	}
	turn := into(func() any { return new(aap.PostSessionTurnRequest) })
	session := into(func() any { return new(aap.PostSessionsRequest) })
	turnResp := into(func() any { return new(aap.PostSessionTurnResponse) })
	histResp := into(func() any { return new(aap.GetSessionHistoryResponse) })
	meta := into(func() any { return new(aap.GetMetaResponse) })
	sessionInfo := into(func() any { return new(aap.SessionInfo) })
	const user = `{"role":"user","content":"hi"}`

	tests := []struct {
		name   string
		decode func([]byte) error
		or     string // another message a toolchain gives for the same error
		in     string
		want   string
	}{
		// Messages.
		{name: "not an object", decode: message, in: `["user"]`, want: `aap: must be a JSON object`},
		{name: "null message", decode: message, in: `null`, want: `aap: must be a JSON object`},
		{name: "empty input", decode: message, in: ``, want: `aap: must be a JSON object`},
		{name: "truncated", decode: message, in: `{"role":"user","content":"x"`, want: `aap: malformed JSON at byte 28: unexpected end of JSON input`},
		{name: "missing role", decode: message, in: `{"content":"x"}`, want: `aap: role: required`},
		{name: "unknown role", decode: message, in: `{"role":"robot","content":"x"}`, want: `aap: role: unknown role "robot"`},
		{name: "role not a string", decode: message, in: `{"role":5,"content":"x"}`, want: `aap: role: expected a string, got number`},
		{name: "missing content", decode: message, in: `{"role":"user"}`, want: `aap: content: required`},
		{name: "content a number", decode: message, in: `{"role":"assistant","content":5}`, want: `aap: content: must be a string or an array of content blocks`},
		{name: "content null", decode: message, in: `{"role":"user","content":null}`, want: `aap: content: must be a string or an array of content blocks`},
		{name: "content an object", decode: message, in: `{"role":"user","content":{"type":"text","text":"x"}}`, want: `aap: content: must be a string or an array of content blocks`},
		{name: "system content as array", decode: message, in: `{"role":"system","content":[{"type":"text","text":"x"}]}`, want: `aap: content: must be a string for a system message`},
		{name: "system missing content", decode: message, in: `{"role":"system"}`, want: `aap: content: required`},
		{name: "tool missing toolCallId", decode: message, in: `{"role":"tool","content":"x"}`, want: `aap: toolCallId: required for a tool message`},
		{name: "tool empty toolCallId", decode: message, in: `{"role":"tool","toolCallId":"","content":"x"}`, want: `aap: toolCallId: required for a tool message`},
		{name: "tool toolCallId a number", decode: message, in: `{"role":"tool","toolCallId":5,"content":"x"}`, want: `aap: toolCallId: expected a string, got number`},
		{name: "tool missing content", decode: message, in: `{"role":"tool","toolCallId":"c"}`, want: `aap: content: required`},
		{name: "permission missing toolCallId", decode: message, in: `{"role":"tool_permission","granted":true}`, want: `aap: toolCallId: required for a tool_permission message`},
		{name: "permission missing granted", decode: message, in: `{"role":"tool_permission","toolCallId":"c"}`, want: `aap: granted: required for a tool_permission message`},
		{name: "permission granted a string", decode: message, in: `{"role":"tool_permission","toolCallId":"c","granted":"yes"}`, want: `aap: granted: expected a boolean, got string`},
		{name: "permission reason a number", decode: message, in: `{"role":"tool_permission","toolCallId":"c","granted":false,"reason":5}`, want: `aap: reason: expected a string, got number`},

		// Content blocks, through a message.
		{name: "unknown block type", decode: message, in: `{"role":"user","content":[{"type":"text","text":"a"},{"type":"video","url":"https://x"}]}`, want: `aap: content[1].type: unknown content block type "video"`},
		{name: "block missing type", decode: message, in: `{"role":"user","content":[{"text":"x"}]}`, want: `aap: content[0].type: required`},
		{name: "block type a number", decode: message, in: `{"role":"user","content":[{"type":1}]}`, want: `aap: content[0].type: expected a string, got number`},
		{name: "block not an object", decode: message, in: `{"role":"assistant","content":["x"]}`, want: `aap: content[0]: must be a JSON object`},
		{name: "text block missing text", decode: message, in: `{"role":"user","content":[{"type":"text"}]}`, want: `aap: content[0].text: required for a text block`},
		{name: "text block text a number", decode: message, in: `{"role":"user","content":[{"type":"text","text":1}]}`, want: `aap: content[0].text: expected a string, got number`},
		{name: "thinking block missing thinking", decode: message, in: `{"role":"assistant","content":[{"type":"thinking"}]}`, want: `aap: content[0].thinking: required for a thinking block`},
		{name: "image url http", decode: message, in: `{"role":"user","content":[{"type":"image","url":"http://example.com/a.png"}]}`, want: `aap: content[0].url: must be an https:// URL or a data: URI`},
		{name: "image url relative", decode: message, in: `{"role":"tool","toolCallId":"c","content":[{"type":"image","url":"/a.png"}]}`, want: `aap: content[0].url: must be an https:// URL or a data: URI`},
		{name: "image missing url", decode: message, in: `{"role":"user","content":[{"type":"image"}]}`, want: `aap: content[0].url: required for an image block`},
		{name: "tool_use input an array", decode: message, in: `{"role":"assistant","content":[{"type":"tool_use","toolCallId":"c","name":"n","input":[1]}]}`, want: `aap: content[0].input: must be a JSON object`},
		{name: "tool_use input a string", decode: message, in: `{"role":"assistant","content":[{"type":"tool_use","toolCallId":"c","name":"n","input":"{}"}]}`, want: `aap: content[0].input: must be a JSON object`},
		{name: "tool_use input null", decode: message, in: `{"role":"assistant","content":[{"type":"tool_use","toolCallId":"c","name":"n","input":null}]}`, want: `aap: content[0].input: must be a JSON object`},
		{name: "tool_use missing input", decode: message, in: `{"role":"assistant","content":[{"type":"tool_use","toolCallId":"c","name":"n"}]}`, want: `aap: content[0].input: required`},
		{name: "tool_use missing toolCallId", decode: message, in: `{"role":"assistant","content":[{"type":"tool_use","name":"n","input":{}}]}`, want: `aap: content[0].toolCallId: required for a tool_use block`},
		{name: "tool_use missing name", decode: message, in: `{"role":"assistant","content":[{"type":"tool_use","toolCallId":"c","input":{}}]}`, want: `aap: content[0].name: required for a tool_use block`},
		{name: "block alone unknown type", decode: block, in: `{"type":"audio"}`, want: `aap: type: unknown content block type "audio"`},

		// History.
		{name: "history not an array", decode: history, in: `{"role":"user","content":"x"}`, want: `aap: must be an array of messages`},
		{name: "history tool_permission", decode: history, in: `[` + user + `,{"role":"tool_permission","toolCallId":"c","granted":true}]`, want: `aap: [1].role: tool_permission messages are only allowed in a turn, never in history`},
		{name: "history nested block error", decode: history, in: `[` + wireSystem + `,{"role":"user","content":[{"type":"x"}]}]`, want: `aap: [1].content[0].type: unknown content block type "x"`},

		// Turn requests.
		{name: "turn not an object", decode: turn, in: `[]`, want: `aap: must be a JSON object`},
		{name: "turn missing messages", decode: turn, in: `{"stream":"delta"}`, want: `aap: messages: required`},
		{name: "turn null messages", decode: turn, in: `{"messages":null}`, want: `aap: messages: required`},
		{name: "turn no messages", decode: turn, in: `{"messages":[]}`, want: `aap: messages: must hold one user message, or tool results and tool permissions`},
		{name: "turn messages not an array", decode: turn, in: `{"messages":"hi"}`, want: `aap: messages: expected an array, got string`},
		{name: "turn unknown stream mode", decode: turn, in: `{"stream":"sse","messages":[` + user + `]}`, want: `aap: stream: unknown stream mode "sse" (want delta, message or none)`},
		{name: "turn stream a boolean", decode: turn, in: `{"stream":true,"messages":[` + user + `]}`, want: `aap: stream: expected a string, got bool`},
		{name: "turn user then tool result", decode: turn, in: `{"messages":[` + user + `,{"role":"tool","toolCallId":"c","content":"x"}]}`, want: `aap: messages: a user message must be the only message of its turn (got 2 messages)`},
		{name: "turn tool result then user", decode: turn, in: `{"messages":[{"role":"tool","toolCallId":"c","content":"x"},` + user + `]}`, want: `aap: messages[1].role: "user" is not allowed here: a turn holds one user message, or tool results and tool permissions`},
		{name: "turn two user messages", decode: turn, in: `{"messages":[` + user + `,` + user + `]}`, want: `aap: messages: a user message must be the only message of its turn (got 2 messages)`},
		{name: "turn assistant message", decode: turn, in: `{"messages":[{"role":"assistant","content":"x"}]}`, want: `aap: messages[0].role: "assistant" is not allowed here: a turn holds one user message, or tool results and tool permissions`},
		{name: "turn system message", decode: turn, in: `{"messages":[{"role":"system","content":"x"}]}`, want: `aap: messages[0].role: "system" is not allowed here: a turn holds one user message, or tool results and tool permissions`},
		{name: "turn duplicated toolCallId", decode: turn, in: `{"messages":[{"role":"tool","toolCallId":"a","content":"x"},{"role":"tool","toolCallId":"b","content":"y"},{"role":"tool_permission","toolCallId":"a","granted":true}]}`, want: `aap: messages[2].toolCallId: "a" is answered more than once in this turn`},
		{name: "turn nested message error", decode: turn, in: `{"messages":[{"role":"tool","toolCallId":"a","content":"x"},{"role":"tool","toolCallId":"b","content":[{"type":"image","url":"ftp://x"}]}]}`, want: `aap: messages[1].content[0].url: must be an https:// URL or a data: URI`},
		{name: "turn unknown role", decode: turn, in: `{"messages":[{"role":"developer","content":"x"}]}`, want: `aap: messages[0].role: unknown role "developer"`},
		{name: "turn agent not an object", decode: turn, in: `{"agent":"a","messages":[` + user + `]}`, want: `aap: agent: must be a JSON object`},
		{name: "turn agent tool without name", decode: turn, in: `{"agent":{"tools":[{"name":"a"},{"trust":true}]},"messages":[` + user + `]}`, want: `aap: agent.tools[1].name: required`},
		{name: "turn agent tools not an array", decode: turn, in: `{"agent":{"tools":"x"},"messages":[` + user + `]}`, want: `aap: agent.tools: expected an array, got string`},
		{name: "turn agent tool trust a string", decode: turn, in: `{"agent":{"tools":[{"name":"a","trust":"yes"}]},"messages":[` + user + `]}`, want: `aap: agent.tools[0].trust: expected a boolean, got string`},
		{name: "turn tool spec parameters not an object", decode: turn, in: `{"messages":[` + user + `],"tools":[{"name":"a","description":"d","parameters":{}},{"name":"b","description":"d","parameters":[]}]}`, want: `aap: tools[1].parameters: must be a JSON Schema object`},
		{name: "turn tool spec missing name", decode: turn, in: `{"messages":[` + user + `],"tools":[{"description":"d","parameters":{}}]}`, want: `aap: tools[0].name: required`},

		// Session requests.
		{name: "session missing agent", decode: session, in: `{}`, want: `aap: agent: required`},
		{name: "session agent null", decode: session, in: `{"agent":null}`, want: `aap: agent: must be a JSON object`},
		{name: "session missing agent name", decode: session, in: `{"agent":{"options":{"a":"b"}}}`, want: `aap: agent.name: required`},
		// Go 1.27's encoding/json names the option (agent.options.a), 1.26's the map.
		{name: "session option not a string", decode: session, in: `{"agent":{"name":"a","options":{"a":1}}}`, want: `aap: agent.options.a: expected a string, got number`, or: `aap: agent.options: expected a string, got number`},
		{name: "session seed tool_permission", decode: session, in: `{"agent":{"name":"a"},"messages":[` + wireSystem + `,{"role":"tool_permission","toolCallId":"c","granted":true}]}`, want: `aap: messages[1].role: tool_permission messages are only allowed in a turn, never in history`},
		{name: "session seed messages an object", decode: session, in: `{"agent":{"name":"a"},"messages":{}}`, want: `aap: messages: expected an array, got object`},
		{name: "session seed system as array", decode: session, in: `{"agent":{"name":"a"},"messages":[{"role":"system","content":["x"]}]}`, want: `aap: messages[0].content: must be a string for a system message`},
		{name: "session tool spec missing parameters", decode: session, in: `{"agent":{"name":"a"},"tools":[{"name":"x","description":"d"}]}`, want: `aap: tools[0].parameters: required`},

		// Turn responses.
		{name: "response missing stopReason", decode: turnResp, in: `{"messages":[]}`, want: `aap: stopReason: required`},
		{name: "response unknown stop reason", decode: turnResp, in: `{"stopReason":"done","messages":[]}`, want: `aap: stopReason: unknown stop reason "done"`},
		{name: "response stop reason a number", decode: turnResp, in: `{"stopReason":1,"messages":[]}`, want: `aap: stopReason: expected a string, got number`},
		{name: "response tool_permission", decode: turnResp, in: `{"stopReason":"end_turn","messages":[{"role":"tool_permission","toolCallId":"c","granted":true}]}`, want: `aap: messages[0].role: tool_permission messages are only allowed in a turn, never in history`},

		// History responses.
		{name: "history response tool_permission", decode: histResp, in: `{"history":{"full":[` + user + `,{"role":"tool_permission","toolCallId":"c","granted":true}]}}`, want: `aap: history.full[1].role: tool_permission messages are only allowed in a turn, never in history`},
		{name: "history response compacted an object", decode: histResp, in: `{"history":{"compacted":{}}}`, want: `aap: history.compacted: must be an array of messages`},
		{name: "history response history a number", decode: histResp, in: `{"history":5}`, want: `aap: history: must be a JSON object`},

		// Meta and sessions.
		{name: "meta select option without options", decode: meta, in: `{"version":3,"agents":[{"name":"a","version":"1","options":[{"type":"text","name":"x","default":""},{"type":"select","name":"m","default":""}]}]}`, want: `aap: agents[0].options[1].options: required for a select option`},
		{name: "meta unknown option type", decode: meta, in: `{"version":3,"agents":[{"name":"a","version":"1","options":[{"type":"color","name":"x","default":""}]}]}`, want: `aap: agents[0].options[0].type: unknown option type "color"`},
		{name: "meta tool without description", decode: meta, in: `{"version":3,"agents":[{"name":"a","version":"1"},{"name":"b","version":"1","tools":[{"name":"x","parameters":{}}]}]}`, want: `aap: agents[1].tools[0].description: required`},
		{name: "meta version a string", decode: meta, in: `{"version":"3","agents":[]}`, want: `aap: version: expected a number, got string`},
		{name: "session info tool without parameters", decode: sessionInfo, in: `{"sessionId":"s","agent":{"name":"a"},"tools":[{"name":"x","description":"d"}]}`, want: `aap: tools[0].parameters: required`},
		{name: "session info agent tool without name", decode: sessionInfo, in: `{"sessionId":"s","agent":{"name":"a","tools":[{}]}}`, want: `aap: agent.tools[0].name: required`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.decode([]byte(tt.in))
			require.Error(t, err)
			if tt.or == "" || err.Error() != tt.or {
				require.EqualError(t, err, tt.want)
			}
			var de *aap.DecodeError
			require.True(t, errors.As(err, &de), "want a *aap.DecodeError, got %T", err)
			if de.Field != "" {
				assert.True(t, strings.HasPrefix(err.Error(), "aap: "+de.Field+": "), "Field %q does not lead the message", de.Field)
			}
		})
	}
}

func TestDecodeErrorUnwrapsJSONError(t *testing.T) {
	_, err := aap.DecodeMessage([]byte(`{"role":"user","content":[{"type":"text","text":1}]}`))
	var te *json.UnmarshalTypeError
	require.True(t, errors.As(err, &te), "got %v", err)

	_, err = aap.DecodeMessage([]byte(`{"role":"user",}`))
	var se *json.SyntaxError
	require.True(t, errors.As(err, &se), "got %v", err)
}

func TestCheckTurnMessages(t *testing.T) {
	user := aap.UserText("hi")
	result := func(id string) aap.Message { return &aap.ToolMessage{ToolCallID: id, Content: aap.TextContent("ok")} }
	permit := func(id string) aap.Message { return &aap.ToolPermissionMessage{ToolCallID: id, Granted: true} }
	tests := []struct {
		name string
		msgs []aap.Message
		want string // empty: valid
	}{
		{name: "one user message", msgs: []aap.Message{user}},
		{name: "one tool result", msgs: []aap.Message{result("a")}},
		{name: "one permission", msgs: []aap.Message{permit("a")}},
		{name: "results and permissions mixed", msgs: []aap.Message{result("a"), permit("b"), result("c")}},
		{name: "nil", want: `aap: messages: must hold one user message, or tool results and tool permissions`},
		{name: "empty", msgs: []aap.Message{}, want: `aap: messages: must hold one user message, or tool results and tool permissions`},
		{name: "user with tool result", msgs: []aap.Message{user, result("a")}, want: `aap: messages: a user message must be the only message of its turn (got 2 messages)`},
		{name: "tool result with user", msgs: []aap.Message{result("a"), user}, want: `aap: messages[1].role: "user" is not allowed here: a turn holds one user message, or tool results and tool permissions`},
		{name: "assistant", msgs: []aap.Message{&aap.AssistantMessage{Content: aap.TextContent("x")}}, want: `aap: messages[0].role: "assistant" is not allowed here: a turn holds one user message, or tool results and tool permissions`},
		{name: "system after result", msgs: []aap.Message{result("a"), &aap.SystemMessage{Content: "x"}}, want: `aap: messages[1].role: "system" is not allowed here: a turn holds one user message, or tool results and tool permissions`},
		{name: "result answered twice", msgs: []aap.Message{result("a"), result("a")}, want: `aap: messages[1].toolCallId: "a" is answered more than once in this turn`},
		{name: "permission and result for one call", msgs: []aap.Message{permit("a"), result("b"), result("a")}, want: `aap: messages[2].toolCallId: "a" is answered more than once in this turn`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := aap.CheckTurnMessages(tt.msgs)
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, tt.want)
		})
	}
}

func TestContentPlainText(t *testing.T) {
	tests := []struct {
		name string
		c    aap.Content
		want string
	}{
		{name: "string", c: aap.TextContent("hi"), want: "hi"},
		{name: "no blocks", c: aap.BlockContent(), want: ""},
		{name: "one text block", c: aap.BlockContent(&aap.TextBlock{Text: "a"}), want: "a"},
		{
			name: "text blocks joined, others skipped",
			c:    aap.BlockContent(&aap.ThinkingBlock{Thinking: "t"}, &aap.TextBlock{Text: "a"}, &aap.ImageBlock{URL: "https://x"}, &aap.TextBlock{Text: "b"}),
			want: "ab",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.c.PlainText())
		})
	}
	assert.True(t, aap.BlockContent().IsBlocks(), "an empty block list is still a list")
	assert.False(t, aap.TextContent("").IsBlocks())
}

func TestEncodeBuiltMessages(t *testing.T) {
	tests := []struct {
		name string
		m    aap.Message
		want string
	}{
		{name: "UserText", m: aap.UserText("hello"), want: `{"role":"user","content":"hello"}`},
		{name: "zero user is empty string", m: &aap.UserMessage{}, want: `{"role":"user","content":""}`},
		{name: "empty BlockContent", m: &aap.AssistantMessage{Content: aap.BlockContent()}, want: `{"role":"assistant","content":[]}`},
		{name: "tool_use without input writes {}", m: &aap.AssistantMessage{Content: aap.BlockContent(&aap.ToolUseBlock{ToolCallID: "c", Name: "n"})}, want: `{"role":"assistant","content":[{"type":"tool_use","toolCallId":"c","name":"n","input":{}}]}`},
		{name: "permission without reason", m: &aap.ToolPermissionMessage{ToolCallID: "c", Granted: true}, want: `{"role":"tool_permission","toolCallId":"c","granted":true}`},
		{name: "system", m: &aap.SystemMessage{Content: "be brief"}, want: `{"role":"system","content":"be brief"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.m)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
			back, err := aap.DecodeMessage(got)
			require.NoError(t, err)
			assert.Equal(t, tt.m.Role(), back.Role())
		})
	}
}

func TestCapabilities(t *testing.T) {
	var none *aap.Capabilities
	assert.True(t, none.SupportsStream(aap.StreamNone), "no capabilities: none only")
	assert.False(t, none.SupportsStream(aap.StreamDelta))
	assert.False(t, none.SupportsHistory(aap.HistoryFull))

	var meta aap.GetMetaResponse
	require.NoError(t, json.Unmarshal([]byte(`{"version":3,"agents":[{"name":"a","version":"1","capabilities":{"stream":{"delta":{}},"history":{"full":{}}}}]}`), &meta))
	a, ok := meta.Agent("a")
	require.True(t, ok)
	assert.True(t, a.Capabilities.SupportsStream(aap.StreamDelta))
	assert.False(t, a.Capabilities.SupportsStream(aap.StreamMessage))
	assert.False(t, a.Capabilities.SupportsStream(aap.StreamNone), "stream declared without none")
	assert.True(t, a.Capabilities.SupportsHistory(aap.HistoryFull))
	assert.False(t, a.Capabilities.SupportsHistory(aap.HistoryCompacted))
	_, ok = meta.Agent("b")
	assert.False(t, ok)
}
