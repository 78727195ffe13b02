package aap2agui_test

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/internal/testkit/metricstest"
)

// A process that cannot keep more turns alive refuses a turn's start up
// front: with a scheduling-delay bound no process meets (its own ticker
// always fires some nanoseconds late), a start, once the ticker has
// measured, is answered 503 overloaded with Retry-After before the agent
// is called or anything streams, and /metrics counts it by cause. With
// the bounds off, turns are admitted and counted so.
func TestOverloadedProcessRefusesTurnsUpFront(t *testing.T) {
	var calls atomic.Int32
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		_, _ = io.ReadAll(r.Body)
		sseEvents(w, `{"type":"RUN_STARTED","threadId":"t","runId":"r"}`, `{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`)
	}))
	e := newEnv(t, up, func(c *aap2agui.Config) {
		c.MaxSchedulingDelay = time.Nanosecond
		c.MaxRenewalLag = -1
	})
	id := e.createSession(t, aap.PostSessionsRequest{})
	var refused rawResponse
	require.Eventually(t, func() bool {
		refused = doRaw(t, http.MethodPost, e.URL+"/sessions/"+id+"/turns", "", `{"stream":"delta","messages":[{"role":"user","content":"hi"}]}`)
		return refused.Status != http.StatusOK
	}, 10*time.Second, 10*time.Millisecond, "a start refused once the process's lateness is measured")
	before := calls.Load()
	requireJSONError(t, refused, http.StatusServiceUnavailable, "overloaded")
	assert.NotEmpty(t, refused.Header.Get("Retry-After"))
	assert.Contains(t, refused.Body, "scheduling_delay")
	r := doRaw(t, http.MethodPost, e.URL+"/sessions/"+id+"/turns", "", `{"stream":"none","messages":[{"role":"user","content":"hi"}]}`)
	requireJSONError(t, r, http.StatusServiceUnavailable, "overloaded")
	assert.Equal(t, before, calls.Load(), "nothing of a refused turn reached the agent")
	m := metricstest.Scrape(t, e.Root+"/metrics", "")
	assert.GreaterOrEqual(t, m.Value("aap2agui_admission_total", "result", "refused", "cause", "scheduling_delay"), 2.0)
	assert.Positive(t, m.Value("aap2agui_scheduling_delay_seconds"), "the ticker's samples")

	open := newEnv(t, up, func(c *aap2agui.Config) { c.MaxSchedulingDelay, c.MaxRenewalLag = -1, -1 })
	id = open.createSession(t, aap.PostSessionsRequest{})
	for range 3 {
		_, err := open.Client.Turn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("hi")}})
		require.NoError(t, err)
	}
	m = metricstest.Scrape(t, open.Root+"/metrics", "")
	assert.Equal(t, 3.0, m.Value("aap2agui_admission_total", "result", "admitted"))
	assert.False(t, m.Has("aap2agui_admission_total", "result", "refused"))
}

// Turns whose lock renewals answer late make the process refuse new
// starts too (renewal_lag), as the lag of every renewal is measured.
func TestRenewalLagRefusesTurns(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sseEvents(w, `{"type":"RUN_STARTED","threadId":"t","runId":"r"}`)
		if !strings.Contains(string(body), "hold") {
			sseEvents(w, `{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`)
			return
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	e := newEnv(t, up, func(c *aap2agui.Config) {
		c.LeaseTTL = 150 * time.Millisecond // renewed every 50 ms
		c.MaxSchedulingDelay = -1
		c.MaxRenewalLag = time.Nanosecond
	})
	long := e.createSession(t, aap.PostSessionsRequest{})
	go func() { // holds its lock, renewing it, until the test ends
		_, _ = e.Client.Turn(bridgetest.Context(t), long, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("hold")}})
	}()
	id := e.createSession(t, aap.PostSessionsRequest{})
	var r rawResponse
	require.Eventually(t, func() bool {
		r = doRaw(t, http.MethodPost, e.URL+"/sessions/"+id+"/turns", "", `{"stream":"none","messages":[{"role":"user","content":"hi"}]}`)
		return r.Status == http.StatusServiceUnavailable
	}, 10*time.Second, 20*time.Millisecond)
	requireJSONError(t, r, http.StatusServiceUnavailable, "overloaded")
	assert.Contains(t, r.Body, "renewal_lag")
	m := metricstest.Scrape(t, e.Root+"/metrics", "")
	assert.Positive(t, m.Value("aap2agui_lease_renewal_lag_seconds"))
}
