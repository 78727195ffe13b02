// Package upstream is how a bridge calls its upstream for a turn: the
// HTTP client (no redirects followed), the call bounded by a header
// timeout (Dial), the streamed body bounded by an idle timeout (IdleBody),
// and the failure a call that never streamed is answered with (Failure).
package upstream
