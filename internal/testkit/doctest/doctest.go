package doctest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Blocks returns the fenced blocks of lang ("sh", "ts") in the Markdown
// file at path that contain marker.
func Blocks(t testing.TB, path, lang, marker string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range strings.Split(string(data), "```"+lang+"\n")[1:] {
		code, _, _ := strings.Cut(b, "```")
		if strings.Contains(code, marker) {
			out = append(out, code)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no %s block with %q in %s", lang, marker, path)
	}
	return out
}

// Shell runs script with bash, stopping at the first failing command, and
// returns what it printed on both outputs. The examples need curl: without
// it the test is skipped, or fails in CI (CI set).
func Shell(t testing.TB, script string) string {
	t.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("curl is not installed")
		}
		t.Skip("curl is not installed")
	}
	out, err := exec.Command("bash", "-e", "-o", "pipefail", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s\n---\n%s", err, script, out)
	}
	return string(out)
}
