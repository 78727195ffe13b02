package turns_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/aapagui/aapagui/bridge/internal/tracing"
	"github.com/aapagui/aapagui/bridge/internal/turns"
	"github.com/aapagui/aapagui/store"
)

// panicking is a Protocol whose step at panics, as a bridge's bug would:
// "prepare" or "call".
type panicking struct {
	st      *store.Memory
	at      string
	ended   bool // Turn.Report ran (OnReport)
	streams bool
}

func (p *panicking) Take(start context.Context, lo store.LeaseOptions) (*store.Lease, error) {
	return store.TakeThread(start, p.st, "owner", "t1", lo)
}

func (p *panicking) Prepare(_ context.Context, t *turns.Turn) (turns.Plan, error) {
	if p.at == "prepare" {
		panic("prepare: boom")
	}
	t.OnReport(func() { p.ended = true })
	return turns.Plan{}, nil
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
			assert.PanicsWithValue(t, at+": boom", func() {
				_ = b.Run(context.Background(), httptest.NewRecorder(), turns.LogLine{What: "turn", IDKey: "thread", ID: "t1"}, p)
			})
			assert.False(t, p.streams)
			assert.Equal(t, at == "call", p.ended, "ended once prepared")
			lease, err := store.TakeThread(context.Background(), p.st, "owner", "t1", store.LeaseOptions{})
			require.NoError(t, err, "the lock is free")
			lease.Release()
		})
	}
}

// steps is a Protocol that notes each step Run takes and what the turn
// holds then: whether it is counted (Met), kept in its run log, its
// client's stream open, its lock free; refuse names the step that fails.
type steps struct {
	st     *store.Memory
	refuse string
	got    []string
}

func (p *steps) note(step string, t *turns.Turn) error {
	if t == nil {
		p.got = append(p.got, step)
	} else {
		p.got = append(p.got, fmt.Sprintf("%s counted=%t logged=%t open=%t", step, t.Met != nil, t.RunLog != nil, t.Out != nil))
	}
	if step == p.refuse {
		return errors.New(step + " refused")
	}
	return nil
}

func (p *steps) Take(start context.Context, lo store.LeaseOptions) (*store.Lease, error) {
	if err := p.note("take", nil); err != nil {
		return nil, err
	}
	return store.TakeThread(start, p.st, "owner", "t1", lo)
}

func (p *steps) Prepare(_ context.Context, t *turns.Turn) (turns.Plan, error) {
	plan := turns.Plan{Agent: "writer", Mode: "delta", RunLog: &turns.RunLog{Store: p.st, Log: store.RunLog{Owner: "owner", Key: "k", RunID: "r1", Form: "delta"}}}
	return plan, p.note("prepare", t)
}

func (p *steps) Call(_ context.Context, t *turns.Turn) error { return p.note("call", t) }

func (p *steps) Stream(_ context.Context, t *turns.Turn) error { return p.note("stream", t) }

// Store writes the thread with holder's lock, which frees it, as a
// bridge's last write does.
func (p *steps) Store(ctx context.Context, holder string) error {
	if err := p.note("store", nil); err != nil {
		return err
	}
	return p.st.SaveThread(ctx, &store.Thread{Owner: "owner", ID: "t1"}, holder)
}

func (p *steps) Acknowledge(t *turns.Turn, stored error) error {
	lease, err := store.TakeThread(context.Background(), p.st, "owner", "t1", store.LeaseOptions{})
	if err == nil {
		lease.Release()
	}
	p.got = append(p.got, fmt.Sprintf("acknowledge stored=%v free=%t", stored, err == nil))
	return nil
}

// Run takes a turn's steps in one order, whichever bridge's: the lock,
// the plan, then the agent traced and the turn counted; the call, then
// the run log kept and the client's stream opened; the stream, the last
// write, and the end acknowledged once the lock is free. A step that
// refuses the turn stops it there, and what comes after it is not done.
func TestRunTakesTheStepsInOneOrder(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	s := &turns.Serving{}
	require.NoError(t, s.SetDefaults("test"))
	b, err := s.NewBase(turns.BaseOptions{Name: "test", Unit: "turn"})
	require.NoError(t, err)
	run := func(p *steps) error {
		ctx, span := tp.Tracer("test").Start(context.Background(), "turn")
		defer span.End()
		return b.Run(ctx, httptest.NewRecorder(), turns.LogLine{What: "turn", IDKey: "thread", ID: "t1"}, p)
	}

	p := &steps{st: store.NewMemory()}
	require.NoError(t, run(p))
	assert.Equal(t, []string{
		"take",
		"prepare counted=false logged=false open=false",
		"call counted=true logged=false open=false",
		"stream counted=true logged=true open=true",
		"store",
		"acknowledge stored=<nil> free=true",
	}, p.got)
	spans := exp.GetSpans()
	require.Len(t, spans, 1)
	assert.Contains(t, spans[0].Attributes, tracing.AgentKey.String("writer"), "the agent traced")

	for refuse, want := range map[string][]string{
		"prepare": {"take", "prepare counted=false logged=false open=false"},
		"call":    {"take", "prepare counted=false logged=false open=false", "call counted=true logged=false open=false"},
	} {
		p := &steps{st: store.NewMemory(), refuse: refuse}
		require.EqualError(t, run(p), refuse+" refused")
		assert.Equal(t, want, p.got, refuse)
		lease, err := store.TakeThread(context.Background(), p.st, "owner", "t1", store.LeaseOptions{})
		require.NoError(t, err, "the lock is free")
		lease.Release()
	}
}
