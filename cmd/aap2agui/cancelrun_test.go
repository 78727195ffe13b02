package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/cmd/internal/cli"
)

// --cancel-run: auto by default, separate or single; --separate-cancel-run,
// the older switch, is still taken (the bridge reads it as separate). A
// value it does not know, or the two flags saying opposite things, stop
// the program at start-up.
func TestCancelRunFlag(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		mode     aap2agui.CancelRun
		separate bool
	}{
		{nil, aap2agui.CancelRunAuto, false},
		{[]string{"--cancel-run", "separate"}, aap2agui.CancelRunSeparate, false},
		{[]string{"--cancel-run", "single"}, aap2agui.CancelRunSingle, false},
		{[]string{"--separate-cancel-run"}, aap2agui.CancelRunAuto, true},
	} {
		p := cli.NewProgram("aap2agui", "AAP2AGUI")
		fl := bind(p)
		done, err := p.Parse(append([]string{"--store", "memory:"}, tc.args...))
		require.NoError(t, err)
		require.False(t, done)
		cfg, err := fl.config(p)
		require.NoError(t, err, "%v", tc.args)
		assert.Equal(t, tc.mode, cfg.CancelRun, "%v", tc.args)
		assert.Equal(t, tc.separate, cfg.SeparateCancelRun, "%v", tc.args)
	}

	require.ErrorContains(t, run([]string{"--cancel-run", "sometimes", "--store", "memory:"}), "--cancel-run")
	require.ErrorContains(t, run([]string{"--cancel-run", "single", "--separate-cancel-run", "--store", "memory:"}), "contradicts")
}
