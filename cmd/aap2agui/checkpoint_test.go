package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/internal/testkit/proctest"
	"github.com/aapagui/aapagui/store/sqlite"
)

// trickleAgent is an AG-UI agent that streams one word every 20 ms and
// never finishes, as a model writing a long answer does.
func trickleAgent(t *testing.T) string {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\n")
		fmt.Fprint(w, "data: {\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"m1\",\"role\":\"assistant\"}\n\n")
		for i := 0; ; i++ {
			fmt.Fprintf(w, "data: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m1\",\"delta\":\"w%d \"}\n\n", i)
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}))
	t.Cleanup(s.Close)
	return s.URL
}

// TestKilledMidAnswerKeepsCheckpoint kills aap2agui with SIGKILL while an
// answer is streaming: the history keeps the answer up to the last
// checkpoint (at most a second old), not only the user's message.
func TestKilledMidAnswerKeepsCheckpoint(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	path := filepath.Join(t.TempDir(), "aap2agui.db")
	a := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "sqlite:"+path, "--upstream", trickleAgent(t))
	ca := aap.NewClient(a.URL(), aap.ClientOptions{})
	created, err := ca.CreateSession(ctx, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "agent"}})
	require.NoError(t, err)

	var received strings.Builder
	start := time.Now()
	for ev, err := range ca.StreamTurn(ctx, created.SessionID, &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{aap.UserText("write a lot")}}) {
		require.NoError(t, err)
		if d, ok := ev.(*aap.TextDelta); ok {
			received.WriteString(d.Delta)
		}
		if time.Since(start) > 2500*time.Millisecond {
			break
		}
	}
	a.Kill()

	st, err := sqlite.Open(path)
	require.NoError(t, err)
	defer st.Close()
	hist, err := st.History(ctx, created.SessionID)
	require.NoError(t, err)
	require.Len(t, hist, 2, "the user's message and the checkpointed answer")
	assert.Equal(t, aap.UserText("write a lot"), hist[0].Message)
	am, ok := hist[1].Message.(*aap.AssistantMessage)
	require.True(t, ok, "%T", hist[1].Message)
	saved := am.Content.Text
	require.NotEmpty(t, saved)
	assert.True(t, strings.HasPrefix(received.String(), saved), "the checkpoint is what was streamed, up to a point")
	t.Logf("streamed %d words in %s; the checkpoint holds %d (lost %d, %.0f ms of output)",
		len(strings.Fields(received.String())), time.Since(start).Round(time.Millisecond), len(strings.Fields(saved)),
		len(strings.Fields(received.String()))-len(strings.Fields(saved)),
		float64(len(strings.Fields(received.String()))-len(strings.Fields(saved)))*20)
}
