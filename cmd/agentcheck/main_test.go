package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/demo"
)

// The exit status says whether a check failed; --json prints the report as
// JSON; --prompts reads the prompts from a file.
func TestRun(t *testing.T) {
	ctx := context.Background()
	good := httptest.NewServer(demo.NewAAPAgent(demo.AAPAgentOptions{}))
	defer good.Close()
	quiet := httptest.NewServer(demo.NewAAPAgent(demo.AAPAgentOptions{QuietPermissionResults: true}))
	defer quiet.Close()
	agui := httptest.NewServer(demo.AGUIAgent{})
	defer agui.Close()

	var out, errOut bytes.Buffer
	code, err := run(ctx, []string{"aap", good.URL}, &out, &errOut)
	require.NoError(t, err)
	assert.Equal(t, 0, code, out.String())
	assert.Contains(t, out.String(), "PASS  permission.grant")

	out.Reset()
	code, err = run(ctx, []string{"aap", quiet.URL, "--json"}, &out, &errOut)
	require.NoError(t, err)
	assert.Equal(t, 1, code)
	var report struct {
		Failed  int `json:"failed"`
		Results []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &report))
	assert.Equal(t, 1, report.Failed)

	out.Reset()
	code, err = run(ctx, []string{"agui", agui.URL}, &out, &errOut)
	require.NoError(t, err)
	assert.Equal(t, 0, code, out.String())

	// Prompts from a file: without a permission prompt those checks are
	// skipped, not failed.
	file := filepath.Join(t.TempDir(), "prompts.yaml")
	require.NoError(t, os.WriteFile(file, []byte("permission: \"\"\nthink: think hard\n"), 0o600))
	out.Reset()
	code, err = run(ctx, []string{"aap", quiet.URL, "--prompts", file}, &out, &errOut)
	require.NoError(t, err)
	assert.Equal(t, 0, code, out.String())
	assert.Contains(t, out.String(), "SKIP  permission.grant")
}

func TestRunUsage(t *testing.T) {
	ctx := context.Background()
	for _, args := range [][]string{
		{},
		{"aap"},
		{"soap", "http://127.0.0.1:1"},
		{"aap", "not a url"},
		{"aap", "http://127.0.0.1:1", "--nope"},
		{"agui", "http://127.0.0.1:1", "extra"},
	} {
		var out, errOut bytes.Buffer
		code, err := run(ctx, args, &out, &errOut)
		assert.Error(t, err, "%q", args)
		assert.Equal(t, 2, code, "%q", args)
	}
	file := filepath.Join(t.TempDir(), "prompts.yaml")
	require.NoError(t, os.WriteFile(file, []byte("unknown_key: x\n"), 0o600))
	var out, errOut bytes.Buffer
	code, err := run(ctx, []string{"aap", "http://127.0.0.1:1", "--prompts", file}, &out, &errOut)
	assert.ErrorContains(t, err, "unknown_key")
	assert.Equal(t, 2, code)
}

// --help, alone or after a mode (or among a mode's flags), prints the
// usage with every flag on stdout and exits 0, as the two bridges do; a
// key in the environment is never printed as a default.
func TestHelp(t *testing.T) {
	t.Setenv("AGENTCHECK_KEY", "sk-secret-env-key")
	fs, _ := newFlags(io.Discard, "")
	for _, args := range [][]string{
		{"--help"},
		{"-h"},
		{"aap", "--help"},
		{"agui", "--help"},
		{"agui", "-help"},
		{"aap", "http://127.0.0.1:1", "--help"},
	} {
		var out, errOut bytes.Buffer
		code, err := run(context.Background(), args, &out, &errOut)
		require.NoError(t, err, "%q", args)
		assert.Equal(t, 0, code, "%q", args)
		assert.Empty(t, errOut.String(), "%q", args)
		assert.Contains(t, out.String(), "agentcheck aap BASE_URL", "%q", args)
		fs.VisitAll(func(f *flag.Flag) {
			assert.Regexp(t, `(?m)^  -`+f.Name+`\b`, out.String(), "%q: the usage names --%s", args, f.Name)
		})
		assert.NotContains(t, out.String(), "sk-secret-env-key")
	}
}
