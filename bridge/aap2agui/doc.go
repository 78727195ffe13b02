// Package aap2agui serves the AAP API in front of AG-UI agents: version 3,
// and versions 1 and 2 where Config.Versions mounts them. AAP applications
// create sessions and send turns; each turn becomes one AG-UI run (POST
// RunAgentInput, SSE events back) whose events are translated into the AAP
// stream mode the application asked for.
//
// A turn runs the sequence both bridges share (turns.Base.Run); this
// package supplies its protocol: the session taken and admitted
// (turn.go, admission.go), the agent's run (agents.go), its events read,
// translated and answered (stream.go, answer.go), and what the run writes
// to the session's history (history.go).
//
// Sessions, their history (with the AG-UI id of every message), options,
// tools, AG-UI state and open interrupts live in a store (store.Sessions), so a
// restart or a second replica continues where the last one left off.
//
//	srv, err := aap2agui.New(aap2agui.Config{Upstream: "http://localhost:8000/agent", Store: store.NewMemory()})
//	...
//	http.ListenAndServe("127.0.0.1:8080", srv)
package aap2agui
