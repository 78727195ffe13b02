package store

import (
	"context"
	"errors"
	"time"
)

// RunLog is the record of one run's events as its client was sent them,
// appended in batches as the run produces them. A client that lost its connection
// rejoins the run from the log, on any replica sharing the store: from
// its start, or after the last event it had (Last-Event-ID).
//
// A log belongs to one run of one key of an owner: a session of aap2agui
// ("session/<id>") or an agent's thread of agui2aap
// ("agent/<agent>/thread/<id>"; "thread/<id>" before). The runs of a
// key are one at a time (its lock), and a key keeps the logs of its
// running run and of the last run that finished before it (StartRunLog
// drops the others).
type RunLog struct {
	// ID names the log: random, unique, the first part of each of its
	// events' SSE ids.
	ID    string
	Owner string
	Key   string
	// RunID is the run's own id (the AG-UI runId).
	RunID string
	// Form is the shape of the frames ("agui"; aap2agui: the AAP stream
	// mode), so that a client rejoining in another is told so.
	Form string
	// Started is when the run began (zero: StartRunLog sets it). It
	// orders a key's logs. The stores keep it, as Updated, in UTC to the
	// millisecond.
	Started time.Time
	// Updated is when the log last grew or finished (set by the store).
	Updated time.Time
	// Events is how many events the log holds: they are numbered 1 to
	// Events, in the order they were sent.
	Events int64
	// Finished is set once the run's last event is in the log.
	Finished bool
	// Input is what the run was asked that a client joining it from
	// nothing needs beside its events (agui2aap: the client's messages new
	// to the thread, as a JSON array), opaque to the store; nil when none.
	// It is stored by StartRunLog and read back by GetRunLog and
	// LatestRunLog, byte for byte. An empty Input is none: it reads back
	// nil.
	Input []byte
}

// RunLogBatch is events First to First+Count-1 of a log. Frames holds
// them as the recorder keeps them (bridge/internal/runlog: each event's
// SSE frame, less what it shares with the one before it in the batch):
// opaque to the store, which gives a batch back whole, byte for byte.
type RunLogBatch struct {
	First  int64
	Count  int
	Frames []byte
}

// ErrRunLogGap is AppendRunLog's error for a batch that does not begin
// right after the events the log holds (a lost or repeated batch), or for
// a log that has finished.
var ErrRunLogGap = errors.New("store: the batch does not continue the run log")

// RunLogStore keeps the runs' logs.
type RunLogStore interface {
	// StartRunLog stores a new, empty, running log (l.ID set by the
	// caller; ErrExists when taken) with a copy of l.Input, setting
	// l.Started when zero. The key's older logs are dropped, all but the
	// one that started last before it. Older is by Started, not by when
	// the store was told (a run's first write may come late), and of logs
	// that started at the same time the one stored first is the older.
	StartRunLog(ctx context.Context, l *RunLog) error
	// AppendRunLog adds b to log id, whose events must number exactly
	// b.First-1 (else ErrRunLogGap), and marks it finished when finished
	// is set (b may then be empty). A log that is gone is ErrNotFound.
	AppendRunLog(ctx context.Context, id string, b RunLogBatch, finished bool) error
	// GetRunLog returns owner's log id; ErrNotFound for one of another
	// owner or one that is gone.
	GetRunLog(ctx context.Context, owner, id string) (*RunLog, error)
	// LatestRunLog returns the log of the key's run that started last
	// (by Started, as StartRunLog orders them); ErrNotFound when it has
	// none.
	LatestRunLog(ctx context.Context, owner, key string) (*RunLog, error)
	// ReadRunLog returns, in order, the batches of log id that hold the
	// events after event number after, as many as come to about maxBytes
	// (at least one, when there is one: the stores stop before the batch
	// that would take their frames past maxBytes); the first may begin
	// at or before after (the caller skips what it had). A log that is
	// gone is ErrNotFound.
	ReadRunLog(ctx context.Context, id string, after int64, maxBytes int) ([]RunLogBatch, error)
	// DeleteRunLogs drops every log of owner's key (the session or
	// thread is deleted).
	DeleteRunLogs(ctx context.Context, owner, key string) error
	// StopRunLog marks owner's running log id as asked to stop: the
	// process that runs it learns of it (StoppingRunLogs) and ends the
	// run. A log that has finished, is gone or is another owner's is
	// ErrNotFound; marking a log twice is no error.
	StopRunLog(ctx context.Context, owner, id string) error
	// StoppingRunLogs returns the ids of the logs, of every owner, that
	// run and were asked to stop: a process asks it about once a second
	// while it runs runs, so it is cheap (the stores keep the marked
	// running logs apart, or in a partial index).
	StoppingRunLogs(ctx context.Context) ([]string, error)
}
