package store

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/internal/jsonenc"
)

// Thread is one AG-UI thread of agui2aap and the AAP session behind it.
// Threads are keyed by owner and thread id: the same thread id from two
// API keys is two threads.
type Thread struct {
	Owner string
	ID    string
	// Agent is the AAP agent the thread talks to.
	Agent string
	// SessionID is the AAP session currently behind the thread.
	SessionID string
	// Delivered are the AG-UI ids of the messages the session has seen, in
	// the order they were delivered or produced.
	Delivered []string
	// ToolsDigest identifies the client tools last sent to the session.
	ToolsDigest string
	// ContextDigest identifies the AG-UI context last rendered into a turn.
	ContextDigest string
	// ClientCalls are the client tool calls waiting for their results.
	ClientCalls []string
	// Interrupts are the open interrupts (untrusted server tool calls
	// waiting for permission).
	Interrupts []types.Interrupt
	// RunID is the run that finished with the open interrupts.
	RunID string
	// Title names the thread in listings: its first user message, cut.
	Title string
	// CreatedAt is when the thread was first saved (zero: SaveThread sets
	// it).
	CreatedAt time.Time
	// UpdatedAt is the thread's last activity: the time of its last save,
	// unless that save kept it (KeepUpdatedAt).
	UpdatedAt time.Time
	// KeepUpdatedAt makes SaveThread leave the thread's last activity as
	// it was: for a change that is no activity (a hydration renumbering
	// the delivered ids), so that listings keep their order. Not stored.
	KeepUpdatedAt bool
}

// ThreadPage is where a listing of threads goes on: the threads that were
// active before UpdatedAt, or at the same time with a smaller id. The zero
// value starts from the newest.
type ThreadPage struct {
	UpdatedAt time.Time
	ID        string
}

// ThreadStore persists agui2aap's threads. Every Store is one.
type ThreadStore interface {
	// GetThread returns ErrNotFound for a thread never saved.
	GetThread(ctx context.Context, owner, id string) (*Thread, error)
	// SaveThread creates or replaces a thread.
	SaveThread(ctx context.Context, t *Thread) error
	// SaveThreadUnlock is SaveThread that also frees holder's run lock on
	// the thread in the same write: a run's end in one commit (see
	// Lease.ReleaseWith). A lock holder does not have is left alone.
	SaveThreadUnlock(ctx context.Context, t *Thread, holder string) error
	// LockThread takes the thread's run lock (the thread need not exist
	// yet); false and the time the other holder's lock has left if another
	// holder has it. Same holder extends it.
	LockThread(ctx context.Context, owner, id, holder string, ttl time.Duration) (ok bool, left time.Duration, err error)
	UnlockThread(ctx context.Context, owner, id, holder string) error
	// ListThreads returns up to limit threads of owner, the most recently
	// active first, from after (zero: from the newest).
	ListThreads(ctx context.Context, owner string, after ThreadPage, limit int) ([]*Thread, error)
	// DeleteThread forgets a thread; ErrNotFound if owner has none with
	// that id.
	DeleteThread(ctx context.Context, owner, id string) error
	// CountThreads is the number of owner's threads.
	CountThreads(ctx context.Context, owner string) (int, error)
}

// Next is the page after t in a listing.
func (t *Thread) Next() ThreadPage { return ThreadPage{UpdatedAt: t.UpdatedAt, ID: t.ID} }

// before tells whether a thread active at updated with id comes after the
// page's start in a listing (newest first).
func (p ThreadPage) before(updated time.Time, id string) bool {
	if p.UpdatedAt.IsZero() && p.ID == "" {
		return true
	}
	return updated.Before(p.UpdatedAt) || (updated.Equal(p.UpdatedAt) && id < p.ID)
}

// threadJSON is how a thread is serialized.
type threadJSON struct {
	Agent         string            `json:"agent"`
	SessionID     string            `json:"sessionId"`
	Delivered     []string          `json:"delivered,omitempty"`
	ToolsDigest   string            `json:"toolsDigest,omitempty"`
	ContextDigest string            `json:"contextDigest,omitempty"`
	ClientCalls   []string          `json:"clientCalls,omitempty"`
	Interrupts    []types.Interrupt `json:"interrupts,omitempty"`
	RunID         string            `json:"runId,omitempty"`
	Title         string            `json:"title,omitempty"`
	CreatedAt     *time.Time        `json:"createdAt,omitempty"`
}

