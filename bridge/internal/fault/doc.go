// Package fault names what goes wrong in both bridges, once: the kinds of
// failure and their HTTP statuses (Kind, Failure), the causes a turn ends
// with (a client that left or stopped reading, a turn past its longest
// duration, a stop on request, a store too busy to start it), a call cut
// short by a cause of the bridge's own named by that cause (CauseOf) and
// answered by it before the stream (StoreCause), and the one code each
// failure of an upstream stream is told by (StreamFailure).
// Replying to a request is the edge's (package edge).
package fault
