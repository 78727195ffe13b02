package aap2agui_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/store"
)

// An AAP server in front of an AG-UI agent (here the built-in demo agent),
// used by an AAP application through the aap client: one session, one
// streamed turn, and the history the server kept.
func Example() {
	agent := httptest.NewServer(demo.AGUIAgent{})
	defer agent.Close()

	srv, err := aap2agui.New(aap2agui.Config{Upstream: agent.URL, Store: store.NewMemory()})
	if err != nil {
		fmt.Println(err)
		return
	}
	api := httptest.NewServer(srv)
	defer api.Close()

	ctx := context.Background()
	c := aap.NewClient(api.URL, aap.ClientOptions{})
	s, err := c.CreateSession(ctx, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "agent"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	turn := &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{aap.UserText("Hello, agent!")}}
	for ev, err := range c.StreamTurn(ctx, s.SessionID, turn) {
		if err != nil {
			fmt.Println(err)
			return
		}
		switch ev := ev.(type) {
		case *aap.TextDelta:
			fmt.Printf("delta %q\n", ev.Delta)
		case *aap.TurnStop:
			fmt.Println("stop", ev.StopReason)
		default:
			fmt.Println(ev.EventName())
		}
	}
	history, err := c.History(ctx, s.SessionID, aap.HistoryFull)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range history {
		switch m := m.(type) {
		case *aap.UserMessage:
			fmt.Println("user:", m.Content.PlainText())
		case *aap.AssistantMessage:
			fmt.Println("assistant:", m.Content.PlainText())
		}
	}
	// Output:
	// turn_start
	// delta "You "
	// delta "said: "
	// delta "Hello, "
	// delta "agent!"
	// stop end_turn
	// user: Hello, agent!
	// assistant: You said: Hello, agent!
}
