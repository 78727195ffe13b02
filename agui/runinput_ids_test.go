package agui_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/internal/ident"
)

// TestDecodedIDsKeepNoSurrogate: every path of the decoder (string
// contents skipped, no content to skip, snake_case names read by the
// SDK's decoder) makes a lone surrogate escape in threadId, high or low,
// and a byte that is not UTF-8, into U+FFFD, as encoding/json does: the
// decoded ids "\ud800" and "\udfff" are one, and the bridges' id check
// (ident.Check, which refuses U+FFFD) is what tells them apart from a
// real id.
func TestDecodedIDsKeepNoSurrogate(t *testing.T) {
	bodies := map[string]func(thread string) string{
		"fast path": func(th string) string {
			return `{"threadId":` + th + `,"messages":[{"id":"u1","role":"user","content":"hi"}]}`
		},
		"no content": func(th string) string { return `{"threadId":` + th + `,"messages":[]}` },
		"snake_case": func(th string) string {
			return `{"thread_id":` + th + `,"messages":[{"id":"u1","role":"user","content":"hi"}]}`
		},
	}
	for form, body := range bodies {
		for _, thread := range []string{`"t\ud800"`, `"t\udfff"`, `"t\udfff\ud800"`, "\"t\xff\"", "\"t\xed\xa0\x80\""} {
			in, err := agui.DecodeRunAgentInputLazy([]byte(body(thread)))
			require.NoError(t, err, "%s %s", form, thread)
			assert.Contains(t, in.ThreadID, "\ufffd", "%s %s", form, thread)
			assert.Error(t, ident.Check(in.ThreadID), "%s %s: refused by the bridges", form, thread)
		}
	}
}
