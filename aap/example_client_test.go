package aap_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/aapagui/aapagui/aap"
)

// An agent that answers with a client-side tool call. The client reads the
// server's protocol version from GET /meta before its first turn.
func ExampleClient_StreamTurn() {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /meta", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"version":3,"agents":[{"name":"weather","version":"1.0.0"}]}`)
	})
	mux.HandleFunc("POST /sessions/{id}/turns", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: turn_start\ndata: {}\n\n"+
			"event: tool_call\ndata: {\"toolCallId\":\"call_001\",\"name\":\"get_weather\",\"input\":{\"location\":\"Tokyo\"}}\n\n"+
			"event: turn_stop\ndata: {\"stopReason\":\"tool_use\"}\n\n")
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	c := aap.NewClient(srv.URL, aap.ClientOptions{APIKey: "my-key"})
	req := &aap.PostSessionTurnRequest{
		Stream:   aap.StreamDelta,
		Messages: []aap.Message{aap.UserText("what is the weather in Tokyo")},
	}
	for ev, err := range c.StreamTurn(context.Background(), "sess_1", req) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch ev := ev.(type) {
		case *aap.TextDelta:
			fmt.Printf("text %q\n", ev.Delta)
		case *aap.ToolCall:
			fmt.Printf("call %s %s %s\n", ev.ToolCallID, ev.Name, ev.Input)
		case *aap.TurnStop:
			fmt.Println("stop:", ev.StopReason)
		default:
			fmt.Println(ev.EventName())
		}
	}
	// Output:
	// turn_start
	// call call_001 get_weather {"location":"Tokyo"}
	// stop: tool_use
}
