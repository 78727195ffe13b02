// Package ident makes the identifiers the bridges, the demo and translate give
// to the things they create: random ids for sessions, runs and messages, and
// the ids derived from a toolCallId (the AG-UI message id of a tool result,
// the id of the interrupt that asks permission for a call), which every
// replica and every replay derives alike without any stored state. It
// also checks the ids clients give (Check): text that reads as it shows.
//
// It is on the ground floor: it imports nothing from the project.
package ident
