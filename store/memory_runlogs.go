package store

import (
	"context"
	"slices"
	"time"
)

// memoryRunLogBytes is how many bytes of frames the memory store keeps of
// its finished run logs, in all: past it, the logs that finished first are
// dropped, as a pruned log is (the memory store keeps its sessions for as
// long as the process runs, and would otherwise keep every answer's
// frames with them; a run log serves a client that lost its connection,
// which comes back soon or not at all). Running logs are kept whole.
const memoryRunLogBytes = 32 << 20

// memRunLogs are the memory store's run logs, under Memory.mu.
type memRunLogs struct {
	byID map[string]*memRunLog
	// byKey holds each owner's key's logs in the order they started
	// (Started, then the order they were stored in), as the other stores
	// order them.
	byKey map[[2]string][]*memRunLog
	// stopping holds the running logs asked to stop (StopRunLog), so that
	// StoppingRunLogs reads them alone.
	stopping map[string]struct{}
	// finished holds the finished logs kept, in the order they finished;
	// finishedBytes counts their frames, which budget bounds (0:
	// memoryRunLogBytes).
	finished      []*memRunLog
	finishedBytes int
	budget        int
}

type memRunLog struct {
	l       RunLog
	batches []RunLogBatch
	size    int // the bytes of the batches' frames
}

// drop forgets log id.
func (rl *memRunLogs) drop(id string) {
	if ml, ok := rl.byID[id]; ok && ml.l.Finished {
		rl.finishedBytes -= ml.size
		if i := slices.Index(rl.finished, ml); i >= 0 {
			rl.finished = slices.Delete(rl.finished, i, i+1)
		}
	}
	delete(rl.byID, id)
	delete(rl.stopping, id)
}

// finish counts ml among the finished logs and drops the oldest of them
// while their frames come to more than the budget.
func (rl *memRunLogs) finish(ml *memRunLog) {
	rl.finished = append(rl.finished, ml)
	rl.finishedBytes += ml.size
	budget := rl.budget
	if budget == 0 {
		budget = memoryRunLogBytes
	}
	for rl.finishedBytes > budget {
		old := rl.finished[0]
		k := [2]string{old.l.Owner, old.l.Key}
		logs := slices.DeleteFunc(rl.byKey[k], func(l *memRunLog) bool { return l == old })
		if len(logs) == 0 {
			delete(rl.byKey, k)
		} else {
			rl.byKey[k] = logs
		}
		rl.drop(old.l.ID)
	}
}

// StartRunLog implements RunLogStore. Times are kept as SQLite keeps
// them: UTC, to the millisecond.
func (m *Memory) StartRunLog(_ context.Context, l *RunLog) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	rl := &m.runLogs
	if rl.byID == nil {
		rl.byID, rl.byKey, rl.stopping = map[string]*memRunLog{}, map[[2]string][]*memRunLog{}, map[string]struct{}{}
	}
	if _, ok := rl.byID[l.ID]; ok {
		return ErrExists
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	if l.Started.IsZero() {
		l.Started = now
	}
	l.Updated, l.Events, l.Finished = now, 0, false
	ml := &memRunLog{l: *l}
	ml.l.Started = l.Started.UTC().Truncate(time.Millisecond)
	ml.l.Input = cloneInput(l.Input)
	k := [2]string{l.Owner, l.Key}
	logs := rl.byKey[k]
	// After the logs that started with it or before it; of those, all
	// but the last go.
	at := len(logs)
	for at > 0 && logs[at-1].l.Started.After(ml.l.Started) {
		at--
	}
	if at > 1 {
		for _, old := range logs[:at-1] {
			rl.drop(old.l.ID)
		}
		logs = slices.Delete(logs, 0, at-1)
		at = 1
	}
	rl.byID[l.ID] = ml
	rl.byKey[k] = slices.Insert(logs, at, ml)
	return nil
}

// AppendRunLog implements RunLogStore.
func (m *Memory) AppendRunLog(_ context.Context, id string, b RunLogBatch, finished bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	ml, ok := m.runLogs.byID[id]
	if !ok {
		return ErrNotFound
	}
	if ml.l.Finished || b.First != ml.l.Events+1 {
		return ErrRunLogGap
	}
	if b.Count > 0 {
		b.Frames = slices.Clone(b.Frames)
		ml.batches = append(ml.batches, b)
		ml.l.Events += int64(b.Count)
		ml.size += len(b.Frames)
	}
	ml.l.Updated = time.Now().UTC().Truncate(time.Millisecond)
	if finished {
		ml.l.Finished = true
		delete(m.runLogs.stopping, id)
		m.runLogs.finish(ml)
	}
	return nil
}

// GetRunLog implements RunLogStore.
func (m *Memory) GetRunLog(_ context.Context, owner, id string) (*RunLog, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ml, ok := m.runLogs.byID[id]
	if !ok || ml.l.Owner != owner {
		return nil, ErrNotFound
	}
	l := ml.l
	l.Input = cloneInput(l.Input)
	return &l, nil
}

// LatestRunLog implements RunLogStore.
func (m *Memory) LatestRunLog(_ context.Context, owner, key string) (*RunLog, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	logs := m.runLogs.byKey[[2]string{owner, key}]
	if len(logs) == 0 {
		return nil, ErrNotFound
	}
	l := logs[len(logs)-1].l
	l.Input = cloneInput(l.Input)
	return &l, nil
}

// cloneInput is a copy of a log's Input that neither its caller nor the
// store changes: nil when empty, as the other stores read it back.
func cloneInput(in []byte) []byte {
	if len(in) == 0 {
		return nil
	}
	return slices.Clone(in)
}

// ReadRunLog implements RunLogStore.
func (m *Memory) ReadRunLog(_ context.Context, id string, after int64, maxBytes int) ([]RunLogBatch, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ml, ok := m.runLogs.byID[id]
	if !ok {
		return nil, ErrNotFound
	}
	i, _ := slices.BinarySearchFunc(ml.batches, after, func(b RunLogBatch, after int64) int {
		if b.First+int64(b.Count)-1 <= after {
			return -1
		}
		return 1
	})
	var out []RunLogBatch
	size := 0
	for _, b := range ml.batches[i:] {
		if len(out) > 0 && size+len(b.Frames) > maxBytes {
			break
		}
		b.Frames = slices.Clone(b.Frames)
		out = append(out, b)
		size += len(b.Frames)
	}
	return out, nil
}

// DeleteRunLogs implements RunLogStore.
func (m *Memory) DeleteRunLogs(_ context.Context, owner, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := [2]string{owner, key}
	for _, ml := range m.runLogs.byKey[k] {
		m.runLogs.drop(ml.l.ID)
	}
	delete(m.runLogs.byKey, k)
	return nil
}

// StopRunLog implements RunLogStore.
func (m *Memory) StopRunLog(_ context.Context, owner, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	ml, ok := m.runLogs.byID[id]
	if !ok || ml.l.Owner != owner || ml.l.Finished {
		return ErrNotFound
	}
	m.runLogs.stopping[id] = struct{}{}
	return nil
}

// StoppingRunLogs implements RunLogStore.
func (m *Memory) StoppingRunLogs(context.Context) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ids []string
	for id := range m.runLogs.stopping {
		ids = append(ids, id)
	}
	return ids, nil
}
