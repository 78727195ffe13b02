package store

import (
	"context"

	"github.com/aapagui/aapagui/internal/textparts"
)

// TextPart is one part of a long text held apart in parts
// (HistoryStore.AddHistoryPart, ThreadStore.AddRecordPart): the Index-th
// part of the text named Ref.
type TextPart struct {
	Ref   string
	Index int
	Data  []byte
}

// partsMark starts the stored form of a row (a history entry, a record
// message) that holds the marker of a text held in parts: the rows to
// expand are found by their first byte, and a process of an earlier
// build, which would give the marker as text, refuses the row instead
// (it is no JSON).
const partsMark = '~'

// MarkRow is row (JSON) as stored: with partsMark first when it may hold
// a marker, else as it is. A marked row is returned as it is.
func MarkRow(row []byte) []byte {
	if len(row) == 0 || row[0] == partsMark || !textparts.Has(row) {
		return row
	}
	return append([]byte{partsMark}, row...)
}

// unmarked is row without its partsMark.
func unmarked(row []byte) []byte {
	if len(row) > 0 && row[0] == partsMark {
		return row[1:]
	}
	return row
}

// ExpandRows returns rows (history entries or record messages, as
// stored) with the text of each marker read back from its parts (read),
// and without their partsMark; rows itself is not changed, and is what is
// returned when no row is marked.
func ExpandRows[R ~[]byte](rows []R, read textparts.Reader) ([]R, error) {
	var out []R
	for i, row := range rows {
		if len(row) == 0 || row[0] != partsMark {
			continue
		}
		x, err := textparts.Expand(row[1:], read)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = append([]R(nil), rows...)
		}
		out[i] = x
	}
	if out == nil {
		return rows, nil
	}
	return out, nil
}

// memParts are the parts of one session's or thread's texts, by name.
type memParts map[string][][]byte

// add stores part (a copy).
func (p *memParts) add(part TextPart) {
	if *p == nil {
		*p = memParts{}
	}
	list := (*p)[part.Ref]
	for len(list) <= part.Index {
		list = append(list, nil)
	}
	list[part.Index] = append([]byte(nil), part.Data...)
	(*p)[part.Ref] = list
}

// reader reads p's parts (the caller holds the store's lock while it
// does).
func (p memParts) reader() textparts.Reader {
	return func(ref string, n int) ([][]byte, error) {
		list := p[ref]
		if len(list) > n {
			list = list[:n]
		}
		for i, part := range list {
			if part == nil {
				return list[:i], nil
			}
		}
		return list, nil
	}
}

// AddHistoryPart implements HistoryStore.
func (m *Memory) AddHistoryPart(_ context.Context, sessionID string, p TextPart) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	ms, ok := m.sessions[sessionID]
	if !ok {
		return ErrNotFound
	}
	ms.parts.add(p)
	return nil
}

// AddRecordPart implements ThreadStore. The thread need not be saved yet
// (its first run's parts come before its first save).
func (m *Memory) AddRecordPart(_ context.Context, owner, threadID string, p TextPart) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.th.parts == nil {
		m.th.parts = map[string]memParts{}
	}
	k := threadKey(owner, threadID)
	parts := m.th.parts[k]
	parts.add(p)
	m.th.parts[k] = parts
	return nil
}
