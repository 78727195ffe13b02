package aap2agui_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/internal/testkit/pgtest"
	"github.com/aapagui/aapagui/store"
	_ "github.com/aapagui/aapagui/store/postgres"
)

// TestAcknowledgedTurnsSurviveDatabaseFaults is the load that lost
// acknowledged turns: sessions taking streaming turns through two aap2agui
// replicas on one PostgreSQL database while the database drops every
// connection, and, where the test may restart it, restarts (-m fast, then
// -m immediate). Turns may fail while the database is away; every turn
// whose client got end_turn must be in history exactly once: its question
// followed by its answer.
func TestAcknowledgedTurnsSurviveDatabaseFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("a load test")
	}
	dsn, app := pgtest.Tagged(t)
	up := newFakeUpstream(t, func(w http.ResponseWriter, r *http.Request, in *runInput, _ int) {
		q := in.Messages[len(in.Messages)-1].Content
		sseEvents(w, runStarted(in), `{"type":"TEXT_MESSAGE_START","messageId":"m-`+in.RunID+`","role":"assistant"}`)
		for _, part := range []string{"answer ", "to ", fmt.Sprint(q)} {
			time.Sleep(40 * time.Millisecond)
			sseEvents(w, fmt.Sprintf(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m-%s","delta":%q}`, in.RunID, part))
		}
		sseEvents(w, `{"type":"TEXT_MESSAGE_END","messageId":"m-`+in.RunID+`"}`, runFinished(in))
	})
	var replicas []*env
	for range 2 {
		st, err := store.Open(dsn)
		require.NoError(t, err)
		t.Cleanup(func() { st.Close() })
		replicas = append(replicas, newEnv(t, up.URL, func(c *aap2agui.Config) { c.Store = st }))
	}

	const sessions, turns = 16, 12
	ids := make([]string, sessions)
	for i := range ids {
		ids[i] = replicas[0].createSession(t, aap.PostSessionsRequest{})
	}
	var acked sync.Map // question → true
	var nAcked, nFailed atomic.Int32
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			for n := 0; n < turns && ctx.Err() == nil; n++ {
				q := fmt.Sprintf("q-%d-%d", i, n)
				e := replicas[(i+n)%2]
				req := userTurn(aap.StreamDelta, q)
				var last aap.Event
				var err error
				for ev, e := range e.Client.StreamTurn(ctx, id, &req) {
					if e != nil {
						err = e
						break
					}
					last = ev
				}
				if ts, ok := last.(*aap.TurnStop); ok && err == nil && ts.StopReason == aap.StopEndTurn {
					acked.Store(q, true)
					nAcked.Add(1)
				} else {
					nFailed.Add(1)
					time.Sleep(100 * time.Millisecond) // a turn refused (409) while the lock is freed
				}
			}
		})
	}

	pgtest.Faults(t, app, 400*time.Millisecond)
	wg.Wait()
	t.Logf("%d turns acknowledged, %d failed or refused while the database was away", nAcked.Load(), nFailed.Load())
	require.Positive(t, nAcked.Load())

	for i, id := range ids {
		// A read may meet a pooled connection the restart broke: read
		// again, as a client would.
		var msgs []aap.Message
		var err error
		require.Eventually(t, func() bool {
			msgs, err = replicas[0].Client.History(bridgetest.Context(t), id, aap.HistoryFull)
			return err == nil
		}, bridgetest.Timeout, 50*time.Millisecond, "history of session %d", i)
		seen := map[string]int{}
		for j, m := range msgs {
			u, ok := m.(*aap.UserMessage)
			if !ok {
				continue
			}
			q := u.Content.PlainText()
			seen[q]++
			if _, ok := acked.Load(q); !ok {
				continue
			}
			require.Less(t, j+1, len(msgs), "session %d: the acknowledged %s has no answer", i, q)
			a, ok := msgs[j+1].(*aap.AssistantMessage)
			require.True(t, ok, "session %d: the acknowledged %s is followed by %T", i, q, msgs[j+1])
			assert.Equal(t, "answer to "+q, a.Content.PlainText(), "session %d", i)
		}
		for n := range turns {
			q := fmt.Sprintf("q-%d-%d", i, n)
			if _, ok := acked.Load(q); ok {
				assert.Equal(t, 1, seen[q], "session %d: the acknowledged %s is in history once", i, q)
				answers := 0
				for _, m := range msgs {
					if a, ok := m.(*aap.AssistantMessage); ok && strings.HasSuffix(a.Content.PlainText(), " "+q) {
						answers++
					}
				}
				assert.Equal(t, 1, answers, "session %d: the answer to %s is in history once", i, q)
			}
		}
	}
}
