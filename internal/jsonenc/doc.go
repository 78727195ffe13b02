// Package jsonenc holds the allocation-free JSON building blocks shared by the
// project's hand-written encoders on the per-event hot path.
//
// Everything here produces exactly the bytes encoding/json produces with HTML
// escaping turned off, so a fast path and its encoding/json fallback can never
// disagree on the wire.
package jsonenc
