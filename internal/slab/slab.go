package slab

const (
	// Size is how many elements a slab holds.
	Size = 32
	// FirstSize is the size of a stream's first slab of each kind: a
	// stream that stays idle after its first few events (most open
	// streams) then holds a few small events, not Size of them.
	FirstSize = 4
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
