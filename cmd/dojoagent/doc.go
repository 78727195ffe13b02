// Command dojoagent serves the AG-UI project's all-features server starter
// (integrations/server-starter-all-features/python in ag-ui-protocol/ag-ui:
// the deterministic agent, with no model, that the AG-UI dojo's pages are
// tried against) as mirrored in Go by demo.Starter: every feature on its
// path, as the starter serves it.
//
//	POST /agentic_chat              a countdown; "tool": the page's change_background; "backend_tool": a snapshot
//	POST /backend_tool_rendering    a snapshot of a get_weather call and its result
//	POST /human_in_the_loop         the page's generate_task_steps, ten steps streamed
//	POST /agentic_generative_ui     ten steps as state, completed one by one
//	POST /tool_based_generative_ui  a snapshot of a generate_haiku call and its result
//	POST /shared_state              a recipe as state
//	POST /predictive_state_updates  PredictState, its own write_document_local, the page's confirm_changes
//
// Each is the file of the same name of the starter's example_server. It is
// there to try aap2agui (and the chain of both programs) with every
// feature of the dojo, and for the browser test of those features
// (.ci/dojo-test.sh).
//
//	go run ./cmd/dojoagent                      # on 127.0.0.1:8000, as the starter
//	go run ./cmd/dojoagent --pause 0            # no pauses: each answer at once
//
// --pause is how long the starter's longest pause lasts (1 s, between the
// agentic generative UI's steps); the others are scaled alike. It logs a
// line per run (the feature, the thread, the run, the messages' count),
// with the run's whole input under --log-inputs. GET /healthz answers 200.
package main
