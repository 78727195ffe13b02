package aap2agui_test

import (
	"context"
	"testing"

	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/store"
)

// notifyStore tells when a turn has released its session's lock: the
// last thing a turn does, after storing everything it received.
type notifyStore struct {
	store.Store
	unlocked chan string
}

func newNotifyStore(s store.Store) *notifyStore {
	return &notifyStore{Store: s, unlocked: make(chan string, 64)}
}

func (s *notifyStore) Unlock(ctx context.Context, id, holder string) error {
	err := s.Store.Unlock(ctx, id, holder)
	s.unlocked <- id
	return err
}

// SaveSession with a holder is a turn's usual end: its last save frees
// the lock (a failed one is followed by Unlock).
func (s *notifyStore) SaveSession(ctx context.Context, sess *store.Session, appended []store.Entry, holder string) error {
	err := s.Store.SaveSession(ctx, sess, appended, holder)
	if err == nil && holder != "" {
		s.unlocked <- sess.ID
	}
	return err
}

// waitUnlocked waits for the turn of session id to end.
func (s *notifyStore) waitUnlocked(t *testing.T, id string) {
	t.Helper()
	ctx := bridgetest.Context(t)
	for {
		select {
		case got := <-s.unlocked:
			if got == id {
				return
			}
		case <-ctx.Done():
			t.Fatalf("the turn of session %s did not end", id)
		}
	}
}
