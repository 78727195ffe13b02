package store

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Memory is a Store in process memory, for tests and throwaway runs.
// Messages are kept serialized, as in SQLite, so that callers never share
// memory with it.
type Memory struct {
	mu       sync.Mutex
	seq      int64
	sessions map[string]*memSession
	owners   ownerSessions // the sessions by owner, in seq order (memory_order.go)
	th       memThreads
	runLogs  memRunLogs
}

type memSession struct {
	s       *Session
	history [][]byte // serialized entryJSON
	holder  string
	until   time.Time
	version int64 // the session's HistoryVersion
	parts   memParts
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{sessions: make(map[string]*memSession), owners: ownerSessions{}}
}

func (m *Memory) get(owner, id string) (*memSession, error) {
	ms, ok := m.sessions[id]
	if !ok || ms.s.Owner != owner {
		return nil, ErrNotFound
	}
	return ms, nil
}

// CreateSession implements Store.
func (m *Memory) CreateSession(_ context.Context, s *Session, seed []Entry, max int) error {
	hist, err := EncodeEntries(seed)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.sessions[s.ID]; ok {
		return ErrExists
	}
	if max > 0 && len(m.owners[s.Owner]) >= max {
		return ErrLimit
	}
	m.seq++
	s.Seq, s.HistoryVersion = m.seq, 1
	c, err := copySession(s)
	if err != nil {
		return err
	}
	// As SQLite stores it: UTC, to the millisecond.
	c.CreatedAt = c.CreatedAt.UTC().Truncate(time.Millisecond)
	ms := &memSession{s: c, history: hist, version: 1}
	m.sessions[s.ID] = ms
	m.owners.add(ms)
	return nil
}

// GetSession implements Store.
func (m *Memory) GetSession(_ context.Context, owner, id string) (*Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ms, err := m.get(owner, id)
	if err != nil {
		return nil, err
	}
	return ms.session()
}

// session is a copy of ms's session, with its HistoryVersion.
func (ms *memSession) session() (*Session, error) {
	c, err := copySession(ms.s)
	if err != nil {
		return nil, err
	}
	c.HistoryVersion = ms.version
	return c, nil
}

