// Package doctest runs the examples of the project's documentation in
// tests, so that what the README and docs/ show keeps working as written.
package doctest
