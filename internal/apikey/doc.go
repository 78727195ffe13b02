// Package apikey checks bearer API keys without keeping them: a key is
// known by its SHA-256 hash, compared in constant time, and a request's
// owner is named by a prefix of that hash, so that neither a store nor a
// log ever holds a key.
package apikey
