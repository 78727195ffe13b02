package aap2agui_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/store/sqlite"
)

// Two replicas on one store, turns of one session going to one and then
// the other: each turn's agent gets the whole conversation, whichever
// replica ran the turns before it. A replica that cached the session's
// history from its own last turn reads what the other added since.
func TestCachedHistoryAcrossReplicas(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "s.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		sseEvents(w, textRun(in, fmt.Sprintf("answer-%d", n), fmt.Sprintf("answer %d", n))...)
	})
	shared := func(c *aap2agui.Config) { c.Store = st }
	a, b := newEnv(t, up.URL, shared), newEnv(t, up.URL, shared)
	id := a.createSession(t, aap.PostSessionsRequest{})

	var want []string // the texts of the conversation so far
	for n, e := range []*env{a, b, a, a, b, a} {
		text := fmt.Sprintf("question %d", n)
		_, err := e.stream(t, id, userTurn(aap.StreamDelta, text))
		require.NoError(t, err)
		want = append(want, text)
		var got []string
		for _, m := range up.input(t, n).Messages {
			got = append(got, fmt.Sprint(m.Content))
		}
		assert.Equal(t, want, got, "turn %d", n)
		want = append(want, fmt.Sprintf("answer %d", n))
	}
}

// A turn on a session created, or whose last turn ran, on this process
// reads none of its history from the store; one after another process
// wrote to it reads it once; and a server told to cache none reads it
// every time.
func TestCachedHistoryIsNotReadAgain(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		sseEvents(w, textRun(in, fmt.Sprintf("answer-%d", n), "ok")...)
	})
	for _, tt := range []struct {
		name  string
		cache int64
		reads []int64 // history reads after each turn
	}{
		{"cached", 0, []int64{0, 0, 1, 1}},
		{"none cached", -1, []int64{1, 2, 3, 4}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := &countingStore{Store: store.NewMemory()}
			e := newEnv(t, up.URL, func(c *aap2agui.Config) { c.Store, c.HistoryCache = st, tt.cache })
			id := e.createSession(t, aap.PostSessionsRequest{})
			for n := range tt.reads {
				if n == 2 {
					// Another process's write: the history's version moves on.
					require.NoError(t, st.AppendHistory(context.Background(), id, []store.Entry{{
						Message: aap.UserText("from elsewhere"), AGUIID: "elsewhere"}}))
				}
				_, err := e.stream(t, id, userTurn(aap.StreamDelta, fmt.Sprintf("q%d", n)))
				require.NoError(t, err)
				assert.Equal(t, tt.reads[n], st.reads.Load(), "history reads after turn %d", n)
			}
			hist := e.history(t, id, aap.HistoryFull)
			assert.Len(t, hist, 9, "four turns of two messages and the one from elsewhere")
		})
	}
}

// countingStore counts the reads of a session's history: a turn start
// reads it with the session (LockLoadSession) unless it is cached at the
// session's version.
type countingStore struct {
	store.Store
	reads atomic.Int64
}

func (s *countingStore) LockLoadSession(ctx context.Context, owner, id, holder string, known int64, ttl time.Duration) (*store.Session, []store.Entry, bool, time.Duration, error) {
	sess, hist, ok, left, err := s.Store.LockLoadSession(ctx, owner, id, holder, known, ttl)
	if err == nil && ok && !sess.KnownHistory(known) {
		s.reads.Add(1)
	}
	return sess, hist, ok, left, err
}

func (s *countingStore) History(ctx context.Context, id string) ([]store.Entry, error) {
	s.reads.Add(1)
	return s.Store.History(ctx, id)
}
