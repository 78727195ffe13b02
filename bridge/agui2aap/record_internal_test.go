package agui2aap

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// A record's message is json.Marshal's bytes, whatever it holds: every
// field of types.Message set or not, strings that need escapes, HTML
// characters, invalid UTF-8, content that is not text, tool calls.
func TestRecordJSONIsMarshal(t *testing.T) {
	// Every string field set: a field types.Message gains fails here
	// until recordJSON writes it.
	all := types.Message{Content: "c"}
	v := reflect.ValueOf(&all).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.String {
			f.SetString("v-" + v.Type().Field(i).Name)
		}
	}
	if n := v.NumField(); n != 10 {
		t.Errorf("types.Message has %d fields, recordJSON knows 10", n)
	}
	msgs := []types.Message{
		all,
		{ID: "m1", Role: types.RoleAssistant, Content: "hello"},
		{ID: "m2", Role: types.RoleAssistant, Content: ""},
		{ID: "m3", Role: types.RoleAssistant},
		{ID: "", Role: ""},
		{ID: "m4", Role: types.RoleTool, ToolCallID: "call_1", Content: "found it"},
		{ID: "m5", Role: types.RoleAssistant, ToolCalls: []types.ToolCall{{ID: "c", Type: types.ToolCallTypeFunction, Function: types.FunctionCall{Name: "f", Arguments: "{}"}}}},
		{ID: "m6", Role: types.RoleUser, Content: []types.InputContent{{Type: "text", Text: "hi"}}},
		{ID: "m7", Role: types.RoleAssistant, Content: 42},
	}
	for _, s := range []string{`a "quote"`, `back\slash`, "new\nline", "tab\t", "<b>", "a > b", "fish & chips",
		"\x00", "\x1f", "\x7f", "é ü 日本", "\u2028", "\u2029", "bad \xff utf-8", "\xe2\x80", "😀"} {
		msgs = append(msgs, types.Message{ID: "m", Role: types.RoleAssistant, Content: s},
			types.Message{ID: s, Role: types.RoleAssistant, Content: "text"},
			types.Message{ID: "m", Role: types.RoleTool, Content: "text", Error: s})
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		b := make([]byte, rng.IntN(20))
		for i := range b {
			b[i] = byte(rng.IntN(256))
			if rng.IntN(2) == 0 {
				b[i] = byte(0x20 + rng.IntN(0x60))
			}
		}
		msgs = append(msgs, types.Message{ID: "m", Role: types.RoleAssistant, Content: string(b)})
	}
	for _, m := range msgs {
		want, err := json.Marshal(&m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := recordJSON(&m)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("recordJSON(%#v)\n got %s\nwant %s", m, got, want)
		}
	}
}

// A long answer's record is made in one buffer of its size.
func TestRecordJSONOfALongAnswer(t *testing.T) {
	m := types.Message{ID: "m", Role: types.RoleAssistant, Content: strings.Repeat("a long answer ", 1<<18)}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	data, _ := recordJSON(&m)
	runtime.ReadMemStats(&m1)
	if n := m1.TotalAlloc - m0.TotalAlloc; n > uint64(len(data))+64<<10 {
		t.Errorf("the record of a message of %d bytes allocated %d", len(data), n)
	}
}

// The messages a run copies for its thread's record hold nothing of the
// request's body (a message's content is a piece of the body until it is
// decoded): once the run streams, the body goes, with every message and
// tool schema in it, and the record and the run's log still get what the
// client sent, in the order the thread delivered it.
func TestCopyForRecordHoldsNothingOfTheBody(t *testing.T) {
	body := []byte(`{"threadId":"t","runId":"r","state":{},"messages":[` +
		`{"id":"a","role":"user","content":"what the record lacks"},` +
		`{"id":"b","role":"assistant","content":"an answer the record has"},` +
		`{"id":"c","role":"user","content":"the run's question"}],"tools":[],"context":[],"forwardedProps":{}}`)
	in, err := agui.DecodeRunAgentInputLazy(body)
	if err != nil {
		t.Fatal(err)
	}
	log := zerolog.Nop()
	r := &runner{log: &log, runIntake: runIntake{in: in,
		th: &store.Thread{ID: "t", Delivered: []string{"b", "a"}, RecordLen: 1},
		p:  &translate.RunPlan{Delivered: []string{"c"}}}}
	r.copyForRecord()
	clear(body) // the body's buffer, let go of and used again
	r.in.Messages = nil
	r.th.Delivered = append(r.th.Delivered, "c", "d")
	produced := []types.Message{{ID: "d", Role: types.RoleAssistant, Content: "the run's answer"}}
	tail := r.recordTail(1, produced)
	want := []string{
		`{"id":"a","role":"user","content":"what the record lacks"}`,
		`{"id":"c","role":"user","content":"the run's question"}`,
		`{"id":"d","role":"assistant","content":"the run's answer"}`,
	}
	got := make([]string, len(tail.Messages))
	for i, m := range tail.Messages {
		got[i] = string(m)
	}
	if tail.From != 1 || !reflect.DeepEqual(got, want) {
		t.Errorf("record from %d: %q, want from 1: %q", tail.From, got, want)
	}
	data, ok := runInputJSON(1, r.recordable)
	var input runInput
	if !ok || json.Unmarshal(data, &input) != nil || input.From != 1 || len(input.Messages) != 2 ||
		input.Messages[0].Content != "what the record lacks" || input.Messages[1].ID != "c" {
		t.Errorf("the run's input for its log: %s (%v)", data, ok)
	}
}
