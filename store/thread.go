package store

import (
	"context"
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

// ThreadLocker holds the threads' run locks; callers take them with a
// Lease (TakeThread) rather than directly.
type ThreadLocker interface {
	// LockThread takes the thread's run lock (the thread need not exist
	// yet); false and the time the other holder's lock has left if another
	// holder has it. Same holder extends it.
	LockThread(ctx context.Context, owner, id, holder string, ttl time.Duration) (ok bool, left time.Duration, err error)
	UnlockThread(ctx context.Context, owner, id, holder string) error
}

// ThreadStore persists agui2aap's threads and holds their run locks.
// Every Store is one.
type ThreadStore interface {
	// GetThread returns ErrNotFound for a thread never saved.
	GetThread(ctx context.Context, owner, id string) (*Thread, error)
	// SaveThread creates or replaces a thread.
	SaveThread(ctx context.Context, t *Thread) error
	// SaveThreadUnlock is SaveThread that also frees holder's run lock on
	// the thread in the same write: a run's end in one commit (see
	// Lease.ReleaseWith). A lock holder does not have is left alone.
	SaveThreadUnlock(ctx context.Context, t *Thread, holder string) error
	ThreadLocker
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
