package admit_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/bridge/internal/turns"
)

// A burst of starts that comes before the process has measured anything
// is not taken in whole: each start takes a token the ticker mints, a
// few hundred are held, and a start that finds none and may not wait (its
// bound is over) is refused with 503 overloaded and Retry-After. With the
// scheduling-delay bound off, nothing is paced.
func TestLoadPacesABurst(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel() // starts that may not wait for a token
	for _, c := range []struct {
		maxDelay time.Duration
		paced    bool
	}{{0, true}, {-1, false}} {
		s := &turns.Serving{MaxSchedulingDelay: c.maxDelay, MaxRenewalLag: -1}
		require.NoError(t, s.SetDefaults("test"))
		b, err := s.NewBase(turns.BaseOptions{Name: "test", Unit: "turn"})
		require.NoError(t, err)
		admitted, refused := 0, error(nil)
		for range 100_000 {
			if refused = b.Load.Admit(done); refused != nil {
				break
			}
			admitted++
		}
		if !c.paced {
			assert.NoError(t, refused, "not paced")
			continue
		}
		require.Error(t, refused, "a burst taken in whole")
		assert.GreaterOrEqual(t, admitted, 256, "the tokens held go at once")
		var f *fault.Failure
		require.True(t, errors.As(refused, &f))
		assert.Equal(t, "overloaded", f.Code)
		assert.Equal(t, http.StatusServiceUnavailable, f.Kind.Status())
		assert.Positive(t, f.Retry)
	}
}
