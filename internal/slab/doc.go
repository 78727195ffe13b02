// Package slab allocates the per-token events of a stream (text and
// reasoning deltas) a slab at a time: a long stream then costs one
// allocation per slab instead of one per event. Every event is still its
// own element, never reused; a kept event keeps its slab alive (at most
// Size small events).
package slab
