package turns_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/internal/turns"
)

// Defaults are what SetDefaults gives the zero fields.
func TestDefaults(t *testing.T) {
	var s turns.Serving
	require.NoError(t, s.SetDefaults("test"))
	d := turns.Defaults()
	assert.Equal(t, d.HeaderTimeout, s.HeaderTimeout)
	assert.Equal(t, d.IdleTimeout, s.IdleTimeout)
	assert.Equal(t, d.StartTimeout, s.StartTimeout)
	assert.Equal(t, d.StallTimeout, s.StallTimeout)
	assert.Equal(t, d.OnClientGone, s.OnClientGone)
	assert.Equal(t, d.KeepAlive, s.KeepAlive)
	assert.Equal(t, d.LeaseTTL, s.LeaseTTL)
	assert.Equal(t, d.MaxSchedulingDelay, s.MaxSchedulingDelay)
	assert.Equal(t, d.MaxEventSize, s.MaxEventSize)
	assert.Equal(t, d.MaxMessageSize, s.MaxMessageSize)
	assert.Equal(t, d.BodyTimeout, s.BodyTimeout)
	assert.Zero(t, s.MaxTurnDuration)
	assert.Zero(t, s.MaxRenewalLag)
}
