package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/cmd/internal/cli"
)

// --cancel-run: auto by default, separate or single; --separate-cancel-run,
// the older switch, is still taken and read as separate. A value it does
// not know, or the two flags saying opposite things, stop the program at
// start-up.
func TestCancelRunFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		mode aap2agui.CancelRun
	}{
		{nil, aap2agui.CancelRunAuto},
		{[]string{"--cancel-run", "separate"}, aap2agui.CancelRunSeparate},
		{[]string{"--cancel-run", "single"}, aap2agui.CancelRunSingle},
		{[]string{"--separate-cancel-run"}, aap2agui.CancelRunSeparate},
		{[]string{"--cancel-run", "auto", "--separate-cancel-run"}, aap2agui.CancelRunSeparate},
		{[]string{"--cancel-run", "separate", "--separate-cancel-run"}, aap2agui.CancelRunSeparate},
	} {
		p := cli.NewProgram("aap2agui", "AAP2AGUI")
		fl := bind(p)
		done, err := p.Parse(append([]string{"--store", "memory:"}, tc.args...))
		require.NoError(t, err)
		require.False(t, done)
		cfg, err := fl.config(p)
		require.NoError(t, err, "%v", tc.args)
		assert.Equal(t, tc.mode, cfg.CancelRun, "%v", tc.args)
	}

	require.ErrorContains(t, run([]string{"--cancel-run", "sometimes", "--store", "memory:"}), "--cancel-run")
	require.ErrorContains(t, run([]string{"--cancel-run", "single", "--separate-cancel-run", "--store", "memory:"}), "contradicts")
}
