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
// tracing); the operations themselves are st's, optional ones
// (SessionLoader) included.
func Observe(st Store, o Observer) Store {
	obs := &observed{st: st, observedThreads: observedThreads{ts: st, o: o}}
	if ll, ok := st.(SessionLockLoader); ok {
		return &observedLockLoader{obs, ll}
	}
	return obs
}

// ObserveThreads is Observe for a ThreadStore; a whole Store stays one
// (Observe).
func ObserveThreads(ts ThreadStore, o Observer) ThreadStore {
	if st, ok := ts.(Store); ok {
		return Observe(st, o)
	}
	return &observedThreads{ts: ts, o: o}
}

type observed struct {
	st Store
	observedThreads
}

type observedThreads struct {
	ts ThreadStore
	o  Observer
}

func (s *observed) CreateSession(ctx context.Context, sess *Session, seed []Entry) error {
	ctx, done := s.o(ctx, "CreateSession")
	err := s.st.CreateSession(ctx, sess, seed)
	done(err)
	return err
}

// CreateSessionWithin is reported as CreateSession: the same operation,
// with a limit.
func (s *observed) CreateSessionWithin(ctx context.Context, sess *Session, seed []Entry, max int) error {
	ctx, done := s.o(ctx, "CreateSession")
	err := s.st.CreateSessionWithin(ctx, sess, seed, max)
	done(err)
	return err
}

func (s *observed) GetSession(ctx context.Context, owner, id string) (*Session, error) {
	ctx, done := s.o(ctx, "GetSession")
	sess, err := s.st.GetSession(ctx, owner, id)
	done(err)
	return sess, err
}

func (s *observed) ListSessions(ctx context.Context, owner string, after int64, limit int) ([]*Session, error) {
	ctx, done := s.o(ctx, "ListSessions")
	list, err := s.st.ListSessions(ctx, owner, after, limit)
	done(err)
	return list, err
}

func (s *observed) UpdateSession(ctx context.Context, sess *Session) error {
	ctx, done := s.o(ctx, "UpdateSession")
	err := s.st.UpdateSession(ctx, sess)
	done(err)
	return err
}

func (s *observed) SaveSession(ctx context.Context, sess *Session, appended []Entry) error {
	ctx, done := s.o(ctx, "SaveSession")
	err := s.st.SaveSession(ctx, sess, appended)
	done(err)
	return err
}

func (s *observed) SaveSessionUnlock(ctx context.Context, sess *Session, appended []Entry, holder string) error {
	ctx, done := s.o(ctx, "SaveSessionUnlock")
	err := s.st.SaveSessionUnlock(ctx, sess, appended, holder)
	done(err)
	return err
}

func (s *observed) DeleteSession(ctx context.Context, owner, id string) error {
	ctx, done := s.o(ctx, "DeleteSession")
	err := s.st.DeleteSession(ctx, owner, id)
	done(err)
	return err
}

func (s *observed) AppendHistory(ctx context.Context, id string, entries []Entry) error {
	ctx, done := s.o(ctx, "AppendHistory")
	err := s.st.AppendHistory(ctx, id, entries)
	done(err)
	return err
}

func (s *observed) ReplaceHistory(ctx context.Context, id string, entries []Entry) error {
	ctx, done := s.o(ctx, "ReplaceHistory")
	err := s.st.ReplaceHistory(ctx, id, entries)
	done(err)
	return err
}

func (s *observed) ReplaceTail(ctx context.Context, id string, from int, entries []Entry) error {
	ctx, done := s.o(ctx, "ReplaceTail")
	err := s.st.ReplaceTail(ctx, id, from, entries)
	done(err)
	return err
}

func (s *observed) History(ctx context.Context, id string) ([]Entry, error) {
	ctx, done := s.o(ctx, "History")
	h, err := s.st.History(ctx, id)
	done(err)
	return h, err
}

func (s *observed) Lock(ctx context.Context, id, holder string, ttl time.Duration) (bool, time.Duration, error) {
	ctx, done := s.o(ctx, "Lock")
	ok, left, err := s.st.Lock(ctx, id, holder, ttl)
	done(err)
	return ok, left, err
}

func (s *observed) Unlock(ctx context.Context, id, holder string) error {
	ctx, done := s.o(ctx, "Unlock")
	err := s.st.Unlock(ctx, id, holder)
	done(err)
	return err
}

func (s *observed) Ping(ctx context.Context) error {
	ctx, done := s.o(ctx, "Ping")
	err := s.st.Ping(ctx)
	done(err)
	return err
}

// LoadSession is the store's own LoadSession (one operation) when it has
// one, else GetSession and History (two).
func (s *observed) LoadSession(ctx context.Context, owner, id string) (*Session, []Entry, error) {
	l, ok := s.st.(SessionLoader)
	if !ok {
		sess, err := s.GetSession(ctx, owner, id)
		if err != nil {
			return nil, nil, err
		}
		hist, err := s.History(ctx, id)
		if err != nil {
			return nil, nil, err
		}
		return sess, hist, nil
	}
	ctx, done := s.o(ctx, "LoadSession")
	sess, hist, err := l.LoadSession(ctx, owner, id)
	done(err)
	return sess, hist, err
}