// ListSessions implements Store. A limit of zero or less lists nothing.
func (m *Memory) ListSessions(_ context.Context, owner string, after int64, limit int) ([]*Session, error) {
	if limit <= 0 {
		return nil, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	found := m.owners.page(owner, after, limit)
	out := make([]*Session, len(found))
	for i, ms := range found {
		c, err := ms.session()
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// SaveSession implements Store.
func (m *Memory) SaveSession(_ context.Context, s *Session, appended []Entry, holder string) error {
	enc, err := EncodeEntries(appended)
	if err != nil {
		return err
	}
	c, err := copySession(s)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	ms, err := m.get(s.Owner, s.ID)
	if err != nil {
		return err
	}
	c.Seq, c.CreatedAt = ms.s.Seq, ms.s.CreatedAt
	ms.s = c
	ms.history = append(ms.history, enc...)
	ms.version++
	if holder != "" && ms.holder == holder {
		ms.holder = ""
	}
	return nil
}

// DeleteSession implements Store.
func (m *Memory) DeleteSession(_ context.Context, owner, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	ms, err := m.get(owner, id)
	if err != nil {
		return err
	}
	delete(m.sessions, id)
	m.owners.remove(ms)
	return nil
}

// AppendHistory implements Store.
func (m *Memory) AppendHistory(_ context.Context, id string, entries []Entry) error {
	enc, err := EncodeEntries(entries)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	ms, ok := m.sessions[id]
	if !ok {
		return ErrNotFound
	}
	ms.history = append(ms.history, enc...)
	ms.version++
	return nil
}

// ReplaceTail implements Store.
func (m *Memory) ReplaceTail(_ context.Context, id string, from int, entries []Entry) error {
	enc, err := EncodeEntries(entries)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	ms, ok := m.sessions[id]
	if !ok {
		return ErrNotFound
	}
	if from < 0 || from > len(ms.history) {
		return ErrShortHistory
	}
	ms.history = append(ms.history[:from:from], enc...)
	ms.version++
	return nil
}

// History implements Store.
func (m *Memory) History(_ context.Context, id string) ([]Entry, error) {
	m.mu.Lock()
	ms, ok := m.sessions[id]
	var hist [][]byte
	var err error
	if ok {
		hist, err = ExpandRows(ms.history[:len(ms.history):len(ms.history)], ms.parts.reader())
	}
	m.mu.Unlock()
	if !ok {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return DecodeEntries(hist)
}

// LockLoadSession implements SessionLocker: the lock taken and the
// session read in one step, the history decoded unless its version is
// known.
func (m *Memory) LockLoadSession(_ context.Context, owner, id, holder string, known int64, ttl time.Duration) (*Session, []Entry, bool, time.Duration, error) {
	if holder == "" {
		return nil, nil, false, 0, errors.New("store: lock needs a holder")
	}
	m.mu.Lock()
	ms, err := m.get(owner, id)
	if err != nil {
		m.mu.Unlock()
		return nil, nil, false, 0, err
	}
	if left, ok := ms.lock(holder, ttl); !ok {
		m.mu.Unlock()
		return nil, nil, false, left, nil
	}
	sess, err := ms.session()
	hist, xerr := ExpandRows(ms.history[:len(ms.history):len(ms.history)], ms.parts.reader())
	m.mu.Unlock()
	if err == nil {
		err = xerr
	}
	var entries []Entry
	if err == nil && !sess.KnownHistory(known) {
		entries, err = DecodeEntries(hist)
	}
	if err != nil {
		_ = m.Unlock(context.Background(), id, holder)
		return nil, nil, false, 0, err
	}
	return sess, entries, true, 0, nil
}

// lock takes ms's lock for holder until now+ttl unless another live
// holder has it (then false and the time it has left). The caller holds
// m.mu.
func (ms *memSession) lock(holder string, ttl time.Duration) (time.Duration, bool) {
	now := time.Now()
	if ms.holder != "" && ms.holder != holder && now.Before(ms.until) {
		return ms.until.Sub(now), false
	}
	ms.holder, ms.until = holder, now.Add(ttl)
	return 0, true
}

// Lock implements Store.
func (m *Memory) Lock(_ context.Context, id, holder string, ttl time.Duration) (bool, time.Duration, error) {
	if holder == "" {
		// "" marks a free lock: taking it would lock nothing.
		return false, 0, errors.New("store: lock needs a holder")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	ms, ok := m.sessions[id]
	if !ok {
		return false, 0, ErrNotFound
	}
	left, ok := ms.lock(holder, ttl)
	return ok, left, nil
}

// RenewLock implements SessionLocker: holder's lock extended, late or not,
// as long as it is still holder's.
func (m *Memory) RenewLock(_ context.Context, id, holder string, ttl time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ms, ok := m.sessions[id]
	if !ok || holder == "" || ms.holder != holder {
		return false, nil
	}
	ms.until = time.Now().Add(ttl)
	return true, nil
}

// RenewThreadLock implements ThreadLocker: holder's lock extended, late or
// not, as long as it is still holder's.
func (m *Memory) RenewThreadLock(_ context.Context, owner, id, holder string, ttl time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := threadKey(owner, id)
	l, ok := m.th.locks[k]
	if !ok || holder == "" || l.holder != holder {
		return false, nil
	}
	l.until = time.Now().Add(ttl)
	m.th.locks[k] = l
	return true, nil
}

// Unlock implements Store.
func (m *Memory) Unlock(_ context.Context, id, holder string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ms, ok := m.sessions[id]; ok && ms.holder == holder {
		ms.holder = ""
	}
	return nil
}

// Ping implements Store.
func (m *Memory) Ping(context.Context) error { return nil }

// Close implements Store.
func (m *Memory) Close() error { return nil }

var ()
