package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	// DeliveredFrom is how many of Delivered the next save leaves as
	// stored: it writes the ids from there on and drops the stored ones
	// past Delivered's end, so that a run's save writes the ids the run
	// added, not every id of the thread. It must not be past the ids
	// stored and unchanged since: a run sets it to how many it read, under
	// the thread's run lock, right before it saves. 0 (the zero value,
	// and what a save leaves it at) writes them all; a store that finds it
	// past the ids stored writes them all too. Not stored.
	DeliveredFrom int
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
	// RecordLen is how many messages the thread's record holds (set by
	// the store when the thread is read; 0 for a new thread). It is the
	// position a run's new messages go on from (RecordTail.From).
	RecordLen int
	// RecordTail, when not nil, is written by SaveThread and
	// SaveThread in the same write as the thread: the record's
	// messages from RecordTail.From on become RecordTail.Messages (those
	// after them are dropped), and RecordLen becomes From+len(Messages)
	// (t's too, once saved). Not stored itself. A save tried again writes
	// the same record (the positions make it idempotent). Without it the
	// record and its RecordLen stay as stored, whatever RecordLen t holds:
	// a thread read before another replica's run saved does not shorten
	// that run's record.
	RecordTail *RecordTail
}

// RecordTail is the part of a thread's record a save writes: a run's new
// messages at the record's end (From is RecordLen), or a fork's from the
// position where it parted from the record. Only what changed is sent, so
// that a long conversation costs a save what its new messages cost.
type RecordTail struct {
	// From is the position of the first of Messages in the record,
	// between 0 and the stored RecordLen (else ErrRecordGap).
	From int
	// Messages are AG-UI messages (types.Message), each valid JSON, kept
	// byte for byte: the store does not read them.
	Messages []json.RawMessage
}

// ErrRecordGap is SaveThread's error for a RecordTail that would leave a
// gap in the thread's record: its From is past the record's end (another
// save shortened it meanwhile, or the thread is gone) or negative. Nothing
// of the save is stored, the thread included.
var ErrRecordGap = errors.New("store: the messages do not continue the thread's record")

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
	// RenewThreadLock is SessionLocker.RenewLock for a thread's run lock.
	RenewThreadLock(ctx context.Context, owner, id, holder string, ttl time.Duration) (bool, error)
	UnlockThread(ctx context.Context, owner, id, holder string) error
}

// ThreadStore persists agui2aap's threads with their records and holds
// their run locks.
type ThreadStore interface {
	// GetThread returns ErrNotFound for a thread never saved.
	GetThread(ctx context.Context, owner, id string) (*Thread, error)
	// SaveThread creates or replaces a thread, and writes t.RecordTail
	// into its record in the same write (ErrRecordGap when it would
	// leave a gap: then nothing is stored). A message of the tail that
	// is not valid JSON is an error too, before anything is written.
	// With a holder, the same write frees holder's run lock on the
	// thread: a run's end in one commit (see Lease.ReleaseWith); a lock
	// holder does not have is left alone. "" frees none.
	SaveThread(ctx context.Context, t *Thread, holder string) error
	ThreadLocker
	// ListThreads returns up to limit threads of owner, the most recently
	// active first, from after (zero: from the newest).
	ListThreads(ctx context.Context, owner string, after ThreadPage, limit int) ([]*Thread, error)
	// DeleteThread forgets a thread and its record; ErrNotFound if owner
	// has none with that id.
	DeleteThread(ctx context.Context, owner, id string) error
	// CountThreads is the number of owner's threads.
	CountThreads(ctx context.Context, owner string) (int, error)
	// ThreadRecord returns the thread's record, oldest first (empty for a
	// thread with none); ErrNotFound for an unknown thread or one of
	// another owner. agui2aap gives it back as the conversation when the
	// AAP session behind the thread is gone.
	ThreadRecord(ctx context.Context, owner, id string) ([]json.RawMessage, error)
	// AddRecordPart is HistoryStore.AddHistoryPart for the record of
	// owner's thread id, which need not be saved yet (its first run's
	// parts come before its first save): ThreadRecord gives the texts
	// whole, and the parts go with the thread.
	AddRecordPart(ctx context.Context, owner, id string, part TextPart) error
}

// Next is the page after t in a listing.
func (t *Thread) Next() ThreadPage { return ThreadPage{UpdatedAt: t.UpdatedAt, ID: t.ID} }

// CheckRecordTail is what every store checks of a save's tail before it
// writes anything: From not negative (else ErrRecordGap), and each message
// valid JSON, as the record is given back as JSON. nil is no tail. It
// gives each message that holds the marker of a text held in parts the
// stored form of one (MarkRow), in place, which the store then writes.
func CheckRecordTail(tail *RecordTail) error {
	if tail == nil {
		return nil
	}
	if tail.From < 0 {
		return ErrRecordGap
	}
	for i, m := range tail.Messages {
		if !json.Valid(unmarked(m)) {
			return fmt.Errorf("store: message %d of the thread's record is not JSON", tail.From+i)
		}
		tail.Messages[i] = MarkRow(m)
	}
	return nil
}
