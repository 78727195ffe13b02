package sse_test

import (
	"fmt"
	"strings"

	"github.com/aapagui/aapagui/internal/sse"
)

func ExampleRead() {
	upstream := strings.NewReader("event: turn_start\ndata: {}\n\n" +
		": keep-alive\n\n" +
		"event: text_delta\r\ndata: {\"delta\":\"Hi\"}\r\n\r\n" +
		"event: turn_stop\ndata: {\"stopReason\":") // cut off

	for ev, err := range sse.Read(upstream, sse.ReadOptions{}) {
		if err != nil {
			fmt.Println("error:", err)
			break
		}
		fmt.Printf("%s %s\n", ev.Name, ev.Data)
	}
	// Output:
	// turn_start {}
	// text_delta {"delta":"Hi"}
	// error: sse: stream ended in the middle of an event
}

func ExampleAppendEvent() {
	var buf []byte
	buf = sse.AppendEvent(buf, "", []byte(`{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}`))
	buf = sse.AppendEvent(buf, "text_delta", []byte("two\nlines"))
	fmt.Print(string(buf))
	// Output:
	// data: {"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
	//
	// event: text_delta
	// data: two
	// data: lines
	//
}
