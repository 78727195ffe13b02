package translate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/internal/jsonpatch"
)

// An AG-UI conversation's activity messages (A2UI surfaces, MCP apps,
// background tasks): AAP's history has no message for them, so a bridge
// keeps them beside it, each at its place among the history's messages,
// and gives them back where the conversation is given whole: the agent's
// next RunAgentInput, and a page's hydration under the AG-UI extension.

// Activity is one activity message and its place: At is how many of the
// AAP history's messages go before it.
type Activity struct {
	At      int             `json:"at"`
	ID      string          `json:"id"`
	Type    string          `json:"activityType"`
	Content json.RawMessage `json:"content"`
}

// Message is the activity's AG-UI message.
func (a *Activity) Message() types.Message {
	return types.Message{ID: a.ID, Role: types.RoleActivity, ActivityType: a.Type, Content: a.Content}
}

// Activities are a conversation's activity messages, in the order of
// their places.
type Activities struct {
	List  []Activity
	index map[string]int // the place in List of each id, made as it is needed (find)
}

// ErrUnknownActivity is Delta's for an ACTIVITY_DELTA of a message the
// conversation does not hold.
var ErrUnknownActivity = errors.New("no activity message has this id: an ACTIVITY_DELTA needs an ACTIVITY_SNAPSHOT of its message first")

// maxActivityCopies bounds what the "copy" operations of one delta may
// add to an activity's content, as the state's are bounded.
const maxActivityCopies = 1 << 20

// ParseActivities reads what JSON wrote; nil for nothing, an error for
// anything else.
func ParseActivities(raw json.RawMessage) (*Activities, error) {
	a := &Activities{}
	if len(raw) == 0 {
		return a, nil
	}
	if err := json.Unmarshal(raw, &a.List); err != nil {
		return nil, fmt.Errorf("activities: %w", err)
	}
	return a, nil
}

// JSON is a as stored; nil when it holds none.
func (a *Activities) JSON() json.RawMessage {
	if a == nil || len(a.List) == 0 {
		return nil
	}
	b, err := json.Marshal(a.List)
	if err != nil {
		return nil
	}
	return b
}

// find is the index in List of the activity id, -1 for none: an index
// made once (and again if List was changed from outside), so that a run
// of many activities and deltas costs each what it touches.
func (a *Activities) find(id string) int {
	if len(a.index) != len(a.List) {
		a.index = make(map[string]int, len(a.List))
		for i := range a.List {
			a.index[a.List[i].ID] = i
		}
	}
	if i, ok := a.index[id]; ok {
		return i
	}
	return -1
}

// Snapshot is an ACTIVITY_SNAPSHOT: a new activity message goes at place
// at (after what the history holds then); one the conversation holds
// already keeps its place, its content replaced unless replace is false.
// content must be a JSON object.
func (a *Activities) Snapshot(id, typ string, content json.RawMessage, replace bool, at int) error {
	if id == "" {
		return errors.New("an ACTIVITY_SNAPSHOT needs a messageId")
	}
	if !isObject(content) {
		return errors.New("an ACTIVITY_SNAPSHOT's content must be a JSON object")
	}
	if i := a.find(id); i >= 0 {
		if replace {
			a.List[i].Type, a.List[i].Content = typ, content
		}
		return nil
	}
	a.List = append(a.List, Activity{At: at, ID: id, Type: typ, Content: content})
	if a.index != nil {
		a.index[id] = len(a.List) - 1
	}
	return nil
}

// Delta is an ACTIVITY_DELTA: its JSON Patch applied to the content of
// the activity message id. A patch that does not apply, or one of an
// activity the conversation does not hold (ErrUnknownActivity), changes
// nothing.
func (a *Activities) Delta(id string, patch json.RawMessage) error {
	i := a.find(id)
	if i < 0 {
		return ErrUnknownActivity
	}
	doc, err := jsonpatch.Parse(a.List[i].Content, maxActivityCopies)
	if err != nil {
		return err
	}
	if err := doc.Apply(patch); err != nil {
		return err
	}
	a.List[i].Content = doc.AppendJSON(nil)
	return nil
}

// OfSnapshot makes the activities those of a MESSAGES_SNAPSHOT's
// messages, each placed after the history messages made of the messages
// before it: sources are, in history order, the ids of the snapshot's
// messages each history message was made of (MessagesToAAPWithIDs).
func OfSnapshot(msgs []types.Message, sources []string) *Activities {
	index := make(map[string]int, len(msgs))
	for i := range msgs {
		index[msgs[i].ID] = i
	}
	a := &Activities{}
	at := 0
	for i := range msgs {
		m := &msgs[i]
		if m.Role != types.RoleActivity {
			continue
		}
		for at < len(sources) {
			if j, ok := index[sources[at]]; !ok || j > i {
				break
			}
			at++
		}
		content, err := json.Marshal(m.Content)
		if err != nil || !isObject(content) {
			content = json.RawMessage(`{}`)
		}
		a.List = append(a.List, Activity{At: at, ID: m.ID, Type: m.ActivityType, Content: content})
	}
	return a
}

// Placer puts a conversation's activity messages among its history's, as
// the history is given in AG-UI form in order: Before gives the activity
// messages that go before the history's message at, Rest those after its
// last.
type Placer struct {
	list []Activity
	next int
}

// Placer returns a's placer (nil a: one that places nothing).
func (a *Activities) Placer() *Placer {
	if a == nil {
		return &Placer{}
	}
	list := slices.Clone(a.List)
	slices.SortStableFunc(list, func(x, y Activity) int { return x.At - y.At })
	return &Placer{list: list}
}

// Before appends to dst the activity messages not given yet whose place
// is at most at.
func (p *Placer) Before(dst []types.Message, at int) []types.Message {
	for p.next < len(p.list) && p.list[p.next].At <= at {
		dst = append(dst, p.list[p.next].Message())
		p.next++
	}
	return dst
}

// Rest appends to dst the activity messages not given yet.
func (p *Placer) Rest(dst []types.Message) []types.Message {
	for ; p.next < len(p.list); p.next++ {
		dst = append(dst, p.list[p.next].Message())
	}
	return dst
}

// isObject reports whether raw is one JSON object (checkObject).
func isObject(raw json.RawMessage) bool {
	b := bytes.Trim(raw, jsonSpace)
	return len(b) > 0 && checkObject(b) == ""
}

// firstNonSpace is raw's first byte past JSON whitespace; 0 for none.
func firstNonSpace(raw []byte) byte {
	if b := bytes.TrimLeft(raw, jsonSpace); len(b) > 0 {
		return b[0]
	}
	return 0
}
