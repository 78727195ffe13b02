package aap2agui

import (
	"container/list"
	"context"
	"slices"
	"sync"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/store"
)

// The history cache: the histories a process keeps in memory between
// turns (Config.HistoryCache). A turn on a session this process served
// last reads none of its history again, and writes only what it adds.
// The store's history version (store.Session.HistoryVersion) says when
// another replica, or anything else, wrote since.

// historyCache holds, by session, the history this process last read or
// wrote, with its version, the least recently used dropped first past max
// bytes (approximately: what the entries hold). Entries are shared between
// the turns that use them and never changed: a turn that changes its
// history makes new slices.
type historyCache struct {
	mu   sync.Mutex
	max  int64
	size int64
	lru  list.List                // of *cachedHistory, the most recent first
	byID map[string]*list.Element // session id → its element of lru
}

type cachedHistory struct {
	id      string
	version int64
	entries []store.Entry
	size    int64
}

func newHistoryCache(max int64) *historyCache {
	return &historyCache{max: max, byID: map[string]*list.Element{}}
}

// lookup returns the history cached for session id and its version (0 when
// none is), as used.
func (h *historyCache) lookup(id string) ([]store.Entry, int64) {
	if h == nil {
		return nil, 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	el, ok := h.byID[id]
	if !ok {
		return nil, 0
	}
	h.lru.MoveToFront(el)
	k := el.Value.(*cachedHistory)
	return slices.Clip(k.entries), k.version
}

// version returns the version of the history cached for session id, 0 when
// none is.
func (h *historyCache) version(id string) int64 {
	_, v := h.lookup(id)
	return v
}

// get returns the history cached for session id at version v, if it is
// cached at that version.
func (h *historyCache) get(id string, v int64) ([]store.Entry, bool) {
	entries, cached := h.lookup(id)
	return entries, v != 0 && cached == v
}

// put caches entries as session id's history at version v, unless that
// version or a later one is cached already (the same history, or a turn
// that ended after this one), it is larger than the whole cache may be,
// or v is 0 (a history no version tells apart).
func (h *historyCache) put(id string, v int64, entries []store.Entry) {
	if h == nil || v != 0 && h.version(id) >= v {
		return
	}
	size := historyBytes(entries)
	h.mu.Lock()
	defer h.mu.Unlock()
	if el, ok := h.byID[id]; ok && el.Value.(*cachedHistory).version >= v {
		return
	}
	h.remove(id)
	if v == 0 || size > h.max {
		return
	}
	h.byID[id] = h.lru.PushFront(&cachedHistory{id: id, version: v, entries: slices.Clip(entries), size: size})
	h.size += size
	for h.size > h.max {
		h.remove(h.lru.Back().Value.(*cachedHistory).id)
	}
}

// update caches the history a turn of session id leaves (t), at its
// version, for the session's next turn here; when a write of the turn
// failed, neither is known, and the next turn reads the history from the
// store.
func (h *historyCache) update(id string, t *historyCopy) {
	if hist, v, ok := t.left(); ok {
		h.put(id, v, hist)
	} else {
		h.drop(id)
	}
}

// drop forgets session id's history.
func (h *historyCache) drop(id string) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.remove(id)
}

// remove forgets session id's history; the caller holds h.mu.
func (h *historyCache) remove(id string) {
	el, ok := h.byID[id]
	if !ok {
		return
	}
	k := h.lru.Remove(el).(*cachedHistory)
	delete(h.byID, id)
	h.size -= k.size
}

// historyBytes approximates what entries hold in memory: their text, ids,
// inputs and stored AG-UI values, and a fixed cost per entry and block.
func historyBytes(entries []store.Entry) int64 {
	const perEntry, perBlock = 128, 48
	n := int64(0)
	for _, e := range entries {
		size, blocks := aap.MessageSize(e.Message)
		n += int64(perEntry + len(e.AGUIID) + len(e.AGUI) + size + perBlock*blocks)
	}
	return n
}

// historyCopy is the store as one turn of a session sees it: each of the turn's
// history writes that succeeds is also made to the turn's own copy of the
// history, and counted, so that when the turn ends the process knows the
// history it leaves and that history's version (one more per write: see
// store.Session.HistoryVersion) without reading it back. A write that
// fails may or may not have been stored: the copy is then unknown, and
// History reads the store again.
type historyCopy struct {
	store.Sessions
	id string

	mu      sync.Mutex
	hist    []store.Entry
	version int64
	unknown bool
	// parts: a text of the turn's is held apart in parts, and the copy
	// holds its marker (AddHistoryPart): the history is not cached for the
	// next turn, which must send the text itself.
	parts bool
}

// newHistoryCopy starts the copy of session id's turn from its history hist at
// version v.
func newHistoryCopy(st store.Sessions, id string, v int64, hist []store.Entry) *historyCopy {
	return &historyCopy{Sessions: st, id: id, version: v, hist: slices.Clip(hist)}
}

// wrote counts a write of session id's history that returned err, and
// makes it to the copy (change) when it succeeded; a change the copy
// cannot take (ok false) leaves it unknown.
func (t *historyCopy) wrote(id string, err error, change func(hist []store.Entry) (_ []store.Entry, ok bool)) error {
	if id != t.id {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		t.unknown = true
		return err
	}
	t.version++
	if !t.unknown {
		hist, ok := change(t.hist)
		t.hist, t.unknown = slices.Clip(hist), !ok
	}
	return nil
}

// left returns the history the turn leaves and its version; ok is false
// when a write failed, so that neither is known.
func (t *historyCopy) left() (hist []store.Entry, version int64, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.hist, t.version, !t.unknown && !t.parts
}

// AddHistoryPart is the store's; the history it leaves is not cached.
func (t *historyCopy) AddHistoryPart(ctx context.Context, id string, part store.TextPart) error {
	t.mu.Lock()
	t.parts = true
	t.mu.Unlock()
	return t.Sessions.AddHistoryPart(ctx, id, part)
}

// appendEntries is a change of the copy: entries appended.
func appendEntries(entries []store.Entry) func([]store.Entry) ([]store.Entry, bool) {
	return func(hist []store.Entry) ([]store.Entry, bool) { return append(hist, entries...), true }
}

// AppendHistory is the store's, counted.
func (t *historyCopy) AppendHistory(ctx context.Context, id string, entries []store.Entry) error {
	return t.wrote(id, t.Sessions.AppendHistory(ctx, id, entries), appendEntries(entries))
}

// ReplaceTail is the store's, counted.
func (t *historyCopy) ReplaceTail(ctx context.Context, id string, from int, entries []store.Entry) error {
	return t.wrote(id, t.Sessions.ReplaceTail(ctx, id, from, entries), func(hist []store.Entry) ([]store.Entry, bool) {
		if from < 0 || from > len(hist) {
			return nil, false
		}
		return append(hist[:from:from], entries...), true
	})
}

// SaveSession is the store's, counted.
func (t *historyCopy) SaveSession(ctx context.Context, s *store.Session, appended []store.Entry, holder string) error {
	return t.wrote(s.ID, t.Sessions.SaveSession(ctx, s, appended, holder), appendEntries(appended))
}

// History is the turn's copy while every write succeeded, else the
// store's.
func (t *historyCopy) History(ctx context.Context, id string) ([]store.Entry, error) {
	if id == t.id {
		t.mu.Lock()
		hist, ok := t.hist, !t.unknown
		t.mu.Unlock()
		if ok {
			return hist, nil
		}
	}
	return t.Sessions.History(ctx, id)
}
