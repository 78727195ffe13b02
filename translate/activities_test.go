package translate_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/translate"
)

// A conversation's activity messages: a snapshot makes one or replaces
// it in place (not with replace false), a delta patches it, and what is
// not one (no id, content not an object, an unknown activity, a patch
// that fails) changes nothing; stored and read back, each is placed once,
// before the history message at its place, those past the end last.
func TestActivities(t *testing.T) {
	a := &translate.Activities{}
	require.NoError(t, a.Snapshot("a1", "task", json.RawMessage(`{"n":1}`), true, 1))
	require.NoError(t, a.Snapshot("a2", "surface", json.RawMessage(`{"s":"x"}`), true, 3))
	require.NoError(t, a.Snapshot("a1", "task", json.RawMessage(`{"n":9}`), false, 5), "replace false keeps it")
	require.NoError(t, a.Delta("a1", json.RawMessage(`[{"op":"add","path":"/m","value":true}]`)))
	require.Error(t, a.Snapshot("", "task", json.RawMessage(`{}`), true, 0))
	require.Error(t, a.Snapshot("a3", "task", json.RawMessage(`[1]`), true, 0))
	require.ErrorIs(t, a.Delta("zz", json.RawMessage(`[]`)), translate.ErrUnknownActivity)
	require.Error(t, a.Delta("a2", json.RawMessage(`[{"op":"remove","path":"/nope"}]`)))
	require.Error(t, a.Delta("a2", json.RawMessage(`{"op":"add"}`)))

	back, err := translate.ParseActivities(a.JSON())
	require.NoError(t, err)
	assert.Equal(t, `[{"at":1,"id":"a1","activityType":"task","content":{"n":1,"m":true}},{"at":3,"id":"a2","activityType":"surface","content":{"s":"x"}}]`, string(back.JSON()))

	place := back.Placer()
	var out []string
	for i := range 2 { // a history of two messages: a2's place is past its end
		for _, m := range place.Before(nil, i) {
			out = append(out, m.ID)
		}
		out = append(out, fmt.Sprintf("h%d", i))
	}
	for _, m := range place.Rest(nil) {
		out = append(out, m.ID)
	}
	assert.Equal(t, []string{"h0", "a1", "h1", "a2"}, out)
	_, err = translate.ParseActivities(json.RawMessage(`{"not":"a list"}`))
	assert.Error(t, err)
}

// The activity messages of a MESSAGES_SNAPSHOT are placed after the
// history messages made of the messages before them.
func TestActivitiesOfSnapshot(t *testing.T) {
	msgs := []types.Message{
		{ID: "u1", Role: types.RoleUser, Content: "hi"},
		{ID: "act", Role: types.RoleActivity, ActivityType: "a2ui", Content: map[string]any{"k": 1}},
		{ID: "m1", Role: types.RoleAssistant, Content: "yes"},
		{ID: "act2", Role: types.RoleActivity, ActivityType: "a2ui", Content: map[string]any{}},
	}
	_, ids, err := translate.MessagesToAAPWithIDs(msgs)
	require.NoError(t, err)
	a := translate.OfSnapshot(msgs, ids)
	assert.Equal(t, `[{"at":1,"id":"act","activityType":"a2ui","content":{"k":1}},{"at":2,"id":"act2","activityType":"a2ui","content":{}}]`, string(a.JSON()))
}

// FuzzActivities checks that no sequence of snapshots and deltas panics,
// that what is stored reads back the same, and that a placer gives each
// activity message once.
func FuzzActivities(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3}, `{"a":1}`, `[{"op":"add","path":"/b","value":2}]`)
	f.Add([]byte{4, 4, 0}, `[]`, `[{"op":"copy","from":"","path":"/c"}]`)
	f.Fuzz(func(t *testing.T, ops []byte, content, patch string) {
		a := &translate.Activities{}
		for i, op := range ops {
			id := fmt.Sprintf("a%d", op%3)
			if op&4 == 0 {
				_ = a.Snapshot(id, "t", json.RawMessage(content), op&8 == 0, i)
			} else {
				_ = a.Delta(id, json.RawMessage(patch))
			}
		}
		back, err := translate.ParseActivities(a.JSON())
		require.NoError(t, err)
		require.Equal(t, len(a.List), len(back.List))
		place := back.Placer()
		n := len(place.Before(nil, len(ops)/2)) + len(place.Rest(nil))
		require.Equal(t, len(a.List), n)
	})
}
