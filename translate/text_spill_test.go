package translate_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/internal/textparts"
	"github.com/aapagui/aapagui/translate"
)

// spillSink is a TextSpill that keeps what it is given, and fails from
// part failAt on (never when 0).
type spillSink struct {
	ref    string
	parts  [][]byte
	failAt int
}

func (s *spillSink) spill(ref string, i int, part []byte) error {
	if s.failAt > 0 && i >= s.failAt {
		return errors.New("store down")
	}
	if s.ref == "" {
		s.ref = ref
	}
	if ref != s.ref || i != len(s.parts) {
		return errors.New("parts out of order")
	}
	s.parts = append(s.parts, append([]byte(nil), part...))
	return nil
}

// whole is text (a marker of s's parts and the rest, or a text held
// whole) with its parts put back.
func (s *spillSink) whole(t *testing.T, text string) string {
	t.Helper()
	if len(s.parts) == 0 {
		return text
	}
	rest, ok := strings.CutPrefix(text, textparts.Marker(s.ref, len(s.parts)))
	require.True(t, ok, "the text starts with its parts' marker")
	var b strings.Builder
	for _, p := range s.parts {
		assert.LessOrEqual(t, len(p), textparts.PartSize+4)
		b.Write(p)
	}
	return b.String() + rest
}

// longText is about mib MiB of text in deltas of 60,000 bytes and of a
// few bytes, with runes of every length across them.
func longText(mib float64) []string {
	var deltas []string
	unit := strings.Repeat("wörd 🎉 ", 60000/12)
	for n := 0; n < int(mib*(1<<20)); {
		deltas = append(deltas, unit, "é", "ab")
		n += len(unit) + 3
	}
	return deltas
}

func TestAGUIToAAPHoldsLongTextsApart(t *testing.T) {
	for _, failAt := range []int{0, 2} {
		sink := &spillSink{failAt: failAt}
		tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Spill: sink.spill})
		deltas := longText(3.5)
		feed(t, tr, strmRunStarted(), strmTextStart("m1"))
		for i, d := range deltas {
			if i%2 == 0 || !tr.AddTextDelta("m1", []byte(d)) {
				feed(t, tr, strmTextContent("m1", d))
			}
		}
		draft, _, ok := tr.Draft()
		require.True(t, ok)
		want := strings.Join(deltas, "")
		got := sink.whole(t, draft.(*aap.AssistantMessage).Content.Text)
		assert.True(t, got == want, "the draft's text with its parts is the text (failAt %d)", failAt)
		feed(t, tr, strmTextEnd("m1"))
		msgs := tr.Messages()
		require.Len(t, msgs, 1)
		held := msgs[0].(*aap.AssistantMessage).Content.Text
		assert.True(t, sink.whole(t, held) == want, "the message's text with its parts is the text")
		if failAt == 0 {
			assert.Len(t, sink.parts, 3, "3.5 MiB: three parts and the rest held")
			assert.Less(t, len(held), textparts.PartSize, "what the message holds")
		} else {
			assert.Len(t, sink.parts, 2, "the parts written before the store failed")
			assert.Greater(t, len(held), textparts.PartSize, "the rest held once the store failed")
		}
	}
}

func TestAGUIToAAPHoldsTextsWholeOutsideDeltaMode(t *testing.T) {
	sink := &spillSink{}
	tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: aap.StreamMessage, Spill: sink.spill})
	feed(t, tr, strmRunStarted(), strmTextStart("m1"))
	deltas := longText(1.5)
	for _, d := range deltas {
		feed(t, tr, strmTextContent("m1", d))
	}
	out := feed(t, tr, strmTextEnd("m1"))
	assert.Empty(t, sink.parts)
	require.NotEmpty(t, out)
	text, ok := out[0].(*aap.Text)
	require.True(t, ok, "message mode sends the text whole")
	assert.True(t, text.Text == strings.Join(deltas, ""))
}

func TestAAPToAGUIHoldsLongTextsApart(t *testing.T) {
	sink := &spillSink{}
	tr := translate.NewAAPToAGUI(translate.AAPToAGUIOptions{NewID: translate.SequentialIDs("m"), Spill: sink.spill})
	deltas := longText(2.2)
	for i, d := range deltas {
		if i%2 == 0 {
			_, err := tr.Feed(&aap.TextDelta{Delta: d})
			require.NoError(t, err)
		} else {
			_, ok := tr.AddTextDelta(d)
			require.True(t, ok)
		}
	}
	msgs := tr.Messages()
	require.Len(t, msgs, 1)
	assert.Len(t, sink.parts, 2)
	assert.True(t, sink.whole(t, msgs[0].Content.(string)) == strings.Join(deltas, ""))
}

// feed feeds evs to tr and returns the events of the last.
func feed(t *testing.T, tr *translate.AGUIToAAP, evs ...events.Event) []aap.Event {
	t.Helper()
	var out []aap.Event
	for _, ev := range evs {
		got, err := tr.Feed(ev)
		require.NoError(t, err)
		out = got
	}
	return out
}
