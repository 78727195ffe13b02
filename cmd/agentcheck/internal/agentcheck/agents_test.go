package agentcheck_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/cmd/agentcheck/internal/agentcheck"
	"github.com/aapagui/aapagui/demo"
)

// withMetaAgents serves the AAP demo agent with /meta listing, after its
// own agent, copies of it under the names more (which the agent does not
// serve).
func withMetaAgents(more ...string) http.Handler {
	meta := func(r *http.Request, _ []byte) bool { return r.Method == http.MethodGet && r.URL.Path == "/meta" }
	return rewrite(demo.NewAAPAgent(demo.AAPAgentOptions{}), meta, func(b []byte) []byte {
		var m map[string]any
		if json.Unmarshal(b, &m) != nil {
			return b
		}
		agents, _ := m["agents"].([]any)
		for _, name := range more {
			c := map[string]any{}
			for k, v := range agents[0].(map[string]any) {
				c[k] = v
			}
			c["name"] = name
			agents = append(agents, c)
		}
		m["agents"] = agents
		out, _ := json.Marshal(m)
		return out
	})
}

// ids lists the ids of results.
func ids(r *agentcheck.Report) []string {
	var out []string
	for _, res := range r.Results {
		out = append(out, res.ID)
	}
	return out
}

// Each agent /meta lists is checked under its name, after the server's
// checks: an agent the server lists but does not serve fails its own
// checks and no other's; --agent checks one.
func TestAAPChecksEachListedAgent(t *testing.T) {
	one := runAAP(t, demo.NewAAPAgent(demo.AAPAgentOptions{}), agentcheck.AAPOptions{})
	requireClean(t, one)
	server := one.Only("")
	assert.ElementsMatch(t, []string{"meta", "errors.malformed-create", "errors.malformed-turn", "errors.unknown-session", "errors.unknown-history", "sessions.list"}, ids(server))
	require.Len(t, one.Agents, 1)
	assert.Equal(t, "demo", one.Agents[0].Name)
	assert.Equal(t, one.Passed-server.Passed, one.Agents[0].Passed)

	r := runAAP(t, withMetaAgents("ghost"), agentcheck.AAPOptions{})
	assert.False(t, r.OK())
	assert.True(t, r.Only("").OK(), "the server's checks pass: paging leaves out an agent it cannot make sessions of")
	demoPart, ghost := r.Only("demo"), r.Only("ghost")
	assert.True(t, demoPart.OK())
	assert.Equal(t, ids(demoPart), ids(ghost), "the same checks for each agent")
	assert.Contains(t, ghost.Failures(), "session.create")
	assert.Len(t, r.Failures(), ghost.Failed)
	require.Len(t, r.Agents, 2)
	assert.Equal(t, []string{"demo", "ghost"}, []string{r.Agents[0].Name, r.Agents[1].Name})
	assert.Equal(t, ghost.Failed, r.Agents[1].Failed)

	var text bytes.Buffer
	require.NoError(t, r.WriteText(&text))
	assert.Contains(t, text.String(), "\nagent ghost\nFAIL  session.create")
	assert.Contains(t, text.String(), "\nagent demo\nPASS  session.create")
	assert.Contains(t, text.String(), "agent ghost: 0 passed,")
	var js bytes.Buffer
	require.NoError(t, r.WriteJSON(&js))
	var back agentcheck.Report
	require.NoError(t, json.Unmarshal(js.Bytes(), &back))
	assert.Equal(t, r.Results, back.Results)
	assert.Equal(t, r.Agents, back.Agents)
	assert.Contains(t, js.String(), `"agent": "ghost"`)

	only := runAAP(t, withMetaAgents("ghost"), agentcheck.AAPOptions{Agent: "demo"})
	requireClean(t, only)
	assert.Empty(t, only.Only("ghost").Results)
	assert.Equal(t, ids(one), ids(only))

	dup := runAAP(t, withMetaAgents("demo"), agentcheck.AAPOptions{})
	assert.Equal(t, []string{"meta"}, dup.Failures())
	res, _ := dup.Find("meta")
	assert.Contains(t, res.Detail, "two agents named demo")
}
