// Package agui2aap serves AG-UI in front of an AAP server: one endpoint per
// AAP agent, POST /agents/:name, that takes a RunAgentInput and streams
// AG-UI events back, compatible with @ag-ui/client's HttpAgent (and so with
// CopilotKit).
//
// AG-UI clients resend the whole conversation on every run while an AAP
// server keeps it itself. The bridge keeps, per thread, the AAP session
// behind it and the ids of the messages that session has seen (in a
// store.ThreadStore, so that a restart or a second replica continues the
// same thread), and sends each run only what is new. When the client's
// history no longer extends what the session has seen (an edit, a
// regenerate), the thread moves to a new session seeded with the client's
// history.
//
// A run follows the sequence both bridges share (turns.Base.Run); this
// package supplies its protocol: the intake (intake.go: the input read,
// the thread taken and planned), the AAP session and its turns
// (session.go, upstream.go), the events translated to the client
// (run.go, withheldanswer.go) and the thread saved (save.go, record.go).
package agui2aap
