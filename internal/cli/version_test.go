package cli

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBuildString(t *testing.T) {
	bi := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/aapagui/aapagui", Version: "v0.0.0-20261124120000-628face12345+dirty"},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "628face1234567890abcdef1234567890abcdef12"},
			{Key: "vcs.time", Value: "2026-11-24T12:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	assert.Equal(t, "v0.0.0-20261124120000-628face12345+dirty (revision 628face1234567890abcdef1234567890abcdef12, 2026-11-24T12:00:00Z, modified) go1.26.8",
		buildOf(bi).String())

	bi = &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/aapagui/aapagui", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "false"}}}
	assert.Equal(t, "v1.2.3 (revision abc) go1.26.8", buildOf(bi).String())

	// Built outside a checkout (go install pkg@version): no VCS settings.
	bi = &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/aapagui/aapagui"}}
	assert.Equal(t, "(devel) go1.26.8", buildOf(bi).String())
}
