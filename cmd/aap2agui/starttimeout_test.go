package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/cmd/internal/cli"
)

// --start-timeout (AAP2AGUI_START_TIMEOUT) reaches Config.StartTimeout:
// 2 s by default, another bound, or none.
func TestStartTimeoutFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
		want time.Duration
	}{
		{nil, "", 2 * time.Second},
		{[]string{"--start-timeout", "500ms"}, "", 500 * time.Millisecond},
		{[]string{"--start-timeout", "-1s"}, "", -time.Second},
		{nil, "7s", 7 * time.Second},
	} {
		if tc.env != "" {
			t.Setenv("AAP2AGUI_START_TIMEOUT", tc.env)
		}
		p := cli.NewProgram("aap2agui", "AAP2AGUI")
		fl := bind(p)
		done, err := p.Parse(append([]string{"--store", "memory:"}, tc.args...))
		require.NoError(t, err)
		require.False(t, done)
		cfg, err := fl.config(p)
		require.NoError(t, err, "%v", tc.args)
		assert.Equal(t, tc.want, cfg.StartTimeout, "%v %s", tc.args, tc.env)
	}
}
