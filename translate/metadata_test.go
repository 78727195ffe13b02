package translate_test

import (
	"encoding/json"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/translate"
)

// Metadata merges key by key, the last write winning, in the first's
// order with new keys last; what is not an object is left out.
func TestMergeMetadata(t *testing.T) {
	for _, c := range []struct{ old, add, want string }{
		{``, `{"a":1}`, `{"a":1}`},
		{`{"a":1,"b":2}`, `{"b": 3, "c":{"d":[1, 2]}}`, `{"a":1,"b":3,"c":{"d":[1,2]}}`},
		{`{"a":1}`, `[1]`, `{"a":1}`},
		{`{"a":1}`, ``, `{"a":1}`},
		{`"x"`, `{"a":1.50}`, `{"a":1.50}`},
	} {
		assert.Equal(t, c.want, string(translate.MergeMetadata(json.RawMessage(c.old), json.RawMessage(c.add))), "%s + %s", c.old, c.add)
	}
}

// A page's metadata goes with the AAP messages made of its messages,
// matched from the end (what is new of them is the last), a seed's apart
// from the turn's; a permission is made of no message.
func TestRequestMetadata(t *testing.T) {
	body := []byte(`{"messages":[{"id":"u1","role":"user","content":"a","metadata":{"n":1}},
		{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"},"metadata":{"c":true}}]},
		{"id":"t1","role":"tool","toolCallId":"c1","content":"r","metadata":{"t":2}},
		{"id":"u2","role":"user","content":"b"}]}`)
	meta := translate.PageMetadata(body)
	page := []types.Message{{ID: "u1", Role: types.RoleUser}, {ID: "a1", Role: types.RoleAssistant}, {ID: "t1", Role: types.RoleTool, ToolCallID: "c1"}, {ID: "u2", Role: types.RoleUser}}
	msgs := []aap.Message{aap.UserText("a"),
		&aap.AssistantMessage{Content: aap.BlockContent(&aap.ToolUseBlock{ToolCallID: "c1", Name: "f", Input: json.RawMessage(`{}`)})},
		&aap.ToolMessage{ToolCallID: "c1", Content: aap.TextContent("r")}, aap.UserText("b"),
		&aap.ToolPermissionMessage{ToolCallID: "c9", Granted: true}}
	seed, rest := translate.RequestMetadata(msgs, 2, page, meta)
	assert.JSONEq(t, `[{"at":0,"metadata":{"n":1}},{"at":1,"toolCalls":{"c1":{"c":true}}}]`, string(seed))
	assert.JSONEq(t, `[{"at":0,"metadata":{"t":2}}]`, string(rest))

	seed, rest = translate.RequestMetadata(msgs[3:], 0, page, meta)
	assert.Nil(t, seed)
	assert.Nil(t, rest, "the last user message is u2, which has none (not u1's)")
	require.Empty(t, translate.PageMetadata([]byte(`{"messages":[{"id":"u","role":"user","content":"no metadata here"}]}`)).Messages)
}

// FuzzMergeMetadata checks that a merge of two objects holds every key of
// the second with its value, and is valid JSON.
func FuzzMergeMetadata(f *testing.F) {
	f.Add(`{"a":1}`, `{"b":2,"a":3}`)
	f.Add(`{}`, `{"\u00e9":[{}]}`)
	f.Fuzz(func(t *testing.T, old, add string) {
		got := translate.MergeMetadata(json.RawMessage(old), json.RawMessage(add))
		var a map[string]json.RawMessage
		if json.Unmarshal([]byte(add), &a) != nil || a == nil {
			return
		}
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(got, &m), "%s", got)
		for k, v := range a {
			var want, have any
			require.NoError(t, json.Unmarshal(v, &want))
			require.NoError(t, json.Unmarshal(m[k], &have))
			assert.Equal(t, want, have, k)
		}
	})
}
