package store

import (
	"context"
	"errors"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
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
	RunID     string
	UpdatedAt time.Time
}

// ThreadStore persists agui2aap's threads. Every Store is one.
type ThreadStore interface {
	// GetThread returns ErrNotFound for a thread never saved.
	GetThread(ctx context.Context, owner, id string) (*Thread, error)
	// SaveThread creates or replaces a thread.
	SaveThread(ctx context.Context, t *Thread) error
	// LockThread takes the thread's run lock (the thread need not exist
	// yet); false and the time the other holder's lock has left if another
	// holder has it. Same holder extends it.
	LockThread(ctx context.Context, owner, id, holder string, ttl time.Duration) (ok bool, left time.Duration, err error)
	UnlockThread(ctx context.Context, owner, id, holder string) error
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
}

func encodeThread(t *Thread) ([]byte, error) {
	return marshal(threadJSON{Agent: t.Agent, SessionID: t.SessionID, Delivered: t.Delivered, ToolsDigest: t.ToolsDigest,
		ContextDigest: t.ContextDigest, ClientCalls: t.ClientCalls, Interrupts: t.Interrupts, RunID: t.RunID})
}

func decodeThread(owner, id string, updated time.Time, b []byte) (*Thread, error) {
	var j threadJSON
	if err := jsonUnmarshal(b, &j); err != nil {
		return nil, err
	}
	return &Thread{Owner: owner, ID: id, Agent: j.Agent, SessionID: j.SessionID, Delivered: j.Delivered,
		ToolsDigest: j.ToolsDigest, ContextDigest: j.ContextDigest, ClientCalls: j.ClientCalls,
		Interrupts: j.Interrupts, RunID: j.RunID, UpdatedAt: updated}, nil
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
func (m *Memory) SaveThread(_ context.Context, t *Thread) error {
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
	m.th.updated[k] = time.Now().UTC()
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
