package agui2aap_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/internal/userid"
)

// runBodies are a RunAgentInput naming thread (a JSON string as the
// client wrote it) in the forms the bridge's decoder reads by different
// paths: string contents (the fast path), no message content to skip,
// and snake_case names (the SDK's decoder).
func runBodies(thread string) map[string]string {
	return map[string]string{
		"fast path":  `{"threadId":` + thread + `,"runId":"r1","state":{},"messages":[{"id":"u1","role":"user","content":"hi"}],"tools":[],"context":[],"forwardedProps":{}}`,
		"no content": `{"threadId":` + thread + `,"runId":"r1","state":{},"messages":[],"tools":[],"context":[],"forwardedProps":{}}`,
		"snake_case": `{"thread_id":` + thread + `,"run_id":"r1","state":{},"messages":[{"id":"u1","role":"user","content":"hi"}],"tools":[],"context":[],"forwarded_props":{}}`,
	}
}

// TestIDsReadAsTheyShow: a run or a connect whose threadId holds a
// character that shows as nothing or reorders the text (zero-width,
// bidi), escaped or raw, or U+FFFD (what a lone surrogate escape and a
// byte that is not UTF-8 decode to, so that "\ud800" and "\udfff" would
// name one thread) is a 400 invalid_input naming the code point, by
// every decoding path; a user header holding one is a 400 invalid_user.
// Nothing is stored and the AAP server gets no session.
func TestIDsReadAsTheyShow(t *testing.T) {
	const header = "X-User-Id"
	e := newEnv(t, func(c *agui2aap.Config) { c.Users.Header = header })
	for name, tc := range map[string]struct{ thread, want string }{
		"zero width space":       {`"al\u200bice"`, "U+200B"},
		"zero width joiner, raw": {"\"al\u200dice\"", "U+200D"},
		"byte order mark":        {`"\ufefft1"`, "U+FEFF"},
		"right-to-left override": {`"t\u202e1"`, "U+202E"},
		"left-to-right isolate":  {`"t\u20661\u2069"`, "U+2066"},
		"lone high surrogate":    {`"t\ud800"`, "U+FFFD"},
		"lone low surrogate":     {`"t\udfff"`, "U+FFFD"},
		"not UTF-8":              {"\"t\xff\"", "U+FFFD"},
	} {
		for form, body := range runBodies(tc.thread) {
			for _, path := range []string{"/agents/demo", "/agents/demo/connect"} {
				r := e.post(t, path, body, header, "alice")
				assert.Equal(t, http.StatusBadRequest, r.Status, "%s, %s, %s: %s", name, form, path, r.Body)
				assert.Equal(t, "invalid_input", r.errorCode(), "%s, %s, %s", name, form, path)
				assert.Contains(t, r.errorMessage(), "threadId holds", "%s, %s, %s", name, form, path)
				assert.Contains(t, r.errorMessage(), tc.want, "%s, %s, %s", name, form, path)
			}
		}
	}
	for name, user := range map[string]string{
		"zero width space":       "al\u200bice",
		"right-to-left override": "\u202eecila",
		"soft hyphen":            "al\u00adice",
		"replacement character":  "alice\ufffd",
	} {
		c := e.conv("t1")
		c.say("hi")
		r := e.post(t, "/agents/demo", c.input("", nil), header, user)
		assert.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", name, r.Body)
		assert.Equal(t, "invalid_user", r.errorCode(), name)
		assert.Contains(t, r.errorMessage(), "U+", name)
		assert.NotContains(t, r.Body, "lice", "%s: the message never holds the user", name)
		assert.NotContains(t, r.Body, "ecila", "%s: the message never holds the user", name)
	}
	for _, user := range []string{"alice", "al\u200bice", "\u202eecila", "al\u00adice", "alice\ufffd"} {
		n, err := e.Store.CountThreads(bridgetest.Context(t), userid.Scope("", user))
		require.NoError(t, err)
		assert.Zero(t, n, "nothing stored for %q", user)
	}
	assert.Empty(t, e.sessions(t), "no AAP session was made")
}
