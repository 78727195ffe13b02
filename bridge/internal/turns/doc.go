// Package turns is the life that a turn of aap2agui and a run of agui2aap
// share, from admission to the acknowledged end. It holds:
//
//   - the options both bridges serve with (Serving, Defaults) and the base
//     their servers stand on (Base: metrics and telemetry, the keys, users
//     and per-key limits, admission, the engine with its guards, the runs
//     this process records);
//   - the turn's sequence, written once for both (Base.Run), and what each
//     bridge supplies to it (Protocol): taking the conversation and what
//     the turn continues, its plan, the upstream call, the stream, the last
//     write that frees the lock, and the acknowledgement after it;
//   - a turn's lease, context, client stream, metrics and log line (Turn,
//     LogLine, WriteLogLine), and the count of one message against its cap
//     (MessageSize);
//   - the writer that records each frame in the run log and withholds
//     the turn's final event until the turn is stored (Writer);
//   - the store writes of a long text held apart as it streams (SpillTo);
//   - rejoining a recorded run (FindRun, Base.Rejoin, LockFree) and
//     stopping one on request (Base.StopRun, Stopped);
//   - the bridges' telemetry, wired once (Telemetry: the store's observer,
//     the traced upstream client, the middleware).
package turns
