package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/testkit/proctest"
)

// --demo-aap-version runs the built-in demo agent in an old protocol
// version, which agui2aap reads from its GET /meta; --upstream-aap-version
// forces a version for an upstream.
func TestAAPVersionFlags(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, v := range []string{"1", "2"} {
		p := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:", "--demo-aap-version", v)
		resp := post(t, ctx, p.URL()+"/agents/demo", runBody("r1", `{"id":"u1","role":"user","content":"hello there"}`))
		require.Equal(t, http.StatusOK, resp.StatusCode)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Contains(t, string(body), `"delta":"hello "`, "version %s", v)
		assert.Contains(t, string(body), `"outcome":{"type":"success"}`)
	}

	up := httptest.NewServer(demo.NewAAPAgent(demo.AAPAgentOptions{Version: 2}))
	defer up.Close()
	p := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:", "--upstream", up.URL, "--upstream-aap-version", "2")
	resp := post(t, ctx, p.URL()+"/agents/demo", runBody("r1", `{"id":"u1","role":"user","content":"please think"}`))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Contains(t, string(body), `"type":"REASONING_MESSAGE_CONTENT"`)
	assert.Contains(t, string(body), `"outcome":{"type":"success"}`)

	for want, args := range map[string][]string{
		"--upstream-aap-version 4":                {"--upstream-aap-version", "4"},
		"--demo-aap-version 0":                    {"--demo-aap-version", "0"},
		"applies to the built-in demo agent only": {"--demo-aap-version", "1", "--upstream", up.URL},
	} {
		err := run(append([]string{"--store", "memory:", "--listen", "127.0.0.1:0"}, args...))
		require.Error(t, err, args)
		assert.Contains(t, err.Error(), want)
	}
}
