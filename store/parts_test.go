package store_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/internal/textparts"
	"github.com/aapagui/aapagui/store"
)

// A row that holds the marker of a text held in parts is stored marked:
// no JSON, so that a process of an earlier build, which would give the
// marker as text, refuses it; rows without one are stored as they were.
func TestRowsWithPartsAreMarked(t *testing.T) {
	held := textparts.Marker("ref-1", 2) + "the rest"
	rows, err := store.EncodeEntries([]store.Entry{
		{Message: &aap.AssistantMessage{Content: aap.TextContent(held)}, AGUIID: "m1"},
		{Message: aap.UserText("plain"), AGUIID: "m2"},
	})
	require.NoError(t, err)
	assert.False(t, json.Valid(rows[0]), "the row with a marker: %q", rows[0])
	assert.Equal(t, `{"id":"m2","message":{"role":"user","content":"plain"}}`, string(rows[1]))

	parts := [][]byte{[]byte("one "), []byte("two ")}
	read := func(ref string, n int) ([][]byte, error) { return parts[:n], nil }
	expanded, err := store.ExpandRows(rows, read)
	require.NoError(t, err)
	entries, err := store.DecodeEntries(expanded)
	require.NoError(t, err)
	assert.Equal(t, "one two the rest", entries[0].Message.(*aap.AssistantMessage).Content.Text)
	assert.Equal(t, "plain", entries[1].Message.(*aap.UserMessage).Content.PlainText())

	msg, err := json.Marshal(map[string]string{"id": "m1", "role": "assistant", "content": held})
	require.NoError(t, err)
	tail := &store.RecordTail{Messages: []json.RawMessage{msg}}
	require.NoError(t, store.CheckRecordTail(tail))
	assert.False(t, json.Valid(tail.Messages[0]), "the record's message with a marker is marked")
	marked := string(tail.Messages[0])
	require.NoError(t, store.CheckRecordTail(tail), "a save tried again")
	assert.Equal(t, marked, string(tail.Messages[0]), "marked once")
	tail.Messages[0] = append(json.RawMessage("~"), `{"not json`...)
	assert.Error(t, store.CheckRecordTail(tail), "a marked row is checked all the same")
}
