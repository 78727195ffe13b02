// Package demo holds the built-in demo agents: a deterministic script and
// two agents that follow it — AGUIAgent speaks AG-UI (the upstream
// aap2agui uses when none is configured) and AAPAgent speaks AAP v3 (the
// upstream of agui2aap). Both say the same things, so a conversation looks
// the same through either, or through both bridges back to back.
//
// Starter is another AG-UI agent: the AG-UI project's all-features server
// starter, feature by feature (the agent the AG-UI dojo's pages are tried
// against), which cmd/dojoagent serves.
//
// The script looks at the newest user message, case-insensitively; the
// first rule that matches wins:
//
//	fail               streams "Starting…" and fails
//	think              reasons "Thinking about: <message>", then says "Done thinking."
//	weather in <place> calls the client tool get_weather {"location": <place>} if the caller
//	                   declared it, and after its result says "The weather in <place>: <result>";
//	                   without the tool, says it cannot check the weather
//	search <query>     calls the server tool web_search {"query": <query>}: inline when trusted,
//	                   after permission when not ("Search was not allowed: <reason>" if denied),
//	                   and says so when the tool is not enabled
//	long <n>           streams n one-word deltas (n ≤ 1,000,000)
//	anything else      "You said: <message>", in at least three deltas
//
// Text and tool arguments are always streamed in several pieces so that the
// translators' accumulation is exercised.
package demo
