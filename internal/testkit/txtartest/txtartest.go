// Package txtartest runs test cases kept as txtar files: hand-written
// sections go in, derived sections are compared with what the code makes
// of them and rewritten only when the test is run with -update.
package txtartest

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// Run plays each file matching glob (at least one must) as a subtest named
// after it: play returns the derived sections, by name. Each file must
// open with prose saying what it shows. Under update the derived sections
// are written, after the hand-written ones and in the order derived names
// them; otherwise each must be in the file as play made it, byte for byte.
func Run(t *testing.T, glob string, derived []string, update bool, play func(t *testing.T, arc *txtar.Archive) map[string]string) {
	t.Helper()
	files, err := filepath.Glob(glob)
	if err != nil || len(files) == 0 {
		t.Fatalf("no case matches %s (%v)", glob, err)
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			arc, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if strings.TrimSpace(string(arc.Comment)) == "" {
				t.Fatalf("%s: a case opens with what it shows", path)
			}
			got := play(t, arc)
			if update {
				write(t, path, arc, derived, got)
				return
			}
			for _, name := range derived {
				want, ok := Section(arc, name)
				if !ok {
					t.Fatalf("%s: no section %s (run the test with -update)", path, name)
				}
				if string(want) != got[name] {
					t.Errorf("%s: section %s differs (run the test with -update and review the diff)\n--- want\n%s\n--- got\n%s", path, name, want, got[name])
				}
			}
		})
	}
}

func write(t *testing.T, path string, arc *txtar.Archive, derived []string, got map[string]string) {
	var files []txtar.File
	for _, f := range arc.Files {
		if _, ok := got[f.Name]; !ok {
			files = append(files, f)
		}
	}
	for _, name := range derived {
		files = append(files, txtar.File{Name: name, Data: []byte(got[name])})
	}
	arc.Files = files
	if err := os.WriteFile(path, txtar.Format(arc), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Section is the file's section name, if it has one.
func Section(arc *txtar.Archive, name string) ([]byte, bool) {
	for _, f := range arc.Files {
		if f.Name == name {
			return f.Data, true
		}
	}
	return nil, false
}

// Names gives generated values stable names, numbered by first
// appearance: 128-bit hex ids read as <id-N>, UUIDs as <uuid-N>, the
// run logs of SSE ids ("id: <log>:<n>") as <log-N>, and JSON timestamps
// as 0. The zero value is ready.
type Names struct {
	names            map[string]string
	ids, uuids, logs int
}

var (
	hexID     = regexp.MustCompile(`[0-9a-f]{32}`)
	uuidID    = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timestamp = regexp.MustCompile(`"timestamp":\d+`)
	runLog    = regexp.MustCompile(`(?m)^id: [A-Za-z0-9_-]{11}:`)
)

// Text is s with its generated values named.
func (n *Names) Text(s string) string {
	if n.names == nil {
		n.names = map[string]string{}
	}
	s = uuidID.ReplaceAllStringFunc(s, func(v string) string { return n.name(v, "uuid", &n.uuids) })
	s = hexID.ReplaceAllStringFunc(s, func(v string) string { return n.name(v, "id", &n.ids) })
	s = runLog.ReplaceAllStringFunc(s, func(v string) string { return "id: " + n.name(v, "log", &n.logs) + ":" })
	return timestamp.ReplaceAllString(s, `"timestamp":0`)
}

func (n *Names) name(v, kind string, count *int) string {
	if name, ok := n.names[v]; ok {
		return name
	}
	*count++
	name := "<" + kind + "-" + strconv.Itoa(*count) + ">"
	n.names[v] = name
	return name
}
