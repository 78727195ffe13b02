// Package refused gives tests the URL of a port where connections are
// refused, and stay refused for the whole test.
//
// Closing a listener frees its port at once, and another test running in
// parallel may listen there next: a "dead" upstream then answers. Here the
// port stays bound, with nothing listening on it, until the test ends.
package refused
