package agui2aap_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/store/sqlite"
)

// threadSaveFaults fails the next fail saves at a run's end, as a
// PostgreSQL restart does; failAll fails every one.
type threadSaveFaults struct {
	store.Store
	fail    atomic.Int32
	failAll atomic.Bool
	calls   atomic.Int32
}

// SaveThread fails a run's end (the save that frees the lock).
func (s *threadSaveFaults) SaveThread(ctx context.Context, th *store.Thread, holder string) error {
	if holder == "" {
		return s.Store.SaveThread(ctx, th, holder)
	}
	s.calls.Add(1)
	if s.failAll.Load() || s.fail.Add(-1) >= 0 {
		return errors.New("unexpected EOF")
	}
	return s.Store.SaveThread(ctx, th, holder)
}

// TestRunFinishedMeansSaved: RUN_FINISHED reaches the client only once the
// thread is saved. A save that fails is tried again, and the thread stays
// on its AAP session (a failed save moved it to a new one); a store that
// does not come back ends the run with RUN_ERROR STORE_ERROR instead.
func TestRunFinishedMeansSaved(t *testing.T) {
	st := &threadSaveFaults{Store: store.NewMemory()}
	e := newEnv(t, func(c *agui2aap.Config) { c.Store = st })
	c := e.conv("t1")
	c.say("hello")
	require.NotNil(t, c.run(t).Finished)
	session := e.onlySession(t)

	st.fail.Store(2)
	before := st.calls.Load()
	c.say("hello again")
	r := c.run(t)
	require.NotNil(t, r.Finished, "finished once saved: %s", r.Body)
	assert.Equal(t, before+3, st.calls.Load(), "two failed tries, then the save")
	c.say("and again")
	require.NotNil(t, c.run(t).Finished)
	assert.Equal(t, session, e.onlySession(t), "the thread stayed on its session")
	assert.Equal(t, []string{"hello", "hello again", "and again"}, userTexts(e.history(t, session)))

	st.failAll.Store(true)
	c.say("lost")
	r = c.run(t)
	assert.Nil(t, r.Finished, "no RUN_FINISHED for a thread not saved")
	require.NotNil(t, r.Error)
	assert.Equal(t, agui2aap.CodeStoreError, *r.Error.Code)
}

// endlessTurns answers every turn with turn_start and then, until the turn
// is cancelled, what more writes every interval; ended counts the turns
// that were cancelled.
func endlessTurns(t *testing.T, interval time.Duration, more func(n int) string, ended *atomic.Int32) *fakeAAP {
	return newFakeAAP(t, func(w http.ResponseWriter, r *http.Request, _ int, _ *aap.PostSessionTurnRequest) {
		defer ended.Add(1)
		writeEvents(w, &aap.TurnStart{})
		bridgetest.Trickle(w, r, interval, more)
	})
}

func textDelta(text string) string {
	return fmt.Sprintf("event: text_delta\ndata: {\"delta\":%q}\n\n", text)
}

// An AAP server that sends only comments is idle (IdleTimeout counts
// events), and one that talks past MaxTurnDuration is cut: both end the
// run with RUN_ERROR and what came before kept.
func TestRunBounds(t *testing.T) {
	for _, c := range []struct {
		name, code string
		more       func(int) string
		configure  func(*agui2aap.Config)
		kept       string
	}{
		{"comments only", "UPSTREAM_IDLE_TIMEOUT", func(int) string { return ": keep-alive\n\n" },
			func(c *agui2aap.Config) { c.IdleTimeout = 300 * time.Millisecond }, ""},
		{"endless talk", "TURN_TOO_LONG", func(n int) string { return textDelta(fmt.Sprintf("w%d ", n)) },
			func(c *agui2aap.Config) { c.MaxTurnDuration = 400 * time.Millisecond }, "w0 w1 "},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var ended atomic.Int32
			up := endlessTurns(t, 20*time.Millisecond, c.more, &ended)
			e := newBridge(t, up.URL, c.configure)
			cv := e.conv("t1")
			cv.say("go")
			r := cv.run(t)
			require.NotNil(t, r.Error, "the run ends: %s", r.Body)
			assert.Equal(t, c.code, *r.Error.Code)
			if c.kept != "" {
				require.NotEmpty(t, r.Text)
				assert.True(t, strings.HasPrefix(r.Text[0], c.kept), "kept %q", r.Text[0])
			}
			assert.Eventually(t, func() bool { return ended.Load() == 1 }, bridgetest.Timeout, 10*time.Millisecond, "the AAP turn was cancelled")
		})
	}
}

