package turns_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/bridge/internal/turns"
	"github.com/aapagui/aapagui/bridge/internal/upstream"
	"github.com/aapagui/aapagui/store"
)

// textWriter writes strings as "data: s" frames; "end" ends the answer.
var textWriter = turns.Writer[string]{
	Frame: func(b []byte, s string) ([]byte, error) {
		if s == "bad" {
			return b, errors.New("cannot encode")
		}
		return append(append(append(b, "data: "...), s...), "\n\n"...), nil
	},
	Name:  func(s string) string { return s },
	Final: func(s string) bool { return s == "end" },
}

// beginTurn starts a turn on a fresh memory store's session lock.
func beginTurn(t *testing.T, s *turns.Serving) (context.Context, *turns.Turn, *httptest.ResponseRecorder) {
	t.Helper()
	require.NoError(t, s.SetDefaults("test"))
	b, err := s.NewBase(turns.BaseOptions{Name: "test", Unit: "turn"})
	require.NoError(t, err)
	lease, err := store.TakeThread(context.Background(), store.NewMemory(), "owner", "t1", store.LeaseOptions{})
	require.NoError(t, err)
	log := zerolog.Nop()
	ctx, turn := b.BeginTurn(context.Background(), lease, &log, turns.LogLine{What: "turn", IDKey: "session", ID: "s1"})
	t.Cleanup(turn.Close)
	rec := httptest.NewRecorder()
	turn.OpenStream(rec)
	return ctx, turn, rec
}

// The event that ends the answer is withheld until the bridge sends it
// (the turn stored), or sends an error in its place; an event that cannot
// be encoded is left out, never half-written.
func TestWriterWithholdsTheEnd(t *testing.T) {
	_, turn, rec := beginTurn(t, &turns.Serving{})
	w := textWriter
	w.Write(turn, []string{"a", "bad", "b", "end"}, nil)
	turn.Out.Flush()
	assert.Equal(t, "data: a\n\ndata: b\n\n", rec.Body.String(), "the end is withheld")

	end, ok := w.Withheld()
	require.True(t, ok)
	assert.Equal(t, "end", end)
	_, again := w.Withheld()
	assert.False(t, again, "the withheld event is taken once")

	w.Send(turn, "error")
	assert.Equal(t, "data: a\n\ndata: b\n\ndata: error\n\n", rec.Body.String())
}

// A turn's context says why its stream ended before the stream's error
// does: past its longest duration, the result is turn_too_long (told to
// the client); a client that left is a cancellation, told to nobody.
func TestTurnEnded(t *testing.T) {
	ctx, turn, _ := beginTurn(t, &turns.Serving{MaxTurnDuration: time.Millisecond})
	<-ctx.Done()
	result, told := turn.Cut(ctx, errors.New("read: context deadline exceeded"))
	assert.Equal(t, "turn_too_long", result)
	assert.ErrorIs(t, told, fault.ErrTurnTooLong)

	ctx, turn, _ = beginTurn(t, &turns.Serving{})
	cut := errors.New("unexpected EOF")
	result, told = turn.Cut(ctx, cut)
	assert.Equal(t, "upstream_read_error", result)
	assert.Equal(t, cut, told, "the upstream's failure is told to the client")

	ctx, turn, _ = beginTurn(t, &turns.Serving{})
	turn.Out.Cancel(fault.ErrClientGone) // what a failed write does
	result, told = turn.Cut(ctx, errors.New("read: context canceled"))
	assert.Equal(t, "cancelled", result)
	assert.NoError(t, told, "nobody reads the stream any more")
}

// The failures both bridges name the same way.
func TestUpstreamFailure(t *testing.T) {
	f := upstream.Failure(upstream.ErrHeaderTimeout, "the agent", 3*time.Second)
	assert.Equal(t, 504, f.Kind.Status())
	assert.Equal(t, "upstream_timeout", f.Code)
	assert.Equal(t, "the agent did not answer within 3s", f.Message)

	f = upstream.Failure(errors.New("dial tcp: connection refused"), "the AAP server", time.Second)
	assert.Equal(t, 502, f.Kind.Status())
	assert.Equal(t, "upstream_unreachable", f.Code)
	assert.True(t, strings.HasPrefix(f.Message, "the AAP server"))
}

// What becomes of a turn whose client left: cancel unless finish is
// asked for; finish bounds the turn all the same; anything else is
// refused at start-up.
func TestOnClientGone(t *testing.T) {
	s := turns.Serving{}
	require.NoError(t, s.SetDefaults("test"))
	assert.Equal(t, turns.ClientGoneCancel, s.OnClientGone)
	assert.Zero(t, s.MaxTurnDuration)

	s = turns.Serving{OnClientGone: turns.ClientGoneFinish}
	require.NoError(t, s.SetDefaults("test"))
	assert.Equal(t, turns.DefaultFinishBound, s.MaxTurnDuration)

	s = turns.Serving{OnClientGone: turns.ClientGoneFinish, MaxTurnDuration: -1}
	require.NoError(t, s.SetDefaults("test"))
	assert.Equal(t, time.Duration(-1), s.MaxTurnDuration, "an explicit no-limit stays")

	s = turns.Serving{OnClientGone: "stay"}
	assert.ErrorContains(t, s.SetDefaults("test"), `OnClientGone "stay": want cancel or finish`)
}
