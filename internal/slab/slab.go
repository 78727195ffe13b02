package slab

const (
	// Size is how many elements a slab holds.
	Size = 32
	// FirstSize is the size of a stream's first slab of each kind: a
	// stream that stays idle after its first event of a kind (most open
	// streams: a message's first delta, then the wait for the next
	// token) then holds that one event, not Size of them.
	FirstSize = 1
)

// Next returns a pointer to a new element of *s, the zero value, taking
// it from the front of *s; an empty *s is refilled first: with FirstSize
// elements the first time (a nil *s), Size after. A used-up slab is
// empty but not nil.
func Next[T any](s *[]T) *T {
	if len(*s) == 0 {
		n := Size
		if *s == nil {
			n = FirstSize
		}
		*s = make([]T, n)
	}
	e := &(*s)[0]
	*s = (*s)[1:]
	return e
}
