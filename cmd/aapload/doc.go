// Command aapload is the bridges' load test: it starts aap2agui and
// agui2aap (built binaries, each with its built-in demo agent and a fresh
// SQLite store, or the store -store names: a PostgreSQL replica), runs N
// sessions × M turns through aap2agui and N threads × M runs through
// agui2aap (HttpAgent-style bodies that resend the whole
// history) at concurrency C, and prints turns ok, errors by code, 409s,
// messages lost (stored history compared with what was sent), p50/p99
// turn time, each bridge's peak RSS and the CPU time it used (turns per
// CPU-second).
//
// Each bridge's figures come with those of a direct connection measured in
// the same run: the same workload sent straight to the demo agent the
// bridge fronts (served from this process on loopback; -direct=false skips
// it): AG-UI runs to the AG-UI demo agent for aap2agui, AAP turns to the
// AAP demo agent for agui2aap. The ratios say what the bridge adds.
//
//	go build -o /tmp/bin/ ./cmd/aap2agui ./cmd/agui2aap
//	go run ./cmd/aapload -bin /tmp/bin -n 1000 -m 10 -c 50
//
// -rolling is the operator's test of a rolling restart instead: two
// replicas of each program on the PostgreSQL -store, under load spread
// over the ready replicas, each replica in turn stopped with SIGTERM and
// started again; it fails unless no request failed and every acknowledged
// turn is in history once (.ci/rolling-restart-test.sh).
//
// -huge N measures what one message of N MiB, streamed by the upstream,
// costs each bridge's memory: aap2agui in front of an AG-UI agent that
// answers a turn with one assistant message of N MiB, agui2aap in front of
// an AAP server that answers a run with one text message of N MiB (both in
// deltas of 64 KiB), each with one client reading the whole answer. It
// prints, per bridge, what the upstream sent and the client got, how the
// turn ended (past --max-message-size, 32 MiB by default, with the cap's
// error), the bridge's RSS before, its peak growth (VmHWM less the RSS
// before) and its RSS after, in MB, whether that growth is within 64 MB,
// and the length of the assistant text the store holds (aap2agui's
// history, agui2aap's thread record).
//
//	go run ./cmd/aapload -bin /tmp/bin -huge 256
//
// -burst N measures aap2agui on a store in use (-presessions, -big,
// -big-mib) alone and while N turns start at once whose clients never
// read, and prints what became of them: running, refused with 503 and
// Retry-After before anything streamed, 5xx, the lock renewals the bridge
// logged as failed or late, leases lost, and the machine's load average.
// A busy node is reproduced by putting the bridge, its clients and its
// agent on one core: aapload's children inherit its CPU affinity.
//
//	taskset -c 0 go run ./cmd/aapload -bin /tmp/bin -burst 2000 -presessions 30000 -big 20 -big-mib 7
package main
