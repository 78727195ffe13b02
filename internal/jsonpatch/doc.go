// Package jsonpatch applies JSON Patches (RFC 6902) to a JSON document
// that stays decoded between them: a patch costs what its operations
// touch (their paths, their values), not the size of the document, so
// that the many small STATE_DELTA events of an AG-UI run cost what they
// hold rather than the state again for each.
//
// It does what github.com/evanphx/json-patch/v5 (the library the bridge
// used before, with its default options) does with the same patch:
// objects keep their keys' order (a new key goes last), negative array
// indices count from the end, a path's text before its first "/" is
// ignored, a "test" of a missing key passes for a null value, and the
// document is written compact with HTML characters escaped as
// encoding/json does. A patch applies whole or not at all. Two things
// differ: an empty reference token is the key "" (RFC 6901), and a copy
// from "" or a move or a copy to "" is of the whole document as it is,
// where the library took an empty token for the container itself and
// copied the document as it was before the patch; and the values "copy"
// operations add to a document are bounded (Parse's copyLimit), where the
// library let each copy double a document.
package jsonpatch
