// Package cursor encodes the opaque listing positions of GET /sessions
// (its `next` value): the creation number of a page's last item.
package cursor
