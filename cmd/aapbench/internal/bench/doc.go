// Package bench is the benchmark harness of the bridges: a fast AG-UI
// agent and a fast AAP agent, a client for each protocol, and a driver
// that measures, in one process and interleaved, the direct reads against
// aap2agui, agui2aap, both back to back (the chain) and a relay that only
// passes the AG-UI stream on (the floor of any hop on net/http).
// cmd/aapbench runs it.
//
// Everything runs on loopback in this process, so the CPU and allocation
// figures of a bridge are what the whole process spends on a bridged run
// minus what the agent alone (its stream read raw, unparsed) and the
// client alone (parsing the same bytes from memory) spend on the same
// events.
package bench
