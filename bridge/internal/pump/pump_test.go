package pump_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/internal/pump"
	"github.com/aapagui/aapagui/bridge/internal/upstream"
	"github.com/aapagui/aapagui/internal/sse"
)

// body is an upstream's body of the given SSE text.
func body(t *testing.T, text string) *upstream.IdleBody {
	t.Helper()
	b, err := upstream.Dial(context.Background(), time.Second, time.Minute, func(context.Context) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(text)), nil
	})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	return b
}

// taker records what it is handed, and where: fast names the frames its
// TakeFast takes, doneAt the frame after which it reports done, failAt
// the frame it fails.
type taker struct {
	fast           map[string]bool
	doneAt, failAt string
	got            []string
}

func (k *taker) Take(_ context.Context, name string, data []byte) (bool, error) {
	k.got = append(k.got, "aside "+name+" "+string(data))
	if string(data) == k.failAt {
		return false, errors.New("bad event")
	}
	return string(data) == k.doneAt, nil
}

func (k *taker) TakeFast(_ context.Context, name string, data []byte) (ok, done bool, err error) {
	if !k.fast[name] {
		return false, false, nil
	}
	k.got = append(k.got, "fast "+name+" "+string(data))
	return true, string(data) == k.doneAt, nil
}

// slowTaker is a taker without its fast path.
type slowTaker struct{ k *taker }

func (s slowTaker) Take(ctx context.Context, name string, data []byte) (bool, error) {
	return s.k.Take(ctx, name, data)
}

const stream = "event: text_delta\ndata: a\n\nevent: tool_call\ndata: b\n\ndata: c\n\nevent: text_delta\ndata: d\n\n"

// Every frame reaches the taker once, in order: the frames its fast path
// takes there, the others aside; a taker without one gets them all aside.
func TestRunHandsEveryFrameOnce(t *testing.T) {
	k := &taker{fast: map[string]bool{"text_delta": true}}
	require.NoError(t, pump.Run(context.Background(), pump.Source{Body: body(t, stream)}, k))
	assert.Equal(t, []string{"fast text_delta a", "aside tool_call b", "aside  c", "fast text_delta d"}, k.got)

	s := slowTaker{&taker{fast: map[string]bool{"text_delta": true}}}
	require.NoError(t, pump.Run(context.Background(), pump.Source{Body: body(t, stream)}, s))
	assert.Equal(t, []string{"aside text_delta a", "aside tool_call b", "aside  c", "aside text_delta d"}, s.k.got)
}

// The reading stops at the frame after which the taker is done, or at
// its failure, which Run returns; a stream cut short returns the
// reader's error; BeforeRead runs before each read.
func TestRunStops(t *testing.T) {
	k := &taker{fast: map[string]bool{"text_delta": true}, doneAt: "b"}
	require.NoError(t, pump.Run(context.Background(), pump.Source{Body: body(t, stream)}, k))
	assert.Equal(t, []string{"fast text_delta a", "aside tool_call b"}, k.got)

	k = &taker{fast: map[string]bool{"text_delta": true}, doneAt: "a"}
	require.NoError(t, pump.Run(context.Background(), pump.Source{Body: body(t, stream)}, k))
	assert.Equal(t, []string{"fast text_delta a"}, k.got, "done on the fast path")

	k = &taker{failAt: "c"}
	err := pump.Run(context.Background(), pump.Source{Body: body(t, stream)}, k)
	require.EqualError(t, err, "bad event")
	assert.Len(t, k.got, 3)

	k = &taker{}
	err = pump.Run(context.Background(), pump.Source{Body: body(t, "data: "+strings.Repeat("x", 100)+"\n\n"), MaxEventSize: 10}, k)
	var tooLarge *sse.EventTooLargeError
	require.ErrorAs(t, err, &tooLarge)
	assert.Empty(t, k.got)

	reads := 0
	k = &taker{}
	require.NoError(t, pump.Run(context.Background(), pump.Source{Body: body(t, stream), BeforeRead: func() { reads++ }}, k))
	assert.Positive(t, reads)
	assert.Len(t, k.got, 4)
}

// FuzzRun checks that the pump hands a taker the frames sse.Read yields
// of any stream, in order, and the same error.
func FuzzRun(f *testing.F) {
	f.Add(stream, 0)
	f.Add("data: x\r\n\r\nevent: e\ndata: y\n", 4)
	f.Add(": comment\n\ndata:\n\n", 0)
	f.Fuzz(func(t *testing.T, text string, maxEvent int) {
		maxEvent = max(0, maxEvent%64)
		var want []string
		var wantErr error
		for ev, err := range sse.Read(strings.NewReader(text), sse.ReadOptions{MaxEventSize: maxEvent}) {
			if err != nil {
				wantErr = err
				break
			}
			want = append(want, "aside "+ev.Name+" "+string(ev.Data))
		}
		k := &taker{}
		err := pump.Run(context.Background(), pump.Source{Body: body(t, text), MaxEventSize: maxEvent}, k)
		assert.Equal(t, want, k.got)
		if wantErr == nil {
			assert.NoError(t, err)
		} else {
			assert.EqualError(t, err, wantErr.Error())
		}
	})
}
