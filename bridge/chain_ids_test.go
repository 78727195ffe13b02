package bridge_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
)

// ids normalises the generated toolCallIds of one conversation: each id
// becomes "call#<n>", numbered by order of first appearance, the same way
// in events, turn responses, histories and the turns the test sends.
type ids struct {
	names map[string]string // generated id → call#n
	real  map[string]string // call#n → generated id
}

func newIDs() *ids { return &ids{names: map[string]string{}, real: map[string]string{}} }

// name returns the normalised name of a generated id, numbering it if it is
// new.
func (x *ids) name(id string) string {
	if n, ok := x.names[id]; ok {
		return n
	}
	n := "call#" + strconv.Itoa(len(x.names)+1)
	x.names[id], x.real[n] = n, id
	return n
}

// resolve turns a normalised name used in a scripted turn back into the id
// the server generated. It fails the test for a call not seen yet.
func (x *ids) resolve(t *testing.T, n string) string {
	t.Helper()
	id, ok := x.real[n]
	require.Truef(t, ok, "the turn answers %s, which the agent has not called", n)
	return id
}

// event renders an event as "<name> <data>" with its toolCallId normalised.
func (x *ids) event(ev aap.Event) (string, error) {
	switch e := ev.(type) {
	case *aap.ToolCall:
		c := *e
		c.ToolCallID = x.name(c.ToolCallID)
		ev = &c
	case *aap.ToolResult:
		c := *e
		c.ToolCallID = x.name(c.ToolCallID)
		ev = &c
	}
	data, err := ev.AppendData(nil)
	if err != nil {
		return "", err
	}
	return string(ev.EventName()) + " " + string(data), nil
}

// message renders a message as JSON with its toolCallIds normalised.
func (x *ids) message(m aap.Message) (string, error) {
	switch m := m.(type) {
	case *aap.ToolMessage:
		c := *m
		c.ToolCallID = x.name(c.ToolCallID)
		return marshal(&c)
	case *aap.ToolPermissionMessage:
		c := *m
		c.ToolCallID = x.name(c.ToolCallID)
		return marshal(&c)
	case *aap.AssistantMessage:
		c := *m
		if c.Content.IsBlocks() {
			blocks := make([]aap.ContentBlock, len(c.Content.Blocks))
			for i, b := range c.Content.Blocks {
				if tu, ok := b.(*aap.ToolUseBlock); ok {
					cp := *tu
					cp.ToolCallID = x.name(cp.ToolCallID)
					b = &cp
				}
				blocks[i] = b
			}
			c.Content = aap.BlockContent(blocks...)
		}
		return marshal(&c)
	}
	return marshal(m)
}

// messages renders a list of messages, one JSON text each.
func (x *ids) messages(msgs []aap.Message) ([]string, error) {
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		s, err := x.message(m)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// marshal encodes v without encoding/json's HTML escaping, so that the
// comparison sees tool input and text as the server sent them ("&" and
// "\u0026" stay different).
func marshal(v any) (string, error) {
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(sb.String(), "\n"), nil
}

// withoutPermissionResults drops, from the turns that answer a
// tool_permission, the results the chain sends for those calls: a demo
// agent with QuietPermissionResults does not send them, agui2aap reads
// them from its history and sends them (and aap2agui passes them on). In
// such a turn the demo agent sends no other result.
func withoutPermissionResults(tr transcript, turns []turn) transcript {
	out := tr
	out.Turns = nil
	for i, lines := range tr.Turns {
		answers := false
		for _, m := range turns[i].Messages {
			if _, ok := m.(*aap.ToolPermissionMessage); ok {
				answers = true
			}
		}
		var kept []string
		for _, l := range lines {
			if answers && (strings.HasPrefix(l, "tool_result ") || strings.HasPrefix(l, `{"role":"tool",`)) {
				continue
			}
			kept = append(kept, l)
		}
		out.Turns = append(out.Turns, kept)
	}
	return out
}

// resolveCalls copies a turn's messages with the normalised toolCallIds
// they answer replaced by the generated ones.
func resolveCalls(t *testing.T, x *ids, msgs []aap.Message) []aap.Message {
	t.Helper()
	out := make([]aap.Message, len(msgs))
	for i, m := range msgs {
		switch m := m.(type) {
		case *aap.ToolMessage:
			c := *m
			if strings.HasPrefix(c.ToolCallID, "call#") {
				c.ToolCallID = x.resolve(t, c.ToolCallID)
			}
			out[i] = &c
		case *aap.ToolPermissionMessage:
			c := *m
			if strings.HasPrefix(c.ToolCallID, "call#") {
				c.ToolCallID = x.resolve(t, c.ToolCallID)
			}
			out[i] = &c
		default:
			out[i] = m
		}
	}
	return out
}

// accepted is a difference the chain is allowed to show: the chained
// transcript's text From is read as To. Every accepted difference is listed
// in acceptedDifferences with the reason it is accepted.
type accepted struct {
	Name, Why string
	From, To  string
	used      atomic.Int64
}

// acceptedDifferences are all the differences between talking to the demo
// agent directly and through the chain that the test tolerates.
var acceptedDifferences = []*accepted{}

// acceptDifferences rewrites a chained transcript with the accepted
// differences, counting their use.
func acceptDifferences(tr transcript) transcript {
	rewrite := func(lines []string) []string { return rewriteWith(acceptedDifferences, lines) }
	out := transcript{History: rewrite(tr.History), Compacted: rewrite(tr.Compacted), Session: tr.Session, ID: tr.ID}
	for _, tu := range tr.Turns {
		out.Turns = append(out.Turns, rewrite(tu))
	}
	return out
}

// rewriteWith applies the accepted differences of list to lines, counting
// their use.
func rewriteWith(list []*accepted, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		for _, a := range list {
			if strings.Contains(l, a.From) {
				l = strings.ReplaceAll(l, a.From, a.To)
				a.used.Add(1)
			}
		}
		out[i] = l
	}
	return out
}