func encodeThread(t *Thread) ([]byte, error) {
	j := threadJSON{Agent: t.Agent, SessionID: t.SessionID, Delivered: t.Delivered, ToolsDigest: t.ToolsDigest,
		ContextDigest: t.ContextDigest, ClientCalls: t.ClientCalls, Interrupts: t.Interrupts, RunID: t.RunID, Title: t.Title}
	if t.CreatedAt.IsZero() {
		t.CreatedAt = time.Now().UTC().Truncate(time.Millisecond)
	}
	created := t.CreatedAt.UTC()
	j.CreatedAt = &created
	return jsonenc.Marshal(j)
}

func decodeThread(owner, id string, updated time.Time, b []byte) (*Thread, error) {
	var j threadJSON
	if err := jsonUnmarshal(b, &j); err != nil {
		return nil, err
	}
	t := &Thread{Owner: owner, ID: id, Agent: j.Agent, SessionID: j.SessionID, Delivered: j.Delivered,
		ToolsDigest: j.ToolsDigest, ContextDigest: j.ContextDigest, ClientCalls: j.ClientCalls,
		Interrupts: j.Interrupts, RunID: j.RunID, Title: j.Title, UpdatedAt: updated, CreatedAt: updated}
	if j.CreatedAt != nil {
		t.CreatedAt = j.CreatedAt.UTC()
	}
	return t, nil
}

// threadKey joins owner and id unambiguously.
func threadKey(owner, id string) string { return owner + "\x00" + id }

// memThreads is the in-memory ThreadStore embedded in Memory.
type memThreads struct {
	threads map[string][]byte
	updated map[string]time.Time
	locks   map[string]memLock
}

type memLock struct {
	holder string
	until  time.Time
}

// GetThread implements ThreadStore.
func (m *Memory) GetThread(_ context.Context, owner, id string) (*Thread, error) {
	m.mu.Lock()
	b, ok := m.th.threads[threadKey(owner, id)]
	updated := m.th.updated[threadKey(owner, id)]
	m.mu.Unlock()
	if !ok {
		return nil, ErrNotFound
	}
	return decodeThread(owner, id, updated, b)
}

// SaveThread implements ThreadStore.
func (m *Memory) SaveThread(ctx context.Context, t *Thread) error {
	return m.SaveThreadUnlock(ctx, t, "")
}

// SaveThreadUnlock implements ThreadStore.
func (m *Memory) SaveThreadUnlock(_ context.Context, t *Thread, holder string) error {
	b, err := encodeThread(t)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.th.threads == nil {
		m.th.threads, m.th.updated = map[string][]byte{}, map[string]time.Time{}
	}
	k := threadKey(t.Owner, t.ID)
	m.th.threads[k] = b
	if _, ok := m.th.updated[k]; !ok || !t.KeepUpdatedAt {
		m.th.updated[k] = time.Now().UTC()
	}
	if l, ok := m.th.locks[k]; ok && holder != "" && l.holder == holder {
		delete(m.th.locks, k)
	}
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
	var out []*Thread
	for k, b := range m.th.threads {
		o, id, _ := strings.Cut(k, "\x00")
		if o != owner || !after.before(m.th.updated[k], id) {
			continue
		}
		t, err := decodeThread(o, id, m.th.updated[k], b)
		if err != nil {
			m.mu.Unlock()
			return nil, err
		}
		out = append(out, t)
	}
	m.mu.Unlock()
	sortThreads(out)
	return out[:min(limit, len(out))], nil
}

// CountThreads implements ThreadStore.
func (m *Memory) CountThreads(_ context.Context, owner string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for k := range m.th.threads {
		if o, _, _ := strings.Cut(k, "\x00"); o == owner {
			n++
		}
	}
	return n, nil
}

// DeleteThread implements ThreadStore.
func (m *Memory) DeleteThread(_ context.Context, owner, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := threadKey(owner, id)
	if _, ok := m.th.threads[k]; !ok {
		return ErrNotFound
	}
	delete(m.th.threads, k)
	delete(m.th.updated, k)
	return nil
}

// sortThreads orders threads for a listing: most recently active first,
// then by id, descending.
func sortThreads(ts []*Thread) {
	slices.SortFunc(ts, func(a, b *Thread) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
}
