// Package runlog records each run's stream as its client is sent it, in
// the store (store.RunLogStore), and streams a recorded run to a client
// that rejoins it: from its start or after the last event it had, live
// to the run's end, on any replica that shares the store.
//
// Every frame of a recorded stream carries an SSE id, "<log>:<n>": the
// log's id and the event's number in it (from 1). A client that lost its
// connection sends the last one it had as Last-Event-ID (ParseEventID
// reads it).
//
// It holds:
//
//   - the Recorder of one run (Hub.Start): it hands out each frame's id
//     line (AppendID), takes the frame written after it (Add, Flush) and
//     waits, a bounded time, for the last batch at the run's end (Finish);
//   - the form a batch keeps its events in (encoding.go): each frame
//     without its id line, as what it shares with the frame before it and
//     the rest, so that a delta costs the log about a tenth of its frame;
//   - Follow, which streams a run's log to a rejoining client (a Sink),
//     and Ending, with which a follower ends the log of a run whose
//     process is gone (EndsWith: whether a follower ended it so);
//   - the Hub: the recorded runs this process runs, so that their
//     followers are woken as each batch is stored (a follower of another
//     replica's run reads the store every Poll), and stopping a run on
//     request (Stoppable, Stop, and one poll per process of the runs the
//     store marks as stopping).
//
// The recorder never holds up the run for long and never for a follower:
// frames are stored in batches by a goroutine of the run's while the run
// goes on (a batch is what came while the one before it was being
// written; the goroutine ends when there is nothing to write, so that an
// idle run holds none), and followers read them back from the store.
package runlog
