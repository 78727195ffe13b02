package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/internal/testkit/proctest"
)

// --thread-id: by default a run's threadId is the UUID derived from the
// session id; "session" sends the session id; anything else stops the
// program at start-up.
func TestThreadIDFlag(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	threads := make(chan string, 4)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			ThreadID string `json:"threadId"`
			RunID    string `json:"runId"`
		}
		_ = json.NewDecoder(r.Body).Decode(&in)
		threads <- in.ThreadID
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"type\":\"RUN_STARTED\",\"threadId\":%q,\"runId\":%q}\n\n", in.ThreadID, in.RunID)
		fmt.Fprintf(w, "data: {\"type\":\"RUN_FINISHED\",\"threadId\":%q,\"runId\":%q}\n\n", in.ThreadID, in.RunID)
	}))
	t.Cleanup(up.Close)

	for _, tc := range []struct{ flag []string }{{nil}, {[]string{"--thread-id", "session"}}} {
		p := proctest.Start(t, nil, append([]string{"--listen", "127.0.0.1:0", "--store", "memory:", "--upstream", up.URL}, tc.flag...)...)
		c := aap.NewClient(p.URL(), aap.ClientOptions{})
		s, err := c.CreateSession(ctx, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "agent"}})
		require.NoError(t, err)
		_, err = c.Turn(ctx, s.SessionID, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("hi")}})
		require.NoError(t, err)
		want := aap2agui.ThreadID(s.SessionID)
		if tc.flag != nil {
			want = s.SessionID
		}
		assert.Equal(t, want, <-threads, "%v", tc.flag)
	}

	err := run([]string{"--thread-id", "raw", "--store", "memory:"})
	require.ErrorContains(t, err, "--thread-id")
}
