package aap2agui

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/store"
)

func textEntries(ids ...string) []store.Entry {
	out := make([]store.Entry, len(ids))
	for i, id := range ids {
		out[i] = store.Entry{Message: aap.UserText(strings.Repeat("x", 100)), AGUIID: id}
	}
	return out
}

// The histories cached stay within their bound, the least recently used
// dropped first; a history is given only at its own version, and a
// later version is never replaced by an earlier one.
func TestHistoryCache(t *testing.T) {
	one := historyBytes(textEntries("a"))
	h := newHistoryCache(3 * one)
	h.put("s1", 1, textEntries("a"))
	h.put("s2", 1, textEntries("b"))
	h.put("s3", 1, textEntries("c"))
	_, ok := h.get("s1", 1) // s1 used: s2 is now the least recent
	require.True(t, ok)
	h.put("s4", 1, textEntries("d"))
	for id, cached := range map[string]bool{"s1": true, "s2": false, "s3": true, "s4": true} {
		_, ok := h.get(id, 1)
		assert.Equal(t, cached, ok, id)
	}
	assert.LessOrEqual(t, h.size, h.max)

	_, ok = h.get("s1", 2)
	assert.False(t, ok, "another version")
	h.put("s1", 3, textEntries("a", "e"))
	assert.Equal(t, int64(3), h.version("s1"))
	h.put("s1", 2, textEntries("a"))
	assert.Equal(t, int64(3), h.version("s1"), "an earlier version does not replace a later")
	h.put("s5", 1, textEntries("a", "b", "c", "d"))
	assert.Zero(t, h.version("s5"), "larger than the bound: not kept")
	h.drop("s1")
	assert.Zero(t, h.version("s1"))
}

// A turn's tally makes each write that succeeds to its copy of the
// history and counts it; after a write that failed, the copy is unknown
// and reads go to the store.
func TestTally(t *testing.T) {
	ctx := context.Background()
	st := &failingWrites{Store: store.NewMemory()}
	require.NoError(t, st.CreateSession(ctx, &store.Session{ID: "s1"}, textEntries("1"), 0))
	tl := newHistoryCopy(st, "s1", 1, textEntries("1"))
	require.NoError(t, tl.AppendHistory(ctx, "s1", textEntries("2")))
	require.NoError(t, tl.ReplaceTail(ctx, "s1", 1, textEntries("d")))
	require.NoError(t, tl.SaveSession(ctx, &store.Session{ID: "s1"}, textEntries("3"), ""))
	hist, v, ok := tl.left()
	require.True(t, ok)
	assert.Equal(t, int64(4), v)
	stored, err := st.Store.History(ctx, "s1")
	require.NoError(t, err)
	assert.Equal(t, stored, hist, "the copy is what the store holds")
	got, err := st.Store.GetSession(ctx, "", "s1")
	require.NoError(t, err)
	assert.Equal(t, got.HistoryVersion, v, "and the version is the store's")

	st.fail = true
	assert.Error(t, tl.AppendHistory(ctx, "s1", textEntries("4")))
	_, _, ok = tl.left()
	assert.False(t, ok, "a failed write leaves the history unknown")
	st.fail = false
	fromStore, err := tl.History(ctx, "s1")
	require.NoError(t, err)
	assert.Equal(t, stored, fromStore)
	assert.Equal(t, 1, st.historyReads, "read from the store")
}

// failingWrites fails AppendHistory while fail is set, and counts the
// history reads.
type failingWrites struct {
	store.Store
	fail         bool
	historyReads int
}

func (s *failingWrites) AppendHistory(ctx context.Context, id string, entries []store.Entry) error {
	if s.fail {
		return errors.New("disk full")
	}
	return s.Store.AppendHistory(ctx, id, entries)
}

func (s *failingWrites) History(ctx context.Context, id string) ([]store.Entry, error) {
	s.historyReads++
	return s.Store.History(ctx, id)
}
