// Package cli is the program skeleton both bridges' commands share: Main
// and Program (the --version flag, the flags every bridge has, bound in
// each program's order, the logger, the built-in demo agent, and Run,
// which opens the store, sets up tracing, builds the bridge, serves
// /metrics on a listener of its own when asked and serves the bridge until
// SIGINT or SIGTERM, with a graceful shutdown that first drains: not
// ready, still serving), flags that fall back to
// environment variables, and the checks of flag values (headers, keys,
// exposure, limits). A command's main only turns its flags into its
// bridge's Config.
package cli
