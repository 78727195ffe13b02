package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/internal/testkit/doctest"
	"github.com/aapagui/aapagui/internal/testkit/proctest"
)

// --aap-version chooses the protocol versions served and where: version 3
// at the root and version 1 under /legacy share one store, so a session
// begun with PUT /session goes on at POST /sessions/:id/turns.
func TestAAPVersionFlag(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:", "--aap-version", "3", "--aap-version", "1=/legacy")
	legacy := aap.NewClient(p.URL()+"/legacy", aap.ClientOptions{})
	v, err := legacy.Version(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, v)
	resp, err := legacy.PutSession(ctx, &aap.PutSessionRequest{Agent: aap.AgentConfig{Name: "demo"}, Messages: []aap.Message{aap.UserText("hello there")}})
	require.NoError(t, err)
	assert.Equal(t, aap.StopEndTurn, resp.StopReason)

	current := aap.NewClient(p.URL(), aap.ClientOptions{})
	v, err = current.Version(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, v)
	turn, err := current.Turn(ctx, resp.SessionID, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("please think")}})
	require.NoError(t, err)
	assert.Equal(t, aap.StopEndTurn, turn.StopReason)
	hist, err := legacy.History(ctx, resp.SessionID, aap.HistoryFull)
	require.NoError(t, err)
	assert.Len(t, hist, 4)

	// Version 1 alone, at the root.
	only := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:", "--aap-version", "1")
	v, err = aap.NewClient(only.URL(), aap.ClientOptions{}).Version(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, v)

	for args, want := range map[string][]string{
		`--aap-version: AAP version "4": want 1, 2 or 3`: {"--aap-version", "4"},
		"both at /":                  {"--aap-version", "1", "--aap-version", "2"},
		`path "x" must start with /`: {"--aap-version", "2=x"},
	} {
		err := run(append([]string{"--store", "memory:", "--listen", "127.0.0.1:0"}, want...))
		require.Error(t, err, want)
		assert.Contains(t, err.Error(), args)
	}
}

// TestREADMEOldVersions runs docs/USING.md's version 1 example as written:
// aap2agui started with docs/USING.md's flags, then its curl conversation
// (only localhost:8080 becomes the test's address).
func TestREADMEOldVersions(t *testing.T) {
	t.Parallel()
	start := doctest.Blocks(t, "../../docs/USING.md", "sh", "--aap-version 1=/legacy")
	require.Len(t, start, 1)
	line, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(start[0]), "go run ./cmd/aap2agui "), "#")
	args := append([]string{"--listen", "127.0.0.1:0", "--store", "memory:"}, strings.Fields(line)...)
	p := proctest.Start(t, nil, args...)

	blocks := doctest.Blocks(t, "../../docs/USING.md", "sh", "localhost:8080/legacy/session")
	require.Len(t, blocks, 1)
	out := doctest.Shell(t, strings.ReplaceAll(blocks[0], "localhost:8080", p.Addr))
	assert.NotContains(t, out, `"error":`, "no step failed")
	assert.Regexp(t, `^id: [A-Za-z0-9_-]{11}:1\nevent: session_start\ndata: \{"sessionId":"sess_[0-9a-f]+"\}\n\nid: [A-Za-z0-9_-]{11}:2\nevent: turn_start\n`, out)
	assert.Contains(t, out, "event: text_delta")
	assert.Contains(t, out, "event: thinking\n")
	assert.Contains(t, out, `"history":{"full":[{"role":"system","content":"Be brief."}`)
	assert.Contains(t, out, `{"stopReason":"end_turn","messages":[{"role":"assistant","content":"You said: hello again"}]}`)
}
