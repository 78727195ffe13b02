package aap2agui_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
)

// TestActivitiesKeptWithTheSession: the activity messages an agent makes
// (ACTIVITY_SNAPSHOT) and patches (ACTIVITY_DELTA) are kept with the
// session at their place and go back to the agent in its next run, as it
// last had them; a delta of an activity the session does not hold, or one
// that does not apply, changes nothing and reaches no client, not even
// one granted the AG-UI extension, which gets the others as the agent
// sent them; GET /sessions/:id gives that client the activity messages.
func TestActivitiesKeptWithTheSession(t *testing.T) {
	activity := []string{
		`{"type":"ACTIVITY_SNAPSHOT","messageId":"a1","activityType":"task","content":{"n":1,"label":"<b>"}}`,
		`{"type":"ACTIVITY_DELTA","messageId":"a1","activityType":"task","patch":[{"op":"replace","path":"/n","value":2}]}`,
		`{"type":"ACTIVITY_DELTA","messageId":"zz","activityType":"task","patch":[{"op":"add","path":"/x","value":1}]}`,
		`{"type":"ACTIVITY_DELTA","messageId":"a1","activityType":"task","patch":[{"op":"remove","path":"/missing"}]}`,
	}
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		if n == 0 {
			sseEvents(w, concat([]string{runStarted(in)}, textMessage("m0", "working"), activity, []string{runFinished(in)})...)
			return
		}
		sseEvents(w, textRun(in, "m1", "done")...)
	})
	e := newEnv(t, up.URL)
	granted := http.Header{aap.ExtensionsHeader: {aap.ExtensionAGUI}}
	cl := aap.NewClient(e.URL, aap.ClientOptions{Header: granted})
	created, err := cl.CreateSession(bridgetest.Context(t), &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: agentName}})
	require.NoError(t, err)
	id := created.SessionID

	var carried []string
	for ev, err := range cl.StreamTurn(bridgetest.Context(t), id, ptr(userTurn(aap.StreamDelta, "go"))) {
		require.NoError(t, err)
		if a, ok := ev.(*aap.AGUIEvent); ok {
			carried = append(carried, string(a.Data))
		}
	}
	require.Len(t, carried, 2, "the snapshot and the delta that applies: %v", carried)
	assert.JSONEq(t, activity[0], carried[0])
	assert.JSONEq(t, activity[1], carried[1])

	_, err = e.stream(t, id, userTurn(aap.StreamDelta, "again"))
	require.NoError(t, err)
	var msgs []struct {
		ID           string          `json:"id"`
		Role         string          `json:"role"`
		ActivityType string          `json:"activityType"`
		Content      json.RawMessage `json:"content"`
	}
	require.NoError(t, json.Unmarshal(up.input(t, 1).Raw["messages"], &msgs))
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	assert.Equal(t, []string{"user", "assistant", "activity", "user"}, roles, "the activity message after the answer it came with")
	assert.Equal(t, "a1", msgs[2].ID)
	assert.Equal(t, "task", msgs[2].ActivityType)
	assert.JSONEq(t, `{"n":2,"label":"<b>"}`, string(msgs[2].Content), "as the delta that applied left it")

	info, err := cl.GetSession(bridgetest.Context(t), id)
	require.NoError(t, err)
	require.NotNil(t, info.AGUI)
	assert.JSONEq(t, `[{"at":2,"id":"a1","activityType":"task","content":{"n":2,"label":"\u003cb\u003e"}}]`, string(info.AGUI.Activities))
	plain, err := e.Client.GetSession(bridgetest.Context(t), id)
	require.NoError(t, err)
	assert.Nil(t, plain.AGUI, "a plain client is given none of it")
}

func ptr[T any](v T) *T { return &v }
