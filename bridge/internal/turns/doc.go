// Package turns is the life that a turn of aap2agui and a run of agui2aap
// share, from admission to the acknowledged end: the options both
// bridges serve with (Serving) and the base their servers stand on
// (Base); a turn's lease, context, client stream, metrics and log line
// (Turn); the writer that holds the turn's final event back until the
// turn is stored (Writer); rejoining a recorded run and stopping one on
// request.
package turns