// A client that keeps its connection open but stops reading ends its run
// once a write has made no progress for StallTimeout: the AAP turn is
// cancelled and the thread takes a new run (it stayed locked for as long
// as the socket was open).
func TestRunClientStopsReading(t *testing.T) {
	big := strings.Repeat("x", 32<<10)
	var ended atomic.Int32
	var turns atomic.Int32
	up := newFakeAAP(t, func(w http.ResponseWriter, r *http.Request, n int, req *aap.PostSessionTurnRequest) {
		turns.Add(1)
		if n > 0 {
			answerText("here")(w, r, n, req)
			return
		}
		defer ended.Add(1)
		writeEvents(w, &aap.TurnStart{})
		for r.Context().Err() == nil {
			if _, err := io.WriteString(w, textDelta(big)); err != nil {
				return
			}
			_ = http.NewResponseController(w).Flush()
			time.Sleep(time.Millisecond)
		}
	})
	const stall = 300 * time.Millisecond
	e := newBridge(t, up.URL, func(c *agui2aap.Config) { c.StallTimeout = stall })
	cv := e.conv("t1")
	cv.say("talk forever")
	body, err := json.Marshal(cv.input("r1", nil))
	require.NoError(t, err)

	conn, err := net.Dial("tcp", strings.TrimPrefix(e.URL, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.(*net.TCPConn).SetReadBuffer(4<<10))
	_, err = fmt.Fprintf(conn, "POST /agents/demo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	require.NoError(t, err)
	status, err := bufio.NewReader(conn).ReadString('\n') // and then never read again
	require.NoError(t, err)
	require.Contains(t, status, "200")

	start := time.Now()
	cv.Messages = cv.Messages[:0]
	cv.say("are you there?")
	require.Eventually(t, func() bool {
		return cv.e.post(t, "/agents/demo", cv.input("", nil)).Status == http.StatusOK
	}, bridgetest.Timeout, 50*time.Millisecond, "the thread takes a new run")
	assert.Less(t, time.Since(start), stall+store.LeaseTTL)
	assert.EqualValues(t, 1, ended.Load(), "the AAP turn was cancelled")
}

// deliveredSaves notes, of each thread save, the delivered ids it leaves
// as stored (DeliveredFrom) and how many the thread has.
type deliveredSaves struct {
	store.Store
	from, n []int
}

// SaveThread notes what a run's end (the save that frees the lock) writes.
func (s *deliveredSaves) SaveThread(ctx context.Context, th *store.Thread, holder string) error {
	if holder != "" {
		s.from, s.n = append(s.from, th.DeliveredFrom), append(s.n, len(th.Delivered))
	}
	return s.Store.SaveThread(ctx, th, holder)
}

// A run's save writes the ids the run delivered and produced, not the
// thread's every id again: it leaves those stored before it as they are
// (the store's side: storetest's "delivered ids from DeliveredFrom"), on
// SQLite, and the thread reads back with them all.
func TestRunSavesOnlyItsDeliveredIDs(t *testing.T) {
	sq, err := sqlite.Open(filepath.Join(t.TempDir(), "threads.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = sq.Close() })
	st := &deliveredSaves{Store: sq}
	e := newEnv(t, func(c *agui2aap.Config) { c.Store = st })
	c := e.conv("t1")
	for _, text := range []string{"hello", "hello again", "and again"} {
		c.say(text)
		require.NotNil(t, c.run(t).Finished)
	}
	require.Equal(t, []int{0, 2, 4}, st.from, "each run's save leaves the ids before it as stored")
	require.Equal(t, []int{2, 4, 6}, st.n)
	th, err := sq.GetThread(context.Background(), "", "t1")
	require.NoError(t, err)
	ids := make([]string, len(c.Messages))
	for i, m := range c.Messages {
		ids[i] = m.ID
	}
	assert.Equal(t, ids, th.Delivered)
}
