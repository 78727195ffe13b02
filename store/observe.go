package store

import (
	"context"
	"encoding/json"
	"time"
)

// Observer is told of each store operation: it is called as the operation
// starts, with its name ("GetSession", "AppendHistory", …), and returns
// the context to run it with (one carrying a trace span, say) and a
// function called with its result when it ends.
type Observer func(ctx context.Context, op string) (context.Context, func(error))

// Observe returns st with every operation reported to o (metrics,
// tracing); the operations themselves are st's.
func Observe(st Store, o Observer) Store {
	return &observed{observedSessions{st, o}, observedThreads{st, o}, observedRunLogs{st, st, o}, st}
}

// ObserveSessions is Observe for what aap2agui needs of a store.
func ObserveSessions(st Sessions, o Observer) Sessions {
	return &struct {
		observedSessions
		observedRunLogs
	}{observedSessions{st, o}, observedRunLogs{st, st, o}}
}

// ObserveThreads is Observe for what agui2aap needs of a store.
func ObserveThreads(ts Threads, o Observer) Threads {
	return &struct {
		observedThreads
		observedRunLogs
	}{observedThreads{ts, o}, observedRunLogs{ts, ts, o}}
}

// observed is a whole Store observed, made of the observed parts.
type observed struct {
	observedSessions
	observedThreads
	observedRunLogs
	closer interface{ Close() error }
}

func (s *observed) Close() error { return s.closer.Close() }

type observedSessions struct {
	st interface {
		SessionStore
		HistoryStore
		SessionLocker
	}
	o Observer
}

type observedThreads struct {
	ts ThreadStore
	o  Observer
}

type observedRunLogs struct {
	rl RunLogStore
	p  Pinger
	o  Observer
}

func (s *observedSessions) CreateSession(ctx context.Context, sess *Session, seed []Entry, max int) error {
	ctx, done := s.o(ctx, "CreateSession")
	err := s.st.CreateSession(ctx, sess, seed, max)
	done(err)
	return err
}

func (s *observedSessions) GetSession(ctx context.Context, owner, id string) (*Session, error) {
	ctx, done := s.o(ctx, "GetSession")
	sess, err := s.st.GetSession(ctx, owner, id)
	done(err)
	return sess, err
}

func (s *observedSessions) ListSessions(ctx context.Context, owner string, after int64, limit int) ([]*Session, error) {
	ctx, done := s.o(ctx, "ListSessions")
	list, err := s.st.ListSessions(ctx, owner, after, limit)
	done(err)
	return list, err
}

// SaveSession is reported as SaveSessionUnlock when it frees a lock (a
// turn's end), as SaveSession when it does not (a turn's start).
func (s *observedSessions) SaveSession(ctx context.Context, sess *Session, appended []Entry, holder string) error {
	op := "SaveSession"
	if holder != "" {
		op = "SaveSessionUnlock"
	}
	ctx, done := s.o(ctx, op)
	err := s.st.SaveSession(ctx, sess, appended, holder)
	done(err)
	return err
}

func (s *observedSessions) DeleteSession(ctx context.Context, owner, id string) error {
	ctx, done := s.o(ctx, "DeleteSession")
	err := s.st.DeleteSession(ctx, owner, id)
	done(err)
	return err
}

func (s *observedSessions) AppendHistory(ctx context.Context, id string, entries []Entry) error {
	ctx, done := s.o(ctx, "AppendHistory")
	err := s.st.AppendHistory(ctx, id, entries)
	done(err)
	return err
}

func (s *observedSessions) ReplaceTail(ctx context.Context, id string, from int, entries []Entry) error {
	ctx, done := s.o(ctx, "ReplaceTail")
	err := s.st.ReplaceTail(ctx, id, from, entries)
	done(err)
	return err
}

func (s *observedSessions) History(ctx context.Context, id string) ([]Entry, error) {
	ctx, done := s.o(ctx, "History")
	h, err := s.st.History(ctx, id)
	done(err)
	return h, err
}

func (s *observedSessions) Lock(ctx context.Context, id, holder string, ttl time.Duration) (bool, time.Duration, error) {
	ctx, done := s.o(ctx, "Lock")
	ok, left, err := s.st.Lock(ctx, id, holder, ttl)
	done(err)
	return ok, left, err
}

func (s *observedSessions) Unlock(ctx context.Context, id, holder string) error {
	ctx, done := s.o(ctx, "Unlock")
	err := s.st.Unlock(ctx, id, holder)
	done(err)
	return err
}

func (s *observedRunLogs) Ping(ctx context.Context) error {
	ctx, done := s.o(ctx, "Ping")
	err := s.p.Ping(ctx)
	done(err)
	return err
}

// LockLoadSession is reported as one operation.
func (s *observedSessions) LockLoadSession(ctx context.Context, owner, id, holder string, known int64, ttl time.Duration) (*Session, []Entry, bool, time.Duration, error) {
	ctx, done := s.o(ctx, "LockLoadSession")
	sess, hist, ok, left, err := s.st.LockLoadSession(ctx, owner, id, holder, known, ttl)
	done(err)
	return sess, hist, ok, left, err
}

// RenewLock is reported as Lock, the operation a renewal has always been.
func (s *observedSessions) RenewLock(ctx context.Context, id, holder string, ttl time.Duration) (bool, error) {
	ctx, done := s.o(ctx, "Lock")
	ok, err := s.st.RenewLock(ctx, id, holder, ttl)
	done(err)
	return ok, err
}

