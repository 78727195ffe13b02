package turns_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/internal/turns"
	"github.com/aapagui/aapagui/store"
)

// panicking is a Protocol whose step at panics, as a bridge's bug would:
// "prepare" or "call".
type panicking struct {
	st      *store.Memory
	at      string
	ended   bool // Turn.End ran (onEnd)
	streams bool
}

func (p *panicking) Take(start context.Context, lo store.LeaseOptions) (*store.Lease, error) {
	return store.TakeThread(start, p.st, "owner", "t1", lo)
}

func (p *panicking) Prepare(_ context.Context, t *turns.Turn) error {
	if p.at == "prepare" {
		panic("prepare: boom")
	}
	t.OnEnd(func() { p.ended = true })
	return nil
}

func (p *panicking) Call(context.Context, *turns.Turn) error {
	if p.at == "call" {
		panic("call: boom")
	}
	return nil
}

func (p *panicking) Stream(context.Context, *turns.Turn) error {
	p.streams = true
	return nil
}

func (p *panicking) Store(context.Context, string) error  { return nil }
func (p *panicking) Acknowledge(*turns.Turn, error) error { return nil }

// A turn whose start panics (its Prepare or its Call, run aside) raises
// the panic where the server's recovery sees it, and leaves its
// conversation's lock free: the next turn is taken at once, not after the
// lease's TTL. One that was prepared is ended too.
func TestStartPanicFreesTheLock(t *testing.T) {
	for _, at := range []string{"prepare", "call"} {
		t.Run(at, func(t *testing.T) {
			s := &turns.Serving{}
			b, err := s.NewBase(turns.BaseOptions{Name: "test", Unit: "turn"})
			require.NoError(t, err)
			p := &panicking{st: store.NewMemory(), at: at}
			c, _ := gin.CreateTestContext(httptest.NewRecorder())
			c.Request = httptest.NewRequest("POST", "/", nil)
			assert.PanicsWithValue(t, at+": boom", func() {
				_ = b.Run(c, turns.TurnEnd{What: "turn", IDKey: "thread", ID: "t1"}, p)
			})
			assert.False(t, p.streams)
			assert.Equal(t, at == "call", p.ended, "ended once prepared")
			lease, err := store.TakeThread(context.Background(), p.st, "owner", "t1", store.LeaseOptions{})
			require.NoError(t, err, "the lock is free")
			lease.Release()
		})
	}
}
