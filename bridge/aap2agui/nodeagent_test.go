package aap2agui_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
)

// startNodeAgent runs interop/agents/agui-agent.mjs and returns its URL;
// the process is killed when the test ends.
func startNodeAgent(t *testing.T) string {
	t.Helper()
	return startNodeServer(t, filepath.Join("..", "..", "interop"), filepath.Join("agents", "agui-agent.mjs"), []string{"@ag-ui/encoder", "@ag-ui/core"})
}

// startNodeServer runs the Node script (a path relative to dir, which
// holds the node_modules it uses) in dir, waits for the "LISTENING <port>"
// line it prints and returns its URL; the process is killed when the test
// ends. Without node or the npm packages pkgs the test is skipped, unless
// AAPAGUI_REQUIRE_INTEROP=1 (CI), where that is a failure.
func startNodeServer(t *testing.T, dir, script string, pkgs []string, env ...string) string {
	t.Helper()
	unavailable := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv("AAPAGUI_REQUIRE_INTEROP") == "1" {
			t.Fatalf("%s (AAPAGUI_REQUIRE_INTEROP=1)", msg)
		}
		t.Skipf("%s; set AAPAGUI_REQUIRE_INTEROP=1 to make this a failure", msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		unavailable("node is not installed")
	}
	dir, err = filepath.Abs(dir)
	require.NoError(t, err)
	for _, pkg := range pkgs {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
			unavailable("%s is not installed in %s (run npm ci there)", pkg, filepath.Join(dir, "node_modules"))
		}
	}

	cmd := exec.Command(node, filepath.Join(dir, script))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bridgetest.SyncBuffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() && stderr.String() != "" {
			t.Logf("%s stderr:\n%s", script, stderr.String())
		}
	})

	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "LISTENING "); ok {
				port <- p
			}
		}
		close(port)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case p, ok := <-port:
		require.True(t, ok, "%s did not say LISTENING; stderr:\n%s", script, stderr.String())
		return "http://127.0.0.1:" + p
	case <-bridgetest.Context(t).Done():
		t.Fatalf("%s did not start; stderr:\n%s", script, stderr.String())
		return ""
	}
}

