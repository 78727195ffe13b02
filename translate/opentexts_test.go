package translate_test

import (
	"fmt"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/translate"
)

// TestAGUIToAAPManyOpenTexts: forty text messages open at once (past the
// few the translator walks, so found by their ids), their deltas
// interleaved: each text is its own, they end in the order their ends
// come, a draft holds those still open in the order they opened, and the
// run's end closes the rest in that order. An id taken can open again.
func TestAGUIToAAPManyOpenTexts(t *testing.T) {
	const n = 40
	tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: aap.StreamMessage})
	id := func(i int) string { return fmt.Sprintf("m%02d", i) }
	evs := []events.Event{strmRunStarted()}
	for i := range n {
		evs = append(evs, strmTextStart(id(i)))
	}
	for _, part := range []string{"a", "b"} {
		for i := range n {
			evs = append(evs, strmTextContent(id(i), id(i)+part))
		}
	}
	var want []string
	for i := n - 2; i >= 0; i -= 2 { // the even ones end, last first
		evs = append(evs, strmTextEnd(id(i)))
		want = append(want, id(i)+"a"+id(i)+"b")
	}
	evs = append(evs, strmTextStart(id(0)), strmTextContent(id(0), "again"))
	for _, ev := range evs {
		_, err := tr.Feed(ev)
		require.NoError(t, err)
	}
	draft, _, ok := tr.Draft()
	require.True(t, ok)
	blocks := draft.(*aap.AssistantMessage).Content.Blocks
	var open []string
	for i := 1; i < n; i += 2 {
		open = append(open, id(i)+"a"+id(i)+"b")
	}
	open = append(open, "again")
	assert.Equal(t, append(append([]string{}, want...), open...), texts(blocks), "the draft: the texts ended, then those open in the order they opened")

	out, err := tr.Feed(strmFinished(nil, nil))
	require.NoError(t, err)
	var closed []string
	for _, ev := range out {
		if e, ok := ev.(*aap.Text); ok {
			closed = append(closed, e.Text)
		}
	}
	assert.Equal(t, open, closed, "the run's end closes the open texts in the order they opened")
	msgs := tr.Messages()
	require.Len(t, msgs, 1)
	assert.Equal(t, append(want, open...), texts(msgs[0].(*aap.AssistantMessage).Content.Blocks))
}

// texts are the texts of the text blocks.
func texts(blocks []aap.ContentBlock) []string {
	var out []string
	for _, b := range blocks {
		if tb, ok := b.(*aap.TextBlock); ok {
			out = append(out, tb.Text)
		}
	}
	return out
}
