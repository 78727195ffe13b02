package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/testkit/proctest"
)

// TestVersionFlag: --version prints the program's name and version and
// exits without serving.
func TestVersionFlag(t *testing.T) {
	out := proctest.Stdout(t, "--version")
	assert.Regexp(t, `^aap2agui \S+.* go1\.\d+`, out)
}

// TestVersionFromBuild builds both programs from this checkout, as a user
// does, and checks that --version names the commit they were built from.
func TestVersionFromBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the programs")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skip("not a git checkout:", err)
	}
	dir := t.TempDir()
	// -buildvcs=true: stamp the revision even where GOFLAGS turns it off.
	build := exec.Command("go", "build", "-buildvcs=true", "-o", dir, "./cmd/aap2agui", "./cmd/agui2aap")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, prog := range []string{"aap2agui", "agui2aap"} {
		out, err := exec.Command(filepath.Join(dir, prog), "--version").Output()
		require.NoError(t, err, prog)
		line := strings.TrimSpace(string(out))
		if !strings.Contains(line, "revision") {
			// git worktrees (a .git file, not a directory) are not stamped.
			t.Skipf("the go command stamped no VCS revision into the build: %q", line)
		}
		assert.Contains(t, line, "(revision "+strings.TrimSpace(string(head)), prog)
		assert.Regexp(t, `^`+prog+` v\d+\.\d+\.\d+\S* \(revision [0-9a-f]{40}, \d{4}-\d\d-\d\dT[^)]*\) go1\.\d+`, line, prog)
	}
}
