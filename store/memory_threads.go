package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"
)

// threadKey joins owner and id unambiguously.
func threadKey(owner, id string) string { return owner + "\x00" + id }

// memThreads is the in-memory ThreadStore embedded in Memory.
type memThreads struct {
	threads map[string][]byte
	updated map[string]time.Time
	locks   map[string]memLock
	// records are the threads' records, each message a copy of the
	// caller's bytes; a thread without one has none here.
	records map[string][][]byte
	// parts are the parts of the records' long texts (AddRecordPart), by
	// thread.
	parts map[string]memParts
	order threadOrder // the threads by owner and last activity (memory_order.go)
}

type memLock struct {
	holder string
	until  time.Time
}

// GetThread implements ThreadStore.
func (m *Memory) GetThread(_ context.Context, owner, id string) (*Thread, error) {
	m.mu.Lock()
	k := threadKey(owner, id)
	b, ok := m.th.threads[k]
	updated, n := m.th.updated[k], len(m.th.records[k])
	m.mu.Unlock()
	if !ok {
		return nil, ErrNotFound
	}
	t, err := DecodeThread(owner, id, updated, b)
	if err != nil {
		return nil, err
	}
	t.RecordLen = n
	return t, nil
}

// SaveThread implements ThreadStore: the tail is checked against
// the record before anything changes, so that a refused save stores
// nothing.
func (m *Memory) SaveThread(_ context.Context, t *Thread, holder string) error {
	if err := CheckRecordTail(t.RecordTail); err != nil {
		return err
	}
	b, err := EncodeThread(t)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.th.threads == nil {
		m.th.threads, m.th.updated, m.th.records = map[string][]byte{}, map[string]time.Time{}, map[string][][]byte{}
		m.th.order = threadOrder{}
	}
	k := threadKey(t.Owner, t.ID)
	if tail := t.RecordTail; tail != nil {
		rec := m.th.records[k]
		if tail.From > len(rec) {
			return ErrRecordGap
		}
		rec = rec[:tail.From:tail.From] // a new array: a read's slice stays as it was
		for _, msg := range tail.Messages {
			rec = append(rec, bytes.Clone(msg))
		}
		m.th.records[k] = rec
		t.RecordLen = len(rec)
	}
	m.th.threads[k] = b
	if was, ok := m.th.updated[k]; !ok || !t.KeepUpdatedAt {
		now := time.Now().UTC()
		m.th.updated[k] = now
		m.th.order.move(t.Owner, t.ID, was, now)
	}
	if l, ok := m.th.locks[k]; ok && holder != "" && l.holder == holder {
		delete(m.th.locks, k)
	}
	t.DeliveredFrom = 0 // the ids are written whole (EncodeThread)
	return nil
}

// LockThread implements ThreadStore.
func (m *Memory) LockThread(_ context.Context, owner, id, holder string, ttl time.Duration) (bool, time.Duration, error) {
	if holder == "" {
		return false, 0, errors.New("store: lock needs a holder")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.th.locks == nil {
		m.th.locks = map[string]memLock{}
	}
	k := threadKey(owner, id)
	now := time.Now()
	if l, ok := m.th.locks[k]; ok && l.holder != holder && now.Before(l.until) {
		return false, l.until.Sub(now), nil
	}
	m.th.locks[k] = memLock{holder: holder, until: now.Add(ttl)}
	return true, 0, nil
}

// UnlockThread implements ThreadStore.
func (m *Memory) UnlockThread(_ context.Context, owner, id, holder string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := threadKey(owner, id)
	if l, ok := m.th.locks[k]; ok && l.holder == holder {
		delete(m.th.locks, k)
	}
	return nil
}

// ListThreads implements ThreadStore.
func (m *Memory) ListThreads(_ context.Context, owner string, after ThreadPage, limit int) ([]*Thread, error) {
	if limit <= 0 {
		return nil, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	refs := m.th.order.page(owner, after, limit)
	out := make([]*Thread, 0, len(refs))
	for _, r := range refs {
		k := threadKey(owner, r.id)
		t, err := DecodeThread(owner, r.id, r.updated, m.th.threads[k])
		if err != nil {
			return nil, err
		}
		t.RecordLen = len(m.th.records[k])
		out = append(out, t)
	}
	return out, nil
}

// CountThreads implements ThreadStore.
func (m *Memory) CountThreads(_ context.Context, owner string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.th.order[owner]), nil
}

// DeleteThread implements ThreadStore.
func (m *Memory) DeleteThread(_ context.Context, owner, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := threadKey(owner, id)
	if _, ok := m.th.threads[k]; !ok {
		return ErrNotFound
	}
	m.th.order.remove(owner, threadRef{m.th.updated[k], id})
	delete(m.th.threads, k)
	delete(m.th.updated, k)
	delete(m.th.records, k)
	delete(m.th.parts, k)
	return nil
}

// ThreadRecord implements ThreadStore. The stored messages are never
// changed in place (a save puts a new slice), so they are copied outside
// the lock.
func (m *Memory) ThreadRecord(_ context.Context, owner, id string) ([]json.RawMessage, error) {
	m.mu.Lock()
	k := threadKey(owner, id)
	_, ok := m.th.threads[k]
	rec, err := ExpandRows(m.th.records[k], m.th.parts[k].reader())
	m.mu.Unlock()
	if !ok {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	out := make([]json.RawMessage, len(rec))
	for i, msg := range rec {
		out[i] = bytes.Clone(msg)
	}
	return out, nil
}
