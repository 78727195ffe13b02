package agui2aap_test

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/store"
)

// An AG-UI endpoint in front of an AAP agent (here the built-in demo
// agent): an AG-UI client posts a RunAgentInput to /agents/<name> and
// reads the run's events, a stream @ag-ui/client accepts.
func Example() {
	agent := httptest.NewServer(demo.NewAAPAgent(demo.AAPAgentOptions{}))
	defer agent.Close()

	srv, err := agui2aap.New(agui2aap.Config{Upstream: agent.URL, Store: store.NewMemory()})
	if err != nil {
		fmt.Println(err)
		return
	}
	api := httptest.NewServer(srv)
	defer api.Close()

	body := `{"threadId":"thread-1","runId":"run-1","messages":[{"id":"m-1","role":"user","content":"Hello, agent!"}]}`
	resp, err := http.Post(api.URL+"/agents/demo", "application/json", strings.NewReader(body))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	fmt.Println(resp.Status, resp.Header.Get("Content-Type"))

	// The bridge writes each event as one "data: " line; a browser client
	// reads the stream with an SSE parser.
	var run []events.Event
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		data, ok := strings.CutPrefix(lines.Text(), "data: ")
		if !ok {
			continue
		}
		ev, err := agui.DecodeEvent([]byte(data))
		if err != nil {
			fmt.Println(err)
			return
		}
		run = append(run, ev)
		if ev, ok := ev.(*events.TextMessageContentEvent); ok {
			fmt.Printf("%s %q\n", ev.Type(), ev.Delta)
			continue
		}
		fmt.Println(ev.Type())
	}
	fmt.Println("verified:", agui.Verify(run) == nil)
	// Output:
	// 200 OK text/event-stream
	// RUN_STARTED
	// TEXT_MESSAGE_START
	// TEXT_MESSAGE_CONTENT "You "
	// TEXT_MESSAGE_CONTENT "said: "
	// TEXT_MESSAGE_CONTENT "Hello, "
	// TEXT_MESSAGE_CONTENT "agent!"
	// TEXT_MESSAGE_END
	// RUN_FINISHED
	// verified: true
}
