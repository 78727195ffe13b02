package store_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/store"
)

// A history entry stored before Entry.AGUI existed reads back with none.
func TestEntryWithoutAGUI(t *testing.T) {
	got, err := store.DecodeEntries([][]byte{[]byte(`{"id":"m1","message":{"role":"user","content":"hi"}}`)})
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "m1", got[0].AGUIID)
	require.Nil(t, got[0].AGUI)
	enc, err := store.EncodeEntries(got)
	require.NoError(t, err)
	require.Equal(t, `{"id":"m1","message":{"role":"user","content":"hi"}}`, string(enc[0]), "written as before")
}
