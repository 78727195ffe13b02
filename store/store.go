package store

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/aap"
)

// ErrNotFound reports a session that does not exist or belongs to another
// owner: the two are indistinguishable on purpose.
var ErrNotFound = errors.New("store: not found")

// ErrShortHistory reports a ReplaceTail from past the history's end.
var ErrShortHistory = errors.New("store: the history is shorter than the tail to replace")

// ErrExists reports a session id that is already taken.
var ErrExists = errors.New("store: already exists")

// ErrLimit reports an owner who already has as many sessions as the limit
// allows (CreateSession with a max); nothing was stored.
var ErrLimit = errors.New("store: limit reached")

// Session is one AAP session of aap2agui.
type Session struct {
	ID string
	// Owner identifies the API key that created the session (a hash, never
	// the key); "" when the server runs without keys.
	Owner string
	// Agent holds the agent name, the enabled server tools and the option
	// values, secret ones included (redaction happens when it is shown).
	Agent aap.AgentConfig
	// Tools are the client-side tools; nil when none were declared.
	Tools []aap.ToolSpec
	// State is the AG-UI state of the thread (JSON), nil when there is none.
	State json.RawMessage
	// Activities are the AG-UI activity messages of the conversation,
	// each with its place among the history's messages (JSON:
	// translate.Activities), nil when there are none.
	Activities json.RawMessage
	// Interrupts are the interrupts the last run finished with.
	Interrupts []types.Interrupt
	CreatedAt  time.Time
	// Seq orders sessions by creation; the store assigns it.
	Seq int64
	// HistoryVersion counts the writes of the session's history; the
	// store keeps it. A session is created with version 1 (CreateSession
	// sets it, with Seq; 0 is a session stored before versions were, or
	// copied from another store, whose history no version tells); every
	// AppendHistory, ReplaceTail and SaveSession that succeeds adds one
	// (entries or not). So a
	// process that holds the session's lock and read its history at
	// version v knows, from the writes it made and that succeeded, the
	// version of the history it holds, and can keep that history for the
	// session's next turn (see KnownHistory).
	HistoryVersion int64
}

// KnownHistory reports whether a history the caller holds at version
// known (0: none) is the session's: its HistoryVersion is known.
func (s *Session) KnownHistory(known int64) bool {
	return known != 0 && s.HistoryVersion == known
}

// Entry is one history message with the AG-UI id it is sent under.
type Entry struct {
	Message aap.Message
	AGUIID  string
	// AGUI is what the AG-UI side said of the message that AAP has no
	// field for (the agent's encrypted reasoning values:
	// translate.EncryptedValues), as JSON; nil when nothing. It is stored
	// with the entry and never shown to the AAP client. Entries stored
	// before it existed read back with none.
	AGUI json.RawMessage
}

// Messages yields the messages of entries, in order.
func Messages(entries []Entry) iter.Seq[aap.Message] {
	return func(yield func(aap.Message) bool) {
		for _, e := range entries {
			if !yield(e.Message) {
				return
			}
		}
	}
}

// Progress marks the writes made with the returned context as a turn's
// progress, which no client waits for: a checkpoint of the message still
// streaming, messages settled mid-turn. A store may let the writes that
// clients wait for (a turn's start and end, a new session) go before them,
// so that many streaming turns do not slow everyone's turn starts.
func Progress(ctx context.Context) context.Context {
	return context.WithValue(ctx, progressKey{}, true)
}

// IsProgress reports whether ctx is Progress's.
func IsProgress(ctx context.Context) bool {
	b, _ := ctx.Value(progressKey{}).(bool)
	return b
}

type progressKey struct{}

