package aap2agui_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
)

// A path whose session id is empty (a client that lost the id POST
// /sessions gave it: /sessions//turns) or cannot be an id gets 400
// invalid_session_id naming the rule, in every version, rather than a 404
// saying that the session no longer exists; a well-formed unknown id is
// still a 404 naming it.
func TestSessionIDChecked(t *testing.T) {
	e := newEnv(t, demoAgent(t), allVersions)
	turn := `{"messages":[{"role":"user","content":"hi"}]}`
	tests := []struct {
		name, method, path, body string
		status                   int
		code, says               string
	}{
		{"empty id, turn", http.MethodPost, "/sessions//turns", turn, 400, "invalid_session_id", "the session id in the path is empty"},
		{"empty id, history", http.MethodGet, "/sessions//history?type=full", "", 400, "invalid_session_id", "the session id in the path is empty"},
		{"empty id, version 2 history", http.MethodGet, "/v2/session//history?type=full", "", 400, "invalid_session_id", "the session id in the path is empty"},
		{"space", http.MethodGet, "/sessions/sess%20abc", "", 400, "invalid_session_id", `the session id "sess abc" is malformed`},
		{"quote", http.MethodDelete, "/sessions/sess%22x", "", 400, "invalid_session_id", `is malformed`},
		{"too long", http.MethodGet, "/sessions/" + strings.Repeat("a", 129), "", 400, "invalid_session_id", "is malformed"},
		{"unknown", http.MethodGet, "/sessions/sess_0123456789abcdef0123456789abcdef", "", 404, "session_not_found", `no session with id "sess_0123456789abcdef0123456789abcdef"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := doRaw(t, tt.method, e.Root+tt.path, "", tt.body)
			requireJSONError(t, r, tt.status, tt.code)
			var er aap.ErrorResponse
			require.NoError(t, json.Unmarshal([]byte(r.Body), &er))
			assert.Contains(t, er.Error.Message, tt.says)
			assert.NotContains(t, er.Error.Message, "no longer exists")
			if tt.status == 400 {
				assert.Contains(t, er.Error.Message, "1 to 128 letters, digits", "the message names the rule")
			}
		})
	}
}
