package agui2aap_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
)

// A thread's first AAP session is logged as started; only a later one (a
// rewritten history here) as the thread moving, from the session it
// leaves. The same with an AAP server of version 1, whose sessions begin
// with PUT /session.
func TestSessionLogLines(t *testing.T) {
	for _, version := range []int{3, 1} {
		t.Run("version "+string(rune('0'+version)), func(t *testing.T) {
			upstream := httptest.NewServer(demo.NewAAPAgent(demo.AAPAgentOptions{Version: version}))
			t.Cleanup(upstream.Close)
			var logs bridgetest.SyncBuffer
			e := newBridge(t, upstream.URL, func(c *agui2aap.Config) {
				c.Logger = zerolog.New(&logs).Level(zerolog.InfoLevel)
			})
			c := e.conv("logged")
			c.say("hello there")
			c.run(t)
			var started []map[string]any
			require.Eventually(t, func() bool {
				started = bridgetest.LogLines(t, logs.String(), "thread started on a new AAP session")
				return len(started) == 1
			}, bridgetest.Timeout, 5*time.Millisecond)
			first := started[0]["session"]
			assert.NotEmpty(t, first)
			assert.Equal(t, "logged", started[0]["thread"])
			assert.Empty(t, bridgetest.LogLines(t, logs.String(), "thread moved to a new AAP session"), "a new thread moves nowhere")

			// An edited history: the thread moves to a new session.
			c.Messages = []types.Message{{ID: "edited", Role: types.RoleUser, Content: "hello again"}}
			c.run(t)
			var moved []map[string]any
			require.Eventually(t, func() bool {
				moved = bridgetest.LogLines(t, logs.String(), "thread moved to a new AAP session")
				return len(moved) == 1
			}, bridgetest.Timeout, 5*time.Millisecond)
			assert.Equal(t, first, moved[0]["from"])
			assert.NotEqual(t, first, moved[0]["session"])
			assert.Len(t, bridgetest.LogLines(t, logs.String(), "thread started on a new AAP session"), 1)
		})
	}
}