// SessionStore persists aap2agui's sessions. Methods taking an owner
// return ErrNotFound for a session of another owner.
type SessionStore interface {
	// CreateSession stores a new session (assigning Seq) with its seed
	// history, for an owner allowed at most max sessions: it returns
	// ErrLimit, storing nothing, when the owner already has max or more.
	// The count and the insert are one atomic step, so replicas sharing
	// the store never pass the limit together. max <= 0 means no limit.
	CreateSession(ctx context.Context, s *Session, seed []Entry, max int) error
	GetSession(ctx context.Context, owner, id string) (*Session, error)
	// ListSessions returns up to limit sessions of owner with Seq > after,
	// oldest first; none when limit <= 0.
	ListSessions(ctx context.Context, owner string, after int64, limit int) ([]*Session, error)
	// SaveSession saves the session's Agent, Tools, State, Activities and Interrupts
	// and appends appended to its history, in one transaction: a turn's
	// start (its messages and the session they changed) is saved whole or
	// not at all. With a holder, the same write frees holder's turn lock:
	// a turn's end in one commit (see Lease.ReleaseWith). The session is
	// saved whoever holds the lock; a lock holder does not have is left
	// alone. "" frees none.
	SaveSession(ctx context.Context, s *Session, appended []Entry, holder string) error
	// DeleteSession removes a session and its history.
	DeleteSession(ctx context.Context, owner, id string) error
}

// HistoryStore persists the sessions' histories, by session id.
type HistoryStore interface {
	AppendHistory(ctx context.Context, id string, entries []Entry) error
	// ReplaceTail makes entries the history from position from on,
	// keeping the from entries before it (from 0: the whole history):
	// what a turn rewrites of its own entries (a checkpoint of the
	// message still streaming) costs what the turn wrote, not the whole
	// history. A history shorter than from is ErrShortHistory.
	ReplaceTail(ctx context.Context, id string, from int, entries []Entry) error
	History(ctx context.Context, id string) ([]Entry, error)
	// AddHistoryPart stores a part of a long text that session id's
	// history is to hold: a text the bridge holds apart in parts as it
	// streams (internal/textparts), so that it never has to hold it
	// whole. The entry holds the parts' marker in the text's
	// place, which every read of the history (History, LockLoadSession)
	// replaces with the parts. The parts go with their session. Writing a
	// part again replaces it.
	AddHistoryPart(ctx context.Context, id string, part TextPart) error
}

// SessionLocker holds the sessions' turn locks; callers take them with a
// Lease (TakeSession, TakeAndLoadSession) rather than directly.
type SessionLocker interface {
	// Lock takes the session's turn lock for holder until now+ttl; it
	// returns false and how long the other holder's lock has left if
	// another holder has it. Taking it again as the same holder extends
	// it.
	Lock(ctx context.Context, id, holder string, ttl time.Duration) (ok bool, left time.Duration, err error)
	// RenewLock is a Lease's heartbeat for holder's lock: ok false when
	// the lock is no longer holder's to renew (another holder took it,
	// or its session is gone), and the lease is lost. The stores send
	// renewals ahead of their other writes and together: on SQLite a lane
	// of their own into the writer, committed before any write waiting
	// there; on PostgreSQL one statement for every renewal waiting, on a
	// queue of its own. A burst of turn starts, checkpoints and history
	// writes then never makes a heartbeat wait longer than one write
	// group.
	RenewLock(ctx context.Context, id, holder string, ttl time.Duration) (bool, error)
	Unlock(ctx context.Context, id, holder string) error
	// LockLoadSession takes holder's lock of owner's session id, as Lock
	// does, and reads the session and its history under it, in one round
	// trip on PostgreSQL. A session that is not owner's is ErrNotFound and
	// its lock is left alone; a lock another live holder has gives ok
	// false and the time it has left. known is the HistoryVersion of a
	// history of the session the caller holds (0: none): when it is the
	// session's (Session.KnownHistory), the history is not read and hist
	// is nil.
	LockLoadSession(ctx context.Context, owner, id, holder string, known int64, ttl time.Duration) (sess *Session, hist []Entry, ok bool, left time.Duration, err error)
}

// Pinger checks that a store is usable (a readiness probe asks it).
type Pinger interface {
	Ping(ctx context.Context) error
}

// Sessions is what aap2agui needs of a store: its sessions with their
// histories and turn locks, and the runs' logs.
type Sessions interface {
	SessionStore
	HistoryStore
	SessionLocker
	RunLogStore
	Pinger
}

// Threads is what agui2aap needs of a store: its threads with their
// records and run locks, and the runs' logs.
type Threads interface {
	ThreadStore
	RunLogStore
	Pinger
}

// Store is the whole of a store, what each driver is: both bridges' parts
// (Sessions, Threads) and Close, for callers that need all of them (Open,
// the copy command).
type Store interface {
	Sessions
	ThreadStore
	Close() error
}