// RenewThreadLock is reported as LockThread.
func (s *observedThreads) RenewThreadLock(ctx context.Context, owner, id, holder string, ttl time.Duration) (bool, error) {
	ctx, done := s.o(ctx, "LockThread")
	ok, err := s.ts.RenewThreadLock(ctx, owner, id, holder, ttl)
	done(err)
	return ok, err
}

func (s *observedRunLogs) StartRunLog(ctx context.Context, l *RunLog) error {
	ctx, done := s.o(ctx, "StartRunLog")
	err := s.rl.StartRunLog(ctx, l)
	done(err)
	return err
}

func (s *observedRunLogs) AppendRunLog(ctx context.Context, id string, b RunLogBatch, finished bool) error {
	ctx, done := s.o(ctx, "AppendRunLog")
	err := s.rl.AppendRunLog(ctx, id, b, finished)
	done(err)
	return err
}

func (s *observedRunLogs) GetRunLog(ctx context.Context, owner, id string) (*RunLog, error) {
	ctx, done := s.o(ctx, "GetRunLog")
	l, err := s.rl.GetRunLog(ctx, owner, id)
	done(err)
	return l, err
}

func (s *observedRunLogs) StopRunLog(ctx context.Context, owner, id string) error {
	ctx, done := s.o(ctx, "StopRunLog")
	err := s.rl.StopRunLog(ctx, owner, id)
	done(err)
	return err
}

func (s *observedRunLogs) StoppingRunLogs(ctx context.Context) ([]string, error) {
	ctx, done := s.o(ctx, "StoppingRunLogs")
	ids, err := s.rl.StoppingRunLogs(ctx)
	done(err)
	return ids, err
}

func (s *observedRunLogs) LatestRunLog(ctx context.Context, owner, key string) (*RunLog, error) {
	ctx, done := s.o(ctx, "LatestRunLog")
	l, err := s.rl.LatestRunLog(ctx, owner, key)
	done(err)
	return l, err
}

func (s *observedRunLogs) ReadRunLog(ctx context.Context, id string, after int64, maxBytes int) ([]RunLogBatch, error) {
	ctx, done := s.o(ctx, "ReadRunLog")
	batches, err := s.rl.ReadRunLog(ctx, id, after, maxBytes)
	done(err)
	return batches, err
}

func (s *observedRunLogs) DeleteRunLogs(ctx context.Context, owner, key string) error {
	ctx, done := s.o(ctx, "DeleteRunLogs")
	err := s.rl.DeleteRunLogs(ctx, owner, key)
	done(err)
	return err
}

// Close closes the store underneath; it is not an operation worth
// observing.

func (s *observedThreads) GetThread(ctx context.Context, owner, id string) (*Thread, error) {
	ctx, done := s.o(ctx, "GetThread")
	t, err := s.ts.GetThread(ctx, owner, id)
	done(err)
	return t, err
}

// SaveThread is reported as SaveThreadUnlock when it frees a lock (a
// run's end), as SaveThread when it does not.
func (s *observedThreads) SaveThread(ctx context.Context, t *Thread, holder string) error {
	op := "SaveThread"
	if holder != "" {
		op = "SaveThreadUnlock"
	}
	ctx, done := s.o(ctx, op)
	err := s.ts.SaveThread(ctx, t, holder)
	done(err)
	return err
}

func (s *observedThreads) LockThread(ctx context.Context, owner, id, holder string, ttl time.Duration) (bool, time.Duration, error) {
	ctx, done := s.o(ctx, "LockThread")
	ok, left, err := s.ts.LockThread(ctx, owner, id, holder, ttl)
	done(err)
	return ok, left, err
}

func (s *observedThreads) UnlockThread(ctx context.Context, owner, id, holder string) error {
	ctx, done := s.o(ctx, "UnlockThread")
	err := s.ts.UnlockThread(ctx, owner, id, holder)
	done(err)
	return err
}

func (s *observedThreads) ListThreads(ctx context.Context, owner string, after ThreadPage, limit int) ([]*Thread, error) {
	ctx, done := s.o(ctx, "ListThreads")
	ts, err := s.ts.ListThreads(ctx, owner, after, limit)
	done(err)
	return ts, err
}

func (s *observedThreads) CountThreads(ctx context.Context, owner string) (int, error) {
	ctx, done := s.o(ctx, "CountThreads")
	n, err := s.ts.CountThreads(ctx, owner)
	done(err)
	return n, err
}

func (s *observedThreads) DeleteThread(ctx context.Context, owner, id string) error {
	ctx, done := s.o(ctx, "DeleteThread")
	err := s.ts.DeleteThread(ctx, owner, id)
	done(err)
	return err
}

func (s *observedThreads) ThreadRecord(ctx context.Context, owner, id string) ([]json.RawMessage, error) {
	ctx, done := s.o(ctx, "ThreadRecord")
	rec, err := s.ts.ThreadRecord(ctx, owner, id)
	done(err)
	return rec, err
}

func (s *observedSessions) AddHistoryPart(ctx context.Context, sessionID string, part TextPart) error {
	ctx, done := s.o(ctx, "AddHistoryPart")
	err := s.st.AddHistoryPart(ctx, sessionID, part)
	done(err)
	return err
}

func (s *observedThreads) AddRecordPart(ctx context.Context, owner, threadID string, part TextPart) error {
	ctx, done := s.o(ctx, "AddRecordPart")
	err := s.ts.AddRecordPart(ctx, owner, threadID, part)
	done(err)
	return err
}
