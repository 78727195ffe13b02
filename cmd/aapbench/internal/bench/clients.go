package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/internal/sse"
)

// proto is the protocol a client speaks.
type proto int

const (
	protoAGUI proto = iota
	protoAAP
)

// onEvent is called by the clients for every delta they read (with its
// text), once when the first delta has arrived, and (AG-UI) for each text
// message's start and each MESSAGES_SNAPSHOT.
type onEvent struct {
	delta    func(text string)
	first    func()
	start    func(messageID string)
	snapshot func(msgs []types.Message)
}

// runInput is a RunAgentInput of msgs on thread, with the empty state,
// tools, context and forwarded props an AG-UI client sends.
func runInput(thread, runID string, msgs []types.Message) types.RunAgentInput {
	return types.RunAgentInput{ThreadID: thread, RunID: runID, State: map[string]any{}, Messages: msgs,
		Tools: []types.Tool{}, Context: []types.Context{}, ForwardedProps: map[string]any{}}
}

// runAGUI posts a RunAgentInput holding p to url and reads the AG-UI
// stream to its end, decoding every event as an application would. It
// returns the number of events.
func runAGUI(ctx context.Context, hc *http.Client, url string, p prompt, thread int, on onEvent) (int, error) {
	var earlier strings.Builder
	for i := range p.history {
		fmt.Fprintf(&earlier, `{"id":"h%d","role":"%s","content":"%s"},`, i, historyRole(i), historyText)
	}
	body := `{"threadId":"t` + strconv.Itoa(thread) + `","runId":"r","state":{},"messages":[` + earlier.String() + `{"id":"u","role":"user","content":"` + p.String() + `"}],"tools":[],"context":[],"forwardedProps":{}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader([]byte(body)))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return 0, fmt.Errorf("HTTP %d: %s", resp.StatusCode, msg)
	}
	return readAGUI(resp.Body, on)
}

// historyRole is the role of a prompt's earlier message i: the
// conversation alternates, user first.
func historyRole(i int) string {
	if i%2 == 0 {
		return "user"
	}
	return "assistant"
}

func readAGUI(r io.Reader, on onEvent) (int, error) {
	n, deltas := 0, 0
	finished := false
	for ev, err := range sse.Read(r, sse.ReadOptions{}) {
		if err != nil {
			return n, err
		}
		e, err := agui.DecodeEvent(ev.Data)
		if err != nil {
			return n, err
		}
		n++
		switch e := e.(type) {
		case *events.TextMessageStartEvent:
			if on.start != nil {
				on.start(e.MessageID)
			}
		case *events.MessagesSnapshotEvent:
			if on.snapshot != nil {
				on.snapshot(e.Messages)
			}
		case *events.TextMessageContentEvent:
			deltas++
			if on.delta != nil {
				on.delta(e.Delta)
			}
			if deltas == 1 && on.first != nil {
				on.first()
			}
		case *events.RunErrorEvent:
			return n, errors.New("RUN_ERROR: " + e.Message)
		case *events.RunFinishedEvent:
			finished = true
		}
	}
	if !finished {
		return n, errors.New("no RUN_FINISHED")
	}
	return n, nil
}

// runAAP creates a session of agent "bench" at url, posts a turn holding p
// in delta mode and reads its events to the end with the AAP client.
func runAAP(ctx context.Context, hc *http.Client, url string, p prompt, on onEvent) (int, error) {
	cl := aap.NewClient(url, aap.ClientOptions{HTTPClient: hc})
	create := &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "bench"}}
	for i := range p.history {
		if historyRole(i) == "user" {
			create.Messages = append(create.Messages, aap.UserText(historyText))
		} else {
			create.Messages = append(create.Messages, &aap.AssistantMessage{Content: aap.TextContent(historyText)})
		}
	}
	s, err := cl.CreateSession(ctx, create)
	if err != nil {
		return 0, err
	}
	body, err := cl.OpenTurn(ctx, s.SessionID, &aap.PostSessionTurnRequest{
		Stream: aap.StreamDelta, Messages: []aap.Message{aap.UserText(p.String())},
	})
	if err != nil {
		return 0, err
	}
	defer body.Close()
	return readAAP(body, on)
}

func readAAP(r io.Reader, on onEvent) (int, error) {
	n, deltas := 0, 0
	stopped := false
	for ev, err := range aap.ReadEvents(r, 0) {
		if err != nil {
			return n, err
		}
		n++
		switch e := ev.(type) {
		case *aap.TextDelta:
			deltas++
			if on.delta != nil {
				on.delta(e.Delta)
			}
			if deltas == 1 && on.first != nil {
				on.first()
			}
		case *aap.TurnStop:
			stopped = true
		}
	}
	if !stopped {
		return n, errors.New("no turn_stop")
	}
	return n, nil
}

// rawAGUI and rawAAP read an agent's stream without parsing it, and
// return its bytes when keep is set: the agent's cost alone.
func rawAGUI(ctx context.Context, hc *http.Client, url string, p prompt, keep bool) ([]byte, error) {
	body := `{"threadId":"t","runId":"r","messages":[{"id":"u","role":"user","content":"` + p.String() + `"}]}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader([]byte(body)))
	return rawDo(hc, req, keep)
}

func rawAAP(ctx context.Context, hc *http.Client, url string, p prompt, keep bool) ([]byte, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/sessions/s/turns", bytes.NewReader([]byte(`{"stream":"delta","messages":[{"role":"user","content":"`+p.String()+`"}]}`)))
	return rawDo(hc, req, keep)
}

func rawDo(hc *http.Client, req *http.Request, keep bool) ([]byte, error) {
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	if keep {
		return io.ReadAll(resp.Body)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return nil, err
}
