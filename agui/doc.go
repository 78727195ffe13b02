// Package agui is the AG-UI wire, as package aap is the AAP wire: it reads
// and writes the JSON of AG-UI events and of RunAgentInput, and checks an
// event sequence against the rules an AG-UI client enforces.
//
// Event structs are those of the AG-UI Go SDK (pkg/core/events). DecodeEvent
// and AppendEvent read and write their JSON without the SDK's limits: an
// unknown event type is kept as an UnknownEvent, TOOL_CALL_CHUNK and the
// THINKING_* events of 0.0.x agents are decoded, and the shapes of
// @ag-ui/core 1.0 that the SDK lacks (SUBAGENT_* events, a tool result
// made of content parts, token usage) are types of this package. The
// events that come once per token are decoded and encoded by hand-written
// fast paths, fuzzed against encoding/json; a Decoder shares its decoded
// strings' memory between events.
//
// DecodeRunAgentInput reads a RunAgentInput; DecodeRunAgentInputLazy leaves
// each message's content as raw JSON for a caller that reads only some
// (DecodeContent reads one).
//
// Verify and Verifier check a sequence of events the way @ag-ui/client's
// verifier does: a stream that passes is one a client accepts.
//
// AgentDescription and AgentCapabilities are an entry of the agent list an
// AG-UI server gives for discovery, in AG-UI's capability shape.
//
// Package translate maps these events and messages to AAP and back.
package agui
