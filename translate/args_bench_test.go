package translate_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aapagui/aapagui/translate"
)

// args2KB is about 2 KB of tool-call arguments as a model would stream them.
var args2KB = func() string {
	var b strings.Builder
	b.WriteString(`{"query":"weather in Tokyo","items":[`)
	for i := 0; b.Len() < 2000; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"item %d","tags":["a","b"],"score":%d.5}`, i, i, i)
	}
	b.WriteString(`]}`)
	return b.String()
}()

// argsSplitDeltas cuts s into n deltas of nearly equal length.
func argsSplitDeltas(s string, n int) []string {
	deltas := make([]string, n)
	for i := range deltas {
		deltas[i] = s[i*len(s)/n : (i+1)*len(s)/n]
	}
	return deltas
}

// BenchmarkArgsAccumulator2KB50Deltas measures one tool call per op: Start,
// 50 Appends making 2 KB of arguments, End, on an accumulator that is Reset
// between runs (its buffers are reused, as in a long-lived stream).
func BenchmarkArgsAccumulator2KB50Deltas(b *testing.B) {
	deltas := argsSplitDeltas(args2KB, 50)
	if len(deltas) != 50 {
		b.Fatalf("got %d deltas", len(deltas))
	}
	var acc translate.ArgsAccumulator
	b.SetBytes(int64(len(args2KB)))
	b.ReportAllocs()
	for b.Loop() {
		acc.Reset()
		if err := acc.Start("call_1", "search", "msg_1"); err != nil {
			b.Fatal(err)
		}
		for _, d := range deltas {
			if err := acc.Append("call_1", d); err != nil {
				b.Fatal(err)
			}
		}
		done, err := acc.End("call_1")
		if err != nil || len(done.Arguments) != len(args2KB) {
			b.Fatal(err, len(done.Arguments))
		}
	}
}

func BenchmarkInputFromArguments2KB(b *testing.B) {
	b.SetBytes(int64(len(args2KB)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := translate.InputFromArguments("call_1", args2KB); err != nil {
			b.Fatal(err)
		}
	}
}
