package agui_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/aapagui/aapagui/internal/sse"
)

// goldenEvents returns the data of every AG-UI event of the golden files
// (their .agui.sse sections: each 1.0 shape, encrypted reasoning, the
// 0.0.x events), as fuzz seeds.
func goldenEvents(f *testing.F) [][]byte {
	files, err := filepath.Glob("../testdata/golden/*.txtar")
	if err != nil || len(files) == 0 {
		f.Fatalf("no golden files: %v", err)
	}
	var out [][]byte
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		for _, s := range txtar.Parse(data).Files {
			if !strings.HasSuffix(s.Name, ".agui.sse") {
				continue
			}
			for ev, err := range sse.Read(bytes.NewReader(s.Data), sse.ReadOptions{}) {
				if err != nil {
					f.Fatalf("%s: %s: %v", path, s.Name, err)
				}
				out = append(out, []byte(ev.Data))
			}
		}
	}
	return out
}

// goldenRunInputs returns RunAgentInput bodies from the golden files, as
// fuzz seeds: each turn's request (.agui.request.json) as it is, and each
// history and agent input (history.agui.json, .agent.input.json: message
// lists holding every role, content parts, tool calls and encrypted
// values) as the messages of a body.
func goldenRunInputs(f *testing.F) [][]byte {
	files, err := filepath.Glob("../testdata/golden/*.txtar")
	if err != nil || len(files) == 0 {
		f.Fatalf("no golden files: %v", err)
	}
	var out [][]byte
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		for _, s := range txtar.Parse(data).Files {
			switch {
			case strings.HasSuffix(s.Name, ".agui.request.json"):
				out = append(out, s.Data)
			case s.Name == "history.agui.json" || strings.HasSuffix(s.Name, ".agent.input.json"):
				out = append(out, slices.Concat([]byte(`{"threadId":"t","runId":"r","messages":`), s.Data, []byte(`}`)))
			}
		}
	}
	return out
}
