// Package aap2agui serves the AAP v3 API in front of an AG-UI agent: AAP
// applications create sessions and send turns; each turn becomes one AG-UI
// run (POST RunAgentInput, SSE events back) whose events are translated
// into the AAP stream mode the application asked for.
//
// Sessions, their history (with the AG-UI id of every message), options,
// tools, AG-UI state and open interrupts live in a store.Store, so a
// restart or a second replica continues where the last one left off.
//
//	srv, err := aap2agui.New(aap2agui.Config{Upstream: "http://localhost:8000/agent", Store: store.NewMemory()})
//	...
//	http.ListenAndServe("127.0.0.1:8080", srv)
package aap2agui
