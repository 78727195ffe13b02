package agui2aap_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Input the bridge could only misread is a 400 naming the problem, and
// nothing reaches the AAP server or the store.
func TestStrictRunInput(t *testing.T) {
	f := newFakeAAP(t, answerText("never"))
	e := newBridge(t, f.URL)
	const rest = `"runId":"r1","tools":[],"context":[],"forwardedProps":{}`
	user := `{"id":"u1","role":"user","content":"hi"}`
	call := `{"id":"a1","role":"assistant","toolCalls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]}`
	for _, tc := range []struct{ name, body, want string }{
		{"duplicate message ids", `{"threadId":"t1","state":{},"messages":[` + user + `,{"id":"u1","role":"user","content":"again"}],` + rest + `}`, "same id"},
		{"tool message without toolCallId", `{"threadId":"t1","state":{},"messages":[` + user + `,` + call + `,{"id":"t1","role":"tool","content":"x"}],` + rest + `}`, "without a toolCallId"},
		{"tool message for an unknown call", `{"threadId":"t1","state":{},"messages":[` + user + `,` + call + `,{"id":"t1","role":"tool","toolCallId":"call_9","content":"x"}],` + rest + `}`, "call_9"},
		{"state is an array", `{"threadId":"t1","state":[1],"messages":[` + user + `],` + rest + `}`, "state must be a JSON object"},
		{"state is a string", `{"threadId":"t1","state":"s","messages":[` + user + `],` + rest + `}`, "state must be a JSON object"},
		{"thread id too long", `{"threadId":"` + strings.Repeat("t", 257) + `","state":{},"messages":[` + user + `],` + rest + `}`, "at most 256"},
		{"thread id with a control character", `{"threadId":"t\u0007x","state":{},"messages":[` + user + `],` + rest + `}`, "control character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.post(t, "/agents/demo", tc.body)
			require.Equal(t, http.StatusBadRequest, r.Status, r.Body)
			assert.Equal(t, "invalid_input", r.errorCode())
			assert.Contains(t, r.Body, tc.want)
		})
	}
	assert.Empty(t, f.turnRequests(), "nothing reached the AAP server")

	r := e.post(t, "/agents/demo", `{"threadId":"t1","state":null,"messages":[`+user+`],`+rest+`}`)
	assert.Equal(t, http.StatusOK, r.Status, "a null state is no state: %s", r.Body)
}
