package agui2aap_test

import (
	"net/http"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/demo"
)

// A resume of an interrupt that is open on the thread, sent without the
// assistant message that holds its tool call (only the user's message, or
// no message), is refused with RESUME_WITHOUT_CALL naming the interrupt
// and the missing call, not with UNKNOWN_INTERRUPT saying the interrupt is
// not open; nothing stored changes, and the resume sent with the whole
// conversation then works.
func TestResumeWithoutCall(t *testing.T) {
	e := newEnv(t)
	c := e.conv("without-call")
	c.say("search cats")
	r := c.run(t)
	require.Equal(t, "interrupt", r.outcome())
	it := r.interrupts()[0]
	before := e.thread(t, "without-call")

	for name, msgs := range map[string][]types.Message{
		"only the user message": c.Messages[:1],
		"no message":            {},
	} {
		t.Run(name, func(t *testing.T) {
			in := c.input("", []types.ResumeEntry{approve(it.ID)})
			in.Messages = msgs
			resp := e.post(t, "/agents/demo", in)
			require.Equal(t, http.StatusOK, resp.Status, resp.Body)
			assert.Equal(t, []string{"RUN_STARTED", "RUN_ERROR"}, resp.types())
			assert.Equal(t, agui2aap.CodeResumeWithoutCall, resp.errorCodeInBand())
			msg := resp.runError().Message
			assert.Contains(t, msg, it.ID)
			assert.Contains(t, msg, it.ToolCallID)
			assert.Contains(t, msg, "which is open on this thread")
			assert.Contains(t, msg, "no assistant message with its tool call")
			assert.NotContains(t, msg, "not open")
			assert.Equal(t, before, e.thread(t, "without-call"), "the stored thread is unchanged")
		})
	}

	// An interrupt that is not open is still UNKNOWN_INTERRUPT.
	in := c.input("", []types.ResumeEntry{approve("perm-nope")})
	in.Messages = c.Messages[:1]
	assert.Equal(t, agui2aap.CodeUnknownInterrupt, e.post(t, "/agents/demo", in).errorCodeInBand())

	r = c.run(t, approve(it.ID))
	assert.Equal(t, "success", r.outcome())
	assert.Equal(t, demo.SearchAnswer(demo.SearchResult("cats")), r.lastText())
}
