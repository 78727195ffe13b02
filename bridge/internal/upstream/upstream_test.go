package upstream_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/bridge/internal/upstream"
)

// A call's response headers are waited for the header bound at most:
// past it the call's context ends with ErrHeaderTimeout and Dial says
// so. A call answered in time is left alone, its context ending once its
// body is closed; one that failed in time gives its own error.
func TestDialHeaderBound(t *testing.T) {
	_, err := upstream.Dial(t.Context(), time.Millisecond, time.Hour, func(ctx context.Context) (io.ReadCloser, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	require.ErrorIs(t, err, upstream.ErrHeaderTimeout)

	var call context.Context
	b, err := upstream.Dial(t.Context(), time.Hour, time.Hour, func(ctx context.Context) (io.ReadCloser, error) {
		call = ctx
		return io.NopCloser(strings.NewReader("data: x\n\n")), nil
	})
	require.NoError(t, err)
	assert.NoError(t, call.Err(), "a call answered in time goes on")
	require.NoError(t, b.Close())
	assert.Error(t, call.Err(), "closing the body ends the call")

	refused := errors.New("refused")
	_, err = upstream.Dial(t.Context(), time.Hour, time.Hour, func(context.Context) (io.ReadCloser, error) { return nil, refused })
	assert.Equal(t, refused, err)
}

// The bound's one timer goes on as the idle bound once the headers came:
// a stream whose reader marks an event now and then goes on past it, and
// one that then sends nothing is cut, the read waiting on it failing with
// ErrUpstreamIdle. The call is cut as net/http cuts one, its body's read
// failing once the call's context ends.
func TestDialIdleBound(t *testing.T) {
	const idle = 400 * time.Millisecond
	pr, pw := io.Pipe()
	b, err := upstream.Dial(t.Context(), time.Hour, idle, func(ctx context.Context) (io.ReadCloser, error) {
		context.AfterFunc(ctx, func() { pw.CloseWithError(context.Cause(ctx)) })
		return pr, nil
	})
	require.NoError(t, err)
	defer b.Close()
	read := make(chan error, 1)
	go func() {
		buf := make([]byte, 64)
		for {
			if _, err := b.Read(buf); err != nil {
				read <- err
				return
			}
			b.Touch()
		}
	}()
	for until := time.Now().Add(2 * idle); time.Now().Before(until); {
		_, err := pw.Write([]byte("data: x\n\n"))
		require.NoError(t, err, "a stream with events is not cut")
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case err := <-read:
		t.Fatalf("a stream with events was cut: %v", err)
	default:
	}
	select {
	case err := <-read:
		assert.ErrorIs(t, err, fault.ErrUpstreamIdle)
	case <-time.After(20 * idle):
		t.Fatal("a stream without events was never cut")
	}
}
