// Package agentcheck checks an agent before it is put behind one of the
// bridges: an AG-UI agent (what aap2agui fronts) or an AAP server (what
// agui2aap fronts). It runs scripted conversations against the agent and
// checks every answer against the protocol's documents and against what the
// bridge needs, and reports one line per check.
//
// Each check names the section of the protocol's documents it rests on, so
// that a failure says whose rule was broken, and, when it fails, what was
// sent, what came back and what was expected.
package agentcheck
