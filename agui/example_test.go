package agui_test

import (
	"encoding/json"
	"fmt"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

	"github.com/aapagui/aapagui/agui"
)

// The events of one AG-UI run as an agent streams them: each event's JSON
// decoded (an event type the package does not know is kept, not refused),
// the run checked the way @ag-ui/client checks it, and an event written
// back as JSON.
func Example() {
	stream := []string{
		`{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}`,
		`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hello"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":", world"}`,
		`{"type":"TEXT_MESSAGE_END","messageId":"m1"}`,
		`{"type":"VENDOR_PROGRESS","percent":50}`,
		`{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}`,
	}
	var dec agui.Decoder
	var v agui.Verifier
	var last events.Event
	for _, data := range stream {
		ev, err := dec.Decode([]byte(data))
		if err != nil {
			fmt.Println(err)
			return
		}
		if err := v.Check(ev); err != nil {
			fmt.Println(err)
			return
		}
		switch ev := ev.(type) {
		case *events.TextMessageContentEvent:
			fmt.Printf("%s %q\n", ev.Type(), ev.Delta)
		case *agui.UnknownEvent:
			fmt.Printf("%s (unknown, kept as %s)\n", ev.Type(), ev.Raw)
		default:
			fmt.Println(ev.Type())
		}
		last = ev
	}
	fmt.Println("finished:", v.Finish() == nil)
	out, err := agui.AppendEvent(nil, last)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(out))
	// Output:
	// RUN_STARTED
	// TEXT_MESSAGE_START
	// TEXT_MESSAGE_CONTENT "Hello"
	// TEXT_MESSAGE_CONTENT ", world"
	// TEXT_MESSAGE_END
	// VENDOR_PROGRESS (unknown, kept as {"type":"VENDOR_PROGRESS","percent":50})
	// RUN_FINISHED
	// finished: true
	// {"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}
}

// An *EventDecodeError names the event type and the field that could not be
// read.
func ExampleDecodeEvent_error() {
	_, err := agui.DecodeEvent([]byte(`{"type":"TOOL_CALL_ARGS","toolCallId":7,"delta":"{}"}`))
	fmt.Println(err)
	// Output:
	// agui: AG-UI TOOL_CALL_ARGS event: toolCallId: expected a string, got number
}

// A request whose history is long: DecodeRunAgentInputLazy leaves every
// message's content as raw JSON, and the caller decodes only the content
// it reads, here the last message's.
func ExampleDecodeRunAgentInputLazy() {
	body := []byte(`{"threadId":"t1","runId":"r2","messages":[` +
		`{"id":"u1","role":"user","content":"What is the weather in Paris?"},` +
		`{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},` +
		`{"id":"t1","role":"tool","toolCallId":"c1","content":"Sunny, 21°C"}]}`)
	in, err := agui.DecodeRunAgentInputLazy(body)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range in.Messages {
		_, raw := m.Content.(json.RawMessage)
		fmt.Printf("%s %s raw=%v\n", m.ID, m.Role, raw)
	}
	last := in.Messages[len(in.Messages)-1]
	content, err := agui.DecodeContent(last.Content)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s answers %s: %v\n", last.ID, last.ToolCallID, content)
	// Output:
	// u1 user raw=true
	// a1 assistant raw=false
	// t1 tool raw=true
	// t1 answers c1: Sunny, 21°C
}

// AppendFrame writes an event as one SSE frame, ready for a stream.
func ExampleAppendFrame() {
	ev := events.NewTextMessageContentEvent("m1", "Hi")
	ev.BaseEvent.TimestampMs = nil // a fixed output
	buf, err := agui.AppendFrame(nil, ev)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%q\n", buf)
	// Output: "data: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m1\",\"delta\":\"Hi\"}\n\n"
}
