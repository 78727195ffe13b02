package aap2agui_test

import (
	"encoding/json"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
)

// eventLines renders events as "name data" lines, as a client sees them.
func eventLines(t *testing.T, evs []aap.Event) []string {
	t.Helper()
	out := make([]string, len(evs))
	for i, ev := range evs {
		data, err := ev.AppendData(nil)
		require.NoError(t, err)
		out[i] = string(ev.EventName()) + " " + string(data)
	}
	return out
}

// messageLines renders messages as their JSON.
func messageLines(t *testing.T, msgs []aap.Message) []string {
	t.Helper()
	out := make([]string, len(msgs))
	for i, m := range msgs {
		b, err := json.Marshal(m)
		require.NoError(t, err)
		out[i] = string(b)
	}
	return out
}

// idNormalizer replaces the random tool call ids the demo agent makes
// (call_<32 hex>) with call#1, call#2… in the order it first sees them, so
// that expectations can be written out in full.
type idNormalizer struct {
	ids []string
}

var callIDPattern = regexp.MustCompile(`call_[0-9a-f]{32}`)

func (n *idNormalizer) lines(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = callIDPattern.ReplaceAllStringFunc(s, func(id string) string {
			for j, known := range n.ids {
				if known == id {
					return "call#" + strconv.Itoa(j+1)
				}
			}
			n.ids = append(n.ids, id)
			return "call#" + strconv.Itoa(len(n.ids))
		})
	}
	return out
}