// observedLockLoader is an observed store that has LockLoadSession, so
// that TakeAndLoadSession finds it exactly when the store underneath has it.
type observedLockLoader struct {
	*observed
	ll SessionLockLoader
}

// LockLoadSession is the store's own LockLoadSession, one operation.
func (s *observedLockLoader) LockLoadSession(ctx context.Context, owner, id, holder string, known int64, ttl time.Duration) (*Session, []Entry, bool, time.Duration, error) {
	ctx, done := s.o(ctx, "LockLoadSession")
	sess, hist, ok, left, err := s.ll.LockLoadSession(ctx, owner, id, holder, known, ttl)
	done(err)
	return sess, hist, ok, left, err
}

// RenewLock is the store's own RenewLock (LockRenewer) where it has one,
// else its Lock, so that an observed store's heartbeats keep their lane.
// It is reported as Lock, the operation a renewal has always been.
func (s *observed) RenewLock(ctx context.Context, id, holder string, ttl time.Duration) (bool, error) {
	ctx, done := s.o(ctx, "Lock")
	ok, err := sessionRenewal(s.st, id, holder)(ctx, ttl)
	done(err)
	return ok, err
}

// RenewThreadLock is RenewLock for a thread's lock, reported as
// LockThread.
func (s *observed) RenewThreadLock(ctx context.Context, owner, id, holder string, ttl time.Duration) (bool, error) {
	ctx, done := s.o(ctx, "LockThread")
	var ok bool
	var err error
	if r, isRenewer := s.st.(LockRenewer); isRenewer {
		ok, err = r.RenewThreadLock(ctx, owner, id, holder, ttl)
	} else {
		ok, _, err = s.st.LockThread(ctx, owner, id, holder, ttl)
	}
	done(err)
	return ok, err
}

func (s *observed) StartRunLog(ctx context.Context, l *RunLog) error {
	ctx, done := s.o(ctx, "StartRunLog")
	err := s.st.StartRunLog(ctx, l)
	done(err)
	return err
}

func (s *observed) AppendRunLog(ctx context.Context, id string, b RunLogBatch, finished bool) error {
	ctx, done := s.o(ctx, "AppendRunLog")
	err := s.st.AppendRunLog(ctx, id, b, finished)
	done(err)
	return err
}

func (s *observed) GetRunLog(ctx context.Context, owner, id string) (*RunLog, error) {
	ctx, done := s.o(ctx, "GetRunLog")
	l, err := s.st.GetRunLog(ctx, owner, id)
	done(err)
	return l, err
}

func (s *observed) StopRunLog(ctx context.Context, owner, id string) error {
	ctx, done := s.o(ctx, "StopRunLog")
	err := s.st.StopRunLog(ctx, owner, id)
	done(err)
	return err
}

func (s *observed) StoppingRunLogs(ctx context.Context) ([]string, error) {
	ctx, done := s.o(ctx, "StoppingRunLogs")
	ids, err := s.st.StoppingRunLogs(ctx)
	done(err)
	return ids, err
}

func (s *observed) LatestRunLog(ctx context.Context, owner, key string) (*RunLog, error) {
	ctx, done := s.o(ctx, "LatestRunLog")
	l, err := s.st.LatestRunLog(ctx, owner, key)
	done(err)
	return l, err
}

func (s *observed) ReadRunLog(ctx context.Context, id string, after int64, maxBytes int) ([]RunLogBatch, error) {
	ctx, done := s.o(ctx, "ReadRunLog")
	batches, err := s.st.ReadRunLog(ctx, id, after, maxBytes)
	done(err)
	return batches, err
}

func (s *observed) DeleteRunLogs(ctx context.Context, owner, key string) error {
	ctx, done := s.o(ctx, "DeleteRunLogs")
	err := s.st.DeleteRunLogs(ctx, owner, key)
	done(err)
	return err
}

// Close closes the store underneath; it is not an operation worth
// observing.
func (s *observed) Close() error { return s.st.Close() }

func (s *observedThreads) GetThread(ctx context.Context, owner, id string) (*Thread, error) {
	ctx, done := s.o(ctx, "GetThread")
	t, err := s.ts.GetThread(ctx, owner, id)
	done(err)
	return t, err
}

func (s *observedThreads) SaveThreadUnlock(ctx context.Context, t *Thread, holder string) error {
	ctx, done := s.o(ctx, "SaveThreadUnlock")
	err := s.ts.SaveThreadUnlock(ctx, t, holder)
	done(err)
	return err
}

func (s *observedThreads) SaveThread(ctx context.Context, t *Thread) error {
	ctx, done := s.o(ctx, "SaveThread")
	err := s.ts.SaveThread(ctx, t)
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

func (s *observed) AddHistoryPart(ctx context.Context, sessionID string, part TextPart) error {
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
