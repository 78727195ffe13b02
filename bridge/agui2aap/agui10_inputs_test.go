package agui2aap_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// @ag-ui/core 1.0 inputs through real HTTP (docs/MAPPING.md, "Messages and
// content" and "AG-UI 1.0"): what AAP can hold reaches the AAP server, the
// rest is accepted as the rules say.

const pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="

// TestUserImagePartsReachAAP: a user message with image parts, by data and
// by URL, in the 1.0 shape (image with a source) and the legacy one
// (binary), reaches the AAP server as image blocks in order, beside the
// text; an http:// image is a 400 naming the message, never dropped.
func TestUserImagePartsReachAAP(t *testing.T) {
	fake := newFakeAAP(t, answerText("Two pixels and two animals."))
	e := newBridge(t, fake.URL)
	body := `{"threadId":"images-1","runId":"run-1","state":{},"tools":[],"context":[],"forwardedProps":{},"messages":[` +
		`{"id":"u1","role":"user","content":[{"type":"text","text":"what are these?"},` +
		`{"type":"image","source":{"type":"data","value":"` + pixel + `","mimeType":"image/png"}},` +
		`{"type":"image","source":{"type":"url","value":"https://example.com/cat.png","mimeType":"image/png"}},` +
		`{"type":"binary","mimeType":"image/jpeg","url":"https://example.com/dog.jpg"},` +
		`{"type":"binary","mimeType":"image/png","data":"` + pixel + `"}]}]}`
	r := summarize(e.post(t, "/agents/demo", body))
	require.Equal(t, http.StatusOK, r.Status, r.Body)
	assert.Equal(t, "success", r.outcome())
	assert.Equal(t, "Two pixels and two animals.", r.lastText())

	turns := fake.turnRequests()
	require.Len(t, turns, 1)
	require.Len(t, turns[0].Messages, 1)
	b, err := json.Marshal(turns[0].Messages[0])
	require.NoError(t, err)
	assert.JSONEq(t, `{"role":"user","content":[{"type":"text","text":"what are these?"},`+
		`{"type":"image","url":"data:image/png;base64,`+pixel+`"},`+
		`{"type":"image","url":"https://example.com/cat.png"},`+
		`{"type":"image","url":"https://example.com/dog.jpg"},`+
		`{"type":"image","url":"data:image/png;base64,`+pixel+`"}]}`, string(b))

	bad := `{"threadId":"images-2","runId":"run-1","messages":[{"id":"u-http","role":"user","content":[` +
		`{"type":"image","source":{"type":"url","value":"http://example.com/cat.png"}}]}]}`
	resp := e.post(t, "/agents/demo", bad)
	assert.Equal(t, http.StatusBadRequest, resp.Status, resp.Body)
	assert.Contains(t, resp.Body, "u-http", "the error names the message")
	assert.Len(t, fake.turnRequests(), 1, "nothing reached the AAP server")
}

// encryptedHistory is a 1.0 client's thread after a run of an agent that
// reasons with encrypted values (Anthropic's signature and redacted data,
// OpenAI's encrypted_content on the message and the call), then a new user
// message. Written as JSON: the Go SDK's ToolCall has no encryptedValue.
const encryptedHistory = `{"id":"u1","role":"user","content":[{"type":"text","text":"weather here?"},{"type":"image","source":{"type":"data","value":"` + pixel + `","mimeType":"image/png"}}]},` +
	`{"id":"r1","role":"reasoning","content":"A map of Lima.","encryptedValue":"EqQBsignature=="},` +
	`{"id":"r2","role":"reasoning","content":"","encryptedValue":"EmwKredacted=="},` +
	`{"id":"a1","role":"assistant","content":"Checking Lima.","encryptedValue":"gAAAAmessage","toolCalls":[` +
	`{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"Lima\"}"},"encryptedValue":"gAAAAcall"}]},` +
	`{"id":"t1","role":"tool","toolCallId":"c1","content":"22°C","encryptedValue":"gAAAAtool"},` +
	`{"id":"a2","role":"assistant","content":"It is 22°C."}`

// TestEncryptedHistoryAccepted: a thread the bridge has never seen, whose
// history carries encryptedValue on reasoning, assistant and tool messages
// and on a tool call, is no 400: the AAP session is seeded with all AAP can
// hold (the image, the reasoning text as a thinking block, the call, its
// result) and none of the values, which AAP has no field for. The next
// run, the same history plus a message, stays on that session.
func TestEncryptedHistoryAccepted(t *testing.T) {
	fake := newFakeAAP(t, answerText("Sure."))
	e := newBridge(t, fake.URL)
	tools := `"tools":[{"name":"get_weather","description":"weather","parameters":{"type":"object"}}]`
	run := func(runID, more string) *result {
		body := `{"threadId":"enc-1","runId":"` + runID + `","state":{},` + tools + `,"context":[],"forwardedProps":{},"messages":[` +
			encryptedHistory + more + `]}`
		r := summarize(e.post(t, "/agents/demo", body))
		require.Equal(t, http.StatusOK, r.Status, r.Body)
		require.Nil(t, r.Error, "run %s failed", runID)
		return r
	}
	r := run("run-1", `,{"id":"u2","role":"user","content":"and tomorrow?"}`)
	assert.Equal(t, "Sure.", r.lastText())
	answerID := ""
	for _, ev := range r.Events {
		if s, ok := ev.(*events.TextMessageStartEvent); ok {
			answerID = s.MessageID
		}
	}
	require.NotEmpty(t, answerID)

	fake.mu.Lock()
	require.Len(t, fake.creates, 1)
	seed := fake.creates[0].Messages
	fake.mu.Unlock()
	b, err := json.Marshal(seed)
	require.NoError(t, err)
	assert.JSONEq(t, `[{"role":"user","content":[{"type":"text","text":"weather here?"},{"type":"image","url":"data:image/png;base64,`+pixel+`"}]},`+
		`{"role":"assistant","content":[{"type":"thinking","thinking":"A map of Lima."},{"type":"thinking","thinking":""},{"type":"text","text":"Checking Lima."},`+
		`{"type":"tool_use","toolCallId":"c1","name":"get_weather","input":{"location":"Lima"}}]},`+
		`{"role":"tool","toolCallId":"c1","content":"22°C"},{"role":"assistant","content":"It is 22°C."}]`, string(b),
		"the seed holds what AAP can hold")

	run("run-2", `,{"id":"u2","role":"user","content":"and tomorrow?"},{"id":"`+answerID+`","role":"assistant","content":"Sure."},{"id":"u3","role":"user","content":"thanks"}`)
	turns := fake.turnRequests()
	fake.mu.Lock()
	creates := len(fake.creates)
	fake.mu.Unlock()
	assert.Equal(t, 1, creates, "the second run stays on the thread's session")
	require.Len(t, turns, 2)
	all, err := json.Marshal(turns)
	require.NoError(t, err)
	for _, secret := range []string{"EqQBsignature", "EmwKredacted", "gAAAAmessage", "gAAAAcall", "gAAAAtool"} {
		assert.NotContains(t, string(all)+string(b), secret, "an encrypted value reached the AAP server")
	}
	last, err := json.Marshal(turns[1].Messages)
	require.NoError(t, err)
	assert.JSONEq(t, `[{"role":"user","content":"thanks"}]`, string(last))
}
