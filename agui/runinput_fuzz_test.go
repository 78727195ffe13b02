package agui_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/agui"
)

// runInputFuzzSeeds are RunAgentInput bodies as AG-UI clients send them,
// plus the corners where the two decoders are built differently: null and
// absent content, the snake_case keys that send a body to the SDK's
// decoder (also one written with an escape, which does not), names that
// differ only in case, and a name given twice.
var runInputFuzzSeeds = []string{
	`{"threadId":"t","runId":"r","messages":[{"id":"u1","role":"user","content":"hi"}]}`,
	`{"threadId":"t","runId":"r","parentRunId":"p","state":{"n":1},"messages":[{"id":"u1","role":"user","content":null},{"id":"u2","role":"user"}]}`,
	`{"messages":[{"id":"a","role":"assistant","content":"","toolCalls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"x\":1}"},"encryptedValue":"v"}]},{"id":"t","role":"tool","toolCallId":"c","content":"ok","error":"e"}]}`,
	`{"messages":[{"id":"r","role":"reasoning","content":"thinking","encryptedValue":"gAAAA=="},{"id":"s","role":"system","content":"be brief","name":"sys"}]}`,
	`{"messages":[{"id":"x","role":"activity","activityType":"PLAN","content":{"steps":[{"done":false}]}},{"id":"d","role":"developer","content":"d","encryptedContent":"e"}]}`,
	`{"messages":[{"id":"u","role":"user","content":[{"type":"text","text":"see"},{"type":"image","source":{"type":"url","value":"https://x/y.png"}},{"type":"binary","mimeType":"image/png","data":"AA=="}]}]}`,
	`{"messages":[{"id":"t","role":"tool","toolCallId":"c","content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"data","value":"AA==","mimeType":"image/png"}}]}]}`,
	`{"tools":[{"name":"get_weather","description":"d","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}],"context":[{"description":"page","value":"home"}],"forwardedProps":{"aap":{"agent":{"options":{"x":"y"}}},"n":[1,2.5e3,"s",true,null]}}`,
	`{"resume":[{"interruptId":"i","status":"resolved","payload":{"approved":true}},{"interruptId":"j","status":"cancelled"}],"parentRunId":null}`,
	`{"thread_id":"t","run_id":"r","messages":[{"id":"m","role":"tool","tool_call_id":"c","content":"x"}],"forwarded_props":{"a":1}}`,
	`{"resume":[{"interrupt_id":"i","status":"resolved"}]}`,
	`{"thread\u005fid":"t","messages":[{"id":"m","role":"tool","tool\u005fcall_id":"c"}]}`,
	`{"threadId":"t","THREADID":"u","messages":[{"ID":"m","role":"user","content":"x"}]}`,
	`{"messages":[{"id":"a","role":"user","content":"1"}],"messages":[{"id":"b"}]}`,
	`{"\u0074hreadId":"t","messages":[{"id":"m","role":"user","content":"caf\u00e9 \ud83d\ude00 \ud800"}]}`,
	"{\"threadId\":\"t\xff\",\"messages\":[{\"id\":\"m\",\"role\":\"user\",\"content\":\"\xed\xa0\x80\"}]}",
	`{"messages":[null,{}],"tools":null,"context":[],"state":null}`,
	`{"messages":"nope"}`,
	`{"messages":[{"id":5}]}`,
	`{"runId":"r"} {}`,
	`[]`,
	`null`,
	`{`,
}

// FuzzDecodeRunAgentInputLazy checks the decoder of every agui2aap request
// against the SDK's own (RunAgentInput.UnmarshalJSON), the full decoder
// whose reading it promises. On any input it does not panic; its raw
// contents are valid JSON, and decoding them (DecodeContent) gives what
// DecodeRunAgentInput gives. Where the two decoders read the same
// language, both accept the body or both refuse it, and what they read is
// equal. They do not where exactNames says so: encoding/json matches a
// name whatever its case where the SDK matches it exactly; for a name
// given twice (RFC 8259 leaves its meaning open) encoding/json decodes the
// second array into the first one's elements where the SDK keeps the
// second alone.
func FuzzDecodeRunAgentInputLazy(f *testing.F) {
	for _, s := range runInputFuzzSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(runInputBody(8)))
	for _, in := range goldenRunInputs(f) {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lazy, err := agui.DecodeRunAgentInputLazy(data)
		full, fullErr := agui.DecodeRunAgentInput(data)
		if (err == nil) != (fullErr == nil) {
			t.Fatalf("%q: DecodeRunAgentInputLazy: %v, DecodeRunAgentInput: %v", data, err, fullErr)
		}
		var sdk types.RunAgentInput
		sdkErr := json.Unmarshal(data, &sdk)
		if !exactNames(data) {
			return
		}
		if (err == nil) != (sdkErr == nil) {
			t.Fatalf("%q: DecodeRunAgentInputLazy: %v, the SDK: %v", data, err, sdkErr)
		}
		if err != nil {
			return
		}
		for i := range lazy.Messages {
			m := &lazy.Messages[i]
			if raw, ok := m.Content.(json.RawMessage); ok {
				if !json.Valid(raw) {
					t.Fatalf("%q: message %d: content %q is not JSON", data, i, raw)
				}
				if m.Content, err = agui.DecodeContent(raw); err != nil {
					t.Fatalf("%q: message %d: DecodeContent: %v", data, i, err)
				}
			}
		}
		if !reflect.DeepEqual(lazy, full) {
			t.Fatalf("%q:\nlazy, its contents decoded: %#v\nDecodeRunAgentInput:        %#v", data, lazy, full)
		}
		if !reflect.DeepEqual(*full, sdk) {
			t.Fatalf("%q:\nDecodeRunAgentInput: %#v\nthe SDK:             %#v", data, *full, sdk)
		}
	})
}

// runInputNames are the names DecodeRunAgentInputLazy reads with
// encoding/json (which matches them whatever their case) where the SDK
// reads them exactly as spelled.
var runInputNames = []string{
	"threadId", "runId", "parentRunId", "state", "messages", "tools", "context", "forwardedProps", "resume",
	"id", "role", "content", "name", "encryptedContent", "encryptedValue", "toolCalls", "toolCallId", "error", "activityType",
}

// exactNames reports whether every object of data (JSON, possibly
// invalid: then false) names each member once and names none with a
// spelling of one of runInputNames other than its own.
func exactNames(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	var open []map[string]bool // the names of each open object; nil for an array
	inObject := func() bool { return len(open) > 0 && open[len(open)-1] != nil }
	name := false // the next token is a member name
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return true
		}
		if err != nil {
			return false
		}
		if s, ok := tok.(string); ok && name {
			names := open[len(open)-1]
			if names[s] || foldsToName(s) {
				return false
			}
			names[s], name = true, false
			continue
		}
		switch tok {
		case json.Delim('{'):
			open, name = append(open, map[string]bool{}), true
		case json.Delim('['):
			open, name = append(open, nil), false
		case json.Delim('}'), json.Delim(']'):
			open = open[:len(open)-1]
			name = inObject()
		default:
			name = inObject()
		}
	}
}

// foldsToName reports whether s is one of runInputNames spelled otherwise.
func foldsToName(s string) bool {
	for _, n := range runInputNames {
		if s != n && strings.EqualFold(s, n) {
			return true
		}
	}
	return false
}
