package agui2aap_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/demo"
)

// An AAP server answering with a redirect is not followed: the place it
// points to gets nothing (no turn, no GET /meta, neither the bridge's key
// nor a caller's forwarded one), and the run is a 502 upstream_redirect
// naming the status and where it pointed, without its query. The same
// with an HTTP client of the embedder's own (Config.HTTPClient).
func TestUpstreamRedirectIsNotFollowed(t *testing.T) {
	var mu sync.Mutex
	var reached []string // what the redirect's target received
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		reached = append(reached, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		demo.NewAAPAgent(demo.AAPAgentOptions{}).ServeHTTP(w, r)
	}))
	t.Cleanup(target.Close)
	redirectTo := func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+r.URL.Path+"?token=t0ken", http.StatusTemporaryRedirect)
	}
	// The turn alone redirected: the bridge has read /meta and made the
	// session when the conversation would go elsewhere.
	turnOnly := http.NewServeMux()
	turnOnly.Handle("/", demo.NewAAPAgent(demo.AAPAgentOptions{}))
	turnOnly.HandleFunc("POST /sessions/{id}/turns", redirectTo)
	upstreams := map[string]http.Handler{"every call": http.HandlerFunc(redirectTo), "the turn": turnOnly}

	for name, up := range upstreams {
		for client, hc := range map[string]*http.Client{"": nil, ", a client of the embedder's": {}} {
			for _, forward := range []bool{false, true} {
				t.Run(name+client+map[bool]string{true: ", forwarded key"}[forward], func(t *testing.T) {
					s := httptest.NewServer(up)
					t.Cleanup(s.Close)
					e := newBridge(t, s.URL, func(c *agui2aap.Config) {
						c.HTTPClient, c.ForwardAuth = hc, forward
						if !forward {
							c.UpstreamAPIKey = "upstream-s3cret"
						}
					})
					c := e.conv("redirected")
					c.say("hello")
					r := e.post(t, "/agents/demo", c.input("", nil), "Authorization", "Bearer caller-s3cret")
					require.Equal(t, http.StatusBadGateway, r.Status, r.Body)
					assert.Equal(t, "upstream_redirect", r.errorCode(), r.Body)
					assert.Contains(t, r.errorMessage(), "HTTP 307")
					assert.Contains(t, r.errorMessage(), target.URL+"/")
					assert.NotContains(t, r.Body, "t0ken")
					assert.NotContains(t, r.Body, "s3cret")
					mu.Lock()
					defer mu.Unlock()
					assert.Empty(t, reached, "the redirect's target got no request")
				})
			}
		}
	}
}

// A redirect's place is named without its path parameters (a session id
// a Java server puts in the path, ;jsessionid=…), user information, query
// or fragment: the run's 502 upstream_redirect holds none of them.
func TestUpstreamRedirectHidesPathParameters(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://user:pa55@sink.example/app;v=S3SS10N/sink;jsessionid=S3SS10N?token=t0ken#S3SS10N", http.StatusFound)
	}))
	t.Cleanup(up.Close)
	e := newBridge(t, up.URL)
	c := e.conv("redirected")
	c.say("hello")
	r := e.post(t, "/agents/demo", c.input("", nil))
	require.Equal(t, http.StatusBadGateway, r.Status, r.Body)
	assert.Equal(t, "upstream_redirect", r.errorCode(), r.Body)
	assert.Contains(t, r.errorMessage(), "a redirect to http://sink.example/app/sink,")
	for _, secret := range []string{"S3SS10N", "t0ken", "pa55"} {
		assert.NotContains(t, r.Body, secret)
	}
}
