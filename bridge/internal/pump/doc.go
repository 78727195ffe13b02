// Package pump is the one loop of both bridges: it reads an upstream's
// event stream frame by frame and hands each frame to the bridge's side
// of the loop (Taker), which decodes, counts, sizes, translates and writes
// it. The pump owns what both bridges' loops share: the SSE reader and its
// bound on an event's size, the upstream's idle bound (each frame touches
// it), the client's stream flushed just before each read of the upstream
// (so that the client has everything produced when the bridge waits), the
// frames taken on the stream's goroutine when the bridge can take them
// there (FastTaker: a text delta) and every other frame taken aside
// (internal/aside: the goroutine that waits on the stream keeps a small
// stack), and the first frame's bytes sent at once. It keeps nothing
// between runs: the follow-up runs of aap2agui and the AAP turns of an
// agui2aap run are loops around it.
package pump
