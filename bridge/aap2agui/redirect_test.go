package aap2agui_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/demo"
)

// An agent URL answering with a redirect is not followed: the place it
// points to gets nothing (no RunAgentInput, none of the agent's secret
// headers, no readiness probe), and the turn is a 502 upstream_redirect
// naming the status and where it pointed, without its query. The same
// with an HTTP client of the embedder's own (Config.HTTPClient).
func TestUpstreamRedirectIsNotFollowed(t *testing.T) {
	var reached atomic.Int64
	target := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		demo.AGUIAgent{}.ServeHTTP(w, r)
	}))
	agentURL := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target+"/elsewhere?token=t0ken", http.StatusTemporaryRedirect)
	}))
	for name, hc := range map[string]*http.Client{"the default client": nil, "a client of the embedder's": {}} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, agentURL, func(c *aap2agui.Config) {
				c.UpstreamHeader = http.Header{"X-Agent-Key": {"s3cret-header"}}
				c.HTTPClient = hc
			})
			id := e.createSession(t, aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "agent"}})
			for _, mode := range []string{"none", "delta"} {
				r := doRaw(t, http.MethodPost, e.URL+"/sessions/"+id+"/turns", "",
					`{"stream":"`+mode+`","messages":[{"role":"user","content":"hello"}]}`)
				requireJSONError(t, r, http.StatusBadGateway, "upstream_redirect")
				assert.Contains(t, r.Body, "HTTP 307", mode)
				assert.Contains(t, r.Body, target+"/elsewhere", mode)
				assert.NotContains(t, r.Body, "t0ken", mode)
				assert.NotContains(t, r.Body, "s3cret-header", mode)
			}
			assert.Equal(t, http.StatusOK, doRaw(t, http.MethodGet, e.Root+"/readyz", "", "").Status)
			assert.Zero(t, reached.Load(), "the redirect's target got no request")
		})
	}
}

// A redirect's place is named without its path parameters (a session id
// a Java server puts in the path, ;jsessionid=…), user information, query
// or fragment: the turn's 502 upstream_redirect holds none of them.
func TestUpstreamRedirectHidesPathParameters(t *testing.T) {
	agentURL := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://user:pa55@sink.example/app;v=S3SS10N/sink;jsessionid=S3SS10N?token=t0ken#S3SS10N", http.StatusFound)
	}))
	e := newEnv(t, agentURL)
	id := e.createSession(t, aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "agent"}})
	for _, mode := range []string{"none", "delta"} {
		r := doRaw(t, http.MethodPost, e.URL+"/sessions/"+id+"/turns", "",
			`{"stream":"`+mode+`","messages":[{"role":"user","content":"hello"}]}`)
		requireJSONError(t, r, http.StatusBadGateway, "upstream_redirect")
		assert.Contains(t, r.Body, "a redirect to http://sink.example/app/sink,", mode)
		for _, secret := range []string{"S3SS10N", "t0ken", "pa55"} {
			assert.NotContains(t, r.Body, secret, mode)
		}
	}
}
