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
// allows (CreateSessionWithin); nothing was stored.
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
	// Interrupts are the interrupts the last run finished with.
	Interrupts []types.Interrupt
	CreatedAt  time.Time
	// Seq orders sessions by creation; the store assigns it.
	Seq int64
	// HistoryVersion counts the writes of the session's history; the
	// store keeps it. A session is created with version 1 (CreateSession
	// sets it, with Seq; 0 is a session stored before versions were, or
	// copied from another store, whose history no version tells); every
	// AppendHistory, ReplaceTail, ReplaceHistory, SaveSession and
	// SaveSessionUnlock that succeeds adds one (entries or not). So a
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

// Background marks the writes made with the returned context as a turn's
// progress, which no client waits for: a checkpoint of the message still
// streaming, messages settled mid-turn. A store may let the writes that
// clients wait for (a turn's start and end, a new session) go before them,
// so that many streaming turns do not slow everyone's turn starts.
func Background(ctx context.Context) context.Context {
	return context.WithValue(ctx, backgroundKey{}, true)
}

// IsBackground reports whether ctx is Background's.
func IsBackground(ctx context.Context) bool {
	b, _ := ctx.Value(backgroundKey{}).(bool)
	return b
}

type backgroundKey struct{}

// SessionStore persists aap2agui's sessions. Methods taking an owner
// return ErrNotFound for a session of another owner.
type SessionStore interface {
	// CreateSession stores a new session (assigning Seq) with its seed
	// history.
	CreateSession(ctx context.Context, s *Session, seed []Entry) error
	// CreateSessionWithin is CreateSession for an owner allowed at most
	// max sessions: it returns ErrLimit, storing nothing, when the owner
	// already has max or more. The count and the insert are one atomic
	// step, so replicas sharing the store never pass the limit together.
	// max <= 0 means no limit.
	CreateSessionWithin(ctx context.Context, s *Session, seed []Entry, max int) error
	GetSession(ctx context.Context, owner, id string) (*Session, error)
	// ListSessions returns up to limit sessions of owner with Seq > after,
	// oldest first; none when limit <= 0.
	ListSessions(ctx context.Context, owner string, after int64, limit int) ([]*Session, error)
	// UpdateSession saves Agent, Tools, State and Interrupts.
	UpdateSession(ctx context.Context, s *Session) error
	// SaveSession is UpdateSession and AppendHistory in one transaction:
	// a turn's start (its messages and the session they changed) is saved
	// whole or not at all, in one commit.
	SaveSession(ctx context.Context, s *Session, appended []Entry) error
	// SaveSessionUnlock is SaveSession that also frees holder's turn
	// lock in the same write: a turn's end in one commit (see
	// Lease.ReleaseWith). The session is saved whoever holds the lock; a
	// lock holder does not have is left alone.
	SaveSessionUnlock(ctx context.Context, s *Session, appended []Entry, holder string) error
	// DeleteSession removes a session and its history.
	DeleteSession(ctx context.Context, owner, id string) error
}

// HistoryStore persists the sessions' histories, by session id.
type HistoryStore interface {
	AppendHistory(ctx context.Context, id string, entries []Entry) error
	// ReplaceHistory makes entries the whole history.
	ReplaceHistory(ctx context.Context, id string, entries []Entry) error
	// ReplaceTail makes entries the history from position from on,
	// keeping the from entries before it: what a turn rewrites of its own
	// entries (a checkpoint of the message still streaming) costs what
	// the turn wrote, not the whole history. A history shorter than from
	// is ErrShortHistory.
	ReplaceTail(ctx context.Context, id string, from int, entries []Entry) error
	History(ctx context.Context, id string) ([]Entry, error)
	// AddHistoryPart stores a part of a long text that session id's
	// history is to hold: a text the bridge holds apart in parts as it
	// streams (internal/textparts), so that it never has to hold it
	// whole. The entry holds the parts' marker in the text's
	// place, which every read of the history (History, LoadSession, …)
	// replaces with the parts. The parts go with their session. Writing a
	// part again replaces it.
	AddHistoryPart(ctx context.Context, id string, part TextPart) error
}

// SessionLocker holds the sessions' turn locks; callers take them with a
// Lease (TakeSession) rather than directly.
type SessionLocker interface {
	// Lock takes the session's turn lock for holder until now+ttl; it
	// returns false and how long the other holder's lock has left if
	// another holder has it. Taking it again as the same holder extends
	// it.
	Lock(ctx context.Context, id, holder string, ttl time.Duration) (ok bool, left time.Duration, err error)
	Unlock(ctx context.Context, id, holder string) error
}

// Store is the whole of a store, the union of its parts, for callers that
// need all of them (aap2agui, the copy command); a caller that needs one
// part takes that part.
type Store interface {
	SessionStore
	HistoryStore
	SessionLocker
	ThreadStore
	RunLogStore
	// Ping checks that the store is usable.
	Ping(ctx context.Context) error
	Close() error
}

// SessionLoader is implemented by stores that read a session and its
// history in one round trip; LoadSession uses it when it is there.
type SessionLoader interface {
	LoadSession(ctx context.Context, owner, id string) (*Session, []Entry, error)
}

// LoadSession returns owner's session id and its history, in one round
// trip when the store can (PostgreSQL), else with GetSession and History.
func LoadSession(ctx context.Context, st Store, owner, id string) (*Session, []Entry, error) {
	if l, ok := st.(SessionLoader); ok {
		return l.LoadSession(ctx, owner, id)
	}
	return loadUnder(ctx, st, owner, id, 0)
}
