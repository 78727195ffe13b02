package demo_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/demo"
)

// With QuietPermissionResults the demo agent behaves like AAP servers that
// store the outcome of a tool_permission but do not send it: after a grant
// or a denial, no tool_result event (and no tool message in a none-mode
// response), while the history holds the tool message right after the
// call, as the normal agent stores it.
func TestAAPQuietPermissionResults(t *testing.T) {
	ctx := context.Background()
	for _, granted := range []bool{true, false} {
		for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
			name := "denied"
			if granted {
				name = "granted"
			}
			t.Run(name+"/"+string(mode), func(t *testing.T) {
				histories := map[bool][]aap.Message{}
				for _, quiet := range []bool{false, true} {
					c := newClient(newAAPServer(t, demo.AAPAgentOptions{QuietPermissionResults: quiet}), "")
					id := createSession(t, c, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Tools: untrusted}})
					evs := streamTurn(t, c, id, &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{aap.UserText("search dogs")}})
					call := evs[1].(*aap.ToolCall).ToolCallID
					perm := &aap.PostSessionTurnRequest{Stream: mode, Messages: []aap.Message{&aap.ToolPermissionMessage{ToolCallID: call, Granted: granted, Reason: "no"}}}
					var results, texts int
					if mode == aap.StreamNone {
						resp, err := c.Turn(ctx, id, perm)
						require.NoError(t, err)
						for _, m := range resp.Messages {
							switch m.Role() {
							case aap.RoleTool:
								results++
							case aap.RoleAssistant:
								texts++
							}
						}
					} else {
						for _, ev := range streamTurn(t, c, id, perm) {
							switch ev.(type) {
							case *aap.ToolResult:
								results++
							case *aap.TextDelta, *aap.Text:
								texts++
							}
						}
					}
					if quiet {
						assert.Zero(t, results, "a quiet agent sends no result")
					} else {
						assert.Equal(t, 1, results)
					}
					assert.Positive(t, texts, "the answer is sent")
					hist, err := c.History(ctx, id, aap.HistoryFull)
					require.NoError(t, err)
					histories[quiet] = hist
				}
				normal, quiet := histories[false], histories[true]
				require.Len(t, quiet, 4, "user, assistant[tool_use], tool, assistant")
				assert.Equal(t, aap.RoleTool, quiet[2].Role())
				want := demo.DeniedResult("no")
				if granted {
					want = demo.SearchResult("dogs")
				}
				assert.Equal(t, want, quiet[2].(*aap.ToolMessage).Content.PlainText())
				assert.Equal(t, normal[3], quiet[3], "the same answer")
			})
		}
	}
}
