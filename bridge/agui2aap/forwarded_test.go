package agui2aap_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/store"
)

// fixedClock is a clock that moves only when the test moves it.
type fixedClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fixedClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fixedClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newFixedClock() *fixedClock {
	return &fixedClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// runAs starts a run with the bearer key and returns the bridge's status.
func runAs(t *testing.T, e *env, key string) int {
	t.Helper()
	c := e.conv("t-" + key)
	c.say("hello")
	return e.post(t, "/agents/demo", c.input("", nil), "Authorization", "Bearer "+key).Status
}

// Under --forward-auth without --api-key, keys a caller makes up cost a
// bounded number of GET /meta: a key the AAP server refused is refused
// here for a while without asking again, and keys not yet accepted share
// one rate (40 at once by default), taken before the AAP server is asked.
func TestMadeUpKeysCostBoundedMetaCalls(t *testing.T) {
	up := newKeyedAAP(t, "the-real-key")
	clock := newFixedClock()
	e := newBridge(t, up.URL, func(c *agui2aap.Config) { c.ForwardAuth, c.Clock = true, clock.Now })

	statuses := map[int]int{}
	for i := range 100 {
		statuses[runAs(t, e, fmt.Sprintf("made-up-%d", i))]++
	}
	assert.Equal(t, map[int]int{http.StatusUnauthorized: 40, http.StatusTooManyRequests: 60}, statuses)
	assert.Equal(t, 40, len(up.metaAuth()), "one GET /meta per key, 40 keys at most")

	for i := range 100 {
		runAs(t, e, fmt.Sprintf("made-up-%d", i))
	}
	for range 10 {
		assert.Equal(t, http.StatusUnauthorized, runAs(t, e, "made-up-0"), "a refused key stays refused")
	}
	assert.Equal(t, 40, len(up.metaAuth()), "refused keys are not asked about again, and the others wait their turn")

	clock.Add(time.Minute)
	assert.Equal(t, http.StatusOK, runAs(t, e, "the-real-key"))
	assert.Equal(t, http.StatusUnauthorized, runAs(t, e, "made-up-0"), "asked again, once its refusal has expired")
	assert.Equal(t, 42, len(up.metaAuth()))
}

// A limit of one request a second per key is not multiplied by keys made
// up: those the AAP server has not accepted share it.
func TestMadeUpKeysDoNotMultiplyALimitOfOne(t *testing.T) {
	up := newKeyedAAP(t, "the-real-key")
	clock := newFixedClock()
	e := newBridge(t, up.URL, func(c *agui2aap.Config) {
		c.ForwardAuth, c.Clock = true, clock.Now
		c.Limits = agui2aap.Limits{RequestsPerSecond: 1}
	})
	var got []int
	for i := range 5 {
		got = append(got, runAs(t, e, fmt.Sprintf("made-up-%d", i)))
	}
	assert.Equal(t, []int{http.StatusUnauthorized, http.StatusTooManyRequests, http.StatusTooManyRequests, http.StatusTooManyRequests, http.StatusTooManyRequests}, got)
	assert.Equal(t, 1, len(up.metaAuth()), "one GET /meta for five made-up keys")
}

// Keys made up in numbers cannot push the keys in use out of the /meta
// cache. The AAP server answers GET /meta to anyone, as aap2agui with
// --public-meta does, so that every made-up key is "accepted" there.
func TestMadeUpKeysCannotFlushTheMetaCache(t *testing.T) {
	var mu sync.Mutex
	metaFor := map[string]int{}
	agent := demo.NewAAPAgent(demo.AAPAgentOptions{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/meta" {
			mu.Lock()
			metaFor[r.Header.Get("Authorization")]++
			mu.Unlock()
		} else if r.Header.Get("Authorization") != "Bearer k1" {
			writeJSON(w, http.StatusUnauthorized, aap.ErrorResponse{Error: aap.ErrorBody{Code: "unauthorized", Message: "a valid API key is required"}})
			return
		}
		agent.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	clock := newFixedClock()
	e := newBridge(t, s.URL, func(c *agui2aap.Config) {
		c.ForwardAuth, c.Clock = true, clock.Now
		c.Limits = agui2aap.Limits{RequestsPerSecond: 1e6}
	})
	require.Equal(t, http.StatusOK, runAs(t, e, "k1"))
	for i := range 1100 {
		r := e.get(t, "/agents", "Authorization", fmt.Sprintf("Bearer made-up-%d", i))
		require.Equal(t, http.StatusOK, r.Status, r.Body)
	}
	require.Equal(t, http.StatusOK, runAs(t, e, "k1"))
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 1, metaFor["Bearer k1"], "k1's /meta is still cached")
}

// A flood of made-up keys from one address does not keep another
// caller's real key out: the rate of keys not yet accepted is shared
// fairly between addresses, so that the real key, retried once a second
// as Retry-After asks, passes within a second or two, while the flood
// keeps the GET /meta it costs within the shared rate. The clock moves
// only when the test moves it.
func TestMadeUpKeysFromOneAddressLeaveRoomForAnother(t *testing.T) {
	up := newKeyedAAP(t, "the-real-key")
	clock := newFixedClock()
	cfg := agui2aap.Config{Upstream: up.URL, Store: store.NewMemory(), ForwardAuth: true}
	cfg.Clock = clock.Now
	srv, err := agui2aap.New(cfg)
	require.NoError(t, err)
	get := func(addr, key string) int {
		r := httptest.NewRequestWithContext(bridgetest.Context(t), http.MethodGet, "http://localhost/agents", nil)
		r.RemoteAddr, r.Header["Authorization"] = addr, []string{"Bearer " + key}
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, r)
		return w.Code
	}

	made, tries, passed := 0, []int{}, false
	for step := 1; step <= 100 && !passed; step++ { // 10 s, 200 made-up keys a second
		clock.Add(100 * time.Millisecond)
		for range 20 {
			made++
			get("198.51.100.7:40000", fmt.Sprint("made-up-", made))
		}
		if step%10 == 0 {
			code := get("203.0.113.9:50000", "the-real-key")
			tries, passed = append(tries, code), code == http.StatusOK
		}
	}
	assert.True(t, passed, "the real key's tries during the flood: %v", tries)
	assert.LessOrEqual(t, len(tries), 2, "the real key passes within two tries: %v", tries)
	assert.LessOrEqual(t, len(up.metaAuth()), 40+20*len(tries), "the flood's GET /meta stay within the shared rate")
}
