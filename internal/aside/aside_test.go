package aside_test

import (
	"errors"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/aside"
)

// f's error is Do's, and what f did is done when Do returns.
func TestDoReturnsWhatFDid(t *testing.T) {
	ran := false
	err := aside.Do(func() error { ran = true; return errors.New("refused") })
	assert.EqualError(t, err, "refused")
	assert.True(t, ran)
	assert.NoError(t, aside.Do(func() error { return nil }))
}

// A panic of f's reaches the caller, as if f had run there (a server's
// recovery then answers 500 instead of the process dying).
func TestDoRaisesFsPanicHere(t *testing.T) {
	defer func() {
		assert.Equal(t, "boom", recover())
	}()
	_ = aside.Do(func() error { panic("boom") })
	t.Fatal("Do returned after f panicked")
}

// f runs on another goroutine, whose stack goes with it: deep work done
// aside leaves the caller's stack as it was.
func TestDoRunsElsewhere(t *testing.T) {
	caller := goroutineID()
	var ran uint64
	require.NoError(t, aside.Do(func() error { ran = goroutineID(); return nil }))
	assert.NotEqual(t, caller, ran)
}

func goroutineID() uint64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	var id uint64
	for _, c := range buf[len("goroutine "):n] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}
