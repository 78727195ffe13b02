package translate_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/translate"
)

// callsModel is the plain reading of a history's open calls that Calls
// must agree with: every tool_use joins the list in the order made, a
// result takes every open tool_use of its id out, a user message empties
// it.
type callsModel struct{ open []string }

func (m *callsModel) read(msg aap.Message) (left []string) {
	switch msg := msg.(type) {
	case *aap.UserMessage:
		left, m.open = m.open, nil
	case *aap.AssistantMessage:
		for _, b := range msg.Content.Blocks {
			m.open = append(m.open, b.(*aap.ToolUseBlock).ToolCallID)
		}
	case *aap.ToolMessage:
		m.open = slices.DeleteFunc(m.open, func(id string) bool { return id == msg.ToolCallID })
	}
	return left
}

func callIDs(tus []*aap.ToolUseBlock) []string {
	var out []string
	for _, tu := range tus {
		out = append(out, tu.ToolCallID)
	}
	return out
}

// One assistant message making hundreds of calls (some ids twice, as a
// careless agent does), answered in a random order with results for calls
// never made among them: after each message, the open calls are the
// model's, in the order they were made, however many answered calls were
// taken out before them.
func TestCallsManyInOneMessageKeepTheirOrder(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(seed, 1))
			n := 50 + rnd.IntN(400)
			var hist []aap.Message
			for range 1 + rnd.IntN(3) {
				blocks := make([]aap.ContentBlock, n)
				for i := range blocks {
					blocks[i] = &aap.ToolUseBlock{ToolCallID: fmt.Sprintf("c%d", rnd.IntN(n)), Name: "f", Input: []byte(`{}`)}
				}
				hist = append(hist, &aap.AssistantMessage{Content: aap.Content{Blocks: blocks}})
				for range rnd.IntN(2 * n) {
					hist = append(hist, &aap.ToolMessage{ToolCallID: fmt.Sprintf("c%d", rnd.IntN(n+5))})
				}
				if rnd.IntN(3) == 0 {
					hist = append(hist, &aap.UserMessage{Content: aap.TextContent("next")})
				}
			}
			var c translate.Calls
			var m callsModel
			for i, msg := range hist {
				require.Equal(t, m.read(msg), callIDs(c.Read(msg)), "calls left by message %d", i)
				require.Equal(t, m.open, callIDs(c.Open()), "open calls after message %d", i)
			}
		})
	}
}

// Hundreds of tool calls open at once, ended in a random order: the calls
// still open are listed in the order they started, and each ends with its
// own arguments.
func TestArgsAccumulatorManyOpenCalls(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(seed, 2))
			n := 40 + rnd.IntN(400)
			var acc translate.ArgsAccumulator
			var open []string
			for i := range n {
				id := fmt.Sprintf("c%d", i)
				require.NoError(t, acc.Start(id, "f", "m"))
				require.NoError(t, acc.Append(id, `{"i":`+fmt.Sprint(i)+`}`))
				open = append(open, id)
			}
			for len(open) > 0 {
				k := rnd.IntN(len(open))
				got, err := acc.End(open[k])
				require.NoError(t, err)
				require.Equal(t, `{"i":`+open[k][1:]+`}`, got.Arguments)
				open = slices.Delete(open, k, k+1)
				if len(open) == 0 {
					open = nil
				}
				require.Equal(t, open, acc.Open())
			}
		})
	}
}

// oneMessageOfCalls is a history of a user message, one assistant message
// making n calls, and their n results.
func oneMessageOfCalls(n int) []aap.Message {
	blocks := make([]aap.ContentBlock, n)
	hist := []aap.Message{&aap.UserMessage{Content: aap.TextContent("go")}, &aap.AssistantMessage{Content: aap.Content{Blocks: blocks}}}
	for i := range blocks {
		id := fmt.Sprintf("call_%d", i)
		blocks[i] = &aap.ToolUseBlock{ToolCallID: id, Name: "f", Input: []byte(`{}`)}
		hist = append(hist, &aap.ToolMessage{ToolCallID: id, Content: aap.TextContent("ok")})
	}
	return hist
}

// BenchmarkCallsOneMessage reads a history whose one assistant message
// makes n calls, answered in order; its ns/call stays flat as n grows ×10
// (it was the square of n).
func BenchmarkCallsOneMessage(b *testing.B) {
	for _, n := range []int{2000, 20000} {
		hist := oneMessageOfCalls(n)
		b.Run(fmt.Sprintf("calls=%d", n), func(b *testing.B) {
			for b.Loop() {
				translate.PriorCallsOf(hist)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/call")
		})
	}
}

// BenchmarkArgsManyOpen starts n calls before ending any, then ends them
// in the order they started; its ns/call stays flat as n grows ×10.
func BenchmarkArgsManyOpen(b *testing.B) {
	for _, n := range []int{2000, 20000} {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = fmt.Sprintf("call_%d", i)
		}
		b.Run(fmt.Sprintf("calls=%d", n), func(b *testing.B) {
			for b.Loop() {
				var acc translate.ArgsAccumulator
				for _, id := range ids {
					_ = acc.Start(id, "f", "m")
				}
				for _, id := range ids {
					_, _ = acc.End(id)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/call")
		})
	}
}