// TestNodeAgent runs each scenario of the Node AG-UI agent (built on
// @ag-ui/encoder and @ag-ui/core) through aap2agui in delta mode, checking
// the exact AAP events and the history.
func TestNodeAgent(t *testing.T) {
	e := newEnv(t, startNodeAgent(t))
	tests := []struct {
		name    string
		session aap.PostSessionsRequest
		steps   []step
	}{
		{
			name: "text",
			steps: []step{{
				send: user("text"), want: []part{{kind: "text", text: "Hello from Node.", deltas: []string{"Hello ", "from Node."}}},
				stop: aap.StopEndTurn, produced: []string{assistantText("Hello from Node.")},
			}},
		},
		{
			name:    "chunks: TEXT_MESSAGE_CHUNK and TOOL_CALL_CHUNK, then the tool result",
			session: aap.PostSessionsRequest{Tools: []aap.ToolSpec{weatherSpec}},
			steps: []step{
				{
					send: user("chunks"),
					want: []part{
						{kind: "text", text: "Checking the weather.", deltas: []string{"Checking ", "the weather."}},
						call("node-call-1", "get_weather", `{"location":"Paris"}`),
					},
					stop: aap.StopToolUse,
					produced: []string{`{"role":"assistant","content":[{"type":"text","text":"Checking the weather."},` +
						`{"type":"tool_use","toolCallId":"node-call-1","name":"get_weather","input":{"location":"Paris"}}]}`},
				},
				{
					send: func([]string) []aap.Message {
						return []aap.Message{&aap.ToolMessage{ToolCallID: "node-call-1", Content: aap.TextContent("Sunny")}}
					},
					want: []part{{kind: "text", text: "Tool said: Sunny", deltas: []string{"Tool said: ", "Sunny"}}},
					stop: aap.StopEndTurn, produced: []string{assistantText("Tool said: Sunny")},
				},
			},
		},
		{
			name: "reasoning",
			steps: []step{{
				send: user("reasoning"),
				want: []part{
					{kind: "thinking", text: "Let me think.", deltas: []string{"Let me ", "think."}},
					{kind: "text", text: "Thought it through.", deltas: []string{"Thought it ", "through."}},
				},
				stop:     aap.StopEndTurn,
				produced: []string{`{"role":"assistant","content":[{"type":"thinking","thinking":"Let me think."},{"type":"text","text":"Thought it through."}]}`},
			}},
		},
		{
			name: "state: snapshot and JSON Patch delta reach the next run",
			steps: []step{
				{
					send: user("state"), want: []part{{kind: "text", text: "State updated.", deltas: []string{"State ", "updated."}}},
					stop: aap.StopEndTurn, produced: []string{assistantText("State updated.")},
				},
				{
					send: user("show state"),
					want: []part{{kind: "text", text: `State: {"counter":2,"from":"node","items":["a"]}`, deltas: []string{"State: ", `{"counter":2,"from":"node","items":["a"]}`}}},
					stop: aap.StopEndTurn, produced: []string{assistantText(`State: {"counter":2,"from":"node","items":["a"]}`)},
				},
			},
		},
		{
			name:    "interrupt, then resume with permission granted",
			session: aap.PostSessionsRequest{Agent: aap.AgentConfig{Tools: []aap.ServerToolRef{{Name: demo.SearchTool}}}},
			steps: []step{
				{
					send: user("interrupt"), want: []part{call("node-search-1", "web_search", `{"query":"node"}`)},
					stop: aap.StopToolUse, produced: []string{toolUse("node-search-1", "web_search", `{"query":"node"}`)},
				},
				{
					send: func([]string) []aap.Message {
						return []aap.Message{&aap.ToolPermissionMessage{ToolCallID: "node-search-1", Granted: true}}
					},
					want: []part{
						result("node-search-1", "Search results for node"),
						{kind: "text", text: "Resumed: approved.", deltas: []string{"Resumed: ", "approved."}},
					},
					stop:     aap.StopEndTurn,
					produced: []string{toolMessage("node-search-1", "Search results for node"), assistantText("Resumed: approved.")},
				},
			},
		},
		{
			name:    "interrupt, then resume with permission denied",
			session: aap.PostSessionsRequest{Agent: aap.AgentConfig{Tools: []aap.ServerToolRef{{Name: demo.SearchTool}}}},
			steps: []step{
				{
					send: user("interrupt"), want: []part{call("node-search-1", "web_search", `{"query":"node"}`)},
					stop: aap.StopToolUse, produced: []string{toolUse("node-search-1", "web_search", `{"query":"node"}`)},
				},
				{
					send: func([]string) []aap.Message {
						return []aap.Message{&aap.ToolPermissionMessage{ToolCallID: "node-search-1", Granted: false, Reason: "no"}}
					},
					want: []part{
						result("node-search-1", "Search was denied"),
						{kind: "text", text: "Resumed: denied.", deltas: []string{"Resumed: ", "denied."}},
					},
					stop:     aap.StopEndTurn,
					produced: []string{toolMessage("node-search-1", "Search was denied"), assistantText("Resumed: denied.")},
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := e.createSession(t, tt.session)
			var conversation []string
			for i, st := range tt.steps {
				msgs := st.send(nil)
				evs, err := e.stream(t, id, aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: msgs})
				require.NoError(t, err, "step %d", i)
				assert.Equal(t, eventsOf(t, aap.StreamDelta, st.want, st.stop), eventLines(t, evs), "step %d: events", i)
				for _, m := range msgs {
					if m.Role() != aap.RoleToolPermission {
						conversation = append(conversation, messageLines(t, []aap.Message{m})...)
					}
				}
				conversation = append(conversation, st.produced...)
				assert.Equal(t, conversation, e.history(t, id, aap.HistoryFull), "step %d: history", i)
			}
		})
	}
}
