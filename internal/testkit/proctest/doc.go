// Package proctest runs a program as a real process in its own tests, so
// that they can kill it with SIGKILL mid-request or run several replicas of
// it side by side: the test binary starts itself with an environment
// variable that makes its TestMain run the program's main instead of the
// tests.
package proctest
