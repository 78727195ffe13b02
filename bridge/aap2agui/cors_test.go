package aap2agui_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
)

// preflight sends the OPTIONS request a browser sends before a
// cross-origin call with an API key and a JSON body.
func preflight(t *testing.T, url, origin, method string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(bridgetest.Context(t), http.MethodOptions, url, nil)
	require.NoError(t, err)
	req.Header.Set("Origin", origin)
	req.Header.Set("Access-Control-Request-Method", method)
	req.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	return resp
}

// An AAP web client on another origin (the official one is a page of its
// own) reaches aap2agui with --cors-origin: its preflights get 204 with the
// methods and headers it needs, the answers carry the origin, and pages on
// origins not listed are refused. "*" lets any page in, never with
// credentials.
func TestCORS(t *testing.T) {
	const app = "https://aap-client.example"
	e := newEnv(t, demoAgent(t), func(c *aap2agui.Config) {
		c.CORSOrigins = []string{app}
		c.APIKeys = []string{"k1"}
		c.BasePath = "/v1"
	})

	t.Run("preflights from the listed origin", func(t *testing.T) {
		for _, tc := range []struct{ path, method string }{
			{"/meta", "GET"}, {"/sessions", "POST"}, {"/sessions/x/turns", "POST"},
			{"/sessions/x", "DELETE"}, {"/sessions/x/history?type=full", "GET"},
		} {
			resp := preflight(t, e.URL+tc.path, app, tc.method)
			assert.Equal(t, http.StatusNoContent, resp.StatusCode, tc.path)
			assert.Equal(t, app, resp.Header.Get("Access-Control-Allow-Origin"), tc.path)
			assert.Equal(t, "true", resp.Header.Get("Access-Control-Allow-Credentials"), tc.path)
			assert.Contains(t, resp.Header.Get("Access-Control-Allow-Methods"), tc.method, tc.path)
			h := strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers"))
			assert.Contains(t, h, "authorization", tc.path)
			assert.Contains(t, h, "content-type", tc.path)
			assert.Contains(t, resp.Header.Values("Vary"), "Origin", tc.path)
		}
	})

	t.Run("a preflight from another origin is refused", func(t *testing.T) {
		resp := preflight(t, e.URL+"/meta", "https://evil.example", "GET")
		assert.Equal(t, http.StatusForbidden, resp.StatusCode)
		assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
		assert.Empty(t, resp.Header.Get("Access-Control-Allow-Methods"))
	})

	t.Run("answers carry the origin, errors included", func(t *testing.T) {
		req, err := http.NewRequestWithContext(bridgetest.Context(t), http.MethodPost, e.URL+"/sessions", strings.NewReader(`{"agent":{"name":"agent"}}`))
		require.NoError(t, err)
		req.Header.Set("Origin", app)
		req.Header.Set("Authorization", "Bearer k1")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusCreated, resp.StatusCode)
		assert.Equal(t, app, resp.Header.Get("Access-Control-Allow-Origin"))
		assert.Contains(t, resp.Header.Get("Access-Control-Expose-Headers"), "X-Request-Id")

		req.Header.Set("Authorization", "Bearer wrong")
		req.Body = http.NoBody
		resp, err = http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		assert.Equal(t, app, resp.Header.Get("Access-Control-Allow-Origin"), "the page can read why it was refused")
	})

	t.Run("any origin, never with credentials", func(t *testing.T) {
		anyOrigin := newEnv(t, demoAgent(t), func(c *aap2agui.Config) { c.CORSOrigins, c.APIKeys = []string{"*"}, []string{"k1"} })
		resp := preflight(t, anyOrigin.URL+"/sessions", "https://anyone.example", "POST")
		assert.Equal(t, http.StatusNoContent, resp.StatusCode)
		assert.Equal(t, "*", resp.Header.Get("Access-Control-Allow-Origin"))
		assert.Empty(t, resp.Header.Get("Access-Control-Allow-Credentials"))
	})

	t.Run("without --cors-origin preflights are refused", func(t *testing.T) {
		closed := newEnv(t, demoAgent(t))
		resp := preflight(t, closed.URL+"/meta", app, "GET")
		assert.Equal(t, http.StatusForbidden, resp.StatusCode)
		assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
	})

	t.Run("any origin on a server without keys is a configuration error", func(t *testing.T) {
		// Every web site the local user visits could otherwise list, read
		// and run the sessions of an open bridge from the user's browser.
		_, err := aap2agui.New(aap2agui.Config{Upstream: demoAgent(t), Store: e.Store, Serving: aap2agui.Serving{CORSOrigins: []string{"https://app.example", "*"}}})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "CORS origin *")
		assert.Contains(t, err.Error(), "--api-key")
	})

	t.Run("an origin that is not one is a configuration error", func(t *testing.T) {
		_, err := aap2agui.New(aap2agui.Config{Upstream: demoAgent(t), Store: e.Store, Serving: aap2agui.Serving{CORSOrigins: []string{"https://app.example/path"}}})
		require.ErrorContains(t, err, "https://app.example/path")
	})
}
